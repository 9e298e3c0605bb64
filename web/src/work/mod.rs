//! The work behind the page: the run on screen in slices (`runner`), and
//! background jobs (`jobs`, `soon`), each stopped by one handle that the
//! work it starts shares.

pub mod jobs;
pub mod remote;
pub mod runner;
pub mod soon;
