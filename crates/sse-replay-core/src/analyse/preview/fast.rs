//! Which calls' previews may be judged without parsing each prefix.
//!
//! A call's accumulated text only grows: each prefix is a prefix of the final text. When the
//! final text parses (as jiter reads it, showing nothing its final arguments contradict) and
//! repeats no object key, a prefix that ends where [`super::Visible::settled`] holds shows only
//! complete values (the very tokens of the final text, so the same values at the same places),
//! open containers holding a prefix of their final elements and keys, and possibly a string
//! value cut short with no escape near its end (shown as a prefix of its final value). None of
//! that contradicts the final arguments, so the prefix is stable without a jiter parse. A prefix
//! ending inside a number or literal (`3` of `31`, `tr`), or near an escape in an open string,
//! is parsed and checked as before; so is every prefix of a call that fails this test. The tests
//! below hold the fast summary to the all-parsing one.

use jiter::JsonValue;
use rustc_hash::FxHashSet;
use serde_json::Value;

/// The call's `text` parses as one JSON document whose jiter value `fin` does not contradict,
/// and no object in it repeats a key (serde_json keeps a repeated key's last value, so an
/// earlier one shown in a preview may differ from it).
pub(super) fn eligible(text: &str, fin: &Value) -> bool {
    match JsonValue::parse(text.as_bytes(), false) {
        Ok(v) => no_repeated_keys(&v) && super::contradictions(&v, fin).is_empty(),
        Err(_) => false,
    }
}

/// A prefix of an [`eligible`] call's `text` ends at `end` inside the scalar that began at
/// `start`: whether the prefix is contradicted, judged from that number alone (jiter reads the
/// cut token alone as it reads it in place; everything before it is complete): `Some(false)`
/// when jiter shows it as its final value (`31` of `31}`), `Some(true)` when it shows another
/// (`3` of `31`). `None` for a literal (`tr`) or a cut jiter shows nothing of: the prefix is then
/// parsed and checked whole.
pub(super) fn number_judgement(text: &str, start: usize, end: usize) -> Option<bool> {
    let bytes = text.as_bytes();
    if !matches!(bytes.get(start), Some(b'-' | b'0'..=b'9')) {
        return None;
    }
    let token_end = bytes
        .get(start..)
        .and_then(|rest| {
            rest.iter()
                .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        })
        .map_or(text.len(), |n| start + n);
    let cut = text.get(start..end)?;
    let fin = serde_json::from_str::<Value>(text.get(start..token_end)?).ok()?;
    let shown = JsonValue::parse_with_config(cut.as_bytes(), false, super::MODE).ok()?;
    Some(!super::contradictions(&shown, &fin).is_empty())
}

fn no_repeated_keys(v: &JsonValue<'_>) -> bool {
    match v {
        JsonValue::Array(a) => a.iter().all(no_repeated_keys),
        JsonValue::Object(o) => {
            let unique = match o.len() {
                0 | 1 => true,
                // Small objects (the usual arguments): compare pairwise, no allocation.
                2..=8 => o
                    .iter()
                    .enumerate()
                    .all(|(i, (k, _))| o.iter().skip(i + 1).all(|(l, _)| k != l)),
                _ => {
                    let mut seen = FxHashSet::default();
                    o.iter().all(|(k, _)| seen.insert(k.as_ref()))
                }
            };
            unique && o.iter().all(|(_, x)| no_repeated_keys(x))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {

    use super::super::{Visible, summarize_prefixes};
    use super::*;
    use crate::accumulate::{Parsed, parse_value};
    use crate::analysis::{Analysis, CallPreview, SourceInfo};
    use crate::dialect::DialectKind;
    use crate::pipeline::Options;
    use crate::stub::{self, Layout, StubCall, StubSpec};

    /// The summary of `text` cut at `ends`, fast and all-parsing; with how many prefixes the
    /// fast one judged without a parse.
    fn both(text: &str, ends: &[usize], fin: &Value) -> (CallPreview, CallPreview) {
        let fragments = || ends.iter().enumerate().map(|(i, &e)| (i as u32, e));
        let blank = || CallPreview {
            call: 0,
            previews: ends.len() as u64,
            stable: 0,
            contradicted: 0,
            first_contradiction: None,
            checked: true,
        };
        let (mut fast, mut slow) = (blank(), blank());
        let ok = eligible(text, fin);
        summarize_prefixes(&mut fast, fragments(), text, fin, ok);
        summarize_prefixes(&mut slow, fragments(), text, fin, false);
        (fast, slow)
    }

    /// Every character boundary of `text` as a fragment end (with one empty fragment).
    fn every_char(text: &str) -> Vec<usize> {
        let mut ends: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        ends.push(text.len());
        if let Some(&e) = ends.first() {
            ends.insert(0, e);
        }
        ends
    }

    /// Random fragment ends (possibly empty fragments), rounded down to character boundaries.
    fn random_cuts(text: &str, rng: &mut fastrand::Rng) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut at = 0;
        while at < text.len() {
            at = (at + rng.usize(0..=9)).min(text.len());
            let mut e = at;
            while !text.is_char_boundary(e) {
                e -= 1;
            }
            ends.push(e);
        }
        ends
    }

    /// Fast and all-parsing summaries of `text` (final value parsed from it) cut at every
    /// character, at random, and into one piece; `true` when the call was eligible.
    fn compare(text: &str, rng: &mut fastrand::Rng, what: &str) -> bool {
        let Parsed::Ok(fin) = parse_value(text) else {
            return false;
        };
        let mut cuts = vec![every_char(text), vec![text.len()]];
        for _ in 0..4 {
            cuts.push(random_cuts(text, rng));
        }
        for ends in &cuts {
            let (fast, slow) = both(text, ends, &fin);
            assert_eq!(fast, slow, "{what}: {text:?} cut at {ends:?}");
        }
        eligible(text, &fin)
    }

    #[test]
    fn repeated_keys_and_odd_numbers_are_not_eligible() {
        let fin = |t: &str| serde_json::from_str::<Value>(t).expect("parses");
        let t = r#"{"a":"xyz","b":{"c":1,"c":1}}"#;
        assert!(!eligible(t, &fin(t)));
        let t = r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k0":"x"}"#;
        assert!(!eligible(t, &fin(t)));
        let t = r#"{"a":"xyz","b":[{"c":1,"d":"e"}]}"#;
        assert!(eligible(t, &fin(t)));
        // A value jiter reads otherwise than serde_json would be a contradiction at the end.
        assert!(!eligible(r#"{"a":1}"#, &fin(r#"{"a":2}"#)));
        assert!(!eligible("{", &fin("{}")));
        // A repeated key's earlier string value is shown, then contradicted: the slow path
        // says so, and the fast one takes it.
        let t = r#"{"a":"xyz","a":"x"}"#;
        let (fast, slow) = both(t, &every_char(t), &fin(t));
        assert!(slow.contradicted > 0);
        assert_eq!(fast, slow);
    }

    /// Where [`Visible::settled`] holds, jiter's preview of the prefix contradicts nothing in
    /// the whole document (one without repeated keys).
    #[test]
    fn settled_prefixes_show_nothing_contradicted() {
        let docs = [
            r#"{"k":"v \"q\" 深","n":12,"a":[true,null,-1.5e3],"o":{}}"#,
            r#"{"s":"\ud83d\ude00 and \u00e9\n\\","t":"x\"","u":[-0,1E+2,0.5]}"#,
            r#"[{"k":"}]{[,:"},{"":""},"\"",-0,1E+2,false]"#,
            "  \"top\\tlevel\"  ",
            "  -12.5e-3 ",
        ];
        let mut checked = 0;
        for doc in docs {
            let fin: Value = serde_json::from_str(doc).expect("parses");
            let mut v = Visible::default();
            let mut prev = 0;
            for end in every_char(doc) {
                v.feed(&doc[prev..end]);
                prev = end;
                if v.settled() {
                    let text = &doc[..end];
                    if let Ok(shown) =
                        JsonValue::parse_with_config(text.as_bytes(), false, super::super::MODE)
                    {
                        assert!(
                            super::super::contradictions(&shown, &fin).is_empty(),
                            "{text:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 80, "{checked} settled prefixes checked");
    }

    /// A random JSON document: strings with escapes, unicode and surrogate pairs, numbers,
    /// literals, nested containers, whitespace, now and then a repeated key.
    fn doc(rng: &mut fastrand::Rng, depth: u32, out: &mut String) {
        let ws = |rng: &mut fastrand::Rng, out: &mut String| {
            if rng.u8(..) < 40 {
                out.push_str([" ", "\n  ", "\t", "\r\n"][rng.usize(..4)]);
            }
        };
        ws(rng, out);
        let pick = if depth >= 4 {
            rng.u8(0..4)
        } else {
            rng.u8(0..7)
        };
        match pick {
            0 => string(rng, out),
            1 => {
                let n = [
                    "0",
                    "-0",
                    "7",
                    "31",
                    "-12",
                    "3.25",
                    "-0.5",
                    "1e3",
                    "2E-2",
                    "6.02e+23",
                    "123456789012",
                    "18446744073709551615",
                    "-9223372036854775808",
                    "1.0",
                    "12345678901234567890123",
                    "0.1",
                ];
                out.push_str(n[rng.usize(..n.len())]);
            }
            2 => out.push_str(["true", "false", "null"][rng.usize(..3)]),
            3 => string(rng, out),
            4 | 5 => {
                out.push('{');
                let n = rng.usize(0..5);
                let mut keys: Vec<String> = Vec::new();
                for i in 0..n {
                    if i > 0 {
                        out.push(',');
                    }
                    ws(rng, out);
                    let key = if !keys.is_empty() && rng.u8(..) < 20 {
                        keys[rng.usize(..keys.len())].clone()
                    } else {
                        let mut k = String::new();
                        string(rng, &mut k);
                        k
                    };
                    out.push_str(&key);
                    keys.push(key);
                    ws(rng, out);
                    out.push(':');
                    doc(rng, depth + 1, out);
                }
                ws(rng, out);
                out.push('}');
            }
            _ => {
                out.push('[');
                let n = rng.usize(0..5);
                for i in 0..n {
                    if i > 0 {
                        out.push(',');
                    }
                    doc(rng, depth + 1, out);
                }
                ws(rng, out);
                out.push(']');
            }
        }
        ws(rng, out);
    }

    fn string(rng: &mut fastrand::Rng, out: &mut String) {
        out.push('"');
        for _ in 0..rng.usize(0..14) {
            let piece = [
                "a",
                "b",
                "xyz",
                " ",
                "深",
                "圳",
                "é",
                "😀",
                "\\\"",
                "\\\\",
                "\\/",
                "\\n",
                "\\t",
                "\\u00e9",
                "\\u6df1",
                "\\ud83d\\ude00",
                "\\u0041",
                ",",
                ":",
                "{",
                "]",
                "0",
            ];
            out.push_str(piece[rng.usize(..piece.len())]);
        }
        out.push('"');
    }

    #[test]
    fn fast_summaries_equal_the_parsing_ones_on_random_documents() {
        let mut rng = fastrand::Rng::with_seed(12);
        let (mut eligible_docs, mut not) = (0, 0);
        for _ in 0..1500 {
            let mut text = String::new();
            doc(&mut rng, 0, &mut text);
            match compare(&text, &mut rng, "random") {
                true => eligible_docs += 1,
                false => not += 1,
            }
        }
        assert!(
            eligible_docs > 500 && not > 50,
            "{eligible_docs} eligible, {not} not"
        );
    }

    /// Every call of every bundled recording, fixture, import and complete body, every stub quirk
    /// stream in every dialect, and the generated benchmark stream's calls: the fast summary of
    /// each call's real fragments (and of its text cut at every character and at random) is the
    /// all-parsing one.
    #[test]
    fn fast_summaries_equal_the_parsing_ones_on_every_stream() {
        let root = crate::repo_root();
        let mut analyses = Vec::new();
        for d in [
            "recordings",
            "tests/data/fixtures",
            "tests/data/import",
            "tests/data/complete",
        ] {
            for e in std::fs::read_dir(root.join(d))
                .into_iter()
                .flatten()
                .flatten()
            {
                let opened = crate::probe::open(&e.path(), crate::probe::ReadOptions::default());
                if let Some(a) = opened.ok().and_then(|p| p.analyse(true).ok()) {
                    analyses.push(a);
                }
            }
        }
        let source = || SourceInfo {
            name: "stub".into(),
            kind: "recording".into(),
            timing_known: true,
        };
        let calls = vec![
            StubCall {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"深圳","days":31,"units":"metric","ok":true}"#.into(),
            },
            StubCall {
                id: "call_2".into(),
                name: "note".into(),
                arguments:
                    r#"{"text":"a \"quoted\" \\ line\nnext \ud83d\ude00","tags":["x",null,1.5e2]}"#
                        .into(),
            },
        ];
        for q in 0..10 {
            for dialect in [
                DialectKind::OpenAiChat,
                DialectKind::OpenAiResponses,
                DialectKind::AnthropicMessages,
                DialectKind::Gemini,
                DialectKind::Ollama,
            ] {
                let mut spec = StubSpec {
                    calls: calls.clone(),
                    fragment_chars: vec![1 + q % 4, 3, 7],
                    dialect,
                    layout: if q % 2 == 0 {
                        Layout::Sequential
                    } else {
                        Layout::Interleaved
                    },
                    ..StubSpec::default()
                };
                let k = &mut spec.quirks;
                match q {
                    1 => k.repeat_name = true,
                    2 => k.no_index = true,
                    3 => k.all_at_index_zero = true,
                    4 => k.object_arguments = true,
                    5 => k.cumulative = true,
                    6 => k.finish_with_last_fragment = true,
                    7 => k.truncate = true,
                    8 => k.index_base = 1,
                    9 => k.empty_id_continuations = true,
                    _ => {}
                }
                let rec = stub::build(&spec);
                analyses.push(Analysis::from_recording(&rec, source(), Options::default()));
            }
        }
        let rec = crate::generate::large_recording(3);
        analyses.push(Analysis::from_recording(&rec, source(), Options::default()));

        let mut rng = fastrand::Rng::with_seed(7);
        let (mut calls_compared, mut eligible_calls) = (0, 0);
        for a in &analyses {
            for c in &a.calls {
                // A custom tool's free-form input is text, not JSON: no preview to compare.
                if c.text_input {
                    continue;
                }
                // The real fragments, as `check` summarizes them.
                let fin = match &c.parsed {
                    Parsed::Ok(v) => v,
                    Parsed::Err { .. } => continue,
                };
                let ends: Vec<usize> = c
                    .fragments
                    .iter()
                    .map(|&no| {
                        a.fragments
                            .get(no as usize)
                            .map_or(0, |f| f.args_range.end as usize)
                    })
                    .collect();
                let (fast, slow) = both(&c.raw_arguments, &ends, fin);
                assert_eq!(fast, slow, "{:?}", c.raw_arguments);
                assert_eq!(super::super::summarize(a, c).stable, slow.stable);
                calls_compared += 1;
                if compare(&c.raw_arguments, &mut rng, "stream") {
                    eligible_calls += 1;
                }
            }
        }
        assert!(
            calls_compared > 100 && eligible_calls > 50,
            "{calls_compared} calls, {eligible_calls} eligible"
        );
    }
}
