//! A server's hint ([`Hint`]: the time before which it wants no new request, and where that
//! was read), and the values hints are read from: delta-seconds or an HTTP-date.

use std::fmt;
use std::time::{Duration, SystemTime};

/// Where a hint came from; its [`fmt::Display`] is the name shown in the progress line
/// (`retrying in 30s (Retry-After)`) and in the JSON `wait` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HintSource {
    /// `Retry-After` (delta-seconds or HTTP-date).
    RetryAfter,
    /// `RateLimit` with `r=0;t=N`, or `RateLimit-Reset` with `RateLimit-Remaining: 0`.
    RateLimit,
    /// `X-RateLimit-Reset` (epoch seconds) with `X-RateLimit-Remaining: 0`.
    XRateLimitReset,
    /// `x-amz-retry-after` (milliseconds).
    AmzRetryAfter,
    /// A `--delay-from-output` capture.
    DelayFromOutput,
}

impl fmt::Display for HintSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HintSource::RetryAfter => "Retry-After",
            HintSource::RateLimit => "RateLimit",
            HintSource::XRateLimitReset => "X-RateLimit-Reset",
            HintSource::AmzRetryAfter => "x-amz-retry-after",
            HintSource::DelayFromOutput => "--delay-from-output",
        })
    }
}

/// A server's hint: no new request before `not_before` (wall clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// The earliest time for the next attempt.
    pub not_before: SystemTime,
    /// Which header (or flag) said so.
    pub source: HintSource,
}

impl Hint {
    /// The wait still to go at `now`: zero for a hint in the past.
    pub fn wait_from(&self, now: SystemTime) -> Duration {
        self.not_before
            .duration_since(now)
            .unwrap_or(Duration::ZERO)
    }

    /// The later of two hints (the longer wait wins).
    pub fn later(a: Option<Hint>, b: Option<Hint>) -> Option<Hint> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.not_before > a.not_before { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// A value that is neither a number of seconds nor an HTTP-date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadHint(pub String);

impl fmt::Display for BadHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is neither a number of seconds nor an HTTP-date",
            self.0
        )
    }
}

/// Reads `value` as delta-seconds (a non-negative decimal number) or an HTTP-date, and returns
/// the time it names, counting a delta from `now`.
///
/// # Errors
/// [`BadHint`] when the value is neither.
pub fn parse_delay_value(value: &str, now: SystemTime) -> Result<SystemTime, BadHint> {
    let value = value.trim();
    if let Some(secs) = parse_seconds(value) {
        return Ok(add_secs(now, secs));
    }
    httpdate::parse_http_date(value).map_err(|_| BadHint(value.to_string()))
}

/// A non-negative decimal number (digits, at most one `.`): seconds, milliseconds or an epoch,
/// as the caller reads it. A number too large for an `f64` (about 309 digits and more) is
/// infinite, never dropped: it asks for more than any limit, and [`add_secs`] makes it a time
/// far in the future, as RFC 9111, section 1.2.2 has a cache take a delta-seconds "greater
/// than the greatest integer it can represent" as the greatest it can
/// (<https://www.rfc-editor.org/rfc/rfc9111#section-1.2.2>).
pub(super) fn parse_seconds(value: &str) -> Option<f64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    // Digits and a dot never parse as NaN; too many digits parse as infinity.
    value.parse::<f64>().ok()
}

/// `base + secs`, saturating at [`FAR`] past `base` (also for an infinite `secs`).
pub(super) fn add_secs(base: SystemTime, secs: f64) -> SystemTime {
    let d = Duration::try_from_secs_f64(secs).unwrap_or(FAR).min(FAR);
    base.checked_add(d).unwrap_or(base + FAR)
}

/// How far past its origin (now for a delay, 1970 for `X-RateLimit-Reset`'s epoch seconds) a
/// hint reaches at most: 100 years of 365 days. Longer ones, and numbers too large for an
/// `f64`, are cut to it: still past any `--max-hint` or deadline.
pub const FAR: Duration = Duration::from_secs(100 * 365 * 86_400);
