//! Field-by-field validation of the workload and the serving fleet: every
//! problem names the field, the allowed range and the value given.

use super::*;
use crate::format::show;
use crate::physics::CustomGpu;

pub(super) struct Checker {
    pub(super) problems: Vec<String>,
    /// Tasks the arrival process is expected to send (for the work bounds).
    pub(super) expected_tasks: f64,
}

impl Checker {
    pub(super) fn range_f(&mut self, field: &str, v: f64, lo: f64, hi: f64, unit: &str) {
        if !(v.is_finite() && v >= lo && v <= hi) {
            self.problems.push(format!(
                "{field} must be {}..={}{unit}, got {}",
                show(lo),
                show(hi),
                show(v)
            ));
        }
    }
    pub(super) fn positive_f(&mut self, field: &str, v: f64, hi: f64, unit: &str) {
        if !(v.is_finite() && v > 0.0 && v <= hi) {
            self.problems.push(format!(
                "{field} must be > 0 and ≤ {}{unit}, got {}",
                show(hi),
                show(v)
            ));
        }
    }
    pub(super) fn range_u(&mut self, field: &str, v: u64, lo: u64, hi: u64) {
        if !(lo..=hi).contains(&v) {
            self.problems
                .push(format!("{field} must be {lo}..={hi}, got {v}"));
        }
    }
}

impl Checker {
    /// The two limits every iteration-level policy has.
    fn iteration_batching(&mut self, max_num_seqs: u32, max_num_batched_tokens: u32) {
        self.range_u(
            "serving.batching.max_num_seqs",
            u64::from(max_num_seqs),
            1,
            u64::from(bounds::BATCH),
        );
        self.range_u(
            "serving.batching.max_num_batched_tokens",
            u64::from(max_num_batched_tokens),
            1,
            u64::from(bounds::BATCHED_TOKENS),
        );
    }
}

impl Scenario {
    /// Check every field and turn the scenario into a [`ValidScenario`]; on
    /// failure list every problem found.
    pub fn validate(self) -> Result<ValidScenario, ScenarioError> {
        self.check()?;
        Ok(ValidScenario(self))
    }

    /// Check every field without taking the scenario; on failure list every
    /// problem found.
    pub fn check(&self) -> Result<(), ScenarioError> {
        let mut c = Checker {
            problems: Vec::new(),
            expected_tasks: 0.0,
        };
        if let Some(r) = &self.distilled_from {
            c.problems.extend(r.problems("distilled_from"));
        }
        if self.version != SCENARIO_VERSION {
            c.problems.push(format!(
                "version must be {SCENARIO_VERSION} (this build's scenario format), got {}",
                self.version
            ));
        }
        c.positive_f("duration_s", self.duration_s, bounds::DURATION_S, " s");
        if self.name.len() > 200 {
            c.problems.push(format!(
                "name must be at most 200 bytes, got {}",
                self.name.len()
            ));
        }
        self.validate_workload(&mut c);
        self.validate_serving(&mut c);
        if c.problems.is_empty() {
            self.validate_prefix_work(&mut c);
        }
        self.validate_api(&mut c);
        c.positive_f("slo.ttft_ms", self.slo.ttft_ms, 1e9, " ms");
        c.positive_f("slo.tpot_ms", self.slo.tpot_ms, 1e9, " ms");
        c.range_u(
            "limits.max_events",
            self.limits.max_events,
            1,
            bounds::EVENTS,
        );
        c.positive_f(
            "limits.max_sim_time_s",
            self.limits.max_sim_time_s,
            bounds::SIM_TIME_S,
            " s",
        );
        // A run never stops before its arrivals end unless it says so: a
        // time limit inside the arrival window would silently leave out
        // the rest of it.
        if self.limits.max_sim_time_s < self.duration_s {
            c.problems.push(format!(
                "limits.max_sim_time_s ({} s) must be at least duration_s ({} s): the run would stop before the arrival window ends and leave out {:.1} % of its requests; raise limits.max_sim_time_s to {} or more",
                crate::format::show(self.limits.max_sim_time_s),
                crate::format::show(self.duration_s),
                100.0
                    * self
                        .workload
                        .arrival
                        .left_out(self.limits.max_sim_time_s, self.duration_s),
                crate::format::show(self.duration_s)
            ));
        }
        if c.problems.is_empty() {
            Ok(())
        } else {
            Err(ScenarioError {
                problems: c.problems,
            })
        }
    }

    /// Every pool, each as `serving` is checked; a later pool's problems
    /// name its fields under `pools[i]`. Then the pools' names and the
    /// routing rules.
    fn validate_serving(&self, c: &mut Checker) {
        self.validate_pool(&self.serving, c);
        for (i, p) in self.pools.iter().take(MAX_POOLS).enumerate() {
            let before = c.problems.len();
            self.validate_pool(p, c);
            // Field names are written for `serving`: re-root them here.
            for problem in &mut c.problems[before..] {
                *problem = problem
                    .replace("serving.", &format!("pools[{i}]."))
                    .replace("serving:", &format!("pools[{i}]:"));
            }
        }
        self.validate_pools(&mut c.problems);
        self.validate_disaggregation(&mut c.problems);
    }

    fn validate_pool(&self, s: &Serving, c: &mut Checker) {
        match &s.autoscale {
            // Scaling to zero may start with none.
            Some(a) => a.problems("serving.autoscale", s.replicas, &mut c.problems),
            None => c.range_u(
                "serving.replicas",
                u64::from(s.replicas),
                1,
                u64::from(bounds::REPLICAS),
            ),
        }
        if ![1, 2, 4, 8].contains(&s.gpus_per_replica) {
            c.problems.push(format!(
                "serving.gpus_per_replica must be 1, 2, 4 or 8, got {}",
                s.gpus_per_replica
            ));
        }
        c.range_f(
            "serving.gpu_memory_utilisation",
            s.gpu_memory_utilisation,
            0.1,
            0.99,
            "",
        );
        c.range_u(
            "serving.max_queue_per_replica",
            u64::from(s.max_queue_per_replica),
            1,
            u64::from(bounds::QUEUE),
        );
        if let Some(p) = s.usd_per_gpu_hour {
            c.range_f("serving.usd_per_gpu_hour", p, 0.0, 1000.0, " $/h");
        }
        if let Some(p) = s.usd_per_kwh {
            c.range_f("serving.usd_per_kwh", p, 0.0, 10.0, " $/kWh");
        }
        if let Some(k) = s.step_time_scale {
            let (lo, hi) = bounds::STEP_TIME_SCALE;
            c.range_f("serving.step_time_scale", k, lo, hi, "");
        }
        if let Some(k) = s.prefill_time_scale {
            let (lo, hi) = bounds::STEP_TIME_SCALE;
            c.range_f("serving.prefill_time_scale", k, lo, hi, "");
        }
        if let Gpu::Custom(g) = &s.gpu {
            validate_custom_gpu(g, c);
        }
        c.model(s);
        c.fitted_profile(s);
        if let Some(sp) = &s.speculative {
            sp.problems("serving.speculative", s, &mut c.problems);
        }
        // FP8 weights on a GPU without FP8 tensor cores are valid: weight-only
        // FP8 (as on A100 via Marlin kernels) computes at the 16-bit peak.
        let max_input = self.max_input_tokens();
        validate_batching(&s.batching, max_input, c);
        self.validate_service(s, c);
    }

    /// The service model: the physics' KV cache must hold, the abstract
    /// server's time is a distribution and works with whole batches.
    fn validate_service(&self, s: &Serving, c: &mut Checker) {
        match &s.service {
            ServiceModel::Physics => {
                if c.problems.is_empty() {
                    let dep = self.deployment_for(s);
                    if let Err(e) = dep.kv_capacity_blocks() {
                        c.problems.push(format!("serving: {e}"));
                    }
                }
            }
            ServiceModel::Abstract { time_s, .. } => {
                time_s.validate("serving.service.time_s", bounds::TIME_S, &mut c.problems);
                if matches!(
                    s.batching,
                    Batching::Continuous { .. } | Batching::ChunkedPrefill { .. }
                ) {
                    c.problems.push(
                        "serving.service: the abstract service model works with batching none or static, got an iteration-level policy"
                            .into(),
                    );
                }
            }
        }
    }
}

/// A custom GPU's datasheet: ranges that hold every accelerator sold and a
/// decade of growth, and precisions whose peaks never fall.
fn validate_custom_gpu(g: &CustomGpu, c: &mut Checker) {
    let f = |name: &str| format!("serving.gpu.custom.{name}");
    c.range_f(&f("bf16_tflops"), g.bf16_tflops, 1.0, 100_000.0, " TFLOP/s");
    let mut lower = ("bf16_tflops", g.bf16_tflops);
    for (name, peak) in [("fp8_tflops", g.fp8_tflops), ("fp4_tflops", g.fp4_tflops)] {
        if let Some(p) = peak {
            c.range_f(&f(name), p, 1.0, 400_000.0, " TFLOP/s");
            if p < lower.1 {
                c.problems.push(format!(
                    "{} ({}) is below {} ({}): a lower precision's peak is never lower",
                    f(name),
                    show(p),
                    f(lower.0),
                    show(lower.1)
                ));
            }
            lower = (name, p);
        }
    }
    if g.fp4_tflops.is_some() && g.fp8_tflops.is_none() {
        c.problems
            .push(format!("{} needs {} too", f("fp4_tflops"), f("fp8_tflops")));
    }
    c.range_f(&f("memory_gb"), g.memory_gb, 1.0, 10_000.0, " GB");
    c.range_f(
        &f("memory_gb_per_s"),
        g.memory_gb_per_s,
        10.0,
        1_000_000.0,
        " GB/s",
    );
    c.range_f(
        &f("link_gb_per_s"),
        g.link_gb_per_s,
        0.1,
        100_000.0,
        " GB/s",
    );
    c.range_f(&f("usd_per_hour"), g.usd_per_hour, 0.0, 1000.0, " $/h");
    if let Some(w) = g.board_w {
        c.range_f(&f("board_w"), w, 1.0, 10_000.0, " W");
    }
    if let Some(w) = g.idle_w {
        c.range_f(&f("idle_w"), w, 0.0, g.board_w.unwrap_or(10_000.0), " W");
        if g.board_w.is_none() {
            c.problems
                .push(format!("{} needs {} too", f("idle_w"), f("board_w")));
        }
    }
}

/// The batching policy's sizes; without chunked prefill, room in a pass
/// for the longest prompt.
fn validate_batching(batching: &Batching, max_input: Option<u32>, c: &mut Checker) {
    match batching {
        Batching::None => {}
        Batching::Static {
            max_batch,
            max_wait_ms,
        } => {
            c.range_u(
                "serving.batching.max_batch",
                u64::from(*max_batch),
                1,
                u64::from(bounds::BATCH),
            );
            c.range_f(
                "serving.batching.max_wait_ms",
                *max_wait_ms,
                0.0,
                3_600_000.0,
                " ms",
            );
        }
        Batching::Continuous {
            max_num_seqs,
            max_num_batched_tokens,
        } => {
            c.iteration_batching(*max_num_seqs, *max_num_batched_tokens);
            if let Some(m) = max_input
                && *max_num_batched_tokens < m
            {
                c.problems.push(format!(
                    "serving.batching.max_num_batched_tokens must be ≥ the longest prompt ({m} tokens) without chunked prefill, got {max_num_batched_tokens}"
                ));
            }
        }
        Batching::ChunkedPrefill {
            max_num_seqs,
            max_num_batched_tokens,
            chunk_tokens,
        } => {
            c.iteration_batching(*max_num_seqs, *max_num_batched_tokens);
            c.range_u(
                "serving.batching.chunk_tokens",
                u64::from(*chunk_tokens),
                1,
                u64::from(bounds::BATCHED_TOKENS),
            );
            if max_num_seqs > max_num_batched_tokens {
                c.problems.push(format!(
                    "serving.batching.max_num_batched_tokens must be ≥ max_num_seqs ({max_num_seqs}) so every running sequence can decode in each pass, got {max_num_batched_tokens}"
                ));
            }
        }
    }
}
