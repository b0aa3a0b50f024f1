//! The "Stopping" heading: `--max-retries`, `--reset-after`, `--deadline`, `--timeout`,
//! `--idle-timeout`, `--kill-after`, `--signal`, `--preserve-status`.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::str::FromStr;
use std::time::Duration;

use clap::Args;
use clap::builder::BoolishValueParser;

use crate::duration::parse_duration;
use crate::stop_signal::StopSignal;
use crate::types::RetryLimit;

/// The "Stopping" heading: when retry gives up, and how an attempt is stopped.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Stopping")]
pub struct StoppingArgs {
    /// Retries after the first attempt, or "unlimited" [default: 5]
    ///
    /// The default 5 means at most 6 attempts in all. Attempts see their number and this
    /// limit plus one in RETRY_ATTEMPT and RETRY_MAX_ATTEMPTS. With --forever it limits the
    /// runs in a row that end within --reset-after (a crash loop), and is unlimited unless
    /// given.
    #[arg(allow_hyphen_values = true, short = 'n', long, env = "RETRY_MAX_RETRIES",
          value_name = "N|unlimited", value_parser = RetryLimit::from_str)]
    pub max_retries: Option<RetryLimit>,

    /// An attempt that ran this long before failing starts the schedule afresh
    ///
    /// The next delay is the first one again and the retries start anew: attempts keep their
    /// numbers, and after a reset at attempt K the run may go on to attempt K + --max-retries
    /// (RETRY_MAX_ATTEMPTS says so). `retry -n 5 --reset-after 10m -- ssh -N tunnel` gives up
    /// after five quick failures in a row but keeps a tunnel that stays up for hours. 0 means
    /// never. With --forever a run counts whatever it exited with, and the default is 1m.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_RESET_AFTER", value_name = "DURATION",
          value_parser = parse_duration)]
    pub reset_after: Option<Duration>,

    /// Total time budget from the start
    ///
    /// Measured on a monotonic clock. An attempt or --on-retry hook still running when it
    /// passes is stopped like a timeout; no attempt starts after it; if the next delay would end
    /// at or past it, retry gives up at once instead of sleeping. 0 means no deadline (it lifts
    /// a preset's).
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_DEADLINE",
          value_name = "DURATION", value_parser = parse_duration)]
    pub deadline: Option<Duration>,

    /// Time limit for each attempt
    ///
    /// A timed-out attempt gets TERM (its whole process tree), then KILL after --kill-after;
    /// its status is 124, or 137 if KILL was needed, and it is retried like any failure. When
    /// the last attempt needed KILL, retry dies of KILL itself, as coreutils timeout does. 0
    /// means no limit, as for coreutils timeout.
    #[arg(allow_hyphen_values = true, short, long, env = "RETRY_TIMEOUT",
          value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Stop an attempt that writes nothing on stdout or stderr for this long
    ///
    /// A stall is a failure: the attempt is stopped like a timeout (TERM to its whole process
    /// tree, KILL after --kill-after; status 124, or 137), the progress line says it was idle,
    /// and it is retried like any failure. Its stdout and stderr become pipes that retry
    /// passes on as the output comes (a program that buffers its output when it is not
    /// writing to a terminal may need `stdbuf -oL` or its own flag). Time retry spends passing
    /// output on to a slow reader is not silence; an attempt waiting for its stdin is silent.
    /// 0 means no limit.
    #[arg(allow_hyphen_values = true, long, env = "RETRY_IDLE_TIMEOUT",
          value_name = "DURATION", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,

    /// Grace between TERM and KILL when an attempt is stopped [default: 10s]
    ///
    /// Applies to timeouts, the deadline, a stop signal sent to retry (INT, TERM, HUP, QUIT),
    /// and whatever a failed attempt or a hook leaves running: anything still alive this long
    /// after the signal gets KILL (the whole process tree). 0 means never KILL, as for coreutils timeout: retry waits for the
    /// attempt to end.
    #[arg(allow_hyphen_values = true, short = 'k', long, env = "RETRY_KILL_AFTER",
          value_name = "DURATION", value_parser = parse_duration)]
    pub kill_after: Option<Duration>,

    /// Signal that stops a timed-out attempt, instead of TERM
    ///
    /// A name (INT, SIGINT, RTMIN+1, any case) or a number, as for coreutils timeout -s: sent
    /// to the attempt's whole process tree, then CONT, when --timeout, --idle-timeout or
    /// --deadline stops it (and to an --on-retry hook stopped at the deadline); KILL follows
    /// after --kill-after, counted from it. 0 sends nothing: only that KILL stops the attempt.
    /// The status stays 124 (137 if KILL was needed, or with -s KILL). A signal sent to retry
    /// itself is still passed on as itself. On Windows only INT and BREAK (the default there),
    /// sent as Ctrl-Break to the attempt's process group; the job is terminated after
    /// --kill-after.
    #[arg(allow_hyphen_values = true, short = 's', long, env = "RETRY_SIGNAL",
          value_name = "SIGNAL", value_parser = StopSignal::from_str)]
    pub signal: Option<StopSignal>,

    /// End as a timed-out last attempt ended, not with 124 or 137
    ///
    /// When the last attempt was stopped by --timeout, --idle-timeout or --deadline, retry
    /// exits with that attempt's own status, or dies of the signal that ended it (143 in a
    /// shell after TERM), as coreutils timeout --preserve-status does. Whether a timed-out
    /// attempt is retried does not change: --retry-on, --stop-on and the progress lines still
    /// see 124 (137).
    #[arg(long, env = "RETRY_PRESERVE_STATUS", value_parser = BoolishValueParser::new())]
    pub preserve_status: bool,
}
