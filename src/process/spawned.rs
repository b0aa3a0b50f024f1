//! What starting an attempt gives back, the same on every system: the [`Spawned`] attempt with
//! the pipes [`Piped`] asked for, or why it did not start ([`LaunchError`]).

use std::io;
use std::process::{ChildStderr, ChildStdin, ChildStdout};

use super::Attempt;

/// Where an attempt's processes live (decided by `GroupMode::detect`, per system: `group.rs`,
/// `windows.rs`, which never shares its group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupMode {
    /// In retry's own process group: retry is the terminal's foreground group.
    Shared,
    /// In a new process group led by the attempt: no terminal, or retry is in the background.
    Own,
}

/// Why an attempt did not start.
#[derive(Debug)]
pub enum LaunchError {
    /// The command itself cannot be run: not found (status 127) or found but not executable
    /// (126), as exec said.
    Command(io::Error),
    /// retry could not start it: too few descriptors for its pipes, a process limit (`clone`
    /// or `fork` failed), the child's set-up before exec failed. retry's own failure (125),
    /// as coreutils `timeout` exits 125 when its `fork` fails.
    Own(io::Error),
}

/// Which of an attempt's standard streams are pipes to retry (the others are inherited).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Piped {
    /// stdin is fed by retry (`--replay-stdin`).
    pub stdin: bool,
    /// stdout is read by retry (held or matched).
    pub stdout: bool,
    /// stderr is read by retry (matched).
    pub stderr: bool,
    /// stderr goes into the stdout pipe, one pipe for both (`stderr` is then not looked at):
    /// what the attempt writes to them stays in the order written (when retry reads both and
    /// its own stdout and stderr are one file).
    pub stderr_in_stdout: bool,
}

/// A started attempt and the pipes asked for with [`Piped`].
#[derive(Debug)]
pub struct Spawned {
    /// The running attempt.
    pub attempt: Attempt,
    /// Its stdin pipe, when piped.
    pub stdin: Option<ChildStdin>,
    /// Its stdout pipe, when piped.
    pub stdout: Option<ChildStdout>,
    /// Its stderr pipe, when piped.
    pub stderr: Option<ChildStderr>,
}
