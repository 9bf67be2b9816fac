//! sse-replay's core: record, replay and compare streamed LLM tool calls.
//!
//! The pipeline runs one way: bytes (with chunk boundaries and times) → [`sse`] / [`framing`] →
//! [`dialect`] → [`accumulate`] (and [`naive`] beside it) → [`analysis`] → views ([`report`],
//! [`export`], the GUI in `sse-replay-app`). This crate has no async runtime, no HTTP and no GUI:
//! real HTTP lives in `sse-replay-net`, the desktop app in `sse-replay-app`, the command line in
//! the `sse-replay` binary.

pub mod accumulate;
pub mod analysis;
pub mod aws_eventstream;
pub mod bundled;
pub mod chunking;
pub mod compare;
pub mod complete;
pub mod content;
pub mod corpus;
pub mod dialect;
pub mod export;
pub mod fact;
pub mod findings;
pub mod framing;
pub mod generate;
pub mod import;
pub mod input;
pub mod json_array;
pub mod json_diff;
pub mod naive;
pub mod open;
pub mod pipeline;
pub mod preview;
pub mod probe;
pub mod quirk;
pub mod recording;
pub mod redact;
pub mod report;
pub mod scan;
pub mod sse;
pub mod staged;
pub mod stub;
pub mod stub_complete;
pub mod text;
pub mod verdict;

/// The repository's top folder (where `recordings/` and `tests/data/` live), for unit tests.
#[cfg(test)]
pub(crate) fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
