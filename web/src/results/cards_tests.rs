//! The cards' numbers, notes and differences.
use super::*;

#[test]
fn differences_are_judged_the_way_each_number_improves() {
    let judge = |id: &str, a: f64, b: f64| {
        let c = cards().into_iter().find(|c| c.id == id).expect("card");
        judged(c.better(), c.unit(), a, b)
    };
    assert_eq!(judge("ttft-p99", 300.0, 200.0), Some("better"));
    assert_eq!(judge("throughput", 300.0, 200.0), Some("worse"));
    assert_eq!(judge("usd-per-month", 10.0, 20.0), Some("worse"));
    assert_eq!(judge("goodput", 50.0, 90.0), Some("better"));
    assert_eq!(judge("failed", 5.0, 1.0), Some("better"));
    assert_eq!(judge("throughput", 7.0, 7.0), None);
}

#[test]
fn differences_read_in_the_cards_own_units() {
    assert_eq!(
        delta_text(Unit::Ms, 1000.0, 2400.0),
        "+1.4 s (+140.0 %) vs A"
    );
    assert_eq!(
        delta_text(Unit::Ms, 1000.0, 31_000.0),
        "+30.0 s (+3000.0 %) vs A"
    );
    assert_eq!(delta_text(Unit::Ms, 320.0, 300.0), "-20.0 ms (-6.2 %) vs A");
    assert_eq!(delta_text(Unit::Percent, 50.0, 62.3), "+12.3 points vs A");
    assert_eq!(
        delta_text(Unit::Usd, 22_500.0, 31_500.0),
        "+$9,000 (+40.0 %) vs A"
    );
    assert_eq!(
        delta_text(Unit::TokS, 1500.0, 4100.0),
        "+2,600 tok/s (+173.3 %) vs A"
    );
    assert_eq!(delta_text(Unit::Count, 0.0, 12.0), "+12 vs A");
    assert_eq!(delta_text(Unit::Ms, 5.0, 5.0), "same as A");
    // A difference the unit cannot show is neither better nor worse.
    assert_eq!(
        delta_text(Unit::Percent, 100.0, 99.98),
        "about the same as A"
    );
    assert_eq!(
        judged(Some(Better::Higher), Unit::Percent, 100.0, 99.98),
        None
    );
    assert_eq!(
        judged(Some(Better::Higher), Unit::Percent, 100.0, 99.9),
        Some("worse")
    );
    assert_eq!(
        judged(Some(Better::Lower), Unit::Ms, 5.0, 4.0),
        Some("better")
    );
    let units: Vec<(&str, Unit)> = cards().iter().map(|c| (c.id, c.unit())).collect();
    assert!(units.contains(&("goodput", Unit::Percent)));
    assert!(units.contains(&("usd-per-month", Unit::Usd)));
    assert!(units.contains(&("throughput", Unit::TokS)));
}
