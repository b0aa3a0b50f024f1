//! A second, independent reading of the DURATION grammar, for the property test: a regular
//! expression says what is a DURATION, and arithmetic on decimal digit strings computes its
//! value (where [`super::grammar`] scans bytes and works in `u128`). The two must agree on
//! every text.

use std::sync::LazyLock;
use std::time::Duration;

use proptest::prelude::*;
use regex::Regex;

/// Seconds in each unit word (nanoseconds for the sub-second ones), as decimal text.
const UNITS: &[(&[&str], &str)] = &[
    (&["ns", "nsec", "nanos"], "1"),
    (&["us", "µs", "usec"], "1000"),
    (&["ms", "msec", "millis"], "1000000"),
    (&["s", "sec", "secs", "second", "seconds"], "1000000000"),
    (&["m", "min", "mins", "minute", "minutes"], "60000000000"),
    (&["h", "hr", "hrs", "hour", "hours"], "3600000000000"),
    (&["d", "day", "days"], "86400000000000"),
    (&["w", "wk", "wks", "week", "weeks"], "604800000000000"),
    (&["M", "month", "months"], "2630016000000000"),
    (&["y", "yr", "yrs", "year", "years"], "31557600000000000"),
];

/// `i64::MAX` seconds and 999 999 999 ns, in nanoseconds.
const LIMIT: &str = "9223372036854775807999999999";

const NUM: &str = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?";
const WS: &str = r"[ \t\n\x0C\r]";

/// What the reference makes of `text`: `None` for an error.
pub(super) fn parse(text: &str) -> Option<Duration> {
    static WHOLE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"^([+-]?)(?:((?i-u:infinity|inf)){WS}*([a-zA-Zµ]*)|((?:{NUM}{WS}*[a-zA-Zµ]*{WS}*)+))$"
        ))
        .unwrap()
    });
    static TERM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?{WS}*([a-zA-Zµ]*)"
        ))
        .unwrap()
    });
    let caps = WHOLE.captures(text.trim())?;
    let negative = &caps[1] == "-";
    let total = if caps.get(2).is_some() {
        let unit = &caps[3];
        if !unit.is_empty() {
            unit_nanos(unit)?;
        }
        None
    } else {
        let body = &caps[4];
        let terms: Vec<_> = TERM.captures_iter(body).collect();
        // Numbers are read longest first: the terms must cover the body, space aside (`.00.`
        // is `.00` and a stray `.`, not `.0` and `0.`).
        let mut at = 0;
        for t in &terms {
            let m = t.get(0).unwrap();
            if !body[at..m.start()].trim().is_empty() {
                return None;
            }
            at = m.end();
        }
        if !body[at..].trim().is_empty() {
            return None;
        }
        let mut total = Some(String::from("0"));
        for t in &terms {
            let unit = match &t[3] {
                "" if terms.len() == 1 => "1000000000",
                "" => return None,
                word => unit_nanos(word)?,
            };
            let (whole, fraction) = t[1].split_once('.').unwrap_or((&t[1], ""));
            let exponent = t.get(2).map_or("0", |m| m.as_str());
            let value = term_nanos(
                &format!("{whole}{fraction}"),
                fraction.len(),
                exponent,
                unit,
            );
            total = match (total, value) {
                (Some(a), Some(b)) => Some(add(&a, &b)).filter(|s| !greater(s, LIMIT)),
                _ => None,
            };
        }
        total
    };
    let zero = total
        .as_deref()
        .is_some_and(|t| t.trim_start_matches('0').is_empty());
    match total {
        _ if zero => Some(Duration::ZERO),
        _ if negative => None,
        None => Some(Duration::MAX),
        Some(n) => {
            let n: u128 = n.parse().unwrap();
            Some(Duration::new(
                (n / 1_000_000_000) as u64,
                (n % 1_000_000_000) as u32,
            ))
        }
    }
}

fn unit_nanos(word: &str) -> Option<&'static str> {
    UNITS
        .iter()
        .find(|(words, _)| words.contains(&word))
        .map(|(_, n)| *n)
}

/// `digits` (with `fraction` of them after the point) times 10^`exponent` times `unit`
/// nanoseconds, rounded up; `None` past [`LIMIT`].
fn term_nanos(digits: &str, fraction: usize, exponent: &str, unit: &str) -> Option<String> {
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some("0".into());
    }
    let product = multiply(digits, unit);
    // Exponents of many digits: the value is past the limit, or below 1 ns.
    let e: i64 = match exponent.trim_start_matches(['+', '-']).len() {
        0..=7 => exponent.parse::<i64>().unwrap() - fraction as i64,
        _ if exponent.starts_with('-') => return Some("1".into()),
        _ => return None,
    };
    let n = if e >= 0 {
        if e > 40 {
            return None;
        }
        format!("{product}{}", "0".repeat(e as usize))
    } else {
        let k = (-e) as usize;
        let (whole, rest) = if k >= product.len() {
            ("0", product.as_str())
        } else {
            product.split_at(product.len() - k)
        };
        let up = rest.bytes().any(|b| b != b'0');
        if up {
            add(whole, "1")
        } else {
            whole.to_string()
        }
    };
    Some(n).filter(|n| !greater(n, LIMIT))
}

/// Decimal digit strings: `a * b`.
fn multiply(a: &str, b: &str) -> String {
    let (a, b): (Vec<u32>, Vec<u32>) = (
        a.bytes().rev().map(|d| u32::from(d - b'0')).collect(),
        b.bytes().rev().map(|d| u32::from(d - b'0')).collect(),
    );
    let mut out = vec![0u32; a.len() + b.len()];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    for i in 0..out.len() - 1 {
        out[i + 1] += out[i] / 10;
        out[i] %= 10;
    }
    digits_text(out)
}

/// Decimal digit strings: `a + b`.
fn add(a: &str, b: &str) -> String {
    let (a, b): (Vec<u32>, Vec<u32>) = (
        a.bytes().rev().map(|d| u32::from(d - b'0')).collect(),
        b.bytes().rev().map(|d| u32::from(d - b'0')).collect(),
    );
    let mut out = vec![0u32; a.len().max(b.len()) + 1];
    for (i, o) in out.iter_mut().enumerate() {
        *o = a.get(i).copied().unwrap_or(0) + b.get(i).copied().unwrap_or(0);
    }
    for i in 0..out.len() - 1 {
        out[i + 1] += out[i] / 10;
        out[i] %= 10;
    }
    digits_text(out)
}

/// Little-endian digits as text without leading zeros ("0" for none).
fn digits_text(little: Vec<u32>) -> String {
    let text: String = little
        .iter()
        .rev()
        .map(|d| char::from(b'0' + *d as u8))
        .collect();
    let text = text.trim_start_matches('0');
    if text.is_empty() {
        "0".into()
    } else {
        text.into()
    }
}

/// Whether decimal `a` is greater than decimal `b` (no leading zeros in either).
fn greater(a: &str, b: &str) -> bool {
    let a = a.trim_start_matches('0');
    (a.len(), a) > (b.len(), b)
}

/// Texts built from the grammar's pieces, and a few that bend it.
fn grammar_text() -> impl Strategy<Value = String> {
    let space = prop_oneof![Just(""), Just(" "), Just("\t"), Just("  ")];
    let number = (
        "[0-9]{0,14}",
        prop::option::of("[0-9]{0,14}"),
        prop::option::of(("[eE]", "[+-]?", "[0-9]{1,3}")),
    )
        .prop_map(|(whole, fraction, exponent)| {
            let mut s = whole;
            if let Some(f) = fraction {
                s.push('.');
                s.push_str(&f);
            }
            if let Some((e, sign, digits)) = exponent {
                s.push_str(&format!("{e}{sign}{digits}"));
            }
            s
        });
    let unit = prop_oneof![
        Just(""),
        Just("ns"),
        Just("us"),
        Just("µs"),
        Just("ms"),
        Just("s"),
        Just("m"),
        Just("h"),
        Just("d"),
        Just("w"),
        Just("M"),
        Just("y"),
        Just("min"),
        Just("hours"),
        Just("D"),
        Just("x"),
        Just("e"),
    ];
    let term = (number, space.clone(), unit, space.clone())
        .prop_map(|(n, a, u, b)| format!("{n}{a}{u}{b}"));
    let terms = prop::collection::vec(term, 1..4).prop_map(|t| t.concat());
    let infinity = (
        prop_oneof![
            Just("inf"),
            Just("INF"),
            Just("infinity"),
            Just("Infinity"),
            Just("in"),
            Just("nan")
        ],
        prop_oneof![Just(""), Just("s"), Just("d"), Just("x")],
    )
        .prop_map(|(i, u)| format!("{i}{u}"));
    (
        space.clone(),
        prop_oneof![Just(""), Just("+"), Just("-")],
        prop_oneof![4 => terms, 1 => infinity],
        space,
    )
        .prop_map(|(a, sign, body, b)| format!("{a}{sign}{body}{b}"))
}

proptest! {
    // A failure prints its input; no regression file is written into the tree.
    #![proptest_config(ProptestConfig {
        cases: 4000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_parser_agrees_with_the_reference_on_grammar_texts(text in grammar_text()) {
        prop_assert_eq!(super::parse_duration(&text).ok(), parse(&text), "{:?}", text);
    }

    #[test]
    fn the_parser_agrees_with_the_reference_on_any_text(
        text in prop_oneof!["\\PC{0,16}", "[0-9eE.+\\- a-zA-Zµ٣５_x]{0,16}"]
    ) {
        prop_assert_eq!(super::parse_duration(&text).ok(), parse(&text), "{:?}", text);
    }
}

#[test]
fn the_reference_reads_the_documented_cases() {
    let secs = Duration::from_secs;
    assert_eq!(parse("2.34e+5d"), Some(secs(234_000 * 86_400)));
    assert_eq!(parse("1m30s"), Some(secs(90)));
    assert_eq!(parse("1e-10000"), Some(Duration::from_nanos(1)));
    assert_eq!(parse("1e400"), Some(Duration::MAX));
    assert_eq!(parse("infs"), Some(Duration::MAX));
    assert_eq!(parse("-0"), Some(Duration::ZERO));
    assert_eq!(parse("-1"), None);
    assert_eq!(parse("1m30"), None);
    assert_eq!(parse(".00."), None);
}
