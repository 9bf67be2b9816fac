//! The SSE conformance file (`tests/data/sse-conformance.json`: the web-platform-tests eventsource
//! format tests transcribed, plus spec-derived edge cases) run against [`SseParser`]: each case as
//! given (with its `split_at_bytes` reads and `initial_last_event_id`), then at every single split
//! offset and byte by byte. The expected events and the `retry` value must be identical every time.

use serde_json::Value;
use sse_replay_core::sse::{SseItem, SseParser};

const CASES: &str = include_str!("../../../../tests/data/sse-conformance.json");

/// One dispatched event as the conformance file states it: (type, data, last event id).
type Ev = (String, String, String);

struct Case {
    name: String,
    body: Vec<u8>,
    splits: Vec<usize>,
    initial_id: String,
    expected: Vec<Ev>,
    retry_ms: Option<u64>,
}

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).expect("ascii"), 16).expect("hex"))
        .collect()
}

fn cases() -> Vec<Case> {
    let doc: Value = serde_json::from_str(CASES).expect("conformance file is JSON");
    let cases = doc["cases"].as_array().expect("cases array");
    assert!(
        cases.len() >= 49,
        "the file has 49 cases, found {}",
        cases.len()
    );
    cases
        .iter()
        .map(|c| {
            let name = c["name"].as_str().expect("name").to_owned();
            let body = match c["input"].as_str() {
                Some(s) => s.as_bytes().to_vec(),
                None => hex(c["input_hex"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{name}: no input"))),
            };
            let splits = c["split_at_bytes"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_u64().expect("offset") as usize)
                        .collect()
                })
                .unwrap_or_default();
            let expected = c["expected"]
                .as_array()
                .expect("expected")
                .iter()
                .map(|e| {
                    let f = |k: &str| {
                        e[k].as_str()
                            .unwrap_or_else(|| panic!("{name}: {k}"))
                            .to_owned()
                    };
                    (f("event"), f("data"), f("id"))
                })
                .collect();
            Case {
                initial_id: c["initial_last_event_id"].as_str().unwrap_or("").to_owned(),
                retry_ms: c["retry_ms"].as_u64(),
                name,
                body,
                splits,
                expected,
            }
        })
        .collect()
}

/// Feed `body` cut at `cuts` (sorted offsets) and return the events and the retry value.
fn run(case: &Case, cuts: &[usize]) -> (Vec<Ev>, Option<u64>) {
    let mut p = if case.initial_id.is_empty() {
        SseParser::new()
    } else {
        SseParser::with_last_event_id(&case.initial_id)
    };
    let mut out = Vec::new();
    let mut sink = |item: SseItem<'_>| {
        if let SseItem::Event(e) = item {
            out.push((
                e.event_type.to_owned(),
                e.data.to_owned(),
                e.last_event_id.to_owned(),
            ));
        }
    };
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&case.body.len())) {
        p.feed(&case.body[start..cut], &mut sink);
        start = cut;
    }
    p.finish();
    (out, p.retry_ms())
}

fn assert_case(case: &Case, cuts: &[usize]) {
    let (events, retry) = run(case, cuts);
    assert_eq!(
        events, case.expected,
        "{}: events (reads cut at {cuts:?})",
        case.name
    );
    assert_eq!(
        retry, case.retry_ms,
        "{}: retry (reads cut at {cuts:?})",
        case.name
    );
}

#[test]
fn every_case_as_given() {
    for case in cases() {
        assert_case(&case, &case.splits);
    }
}

#[test]
fn every_case_in_one_read() {
    for case in cases() {
        assert_case(&case, &[]);
    }
}

#[test]
fn every_case_at_every_split_offset() {
    for case in cases() {
        for cut in 0..=case.body.len() {
            assert_case(&case, &[cut]);
        }
    }
}

#[test]
fn every_case_byte_by_byte() {
    for case in cases() {
        let cuts: Vec<usize> = (1..case.body.len()).collect();
        assert_case(&case, &cuts);
    }
}

#[test]
fn every_case_with_two_cuts_around_each_offset() {
    // Two cuts, so a CRLF or a BOM can be split into three reads.
    for case in cases() {
        let n = case.body.len();
        for a in 0..=n {
            for b in [a + 1, a + 2] {
                if b <= n {
                    assert_case(&case, &[a, b]);
                }
            }
        }
    }
}

#[test]
fn the_file_exercises_the_harness_features() {
    let cases = cases();
    assert!(cases.iter().any(|c| !c.splits.is_empty()));
    assert!(cases.iter().any(|c| !c.initial_id.is_empty()));
    assert!(
        cases.iter().any(|c| std::str::from_utf8(&c.body).is_err()),
        "an input_hex case"
    );
    assert!(cases.iter().any(|c| c.retry_ms.is_some()));
}
