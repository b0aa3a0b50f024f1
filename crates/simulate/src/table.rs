//! The text output of a simulation: aligned tables of the means.

use std::io::{self, Write};

use crate::{Stats, SweepPoint};

/// The column headings; units are in the names.
const HEADINGS: [&str; 7] = [
    "mode",
    "clients",
    "time ms",
    "calls",
    "calls/client",
    "rejected",
    "gave up",
];

/// Writes the results as text tables, every number a mean over the runs.
///
/// One client count (a plain `--simulate`): one table, a row per mode, to compare them side by
/// side. Several (a sweep): a table per mode, a row per client count, tables apart by a blank
/// line. Columns: mode, clients, completion time (simulated ms), calls, calls per client,
/// rejected calls and clients that gave up. Nothing is written for no points.
///
/// # Errors
/// Those of `out`.
pub fn write_table<W: Write + ?Sized>(out: &mut W, points: &[SweepPoint]) -> io::Result<()> {
    let Some(first) = points.first() else {
        return Ok(());
    };
    if points.len() == 1 {
        return write_one(out, &first.stats);
    }
    for (i, mode) in first.stats.iter().map(|s| s.mode).enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let rows: Vec<Stats> = points
            .iter()
            .filter_map(|p| p.stats.iter().find(|s| s.mode == mode).copied())
            .collect();
        write_one(out, &rows)?;
    }
    Ok(())
}

/// One table: a heading line, then a line per entry of `rows`.
fn write_one<W: Write + ?Sized>(out: &mut W, rows: &[Stats]) -> io::Result<()> {
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|s| {
            [
                s.mode.name().to_string(),
                s.clients.to_string(),
                format!("{:.1}", s.completion_ms),
                format!("{:.1}", s.calls),
                format!("{:.2}", s.calls_per_client),
                format!("{:.1}", s.rejected),
                format!("{:.2}", s.gave_up),
            ]
        })
        .collect();
    write_aligned(out, HEADINGS, &cells)
}

/// Writes `headings` and the rows of `cells` as columns: the first left-aligned (a name), the
/// others right-aligned (numbers), each as wide as its widest cell, two spaces apart.
pub(crate) fn write_aligned<W: Write + ?Sized, const N: usize>(
    out: &mut W,
    headings: [&str; N],
    cells: &[[String; N]],
) -> io::Result<()> {
    let mut widths = headings.map(str::len);
    for row in cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |out: &mut W, row: [&str; N]| -> io::Result<()> {
        write!(out, "{:<w$}", row[0], w = widths[0])?;
        for (cell, w) in row.iter().zip(widths).skip(1) {
            write!(out, "  {cell:>w$}")?;
        }
        writeln!(out)
    };
    line(out, headings)?;
    for row in cells {
        line(out, row.each_ref().map(String::as_str))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mode;
    use retry_tool_backoff::Jitter;

    fn stats(mode: Mode, clients: u32, calls: f64) -> Stats {
        Stats {
            mode,
            clients,
            runs: 100,
            completion_ms: 1234.567,
            calls,
            calls_per_client: calls / f64::from(clients),
            rejected: calls - f64::from(clients),
            gave_up: 0.0,
        }
    }

    fn render(points: &[SweepPoint]) -> String {
        let mut out = Vec::new();
        write_table(&mut out, points).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_point_is_one_table_with_a_row_per_mode() {
        let full = Mode::Backoff(Jitter::Full);
        let text = render(&[SweepPoint {
            clients: 100,
            stats: vec![
                stats(full, 100, 1500.0),
                stats(Mode::NoBackoff, 100, 5050.0),
            ],
        }]);
        let expected = "\
mode        clients  time ms   calls  calls/client  rejected  gave up
full            100   1234.6  1500.0         15.00    1400.0     0.00
no-backoff      100   1234.6  5050.0         50.50    4950.0     0.00
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_sweep_is_a_table_per_mode() {
        let full = Mode::Backoff(Jitter::Full);
        let point = |c: u32| SweepPoint {
            clients: c,
            stats: vec![
                stats(full, c, 2.0 * f64::from(c)),
                stats(Mode::NoBackoff, c, 9.0),
            ],
        };
        let text = render(&[point(10), point(20)]);
        let tables: Vec<&str> = text.split("\n\n").collect();
        assert_eq!(tables.len(), 2, "{text}");
        assert!(tables[0].starts_with("mode "));
        assert_eq!(tables[0].lines().count(), 3);
        assert!(tables[0].lines().skip(1).all(|l| l.starts_with("full ")));
        assert!(
            tables[1]
                .lines()
                .skip(1)
                .all(|l| l.starts_with("no-backoff "))
        );
        assert_eq!(render(&[]), "");
    }
}
