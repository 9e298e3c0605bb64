//! A measured run's three files read: the request log (`requests.jsonl`,
//! one request a line), the engine's settings (`meta.json`) and its
//! per-second series (`timeseries.csv`). Every line is read or refused by
//! its file, line, column and field; what they hold is
//! [`super::measured::Measured`].

use super::measured::{MAX_REQUESTS, Measured, MeasuredRequest, Settings, Tick};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Line {
    input_toks: u32,
    output_toks: u32,
    queued_ts: f64,
    first_token_ts: f64,
    last_token_ts: f64,
}

/// A request-log line the typed read refused, read field by field to say
/// which field is wrong and how.
fn line_fields(line: usize, l: &str) -> Result<Line, String> {
    const NEEDS: &str =
        "a measured run needs input_toks, output_toks, queued_ts, first_token_ts and last_token_ts";
    let o: serde_json::Map<String, Value> = match serde_json::from_str(l) {
        Ok(Value::Object(o)) => o,
        Ok(_) => {
            return Err(format!(
                "request log line {line}: not a JSON object ({NEEDS})"
            ));
        }
        Err(e) => {
            return Err(format!(
                "request log line {line}, column {}: not JSON: {} ({NEEDS})",
                e.column(),
                e.to_string().split(" at line").next().unwrap_or_default()
            ));
        }
    };
    let tokens = |k: &str| -> Result<u32, String> {
        match o.get(k) {
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    format!("request log line {line}: field {k:?} must be a whole number of tokens, got {v}")
                }),
            None => Err(format!("request log line {line}: no field {k:?} ({NEEDS})")),
        }
    };
    let time = |k: &str| -> Result<f64, String> {
        match o.get(k) {
            Some(v) => v.as_f64().ok_or_else(|| {
                format!("request log line {line}: field {k:?} must be a time in seconds, got {v}")
            }),
            None => Err(format!("request log line {line}: no field {k:?} ({NEEDS})")),
        }
    };
    Ok(Line {
        input_toks: tokens("input_toks")?,
        output_toks: tokens("output_toks")?,
        queued_ts: time("queued_ts")?,
        first_token_ts: time("first_token_ts")?,
        last_token_ts: time("last_token_ts")?,
    })
}

/// Read a measured run: its request log, and its settings and time series
/// when given. Every request line is read or refused by line and field.
pub fn parse(requests: &str, meta: Option<&str>, series: Option<&str>) -> Result<Measured, String> {
    use crate::text::without_bom;
    let (requests, meta, series) = (
        without_bom(requests),
        meta.map(without_bom),
        series.map(without_bom),
    );
    let mut rows = Vec::new();
    for (i, l) in requests.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        if rows.len() >= MAX_REQUESTS {
            return Err(format!("more than {MAX_REQUESTS} requests"));
        }
        let line = i + 1;
        let m: Line = match serde_json::from_str(l) {
            Ok(m) => m,
            Err(_) => line_fields(line, l)?,
        };
        for (k, v) in [
            ("queued_ts", m.queued_ts),
            ("first_token_ts", m.first_token_ts),
            ("last_token_ts", m.last_token_ts),
        ] {
            if !(v.is_finite() && (0.0..=1e12).contains(&v)) {
                return Err(format!(
                    "request log line {line}: field {k:?} must be a time of 0 to 10¹² s, got {}",
                    crate::format::show(v)
                ));
            }
        }
        if m.first_token_ts < m.queued_ts || m.last_token_ts < m.first_token_ts {
            return Err(format!(
                "request log line {line}: timestamps out of order (queued {}, first token {}, last token {})",
                m.queued_ts, m.first_token_ts, m.last_token_ts
            ));
        }
        for (k, n) in [("input_toks", m.input_toks), ("output_toks", m.output_toks)] {
            if !(1..=crate::scenario::bounds::TOKENS).contains(&n) {
                return Err(format!(
                    "request log line {line}: field {k:?} must be 1..={} tokens, got {n}",
                    crate::scenario::bounds::TOKENS
                ));
            }
        }
        rows.push(m);
    }
    if rows.is_empty() {
        return Err("the request log holds no requests".into());
    }
    rows.sort_by(|a, b| a.queued_ts.total_cmp(&b.queued_ts));
    let t0 = rows[0].queued_ts;
    let span = rows[rows.len() - 1].queued_ts - t0;
    if span > crate::scenario::bounds::DURATION_S {
        return Err(format!(
            "the request log's arrivals span {} s; a replay covers at most {} s (a week)",
            crate::format::rounded(span),
            crate::format::rounded(crate::scenario::bounds::DURATION_S)
        ));
    }
    let requests = rows
        .iter()
        .map(|m| MeasuredRequest {
            at_s: m.queued_ts - t0,
            input: m.input_toks,
            output: m.output_toks,
            ttft_ms: (m.first_token_ts - m.queued_ts) * 1e3,
            e2e_ms: (m.last_token_ts - m.queued_ts) * 1e3,
        })
        .collect();
    let settings = match meta {
        Some(text) => settings(text)?,
        None => Settings::default(),
    };
    let series = match series {
        Some(text) => ticks(text)?,
        None => Vec::new(),
    };
    Ok(Measured {
        requests,
        settings,
        series,
    })
}

fn settings(text: &str) -> Result<Settings, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("meta.json: {e}"))?;
    let kw = &v["engine_kwargs"];
    let kv = &v["kv_cache"];
    let u32_of = |x: &Value| x.as_u64().and_then(|n| u32::try_from(n).ok());
    let kv_tokens = kv["num_kv_tokens"]
        .as_u64()
        .or_else(|| Some(kv["num_gpu_blocks"].as_u64()? * kv["block_size"].as_u64()?));
    Ok(Settings {
        model: v["model"]
            .as_str()
            .or(kw["model"].as_str())
            .map(str::to_owned),
        gpu: v["hardware"]["device_name"].as_str().map(str::to_owned),
        tp: u32_of(&kw["tensor_parallel_size"]),
        max_num_seqs: u32_of(&kw["max_num_seqs"]),
        max_num_batched_tokens: u32_of(&kw["max_num_batched_tokens"]),
        gpu_memory_utilization: kv["gpu_memory_utilization"]
            .as_f64()
            .or(kw["gpu_memory_utilization"].as_f64()),
        prefix_caching: kv["enable_prefix_caching"]
            .as_bool()
            .or(kw["enable_prefix_caching"].as_bool()),
        async_scheduling: v["resolved_config"]["scheduler_config"]["async_scheduling"]
            .as_bool()
            .or(kw["async_scheduling"].as_bool()),
        kv_tokens,
        dtype: kw["dtype"].as_str().map(str::to_owned),
    })
}

fn ticks(text: &str) -> Result<Vec<Tick>, String> {
    // Lines numbered as the file numbers them (from 1), blank ones skipped.
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .ok_or("timeseries.csv is empty")?
        .1
        .split(',')
        .map(str::trim)
        .collect();
    let col = |n: &str| {
        header
            .iter()
            .position(|h| *h == n)
            .ok_or_else(|| format!("timeseries.csv: no column {n:?}"))
    };
    let cols = [
        col("t")?,
        col("running")?,
        col("waiting")?,
        col("kv_cache_pct")?,
    ];
    lines
        .map(|(i, l)| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            let num = |c: usize| {
                f.get(c)
                    .and_then(|x| x.parse::<f64>().ok())
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        format!(
                            "timeseries.csv line {}, column {} ({:?}): not a number",
                            i + 1,
                            c + 1,
                            header[c]
                        )
                    })
            };
            Ok(Tick {
                t_s: num(cols[0])?,
                running: num(cols[1])?,
                waiting: num(cols[2])?,
                kv_pct: num(cols[3])?,
            })
        })
        .take(MAX_REQUESTS)
        .collect()
}
