//! The "Hooks" heading: `--on-retry`, `--on-retry-fail` and `--on-give-up`.

use clap::Args;

use crate::types::HookFailure;

/// The "Hooks" heading: commands run around the retrying.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Hooks")]
pub struct HookArgs {
    /// Run CMD with `sh -c` before each retry
    ///
    /// Runs after a failed attempt, before the wait, with RETRY_ATTEMPT (the attempt that
    /// failed), RETRY_MAX_ATTEMPTS, RETRY_LAST_STATUS, RETRY_DELAY (seconds, three decimals),
    /// RETRY_RUN_ID, RETRY_TIME_LEFT and RETRY_ENV_FILE added to the inherited environment (and
    /// what earlier attempts and hooks appended to RETRY_ENV_FILE). Its stdout goes to retry's
    /// stderr, its stdin is /dev/null. A failing hook is reported; retrying goes on
    /// unless --on-retry-fail stop.
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
    /// With RETRY_ATTEMPT, RETRY_MAX_ATTEMPTS, RETRY_LAST_STATUS, RETRY_RUN_ID, RETRY_TIME_LEFT
    /// and RETRY_ENV_FILE added to the inherited environment; its stdout goes to retry's stderr.
    /// Not run on success, nor when a signal stops retry. Its own status does not change retry's.
    #[arg(long, value_name = "CMD")]
    pub on_give_up: Option<String>,
}
