//! What the Windows build cannot serve yet, refused before anything runs with one line naming
//! the flag (or its `RETRY_<FLAG>` variable) and 125, never silently ignored: the flags that
//! pass an attempt's stdin or output through retry (the pipeline is not built on Windows,
//! `src/pipeline/windows.rs`). docs/platforms.md lists them.

use anyhow::{Result, bail};

use crate::cli::Origins;
use crate::pipeline;

/// Refuses the first pipeline flag `settings` has on: `--replay-stdin`,
/// `--stdout-on-success`, `--chronic`, `--retry-if-output`, `--stop-if-output`,
/// `--delay-from-output`, `--http-hints`, `--idle-timeout`.
///
/// # Errors
/// One line naming the flag, or its variable when the value came from there.
pub(super) fn refuse_unavailable(settings: &pipeline::Settings, origins: &Origins) -> Result<()> {
    let flags = [
        (settings.replay_stdin, "replay_stdin"),
        (settings.stdout_on_success, "stdout_on_success"),
        (settings.chronic, "chronic"),
        (!settings.retry_if_output.is_empty(), "retry_if_output"),
        (!settings.stop_if_output.is_empty(), "stop_if_output"),
        (!settings.delay_from_output.is_empty(), "delay_from_output"),
        (settings.http_hints, "http_hints"),
        (settings.idle_timeout.is_some(), "idle_timeout"),
    ];
    if let Some(&(_, id)) = flags.iter().find(|(on, _)| *on) {
        let named = if origins.is_env(id) {
            format!("RETRY_{}", id.to_uppercase())
        } else {
            format!("--{}", id.replace('_', "-"))
        };
        bail!(
            "{named} is not available on Windows: retry there passes an attempt's stdin and \
             output straight through (docs/platforms.md)"
        );
    }
    Ok(())
}
