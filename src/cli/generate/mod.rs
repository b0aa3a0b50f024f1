//! Generated documentation: the man page and the shell completion scripts, built from the clap
//! definition in [`crate::cli`] by `retry --generate WHAT`.
//!
//! Copies are committed under `man/` and `completions/` (see [`Target::path`]); the test
//! `tests/cli/generated.rs` regenerates them and fails on any difference. The completion
//! scripts are built in `complete.rs` beside this file, with the glue that completes the wrapped
//! command.

use std::io::{self, Write};

use clap_complete::Shell;

use crate::cli;

mod complete;
pub mod target;

pub use target::Target;

/// Writes `target`'s text to `out`. The output depends only on the clap definition, never on
/// the environment (the `RETRY_<FLAG>` variables are named, their values never shown).
///
/// # Errors
/// From writing to `out`; or when clap_complete's script is not as the completion glue
/// expects (a clap_complete that writes it otherwise: the tests say so).
pub fn write(target: Target, out: &mut dyn Write) -> io::Result<()> {
    let shell = match target {
        Target::Man => return super::man::write(command(), out),
        Target::TransientTable => return out.write_all(crate::transient::table_text().as_bytes()),
        Target::Bash => Shell::Bash,
        Target::Zsh => Shell::Zsh,
        Target::Fish => Shell::Fish,
        Target::Elvish => Shell::Elvish,
        Target::Powershell => Shell::PowerShell,
    };
    out.write_all(&complete::script(shell)?)
}

/// The definition as documented: environment values hidden, so that the output is the same
/// whoever runs it.
fn command() -> clap::Command {
    cli::documented().mut_args(|arg| arg.hide_env_values(true))
}
