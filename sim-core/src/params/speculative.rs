//! Speculative decoding as catalogue parameters: the proposer (off, an
//! EAGLE head, an MTP module, or a smaller model of the same vocabulary),
//! its draft tokens per step and their acceptance rate. All three are a
//! pool's own settings (`speculative@POOL`).

use super::edits::{key, known_key};
use super::serving::keys;
use super::{Choice, Group, Kind, Number, Param};
use crate::physics::Model;
use crate::scenario::{
    MAX_ACCEPTANCE, MAX_SPECULATIVE_TOKENS, Scenario, Speculative, SpeculativeMethod,
};

/// "off", "eagle", "mtp", and "draft:MODEL" for each catalogue model smaller
/// than the pool's with its vocabulary.
fn method_options(s: &Scenario, _: usize) -> Vec<(String, String)> {
    let target = s.serving.model.dims();
    let mut out = vec![
        ("off".to_owned(), "Off: one token a step".to_owned()),
        (
            "eagle".to_owned(),
            "An EAGLE head (one decoder layer on the model's hidden states)".to_owned(),
        ),
        (
            "mtp".to_owned(),
            "A multi-token-prediction module (DeepSeek's MTP)".to_owned(),
        ),
    ];
    for m in Model::NAMED {
        let d = m.dims();
        if d.vocab == target.vocab && d.params() < target.params() {
            out.push((
                format!("draft:{}", key(&m)),
                format!("A draft model: {}", m.name()),
            ));
        }
    }
    out
}

/// The pool's speculative settings, or why `path` cannot be set.
fn active<'a>(s: &'a mut Scenario, path: &str) -> Result<&'a mut Speculative, String> {
    s.serving
        .speculative
        .as_mut()
        .ok_or_else(|| format!("{path}: speculative decoding is off"))
}

fn method_key(sp: &Speculative) -> String {
    match sp.method {
        SpeculativeMethod::Draft { model } => format!("draft:{}", key(&model)),
        m => m.name().to_owned(),
    }
}

/// Switch to method `k` with its default tokens and acceptance (keeping
/// yours when only the draft model changes), or off.
fn set_method(s: &mut Scenario, k: &str) -> Result<(), String> {
    known_key("speculative", k, &keys(method_options(s, 0)))?;
    let method = match k {
        "off" => {
            s.serving.speculative = None;
            return Ok(());
        }
        "eagle" => SpeculativeMethod::Eagle,
        "mtp" => SpeculativeMethod::Mtp,
        _ => {
            let name = k.trim_start_matches("draft:");
            let model = Model::NAMED
                .into_iter()
                .find(|m| key(m) == name)
                .ok_or_else(|| format!("speculative: unknown draft model {name:?}"))?;
            SpeculativeMethod::Draft { model }
        }
    };
    let keep = s.serving.speculative.filter(|old| {
        matches!(
            (old.method, method),
            (
                SpeculativeMethod::Draft { .. },
                SpeculativeMethod::Draft { .. }
            )
        )
    });
    let (tokens, acceptance) = keep.map_or(method.defaults(), |o| (o.tokens, o.acceptance));
    s.serving.speculative = Some(Speculative {
        method,
        tokens,
        acceptance,
    });
    Ok(())
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "speculative",
        id: "speculative",
        group: Group::Batching,
        label: "Speculative decoding",
        unit: "",
        help: "A cheap proposer drafts a few tokens per sequence and each decode step checks them all at once, keeping those it agrees with and one of its own: an EAGLE head or an MTP module (one extra layer on the model's own states) or a smaller model with the same vocabulary. It pays when passes are bound by reading weights (small batches), and costs when they are bound by compute (large ones).",
        kind: Kind::Choice(Choice {
            options: method_options,
            get: |s, _| {
                Some(
                    s.serving
                        .speculative
                        .as_ref()
                        .map_or_else(|| "off".to_owned(), method_key),
                )
            },
            set: |s, _, k| set_method(s, k),
        }),
    },
    Param {
        path: "speculative.tokens",
        id: "speculative-tokens",
        group: Group::Batching,
        label: "Draft tokens per step",
        unit: "tokens",
        help: "Tokens the proposer drafts for each sequence before a step checks them (vLLM's num_speculative_tokens), k: more can be accepted at once, but each draft pass and the wider check cost time even when they are rejected.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: MAX_SPECULATIVE_TOKENS as f64,
            slider: (1.0, MAX_SPECULATIVE_TOKENS as f64),
            log: false,
            decimals: 0,
            get: |s, _| s.serving.speculative.map(|sp| f64::from(sp.tokens)),
            set: |s, _, v| {
                active(s, "speculative.tokens")?.tokens = v as u32;
                Ok(())
            },
        }),
    },
    Param {
        path: "speculative.acceptance",
        id: "speculative-acceptance",
        group: Group::Batching,
        label: "Acceptance rate",
        unit: "",
        help: "Chance that a draft token is accepted given the ones before it were, α: a step yields (1 − α^(k+1)) / (1 − α) tokens on average, drawn step by step for each request. It depends on the proposer and the text: 0.6–0.8 for EAGLE heads and draft models on chat, 0.85–0.9 for DeepSeek-V3's MTP (docs/speculative.md).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: MAX_ACCEPTANCE,
            slider: (0.0, MAX_ACCEPTANCE),
            log: false,
            decimals: 2,
            get: |s, _| s.serving.speculative.map(|sp| sp.acceptance),
            set: |s, _, v| {
                active(s, "speculative.acceptance")?.acceptance = v;
                Ok(())
            },
        }),
    },
];
