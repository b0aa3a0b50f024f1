//! The one exit-status type: every status retry can end with, and how the process ends with it.

use std::process::ExitCode;

/// Status of an attempt stopped at its timeout (or the deadline) by TERM, as coreutils `timeout`.
pub const TIMED_OUT: u8 = 124;
/// retry's own failure: bad flags, bad values, missing COMMAND.
pub const USAGE: u8 = 125;
/// The command was found but could not be executed.
pub const CANNOT_EXECUTE: u8 = 126;
/// The command was not found.
pub const NOT_FOUND: u8 = 127;
/// Status of a stopped attempt that needed KILL: `128 + 9`, as coreutils `timeout`.
pub const KILLED: u8 = 137;

/// How retry ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit with this status: 0 on success, otherwise the last attempt's status
    /// (its exit code, 124/137 after a timeout, 126/127 when it could not be launched).
    Code(u8),
    /// The last attempt died of this signal: retry dies of the same signal, or exits `128 + N`
    /// when it cannot (a signal it cannot die of).
    Signal(i32),
    /// retry's own usage error: status [`USAGE`] (125).
    Usage,
}

impl Exit {
    /// The numeric status a shell would see (`128 + N` for a signal).
    pub fn code(self) -> u8 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(n) => 128u8.saturating_add(u8::try_from(n).unwrap_or(127)),
            Exit::Usage => USAGE,
        }
    }

    /// Ends the process with this status: for [`Exit::Signal`], by raising the signal (with core
    /// dumps disabled) so the parent sees a death by signal; otherwise returns the exit code.
    pub fn finish(self) -> ExitCode {
        #[cfg(unix)]
        if let Exit::Signal(n) = self {
            crate::process::die_by_signal(n);
        }
        ExitCode::from(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes() {
        assert_eq!(Exit::Code(0).code(), 0);
        assert_eq!(Exit::Code(7).code(), 7);
        assert_eq!(Exit::Signal(15).code(), 143);
        assert_eq!(Exit::Usage.code(), 125);
    }
}
