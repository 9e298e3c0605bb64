//! A trace streamed from its lines during the run (`traces::LineFeed`, what
//! `tlab run --trace` does with a file in arrival order) replays exactly as
//! the same trace held in memory: the same report, bit for bit, in every
//! format, window, speed and class column. A feed that breaks off, or
//! brings more or other requests than its first reading, stops the run
//! and says where.

use sim_core::scenario::{Arrival, TraceRequests};
use sim_core::traces::{self, LineFeed, Options};

const MOONCAKE: &str = include_str!("../traces/mooncake-first-2000.jsonl");
const AZURE: &str = include_str!("../traces/azure-code-first-2000.csv");

/// The chatbot preset on `replicas` replicas with prefix caching on.
fn fleet(replicas: u32) -> sim_core::Scenario {
    let mut s = sim_core::presets::chatbot_h100();
    s.serving.replicas = replicas;
    s.serving.prefix_caching = Some(true);
    s
}

/// A BurstGPT file of `n` lines over two models, in arrival order.
fn burst_gpt(n: usize) -> String {
    let mut t =
        String::from("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
    for i in 0..n {
        let model = if i % 3 == 0 { "GPT-4" } else { "ChatGPT" };
        let (a, b) = (200 + (i * 37) % 900, 20 + (i * 11) % 300);
        t += &format!("{}.5,{model},{a},{b},{},Conversation log\n", i / 2, a + b);
    }
    t
}

/// `text`'s lines as a file reader gives them.
fn lines(text: &str) -> std::vec::IntoIter<Result<String, String>> {
    text.lines()
        .map(|l| Ok(l.to_owned()))
        .collect::<Vec<_>>()
        .into_iter()
}

/// The report of `base` replaying `text` held in memory, and streamed.
fn both(text: &str, options: &Options, base: &sim_core::Scenario) -> (String, String) {
    let held = traces::read(text, options).expect("a trace");
    let mut a = base.clone();
    held.apply_to(&mut a);
    let a = a.validate().expect("valid");
    let mut summariser = traces::TraceSummariser::new(options)
        .expect("options")
        .expect("no rate");
    for l in text.lines() {
        summariser.line(l).expect("a line");
    }
    let summary = summariser.finish().expect("a summary").expect("in order");
    assert_eq!(summary.stats, held.requests.stats(), "the same numbers");
    let mut b = base.clone();
    summary.apply_to(&mut b);
    let b = b.validate().expect("valid");
    let Arrival::Trace { requests, .. } = &b.workload.arrival else {
        panic!("a trace");
    };
    assert!(
        requests.is_streamed() && requests.is_empty(),
        "nothing held"
    );
    let streamed =
        sim_core::run_with_feed(&b, Box::new(LineFeed::new(lines(text), options, &summary)))
            .expect("the feed reads every line");
    let json = |r: &sim_core::Report| serde_json::to_string(r).expect("json");
    (json(&sim_core::run(&a)), json(&streamed))
}

#[test]
fn a_streamed_trace_replays_bit_for_bit_as_one_held_in_memory() {
    let windowed = Options {
        window: Some((60.0, 600.0)),
        speed: 3.0,
        ..Options::default()
    };
    let classes = Options {
        class_column: Some("Model".into()),
        ..Options::default()
    };
    let cases: [(&str, &str, Options, u32); 5] = [
        ("Mooncake", MOONCAKE, Options::default(), 2),
        ("Mooncake windowed, 3x", MOONCAKE, windowed, 1),
        ("Azure", AZURE, Options::default(), 2),
        ("BurstGPT by model", &burst_gpt(3000), classes, 1),
        ("BOM", &format!("\u{feff}{MOONCAKE}"), Options::default(), 1),
    ];
    for (what, text, options, replicas) in cases {
        let (held, streamed) = both(text, &options, &fleet(replicas));
        assert!(held.contains("\"completed\""), "{what}: a report");
        assert!(held == streamed, "{what}: the two replays differ");
    }
}

/// `base` made to replay `text` streamed, with its summary.
fn streamed(text: &str) -> (sim_core::ValidScenario, traces::TraceSummary) {
    let mut summariser = traces::TraceSummariser::new(&Options::default())
        .expect("options")
        .expect("no rate");
    for l in text.lines() {
        summariser.line(l).expect("a line");
    }
    let summary = summariser.finish().expect("a summary").expect("in order");
    let mut s = fleet(1);
    summary.apply_to(&mut s);
    (s.validate().expect("valid"), summary)
}

#[test]
fn a_feed_that_breaks_off_or_differs_from_its_first_reading_stops_the_run_saying_where() {
    let (s, summary) = streamed(MOONCAKE);
    let options = Options::default();
    let run = |text: String| -> Result<(), String> {
        sim_core::run_with_feed(
            &s,
            Box::new(LineFeed::new(lines(&text), &options, &summary)),
        )
        .map(|_| ())
    };
    // A line changed since the first reading.
    let mut changed: Vec<&str> = MOONCAKE.lines().collect();
    changed[49] = "{\"timestamp\": 5, \"input_length\": \"many\"}";
    let e = run(changed.join("\n")).expect_err("a bad line");
    assert!(e.contains("line 50") && e.contains("input_length"), "{e}");
    // Cut short.
    let short: Vec<&str> = MOONCAKE.lines().take(1500).collect();
    let e = run(short.join("\n")).expect_err("short");
    assert!(e.contains("after 1500 of the 2000"), "{e}");
    // Longer than it was.
    let e = run(format!(
        "{}\n{}",
        MOONCAKE.trim_end(),
        MOONCAKE.lines().last().expect("a line")
    ))
    .expect_err("long");
    assert!(
        e.contains("line 2001: more than the 2000 requests first read"),
        "{e}"
    );
    // Out of order.
    let mut swapped: Vec<&str> = MOONCAKE.lines().collect();
    swapped.swap(10, 900);
    let e = run(swapped.join("\n")).expect_err("out of order");
    assert!(
        e.contains("line 12: arrives before the line above it"),
        "{e}"
    );
    // A read error from the file itself.
    let failing = lines(MOONCAKE)
        .take(100)
        .chain(std::iter::once(Err("trace.jsonl: disk gone".to_owned())));
    let e = sim_core::run_with_feed(&s, Box::new(LineFeed::new(failing, &options, &summary)))
        .expect_err("read error");
    assert_eq!(e, "trace.jsonl: disk gone");
}

#[test]
fn a_streamed_trace_run_without_its_feed_stops_saying_so_and_cannot_be_written() {
    let (s, _) = streamed(MOONCAKE);
    let report = sim_core::run(&s);
    assert_eq!(report.requests.arrived, 0);
    let why = report.warnings.join(" ");
    assert!(why.contains("after 0 of the 2000 requests"), "{why}");
    let e = serde_json::to_string(&s.into_inner()).expect_err("not written");
    assert!(e.to_string().contains("name the file instead"), "{e}");
    // Validation reads the numbers: one request too many for the bound.
    let mut stats = TraceRequests::default().stats();
    stats.requests = sim_core::scenario::bounds::STREAMED_TRACE_REQUESTS + 1;
    stats.min_input = 1;
    stats.max_input = 1;
    let mut too_many = fleet(1);
    too_many.workload.arrival = Arrival::Trace {
        requests: TraceRequests::streamed(stats),
        prefix_block_tokens: None,
    };
    let e = too_many.validate().expect_err("too many").to_string();
    assert!(e.contains("1..=20000000 requests"), "{e}");
}

#[test]
fn lines_that_do_not_read_are_left_out_when_asked_named_and_left_out_alike_streamed() {
    let mut lines: Vec<String> = MOONCAKE.lines().map(str::to_owned).collect();
    for at in [4, 49, 499] {
        lines[at] = "{\"timestamp\": 5, \"input_length\": \"many\"".to_owned();
    }
    let text = lines.join("\n");
    // Refused at the first, by default, naming it; a line that could be
    // left out says so, a header that does not read cannot be.
    let e = traces::read(&text, &Options::default()).expect_err("a bad line");
    assert!(e.contains("line 5"), "{e}");
    let mut r = traces::TraceReader::new(&Options::default(), 8).expect("options");
    let refused = text.lines().find_map(|l| r.line(l).err());
    assert!(refused.is_some() && r.skippable());
    let mut csv = traces::TraceReader::new(&Options::default(), 8).expect("options");
    assert!(csv.line("TIMESTAMP,Tokens").is_err());
    assert!(!csv.skippable(), "a header is not a line to leave out");
    // Left out when asked: counted, named, and said in the summary.
    let skip = Options {
        skip_bad_lines: true,
        ..Options::default()
    };
    let held = traces::read(&text, &skip).expect("the rest");
    assert_eq!(held.requests.len(), 1997);
    assert_eq!(
        (held.skipped.count, held.skipped.lines.clone()),
        (3, vec![5, 50, 500])
    );
    let words = held.describe("trace.jsonl");
    assert!(
        words.contains("3 lines left out as unreadable (lines 5, 50, 500); the first: Mooncake JSON lines line 5"),
        "{words}"
    );
    // A link's reference reads the same file the same way.
    let r = sim_core::scenario::TraceRef::of("trace.jsonl", &text, &held, &skip);
    assert_eq!(r.skipped_lines, 3);
    assert!(r.options().skip_bad_lines);
    // Streamed, the same lines are left out and the same report comes out.
    let (a, b) = both(&text, &skip, &fleet(1));
    assert!(a == b, "the held and streamed replays differ");
}
