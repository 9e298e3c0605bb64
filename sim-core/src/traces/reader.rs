//! A trace read a line at a time: the format told from its first line with
//! text, then each line read into [`Rows`] as it comes, so no reader ever
//! holds the file's text (a `vllm bench serve` result, one JSON document,
//! is the exception: it is kept whole and read at the end, and is small).
//! The CLI feeds it from a buffered file, the page from the file's chunks.

use super::Format;
use super::formats::{self, AZURE, BURST_GPT, Rows};
use serde_json::Value;

/// Largest `vllm bench serve` document kept to be read whole, bytes.
const MAX_DOCUMENT_BYTES: usize = 256 << 20;

enum State {
    /// No line with text yet.
    Start,
    /// JSON lines, each a request.
    Lines(Format),
    /// A CSV past its header: the columns read.
    Csv(Format, Vec<usize>),
    /// One JSON document, possibly over many lines: kept whole, with its
    /// first line with text (for a refusal).
    Document(String, String),
}

/// Lines in, requests out to `R`.
pub(super) struct Reader<R> {
    pub(super) rows: R,
    state: State,
    /// Lines read so far: the next is line `line + 1`.
    line: usize,
    class_column: Option<String>,
    /// The format when the caller names it (else told from the first line).
    forced: Option<Format>,
    /// Leave out a line that does not read (counted in `skipped`) instead
    /// of refusing the file. A header, a first line that names no format,
    /// and the trace's own bounds still refuse it.
    skip: bool,
    pub(super) skipped: super::Skipped,
    /// Whether the last refusal was of a line that could have been left
    /// out (not a header, a format or a bound).
    pub(super) skippable: bool,
}

/// What the first line with text says the format is: `None` for the start
/// of a JSON document over several lines (read whole at the end).
pub(super) fn detect_first(first: &str) -> Result<Option<Format>, String> {
    if first.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(first) {
            let Value::Object(o) = v else {
                return Err(not_json_trace(first));
            };
            if o.contains_key("hash_ids") || o.contains_key("input_length") {
                return Ok(Some(Format::Mooncake));
            }
            if o.contains_key("input_toks") {
                return Ok(Some(Format::RequestLog));
            }
            if o.contains_key("input_lens") {
                return Ok(None);
            }
            return Err(not_json_trace(first));
        }
        // A first line that is not JSON but names a format's keys: that
        // format, whose reader then says what is wrong with the line.
        if first.contains("\"hash_ids\"") || first.contains("\"input_length\"") {
            return Ok(Some(Format::Mooncake));
        }
        if first.contains("\"input_toks\"") {
            return Ok(Some(Format::RequestLog));
        }
        return Ok(None);
    }
    let header: Vec<&str> = first.split(',').map(str::trim).collect();
    // Either column names the format; its reader then names a missing one.
    if header.contains(&AZURE[1]) || header.contains(&AZURE[2]) {
        return Ok(Some(Format::Azure));
    }
    if header.contains(&BURST_GPT[1]) || header.contains(&BURST_GPT[2]) {
        return Ok(Some(Format::BurstGpt));
    }
    Err(format!(
        "not a trace format this reads: expected JSON lines (Mooncake, a request log), vllm bench serve JSON, or a CSV header with ContextTokens,GeneratedTokens (Azure) or Request tokens,Response tokens (BurstGPT); the first line is {:?}",
        first.chars().take(80).collect::<String>()
    ))
}

pub(super) fn not_json_trace(first: &str) -> String {
    format!(
        "JSON, but not a trace format this reads: its first line has none of the keys hash_ids/input_length (Mooncake), input_toks (a request log) or input_lens (vllm bench serve); it starts {:?}",
        first.chars().take(80).collect::<String>()
    )
}

impl<R: Rows> Reader<R> {
    pub(super) fn new(rows: R, class_column: Option<String>, forced: Option<Format>) -> Self {
        Reader {
            rows,
            state: State::Start,
            line: 0,
            class_column,
            forced,
            skip: false,
            skipped: super::Skipped::default(),
            skippable: false,
        }
    }

    /// This reader, leaving out lines that do not read when `skip`.
    pub(super) fn skipping(mut self, skip: bool) -> Self {
        self.skip = skip;
        self
    }

    /// Read the next line (without its line break).
    pub(super) fn line(&mut self, raw: &str) -> Result<(), String> {
        self.line += 1;
        self.skippable = false;
        let line = self.line;
        let l = if line == 1 {
            crate::text::without_bom(raw)
        } else {
            raw
        };
        if let State::Document(doc, _) = &mut self.state {
            if doc.len() + l.len() >= MAX_DOCUMENT_BYTES {
                return Err(format!(
                    "{}: larger than {} MB; a vllm bench serve result is one JSON document",
                    Format::VllmBench.name(),
                    MAX_DOCUMENT_BYTES >> 20
                ));
            }
            doc.push_str(l);
            doc.push('\n');
            return Ok(());
        }
        let t = l.trim();
        if t.is_empty() {
            return Ok(());
        }
        let read = match &self.state {
            State::Start => return self.start(l, t),
            State::Document(..) => return Ok(()),
            State::Lines(Format::Mooncake) => formats::mooncake(t, line),
            State::Lines(_) => formats::request_log(t, line),
            State::Csv(Format::Azure, cols) => formats::azure(t, line, cols),
            State::Csv(_, cols) => formats::burst_gpt(t, line, cols, self.class_column.as_deref()),
        };
        let row = match read {
            Ok(row) => row,
            Err(e) if self.skip => {
                self.skipped.add(line, e);
                return Ok(());
            }
            Err(e) => {
                self.skippable = true;
                return Err(e);
            }
        };
        let format = match &self.state {
            State::Lines(f) | State::Csv(f, _) => *f,
            _ => Format::Mooncake,
        };
        self.rows.row(format, line, row)
    }

    /// The first line with text: the format, and for CSV the header.
    fn start(&mut self, l: &str, t: &str) -> Result<(), String> {
        let format = match self.forced {
            Some(Format::VllmBench) => None,
            Some(f) => Some(f),
            None => detect_first(t)?,
        };
        if self.class_column.is_some() && format != Some(Format::BurstGpt) {
            return Err(format!(
                "the {} has no column to take classes from (BurstGPT CSV has Model and Log Type)",
                format.unwrap_or(Format::VllmBench).name()
            ));
        }
        self.state = match format {
            // Blank lines before it kept, so serde's line numbers are the
            // file's.
            None => State::Document(format!("{}{l}\n", "\n".repeat(self.line - 1)), t.to_owned()),
            Some(f @ (Format::Mooncake | Format::RequestLog)) => {
                self.state = State::Lines(f);
                // The first line is a request too.
                self.line -= 1;
                return self.line(l);
            }
            Some(f) => {
                let mut need: Vec<&str> = if f == Format::Azure {
                    AZURE.to_vec()
                } else {
                    BURST_GPT.to_vec()
                };
                need.extend(self.class_column.as_deref());
                State::Csv(f, formats::csv_header(f, t, &need)?)
            }
        };
        Ok(())
    }

    /// The end of the file: the format read (or why it cannot be), and
    /// where its requests went.
    pub(super) fn end(self) -> (Result<Format, String>, R) {
        let mut rows = self.rows;
        let format = match self.state {
            State::Start => Err("the trace is empty".into()),
            State::Lines(f) | State::Csv(f, _) => Ok(f),
            State::Document(doc, first) => {
                if self.forced.is_none()
                    && !matches!(
                        serde_json::from_str::<Value>(&doc),
                        Ok(Value::Object(ref o)) if o.contains_key("input_lens")
                    )
                {
                    Err(not_json_trace(&first))
                } else {
                    formats::vllm_bench(&doc, &mut rows).map(|()| Format::VllmBench)
                }
            }
        };
        (format, rows)
    }
}
