//! The SVG chart of a sweep, after the AWS blog's figure: calls ("work") and completion time
//! against the number of clients, a line per mode. Drawn with plotters' SVG backend only.

use std::fmt;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use strum::VariantArray;

use crate::{Mode, Stats, SweepPoint};

/// Why a chart was not drawn or written.
#[derive(Debug)]
pub enum PlotError {
    /// The sweep had no points.
    Empty,
    /// plotters failed; its message.
    Draw(String),
    /// The file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlotError::Empty => f.write_str("nothing to plot: the sweep has no points"),
            PlotError::Draw(e) => write!(f, "cannot draw the plot: {e}"),
            PlotError::Write { path, source } => {
                write!(f, "cannot write the plot to {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for PlotError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlotError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The result of drawing.
type Result<T> = std::result::Result<T, PlotError>;

/// Width and height of the chart, in SVG pixels.
pub(crate) const SIZE: (u32, u32) = (1200, 520);

/// Line colours (the "tab10" palette), taken in the order of the [`Mode`] variants.
const PALETTE: [RGBColor; 10] = [
    RGBColor(214, 39, 40),   // red: none
    RGBColor(31, 119, 180),  // blue: full
    RGBColor(44, 160, 44),   // green: equal
    RGBColor(255, 127, 14),  // orange: decorrelated
    RGBColor(148, 103, 189), // purple: additive
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
];

/// A fixed colour per mode, so that charts compare at a glance; `no-backoff` is grey.
fn colour(mode: Mode) -> RGBColor {
    if mode == Mode::NoBackoff {
        return RGBColor(110, 110, 110);
    }
    let i = Mode::VARIANTS.iter().position(|&m| m == mode).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

/// Renders `points` (a [`crate::sweep`]) as an SVG document with two charts side by side:
/// mean calls and mean completion time (ms) against clients, a line per mode, under `title`.
/// The vertical axes are logarithmic: `no-backoff` and plain exponential backoff are orders of
/// magnitude above the jittered modes, which linear axes would flatten into one line.
///
/// # Errors
/// If `points` is empty, or plotters fails.
pub fn render_svg(points: &[SweepPoint], title: &str) -> Result<String> {
    if points.is_empty() {
        return Err(PlotError::Empty);
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let root = root.titled(title, ("sans-serif", 22)).map_err(plot_error)?;
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        panel(&left, points, "Work", "calls", |s| s.calls)?;
        panel(&right, points, "Completion time", "milliseconds", |s| {
            s.completion_ms
        })?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Renders `points` as [`render_svg`] does and writes the SVG to `path`.
///
/// # Errors
/// Those of [`render_svg`], and a message naming `path` if it cannot be written (a missing
/// directory, no permission).
pub fn write_svg(path: &Path, points: &[SweepPoint], title: &str) -> Result<()> {
    let svg = render_svg(points, title)?;
    std::fs::write(path, svg).map_err(|source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// One chart: `metric` of every mode against clients.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    points: &[SweepPoint],
    caption: &str,
    unit: &str,
    metric: fn(&Stats) -> f64,
) -> Result<()> {
    let first = points[0].clients;
    let last = points[points.len() - 1].clients;
    let values = points.iter().flat_map(|p| p.stats.iter().map(metric));
    let (lo, hi) = values.fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    // A log axis needs positive bounds; pad by a little on either side.
    let lo = (lo * 0.8).max(1e-3);
    let hi = (hi * 1.25).max(lo * 10.0);
    let x_hi = if last > first { last } else { first + 1 };

    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(first..x_hi, (lo..hi).log_scale())
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc("clients")
        .y_desc(unit)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .y_labels(12)
        .y_label_formatter(&|v| short_number(*v))
        .draw()
        .map_err(plot_error)?;

    for (i, mode) in points[0].stats.iter().map(|s| s.mode).enumerate() {
        let colour = colour(mode);
        let line = points
            .iter()
            .filter_map(|p| p.stats.get(i).filter(|s| s.mode == mode))
            .map(|s| (s.clients, metric(s).max(lo)));
        chart
            .draw_series(LineSeries::new(line, colour.stroke_width(2)).point_size(3))
            .map_err(plot_error)?
            .label(mode.name())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        // Lower right stays clear: every line rises to the right.
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}

/// `12000` as `12k`, `2500000` as `2.5M`: tick labels that fit.
fn short_number(v: f64) -> String {
    let (scaled, suffix) = if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = format!("{scaled:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text}{suffix}")
}

/// plotters' errors borrow nothing but are not always `Send + Sync`; keep their message.
pub(crate) fn plot_error<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep() -> Vec<SweepPoint> {
        [10u32, 20, 30]
            .into_iter()
            .map(|c| SweepPoint {
                clients: c,
                stats: Mode::VARIANTS
                    .iter()
                    .enumerate()
                    .map(|(i, &mode)| Stats {
                        mode,
                        clients: c,
                        runs: 1,
                        completion_ms: 100.0 * f64::from(c) * (i + 1) as f64,
                        calls: f64::from(c * c) / (i + 1) as f64,
                        calls_per_client: f64::from(c) / (i + 1) as f64,
                        rejected: 0.0,
                        gave_up: 0.0,
                    })
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn renders_an_svg_with_a_line_and_a_legend_entry_per_mode() {
        let svg = render_svg(&sweep(), "occ, base 5 ms, cap 2 s").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("occ, base 5 ms, cap 2 s"));
        for &mode in Mode::VARIANTS {
            // One legend entry in each of the two charts (plotters puts text on its own line).
            let label = format!("\n{}\n</text>", mode.name());
            assert_eq!(svg.matches(&label).count(), 2, "{mode}");
        }
        for &mode in Mode::VARIANTS {
            let RGBColor(r, g, b) = colour(mode);
            let stroke = format!("stroke=\"#{r:02X}{g:02X}{b:02X}\"");
            // A line and a legend sample in each chart.
            assert!(svg.matches(&stroke).count() >= 4, "{mode} {stroke}");
        }
    }

    #[test]
    fn a_single_point_still_renders() {
        let one = &sweep()[..1];
        assert!(render_svg(one, "t").is_ok());
        assert!(render_svg(&[], "t").is_err());
    }

    #[test]
    fn an_unwritable_path_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("no/such/dir/plot.svg");
        let e = write_svg(&bad, &sweep(), "t").unwrap_err();
        assert!(e.to_string().contains("no/such/dir/plot.svg"), "{e}");
        let good = dir.path().join("plot.svg");
        write_svg(&good, &sweep(), "t").unwrap();
        assert!(std::fs::read_to_string(good).unwrap().contains("</svg>"));
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(12000.0), "12k");
        assert_eq!(short_number(2_500_000.0), "2.5M");
        assert_eq!(short_number(40.0), "40");
        assert_eq!(short_number(0.5), "0.5");
    }
}
