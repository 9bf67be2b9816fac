//! The integration tests of the `sse-replay` binary and of the libraries through it, in one test
//! binary (as ripgrep keeps its `tests/`): one link instead of one per file. `cargo test --test it
//! cli::` runs one module's tests.

mod common;
/// The data helpers shared with the core's test binary.
#[path = "../support/data.rs"]
mod data;

mod bedrock;
mod cli;
mod complete;
mod dialects;
mod docs;
mod files;
mod forms;
mod harness;
mod hostile;
mod net;
mod net_hardening;
mod open;
mod preview;
mod proxy;
mod scan;
mod secrets;
mod verdict;
mod zero_calls;
