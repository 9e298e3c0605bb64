//! What the charts show: series, axis ranges and units, legend entries and
//! styles, target lines; and that every one draws to SVG.

use super::*;
use crate::model::{Mark, Scale, Stroke};
use plotters::backend::SVGBackend;
use sim_core::presets;

fn run(s: sim_core::Scenario) -> Report {
    sim_core::run_scenario(s).expect("valid")
}

#[test]
fn every_report_chart_draws_its_lines_with_a_legend_matching_their_style() {
    for r in [run(presets::chatbot_h100()), run(presets::launch_spike())] {
        for c in REPORT_CHARTS {
            let id = c.id;
            if !(c.applies)(&r) {
                continue; // the page hides it
            }
            let chart = (c.model)(&r, Some(&r));
            assert!(!chart.lines.is_empty(), "{id}: no lines");
            assert!(
                chart.lines.iter().any(|l| !l.points.is_empty()),
                "{id}: every line empty"
            );
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
                render::draw(&root, &chart).expect("draws");
            }
            for entry in chart.legend_entries() {
                assert!(svg.contains(entry), "{id}: legend lacks {entry:?}");
            }
            let dashed = chart
                .lines
                .iter()
                .filter(|l| l.stroke == Stroke::Dashed)
                .count();
            if dashed > 0 && chart.lines.len() > 1 {
                // A dashed line's legend sample is two short strokes, a solid one's
                // two touching ones: more polylines than lines.
                assert!(
                    svg.matches("<polyline").count() > chart.lines.len(),
                    "{id}: legend samples missing"
                );
            }
        }
    }
}

#[test]
fn queue_chart_shows_waiting_and_running_neither_inside_the_other() {
    let mut s = presets::chatbot_h100();
    // Overloaded, so requests wait.
    s.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 40.0 };
    let r = run(s);
    let c = queue::model(&r, None);
    assert_eq!(c.legend_entries(), ["running (in a batch)", "waiting"]);
    let last_t = *r.series.t_s.last().expect("windows");
    assert_eq!(c.x.max, last_t);
    let running = c.line("running (in a batch)").expect("running");
    let waiting = c.line("waiting").expect("waiting");
    // Running + waiting is what is in flight, window by window; waiting is
    // drawn last, over running.
    for ((r_pt, w_pt), f) in running
        .points
        .iter()
        .zip(&waiting.points)
        .zip(&r.series.in_flight)
    {
        assert!((r_pt.1 + w_pt.1 - f).abs() < 1e-9 || w_pt.1 > *f);
    }
    assert_eq!(c.lines.last().map(|l| l.label.as_str()), Some("waiting"));
    let peak = running
        .points
        .iter()
        .chain(&waiting.points)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    assert!(
        c.y.max >= peak && c.y.max <= peak * 1.2 + 1.0,
        "{} vs {peak}",
        c.y.max
    );
}

#[test]
fn ttft_and_end_to_end_each_have_their_own_scale_and_the_target_reads_in_its_unit() {
    // Overloaded: end-to-end reaches seconds or minutes; TTFT keeps its own
    // axis, and the target's label reads "500 ms" whatever the axis unit.
    let mut slow = presets::chatbot_h100();
    slow.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 60.0 };
    let slow = run(slow);
    let light = run(presets::chatbot_h100());
    for r in [&light, &slow] {
        let s = &r.series;
        let ttft_max = s
            .ttft_p99_ms
            .iter()
            .flatten()
            .copied()
            .fold(r.slo.ttft_ms, f64::max);
        let unit = crate::model::TimeUnit::for_max_ms(ttft_max);
        let c = latency::model(r, None);
        assert_eq!(c.y.label, format!("latency ({})", unit.symbol()));
        assert!(
            c.line("end-to-end p99").is_none(),
            "end-to-end has its own chart"
        );
        assert!(matches!(
            c.marks.as_slice(),
            [Mark::Horizontal { y, label, .. }]
                if *y == 500.0 / unit.ms() && label == "TTFT target 500 ms"
        ));
        assert!(
            c.legend_entries().contains(&"TTFT target 500 ms"),
            "the target is in the legend"
        );
        assert!(c.y.max >= ttft_max / unit.ms());
        let e = e2e::model(r, None);
        let e2e_max = s.e2e_p99_ms.iter().flatten().copied().fold(0.0, f64::max);
        let e_unit = crate::model::TimeUnit::for_max_ms(e2e_max);
        assert_eq!(e.y.label, format!("latency ({})", e_unit.symbol()));
        assert_eq!(
            e.line("end-to-end p99").expect("p99 line").stroke,
            Stroke::Dashed
        );
    }
    // The light run's TTFT (hundreds of ms) fills its own axis instead of
    // the bottom of one sized for its end-to-end latency (seconds).
    let axis_ms = |c: &crate::model::Chart| {
        let unit = if c.y.label.ends_with("(ms)") {
            1.0
        } else if c.y.label.ends_with("(s)") {
            1e3
        } else {
            6e4
        };
        c.y.max * unit
    };
    let (t, e) = (
        axis_ms(&latency::model(&light, None)),
        axis_ms(&e2e::model(&light, None)),
    );
    assert!(t * 3.0 < e, "TTFT axis to {t} ms, end-to-end to {e} ms");
    let d = distribution::model(&slow, None);
    assert_eq!((d.y.min, d.y.max), (0.0, 100.0));
    assert_ne!(d.x.label, "latency (ms)");
    assert!(
        d.legend_entries().contains(&"TTFT target 500 ms"),
        "{:?}",
        d.legend_entries()
    );
}

#[test]
fn a_reasoning_model_draws_its_first_visible_token_above_its_ttft() {
    let plain = run(presets::chatbot_h100());
    assert!(
        latency::model(&plain, None)
            .line("first visible token p50")
            .is_none()
    );
    let mut s = presets::chatbot_h100();
    s.workload.classes[0].reasoning_tokens = Some(sim_core::dist::Dist::Fixed { value: 800.0 });
    let r = run(s);
    let c = latency::model(&r, None);
    let visible = c.line("first visible token p50").expect("thinking shown");
    let ttft = c.line("TTFT p50").expect("ttft");
    let (v, t): (f64, f64) = (
        visible.points.iter().map(|p| p.1).sum(),
        ttft.points.iter().map(|p| p.1).sum(),
    );
    // Thinking 800 tokens takes several times the wait for the first
    // (hidden) token, queueing included.
    assert!(
        v > 3.0 * t,
        "thinking 800 tokens dwarfs the prefill: {v} vs {t}"
    );
    assert!(crate::render::describe(&c).contains("first visible token"));
}

#[test]
fn monthly_costs_sit_on_a_log_axis_that_shows_both_lines_and_the_crossover() {
    let s = presets::pay_for_speed();
    let capacity = sim_core::compare::replica_capacity_per_s(&s).expect("runs");
    let curves = sim_core::compare::cost_curves(&s, capacity);
    let cmp = curves.comparison.expect("an API tier");
    let c = cost::monthly_model(&cmp, Some(curves.today_per_s));
    assert_eq!(c.y.scale, Scale::Log);
    for l in &c.lines {
        for p in &l.points {
            assert!(
                p.1 >= c.y.min && p.1 <= c.y.max,
                "{}: {p:?} off the axis",
                l.label
            );
        }
    }
    if let Some(x) = cmp.crossover_load_per_s {
        assert!(
            c.marks
                .iter()
                .any(|m| matches!(m, Mark::Vertical { x: at, .. } if *at == x))
        );
    }
    let per = cost::per_mtok_model(&curves.per_mtok, Some(curves.today_per_s));
    assert_eq!(per.y.scale, Scale::Log);
    // Both mark today's load, the scenario's own.
    assert_eq!(curves.today_per_s, s.peak_tasks_per_s());
    for chart in [&c, &per] {
        assert!(
            chart
                .marks
                .iter()
                .any(|m| matches!(m, Mark::Vertical { x, label, .. }
                if *x == curves.today_per_s && label.starts_with("today's load"))),
            "{}: {:?}",
            chart.title,
            chart.marks
        );
    }
}

#[test]
fn every_report_chart_says_what_to_read_in_it() {
    for c in REPORT_CHARTS {
        assert!(
            c.caption.len() > 60 && c.caption.ends_with('.'),
            "{}: {:?}",
            c.id,
            c.caption
        );
    }
}

#[test]
fn the_curve_names_every_policy_and_fits_its_range_to_the_data() {
    let curve = sim_core::sweep::Curve {
        policy: "chunked_prefill".into(),
        points: vec![(1.0, 200.0, 900.0, 1500.0), (2.0, 400.0, 1100.0, 2500.0)],
        saturation: Some(1),
    };
    let none = sim_core::sweep::Curve {
        policy: "none".into(),
        points: vec![(1.0, 50.0, 4000.0, 9000.0)],
        saturation: None,
    };
    let c = curve::model(&[none, curve], Some(3000.0), Some((2500.0, 3400.0)));
    assert_eq!(
        c.legend_entries(),
        [
            "none (one at a time) p50",
            "none (one at a time) p99",
            "continuous + chunked prefill p50",
            "continuous + chunked prefill p99",
            "tips over within the model's error: 2.5k–3.4k output tok/s",
            "today's load: 3.0k output tok/s",
            "○ the highest load each policy kept up with",
        ]
    );
    // Durations on a log axis.
    assert_eq!(c.y.scale, Scale::LogMs);
    assert!(c.y.min > 100.0 && c.y.max < 100_000.0, "{:?}", c.y);
    let p99 = c.line("continuous + chunked prefill p99").expect("line");
    assert_eq!(p99.circle, Some((400.0, 2500.0)));
    // Today's load and the tipping band are inside the range, past the
    // curve's own points; a band that is not one is not drawn.
    assert!(c.x.max >= 3400.0, "{:?}", c.x);
    for bad in [(3400.0, 2500.0), (0.0, 10.0), (f64::NAN, 1.0)] {
        let c = curve::model(&[], None, Some(bad));
        assert!(c.marks.is_empty(), "{bad:?}");
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        render::draw(&root, &c).expect("draws");
    }
    // One unit for the whole axis, named in its label; ticks at round
    // numbers of it (1, 2, 5 × powers of ten), never 31.6 or 2.8 h.
    assert_eq!(c.y.label, "end-to-end latency (s, log)");
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    for tick in ["1.0", "2.0", "5.0", "10"] {
        assert!(texts.contains(&tick), "a tick {tick}");
    }
    assert!(
        !texts
            .iter()
            .any(|t| t.ends_with(" min") || t.ends_with(" s") || t.ends_with(" ms")),
        "no unit on a tick: the axis names it"
    );
    // The tipping band is drawn: one light rectangle of its colour.
    assert!(svg.contains("opacity=\"0.14\""), "a shaded span");
    // The legend keeps off the band and today's load, both at the right:
    // its corner there (the chart's own, lower right) covers no line's
    // point but would hide them.
    let plotted = {
        let mut svg = String::new();
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        render::draw_plotted(&root, &c).expect("draws")
    };
    let legend = plotted.legend_px.expect("a legend");
    let left_of = |x: f64| plotted.pixel_of((x, c.y.min)).0 - f64::from(plotted.x_px.0);
    assert!(
        f64::from(legend[0] + legend[2]) < left_of(2500.0),
        "legend {legend:?} over the band from {} px",
        left_of(2500.0)
    );
    for entry in c.legend_entries() {
        // (SVG escapes the apostrophe: match what follows it.)
        let tail = entry.rsplit('\'').next().unwrap_or(entry);
        assert!(svg.contains(tail.trim_start_matches("○ ")), "{entry}");
    }
}

#[test]
fn the_timeline_shows_prefill_and_decode_bars_and_a_description() {
    let s = presets::chatbot_h100();
    let mut sim = sim_core::Simulation::new(&s.validate().expect("valid"));
    sim.record_trace(2_000);
    sim.advance_until(5_000_000_000);
    let trace = sim.trace().expect("recorded");
    let c = timeline::model(trace, 5.0);
    assert!(c.bars.iter().any(|b| b.kind == 0) && c.bars.iter().any(|b| b.kind == 1));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 300)).into_drawing_area();
        render::draw(&root, &c).expect("draws");
    }
    assert!(svg.matches("<rect").count() > 100, "one bar per pass");
    let text = render::describe(&c);
    assert!(text.starts_with("GPU timeline") && text.contains("decode (generating tokens)"));
}

#[test]
fn a_description_states_the_key_numbers() {
    let r = run(presets::chatbot_h100());
    let text = render::describe(&throughput::model(&r, None));
    assert!(text.starts_with("Throughput."), "{text}");
    assert!(
        text.contains("output tok/s:") && text.contains("highest"),
        "{text}"
    );
}

#[test]
fn a_measured_run_is_drawn_dashed_over_its_replay_on_one_axis() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../sim-core/tests/traces/");
    let read = |n: &str| std::fs::read_to_string(format!("{dir}{n}")).expect("test data");
    let m = sim_core::traces::measured::parse(
        &read("rtx4090-requests.jsonl"),
        Some(&read("rtx4090-meta.json")),
        None,
    )
    .expect("parsed");
    let (s, _) = m
        .scenario(&sim_core::presets::chatbot_h100())
        .expect("replay");
    let r = run(s);
    let c = distribution::with_measured(&r, None, Some(&m));
    let measured = c.line("end-to-end measured").expect("measured line");
    assert_eq!(measured.stroke, crate::model::Stroke::Dashed);
    assert_eq!(measured.points.len(), r.distribution.quantiles.len());
    // The axis reaches both curves' slowest request.
    let slowest = |l: &crate::model::Line| l.points.iter().map(|p| p.0).fold(0.0, f64::max);
    assert!(c.x.max >= slowest(measured));
    assert!(c.x.max >= slowest(c.line("end-to-end").expect("simulated")));
    // The measured median is the run's own (83.4 s), in the chart's unit.
    let (unit_ms, at_half) = (
        if c.x.label.contains("min") {
            60_000.0
        } else {
            1_000.0
        },
        measured
            .points
            .iter()
            .find(|p| (p.1 - 50.0).abs() < 1e-6)
            .expect("the median level")
            .0,
    );
    assert!((at_half * unit_ms - 83_413.3).abs() < 100.0, "{at_half}");
    // Without its time series there are no series charts; with it, each
    // measured line is the engine's own, second by second.
    assert!(crate::measured::queue(&r, &m).is_none());
    let with_series = sim_core::traces::measured::parse(
        &read("rtx4090-requests.jsonl"),
        Some(&read("rtx4090-meta.json")),
        Some(&read("rtx4090-timeseries.csv")),
    )
    .expect("parsed");
    let q = crate::measured::queue(&r, &with_series).expect("a queue chart");
    let waiting = q.line("waiting measured").expect("measured waiting");
    assert_eq!(waiting.points.len(), with_series.series.len());
    assert_eq!(
        waiting.points.iter().map(|p| p.1).fold(0.0, f64::max),
        234.0
    );
    let kv = crate::measured::kv(&r, &with_series).expect("a KV chart");
    assert!(kv.y.max >= 100.0 && kv.line("KV in use").is_some());
    // Without a measured run the chart is the plain distribution chart.
    assert_eq!(
        distribution::with_measured(&r, None, None),
        distribution::model(&r, None)
    );
}

#[test]
fn the_queue_chart_draws_the_replicas_up_when_a_pool_autoscales() {
    let mut s = sim_core::presets::chatbot_h100();
    s.duration_s = 120.0;
    sim_core::params::apply(&mut s, "autoscale", "queue_per_replica").expect("autoscale");
    sim_core::params::apply(&mut s, "autoscale.max", "3").expect("max");
    let r = run(s);
    let c = queue::model(&r, None);
    assert_eq!(
        c.legend_entries(),
        [
            "running (in a batch)",
            "waiting",
            "replicas up (starting or serving)"
        ]
    );
    assert_eq!(c.title, "Requests waiting and running, and replicas up");
    let up = c
        .line("replicas up (starting or serving)")
        .expect("replicas");
    assert_eq!(up.points.len(), r.series.replicas_up.len());
    assert!(
        up.points
            .iter()
            .all(|&(_, n)| (1.0 - 1e-9..=3.0 + 1e-9).contains(&n))
    );
}

#[test]
fn the_trade_off_draws_every_settled_setup_the_frontier_and_the_setup_as_it_is() {
    use sim_core::plan::{PlanSlo, Space};
    let mut s = presets::chatbot_h100();
    s.duration_s = 60.0;
    let slo = PlanSlo::for_scenario(&s);
    let space = Space {
        gpus: vec![sim_core::physics::Gpu::L40s, sim_core::physics::Gpu::H100],
        tps: vec![1, 2],
        max_seqs: vec![64, 256],
        ..Space::default()
    };
    let mut plan = sim_core::plan::plan(&s, slo, &space);
    let on_screen = run(s.clone());
    plan.include_as_is(&s, &slo, &on_screen);
    let pinned = (500.0, 20_000.0);
    let chart = tradeoff::model(&plan, Some(pinned));
    let met = chart.line("meets every target").expect("met");
    assert_eq!(met.stroke, Stroke::Dots);
    assert_eq!(
        met.points.len() + 1,
        plan.feasible.len(),
        "every answer but the setup as it is"
    );
    // The frontier: faster is dearer, and nothing that meets the targets is
    // both cheaper and at least as fast as a point on it.
    let f = &chart
        .line("frontier: nothing both cheaper and faster")
        .expect("frontier")
        .points;
    assert!(!f.is_empty());
    assert!(
        f.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 > w[1].1),
        "{f:?}"
    );
    for p in f {
        assert!(
            !met.points.iter().any(|q| q.0 <= p.0 && q.1 < p.1),
            "{p:?} is beaten"
        );
    }
    // The setup on screen, ringed at its own p99 TTFT and cost; A beside it.
    let mine = chart.line("your setup as it is").expect("as it is");
    let here = (
        on_screen.overall.ttft.p99_ms.expect("a p99"),
        on_screen.cost.usd_per_month,
    );
    assert_eq!(mine.circle, Some(here));
    assert_eq!(chart.line("pinned A").and_then(|l| l.circle), Some(pinned));
    // Both axes log, latency read as durations, and every point inside them.
    assert_eq!((chart.x.scale, chart.y.scale), (Scale::LogMs, Scale::Log));
    for l in &chart.lines {
        for p in &l.points {
            assert!(
                chart.x.min <= p.0
                    && p.0 <= chart.x.max
                    && chart.y.min <= p.1
                    && p.1 <= chart.y.max
            );
        }
    }
    let words = render::describe(&chart);
    assert!(words.contains("your setup as it is: 1 point"), "{words}");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        render::draw(&root, &chart).expect("draws");
    }
    assert!(svg.contains("<circle"), "dots drawn");
}

#[test]
fn a_click_on_a_drawn_dot_finds_that_dot() {
    use crate::model::{Axis, Line, RED};
    let axis = |scale| Axis {
        label: "v".into(),
        min: 1.0,
        max: 1000.0,
        scale,
    };
    let dots = vec![(2.0, 10.0), (50.0, 300.0), (900.0, 5.0)];
    let chart = model::Chart::lines(
        "dots",
        axis(Scale::Log),
        axis(Scale::Linear),
        vec![Line::new("setups", RED, Stroke::Dots, dots.clone())],
    );
    let mut svg = String::new();
    let plotted = {
        let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
        render::draw_plotted(&root, &chart).expect("draws")
    };
    // The centres the SVG drew its dots at.
    let centres: Vec<(f64, f64)> = svg
        .lines()
        .filter(|l| l.contains("<circle"))
        .filter_map(|l| {
            let num = |key: &str| -> Option<f64> {
                let at = l.find(key)? + key.len();
                l[at..].split('"').next()?.parse().ok()
            };
            Some((num("cx=\"")?, num("cy=\"")?))
        })
        .collect();
    assert_eq!(centres.len(), dots.len());
    for p in &dots {
        let (x, y) = plotted.pixel_of(*p);
        // Drawn where it is read back, to the pixel; a click a few pixels
        // off finds it.
        assert!(
            centres
                .iter()
                .any(|c| (c.0 - x).abs() <= 1.5 && (c.1 - y).abs() <= 1.5),
            "a dot at {x},{y}: {centres:?}"
        );
        assert_eq!(
            plotted.dot_at(&chart, (x + 3.0, y - 2.0), 8.0),
            Some(("setups", *p))
        );
    }
    assert_eq!(
        plotted.dot_at(&chart, (5.0, 5.0), 8.0),
        None,
        "nothing near the corner"
    );
}

#[test]
fn a_legend_sits_where_it_covers_the_fewest_points() {
    let mut worst = Vec::new();
    for s in [
        presets::chatbot_h100(),
        presets::launch_spike(),
        presets::launch_day_gpus(),
        presets::chat_and_batch(),
    ] {
        let r = run(s);
        for c in REPORT_CHARTS {
            if !(c.applies)(&r) {
                continue;
            }
            let chart = (c.model)(&r, Some(&r));
            let mut svg = String::new();
            let plotted = {
                let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
                render::draw_plotted(&root, &chart).expect("draws")
            };
            let points: usize = chart.lines.iter().map(|l| l.points.len()).sum();
            if plotted.legend_px.is_some() {
                worst.push((
                    plotted.legend_covers as f64 / points.max(1) as f64,
                    c.id,
                    chart.title.clone(),
                ));
            }
        }
    }
    // At most one point in twenty under the legend (its own corner covered
    // 7 % of the batch chart's before the legend chose among the four).
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    assert!(worst.iter().all(|w| w.0 <= 0.05), "{worst:?}");
}
