//! The text output of a `failure-rate` simulation: aligned tables.

use std::io::{self, Write};

use super::{RatePoint, RateStats};

/// The column headings; units are in the names.
const HEADINGS: [&str; 7] = [
    "policy",
    "failure rate",
    "success %",
    "load",
    "retries/req",
    "spent %",
    "refused %",
];

/// Writes the results as text tables.
///
/// One failure rate: one table, a row per strategy, to compare them side by side. Several (a
/// sweep): a table per strategy, a row per failure rate, tables apart by a blank line. Columns:
/// the strategy, the failure rate, the requests that succeeded (%), the load (calls per
/// request), retries per request, the requests whose retry the token bucket refused (%) and
/// the requests the breaker refused without a call (%). Nothing is written for no points.
///
/// # Errors
/// Those of `out`.
pub fn write_failure_rate_table<W: Write + ?Sized>(
    out: &mut W,
    points: &[RatePoint],
) -> io::Result<()> {
    let Some(first) = points.first() else {
        return Ok(());
    };
    if points.len() == 1 {
        return write_one(out, &first.stats);
    }
    for (i, strategy) in first.stats.iter().map(|s| s.strategy).enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let rows: Vec<RateStats> = points
            .iter()
            .filter_map(|p| p.stats.iter().find(|s| s.strategy == strategy).copied())
            .collect();
        write_one(out, &rows)?;
    }
    Ok(())
}

/// One table: a heading line, then a line per entry of `rows`.
fn write_one<W: Write + ?Sized>(out: &mut W, rows: &[RateStats]) -> io::Result<()> {
    let percent =
        |n: u64, s: &RateStats| format!("{:.2}", 100.0 * n as f64 / f64::from(s.requests));
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|s| {
            [
                s.strategy.name().to_string(),
                format!("{:.2}", s.failure_rate),
                percent(s.succeeded, s),
                format!("{:.3}", s.load()),
                format!("{:.3}", s.retries_per_request()),
                percent(s.spent, s),
                percent(s.refused, s),
            ]
        })
        .collect();
    crate::table::write_aligned(out, HEADINGS, &cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure_rate::Strategy;

    fn stats(strategy: Strategy, failure_rate: f64, calls: u64) -> RateStats {
        RateStats {
            strategy,
            failure_rate,
            requests: 1000,
            succeeded: 500,
            gave_up: 400,
            spent: 100,
            refused: 100,
            calls,
            duration_ms: 1.0,
        }
    }

    fn render(points: &[RatePoint]) -> String {
        let mut out = Vec::new();
        write_failure_rate_table(&mut out, points).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_rate_is_one_table_with_a_row_per_strategy() {
        let text = render(&[RatePoint {
            failure_rate: 0.5,
            stats: vec![
                stats(Strategy::NoRetry, 0.5, 900),
                stats(Strategy::Breaker, 0.5, 1234),
            ],
        }]);
        let expected = "\
policy    failure rate  success %   load  retries/req  spent %  refused %
no-retry          0.50      50.00  0.900        0.000    10.00      10.00
breaker           0.50      50.00  1.234        0.334    10.00      10.00
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_sweep_is_a_table_per_strategy() {
        let point = |x: f64| RatePoint {
            failure_rate: x,
            stats: vec![
                stats(Strategy::Retries, x, 2000),
                stats(Strategy::Budget, x, 1000),
            ],
        };
        let text = render(&[point(0.0), point(0.05), point(1.0)]);
        let tables: Vec<&str> = text.split("\n\n").collect();
        assert_eq!(tables.len(), 2, "{text}");
        assert_eq!(tables[0].lines().count(), 4);
        assert!(tables[0].lines().skip(1).all(|l| l.starts_with("retries ")));
        assert!(tables[1].lines().skip(1).all(|l| l.starts_with("budget ")));
        assert!(tables[1].lines().nth(2).unwrap().contains(" 0.05 "));
        assert_eq!(render(&[]), "");
    }
}
