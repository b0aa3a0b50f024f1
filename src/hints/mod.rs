//! Server hints: how long an HTTP server asks a client to wait, read from the header blocks of
//! responses in an attempt's output (`--http-hints`; which lines those are: [`HeaderHints`]) or
//! from a `--delay-from-output` capture.
//!
//! Forms understood (header names in any case, values trimmed):
//! - `Retry-After`: delta-seconds or an HTTP-date in any of the three formats of
//!   [RFC 9110, section 10.2.3](https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3)
//!   (IMF-fixdate, obsolete RFC 850 and ANSI C `asctime`; section 5.6.7).
//! - `RateLimit` with `r=0` and `t=SECONDS` ([draft-ietf-httpapi-ratelimit-headers](
//!   https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/)), and the older
//!   drafts' `RateLimit-Reset: SECONDS` with `RateLimit-Remaining: 0`.
//! - `X-RateLimit-Reset: EPOCH-SECONDS` with `X-RateLimit-Remaining: 0` ([GitHub's REST API](
//!   https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api)): a
//!   point in time, not a delay.
//! - `x-amz-retry-after: MILLISECONDS` (AWS SDKs).
//!
//! A hint is kept as the wall-clock time before which the server wants no new request, so a
//! delta read early in a long attempt is not counted twice. If several hints are present, the
//! latest time wins. A number too large for a float is the furthest time a hint can name
//! ([`FAR`]), never dropped.

mod blocks;
mod fields;

pub use blocks::HeaderHints;

use std::fmt;
use std::time::{Duration, SystemTime};

/// The longest header line read, in bytes (without its line end): longer lines are not headers
/// a server sends (servers commonly refuse fields past 8 KiB) and are skipped.
pub const MAX_HEADER_LINE: usize = 8 * 1024;

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
fn parse_seconds(value: &str) -> Option<f64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    // Digits and a dot never parse as NaN; too many digits parse as infinity.
    value.parse::<f64>().ok()
}

/// `base + secs`, saturating at [`FAR`] past `base` (also for an infinite `secs`).
fn add_secs(base: SystemTime, secs: f64) -> SystemTime {
    let d = Duration::try_from_secs_f64(secs).unwrap_or(FAR).min(FAR);
    base.checked_add(d).unwrap_or(base + FAR)
}

/// How far past its origin (now for a delay, 1970 for `X-RateLimit-Reset`'s epoch seconds) a
/// hint reaches at most: 100 years of 365 days. Longer ones, and numbers too large for an
/// `f64`, are cut to it: still past any `--max-hint` or deadline.
pub const FAR: Duration = Duration::from_secs(100 * 365 * 86_400);

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> SystemTime {
        // 2026-01-01T00:00:00Z
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600)
    }

    /// The hint of `text`, header lines that follow a status line unless `text` has its own.
    fn read(text: &str) -> Option<Hint> {
        let mut h = HeaderHints::new();
        if !text.starts_with("HTTP/") && !text.starts_with("< HTTP/") {
            h.feed(b"HTTP/1.1 503 Service Unavailable\r\n", now());
        }
        h.feed(text.as_bytes(), now());
        h.end(now());
        h.hint()
    }

    fn wait(text: &str) -> Option<(f64, HintSource)> {
        read(text).map(|h| (h.wait_from(now()).as_secs_f64(), h.source))
    }

    #[test]
    fn retry_after_seconds_in_any_case_with_crlf() {
        assert_eq!(
            wait("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 120\r\n\r\n"),
            Some((120.0, HintSource::RetryAfter))
        );
        assert_eq!(
            wait("HTTP/2 429\nretry-after: 7\n"),
            Some((7.0, HintSource::RetryAfter))
        );
        assert_eq!(
            wait("< HTTP/1.1 503\r\n< RETRY-AFTER:3\r"),
            Some((3.0, HintSource::RetryAfter))
        );
    }

    #[test]
    fn retry_after_all_three_date_formats() {
        for date in [
            "Thu, 01 Jan 2026 00:00:30 GMT",
            "Thursday, 01-Jan-26 00:00:30 GMT",
            "Thu Jan  1 00:00:30 2026",
        ] {
            assert_eq!(
                wait(&format!("Retry-After: {date}")),
                Some((30.0, HintSource::RetryAfter)),
                "{date}"
            );
        }
    }

    #[test]
    fn a_date_in_the_past_means_no_wait() {
        assert_eq!(
            wait("Retry-After: Wed, 21 Oct 2015 07:28:00 GMT"),
            Some((0.0, HintSource::RetryAfter))
        );
    }

    #[test]
    fn ratelimit_structured_and_older_drafts() {
        assert_eq!(
            wait("RateLimit: \"default\";r=0;t=30"),
            Some((30.0, HintSource::RateLimit))
        );
        assert_eq!(wait("RateLimit: \"default\";r=5;t=30"), None);
        assert_eq!(
            wait("ratelimit: \"a\";r=3;t=9, \"b\";r=0;t=12"),
            Some((12.0, HintSource::RateLimit))
        );
        assert_eq!(
            wait("RateLimit: limit=10, remaining=0, reset=20"),
            Some((20.0, HintSource::RateLimit))
        );
        assert_eq!(
            wait("RateLimit-Reset: 15\nRateLimit-Remaining: 0"),
            Some((15.0, HintSource::RateLimit))
        );
    }

    #[test]
    fn x_ratelimit_reset_is_an_epoch_only_when_remaining_is_zero() {
        let epoch = 1_767_225_600 + 45;
        assert_eq!(
            wait(&format!(
                "X-RateLimit-Remaining: 0\nX-RateLimit-Reset: {epoch}"
            )),
            Some((45.0, HintSource::XRateLimitReset))
        );
        assert_eq!(
            wait(&format!(
                "x-ratelimit-reset: {epoch}\nx-ratelimit-remaining: 0"
            )),
            Some((45.0, HintSource::XRateLimitReset))
        );
        assert_eq!(
            wait(&format!(
                "X-RateLimit-Remaining: 4\nX-RateLimit-Reset: {epoch}"
            )),
            None
        );
        // The pair must come from one response.
        assert_eq!(
            wait(&format!(
                "HTTP/1.1 200 OK\nX-RateLimit-Remaining: 0\nHTTP/1.1 200 OK\nX-RateLimit-Reset: {epoch}"
            )),
            None
        );
    }

    #[test]
    fn amz_retry_after_is_milliseconds() {
        assert_eq!(
            wait("x-amz-retry-after: 2500"),
            Some((2.5, HintSource::AmzRetryAfter))
        );
    }

    #[test]
    fn the_longest_hint_wins() {
        assert_eq!(
            wait("Retry-After: 5\nx-amz-retry-after: 9000\nRateLimit: \"q\";r=0;t=2"),
            Some((9.0, HintSource::AmzRetryAfter))
        );
    }

    #[test]
    fn other_lines_and_bad_values_are_not_hints() {
        assert_eq!(wait("the body says Retry-After: 5 somewhere"), None);
        assert_eq!(wait("Retry-After: soon"), None);
        assert_eq!(wait("Retry-After: -5"), None);
        assert_eq!(wait("x-amz-retry-after: 1.5"), None);
        assert_eq!(wait("Content-Length: 5"), None);
    }

    #[test]
    fn numbers_too_large_for_a_float_are_the_furthest_hint_not_none() {
        let far = now() + FAR;
        for digits in [20, 300, 309, 400, 5000] {
            let n = "9".repeat(digits);
            assert_eq!(parse_delay_value(&n, now()), Ok(far), "{digits} digits");
            assert_eq!(parse_delay_value(&format!("{n}.5"), now()), Ok(far));
            let at = |text: &str| read(text).map(|h| h.not_before);
            assert_eq!(at(&format!("HTTP/1.1 429\nRetry-After: {n}")), Some(far));
            assert_eq!(
                at(&format!("HTTP/1.1 429\nx-amz-retry-after: {n}")),
                Some(far)
            );
            assert_eq!(
                at(&format!("HTTP/1.1 429\nRateLimit: \"q\";r=0;t={n}")),
                Some(far)
            );
            let epoch = SystemTime::UNIX_EPOCH + FAR;
            assert_eq!(
                at(&format!(
                    "HTTP/1.1 429\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: {n}"
                )),
                Some(epoch)
            );
            // An enormous count of remaining requests is not 0.
            assert_eq!(
                at(&format!("HTTP/1.1 429\nRateLimit: \"q\";r={n};t=5")),
                None
            );
        }
        // Tiny, but many digits: a number like any other.
        let tiny = format!("0.{}1", "0".repeat(400));
        assert_eq!(parse_delay_value(&tiny, now()), Ok(now()));
        // Not numbers, however long.
        for bad in [".", "1.2.3", "1e400", "inf", "NaN", "-1", "+1"] {
            assert!(parse_delay_value(bad, now()).is_err(), "{bad}");
        }
    }

    #[test]
    fn delay_values_are_seconds_or_dates() {
        assert_eq!(
            parse_delay_value(" 2.5 ", now()),
            Ok(now() + Duration::from_millis(2500))
        );
        assert_eq!(
            parse_delay_value("Thu, 01 Jan 2026 00:01:00 GMT", now()),
            Ok(now() + Duration::from_secs(60))
        );
        let err = parse_delay_value("later", now()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"later\" is neither a number of seconds nor an HTTP-date"
        );
    }
}
