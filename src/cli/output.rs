//! The "Output" heading: stdin replay, held stdout, `--dry-run`, retry's own progress lines
//! and what it tells GitHub Actions.

// The doc comments below are the help text, written for a terminal: `RETRY_<FLAG>` is not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::str::FromStr;

use clap::Args;
use clap::builder::BoolishValueParser;

use crate::types::{ColorWhen, LogFormat};

/// The "Output" heading: what retry prints and what the attempts see of stdin and stdout.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Give every attempt the same stdin: read it once, replay it from the start
    ///
    /// Attempt 1 streams stdin as it arrives; later attempts get the full recorded copy.
    /// Memory stays bounded: past 8 MiB the copy spills to an unlinked temporary file (mode
    /// 0600 in TMPDIR), gone however retry ends; --max-replay bounds the file. If stdin cannot
    /// be read or recorded (TMPDIR missing or full), no attempt is given part of it as if it
    /// were all: retry stops, says why and exits 125 (or with the status of an attempt that
    /// failed before it read that far).
    #[arg(long)]
    pub replay_stdin: bool,

    /// Most bytes of stdin --replay-stdin records, or "unlimited" [default: 4GiB]
    ///
    /// Bounds the disk a reader that never ends (`yes | retry --replay-stdin ...`) can fill.
    /// SIZE is bytes with an optional unit, case-insensitive, the B optional: K, M, G, T are
    /// powers of 1000, Ki, Mi, Gi, Ti powers of 1024 (10000, 512MiB, 1.5G). When stdin goes on
    /// past it, recording stops: an attempt still reading sees its stdin end there, no later
    /// attempt starts, and retry exits 125 (or with the status of an attempt that failed
    /// before it read that far).
    #[arg(allow_hyphen_values = true, long, env = "RETRY_MAX_REPLAY",
          value_name = "SIZE|unlimited", value_parser = ByteLimit::from_str)]
    pub max_replay: Option<ByteLimit>,

    /// Hold each attempt's stdout; print it only if that attempt succeeds
    ///
    /// stdout then carries the successful attempt's output only (followed by whatever the
    /// processes it left running still write, until they close it). A failed attempt's held
    /// stdout goes to stderr, so nothing is lost. Memory stays bounded as with --replay-stdin.
    #[arg(long)]
    pub stdout_on_success: bool,

    /// Hold all output; print it only if the run does not succeed (like chronic)
    ///
    /// For cron, which mails whatever a job prints: every attempt's stdout and stderr, the
    /// hooks' output and retry's own lines are held, in the order they came. If the run
    /// succeeds, nothing is printed at all. If it gives up (or is stopped by a signal),
    /// everything held is written out in order, attempt by attempt with retry's lines between
    /// them (stdout to stdout, stderr to stderr), ending with the give-up line; a stop signal
    /// leaves the write-out at most half a second. With --stdout-on-success the successful
    /// attempt's stdout is still printed. Memory stays bounded: past 8 MiB the held output
    /// spills to an unlinked temporary file (mode 0600 in TMPDIR); past --max-output the
    /// oldest is dropped, and a line says how much. If the held output cannot be written out,
    /// retry says so and never exits 0. RETRY_CHRONIC=true (or 1, yes, on) sets it too.
    #[arg(long, env = "RETRY_CHRONIC", value_parser = BoolishValueParser::new())]
    pub chronic: bool,

    /// Most bytes of output --chronic holds, or "unlimited" [default: 64MiB]
    ///
    /// The most recent output is kept; what came before it is dropped, and the write-out
    /// starts with a line saying how much. SIZE as for --max-replay (10000, 512MiB, 1.5G).
    #[arg(allow_hyphen_values = true, long, env = "RETRY_MAX_OUTPUT",
          value_name = "SIZE|unlimited", value_parser = ByteLimit::from_str)]
    pub max_output: Option<ByteLimit>,

    /// Print the planned schedule and exit; runs nothing
    ///
    /// One row per planned retry: its number, the delay, and the cumulative delay, exactly to
    /// the millisecond (at most 20 rows when unlimited; rows that reach --deadline are left
    /// out). With --log-format json, one JSON object per row and per line after the table, on
    /// stdout. Use --seed to reproduce a schedule, and with --preset to see a published
    /// policy.
    #[arg(long)]
    pub dry_run: bool,

    /// Silence retry's own progress lines (never its errors)
    ///
    /// The command's own output is untouched; only retry's lines on stderr about failed
    /// attempts and giving up are dropped.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// More detail: the command's arguments, each attempt's start and duration, the seed
    ///
    /// Also prints the backoff policy in effect once at the start, after flags, presets and
    /// RETRY_<FLAG> variables have been applied.
    #[arg(short, long)]
    pub verbose: bool,

    /// Format of retry's own progress: text or json [default: text]
    ///
    /// json writes one JSON object per line on stderr for each event: attempt_start,
    /// attempt_end (with its status), wait (with the delay, and the server hint that set it),
    /// reset, hook, give_up, success and interrupted, each with "elapsed" seconds since retry
    /// started and the run's "run_id" (RETRY_RUN_ID), for CI systems to parse; with --splay
    /// and --budget also splay, budget (tokens left, the breaker's state), cooldown, refused
    /// and warning. --quiet silences them too, but for errors and warnings.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text,
          hide_default_value = true)]
    pub log_format: LogFormat,

    /// When to colour retry's own words: auto, always or never [default: auto]
    ///
    /// Colours only retry's lines on stderr, never the command's output or JSON events: the
    /// closing line of a run that gave up in red, of one that succeeded after retries in
    /// green, the name of a server hint that set a delay in cyan. auto colours when stderr is
    /// a terminal whose TERM is not dumb, unless NO_COLOR is set and not empty (no-color.org);
    /// CLICOLOR_FORCE set and not empty (0 too) colours even into a pipe. always and never
    /// override both. RETRY_COLOR sets it too.
    #[arg(long, value_name = "WHEN", value_enum, env = "RETRY_COLOR",
          default_value_t = ColorWhen::Auto, hide_default_value = true)]
    pub color: ColorWhen,

    /// Tell GitHub Actions nothing: no folds, annotations, step outputs or step summary
    ///
    /// Under GitHub Actions (GITHUB_ACTIONS=true) retry puts each attempt's output between
    /// ::group::attempt N of M and ::endgroup::; writes a ::warning workflow command when the
    /// command succeeded only after retries, and an ::error when it gives up, naming the
    /// attempts and their statuses (on stderr, which the runner reads as it does stdout);
    /// appends attempts=N and status=S to the file named by GITHUB_OUTPUT, for
    /// `steps.<id>.outputs.attempts`; and, when the run needed retries or gave up, a Markdown
    /// table of the attempts (status, duration, delay after, hint) to GITHUB_STEP_SUMMARY. If
    /// one of these files cannot be written, retry says so and does not exit 0 (125 instead).
    /// RETRY_NO_GITHUB=true (or 1, yes, on) sets it too.
    #[arg(long, env = "RETRY_NO_GITHUB", value_parser = BoolishValueParser::new())]
    pub no_github: bool,

    /// Tell no CI system anything: no folds, and --no-github
    ///
    /// Under GitHub Actions (GITHUB_ACTIONS=true) retry puts each attempt's output in a
    /// ::group::attempt N of M fold (and see --no-github for the rest); under GitLab CI
    /// (GITLAB_CI=true) in a collapsed section; under Buildkite (BUILDKITE=true) under a
    /// `--- attempt N of M` group header. --no-ci turns all of it off; --no-github only
    /// GitHub Actions' part. RETRY_NO_CI=true (or 1, yes, on) sets it too.
    #[arg(long, env = "RETRY_NO_CI", value_parser = BoolishValueParser::new())]
    pub no_ci: bool,
}

/// `--max-replay`: a size in bytes or `unlimited` (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteLimit(pub Option<u64>);

impl FromStr for ByteLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("unlimited") {
            return Ok(ByteLimit(None));
        }
        crate::size::parse_size(s).map(|n| ByteLimit(Some(n)))
    }
}
