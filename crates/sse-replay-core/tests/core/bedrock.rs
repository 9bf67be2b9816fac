//! Bedrock ConverseStream through the whole pipeline: the real streams in `tests/data/bedrock/`
//! give the calls their `expected.json` lists (derived by reading them) at every split point and
//! at random ones; the same events decoded (JSON lines, SSE, `type`-named objects) give the same
//! calls as the binary frames; and damage (a flipped byte, a cut) is a finding naming its offset
//! with everything before it kept.

use crate::common;

use serde_json::{Value, json};
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::findings::FindingKind;
use sse_replay_core::framing::Framing;
use sse_replay_core::pipeline::{Options, PipelineOutput, run_chunks};

/// Bodies up to this size are split at every offset (the rest at random offsets only).
const EVERY_OFFSET_MAX_BYTES: usize = 4096;

/// One real stream: its bytes (decoded from its capture) and what it must give.
struct Stream {
    name: String,
    body: Vec<u8>,
    /// `(id, name, arguments, server tool)` in stream order.
    calls: Vec<(String, String, Value, bool)>,
    failure: bool,
}

fn streams() -> Vec<Stream> {
    let root = common::repo_root().join("tests/data/bedrock");
    let mut out = Vec::new();
    for dir in ["binary", "json"] {
        let text = std::fs::read_to_string(root.join(dir).join("expected.json")).expect("read");
        let doc: Value = serde_json::from_str(&text).expect("json");
        for (file, e) in doc["files"].as_object().expect("files") {
            let path = root.join(dir).join(file);
            // Every capture is opened the way the command line opens it.
            let recordings = match sse_replay_core::probe::open(&path, Default::default())
                .expect("open")
                .recordings(|_, _| true)
                .expect("opens")
            {
                sse_replay_core::open::Opened::One { recording, .. } => vec![*recording],
                sse_replay_core::open::Opened::Several { recordings } => recordings,
            };
            let per_stream: Vec<&Value> = match e["streams"].as_array() {
                Some(s) => s.iter().collect(),
                None => vec![e],
            };
            assert_eq!(recordings.len(), per_stream.len(), "{file}");
            for (i, (rec, s)) in recordings.iter().zip(per_stream).enumerate() {
                let calls = s["calls"]
                    .as_array()
                    .expect("calls")
                    .iter()
                    .map(|c| {
                        (
                            c["id"].as_str().unwrap_or("").to_owned(),
                            c["name"].as_str().unwrap_or("").to_owned(),
                            c["arguments"].clone(),
                            c["server_executed"].as_bool().unwrap_or(false),
                        )
                    })
                    .collect();
                out.push(Stream {
                    name: format!("{file} #{}", i + 1),
                    body: rec.body(),
                    calls,
                    failure: e["expected_failure"] == true,
                });
            }
        }
    }
    out
}

fn run(body: &[u8], cuts: &[usize]) -> PipelineOutput {
    run_chunks(
        common::reads(body, cuts),
        Options {
            detail: true,
            ..Options::default()
        },
    )
}

/// What must not change with the chunking: calls, events, findings, how it ended.
fn fingerprint(out: &PipelineOutput) -> String {
    let findings: Vec<(&str, u64, Option<u64>)> = out
        .findings
        .list()
        .iter()
        .map(|f| (f.kind.label(), f.count, f.first.offset))
        .collect();
    let spans: Vec<_> = out.events.iter().map(|e| e.span.clone()).collect();
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?}",
        common::call_summary(&out.calls),
        out.dialect,
        out.framing,
        spans,
        findings,
        out.ending
    )
}

fn calls_of(out: &PipelineOutput) -> Vec<(String, String, Value, bool)> {
    out.calls
        .iter()
        .map(|c| {
            let args = match &c.parsed {
                sse_replay_core::accumulate::Parsed::Ok(v) => Value::clone(v),
                other => json!(other.to_string()),
            };
            (
                c.id.clone().unwrap_or_default(),
                c.name.clone(),
                args,
                c.server_tool.is_some(),
            )
        })
        .collect()
}

#[test]
fn every_real_stream_gives_its_expected_calls_however_it_is_cut() {
    let streams = streams();
    assert_eq!(streams.len(), 10);
    let mut rng = fastrand::Rng::with_seed(0xBED);
    for s in &streams {
        let whole = run(&s.body, &[]);
        assert_eq!(whole.dialect, DialectKind::BedrockConverse, "{}", s.name);
        assert_eq!(calls_of(&whole), s.calls, "{}", s.name);
        assert_eq!(
            whole.provider_error.is_some(),
            s.failure,
            "{}: {:?}",
            s.name,
            whole.ending
        );
        let want = fingerprint(&whole);
        if s.body.len() <= EVERY_OFFSET_MAX_BYTES {
            for cut in 0..=s.body.len() {
                assert_eq!(
                    fingerprint(&run(&s.body, &[cut])),
                    want,
                    "{}: split at {cut}",
                    s.name
                );
            }
        }
        let bytewise: Vec<usize> = (1..s.body.len()).collect();
        assert_eq!(fingerprint(&run(&s.body, &bytewise)), want, "{}", s.name);
        for _ in 0..100 {
            let cuts = sse_replay_core::chunking::random_cuts(&mut rng, s.body.len(), 200);
            assert_eq!(
                fingerprint(&run(&s.body, &cuts)),
                want,
                "{}: {cuts:?}",
                s.name
            );
        }
    }
}

/// The binary code-interpreter stream's frames, as (event type, payload).
fn code_execution_events() -> Vec<(String, String)> {
    let s = streams()
        .into_iter()
        .find(|s| s.name.starts_with("test_bedrock_model_code_execution"))
        .expect("stream");
    let mut out = Vec::new();
    let mut framer = sse_replay_core::framing::Framer::new(None);
    framer.feed(&s.body, &mut |item| {
        if let sse_replay_core::framing::Framed::Event {
            event_type, data, ..
        } = item
        {
            out.push((event_type.to_owned(), data.to_owned()));
        }
    });
    assert_eq!(framer.framing(), Some(Framing::AwsEventStream));
    out
}

#[test]
fn the_decoded_forms_give_the_same_calls_as_the_frames() {
    let events = code_execution_events();
    assert_eq!(events.len(), 12);
    let binary: Vec<u8> = events
        .iter()
        .flat_map(|(t, d)| sse_replay_core::aws_eventstream::event_frame(t, d.as_bytes()))
        .collect();
    let want = calls_of(&run(&binary, &[]));
    assert_eq!(want.len(), 2);
    // What the AWS SDKs hand to code, one object per event keyed by its name, as JSON lines …
    let keyed: String = events
        .iter()
        .map(|(t, d)| format!("{{\"{t}\":{d}}}\n"))
        .collect();
    // … as SSE, named by `event:` with the payload as data …
    let sse: String = events
        .iter()
        .map(|(t, d)| format!("event: {t}\ndata: {d}\n\n"))
        .collect();
    // … or as objects naming the event in `type`.
    let typed: String = events
        .iter()
        .map(|(t, d)| format!("{{\"type\":\"{t}\",{}\n", &d[1..]))
        .collect();
    for (form, body) in [("keyed", keyed), ("sse", sse), ("typed", typed)] {
        let out = run(body.as_bytes(), &[]);
        assert_eq!(out.dialect, DialectKind::BedrockConverse, "{form}");
        assert!(out.dialect_known, "{form}: detected, not guessed");
        assert_eq!(calls_of(&out), want, "{form}");
        let fp = fingerprint(&out);
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..50 {
            let cuts = sse_replay_core::chunking::random_cuts(&mut rng, body.len(), 60);
            assert_eq!(fingerprint(&run(body.as_bytes(), &cuts)), fp, "{form}");
        }
    }
}

#[test]
fn a_damaged_frame_or_a_cut_is_a_finding_at_its_offset_and_the_rest_is_kept() {
    let events = code_execution_events();
    let frames: Vec<Vec<u8>> = events
        .iter()
        .map(|(t, d)| sse_replay_core::aws_eventstream::event_frame(t, d.as_bytes()))
        .collect();
    let offset_of = |i: usize| frames[..i].iter().map(Vec::len).sum::<usize>();
    // A flipped byte in the client call's one input delta (frame 8): that frame is lost, named
    // at its offset; the server tool and everything else is kept.
    assert_eq!(events[8].0, "contentBlockDelta");
    let mut body: Vec<u8> = frames.concat();
    let at = offset_of(8) + 40;
    body[at] ^= 0x04;
    let out = run(&body, &[]);
    let corrupt: Vec<_> = out
        .findings
        .list()
        .iter()
        .filter(|f| f.kind == FindingKind::FrameCorrupt)
        .collect();
    assert_eq!(corrupt.len(), 1);
    assert_eq!(corrupt[0].first.offset, Some(offset_of(8) as u64));
    assert!(
        corrupt[0].message.starts_with(&format!(
            "frame at byte {}: message CRC32 mismatch",
            offset_of(8)
        )),
        "{}",
        corrupt[0].message
    );
    assert_eq!(out.events.len(), 11);
    assert_eq!(out.calls.len(), 2);
    let clean = calls_of(&run(&frames.concat(), &[]));
    assert_eq!(calls_of(&out)[0], clean[0], "the server tool is intact");
    assert_eq!(
        out.calls[1].raw_arguments, "",
        "the only input delta was lost"
    );
    // Cut inside the messageStop frame (10): the frames before it are read, the cut is named,
    // and it is an error (the frame's payload is lost), never the text streams' warning.
    assert_eq!(events[10].0, "messageStop");
    let cut = offset_of(10) + 30;
    let out = run(&frames.concat()[..cut], &[]);
    assert_eq!(out.events.len(), 10);
    assert_eq!(calls_of(&out).len(), 2);
    assert!(
        !out.findings
            .list()
            .iter()
            .any(|f| f.kind == FindingKind::UnterminatedEvent)
    );
    assert!(!sse_replay_core::verdict::judge(&out.calls, out.findings.list()).ok());
    let u = out
        .findings
        .list()
        .iter()
        .find(|f| f.kind == FindingKind::FrameCorrupt)
        .expect("the cut frame");
    assert_eq!(u.first.offset, Some(offset_of(10) as u64));
    assert!(
        u.message.starts_with(&format!(
            "the stream ended inside the frame at byte {}: 30 of its",
            offset_of(10)
        )),
        "{}",
        u.message
    );
    // Every call was closed by its contentBlockStop, so the calls stand; the stream did not end
    // normally (no messageStop, a frame cut).
    assert_eq!(
        out.ending,
        sse_replay_core::pipeline::StreamEnding::CallsComplete
    );
    assert!(!out.ended_normally());
}

#[test]
fn frames_of_another_aws_service_are_nothing_recognised_and_say_so() {
    use sse_replay_core::aws_eventstream::event_frame;
    let body: Vec<u8> = [
        event_frame("TranscriptEvent", br#"{"Transcript":{"Results":[]}}"#),
        event_frame("TranscriptEvent", br#"{"Transcript":{"Results":[]}}"#),
    ]
    .concat();
    let out = run(&body, &[]);
    assert_eq!(out.framing, Some(Framing::AwsEventStream));
    let f = out
        .findings
        .list()
        .iter()
        .find(|f| f.kind == FindingKind::NothingRecognised)
        .expect("nothing-recognised");
    assert_eq!(
        f.message,
        "binary AWS event stream frames (2 frames), none of them a known dialect's event"
    );
}

/// Anthropic's events inside InvokeModelWithResponseStream `chunk` frames (`{"bytes": base64}`),
/// with the input delta's frame replaced by `bad` (a whole frame with good CRCs).
fn invoke_model_stream(bad: Option<Vec<u8>>) -> (Vec<u8>, u64) {
    use base64::Engine as _;
    use sse_replay_core::aws_eventstream::event_frame;
    let chunk = |event: Value| {
        let b64 = base64::engine::general_purpose::STANDARD.encode(event.to_string());
        event_frame(
            "chunk",
            json!({ "bytes": b64, "p": "abc" }).to_string().as_bytes(),
        )
    };
    let frames = [
        chunk(json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}})),
        chunk(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}})),
        bad.unwrap_or_else(|| {
            chunk(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"city\":\"Paris\"}"}}))
        }),
        chunk(json!({"type": "content_block_stop", "index": 0})),
        chunk(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}})),
        chunk(json!({"type": "message_stop"})),
    ];
    let at = (frames[0].len() + frames[1].len()) as u64;
    (frames.concat(), at)
}

#[test]
fn a_chunk_or_payload_that_cannot_be_read_is_an_error_at_its_frame_and_the_call_is_not_ok() {
    use base64::Engine as _;
    use sse_replay_core::aws_eventstream::event_frame;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    // The clean stream: one call, OK.
    let (body, _) = invoke_model_stream(None);
    let out = run(&body, &[]);
    assert_eq!(out.dialect, DialectKind::AnthropicMessages);
    assert_eq!(calls_of(&out)[0].2, json!({"city": "Paris"}));
    assert!(sse_replay_core::verdict::judge(&out.calls, out.findings.list()).ok());
    let damaged: [(&str, Vec<u8>, &str); 5] = [
        (
            "bytes that are not base64",
            event_frame("chunk", br#"{"bytes":"eyJ0eXBlIjoi!!not base64!!"}"#),
            "its chunk's bytes are not base64",
        ),
        (
            "a chunk payload that is not JSON",
            event_frame("chunk", br#"{"bytes":"eyJ0eXBlIjoiY29udGVudF9ibG9ja19kZWx0YSJ9"#),
            "its chunk payload is not JSON",
        ),
        (
            "a chunk without bytes",
            event_frame("chunk", br#"{"p":"abcdef"}"#),
            "its chunk payload has no \"bytes\"",
        ),
        (
            "a model event that is not JSON",
            event_frame(
                "chunk",
                json!({"bytes": b64(r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"ci"#)})
                    .to_string()
                    .as_bytes(),
            ),
            "the model event in its chunk is not JSON",
        ),
        (
            "a JSON frame whose payload is not JSON",
            event_frame("contentBlockDelta", br#"{"contentBlockIndex":0,"delta":{"toolUse":"#),
            "its payload is not the JSON its :content-type says",
        ),
    ];
    for (what, frame, says) in damaged {
        let (body, at) = invoke_model_stream(Some(frame));
        let whole = run(&body, &[]);
        for cut in [1, at as usize + 7, body.len() / 2] {
            assert_eq!(
                fingerprint(&run(&body, &[cut])),
                fingerprint(&whole),
                "{what}"
            );
        }
        let f = whole
            .findings
            .list()
            .iter()
            .find(|f| f.kind == FindingKind::UnreadablePayload)
            .unwrap_or_else(|| panic!("{what}: no unreadable-payload finding"));
        assert_eq!(f.first.offset, Some(at), "{what}");
        assert!(
            f.message.starts_with(&format!("frame at byte {at} (")) && f.message.contains(says),
            "{what}: {}",
            f.message
        );
        // The call lost its only input delta: it is read with empty arguments, and the verdict
        // fails for the lost payload.
        assert_eq!(whole.calls.len(), 1, "{what}");
        assert_eq!(whole.calls[0].raw_arguments, "", "{what}");
        let verdict = sse_replay_core::verdict::judge(&whole.calls, whole.findings.list());
        assert!(!verdict.ok(), "{what}: the verdict says OK");
        assert!(
            verdict.problems.iter().any(|p| p.contains("frame at byte")),
            "{what}: {:?}",
            verdict.problems
        );
    }
}
