//! Replaying a run over simulated time, and the GPU timeline of its first
//! seconds.

use leptos::prelude::*;
use sim_core::trace::TraceLog;
use sim_core::{Report, Scenario};

/// Replica 1's first passes, recorded for the teaching timeline.
pub fn first_seconds(s: &Scenario) -> Option<(TraceLog, f64)> {
    let window_s = s.duration_s.min(5.0);
    let mut sim = sim_core::Simulation::new(&s.clone().validate().ok()?);
    sim.record_trace(5_000);
    sim.advance_until((window_s * 1e9) as u64);
    sim.trace()
        .cloned()
        .filter(|t| !t.passes.is_empty())
        .map(|t| (t, window_s))
}

/// Advance the playhead by the real time since the last frame × speed.
fn play_frame(
    playhead: RwSignal<Option<f64>>,
    playing: RwSignal<bool>,
    speed: RwSignal<f64>,
    end: f64,
    last: Option<f64>,
) {
    if !playing.get_untracked() {
        return;
    }
    let now = window().performance().map_or(0.0, |p| p.now());
    if let Some(prev) = last {
        let t =
            playhead.get_untracked().unwrap_or(0.0) + (now - prev) / 1000.0 * speed.get_untracked();
        if t >= end {
            playhead.set(None);
            playing.set(false);
            return;
        }
        playhead.set(Some(t));
    }
    request_animation_frame(move || play_frame(playhead, playing, speed, end, Some(now)));
}

/// Play/pause, speed and the playhead slider. `playhead` None shows the whole run.
pub fn playback_view(
    report: RwSignal<Option<Report>>,
    playhead: RwSignal<Option<f64>>,
    playing: RwSignal<bool>,
) -> impl IntoView {
    let speed = RwSignal::new(60.0_f64);
    let end = move || report.with(|r| r.as_ref().map_or(0.0, |r| r.sim_time_s));
    view! {
        <div class="playback" role="group" aria-label="Playback">
            <button
                data-testid="play"
                on:click=move |_| {
                    if playing.get_untracked() {
                        playing.set(false);
                        return;
                    }
                    let end = report.with_untracked(|r| r.as_ref().map_or(0.0, |r| r.sim_time_s));
                    if playhead.get_untracked().is_none_or(|t| t >= end) {
                        playhead.set(Some(0.0));
                    }
                    playing.set(true);
                    play_frame(playhead, playing, speed, end, None);
                }
            >
                {move || if playing.get() { "Pause" } else { "Play" }}
            </button>
            <label for="speed">"Speed"</label>
            <select
                id="speed"
                data-testid="speed"
                on:change=move |ev| {
                    if let Ok(v) = event_target_value(&ev).parse() {
                        speed.set(v);
                    }
                }
            >
                <option value="10">"10× (10 s per second)"</option>
                <option value="60" selected=true>"60× (a minute per second)"</option>
                <option value="600">"600× (10 minutes per second)"</option>
            </select>
            <label for="playhead">"Time"</label>
            <input
                type="range"
                id="playhead"
                data-testid="playhead"
                min="0"
                step="any"
                max=move || end().to_string()
                aria-valuetext=move || format!("{:.0} s", playhead.get().unwrap_or(0.0))
                prop:value=move || playhead.get().unwrap_or_else(end).to_string()
                on:input=move |ev| {
                    if let Ok(t) = event_target_value(&ev).parse::<f64>() {
                        playing.set(false);
                        playhead.set(Some(t));
                    }
                }
            />
            <span class="unit" data-testid="playhead-value">
                {move || playhead.get().map(|t| format!("{t:.0} s")).unwrap_or_else(|| "all".to_owned())}
            </span>
        </div>
    }
}
