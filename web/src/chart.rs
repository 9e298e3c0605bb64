//! Charts, drawn with plotters on any backend (a canvas in the browser, SVG in tests).

use plotters::prelude::*;
use sim_core::report::Series;

/// Draw the mean number of requests waiting in each window of the run.
pub fn draw_queue_depth<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    series: &Series,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let x_max = series.t_s.last().copied().unwrap_or(1.0).max(1e-3);
    let y_max = series
        .queue_depth
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("Requests waiting for a batch slot", ("sans-serif", 16))
        .margin(12)
        .margin_right(28)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("simulated time (s)")
        .y_desc("requests waiting")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(RGBColor(235, 235, 240))
        .draw()?;
    let blue = RGBColor(47, 91, 183);
    let points = series
        .t_s
        .iter()
        .copied()
        .zip(series.queue_depth.iter().copied());
    chart.draw_series(AreaSeries::new(points, 0.0, blue.mix(0.3)).border_style(blue))?;
    root.present()
}
