//! Unit tests of server hints read whole: header blocks and their fields through
//! [`HeaderHints`], and the values of `--delay-from-output` through [`parse_delay_value`].

use std::time::{Duration, SystemTime};

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
