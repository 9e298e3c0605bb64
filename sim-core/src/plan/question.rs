//! A plan's question as it will be asked: the scenario (maybe over a
//! shorter window of steady traffic), what it costs against the work
//! budget, and what the surface asking says before it starts, naming its
//! own ways past the budget.

use super::budget::{estimate, within};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// How a surface offers the ways past the work budget, as its notes name
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Remedies {
    /// `tlab plan`'s flags.
    #[default]
    Cli,
    /// The page's planner panel.
    Page,
}

impl Remedies {
    /// How to plan with more work.
    pub fn longer(self) -> &'static str {
        match self {
            Remedies::Cli => "plan with --full",
            Remedies::Page => "press \u{201c}Search longer\u{201d} (ten times the budget)",
        }
    }

    /// How to ask for fewer replicas.
    pub fn fewer(self) -> &'static str {
        match self {
            Remedies::Cli => "fewer replicas with --max-replicas",
            Remedies::Page => "fewer replicas under \u{201c}Most replicas\u{201d}",
        }
    }
}

/// A plan's question as it will be asked: the scenario (maybe over a shorter
/// window), what that costs, and what was changed or cannot be helped.
#[derive(Clone, Debug)]
pub struct Question {
    /// The scenario the searches run on.
    pub scenario: Scenario,
    /// Estimated simulated events, all searches together.
    pub estimated_events: f64,
    /// Said before starting: the shorter window, or that some searches may
    /// end unsettled.
    pub notes: Vec<String>,
}

/// The question [`super::plan`] answers for `base` within `space`'s budget,
/// said before it starts (the CLI and the page both ask it).
pub fn question(base: &Scenario, slo: super::PlanSlo, space: &super::Space) -> Question {
    let estimated = estimate(&super::searches(base, slo, space));
    let (scenario, shorter) = within(base, estimated, space.budget_events, space.remedies);
    let estimated_events = if shorter.is_some() {
        estimate(&super::searches(&scenario, slo, space))
    } else {
        estimated
    };
    let mut notes: Vec<String> = shorter.into_iter().collect();
    if estimated_events > space.budget_events as f64 {
        notes.push(format!(
            "this question needs about {:.0}M simulated events, more than the work budget of {:.0}M: a configuration whose search runs out of its share is listed as unsettled — ask a smaller one ({}, a shorter duration) or {}",
            estimated_events / 1e6,
            space.budget_events as f64 / 1e6,
            space.remedies.fewer(),
            space.remedies.longer()
        ));
    }
    Question {
        scenario,
        estimated_events,
        notes,
    }
}
