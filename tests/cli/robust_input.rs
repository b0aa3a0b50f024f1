//! Robustness: input validation. Hostile input: random argument vectors and environments
//! built from hostile DURATION and CODES strings (negative, huge, NaN-like, unit typos,
//! overflow, non-UTF-8) and random `RETRY_<FLAG>` values. retry never panics, never hangs, and
//! either exits 125 with one line `retry: ...` or runs. Here: the argument vectors and the
//! running and judging of a case; the values, flag by flag against the parser, are in
//! `robust_input_values.rs`.
//!
//! Every run has a cleared environment with `PATH` set to an empty directory, so a random word
//! that ends up as COMMAND is never found (127) and nothing random is ever executed; the real
//! command is `/bin/sh -c 'exit 0'`, which succeeds at once. Retrying can then only start after
//! a `--timeout` stopped an attempt: whenever a case holds a timeout (or `--dry-run`, which
//! prints one row per retry), its `-n` is `0` or invalid, so no case can legitimately wait long.
//!
//! Case counts: `PROPTEST_CASES` overrides the defaults below.
//!
//! Not here: values from a server's output (`robust_servers.rs`) or a budget store
//! (`robust_stores.rs`); the exact words of each refusal (`cli_errors.rs`), and variables and
//! presets as they should work (`ecosystem.rs`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::ExitStatusExt;
use std::process::Output;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;

use crate::helpers::retry;
use crate::robust_input_values::{
    codes_text, count_text, duration_text, jitter_text, multiplier_text, preset_text, regex_text,
    seed_text,
};

/// A single run must end within this; a case that takes longer is a hang.
const CASE_LIMIT: Duration = Duration::from_secs(30);

/// The command every case runs (when its argument vector lets it): succeeds at once.
pub(crate) const COMMAND: [&str; 3] = ["/bin/sh", "-c", "exit 0"];

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub(crate) fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        // Regressions would be written next to this file; a failure prints its input anyway.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

pub(crate) fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
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
pub(crate) fn run(args: &[OsString], env: &[(String, OsString)]) -> (Output, Duration) {
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
pub(crate) fn judge(out: &Output, took: Duration, may_miss: bool) -> Result<u8, TestCaseError> {
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
