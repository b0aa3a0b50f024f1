//! Splay: a random wait before the first attempt, so that a fleet of jobs started at the same
//! moment (cron at minute 0, a deploy to every host) does not reach the service at once.
//!
//! The name and the idea come from configuration-management agents, which sleep a random time
//! up to a limit before each run: Puppet's `splay` and `splaylimit` settings
//! (<https://www.puppet.com/docs/puppet/8/configuration.html#splay>) and Chef Infra Client's
//! `--splay` (<https://docs.chef.io/ctl_chef_client/>).

use std::time::Duration;

use rand::{Rng, RngExt};

/// A splay drawn from `U(0, max)` (nanosecond steps, `max` included), from `rng`. A `max` of
/// zero gives zero and draws nothing.
pub fn splay<R: Rng + ?Sized>(max: Duration, rng: &mut R) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    // Nanoseconds fit in a u128; a u64 holds 584 years of them, past any sensible splay.
    let limit = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rng.random_range(0..=limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    #[test]
    fn within_the_range_and_spread_over_it() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let max = Duration::from_secs(300);
        let draws: Vec<Duration> = (0..10_000).map(|_| splay(max, &mut rng)).collect();
        assert!(draws.iter().all(|d| *d <= max));
        let mean = draws.iter().map(Duration::as_secs_f64).sum::<f64>() / draws.len() as f64;
        assert!((mean - 150.0).abs() < 5.0, "mean {mean}");
        let low = draws.iter().filter(|d| d.as_secs() < 30).count();
        assert!((800..1200).contains(&low), "{low} draws in the first tenth");
    }

    #[test]
    fn zero_is_zero_and_a_seed_repeats() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        assert_eq!(splay(Duration::ZERO, &mut rng), Duration::ZERO);
        let draw = |seed| {
            splay(
                Duration::from_secs(10),
                &mut Xoshiro256PlusPlus::seed_from_u64(seed),
            )
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
        assert!(splay(Duration::MAX, &mut rng) <= Duration::MAX);
    }
}
