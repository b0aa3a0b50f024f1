//! The root of the clap definition: [`Cli`], with its about text (the help's and the man
//! page's first paragraphs), `--generate`, COMMAND, and every heading's flags flattened in.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::ffi::OsString;

use clap::{Parser, ValueHint};

use super::backoff::BackoffArgs;
use super::conditions::ConditionArgs;
use super::generate::target::Target;
use super::hooks::HookArgs;
use super::lock::LockArgs;
use super::loops::LoopArgs;
use super::output::OutputArgs;
use super::protect::ProtectArgs;
use super::simulate::SimulateArgs;
use super::stopping::StoppingArgs;
use super::telemetry::TelemetryArgs;

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
