//! Helpers shared by the core's integration tests (the data helpers both test binaries use are
//! in `tests/support/data.rs`).

pub use crate::data::{analyse_raw, repo_root};

use sse_replay_core::accumulate::{Call, Parsed};

/// `body` cut at `cuts`, as reads at time 0 (what `run_chunks` takes).
pub fn reads<'a>(body: &'a [u8], cuts: &[usize]) -> Vec<(&'a [u8], u64)> {
    sse_replay_core::chunking::split(body, cuts)
        .into_iter()
        .map(|p| (p, 0u64))
        .collect()
}

/// Calls as compared across chunkings: id, name, raw arguments, parse result, completeness.
pub fn call_summary(calls: &[Call]) -> Vec<(Option<String>, String, String, Parsed, bool)> {
    calls
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                c.name.clone(),
                c.raw_arguments.to_string(),
                c.parsed.clone(),
                c.complete,
            )
        })
        .collect()
}
