//! Every form a streamed tool call arrives in besides the five first dialects' SSE and JSON lines,
//! against real recorded streams (tests/data/{cohere-v2,assistants,responses-items,json-array-chunks}:
//! unmodified public test data with `expected.json` derived by reading the files) and against
//! stub-built and hand-derived Gemini arrays (no real one was found, see tests/data/README.md):
//!
//! - each stream comes out exact, read raw (as `check` reads it, `--stream N` for captures with
//!   several) and after `import` to `.ron`, and at any chunking;
//! - an input nothing is understood in is exit 1 with one line saying what it looks like, and
//!   `check --json` has `"dialect": null`; a terminator alone is not a dialect;
//! - a call of a kind the dialect does not model is never dropped;
//! - `import` reads gzip bodies, test-proxy records and pretty-printed complete responses;
//! - `stub`, `serve`, `record` and `export` work on the new forms.

use crate::common;
use crate::data::{FOLDERS, data, expected, streams};

use std::process::Output;

use serde_json::{Value, json};
use sse_replay_core::recording::Recording;

use common::{BIN, manifest, stderr};

fn run(args: &[&str]) -> Output {
    common::bin_in(&manifest())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"))
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The same through the binary: `check --stream N` exits 0 and `export` prints the expected calls.
#[test]
fn check_and_export_through_the_binary() {
    for folder in FOLDERS {
        for (file, entry) in expected(folder) {
            let path = data(folder).join(&file);
            for (stream, want) in streams(&path, &entry) {
                let p = path.to_string_lossy().into_owned();
                let n = stream.map(|n| n.to_string());
                let mut args = vec!["export", p.as_str()];
                if let Some(n) = &n {
                    args.extend(["--stream", n.as_str()]);
                }
                let o = run(&args);
                let calls = want["calls"].as_array().expect("calls");
                // No calls: the stream ended normally, a warning and exit 0.
                assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
                let got: Value = serde_json::from_str(&stdout(&o)).expect("export prints JSON");
                let got = got.as_array().expect("array");
                assert_eq!(got.len(), calls.len(), "{args:?}");
                for (g, w) in got.iter().zip(calls) {
                    assert_eq!(g["id"], w["id"], "{args:?}");
                    assert_eq!(g["arguments"], w["arguments"], "{args:?}");
                    assert_eq!(g.get("kind"), w.get("kind"), "{args:?}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Nothing understood is never OK
// ---------------------------------------------------------------------------------------------

/// `check` and `check --json` on `body`: exit 1, one line on stderr containing `needle`,
/// `"dialect": null`.
fn nothing_recognised(name: &str, body: &[u8], extra: &[&str], needle: &str, null_dialect: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join(name);
    std::fs::write(&p, body).expect("write");
    let p = p.to_string_lossy().into_owned();
    let mut args = vec!["check", p.as_str()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(code(&o), 1, "{name}: {}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("nothing recognised"), "{name}: {err}");
    assert!(err.contains(needle), "{name}: {err:?} lacks {needle:?}");
    args.push("--json");
    let o = run(&args);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["ok"], false);
    assert_eq!(
        v["dialect"].is_null(),
        null_dialect,
        "{name}: {}",
        v["dialect"]
    );
    let mut args = vec!["export", p.as_str()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(code(&o), 1, "export {name}");
}

#[test]
fn a_terminator_alone_is_not_a_dialect() {
    for (name, body) in [
        ("done.sse", &b"data: [DONE]\n\n"[..]),
        ("event-done.sse", b"event: done\ndata: [DONE]\n\n"),
        (
            "keepalive-done.sse",
            b": keep-alive\n\ndata: [DONE]\n\ndata: [DONE]\n\n",
        ),
    ] {
        nothing_recognised(name, body, &[], "only a terminator", true);
    }
}

#[test]
fn nothing_recognised_says_what_the_bytes_look_like() {
    nothing_recognised(
        "numbers.json",
        b"[1, 2, 3]",
        &[],
        "a JSON array of 3 elements",
        true,
    );
    nothing_recognised(
        "unknown.json",
        br#"[{"kind": "a"}, {"kind": "b"}]"#,
        &[],
        "a JSON array of 2 elements",
        true,
    );
    // A frame as AWS's event stream starts: total length, headers length, prelude CRC, a header.
    let mut aws = Vec::new();
    aws.extend_from_slice(&85u32.to_be_bytes());
    aws.extend_from_slice(&40u32.to_be_bytes());
    aws.extend_from_slice(&[0x12, 0x34, 0x56, 0x78, 11]);
    aws.extend_from_slice(b":event-type\x07\x00\x0acontentBlockDelta");
    nothing_recognised(
        "bedrock.bin",
        &aws,
        &[],
        "binary AWS event stream frames",
        true,
    );
    nothing_recognised(
        "notes.txt",
        b"just some words\nand more\n",
        &[],
        "of other text",
        true,
    );
    // Cohere events forced through another dialect: named, with the telling event.
    let cohere = data("cohere-v2").join("cohere-tool-call.chunks.txt");
    let body = std::fs::read(cohere).expect("read");
    nothing_recognised(
        "cohere.jsonl",
        &body,
        &["--dialect", "openai"],
        "Cohere v2 Chat (`tool-call-delta`)",
        false,
    );
}

/// A custom tool's free-form input is text: a string in every export, never a parse failure, even
/// when it is not JSON; plain function calls gain no `kind`.
#[test]
fn custom_tool_input_is_text_in_every_export() {
    let p = data("responses-items").join("openai-custom-tool.1.chunks.txt");
    let p = p.to_string_lossy().into_owned();
    let o = run(&["export", &p, "--format", "jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let line: Value = serde_json::from_str(stdout(&o).trim()).expect("jsonl");
    assert_eq!(line["kind"], "custom_tool_call");
    assert_eq!(line["arguments"], "SELECT * FROM users WHERE age > 25");
    let o = run(&["export", &p, "--format", "openai"]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(
        v["tool_calls"][0],
        json!({"type": "custom_tool_call", "call_id": "call_custom_sql_001", "name": "write_sql", "input": "SELECT * FROM users WHERE age > 25", "status": "completed"})
    );
    let o = run(&["export", &p, "--format", "anthropic"]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v[0]["input"], "SELECT * FROM users WHERE age > 25");
    let o = run(&["check", &p]);
    assert!(
        stdout(&o).contains("kind custom_tool_call (free-form text input"),
        "{}",
        stdout(&o)
    );
    let o = run(&["export", "recordings/openai-responses-weather.ron"]);
    assert!(!stdout(&o).contains("\"kind\""));
}

// ---------------------------------------------------------------------------------------------
// import
// ---------------------------------------------------------------------------------------------

/// A pretty-printed complete response imports (it used to be "line 1 is not a JSON object") and
/// gives the calls `check` gives.
#[test]
fn import_reads_a_pretty_printed_complete_response_as_check_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    for e in std::fs::read_dir(manifest().join("tests/data/complete")).expect("dir") {
        let p = e.expect("entry").path();
        let ps = p.to_string_lossy().into_owned();
        let out = dir
            .path()
            .join(p.file_name().expect("name"))
            .with_extension("ron");
        let outs = out.to_string_lossy().into_owned();
        let o = run(&["import", &ps, "-o", &outs]);
        assert_eq!(code(&o), 0, "{ps}: {}", stderr(&o));
        let direct = run(&["export", &ps]);
        let imported = run(&["export", &outs]);
        assert_eq!(code(&direct), 0, "{ps}");
        assert_eq!(stdout(&direct), stdout(&imported), "{ps}");
    }
}

// ---------------------------------------------------------------------------------------------
// stub, serve, record
// ---------------------------------------------------------------------------------------------

#[test]
fn stub_builds_every_new_form() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = r#"get_weather={"city":"深圳","days":3}"#;
    for (args, dialect, framing) in [
        (vec!["--dialect", "cohere"], "cohere", "sse"),
        (
            vec!["--dialect", "cohere", "--framing", "jsonl"],
            "cohere",
            "jsonl",
        ),
        (
            vec!["--dialect", "gemini", "--framing", "json-array"],
            "gemini",
            "json-array",
        ),
        (
            vec![
                "--dialect",
                "gemini",
                "--framing",
                "array",
                "--quirk",
                "partial-args",
            ],
            "gemini",
            "json-array",
        ),
        (
            vec!["--dialect", "openai-assistants"],
            "openai-assistants",
            "sse",
        ),
        (vec!["--dialect", "ai-sdk"], "ai-sdk-ui", "sse"),
        (
            vec!["--dialect", "ai-sdk", "--framing", "json-array"],
            "ai-sdk-ui",
            "json-array",
        ),
        (
            vec!["--dialect", "anthropic", "--framing", "jsonl"],
            "anthropic-messages",
            "jsonl",
        ),
        (vec!["--framing", "json-array"], "openai-chat", "json-array"),
        (
            vec!["--dialect", "cohere", "--quirk", "args-in-start"],
            "cohere",
            "sse",
        ),
    ] {
        let out = dir.path().join("s.ron");
        let outs = out.to_string_lossy().into_owned();
        let mut a = vec![
            "stub", "--call", call, "--call", "noop={}", "--force", "-o", &outs,
        ];
        a.extend(args.iter().copied());
        let o = run(&a);
        assert_eq!(code(&o), 0, "{a:?}: {}", stderr(&o));
        let o = run(&["check", "--json", &outs]);
        assert_eq!(code(&o), 0, "{a:?}: {}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
        assert_eq!(
            (v["dialect"].as_str(), v["framing"].as_str()),
            (Some(dialect), Some(framing)),
            "{a:?}"
        );
        assert_eq!(v["calls"].as_array().map(Vec::len), Some(2), "{a:?}");
        assert!(
            v["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .all(|f| f["kind"] != "arguments-mismatch"),
            "{a:?}"
        );
        for cmd in ["events", "preview"] {
            let o = run(&[cmd, &outs]);
            assert_eq!(code(&o), 0, "{cmd} {a:?}: {}", stderr(&o));
            assert!(!stdout(&o).is_empty(), "{cmd} {a:?}");
        }
        for format in ["json", "jsonl", "openai", "anthropic"] {
            let o = run(&["export", &outs, "--format", format]);
            assert_eq!(code(&o), 0, "export {format} {a:?}: {}", stderr(&o));
        }
    }
    let o = run(&["stub", "--call", call, "--quirk", "args-in-start"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("only in cohere"), "{}", stderr(&o));
    let o = run(&[
        "stub",
        "--call",
        call,
        "--dialect",
        "ai-sdk",
        "--non-streaming",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}

/// `serve` gives a JSON array `application/json` and Cohere SSE `text/event-stream`, and
/// `record` keeps the bytes exactly.
#[test]
fn serve_and_record_keep_the_new_forms() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (file, content_type) in [
        ("gemini-array-weather.ron", "application/json"),
        ("cohere-weather.ron", "text/event-stream"),
    ] {
        let path = manifest().join("recordings").join(file);
        let original = Recording::load(&path).expect("load");
        let ps = path.to_string_lossy().into_owned();
        let (_server, url, _) = common::start_server(&[
            "serve",
            &ps,
            "--addr",
            "127.0.0.1:0",
            "--instant",
            "--rechunk",
            "7",
        ]);
        let out = dir.path().join(file);
        let outs = out.to_string_lossy().into_owned();
        let o = run(&[
            "record",
            &format!("{url}v1beta/models/x:streamGenerateContent"),
            "-d",
            "{}",
            "-o",
            &outs,
        ]);
        assert_eq!(code(&o), 0, "{file}: {}", stderr(&o));
        let got = Recording::load(&out).expect("recorded");
        assert_eq!(got.body(), original.body(), "{file}: the same bytes");
        let ct = got
            .response
            .as_ref()
            .and_then(|r| {
                r.headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            })
            .map(|(_, v)| v.clone());
        assert_eq!(ct.as_deref(), Some(content_type), "{file}");
        let o = run(&["check", &outs]);
        assert_eq!(code(&o), 0, "{file}: {}", stderr(&o));
    }
}
