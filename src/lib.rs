//! retry: run a command again, with exponential backoff and jitter, until it succeeds.
//!
//! Data flows one way: [`cli`] parses, [`config`] validates, [`supervise`] runs attempts
//! (using the pure [`backoff`] maths, [`process`] control and [`signals`]), and [`status`]
//! says how retry ends.

pub mod backoff;
pub mod cli;
pub mod codes;
pub mod config;
pub mod duration;
pub mod pipeline;
pub mod process;
pub mod report;
pub mod signals;
pub mod simulate;
pub mod spool;
pub mod status;
pub mod supervise;

use std::ffi::OsString;
use std::io::Write;

use clap::Parser;
use clap::error::ErrorKind;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::cli::Cli;
use crate::config::Config;
use crate::status::Exit;

/// Runs retry with these arguments (program name first) and returns how it must end.
/// Every error is printed once, on one line, as `retry: ...`.
pub fn run<I, T>(args: I) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return Exit::Code(0);
        }
        Err(e) => {
            eprintln!("retry: {}", one_line(&e.render().to_string()));
            return Exit::Usage;
        }
    };
    let config = match Config::from_cli(cli) {
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

/// clap's multi-line error as one line: the message, without the usage and help hints.
fn one_line(rendered: &str) -> String {
    let message = rendered
        .split("\n\nUsage:")
        .next()
        .unwrap_or(rendered)
        .split("\n\nFor more information")
        .next()
        .unwrap_or(rendered);
    let message = message.strip_prefix("error: ").unwrap_or(message);
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect::<Vec<_>>()
        .join(" ")
}
