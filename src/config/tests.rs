//! Unit tests of [`Config::from_cli`]: defaults, the precedence of flags, presets and
//! variables, what 0 and `inf` mean, the loop shapes and the lock, and the one-line errors.

use std::time::Duration;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches};

use super::*;
use crate::cli::{Cli, Flag, Origins};
use retry_tool_backoff::Jitter;

/// Parses `args` without reading the environment, then marks the flags in `from_env` as if
/// their values had come from `RETRY_<FLAG>` variables.
fn config(args: &[&str], from_env: &[Flag]) -> Result<Config> {
    let command = Cli::command().mut_args(|a| a.env(None::<&'static str>));
    let matches = command
        .clone()
        .try_get_matches_from(["retry", "--dry-run"].iter().chain(args))
        .unwrap();
    let mut origins = Origins::default();
    from_env.iter().for_each(|&flag| origins.set_env(flag));
    origins.set_typed(&command, &matches);
    Config::from_cli(Cli::from_arg_matches(&matches).unwrap(), &origins)
}

#[test]
fn defaults_without_anything() {
    let c = config(&[], &[]).unwrap();
    assert_eq!(c.policy.base(), DEFAULT_BASE);
    assert_eq!(c.policy.cap(), DEFAULT_CAP);
    assert_eq!(c.policy.jitter(), DEFAULT_JITTER);
    assert_eq!(c.rules.max_retries, Some(DEFAULT_MAX_RETRIES));
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
    assert_eq!(c.rules.max_retries, Some(2));
    // --preset on the command line beats a RETRY_BASE value.
    let c = config(&["--preset", "aws", "-b", "3"], &[Flag::Base]).unwrap();
    assert_eq!(c.policy.base(), secs(1));
    // A RETRY_BASE value beats RETRY_PRESET.
    let c = config(&["--preset", "aws", "-b", "3"], &[Flag::Base, Flag::Preset]).unwrap();
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
    let c = config(&["--preset", "grpc", "-j", "none"], &[Flag::Jitter]).unwrap();
    assert_eq!(c.policy.jitter(), Jitter::Proportional);
    let c = config(&["-j", "none"], &[Flag::Jitter, Flag::Preset]).unwrap();
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
    let modes = |cli: &Cli, from_env: &[Flag], given: Option<&'static str>| {
        let mut origins = Origins::default();
        from_env.iter().for_each(|&flag| origins.set_env(flag));
        by_precedence(cli, &origins, Flag::Jitter, given, |s| {
            s.jitter.map(|_| "preset")
        })
    };
    let cli = parse(&["--preset", "aws"]);
    assert_eq!(modes(&cli, &[], Some("flag")), Some("flag"));
    assert_eq!(modes(&cli, &[Flag::Jitter], Some("env")), Some("preset"));
    assert_eq!(
        modes(&cli, &[Flag::Jitter, Flag::Preset], Some("env")),
        Some("env")
    );
    assert_eq!(modes(&parse(&[]), &[], None), None);
}

#[test]
fn inf_is_no_limit_where_0_is_and_refused_where_it_means_nothing() {
    let c = config(
        &["-t", "inf", "-d", "1e400", "--reset-after", "infinity"],
        &[],
    )
    .unwrap();
    assert_eq!(
        (c.timeout, c.deadline, c.rules.reset_after),
        (None, None, None)
    );
    let c = config(&["--idle-timeout", "inf", "--kill-after", "inf"], &[]).unwrap();
    assert_eq!(c.pipeline.idle_timeout, None);
    // No pipes for an idle timeout of inf (but those of CI folds, when the environment running
    // the tests is a CI system: the config reads it).
    assert_eq!(
        c.pipeline.is_plain(),
        !c.pipeline.end_lines,
        "no pipes for an idle timeout of inf"
    );
    assert_eq!(c.kill_after, Duration::ZERO, "never KILL, as 0");
    let c = config(&["--max-hint", "inf", "--cap", "inf"], &[]).unwrap();
    assert_eq!(c.rules.max_hint, Duration::MAX);
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
    let e = config(&["-c", "0.5s"], &[Flag::Cap]).unwrap_err();
    assert!(e.to_string().contains("(0.5s from RETRY_CAP)"), "{e}");
    // Values typed close together are shown as typed: they never read the same.
    let e = config(&["-c", "3600.999", "-b", "3601"], &[]).unwrap_err();
    assert_eq!(e.to_string(), "--cap (3600.999) must be >= --base (3601)");
}

// The loop settings (loops.rs), read through the whole configuration.

fn secs(list: &[u64]) -> Vec<Duration> {
    list.iter().map(|&s| Duration::from_secs(s)).collect()
}

#[test]
fn delays_replace_the_formula_and_have_no_jitter_unless_asked() {
    let c = config(&["--delays", "1s,5s,30s,2m"], &[]).unwrap();
    assert_eq!(c.policy.delays(), Some(secs(&[1, 5, 30, 120])));
    assert_eq!(c.policy.jitter(), Jitter::None);
    let c = config(&["--delays", "1,2", "-j", "full"], &[]).unwrap();
    assert_eq!(c.policy.jitter(), Jitter::Full);
    // A preset's base, multiplier and cap give way; its jitter and retries stay.
    let c = config(&["--preset", "aws", "--delays", "3"], &[]).unwrap();
    assert_eq!(c.policy.delays(), Some(secs(&[3])));
    assert_eq!(c.policy.jitter(), Jitter::Full);
    assert_eq!(c.rules.max_retries, Some(2));
}

#[test]
fn delays_with_base_multiplier_or_cap_is_one_error_naming_both() {
    let e = config(&["--delays", "1s,5s", "-b", "2"], &[])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "--delays (1s,5s) cannot be given with --base (2): the list replaces --base, \
         --multiplier and --cap"
    );
    let e = config(&["--delays", "1", "-m", "3"], &[Flag::Delays])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--delays (1 from RETRY_DELAYS) cannot be given with --multiplier (3)"),
        "{e}"
    );
    let e = config(&["--delays", "1", "-c", "9"], &[Flag::Cap])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--cap (9 from RETRY_CAP)"), "{e}");
}

#[test]
fn shapes_and_what_they_refuse() {
    assert_eq!(config(&[], &[]).unwrap().rules.shape, Shape::Plain);
    assert_eq!(
        config(&["--successes", "1"], &[]).unwrap().rules.shape,
        Shape::Plain
    );
    let c = config(&["--successes", "3", "-n", "4"], &[]).unwrap();
    assert_eq!(c.rules.shape, Shape::Streak(3));
    assert_eq!(c.max_attempts(), Some(15));
    let c = config(&["--until-fail", "-n", "200"], &[]).unwrap();
    assert_eq!(c.rules.shape, Shape::UntilFail);
    assert_eq!(c.max_attempts(), Some(201));
    for (args, from_env, says) in [
        (
            &["--successes", "2", "--until-fail"][..],
            &[][..],
            "--successes (2) and --until-fail are two different loops",
        ),
        (
            &["--until-fail", "--reset-after", "1m"],
            &[Flag::ResetAfter],
            "--reset-after (1m from RETRY_RESET_AFTER) has no meaning with --until-fail",
        ),
        (
            &["--until-fail", "--retry-on", "1-3"],
            &[],
            "--retry-on (1-3) has no meaning with --until-fail: every failure ends it",
        ),
        (&["--until-fail", "--stop-on", "2"], &[], "--stop-on (2)"),
        (&["--until-fail", "--budget", "k"], &[], "--budget (k)"),
        (
            &["--lock-wait", "5s"],
            &[],
            "--lock-wait (5s) needs --lock PATH",
        ),
    ] {
        let e = config(args, from_env).unwrap_err().to_string();
        assert!(e.starts_with(says), "{args:?}: {e}");
    }
    assert!(config(&["--lock-wait", "5s"], &[Flag::LockWait]).is_ok());
    assert!(Shape::Streak(u64::MAX).attempts(u64::MAX) == u64::MAX);
}

#[test]
fn lock_waits() {
    let wait = |args: &[&str]| config(args, &[]).unwrap().lock.unwrap().wait;
    assert_eq!(wait(&["--lock", "/l"]), Duration::ZERO);
    assert_eq!(
        wait(&["--lock", "/l", "--lock-wait", "2s"]),
        Duration::from_secs(2)
    );
    assert_eq!(wait(&["--lock", "/l", "--lock-wait", "inf"]), Duration::MAX);
    assert_eq!(wait(&["--lock", "/l", "--lock-wait", "0"]), Duration::ZERO);
    assert_eq!(config(&[], &[]).unwrap().lock, None);
}
