//! Reading a command line into [`Cli`]: the `RETRY_<FLAG>` variables and where each value came
//! from, the message naming the variable at fault, and `--simulate` turning `--jitter` into a
//! list of modes.

use std::ffi::{OsStr, OsString};

use clap::builder::ValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use retry_tool_simulate::Mode;

use super::{Cli, Origins, Parsed, SimulateArgs, Stop, one_line};

/// [`super::parse`], reading the environment only if `env`.
pub(super) fn parse_reading(args: &[OsString], env: bool) -> Result<Parsed, Stop> {
    if let Some(parsed) = plain(args, env) {
        return Ok(parsed);
    }
    let read_env = |_: &str| env;
    let kind = Kind::of(args);
    let parsed = parse_as(kind, args, &read_env);
    let Err(Stop::Usage(message)) = parsed else {
        return parsed;
    };
    if kind == Kind::Simulate {
        return Err(Stop::Usage(message));
    }
    // A run refused what a simulation accepts: `--jitter` or `RETRY_JITTER` lists modes.
    let simulation = match parse_as(Kind::Simulate, args, &read_env) {
        Ok(simulation) => simulation,
        // `--help` and `--version` read as the same text either way.
        Err(Stop::Display(e)) => return Err(Stop::Display(e)),
        Err(Stop::Usage(_)) => return Err(Stop::Usage(message)),
    };
    if simulation.cli.generate.is_some() {
        // Generating documentation needs no settings.
        return Ok(simulation);
    }
    let (cli, origins) = (&simulation.cli, &simulation.origins);
    let from_env = origins.is_env("jitter");
    if from_env && cli.backoff.preset.is_some() && !origins.is_env("preset") {
        // `--preset` on the command line outranks RETRY_JITTER, whose list plays no part.
        return parse_as(kind, args, &|id: &str| env && id != "jitter");
    }
    let names: Vec<&str> = cli
        .simulate
        .modes
        .iter()
        .flatten()
        .map(|m| m.name())
        .collect();
    let from = if from_env { " from RETRY_JITTER" } else { "" };
    Err(Stop::Usage(format!(
        "--jitter ({}{from}): a run takes one jitter mode; lists of modes and no-backoff are \
         for --simulate",
        names.join(",")
    )))
}

/// The plain command line `retry [--] COMMAND [ARGS]...` (no option, and, when `env`, no
/// `RETRY_*` variable set) read without clap, or `None` for any other. Building clap's
/// definition of the ~75 flags and parsing with it is about a third of the instructions
/// `retry -- true` runs (callgrind), paid by every call from a script. The result is the one
/// clap gives for the same line, with every other field at its default: the test
/// `plain_lines_read_as_clap_reads_them` compares the two.
fn plain(args: &[OsString], env: bool) -> Option<Parsed> {
    let words = args.get(1..)?;
    let command = match words.first()?.as_encoded_bytes() {
        b"--" => &words[1..],
        first if first.starts_with(b"-") => return None,
        _ => words,
    };
    if command.is_empty() {
        return None;
    }
    // Any RETRY_ variable (a flag's, or one retry sets for its attempts, as in a nested retry)
    // sends the line through clap, which reads and checks the flags' variables.
    if env && retry_variable_set() {
        return None;
    }
    let cli = Cli {
        not_found_hint: super::errors::not_found_hint(args, command, |_| false),
        command: command.to_vec(),
        ..Cli::default()
    };
    Some(Parsed {
        cli,
        origins: Origins::default(),
    })
}

/// Whether a `RETRY_*` variable is set to something other than the empty string. Read from
/// `environ` in place: `std::env::vars_os` copies every variable first, which cost as much as
/// the rest of the plain line's reading.
#[cfg(unix)]
fn retry_variable_set() -> bool {
    unsafe extern "C" {
        /// The process's environment (POSIX): a NULL-terminated array of "NAME=value" strings.
        /// `static mut`, as std declares it: `setenv` may change it.
        static mut environ: *const *const std::ffi::c_char;
    }
    // SAFETY: `environ` is a NULL-terminated array of pointers to NUL-terminated strings. It is
    // read, not changed; std's `set_var` and `remove_var` are `unsafe` with the contract that
    // no other thread reads the environment meanwhile, and retry calls neither.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let bytes = std::ffi::CStr::from_ptr(*entry).to_bytes();
            if let Some(rest) = bytes.strip_prefix(b"RETRY_")
                && let Some(eq) = rest.iter().position(|&b| b == b'=')
                && eq + 1 < rest.len()
            {
                return true;
            }
            entry = entry.add(1);
        }
    }
    false
}

/// [`retry_variable_set`] where there is no `environ` to read.
#[cfg(not(unix))]
fn retry_variable_set() -> bool {
    std::env::vars_os()
        .any(|(name, value)| name.as_encoded_bytes().starts_with(b"RETRY_") && !value.is_empty())
}

/// The definition [`super::documented`] returns.
pub(super) fn documented() -> clap::Command {
    Kind::Simulate.command()
}

/// What a command line asks for, told apart before any value is checked: `--simulate` makes
/// `--jitter` a list of modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Run a command (or `--dry-run`, `--generate`): `--jitter` is one [`super::JitterArg`].
    Run,
    /// `--simulate`: `--jitter` is a list of [`Mode`]s.
    Simulate,
}

impl Kind {
    /// `Simulate` if `args` give `--simulate`, judged by their shape alone (every value taken
    /// as it is, no environment); `Run` otherwise, and for any command line clap refuses.
    fn of(args: &[OsString]) -> Kind {
        // Only a word spelt `--simulate` or `--simulate=...` can give the flag (it has no
        // short form and long flags are not abbreviated): without one, skip building the probe.
        let spelt = |a: &OsString| a.as_encoded_bytes().starts_with(b"--simulate");
        if !args.iter().skip(1).any(spelt) {
            return Kind::Run;
        }
        let probe = Cli::command().mut_args(|arg| {
            let arg = arg.env(None::<&'static str>);
            if arg.get_action().takes_values() {
                arg.value_parser(ValueParser::os_string())
            } else {
                arg
            }
        });
        match probe.try_get_matches_from(args) {
            Ok(matches) if matches.contains_id("simulate") => Kind::Simulate,
            _ => Kind::Run,
        }
    }

    /// The clap command for this kind of command line.
    fn command(self) -> clap::Command {
        match self {
            Kind::Run => Cli::command(),
            // `mut_args` keeps the order of the arguments (and so of the help); `mut_arg`
            // would move `--jitter` last.
            Kind::Simulate => Cli::command().mut_args(|arg| {
                if arg.get_id() == "jitter" {
                    SimulateArgs::jitter_as_modes(arg)
                } else {
                    arg
                }
            }),
        }
    }
}

/// [`super::parse`] for one kind of command line, reading the variables of the arguments whose id
/// `read_env` accepts.
fn parse_as(
    kind: Kind,
    args: &[OsString],
    read_env: &dyn Fn(&str) -> bool,
) -> Result<Parsed, Stop> {
    let mut command = with_env(kind.command(), read_env);
    let full_error = match command.try_get_matches_from_mut(args) {
        Ok(matches) => return from_matches(matches, &command, kind, args),
        Err(e) if e.kind() == ErrorKind::DisplayHelp => {
            let command = with_env(kind.command(), read_env);
            return Err(Stop::Display(super::help::render(
                command,
                super::help::wants_long(args),
            )));
        }
        Err(e) if e.kind() == ErrorKind::DisplayVersion => return Err(Stop::Display(e.render())),
        Err(e) => e,
    };
    // Without the environment: if the command line alone is at fault, say so as clap does.
    let mut bare = with_env(kind.command(), |_| false);
    let matches = bare.try_get_matches_from_mut(args).map_err(|e| {
        let message =
            unknown_after_a_flag(&bare, args, &e).unwrap_or_else(|| super::errors::usage(&e));
        Stop::Usage(message)
    })?;
    let parsed = from_matches(matches, &bare, kind, args)?;
    if parsed.cli.generate.is_some() {
        // Generating documentation needs no settings: a bad variable must not stop it.
        return Ok(parsed);
    }
    Err(Stop::Usage(env_error(kind, args, read_env, &full_error)))
}

/// `Cli` from matches, with the origin of every value taken from the environment. With
/// `--simulate`, `--jitter` goes to [`SimulateArgs::modes`].
fn from_matches(
    mut matches: ArgMatches,
    command: &clap::Command,
    kind: Kind,
    args: &[OsString],
) -> Result<Parsed, Stop> {
    let mut origins = Origins::default();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) == Some(ValueSource::EnvVariable) {
            origins.set_env(id);
        }
    }
    origins.set_typed(command, &matches);
    let modes = match kind {
        Kind::Simulate => matches.remove_one::<Vec<Mode>>("jitter"),
        Kind::Run => None,
    };
    let mut cli = Cli::from_arg_matches_mut(&mut matches)
        .map_err(|e| Stop::Usage(super::errors::usage(&e)))?;
    cli.simulate.modes = modes;
    cli.not_found_hint =
        super::errors::not_found_hint(args, &cli.command, |flag| takes_value(command, flag));
    Ok(Parsed { cli, origins })
}

/// Whether `flag` as typed (`--cap`, `-c`, `-qc`: the last of a cluster) takes a value in
/// `command`.
fn takes_value(command: &clap::Command, flag: &str) -> bool {
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
fn unknown_after_a_flag(
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
    let (name, unknown) = (long.get_long()?, crate::report::escape(unknown));
    let value = long
        .get_value_names()
        .and_then(|v| v.first())
        .map_or(String::new(), |v| format!(" <{v}>"));
    Some(format!(
        "'--{name}{value}' needs a value, and '{unknown}' looks like a flag (a value starting \
         with '-' is written --{name}={unknown}) (try 'retry --help')"
    ))
}

/// The value of environment variable `name`, `None` when unset or empty.
fn env_value(name: &OsStr) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// `command` reading the environment only for the arguments `keep` accepts (by id), and never
/// from an empty variable. (The help shows `[env: NAME=value]` only for the ones it reads.)
pub(super) fn with_env(command: clap::Command, keep: impl Fn(&str) -> bool) -> clap::Command {
    let skip = |arg: &clap::Arg| {
        arg.get_env().is_some_and(|name| {
            !keep(arg.get_id().as_str()) || std::env::var_os(name).is_some_and(|v| v.is_empty())
        })
    };
    if !command.get_arguments().any(skip) {
        // The usual case: nothing to take away, and rebuilding every argument costs start-up.
        return command;
    }
    command.mut_args(|arg| {
        if skip(&arg) {
            arg.env(None::<&'static str>)
        } else {
            arg
        }
    })
}

/// The one-line message for a parse that failed only because of the environment: finds the
/// variable at fault by reading the variables one at a time.
fn env_error(
    kind: Kind,
    args: &[OsString],
    read_env: &dyn Fn(&str) -> bool,
    full_error: &clap::Error,
) -> String {
    for arg in Cli::command().get_arguments() {
        let (Some(name), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let id = arg.get_id().as_str();
        let Some(value) = env_value(name).filter(|_| read_env(id)) else {
            continue;
        };
        let probe = with_env(kind.command(), |other| other == id);
        if let Err(e) = probe.try_get_matches_from(args) {
            return format!(
                "invalid value '{}' for {} (--{long}): {}",
                crate::report::escape(&value.to_string_lossy()),
                name.to_string_lossy(),
                crate::report::escape(&reason(&e))
            );
        }
    }
    format!(
        "in the RETRY_* environment variables: {}",
        super::errors::usage(full_error)
    )
}

/// What was wrong with a value, from clap's error: the value parser's own message, or the
/// values it would have accepted.
fn reason(e: &clap::Error) -> String {
    if let Some(source) = std::error::Error::source(e) {
        return source.to_string();
    }
    if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue) {
        return format!("expected one of {}", valid.join(", "));
    }
    one_line(&e.render().to_string())
}

#[cfg(test)]
mod tests {
    use super::super::{JitterArg, parse_hermetic};
    use super::*;

    #[test]
    fn simulate_makes_jitter_a_list_of_modes() {
        let parsed = |args: &[&str]| {
            let args: Vec<OsString> = std::iter::once("retry")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect();
            let kind = Kind::of(&args);
            (kind, parse_as(kind, &args, &|_| false))
        };
        let (kind, run) = parsed(&["-j", "equal", "true"]);
        assert_eq!(kind, Kind::Run);
        assert_eq!(run.unwrap().cli.backoff.jitter, Some(JitterArg::Equal));
        let (kind, sim) = parsed(&["-j", "no-backoff,full", "--simulate", "3"]);
        assert_eq!(kind, Kind::Simulate);
        let cli = sim.unwrap().cli;
        assert_eq!(cli.simulate.modes, Some(vec![Mode::NoBackoff, Mode::Full]));
        assert_eq!(cli.backoff.jitter, None);
        // Shape alone decides: a bad value elsewhere does not hide --simulate.
        assert_eq!(parsed(&["--simulate", "0", "-j", "x"]).0, Kind::Simulate);
        assert_eq!(parsed(&["--", "true", "--simulate", "3"]).0, Kind::Run);
        assert_eq!(parsed(&["--bogus", "--simulate", "3"]).0, Kind::Run);
        // One parser of mode lists: exact names only.
        for bad in [" full", "full ", "FULL", "full,", "full,none,full"] {
            assert!(
                parsed(&["-j", bad, "--simulate", "3"]).1.is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn plain_lines_read_as_clap_reads_them() {
        let lines: &[&[&str]] = &[
            &["true"],
            &["--", "true"],
            &["curl", "-fsS", "https://example.com/"],
            &["--", "-weird-name", "-n", "3"],
            &["sh", "-c", "exit 1", "--", "--help"],
            &["cmd", "--version"],
            &["--", "--", "x"],
            &[""],
            &["printf", "%s\\n", " spaced "],
        ];
        for line in lines {
            let args: Vec<OsString> = std::iter::once("retry")
                .chain(line.iter().copied())
                .map(OsString::from)
                .collect();
            let fast = plain(&args, false).unwrap_or_else(|| panic!("{line:?} is plain"));
            let clap = parse_as(Kind::Run, &args, &|_| false).unwrap();
            assert_eq!(
                format!("{:?}", fast.cli),
                format!("{:?}", clap.cli),
                "{line:?}"
            );
            assert_eq!(format!("{:?}", fast.origins), format!("{:?}", clap.origins));
        }
        // Anything else goes through clap.
        for line in [
            &["-n", "3", "true"][..],
            &["--help"],
            &["-"],
            &["--"],
            &[],
            &["--dry-run"],
        ] {
            let args: Vec<OsString> = std::iter::once("retry")
                .chain(line.iter().copied())
                .map(OsString::from)
                .collect();
            assert!(plain(&args, false).is_none(), "{line:?}");
        }
        assert!(plain(&[], false).is_none());
    }

    #[test]
    fn an_unknown_flag_after_a_flag_taking_a_value_says_the_value_is_missing() {
        let refusal = |args: &[&str]| match parse_hermetic(args) {
            Err(Stop::Usage(message)) => message,
            other => panic!("{args:?}: {other:?}"),
        };
        assert_eq!(
            refusal(&["--budget", "-x", "true"]),
            "'--budget <KEY>' needs a value, and '-x' looks like a flag (a value starting with \
             '-' is written --budget=-x) (try 'retry --help')"
        );
        assert!(refusal(&["--on-retry", "-zz", "true"]).contains("written --on-retry=-zz"));
        // An unknown flag after a flag's value, or after `--budget=k`, is only unknown.
        for args in [
            &["-n", "3", "-x", "true"][..],
            &["--budget=k", "-x", "true"],
            &["-q", "-x", "true"],
        ] {
            assert!(
                refusal(args).starts_with("unexpected argument '-x'"),
                "{args:?}"
            );
        }
    }

    #[test]
    fn retry_variables_are_seen_in_the_environment() {
        // The test binary runs with whatever the caller set, so compare with std's view.
        let by_std = std::env::vars_os().any(|(name, value)| {
            name.as_encoded_bytes().starts_with(b"RETRY_") && !value.is_empty()
        });
        assert_eq!(retry_variable_set(), by_std);
    }

    #[test]
    fn a_run_given_a_list_says_lists_are_for_simulate() {
        let refusal = |args: &[&str]| match parse_hermetic(args) {
            Err(Stop::Usage(message)) => message,
            other => panic!("{args:?}: {other:?}"),
        };
        assert_eq!(
            refusal(&["-j", "none,full", "true"]),
            "--jitter (none,full): a run takes one jitter mode; lists of modes and no-backoff \
             are for --simulate"
        );
        assert!(refusal(&["-j", "no-backoff", "--dry-run"]).starts_with("--jitter (no-backoff)"));
        // Documentation and help need no settings.
        assert!(parse_hermetic(&["-j", "none,full", "--generate", "man"]).is_ok());
        assert!(matches!(
            parse_hermetic(&["-j", "none,full", "--help"]),
            Err(Stop::Display(_))
        ));
        let e = refusal(&["-j", "fulll", "true"]);
        assert!(
            e.starts_with("invalid value 'fulll' for '--jitter <MODE>'"),
            "{e}"
        );
    }
}
