//! retry's own errors and warnings in a run, as the supervisor meets them: typed, with what
//! they need (the system's own words for an error it passes on), and no words of retry's. The
//! reporter says each in one place (`report/problems.rs`).

use std::path::Path;

use super::reasons::StdinLost;

/// A problem of retry's own during a run. Whether it is an error or a warning is part of what
/// it is ([`Problem::is_warning`]).
#[derive(Clone, Copy, Debug)]
pub enum Problem<'e> {
    /// The signal handlers could not be installed (error; the run ends with 125).
    SignalHandlers(&'e str),
    /// The pipeline's I/O could not be set up (error; 125).
    PipelineSetup(&'e str),
    /// Attempt `attempt` could not be started for a reason of retry's own (error; 125).
    AttemptStart {
        /// The attempt.
        attempt: u64,
        /// The system's words.
        error: &'e str,
    },
    /// The I/O threads of an attempt could not be started (error; 125).
    PipelineStart(&'e str),
    /// `--delay-from-output` captured this, neither seconds nor an HTTP-date (error; the hint
    /// is ignored).
    BadHint(&'e str),
    /// The recording of stdin failed: no retry (error).
    StdinLost(&'e StdinLost),
    /// The output of hook `hook` (`on_retry`) cannot be held with `--chronic`'s (error; it
    /// goes to retry's stderr instead).
    HookCapture {
        /// The hook.
        hook: &'e str,
        /// The system's words.
        error: &'e str,
    },
    /// No process could be started to pass on what attempt `attempt` left running still
    /// writes; retry passes it on itself (warning).
    RelayStart {
        /// The attempt.
        attempt: u64,
        /// The system's words.
        error: &'e str,
    },
    /// Stop signal `signal` came while attempt `attempt`'s output was still being written:
    /// the rest is dropped (error).
    OutputCut {
        /// The signal.
        signal: i32,
        /// The attempt.
        attempt: u64,
    },
    /// The attempt's input or output could not be passed on whole, in the pipeline's words
    /// (error).
    OutputLost(&'e str),
    /// `--lock PATH` cannot be taken for a reason other than another holder (error; 125).
    LockFailed {
        /// The lock file.
        path: &'e Path,
        /// The system's words.
        why: &'e str,
    },
    /// `RETRY_ENV_FILE` cannot be offered to the attempts (said with `--verbose` alone: a run
    /// that does not use it must not change).
    EnvFileUnavailable(&'e str),
    /// `RETRY_ENV_FILE` cannot be created (warning).
    EnvFileCreate(&'e str),
    /// A line of `RETRY_ENV_FILE` that was not taken, in the reader's words (warning).
    EnvFileLine(&'e str),
    /// `more` lines of `RETRY_ENV_FILE` after `after` were not taken and are not shown one by
    /// one (warning).
    EnvFileMore {
        /// How many.
        more: usize,
        /// Who wrote them (`attempt 3`, `--on-retry`).
        after: &'e str,
    },
    /// The budget's store failed, in the store's words; the run goes on without a budget
    /// (warning).
    BudgetStore(&'e str),
}

impl Problem<'_> {
    /// Whether it is a warning (`retry: warning: ...`) rather than an error; neither for
    /// [`Problem::EnvFileUnavailable`], which is a verbose note.
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            Problem::RelayStart { .. }
                | Problem::EnvFileCreate(_)
                | Problem::EnvFileLine(_)
                | Problem::EnvFileMore { .. }
                | Problem::BudgetStore(_)
        )
    }
}
