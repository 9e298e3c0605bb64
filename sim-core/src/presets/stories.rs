//! Every preset's story, step by step. Each simulated number a step's text
//! states is a claim below it, written `{k}` in the text: the page and `tlab
//! story` print the run's own value there, never a typed one, and check the
//! claim's range against the run (`tests/it/stories.rs` checks them all).
//! Numbers typed in the text are the scenario's inputs (rates, lengths,
//! prices, targets). Nothing here tunes a scenario: the steps edit through
//! the catalogue, as the page's controls do.

use super::story::{Quantity as Q, Step, at_least, at_most, between, exactly, of_class};

/// The default chatbot: load past one H100's capacity, a second replica, and
/// the batch-size trade.
pub const CHATBOT: &[Step] = &[
    Step {
        title: "Start: 8 req/s on one H100",
        say: "At 8 requests/s one H100 answers well inside the 500 ms first-token target (p99 {0}), and the capacity card says it could take {1}.",
        edits: &[],
        claims: &[
            at_most(Q::TtftP99, 500.0),
            between(Q::CapacityPerReplica, 28.0, 38.0),
            exactly(Q::ReplicasNeeded, 1.0),
        ],
    },
    Step {
        title: "Raise the load to 40 req/s",
        say: "Raise the arrival rate to 40 requests/s, past that capacity. The queue grows for as long as the traffic lasts: the median first token now takes {1}, the server still makes only {2}, and the cards say this traffic needs {3} replicas.",
        edits: &[("arrival.rate", "40")],
        claims: &[
            exactly(Q::Overloaded, 1.0),
            at_least(Q::TtftP50, 20_000.0),
            between(Q::OutputTokensPerS, 7_800.0, 9_600.0),
            exactly(Q::ReplicasNeeded, 2.0),
        ],
    },
    Step {
        title: "Add a second replica",
        say: "Set replicas to 2. The same traffic now gets its first token in {0} (p99 {1}, under 500 ms again) and the fleet makes {2}; the bill doubles, but the cost per million tokens rises far less, to {3}.",
        edits: &[("replicas", "2")],
        claims: &[
            between(Q::TtftP50, 20.0, 60.0),
            at_most(Q::TtftP99, 500.0),
            between(Q::OutputTokensPerS, 10_000.0, 11_800.0),
            between(Q::UsdPerMtok, 0.18, 0.27),
            exactly(Q::Overloaded, 0.0),
        ],
    },
    Step {
        title: "Cap the batch at 32 sequences",
        say: "Lower max_num_seqs to 32. Each user's tokens now come faster ({0} apart), but a replica holds fewer sequences at a time: its capacity falls to {1}, the queue comes back and first tokens wait {3} at the median. Per-user speed and total throughput trade through the batch size.",
        edits: &[("batching.max_seqs", "32")],
        claims: &[
            between(Q::TpotP50, 7.5, 10.5),
            between(Q::CapacityPerReplica, 10.0, 16.0),
            exactly(Q::Overloaded, 1.0),
            at_least(Q::TtftP50, 10_000.0),
        ],
    },
];

/// The launch spike on a hosted API: 429s, a queue, a higher tier, a smaller model.
pub const LAUNCH_SPIKE: &[Step] = &[
    Step {
        title: "Start: the launch with a fail-fast client",
        say: "50 users run clean; at minute five the launch brings 5,000 and the 1.5 M tokens-per-minute cap answers with {1} 429s. This client gives up at once, so {0} of the requests fail. Latencies count only the requests answered.",
        edits: &[],
        claims: &[
            between(Q::UnansweredPct, 18.0, 34.0),
            at_least(Q::Throttled, 4_000.0),
        ],
    },
    Step {
        title: "Queue the requests instead",
        say: "Switch the client to a queue: no request fails and no 429 comes back, but the errors have become waiting — the median first token now arrives after {2}.",
        edits: &[("api.client", "queue")],
        claims: &[
            exactly(Q::UnansweredPct, 0.0),
            exactly(Q::Throttled, 0.0),
            at_least(Q::TtftP50, 60_000.0),
        ],
    },
    Step {
        title: "Raise the rate-limit tier to 4×",
        say: "Raise the rate limits 4×: the wait disappears (first token in {0} at the median) and every request is served. The bill rises to {2} a month: the requests that failed or waited before are now all answered, and answers are billed.",
        edits: &[("rate_limit_multiplier", "4")],
        claims: &[
            at_most(Q::TtftP50, 1_000.0),
            exactly(Q::UnansweredPct, 0.0),
            between(Q::UsdPerMonth, 300_000.0, 400_000.0),
        ],
    },
    Step {
        title: "Route short emails to the small model",
        say: "Send the short emails to the small model: they answer faster, and the bill falls to {0} a month with every request still served.",
        edits: &[("backend[short email]", "small")],
        claims: &[
            between(Q::UsdPerMonth, 220_000.0, 295_000.0),
            exactly(Q::UnansweredPct, 0.0),
            at_most(Q::TtftP50, 600.0),
        ],
    },
];

/// The voice assistant: pay for a faster tier.
pub const PAY_FOR_SPEED: &[Step] = &[
    Step {
        title: "Start: 60 tokens/s read aloud",
        say: "Answers of 200 tokens stream at 60 tokens/s: {0} per answer (median), {1} a month. The targets ask for a token every 10 ms (100 tokens/s), and at 60 tokens/s {2} of answers meet them: a voice that reads this slowly is what the money would change.",
        edits: &[],
        claims: &[
            between(Q::E2eP50, 3_000.0, 4_300.0),
            between(Q::UsdPerMonth, 21_800.0, 23_200.0),
            at_most(Q::GoodputPct, 1.0),
        ],
    },
    Step {
        title: "Route to the 200 tokens/s variant",
        say: "Route the traffic to the tier's fast variant: an answer takes {0}, {2} of answers meet the targets, and the bill rises to {1} a month. Is a faster voice worth it?",
        edits: &[("backend", "voice-llm+fast")],
        claims: &[
            between(Q::E2eP50, 800.0, 1_700.0),
            between(Q::UsdPerMonth, 30_500.0, 32_500.0),
            at_least(Q::GoodputPct, 90.0),
        ],
    },
];

/// The $12/hour server: continuous batching and FP8, then the load it carries.
pub const SELF_HOSTED: &[Step] = &[
    Step {
        title: "Start: static batches, 16-bit weights",
        say: "A $12/hour server (Llama-3.1-70B on 4 × H100) with static batches and 16-bit weights makes {0} at 6 requests/s ({1} per million) and users wait {2} for a first token. One such server carries {3}.",
        edits: &[],
        claims: &[
            between(Q::OutputTokensPerS, 1_450.0, 1_600.0),
            between(Q::UsdPerMtok, 2.0, 2.4),
            at_least(Q::TtftP50, 1_000.0),
            between(Q::CapacityPerReplica, 8.5, 11.5),
        ],
    },
    Step {
        title: "Continuous batching and FP8",
        say: "Switch batching to continuous with chunked prefill and the weights to FP8: the same traffic gets its first token in {0}, and one server now carries {1} — about twice as much.",
        edits: &[("batching.policy", "chunked_prefill"), ("weights", "fp8")],
        claims: &[
            between(Q::TtftP50, 30.0, 80.0),
            between(Q::CapacityPerReplica, 18.0, 24.0),
        ],
    },
    Step {
        title: "Raise the load to 16 req/s",
        say: "Raise the arrival rate to 16 requests/s: the tuned server keeps up, making {0} ({1} per million), first tokens still within the target (p99 {2}).",
        edits: &[("arrival.rate", "16")],
        claims: &[
            between(Q::OutputTokensPerS, 3_900.0, 4_300.0),
            between(Q::UsdPerMtok, 0.7, 0.9),
            at_most(Q::TtftP99, 1_000.0),
            exactly(Q::ReplicasNeeded, 1.0),
        ],
    },
    Step {
        title: "Grow to 40 req/s",
        say: "At 40 requests/s the cards say this traffic needs {0} tuned servers.",
        edits: &[("arrival.rate", "40")],
        claims: &[exactly(Q::ReplicasNeeded, 2.0)],
    },
    Step {
        title: "The same load on the untuned server",
        say: "Switch back to static batches and 16-bit weights at 40 requests/s: the cards say {0} of those servers. Tuned, the same traffic needs half as many.",
        edits: &[("batching.policy", "static"), ("weights", "bf16")],
        claims: &[exactly(Q::ReplicasNeeded, 4.0), exactly(Q::Overloaded, 1.0)],
    },
];

/// Long documents in bulk: the policy and the token budget.
pub const OVERNIGHT: &[Step] = &[
    Step {
        title: "Start: chunked prefill, 8,192-token budget",
        say: "Documents of about 4,000 tokens at 6 per second: one H100 makes {0} at {1} per million and could take {2}.",
        edits: &[],
        claims: &[
            between(Q::OutputTokensPerS, 1_700.0, 1_900.0),
            between(Q::UsdPerMtok, 0.6, 0.72),
            between(Q::CapacityPerReplica, 6.3, 7.3),
        ],
    },
    Step {
        title: "Plain continuous batching",
        say: "Switch to plain continuous batching: at this load the tokens per second stay the same ({0}), but every whole prompt now stalls the decodes, so each document's tokens come slower ({1} apart) and the capacity falls to {2}.",
        edits: &[("batching.policy", "continuous")],
        claims: &[
            between(Q::OutputTokensPerS, 1_700.0, 1_900.0),
            between(Q::TpotP50, 34.0, 43.0),
            between(Q::CapacityPerReplica, 5.9, 6.7),
        ],
    },
    Step {
        title: "Chunked prefill with a 2,048-token budget",
        say: "Back to chunked prefill with a budget of 2,048 tokens a pass: prompts go in smaller pieces between decodes, and the capacity rises a little, to {0}. With prompts this long the GPU is compute-bound either way, so the budget moves it by a few per cent.",
        edits: &[
            ("batching.policy", "chunked_prefill"),
            ("batching.max_batched_tokens", "2048"),
            ("batching.chunk_tokens", "2048"),
        ],
        claims: &[between(Q::CapacityPerReplica, 6.6, 7.5)],
    },
    Step {
        title: "A hosted small model instead",
        say: "Send the documents to a hosted small model at its list price ($0.15 a million tokens in, $0.60 out) instead: each summary is back in {0} (median), but the long prompts are billed token by token, and a million output tokens cost {1}, where the GPU, busy all the time, made them for about a quarter of that.",
        edits: &[("backend[summary]", "small")],
        claims: &[
            between(Q::E2eP50, 2_500.0, 3_600.0),
            between(Q::UsdPerMtok, 2.3, 2.9),
        ],
    },
    Step {
        title: "Through its batch API",
        say: "Nobody reads these summaries before morning: send them through the provider's batch API, at half the price with results within 24 hours. A million output tokens cost {0}, still about twice the busy GPU's; a summary comes back after {1} (median), every one within the day ({2} at p99).",
        edits: &[("api.batch", "on"), ("backend[summary]", "small-batch")],
        claims: &[
            between(Q::UsdPerMtok, 1.15, 1.45),
            between(Q::E2eP50, 3_600_000.0, 3.0 * 3_600_000.0),
            between(Q::E2eP99, 12.0 * 3_600_000.0, 24.0 * 3_600_000.0),
        ],
    },
];

/// Bursty classification on four L4s.
pub const CLASSIFICATION: &[Step] = &[
    Step {
        title: "Start: bursts of CV 2 on four L4s",
        say: "Prompts dominate and answers are a few tokens. With bursts (CV 2) the p99 request takes {0} and {1} of requests meet the targets.",
        edits: &[],
        claims: &[
            between(Q::E2eP99, 1_000.0, 1_700.0),
            between(Q::GoodputPct, 80.0, 93.0),
        ],
    },
    Step {
        title: "Make the traffic burstier",
        say: "Raise the burstiness to CV 4 at the same average rate: bursts pile up in the queues, the p99 request takes {0} and only {1} meet the targets.",
        edits: &[("arrival.cv", "4")],
        claims: &[
            between(Q::E2eP99, 2_400.0, 3_900.0),
            between(Q::GoodputPct, 48.0, 68.0),
        ],
    },
    Step {
        title: "Route round-robin",
        say: "Switch the router to round-robin: blind to how busy each L4 is, it does no better in the tail (p99 {0}).",
        edits: &[("router", "round_robin")],
        claims: &[between(Q::E2eP99, 2_500.0, 4_000.0)],
    },
];

/// The reasoning agent: thinking costs the task time.
pub const THINKING_AGENT: &[Step] = &[
    Step {
        title: "Start: a reasoning and an instant model",
        say: "The reasoning model streams at 200 tokens/s, 2.5 times the instant model's 80, yet its first visible word comes after {0} (median) because it first thinks through its hidden tokens; the instant model answers in {1}. Over the 20 calls the task takes {2} against {3}.",
        edits: &[],
        claims: &[
            of_class("reasoning model", between(Q::VisibleP50, 4_500.0, 7_000.0)),
            of_class("instant model", between(Q::VisibleP50, 300.0, 800.0)),
            of_class("reasoning model", between(Q::TaskP50, 156_000.0, 192_000.0)),
            of_class("instant model", between(Q::TaskP50, 48_000.0, 72_000.0)),
        ],
    },
    Step {
        title: "Think a quarter as much",
        say: "Drag the reasoning model's 'Thinking before answering' down to 250 tokens: its first visible word comes in {0} and the 20-call task takes {1}, about as long as on the instant model. Over a long chain of calls, the thinking costs more time than the faster stream saves.",
        edits: &[("reasoning_tokens[reasoning model]", "250")],
        claims: &[
            of_class("reasoning model", between(Q::VisibleP50, 1_000.0, 2_400.0)),
            of_class("reasoning model", between(Q::TaskP50, 48_000.0, 70_000.0)),
        ],
    },
];

/// Chat and a batch job on one H100: first come, first served, then by
/// priority, then a second replica.
pub const CHAT_AND_BATCH: &[Step] = &[
    Step {
        title: "Start: one queue for chat and documents",
        say: "18 requests/s, 60 % chat and 40 % long documents, are more than one H100 serves, so a queue builds. First come, first served, a chat question waits behind the documents: its median first token takes {0}, and the replica makes {1}.",
        edits: &[],
        claims: &[
            of_class("chat", at_least(Q::TtftP50, 30_000.0)),
            between(Q::OutputTokensPerS, 3_900.0, 4_700.0),
        ],
    },
    Step {
        title: "Schedule by priority",
        say: "Switch scheduling to priority. Chat (priority 0) is admitted before the batch job (priority 1), and a batch sequence is the one preempted when memory runs out: chat's median first token is now {0} (p99 {1}), the replica still makes {3}, and the documents wait their turn — their median first token takes {2}.",
        edits: &[("scheduling_policy", "priority")],
        claims: &[
            of_class("chat", at_most(Q::TtftP50, 300.0)),
            of_class("chat", at_most(Q::TtftP99, 1_000.0)),
            of_class("batch job", at_least(Q::TtftP50, 60_000.0)),
            between(Q::OutputTokensPerS, 3_900.0, 4_700.0),
        ],
    },
];

/// A small model for simple requests: one 70B fleet, then two pools.
pub const TWO_MODELS: &[Step] = &[
    Step {
        title: "Start: one model for everything",
        say: "Three replicas of Llama-3.1-70B (FP8, 4 × H100 each) serve 30 requests/s, simple and hard alike: {2} of requests meet the targets, a simple question gets its first token in {0} (median), and the 12 GPUs cost {1} a month.",
        edits: &[],
        claims: &[
            of_class("simple", between(Q::TtftP50, 50.0, 100.0)),
            between(Q::UsdPerMonth, 26_000.0, 26_500.0),
            at_least(Q::GoodputPct, 99.0),
        ],
    },
    Step {
        title: "Send simple requests to a small model",
        say: "Add a pool named small, Llama-3.1-8B on one H100, and the rule \"class simple -> small\": simple questions now get their first token in {0} — the small model is faster per token and has the GPU to itself — while the three 70B replicas, left the hard 30 %, sit partly idle. The bill rises by the small pool's cost, to {1} a month.",
        edits: &[
            ("pools", "small"),
            ("model@small", "llama-3.1-8b"),
            ("gpus_per_replica@small", "1"),
            ("replicas@small", "1"),
            ("routing", "class simple -> small"),
        ],
        claims: &[
            of_class("simple", at_most(Q::TtftP50, 40.0)),
            between(Q::UsdPerMonth, 28_200.0, 28_700.0),
        ],
    },
    Step {
        title: "Shrink the 70B pool to two replicas",
        say: "The hard requests alone need two 70B replicas, not three. With two, {3} of requests still meet the targets — hard ones get their first token in {1} (median) — and the deployment costs {0} a month, about a quarter less than one model for everything.",
        edits: &[("replicas", "2")],
        claims: &[
            between(Q::UsdPerMonth, 19_500.0, 20_000.0),
            of_class("hard", at_most(Q::TtftP50, 400.0)),
            of_class("simple", at_most(Q::TtftP50, 40.0)),
            at_least(Q::GoodputPct, 99.0),
        ],
    },
];

/// A launch on self-hosted GPUs: a fleet for the peak, then autoscaling.
pub const LAUNCH_DAY_GPUS: &[Step] = &[
    Step {
        title: "Start: a fleet sized for the peak",
        say: "Three H100s carry the launch's 60 requests/s with a first token in {0} (p99), and cost {1} a month, busy or idle — most of the day they serve 5 or 10 requests/s.",
        edits: &[],
        claims: &[
            at_most(Q::TtftP99, 300.0),
            between(Q::UsdPerMonth, 9_250.0, 9_350.0),
        ],
    },
    Step {
        title: "Autoscale from one to four replicas",
        say: "Start with one replica and let an autoscaler read the queue every 15 s, asking for a replica per 4 requests waiting, at most four. Replicas are billed while up, so the month costs {0}, about 30 % less. But a new replica must load 16 GB of weights and start its engine, about 68 s: when the launch arrives, requests wait for it — the p99 first token is {1}.",
        edits: &[
            ("replicas", "1"),
            ("autoscale", "queue_per_replica"),
            ("autoscale.max", "4"),
        ],
        claims: &[
            between(Q::UsdPerMonth, 6_000.0, 7_000.0),
            at_least(Q::TtftP99, 20_000.0),
        ],
    },
    Step {
        title: "Keep two replicas warm",
        say: "Set the fewest replicas to two: they absorb the launch's first minute while more start, so the p99 first token is back to {0}, and the month still costs {1} — the autoscaler no longer overshoots to four in a panic.",
        edits: &[("autoscale.min", "2")],
        claims: &[
            at_most(Q::TtftP99, 300.0),
            between(Q::UsdPerMonth, 6_000.0, 7_000.0),
        ],
    },
    Step {
        title: "Or send the chat to a hosted API",
        say: "Serve chat from the hosted frontier tier instead (a larger model, billed per token, behind a client queue). At launch its 1.5 M tokens-per-minute limit holds the traffic back: the queue fills and turns away {0} of the requests, and the tokens would cost {1} a month at this rate. A higher rate-limit tier buys room; the GPUs above are the cheap way to serve an 8B model's traffic.",
        edits: &[("backend", "frontier")],
        claims: &[
            at_least(Q::UnansweredPct, 30.0),
            at_least(Q::UsdPerMonth, 100_000.0),
        ],
    },
];

/// Prefill/decode disaggregation: when splitting pays, and when it does not.
pub const SPLIT_PREFILL_DECODE: &[Step] = &[
    Step {
        title: "Start: both replicas prefill and decode",
        say: "Two 70B replicas serve 3 questions/s over documents of about 3,000 tokens. A replica's passes carry prompt chunks of up to 2,048 tokens beside the answers being written, so each answer's tokens come {1} apart (median), at the target: only {0} of the requests meet it. The eight GPUs cost {2} a month.",
        edits: &[],
        claims: &[
            between(Q::GoodputPct, 40.0, 62.0),
            at_least(Q::TpotP50, 14.0),
            between(Q::UsdPerMonth, 17_400.0, 17_600.0),
        ],
    },
    Step {
        title: "Split: one replica prefills, one decodes",
        say: "Make the first replica prefill only and hand each prompt's KV cache over NVLink to a decode pool of one replica. Its passes carry only answers: a token every {1} at the median, and {0} of requests meet both targets, on the same GPUs for the same money ({3} a month). The price is the first token: one replica prefills where two did, and the cache must move, so the median first token rises to {2}.",
        edits: &[
            ("decode_pool", "decode"),
            ("kv_link", "nvlink"),
            ("replicas", "1"),
            ("replicas@decode", "1"),
        ],
        claims: &[
            at_least(Q::GoodputPct, 93.0),
            at_most(Q::TpotP50, 12.5),
            between(Q::TtftP50, 350.0, 520.0),
            between(Q::UsdPerMonth, 17_400.0, 17_600.0),
        ],
    },
    Step {
        title: "Move the cache over Ethernet instead",
        say: "Put the two replicas in different nodes joined by 100 Gb/s Ethernet: a 3,000-token prompt's cache (about 1 GB in 16 bits) takes a fifth of a second on the wire, and caches queue for the decode replica's link. The median first token takes {0} and only {1} of requests meet the targets: a split needs a fast link.",
        edits: &[("kv_link", "ethernet")],
        claims: &[
            at_least(Q::TtftP50, 900.0),
            between(Q::GoodputPct, 60.0, 85.0),
        ],
    },
    Step {
        title: "Short questions instead of documents",
        say: "Back on NVLink, make the prompts short — about 300 tokens. A prompt's pass is now brief and barely delays the answers beside it, so the split has little to fix: {0} of requests meet the targets, with a first token in {1} (median).",
        edits: &[("kv_link", "nvlink"), ("input_tokens", "300")],
        claims: &[
            at_least(Q::GoodputPct, 99.0),
            between(Q::TtftP50, 36.0, 50.0),
        ],
    },
    Step {
        title: "Short questions on one pool again",
        say: "Undo the split: two replicas that both prefill and decode meet the targets too ({0} of requests), and the first token comes sooner, in {1} — no hand-off, no extra pass, and two replicas to prefill. With short prompts, splitting buys nothing.",
        edits: &[("decode_pool", "none"), ("pools", ""), ("replicas", "2")],
        claims: &[
            at_least(Q::GoodputPct, 99.0),
            at_most(Q::TtftP50, 36.0),
            between(Q::UsdPerMonth, 17_400.0, 17_600.0),
        ],
    },
];

/// The provider's prompt cache: the bill and the rate limit, then a quiet
/// night, then a longer lifetime.
pub const PROMPT_CACHING: &[Step] = &[
    Step {
        title: "Start: no prompt caching",
        say: "Every call sends the 4,000-token system prompt and the conversation so far, and the provider counts all of it against its limit of 800,000 input tokens a minute: {0} requests get a 429, and after the SDK's two retries {1} of all requests fail. A million output tokens cost {2}.",
        edits: &[],
        claims: &[
            at_least(Q::Throttled, 3_000.0),
            between(Q::UnansweredPct, 10.0, 20.0),
            between(Q::UsdPerMtok, 50.0, 70.0),
        ],
    },
    Step {
        title: "Cache the system prompt and the conversation",
        say: "Turn on explicit prompt caching for 5 minutes: the client marks the system prompt and each conversation's prompt, a write costs 1.25× the input price and a read a tenth of it. This provider does not count cached reads against its input limit, so the 429s fall to {0}. {1} of requests hit the cache, a million output tokens cost {2}, and the first token comes in {3} (median): cached tokens need no processing.",
        edits: &[("api.prompt_cache", "explicit_5m")],
        claims: &[
            exactly(Q::Throttled, 0.0),
            at_least(Q::CacheHitPct, 95.0),
            between(Q::UsdPerMtok, 20.0, 30.0),
            between(Q::TtftP50, 500.0, 750.0),
        ],
    },
    Step {
        title: "A quiet night",
        say: "Overnight a conversation starts about every 17 minutes, for a day's run: between them the system prompt often outlives its 5 minutes, and the next first turn pays to write it again. The later turns still find their conversation cached, so {0} of requests hit, and a million output tokens cost {1}.",
        edits: &[("arrival.rate", "0.001"), ("duration", "86400")],
        claims: &[
            between(Q::CacheHitPct, 78.0, 92.0),
            between(Q::UsdPerMtok, 26.0, 36.0),
        ],
    },
    Step {
        title: "Keep it for an hour",
        say: "A one-hour lifetime costs 2× the input price to write but outlives the gaps: {0} of requests hit, and a million output tokens cost {1}.",
        edits: &[("api.prompt_cache", "explicit_1h")],
        claims: &[
            at_least(Q::CacheHitPct, 95.0),
            between(Q::UsdPerMtok, 24.0, 30.0),
        ],
    },
];

/// The provider has a bad hour: retry, fail fast, fall back, stop sending.
pub const BAD_HOUR: &[Step] = &[
    Step {
        title: "Start: the SDK retries",
        say: "For an hour the provider answers 40 % of attempts with an error, twice as slowly. The SDK retries each error twice after a back-off, so a request fails only when all three attempts do: {0} of all requests fail, nearly all in that hour. The retries make users wait: {1} end to end for the slowest 1 %. A million output tokens cost {2}.",
        edits: &[],
        claims: &[
            between(Q::UnansweredPct, 1.5, 3.0),
            between(Q::E2eP99, 28_000.0, 38_000.0),
            between(Q::UsdPerMtok, 17.0, 22.0),
        ],
    },
    Step {
        title: "Fail fast",
        say: "Without retries every error reaches a user: {0} of requests fail, and the slowest 1 % still wait {1}, the provider's answers being twice as slow that hour.",
        edits: &[("api.client", "fail_fast")],
        claims: &[
            between(Q::UnansweredPct, 11.0, 16.0),
            between(Q::E2eP99, 25_000.0, 35_000.0),
        ],
    },
    Step {
        title: "Retry, then fall back to the small model",
        say: "Retry as the SDK does, and send a request whose retries ran out to the small model's tier, another model with limits of its own: {0} of requests fail. The waiting stays ({1} end to end at p99); a million output tokens cost {2}.",
        edits: &[("api.client", "sdk_retries"), ("api.fallback", "small")],
        claims: &[
            exactly(Q::UnansweredPct, 0.0),
            between(Q::E2eP99, 28_000.0, 38_000.0),
            between(Q::UsdPerMtok, 17.0, 22.0),
        ],
    },
    Step {
        title: "Stop sending for a while",
        say: "A circuit breaker stops sending to the frontier tier for a minute after 5 errors in a minute, then tries one request: through the bad hour most requests go straight to the small model. {0} fail, the slowest 1 % wait {1} and the first token comes within {2} (p99). The small model is cheaper, so a million output tokens cost {3}: whether its answers are good enough is yours to judge.",
        edits: &[("api.breaker", "quick")],
        claims: &[
            exactly(Q::UnansweredPct, 0.0),
            between(Q::E2eP99, 15_000.0, 23_000.0),
            between(Q::TtftP99, 2_500.0, 4_000.0),
            between(Q::UsdPerMtok, 11.0, 16.0),
        ],
    },
    Step {
        title: "Fall back to your own GPU",
        say: "Keep one H100 of Llama-3.1-8B to fall back to instead: it takes the bad hour's requests, {0} fail, and a million output tokens cost {1}, the GPU billed all day whether the provider errs or not.",
        edits: &[("api.fallback", "self-hosted")],
        claims: &[
            exactly(Q::UnansweredPct, 0.0),
            between(Q::UsdPerMtok, 12.0, 17.0),
        ],
    },
];
