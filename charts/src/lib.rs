//! Throughput Lab's charts, one function per chart, generic over the plotters
//! backend: a canvas in the browser, SVG in the CLI and in native tests. Each takes the report (and, to overlay a
//! pinned comparison, an optional second one) and draws the whole chart.

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::Report;

/// A chart's drawing result.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Colours with at least 4.5:1 contrast on white.
const BLUE: RGBColor = RGBColor(31, 90, 180);
const ORANGE: RGBColor = RGBColor(178, 80, 0);
const GREEN: RGBColor = RGBColor(20, 120, 60);
const RED: RGBColor = RGBColor(190, 30, 45);
const GREY: RGBColor = RGBColor(110, 110, 120);
const FONT: &str = "sans-serif";

/// One line of a time-series chart.
struct Line<'a> {
    label: &'a str,
    colour: RGBColor,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

impl<'a> Line<'a> {
    fn new(label: &'a str, colour: RGBColor, dashed: bool, points: Vec<(f64, f64)>) -> Self {
        Line {
            label,
            colour,
            dashed,
            points,
        }
    }
}

fn upper(lines: &[Line]) -> f64 {
    let m = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    if m > 0.0 { m * 1.1 } else { 1.0 }
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::max)
        .max(1e-3);
    let y_max = upper(lines);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 15))
        .margin(10)
        .margin_right(24)
        .x_label_area_size(34)
        .y_label_area_size(58)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(RGBColor(236, 236, 242))
        .x_label_formatter(&|v| short(*v))
        .y_label_formatter(&|v| short(*v))
        .draw()?;
    for l in lines {
        let style = ShapeStyle {
            color: l.colour.to_rgba(),
            filled: false,
            stroke_width: 2,
        };
        if l.dashed {
            chart
                .draw_series(DashedLineSeries::new(l.points.iter().copied(), 6, 4, style))?
                .label(l.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
        } else {
            chart
                .draw_series(LineSeries::new(l.points.iter().copied(), style))?
                .label(l.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
        }
    }
    if lines.len() > 1 {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(GREY)
            .label_font((FONT, 12))
            .draw()?;
    }
    root.present()
}

/// A compact number for axis labels: 1.2k, 3.4M.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn series(t: &[f64], v: &[f64]) -> Vec<(f64, f64)> {
    t.iter().copied().zip(v.iter().copied()).collect()
}

fn series_opt(t: &[f64], v: &[Option<f64>]) -> Vec<(f64, f64)> {
    t.iter()
        .copied()
        .zip(v.iter())
        .filter_map(|(t, v)| v.map(|v| (t, v)))
        .collect()
}

/// Requests waiting and in flight over time.
pub fn queue<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
    pinned: Option<&Report>,
) -> DrawResult<DB> {
    let s = &r.series;
    let mut lines = vec![
        Line::new("waiting", BLUE, false, series(&s.t_s, &s.queue_depth)),
        Line::new("in flight", GREY, false, series(&s.t_s, &s.in_flight)),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "waiting (A)",
            ORANGE,
            true,
            series(&p.series.t_s, &p.series.queue_depth),
        ));
    }
    draw_lines(
        root,
        "Requests waiting and in flight",
        "simulated time (s)",
        "requests",
        &lines,
    )
}

/// TTFT and end-to-end p50/p99 per window.
pub fn latency<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
    pinned: Option<&Report>,
) -> DrawResult<DB> {
    let s = &r.series;
    let mut lines = vec![
        Line::new("TTFT p50", GREEN, false, series_opt(&s.t_s, &s.ttft_p50_ms)),
        Line::new("TTFT p99", GREEN, true, series_opt(&s.t_s, &s.ttft_p99_ms)),
        Line::new(
            "end-to-end p50",
            BLUE,
            false,
            series_opt(&s.t_s, &s.e2e_p50_ms),
        ),
        Line::new(
            "end-to-end p99",
            BLUE,
            true,
            series_opt(&s.t_s, &s.e2e_p99_ms),
        ),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "end-to-end p99 (A)",
            ORANGE,
            true,
            series_opt(&p.series.t_s, &p.series.e2e_p99_ms),
        ));
    }
    draw_lines(
        root,
        "Latency over time",
        "simulated time (s)",
        "ms",
        &lines,
    )
}

/// Output tokens per second and arrivals over time.
pub fn throughput<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
    pinned: Option<&Report>,
) -> DrawResult<DB> {
    let s = &r.series;
    let mut lines = vec![
        Line::new(
            "output tok/s",
            BLUE,
            false,
            series(&s.t_s, &s.output_tokens_per_s),
        ),
        Line::new(
            "input tok/s",
            GREEN,
            true,
            series(&s.t_s, &s.input_tokens_per_s),
        ),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "output tok/s (A)",
            ORANGE,
            true,
            series(&p.series.t_s, &p.series.output_tokens_per_s),
        ));
    }
    draw_lines(root, "Throughput", "simulated time (s)", "tokens/s", &lines)
}

/// Arrivals per second over time.
pub fn arrivals<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
    pinned: Option<&Report>,
) -> DrawResult<DB> {
    let s = &r.series;
    let mut lines = vec![Line::new(
        "arrivals/s",
        GREY,
        false,
        series(&s.t_s, &s.arrivals_per_s),
    )];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "arrivals/s (A)",
            ORANGE,
            true,
            series(&p.series.t_s, &p.series.arrivals_per_s),
        ));
    }
    draw_lines(
        root,
        "Requests arriving",
        "simulated time (s)",
        "requests/s",
        &lines,
    )
}

/// Mean batch size and KV-cache use over time.
pub fn batch<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
    _pinned: Option<&Report>,
) -> DrawResult<DB> {
    let s = &r.series;
    let kv: Vec<f64> = s.kv_use.iter().map(|k| k * 100.0).collect();
    let lines = vec![
        Line::new(
            "sequences per pass",
            BLUE,
            false,
            series(&s.t_s, &s.batch_size),
        ),
        Line::new("KV cache used (%)", RED, true, series(&s.t_s, &kv)),
    ];
    draw_lines(
        root,
        "Batch size and KV-cache use",
        "simulated time (s)",
        "sequences / %",
        &lines,
    )
}

/// 429s per second and the share of the token limit left.
pub fn api<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
    pinned: Option<&Report>,
) -> DrawResult<DB> {
    let s = &r.series;
    let fill: Vec<Option<f64>> = s
        .api_token_fill
        .iter()
        .map(|f| f.map(|f| f * 100.0))
        .collect();
    let mut lines = vec![
        Line::new(
            "retries per second",
            ORANGE,
            false,
            series(&s.t_s, &s.retries_per_s),
        ),
        Line::new(
            "429s per second",
            RED,
            false,
            series(&s.t_s, &s.throttled_per_s),
        ),
        Line::new(
            "token limit left (%)",
            GREY,
            true,
            series_opt(&s.t_s, &fill),
        ),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "429s per second (A)",
            ORANGE,
            true,
            series(&p.series.t_s, &p.series.throttled_per_s),
        ));
    }
    draw_lines(
        root,
        "Rate limits: 429s and headroom",
        "simulated time (s)",
        "per s / %",
        &lines,
    )
}

/// Latency distribution as a cumulative curve: x = latency, y = share of requests.
pub fn distribution<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
    pinned: Option<&Report>,
) -> DrawResult<DB> {
    let d = &r.distribution;
    let cdf = |v: &[f64], q: &[f64]| -> Vec<(f64, f64)> {
        v.iter().copied().zip(q.iter().map(|q| q * 100.0)).collect()
    };
    let mut lines = vec![
        Line::new("TTFT", GREEN, false, cdf(&d.ttft_ms, &d.quantiles)),
        Line::new("end-to-end", BLUE, false, cdf(&d.e2e_ms, &d.quantiles)),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "end-to-end (A)",
            ORANGE,
            true,
            cdf(&p.distribution.e2e_ms, &p.distribution.quantiles),
        ));
    }
    // Swap axes' meaning: x is latency; y is the percentile reached.
    draw_lines(
        root,
        "Latency distribution (share of requests faster than x)",
        "ms",
        "% of requests",
        &lines,
    )
}

/// Monthly cost vs load: API and self-hosted, with the crossover marked.
pub fn cost_curve<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    c: &sim_core::compare::CostComparison,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let x_max = c.points.last().map_or(1.0, |p| p.load_per_s).max(1e-3);
    let y_max = c
        .points
        .iter()
        .map(|p| p.api_usd_per_month.max(p.self_hosted_usd_per_month))
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("Monthly cost: API ({}) vs self-hosted", c.tier),
            (FONT, 15),
        )
        .margin(10)
        .margin_right(24)
        .x_label_area_size(34)
        .y_label_area_size(58)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("load (tasks/s)")
        .y_desc("$ per month")
        .light_line_style(RGBColor(236, 236, 242))
        .x_label_formatter(&|v| short(*v))
        .y_label_formatter(&|v| short(*v))
        .draw()?;
    let api_style = ShapeStyle {
        color: RED.to_rgba(),
        filled: false,
        stroke_width: 2,
    };
    let self_style = ShapeStyle {
        color: BLUE.to_rgba(),
        filled: false,
        stroke_width: 2,
    };
    chart
        .draw_series(LineSeries::new(
            c.points.iter().map(|p| (p.load_per_s, p.api_usd_per_month)),
            api_style,
        ))?
        .label("API")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], api_style));
    chart
        .draw_series(LineSeries::new(
            c.points
                .iter()
                .map(|p| (p.load_per_s, p.self_hosted_usd_per_month)),
            self_style,
        ))?
        .label("self-hosted")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], self_style));
    if let Some(x) = c.crossover_load_per_s.filter(|x| *x <= x_max) {
        chart.draw_series(DashedLineSeries::new(
            [(x, 0.0), (x, y_max)],
            5,
            4,
            GREY.stroke_width(1),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("crossover {x:.2}/s"),
            (x, y_max * 0.95),
            (FONT, 12).into_font().color(&GREY),
        )))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(GREY)
        .label_font((FONT, 12))
        .draw()?;
    root.present()
}

/// $ per million output tokens vs load for the self-hosted fleet as configured.
pub fn usd_per_mtok_curve<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[(f64, f64)],
) -> DrawResult<DB> {
    let lines = vec![Line::new(
        "$ per million output tokens",
        BLUE,
        false,
        points.to_vec(),
    )];
    draw_lines(
        root,
        "Self-hosted cost per million tokens vs load",
        "load (tasks/s)",
        "$ / Mtok",
        &lines,
    )
}

/// The teaching view: replica 0's forward passes over the first seconds. Each
/// pass is a bar as wide as it lasts and as tall as its batch — prompt work
/// (prefill) in orange, token generation (decode) in blue — with the requests
/// waiting for a slot drawn beneath the axis.
pub fn timeline<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    trace: &sim_core::engine::TraceLog,
    window_s: f64,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let end_ns = (window_s * 1e9) as u64;
    let passes: Vec<_> = trace
        .passes
        .iter()
        .filter(|p| p.replica == 0 && p.start_ns < end_ns)
        .collect();
    let top = passes
        .iter()
        .map(|p| p.prefill_seqs + p.decode_seqs)
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.15;
    let bottom = passes.iter().map(|p| p.waiting).max().unwrap_or(0) as f64 * 1.15;
    let mut chart = ChartBuilder::on(root)
        .caption(
            "GPU timeline: forward passes of replica 1 (bars) and requests waiting (below)",
            (FONT, 15),
        )
        .margin(10)
        .margin_right(24)
        .x_label_area_size(34)
        .y_label_area_size(58)
        .build_cartesian_2d(0.0..window_s, -bottom.max(1.0)..top)?;
    chart
        .configure_mesh()
        .x_desc("simulated time (s)")
        .y_desc("sequences in pass / waiting")
        .light_line_style(RGBColor(236, 236, 242))
        .y_label_formatter(&|v| short(v.abs()))
        .draw()?;
    let to_s = |ns: u64| ns as f64 / 1e9;
    let prefill = ShapeStyle {
        color: ORANGE.mix(0.85),
        filled: true,
        stroke_width: 0,
    };
    let decode = ShapeStyle {
        color: BLUE.mix(0.85),
        filled: true,
        stroke_width: 0,
    };
    let waiting = ShapeStyle {
        color: GREY.mix(0.5),
        filled: true,
        stroke_width: 0,
    };
    chart
        .draw_series(passes.iter().filter(|p| p.decode_seqs > 0).map(|p| {
            Rectangle::new(
                [
                    (to_s(p.start_ns), 0.0),
                    (to_s(p.end_ns.min(end_ns)), f64::from(p.decode_seqs)),
                ],
                decode,
            )
        }))?
        .label("decode (generating tokens)")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], decode));
    chart
        .draw_series(passes.iter().filter(|p| p.prefill_seqs > 0).map(|p| {
            let base = f64::from(p.decode_seqs);
            Rectangle::new(
                [
                    (to_s(p.start_ns), base),
                    (to_s(p.end_ns.min(end_ns)), base + f64::from(p.prefill_seqs)),
                ],
                prefill,
            )
        }))?
        .label("prefill (reading prompts)")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], prefill));
    chart
        .draw_series(passes.iter().filter(|p| p.waiting > 0).map(|p| {
            Rectangle::new(
                [
                    (to_s(p.start_ns), -f64::from(p.waiting)),
                    (to_s(p.end_ns.min(end_ns)), 0.0),
                ],
                waiting,
            )
        }))?
        .label("requests waiting")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], waiting));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(GREY)
        .label_font((FONT, 12))
        .draw()?;
    root.present()
}

/// A copy of the report whose time series stop at `t_s` (playback).
pub fn until(r: &Report, t_s: f64) -> Report {
    let mut c = r.clone();
    let n = c.series.t_s.partition_point(|&t| t <= t_s + 1e-9);
    let s = &mut c.series;
    s.t_s.truncate(n);
    s.arrivals_per_s.truncate(n);
    s.queue_depth.truncate(n);
    s.in_flight.truncate(n);
    s.batch_size.truncate(n);
    s.kv_use.truncate(n);
    s.output_tokens_per_s.truncate(n);
    s.input_tokens_per_s.truncate(n);
    s.retries_per_s.truncate(n);
    s.ttft_p50_ms.truncate(n);
    s.ttft_p99_ms.truncate(n);
    s.e2e_p50_ms.truncate(n);
    s.e2e_p99_ms.truncate(n);
    s.throttled_per_s.truncate(n);
    s.api_tokens_per_min.truncate(n);
    s.api_token_fill.truncate(n);
    c
}

/// Every time-series chart: (DOM id, title for exports, draw function).
pub type ChartFn<DB> = fn(&DrawingArea<DB, Shift>, &Report, Option<&Report>) -> DrawResult<DB>;

use sim_core::sweep::{Axis, Curve, Summary};

/// Draw a sweep: p99 TTFT and output throughput against the first axis, one
/// line per value of the second.
pub fn sweep<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    axes: &[Axis],
    rows: &[(Vec<String>, Summary)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(root.dim_in_pixel().0 / 2);
    let x = |labels: &[String]| labels[0].parse::<f64>().unwrap_or(0.0);
    let groups: Vec<String> = match axes.get(1) {
        Some(a) => a.values.clone(),
        None => vec![String::new()],
    };
    let palette = [
        RGBColor(31, 90, 180),
        RGBColor(178, 80, 0),
        RGBColor(20, 120, 60),
        RGBColor(190, 30, 45),
        RGBColor(110, 60, 160),
    ];
    let x_max = rows.iter().map(|(l, _)| x(l)).fold(0.0, f64::max).max(1e-9);
    for (area, title, metric) in [
        (
            &left,
            "p99 TTFT (ms)",
            (|s: &Summary| s.ttft_p99_ms.unwrap_or(0.0)) as fn(&Summary) -> f64,
        ),
        (&right, "output tokens/s", |s: &Summary| {
            s.output_tokens_per_s
        }),
    ] {
        let y_max = rows
            .iter()
            .map(|(_, s)| metric(s))
            .fold(0.0, f64::max)
            .max(1e-9)
            * 1.1;
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc(axes[0].parameter.as_str())
            .draw()?;
        for (gi, g) in groups.iter().enumerate() {
            let colour = palette[gi % palette.len()];
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|(l, _)| l.get(1).is_none_or(|v| v == g))
                .map(|(l, s)| (x(l), metric(s)))
                .collect();
            let label = match axes.get(1) {
                Some(a) => format!("{}={g}", a.parameter),
                None => title.to_owned(),
            };
            chart
                .draw_series(LineSeries::new(pts, colour.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()?;
    }
    root.present()
}

/// Draw latency (p50 solid, p99 dashed) against achieved throughput per policy,
/// saturation points circled.
pub fn latency_throughput<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    curves: &[Curve],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let x_max = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.05;
    let y_max = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.3))
        .fold(0.0, f64::max)
        .max(1e-9);
    let mut chart = ChartBuilder::on(root)
        .caption(
            "Latency vs throughput by batching policy (p50 solid, p99 dashed)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, (1.0..y_max * 1.5).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("achieved output tokens/s")
        .y_desc("end-to-end latency (ms)")
        .x_label_formatter(&|v| short(*v))
        .y_label_formatter(&|v| short(*v))
        .draw()?;
    let palette = [
        RGBColor(110, 110, 120),
        RGBColor(178, 80, 0),
        RGBColor(20, 120, 60),
        RGBColor(31, 90, 180),
    ];
    for (i, c) in curves.iter().enumerate() {
        let colour = palette[i % palette.len()];
        chart
            .draw_series(LineSeries::new(
                c.points.iter().map(|p| (p.1, p.2.max(1.0))),
                colour.stroke_width(2),
            ))?
            .label(c.policy.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
        chart.draw_series(DashedLineSeries::new(
            c.points.iter().map(|p| (p.1, p.3.max(1.0))),
            6,
            4,
            colour.stroke_width(1),
        ))?;
        if let Some(p) = c.saturation.and_then(|i| c.points.get(i)) {
            chart.draw_series(std::iter::once(Circle::new(
                (p.1, p.3.max(1.0)),
                6,
                colour.stroke_width(2),
            )))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    root.present()
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::backend::SVGBackend;

    #[test]
    fn every_chart_draws_a_real_report_to_svg() {
        for s in [
            sim_core::presets::chatbot_h100(),
            sim_core::presets::launch_spike(),
        ] {
            let r = sim_core::run_scenario(s.clone()).expect("valid");
            for i in 0..7 {
                let mut svg = String::new();
                {
                    let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
                    let f: ChartFn<SVGBackend> = [
                        queue,
                        latency,
                        throughput,
                        arrivals,
                        batch,
                        api,
                        distribution,
                    ][i];
                    f(&root, &r, Some(&r)).expect("draws");
                }
                assert!(
                    svg.contains("<polyline") || svg.contains("<path"),
                    "chart {i} drew no line"
                );
            }
        }
    }

    #[test]
    fn the_timeline_draws_prefill_and_decode_bars() {
        let s = sim_core::presets::chatbot_h100();
        let mut sim = sim_core::Simulation::new(&s.validate().expect("valid"));
        sim.record_trace(2_000);
        sim.advance_until(5_000_000_000);
        let trace = sim.trace().expect("recorded");
        assert!(
            trace.passes.iter().any(|p| p.prefill_seqs > 0)
                && trace.passes.iter().any(|p| p.decode_seqs > 0)
        );
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (900, 300)).into_drawing_area();
            timeline(&root, trace, 5.0).expect("draws");
        }
        assert!(svg.matches("<rect").count() > 100, "one bar per pass");
        let r = sim_core::run_scenario(sim_core::presets::chatbot_h100()).expect("valid");
        let cut = until(&r, 60.0);
        assert!(
            cut.series.t_s.len() < r.series.t_s.len()
                && cut.series.t_s.last().is_some_and(|t| *t <= 60.0)
        );
    }
}
