//! Ranges: the scenario run again at the profile's measured step-time
//! error and over seeds (`sim_core::ranges`).

use sim_core::compare::replica_capacity_per_s;
use sim_core::presets;
use sim_core::ranges::{Verdict, band_for, ranges};
use sim_core::scenario::{Arrival, Scenario};

fn chatbot_at(rate: f64) -> Scenario {
    let mut s = presets::chatbot_h100();
    s.workload.arrival = Arrival::Poisson { rate_per_s: rate };
    s
}

#[test]
fn a_scale_of_one_changes_nothing_and_a_slower_engine_is_slower() {
    let s = chatbot_at(4.0);
    let base = sim_core::run_scenario(s.clone()).unwrap();
    let mut one = s.clone();
    one.serving.step_time_scale = Some(1.0);
    let same = sim_core::run_scenario(one).unwrap();
    assert_eq!(
        serde_json::to_string(&base).unwrap(),
        serde_json::to_string(&same).unwrap()
    );
    let mut slow = s;
    slow.serving.step_time_scale = Some(1.2);
    let slower = sim_core::run_scenario(slow).unwrap();
    let ratio = slower.overall.tpot.p50_ms.unwrap() / base.overall.tpot.p50_ms.unwrap();
    // At light load the time per token is the pass time, the scheduler's
    // CPU time included (scaled too).
    assert!((ratio - 1.2).abs() < 0.03, "time per token ×{ratio}");
}

#[test]
fn the_prompt_part_scales_apart_from_decode() {
    let s = chatbot_at(2.0);
    let base = sim_core::run_scenario(s.clone()).unwrap();
    let mut one = s.clone();
    one.serving.prefill_time_scale = Some(1.0);
    let same = sim_core::run_scenario(one).unwrap();
    assert_eq!(
        serde_json::to_string(&base).unwrap(),
        serde_json::to_string(&same).unwrap()
    );
    // Slower passes with a prompt: the first token later (by less than
    // ×1.5: it also waits for the pass under way, and async scheduling's
    // pass ahead), the decode passes between prompts as they were.
    let mut slow = s;
    slow.serving.prefill_time_scale = Some(1.5);
    let slower = sim_core::run_scenario(slow).unwrap();
    let ttft = slower.overall.ttft.p50_ms.unwrap() / base.overall.ttft.p50_ms.unwrap();
    assert!(ttft > 1.1 && ttft < 1.5, "TTFT ×{ttft}");
    let tpot = slower.overall.tpot.p50_ms.unwrap() / base.overall.tpot.p50_ms.unwrap();
    assert!((tpot - 1.0).abs() < 0.1, "time per token ×{tpot}");
}

#[test]
fn a_scale_out_of_bounds_is_refused_by_name() {
    let mut s = chatbot_at(4.0);
    s.serving.step_time_scale = Some(10.0);
    let e = s.validate().unwrap_err().to_string();
    assert!(
        e.contains("serving.step_time_scale must be 0.25..=4, got 10"),
        "{e}"
    );
    let mut s = chatbot_at(4.0);
    s.serving.prefill_time_scale = Some(0.1);
    let e = s.validate().unwrap_err().to_string();
    assert!(
        e.contains("serving.prefill_time_scale must be 0.25..=4, got 0.1"),
        "{e}"
    );
}

#[test]
fn the_default_fleet_has_its_measured_band_and_others_an_estimate() {
    let s = chatbot_at(4.0);
    let b = band_for(&s.serving);
    assert!(b.measured, "{b:?}");
    assert!(b.low < 1.0 && b.high > 1.0 && b.rows >= 40, "{b:?}");
    let mut other = s.serving.clone();
    other.gpu = sim_core::physics::Gpu::L4;
    let e = band_for(&other);
    assert!(
        !e.measured && e.source.starts_with("nothing measured on L4"),
        "{e:?}"
    );
    assert!(e.low <= 0.8 && e.high >= 1.25, "{e:?}");
}

#[test]
fn every_range_holds_its_point_and_repeats_exactly() {
    let s = chatbot_at(20.0);
    let (report, r) = ranges(&s).unwrap();
    let point = sim_core::run_scenario(s.clone()).unwrap();
    assert_eq!(
        serde_json::to_string(&report).unwrap(),
        serde_json::to_string(&point).unwrap(),
        "the first range run is the scenario's own"
    );
    assert_eq!(r.runs, 9);
    for (name, f) in &r.figures {
        assert!(f.low <= f.value && f.value <= f.high, "{name}: {f:?}");
    }
    // A slower engine answers later: the p99 TTFT range is not a point.
    let ttft = r.figure("ttft_p99_ms").unwrap();
    assert!(ttft.high > ttft.value * 1.05, "{ttft:?}");
    let again = ranges(&s).unwrap().1;
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    // The page takes the run on screen as the first: the same ranges, one
    // run fewer made.
    let mut runs = sim_core::ranges::RangeRuns::new(&s).with_point(&point);
    let mut made = 0;
    while let Some(next) = sim_core::plan::Runs::next(&mut runs) {
        made += 1;
        let report = sim_core::run_scenario(next).unwrap();
        sim_core::plan::Runs::feed(&mut runs, &report);
    }
    assert_eq!(made, 8);
    let fed = runs.result().expect("done");
    // (`ranges` adds the fleet's figures after the runs'.)
    let mut runs_only = r.clone();
    runs_only.figures.truncate(fed.figures.len());
    assert_eq!(fed, runs_only);
}

#[test]
fn the_verdict_follows_the_load_against_the_measured_capacity() {
    let capacity = replica_capacity_per_s(&chatbot_at(1.0)).expect("a capacity");
    // Well below capacity (80 %, where even the slow end keeps up): stable.
    let (_, low) = ranges(&chatbot_at(0.7 * capacity)).unwrap();
    assert_eq!(low.verdict, Verdict::Stable, "{low:?}");
    assert_eq!(low.growing, 0);
    // Above the fast end's capacity: every run grows its queue.
    let (_, high) = ranges(&chatbot_at(1.3 * capacity)).unwrap();
    assert_eq!(high.verdict, Verdict::Overloaded, "{:?}", high.growing);
    assert_eq!(high.meeting_targets, 0);
    // At the capacity itself, within the error: some drain, some do not.
    let (_, knee) = ranges(&chatbot_at(capacity)).unwrap();
    assert_eq!(knee.verdict, Verdict::NearTheKnee, "{:?}", knee.growing);
    assert!(knee.growing > 0 && knee.growing < knee.runs);
}

#[test]
fn the_confident_plan_meets_the_targets_at_both_ends_and_says_what_it_costs() {
    use sim_core::physics::{Gpu, Precision};
    use sim_core::plan::{PlanSlo, Space, confidence::confidence, plan};
    // Near the knee of one H100, where the point answer is one replica.
    let s = chatbot_at(30.0);
    let slo = PlanSlo::for_scenario(&s);
    let space = Space {
        gpus: vec![Gpu::H100],
        tps: vec![1],
        weights: vec![Precision::Bf16],
        max_seqs: vec![256],
        max_replicas: 4,
        ..Space::default()
    };
    let p = plan(&s, slo, &space);
    let point = p
        .feasible
        .first()
        .expect("a setup meets the targets")
        .clone();
    let sure = confidence(&s, &p, slo, 0.9).unwrap();
    let checked_point = sure.point.clone().expect("the point answer checked");
    assert_eq!(checked_point.replicas, point.replicas);
    assert_eq!(checked_point.runs, 9);
    assert!(
        checked_point.meets < checked_point.runs,
        "at 30 req/s one H100 is near its knee: {checked_point:?}"
    );
    let c = sure
        .confident
        .clone()
        .expect("a confident setup within two more replicas");
    // 0.9 of 9 runs is all of them: both ends of the band meet the targets.
    assert_eq!(c.meets, c.runs);
    assert!(c.replicas >= point.replicas && c.replicas <= point.replicas + 2);
    let price = sure.price_usd_per_month().unwrap();
    assert!(price >= 0.0);
    if checked_point.meets < checked_point.runs {
        assert!(c.replicas > point.replicas && price > 0.0, "{sure:?}");
        assert!(
            sure.words().contains("Confidence costs"),
            "{}",
            sure.words()
        );
    }
    // At an even chance the point answer itself is confident enough, or
    // the check says why not.
    let even = confidence(&s, &p, slo, 0.5).unwrap();
    match &even.confident {
        Some(e) => assert!(e.usd_per_month <= c.usd_per_month),
        None => assert!(even.words().starts_with("No setup checked is confident")),
    }
    // The same question gives the same answer.
    assert_eq!(confidence(&s, &p, slo, 0.9).unwrap(), sure);
}

#[test]
fn the_fleet_has_ranges_and_its_point_is_the_cards() {
    use sim_core::compare::fleet_usd_per_month;
    use sim_core::plan::fleet_size::fleet_size;
    // At the knee one replica meets the targets at the fast end only.
    let s = chatbot_at(32.0);
    let (report, r) = ranges(&s).unwrap();
    let capacity = r.figure("capacity_tasks_per_s").expect("capacity");
    let replicas = r.figure("replicas_for_targets").expect("replicas");
    let month = r.figure("usd_per_month").expect("cost a month");
    // The point is the cards': the page's capacity and fleet-size search.
    let c = replica_capacity_per_s(&s).unwrap();
    assert_eq!(capacity.value, c);
    let card = fleet_size(&s, &report, c).unwrap().expect("sized");
    assert_eq!(replicas.value, f64::from(card.replicas));
    assert_eq!(month.value, fleet_usd_per_month(&s, card.replicas));
    // A slower pass sustains less: the band's ends bracket the capacity,
    // about as one over the step-time scale (within 7 %: passes carrying a
    // prompt run at the TTFT band's ends, ×1.10 where the others run ×1.19).
    let b = band_for(&s.serving);
    assert!(capacity.low < c && c < capacity.high, "{capacity:?}");
    assert!(
        (capacity.low * b.high / c - 1.0).abs() < 0.07,
        "{capacity:?}"
    );
    assert!(
        (capacity.high * b.low / c - 1.0).abs() < 0.07,
        "{capacity:?}"
    );
    assert_eq!((replicas.low, replicas.high), (1.0, 2.0), "{replicas:?}");
    assert_eq!(month.high, fleet_usd_per_month(&s, 2));
    assert_eq!(r.replicas_unmet, 0);
    // Where one replica's capacity does not size the deployment (an API
    // serves), there is no fleet range.
    let api = ranges(&presets::launch_spike()).unwrap().1;
    assert!(api.figure("replicas_for_targets").is_none());
}
