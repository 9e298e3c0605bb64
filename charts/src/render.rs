//! Draw any [`Chart`] on any plotters backend, and describe it in words (the
//! text alternative the page gives each canvas).
//!
//! A log axis is drawn as a linear axis over log10 of the values, labelled with
//! the values themselves, so every chart shares one coordinate type.

use crate::model::{Axis, Chart, Corner, GREY, Mark, Scale, Stroke, short};
use plotters::coord::Shift;
use plotters::prelude::*;

/// A chart's drawing result.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

const FONT: &str = "sans-serif";
const DASH: (u32, u32) = (6, 4);

fn to_coord(a: &Axis, v: f64) -> f64 {
    match a.scale {
        Scale::Linear => v,
        Scale::Log | Scale::LogMs => v.max(a.min).log10(),
    }
}

fn range(a: &Axis) -> std::ops::Range<f64> {
    let (lo, hi) = (to_coord(a, a.min), to_coord(a, a.max));
    if hi > lo { lo..hi } else { lo..lo + 1.0 }
}

fn tick_label(a: &Axis, v: f64) -> String {
    match a.scale {
        Scale::Linear => short(v),
        Scale::Log => short(10f64.powf(v)),
        Scale::LogMs => sim_core::format::duration_ms(Some(10f64.powf(v))),
    }
}

/// Draw `chart` filling `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let (x, y) = (&chart.x, &chart.y);
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, (FONT, 15))
        .margin(10)
        .margin_right(24)
        .x_label_area_size(34)
        .y_label_area_size(58)
        .build_cartesian_2d(range(x), range(y))?;
    ctx.configure_mesh()
        .x_desc(x.label.as_str())
        .y_desc(y.label.as_str())
        .light_line_style(RGBColor(236, 236, 242))
        .x_label_formatter(&|v| tick_label(x, *v))
        .y_label_formatter(&|v| tick_label(y, *v))
        .draw()?;
    let at = |p: &(f64, f64)| (to_coord(x, p.0), to_coord(y, p.1));
    for (kind, (label, colour)) in chart.bar_kinds.iter().enumerate() {
        let style = ShapeStyle {
            color: colour.mix(0.85),
            filled: true,
            stroke_width: 0,
        };
        ctx.draw_series(
            chart
                .bars
                .iter()
                .filter(|b| b.kind == kind)
                .map(|b| Rectangle::new([at(&(b.x.0, b.y.0)), at(&(b.x.1, b.y.1))], style)),
        )?
        .label(label.as_str())
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], style));
    }
    for l in &chart.lines {
        let style = ShapeStyle {
            color: l.colour.to_rgba(),
            filled: false,
            stroke_width: 2,
        };
        let points: Vec<(f64, f64)> = l.points.iter().map(at).collect();
        let series = match l.stroke {
            Stroke::Solid => ctx.draw_series(LineSeries::new(points, style))?,
            Stroke::Dashed => {
                ctx.draw_series(DashedLineSeries::new(points, DASH.0, DASH.1, style))?
            }
        };
        let dashed = l.stroke == Stroke::Dashed;
        // The legend shows the line as it is drawn: dashed lines as two dashes.
        // The legend shows the line as it is drawn: a dashed line as two dashes.
        let (gap_from, gap_to) = if dashed { (6, 10) } else { (8, 8) };
        series.label(l.label.as_str()).legend(move |(x, y)| {
            EmptyElement::at((x, y))
                + PathElement::new(vec![(0, 0), (gap_from, 0)], style)
                + PathElement::new(vec![(gap_to, 0), (16, 0)], style)
        });
        if let Some(c) = l.circle {
            ctx.draw_series(std::iter::once(Circle::new(at(&c), 6, style)))?;
        }
    }
    // Reference lines carry their text in the legend, where no line can
    // cross it.
    for m in &chart.marks {
        let (a, b, colour) = match m {
            Mark::Horizontal { y: v, colour, .. } => {
                let v = to_coord(y, *v);
                let r = range(x);
                ((r.start, v), (r.end, v), colour)
            }
            Mark::Vertical { x: v, colour, .. } => {
                let v = to_coord(x, *v);
                let r = range(y);
                ((v, r.start), (v, r.end), colour)
            }
        };
        let style = colour.stroke_width(1);
        ctx.draw_series(DashedLineSeries::new([a, b], 5, 4, style))?
            .label(m.label())
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (5, 0)], style)
                    + PathElement::new(vec![(9, 0), (14, 0)], style)
            });
    }
    if let Some(note) = &chart.circle_note {
        let style = GREY.stroke_width(2);
        ctx.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label(note.as_str())
            .legend(move |(x, y)| Circle::new((x + 7, y), 5, style));
    }
    if chart.legend_entries().len() > 1 {
        let pos = match chart.legend {
            Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
            Corner::UpperRight => SeriesLabelPosition::UpperRight,
            Corner::LowerRight => SeriesLabelPosition::LowerRight,
        };
        ctx.configure_series_labels()
            .position(pos)
            .background_style(WHITE)
            .border_style(GREY)
            .label_font((FONT, 12))
            .draw()?;
    }
    root.present()
}

/// The chart in words: its title, its axes and, per line, where it starts,
/// ends and peaks; the marks. The text alternative of a canvas.
pub fn describe(chart: &Chart) -> String {
    let mut out = format!(
        "{}. Horizontal: {} from {} to {}; vertical: {}{}.",
        chart.title,
        chart.x.label,
        short(chart.x.min),
        short(chart.x.max),
        chart.y.label,
        if chart.y.scale.is_log() {
            " (log scale)"
        } else {
            ""
        }
    );
    for l in &chart.lines {
        let (Some(first), Some(last)) = (l.points.first(), l.points.last()) else {
            out.push_str(&format!(" {}: no data.", l.label));
            continue;
        };
        let peak = l
            .points
            .iter()
            .copied()
            .fold(*first, |m, p| if p.1 > m.1 { p } else { m });
        out.push_str(&format!(
            " {}: {} at {}, {} at {}, highest {} at {}.",
            l.label,
            short(first.1),
            short(first.0),
            short(last.1),
            short(last.0),
            short(peak.1),
            short(peak.0)
        ));
    }
    for (kind, (label, _)) in chart.bar_kinds.iter().enumerate() {
        let n = chart.bars.iter().filter(|b| b.kind == kind).count();
        out.push_str(&format!(" {label}: {n} bars."));
    }
    for m in &chart.marks {
        match m {
            Mark::Horizontal { label, .. } | Mark::Vertical { label, .. } => {
                out.push_str(&format!(" Marked: {label}."))
            }
        }
    }
    if let Some(note) = &chart.circle_note {
        out.push_str(&format!(" {}.", note.trim_start_matches("○ ")));
    }
    out
}
