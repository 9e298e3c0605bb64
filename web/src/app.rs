//! The page: controls on the left, numbers and charts on the right.

use crate::chart;
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use sim_core::Report;
use sim_core::scenario::{Arrival, Scenario};

/// Format a latency for a card: ms below 10 s, seconds above.
fn fmt_ms(v: Option<f64>) -> String {
    match v {
        None => "–".to_owned(),
        Some(x) if x >= 10_000.0 => format!("{:.1} s", x / 1000.0),
        Some(x) if x >= 100.0 => format!("{x:.0} ms"),
        Some(x) => format!("{x:.1} ms"),
    }
}

/// The default scenario with the arrival rate set by the slider.
fn scenario_at(rate_per_s: f64) -> Scenario {
    let mut s = sim_core::presets::chatbot_h100();
    s.workload.arrival = Arrival::Poisson { rate_per_s };
    s
}

/// The whole application.
#[component]
pub fn App() -> impl IntoView {
    let (rate, set_rate) = signal(8.0_f64);
    let report =
        Memo::new(move |_| sim_core::run(&scenario_at(rate.get())).map_err(|e| e.to_string()));
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        let (Some(canvas), Ok(r)) = (canvas.get(), report.get()) else {
            return;
        };
        if let Some(backend) = CanvasBackend::with_canvas_object(canvas) {
            // A failed draw leaves the previous frame; there is nothing better to show.
            let _ = chart::draw_queue_depth(backend.into_drawing_area(), &r.series);
        }
    });

    let card = move |label: &'static str, id: &'static str, value: fn(&Report) -> (String, f64)| {
        let shown = move || report.get().map(|r| value(&r));
        view! {
            <div class="card">
                <span class="card-label">{label}</span>
                <span
                    class="card-value"
                    data-testid=id
                    data-value=move || shown().map(|(_, v)| v.to_string()).unwrap_or_default()
                >
                    {move || shown().map(|(s, _)| s).unwrap_or_else(|e| e)}
                </span>
            </div>
        }
    };

    view! {
        <header class="top">
            <h1>"Throughput Lab"</h1>
            <p class="tagline">"Watch an inference server fall over as traffic grows."</p>
        </header>
        <main class="layout">
            <section class="controls" aria-label="Controls">
                <label for="arrival-rate">"Arrival rate"</label>
                <div class="slider-row">
                    <input
                        id="arrival-rate"
                        data-testid="arrival-rate"
                        type="range"
                        min="1"
                        max="40"
                        step="0.5"
                        prop:value=move || rate.get().to_string()
                        on:input=move |ev| {
                            if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                                set_rate.set(v);
                            }
                        }
                    />
                    <output for="arrival-rate" data-testid="arrival-rate-value">
                        {move || format!("{:.1} req/s", rate.get())}
                    </output>
                </div>
                <p class="hint">
                    "A chat assistant on Llama-3.1-8B and one H100 with continuous batching. "
                    "Push the rate past what the GPU can serve and watch the queue build."
                </p>
            </section>
            <section class="results" aria-label="Results">
                <div class="cards">
                    {card("p99 time to first token", "ttft-p99", |r| {
                        let v = r.overall.ttft.p99_ms;
                        (fmt_ms(v), v.unwrap_or(0.0))
                    })}
                    {card("p50 time per output token", "tpot-p50", |r| {
                        let v = r.overall.tpot.p50_ms;
                        (fmt_ms(v), v.unwrap_or(0.0))
                    })}
                    {card("Output throughput", "throughput", |r| {
                        let v = r.throughput.output_tokens_per_s;
                        (format!("{v:.0} tok/s"), v)
                    })}
                    {card("Cost per million output tokens", "usd-per-mtok", |r| {
                        let v = r.cost.usd_per_mtok_output.unwrap_or(0.0);
                        (format!("${v:.2}"), v)
                    })}
                </div>
                <canvas
                    node_ref=canvas
                    data-testid="queue-chart"
                    width="720"
                    height="320"
                    aria-label="Requests waiting over simulated time"
                ></canvas>
            </section>
        </main>
    }
}
