//! The range runs of one scenario, and what they say (see [`super`]).

use super::{Band, Basis, Point, Provenance, SEEDS, band_for_in, bands};
use crate::plan::{PlanSlo, Runs};
use crate::report::Report;
use crate::scenario::{Scenario, ScenarioError};
use serde::Serialize;

/// A figure with its range over the range runs (the point run included).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// The scenario's own run.
    pub value: f64,
    /// The lowest any range run gave.
    pub low: f64,
    /// The highest.
    pub high: f64,
}

/// Where the scenario sits, by whether the range runs' queues drain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every range run drains.
    Stable,
    /// Some range runs grow their queue, some drain.
    NearTheKnee,
    /// Every range run grows its queue.
    Overloaded,
}

impl Verdict {
    /// Its name in the JSON (`stable`, `near_the_knee`, `overloaded`).
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Stable => "stable",
            Verdict::NearTheKnee => "near_the_knee",
            Verdict::Overloaded => "overloaded",
        }
    }

    /// In words, for the page and the CLI.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Stable => "stable: every range run drains its queue",
            Verdict::NearTheKnee => {
                "near the knee: within the model's error, the queue may grow without end"
            }
            Verdict::Overloaded => "overloaded: every range run grows its queue",
        }
    }
}

/// The ranges of a scenario's headline figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranges {
    /// The step-time band of the scenario's main fleet (None when no fleet
    /// serves: an API's numbers vary only with the seed).
    pub basis: Option<Basis>,
    /// Runs made, the point run included.
    pub runs: u32,
    /// Of them, runs whose queue grew ([`grows`]).
    pub growing: u32,
    /// Where the scenario sits.
    pub verdict: Verdict,
    /// Of the runs, those meeting the scenario's targets (as the planner
    /// judges them).
    pub meeting_targets: u32,
    /// Each figure by its report name (`ttft_p99_ms`, …), where the point
    /// run has it (in JSON, an object keyed by the names).
    /// The fleet's figures ([`super::FLEET_FIGURES`]) come after these once
    /// measured ([`super::FleetRuns`]).
    #[serde(serialize_with = "by_name")]
    pub figures: Vec<(&'static str, Figure)>,
    /// Of the ends whose fleet was sized, those where no replica count
    /// tried met the targets: their replicas are the most tried.
    pub replicas_unmet: u32,
    /// The measured runs behind the band, and whether this scenario lies
    /// inside what they measured (None when no fleet serves).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

fn by_name<S: serde::Serializer>(f: &[(&'static str, Figure)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(f.iter().map(|(name, figure)| (name, figure)))
}

impl Ranges {
    /// The figure named `name`, if the point run has it.
    pub fn figure(&self, name: &str) -> Option<Figure> {
        self.figures
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    /// Each figure as a person reads it, with its label: ("TTFT p99",
    /// "480 ms (410 ms – 1.9 s)").
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        self.figures
            .iter()
            .map(|(name, f)| {
                let label = FIGURES
                    .iter()
                    .map(|(n, l, _)| (n, l))
                    .chain(super::FLEET_FIGURES.iter().map(|(n, l)| (n, l)))
                    .find(|(n, _)| *n == name)
                    .map_or(*name, |(_, l)| *l);
                let mut text = f.show(name);
                if *name == "replicas_for_targets" && self.replicas_unmet > 0 {
                    text += &format!(
                        "; at {} of the band's ends no count up to {} met them",
                        self.replicas_unmet, f.high
                    );
                }
                (label, text)
            })
            .collect()
    }

    /// What the runs were, in a sentence.
    pub fn method(&self) -> String {
        let seeds = format!("each at {SEEDS} seeds");
        match &self.basis {
            Some(b) => format!(
                "{} runs: as modelled and with every pass ×{:.2} and ×{:.2}{} ({}: {}), {seeds}",
                self.runs,
                b.low,
                b.high,
                b.prefill.map_or(String::new(), |(lo, hi)| format!(
                    ", passes with a prompt ×{lo:.2} and ×{hi:.2}"
                )),
                if b.measured {
                    "the profile's p10–p90 error"
                } else {
                    "an estimate"
                },
                b.source
            ),
            None => format!(
                "{} runs, one at each of {SEEDS} seeds: no fleet serves, so an API's numbers vary with the seed alone",
                self.runs
            ),
        }
    }
}

impl Figure {
    /// The value and its range in the unit of the figure named `name`:
    /// "480 ms (410 ms – 1.9 s)".
    pub fn show(&self, name: &str) -> String {
        let f = |v: f64| -> String {
            if name.ends_with("_ms") {
                crate::format::duration_ms(Some(v))
            } else if name.starts_with("usd") {
                crate::format::usd(v)
            } else if name.ends_with("fraction") {
                format!("{:.1} %", 100.0 * v)
            } else if name.ends_with("tasks_per_s") {
                format!("{v:.1} tasks/s")
            } else if name.starts_with("replicas") {
                format!("{v:.0}")
            } else {
                crate::format::tokens_per_s(v)
            }
        };
        let (v, lo, hi) = (f(self.value), f(self.low), f(self.high));
        if lo == hi {
            v
        } else {
            format!("{v} ({lo} – {hi})")
        }
    }
}

/// The figures every range carries: name and how to read it off a report.
type Read = fn(&Report) -> Option<f64>;
const FIGURES: [(&str, &str, Read); 9] = [
    ("ttft_p50_ms", "TTFT p50", |r| r.overall.ttft.p50_ms),
    ("ttft_p99_ms", "TTFT p99", |r| r.overall.ttft.p99_ms),
    ("tpot_p50_ms", "time per token p50", |r| {
        r.overall.tpot.p50_ms
    }),
    ("tpot_p99_ms", "time per token p99", |r| {
        r.overall.tpot.p99_ms
    }),
    ("e2e_p50_ms", "end to end p50", |r| r.overall.e2e.p50_ms),
    ("e2e_p99_ms", "end to end p99", |r| r.overall.e2e.p99_ms),
    ("output_tokens_per_s", "output throughput", |r| {
        Some(r.throughput.output_tokens_per_s)
    }),
    ("goodput_fraction", "goodput", |r| {
        r.throughput.goodput_fraction
    }),
    ("usd_per_mtok_output", "$ per M output tokens", |r| {
        r.cost.usd_per_mtok_output
    }),
];

/// Whether a run's queue grew over its arrival window, rather than
/// draining: a limit stopped it, over 1 % of its requests were refused by
/// a full queue, or the mean time a request spends in the system (Little's
/// law: requests in flight ÷ arrivals per second, a window's means) in the
/// window's last quarter exceeds its second quarter's by half and by more
/// than half a second. A queue that keeps up holds that time steady
/// whatever the rate does; one that does not piles up what it cannot serve.
pub fn grows(r: &Report, arrival_window_s: f64) -> bool {
    if !r.complete {
        return true;
    }
    let n = r.requests.arrived.max(1) as f64;
    if r.requests.rejected as f64 > 0.01 * n {
        return true;
    }
    let s = &r.series;
    let in_system = |from: f64, to: f64| {
        let (mut flight, mut rate, mut k) = (0.0, 0.0, 0u32);
        for (i, t) in s.t_s.iter().enumerate() {
            if *t > from * arrival_window_s && *t <= to * arrival_window_s {
                flight += s.in_flight.get(i).copied().unwrap_or(0.0);
                rate += s.arrivals_per_s.get(i).copied().unwrap_or(0.0);
                k += 1;
            }
        }
        (k >= 2 && rate > 0.0).then(|| flight / rate)
    };
    match (in_system(0.25, 0.5), in_system(0.75, 1.0)) {
        (Some(mid), Some(late)) => late > 1.5 * mid && late - mid > 0.5,
        _ => false,
    }
}

/// The range runs of one scenario, driven by the planner's protocol
/// ([`Runs`]) so the CLI, the page's slices and Python's executors run
/// them alike. The point run is fed first.
#[derive(Clone, Debug)]
pub struct RangeRuns {
    base: Scenario,
    basis: Option<Basis>,
    /// (the band's end, seed offset) of each run still to make.
    todo: Vec<(End, u64)>,
    total: usize,
    slo: PlanSlo,
    /// Stop each run once its miss of `slo` is settled (only the verdicts
    /// are wanted: its figures are then of the part run).
    early: bool,
    /// The early-stop bound of the run in progress (set by `next`).
    bound: Option<f64>,
    reports: Vec<Report>,
    /// The (end, seed offset) of each report, in the same order.
    fed: Vec<(End, u64)>,
    /// The bands the runs read (None: the committed table).
    table: Option<Vec<Band>>,
}

/// Which step times a range run has: the profile's own, or each pool's
/// band's low or high end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End {
    Point,
    Low,
    High,
}

impl RangeRuns {
    /// The runs for `s`: its point run and the point at the other
    /// [`SEEDS`], then its step times at the band's low and high ends, each
    /// at every seed (an end that scales no pool is the point: not run
    /// again).
    pub fn new(s: &Scenario) -> RangeRuns {
        Self::with_slo(s, PlanSlo::for_scenario(s))
    }

    /// The same runs, judged against `slo`, each stopped once its miss is
    /// settled as the planner's runs are: for a share meeting the targets
    /// (`plan::confidence`), not for figures.
    pub fn verdicts(s: &Scenario, slo: PlanSlo) -> RangeRuns {
        RangeRuns {
            early: true,
            ..Self::with_slo(s, slo)
        }
    }

    /// The runs for `s` with the bands of `table` instead of the committed
    /// ones (the coverage check's, each read without the run it checks).
    pub fn with_bands(s: &Scenario, table: Vec<Band>) -> RangeRuns {
        Self::with_table(s, PlanSlo::for_scenario(s), Some(table))
    }

    fn with_slo(s: &Scenario, slo: PlanSlo) -> RangeRuns {
        Self::with_table(s, slo, None)
    }

    /// The band of pool `p` from `table` (None: the committed one).
    fn band_of(table: &Option<Vec<Band>>, p: &crate::scenario::Serving) -> Basis {
        band_for_in(table.as_deref().unwrap_or(bands()), p)
    }

    fn with_table(s: &Scenario, slo: PlanSlo, table: Option<Vec<Band>>) -> RangeRuns {
        let band = |p| Self::band_of(&table, p);
        let basis = s.uses_fleet().then(|| band(&s.serving));
        let pools = || std::iter::once(&s.serving).chain(&s.pools).map(band);
        let mut ends = vec![End::Point];
        if basis.is_some() {
            if pools().any(|b| b.end(false) != (1.0, None)) {
                ends.push(End::Low);
            }
            if pools().any(|b| b.end(true) != (1.0, None)) {
                ends.push(End::High);
            }
        }
        let mut todo: Vec<(End, u64)> = ends
            .into_iter()
            .flat_map(|e| (0..SEEDS).map(move |k| (e, k)))
            .collect();
        todo.reverse();
        RangeRuns {
            base: s.clone(),
            basis,
            total: todo.len(),
            todo,
            slo,
            early: false,
            bound: None,
            reports: Vec::new(),
            fed: Vec::new(),
            table,
        }
    }

    /// The scenario of run (`end`, `seed offset`): every pool's passes
    /// scaled by its own band's end, the seed moved on.
    pub(super) fn scenario(&self, end: End, k: u64) -> Scenario {
        let mut s = self.base.clone();
        s.seed = s.seed.wrapping_add(k);
        if end != End::Point {
            for p in std::iter::once(&mut s.serving).chain(&mut s.pools) {
                let (scale, prefill) = Self::band_of(&self.table, p).end(end == End::High);
                p.step_time_scale = Some(p.step_time_scale.unwrap_or(1.0) * scale);
                if let Some(k) = prefill {
                    let own = p.prefill_time_scale.unwrap_or(1.0);
                    p.prefill_time_scale =
                        Some((own * k).clamp(super::SCALE_BOUNDS.0, super::SCALE_BOUNDS.1));
                }
            }
        }
        s
    }

    /// Take `report` as the point run at the scenario's own seed, already
    /// made (the run on screen, identical to what it would run): the first
    /// run is not made again. Does nothing once any run is fed.
    pub fn with_point(mut self, report: &Report) -> RangeRuns {
        if self.reports.is_empty() && self.todo.last() == Some(&(End::Point, 0)) {
            self.feed(report);
        }
        self
    }

    /// The reports fed so far, the point run first.
    pub fn reports(&self) -> impl Iterator<Item = &Report> {
        self.reports.iter()
    }

    /// Each end run, with the report of its run at the scenario's own
    /// seed, the point first (once fed).
    pub(super) fn ends(&self) -> impl Iterator<Item = (End, &Report)> {
        self.fed
            .iter()
            .zip(&self.reports)
            .filter(|((_, k), _)| *k == 0)
            .map(|((e, _), r)| (*e, r))
    }

    /// Whether every run was run to its end (not stopped at a settled
    /// miss), so the reports are the scenario's.
    pub(super) fn whole(&self) -> bool {
        !self.early && self.todo.is_empty()
    }

    /// The ranges, once every run is fed (None before, or when the point
    /// run is missing).
    pub fn result(&self) -> Option<Ranges> {
        if !self.todo.is_empty() {
            return None;
        }
        let point = self.reports.first()?;
        let window = self.base.duration_s;
        let growing = self.reports.iter().filter(|r| grows(r, window)).count() as u32;
        let runs = self.reports.len() as u32;
        let verdict = match growing {
            0 => Verdict::Stable,
            g if g == runs => Verdict::Overloaded,
            _ => Verdict::NearTheKnee,
        };
        let figures = FIGURES
            .iter()
            .filter_map(|(name, _, read)| {
                let value = read(point)?;
                let (mut low, mut high) = (value, value);
                for v in self.reports.iter().filter_map(read) {
                    low = low.min(v);
                    high = high.max(v);
                }
                Some((*name, Figure { value, low, high }))
            })
            .collect();
        Some(Ranges {
            basis: self.basis.clone(),
            runs,
            growing,
            verdict,
            meeting_targets: self
                .reports
                .iter()
                .filter(|r| self.slo.check(r).is_ok())
                .count() as u32,
            figures,
            replicas_unmet: 0,
            provenance: self
                .basis
                .as_ref()
                .map(|b| Provenance::new(b, Point::of_run(&self.base, point).as_ref())),
        })
    }
}

impl Runs for RangeRuns {
    fn next(&mut self) -> Option<Scenario> {
        let (end, k) = *self.todo.last()?;
        let s = self.scenario(end, k);
        self.bound = if self.early {
            crate::plan::early_bound(&s)
        } else {
            None
        };
        Some(s)
    }

    fn feed(&mut self, report: &Report) {
        if let Some(at) = self.todo.pop() {
            self.reports.push(report.clone());
            self.fed.push(at);
        }
    }

    fn progress(&self) -> f64 {
        1.0 - self.todo.len() as f64 / self.total.max(1) as f64
    }

    fn begin(&self, sim: &mut crate::Simulation) {
        if self.early {
            self.slo.watch(sim);
        }
    }

    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        self.bound.and_then(|u| self.slo.settled_fail(sim, u))
    }
}

/// The ranges of `s`, run here to the end, with its own run's report (the
/// first of the range runs, identical to [`crate::run`]'s), the fleet's
/// figures included where one replica's capacity sizes the deployment.
pub fn ranges(s: &Scenario) -> Result<(Report, Ranges), ScenarioError> {
    let mut runs = RangeRuns::new(s);
    crate::plan::drive(&mut runs)?;
    let point = runs.reports.first().cloned();
    let (point, mut ranges) = point.zip(runs.result()).ok_or_else(|| ScenarioError {
        problems: vec!["the range runs did not finish".to_owned()],
    })?;
    if crate::compare::load_check(s, 1.0).is_some() {
        let capacity = crate::compare::replica_capacity_per_s(s)?;
        if let Some(mut fleet) = runs.fleet(capacity) {
            crate::plan::drive(&mut fleet)?;
            fleet.add_to(&mut ranges);
        }
    }
    Ok((point, ranges))
}
