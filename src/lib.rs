//! retry: run a command again, with exponential backoff and jitter, until it succeeds.
//!
//! Data flows one way, top to bottom, and no module imports one above it (ARCHITECTURE.md at
//! the repository's root draws it): the command line is parsed ([`cli`]) and validated into a
//! [`config::Config`] ([`config`], layering [`preset`]s and `RETRY_<FLAG>` variables);
//! [`supervise`] runs the attempts and emits run events ([`observe`]) to the observers
//! [`observers`] chooses ([`report`], [`ci`], [`chronic`], [`telemetry`]); under it
//! [`process`], [`signals`], [`pipeline`], [`budget`], [`net`] and the other parts do what it
//! asks; at the bottom the small values everything shares, and [`status`], which says how
//! retry ends ([`finish`] turns it into the process's end). `--simulate` goes from [`cli`] to
//! [`simulate`] instead. The backoff maths and the contention simulator are crates of their
//! own in this workspace: `retry-tool-backoff` (re-exported as [`backoff`]) and
//! `retry-tool-simulate`.

/// The backoff maths: the `retry-tool-backoff` crate of this workspace.
pub use retry_tool_backoff as backoff;

// The entry: the C entry point, and the one place that names every observer.
pub mod observers;
#[cfg(unix)]
pub mod start;

// The command line and its validated settings; `--simulate`.
pub mod cli;
pub mod config;
pub mod preset;
pub mod simulate;

// The run: the supervisor, its events, and the observers that hear them.
pub mod chronic;
pub mod ci;
pub mod observe;
pub mod report;
pub mod supervise;
pub mod telemetry;

// What the supervisor uses: processes and signals, the attempts' I/O, the service's
// protection, the network, and the run's files.
pub mod budget;
pub mod env_file;
pub mod held;
pub mod hints;
pub mod lock;
pub mod net;
pub mod outlet;
pub mod pipeline;
pub mod process;
pub mod signals;
pub mod spool;
pub mod transient;

// The small values everything shares, and how retry ends.
pub mod codes;
pub mod duration;
pub mod entropy;
pub mod escape;
pub mod http_status;
pub mod signal_names;
pub mod size;
pub mod status;
pub mod stop_signal;
pub mod types;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::config::Config;
use crate::status::Exit;
use crate::types::LogFormat;

/// Runs retry with these arguments (program name first) and returns how it must end.
/// Every error is printed once, on one line, as `retry: ...`, or as a JSON `error` event with
/// `--log-format json` (known once the command line parses, or clap could read that flag).
pub fn run<I, T>(args: I) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let start = Instant::now();
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed = match cli::parse(args.iter().cloned()) {
        Ok(parsed) => parsed,
        Err(cli::Stop::Display(text)) => {
            // Styled on a terminal only (anstream honours NO_COLOR and CLICOLOR_FORCE); a
            // reader that went away just ends it.
            let mut out = anstream::stdout().lock();
            let written = write!(out, "{}", text.ansi()).and_then(|()| out.flush());
            return written_or_125(written, "the help", cli::log_format_of(&args), start);
        }
        Err(cli::Stop::Usage(message)) => {
            report::error(cli::log_format_of(&args), start, &message);
            return Exit::OwnFailure;
        }
    };
    let format = parsed.cli.output.log_format;
    if let Some(target) = parsed.cli.generate {
        let mut out = io::stdout().lock();
        let written = cli::generate::write(target, &mut out).and_then(|()| out.flush());
        let what = format!("the generated {}", cli::value_name(&target));
        return written_or_125(written, &what, format, start);
    }
    if parsed.cli.simulate.clients.is_some() {
        return simulate::run_cli(parsed.cli, &parsed.origins);
    }
    let config = match Config::from_cli(parsed.cli, &parsed.origins) {
        Ok(config) => config,
        Err(e) => {
            report::error(format, start, &format!("{e:#}"));
            return Exit::OwnFailure;
        }
    };
    if config.dry_run {
        let seed = config.seed.unwrap_or_else(crate::entropy::seed);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        // The first draw of the seed's sequence, as in a run.
        let splay = config
            .protect
            .splay
            .map(|max| backoff::splay(max, &mut rng));
        let mut notes: Vec<_> = report::StopPlan::of(&config)
            .dry_run_line()
            .map(|words| (report::NoteAbout::Stop, words))
            .into_iter()
            .collect();
        notes.extend(report::dry_run_loop(
            config.rules.shape,
            config.policy.base(),
            config.rules.reset_after,
            config.lock.as_ref().map(|l| (l.path.as_path(), l.wait)),
        ));
        if let Some(classes) = config.rules.transient {
            notes.push((
                report::NoteAbout::Transient,
                report::transient_note(classes),
            ));
        }
        let plan = report::DryRun {
            policy: &config.policy,
            max_retries: config.rules.max_retries,
            deadline: config.deadline,
            splay,
            notes,
            format,
            start,
        };
        let mut out = io::stdout().lock();
        let written = report::dry_run(&mut out, &plan, &mut rng);
        return written_or_125(written, "the --dry-run schedule", format, start);
    }
    supervise::run(&config, observers::of)
}

/// How output retry writes itself (`--dry-run`, `--generate`) ends: 0 when `written`, and also
/// when the reader went away (`| head -1` just ends it); otherwise the error is reported and
/// the status is 125.
fn written_or_125(written: io::Result<()>, what: &str, format: LogFormat, start: Instant) -> Exit {
    match written {
        Ok(()) => Exit::Code(0),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Exit::Code(0),
        Err(e) => {
            report::error(format, start, &format!("cannot write {what}: {e}"));
            Exit::OwnFailure
        }
    }
}

/// On Windows, where a process cannot die of a signal: a run that a console's Ctrl-C, Ctrl-Break
/// or close ended between attempts ends with `STATUS_CONTROL_C_EXIT` (3221225786), as a console
/// program ended by Ctrl-C does; a job retry terminated with 137; an exit code with all its 32
/// bits (`ExitCode` takes only 8, so through `process::exit`, which flushes stdout first).
#[cfg(windows)]
fn finish_windows(exit: Exit) {
    /// `STATUS_CONTROL_C_EXIT`, NTSTATUS 0xC000013A.
    const CONTROL_C_EXIT: u32 = 0xC000_013A;
    let code = match exit {
        Exit::Signal(n) if signals::is_stop(n) => CONTROL_C_EXIT,
        other => other.code(),
    };
    // The exit code is the u32's bits, which `process::exit` takes as an i32.
    std::process::exit(code.cast_signed());
}

/// Ends the process with `exit`, for `main` to return: for [`Exit::Signal`], by raising that
/// signal (with core dumps disabled) so that the parent sees the same death as the attempt's;
/// otherwise, or when the signal does not end the process, as the exit code [`Exit::code`].
pub fn finish(exit: Exit) -> ExitCode {
    #[cfg(unix)]
    if let Exit::Signal(n) = exit {
        process::die_by_signal(n);
    }
    #[cfg(windows)]
    finish_windows(exit);
    ExitCode::from(exit.status())
}
