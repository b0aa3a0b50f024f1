//! What both simulations (contention and `--model failure-rate`) share: the check that no
//! COMMAND was given, the `--plot` file, the tables printed to stdout and the policy's curve
//! in their headings.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::cli::{Cli, Flag, Origins};

/// `--simulate`'s count, checking that no COMMAND was given, nor a loop shape on the command
/// line: the simulated clients stop at their first success, so `--forever`, `--successes` and
/// `--until-fail` would be silently ignored (an exported `RETRY_FOREVER`, meant for the runs of
/// a service, plays no part, as the other flags of a real run).
pub(super) fn count_without_command(cli: &Cli, origins: &Origins) -> Result<u32> {
    let Some(count) = cli.simulate.clients else {
        bail!("--simulate is missing");
    };
    let loops = &cli.loops;
    let shape = if loops.forever && !origins.is_env(Flag::Forever) {
        Some("--forever".to_string())
    } else if let Some(n) = loops.successes {
        Some(format!("--successes ({n})"))
    } else {
        loops.until_fail.then(|| "--until-fail".to_string())
    };
    if let Some(flag) = shape {
        bail!(
            "{flag} cannot be given with --simulate ({count}): each simulated client stops at \
             its first success"
        );
    }
    if let Some(word) = cli.command.first() {
        bail!(
            "--simulate runs no command, yet '{}' was given as one",
            word.to_string_lossy()
        );
    }
    Ok(count)
}

/// Creates `--plot`'s file before anything runs, so an unwritable path fails at once.
pub(super) fn create_plot(path: Option<PathBuf>) -> Result<Option<(PathBuf, File)>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let file =
        File::create(&path).with_context(|| format!("cannot write --plot {}", path.display()))?;
    Ok(Some((path, file)))
}

/// Writes the chart `svg` to `--plot`'s file, created by [`create_plot`].
pub(super) fn write_plot((path, mut file): (PathBuf, File), svg: &str) -> Result<()> {
    file.write_all(svg.as_bytes())
        .and_then(|()| file.flush())
        .with_context(|| format!("cannot write --plot {}", path.display()))
}

/// Prints the heading line `# {heading}` and the tables `table` writes to stdout; a closed
/// stdout (`| head`) just ends the output.
pub(super) fn print(
    heading: &str,
    table: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>,
) -> Result<()> {
    let mut out = io::stdout().lock();
    let printed = writeln!(out, "# {heading}")
        .and_then(|()| table(&mut out))
        .and_then(|()| out.flush());
    match printed {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write the simulation's table")
        }
        _ => Ok(()),
    }
}

/// The curve of `p` before jitter, as the simulator's headings show it: `base 1s, multiplier
/// 2, cap 64s`, or `delays [1s, 5s]` for a list (`--delays`).
pub(super) fn curve(p: &retry_tool_backoff::Policy) -> String {
    match p.delays() {
        Some(delays) => format!("delays {delays:?}"),
        None => format!(
            "base {:?}, multiplier {}, cap {:?}",
            p.base(),
            p.multiplier(),
            p.cap()
        ),
    }
}
