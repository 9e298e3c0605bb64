//! The planning panel (`panel`), its answers (`view`, `pool_view`,
//! `split_view`) and the planner in Web Workers (`worker`, `workers`).

pub mod panel;
pub mod pool_view;
pub mod split_view;
pub mod view;
pub mod worker;
pub mod workers;
