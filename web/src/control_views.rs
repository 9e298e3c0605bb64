//! The scenario controls on the page: a collapsible group per catalogue group,
//! a slider with a typed box for numbers, a menu for choices.

use crate::controls::{ChoiceControl, Control, GroupView, NumberControl};
use leptos::prelude::*;
use sim_core::Scenario;

/// Apply a change only if it applies and the result is a valid scenario;
/// otherwise say why.
pub fn apply(
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
    change: impl FnOnce(&mut Scenario) -> Result<(), String>,
) {
    let mut s = scenario.get_untracked();
    if let Err(e) = change(&mut s) {
        problem.set(Some(e));
        return;
    }
    match s.check() {
        Ok(()) => {
            problem.set(None);
            scenario.set(s);
        }
        Err(e) => problem.set(Some(e.problems.join("; "))),
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
    let classes = move || {
        if per_class {
            scenario.with(|s| s.workload.classes.len())
        } else {
            1
        }
    };
    let visible = move || {
        scenario.with(|s| (0..classes()).any(|i| for_visible.iter().any(|c| c.applies(s, i))))
    };
    let body = move || {
        (0..classes())
            .map(|i| {
                let heading =
                    per_class.then(|| scenario.with(|s| s.workload.classes[i].name.clone()));
                let items = controls
                    .iter()
                    .map(|c| match *c {
                        Control::Number(n) => {
                            number_control(n, i, dom_id(n.param.id, i), scenario, problem)
                        }
                        Control::Choice(ch) => {
                            choice_control(ch, i, dom_id(ch.param.id, i), scenario, problem)
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
        <Show when=visible.clone()>
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

fn label_with_help(for_id: String, label: &'static str, help: &'static str) -> impl IntoView {
    view! {
        <label for=for_id>
            {label}
            <span class="help" tabindex="0" role="img" aria-label=format!("What is {label}?") title=help>
                "?"
            </span>
        </label>
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
    let value = move || scenario.with(|s| c.get(s, i));
    let set = move |v: f64| apply(scenario, problem, |s: &mut Scenario| c.set(s, i, v));
    let (min, max) = c.range();
    view! {
        <Show when=move || value().is_some()>
            <div class="control">
                {label_with_help(dom_id.clone(), p.label, p.help)}
                <p class="help-text" id=help_id.clone()>{p.help}</p>
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
                                Err(msg) => problem.set(Some(msg)),
                            }
                        }
                    />
                    <span class="unit">{p.unit}</span>
                </div>
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
    let current = move || scenario.with(|s| c.get(s, i));
    view! {
        <Show when=move || current().is_some()>
            <div class="control">
                {label_with_help(dom_id.clone(), p.label, p.help)}
                <select
                    id=dom_id.clone()
                    data-testid=dom_id.clone()
                    on:change=move |ev| {
                        let k = event_target_value(&ev);
                        apply(scenario, problem, |s: &mut Scenario| c.set(s, i, &k));
                    }
                >
                    {move || {
                        let cur = current();
                        scenario
                            .with(|s| c.options(s, i))
                            .into_iter()
                            .map(|(k, label)| {
                                let selected = cur.as_deref() == Some(k.as_str());
                                view! { <option value=k selected=selected>{label}</option> }
                            })
                            .collect_view()
                    }}
                </select>
            </div>
        </Show>
    }
    .into_any()
}
