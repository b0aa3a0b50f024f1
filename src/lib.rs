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
pub mod generate;
pub mod github;
pub mod hints;
pub mod pipeline;
pub mod preset;
pub mod process;
pub mod report;
pub mod signals;
pub mod simulate;
pub mod spool;
pub mod status;
pub mod supervise;
#[cfg(target_os = "linux")]
pub mod waiter;

use std::ffi::OsString;
use std::io::Write;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::config::Config;
use crate::status::Exit;

/// Runs retry with these arguments (program name first) and returns how it must end.
/// Every error is printed once, on one line, as `retry: ...`.
pub fn run<I, T>(args: I) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = match cli::parse(args) {
        Ok(parsed) => parsed,
        Err(cli::Stop::Display(e)) => {
            let _ = e.print();
            return Exit::Code(0);
        }
        Err(cli::Stop::Usage(message)) => {
            eprintln!("retry: {message}");
            return Exit::Usage;
        }
    };
    if let Some(target) = parsed.cli.generate {
        return print_generated(target);
    }
    if parsed.cli.simulate.clients.is_some() {
        return simulate::run_cli(parsed.cli, &parsed.origins);
    }
    let config = match Config::from_cli(parsed.cli, &parsed.origins) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("retry: {e:#}");
            return Exit::Usage;
        }
    };
    if config.dry_run {
        let seed = config.seed.unwrap_or_else(rand::random);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut out = std::io::stdout().lock();
        // A closed stdout (`| head -1`) just ends the table.
        let _ = report::dry_run(
            &mut out,
            &config.policy,
            config.max_retries,
            config.deadline,
            &mut rng,
        )
        .and_then(|()| out.flush());
        return Exit::Code(0);
    }
    supervise::run(&config)
}

/// `--generate`: the man page or a completion script on stdout. A closed pipe just ends it.
fn print_generated(target: generate::Target) -> Exit {
    let mut out = std::io::stdout().lock();
    match generate::write(target, &mut out).and_then(|()| out.flush()) {
        Ok(()) => Exit::Code(0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::Code(0),
        Err(e) => {
            eprintln!(
                "retry: cannot write the generated {}: {e}",
                cli::value_name(&target)
            );
            Exit::Usage
        }
    }
}
