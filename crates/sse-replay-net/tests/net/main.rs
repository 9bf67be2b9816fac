//! The integration tests of sse-replay-net, in one test binary: `cargo test -p sse-replay-net
//! --test net`.

mod sessions;
mod suite_api;
