//! Streaming metrics: O(1) per request, memory independent of the request count.
//!
//! Run-wide percentiles come from HDR histograms (3 significant digits); windowed
//! percentiles from small log-bucketed histograms (8 buckets per octave, ≈ 9 %
//! resolution), enough for a chart. Means and maxima are exact.

use crate::report::{LatencyStats, Series};
use hdrhistogram::Histogram;

/// Most windows a time series keeps; beyond it, neighbouring windows merge.
pub const MAX_WINDOWS: usize = 500;

/// A latency distribution recorded in microseconds.
#[derive(Clone, Debug)]
pub struct LatencyRecorder {
    hist: Counts,
    sum_us: u128,
    max_us: u64,
}

/// Where a recorder counts: an HDR histogram (3 significant digits, 16 KB
/// and more as values grow: up to ≈ 400 KB for hour-long latencies), or a
/// fixed 2 KB log histogram (≈ 9 % buckets) where many recorders live at once.
#[derive(Clone, Debug)]
enum Counts {
    Exact(Histogram<u64>),
    Compact(LogHist),
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        // Auto-resizing from 1 µs: the counts array grows only as far as the
        // largest value recorded.
        Self::with(Counts::Exact(
            Histogram::new(3).unwrap_or_else(|_| unreachable_histogram()),
        ))
    }
}

fn unreachable_histogram() -> Histogram<u64> {
    // `Histogram::new(3)` only fails for sigfig > 5; keep a fallback anyway.
    Histogram::new_with_bounds(1, 2, 0).unwrap_or_else(|_| std::process::abort())
}

impl LatencyRecorder {
    fn with(hist: Counts) -> Self {
        LatencyRecorder {
            hist,
            sum_us: 0,
            max_us: 0,
        }
    }

    /// A recorder of fixed size (2 KB, ≈ 9 % resolution on percentiles; the
    /// mean and maximum stay exact), for breakdowns with many parts.
    pub fn compact() -> Self {
        Self::with(Counts::Compact(LogHist::default()))
    }

    /// Record one latency in nanoseconds.
    pub fn record_ns(&mut self, ns: u64) {
        let us = ns / 1_000;
        match &mut self.hist {
            Counts::Exact(h) => {
                if h.record(us).is_err() {
                    h.saturating_record(us);
                }
            }
            Counts::Compact(h) => h.record(us),
        }
        self.sum_us += u128::from(us);
        self.max_us = self.max_us.max(us);
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        match &self.hist {
            Counts::Exact(h) => h.len(),
            Counts::Compact(h) => h.n,
        }
    }

    /// The value at quantile `q`, µs, never above the maximum (needs a sample).
    fn at_quantile_us(&self, q: f64) -> u64 {
        let v = match &self.hist {
            Counts::Exact(h) => h.value_at_quantile(q),
            Counts::Compact(h) => h.quantile(q).unwrap_or(0),
        };
        v.min(self.max_us)
    }

    /// The value at each quantile, ms (empty when nothing was recorded).
    pub fn quantiles_ms(&self, qs: &[f64]) -> Vec<f64> {
        if self.count() == 0 {
            return Vec::new();
        }
        qs.iter()
            .map(|&q| self.at_quantile_us(q) as f64 / 1000.0)
            .collect()
    }

    /// Summary statistics in milliseconds.
    pub fn stats(&self) -> LatencyStats {
        let n = self.count();
        if n == 0 {
            return LatencyStats::default();
        }
        let ms = |us: u64| Some(us as f64 / 1000.0);
        let q = |p: f64| ms(self.at_quantile_us(p));
        LatencyStats {
            count: n,
            mean_ms: Some(self.sum_us as f64 / n as f64 / 1000.0),
            p50_ms: q(0.50),
            p90_ms: q(0.90),
            p95_ms: q(0.95),
            p99_ms: q(0.99),
            max_ms: ms(self.max_us),
        }
    }
}

/// A compact histogram of microsecond values with 8 log-spaced buckets per octave.
#[derive(Clone, Debug)]
pub struct LogHist {
    counts: Box<[u32; 512]>,
    n: u64,
}

impl Default for LogHist {
    fn default() -> Self {
        LogHist {
            counts: Box::new([0; 512]),
            n: 0,
        }
    }
}

impl LogHist {
    fn index(v: u64) -> usize {
        if v < 16 {
            return v as usize;
        }
        let msb = 63 - u64::from(v.leading_zeros());
        let frac = (v >> (msb - 3)) & 7;
        (msb as usize - 2) * 8 + frac as usize
    }

    fn lower_bound(i: usize) -> u64 {
        if i < 16 {
            return i as u64;
        }
        let msb = (i / 8 + 2) as u64;
        let frac = (i % 8) as u64;
        (8 + frac) << (msb - 3)
    }

    /// Record one value.
    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        self.counts[i] = self.counts[i].saturating_add(1);
        self.n += 1;
    }

    /// Add another histogram's counts.
    pub fn merge(&mut self, other: &LogHist) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a = a.saturating_add(*b);
        }
        self.n += other.n;
    }

    /// The value at quantile `q` (the midpoint of its bucket), or None if empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = libm::ceil(q * self.n as f64).max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                let lo = Self::lower_bound(i);
                let hi = Self::lower_bound(i + 1).max(lo + 1);
                return Some(lo + (hi - lo - 1) / 2);
            }
        }
        None
    }
}

/// Accumulators of one time-series window.
#[derive(Clone, Debug, Default)]
struct Window {
    arrivals: u64,
    queue_area: f64,
    in_flight_area: f64,
    busy_ns: f64,
    batch_area: f64,
    kv_area: f64,
    output_tokens: u64,
    ttft: Option<LogHist>,
    e2e: Option<LogHist>,
    visible: Option<LogHist>,
    throttled: u64,
    retries: u64,
    input_tokens: u64,
    api_tokens: u64,
    fill_sum: f64,
    fill_n: u64,
    up_area: f64,
}

impl Window {
    fn merge(&mut self, o: Window) {
        self.arrivals += o.arrivals;
        self.queue_area += o.queue_area;
        self.in_flight_area += o.in_flight_area;
        self.busy_ns += o.busy_ns;
        self.batch_area += o.batch_area;
        self.kv_area += o.kv_area;
        self.output_tokens += o.output_tokens;
        self.throttled += o.throttled;
        self.retries += o.retries;
        self.input_tokens += o.input_tokens;
        self.api_tokens += o.api_tokens;
        self.fill_sum += o.fill_sum;
        self.fill_n += o.fill_n;
        self.up_area += o.up_area;
        for (mine, theirs) in [
            (&mut self.ttft, o.ttft),
            (&mut self.e2e, o.e2e),
            (&mut self.visible, o.visible),
        ] {
            match (mine.as_mut(), theirs) {
                (Some(m), Some(t)) => m.merge(&t),
                (None, Some(t)) => *mine = Some(t),
                _ => {}
            }
        }
    }
}

/// Fixed-width windows over simulated time, merged pairwise when they would
/// exceed [`MAX_WINDOWS`], so memory stays bounded whatever the run length.
#[derive(Clone, Debug)]
pub struct Windows {
    width_ns: u64,
    windows: Vec<Window>,
    /// The window last found and the simulated time it spans (`at`'s
    /// shortcut: most events fall in the window of the one before).
    last: (usize, u64, u64),
}

impl Windows {
    /// Windows of `width_ns` (at least 1 ms).
    pub fn new(width_ns: u64) -> Self {
        Windows {
            width_ns: width_ns.max(1_000_000),
            windows: Vec::new(),
            last: (0, 0, 0),
        }
    }

    fn at(&mut self, t_ns: u64) -> &mut Window {
        let (last, from, to) = self.last;
        if (from..to).contains(&t_ns) {
            debug_assert_eq!(last, (t_ns / self.width_ns) as usize);
            return &mut self.windows[last];
        }
        let mut i = (t_ns / self.width_ns) as usize;
        while i >= MAX_WINDOWS {
            self.coarsen();
            i = (t_ns / self.width_ns) as usize;
        }
        if self.windows.len() <= i {
            self.windows.resize_with(i + 1, Window::default);
        }
        let from = i as u64 * self.width_ns;
        self.last = (i, from, from.saturating_add(self.width_ns));
        &mut self.windows[i]
    }

    fn coarsen(&mut self) {
        self.last = (0, 0, 0);
        let old = std::mem::take(&mut self.windows);
        let mut it = old.into_iter();
        while let Some(mut a) = it.next() {
            if let Some(b) = it.next() {
                a.merge(b);
            }
            self.windows.push(a);
        }
        self.width_ns = self.width_ns.saturating_mul(2);
    }

    /// Spread a time-weighted quantity over `[start, end)`: `f` receives each
    /// window crossed and the nanoseconds of overlap.
    fn spread(&mut self, start: u64, end: u64, mut f: impl FnMut(&mut Window, f64)) {
        let mut t = start;
        // Bounded: each pass moves t to the next window edge or to `end`.
        while t < end {
            let w = self.width_ns;
            let edge = (t / w + 1).saturating_mul(w).min(end);
            let dt = (edge - t) as f64;
            f(self.at(t), dt);
            t = edge;
        }
    }

    /// Queue depth and in-flight count held constant over `[start, end)`.
    pub fn levels(&mut self, start: u64, end: u64, queue: u64, in_flight: u64) {
        if queue == 0 && in_flight == 0 {
            return;
        }
        let (q, f) = (queue as f64, in_flight as f64);
        self.spread(start, end, |w, dt| {
            w.queue_area += q * dt;
            w.in_flight_area += f * dt;
        });
    }

    /// `up` replicas were up over `[start, end)`.
    pub fn replicas_up(&mut self, start: u64, end: u64, up: u32) {
        if up == 0 {
            return;
        }
        let n = f64::from(up);
        self.spread(start, end, |w, dt| w.up_area += n * dt);
    }

    /// A forward pass over `[start, end)` with `batch` sequences and `kv` cache use.
    pub fn pass(&mut self, start: u64, end: u64, batch: u64, kv: f64) {
        let b = batch as f64;
        self.spread(start, end, |w, dt| {
            w.busy_ns += dt;
            w.batch_area += b * dt;
            w.kv_area += kv * dt;
        });
    }

    /// A request arrived.
    pub fn arrival(&mut self, t: u64) {
        self.at(t).arrivals += 1;
    }

    /// Tokens generated at time `t`.
    pub fn tokens(&mut self, t: u64, n: u64) {
        self.at(t).output_tokens += n;
    }

    /// An API attempt was refused with a 429.
    pub fn throttled(&mut self, t: u64) {
        self.at(t).throttled += 1;
    }

    /// A client scheduled a retry.
    pub fn retry(&mut self, t: u64) {
        self.at(t).retries += 1;
    }

    /// `n` prompt tokens were processed at `t`.
    pub fn input_tokens(&mut self, t: u64, n: u64) {
        if n > 0 {
            self.at(t).input_tokens += n;
        }
    }

    /// An API request was admitted with `n` tokens.
    pub fn api_tokens(&mut self, t: u64, n: u64) {
        self.at(t).api_tokens += n;
    }

    /// The token limit had this fraction available at an attempt.
    pub fn api_fill(&mut self, t: u64, fill: f64) {
        let w = self.at(t);
        w.fill_sum += fill;
        w.fill_n += 1;
    }

    /// A request completed at `t` with the given TTFT and end-to-end latency
    /// (and, when some class reasons, its time to the first visible token).
    pub fn completion(&mut self, t: u64, ttft_ns: u64, e2e_ns: u64, visible_ns: Option<u64>) {
        let w = self.at(t);
        if let Some(v) = visible_ns {
            w.visible
                .get_or_insert_with(LogHist::default)
                .record(v / 1000);
        }
        w.ttft
            .get_or_insert_with(LogHist::default)
            .record(ttft_ns / 1000);
        w.e2e
            .get_or_insert_with(LogHist::default)
            .record(e2e_ns / 1000);
    }

    /// The series up to `end_ns`, with per-replica averages divided by `replicas`;
    /// the API series only when `api` is set.
    /// `autoscaled`: the replicas-up series too.
    pub fn series(
        &self,
        end_ns: u64,
        replicas: u32,
        api: bool,
        reasoning: bool,
        autoscaled: bool,
    ) -> Series {
        let w = self.width_ns as f64;
        let to_end = end_ns.div_ceil(self.width_ns) as usize;
        let n = if autoscaled {
            // The autoscaler reads on past the last work: its readings
            // after the measured window are not part of the run.
            to_end
        } else {
            self.windows.len().max(to_end)
        }
        .min(MAX_WINDOWS);
        let mut s = Series {
            window_s: w / 1e9,
            ..Series::default()
        };
        let empty = Window::default();
        let reps = f64::from(replicas.max(1));
        let ms = |h: &Option<LogHist>, q: f64| {
            h.as_ref()
                .and_then(|h| h.quantile(q))
                .map(|us| us as f64 / 1000.0)
        };
        for i in 0..n {
            let win = self.windows.get(i).unwrap_or(&empty);
            s.t_s.push((i as f64 + 1.0) * w / 1e9);
            s.arrivals_per_s.push(win.arrivals as f64 / (w / 1e9));
            s.queue_depth.push(win.queue_area / w);
            s.in_flight.push(win.in_flight_area / w);
            s.batch_size.push(if win.busy_ns > 0.0 {
                win.batch_area / win.busy_ns
            } else {
                0.0
            });
            // Per replica up: the slots when the fleet is fixed, the
            // replicas up in the window when a pool autoscales.
            let up = if autoscaled { win.up_area } else { w * reps };
            s.kv_use.push(if up > 0.0 { win.kv_area / up } else { 0.0 });
            s.output_tokens_per_s
                .push(win.output_tokens as f64 / (w / 1e9));
            s.input_tokens_per_s
                .push(win.input_tokens as f64 / (w / 1e9));
            s.ttft_p50_ms.push(ms(&win.ttft, 0.5));
            s.ttft_p99_ms.push(ms(&win.ttft, 0.99));
            s.e2e_p50_ms.push(ms(&win.e2e, 0.5));
            s.e2e_p99_ms.push(ms(&win.e2e, 0.99));
            if reasoning {
                s.first_visible_p50_ms.push(ms(&win.visible, 0.5));
                s.first_visible_p99_ms.push(ms(&win.visible, 0.99));
            }
            if autoscaled {
                s.replicas_up.push(win.up_area / w);
            }
            if api {
                s.throttled_per_s.push(win.throttled as f64 / (w / 1e9));
                s.retries_per_s.push(win.retries as f64 / (w / 1e9));
                s.api_tokens_per_min
                    .push(win.api_tokens as f64 / (w / 60e9));
                s.api_token_fill
                    .push((win.fill_n > 0).then(|| win.fill_sum / win.fill_n as f64));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_hist_buckets_are_monotone_and_tight() {
        let mut last = 0;
        for v in (0..100_000u64).chain([1 << 40, u64::MAX / 2]) {
            let i = LogHist::index(v);
            assert!(i >= last || v > 100_000, "index went backwards at {v}");
            last = i;
            assert!(LogHist::lower_bound(i) <= v, "{v} below its bucket");
            if i + 1 < 512 {
                assert!(LogHist::lower_bound(i + 1) > v, "{v} above its bucket");
            }
        }
        let mut h = LogHist::default();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let p50 = h.quantile(0.5).expect("non-empty") as f64;
        assert!((p50 / 5000.0 - 1.0).abs() < 0.07, "p50 {p50}");
    }

    #[test]
    fn latency_stats_are_exact_where_promised() {
        let mut r = LatencyRecorder::default();
        for ms in 1..=1000u64 {
            r.record_ns(ms * 1_000_000);
        }
        let s = r.stats();
        assert_eq!(s.count, 1000);
        assert_eq!(s.mean_ms, Some(500.5));
        assert_eq!(s.max_ms, Some(1000.0));
        let p99 = s.p99_ms.expect("non-empty");
        assert!((p99 - 990.0).abs() <= 1.0, "p99 {p99}");
    }

    #[test]
    fn windows_stay_bounded_and_conserve_totals() {
        let mut w = Windows::new(1_000_000_000);
        for s in 0..5_000u64 {
            w.arrival(s * 1_000_000_000);
            w.tokens(s * 1_000_000_000, 3);
        }
        let series = w.series(5_000 * 1_000_000_000, 1, false, false, false);
        assert!(series.t_s.len() <= MAX_WINDOWS);
        let arrivals: f64 = series
            .arrivals_per_s
            .iter()
            .map(|a| a * series.window_s)
            .sum();
        assert!((arrivals - 5000.0).abs() < 1e-6, "{arrivals}");
    }
}
