//! A replayed trace's requests, validated: each in range and in time
//! order, its hashes within its prompt; the common request checked without
//! naming it (a name is made only for a problem).

use super::validate::Checker;
use super::{TraceEntry, TraceRef, TraceRequests, Workload, bounds};

/// Problems of `workload.arrival`'s trace into `c`; returns its requests.
pub(super) fn check(
    c: &mut Checker,
    w: &Workload,
    requests: &TraceRequests,
    prefix_block_tokens: Option<u32>,
) -> f64 {
    let block = crate::physics::KV_BLOCK_TOKENS;
    if let Some(t) = prefix_block_tokens
        && (!(block..=bounds::PREFIX_BLOCK_TOKENS).contains(&t) || t % block != 0)
    {
        c.problems.push(format!(
            "workload.arrival.prefix_block_tokens must be a multiple of the KV block ({block} tokens) from {block} to {}, got {t}",
            bounds::PREFIX_BLOCK_TOKENS
        ));
    }
    if requests.is_streamed() {
        return check_streamed(c, w, &requests.stats(), prefix_block_tokens);
    }
    let n = requests.len();
    if n == 0 || n > bounds::TRACE_REQUESTS {
        c.problems.push(format!(
            "workload.arrival.requests must have 1..={} requests, got {n}",
            bounds::TRACE_REQUESTS
        ));
    }
    let mut last = 0.0;
    for (i, r) in requests.iter().take(bounds::TRACE_REQUESTS).enumerate() {
        let hashes = requests.hash_count(i);
        let repeat = super::repeated_hash(requests.hashes(i));
        // The common case, without naming the request.
        let tokens = 1..=bounds::TOKENS;
        if r.at_s >= last
            && r.at_s <= bounds::DURATION_S
            && tokens.contains(&r.input_tokens)
            && tokens.contains(&r.output_tokens)
            && (r.class as usize) < w.classes.len().max(1)
            && repeat.is_none()
            && (hashes == 0
                || prefix_block_tokens.is_some_and(|t| {
                    t == 0 || hashes as u64 <= u64::from(r.input_tokens.div_ceil(t))
                }))
        {
            last = r.at_s;
            continue;
        }
        request_problems(
            c,
            w,
            i,
            &r,
            (hashes, repeat),
            prefix_block_tokens,
            &mut last,
        );
        if c.problems.len() > 50 {
            break;
        }
    }
    n as f64
}

/// The problems of trace request `i`, which failed the common case's check,
/// each naming it; `last` is the previous request's time, moved to its own.
fn request_problems(
    c: &mut Checker,
    w: &Workload,
    i: usize,
    r: &TraceEntry,
    (hashes, repeat): (usize, Option<u64>),
    prefix_block_tokens: Option<u32>,
    last: &mut f64,
) {
    let f = format!("workload.arrival.requests[{i}]");
    if let Some(h) = repeat {
        c.problems.push(format!(
            "{f}.prefix_blocks names {h} twice: each of a prompt's blocks has a hash of its own"
        ));
    }
    c.range_f(&format!("{f}.at_s"), r.at_s, 0.0, bounds::DURATION_S, " s");
    if r.at_s < *last {
        c.problems.push(format!(
            "{f}.at_s must not be before the previous request's {}, got {}",
            *last, r.at_s
        ));
    }
    if r.at_s.is_finite() {
        *last = r.at_s;
    }
    c.range_u(
        &format!("{f}.input_tokens"),
        u64::from(r.input_tokens),
        1,
        u64::from(bounds::TOKENS),
    );
    c.range_u(
        &format!("{f}.output_tokens"),
        u64::from(r.output_tokens),
        1,
        u64::from(bounds::TOKENS),
    );
    if r.class as usize >= w.classes.len().max(1) {
        c.problems.push(format!(
            "{f}.class must be 0..{} (an index into workload.classes), got {}",
            w.classes.len(),
            r.class
        ));
    }
    if hashes > 0 {
        match prefix_block_tokens {
            None => c.problems.push(format!(
                "{f}.prefix_blocks needs workload.arrival.prefix_block_tokens (how many tokens each hash covers)"
            )),
            Some(t) if t > 0 && hashes as u64 > u64::from(r.input_tokens.div_ceil(t)) => {
                c.problems.push(format!(
                    "{f}.prefix_blocks has {} hashes, more than its {} prompt tokens fill at {t} tokens each ({} at most)",
                    hashes,
                    r.input_tokens,
                    r.input_tokens.div_ceil(t)
                ));
            }
            Some(_) => {}
        }
    }
}

/// A streamed trace's numbers (its reader checked each request as it read
/// it, and checks each again as the run reads it).
fn check_streamed(
    c: &mut Checker,
    w: &Workload,
    s: &super::TraceStats,
    prefix_block_tokens: Option<u32>,
) -> f64 {
    if s.requests == 0 || s.requests > bounds::STREAMED_TRACE_REQUESTS {
        c.problems.push(format!(
            "the trace must have 1..={} requests to replay, got {}",
            bounds::STREAMED_TRACE_REQUESTS,
            s.requests
        ));
    }
    c.range_f(
        "the trace's last arrival",
        s.last_at_s,
        0.0,
        bounds::DURATION_S,
        " s",
    );
    let tokens = u64::from(bounds::TOKENS);
    c.range_u(
        "the trace's shortest prompt",
        u64::from(s.min_input),
        1,
        tokens,
    );
    c.range_u(
        "the trace's longest prompt",
        u64::from(s.max_input),
        1,
        tokens,
    );
    if s.classes as usize > w.classes.len().max(1) {
        c.problems.push(format!(
            "the trace names {} classes, the scenario has {}",
            s.classes,
            w.classes.len()
        ));
    }
    if s.hashes && prefix_block_tokens.is_none() {
        c.problems.push(
            "the trace's prefix blocks need workload.arrival.prefix_block_tokens (how many tokens each hash covers)"
                .into(),
        );
    }
    s.requests as f64
}

impl TraceRef {
    /// Every field out of bounds, under `field`.
    pub fn problems(&self, field: &str) -> Vec<String> {
        let mut out = Vec::new();
        if self.name.chars().count() > 300 {
            out.push(format!("{field}.name must be at most 300 characters"));
        }
        if self.sha256.len() != 64 || !self.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            out.push(format!("{field}.sha256 must be 64 hexadecimal digits"));
        }
        if self.summary.chars().count() > 4000 {
            out.push(format!("{field}.summary must be at most 4000 characters"));
        }
        if !(self.speed.is_finite() && self.speed > 0.0 && self.speed <= 1e6) {
            out.push(format!(
                "{field}.speed must be > 0 and ≤ 1000000, got {}",
                self.speed
            ));
        }
        if let Some([a, b]) = self.window
            && !(a.is_finite() && b.is_finite() && a < b)
        {
            out.push(format!(
                "{field}.window must be two finite times, the first earlier"
            ));
        }
        out
    }
}
