//! The validated settings of the "Protecting the service" flags: the splay, and the KEY, store
//! and policy of `--budget`. Also read by the simulator's `--model failure-rate` for its token
//! bucket and breaker ([`throttle`], [`breaker`]).

use std::time::Duration;

use anyhow::{Result, bail};

use super::backoff::Backoff;
use super::precedence::Source;
use crate::budget::breaker::{DEFAULT_COOLDOWN, DEFAULT_PROBE_LEASE};
use crate::budget::{
    BreakerPolicy, BudgetKey, BudgetPolicy, StoreLocation, Throttle, default_dir,
    parse_store_location,
};
use crate::cli::{Flag, Origins, ProtectArgs};
use crate::duration::{format_apart, format_human, is_unlimited, limit, too_large};

/// A run's `--splay` and `--budget` settings.
#[derive(Clone, Debug, Default)]
pub struct Protect {
    /// `--splay`: the longest random wait before the first attempt; `None` when absent or 0
    /// (`inf` is refused: a random wait of up to forever has no use).
    pub splay: Option<Duration>,
    /// `--budget`: state shared with every run using the same KEY; `None` without it.
    pub budget: Option<BudgetSettings>,
}

/// What `--budget KEY` shares, where, and how.
#[derive(Clone, Debug)]
pub struct BudgetSettings {
    /// The KEY.
    pub key: BudgetKey,
    /// `--budget-store`, or the default directory ([`default_dir`]).
    pub store: StoreLocation,
    /// The token bucket and the breaker (if `--breaker`).
    pub policy: BudgetPolicy,
}

/// `--budget-max-tokens`, `--budget-token-ratio` and `--budget-refill` as a [`Throttle`]:
/// gRFC A6's example values (10 tokens, 0.1 per success) for what is not given, no refill
/// unless `--budget-refill` is more than 0.
///
/// # Errors
/// A ratio above the maximum, naming both flags (and the variables they came from).
pub fn throttle(args: &ProtectArgs, origins: &Origins) -> Result<Throttle> {
    let defaults = Throttle::default();
    let max = args.budget_max_tokens.unwrap_or(defaults.max_tokens());
    let ratio = args
        .budget_token_ratio
        .unwrap_or(defaults.token_ratio().min(max));
    if ratio > max {
        bail!(
            "{} ({ratio}{}) must be at most {} ({max}{})",
            Flag::BudgetTokenRatio,
            from(origins, Flag::BudgetTokenRatio),
            Flag::BudgetMaxTokens,
            match args.budget_max_tokens {
                Some(_) => from(origins, Flag::BudgetMaxTokens),
                None => " by default".to_string(),
            }
        );
    }
    let throttle = Throttle::new(max, ratio).map_err(|e| {
        anyhow::anyhow!("{}, {}: {e}", Flag::BudgetMaxTokens, Flag::BudgetTokenRatio)
    })?;
    // 0 and `inf` alike: no refill.
    match args.budget_refill.and_then(limit) {
        Some(every) => throttle.with_refill(every).map_err(|e| {
            anyhow::anyhow!(
                "{} ({}{}): {e}",
                Flag::BudgetRefill,
                origins
                    .typed(Flag::BudgetRefill)
                    .unwrap_or_else(|| format_human(every)),
                from(origins, Flag::BudgetRefill)
            )
        }),
        None => Ok(throttle),
    }
}

/// The longest `--breaker-cooldown` accepted: 100 years (of 365.25 days). A breaker open
/// longer is one nobody means; and a time past year 9999 could be neither stored nor printed.
pub const MAX_BREAKER_COOLDOWN: Duration = Duration::from_secs(100 * 31_557_600);

/// ` from RETRY_<FLAG>` when the value of `flag` came from its variable, else empty: for a
/// message naming a flag no preset sets.
fn from(origins: &Origins, flag: Flag) -> String {
    Source::given(origins, flag).suffix(flag)
}

/// Refuses a `--breaker-cooldown` longer than [`MAX_BREAKER_COOLDOWN`], naming the flag (and
/// where the value came from) and the value as typed (`10000y`, `1e400`), or as
/// [`format_human`] shows it when that is not known.
fn check_cooldown(args: &ProtectArgs, origins: &Origins) -> Result<()> {
    if let Some(cooldown) = args.breaker_cooldown
        && cooldown > MAX_BREAKER_COOLDOWN
    {
        let flag = Flag::BreakerCooldown;
        let shown = origins
            .typed(flag)
            .unwrap_or_else(|| format_human(cooldown));
        bail!(
            "{flag} ({shown}{}) is longer than the longest accepted, 100 years",
            from(origins, flag)
        );
    }
    Ok(())
}

/// `--breaker N` and `--breaker-cooldown` as a [`BreakerPolicy`] with the default probe lease;
/// `default_threshold` when `--breaker` is not given (`None`: no breaker).
///
/// # Errors
/// A `--breaker-cooldown` longer than 100 years (`MAX_BREAKER_COOLDOWN`).
pub fn breaker(
    args: &ProtectArgs,
    origins: &Origins,
    default_threshold: Option<u32>,
) -> Result<Option<BreakerPolicy>> {
    let Some(threshold) = args.breaker.or(default_threshold) else {
        return Ok(None);
    };
    check_cooldown(args, origins)?;
    let cooldown = args.breaker_cooldown.unwrap_or(DEFAULT_COOLDOWN);
    BreakerPolicy::new(threshold, cooldown)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("{} ({threshold}): {e}", Flag::Breaker))
}

impl Protect {
    /// Validates the flags of the heading for a run whose other settings are `backoff`,
    /// `timeout` and `kill_after`.
    ///
    /// # Errors
    /// A one-line message naming the flag (or variable) and value: a splay not shorter than
    /// the deadline, a bad `--budget-store`, a ratio above the maximum, a `--breaker-cooldown`
    /// longer than 100 years, or a budget flag given
    /// on the command line without `--budget` (from the environment they are simply unused,
    /// so that `RETRY_BUDGET_STORE` can be set once for every run), `--breaker-cooldown`
    /// without `--breaker`.
    pub fn from_cli(
        args: &ProtectArgs,
        origins: &Origins,
        backoff: &Backoff,
        timeout: Option<Duration>,
        kill_after: Duration,
    ) -> Result<Protect> {
        let splay = args.splay.filter(|d| !d.is_zero());
        if splay.is_some_and(is_unlimited) {
            let typed = origins.typed(Flag::Splay).unwrap_or_else(|| "inf".into());
            let (flag, from) = (Flag::Splay, from(origins, Flag::Splay));
            match too_large(&typed) {
                Some(words) => bail!(
                    "{flag} ({typed}{from}) {words}, and the longest random wait before the \
                     first attempt must be finite"
                ),
                None => bail!(
                    "{flag} ({typed}{from}) must be finite: it is the longest random wait \
                     before the first attempt"
                ),
            }
        }
        if let (Some(splay), Some(deadline)) = (splay, backoff.deadline)
            && splay >= deadline
        {
            let (splay_text, deadline_text) = format_apart(splay, deadline);
            let splay_text = origins.typed(Flag::Splay).unwrap_or(splay_text);
            bail!(
                "{} ({splay_text}{}) must be shorter than the deadline ({deadline_text}), \
                 which it counts against",
                Flag::Splay,
                from(origins, Flag::Splay),
            );
        }
        check_cooldown(args, origins)?;
        let on_command_line = |flag: Flag, given: bool| given && !origins.is_env(flag);
        if args.breaker_cooldown.is_some()
            && args.breaker.is_none()
            && on_command_line(Flag::BreakerCooldown, true)
        {
            bail!(
                "{} needs {} N (the runs in a row that open it)",
                Flag::BreakerCooldown,
                Flag::Breaker
            );
        }
        let Some(key) = args.budget.clone() else {
            let given = [
                (Flag::BudgetStore, args.budget_store.is_some()),
                (Flag::Breaker, args.breaker.is_some()),
                (Flag::BreakerCooldown, args.breaker_cooldown.is_some()),
                (Flag::BudgetMaxTokens, args.budget_max_tokens.is_some()),
                (Flag::BudgetTokenRatio, args.budget_token_ratio.is_some()),
                (Flag::BudgetRefill, args.budget_refill.is_some()),
            ];
            if let Some((flag, _)) = given.into_iter().find(|&(f, g)| on_command_line(f, g)) {
                bail!(
                    "{flag} needs {} KEY (the budget it applies to)",
                    Flag::Budget
                );
            }
            return Ok(Protect {
                splay,
                budget: None,
            });
        };
        let store = match &args.budget_store {
            Some(value) => parse_store_location(&origins.name(Flag::BudgetStore), value)
                .map_err(anyhow::Error::msg)?,
            None => StoreLocation::Dir(default_dir()),
        };
        let breaker = match breaker(args, origins, None)? {
            Some(policy) => Some(
                policy
                    .with_probe_lease(probe_lease(backoff, timeout, kill_after))
                    .map_err(anyhow::Error::msg)?,
            ),
            None => None,
        };
        Ok(Protect {
            splay,
            budget: Some(BudgetSettings {
                key,
                store,
                policy: BudgetPolicy {
                    throttle: throttle(args, origins)?,
                    breaker,
                },
            }),
        })
    }
}

/// How long a probe's lease lasts between renewals (each attempt's start and end renew it):
/// at least [`DEFAULT_PROBE_LEASE`], and long enough for the longest wait between attempts
/// (the cap) and for one attempt when something bounds it (`--timeout` or `--deadline`, plus
/// the grace of `--kill-after`), so that a probe still running keeps its lease.
fn probe_lease(backoff: &Backoff, timeout: Option<Duration>, kill_after: Duration) -> Duration {
    let attempt = match (timeout, backoff.deadline) {
        (Some(t), Some(d)) => Some(t.min(d)),
        (t, d) => t.or(d),
    };
    let attempt = attempt.map_or(Duration::ZERO, |a| a.saturating_add(kill_after));
    DEFAULT_PROBE_LEASE.max(backoff.policy.cap()).max(attempt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::{CommandFactory, FromArgMatches};

    fn protect(args: &[&str], from_env: &[Flag]) -> Result<Protect> {
        let command = Cli::command().mut_args(|a| a.env(None::<&'static str>));
        let matches = command
            .clone()
            .try_get_matches_from(["retry", "--dry-run"].iter().chain(args))
            .unwrap();
        let cli = Cli::from_arg_matches(&matches).unwrap();
        let mut origins = Origins::default();
        from_env.iter().for_each(|&flag| origins.set_env(flag));
        origins.set_typed(&command, &matches);
        let backoff = Backoff::from_cli(&cli, &origins)?;
        Protect::from_cli(
            &cli.protect,
            &origins,
            &backoff,
            None,
            Duration::from_secs(10),
        )
    }

    #[test]
    fn defaults_are_grfc_a6_and_no_breaker() {
        let p = protect(&["--budget", "api"], &[]).unwrap();
        let b = p.budget.unwrap();
        assert_eq!(b.key.as_bytes(), b"api");
        assert_eq!(b.policy, BudgetPolicy::default());
        assert_eq!(b.store, StoreLocation::Dir(default_dir()));
        assert!(p.splay.is_none());
        assert!(protect(&[], &[]).unwrap().budget.is_none());
        assert!(protect(&["--splay", "0"], &[]).unwrap().splay.is_none());
    }

    #[test]
    fn tuning_and_breaker() {
        let p = protect(
            &[
                "--budget",
                "k",
                "--budget-max-tokens",
                "4",
                "--budget-token-ratio",
                "0.5",
                "--budget-refill",
                "1h",
                "--breaker",
                "3",
                "--breaker-cooldown",
                "10s",
                "--budget-store",
                "redis://:pw@h:1/2",
            ],
            &[],
        )
        .unwrap();
        let b = p.budget.unwrap();
        let t = b.policy.throttle;
        assert_eq!((t.max_tokens(), t.token_ratio()), (4.0, 0.5));
        assert_eq!(t.refill_every(), Some(Duration::from_secs(3600)));
        let bp = b.policy.breaker.unwrap();
        assert_eq!(
            (bp.threshold(), bp.cooldown()),
            (3, Duration::from_secs(10))
        );
        assert_eq!(bp.probe_lease(), DEFAULT_PROBE_LEASE);
        assert_eq!(b.store.to_string(), "redis://:***@h:1/2");
        // A small maximum keeps the default ratio within it.
        let p = protect(&["--budget", "k", "--budget-max-tokens", "0.05"], &[]).unwrap();
        assert_eq!(p.budget.unwrap().policy.throttle.token_ratio(), 0.05);
    }

    #[test]
    fn a_long_attempt_or_cap_lengthens_the_probe_lease() {
        let p = protect(&["--budget", "k", "--breaker", "1", "-c", "20m"], &[]);
        let lease = p
            .unwrap()
            .budget
            .unwrap()
            .policy
            .breaker
            .unwrap()
            .probe_lease();
        assert_eq!(lease, Duration::from_secs(1200));
        let p = protect(&["--budget", "k", "--breaker", "1", "-d", "1h"], &[]).unwrap();
        let lease = p.budget.unwrap().policy.breaker.unwrap().probe_lease();
        assert_eq!(lease, Duration::from_secs(3610));
    }

    #[test]
    fn refusals_name_the_flag_and_where_it_came_from() {
        let err = |args: &[&str], env: &[Flag]| protect(args, env).unwrap_err().to_string();
        assert_eq!(
            err(&["--splay", "10s", "-d", "10s"], &[]),
            "--splay (10s) must be shorter than the deadline (10s), which it counts against"
        );
        assert!(err(&["--splay", "1m", "-d", "5s"], &[Flag::Splay]).contains("from RETRY_SPLAY"));
        assert_eq!(
            err(&["--breaker", "3"], &[]),
            "--breaker needs --budget KEY (the budget it applies to)"
        );
        assert!(err(&["--budget-store", "/x"], &[]).starts_with("--budget-store needs"));
        // From the environment, a budget flag without --budget is unused, not an error.
        assert!(protect(&["--budget-store", "/x"], &[Flag::BudgetStore]).is_ok());
        assert!(
            err(&["--budget", "k", "--breaker-cooldown", "1s"], &[])
                .starts_with("--breaker-cooldown needs --breaker")
        );
        assert_eq!(
            err(
                &[
                    "--budget",
                    "k",
                    "--breaker",
                    "1",
                    "--breaker-cooldown",
                    "10000y"
                ],
                &[]
            ),
            "--breaker-cooldown (10000y) is longer than the longest accepted, 100 years"
        );
        assert_eq!(
            err(
                &[
                    "--budget",
                    "k",
                    "--breaker",
                    "1",
                    "--breaker-cooldown",
                    "inf"
                ],
                &[]
            ),
            "--breaker-cooldown (inf) is longer than the longest accepted, 100 years"
        );
        assert!(
            err(
                &[
                    "--budget",
                    "k",
                    "--breaker",
                    "1",
                    "--breaker-cooldown",
                    "101y"
                ],
                &[Flag::BreakerCooldown]
            )
            .contains("(101y from RETRY_BREAKER_COOLDOWN)")
        );
        assert!(
            protect(
                &[
                    "--budget",
                    "k",
                    "--breaker",
                    "1",
                    "--breaker-cooldown",
                    "100y"
                ],
                &[]
            )
            .is_ok()
        );
        let e = err(
            &[
                "--budget",
                "k",
                "--budget-max-tokens",
                "2",
                "--budget-token-ratio",
                "3",
            ],
            &[Flag::BudgetTokenRatio],
        );
        assert_eq!(
            e,
            "--budget-token-ratio (3 from RETRY_BUDGET_TOKEN_RATIO) must be at most \
             --budget-max-tokens (2)"
        );
        let e = err(
            &["--budget", "k", "--budget-store", "rediss://u:secret@h"],
            &[],
        );
        assert!(
            e.starts_with("--budget-store: TLS") && !e.contains("secret"),
            "{e}"
        );
        let e = err(
            &["--budget", "k", "--budget-store", "http://u:secret@h"],
            &[Flag::BudgetStore],
        );
        assert!(
            e.starts_with("RETRY_BUDGET_STORE: ") && !e.contains("secret"),
            "{e}"
        );
    }
}
