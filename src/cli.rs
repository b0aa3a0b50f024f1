//! The clap definition: parsing and help text only. [`crate::config`] validates what it parses.
//!
//! Flags are grouped by help heading, one flattened struct per heading ([`BackoffArgs`],
//! [`StoppingArgs`], [`ConditionArgs`], [`OutputArgs`]): a new flag goes into the struct of its
//! heading. Each doc comment is a short line (`-h`), a blank line, then the long help (`--help`
//! and the man page). A flag that may also be set from the environment carries
//! `env = "RETRY_<FLAG>"`; [`parse`] then keeps track of which values came from there, because
//! a `--preset` given on the command line outranks them (see [`crate::config`]).

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use clap::builder::ValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, ValueEnum, ValueHint};
use regex::bytes::Regex;
use retry_tool_simulate::Mode;

use crate::backoff::Jitter;
use crate::codes::CodeSet;
use crate::config::{HookFailure, LogFormat};
use crate::duration::parse_duration;
use crate::generate::Target;
use crate::preset::Preset;
use crate::simulate::SimulateArgs;

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
#[derive(Debug, Parser)]
#[command(name = "retry", version, about, long_about, max_term_width = 100)]
#[command(override_usage = "retry [OPTIONS] [--] COMMAND [ARGS]...")]
pub struct Cli {
    // Declared before the flattened groups: a flattened group's help heading would otherwise
    // carry over to the arguments after it.
    /// Print the man page or a shell's completion script and exit (for packagers)
    ///
    /// Generated from these very definitions: man, bash, zsh, fish, elvish, powershell. The
    /// copies committed under man/ and completions/ are checked against it by the tests.
    #[arg(long, value_name = "WHAT", value_enum, hide = true)]
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

    /// Which attempts count as failed, and which failures are retried.
    #[command(flatten)]
    pub conditions: ConditionArgs,

    /// What retry prints, and what the attempts see of stdin and stdout.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Commands run before each retry and on giving up.
    #[command(flatten)]
    pub hooks: HookArgs,

    /// The contention simulation, run instead of a command.
    #[command(flatten)]
    pub simulate: SimulateArgs,
}

/// The "Backoff" heading: the delays between attempts.
#[derive(Debug, Args)]
#[command(next_help_heading = "Backoff")]
pub struct BackoffArgs {
    /// Start from a published policy
    ///
    /// Sets --base, --multiplier, --cap, --jitter and, where the source defines them,
    /// --max-retries and --deadline; the others keep retry's defaults. Precedence, highest
    /// first: a flag, --preset, a RETRY_<FLAG> variable, RETRY_PRESET, the default; so
    /// `--preset aws -n 5` is AWS's policy with 5 retries. --dry-run shows the schedule.
    #[arg(long, env = "RETRY_PRESET", value_name = "NAME", value_enum)]
    pub preset: Option<Preset>,

    /// First delay [default: 1s]
    ///
    /// The delay before the first retry: humantime syntax (250ms, 1.5s, 2m30s) or a bare
    /// number of seconds. Later delays grow by --multiplier up to --cap.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_BASE", value_name = "DURATION",
          value_parser = parse_duration)]
    pub base: Option<Duration>,

    /// Growth per retry; must be >= 1 [default: 2]
    ///
    /// The delay before retry n (from 0) is base * multiplier^n, capped at --cap, before
    /// jitter. Ignored by decorrelated jitter.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_MULTIPLIER",
          value_name = "FACTOR", value_parser = parse_multiplier)]
    pub multiplier: Option<f64>,

    /// Largest single delay; must be >= base [default: 64s]
    ///
    /// No delay ever exceeds the cap, whatever the jitter.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_CAP", value_name = "DURATION",
          value_parser = parse_duration)]
    pub cap: Option<Duration>,

    /// Jitter mode: none, full, equal, decorrelated, additive, proportional [default: full]
    ///
    /// With v = min(cap, base * multiplier^n): none waits v; full U(0, v); equal
    /// v/2 + U(0, v/2); decorrelated s = min(cap, U(base, 3*s)) from s = base (AWS
    /// Architecture Blog, "Exponential Backoff And Jitter"); additive
    /// min(cap, base * multiplier^n + U(0, base)) (Google Cloud's retry guides); proportional
    /// min(cap, v * (1 + U(-0.2, 0.2))) (gRPC connection backoff, grpc/grpc
    /// doc/connection-backoff.md, kept under the cap). With --simulate, a comma-separated
    /// list of modes to compare, no-backoff (retry at once) among them.
    //
    // With --simulate, [`parse`] reads this flag as the simulation's list of modes instead
    // (see [`SimulateArgs::modes`]); this field is then `None`.
    #[arg(
        allow_hyphen_values = true,
        short,
        long,
        env = "RETRY_JITTER",
        value_name = "MODE",
        value_enum,
        hide_possible_values = true
    )]
    pub jitter: Option<JitterArg>,

    /// Seed the jitter, to reproduce a schedule [default: from the OS]
    ///
    /// For reproducing a schedule only: a fixed seed on many clients brings back the
    /// thundering herd that jitter exists to prevent. Do not set RETRY_SEED for a whole fleet.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_SEED", value_name = "N")]
    pub seed: Option<u64>,
}

/// The "Stopping" heading: when retry gives up, and how an attempt is stopped.
#[derive(Debug, Args)]
#[command(next_help_heading = "Stopping")]
pub struct StoppingArgs {
    /// Retries after the first attempt, or "unlimited" [default: 5]
    ///
    /// The default 5 means at most 6 attempts in all. Attempts see their number and this
    /// limit plus one in RETRY_ATTEMPT and RETRY_MAX_ATTEMPTS.
    #[arg(allow_hyphen_values = true, short = 'n', long, env = "RETRY_MAX_RETRIES",
          value_name = "N|unlimited", value_parser = RetryLimit::from_str)]
    pub max_retries: Option<RetryLimit>,

    /// Total time budget from the start
    ///
    /// Measured on a monotonic clock. An attempt or --on-retry hook still running when it
    /// passes is stopped like a timeout; no attempt starts after it; if the next delay would end
    /// at or past it, retry gives up at once instead of sleeping. 0 means no deadline (it lifts
    /// a preset's).
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_DEADLINE",
          value_name = "DURATION", value_parser = parse_duration)]
    pub deadline: Option<Duration>,

    /// Time limit for each attempt
    ///
    /// A timed-out attempt gets TERM (its whole process tree), then KILL after --kill-after;
    /// its status is 124, or 137 if KILL was needed, and it is retried like any failure. When
    /// the last attempt needed KILL, retry dies of KILL itself, as coreutils timeout does. 0
    /// means no limit, as for coreutils timeout.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_TIMEOUT",
          value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Grace between TERM and KILL when an attempt is stopped [default: 10s]
    ///
    /// Applies to timeouts, the deadline, a TERM sent to retry, and whatever a failed attempt
    /// or a hook leaves running: anything still alive this long after TERM gets KILL (the
    /// whole process tree). 0 means never KILL, as for coreutils timeout: retry waits for the
    /// attempt to end.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_KILL_AFTER", value_name = "DURATION",
          value_parser = parse_duration)]
    pub kill_after: Option<Duration>,
}

/// The "Conditions" heading: which attempts failed, and which failures are retried.
#[derive(Debug, Args)]
#[command(next_help_heading = "Conditions")]
pub struct ConditionArgs {
    /// Only these statuses are retried [default: any non-zero]
    ///
    /// CODES: comma-separated statuses and inclusive ranges, e.g. 1,75,100-199. A death by
    /// signal N is status 128+N, and a signal name (SIGPIPE or PIPE) stands for it. May name
    /// statuses of the default stop set (126, 127, 141) to retry them after all.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_RETRY_ON", value_name = "CODES",
          value_parser = CodeSet::from_str)]
    pub retry_on: Option<CodeSet>,

    /// These statuses are never retried [default: 126,127,141]
    ///
    /// Added to the default stop set (126 cannot execute, 127 not found, 141 SIGPIPE); wins
    /// over --retry-on. Same CODES syntax.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_STOP_ON", value_name = "CODES",
          value_parser = CodeSet::from_str)]
    pub stop_on: Option<CodeSet>,

    /// An attempt with a matching output line counts as failed, even with status 0
    ///
    /// Matched per line against the attempt's stdout and stderr (regex crate syntax), while
    /// the output still streams through. May be repeated. If retry gives up after an attempt
    /// that exited 0 but failed this way, it exits 1.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub retry_if_output: Vec<Regex>,

    /// An attempt with a matching output line is not retried, whatever its status
    ///
    /// Matched per line against stdout and stderr. May be repeated.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub stop_if_output: Vec<Regex>,

    /// Take the next delay from a server hint in a failed attempt's output
    ///
    /// A line matching REGEX whose first capture group is a number of seconds (decimal), as in
    /// an HTTP "Retry-After: 30" header from `curl -sS -D - ...`, makes the next delay at least
    /// that long, even past --cap (the server knows best). If it would pass --deadline, retry
    /// gives up at once. Match headers with (?i): HTTP/2 sends their names in lower case. A
    /// capture that is not a number of seconds is reported and ignored. May be repeated.
    #[arg(long, value_name = "REGEX", value_parser = parse_capturing_regex)]
    pub delay_from_output: Vec<Regex>,
}

/// The "Output" heading: what retry prints and what the attempts see of stdin and stdout.
#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Give every attempt the same stdin: read it once, replay it from the start
    ///
    /// Attempt 1 streams stdin as it arrives; later attempts get the full recorded copy.
    /// Memory stays bounded: past 8 MiB the copy spills to an unlinked temporary file (mode
    /// 0600 in TMPDIR), gone however retry ends; --max-replay bounds the file. If stdin cannot
    /// be read or recorded (TMPDIR missing or full), no attempt is given part of it as if it
    /// were all: retry stops, says why and exits 125 (or with the status of an attempt that
    /// failed before it read that far).
    #[arg(long)]
    pub replay_stdin: bool,

    /// Most bytes of stdin --replay-stdin records, or "unlimited" [default: 4GiB]
    ///
    /// Bounds the disk a reader that never ends (`yes | retry --replay-stdin ...`) can fill.
    /// SIZE is bytes with an optional unit, case-insensitive, the B optional: K, M, G, T are
    /// powers of 1000, Ki, Mi, Gi, Ti powers of 1024 (10000, 512MiB, 1.5G). When stdin goes on
    /// past it, recording stops: an attempt still reading sees its stdin end there, no later
    /// attempt starts, and retry exits 125 (or with the status of an attempt that failed
    /// before it read that far).
    #[arg(allow_hyphen_values = true, long, env = "RETRY_MAX_REPLAY",
          value_name = "SIZE|unlimited", value_parser = ByteLimit::from_str)]
    pub max_replay: Option<ByteLimit>,

    /// Hold each attempt's stdout; print it only if that attempt succeeds
    ///
    /// stdout then carries exactly one attempt's output. A failed attempt's held stdout goes
    /// to stderr, so nothing is lost. Memory stays bounded as with --replay-stdin.
    #[arg(long)]
    pub stdout_on_success: bool,

    /// Print the planned schedule and exit; runs nothing
    ///
    /// One row per planned retry: its number, the delay, and the cumulative delay (at most
    /// 20 rows when unlimited; rows that reach --deadline are left out). Use --seed to
    /// reproduce a schedule, and with --preset to see a published policy.
    #[arg(long)]
    pub dry_run: bool,

    /// Silence retry's own progress lines (never its errors)
    ///
    /// The command's own output is untouched; only retry's lines on stderr about failed
    /// attempts and giving up are dropped.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// More detail: the command's arguments, each attempt's start and duration, the seed
    ///
    /// Also prints the backoff policy in effect once at the start, after flags, presets and
    /// RETRY_<FLAG> variables have been applied.
    #[arg(short, long)]
    pub verbose: bool,

    /// Format of retry's own progress: text or json [default: text]
    ///
    /// json writes one JSON object per line on stderr for each event: attempt_start,
    /// attempt_end (with its status), wait (with the delay), hook, give_up, success and
    /// interrupted, each with "elapsed" seconds since retry started, for CI systems to parse.
    /// --quiet silences them too.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text,
          hide_default_value = true)]
    pub log_format: LogFormat,
}

/// The "Hooks" heading: commands run around the retrying.
#[derive(Debug, Args)]
#[command(next_help_heading = "Hooks")]
pub struct HookArgs {
    /// Run CMD with `sh -c` before each retry
    ///
    /// Runs after a failed attempt, before the wait, with RETRY_ATTEMPT (the attempt that
    /// failed), RETRY_MAX_ATTEMPTS, RETRY_LAST_STATUS and RETRY_DELAY (seconds, three
    /// decimals) added to the inherited environment. Its stdout goes to retry's stderr, its
    /// stdin is /dev/null. A failing hook is reported; retrying goes on unless
    /// --on-retry-fail stop.
    #[arg(long, value_name = "CMD")]
    pub on_retry: Option<String>,

    /// What a failing --on-retry hook does: continue or stop [default: continue]
    ///
    /// stop gives up at once, with the last attempt's status.
    #[arg(long, value_name = "ACTION", value_enum, default_value_t = HookFailure::Continue,
          hide_default_value = true)]
    pub on_retry_fail: HookFailure,

    /// Run CMD with `sh -c` once, when giving up
    ///
    /// With RETRY_ATTEMPT, RETRY_MAX_ATTEMPTS and RETRY_LAST_STATUS added to the inherited
    /// environment; its stdout goes to retry's stderr. Not run on success, nor when a signal
    /// stops retry. Its own status does not change retry's.
    #[arg(long, value_name = "CMD")]
    pub on_give_up: Option<String>,
}

/// `--max-retries`: a count or `unlimited`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryLimit(pub Option<u64>);

impl FromStr for RetryLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("unlimited") {
            return Ok(RetryLimit(None));
        }
        s.parse::<u64>()
            .map(|n| RetryLimit(Some(n)))
            .map_err(|_| "expected a number of retries (0 or more) or 'unlimited'".into())
    }
}

/// `--max-replay`: a size in bytes or `unlimited` (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteLimit(pub Option<u64>);

impl FromStr for ByteLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("unlimited") {
            return Ok(ByteLimit(None));
        }
        crate::size::parse_size(s).map(|n| ByteLimit(Some(n)))
    }
}

/// `--jitter` of a run: a [`Jitter`] mode, named as clap derives it from the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum JitterArg {
    /// min(cap, base * multiplier^n), no randomness
    None,
    /// U(0, v): the AWS Architecture Blog's recommendation
    Full,
    /// v/2 + U(0, v/2)
    Equal,
    /// s = min(cap, U(base, 3*s)) from s = base
    Decorrelated,
    /// min(cap, base * multiplier^n + U(0, base)): Google Cloud's retry guides
    Additive,
    /// min(cap, v * (1 + U(-0.2, 0.2))): gRPC connection backoff
    Proportional,
}

impl From<JitterArg> for Jitter {
    fn from(arg: JitterArg) -> Jitter {
        match arg {
            JitterArg::None => Jitter::None,
            JitterArg::Full => Jitter::Full,
            JitterArg::Equal => Jitter::Equal,
            JitterArg::Decorrelated => Jitter::Decorrelated,
            JitterArg::Additive => Jitter::Additive,
            JitterArg::Proportional => Jitter::Proportional,
        }
    }
}

impl From<Jitter> for JitterArg {
    fn from(jitter: Jitter) -> JitterArg {
        match jitter {
            Jitter::None => JitterArg::None,
            Jitter::Full => JitterArg::Full,
            Jitter::Equal => JitterArg::Equal,
            Jitter::Decorrelated => JitterArg::Decorrelated,
            Jitter::Additive => JitterArg::Additive,
            Jitter::Proportional => JitterArg::Proportional,
        }
    }
}

impl fmt::Display for JitterArg {
    /// The name `--jitter` takes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&value_name(self))
    }
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
    /// `--help` or `--version`: print this (to stdout) and exit 0.
    Display(clap::Error),
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
    parse_reading(&args, true)
}

/// [`parse`] reading no `RETRY_<FLAG>` variable: unit tests must not depend on the caller's.
#[cfg(test)]
pub(crate) fn parse_hermetic(args: &[&str]) -> Result<Parsed, Stop> {
    let args: Vec<OsString> = std::iter::once("retry")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    parse_reading(&args, false)
}

/// [`parse`], reading the environment only if `env`.
fn parse_reading(args: &[OsString], env: bool) -> Result<Parsed, Stop> {
    let read_env = |_: &str| env;
    let kind = Kind::of(args);
    let parsed = parse_as(kind, args, &read_env);
    let Err(Stop::Usage(message)) = parsed else {
        return parsed;
    };
    if kind == Kind::Simulate {
        return Err(Stop::Usage(message));
    }
    // A run refused what a simulation accepts: `--jitter` or `RETRY_JITTER` lists modes.
    let simulation = match parse_as(Kind::Simulate, args, &read_env) {
        Ok(simulation) => simulation,
        // `--help` and `--version` read as the same text either way.
        Err(Stop::Display(e)) => return Err(Stop::Display(e)),
        Err(Stop::Usage(_)) => return Err(Stop::Usage(message)),
    };
    if simulation.cli.generate.is_some() {
        // Generating documentation needs no settings.
        return Ok(simulation);
    }
    let (cli, origins) = (&simulation.cli, &simulation.origins);
    let from_env = origins.is_env("jitter");
    if from_env && cli.backoff.preset.is_some() && !origins.is_env("preset") {
        // `--preset` on the command line outranks RETRY_JITTER, whose list plays no part.
        return parse_as(kind, args, &|id: &str| env && id != "jitter");
    }
    let names: Vec<&str> = cli
        .simulate
        .modes
        .iter()
        .flatten()
        .map(|m| m.name())
        .collect();
    let from = if from_env { " from RETRY_JITTER" } else { "" };
    Err(Stop::Usage(format!(
        "--jitter ({}{from}): a run takes one jitter mode; lists of modes and no-backoff are \
         for --simulate",
        names.join(",")
    )))
}

/// The definition the man page and the completions describe: a run's flags, with `--jitter`
/// offering every name it takes, `no-backoff` (for `--simulate`) included.
pub fn documented() -> clap::Command {
    Kind::Simulate.command()
}

/// What a command line asks for, told apart before any value is checked: `--simulate` makes
/// `--jitter` a list of modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Run a command (or `--dry-run`, `--generate`): `--jitter` is one [`JitterArg`].
    Run,
    /// `--simulate`: `--jitter` is a list of [`Mode`]s.
    Simulate,
}

impl Kind {
    /// `Simulate` if `args` give `--simulate`, judged by their shape alone (every value taken
    /// as it is, no environment); `Run` otherwise, and for any command line clap refuses.
    fn of(args: &[OsString]) -> Kind {
        let probe = Cli::command().mut_args(|arg| {
            let arg = arg.env(None::<&'static str>);
            if arg.get_action().takes_values() {
                arg.value_parser(ValueParser::os_string())
            } else {
                arg
            }
        });
        match probe.try_get_matches_from(args) {
            Ok(matches) if matches.contains_id("simulate") => Kind::Simulate,
            _ => Kind::Run,
        }
    }

    /// The clap command for this kind of command line.
    fn command(self) -> clap::Command {
        match self {
            Kind::Run => Cli::command(),
            // `mut_args` keeps the order of the arguments (and so of the help); `mut_arg`
            // would move `--jitter` last.
            Kind::Simulate => Cli::command().mut_args(|arg| {
                if arg.get_id() == "jitter" {
                    SimulateArgs::jitter_as_modes(arg)
                } else {
                    arg
                }
            }),
        }
    }
}

/// [`parse`] for one kind of command line, reading the variables of the arguments whose id
/// `read_env` accepts.
fn parse_as(
    kind: Kind,
    args: &[OsString],
    read_env: &dyn Fn(&str) -> bool,
) -> Result<Parsed, Stop> {
    let command = with_env(kind.command(), read_env);
    let full_error = match command.clone().try_get_matches_from(args) {
        Ok(matches) => return from_matches(&matches, &command, kind),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Err(Stop::Display(e));
        }
        Err(e) => e,
    };
    // Without the environment: if the command line alone is at fault, say so as clap does.
    let bare = with_env(kind.command(), |_| false);
    let matches = bare
        .clone()
        .try_get_matches_from(args)
        .map_err(|e| Stop::Usage(one_line(&e.render().to_string())))?;
    let parsed = from_matches(&matches, &bare, kind)?;
    if parsed.cli.generate.is_some() {
        // Generating documentation needs no settings: a bad variable must not stop it.
        return Ok(parsed);
    }
    Err(Stop::Usage(env_error(kind, args, read_env, &full_error)))
}

/// `Cli` from matches, with the origin of every value taken from the environment. With
/// `--simulate`, `--jitter` goes to [`SimulateArgs::modes`].
fn from_matches(matches: &ArgMatches, command: &clap::Command, kind: Kind) -> Result<Parsed, Stop> {
    let mut origins = Origins::default();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) == Some(ValueSource::EnvVariable) {
            origins.set_env(id);
        }
    }
    let mut matches = matches.clone();
    let modes = match kind {
        Kind::Simulate => matches.remove_one::<Vec<Mode>>("jitter"),
        Kind::Run => None,
    };
    let mut cli = Cli::from_arg_matches_mut(&mut matches)
        .map_err(|e| Stop::Usage(one_line(&e.render().to_string())))?;
    cli.simulate.modes = modes;
    Ok(Parsed { cli, origins })
}

/// The value of environment variable `name`, `None` when unset or empty.
fn env_value(name: &OsStr) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// `command` reading the environment only for the arguments `keep` accepts (by id), and never
/// from an empty variable. (The help shows `[env: NAME=value]` only for the ones it reads.)
fn with_env(command: clap::Command, keep: impl Fn(&str) -> bool) -> clap::Command {
    command.mut_args(|arg| {
        let skip = arg.get_env().is_some_and(|name| {
            !keep(arg.get_id().as_str()) || std::env::var_os(name).is_some_and(|v| v.is_empty())
        });
        if skip {
            arg.env(None::<&'static str>)
        } else {
            arg
        }
    })
}

/// The one-line message for a parse that failed only because of the environment: finds the
/// variable at fault by reading the variables one at a time.
fn env_error(
    kind: Kind,
    args: &[OsString],
    read_env: &dyn Fn(&str) -> bool,
    full_error: &clap::Error,
) -> String {
    for arg in Cli::command().get_arguments() {
        let (Some(name), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let id = arg.get_id().as_str();
        let Some(value) = env_value(name).filter(|_| read_env(id)) else {
            continue;
        };
        let probe = with_env(kind.command(), |other| other == id);
        if let Err(e) = probe.try_get_matches_from(args) {
            return format!(
                "invalid value '{}' for {} (--{long}): {}",
                value.to_string_lossy(),
                name.to_string_lossy(),
                reason(&e)
            );
        }
    }
    format!(
        "in the RETRY_* environment variables: {}",
        one_line(&full_error.render().to_string())
    )
}

/// What was wrong with a value, from clap's error: the value parser's own message, or the
/// values it would have accepted.
fn reason(e: &clap::Error) -> String {
    if let Some(source) = std::error::Error::source(e) {
        return source.to_string();
    }
    if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue) {
        return format!("expected one of {}", valid.join(", "));
    }
    one_line(&e.render().to_string())
}

/// The `--log-format` that `args` ask for, read even when they do not parse (clap's
/// `ignore_errors`), so that a usage error can be a JSON event too; text when it cannot be told.
pub fn log_format_of(args: &[OsString]) -> LogFormat {
    // Every other value is taken as it is, so a bad one does not end clap's reading early.
    with_env(Cli::command(), |_| false)
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

/// `--multiplier`: a finite number `>= 1`.
fn parse_multiplier(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m >= 1.0 => Ok(m),
        Ok(_) => Err("must be a finite number >= 1".into()),
        Err(_) => Err("expected a number >= 1".into()),
    }
}

/// A REGEX for the output flags (regex crate syntax, matched against bytes), its error on one
/// line.
fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| {
        let text = e.to_string();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        last.trim().trim_start_matches("error: ").to_string()
    })
}

/// A REGEX with at least one capture group (`--delay-from-output`).
fn parse_capturing_regex(s: &str) -> Result<Regex, String> {
    let re = parse_regex(s)?;
    if re.captures_len() < 2 {
        return Err(
            "needs a capture group for the number of seconds, e.g. 'Retry-After: (\\d+)'".into(),
        );
    }
    Ok(re)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn multiplier_bounds() {
        assert_eq!(parse_multiplier("1"), Ok(1.0));
        assert!(parse_multiplier("0.9").is_err());
        assert!(parse_multiplier("inf").is_err());
        assert!(parse_multiplier("NaN").is_err());
    }

    #[test]
    fn jitter_names_are_derived_and_convert_both_ways() {
        let names: Vec<String> = JitterArg::value_variants().iter().map(value_name).collect();
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
        for &arg in JitterArg::value_variants() {
            assert_eq!(JitterArg::from(Jitter::from(arg)), arg);
            assert_eq!(arg.to_string(), value_name(&arg));
        }
    }

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
        assert_eq!(run.unwrap().cli.backoff.jitter, Some(JitterArg::Equal));
        let (kind, sim) = parsed(&["-j", "no-backoff,full", "--simulate", "3"]);
        assert_eq!(kind, Kind::Simulate);
        let cli = sim.unwrap().cli;
        assert_eq!(cli.simulate.modes, Some(vec![Mode::NoBackoff, Mode::Full]));
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

    #[test]
    fn retry_limit() {
        assert_eq!("unlimited".parse(), Ok(RetryLimit(None)));
        assert_eq!("3".parse(), Ok(RetryLimit(Some(3))));
        assert!("-1".parse::<RetryLimit>().is_err());
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
                assert!(!["RETRY_ATTEMPT", "RETRY_MAX_ATTEMPTS"].contains(&want.as_str()));
            }
        }
    }
}
