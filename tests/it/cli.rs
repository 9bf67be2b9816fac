//! The binary, end to end: `check`, `export`, `events` and `stub` — exit codes (0 ok, 1 failed
//! stream, 2 unreadable input or bad usage), JSON shapes, one line on standard error when
//! something is wrong, hostile inputs (generated here, never committed) and text snapshots of
//! `check` output.
//!
//! Snapshots are insta snapshots, `tests/snapshots/check-<name>.snap`: review a change with
//! `cargo insta test --review --test cli` (or accept it with `INSTA_UPDATE=always`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use common::{code, manifest, run, run_in, stderr, stdout};

/// Exactly one line on standard error, no panic, and the exit code is one of `codes`.
fn assert_one_line(o: &Output, codes: &[i32], what: &str) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "{what}: panicked: {err}");
    assert!(
        codes.contains(&code(o)),
        "{what}: exit {} (want {codes:?}); stderr {err}",
        code(o)
    );
    assert_eq!(
        err.lines().count(),
        1,
        "{what}: stderr must be one line: {err:?}"
    );
    assert!(
        err.ends_with('\n') && err.starts_with("sse-replay: "),
        "{what}: {err:?}"
    );
}

const SEED: &str = "recordings/seed-example.ron";
const INVALID_JSON_FIXTURE: &str =
    "tests/data/fixtures/anthropic-messages-tool-use-invalid-json.sse";

fn seed_calls() -> Value {
    json!([
        {"index": 0, "id": "call_1", "name": "get_weather", "arguments": {"city": "深圳", "days": 3}},
        {"index": 1, "id": "call_2", "name": "get_time", "arguments": {"city": "杭州", "days": 1}},
    ])
}

// --- snapshots

#[test]
fn snapshot_check_seed_example() {
    let o = run(&["check", SEED]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    common::assert_snapshot("check-seed-example", &stdout(&o));
}

/// Stub recordings made by the CLI itself, checked and snapshotted (exit code alongside).
#[test]
fn snapshot_check_stub_recordings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, &[&str], i32); 4] = [
        ("stub-repeat-name", &["--quirk", "repeat-name"], 0),
        ("stub-interleaved", &["--interleaved"], 0),
        (
            "stub-no-index-empty-id",
            &["--quirk", "no-index", "--quirk", "empty-id"],
            0,
        ),
        ("stub-truncate", &["--quirk", "truncate"], 1),
    ];
    for (name, extra, want) in cases {
        let file = format!("{name}.ron");
        let mut args = vec!["stub", "--seed", "-o", &file];
        args.extend_from_slice(extra);
        let o = run_in(dir.path(), &args);
        assert_eq!(code(&o), 0, "stub {name}: {}", stderr(&o));
        let o = run_in(dir.path(), &["check", &file]);
        assert_eq!(code(&o), want, "check {name}: {}", stderr(&o));
        if want == 0 {
            assert_eq!(stderr(&o), "");
        } else {
            assert_one_line(&o, &[want], name);
        }
        common::assert_snapshot(&format!("check-{name}"), &stdout(&o));
    }
}

// --- check

#[test]
fn check_seed_reproduces_the_walkthrough() {
    let o = run(&["check", SEED]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    for needle in [
        "call 0 get_weather: 0 of 5 fragments parse alone",
        "joined: {\"city\":\"深圳\",\"days\":3}{\"city\":\"杭州\",\"days\":1}",
        "trailing characters at line 1 column 27 (character position 22)",
        "{\"city\":\"深圳\",\"days\":3}",
        "{\"city\":\"杭州\",\"days\":1}",
        "call 0 get_weather: ① ✓ ② ✓ ③ ✓",
        "call 1 get_time: ① ✓ ② ✓ ③ ✓",
        "Result: OK, 2 calls parsed",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn check_json_shape() {
    let o = run(&["check", "--json", SEED]);
    assert_eq!(code(&o), 0);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("check --json prints one JSON object");
    assert_eq!(v["dialect"], "openai-chat");
    assert_eq!(v["framing"], "sse");
    assert_eq!(v["ok"], true);
    assert_eq!(
        v["ending"],
        json!({"status": "finished", "reason": "tool_calls"})
    );
    assert_eq!(v["calls"], seed_calls());
    // Checkpoints: one entry per call, each check with a status and a detail.
    let checks = v["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 2);
    for c in checks {
        for k in ["verbatim", "contiguous", "first_fragment_only"] {
            assert_eq!(c[k]["status"], "pass", "{k}: {c}");
            assert!(c[k]["detail"].is_string());
        }
    }
    // Strategies: every one by name, in order.
    let strategies = v["strategies"].as_array().expect("strategies");
    let names: Vec<&str> = strategies
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "per-fragment",
            "concat-all",
            "overwrite",
            "concat-fields",
            "next-index-done",
            "parse-when-valid",
            "per-read-utf8",
            "per-read-lines"
        ]
    );
    let per_fragment = &strategies[0];
    assert_eq!(per_fragment["fragments"], 10);
    assert_eq!(per_fragment["parsed"], 0);
    let failures = per_fragment["failures"].as_array().expect("failures");
    assert_eq!(failures.len(), 10);
    assert_eq!(failures[0]["fragment"], 0);
    assert_eq!(failures[0]["call"], 0);
    assert_eq!(failures[0]["text"], "{\"cit");
    assert!(
        failures[0]["error"]
            .as_str()
            .expect("error")
            .contains("EOF while parsing a string")
    );
    assert_eq!(failures.iter().filter(|f| f["call"] == 0).count(), 5);
    let concat_all = &strategies[1];
    assert_eq!(concat_all["ok"], false);
    assert!(
        concat_all["error"]
            .as_str()
            .expect("error")
            .contains("column 27 (character position 22)")
    );
    for s in strategies {
        assert!(
            s["matches_correct"].is_boolean() && s["differences"].is_array(),
            "{s}"
        );
    }
    // Findings: kind, severity, count, message, first location.
    let findings = v["findings"].as_array().expect("findings");
    assert!(findings.iter().any(|f| f["kind"] == "split-utf8"));
    for f in findings {
        assert!(
            f["kind"].is_string()
                && f["severity"].is_string()
                && f["count"].is_u64()
                && f["message"].is_string(),
            "{f}"
        );
    }
}

#[test]
fn check_failed_call_exits_1_with_one_line() {
    let o = run(&["check", INVALID_JSON_FIXTURE]);
    assert_one_line(&o, &[1], "invalid json fixture");
    assert!(
        stderr(&o).contains("1 of 1 call did not parse"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).trim_end().ends_with(INVALID_JSON_FIXTURE),
        "the path goes last: {}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("Result: FAILED"));
    // JSON too.
    let o = run(&["check", "--json", INVALID_JSON_FIXTURE]);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(v["dialect"], "anthropic-messages");
    assert_eq!(
        v["calls"][0]["raw_arguments"],
        "{\"location\": \"Paris\", \"unit\": celsius}"
    );
    assert!(v["calls"][0]["error"].is_string());
}

#[test]
fn check_every_fixture_exit_code() {
    let dir = manifest().join("tests/data/fixtures");
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        if !(name.ends_with(".sse") || name.ends_with(".jsonl")) {
            continue;
        }
        let o = run(&["check", path.to_str().expect("utf-8 path")]);
        let want = if name.contains("invalid-json") { 1 } else { 0 };
        assert_eq!(code(&o), want, "{name}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn check_forced_dialect_and_bad_dialect() {
    let o = run(&["check", "--dialect", "openai", SEED]);
    assert_eq!(code(&o), 0);
    let o = run(&["check", "--dialect", "nonsense", SEED]);
    assert_eq!(code(&o), 2);
    assert!(!stderr(&o).contains("panicked"));
    // The wrong dialect finds no calls and says so.
    let o = run(&["check", "--dialect", "gemini", SEED]);
    assert_one_line(&o, &[1], "wrong dialect");
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["frobnicate"][..],
        &["check"],
        &["check", "--no-such-flag", SEED],
        &["export", "--format", "xml", SEED],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

// --- export

#[test]
fn export_formats() {
    let o = run(&["export", SEED]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v, seed_calls());

    let o = run(&["export", "--format", "jsonl", SEED]);
    assert_eq!(code(&o), 0);
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(Value::Array(lines), seed_calls());

    let o = run(&["export", "--format", "openai", SEED]);
    assert_eq!(code(&o), 0);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["role"], "assistant");
    assert_eq!(v["content"], Value::Null);
    let tc = v["tool_calls"].as_array().expect("tool_calls");
    assert_eq!(tc.len(), 2);
    assert_eq!(tc[0]["id"], "call_1");
    assert_eq!(tc[0]["type"], "function");
    assert_eq!(tc[0]["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(tc[0]["function"]["arguments"].as_str().expect("a string"))
            .expect("JSON text");
    assert_eq!(args, json!({"city": "深圳", "days": 3}));

    let o = run(&["export", "--format", "anthropic", SEED]);
    assert_eq!(code(&o), 0);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(
        v,
        json!([
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "深圳", "days": 3}},
            {"type": "tool_use", "id": "call_2", "name": "get_time", "input": {"city": "杭州", "days": 1}},
        ])
    );
}

#[test]
fn export_to_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("calls.jsonl");
    let o = run(&[
        "export",
        "--format",
        "jsonl",
        "-o",
        out.to_str().expect("path"),
        SEED,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "nothing on stdout with -o");
    let text = std::fs::read_to_string(&out).expect("written");
    assert_eq!(text.lines().count(), 2);
    assert!(text.ends_with('\n'));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left behind");
    // An unwritable destination is exit 1 with one line.
    let o = run(&[
        "export",
        "-o",
        dir.path()
            .join("no/such/dir/x.json")
            .to_str()
            .expect("path"),
        SEED,
    ]);
    assert_one_line(&o, &[1], "unwritable -o");
}

#[test]
fn export_failed_call_keeps_the_raw_text() {
    let o = run(&["export", INVALID_JSON_FIXTURE]);
    assert_one_line(&o, &[1], "export invalid json");
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(
        v[0]["raw_arguments"],
        "{\"location\": \"Paris\", \"unit\": celsius}"
    );
    assert_eq!(v[0]["id"], "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    assert!(v[0]["error"].is_string());
    assert!(v[0].get("arguments").is_none());
}

#[test]
fn export_matches_check_on_every_fixture() {
    let dir = manifest().join("tests/data/fixtures");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected.json")).expect("expected.json"),
    )
    .expect("JSON");
    for (file, e) in expected.as_object().expect("object") {
        if e["expected_failure"] == true {
            continue;
        }
        let o = run(&["export", dir.join(file).to_str().expect("path")]);
        assert_eq!(code(&o), 0, "{file}: {}", stderr(&o));
        let got: Value = serde_json::from_str(&stdout(&o)).expect("json");
        let got: Vec<Value> = got
            .as_array()
            .expect("array")
            .iter()
            .map(|c| json!({"id": c["id"], "name": c["name"], "arguments": c["arguments"]}))
            .collect();
        assert_eq!(Value::Array(got), e["calls"], "{file}");
    }
}

// --- events

#[test]
fn events_one_json_object_per_event() {
    let o = run(&["events", SEED]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let events: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(events.len(), 12);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["event_no"], i);
        assert_eq!(e["event"], "message");
        for k in ["data", "id", "span", "chunk", "t_us", "kind", "fragments"] {
            assert!(e.get(k).is_some(), "event {i} has no {k}: {e}");
        }
    }
    assert_eq!(events[0]["kind"], "tool-call");
    assert_eq!(events[0]["fragments"], 1);
    assert_eq!(events[10]["kind"], "finish");
    assert_eq!(events[11]["kind"], "done");
    assert_eq!(events[11]["data"], "[DONE]");
    let first: Value = serde_json::from_str(events[0]["data"].as_str().expect("data"))
        .expect("the data is the chunk");
    assert_eq!(
        first["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"],
        "{\"cit"
    );
    // Spans tile the body in order.
    let spans: Vec<(u64, u64)> = events
        .iter()
        .map(|e| {
            (
                e["span"][0].as_u64().expect("start"),
                e["span"][1].as_u64().expect("end"),
            )
        })
        .collect();
    assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0));
}

#[test]
fn events_on_a_failed_stream_exit_1() {
    let o = run(&["events", INVALID_JSON_FIXTURE]);
    assert_one_line(&o, &[1], "events invalid json");
    assert!(
        stdout(&o).lines().count() > 5,
        "the events are still printed"
    );
}

// --- stub

#[test]
fn stub_seed_is_the_bundled_recording() {
    let o = run(&["stub", "--seed"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let built =
        sse_replay_core::recording::from_ron_str(&stdout(&o)).expect("stub prints a recording");
    let bundled = sse_replay_core::recording::load(&manifest().join(SEED)).expect("bundled");
    assert_eq!(built.chunks, bundled.chunks);
    assert_eq!(built.truth, bundled.truth);
}

#[test]
fn stub_calls_round_trip_through_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = run_in(
        dir.path(),
        &[
            "stub",
            "--call",
            r#"read={"path":"深圳.rs"}"#,
            "--call",
            "now=",
            "--fragment",
            "3,1",
            "--read-bytes",
            "7",
            "-o",
            "s.ron",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run_in(dir.path(), &["export", "s.ron"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v[0]["arguments"], json!({"path": "深圳.rs"}));
    assert_eq!(v[1]["name"], "now");
    assert_eq!(v[1]["arguments"], json!({}));
    let o = run_in(dir.path(), &["check", "--json", "s.ron"]);
    assert_eq!(code(&o), 0);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert!(
        v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .all(|c| c["verbatim"]["status"] == "pass")
    );
}

#[test]
fn stub_bad_arguments_exit_2() {
    for args in [
        &["stub"][..],
        &["stub", "--call", "no-equals-sign"],
        &["stub", "--seed", "--quirk", "nonsense"],
    ] {
        let o = run(args);
        assert_one_line(&o, &[2], &format!("{args:?}"));
    }
    // Numbers out of range are clap's usage errors (exit 2, `error: invalid value …`), like
    // every numeric argument (tests/it/net_hardening.rs has the full table).
    for args in [
        &["stub", "--seed", "--fragment", "0"][..],
        &["stub", "--seed", "--fragment", "x"],
    ] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            err.starts_with("error: invalid value") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

// --- hostile input

/// Deterministic random bytes from `seed`.
fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| rng.u8(..)).collect()
}

fn hostile_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("empty.sse", Vec::new()),
        ("random-1.bin", random_bytes(1, 4096)),
        ("random-2.sse", random_bytes(2, 100_000)),
        ("random.ron", random_bytes(3, 4096)),
        (
            "random-newlines.sse",
            random_bytes(4, 50_000)
                .into_iter()
                .map(|b| if b % 7 == 0 { b'\n' } else { b })
                .collect(),
        ),
        (
            "invalid-utf8.sse",
            b"data: \xff\xfe\xfd{\"choices\":[]}\n\ndata: \xc3\x28\n\n".to_vec(),
        ),
        (
            "invalid-utf8.jsonl",
            b"{\"choices\":[{\"delta\":\xff}]}\n\xfe\xfe\n".to_vec(),
        ),
        ("nul-bytes.sse", vec![0; 10_000]),
        ("only-newlines.sse", vec![b'\n'; 10_000]),
        ("only-cr.sse", vec![b'\r'; 10_000]),
        ("bom-only.sse", b"\xEF\xBB\xBF".to_vec()),
        ("done-only.sse", b"data: [DONE]\n".to_vec()),
    ];
    // 64 MB line: a chat chunk whose arguments string never ends.
    let mut line = br#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"k\":\""#.to_vec();
    line.resize(64 << 20, b'x');
    line.extend_from_slice(b"\n\n");
    files.push(("line-64mb.sse", line));
    // JSON nested 100,000 deep: as SSE data, as a JSON line, and as the arguments of a call.
    let deep_array = "[".repeat(100_000) + &"]".repeat(100_000);
    let deep_object = "{\"a\":".repeat(100_000) + "1" + &"}".repeat(100_000);
    files.push((
        "deep-array.sse",
        format!("data: {deep_array}\n\n").into_bytes(),
    ));
    files.push(("deep-object.jsonl", format!("{deep_object}\n").into_bytes()));
    files.push((
        "deep-arguments.sse",
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c\",\"function\":{{\"name\":\"f\",\"arguments\":{}}}}}]}}}}]}}\n\ndata: [DONE]\n\n",
            serde_json::to_string(&deep_object).expect("string")
        )
        .into_bytes(),
    ));
    files.push((
        "deep.ron",
        format!("(version: 1, chunks: {})", "[".repeat(100_000)).into_bytes(),
    ));
    // Truncated RON and a future version.
    let seed = std::fs::read_to_string(manifest().join(SEED)).expect("seed");
    let mut cut = seed.len() / 2;
    while !seed.is_char_boundary(cut) {
        cut -= 1;
    }
    files.push(("truncated.ron", seed.as_bytes()[..cut].to_vec()));
    files.push((
        "truncated-mid-char.ron",
        seed.as_bytes()[..seed.find('深').expect("CJK") + 1].to_vec(),
    ));
    files.push((
        "future.ron",
        seed.replacen("version: 1,", "version: 99,", 1).into_bytes(),
    ));
    files.push((
        "version-huge.ron",
        seed.replacen("version: 1,", "version: 99999999999999999999999,", 1)
            .into_bytes(),
    ));
    files.push(("no-version.ron", b"(meta: (title: \"x\"))".to_vec()));
    // Absurd index values (not non-negative integers, or past u64), in an otherwise finished stream.
    let mut absurd = String::new();
    for index in [
        "-1",
        "1e400",
        "18446744073709551616",
        "1.5",
        "\"0\"",
        "[]",
        "-9223372036854775809",
    ] {
        absurd.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"id\":\"c{}\",\"function\":{{\"name\":\"f\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\n",
            absurd.len()
        ));
    }
    absurd.push_str("data: {\"choices\":[{\"index\":4294967296,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
    files.push(("absurd-index.sse", absurd.into_bytes()));
    let mut out: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|(name, bytes)| {
            let p = dir.join(name);
            std::fs::write(&p, bytes).expect("write hostile file");
            (name.to_owned(), p)
        })
        .collect();
    let sub = dir.join("a-directory");
    std::fs::create_dir(&sub).expect("mkdir");
    out.push(("a directory".into(), sub));
    out.push(("a missing file".into(), dir.join("missing.sse")));
    out
}

#[test]
fn hostile_inputs_give_exit_1_or_2_and_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    for (name, path) in hostile_files(dir.path()) {
        let p = path.to_str().expect("utf-8 temp path");
        for cmd in ["check", "export", "events"] {
            let o = run(&[cmd, p]);
            let err = stderr(&o);
            let ok = !err.contains("panicked")
                && matches!(code(&o), 1 | 2)
                && err.lines().count() == 1
                && err.starts_with("sse-replay: ");
            if !ok {
                failures.push(format!(
                    "{cmd} {name}: exit {} stderr {:?}",
                    code(&o),
                    dieted(&err)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// At most 300 characters of a message, for assertion output.
fn dieted(s: &str) -> String {
    s.chars().take(300).collect()
}

#[test]
fn hostile_input_messages_are_clear() {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = hostile_files(dir.path());
    let find = |n: &str| {
        files
            .iter()
            .find(|(name, _)| name == n)
            .map(|(_, p)| p.to_str().expect("path").to_owned())
            .expect(n)
    };
    for (name, code_want, needle) in [
        ("a missing file", 2, "No such file"),
        ("a directory", 2, "a directory"),
        (
            "future.ron",
            2,
            "version 99 is newer than this build supports (1)",
        ),
        ("truncated.ron", 2, "RON syntax error at line"),
        ("no-version.ron", 2, "no version field"),
        ("deep.ron", 2, "RON"),
        ("empty.sse", 1, "nothing recognised: the input is empty"),
        ("absurd-index.sse", 1, "invalid-index"),
        ("deep-arguments.sse", 1, "recursion limit exceeded"),
        // One 64 MiB line, within the line limit: a regular file is streamed to its end, and
        // its one event is a call cut short.
        ("line-64mb.sse", 1, "lost-tool-call"),
    ] {
        let p = find(name);
        let o = run(&["check", &p]);
        assert_eq!(code(&o), code_want, "{name}: {}", dieted(&stderr(&o)));
        assert!(
            stderr(&o).contains(needle),
            "{name}: {:?} lacks {needle:?}",
            dieted(&stderr(&o))
        );
        assert!(
            stderr(&o).trim_end().ends_with(&p),
            "{name}: the path goes last: {}",
            dieted(&stderr(&o))
        );
    }
}

#[test]
fn a_huge_valid_index_is_a_key_not_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("huge-index.sse");
    std::fs::write(
        &p,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":18446744073709551615,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
    )
    .expect("write");
    let o = run(&["export", p.to_str().expect("path")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v[0]["index"], json!(18446744073709551615u64));
}

// --- mistakes said plainly ---------------------------------------------------------------------

/// A mistyped subcommand or a missing file is named as such before any window is tried (no
/// display here: the app could not start anyway).
#[test]
fn a_mistyped_subcommand_or_a_missing_file_is_named_before_any_window() {
    let run_bare = |args: &[&str]| {
        common::bin_in(&manifest())
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET")
            .output()
            .expect("the binary runs")
    };
    let o = run_bare(&["chek", "x"]);
    assert_one_line(&o, &[2], "chek x");
    let err = stderr(&o);
    assert!(err.contains("unknown subcommand 'chek'"), "{err}");
    assert!(err.contains("did you mean 'check'?"), "{err}");
    let o = run_bare(&["missing.ron"]);
    assert_one_line(&o, &[2], "missing.ron");
    let err = stderr(&o);
    assert!(err.contains("no such file: missing.ron"), "{err}");
    assert!(!err.contains("cannot start the app"), "{err}");
    // An existing file without a display: that, plainly (not winit's source path).
    let o = run_bare(&[SEED]);
    assert_one_line(&o, &[2], "no display");
    let err = stderr(&o);
    assert!(err.contains("no display"), "{err}");
    assert!(!err.contains(".rs:"), "{err}");
}

/// `preview --call N` past the last call is bad usage (exit 2), not an empty answer.
#[test]
fn preview_of_a_call_that_is_not_there_is_bad_usage() {
    let o = run(&["preview", SEED, "--call", "5"]);
    assert_one_line(&o, &[2], "preview --call 5");
    assert!(
        stderr(&o).contains("no call 5 (2 calls) in recordings/seed-example.ron"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());
}

/// `record -o EXISTING`: the reason, first and only; nothing about a response on standard output.
#[test]
fn record_onto_an_existing_file_says_why_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("taken.ron");
    std::fs::write(&out, "precious").expect("write");
    let o = run(&[
        "record",
        "http://127.0.0.1:9/v1/chat/completions",
        "-o",
        out.to_str().expect("utf-8 path"),
    ]);
    assert_one_line(&o, &[2], "record -o existing");
    assert!(
        stderr(&o).contains("refusing to overwrite an existing file"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "precious");
}

/// `check` on a broken stream: a strategy that produced exactly the accumulator's calls is not a
/// difference, and the per-fragment list says how much it left out.
#[test]
fn check_on_a_broken_stream_names_the_strategies_that_match_and_counts_the_rest() {
    let o = run(&["check", "recordings/quirk-truncated.ron"]);
    assert_eq!(code(&o), 1);
    let text = stdout(&o);
    assert!(text.contains("  ✓ next-index-done"), "{text}");
    assert!(
        text.contains("same calls as the accumulator — the stream itself is broken"),
        "{text}"
    );
    assert!(text.contains("      … 5 failures more\n"), "{text}");
}

#[test]
fn json_output_escapes_c1_bidi_and_line_separators() {
    // A call whose id, name and arguments carry C1 controls (NEL, CSI), bidi overrides and
    // isolates, the Arabic letter mark and the JavaScript line terminators U+2028/U+2029.
    let nasty = "a\u{85}b\u{9b}31mc\u{202e}d\u{2066}e\u{61c}f\u{2028}g\u{2029}h\u{7f}i";
    let args = serde_json::to_string(&json!({"text": nasty})).expect("json");
    let event = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": format!("call_{nasty}"), "type": "function", "function": {"name": format!("f{nasty}"), "arguments": args}}]}, "finish_reason": "tool_calls"}]});
    let body = format!("data: {event}\n\ndata: [DONE]\n\n");
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("nasty.sse");
    std::fs::write(&p, body).expect("write");
    let p = p.to_str().expect("path");
    let raw: Vec<char> = nasty
        .chars()
        .filter(|c| !c.is_ascii_alphanumeric())
        .collect();
    let mut outputs = vec![
        ("check --json", run(&["check", "--json", p])),
        ("events", run(&["events", p])),
        ("preview", run(&["preview", p])),
    ];
    for format in ["json", "jsonl", "openai", "anthropic"] {
        outputs.push((format, run(&["export", p, "--format", format])));
    }
    for (what, o) in outputs {
        assert_eq!(code(&o), 0, "{what}: {}", stderr(&o));
        let text = stdout(&o);
        for c in &raw {
            assert!(
                !text.contains(*c),
                "{what}: raw U+{:04X} in the output",
                *c as u32
            );
        }
        assert!(
            text.contains("\\u202e") && text.contains("\\u2028"),
            "{what}"
        );
        // Still JSON, and the values are the same characters.
        for doc in text
            .lines()
            .filter(|_| matches!(what, "events" | "preview" | "jsonl"))
        {
            serde_json::from_str::<Value>(doc).expect("each line is JSON");
        }
        if !matches!(what, "events" | "preview" | "jsonl") {
            let v: Value = serde_json::from_str(&text).expect("JSON");
            assert!(
                v.to_string().contains('\u{202e}'),
                "{what}: the value is kept"
            );
        }
    }
}

/// The agreement walk: for every stub shape the dialect table allows (dialect × framing ×
/// InvokeModel wrapping) × every quirk (and none), with one short call and with two calls,
/// `sse-replay stub` builds exactly the stream the core's builder builds for the same spec (the
/// one the app's builder and `generate-corpus` call), refuses exactly what the core's one check
/// refuses (with its reason), and every stream it builds raises one of the quirk's findings.
/// (Before the table, the app's builder offered `args-in-start` and `crc-error` for Anthropic
/// while `stub` refused them; `generate-corpus` special-cased the quirks a short stream lost.)
#[test]
fn stub_agrees_with_the_core_builder_on_every_shape_and_quirk() {
    use sse_replay_core::analysis::{Analysis, SourceInfo};
    use sse_replay_core::quirk::{self, Quirk, StubShape};
    use sse_replay_core::stub::{self, StubCall};
    let call_sets: [&[(&str, &str)]; 2] = [
        &[("get_time", r#"{"tz":"UTC"}"#)],
        &[
            ("get_weather", r#"{"city":"Shenzhen","days":3}"#),
            ("get_time", r#"{"tz":"UTC"}"#),
        ],
    ];
    let (mut built, mut refused) = (0, 0);
    for shape in StubShape::all() {
        for calls in call_sets {
            for quirk in std::iter::once(None).chain(Quirk::ALL.iter().copied().map(Some)) {
                let mut spec = shape.spec();
                spec.calls = calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| StubCall {
                        id: format!("call_{}", i + 1),
                        name: (*name).into(),
                        arguments: (*args).into(),
                    })
                    .collect();
                let mut args = vec!["stub".to_owned()];
                for (name, a) in calls {
                    args.extend(["--call".to_owned(), format!("{name}={a}")]);
                }
                args.extend(["--dialect".to_owned(), shape.dialect.name().to_owned()]);
                if let Some(f) = shape.framing {
                    args.extend(["--framing".to_owned(), f.name().to_owned()]);
                }
                if shape.invoke_model_stream {
                    args.push("--invoke-model-stream".to_owned());
                }
                if let Some(q) = quirk {
                    q.set(&mut spec.quirks, true);
                    args.extend(["--quirk".to_owned(), q.name().to_owned()]);
                }
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let o = run(&argv);
                match quirk::check(&spec) {
                    Err(why) => {
                        refused += 1;
                        assert_eq!(code(&o), 2, "{args:?} built");
                        assert!(stderr(&o).contains(&why), "{args:?}: {}", stderr(&o));
                    }
                    Ok(()) => {
                        built += 1;
                        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
                        let cli = sse_replay_core::recording::from_ron_str(&stdout(&o))
                            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
                        let core = stub::build(&spec);
                        assert_eq!(cli.chunks, core.chunks, "{args:?}: the stream differs");
                        assert_eq!(cli.truth, core.truth, "{args:?}: the truth differs");
                        if let Some(q) = quirk {
                            let a = Analysis::from_recording(
                                &cli,
                                SourceInfo::default(),
                                sse_replay_core::pipeline::Options::default(),
                            );
                            assert!(
                                a.findings.iter().any(|f| q.findings().contains(&f.kind)),
                                "{args:?}: none of {:?}",
                                q.findings()
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(
        built > 300 && refused > 500,
        "{built} built, {refused} refused"
    );
}

/// The markdown between `<!-- NAME -->` and `<!-- /NAME -->`, found once in README.md or a
/// `docs/*.md` file (the docs move; the markers go with the table).
fn marked_block(name: &str) -> (PathBuf, String) {
    let mut files = vec![manifest().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(manifest().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let (open, close) = (format!("<!-- {name} -->\n"), format!("<!-- /{name} -->"));
    let found: Vec<(PathBuf, String)> = files
        .into_iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(&f).ok()?;
            let start = text.find(&open)? + open.len();
            let end = start + text[start..].find(&close)?;
            Some((f, text[start..end].to_owned()))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "the {name} markers, once in README.md or docs/*.md"
    );
    found.into_iter().next().expect("one")
}

/// The first cell of each body row of a markdown table.
fn first_cells(table: &str) -> Vec<String> {
    table
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.split(" | ")
                .next()
                .unwrap_or("")
                .trim_start_matches("| ")
                .to_owned()
        })
        .collect()
}

/// The docs' dialect table has one row per dialect of the dialect table, in its order, named as
/// `--dialect` takes it with every alias; the docs' stub-quirk table is the quirk table written
/// out (regenerate it from this test's message when a quirk or a refusal changes).
#[test]
fn the_docs_tables_of_dialects_and_quirks_are_the_tables() {
    use sse_replay_core::dialect::DialectKind;
    use sse_replay_core::quirk::{Quirk, Shape, StubShape};
    let (file, dialects) = marked_block("dialects-table");
    let expected: Vec<String> = DialectKind::ALL
        .iter()
        .map(|d| {
            let aliases: Vec<String> = d.aliases().iter().map(|a| format!("`{a}`")).collect();
            if aliases.is_empty() {
                format!("`{}`", d.name())
            } else {
                format!("`{}` ({})", d.name(), aliases.join(", "))
            }
        })
        .collect();
    assert_eq!(first_cells(&dialects), expected, "{}", file.display());

    let mut table = String::from(
        "| quirk (`--quirk`) | what the stub writes | findings a correct reader raises | streams that carry it |\n|---|---|---|---|\n",
    );
    for &q in Quirk::ALL {
        let findings: Vec<String> = q
            .findings()
            .iter()
            .map(|f| format!("`{}`", f.label()))
            .collect();
        let carrying: Vec<DialectKind> = DialectKind::ALL
            .into_iter()
            .filter(|&d| {
                StubShape::all()
                    .into_iter()
                    .filter(|s| s.dialect == d)
                    .any(|s| q.refusal(Shape::of(&s.spec())).is_none())
            })
            .collect();
        let streams = if carrying.len() == DialectKind::ALL.len() {
            "every dialect".to_owned()
        } else {
            carrying
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        table.push_str(&format!(
            "| `{}` | {} | {} | {streams} |\n",
            q.name(),
            q.description(),
            findings.join(", ")
        ));
    }
    let (file, quirks) = marked_block("stub-quirks-table");
    assert_eq!(
        quirks,
        table,
        "{}: the table should read\n{table}",
        file.display()
    );
}
