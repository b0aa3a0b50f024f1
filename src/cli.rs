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

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, ValueHint};
use regex::bytes::Regex;

use crate::backoff::Jitter;
use crate::codes::CodeSet;
use crate::config::{HookFailure, LogFormat};
use crate::duration::parse_duration;
use crate::generate::Target;
use crate::preset::Preset;
use crate::simulate::{Mode, SimulateArgs};

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
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_JITTER", value_name = "MODE",
          value_parser = JitterListParser, hide_possible_values = true)]
    pub jitter: Option<JitterList>,

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
    /// Measured on a monotonic clock. An attempt still running when it passes is stopped like
    /// a timeout; no attempt starts after it; if the next delay would end at or past it,
    /// retry gives up at once instead of sleeping.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_DEADLINE",
          value_name = "DURATION", value_parser = parse_duration)]
    pub deadline: Option<Duration>,

    /// Time limit for each attempt
    ///
    /// A timed-out attempt gets TERM (its whole process tree), then KILL after --kill-after;
    /// its status is 124, or 137 if KILL was needed, and it is retried like any failure.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_TIMEOUT",
          value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Grace between TERM and KILL when an attempt is stopped [default: 10s]
    ///
    /// Applies to timeouts, the deadline and a TERM sent to retry: an attempt still alive
    /// this long after TERM gets KILL (its whole process tree).
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

/// `--jitter`: the mode of a run, or with `--simulate` a list of modes to compare.
///
/// Written as comma-separated names ([`Mode::ALL`]: the jitter modes and `no-backoff`), exact
/// and in order, none twice. Only a list of one jitter mode ([`JitterList::single`]) is a
/// run's policy; [`crate::config`] refuses the rest unless simulating.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitterList(pub Vec<Mode>);

impl JitterList {
    /// The jitter mode of a run: `None` for several modes or `no-backoff`.
    pub fn single(&self) -> Option<Jitter> {
        match self.0[..] {
            [Mode::Backoff(jitter)] => Some(jitter),
            _ => None,
        }
    }
}

impl From<Jitter> for JitterList {
    fn from(jitter: Jitter) -> JitterList {
        JitterList(vec![Mode::Backoff(jitter)])
    }
}

impl fmt::Display for JitterList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|m| m.name()).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for JitterList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut modes = Vec::new();
        for name in s.split(',') {
            let mode = name.parse::<Mode>().map_err(|_| {
                let names: Vec<_> = Mode::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown jitter mode '{name}' (expected one of {}; several, \
                     comma-separated, with --simulate)",
                    names.join(", ")
                )
            })?;
            if modes.contains(&mode) {
                return Err(format!("mode '{name}' is listed twice"));
            }
            modes.push(mode);
        }
        Ok(JitterList(modes))
    }
}

/// Parses `--jitter` as [`JitterList::from_str`], and tells clap the mode names, so that
/// completions offer them.
#[derive(Clone, Copy, Debug)]
struct JitterListParser;

impl TypedValueParser for JitterListParser {
    type Value = JitterList;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<JitterList, clap::Error> {
        StringValueParser::new()
            .try_map(|s| s.parse::<JitterList>())
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Mode::ALL.into_iter().map(|m| PossibleValue::new(m.name())),
        ))
    }
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
/// whatever the environment holds.
///
/// # Errors
/// [`Stop::Display`] for `--help` and `--version`, [`Stop::Usage`] for anything wrong.
pub fn parse<I, T>(args: I) -> Result<Parsed, Stop>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let command = with_env(Cli::command(), |_| true);
    let full_error = match command.clone().try_get_matches_from(&args) {
        Ok(matches) => return from_matches(&matches, &command),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Err(Stop::Display(e));
        }
        Err(e) => e,
    };
    // Without the environment: if the command line alone is at fault, say so as clap does.
    let bare = with_env(Cli::command(), |_| false);
    let matches = bare
        .clone()
        .try_get_matches_from(&args)
        .map_err(|e| Stop::Usage(one_line(&e.render().to_string())))?;
    let parsed = from_matches(&matches, &bare)?;
    if parsed.cli.generate.is_some() {
        // Generating documentation needs no settings: a bad variable must not stop it.
        return Ok(parsed);
    }
    Err(Stop::Usage(env_error(&args, &full_error)))
}

/// `Cli` from matches, with the origin of every value taken from the environment.
fn from_matches(matches: &ArgMatches, command: &clap::Command) -> Result<Parsed, Stop> {
    let cli = Cli::from_arg_matches(matches)
        .map_err(|e| Stop::Usage(one_line(&e.render().to_string())))?;
    let mut origins = Origins::default();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) == Some(ValueSource::EnvVariable) {
            origins.set_env(id);
        }
    }
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
fn env_error(args: &[OsString], full_error: &clap::Error) -> String {
    for arg in Cli::command().get_arguments() {
        let (Some(name), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let Some(value) = env_value(name) else {
            continue;
        };
        let id = arg.get_id().as_str();
        let probe = with_env(Cli::command(), |other| other == id);
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
    fn jitter_lists() {
        assert_eq!(
            "full".parse::<JitterList>().unwrap().single(),
            Some(Jitter::Full)
        );
        let list: JitterList = "none,full,no-backoff".parse().unwrap();
        assert_eq!(list.single(), None);
        assert_eq!(list.to_string(), "none,full,no-backoff");
        assert_eq!("no-backoff".parse::<JitterList>().unwrap().single(), None);
        for bad in ["", "fulll", " full", "full,", "FULL", "full,none,full"] {
            assert!(bad.parse::<JitterList>().is_err(), "{bad:?}");
        }
        for jitter in Jitter::ALL {
            assert_eq!(JitterList::from(jitter).single(), Some(jitter));
            assert_eq!(jitter.name().parse(), Ok(JitterList::from(jitter)));
        }
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
