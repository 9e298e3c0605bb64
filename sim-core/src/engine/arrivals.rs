//! Where tasks come from: open-loop processes (Poisson, gamma, rate schedules),
//! replayed traces, and closed-loop users who think between tasks.

use super::request::Recorded;
use super::{Event, NS_PER_S, Simulation, later, secs_to_ns};
use crate::dist::gamma;
use crate::scenario::{Arrival, RatePoint, RequestClass};

/// Least wait of a closed-loop user before trying again after an error, ns.
pub(super) const ERROR_BACKOFF_NS: u64 = 1_000_000_000;

/// Cumulative class shares, normalised so the last is 1.
pub(super) fn class_cdf(classes: &[RequestClass]) -> Vec<f64> {
    let total: f64 = classes.iter().map(|k| k.share).sum();
    let mut acc = 0.0;
    classes
        .iter()
        .map(|k| {
            acc += k.share;
            acc / total
        })
        .collect()
}

/// The arrivals as the engine keeps them: a trace's numbers only (its
/// requests come through [`super::feed`]).
pub(super) fn engine_copy(a: &Arrival) -> Arrival {
    match a {
        Arrival::Trace {
            requests,
            prefix_block_tokens,
        } => Arrival::Trace {
            requests: crate::scenario::TraceRequests::streamed(requests.stats()),
            prefix_block_tokens: *prefix_block_tokens,
        },
        other => other.clone(),
    }
}

impl Simulation {
    /// Schedule the arrival process's first event.
    pub(super) fn start_arrivals(&mut self) {
        match &self.cfg.arrival {
            Arrival::Poisson { .. }
            | Arrival::Gamma { .. }
            | Arrival::Schedule { .. }
            | Arrival::Stages { .. } => {
                self.schedule_next_arrival(0);
            }
            Arrival::Trace { .. } => self.feed_ahead(),
            Arrival::ClosedLoop { .. } => self.st.events.push(0, Event::UsersChange { step: 0 }),
        }
    }

    pub(super) fn open_loop_arrival(&mut self) {
        let class = self.draw_class();
        self.start_task(class, None, None);
        self.schedule_next_arrival(self.st.now);
    }

    /// A replayed trace's request read ahead arrives: the one after it is
    /// read and its arrival scheduled, then this one starts.
    pub(super) fn trace_arrival(&mut self) {
        let Some(f) = &mut self.st.feed else {
            return;
        };
        let Some(r) = f.ahead.take() else {
            return;
        };
        f.fed += 1;
        let hashes = (!f.ahead_hashes.is_empty() && self.cfg.hashed)
            .then(|| self.st.prefix_hashes.keep(&f.ahead_hashes));
        self.feed_ahead();
        let given = Recorded {
            input: r.input_tokens,
            output: r.output_tokens,
            hashes,
        };
        self.start_task(r.class as u16, None, Some(given));
    }

    /// Read the trace's next request and schedule its arrival; a request
    /// that cannot be replayed stops the run, saying why.
    fn feed_ahead(&mut self) {
        let Some(f) = &mut self.st.feed else {
            return;
        };
        if let Err(why) = f.read_ahead() {
            let fed = f.fed;
            f.failed = Some(why.clone());
            self.stop(format!(
                "{why}: the replay stopped after {fed} requests; the numbers cover the partial run"
            ));
            return;
        }
        if let Some(next) = f.ahead {
            let at = secs_to_ns(next.at_s).max(self.st.now);
            self.st.events.push(at, Event::TraceArrival);
        }
    }

    pub(super) fn user_wakes(&mut self, user: u32) {
        let u = user as usize;
        self.st.users.pending[u] = false;
        if self.st.users.active[u] && self.st.now < self.cfg.duration_ns {
            self.st.users.pending[u] = true;
            let class = self.draw_class();
            self.start_task(class, Some(user), None);
        }
    }

    fn schedule_next_arrival(&mut self, from: u64) {
        let rng = &mut self.st.rng.arrivals;
        let duration_ns = self.cfg.duration_ns;
        let t = match &self.cfg.arrival {
            Arrival::Poisson { rate_per_s } => from as f64 + rng.exponential(NS_PER_S / rate_per_s),
            Arrival::Gamma { rate_per_s, cv } => {
                let shape = 1.0 / (cv * cv);
                from as f64 + gamma(rng, shape, NS_PER_S / rate_per_s / shape)
            }
            Arrival::Schedule {
                points,
                cv: Some(cv),
            } if (cv - 1.0).abs() > 1e-12 => {
                // Gamma gaps of mean 1 in the schedule's own time (its
                // cumulative rate), mapped back to seconds: the rate over
                // time is the schedule's, the burstiness `cv`'s.
                let shape = 1.0 / (cv * cv);
                let gap = gamma(rng, shape, 1.0 / shape);
                schedule_advance(points, from as f64 / NS_PER_S, gap) * NS_PER_S
            }
            Arrival::Schedule { points, .. } => {
                // Thinning (Lewis–Shedler): candidates at the peak rate, each kept
                // with probability rate(t) / peak. Bounded by the arrival window.
                let peak = points.iter().map(|p| p.rate_per_s).fold(0.0, f64::max);
                let mut t = from as f64;
                loop {
                    t += rng.exponential(NS_PER_S / peak);
                    if t >= duration_ns as f64 {
                        break;
                    }
                    let rate = schedule_rate(points, t / NS_PER_S);
                    if rng.uniform() * peak < rate {
                        break;
                    }
                }
                t
            }
            Arrival::Stages { stages } => {
                // Poisson within each stage; at a boundary the next stage's rate
                // takes over (exponential gaps are memoryless, so restarting
                // the draw there is exact). Bounded by the stage count.
                let mut t = from as f64;
                let mut start = 0.0;
                let mut i = 0;
                while i + 1 < stages.len() && t >= start + stages[i].duration_s * NS_PER_S {
                    start += stages[i].duration_s * NS_PER_S;
                    i += 1;
                }
                loop {
                    let last = i + 1 == stages.len();
                    let end = start + stages[i].duration_s * NS_PER_S;
                    let rate = stages[i].rate_per_s;
                    if rate > 0.0 {
                        let next = t + rng.exponential(NS_PER_S / rate);
                        if last || next < end {
                            break next;
                        }
                    } else if last {
                        break f64::INFINITY;
                    }
                    t = end;
                    start = end;
                    i += 1;
                }
            }
            _ => return,
        };
        // Never before now, but for the rounding of a schedule's seconds
        // (within a microsecond; the push below moves it past now).
        debug_assert!(
            !t.is_nan() && t >= from as f64 - 1e3,
            "the next arrival at {t} ns is before now, {from} ns"
        );
        if t < duration_ns as f64 {
            // Two arrivals never share an instant: time always moves forward by ≥ 1 ns.
            self.st
                .events
                .push((t as u64).max(from + 1).min(duration_ns), Event::Arrival);
        }
    }

    fn draw_class(&mut self) -> u16 {
        let n = self.cfg.classes.len();
        if n == 1 {
            return 0;
        }
        let u = self.st.rng.lengths.uniform();
        self.cfg.class_cdf.partition_point(|&c| c <= u).min(n - 1) as u16
    }

    pub(super) fn change_users(&mut self, step: u32) {
        let Arrival::ClosedLoop { users, .. } = &self.cfg.arrival else {
            return;
        };
        let target = users[step as usize].users;
        // Steps after the arrival window would change nobody's behaviour.
        if let Some(next) = users.get(step as usize + 1)
            && secs_to_ns(next.at_s) < self.cfg.duration_ns
        {
            self.st
                .events
                .push(secs_to_ns(next.at_s), Event::UsersChange { step: step + 1 });
        }
        let u = &mut self.st.users;
        let old = u.target;
        u.target = target;
        if u.active.len() < target as usize {
            u.active.resize(target as usize, false);
            u.pending.resize(target as usize, false);
        }
        for i in target..old {
            self.st.users.active[i as usize] = false;
        }
        for i in 0..target {
            if !self.st.users.active[i as usize] {
                self.st.users.active[i as usize] = true;
                if !self.st.users.pending[i as usize] {
                    // New users arrive spread over one think time, not all at once.
                    let think = self.draw_think();
                    self.wake_later(i, think);
                }
            }
        }
    }

    fn draw_think(&mut self) -> u64 {
        match &self.cfg.think {
            Some(s) => secs_to_ns(s.sample(&mut self.st.rng.think)),
            None => 0,
        }
    }

    /// A task ended: its user, if any, thinks and sends the next. After an
    /// error (rejected, failed) a user waits at least [`ERROR_BACKOFF_NS`], as
    /// a person or a client does before trying again.
    /// `seen` is how long the answer still takes to reach the user.
    pub(super) fn user_done(&mut self, user: Option<u32>, after_error: bool, seen: u64) {
        let Some(user) = user else { return };
        let mut think = self.draw_think();
        if after_error {
            think = think.max(ERROR_BACKOFF_NS);
        }
        self.wake_later(user, later(think, seen));
    }

    /// Wake `user` after `think`, unless that falls after the arrival window
    /// (the user would send nothing): idle timers never extend the run.
    fn wake_later(&mut self, user: u32, think: u64) {
        let at = later(self.st.now, think);
        let pending = at < self.cfg.duration_ns;
        self.st.users.pending[user as usize] = pending;
        if pending {
            self.st.events.push(at, Event::UserWakes { user });
        }
    }
}

/// The rate of a piecewise-linear schedule at `t_s` seconds.
fn schedule_rate(points: &[RatePoint], t_s: f64) -> f64 {
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

/// The time (s) at which a piecewise-linear schedule's cumulative rate has
/// grown by `mass` arrivals since `t0_s` (infinite if it never does: a last
/// rate of 0). Walks the segments from `t0_s`, at most one pass over them.
fn schedule_advance(points: &[RatePoint], t0_s: f64, mass: f64) -> f64 {
    let mut t = t0_s;
    let mut left = mass;
    let mut i = points.partition_point(|p| p.at_s <= t);
    while let Some(b) = points.get(i) {
        // Up to the next point the rate is linear: the mass from t to b is a trapezoid.
        let (ra, rb) = (schedule_rate(points, t), b.rate_per_s);
        let len = b.at_s - t;
        let here = (ra + rb) / 2.0 * len;
        if here >= left && len > 0.0 {
            // Solve ra·x + k·x² = left, k = (rb − ra) / (2·len), stably.
            let k = (rb - ra) / (2.0 * len);
            let x = 2.0 * left / (ra + (ra * ra + 4.0 * k * left).max(0.0).sqrt()).max(1e-300);
            return t + x.min(len);
        }
        left -= here;
        t = b.at_s;
        i += 1;
    }
    // Before the first point (never: it is at 0) or after the last: its rate holds.
    let last = points.last().map_or(0.0, |p| p.rate_per_s);
    if last > 0.0 {
        t + left / last
    } else {
        f64::INFINITY
    }
}
