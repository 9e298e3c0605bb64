//! `tlab plan --pools`'s readable answer.

use sim_core::format::usd;
use sim_core::plan::pools::{Answer, PoolPlan};
use tlab::summary::ms;

fn answer(o: &mut String, a: &Answer) {
    let who = match &a.class {
        None => "all the traffic on one setup".to_owned(),
        Some(c) if a.classes.len() > 1 => format!("classes {c} sharing a pool"),
        Some(c) => format!("class {c}"),
    };
    *o += &format!(
        "{who} (p99 TTFT {}, p99 TPOT {}): ",
        ms(Some(a.slo.ttft_p99_ms)),
        ms(Some(a.slo.tpot_p99_ms))
    );
    *o += &match (a.describe(), a.usd_per_month()) {
        (Some(d), Some(c)) => format!("{d}, {}/month\n", usd(c)),
        _ => format!(
            "no setup meets the targets ({} simulations; nearest miss: {})\n",
            a.plan.simulations,
            a.plan
                .near_misses
                .first()
                .map_or("none", |e| e.description.as_str())
        ),
    };
    if !a.plan.unsettled.is_empty() {
        *o += &format!(
            "  {} configurations that could be cheaper were not settled within the work budget (--full settles them)\n",
            a.plan.unsettled.len()
        );
    }
    if let Some(n) = &a.scaling_note {
        *o += &format!("  autoscaling: {n}\n");
    }
    if let Some(n) = &a.overflow_note {
        *o += &format!("  overflow to the API: {n}\n");
    }
}

/// The plan over pools as text: each question's answer, the split's run per
/// class, and the cheaper of the two.
pub(crate) fn text(p: &PoolPlan, seconds: f64) -> String {
    let mut o = String::new();
    answer(&mut o, &p.whole);
    for a in p.classes.iter().chain(&p.groups) {
        answer(&mut o, a);
    }
    match (&p.split, &p.no_split) {
        (Some(s), _) => {
            o += &format!(
                "{}, run together: {}/month\n",
                s.describe(),
                usd(s.usd_per_month)
            );
            for (class, v) in &s.verdicts {
                o += &match v {
                    Ok(m) => format!(
                        "  {class}: meets its targets ({:.0} % to spare)\n",
                        m * 100.0
                    ),
                    Err(why) => format!("  {class}: misses ({why})\n"),
                };
            }
        }
        (None, Some(why)) => o += &format!("no split: {why}\n"),
        (None, None) => {}
    }
    match p.cheapest() {
        Some((d, c, _)) => o += &format!("cheapest: {d}, {}/month\n", usd(c)),
        None => o += "no answer meets the targets\n",
    }
    let sims: usize = std::iter::once(&p.whole)
        .chain(&p.classes)
        .chain(&p.groups)
        .map(|a| a.plan.simulations)
        .sum();
    o += &format!("{sims} planning simulations and the searches above in {seconds:.1} s\n");
    o
}
