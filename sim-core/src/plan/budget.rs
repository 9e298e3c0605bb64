//! The planner's work budget, in simulated events (the same count on every
//! machine, unlike seconds): what a question will cost before it starts, a
//! smaller question when it is too large, and each search's share of it.
//!
//! A planning run processes about 3 million events a second on one core of
//! the 2-core reference machine (measured on the presets' plans), so
//! [`PLAN_EVENTS`] is ≈ 8 s on one core (`--serial`), ≈ 4–5 s on two, and
//! [`HEADROOM_EVENTS`] (one run at a time) ≈ 10 s at most. Each group of
//! searches (one hardware, every batch size) gets its share — half split
//! evenly, half by estimated work — fixed before anything runs and handed on
//! within the group, so the plan is the same whichever order or thread runs
//! its groups; a search out of budget ends as *unsettled*.
//!
//! The first pass runs only the groups whose cheapest possible setup (price
//! × the roofline's bound on replicas) is among the lowest quarter, on
//! [`FIRST_PASS_BUDGET`] of the budget; later passes (at most [`PASSES`] in
//! all) split what is left — up to [`LATER_PASSES_UP_TO`] of the budget once
//! some setup meets the targets, all of it before or while a group still
//! open could cost less than [`FAR_BELOW`] of that setup — evenly
//! among the groups still unsettled — the ones not yet run included — that
//! could beat the cheapest setup found (while none passes, the cheapest
//! possible groups first, each with at least [`GROWTH`] × what it used;
//! [`second_pass_shares`]), each
//! resuming where the budget cut it ([`reopen`]). A group whose smallest
//! possible size costs more than the cheapest setup found is never run (most
//! fleets of fast GPUs, for a small load); one still unsettled after the last
//! pass is listed as such. A pass depends only on each group's outcome so
//! far, so every pass is the same on any number of threads.

pub use super::question::{Question, Remedies, question};
use super::{Search, upper_requests};
use crate::physics::BatchShape;
use crate::report::Report;
use crate::scenario::{Arrival, Scenario, ServiceModel};

/// Simulated events one plan may use, all searches together.
pub const PLAN_EVENTS: u64 = 25_000_000;

/// Simulated events one plan on the page may use before its "Search
/// longer" (ten times more): the page's simulator runs at about half the
/// native speed (WebAssembly), and its workers meet at each pass, so this
/// is what two Web Workers answer within 3 s on the 2-core reference
/// machine on every preset; its cheapest answer is the one [`PLAN_EVENTS`]
/// finds on 10 of the 13 presets (`docs/benchmarks.md` lists the others).
pub const PAGE_PLAN_EVENTS: u64 = 8_000_000;

/// Simulated events one headroom search may use.
pub const HEADROOM_EVENTS: u64 = 20_000_000;

/// Runs a group of searches takes, in full-length equivalents: a doubling
/// or two to its first passing count and a few bisection steps, of which the
/// failing ones stop early (measured on the presets: 1.5–2.5).
const RUNS_PER_SEARCH: f64 = 2.0;

/// Fewest requests a shortened planning window keeps (its p99 then rests on
/// twenty requests over the target).
pub const MIN_PLAN_REQUESTS: f64 = 2_000.0;

/// About how many events one run of `s` takes: per request its arrival,
/// front end and prompt pass, and the decode passes: one per output token
/// when batches are small, at most one per step time per replica when they
/// are large (every replica busy for the whole run).
pub fn run_events(s: &Scenario) -> f64 {
    // Closed loop: each user sends at most one task per think time.
    let requests = upper_requests(s)
        .unwrap_or_else(|| s.peak_tasks_per_s() * s.duration_s * s.max_calls_per_task());
    let per_request = 4.0;
    let served_by_fleet = s.uses_fleet() && s.serving.service == ServiceModel::Physics;
    if !served_by_fleet {
        return requests * per_request;
    }
    let (tokens_per_task, ctx) = s.mean_tokens();
    let tokens = requests * tokens_per_task / s.max_calls_per_task();
    let one = s
        .deployment()
        .serving_step_model()
        .step_time_ns(&BatchShape {
            decode_seqs: 1,
            decode_context_tokens: ctx as u64,
            ..BatchShape::default()
        })
        .max(1) as f64;
    let busy = f64::from(s.serving.replicas) * s.duration_s * 1.2 * 1e9 / one;
    requests * per_request + tokens.min(busy)
}

/// The hardware a self-hosted search runs on: searches with the same key
/// differ only in batch size, run in order (smallest first), and share one
/// budget; an API search is a group of its own.
fn group_key(s: &Search) -> Option<(crate::physics::Gpu, u32, crate::physics::Precision)> {
    match s.config {
        super::Config::SelfHosted {
            gpu, tp, weights, ..
        } => Some((gpu, tp, weights)),
        super::Config::Api { .. } | super::Config::AsIs => None,
    }
}

fn batch(s: &Search) -> u32 {
    match s.config {
        super::Config::SelfHosted { max_seqs, .. } => max_seqs,
        super::Config::Api { .. } | super::Config::AsIs => 0,
    }
}

/// Whether `a` and `b` share a group.
fn same_group(a: &Search, b: &Search) -> bool {
    group_key(a).is_some() && group_key(a) == group_key(b)
}

/// Whether search `i` is the first live one of its group.
fn firsts(searches: &[Search]) -> Vec<bool> {
    (0..searches.len())
        .map(|i| {
            searches[i].next.is_some()
                && !searches[..i]
                    .iter()
                    .any(|o| o.next.is_some() && same_group(o, &searches[i]))
        })
        .collect()
}

/// About how many events the group search `s` starts will take.
fn group_estimate(s: &Search) -> f64 {
    let Some(mut first) = s.next() else {
        return 0.0;
    };
    first.limits = s.base.limits.clone();
    // The bisection runs around twice the starting count.
    first.serving.replicas = first.serving.replicas.saturating_mul(2).min(s.max);
    RUNS_PER_SEARCH * run_events(&first)
}

/// About how many events `searches` will take: pruned ones nothing, and of
/// a group usually only its smallest batch size (larger ones mostly run
/// identically and are spared).
pub fn estimate(searches: &[Search]) -> f64 {
    searches
        .iter()
        .zip(firsts(searches))
        .filter(|(_, first)| *first)
        .map(|(s, _)| group_estimate(s))
        .sum()
}

/// Share of the groups (at least [`FIRST_PASS_GROUPS`]) the first pass
/// runs: those whose cheapest possible setup costs least.
const FIRST_PASS_SHARE: f64 = 0.25;

/// Fewest groups the first pass runs.
const FIRST_PASS_GROUPS: usize = 8;

/// Give each group of searches its first-pass share of `budget`
/// ([`FIRST_PASS_BUDGET`] of it: half split evenly, half in proportion to
/// its estimated work, fixed before anything runs) — held by its first live search and handed on to the next
/// as each finishes ([`Search::hand_on`]), so spared batch sizes leave theirs
/// to the rest.
///
/// The first pass runs only the quarter of the groups (at least
/// [`FIRST_PASS_GROUPS`], and every API tier) whose cheapest possible setup
/// (price × the roofline's bound on replicas) is lowest; the rest start with
/// nothing and wait for a later pass, which runs them only if they could
/// still beat the cheapest setup the first found ([`second_pass_shares`]).
/// Most large fleets of fast GPUs are never simulated for a small load.
pub fn share(searches: &mut [Search], budget: u64) {
    let firsts = firsts(searches);
    // Each group's least possible cost, from its live searches.
    let least: Vec<f64> = (0..searches.len())
        .map(|i| {
            if !firsts[i] {
                return f64::INFINITY;
            }
            searches
                .iter()
                .filter(|o| o.next.is_some() && same_group_or_self(o, &searches[i]))
                .map(Search::least_usd)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let mut order: Vec<usize> = (0..searches.len()).filter(|&i| firsts[i]).collect();
    order.sort_by(|&a, &b| least[a].total_cmp(&least[b]).then(a.cmp(&b)));
    let keep = ((order.len() as f64 * FIRST_PASS_SHARE).ceil() as usize)
        .max(FIRST_PASS_GROUPS)
        .min(order.len());
    let mut first_pass = vec![false; searches.len()];
    for &i in &order[..keep] {
        first_pass[i] = true;
    }
    for (i, s) in searches.iter().enumerate() {
        if firsts[i] && group_key(s).is_none() {
            first_pass[i] = true; // an API tier: its cost is known only once run
        }
    }
    let groups = first_pass.iter().filter(|f| **f).count().max(1) as f64;
    let estimates: Vec<f64> = searches
        .iter()
        .zip(&first_pass)
        .map(|(s, &f)| if f { group_estimate(s) } else { 0.0 })
        .collect();
    let total: f64 = estimates.iter().sum::<f64>().max(1.0);
    let b = budget as f64 * FIRST_PASS_BUDGET;
    for ((s, first), est) in searches.iter_mut().zip(first_pass).zip(estimates) {
        s.budget = if budget == u64::MAX {
            // No limit: everything runs in the first pass.
            if s.next.is_some() { u64::MAX } else { 0 }
        } else if !first {
            0
        } else {
            (b / 2.0 / groups + b / 2.0 * est / total) as u64
        };
    }
}

/// Whether `a` is `b` or shares its group.
fn same_group_or_self(a: &Search, b: &Search) -> bool {
    std::ptr::eq(a, b) || same_group(a, b)
}

impl Search {
    /// This search is over: what is left of its budget goes to the next
    /// search of its group still to run (the smallest batch size left), the
    /// same one whichever order the caller keeps `rest` in.
    pub fn hand_on(&mut self, rest: &mut [Search]) {
        if self.budget == 0 || self.budget == u64::MAX {
            return;
        }
        let next = rest
            .iter_mut()
            .filter(|o| o.next.is_some() && o.evaluated.is_empty() && same_group(o, self))
            .min_by_key(|o| batch(o));
        if let Some(o) = next {
            o.budget = o.budget.saturating_add(std::mem::take(&mut self.budget));
        }
    }
}

/// The question a plan can answer within `budget`: the scenario as it is,
/// or — when its searches would take more and its arrivals are steady
/// (Poisson or gamma) — the same traffic over a shorter window, with a note
/// saying so. Steady traffic's percentiles need a window with enough
/// requests, not the scenario's whole length.
pub fn within(
    base: &Scenario,
    estimated: f64,
    budget: u64,
    remedies: Remedies,
) -> (Scenario, Option<String>) {
    let steady = matches!(
        base.workload.arrival,
        Arrival::Poisson { .. } | Arrival::Gamma { .. }
    );
    let budget = budget as f64;
    if estimated <= budget || !steady {
        return (base.clone(), None);
    }
    let Some(requests) = upper_requests(base) else {
        return (base.clone(), None);
    };
    let keep = (0.8 * budget / estimated).max(MIN_PLAN_REQUESTS / requests.max(1.0));
    if keep >= 1.0 {
        return (base.clone(), None);
    }
    let mut s = base.clone();
    s.duration_s = (base.duration_s * keep).max(1.0).round();
    let note = format!(
        "planned on the first {:.0} s of the scenario's {:.0} s (the same steady traffic, about {:.0} requests) to answer within the work budget of {:.0}M simulated events; to plan on more of it, {}",
        s.duration_s,
        base.duration_s,
        requests * s.duration_s / base.duration_s,
        budget / 1e6,
        remedies.longer()
    );
    (s, Some(note))
}

impl Search {
    /// The cap [`Self::next`]'s run gets: this search's budget left.
    pub(super) fn cap(&self, s: &Scenario) -> u64 {
        s.limits.max_events.min(self.budget.max(1))
    }

    /// A search whose turn comes with nothing left of its group's budget
    /// ends unsettled without running (a later pass may reopen it). Called
    /// just before each search is driven, on every path.
    pub fn starve_if_broke(&mut self) {
        if self.budget == 0 && self.next.is_some() {
            self.unsettled = Some(if self.evaluated.is_empty() {
                "not run: the work budget ran out before its turn".into()
            } else {
                self.unsettled_why()
            });
            self.resume = self.next.take();
        }
    }

    fn unsettled_why(&self) -> String {
        format!(
            "not settled within its share of the work budget ({:.1}M simulated events){}",
            self.events_used as f64 / 1e6,
            match self.hi_pass {
                Some(r) => format!(": {r} replicas pass, fewer were not settled"),
                None => String::new(),
            }
        )
    }

    /// Account a report against the budget; true when the run was cut by it
    /// (the search then ends unsettled).
    pub(super) fn spend(&mut self, report: &Report, cap: u64) -> bool {
        self.events_used += report.events;
        self.budget = self.budget.saturating_sub(report.events);
        let cut = !report.complete && report.events >= cap && cap < self.base.limits.max_events;
        if cut {
            self.unsettled = Some(self.unsettled_why());
            self.resume = self.next.take();
        }
        cut
    }
}

/// Share of the budget the first pass is given.
const FIRST_PASS_BUDGET: f64 = 0.3;

/// Share of the budget the passes together may use before a later pass
/// starts, once some setup meets the targets: later passes only top up to
/// it (what settles a few more setups is not worth doubling every plan's
/// wait). With no answer yet they may use the whole budget.
const LATER_PASSES_UP_TO: f64 = 0.3;

/// An open group whose least possible cost is below this share of the
/// cheapest setup found could replace the answer, not just refine it: later
/// passes may then use the whole budget.
const FAR_BELOW: f64 = 0.75;

/// Events each later-pass share leaves unspent, for runs that stop a few
/// events past their cap.
const SHARE_MARGIN: u64 = 1_000;

/// Most passes a plan makes over its groups (the first and the ones that
/// share out what is left).
pub const PASSES: usize = 4;

/// What one group's passes so far left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Simulated events its runs took.
    pub events: u64,
    /// The least an unsettled search of it could still cost per month
    /// ([`Search::floor_usd`]), if one is unsettled.
    pub floor_usd: Option<f64>,
    /// Its cheapest setup meeting the targets, per month, if any.
    pub best_usd: Option<f64>,
}

impl Outcome {
    /// The outcome of a group's searches as they stand.
    pub fn of_searches(group: &[Search]) -> Outcome {
        Outcome::of(group.iter().map(|s| {
            (
                s.events_used,
                s.floor_usd(),
                s.best().map(|e| e.usd_per_month),
            )
        }))
    }

    /// The same from a group's finished searches (what a Web Worker sends
    /// back): equal to [`Self::of_searches`] of the searches they came from.
    pub fn of_finished(group: &[super::Finished]) -> Outcome {
        Outcome::of(
            group
                .iter()
                .map(|s| (s.events, s.floor_usd, s.best().map(|e| e.usd_per_month))),
        )
    }

    /// (events, floor, best) of each search, folded.
    fn of(searches: impl IntoIterator<Item = (u64, Option<f64>, Option<f64>)>) -> Outcome {
        let min = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) | (None, x) => x,
        };
        searches.into_iter().fold(
            Outcome {
                events: 0,
                floor_usd: None,
                best_usd: None,
            },
            |o, (events, floor, best)| Outcome {
                events: o.events.saturating_add(events),
                floor_usd: min(o.floor_usd, floor),
                best_usd: min(o.best_usd, best),
            },
        )
    }
}

/// The next pass's share of each group (in the groups' order): the budget
/// the passes so far left, split evenly among the groups still unsettled
/// that could still beat the cheapest setup found (a group whose cheapest
/// possible size costs more cannot change the answer); 0 for the others,
/// and for all when nothing is left or the plan has no limit.
pub fn second_pass_shares(budget: u64, outcomes: &[Outcome]) -> Vec<u64> {
    let used = outcomes
        .iter()
        .fold(0u64, |a, o| a.saturating_add(o.events));
    let cheapest = outcomes
        .iter()
        .filter_map(|o| o.best_usd)
        .fold(f64::INFINITY, f64::min);
    let open = |o: &Outcome| o.floor_usd.is_some_and(|f| f < cheapest);
    let n = outcomes.iter().filter(|o| open(o)).count() as u64;
    // With an answer in hand, later passes only refine it, up to a share of
    // the budget; without one, they may use all of it ...
    // ... unless a group still open could cost much less than that answer:
    // then the answer is not yet worth refining but worth replacing.
    let far_below = outcomes
        .iter()
        .any(|o| open(o) && o.floor_usd.is_some_and(|f| f < cheapest * FAR_BELOW));
    let cap = if cheapest.is_finite() && !far_below {
        (budget as f64 * LATER_PASSES_UP_TO) as u64
    } else {
        budget
    };
    let left = cap.saturating_sub(used);
    // A run stops within a few events past its cap: each share keeps a
    // margin for that, so the passes together stay within the budget. A
    // share too small for even one early check is not worth a run.
    let each = if n == 0 || budget == u64::MAX {
        0
    } else {
        (left / n).saturating_sub(SHARE_MARGIN)
    };
    let each = if each < super::EARLY_CHECK_EVENTS {
        0
    } else {
        each
    };
    if cheapest.is_finite() || budget == u64::MAX {
        return outcomes
            .iter()
            .map(|o| if open(o) { each } else { 0 })
            .collect();
    }
    // Nothing meets the targets yet: an even share too thin to finish a
    // run would leave every group cut again. The groups that could cost
    // least go first, each with at least [`GROWTH`] × what it has used (its
    // runs so far were cut), until what is left runs out; the rest wait.
    let mut order: Vec<usize> = (0..outcomes.len())
        .filter(|&i| open(&outcomes[i]))
        .collect();
    order.sort_by(|&a, &b| {
        let f = |i: usize| outcomes[i].floor_usd.unwrap_or(f64::INFINITY);
        f(a).total_cmp(&f(b)).then(a.cmp(&b))
    });
    let mut shares = vec![0; outcomes.len()];
    let mut rest = left;
    for i in order {
        let want = each.max(outcomes[i].events.saturating_mul(GROWTH));
        let give = want.min(rest.saturating_sub(SHARE_MARGIN));
        if give < super::EARLY_CHECK_EVENTS {
            break;
        }
        shares[i] = give;
        rest -= give + SHARE_MARGIN;
    }
    shares
}

/// With nothing meeting the targets, a later pass gives a group at least
/// this many times the events it has used.
const GROWTH: u64 = 3;

/// Reopen a group's unsettled searches for the next pass: each resumes at
/// the replica count the budget cut, the first (smallest batch size) holding
/// `share`, handed on within the group as in the first pass. Run the group
/// again with [`super::run_group`] (finished searches do nothing). False if
/// there is nothing to reopen.
pub fn reopen(group: &mut [Search], share: u64) -> bool {
    if share == 0 {
        return false;
    }
    let mut first = true;
    let mut any = false;
    for s in group.iter_mut() {
        let Some(r) = s.resume.take() else { continue };
        s.unsettled = None;
        s.next = Some(r);
        s.budget = if first { share } else { 0 };
        first = false;
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(events: u64, floor: Option<f64>, best: Option<f64>) -> Outcome {
        Outcome {
            events,
            floor_usd: floor,
            best_usd: best,
        }
    }

    #[test]
    fn later_passes_refine_an_answer_within_a_share_but_may_replace_it_with_all() {
        let budget = 25_000_000;
        let used = 7_000_000;
        // An answer at $10k; the open group could at best cost $9k: later
        // passes only top up to 30 % of the budget.
        let near = [
            outcome(used, None, Some(10_000.0)),
            outcome(0, Some(9_000.0), None),
        ];
        let shares = second_pass_shares(budget, &near);
        assert_eq!(shares[0], 0, "a settled group gets nothing");
        assert_eq!(shares[1], 7_500_000 - used - SHARE_MARGIN);
        // The open group could cost a third of the answer: it may have all
        // the budget left.
        let far = [
            outcome(used, None, Some(10_000.0)),
            outcome(0, Some(3_000.0), None),
        ];
        assert_eq!(
            second_pass_shares(budget, &far)[1],
            budget - used - SHARE_MARGIN
        );
        // One that cannot beat the answer gets nothing either way.
        let dearer = [
            outcome(used, None, Some(10_000.0)),
            outcome(0, Some(12_000.0), None),
        ];
        assert_eq!(second_pass_shares(budget, &dearer), vec![0, 0]);
    }

    #[test]
    fn with_nothing_passing_a_thin_budget_goes_to_the_cheapest_groups_first() {
        // 40 groups cut at 2M events each, none passing, 17M left: an even
        // share (0.4M) finishes nothing; the cheapest floors get 3 × 2M,
        // the next what is left, the rest wait.
        let budget = 97_000_000;
        let outcomes: Vec<Outcome> = (0..40)
            .map(|i| outcome(2_000_000, Some(1_000.0 * f64::from(40 - i)), None))
            .collect();
        let shares = second_pass_shares(budget, &outcomes);
        let given: Vec<usize> = (0..40).filter(|&i| shares[i] > 0).collect();
        assert_eq!(given, vec![37, 38, 39], "{shares:?}");
        assert_eq!((shares[39], shares[38]), (6_000_000, 6_000_000));
        assert_eq!(shares[37], 17_000_000 - 12_000_000 - 3 * SHARE_MARGIN);
        let total: u64 = shares.iter().sum();
        assert!(total <= budget - 80_000_000, "within what is left");
    }
}
