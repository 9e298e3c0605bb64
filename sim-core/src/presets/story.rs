//! A preset's story as a guided sequence on the page's own controls: each
//! step says what to change and what to watch, makes its change through the
//! parameter catalogue, and states its claims as ranges of simulated numbers.
//! The page checks every claim against the run on screen; the tests check
//! every claim of every story (`tests/it/stories.rs`), so a story cannot
//! promise a number the simulation does not give.

use crate::compare::LoadCheck;
use crate::format;
use crate::report::{ClassReport, Report};
use crate::scenario::Scenario;

/// One step of a story.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// A few words for the step's button ("Raise the load to 40 req/s").
    pub title: &'static str,
    /// What the step does and what to watch, in a sentence or three. A
    /// simulated number it states is written `{k}`: claim `k`'s value in the
    /// run on screen ([`Step::say_with`]), never typed.
    pub say: &'static str,
    /// Catalogue edits (`NAME=VALUE` as `tlab run --set` takes them) made on
    /// top of the previous step's scenario.
    pub edits: &'static [(&'static str, &'static str)],
    /// What the run of this step's scenario shows.
    pub claims: &'static [Claim],
}

impl Step {
    /// The step's text with each `{k}` replaced by claim `k`'s value in the
    /// run (`values[k]`, as the page writes it), or, while the run has no
    /// value yet, by what the claim expects.
    pub fn say_with(&self, values: &[Option<f64>]) -> String {
        let mut out = String::with_capacity(self.say.len() + 16);
        let mut rest = self.say;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let claim = after
                .find('}')
                .and_then(|close| Some((after[..close].parse::<usize>().ok()?, close)))
                .and_then(|(k, close)| Some((self.claims.get(k)?, k, close)));
            match claim {
                Some((c, k, close)) => {
                    out.push_str(&match values.get(k).copied().flatten() {
                        Some(v) => c.what.show(v),
                        None => c.expects(),
                    });
                    rest = &after[close + 1..];
                }
                None => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// A number the story states, as the range the simulation must fall in.
#[derive(Clone, Copy, Debug)]
pub struct Claim {
    /// Which number.
    pub what: Quantity,
    /// Of one request class (by name), or of all traffic.
    pub class: Option<&'static str>,
    /// Smallest value that keeps the story true.
    pub low: f64,
    /// Largest value that keeps the story true.
    pub high: f64,
}

/// The numbers a story can claim: each the page's card of the same name
/// (the capacity ones from [`crate::compare::load_check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Time to first token, median (ms).
    TtftP50,
    /// Time to first token, 99th percentile (ms).
    TtftP99,
    /// Time per output token, median (ms).
    TpotP50,
    /// End-to-end latency, median (ms).
    E2eP50,
    /// End-to-end latency, 99th percentile (ms).
    E2eP99,
    /// First visible token, median (ms).
    VisibleP50,
    /// Task latency (all of an agent's calls), median (ms).
    TaskP50,
    /// Output tokens per second.
    OutputTokensPerS,
    /// $ per million output tokens.
    UsdPerMtok,
    /// $ per month at this load.
    UsdPerMonth,
    /// Share of arrived requests failed, refused or timed out (%).
    UnansweredPct,
    /// API 429 responses.
    Throttled,
    /// Share of the API's billed requests that read part of their prompt
    /// from a prompt cache (%).
    CacheHitPct,
    /// Share of arrived requests within the targets (%).
    GoodputPct,
    /// One saturated replica's tasks/s.
    CapacityPerReplica,
    /// Replicas the traffic needs at full load.
    ReplicasNeeded,
    /// Whether demand is above capacity (1) or not (0).
    Overloaded,
}

impl Quantity {
    /// The name the page's card gives it.
    pub fn label(self) -> &'static str {
        match self {
            Quantity::TtftP50 => "Time to first token, p50",
            Quantity::TtftP99 => "Time to first token, p99",
            Quantity::TpotP50 => "Time per output token, p50",
            Quantity::E2eP50 => "End-to-end, p50",
            Quantity::E2eP99 => "End-to-end, p99",
            Quantity::VisibleP50 => "First visible token, p50",
            Quantity::TaskP50 => "Task latency, p50",
            Quantity::OutputTokensPerS => "Output tokens/s",
            Quantity::UsdPerMtok => "$ per million output tokens",
            Quantity::UsdPerMonth => "$ per month",
            Quantity::UnansweredPct => "Failed, refused or timed out",
            Quantity::Throttled => "429 responses",
            Quantity::CacheHitPct => "Requests hitting the prompt cache",
            Quantity::GoodputPct => "Goodput",
            Quantity::CapacityPerReplica => "One replica's capacity",
            Quantity::ReplicasNeeded => "Replicas this traffic needs",
            Quantity::Overloaded => "Overloaded",
        }
    }

    /// The page's card that shows it for all traffic (its `card-…` id), if
    /// one does (whether the run is overloaded is its banner).
    pub fn card(self) -> Option<&'static str> {
        Some(match self {
            Quantity::TtftP50 => "ttft-p50",
            Quantity::TtftP99 => "ttft-p99",
            Quantity::TpotP50 => "tpot-p50",
            Quantity::E2eP50 => "e2e-p50",
            Quantity::E2eP99 => "e2e-p99",
            Quantity::VisibleP50 => "visible-p50",
            Quantity::TaskP50 => "task-p50",
            Quantity::OutputTokensPerS => "throughput",
            Quantity::UsdPerMtok => "usd-per-mtok",
            Quantity::UsdPerMonth => "usd-per-month",
            Quantity::UnansweredPct => "failed",
            Quantity::Throttled => "throttled",
            Quantity::CacheHitPct => "cache-hits",
            Quantity::GoodputPct => "goodput",
            Quantity::CapacityPerReplica => "capacity",
            Quantity::ReplicasNeeded => "replicas-needed",
            Quantity::Overloaded => return None,
        })
    }

    /// Whether the number comes from the capacity measurement.
    pub fn needs_capacity(self) -> bool {
        matches!(
            self,
            Quantity::CapacityPerReplica | Quantity::ReplicasNeeded | Quantity::Overloaded
        )
    }

    /// The number in a run (of a class, if named), if it has one.
    pub fn of(self, r: &Report, load: Option<&LoadCheck>, class: Option<&str>) -> Option<f64> {
        let k: &ClassReport = match class {
            Some(name) => r.per_class.iter().find(|k| k.name == name)?,
            None => &r.overall,
        };
        match self {
            Quantity::TtftP50 => k.ttft.p50_ms,
            Quantity::TtftP99 => k.ttft.p99_ms,
            Quantity::TpotP50 => k.tpot.p50_ms,
            Quantity::E2eP50 => k.e2e.p50_ms,
            Quantity::E2eP99 => k.e2e.p99_ms,
            Quantity::VisibleP50 => k.first_visible.p50_ms,
            Quantity::TaskP50 => k.task_latency.p50_ms,
            Quantity::OutputTokensPerS => Some(r.throughput.output_tokens_per_s),
            Quantity::UsdPerMtok => r.cost.usd_per_mtok_output,
            Quantity::UsdPerMonth => Some(r.cost.usd_per_month),
            Quantity::UnansweredPct => Some(100.0 * r.requests.error_fraction()),
            Quantity::Throttled => Some(r.api.as_ref().map_or(0, |a| a.throttled_429) as f64),
            Quantity::CacheHitPct => r.api.as_ref().map(|a| 100.0 * a.cache_hit_rate()),
            Quantity::GoodputPct => r.throughput.goodput_fraction.map(|g| 100.0 * g),
            Quantity::CapacityPerReplica => load.map(|l| l.tasks_per_s_per_replica),
            Quantity::ReplicasNeeded => load.map(|l| f64::from(l.replicas_needed)),
            Quantity::Overloaded => load.map(|l| f64::from(u8::from(l.overloaded))),
        }
    }

    /// A value as the page writes it.
    pub fn show(self, v: f64) -> String {
        match self {
            Quantity::TtftP50
            | Quantity::TtftP99
            | Quantity::TpotP50
            | Quantity::E2eP50
            | Quantity::E2eP99
            | Quantity::VisibleP50
            | Quantity::TaskP50 => format::duration_ms(Some(v)),
            Quantity::OutputTokensPerS => format::tokens_per_s(v),
            Quantity::UsdPerMtok | Quantity::UsdPerMonth => format::usd(v),
            Quantity::UnansweredPct | Quantity::GoodputPct | Quantity::CacheHitPct => {
                format!("{v:.1} %")
            }
            Quantity::Throttled | Quantity::ReplicasNeeded => format::thousands(v as u64),
            Quantity::CapacityPerReplica => format!("{v:.1} tasks/s"),
            Quantity::Overloaded => (if v > 0.5 { "yes" } else { "no" }).to_owned(),
        }
    }
}

/// A claim checked against a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// The simulated number, if the run has it yet.
    pub value: Option<f64>,
    /// Whether it lies in the claim's range (None without a value).
    pub holds: Option<bool>,
}

impl Claim {
    /// Check the claim on a run (and its capacity measurement, for the
    /// capacity numbers).
    pub fn check(&self, r: &Report, load: Option<&LoadCheck>) -> Checked {
        let value = self.what.of(r, load, self.class);
        Checked {
            value,
            holds: value.map(|v| v >= self.low && v <= self.high),
        }
    }

    /// What the story expects, as a person reads it ("30 ms to 100 ms",
    /// "at most 500 ms", "2").
    pub fn expects(&self) -> String {
        let q = self.what;
        if q == Quantity::Overloaded {
            return q.show(self.low);
        }
        match (self.low.is_finite(), self.high.is_finite()) {
            _ if self.low == self.high => q.show(self.low),
            (true, true) => format!("{} to {}", q.show(self.low), q.show(self.high)),
            (false, true) => format!("at most {}", q.show(self.high)),
            (true, false) => format!("at least {}", q.show(self.low)),
            (false, false) => "any".to_owned(),
        }
    }

    /// The claim's subject, with its class when it names one.
    pub fn subject(&self) -> String {
        match self.class {
            Some(c) => format!("{} ({c})", self.what.label()),
            None => self.what.label().to_owned(),
        }
    }
}

/// Make step `i`'s edits on `s`, through the catalogue.
fn edit(s: &mut Scenario, i: usize, step: &Step) -> Result<(), String> {
    for (name, value) in step.edits {
        crate::params::apply(s, name, value)
            .map_err(|e| format!("step {} ({}): {e}", i + 1, step.title))?;
    }
    Ok(())
}

/// The scenario of step `step` of `steps` (0 is the preset as it opens):
/// the edits of every step up to it, made through the catalogue on `base`.
pub fn scenario_at(base: &Scenario, steps: &[Step], step: usize) -> Result<Scenario, String> {
    let mut s = base.clone();
    for (i, st) in steps.iter().enumerate().take(step + 1) {
        edit(&mut s, i, st)?;
    }
    Ok(s)
}

/// The last step whose scenario is exactly `current`, if it is on the
/// story's path: one walk along the path, each step's scenario made from the
/// one before (the page asks on every edit).
pub fn step_of(base: &Scenario, steps: &[Step], current: &Scenario) -> Option<usize> {
    let mut s = base.clone();
    let mut found = None;
    for (i, st) in steps.iter().enumerate() {
        if edit(&mut s, i, st).is_err() {
            break;
        }
        if s == *current {
            found = Some(i);
        }
    }
    found
}

/// Run step `step` of `steps` and check each of its claims, as the page
/// checks them against the run on screen: the run of the step's scenario,
/// and, when a claim needs it, that scenario's measured capacity.
pub fn check_step(base: &Scenario, steps: &[Step], step: usize) -> Result<Vec<Checked>, String> {
    let s = scenario_at(base, steps, step)?;
    let claims = steps.get(step).map_or(&[][..], |st| st.claims);
    let report = crate::run_scenario(s.clone()).map_err(|e| e.to_string())?;
    let load = if claims.iter().any(|c| c.what.needs_capacity()) {
        let capacity = crate::compare::replica_capacity_per_s(&s).map_err(|e| e.to_string())?;
        crate::compare::load_check(&s, capacity)
    } else {
        None
    };
    Ok(claims
        .iter()
        .map(|c| c.check(&report, load.as_ref()))
        .collect())
}

/// A claim between two numbers.
pub(crate) const fn between(what: Quantity, low: f64, high: f64) -> Claim {
    Claim {
        what,
        class: None,
        low,
        high,
    }
}

/// A claim of at most `high`.
pub(crate) const fn at_most(what: Quantity, high: f64) -> Claim {
    between(what, f64::NEG_INFINITY, high)
}

/// A claim of at least `low`.
pub(crate) const fn at_least(what: Quantity, low: f64) -> Claim {
    between(what, low, f64::INFINITY)
}

/// A claim of exactly `v` (counts, yes/no).
pub(crate) const fn exactly(what: Quantity, v: f64) -> Claim {
    between(what, v, v)
}

/// A claim about one class.
pub(crate) const fn of_class(class: &'static str, c: Claim) -> Claim {
    Claim {
        class: Some(class),
        ..c
    }
}
