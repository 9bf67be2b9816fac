//! Core tests that need the whole pipeline (one file, to keep link time down):
//!
//! - the quirk table: every OpenAI Chat Completions quirk in the README's table as a tiny inline
//!   stream, with the calls and the finding labels it must produce;
//! - the chunking property on generated streams and stub recordings;
//! - the seed's walkthrough, each naive strategy's characteristic failure, and the three checkpoints.

use crate::common;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use sse_replay_core::accumulate::Parsed;
use sse_replay_core::analysis::{Analysis, Check, SourceInfo, StreamEnding};
use sse_replay_core::input::raw_to_recording;
use sse_replay_core::naive::Strategy;
use sse_replay_core::pipeline::{Options, PipelineOutput, run_chunks};
use sse_replay_core::recording::Recording;
use sse_replay_core::sse::{self, SseItem, SseParser};
use sse_replay_core::stub::{self, Layout, Quirks, StubCall, StubSpec};

use common::call_summary;

// --- helpers

/// Analyse a raw body (no read boundaries, no ground truth).
fn analyse(body: &str) -> Analysis {
    analyse_bytes(body.as_bytes())
}

fn analyse_bytes(body: &[u8]) -> Analysis {
    let rec = raw_to_recording(body, "inline");
    let source = SourceInfo {
        name: "inline".into(),
        kind: "raw body".into(),
        timing_known: false,
    };
    Analysis::from_recording(&rec, source, Options::default())
}

/// Analyse a recording with its read boundaries (stub recordings).
fn analyse_rec(rec: &Recording) -> Analysis {
    let source = SourceInfo {
        name: rec.meta.title.clone(),
        kind: "recording".into(),
        timing_known: true,
    };
    Analysis::from_recording(rec, source, Options::default())
}

fn labels(a: &Analysis) -> BTreeSet<&'static str> {
    a.findings.iter().map(|f| f.kind.label()).collect()
}

/// (id, name, parsed arguments or the raw text when the parse failed).
fn calls(a: &Analysis) -> Vec<(Option<String>, String, Value)> {
    a.calls
        .iter()
        .map(|c| {
            let v = c
                .value()
                .cloned()
                .unwrap_or_else(|| json!({ "unparsed": c.raw_arguments }));
            (c.id.clone(), c.name.clone(), v)
        })
        .collect()
}

fn call(id: Option<&str>, name: &str, args: Value) -> (Option<String>, String, Value) {
    (id.map(str::to_owned), name.to_owned(), args)
}

/// One `data:` event carrying a chat chunk whose only choice has these tool-call deltas.
fn tc(deltas: &str) -> String {
    format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{deltas}]}},\"finish_reason\":null}}]}}\n\n"
    )
}

/// The finish chunk and `[DONE]`.
const END: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";

/// A call's first delta: index, id, type, name and an arguments piece (a JSON string literal's content).
fn first(index: u64, id: &str, name: &str, args: &str) -> String {
    tc(&format!(
        r#"{{"index":{index},"id":"{id}","type":"function","function":{{"name":"{name}","arguments":{}}}}}"#,
        json!(args)
    ))
}

/// A continuation delta: index and an arguments piece.
fn more(index: u64, args: &str) -> String {
    tc(&format!(
        r#"{{"index":{index},"function":{{"arguments":{}}}}}"#,
        json!(args)
    ))
}

/// A well-behaved two-fragment call at `index`.
fn simple(index: u64, id: &str, name: &str) -> String {
    first(index, id, name, "{\"a\":") + &more(index, "1}")
}

fn strategy(a: &Analysis, s: Strategy) -> &sse_replay_core::analysis::StrategyResult {
    a.strategy(s).unwrap_or_else(|| panic!("no {s:?} report"))
}

// --- the quirk table

struct Quirk {
    name: &'static str,
    body: String,
    calls: Vec<(Option<String>, String, Value)>,
    /// Finding labels that must be present.
    labels: &'static [&'static str],
    /// Finding labels that must be absent.
    absent: &'static [&'static str],
    /// `check` would exit 0.
    ok: bool,
    /// Naive strategies that must visibly break on it.
    breaks: &'static [Strategy],
}

fn quirks() -> Vec<Quirk> {
    let a1 = || json!({"a": 1});
    vec![
        Quirk {
            name: "textbook stream",
            body: simple(0, "call_1", "f") + END,
            calls: vec![call(Some("call_1"), "f", a1())],
            labels: &["done-sentinel"],
            absent: &["missing-index", "ended-without-finish", "repeated-name", "dialect-guess"],
            ok: true,
            breaks: &[Strategy::PerFragment, Strategy::Overwrite],
        },
        Quirk {
            name: "missing index (Mistral, Gemini-compat): routed by id, then to the latest call",
            body: tc(r#"{"id":"c1","function":{"name":"f","arguments":"{\"a\":"}}"#)
                + &tc(r#"{"function":{"arguments":"1}"}}"#)
                + &tc(r#"{"id":"c2","function":{"name":"g","arguments":"{}"}}"#)
                + &tc(r#"{"id":"c1","function":{"arguments":""}}"#)
                + END,
            calls: vec![call(Some("c1"), "f", a1()), call(Some("c2"), "g", json!({}))],
            labels: &["missing-index"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "index from 1 (Claude behind a gateway)",
            body: simple(1, "toolu_1", "read_file") + END,
            calls: vec![call(Some("toolu_1"), "read_file", a1())],
            labels: &["index-not-from-zero"],
            absent: &["sparse-index"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "sparse indexes",
            body: simple(0, "c1", "f") + &simple(2, "c2", "g") + END,
            calls: vec![call(Some("c1"), "f", a1()), call(Some("c2"), "g", a1())],
            labels: &["sparse-index"],
            absent: &["index-not-from-zero"],
            ok: true,
            breaks: &[Strategy::ConcatAll],
        },
        Quirk {
            name: "reused index 0 with a new id + name (Ollama /v1, Copilot, SGLang)",
            body: first(0, "c1", "read", "{\"path\":")
                + &more(0, "\"a.rs\"}")
                + &first(0, "c2", "read", "{\"path\":")
                + &more(0, "\"b.rs\"}")
                + END,
            calls: vec![call(Some("c1"), "read", json!({"path": "a.rs"})), call(Some("c2"), "read", json!({"path": "b.rs"}))],
            labels: &["reused-index-new-call"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[Strategy::ConcatAll],
        },
        Quirk {
            name: "a fresh id without a name is a continuation (LM Studio)",
            body: first(0, "c1", "f", "{\"a\":") + &tc(r#"{"index":0,"id":"c9","function":{"arguments":"1}"}}"#) + END,
            // The seed's accumulator sets the id whenever one is present, so the fresh id wins.
            calls: vec![call(Some("c9"), "f", a1())],
            labels: &["fresh-id-continuation"],
            absent: &["reused-index-new-call"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "name and id repeated in every fragment (NIM, Fireworks, LiteLLM)",
            body: first(0, "call_1", "get_weather", "{\"a\":")
                + &tc(r#"{"index":0,"id":"call_1","function":{"name":"get_weather","arguments":"1}"}}"#)
                + END,
            calls: vec![call(Some("call_1"), "get_weather", a1())],
            labels: &["repeated-name", "repeated-id"],
            absent: &["name-conflict"],
            ok: true,
            breaks: &[Strategy::ConcatFields],
        },
        Quirk {
            name: "a different name for the same call is a conflict",
            body: first(0, "c1", "f", "{\"a\":") + &tc(r#"{"index":0,"function":{"name":"g","arguments":"1}"}}"#) + END,
            calls: vec![call(Some("c1"), "g", a1())],
            labels: &["name-conflict"],
            absent: &[],
            // name-conflict has error severity: the one verdict is not OK.
            ok: false,
            breaks: &[],
        },
        Quirk {
            name: "\"\" and null continuations (Qwen via DashScope)",
            body: first(0, "call_1", "f", "{\"a\":")
                + &tc(r#"{"index":0,"id":"","type":"function","function":{"name":"","arguments":"1"}}"#)
                + &tc(r#"{"index":0,"id":null,"type":null,"function":{"name":null,"arguments":"}"}}"#)
                + END,
            calls: vec![call(Some("call_1"), "f", a1())],
            labels: &["empty-field-continuation"],
            absent: &["name-conflict", "repeated-name"],
            ok: true,
            breaks: &[Strategy::Overwrite],
        },
        Quirk {
            name: "null arguments count as absent",
            body: first(0, "c1", "f", "{\"a\":1}") + &tc(r#"{"index":0,"function":{"arguments":null}}"#) + END,
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &[],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "object arguments (llama.cpp, TGI)",
            body: tc(r#"{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":{"a":1,"b":"深"}}}"#) + END,
            calls: vec![call(Some("c1"), "f", json!({"a": 1, "b": "深"}))],
            labels: &["object-arguments"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "whole call in one chunk, with finish_reason in the same chunk (Mistral, Groq)",
            body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n".into(),
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["whole-call-in-one-chunk", "finish-in-same-chunk"],
            absent: &["fragment-after-finish", "ended-without-finish"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "finish_reason \"stop\" (some servers) still finishes",
            body: simple(0, "c1", "f") + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &[],
            absent: &["ended-without-finish", "incomplete-call"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "choices: [] usage chunk",
            body: simple(0, "c1", "f") + "data: {\"choices\":[],\"usage\":{\"total_tokens\":9}}\n\n" + END,
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["empty-choices"],
            absent: &["unexpected-shape", "non-json-data"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "ping event and keep-alive comments",
            body: ": OPENROUTER PROCESSING\n\nevent: ping\ndata: {}\n\n".to_owned()
                + &first(0, "c1", "f", "{\"a\":")
                + ": ping\n\n"
                + &more(0, "1}")
                + END,
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["ping-event", "keep-alive-comment"],
            absent: &["dialect-guess", "non-json-data"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "event: error mid-stream: stop, report the message, keep what was received",
            body: simple(0, "c1", "f")
                + &first(1, "c2", "g", "{\"b\":")
                + "event: error\ndata: {\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
                + &more(1, "2}")
                + END,
            calls: vec![call(Some("c1"), "f", a1()), call(Some("c2"), "g", json!({"unparsed": "{\"b\":"}))],
            labels: &["provider-error"],
            absent: &["done-sentinel"],
            ok: false,
            breaks: &[],
        },
        Quirk {
            name: "an error object in data (no event type)",
            body: simple(0, "c1", "f") + "data: {\"error\":{\"message\":\"tool_use_failed\",\"code\":\"tool_use_failed\"}}\n\n",
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["provider-error"],
            absent: &[],
            ok: false,
            breaks: &[],
        },
        Quirk {
            name: "no [DONE] after finish_reason",
            body: simple(0, "c1", "f") + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &[],
            absent: &["done-sentinel", "ended-without-finish", "incomplete-call"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "no terminator at all: complete JSON, but the stream ended without finish",
            body: simple(0, "c1", "f"),
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["ended-without-finish", "incomplete-call"],
            absent: &["parse-failed"],
            ok: false,
            breaks: &[],
        },
        Quirk {
            name: "truncated inside the arguments (max_tokens, dropped connection)",
            body: first(0, "c1", "f", "{\"city\":\"深") + "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"argu",
            calls: vec![call(Some("c1"), "f", json!({"unparsed": "{\"city\":\"深"}))],
            labels: &["ended-without-finish", "incomplete-call", "unterminated-event"],
            absent: &["parse-failed"],
            ok: false,
            breaks: &[],
        },
        Quirk {
            name: "CRLF line endings",
            body: (simple(0, "c1", "f") + END).replace('\n', "\r\n"),
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["crlf-line-endings"],
            absent: &["cr-line-endings"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "CR-only line endings",
            body: (simple(0, "c1", "f") + END).replace('\n', "\r"),
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["cr-line-endings"],
            absent: &["crlf-line-endings"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "data: without a space",
            body: (simple(0, "c1", "f") + END).replace("data: ", "data:"),
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["data-without-space"],
            absent: &["non-json-data"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "data: : keepalive (a gateway wrapping a comment as data)",
            body: first(0, "c1", "f", "{\"a\":") + "data: : keepalive\n\n" + &more(0, "1}") + END,
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["non-json-data"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "data before event within one event (Bedrock Mantle)",
            body: simple(0, "c1", "f").replacen("\n\n", "\nevent: message\n\n", 1) + END,
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["data-before-event"],
            absent: &[],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "multi-line data (joined with \\n, then parsed)",
            body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":\ndata: [{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n".to_owned() + END,
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["multi-line-data"],
            absent: &["non-json-data"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "BOM at the start",
            body: "\u{FEFF}".to_owned() + &simple(0, "c1", "f") + END,
            calls: vec![call(Some("c1"), "f", a1())],
            labels: &["bom"],
            absent: &["unknown-field", "dialect-guess"],
            ok: true,
            breaks: &[],
        },
        Quirk {
            name: "interleaved fragments of parallel calls (0,1,0,1)",
            body: first(0, "c1", "f", "{\"a\":")
                + &first(1, "c2", "g", "{\"b\":")
                + &more(0, "1}")
                + &more(1, "2}")
                + END,
            calls: vec![call(Some("c1"), "f", a1()), call(Some("c2"), "g", json!({"b": 2}))],
            labels: &["interleaved-calls"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[Strategy::NextIndexDone, Strategy::ConcatAll],
        },
        Quirk {
            name: "cumulative re-sends are flagged, never de-duplicated",
            body: first(0, "c1", "f", "{\"ab\"") + &more(0, "{\"ab\":1") + &more(0, "{\"ab\":1}") + END,
            calls: vec![call(Some("c1"), "f", json!({"unparsed": "{\"ab\"{\"ab\":1{\"ab\":1}"}))],
            labels: &["cumulative-arguments", "parse-failed"],
            absent: &[],
            ok: false,
            breaks: &[],
        },
        Quirk {
            name: "empty arguments \"\"",
            body: first(0, "c1", "now", "") + END,
            calls: vec![call(Some("c1"), "now", json!({}))],
            labels: &["empty-arguments"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[Strategy::PerFragment],
        },
        Quirk {
            name: "empty arguments: whitespace only",
            body: first(0, "c1", "now", " ") + &more(0, "\n ") + END,
            calls: vec![call(Some("c1"), "now", json!({}))],
            labels: &["empty-arguments"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[Strategy::PerFragment],
        },
        Quirk {
            name: "empty arguments: no arguments key at all",
            body: tc(r#"{"index":0,"id":"c1","type":"function","function":{"name":"now"}}"#) + END,
            calls: vec![call(Some("c1"), "now", json!({}))],
            labels: &["empty-arguments"],
            absent: &["parse-failed"],
            ok: true,
            breaks: &[],
        },
    ]
}

#[test]
fn quirk_table() {
    let mut failures = Vec::new();
    for q in quirks() {
        let a = analyse(&q.body);
        let got = labels(&a);
        let mut problems = Vec::new();
        if a.dialect.name() != "openai-chat" {
            problems.push(format!("dialect {}", a.dialect.name()));
        }
        if calls(&a) != q.calls {
            problems.push(format!(
                "calls {:?}\n      expected {:?}",
                calls(&a),
                q.calls
            ));
        }
        for l in q.labels {
            if !got.contains(l) {
                problems.push(format!("missing finding {l}"));
            }
        }
        for l in q.absent {
            if got.contains(l) {
                problems.push(format!("unexpected finding {l}"));
            }
        }
        if a.all_ok() != q.ok {
            problems.push(format!("all_ok {} (ending {:?})", a.all_ok(), a.ending));
        }
        for s in q.breaks {
            if strategy(&a, *s).agreement.matches_correct {
                problems.push(format!("naive {} does not break", s.name()));
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{}:\n    {}\n    findings: {got:?}",
                q.name,
                problems.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} quirk(s) wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn quirk_table_survives_every_split_offset() {
    for q in quirks() {
        let body = q.body.as_bytes();
        let whole = run_chunks([(body, 0)], Options::default());
        for cut in 0..=body.len() {
            let out = run_chunks([(&body[..cut], 0), (&body[cut..], 0)], Options::default());
            assert_eq!(
                call_summary(&out.calls),
                call_summary(&whole.calls),
                "{}: split at {cut}",
                q.name
            );
            assert_eq!(
                out.event_count, whole.event_count,
                "{}: split at {cut}",
                q.name
            );
        }
    }
}

#[test]
fn routing_findings_belong_to_the_call_they_open() {
    let mut spec = stub::seed_example();
    spec.quirks.no_index = true;
    let a = analyse_rec(&stub::build(&spec));
    let missing: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.kind.label() == "missing-index")
        .map(|f| (f.call, f.count))
        .collect();
    assert_eq!(missing, vec![(Some(0), 5), (Some(1), 5)]);
    let a = analyse(&(simple(1, "c1", "f") + END));
    let f = a
        .findings
        .iter()
        .find(|f| f.kind.label() == "index-not-from-zero")
        .expect("finding");
    assert_eq!(f.call, Some(0));
}

#[test]
fn provider_error_message_and_ending() {
    let q = quirks()
        .into_iter()
        .find(|q| q.name.starts_with("event: error"))
        .expect("quirk");
    let a = analyse(&q.body);
    assert_eq!(
        a.ending,
        StreamEnding::ProviderError {
            message: "overloaded_error: Overloaded".into()
        }
    );
    // The fragment after the error is not decoded.
    assert_eq!(a.calls[1].raw_arguments, "{\"b\":");
}

#[test]
fn truncated_call_keeps_its_raw_text_and_invents_nothing() {
    let q = quirks()
        .into_iter()
        .find(|q| q.name.starts_with("truncated"))
        .expect("quirk");
    let a = analyse(&q.body);
    let c = &a.calls[0];
    assert!(!c.complete);
    assert_eq!(c.raw_arguments, "{\"city\":\"深");
    assert!(
        matches!(&c.parsed, Parsed::Err { error, .. } if error.contains("EOF")),
        "{:?}",
        c.parsed
    );
    assert_eq!(a.ending, StreamEnding::EndedWithoutFinish);
}

#[test]
fn done_is_a_sentinel_never_json() {
    let a = analyse(&(simple(0, "c1", "f") + "data: [DONE]\n\n"));
    assert!(!labels(&a).contains("non-json-data"));
    assert!(a.all_ok());
    assert_eq!(
        a.ending,
        StreamEnding::Finished {
            reason: "[DONE]".into()
        }
    );
}

#[test]
fn absurd_index_values_never_panic() {
    for index in [
        "-1",
        "1e400",
        "18446744073709551615",
        "18446744073709551616",
        "\"0\"",
        "null",
        "1.5",
        "{}",
        "[]",
        "true",
    ] {
        let body = tc(&format!(
            r#"{{"index":{index},"id":"c1","function":{{"name":"f","arguments":"{{}}"}}}}"#
        )) + &tc(&format!(
            r#"{{"index":{index},"function":{{"arguments":""}}}}"#
        )) + END;
        let a = analyse(&body);
        assert!(a.calls.len() <= 1, "{index}: {:?}", calls(&a));
    }
    // The largest index is a key like any other.
    let a = analyse(&(simple(u64::MAX, "c1", "f") + END));
    assert_eq!(calls(&a), vec![call(Some("c1"), "f", json!({"a": 1}))]);
    // A huge choice index too.
    let body = "data: {\"choices\":[{\"index\":99999999999,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n";
    assert_eq!(analyse(body).calls.len(), 1);
}

#[test]
fn deeply_nested_arguments_fail_cleanly() {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let a = analyse(&(first(0, "c1", "f", &deep) + END));
    assert!(
        matches!(&a.calls[0].parsed, Parsed::Err { error, .. } if error.contains("recursion")),
        "{:?}",
        a.calls[0].parsed
    );
    // Deep JSON as the event data itself.
    let body = format!("data: {}\n\n", "{\"a\":".repeat(100_000));
    let a = analyse(&body);
    assert!(a.calls.is_empty());
}

// --- the chunking property

/// Events as compared across chunkings (spans, kinds, fragment counts; not chunk numbers).
fn event_summary(out: &PipelineOutput) -> Vec<(std::ops::Range<u64>, String, u32)> {
    out.events
        .iter()
        .map(|e| {
            (
                e.span.clone(),
                format!("{:?}/{}", e.kind, out.event_types[e.type_id as usize]),
                e.fragment_count,
            )
        })
        .collect()
}

fn run_cut(body: &[u8], cuts: &[usize], detail: bool) -> PipelineOutput {
    run_chunks(
        common::reads(body, cuts),
        Options {
            detail,
            ..Options::default()
        },
    )
}

fn sse_events(body: &[u8], cuts: &[usize]) -> Vec<sse::OwnedEvent> {
    sse::parse_all(sse_replay_core::chunking::split(body, cuts))
}

/// The same bytes in any chunking give identical SSE events, pipeline events and calls.
fn assert_same(
    body: &[u8],
    cuts: &[usize],
    whole: &PipelineOutput,
    whole_sse: &[sse::OwnedEvent],
    what: &str,
) {
    let out = run_cut(body, cuts, true);
    assert_eq!(
        call_summary(&out.calls),
        call_summary(&whole.calls),
        "{what}: calls, cuts {cuts:?}"
    );
    assert_eq!(
        event_summary(&out),
        event_summary(whole),
        "{what}: events, cuts {cuts:?}"
    );
    assert_eq!(
        sse_events(body, cuts),
        whole_sse,
        "{what}: SSE events, cuts {cuts:?}"
    );
    assert_eq!(
        finding_summary(&out),
        finding_summary(whole),
        "{what}: findings, cuts {cuts:?}"
    );
}

/// Finding kinds, calls and counts (locations name chunks, which differ by construction).
fn finding_summary(out: &PipelineOutput) -> Vec<(&'static str, Option<u32>, u64)> {
    let mut v: Vec<_> = out
        .findings
        .list()
        .iter()
        .map(|f| (f.kind.label(), f.call, f.count))
        .collect();
    v.sort_unstable();
    v
}

fn generated(calls: usize) -> Vec<u8> {
    let mut body = Vec::new();
    sse_replay_core::generate::write_large(&mut body, calls).expect("write to a Vec");
    body
}

/// The first `events` events of a body (cut after the `events`-th blank line).
fn first_events(body: &[u8], events: usize) -> &[u8] {
    let mut n = 0;
    for i in 0..body.len().saturating_sub(1) {
        if body[i] == b'\n' && body[i + 1] == b'\n' {
            n += 1;
            if n == events {
                return &body[..i + 2];
            }
        }
    }
    body
}

#[test]
fn generated_stream_is_parsed_right() {
    let body = generated(3);
    let out = run_cut(&body, &[], false);
    assert_eq!(out.calls.len(), 3);
    for (i, c) in out.calls.iter().enumerate() {
        assert_eq!(
            c.raw_arguments,
            sse_replay_core::generate::original_arguments(i),
            "call {i}"
        );
        assert!(c.value().is_some());
        assert_eq!(c.id.as_deref(), Some(format!("call_{i:06}").as_str()));
    }
    assert!(out.finished());
}

#[test]
fn generated_subsets_at_every_split_offset() {
    let body = generated(2);
    // Small subsets: the first few events (interleaved calls, CJK split across fragments).
    for events in [1, 2, 5] {
        let sub = first_events(&body, events);
        let whole = run_cut(sub, &[], true);
        let whole_sse = sse_events(sub, &[]);
        assert_eq!(whole_sse.len(), events);
        for cut in 0..=sub.len() {
            assert_same(
                sub,
                &[cut],
                &whole,
                &whole_sse,
                &format!("first {events} events"),
            );
        }
    }
    // The tail: the last fragments, finish and [DONE].
    let tail_start = body.len() - first_events(&body, 4).len().min(body.len());
    let tail = &body[tail_start..];
    let whole = run_cut(tail, &[], true);
    let whole_sse = sse_events(tail, &[]);
    for cut in (0..=tail.len()).step_by(3) {
        assert_same(tail, &[cut], &whole, &whole_sse, "tail");
    }
}

#[test]
fn generated_stream_at_random_splits() {
    let body = generated(2);
    let whole = run_cut(&body, &[], true);
    let whole_sse = sse_events(&body, &[]);
    let mut rng = fastrand::Rng::with_seed(0x2191_DDE7_B2A4_54BD);
    for max_step in [7, 64, 1500, 40_000] {
        for _ in 0..3 {
            let cuts = sse_replay_core::chunking::random_cuts(&mut rng, body.len(), max_step);
            assert_same(
                &body,
                &cuts,
                &whole,
                &whole_sse,
                &format!("generated, reads up to {max_step} bytes"),
            );
        }
    }
}

/// Stub recordings covering the quirks the stub builder reproduces.
fn stub_specs() -> Vec<(&'static str, StubSpec)> {
    let base = stub::seed_example();
    let with = |f: fn(&mut StubSpec)| {
        let mut s = base.clone();
        f(&mut s);
        s
    };
    vec![
        ("seed", base.clone()),
        ("interleaved", with(|s| s.layout = Layout::Interleaved)),
        ("repeat-name", with(|s| s.quirks.repeat_name = true)),
        ("empty-id", with(|s| s.quirks.empty_id_continuations = true)),
        ("no-index", with(|s| s.quirks.no_index = true)),
        ("index-from-1", with(|s| s.quirks.index_base = 1)),
        (
            "all-at-index-0",
            with(|s| s.quirks.all_at_index_zero = true),
        ),
        (
            "object-arguments",
            with(|s| s.quirks.object_arguments = true),
        ),
        ("cumulative", with(|s| s.quirks.cumulative = true)),
        ("crlf", with(|s| s.quirks.crlf = true)),
        ("no-space", with(|s| s.quirks.no_space = true)),
        ("keepalive", with(|s| s.quirks.keepalive_every = 3)),
        ("truncate", with(|s| s.quirks.truncate = true)),
        (
            "finish-with-last",
            with(|s| s.quirks.finish_with_last_fragment = true),
        ),
        ("error", with(|s| s.quirks.error_after = Some(2))),
        ("fragments 1", with(|s| s.fragment_chars = vec![1])),
        ("fragments 3,7", with(|s| s.fragment_chars = vec![3, 7])),
    ]
}

#[test]
fn stub_recordings_at_every_split_offset() {
    for (name, spec) in stub_specs() {
        let rec = stub::build(&spec);
        let body = rec.body();
        let whole = run_cut(&body, &[], true);
        let whole_sse = sse_events(&body, &[]);
        // The recording's own reads give the same result as one read.
        let reads: Vec<(&[u8], u64)> = rec
            .chunks
            .iter()
            .map(|c| (c.bytes.as_slice(), c.t_micros))
            .collect();
        let as_recorded = run_chunks(
            reads,
            Options {
                detail: true,
                ..Options::default()
            },
        );
        assert_eq!(
            call_summary(&as_recorded.calls),
            call_summary(&whole.calls),
            "{name}: as recorded"
        );
        for cut in 0..=body.len() {
            assert_same(&body, &[cut], &whole, &whole_sse, name);
        }
    }
}

#[test]
fn stub_recordings_at_random_splits() {
    let mut rng = fastrand::Rng::with_seed(42);
    for (name, spec) in stub_specs() {
        let body = stub::build(&spec).body();
        let whole = run_cut(&body, &[], true);
        let whole_sse = sse_events(&body, &[]);
        for max_step in [1, 3, 20, 200] {
            let cuts = sse_replay_core::chunking::random_cuts(&mut rng, body.len(), max_step);
            assert_same(&body, &cuts, &whole, &whole_sse, name);
        }
    }
}

#[test]
fn stub_quirks_give_the_right_calls() {
    let want = [
        call(
            Some("call_1"),
            "get_weather",
            json!({"city": "深圳", "days": 3}),
        ),
        call(
            Some("call_2"),
            "get_time",
            json!({"city": "杭州", "days": 1}),
        ),
    ];
    for (name, spec) in stub_specs() {
        let a = analyse_rec(&stub::build(&spec));
        match name {
            "cumulative" => {
                assert!(labels(&a).contains("cumulative-arguments"), "{name}");
                assert!(
                    a.calls.iter().all(|c| c.value().is_none()),
                    "{name}: never de-duplicated"
                );
            }
            "truncate" => {
                assert_eq!(a.ending, StreamEnding::EndedWithoutFinish, "{name}");
                assert_eq!(calls(&a)[0], want[0], "{name}: the first call is whole");
                assert!(a.calls[1].value().is_none(), "{name}: the cut call fails");
            }
            "error" => {
                assert!(
                    matches!(a.ending, StreamEnding::ProviderError { .. }),
                    "{name}"
                );
                assert_eq!(a.calls.len(), 1, "{name}");
            }
            _ => assert_eq!(calls(&a), want, "{name}"),
        }
    }
}

// --- the seed walkthrough

fn seed() -> Analysis {
    analyse_rec(&stub::build(&stub::seed_example()))
}

#[test]
fn seed_recording_file_is_the_stub() {
    let path = crate::common::repo_root().join("recordings/seed-example.ron");
    let rec = sse_replay_core::recording::load(&path).expect("bundled seed example loads");
    let built = stub::build(&stub::seed_example());
    assert_eq!(rec.body(), built.body());
    assert_eq!(rec.chunks, built.chunks);
    assert_eq!(rec.truth, built.truth);
}

#[test]
fn seed_raw_lines_match_the_document() {
    let rec = stub::build(&stub::seed_example());
    let text = String::from_utf8(rec.body()).expect("UTF-8");
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    // The seed prints the first two raw lines; the first is the same, byte for byte.
    assert_eq!(
        lines[0],
        r#"data: {"id":"chatcmpl-stub","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get_weather","arguments":"{\"cit"}}]},"finish_reason":null}]}"#
    );
    // Its second line repeats "name":"get_weather", but its prose ("第二片没有 id，也没有函数名")
    // and checkpoint ③ say continuations carry no name: the stub follows those.
    assert_eq!(
        lines[1],
        r#"data: {"id":"chatcmpl-stub","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"y\":\"深"}}]},"finish_reason":null}]}"#
    );
    assert_eq!(*lines.last().expect("lines"), "data: [DONE]");
}

#[test]
fn seed_walkthrough_fragments() {
    let a = seed();
    // Section 1: five fragments of 5,5,5,5,2 characters, 22 in all.
    let c = &a.calls[0];
    assert_eq!(c.name, "get_weather");
    let pieces: Vec<&str> = c
        .fragments
        .iter()
        .map(|&n| a.fragment_text(&a.fragments[n as usize]))
        .collect();
    assert_eq!(pieces, ["{\"cit", "y\":\"深", "圳\",\"d", "ays\":", "3}"]);
    let lens: Vec<usize> = pieces.iter().map(|p| p.chars().count()).collect();
    assert_eq!(lens, [5, 5, 5, 5, 2]);
    assert_eq!(c.char_len(), 22);
    assert_eq!(lens.iter().sum::<usize>(), c.char_len());
    // Only the first fragment carries id and name.
    let first = &a.fragments[c.fragments[0] as usize];
    assert_eq!(
        (first.id, first.name),
        (
            sse_replay_core::fact::Presence::Value,
            sse_replay_core::fact::Presence::Value
        )
    );
    for &n in &c.fragments[1..] {
        let f = &a.fragments[n as usize];
        assert_eq!(
            (f.id, f.name),
            (
                sse_replay_core::fact::Presence::Absent,
                sse_replay_core::fact::Presence::Absent
            )
        );
    }
}

#[test]
fn seed_walkthrough_per_fragment_parses_zero_of_five() {
    let a = seed();
    let r = strategy(&a, Strategy::PerFragment);
    let weather: Vec<_> = r
        .report
        .steps
        .iter()
        .filter(|s| s.call == Some(0))
        .collect();
    assert_eq!(weather.len(), 5);
    assert_eq!(
        weather
            .iter()
            .filter(|s| matches!(s.outcome, Parsed::Ok(_)))
            .count(),
        0
    );
    // The two kinds of error the seed names: an unterminated string, then an unexpected token.
    let errs: Vec<&str> = weather
        .iter()
        .map(|s| match &s.outcome {
            Parsed::Err { error, .. } => error.as_str(),
            Parsed::Ok(_) => "",
        })
        .collect();
    assert!(
        errs[0].contains("EOF while parsing a string"),
        "{}",
        errs[0]
    );
    assert!(errs[0].contains("character position 5"), "{}", errs[0]);
    assert!(errs[1].contains("expected value"), "{}", errs[1]);
    assert!(errs[1].contains("character position 0"), "{}", errs[1]);
    assert_eq!(r.report.steps.len(), 10);
    assert_eq!(r.report.steps_parsed(), 0);
    assert!(!r.agreement.matches_correct);
    assert!(
        r.agreement
            .differences
            .iter()
            .any(|d| d == "10 of 10 fragments fail to parse alone"),
        "{:?}",
        r.agreement.differences
    );
}

#[test]
fn seed_walkthrough_concat_all_fails_with_the_position() {
    let a = seed();
    let r = strategy(&a, Strategy::ConcatAll);
    let joined = &r.report.calls[0];
    assert_eq!(
        joined.raw_arguments,
        r#"{"city":"深圳","days":3}{"city":"杭州","days":1}"#
    );
    let Parsed::Err {
        error,
        line,
        column,
    } = &joined.parsed
    else {
        panic!("{:?}", joined.parsed)
    };
    assert_eq!((*line, *column), (1, 27));
    assert!(
        error.contains("trailing characters at line 1 column 27"),
        "{error}"
    );
    // The seed's JavaScript says "at position 22": the same place, counted in characters.
    assert!(error.contains("character position 22"), "{error}");
    assert!(!r.agreement.matches_correct);
}

#[test]
fn seed_walkthrough_both_calls_come_out_right() {
    let a = seed();
    assert_eq!(
        calls(&a),
        vec![
            call(
                Some("call_1"),
                "get_weather",
                json!({"city": "深圳", "days": 3})
            ),
            call(
                Some("call_2"),
                "get_time",
                json!({"city": "杭州", "days": 1})
            ),
        ]
    );
    for c in &a.calls {
        assert_eq!(c.char_len(), 22);
        assert_eq!(c.byte_len(), 26);
        assert!(c.complete);
    }
    assert!(a.all_ok());
    assert_eq!(
        a.ending,
        StreamEnding::Finished {
            reason: "tool_calls".into()
        }
    );
    assert_eq!(a.dialect.name(), "openai-chat");
}

#[test]
fn seed_walkthrough_all_three_checkpoints_hold() {
    let a = seed();
    assert_eq!(a.checkpoints.len(), 2);
    for (i, cp) in a.checkpoints.iter().enumerate() {
        assert_eq!(
            cp.verbatim.passed(),
            Some(true),
            "call {i} ①: {}",
            cp.verbatim.detail()
        );
        assert_eq!(
            cp.contiguous.passed(),
            Some(true),
            "call {i} ②: {}",
            cp.contiguous.detail()
        );
        assert_eq!(
            cp.first_only.passed(),
            Some(true),
            "call {i} ③: {}",
            cp.first_only.detail()
        );
        assert!(
            cp.original_source
                .as_deref()
                .is_some_and(|s| s.contains("ground truth"))
        );
    }
    assert!(a.checkpoints[0].verbatim.detail().contains("22 characters"));
}

#[test]
fn seed_error_positions_match_the_javascript_positions() {
    // serde_json counts byte columns; the added position counts characters like JSON.parse.
    let cases = [
        ("{\"cit", 5),   // EOF: the end, as "Unterminated string in JSON at position 5"
        ("y\":\"深", 0), // "Unexpected token 'y'"
        ("3}", 1),       // trailing characters after 3
        ("{\"a\":\"深圳\"}x", 10), // after two 3-byte characters
        ("{\n\"a\":1}\n}", 9), // second line
    ];
    for (text, pos) in cases {
        let Parsed::Err { error, .. } = sse_replay_core::accumulate::parse_value(text) else {
            panic!("{text} parsed")
        };
        assert!(
            error.ends_with(&format!("(character position {pos})")),
            "{text:?}: {error}"
        );
    }
}

// --- each naive strategy's characteristic failure

#[test]
fn overwrite_keeps_only_the_last_fragment() {
    let a = seed();
    let r = strategy(&a, Strategy::Overwrite);
    assert_eq!(r.report.calls[0].raw_arguments, "3}");
    assert_eq!(r.report.calls[1].raw_arguments, "1}");
    assert!(
        r.report
            .calls
            .iter()
            .all(|c| matches!(c.parsed, Parsed::Err { .. }))
    );
    assert!(!r.agreement.matches_correct);
    // With "" / null continuations it also erases the id and the name.
    let q = quirks()
        .into_iter()
        .find(|q| q.name.starts_with("\"\" and null"))
        .expect("quirk");
    let a = analyse(&q.body);
    let r = strategy(&a, Strategy::Overwrite);
    assert_eq!(
        (
            r.report.calls[0].id.as_str(),
            r.report.calls[0].name.as_str()
        ),
        ("", "")
    );
}

#[test]
fn concat_fields_doubles_a_repeated_name() {
    // Exactly the seed's printed raw line 2: the name repeated, no id.
    let mut spec = stub::seed_example();
    spec.quirks.repeat_name = true;
    let rec = stub::build(&spec);
    let text = String::from_utf8(rec.body()).expect("UTF-8");
    let line2 = text
        .lines()
        .filter(|l| !l.is_empty())
        .nth(1)
        .expect("line 2");
    assert!(
        line2.contains(r#"{"index":0,"function":{"name":"get_weather","arguments":"y\":\"深"}}"#),
        "{line2}"
    );
    let a = analyse_rec(&rec);
    let r = strategy(&a, Strategy::ConcatFields);
    assert_eq!(r.report.calls[0].name, "get_weather".repeat(5));
    assert_eq!(r.report.calls[0].id, "call_1", "the id came once");
    assert!(!r.agreement.matches_correct);
    assert!(
        r.agreement
            .differences
            .iter()
            .any(|d| d.contains("get_weatherget_weather")),
        "{:?}",
        r.agreement.differences
    );
    // The correct path still gets it right.
    assert_eq!(a.calls[0].name, "get_weather");
    assert!(a.all_ok());
    // On the plain seed it happens to work.
    assert!(
        strategy(&seed(), Strategy::ConcatFields)
            .agreement
            .matches_correct
    );
}

#[test]
fn next_index_done_emits_partial_arguments_when_interleaved() {
    let mut spec = stub::seed_example();
    spec.layout = Layout::Interleaved;
    let a = analyse_rec(&stub::build(&spec));
    assert!(a.all_ok(), "the correct path is unaffected");
    let r = strategy(&a, Strategy::NextIndexDone);
    assert_eq!(
        r.report.calls[0].raw_arguments, "{\"cit",
        "call 0 declared done after its first fragment"
    );
    assert!(
        r.report
            .calls
            .iter()
            .all(|c| matches!(c.parsed, Parsed::Err { .. }))
    );
    assert!(
        r.report
            .notes
            .iter()
            .any(|n| n.contains("fragments arrived for calls already declared done")),
        "{:?}",
        r.report.notes
    );
    assert!(!r.agreement.matches_correct);
    // Sequential (the seed's layout) is fine.
    assert!(
        strategy(&seed(), Strategy::NextIndexDone)
            .agreement
            .matches_correct
    );
}

#[test]
fn parse_when_valid_reports_normal_partial_buffers_as_errors() {
    let a = seed();
    let r = strategy(&a, Strategy::ParseWhenValid);
    // 5 re-parses per call, only the last one of each parses.
    assert_eq!(r.report.steps.len(), 10);
    assert_eq!(r.report.steps_parsed(), 2);
    assert!(!r.agreement.matches_correct);
    assert!(
        r.agreement
            .differences
            .iter()
            .any(|d| d == "8 re-parses of incomplete buffers reported as errors")
    );
    // A call that parses before it is complete is cut short: the rest is ignored.
    let body = first(0, "c1", "f", "{\"a\":1}") + &more(0, " ") + &more(0, "\n") + END;
    let a = analyse(&body);
    let r = strategy(&a, Strategy::ParseWhenValid);
    assert!(
        r.report
            .notes
            .iter()
            .any(|n| n.contains("2 fragments arrived after their call had parsed")),
        "{:?}",
        r.report.notes
    );
}

#[test]
fn per_read_utf8_turns_a_split_character_into_replacement_characters() {
    let spec = stub::seed_example();
    assert_eq!(spec.read_bytes, Some(44));
    let a = seed();
    assert!(labels(&a).contains("split-utf8"));
    let r = strategy(&a, Strategy::PerReadUtf8);
    assert!(r.report.not_applicable.is_none());
    assert!(
        r.report
            .calls
            .iter()
            .any(|c| c.raw_arguments.contains('\u{FFFD}')),
        "{:?}",
        r.report.calls
    );
    assert!(
        r.report.notes.iter().any(|n| n.starts_with("3 U+FFFD")),
        "{:?}",
        r.report.notes
    );
    assert!(!r.agreement.matches_correct);
    assert!(
        r.agreement
            .differences
            .iter()
            .any(|d| d.contains('\u{FFFD}')),
        "{:?}",
        r.agreement.differences
    );
}

#[test]
fn per_read_lines_loses_lines_cut_by_reads() {
    let a = seed();
    assert!(labels(&a).contains("split-line"));
    let r = strategy(&a, Strategy::PerReadLines);
    assert!(r.report.not_applicable.is_none());
    assert!(!r.agreement.matches_correct);
    assert!(
        r.agreement
            .differences
            .iter()
            .any(|d| d == "0 calls instead of 2"),
        "{:?}",
        r.agreement.differences
    );
    // With one read per event, it works.
    let mut spec = stub::seed_example();
    spec.read_bytes = None;
    let a = analyse_rec(&stub::build(&spec));
    assert!(
        strategy(&a, Strategy::PerReadLines)
            .agreement
            .matches_correct
    );
    assert!(
        strategy(&a, Strategy::PerReadUtf8)
            .agreement
            .matches_correct
    );
}

#[test]
fn per_read_strategies_need_read_boundaries() {
    let body = stub::build(&stub::seed_example()).body();
    let a = analyse_bytes(&body);
    for s in [Strategy::PerReadUtf8, Strategy::PerReadLines] {
        assert!(strategy(&a, s).report.not_applicable.is_some(), "{s:?}");
    }
}

#[test]
fn every_strategy_is_reported_once_in_order() {
    let a = seed();
    let names: Vec<Strategy> = a.strategies.iter().map(|s| s.report.strategy).collect();
    assert_eq!(names, Strategy::ALL);
}

// --- the three checkpoints

#[test]
fn checkpoint_three_fails_when_names_repeat() {
    let mut spec = stub::seed_example();
    spec.quirks.repeat_name = true;
    let a = analyse_rec(&stub::build(&spec));
    for cp in &a.checkpoints {
        assert_eq!(cp.verbatim.passed(), Some(true));
        assert_eq!(cp.contiguous.passed(), Some(true));
        assert_eq!(cp.first_only.passed(), Some(false));
        assert!(
            cp.first_only
                .detail()
                .contains("4 of 4 continuation fragments repeat the name, 0 the id"),
            "{}",
            cp.first_only.detail()
        );
    }
}

#[test]
fn checkpoints_one_and_two_are_not_applicable_without_an_original() {
    let body = stub::build(&stub::seed_example()).body();
    let a = analyse_bytes(&body);
    assert!(a.all_ok());
    for cp in &a.checkpoints {
        assert!(matches!(cp.verbatim, Check::NotApplicable { .. }));
        assert!(matches!(cp.contiguous, Check::NotApplicable { .. }));
        assert_eq!(cp.first_only.passed(), Some(true));
        assert_eq!(cp.original_source, None);
    }
}

#[test]
fn checkpoint_one_fails_when_the_ground_truth_differs() {
    let mut rec = stub::build(&stub::seed_example());
    rec.truth[0].arguments = r#"{"city":"深圳","days":4}"#.into();
    let a = analyse_rec(&rec);
    let cp = &a.checkpoints[0];
    assert_eq!(cp.verbatim.passed(), Some(false));
    assert!(
        cp.verbatim.detail().contains("first difference at byte 24"),
        "{}",
        cp.verbatim.detail()
    );
    assert_eq!(
        cp.contiguous.passed(),
        Some(false),
        "the last fragment is not at its offset"
    );
    assert_eq!(a.checkpoints[1].verbatim.passed(), Some(true));
    assert!(labels(&a).contains("arguments-mismatch"));
}

#[test]
fn checkpoint_two_fails_when_fragments_are_out_of_order() {
    // Swap two events of call 0: the reassembled string differs, and the fragment is not at its offset.
    let mut spec = stub::seed_example();
    spec.read_bytes = None;
    let mut rec = stub::build(&spec);
    rec.chunks.swap(1, 2);
    let a = analyse_rec(&rec);
    let cp = &a.checkpoints[0];
    assert_eq!(cp.verbatim.passed(), Some(false));
    assert_eq!(cp.contiguous.passed(), Some(false));
    assert!(
        cp.contiguous.detail().contains("fragment 1"),
        "{}",
        cp.contiguous.detail()
    );
}

#[test]
fn checkpoints_use_the_authoritative_copy_when_the_stream_has_one() {
    // No ground truth: Anthropic and OpenAI-chat streams have no full copy, so ①② are not applicable.
    let a = analyse(&(simple(0, "c1", "f") + END));
    assert!(a.checkpoints.iter().all(|c| c.verbatim.passed().is_none()));
    // A stub with ground truth for a one-call stream.
    let spec = StubSpec {
        calls: vec![StubCall {
            id: "c1".into(),
            name: "f".into(),
            arguments: "{\"a\":1}".into(),
        }],
        quirks: Quirks::default(),
        ..StubSpec::default()
    };
    let a = analyse_rec(&stub::build(&spec));
    assert_eq!(a.checkpoints[0].verbatim.passed(), Some(true));
}

// --- the SSE parser directly

#[test]
fn sse_comments_and_events_at_every_split() {
    let body = b"\xEF\xBB\xBF: hi\r\n\r\nevent: e\r\ndata: a\r\ndata:b\r\n\r\n:x\rdata: c\r\r";
    let whole = collect(body, &[]);
    assert_eq!(
        whole,
        vec![
            "comment \" hi\"",
            "event e \"a\\nb\"",
            "comment \"x\"",
            "event message \"c\""
        ],
    );
    for cut in 0..=body.len() {
        assert_eq!(collect(body, &[cut]), whole, "cut {cut}");
    }
}

fn collect(body: &[u8], cuts: &[usize]) -> Vec<String> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    let mut sink = |item: SseItem<'_>| match item {
        SseItem::Event(e) => out.push(format!("event {} {:?}", e.event_type, e.data)),
        SseItem::Comment { text, .. } => out.push(format!("comment {text:?}")),
    };
    let mut start = 0;
    for &c in cuts.iter().chain(std::iter::once(&body.len())) {
        p.feed(&body[start..c], &mut sink);
        start = c;
    }
    p.finish();
    out
}
