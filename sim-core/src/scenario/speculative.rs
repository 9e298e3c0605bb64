//! Speculative decoding: a cheap proposer drafts `tokens` tokens per
//! sequence, and the target verifies them all in its next pass, keeping the
//! longest prefix it agrees with plus one token of its own
//! (`docs/speculative.md`).

use super::{Batching, ServiceModel, Serving};
use crate::physics::{Model, ModelDims};
use serde::{Deserialize, Serialize};

/// A pool's speculative decoding.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Speculative {
    /// What proposes the draft tokens.
    pub method: SpeculativeMethod,
    /// Draft tokens proposed per sequence per step (vLLM's
    /// `num_speculative_tokens`), k.
    pub tokens: u32,
    /// Chance that each draft token is accepted, given the ones before it
    /// were, α: a step yields (1 − α^(k+1)) / (1 − α) tokens on average.
    pub acceptance: f64,
}

/// What proposes the draft tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeculativeMethod {
    /// An EAGLE head: one decoder layer of the target's shape on the target's
    /// last hidden states, sharing its embeddings and output head (EAGLE,
    /// EAGLE-3 in vLLM).
    Eagle,
    /// A multi-token-prediction module trained with the model (DeepSeek-V3's
    /// MTP): one more decoder layer of the target's shape, sharing its
    /// embeddings and output head.
    Mtp,
    /// A smaller model of the same family and vocabulary, run as its own
    /// decode passes.
    Draft {
        /// The draft model.
        model: Model,
    },
}

/// Most draft tokens per step.
pub const MAX_SPECULATIVE_TOKENS: u32 = 8;
/// Highest acceptance rate (α = 1 would make every draft right).
pub const MAX_ACCEPTANCE: f64 = 0.99;

impl SpeculativeMethod {
    /// The method's name in menus and the catalogue.
    pub fn name(self) -> &'static str {
        match self {
            SpeculativeMethod::Eagle => "eagle",
            SpeculativeMethod::Mtp => "mtp",
            SpeculativeMethod::Draft { .. } => "draft",
        }
    }

    /// What a method starts from on the page and on the command line: k and
    /// α, with their sources in `docs/speculative.md` — an EAGLE head at 3
    /// tokens and α 0.7 (vLLM's EAGLE examples; EAGLE's chain acceptance on
    /// chat), DeepSeek's MTP at 1 token and α 0.85 (DeepSeek-V3 report:
    /// 85–90 % of second tokens accepted), a draft model at 4 tokens and α
    /// 0.7 (the same family's small model on chat).
    pub fn defaults(self) -> (u32, f64) {
        match self {
            SpeculativeMethod::Eagle => (3, 0.7),
            SpeculativeMethod::Mtp => (1, 0.85),
            SpeculativeMethod::Draft { .. } => (4, 0.7),
        }
    }
}

impl Speculative {
    /// Tokens a step yields on average: (1 − α^(k+1)) / (1 − α).
    pub fn mean_tokens_per_step(&self) -> f64 {
        expected_tokens(self.acceptance, self.tokens)
    }

    /// The proposer's shape: for a head, one decoder layer of the target's
    /// dimensions (its embeddings and output head are the target's, so
    /// count once in its weights but run every draft pass); for a draft
    /// model, that model.
    pub fn proposer(&self, target: &Model) -> ModelDims {
        match self.method {
            SpeculativeMethod::Eagle | SpeculativeMethod::Mtp => ModelDims {
                layers: 1,
                sliding_window: None,
                ..target.dims()
            },
            SpeculativeMethod::Draft { model } => model.dims(),
        }
    }

    /// Problems with this pool's speculation, naming fields under `at`.
    pub(super) fn problems(&self, at: &str, s: &Serving, problems: &mut Vec<String>) {
        if !(1..=MAX_SPECULATIVE_TOKENS).contains(&self.tokens) {
            problems.push(format!(
                "{at}.tokens must be 1..={MAX_SPECULATIVE_TOKENS}, got {}",
                self.tokens
            ));
        }
        if !(self.acceptance.is_finite() && (0.0..=MAX_ACCEPTANCE).contains(&self.acceptance)) {
            problems.push(format!(
                "{at}.acceptance must be 0..={MAX_ACCEPTANCE}, got {}",
                self.acceptance
            ));
        }
        if !matches!(
            s.batching,
            Batching::Continuous { .. } | Batching::ChunkedPrefill { .. } | Batching::None
        ) || s.service != ServiceModel::Physics
        {
            problems.push(format!(
                "{at}: speculative decoding runs under iteration-level batching on the GPU physics"
            ));
        }
        if let SpeculativeMethod::Draft { model } = self.method {
            let (d, t) = (model.dims(), s.model.dims());
            if d.vocab != t.vocab {
                problems.push(format!(
                    "{at}.method.draft.model: {} has a vocabulary of {} tokens, {} of {}: a draft model must share the target's vocabulary",
                    model.name(),
                    d.vocab,
                    s.model.name(),
                    t.vocab
                ));
            }
            if d.params() >= t.params() {
                problems.push(format!(
                    "{at}.method.draft.model: {} is not smaller than {}: a draft model is the cheap one",
                    model.name(),
                    s.model.name()
                ));
            }
        }
    }
}

/// (1 − α^(k+1)) / (1 − α): tokens a step yields on average with k draft
/// tokens accepted one after another with chance α each (k + 1 as α → 1).
pub fn expected_tokens(alpha: f64, k: u32) -> f64 {
    (0..=k).map(|j| libm::pow(alpha, f64::from(j))).sum()
}
