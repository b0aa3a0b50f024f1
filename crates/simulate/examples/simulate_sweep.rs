//! Times the full `occ` sweep of the AWS blog's experiment through the `retry_tool_simulate` API:
//! 10, 20 ... 190 clients, base 5 ms, cap 2 s, 100 runs per point, and prints the elapsed time
//! and the tables. Run by `benches/simulate.sh`.
//!
//! Usage: `simulate_sweep [--modes LIST] [--threads N] [--runs R] [--clients N] [--seed S]
//! [--capacity RPS] [--plot FILE.svg]`. The default modes are the five jitter modes (`none,
//! full,equal,decorrelated,additive`); `--capacity` switches to the `rate-limit` model.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use retry_tool_simulate::{Mode, Model, SimSpec, sweep, write_svg, write_table};

fn main() -> Result<()> {
    let mut spec = SimSpec {
        modes: Mode::parse_list("none,full,equal,decorrelated,additive")?,
        seed: 1,
        ..SimSpec::aws_blog(190)
    };
    let mut plot: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--modes" => spec.modes = Mode::parse_list(&value()?)?,
            "--threads" => spec.threads = value()?.parse()?,
            "--runs" => spec.runs = value()?.parse()?,
            "--clients" => spec.clients = value()?.parse()?,
            "--seed" => spec.seed = value()?.parse()?,
            "--capacity" => {
                spec.model = Model::RateLimit {
                    capacity_rps: value()?.parse()?,
                }
            }
            "--plot" => plot = Some(value()?.into()),
            _ => bail!("unknown argument {flag}"),
        }
    }

    let start = Instant::now();
    let points = sweep(&spec)?;
    let elapsed = start.elapsed();
    let threads = if spec.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        spec.threads
    };
    if let Some(path) = &plot {
        let title = format!(
            "{}: base {:?}, cap {:?}, mean of {} runs",
            spec.model,
            spec.policy.base(),
            spec.policy.cap(),
            spec.runs
        );
        write_svg(path, &points, &title)?;
    }
    let mut out = std::io::stdout().lock();
    let printed = writeln!(
        out,
        "{} sweep: {} client counts x {} modes x {} runs on {threads} threads: {:.2} s\n",
        spec.model,
        points.len(),
        spec.modes.len(),
        spec.runs,
        elapsed.as_secs_f64()
    )
    .and_then(|()| write_table(&mut out, &points))
    .and_then(|()| match &plot {
        Some(path) => writeln!(out, "\nplot written to {}", path.display()),
        None => Ok(()),
    });
    match printed {
        // `| head -1` closed the pipe: the timing line was what mattered.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    Ok(())
}
