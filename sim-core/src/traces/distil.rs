//! A trace distilled into a scenario that fits in a share link: its rate
//! over time as a schedule, its lengths as quantile tables, its prefix
//! reuse as shared prefixes. Its sliders then work like any scenario's; what
//! the distillation cannot keep is listed with it, and a run of both shows
//! what that costs.

use super::Imported;
use crate::dist::{Bin, Dist};
use crate::scenario::{
    Arrival, RatePoint, RequestClass, Scenario, SharedPrefix, TraceRef, TraceRequests, bounds,
};
use sha2::{Digest, Sha256};

/// Quantile levels a distilled length table keeps (every 2 %, then the far
/// tail): 55 bins, about 2 kB of JSON per table.
const LEVELS: [f64; 5] = [0.98, 0.99, 0.995, 0.999, 1.0];

/// Shortest window the rate schedule averages over, seconds.
const MIN_WINDOW_S: f64 = 60.0;
/// Most windows in the schedule.
const MAX_WINDOWS: f64 = 120.0;

/// A distilled trace: the scenario, and what it does not keep.
#[derive(Clone, Debug, PartialEq)]
pub struct Distilled {
    /// The scenario.
    pub scenario: Scenario,
    /// What the distillation loses, in sentences.
    pub loses: Vec<String>,
}

/// The quantile levels of a length table: 0, 0.02, …, 0.96, then [`LEVELS`].
fn levels() -> Vec<f64> {
    (0..49).map(|i| f64::from(i) * 0.02).chain(LEVELS).collect()
}

/// `values` as a quantile table: one bin between each pair of consecutive
/// levels' values, weighted by the levels' gap (a draw is then the
/// piecewise-linear quantile function at a uniform level).
pub fn quantile_table(values: impl Iterator<Item = f64>) -> Dist {
    let mut v: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    if v.is_empty() {
        return Dist::Fixed { value: 1.0 };
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| super::measured::quantile_of_sorted(&v, p);
    let l = levels();
    let bins = l
        .windows(2)
        .map(|w| Bin {
            lo: q(w[0]),
            hi: q(w[1]),
            weight: w[1] - w[0],
        })
        .collect();
    Dist::Empirical { bins }
}

/// The tokens of each request's prompt that an earlier request already
/// sent (its leading hashes seen before, in blocks of `block_tokens`,
/// capped at the prompt), and the first hash of each: `None` for a request
/// that shares nothing.
fn reused_prefixes(requests: &TraceRequests, block_tokens: u32) -> Vec<Option<(u64, u32)>> {
    let mut seen = std::collections::BTreeSet::new();
    (0..requests.len())
        .map(|i| {
            let r = requests.get(i);
            let shared = requests.hashes(i).take_while(|h| seen.contains(h)).count();
            seen.extend(requests.hashes(i));
            let tokens = (shared as u64 * u64::from(block_tokens)).min(u64::from(r.input_tokens));
            let first = requests.hashes(i).next().unwrap_or(0);
            (tokens > 0).then_some((first, tokens as u32))
        })
        .collect()
}

impl Imported {
    /// The trace as a scenario that fits in a share link, on `base`'s fleet
    /// and targets: requests per window of at least a minute as a
    /// piecewise-constant rate schedule; prompt and output lengths as quantile
    /// tables per class; and, where the trace has prefix hashes, the requests
    /// that reuse an earlier prompt's start as a class of their own with
    /// shared prefixes (as many as distinct reused starts, as long as the
    /// median reused start).
    ///
    /// The scenario always validates: what it cannot carry is said in
    /// [`Distilled::loses`] (a burst faster than a scenario's rate bound is
    /// spread out; a routing rule naming a class the trace does not have is
    /// dropped), and anything else it cannot express is an error naming it.
    pub fn distil(&self, base: &Scenario, name: &str) -> Result<Distilled, String> {
        let n = self.requests.len().max(1);
        let span = self.requests.last().map_or(0.0, |r| r.at_s);
        if !(span.is_finite() && span <= crate::scenario::bounds::DURATION_S) {
            return Err(format!(
                "the trace spans {} s; a distilled scenario covers at most {} s (a week): take a window of it",
                crate::format::show(span),
                crate::format::show(crate::scenario::bounds::DURATION_S)
            ));
        }
        let mut s = base.clone();
        s.name = format!("{name}, distilled");
        let mut loses = Vec::new();
        let (arrival, seconds) = schedule(&self.requests, span);
        s.set_duration(seconds);
        if seconds > span.ceil().max(1.0) {
            loses.push(format!(
                "how fast the trace's {} requests came: they arrive within {} s, faster than a scenario's highest rate ({} requests/s), so the distilled arrivals spread them over {} s",
                crate::format::thousands(n as u64),
                crate::format::show(span),
                crate::format::thousands(crate::scenario::bounds::RATE_PER_S as u64),
                crate::format::show(seconds)
            ));
        }
        s.workload.arrival = arrival;
        s.workload.classes = self.classes(base);
        loses.push("the order of requests: arrivals are a gamma process at each window's rate with the trace's burstiness over one second (one CV for the whole trace), so bursts that last longer are smoothed and the tail of TTFT comes out lower".to_owned());
        loses.push("the tie between a request's prompt and output lengths (each is drawn from its own quantile table)".to_owned());
        if self.prefix_block_tokens.is_some() {
            loses.push("which requests share which prefix: reuse becomes shared prefixes of one length, chosen at random, so a cache sees the same number of distinct starts but not their order".to_owned());
        }
        drop_unknown_rules(&mut s, &mut loses);
        s.check()
            .map_err(|e| format!("the distilled scenario cannot carry this trace: {e}"))?;
        Ok(Distilled { scenario: s, loses })
    }

    /// The trace's request classes, each as quantile tables of its lengths;
    /// with prefix hashes, the requests reusing an earlier prompt's start as
    /// a class of their own with shared prefixes. Fields the trace does not
    /// give are `base`'s first class's.
    fn classes(&self, base: &Scenario) -> Vec<RequestClass> {
        let n = self.requests.len().max(1);
        let template = base.workload.classes.first().cloned().unwrap_or_else(|| {
            RequestClass::new(
                "trace",
                Dist::Fixed { value: 1.0 },
                Dist::Fixed { value: 1.0 },
                1,
            )
        });
        let reused = self
            .prefix_block_tokens
            .map(|t| reused_prefixes(&self.requests, t));
        let class_names: Vec<String> = if self.classes.is_empty() {
            vec!["trace".into()]
        } else {
            self.classes.clone()
        };
        let mut classes = Vec::new();
        for (c, cname) in class_names.iter().enumerate() {
            let of_class =
                |i: &usize| self.classes.is_empty() || self.requests.get(*i).class as usize == c;
            let indices: Vec<usize> = (0..self.requests.len()).filter(of_class).collect();
            // Requests that reuse an earlier prompt's start, and the rest.
            let (sharing, fresh): (Vec<usize>, Vec<usize>) = indices
                .iter()
                .partition(|&&i| reused.as_ref().is_some_and(|r| r[i].is_some()));
            let class = |members: &[usize], suffix: &str, cut: u32| {
                let r = |i: &usize| self.requests.get(*i);
                RequestClass {
                    name: format!("{cname}{suffix}"),
                    share: members.len() as f64 / n as f64,
                    input_tokens: quantile_table(
                        members
                            .iter()
                            .map(|i| f64::from(r(i).input_tokens.saturating_sub(cut).max(1))),
                    ),
                    output_tokens: quantile_table(
                        members.iter().map(|i| f64::from(r(i).output_tokens)),
                    ),
                    max_tokens: members
                        .iter()
                        .map(|i| r(i).output_tokens)
                        .max()
                        .unwrap_or(1),
                    calls_per_task: 1,
                    shared_prefix: None,
                    conversation: None,
                    reasoning_tokens: None,
                    priority: None,
                    slo: None,
                    ..template.clone()
                }
            };
            if !sharing.is_empty() {
                let reused = reused.as_ref().map_or(&[][..], |r| &r[..]);
                let mut tokens: Vec<u32> = sharing
                    .iter()
                    .filter_map(|&i| reused[i].map(|(_, t)| t))
                    .collect();
                tokens.sort_unstable();
                let median = tokens[tokens.len() / 2].max(1);
                let starts: std::collections::BTreeSet<u64> = sharing
                    .iter()
                    .filter_map(|&i| reused[i].map(|(h, _)| h))
                    .collect();
                let mut k = class(&sharing, " (reuses a prefix)", median);
                k.shared_prefix = Some(SharedPrefix {
                    prompts: u32::try_from(starts.len())
                        .unwrap_or(u32::MAX)
                        .clamp(1, 1_000_000),
                    tokens: median,
                });
                classes.push(k);
            }
            if !fresh.is_empty() {
                classes.push(class(&fresh, "", 0));
            }
        }
        classes
    }
}

/// Drop the rules that route by a class the distilled traffic does not
/// have, saying so in `loses`.
fn drop_unknown_rules(s: &mut Scenario, loses: &mut Vec<String>) {
    let known = |c: &str| s.workload.classes.iter().any(|k| k.name == c);
    let (kept, dropped): (Vec<_>, Vec<_>) = std::mem::take(&mut s.routing)
        .into_iter()
        .partition(|r| r.class.as_deref().is_none_or(known));
    s.routing = kept;
    if !dropped.is_empty() {
        loses.push(format!(
            "the routing rule{} {}: the trace's requests are classed {}, not by {}",
            if dropped.len() == 1 { "" } else { "s" },
            crate::params::routing_text(&dropped),
            s.workload
                .classes
                .iter()
                .map(|k| format!("{:?}", k.name))
                .collect::<Vec<_>>()
                .join(", "),
            if dropped.len() == 1 {
                "the class it names"
            } else {
                "the classes they name"
            }
        ));
    }
}

/// The coefficient of variation of the gaps between consecutive values of
/// `t` (ascending), within the gamma process's bounds; 1 for fewer than 3.
fn gap_cv(t: &[f64]) -> f64 {
    let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.len() < 2 {
        return 1.0;
    }
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
    if mean > 0.0 {
        (var.sqrt() / mean).clamp(0.05, 20.0)
    } else {
        20.0
    }
}

/// The requests per window as a piecewise-constant rate (two points per
/// window, its start and just before its end), with the burstiness left
/// once that rate is taken out (the dispersion of arrivals per second); a
/// gamma process at the mean rate, with its gaps' CV, for a trace shorter
/// than two windows.
///
/// Returns it with the seconds it lasts: the trace's span, or longer where
/// a burst is faster than a scenario's rate bound (a window's rate is then
/// the bound, over as long as the requests need).
fn schedule(requests: &TraceRequests, span: f64) -> (Arrival, f64) {
    let n = requests.len() as f64;
    let lasts = span.ceil().max(1.0);
    let at: Vec<f64> = requests.iter().map(|r| r.at_s).collect();
    if span < 2.0 * MIN_WINDOW_S {
        let rate_per_s = n / span.max(1.0);
        let (rate_per_s, lasts) = if rate_per_s > bounds::RATE_PER_S {
            (
                bounds::RATE_PER_S,
                (n / bounds::RATE_PER_S).ceil().max(lasts),
            )
        } else {
            (rate_per_s, lasts)
        };
        let arrival = match gap_cv(&at) {
            cv if (cv - 1.0).abs() < 1e-9 => Arrival::Poisson { rate_per_s },
            cv => Arrival::Gamma { rate_per_s, cv },
        };
        return (arrival, lasts);
    }
    let window = (span / MAX_WINDOWS).max(MIN_WINDOW_S);
    // As many windows as start before the span ends (the division may land
    // a hair above a whole number).
    let mut windows = (span / window).ceil().max(1.0) as usize;
    while windows > 1 && (windows - 1) as f64 * window >= span {
        windows -= 1;
    }
    let mut counts = vec![0u32; windows];
    for r in requests.iter() {
        let k = ((r.at_s / window) as usize).min(windows - 1);
        counts[k] += 1;
    }
    let mut points = Vec::with_capacity(2 * windows);
    for (k, c) in counts.iter().enumerate() {
        let rate = f64::from(*c) / window;
        let start = k as f64 * window;
        points.push(RatePoint {
            at_s: start,
            rate_per_s: rate,
        });
        // Within the longest window a scenario has (a week).
        points.push(RatePoint {
            at_s: (start + window * 0.999).min(bounds::DURATION_S),
            rate_per_s: rate,
        });
    }
    // Burstiness at the time scale a request is served on: the index of
    // dispersion of arrivals per second around the window's rate, which for
    // a renewal process is its gaps' CV squared.
    let seconds = span.ceil().max(1.0) as usize;
    let mut per_second = vec![0u32; seconds];
    for t in &at {
        per_second[(*t as usize).min(seconds - 1)] += 1;
    }
    let (mut squares, mut expected) = (0.0, 0.0);
    for (b, c) in per_second.iter().enumerate() {
        let k = ((b as f64 / window) as usize).min(windows - 1);
        let e = f64::from(counts[k]) / window;
        squares += (f64::from(*c) - e).powi(2);
        expected += e;
    }
    let cv = (squares / expected.max(1e-9)).sqrt().clamp(0.05, 20.0);
    // A window holds at most a trace's requests, and a trace at most
    // bounds::TRACE_REQUESTS: a minute's window stays under the rate bound.
    const _: () = assert!((bounds::TRACE_REQUESTS as f64) < bounds::RATE_PER_S * MIN_WINDOW_S);
    let arrival = Arrival::Schedule {
        points,
        // Kept even near 1: the burstiness control then works on it.
        cv: Some(cv),
    };
    (arrival, lasts)
}

/// SHA-256 of `bytes`, lowercase hex: how a link names a trace's file.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut d = FileDigest::default();
    d.update(bytes);
    d.hex()
}

/// A file's SHA-256 taken as its bytes are read, part by part: the same
/// digest as [`sha256_hex`] of the whole.
#[derive(Clone, Default)]
pub struct FileDigest(Sha256);

impl FileDigest {
    /// Add the next bytes of the file.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest, lowercase hex.
    pub fn hex(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl TraceRef {
    /// The reference to trace file `name` of content `text`, read as `t`
    /// with `options`.
    pub fn of(name: &str, text: &str, t: &Imported, options: &super::Options) -> TraceRef {
        Self::with_digest(name, sha256_hex(text.as_bytes()), t, options)
    }

    /// [`Self::of`], the file's SHA-256 taken as it was read
    /// ([`FileDigest`]).
    pub fn with_digest(
        name: &str,
        sha256: String,
        t: &Imported,
        options: &super::Options,
    ) -> TraceRef {
        TraceRef {
            name: name.to_owned(),
            sha256,
            requests: t.requests.len() as u64,
            summary: t.describe(name),
            speed: t.speed,
            window: options.window.map(|(a, b)| [a, b]),
            exact: false,
            skipped_lines: t.skipped.count,
        }
    }

    /// The options the trace was taken with.
    pub fn options(&self) -> super::Options {
        super::Options {
            speed: self.speed,
            rate_per_s: None,
            window: self.window.map(|[a, b]| (a, b)),
            class_column: None,
            skip_bad_lines: self.skipped_lines > 0,
        }
    }
}

/// What a link holds for `current` when it replays a trace too large for a
/// link: `current` (its fleet, targets, seed) with the distilled traffic of
/// `distilled` and its trace reference, marked as made of the exact replay.
pub fn link_form(current: &Scenario, distilled: &Scenario) -> Scenario {
    let mut s = current.clone();
    s.workload = distilled.workload.clone();
    s.set_duration(distilled.duration_s);
    s.distilled_from = distilled
        .distilled_from
        .clone()
        .map(|r| TraceRef { exact: true, ..r });
    s
}

/// The exact replay of trace `t` on `linked`'s fleet (a scenario that names
/// the trace it was distilled from): one class, the trace's own lengths, the
/// reference kept (so its link can be made).
pub fn exact_replay(linked: &Scenario, t: &Imported) -> Scenario {
    let mut s = linked.clone();
    // One class for the trace's requests (the distilled classes split them).
    s.workload.classes.truncate(1);
    if let Some(first) = s.workload.classes.first_mut() {
        first.name = "trace".into();
        first.share = 1.0;
    }
    t.apply_to(&mut s);
    s
}
