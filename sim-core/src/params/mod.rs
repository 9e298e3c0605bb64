//! The one catalogue of scenario parameters: each with a path (for sweeps and
//! the CLI), a page id, a label, a unit, a one-sentence definition, the range
//! it accepts, and a getter and a setter that carry the rules for rate
//! schedules, closed-loop users and multi-class workloads. The page's controls,
//! `tlab sweep --vary` and `tlab run --set` all edit scenarios through it, so
//! the same edit means the same thing everywhere.
//!
//! A setter changes only what it names (plus what keeps the scenario coherent,
//! documented on each parameter); it does not validate the whole scenario:
//! callers do, once, at the boundary.

use crate::scenario::Scenario;

mod autoscale;
mod disaggregation;
mod edits;
mod pools;
mod provider;
mod provider_api;
mod provider_service;
mod routing_text;
mod scheduling;
mod serving;
mod speculative;
mod targets;
mod traffic;

pub use edits::{batching_for_policy, differences, inert, set_share, side_effects, spike_schedule};
pub use routing_text::{parse_routing, routing_text};

/// Where a parameter sits on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Arrivals.
    Traffic,
    /// Request classes (repeated per class).
    Workload,
    /// Hardware, model and replicas.
    Serving,
    /// Batch formation.
    Batching,
    /// Hosted API limits, prices and client policy.
    Provider,
    /// Which backend serves each class (repeated per class).
    Routing,
    /// Prices and service-level targets.
    Targets,
}

impl Group {
    /// Every group, in page order.
    pub const ALL: [Group; 7] = [
        Group::Traffic,
        Group::Workload,
        Group::Serving,
        Group::Batching,
        Group::Provider,
        Group::Routing,
        Group::Targets,
    ];

    /// Title on the page.
    pub fn title(self) -> &'static str {
        match self {
            Group::Traffic => "Traffic",
            Group::Workload => "Workload",
            Group::Serving => "Serving",
            Group::Batching => "Batching",
            Group::Provider => "Provider",
            Group::Routing => "Routing",
            Group::Targets => "Cost and targets",
        }
    }

    /// Whether the group repeats for every request class.
    pub fn per_class(self) -> bool {
        matches!(self, Group::Workload | Group::Routing)
    }
}

/// A numeric parameter.
#[derive(Clone, Copy)]
pub struct Number {
    /// Smallest value accepted.
    pub min: f64,
    /// Largest value accepted.
    pub max: f64,
    /// The page slider's range (within `min..=max`).
    pub slider: (f64, f64),
    /// Whether the slider moves on a logarithmic scale.
    pub log: bool,
    /// Decimal places the page shows and keeps.
    pub decimals: usize,
    /// Current value, or None when the parameter does not apply to the scenario.
    pub get: fn(&Scenario, usize) -> Option<f64>,
    /// Write a value already within `min..=max`; Err says why it does not apply.
    pub set: fn(&mut Scenario, usize, f64) -> Result<(), String>,
}

/// A parameter chosen among named options.
#[derive(Clone, Copy)]
pub struct Choice {
    /// (key, label) pairs available for this scenario.
    pub options: fn(&Scenario, usize) -> Vec<(String, String)>,
    /// Current key, or None when the parameter does not apply.
    pub get: fn(&Scenario, usize) -> Option<String>,
    /// Select a key; Err names the unknown key or why it does not apply.
    pub set: fn(&mut Scenario, usize, &str) -> Result<(), String>,
}

/// A parameter written as text in a small format of its own (load stages:
/// `8 for 600, 24 for 600`); the setter parses it and names what it cannot.
#[derive(Clone, Copy)]
pub struct Text {
    /// An example of the format, shown in an empty box.
    pub example: &'static str,
    /// Current text (empty when the scenario has none of it yet), or None
    /// when the parameter does not apply.
    pub get: fn(&Scenario, usize) -> Option<String>,
    /// Parse and write; Err says what in the text is wrong.
    pub set: fn(&mut Scenario, usize, &str) -> Result<(), String>,
}

/// How a parameter's values are written.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A number with a range.
    Number(Number),
    /// One of a set of options.
    Choice(Choice),
    /// Text in the parameter's own format.
    Text(Text),
}

/// One scenario parameter.
#[derive(Clone, Copy)]
pub struct Param {
    /// Name in sweeps and on the command line (`arrival.rate`).
    pub path: &'static str,
    /// Stable id on the page (DOM ids, tests).
    pub id: &'static str,
    /// Where it sits on the page.
    pub group: Group,
    /// Label.
    pub label: &'static str,
    /// Unit shown after the value ("" for choices).
    pub unit: &'static str,
    /// One sentence defining the term.
    pub help: &'static str,
    /// Its values.
    pub kind: Kind,
}

/// Every parameter, in page order.
pub fn all() -> impl Iterator<Item = &'static Param> {
    traffic::PARAMS
        .iter()
        .chain(serving::PARAMS.iter())
        .chain(autoscale::PARAMS.iter())
        .chain(pools::PARAMS.iter())
        .chain(disaggregation::PARAMS.iter())
        .chain(speculative::PARAMS.iter())
        .chain(scheduling::PARAMS.iter())
        .chain(targets::PARAMS.iter())
        .chain(provider::PARAMS.iter())
        .chain(provider_api::PARAMS.iter())
        .chain(provider_service::PARAMS.iter())
}

/// The parameter a sweep or CLI path names.
pub fn find(path: &str) -> Option<&'static Param> {
    all().find(|p| p.path == path)
}

/// The parameter a page id names.
pub fn by_id(id: &str) -> Option<&'static Param> {
    all().find(|p| p.id == id)
}

impl Param {
    /// The current value as text (a number in full precision, or a choice key).
    pub fn get_text(&self, s: &Scenario, class: usize) -> Option<String> {
        match self.kind {
            Kind::Number(n) => (n.get)(s, class).map(|v| v.to_string()),
            Kind::Choice(c) => (c.get)(s, class),
            Kind::Text(t) => (t.get)(s, class),
        }
    }

    /// Set a number, refusing values outside the parameter's range.
    pub fn set_number(&self, s: &mut Scenario, class: usize, v: f64) -> Result<(), String> {
        let Kind::Number(n) = self.kind else {
            return Err(format!("{} is not a number", self.path));
        };
        if !(v.is_finite() && v >= n.min && v <= n.max) {
            return Err(format!(
                "{} must be {}..={}{}, got {}",
                self.path,
                show(n.min),
                show(n.max),
                unit_suffix(self.unit),
                show(v)
            ));
        }
        (n.set)(s, class, v)?;
        // The value asked for is the value run: a setter that would keep
        // another value (a count's whole part, a bound's) refuses instead.
        match (n.get)(s, class) {
            Some(got) if (got - v).abs() > 1e-9 * v.abs().max(1.0) => {
                if n.decimals == 0 && v.fract() != 0.0 {
                    Err(format!(
                        "{} must be a whole number, got {}",
                        self.path,
                        show(v)
                    ))
                } else {
                    Err(format!(
                        "{} cannot be {} here: it would run as {}",
                        self.path,
                        show(v),
                        show(got)
                    ))
                }
            }
            _ => Ok(()),
        }
    }

    /// Set a value written as text: a number for numeric parameters, an option
    /// key for choices.
    pub fn set_text(&self, s: &mut Scenario, class: usize, text: &str) -> Result<(), String> {
        let text = text.trim();
        match self.kind {
            Kind::Number(_) => {
                let v: f64 = text
                    .parse()
                    .map_err(|_| format!("{} must be a number, got {text:?}", self.path))?;
                self.set_number(s, class, v)
            }
            Kind::Choice(c) => (c.set)(s, class, text),
            Kind::Text(t) => (t.set)(s, class, text),
        }
    }

    /// Whether the parameter applies to the scenario (for class `class`).
    pub fn applies(&self, s: &Scenario, class: usize) -> bool {
        self.get_text(s, class).is_some()
    }

    /// Whether the parameter is set per request class.
    pub fn per_class(&self) -> bool {
        self.group.per_class()
    }

    /// Whether the parameter is a pool's own setting, which `NAME@POOL`
    /// sets on a pool beside the first.
    pub fn per_pool(&self) -> bool {
        serving::PARAMS
            .iter()
            .chain(autoscale::PARAMS)
            .chain(disaggregation::PARAMS)
            .chain(speculative::PARAMS)
            .any(|p| p.path == self.path)
            || matches!(
                self.path,
                "scheduling_policy" | "usd_per_gpu_hour" | "usd_per_kwh"
            )
    }
}

/// Run `edit` on pool `pool` as if it were the first (0 is the first): the
/// pool's own settings are the serving parameters', edited in its place.
pub fn on_pool<T>(s: &mut Scenario, pool: usize, edit: impl FnOnce(&mut Scenario) -> T) -> T {
    if pool == 0 {
        return edit(s);
    }
    std::mem::swap(&mut s.serving, &mut s.pools[pool - 1]);
    let out = edit(s);
    std::mem::swap(&mut s.serving, &mut s.pools[pool - 1]);
    out
}

pub use crate::format::show;

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// Set `NAME=VALUE` on a scenario, as `tlab run --set` and sweep axes do.
/// A per-class parameter names its class as `NAME[CLASS]` (a class name or an
/// index); without one it applies to a single-class workload only.
pub fn apply(s: &mut Scenario, name: &str, value: &str) -> Result<(), String> {
    if let Some((name, pool)) = name.split_once('@') {
        let p = check_name(name)?;
        if !p.per_pool() {
            return Err(format!(
                "{name} is not a pool's own setting; drop the @{pool} after it"
            ));
        }
        let i = pool_index(s, pool.trim())?;
        return on_pool(s, i, |s| apply(s, name, value));
    }
    let (path, class) = split_class(name)?;
    let p = find(path).ok_or_else(|| {
        let known: Vec<&str> = all().map(|p| p.path).collect();
        format!("unknown parameter {path:?}; known: {}", known.join(", "))
    })?;
    let class = if p.per_class() {
        class_index(s, path, class)?
    } else if let Some(c) = class {
        return Err(format!(
            "{path} is not set per class; drop the [{c}] after it"
        ));
    } else {
        0
    };
    p.set_text(s, class, value)
}

/// The pool a `@POOL` suffix names: a pool's name (the first is also
/// `self-hosted`) or its index.
fn pool_index(s: &Scenario, pool: &str) -> Result<usize, String> {
    match s.target_named(pool) {
        Some(crate::scenario::Target::Pool(i)) => Ok(i),
        _ => pool
            .parse::<usize>()
            .ok()
            .filter(|&i| i < s.pool_count())
            .ok_or_else(|| {
                let names: Vec<&str> = s.all_pools().map(|p| p.pool_name()).collect();
                format!(
                    "@{pool}: no such pool; pools are {} (or 0..{})",
                    names.join(", "),
                    s.pool_count()
                )
            }),
    }
}

/// Check that `NAME` (with any `[CLASS]` or `@POOL`) names a parameter.
pub fn check_name(name: &str) -> Result<&'static Param, String> {
    let name = name.split_once('@').map_or(name, |(n, _)| n);
    let (path, _) = split_class(name)?;
    find(path).ok_or_else(|| {
        let known: Vec<&str> = all().map(|p| p.path).collect();
        format!("unknown parameter {path:?}; known: {}", known.join(", "))
    })
}

fn split_class(name: &str) -> Result<(&str, Option<&str>), String> {
    let name = name.trim();
    match name.split_once('[') {
        None => Ok((name, None)),
        Some((path, rest)) => match rest.strip_suffix(']') {
            Some(class) if !class.is_empty() => Ok((path, Some(class))),
            _ => Err(format!(
                "{name:?}: a class is written NAME[CLASS], with a class name or index"
            )),
        },
    }
}

fn class_index(s: &Scenario, path: &str, class: Option<&str>) -> Result<usize, String> {
    let classes = &s.workload.classes;
    match class {
        None if classes.len() == 1 => Ok(0),
        None => Err(format!(
            "{path} is set per class and the workload has {} classes; name one: {path}[{}]",
            classes.len(),
            classes.first().map_or("0", |k| k.name.as_str())
        )),
        Some(c) => classes
            .iter()
            .position(|k| k.name == c)
            .or_else(|| c.parse::<usize>().ok().filter(|&i| i < classes.len()))
            .ok_or_else(|| {
                let names: Vec<&str> = classes.iter().map(|k| k.name.as_str()).collect();
                format!(
                    "{path}[{c}]: no such class; classes are {} (or 0..{})",
                    names.join(", "),
                    classes.len()
                )
            }),
    }
}

#[cfg(test)]
mod tests;
