//! What a parse of the command line gives ([`Parsed`]: the flags and where their values came
//! from, [`Origins`]), or why it gives nothing ([`Stop`]).

use std::collections::{BTreeMap, BTreeSet};

use super::definition::Cli;

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

    /// Forgets argument `id`: its value plays no part (as if its variable were not read).
    pub fn forget(&mut self, id: &str) {
        self.from_env.remove(id);
        self.typed.remove(id);
    }

    /// The value of argument `id` as it was typed, control characters escaped (a message is one
    /// line), for a message that refuses it: `10000y`, not what retry made of it.
    pub fn typed(&self, id: &str) -> Option<String> {
        self.typed.get(id).map(|text| crate::escape::escape(text))
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

/// Why [`super::parse`] did not produce a command line.
#[derive(Debug)]
pub enum Stop {
    /// `-h`, `--help` or `--version`: print this (to stdout, styled on a terminal) and exit 0.
    Display(clap::builder::StyledStr),
    /// A usage error: one line, without the `retry: ` prefix, naming the flag or environment
    /// variable and the value at fault.
    Usage(String),
}
