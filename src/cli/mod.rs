//! The clap definition: parsing and help text only. [`crate::config`] validates what it parses.
//!
//! Flags are grouped by help heading, one flattened struct per heading, each in its own file
//! ([`BackoffArgs`], [`StoppingArgs`], [`LoopArgs`], [`ConditionArgs`], [`OutputArgs`],
//! [`HookArgs`], [`ProtectArgs`], [`LockArgs`], [`TelemetryArgs`] and [`SimulateArgs`]): a new
//! flag goes into the struct of its heading.
//! Each doc comment is a short line (`-h`), a blank line, then the long help (`--help` and the
//! man page). A flag that may also be set from the environment carries `env = "RETRY_<FLAG>"`; [`parse`]
//! then keeps track of which values came from there, because a `--preset` given on the command
//! line outranks them (see [`crate::config`]). [`generate`] writes the man page and the
//! completions from this definition.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

mod backoff;
mod conditions;
mod errors;
pub mod generate;
pub mod help;
mod hooks;
mod lock;
mod loops;
mod man;
mod output;
mod protect;
mod read;
mod simulate;
mod stopping;
mod telemetry;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use clap::{CommandFactory, Parser, ValueEnum, ValueHint};

pub use self::backoff::{BackoffArgs, DelayList, JitterArg, MAX_DELAYS};
pub use self::conditions::ConditionArgs;
use self::generate::target::Target;
pub use self::hooks::HookArgs;
pub use self::lock::LockArgs;
pub use self::loops::LoopArgs;
pub use self::output::{ByteLimit, OutputArgs};
pub use self::protect::ProtectArgs;
pub use self::simulate::{ModelName, SimulateArgs};
pub use self::stopping::StoppingArgs;
pub use self::telemetry::TelemetryArgs;
use crate::types::LogFormat;

/// Run a command again, with exponential backoff and jitter, until it succeeds.
///
/// retry runs COMMAND; when it fails, waits a backoff delay and runs it again, until it
/// succeeds, the retries are used up, or the deadline passes. It exits with the last attempt's
/// status (dying of the same signal if the attempt did), or 125 for its own errors.
///
/// Every backoff and stopping setting may also come from a RETRY_<FLAG> environment variable
/// (RETRY_BASE, RETRY_MAX_RETRIES, ...) or from a --preset. Precedence, highest first: a flag
/// on the command line, --preset on the command line, a RETRY_<FLAG> variable, RETRY_PRESET,
/// the built-in default. An empty variable counts as unset.
#[derive(Debug, Default, Parser)]
#[command(name = "retry", version, about, long_about, max_term_width = 100)]
#[command(override_usage = "retry [OPTIONS] [--] COMMAND [ARGS]...")]
pub struct Cli {
    // Declared before the flattened groups: a flattened group's help heading would otherwise
    // carry over to the arguments after it.
    /// Print the man page or a shell's completion script, and exit
    ///
    /// Generated from these very definitions: man, bash, zsh, fish, elvish, powershell.
    /// `retry --generate man | man -l -` reads this retry's manual however it was installed
    /// (`cargo install` copies no man page, and `man retry` may open another program's, such
    /// as Debian's retry package); packagers install the output, as the copies committed
    /// under man/ and completions/, which the tests check against it.
    #[arg(long, value_name = "WHAT", value_enum)]
    pub generate: Option<Target>,

    /// The command to run, and its arguments
    ///
    /// Executed directly, never through a shell: write `sh -c '...'` for pipes and
    /// redirections. Everything after the first non-option word (or after `--`) belongs to
    /// the command, so `retry -n 3 curl -n ...` passes `-n` to curl.
    #[arg(value_name = "COMMAND",
          required_unless_present_any = ["dry_run", "generate", "simulate"],
          trailing_var_arg = true, num_args = 1.., value_hint = ValueHint::CommandWithArguments)]
    pub command: Vec<OsString>,

    /// How long to wait between attempts.
    #[command(flatten)]
    pub backoff: BackoffArgs,

    /// When to give up, and how to stop an attempt.
    #[command(flatten)]
    pub stopping: StoppingArgs,

    /// Loops other than "until it succeeds": streaks of successes, until it fails.
    #[command(flatten)]
    pub loops: LoopArgs,

    /// Which attempts count as failed, and which failures are retried.
    #[command(flatten)]
    pub conditions: ConditionArgs,

    /// What retry prints, and what the attempts see of stdin and stdout.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Commands run before each retry and on giving up.
    #[command(flatten)]
    pub hooks: HookArgs,

    /// Splay, and the retry budget and circuit breaker shared between runs.
    #[command(flatten)]
    pub protect: ProtectArgs,

    /// One run at a time: the lock held for the whole run.
    #[command(flatten)]
    pub lock: LockArgs,

    /// What a run leaves behind: a Prometheus textfile, the trace context.
    #[command(flatten)]
    pub telemetry: TelemetryArgs,

    /// The contention simulation, run instead of a command.
    #[command(flatten)]
    pub simulate: SimulateArgs,

    /// Why COMMAND may not be a command at all, for the message when it is not found: a bare
    /// number, or a word right after a flag's value (not a flag: worked out by the parser).
    #[arg(skip)]
    pub not_found_hint: Option<String>,
}

/// The name of a value of a `ValueEnum` flag (`--jitter`, `--preset`, `--generate`, `--model`)
/// on the command line, as clap derives it.
pub fn value_name<T: ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// Which parsed values came from a `RETRY_<FLAG>` environment variable rather than the
/// command line, by clap argument id (the field name: `base`, `max_retries`, ...).
#[derive(Clone, Debug, Default)]
pub struct Origins {
    from_env: BTreeSet<String>,
    /// Each value as typed (on the command line or in its variable), by argument id.
    typed: BTreeMap<String, String>,
}

impl Origins {
    /// Whether the value of argument `id` came from its environment variable.
    pub fn is_env(&self, id: &str) -> bool {
        self.from_env.contains(id)
    }

    /// Marks argument `id` as set from its environment variable.
    pub fn set_env(&mut self, id: &str) {
        self.from_env.insert(id.to_string());
    }

    /// The value of argument `id` as it was typed, control characters escaped (a message is one
    /// line), for a message that refuses it: `10000y`, not what retry made of it.
    pub fn typed(&self, id: &str) -> Option<String> {
        self.typed.get(id).map(|text| crate::report::escape(text))
    }

    /// Keeps the value of every flag of `command` that takes one and was given (on the command
    /// line or in its variable, not by default), as `matches` holds it before parsing (the
    /// last one given), for [`Origins::typed`].
    pub fn set_typed(&mut self, command: &clap::Command, matches: &clap::ArgMatches) {
        use clap::parser::ValueSource;
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            let given = matches!(
                matches.value_source(id),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            );
            if given
                && !arg.is_positional()
                && arg.get_action().takes_values()
                && let Ok(Some(mut raw)) = matches.try_get_raw(id)
                && let Some(last) = raw.next_back()
            {
                self.typed
                    .insert(id.to_string(), last.to_string_lossy().into_owned());
            }
        }
    }
}

/// The command line as parsed: the flags, and where their values came from.
#[derive(Debug)]
pub struct Parsed {
    /// The flags and arguments.
    pub cli: Cli,
    /// Which values came from the environment.
    pub origins: Origins,
}

/// Why [`parse`] did not produce a command line.
#[derive(Debug)]
pub enum Stop {
    /// `-h`, `--help` or `--version`: print this (to stdout, styled on a terminal) and exit 0.
    Display(clap::builder::StyledStr),
    /// A usage error: one line, without the `retry: ` prefix, naming the flag or environment
    /// variable and the value at fault.
    Usage(String),
}

/// Parses `args` (program name first) and the `RETRY_<FLAG>` environment variables.
///
/// Empty variables count as unset. A bad value on the command line is reported as clap words
/// it (`invalid value 'abc' for '--base <DURATION>': ...`); a bad value in the environment
/// names the variable: `invalid value 'abc' for RETRY_BASE (--base): ...`. `--generate` works
/// whatever the environment holds. With `--simulate`, `--jitter` is the simulation's list of
/// modes ([`SimulateArgs::modes`]); a run refuses a list, saying it is for `--simulate`.
///
/// # Errors
/// [`Stop::Display`] for `--help` and `--version`, [`Stop::Usage`] for anything wrong.
pub fn parse<I, T>(args: I) -> Result<Parsed, Stop>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    read::parse_reading(&args, true)
}

/// [`parse`] reading no `RETRY_<FLAG>` variable: unit tests must not depend on the caller's.
#[cfg(test)]
pub(crate) fn parse_hermetic(args: &[&str]) -> Result<Parsed, Stop> {
    let args: Vec<OsString> = std::iter::once("retry")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    read::parse_reading(&args, false)
}

/// The definition the man page and the completions describe: a run's flags, with `--jitter`
/// offering every name it takes, `no-backoff` (for `--simulate`) included.
pub fn documented() -> clap::Command {
    read::documented()
}

/// The `--log-format` that `args` ask for, read even when they do not parse (clap's
/// `ignore_errors`), so that a usage error can be a JSON event too; text when it cannot be told.
pub fn log_format_of(args: &[OsString]) -> LogFormat {
    // Every other value is taken as it is, so a bad one does not end clap's reading early.
    read::with_env(Cli::command(), |_| false)
        .mut_args(|arg| {
            if arg.get_id() != "log_format" && arg.get_action().takes_values() {
                arg.value_parser(clap::builder::ValueParser::os_string())
            } else {
                arg
            }
        })
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()
        .and_then(|m| {
            m.try_get_one::<LogFormat>("log_format")
                .ok()
                .flatten()
                .copied()
        })
        .unwrap_or(LogFormat::Text)
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

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_visible_argument_has_a_short_and_a_long_help() {
        let mut command = Cli::command();
        command.build();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if arg.is_hide_set() || id == "help" || id == "version" {
                continue;
            }
            let short = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(
                !short.is_empty() && !short.contains('\n'),
                "{id}: {short:?}"
            );
            assert!(arg.get_long_help().is_some(), "{id} has no long help");
        }
    }

    #[test]
    fn every_environment_variable_is_retry_and_the_flag_name() {
        for arg in Cli::command().get_arguments() {
            if let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) {
                let want = format!("RETRY_{}", long.to_uppercase().replace('-', "_"));
                assert_eq!(env.to_str(), Some(want.as_str()));
                // The attempt's own variables belong to the supervisor.
                assert!(
                    ![
                        "RETRY_ATTEMPT",
                        "RETRY_MAX_ATTEMPTS",
                        "RETRY_RUN_ID",
                        "RETRY_TIME_LEFT",
                        "RETRY_ENV_FILE"
                    ]
                    .contains(&want.as_str())
                );
            }
        }
    }
}
