//! Print a summary of every preset (a quick manual check).
fn main() {
    for p in sim_core::presets::all() {
        let t = std::time::Instant::now();
        let r = sim_core::run_scenario(p.scenario).expect("valid preset");
        if std::env::var("FULL").is_ok() {
            println!("{}", serde_json::to_string_pretty(&r.overall).unwrap());
        }
        println!(
            "{:32} {:>8.1?} passes {:>7} done {:>6}/{:>6} ttft p50 {:>8.1?} p99 {:>8.1?} tpot p50 {:>6.1?} out tok/s {:>8.0} batch {:>6.1} kv {:.2} preempt {} $/Mtok {:.2?} warn {:?}",
            p.id,
            t.elapsed(),
            r.utilisation.forward_passes,
            r.requests.completed,
            r.requests.arrived,
            r.overall.ttft.p50_ms,
            r.overall.ttft.p99_ms,
            r.overall.tpot.p50_ms,
            r.throughput.output_tokens_per_s,
            r.utilisation.mean_batch_size,
            r.utilisation.kv_use_peak,
            r.utilisation.preemptions,
            r.cost.usd_per_mtok_output,
            r.warnings
        );
    }
}
