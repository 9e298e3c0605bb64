//! One canvas component for every chart: it draws after its data changes
//! (never in the simulation slice that produced the data), hides while there
//! is nothing to show, and offers a PNG download. Draws go through one queue,
//! run as tasks of their own that spend at most [`DRAW_BUDGET_MS`] each and
//! keep only each chart's latest data, so a slider drag never stacks up
//! redraws or makes one long task of a simulation slice and the drawing.

use crate::charts::canvas_backend::MeasuringCanvas;
use crate::io::downloads::png_button;
use lab_charts::model::Chart;
use lab_charts::{ReportChart, render};
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;

/// Most time one drawing task spends, ms (a chart in progress always finishes).
pub const DRAW_BUDGET_MS: f64 = 12.0;

type Draw = Box<dyn FnOnce()>;

thread_local! {
    /// Charts waiting to be drawn, by id, in the order they were first asked
    /// for; a newer request for the same chart replaces the older one.
    static QUEUE: std::cell::RefCell<(Vec<(&'static str, Draw)>, bool)> =
        std::cell::RefCell::new((Vec::new(), false));
}

/// Ask for chart `id` to be drawn by `draw`, replacing any waiting draw of it.
fn enqueue(id: &'static str, draw: Draw) {
    let schedule = QUEUE.with(|q| {
        let mut q = q.borrow_mut();
        match q.0.iter_mut().find(|(k, _)| *k == id) {
            Some(slot) => slot.1 = draw,
            None => q.0.push((id, draw)),
        }
        !std::mem::replace(&mut q.1, true)
    });
    if schedule {
        next_task();
    }
}

/// Draw waiting charts until the task's budget is spent; the rest wait for
/// the next task.
fn pump() {
    let t0 = crate::work::jobs::now_ms();
    loop {
        let next = QUEUE.with(|q| {
            let mut q = q.borrow_mut();
            if q.0.is_empty() {
                q.1 = false;
                None
            } else {
                Some(q.0.remove(0).1)
            }
        });
        let Some(draw) = next else { return };
        draw();
        if crate::work::jobs::now_ms() - t0 > DRAW_BUDGET_MS {
            break;
        }
    }
    let more = QUEUE.with(|q| {
        let mut q = q.borrow_mut();
        q.1 = !q.0.is_empty();
        q.1
    });
    if more {
        next_task();
    }
}

/// Run the pump as a task of its own, after the current one (the simulation
/// slice or input handler that asked for the draw): work split into tasks
/// keeps each one short.
fn next_task() {
    set_timeout(pump, std::time::Duration::ZERO);
}

/// The drawing area of a chart on the page.
pub type Area = plotters::drawing::DrawingArea<MeasuringCanvas, plotters::coord::Shift>;

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
    canvas_view(spec, visible, track, model, None)
}

/// What a click on a chart's dot does: the dot's line (its legend label)
/// and its point, in the chart's units.
pub type OnDot = std::rc::Rc<dyn Fn(&str, (f64, f64))>;

/// [`chart_canvas`] whose dots answer a click (within 10 pixels) with
/// `on_dot`. The canvas's `data-dot` holds where its first dot is, in CSS
/// pixels from its corner, for a pointer that cannot see it.
pub fn clickable_chart_canvas(
    spec: ChartSpec,
    visible: impl Fn() -> bool + Send + Sync + Copy + 'static,
    track: impl Fn() + 'static,
    model: impl Fn() -> Option<Chart> + Clone + 'static,
    on_dot: OnDot,
) -> impl IntoView {
    canvas_view(spec, visible, track, model, Some(on_dot))
}

fn canvas_view(
    spec: ChartSpec,
    visible: impl Fn() -> bool + Send + Sync + Copy + 'static,
    track: impl Fn() + 'static,
    model: impl Fn() -> Option<Chart> + Clone + 'static,
    on_dot: Option<OnDot>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let description = RwSignal::new(String::new());
    // The chart drawn last and where its data went (for clicks).
    let drawn = StoredValue::new_local(None::<(Chart, render::Plotted)>);
    let first_dot = RwSignal::new(String::new());
    let id = spec.id;
    let (w, h) = spec.size;
    let clickable = on_dot.is_some();
    Effect::new(move |_| {
        track();
        let Some(el) = canvas.get() else { return };
        let model = model.clone();
        enqueue(
            id,
            Box::new(move || {
                if !visible() {
                    return;
                }
                let Some(chart) = model() else { return };
                if let Some(backend) = MeasuringCanvas::new(el.clone()) {
                    // A failed draw leaves the previous frame; nothing better to show.
                    if let Ok(p) = render::draw_plotted(&backend.into_drawing_area(), &chart) {
                        if clickable {
                            // CSS pixels: the canvas is drawn at `w` wide and shown at its client width.
                            let scale = f64::from(el.client_width().max(1)) / f64::from(w);
                            first_dot.set(
                                chart
                                    .lines
                                    .iter()
                                    .filter(|l| l.stroke == lab_charts::model::Stroke::Dots)
                                    .find_map(|l| l.points.first())
                                    .map(|d| {
                                        let (x, y) = p.pixel_of(*d);
                                        format!("{:.0},{:.0}", x * scale, y * scale)
                                    })
                                    .unwrap_or_default(),
                            );
                        }
                        drawn.set_value(Some((chart.clone(), p)));
                    }
                }
                description.set(render::describe(&chart));
            }),
        );
    });
    let click = move |ev: leptos::ev::MouseEvent| {
        let (Some(on_dot), Some(el)) = (on_dot.as_ref(), canvas.get_untracked()) else {
            return;
        };
        let scale = f64::from(w) / f64::from(el.client_width().max(1));
        let at = (
            f64::from(ev.offset_x()) * scale,
            f64::from(ev.offset_y()) * scale,
        );
        drawn.with_value(|d| {
            if let Some((chart, p)) = d
                && let Some((label, point)) = p.dot_at(chart, at, 10.0 * scale)
            {
                on_dot(label, point);
            }
        });
    };
    let class = if spec.wide { "chart wide" } else { "chart" };
    view! {
        <figure class=class style:display=move || if visible() { "block" } else { "none" }>
            <canvas
                node_ref=canvas
                data-testid=spec.id
                width=w.to_string()
                height=h.to_string()
                role="img"
                aria-label=move || description.get()
                class:clickable=clickable
                data-dot=move || first_dot.get()
                on:click=click
            ></canvas>
            {spec.caption.map(|c| view! { <figcaption>{c}</figcaption> })}
            {png_button(spec.id, canvas)}
        </figure>
    }
}

/// A chart of a run's report, with the pinned run A drawn behind it.
pub fn report_chart(
    chart: ReportChart,
    shown: Memo<Option<sim_core::Report>>,
    pinned: Signal<Option<sim_core::Report>>,
) -> impl IntoView {
    let (model, show) = (chart.model, chart.applies);
    chart_canvas(
        ChartSpec {
            caption: Some(chart.caption),
            ..ChartSpec::new(chart.id)
        },
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
