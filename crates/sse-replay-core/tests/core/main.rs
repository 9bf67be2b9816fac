//! The core's integration tests in one test binary: the SSE conformance cases, the recorded SDK
//! fixtures, the recorded Bedrock streams, the pipeline end to end, the dialect and quirk tables,
//! the real forms, imports, previews and the layer rule. They need neither the network crate nor
//! the app, nor the binary: `cargo test -p sse-replay-core` runs them alone. A test of the root
//! `tests/it/` that uses only this crate belongs here.

mod common;
/// The data helpers shared with the root's test binary.
#[path = "../../../../tests/support/data.rs"]
mod data;

mod bedrock;
mod conformance;
mod dialects;
mod fixtures;
mod forms;
mod hostile;
mod layers;
mod linear;
mod naive;
mod open;
mod pipeline;
mod preview;
mod scan;
