//! The validated loop settings: the listed delays of `--delays` (a [`Policy::listed`]), the
//! shape of the loop (`--successes`, `--until-fail`) and the lock (`--lock`, `--lock-wait`),
//! with the combinations that make no sense refused, one line naming both flags.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use super::precedence::{Source, pick};
use crate::cli::{Cli, DelayList, Flag, Origins};
use crate::codes::CodeSet;
use crate::duration::{format_human, is_unlimited, limit};
use crate::preset::Settings;
use crate::types::Shape;
use retry_tool_backoff::{Jitter, Policy};

/// `--lock` and `--lock-wait`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockSettings {
    /// The lock file.
    pub path: PathBuf,
    /// How long to wait for it when another run holds it: zero for not at all,
    /// [`Duration::MAX`] for as long as it takes (`inf`); the deadline ends a wait too.
    pub wait: Duration,
}

/// The policy of `--delays LIST`: the list, with the jitter that a flag, a preset or
/// `RETRY_JITTER` sets, and none otherwise (the list is waited as written, as systemd's
/// `RestartSteps=` and minfrin/retry's `-d` do). A preset's base, multiplier and cap give way
/// to the list.
///
/// # Errors
/// `--base`, `--multiplier` or `--cap` given too (on the command line or in a variable): one
/// line naming both flags and where each came from.
pub(super) fn listed_policy(
    cli: &Cli,
    origins: &Origins,
    list: &DelayList,
    layers: &[(Settings, Source)],
) -> Result<Policy> {
    let given = [
        (Flag::Base, cli.backoff.base.and(origins.typed(Flag::Base))),
        (
            Flag::Multiplier,
            cli.backoff.multiplier.and(origins.typed(Flag::Multiplier)),
        ),
        (Flag::Cap, cli.backoff.cap.and(origins.typed(Flag::Cap))),
    ];
    if let Some((flag, Some(value))) = given.into_iter().find(|(_, v)| v.is_some()) {
        bail!(
            "{} ({}{}) cannot be given with {flag} ({value}{}): the list replaces {}, {} and {}",
            Flag::Delays,
            list.text,
            Source::given(origins, Flag::Delays).suffix(Flag::Delays),
            Source::given(origins, flag).suffix(flag),
            Flag::Base,
            Flag::Multiplier,
            Flag::Cap,
        );
    }
    let jitter = pick(layers, |s| s.jitter).map_or(Jitter::None, |v| v.0);
    Policy::listed(&list.delays, jitter).map_err(|e| anyhow::anyhow!("{}: {e}", Flag::Delays))
}

/// The shape of the loop and the lock, from `--successes`, `--until-fail`, `--forever`,
/// `--lock` and `--lock-wait`.
///
/// # Errors
/// One line naming the flags at fault: two of `--successes`, `--until-fail` and `--forever`; `--until-fail` with
/// `--reset-after`, `--retry-on`, `--stop-on` or `--budget` (which mean nothing when every
/// failure ends the loop and the retries follow successes); `--lock-wait` on the command line
/// without a lock.
pub(super) fn from_cli(cli: &Cli, origins: &Origins) -> Result<(Shape, Option<LockSettings>)> {
    let loops = &cli.loops;
    if loops.forever {
        let forever = format!(
            "{}{}",
            Flag::Forever,
            Source::given(origins, Flag::Forever).suffix(Flag::Forever)
        );
        if let Some(n) = loops.successes {
            bail!(
                "{} ({n}) and {forever} are two different loops: give one of them",
                Flag::Successes
            );
        }
        if loops.until_fail {
            bail!(
                "{} and {forever} are two different loops: give one of them",
                Flag::UntilFail
            );
        }
    }
    let shape = match (loops.successes, loops.until_fail) {
        _ if loops.forever => Shape::Forever,
        (Some(n), true) => {
            bail!(
                "{} ({n}) and {} are two different loops: give one of them",
                Flag::Successes,
                Flag::UntilFail
            )
        }
        (_, true) => {
            until_fail_alone(cli, origins)?;
            Shape::UntilFail
        }
        (Some(n), false) if n >= 2 => Shape::Streak(n),
        _ => Shape::Plain,
    };
    let lock = match (&cli.lock.lock, cli.lock.lock_wait) {
        (Some(path), wait) => Some(LockSettings {
            path: path.clone(),
            wait: match wait {
                Some(d) if is_unlimited(d) => Duration::MAX,
                Some(d) => limit(d).unwrap_or(Duration::ZERO),
                None => Duration::ZERO,
            },
        }),
        // A RETRY_LOCK_WAIT exported for every run is no mistake of this one.
        (None, Some(wait)) if !origins.is_env(Flag::LockWait) => bail!(
            "{} ({}) needs {} PATH: there is no lock to wait for",
            Flag::LockWait,
            origins
                .typed(Flag::LockWait)
                .unwrap_or_else(|| format_human(wait)),
            Flag::Lock
        ),
        (None, _) => None,
    };
    Ok((shape, lock))
}

/// Refuses what `--until-fail` cannot go with, naming the flag and where it came from.
fn until_fail_alone(cli: &Cli, origins: &Origins) -> Result<()> {
    let why = |flag: Flag| match flag {
        Flag::ResetAfter => "whose runs are all successes until the last",
        Flag::Budget => {
            "a retry budget counts retries of failures, and these retries follow successes"
        }
        _ => "every failure ends it",
    };
    let given = [
        (
            Flag::ResetAfter,
            cli.stopping
                .reset_after
                .and(origins.typed(Flag::ResetAfter)),
        ),
        (
            Flag::RetryOn,
            cli.conditions.retry_on.as_ref().map(codes_text),
        ),
        (
            Flag::StopOn,
            cli.conditions.stop_on.as_ref().map(codes_text),
        ),
        (
            Flag::Budget,
            cli.protect.budget.as_ref().map(ToString::to_string),
        ),
    ];
    if let Some((flag, Some(value))) = given.into_iter().find(|g| g.1.is_some()) {
        bail!(
            "{flag} ({value}{}) has no meaning with {}: {}",
            Source::given(origins, flag).suffix(flag),
            Flag::UntilFail,
            why(flag)
        );
    }
    Ok(())
}

/// A set of statuses as CODES writes them: `1,75,100-199`.
fn codes_text(set: &CodeSet) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut code = 0u16;
    while code <= 255 {
        let first = code;
        while code <= 255 && set.contains(code as u8) {
            code += 1;
        }
        match code - first {
            0 => code += 1,
            1 => parts.push(first.to_string()),
            _ => parts.push(format!("{first}-{}", code - 1)),
        }
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_as_written() {
        let set: CodeSet = "1,75,100-199,255".parse().unwrap();
        assert_eq!(codes_text(&set), "1,75,100-199,255");
        assert_eq!(codes_text(&"0-255".parse().unwrap()), "0-255");
    }
}
