//! The simulated network and the random streams.
//!
//! Every hop (client to server or back) takes `|Normal(10 ms, 2 ms)|`, as in the published
//! simulator (<https://github.com/aws-samples/aws-arch-backoff-simulator>, `Net(10, 2)` with
//! `abs(random.normalvariate(mean, sd))`). Each run draws from its own generator, derived from
//! the seed, the mode, the client count and the run index, so a run's numbers do not depend on
//! which thread runs it, nor on the other runs, modes or points being simulated.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Normal};

use crate::Mode;

/// Mean of one network hop, in milliseconds (the published simulator's `Net(10, 2)`).
pub const HOP_MEAN_MS: f64 = 10.0;

/// Standard deviation of one network hop, in milliseconds (before taking the absolute value).
pub const HOP_SD_MS: f64 = 2.0;

/// Draws network hop times.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Net {
    normal: Normal<f64>,
}

impl Net {
    /// The published model: `|Normal(10 ms, 2 ms)|`.
    pub(crate) fn new() -> Net {
        Net {
            normal: Normal::new(HOP_MEAN_MS, HOP_SD_MS).expect("constant, valid parameters"),
        }
    }

    /// One hop, in milliseconds: finite and `>= 0`.
    pub(crate) fn hop<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.normal.sample(rng).abs()
    }
}

/// The generator of run `run` of `mode` with `clients` clients, under `seed`.
pub(crate) fn run_rng(seed: u64, mode: Mode, clients: u32, run: u32) -> Xoshiro256PlusPlus {
    let mut h = mix(seed);
    h = mix(h ^ mode.stream_id());
    h = mix(h ^ u64::from(clients));
    h = mix(h ^ u64::from(run));
    Xoshiro256PlusPlus::seed_from_u64(h)
}

/// SplitMix64's step and finaliser: a bijection that spreads every input bit.
pub(crate) fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;
    use retry_tool_backoff::Jitter;

    #[test]
    fn hops_are_positive_and_centred_on_ten_ms() {
        let net = Net::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let n = 20_000;
        let hops: Vec<f64> = (0..n).map(|_| net.hop(&mut rng)).collect();
        assert!(hops.iter().all(|h| h.is_finite() && *h >= 0.0));
        let mean = hops.iter().sum::<f64>() / n as f64;
        let var = hops.iter().map(|h| (h - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 10.0).abs() < 0.1, "mean {mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.1, "sd {}", var.sqrt());
    }

    #[test]
    fn streams_differ_by_every_coordinate() {
        let first = |seed, mode, clients, run| {
            let mut rng = run_rng(seed, mode, clients, run);
            rng.random::<u64>()
        };
        let base = first(1, Mode::NoBackoff, 10, 0);
        assert_eq!(base, first(1, Mode::NoBackoff, 10, 0));
        assert_ne!(base, first(2, Mode::NoBackoff, 10, 0));
        assert_ne!(base, first(1, Mode::Backoff(Jitter::None), 10, 0));
        assert_ne!(base, first(1, Mode::NoBackoff, 20, 0));
        assert_ne!(base, first(1, Mode::NoBackoff, 10, 1));
    }
}
