//! sse-replay's core: record, replay and compare streamed LLM tool calls.
//!
//! The pipeline runs one way: bytes (with chunk boundaries and times) → [`sse`] / [`framing`] →
//! [`dialect`] → [`accumulate`] (and [`naive`] beside it) → [`analysis`] → views ([`report`],
//! [`export`], the GUI in `app`). Nothing here depends on egui; the GUI lives behind the `gui` feature.

pub mod accumulate;
pub mod analysis;
#[cfg(feature = "gui")]
pub mod app;
pub mod bundled;
pub mod cli;
pub mod compare;
pub mod complete;
pub mod dialect;
pub mod export;
pub mod findings;
pub mod framing;
pub mod generate;
pub mod harness;
pub mod import;
pub mod input;
pub mod json_diff;
pub mod naive;
pub mod net;
pub mod open;
pub mod pipeline;
pub mod preview;
pub mod recording;
pub mod redact;
pub mod report;
pub mod signal;
pub mod sse;
pub mod staged;
pub mod stub;
pub mod stub_complete;
pub mod text;
pub mod verdict;
