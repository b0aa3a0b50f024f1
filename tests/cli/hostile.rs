//! Hostile input: random argument vectors, DURATION and CODES strings (negative, huge, NaN-like,
//! unit typos, overflow, non-UTF-8) and random `RETRY_<FLAG>` values. retry never panics, never
//! hangs, and either exits 125 with one line `retry: ...` or runs.
//!
//! Every run has a cleared environment with `PATH` set to an empty directory, so a random word
//! that ends up as COMMAND is never found (127) and nothing random is ever executed; the real
//! command is `/bin/sh -c 'exit 0'`, which succeeds at once. Retrying can then only start after
//! a `--timeout` stopped an attempt: whenever a case holds a timeout (or `--dry-run`, which
//! prints one row per retry), its `-n` is `0` or invalid, so no case can legitimately wait long.
//!
//! Case counts: `PROPTEST_CASES` overrides the defaults below.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::ExitStatusExt;
use std::process::Output;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use retry::codes::CodeSet;
use retry::duration::parse_duration;

use crate::helpers::retry;

/// A single run must end within this; a case that takes longer is a hang.
const CASE_LIMIT: Duration = Duration::from_secs(30);

/// The command every case runs (when its argument vector lets it): succeeds at once.
const COMMAND: [&str; 3] = ["/bin/sh", "-c", "exit 0"];

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        // Regressions would be written next to this file; a failure prints its input anyway.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

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

fn unit() -> impl Strategy<Value = String> {
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
fn duration_text() -> impl Strategy<Value = String> {
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
fn codes_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(code_item(), 0..6),
        select(strings(&[",", ",", ", ", " ,", ",,", ";", " "])),
        select(strings(&["", "", "", ",", " ", "-"])),
        select(strings(&["", "", "", ",", " ", "-"])),
    )
        .prop_map(|(items, sep, head, tail)| format!("{head}{}{tail}", items.join(&sep)))
}

fn multiplier_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => number(),
        1 => select(strings(&["1", "2", "1.6", "0.5", "-2", "0", "1e308", "1e309", "2x", ""])),
    ]
}

fn jitter_text() -> impl Strategy<Value = String> {
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

fn seed_text() -> impl Strategy<Value = String> {
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

fn preset_text() -> impl Strategy<Value = String> {
    select(strings(&[
        "gcp", "aws", "grpc", "api-core", "AWS", "Gcp", "api_core", "apicore", "azure", "", " aws",
    ]))
}

fn regex_text() -> impl Strategy<Value = String> {
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
fn count_text(bounded: bool) -> BoxedStrategy<String> {
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

// ---------------------------------------------------------------------------------------------
// Argument vectors

/// What kind of value a flag takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Duration,
    Multiplier,
    Jitter,
    Seed,
    Preset,
    Codes,
    Regex,
    CapturingRegex,
}

/// The flags that take a value (all but `--max-retries`, which is placed separately), with
/// their short form.
const VALUED: [(&str, Option<char>, Kind); 14] = [
    ("--base", Some('b'), Kind::Duration),
    ("--cap", Some('c'), Kind::Duration),
    ("--deadline", Some('d'), Kind::Duration),
    ("--timeout", Some('t'), Kind::Duration),
    ("--kill-after", None, Kind::Duration),
    ("--multiplier", Some('m'), Kind::Multiplier),
    ("--jitter", Some('j'), Kind::Jitter),
    ("--seed", None, Kind::Seed),
    ("--preset", None, Kind::Preset),
    ("--retry-on", None, Kind::Codes),
    ("--stop-on", None, Kind::Codes),
    ("--retry-if-output", None, Kind::Regex),
    ("--stop-if-output", None, Kind::Regex),
    ("--delay-from-output", None, Kind::CapturingRegex),
];

fn value_of(kind: Kind) -> BoxedStrategy<String> {
    match kind {
        Kind::Duration => duration_text().boxed(),
        Kind::Multiplier => multiplier_text().boxed(),
        Kind::Jitter => jitter_text().boxed(),
        Kind::Seed => seed_text().boxed(),
        Kind::Preset => preset_text().boxed(),
        Kind::Codes => codes_text().boxed(),
        Kind::Regex | Kind::CapturingRegex => regex_text().boxed(),
    }
}

/// One piece of an argument vector, before `-n` and the command are added.
#[derive(Clone, Debug)]
struct Piece {
    tokens: Vec<OsString>,
    /// Holds `--timeout` (attempts may be stopped, so retries may happen).
    timeout: bool,
    /// Holds `--dry-run` (one row per retry).
    dry_run: bool,
    /// A word that is not an option: clap takes it as COMMAND.
    bare: bool,
}

impl Piece {
    fn of(tokens: Vec<OsString>) -> Piece {
        Piece {
            tokens,
            timeout: false,
            dry_run: false,
            bare: false,
        }
    }
}

/// A flag with a value, written as `--flag VALUE`, `--flag=VALUE` or `-fVALUE`.
fn valued_piece() -> impl Strategy<Value = Piece> {
    (0..VALUED.len(), 0u8..3)
        .prop_flat_map(|(i, form)| (Just(i), Just(form), value_of(VALUED[i].2)))
        .prop_map(|(i, form, value)| {
            let (long, short, _) = VALUED[i];
            let tokens: Vec<OsString> = match (form, short) {
                (1, _) => vec![format!("{long}={value}").into()],
                // An empty joined short value would take the next word as the value instead.
                (2, Some(s)) if !value.is_empty() => vec![format!("-{s}{value}").into()],
                _ => vec![long.into(), value.into()],
            };
            Piece {
                timeout: long == "--timeout",
                ..Piece::of(tokens)
            }
        })
}

fn switch_piece() -> impl Strategy<Value = Piece> {
    select(strings(&[
        "-q",
        "-v",
        "--quiet",
        "--verbose",
        "-qv",
        "--replay-stdin",
        "--stdout-on-success",
        "--dry-run",
        "--help",
        "-h",
        "-V",
        "--version",
    ]))
    .prop_map(|s| Piece {
        dry_run: s == "--dry-run",
        ..Piece::of(vec![s.into()])
    })
}

fn junk_piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        // Unknown or malformed options, and value flags left without their value.
        3 => select(strings(&[
            "--bogus", "-Z", "-", "---", "--=x", "--base", "--retry-on", "-b", "-t", "--generate",
            "--generate=man", "--generate=nope", "--quiet=yes", "-q5", "--", "--help=1",
        ]))
        // `-` is a word, and after `--` every word is the command's.
        .prop_map(|s| Piece { bare: s == "-" || s == "--", ..Piece::of(vec![s.into()]) }),
        // A word: clap takes it (and everything after it) as the command; never found.
        2 => "[a-z][a-z0-9._:+=]{0,8}".prop_map(|s| Piece { bare: true, ..Piece::of(vec![s.into()]) }),
        // Not UTF-8.
        1 => select(vec![
            (vec![b'-', b'-', 0xff], false),
            (vec![b'-', b'b', 0xc3, 0x28], false),
            (vec![0xff, b'a'], true),
        ])
        .prop_map(|(bytes, bare)| Piece { bare, ..Piece::of(vec![OsString::from_vec(bytes)]) }),
    ]
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![8 => valued_piece(), 3 => switch_piece(), 1 => junk_piece()]
}

/// The names of the `RETRY_<FLAG>` variables and a few neighbours.
const VARIABLES: [(&str, Option<Kind>); 17] = [
    ("RETRY_BASE", Some(Kind::Duration)),
    ("RETRY_CAP", Some(Kind::Duration)),
    ("RETRY_DEADLINE", Some(Kind::Duration)),
    ("RETRY_TIMEOUT", Some(Kind::Duration)),
    ("RETRY_KILL_AFTER", Some(Kind::Duration)),
    ("RETRY_MULTIPLIER", Some(Kind::Multiplier)),
    ("RETRY_JITTER", Some(Kind::Jitter)),
    ("RETRY_SEED", Some(Kind::Seed)),
    ("RETRY_PRESET", Some(Kind::Preset)),
    ("RETRY_RETRY_ON", Some(Kind::Codes)),
    ("RETRY_STOP_ON", Some(Kind::Codes)),
    ("RETRY_MAX_RETRIES", None),
    ("RETRY_ATTEMPT", None),
    ("RETRY_MAX_ATTEMPTS", None),
    ("RETRY_QUIET", None),
    ("RETRY_", None),
    ("LC_ALL", None),
];

fn variable() -> impl Strategy<Value = (String, OsString)> {
    (0..VARIABLES.len(), 0u8..8)
        .prop_flat_map(|(i, how)| {
            let (name, kind) = VARIABLES[i];
            let value = match (how, kind) {
                (0, _) => Just(String::new()).boxed(),
                (_, Some(kind)) => value_of(kind),
                (_, None) if name == "RETRY_MAX_RETRIES" => count_text(false),
                (_, None) => ".{0,8}".boxed(),
            };
            (Just(name), Just(how), value)
        })
        .prop_map(|(name, how, value)| {
            let value = if how == 1 {
                // Not UTF-8.
                let mut bytes = value.into_bytes();
                bytes.push(0xff);
                OsString::from_vec(bytes)
            } else {
                value.into()
            };
            (name.to_string(), value)
        })
}

/// A whole case: arguments and environment.
#[derive(Clone, Debug)]
struct Case {
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
    /// Some word other than the real command may be taken as COMMAND (127 then).
    may_miss: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(piece(), 0..6),
        prop::collection::vec(variable(), 0..4),
        any::<bool>(),
        count_text(false),
        count_text(true),
        any::<prop::sample::Index>(),
        0u8..3,
        0u8..8,
    )
        .prop_map(
            |(mut pieces, mut env, with_count, free, bounded, at, count_form, command_form)| {
                let risky = pieces.iter().any(|p| p.timeout || p.dry_run)
                    || env
                        .iter()
                        .any(|(k, v)| k == "RETRY_TIMEOUT" && !v.is_empty());
                if risky {
                    // The -n below may end up among the command's words: bound the variable too.
                    for (k, v) in &mut env {
                        if k == "RETRY_MAX_RETRIES" {
                            *v = bounded.clone().into();
                        }
                    }
                }
                if with_count || risky {
                    // With a timeout or --dry-run, a -n that is 0 or invalid: no long waits.
                    let count = if risky { bounded } else { free };
                    let tokens: Vec<OsString> = match count_form {
                        0 => vec!["-n".into(), count.into()],
                        1 => vec![format!("--max-retries={count}").into()],
                        _ if count.is_empty() => vec!["-n".into(), count.into()],
                        _ => vec![format!("-n{count}").into()],
                    };
                    let at = at.index(pieces.len() + 1);
                    pieces.insert(at, Piece::of(tokens));
                }
                let mut may_miss = pieces.iter().any(|p| p.bare);
                let mut args: Vec<OsString> = pieces.into_iter().flat_map(|p| p.tokens).collect();
                match command_form {
                    0 => may_miss = true,
                    1 | 2 => args.extend(COMMAND.map(OsString::from)),
                    _ => {
                        args.push("--".into());
                        args.extend(COMMAND.map(OsString::from));
                        if command_form == 7 {
                            args.extend(["SECRET-ARG", "--base", "-n"].map(OsString::from));
                        }
                    }
                }
                Case {
                    args,
                    env,
                    may_miss,
                }
            },
        )
}

// ---------------------------------------------------------------------------------------------
// Running and judging

/// Runs retry with `args` and `env` only (plus an empty PATH and a private TMPDIR), within
/// [`CASE_LIMIT`]; returns its output and how long it took.
fn run(args: &[OsString], env: &[(String, OsString)]) -> (Output, Duration) {
    let args: Vec<OsString> = args.iter().map(no_nul).collect();
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = retry();
    cmd.env_clear()
        .env("PATH", empty.path())
        .env("TMPDIR", empty.path())
        .current_dir(empty.path())
        .timeout(CASE_LIMIT)
        .args(args);
    for (k, v) in env {
        cmd.env(k, no_nul(v));
    }
    let started = Instant::now();
    let out = cmd.output().expect("retry could not be started");
    (out, started.elapsed())
}

/// `text` with every NUL (which no argument or variable can hold) replaced by `\x01`.
fn no_nul(text: impl AsRef<std::ffi::OsStr>) -> OsString {
    let bytes = text.as_ref().as_encoded_bytes();
    OsString::from_vec(bytes.iter().map(|&b| if b == 0 { 1 } else { b }).collect())
}

/// The verdict common to every case: no hang, no panic, no death by signal (but KILL: after KILL
/// at a timeout retry dies of KILL, as coreutils `timeout`; a shell's 137), a known status, and
/// for 125 exactly one line `retry: ...` on stderr and nothing on stdout.
fn judge(out: &Output, took: Duration, may_miss: bool) -> Result<u8, TestCaseError> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    prop_assert!(
        took < CASE_LIMIT,
        "hung: killed after {took:?}; stderr {stderr:?}"
    );
    prop_assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "panic: {stderr:?}"
    );
    let Some(code) = out
        .status
        .code()
        .or_else(|| (out.status.signal() == Some(libc::SIGKILL)).then_some(137))
    else {
        return Err(TestCaseError::fail(format!(
            "died of signal {:?}; stderr {stderr:?}",
            out.status.signal()
        )));
    };
    let code = u8::try_from(code).unwrap();
    match code {
        0 | 124 | 137 => {}
        125 => {
            prop_assert!(
                stderr.starts_with("retry: ") && stderr.ends_with('\n'),
                "125 without a `retry: ` line: {stderr:?}"
            );
            prop_assert_eq!(
                stderr.lines().count(),
                1,
                "125 with more than one line: {:?}",
                stderr
            );
            prop_assert!(stderr.len() < 2000, "a very long error line: {:?}", stderr);
            prop_assert!(out.stdout.is_empty(), "125 with stdout {:?}", out.stdout);
        }
        127 if may_miss => {}
        other => {
            return Err(TestCaseError::fail(format!(
                "unexpected status {other}; stderr {stderr:?}"
            )));
        }
    }
    Ok(code)
}

proptest! {
    #![proptest_config(config(256))]

    /// Random argument vectors and environments: 125 with one line, or a run that ends.
    #[test]
    fn random_arguments_and_environment_never_panic_or_hang(c in case()) {
        let (out, took) = run(&c.args, &c.env);
        judge(&out, took, c.may_miss)?;
        // The command's arguments appear in retry's messages only with --verbose.
        let verbose = c.args.iter().any(|a| a == "-v" || a == "--verbose" || a == "-qv");
        let stderr = String::from_utf8_lossy(&out.stderr);
        prop_assert!(verbose || !stderr.contains("SECRET-ARG"), "an argument leaked: {}", stderr);
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
                    && (stderr.contains("--cap") || stderr.contains(") must be finite"))),
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
