//! The API setups the planner tries beyond a tier at a rate-limit multiple:
//! provisioned units bought in front of a tier that sells them, and each
//! tier falling back to another ([`super::Space::api_strategies`]).

use super::{Config, Space};
use crate::api::ClientPolicy;
use crate::scenario::Scenario;

/// The API setups beyond a tier at a rate-limit multiple: provisioned
/// units in front of a tier that sells them (the counts [`unit_counts`]
/// gives, at 1× limits, with each client), and each tier falling back to
/// each other tier that answers in time (at every multiple, with the
/// scenario's client).
pub(super) fn strategies(
    base: &Scenario,
    api: &crate::api::Api,
    clients: &[Option<ClientPolicy>],
    space: &Space,
) -> Vec<Config> {
    let mut out = Vec::new();
    let answers = |t: &&crate::api::ProviderTier| t.batch.is_none();
    for t in api.tiers.iter().filter(answers) {
        let counts = t
            .provisioned
            .as_ref()
            .map(|p| unit_counts(base, p))
            .unwrap_or_default();
        for u in counts {
            for client in clients {
                out.push(Config::Api {
                    tier: t.name.clone(),
                    multiplier: 1,
                    client: client.clone(),
                    units: Some(u),
                    fallback: None,
                });
            }
        }
        for f in api.tiers.iter().filter(answers) {
            if f.name == t.name || api.fallback.first() == Some(&f.name) {
                continue;
            }
            for &m in &space.api_multipliers {
                out.push(Config::Api {
                    tier: t.name.clone(),
                    multiplier: m,
                    client: None,
                    units: None,
                    fallback: Some(f.name.clone()),
                });
            }
        }
    }
    out
}

/// Provisioned unit counts worth trying for `base`'s traffic: those whose
/// tokens a minute cover half of what its calls reserve on average (each
/// its prompt and its `max_tokens`, as units charge them), all of it, and
/// its peak; closed-loop users, whose mean depends on the answers, count
/// half their peak as the mean. At least one, at most the most a tier may
/// buy.
fn unit_counts(base: &Scenario, p: &crate::api::Provisioned) -> Vec<u32> {
    let peak = base.peak_tasks_per_s();
    let mean = base
        .offered_tasks_per_s()
        .map_or(peak / 2.0, |(mean, _)| mean);
    let classes = &base.workload.classes;
    let shares: f64 = classes.iter().map(|k| k.share).sum::<f64>().max(1e-12);
    let per_task: f64 = classes
        .iter()
        .map(|k| {
            let reserved =
                k.mean_input_tokens() + f64::from(k.max_tokens) + k.mean_reasoning_tokens();
            k.share / shares * f64::from(k.calls_per_task) * reserved
        })
        .sum();
    let per_unit = p.tokens_per_minute_per_unit.max(1) as f64;
    let units = |tasks_per_s: f64| {
        (tasks_per_s * per_task * 60.0 / per_unit)
            .ceil()
            .clamp(1.0, 100_000.0) as u32
    };
    let mut counts = vec![units(mean / 2.0), units(mean), units(peak)];
    counts.dedup();
    counts
}
