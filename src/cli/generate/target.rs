//! What `retry --generate WHAT` prints ([`Target`]), and where its committed copy lives: the
//! value type of the flag, apart from the generation so that the flag's definition needs
//! nothing else of it.

use clap::ValueEnum;

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
    /// The table of transient failures `--transient` reads, as text.
    TransientTable,
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
            Target::TransientTable => "docs/transient-table.txt",
        }
    }
}
