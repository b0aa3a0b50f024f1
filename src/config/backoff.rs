//! The backoff and stopping settings (`--base`, `--multiplier`, `--cap`, `--jitter`,
//! `--delays`, `--max-retries`, `--deadline`, `--seed`) resolved by precedence, with their
//! built-in defaults; a run and a simulation both read them.

use std::time::Duration;

use anyhow::{Result, bail};

use super::loops;
use super::precedence::{Source, layers, pick};
use crate::cli::{Cli, Flag, Origins};
use crate::duration::{format_apart, is_unlimited, limit, too_large};
use crate::types::RetryLimit;
use retry_tool_backoff::{Jitter, Policy};

/// The first delay when nothing sets `--base`.
pub const DEFAULT_BASE: Duration = Duration::from_secs(1);
/// The growth per retry when nothing sets `--multiplier`.
pub const DEFAULT_MULTIPLIER: f64 = 2.0;
/// The largest single delay when nothing sets `--cap`.
pub const DEFAULT_CAP: Duration = Duration::from_secs(64);
/// The jitter mode when nothing sets `--jitter`.
pub const DEFAULT_JITTER: Jitter = Jitter::Full;

/// The backoff and stopping settings once flags, presets and `RETRY_<FLAG>` variables are
/// applied, without the default of `--max-retries`: a run
/// ([`Config::from_cli`](super::Config::from_cli)) and a
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
            let typed = base_from
                .typed(origins, Flag::Base)
                .unwrap_or_else(|| "inf".into());
            let from = base_from.suffix(Flag::Base);
            match too_large(&typed) {
                Some(words) => bail!(
                    "{} ({typed}{from}) {words}, and the first delay must be finite (use -n 0 \
                     for no retry)",
                    Flag::Base
                ),
                None => bail!(
                    "{} ({typed}{from}) must be finite: it is the first delay (use -n 0 for no \
                     retry)",
                    Flag::Base
                ),
            }
        }
        if cap < base {
            let (cap_text, base_text) = format_apart(cap, base);
            let cap_text = cap_from.typed(origins, Flag::Cap).unwrap_or(cap_text);
            let base_text = base_from.typed(origins, Flag::Base).unwrap_or(base_text);
            bail!(
                "{} ({cap_text}{}) must be >= {} ({base_text}{})",
                Flag::Cap,
                cap_from.suffix(Flag::Cap),
                Flag::Base,
                base_from.suffix(Flag::Base)
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
