//! The core's integration tests in one test binary: the SSE conformance cases, the recorded SDK
//! fixtures, the recorded Bedrock streams and the pipeline end to end. They need neither the network crate nor the app:
//! `cargo test -p sse-replay-core` runs them alone.

mod common;

mod bedrock;
mod conformance;
mod fixtures;
mod linear;
mod pipeline;
