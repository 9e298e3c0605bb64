//! Pools and routing: several self-hosted pools in one scenario, and rules
//! sending each request to a pool or an API tier.

use crate::{assert_close, fixed_class, run, textbook};
use proptest::prelude::*;
use sim_core::dist::Dist;
use sim_core::presets;
use sim_core::scenario::{
    Arrival, Batching, Overflow, RequestClass, Router, RoutingRule, Scenario, ServiceModel,
    TraceRequest, TraceRequests,
};

/// One textbook time unit is 1 ms of simulated time.
const UNIT_S: f64 = 1e-3;

fn units(ms: Option<f64>) -> f64 {
    ms.expect("samples recorded") / 1e3 / UNIT_S
}

/// A second pool like the first, named, with an exponential service time
/// of `mean_units`.
fn abstract_pool(s: &Scenario, name: &str, mean_units: f64) -> sim_core::scenario::Serving {
    sim_core::scenario::Serving {
        name: Some(name.into()),
        service: ServiceModel::Abstract {
            time_s: Dist::Exponential {
                mean: mean_units * UNIT_S,
            },
            join_in_progress: false,
        },
        ..s.serving.clone()
    }
}

fn rule(class: Option<&str>, to: &str) -> RoutingRule {
    RoutingRule {
        class: class.map(str::to_owned),
        prompt_under: None,
        share: None,
        to: to.into(),
        overflow: None,
    }
}

fn class(name: &str, share: f64) -> RequestClass {
    RequestClass {
        name: name.into(),
        share,
        ..fixed_class(1, 1)
    }
}

#[test]
fn two_independent_pools_each_match_m_m_1() {
    // Classes a and b, λ = 0.65 each (per unit); a to the first pool (μ = 1),
    // b to "fast" (μ = 2): W_a = 1 / (1 − 0.65) = 2.857, W_b = 1 / (2 − 0.65) = 0.7407.
    let mut s = textbook(
        1.3 / UNIT_S,
        1,
        Router::RoundRobin,
        Batching::None,
        Dist::Exponential { mean: UNIT_S },
        1_200_000.0,
    );
    s.workload.classes = vec![class("a", 1.0), class("b", 1.0)];
    s.pools = vec![abstract_pool(&s, "fast", 0.5)];
    s.routing = vec![rule(Some("b"), "fast")];
    let r = run(&s).expect("valid");
    assert_eq!(r.pools.len(), 2, "a breakdown per pool");
    let (a, b) = (&r.pools[0], &r.pools[1]);
    assert_eq!((a.name.as_str(), b.name.as_str()), ("self-hosted", "fast"));
    assert_eq!(a.completed + b.completed, r.requests.completed);
    assert_close("pool a: M/M/1 W", units(a.e2e.mean_ms), 1.0 / 0.35, 0.02);
    assert_close("pool b: M/M/1 W", units(b.e2e.mean_ms), 1.0 / 1.35, 0.02);
    assert_close("pool a busy (ρ)", a.gpu_busy_fraction, 0.65, 0.02);
    assert_close("pool b busy (ρ)", b.gpu_busy_fraction, 0.325, 0.02);
    // Each class went only where its rule sends it.
    assert_eq!(r.per_class[0].completed, a.completed);
    assert_eq!(r.per_class[1].completed, b.completed);
}

#[test]
fn a_pool_no_route_reaches_changes_nothing_but_the_breakdown() {
    let base = presets::chatbot_h100();
    let mut s = base.clone();
    let mut idle = s.serving.clone();
    idle.name = Some("idle".into());
    idle.gpu = sim_core::physics::Gpu::A100;
    s.pools = vec![idle];
    let (one, two) = (run(&base).expect("valid"), run(&s).expect("valid"));
    assert_eq!(two.pools.len(), 2);
    assert_eq!(two.pools[1].completed, 0);
    assert_eq!(two.pools[1].usd, 0.0, "an unreachable pool is not billed");
    let mut without = two.clone();
    without.pools.clear();
    let (a, b) = (
        serde_json::to_value(&without).unwrap(),
        serde_json::to_value(&one).unwrap(),
    );
    let differ: Vec<&String> = a
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, v)| b.get(k.as_str()) != Some(v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        differ.is_empty(),
        "every other number is the one-pool run's, bit for bit; these differ: {differ:?}"
    );
}

/// Requests of known prompt lengths, one every 50 ms.
fn trace(prompts: &[u32]) -> Arrival {
    let mut requests = TraceRequests::default();
    for (i, &p) in prompts.iter().enumerate() {
        requests.push_request(TraceRequest {
            at_s: i as f64 * 0.05,
            input_tokens: p,
            output_tokens: 20,
            class: 0,
            prefix_blocks: Vec::new(),
        });
    }
    Arrival::Trace {
        requests,
        prefix_block_tokens: None,
    }
}

#[test]
fn short_prompts_go_to_the_small_model_and_each_keeps_its_own_lengths() {
    let mut s = presets::chatbot_h100();
    s.duration_s = 10.0;
    let prompts: Vec<u32> = (0..200)
        .map(|i| if i % 4 == 0 { 3000 } else { 400 })
        .collect();
    s.workload.arrival = trace(&prompts);
    let mut big = s.serving.clone();
    big.name = Some("big".into());
    big.model = sim_core::physics::Model::Llama31_70b;
    big.gpus_per_replica = 4;
    s.pools = vec![big];
    s.serving.name = Some("small".into());
    s.routing = vec![RoutingRule {
        prompt_under: Some(1000),
        ..rule(None, "small")
    }];
    s.api = None;
    // Unmatched requests go to the class's default: the first pool. Send
    // them to "big" explicitly.
    s.routing.push(rule(None, "big"));
    let r = run(&s).expect("valid");
    let (small, big) = (&r.pools[0], &r.pools[1]);
    assert_eq!((small.completed, big.completed), (150, 50));
    // Prompt tokens per second of the run, each pool its own requests'.
    let secs = r.sim_time_s;
    assert_close(
        "small: prompt tokens",
        small.input_tokens_per_s * secs,
        150.0 * 400.0,
        1e-9,
    );
    assert_close(
        "big: prompt tokens",
        big.input_tokens_per_s * secs,
        50.0 * 3000.0,
        1e-9,
    );
    assert_eq!(big.gpus, 4);
    assert_close("cost adds up", small.usd + big.usd, r.cost.fleet_usd, 1e-12);
    assert!(
        big.ttft.mean_ms > small.ttft.mean_ms,
        "the 70B on 3,000-token prompts is slower to start"
    );
}

#[test]
fn a_share_split_keeps_each_task_on_one_backend() {
    let mut s = textbook(
        0.5 / UNIT_S,
        1,
        Router::RoundRobin,
        Batching::None,
        Dist::Exponential { mean: UNIT_S },
        60_000.0,
    );
    s.workload.classes[0].calls_per_task = 3;
    s.pools = vec![abstract_pool(&s, "b", 1.0)];
    s.routing = vec![RoutingRule {
        share: Some(0.3),
        ..rule(None, "b")
    }];
    let r = run(&s).expect("valid");
    let (a, b) = (&r.pools[0], &r.pools[1]);
    assert_eq!(a.completed % 3, 0, "whole tasks on the first pool");
    assert_eq!(b.completed % 3, 0, "whole tasks on the second");
    let tasks = (a.completed + b.completed) as f64 / 3.0;
    // Binomial: 20,000 tasks, p = 0.3, σ ≈ 65 tasks; allow 4σ.
    let got = b.completed as f64 / 3.0;
    assert!(
        (got - 0.3 * tasks).abs() < 4.0 * (tasks * 0.21).sqrt(),
        "{got} of {tasks} tasks to b"
    );
}

#[test]
fn overflow_sends_requests_elsewhere_while_the_pool_is_backed_up() {
    // A pool at ρ = 1.2 on its own would queue without bound; with an
    // overflow past 3 waiting it stays short and the rest go to "spill".
    let mut s = textbook(
        1.2 / UNIT_S,
        1,
        Router::RoundRobin,
        Batching::None,
        Dist::Exponential { mean: UNIT_S },
        100_000.0,
    );
    s.pools = vec![abstract_pool(&s, "spill", 1.0)];
    s.routing = vec![RoutingRule {
        overflow: Some(Overflow {
            queue_per_replica: 3,
            to: "spill".into(),
        }),
        ..rule(None, "self-hosted")
    }];
    let r = run(&s).expect("valid");
    let (main, spill) = (&r.pools[0], &r.pools[1]);
    assert!(spill.completed > 5_000, "{} overflowed", spill.completed);
    assert!(
        main.completed > spill.completed,
        "the main pool serves most"
    );
    // At most 3 wait when a request joins, so its wait is under ~5 services.
    assert!(
        units(main.ttft.p99_ms) < 12.0,
        "main pool's TTFT p99 {} units",
        units(main.ttft.p99_ms)
    );
    s.routing[0].overflow = None;
    let r = run(&s).expect("valid");
    assert_eq!(
        r.pools[1].completed, 0,
        "without the overflow nothing spills"
    );
}

#[test]
fn overflow_to_an_api_tier_bills_the_api() {
    let mut s = presets::launch_spike();
    s.api.as_mut().expect("api").default_backend = "self-hosted".into();
    s.routing = vec![RoutingRule {
        overflow: Some(Overflow {
            queue_per_replica: 20,
            to: "small".into(),
        }),
        ..rule(None, "self-hosted")
    }];
    let r = run(&s).expect("valid");
    let api = r.api.as_ref().expect("the API was used");
    assert!(
        api.tiers
            .iter()
            .any(|t| t.name == "small" && t.completed > 0)
    );
    assert!(r.cost.fleet_usd > 0.0 && r.cost.api_usd > 0.0);
    assert!(r.pools.is_empty(), "one pool: the totals are the pool's");
}

#[test]
fn pool_problems_name_the_pool_and_the_field() {
    let base = presets::chatbot_h100();
    let problems = |s: Scenario| s.validate().expect_err("invalid").problems;
    let mut s = base.clone();
    s.pools = vec![s.serving.clone()];
    assert!(
        problems(s)
            .iter()
            .any(|p| p.contains("pools[0].name is needed"))
    );
    let mut s = base.clone();
    let mut p = s.serving.clone();
    p.name = Some("b".into());
    p.gpus_per_replica = 3;
    s.pools = vec![p.clone(), p];
    let got = problems(s);
    assert!(
        got.iter()
            .any(|p| p.starts_with("pools[1].gpus_per_replica must be 1, 2, 4 or 8")),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|p| p.contains("pools[1].name \"b\" names two pools")),
        "{got:?}"
    );
    let mut s = base.clone();
    s.routing = vec![RoutingRule {
        share: Some(1.5),
        prompt_under: Some(0),
        overflow: Some(Overflow {
            queue_per_replica: 1,
            to: "nowhere".into(),
        }),
        ..rule(Some("nobody"), "elsewhere")
    }];
    let got = problems(s);
    for want in [
        "routing[0].class \"nobody\" is not a class",
        "routing[0].prompt_under must be 1..=",
        "routing[0].share must be > 0 and ≤ 1, got 1.5",
        "routing[0].to must name a pool (\"self-hosted\") or an API tier, got \"elsewhere\"",
        "routing[0].overflow.to must name a pool or an API tier, got \"nowhere\"",
    ] {
        assert!(
            got.iter().any(|p| p.contains(want)),
            "{want} not in {got:?}"
        );
    }
    let mut s = presets::launch_spike();
    s.routing = vec![RoutingRule {
        overflow: Some(Overflow {
            queue_per_replica: 1,
            to: "self-hosted".into(),
        }),
        ..rule(None, "small")
    }];
    assert!(
        problems(s)
            .iter()
            .any(|p| p.contains("routing[0].overflow needs routing[0].to to be a pool"))
    );
}

#[test]
fn a_pool_link_round_trips() {
    let mut s = presets::chatbot_h100();
    let mut p = s.serving.clone();
    p.name = Some("second".into());
    s.pools = vec![p];
    s.routing = vec![RoutingRule {
        share: Some(0.5),
        ..rule(None, "second")
    }];
    let link = sim_core::link::encode(&s);
    let back = sim_core::link::decode(&link).expect("decodes");
    assert_eq!(back.scenario(), &s);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the pools and rules, every request is accounted for once:
    /// completed by one pool or tier, or rejected, failed or timed out.
    #[test]
    fn requests_are_conserved_across_pools_and_routes(
        pools in 1usize..4,
        rules in proptest::collection::vec((0usize..3, proptest::option::of(1u32..3000), proptest::option::of(0.05f64..1.0), 0usize..5, proptest::option::of((0u32..4, 0usize..5))), 0..5),
        seed in 0u64..1000,
    ) {
        let mut s = presets::launch_spike();
        s.seed = seed;
        s.duration_s = 120.0;
        if let Arrival::ClosedLoop { users, .. } = &mut s.workload.arrival {
            users.truncate(1);
            users[0].users = 300;
        }
        s.api.as_mut().expect("api").default_backend = "self-hosted".into();
        s.pools = (1..pools)
            .map(|i| {
                let mut p = s.serving.clone();
                p.name = Some(format!("pool{i}"));
                p
            })
            .collect();
        let names = ["self-hosted", "pool1", "pool2", "frontier", "small"];
        let classes = ["short email", "long thread"];
        let exists = |n: &str| !n.starts_with("pool") || n[4..].parse::<usize>().is_ok_and(|i| i < pools);
        s.routing = rules
            .into_iter()
            .filter(|r| exists(names[r.3]))
            .map(|(c, under, share, to, over)| RoutingRule {
                class: classes.get(c).map(|c| (*c).to_owned()),
                prompt_under: under,
                share,
                to: names[to].into(),
                overflow: over
                    .filter(|&(_, o)| to < 3 && o != to && exists(names[o]))
                    .map(|(q, o)| Overflow { queue_per_replica: q, to: names[o].into() }),
            })
            .collect();
        let r = run(&s).expect("valid");
        let c = &r.requests;
        prop_assert_eq!(c.arrived, c.completed + c.rejected + c.failed + c.timed_out + c.in_flight);
        let by_pool: u64 = if r.pools.is_empty() {
            r.requests.completed - r.api.as_ref().map_or(0, |a| a.tiers.iter().map(|t| t.completed).sum())
        } else {
            r.pools.iter().map(|p| p.completed).sum()
        };
        let by_tier: u64 = r.api.as_ref().map_or(0, |a| a.tiers.iter().map(|t| t.completed).sum());
        prop_assert_eq!(by_pool + by_tier, c.completed);
        let billed: f64 = r.pools.iter().map(|p| p.usd).sum();
        if !r.pools.is_empty() {
            prop_assert!((billed - r.cost.fleet_usd).abs() <= 1e-9 * r.cost.fleet_usd.max(1.0));
        }
    }
}
