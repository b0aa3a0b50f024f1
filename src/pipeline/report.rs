//! What one attempt's pipeline I/O came to ([`AttemptReport`]): the findings, the faults, and
//! the pipes its leftovers still hold. The same on every system.

use std::sync::Arc;

use super::Rest;
use super::matcher::Findings;
use crate::spool::Spool;

/// What one attempt's I/O came to.
#[derive(Debug, Default)]
pub struct AttemptReport {
    /// What the output said (all defaults without output conditions).
    pub findings: Findings,
    /// The first `--delay-from-output` capture that was neither a number of seconds nor an
    /// HTTP-date, escaped.
    pub bad_hint: Option<String>,
    /// The attempt's stdout, held (`--stdout-on-success`); `None` when the hold failed (its
    /// bytes then went to stderr, see `faults`).
    pub held: Option<Arc<Spool>>,
    /// retry's stdout refused the attempt's output: the reader is gone.
    pub stdout_closed: bool,
    /// The attempt was given a truncated stdin: every byte recorded before the recording
    /// failed, then end of file.
    pub stdin_truncated: bool,
    /// What went wrong with the attempt's I/O, one message each (empty when nothing did):
    /// the recording of stdin, a write to retry's stdout or stderr, the hold.
    pub faults: Vec<String>,
    /// retry stopped waiting for some of the I/O threads (after a stop signal, with a reader
    /// that does not read): part of the attempt's output may not have been written.
    pub abandoned: bool,
    /// The output pipes that processes the attempt left running still hold open, drained:
    /// passed on after a success ([`RunIo::release`](super::RunIo::release)), closed otherwise.
    pub rest: Rest,
}
