//! The dialects beyond OpenAI Chat, the provider quirks, the bundled recordings and the imports,
//! at the library level (their command-line side and the snapshots are the root `tests/it/dialects.rs`).
//!
//! - Table-driven cases per dialect and per quirk: small hand-written streams, with the calls a
//!   correct reader must extract, the findings that must be shown and how the stream ends.
//! - The chunking property for every dialect: the same bytes split at every offset (small streams)
//!   and at random offsets (fastrand, seeded) give identical calls and events.
//! - The bundled recordings: rebuilt from their specs, each quirk differing from its clean twin
//!   only in the quirk, and the shapes real providers send.
//! - Imports of small hand-written HAR, cassette and JSON-lines files (`tests/data/import/`),
//!   including a malformed one of each: a clear error.

use crate::common::{analyse_raw, call_summary, repo_root as manifest};
use crate::data::bundled;
use serde_json::{Value, json};
use sse_replay_core::accumulate::Call;
use sse_replay_core::analysis::{Analysis, SourceInfo, StreamEnding};
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::import::{self, ImportError};
use sse_replay_core::pipeline::{EventRecord, Options, PipelineOutput, run_chunks};
use sse_replay_core::probe::{self, ReadOptions};
use sse_replay_core::recording::{self, Recording};
use std::path::{Path, PathBuf};

use crate::common;

/// Import a file with the default options, as `sse-replay import` does.
fn import_path(path: &Path) -> Result<Vec<Recording>, ImportError> {
    let probe =
        probe::open(path, ReadOptions::default()).map_err(|e| import::open_error(path, e))?;
    import::import(probe).map(|i| i.recordings)
}

/// `event: NAME` + `data: DATA` + blank line.
fn ev(name: &str, data: &str) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// `data: DATA` + blank line.
fn data(d: &str) -> String {
    format!("data: {d}\n\n")
}

/// One expected call: id (None = no id), name, parsed arguments (None = must fail to parse).
type Want = (Option<&'static str>, &'static str, Option<Value>);

struct Case {
    name: &'static str,
    body: String,
    dialect: DialectKind,
    calls: Vec<Want>,
    /// Finding labels that must be present.
    findings: &'static [&'static str],
    /// Finding labels that must be absent.
    absent: &'static [&'static str],
    /// `Analysis::all_ok()`, the `check` exit-code condition.
    ok: bool,
}

fn anthropic_cases() -> Vec<Case> {
    let start = ev(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x"}}"#,
    );
    let text_block = [
        ev("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
        ev("ping", r#"{"type": "ping"}"#),
        ev("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking."}}"#),
        ev("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
    ]
    .concat();
    let tool_start = |i: u32, id: &str, name: &str| {
        ev(
            "content_block_start",
            &format!(
                r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"{id}","name":"{name}","input":{{}}}}}}"#
            ),
        )
    };
    let delta = |i: u32, p: &str| {
        ev("content_block_delta", &json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": p}}).to_string())
    };
    let stop = |i: u32| {
        ev(
            "content_block_stop",
            &format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
        )
    };
    let end = |reason: &str| {
        [ev("message_delta", &format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}","stop_sequence":null}}}}"#)), ev("message_stop", r#"{"type":"message_stop"}"#)].concat()
    };
    vec![
        Case {
            name: "anthropic: text block at 0, two tool_use blocks keyed by block index",
            body: [
                start.clone(),
                text_block.clone(),
                tool_start(1, "toolu_a", "get_weather"),
                delta(1, ""),
                delta(1, r#"{"city": "Pa"#),
                delta(1, r#"ris"}"#),
                stop(1),
                tool_start(2, "toolu_b", "get_time"),
                delta(2, r#"{"tz":"CET"}"#),
                stop(2),
                end("tool_use"),
            ]
            .concat(),
            dialect: DialectKind::AnthropicMessages,
            calls: vec![(Some("toolu_a"), "get_weather", Some(json!({"city": "Paris"}))), (Some("toolu_b"), "get_time", Some(json!({"tz": "CET"})))],
            findings: &["ping-event"],
            absent: &["unexpected-shape", "ended-without-finish"],
            ok: true,
        },
        Case {
            name: "anthropic: a no-argument tool sends only \"\" and becomes {}",
            body: [start.clone(), tool_start(0, "toolu_n", "list_issues"), delta(0, ""), stop(0), end("tool_use")].concat(),
            dialect: DialectKind::AnthropicMessages,
            calls: vec![(Some("toolu_n"), "list_issues", Some(json!({})))],
            findings: &["empty-arguments"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "anthropic: event: error overloaded_error stops the stream, keeps what arrived",
            body: [
                start.clone(),
                tool_start(0, "toolu_e", "f"),
                delta(0, r#"{"a":"#),
                ev("error", r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
                delta(0, "1}"),
            ]
            .concat(),
            dialect: DialectKind::AnthropicMessages,
            calls: vec![(Some("toolu_e"), "f", None)],
            findings: &["provider-error", "incomplete-call"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "anthropic: stop_reason max_tokens is an abnormal finish and the cut call fails",
            body: [start.clone(), tool_start(0, "toolu_m", "f"), delta(0, r#"{"text": "a long"#), end("max_tokens")].concat(),
            dialect: DialectKind::AnthropicMessages,
            calls: vec![(Some("toolu_m"), "f", None)],
            findings: &["abnormal-finish", "parse-failed"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "anthropic: JSON lines (SDK fixture form) with pings",
            body: [
                r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[]}}"#,
                r#"{"type":"ping"}"#,
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_j","name":"g","input":{}}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"k\":true}"}}"#,
                r#"{"type":"content_block_stop","index":1}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
                r#"{"type":"message_stop"}"#,
            ]
            .join("\n"),
            dialect: DialectKind::AnthropicMessages,
            calls: vec![(Some("toolu_j"), "g", Some(json!({"k": true})))],
            findings: &["ping-event"],
            absent: &["unterminated-event"],
            ok: true,
        },
        Case {
            name: "anthropic: input_json_delta for a block that never started as tool_use",
            body: [start.clone(), delta(3, "{}"), end("tool_use")].concat(),
            dialect: DialectKind::AnthropicMessages,
            calls: vec![(None, "", Some(json!({})))],
            findings: &["unexpected-shape"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "anthropic: last event without its blank line is discarded (WHATWG) but the call is complete",
            body: [start, tool_start(0, "toolu_u", "f"), delta(0, "{}"), stop(0), "event: message_stop\ndata: {\"type\":\"message_stop\"}".to_owned()].concat(),
            dialect: DialectKind::AnthropicMessages,
            calls: vec![(Some("toolu_u"), "f", Some(json!({})))],
            findings: &["unterminated-event"],
            absent: &["ended-without-finish"],
            ok: true,
        },
    ]
}

fn responses_cases() -> Vec<Case> {
    let created = ev(
        "response.created",
        r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}"#,
    );
    let added = |item: &str, call: &str, name: &str, out: u32| {
        ev(
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": out, "item": {"id": item, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call, "name": name}}).to_string(),
        )
    };
    let delta = |item: &str, out: u32, d: &str| {
        ev(
            "response.function_call_arguments.delta",
            &json!({"type": "response.function_call_arguments.delta", "item_id": item, "output_index": out, "delta": d, "obfuscation": "xyz"}).to_string(),
        )
    };
    let done = |item: &str, out: u32, args: &str| {
        [
            ev("response.function_call_arguments.done", &json!({"type": "response.function_call_arguments.done", "item_id": item, "output_index": out, "arguments": args}).to_string()),
            ev("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": out, "item": {"id": item, "type": "function_call", "status": "completed", "arguments": args}}).to_string()),
        ]
        .concat()
    };
    let completed = ev(
        "response.completed",
        r#"{"type":"response.completed","response":{"id":"resp_1","status":"completed"}}"#,
    );
    vec![
        Case {
            name: "responses: deltas keyed by item_id, call_id as the id, .done agrees",
            body: [
                created.clone(),
                added("fc_1", "call_1", "get_weather", 0),
                delta("fc_1", 0, r#"{"city":"#),
                delta("fc_1", 0, r#""Oslo"}"#),
                done("fc_1", 0, r#"{"city":"Oslo"}"#),
                added("fc_2", "call_2", "get_time", 1),
                delta("fc_2", 1, "{}"),
                done("fc_2", 1, "{}"),
                completed.clone(),
            ]
            .concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![(Some("call_1"), "get_weather", Some(json!({"city": "Oslo"}))), (Some("call_2"), "get_time", Some(json!({})))],
            findings: &[],
            absent: &["arguments-mismatch", "done-sentinel", "ended-without-finish"],
            ok: true,
        },
        Case {
            name: "responses: .done arguments that differ from the deltas are an arguments-mismatch",
            body: [created.clone(), added("fc_1", "call_1", "f", 0), delta("fc_1", 0, r#"{"a":1}"#), done("fc_1", 0, r#"{"a":2}"#), completed.clone()].concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![(Some("call_1"), "f", Some(json!({"a": 1})))],
            findings: &["arguments-mismatch"],
            absent: &["arguments-only-in-done"],
            // An error-severity finding: the verdict is not OK.
            ok: false,
        },
        Case {
            name: "responses: arguments only in the .done events (no .delta) are the call's arguments",
            body: [created.clone(), added("fc_1", "call_1", "get_weather", 0), done("fc_1", 0, r#"{"city":"Oslo"}"#), completed.clone()].concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![(Some("call_1"), "get_weather", Some(json!({"city": "Oslo"})))],
            findings: &["arguments-only-in-done"],
            absent: &["arguments-mismatch", "ended-without-finish"],
            ok: true,
        },
        Case {
            name: "responses: arguments only in response.output_item.done",
            body: [
                created.clone(),
                added("fc_1", "call_1", "f", 0),
                ev("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "status": "completed", "arguments": "{\"a\":[1,2]}", "call_id": "call_1", "name": "f"}}).to_string()),
                completed.clone(),
            ]
            .concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![(Some("call_1"), "f", Some(json!({"a": [1, 2]})))],
            findings: &["arguments-only-in-done"],
            absent: &["arguments-mismatch"],
            ok: true,
        },
        Case {
            name: "responses: response.failed is a provider error with its message",
            body: [
                created.clone(),
                added("fc_1", "call_1", "f", 0),
                delta("fc_1", 0, r#"{"a""#),
                ev("response.failed", r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model crashed"}}}"#),
            ]
            .concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![(Some("call_1"), "f", None)],
            findings: &["provider-error"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "responses: response.incomplete finishes but is flagged",
            body: [
                created.clone(),
                added("fc_1", "call_1", "f", 0),
                delta("fc_1", 0, r#"{"a":1}"#),
                done("fc_1", 0, r#"{"a":1}"#),
                ev("response.incomplete", r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}"#),
            ]
            .concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![(Some("call_1"), "f", Some(json!({"a": 1})))],
            findings: &["abnormal-finish"],
            absent: &["ended-without-finish"],
            ok: true,
        },
        Case {
            name: "responses: a delta for an item nobody announced",
            body: [created.clone(), delta("fc_9", 0, "{}"), completed.clone()].concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![(None, "", Some(json!({})))],
            findings: &["unexpected-shape"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "responses: an error event",
            body: [created, ev("error", r#"{"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}"#)].concat(),
            dialect: DialectKind::OpenAiResponses,
            calls: vec![],
            findings: &["provider-error", "no-tool-calls"],
            absent: &[],
            ok: false,
        },
    ]
}

fn gemini_cases() -> Vec<Case> {
    let chunk = |parts: Value, finish: Option<&str>| {
        let mut c = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(f) = finish {
            c["finishReason"] = json!(f);
        }
        data(&json!({"candidates": [c], "modelVersion": "gemini-x"}).to_string())
    };
    let fc = |v: Value| json!([{"functionCall": v}]);
    let stop = chunk(json!([{"text": ""}]), Some("STOP"));
    vec![
        Case {
            name: "gemini: whole-object args, no id, finishReason STOP",
            body: [chunk(fc(json!({"name": "weather", "args": {"location": "San Francisco"}})), None), stop.clone()].concat(),
            dialect: DialectKind::Gemini,
            calls: vec![(None, "weather", Some(json!({"location": "San Francisco"})))],
            findings: &["no-call-id"],
            absent: &["object-arguments", "ended-without-finish"],
            ok: true,
        },
        Case {
            name: "gemini: CRLF framing, two calls in one chunk, finish in the same chunk",
            body: chunk(
                json!([{"functionCall": {"name": "a", "args": {"x": 1}}}, {"functionCall": {"name": "b", "args": {}}}]),
                Some("STOP"),
            )
            .replace('\n', "\r\n"),
            dialect: DialectKind::Gemini,
            calls: vec![(None, "a", Some(json!({"x": 1}))), (None, "b", Some(json!({})))],
            findings: &["crlf-line-endings", "no-call-id"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "gemini: a functionCall id is kept; no args at all is {}",
            body: [chunk(fc(json!({"id": "fc_7", "name": "noop"})), None), stop.clone()].concat(),
            dialect: DialectKind::Gemini,
            calls: vec![(Some("fc_7"), "noop", Some(json!({})))],
            findings: &["empty-arguments"],
            absent: &["no-call-id"],
            ok: true,
        },
        Case {
            // The model tried to call a function and no call came out of it: a lost call.
            name: "gemini: finishReason MALFORMED_FUNCTION_CALL with no call is a lost tool call",
            body: chunk(json!([{"text": ""}]), Some("MALFORMED_FUNCTION_CALL")),
            dialect: DialectKind::Gemini,
            calls: vec![],
            findings: &["abnormal-finish", "lost-tool-call"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "gemini: an error object mid-stream is a provider error",
            body: [
                chunk(json!([{"text": "Let me"}]), None),
                data(r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#),
            ]
            .concat(),
            dialect: DialectKind::Gemini,
            calls: vec![],
            findings: &["provider-error", "no-tool-calls"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "vertex: partialArgs with continued strings, numbers, booleans, null, nested paths; two calls",
            body: [
                chunk(fc(json!({"name": "plan", "willContinue": true})), None),
                chunk(fc(json!({"partialArgs": [{"jsonPath": "$.city", "stringValue": "Bos", "willContinue": true}], "willContinue": true})), None),
                chunk(fc(json!({"partialArgs": [{"jsonPath": "$.city", "stringValue": "ton"}, {"jsonPath": "$.days", "numberValue": 3}], "willContinue": true})), None),
                chunk(fc(json!({"partialArgs": [{"jsonPath": "$.opts.metric", "boolValue": false}, {"jsonPath": "$.stops[1]", "stringValue": "NYC"}, {"jsonPath": "$['note']", "nullValue": "NULL_VALUE"}], "willContinue": true})), None),
                chunk(json!([{"functionCall": {}}, {"functionCall": {"name": "ping", "partialArgs": [{"jsonPath": "$.n", "numberValue": 1}]}}]), None),
                stop.clone(),
            ]
            .concat(),
            dialect: DialectKind::Gemini,
            calls: vec![
                (None, "plan", Some(json!({"city": "Boston", "days": 3, "opts": {"metric": false}, "stops": [null, "NYC"], "note": null}))),
                (None, "ping", Some(json!({"n": 1}))),
            ],
            findings: &["partial-args", "no-call-id"],
            absent: &["unexpected-shape"],
            ok: true,
        },
        Case {
            name: "vertex: finishReason while a call still continues closes it, flagged",
            body: [
                chunk(fc(json!({"name": "f", "id": "c1", "willContinue": true})), None),
                chunk(fc(json!({"partialArgs": [{"jsonPath": "$.q", "stringValue": "ab", "willContinue": true}], "willContinue": true})), Some("STOP")),
            ]
            .concat(),
            dialect: DialectKind::Gemini,
            calls: vec![(Some("c1"), "f", Some(json!({"q": "ab"})))],
            findings: &["unexpected-shape", "partial-args"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "vertex: an unsupported jsonPath is reported, the rest assembled",
            body: [chunk(fc(json!({"name": "f", "partialArgs": [{"jsonPath": "$..x", "stringValue": "1"}, {"jsonPath": "$.y", "numberValue": 2}]})), None), stop].concat(),
            dialect: DialectKind::Gemini,
            calls: vec![(None, "f", Some(json!({"y": 2})))],
            findings: &["unexpected-shape"],
            absent: &[],
            ok: true,
        },
    ]
}

fn ollama_cases() -> Vec<Case> {
    let call = |name: &str, args: Value| {
        json!({"model": "llama3.2", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]}, "done": false}).to_string()
    };
    let done = |reason: &str| {
        json!({"model": "llama3.2", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": reason}).to_string()
    };
    vec![
        Case {
            name: "ollama: NDJSON, complete calls with object arguments, done: true",
            body: [
                call("get_weather", json!({"city": "Oslo"})),
                call("get_time", json!({})),
                done("stop"),
            ]
            .join("\n")
                + "\n",
            dialect: DialectKind::Ollama,
            calls: vec![
                (None, "get_weather", Some(json!({"city": "Oslo"}))),
                (None, "get_time", Some(json!({}))),
            ],
            findings: &["no-call-id"],
            absent: &["object-arguments", "abnormal-finish"],
            ok: true,
        },
        Case {
            name: "ollama: done_reason length is an abnormal finish",
            body: [call("f", json!({"a": 1})), done("length")].join("\n"),
            dialect: DialectKind::Ollama,
            calls: vec![(None, "f", Some(json!({"a": 1})))],
            findings: &["abnormal-finish"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "ollama: an error line is a provider error",
            body: [
                call("f", json!({"a": 1})),
                r#"{"error":"model runner has unexpectedly stopped"}"#.to_owned(),
            ]
            .join("\n"),
            dialect: DialectKind::Ollama,
            calls: vec![(None, "f", Some(json!({"a": 1})))],
            findings: &["provider-error"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "ollama: calls complete on their own even without done",
            body: call("f", json!({"a": 1})),
            dialect: DialectKind::Ollama,
            calls: vec![(None, "f", Some(json!({"a": 1})))],
            findings: &[],
            absent: &["ended-without-finish"],
            ok: true,
        },
    ]
}

/// A Gemini `streamGenerateContent` body without `alt=sse`: one JSON array, pretty-printed
/// elements separated by `\n,\r\n` (hand-derived from the REST endpoint's documented shape: no
/// real recording with function calls was found).
fn gemini_array(elements: &[Value], closed: bool) -> String {
    let mut s = String::from("[");
    for (i, e) in elements.iter().enumerate() {
        if i > 0 {
            s.push_str("\n,\r\n");
        }
        s.push_str(&serde_json::to_string_pretty(e).expect("json"));
    }
    if closed {
        s.push_str("\n]");
    }
    s
}

fn gemini_array_cases() -> Vec<Case> {
    let cand = |parts: Value, finish: Option<&str>| {
        let mut c = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(f) = finish {
            c["finishReason"] = json!(f);
        }
        json!({"candidates": [c], "usageMetadata": {"promptTokenCount": 9}, "modelVersion": "gemini-2.5-flash"})
    };
    let call = cand(
        json!([{"functionCall": {"name": "get_weather", "args": {"city": "深圳", "days": 3}}}]),
        None,
    );
    let stop = cand(json!([{"text": ""}]), Some("STOP"));
    let partial = [
        cand(
            json!([{"functionCall": {"name": "light", "willContinue": true}}]),
            None,
        ),
        cand(
            json!([{"functionCall": {"partialArgs": [{"jsonPath": "$.room", "stringValue": "liv", "willContinue": true}], "willContinue": true}}]),
            None,
        ),
        cand(
            json!([{"functionCall": {"partialArgs": [{"jsonPath": "$.room", "stringValue": "ing"}], "willContinue": true}}]),
            None,
        ),
        cand(json!([{"functionCall": {}}]), Some("STOP")),
    ];
    vec![
        Case {
            name: "gemini array: pretty-printed elements, \\n,\\r\\n between them",
            body: gemini_array(&[call.clone(), stop.clone()], true),
            dialect: DialectKind::Gemini,
            calls: vec![(
                None,
                "get_weather",
                Some(json!({"city": "深圳", "days": 3})),
            )],
            findings: &["no-call-id"],
            absent: &["ended-without-finish", "non-json-data"],
            ok: true,
        },
        Case {
            name: "gemini array: partialArgs streamed across elements",
            body: gemini_array(&partial, true),
            dialect: DialectKind::Gemini,
            calls: vec![(None, "light", Some(json!({"room": "living"})))],
            findings: &["partial-args"],
            absent: &["ended-without-finish"],
            ok: true,
        },
        Case {
            name: "gemini array: never closed, last element cut: ended without finish",
            body: {
                let whole = gemini_array(&[call.clone(), call.clone(), stop.clone()], false);
                let cut = whole.find("\n,\r\n").expect("separator");
                whole[..cut + 40].to_owned()
            },
            dialect: DialectKind::Gemini,
            calls: vec![(
                None,
                "get_weather",
                Some(json!({"city": "深圳", "days": 3})),
            )],
            findings: &["unterminated-event", "ended-without-finish"],
            absent: &[],
            ok: false,
        },
        Case {
            // `$alt=json;enum-encoding=int`: finishReason, safety categories and probabilities,
            // modalities all numbers; the call sits on the finishing element.
            name: "gemini array: integer enums, the call on the finishing element",
            body: gemini_array(
                &[
                    json!({"candidates": [{"content": {"parts": [{"text": "Let me check."}], "role": "model"}, "index": 0, "safetyRatings": [{"category": 8, "probability": 1}]}], "usageMetadata": {"promptTokenCount": 9, "promptTokensDetails": [{"modality": 1, "tokenCount": 9}]}}),
                    json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}], "role": "model"}, "finishReason": 1, "index": 0, "safetyRatings": [{"category": 8, "probability": 1}]}], "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5}}),
                ],
                true,
            ),
            dialect: DialectKind::Gemini,
            calls: vec![(None, "get_weather", Some(json!({"city": "Paris"})))],
            findings: &["no-call-id"],
            absent: &[
                "ended-without-finish",
                "unexpected-shape",
                "abnormal-finish",
                "lost-tool-call",
            ],
            ok: true,
        },
        Case {
            name: "gemini array: integer finishReason 2 is MAX_TOKENS, an abnormal finish",
            body: gemini_array(
                &[
                    json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {"a": 1}}}], "role": "model"}, "finishReason": 2, "index": 0}]}),
                ],
                true,
            ),
            dialect: DialectKind::Gemini,
            calls: vec![(None, "f", Some(json!({"a": 1})))],
            findings: &["abnormal-finish"],
            absent: &["ended-without-finish", "unexpected-shape"],
            ok: true,
        },
    ]
}

fn cohere_cases() -> Vec<Case> {
    let start = |i: u32, id: &str, name: &str, args: &str| {
        json!({"type": "tool-call-start", "index": i, "delta": {"message": {"tool_calls": {"id": id, "type": "function", "function": {"name": name, "arguments": args}}}}}).to_string()
    };
    let delta = |i: u32, args: &str| {
        json!({"type": "tool-call-delta", "index": i, "delta": {"message": {"tool_calls": {"function": {"arguments": args}}}}}).to_string()
    };
    let end = |i: u32| json!({"type": "tool-call-end", "index": i}).to_string();
    let msg_start = r#"{"id":"m1","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}"#.to_owned();
    let plan =
        r#"{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will"}}}"#.to_owned();
    let msg_end =
        |r: &str| json!({"type": "message-end", "delta": {"finish_reason": r}}).to_string();
    let sse = |lines: &[String]| {
        lines
            .iter()
            .map(|l| {
                let t: Value = serde_json::from_str(l).expect("json");
                ev(t["type"].as_str().unwrap_or("message"), l)
            })
            .collect::<String>()
            + "data: [DONE]\n\n"
    };
    let two = vec![
        msg_start.clone(),
        plan.clone(),
        start(0, "w_1", "weather", ""),
        delta(0, "{\"location\":"),
        delta(0, " \"Paris\"}"),
        end(0),
        start(1, "t_1", "time", ""),
        delta(1, "{}"),
        end(1),
        msg_end("TOOL_CALL"),
    ];
    vec![
        Case {
            name: "cohere: JSON lines, two calls keyed by index",
            body: two.join("\n"),
            dialect: DialectKind::Cohere,
            calls: vec![
                (Some("w_1"), "weather", Some(json!({"location": "Paris"}))),
                (Some("t_1"), "time", Some(json!({}))),
            ],
            findings: &[],
            absent: &["ended-without-finish", "arguments-in-start"],
            ok: true,
        },
        Case {
            name: "cohere: SSE with event: lines and [DONE]",
            body: sse(&two),
            dialect: DialectKind::Cohere,
            calls: vec![
                (Some("w_1"), "weather", Some(json!({"location": "Paris"}))),
                (Some("t_1"), "time", Some(json!({}))),
            ],
            findings: &["done-sentinel"],
            absent: &["ended-without-finish"],
            ok: true,
        },
        Case {
            name: "cohere: no-argument call (start with \"\", then end) and first arguments in start",
            body: [
                msg_start.clone(),
                start(0, "c_1", "now", ""),
                end(0),
                start(1, "c_2", "f", "{\"a\""),
                delta(1, ":1}"),
                end(1),
                msg_end("TOOL_CALL"),
            ]
            .join("\n"),
            dialect: DialectKind::Cohere,
            calls: vec![
                (Some("c_1"), "now", Some(json!({}))),
                (Some("c_2"), "f", Some(json!({"a": 1}))),
            ],
            findings: &["empty-arguments", "arguments-in-start"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "cohere: finish_reason ERROR is a provider error; MAX_TOKENS abnormal",
            body: [msg_start.clone(), start(0, "c", "f", ""), delta(0, "{\"a\":"), msg_end("ERROR")].join("\n"),
            dialect: DialectKind::Cohere,
            calls: vec![(Some("c"), "f", None)],
            findings: &["provider-error"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "cohere: content and citation events carry no calls",
            body: [
                msg_start,
                r#"{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"text","text":""}}}}"#.to_owned(),
                r#"{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"Hi"}}}}"#.to_owned(),
                r#"{"type":"citation-start","index":0,"delta":{"message":{"citations":{"start":0,"end":2,"text":"Hi","sources":[{"type":"tool","id":"x:0"}]}}}}"#.to_owned(),
                r#"{"type":"citation-end","index":0}"#.to_owned(),
                r#"{"type":"content-end","index":0}"#.to_owned(),
                msg_end("COMPLETE"),
            ]
            .join("\n"),
            dialect: DialectKind::Cohere,
            calls: vec![],
            findings: &["no-tool-calls"],
            absent: &["nothing-recognised"],
            ok: true,
        },
    ]
}

fn assistants_cases() -> Vec<Case> {
    let step_delta = |step: &str, tc: Value| {
        json!({"id": step, "object": "thread.run.step.delta", "delta": {"step_details": {"type": "tool_calls", "tool_calls": [tc]}}}).to_string()
    };
    let required = |calls: Value| {
        json!({"id": "run_1", "object": "thread.run", "status": "requires_action", "required_action": {"type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": calls}}}).to_string()
    };
    let open = step_delta(
        "step_1",
        json!({"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "", "output": null}}),
    );
    let piece = |a: &str| {
        step_delta(
            "step_1",
            json!({"index": 0, "type": "function", "function": {"arguments": a}}),
        )
    };
    let req = |a: &str| {
        required(
            json!([{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": a}}]),
        )
    };
    vec![
        Case {
            name: "assistants: step deltas, requires_action, done",
            body: [
                ev("thread.run.step.delta", &open),
                ev("thread.run.step.delta", &piece("{\"a\":")),
                ev("thread.run.step.delta", &piece("1}")),
                ev("thread.run.requires_action", &req("{\"a\":1}")),
                ev("done", "[DONE]"),
            ]
            .concat(),
            dialect: DialectKind::OpenAiAssistants,
            calls: vec![(Some("call_1"), "f", Some(json!({"a": 1})))],
            findings: &["done-sentinel"],
            absent: &["arguments-mismatch", "ended-without-finish"],
            ok: true,
        },
        Case {
            name: "assistants: requires_action differing from the deltas is arguments-mismatch",
            body: [
                ev("thread.run.step.delta", &open),
                ev("thread.run.step.delta", &piece("{\"a\":1}")),
                ev("thread.run.requires_action", &req("{\"a\":2}")),
            ]
            .concat(),
            dialect: DialectKind::OpenAiAssistants,
            calls: vec![(Some("call_1"), "f", Some(json!({"a": 1})))],
            findings: &["arguments-mismatch"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "assistants: a call only in requires_action; a dump without event names",
            body: [
                r#"{"id":"run_1","object":"thread.run","status":"in_progress"}"#.to_owned(),
                req("{\"b\":true}"),
            ]
            .join("\n"),
            dialect: DialectKind::OpenAiAssistants,
            calls: vec![(Some("call_1"), "f", Some(json!({"b": true})))],
            findings: &["arguments-only-in-done"],
            absent: &[],
            ok: true,
        },
        Case {
            name: "assistants: thread.run.failed is a provider error; code_interpreter a server tool",
            body: [
                ev("thread.run.step.delta", &step_delta("step_2", json!({"index": 0, "id": "ci_1", "type": "code_interpreter", "code_interpreter": {"input": "print(1)", "outputs": []}}))),
                ev("thread.run.failed", r#"{"id":"run_1","object":"thread.run","status":"failed","last_error":{"code":"server_error","message":"Sorry"}}"#),
            ]
            .concat(),
            dialect: DialectKind::OpenAiAssistants,
            calls: vec![(Some("ci_1"), "code_interpreter", Some(json!({})))],
            findings: &["server-tool", "provider-error"],
            absent: &[],
            ok: false,
        },
    ]
}

fn ai_sdk_cases() -> Vec<Case> {
    let c = |v: Value| data(&v.to_string());
    vec![
        Case {
            name: "ai-sdk: tool-input-start/-delta/-available, finish, [DONE]",
            body: [
                c(json!({"type": "start"})),
                c(json!({"type": "tool-input-start", "toolCallId": "call_1", "toolName": "f"})),
                c(json!({"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": "{\"a\":"})),
                c(json!({"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": "1}"})),
                c(json!({"type": "tool-input-available", "toolCallId": "call_1", "toolName": "f", "input": {"a": 1}})),
                c(json!({"type": "finish"})),
                data("[DONE]"),
            ]
            .concat(),
            dialect: DialectKind::AiSdkUi,
            calls: vec![(Some("call_1"), "f", Some(json!({"a": 1})))],
            findings: &["done-sentinel"],
            absent: &["arguments-mismatch"],
            ok: true,
        },
        Case {
            name: "ai-sdk: available differing by value is arguments-mismatch; error chunk",
            body: [
                c(json!({"type": "tool-input-start", "toolCallId": "call_1", "toolName": "f"})),
                c(json!({"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": "{\"a\":1}"})),
                c(json!({"type": "tool-input-available", "toolCallId": "call_1", "toolName": "f", "input": {"a": 2}})),
                c(json!({"type": "error", "errorText": "boom"})),
            ]
            .concat(),
            dialect: DialectKind::AiSdkUi,
            calls: vec![(Some("call_1"), "f", Some(json!({"a": 1})))],
            findings: &["arguments-mismatch", "provider-error"],
            absent: &[],
            ok: false,
        },
        Case {
            name: "ai-sdk: a JSON array dump; providerExecuted is a server tool",
            body: serde_json::to_string_pretty(&json!([
                {"type": "tool-input-available", "toolCallId": "ws_1", "toolName": "web_search", "input": {"q": "x"}, "providerExecuted": true},
                {"type": "tool-input-available", "toolCallId": "call_2", "toolName": "g", "input": {}},
                {"type": "finish"}
            ]))
            .expect("json"),
            dialect: DialectKind::AiSdkUi,
            calls: vec![(Some("ws_1"), "web_search", Some(json!({"q": "x"}))), (Some("call_2"), "g", Some(json!({})))],
            findings: &["server-tool"],
            absent: &["ended-without-finish"],
            ok: true,
        },
    ]
}

fn check_case(c: &Case) {
    let a = analyse_raw(c.body.as_bytes(), None);
    assert_eq!(a.dialect, c.dialect, "{}: dialect", c.name);
    assert!(
        a.dialect_known,
        "{}: dialect detected from the events",
        c.name
    );
    let got: Vec<(Option<String>, String, Option<Value>)> = a
        .calls
        .iter()
        .map(|call| (call.id.clone(), call.name.clone(), call.value().cloned()))
        .collect();
    let want: Vec<(Option<String>, String, Option<Value>)> = c
        .calls
        .iter()
        .map(|(id, name, v)| (id.map(str::to_owned), (*name).to_owned(), v.clone()))
        .collect();
    assert_eq!(got, want, "{}: calls", c.name);
    let labels: Vec<&str> = a.findings.iter().map(|f| f.kind.label()).collect();
    for f in c.findings {
        assert!(
            labels.contains(f),
            "{}: finding {f} missing from {labels:?}",
            c.name
        );
    }
    for f in c.absent {
        assert!(
            !labels.contains(f),
            "{}: finding {f} should not be in {labels:?}",
            c.name
        );
    }
    assert_eq!(
        a.all_ok(),
        c.ok,
        "{}: all_ok (ending {:?}, findings {labels:?})",
        c.name,
        a.ending
    );
    // Forcing the right dialect changes nothing.
    let forced = analyse_raw(c.body.as_bytes(), Some(c.dialect));
    assert_eq!(
        call_summary(&forced.calls),
        call_summary(&a.calls),
        "{}: forced dialect",
        c.name
    );
}

#[test]
fn anthropic_table() {
    anthropic_cases().iter().for_each(check_case);
}

#[test]
fn responses_table() {
    responses_cases().iter().for_each(check_case);
}

#[test]
fn gemini_table() {
    gemini_cases().iter().for_each(check_case);
}

#[test]
fn ollama_table() {
    ollama_cases().iter().for_each(check_case);
}

#[test]
fn gemini_array_table() {
    gemini_array_cases().iter().for_each(check_case);
}

#[test]
fn cohere_table() {
    cohere_cases().iter().for_each(check_case);
}

#[test]
fn assistants_table() {
    assistants_cases().iter().for_each(check_case);
}

#[test]
fn ai_sdk_table() {
    ai_sdk_cases().iter().for_each(check_case);
}

#[test]
fn responses_done_is_the_original_for_checkpoint_one() {
    let case = &responses_cases()[0];
    let a = analyse_raw(case.body.as_bytes(), None);
    let cp = &a.checkpoints[0];
    assert!(
        cp.original_source
            .as_deref()
            .is_some_and(|s| s.contains(".done")),
        "{:?}",
        cp.original_source
    );
    assert_eq!(cp.verbatim.passed(), Some(true));
    assert_eq!(cp.contiguous.passed(), Some(true));
    let a = analyse_raw(responses_cases()[1].body.as_bytes(), None);
    assert_eq!(
        a.checkpoints[0].verbatim.passed(),
        Some(false),
        "mismatching .done fails ①"
    );
}

#[test]
fn provider_error_messages_are_the_providers() {
    let msg = |body: &str| match analyse_raw(body.as_bytes(), None).ending {
        StreamEnding::ProviderError { message } => message,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        msg(&anthropic_cases()[2].body),
        "overloaded_error: Overloaded"
    );
    assert_eq!(
        msg(&responses_cases()[4].body),
        "server_error: The model crashed"
    );
    assert_eq!(
        msg(&responses_cases()[7].body),
        "rate_limit_exceeded: Slow down"
    );
    assert_eq!(
        msg(&gemini_cases()[4].body),
        "UNAVAILABLE (503): The model is overloaded."
    );
    assert_eq!(
        msg(&ollama_cases()[2].body),
        "model runner has unexpectedly stopped"
    );
}

/// The OpenAI-chat quirks, through the stub builder (the same generator as the bundled recordings).
#[test]
fn chat_quirk_table() {
    use sse_replay_core::stub::{self, Layout, Quirks, StubCall, StubSpec};
    // The seed's two calls.
    let calls: Vec<StubCall> = stub::seed_example().calls;
    let table: Vec<(&str, Quirks, Layout, &[&str], bool)> = vec![
        (
            "repeat-name",
            Quirks {
                repeat_name: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["repeated-name"],
            true,
        ),
        (
            "empty-id",
            Quirks {
                empty_id_continuations: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["empty-field-continuation"],
            true,
        ),
        (
            "no-index",
            Quirks {
                no_index: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["missing-index"],
            true,
        ),
        (
            "index-from-1",
            Quirks {
                index_base: 1,
                ..Default::default()
            },
            Layout::Sequential,
            &["index-not-from-zero"],
            true,
        ),
        (
            "all-at-index-0",
            Quirks {
                all_at_index_zero: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["reused-index-new-call"],
            true,
        ),
        (
            "object-arguments",
            Quirks {
                object_arguments: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["object-arguments"],
            true,
        ),
        (
            "cumulative",
            Quirks {
                cumulative: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["cumulative-arguments", "parse-failed"],
            false,
        ),
        (
            "crlf",
            Quirks {
                crlf: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["crlf-line-endings"],
            true,
        ),
        (
            "no-space",
            Quirks {
                no_space: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["data-without-space"],
            true,
        ),
        (
            "keepalive",
            Quirks {
                keepalive_every: 3,
                ..Default::default()
            },
            Layout::Sequential,
            &["keep-alive-comment"],
            true,
        ),
        (
            "truncate",
            Quirks {
                truncate: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["ended-without-finish", "incomplete-call"],
            false,
        ),
        (
            "finish-with-last",
            Quirks {
                finish_with_last_fragment: true,
                ..Default::default()
            },
            Layout::Sequential,
            &["finish-in-same-chunk"],
            true,
        ),
        (
            "error",
            Quirks {
                error_after: Some(2),
                ..Default::default()
            },
            Layout::Sequential,
            &["provider-error"],
            false,
        ),
        (
            "interleaved",
            Quirks::default(),
            Layout::Interleaved,
            &["interleaved-calls"],
            true,
        ),
    ];
    for (name, quirks, layout, findings, ok) in table {
        let spec = StubSpec {
            calls: calls.clone(),
            quirks,
            layout,
            ..StubSpec::default()
        };
        let rec = stub::build(&spec);
        let a = Analysis::from_recording(
            &rec,
            SourceInfo {
                name: name.into(),
                kind: "stub".into(),
                timing_known: true,
            },
            Options::default(),
        );
        let labels: Vec<&str> = a.findings.iter().map(|f| f.kind.label()).collect();
        for f in findings {
            assert!(labels.contains(f), "{name}: {f} missing from {labels:?}");
        }
        assert_eq!(a.all_ok(), ok, "{name}: {labels:?}");
        if ok {
            let got: Vec<Option<&Value>> = a.calls.iter().map(Call::value).collect();
            assert_eq!(got.len(), 2, "{name}");
            assert_eq!(got[0], Some(&json!({"city": "深圳", "days": 3})), "{name}");
            assert_eq!(a.calls[0].name, "get_weather", "{name}");
            assert_eq!(a.calls[0].id.as_deref(), Some("call_1"), "{name}");
        }
    }
}

/// The stub builder in every dialect: the truth it records is what the dialect extracts.
#[test]
fn stub_every_dialect_matches_its_truth() {
    use sse_replay_core::stub::{self, Quirks, StubCall, StubSpec};
    let calls = vec![
        StubCall { id: "call_1".into(), name: "get_weather".into(), arguments: r#"{"city": "深圳", "days": 3, "hourly": true, "extra": null, "nested": {"a": [1, "x"]}}"#.into() },
        StubCall { id: "call_2".into(), name: "noop".into(), arguments: "{}".into() },
    ];
    let mut specs: Vec<(String, StubSpec)> = DialectKind::ALL
        .iter()
        .map(|&d| {
            (
                d.name().to_owned(),
                StubSpec {
                    calls: calls.clone(),
                    dialect: d,
                    fragment_chars: vec![3, 4],
                    ..StubSpec::default()
                },
            )
        })
        .collect();
    specs.push((
        "vertex".into(),
        StubSpec {
            calls: calls.clone(),
            dialect: DialectKind::Gemini,
            quirks: Quirks {
                partial_args: true,
                ..Default::default()
            },
            ..StubSpec::default()
        },
    ));
    for (name, spec) in specs {
        let rec = stub::build(&spec);
        assert_eq!(rec.meta.dialect, spec.dialect.name(), "{name}");
        let a = Analysis::from_recording(
            &rec,
            SourceInfo {
                name: name.clone(),
                kind: "stub".into(),
                timing_known: true,
            },
            Options::default(),
        );
        assert_eq!(a.dialect, spec.dialect, "{name}");
        assert!(a.all_ok(), "{name}: {:?} {:?}", a.ending, a.findings);
        assert_eq!(a.calls.len(), 2, "{name}");
        for (c, t) in a.calls.iter().zip(&rec.truth) {
            assert_eq!(
                c.value(),
                serde_json::from_str::<Value>(&t.arguments).ok().as_ref(),
                "{name}: {}",
                c.name
            );
            assert_eq!(c.name, t.name, "{name}");
            assert_eq!(c.id.clone().unwrap_or_default(), t.id, "{name}");
        }
        let labels: Vec<&str> = a.findings.iter().map(|f| f.kind.label()).collect();
        assert!(
            !labels.contains(&"arguments-mismatch"),
            "{name}: {labels:?}"
        );
    }
}

/// Streams up to this size are split at every single offset.
const EVERY_OFFSET_MAX_BYTES: usize = 6 * 1024;

fn run_split(body: &[u8], cuts: &[usize], dialect: Option<DialectKind>) -> PipelineOutput {
    run_chunks(
        common::reads(body, cuts),
        Options {
            dialect,
            framing: None,
            detail: true,
        },
    )
}

/// Events without their chunk numbers (which depend on the split by design).
fn event_summary(o: &PipelineOutput) -> Vec<(std::ops::Range<u64>, String, String, u32, u32)> {
    o.events
        .iter()
        .map(|e: &EventRecord| {
            let ty = o
                .event_types
                .get(e.type_id as usize)
                .cloned()
                .unwrap_or_default();
            (
                e.span.clone(),
                ty,
                format!("{:?}", e.kind),
                e.first_fragment,
                e.fragment_count,
            )
        })
        .collect()
}

fn assert_same(name: &str, whole: &PipelineOutput, split: &PipelineOutput, cuts: &[usize]) {
    assert_eq!(
        call_summary(&split.calls),
        call_summary(&whole.calls),
        "{name}: calls differ when cut at {cuts:?}"
    );
    assert_eq!(
        event_summary(split),
        event_summary(whole),
        "{name}: events differ when cut at {cuts:?}"
    );
    assert_eq!(
        split.dialect, whole.dialect,
        "{name}: dialect differs when cut at {cuts:?}"
    );
    assert_eq!(split.framing, whole.framing, "{name}");
    assert_eq!(
        split.finish.as_ref().map(|f| &f.reason),
        whole.finish.as_ref().map(|f| &f.reason),
        "{name}: finish at {cuts:?}"
    );
    assert_eq!(
        split.provider_error.as_ref().map(|e| &e.0),
        whole.provider_error.as_ref().map(|e| &e.0),
        "{name}"
    );
}

/// Every dialect's streams: the bundled recordings plus the table cases.
fn streams_for_chunking() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = bundled()
        .into_iter()
        .map(|(name, rec)| (name, rec.body()))
        .collect();
    for c in anthropic_cases()
        .into_iter()
        .chain(responses_cases())
        .chain(gemini_cases())
        .chain(ollama_cases())
        .chain(gemini_array_cases())
        .chain(cohere_cases())
        .chain(assistants_cases())
        .chain(ai_sdk_cases())
    {
        v.push((c.name.to_owned(), c.body.into_bytes()));
    }
    v
}

#[test]
fn chunking_property_every_offset() {
    let mut covered = std::collections::HashSet::new();
    for (name, body) in streams_for_chunking() {
        if body.len() > EVERY_OFFSET_MAX_BYTES {
            continue;
        }
        let whole = run_split(&body, &[], None);
        covered.insert(whole.dialect);
        for k in 1..body.len() {
            assert_same(&name, &whole, &run_split(&body, &[k], None), &[k]);
        }
    }
    assert_eq!(
        covered.len(),
        DialectKind::ALL.len(),
        "every dialect covered at every offset: {covered:?}"
    );
}

#[test]
fn chunking_property_random_splits() {
    let mut rng = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
    let mut covered = std::collections::HashSet::new();
    for (name, body) in streams_for_chunking() {
        let whole = run_split(&body, &[], None);
        covered.insert(whole.dialect);
        for _ in 0..40 {
            let n = 1 + rng.usize(..12);
            let mut cuts: Vec<usize> = (0..n)
                .map(|_| 1 + rng.usize(..body.len().saturating_sub(1).max(1)))
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            cuts.retain(|&c| c < body.len());
            assert_same(&name, &whole, &run_split(&body, &cuts, None), &cuts);
        }
        // Byte by byte: the worst case for every buffer.
        let every: Vec<usize> = (1..body.len()).collect();
        assert_same(&name, &whole, &run_split(&body, &every, None), &[]);
    }
    assert_eq!(covered.len(), DialectKind::ALL.len(), "{covered:?}");
}

/// Every `recordings/*.ron` is built by `sse_replay_core::bundled` (the one place they are made):
/// rebuilding each entry gives the stored file byte for byte. `UPDATE_SNAPSHOTS=1` rewrites them.
#[test]
fn bundled_recordings_are_rebuilt_from_their_specs() {
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let entries = sse_replay_core::bundled::all();
    let mut failures = Vec::new();
    for b in &entries {
        let path = manifest().join("recordings").join(&b.file);
        let text = b.build().to_ron_string();
        if update {
            std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            continue;
        }
        let stored = std::fs::read_to_string(&path).unwrap_or_default();
        if stored != text {
            failures.push(format!(
                "{} differs from what sse_replay_core::bundled builds (UPDATE_SNAPSHOTS=1 rewrites it)",
                b.file
            ));
        }
    }
    let mut files: Vec<String> = bundled()
        .into_iter()
        .map(|(n, _)| format!("{n}.ron"))
        .collect();
    let mut built: Vec<String> = entries.iter().map(|b| b.file.clone()).collect();
    files.sort();
    built.sort();
    assert_eq!(files, built, "every bundled recording has a spec");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each `quirk-*` recording is its clean twin's spec plus one quirk: without the quirk (and with
/// the sequential layout) the spec is the twin's, apart from the title, and builds the twin's bytes.
#[test]
fn quirk_recordings_differ_from_their_clean_twin_only_in_the_quirk() {
    use sse_replay_core::stub::{self, Layout, Quirks};
    let entries = sse_replay_core::bundled::all();
    let by_file = |f: &str| {
        entries
            .iter()
            .find(|b| b.file == f)
            .unwrap_or_else(|| panic!("{f} missing"))
    };
    let mut quirk_files = 0;
    for (name, _) in bundled() {
        if !name.starts_with("quirk-") {
            continue;
        }
        quirk_files += 1;
        let b = by_file(&format!("{name}.ron"));
        let twin = by_file(
            b.clean_twin
                .unwrap_or_else(|| panic!("{name}: no clean twin")),
        );
        assert!(twin.clean_twin.is_none(), "{name}: the twin is clean");
        assert_eq!(twin.spec.quirks, Quirks::default(), "{}", twin.file);
        // Exactly one deviation from the twin.
        let q = &b.spec.quirks;
        let deviations = [
            q.repeat_name,
            q.empty_id_continuations,
            q.no_index,
            q.index_base != 0,
            q.all_at_index_zero,
            q.object_arguments,
            q.cumulative,
            q.crlf,
            q.no_space,
            q.keepalive_every != 0,
            q.truncate,
            q.finish_with_last_fragment,
            q.error_after.is_some(),
            q.partial_args,
            q.args_in_start,
            q.crc_error,
            b.spec.layout != Layout::Sequential,
        ];
        assert_eq!(
            deviations.iter().filter(|d| **d).count(),
            1,
            "{name}: exactly one quirk"
        );
        let mut clean = b.spec.clone();
        clean.quirks = Quirks::default();
        clean.layout = Layout::Sequential;
        clean.title = twin.spec.title.clone();
        assert_eq!(
            clean, twin.spec,
            "{name}: the same spec as its twin minus the quirk"
        );
        let (built, stored_twin) = (
            stub::build(&clean),
            recording::load(&manifest().join("recordings").join(&twin.file)).expect("twin"),
        );
        assert_eq!(built.chunks, stored_twin.chunks, "{name}: the twin's bytes");
        assert_eq!(built.truth, stored_twin.truth, "{name}: the twin's calls");
        // And the quirk recording itself carries the same ground truth.
        let stored = recording::load(&manifest().join("recordings").join(&b.file)).expect("quirk");
        assert_eq!(
            stored.truth, stored_twin.truth,
            "{name}: same calls as the twin"
        );
    }
    assert!(quirk_files >= 9, "{quirk_files} quirk recordings");
}

/// What real SDKs require of each dialect's stream is there (field names as in the real provider
/// fixtures in tests/data/fixtures/); the seed example keeps the seed's own minimal lines.
#[test]
fn bundled_recordings_carry_what_providers_send() {
    let body = |file: &str| {
        let rec = recording::load(&manifest().join("recordings").join(file)).expect("load");
        String::from_utf8(rec.chunks.iter().flat_map(|c| c.bytes.clone()).collect()).expect("utf-8")
    };
    let datas = |file: &str| -> Vec<Value> {
        body(file)
            .lines()
            .filter_map(|l| {
                l.trim_end_matches('\r')
                    .strip_prefix("data: ")
                    .or_else(|| Some(l).filter(|l| l.starts_with('{')))
            })
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    };
    // OpenAI Chat: full envelope, role first, an opening delta with "arguments": "", finish, [DONE].
    let chat = datas("openai-chat-weather.ron");
    for c in &chat {
        for k in [
            "id",
            "object",
            "created",
            "model",
            "system_fingerprint",
            "choices",
        ] {
            assert!(c.get(k).is_some(), "chat chunk without {k}: {c}");
        }
        assert_eq!(c["object"], "chat.completion.chunk");
    }
    assert_eq!(
        chat[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": null})
    );
    assert_eq!(
        chat[1]["choices"][0]["delta"]["tool_calls"][0],
        json!({"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}})
    );
    assert_eq!(
        chat.last()
            .map(|c| c["choices"][0]["finish_reason"].clone()),
        Some(json!("tool_calls"))
    );
    assert!(body("openai-chat-weather.ron").ends_with("data: [DONE]\n\n"));
    // The seed example: exactly the seed's key set, nothing added.
    for c in datas("seed-example.ron") {
        let keys: Vec<&str> = c
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys, ["id", "choices"], "{c}");
        let ch = &c["choices"][0];
        assert!(ch["delta"].get("role").is_none());
        if let Some(tc) = ch["delta"]["tool_calls"].get(0) {
            assert!(tc.get("type").is_none(), "{tc}");
            assert_ne!(tc["function"]["arguments"], "", "no opening delta: {tc}");
        }
    }
    // Responses: created_at, sequence numbers 0.., output_index and item_id on the deltas.
    let resp = datas("openai-responses-weather.ron");
    assert_eq!(resp[0]["type"], "response.created");
    assert!(resp[0]["response"]["created_at"].is_u64());
    assert_eq!(resp[1]["type"], "response.in_progress");
    for (i, e) in resp.iter().enumerate() {
        assert_eq!(e["sequence_number"], json!(i), "{e}");
        if e["type"] == "response.function_call_arguments.delta" {
            assert!(
                e["item_id"].is_string() && e["output_index"].is_u64(),
                "{e}"
            );
        }
    }
    let last = resp.last().expect("events");
    assert_eq!(last["type"], "response.completed");
    assert_eq!(last["response"]["output"].as_array().map(Vec::len), Some(2));
    assert!(last["response"]["usage"]["output_tokens"].is_u64());
    // Anthropic: usage in message_start, a stop for every start, stop_reason and usage at the end.
    let anth = datas("anthropic-weather.ron");
    assert!(anth[0]["message"]["usage"]["input_tokens"].is_u64());
    let count = |t: &str| anth.iter().filter(|e| e["type"] == t).count();
    assert_eq!(count("content_block_start"), 3);
    assert_eq!(count("content_block_stop"), 3);
    let delta = anth
        .iter()
        .find(|e| e["type"] == "message_delta")
        .expect("message_delta");
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert!(delta["usage"]["output_tokens"].is_u64());
    // Gemini: usageMetadata, modelVersion, responseId on every chunk.
    for file in ["gemini-weather.ron", "gemini-vertex-partial-args.ron"] {
        for c in datas(file) {
            for k in ["usageMetadata", "modelVersion", "responseId"] {
                assert!(c.get(k).is_some(), "{file}: {k} missing in {c}");
            }
        }
    }
    // Ollama: model and created_at on each line; the final object has done_reason and durations.
    let ollama = datas("ollama-weather.ron");
    assert!(
        ollama
            .iter()
            .all(|l| l["model"].is_string() && l["created_at"].is_string())
    );
    let fin = ollama.last().expect("lines");
    assert_eq!(fin["done"], true);
    assert_eq!(fin["done_reason"], "stop");
    for k in [
        "total_duration",
        "load_duration",
        "prompt_eval_duration",
        "eval_duration",
        "eval_count",
    ] {
        assert!(fin[k].is_u64(), "ollama final object without {k}");
    }
}

fn data_file(name: &str) -> PathBuf {
    manifest().join("tests/data/import").join(name)
}

fn calls_of(rec: &Recording) -> Vec<(Option<String>, String, Option<Value>)> {
    let a = Analysis::from_recording(
        rec,
        SourceInfo {
            name: rec.meta.title.clone(),
            kind: "recording".into(),
            timing_known: rec.meta.timing_known,
        },
        Options::default(),
    );
    a.calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.value().cloned()))
        .collect()
}

fn assert_no_timing(rec: &Recording, what: &str) {
    assert!(!rec.meta.timing_known, "{what}: timing_known must be false");
    assert!(
        rec.meta
            .notes
            .iter()
            .any(|n| n.contains("no chunk boundaries or timing")),
        "{what}: {:?}",
        rec.meta.notes
    );
    assert!(rec.chunks.iter().all(|c| c.t_micros == 0), "{what}");
}

#[test]
fn import_har_two_streams_redacted() {
    let recs = import_path(&data_file("two-streams.har")).expect("import");
    assert_eq!(recs.len(), 2, "the text/html entry is skipped");
    assert_eq!(
        calls_of(&recs[0]),
        vec![(
            Some("call_har1".into()),
            "get_weather".into(),
            Some(json!({"city": "Paris"}))
        )]
    );
    assert_eq!(
        calls_of(&recs[1]),
        vec![(
            Some("toolu_har2".into()),
            "get_time".into(),
            Some(json!({"tz": "UTC"}))
        )],
        "base64 body"
    );
    for r in &recs {
        assert_no_timing(r, "har");
        assert_eq!(r.meta.source, "import:har");
        assert!(
            r.meta
                .notes
                .iter()
                .any(|n| n.starts_with("HAR keeps no chunk boundaries")),
            "{:?}",
            r.meta.notes
        );
    }
    let req = recs[0].request.as_ref().expect("request");
    assert_eq!(req.method, "POST");
    assert!(req.url.ends_with("api_key=REDACTED"), "{}", req.url);
    assert!(
        req.headers
            .iter()
            .any(|(n, v)| n == "Authorization" && v == "Bearer ‹redacted›"),
        "{:?}",
        req.headers
    );
    assert_eq!(req.body, r#"{"model":"gpt-4o","stream":true}"#);
    let resp = recs[0].response.as_ref().expect("response");
    assert_eq!(resp.status, 200);
    assert!(
        resp.headers
            .iter()
            .any(|(n, v)| n == "set-cookie" && v == "‹redacted›")
    );
    assert!(
        recs[1]
            .request
            .as_ref()
            .is_some_and(|r| r.headers.iter().all(|(_, v)| !v.contains("sk-ant")))
    );
    assert_eq!(recs[0].meta.created, "2025-05-01T10:00:01.000Z");
    assert!(
        recs[0].meta.title.contains("HAR entry 2 of 3"),
        "{}",
        recs[0].meta.title
    );
    // One chunk per event, the body unchanged.
    assert_eq!(recs[0].chunks.len(), 5);
    let text = std::fs::read_to_string(data_file("two-streams.har")).expect("read");
    let har: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        recs[0].body(),
        har["log"]["entries"][1]["response"]["content"]["text"]
            .as_str()
            .expect("text")
            .as_bytes()
    );
}

#[test]
fn import_cassettes() {
    let recs = import_path(&data_file("vcr-two-streams.yaml")).expect("vcr");
    assert_eq!(recs.len(), 2, "the application/json interaction is skipped");
    assert_eq!(
        calls_of(&recs[0]),
        vec![(
            Some("call_vcr".into()),
            "lookup".into(),
            Some(json!({"q": "rust"}))
        )]
    );
    assert_eq!(
        calls_of(&recs[1]),
        vec![(None, "get_weather".into(), Some(json!({"city": "Oslo"})))],
        "!!binary NDJSON body"
    );
    let req = recs[0].request.as_ref().expect("request");
    assert_eq!(req.url, "https://api.openai.com/v1/chat/completions");
    assert!(
        req.headers
            .iter()
            .any(|(n, v)| n == "Authorization" && v == "Bearer ‹redacted›"),
        "{:?}",
        req.headers
    );
    assert!(recs[0].response.as_ref().is_some_and(|r| {
        r.headers
            .iter()
            .any(|(n, v)| n == "Set-Cookie" && v == "‹redacted›")
    }));
    for r in &recs {
        assert_no_timing(r, "cassette");
        assert_eq!(r.meta.source, "import:cassette");
    }

    let recs = import_path(&data_file("pydantic-ai-style.yaml")).expect("pydantic-ai");
    assert_eq!(recs.len(), 1);
    assert_eq!(
        calls_of(&recs[0]),
        vec![(
            Some("toolu_pyd".into()),
            "get_time".into(),
            Some(json!({"city": "Tokyo"}))
        )]
    );
    let req = recs[0].request.as_ref().expect("request");
    let body: Value = serde_json::from_str(&req.body).expect("parsed_body written back as JSON");
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert!(
        req.headers
            .iter()
            .any(|(n, v)| n == "x-api-key" && v == "‹redacted›")
    );
    assert_eq!(recs[0].response.as_ref().map(|r| r.status), Some(200));
}

/// Ruby's vcr gem (`http_interactions`, `base64_string` and `!binary` bodies, `method: post`),
/// go-vcr version 2 (`status: 200 OK`, `code: 200`) and Go's httprr traces (the wire, a chunked
/// body): the files in `tests/data/import/` were written for these tests in each tool's format.
#[test]
fn import_ruby_vcr_go_vcr_and_httprr() {
    let one = |file: &str| {
        let recs = import_path(&data_file(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            recs.len(),
            1,
            "{file}: the exchanges that are not streams are skipped"
        );
        recs.into_iter().next().expect("one")
    };
    let weather = |id: &str| {
        vec![(
            Some(id.to_owned()),
            "weather".to_owned(),
            Some(json!({"latitude": "52.52", "longitude": "13.405"})),
        )]
    };

    let rec = one("ruby-vcr-openai-stream.yml");
    assert_eq!(calls_of(&rec), weather("call_rb1"));
    let req = rec.request.as_ref().expect("request");
    assert_eq!(
        (req.method.as_str(), req.url.as_str()),
        ("POST", "https://api.openai.com/v1/chat/completions")
    );
    assert!(req.body.contains(r#""stream":true"#), "{}", req.body);
    assert!(
        req.headers
            .iter()
            .any(|(n, v)| n == "Authorization" && v == "Bearer ‹redacted›"),
        "{:?}",
        req.headers
    );
    assert_eq!(rec.response.as_ref().map(|r| r.status), Some(200));
    assert_eq!(rec.meta.source, "import:cassette");
    assert_no_timing(&rec, "ruby vcr");

    // `base64_string` response body, `!binary` request body, a JSON exchange before it.
    let rec = one("ruby-vcr-binary-anthropic.yml");
    assert_eq!(
        calls_of(&rec),
        vec![(
            Some("toolu_rb2".into()),
            "best_language_to_learn".into(),
            Some(json!({"reason": "joy"}))
        )]
    );
    let req = rec.request.as_ref().expect("request");
    assert!(req.body.contains("claude-3-5-haiku"), "{}", req.body);
    assert!(
        rec.meta.title.contains("cassette interaction 2 of 2"),
        "{}",
        rec.meta.title
    );

    let rec = one("go-vcr-v2-stream.yaml");
    assert_eq!(calls_of(&rec), weather("call_go1"));
    assert_eq!(rec.response.as_ref().map(|r| r.status), Some(200));
    let req = rec.request.as_ref().expect("request");
    assert!(
        req.headers
            .iter()
            .all(|(_, v)| !v.contains("sk-go-vcr-secret")),
        "{:?}",
        req.headers
    );

    let rec = one("openai-stream.httprr");
    assert_eq!(calls_of(&rec), weather("call_rr1"));
    assert_eq!(rec.meta.source, "import:httprr");
    assert_no_timing(&rec, "httprr");
    let req = rec.request.as_ref().expect("request");
    assert_eq!(req.url, "https://api.openai.com/v1/chat/completions");
    assert!(
        req.headers
            .iter()
            .all(|(_, v)| !v.contains("sk-httprr-secret")),
        "{:?}",
        req.headers
    );
    assert_eq!(rec.response.as_ref().map(|r| r.status), Some(200));
    assert!(
        rec.body().starts_with(b"data: {"),
        "the chunked body decoded"
    );
}

#[test]
fn import_jsonl_and_raw_keep_the_bytes() {
    let path = data_file("fixture.jsonl");
    let recs = import_path(&path).expect("jsonl");
    assert_eq!(recs.len(), 1);
    assert_eq!(
        recs[0].body(),
        std::fs::read(&path).expect("read"),
        "bytes kept as they are"
    );
    assert_eq!(recs[0].chunks.len(), 2, "one chunk per line");
    assert_no_timing(&recs[0], "jsonl");
    assert_eq!(
        calls_of(&recs[0]),
        vec![(
            Some("call_jl".into()),
            "weather".into(),
            Some(json!({"location": "Lima"}))
        )]
    );

    let path = data_file("curl-body.txt");
    let recs = import_path(&path).expect("raw");
    assert_eq!(recs[0].body(), std::fs::read(&path).expect("read"));
    assert_eq!(recs[0].meta.source, "import:raw");
    assert_no_timing(&recs[0], "raw");
    assert_eq!(
        calls_of(&recs[0]),
        vec![(Some("call_raw".into()), "ping".into(), Some(json!({})))]
    );
}

/// The importer the probe's decision picks for `bytes` named `name`.
fn importer(name: &str, bytes: &[u8]) -> Result<import::ImportFormat, ImportError> {
    let path = Path::new(name);
    import::importer(sse_replay_core::content::decide(path, bytes), path, bytes)
}

#[test]
fn import_detects_by_content() {
    let har = std::fs::read(data_file("two-streams.har")).expect("read");
    let minified: Value = serde_json::from_slice(&har).expect("json");
    let one_line = serde_json::to_vec(&minified).expect("ser");
    for (name, bytes, want) in [
        ("capture.json", har.clone(), import::ImportFormat::Har),
        ("capture.txt", one_line, import::ImportFormat::Har),
        (
            "cassette.txt",
            std::fs::read(data_file("vcr-two-streams.yaml")).expect("read"),
            import::ImportFormat::Cassette,
        ),
        (
            "chunks.txt",
            std::fs::read(data_file("fixture.jsonl")).expect("read"),
            import::ImportFormat::JsonLines,
        ),
        (
            "body",
            std::fs::read(data_file("curl-body.txt")).expect("read"),
            import::ImportFormat::RawBody,
        ),
    ] {
        assert_eq!(importer(name, &bytes).ok(), Some(want), "{name}");
    }
    assert!(matches!(
        importer("x", b"  \n"),
        Err(ImportError::Empty { .. })
    ));
    assert!(matches!(
        importer("x.txt", b"<html>hello</html>"),
        Err(ImportError::Unrecognised { .. })
    ));
    assert!(matches!(
        importer("r.ron", b"(version: 1)"),
        Err(ImportError::AlreadyRecording { .. })
    ));
    // An empty recording is empty, not already a recording.
    assert!(matches!(
        importer("r.ron", b""),
        Err(ImportError::Empty { .. })
    ));
    let no_stream = br#"{"log":{"entries":[{"request":{"method":"GET","url":"https://x.test/"},"response":{"status":200,"content":{"mimeType":"text/html","text":"<p>"}}}]}}"#;
    assert!(matches!(
        import::import_bytes(Path::new("x.har"), no_stream, &ReadOptions::default()),
        Err(ImportError::NoStreams { .. })
    ));
}

#[test]
fn import_malformed_files_fail_clearly() {
    let cases = [
        ("malformed.har", "HAR file is not valid JSON at line 28"),
        ("malformed.yaml", "cassette is not valid YAML"),
        ("malformed.jsonl", "line 3 is not a JSON object"),
    ];
    for (file, want) in cases {
        let err = import_path(&data_file(file)).expect_err(file);
        let msg = err.to_string();
        assert!(msg.starts_with(want), "{file}: {msg}");
        assert!(msg.ends_with(file), "{file}: the path goes last: {msg}");
        assert_eq!(err.path(), data_file(file));
    }
    match import_path(&data_file("malformed.yaml")) {
        Err(ImportError::CassetteSyntax { line: Some(l), .. }) => assert!(l >= 7, "{l}"),
        other => panic!("{other:?}"),
    }
}

/// Every dialect has every shape of real traffic that applies to it, bundled, clean, and showing
/// the shape it is named for: reasoning or text before the calls, four parallel calls with one
/// that takes no arguments, whole calls, long arguments in many fragments, server tools beside a
/// client call.
#[test]
fn every_dialect_has_the_shapes_of_real_traffic() {
    use sse_replay_core::bundled::{Shape, shape_spec};
    let on_disk: Vec<(String, Recording)> = bundled();
    for dialect in DialectKind::ALL {
        for shape in Shape::ALL {
            if !shape.applies(dialect) {
                continue;
            }
            let spec = shape_spec(shape, dialect);
            let name = on_disk
                .iter()
                .find(|(_, r)| r.meta.title == spec.title && r.meta.dialect == dialect.name())
                .map(|(n, _)| n.clone())
                .unwrap_or_else(|| panic!("{} × {shape:?}: no bundled recording", dialect.name()));
            let rec = &on_disk.iter().find(|(n, _)| *n == name).expect("found").1;
            let a = Analysis::from_recording(rec, SourceInfo::default(), Options::default());
            assert_eq!(a.dialect, dialect, "{name}");
            assert!(a.problems().is_empty(), "{name}: {:?}", a.problems());
            let client: Vec<&Call> = a.client_calls().collect();
            assert_eq!(client.len(), spec.calls.len(), "{name}");
            let first_call_event = client[0]
                .fragments
                .first()
                .and_then(|&f| a.fragments.get(f as usize))
                .map_or(0, |f| f.pos.event);
            match shape {
                Shape::ReasoningOneCall => {
                    assert_eq!(client.len(), 1, "{name}");
                    assert!(first_call_event >= 5, "{name}: reasoning comes first");
                }
                Shape::TextFourParallel => {
                    assert!(client.len() >= 3, "{name}");
                    if dialect.stub_writes_lead() {
                        assert!(first_call_event >= 5, "{name}: text comes first");
                    }
                    assert_eq!(client[3].value(), Some(&json!({})), "{name}: no arguments");
                }
                Shape::WholeCalls => {
                    for c in &client {
                        let with_args = c
                            .fragments
                            .iter()
                            .filter(|&&f| {
                                a.fragments[f as usize].has_args
                                    && !a.fragment_text(&a.fragments[f as usize]).is_empty()
                            })
                            .count();
                        assert_eq!(with_args, 1, "{name}: {} whole in one fragment", c.name);
                    }
                }
                Shape::LongArguments => {
                    assert!(client[0].raw_arguments.chars().count() >= 500, "{name}");
                    if dialect.streams_argument_pieces() || dialect == DialectKind::Gemini {
                        assert!(client[0].fragments.len() >= 100, "{name}");
                    }
                }
                Shape::ServerTool => {
                    assert_eq!(a.server_tools().count(), 1, "{name}");
                    assert_eq!(client[0].name, "get_weather", "{name}");
                }
            }
        }
    }
}
