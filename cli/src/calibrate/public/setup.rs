//! How a row's system is served in a simulation (`Setup`): the scenario
//! every source builds, the engines' default batches, and the runs with a
//! fit's trial constants (`Trial`).

use sim_core::Scenario;
use sim_core::physics::{Gpu, Model, Precision, ServingCosts, ServingSoftware, Timing};
use sim_core::report::Report;
use sim_core::scenario::{Batching, Limits, RequestClass, SCENARIO_VERSION, Slo, Workload};

/// How a system is served in a simulation: the parts every source fills in.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The GPU.
    pub gpu: Gpu,
    /// The model.
    pub model: Model,
    /// The engine's profile.
    pub software: ServingSoftware,
    /// Weights' format.
    pub weights: Precision,
    /// GPUs per replica.
    pub tp: u32,
    /// Replicas.
    pub replicas: u32,
    /// Experts spread across a replica's GPUs.
    pub expert_parallel: bool,
    /// The largest batch a replica runs (`max_num_seqs`, TensorRT-LLM's
    /// `max_batch_size`); None is the engine's default.
    pub max_batch: Option<u32>,
    /// Step-time constants to run with instead of the profile's (a fit's
    /// trial, [`Trial`]); None runs the profile as it is.
    pub costs: Option<ServingCosts>,
    /// The benchmark calls the engine in its own process, with no API
    /// server between (MLPerf's LoadGen harnesses call TensorRT-LLM's
    /// executor and vLLM's engine directly): the profile's front-end times
    /// (HTTP, tokenising, streaming) are left out.
    pub in_process: bool,
}

impl Setup {
    /// GPU, profile and whether the model is a mixture of experts: the
    /// key of its error band (`bands`).
    pub fn system(&self) -> (Gpu, ServingSoftware, bool) {
        (self.gpu, self.software, self.model.dims().moe.is_some())
    }

    /// The scenario that serves `class` on this setup with `arrival`, for
    /// `duration_s`. The engines' batching: chunked prefill with the
    /// engine's default token budget and batch, SGLang's prompt passes
    /// apart from its decode passes (`docs/calibration-public.md`).
    pub fn scenario(
        &self,
        name: &str,
        arrival: sim_core::scenario::Arrival,
        class: RequestClass,
        duration_s: f64,
    ) -> Scenario {
        let mut serving = sim_core::presets::h100_llama_8b();
        serving.gpu = self.gpu;
        serving.model = self.model;
        serving.weights = self.weights;
        // Engines that quantise weights to 8 bits or fewer keep the KV
        // cache in FP8 too (TensorRT-LLM's and vLLM's FP8 KV cache).
        serving.kv_cache = match self.weights {
            Precision::Bf16 => Precision::Bf16,
            _ => Precision::Fp8,
        };
        serving.gpus_per_replica = self.tp;
        serving.replicas = self.replicas;
        serving.software = self.software;
        serving.expert_parallel = self.expert_parallel;
        serving.usd_per_gpu_hour = None;
        let (seqs, tokens) = engine_batch(self.software);
        let seqs = self.max_batch.unwrap_or(seqs);
        serving.batching = match self.software {
            // SGLang runs a pass of new prompts (up to its chunk of
            // tokens) apart from the decode passes unless
            // `--enable-mixed-chunk` is given, which these runs do not.
            ServingSoftware::Sglang => Batching::Continuous {
                max_num_seqs: seqs,
                max_num_batched_tokens: tokens,
            },
            _ => Batching::ChunkedPrefill {
                max_num_seqs: seqs,
                max_num_batched_tokens: tokens,
                chunk_tokens: tokens,
            },
        };
        serving.gpu_memory_utilisation = 0.9;
        // Benchmarks send distinct prompts: nothing to reuse.
        serving.prefix_caching = Some(false);
        Scenario {
            distilled_from: None,
            pools: Vec::new(),
            routing: Vec::new(),
            version: SCENARIO_VERSION,
            name: name.to_owned(),
            seed: 1,
            duration_s,
            workload: Workload {
                arrival,
                classes: vec![class],
            },
            serving,
            slo: Slo::default(),
            // A run whose queue grows stops half a window after its
            // arrivals end: it has failed whatever it would show later.
            limits: Limits {
                max_sim_time_s: 1.5 * duration_s,
                ..Limits::default()
            },
            api: None,
        }
    }

    /// The layout in words.
    pub fn describe(&self) -> String {
        format!(
            "{} × TP{}{}, {} weights{}",
            self.replicas,
            self.tp,
            if self.expert_parallel { " EP" } else { "" },
            self.weights.name(),
            self.max_batch
                .map(|b| format!(", batch ≤ {b}"))
                .unwrap_or_default()
        )
    }

    /// Whether the model's weights leave room for a KV cache on one replica.
    pub fn fits(&self) -> bool {
        self.deployment().kv_capacity_blocks().is_ok_and(|b| b > 0)
    }

    /// One replica of this setup, as the engine sizes and times it.
    pub fn deployment(&self) -> sim_core::physics::Deployment {
        let s = self.scenario(
            "fit",
            sim_core::scenario::Arrival::Poisson { rate_per_s: 1.0 },
            RequestClass::new(
                "fit",
                sim_core::dist::Dist::Fixed { value: 100.0 },
                sim_core::dist::Dist::Fixed { value: 10.0 },
                10,
            ),
            1.0,
        );
        s.deployment()
    }
}

/// The largest batch and the token budget of a pass each engine runs with
/// by default in these benchmarks: TensorRT-LLM's `max_batch_size` 2,048 and
/// `max_num_tokens` 8,192 (trtllm-serve's defaults); vLLM's 1,024 sequences
/// and 8,192 tokens (its defaults on data-centre GPUs for an API server);
/// SGLang's 512 running requests and 32,768-token chunks (InferenceX's
/// DeepSeek-R1 launch scripts on NVIDIA GPUs set `--max-running-requests`
/// 128–512 and `--chunked-prefill-size` 32,768; its AMD scripts a larger
/// chunk, which its prompts of at most 8,192 tokens at 4–64 clients seldom
/// fill).
pub fn engine_batch(software: ServingSoftware) -> (u32, u32) {
    match software {
        ServingSoftware::TensorrtLlm | ServingSoftware::TensorrtLlm1 => (2048, 8192),
        ServingSoftware::Vllm => (1024, 8192),
        ServingSoftware::Sglang => (512, 32_768),
    }
}

/// One run, or why it could not run.
pub fn run(s: Scenario) -> Result<Report, String> {
    sim_core::run_scenario(s).map_err(|e| e.to_string())
}

impl Setup {
    /// A run of `s` (built by [`Setup::scenario`]) with this setup's
    /// constants, or why it could not run.
    pub fn run(&self, s: Scenario) -> Result<Report, String> {
        match self.timing() {
            None => run(s),
            Some(c) => {
                let v = s.validate().map_err(|e| e.to_string())?;
                Ok(sim_core::run_timed(&v, Timing::Serving(c)))
            }
        }
    }

    /// A planning run of `s` against `limits` (it stops once its verdict is
    /// settled) with this setup's constants.
    pub fn planning_run(
        &self,
        limits: sim_core::plan::PlanSlo,
        s: Scenario,
    ) -> Result<Report, String> {
        sim_core::plan::planning_run_timed(limits, self.timing().map(Timing::Serving))(s)
            .map_err(|e| e.to_string())
    }

    /// The constants a run uses where they are not the profile's own: a
    /// trial's, and without the front end for an in-process harness.
    fn timing(&self) -> Option<ServingCosts> {
        let own = match self.software.profile_on(&self.gpu).timing {
            Timing::Serving(c) => Some(c),
            Timing::TensorrtLlm(_) => None,
        };
        match (self.costs.or(own), self.in_process) {
            (Some(c), true) => Some(ServingCosts {
                frontend_in_ns: 0,
                frontend_out_ns: 0,
                ..c
            }),
            (costs, _) => costs,
        }
    }
}

/// Other step-time constants for one profile's rows on one platform: a
/// fit's trial. Rows of other profiles, or on the other platform, run as
/// they are.
#[derive(Clone, Copy, Debug)]
pub struct Trial {
    /// The profile's build whose constants are replaced (SGLang's CUDA and
    /// ROCm builds have constants of their own).
    pub target: super::fit::Target,
    /// The constants tried.
    pub costs: ServingCosts,
    /// Whether MLPerf Server and Interactive rows search their highest
    /// rate within the limits (a fit's trials run them at `target_qps` only).
    pub rate_search: bool,
}

impl Trial {
    /// `setup` with the trial's constants where it runs the trial's profile.
    pub fn apply(trial: Option<Trial>, setup: &mut Setup) {
        if let Some(t) = trial.filter(|t| t.target.runs(setup.software, &setup.gpu)) {
            setup.costs = Some(t.costs);
        }
    }
}

/// Tensor-parallel sizes a submitter could choose on `gpus_per_node` GPUs:
/// powers of two that divide the system's GPUs and fit in one node.
pub fn tp_choices(gpus: u32, gpus_per_node: u32) -> Vec<u32> {
    [1, 2, 4, 8]
        .into_iter()
        .filter(|tp| *tp <= gpus_per_node.max(1) && gpus.is_multiple_of(*tp))
        .collect()
}
