//! sse-replay's core: record, replay and compare streamed LLM tool calls.
//!
//! The pipeline runs one way: bytes (with chunk boundaries and times) → [`sse`] / [`framing`] →
//! [`dialect`] → [`accumulate`] (and [`naive`] beside it) → [`analysis`] → views ([`report`],
//! [`export`], the GUI in `sse-replay-app`). This crate has no async runtime, no HTTP and no GUI:
//! real HTTP lives in `sse-replay-net`, the desktop app in `sse-replay-app`, the command line in
//! the `sse-replay` binary.

pub mod analyse;
pub mod base;
pub mod out;
pub mod read;
pub mod synth;
pub mod wire;

// Every module keeps its old path at the crate root (`sse_replay_core::framing`, …): the net
// crate, the app, the binary, the tests and the doc links name modules that way, and a module's
// path should not change because its layer was made visible.
pub use analyse::{
    accumulate, analysis, complete, naive, open, pipeline, preview, staged, verdict,
};
pub use base::{fact, findings, text};
pub use out::{compare, export, json_diff, report, scan};
pub use read::{dialect, import, input, probe, recording, redact};
pub use synth::{bundled, corpus, generate, quirk, stub, stub_complete};
pub use wire::{aws_eventstream, chunking, framing, json_array, sse};

/// The repository's top folder (where `recordings/` and `tests/data/` live), for unit tests.
#[cfg(test)]
pub(crate) fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
