//! The naive strategies take their arguments texts from the correct calls (shared, or pieces of
//! them) instead of keeping copies: they must end with exactly the texts they built when they
//! kept their own. A reference model — each strategy's text-building as it was, on its own
//! copies — is fed the same facts over every bundled recording and every stream under
//! `tests/data/`, and its texts are compared with the reports'; then the texts are shown to be
//! shared, and arguments a dialect gave only in a done event (which no strategy sees) to stay out
//! of them.

use crate::common;

use std::path::Path;

use sse_replay_core::accumulate::{Parsed, parse_value};
use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::fact::{CallKey, Fact, FactObserver, Fragment, Pos};
use sse_replay_core::naive::{Balance, Strategy};
use sse_replay_core::pipeline::{Options, Pipeline};
use sse_replay_core::recording::Recording;
use sse_replay_core::text::SharedText;

/// The arguments text a fragment carries (`""` when absent or `null`).
fn text(f: &Fragment) -> &str {
    f.args.value().map_or("", |p| p.text())
}

/// The strategies' texts as they were built when each kept its own (see the module
/// documentation): per strategy, its calls' arguments in report order.
#[derive(Default)]
struct Model {
    per_fragment: Vec<String>,
    concat_all: Option<String>,
    /// Per key in order of first fragment: text.
    concat_fields: Vec<(CallKey, String)>,
    nid_current: Option<CallKey>,
    nid_open: Vec<(CallKey, String)>,
    nid_done: Vec<String>,
    nid_closed: Vec<CallKey>,
    pwv_open: Vec<(CallKey, String)>,
    pwv_done: Vec<String>,
    pwv_closed: Vec<CallKey>,
}

/// The entry of `key` in a first-seen-order table.
fn entry<'a>(table: &'a mut Vec<(CallKey, String)>, key: &CallKey) -> &'a mut String {
    let i = match table.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            table.push((key.clone(), String::new()));
            table.len() - 1
        }
    };
    &mut table[i].1
}

impl FactObserver for Model {
    fn on_fact(&mut self, fact: &Fact, _pos: Pos, _fragment_no: u32) {
        let Fact::Fragment(f) = fact else {
            return;
        };
        let t = text(f);
        if f.args.value().is_some()
            && Balance::of(t).may_parse()
            && matches!(parse_value(t), Parsed::Ok(_))
        {
            self.per_fragment.push(t.to_owned());
        }
        self.concat_all.get_or_insert_with(String::new).push_str(t);
        entry(&mut self.concat_fields, &f.key).push_str(t);
        // next-index-done: another key finishes the current call.
        if self.nid_current.as_ref() != Some(&f.key) {
            if let Some(prev) = self.nid_current.take()
                && let Some(i) = self.nid_open.iter().position(|(k, _)| *k == prev)
            {
                self.nid_done.push(self.nid_open.remove(i).1);
                self.nid_closed.push(prev);
            }
            self.nid_current = Some(f.key.clone());
        }
        if !self.nid_closed.contains(&f.key) {
            entry(&mut self.nid_open, &f.key).push_str(t);
        }
        // parse-when-valid: done as soon as the buffer parses (1 MiB at most).
        if !self.pwv_closed.contains(&f.key) {
            let buffer = entry(&mut self.pwv_open, &f.key);
            buffer.push_str(t);
            if !buffer.trim().is_empty()
                && buffer.len() <= 1 << 20
                && matches!(parse_value(buffer), Parsed::Ok(_))
                && let Some(i) = self.pwv_open.iter().position(|(k, _)| *k == f.key)
            {
                self.pwv_done.push(self.pwv_open.remove(i).1);
                self.pwv_closed.push(f.key.clone());
            }
        }
    }

    fn on_finish(&mut self, _finished_at: Option<Pos>) {}
}

impl Model {
    /// Each strategy's texts, in report order.
    fn texts(self) -> Vec<(Strategy, Vec<String>)> {
        let rest = |v: Vec<(CallKey, String)>| v.into_iter().map(|(_, t)| t);
        vec![
            (Strategy::PerFragment, self.per_fragment),
            (Strategy::ConcatAll, self.concat_all.into_iter().collect()),
            (Strategy::ConcatFields, rest(self.concat_fields).collect()),
            (
                Strategy::NextIndexDone,
                self.nid_done
                    .into_iter()
                    .chain(rest(self.nid_open))
                    .collect(),
            ),
            (
                Strategy::ParseWhenValid,
                self.pwv_done
                    .into_iter()
                    .chain(rest(self.pwv_open))
                    .collect(),
            ),
        ]
    }
}

/// The model's texts for the facts `a`'s correct pass saw (its body fed again with its options).
fn model_texts(a: &Analysis) -> Vec<(Strategy, Vec<String>)> {
    let opts = Options {
        detail: false,
        ..a.options
    };
    let mut p = Pipeline::observed(opts, Model::default());
    for c in &a.chunks {
        p.feed(a.bytes(&(c.start..c.end)), c.t_micros);
    }
    p.finish_observed().1.texts()
}

/// `a`'s strategies' texts, strategy by strategy as the model gives them.
fn report_texts(a: &Analysis, strategy: Strategy) -> Vec<String> {
    a.strategies
        .iter()
        .find(|r| r.report.strategy == strategy)
        .map(|r| {
            r.report
                .calls
                .iter()
                .map(|c| c.raw_arguments.to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Every recording a path under `tests/data/` (or `recordings/`) opens to.
fn recordings_of(path: &Path) -> Vec<Recording> {
    let Ok(probe) = sse_replay_core::probe::open(path, Default::default()) else {
        return Vec::new();
    };
    match probe.recordings(|_, _| true) {
        Ok(sse_replay_core::open::Opened::One { recording, .. }) => vec![*recording],
        Ok(sse_replay_core::open::Opened::Several { recordings }) => recordings,
        Err(_) => Vec::new(),
    }
}

/// Every file under `dir`, sorted.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d)
            .expect("read_dir")
            .filter_map(Result::ok)
        {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_strategy_ends_with_the_texts_it_built_on_its_own_copies() {
    let root = common::repo_root();
    let mut recordings: Vec<(String, Recording)> = crate::data::bundled();
    for path in files(&root.join("tests/data")) {
        let name = path.display().to_string();
        recordings.extend(recordings_of(&path).into_iter().map(|r| (name.clone(), r)));
    }
    let (mut streams, mut calls) = (0, 0);
    for (name, rec) in &recordings {
        let source = SourceInfo {
            name: name.clone(),
            kind: "recording".into(),
            timing_known: true,
        };
        let a = Analysis::from_recording(rec, source, Options::default());
        if a.complete {
            continue;
        }
        streams += 1;
        for (strategy, want) in model_texts(&a) {
            let got = report_texts(&a, strategy);
            calls += got.len();
            assert_eq!(got, want, "{name}: {}", strategy.name());
        }
    }
    assert!(streams > 100, "{streams} streams");
    assert!(calls > 500, "{calls} strategy calls");
}

/// Where a naive call's text is the correct call's, or a prefix or piece of it, it is the
/// correct call's own bytes (shared), not a copy: `concat-fields` and `concat-all` of a one-call
/// stream hold the very text, `next-index-done` and `parse-when-valid` prefixes, `per-fragment`
/// pieces.
#[test]
fn the_strategies_share_the_correct_calls_text() {
    // One call in three fragments, the middle one a JSON document alone; then [DONE].
    let chunk = |args: &str, first: bool| {
        let head = if first {
            r#""id":"call_1","type":"function","function":{"name":"f","arguments":"#
        } else {
            r#""function":{"arguments":"#
        };
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,{head}{}}}}}]}}}}]}}\n\n",
            serde_json::to_string(args).expect("json")
        )
    };
    let body = [
        chunk("{\"a\":", true),
        chunk("12", false),
        chunk("}", false),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n".into(),
    ]
    .concat();
    let a = common::analyse_raw(body.as_bytes(), None);
    assert_eq!(a.calls.len(), 1);
    let correct = &a.calls[0].raw_arguments;
    assert_eq!(correct, "{\"a\":12}");
    let shares = |strategy: Strategy| -> Vec<SharedText> {
        let r = a
            .strategies
            .iter()
            .find(|r| r.report.strategy == strategy)
            .expect("reported");
        for c in &r.report.calls {
            assert!(
                arcstr::ArcStr::ptr_eq(c.raw_arguments.parent(), correct.parent()),
                "{}: {:?} is a copy",
                strategy.name(),
                c.raw_arguments
            );
        }
        r.report
            .calls
            .iter()
            .map(|c| c.raw_arguments.clone())
            .collect()
    };
    assert_eq!(shares(Strategy::ConcatFields), [correct.as_str()]);
    assert_eq!(shares(Strategy::ConcatAll), [correct.as_str()]);
    assert_eq!(shares(Strategy::NextIndexDone), [correct.as_str()]);
    assert_eq!(shares(Strategy::ParseWhenValid), [correct.as_str()]);
    assert_eq!(shares(Strategy::PerFragment), ["12"]);
    // The correct call's value, when held as its text, holds the same text.
    assert!(matches!(a.calls[0].parsed, Parsed::Ok(_)));
}

/// Arguments a Responses stream gave only in a done event become the correct call's text (the
/// accumulator appends them), never a strategy's: a delta that comes after them is placed after
/// them in the correct call's text, and a strategy's text is only the deltas.
#[test]
fn arguments_only_in_a_done_event_stay_out_of_the_strategies_texts() {
    let events = [
        r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_1","name":"f"}}"#,
        r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"a\":1}"}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"[2]"}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_2","type":"function_call","arguments":"","call_id":"call_2","name":"g"}}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":1,"delta":"{\"b\":"}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":1,"delta":"2}"}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ];
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    let a = common::analyse_raw(body.as_bytes(), None);
    let correct: Vec<&str> = a.calls.iter().map(|c| c.raw_arguments.as_str()).collect();
    assert_eq!(correct, ["{\"a\":1}[2]", "{\"b\":2}"]);
    for (strategy, want) in model_texts(&a) {
        assert_eq!(report_texts(&a, strategy), want, "{}", strategy.name());
    }
    assert_eq!(
        report_texts(&a, Strategy::ConcatFields),
        ["[2]", "{\"b\":2}"]
    );
    assert_eq!(report_texts(&a, Strategy::ConcatAll), ["[2]{\"b\":2}"]);
    assert_eq!(report_texts(&a, Strategy::PerFragment), ["[2]"]);
}

/// `check`'s counting strategies (a raw body read as it comes) end with the same texts as the
/// full ones, on every stream body under `tests/data/`.
#[test]
fn counting_strategies_end_with_the_same_texts() {
    let root = common::repo_root();
    let mut compared = 0;
    for path in files(&root.join("tests/data")) {
        let open = |keep: bool| {
            sse_replay_core::probe::open(&path, Default::default())
                .ok()?
                .analyse(keep)
                .ok()
        };
        let (Some(full), Some(lean)) = (open(true), open(false)) else {
            continue;
        };
        for s in Strategy::ALL {
            assert_eq!(
                report_texts(&lean, s),
                report_texts(&full, s),
                "{}: {}",
                path.display(),
                s.name()
            );
        }
        compared += 1;
    }
    assert!(compared > 20, "{compared} files");
}

/// Keys of the correct calls are unique: the strategies find their texts by key.
#[test]
fn every_bundled_recordings_calls_have_distinct_keys() {
    for (name, rec) in crate::data::bundled() {
        let source = SourceInfo {
            name: name.clone(),
            kind: "recording".into(),
            timing_known: true,
        };
        let a = Analysis::from_recording(&rec, source, Options::default());
        let mut seen = std::collections::HashMap::new();
        for c in &a.calls {
            assert_eq!(seen.insert(&c.key, c.position), None, "{name}: {:?}", c.key);
        }
    }
}
