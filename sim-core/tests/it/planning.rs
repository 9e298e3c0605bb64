//! Every preset's planner and headroom answer within their work budgets,
//! counted in simulated events (the same on every machine; ≈ 7 s on the
//! 2-core reference machine: see `plan::budget`), with and without
//! self-hosting, and say before starting what they changed to fit.

use sim_core::Scenario;
use sim_core::plan::{self, PlanSlo, Runs, Space, budget};

fn plan_within_budget(id: &str, self_hosted: bool) {
    let preset = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == id)
        .expect("a preset");
    let s: Scenario = preset.scenario;
    let slo = PlanSlo::for_scenario(&s);
    let space = Space {
        self_hosted: self_hosted || s.uses_fleet(),
        ..Space::default()
    };
    let q = budget::question(&s, slo, &space);
    if q.scenario.duration_s < s.duration_s {
        assert!(
            q.notes.iter().any(|n| n.contains("planned on the first")),
            "{id}: a shorter window is said up front"
        );
    }
    let p = plan::plan(&q.scenario, slo, &space);
    assert!(
        p.events <= space.budget_events,
        "{id} (self-hosted {self_hosted}): {} events of {}",
        p.events,
        space.budget_events
    );
    assert!(p.events > 0 && p.simulations > 0, "{id}: something ran");
    // Every configuration is accounted for.
    let answered = p.feasible.len()
        + p.near_misses.len()
        + p.api_tiers.len()
        + p.pruned.len()
        + p.identical
        + p.unsettled.len();
    assert!(answered > 0, "{id}");
    if !p.unsettled.is_empty() {
        assert!(
            p.unsettled
                .iter()
                .all(|(_, why)| why.contains("work budget"))
        );
    }
    let h = plan::headroom(&s, slo, 0.02).expect("headroom");
    assert!(
        h.events <= budget::HEADROOM_EVENTS,
        "{id}: headroom took {} events",
        h.events
    );
}

macro_rules! presets {
    ($($name:ident: $id:literal,)*) => {$(
        #[test]
        fn $name() {
            plan_within_budget($id, false);
            plan_within_budget($id, true);
        }
    )*};
}

presets! {
    chatbot_plans_within_its_budget: "chatbot-h100",
    launch_spike_plans_within_its_budget: "launch-spike",
    pay_for_speed_plans_within_its_budget: "pay-for-speed",
    self_hosted_tuning_plans_within_its_budget: "self-hosted-tuning",
    overnight_batch_plans_within_its_budget: "overnight-batch",
    classification_plans_within_its_budget: "classification",
    thinking_agent_plans_within_its_budget: "thinking-agent",
    chat_and_batch_plans_within_its_budget: "chat-and-batch",
    two_models_plans_within_its_budget: "two-models",
    launch_day_gpus_plans_within_its_budget: "launch-day-gpus",
    split_prefill_decode_plans_within_its_budget: "split-prefill-decode",
    prompt_caching_plans_within_its_budget: "prompt-caching",
    bad_hour_plans_within_its_budget: "bad-hour",
}

#[test]
fn every_preset_is_covered() {
    let ids: Vec<&str> = sim_core::presets::all().iter().map(|p| p.id).collect();
    assert_eq!(
        ids.len(),
        13,
        "a new preset needs its planning test: {ids:?}"
    );
}

#[test]
fn a_large_headroom_question_stops_at_its_budget_and_says_so() {
    let mut s = sim_core::presets::chatbot_h100();
    s.serving.replicas = 64;
    s.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 400.0 };
    let slo = PlanSlo::for_scenario(&s);
    let h = plan::HeadroomSearch::new(&s, slo, 0.01).with_budget(2_000_000);
    let mut h = h;
    let mut run = plan::planning_run(slo);
    while let Some(next) = h.next() {
        h.feed(&run(next).expect("valid"));
    }
    let r = h.result().expect("an answer");
    assert!(r.events <= 2_000_000, "{}", r.events);
    assert!(r.verdict.contains("work budget"), "{}", r.verdict);
}

#[test]
fn the_planner_tries_an_api_tiers_fast_variant() {
    // Issue 48: pay-for-speed asks for a token every 10 ms; its tier streams
    // at 60 tokens/s, its fast variant at 200 (the story's second step). The
    // planner answers with the variant, at what the story's run costs.
    let s = sim_core::presets::pay_for_speed();
    let slo = PlanSlo::for_scenario(&s);
    // The API's own question, as the CLI and the page ask it by default
    // (self-hosting would be another model).
    let space = Space {
        self_hosted: false,
        ..Space::default()
    };
    let p = plan::plan(&s, slo, &space);
    let best = p.feasible.first().expect("a setup meets the targets");
    assert!(
        best.description
            .starts_with("API voice-llm (fast) at 1× limits"),
        "{:?}",
        p.feasible
    );
    assert!(
        (30_500.0..32_500.0).contains(&best.usd_per_month),
        "{}",
        best.usd_per_month
    );
    // Applied, it is the story's own edit: every class routed to the variant.
    let mut applied = s.clone();
    plan::apply_config(&mut applied, &best.config, best.replicas).expect("applies");
    let mut story = s.clone();
    sim_core::params::apply(&mut story, "backend", "voice-llm+fast").expect("the story's edit");
    assert_eq!(applied.api, story.api);
    // The plain tier is still answered, and misses.
    let plain = p
        .api_tiers
        .iter()
        .find(|a| a.tier == "voice-llm")
        .expect("the tier");
    assert_eq!(plain.multiplier, None);
    let fast = p
        .api_tiers
        .iter()
        .find(|a| a.tier == "voice-llm+fast")
        .expect("its variant");
    assert_eq!(fast.multiplier, Some(1));
}
