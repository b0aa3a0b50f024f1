//! Reading a command line into [`Cli`], in one parse: the plain line without clap, where each
//! value came from (a `RETRY_<FLAG>` variable or the line; [`super::env`] names the variable
//! at fault), and `--simulate` turning `--jitter` into a list of modes, which a run refuses in
//! its own words.

use std::ffi::OsString;

use clap::builder::ValueParser;
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::definition::Cli;
use super::env::{env_error, with_env};
use super::flags::Flag;
use super::parsed::{Origins, Parsed, Stop};
use super::simulate::RunJitter;
use super::simulate::SimulateArgs;

/// [`super::parse`], reading the environment only if `env`.
pub(super) fn parse_reading(args: &[OsString], env: bool) -> Result<Parsed, Stop> {
    if let Some(parsed) = plain(args, env) {
        return Ok(parsed);
    }
    let read_env = |_: &str| env;
    let parsed = parse_as(Kind::Run, args, &read_env);
    // A refused simulation: read as one, for its words on a `--jitter` neither reading takes
    // (a mode listed twice, an unknown one among several).
    if matches!(parsed, Err(Stop::Usage(_))) && Kind::of(args) == Kind::Simulate {
        return parse_as(Kind::Simulate, args, &read_env);
    }
    parsed
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

/// Whether a `RETRY_*` variable is set to something other than the empty string. Through
/// `std::env::vars_os`, which copies the variables first: a scan of `environ` in place, with
/// `unsafe`, was no faster (`benches/startup.sh`, 1000 paired rounds on a loaded 2-core
/// machine: this build over that one, 1.005 and 0.993 with 2 variables, 0.970 and 0.981 with
/// `ENV_VARS=150`; peak RSS the same within 1%).
fn retry_variable_set() -> bool {
    std::env::vars_os()
        .any(|(name, value)| name.as_encoded_bytes().starts_with(b"RETRY_") && !value.is_empty())
}

/// The definition [`super::documented`] returns.
pub(super) fn documented() -> clap::Command {
    Kind::Simulate.command()
}

/// How `--jitter` is read: every line is first read as [`Kind::Run`], which takes a
/// simulation's lists too; a refused line that gives `--simulate` is read again as
/// [`Kind::Simulate`], for the simulation's words on the refused value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `--jitter` is one [`super::JitterArg`], or a simulation's list
    /// ([`SimulateArgs::jitter_for_a_run`]).
    Run,
    /// `--jitter` is a list of modes ([`SimulateArgs::jitter_as_modes`]).
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
            Ok(matches) if matches.contains_id(Flag::Simulate.id()) => Kind::Simulate,
            _ => Kind::Run,
        }
    }

    /// The clap command for this kind of command line.
    fn command(self) -> clap::Command {
        match self {
            // `mut_args` keeps the order of the arguments (and so of the help); `mut_arg`
            // would move `--jitter` last.
            Kind::Run => Cli::command().mut_args(|arg| {
                if arg.get_id() == Flag::Jitter.id() {
                    SimulateArgs::jitter_for_a_run(arg)
                } else {
                    arg
                }
            }),
            Kind::Simulate => Cli::command().mut_args(|arg| {
                if arg.get_id() == Flag::Jitter.id() {
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
        let message = super::errors::unknown_after_a_flag(&bare, args, &e)
            .unwrap_or_else(|| super::errors::usage(&e));
        Stop::Usage(message)
    })?;
    let parsed = from_matches(matches, &bare, kind, args)?;
    if parsed.cli.generate.is_some() {
        // Generating documentation needs no settings: a bad variable must not stop it.
        return Ok(parsed);
    }
    Err(Stop::Usage(env_error(
        &kind.command(),
        args,
        read_env,
        &full_error,
    )))
}

/// `Cli` from matches, with the origin of every value taken from the environment. With
/// `--simulate`, `--jitter` goes to [`SimulateArgs::modes`] (read as either kind); a run
/// refuses a value only a simulation takes ([`RunJitter::ForSimulate`]), unless it generates
/// documentation (which needs no settings) or the value came from `RETRY_JITTER` and a
/// `--preset` on the command line outranks it (the variable then plays no part).
fn from_matches(
    mut matches: ArgMatches,
    command: &clap::Command,
    kind: Kind,
    args: &[OsString],
) -> Result<Parsed, Stop> {
    let mut origins = Origins::default();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) == Some(ValueSource::EnvVariable)
            && let Some(flag) = Flag::from_id(id)
        {
            origins.set_env(flag);
        }
    }
    origins.set_typed(command, &matches);
    let simulating = matches.contains_id(Flag::Simulate.id());
    let (modes, run_jitter) = match kind {
        Kind::Simulate => (SimulateArgs::take_modes(&mut matches), None),
        Kind::Run => (None, SimulateArgs::take_run_jitter(&mut matches)),
    };
    let mut cli = Cli::from_arg_matches_mut(&mut matches)
        .map_err(|e| Stop::Usage(super::errors::usage(&e)))?;
    cli.simulate.modes = modes;
    match run_jitter {
        Some(jitter) if simulating => cli.simulate.modes = Some(jitter.modes()),
        Some(RunJitter::One(one)) => cli.backoff.jitter = Some(one),
        Some(list @ RunJitter::ForSimulate(_)) if cli.generate.is_none() => {
            let names = list.names();
            let from_env = origins.is_env(Flag::Jitter);
            if !(from_env && cli.backoff.preset.is_some() && !origins.is_env(Flag::Preset)) {
                let from = match Flag::Jitter.env() {
                    Some(env) if from_env => format!(" from {env}"),
                    _ => String::new(),
                };
                return Err(Stop::Usage(format!(
                    "{} ({names}{from}): a run takes one jitter mode; lists of modes and \
                     no-backoff are for {}",
                    Flag::Jitter,
                    Flag::Simulate
                )));
            }
            // `--preset` on the command line outranks RETRY_JITTER, whose list plays no part.
            origins.forget(Flag::Jitter);
        }
        Some(RunJitter::ForSimulate(_)) | None => {}
    }
    cli.not_found_hint = super::errors::not_found_hint(args, &cli.command, |flag| {
        super::errors::takes_value(command, flag)
    });
    Ok(Parsed { cli, origins })
}

#[cfg(test)]
mod tests {
    use retry_tool_backoff::Jitter;
    use retry_tool_simulate::Mode;

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
        assert_eq!(
            run.unwrap().cli.backoff.jitter,
            Some(JitterArg(Jitter::Equal))
        );
        let (kind, sim) = parsed(&["-j", "no-backoff,full", "--simulate", "3"]);
        assert_eq!(kind, Kind::Simulate);
        let cli = sim.unwrap().cli;
        assert_eq!(
            cli.simulate.modes,
            Some(vec![Mode::NoBackoff, Mode::Backoff(Jitter::Full)])
        );
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
