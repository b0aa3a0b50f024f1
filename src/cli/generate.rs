//! Generated documentation: the man page and the shell completion scripts, built from the clap
//! definition in [`crate::cli`] by the hidden `retry --generate WHAT`.
//!
//! Copies are committed under `man/` and `completions/` (see [`Target::path`]); the test
//! `tests/cli/generated.rs` regenerates them and fails on any difference.

use std::io::{self, Write};

use clap::ValueEnum;
use clap::builder::Resettable;
use clap_complete::Shell;

use crate::cli;

/// What `--generate` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// The man page, retry(1), in roff.
    Man,
    /// bash completions.
    Bash,
    /// zsh completions.
    Zsh,
    /// fish completions.
    Fish,
    /// elvish completions.
    Elvish,
    /// PowerShell completions.
    Powershell,
}

impl Target {
    /// Where the generated text is committed, relative to the repository root.
    pub fn path(self) -> &'static str {
        match self {
            Target::Man => "man/retry.1",
            Target::Bash => "completions/retry.bash",
            Target::Zsh => "completions/_retry",
            Target::Fish => "completions/retry.fish",
            Target::Elvish => "completions/retry.elv",
            Target::Powershell => "completions/_retry.ps1",
        }
    }
}

/// Writes `target`'s text to `out`. The output depends only on the clap definition, never on
/// the environment (the `RETRY_<FLAG>` variables are named, their values never shown).
///
/// # Errors
/// Only from writing to `out`.
pub fn write(target: Target, out: &mut dyn Write) -> io::Result<()> {
    let shell = match target {
        Target::Man => return super::man::write(command(), out),
        Target::Bash => Shell::Bash,
        Target::Zsh => Shell::Zsh,
        Target::Fish => Shell::Fish,
        Target::Elvish => Shell::Elvish,
        Target::Powershell => Shell::PowerShell,
    };
    // clap_complete panics when its writer fails (a closed pipe): generate into memory, then
    // write, so that a write error is returned instead.
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut completed(), "retry", &mut text);
    out.write_all(&text)
}

/// The definition as documented: environment values hidden, so that the output is the same
/// whoever runs it.
fn command() -> clap::Command {
    cli::documented().mut_args(|arg| arg.hide_env_values(true))
}

/// The definition as completed: without the hidden arguments, which clap_complete would offer
/// (it ignores `hide`). Requirements are dropped with them: completion does not check them,
/// and COMMAND's would name the missing `--generate`.
fn completed() -> clap::Command {
    let full = command();
    let visible = full
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .map(|arg| arg.clone().required_unless_present(Resettable::Reset));
    let mut completed = clap::Command::new("retry")
        .version(env!("CARGO_PKG_VERSION"))
        .args(visible);
    if let Some(about) = full.get_about() {
        completed = completed.about(about.clone());
    }
    completed
}
