//! Capacity of a preset's fleet under each batching policy and weight format:
//! `cargo run --release -p sim-core --example capacity -- PRESET`.
fn main() {
    let id = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "self-hosted-tuning".into());
    let p = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == id)
        .expect("a preset id");
    let (out, _) = p.scenario.mean_tokens();
    for policy in ["none", "static", "continuous", "chunked_prefill"] {
        for weights in ["bf16", "fp8", "int4"] {
            let mut s = p.scenario.clone();
            sim_core::params::apply(&mut s, "batching.policy", policy).expect("policy");
            sim_core::params::apply(&mut s, "weights", weights).expect("weights");
            match sim_core::compare::replica_capacity_per_s(&s) {
                Ok(c) => println!(
                    "{policy:16} {weights:5} {c:8.2} tasks/s  {:8.0} output tok/s per replica",
                    c * out
                ),
                Err(e) => println!("{policy:16} {weights:5} {e}"),
            }
        }
    }
}
