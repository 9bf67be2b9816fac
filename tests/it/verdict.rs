//! Wrong answers a stream can lead to, end to end through the binary and the library:
//!
//! - one verdict: every error-severity finding kind makes `check` (text and `--json`), `events` and
//!   `export` fail with exit 1, and info findings never do;
//! - Responses arguments that come only in the `.done` events are the call's arguments, in every
//!   path, with an info finding and no `arguments-mismatch`;
//! - server tools (Anthropic `server_tool_use`, Responses `web_search_call`) are listed apart and
//!   left out of `calls` and `export` unless asked for;
//! - control characters from the stream never reach the terminal raw; error lines stay short;
//! - `check --json` carries `schema_version`; the report says when a recording was interrupted.

use crate::common;

use std::path::Path;

use serde_json::{Value, json};
use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::findings::{FindingKind, Severity};
use sse_replay_core::limits::EventLimit;
use sse_replay_core::pipeline::Options;

use common::{analyse_raw, code, run, stderr, stdout, write};

fn check_json(path: &Path) -> (Value, i32, String) {
    let o = run(&["check", "--json", path.to_str().expect("path")]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("check --json prints JSON");
    (v, code(&o), stderr(&o))
}

fn kinds(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["kind"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `event: NAME` + `data: DATA` + blank line.
fn ev(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// An OpenAI Chat chunk with one tool-call delta.
fn chat(tc: Value, finish: Option<&str>) -> String {
    let v =
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

fn chat_finish() -> String {
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
        .into()
}

fn responses_added(item: &str, call: &str, name: &str) -> String {
    ev(
        "response.output_item.added",
        &json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": item, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call, "name": name}}),
    )
}

fn responses_done(item: &str, args: &str) -> String {
    [
        ev(
            "response.function_call_arguments.done",
            &json!({"type": "response.function_call_arguments.done", "item_id": item, "output_index": 0, "arguments": args}),
        ),
        ev(
            "response.output_item.done",
            &json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": item, "type": "function_call", "status": "completed", "arguments": args}}),
        ),
    ]
    .concat()
}

fn responses_completed() -> String {
    ev(
        "response.completed",
        &json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}),
    )
}

/// A small stream that raises `kind` (an error-severity kind). Every such kind must have one:
/// a new error kind without a stream here fails the test below.
fn stream_raising(kind: FindingKind) -> Option<Vec<u8>> {
    let ok_call = chat(
        json!({"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}),
        None,
    );
    Some(match kind {
        FindingKind::NameConflict => [
            chat(json!({"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{\"a\""}}), None),
            chat(json!({"index": 0, "function": {"name": "g", "arguments": ":1}"}}), None),
            chat_finish(),
        ]
        .concat()
        .into_bytes(),
        FindingKind::CumulativeArguments => [
            chat(json!({"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{\"a\""}}), None),
            chat(json!({"index": 0, "function": {"arguments": "{\"a\":1}"}}), None),
            chat_finish(),
        ]
        .concat()
        .into_bytes(),
        FindingKind::EndedWithoutFinish => ok_call.into_bytes(),
        FindingKind::IncompleteCall => {
            chat(json!({"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{\"a\":"}}), None)
                .into_bytes()
        }
        FindingKind::InvalidUtf8 => {
            let mut b = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"},\"finish_reason\":null}]}\n\n".to_vec();
            b.extend_from_slice(ok_call.as_bytes());
            b.extend_from_slice(chat_finish().as_bytes());
            b
        }
        FindingKind::ProviderError => [
            ok_call,
            "data: {\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".into(),
        ]
        .concat()
        .into_bytes(),
        FindingKind::ArgumentsMismatch => [
            responses_added("fc_1", "call_1", "f"),
            ev(
                "response.function_call_arguments.delta",
                &json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{\"a\":1}"}),
            ),
            responses_done("fc_1", "{\"a\":2}"),
            responses_completed(),
        ]
        .concat()
        .into_bytes(),
        FindingKind::ParseFailed => [
            chat(json!({"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{bad"}}), None),
            chat_finish(),
        ]
        .concat()
        .into_bytes(),
        FindingKind::InvalidIndex => [
            chat(json!({"index": "first", "id": "call_1", "function": {"name": "f", "arguments": "{}"}}), None),
            chat_finish(),
        ]
        .concat()
        .into_bytes(),
        // An event carrying a tool call, cut short; the finish says calls were made.
        FindingKind::LostToolCall => [
            ok_call.clone(),
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\"\n\n".to_owned(),
            chat_finish(),
        ]
        .concat()
        .into_bytes(),
        // A text file: no event at all.
        FindingKind::NothingRecognised => b"Sorry, I cannot help with that.\n".to_vec(),
        // Binary Bedrock frames, the second with a flipped byte in its payload.
        FindingKind::FrameCorrupt => {
            use sse_replay_core::aws_eventstream::event_frame;
            let start = event_frame("contentBlockStart", br#"{"contentBlockIndex":0,"start":{"toolUse":{"name":"f","toolUseId":"t1"}}}"#);
            let mut delta = event_frame("contentBlockDelta", br#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"a\":1}"}}}"#);
            let mid = delta.len() / 2;
            delta[mid] ^= 0x20;
            let stop = event_frame("messageStop", br#"{"stopReason":"tool_use"}"#);
            [start, delta, stop].concat()
        }
        // Anthropic inside InvokeModelWithResponseStream chunks: the input delta's chunk holds
        // bytes that are not base64, so the call comes out with none of its arguments.
        FindingKind::UnreadablePayload => {
            use base64::Engine as _;
            use sse_replay_core::aws_eventstream::event_frame;
            let chunk = |event: &Value| {
                let b64 = base64::engine::general_purpose::STANDARD.encode(event.to_string());
                event_frame("chunk", json!({ "bytes": b64 }).to_string().as_bytes())
            };
            [
                chunk(&json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}})),
                chunk(&json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}})),
                event_frame("chunk", br#"{"bytes":"eyJ0eXBlIjoi!!not base64!!"}"#),
                chunk(&json!({"type": "content_block_stop", "index": 0})),
                chunk(&json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}})),
                chunk(&json!({"type": "message_stop"})),
            ]
            .concat()
        }
        _ => return None,
    })
}

#[test]
fn every_error_kind_makes_every_verdict_fail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let errors: Vec<FindingKind> = FindingKind::ALL
        .iter()
        .copied()
        .filter(|k| k.severity() == Severity::Error)
        .collect();
    assert!(errors.len() >= 9, "{errors:?}");
    for kind in errors {
        let label = kind.label();
        if kind == FindingKind::EventTooLarge {
            event_too_large_fails_every_verdict(dir.path());
            continue;
        }
        let body = stream_raising(kind)
            .unwrap_or_else(|| panic!("no stream raises the error kind {label}: add one"));
        // The library's one verdict.
        let a = analyse_raw(&body, None);
        assert!(
            a.findings.iter().any(|f| f.kind == kind),
            "{label}: not raised: {:?}",
            a.findings
                .iter()
                .map(|f| f.kind.label())
                .collect::<Vec<_>>()
        );
        assert!(!a.all_ok(), "{label}: the analysis says OK");
        // check --json: ok false, exit 1, one line on stderr.
        let p = write(dir.path(), &format!("{label}.sse"), &body);
        let (v, rc, err) = check_json(&p);
        assert!(
            kinds(&v).iter().any(|k| k == label),
            "{label}: {:?}",
            kinds(&v)
        );
        assert_eq!(v["ok"], false, "{label}");
        assert_eq!(rc, 1, "{label}: {err}");
        assert_eq!(err.lines().count(), 1, "{label}: {err}");
        // check (text): the Result line agrees.
        let o = run(&["check", p.to_str().expect("path")]);
        assert_eq!(code(&o), 1, "{label}");
        assert!(
            stdout(&o).contains("Result: FAILED"),
            "{label}: {}",
            stdout(&o)
        );
        // events and export: the same decision, for the same reasons, on the same one line.
        for cmd in ["events", "export"] {
            let o = run(&[cmd, p.to_str().expect("path")]);
            assert_eq!(code(&o), 1, "{cmd} {label}: {}", stderr(&o));
            assert_eq!(stderr(&o), err, "{cmd} {label}");
        }
    }
}

/// A line past `--max-event-bytes` stops reading: the library's analysis (built with that limit)
/// carries the error finding and is not OK; the commands exit 1 with one line before any report,
/// since what follows the cut was never read.
fn event_too_large_fails_every_verdict(dir: &Path) {
    let mut body = chat(
        json!({"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}}),
        None,
    );
    body.push_str(&format!("data: {}\n\n", "x".repeat(4096)));
    body.push_str(&chat_finish());
    let rec = sse_replay_core::input::raw_to_recording(body.as_bytes(), "inline");
    let source = SourceInfo {
        name: "inline".into(),
        kind: "raw body".into(),
        timing_known: false,
    };
    let a = Analysis::from_recording_owned(rec, source, Options::default(), EventLimit::new(1024));
    assert!(
        a.findings
            .iter()
            .any(|f| f.kind == FindingKind::EventTooLarge),
        "event-too-large not raised"
    );
    assert!(!a.all_ok(), "event-too-large: the analysis says OK");
    let p = write(dir, "event-too-large.sse", body.as_bytes());
    for args in [
        &["check", "--json"][..],
        &["check"][..],
        &["events"][..],
        &["export"][..],
    ] {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--max-event-bytes", "1024", p.to_str().expect("path")]);
        let o = run(&all);
        assert_eq!(code(&o), 1, "{all:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{all:?}: {}", stderr(&o));
    }
}

#[test]
fn info_findings_never_change_the_verdict() {
    // Keep-alives, CRLF, a ping-like comment, an empty-arguments call, done-only arguments, a
    // server tool: many info findings, no error, exit 0 everywhere.
    let dir = tempfile::tempdir().expect("tempdir");
    let body = [
        ": keep-alive\r\n\r\n".to_owned(),
        chat(
            json!({"index": 1, "id": "call_1", "function": {"name": "f", "arguments": ""}}),
            None,
        )
        .replace("\n\n", "\r\n\r\n"),
        chat_finish(),
    ]
    .concat();
    let p = write(dir.path(), "infos.sse", body.as_bytes());
    let (v, rc, err) = check_json(&p);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(v["ok"], true);
    let all = v["findings"].as_array().expect("findings");
    assert!(all.len() >= 3, "{all:?}");
    assert!(all.iter().all(|f| f["severity"] != "error"), "{all:?}");
    let o = run(&["export", p.to_str().expect("path")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).is_empty());
}

// --- arguments only in the .done events

fn done_only_stream() -> String {
    [
        ev(
            "response.created",
            &json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        ),
        responses_added("fc_1", "call_1", "get_weather"),
        responses_done("fc_1", r#"{"city":"深圳","days":3}"#),
        responses_completed(),
    ]
    .concat()
}

#[test]
fn done_only_arguments_in_every_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "done-only.sse", done_only_stream().as_bytes());
    let path = p.to_str().expect("path");
    let want = json!({"city": "深圳", "days": 3});

    let (v, rc, err) = check_json(&p);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["calls"][0]["arguments"], want);
    let k = kinds(&v);
    assert!(k.iter().any(|k| k == "arguments-only-in-done"), "{k:?}");
    assert!(!k.iter().any(|k| k == "arguments-mismatch"), "{k:?}");
    let f = v["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["kind"] == "arguments-only-in-done"))
        .expect("finding");
    assert_eq!(f["severity"], "info");
    assert_eq!(f["call"], 0);
    // The naive strategies run on the pieces: a delta-only client gets empty arguments.
    let overwrite = v["strategies"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == "overwrite"))
        .expect("overwrite");
    assert_eq!(overwrite["matches_correct"], false, "{overwrite}");
    assert_eq!(overwrite["calls"][0]["raw_arguments"], "");
    // Checkpoint ①: the done text is the original, and the call equals it.
    assert_eq!(v["checks"][0]["verbatim"]["status"], "pass");

    let o = run(&["check", path]);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("Result: OK, 1 call parsed"),
        "{}",
        stdout(&o)
    );

    for format in ["json", "jsonl", "openai", "anthropic"] {
        let o = run(&["export", path, "--format", format]);
        assert_eq!(code(&o), 0, "{format}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains("深圳"), "{format}: {text}");
    }
    let o = run(&["export", path]);
    let calls: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(calls[0]["arguments"], want);

    let o = run(&["events", path]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn done_that_differs_from_deltas_stays_a_failing_mismatch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = stream_raising(FindingKind::ArgumentsMismatch).expect("stream");
    let p = write(dir.path(), "mismatch.sse", &body);
    let (v, rc, _) = check_json(&p);
    assert_eq!(rc, 1);
    let k = kinds(&v);
    assert!(k.iter().any(|k| k == "arguments-mismatch"), "{k:?}");
    assert!(!k.iter().any(|k| k == "arguments-only-in-done"), "{k:?}");
    // The correct call keeps what the deltas said; the .done copy is only the original.
    assert_eq!(v["calls"][0]["arguments"], json!({"a": 1}));
}

// --- server tools

fn anthropic_server_then_client() -> String {
    let e = |name: &str, v: Value| format!("event: {name}\ndata: {v}\n\n");
    [
        e("message_start", json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}})),
        e("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}})),
        e("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"weather"}})),
        e("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": " Oslo\"}"}})),
        e("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        e("content_block_start", json!({"type": "content_block_start", "index": 1, "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []}})),
        e("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        e("content_block_start", json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_02", "name": "get_weather", "input": {}}})),
        e("content_block_delta", json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Oslo\"}"}})),
        e("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
        e("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}})),
        e("message_stop", json!({"type": "message_stop"})),
    ]
    .concat()
}

fn responses_web_search_then_function() -> String {
    [
        ev(
            "response.created",
            &json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        ),
        ev(
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}}),
        ),
        ev(
            "response.web_search_call.completed",
            &json!({"type": "response.web_search_call.completed", "output_index": 0, "item_id": "ws_1"}),
        ),
        ev(
            "response.output_item.done",
            &json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "weather Oslo"}}}),
        ),
        ev(
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": "get_weather"}}),
        ),
        ev(
            "response.function_call_arguments.delta",
            &json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "{\"city\":\"Oslo\"}"}),
        ),
        ev(
            "response.output_item.done",
            &json!({"type": "response.output_item.done", "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "status": "completed", "arguments": "{\"city\":\"Oslo\"}", "call_id": "call_1", "name": "get_weather"}}),
        ),
        responses_completed(),
    ]
    .concat()
}

/// `check --json`, `check`, `export` (every format, with and without `--include-server-tools`) on
/// a stream with one server tool (`server_type`, id `server_id`) and one client call.
fn assert_server_tool_apart(body: &str, server_type: &str, server_id: &str, server_args: Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "server.sse", body.as_bytes());
    let path = p.to_str().expect("path");

    let (v, rc, err) = check_json(&p);
    assert_eq!(rc, 0, "{server_type}: {err}");
    assert_eq!(v["ok"], true);
    let calls = v["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 1, "{server_type}: {calls:?}");
    assert_eq!(calls[0]["name"], "get_weather");
    assert_eq!(v["call_details"].as_array().map(Vec::len), Some(1));
    let servers = v["server_tools"].as_array().expect("server_tools");
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0]["type"], server_type);
    assert_eq!(servers[0]["id"], server_id);
    assert_eq!(servers[0]["arguments"], server_args);
    let f = v["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["kind"] == "server-tool"))
        .expect("server-tool finding");
    assert_eq!(f["severity"], "info");
    assert!(
        f["message"]
            .as_str()
            .is_some_and(|m| m.contains(server_type)),
        "{f}"
    );

    let o = run(&["check", path]);
    let text = stdout(&o);
    assert!(text.contains("Server tools: run by the provider"), "{text}");
    assert!(text.contains("Result: OK, 1 call parsed"), "{text}");

    for format in ["json", "jsonl", "openai", "anthropic"] {
        let o = run(&["export", path, "--format", format]);
        assert_eq!(code(&o), 0, "{format}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains("get_weather"), "{format}: {text}");
        assert!(
            !text.contains(server_id),
            "{format}: the server tool leaked: {text}"
        );
        let o = run(&["export", path, "--format", format, "--include-server-tools"]);
        assert_eq!(code(&o), 0, "{format}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains(server_id), "{format}: {text}");
        assert!(
            text.contains("\"server_tool\": true") || text.contains("\"server_tool\":true"),
            "{format}: {text}"
        );
    }
    let o = run(&[
        "export",
        path,
        "--include-server-tools",
        "--format",
        "anthropic",
    ]);
    let blocks: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(blocks[0]["type"], server_type);
    assert_eq!(blocks[1]["type"], "tool_use");
}

#[test]
fn anthropic_server_tool_use_is_apart_from_client_calls() {
    assert_server_tool_apart(
        &anthropic_server_then_client(),
        "server_tool_use",
        "srvtoolu_01",
        json!({"query": "weather Oslo"}),
    );
}

#[test]
fn responses_web_search_call_is_apart_from_client_calls() {
    assert_server_tool_apart(
        &responses_web_search_then_function(),
        "web_search_call",
        "ws_1",
        json!({"type": "search", "query": "weather Oslo"}),
    );
}

#[test]
fn a_failing_server_tool_never_fails_the_verdict() {
    // The server tool's input is cut (does not parse); the client call is fine.
    let body = anthropic_server_then_client().replace(" Oslo\\\"}", " Oslo");
    let a = analyse_raw(body.as_bytes(), None);
    assert_eq!(a.server_tools().count(), 1);
    assert!(
        a.server_tools().all(|c| c.value().is_none()),
        "the input must not parse"
    );
    assert!(a.all_ok(), "{:?}", a.problems());
}

// --- terminal escapes, capped lines

#[test]
fn control_characters_never_reach_the_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hostile = "get\u{1b}[2J\u{1b}]0;pwned\u{7}\r\nweather\u{9b}31m";
    let body = [
        chat(json!({"index": 0, "id": "call\u{1b}[1m", "function": {"name": hostile, "arguments": "{bad"}}), None),
        "data: {\"error\":{\"message\":\"boom\u{1b}[31m\\nsecond line\u{7}\"}}\n\n".to_owned(),
    ]
    .concat();
    let p = write(dir.path(), "hostile.sse", body.as_bytes());
    let path = p.to_str().expect("path");
    for args in [
        vec!["check", path],
        vec!["check", "--json", path],
        vec!["export", path],
        vec!["events", path],
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 1, "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
        for c in err.trim_end_matches('\n').chars() {
            assert!(
                !c.is_control(),
                "{args:?}: raw control {c:?} on stderr: {err:?}"
            );
        }
        if args[1] != "--json" && args[0] == "check" {
            let out = stdout(&o);
            assert!(
                out.contains("\\u{001b}[2J"),
                "the name is shown, escaped: {out}"
            );
            for c in out.chars().filter(|&c| c != '\n') {
                assert!(!c.is_control(), "raw control {c:?} in the report");
            }
        }
    }
}

#[test]
fn a_hundred_thousand_failing_calls_give_a_short_error_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut body = String::new();
    for i in 0..100_000 {
        body.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"id\":\"c{i}\",\"function\":{{\"name\":\"{}\",\"arguments\":\"{{bad\"}}}}]}},\"finish_reason\":null}}]}}\n\n",
            "f".repeat(200)
        ));
    }
    body.push_str(&chat_finish());
    let p = write(dir.path(), "many.sse", body.as_bytes());
    // 33 MB: past the default input limit, which is not what this is about.
    let o = run(&[
        "export",
        p.to_str().expect("path"),
        "-o",
        "/dev/null",
        "--max-input-bytes",
        "64M",
    ]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.len() < 1000,
        "{} bytes: {}",
        err.len(),
        &err[..err.len().min(300)]
    );
    assert!(
        err.contains("100000 of 100000 calls did not parse"),
        "{err}"
    );
    assert!(err.contains("… 99997 more"), "{err}");
}

// --- contract

#[test]
fn check_json_carries_schema_version_first() {
    let o = run(&["check", "--json", "recordings/seed-example.ron"]);
    assert_eq!(code(&o), 0);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let first = v.as_object().and_then(|m| m.keys().next().cloned());
    assert_eq!(first.as_deref(), Some("schema_version"));
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["server_tools"], json!([]));
}

#[test]
fn the_report_says_when_a_recording_was_interrupted() {
    use sse_replay_core::recording::{self, JournalWriter};
    let dir = tempfile::tempdir().expect("tempdir");
    let seed =
        recording::load(&common::manifest().join("recordings/seed-example.ron")).expect("seed");
    let out = dir.path().join("cut.ron");
    let mut w = JournalWriter::create(&out, &seed).expect("journal");
    for c in seed.chunks.iter().take(4) {
        w.append_chunk(c).expect("append");
    }
    w.flush().expect("flush");
    let journal = w.journal_path().to_path_buf();
    // As if SIGKILLed: no destructor, no final file.
    #[allow(clippy::mem_forget, reason = "a killed process runs no destructor")]
    std::mem::forget(w);
    let o = run(&["check", journal.to_str().expect("path")]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("INTERRUPTED recording"), "{text}");
    // A complete recording does not say so.
    let o = run(&["check", "recordings/seed-example.ron"]);
    assert!(!stdout(&o).contains("INTERRUPTED"));
}
