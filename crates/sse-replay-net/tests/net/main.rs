//! The integration tests of sse-replay-net, in one test binary: `cargo test -p sse-replay-net
//! --test net`.

mod suite_api;
