//! The discrete-event engine: arrivals, routing, batch formation, forward passes,
//! KV-cache memory and metrics, driven by one closed [`Event`] enum handled in
//! [`Simulation::handle`].
//!
//! Performance shape (see ARCHITECTURE.md): a forward pass costs O(log n) in the
//! number of running sequences, not O(n). Decoding sequences are never touched per
//! step: each one's context is `c0 + (decode_step − k0)`, the batch's total context
//! is kept as a running sum, sequences that need a new KV block this step are
//! counted by the phase of their context modulo the block size, and finishing
//! sequences are popped from a heap keyed by the decode step of their last token.

use crate::dist::{Sampler, gamma};
use crate::event::EventQueue;
use crate::metrics::{LatencyRecorder, Windows};
use crate::physics::{BatchShape, Efficiency, KV_BLOCK_TOKENS, StepModel};
use crate::report::{
    ClassReport, Cost, Counts, Distribution, HOURS_PER_MONTH, PhysicalLimit, REPORT_VERSION,
    Report, Snapshot, Throughput, Utilisation,
};
use crate::rng::{Stream, StreamId};
use crate::scenario::{Arrival, Batching, Router, Scenario, ScenarioError, ServiceModel};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

mod provider;
use provider::{ApiState, NO_TIER};

const NS_PER_S: f64 = 1e9;
const BLOCK: u64 = KV_BLOCK_TOKENS as u64;
const NONE: u32 = u32::MAX;

/// Everything that can happen, handled in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The open-loop arrival process produces its next task.
    Arrival,
    /// The next request of a replayed trace arrives.
    TraceArrival { index: u32 },
    /// A closed-loop user finishes thinking and sends a task.
    UserWakes { user: u32 },
    /// The closed-loop user count changes to the schedule's step `step`.
    UsersChange { step: u32 },
    /// A replica's forward pass (or abstract service period) ends.
    PassDone { replica: u32 },
    /// A client retries a request the provider refused.
    ApiRetry { req: u32 },
    /// A hosted API finishes a request.
    ApiDone { req: u32 },
    /// The client's queue for a tier may release its head (ignored if stale).
    ClientRelease { tier: u16, epoch: u32 },
    /// A static batch's maximum wait expires on a replica (ignored if `epoch`
    /// is no longer the replica's: the batch it was armed for already left).
    BatchTimer { replica: u32, epoch: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Free,
    Waiting,
    Prefilling,
    Decoding,
    /// In a static batch or an abstract service period.
    Batched,
}

#[derive(Clone, Debug)]
struct Request {
    task: u32,
    class: u16,
    input_tokens: u32,
    output_tokens: u32,
    arrival_ns: u64,
    admitted_ns: u64,
    first_token_ns: u64,
    replica: u32,
    /// Tokens the next prefill must process (the prompt, or prompt + generated after a preemption).
    prefill_target: u32,
    prefilled: u32,
    generated: u32,
    /// Context when decoding began, and the replica's decode step then.
    c0: u64,
    k0: u64,
    admit_order: u64,
    /// Bumped on preemption so stale finish-heap entries are skipped.
    epoch: u32,
    phase: Phase,
    /// API tier serving the request (`NO_TIER` when self-hosted).
    tier: u16,
    /// Sent to the tier's fast variant.
    fast: bool,
    /// 429s received so far.
    attempts: u32,
    /// Output tokens the rate limiter reserved at admission.
    output_reserved: u64,
}

#[derive(Clone, Debug)]
struct Task {
    class: u16,
    start_ns: u64,
    calls_left: u32,
    user: u32,
}

/// A slab of values with a free list, so memory tracks the work in flight, not
/// the work done.
#[derive(Clone, Debug)]
struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    fn insert(&mut self, v: T) -> u32 {
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = v;
            i
        } else {
            self.items.push(v);
            (self.items.len() - 1) as u32
        }
    }
    fn remove(&mut self, i: u32) {
        self.free.push(i);
    }
}

/// What the pass in progress on a replica will do when it ends.
#[derive(Clone, Debug, Default)]
struct Pass {
    start_ns: u64,
    /// Decoding sequences advanced by this pass (0 when decodes are paused).
    decodes: u64,
    /// Prompt chunks: (request, tokens).
    chunks: Vec<(u32, u32)>,
    /// Static batches: the pass is the batch's prefill (true) or a decode step.
    static_prefill: bool,
}

#[derive(Clone, Debug)]
struct StaticBatch {
    /// Members, ascending by output tokens.
    members: Vec<u32>,
    next_to_finish: usize,
    decode_steps_done: u64,
    decode_steps_total: u64,
    context: u64,
    blocks: u64,
}

#[derive(Clone, Debug, Default)]
struct Replica {
    busy: bool,
    pass: Pass,
    decode_step: u64,
    /// Decoding sequences by admission order (newest last, preempted first).
    decoding: BTreeSet<(u64, u32)>,
    /// (finish step, admission order, request, epoch), earliest first.
    finishing: BinaryHeap<Reverse<(u64, u64, u32, u32)>>,
    context_sum: u64,
    /// Decoding sequences counted by (c0 − k0) mod BLOCK.
    phase: [u64; KV_BLOCK_TOKENS as usize],
    prefilling: VecDeque<u32>,
    kv_used: u64,
    timer_armed: bool,
    timer_epoch: u32,
    static_batch: Option<StaticBatch>,
    abstract_members: Vec<u32>,
    /// Requests routed here and not finished (for the router).
    outstanding: u64,
    /// Requests admitted and not finished.
    running: u64,
}

#[derive(Clone, Debug, Default)]
struct ClassMetrics {
    completed: u64,
    rejected: u64,
    failed: u64,
    api_usd: f64,
    slo_met: u64,
    ttft: LatencyRecorder,
    tpot: LatencyRecorder,
    e2e: LatencyRecorder,
    wait: LatencyRecorder,
    task: LatencyRecorder,
}

impl ClassMetrics {
    fn report(&self, name: &str, month_factor: f64) -> ClassReport {
        ClassReport {
            name: name.to_owned(),
            api_usd_per_month: self.api_usd * month_factor,
            completed: self.completed,
            rejected: self.rejected,
            failed: self.failed,
            api_usd: self.api_usd,
            ttft: self.ttft.stats(),
            tpot: self.tpot.stats(),
            e2e: self.e2e.stats(),
            queue_wait: self.wait.stats(),
            task_latency: self.task.stats(),
            slo_met_fraction: (self.completed > 0)
                .then(|| self.slo_met as f64 / self.completed as f64),
        }
    }
}

struct ClassSpec {
    name: String,
    input: Sampler,
    output: Sampler,
    max_tokens: u32,
    calls: u32,
}

enum Policy {
    /// Continuous batching; `chunk` is `None` without chunked prefill.
    Iteration {
        max_seqs: u64,
        budget: u64,
        chunk: Option<u64>,
    },
    Static {
        max_batch: u64,
        max_wait_ns: u64,
    },
}

enum Service {
    Physics(StepModel),
    Abstract {
        time: Sampler,
        join_in_progress: bool,
    },
}

/// A forward pass, as recorded for the teaching timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PassRecord {
    /// Replica index.
    pub replica: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// Prompt tokens processed.
    pub prefill_tokens: u64,
    /// Sequences whose prompt (or a chunk of it) ran in the pass.
    pub prefill_seqs: u32,
    /// Sequences that generated a token.
    pub decode_seqs: u32,
    /// Requests waiting for admission when the pass started.
    pub waiting: u32,
}

/// An arrival, as recorded for tests and the teaching timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArrivalRecord {
    /// Time, ns.
    pub at_ns: u64,
    /// Request class.
    pub class: u16,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// Tokens to generate.
    pub output_tokens: u32,
}

/// Bounded recording of the first passes and arrivals of a run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceLog {
    /// Largest number of entries kept in each list.
    pub capacity: usize,
    /// The first forward passes.
    pub passes: Vec<PassRecord>,
    /// The first arrivals.
    pub arrivals: Vec<ArrivalRecord>,
}

/// A run in progress: create it, advance it in slices, read snapshots, and take
/// the report at any time.
pub struct Simulation {
    // Configuration, fixed for the run.
    duration_ns: u64,
    max_events: u64,
    max_sim_ns: u64,
    classes: Vec<ClassSpec>,
    class_cdf: Vec<f64>,
    arrival: Arrival,
    think: Option<Sampler>,
    policy: Policy,
    service: Service,
    router: Router,
    max_queue: u64,
    kv_blocks: u64,
    gpus: u32,
    usd_per_gpu_hour: f64,
    slo_ttft_ns: u64,
    slo_tpot_ns: u64,

    // State.
    now: u64,
    events: EventQueue<Event>,
    processed: u64,
    arrivals_rng: Stream,
    lengths_rng: Stream,
    jitter_rng: Stream,
    think_rng: Stream,
    requests: Slab<Request>,
    tasks: Slab<Task>,
    replicas: Vec<Replica>,
    queues: Vec<VecDeque<u32>>,
    rr_next: u32,
    admit_counter: u64,
    /// Closed loop: target user count, and per user whether it is active and
    /// whether it has a task or a wake-up pending.
    target_users: u32,
    user_active: Vec<bool>,
    user_pending: Vec<bool>,
    stopped: Option<String>,
    /// The replica whose finished pass is being applied: it takes no joins and
    /// starts nothing until the pass is fully accounted for.
    finishing: Option<usize>,
    /// KV blocks kept free at admission so decodes rarely need to preempt (vLLM's 1 % watermark).
    kv_watermark: u64,

    // Measurements.
    arrived: u64,
    completed: u64,
    rejected: u64,
    tasks_completed: u64,
    input_tokens_done: u64,
    output_tokens_done: u64,
    waiting: u64,
    overall: ClassMetrics,
    per_class: Vec<ClassMetrics>,
    windows: Windows,
    busy_ns: u128,
    batch_area: f64,
    kv_area: f64,
    kv_peak: f64,
    flops: f64,
    bytes: f64,
    passes: u64,
    preemptions: u64,
    last_event_ns: u64,
    rejected_too_long: u64,
    trace: Option<TraceLog>,
    /// Hosted API tiers and the client in front of them.
    api: Option<ApiState>,
    /// Backend of each class: an API tier (and whether fast), or the fleet.
    class_backend: Vec<Option<(u16, bool)>>,
    /// Whether any class uses the self-hosted fleet (only then is it billed).
    fleet_used: bool,
    /// Requests that reached the user as errors.
    failed: u64,
    /// The first request too large for its tier's limits, for the warning.
    too_large_example: Option<String>,
    /// Per-replica roofline bound: (batch, context, output tokens/s).
    limit: Option<(u32, u32, f64)>,
}

fn secs_to_ns(s: f64) -> u64 {
    let ns = s * NS_PER_S;
    if ns <= 0.0 {
        0
    } else if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        ns as u64
    }
}

fn blocks_for(tokens: u64) -> u64 {
    tokens.div_ceil(BLOCK)
}

/// Run a scenario to completion (or to a limit) and return its report.
pub fn run(scenario: &Scenario) -> Result<Report, ScenarioError> {
    let mut sim = Simulation::new(scenario)?;
    sim.advance_until(u64::MAX);
    Ok(sim.report())
}

impl Simulation {
    /// Validate the scenario and set up a run at time 0.
    pub fn new(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        Self::with_efficiency(scenario, Efficiency::CALIBRATED)
    }

    /// As [`Self::new`], with other hardware efficiencies (for calibration).
    pub fn with_efficiency(
        scenario: &Scenario,
        efficiency: Efficiency,
    ) -> Result<Simulation, ScenarioError> {
        scenario.validate()?;
        let s = &scenario.serving;
        let classes: Vec<ClassSpec> = scenario
            .workload
            .classes
            .iter()
            .map(|k| ClassSpec {
                name: k.name.clone(),
                input: k.input_tokens.sampler(),
                output: k.output_tokens.sampler(),
                max_tokens: k.max_tokens,
                calls: k.calls_per_task,
            })
            .collect();
        let total_share: f64 = scenario.workload.classes.iter().map(|k| k.share).sum();
        let mut acc = 0.0;
        let class_cdf = scenario
            .workload
            .classes
            .iter()
            .map(|k| {
                acc += k.share;
                acc / total_share
            })
            .collect();

        let policy = match s.batching {
            Batching::None => Policy::Iteration {
                max_seqs: 1,
                budget: u64::MAX,
                chunk: None,
            },
            Batching::Static {
                max_batch,
                max_wait_ms,
            } => Policy::Static {
                max_batch: u64::from(max_batch),
                max_wait_ns: secs_to_ns(max_wait_ms / 1000.0),
            },
            Batching::Continuous {
                max_num_seqs,
                max_num_batched_tokens,
            } => Policy::Iteration {
                max_seqs: u64::from(max_num_seqs),
                budget: u64::from(max_num_batched_tokens),
                chunk: None,
            },
            Batching::ChunkedPrefill {
                max_num_seqs,
                max_num_batched_tokens,
                chunk_tokens,
            } => Policy::Iteration {
                max_seqs: u64::from(max_num_seqs),
                budget: u64::from(max_num_batched_tokens),
                chunk: Some(u64::from(chunk_tokens)),
            },
        };
        let deployment = scenario.deployment();
        let (service, kv_blocks) = match &s.service {
            ServiceModel::Physics => {
                let blocks = deployment.kv_capacity_blocks().map_err(|e| ScenarioError {
                    problems: vec![format!("serving: {e}")],
                })?;
                (Service::Physics(deployment.step_model(efficiency)), blocks)
            }
            ServiceModel::Abstract {
                time_s,
                join_in_progress,
            } => (
                Service::Abstract {
                    time: time_s.sampler(),
                    join_in_progress: *join_in_progress,
                },
                u64::MAX / 4,
            ),
        };
        let think = match &scenario.workload.arrival {
            Arrival::ClosedLoop { think_time_s, .. } => Some(think_time_s.sampler()),
            _ => None,
        };
        let replicas = s.replicas as usize;
        let central = s.router == Router::CentralQueue;
        let duration_ns = secs_to_ns(scenario.duration_s);
        let seed = scenario.seed;
        let mut sim = Simulation {
            duration_ns,
            max_events: scenario.limits.max_events,
            max_sim_ns: secs_to_ns(scenario.limits.max_sim_time_s),
            classes,
            class_cdf,
            arrival: scenario.workload.arrival.clone(),
            think,
            policy,
            service,
            router: s.router,
            max_queue: u64::from(s.max_queue_per_replica)
                * if central { u64::from(s.replicas) } else { 1 },
            kv_blocks,
            gpus: s.replicas * s.gpus_per_replica,
            usd_per_gpu_hour: scenario.usd_per_gpu_hour(),
            slo_ttft_ns: secs_to_ns(scenario.slo.ttft_ms / 1000.0),
            slo_tpot_ns: secs_to_ns(scenario.slo.tpot_ms / 1000.0),
            now: 0,
            events: EventQueue::default(),
            processed: 0,
            arrivals_rng: Stream::new(seed, StreamId::ARRIVALS),
            lengths_rng: Stream::new(seed, StreamId::LENGTHS),
            jitter_rng: Stream::new(seed, StreamId::JITTER),
            think_rng: Stream::new(seed, StreamId::THINK),
            requests: Slab::default(),
            tasks: Slab::default(),
            replicas: vec![Replica::default(); replicas],
            queues: vec![VecDeque::new(); if central { 1 } else { replicas }],
            rr_next: 0,
            admit_counter: 0,
            target_users: 0,
            user_active: Vec::new(),
            user_pending: Vec::new(),
            stopped: None,
            finishing: None,
            kv_watermark: if kv_blocks >= 100 { kv_blocks / 100 } else { 0 },
            arrived: 0,
            completed: 0,
            rejected: 0,
            tasks_completed: 0,
            input_tokens_done: 0,
            output_tokens_done: 0,
            waiting: 0,
            overall: ClassMetrics::default(),
            per_class: (0..scenario.workload.classes.len())
                .map(|_| ClassMetrics::default())
                .collect(),
            windows: Windows::new(duration_ns / 400),
            busy_ns: 0,
            batch_area: 0.0,
            kv_area: 0.0,
            kv_peak: 0.0,
            flops: 0.0,
            bytes: 0.0,
            passes: 0,
            preemptions: 0,
            last_event_ns: 0,
            rejected_too_long: 0,
            trace: None,
            api: scenario.api.as_ref().map(|a| ApiState::new(a, seed)),
            class_backend: provider::class_backends(scenario),
            fleet_used: scenario.uses_fleet(),
            failed: 0,
            too_large_example: None,
            limit: None,
        };
        if let ServiceModel::Physics = s.service {
            sim.limit = Some(physical_limit(scenario, kv_blocks));
        }
        match &scenario.workload.arrival {
            Arrival::Poisson { .. } | Arrival::Gamma { .. } | Arrival::Schedule { .. } => {
                sim.schedule_next_arrival(0);
            }
            Arrival::Trace { requests } => {
                if let Some(first) = requests.first() {
                    sim.events
                        .push(secs_to_ns(first.at_s), Event::TraceArrival { index: 0 });
                }
            }
            Arrival::ClosedLoop { .. } => sim.events.push(0, Event::UsersChange { step: 0 }),
        }
        Ok(sim)
    }

    /// Process every event up to and including time `t_ns` (or until a limit).
    /// Returns true when the run is finished.
    pub fn advance_until(&mut self, t_ns: u64) -> bool {
        while self.step_if(|next| next <= t_ns) {}
        self.is_finished()
    }

    /// Process at most `n` events. Returns true when the run is finished.
    pub fn advance_events(&mut self, n: u64) -> bool {
        for _ in 0..n {
            if !self.step_if(|_| true) {
                break;
            }
        }
        self.is_finished()
    }

    /// True when no work is left or a limit stopped the run.
    pub fn is_finished(&self) -> bool {
        self.stopped.is_some() || self.events.is_empty()
    }

    /// Record the first `capacity` passes and arrivals (for the teaching timeline
    /// and tests). Call before advancing.
    pub fn record_trace(&mut self, capacity: usize) {
        self.trace = Some(TraceLog {
            capacity,
            ..TraceLog::default()
        });
    }

    /// What was recorded by [`Self::record_trace`].
    pub fn trace(&self) -> Option<&TraceLog> {
        self.trace.as_ref()
    }

    /// Simulated time now, ns.
    pub fn now_ns(&self) -> u64 {
        self.now
    }

    fn step_if(&mut self, accept: impl Fn(u64) -> bool) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        // A batch timer whose batch already left is dropped unseen: it must not
        // move the clock, count as an event or trip a limit.
        loop {
            let stale = match self.events.peek() {
                Some((_, Event::BatchTimer { replica, epoch })) => {
                    self.replicas[*replica as usize].timer_epoch != *epoch
                }
                Some((_, Event::ClientRelease { tier, epoch })) => self
                    .api
                    .as_ref()
                    .is_some_and(|a| a.tiers[*tier as usize].release_epoch != *epoch),
                _ => false,
            };
            if !stale {
                break;
            }
            self.events.pop();
        }
        let Some(next) = self.events.peek_time() else {
            return false;
        };
        if !accept(next) {
            return false;
        }
        if self.processed >= self.max_events {
            self.stopped = Some(format!(
                "stopped after limits.max_events = {} events at {:.1} s of simulated time; the numbers cover the partial run",
                self.max_events,
                self.now as f64 / NS_PER_S
            ));
            return false;
        }
        if next > self.max_sim_ns {
            self.stopped = Some(format!(
                "stopped at limits.max_sim_time_s = {} s with work still in flight; the numbers cover the partial run",
                self.max_sim_ns as f64 / NS_PER_S
            ));
            return false;
        }
        let Some((t, event)) = self.events.pop() else {
            return false;
        };
        self.processed += 1;
        self.advance_clock(t);
        self.handle(event);
        true
    }

    fn advance_clock(&mut self, t: u64) {
        let in_flight = self.arrived - self.completed - self.rejected - self.failed;
        self.windows.levels(self.now, t, self.waiting, in_flight);
        self.now = t;
        self.last_event_ns = t;
    }

    /// The one place events are handled.
    fn handle(&mut self, event: Event) {
        match event {
            Event::Arrival => {
                let class = self.draw_class();
                self.start_task(class, NONE, None);
                self.schedule_next_arrival(self.now);
            }
            Event::TraceArrival { index } => {
                let Arrival::Trace { requests } = &self.arrival else {
                    return;
                };
                let r = &requests[index as usize];
                let (class, tokens) = (r.class as u16, (r.input_tokens, r.output_tokens));
                if let Some(next) = requests.get(index as usize + 1) {
                    let at = secs_to_ns(next.at_s).max(self.now);
                    self.events
                        .push(at, Event::TraceArrival { index: index + 1 });
                }
                self.start_task(class, NONE, Some(tokens));
            }
            Event::UserWakes { user } => {
                self.user_pending[user as usize] = false;
                if self.user_active[user as usize] && self.now < self.duration_ns {
                    self.user_pending[user as usize] = true;
                    let class = self.draw_class();
                    self.start_task(class, user, None);
                }
            }
            Event::UsersChange { step } => self.change_users(step),
            Event::PassDone { replica } => self.finish_pass(replica as usize),
            Event::ApiRetry { req } => self.api_retry(req),
            Event::ApiDone { req } => self.api_done(req),
            Event::ClientRelease { tier, .. } => self.client_release(tier),
            Event::BatchTimer { replica, .. } => {
                let rep = &mut self.replicas[replica as usize];
                rep.timer_armed = false;
                rep.timer_epoch = rep.timer_epoch.wrapping_add(1);
                self.try_start(replica as usize);
            }
        }
    }

    // ----- arrivals -------------------------------------------------------------

    fn schedule_next_arrival(&mut self, from: u64) {
        let t = match &self.arrival {
            Arrival::Poisson { rate_per_s } => {
                from as f64 + self.arrivals_rng.exponential(NS_PER_S / rate_per_s)
            }
            Arrival::Gamma { rate_per_s, cv } => {
                let shape = 1.0 / (cv * cv);
                from as f64 + gamma(&mut self.arrivals_rng, shape, NS_PER_S / rate_per_s / shape)
            }
            Arrival::Schedule { points } => {
                // Thinning (Lewis–Shedler): candidates at the peak rate, each kept
                // with probability rate(t) / peak. Bounded by the arrival window.
                let peak = points.iter().map(|p| p.rate_per_s).fold(0.0, f64::max);
                let mut t = from as f64;
                loop {
                    t += self.arrivals_rng.exponential(NS_PER_S / peak);
                    if t >= self.duration_ns as f64 {
                        break;
                    }
                    let rate = schedule_rate(points, t / NS_PER_S);
                    if self.arrivals_rng.uniform() * peak < rate {
                        break;
                    }
                }
                t
            }
            _ => return,
        };
        if t < self.duration_ns as f64 {
            // Two arrivals never share an instant: time always moves forward by ≥ 1 ns.
            self.events.push(
                (t as u64).max(from + 1).min(self.duration_ns),
                Event::Arrival,
            );
        }
    }

    fn draw_class(&mut self) -> u16 {
        if self.classes.len() == 1 {
            return 0;
        }
        let u = self.lengths_rng.uniform();
        self.class_cdf
            .partition_point(|&c| c <= u)
            .min(self.classes.len() - 1) as u16
    }

    fn change_users(&mut self, step: u32) {
        let Arrival::ClosedLoop { users, .. } = &self.arrival else {
            return;
        };
        let target = users[step as usize].users;
        if let Some(next) = users.get(step as usize + 1) {
            self.events
                .push(secs_to_ns(next.at_s), Event::UsersChange { step: step + 1 });
        }
        let old = self.target_users;
        self.target_users = target;
        if self.user_active.len() < target as usize {
            self.user_active.resize(target as usize, false);
            self.user_pending.resize(target as usize, false);
        }
        for u in target..old {
            self.user_active[u as usize] = false;
        }
        for u in 0..target {
            if !self.user_active[u as usize] {
                self.user_active[u as usize] = true;
                if !self.user_pending[u as usize] {
                    // New users arrive spread over one think time, not all at once.
                    self.user_pending[u as usize] = true;
                    let think = self.draw_think();
                    self.events
                        .push(self.now + think, Event::UserWakes { user: u });
                }
            }
        }
    }

    fn draw_think(&mut self) -> u64 {
        match &self.think {
            Some(s) => secs_to_ns(s.sample(&mut self.think_rng)),
            None => 0,
        }
    }

    fn start_task(&mut self, class: u16, user: u32, tokens: Option<(u32, u32)>) {
        let calls = self.classes[class as usize].calls;
        let task = self.tasks.insert(Task {
            class,
            start_ns: self.now,
            calls_left: calls,
            user,
        });
        self.new_request(task, tokens);
    }

    fn new_request(&mut self, task: u32, tokens: Option<(u32, u32)>) {
        let class = self.tasks.items[task as usize].class;
        let spec = &self.classes[class as usize];
        let (input, output) = match tokens {
            Some(t) => t,
            None => {
                let i = spec
                    .input
                    .sample_tokens(&mut self.lengths_rng, crate::scenario::bounds::TOKENS);
                let o = spec
                    .output
                    .sample_tokens(&mut self.lengths_rng, spec.max_tokens);
                (i, o)
            }
        };
        let id = self.requests.insert(Request {
            task,
            class,
            input_tokens: input,
            output_tokens: output,
            arrival_ns: self.now,
            admitted_ns: u64::MAX,
            first_token_ns: u64::MAX,
            replica: NONE,
            prefill_target: input,
            prefilled: 0,
            generated: 0,
            c0: 0,
            k0: 0,
            admit_order: 0,
            epoch: 0,
            phase: Phase::Waiting,
            tier: NO_TIER,
            fast: false,
            attempts: 0,
            output_reserved: 0,
        });
        self.arrived += 1;
        self.windows.arrival(self.now);
        if let Some(t) = self
            .trace
            .as_mut()
            .filter(|t| t.arrivals.len() < t.capacity)
        {
            t.arrivals.push(ArrivalRecord {
                at_ns: self.now,
                class,
                input_tokens: input,
                output_tokens: output,
            });
        }
        match self.class_backend[class as usize] {
            Some((tier, fast)) => self.api_submit(id, tier, fast),
            None => self.route(id),
        }
    }

    // ----- routing ----------------------------------------------------------------

    fn route(&mut self, id: u32) {
        if self.router == Router::CentralQueue {
            if self.try_join_in_progress(id, None) {
                return;
            }
            if self.queues[0].len() as u64 >= self.max_queue {
                self.reject(id);
                return;
            }
            self.queues[0].push_back(id);
            self.waiting += 1;
            for r in 0..self.replicas.len() {
                if !self.replicas[r].busy {
                    self.try_start(r);
                }
                if self.queues[0].is_empty() {
                    break;
                }
            }
            return;
        }
        let n = self.replicas.len() as u32;
        let r = match self.router {
            Router::RoundRobin => {
                let r = self.rr_next;
                self.rr_next = (self.rr_next + 1) % n;
                r
            }
            Router::LeastOutstanding => (0..n)
                .min_by_key(|&r| (self.replicas[r as usize].outstanding, r))
                .unwrap_or(0),
            Router::JoinShortestQueue => (0..n)
                .min_by_key(|&r| {
                    (
                        self.queues[r as usize].len(),
                        self.replicas[r as usize].outstanding,
                        r,
                    )
                })
                .unwrap_or(0),
            Router::CentralQueue => 0,
        };
        let ri = r as usize;
        self.requests.items[id as usize].replica = r;
        if self.try_join_in_progress(id, Some(ri)) {
            return;
        }
        if self.queues[ri].len() as u64 >= self.max_queue {
            self.reject(id);
            return;
        }
        self.replicas[ri].outstanding += 1;
        self.queues[ri].push_back(id);
        self.waiting += 1;
        if !self.replicas[ri].busy {
            self.try_start(ri);
        }
    }

    /// Abstract bulk service with join-in-progress: an arrival enters a batch in
    /// service if it has room.
    fn try_join_in_progress(&mut self, id: u32, only: Option<usize>) -> bool {
        let Service::Abstract {
            join_in_progress: true,
            ..
        } = self.service
        else {
            return false;
        };
        let Policy::Static { max_batch, .. } = self.policy else {
            return false;
        };
        let candidates: Vec<usize> = match only {
            Some(r) => vec![r],
            None => (0..self.replicas.len()).collect(),
        };
        for r in candidates {
            let rep = &self.replicas[r];
            if rep.busy
                && self.finishing != Some(r)
                && (rep.abstract_members.len() as u64) < max_batch
            {
                let req = &mut self.requests.items[id as usize];
                req.replica = r as u32;
                req.admitted_ns = self.now;
                req.phase = Phase::Batched;
                let rep = &mut self.replicas[r];
                rep.abstract_members.push(id);
                rep.outstanding += 1;
                rep.running += 1;
                return true;
            }
        }
        false
    }

    fn queue_of(&self, replica: usize) -> usize {
        if self.router == Router::CentralQueue {
            0
        } else {
            replica
        }
    }

    // ----- pass formation ------------------------------------------------------

    /// If the replica is idle, start its next pass (or arm its batch timer).
    fn try_start(&mut self, r: usize) {
        if self.replicas[r].busy {
            return;
        }
        let started = match (&self.policy, &self.service) {
            (_, Service::Abstract { .. }) => self.start_abstract(r),
            (Policy::Static { .. }, Service::Physics(_)) => self.start_static(r),
            (Policy::Iteration { .. }, Service::Physics(_)) => self.start_iteration(r),
        };
        if let Some(duration) = started {
            let rep = &mut self.replicas[r];
            rep.busy = true;
            rep.pass.start_ns = self.now;
            self.events.push(
                self.now + duration.max(1),
                Event::PassDone { replica: r as u32 },
            );
        }
    }

    fn admit(&mut self, id: u32, r: usize) {
        let order = self.admit_counter;
        self.admit_counter += 1;
        let now = self.now;
        let req = &mut self.requests.items[id as usize];
        if req.admitted_ns == u64::MAX {
            req.admitted_ns = now;
        }
        if req.replica != r as u32 {
            // Central queue: the request now belongs to this replica.
            req.replica = r as u32;
            self.replicas[r].outstanding += 1;
        }
        req.admit_order = order;
        self.replicas[r].running += 1;
        self.waiting -= 1;
    }

    /// Static batching or abstract service: is a batch due now? Arms the timer if not.
    fn batch_due(&mut self, r: usize, max_batch: u64, max_wait_ns: u64) -> bool {
        let q = self.queue_of(r);
        let Some(&oldest) = self.queues[q].front() else {
            return false;
        };
        let waited = self.now - self.requests.items[oldest as usize].arrival_ns;
        let rep = &mut self.replicas[r];
        if self.queues[q].len() as u64 >= max_batch || waited >= max_wait_ns {
            // The batch leaves now: disarm any pending timer.
            if rep.timer_armed {
                rep.timer_armed = false;
                rep.timer_epoch = rep.timer_epoch.wrapping_add(1);
            }
            return true;
        }
        if !rep.timer_armed {
            rep.timer_armed = true;
            let at = self.requests.items[oldest as usize].arrival_ns + max_wait_ns;
            self.events.push(
                at,
                Event::BatchTimer {
                    replica: r as u32,
                    epoch: rep.timer_epoch,
                },
            );
        }
        false
    }

    fn start_abstract(&mut self, r: usize) -> Option<u64> {
        let (max_batch, max_wait_ns) = match self.policy {
            Policy::Static {
                max_batch,
                max_wait_ns,
            } => (max_batch, max_wait_ns),
            Policy::Iteration { .. } => (1, 0),
        };
        if !self.batch_due(r, max_batch, max_wait_ns) {
            return None;
        }
        let q = self.queue_of(r);
        let mut members = std::mem::take(&mut self.replicas[r].abstract_members);
        members.clear();
        while (members.len() as u64) < max_batch {
            let Some(id) = self.queues[q].pop_front() else {
                break;
            };
            self.admit(id, r);
            self.requests.items[id as usize].phase = Phase::Batched;
            members.push(id);
        }
        self.replicas[r].abstract_members = members;
        let Service::Abstract { time, .. } = &self.service else {
            return None;
        };
        Some(secs_to_ns(time.sample(&mut self.jitter_rng)))
    }

    fn start_static(&mut self, r: usize) -> Option<u64> {
        let Policy::Static {
            max_batch,
            max_wait_ns,
        } = self.policy
        else {
            return None;
        };
        if let Some(batch) = &self.replicas[r].static_batch {
            // Next decode step of the batch in progress: every slot computes,
            // finished members included (the padding static batching wastes).
            let size = batch.members.len() as u64;
            let shape = BatchShape {
                decode_seqs: size,
                decode_context_tokens: batch.context,
                ..BatchShape::default()
            };
            self.replicas[r].pass.static_prefill = false;
            return Some(self.time_pass(r, &shape, size));
        }
        if !self.batch_due(r, max_batch, max_wait_ns) {
            return None;
        }
        let q = self.queue_of(r);
        let mut members = Vec::new();
        let mut blocks = 0u64;
        let mut shape = BatchShape::default();
        while (members.len() as u64) < max_batch {
            let Some(&id) = self.queues[q].front() else {
                break;
            };
            let req = &self.requests.items[id as usize];
            // Static batches reserve prompt + max output up front: no preemption.
            let need = blocks_for(u64::from(req.input_tokens) + u64::from(req.output_tokens));
            if need > self.kv_blocks {
                self.queues[q].pop_front();
                self.waiting -= 1;
                self.reject_too_long(id);
                continue;
            }
            if self.replicas[r].kv_used + blocks + need > self.kv_blocks {
                break;
            }
            self.queues[q].pop_front();
            self.admit(id, r);
            blocks += need;
            let input = u64::from(self.requests.items[id as usize].input_tokens);
            shape.prefill_tokens += input;
            shape.prefill_attention_pairs += input * input / 2;
            self.requests.items[id as usize].phase = Phase::Batched;
            members.push(id);
        }
        if members.is_empty() {
            return None;
        }
        members.sort_by_key(|&id| (self.requests.items[id as usize].output_tokens, id));
        let longest = members.last().map_or(1, |&id| {
            u64::from(self.requests.items[id as usize].output_tokens)
        });
        let context = shape.prefill_tokens;
        self.replicas[r].kv_used += blocks;
        let size = members.len() as u64;
        self.replicas[r].static_batch = Some(StaticBatch {
            members,
            next_to_finish: 0,
            decode_steps_done: 0,
            decode_steps_total: longest - 1,
            context,
            blocks,
        });
        self.replicas[r].pass.static_prefill = true;
        Some(self.time_pass(r, &shape, size))
    }

    /// Continuous batching (with or without chunked prefill), and "none" as the
    /// special case of one sequence at a time.
    fn start_iteration(&mut self, r: usize) -> Option<u64> {
        let Policy::Iteration {
            max_seqs,
            budget,
            chunk,
        } = self.policy
        else {
            return None;
        };
        let q = self.queue_of(r);
        let mut pass = std::mem::take(&mut self.replicas[r].pass);
        pass.chunks.clear();
        pass.decodes = 0;
        let mut shape = BatchShape::default();

        let admit_prefills = |sim: &mut Simulation,
                              pass: &mut Pass,
                              shape: &mut BatchShape,
                              budget_left: &mut u64| {
            let rep_seqs = |sim: &Simulation| {
                (sim.replicas[r].decoding.len() + sim.replicas[r].prefilling.len()) as u64
            };
            while rep_seqs(sim) < max_seqs && *budget_left > 0 {
                let Some(&id) = sim.queues[q].front() else {
                    break;
                };
                let target = u64::from(sim.requests.items[id as usize].prefill_target);
                let need = blocks_for(target);
                if need > sim.kv_blocks {
                    sim.queues[q].pop_front();
                    sim.waiting -= 1;
                    sim.reject_too_long(id);
                    continue;
                }
                let take = match chunk {
                    Some(c) => target.min(c).min(*budget_left),
                    // Whole prompts only; the first may exceed the budget alone.
                    None if target <= *budget_left || pass.chunks.is_empty() => target,
                    None => break,
                };
                // The watermark keeps room for running sequences to grow; with
                // none running there is nothing to protect (and a request larger
                // than capacity − watermark would otherwise wait forever).
                let idle =
                    sim.replicas[r].decoding.is_empty() && sim.replicas[r].prefilling.is_empty();
                let reserve = if idle { 0 } else { sim.kv_watermark };
                if sim.replicas[r].kv_used + need + reserve > sim.kv_blocks {
                    break; // admission waits for memory
                }
                sim.queues[q].pop_front();
                sim.admit(id, r);
                sim.replicas[r].kv_used += need;
                sim.requests.items[id as usize].phase = Phase::Prefilling;
                sim.replicas[r].prefilling.push_back(id);
                pass.chunks.push((id, take as u32));
                shape.prefill_tokens += take;
                shape.prefill_attention_pairs += take * take / 2;
                *budget_left = budget_left.saturating_sub(take);
            }
        };

        let mut budget_left = budget;
        match chunk {
            None => {
                // vLLM's default scheduler without chunked prefill: a pass is either
                // a prefill of newly admitted prompts (decodes pause) or a decode step.
                admit_prefills(self, &mut pass, &mut shape, &mut budget_left);
                if pass.chunks.is_empty() && !self.replicas[r].decoding.is_empty() {
                    self.reserve_decode_blocks(r);
                    pass.decodes = self.replicas[r].decoding.len() as u64;
                    if pass.decodes == 0 {
                        // Reserving refused the only sequence: the cache is free again.
                        admit_prefills(self, &mut pass, &mut shape, &mut budget_left);
                    }
                }
            }
            Some(c) => {
                // Decodes first, then partial prefills, then new prompts.
                if !self.replicas[r].decoding.is_empty() {
                    self.reserve_decode_blocks(r);
                    pass.decodes = self.replicas[r].decoding.len() as u64;
                    budget_left = budget_left.saturating_sub(pass.decodes);
                }
                // Partial prefills, oldest first; indexing avoids copying the
                // list on every pass.
                for &id in &self.replicas[r].prefilling {
                    if budget_left == 0 {
                        break;
                    }
                    let req = &self.requests.items[id as usize];
                    let left = u64::from(req.prefill_target - req.prefilled);
                    let take = left.min(c).min(budget_left);
                    let cached = u64::from(req.prefilled);
                    pass.chunks.push((id, take as u32));
                    shape.prefill_tokens += take;
                    shape.prefill_cached_tokens += cached;
                    shape.prefill_attention_pairs += take * (cached + take / 2);
                    budget_left -= take;
                }
                admit_prefills(self, &mut pass, &mut shape, &mut budget_left);
            }
        }
        let rep = &self.replicas[r];
        shape.decode_seqs = pass.decodes;
        if pass.decodes > 0 {
            shape.decode_context_tokens = rep.context_sum;
        }
        let seqs = pass.decodes + pass.chunks.len() as u64;
        self.replicas[r].pass = pass;
        if seqs == 0 {
            return None;
        }
        Some(self.time_pass(r, &shape, seqs))
    }

    /// Reserve the KV blocks this decode step writes into, preempting the newest
    /// sequences (recompute, vLLM's default) while the cache cannot hold them.
    fn reserve_decode_blocks(&mut self, r: usize) {
        loop {
            let rep = &self.replicas[r];
            let phase_now = ((BLOCK - rep.decode_step % BLOCK) % BLOCK) as usize;
            let need = rep.phase[phase_now];
            if rep.kv_used + need <= self.kv_blocks || rep.decoding.is_empty() {
                self.replicas[r].kv_used += need;
                return;
            }
            let Some(&(_, victim)) = self.replicas[r].decoding.iter().next_back() else {
                return;
            };
            if self.replicas[r].decoding.len() == 1 && self.replicas[r].prefilling.is_empty() {
                // Alone in the cache and still out of room: this sequence can never
                // finish here. Recomputing it would loop forever; refuse it instead.
                self.leave_decoding(r, victim);
                self.replicas[r].running -= 1;
                self.reject_too_long(victim);
                continue;
            }
            self.preempt(r, victim);
        }
    }

    fn context_of(&self, r: usize, id: u32) -> u64 {
        let req = &self.requests.items[id as usize];
        req.c0 + (self.replicas[r].decode_step - req.k0)
    }

    fn phase_of(req: &Request) -> usize {
        ((req.c0 % BLOCK + BLOCK - req.k0 % BLOCK) % BLOCK) as usize
    }

    fn leave_decoding(&mut self, r: usize, id: u32) -> u64 {
        let ctx = self.context_of(r, id);
        let req = &self.requests.items[id as usize];
        let phase = Self::phase_of(req);
        let key = (req.admit_order, id);
        let rep = &mut self.replicas[r];
        rep.decoding.remove(&key);
        rep.phase[phase] -= 1;
        rep.context_sum -= ctx;
        rep.kv_used -= blocks_for(ctx);
        ctx
    }

    fn preempt(&mut self, r: usize, id: u32) {
        self.leave_decoding(r, id);
        self.preemptions += 1;
        let q = self.queue_of(r);
        let req = &mut self.requests.items[id as usize];
        req.epoch = req.epoch.wrapping_add(1);
        req.phase = Phase::Waiting;
        req.prefill_target = req.input_tokens + req.generated;
        req.prefilled = 0;
        if self.router == Router::CentralQueue {
            // Back in the shared queue: any replica may take it next.
            req.replica = NONE;
            self.replicas[r].outstanding -= 1;
        }
        self.replicas[r].running -= 1;
        // Back to the front of the queue, as vLLM does.
        self.queues[q].push_front(id);
        self.waiting += 1;
    }

    fn time_pass(&mut self, r: usize, shape: &BatchShape, seqs: u64) -> u64 {
        let Service::Physics(model) = &self.service else {
            return 0;
        };
        let cost = model.step(shape);
        let end = self.now + cost.time_ns.max(1);
        let kv = self.replicas[r].kv_used as f64 / self.kv_blocks as f64;
        self.kv_peak = self.kv_peak.max(kv);
        self.busy_ns += u128::from(cost.time_ns);
        self.batch_area += seqs as f64 * cost.time_ns as f64;
        self.kv_area += kv * cost.time_ns as f64;
        self.flops += cost.flops;
        self.bytes += cost.bytes;
        self.passes += 1;
        self.windows.pass(self.now, end, seqs, kv);
        self.windows.input_tokens(end, shape.prefill_tokens);
        let waiting = self.queues[self.queue_of(r)].len() as u32;
        if let Some(t) = self.trace.as_mut().filter(|t| t.passes.len() < t.capacity) {
            let prefill_seqs = if shape.prefill_tokens > 0 {
                seqs - shape.decode_seqs
            } else {
                0
            };
            t.passes.push(PassRecord {
                replica: r as u32,
                start_ns: self.now,
                end_ns: end,
                prefill_tokens: shape.prefill_tokens,
                prefill_seqs: prefill_seqs as u32,
                decode_seqs: shape.decode_seqs as u32,
                waiting,
            });
        }
        cost.time_ns
    }

    // ----- pass completion -------------------------------------------------------

    fn finish_pass(&mut self, r: usize) {
        // The replica stays busy while the pass is applied, so requests that
        // completions spawn (agent chains) queue instead of starting a pass early.
        self.finishing = Some(r);
        match (&self.policy, &self.service) {
            (_, Service::Abstract { .. }) => self.finish_abstract(r),
            (Policy::Static { .. }, _) => self.finish_static(r),
            (Policy::Iteration { .. }, _) => self.finish_iteration(r),
        }
        self.finishing = None;
        self.replicas[r].busy = false;
        self.try_start(r);
    }

    fn finish_abstract(&mut self, r: usize) {
        let start = self.replicas[r].pass.start_ns;
        let busy = self.now - start;
        let members = std::mem::take(&mut self.replicas[r].abstract_members);
        self.busy_ns += u128::from(busy);
        self.batch_area += members.len() as f64 * busy as f64;
        self.passes += 1;
        self.windows
            .pass(start, self.now, members.len() as u64, 0.0);
        for &id in &members {
            let req = &mut self.requests.items[id as usize];
            req.generated = req.output_tokens;
            req.first_token_ns = self.now;
            self.windows.tokens(self.now, u64::from(req.output_tokens));
            self.complete(id);
        }
        let mut members = members;
        members.clear();
        self.replicas[r].abstract_members = members;
    }

    fn finish_static(&mut self, r: usize) {
        let Some(mut batch) = self.replicas[r].static_batch.take() else {
            return;
        };
        let now = self.now;
        if self.replicas[r].pass.static_prefill {
            for &id in &batch.members {
                let req = &mut self.requests.items[id as usize];
                req.first_token_ns = now;
                req.generated = 1;
            }
            self.windows.tokens(now, batch.members.len() as u64);
        } else {
            batch.decode_steps_done += 1;
            batch.context += batch.members.len() as u64;
            let live = (batch.members.len() - batch.next_to_finish) as u64;
            self.windows.tokens(now, live);
            for &id in &batch.members[batch.next_to_finish..] {
                self.requests.items[id as usize].generated += 1;
            }
        }
        while let Some(&id) = batch.members.get(batch.next_to_finish) {
            if u64::from(self.requests.items[id as usize].output_tokens)
                > batch.decode_steps_done + 1
            {
                break;
            }
            batch.next_to_finish += 1;
            self.complete(id);
        }
        if batch.decode_steps_done >= batch.decode_steps_total {
            self.replicas[r].kv_used -= batch.blocks;
        } else {
            self.replicas[r].static_batch = Some(batch);
        }
    }

    fn finish_iteration(&mut self, r: usize) {
        let now = self.now;
        let pass = std::mem::take(&mut self.replicas[r].pass);
        if pass.decodes > 0 {
            let step = self.replicas[r].decode_step;
            let rep = &mut self.replicas[r];
            rep.decode_step += 1;
            rep.context_sum += rep.decoding.len() as u64;
            self.windows.tokens(now, pass.decodes);
            while let Some(&Reverse((finish, _, id, epoch))) = self.replicas[r].finishing.peek() {
                if finish > step {
                    break;
                }
                self.replicas[r].finishing.pop();
                let req = &self.requests.items[id as usize];
                if req.epoch != epoch || req.phase != Phase::Decoding || req.replica != r as u32 {
                    continue; // preempted since: a stale entry
                }
                self.leave_decoding(r, id);
                self.requests.items[id as usize].generated =
                    self.requests.items[id as usize].output_tokens;
                self.complete(id);
            }
        }
        let mut first_tokens = 0;
        for &(id, take) in &pass.chunks {
            let req = &mut self.requests.items[id as usize];
            req.prefilled += take;
            if req.prefilled < req.prefill_target {
                continue;
            }
            // Prompt done: the pass also sampled the next token.
            let target = u64::from(req.prefill_target);
            req.generated += 1;
            first_tokens += 1;
            if req.first_token_ns == u64::MAX {
                req.first_token_ns = now;
            }
            let rep = &mut self.replicas[r];
            if let Some(pos) = rep.prefilling.iter().position(|&p| p == id) {
                rep.prefilling.remove(pos);
            }
            if req.generated >= req.output_tokens {
                rep.kv_used -= blocks_for(target);
                self.complete(id);
                continue;
            }
            req.phase = Phase::Decoding;
            req.c0 = target;
            req.k0 = rep.decode_step;
            let finish = req.k0 + u64::from(req.output_tokens - req.generated) - 1;
            rep.decoding.insert((req.admit_order, id));
            rep.phase[Self::phase_of(req)] += 1;
            rep.context_sum += target;
            rep.finishing
                .push(Reverse((finish, req.admit_order, id, req.epoch)));
        }
        self.windows.tokens(now, first_tokens);
        let mut pass = pass;
        pass.chunks.clear();
        self.replicas[r].pass = pass;
    }

    // ----- request and task completion -------------------------------------------

    fn complete(&mut self, id: u32) {
        let now = self.now;
        let req = self.requests.items[id as usize].clone();
        let r = req.replica as usize;
        if let Some(rep) = self.replicas.get_mut(r) {
            rep.running -= 1;
            rep.outstanding -= 1;
        }
        self.requests.items[id as usize].phase = Phase::Free;
        self.requests.remove(id);
        self.completed += 1;
        self.input_tokens_done += u64::from(req.input_tokens);
        self.output_tokens_done += u64::from(req.output_tokens);

        let ttft = req.first_token_ns - req.arrival_ns;
        let e2e = now - req.arrival_ns;
        let wait = req.admitted_ns - req.arrival_ns;
        let tpot = (req.output_tokens > 1)
            .then(|| (now - req.first_token_ns) / u64::from(req.output_tokens - 1));
        let met = ttft <= self.slo_ttft_ns && tpot.is_none_or(|t| t <= self.slo_tpot_ns);
        self.windows.completion(now, ttft, e2e);
        for m in [&mut self.overall, &mut self.per_class[req.class as usize]] {
            m.completed += 1;
            m.slo_met += u64::from(met);
            m.ttft.record_ns(ttft);
            m.e2e.record_ns(e2e);
            m.wait.record_ns(wait);
            if let Some(t) = tpot {
                m.tpot.record_ns(t);
            }
        }

        let task = &mut self.tasks.items[req.task as usize];
        task.calls_left -= 1;
        if task.calls_left > 0 {
            // Agent chain: the next call goes out as soon as this one returns.
            self.new_request(req.task, None);
            return;
        }
        let (class, start, user) = (task.class, task.start_ns, task.user);
        self.tasks.remove(req.task);
        self.tasks_completed += 1;
        for m in [&mut self.overall, &mut self.per_class[class as usize]] {
            m.task.record_ns(now - start);
        }
        self.user_done(user);
    }

    fn user_done(&mut self, user: u32) {
        if user == NONE {
            return;
        }
        let think = self.draw_think();
        self.events
            .push(self.now + think, Event::UserWakes { user });
    }

    fn reject(&mut self, id: u32) {
        let class = self.requests.items[id as usize].class;
        self.rejected += 1;
        self.overall.rejected += 1;
        self.per_class[class as usize].rejected += 1;
        self.drop_request(id);
    }

    /// Free a request that will not complete, and end its task (an agent chain
    /// stops at its first lost call); a closed-loop user thinks and tries again.
    fn drop_request(&mut self, id: u32) {
        let task = self.requests.items[id as usize].task;
        self.requests.items[id as usize].phase = Phase::Free;
        self.requests.remove(id);
        let user = self.tasks.items[task as usize].user;
        self.tasks.remove(task);
        self.user_done(user);
    }

    fn reject_too_long(&mut self, id: u32) {
        self.rejected_too_long += 1;
        let r = self.requests.items[id as usize].replica as usize;
        if let Some(rep) = self.replicas.get_mut(r) {
            rep.outstanding -= 1;
        }
        self.reject(id);
    }

    // ----- observation ---------------------------------------------------------------

    /// Counts taken from the queues and replicas themselves (not from the
    /// arrival/completion counters), so `arrived = completed + rejected + waiting
    /// + running` is a real check.
    pub fn snapshot(&self) -> Snapshot {
        let (api_waiting, api_running) = self
            .api
            .as_ref()
            .map_or((0, 0), ApiState::waiting_and_running);
        let waiting: u64 = self.queues.iter().map(|q| q.len() as u64).sum::<u64>() + api_waiting;
        let running: u64 = self
            .replicas
            .iter()
            .map(|r| {
                let static_live = r
                    .static_batch
                    .as_ref()
                    .map_or(0, |b| (b.members.len() - b.next_to_finish) as u64);
                r.decoding.len() as u64
                    + r.prefilling.len() as u64
                    + static_live
                    + r.abstract_members.len() as u64
            })
            .sum::<u64>()
            + api_running;
        Snapshot {
            now_s: self.now as f64 / NS_PER_S,
            events: self.processed,
            arrived: self.arrived,
            completed: self.completed,
            rejected: self.rejected,
            failed: self.failed,
            waiting,
            running,
            finished: self.is_finished(),
        }
    }

    /// The report of the run so far (complete once [`Self::is_finished`]).
    pub fn report(&self) -> Report {
        let end = self.last_event_ns.max(1);
        let secs = end as f64 / NS_PER_S;
        let mut warnings = Vec::new();
        if let Some(w) = &self.stopped {
            warnings.push(w.clone());
        } else if !self.events.is_empty() {
            warnings.push(format!("run in progress at {secs:.1} s of simulated time"));
        }
        if self.completed == 0 {
            warnings.push("no request completed".to_owned());
        }
        if self.rejected_too_long > 0 {
            warnings.push(format!(
                "{} request(s) rejected because prompt and output exceed the KV cache ({} tokens)",
                self.rejected_too_long,
                self.kv_blocks * BLOCK
            ));
        }
        let busy = self.busy_ns as f64;
        let replica_ns = end as f64 * self.replicas.len() as f64;
        let (peak_flops, peak_bw) = match &self.service {
            Service::Physics(m) => (m.peak_flops(), m.peak_bandwidth()),
            Service::Abstract { .. } => (0.0, 0.0),
        };
        let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
        let goodput_requests = self.overall.slo_met;
        // The fleet is paid by the hour, busy or idle, but only if something uses it.
        let gpus = if self.fleet_used { self.gpus } else { 0 };
        let fleet_usd = f64::from(gpus) * self.usd_per_gpu_hour * secs / 3600.0;
        let api = self.api.as_ref().map(|a| a.report(secs, HOURS_PER_MONTH));
        let api_usd = api.as_ref().map_or(0.0, |a| a.usd);
        let month_factor = HOURS_PER_MONTH * 3600.0 / secs;
        let total_usd = fleet_usd + api_usd;
        let per_mtok = |tokens: u64| (tokens > 0).then(|| total_usd / tokens as f64 * 1e6);
        if let Some(e) = &self.too_large_example {
            warnings.push(format!(
                "{} request(s) failed because they can never fit the rate limits ({e})",
                api.as_ref().map_or(0, |a| a.failed_too_large)
            ));
        }
        let counts = Counts {
            arrived: self.arrived,
            completed: self.completed,
            rejected: self.rejected,
            failed: self.failed,
            in_flight: self.arrived - self.completed - self.rejected - self.failed,
            tasks_completed: self.tasks_completed,
        };
        Report {
            version: REPORT_VERSION,
            warnings,
            complete: self.stopped.is_none() && self.events.is_empty(),
            sim_time_s: secs,
            events: self.processed,
            requests: counts,
            overall: self.overall.report("all", month_factor),
            per_class: self
                .per_class
                .iter()
                .zip(&self.classes)
                .map(|(m, k)| m.report(&k.name, month_factor))
                .collect(),
            throughput: Throughput {
                input_tokens_per_s: self.input_tokens_done as f64 / secs,
                output_tokens_per_s: self.output_tokens_done as f64 / secs,
                requests_per_s: self.completed as f64 / secs,
                goodput_requests_per_s: goodput_requests as f64 / secs,
                goodput_fraction: (self.arrived > 0)
                    .then(|| goodput_requests as f64 / self.arrived as f64),
            },
            utilisation: Utilisation {
                gpu_busy_fraction: ratio(busy, replica_ns),
                mean_batch_size: ratio(self.batch_area, busy),
                kv_use_mean: ratio(self.kv_area, busy),
                kv_use_peak: self.kv_peak,
                preemptions: self.preemptions,
                forward_passes: self.passes,
                mfu: ratio(self.flops, peak_flops * busy / NS_PER_S),
                bandwidth_utilisation: ratio(self.bytes, peak_bw * busy / NS_PER_S),
                kv_capacity_tokens: if matches!(self.service, Service::Physics(_)) {
                    self.kv_blocks * BLOCK
                } else {
                    0
                },
            },
            series: self
                .windows
                .series(end, self.replicas.len() as u32, self.api.is_some()),
            physical_limit: self.limit.filter(|_| self.fleet_used).map(
                |(batch, context, per_replica)| {
                    let bound = per_replica * self.replicas.len() as f64;
                    PhysicalLimit {
                        batch,
                        context_tokens: context,
                        output_tokens_per_s: bound,
                        achieved_fraction: ratio(self.output_tokens_done as f64 / secs, bound),
                    }
                },
            ),
            cost: Cost {
                gpus,
                usd_per_gpu_hour: self.usd_per_gpu_hour,
                fleet_usd,
                api_usd,
                total_usd,
                usd_per_mtok_output: per_mtok(self.output_tokens_done),
                usd_per_mtok_total: per_mtok(self.output_tokens_done + self.input_tokens_done),
                usd_per_request: (self.completed > 0).then(|| total_usd / self.completed as f64),
                usd_per_month: f64::from(gpus) * self.usd_per_gpu_hour * HOURS_PER_MONTH
                    + api.as_ref().map_or(0.0, |a| a.usd_per_month),
            },
            api,
            distribution: {
                let quantiles = crate::report::distribution_quantiles();
                Distribution {
                    ttft_ms: self.overall.ttft.quantiles_ms(&quantiles),
                    e2e_ms: self.overall.e2e.quantiles_ms(&quantiles),
                    quantiles,
                }
            },
        }
    }
}

/// The decode roofline of one replica: (batch, mean context, output tokens/s).
fn physical_limit(scenario: &Scenario, kv_blocks: u64) -> (u32, u32, f64) {
    let (_, context) = scenario.mean_tokens();
    let context = libm::round(context).clamp(1.0, f64::from(u32::MAX)) as u32;
    let fits = (kv_blocks * BLOCK / u64::from(context)).clamp(1, u64::from(u32::MAX)) as u32;
    let batch = scenario.serving.batching.max_seqs().min(fits).max(1);
    let model = scenario.deployment().step_model(Efficiency::PEAK);
    (
        batch,
        context,
        model.decode_roofline_tokens_per_s(batch, context),
    )
}

/// The rate of a piecewise-linear schedule at `t_s` seconds.
fn schedule_rate(points: &[crate::scenario::RatePoint], t_s: f64) -> f64 {
    let i = points.partition_point(|p| p.at_s <= t_s);
    match (i.checked_sub(1).and_then(|j| points.get(j)), points.get(i)) {
        (Some(a), Some(b)) => {
            a.rate_per_s + (b.rate_per_s - a.rate_per_s) * (t_s - a.at_s) / (b.at_s - a.at_s)
        }
        (Some(a), None) => a.rate_per_s,
        (None, Some(b)) => b.rate_per_s,
        (None, None) => 0.0,
    }
}
