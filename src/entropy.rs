//! Seeds from the operating system (getrandom(2)) for the jitter seed and the run's ids,
//! without setting up rand's thread-local generator: its CPU-feature detection (`cpuid`, which
//! traps to the hypervisor in a VM) was a measurable part of `retry -- true`'s start-up.

use rand::TryRng;
use rand::rngs::SysRng;

/// A random `u64` from the operating system; if that fails (no `getrandom`, no
/// `/dev/urandom`), one mixed from the clock and the process id, which is enough for a jitter
/// seed.
pub fn seed() -> u64 {
    SysRng.try_next_u64().unwrap_or_else(|_| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        // splitmix64's finaliser over the clock and the pid.
        let mut z = nanos ^ (u64::from(std::process::id()) << 32);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_differ() {
        assert_ne!(super::seed(), super::seed());
    }
}
