//! Print one replica's measured capacity for a preset (and edits).
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut s = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == args[0])
        .expect("preset")
        .scenario;
    for kv in &args[1..] {
        let (k, v) = kv.split_once('=').expect("NAME=VALUE");
        sim_core::params::apply(&mut s, k, v).expect("edit");
    }
    let c = sim_core::compare::replica_capacity_per_s(&s).expect("capacity");
    println!(
        "{c:.3} tasks/s per replica; {:?}",
        sim_core::compare::load_check(&s, c)
    );
}
