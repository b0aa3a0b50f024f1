//! `--idle-timeout`: when an attempt that writes nothing must be stopped. The output pumps note
//! when output last arrived ([`AttemptIo::idle_since`]); the attempt's wake time is the earlier
//! of its limit (timeout, deadline, end of the KILL grace) and the end of its allowed silence.

use std::time::Instant;

use super::Supervisor;
use super::stop::Stopping;
use crate::pipeline::AttemptIo;
use crate::process::StopReason;

impl Supervisor<'_> {
    /// When the attempt is to be woken: the earlier of `stop`'s next step and, until TERM has
    /// been sent, the time it becomes idle.
    pub(super) fn attempt_wake(&self, stop: &Stopping, io: Option<&AttemptIo>) -> Option<Instant> {
        match (stop.wake(), self.idle_at(stop, io)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The wake time came: why the attempt is to be stopped now, `limit` when `stop`'s next
    /// step is due (its timeout or the deadline, or KILL), [`StopReason::Idle`] when it has
    /// been silent for `--idle-timeout`; `None` when output arrived meanwhile (wait again).
    pub(super) fn due(
        &self,
        stop: &Stopping,
        io: Option<&AttemptIo>,
        limit: StopReason,
    ) -> Option<StopReason> {
        let now = Instant::now();
        if stop.wake().is_some_and(|t| t <= now) {
            return Some(limit);
        }
        let idle = self.config.pipeline.idle_timeout?;
        self.idle_at(stop, io)
            .is_some_and(|t| t <= now)
            .then_some(StopReason::Idle(idle))
    }

    /// When the attempt becomes idle, as things stand; `None` without `--idle-timeout`, without
    /// piped output, or once TERM has reached it.
    fn idle_at(&self, stop: &Stopping, io: Option<&AttemptIo>) -> Option<Instant> {
        let idle = self.config.pipeline.idle_timeout?;
        if stop.term_sent {
            return None;
        }
        io?.idle_since().checked_add(idle)
    }
}
