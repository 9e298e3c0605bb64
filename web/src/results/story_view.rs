//! The preset's story as a guided sequence beside the results: the step the
//! scenario is at, what to do next (one button makes the change through the
//! catalogue, as the controls would), and each claim of the step checked
//! against the run on screen, with the simulated number beside it.

use crate::work::runner::{RunState, Runner};
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::compare::LoadCheck;
use sim_core::presets::story::{Checked, scenario_at, step_of};
use sim_core::presets::{Preset, Step};

/// Where the scenario is in its preset's story: the preset's scenario, its
/// steps, and the step the scenario is exactly at (None when off the path).
#[derive(Clone)]
pub struct StoryAt {
    /// The preset as it opens.
    pub base: Scenario,
    /// Its story.
    pub steps: &'static [Step],
    /// The step whose scenario the page shows, if any.
    pub step: Option<usize>,
}

impl PartialEq for StoryAt {
    fn eq(&self, other: &StoryAt) -> bool {
        // Stories are static: the same story is the same slice.
        std::ptr::eq(self.steps, other.steps) && self.step == other.step && self.base == other.base
    }
}

/// The story position of `s`: the preset of `all` it came from (by name)
/// and its step.
pub fn story_at(all: &[Preset], s: &Scenario) -> Option<StoryAt> {
    let p = sim_core::presets::of(all, s)?;
    Some(StoryAt {
        step: step_of(&p.scenario, p.steps, s),
        base: p.scenario.clone(),
        steps: p.steps,
    })
}

/// The story panel.
pub fn story_view(
    scenario: RwSignal<Scenario>,
    at: Memo<Option<StoryAt>>,
    runner: Runner,
    (load, load_for): (RwSignal<Option<LoadCheck>>, RwSignal<Option<Scenario>>),
) -> impl IntoView {
    let (report, state, preview, ran) = (runner.report, runner.state, runner.preview, runner.ran);
    let go = move |k: usize| {
        if let Some(a) = at.get_untracked()
            && let Ok(s) = scenario_at(&a.base, a.steps, k)
        {
            scenario.set(s);
        }
    };
    // The run on screen is this scenario's, finished and not a preview.
    let settled = move || {
        matches!(state.get(), RunState::Done(_))
            && preview.with(|p| p.is_none())
            && scenario.with(|s| ran.with(|r| r.as_ref() == Some(s)))
    };
    let measured = move || scenario.with(|s| load_for.with(|l| l.as_ref() == Some(s)));
    let steps_nav = move || {
        at.get().map(|a| {
            let n = a.steps.len();
            a.steps
                .iter()
                .enumerate()
                .map(|(k, st)| {
                    let current = a.step == Some(k);
                    view! {
                        <li>
                            <button
                                type="button"
                                class="story-step"
                                class:current=current
                                data-testid=format!("story-go-{}", k + 1)
                                aria-current=current.then_some("step")
                                title=st.title
                                aria-label=format!("Step {} of {n}: {}", k + 1, st.title)
                                on:click=move |_| go(k)
                            >
                                {(k + 1).to_string()}
                            </button>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    let body = move || {
        let a = at.get()?;
        let n = a.steps.len();
        let Some(k) = a.step else {
            return Some(
                view! {
                    <p data-testid="story-off-path">
                        "You have left the story's path: the numbers are your own scenario's. "
                        <button type="button" data-testid="story-restart" on:click=move |_| go(0)>
                            "Back to the start of the story"
                        </button>
                    </p>
                }
                .into_any(),
            );
        };
        let step = a.steps[k];
        // A claim checked against the run on screen, once it is this
        // step's, finished (and measured, for the capacity numbers).
        let check = move |c: sim_core::presets::story::Claim| -> Checked {
            if !settled() {
                return Checked {
                    value: None,
                    holds: None,
                };
            }
            report.with(|r| match r {
                Some(r) => load.with(|l| {
                    if c.what.needs_capacity() && (l.is_none() || !measured()) {
                        Checked {
                            value: None,
                            holds: None,
                        }
                    } else {
                        c.check(r, l.as_ref())
                    }
                }),
                None => Checked {
                    value: None,
                    holds: None,
                },
            })
        };
        // The step's text with the run's own numbers in it.
        let said = move || {
            let values: Vec<Option<f64>> = step.claims.iter().map(|c| check(*c).value).collect();
            step.say_with(&values)
        };
        let claims = step
            .claims
            .iter()
            .map(|c| {
                let c = *c;
                let checked = move || check(c);
                let holds = move || match checked().holds {
                    Some(true) => "true",
                    Some(false) => "false",
                    None => "pending",
                };
                view! {
                    <li
                        class="claim"
                        data-testid="story-claim"
                        data-card=c.what.card().map(|id| format!("card-{id}")).unwrap_or_default()
                        data-class=c.class.unwrap_or_default()
                        data-quantity=format!("{:?}", c.what)
                        data-holds=holds
                        data-value=move || checked().value.map(|v| v.to_string()).unwrap_or_default()
                        class:holds=move || holds() == "true"
                        class:fails=move || holds() == "false"
                    >
                        <span class="claim-mark" aria-hidden="true">
                            {move || match holds() { "true" => "✓", "false" => "✗", _ => "…" }}
                        </span>
                        {format!("{}: ", c.subject())}
                        <strong>
                            {move || checked().value.map(|v| c.what.show(v)).unwrap_or_else(|| "running…".into())}
                        </strong>
                        {format!(" (the story says {})", c.expects())}
                        <span class="visually-hidden">
                            {move || match holds() { "true" => ", as the story says", "false" => ", not what the story says", _ => "" }}
                        </span>
                    </li>
                }
            })
            .collect_view();
        let next = (k + 1 < n).then(|| {
            let title = a.steps[k + 1].title;
            view! {
                <button type="button" class="story-next" data-testid="story-next" on:click=move |_| go(k + 1)>
                    {format!("Next: {title} →")}
                </button>
            }
        });
        let end = (k + 1 == n).then(|| {
            view! { <p class="story-end" data-testid="story-end">"The end of the story: every control is yours now."</p> }
        });
        Some(
            view! {
                <p class="story-say" data-testid="story-say">
                    <strong>{format!("Step {} of {n}: {}. ", k + 1, step.title)}</strong>
                    {said}
                </p>
                <ul class="claims" aria-label="What this step claims, checked against the run">
                    {claims}
                </ul>
                {next}
                {end}
            }
            .into_any(),
        )
    };
    view! {
        <Show when=move || at.with(|a| a.is_some())>
            <section class="story" data-testid="story" aria-label="The preset's story, step by step">
                <div class="story-head">
                    <h2>"The story, step by step"</h2>
                    <ol class="story-steps">{steps_nav}</ol>
                </div>
                {body}
            </section>
        </Show>
    }
}
