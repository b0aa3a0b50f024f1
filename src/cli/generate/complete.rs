//! The shell completion scripts, from the run's clap definition by clap_complete.

use std::io;

use clap::builder::Resettable;
use clap::{CommandFactory, ValueHint};
use clap_complete::Shell;

use crate::cli::Cli;

/// The script `retry --generate SHELL` prints.
pub(super) fn script(shell: Shell) -> io::Result<Vec<u8>> {
    // clap_complete panics when its writer fails (a closed pipe): generate into memory, so
    // that the caller's write error is returned instead.
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut completed(), "retry", &mut text);
    Ok(text)
}

/// The run's definition, environment values hidden. `--jitter` takes the six modes a run
/// accepts, not `no-backoff` or the lists of `--simulate` (which the man page documents).
fn definition() -> clap::Command {
    Cli::command().mut_args(|arg| arg.hide_env_values(true))
}

/// The definition as completed: without the hidden arguments, which clap_complete would offer
/// (it ignores `hide`). Requirements are dropped with them: completion does not check them,
/// and COMMAND's would name the missing `--generate`.
///
/// A value is not a file name unless its flag says so (`--plot`, `--budget-store`): the others
/// (durations, sizes, numbers, status codes, keys, regexes, hook commands) get
/// [`ValueHint::Other`], which offers nothing in every shell, where clap's default offers files.
fn completed() -> clap::Command {
    let full = definition();
    let visible = full
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .map(|arg| {
            let arg = arg.clone().required_unless_present(Resettable::Reset);
            let free_text = arg.get_value_hint() == ValueHint::Unknown
                && arg.get_long().is_some()
                && arg.get_action().takes_values()
                && arg.get_possible_values().is_empty();
            if free_text {
                arg.value_hint(ValueHint::Other)
            } else {
                arg
            }
        });
    let mut completed = clap::Command::new("retry")
        .version(env!("CARGO_PKG_VERSION"))
        .args(visible);
    if let Some(about) = full.get_about() {
        completed = completed.about(about.clone());
    }
    completed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_flags_that_say_so_complete_file_names() {
        let command = completed();
        for arg in command.get_arguments() {
            let hint = arg.get_value_hint();
            let long = arg.get_long().unwrap_or_default();
            match long {
                "plot" => assert_eq!(hint, ValueHint::FilePath),
                "budget-store" => assert_eq!(hint, ValueHint::DirPath),
                _ if arg.is_positional() => assert_eq!(hint, ValueHint::CommandWithArguments),
                _ if arg.get_action().takes_values() && arg.get_possible_values().is_empty() => {
                    assert_eq!(hint, ValueHint::Other, "--{long}")
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_run_offers_only_the_jitter_modes_a_run_accepts() {
        let command = completed();
        let jitter = command
            .get_arguments()
            .find(|a| a.get_long() == Some("jitter"))
            .unwrap();
        let names: Vec<String> = jitter
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "none",
                "full",
                "equal",
                "decorrelated",
                "additive",
                "proportional"
            ]
        );
    }
}
