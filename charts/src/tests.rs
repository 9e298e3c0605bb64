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
fn queue_chart_spans_the_run_and_fits_its_peak() {
    let r = run(presets::chatbot_h100());
    let c = queue::model(&r, None);
    assert_eq!(c.legend_entries(), ["waiting", "in flight"]);
    let last_t = *r.series.t_s.last().expect("windows");
    assert_eq!(c.x.max, last_t);
    let peak = r.series.in_flight.iter().copied().fold(0.0, f64::max);
    assert!(
        c.y.max >= peak && c.y.max <= peak * 1.2 + 1.0,
        "{} vs {peak}",
        c.y.max
    );
}

#[test]
fn long_latencies_read_in_seconds_or_minutes_with_the_target_drawn() {
    let r = run(presets::chatbot_h100());
    let s = &r.series;
    let max_ms = s
        .ttft_p99_ms
        .iter()
        .chain(&s.e2e_p99_ms)
        .flatten()
        .copied()
        .fold(r.slo.ttft_ms, f64::max);
    let unit = crate::model::TimeUnit::for_max_ms(max_ms);
    let c = latency::model(&r, None);
    assert_eq!(c.y.label, format!("latency ({})", unit.symbol()));
    assert!(matches!(
        c.marks.as_slice(),
        [Mark::Horizontal { y, label, .. }]
            if *y == 500.0 / unit.ms() && label.contains("TTFT target")
    ));
    assert!(c.y.max >= max_ms / unit.ms());
    let mut slow = presets::chatbot_h100();
    slow.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 60.0 };
    let slow = run(slow);
    let c = latency::model(&slow, None);
    assert!(
        c.y.label == "latency (s)" || c.y.label == "latency (min)",
        "{}",
        c.y.label
    );
    let p99 = c.line("end-to-end p99").expect("p99 line");
    assert_eq!(p99.stroke, Stroke::Dashed);
    let d = distribution::model(&slow, None);
    assert_eq!((d.y.min, d.y.max), (0.0, 100.0));
    assert_ne!(d.x.label, "latency (ms)");
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
    let c = cost::monthly_model(&cmp);
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
    let per = cost::per_mtok_model(&curves.per_mtok);
    assert_eq!(per.y.scale, Scale::Log);
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
    let c = curve::model(&[none, curve]);
    assert_eq!(
        c.legend_entries(),
        [
            "none (one at a time) p50",
            "none (one at a time) p99",
            "continuous + chunked prefill p50",
            "continuous + chunked prefill p99"
        ]
    );
    assert_eq!(c.y.scale, Scale::Log);
    assert!(c.y.min > 100.0 && c.y.max < 100_000.0, "{:?}", c.y);
    let p99 = c.line("continuous + chunked prefill p99").expect("line");
    assert_eq!(p99.circle, Some((400.0, 2500.0)));
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
