//! The page: controls on the left, numbers and charts on the right.

use crate::chart;
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use sim_core::single_server::{SingleServer, simulate};

/// Fixed part of the foundation scenario: one server taking 100 ms per request.
const SERVICE_TIME_MS: f64 = 100.0;
const DURATION_S: f64 = 600.0;
const SEED: u64 = 1;

/// The whole application.
#[component]
pub fn App() -> impl IntoView {
    let (rate, set_rate) = signal(6.0_f64);
    let report = Memo::new(move |_| {
        simulate(&SingleServer {
            arrival_rate_per_s: rate.get(),
            service_time_ms: SERVICE_TIME_MS,
            duration_s: DURATION_S,
            seed: SEED,
        })
    });
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        let (Some(canvas), Ok(r)) = (canvas.get(), report.get()) else {
            return;
        };
        if let Some(backend) = CanvasBackend::with_canvas_object(canvas) {
            // A failed draw leaves the previous frame; there is nothing better to show.
            let _ =
                chart::draw_queue_depth(backend.into_drawing_area(), &r.queue_depth, DURATION_S);
        }
    });

    let mean_wait = move || match report.get() {
        Ok(r) => format!("{:.1} ms", r.mean_wait_ms),
        Err(e) => e.to_string(),
    };
    let utilisation = move || match report.get() {
        Ok(r) => format!("{:.0} %", r.utilisation * 100.0),
        Err(_) => "–".to_owned(),
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
                        max="12"
                        step="0.1"
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
                    "One server, 100 ms per request: past 10 req/s it cannot keep up."
                </p>
            </section>
            <section class="results" aria-label="Results">
                <div class="cards">
                    <div class="card">
                        <span class="card-label">"Mean queue wait"</span>
                        <span class="card-value" data-testid="mean-wait">{mean_wait}</span>
                    </div>
                    <div class="card">
                        <span class="card-label">"Server busy"</span>
                        <span class="card-value" data-testid="utilisation">{utilisation}</span>
                    </div>
                </div>
                <canvas
                    node_ref=canvas
                    data-testid="queue-chart"
                    width="720"
                    height="320"
                    aria-label="Queue depth over simulated time"
                ></canvas>
            </section>
        </main>
    }
}
