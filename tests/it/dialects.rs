//! The bundled recordings and the imports through the binary: `check --json` key facts and text
//! snapshots of `check` and `export` (insta snapshots `tests/snapshots/<name>.check.snap` /
//! `.export.snap`, reviewed with `cargo insta review`), and `import` on small hand-written HAR,
//! cassette and JSON-lines files (`tests/data/import/`), a malformed one failing clearly with
//! nothing written. The table-driven dialect and quirk cases, the chunking property and the
//! library-level imports are the core's tests (`crates/sse-replay-core/tests/core/dialects.rs`).

use crate::common;
use crate::data::bundled;

use std::path::PathBuf;

use serde_json::Value;
use sse_replay_core::recording;

use common::{assert_snapshots, bin, manifest};

// ---------------------------------------------------------------------------------------------
// Bundled recordings
// ---------------------------------------------------------------------------------------------

fn check_json(name: &str) -> (Value, i32) {
    let out = bin()
        .args(["check", "--json", &format!("recordings/{name}.ron")])
        .output()
        .expect("run sse-replay");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
    (v, out.status.code().unwrap_or(-1))
}

/// Key facts of `check --json` on bundled recordings of the dialects and quirks: dialect, exit code, ending,
/// calls, and the finding that makes each one interesting.
#[test]
fn bundled_recordings_check_json() {
    /// name, dialect, exit code, ending status, call names, a finding that must be there
    type Row<'a> = (&'a str, &'a str, i32, &'a str, &'a [&'a str], &'a str);
    let table: &[Row<'_>] = &[
        // name, dialect, exit code, ending status, call names, a finding that must be there
        (
            "anthropic-weather",
            "anthropic-messages",
            0,
            "finished",
            &["get_weather", "get_time"],
            "ping-event",
        ),
        (
            "openai-responses-weather",
            "openai-responses",
            0,
            "finished",
            &["get_weather", "get_time"],
            "",
        ),
        (
            "gemini-weather",
            "gemini",
            0,
            "finished",
            &["get_weather", "get_time"],
            "crlf-line-endings",
        ),
        (
            "gemini-vertex-partial-args",
            "gemini",
            0,
            "finished",
            &["get_weather", "get_time"],
            "partial-args",
        ),
        (
            "ollama-weather",
            "ollama",
            0,
            "finished",
            &["get_weather", "get_time"],
            "no-call-id",
        ),
        (
            "openai-chat-weather",
            "openai-chat",
            0,
            "finished",
            &["get_weather", "get_time"],
            "",
        ),
        (
            "quirk-repeated-name",
            "openai-chat",
            0,
            "finished",
            &["get_weather", "get_time"],
            "repeated-name",
        ),
        (
            "quirk-index-from-1",
            "openai-chat",
            0,
            "finished",
            &["get_weather", "get_time"],
            "index-not-from-zero",
        ),
        (
            "quirk-all-at-index-0",
            "openai-chat",
            0,
            "finished",
            &["get_weather", "get_time"],
            "reused-index-new-call",
        ),
        (
            "quirk-interleaved",
            "openai-chat",
            0,
            "finished",
            &["get_weather", "get_time"],
            "interleaved-calls",
        ),
        (
            "quirk-truncated",
            "openai-chat",
            1,
            "ended-without-finish",
            &["get_weather", "get_time"],
            "incomplete-call",
        ),
        (
            "quirk-provider-error",
            "openai-chat",
            1,
            "provider-error",
            &["get_weather"],
            "provider-error",
        ),
        (
            "quirk-object-arguments",
            "openai-chat",
            0,
            "finished",
            &["get_weather", "get_time"],
            "object-arguments",
        ),
        (
            "quirk-empty-id-continuations",
            "openai-chat",
            0,
            "finished",
            &["get_weather", "get_time"],
            "empty-field-continuation",
        ),
        (
            "quirk-cumulative",
            "openai-chat",
            1,
            "finished",
            &["get_weather", "get_time"],
            "cumulative-arguments",
        ),
        (
            "bedrock-converse-weather",
            "bedrock-converse",
            0,
            "finished",
            &["get_weather", "get_time"],
            "",
        ),
        (
            "bedrock-converse-no-arguments",
            "bedrock-converse",
            0,
            "finished",
            &["get_weather", "get_time"],
            "empty-arguments",
        ),
        (
            "quirk-bedrock-truncated",
            "bedrock-converse",
            1,
            "ended-without-finish",
            &["get_weather", "get_time"],
            "incomplete-call",
        ),
        (
            "quirk-bedrock-exception",
            "bedrock-converse",
            1,
            "provider-error",
            &["get_weather"],
            "provider-error",
        ),
        (
            "quirk-bedrock-crc-error",
            "bedrock-converse",
            1,
            "finished",
            &["get_weather", "get_time"],
            "frame-corrupt",
        ),
        (
            "quirk-anthropic-truncated",
            "anthropic-messages",
            1,
            "ended-without-finish",
            &["get_weather", "get_time"],
            "incomplete-call",
        ),
        (
            "quirk-anthropic-error",
            "anthropic-messages",
            1,
            "provider-error",
            &["get_weather"],
            "provider-error",
        ),
        (
            "bedrock-invoke-model-weather",
            "anthropic-messages",
            0,
            "finished",
            &["get_weather", "get_time"],
            "ping-event",
        ),
        (
            "quirk-bedrock-invoke-model-truncated",
            "anthropic-messages",
            1,
            "ended-without-finish",
            &["get_weather", "get_time"],
            "incomplete-call",
        ),
        (
            "quirk-bedrock-invoke-model-exception",
            "anthropic-messages",
            1,
            "provider-error",
            &["get_weather"],
            "provider-error",
        ),
    ];
    for &(name, dialect, code, ending, names, finding) in table {
        let (v, rc) = check_json(name);
        assert_eq!(rc, code, "{name}: exit code");
        assert_eq!(v["dialect"], dialect, "{name}");
        assert_eq!(v["ok"], code == 0, "{name}");
        assert_eq!(v["ending"]["status"], ending, "{name}");
        let got: Vec<&str> = v["calls"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(got, names, "{name}: calls");
        let kinds: Vec<&str> = v["findings"]
            .as_array()
            .map(|a| a.iter().filter_map(|f| f["kind"].as_str()).collect())
            .unwrap_or_default();
        if !finding.is_empty() {
            assert!(
                kinds.contains(&finding),
                "{name}: {finding} missing from {kinds:?}"
            );
        }
        if code == 0 {
            assert!(
                !kinds.contains(&"arguments-mismatch"),
                "{name}: the stream must match its ground truth"
            );
        }
        // Gemini and Ollama calls carry no id: export writes null.
        if matches!(dialect, "gemini" | "ollama") {
            assert!(
                v["calls"]
                    .as_array()
                    .is_some_and(|a| a.iter().all(|c| c["id"].is_null())),
                "{name}: ids null"
            );
        }
    }
    // Every recording in the directory has ground truth, a title and notes.
    for (name, rec) in bundled() {
        assert!(!rec.truth.is_empty(), "{name}: ground truth");
        assert!(!rec.meta.title.is_empty(), "{name}: title");
        assert!(!rec.meta.notes.is_empty(), "{name}: notes");
    }
}

#[test]
fn bundled_recordings_snapshots() {
    let mut snapshots = Vec::new();
    for (name, _) in bundled() {
        let path = format!("recordings/{name}.ron");
        let check = bin().args(["check", &path]).output().expect("run check");
        let export = bin().args(["export", &path]).output().expect("run export");
        let check_text = String::from_utf8_lossy(&check.stdout);
        let export_text = String::from_utf8_lossy(&export.stdout);
        let export_all = format!(
            "{export_text}--- exit {} ---\n{}",
            export.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&export.stderr)
        );
        snapshots.push((format!("{name}.check"), check_text.into_owned()));
        snapshots.push((format!("{name}.export"), export_all));
    }
    assert_snapshots(snapshots);
}

// ---------------------------------------------------------------------------------------------
// Imports
// ---------------------------------------------------------------------------------------------

fn data_file(name: &str) -> PathBuf {
    manifest().join("tests/data/import").join(name)
}

#[test]
fn import_cli_writes_one_recording_per_stream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("cap.ron");
    let o = bin()
        .args(["import", "tests/data/import/two-streams.har", "-o"])
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["cap-1.ron", "cap-2.ron"]);
    let rec = recording::load(&dir.path().join("cap-2.ron")).expect("load");
    assert!(!rec.meta.timing_known);
    let check = bin()
        .arg("check")
        .arg(dir.path().join("cap-1.ron"))
        .output()
        .expect("check");
    assert_eq!(check.status.code(), Some(0));

    let single = dir.path().join("one.ron");
    let o = bin()
        .args(["import", "tests/data/import/fixture.jsonl", "-o"])
        .arg(&single)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
    assert!(single.exists());
}

#[test]
fn import_cli_malformed_exits_2_and_writes_nothing() {
    for file in ["malformed.har", "malformed.yaml", "malformed.jsonl"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("x.ron");
        let o = bin()
            .arg("import")
            .arg(data_file(file))
            .arg("-o")
            .arg(&out)
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(2), "{file}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            stderr.lines().count(),
            1,
            "{file}: one clear line: {stderr}"
        );
        assert!(stderr.starts_with("sse-replay: "), "{stderr}");
        assert!(stderr.trim_end().ends_with(file), "{stderr}");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("dir").count(),
            0,
            "{file}: nothing written"
        );
    }
}
