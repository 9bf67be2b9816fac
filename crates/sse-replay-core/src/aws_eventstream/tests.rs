//! The decoder: every header type, real Bedrock streams at every split point and at random ones,
//! and every way a stream can be broken (each a finding with its offset, never a panic).

#![allow(clippy::unwrap_used)]

use super::*;
use crate::chunking;

/// What a decoder run gives, owned: frames as (span, headers as JSON, payload), corrupt stretches
/// as their message, and the cut at the end.
#[derive(Debug, PartialEq)]
enum Item {
    Frame(Range<u64>, serde_json::Value, Vec<u8>),
    Corrupt(FrameError),
}

fn run(body: &[u8], cuts: &[usize], limit: u64) -> (Vec<Item>, Option<Cut>, Option<Overflow>) {
    let mut d = Decoder::with_max_frame_bytes(limit);
    let mut items = Vec::new();
    let mut sink = |x: Decoded<'_>| {
        items.push(match x {
            Decoded::Frame(f) => Item::Frame(
                f.span.clone(),
                serde_json::Value::Object(f.headers_json()),
                f.payload.to_vec(),
            ),
            Decoded::Corrupt(e) => Item::Corrupt(e),
        })
    };
    for piece in chunking::split(body, cuts) {
        d.feed(piece, &mut sink);
    }
    let cut = d.finish(&mut sink);
    (items, cut, d.overflow())
}

/// The same result whole, at every split point (two pieces), byte by byte, and at random cuts.
fn assert_chunking_invariant(
    body: &[u8],
    limit: u64,
) -> (Vec<Item>, Option<Cut>, Option<Overflow>) {
    let whole = run(body, &[], limit);
    for at in 1..body.len() {
        assert_eq!(run(body, &[at], limit), whole, "split at {at}");
    }
    let bytewise: Vec<usize> = (1..body.len()).collect();
    assert_eq!(run(body, &bytewise, limit), whole, "bytewise");
    let mut rng = fastrand::Rng::with_seed(0xB3D0);
    for _ in 0..50 {
        let cuts = chunking::random_cuts(&mut rng, body.len(), 40);
        assert_eq!(run(body, &cuts, limit), whole, "cuts {cuts:?}");
    }
    whole
}

fn b64(s: &str) -> Vec<u8> {
    crate::content::base64_decode(s).unwrap()
}

/// The live Claude capture in vercel/ai's fixtures (6 frames, no tool call).
fn live_capture() -> Vec<u8> {
    let text = std::fs::read_to_string(
        crate::repo_root().join("tests/data/bedrock/binary/issue-18994-live-converse-stream.json"),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    b64(v["response"]["bodyBase64"].as_str().unwrap())
}

/// pydantic-ai's Nova code-execution cassette: 12 frames, a server tool and a client call.
fn code_execution() -> Vec<u8> {
    let text = std::fs::read_to_string(
        crate::repo_root()
            .join("tests/data/bedrock/binary/test_bedrock_model_code_execution_tool_stream.yaml"),
    )
    .unwrap();
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let body = &v["interactions"][0]["response"]["body"]["string"];
    let s = match body {
        serde_yaml_ng::Value::Tagged(t) => t.value.as_str().unwrap().to_owned(),
        other => other.as_str().unwrap().to_owned(),
    };
    b64(&s)
}

/// Where each frame of a well-formed stream ends, from the preludes alone.
fn frame_ends(body: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = 0;
    while at + 4 <= body.len() {
        at += u32::from_be_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]) as usize;
        ends.push(at);
    }
    ends
}

fn event_types(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Frame(_, h, _) => h[":event-type"].as_str().map(str::to_owned),
            Item::Corrupt(_) => None,
        })
        .collect()
}

#[test]
fn every_header_type_round_trips() {
    let uuid = [
        0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40,
        0x00,
    ];
    let headers = [
        Header {
            name: "t",
            value: HeaderValue::Bool(true),
        },
        Header {
            name: "f",
            value: HeaderValue::Bool(false),
        },
        Header {
            name: "byte",
            value: HeaderValue::Byte(-7),
        },
        Header {
            name: "short",
            value: HeaderValue::Short(-300),
        },
        Header {
            name: "int",
            value: HeaderValue::Int(70_000),
        },
        Header {
            name: "long",
            value: HeaderValue::Long(-5_000_000_000),
        },
        Header {
            name: "bytes",
            value: HeaderValue::Bytes(&[0, 1, 0xff]),
        },
        Header {
            name: ":event-type",
            value: HeaderValue::String("contentBlockDelta"),
        },
        Header {
            name: "ts",
            value: HeaderValue::Timestamp(1_735_689_600_000),
        },
        Header {
            name: "id",
            value: HeaderValue::Uuid(uuid),
        },
    ];
    let frame = encode_frame(&headers, b"{\"a\":1}");
    assert!(looks_like_aws_eventstream(&frame));
    let f = decode_frame(&frame, 100).unwrap();
    assert_eq!(f.span, 100..100 + frame.len() as u64);
    assert_eq!(f.headers().collect::<Vec<_>>(), headers);
    assert_eq!(f.payload, b"{\"a\":1}");
    assert_eq!(f.event_type(), Some("contentBlockDelta"));
    assert_eq!(f.message_type(), "event");
    assert_eq!(
        serde_json::Value::Object(f.headers_json()),
        serde_json::json!({
            "t": true, "f": false, "byte": -7, "short": -300, "int": 70000,
            "long": -5_000_000_000i64, "bytes": "AAH/", ":event-type": "contentBlockDelta",
            "ts": 1_735_689_600_000i64, "id": "123e4567-e89b-12d3-a456-426614174000"
        })
    );
    assert_eq!(
        payload_range(&frame),
        Some(frame.len() - 11..frame.len() - 4)
    );
    // Exception and error frames name their type where an event names its event type.
    let x = exception_frame("throttlingException", b"{}");
    let f = decode_frame(&x, 0).unwrap();
    assert_eq!(
        (f.message_type(), f.event_type()),
        ("exception", Some("throttlingException"))
    );
}

#[test]
fn malformed_headers_are_a_finding_for_that_frame_only() {
    // A valid frame whose one header has type 12 (unknown), then a good frame.
    let mut bad = Vec::new();
    let hb = [1u8, b'x', 12];
    let total = (16 + hb.len()) as u32;
    bad.extend_from_slice(&total.to_be_bytes());
    bad.extend_from_slice(&(hb.len() as u32).to_be_bytes());
    let c = crc32(&bad);
    bad.extend_from_slice(&c.to_be_bytes());
    bad.extend_from_slice(&hb);
    let c = crc32(&bad);
    bad.extend_from_slice(&c.to_be_bytes());
    let good = event_frame("messageStop", b"{\"stopReason\":\"end_turn\"}");
    let body = [bad.clone(), good.clone()].concat();
    let (items, cut, _) = assert_chunking_invariant(&body, u64::MAX);
    assert_eq!(cut, None);
    assert_eq!(items.len(), 2);
    let Item::Corrupt(e) = &items[0] else {
        panic!("{items:?}")
    };
    assert_eq!(e.span, 0..bad.len() as u64);
    assert_eq!(
        e.to_string(),
        "frame at byte 0: malformed headers: header \"x\" has unknown value type 12; its 19 bytes skipped"
    );
    assert!(matches!(&items[1], Item::Frame(s, _, _) if s.start == bad.len() as u64));
    // A string header that is cut short inside the frame.
    let hb = [1u8, b'y', 7, 0, 9, b'a'];
    let mut f = Vec::new();
    let total = (16 + hb.len()) as u32;
    f.extend_from_slice(&total.to_be_bytes());
    f.extend_from_slice(&(hb.len() as u32).to_be_bytes());
    let c = crc32(&f);
    f.extend_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&hb);
    let c = crc32(&f);
    f.extend_from_slice(&c.to_be_bytes());
    let e = decode_frame(&f, 0).unwrap_err();
    assert_eq!(
        e.fault,
        FrameFault::Headers("header \"y\" cut short in its value".into())
    );
}

#[test]
fn a_live_bedrock_stream_decodes_the_same_at_every_split_point() {
    let body = live_capture();
    let (items, cut, overflow) = assert_chunking_invariant(&body, u64::MAX);
    assert_eq!((cut, overflow), (None, None));
    assert_eq!(
        event_types(&items),
        [
            "messageStart",
            "contentBlockDelta",
            "contentBlockDelta",
            "contentBlockStop",
            "messageStop",
            "metadata"
        ]
    );
    // The frames tile the body.
    let mut end = 0;
    for i in &items {
        let Item::Frame(span, h, payload) = i else {
            panic!("corrupt: {i:?}")
        };
        assert_eq!(span.start, end);
        end = span.end;
        assert_eq!(h[":message-type"], "event");
        assert_eq!(h[":content-type"], "application/json");
        assert!(serde_json::from_slice::<serde_json::Value>(payload).is_ok());
    }
    assert_eq!(end, body.len() as u64);
}

#[test]
fn a_code_execution_stream_and_an_exception_decode_the_same_at_every_split_point() {
    let body = code_execution();
    let (items, cut, _) = assert_chunking_invariant(&body, u64::MAX);
    assert_eq!(cut, None);
    assert_eq!(items.len(), 12);
    assert!(items.iter().all(|i| matches!(i, Item::Frame(..))));
    let text = std::fs::read_to_string(
        crate::repo_root()
            .join("tests/data/bedrock/binary/model-stream-error-exception.eventstream.base64.txt"),
    )
    .unwrap();
    let body = b64(text.trim());
    let (items, _, _) = assert_chunking_invariant(&body, u64::MAX);
    let [Item::Frame(_, h, payload)] = items.as_slice() else {
        panic!("{items:?}")
    };
    assert_eq!(h[":message-type"], "exception");
    assert_eq!(h[":exception-type"], "modelStreamErrorException");
    assert!(h.get(":event-type").is_none());
    assert!(payload.starts_with(b"{\"message\":\"Model Stream Error\""));
}

#[test]
fn a_message_crc_mismatch_skips_that_frame_and_names_its_offset() {
    let mut body = live_capture();
    let second = 0xb4; // the first frame is 180 bytes long
    let at = second + 60;
    body[at] ^= 0x01;
    let (items, cut, _) = assert_chunking_invariant(&body, u64::MAX);
    assert_eq!(cut, None);
    assert_eq!(items.len(), 6);
    let Item::Corrupt(e) = &items[1] else {
        panic!("{items:?}")
    };
    assert_eq!(e.span.start, second as u64);
    assert!(matches!(e.fault, FrameFault::MessageCrc { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("frame at byte 180: message CRC32 mismatch"),
        "{e}"
    );
    assert_eq!(event_types(&items).len(), 5);
}

#[test]
fn a_bad_prelude_or_garbage_is_skipped_to_the_next_valid_frame() {
    let live = live_capture();
    // Garbage between two frames, and a prelude CRC that does not check.
    let first = 180;
    let mut body = live[..first].to_vec();
    body.extend_from_slice(b"\r\nGARBAGE!!\n");
    body.extend_from_slice(&live[first..]);
    let (items, cut, _) = assert_chunking_invariant(&body, u64::MAX);
    assert_eq!(cut, None);
    let Item::Corrupt(e) = &items[1] else {
        panic!("{items:?}")
    };
    assert_eq!(e.span, 180..192);
    assert!(
        e.to_string().starts_with("not a frame at byte 180: "),
        "{e}"
    );
    assert_eq!(event_types(&items).len(), 6, "every real frame kept");
    // The prelude CRC of the third frame flipped: that frame is lost, the rest kept.
    let mut body = live.clone();
    let third = 180 + 179;
    body[third + 9] ^= 0x80;
    let (items, _, _) = assert_chunking_invariant(&body, u64::MAX);
    let corrupt: Vec<&FrameError> = items
        .iter()
        .filter_map(|i| {
            if let Item::Corrupt(e) = i {
                Some(e)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(corrupt.len(), 1);
    assert_eq!(corrupt[0].span.start, third as u64);
    assert!(matches!(corrupt[0].fault, FrameFault::PreludeCrc { .. }));
    assert_eq!(event_types(&items).len(), 5);
    // An impossible length under a valid CRC (total 8).
    let mut bad = 8u32.to_be_bytes().to_vec();
    bad.extend_from_slice(&0u32.to_be_bytes());
    let c = crc32(&bad);
    bad.extend_from_slice(&c.to_be_bytes());
    let body = [bad, live.clone()].concat();
    let (items, _, _) = assert_chunking_invariant(&body, u64::MAX);
    let Item::Corrupt(e) = &items[0] else {
        panic!("{items:?}")
    };
    assert_eq!(
        e.fault,
        FrameFault::Length {
            total: 8,
            headers: 0
        }
    );
    assert_eq!(e.span, 0..12);
    // Trailing garbage after the last frame: reported to the end.
    let body = [live.clone(), b"\n\nthat's all".to_vec()].concat();
    let (items, cut, _) = assert_chunking_invariant(&body, u64::MAX);
    assert_eq!(cut, None);
    let Some(Item::Corrupt(e)) = items.last() else {
        panic!("{items:?}")
    };
    assert_eq!(e.span, live.len() as u64..body.len() as u64);
}

#[test]
fn a_frame_cut_short_is_a_cut_with_what_arrived() {
    let live = live_capture();
    let ends = frame_ends(&live);
    for end in [live.len() - 1, 180 + 5, 180 + 12, 180 + 100] {
        let (items, cut, _) = assert_chunking_invariant(&live[..end], u64::MAX);
        let whole = ends.iter().filter(|&&e| e <= end).count();
        assert_eq!(event_types(&items).len(), whole, "cut at {end}");
        let cut = cut.unwrap();
        assert_eq!(cut.span.end, end as u64);
        if end - cut.span.start as usize >= 12 {
            assert!(cut.total.is_some());
            assert!(
                cut.to_string().contains("bytes arrived") || cut.to_string().contains(" of its "),
                "{cut}"
            );
        } else {
            assert_eq!(cut.total, None);
            assert!(cut.to_string().contains("prelude"), "{cut}");
        }
    }
}

#[test]
fn a_frame_over_the_limit_stops_the_decoder() {
    let live = live_capture();
    let ends = frame_ends(&live);
    // The frames are 180, 179, 190, 134, 217 and 257 bytes long: the fifth is the first over 200.
    assert_eq!(ends, [180, 359, 549, 683, 900, 1157]);
    let (items, cut, overflow) = assert_chunking_invariant(&live, 200);
    assert_eq!(cut, None);
    let o = overflow.unwrap();
    assert_eq!((o.start, o.limit), (683, 200));
    assert_eq!(
        event_types(&items).last().map(String::as_str),
        Some("contentBlockStop")
    );
    assert_eq!(
        o.start,
        match items.last() {
            Some(Item::Frame(s, _, _)) => s.end,
            _ => panic!(),
        }
    );
}

#[test]
fn random_streams_of_frames_and_damage_decode_the_same_however_they_are_cut() {
    let mut rng = fastrand::Rng::with_seed(0x5EED);
    for round in 0..300 {
        let mut body = Vec::new();
        for _ in 0..rng.usize(0..6) {
            let payload: Vec<u8> = (0..rng.usize(0..40)).map(|_| rng.u8(..)).collect();
            let name = ["chunk", "messageStart", "x"][rng.usize(0..3)];
            let mut f = event_frame(name, &payload);
            match rng.usize(0..8) {
                0 => {
                    let i = rng.usize(0..f.len());
                    f[i] ^= 1 << rng.u8(0..8);
                }
                1 => f.truncate(rng.usize(0..f.len())),
                2 => f.extend((0..rng.usize(1..5)).map(|_| rng.u8(..))),
                _ => {}
            }
            body.extend_from_slice(&f);
        }
        let limit = if round % 5 == 0 { 64 } else { u64::MAX };
        let whole = run(&body, &[], limit);
        let bytewise: Vec<usize> = (1..body.len()).collect();
        assert_eq!(run(&body, &bytewise, limit), whole, "round {round}");
        for _ in 0..5 {
            let cuts = chunking::random_cuts(&mut rng, body.len(), 30);
            assert_eq!(run(&body, &cuts, limit), whole, "round {round} {cuts:?}");
        }
        // Every byte is accounted for: frames and corrupt stretches tile what was read, up to
        // the cut or the overflow.
        let (items, cut, overflow) = whole;
        let mut end = 0;
        for i in &items {
            let span = match i {
                Item::Frame(s, _, _) => s.clone(),
                Item::Corrupt(e) => e.span.clone(),
            };
            assert_eq!(span.start, end, "round {round}: {items:?}");
            end = span.end;
        }
        let stop = match (cut, overflow) {
            (Some(c), _) => {
                assert_eq!(c.span.start, end);
                c.span.end
            }
            (None, Some(o)) => {
                assert_eq!(o.start, end);
                o.start
            }
            (None, None) => end,
        };
        if overflow.is_none() {
            assert_eq!(stop, body.len() as u64, "round {round}");
        }
    }
}
