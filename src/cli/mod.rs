//! The clap definition: parsing and help text only. [`crate::config`] validates what it parses.
//!
//! Flags are grouped by help heading, one flattened struct per heading, each in its own file
//! ([`BackoffArgs`], [`StoppingArgs`], [`LoopArgs`], [`ConditionArgs`], [`OutputArgs`],
//! [`HookArgs`], [`ProtectArgs`], [`LockArgs`], [`TelemetryArgs`] and [`SimulateArgs`]),
//! flattened into [`Cli`] (`definition.rs`): a new flag goes into the struct of its heading.
//! A parse ([`parse`], in `read.rs`, `env.rs` and `errors.rs`) gives [`Parsed`] or [`Stop`]
//! (`parsed.rs`); this file only declares the parts and names what they offer.
//! Each doc comment is a short line (`-h`), a blank line, then the long help (`--help` and the
//! man page). A flag that may also be set from the environment carries `env = "RETRY_<FLAG>"`; [`parse`]
//! then keeps track of which values came from there, because a `--preset` given on the command
//! line outranks them (see [`crate::config`]). [`generate`] writes the man page and the
//! completions from this definition.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

mod backoff;
mod conditions;
mod definition;
mod env;
mod errors;
mod flags;
pub mod generate;
pub mod help;
mod hooks;
mod lock;
mod loops;
mod man;
mod names;
mod output;
mod parsed;
mod protect;
mod read;
mod simulate;
mod stopping;
mod telemetry;

use std::ffi::OsString;

use clap::CommandFactory;

pub use self::backoff::{BackoffArgs, DelayList, JitterArg, MAX_DELAYS};
pub use self::conditions::ConditionArgs;
pub use self::definition::Cli;
pub use self::errors::one_line;
pub use self::flags::Flag;
pub use self::hooks::HookArgs;
pub use self::lock::LockArgs;
pub use self::loops::LoopArgs;
pub use self::names::value_name;
pub use self::output::{ByteLimit, OutputArgs};
pub use self::parsed::{Origins, Parsed, Stop};
pub use self::protect::ProtectArgs;
pub use self::simulate::{ModelName, RunJitter, SimulateArgs};
pub use self::stopping::StoppingArgs;
pub use self::telemetry::TelemetryArgs;
use crate::types::LogFormat;

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
    env::with_env(Cli::command(), |_| false)
        .mut_args(|arg| {
            if arg.get_id() != Flag::LogFormat.id() && arg.get_action().takes_values() {
                arg.value_parser(clap::builder::ValueParser::os_string())
            } else {
                arg
            }
        })
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()
        .and_then(|m| {
            m.try_get_one::<LogFormat>(Flag::LogFormat.id())
                .ok()
                .flatten()
                .copied()
        })
        .unwrap_or(LogFormat::Text)
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
