//! The discrete-event engine: arrivals, routing, batch formation, forward passes,
//! KV-cache memory and metrics, driven by one closed [`Event`] enum handled in
//! [`Simulation::handle`].
//!
//! Rooms: `arrivals` (open loop, schedules, closed-loop users, traces, agent
//! chains), `request` (a request's lifecycle), `router`, `replica` (starting and
//! finishing passes), `iteration` (continuous and chunked pass formation,
//! decode-block reservation, preemption) over `decode` (the decoding set),
//! `static_batch` (static batches and the abstract textbook server),
//! `provider` (hosted API tiers), `recorder` (metrics and series), `report`.
//!
//! Performance shape (see ARCHITECTURE.md): under iteration-level batching a
//! decode step costs O(log n) in the number of decoding sequences — see
//! [`decode::DecodeSet`].

use crate::dist::Sampler;
use crate::event::EventQueue;
use crate::physics::{KV_BLOCK_TOKENS, Timing};
use crate::report::Report;
use crate::rng::{Stream, StreamId};
use crate::scenario::{Arrival, Slo, ValidScenario};

/// The configuration of the pool replica `$r` belongs to (a place
/// expression, so it borrows only `cfg` and the replica's pool index).
macro_rules! pool {
    ($sim:expr, $r:expr) => {
        $sim.cfg.pools[usize::from($sim.st.replicas[$r].pool)]
    };
}

mod arrivals;
mod autoscale;
mod bill;
mod caching;
mod decode;
mod disaggregation;
mod energy;
mod feed;
mod iteration;
mod limits;
mod policy;
mod pools;
mod prefix;
mod prefix_cache;
mod provider;
mod provider_batch;
mod provider_cache;
mod provider_errors;
mod provider_hedge;
mod provider_limits;
mod provider_report;
mod provider_service;
mod provider_units;
mod recorder;
mod replica;
mod report;
mod report_rows;
mod request;
mod router;
mod setup;
mod slab;
mod speculative;
mod static_batch;
mod task;
mod timeout;
mod waiting;

pub use feed::TraceFeed;
use provider::ApiState;
use recorder::Recorder;
use replica::Replica;
use request::{Backend, ReqId, Request};
pub use setup::{run, run_timed, run_with_feed};
use slab::Slab;
use task::{ClassSpec, Task, TaskId};

const NS_PER_S: f64 = 1e9;
const BLOCK: u64 = KV_BLOCK_TOKENS as u64;

/// Everything that can happen, handled in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The open-loop arrival process produces its next task.
    Arrival,
    /// The next request of a replayed trace arrives.
    TraceArrival,
    /// A closed-loop user finishes thinking and sends a task.
    UserWakes { user: u32 },
    /// The closed-loop user count changes to the schedule's step `step`.
    UsersChange { step: u32 },
    /// A request has passed the serving software's front end (HTTP,
    /// tokenisation) and reaches the router.
    Enqueue { req: ReqId },
    /// An agent chain's client has the last answer and sends the next call.
    NextCall { task: TaskId },
    /// The earliest pending client timeout of class `class` is due (see
    /// [`timeout::Deadlines`]: one event per class, for its queue's head).
    Timeout { class: u16 },
    /// A replica's forward pass (or abstract service period) ends.
    PassDone { replica: u32 },
    /// A client retries a request the provider refused.
    ApiRetry { req: ReqId },
    /// A hosted API finishes a request (ignored if stale: a hedge that won
    /// moved its finish).
    ApiDone { req: ReqId },
    /// A request's hedge delay is up (`api::Hedge`).
    ApiHedge { req: ReqId },
    /// The client's queue for a tier may release its head (ignored if stale).
    ClientRelease { tier: u16, epoch: u32 },
    /// An autoscaled pool's autoscaler reads its signal.
    ScaleCheck { pool: u16 },
    /// A handed-off request's KV cache reached its decode replica.
    KvArrived { req: ReqId },
    /// A starting replica's cold start ends (ignored if `epoch` is no longer
    /// its: the start was cancelled).
    ReplicaReady { replica: u32, epoch: u32 },
    /// A static batch's maximum wait expires on a replica (ignored if `epoch`
    /// is no longer the replica's: the batch it was armed for already left).
    BatchTimer { replica: u32, epoch: u32 },
}

/// What a run is: fixed when it is created.
struct Config {
    /// The run's seed (requests' own streams derive from it).
    seed: u64,
    duration_ns: u64,
    max_events: u64,
    max_sim_ns: u64,
    classes: Vec<ClassSpec>,
    /// Cumulative class shares, normalised to end at 1.
    class_cdf: Vec<f64>,
    arrival: Arrival,
    think: Option<Sampler>,
    /// The self-hosted pools, in order (one without `pools`).
    pools: Vec<pools::PoolCfg>,
    /// Routing rules, tried in order before each class's own backend.
    rules: Vec<pools::Rule>,
    /// Whether some rule splits by share (then each task draws a place).
    splits: bool,
    /// Whether some pool autoscales.
    autoscales: bool,
    /// The targets as given, for the report.
    slo: Slo,
    /// Where each class is served when no rule decides.
    class_backend: Vec<Backend>,
    /// Where a request its API tier gave up on goes, in order: its n-th
    /// give-up goes to the n-th (none: it fails).
    api_fallback: Vec<Backend>,
    /// Whether a replayed trace's prefix-block hashes name its blocks.
    hashed: bool,
}

/// The random streams of the fleet side (the API side keeps its own).
struct Rngs {
    arrivals: Stream,
    lengths: Stream,
    jitter: Stream,
    think: Stream,
    prefix: Stream,
    turns: Stream,
    reasoning: Stream,
    routing: Stream,
}

/// Closed-loop users: the target count, and per user whether it is active and
/// whether it has a task or a wake-up pending.
#[derive(Default)]
struct Users {
    target: u32,
    active: Vec<bool>,
    pending: Vec<bool>,
}

/// What changes as the run advances.
struct State {
    now: u64,
    events: EventQueue<Event>,
    processed: u64,
    rng: Rngs,
    requests: Slab<Request>,
    tasks: Slab<Task>,
    replicas: Vec<Replica>,
    /// Waiting requests: one queue per replica (a pool with a central queue uses its first replica's).
    queues: Vec<waiting::Waiting<ReqId>>,
    /// Requests waiting for admission anywhere (fleet queues, the serving
    /// software's front end, and the API client).
    waiting: u64,
    /// Requests in the serving software's front end.
    in_frontend: u64,
    /// Requests whose client gave up, still held where they waited (queues,
    /// front end, API client) or ran (static batches, API providers).
    abandoned_waiting: u64,
    abandoned_running: u64,
    /// Each pool's next replica under round robin.
    rr_next: Vec<u32>,
    /// Each pool's replicas by route key (least-outstanding,
    /// join-shortest-queue and cache-aware).
    index: Vec<router::ReplicaIndex>,
    admit_counter: u64,
    /// Conversations started (their ids).
    conversations: u64,
    users: Users,
    stopped: Option<String>,
    /// The share of the arrival window's requests a limit left out (None
    /// when none was).
    left_out: Option<f64>,
    /// The replica whose finished pass is being applied: it takes no joins and
    /// starts nothing until the pass is fully accounted for.
    finishing: Option<usize>,
    /// Pending client timeouts, per class, in deadline order.
    deadlines: Vec<timeout::Deadlines>,
    /// Each pool's autoscaler state (default for a fixed pool).
    scaling: Vec<autoscale::PoolScale>,
    /// Autoscaler readings pending in the event queue.
    scale_checks: usize,
    /// Replicas up in every pool (the replicas-over-time series).
    up_total: u32,
    /// A planner's own targets, when it set them: completed requests are
    /// also counted against those (else the recorder's counts against the
    /// scenario's targets serve).
    watch: Option<Watch>,
    /// A replayed trace's requests as they come.
    feed: Option<feed::Feeding>,
    /// The prefix-block hashes of a trace's requests in flight.
    prefix_hashes: prefix::PrefixHashes,
}

/// Completed requests over a planner's pair of targets.
#[derive(Default)]
struct Watch {
    ttft_ns: u64,
    tpot_ns: u64,
    /// Over the TTFT target (on the first visible token).
    ttft_missed: u64,
    tpot_missed: u64,
}

/// A run in progress: create it, advance it in slices, read snapshots, and take
/// the report at any time.
pub struct Simulation {
    cfg: Config,
    st: State,
    rec: Recorder,
    /// Hosted API tiers and the client in front of them.
    api: Option<ApiState>,
}

/// Longest span any one sampled or computed duration may have: 2⁶² ns, about
/// 146 years. Every event time is at most `limits.max_sim_time_s` (≤ 70 days,
/// `scenario::bounds`) plus two such spans, so time arithmetic cannot wrap;
/// an event that far out stops the run at its time limit with a warning.
const MAX_SPAN_NS: u64 = 1 << 62;

/// Seconds to nanoseconds, clamped to `0..=MAX_SPAN_NS` (NaN gives 0).
fn secs_to_ns(s: f64) -> u64 {
    let ns = s * NS_PER_S;
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= MAX_SPAN_NS as f64 {
        MAX_SPAN_NS
    } else {
        ns as u64
    }
}

/// `t + span`, for event times: spans are clamped, so this never saturates in
/// practice; saturating keeps it safe if that ever changes.
fn later(t: u64, span: u64) -> u64 {
    t.saturating_add(span.min(MAX_SPAN_NS))
}

fn blocks_for(tokens: u64) -> u64 {
    tokens.div_ceil(BLOCK)
}

impl Simulation {
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

    /// What is already settled about the run's targets: completed requests
    /// over the TTFT target (on the first visible token) and over the TPOT
    /// target, and requests with no answer (failed, refused or timed out:
    /// `Counts::unanswered`), for verdicts reached before the run ends.
    pub fn settled_misses(&self) -> (u64, u64, u64) {
        let (ttft, tpot) = match &self.st.watch {
            Some(w) => (w.ttft_missed, w.tpot_missed),
            None => (self.rec.overall.ttft_missed, self.rec.overall.tpot_missed),
        };
        (
            ttft,
            tpot,
            self.rec.rejected + self.rec.failed + self.rec.timed_out,
        )
    }

    /// Count [`Self::settled_misses`] against these targets (ns) instead of
    /// the scenario's own: a planner's targets. Call before advancing; the
    /// report (goodput, the SLO counts) still uses the scenario's.
    pub fn watch_targets(&mut self, ttft_ns: u64, tpot_ns: u64) {
        debug_assert_eq!(self.st.processed, 0, "set the targets before running");
        // The scenario's own targets are counted by the recorder already.
        let own = self
            .cfg
            .classes
            .iter()
            .all(|k| k.slo_ns == (ttft_ns, tpot_ns));
        self.st.watch = (!own).then(|| Watch {
            ttft_ns,
            tpot_ns,
            ..Watch::default()
        });
    }

    /// Stop the run here; the report covers the partial run and says `why`.
    pub fn stop(&mut self, why: String) {
        if self.st.stopped.is_none() {
            self.st.stopped = Some(why);
        }
    }

    /// Why a replayed trace's requests stopped coming before its last
    /// (a line that does not read, a file changed since it was checked),
    /// if they did: the run stopped there.
    pub fn feed_failed(&self) -> Option<&str> {
        self.st.feed.as_ref().and_then(|f| f.failed.as_deref())
    }

    /// True when no work is left or a limit stopped the run.
    pub fn is_finished(&self) -> bool {
        self.st.stopped.is_some() || self.st.events.is_empty()
    }

    /// Simulated time now, ns.
    pub fn now_ns(&self) -> u64 {
        self.st.now
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.st.processed
    }

    /// Timers held now: pending events and client-timeout entries. Both stay
    /// O(work in flight): a timer whose request ended is skipped or swept.
    pub fn timers_held(&self) -> usize {
        self.st.events.len()
            + self
                .st
                .deadlines
                .iter()
                .map(timeout::Deadlines::len)
                .sum::<usize>()
    }

    fn step_if(&mut self, accept: impl Fn(u64) -> bool) -> bool {
        if self.st.stopped.is_some() {
            return false;
        }
        // A timer whose purpose already passed is dropped unseen: it must not
        // move the clock, count as an event or trip a limit.
        loop {
            match self.st.events.peek() {
                Some((_, e)) if self.is_stale(e) => {
                    self.st.events.pop();
                }
                Some((t, &Event::Timeout { class })) => {
                    if self.timeout_is_due(class, t) {
                        break;
                    }
                }
                _ => break,
            }
        }
        let Some(next) = self.st.events.peek_time() else {
            return false;
        };
        if !accept(next) {
            return false;
        }
        if self.limit_reached(next) {
            return false;
        }
        let Some((t, event)) = self.st.events.pop() else {
            return false;
        };
        self.st.processed += 1;
        self.advance_clock(t);
        self.handle(event);
        true
    }

    /// A batch timer whose batch already left, or a client release superseded
    /// by a newer one.
    #[inline]
    fn is_stale(&self, event: &Event) -> bool {
        match *event {
            Event::BatchTimer { replica, epoch } => {
                self.st.replicas[replica as usize].timer_epoch != epoch
            }
            Event::ReplicaReady { replica, epoch } => {
                let rep = &self.st.replicas[replica as usize];
                rep.up_epoch != epoch || rep.up != replica::Up::Starting
            }
            Event::ClientRelease { tier, epoch } => self
                .api
                .as_ref()
                .is_some_and(|a| a.tiers[tier as usize].release_epoch != epoch),
            _ => false,
        }
    }

    #[inline]
    fn in_flight(&self) -> u64 {
        let r = &self.rec;
        let done = r.completed + r.rejected + r.failed + r.timed_out;
        debug_assert!(done <= r.arrived, "more requests ended than arrived");
        r.arrived - done
    }

    #[inline]
    fn advance_clock(&mut self, t: u64) {
        debug_assert!(
            t >= self.st.now,
            "time moved backwards: {} → {t}",
            self.st.now
        );
        let in_flight = self.in_flight();
        // Requests whose client gave up still sit in queues (or wait for a
        // retry timer) until reached: they no longer wait.
        let retrying = self.api.as_ref().map_or(0, |a| a.retry_pending);
        let waiting = self.st.waiting + retrying - self.st.abandoned_waiting;
        debug_assert!(
            waiting <= in_flight,
            "{waiting} waiting of {in_flight} in flight"
        );
        debug_assert!(
            self.st.prefix_hashes.in_use() <= self.st.requests.len(),
            "a trace's hashes outlive their request"
        );
        self.rec.windows.levels(self.st.now, t, waiting, in_flight);
        if self.cfg.autoscales {
            self.rec
                .windows
                .replicas_up(self.st.now, t, self.st.up_total);
        }
        self.st.now = t;
        self.rec.last_event_ns = t;
    }

    /// The one place events are handled.
    fn handle(&mut self, event: Event) {
        match event {
            Event::Arrival => self.open_loop_arrival(),
            Event::TraceArrival => self.trace_arrival(),
            Event::UserWakes { user } => self.user_wakes(user),
            Event::UsersChange { step } => self.change_users(step),
            Event::NextCall { task } => self.next_call(task),
            Event::Timeout { class } => self.timeouts_due(class),
            Event::Enqueue { req } => {
                self.st.in_frontend -= 1;
                if self.st.requests[req].abandoned {
                    self.drop_abandoned_waiting(req);
                } else {
                    self.st.waiting -= 1;
                    self.route(req);
                }
            }
            Event::PassDone { replica } => self.finish_pass(replica as usize),
            Event::ApiRetry { req } => self.api_retry(req),
            Event::ApiDone { req } => self.api_done(req),
            Event::ApiHedge { req } => self.api_hedge(req),
            Event::ClientRelease { tier, .. } => self.client_release(tier),
            Event::BatchTimer { replica, .. } => self.batch_timer(replica as usize),
            Event::ScaleCheck { pool } => self.scale_check(usize::from(pool)),
            Event::ReplicaReady { replica, epoch } => self.replica_ready(replica as usize, epoch),
            Event::KvArrived { req } => self.kv_arrived(req),
        }
    }
}
