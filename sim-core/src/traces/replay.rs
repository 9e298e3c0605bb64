//! A trace in arrival order replayed as it is read: a first reading
//! summarises and checks it ([`super::TraceSummariser`]), the scenario is
//! made from that summary ([`TraceSummary::apply_to`], the requests
//! streamed), and the run reads the file again a line at a time through
//! [`LineFeed`]. Memory then holds the requests in flight, never the
//! trace. Each request is taken exactly as [`super::read`] would take it
//! (the same window, speed and classes), so the two replays agree bit for
//! bit (tested).

use super::formats::{Row, Rows};
use super::summary_stream::TraceSummary;
use super::{Format, Options, reader};
use crate::engine::TraceFeed;
use crate::scenario::{TraceEntry, TraceRequests};

/// Rows taken as the summary took them, one at a time.
struct Taken {
    window: (f64, f64),
    speed: f64,
    start: Option<f64>,
    origin: Option<f64>,
    classes: Vec<String>,
    /// The row the last line gave, if it gave one inside the window.
    row: Option<(TraceEntry, Vec<u64>)>,
    /// The last arrival read, the requests kept, and how many the first
    /// reading kept.
    previous: f64,
    kept: u64,
    expected: u64,
}

impl Rows for Taken {
    fn row(&mut self, format: Format, line: usize, row: Row) -> Result<(), String> {
        let changed = |what: String| {
            super::at(
                format,
                line,
                format!("{what}: the file changed since it was first read"),
            )
        };
        if row.at_s < self.previous {
            return Err(changed("arrives before the line above it".into()));
        }
        self.previous = row.at_s;
        let start = *self.start.get_or_insert(row.at_s);
        let (from, to) = self.window;
        if !(row.at_s - start >= from && row.at_s - start < to) {
            return Ok(());
        }
        self.kept += 1;
        if self.kept > self.expected {
            return Err(changed(format!(
                "more than the {} requests first read",
                self.expected
            )));
        }
        let origin = *self.origin.get_or_insert(row.at_s);
        let class = match &row.class {
            None => 0,
            Some(name) => self
                .classes
                .iter()
                .position(|c| c == name)
                .ok_or_else(|| changed(format!("class {name:?} is new")))?,
        };
        let entry = TraceEntry {
            at_s: (row.at_s - origin) / self.speed,
            input_tokens: row.input,
            output_tokens: row.output,
            class: class as u32,
        };
        self.row = Some((entry, row.blocks.unwrap_or_default()));
        Ok(())
    }
}

/// A trace's requests read from its lines as a run takes them. `lines`
/// gives the file's lines (without their breaks) or the reason one could
/// not be read; a line that does not read, or a file that no longer
/// matches its first reading, ends the feed and [`TraceFeed::error`] says
/// where.
pub struct LineFeed<I> {
    lines: I,
    reader: reader::Reader<Taken>,
    error: Option<String>,
}

impl<I: Iterator<Item = Result<String, String>> + Send> LineFeed<I> {
    /// A feed of the trace `summary` describes, read with `options` (which
    /// must be the ones it was summarised with; a target rate is not
    /// streamed: see [`super::TraceSummariser::new`]).
    pub fn new(lines: I, options: &Options, summary: &TraceSummary) -> Self {
        let taken = Taken {
            window: options.window.unwrap_or((f64::NEG_INFINITY, f64::INFINITY)),
            speed: options.speed,
            start: None,
            origin: None,
            classes: summary.classes.iter().map(|(c, _)| c.clone()).collect(),
            row: None,
            previous: f64::NEG_INFINITY,
            kept: 0,
            expected: summary.stats.requests,
        };
        LineFeed {
            lines,
            reader: reader::Reader::new(taken, options.class_column.clone(), Some(summary.format))
                .skipping(options.skip_bad_lines),
            error: None,
        }
    }
}

impl<I: Iterator<Item = Result<String, String>> + Send> TraceFeed for LineFeed<I> {
    fn next(&mut self, hashes: &mut Vec<u64>) -> Option<TraceEntry> {
        hashes.clear();
        if self.error.is_some() {
            return None;
        }
        loop {
            let line = match self.lines.next()? {
                Ok(l) => l,
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            };
            if let Err(e) = self.reader.line(&line) {
                self.error = Some(e);
                return None;
            }
            if let Some((entry, h)) = self.reader.rows.row.take() {
                hashes.extend(h);
                return Some(entry);
            }
        }
    }

    fn error(&self) -> Option<String> {
        self.error.clone()
    }
}

impl TraceSummary {
    /// Whether a [`LineFeed`] can replay the trace from its lines: every
    /// format but a `vllm bench serve` document, which is one JSON value
    /// read whole (and small): read it with [`super::read`] instead.
    pub fn streamable(&self) -> bool {
        self.format != Format::VllmBench
    }

    /// Make `s` replay the trace streamed from its file, as
    /// [`super::Imported::apply_to`] makes it replay the requests held:
    /// the run then takes them from a [`LineFeed`].
    pub fn apply_to(&self, s: &mut crate::Scenario) {
        super::replay_into(
            s,
            &self.classes,
            TraceRequests::streamed(self.stats),
            self.prefix_block_tokens,
        );
    }
}
