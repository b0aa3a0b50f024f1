//! How an attempt ended ([`Outcome`]), as the supervisor, the report and the exit status see it.

use super::Ended;
use crate::status::{self, CANNOT_EXECUTE, KILLED, NOT_FOUND, TIMED_OUT};

/// Why an attempt was stopped by retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `--timeout` passed.
    Timeout,
    /// `--deadline` passed.
    Deadline,
    /// `--idle-timeout`: the attempt wrote nothing on stdout or stderr for this long.
    Idle(std::time::Duration),
}

/// How much of an attempt's tree was still running once its own process had ended: what
/// retry then stops (a daemon a run of `--forever` left, background jobs of a failed attempt).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Left {
    /// Nothing.
    Nothing,
    /// This many processes (Linux and FreeBSD list retry's descendants; Windows counts the
    /// job's).
    Processes(u64),
    /// Its process group still has members; how many is not known (the portable supervision
    /// of macOS and other Unixes signals the group as a whole).
    Group,
}

impl Left {
    /// Whether anything was left.
    pub fn any(self) -> bool {
        self != Left::Nothing
    }
}

/// How an attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this code.
    Exited(u32),
    /// It died of this signal (not sent by a timeout).
    Signaled(i32),
    /// retry stopped it with `--signal` (TERM); `killed` when KILL was needed after
    /// `--kill-after` (or was the signal).
    Stopped {
        /// Why it was stopped.
        reason: StopReason,
        /// KILL was needed.
        killed: bool,
        /// How long the attempt had run when the stop signal was sent.
        after: std::time::Duration,
        /// How its process then ended, for `--preserve-status`.
        ended: Ended,
    },
    /// retry could not start it (not found, not executable); never retried.
    LaunchFailed {
        /// 127 (not found) or 126 (cannot execute).
        status: u8,
        /// The system's reason.
        message: String,
    },
}

impl Outcome {
    /// The status number: the exit code, `128 + N` for signal N, 124 or 137 when stopped (as
    /// coreutils `timeout`), 126 or 127 for a launch failure. A Windows exit code above 255
    /// counts as 255 here, in `--retry-on` and `--stop-on` lists (its whole value is
    /// [`Outcome::code`]).
    pub fn status(&self) -> u8 {
        match self {
            Outcome::Exited(c) => u8::try_from(*c).unwrap_or(u8::MAX),
            Outcome::Signaled(n) => status::of_signal(*n),
            Outcome::Stopped { killed: false, .. } => TIMED_OUT,
            Outcome::Stopped { killed: true, .. } => KILLED,
            Outcome::LaunchFailed { status, .. } => *status,
        }
    }

    /// The exit code to pass on: [`Outcome::status`], except that an exit code keeps all its
    /// bits (Windows: 32, e.g. 3221225477 for an access violation).
    pub fn code(&self) -> u32 {
        match self {
            Outcome::Exited(c) => *c,
            other => u32::from(other.status()),
        }
    }

    /// The outcome of a failed launch: 127 when the program does not exist, else 126.
    pub fn launch_failed(err: &std::io::Error) -> Outcome {
        let status = if err.kind() == std::io::ErrorKind::NotFound {
            NOT_FOUND
        } else {
            CANNOT_EXECUTE
        };
        Outcome::LaunchFailed {
            status,
            message: err.to_string(),
        }
    }
}
