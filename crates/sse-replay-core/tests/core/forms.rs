//! Every form a streamed tool call arrives in besides the five first dialects' SSE and JSON lines,
//! at the library level, against real recorded streams (tests/data/{cohere-v2,assistants,
//! responses-items,json-array-chunks}, with `expected.json`) and hand-derived Gemini arrays: each
//! stream comes out exact read raw and after import, and at any chunking; a call of a kind the
//! dialect does not model is never dropped; finding messages show the stream, not Rust; gzip
//! bodies in cassettes and HAR files are imported. The command-line side is the root
//! `tests/it/forms.rs`.

use crate::common::repo_root as manifest;
use crate::data::{FOLDERS, data, expected, import_path, streams};
use serde_json::{Value, json};
use sse_replay_core::analysis::Analysis;
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::findings::FindingKind;
use sse_replay_core::pipeline::{Options, run_chunks};
use sse_replay_core::recording::Recording;

use crate::common;

/// Open and analyse a file as `check` does (stream `stream` of a capture holding several).
fn open_analyse(
    path: &std::path::Path,
    stream: Option<usize>,
) -> Result<sse_replay_core::analysis::Analysis, sse_replay_core::open::OpenError> {
    let options = sse_replay_core::probe::ReadOptions {
        stream,
        ..Default::default()
    };
    sse_replay_core::probe::open(path, options)
        .map_err(sse_replay_core::open::OpenError::from)?
        .analyse(true)
}

/// The name a call without one of its own gets: the tool's name its item type fixes.
fn tool_name_of(kind: &str) -> Option<&'static str> {
    match sse_replay_core::dialect::responses::classify(kind) {
        sse_replay_core::dialect::responses::ItemClass::Client(ci) => ci.tool,
        _ => None,
    }
}

/// The analysis against one expected stream: its calls (id, name, kind, arguments), its finish,
/// its server tools, its conflicts, and the verdict.
fn compare(a: &Analysis, want: &Value, what: &str) -> Result<(), String> {
    let calls: Vec<&sse_replay_core::accumulate::Call> = a.client_calls().collect();
    let want_calls = want["calls"].as_array().expect("calls");
    if calls.len() != want_calls.len() {
        return Err(format!(
            "{what}: {} calls, expected {}: {:?}",
            calls.len(),
            want_calls.len(),
            calls.iter().map(|c| &c.name).collect::<Vec<_>>()
        ));
    }
    for (i, (got, w)) in calls.iter().zip(want_calls).enumerate() {
        let kind = w["kind"].as_str();
        if got.id.as_deref() != w["id"].as_str() {
            return Err(format!(
                "{what}: call {i} id {:?}, expected {}",
                got.id, w["id"]
            ));
        }
        let name = w["name"]
            .as_str()
            .or_else(|| kind.and_then(tool_name_of))
            .unwrap_or_default();
        if got.name != name {
            return Err(format!(
                "{what}: call {i} name {:?}, expected {name:?}",
                got.name
            ));
        }
        if kind.is_some() && got.kind.as_deref() != kind {
            return Err(format!(
                "{what}: call {i} kind {:?}, expected {kind:?}",
                got.kind
            ));
        }
        if got.value() != Some(&w["arguments"]) {
            return Err(format!(
                "{what}: call {i} arguments {} (raw {:?}), expected {}",
                got.parsed, got.raw_arguments, w["arguments"]
            ));
        }
    }
    let finish = a.finish.as_ref().map(|f| f.reason.as_str());
    if let Some(r) = want["finish_reason"].as_str()
        && finish != Some(r)
    {
        return Err(format!("{what}: finish {finish:?}, expected {r}"));
    }
    if let Some(t) = want["terminal_event"].as_str() {
        let reason = t.trim_start_matches("thread.run.");
        if finish != Some(reason) {
            return Err(format!(
                "{what}: finish {finish:?}, expected {reason} ({t})"
            ));
        }
    }
    for step in want["hosted_tool_steps"].as_array().into_iter().flatten() {
        let found = a.server_tools().any(|c| {
            c.id.as_deref() == step["id"].as_str()
                && c.server_tool.as_deref() == step["type"].as_str()
        });
        if !found {
            return Err(format!(
                "{what}: hosted tool {step} not reported as a server tool"
            ));
        }
    }
    if want.get("requires_action_calls").is_some() {
        let original = a
            .checkpoints
            .first()
            .and_then(|c| c.original_source.clone());
        if original.is_none()
            || a.findings
                .iter()
                .any(|f| f.kind == FindingKind::ArgumentsMismatch)
        {
            return Err(format!(
                "{what}: requires_action is the original ({original:?}) and agrees"
            ));
        }
    }
    if want.get("conflict").is_some()
        && !a.findings.iter().any(|f| f.kind == FindingKind::IdMismatch)
    {
        return Err(format!("{what}: the id conflict is not reported"));
    }
    let ok = !want["expected_failure"].as_bool().unwrap_or(false);
    if a.all_ok() != ok {
        return Err(format!(
            "{what}: all_ok {}, expected {ok}: {:?}",
            a.all_ok(),
            a.problems()
        ));
    }
    Ok(())
}

/// Every real stream, read raw as `check` reads it and after `import` to `.ron`, comes out exact.
#[test]
fn every_real_stream_is_exact_raw_and_after_import() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut checked = 0;
    for folder in FOLDERS {
        for (file, entry) in expected(folder) {
            let path = data(folder).join(&file);
            for (stream, want) in streams(&path, &entry) {
                let mut want = want.clone();
                if let Some(f) = entry.get("expected_failure") {
                    want["expected_failure"] = f.clone();
                }
                let what = format!("{folder}/{file} stream {stream:?}");
                // Raw, as `check` opens it.
                match open_analyse(&path, stream) {
                    Ok(a) => {
                        if let Err(e) = compare(&a, &want, &format!("{what} (raw)")) {
                            failures.push(e);
                        }
                    }
                    Err(e) => failures.push(format!("{what}: {e}")),
                }
                // Imported to .ron, then opened.
                let recs = import_path(&path).expect("imports");
                let rec = &recs[stream.unwrap_or(1) - 1];
                let ron = dir.path().join(format!("{checked}.ron"));
                rec.save(&ron).expect("save");
                match open_analyse(&ron, None) {
                    Ok(a) => {
                        if let Err(e) = compare(&a, &want, &format!("{what} (imported)")) {
                            failures.push(e);
                        }
                    }
                    Err(e) => failures.push(format!("{what} imported: {e}")),
                }
                checked += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 15, "{checked} streams checked");
}

/// The real JSON-lines and JSON-array files give the same calls at every split point (small ones)
/// and at random splits.
#[test]
fn real_files_at_any_chunking() {
    let mut rng = fastrand::Rng::with_seed(18);
    let mut bodies = 0;
    for folder in FOLDERS {
        for (file, _) in expected(folder) {
            let path = data(folder).join(&file);
            if matches!(
                sse_replay_core::content::decide(&path, &std::fs::read(&path).expect("read")).kind,
                sse_replay_core::probe::Kind::Capture(_)
            ) {
                continue;
            }
            let body = std::fs::read(&path).expect("read");
            let whole = run_chunks(common::reads(&body, &[]), Options::default());
            let want = (
                common::call_summary(&whole.calls),
                whole.dialect,
                whole.framing,
            );
            let mut cuts_list: Vec<Vec<usize>> = (0..30)
                .map(|_| sse_replay_core::chunking::random_cuts(&mut rng, body.len(), 97))
                .collect();
            if body.len() <= 4 * 1024 {
                cuts_list.extend((1..body.len()).map(|k| vec![k]));
            }
            for cuts in cuts_list {
                let out = run_chunks(common::reads(&body, &cuts), Options::default());
                assert_eq!(
                    (common::call_summary(&out.calls), out.dialect, out.framing),
                    want,
                    "{file} cut at {cuts:?}"
                );
            }
            bodies += 1;
        }
    }
    assert!(bodies >= 10, "{bodies} bodies");
}

/// A Responses item whose type ends in `_call` and an Anthropic `*_tool_use` block that
/// sse-replay does not model are calls (with a warning naming them), never "no tool calls".
#[test]
fn unmodelled_call_items_are_never_dropped() {
    let responses = [
        json!({"type": "response.created", "response": {"id": "r", "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "x_1", "type": "frobnicate_call", "call_id": "call_x", "status": "in_progress"}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "x_1", "type": "frobnicate_call", "call_id": "call_x", "status": "completed", "action": {"knob": 11}}}),
        json!({"type": "response.completed", "response": {"id": "r", "object": "response", "status": "completed", "output": []}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    let anthropic = [
        ("message_start", json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": []}})),
        ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "future_tool_use", "id": "ftu_1", "name": "dial", "input": {}}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"n\":1}"}})),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}})),
        ("message_stop", json!({"type": "message_stop"})),
    ]
    .iter()
    .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
    .collect::<String>();
    for (body, name, kind, args) in [
        (
            responses,
            "frobnicate",
            "frobnicate_call",
            json!({"knob": 11}),
        ),
        (anthropic, "dial", "future_tool_use", json!({"n": 1})),
    ] {
        let out = run_chunks(common::reads(body.as_bytes(), &[]), Options::default());
        assert_eq!(out.calls.len(), 1, "{kind}");
        let c = &out.calls[0];
        assert!(c.is_client_call(), "{kind}");
        assert_eq!((c.name.as_str(), c.kind.as_deref()), (name, Some(kind)));
        assert_eq!(c.value(), Some(&args), "{kind}");
        assert!(out.findings.has(FindingKind::UnknownCallItem), "{kind}");
        assert!(!out.findings.has(FindingKind::NoToolCalls), "{kind}");
    }
}

/// `empty-field-continuation` names only empty or null fields; a repeated real id is repeated-id,
/// and no message shows a Rust name (`Value`, `Null`, `Empty`, `Absent`).
#[test]
fn finding_messages_show_the_stream_not_rust() {
    let chunk = |tc: Value| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]})
        )
    };
    let body = [
        chunk(json!({"index": 0, "id": "0", "type": "function", "function": {"name": "f", "arguments": "{\"a\""}})),
        chunk(json!({"index": 0, "id": "0", "function": {"name": null, "arguments": ":1}"}})),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let rec = sse_replay_core::input::raw_to_recording(body.as_bytes(), "x");
    let a = Analysis::from_recording(
        &rec,
        sse_replay_core::analysis::SourceInfo::default(),
        Options::default(),
    );
    let msg = |k: FindingKind| {
        a.findings
            .iter()
            .find(|f| f.kind == k)
            .map(|f| f.message.clone())
            .unwrap_or_default()
    };
    assert!(msg(FindingKind::RepeatedId).contains("fragment 1"));
    assert_eq!(
        msg(FindingKind::EmptyFieldContinuation),
        "fragment 1 carries \"name\": null (taken as absent)"
    );
    for f in &a.findings {
        for rust in ["Value", "Null", "Empty", "Absent", "Some(", "None"] {
            assert!(
                !f.message.contains(rust),
                "{}: {}",
                f.kind.label(),
                f.message
            );
        }
    }
}

/// A cassette whose Gemini array body is stored gzip-compressed (`!!binary`, `Content-Encoding:
/// gzip`), and a HAR keeping it base64: both import to the stream the stub wrote.
#[test]
fn gzip_bodies_in_cassettes_and_har_are_imported() {
    use base64_gz::encode;
    let rec =
        Recording::load(&manifest().join("recordings/gemini-array-weather.ron")).expect("load");
    let body = rec.body();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &body).expect("gzip");
    let gz = gz.finish().expect("gzip");
    let b64 = encode(&gz);
    let dir = tempfile::tempdir().expect("tempdir");
    let cassette = dir.path().join("gemini.yaml");
    std::fs::write(
        &cassette,
        format!(
            "interactions:\n- request:\n    method: POST\n    uri: https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent\n    body: '{{}}'\n  response:\n    status: {{code: 200, message: OK}}\n    headers:\n      content-type: [application/json; charset=UTF-8]\n      content-encoding: [gzip]\n    body:\n      string: !!binary |\n        {b64}\nversion: 1\n"
        ),
    )
    .expect("write");
    let har = dir.path().join("gemini.har");
    std::fs::write(
        &har,
        json!({"log": {"entries": [{"startedDateTime": "2025-01-01T00:00:00Z", "request": {"method": "POST", "url": "https://generativelanguage.googleapis.com/v1beta/models/x:streamGenerateContent", "headers": []}, "response": {"status": 200, "headers": [{"name": "content-type", "value": "application/json"}, {"name": "content-encoding", "value": "gzip"}], "content": {"mimeType": "application/json", "text": b64, "encoding": "base64"}}}]}})
            .to_string(),
    )
    .expect("write");
    for p in [cassette, har] {
        let recs = import_path(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(recs.len(), 1, "{}", p.display());
        assert_eq!(
            recs[0].body(),
            body,
            "{}: the decompressed bytes",
            p.display()
        );
        let a = open_analyse(&p, None).expect("opens");
        assert_eq!(a.dialect, DialectKind::Gemini);
        assert_eq!(a.framing, sse_replay_core::framing::Framing::JsonArray);
        assert_eq!(a.client_calls().count(), 2, "{}", p.display());
        assert!(a.all_ok(), "{:?}", a.problems());
    }
}

/// Base64 (standard alphabet, padded) for the cassette and HAR bodies above, without a new
/// dependency for the tests.
mod base64_gz {
    pub fn encode(bytes: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for c in bytes.chunks(3) {
            let n = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            for i in 0..4 {
                if i <= c.len() {
                    out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }
}
