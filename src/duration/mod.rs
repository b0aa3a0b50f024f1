//! DURATION values on the command line: every form coreutils `timeout` and `sleep` take, retry's
//! own units and humantime's words, in one grammar parsed in one place ([`parse_duration`]).
//!
//! ```text
//! DURATION := [+|-] (INFINITY | NUMBER [UNIT] | (NUMBER UNIT)+)
//! INFINITY := inf | infinity (any case), then an optional UNIT
//! NUMBER   := DIGITS [. [DIGITS]] | . DIGITS, then an optional exponent e|E [+|-] DIGITS
//! UNIT     := ns | us | ms | s | m | h | d | w | M | y, or a humantime word (sec, minutes, ...)
//! ```
//!
//! Spaces may stand around the whole, between a number and its unit and between terms
//! (`2h 37min`, `5 minutes`). A bare number is seconds, as for `timeout` and `sleep`
//! (<https://www.gnu.org/software/coreutils/manual/html_node/timeout-invocation.html>: "a
//! floating point number followed by an optional unit"); so are `1e3`, `.5`, `2.34e+5d` and
//! `5.`. Units are case-sensitive (`m` is a minute, `M` a month of 30.44 days). Each term's
//! exact value is rounded up to a whole nanosecond, so a positive value never becomes 0
//! (`1e-10000` is 1 ns, as for `timeout`, which "rounds up" too). `inf`, `infinity` and any
//! value past the largest `struct timespec` (`i64::MAX` seconds) are [`UNLIMITED`]: no limit,
//! where a bounded clock would refuse or overflow. Negative values (other than `-0`), NaN,
//! hexadecimal (`0x10`), digit separators (`1_000`), digits other than ASCII and unknown
//! units are errors.

mod grammar;
#[cfg(test)]
mod reference;

use std::time::Duration;

use grammar::Value;

/// "No limit": `inf`, `infinity`, or a DURATION too large for the clock. Each flag says what
/// that means for it (no timeout, no deadline, never KILL, a delay without end, ...).
pub const UNLIMITED: Duration = Duration::MAX;

/// Parses a DURATION (see the module documentation): a number of seconds, a number with a
/// unit, terms with units (`1m30s`), or `inf`; [`UNLIMITED`] for `inf` and for values past
/// `i64::MAX` seconds.
///
/// # Errors
/// A message (without the flag's name, which the caller adds) for an empty, negative, NaN or
/// malformed value, or an unknown unit.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    let (negative, body) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let value = grammar::value(body).map_err(|e| {
        format!("{e} (expected a duration such as 250ms, 1.5s, 2m30s, 1e3, .5, inf, or a number of seconds)")
    })?;
    match value {
        Value::Nanos(0) => Ok(Duration::ZERO),
        _ if negative => Err("a duration cannot be negative".into()),
        Value::Unlimited => Ok(UNLIMITED),
        Value::Nanos(n) => {
            let nanos = 1_000_000_000u128;
            // At most grammar::LIMIT_NANOS: the seconds fit in an i64, so in a u64.
            let secs = u64::try_from(n / nanos).unwrap_or(u64::MAX);
            Ok(Duration::new(secs, (n % nanos) as u32))
        }
    }
}

/// Whether `d` means "no limit" ([`UNLIMITED`]).
pub fn is_unlimited(d: Duration) -> bool {
    d == UNLIMITED
}

/// `d`, or `None` when it is 0 or [`UNLIMITED`]: for the limits where both mean "none"
/// (`--timeout`, `--deadline`, `--idle-timeout`, `--reset-after`).
pub fn limit(d: Duration) -> Option<Duration> {
    Some(d).filter(|d| !d.is_zero() && !is_unlimited(*d))
}

/// Formats a duration as seconds with three decimals and an `s` suffix (`0.412s`), or `inf`
/// for [`UNLIMITED`] (which `sleep` and retry's DURATION both read back).
pub fn format_secs(d: Duration) -> String {
    if is_unlimited(d) {
        return "inf".into();
    }
    format!("{:.3}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(n: u64) -> Duration {
        Duration::from_nanos(n)
    }

    #[test]
    fn accepts_humantime_and_bare_seconds() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m30s"), Ok(Duration::from_secs(150)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("2h 37min"), Ok(Duration::from_secs(9420)));
        assert_eq!(parse_duration("5 minutes"), Ok(Duration::from_secs(300)));
        assert_eq!(
            parse_duration("1hour12min5s"),
            Ok(Duration::from_secs(4325))
        );
        assert_eq!(parse_duration("3µs"), Ok(ns(3000)));
        assert_eq!(parse_duration("1M"), Ok(Duration::from_secs(2_630_016)));
        assert_eq!(
            parse_duration("1y 1w"),
            Ok(Duration::from_secs(31_557_600 + 604_800))
        );
    }

    #[test]
    fn accepts_every_form_timeout_and_sleep_take() {
        let secs = Duration::from_secs;
        assert_eq!(parse_duration(".5s"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(".5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5."), Ok(secs(5)));
        assert_eq!(parse_duration("1e3"), Ok(secs(1000)));
        assert_eq!(parse_duration("1E3s"), Ok(secs(1000)));
        assert_eq!(parse_duration("2.34e+5d"), Ok(secs(234_000 * 86_400)));
        assert_eq!(parse_duration("1.5e-3"), Ok(Duration::from_micros(1500)));
        assert_eq!(parse_duration("10.34"), Ok(Duration::from_millis(10_340)));
        assert_eq!(parse_duration("9.999999999"), Ok(ns(9_999_999_999)));
        assert_eq!(parse_duration("+5"), Ok(secs(5)));
        assert_eq!(parse_duration("-0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("-0.0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1d"), Ok(secs(86_400)));
        assert_eq!(parse_duration(" 5 "), Ok(secs(5)));
        for inf in [
            "inf",
            "INF",
            "infinity",
            "Infinity",
            "+inf",
            "infs",
            "infinityd",
        ] {
            assert_eq!(parse_duration(inf), Ok(UNLIMITED), "{inf}");
        }
    }

    #[test]
    fn too_large_saturates_and_too_small_rounds_up() {
        for huge in [
            "9223372036854775808",
            "9223372036854775808d",
            "1.18973149535723176502e+4932",
            "1e400",
            "99999999999999999999h",
            "1e99999999999999999999999",
            "584942417356y",
        ] {
            assert_eq!(parse_duration(huge), Ok(UNLIMITED), "{huge}");
        }
        // The largest timespec itself is kept.
        assert_eq!(
            parse_duration("9223372036854775807.999999999"),
            Ok(Duration::new(i64::MAX as u64, 999_999_999))
        );
        for tiny in [
            "1e-10000",
            "2e-10",
            "0.0000000001",
            "1e-99999999999999999999",
            "0.1ns",
        ] {
            assert_eq!(parse_duration(tiny), Ok(ns(1)), "{tiny}");
        }
        assert_eq!(parse_duration("1.5e-9"), Ok(ns(2)));
        assert_eq!(parse_duration("1.000000001"), Ok(ns(1_000_000_001)));
        assert_eq!(parse_duration("1.0000000001"), Ok(ns(1_000_000_001)));
        assert_eq!(parse_duration("0e99999"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "",
            "-1",
            "-1s",
            "-1e-10000",
            "-inf",
            "abc",
            "1x",
            "NaN",
            "nan",
            "1..2",
            ".",
            "1e",
            "1e+",
            "0x10",
            "1_000",
            "٣",
            "５",
            "42D",
            "1m30",
            "1s2",
            "inf 5s",
            "infx",
            "- 5",
            "5 s s",
            "1.5.s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} was accepted");
        }
        assert_eq!(
            parse_duration("-5"),
            Err("a duration cannot be negative".into())
        );
        assert!(
            parse_duration("1x")
                .unwrap_err()
                .starts_with("unknown unit 'x'")
        );
        for (bad, why) in [
            ("1_000", "unexpected '_'"),
            ("1μs", "unexpected 'μ'"),
            ("1m30", "a unit is missing"),
        ] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.starts_with(why), "{bad}: {e}");
        }
    }

    #[test]
    fn formats_three_decimals_and_inf() {
        assert_eq!(format_secs(Duration::from_micros(412_400)), "0.412s");
        assert_eq!(format_secs(Duration::from_secs(64)), "64.000s");
        assert_eq!(format_secs(UNLIMITED), "inf");
        assert_eq!(parse_duration(&format_secs(UNLIMITED)), Ok(UNLIMITED));
        assert_eq!(limit(UNLIMITED), None);
        assert_eq!(limit(Duration::ZERO), None);
        assert_eq!(limit(ns(1)), Some(ns(1)));
    }
}
