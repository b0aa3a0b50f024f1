//! The validated run settings, built from the parsed command line; what the rest of retry sees.
//!
//! Also where presets, `RETRY_<FLAG>` variables and defaults meet: for each setting, a flag on
//! the command line wins, then `--preset` on the command line, then the `RETRY_<FLAG>` variable,
//! then `RETRY_PRESET`, then the built-in default. A preset named on the command line is more
//! specific than a policy a CI pipeline exported for every step, hence its place.

mod loops;
mod protect;

use std::ffi::OsString;
use std::time::Duration;

use anyhow::{Result, bail};
use regex::bytes::Regex;

use crate::backoff::{Jitter, Policy};
use crate::ci::Ci;
use crate::cli::{Cli, Origins, value_name};
use crate::codes::{CodeSet, Conditions};
use crate::duration::{format_apart, is_unlimited, limit};
use crate::preset::{Preset, Settings};
use crate::stop_signal::StopSignal;
use crate::types::{ColorWhen, HookFailure, LogFormat, RetryLimit};

pub use self::loops::{LockSettings, Shape};
pub use self::protect::{BudgetSettings, Protect, breaker, throttle};

/// How much retry says on stderr about its own progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    /// `--quiet`: errors only.
    Quiet,
    /// One line per failed attempt and one when giving up.
    Normal,
    /// `--verbose`: also the arguments, each attempt's start and duration, and the seed.
    Verbose,
}

/// Commands run around the retrying (`sh -c`).
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    /// `--on-retry`: before each retry.
    pub on_retry: Option<String>,
    /// `--on-retry-fail stop`: a failing `on_retry` gives up.
    pub stop_on_failure: bool,
    /// `--on-give-up`: once, when giving up.
    pub on_give_up: Option<String>,
}

/// Pipeline I/O settings: `--replay-stdin`, `--stdout-on-success`, the output conditions,
/// `--http-hints` and `--idle-timeout`.
#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    /// Record stdin once and give every attempt the same bytes.
    pub replay_stdin: bool,
    /// `--max-replay`: the most bytes of stdin recorded, `None` for unlimited.
    pub max_replay: Option<u64>,
    /// Hold each attempt's stdout until it succeeds.
    pub stdout_on_success: bool,
    /// `--chronic`: hold all output, and print it only if the run does not succeed.
    pub chronic: bool,
    /// `--max-output`: the most bytes `--chronic` holds, `None` for unlimited.
    pub max_output: Option<u64>,
    /// A matching output line makes the attempt a failure.
    pub retry_if_output: Vec<Regex>,
    /// A matching output line stops the retrying.
    pub stop_if_output: Vec<Regex>,
    /// Server hints: capture group 1 is a number of seconds or an HTTP-date for the next delay.
    pub delay_from_output: Vec<Regex>,
    /// `--http-hints`: read HTTP response header lines in the output for server hints.
    pub http_hints: bool,
    /// `--idle-timeout`: an attempt that writes nothing on stdout or stderr this long is
    /// stopped; `None` when absent or 0.
    pub idle_timeout: Option<Duration>,
    /// CI folds are on ([`crate::ci::Ci::folds`]): the attempt's output passes through retry,
    /// which ends a last line left without a newline, so that every fold marker starts a
    /// line of the log.
    pub end_lines: bool,
}

impl Pipeline {
    /// Whether any output condition (or `--http-hints`) needs the attempt's output read line
    /// by line.
    pub fn matches_output(&self) -> bool {
        self.http_hints
            || !(self.retry_if_output.is_empty()
                && self.stop_if_output.is_empty()
                && self.delay_from_output.is_empty())
    }

    /// Whether the attempt simply inherits retry's descriptors (no copies at all).
    pub fn is_plain(&self) -> bool {
        !self.replay_stdin
            && !self.stdout_on_success
            && !self.chronic
            && !self.matches_output()
            && self.idle_timeout.is_none()
            && !self.end_lines
    }
}

/// Everything a run needs, validated.
#[derive(Clone, Debug)]
pub struct Config {
    /// The backoff policy (base, multiplier, cap, jitter).
    pub policy: Policy,
    /// Retries after the first attempt; `None` for unlimited.
    pub max_retries: Option<u64>,
    /// Total time budget from the start (monotonic clock); `None` when absent, 0 or `inf`.
    pub deadline: Option<Duration>,
    /// Time limit for each attempt; `None` when absent, 0 (as coreutils `timeout`: "a
    /// duration of 0 disables the associated timeout") or `inf`.
    pub timeout: Option<Duration>,
    /// Grace between TERM and KILL when an attempt is stopped; zero: never KILL (as coreutils
    /// `timeout --kill-after 0`; `inf` is read as zero).
    pub kill_after: Duration,
    /// `--signal`: what a timeout, idle timeout or the deadline sends to the attempt's tree.
    pub stop_signal: StopSignal,
    /// `--preserve-status`: a timed-out last attempt's own end is retry's, not 124 or 137.
    pub preserve_status: bool,
    /// Which statuses are retried.
    pub conditions: Conditions,
    /// Print the schedule instead of running anything.
    pub dry_run: bool,
    /// The jitter seed, when the user fixed one.
    pub seed: Option<u64>,
    /// How much to report.
    pub verbosity: Verbosity,
    /// Text or JSON progress.
    pub log_format: LogFormat,
    /// `--color`: when retry's own words are coloured.
    pub color: ColorWhen,
    /// `--on-retry` and `--on-give-up`.
    pub hooks: Hooks,
    /// Pipeline I/O: stdin replay, held stdout, output conditions, server hints, idleness.
    pub pipeline: Pipeline,
    /// `--max-hint`: a server's hint asking for a longer wait makes retry give up at once
    /// ([`Duration::MAX`] when 0 lifts the limit).
    pub max_hint: Duration,
    /// `--reset-after`: an attempt that ran at least this long before failing starts the
    /// schedule afresh; `None` when absent, 0 or `inf`.
    pub reset_after: Option<Duration>,
    /// The CI system told of the run (folds, GitHub Actions' annotations, outputs and step
    /// summary); empty outside CI, with `--no-ci`, and for GitHub Actions with `--no-github`.
    pub ci: Ci,
    /// The program and its arguments; empty only with `dry_run`.
    pub command: Vec<OsString>,
    /// Why the program may not be a command at all, said when it is not found (a bare number,
    /// a value with a space left unquoted).
    pub not_found_hint: Option<String>,
    /// `--splay` and `--budget`: protecting the service.
    pub protect: Protect,
    /// `--successes` and `--until-fail`: when the loop is done.
    pub shape: Shape,
    /// `--lock` and `--lock-wait`: one run at a time; `None` without `--lock`.
    pub lock: Option<LockSettings>,
    /// `--metrics-file` and the `OTEL_*` trace export: what the run leaves behind.
    pub telemetry: crate::telemetry::Settings,
}

/// The first delay when nothing sets `--base`.
pub const DEFAULT_BASE: Duration = Duration::from_secs(1);
/// The growth per retry when nothing sets `--multiplier`.
pub const DEFAULT_MULTIPLIER: f64 = 2.0;
/// The largest single delay when nothing sets `--cap`.
pub const DEFAULT_CAP: Duration = Duration::from_secs(64);
/// The jitter mode when nothing sets `--jitter`.
pub const DEFAULT_JITTER: Jitter = Jitter::Full;
/// Retries after the first attempt when nothing sets `--max-retries` (6 attempts in all).
pub const DEFAULT_MAX_RETRIES: u64 = 5;
/// The most bytes of stdin `--replay-stdin` records when nothing sets `--max-replay`: 4 GiB,
/// room for any request body or script a command is retried with, yet far from filling a disk.
pub const DEFAULT_MAX_REPLAY: u64 = 4 << 30;
/// The most bytes of output `--chronic` holds when nothing sets `--max-output`: 64 MiB, the
/// last pages of any log a person reads in a mail, 8 MiB of it in memory.
pub const DEFAULT_MAX_OUTPUT: u64 = 64 << 20;
/// The grace between TERM and KILL when nothing sets `--kill-after`.
pub const DEFAULT_KILL_AFTER: Duration = Duration::from_secs(10);
/// The longest server hint honoured when nothing sets `--max-hint`: an hour.
pub const DEFAULT_MAX_HINT: Duration = Duration::from_secs(3600);

/// Where a backoff or stopping setting took its value from: named in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// A flag on the command line.
    Flag,
    /// Its `RETRY_<FLAG>` variable.
    Env,
    /// A preset, given as `--preset` (`false`) or as `RETRY_PRESET` (`true`).
    Preset(Preset, bool),
    /// retry's built-in default.
    Default,
}

impl Source {
    /// The value of argument `id` as typed, when it came from the command line or its
    /// variable (see [`Origins::typed`]); `None` for a preset's or the default.
    fn typed(self, origins: &Origins, id: &str) -> Option<String> {
        match self {
            Source::Flag | Source::Env => origins.typed(id),
            Source::Preset(..) | Source::Default => None,
        }
    }

    /// ` from ...` for a message about flag `long` (without dashes); empty for a flag or a
    /// default, which need no explanation.
    fn suffix(self, long: &str) -> String {
        match self {
            Source::Flag | Source::Default => String::new(),
            Source::Env => format!(" from RETRY_{}", long.to_uppercase().replace('-', "_")),
            Source::Preset(p, false) => format!(" from --preset {}", value_name(&p)),
            Source::Preset(p, true) => format!(" from RETRY_PRESET={}", value_name(&p)),
        }
    }
}

/// The settings of the flags that a preset may also set, keeping only those whose argument id
/// `keep` accepts.
fn settings_of(cli: &Cli, keep: impl Fn(&str) -> bool) -> Settings {
    fn only<T>(keep: bool, value: Option<T>) -> Option<T> {
        value.filter(|_| keep)
    }
    let (b, s) = (&cli.backoff, &cli.stopping);
    Settings {
        base: only(keep("base"), b.base),
        multiplier: only(keep("multiplier"), b.multiplier),
        cap: only(keep("cap"), b.cap),
        jitter: only(keep("jitter"), b.jitter.map(Jitter::from)),
        max_retries: only(keep("max_retries"), s.max_retries),
        deadline: only(keep("deadline"), s.deadline),
    }
}

/// The sources of the preset-able settings, highest precedence first: flags, `--preset`,
/// `RETRY_<FLAG>` variables, `RETRY_PRESET` (the built-in default comes after them all).
fn layers(cli: &Cli, origins: &Origins) -> Vec<(Settings, Source)> {
    let preset = cli.backoff.preset.map(|p| (p, origins.is_env("preset")));
    let mut layers = vec![(settings_of(cli, |id| !origins.is_env(id)), Source::Flag)];
    if let Some((p, false)) = preset {
        layers.push((p.settings(), Source::Preset(p, false)));
    }
    layers.push((settings_of(cli, |id| origins.is_env(id)), Source::Env));
    if let Some((p, true)) = preset {
        layers.push((p.settings(), Source::Preset(p, true)));
    }
    layers
}

/// The first layer's value for one setting, and where it came from.
fn pick<T>(
    layers: &[(Settings, Source)],
    get: impl Fn(&Settings) -> Option<T>,
) -> Option<(T, Source)> {
    layers
        .iter()
        .find_map(|(settings, source)| get(settings).map(|v| (v, *source)))
}

/// The value of one setting by the precedence of every setting (a flag, `--preset`, its
/// `RETRY_<FLAG>` variable, `RETRY_PRESET`), `None` when nothing sets it: `given` is what the
/// flag of argument id `id` parsed to, from the command line or its variable as `origins`
/// tells; `preset` reads a preset's settings. For settings read outside [`Config`], such as
/// the list of modes that `--jitter` gives a simulation.
pub fn by_precedence<T>(
    cli: &Cli,
    origins: &Origins,
    id: &str,
    given: Option<T>,
    preset: impl Fn(&Settings) -> Option<T>,
) -> Option<T> {
    let from_env = origins.is_env(id);
    let mut given = given;
    for (settings, source) in layers(cli, origins) {
        let value = match source {
            Source::Flag if !from_env => given.take(),
            Source::Env if from_env => given.take(),
            Source::Preset(..) => preset(&settings),
            Source::Flag | Source::Env | Source::Default => None,
        };
        if value.is_some() {
            return value;
        }
    }
    None
}

/// The backoff and stopping settings once flags, presets and `RETRY_<FLAG>` variables are
/// applied, without the default of `--max-retries`: a run ([`Config::from_cli`]) and a
/// simulation take different ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Backoff {
    /// Base, multiplier, cap and jitter mode, with defaults for what nothing sets.
    pub policy: Policy,
    /// `--max-retries`, `None` when nothing sets it.
    pub max_retries: Option<RetryLimit>,
    /// `--deadline`.
    pub deadline: Option<Duration>,
    /// `--seed`.
    pub seed: Option<u64>,
}

impl Backoff {
    /// Resolves the settings of `cli`; `origins` says which values came from the environment.
    ///
    /// # Errors
    /// A one-line message naming the flags and values at fault (e.g. `--cap` below `--base`),
    /// and where a value came from when it was not the command line.
    pub fn from_cli(cli: &Cli, origins: &Origins) -> Result<Backoff> {
        let layers = layers(cli, origins);
        let max_retries = pick(&layers, |s| s.max_retries).map(|v| v.0);
        // 0 disables the deadline, as 0 disables --timeout (so `-d 0` lifts a preset's);
        // so does `inf`.
        let deadline = pick(&layers, |s| s.deadline).and_then(|v| limit(v.0));
        if let Some(list) = &cli.backoff.delays {
            return Ok(Backoff {
                policy: loops::listed_policy(cli, origins, list, &layers)?,
                max_retries,
                deadline,
                seed: cli.backoff.seed,
            });
        }
        let (base, base_from) =
            pick(&layers, |s| s.base).unwrap_or((DEFAULT_BASE, Source::Default));
        let (cap, cap_from) = pick(&layers, |s| s.cap).unwrap_or((DEFAULT_CAP, Source::Default));
        let multiplier = pick(&layers, |s| s.multiplier).map_or(DEFAULT_MULTIPLIER, |v| v.0);
        let jitter = pick(&layers, |s| s.jitter).map_or(DEFAULT_JITTER, |v| v.0);
        // `--cap inf` is no cap; a first delay without end would be no retry at all.
        if is_unlimited(base) {
            bail!(
                "--base ({}{}) must be finite: it is the first delay (use -n 0 for no retry)",
                base_from
                    .typed(origins, "base")
                    .unwrap_or_else(|| "inf".into()),
                base_from.suffix("base")
            );
        }
        if cap < base {
            let (cap_text, base_text) = format_apart(cap, base);
            let cap_text = cap_from.typed(origins, "cap").unwrap_or(cap_text);
            let base_text = base_from.typed(origins, "base").unwrap_or(base_text);
            bail!(
                "--cap ({cap_text}{}) must be >= --base ({base_text}{})",
                cap_from.suffix("cap"),
                base_from.suffix("base")
            );
        }
        let policy = Policy::new(base, multiplier, cap, jitter)
            .map_err(|e| anyhow::anyhow!("invalid backoff policy: {e}"))?;
        Ok(Backoff {
            policy,
            max_retries,
            deadline,
            seed: cli.backoff.seed,
        })
    }
}

/// `--kill-after` as [`Config::kill_after`]: the default when not given; `inf` (never KILL)
/// becomes 0, which already means never KILL.
fn kill_after(given: Option<Duration>) -> Duration {
    match given {
        Some(d) if is_unlimited(d) => Duration::ZERO,
        Some(d) => d,
        None => DEFAULT_KILL_AFTER,
    }
}

impl Config {
    /// Validates the parsed command line, applying presets, `RETRY_<FLAG>` variables and
    /// defaults.
    ///
    /// Precedence for each setting, highest first: a flag on the command line, `--preset` on
    /// the command line, its `RETRY_<FLAG>` variable, `RETRY_PRESET`, the built-in default.
    /// `origins` says which values of `cli` came from the environment.
    ///
    /// # Errors
    /// A one-line message naming the flags and values at fault (e.g. `--cap` below `--base`),
    /// and where a value came from when it was not the command line.
    pub fn from_cli(cli: Cli, origins: &Origins) -> Result<Config> {
        let backoff = Backoff::from_cli(&cli, origins)?;
        let (shape, lock) = loops::from_cli(&cli, origins)?;
        let protect = Protect::from_cli(
            &cli.protect,
            origins,
            &backoff,
            cli.stopping.timeout.and_then(limit),
            kill_after(cli.stopping.kill_after),
        )?;
        let telemetry = crate::telemetry::Settings::new(
            cli.telemetry.metrics_file,
            cli.telemetry.metrics_job,
            cli.telemetry.trace_args,
            &cli.command,
            |name| std::env::var(name).ok(),
        )
        .map_err(anyhow::Error::msg)?;
        let (stopping, conditions, output) = (cli.stopping, cli.conditions, cli.output);
        let verbosity = if output.quiet {
            Verbosity::Quiet
        } else if output.verbose {
            Verbosity::Verbose
        } else {
            Verbosity::Normal
        };
        let ci = Ci::from_env(output.no_github, output.no_ci, |name| {
            std::env::var(name).ok()
        });
        Ok(Config {
            policy: backoff.policy,
            max_retries: backoff
                .max_retries
                .map_or(Some(DEFAULT_MAX_RETRIES), |l| l.0),
            deadline: backoff.deadline,
            timeout: stopping.timeout.and_then(limit),
            kill_after: kill_after(stopping.kill_after),
            stop_signal: stopping.signal.unwrap_or_default(),
            preserve_status: stopping.preserve_status,
            conditions: Conditions {
                retry_on: conditions.retry_on,
                stop_on: conditions.stop_on.unwrap_or(CodeSet::empty()),
            },
            dry_run: output.dry_run,
            seed: backoff.seed,
            verbosity,
            log_format: output.log_format,
            color: output.color,
            hooks: Hooks {
                on_retry: cli.hooks.on_retry,
                stop_on_failure: cli.hooks.on_retry_fail == HookFailure::Stop,
                on_give_up: cli.hooks.on_give_up,
            },
            pipeline: Pipeline {
                replay_stdin: output.replay_stdin,
                max_replay: output
                    .max_replay
                    .map_or(Some(DEFAULT_MAX_REPLAY), |limit| limit.0),
                stdout_on_success: output.stdout_on_success,
                chronic: output.chronic,
                max_output: output
                    .max_output
                    .map_or(Some(DEFAULT_MAX_OUTPUT), |limit| limit.0),
                retry_if_output: conditions.retry_if_output,
                stop_if_output: conditions.stop_if_output,
                delay_from_output: conditions.delay_from_output,
                http_hints: conditions.http_hints,
                idle_timeout: stopping.idle_timeout.and_then(limit),
                end_lines: ci.folds.is_some(),
            },
            // 0 lifts the limit, as 0 disables --timeout; so does `inf`.
            max_hint: match conditions.max_hint {
                Some(d) if d.is_zero() => Duration::MAX,
                Some(d) => d,
                None => DEFAULT_MAX_HINT,
            },
            reset_after: stopping.reset_after.and_then(limit),
            ci,
            command: cli.command,
            not_found_hint: cli.not_found_hint,
            protect,
            shape,
            lock,
            telemetry,
        })
    }

    /// Attempts in all, `None` when unlimited: `max_retries + 1`, or with `--successes N`
    /// `(max_retries + 1) * N`, since retries count failures only ([`Shape::attempts`]).
    pub fn max_attempts(&self) -> Option<u64> {
        self.max_retries.map(|r| self.shape.attempts(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    /// Parses `args` without reading the environment, then marks the ids in `from_env` as if
    /// their values had come from `RETRY_<FLAG>` variables (the submodules' tests use it too).
    pub(super) fn config(args: &[&str], from_env: &[&str]) -> Result<Config> {
        let command = Cli::command().mut_args(|a| a.env(None::<&'static str>));
        let matches = command
            .clone()
            .try_get_matches_from(["retry", "--dry-run"].iter().chain(args))
            .unwrap();
        let mut origins = Origins::default();
        from_env.iter().for_each(|id| origins.set_env(id));
        origins.set_typed(&command, &matches);
        Config::from_cli(Cli::from_arg_matches(&matches).unwrap(), &origins)
    }

    #[test]
    fn defaults_without_anything() {
        let c = config(&[], &[]).unwrap();
        assert_eq!(c.policy.base(), DEFAULT_BASE);
        assert_eq!(c.policy.cap(), DEFAULT_CAP);
        assert_eq!(c.policy.jitter(), DEFAULT_JITTER);
        assert_eq!(c.max_retries, Some(DEFAULT_MAX_RETRIES));
        assert_eq!(c.kill_after, DEFAULT_KILL_AFTER);
    }

    #[test]
    fn zero_disables_the_timeout_and_the_deadline() {
        let c = config(&["-t", "0", "-d", "0s", "--kill-after", "0"], &[]).unwrap();
        assert_eq!((c.timeout, c.deadline), (None, None));
        assert_eq!(c.kill_after, Duration::ZERO);
        // `-d 0` lifts a preset's deadline too.
        let c = config(&["--preset", "api-core"], &[]).unwrap();
        assert_eq!(c.deadline, Some(Duration::from_secs(120)));
        let c = config(&["--preset", "api-core", "-d", "0"], &[]).unwrap();
        assert_eq!(c.deadline, None);
    }

    #[test]
    fn flag_then_preset_then_env_then_env_preset() {
        let secs = Duration::from_secs;
        // A flag beats a preset; the preset fills the rest.
        let c = config(&["--preset", "aws", "-b", "3", "-c", "100"], &[]).unwrap();
        assert_eq!((c.policy.base(), c.policy.cap()), (secs(3), secs(100)));
        assert_eq!(c.max_retries, Some(2));
        // --preset on the command line beats a RETRY_BASE value.
        let c = config(&["--preset", "aws", "-b", "3"], &["base"]).unwrap();
        assert_eq!(c.policy.base(), secs(1));
        // A RETRY_BASE value beats RETRY_PRESET.
        let c = config(&["--preset", "aws", "-b", "3"], &["base", "preset"]).unwrap();
        assert_eq!(c.policy.base(), secs(3));
        assert_eq!(c.policy.cap(), secs(20));
    }

    #[test]
    fn jitter_follows_the_precedence_of_every_setting() {
        let c = config(&["-j", "equal"], &[]).unwrap();
        assert_eq!(c.policy.jitter(), Jitter::Equal);
        // The preset's mode applies below the flag, above RETRY_JITTER.
        let c = config(&["--preset", "grpc"], &[]).unwrap();
        assert_eq!(c.policy.jitter(), Jitter::Proportional);
        let c = config(&["--preset", "grpc", "-j", "none"], &[]).unwrap();
        assert_eq!(c.policy.jitter(), Jitter::None);
        let c = config(&["--preset", "grpc", "-j", "none"], &["jitter"]).unwrap();
        assert_eq!(c.policy.jitter(), Jitter::Proportional);
        let c = config(&["-j", "none"], &["jitter", "preset"]).unwrap();
        assert_eq!(c.policy.jitter(), Jitter::None);
    }

    #[test]
    fn by_precedence_reads_any_setting_the_same_way() {
        let parse = |args: &[&str]| {
            let command = Cli::command().mut_args(|a| a.env(None::<&'static str>));
            let matches = command
                .try_get_matches_from(["retry", "--dry-run"].iter().chain(args))
                .unwrap();
            Cli::from_arg_matches(&matches).unwrap()
        };
        let modes = |cli: &Cli, from_env: &[&str], given: Option<&'static str>| {
            let mut origins = Origins::default();
            from_env.iter().for_each(|id| origins.set_env(id));
            by_precedence(cli, &origins, "jitter", given, |s| {
                s.jitter.map(|_| "preset")
            })
        };
        let cli = parse(&["--preset", "aws"]);
        assert_eq!(modes(&cli, &[], Some("flag")), Some("flag"));
        assert_eq!(modes(&cli, &["jitter"], Some("env")), Some("preset"));
        assert_eq!(modes(&cli, &["jitter", "preset"], Some("env")), Some("env"));
        assert_eq!(modes(&parse(&[]), &[], None), None);
    }

    #[test]
    fn inf_is_no_limit_where_0_is_and_refused_where_it_means_nothing() {
        let c = config(
            &["-t", "inf", "-d", "1e400", "--reset-after", "infinity"],
            &[],
        )
        .unwrap();
        assert_eq!((c.timeout, c.deadline, c.reset_after), (None, None, None));
        let c = config(&["--idle-timeout", "inf", "--kill-after", "inf"], &[]).unwrap();
        assert_eq!(c.pipeline.idle_timeout, None);
        assert!(c.pipeline.is_plain(), "no pipes for an idle timeout of inf");
        assert_eq!(c.kill_after, Duration::ZERO, "never KILL, as 0");
        let c = config(&["--max-hint", "inf", "--cap", "inf"], &[]).unwrap();
        assert_eq!(c.max_hint, Duration::MAX);
        assert_eq!(c.policy.cap(), Duration::MAX);
        let e = config(&["--base", "inf", "--cap", "inf"], &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("--base (inf) must be finite"),
            "{e}"
        );
        let e = config(&["--splay", "inf"], &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("--splay (inf) must be finite"),
            "{e}"
        );
        // The smallest positive value is 1 ns, never 0 (which would lift the limit).
        let c = config(&["-t", "1e-10000"], &[]).unwrap();
        assert_eq!(c.timeout, Some(Duration::from_nanos(1)));
    }

    #[test]
    fn cap_below_base_says_where_each_came_from() {
        let e = config(&["--preset", "gcp", "-b", "100s"], &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--cap (1m 4s from --preset gcp) must be >= --base (100s)"
        );
        let e = config(&["-c", "0.5s"], &["cap"]).unwrap_err();
        assert!(e.to_string().contains("(0.5s from RETRY_CAP)"), "{e}");
        // Values typed close together are shown as typed: they never read the same.
        let e = config(&["-c", "3600.999", "-b", "3601"], &[]).unwrap_err();
        assert_eq!(e.to_string(), "--cap (3600.999) must be >= --base (3601)");
    }
}
