//! The planner over pools: each class planned on its own traffic and
//! targets, autoscaling tried where the load varies, the classes' answers
//! run together and judged class by class.

use sim_core::physics::{Gpu, Precision};
use sim_core::plan::pools::{self, PoolPlanner};
use sim_core::plan::{Config, PlanSlo, Runs, Space};
use sim_core::scenario::{Arrival, RatePoint, Scenario, Slo};

/// Chat and a batch job (the preset), the batch job with targets of its
/// own: a minute to its first token, 200 ms a token.
fn chat_and_batch() -> Scenario {
    let mut s = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == "chat-and-batch")
        .expect("preset")
        .scenario;
    s.workload.classes[1].slo = Some(Slo {
        ttft_ms: 60_000.0,
        tpot_ms: 200.0,
    });
    s
}

fn small_space(s: &Scenario) -> Space {
    Space {
        gpus: vec![Gpu::H100, Gpu::L40s],
        tps: vec![1],
        weights: vec![Precision::Bf16, Precision::Fp8],
        max_seqs: vec![64, 256],
        max_replicas: 16,
        ..Space::for_scenario(s)
    }
}

#[test]
fn a_class_is_judged_by_its_own_targets() {
    let mut s = chat_and_batch();
    // One replica at more than it serves: the batch job's first tokens wait
    // seconds, over the scenario's 500 ms but within an hour of its own.
    s.duration_s = 60.0;
    s.workload.classes[1].slo = Some(Slo {
        ttft_ms: 3_600_000.0,
        tpot_ms: 10_000.0,
    });
    let own = sim_core::run(&s.clone().validate().expect("valid"));
    let mut shared = s.clone();
    shared.workload.classes[1].slo = None;
    let shared = sim_core::run(&shared.validate().expect("valid"));
    let batch = |r: &sim_core::Report| r.per_class[1].clone();
    assert!(batch(&shared).first_visible.p50_ms.expect("p50") > 500.0);
    assert!(batch(&own).slo_met_fraction > batch(&shared).slo_met_fraction);
    assert_eq!(batch(&own).slo_met_fraction, Some(1.0));
    // Chat's verdicts, and every latency, do not move.
    assert_eq!(own.per_class[0], shared.per_class[0]);
    assert_eq!(own.overall.ttft, shared.overall.ttft);
}

#[test]
fn a_class_scenario_is_its_share_of_the_arrivals_at_its_own_targets() {
    let s = chat_and_batch();
    let b = pools::class_scenario(&s, 1).expect("class");
    assert_eq!(b.workload.classes.len(), 1);
    assert_eq!(b.workload.classes[0].name, "batch job");
    assert_eq!(b.slo.ttft_ms, 60_000.0);
    assert_eq!(b.workload.classes[0].slo, None);
    let Arrival::Poisson { rate_per_s } = b.workload.arrival else {
        panic!("poisson")
    };
    assert!((rate_per_s - 18.0 * 0.4).abs() < 1e-9, "{rate_per_s}");
    let slo = pools::class_slo(&s, 1, PlanSlo::for_scenario(&s));
    assert_eq!((slo.ttft_p99_ms, slo.tpot_p99_ms), (60_000.0, 200.0));
    // Targets given to the plan hold for every class.
    let given = PlanSlo {
        ttft_p99_ms: 900.0,
        ..PlanSlo::for_scenario(&s)
    };
    assert_eq!(pools::class_slo(&s, 1, given), given);
}

#[test]
fn each_class_on_its_own_pool_is_cheaper_and_its_run_meets_every_class() {
    let s = chat_and_batch();
    let slo = PlanSlo::for_scenario(&s);
    let p = pools::plan_pools(&s, slo, &small_space(&s)).expect("plan");
    // The whole traffic is planned at the tightest targets.
    assert_eq!(p.whole.slo.ttft_p99_ms, 500.0);
    assert_eq!(p.classes.len(), 2);
    let split = p.split.as_ref().expect("a split");
    assert!(split.meets(), "{:?}", split.verdicts);
    // Fixed pools are billed their replicas whatever they serve: the split's
    // run costs what the classes' answers cost.
    let sum: f64 = p.classes.iter().filter_map(|a| a.usd_per_month()).sum();
    assert!(
        (split.usd_per_month - sum).abs() < 1e-6 * sum,
        "{} vs {sum}",
        split.usd_per_month
    );
    let whole = p
        .whole
        .usd_per_month()
        .expect("one setup meets the targets");
    assert!(
        split.usd_per_month < whole,
        "{} vs {whole}",
        split.usd_per_month
    );
    let (_, cheapest, is_split) = p.cheapest().expect("an answer");
    assert!(is_split);
    assert_eq!(cheapest, split.usd_per_month);
    // The deployment: a pool per self-hosted class, a rule per class, and it
    // is a scenario like any other (valid, in a link, the same run again).
    let d = &split.scenario;
    assert_eq!(d.routing.len(), 2);
    for (rule, class) in d.routing.iter().zip(["chat", "batch job"]) {
        assert_eq!(rule.class.as_deref(), Some(class));
    }
    let link = sim_core::link::encode(d);
    let back = sim_core::link::decode(&link).expect("decode");
    assert_eq!(back.scenario(), d);
    let r = sim_core::run(&back);
    assert_eq!(r.cost.usd_per_month, split.usd_per_month);
    // The same plan from the state machine driven by hand.
    let mut m = PoolPlanner::new(&s, slo, &small_space(&s)).expect("planner");
    for i in 0..m.questions().len() {
        let q = &m.questions()[i];
        let plan = sim_core::plan::plan(&q.scenario, q.slo, &q.space);
        m.give(i, plan);
    }
    while let Some(next) = m.next() {
        let r = pools::pool_run(next, m.targets()).expect("run");
        m.feed(&r);
    }
    assert_eq!(m.result().as_ref(), Some(&p));
}

/// Chat and a batch job with a third class, search: chat's targets, shorter
/// answers; at 6 requests/s each class alone leaves most of a GPU idle.
fn three_small_classes() -> Scenario {
    let mut s = chat_and_batch();
    s.workload.arrival = Arrival::Poisson { rate_per_s: 6.0 };
    let mut search = s.workload.classes[0].clone();
    search.name = "search".into();
    search.share = 0.15;
    search.output_tokens = sim_core::dist::Dist::LogNormal {
        median: 100.0,
        p90: 300.0,
    };
    s.workload.classes[0].share = 0.45;
    s.workload.classes.insert(1, search);
    s
}

#[test]
fn classes_too_small_for_a_gpu_each_share_a_pool_where_that_is_cheaper() {
    let s = three_small_classes();
    let slo = PlanSlo::for_scenario(&s);
    let space = Space {
        gpus: vec![Gpu::H100, Gpu::L40s, Gpu::L4],
        ..small_space(&s)
    };
    let p = pools::plan_pools(&s, slo, &space).expect("plan");
    assert_eq!(p.classes.len(), 3);
    // Every set of two: chat + search, chat + batch job, search + batch job,
    // each at its tightest class's targets.
    let names: Vec<&str> = p.groups.iter().filter_map(|a| a.class.as_deref()).collect();
    assert_eq!(
        names,
        ["chat + search", "chat + batch job", "search + batch job"]
    );
    assert!(p.groups.iter().all(|a| a.slo.ttft_p99_ms == 500.0));
    let cost = |a: &pools::Answer| a.usd_per_month().expect("an answer");
    let alone: f64 = p.classes.iter().map(cost).sum();
    let chat_search = cost(&p.groups[0]);
    assert!(
        chat_search < cost(&p.classes[0]) + cost(&p.classes[1]),
        "sharing one pool costs {chat_search}, alone {} + {}",
        cost(&p.classes[0]),
        cost(&p.classes[1])
    );
    let split = p.split.as_ref().expect("a split");
    assert!(split.meets(), "{:?}", split.verdicts);
    assert_eq!(
        split.groups,
        vec![
            vec!["chat".to_owned(), "search".into()],
            vec!["batch job".into()]
        ]
    );
    assert_eq!(
        split.describe(),
        "chat and search together, batch job on its own"
    );
    // Its run costs what its groups' answers do, less than each class alone.
    let sum = chat_search + cost(&p.classes[2]);
    assert!((split.usd_per_month - sum).abs() < 1e-6 * sum);
    assert!(
        split.usd_per_month < alone,
        "{} vs {alone}",
        split.usd_per_month
    );
    // The deployment: one pool for chat and search, one for the batch job,
    // a rule per class, each class judged by its own targets.
    let d = &split.scenario;
    assert_eq!(d.pools.len(), 1);
    assert_eq!(d.serving.name.as_deref(), Some("chat+search"));
    let to: Vec<&str> = d.routing.iter().map(|r| r.to.as_str()).collect();
    assert_eq!(to, ["chat+search", "chat+search", "batch job"]);
    assert_eq!(split.verdicts.len(), 3);
    let r = sim_core::run(&d.clone().validate().expect("valid"));
    assert_eq!(r.cost.usd_per_month, split.usd_per_month);
    let (how, _, is_split) = p.cheapest().expect("an answer");
    assert!(is_split && how.contains("together"), "{how}");
}

/// A batch job that is quiet most of the day: 0.5 requests/s for four
/// hours, rising over 20 minutes to 20 for an hour, back over 20 minutes,
/// and quiet again for the rest of nine hours; a minute to its first token
/// is fine.
fn busy_hour() -> Scenario {
    let mut s = chat_and_batch();
    s.workload.classes.remove(0);
    s.workload.classes[0].slo = None;
    s.slo = Slo {
        ttft_ms: 60_000.0,
        tpot_ms: 200.0,
    };
    s.duration_s = 9.0 * 3600.0;
    let h = 3600.0;
    s.workload.arrival = Arrival::Schedule {
        points: [
            (0.0, 0.5),
            (4.0 * h, 0.5),
            (4.0 * h + 1200.0, 20.0),
            (5.0 * h + 1200.0, 20.0),
            (5.0 * h + 2400.0, 0.5),
        ]
        .iter()
        .map(|&(at_s, rate_per_s)| RatePoint { at_s, rate_per_s })
        .collect(),
        cv: None,
    };
    s
}

#[test]
fn autoscaling_is_the_answer_where_it_costs_less_than_a_fixed_fleet() {
    let s = busy_hour();
    let space = Space {
        gpus: vec![Gpu::H100],
        weights: vec![Precision::Bf16],
        max_seqs: vec![256],
        ..small_space(&s)
    };
    let p = pools::plan_pools(&s, PlanSlo::for_scenario(&s), &space).expect("plan");
    assert!(p.classes.is_empty());
    assert!(
        p.no_split
            .as_deref()
            .is_some_and(|w| w.contains("one class"))
    );
    let fixed = p.whole.fixed.as_ref().expect("a fixed answer");
    assert!(matches!(fixed.config, Config::SelfHosted { .. }));
    let scaled =
        p.whole.scaled.as_ref().unwrap_or_else(|| {
            panic!("an autoscaled answer: {fixed:?} {:?}", p.whole.scaling_note)
        });
    assert!(scaled.scales(), "{scaled:?}");
    assert!(scaled.min_replicas < fixed.replicas);
    assert!(scaled.peak_replicas <= scaled.max_replicas);
    assert!(
        scaled.usd_per_month < fixed.usd_per_month,
        "{scaled:?} vs {fixed:?}"
    );
    assert!(p.whole.autoscales());
    assert_eq!(p.cheapest().map(|c| c.1), Some(scaled.usd_per_month));
}

#[test]
fn steady_load_is_not_autoscaled_and_unsplittable_scenarios_say_why() {
    let s = chat_and_batch();
    let p = pools::plan_pools(&s, PlanSlo::for_scenario(&s), &small_space(&s)).expect("plan");
    for a in std::iter::once(&p.whole).chain(&p.classes) {
        assert!(a.scaled.is_none());
        assert!(
            a.scaling_note
                .as_deref()
                .is_some_and(|n| n.contains("steady"))
        );
    }
    let mut closed = s.clone();
    closed.workload.arrival = Arrival::ClosedLoop {
        users: vec![sim_core::scenario::UserStep {
            at_s: 0.0,
            users: 4,
        }],
        think_time_s: sim_core::dist::Dist::Fixed { value: 1.0 },
    };
    let why = pools::why_not_split(&closed).expect("refused");
    assert!(why.contains("closed loop"), "{why}");
}

/// `s` with the small API tier beside its GPUs (the launch-day preset's
/// client: a queue), its fleet still the default backend.
fn with_small_tier(s: &mut Scenario) {
    let mut api = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == "launch-day-gpus")
        .expect("preset")
        .scenario
        .api
        .expect("an API");
    api.tiers = vec![sim_core::presets::small_tier()];
    s.api = Some(api);
}

#[test]
fn a_small_pool_overflowing_to_an_api_tier_beats_both_where_the_peak_is_short() {
    // The quiet batch job, with a small API tier beside the GPUs: the API
    // alone, three H100s for the peak, or one H100 with the peak's overflow.
    let mut s = busy_hour();
    with_small_tier(&mut s);
    let space = Space {
        gpus: vec![Gpu::H100],
        weights: vec![Precision::Bf16],
        max_seqs: vec![256],
        self_hosted: true,
        budget_events: u64::MAX,
        ..small_space(&s)
    };
    let p = pools::plan_pools(&s, PlanSlo::for_scenario(&s), &space).expect("plan");
    let a = &p.whole;
    let fixed = a.fixed.as_ref().expect("a fixed answer");
    let hosted = a.hosted.as_ref().expect("a self-hosted answer");
    assert!(matches!(hosted.config, Config::SelfHosted { .. }));
    let o = a
        .overflow
        .as_ref()
        .unwrap_or_else(|| panic!("an overflowing answer: {:?}", a.overflow_note));
    assert_eq!(o.tier, "small");
    assert!(o.replicas < hosted.replicas, "{o:?}");
    assert!(o.api_share > 0.0 && o.api_share < 1.0, "{o:?}");
    // Its cost is the pool's replica-hours and the API's tokens, and it is
    // the cheapest answer: below the fixed fleet, the API alone, autoscaling.
    assert!(o.usd_per_month < hosted.usd_per_month);
    assert!(o.usd_per_month < fixed.usd_per_month, "{o:?} vs {fixed:?}");
    if let Some(sc) = &a.scaled {
        assert!(o.usd_per_month < sc.usd_per_month);
    }
    assert_eq!(a.chosen(), Some(pools::Chosen::Overflow));
    assert_eq!(a.overflows_to(), Some("small"));
    // Applied, it is a scenario like any other, and its run costs the same.
    let mut applied = s.clone();
    a.apply(&mut applied).expect("apply");
    assert_eq!(applied.serving.replicas, o.replicas);
    let rule = &applied.routing[0];
    assert_eq!(rule.overflow.as_ref().map(|x| x.to.as_str()), Some("small"));
    let r = sim_core::run(&applied.validate().expect("valid"));
    assert_eq!(r.cost.usd_per_month, o.usd_per_month);
    let served = r.api.as_ref().expect("API traffic").requests as f64;
    assert_eq!(served / r.requests.arrived as f64, o.api_share);
}

#[test]
fn classes_on_one_api_tier_share_its_limits_and_no_fleet_is_billed() {
    // Two batch classes of ≈ 3 M tokens a minute each on the small tier
    // (4 M a minute): each alone fits its limits, together they need twice.
    let mut s = busy_hour();
    s.duration_s = 600.0;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 30.0 };
    let mut reports = s.workload.classes[0].clone();
    reports.name = "reports".into();
    s.workload.classes[0].share = 0.5;
    reports.share = 0.5;
    s.workload.classes.push(reports);
    with_small_tier(&mut s);
    let space = Space {
        self_hosted: false,
        ..Space::for_scenario(&s)
    };
    let p = pools::plan_pools(&s, PlanSlo::for_scenario(&s), &space).expect("plan");
    let mut sum = 0.0;
    let mut multiples = 0;
    for a in &p.classes {
        let e = a.fixed.as_ref().expect("an API answer");
        let Config::Api {
            tier, multiplier, ..
        } = &e.config
        else {
            panic!("{e:?}")
        };
        assert_eq!(tier, "small");
        multiples += multiplier;
        sum += e.usd_per_month;
    }
    let split = p.split.as_ref().expect("a split");
    assert!(split.meets(), "{:?}", split.verdicts);
    let api = split.scenario.api.as_ref().expect("API");
    assert_eq!(api.rate_limit_multiplier, multiples);
    assert_eq!(api.default_backend, "small");
    // Only tokens are paid: no fleet reachable, none billed.
    let r = sim_core::run(&split.scenario.clone().validate().expect("valid"));
    assert!(
        r.pools.iter().all(|x| x.usd_per_month == 0.0),
        "{:?}",
        r.pools
    );
    assert!(
        (split.usd_per_month - sum).abs() < 0.05 * sum,
        "{} vs {sum}",
        split.usd_per_month
    );
}

#[test]
fn the_split_applies_over_the_scenarios_own_window() {
    // Two models' question is planned on a shorter window within the work
    // budget; Apply keeps the user's 300 s (it once made it 100 s).
    let s = sim_core::presets::two_models();
    let slo = PlanSlo::for_scenario(&s);
    let space = Space::for_scenario(&s);
    let p = pools::plan_pools(&s, slo, &space).expect("plan");
    let planned = PoolPlanner::new(&s, slo, &space).expect("planner");
    assert!(
        planned.questions()[0].scenario.duration_s < s.duration_s,
        "the question is asked over a shorter window"
    );
    let split = p.split.as_ref().expect("a split");
    assert_eq!(split.scenario.duration_s, s.duration_s);
    assert!(split.scenario.clone().validate().is_ok());
}
