//! Every flag's identity as one value, [`Flag`]: its clap argument id, its long name and its
//! `RETRY_<FLAG>` variable, after ripgrep's flag definitions (crates/core/flags/defs.rs at
//! <https://github.com/BurntSushi/ripgrep>). The origins of a value ([`super::Origins`]),
//! `config`'s refusals and the man page take a `Flag`, so a misspelt flag does not compile;
//! the clap definition spells the same names, and the tests below check that each `Flag`
//! is what clap's definition (and so the parse) says, both ways.

use std::fmt;

/// Declares [`Flag`] from its table: `Variant: "clap_id", "long-name"` and, when the flag reads
/// one, `, "RETRY_VARIABLE"`.
macro_rules! flags {
    ($($flag:ident: $id:literal, $long:literal $(, $env:literal)?;)*) => {
        /// One flag of retry's command line (clap's own `--help` and `--version` included).
        /// Written `--long-name` by [`fmt::Display`].
        ///
        /// ```
        /// use retry::cli::Flag;
        /// assert_eq!(Flag::BudgetStore.env(), Some("RETRY_BUDGET_STORE"));
        /// ```
        ///
        /// A misspelt flag is no "not given" at run time, but a build error:
        ///
        /// ```compile_fail
        /// use retry::cli::Flag;
        /// assert_eq!(Flag::BudgetStor.env(), Some("RETRY_BUDGET_STORE"));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Flag {
            $(
                #[doc = concat!("`--", $long, "`")]
                $flag,
            )*
        }

        impl Flag {
            /// Every flag, in the order of the help.
            pub const ALL: &[Flag] = &[$(Flag::$flag),*];

            /// Its clap argument id (the field's name: `budget_store`).
            pub const fn id(self) -> &'static str {
                match self {
                    $(Flag::$flag => $id,)*
                }
            }

            /// Its long name, without the dashes (`budget-store`).
            pub const fn long(self) -> &'static str {
                match self {
                    $(Flag::$flag => $long,)*
                }
            }

            /// The `RETRY_<FLAG>` variable it is read from, `None` for a flag read only from the
            /// command line.
            pub const fn env(self) -> Option<&'static str> {
                match self {
                    $(Flag::$flag => flags!(@env $($env)?),)*
                }
            }

            /// The flag of clap argument `id`; `None` for COMMAND, which is no flag.
            pub fn from_id(id: &str) -> Option<Flag> {
                match id {
                    $($id => Some(Flag::$flag),)*
                    _ => None,
                }
            }
        }
    };
    (@env) => {
        None
    };
    (@env $env:literal) => {
        Some($env)
    };
}

flags! {
    // retry's own: the documentation
    Generate: "generate", "generate";
    // Backoff (`backoff.rs`)
    Preset: "preset", "preset", "RETRY_PRESET";
    Base: "base", "base", "RETRY_BASE";
    Multiplier: "multiplier", "multiplier", "RETRY_MULTIPLIER";
    Cap: "cap", "cap", "RETRY_CAP";
    Delays: "delays", "delays", "RETRY_DELAYS";
    Jitter: "jitter", "jitter", "RETRY_JITTER";
    Seed: "seed", "seed", "RETRY_SEED";
    // Stopping (`stopping.rs`)
    MaxRetries: "max_retries", "max-retries", "RETRY_MAX_RETRIES";
    ResetAfter: "reset_after", "reset-after", "RETRY_RESET_AFTER";
    Deadline: "deadline", "deadline", "RETRY_DEADLINE";
    Timeout: "timeout", "timeout", "RETRY_TIMEOUT";
    IdleTimeout: "idle_timeout", "idle-timeout", "RETRY_IDLE_TIMEOUT";
    KillAfter: "kill_after", "kill-after", "RETRY_KILL_AFTER";
    Signal: "signal", "signal", "RETRY_SIGNAL";
    PreserveStatus: "preserve_status", "preserve-status", "RETRY_PRESERVE_STATUS";
    // Loops (`loops.rs`)
    Successes: "successes", "successes";
    UntilFail: "until_fail", "until-fail";
    Forever: "forever", "forever", "RETRY_FOREVER";
    // Conditions (`conditions.rs`)
    RetryOn: "retry_on", "retry-on", "RETRY_RETRY_ON";
    StopOn: "stop_on", "stop-on", "RETRY_STOP_ON";
    RetryIfOutput: "retry_if_output", "retry-if-output";
    StopIfOutput: "stop_if_output", "stop-if-output";
    DelayFromOutput: "delay_from_output", "delay-from-output";
    HttpHints: "http_hints", "http-hints", "RETRY_HTTP_HINTS";
    HttpRetryOn: "http_retry_on", "http-retry-on", "RETRY_HTTP_RETRY_ON";
    MaxHint: "max_hint", "max-hint", "RETRY_MAX_HINT";
    Transient: "transient", "transient", "RETRY_TRANSIENT";
    TransientPattern: "transient_pattern", "transient-pattern", "RETRY_TRANSIENT_PATTERN";
    // Output (`output.rs`)
    ReplayStdin: "replay_stdin", "replay-stdin";
    MaxReplay: "max_replay", "max-replay", "RETRY_MAX_REPLAY";
    StdoutOnSuccess: "stdout_on_success", "stdout-on-success";
    Chronic: "chronic", "chronic", "RETRY_CHRONIC";
    MaxOutput: "max_output", "max-output", "RETRY_MAX_OUTPUT";
    DryRun: "dry_run", "dry-run";
    Quiet: "quiet", "quiet";
    Verbose: "verbose", "verbose";
    LogFormat: "log_format", "log-format";
    Color: "color", "color", "RETRY_COLOR";
    NoGithub: "no_github", "no-github", "RETRY_NO_GITHUB";
    NoCi: "no_ci", "no-ci", "RETRY_NO_CI";
    // Hooks (`hooks.rs`)
    OnRetry: "on_retry", "on-retry";
    OnRetryFail: "on_retry_fail", "on-retry-fail";
    OnGiveUp: "on_give_up", "on-give-up";
    // Protecting the service (`protect.rs`)
    Splay: "splay", "splay", "RETRY_SPLAY";
    Budget: "budget", "budget", "RETRY_BUDGET";
    BudgetStore: "budget_store", "budget-store", "RETRY_BUDGET_STORE";
    Breaker: "breaker", "breaker", "RETRY_BREAKER";
    BreakerCooldown: "breaker_cooldown", "breaker-cooldown", "RETRY_BREAKER_COOLDOWN";
    BudgetMaxTokens: "budget_max_tokens", "budget-max-tokens", "RETRY_BUDGET_MAX_TOKENS";
    BudgetTokenRatio: "budget_token_ratio", "budget-token-ratio", "RETRY_BUDGET_TOKEN_RATIO";
    BudgetRefill: "budget_refill", "budget-refill", "RETRY_BUDGET_REFILL";
    // Lock (`lock.rs`)
    Lock: "lock", "lock", "RETRY_LOCK";
    LockWait: "lock_wait", "lock-wait", "RETRY_LOCK_WAIT";
    // Telemetry (`telemetry.rs`)
    MetricsFile: "metrics_file", "metrics-file", "RETRY_METRICS_FILE";
    MetricsJob: "metrics_job", "metrics-job";
    TraceArgs: "trace_args", "trace-args";
    // Simulation (`simulate.rs`)
    Simulate: "simulate", "simulate";
    Runs: "runs", "runs";
    Model: "model", "model";
    Capacity: "capacity", "capacity";
    FailureRate: "failure_rate", "failure-rate";
    Plot: "plot", "plot";
    // clap's own
    Help: "help", "help";
    Version: "version", "version";
}

impl fmt::Display for Flag {
    /// `--long-name`, as a message names the flag.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--{}", self.long())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    /// Every argument of `command` but COMMAND, once built (with clap's `--help` and
    /// `--version`).
    fn flags_of(mut command: clap::Command) -> Vec<clap::Arg> {
        command.build();
        command
            .get_arguments()
            .filter(|arg| !arg.is_positional())
            .cloned()
            .collect()
    }

    #[test]
    fn every_flag_is_what_clap_s_definition_says() {
        for command in [Cli::command(), crate::cli::documented()] {
            let args = flags_of(command);
            for arg in &args {
                let id = arg.get_id().as_str();
                let flag = Flag::from_id(id).unwrap_or_else(|| panic!("{id} has no Flag"));
                assert_eq!(Some(flag.long()), arg.get_long(), "{id}");
                // The variable the parse reads (`env.rs` reads the one clap's definition gives).
                assert_eq!(flag.env(), arg.get_env().and_then(|v| v.to_str()), "{id}");
            }
            // Every Flag is an argument of the definition, and in its order.
            let in_order: Vec<&str> = args.iter().map(|a| a.get_id().as_str()).collect();
            let listed: Vec<&str> = Flag::ALL.iter().map(|f| f.id()).collect();
            assert_eq!(listed, in_order);
        }
    }

    #[test]
    fn a_flag_s_names_follow_one_another() {
        let mut seen = BTreeSet::new();
        for &flag in Flag::ALL {
            assert!(seen.insert(flag.id()), "{flag:?} listed twice");
            assert_eq!(flag.id(), flag.long().replace('-', "_"), "{flag:?}");
            if let Some(env) = flag.env() {
                let want = format!("RETRY_{}", flag.long().to_uppercase().replace('-', "_"));
                assert_eq!(env, want, "{flag:?}");
            }
            assert_eq!(Flag::from_id(flag.id()), Some(flag));
        }
        assert_eq!(Flag::BudgetStore.to_string(), "--budget-store");
        assert_eq!(Flag::BudgetStore.env(), Some("RETRY_BUDGET_STORE"));
        assert_eq!(Flag::DryRun.env(), None);
        assert_eq!(Flag::from_id("command"), None);
    }
}
