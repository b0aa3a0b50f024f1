//! Why a run ends, as the decision after an attempt gives it (`supervise::decide`): typed
//! reasons with the numbers they need, and no words. `report::words` says each in the closing
//! line and the JSON events, in one place per reason.

use std::path::PathBuf;
use std::time::Duration;

pub use crate::budget::Refusal;
use crate::held::Stream;
use crate::hints::HintSource;
use crate::transient::Classes;
use crate::types::Shape;
use retry_tool_backoff::GiveUp;

/// Why a run gives up (or, under `--until-fail`, ends without the failure it waited for).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The command could not be run (not found, not executable).
    CannotRun,
    /// The attempt's output matched `--stop-if-output`.
    OutputMatched,
    /// The attempt's status (0..=255) is not retried: `--stop-on`, outside `--retry-on`, or
    /// the default stop set.
    StatusNotRetried(u8),
    /// The attempt's last HTTP response has this error status, outside `--http-retry-on`.
    HttpNotRetried(u16),
    /// The reader of retry's stdout or stderr is gone (a pipe whose read end closed).
    ReaderGone(Stream),
    /// The recording of stdin (`--replay-stdin`) failed: a later attempt would see only part.
    StdinLost,
    /// The attempt's input or output could not be passed on whole (a full disk, a spill that
    /// failed): what it wrote is not all there, so its result is not trusted.
    IoLost,
    /// `--forever`: `runs` runs in a row ended within `reset_after` (`None`: `--reset-after
    /// 0`, every run counts); `runs` is `u64::MAX` when `-n` is unlimited.
    CrashLoop {
        /// The short runs in a row, `-n` + 1.
        runs: u64,
        /// `--reset-after`, as the run applies it.
        reset_after: Option<Duration>,
    },
    /// The give-up rule grants no further retry: retries used up, the deadline passed, the
    /// next delay would end past it (the backoff crate's reasons).
    Rule(GiveUp),
    /// The retry budget refuses a retry (`--budget`): spent, the breaker, or a shared
    /// cooldown too long.
    Budget(Refusal),
    /// The server's hint (`source`) asks for `asked`, more than `--max-hint` (`max_hint`).
    HintTooLong {
        /// The header or output that gave the hint.
        source: HintSource,
        /// The wait it asks for from now.
        asked: Duration,
        /// `--max-hint`.
        max_hint: Duration,
    },
    /// `--transient`: the failure is not known to be transient, or only by classes outside
    /// the ones given (`found`, what its output or status named).
    NotTransient {
        /// The classes `--transient` retries.
        wanted: Classes,
        /// The classes the failure was known by, none of them in `wanted` (empty: none).
        found: Classes,
    },
    /// The `--on-retry` hook failed (with `--on-retry-fail stop`).
    HookFailed,
    /// The deadline passed while the `--on-retry` hook ran.
    DeadlineDuringHook,
    /// The deadline passed during the wait before the next attempt.
    DeadlinePassed,
    /// `--successes`: the next wait (the first delay, as written) would end at or past the
    /// deadline.
    WaitPastDeadline(Duration),
    /// `--until-fail`: the deadline stopped this run (from 1) before it ended.
    DeadlineStoppedRun(u64),
}

/// A `--successes` streak cut short: `current` successes in a row of the `needed`, when a
/// longer streak was seen before (the closing line names both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreakCut {
    /// Successes in a row when the run ended.
    pub current: u64,
    /// `--successes`.
    pub needed: u64,
}

/// What the line said before the closing line when the recording of stdin failed: `why` (the
/// pipeline's own words for the failure), and the attempt (from 1) that will not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StdinLost {
    /// Why the recording failed.
    pub why: String,
    /// The attempt that would have seen only part of stdin.
    pub next: u64,
}

/// `--lock PATH` held by another run past `--lock-wait` (or the deadline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockBusy {
    /// The lock file.
    pub path: PathBuf,
    /// The holder's process id, if known.
    pub holder: Option<u32>,
    /// `--lock-wait` (0: the run did not wait).
    pub wait: Duration,
    /// How long the run waited.
    pub waited: Duration,
    /// The deadline, not `--lock-wait`, ended the wait.
    pub at_deadline: bool,
}

/// Why a run ended without success of its own accord, as the observers word it: it gave up
/// (for `reason`, with the streak it had), or it was refused before its first attempt (by the
/// budget, or the lock another run held).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// It gave up.
    GaveUp {
        /// Why.
        reason: Reason,
        /// A `--successes` streak cut short, if it was.
        cut: Option<StreakCut>,
        /// The run's loop shape.
        shape: Shape,
        /// The longest streak of successes seen (`--successes`).
        longest: u64,
    },
    /// The budget refused it before its first attempt.
    Refused(Refusal),
    /// The lock was held by another run.
    LockBusy(LockBusy),
}
