//! The charts on canvases: the plotters backend, the chart views (a click
//! on a dot answered where a chart asks), playback and the GPU timeline.

pub mod canvas_backend;
pub mod playback;
pub mod views;
