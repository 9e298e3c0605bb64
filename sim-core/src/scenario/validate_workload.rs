//! Validation of the workload: the arrival process, the work bounds it
//! implies, and each request class.

use super::validate::Checker;
use super::*;

impl Scenario {
    pub(super) fn validate_workload(&self, c: &mut Checker) {
        let w = &self.workload;
        let d = if self.duration_s.is_finite() {
            self.duration_s.clamp(0.0, bounds::DURATION_S)
        } else {
            0.0
        };
        let expected_tasks = match &w.arrival {
            Arrival::Poisson { rate_per_s } => {
                c.positive_f(
                    "workload.arrival.rate_per_s",
                    *rate_per_s,
                    bounds::RATE_PER_S,
                    " tasks/s",
                );
                rate_per_s * d
            }
            Arrival::Gamma { rate_per_s, cv } => {
                c.positive_f(
                    "workload.arrival.rate_per_s",
                    *rate_per_s,
                    bounds::RATE_PER_S,
                    " tasks/s",
                );
                c.range_f("workload.arrival.cv", *cv, 0.05, 20.0, "");
                rate_per_s * d
            }
            Arrival::Schedule { points, cv } => schedule_tasks(points, *cv, d, c),
            Arrival::Stages { stages } => stages_tasks(stages, d, c),
            Arrival::ClosedLoop {
                users,
                think_time_s,
            } => closed_loop_tasks(users, think_time_s, d, c),
            Arrival::Trace {
                requests,
                prefix_block_tokens,
            } => super::validate_trace::check(c, w, requests, *prefix_block_tokens),
        };
        c.expected_tasks = expected_tasks;
        check_work(w, expected_tasks, c);
        let n = w.classes.len();
        if n == 0 || n > bounds::CLASSES {
            c.problems.push(format!(
                "workload.classes must have 1..={} classes, got {n}",
                bounds::CLASSES
            ));
        }
        let mut total_share = 0.0;
        for (i, k) in w.classes.iter().take(bounds::CLASSES).enumerate() {
            validate_class(w, i, c);
            if k.share.is_finite() {
                total_share += k.share;
            }
        }
        if n > 0 && total_share <= 0.0 && !matches!(w.arrival, Arrival::Trace { .. }) {
            let which = if n == 1 {
                "workload.classes[0].share".to_owned()
            } else {
                format!(
                    "one of workload.classes[0..{n}].share (workload.classes[0].share and the rest)"
                )
            };
            c.problems.push(format!(
                "{which} must be > 0: a workload needs some traffic, got every share 0"
            ));
        }
    }
}

/// A schedule's points: in order, rates within bounds, one above 0; the
/// tasks it sends at its peak rate.
fn schedule_tasks(points: &[RatePoint], cv: Option<f64>, d: f64, c: &mut Checker) -> f64 {
    if let Some(cv) = cv {
        c.range_f("workload.arrival.cv", cv, 0.05, 20.0, "");
    }
    let times: Vec<f64> = points.iter().map(|p| p.at_s).collect();
    c.schedule("workload.arrival.points", "point", &times);
    let mut peak: f64 = 0.0;
    for (i, p) in points.iter().take(bounds::SCHEDULE_POINTS).enumerate() {
        c.range_f(
            &format!("workload.arrival.points[{i}].rate_per_s"),
            p.rate_per_s,
            0.0,
            bounds::RATE_PER_S,
            " tasks/s",
        );
        if p.rate_per_s.is_finite() {
            peak = peak.max(p.rate_per_s);
        }
    }
    if !points.is_empty() && peak <= 0.0 {
        c.problems
            .push("workload.arrival.points: at least one rate must be > 0".into());
    }
    peak * d
}

/// Load stages: each rate and duration within bounds, one rate above 0;
/// the tasks they send over the run (the last stage's rate holds after).
fn stages_tasks(stages: &[Stage], d: f64, c: &mut Checker) -> f64 {
    let n = stages.len();
    if n == 0 || n > bounds::SCHEDULE_POINTS {
        c.problems.push(format!(
            "workload.arrival.stages must have 1..={} stages, got {n}",
            bounds::SCHEDULE_POINTS
        ));
    }
    let (mut peak, mut start) = (0.0_f64, 0.0);
    let mut expected = 0.0;
    for (i, st) in stages.iter().take(bounds::SCHEDULE_POINTS).enumerate() {
        let f = format!("workload.arrival.stages[{i}]");
        c.range_f(
            &format!("{f}.rate_per_s"),
            st.rate_per_s,
            0.0,
            bounds::RATE_PER_S,
            " tasks/s",
        );
        c.positive_f(
            &format!("{f}.duration_s"),
            st.duration_s,
            bounds::DURATION_S,
            " s",
        );
        if st.rate_per_s.is_finite() && st.duration_s.is_finite() {
            // A negative duration is reported above; it spans nothing
            // here (and `clamp` must never see min > max).
            let span = st.duration_s.max(0.0);
            peak = peak.max(st.rate_per_s);
            expected += st.rate_per_s * (d - start).max(0.0).min(span);
            start += span;
        }
    }
    if n > 0 && peak <= 0.0 {
        c.problems.push(
            "workload.arrival.stages[0].rate_per_s (or a later stage's) must be > 0: every stage has rate 0".into(),
        );
    }
    // The last stage's rate holds after the stages end.
    let last = stages.last().map_or(0.0, |s| s.rate_per_s);
    if last.is_finite() {
        expected += last * (d - start).max(0.0);
    }
    expected
}

/// Closed-loop users: steps in order, counts and think time within
/// bounds; at most one task per user per think time (10 ms at least).
fn closed_loop_tasks(users: &[UserStep], think_time_s: &Dist, d: f64, c: &mut Checker) -> f64 {
    let times: Vec<f64> = users.iter().map(|u| u.at_s).collect();
    c.schedule("workload.arrival.users", "step", &times);
    let mut peak = 0u32;
    for (i, u) in users.iter().take(bounds::SCHEDULE_POINTS).enumerate() {
        c.range_u(
            &format!("workload.arrival.users[{i}].users"),
            u64::from(u.users),
            0,
            u64::from(bounds::USERS),
        );
        peak = peak.max(u.users);
    }
    think_time_s.validate(
        "workload.arrival.think_time_s",
        bounds::TIME_S,
        &mut c.problems,
    );
    // A user sends at most one task per think time plus service time;
    // bound by think time alone, with a floor of 10 ms per task.
    let mean_think = think_time_s.mean().max(1e-2);
    f64::from(peak) * d / mean_think
}

/// The work bounds: the tasks the arrivals send, and the requests their
/// calls make, stay within what a run may hold.
fn check_work(w: &Workload, expected_tasks: f64, c: &mut Checker) {
    if expected_tasks > bounds::EXPECTED_TASKS {
        c.problems.push(format!(
            "workload: the arrival process would send about {expected_tasks:.0} tasks in duration_s; at most {} are allowed — lower the rate, the users or the duration",
            bounds::EXPECTED_TASKS
        ));
    } else {
        let total_share: f64 = w.classes.iter().map(|k| k.share.max(0.0)).sum();
        let calls = if total_share > 0.0 {
            w.classes
                .iter()
                .map(|k| k.share.max(0.0) * f64::from(k.calls_per_task))
                .sum::<f64>()
                / total_share
        } else {
            1.0
        };
        let requests = expected_tasks * calls;
        if requests > bounds::EXPECTED_REQUESTS {
            c.problems.push(format!(
                "workload: about {expected_tasks:.0} tasks of {calls:.1} calls each would send {requests:.0} requests; at most {} are allowed — lower the rate, the users, the duration or workload.classes[].calls_per_task",
                bounds::EXPECTED_REQUESTS
            ));
        }
    }
}

/// One request class: its name, share, lengths, limits and options.
fn validate_class(w: &Workload, i: usize, c: &mut Checker) {
    let k = &w.classes[i];
    let f = format!("workload.classes[{i}]");
    if k.name.is_empty() || k.name.len() > 64 {
        c.problems.push(format!(
            "{f}.name must be 1..=64 bytes, got {}",
            k.name.len()
        ));
    }
    if w.classes[..i].iter().any(|o| o.name == k.name) {
        c.problems.push(format!(
            "{f}.name {:?} is used by an earlier class; class names must differ (reports and routes name classes)",
            k.name
        ));
    }
    c.range_f(&format!("{f}.share"), k.share, 0.0, 1e6, "");
    let max_tok = f64::from(bounds::TOKENS);
    k.input_tokens
        .validate(&format!("{f}.input_tokens"), max_tok, &mut c.problems);
    k.output_tokens
        .validate(&format!("{f}.output_tokens"), max_tok, &mut c.problems);
    c.range_u(
        &format!("{f}.max_tokens"),
        u64::from(k.max_tokens),
        1,
        u64::from(bounds::TOKENS),
    );
    c.range_u(
        &format!("{f}.calls_per_task"),
        u64::from(k.calls_per_task),
        1,
        u64::from(bounds::CALLS_PER_TASK),
    );
    if let Some(p) = &k.shared_prefix {
        c.range_u(
            &format!("{f}.shared_prefix.prompts"),
            u64::from(p.prompts),
            1,
            1_000_000,
        );
        c.range_u(
            &format!("{f}.shared_prefix.tokens"),
            u64::from(p.tokens),
            1,
            u64::from(bounds::TOKENS),
        );
    }
    if let Some(t) = k.timeout_s {
        c.positive_f(&format!("{f}.timeout_s"), t, bounds::TIME_S, " s");
    }
    if let Some(t) = &k.slo {
        c.positive_f(&format!("{f}.slo.ttft_ms"), t.ttft_ms, 1e9, " ms");
        c.positive_f(&format!("{f}.slo.tpot_ms"), t.tpot_ms, 1e9, " ms");
    }
    if let Some(p) = k.priority {
        let most = u64::from(bounds::PRIORITY);
        c.range_u(&format!("{f}.priority"), u64::from(p), 0, most);
    }
    if let Some(r) = &k.reasoning_tokens {
        r.validate(&format!("{f}.reasoning_tokens"), max_tok, &mut c.problems);
    }
    if let Some(conv) = &k.conversation {
        conv.think_time_s.validate(
            &format!("{f}.conversation.think_time_s"),
            bounds::TIME_S,
            &mut c.problems,
        );
    }
}
