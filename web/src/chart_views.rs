//! One canvas component for every chart: it draws on the frame after its data
//! changes (apart from the simulation slice that produced the data), hides
//! while there is nothing to show, and offers a PNG download.

use crate::downloads::png_button;
use lab_charts::model::Chart;
use lab_charts::{ModelFn, render};
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;

/// The drawing area of a chart on the page.
pub type Area = plotters::drawing::DrawingArea<CanvasBackend, plotters::coord::Shift>;

/// A chart's size, caption and behaviour.
pub struct ChartSpec {
    /// DOM and test id (`chart-…`).
    pub id: &'static str,
    /// Canvas size in pixels.
    pub size: (u32, u32),
    /// Text under the chart.
    pub caption: Option<&'static str>,
    /// Span the whole width of the results column.
    pub wide: bool,
}

impl ChartSpec {
    /// A normal-size chart.
    pub fn new(id: &'static str) -> ChartSpec {
        ChartSpec {
            id,
            size: (640, 300),
            caption: None,
            wide: false,
        }
    }
}

/// A chart whose data comes from signals: `track` reads (and so subscribes to)
/// them, `visible` says whether there is something to show, and `model` builds
/// the chart from them without subscribing. The chart's description in words
/// becomes the canvas's text alternative.
pub fn chart_canvas(
    spec: ChartSpec,
    visible: impl Fn() -> bool + Send + Sync + Copy + 'static,
    track: impl Fn() + 'static,
    model: impl Fn() -> Option<Chart> + Clone + 'static,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let description = RwSignal::new(String::new());
    Effect::new(move |_| {
        track();
        let Some(el) = canvas.get() else { return };
        let model = model.clone();
        request_animation_frame(move || {
            if !visible() {
                return;
            }
            let Some(chart) = model() else { return };
            if let Some(backend) = CanvasBackend::with_canvas_object(el) {
                // A failed draw leaves the previous frame; nothing better to show.
                let _ = render::draw(&backend.into_drawing_area(), &chart);
            }
            description.set(render::describe(&chart));
        });
    });
    let class = if spec.wide { "chart wide" } else { "chart" };
    let (w, h) = spec.size;
    view! {
        <figure class=class style:display=move || if visible() { "block" } else { "none" }>
            <canvas
                node_ref=canvas
                data-testid=spec.id
                width=w.to_string()
                height=h.to_string()
                role="img"
                aria-label=move || description.get()
            ></canvas>
            {spec.caption.map(|c| view! { <figcaption>{c}</figcaption> })}
            {png_button(spec.id, canvas)}
        </figure>
    }
}

/// A chart of a run's report, with the pinned run A drawn behind it.
pub fn report_chart(
    id: &'static str,
    model: ModelFn,
    shown: Memo<Option<sim_core::Report>>,
    pinned: Signal<Option<sim_core::Report>>,
    show: fn(&sim_core::Report) -> bool,
) -> impl IntoView {
    chart_canvas(
        ChartSpec::new(id),
        move || shown.with(|r| r.as_ref().is_some_and(show)),
        move || {
            shown.track();
            pinned.track();
        },
        move || {
            pinned.with_untracked(|a| {
                shown.with_untracked(|r| r.as_ref().map(|r| model(r, a.as_ref())))
            })
        },
    )
}
