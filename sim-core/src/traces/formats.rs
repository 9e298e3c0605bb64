//! The readers, one per format, a line at a time: each line read or
//! refused, naming the line and the field (and the column, for CSV). What
//! a line holds goes to [`Rows`]: the requests by column (`Sink`), or a
//! summary that keeps no request (`super::summary_stream`).

use super::{Format, at};
use crate::scenario::{TraceEntry, TraceRequests, bounds};
use serde_json::Value;

pub(super) struct Row {
    pub(super) at_s: f64,
    pub(super) input: u32,
    pub(super) output: u32,
    pub(super) blocks: Option<Vec<u64>>,
    /// The value of the class column, when one is asked for.
    pub(super) class: Option<String>,
}

/// Where a reader puts each line's request.
pub(super) trait Rows {
    /// Take line `line`'s request; Err (naming the line) ends the read.
    fn row(&mut self, format: Format, line: usize, row: Row) -> Result<(), String>;
}

fn tokens(format: Format, line: usize, field: &str, v: Option<f64>) -> Result<u32, String> {
    match v {
        Some(x) if x.is_finite() && x >= 1.0 && x <= f64::from(bounds::TOKENS) => {
            Ok(x.round() as u32)
        }
        Some(x) => Err(at(
            format,
            line,
            format!(
                "field {field:?} must be 1..={} tokens, got {}",
                bounds::TOKENS,
                crate::format::show(x)
            ),
        )),
        None => Err(at(
            format,
            line,
            format!("field {field:?} is missing or not a number"),
        )),
    }
}

fn time(format: Format, line: usize, field: &str, v: Option<f64>) -> Result<f64, String> {
    match v {
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Some(x) => Err(at(
            format,
            line,
            format!(
                "field {field:?} must be a time ≥ 0, got {}",
                crate::format::show(x)
            ),
        )),
        None => Err(at(
            format,
            line,
            format!("field {field:?} is missing or not a number"),
        )),
    }
}

/// Distinct values a class column may hold in a file (the window then
/// keeps at most [`bounds::CLASSES`] of them).
const CLASS_VALUES: usize = 4096;

/// Where the readers put what they read: the requests by column, as they
/// come (sorted and cut to a window afterwards), and the class column's
/// distinct values, each request's class indexing them.
pub(super) struct Sink {
    pub(super) requests: TraceRequests,
    pub(super) class_names: Vec<String>,
    /// Whether any line named its hashes (even none).
    pub(super) hashed: bool,
    /// The earliest and the latest arrival read, each with its line: what
    /// a refusal of the trace's span names.
    pub(super) earliest: (f64, usize),
    pub(super) latest: (f64, usize),
}

impl Sink {
    /// Room for about `lines` requests (it grows past them).
    pub(super) fn with_room(lines: usize) -> Sink {
        Sink {
            requests: TraceRequests::with_capacity(lines.min(bounds::TRACE_REQUESTS)),
            class_names: Vec::new(),
            hashed: false,
            earliest: (f64::INFINITY, 0),
            latest: (f64::NEG_INFINITY, 0),
        }
    }
}

impl Rows for Sink {
    fn row(&mut self, format: Format, line: usize, row: Row) -> Result<(), String> {
        if self.requests.len() >= bounds::TRACE_REQUESTS {
            return Err(at(
                format,
                line,
                format!(
                    "more than {} requests; cut the trace with a window",
                    bounds::TRACE_REQUESTS
                ),
            ));
        }
        let class = match row.class {
            None => 0,
            Some(name) => match self.class_names.iter().position(|c| *c == name) {
                Some(i) => i,
                None if self.class_names.len() < CLASS_VALUES => {
                    self.class_names.push(name);
                    self.class_names.len() - 1
                }
                None => {
                    return Err(at(
                        format,
                        line,
                        format!("the class column has more than {CLASS_VALUES} different values"),
                    ));
                }
            },
        };
        if row.at_s < self.earliest.0 {
            self.earliest = (row.at_s, line);
        }
        if row.at_s > self.latest.0 {
            self.latest = (row.at_s, line);
        }
        let entry = TraceEntry {
            at_s: row.at_s,
            input_tokens: row.input,
            output_tokens: row.output,
            class: class as u32,
        };
        self.hashed |= row.blocks.is_some();
        self.requests.push(entry, row.blocks.unwrap_or_default());
        Ok(())
    }
}

/// A JSON line, read by `fast` (typed, no allocation per field) or, when
/// that fails, by `row` from the generic JSON value, which names the field
/// that is wrong.
fn json_line(
    l: &str,
    line: usize,
    format: Format,
    fast: impl Fn(&str) -> Option<Row>,
    row: impl FnOnce(usize, &serde_json::Map<String, Value>) -> Result<Row, String>,
) -> Result<Row, String> {
    if let Some(r) = fast(l) {
        return Ok(r);
    }
    let v: Value = serde_json::from_str(l).map_err(|e| {
        // serde counts the line as line 1: say the column only.
        let what = e.to_string();
        let what = what.split(" at line ").next().unwrap_or_default();
        at(
            format,
            line,
            format!("column {}: not JSON: {what}", e.column()),
        )
    })?;
    let Value::Object(o) = v else {
        return Err(at(format, line, "not a JSON object"));
    };
    row(line, &o)
}

/// A Mooncake line as it nearly always is.
#[derive(serde::Deserialize)]
struct MooncakeLine {
    timestamp: f64,
    input_length: u32,
    output_length: u32,
    hash_ids: Option<Vec<u64>>,
}

/// A token count within the engine's bounds.
fn whole(n: u32) -> Option<u32> {
    (1..=bounds::TOKENS).contains(&n).then_some(n)
}

/// Tokens each of a Mooncake line's `hash_ids` covers.
pub(super) const MOONCAKE_BLOCK_TOKENS: u32 = 512;

/// Whether `hashes` prefix blocks fit in an `input`-token prompt.
fn blocks_fit(hashes: usize, input: u32) -> bool {
    hashes as u64 <= u64::from(input.div_ceil(MOONCAKE_BLOCK_TOKENS))
}

/// One Mooncake line (`l`, trimmed, not empty) of line number `line`.
pub(super) fn mooncake(l: &str, line: usize) -> Result<Row, String> {
    let f = Format::Mooncake;
    let fast = |l: &str| {
        let m: MooncakeLine = serde_json::from_str(l).ok()?;
        (m.timestamp.is_finite() && m.timestamp >= 0.0).then_some(())?;
        let input = whole(m.input_length)?;
        blocks_fit(m.hash_ids.as_ref().map_or(0, Vec::len), input).then_some(())?;
        if let Some(h) = &m.hash_ids {
            crate::scenario::repeated_hash(h.iter().copied())
                .is_none()
                .then_some(())?;
        }
        Some(Row {
            at_s: m.timestamp / 1e3,
            input,
            output: whole(m.output_length)?,
            blocks: m.hash_ids,
            class: None,
        })
    };
    json_line(l, line, f, fast, |line, o| {
        let num = |k: &str| o.get(k).and_then(Value::as_f64);
        let blocks = match o.get("hash_ids") {
            None => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|h| {
                        h.as_u64().ok_or_else(|| {
                            at(f, line, "field \"hash_ids\" must hold whole numbers ≥ 0")
                        })
                    })
                    .collect::<Result<Vec<u64>, String>>()?,
            ),
            Some(_) => return Err(at(f, line, "field \"hash_ids\" must be a list")),
        };
        let input = tokens(f, line, "input_length", num("input_length"))?;
        let hashes = blocks.as_ref().map_or(0, Vec::len);
        if !blocks_fit(hashes, input) {
            return Err(at(
                f,
                line,
                format!(
                    "field \"hash_ids\" has {hashes} hashes, more than its {input}-token prompt fills at {MOONCAKE_BLOCK_TOKENS} tokens a hash ({} at most)",
                    input.div_ceil(MOONCAKE_BLOCK_TOKENS)
                ),
            ));
        }
        if let Some(h) = blocks
            .as_deref()
            .and_then(|b| crate::scenario::repeated_hash(b.iter().copied()))
        {
            return Err(at(
                f,
                line,
                format!(
                    "field \"hash_ids\" names {h} twice: each of a prompt's blocks has a hash of its own"
                ),
            ));
        }
        Ok(Row {
            at_s: time(f, line, "timestamp", num("timestamp"))? / 1e3,
            input,
            output: tokens(f, line, "output_length", num("output_length"))?,
            blocks,
            class: None,
        })
    })
}

/// A measured run's line as it nearly always is.
#[derive(serde::Deserialize)]
struct LogLine {
    input_toks: u32,
    output_toks: u32,
    queued_ts: Option<f64>,
    arrival_time: Option<f64>,
}

/// One line of a measured run's request log, read as a trace.
pub(super) fn request_log(l: &str, line: usize) -> Result<Row, String> {
    let f = Format::RequestLog;
    let fast = |l: &str| {
        let m: LogLine = serde_json::from_str(l).ok()?;
        let at_s = m.queued_ts.or(m.arrival_time)?;
        (at_s.is_finite() && at_s >= 0.0).then_some(())?;
        Some(Row {
            at_s,
            input: whole(m.input_toks)?,
            output: whole(m.output_toks)?,
            blocks: None,
            class: None,
        })
    };
    json_line(l, line, f, fast, |line, o| {
        let num = |k: &str| o.get(k).and_then(Value::as_f64);
        // The engine's own clock when it has one (vLLM's queued_ts), else
        // the front end's arrival time: never a mix of the two.
        let at_s = match num("queued_ts") {
            Some(t) => time(f, line, "queued_ts", Some(t))?,
            None => time(f, line, "arrival_time", num("arrival_time"))?,
        };
        Ok(Row {
            at_s,
            input: tokens(f, line, "input_toks", num("input_toks"))?,
            output: tokens(f, line, "output_toks", num("output_toks"))?,
            blocks: None,
            class: None,
        })
    })
}

/// The column of each name in `need`, from a CSV header line.
pub(super) fn csv_header(
    format: Format,
    header: &str,
    need: &[&str],
) -> Result<Vec<usize>, String> {
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    need.iter()
        .map(|n| {
            names
                .iter()
                .position(|h| h == n)
                .ok_or_else(|| at(format, 1, format!("no column {n:?} in the header")))
        })
        .collect()
}

/// Azure's columns, as [`azure`] reads them.
pub(super) const AZURE: [&str; 3] = ["TIMESTAMP", "ContextTokens", "GeneratedTokens"];
/// BurstGPT's columns, as [`burst_gpt`] reads them (a class column after).
pub(super) const BURST_GPT: [&str; 3] = ["Timestamp", "Request tokens", "Response tokens"];

/// One CSV line's fields, read with errors naming the line, the column
/// (counted from 1, as a spreadsheet counts) and the column's name.
struct Cells<'a> {
    format: Format,
    line: usize,
    fields: Vec<&'a str>,
}

impl<'a> Cells<'a> {
    fn err(&self, col: usize, what: impl std::fmt::Display) -> String {
        format!(
            "{} line {}, column {}: {what}",
            self.format.name(),
            self.line,
            col + 1
        )
    }

    fn text(&self, col: usize, name: &str) -> Result<&'a str, String> {
        self.fields.get(col).copied().ok_or_else(|| {
            self.err(
                col,
                format!(
                    "no value for {name:?}: the line has {} fields",
                    self.fields.len()
                ),
            )
        })
    }

    fn number(&self, col: usize, name: &str) -> Result<f64, String> {
        let s = self.text(col, name)?;
        s.parse::<f64>()
            .map_err(|_| self.err(col, format!("field {name:?} must be a number, got {s:?}")))
    }

    fn tokens(&self, col: usize, name: &str) -> Result<u32, String> {
        let x = self.number(col, name)?;
        if x.is_finite() && x >= 1.0 && x <= f64::from(bounds::TOKENS) {
            Ok(x.round() as u32)
        } else {
            Err(self.err(
                col,
                format!(
                    "field {name:?} must be 1..={} tokens, got {}",
                    bounds::TOKENS,
                    crate::format::show(x)
                ),
            ))
        }
    }

    fn time(&self, col: usize, name: &str) -> Result<f64, String> {
        let x = self.number(col, name)?;
        if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            Err(self.err(
                col,
                format!(
                    "field {name:?} must be a time ≥ 0, got {}",
                    crate::format::show(x)
                ),
            ))
        }
    }
}

/// One Azure row of line `line`, its columns at `cols` (of [`AZURE`]).
pub(super) fn azure(l: &str, line: usize, cols: &[usize]) -> Result<Row, String> {
    let c = Cells {
        format: Format::Azure,
        line,
        fields: l.split(',').map(str::trim).collect(),
    };
    let ts = c.text(cols[0], AZURE[0])?;
    let at_s = wall_clock_s(ts).ok_or_else(|| {
        c.err(
            cols[0],
            format!("field \"TIMESTAMP\" must read YYYY-MM-DD HH:MM:SS[.fraction], got {ts:?}"),
        )
    })?;
    Ok(Row {
        at_s,
        input: c.tokens(cols[1], AZURE[1])?,
        output: c.tokens(cols[2], AZURE[2])?,
        blocks: None,
        class: None,
    })
}

/// One BurstGPT row of line `line`, its columns at `cols` (of
/// [`BURST_GPT`], then the class column's when one is named).
pub(super) fn burst_gpt(
    l: &str,
    line: usize,
    cols: &[usize],
    class_column: Option<&str>,
) -> Result<Row, String> {
    let c = Cells {
        format: Format::BurstGpt,
        line,
        fields: l.split(',').map(str::trim).collect(),
    };
    Ok(Row {
        at_s: c.time(cols[0], BURST_GPT[0])?,
        input: c.tokens(cols[1], BURST_GPT[1])?,
        output: c.tokens(cols[2], BURST_GPT[2])?,
        blocks: None,
        class: match class_column {
            Some(name) => Some(c.text(cols[3], name)?.to_owned()),
            None => None,
        },
    })
}

/// A whole `vllm bench serve` document (one JSON value, not lines).
pub(super) fn vllm_bench(text: &str, sink: &mut impl Rows) -> Result<(), String> {
    let f = Format::VllmBench;
    let v: Value =
        serde_json::from_str(text).map_err(|e| at(f, e.line(), format!("not JSON: {e}")))?;
    let list = |k: &str| -> Result<Vec<f64>, String> {
        match v.get(k) {
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_f64()
                        .ok_or_else(|| format!("{}: {k}[{i}] is not a number", f.name()))
                })
                .collect(),
            Some(_) => Err(format!("{}: {k} must be a list", f.name())),
            None => Err(format!(
                "{}: no {k} (save the result with --save-detailed)",
                f.name()
            )),
        }
    };
    let (inputs, outputs) = (list("input_lens")?, list("output_lens")?);
    if inputs.len() != outputs.len() {
        return Err(format!(
            "{}: {} input_lens but {} output_lens",
            f.name(),
            inputs.len(),
            outputs.len()
        ));
    }
    let starts = match v.get("start_times") {
        Some(_) => Some(list("start_times")?),
        None => None,
    };
    let rate = match v.get("request_rate") {
        Some(Value::Number(n)) => n.as_f64().filter(|r| r.is_finite() && *r > 0.0),
        _ => None, // "inf", missing: every request at once
    };
    for (i, (&input, &output)) in inputs.iter().zip(&outputs).enumerate() {
        let entry = i + 1;
        let at_s = match (&starts, rate) {
            (Some(s), _) => time(f, entry, "start_times", s.get(i).copied())?,
            (None, Some(r)) => i as f64 / r,
            (None, None) => 0.0,
        };
        let row = Row {
            at_s,
            input: tokens(f, entry, "input_lens", Some(input))?,
            output: tokens(f, entry, "output_lens", Some(output))?,
            blocks: None,
            class: None,
        };
        sink.row(f, entry, row)?;
    }
    Ok(())
}

/// Seconds since 1970 of `YYYY-MM-DD HH:MM:SS[.fraction]` (UTC; only
/// differences matter).
fn wall_clock_s(s: &str) -> Option<f64> {
    let (date, clock) = s.trim().split_once([' ', 'T'])?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let mut c = clock.trim_end_matches('Z').split(':');
    let (h, min, sec) = (
        c.next()?.parse::<i64>().ok()?,
        c.next()?.parse::<i64>().ok()?,
        c.next()?.parse::<f64>().ok()?,
    );
    if c.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&min)
        || !(0.0..61.0).contains(&sec)
    {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3_600 + min * 60) as f64 + sec)
}
