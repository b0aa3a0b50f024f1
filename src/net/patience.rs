//! How long the waits of one network step may still take, spent by each wait as it goes
//! ([`Patience`]), and the one wait everything in [`super`] makes: until a descriptor is ready,
//! the patience runs out or a stop signal is queued ([`signals::wait_ready`]).

use std::time::{Duration, Instant};

use super::failure::{Failure, Step};
use super::os::AsSocket;
use super::{Interest, os};
use crate::signals::Ready;

/// The bound on a step's waits.
#[derive(Clone, Copy, Debug)]
pub struct Patience {
    bound: Bound,
}

#[derive(Clone, Copy, Debug)]
enum Bound {
    /// Only the time spent waiting counts, not the time retry spends between waits, which on
    /// a loaded machine is mostly its wait for a CPU.
    Waiting(Duration),
    /// Every wait ends by this instant.
    Until(Instant),
}

impl Patience {
    /// Waits of `limit` in all, counting only the time spent waiting (the Redis store: a
    /// thousand runs started together on two cores wait that long for a CPU, and their
    /// server answered meanwhile).
    pub fn waiting(limit: Duration) -> Patience {
        Patience {
            bound: Bound::Waiting(limit),
        }
    }

    /// Waits that end by `until`, however the time before it is spent (the OTLP export).
    pub fn until_instant(until: Instant) -> Patience {
        Patience {
            bound: Bound::Until(until),
        }
    }

    /// The instant the patience ends if it is all spent on one wait starting now.
    pub fn until(&self) -> Instant {
        match self.bound {
            Bound::Waiting(left) => {
                let now = Instant::now();
                now.checked_add(left).unwrap_or(now)
            }
            Bound::Until(until) => until,
        }
    }

    /// Counts a wait that began at `start` and has just ended.
    pub fn spend_since(&mut self, start: Instant) {
        if let Bound::Waiting(left) = &mut self.bound {
            *left = left.saturating_sub(start.elapsed());
        }
    }

    /// Whether nothing is left.
    pub fn is_spent(&self) -> bool {
        match self.bound {
            Bound::Waiting(left) => left.is_zero(),
            Bound::Until(until) => Instant::now() >= until,
        }
    }

    /// Waits until `fd` is ready for `events`, as long as the patience lasts and within the
    /// rule of [`crate::signals`]. A descriptor already ready is ready, however little
    /// patience is left.
    ///
    /// # Errors
    /// [`Failure::Stopped`] on a stop signal, [`Failure::TimedOut`] with `step` when the
    /// patience ran out.
    pub fn wait(
        &mut self,
        socket: &impl AsSocket,
        interest: Interest,
        step: Step,
    ) -> Result<(), Failure> {
        let start = Instant::now();
        let ready = os::wait_socket(socket, interest, self.until());
        self.spend_since(start);
        match ready {
            Ready::Ready => Ok(()),
            Ready::Stop => Err(Failure::Stopped),
            Ready::TimedOut => Err(Failure::TimedOut(step)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_waiting_is_counted_or_an_instant_bounds_all() {
        let mut waiting = Patience::waiting(Duration::from_secs(60));
        assert!(!waiting.is_spent());
        waiting.spend_since(Instant::now() - Duration::from_secs(61));
        assert!(waiting.is_spent());
        let past = Patience::until_instant(Instant::now());
        assert!(past.is_spent());
        let ahead = Instant::now() + Duration::from_secs(60);
        let mut until = Patience::until_instant(ahead);
        until.spend_since(Instant::now() - Duration::from_secs(61));
        assert!(!until.is_spent());
        assert_eq!(until.until(), ahead);
    }
}
