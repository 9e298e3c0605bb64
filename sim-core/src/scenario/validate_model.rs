//! Validation of the model a fleet serves: custom dimensions (dense, mixture
//! of experts, latent attention), number formats, expert parallelism.

use super::Serving;
use super::validate::Checker;
use crate::physics::{Attention, Model, ModelDims, Moe, ServingSoftware};

impl Checker {
    /// A fitted profile: vLLM's constants refitted, so it runs as vLLM; every
    /// constant in the range a fit may reach.
    pub(super) fn fitted_profile(&mut self, s: &Serving) {
        let Some(p) = &s.fitted_profile else { return };
        if s.software != ServingSoftware::Vllm {
            self.problems.push(format!(
                "serving.profile is a fitted vLLM profile, so serving.software must be \"vllm\", got {:?}",
                s.software.name()
            ));
        }
        self.problems.extend(p.problems("serving.profile"));
    }

    /// A custom model's experts: counts within its layers and its experts.
    fn custom_moe(&mut self, f: &str, d: &ModelDims, m: &Moe) {
        let f = format!("{f}.moe");
        self.range_u(&format!("{f}.experts"), u64::from(m.experts), 1, 1024);
        self.range_u(
            &format!("{f}.experts_per_token"),
            u64::from(m.experts_per_token),
            1,
            u64::from(m.experts.clamp(1, 1024)),
        );
        self.range_u(
            &format!("{f}.shared_experts"),
            u64::from(m.shared_experts),
            0,
            64,
        );
        self.range_u(
            &format!("{f}.expert_ffn"),
            u64::from(m.expert_ffn),
            1,
            1_048_576,
        );
        self.range_u(
            &format!("{f}.first_dense_layers"),
            u64::from(m.first_dense_layers),
            0,
            u64::from(d.layers.saturating_sub(1)),
        );
        self.range_u(
            &format!("{f}.every"),
            u64::from(m.every),
            1,
            u64::from(d.layers.saturating_sub(m.first_dense_layers).max(1)),
        );
    }

    pub(super) fn model(&mut self, s: &Serving) {
        if let Model::Custom(d) = s.model {
            let f = "serving.model.custom";
            self.range_u(&format!("{f}.layers"), u64::from(d.layers), 1, 1024);
            self.range_u(&format!("{f}.hidden"), u64::from(d.hidden), 1, 131_072);
            self.range_u(&format!("{f}.q_heads"), u64::from(d.q_heads), 1, 1024);
            self.range_u(
                &format!("{f}.kv_heads"),
                u64::from(d.kv_heads),
                1,
                u64::from(d.q_heads.max(1)),
            );
            self.range_u(&format!("{f}.head_dim"), u64::from(d.head_dim), 1, 1024);
            self.range_u(&format!("{f}.ffn"), u64::from(d.ffn), 1, 1_048_576);
            self.range_u(&format!("{f}.vocab"), u64::from(d.vocab), 1, 4_194_304);
            if let Some(m) = &d.moe {
                self.custom_moe(f, &d, m);
            }
            if let Some(w) = d.sliding_window {
                let f = format!("{f}.sliding_window");
                self.range_u(&format!("{f}.window"), u64::from(w.window), 1, 1_048_576);
                // At least one layer keeps the whole context: the KV pool is
                // counted in its blocks.
                if d.layers < 2 || !(1..d.layers).contains(&w.layers) {
                    self.problems.push(format!(
                        "{f}.layers must be 1..={} (at least one of the {} layers keeps the whole context), got {}",
                        d.layers.saturating_sub(1),
                        d.layers,
                        w.layers
                    ));
                }
            }
            if let Attention::Mla {
                q_lora_rank,
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
            } = d.attention
            {
                let f = format!("{f}.attention.mla");
                for (name, v) in [
                    ("q_lora_rank", q_lora_rank),
                    ("kv_lora_rank", kv_lora_rank),
                    ("qk_nope_head_dim", qk_nope_head_dim),
                    ("qk_rope_head_dim", qk_rope_head_dim),
                    ("v_head_dim", v_head_dim),
                ] {
                    self.range_u(&format!("{f}.{name}"), u64::from(v), 1, 65_536);
                }
            }
        }
        if !s.kv_cache.holds_kv() {
            self.problems.push(format!(
                "serving.kv_cache must be bf16 or fp8, got {}",
                s.kv_cache.name().to_lowercase()
            ));
        }
        if s.expert_parallel {
            match s.model.dims().moe {
                None => self.problems.push(format!(
                    "serving.expert_parallel needs a mixture-of-experts model; {} is dense",
                    s.model.name()
                )),
                Some(m) if s.gpus_per_replica < 2 || m.experts % s.gpus_per_replica != 0 => {
                    self.problems.push(format!(
                        "serving.expert_parallel needs 2 or more GPUs per replica that divide the {} experts evenly, got serving.gpus_per_replica = {}",
                        m.experts, s.gpus_per_replica
                    ));
                }
                Some(_) => {}
            }
        }
        if s.async_scheduling == Some(true) && !s.models_async_scheduling() {
            self.problems.push(format!(
                "serving.async_scheduling is modelled for vLLM and fitted profiles only; {} passes are timed from its published tables — drop it or choose vllm",
                s.software.name()
            ));
        }
    }
}
