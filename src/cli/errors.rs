//! clap's errors as retry's one-line messages, keeping what helps: clap's suggestion for a
//! misspelt flag or value (`did you mean '--jitter'?`), its tips, the usage line when COMMAND
//! is missing, and a pointer to `--help`; and the hint for a command that is not found because
//! it is a misplaced value (`retry --cap 5 minutes -- ...`, `retry 3 curl ...`).

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::escape::escape;

/// The usage line, as `retry -h` shows it.
pub const USAGE: &str = "retry [OPTIONS] [--] COMMAND [ARGS]...";

/// Where a usage error sends the reader.
const MORE: &str = "try 'retry --help'";

/// `e` as one line (without the `retry: ` prefix): clap's message, then its suggestions and
/// tips, then [`MORE`]; for a missing COMMAND, the usage line.
pub fn usage(e: &clap::Error) -> String {
    let mut parts = Vec::new();
    let missing_command = e.kind() == ErrorKind::MissingRequiredArgument
        && matches!(e.get(ContextKind::InvalidArg),
            Some(ContextValue::Strings(args)) if args.iter().any(|a| a.contains("COMMAND")));
    if missing_command {
        parts.push(format!("no command to run; usage: {USAGE}"));
    } else if let Some(message) = missing_value(e) {
        parts.push(message);
    } else if let Some(message) = invalid_value(e) {
        parts.push(message);
    } else {
        parts.push(escape(&one_line(&e.render().to_string())));
    }
    for kind in [ContextKind::SuggestedArg, ContextKind::SuggestedValue] {
        match e.get(kind) {
            Some(ContextValue::String(s)) => parts.push(format!("did you mean '{s}'?")),
            Some(ContextValue::Strings(s)) if !s.is_empty() => {
                let quoted: Vec<String> = s.iter().map(|s| format!("'{s}'")).collect();
                parts.push(format!("did you mean {}?", quoted.join(" or ")));
            }
            _ => {}
        }
    }
    // clap's other tips, unless it found a similar name: "to pass '--jiter' as a value, use
    // '-- --jiter'" beside "did you mean '--jitter'?" only muddles it.
    if parts.len() == 1
        && let Some(ContextValue::StyledStrs(tips)) = e.get(ContextKind::Suggested)
    {
        parts.extend(tips.iter().map(|t| format!("tip: {t}")));
    }
    format!("{} ({MORE})", parts.join("; "))
}

/// clap's "invalid value 'V' for 'FLAG': WHY" for a value its parser refused, written here
/// with the value's control characters escaped: clap's rendered text drops an escape sequence
/// whole (`1\e[2J` read as `1`), so it would show another value than the one given.
fn invalid_value(e: &clap::Error) -> Option<String> {
    if e.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let (flag, value) = flag_and_value(e)?;
    let why = std::error::Error::source(e)?.to_string();
    Some(format!(
        "invalid value '{}' for '{flag}': {}",
        escape(value),
        escape(&why)
    ))
}

/// The flag (as clap names it, `--base <DURATION>`) and the value of a value error.
fn flag_and_value(e: &clap::Error) -> Option<(&str, &str)> {
    match (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) {
        (Some(ContextValue::String(flag)), Some(ContextValue::String(value))) => {
            Some((flag.as_str(), value.as_str()))
        }
        _ => None,
    }
}

/// The message for a flag that takes a value given none: nothing after it, `--` (which then
/// ends retry's options, so the flag has nothing), or a word that looks like another flag
/// (`-b -x`, `-t --verbose`), which a flag taking negative numbers would otherwise read as its
/// value and refuse as a bad DURATION. `None` for any other error, a negative number (`-5`,
/// `-inf`: a value, refused as one) included.
fn missing_value(e: &clap::Error) -> Option<String> {
    if !matches!(
        e.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return None;
    }
    let (flag, value) = flag_and_value(e)?;
    let got = match value {
        // clap's own "a value is required ... but none was supplied"; an empty `--base=` is a
        // value, refused by the flag's parser (ValueValidation).
        "" if e.kind() == ErrorKind::InvalidValue => "none was given".to_string(),
        "--" => "'--' ends retry's options".to_string(),
        v if looks_like_a_flag(v) => {
            let (long, v) = (flag.split(' ').next().unwrap_or(flag), escape(v));
            format!("'{v}' looks like a flag (a value starting with '-' is written {long}={v})")
        }
        _ => return None,
    };
    let mut message = format!("'{flag}' needs a value, and {got}");
    if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue)
        && !valid.is_empty()
    {
        message.push_str(&format!("; one of {}", valid.join(", ")));
    }
    Some(message)
}

/// Whether `value` reads as a flag rather than as a value: `-` then a letter (`-x`, `-qv`) or
/// `--` then anything, but not a negative number nor `-inf`/`-infinity` (a DURATION's parser
/// names those).
fn looks_like_a_flag(value: &str) -> bool {
    let Some(rest) = value.strip_prefix('-') else {
        return false;
    };
    if rest.starts_with('-') {
        return rest.len() > 1;
    }
    rest.starts_with(|c: char| c.is_ascii_alphabetic())
        && !rest.to_ascii_lowercase().starts_with("inf")
}

/// Why COMMAND (`command[0]`, not found) may not be a command at all, given the words before it
/// in `args` (program name first) and `takes_value`, which says whether a flag (`--cap`, `-c`)
/// takes a value: a bare number (shell `retry` functions and scripts often take the number of
/// tries first, `retry 3 curl ...`; Debian's `retry` takes it as the command), or a word
/// right after a flag's value (a value with a space, unquoted).
pub fn not_found_hint(
    args: &[OsString],
    command: &[OsString],
    takes_value: impl Fn(&str) -> bool,
) -> Option<String> {
    let program = command.first()?.to_str()?;
    if !program.is_empty() && program.bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!(
            "'{program}' is not a command; the number of retries is -n {program}"
        ));
    }
    // The words before the command: ..., FLAG, VALUE, COMMAND (no `--` between).
    let start = args.len().checked_sub(command.len())?;
    let before = args.get(1..start)?;
    let [.., flag, value] = before else {
        return None;
    };
    let (flag, value) = (flag.to_str()?, value.to_str()?);
    if value == "--" || !flag.starts_with('-') || flag.contains('=') || !takes_value(flag) {
        return None;
    }
    Some(format!(
        "'{program}' is not a command; quote a value with spaces: {flag} '{value} {program}'"
    ))
}

/// Whether `flag` as typed (`--cap`, `-c`, `-qc`: the last of a cluster) takes a value in
/// `command`.
pub fn takes_value(command: &clap::Command, flag: &str) -> bool {
    let found = if let Some(long) = flag.strip_prefix("--") {
        command.get_arguments().find(|a| a.get_long() == Some(long))
    } else {
        let short = flag.strip_prefix('-').and_then(|s| s.chars().last());
        command
            .get_arguments()
            .find(|a| short.is_some() && a.get_short() == short)
    };
    found.is_some_and(|a| a.get_action().takes_values())
}

/// The message for an unknown flag right after a flag that takes a value and does not take
/// one starting with `-` (`--budget -x`): clap's "unexpected argument '-x'" with its tip "use
/// '-- -x'" would make `-x` the command; the flag was more likely given no value. `None` for
/// any other error, and for an unknown flag elsewhere.
pub fn unknown_after_a_flag(
    command: &clap::Command,
    args: &[OsString],
    e: &clap::Error,
) -> Option<String> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(unknown)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .take_while(|a| a.as_encoded_bytes() != b"--")
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    // clap names the first unknown letter of a cluster (`-z` of `-zz`).
    let in_cluster = |w: &str| {
        unknown.len() == 2
            && !w.starts_with("--")
            && w.starts_with('-')
            && w.contains(&unknown[1..])
    };
    let at = words.iter().position(|w| w == unknown || in_cluster(w))?;
    let (flag, unknown) = (*words.get(at.checked_sub(1)?)?, words[at]);
    if !flag.starts_with('-') || flag.contains('=') || !takes_value(command, flag) {
        return None;
    }
    let long = flag
        .strip_prefix("--")
        .and_then(|l| command.get_arguments().find(|a| a.get_long() == Some(l)))
        .or_else(|| {
            let short = flag.strip_prefix('-')?.chars().last()?;
            command
                .get_arguments()
                .find(|a| a.get_short() == Some(short))
        })?;
    let (name, unknown) = (long.get_long()?, escape(unknown));
    let value = long
        .get_value_names()
        .and_then(|v| v.first())
        .map_or(String::new(), |v| format!(" <{v}>"));
    Some(format!(
        "'--{name}{value}' needs a value, and '{unknown}' looks like a flag (a value starting \
         with '-' is written --{name}={unknown}) (try 'retry --help')"
    ))
}

/// clap's multi-line error as one line: the message, without the usage and help hints.
pub fn one_line(rendered: &str) -> String {
    let message = rendered
        .split("\n\nUsage:")
        .next()
        .unwrap_or(rendered)
        .split("\n\nFor more information")
        .next()
        .unwrap_or(rendered);
    let message = message.strip_prefix("error: ").unwrap_or(message);
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn err(args: &[&str]) -> String {
        let e = super::super::Cli::command()
            .try_get_matches_from(std::iter::once("retry").chain(args.iter().copied()))
            .unwrap_err();
        usage(&e)
    }

    #[test]
    fn suggestions_and_the_help_pointer_are_kept() {
        let e = err(&["--jiter", "full", "--", "true"]);
        assert!(e.starts_with("unexpected argument '--jiter' found"), "{e}");
        assert!(e.contains("did you mean '--jitter'?"), "{e}");
        assert!(e.ends_with("(try 'retry --help')"), "{e}");
        assert!(!e.contains("as a value"), "{e}");
        let e = err(&["-j", "fulll", "true"]);
        assert!(e.contains("did you mean 'full'?"), "{e}");
        let e = err(&[]);
        assert_eq!(
            e,
            "no command to run; usage: retry [OPTIONS] [--] COMMAND [ARGS]... (try 'retry --help')"
        );
    }

    #[test]
    fn a_flag_without_its_value_says_it_needs_one() {
        assert_eq!(
            err(&["-b", "--", "true"]),
            "'--base <DURATION>' needs a value, and '--' ends retry's options (try 'retry --help')"
        );
        assert_eq!(
            err(&["--lock"]),
            "'--lock <PATH>' needs a value, and none was given (try 'retry --help')"
        );
        assert!(err(&["--preset"]).contains("none was given; one of gcp, aws, grpc, api-core"));
        assert!(err(&["-t", "-v", "true"]).contains("written --timeout=-v"));
        // Control characters in a value never reach the terminal raw.
        let e = err(&["-b", "-x\u{1b}[2J", "true"]);
        assert!(e.contains("'-x\\u{1b}[2J'") && !e.contains('\u{1b}'), "{e}");
        let e = err(&["-b", "1\u{1b}[2J", "true"]);
        assert!(!e.contains('\u{1b}'), "{e}");
        for value in ["-5", "-inf", "-Infinity", "-", "abc", ""] {
            let e = err(&["-b", value, "true"]);
            assert!(!e.contains("needs a value"), "{value:?}: {e}");
        }
    }

    #[test]
    fn hints_for_a_command_that_is_a_misplaced_value() {
        let os = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        let takes = |f: &str| ["--cap", "-c", "-n"].contains(&f);
        let args = os(&["retry", "--cap", "5", "minutes", "--", "x"]);
        assert_eq!(
            not_found_hint(&args, &args[3..], takes).unwrap(),
            "'minutes' is not a command; quote a value with spaces: --cap '5 minutes'"
        );
        let args = os(&["retry", "3", "curl", "-fsS"]);
        assert_eq!(
            not_found_hint(&args, &args[1..], takes).unwrap(),
            "'3' is not a command; the number of retries is -n 3"
        );
        let args = os(&["retry", "-q", "--", "nosuch"]);
        assert_eq!(not_found_hint(&args, &args[3..], takes), None);
        let args = os(&["retry", "--cap=5", "nosuch"]);
        assert_eq!(not_found_hint(&args, &args[2..], takes), None);
    }
}
