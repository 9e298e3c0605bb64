//! The scenario controls on the page: a collapsible group per catalogue group,
//! a slider with a typed box for numbers, a menu for choices.

use crate::controls::{ChoiceControl, Control, GroupView, NumberControl, TextControl};
use leptos::prelude::*;
use sim_core::Scenario;

/// Which control's change the page's current problem came from (its DOM
/// id), so the message shows next to it; provided by the page.
#[derive(Clone, Copy)]
pub struct ProblemAt(pub RwSignal<Option<String>>);

/// [`refuse`] for work that ends later, after an `await` (reading a file),
/// where the page's context is no longer at hand: it is taken now.
pub fn refuser(problem: RwSignal<Option<String>>) -> impl Fn(&str, String) + Copy + 'static {
    let at = use_context::<ProblemAt>();
    move |dom_id: &str, message: String| {
        if let Some(ProblemAt(a)) = at {
            a.set(Some(dom_id.to_owned()));
        }
        problem.set(Some(message));
    }
}

/// Say `message` as the problem of the control `dom_id`.
pub fn refuse(problem: RwSignal<Option<String>>, dom_id: &str, message: String) {
    if let Some(ProblemAt(at)) = use_context::<ProblemAt>() {
        at.set(Some(dom_id.to_owned()));
    }
    problem.set(Some(message));
}

/// What else the last edit changed, under the control that made it (its
/// DOM id and the sentence); provided by the page.
#[derive(Clone, Copy)]
pub struct ChangeNote(pub RwSignal<Option<(String, String)>>);

/// Apply a change of `edited` only if it applies and the result is a valid
/// scenario; otherwise say why, next to the control `dom_id` that asked for
/// it. What else the change implies (another parameter's value) is said
/// there too.
pub fn apply(
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
    (dom_id, edited): (&str, &'static sim_core::params::Param),
    change: impl FnOnce(&mut Scenario) -> Result<(), String>,
) -> bool {
    let before = scenario.get_untracked();
    let mut s = before.clone();
    if let Err(e) = change(&mut s) {
        refuse(problem, dom_id, e);
        return false;
    }
    match s.check() {
        Ok(()) => {
            problem.set(None);
            if let Some(ChangeNote(note)) = use_context::<ChangeNote>() {
                let said = sim_core::params::side_effects(&before, &s, edited);
                note.set((!said.is_empty()).then(|| {
                    (
                        dom_id.to_owned(),
                        format!("Also changed: {}.", said.join("; ")),
                    )
                }));
            }
            scenario.set(s);
            true
        }
        Err(e) => {
            refuse(problem, dom_id, e.problems.join("; "));
            false
        }
    }
}

/// What else the last edit changed, under the control that made it.
fn change_note(dom_id: String) -> impl IntoView {
    let note = use_context::<ChangeNote>();
    let text = {
        let dom_id = dom_id.clone();
        move || {
            note.and_then(|ChangeNote(n)| {
                n.with(|n| {
                    n.as_ref()
                        .filter(|(id, _)| *id == dom_id)
                        .map(|(_, t)| t.clone())
                })
            })
        }
    };
    let shown = text.clone();
    {
        let (shown, id) = (shown.clone(), format!("{dom_id}-change"));
        Effect::new(move |_| {
            if shown().is_some() {
                reveal(id.clone());
            }
        });
    }
    view! {
        <Show when=move || shown().is_some()>
            <p class="control-note" role="status" data-testid=format!("{dom_id}-change")>
                {text.clone()}
            </p>
        </Show>
    }
}

/// Bring the run's results into view (after an Apply made a setup the
/// scenario): the results panel, or on a phone, where the panel is laid out
/// part by part around the controls, its headline numbers.
pub fn show_results() {
    let d = document();
    let panel = d
        .get_element_by_id("results")
        .filter(|el| el.get_bounding_client_rect().height() > 0.0);
    let target = panel.or_else(|| d.query_selector("#results .lead").ok().flatten());
    if let Some(el) = target {
        el.scroll_into_view();
    }
}

/// Bring the message under the control or panel `dom_id` to the middle of
/// the screen, and the control into focus (from the results' banner).
pub fn go_to_problem(dom_id: &str) {
    let d = document();
    if let Ok(Some(el)) = d.query_selector(&format!("[data-testid=\"{dom_id}-error\"]")) {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Center);
        el.scroll_into_view_with_scroll_into_view_options(&options);
    }
    if let Some(control) = d
        .get_element_by_id(dom_id)
        .and_then(|el| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el).ok())
    {
        let options = web_sys::FocusOptions::new();
        options.set_prevent_scroll(true);
        let _ = control.focus_with_options(&options);
    }
}

/// Bring the element with test id `id` into view if it is not (after the
/// frame that draws it): what a control says must be where the eye is.
fn reveal(id: String) {
    request_animation_frame(move || {
        let Some(el) = document()
            .query_selector(&format!("[data-testid=\"{id}\"]"))
            .ok()
            .flatten()
        else {
            return;
        };
        let r = el.get_bounding_client_rect();
        let height = window()
            .inner_height()
            .ok()
            .and_then(|h| h.as_f64())
            .unwrap_or(0.0);
        if r.top() < 0.0 || r.bottom() > height {
            el.scroll_into_view_with_bool(false);
        }
    });
}

/// The page's problem, under the control that caused it.
pub fn control_error(dom_id: String, problem: RwSignal<Option<String>>) -> impl IntoView {
    let at = use_context::<ProblemAt>();
    let mine = {
        let dom_id = dom_id.clone();
        move || {
            problem.with(|p| p.is_some())
                && at.is_some_and(|ProblemAt(a)| a.with(|a| a.as_deref() == Some(dom_id.as_str())))
        }
    };
    {
        let (mine, id) = (mine.clone(), format!("{dom_id}-error"));
        Effect::new(move |_| {
            if mine() {
                reveal(id.clone());
            }
        });
    }
    view! {
        <Show when=mine.clone()>
            <p class="control-error" role="alert" data-testid=format!("{dom_id}-error")>
                {move || problem.get().unwrap_or_default()}
            </p>
        </Show>
    }
}

/// A group of controls, shown when any of them applies.
pub fn group_view(
    g: GroupView,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let per_class = g.group.per_class();
    let controls = g.controls;
    let title = g.group.title();
    let for_visible = controls.clone();
    // The class names a per-class group repeats for (one unnamed entry
    // otherwise): the group's body is rebuilt only when they change, never on
    // an edit of a value (each control follows its own value).
    let classes = Memo::new(move |_| {
        if per_class {
            scenario.with(|s| {
                s.workload
                    .classes
                    .iter()
                    .map(|k| Some(k.name.clone()))
                    .collect::<Vec<_>>()
            })
        } else {
            vec![None]
        }
    });
    let visible = Memo::new(move |_| {
        let n = classes.with(Vec::len);
        scenario.with(|s| (0..n).any(|i| for_visible.iter().any(|c| c.applies(s, i))))
    });
    let visible = move || visible.get();
    let body = move || {
        classes
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, heading)| {
                let items = controls
                    .iter()
                    .map(|c| match *c {
                        Control::Number(n) => {
                            number_control(n, i, dom_id(n.param.id, i), scenario, problem)
                        }
                        Control::Choice(ch) => {
                            choice_control(ch, i, dom_id(ch.param.id, i), scenario, problem)
                        }
                        Control::Text(t) => {
                            text_control(t, i, dom_id(t.param.id, i), scenario, problem)
                        }
                    })
                    .collect_view();
                view! {
                    {heading.map(|h| view! { <h3 class="class-name">{h}</h3> })}
                    {items}
                }
            })
            .collect_view()
    };
    view! {
        <Show when=visible>
            <details class="group" open=true data-testid=format!("group-{}", title.to_lowercase().replace(' ', "-"))>
                <summary>{title}</summary>
                {body.clone()}
            </details>
        </Show>
    }
}

/// One scenario-wide catalogue control shown somewhere else on the page (the
/// planner's serving-software menu), its DOM id prefixed by `scope` so it does
/// not clash with the same control in the scenario panel.
pub fn scoped_control(
    path: &str,
    scope: &str,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> AnyView {
    let control = crate::controls::groups()
        .into_iter()
        .flat_map(|g| g.controls)
        .find(|c| c.param().path == path);
    match control {
        Some(Control::Number(n)) => {
            number_control(n, 0, format!("{scope}-{}", n.param.id), scenario, problem)
        }
        Some(Control::Choice(c)) => {
            choice_control(c, 0, format!("{scope}-{}", c.param.id), scenario, problem)
        }
        Some(Control::Text(t)) => {
            text_control(t, 0, format!("{scope}-{}", t.param.id), scenario, problem)
        }
        None => ().into_any(),
    }
}

fn dom_id(id: &str, i: usize) -> String {
    if i == 0 {
        id.to_owned()
    } else {
        format!("{id}-{i}")
    }
}

/// A control's label, its "?" button and its help: a button (Tab reaches
/// it, Enter or Space opens it) that shows and hides the help under the
/// label. The help is the control's accessible description either way, so a
/// screen reader reads it with the control.
fn label_with_help(for_id: String, label: &'static str, help: &'static str) -> impl IntoView {
    let help_id = format!("{for_id}-help");
    let open = RwSignal::new(false);
    view! {
        <div class="label-row">
            <label for=for_id.clone()>{label}</label>
            <button
                type="button"
                class="help"
                data-testid=format!("{for_id}-help-button")
                aria-label=format!("What is {label}?")
                aria-expanded=move || open.get().to_string()
                aria-controls=help_id.clone()
                title=help
                on:click=move |_| open.update(|o| *o = !*o)
            >
                "?"
            </button>
        </div>
        <p class="help-text" id=help_id data-testid=format!("{for_id}-help") hidden=move || !open.get()>
            {help}
        </p>
    }
}

fn number_control(
    c: NumberControl,
    i: usize,
    dom_id: String,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> AnyView {
    let p = c.param;
    let help_id = format!("{dom_id}-help");
    // Each attribute below reads the memo, so an edit elsewhere in the
    // scenario updates nothing here.
    let value = Memo::new(move |_| scenario.with(|s| c.get(s, i)));
    let value = move || value.get();
    let id = StoredValue::new(dom_id.clone());
    let set = move |v: f64| {
        id.with_value(|d| {
            apply(scenario, problem, (d, p), |s: &mut Scenario| c.set(s, i, v));
        })
    };
    let refuse_typed = move |msg: String| id.with_value(|d| refuse(problem, d, msg));
    // The phone's step buttons: 1 % of the slider a press.
    let nudge = move |dir: f64| {
        if let Some(cur) = value() {
            set(c.from_slider_moving(c.to_slider(cur) + dir * NumberControl::NUDGE, cur));
        }
    };
    let (min, max) = c.range();
    view! {
        <Show when=move || value().is_some()>
            <div class="control">
                {label_with_help(dom_id.clone(), p.label, p.help)}
                <div class="slider-row">
                    <input
                        type="range"
                        id=dom_id.clone()
                        data-testid=dom_id.clone()
                        min="0"
                        max=NumberControl::SLIDER_STEPS.to_string()
                        step="1"
                        aria-describedby=help_id.clone()
                        aria-valuetext=move || value().map(|v| format!("{} {}", c.show(v), p.unit)).unwrap_or_default()
                        prop:value=move || value().map(|v| c.to_slider(v).to_string()).unwrap_or_default()
                        on:input=move |ev| {
                            if let (Ok(pos), Some(cur)) = (event_target_value(&ev).parse::<f64>(), value()) {
                                set(c.from_slider_moving(pos, cur));
                            }
                        }
                    />
                    <input
                        type="number"
                        class="number"
                        data-testid=format!("{dom_id}-number")
                        aria-label=format!("{} in {}", p.label, p.unit)
                        step="any"
                        min=min.to_string()
                        max=max.to_string()
                        prop:value=move || value().map(|v| c.show(v)).unwrap_or_default()
                        on:change=move |ev| {
                            match c.parse(&event_target_value(&ev)) {
                                Ok(v) => set(v),
                                Err(msg) => refuse_typed(msg),
                            }
                        }
                    />
                    <span class="unit">{p.unit}</span>
                    <span class="step-buttons">
                        <button
                            type="button"
                            data-testid=format!("{dom_id}-less")
                            aria-label=format!("Less {}", p.label)
                            on:click=move |_| nudge(-1.0)
                        >
                            "−"
                        </button>
                        <button
                            type="button"
                            data-testid=format!("{dom_id}-more")
                            aria-label=format!("More {}", p.label)
                            on:click=move |_| nudge(1.0)
                        >
                            "+"
                        </button>
                    </span>
                </div>
                {control_error(dom_id.clone(), problem)}
                {change_note(dom_id.clone())}
            </div>
        </Show>
    }
    .into_any()
}

fn choice_control(
    c: ChoiceControl,
    i: usize,
    dom_id: String,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> AnyView {
    let p = c.param;
    let current = Memo::new(move |_| scenario.with(|s| c.get(s, i)));
    let current = move || current.get();
    let options = Memo::new(move |_| scenario.with(|s| c.options(s, i)));
    // Why the choice can change nothing here, redrawn only when that changes.
    let inert = Memo::new(move |_| scenario.with(|s| sim_core::params::inert(p, s)));
    let id = StoredValue::new(dom_id.clone());
    view! {
        <Show when=move || current().is_some()>
            <div class="control">
                {label_with_help(dom_id.clone(), p.label, p.help)}
                <select
                    id=dom_id.clone()
                    data-testid=dom_id.clone()
                    aria-describedby=format!("{dom_id}-help")
                    on:change=move |ev| {
                        let k = event_target_value(&ev);
                        let done = id.with_value(|d| apply(scenario, problem, (d, p), |s: &mut Scenario| c.set(s, i, &k)));
                        // Refused: the menu shows what the scenario still has,
                        // the message under it what was refused.
                        if !done
                            && let Some(select) = ev.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlSelectElement>(t).ok())
                        {
                            select.set_value(&current().unwrap_or_default());
                        }
                    }
                >
                    // The options are rebuilt only when they change (a new
                    // model, a new class), not on every edit of the scenario.
                    {move || {
                        options
                            .get()
                            .into_iter()
                            .map(|(k, label)| {
                                let key = k.clone();
                                let selected = move || current().as_deref() == Some(key.as_str());
                                view! { <option value=k selected=selected>{label}</option> }
                            })
                            .collect_view()
                    }}
                </select>
                {move || {
                    inert.get().map(|why| {
                        view! { <p class="control-note" data-testid=format!("{}-inert", id.get_value())>{why}</p> }
                    })
                }}
                {control_error(dom_id.clone(), problem)}
                {change_note(dom_id.clone())}
            </div>
        </Show>
    }
    .into_any()
}

fn text_control(
    c: TextControl,
    i: usize,
    dom_id: String,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> AnyView {
    let p = c.param;
    let current = Memo::new(move |_| scenario.with(|s| c.get(s, i)));
    let current = move || current.get();
    let id = StoredValue::new(dom_id.clone());
    view! {
        <Show when=move || current().is_some()>
            <div class="control">
                {label_with_help(dom_id.clone(), p.label, p.help)}
                <input
                    type="text"
                    class="text"
                    id=dom_id.clone()
                    data-testid=dom_id.clone()
                    aria-describedby=format!("{dom_id}-help")
                    placeholder=format!("e.g. {}", c.example())
                    prop:value=move || current().unwrap_or_default()
                    on:change=move |ev| {
                        let text = event_target_value(&ev);
                        id.with_value(|d| apply(scenario, problem, (d, p), |s: &mut Scenario| c.set(s, i, &text)));
                    }
                />
                {control_error(dom_id.clone(), problem)}
                {change_note(dom_id.clone())}
            </div>
        </Show>
    }
    .into_any()
}
