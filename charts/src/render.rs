//! Draw any [`Chart`] on any plotters backend, and describe it in words (the
//! text alternative the page gives each canvas).
//!
//! A log axis is drawn as a linear axis over log10 of the values, labelled with
//! the values themselves, so every chart shares one coordinate type.

use crate::model::{Axis, Chart, Corner, GREY, Mark, Scale, Stroke, short};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A chart's drawing result.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

const FONT: &str = "sans-serif";
const DASH: (u32, u32) = (6, 4);

/// How opaque a shaded span is: light enough that every line drawn over
/// it keeps its contrast.
const SPAN_ALPHA: f64 = 0.14;

fn span_style(colour: &RGBColor) -> ShapeStyle {
    ShapeStyle {
        color: colour.mix(SPAN_ALPHA),
        filled: true,
        stroke_width: 0,
    }
}

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
        Scale::LogMs => short(10f64.powf(v) / crate::model::log_ms_unit(a).ms()),
    }
}

/// An axis's coordinate with its own ticks (plotters' own when it has
/// none).
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;
    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(v, limit)
    }
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if self.ticks.is_empty() {
            self.inner.key_points(hint)
        } else {
            self.ticks.clone()
        }
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// Where an axis has its ticks: plotters' own on a linear axis; on a log
/// axis (drawn linear over log10), at 1, 2 and 5 times each power of ten
/// inside it (only the powers when it spans more than three decades), so
/// every tick reads a round number.
fn keyed(a: &Axis) -> Ticked {
    let r = range(a);
    let ticks = match a.scale {
        Scale::Linear => Vec::new(),
        Scale::Log | Scale::LogMs => {
            let steps: &[f64] = if r.end - r.start > 3.0 {
                &[1.0]
            } else {
                &[1.0, 2.0, 5.0]
            };
            let (first, last) = (r.start.floor() as i32, r.end.ceil() as i32);
            (first..=last)
                .flat_map(|d| steps.iter().map(move |m| f64::from(d) + m.log10()))
                .filter(|x| r.start - 1e-9 <= *x && *x <= r.end + 1e-9)
                .collect()
        }
    };
    Ticked {
        inner: r.into(),
        ticks,
    }
}

/// Draw `chart` filling `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> DrawResult<DB> {
    draw_plotted(root, chart).map(|_| ())
}

/// Where a drawn chart's data sits in the drawing's pixels: what a click
/// on it is read against.
#[derive(Clone, Debug, PartialEq)]
pub struct Plotted {
    /// The plotting area's left and right, pixels.
    pub x_px: (i32, i32),
    /// The plotting area's top and bottom, pixels.
    pub y_px: (i32, i32),
    /// The legend's box in the plotting area (left, top, width, height),
    /// when there is one.
    pub legend_px: Option<[i32; 4]>,
    /// How many of the chart's points the legend covers.
    pub legend_covers: usize,
    x: Axis,
    y: Axis,
}

impl Plotted {
    /// The pixel a data point is drawn at.
    pub fn pixel_of(&self, p: (f64, f64)) -> (f64, f64) {
        let frac = |a: &Axis, v: f64| {
            let r = range(a);
            (to_coord(a, v) - r.start) / (r.end - r.start)
        };
        // The area's last pixel is one short of its end, as plotters maps.
        (
            f64::from(self.x_px.0) + frac(&self.x, p.0) * f64::from(self.x_px.1 - self.x_px.0 - 1),
            f64::from(self.y_px.1 - 1)
                - frac(&self.y, p.1) * f64::from(self.y_px.1 - self.y_px.0 - 1),
        )
    }

    /// The point of `chart`'s dotted lines nearest the pixel `at`, within
    /// `within` pixels: its line's label and the point.
    pub fn dot_at<'c>(
        &self,
        chart: &'c Chart,
        at: (f64, f64),
        within: f64,
    ) -> Option<(&'c str, (f64, f64))> {
        chart
            .lines
            .iter()
            .filter(|l| l.stroke == Stroke::Dots)
            .flat_map(|l| l.points.iter().map(move |p| (l.label.as_str(), *p)))
            .map(|(label, p)| {
                let q = self.pixel_of(p);
                (label, p, (q.0 - at.0).hypot(q.1 - at.1))
            })
            .filter(|(_, _, d)| *d <= within)
            .min_by(|a, b| a.2.total_cmp(&b.2))
            .map(|(label, p, _)| (label, p))
    }
}

/// [`draw`], and where the data went.
pub fn draw_plotted<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<Plotted, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (x, y) = (&chart.x, &chart.y);
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, (FONT, 15))
        .margin(10)
        .margin_right(24)
        .x_label_area_size(34)
        .y_label_area_size(58)
        .build_cartesian_2d(keyed(x), keyed(y))?;
    let (xr, yr) = ctx.plotting_area().get_pixel_range();
    let plotted = Plotted {
        x_px: (xr.start, xr.end),
        y_px: (yr.start, yr.end),
        legend_px: None,
        legend_covers: 0,
        x: x.clone(),
        y: y.clone(),
    };
    ctx.configure_mesh()
        .x_desc(x.label.as_str())
        .y_desc(y.label.as_str())
        .light_line_style(RGBColor(236, 236, 242))
        .x_label_formatter(&|v| tick_label(x, *v))
        .y_label_formatter(&|v| tick_label(y, *v))
        .draw()?;
    let at = |p: &(f64, f64)| (to_coord(x, p.0), to_coord(y, p.1));
    let mut legend: Vec<(&str, Marker)> = Vec::new();
    // Shaded spans first, beneath everything drawn on them.
    for m in &chart.marks {
        if let Mark::Span {
            x: (a, b), colour, ..
        } = m
        {
            let r = range(y);
            let (a, b) = (to_coord(x, *a), to_coord(x, *b));
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(a, r.start), (b, r.end)],
                span_style(colour),
            )))?;
        }
    }
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
        )?;
        legend.push((label.as_str(), Marker::Block(style)));
    }
    for l in &chart.lines {
        let style = ShapeStyle {
            color: l.colour.to_rgba(),
            filled: false,
            stroke_width: 2,
        };
        let points: Vec<(f64, f64)> = l.points.iter().map(at).collect();
        match l.stroke {
            Stroke::Solid => ctx.draw_series(LineSeries::new(points, style))?,
            Stroke::Dashed => {
                ctx.draw_series(DashedLineSeries::new(points, DASH.0, DASH.1, style))?
            }
            Stroke::Dots => ctx.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 4, style.filled())),
            )?,
        };
        // The legend shows the line as it is drawn: a dashed line as two
        // dashes, dots as a dot.
        let marker = match l.stroke {
            Stroke::Dashed => Marker::Line(style, (6, 10)),
            Stroke::Solid => Marker::Line(style, (8, 8)),
            Stroke::Dots => Marker::Dot(style.filled()),
        };
        legend.push((l.label.as_str(), marker));
        if let Some(c) = l.circle {
            ctx.draw_series(std::iter::once(Circle::new(at(&c), 6, style)))?;
        }
    }
    // Reference lines carry their text in the legend, where no line can
    // cross it.
    for m in &chart.marks {
        let (a, b, colour) = match m {
            Mark::Span { label, colour, .. } => {
                legend.push((label.as_str(), Marker::Block(span_style(colour))));
                continue;
            }
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
        ctx.draw_series(DashedLineSeries::new([a, b], 5, 4, style))?;
        legend.push((m.label(), Marker::Line(style, (5, 9))));
    }
    if let Some(note) = &chart.circle_note {
        legend.push((note.as_str(), Marker::Ring(GREY.stroke_width(2))));
    }
    let mut plotted = plotted;
    if legend.len() > 1 {
        let area = ctx.plotting_area().strip_coord_spec();
        let size = legend_size(&area, &legend)?;
        let (aw, ah) = area.dim_in_pixel();
        // The chart's corner, unless another covers fewer of its points.
        let points: Vec<(f64, f64)> = chart
            .lines
            .iter()
            .flat_map(|l| l.points.iter().chain(&l.circle))
            .map(|p| {
                let (x, y) = plotted.pixel_of(*p);
                (x - f64::from(plotted.x_px.0), y - f64::from(plotted.y_px.0))
            })
            .collect();
        let covered = |r: [i32; 4]| {
            points
                .iter()
                .filter(|p| {
                    p.0 >= f64::from(r[0])
                        && p.0 <= f64::from(r[0] + r[2])
                        && p.1 >= f64::from(r[1])
                        && p.1 <= f64::from(r[1] + r[3])
                })
                .count()
        };
        // Spans and vertical marks run the plot's full height: a corner
        // over any of their x covers them. Each weighs as a twentieth of
        // the points (at least two): a legend covers a shaded band or
        // today's load only where every other corner covers more, and of
        // corners that cover as much, one that leaves the marks clear.
        let marks: Vec<(f64, f64)> = chart
            .marks
            .iter()
            .filter_map(|m| match m {
                Mark::Span { x: (a, b), .. } => Some((*a, *b)),
                Mark::Vertical { x, .. } => Some((*x, *x)),
                Mark::Horizontal { .. } => None,
            })
            .map(|(a, b)| {
                let x = |v: f64| plotted.pixel_of((v, chart.y.min)).0 - f64::from(plotted.x_px.0);
                (x(a).min(x(b)), x(a).max(x(b)))
            })
            .collect();
        let mark_weight = (points.len() / 20).max(2);
        let cost = |r: [i32; 4]| {
            let (left, right) = (f64::from(r[0]), f64::from(r[0] + r[2]));
            let hidden = marks.iter().filter(|m| m.1 >= left && m.0 <= right).count();
            (covered(r) + mark_weight * hidden, hidden)
        };
        let rect = [
            chart.legend,
            Corner::UpperLeft,
            Corner::UpperRight,
            Corner::LowerRight,
            Corner::LowerLeft,
        ]
        .into_iter()
        .map(|c| legend_rect(c, (aw as i32, ah as i32), size))
        .min_by_key(|r| cost(*r))
        .expect("four corners");
        draw_legend(&area, &legend, rect)?;
        plotted.legend_px = Some(rect);
        plotted.legend_covers = covered(rect);
    }
    root.present()?;
    Ok(plotted)
}

/// How a legend entry shows its series.
enum Marker {
    /// A filled block (bars).
    Block(ShapeStyle),
    /// A line, with a gap between these x offsets (a dash).
    Line(ShapeStyle, (i32, i32)),
    /// A ring (the circled point).
    Ring(ShapeStyle),
    /// A dot (points unjoined).
    Dot(ShapeStyle),
}

/// The legend in a corner of the plotting area: a bordered box, a row per
/// entry. Drawn here rather than by plotters, whose legend measures each
/// label through the page's layout on the web.
const ROW: i32 = 18;
const PAD: i32 = 6;
const MARK: i32 = 16;

fn legend_text() -> TextStyle<'static> {
    (FONT, 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center))
}

/// The legend box's width and height for `entries`.
fn legend_size<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(&str, Marker)],
) -> Result<(i32, i32), DrawingAreaErrorKind<DB::ErrorType>> {
    let text = legend_text();
    let mut text_w = 0;
    for (label, _) in entries {
        text_w = text_w.max(area.estimate_text_size(label, &text)?.0 as i32);
    }
    Ok((
        PAD * 3 + MARK + text_w,
        PAD * 2 + ROW * entries.len() as i32,
    ))
}

/// The legend box in `corner` of an area `(aw, ah)`: left, top, width, height.
fn legend_rect(corner: Corner, (aw, ah): (i32, i32), (w, h): (i32, i32)) -> [i32; 4] {
    let (x0, y0) = match corner {
        Corner::UpperLeft => (PAD, PAD),
        Corner::UpperRight => (aw - w - PAD, PAD),
        Corner::LowerRight => (aw - w - PAD, ah - h - PAD),
        Corner::LowerLeft => (PAD, ah - h - PAD),
    };
    [x0, y0, w, h]
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(&str, Marker)],
    [x0, y0, w, h]: [i32; 4],
) -> DrawResult<DB> {
    let text = legend_text();
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + w, y0 + h)],
        WHITE.filled(),
    ))?;
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + w, y0 + h)],
        GREY.stroke_width(1),
    ))?;
    for (i, (label, marker)) in entries.iter().enumerate() {
        let (x, y) = (x0 + PAD, y0 + PAD + ROW * i as i32 + ROW / 2);
        match marker {
            Marker::Block(style) => {
                area.draw(&Rectangle::new([(x, y - 5), (x + MARK - 2, y + 5)], *style))?
            }
            Marker::Line(style, (a, b)) => {
                area.draw(&PathElement::new(vec![(x, y), (x + a, y)], *style))?;
                area.draw(&PathElement::new(vec![(x + b, y), (x + MARK, y)], *style))?;
            }
            Marker::Ring(style) => area.draw(&Circle::new((x + MARK / 2, y), 5, *style))?,
            Marker::Dot(style) => area.draw(&Circle::new((x + MARK / 2, y), 4, *style))?,
        }
        area.draw(&Text::new(*label, (x + MARK + PAD, y), text.clone()))?;
    }
    Ok(())
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
        if l.stroke == Stroke::Dots {
            // Points: how many, and where they span.
            let (lo, hi) = l
                .points
                .iter()
                .fold((first.1, first.1), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
            let at = l
                .points
                .iter()
                .fold((first.0, first.0), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
            out.push_str(&format!(
                " {}: {} point{}, {} to {} across, {} to {} up.",
                l.label,
                l.points.len(),
                if l.points.len() == 1 { "" } else { "s" },
                short(at.0),
                short(at.1),
                short(lo),
                short(hi)
            ));
            continue;
        }
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
            Mark::Span { label, .. } => out.push_str(&format!(" Shaded: {label}.")),
        }
    }
    if let Some(note) = &chart.circle_note {
        out.push_str(&format!(" {}.", note.trim_start_matches("○ ")));
    }
    out
}
