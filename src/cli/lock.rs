//! The "One run at a time" heading: `--lock` and `--lock-wait`, the single-instance lock cron
//! users otherwise get from `flock(1)`.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::{Args, ValueHint};

use crate::duration::parse_duration;

/// The "One run at a time" heading: a lock held for the whole run.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "One run at a time")]
pub struct LockArgs {
    /// Run only while holding an exclusive lock on PATH, for cron jobs
    ///
    /// retry takes flock(2) LOCK_EX on PATH (created 0600 if missing; refused if it is a
    /// symlink, not a regular file, owned by another user or writable by others) before
    /// anything else, holds it across every attempt, wait and hook, and releases it when it
    /// ends (the kernel releases it too if retry is killed). PATH then holds the holder's pid,
    /// if it was empty or held a pid: any other content (a script locking itself) is never
    /// written over.
    /// If another run holds it, retry waits up to --lock-wait, then exits 75 without running
    /// the command, with one line naming PATH and the holder's pid. Attempts and hooks do not
    /// inherit the lock: a daemon an attempt leaves running does not keep it. retry never
    /// removes PATH (a run that found it removed would take a new lock beside the old one).
    /// A PATH that cannot be opened or locked: one line and 125. Local file systems only.
    #[arg(long, env = "RETRY_LOCK", value_name = "PATH", value_hint = ValueHint::FilePath,
          value_parser = OsStringValueParser::new().try_map(lock_path))]
    pub lock: Option<PathBuf>,

    /// How long to wait for --lock when another run holds it [default: 0]
    ///
    /// 0: do not wait, exit 75 at once; inf: wait as long as it takes. Counted against
    /// --deadline (the wait ends there too, with 75), and a stop signal ends it at once.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_LOCK_WAIT", value_name = "DURATION",
          value_parser = parse_duration)]
    pub lock_wait: Option<Duration>,
}

/// `--lock`: any path but the empty one.
fn lock_path(value: OsString) -> Result<PathBuf, String> {
    if value.is_empty() {
        return Err("expected the path of a lock file".into());
    }
    Ok(PathBuf::from(value))
}
