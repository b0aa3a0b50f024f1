//! DURATION values on the command line: humantime syntax or a bare number of seconds.

use std::time::Duration;

/// Parses a DURATION: humantime syntax (`250ms`, `1.5s`, `2m30s`) or a bare, non-negative
/// number of seconds (`2`, `0.5`).
///
/// # Errors
/// A message (without the flag's name, which the caller adds) for negative, non-finite,
/// unparsable or overflowing values.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    if text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'+')
        && text
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'.')
    {
        let secs: f64 = text
            .parse()
            .map_err(|_| format!("'{text}' is not a number of seconds"))?;
        return Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("'{text}' seconds is out of range"));
    }
    if text.starts_with('-') {
        return Err("a duration cannot be negative".into());
    }
    humantime::parse_duration(text).map_err(|e| {
        format!("{e} (expected a duration such as 250ms, 1.5s, 2m30s, or a number of seconds)")
    })
}

/// Formats a duration as seconds with three decimals and an `s` suffix (`0.412s`).
pub fn format_secs(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_humantime_and_bare_seconds() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m30s"), Ok(Duration::from_secs(150)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "",
            "-1",
            "-1s",
            "abc",
            "1x",
            "NaN",
            "inf",
            "1e400",
            "1..2",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn formats_three_decimals() {
        assert_eq!(format_secs(Duration::from_micros(412_400)), "0.412s");
        assert_eq!(format_secs(Duration::from_secs(64)), "64.000s");
    }
}
