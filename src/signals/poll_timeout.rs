//! The time limit of a `poll` (the portable event loop's wait and `wait_ready` without
//! signalfd), from the time left.

use nix::poll::PollTimeout;

/// `PollTimeout` for `left` (`None`: none), rounded up to whole milliseconds so that a wait
/// never ends before its time; at most about 24 days (then it is waited for again).
pub(super) fn poll_timeout_for(left: Option<std::time::Duration>) -> PollTimeout {
    left.map_or(PollTimeout::NONE, |l| {
        let ms = l.as_nanos().div_ceil(1_000_000);
        PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
    })
}
