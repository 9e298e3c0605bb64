//! Every preset's story runs to its end on the catalogue's own edits, and
//! every number a step states is what the simulation gives.

use sim_core::presets::story::{check_step, scenario_at, step_of};

#[test]
fn every_story_step_claims_only_what_its_run_shows() {
    let mut wrong = Vec::new();
    for p in sim_core::presets::all() {
        assert!(
            p.steps.len() >= 2,
            "{}: a story has an opening and at least one step",
            p.id
        );
        assert!(
            p.steps[0].edits.is_empty(),
            "{}: step 1 is the preset",
            p.id
        );
        let mut previous = None;
        for (k, step) in p.steps.iter().enumerate() {
            let s = scenario_at(&p.scenario, p.steps, k).expect("the story's edits apply");
            assert!(
                previous.as_ref() != Some(&s),
                "{} step {}: changes nothing",
                p.id,
                k + 1
            );
            assert_eq!(
                step_of(&p.scenario, p.steps, &s),
                Some(k),
                "{} step {}: the page finds the step from its scenario",
                p.id,
                k + 1
            );
            assert!(!step.claims.is_empty(), "{} step {}: no claim", p.id, k + 1);
            let checked = check_step(&p.scenario, p.steps, k).expect("the step runs");
            assert_eq!(checked.len(), step.claims.len(), "one check per claim");
            // The text's numbers are the run's: each `{k}` a claim of the
            // step, filled with its value; none left over.
            let values: Vec<Option<f64>> = checked.iter().map(|c| c.value).collect();
            let said = step.say_with(&values);
            assert!(
                step.say.contains('{') && !said.contains('{') && !said.contains('}'),
                "{} step {}: every simulated number in the text is a claim's: {said}",
                p.id,
                k + 1
            );
            for (i, (c, v)) in step.claims.iter().zip(&values).enumerate() {
                if step.say.contains(&format!("{{{i}}}")) {
                    let shown = c.what.show(v.expect("a value"));
                    assert!(
                        said.contains(&shown),
                        "{} step {}: {shown} in {said}",
                        p.id,
                        k + 1
                    );
                }
            }
            for (c, got) in step.claims.iter().zip(checked) {
                if got.holds != Some(true) {
                    wrong.push(format!(
                        "{} step {} ({}): {} is {}, the story says {}",
                        p.id,
                        k + 1,
                        step.title,
                        c.subject(),
                        got.value.map_or("missing".into(), |v| c.what.show(v)),
                        c.expects()
                    ));
                }
            }
            previous = Some(s);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_scenario_off_the_story_path_is_no_step() {
    let p = sim_core::presets::self_hosted_tuning();
    let steps = sim_core::presets::all()
        .into_iter()
        .find(|q| q.id == "self-hosted-tuning")
        .expect("preset")
        .steps;
    let mut s = p.clone();
    sim_core::params::apply(&mut s, "arrival.rate", "7").expect("edit");
    assert_eq!(step_of(&p, steps, &s), None);
    assert_eq!(step_of(&p, steps, &p), Some(0));
}
