//! The one exit-status type: every status retry can end with, as a number a shell sees.
//!
//! How the process then ends with it (a death by signal is raised again) is [`crate::finish`].

/// The command was not run, try again later: `EX_TEMPFAIL` of sysexits.h ("Temporary failure,
/// indicating something that is not really an error", and the request "should be reattempted
/// later", <https://man.freebsd.org/cgi/man.cgi?query=sysexits>). retry exits with it when a run's
/// `--budget` refuses it: the circuit breaker is open (or another run is probing it), or the
/// shared cooldown lasts past the run's `--deadline`; and when another run holds its `--lock`
/// past `--lock-wait`.
pub const TEMP_FAIL: u8 = 75;
/// Status of an attempt stopped at its timeout (or the deadline) by TERM, as coreutils `timeout`.
pub const TIMED_OUT: u8 = 124;
/// retry's own failure, not the command's: bad flags or values, a missing COMMAND, signal
/// handlers or pipeline I/O that cannot be set up, output retry cannot write or record. As
/// coreutils `timeout` exits 125 when it fails itself
/// (<https://www.gnu.org/software/coreutils/manual/html_node/timeout-invocation.html>).
pub const OWN_FAILURE: u8 = 125;
/// The command was found but could not be executed.
pub const CANNOT_EXECUTE: u8 = 126;
/// The command was not found.
pub const NOT_FOUND: u8 = 127;
/// Status of a stopped attempt that needed KILL: `128 + 9`, as coreutils `timeout`.
pub const KILLED: u8 = 137;

/// The status a shell reports for a death by signal `signal`: `128 + N`, saturating at 255
/// (a number outside `0..=127` counts as 127).
pub fn of_signal(signal: i32) -> u8 {
    128u8.saturating_add(u8::try_from(signal).unwrap_or(127))
}

/// How retry ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit with this status: 0 on success, otherwise the last attempt's status
    /// (its exit code, 124/137 after a timeout, 126/127 when it could not be launched).
    Code(u32),
    /// The last attempt died of this signal: retry dies of the same signal, or exits `128 + N`
    /// when it cannot (a signal it cannot die of).
    Signal(i32),
    /// retry failed itself (see [`OWN_FAILURE`]): status 125, the error already reported.
    OwnFailure,
    /// The run's budget refused it before its first attempt, or another run held its lock
    /// (see [`TEMP_FAIL`]): status 75, the reason already reported; the command was not run.
    TempFail,
}

impl Exit {
    /// The numeric status a shell would see (`128 + N` for a signal); an attempt's exit code
    /// with all its bits (on Windows up to 32).
    pub fn code(self) -> u32 {
        match self {
            Exit::Code(c) => c,
            other => u32::from(other.status()),
        }
    }

    /// [`Exit::code`] as a status 0..=255, as `--retry-on` lists and Unix see it (a Windows
    /// exit code above 255 counts as 255).
    pub fn status(self) -> u8 {
        match self {
            Exit::Code(c) => u8::try_from(c).unwrap_or(u8::MAX),
            Exit::Signal(n) => of_signal(n),
            Exit::OwnFailure => OWN_FAILURE,
            Exit::TempFail => TEMP_FAIL,
        }
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
        assert_eq!(Exit::Signal(64).code(), 192);
        assert_eq!(Exit::Signal(200).code(), 255);
        assert_eq!(Exit::OwnFailure.code(), 125);
        assert_eq!(Exit::TempFail.code(), 75);
    }
}
