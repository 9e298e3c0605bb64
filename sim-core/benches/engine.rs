//! Engine benchmarks (`cargo bench -p sim-core`): the reference workload,
//! Llama-3.1-8B on one H100 with chunked prefill at 40 req/s, 512 in / 256 out.

use sim_core::presets::bench_h100;

fn main() {
    divan::main();
}

/// 50,000 requests. Target: under 30 ms.
#[divan::bench(sample_count = 20)]
fn requests_50k(bencher: divan::Bencher) {
    let s = bench_h100(50_000).validate().expect("valid");
    bencher.bench(|| {
        let r = sim_core::run(divan::black_box(&s));
        assert_eq!(r.requests.completed, r.requests.arrived);
        r.utilisation.forward_passes
    });
}

/// 10⁶ requests. Target: under 0.5 s with flat memory.
#[divan::bench(sample_count = 3)]
fn requests_1m(bencher: divan::Bencher) {
    let s = bench_h100(1_000_000).validate().expect("valid");
    bencher.bench(|| sim_core::run(divan::black_box(&s)).requests.completed);
}

/// The page's default scenario (a slider drag re-runs it).
#[divan::bench(sample_count = 20)]
fn default_scenario(bencher: divan::Bencher) {
    let s = sim_core::presets::chatbot_h100().validate().expect("valid");
    bencher.bench(|| sim_core::run(divan::black_box(&s)).requests.completed);
}

/// The benchmark workload at 20 req/s with every prompt starting with one of
/// `prompts` shared 1,024-token system prompts under prefix caching. With 10
/// prompts nearly every lookup hits a small cache; with 1,000 or 500,000 most
/// miss, and every miss publishes 64 blocks that are later evicted (1,000
/// prompts' blocks nearly fill the KV cache; 500,000 churn through it). A
/// lookup walks the prompt's blocks, not the cache: the last two cost about
/// the same (≈ 1.4 µs a request; ≈ 1 µs when the prompt hits).
#[divan::bench(args = [10, 1_000, 500_000], sample_count = 5)]
fn prefix_cache_50k(bencher: divan::Bencher, prompts: u32) {
    let mut s = bench_h100(50_000);
    s.workload.classes[0].shared_prefix = Some(sim_core::scenario::SharedPrefix {
        prompts,
        tokens: 1024,
    });
    s.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 20.0 };
    s.duration_s = 50_000.0 / 20.0;
    let s = s.validate().expect("valid");
    bencher.bench(|| {
        let r = sim_core::run(divan::black_box(&s));
        assert_eq!(r.requests.completed, r.requests.arrived);
        r.utilisation.prefix_cache_hit_rate
    });
}

/// 10,000 five-turn conversations (50,000 requests) at 4 tasks/s on four
/// replicas: every turn resends its growing history (a 1,024-token system
/// prompt, then ≈ 600 tokens a turn), so each request looks up, holds and
/// lets go of ≈ 100 blocks, and histories churn through the cache.
#[divan::bench(sample_count = 5)]
fn conversations_50k(bencher: divan::Bencher) {
    let mut s = bench_h100(50_000);
    s.serving.replicas = 4;
    let k = &mut s.workload.classes[0];
    k.calls_per_task = 5;
    k.shared_prefix = Some(sim_core::scenario::SharedPrefix {
        prompts: 100,
        tokens: 1024,
    });
    k.conversation = Some(sim_core::scenario::Conversation {
        think_time_s: sim_core::dist::Dist::Fixed { value: 5.0 },
    });
    s.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 4.0 };
    s.duration_s = 10_000.0 / 4.0;
    let s = s.validate().expect("valid");
    bencher.bench(|| {
        let r = sim_core::run(divan::black_box(&s));
        assert_eq!(r.requests.completed, r.requests.arrived);
        r.utilisation.prefix_cache_hit_rate
    });
}

/// Reading a trace: the first 2,000 lines of Mooncake's conversation trace
/// (JSON lines with prefix-block hashes), per request ≈ this ÷ 2,000.
#[divan::bench(sample_count = 20)]
fn trace_parse_mooncake_2000(bencher: divan::Bencher) {
    let text = include_str!("../tests/traces/mooncake-first-2000.jsonl");
    let options = sim_core::traces::Options::default();
    bencher.bench(|| {
        sim_core::traces::read(divan::black_box(text), &options)
            .expect("trace")
            .requests
            .len()
    });
}

/// Reading and replaying 2,000 requests of Azure's coding trace on the
/// default scenario's H100, parsing included.
#[divan::bench(sample_count = 10)]
fn trace_replay_azure_2000(bencher: divan::Bencher) {
    let text = include_str!("../tests/traces/azure-code-first-2000.csv");
    let base = sim_core::presets::chatbot_h100();
    bencher.bench(|| {
        let t = sim_core::traces::read(divan::black_box(text), &Default::default()).expect("trace");
        let mut s = base.clone();
        t.apply_to(&mut s);
        sim_core::run(&s.validate().expect("valid"))
            .requests
            .completed
    });
}

/// Mooncake's conversation trace (its first 2,000 requests, ≈ 13,700-token
/// prompts, 27 hashes each) replayed on four H100 replicas with prefix
/// caching driven by its hashes: each request walks its hashes' runs.
#[divan::bench(sample_count = 5)]
fn mooncake_hashes_2k(bencher: divan::Bencher) {
    let text = include_str!("../tests/traces/mooncake-first-2000.jsonl");
    let t = sim_core::traces::read(text, &sim_core::traces::Options::default()).expect("trace");
    let mut s = sim_core::presets::chatbot_h100();
    s.serving.replicas = 4;
    s.serving.prefix_caching = Some(true);
    t.apply_to(&mut s);
    let s = s.validate().expect("valid");
    bencher.bench(|| {
        let r = sim_core::run(divan::black_box(&s));
        assert_eq!(r.requests.completed, r.requests.arrived);
        r.utilisation.prefix_cache_hit_rate
    });
}

/// The whole Mooncake conversation trace (12,031 requests, one hour, hashes
/// driving the prefix cache) read, made a scenario and replayed on H100
/// replicas of the chatbot: 3 (the fewest that keep up: 99 % busy, the queue
/// drained 14 s after the last arrival), 4 and 8. Parsing included; the file
/// itself is read once, outside the timing, from `../shared/traces/` beside
/// the project (skipped, and said, when it is not there).
#[divan::bench(args = [3, 4, 8], sample_count = 5)]
fn mooncake_full_replay(bencher: divan::Bencher, replicas: u32) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/traces/mooncake-conversation.jsonl"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("mooncake_full_replay: {path} not found, skipped");
        return;
    };
    let mut base = sim_core::presets::chatbot_h100();
    base.serving.replicas = replicas;
    bencher.bench(|| {
        let t =
            sim_core::traces::read(divan::black_box(&text), &Default::default()).expect("trace");
        let mut s = base.clone();
        t.apply_to(&mut s);
        let r = sim_core::run(&s.validate().expect("valid"));
        assert_eq!(r.requests.completed, 12_031);
        r.utilisation.prefix_cache_hit_rate
    });
}

/// 10⁶ requests at 160 req/s on four H100 replicas, in four classes of the
/// benchmark's shape: one pool of four replicas behind least-outstanding,
/// or four pools of one replica each with a rule per class. Target: four
/// pools within 1.5× of one.
#[divan::bench(args = [1, 4], sample_count = 3)]
fn pools_1m(bencher: divan::Bencher, pools: usize) {
    let s = sim_core::presets::bench_pools(1_000_000, pools)
        .validate()
        .expect("valid");
    bencher.bench(|| {
        let r = sim_core::run(divan::black_box(&s));
        assert_eq!(r.pools.len(), if pools > 1 { pools } else { 0 });
        r.requests.completed
    });
}

/// Answers of 100,000 tokens at 0.5 req/s on one H100, whose KV cache holds
/// a few of them: each waiting request is tried for admission pass after
/// pass. Without speculation, and with EAGLE drafting 8 tokens at 99 %
/// acceptance (the hostile file `spec-k8-a0.99-out100k-81cpu-s.json`: its
/// draft outcomes are drawn once a request, not at every try). Target:
/// speculation within 3× of none.
#[divan::bench(args = ["off", "eagle"], sample_count = 3)]
fn long_answers_under_kv_pressure(bencher: divan::Bencher, method: &str) {
    let text = include_str!("../tests/repro/hostile-files/spec-k8-a0.99-out100k-81cpu-s.json");
    let mut s = sim_core::Scenario::from_json(text)
        .expect("valid")
        .into_inner();
    if method == "off" {
        s.serving.speculative = None;
    }
    let s = s.validate().expect("valid");
    bencher.bench(|| sim_core::run(divan::black_box(&s)).requests.completed);
}

/// A generated Mooncake trace of 10⁶ lines (≈ 200 bytes each: a second
/// apart over 11.6 days of the file's own time at speed 2, 24 hashes a
/// line, the prefix of one of 170 conversations, each hash always at one
/// place) read a line at a time: into its requests by column
/// (what a replay holds), and summarised keeping no request (`tlab trace`).
/// Target: ≤ 1 µs a line, ≤ 1 s in all.
#[divan::bench(args = ["columns", "summary"], sample_count = 3)]
fn trace_read_1m(bencher: divan::Bencher, how: &str) {
    use std::fmt::Write;
    let mut text = String::new();
    for i in 0..1_000_000u64 {
        let hashes: Vec<String> = (0..24).map(|k| ((i % 170) * 24 + k).to_string()).collect();
        let _ = writeln!(
            text,
            "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}]}}",
            i * 1000,
            12_000 + (i % 97),
            300 + (i % 13),
            hashes.join(", ")
        );
    }
    let options = sim_core::traces::Options {
        speed: 2.0,
        ..Default::default()
    };
    bencher.bench(|| {
        let text = divan::black_box(&text);
        if how == "columns" {
            let mut r = sim_core::traces::TraceReader::new(&options, 0).expect("options");
            text.lines().for_each(|l| r.line(l).expect("a line"));
            r.finish().expect("a trace").requests.len()
        } else {
            let mut s = sim_core::traces::TraceSummariser::new(&options)
                .expect("options")
                .expect("no rate");
            text.lines().for_each(|l| s.line(l).expect("a line"));
            s.finish()
                .expect("a summary")
                .expect("sorted")
                .summary
                .requests
        }
    });
}

/// An API launch (launch-spike, 5,000 users at its peak, the SDKs' retries
/// and a fallback to the small model), the same with the provider having a
/// bad spell (10 % errors all along, 50 % and three times slower for 20
/// minutes), and that with every service besides: the long threads on the
/// flex variant, 200 provisioned units in front of the tier, a chain
/// falling back to the small model then the fleet, and hedges after 2 s. Target: each costs
/// ≤ 1.3× per request what the plain launch does.
#[divan::bench(args = ["plain", "incidents", "services"], sample_count = 5)]
fn api_launch(bencher: divan::Bencher, how: &str) {
    let mut s = sim_core::presets::launch_spike();
    let mut edits = vec![("api.client", "sdk_retries"), ("api.fallback", "small")];
    if how != "plain" {
        edits.extend([
            ("api.error_rate", "10"),
            ("api.incidents", "at 600 for 1200: 50 %, ×3"),
        ]);
    }
    if how == "services" {
        edits.extend([
            ("api.flex", "on"),
            ("backend[long thread]", "frontier+flex"),
            ("api.provisioned_units", "200"),
            ("api.fallback_then", "self-hosted"),
            ("api.hedge_after_s", "2"),
        ]);
    }
    for (name, value) in edits {
        sim_core::params::apply(&mut s, name, value).expect("an edit");
    }
    let s = s.validate().expect("valid");
    bencher
        .counter(divan::counter::ItemsCount::new(
            sim_core::run(&s).requests.arrived as usize,
        ))
        .bench(|| sim_core::run(divan::black_box(&s)).requests.completed);
}

/// The heaviest run the page makes while a user drags a slider:
/// launch-day-gpus with its load slider at its far end (29.08 req/s before
/// the launch, 349 during it), 2.0M events over 524k requests, a queue of
/// some 300,000 at its peak. Each request waits minutes of simulated time, so
/// its records are long out of cache when it is admitted: this measures the
/// engine's memory traffic as much as its arithmetic. Target: the page shows
/// its numbers within 1 s of the last move, of which the run is most.
#[divan::bench(sample_count = 10)]
fn launch_day_gpus_drag_end(bencher: divan::Bencher) {
    let mut s = sim_core::presets::launch_day_gpus();
    sim_core::params::apply(&mut s, "arrival.rate", "29.08").expect("an edit");
    let s = s.validate().expect("valid");
    bencher
        .counter(divan::counter::ItemsCount::new(
            sim_core::run(&s).requests.arrived as usize,
        ))
        .bench(|| sim_core::run(divan::black_box(&s)).requests.completed);
}
