//! What a plan or a headroom search is asked, as `tlab`'s flags and
//! Python's keywords say it (one reading for both): the targets, each
//! overriding the scenario's (`PlanSlo::for_scenario`), and the space a plan
//! searches. Refusals name the option as the caller spells it.

use sim_core::Scenario;
use sim_core::plan::{PlanSlo, Space};

/// The question's options; none given means the scenario's own targets and
/// the planner's default space.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanAsk {
    /// p99 time-to-first-token target, ms.
    pub ttft_p99_ms: Option<f64>,
    /// p99 time-per-output-token target, ms.
    pub tpot_p99_ms: Option<f64>,
    /// Largest share of requests that may fail, be refused or time out.
    pub max_errors: Option<f64>,
    /// Smallest share of requests meeting the scenario's SLO.
    pub min_goodput: Option<f64>,
    /// Most replicas to consider (default 64).
    pub max_replicas: Option<u32>,
    /// GPUs to consider, catalogue keys or `all` (default: the planner's).
    #[serde(default)]
    pub gpus: Vec<String>,
    /// Also consider self-hosting when API tiers serve the scenario.
    #[serde(default)]
    pub self_hosted: bool,
    /// Plan on the whole scenario, with no work budget.
    #[serde(default)]
    pub full: bool,
    /// Plan pools (each class its own pool or tier) instead.
    #[serde(default)]
    pub pools: bool,
    /// Plan a prefill/decode split instead.
    #[serde(default)]
    pub split: bool,
    /// With `split`: the KV-cache link.
    pub link: Option<String>,
}

impl PlanAsk {
    /// The targets for `s`, each option given overriding the scenario's;
    /// `spell` writes an option's name (`max_errors`) as the caller does.
    pub fn targets(&self, s: &Scenario, spell: impl Fn(&str) -> String) -> Result<PlanSlo, String> {
        let base = PlanSlo::for_scenario(s);
        PlanSlo {
            ttft_p99_ms: self.ttft_p99_ms.unwrap_or(base.ttft_p99_ms),
            tpot_p99_ms: self.tpot_p99_ms.unwrap_or(base.tpot_p99_ms),
            max_error_fraction: self.max_errors.unwrap_or(base.max_error_fraction),
            min_goodput: self.min_goodput.unwrap_or(base.min_goodput),
        }
        .checked()
        .map_err(|e| {
            let field = e.split(' ').next().unwrap_or_default();
            let option = match field {
                "max_error_fraction" => "max_errors",
                f => f,
            };
            format!("{}{}", spell(option), &e[field.len()..])
        })
    }

    /// The space a plan of `s` searches.
    pub fn space(&self, s: &Scenario, spell: impl Fn(&str) -> String) -> Result<Space, String> {
        let max_replicas = self.max_replicas.unwrap_or(64);
        if !(1..=1024).contains(&max_replicas) {
            return Err(format!(
                "{} must be 1..=1024, got {max_replicas}",
                spell("max_replicas")
            ));
        }
        Ok(Space {
            max_replicas,
            gpus: crate::analysis::plan_gpus(&self.gpus, &spell("gpus"))?,
            self_hosted: self.self_hosted || s.uses_fleet(),
            budget_events: if self.full {
                u64::MAX
            } else {
                sim_core::plan::budget::PLAN_EVENTS
            },
            ..Space::default()
        })
    }
}

/// The KV-cache link named `name` (none: the split planner's default);
/// `spell` writes the option's name as the caller does.
pub fn kv_link(
    name: Option<&str>,
    spell: impl Fn(&str) -> String,
) -> Result<Option<sim_core::scenario::KvLink>, String> {
    name.map(|l| {
        sim_core::scenario::KvLink::named(l).ok_or_else(|| {
            format!(
                "{} must be nvlink, infiniband, roce or ethernet, got {l:?}",
                spell("link")
            )
        })
    })
    .transpose()
}

/// An option's name as a flag: `max_errors` → `--max-errors`.
pub fn flag(option: &str) -> String {
    format!("--{}", option.replace('_', "-"))
}

/// The plan of the question `q` asked of `s`, its searches on every core
/// (or one after another), with the setup as it is judged from its whole run.
pub fn answer(
    s: &sim_core::ValidScenario,
    q: &sim_core::plan::budget::Question,
    slo: PlanSlo,
    space: &Space,
    parallel: bool,
) -> sim_core::plan::Plan {
    let mut p = crate::analysis::plan_parallel(&q.scenario, slo, space, parallel);
    p.include_as_is(s, &slo, &sim_core::run(s));
    p
}
