//! Helpers shared by the core's integration tests.

use std::path::PathBuf;

use sse_replay_core::accumulate::{Call, Parsed};
use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::pipeline::Options;

/// The repository's top folder (where `recordings/` and `tests/data/` live).
pub fn repo_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

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
                c.raw_arguments.clone(),
                c.parsed.clone(),
                c.complete,
            )
        })
        .collect()
}

/// The analysis of a raw body (no read boundaries, no timing), the dialect forced when given.
pub fn analyse_raw(body: &[u8], dialect: Option<DialectKind>) -> Analysis {
    let rec = sse_replay_core::input::raw_to_recording(body, "inline");
    let source = SourceInfo {
        name: "inline".into(),
        kind: "raw body".into(),
        timing_known: false,
    };
    let options = Options {
        dialect,
        framing: None,
        detail: true,
    };
    Analysis::from_recording(&rec, source, options)
}
