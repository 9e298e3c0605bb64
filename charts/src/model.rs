//! What a chart shows, as plain data: title, axes with units and ranges,
//! lines with labels and styles, bars, and marks (targets, crossovers). Every
//! chart module builds one of these from a report with a pure function, so
//! tests check what a chart shows, and one renderer draws them all.

use plotters::style::RGBColor;

/// Colours with at least 4.5:1 contrast on white.
pub const BLUE: RGBColor = RGBColor(31, 90, 180);
/// Pinned run A, and secondary series.
pub const ORANGE: RGBColor = RGBColor(178, 80, 0);
/// Time to first token.
pub const GREEN: RGBColor = RGBColor(20, 120, 60);
/// Errors, limits, KV cache.
pub const RED: RGBColor = RGBColor(190, 30, 45);
/// Context series and annotations.
pub const GREY: RGBColor = RGBColor(110, 110, 120);
/// A fifth colour for policies and sweep groups.
pub const PURPLE: RGBColor = RGBColor(110, 60, 160);

/// How values map to an axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Linear from `min`.
    Linear,
    /// Logarithmic (every value > 0).
    Log,
    /// Logarithmic, of milliseconds: ticks at 1, 2 and 5 times powers of
    /// ten, read in one unit for the whole axis ([`log_ms_unit`]), named
    /// in its label ([`log_ms`]).
    LogMs,
}

impl Scale {
    /// Whether the axis is logarithmic.
    pub fn is_log(self) -> bool {
        matches!(self, Scale::Log | Scale::LogMs)
    }
}

/// An axis: what it measures, in which unit, over which range.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Description, unit included ("latency (s)").
    pub label: String,
    /// Smallest value shown.
    pub min: f64,
    /// Largest value shown.
    pub max: f64,
    /// Linear or log.
    pub scale: Scale,
}

/// Solid or dashed; the legend shows the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    /// A solid line.
    Solid,
    /// A dashed line (p99s, the pinned run A, secondary series).
    Dashed,
    /// Points, each a dot, unjoined (setups on a cost–latency plane).
    Dots,
}

/// One line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Legend entry.
    pub label: String,
    /// Colour.
    pub colour: RGBColor,
    /// Solid or dashed.
    pub stroke: Stroke,
    /// (x, y) in axis units.
    pub points: Vec<(f64, f64)>,
    /// A circle drawn at this point (a saturation point), if any.
    pub circle: Option<(f64, f64)>,
}

impl Line {
    /// A line with no circle.
    pub fn new(
        label: impl Into<String>,
        colour: RGBColor,
        stroke: Stroke,
        points: Vec<(f64, f64)>,
    ) -> Line {
        Line {
            label: label.into(),
            colour,
            stroke,
            points,
            circle: None,
        }
    }
}

/// A horizontal or vertical reference line with a label (a target, a crossover).
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    /// y = value across the chart.
    Horizontal {
        /// Value on the y axis.
        y: f64,
        /// Its legend entry.
        label: String,
        /// Colour.
        colour: RGBColor,
    },
    /// x = value across the chart.
    Vertical {
        /// Value on the x axis.
        x: f64,
        /// Its legend entry.
        label: String,
        /// Colour.
        colour: RGBColor,
    },
    /// The x values from `x.0` to `x.1` shaded across the chart, beneath
    /// the lines (a range: where the fleet tips over within the model's
    /// error).
    Span {
        /// From and to, x units.
        x: (f64, f64),
        /// Its legend entry.
        label: String,
        /// Colour (drawn light).
        colour: RGBColor,
    },
}

impl Mark {
    /// Its text, shown in the legend.
    pub fn label(&self) -> &str {
        match self {
            Mark::Horizontal { label, .. }
            | Mark::Vertical { label, .. }
            | Mark::Span { label, .. } => label,
        }
    }
}

/// A filled rectangle (the GPU timeline's passes).
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Left and right, x units.
    pub x: (f64, f64),
    /// Bottom and top, y units.
    pub y: (f64, f64),
    /// Which legend entry it belongs to (an index into `Chart::bar_kinds`).
    pub kind: usize,
}

/// Where the legend goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    /// Upper left.
    UpperLeft,
    /// Upper right.
    UpperRight,
    /// Lower right.
    LowerRight,
    /// Lower left.
    LowerLeft,
}

/// A whole chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Lines, in legend order.
    pub lines: Vec<Line>,
    /// Bar legend entries: (label, colour).
    pub bar_kinds: Vec<(String, RGBColor)>,
    /// Bars.
    pub bars: Vec<Bar>,
    /// Reference lines.
    pub marks: Vec<Mark>,
    /// Legend position.
    pub legend: Corner,
    /// What a circled point on a line means, shown in the legend.
    pub circle_note: Option<String>,
}

impl Chart {
    /// A line chart over the given axes.
    pub fn lines(title: impl Into<String>, x: Axis, y: Axis, lines: Vec<Line>) -> Chart {
        Chart {
            title: title.into(),
            x,
            y,
            lines,
            bar_kinds: Vec::new(),
            bars: Vec::new(),
            marks: Vec::new(),
            legend: Corner::UpperLeft,
            circle_note: None,
        }
    }

    /// The line with this legend label.
    pub fn line(&self, label: &str) -> Option<&Line> {
        self.lines.iter().find(|l| l.label == label)
    }

    /// Legend entries, lines first, then bar kinds.
    pub fn legend_entries(&self) -> Vec<&str> {
        self.lines
            .iter()
            .map(|l| l.label.as_str())
            .chain(self.bar_kinds.iter().map(|(l, _)| l.as_str()))
            .chain(self.marks.iter().map(Mark::label))
            .chain(self.circle_note.as_deref())
            .collect()
    }
}

/// A linear axis from 0 to a little above the largest value (1 if none).
pub fn zero_based(label: impl Into<String>, values: impl Iterator<Item = f64>) -> Axis {
    let m = values.filter(|v| v.is_finite()).fold(0.0, f64::max);
    Axis {
        label: label.into(),
        min: 0.0,
        max: if m > 0.0 { m * 1.1 } else { 1.0 },
        scale: Scale::Linear,
    }
}

/// An axis from 0 to the largest value exactly (time axes).
pub fn span(label: impl Into<String>, values: impl Iterator<Item = f64>) -> Axis {
    let m = values.filter(|v| v.is_finite()).fold(0.0, f64::max);
    Axis {
        label: label.into(),
        min: 0.0,
        max: m.max(1e-3),
        scale: Scale::Linear,
    }
}

/// A log axis fitted to the positive values, with a little room either side.
pub fn log_fitted(label: impl Into<String>, values: impl Iterator<Item = f64>) -> Axis {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (lo, hi) = if hi > 0.0 { (lo, hi) } else { (1.0, 10.0) };
    let (lo, hi) = if hi / lo < 10.0 {
        // Show at least a decade, centred on the data.
        let mid = (lo * hi).sqrt();
        (mid / 10f64.sqrt(), mid * 10f64.sqrt())
    } else {
        (lo / 1.25, hi * 1.25)
    };
    Axis {
        label: label.into(),
        min: lo,
        max: hi,
        scale: Scale::Log,
    }
}

/// The one unit a log axis of milliseconds reads in: ms while its top is
/// under 10 s, seconds above (a log axis spans decades: minutes would read
/// 0.0005 at its foot, milliseconds 3,000,000 at its head).
pub fn log_ms_unit(a: &Axis) -> TimeUnit {
    if a.max < 10_000.0 {
        TimeUnit::Ms
    } else {
        TimeUnit::S
    }
}

/// A log axis of durations (values in ms) fitted to `values`, labelled
/// "`what` (unit, log)".
pub fn log_ms(what: &str, values: impl Iterator<Item = f64>) -> Axis {
    let mut a = log_fitted(what, values);
    a.scale = Scale::LogMs;
    a.label = format!("{what} ({}, log)", log_ms_unit(&a).symbol());
    a
}

/// A unit of time chosen so a latency reads naturally: ms below 10 s, seconds
/// below 10 minutes, minutes above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
    /// Minutes.
    Min,
}

impl TimeUnit {
    /// The unit for latencies up to `max_ms`.
    pub fn for_max_ms(max_ms: f64) -> TimeUnit {
        if max_ms >= 600_000.0 {
            TimeUnit::Min
        } else if max_ms >= 10_000.0 {
            TimeUnit::S
        } else {
            TimeUnit::Ms
        }
    }

    /// Milliseconds in one unit.
    pub fn ms(self) -> f64 {
        match self {
            TimeUnit::Ms => 1.0,
            TimeUnit::S => 1000.0,
            TimeUnit::Min => 60_000.0,
        }
    }

    /// Its symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
            TimeUnit::Min => "min",
        }
    }
}

/// Where a line of a time chart comes from in a report's series.
pub type Pick = fn(&sim_core::report::Series) -> Vec<(f64, f64)>;

/// A chart of a report's series over time: each line picked from the series;
/// with a pinned run A, its `a` line drawn dashed in orange behind.
pub fn time_chart(
    title: &str,
    y_label: &str,
    r: &sim_core::Report,
    picks: &[(&str, RGBColor, Stroke, Pick)],
    a: Option<(&sim_core::Report, &str, Pick)>,
) -> Chart {
    let mut lines: Vec<Line> = picks
        .iter()
        .map(|&(label, colour, stroke, pick)| Line::new(label, colour, stroke, pick(&r.series)))
        .collect();
    if let Some((p, label, pick)) = a {
        lines.push(Line::new(label, ORANGE, Stroke::Dashed, pick(&p.series)));
    }
    over_time(title, y_label, lines)
}

/// A chart of series over simulated time: x spans the run, y starts at 0 and
/// fits the largest value.
pub fn over_time(title: &str, y_label: &str, lines: Vec<Line>) -> Chart {
    let x = span(
        "simulated time (s)",
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
    );
    let y = zero_based(
        y_label,
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
    );
    Chart::lines(title, x, y, lines)
}

/// (t, v) pairs of a series.
pub fn series(t: &[f64], v: &[f64]) -> Vec<(f64, f64)> {
    t.iter().copied().zip(v.iter().copied()).collect()
}

/// (t, v) pairs of a series with gaps (windows with no sample are skipped).
pub fn series_opt(t: &[f64], v: &[Option<f64>]) -> Vec<(f64, f64)> {
    t.iter()
        .copied()
        .zip(v.iter())
        .filter_map(|(t, v)| v.map(|v| (t, v)))
        .collect()
}

/// A compact number for axis labels and descriptions: 1.2k, 3.4M.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 0.1 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
