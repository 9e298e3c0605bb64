use super::*;
use crate::presets;
use crate::scenario::Arrival;

fn slo() -> PlanSlo {
    PlanSlo {
        ttft_p99_ms: 2000.0,
        tpot_p99_ms: 100.0,
        max_error_fraction: 0.01,
        min_goodput: 0.9,
    }
}

fn small() -> Scenario {
    let mut s = presets::chatbot_h100();
    s.duration_s = 60.0;
    s
}

#[test]
fn the_replica_search_finds_the_boundary() {
    let mut s = small();
    s.workload.arrival = Arrival::Poisson { rate_per_s: 40.0 };
    let cfg = Config::SelfHosted {
        gpu: Gpu::L4,
        tp: 1,
        weights: Precision::Fp8,
        max_seqs: 64,
    };
    let done = Search::new(&s, cfg, slo(), &Space::default()).run_with(crate::run_scenario);
    let best = done.best().expect("L4s can carry it with enough replicas");
    assert!(best.replicas > 1);
    // The size just below fails, and the best re-run directly passes.
    let mut below = done.next().unwrap_or_else(|| s.clone());
    below.serving = done.base.serving.clone();
    below.serving.replicas = best.replicas - 1;
    assert!(
        slo()
            .check(&crate::run_scenario(below.clone()).expect("valid"))
            .is_err()
    );
    let mut at = below.clone();
    at.serving.replicas = best.replicas;
    assert!(
        slo()
            .check(&crate::run_scenario(at.clone()).expect("valid"))
            .is_ok()
    );
}

#[test]
fn hopeless_configurations_are_pruned_with_a_reason() {
    let s = small();
    let tight = PlanSlo {
        tpot_p99_ms: 3.0,
        ..slo()
    };
    let l4 = Search::new(
        &s,
        Config::SelfHosted {
            gpu: Gpu::L4,
            tp: 1,
            weights: Precision::Bf16,
            max_seqs: 32,
        },
        tight,
        &Space::default(),
    );
    assert!(
        l4.pruned
            .as_deref()
            .is_some_and(|p| p.contains("slower than the 3.0 ms TPOT target")),
        "{:?}",
        l4.pruned
    );
    let mut huge = s.clone();
    huge.serving.model = crate::physics::Model::Llama31_70b;
    let fit = Search::new(
        &huge,
        Config::SelfHosted {
            gpu: Gpu::L4,
            tp: 1,
            weights: Precision::Bf16,
            max_seqs: 32,
        },
        slo(),
        &Space::default(),
    );
    assert!(
        fit.pruned
            .as_deref()
            .is_some_and(|p| p.contains("does not fit")),
        "{:?}",
        fit.pruned
    );
}

#[test]
fn headroom_brackets_the_boundary_within_two_percent() {
    let s = small();
    let h = headroom(&s, slo(), 0.02).expect("valid");
    let hi = h.fails_at.expect("fails somewhere below 64×");
    assert!((hi - h.passes_at) / h.passes_at <= 0.02);
    assert!(
        slo()
            .check(&crate::run_scenario(scale_load(&s, h.passes_at)).expect("valid"))
            .is_ok()
    );
    assert!(
        slo()
            .check(&crate::run_scenario(scale_load(&s, hi)).expect("valid"))
            .is_err()
    );
    assert!(h.verdict.starts_with("you can grow"), "{}", h.verdict);
}

#[test]
fn headroom_stops_at_the_simulators_bounds_and_says_which() {
    let mut s = presets::chatbot_h100();
    s.duration_s = 10.0;
    s.workload.arrival = crate::scenario::Arrival::Poisson { rate_per_s: 1600.0 };
    let h = HeadroomSearch::new(&s, slo(), 0.01);
    assert!((62.4..=62.5).contains(&h.cap().0), "{}", h.cap().0);
    let why = h.cap().1.expect("a reason");
    assert!(
        why.contains("rate_per_s") && why.contains("100000"),
        "{why}"
    );
    let mut small = presets::chatbot_h100();
    small.duration_s = 10.0;
    assert_eq!(
        HeadroomSearch::new(&small, slo(), 0.01).cap(),
        (MAX_GROWTH, None)
    );
}

#[test]
fn a_larger_batch_size_that_would_run_identically_is_spared_and_would_have_matched() {
    let space = Space {
        gpus: vec![Gpu::H100, Gpu::L4],
        tps: vec![1],
        weights: vec![Precision::Fp8],
        ..Space::default()
    };
    let done: Vec<Search> = groups(searches(&small(), slo(), &space))
        .into_iter()
        .flat_map(|g| run_group(g, crate::run_scenario))
        .collect();
    let spared: Vec<&Search> = done.iter().filter(|s| s.same_as.is_some()).collect();
    assert!(
        !spared.is_empty(),
        "at 8 req/s an H100's batches stay small"
    );
    for s in spared {
        assert!(s.evaluated.is_empty());
        let m = s.same_as.expect("spared");
        let twin = done
            .iter()
            .find(|o| {
                matches!((&o.config, &s.config), (
                    Config::SelfHosted { gpu: a, max_seqs, .. },
                    Config::SelfHosted { gpu: b, .. },
                ) if a == b && *max_seqs == m)
            })
            .expect("the search it repeats");
        // Run it anyway: the same replica count and the same numbers.
        let mut fresh = Search::new(&small(), s.config.clone(), slo(), &space);
        fresh.drive(crate::run_scenario);
        let (a, b) = (fresh.best(), twin.best());
        assert_eq!(a.map(|e| e.replicas), b.map(|e| e.replicas));
        assert_eq!(a.map(|e| &e.summary), b.map(|e| &e.summary));
    }
    let plan = assemble(done.into_iter().map(Search::finish).collect(), &space);
    assert!(plan.identical > 0);
    // No two rows are the same setup but for a batch size with the same
    // price and the same numbers: those are one row.
    for (i, a) in plan.feasible.iter().enumerate() {
        for b in &plan.feasible[i + 1..] {
            let same_but_batch = matches!((&a.config, &b.config), (
                Config::SelfHosted { gpu: g, tp: t, weights: w, .. },
                Config::SelfHosted { gpu: h, tp: u, weights: v, .. },
            ) if (g, t, w) == (h, u, v));
            assert!(
                !(same_but_batch
                    && a.replicas == b.replicas
                    && a.usd_per_month == b.usd_per_month
                    && a.summary == b.summary),
                "{} and {} tie: one row",
                a.description,
                b.description
            );
        }
    }
    assert!(
        plan.feasible
            .iter()
            .any(|e| e.description.contains("runs the same")),
        "{:?}",
        plan.feasible
            .iter()
            .map(|e| &e.description)
            .collect::<Vec<_>>()
    );
}

#[test]
fn an_api_plan_answers_per_tier_and_flags_a_change_of_model() {
    let mut s = presets::launch_spike();
    s.duration_s = 240.0;
    let space = Space {
        gpus: vec![Gpu::H100],
        tps: vec![1],
        weights: vec![Precision::Fp8],
        max_seqs: vec![256],
        self_hosted: true,
        ..Space::default()
    };
    let slo = PlanSlo {
        ttft_p99_ms: 5_000.0,
        tpot_p99_ms: 100.0,
        max_error_fraction: 0.01,
        min_goodput: 0.0,
    };
    let p = plan(&s, slo, &space);
    // Each tier, with the scenario's client and with a queue.
    assert_eq!(p.api_tiers.len(), 4, "{:?}", p.api_tiers);
    for a in &p.api_tiers {
        assert!(a.multiplier.is_some() != a.why_not.is_some(), "{a:?}");
    }
    // The fail-fast client at 1× turns the launch into errors; some larger
    // multiple or the queue fixes the frontier tier.
    let frontier: Vec<&ApiAnswer> = p
        .api_tiers
        .iter()
        .filter(|a| a.tier == "frontier")
        .collect();
    assert!(
        frontier.iter().any(|a| a.multiplier.is_some()),
        "{frontier:?}"
    );
    // Self-hosting serves another model, and says so; other tiers too.
    for e in &p.feasible {
        match &e.config {
            Config::SelfHosted { .. } => assert!(e.changes_model),
            Config::Api { tier, .. } => assert_eq!(e.changes_model, tier != "frontier"),
            Config::AsIs => panic!("no search runs the setup as it is"),
        }
    }
    let default = Space::for_scenario(&s);
    assert!(
        !default.self_hosted,
        "an API scenario plans on its own models by default"
    );
}

#[test]
fn the_passes_find_the_cheapest_setup_an_unlimited_search_finds() {
    // Groups the first pass leaves out, and groups whose smallest possible
    // size costs more than the answer, are never needed to find it.
    let s = small();
    let space = Space {
        gpus: vec![Gpu::H100, Gpu::L4, Gpu::A100, Gpu::Rtx4090, Gpu::B200],
        tps: vec![1, 2],
        ..Space::default()
    };
    let budgeted = plan(&s, slo(), &space);
    let full = plan(
        &s,
        slo(),
        &Space {
            budget_events: u64::MAX,
            ..space.clone()
        },
    );
    let cheapest = |p: &Plan| p.feasible.first().map(|e| e.usd_per_month);
    assert!(cheapest(&full).is_some());
    assert_eq!(cheapest(&budgeted), cheapest(&full));
    assert!(full.unsettled.is_empty() && full.unsettled_dearer == 0);
    // And it did less work: the dearest hardware never ran.
    assert!(
        budgeted.simulations < full.simulations,
        "{} vs {}",
        budgeted.simulations,
        full.simulations
    );
    assert!(budgeted.unsettled_dearer > 0);
}

#[test]
fn the_setup_as_it_is_answers_when_it_meets_the_targets_and_rules_out_what_cannot_beat_it() {
    // A plan that settled nothing: the budget starves every search.
    let s = small();
    let space = Space {
        gpus: vec![crate::physics::Gpu::H100],
        budget_events: 1,
        ..Space::default()
    };
    let bare = plan(&s, slo(), &space);
    assert!(bare.feasible.is_empty(), "{:?}", bare.feasible);
    assert!(!bare.unsettled.is_empty());
    assert_eq!(bare.unsettled.len(), bare.unsettled_floor_usd.len());
    // The run on screen meets the targets: it is the answer, at its cost.
    let report = crate::run(&s.clone().validate().expect("valid"));
    let mut p = bare.clone();
    p.include_as_is(&s, &slo(), &report);
    let first = &p.feasible[0];
    assert_eq!(first.config, Config::AsIs);
    assert_eq!(first.usd_per_month, report.cost.usd_per_month);
    assert!(
        first
            .description
            .starts_with("your setup as it is (1 × 1 × H100")
    );
    // Searches whose least cost is at or above it cannot change the answer.
    let ruled_out = bare
        .unsettled_floor_usd
        .iter()
        .filter(|&&f| f >= first.usd_per_month)
        .count();
    assert!(ruled_out > 0, "{:?}", bare.unsettled_floor_usd);
    assert_eq!(p.unsettled.len(), bare.unsettled.len() - ruled_out);
    assert_eq!(p.unsettled_dearer, bare.unsettled_dearer + ruled_out);
    // Targets it misses: a near miss, never an answer.
    let strict = PlanSlo {
        ttft_p99_ms: 1.0,
        ..slo()
    };
    let mut q = bare.clone();
    q.include_as_is(&s, &strict, &report);
    assert!(q.feasible.is_empty());
    assert!(
        q.near_misses
            .iter()
            .any(|e| e.config == Config::AsIs
                && e.verdict.as_ref().is_err_and(|w| w.contains("TTFT")))
    );
}

#[test]
fn a_plan_whose_runs_come_back_in_any_order_is_the_plan() {
    // The reference: the CLI's way, each group run whole in turn, then the
    // later passes over the groups reopened.
    let s = small();
    let space = Space {
        gpus: vec![Gpu::H100, Gpu::L4, Gpu::A100],
        tps: vec![1, 2],
        // Small enough that the first pass leaves searches unsettled.
        budget_events: 400_000,
        ..Space::default()
    };
    let mut held: Vec<Vec<Search>> = groups(searches(&s, slo(), &space))
        .into_iter()
        .map(|g| run_group(g, planning_run(slo())))
        .collect();
    let mut passes = 1;
    for _ in 1..budget::PASSES {
        let again = reopen_groups(&mut held, space.budget_events);
        if again.is_empty() {
            break;
        }
        passes += 1;
        for i in again {
            let g = std::mem::take(&mut held[i]);
            held[i] = run_group(g, planning_run(slo()));
        }
    }
    let reference = assemble(
        held.into_iter().flatten().map(Search::finish).collect(),
        &space,
    );
    assert!(passes > 1, "the budget should leave work for a later pass");

    // The steps, every run held back and the latest sent first, so groups
    // interleave as a pool's workers would finish them.
    let mut steps = PlanSteps::new(&s, slo(), &space);
    let mut out: Vec<(usize, Scenario)> = Vec::new();
    let mut run = planning_run(slo());
    let mut runs = 0;
    for _ in 0..100_000 {
        out.extend(steps.ready());
        let Some((g, scenario)) = out.pop() else {
            break;
        };
        runs += 1;
        match run(scenario) {
            Ok(r) => steps.feed(g, Ok(&r)),
            Err(e) => steps.feed(g, Err(&e)),
        }
    }
    assert!(steps.is_over());
    assert!(
        runs > steps.len(),
        "{runs} runs over {} groups",
        steps.len()
    );
    assert_eq!(steps.plan(), reference);
    // And the serial plan is the same.
    assert_eq!(plan(&s, slo(), &space), reference);
}

/// A plan of `s` on its API tiers alone, against its own targets.
fn spike_plan(s: &Scenario) -> Plan {
    plan(s, PlanSlo::for_scenario(s), &Space::for_scenario(s))
}

/// The cheapest feasible row of tier `tier` whose config `pick` accepts.
fn cheapest<'a>(p: &'a Plan, tier: &str, pick: impl Fn(&Config) -> bool) -> Option<&'a Evaluated> {
    p.feasible
        .iter()
        .filter(|e| matches!(&e.config, Config::Api { tier: t, .. } if t == tier))
        .filter(|e| pick(&e.config))
        .min_by(|a, b| a.usd_per_month.total_cmp(&b.usd_per_month))
}

#[test]
fn a_fallback_to_the_small_tier_is_cheaper_than_buying_the_frontier_tier_higher_limits() {
    let s = presets::launch_spike();
    let p = spike_plan(&s);
    let plain = cheapest(&p, "frontier", |c| {
        matches!(
            c,
            Config::Api {
                fallback: None,
                units: None,
                ..
            }
        )
    })
    .expect("a higher multiple meets the targets");
    let fallback = cheapest(
        &p,
        "frontier",
        |c| matches!(c, Config::Api { fallback: Some(f), .. } if f == "small"),
    )
    .expect("the fallback meets them");
    assert!(
        fallback.usd_per_month < plain.usd_per_month,
        "{} against {}",
        fallback.description,
        plain.description
    );
    assert!(fallback.description.contains("falling back to small"));
    // The per-tier answers stay the tiers' own.
    assert_eq!(p.api_tiers.len(), 4, "{:?}", p.api_tiers);
    // Applied, the row is the scenario the plan ran: the same cost.
    let mut applied = s.clone();
    apply_config(&mut applied, &fallback.config, 0).expect("applies");
    assert_eq!(applied.api.as_ref().expect("api").fallback, ["small"]);
    let r = crate::run_scenario(applied).expect("valid");
    assert_eq!(r.cost.usd_per_month, fallback.usd_per_month);
    // A pool plan's questions do not try them (one chain for all classes).
    let q = super::pools::questions(&s, PlanSlo::for_scenario(&s), &Space::for_scenario(&s))
        .expect("questions");
    assert!(q.iter().all(|q| !q.space.api_strategies));
}

#[test]
fn the_plan_buys_provisioned_units_where_they_cost_less_than_paying_per_token() {
    let mut s = presets::launch_spike();
    // Units of 20,000 tokens a minute at $0.50 an hour: $0.42 a million
    // reserved tokens, against $2.50 in and $10 out a million.
    let api = s.api.as_mut().expect("api");
    api.tiers[0].provisioned = Some(crate::api::Provisioned {
        units: 1,
        tokens_per_minute_per_unit: 20_000,
        usd_per_unit_hour: 0.5,
    });
    let p = spike_plan(&s);
    let with_units = |c: &Config| matches!(c, Config::Api { units: Some(_), .. });
    let units = cheapest(&p, "frontier", with_units).expect("units meet the targets");
    let plain = cheapest(&p, "frontier", |c| !with_units(c)).expect("so do limits");
    assert!(
        units.usd_per_month < 0.5 * plain.usd_per_month,
        "{} against {}",
        units.description,
        plain.description
    );
    let Config::Api { units: Some(n), .. } = units.config else {
        unreachable!()
    };
    assert!(units.description.contains(&format!(
        "{} provisioned units",
        crate::format::thousands(u64::from(n))
    )));
    // Its bill is the units' hours and what overflowed, as a run of it says.
    let mut applied = s.clone();
    apply_config(&mut applied, &units.config, 0).expect("applies");
    let r = crate::run_scenario(applied).expect("valid");
    assert_eq!(r.cost.usd_per_month, units.usd_per_month);
    let t = &r.api.as_ref().expect("api").tiers[0];
    assert!(t.bill.provisioned_usd > 0.0 && t.provisioned_requests > 0);
    // Only a tier that sells units is offered them.
    assert!(cheapest(&p, "small", with_units).is_none());
}
