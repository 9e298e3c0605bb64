//! The page's view of the parameter catalogue (`sim_core::params`): slider
//! positions, typed values and their checks. What a control means, its range
//! and how it edits the scenario all come from the catalogue, which the sweeps
//! and the CLI share; nothing here touches the DOM, so it is tested natively.

pub mod views;

use sim_core::Scenario;
use sim_core::params::{self, Choice, Group, Kind, Number, Param, Text};

/// A number with a slider and a typed box.
#[derive(Clone, Copy)]
pub struct NumberControl {
    /// The catalogue entry.
    pub param: &'static Param,
    spec: Number,
}

/// A choice among named options.
#[derive(Clone, Copy)]
pub struct ChoiceControl {
    /// The catalogue entry.
    pub param: &'static Param,
    spec: Choice,
}

/// Text in the parameter's own format (load stages).
#[derive(Clone, Copy)]
pub struct TextControl {
    /// The catalogue entry.
    pub param: &'static Param,
    spec: Text,
}

/// One control of any kind.
#[derive(Clone, Copy)]
pub enum Control {
    /// A number.
    Number(NumberControl),
    /// A choice.
    Choice(ChoiceControl),
    /// Text.
    Text(TextControl),
}

impl Control {
    fn of(param: &'static Param) -> Control {
        match param.kind {
            Kind::Number(spec) => Control::Number(NumberControl { param, spec }),
            Kind::Choice(spec) => Control::Choice(ChoiceControl { param, spec }),
            Kind::Text(spec) => Control::Text(TextControl { param, spec }),
        }
    }

    /// The catalogue entry.
    pub fn param(&self) -> &'static Param {
        match self {
            Control::Number(n) => n.param,
            Control::Choice(c) => c.param,
            Control::Text(t) => t.param,
        }
    }

    /// Whether the control applies to the scenario (for class `i`): GPU and
    /// batching controls only when some class runs on the self-hosted fleet.
    pub fn applies(&self, s: &Scenario, i: usize) -> bool {
        let fleet_only = matches!(self.param().group, Group::Serving | Group::Batching);
        (!fleet_only || s.uses_fleet()) && self.param().applies(s, i)
    }
}

/// A titled, collapsible group of controls; per-class groups repeat for each
/// request class (the index passed to getters and setters).
pub struct GroupView {
    /// Which group.
    pub group: Group,
    /// Its controls, in page order.
    pub controls: Vec<Control>,
}

/// Every group of controls, in page order.
pub fn groups() -> Vec<GroupView> {
    Group::ALL
        .iter()
        .map(|&group| GroupView {
            group,
            controls: params::all()
                .filter(|p| p.group == group)
                .map(Control::of)
                .collect(),
        })
        .collect()
}

impl NumberControl {
    /// Slider positions run 0..=SLIDER_STEPS.
    pub const SLIDER_STEPS: f64 = 1000.0;

    /// Slider positions one press of a step button moves (1 % of the slider).
    pub const NUDGE: f64 = 10.0;

    /// Stable id (DOM ids and tests).
    pub fn id(&self) -> &'static str {
        self.param.id
    }

    /// The current value, if the control applies.
    pub fn get(&self, s: &Scenario, i: usize) -> Option<f64> {
        (self.spec.get)(s, i)
    }

    /// Write a value (range-checked by the catalogue).
    pub fn set(&self, s: &mut Scenario, i: usize, v: f64) -> Result<(), String> {
        self.param.set_number(s, i, v)
    }

    fn slider(&self) -> (f64, f64) {
        self.spec.slider
    }

    /// Value → slider position.
    pub fn to_slider(&self, v: f64) -> f64 {
        let (lo, hi) = self.slider();
        let f = if self.spec.log {
            (v.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        };
        (f.clamp(0.0, 1.0) * Self::SLIDER_STEPS).round()
    }

    /// Slider position → value, rounded to the control's decimals.
    pub fn from_slider(&self, pos: f64) -> f64 {
        let (lo, hi) = self.slider();
        let f = (pos / Self::SLIDER_STEPS).clamp(0.0, 1.0);
        let v = if self.spec.log {
            (lo.ln() + f * (hi.ln() - lo.ln())).exp()
        } else {
            lo + f * (hi - lo)
        };
        self.round(v).clamp(lo, hi)
    }

    /// Slider position → value, moving at least one unit of the last decimal
    /// place away from `current` when the position moved, so that every arrow-key
    /// press changes the value even where rounding would swallow a small step.
    pub fn from_slider_moving(&self, pos: f64, current: f64) -> f64 {
        let (lo, hi) = self.slider();
        let v = self.from_slider(pos);
        let from = self.to_slider(current);
        if v != current && (pos - from).signum() == (v - current).signum() {
            return v;
        }
        if pos == from {
            return current;
        }
        let unit = 10f64.powi(-(self.spec.decimals as i32));
        self.round(current + (pos - from).signum() * unit)
            .clamp(lo, hi)
    }

    /// Round to the control's decimals.
    pub fn round(&self, v: f64) -> f64 {
        let k = 10f64.powi(self.spec.decimals as i32);
        (v * k).round() / k
    }

    /// Check a typed value: a number within the catalogue's range (wider than
    /// the slider's), or a message saying what is allowed.
    pub fn parse(&self, text: &str) -> Result<f64, String> {
        let label = self.param.label;
        let v: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("{label} must be a number, got {:?}", text.trim()))?;
        let (lo, hi) = (self.spec.min, self.spec.max);
        if !v.is_finite() || v < lo || v > hi {
            return Err(format!(
                "{label} must be between {} and {} {}, got {}",
                params::show(lo),
                params::show(hi),
                self.param.unit,
                text.trim()
            ));
        }
        Ok(self.round(v))
    }

    /// A value as shown in the box.
    pub fn show(&self, v: f64) -> String {
        let d = self.spec.decimals;
        format!("{v:.d$}")
    }

    /// The range typed values may take.
    pub fn range(&self) -> (f64, f64) {
        (self.spec.min, self.spec.max)
    }
}

impl ChoiceControl {
    /// Stable id.
    pub fn id(&self) -> &'static str {
        self.param.id
    }

    /// The current key, if the control applies.
    pub fn get(&self, s: &Scenario, i: usize) -> Option<String> {
        (self.spec.get)(s, i)
    }

    /// (key, label) pairs for this scenario.
    pub fn options(&self, s: &Scenario, i: usize) -> Vec<(String, String)> {
        (self.spec.options)(s, i)
    }

    /// Select a key.
    pub fn set(&self, s: &mut Scenario, i: usize, k: &str) -> Result<(), String> {
        (self.spec.set)(s, i, k)
    }
}

impl TextControl {
    /// The current text, if the control applies.
    pub fn get(&self, s: &Scenario, i: usize) -> Option<String> {
        (self.spec.get)(s, i)
    }

    /// An example of the format, for an empty box.
    pub fn example(&self) -> &'static str {
        self.spec.example
    }

    /// Parse and write the text.
    pub fn set(&self, s: &mut Scenario, i: usize, text: &str) -> Result<(), String> {
        (self.spec.set)(s, i, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_numbers() -> Vec<NumberControl> {
        groups()
            .into_iter()
            .flat_map(|g| g.controls)
            .filter_map(|c| match c {
                Control::Number(n) => Some(n),
                Control::Choice(_) | Control::Text(_) => None,
            })
            .collect()
    }

    #[test]
    fn fleet_controls_show_only_when_a_class_runs_on_the_fleet() {
        let api_only = sim_core::presets::launch_spike();
        let fleet = |s: &Scenario| {
            groups()
                .into_iter()
                .filter(|g| matches!(g.group, Group::Serving | Group::Batching))
                .flat_map(|g| g.controls)
                .any(|c| c.applies(s, 0))
        };
        assert!(!api_only.uses_fleet() && !fleet(&api_only));
        assert!(fleet(&sim_core::presets::chatbot_h100()));
    }

    #[test]
    fn every_slider_step_writes_what_it_reads_and_keeps_the_scenario_valid() {
        for p in sim_core::presets::all() {
            for c in all_numbers() {
                for i in 0..p.scenario.workload.classes.len() {
                    let mut s = p.scenario.clone();
                    let Some(v) = c.get(&s, i) else { continue };
                    let (lo, hi) = c.slider();
                    let target = c.from_slider(c.to_slider(v.clamp(lo, hi)) + 37.0);
                    c.set(&mut s, i, target).expect("applies");
                    let back = c.get(&s, i).expect("still applies");
                    if let Err(e) = s.check() {
                        panic!(
                            "{} on {} at {target} made the scenario invalid: {e}",
                            c.id(),
                            p.id
                        );
                    }
                    assert!(
                        (back - target).abs() <= target.abs() * 1e-6 + 1e-9,
                        "{} on {}: set {target}, read {back}",
                        c.id(),
                        p.id
                    );
                }
            }
        }
    }

    #[test]
    fn every_keyboard_step_moves_the_value() {
        for c in all_numbers() {
            let (lo, hi) = c.slider();
            let mut v = lo;
            let mut steps = 0;
            while v < hi && steps < 100_000 {
                let next = c.from_slider_moving(c.to_slider(v) + 1.0, v);
                assert!(next > v, "{}: stuck at {v}", c.id());
                v = next;
                steps += 1;
            }
            let down = c.from_slider_moving(c.to_slider(hi) - 1.0, hi);
            assert!(down < hi, "{}: cannot step down from the top", c.id());
        }
    }

    #[test]
    fn sliders_map_both_ways_and_typed_values_are_checked() {
        for c in all_numbers() {
            let (lo, hi) = c.slider();
            for pos in [0.0, 250.0, 500.0, 1000.0] {
                let v = c.from_slider(pos);
                assert!((lo..=hi).contains(&v), "{}: {v}", c.id());
                // Round trips are stable: a value's slider position gives back the value.
                assert_eq!(c.from_slider(c.to_slider(v)), v, "{} at {pos}", c.id());
            }
            assert!(
                c.parse("abc")
                    .expect_err("not a number")
                    .contains("must be a number")
            );
            let err = c
                .parse(&format!("{}", c.range().1 * 2.0 + 1.0))
                .expect_err("out of range");
            assert!(err.contains("must be between"), "{err}");
            assert!(c.parse("NaN").is_err());
        }
    }

    #[test]
    fn every_catalogue_parameter_has_a_control_in_its_group() {
        let shown: usize = groups().iter().map(|g| g.controls.len()).sum();
        assert_eq!(shown, params::all().count());
        for g in groups() {
            for c in g.controls {
                assert_eq!(c.param().group, g.group);
            }
        }
    }
}
