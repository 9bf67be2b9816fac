//! Test data helpers shared by the two integration-test binaries: the core's
//! (`crates/sse-replay-core/tests/core/`) and the root's (`tests/it/`). Each includes this file
//! with `#[path]`, so the real-data folders, their `expected.json` and the bundled recordings are
//! read by one piece of code. It needs only the core crate.

// Each binary uses some of these helpers; what one leaves unused is not dead code.
#![allow(dead_code, reason = "shared by two test binaries, each using a part")]

use std::path::{Path, PathBuf};

use serde_json::Value;
use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::pipeline::Options;
use sse_replay_core::recording::{self, Recording};

/// The repository's top folder (where `recordings/` and `tests/data/` live), from either crate.
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|p| p.join("Cargo.lock").is_file())
        .unwrap_or(here)
        .to_path_buf()
}

/// The folders of real data checked against their `expected.json` in every form.
pub const FOLDERS: [&str; 4] = [
    "cohere-v2",
    "assistants",
    "responses-items",
    "json-array-chunks",
];

/// `tests/data/<folder>`.
pub fn data(folder: &str) -> PathBuf {
    repo_root().join("tests/data").join(folder)
}

/// `expected.json`'s `files` map of a folder.
pub fn expected(folder: &str) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(data(folder).join("expected.json")).expect("expected.json");
    let doc: Value = serde_json::from_str(&text).expect("expected.json is JSON");
    doc["files"].as_object().cloned().expect("files")
}

/// Import a file with the default options, as `sse-replay import` does.
pub fn import_path(path: &Path) -> Result<Vec<Recording>, sse_replay_core::import::ImportError> {
    let probe = sse_replay_core::probe::open(path, Default::default())
        .map_err(|e| sse_replay_core::import::open_error(path, e))?;
    sse_replay_core::import::import(probe).map(|i| i.recordings)
}

/// The stream number (1-based, as `--stream` takes it) of the interaction or entry `index`
/// (0-based, as expected.json counts them) of a capture: from the titles the importer gives.
pub fn stream_number(path: &Path, index: u64) -> usize {
    let recs = import_path(path).expect("imports");
    recs.iter()
        .position(|r| {
            ["interaction ", "entry "].iter().any(|w| {
                r.meta
                    .title
                    .split(w)
                    .nth(1)
                    .and_then(|t| t.split(' ').next())
                    .and_then(|n| n.parse::<u64>().ok())
                    == Some(index + 1)
            })
        })
        .map(|i| i + 1)
        .unwrap_or_else(|| {
            panic!(
                "{}: no stream for interaction/entry {index}",
                path.display()
            )
        })
}

/// Each stream of a file that expected.json describes with calls: `None` for a plain body.
pub fn streams<'a>(path: &Path, entry: &'a Value) -> Vec<(Option<usize>, &'a Value)> {
    match entry.get("streams").and_then(Value::as_array) {
        None => vec![(None, entry)],
        Some(list) => list
            .iter()
            .filter(|s| s.get("calls").is_some())
            .map(|s| {
                let index = s
                    .get("interaction")
                    .or_else(|| s.get("entry"))
                    .and_then(Value::as_u64)
                    .expect("interaction or entry");
                (Some(stream_number(path, index)), s)
            })
            .collect(),
    }
}

/// Every `recordings/*.ron`, by file stem, sorted.
pub fn bundled() -> Vec<(String, Recording)> {
    let dir = repo_root().join("recordings");
    let mut v: Vec<(String, Recording)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let rec = recording::load(&p).unwrap_or_else(|e| panic!("{e}"));
            (name, rec)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
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
