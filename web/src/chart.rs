//! Charts, drawn with plotters on any backend (a canvas in the browser, SVG in tests).

use plotters::prelude::*;

/// Draw the queue depth sampled at evenly spaced instants over `duration_s` seconds.
pub fn draw_queue_depth<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    depth: &[u32],
    duration_s: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let y_max = depth.iter().copied().max().unwrap_or(0).max(1);
    let step = duration_s / depth.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .margin_right(28)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..duration_s, 0u32..y_max + y_max / 10 + 1)?;
    chart
        .configure_mesh()
        .x_desc("simulated time (s)")
        .y_desc("requests in system")
        .light_line_style(RGBColor(235, 235, 240))
        .draw()?;
    let points = depth
        .iter()
        .enumerate()
        .map(|(i, &d)| ((i + 1) as f64 * step, d));
    chart.draw_series(
        AreaSeries::new(points, 0, RGBColor(59, 102, 196).mix(0.35))
            .border_style(RGBColor(59, 102, 196)),
    )?;
    root.present()
}
