//! Throughput Lab's charts, generic over the plotters backend: a canvas in the
//! browser, SVG in the CLI and in native tests.
//!
//! Each chart module builds a [`model::Chart`] — what the chart shows, as data
//! — with a pure function of the report; [`render::draw`] draws any of them and
//! [`render::describe`] puts one in words (the page's text alternative).

use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::Report;

pub mod api;
pub mod arrivals;
pub mod batch;
pub mod cost;
pub mod curve;
pub mod distribution;
pub mod e2e;
pub mod latency;
pub mod measured;
pub mod model;
pub mod queue;
pub mod render;
pub mod sweep;
pub mod throughput;
pub mod timeline;
pub mod tradeoff;

pub use render::DrawResult;

/// A chart of a report, with an optional pinned run drawn behind it.
pub type ChartFn<DB> = fn(&DrawingArea<DB, Shift>, &Report, Option<&Report>) -> DrawResult<DB>;

/// A report chart's model function.
pub type ModelFn = fn(&Report, Option<&Report>) -> model::Chart;

/// One chart of a report: its page id, its model, and whether a report has
/// anything for it (the page hides it otherwise).
#[derive(Clone, Copy)]
pub struct ReportChart {
    /// Page id (the canvas's test id).
    pub id: &'static str,
    /// The chart's model.
    pub model: ModelFn,
    /// Whether this report has something for it.
    pub applies: fn(&Report) -> bool,
    /// What to read in it, under the chart.
    pub caption: &'static str,
}

fn always(_: &Report) -> bool {
    true
}

/// Every chart of a report, in page order (the page draws exactly these).
pub const REPORT_CHARTS: [ReportChart; 8] = [
    ReportChart {
        id: "chart-queue",
        model: queue::model,
        applies: always,
        caption: "Requests waiting for a GPU and requests in a batch, over the run. A waiting line that keeps climbing means the fleet cannot keep up; one that falls back to zero means it drains.",
    },
    ReportChart {
        id: "chart-latency",
        model: latency::model,
        applies: always,
        caption: "Time to first token, p50 and p99 per window of the run, against the target. Where the p99 rises above the target, one request in a hundred waits longer than you allow.",
    },
    ReportChart {
        id: "chart-e2e",
        model: e2e::model,
        applies: always,
        caption: "Whole-request latency, p50 and p99 per window of the run: how long a user waits for the full answer.",
    },
    ReportChart {
        id: "chart-throughput",
        model: throughput::model,
        applies: always,
        caption: "Tokens per second across all requests, over the run: what the fleet delivers, and what sets its cost per token.",
    },
    ReportChart {
        id: "chart-arrivals",
        model: arrivals::model,
        applies: always,
        caption: "Requests arriving per second, over the run: the load the fleet is asked to carry, its spikes included.",
    },
    ReportChart {
        id: "chart-batch",
        model: batch::model,
        applies: |r| r.cost.gpus > 0,
        caption: "Sequences per forward pass, and the KV cache in use. A larger batch is how throughput rises; a full KV cache is what stops it rising.",
    },
    ReportChart {
        id: "chart-api",
        model: api::model,
        applies: |r| r.api.is_some(),
        caption: "At the API provider: retries per second after 429s, and the share of the token limit left. Retries appear as the limit runs out.",
    },
    ReportChart {
        id: "chart-distribution",
        model: distribution::model,
        applies: always,
        caption: "The share of requests faster than each latency: read any percentile across, against the TTFT target.",
    },
];

macro_rules! report_chart {
    ($name:ident, $module:ident) => {
        #[doc = concat!("Draw the `", stringify!($module), "` chart.")]
        pub fn $name<DB: DrawingBackend>(
            root: &DrawingArea<DB, Shift>,
            r: &Report,
            pinned: Option<&Report>,
        ) -> DrawResult<DB> {
            render::draw(root, &$module::model(r, pinned))
        }
    };
}

report_chart!(draw_queue, queue);
report_chart!(draw_latency, latency);
report_chart!(draw_e2e, e2e);
report_chart!(draw_throughput, throughput);
report_chart!(draw_arrivals, arrivals);
report_chart!(draw_batch, batch);
report_chart!(draw_api, api);
report_chart!(draw_distribution, distribution);

#[cfg(test)]
mod tests;
