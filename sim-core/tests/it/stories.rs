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

/// Every number a string of JSON holds, walking arrays and objects.
fn numbers_in(v: &serde_json::Value, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Number(n) => out.extend(n.as_f64()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| numbers_in(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| numbers_in(x, out)),
        _ => {}
    }
}

/// The numbers a text states, as written ("1,500" is 1500, "1.5 M" is
/// 1.5·10⁶, "40 %" is 0.4), leaving out those inside a name ("H100",
/// "Llama-3.1-8B", "FP8", "16-bit").
fn stated(text: &str) -> Vec<(String, f64)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len()
            && (b[i].is_ascii_digit()
                || ((b[i] == b',' || b[i] == b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
        {
            i += 1;
        }
        let before = text[..start].chars().next_back();
        let after = &text[i..];
        let in_name = before.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '.')
            || after.starts_with(|c: char| c.is_alphanumeric() || c == '-');
        if in_name {
            continue;
        }
        let written = &text[start..i];
        let mut v: f64 = written.replace(',', "").parse().expect("a number");
        if after.starts_with(" M ") {
            v *= 1e6;
        } else if after.starts_with(" %") {
            v /= 100.0;
        }
        out.push((written.to_owned(), v));
    }
    out
}

/// A preset's paragraph states its inputs, never an outcome: an outcome
/// belongs to a story step, where it is computed and checked. Each number
/// it states is one of its scenarios' (the preset's, or a story step's), or
/// the ratio, product or sum of two of them ("2.5 times" the speed, "$12 an
/// hour" for 4 GPUs, "18 requests/s together").
#[test]
fn every_preset_paragraph_states_only_its_scenarios_numbers() {
    let mut typed = Vec::new();
    for p in sim_core::presets::all() {
        // 0 is every unset setting's value (a priority left at its default).
        let mut known = vec![0.0];
        for k in 0..p.steps.len() {
            let s = scenario_at(&p.scenario, p.steps, k).expect("the story's edits apply");
            numbers_in(
                &serde_json::to_value(&s).expect("a scenario is JSON"),
                &mut known,
            );
        }
        known.sort_by(f64::total_cmp);
        known.dedup();
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
        for (written, v) in stated(p.explanation) {
            if !known.iter().any(|&a| near(a, v)) {
                typed.push(format!("{}: {written}", p.id));
            }
        }
    }
    assert!(
        typed.is_empty(),
        "numbers typed into preset paragraphs, not in their scenarios (say them in a story step, where they are checked): {typed:?}"
    );
}

#[test]
fn a_paragraphs_numbers_are_read_as_written() {
    let got: Vec<f64> =
        stated("Llama-3.1-8B on 4 × H100 in FP8, 1,500 tok/s, a 1.5 M cap, 40 % errors, 16-bit")
            .into_iter()
            .map(|(_, v)| v)
            .collect();
    assert_eq!(got, [4.0, 1500.0, 1.5e6, 0.4]);
}
