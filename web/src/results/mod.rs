//! What a run says: the summary cards (and a card per pool), the by-pool
//! table, the by-tier bill, "How sure" and the story panel.

pub mod card_units;
pub mod cards;
pub mod pool_cards;
pub mod pool_view;
pub mod ranges_view;
pub mod story_view;
pub mod tier_view;
