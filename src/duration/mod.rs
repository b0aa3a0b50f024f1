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
//! (`1e-10000` is 1 ns, as for coreutils `timeout` from 9.7 on, which "rounds up" too; 7.0 to
//! 9.6 took it as 0, no limit: "timeout would fail to timeout commands with infinitesimal
//! timeouts", coreutils NEWS, release 9.7). `inf`, `infinity` and any
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

/// For a setting that must be finite, given `text` that parsed to [`UNLIMITED`]: `None` when
/// `text` is `inf` or `infinity` (the message says "must be finite"), or the words saying that
/// a number was too large (`1e19` is finite, yet past the largest DURATION kept, so inf).
pub fn too_large(text: &str) -> Option<&'static str> {
    let body = text.trim().trim_start_matches(['+', '-']);
    if grammar::names_infinity(body) {
        return None;
    }
    Some(
        "is too large: past 9223372036854775807.999999999s (i64::MAX seconds, about 292 billion \
         years) a DURATION means inf",
    )
}

/// `d`, or `None` when it is 0 or [`UNLIMITED`]: for the limits where both mean "none"
/// (`--timeout`, `--deadline`, `--idle-timeout`, `--reset-after`).
pub fn limit(d: Duration) -> Option<Duration> {
    Some(d).filter(|d| !d.is_zero() && !is_unlimited(*d))
}

/// Formats a duration as seconds with three decimals, without a unit (`0.412`): the form of
/// the numeric values retry hands to attempts and hooks (`RETRY_DELAY`, `RETRY_TIME_LEFT`),
/// which scripts compute with. Text lines use [`format_human`].
pub fn seconds_value(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// Formats a duration for a person, the way every one of retry's text lines shows durations:
/// the largest unit first and at most two units, rounded to the last unit shown, zero parts
/// left out. `0s`; below a millisecond `250us`; below a second `250ms`; below a minute seconds
/// with one decimal, `.0` left out (`12.4s`, `3s`); below an hour minutes and whole seconds
/// (`1m 30s`, `2m`); below a day hours and minutes (`2h 5m`); then days and hours (`3d 4h`).
/// A value that rounds up to the next unit is shown in it (`59.96s` is `1m`); [`UNLIMITED`] is
/// `inf`. JSON events keep numbers of seconds instead.
pub fn format_human(d: Duration) -> String {
    if is_unlimited(d) {
        return "inf".into();
    }
    /// `n / unit`, rounded half up.
    fn round(n: u128, unit: u128) -> u128 {
        (n + unit / 2) / unit
    }
    const SEC: u128 = 1_000_000;
    let us = d.as_micros();
    if us == 0 {
        return "0s".into();
    }
    if us < 1000 {
        return format!("{us}us");
    }
    let ms = round(us, 1000);
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let tenths = round(us, SEC / 10);
    if tenths < 600 {
        return match tenths % 10 {
            0 => format!("{}s", tenths / 10),
            t => format!("{}.{t}s", tenths / 10),
        };
    }
    let two = |big: u128, unit: &str, small: u128, small_unit: &str| match small {
        0 => format!("{big}{unit}"),
        s => format!("{big}{unit} {s}{small_unit}"),
    };
    let secs = round(us, SEC);
    if secs < 3600 {
        return two(secs / 60, "m", secs % 60, "s");
    }
    let mins = round(us, 60 * SEC);
    if mins < 24 * 60 {
        return two(mins / 60, "h", mins % 60, "m");
    }
    let hours = round(us, 3600 * SEC);
    two(hours / 24, "d", hours % 24, "h")
}

/// Formats a duration exactly to the millisecond, for the `--dry-run` schedule and its limits
/// (where a rounded delay would misstate the schedule the table exists to show): the largest
/// unit first and every non-zero part down to seconds, the seconds with up to three decimals,
/// trailing zeros left out (`2.25s`, `3.375s`, `1m 26.498s`, `2h 5s`, `3d 4h`); rounded half up
/// to the millisecond. Below a millisecond, microseconds (`500us`), and below a microsecond
/// nanoseconds (`1ns`), so that no positive value reads as `0s` (0 means "none" for the
/// limits, and `1e-10000` is 1 ns). [`UNLIMITED`] is `inf`. Progress lines keep the shorter
/// [`format_human`].
pub fn format_exact(d: Duration) -> String {
    if is_unlimited(d) {
        return "inf".into();
    }
    /// `n / unit`, rounded half up.
    fn round(n: u128, unit: u128) -> u128 {
        (n + unit / 2) / unit
    }
    let ns = d.as_nanos();
    if ns == 0 {
        return "0s".into();
    }
    if ns < 1000 {
        return format!("{ns}ns");
    }
    let us = round(ns, 1000);
    if us < 1000 {
        return format!("{us}us");
    }
    let ms = round(ns, 1_000_000);
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let (days, hours, mins) = (ms / 86_400_000, ms / 3_600_000 % 24, ms / 60_000 % 60);
    let (secs, frac) = (ms / 1000 % 60, ms % 1000);
    let mut parts: Vec<String> = [(days, "d"), (hours, "h"), (mins, "m")]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    match frac {
        0 if secs == 0 => {}
        0 => parts.push(format!("{secs}s")),
        f => {
            let decimals = format!("{f:03}");
            parts.push(format!("{secs}.{}s", decimals.trim_end_matches('0')));
        }
    }
    parts.join(" ")
}

/// Two durations a message compares (`--cap (..) must be >= --base (..)`), each as
/// [`format_human`] shows it, or, when they differ but would read the same rounded, both as
/// seconds with the fewest decimals (3, 6 or 9) that tell them apart (`3600.999s`, `3600.000s`).
pub fn format_apart(a: Duration, b: Duration) -> (String, String) {
    let (x, y) = (format_human(a), format_human(b));
    if x != y || a == b {
        return (x, y);
    }
    let secs = |d: Duration, decimals: usize| format!("{:.*}s", decimals, d.as_secs_f64());
    for decimals in [3, 6] {
        let (x, y) = (secs(a, decimals), secs(b, decimals));
        if x != y {
            return (x, y);
        }
    }
    let exact = |d: Duration| format!("{}.{:09}s", d.as_secs(), d.subsec_nanos());
    (exact(a), exact(b))
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
    fn too_large_is_told_from_inf() {
        assert_eq!(too_large("inf"), None);
        assert_eq!(too_large(" +Infinity s"), None);
        assert!(
            too_large("1e19")
                .unwrap()
                .starts_with("is too large: past 9223372036854775807")
        );
        assert!(too_large("99999999999999999999h").is_some());
    }

    #[test]
    fn unlimited_reads_back_and_limits_drop_0_and_inf() {
        assert_eq!(format_human(UNLIMITED), "inf");
        assert_eq!(parse_duration(&format_human(UNLIMITED)), Ok(UNLIMITED));
        assert_eq!(limit(UNLIMITED), None);
        assert_eq!(limit(Duration::ZERO), None);
        assert_eq!(limit(ns(1)), Some(ns(1)));
    }

    #[test]
    fn compared_values_never_read_the_same_unless_they_are() {
        let ms = Duration::from_millis;
        assert_eq!(
            format_apart(ms(1041), ms(1049)),
            ("1.041s".into(), "1.049s".into())
        );
        assert_eq!(
            format_apart(ms(500), ms(1000)),
            ("500ms".into(), "1s".into())
        );
        assert_eq!(format_apart(ms(10), ms(10)), ("10ms".into(), "10ms".into()));
    }

    #[test]
    fn values_for_scripts_have_three_decimals() {
        assert_eq!(seconds_value(Duration::from_micros(412_400)), "0.412");
        assert_eq!(seconds_value(Duration::from_secs(64)), "64.000");
    }

    #[test]
    fn people_read_at_most_two_units() {
        let ms = Duration::from_millis;
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_micros(250), "250us"),
            (Duration::from_nanos(999), "0s"),
            (ms(1), "1ms"),
            (Duration::from_micros(999_600), "1s"),
            (ms(250), "250ms"),
            (ms(1000), "1s"),
            (ms(1500), "1.5s"),
            (ms(12_400), "12.4s"),
            (ms(12_449), "12.4s"),
            (ms(59_940), "59.9s"),
            (ms(59_960), "1m"),
            (ms(90_000), "1m 30s"),
            (ms(63_400), "1m 3s"),
            (Duration::from_secs(64), "1m 4s"),
            (Duration::from_secs(1800), "30m"),
            (Duration::from_secs(3599), "59m 59s"),
            (Duration::from_secs(2 * 3600 + 5 * 60 + 10), "2h 5m"),
            (Duration::from_secs(86_399), "1d"),
            (Duration::from_secs(3 * 86_400 + 4 * 3600), "3d 4h"),
            (Duration::MAX, "inf"),
            (
                Duration::MAX - Duration::from_secs(1),
                "213503982334601d 7h",
            ),
        ];
        for (d, want) in cases {
            assert_eq!(format_human(d), want, "{d:?}");
        }
    }

    #[test]
    fn schedules_read_exactly_to_the_millisecond() {
        let ms = Duration::from_millis;
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(1), "1ns"),
            (Duration::from_nanos(999), "999ns"),
            (Duration::from_nanos(1499), "1us"),
            (Duration::from_nanos(1500), "2us"),
            (Duration::from_micros(500), "500us"),
            (Duration::from_nanos(999_499), "999us"),
            (Duration::from_nanos(999_500), "1ms"),
            (ms(250), "250ms"),
            (Duration::from_nanos(999_500_000), "1s"),
            (ms(1000), "1s"),
            (ms(2250), "2.25s"),
            (Duration::from_nanos(3_375_000_000), "3.375s"),
            (ms(4750), "4.75s"),
            (Duration::from_nanos(8_125_000_000), "8.125s"),
            (Duration::from_nanos(1_000_500_000), "1.001s"),
            (Duration::from_nanos(1_000_499_999), "1s"),
            (ms(10_010), "10.01s"),
            (ms(59_999), "59.999s"),
            (Duration::from_nanos(59_999_500_000), "1m"),
            (ms(60_000), "1m"),
            (ms(86_497), "1m 26.497s"),
            (ms(3_600_000 + 5_000), "1h 5s"),
            (ms(3_600_000 + 60_000), "1h 1m"),
            (ms(86_400_000 + 1), "1d 0.001s"),
            (ms(86_400_000 + 3_600_000 * 4), "1d 4h"),
            (
                Duration::from_secs(3 * 86_400 + 4 * 3600 + 5 * 60 + 6),
                "3d 4h 5m 6s",
            ),
            (UNLIMITED, "inf"),
            (
                UNLIMITED - Duration::from_nanos(1),
                "213503982334601d 7h 16s",
            ),
        ];
        for (d, want) in cases {
            assert_eq!(format_exact(d), want, "{d:?}");
        }
    }
}
