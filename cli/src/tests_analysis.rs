//! The analyses' helpers and what the summary prints.

mod names {
    use tlab::summary::{printable, summary};

    #[test]
    fn control_characters_in_names_never_reach_the_terminal() {
        let mut s = sim_core::presets::chatbot_h100();
        s.name = "evil\u{1b}[31m red\r".into();
        s.workload.classes[0].name = "chat\u{7}".into();
        let r = sim_core::run_scenario(s.clone()).expect("valid");
        let text = summary(&s, &r);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("evil\\u{1b}[31m red\\r"), "{text}");
        assert_eq!(printable("a\tb"), "a\\tb");
    }
}

mod analysis_tests {
    use sim_core::plan::{PlanSlo, Space};
    use sim_core::sweep::{Axis, Summary};
    use tlab::analysis;

    fn base() -> sim_core::Scenario {
        let mut s = sim_core::presets::chatbot_h100();
        s.duration_s = 60.0;
        s
    }

    #[test]
    fn a_sweep_point_equals_an_individual_run_and_parallel_equals_serial() {
        let axes = [
            Axis::parse("arrival.rate=4,12,20").expect("axis"),
            Axis::parse("batching.max_seqs=32,128").expect("axis"),
        ];
        let parallel = analysis::sweep(&base(), &axes, true, false).expect("valid");
        let serial = analysis::sweep(&base(), &axes, false, false).expect("valid");
        assert_eq!(parallel, serial);
        let mut s = base();
        s.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 12.0 };
        if let sim_core::scenario::Batching::ChunkedPrefill { max_num_seqs, .. } =
            &mut s.serving.batching
        {
            *max_num_seqs = 128;
        }
        let direct = Summary::of(&sim_core::run_scenario(s.clone()).expect("valid"));
        let row = parallel
            .iter()
            .find(|(l, _)| l == &["12", "128"])
            .expect("point");
        assert_eq!(row.1, direct);
    }

    #[test]
    fn the_plan_s_answer_passes_when_rerun_and_the_cheaper_near_miss_fails() {
        let slo = PlanSlo {
            ttft_p99_ms: 500.0,
            tpot_p99_ms: 50.0,
            max_error_fraction: 0.01,
            min_goodput: 0.9,
        };
        let space = Space {
            self_hosted: true,
            gpus: vec![
                sim_core::physics::Gpu::L4,
                sim_core::physics::Gpu::L40s,
                sim_core::physics::Gpu::H100,
            ],
            tps: vec![1, 2],
            weights: vec![sim_core::physics::Precision::Fp8],
            max_seqs: vec![64, 256],
            max_replicas: 16,
            api_multipliers: vec![1],
            api_strategies: true,
            budget_events: u64::MAX,
            remedies: Default::default(),
        };
        let p = analysis::plan_parallel(&base(), slo, &space, true);
        assert_eq!(
            p,
            analysis::plan_parallel(&base(), slo, &space, false),
            "parallel equals serial"
        );
        let best = p.feasible.first().expect("something fits");
        let rerun = |e: &sim_core::plan::Evaluated| {
            let search = sim_core::plan::Search::new(&base(), e.config.clone(), slo, &space);
            let mut s = search.next().expect("not pruned");
            s.serving.replicas = e.replicas;
            slo.check(&sim_core::run_scenario(s.clone()).expect("valid"))
        };
        assert!(rerun(best).is_ok(), "{}", best.description);
        let miss = p.near_misses.first().expect("a cheaper setup failed");
        assert!(miss.usd_per_month < best.usd_per_month);
        assert!(rerun(miss).is_err(), "{}", miss.description);
        assert!(
            p.feasible
                .windows(2)
                .all(|w| w[0].usd_per_month <= w[1].usd_per_month)
        );
    }
}

#[test]
fn the_planner_searches_the_gpus_asked_for_and_refuses_unknown_ones_by_name() {
    use sim_core::physics::Gpu;
    let plan_gpus = |keys: &[String]| tlab::analysis::plan_gpus(keys, "--gpus");
    assert_eq!(plan_gpus(&[]).expect("default"), Gpu::PLANNED.to_vec());
    assert_eq!(plan_gpus(&["all".into()]).expect("all"), Gpu::ALL.to_vec());
    assert_eq!(
        plan_gpus(&["b200".into(), " rtx-pro-6000".into()]).expect("two"),
        vec![Gpu::B200, Gpu::RtxPro6000]
    );
    let why = plan_gpus(&["h1000".into()]).expect_err("unknown");
    assert!(
        why.contains("--gpus: gpu: unknown value \"h1000\"") && why.contains("mi355x"),
        "{why}"
    );
}
