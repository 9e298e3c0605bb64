//! Published measurements the timing model is calibrated against, and the
//! simulation of each under its stated conditions.
//!
//! Source: NVIDIA TensorRT-LLM performance tables (`docs/source/performance.md`,
//! v0.5–v0.6), as collected in `shared/reference.md` §4. Throughput runs are
//! offline: the whole batch arrives at once, runs as one static batch (prefill,
//! then one decode step per output token), and throughput is output tokens over
//! the makespan, per GPU. TTFT runs are one request alone: its prefill pass.

use crate::dist::Dist;
use crate::physics::{Efficiency, Gpu, Model, Precision};
use crate::scenario::{
    Arrival, Batching, Limits, RequestClass, Router, SCENARIO_VERSION, Scenario, ServiceModel,
    Serving, Slo, TraceRequest, Workload,
};

/// Largest allowed error of a throughput point.
pub const THROUGHPUT_TOLERANCE: f64 = 0.15;
/// Largest allowed error of a batch-1 TTFT point.
pub const TTFT_TOLERANCE: f64 = 0.20;

/// What was measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// Offline throughput: `batch` requests of `input`/`output` tokens; output tok/s per GPU.
    Throughput {
        /// Requests in the batch.
        batch: u32,
        /// Prompt tokens.
        input: u32,
        /// Generated tokens.
        output: u32,
    },
    /// Time to first token of one request with a `prompt`-token prompt, ms.
    Ttft {
        /// Prompt tokens.
        prompt: u32,
    },
}

/// One published measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// GPU.
    pub gpu: Gpu,
    /// Model.
    pub model: Model,
    /// Weight and KV-cache precision.
    pub precision: Precision,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// What was measured.
    pub metric: Metric,
    /// The published value (output tok/s per GPU, or ms).
    pub published: f64,
}

const fn tput(
    gpu: Gpu,
    model: Model,
    precision: Precision,
    tp: u32,
    batch: u32,
    io: (u32, u32),
    v: f64,
) -> Measurement {
    Measurement {
        gpu,
        model,
        precision,
        tp,
        metric: Metric::Throughput {
            batch,
            input: io.0,
            output: io.1,
        },
        published: v,
    }
}

const fn ttft(
    gpu: Gpu,
    model: Model,
    precision: Precision,
    tp: u32,
    prompt: u32,
    ms: f64,
) -> Measurement {
    Measurement {
        gpu,
        model,
        precision,
        tp,
        metric: Metric::Ttft { prompt },
        published: ms,
    }
}

/// Every point of reference §4.
pub const MEASUREMENTS: [Measurement; 15] = {
    use Gpu::*;
    use Model::{Llama2_7b as L7, Llama2_70b as L70};
    use Precision::{Bf16, Fp8};
    [
        tput(H100, L7, Fp8, 1, 768, (128, 128), 19_694.0),
        tput(H100, L7, Fp8, 1, 80, (2048, 128), 2_244.0),
        tput(A100, L7, Bf16, 1, 384, (128, 128), 5_586.0),
        tput(A100, L70, Bf16, 4, 1280, (128, 128), 670.0),
        tput(L40s, L7, Fp8, 1, 64, (128, 128), 3_240.0),
        ttft(H100, L7, Fp8, 1, 128, 7.0),
        ttft(H100, L7, Fp8, 1, 2048, 36.0),
        ttft(A100, L7, Bf16, 1, 128, 16.0),
        ttft(A100, L7, Bf16, 1, 2048, 133.0),
        ttft(L40s, L7, Fp8, 1, 128, 14.0),
        ttft(L40s, L7, Fp8, 1, 2048, 73.0),
        ttft(H100, L70, Fp8, 4, 128, 26.0),
        ttft(H100, L70, Fp8, 4, 2048, 109.0),
        ttft(A100, L70, Bf16, 4, 128, 47.0),
        ttft(A100, L70, Bf16, 4, 2048, 377.0),
    ]
};

impl Measurement {
    /// A short label, e.g. "H100 FP8 Llama-2-7B TP1 batch 768 128/128".
    pub fn label(&self) -> String {
        // NVIDIA's tables say FP16 for their 16-bit runs.
        let p = match self.precision {
            Precision::Bf16 => "FP16",
            p => p.name(),
        };
        let what = match self.metric {
            Metric::Throughput {
                batch,
                input,
                output,
            } => format!("batch {batch}, {input}/{output}: out tok/s/GPU"),
            Metric::Ttft { prompt } => format!("batch 1, prompt {prompt}: TTFT ms"),
        };
        format!(
            "{} {p} {} TP{} {what}",
            self.gpu.spec().name,
            self.model.name(),
            self.tp
        )
    }

    /// Allowed relative error.
    pub fn tolerance(&self) -> f64 {
        match self.metric {
            Metric::Throughput { .. } => THROUGHPUT_TOLERANCE,
            Metric::Ttft { .. } => TTFT_TOLERANCE,
        }
    }

    /// The scenario that reproduces the measurement's conditions.
    pub fn scenario(&self) -> Scenario {
        let (batch, input, output) = match self.metric {
            Metric::Throughput {
                batch,
                input,
                output,
            } => (batch, input, output),
            Metric::Ttft { prompt } => (1, prompt, 1),
        };
        let requests = (0..batch)
            .map(|_| TraceRequest {
                prefix_blocks: Vec::new(),
                at_s: 0.0,
                input_tokens: input,
                output_tokens: output,
                class: 0,
            })
            .collect();
        Scenario {
            distilled_from: None,
            pools: Vec::new(),
            routing: Vec::new(),
            version: SCENARIO_VERSION,
            name: self.label(),
            seed: 1,
            duration_s: 1.0,
            workload: Workload {
                arrival: Arrival::Trace {
                    requests,
                    prefix_block_tokens: None,
                },
                classes: vec![RequestClass::new(
                    "calibration",
                    Dist::Fixed {
                        value: f64::from(input),
                    },
                    Dist::Fixed {
                        value: f64::from(output),
                    },
                    output,
                )],
            },
            serving: Serving {
                name: None,
                autoscale: None,
                replicas: 1,
                router: Router::RoundRobin,
                gpu: self.gpu,
                gpus_per_replica: self.tp,
                model: self.model,
                weights: self.precision,
                kv_cache: self.precision,
                // TensorRT-LLM's benchmark sizes its KV pool from nearly all free memory.
                gpu_memory_utilisation: 0.95,
                // The batch leaves when full: all requests arrive at t = 0.
                batching: Batching::Static {
                    max_batch: batch,
                    max_wait_ms: 60_000.0,
                },
                max_queue_per_replica: batch,
                usd_per_gpu_hour: None,
                usd_per_kwh: None,
                service: ServiceModel::Physics,
                software: crate::physics::ServingSoftware::TensorrtLlm,
                prefix_caching: None,
                async_scheduling: None,
                scheduling_policy: None,
                expert_parallel: false,
                fitted_profile: None,
                step_time_scale: None,
                prefill_time_scale: None,
                disaggregation: None,
                speculative: None,
            },
            slo: Slo::default(),
            limits: Limits::default(),
            api: None,
        }
    }

    /// The simulator's value for this measurement under `eff`.
    pub fn predict(&self, eff: Efficiency) -> Result<f64, String> {
        let scenario = self.scenario().validate().map_err(|e| e.to_string())?;
        let r = crate::run_timed(&scenario, crate::physics::Timing::TensorrtLlm(eff));
        if r.requests.completed != r.requests.arrived {
            return Err(format!(
                "only {} of {} requests completed: {:?}",
                r.requests.completed, r.requests.arrived, r.warnings
            ));
        }
        match self.metric {
            Metric::Throughput { .. } => Ok(r.throughput.output_tokens_per_s / f64::from(self.tp)),
            Metric::Ttft { .. } => r.overall.ttft.mean_ms.ok_or_else(|| "no TTFT".to_owned()),
        }
    }
}

/// One row of the calibration table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The measurement.
    pub measurement: Measurement,
    /// The simulator's value.
    pub predicted: f64,
    /// (predicted − published) / published.
    pub error: f64,
}

/// The whole table under `eff`.
pub fn table(eff: Efficiency) -> Result<Vec<Row>, String> {
    MEASUREMENTS
        .iter()
        .map(|m| {
            let predicted = m.predict(eff)?;
            Ok(Row {
                measurement: *m,
                predicted,
                error: (predicted - m.published) / m.published,
            })
        })
        .collect()
}

/// The table as Markdown.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| measurement | published | predicted | error | target |\n|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let digits = if r.measurement.published < 1000.0 {
            1
        } else {
            0
        };
        s += &format!(
            "| {} | {:.*} | {:.*} | {:+.1} % | ±{:.0} % |\n",
            r.measurement.label(),
            digits,
            r.measurement.published,
            digits,
            r.predicted,
            r.error * 100.0,
            r.measurement.tolerance() * 100.0
        );
    }
    s
}
