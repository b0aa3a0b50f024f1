//! What a parse of the command line gives ([`Parsed`]: the flags and where their values came
//! from, [`Origins`]), or why it gives nothing ([`Stop`]).

use std::collections::{BTreeMap, BTreeSet};

use super::definition::Cli;
use super::flags::Flag;

/// Which parsed values came from a `RETRY_<FLAG>` environment variable rather than the
/// command line, by [`Flag`], and each value as typed.
#[derive(Clone, Debug, Default)]
pub struct Origins {
    from_env: BTreeSet<Flag>,
    /// Each value as typed (on the command line or in its variable).
    typed: BTreeMap<Flag, String>,
}

impl Origins {
    /// Whether the value of `flag` came from its environment variable.
    pub fn is_env(&self, flag: Flag) -> bool {
        self.from_env.contains(&flag)
    }

    /// Marks `flag` as set from its environment variable.
    pub fn set_env(&mut self, flag: Flag) {
        self.from_env.insert(flag);
    }

    /// Forgets `flag`: its value plays no part (as if its variable were not read).
    pub fn forget(&mut self, flag: Flag) {
        self.from_env.remove(&flag);
        self.typed.remove(&flag);
    }

    /// How a message names where the value of `flag` came from: its variable
    /// (`RETRY_BUDGET_STORE`) when it came from there, else the flag (`--budget-store`).
    pub fn name(&self, flag: Flag) -> String {
        match flag.env() {
            Some(env) if self.is_env(flag) => env.to_string(),
            _ => flag.to_string(),
        }
    }

    /// The value of `flag` as it was typed, control characters escaped (a message is one
    /// line), for a message that refuses it: `10000y`, not what retry made of it.
    pub fn typed(&self, flag: Flag) -> Option<String> {
        self.typed
            .get(&flag)
            .map(|text| crate::escape::escape(text))
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
                && let Some(flag) = Flag::from_id(id)
                && arg.get_action().takes_values()
                && let Ok(Some(mut raw)) = matches.try_get_raw(id)
                && let Some(last) = raw.next_back()
            {
                self.typed.insert(flag, last.to_string_lossy().into_owned());
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

/// Why [`super::parse`] did not produce a command line.
#[derive(Debug)]
pub enum Stop {
    /// `-h`, `--help` or `--version`: print this (to stdout, styled on a terminal) and exit 0.
    Display(clap::builder::StyledStr),
    /// A usage error: one line, without the `retry: ` prefix, naming the flag or environment
    /// variable and the value at fault.
    Usage(String),
}
