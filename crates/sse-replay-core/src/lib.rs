//! sse-replay's core: record, replay and compare streamed LLM tool calls.
//!
//! The pipeline runs one way: bytes (with chunk boundaries and times) → [`sse`] / [`framing`] →
//! [`dialect`] → [`accumulate`] (and [`naive`] beside it) → [`analysis`] → views ([`report`],
//! [`export`], the GUI in `sse-replay-app`). This crate has no async runtime, no HTTP and no GUI:
//! real HTTP lives in `sse-replay-net`, the desktop app in `sse-replay-app`, the command line in
//! the `sse-replay` binary.
//!
//! # Layers
//!
//! The modules sit in six folders, each using only the ones before it (outside tests, where a
//! lower layer may build its inputs with a stub; `tests/core/layers.rs` checks it). Every module
//! is also re-exported at the crate root under its old name, so `sse_replay_core::framing` and
//! `sse_replay_core::wire::framing` are the same module.
//!
//! - [`base`]: the vocabulary: the one text escaper ([`text`]), every finding kind
//!   ([`findings`]), the facts a dialect hands on ([`fact`]: fragments, call keys, positions), and
//!   the limits of a read, one type each ([`limits`]).
//! - [`wire`]: bytes to events. The WHATWG event-stream algorithm ([`sse`]), binary AWS frames
//!   ([`aws_eventstream`]), JSON arrays streamed element by element ([`json_array`]), the one
//!   [`framing::Framer`] over them and JSON lines, and cutting a body into reads ([`chunking`]).
//! - [`read`]: inputs to recordings and facts. The recording model and its safe writer
//!   ([`recording`]), secrets ([`redact`]), the byte readers and their limits ([`input`]), the
//!   one decision of what an input is ([`probe`]), capture formats ([`import`]) and the dialects
//!   ([`dialect`]) that route events to calls.
//! - [`analyse`]: facts to calls and a verdict. The accumulator ([`accumulate`]), the push
//!   [`pipeline`], the naive strategies ([`naive`]), the immutable [`analysis::Analysis`] with its
//!   [`preview`]s, complete responses ([`complete`]), the one [`verdict`], the probe's readers
//!   ([`open`]) and the app's two stages ([`staged`]).
//! - [`synth`]: streams made on purpose. Stubs with their ground truth ([`stub`],
//!   [`stub_complete`]), the quirk table ([`quirk`]), the bundled catalog ([`bundled`]), the
//!   generated corpus ([`corpus`]) and the large benchmark stream ([`generate`]).
//! - [`out`]: what the commands show and write. The `check` report ([`report`]), export formats
//!   and `check --json` ([`export`]), the scan tables ([`scan`]) and two recordings side by side
//!   ([`compare`], [`json_diff`]).
//!
//! # The accumulator in three lines
//!
//! A dialect turns events into [`fact::Fragment`]s; the accumulator appends them per call, and
//! parses each call's arguments once when the stream finishes:
//!
//! ```
//! use sse_replay_core::accumulate::Accumulator;
//! use sse_replay_core::fact::{ArgsPiece, CallKey, Fragment, Pos, Raw};
//!
//! // The first fragment names the call; the arguments then arrive in pieces.
//! let piece = |id: Raw<String>, name: Raw<String>, args: &str| Fragment {
//!     key: CallKey::Block(1),
//!     stated_index: Some(1),
//!     id,
//!     name,
//!     args: Raw::Value(ArgsPiece::Text(args.to_owned())),
//! };
//! let fragments = [
//!     piece(Raw::Value("toolu_1".into()), Raw::Value("get_weather".into()), ""),
//!     piece(Raw::Absent, Raw::Absent, r#"{"city": "Pa"#),
//!     piece(Raw::Absent, Raw::Absent, r#"ris"}"#),
//! ];
//!
//! let mut acc = Accumulator::new(false);
//! for f in fragments {
//!     acc.push(f, Pos::default());
//! }
//! let (calls, _records) = acc.finish(true);
//!
//! assert_eq!(calls.len(), 1);
//! assert_eq!(calls[0].id.as_deref(), Some("toolu_1"));
//! assert_eq!(calls[0].name, "get_weather");
//! assert_eq!(calls[0].value(), Some(&serde_json::json!({"city": "Paris"})));
//! assert!(calls[0].complete);
//! ```

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
pub use base::{fact, findings, limits, text};
pub use out::{compare, export, json_diff, report, scan};
pub use read::{dialect, import, input, probe, recording, redact};
pub use synth::{bundled, corpus, generate, quirk, stub, stub_complete};
pub use wire::{aws_eventstream, chunking, framing, json_array, sse};

/// The repository's top folder (where `recordings/` and `tests/data/` live), for unit tests.
#[cfg(test)]
pub(crate) fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
