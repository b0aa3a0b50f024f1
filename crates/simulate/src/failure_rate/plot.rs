//! The SVG chart of a `failure-rate` sweep, after the figures of Brooker's "Fixing retries with
//! token buckets and circuit breakers": the requests that succeed and the load on the service
//! against the failure rate, a line per strategy. Drawn with plotters' SVG backend only.

use plotters::prelude::*;

use super::{RatePoint, RateStats, Strategy};
use crate::plot::{PlotError, SIZE, plot_error};

/// A fixed colour per strategy ("tab10" colours; `no-retry` grey).
fn colour(strategy: Strategy) -> RGBColor {
    match strategy {
        Strategy::NoRetry => RGBColor(110, 110, 110),
        Strategy::Retries => RGBColor(214, 39, 40),
        Strategy::Budget => RGBColor(31, 119, 180),
        Strategy::Breaker => RGBColor(44, 160, 44),
    }
}

/// Renders `points` (a [`super::sweep_failure_rates`]) as an SVG document with two charts side
/// by side, under `title`: the requests that succeeded (%) and the load (calls per request)
/// against the failure rate, a line per strategy, on linear axes.
///
/// # Errors
/// If `points` is empty, or plotters fails.
pub fn render_failure_rate_svg(points: &[RatePoint], title: &str) -> Result<String, PlotError> {
    if points.is_empty() {
        return Err(PlotError::Empty);
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let root = root.titled(title, ("sans-serif", 16)).map_err(plot_error)?;
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        let success = Panel {
            caption: "Requests that succeed",
            unit: "% of requests",
            metric: |s| 100.0 * s.success(),
            legend: SeriesLabelPosition::LowerLeft,
        };
        success.draw(&left, points)?;
        let load = Panel {
            caption: "Load on the service",
            unit: "calls per request",
            metric: RateStats::load,
            legend: SeriesLabelPosition::UpperLeft,
        };
        load.draw(&right, points)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// One chart of the two.
struct Panel {
    caption: &'static str,
    unit: &'static str,
    metric: fn(&RateStats) -> f64,
    /// Where the legend stays clear of the lines.
    legend: SeriesLabelPosition,
}

impl Panel {
    /// Draws `metric` of every strategy against the failure rate, from 0 to its largest value.
    fn draw(
        &self,
        area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        points: &[RatePoint],
    ) -> Result<(), PlotError> {
        let hi = points
            .iter()
            .flat_map(|p| p.stats.iter().map(self.metric))
            .fold(0.0_f64, f64::max);
        let hi = if hi > 0.0 { hi * 1.08 } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .caption(self.caption, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..1.0_f64, 0.0..hi)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("failure rate (probability that a call fails)")
            .y_desc(self.unit)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .x_labels(11)
            .x_label_formatter(&|v| format!("{v:.1}"))
            .draw()
            .map_err(plot_error)?;
        for (i, strategy) in points[0].stats.iter().map(|s| s.strategy).enumerate() {
            let colour = colour(strategy);
            let line = points
                .iter()
                .filter_map(|p| p.stats.get(i).filter(|s| s.strategy == strategy))
                .map(|s| (s.failure_rate, (self.metric)(s)));
            chart
                .draw_series(LineSeries::new(line, colour.stroke_width(2)).point_size(3))
                .map_err(plot_error)?
                .label(strategy.name())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(self.legend.clone())
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(plot_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    fn sweep() -> Vec<RatePoint> {
        super::super::sweep_rates()
            .into_iter()
            .map(|x| RatePoint {
                failure_rate: x,
                stats: Strategy::VARIANTS
                    .iter()
                    .enumerate()
                    .map(|(i, &strategy)| RateStats {
                        strategy,
                        failure_rate: x,
                        requests: 100,
                        succeeded: (100.0 * (1.0 - x)) as u64,
                        gave_up: 100 - (100.0 * (1.0 - x)) as u64,
                        spent: 0,
                        refused: 0,
                        calls: 100 + (i as f64 * 100.0 * x) as u64,
                        duration_ms: 1.0,
                    })
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn renders_an_svg_with_a_line_and_a_legend_entry_per_strategy() {
        let svg = render_failure_rate_svg(&sweep(), "failure-rate, 100 requests").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("failure-rate, 100 requests"));
        assert!(svg.contains("Requests that succeed") && svg.contains("Load on the service"));
        for &strategy in Strategy::VARIANTS {
            let label = format!("\n{}\n</text>", strategy.name());
            assert_eq!(svg.matches(&label).count(), 2, "{strategy}");
            let RGBColor(r, g, b) = colour(strategy);
            let stroke = format!("stroke=\"#{r:02X}{g:02X}{b:02X}\"");
            assert!(svg.matches(&stroke).count() >= 4, "{strategy} {stroke}");
        }
        assert!(render_failure_rate_svg(&[], "t").is_err());
    }
}
