//! retry: run a command again, with exponential backoff and jitter, until it succeeds.
//!
//! Data flows one way: [`cli`] parses, [`config`] validates, [`supervise`] runs attempts
//! (using the pure [`backoff`] maths, [`process`] control and [`signals`]), and [`status`]
//! says how retry ends. The backoff maths and the contention simulator are crates of their
//! own in this workspace: `retry-tool-backoff` (re-exported as [`backoff`]) and
//! `retry-tool-simulate`, which [`simulate`] drives from the command line.

/// The backoff maths: the `retry-tool-backoff` crate of this workspace.
pub use retry_tool_backoff as backoff;

pub mod budget;
pub mod cli;
pub mod codes;
pub mod config;
pub mod duration;
pub mod github;
pub mod hints;
pub mod pipeline;
pub mod preset;
pub mod process;
pub mod report;
pub mod signals;
pub mod simulate;
pub mod size;
pub mod spool;
pub mod status;
pub mod supervise;
#[cfg(target_os = "linux")]
pub mod waiter;

use std::ffi::OsString;
use std::io::{self, Write};
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::config::{Config, LogFormat};
use crate::status::Exit;

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
        Err(cli::Stop::Display(e)) => {
            let _ = e.print();
            return Exit::Code(0);
        }
        Err(cli::Stop::Usage(message)) => {
            report::error(cli::log_format_of(&args), start, &message);
            return Exit::Usage;
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
            return Exit::Usage;
        }
    };
    if config.dry_run {
        let seed = config.seed.unwrap_or_else(rand::random);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut out = io::stdout().lock();
        let written = report::dry_run(
            &mut out,
            &config.policy,
            config.max_retries,
            config.deadline,
            &mut rng,
        )
        .and_then(|()| out.flush());
        return written_or_125(written, "the --dry-run schedule", format, start);
    }
    supervise::run(&config)
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
            Exit::Usage
        }
    }
}
