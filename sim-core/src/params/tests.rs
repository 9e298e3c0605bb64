use super::*;
use crate::presets;

fn numbers() -> Vec<(&'static Param, Number)> {
    all()
        .filter_map(|p| match p.kind {
            Kind::Number(n) => Some((p, n)),
            Kind::Choice(_) | Kind::Text(_) => None,
        })
        .collect()
}

#[test]
fn paths_and_ids_are_unique_and_slider_ranges_lie_within_the_accepted_ones() {
    let params: Vec<&Param> = all().collect();
    for (i, p) in params.iter().enumerate() {
        for q in &params[i + 1..] {
            assert_ne!(p.path, q.path);
            assert_ne!(p.id, q.id);
        }
        assert!(!p.help.is_empty() && p.help.ends_with('.'), "{}", p.path);
    }
    for (p, n) in numbers() {
        assert!(
            n.min <= n.slider.0 && n.slider.0 < n.slider.1 && n.slider.1 <= n.max,
            "{}",
            p.path
        );
        assert!(!n.log || n.slider.0 > 0.0, "{}: log slider from 0", p.path);
    }
}

#[test]
fn every_number_writes_what_it_reads_and_keeps_every_preset_valid() {
    for preset in presets::all() {
        for (p, n) in numbers() {
            for i in 0..preset.scenario.workload.classes.len() {
                let mut s = preset.scenario.clone();
                let Some(v) = (n.get)(&s, i) else { continue };
                // A value a third of the way along the slider from the current one.
                let (lo, hi) = n.slider;
                let target = if n.log {
                    let c = v.clamp(lo, hi);
                    (c.ln() + (hi.ln() - c.ln()) / 3.0).exp()
                } else {
                    let c = v.clamp(lo, hi);
                    c + (hi - c) / 3.0
                };
                let target = (target * 10f64.powi(n.decimals as i32)).round()
                    / 10f64.powi(n.decimals as i32);
                p.set_number(&mut s, i, target)
                    .unwrap_or_else(|e| panic!("{} on {}: {e}", p.path, preset.id));
                if let Err(e) = s.check() {
                    panic!(
                        "{} on {} at {target} made the scenario invalid: {e}",
                        p.path, preset.id
                    );
                }
                let back = (n.get)(&s, i).expect("still applies");
                assert!(
                    (back - target).abs() <= target.abs() * 1e-6 + 1e-9,
                    "{} on {}: set {target}, read {back}",
                    p.path,
                    preset.id
                );
            }
        }
    }
}

#[test]
fn every_choice_offers_the_current_value_and_accepts_each_option() {
    for preset in presets::all() {
        for p in all() {
            let Kind::Choice(c) = p.kind else { continue };
            for i in 0..preset.scenario.workload.classes.len() {
                let Some(cur) = (c.get)(&preset.scenario, i) else {
                    continue;
                };
                let opts = (c.options)(&preset.scenario, i);
                assert!(
                    opts.iter().any(|(k, _)| *k == cur),
                    "{}: {cur} not among options",
                    p.path
                );
                for (k, _) in opts {
                    let mut s = preset.scenario.clone();
                    (c.set)(&mut s, i, &k).expect("an offered option");
                    assert_eq!((c.get)(&s, i).as_deref(), Some(k.as_str()), "{}", p.path);
                }
                let mut s = preset.scenario.clone();
                let err = (c.set)(&mut s, i, "no-such-option").expect_err("unknown key");
                assert!(err.contains("no-such-option"), "{}: {err}", p.path);
            }
        }
    }
}

#[test]
fn switching_batching_policy_gives_what_choosing_it_fresh_gives() {
    let policies = ["none", "static", "continuous", "chunked_prefill"];
    let base = presets::chatbot_h100();
    for from in policies {
        for to in policies {
            let mut walked = base.clone();
            apply(&mut walked, "batching.policy", from).expect("policy");
            // Knobs moved while on `from` must not leak into `to`.
            let _ = apply(&mut walked, "batching.max_seqs", "3");
            apply(&mut walked, "batching.policy", to).expect("policy");
            let mut fresh = base.clone();
            apply(&mut fresh, "batching.policy", to).expect("policy");
            assert_eq!(walked, fresh, "{from} → {to}");
            assert!(walked.check().is_ok(), "{to} is valid");
        }
    }
}

#[test]
fn per_class_parameters_name_their_class_and_shares_stay_whole() {
    let mut s = presets::launch_spike();
    assert!(s.workload.classes.len() > 1);
    let err = apply(&mut s, "input_tokens", "100").expect_err("which class?");
    assert!(err.contains("name one"), "{err}");
    let name = s.workload.classes[1].name.clone();
    apply(&mut s, &format!("input_tokens[{name}]"), "123").expect("by name");
    assert_eq!(s.workload.classes[1].input_tokens.mean().round(), 123.0);
    apply(&mut s, "share[0]", "30").expect("by index");
    let total: f64 = s.workload.classes.iter().map(|k| k.share).sum();
    assert!((total - 100.0).abs() < 1e-9, "{total}");
    assert!(
        apply(&mut s, "input_tokens[nope]", "1")
            .expect_err("no class")
            .contains("no such class")
    );
    assert!(
        apply(&mut s, "replicas[0]", "2")
            .expect_err("not per class")
            .contains("not set per class")
    );
}

#[test]
fn values_out_of_range_unknown_names_and_inapplicable_edits_say_so() {
    let mut s = presets::chatbot_h100();
    let err = apply(&mut s, "arrival.rate", "1e308").expect_err("too high");
    assert!(
        err.contains("arrival.rate must be") && err.contains("1e308"),
        "{err}"
    );
    let err = apply(&mut s, "arrival.rate", "NaN").expect_err("NaN");
    assert!(err.contains("arrival.rate"), "{err}");
    let err = apply(&mut s, "warp", "1").expect_err("unknown");
    assert!(err.contains("unknown parameter \"warp\""), "{err}");
    let err = apply(&mut s, "users", "10").expect_err("open loop");
    assert!(err.contains("closed-loop"), "{err}");
    let mut closed = presets::launch_spike();
    let err = apply(&mut closed, "arrival.rate", "10").expect_err("closed loop");
    assert!(err.contains("open-loop"), "{err}");
}

#[test]
fn the_rate_scales_a_spike_schedule_whole() {
    let mut s = presets::chatbot_h100();
    apply(&mut s, "arrival.spike", "4").expect("spike");
    apply(&mut s, "arrival.rate", "2").expect("rate");
    let Some(Kind::Number(n)) = find("arrival.spike").map(|p| p.kind) else {
        panic!("spike is a number")
    };
    assert_eq!((n.get)(&s, 0), Some(4.0));
    match &s.workload.arrival {
        crate::scenario::Arrival::Schedule { points, .. } => {
            assert_eq!(points[0].rate_per_s, 2.0);
            assert_eq!(points[2].rate_per_s, 8.0);
        }
        a => panic!("expected a schedule, got {a:?}"),
    }
}

#[test]
fn choosing_a_model_serves_it_as_it_ships_on_the_gpus_it_needs() {
    let mut s = presets::chatbot_h100();
    apply(&mut s, "gpu", "h200").expect("gpu");
    apply(&mut s, "model", "deepseek-v3").expect("model");
    assert_eq!(s.serving.weights, crate::physics::Precision::Fp8);
    assert_eq!(
        s.serving.gpus_per_replica, 8,
        "671 B in FP8 needs a node of H200s"
    );
    assert!(s.clone().validate().is_ok());
    // Expert parallelism applies to an MoE model on several GPUs only.
    apply(&mut s, "expert_parallel", "on").expect("applies");
    assert!(s.serving.expert_parallel);
    apply(&mut s, "model", "llama-3.1-8b").expect("model");
    assert!(!s.serving.expert_parallel);
    assert_eq!(s.serving.weights, crate::physics::Precision::Bf16);
    assert!(!find("expert_parallel").expect("param").applies(&s, 0));
    apply(&mut s, "model", "gpt-oss-120b").expect("model");
    assert_eq!(s.serving.weights, crate::physics::Precision::Mxfp4);
    // On a GPU where nothing holds it, the model is set and validation says why.
    let mut small = presets::chatbot_h100();
    apply(&mut small, "gpu", "l4").expect("gpu");
    apply(&mut small, "model", "deepseek-v3").expect("model");
    let err = small.validate().expect_err("does not fit");
    assert!(
        err.to_string()
            .contains("DeepSeek-V3 in FP8 does not fit on 1 × L4"),
        "{err}"
    );
}

#[test]
fn an_edit_says_what_else_it_changed() {
    let before = crate::presets::chatbot_h100();
    let mut after = before.clone();
    apply(&mut after, "model", "llama-3.1-70b").expect("a model");
    let p = find("model").expect("param");
    let said = side_effects(&before, &after, p);
    assert!(
        said.iter().any(|l| l.starts_with("GPUs per replica: 1 → ")),
        "{said:?}"
    );
    // An edit that implies nothing says nothing.
    let mut rate = before.clone();
    apply(&mut rate, "arrival.rate", "9").expect("a rate");
    assert!(side_effects(&before, &rate, find("arrival.rate").expect("param")).is_empty());
}

#[test]
fn load_stages_are_written_and_read_as_text_and_the_rate_says_it_scaled_them() {
    let mut s = presets::chatbot_h100();
    let stages = find("arrival.stages").expect("stages");
    assert_eq!(
        stages.get_text(&s, 0).as_deref(),
        Some(""),
        "Poisson: no stages yet"
    );
    apply(&mut s, "arrival.stages", "8 req/s for 600 s, 24 for 600").expect("stages");
    assert_eq!(
        stages.get_text(&s, 0).as_deref(),
        Some("8 for 600, 24 for 600")
    );
    assert_eq!(s.duration_s, 1200.0, "the run covers the stages");
    s.check().expect("valid");
    // The arrival rate scales the stages as a whole, and says so.
    let before = s.clone();
    apply(&mut s, "arrival.rate", "12").expect("rate");
    let rate = find("arrival.rate").expect("rate");
    assert_eq!(
        side_effects(&before, &s, rate),
        ["Load stages: 8 for 600, 24 for 600 → 12 for 600, 36 for 600"]
    );
    // A stage that does not parse is named; empty text is one steady rate.
    let err = apply(&mut s, "arrival.stages", "8 for 600, 24 fro 600").expect_err("typo");
    assert!(
        err.contains("stage 2") && err.contains("24 fro 600"),
        "{err}"
    );
    apply(&mut s, "arrival.stages", " ").expect("back to one rate");
    assert_eq!(
        s.workload.arrival,
        crate::scenario::Arrival::Poisson { rate_per_s: 12.0 }
    );
    // A negative duration parses and is refused by validation, naming the field.
    apply(&mut s, "arrival.stages", "8 for -5").expect("parses");
    let e = s.check().expect_err("negative duration");
    assert!(
        e.problems
            .iter()
            .any(|p| p.contains("stages[0].duration_s")),
        "{e:?}"
    );
}

#[test]
fn timeouts_shared_prompts_and_conversations_have_parameters() {
    let mut s = presets::chatbot_h100();
    apply(&mut s, "timeout_s", "30").expect("timeout");
    assert_eq!(s.workload.classes[0].timeout_s, Some(30.0));
    apply(&mut s, "timeout_s", "0").expect("none");
    assert_eq!(s.workload.classes[0].timeout_s, None);

    assert!(
        apply(&mut s, "shared_prompt.count", "4").is_err(),
        "no prompt yet"
    );
    apply(&mut s, "shared_prompt.tokens", "1500").expect("prompt");
    apply(&mut s, "shared_prompt.count", "4").expect("count");
    let p = s.workload.classes[0]
        .shared_prefix
        .as_ref()
        .expect("prefix");
    assert_eq!((p.prompts, p.tokens), (4, 1500));
    apply(&mut s, "shared_prompt.tokens", "0").expect("none");
    assert!(s.workload.classes[0].shared_prefix.is_none());

    let think = find("conversation.think_s").expect("param");
    assert!(!think.applies(&s, 0), "one call per task: no turns");
    apply(&mut s, "calls_per_task", "5").expect("calls");
    apply(&mut s, "conversation.think_s", "20").expect("turns");
    let c = s.workload.classes[0].conversation.as_ref().expect("turns");
    assert_eq!(c.think_time_s.mean(), 20.0);
    s.check().expect("valid");
    apply(&mut s, "conversation.think_s", "0").expect("independent calls");
    assert!(s.workload.classes[0].conversation.is_none());
}

#[test]
fn prefix_caching_says_why_it_changes_nothing_without_a_shared_prefix() {
    let mut s = presets::chatbot_h100();
    let p = find("prefix_caching").expect("param");
    assert!(inert(p, &s).is_some_and(|w| w.contains("shared system prompt")));
    apply(&mut s, "shared_prompt.tokens", "1000").expect("prompt");
    assert_eq!(inert(p, &s), None);
    assert_eq!(inert(find("replicas").expect("param"), &s), None);
}

#[test]
fn prompt_caching_is_chosen_priced_and_says_when_it_changes_nothing() {
    let mut s = presets::launch_spike();
    let p = find("api.prompt_cache").expect("param");
    assert!(inert(p, &s).is_some_and(|w| w.contains("shared system prompt")));
    assert!(
        apply(&mut s, "api.usd_per_mtok_cached", "0.5").is_err(),
        "no cache yet"
    );
    apply(&mut s, "api.prompt_cache", "explicit_1h").expect("cache");
    let c = s.api.as_ref().expect("api").tiers[0]
        .prompt_cache
        .clone()
        .expect("on");
    assert_eq!(c.ttl_s, 3600.0);
    assert_eq!(c.usd_per_mtok_cached, 0.25, "a tenth of $2.50");
    apply(&mut s, "api.usd_per_mtok_cached", "0.5").expect("price");
    // Another kind of cache keeps the price set.
    apply(&mut s, "api.prompt_cache", "automatic").expect("automatic");
    let c = s.api.as_ref().expect("api").tiers[0]
        .prompt_cache
        .clone()
        .expect("on");
    assert_eq!((c.usd_per_mtok_cached, c.min_tokens), (0.5, 1024));
    assert_eq!(p.get_text(&s, 0).as_deref(), Some("automatic"));
    apply(&mut s, "shared_prompt.tokens[short email]", "2000").expect("prompt");
    assert_eq!(inert(p, &s), None);
    apply(&mut s, "api.prompt_cache", "off").expect("off");
    assert!(s.api.as_ref().expect("api").tiers[0].prompt_cache.is_none());
    assert!(apply(&mut s, "api.prompt_cache", "forever").is_err());
}

#[test]
fn the_breaker_the_fallback_and_incidents_are_set_by_name() {
    let mut s = presets::launch_spike();
    let p = find("api.breaker").expect("param");
    assert_eq!(p.get_text(&s, 0).as_deref(), Some("off"));
    apply(&mut s, "api.breaker", "quick").expect("quick");
    assert_eq!(
        s.api
            .as_ref()
            .expect("api")
            .breaker
            .as_ref()
            .map(|b| b.errors),
        Some(5)
    );
    assert_eq!(p.get_text(&s, 0).as_deref(), Some("quick"));
    assert!(apply(&mut s, "api.breaker", "sometimes").is_err());
    apply(&mut s, "api.fallback", "small").expect("fallback");
    assert!(apply(&mut s, "api.fallback", "nowhere").is_err());
    apply(&mut s, "api.incidents", "at 60 for 30: 25 %, ×2").expect("incident");
    let e = s.api.as_ref().expect("api").tiers[0]
        .errors
        .clone()
        .expect("errors");
    assert_eq!(
        (e.incidents[0].error_rate, e.incidents[0].latency_multiplier),
        (0.25, 2.0)
    );
    s.check().expect("valid");
    apply(&mut s, "api.incidents", "").expect("none");
    assert!(s.api.as_ref().expect("api").tiers[0].errors.is_none());
}

#[test]
fn priorities_say_why_they_change_nothing_until_they_can() {
    let mut s = presets::chat_and_batch();
    let (policy, priority) = (
        find("scheduling_policy").expect("param"),
        find("priority").expect("param"),
    );
    assert!(inert(priority, &s).is_some_and(|w| w.contains("priority scheduling")));
    assert_eq!(inert(policy, &s), None, "the batch job has priority 1");
    apply(&mut s, "scheduling_policy", "priority").expect("policy");
    assert_eq!(inert(priority, &s), None);
    apply(&mut s, "priority[batch job]", "0").expect("priority");
    assert!(inert(policy, &s).is_some_and(|w| w.contains("same priority")));
}

#[test]
fn differences_name_every_edit_from_the_preset() {
    let base = presets::chatbot_h100();
    let mut s = base.clone();
    assert!(differences(&base, &s).is_empty());
    apply(&mut s, "arrival.rate", "40").expect("rate");
    apply(&mut s, "replicas", "2").expect("replicas");
    assert_eq!(
        differences(&base, &s),
        ["Arrival rate 40 req/s", "Replicas 2 servers"]
    );
}

#[test]
fn routing_rules_read_and_write_as_text() {
    let text = "class simple and prompt < 1000 -> small; 30% -> frontier; all -> self-hosted overflow > 8 -> small";
    let rules = parse_routing(text).expect("parses");
    assert_eq!(rules.len(), 3);
    assert_eq!(rules[0].class.as_deref(), Some("simple"));
    assert_eq!(rules[0].prompt_under, Some(1000));
    assert_eq!(rules[1].share, Some(0.3));
    let o = rules[2].overflow.as_ref().expect("overflow");
    assert_eq!((o.queue_per_replica, o.to.as_str()), (8, "small"));
    assert_eq!(routing_text(&rules), text, "the text round-trips");
    assert_eq!(parse_routing("  ").expect("empty"), Vec::new());
    for (bad, says) in [
        ("simple", "rule 1 (\"simple\"): write CONDITIONS -> POOL"),
        (
            "prompt < many -> small",
            "a prompt condition is \"prompt < TOKENS\"",
        ),
        ("cheap -> small", "unknown condition \"cheap\""),
        (
            "all -> small overflow 8 -> api",
            "the overflow threshold is \"> N\"",
        ),
        ("all ->", "name the pool or tier"),
    ] {
        let e = parse_routing(bad).expect_err(bad);
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_pool_is_added_edited_by_name_and_removed_with_its_rules() {
    let mut s = presets::chatbot_h100();
    apply(&mut s, "pools", "small, big").expect("pools");
    assert_eq!(s.pool_count(), 3);
    assert_eq!(s.pools[0].name.as_deref(), Some("small"));
    assert_eq!(s.pools[0].gpu, s.serving.gpu, "a new pool copies the first");
    apply(&mut s, "replicas@big", "3").expect("replicas of big");
    apply(&mut s, "model@2", "llama-3.1-70b").expect("by index");
    assert_eq!((s.pools[1].replicas, s.serving.replicas), (3, 1));
    assert_eq!(s.pools[1].model, crate::physics::Model::Llama31_70b);
    apply(&mut s, "routing", "prompt < 500 -> small; all -> big").expect("routing");
    assert!(s.clone().validate().is_ok());
    let e = apply(&mut s, "arrival.rate@big", "3").expect_err("not a pool setting");
    assert!(
        e.contains("arrival.rate is not a pool's own setting"),
        "{e}"
    );
    let e = apply(&mut s, "replicas@tiny", "3").expect_err("no such pool");
    assert!(
        e.contains("@tiny: no such pool; pools are self-hosted, small, big"),
        "{e}"
    );
    apply(&mut s, "pools", "big").expect("drop small");
    assert_eq!(s.pools.len(), 1);
    assert_eq!(s.pools[0].replicas, 3, "a kept pool keeps its settings");
    assert_eq!(
        routing_text(&s.routing),
        "all -> big",
        "the rule naming small went with it"
    );
    let e = apply(&mut s, "pools", "self-hosted").expect_err("first pool's name");
    assert!(e.contains("first pool's name"), "{e}");
}

#[test]
fn autoscaling_is_switched_on_bounded_and_set_per_pool() {
    let mut s = presets::chatbot_h100();
    let e = apply(&mut s, "autoscale.max", "4").expect_err("off");
    assert!(e.contains("choose an autoscaling signal first"), "{e}");
    apply(&mut s, "autoscale", "kv_use").expect("on");
    let a = s.serving.autoscale.clone().expect("autoscale");
    assert_eq!((a.target, a.min_replicas, a.max_replicas), (0.8, 1, 4));
    apply(&mut s, "autoscale", "queue_per_replica").expect("signal");
    assert_eq!(s.serving.autoscale.as_ref().map(|a| a.target), Some(4.0));
    // Bounds stay ordered and the starting replicas within them.
    apply(&mut s, "replicas", "3").expect("replicas");
    apply(&mut s, "autoscale.max", "2").expect("max");
    assert_eq!(s.serving.replicas, 2);
    apply(&mut s, "autoscale.min", "0").expect("min");
    assert!(s.clone().validate().is_ok());
    apply(&mut s, "pools", "burst").expect("pool");
    apply(&mut s, "autoscale.max@burst", "8").expect("per pool");
    assert_eq!(
        s.pools[0].autoscale.as_ref().map(|a| a.max_replicas),
        Some(8)
    );
    assert_eq!(
        s.serving.autoscale.as_ref().map(|a| a.max_replicas),
        Some(2)
    );
    apply(&mut s, "autoscale", "off").expect("off");
    assert_eq!(
        (s.serving.autoscale.is_none(), s.serving.replicas),
        (true, 2)
    );
}

#[test]
fn a_scaled_stage_reads_without_float_noise() {
    // Dragging the rate scales every stage: 24 × 108.9 / 6 is
    // 435.59999999999997 in binary; the box says 435.6.
    let mut s = presets::chatbot_h100();
    apply(&mut s, "arrival.stages", "6 for 600, 24 for 600").expect("stages");
    let stages = find("arrival.stages").expect("the stages parameter");
    for rate in [108.9, 0.7, 33.3, 1.1, 250.5, 7.77] {
        apply(&mut s, "arrival.rate", &rate.to_string()).expect("rate");
        let text = stages.get_text(&s, 0).expect("stages apply");
        let noisy = text
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .any(|n| n.split_once('.').is_some_and(|(_, d)| d.len() > 6));
        assert!(!noisy, "at {rate} req/s the stages read {text:?}");
    }
    assert_eq!(crate::format::plain(435.59999999999997), "435.6");
    assert_eq!(crate::format::plain(2.0), "2");
    assert_eq!(crate::format::plain(-0.0000001), "-1e-7");
    assert_eq!(crate::format::plain(1.5e12), "1.5e12");
}
