//! One truth about capacity: the overload check (the page's banner, its
//! capacity and replicas-needed cards) agrees with the run beside it. At any
//! load where the run's queue keeps growing, the check says the fleet does
//! not suffice; where it says the fleet suffices, the queue stays bounded.

use sim_core::compare::{load_check, replica_capacity_per_s};
use sim_core::report::Report;
use sim_core::scenario::Arrival;

/// Whether the run's queue grows through its arrival window: its mean depth
/// over the last quarter is above twice that over the second quarter and
/// above twenty requests.
fn queue_grows(r: &Report, arrival_s: f64) -> bool {
    let s = &r.series;
    let mean = |from: f64, to: f64| {
        let xs: Vec<f64> = s
            .t_s
            .iter()
            .zip(&s.queue_depth)
            .filter(|(t, _)| **t > from && **t <= to)
            .map(|(_, q)| *q)
            .collect();
        xs.iter().sum::<f64>() / xs.len().max(1) as f64
    };
    let (second, last) = (
        mean(0.25 * arrival_s, 0.5 * arrival_s),
        mean(0.75 * arrival_s, arrival_s),
    );
    last > 2.0 * second && last > 20.0
}

#[test]
fn no_capacity_card_claims_the_fleet_suffices_while_its_queue_grows() {
    for (id, rates) in [
        (
            "chatbot-h100",
            vec![16.0, 24.0, 27.0, 29.0, 30.0, 32.0, 34.0, 38.0],
        ),
        ("self-hosted-tuning", vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]),
    ] {
        let base = sim_core::presets::all()
            .into_iter()
            .find(|p| p.id == id)
            .expect("preset")
            .scenario;
        let capacity = replica_capacity_per_s(&base).expect("capacity");
        let (mut grew, mut held) = (0, 0);
        for rate in rates {
            let mut s = base.clone();
            s.workload.arrival = Arrival::Poisson { rate_per_s: rate };
            let r = sim_core::run_scenario(s.clone()).expect("valid");
            let check = load_check(&s, capacity).expect("a fleet scenario");
            if queue_grows(&r, s.duration_s) {
                grew += 1;
                assert!(
                    check.overloaded && check.replicas_needed > s.serving.replicas,
                    "{id} at {rate} req/s: the queue grows, yet the check says {check:?}"
                );
            } else {
                held += 1;
            }
            if !check.overloaded {
                assert!(
                    !queue_grows(&r, s.duration_s),
                    "{id} at {rate} req/s: said to suffice while its queue grows"
                );
            }
        }
        assert!(
            grew > 0 && held > 0,
            "{id}: both sides of the boundary tried"
        );
    }
}
