//! Retry throttling: the token bucket of gRFC A6, shared by every run with one budget KEY.
//! Pure: std only, no I/O, no clock (times are passed in as epoch milliseconds).
//!
//! Source: gRFC A6 "gRPC Retry Design", section "Throttling Retry Attempts and Hedged RPCs"
//! (<https://github.com/grpc/proposal/blob/master/A6-client-retries.md>):
//! `token_count` starts at `maxTokens` and stays within `[0, maxTokens]`; every failed attempt
//! takes 1 token, every successful attempt adds `tokenRatio`; a retry is allowed only while
//! `token_count > maxTokens / 2`; first attempts are never throttled. Counts are kept in
//! thousandths of a token, as gRPC's own implementation does (`milli_tokens` in
//! <https://github.com/grpc/grpc/blob/master/src/core/client_channel/retry_throttle.cc>), so
//! ten successes of 0.1 add exactly one token and no rounding drifts.
//!
//! Tokens coming back with time is an opt-in extension ([`Throttle::with_refill`]), off by
//! default so the default is exactly A6. The idea is Finagle's `RetryBudget`, whose
//! `minRetriesPerSec` grants a reserve of retries over time whatever the success count
//! (<https://github.com/twitter/finagle/blob/develop/finagle-core/src/main/scala/com/twitter/finagle/service/RetryBudget.scala>).
//! Without it a sparse job gets its retries back only through successes. Every failed attempt
//! takes a token, so an outage that outlasts ten attempts empties the bucket (at the defaults);
//! the count must then climb above `maxTokens / 2` again, which takes more than
//! `(maxTokens / 2) / tokenRatio` successful attempts: 51 at the defaults, so an hourly cron
//! job sharing its KEY with nobody else may not retry again for about two days after an
//! outage, though every first attempt still runs. A busy KEY recovers as fast as it succeeds.

use std::time::Duration;

/// Thousandths of a token per token.
const MILLI: u64 = 1000;

/// The largest `maxTokens` accepted: keeps every count in a `u32` of thousandths.
pub const MAX_TOKENS_LIMIT: f64 = 1_000_000.0;

/// The longest refill interval accepted: 100 years (of 365.25 days), which is as good as never,
/// and short enough (under 2^42 ms) that the refill's arithmetic stays exact in a double.
pub const MAX_REFILL: Duration = Duration::from_secs(100 * 31_557_600);

/// How a budget's tokens move: gRFC A6's `maxTokens` and `tokenRatio`, and an optional refill
/// with time. The same KEY may be used with different settings by different runs: each
/// operation uses the settings of the run that performs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    /// `maxTokens` in thousandths of a token; in `1..=1_000_000_000`.
    max_milli: u32,
    /// `tokenRatio` in thousandths of a token; in `1..=max_milli`.
    ratio_milli: u32,
    /// One token back every this many milliseconds; `None`: no refill with time (A6).
    refill_every_ms: Option<u64>,
}

impl Default for Throttle {
    /// gRFC A6's example values: `maxTokens` 10, `tokenRatio` 0.1, no refill with time.
    fn default() -> Throttle {
        Throttle {
            max_milli: 10_000,
            ratio_milli: 100,
            refill_every_ms: None,
        }
    }
}

impl Throttle {
    /// Settings with `max_tokens` (A6 `maxTokens`, in `(0, 1_000_000]`) and `token_ratio`
    /// (A6 `tokenRatio`, in `(0, max_tokens]`). Both are kept to three decimal places, as A6
    /// says ("Up to 3 decimal places are supported"), rounded to the nearest thousandth.
    ///
    /// # Errors
    /// A message naming the bad value (without a flag name; the caller adds it) when a value
    /// is not finite, is out of range, or rounds to zero thousandths.
    pub fn new(max_tokens: f64, token_ratio: f64) -> Result<Throttle, String> {
        if !max_tokens.is_finite() || max_tokens <= 0.0 || max_tokens > MAX_TOKENS_LIMIT {
            return Err(format!(
                "maximum tokens {max_tokens} is out of range (more than 0, at most {MAX_TOKENS_LIMIT})"
            ));
        }
        let max_milli = (max_tokens * MILLI as f64).round() as u32;
        if !token_ratio.is_finite() || token_ratio <= 0.0 || token_ratio > max_tokens {
            return Err(format!(
                "token ratio {token_ratio} is out of range (more than 0, at most the maximum tokens {max_tokens})"
            ));
        }
        let ratio_milli = (token_ratio * MILLI as f64).round() as u32;
        if max_milli == 0 || ratio_milli == 0 {
            return Err(format!(
                "{} is below the smallest step, 0.001",
                if max_milli == 0 {
                    max_tokens
                } else {
                    token_ratio
                }
            ));
        }
        Ok(Throttle {
            max_milli,
            ratio_milli,
            refill_every_ms: None,
        })
    }

    /// These settings with one token coming back every `every` (at least 1 ms, at most
    /// [`MAX_REFILL`]), whatever the attempts do; an extension to A6 (see the module
    /// documentation for its source).
    ///
    /// # Errors
    /// A message when `every` is shorter than a millisecond or longer than [`MAX_REFILL`].
    pub fn with_refill(self, every: Duration) -> Result<Throttle, String> {
        if every > MAX_REFILL {
            return Err("a refill interval is at most 100 years".into());
        }
        let ms = u64::try_from(every.as_millis()).map_err(|_| "refill interval is too long")?;
        if ms == 0 {
            return Err("a refill interval must be at least 1ms".into());
        }
        Ok(Throttle {
            refill_every_ms: Some(ms),
            ..self
        })
    }

    /// `maxTokens` in tokens.
    pub fn max_tokens(&self) -> f64 {
        f64::from(self.max_milli) / MILLI as f64
    }

    /// `tokenRatio` in tokens.
    pub fn token_ratio(&self) -> f64 {
        f64::from(self.ratio_milli) / MILLI as f64
    }

    /// The settings in the units they are kept in: (`maxTokens` in thousandths, `tokenRatio`
    /// in thousandths, the refill interval in milliseconds), for a store that must perform the
    /// operations itself (the `retry` command's Redis script).
    pub fn parts(&self) -> (u32, u32, Option<u64>) {
        (self.max_milli, self.ratio_milli, self.refill_every_ms)
    }

    /// The refill interval, if tokens come back with time.
    pub fn refill_every(&self) -> Option<Duration> {
        self.refill_every_ms.map(Duration::from_millis)
    }

    /// The number of retries a fresh bucket grants when every attempt fails and nothing else
    /// touches it: failures whose new count stays above half of `maxTokens`
    /// (`ceil(maxTokens / 2) - 1` whole tokens at the defaults: 4). With K runs of `-n N`
    /// (N >= 1) sharing a fresh KEY that fail every attempt, there are at most
    /// `K + min(this, K * N)` attempts in all, without refill.
    pub fn retries_from_full(&self) -> u64 {
        let max = u64::from(self.max_milli);
        // Failures k >= 1 with max - 1000 k > max / 2.
        (1..)
            .take_while(|k| max.saturating_sub(k * MILLI) > max / 2)
            .count() as u64
    }
}

/// The token count of one KEY, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    /// Thousandths of a token; always within `[0, max_milli]`.
    milli: u32,
    /// The `maxTokens` (thousandths) the count was last stored with; a run with another
    /// maximum rescales the count to keep the same fraction, as gRPC does when a server's
    /// throttling settings change (`ServerRetryThrottleMap::GetDataForServer`).
    max_milli: u32,
    /// Wall-clock time (epoch ms) up to which refill with time has been credited.
    stamp_ms: u64,
}

impl TokenBucket {
    /// A full bucket (A6: the count starts at `maxTokens`).
    pub fn full(throttle: &Throttle, now_ms: u64) -> TokenBucket {
        TokenBucket {
            milli: throttle.max_milli,
            max_milli: throttle.max_milli,
            stamp_ms: now_ms,
        }
    }

    /// A bucket from stored fields; the count is clamped into `[0, max_milli]` and a zero
    /// maximum becomes 1 thousandth, so a hand-edited file cannot break the invariants.
    pub fn from_parts(milli: u32, max_milli: u32, stamp_ms: u64) -> TokenBucket {
        let max_milli = max_milli.max(1);
        TokenBucket {
            milli: milli.min(max_milli),
            max_milli,
            stamp_ms,
        }
    }

    /// The stored fields: (thousandths, maximum in thousandths, refill stamp in epoch ms).
    pub fn parts(&self) -> (u32, u32, u64) {
        (self.milli, self.max_milli, self.stamp_ms)
    }

    /// The count in tokens, under the maximum it was stored with.
    pub fn tokens(&self) -> f64 {
        f64::from(self.milli) / MILLI as f64
    }

    /// Brings the count to `throttle`'s maximum and credits refill up to `now_ms`. Called by
    /// every operation; a clock that went backwards credits nothing and restarts the stamp.
    fn align(&mut self, throttle: &Throttle, now_ms: u64) {
        if self.max_milli != throttle.max_milli {
            let scaled = u64::from(self.milli) * u64::from(throttle.max_milli)
                / u64::from(self.max_milli.max(1));
            self.milli = u32::try_from(scaled)
                .unwrap_or(u32::MAX)
                .min(throttle.max_milli);
            self.max_milli = throttle.max_milli;
        }
        let Some(every) = throttle.refill_every_ms else {
            self.stamp_ms = now_ms;
            return;
        };
        if now_ms < self.stamp_ms || self.milli >= self.max_milli {
            self.stamp_ms = now_ms;
            return;
        }
        let elapsed = now_ms - self.stamp_ms;
        let gained = elapsed.saturating_mul(MILLI) / every;
        let room = u64::from(self.max_milli - self.milli);
        if gained >= room {
            self.milli = self.max_milli;
            self.stamp_ms = now_ms;
        } else {
            // `gained < room <= u32::MAX`. Move the stamp only by the time turned into tokens,
            // so frequent updates do not lose the remainder.
            self.milli += gained as u32;
            self.stamp_ms += gained * every / MILLI;
        }
    }

    /// A6: a successful attempt adds `tokenRatio`, never above `maxTokens`.
    pub fn record_success(&mut self, throttle: &Throttle, now_ms: u64) {
        self.align(throttle, now_ms);
        self.milli = self
            .milli
            .saturating_add(throttle.ratio_milli)
            .min(self.max_milli);
    }

    /// A6: a failed attempt takes 1 token (never below 0). Returns whether a retry is allowed:
    /// whether the new count is above `maxTokens / 2`, as gRPC's `RecordFailure` returns.
    pub fn record_failure(&mut self, throttle: &Throttle, now_ms: u64) -> bool {
        self.align(throttle, now_ms);
        self.milli = self.milli.saturating_sub(MILLI as u32);
        self.retry_allowed()
    }

    /// Whether the count is above `maxTokens / 2` (compared in thousandths, as gRPC does).
    pub fn retry_allowed(&self) -> bool {
        self.milli > self.max_milli / 2
    }

    /// The count at `now_ms` under `throttle` (refill credited), without changing the bucket.
    pub fn tokens_at(&self, throttle: &Throttle, now_ms: u64) -> f64 {
        let mut copy = *self;
        copy.align(throttle, now_ms);
        copy.tokens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a6_defaults_four_retries_from_full() {
        let t = Throttle::default();
        assert_eq!(t.max_tokens(), 10.0);
        assert_eq!(t.token_ratio(), 0.1);
        let mut b = TokenBucket::full(&t, 0);
        let allowed: Vec<bool> = (0..7).map(|_| b.record_failure(&t, 0)).collect();
        // 9, 8, 7, 6 are above 5; 5 is not.
        assert_eq!(allowed, [true, true, true, true, false, false, false]);
        assert_eq!(t.retries_from_full(), 4);
        assert_eq!(b.tokens(), 3.0);
    }

    #[test]
    fn ten_successes_add_exactly_one_token() {
        let t = Throttle::default();
        let mut b = TokenBucket::full(&t, 0);
        for _ in 0..5 {
            b.record_failure(&t, 0);
        }
        assert_eq!(b.tokens(), 5.0);
        assert!(!b.retry_allowed());
        for _ in 0..10 {
            b.record_success(&t, 0);
        }
        assert_eq!(b.tokens(), 6.0);
        assert!(b.retry_allowed());
        for _ in 0..1000 {
            b.record_success(&t, 0);
        }
        assert_eq!(b.tokens(), 10.0);
    }

    #[test]
    fn an_empty_bucket_needs_51_successes_before_a_retry() {
        let t = Throttle::default();
        let mut b = TokenBucket::full(&t, 0);
        for _ in 0..10 {
            b.record_failure(&t, 0);
        }
        let mut successes = 0;
        while !b.retry_allowed() {
            b.record_success(&t, 0);
            successes += 1;
        }
        assert_eq!(successes, 51);
    }

    #[test]
    fn floors_at_zero() {
        let t = Throttle::default();
        let mut b = TokenBucket::full(&t, 0);
        for _ in 0..50 {
            assert!(!b.record_failure(&t, 0) || b.tokens() > 5.0);
        }
        assert_eq!(b.tokens(), 0.0);
    }

    #[test]
    fn settings_are_validated() {
        assert!(Throttle::new(0.0, 0.1).is_err());
        assert!(Throttle::new(-1.0, 0.1).is_err());
        assert!(Throttle::new(f64::NAN, 0.1).is_err());
        assert!(Throttle::new(2e6, 0.1).is_err());
        assert!(Throttle::new(10.0, 0.0).is_err());
        assert!(Throttle::new(10.0, 11.0).is_err());
        assert!(Throttle::new(10.0, 0.0001).is_err());
        let t = Throttle::new(4.0, 1.0).unwrap();
        assert_eq!(t.retries_from_full(), 1);
        assert_eq!(Throttle::new(3.0, 1.0).unwrap().retries_from_full(), 1);
        assert_eq!(Throttle::new(1.0, 1.0).unwrap().retries_from_full(), 0);
        assert!(Throttle::default().with_refill(Duration::ZERO).is_err());
        assert!(Throttle::default().with_refill(MAX_REFILL).is_ok());
        assert!(
            Throttle::default()
                .with_refill(MAX_REFILL + Duration::from_millis(1))
                .is_err()
        );
    }

    #[test]
    fn rescales_to_another_maximum() {
        let ten = Throttle::default();
        let twenty = Throttle::new(20.0, 0.1).unwrap();
        let mut b = TokenBucket::full(&ten, 0);
        for _ in 0..4 {
            b.record_failure(&ten, 0);
        }
        // 6 of 10 is 12 of 20; a failure makes it 11.
        assert!(b.record_failure(&twenty, 0));
        assert_eq!(b.tokens(), 11.0);
    }

    #[test]
    fn refill_with_time_keeps_the_remainder() {
        let t = Throttle::default()
            .with_refill(Duration::from_secs(60))
            .unwrap();
        let mut b = TokenBucket::full(&t, 0);
        for _ in 0..6 {
            b.record_failure(&t, 0);
        }
        assert_eq!(b.tokens(), 4.0);
        // Updates every 10 ms for a minute credit one token in all, not zero.
        let mut now = 0;
        while now < 60_000 {
            now += 10;
            b.align(&t, now);
        }
        assert_eq!(b.tokens(), 5.0);
        let mut c = TokenBucket::full(&t, 0);
        for _ in 0..6 {
            c.record_failure(&t, 0);
        }
        assert_eq!(c.tokens_at(&t, 90_000), 5.5);
        assert_eq!(c.tokens_at(&t, 10_000_000), 10.0);
        // A clock that went back credits nothing.
        assert_eq!(c.tokens_at(&t, 0), 4.0);
    }

    #[test]
    fn without_refill_time_changes_nothing() {
        let t = Throttle::default();
        let mut b = TokenBucket::full(&t, 0);
        b.record_failure(&t, 0);
        assert_eq!(b.tokens_at(&t, u64::MAX), 9.0);
    }
}
