//! Every bad input is refused with a message naming the field, range and value.

use sim_core::dist::Dist;
use sim_core::presets::chatbot_h100;
use sim_core::scenario::{Arrival, Batching, RatePoint, Scenario};

/// Apply `change` to the default scenario and expect a problem mentioning all of `needles`.
#[track_caller]
fn check(change: impl FnOnce(&mut Scenario), needles: &[&str]) {
    let mut s = chatbot_h100();
    change(&mut s);
    let err = s.clone().validate().expect_err("must be rejected");
    let all = err.problems.join("\n");
    for n in needles {
        assert!(all.contains(n), "expected {n:?} in:\n{all}");
    }
    // The engine only takes a `ValidScenario`, so it cannot see this scenario;
    // checking without taking it gives the same message.
    assert_eq!(s.check().expect_err("must be rejected"), err);
}

#[test]
fn nan_negative_zero_and_absurd_values_are_named() {
    check(|s| s.duration_s = f64::NAN, &["duration_s", "NaN"]);
    check(|s| s.duration_s = -5.0, &["duration_s", "-5"]);
    check(|s| s.duration_s = 0.0, &["duration_s must be > 0", "got 0"]);
    check(|s| s.duration_s = 1e300, &["duration_s", "604800"]);
    check(
        |s| s.serving.replicas = 0,
        &["serving.replicas must be 1..=1024, got 0"],
    );
    check(
        |s| s.serving.replicas = 5000,
        &["serving.replicas must be 1..=1024, got 5000"],
    );
    check(
        |s| s.serving.gpus_per_replica = 3,
        &["gpus_per_replica must be 1, 2, 4 or 8, got 3"],
    );
    check(
        |s| s.serving.gpu_memory_utilisation = f64::INFINITY,
        &["gpu_memory_utilisation", "inf"],
    );
    check(
        |s| s.workload.arrival = Arrival::Poisson { rate_per_s: -1.0 },
        &["rate_per_s", "-1"],
    );
    check(
        |s| s.workload.arrival = Arrival::Poisson { rate_per_s: 0.0 },
        &["rate_per_s must be > 0"],
    );
    check(
        |s| {
            s.workload.arrival = Arrival::Gamma {
                rate_per_s: 5.0,
                cv: 0.0,
            }
        },
        &["workload.arrival.cv must be 0.05..=20, got 0"],
    );
    check(
        |s| s.workload.classes[0].input_tokens = Dist::Fixed { value: -3.0 },
        &["classes[0].input_tokens.value", "-3"],
    );
    check(
        |s| s.workload.classes[0].max_tokens = 0,
        &["classes[0].max_tokens must be 1..=1048576, got 0"],
    );
    check(
        |s| s.workload.classes[0].calls_per_task = 0,
        &["calls_per_task must be 1..=1000, got 0"],
    );
    check(
        |s| s.workload.classes[0].share = f64::NAN,
        &["classes[0].share", "NaN"],
    );
    check(
        |s| s.workload.classes.clear(),
        &["workload.classes must have 1..=64 classes, got 0"],
    );
    check(|s| s.slo.ttft_ms = 0.0, &["slo.ttft_ms"]);
    check(
        |s| s.limits.max_events = 0,
        &["limits.max_events must be 1..="],
    );
    check(|s| s.version = 2, &["version must be 1", "got 2"]);
    check(
        |s| {
            s.serving.batching = Batching::ChunkedPrefill {
                max_num_seqs: 0,
                max_num_batched_tokens: 0,
                chunk_tokens: 0,
            }
        },
        &[
            "max_num_seqs must be 1..=65536, got 0",
            "max_num_batched_tokens must be 1..=4194304, got 0",
            "chunk_tokens",
        ],
    );
    check(
        |s| {
            s.workload.arrival = Arrival::Schedule {
                points: vec![
                    RatePoint {
                        at_s: 5.0,
                        rate_per_s: 1.0,
                    },
                    RatePoint {
                        at_s: 1.0,
                        rate_per_s: 2.0,
                    },
                ],
                cv: None,
            }
        },
        &["points[0].at_s must be 0", "points[1].at_s must be after"],
    );
}

#[test]
fn a_run_too_large_for_a_browser_tab_is_refused_up_front() {
    check(
        |s| {
            s.workload.arrival = Arrival::Poisson {
                rate_per_s: 100_000.0,
            };
            s.duration_s = 600_000.0;
        },
        &["would send about", "tasks"],
    );
}

/// The prefix cache's work grows with prompt blocks, and its memory with the
/// fleet's KV blocks: both are bounded up front, and a run just inside the
/// bounds is accepted.
#[test]
fn prefix_caching_work_and_memory_are_bounded_up_front() {
    use sim_core::scenario::{Conversation, SharedPrefix};
    let chat = |s: &mut Scenario, rate: f64, replicas: u32| {
        s.workload.arrival = Arrival::Poisson { rate_per_s: rate };
        s.serving.replicas = replicas;
        let k = &mut s.workload.classes[0];
        k.calls_per_task = 5;
        k.shared_prefix = Some(SharedPrefix {
            prompts: 1000,
            tokens: 2000,
        });
        k.conversation = Some(Conversation {
            think_time_s: Dist::Fixed { value: 5.0 },
        });
    };
    // 10,000 five-turn conversations a second for 300 s: 15 M requests of
    // hundreds of blocks each.
    check(
        |s| chat(s, 10_000.0, 64),
        &[
            "prompt blocks of 16 tokens",
            "serving.prefix_caching to false",
        ],
    );
    // 1,024 H100 replicas could cache ≈ 28 M blocks of conversation history.
    check(
        |s| chat(s, 10.0, 1024),
        &[
            "1024 replicas could cache about 2.844e7 KV blocks",
            "fewer replicas",
        ],
    );
    // Without caching the same fleet is fine; so are fewer replicas.
    let mut s = chatbot_h100();
    chat(&mut s, 10.0, 1024);
    s.serving.prefix_caching = Some(false);
    assert!(s.check().is_ok());
    let mut s = chatbot_h100();
    chat(&mut s, 10.0, 800);
    assert!(s.check().is_ok());
    // Shared system prompts alone: a replica caches at most their content.
    let mut s = chatbot_h100();
    s.serving.replicas = 1024;
    s.workload.classes[0].shared_prefix = Some(SharedPrefix {
        prompts: 10,
        tokens: 2000,
    });
    assert!(s.check().is_ok());
}

#[test]
fn a_model_that_does_not_fit_names_the_memory_it_needs() {
    check(
        |s| {
            s.serving.model = sim_core::physics::Model::Llama31_70b;
        },
        &["Llama-3.1-70B", "does not fit", "GB"],
    );
}

#[test]
fn bad_json_and_unknown_fields_are_reported() {
    let err = Scenario::from_json("{\"version\": 1").expect_err("truncated");
    assert!(err.problems[0].contains("ends too early"), "{err}");
    let mut v = serde_json::to_value(chatbot_h100()).expect("serialises");
    v["serving"]["warp_drive"] = serde_json::json!(true);
    let err = Scenario::from_json(&v.to_string()).expect_err("unknown field");
    assert!(
        err.problems[0].starts_with("serving.warp_drive: unknown field"),
        "{err}"
    );
    let ok = Scenario::from_json(&serde_json::to_string(&chatbot_h100()).expect("serialises"))
        .expect("round trip");
    assert_eq!(*ok, chatbot_h100());
}
