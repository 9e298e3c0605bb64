//! Queries derived from a scenario: where each class is served, the mean
//! workload shape, the longest prompt, the deployment, the GPU price.

use super::{Arrival, Scenario, ScenarioError, Slo, ValidScenario, bounds};
use crate::dist::Dist;
use crate::physics::Deployment;

impl Scenario {
    /// Make the arrival window `seconds` long, raising the run's time limit
    /// to cover it (a limit inside the window would leave arrivals out):
    /// the one way code changes a scenario's duration.
    pub fn set_duration(&mut self, seconds: f64) {
        self.duration_s = seconds;
        if self.limits.max_sim_time_s < seconds {
            self.limits.max_sim_time_s = seconds;
        }
    }

    /// The targets class `i`'s requests are judged by: its own, else the
    /// scenario's (the scenario's for a class that does not exist).
    pub fn class_slo(&self, i: usize) -> &Slo {
        self.workload
            .classes
            .get(i)
            .and_then(|k| k.slo.as_ref())
            .unwrap_or(&self.slo)
    }

    /// Where a class is served when no routing rule decides: `Some((tier
    /// index, service))` for an API tier, `None` for a self-hosted pool.
    pub fn backend_of(&self, class: &str) -> Option<(usize, crate::api::Service)> {
        match self.class_target(class) {
            super::Target::Tier(i, service) => Some((i, service)),
            super::Target::Pool(_) => None,
        }
    }

    /// True when some class can reach a self-hosted pool (which is then billed).
    pub fn uses_fleet(&self) -> bool {
        (0..self.pool_count()).any(|i| self.pool_used(i))
    }

    /// The workload's mean shape: generated tokens per task (each call capped at
    /// its `max_tokens`, agent chains counted whole) and the mean context of a
    /// decoding sequence (prompt + half the answer). From the trace when the
    /// arrivals replay one, else from the class mix.
    pub fn mean_tokens(&self) -> (f64, f64) {
        let w = &self.workload;
        if let Arrival::Trace { requests, .. } = &w.arrival {
            let t = requests.stats();
            let n = t.requests.max(1) as f64;
            let (input, out) = (t.input_tokens as f64, t.output_tokens as f64);
            return (out / n, (input + out / 2.0) / n);
        }
        let total = w.classes.iter().map(|k| k.share).sum::<f64>().max(1e-12);
        let (mut out, mut ctx) = (0.0, 0.0);
        for k in &w.classes {
            // Hidden reasoning tokens are generated (and billed) like any.
            let o = k.mean_generated_tokens();
            out += k.share * o * f64::from(k.calls_per_task);
            ctx += k.share * (k.mean_input_tokens() + o / 2.0);
        }
        (out / total, ctx / total)
    }

    /// Tasks per second offered over the arrival window, on average, and at
    /// its peak; None for closed-loop users, whose rate depends on the fleet.
    pub fn offered_tasks_per_s(&self) -> Option<(f64, f64)> {
        let d = self.duration_s.max(1e-9);
        match &self.workload.arrival {
            Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => {
                Some((*rate_per_s, *rate_per_s))
            }
            Arrival::Trace { requests, .. } => {
                let n = requests.count() as f64;
                Some((n / d, n / d))
            }
            a => a.tasks_by(d).map(|(area, peak)| (area / d, peak)),
        }
    }

    /// The most calls any class's task makes (1 for single calls).
    pub fn max_calls_per_task(&self) -> f64 {
        self.workload
            .classes
            .iter()
            .map(|k| f64::from(k.calls_per_task))
            .fold(1.0, f64::max)
    }

    /// Today's load at its peak, tasks/s: the open-loop peak rate, or for
    /// closed-loop users the most users over their mean think time (each
    /// sends at most one task per think time). The one definition the
    /// planner, the headroom search and the page's curve start from.
    pub fn peak_tasks_per_s(&self) -> f64 {
        match (&self.workload.arrival, self.offered_tasks_per_s()) {
            (_, Some((_, peak))) => peak,
            (
                Arrival::ClosedLoop {
                    users,
                    think_time_s,
                },
                None,
            ) => {
                f64::from(users.iter().map(|u| u.users).max().unwrap_or(0))
                    / think_time_s.mean().max(1e-3)
            }
            _ => 0.0,
        }
    }

    /// The shortest prompt the workload can send (at least one token).
    pub fn min_input_tokens(&self) -> u32 {
        match &self.workload.arrival {
            Arrival::Trace { requests, .. } => {
                let t = requests.stats();
                (t.requests > 0).then_some(t.min_input)
            }
            _ => self
                .workload
                .classes
                .iter()
                .map(|k| {
                    libm::round(k.input_tokens.lower_bound()).clamp(1.0, f64::from(bounds::TOKENS))
                        as u32
                })
                .min(),
        }
        .unwrap_or(1)
        .max(1)
    }

    /// The longest prompt the workload can send, if bounded.
    pub fn max_input_tokens(&self) -> Option<u32> {
        match &self.workload.arrival {
            Arrival::Trace { requests, .. } => {
                let t = requests.stats();
                (t.requests > 0).then_some(t.max_input)
            }
            _ => self
                .workload
                .classes
                .iter()
                .map(|k| {
                    k.input_tokens
                        .upper_bound()
                        .map(|u| libm::round(u).clamp(1.0, f64::from(bounds::TOKENS)) as u32)
                })
                .try_fold(0u32, |m, u| u.map(|u| m.max(u))),
        }
    }

    /// The first pool's replica: its hardware, model and memory settings.
    pub fn deployment(&self) -> Deployment {
        self.deployment_for(&self.serving)
    }

    /// A replica of pool `s` (one of [`Self::all_pools`]) serving this
    /// workload: its hardware, model and memory settings.
    pub fn deployment_for(&self, s: &super::Serving) -> Deployment {
        let max_input = self.max_input_tokens().unwrap_or(8192);
        Deployment {
            gpu: s.gpu,
            tp: s.gpus_per_replica,
            model: s.model,
            weights: s.weights,
            kv: s.kv_cache,
            memory_utilisation: s.gpu_memory_utilisation,
            max_batched_tokens: s.batching.max_batched_tokens(max_input).min(65_536),
            max_seqs: s.batching.max_seqs(),
            profile: s.profile(),
            expert_parallel: s.expert_parallel,
            draft: s.speculative.map(|sp| {
                let p = self.proposer_deployment(s, &sp);
                let dims = sp.proposer(&s.model);
                // A head shares the target's embeddings and output head.
                let shared = match sp.method {
                    super::SpeculativeMethod::Draft { .. } => 0.0,
                    _ => {
                        f64::from(dims.vocab)
                            * f64::from(dims.hidden)
                            * if dims.tied_embeddings { 1.0 } else { 2.0 }
                            * 2.0
                    }
                };
                crate::physics::DraftMemory {
                    weight_bytes: (p.weight_bytes() - shared).max(0.0),
                    kv_bytes_per_token: dims.kv_bytes_per_token(s.kv_cache),
                }
            }),
        }
    }

    /// The proposer of pool `s`'s speculative decoding as a deployment of
    /// its own on the pool's GPUs (its step model times the draft passes).
    pub fn proposer_deployment(&self, s: &super::Serving, sp: &super::Speculative) -> Deployment {
        Deployment {
            model: crate::physics::Model::Custom(sp.proposer(&s.model)),
            draft: None,
            ..self.deployment_for(&super::Serving {
                speculative: None,
                ..s.clone()
            })
        }
    }

    /// Price of one GPU-hour in the first pool.
    pub fn usd_per_gpu_hour(&self) -> f64 {
        self.serving.usd_per_gpu_hour()
    }

    /// Parse a scenario from JSON and validate it; every error names the
    /// field (see `parse`).
    pub fn from_json(json: &str) -> Result<ValidScenario, ScenarioError> {
        super::parse::from_json(json)
    }
}

impl super::Serving {
    /// Whether the fleet caches prompt prefixes: asked for (or the software's
    /// default), under iteration-level batching with physics timing.
    pub fn caches_prefixes(&self) -> bool {
        matches!(
            self.batching,
            super::Batching::Continuous { .. } | super::Batching::ChunkedPrefill { .. }
        ) && matches!(self.service, super::ServiceModel::Physics)
            && self.prefix_caching_setting()
    }

    /// The prefix-caching switch as set, or the serving software's default
    /// (vLLM's on, TensorRT-LLM's off): the one place the default is read.
    pub fn prefix_caching_setting(&self) -> bool {
        self.prefix_caching
            .unwrap_or_else(|| self.profile().prefix_caching)
    }

    /// Whether the scheduler forms each pass while the one before it runs:
    /// the scenario's choice, else the profile's default.
    pub fn async_scheduling_setting(&self) -> bool {
        self.async_scheduling
            .unwrap_or_else(|| self.profile().async_scheduling)
    }

    /// Whether the profile in effect models async scheduling (vLLM's and a
    /// fitted profile's serving parts do; TensorRT-LLM's tables do not).
    pub fn models_async_scheduling(&self) -> bool {
        matches!(self.profile().timing, crate::physics::Timing::Serving(_))
    }

    /// The profile in effect (how passes are timed and KV sized): the
    /// user's fitted one when given, else the serving software's.
    pub fn profile(&self) -> crate::physics::Profile {
        let profile = self
            .fitted_profile
            .as_ref()
            .map_or_else(|| self.software.profile_on(&self.gpu), |p| p.profile());
        match (self.step_time_scale, self.prefill_time_scale) {
            (None, None) => profile,
            (k, p) => profile.scaled(k.unwrap_or(1.0), p.unwrap_or(1.0)),
        }
    }

    /// The profile in effect, in words: its name, where its constants come
    /// from, and how far to trust it for this fleet under `tokens_per_s`
    /// offered per replica. The one statement the page and the CLI print.
    pub fn profile_statement(&self, tokens_per_s: f64) -> ProfileStatement {
        let (gpu, model) = (self.gpu, self.model);
        match &self.fitted_profile {
            Some(p) => ProfileStatement {
                name: format!("{} (your own)", p.name),
                source: format!("fitted to {}", p.validated.source),
                trust: p.trust(gpu, model, self.gpus_per_replica, tokens_per_s),
            },
            None => ProfileStatement {
                name: self.software.name().to_owned(),
                source: self.software.calibration().to_owned(),
                trust: self.software.trust(gpu, &model.dims()),
            },
        }
    }
}

/// The serving profile in effect, in words (see [`super::Serving::profile_statement`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileStatement {
    /// Its name (`vLLM`, or the user's profile's).
    pub name: String,
    /// Where its constants come from.
    pub source: String,
    /// How far to trust its numbers here.
    pub trust: String,
}

impl super::Scenario {
    /// Tokens (prompt and generated) offered per second per replica at the
    /// peak: the load a profile's validated range is read against.
    pub fn offered_tokens_per_s_per_replica(&self) -> f64 {
        let w = &self.workload;
        let per_task = if let Arrival::Trace { requests, .. } = &w.arrival {
            let t = requests.stats();
            (t.input_tokens + t.output_tokens) as f64 / t.requests.max(1) as f64
        } else {
            let total = w.classes.iter().map(|k| k.share).sum::<f64>().max(1e-12);
            w.classes
                .iter()
                .map(|k| {
                    k.share
                        * f64::from(k.calls_per_task)
                        * (k.mean_input_tokens() + k.mean_generated_tokens())
                })
                .sum::<f64>()
                / total
        };
        self.peak_tasks_per_s() * per_task / f64::from(self.serving.replicas.max(1))
    }
}

impl super::RequestClass {
    /// Tokens a call generates on average, as the engine draws them: its
    /// answer (clamped to `[1, max_tokens]`) and any hidden reasoning before
    /// it (clamped to `[1, bounds::TOKENS]`), which take decode steps and KV
    /// like any token and are billed as output.
    pub fn mean_generated_tokens(&self) -> f64 {
        self.output_tokens
            .clamped_mean(1.0, f64::from(self.max_tokens.max(1)))
            + self.mean_reasoning_tokens()
    }

    /// Hidden reasoning tokens a call generates on average before its
    /// answer, as the engine draws them (0 for a model that does not
    /// reason). A provider reserves them on top of `max_tokens`.
    pub fn mean_reasoning_tokens(&self) -> f64 {
        let tokens = f64::from(super::bounds::TOKENS);
        self.reasoning_tokens
            .as_ref()
            .map_or(0.0, |r| r.clamped_mean(1.0, tokens))
    }

    /// The question's tokens on average, as the engine draws them (clamped to
    /// `[1, bounds::TOKENS]`; a shared prompt or history comes on top).
    pub fn mean_input_tokens(&self) -> f64 {
        self.input_tokens
            .clamped_mean(1.0, f64::from(super::bounds::TOKENS))
    }

    /// A class of the whole traffic (share 1) making one call per task, with
    /// no shared prompt, conversation, timeout or reasoning: set those on the
    /// result, or with struct-update syntax.
    pub fn new(name: &str, input_tokens: Dist, output_tokens: Dist, max_tokens: u32) -> Self {
        Self {
            name: name.to_owned(),
            share: 1.0,
            input_tokens,
            output_tokens,
            max_tokens,
            calls_per_task: 1,
            shared_prefix: None,
            conversation: None,
            timeout_s: None,
            reasoning_tokens: None,
            priority: None,
            slo: None,
        }
    }
}

impl Arrival {
    /// The tasks expected to arrive by `t` seconds (the schedule's or the
    /// stages' area up to `t`, or the trace's requests by then), and the
    /// peak rate before `t`; None for closed-loop users.
    fn tasks_by(&self, d: f64) -> Option<(f64, f64)> {
        // (`d` is the time the area runs to: the window's end or earlier.)
        match self {
            Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => {
                Some((rate_per_s * d, *rate_per_s))
            }
            Arrival::Stages { stages } => {
                let (mut t, mut area, mut peak) = (0.0, 0.0, 0.0_f64);
                for st in stages {
                    let len = st.duration_s.min(d - t).max(0.0);
                    area += st.rate_per_s * len;
                    t += len;
                    peak = peak.max(st.rate_per_s);
                }
                let last = stages.last().map_or(0.0, |st| st.rate_per_s);
                area += last * (d - t).max(0.0);
                Some((area, peak))
            }
            Arrival::Schedule { points, .. } => {
                // Piecewise linear, holding its last value: trapezoids up to d.
                let mut area = 0.0;
                let mut peak = 0.0_f64;
                for pair in points.windows(2) {
                    let (a, b) = (&pair[0], &pair[1]);
                    let (t0, t1) = (a.at_s.min(d), b.at_s.min(d));
                    if t1 > t0 {
                        let r1 = a.rate_per_s
                            + (b.rate_per_s - a.rate_per_s) * (t1 - a.at_s)
                                / (b.at_s - a.at_s).max(1e-12);
                        area += (a.rate_per_s + r1) / 2.0 * (t1 - t0);
                    }
                    if a.at_s < d {
                        peak = peak.max(a.rate_per_s);
                    }
                }
                if let Some(last) = points.last() {
                    area += last.rate_per_s * (d - last.at_s.min(d));
                    if last.at_s < d {
                        peak = peak.max(last.rate_per_s);
                    }
                }
                Some((area, peak))
            }
            Arrival::Trace { requests, .. } => Some((requests.arrived_by(d), 0.0)),
            Arrival::ClosedLoop { .. } => None,
        }
    }

    /// The share of a `duration_s` arrival window's tasks a run stopped at
    /// `t` seconds left out: those expected after `t` (user-seconds for closed-loop
    /// users), 0 once the window is over.
    pub fn left_out(&self, t: f64, duration_s: f64) -> f64 {
        let d = duration_s;
        if t >= d {
            return 0.0;
        }
        let (by, all) = match self {
            Arrival::ClosedLoop { users, .. } => {
                // User-seconds over [0, x]: each step's users until the next.
                let seconds = |x: f64| {
                    let mut area = 0.0;
                    for (i, u) in users.iter().enumerate() {
                        let end = users.get(i + 1).map_or(x, |n| n.at_s.min(x));
                        area += f64::from(u.users) * (end - u.at_s.min(x)).max(0.0);
                    }
                    area
                };
                (seconds(t), seconds(d))
            }
            _ => (
                self.tasks_by(t).map_or(0.0, |a| a.0),
                self.tasks_by(d).map_or(0.0, |a| a.0),
            ),
        };
        if all > 0.0 {
            (1.0 - by / all).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}
