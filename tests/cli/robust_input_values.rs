//! Robustness: input validation. Hostile values, flag by flag: the DURATION, CODES and other
//! value strategies, each duration and CODES flag (and its `RETRY_<FLAG>` variable) checked
//! against the library's own parser, the parsers themselves over many more cases, and the
//! famous hostile values by name (the argument vectors and the running and judging of a case
//! are in `robust_input.rs`).

use std::ffi::OsString;

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use retry::codes::CodeSet;
use retry::duration::parse_duration;

use crate::robust_input::{COMMAND, config, judge, run, strings};

// ---------------------------------------------------------------------------------------------
// Values

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[0-9]{1,3}",
        1 => "[0-9]{10,30}",
        2 => "[0-9]{0,3}\\.[0-9]{0,4}",
        1 => "[0-9]{1,3}[eE][+-]?[0-9]{1,3}",
        2 => select(strings(&[
            "NaN", "nan", "inf", "-inf", "+inf", "infinity", "Infinity", "0x10", "1_000", "١٢",
            "½", "1,5", "", ".", "e", "1e", "++1", "1..2", "-0", "0.0", "1e400", "1e-400",
            "18446744073709551615", "18446744073709551616", "584942417355", "9007199254740993",
            "4.9e-324", "1.7976931348623157e308", "0.0000000001",
        ])),
    ]
}

pub(crate) fn unit() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(strings(&[
            "", "ns", "nsec", "us", "usec", "µs", "ms", "msec", "millis", "s", "sec", "secs",
            "second", "seconds", "m", "min", "mins", "minute", "minutes", "h", "hr", "hrs",
            "hour", "hours", "d", "day", "days", "w", "week", "weeks", "M", "month", "months",
            "y", "year", "years",
        ])),
        // Typos and near misses.
        2 => select(strings(&[
            "sx", "mz", "hrz", "secondss", "mss", "S", "MS", "H", "mn", "µ", "μs", "sec.",
            "s s", "ss", "hs", "sm", "m30", "h-", "s\0", "\u{200b}s",
        ])),
        1 => "[a-zA-Z]{1,5}",
    ]
}

fn sign() -> impl Strategy<Value = &'static str> {
    prop_oneof![6 => Just(""), 2 => Just("-"), 1 => Just("+"), 1 => Just(" "), 1 => Just("--")]
}

/// A DURATION string: mostly almost-right, some famous trouble, some noise.
pub(crate) fn duration_text() -> impl Strategy<Value = String> {
    prop_oneof![
        5 => (sign(), number(), unit()).prop_map(|(s, n, u)| format!("{s}{n}{u}")),
        2 => (sign(), number(), unit(), select(strings(&["", " ", "  "])), number(), unit())
            .prop_map(|(s, n1, u1, sep, n2, u2)| format!("{s}{n1}{u1}{sep}{n2}{u2}")),
        2 => select(strings(&[
            "99999999999999h", "99999999999999999999h", "18446744073709551615s",
            "18446744073709551616s", "584942417356y", "584942417355y", "9999999999999999999999ns",
            "0ns", "1ns", "   ", "\t1s\n", "1s,2s", "1s-2s", "--1s", "- 1s", "1 s", "1s ", "s",
            "h1", "1e19", "1.8446744073709552e19", "0.000000000001", "1e-10ms", "NaNs", "infs",
            "-0s", "-0", "2m30s", "1h30m", "1h 30m", "250ms", "1.5s",
        ])),
        1 => "\\PC{0,12}",
        1 => ".{0,12}",
    ]
}

fn status_item() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u32..300).prop_map(|n| n.to_string()),
        2 => select(strings(&[
            "-1", "256", "999", "99999999999999999999", "00", "007", "+1", " 1 ", "1.0", "0x1",
            "", "  ", "١", "1e2",
        ])),
        3 => select(strings(&[
            "SIGPIPE", "PIPE", "pipe", "Sigterm", "sigkill", "KILL", "HUP", "INT", "QUIT", "USR1",
            "SIGUSR2", "SIGSEGV", "SIGRTMIN", "RTMIN", "SIGRTMIN+1", "SIGSTKFLT", "SIGPOLL",
            "SIGIO", "SIGCLD", "SIGIOT", "SIGNOPE", "SIG", "sig", "SIGSIGPIPE", "TERM\0",
            "SIGPIPE ", "sig pipe", "STOP", "CONT", "SIGSYS", "SIGUNUSED", "SIGEMT", "SIGINFO",
        ])),
        1 => "[A-Za-z0-9+_]{0,6}",
    ]
}

fn code_item() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => status_item(),
        3 => (status_item(), status_item()).prop_map(|(a, b)| format!("{a}-{b}")),
        1 => (status_item(), status_item(), status_item())
            .prop_map(|(a, b, c)| format!("{a}-{b}-{c}")),
    ]
}

/// A CODES list: items joined by a separator, sometimes with stray separators at the ends.
pub(crate) fn codes_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(code_item(), 0..6),
        select(strings(&[",", ",", ", ", " ,", ",,", ";", " "])),
        select(strings(&["", "", "", ",", " ", "-"])),
        select(strings(&["", "", "", ",", " ", "-"])),
    )
        .prop_map(|(items, sep, head, tail)| format!("{head}{}{tail}", items.join(&sep)))
}

pub(crate) fn multiplier_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => number(),
        1 => select(strings(&["1", "2", "1.6", "0.5", "-2", "0", "1e308", "1e309", "2x", ""])),
    ]
}

pub(crate) fn jitter_text() -> impl Strategy<Value = String> {
    select(strings(&[
        "none",
        "full",
        "equal",
        "decorrelated",
        "additive",
        "proportional",
        "FULL",
        "Full",
        "fulll",
        "decorellated",
        "",
        " full",
        "full ",
        "random",
        "0",
    ]))
}

pub(crate) fn seed_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        select(strings(&[
            "0",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "abc",
            "",
            "0x2a",
            "1e3",
            " 42",
        ])),
    ]
}

pub(crate) fn preset_text() -> impl Strategy<Value = String> {
    select(strings(&[
        "gcp", "aws", "grpc", "api-core", "AWS", "Gcp", "api_core", "apicore", "azure", "", " aws",
    ]))
}

pub(crate) fn regex_text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => select(strings(&[
            "x", "^$", ".*", "(", "[a-", "*", "\\", "Retry-After: (\\d+)", "(\\d+)", "a{1000000}",
            "(?P<x", "\\p{Nope}", "", "(a)(b)", "[[:alpha:]]+",
        ])),
        1 => "\\PC{0,8}",
    ]
}

/// `--max-retries` values: any hostile one, or (`bounded`) only those that cannot make a run
/// retry: `0` and invalid ones.
pub(crate) fn count_text(bounded: bool) -> BoxedStrategy<String> {
    let invalid = select(strings(&[
        "-1",
        "abc",
        "1.5",
        "",
        "99999999999999999999999",
        " 3",
        "0x10",
        "1e3",
        "unlimite",
        "∞",
        "18446744073709551616",
        "-0x1",
    ]));
    if bounded {
        prop_oneof![3 => Just("0".to_string()), 1 => invalid].boxed()
    } else {
        prop_oneof![
            2 => Just("0".to_string()),
            1 => invalid,
            2 => select(strings(&[
                "unlimited", "UNLIMITED", "Unlimited", "1", "5", "+5", "007",
                "18446744073709551615",
            ])),
            1 => (1u64..1000).prop_map(|n| n.to_string()),
        ]
        .boxed()
    }
}

/// The duration flags with their variables: (`--flag`, `RETRY_<FLAG>`).
const DURATION_FLAGS: [(&str, &str); 5] = [
    ("--base", "RETRY_BASE"),
    ("--cap", "RETRY_CAP"),
    ("--deadline", "RETRY_DEADLINE"),
    ("--timeout", "RETRY_TIMEOUT"),
    ("--kill-after", "RETRY_KILL_AFTER"),
];

/// The CODES flags with their variables.
const CODES_FLAGS: [(&str, &str); 2] = [
    ("--retry-on", "RETRY_RETRY_ON"),
    ("--stop-on", "RETRY_STOP_ON"),
];

/// Runs `retry -n 0 [--flag=VALUE] -- /bin/sh -c 'exit 0'` (or with `VARIABLE=VALUE`) and
/// checks the status against what the library parser says of the value: a value it refuses is
/// 125 naming the flag (and the variable); a value it accepts runs, or is refused only by a
/// rule between two settings (--cap below --base) or because `inf` means nothing for the flag
/// (--base, --splay), never as an invalid value.
fn check_against_parser(
    flag: &str,
    variable: &str,
    value: &str,
    via_env: bool,
    accepted: bool,
) -> Result<(), TestCaseError> {
    let mut args: Vec<OsString> = vec!["-n".into(), "0".into()];
    let mut env = Vec::new();
    if via_env {
        env.push((variable.to_string(), OsString::from(value)));
    } else {
        args.push(format!("{flag}={value}").into());
    }
    args.push("--".into());
    args.extend(COMMAND.map(OsString::from));
    let (out, took) = run(&args, &env);
    let code = judge(&out, took, false)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let unset = via_env && value.is_empty();
    if accepted || unset {
        prop_assert!(
            code != 125
                || (!stderr.contains("invalid value")
                    && (stderr.contains("--cap")
                        || stderr.contains(") must be finite")
                        || stderr.contains(") is too large: past"))),
            "{flag} {value:?} (env: {via_env}) is accepted by the parser but refused: {stderr:?}"
        );
    } else {
        prop_assert_eq!(
            code,
            125,
            "{} {:?} (env: {}) was not refused",
            flag,
            value,
            via_env
        );
        prop_assert!(
            stderr.contains(flag),
            "the error does not name {flag}: {stderr:?}"
        );
        if via_env {
            prop_assert!(
                stderr.contains(variable),
                "the error does not name {variable}: {stderr:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(128))]

    /// DURATION values on each duration flag or variable: refused exactly when the parser
    /// refuses them, with the flag named; never a panic or a hang.
    #[test]
    fn duration_values_are_refused_exactly_when_invalid(
        which in 0..DURATION_FLAGS.len(),
        via_env: bool,
        value in duration_text(),
    ) {
        // A NUL cannot be passed in an argument or variable at all.
        let value = value.replace('\0', "\x01");
        let (flag, variable) = DURATION_FLAGS[which];
        let accepted = parse_duration(&value).is_ok();
        check_against_parser(flag, variable, &value, via_env, accepted)?;
    }

    /// CODES lists on --retry-on / --stop-on and their variables, the same way.
    #[test]
    fn codes_values_are_refused_exactly_when_invalid(
        which in 0..CODES_FLAGS.len(),
        via_env: bool,
        value in codes_text(),
    ) {
        let value = value.replace('\0', "\x01");
        let (flag, variable) = CODES_FLAGS[which];
        let accepted = value.parse::<CodeSet>().is_ok();
        check_against_parser(flag, variable, &value, via_env, accepted)?;
    }
}

// ---------------------------------------------------------------------------------------------
// The parsers themselves, many more cases (no process per case)

proptest! {
    #![proptest_config(config(4096))]

    /// parse_duration on any string never panics; what it accepts formats and is finite.
    #[test]
    fn parse_duration_never_panics(text in prop_oneof![duration_text(), ".{0,24}", "\\PC{0,24}"]) {
        if let Ok(d) = parse_duration(&text) {
            prop_assert!(d.as_secs_f64().is_finite());
            prop_assert_eq!(parse_duration(&format!(" {text} ")), Ok(d));
        }
    }

    /// CODES parsing on any string never panics, and a list it accepts round-trips.
    #[test]
    fn codes_parse_never_panics(text in prop_oneof![codes_text(), ".{0,24}", "[0-9, -]{0,24}"]) {
        if let Ok(set) = text.parse::<CodeSet>() {
            let plain: Vec<String> =
                (0..=255u8).filter(|c| set.contains(*c)).map(|c| c.to_string()).collect();
            prop_assert!(!plain.is_empty());
            prop_assert_eq!(plain.join(",").parse::<CodeSet>(), Ok(set));
        }
    }

    /// A well-formed list of numbers and ranges means exactly the statuses it names.
    #[test]
    fn well_formed_codes_mean_what_they_say(
        items in prop::collection::vec((0u8..=255, 0u8..=255, any::<bool>()), 1..8),
    ) {
        let mut want = [false; 256];
        let text: Vec<String> = items
            .iter()
            .map(|&(a, b, range)| {
                if range {
                    let (lo, hi) = (a.min(b), a.max(b));
                    (lo..=hi).for_each(|c| want[usize::from(c)] = true);
                    format!("{lo}-{hi}")
                } else {
                    want[usize::from(a)] = true;
                    a.to_string()
                }
            })
            .collect();
        let set: CodeSet = text.join(",").parse().unwrap();
        for c in 0..=255u8 {
            prop_assert_eq!(set.contains(c), want[usize::from(c)], "status {}", c);
        }
    }
}

/// Values too large for the clock, and `inf`, are no limit (as for coreutils `timeout`), where
/// retry used to refuse them: a run with them ends as a plain run does.
#[test]
fn famous_huge_values_are_no_limit() {
    for (flag, value) in [
        ("--deadline", "1e400"),
        ("--timeout", "inf"),
        ("--deadline", "18446744073709551616"),
        ("--deadline", "584942417356y"),
        ("--cap", "1.7976931348623157e308"),
        ("--kill-after", "infinity"),
        ("--idle-timeout", "9223372036854775808d"),
        ("--max-hint", "infs"),
        ("--reset-after", "1e19"),
    ] {
        let args: Vec<OsString> = [format!("{flag}={value}"), "--".into()]
            .into_iter()
            .map(OsString::from)
            .chain(COMMAND.map(OsString::from))
            .collect();
        let (out, took) = run(&args, &[]);
        let code = judge(&out, took, false).unwrap_or_else(|e| panic!("{flag} {value}: {e}"));
        assert_eq!(
            code,
            0,
            "{flag}={value}: {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The famous cases, by name, so a regression shows which one.
#[test]
fn famous_hostile_values_are_refused_with_one_line() {
    for (flag, value) in [
        ("--base", "99999999999999h"),
        ("--base", "-1s"),
        ("--cap", "NaN"),
        ("--deadline", "-1e400"),
        ("--timeout", "-inf"),
        ("--timeout", "0x10"),
        ("--timeout", "1_000"),
        ("--timeout", "٣"),
        ("--kill-after", "5 parsecs"),
        ("--base", "1.5.5s"),
        ("--timeout", "-0.5"),
        ("--splay", "18446744073709551616"),
        ("--base", "584942417356y"),
        ("--retry-on", "1,,2"),
        ("--retry-on", "99999999999999999999"),
        ("--stop-on", "SIGRTMIN+1"),
        ("--stop-on", "255-0"),
        ("--max-retries", "-1"),
        ("--max-retries", "18446744073709551616"),
        ("--multiplier", "NaN"),
        ("--multiplier", "1e309"),
        ("--seed", "-1"),
    ] {
        let args: Vec<OsString> = [format!("{flag}={value}"), "--".into()]
            .into_iter()
            .map(OsString::from)
            .chain(COMMAND.map(OsString::from))
            .collect();
        let (out, took) = run(&args, &[]);
        let code = judge(&out, took, false).unwrap_or_else(|e| panic!("{flag} {value}: {e}"));
        assert_eq!(code, 125, "{flag}={value} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(flag), "{flag}={value}: {stderr:?}");
    }
}
