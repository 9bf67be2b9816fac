//! The 14 recorded SDK fixtures (`tests/data/fixtures/`, unmodified public test data) against
//! `expected.json`: framing and dialect auto-detected, every call's id (null when the stream has
//! none), name and parsed arguments; `expected_failure` calls fail to parse with the raw text kept.
//! Then the chunking property: every split offset (small fixtures) and random splits (all of them)
//! give identical calls.

use crate::common;

use std::path::PathBuf;

use serde_json::Value;
use sse_replay_core::accumulate::{Call, Parsed};
use sse_replay_core::pipeline::{Options, PipelineOutput, run_chunks};

/// Fixtures up to this size are also checked at every single split offset.
const EVERY_OFFSET_MAX_BYTES: usize = 8 * 1024;

fn dir() -> PathBuf {
    crate::common::repo_root().join("tests/data/fixtures")
}

struct Fixture {
    file: String,
    body: Vec<u8>,
    expected: Value,
}

fn fixtures() -> Vec<Fixture> {
    let text = std::fs::read_to_string(dir().join("expected.json")).expect("expected.json");
    let doc: Value = serde_json::from_str(&text).expect("expected.json is JSON");
    let map = doc.as_object().expect("object keyed by file");
    assert_eq!(map.len(), 14, "14 fixtures");
    map.iter()
        .map(|(file, expected)| Fixture {
            body: std::fs::read(dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}")),
            file: file.clone(),
            expected: expected.clone(),
        })
        .collect()
}

fn run(body: &[u8], cuts: &[usize]) -> PipelineOutput {
    run_chunks(common::reads(body, cuts), Options::default())
}

/// What the comparison looks at: id, name, raw arguments, parse result (not completeness, unlike
/// `common::call_summary`).
fn summary(calls: &[Call]) -> Vec<(Option<String>, String, String, Parsed)> {
    calls
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                c.name.clone(),
                c.raw_arguments.to_string(),
                c.parsed.clone(),
            )
        })
        .collect()
}

fn check_against_expected(f: &Fixture, out: &PipelineOutput) -> Result<(), String> {
    let e = &f.expected;
    let framing = out.framing.map(|x| x.name()).unwrap_or("undecided");
    if framing != e["framing"].as_str().unwrap_or("") {
        return Err(format!("framing {framing}, expected {}", e["framing"]));
    }
    if out.dialect.name() != e["dialect"].as_str().unwrap_or("") || !out.dialect_known {
        return Err(format!(
            "dialect {} (known: {}), expected {}",
            out.dialect.name(),
            out.dialect_known,
            e["dialect"]
        ));
    }
    let want = e["calls"].as_array().expect("calls");
    if out.calls.len() != want.len() {
        return Err(format!(
            "{} calls, expected {}: {:#?}",
            out.calls.len(),
            want.len(),
            summary(&out.calls)
        ));
    }
    let expected_failure = e["expected_failure"].as_bool().unwrap_or(false);
    for (i, (got, w)) in out.calls.iter().zip(want).enumerate() {
        let want_id = w["id"].as_str().map(str::to_owned);
        if got.id != want_id {
            return Err(format!("call {i}: id {:?}, expected {want_id:?}", got.id));
        }
        if got.name != w["name"].as_str().unwrap_or("") {
            return Err(format!(
                "call {i}: name {:?}, expected {}",
                got.name, w["name"]
            ));
        }
        match w.get("arguments") {
            Some(args) => {
                if got.value() != Some(args) {
                    return Err(format!(
                        "call {i}: arguments {:?} (raw {:?}), expected {args}",
                        got.parsed, got.raw_arguments
                    ));
                }
            }
            None => {
                assert!(
                    expected_failure,
                    "{}: call {i} has neither arguments nor a failure",
                    f.file
                );
                let raw = w["arguments_raw"].as_str().expect("arguments_raw");
                if !matches!(got.parsed, Parsed::Err { .. }) {
                    return Err(format!(
                        "call {i}: expected a parse failure, got {:?}",
                        got.parsed
                    ));
                }
                if got.raw_arguments != raw {
                    return Err(format!(
                        "call {i}: raw arguments {:?}, expected {raw:?}",
                        got.raw_arguments
                    ));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn every_fixture_gives_the_expected_calls() {
    let mut failures = Vec::new();
    for f in fixtures() {
        let out = run(&f.body, &[]);
        if let Err(e) = check_against_expected(&f, &out) {
            failures.push(format!("{}: {e}", f.file));
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn expected_failures_are_reported_as_failures() {
    let fixtures = fixtures();
    let failing: Vec<&Fixture> = fixtures
        .iter()
        .filter(|f| f.expected["expected_failure"] == true)
        .collect();
    assert_eq!(failing.len(), 1);
    for f in failing {
        let out = run(&f.body, &[]);
        assert!(out.calls.iter().any(|c| c.value().is_none()), "{}", f.file);
    }
}

#[test]
fn the_sse_fixtures_and_the_jsonl_fixtures_are_detected() {
    let fixtures = fixtures();
    let sse = fixtures
        .iter()
        .filter(|f| f.expected["framing"] == "sse")
        .count();
    let jsonl = fixtures
        .iter()
        .filter(|f| f.expected["framing"] == "jsonl")
        .count();
    assert_eq!((sse, jsonl), (7, 7));
    for dialect in [
        "openai-chat",
        "openai-responses",
        "anthropic-messages",
        "gemini",
    ] {
        assert!(
            fixtures.iter().any(|f| f.expected["dialect"] == dialect),
            "{dialect}"
        );
    }
}

#[test]
fn every_split_offset_gives_identical_calls() {
    let mut failures = Vec::new();
    for f in fixtures()
        .into_iter()
        .filter(|f| f.body.len() <= EVERY_OFFSET_MAX_BYTES)
    {
        let whole = run(&f.body, &[]);
        let want = summary(&whole.calls);
        for cut in 0..=f.body.len() {
            let out = run(&f.body, &[cut]);
            if summary(&out.calls) != want
                || out.dialect != whole.dialect
                || out.framing != whole.framing
                || out.event_count != whole.event_count
            {
                failures.push(format!("{}: split at {cut} differs", f.file));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn random_cuts(rng: &mut fastrand::Rng, len: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut at = 0;
    // Mostly small reads (a few bytes to ~100), sometimes big ones.
    loop {
        let step = if rng.usize(..8) == 0 {
            1 + rng.usize(..2000)
        } else {
            1 + rng.usize(..100)
        };
        at += step;
        if at >= len {
            return cuts;
        }
        cuts.push(at);
    }
}

#[test]
fn random_splits_give_identical_calls_and_still_match_expected() {
    let mut rng = fastrand::Rng::with_seed(0x5EED_2191_DDE7_B2A4);
    let mut failures = Vec::new();
    for f in fixtures() {
        let whole = run(&f.body, &[]);
        let want = summary(&whole.calls);
        for round in 0..40 {
            let cuts = random_cuts(&mut rng, f.body.len());
            let out = run(&f.body, &cuts);
            if summary(&out.calls) != want {
                failures.push(format!("{}: round {round}, cuts {cuts:?}", f.file));
                break;
            }
            if round == 0
                && let Err(e) = check_against_expected(&f, &out)
            {
                failures.push(format!("{}: {e}", f.file));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn byte_by_byte_gives_identical_calls() {
    for f in fixtures() {
        let whole = run(&f.body, &[]);
        let cuts: Vec<usize> = (1..f.body.len()).collect();
        let out = run(&f.body, &cuts);
        assert_eq!(summary(&out.calls), summary(&whole.calls), "{}", f.file);
    }
}
