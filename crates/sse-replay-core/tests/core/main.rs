//! The core's integration tests in one test binary: the SSE conformance cases, the recorded SDK
//! fixtures, the recorded Bedrock streams, the pipeline end to end and the layer rule. They need
//! neither the network crate nor the app:
//! `cargo test -p sse-replay-core` runs them alone.

mod common;

mod bedrock;
mod conformance;
mod fixtures;
mod layers;
mod linear;
mod pipeline;
