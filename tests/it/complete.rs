//! Non-streaming responses: one complete JSON document per dialect is detected,
//! its calls read directly ("no accumulator needed"), exported in the same shape as a stream's;
//! a malformed arguments string fails as it does in a stream; the single-line Ollama reply reads
//! the same both ways; `serve` answers with the whole body and its Content-Length; `record` and
//! the proxy capture such answers; `stub --non-streaming` round-trips to the stream's calls.
//! Servers run on 127.0.0.1:0; every wait is bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use sse_replay_core::dialect::DialectKind;

use common::{run, stderr};

/// The documented non-streaming bodies, pretty-printed, and the dialect each must be read as.
const BODIES: [(&str, &str); 5] = [
    ("openai-chat.json", "openai-chat"),
    ("openai-responses.json", "openai-responses"),
    ("anthropic.json", "anthropic-messages"),
    ("gemini.json", "gemini"),
    ("ollama.json", "ollama"),
];

fn data(name: &str) -> PathBuf {
    common::manifest().join("tests/data/complete").join(name)
}

fn check_json(path: &Path) -> (Output, Value) {
    let o = run(&["check", "--json", path.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stdout));
    });
    (o, v)
}

fn export(path: &Path, extra: &[&str]) -> (Output, Value) {
    let mut args = vec!["export", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o, v)
}

/// The two client calls every documented body carries.
fn the_two_calls() -> Value {
    json!([
        {"name": "get_weather", "arguments": {"city": "深圳", "days": 3}},
        {"name": "get_time", "arguments": {"timezone": "Asia/Shanghai"}},
    ])
}

fn names_and_arguments(export: &Value) -> Value {
    Value::Array(
        export
            .as_array()
            .unwrap()
            .iter()
            .map(|c| json!({"name": c["name"], "arguments": c["arguments"]}))
            .collect(),
    )
}

#[test]
fn one_body_per_dialect_is_detected_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    for (file, dialect) in BODIES {
        let pretty = data(file);
        // The same document written compactly on one line.
        let doc: Value = serde_json::from_slice(&std::fs::read(&pretty).unwrap()).unwrap();
        let compact = dir.path().join(format!("compact-{file}"));
        std::fs::write(&compact, doc.to_string()).unwrap();
        for path in [&pretty, &compact] {
            let (o, v) = check_json(path);
            assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
            assert_eq!(v["response"], "complete", "{file}");
            assert_eq!(v["dialect"], dialect, "{file}");
            assert_eq!(v["ok"], true, "{file}");
            assert_eq!(v["strategies"], json!([]), "{file}: no naive strategies");
            assert_eq!(v["stats"]["events"], 1, "{file}");
            assert_eq!(v["stats"]["fragments"], 0, "{file}");
            assert_eq!(
                v["checks"][0]["verbatim"]["status"], "not-applicable",
                "{file}"
            );
            // The key comes after every key that existed before it (only `preview`, newer, follows).
            let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
            let at = keys
                .iter()
                .position(|k| *k == "response")
                .expect("response key");
            assert_eq!(keys[at - 1], "findings", "{file}");
            assert!(
                keys[at + 1..].iter().all(|k| *k == "preview"),
                "{file}: {keys:?}"
            );

            let (o, calls) = export(path, &[]);
            assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
            assert_eq!(names_and_arguments(&calls), the_two_calls(), "{file}");
        }
        let text = run(&["check", pretty.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(
            text.contains(
                "not a stream: one complete response, 2 calls parsed directly — no accumulator needed"
            ),
            "{file}: {text}"
        );
        assert!(!text.contains("Naive strategies"), "{file}: {text}");
    }
}

#[test]
fn ids_and_server_tools_are_kept_apart_as_in_streams() {
    let (_, v) = check_json(&data("anthropic.json"));
    assert_eq!(v["calls"][0]["id"], "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(v["server_tools"][0]["type"], "server_tool_use");
    assert_eq!(v["server_tools"][0]["name"], "web_search");

    let (_, v) = check_json(&data("openai-responses.json"));
    // A function call is named by its call_id, as the stream decoder does.
    assert_eq!(v["calls"][0]["id"], "call_unLAR8MvFNptuiZK6K6HCy5k");
    assert_eq!(v["server_tools"][0]["type"], "web_search_call");
    assert_eq!(
        v["server_tools"][0]["arguments"],
        json!({"type": "search", "query": "Shenzhen weather forecast"})
    );
    let (_, with) = export(&data("openai-responses.json"), &["--include-server-tools"]);
    assert_eq!(with.as_array().unwrap().len(), 3);

    let (_, v) = check_json(&data("openai-chat.json"));
    assert_eq!(
        v["ending"],
        json!({"status": "finished", "reason": "tool_calls"})
    );
    assert_eq!(v["calls"][1]["id"], "call_4Zqu0yTrlrkxBDOW3VC1nqTS");
}

#[test]
fn a_malformed_arguments_string_fails_as_in_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let bad = r#"{"city":"深圳","days":3"#;
    let body = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": bad}}
            ]},
            "finish_reason": "tool_calls"
        }]
    });
    let complete = dir.path().join("bad.json");
    std::fs::write(&complete, serde_json::to_string_pretty(&body).unwrap()).unwrap();
    // The same arguments in a stream.
    let stream = dir.path().join("bad.ron");
    let o = run(&[
        "stub",
        "--call",
        &format!("get_weather={bad}"),
        "-o",
        stream.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    let parse_error = |path: &Path| {
        let (o, v) = check_json(path);
        assert_eq!(o.status.code(), Some(1), "{}", path.display());
        assert_eq!(v["ok"], false);
        let f = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "parse-failed")
            .unwrap_or_else(|| panic!("no parse-failed finding: {v}"))
            .clone();
        f["message"].as_str().unwrap().to_owned()
    };
    let from_complete = parse_error(&complete);
    assert_eq!(from_complete, parse_error(&stream));
    assert!(from_complete.contains("EOF"), "{from_complete}");

    // export: exit 1, the error on standard error.
    let (o, _) = export(&complete, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("get_weather"), "{}", stderr(&o));
}

#[test]
fn a_single_line_ollama_reply_reads_the_same_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(data("ollama.json")).unwrap()).unwrap();
    let line = format!("{doc}\n");
    // As a one-line stream (the pipeline) and as a complete reply.
    let stream = sse_replay_core::pipeline::run_chunks(
        [(line.as_bytes(), 0u64)],
        sse_replay_core::pipeline::Options {
            dialect: Some(DialectKind::Ollama),
            ..Default::default()
        },
    );
    let whole = sse_replay_core::complete::outcome(line.as_bytes(), 1, 0, None, &[]).unwrap();
    assert_eq!(whole.dialect, DialectKind::Ollama);
    let summary = |calls: &[sse_replay_core::accumulate::Call]| {
        calls
            .iter()
            .map(|c| (c.name.clone(), c.value().cloned(), c.complete))
            .collect::<Vec<_>>()
    };
    assert_eq!(stream.calls.len(), 2);
    assert_eq!(summary(&stream.calls), summary(&whole.calls));
    assert!(stream.finished(), "the stream reading ends at done: true");

    let file = dir.path().join("ollama-line.jsonl");
    std::fs::write(&file, &line).unwrap();
    let (o, v) = check_json(&file);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(v["dialect"], "ollama");
    let (o, calls) = export(&file, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(names_and_arguments(&calls), the_two_calls());
}

#[test]
fn streams_are_not_taken_for_complete_responses() {
    // A one-line chat stream and a streamed Ollama line (done: false) stay streams.
    let dir = tempfile::tempdir().unwrap();
    let sse = dir.path().join("one.sse");
    std::fs::write(
        &sse,
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
    )
    .unwrap();
    let (_, v) = check_json(&sse);
    assert_eq!(v["response"], "stream");
    let lines = dir.path().join("two.jsonl");
    std::fs::write(
        &lines,
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{}}}]},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n",
    )
    .unwrap();
    let (o, v) = check_json(&lines);
    assert_eq!(v["response"], "stream", "{}", stderr(&o));
    assert_eq!(v["calls"].as_array().unwrap().len(), 1);
}

#[test]
fn events_prints_the_document_as_one_event() {
    let o = run(&["events", data("gemini.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let e: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(e["event"], "complete-response");
    assert_eq!(e["kind"], "tool-call");
    let doc: Value = serde_json::from_str(e["data"].as_str().unwrap()).unwrap();
    let file: Value = serde_json::from_slice(&std::fs::read(data("gemini.json")).unwrap()).unwrap();
    assert_eq!(doc, file);
}

#[test]
fn stub_non_streaming_round_trips_to_the_streams_calls() {
    let dir = tempfile::tempdir().unwrap();
    for d in [
        "openai-chat",
        "openai-responses",
        "anthropic-messages",
        "gemini",
        "ollama",
    ] {
        let stream = dir.path().join(format!("{d}.ron"));
        let whole = dir.path().join(format!("{d}-complete.ron"));
        for (path, extra) in [(&stream, None), (&whole, Some("--non-streaming"))] {
            let mut args = vec![
                "stub",
                "--seed",
                "--dialect",
                d,
                "-o",
                path.to_str().unwrap(),
            ];
            args.extend(extra);
            let o = run(&args);
            assert!(o.status.success(), "{d}: {}", stderr(&o));
        }
        let (o, v) = check_json(&whole);
        assert_eq!(o.status.code(), Some(0), "{d}: {}", stderr(&o));
        assert_eq!(v["response"], "complete", "{d}");
        assert_eq!(v["dialect"], d);
        let (_, from_stream) = export(&stream, &[]);
        let (o, from_whole) = export(&whole, &[]);
        assert_eq!(o.status.code(), Some(0), "{d}: {}", stderr(&o));
        assert_eq!(from_whole, from_stream, "{d}: same export as the stream");
        assert_eq!(from_whole.as_array().unwrap().len(), 2);
    }
    // Quirks shape a stream; a non-streaming response has none.
    let o = run(&["stub", "--seed", "--non-streaming", "--quirk", "crlf"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Sends a raw HTTP/1.1 POST and returns the raw response (read until the peer closes).
fn post(url: &str, path: &str, body: &str) -> String {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut sock = std::net::TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        sock,
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = Vec::new();
    sock.read_to_end(&mut response).ok();
    String::from_utf8_lossy(&response).into_owned()
}

#[test]
fn serve_answers_with_the_whole_body_and_its_content_length() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("chat.ron");
    let o = run(&[
        "stub",
        "--seed",
        "--non-streaming",
        "--read-bytes",
        "64",
        "-o",
        rec.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = sse_replay_core::recording::Recording::load(&rec)
        .unwrap()
        .body();
    let (_server, url, _) = common::start_server(&[
        "serve",
        rec.to_str().unwrap(),
        "--addr",
        "127.0.0.1:0",
        "--instant",
    ]);
    let response = post(&url, "/v1/chat/completions", "{}");
    let (head, body) = response.split_once("\r\n\r\n").expect(&response);
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.lines()
            .any(|l| l == format!("content-length: {}", want.len())),
        "{head}"
    );
    assert!(!head.contains("transfer-encoding"), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(body.as_bytes(), want.as_slice());

    // A client (the recorder) reads it and the recording checks as a complete response.
    let out = dir.path().join("again.ron");
    let o = run(&[
        "record",
        &format!("{url}v1/chat/completions"),
        "-d",
        "{}",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (o, v) = check_json(&out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(v["response"], "complete");
    assert_eq!(v["calls"].as_array().unwrap().len(), 2);
}

const UPSTREAM_JSON: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"深圳","days":3}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}"#;

#[test]
fn record_of_a_json_upstream_checks_as_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, _requests) = common::canned_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json",
        UPSTREAM_JSON,
    );
    let out = dir.path().join("anthropic.ron");
    let o = run(&[
        "record",
        &format!("{upstream}/v1/messages"),
        "-d",
        r#"{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[]}"#,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (o, v) = check_json(&out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(v["response"], "complete");
    assert_eq!(v["dialect"], "anthropic-messages");
    assert_eq!(v["timing_known"], true);
    assert_eq!(v["calls"][0]["name"], "get_weather");
    assert_eq!(
        v["calls"][0]["arguments"],
        json!({"city": "深圳", "days": 3})
    );
}

#[test]
fn the_proxy_captures_a_non_streaming_llm_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, _requests) = common::canned_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json",
        UPSTREAM_JSON,
    );
    let captures = dir.path().join("captures");
    let (_proxy, proxy, lines) = common::start_server(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--out",
        captures.to_str().unwrap(),
    ]);
    // A request that asks for a stream but gets JSON back (an error, say) is not captured.
    let response = post(&proxy, "/v1/messages", r#"{"stream":true}"#);
    assert!(response.ends_with(UPSTREAM_JSON), "{response}");
    // Without "stream": true, the JSON answer is captured once it has arrived whole.
    let response = post(&proxy, "/v1/messages", r#"{"model":"m"}"#);
    assert!(response.ends_with(UPSTREAM_JSON), "{response}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut saved = None;
    while saved.is_none() && std::time::Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            saved = line.contains(".ron").then_some(line);
        }
    }
    let saved = saved.expect("the proxy reported no capture");
    let files: Vec<PathBuf> = std::fs::read_dir(&captures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    assert_eq!(files.len(), 1, "one capture: {saved}");
    let (o, v) = check_json(&files[0]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(v["response"], "complete");
    assert_eq!(v["calls"][0]["name"], "get_weather");
}
