//! The naive strategies: what common-but-wrong client code makes of the same stream. Each is a real,
//! small implementation run on the same input as the accumulator; its failures are data
//! ([`Outcome`] values with serde_json's own error text), never `Err`.
//!
//! Six work on the dialect's fragments ([`NaiveSet`], fed signal by signal in the same pass); two work
//! on the raw network reads and need a recording with chunk boundaries ([`per_read_utf8`],
//! [`per_read_lines`]).

use crate::accumulate::{Parsed, Pos, parse_once, parse_value};
use crate::dialect::{CallKey, FxHashMap, Raw, Signal};
use crate::pipeline::{Options, Pipeline};

/// The strategies, in the order they are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    PerFragment,
    ConcatAll,
    Overwrite,
    ConcatFields,
    NextIndexDone,
    ParseWhenValid,
    PerReadUtf8,
    PerReadLines,
}

impl Strategy {
    /// All strategies.
    pub const ALL: [Strategy; 8] = [
        Strategy::PerFragment,
        Strategy::ConcatAll,
        Strategy::Overwrite,
        Strategy::ConcatFields,
        Strategy::NextIndexDone,
        Strategy::ParseWhenValid,
        Strategy::PerReadUtf8,
        Strategy::PerReadLines,
    ];

    /// Stable name (JSON, CLI).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::PerFragment => "per-fragment",
            Strategy::ConcatAll => "concat-all",
            Strategy::Overwrite => "overwrite",
            Strategy::ConcatFields => "concat-fields",
            Strategy::NextIndexDone => "next-index-done",
            Strategy::ParseWhenValid => "parse-when-valid",
            Strategy::PerReadUtf8 => "per-read-utf8",
            Strategy::PerReadLines => "per-read-lines",
        }
    }

    /// One line: what the code does.
    pub fn description(self) -> &'static str {
        match self {
            Strategy::PerFragment => {
                "JSON.parse every arguments fragment as it arrives (the seed's counter-example 1)."
            }
            Strategy::ConcatAll => {
                "Ignore the index and join every fragment of every call into one string (counter-example 2: {…}{…})."
            }
            Strategy::Overwrite => {
                "Assign each fragment's fields instead of appending arguments: later fragments erase earlier ones."
            }
            Strategy::ConcatFields => {
                "Append every string field, name and id included (openai-python's accumulate_delta): get_weatherget_weather."
            }
            Strategy::NextIndexDone => {
                "Treat a call as finished when a fragment of another call appears (the OpenAI SDK helpers' done events)."
            }
            Strategy::ParseWhenValid => {
                "Re-parse the buffer after every fragment and finish the call as soon as it parses: validation while accumulating."
            }
            Strategy::PerReadUtf8 => {
                "Decode each network read to text on its own (lossy): a character split across reads becomes U+FFFD."
            }
            Strategy::PerReadLines => {
                "Split each network read into lines without carrying the unfinished last line: JSON cut at read boundaries."
            }
        }
    }
}

/// One attempt a strategy made, for the per-fragment view.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub fragment: u32,
    /// The correct call the fragment belongs to (position in stream order), if known.
    pub call: Option<u32>,
    pub chunk: u32,
    /// The text the strategy tried to parse. For `parse-when-valid`, whose attempts re-parse the whole
    /// buffer so far, only its last [`STEP_TAIL_CHARS`] characters (after `…`): keeping every
    /// buffer would make the analysis quadratic in memory on long calls.
    pub text: String,
    pub outcome: Parsed,
}

/// A call as the strategy ended up with it.
#[derive(Clone, Debug, PartialEq)]
pub struct NaiveCall {
    pub label: String,
    pub id: String,
    pub name: String,
    pub raw_arguments: String,
    pub parsed: Parsed,
    /// The chunk at which the strategy considered the call finished.
    pub chunk: u32,
}

/// What one strategy produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub strategy: Strategy,
    /// `Some(reason)` when the strategy cannot run on this input (e.g. no chunk boundaries).
    pub not_applicable: Option<String>,
    pub steps: Vec<Step>,
    pub calls: Vec<NaiveCall>,
    /// Free-form facts ("3 U+FFFD characters", "12 lines dropped").
    pub notes: Vec<String>,
}

impl Report {
    fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            not_applicable: None,
            steps: Vec::new(),
            calls: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A report saying the strategy could not run.
    pub fn not_applicable(strategy: Strategy, why: impl Into<String>) -> Self {
        Self {
            not_applicable: Some(why.into()),
            ..Self::new(strategy)
        }
    }

    /// Steps that parsed.
    pub fn steps_parsed(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s.outcome, Parsed::Ok(_)))
            .count()
    }
}

#[derive(Clone, Debug, Default)]
struct Entry {
    label: String,
    id: String,
    name: String,
    args: String,
}

fn to_call(e: Entry, chunk: u32) -> NaiveCall {
    let parsed = parse_value(&e.args);
    NaiveCall {
        label: e.label,
        id: e.id,
        name: e.name,
        raw_arguments: e.args,
        parsed,
        chunk,
    }
}

/// A table of entries keyed by call key, in first-seen order. Removing an entry leaves its key in
/// `order` (skipped by `into_calls`): searching `order` on every removal made many calls quadratic.
#[derive(Clone, Debug, Default)]
struct Table {
    order: Vec<CallKey>,
    map: FxHashMap<CallKey, Entry>,
}

impl Table {
    fn entry(&mut self, key: &CallKey) -> &mut Entry {
        if !self.map.contains_key(key) {
            self.order.push(key.clone());
        }
        self.map.entry(key.clone()).or_insert_with(|| Entry {
            label: key.to_string(),
            ..Default::default()
        })
    }
    fn into_calls(mut self, chunk: u32) -> Vec<NaiveCall> {
        self.order
            .iter()
            .filter_map(|k| self.map.remove(k))
            .map(|e| to_call(e, chunk))
            .collect()
    }
}

/// The six fragment-level strategies, fed in the same pass as the accumulator.
#[derive(Clone, Debug, Default)]
pub struct NaiveSet {
    per_fragment: Vec<Step>,
    calls_by_key: FxHashMap<CallKey, u32>,
    concat_all: String,
    overwrite: Table,
    concat_fields: Table,
    // next-index-done
    nid_current: Option<CallKey>,
    nid_open: Table,
    nid_done: Vec<NaiveCall>,
    nid_closed: FxHashMap<CallKey, ()>,
    nid_dropped: u64,
    // parse-when-valid
    pwv_open: Table,
    pwv_done: Vec<NaiveCall>,
    pwv_closed: FxHashMap<CallKey, u32>,
    pwv_steps: Vec<Step>,
    pwv_ignored: u64,
    last_chunk: u32,
    reports: Vec<Report>,
}

/// Limit on parse-when-valid's re-parse buffer, so a huge call does not make the analysis quadratic.
const PWV_MAX_BUFFER: usize = 1 << 20;

impl NaiveSet {
    /// Fresh state.
    pub fn new() -> Self {
        Self::default()
    }

    /// One signal from the dialect. `fragment_no` is the number the accumulator will give it.
    pub fn on_signal(&mut self, sig: &Signal, pos: Pos, fragment_no: u32) {
        self.last_chunk = pos.chunk;
        let Signal::Fragment(f) = sig else { return };
        let n = self.calls_by_key.len() as u32;
        let call = *self.calls_by_key.entry(f.key.clone()).or_insert(n);
        let text = match &f.args {
            Raw::Value(p) => p.text(),
            _ => "",
        };
        // per-fragment: parse each arguments fragment alone (only fragments that carry text).
        if matches!(f.args, Raw::Value(_)) {
            let outcome = parse_value(text);
            self.per_fragment.push(Step {
                fragment: fragment_no,
                call: Some(call),
                chunk: pos.chunk,
                text: text.to_owned(),
                outcome,
            });
        }
        // concat-all
        self.concat_all.push_str(text);
        // overwrite: assign every field that is present (null and "" included).
        {
            let e = self.overwrite.entry(&f.key);
            if !matches!(f.id, Raw::Absent) {
                e.id = f.id.value().cloned().unwrap_or_default();
            }
            if !matches!(f.name, Raw::Absent) {
                e.name = f.name.value().cloned().unwrap_or_default();
            }
            if let Raw::Value(p) = &f.args {
                e.args = p.text().to_owned();
            }
        }
        // concat-fields: append every string field.
        {
            let e = self.concat_fields.entry(&f.key);
            if let Some(v) = f.id.value() {
                e.id.push_str(v);
            }
            if let Some(v) = f.name.value() {
                e.name.push_str(v);
            }
            e.args.push_str(text);
        }
        // next-index-done: another key appearing finishes the current call with what it has.
        if self.nid_current.as_ref() != Some(&f.key) {
            if let Some(prev) = self.nid_current.take()
                && let Some(e) = self.nid_open.map.remove(&prev)
            {
                self.nid_done.push(to_call(e, pos.chunk));
                self.nid_closed.insert(prev, ());
            }
            self.nid_current = Some(f.key.clone());
        }
        if self.nid_closed.contains_key(&f.key) {
            self.nid_dropped += 1;
        } else {
            let e = self.nid_open.entry(&f.key);
            fill(e, f, text);
        }
        // parse-when-valid: finish the call as soon as its buffer parses.
        if self.pwv_closed.contains_key(&f.key) {
            self.pwv_ignored += 1;
        } else {
            let e = self.pwv_open.entry(&f.key);
            fill(e, f, text);
            if !e.args.trim().is_empty() && e.args.len() <= PWV_MAX_BUFFER {
                let outcome = parse_value(&e.args);
                let ok = matches!(outcome, Parsed::Ok(_));
                self.pwv_steps.push(Step {
                    fragment: fragment_no,
                    call: Some(call),
                    chunk: pos.chunk,
                    text: tail(&e.args),
                    outcome,
                });
                if ok && let Some(e) = self.pwv_open.map.remove(&f.key) {
                    self.pwv_done.push(to_call(e, pos.chunk));
                    self.pwv_closed.insert(f.key.clone(), pos.chunk);
                }
            }
        }
    }

    /// End of stream: build the six reports. `finish` is where the stream said it finished.
    pub fn finish(&mut self, finish: Option<Pos>) {
        let end_chunk = finish.map_or(self.last_chunk, |p| p.chunk);
        let mut reports = Vec::new();

        let mut r = Report::new(Strategy::PerFragment);
        r.steps = std::mem::take(&mut self.per_fragment);
        r.calls = r
            .steps
            .iter()
            .filter_map(|s| match &s.outcome {
                Parsed::Ok(_) => Some(NaiveCall {
                    label: format!("fragment {}", s.fragment),
                    id: String::new(),
                    name: String::new(),
                    raw_arguments: s.text.clone(),
                    parsed: s.outcome.clone(),
                    chunk: s.chunk,
                }),
                Parsed::Err { .. } => None,
            })
            .collect();
        reports.push(r);

        let mut r = Report::new(Strategy::ConcatAll);
        let joined = std::mem::take(&mut self.concat_all);
        let (parsed, _) = parse_once(&joined);
        r.calls.push(NaiveCall {
            label: "everything".into(),
            id: String::new(),
            name: String::new(),
            raw_arguments: joined,
            parsed,
            chunk: end_chunk,
        });
        reports.push(r);

        let mut r = Report::new(Strategy::Overwrite);
        r.calls = std::mem::take(&mut self.overwrite).into_calls(end_chunk);
        reports.push(r);

        let mut r = Report::new(Strategy::ConcatFields);
        r.calls = std::mem::take(&mut self.concat_fields).into_calls(end_chunk);
        reports.push(r);

        let mut r = Report::new(Strategy::NextIndexDone);
        let mut calls = std::mem::take(&mut self.nid_done);
        calls.extend(std::mem::take(&mut self.nid_open).into_calls(end_chunk));
        r.calls = calls;
        if self.nid_dropped > 0 {
            r.notes.push(format!(
                "{} fragments arrived for calls already declared done and were lost",
                self.nid_dropped
            ));
        }
        reports.push(r);

        let mut r = Report::new(Strategy::ParseWhenValid);
        let mut calls = std::mem::take(&mut self.pwv_done);
        let never = self.pwv_open.map.len();
        calls.extend(std::mem::take(&mut self.pwv_open).into_calls(end_chunk));
        r.calls = calls;
        r.steps = std::mem::take(&mut self.pwv_steps);
        if self.pwv_ignored > 0 {
            r.notes.push(format!(
                "{} fragments arrived after their call had parsed and were ignored",
                self.pwv_ignored
            ));
        }
        if never > 0 {
            r.notes
                .push(format!("{never} calls never became valid JSON"));
        }
        reports.push(r);
        self.reports = reports;
    }

    /// The six reports (after [`NaiveSet::finish`]).
    pub fn take_reports(&mut self) -> Vec<Report> {
        std::mem::take(&mut self.reports)
    }
}

/// How much of a re-parsed buffer a `parse-when-valid` step keeps.
pub const STEP_TAIL_CHARS: usize = 64;

fn tail(buffer: &str) -> String {
    match buffer.char_indices().rev().nth(STEP_TAIL_CHARS - 1) {
        Some((i, _)) if i > 0 => format!("…{}", &buffer[i..]),
        _ => buffer.to_owned(),
    }
}

fn fill(e: &mut Entry, f: &crate::dialect::Fragment, text: &str) {
    if let Some(id) = f.id.non_empty() {
        e.id = id.to_owned();
    }
    if let Some(name) = f.name.non_empty() {
        e.name = name.to_owned();
    }
    e.args.push_str(text);
}

fn outcome_calls(out: crate::pipeline::Outcome) -> Vec<NaiveCall> {
    let end = out
        .finish
        .as_ref()
        .map_or(out.chunks.saturating_sub(1), |f| f.pos.chunk);
    out.calls
        .into_iter()
        .map(|c| NaiveCall {
            label: c.key.to_string(),
            id: c.id.unwrap_or_default(),
            name: c.name,
            raw_arguments: c.raw_arguments,
            parsed: c.parsed,
            chunk: end,
        })
        .collect()
}

/// `per-read-utf8`: decode each read lossily on its own, then run the correct parser on the text.
pub fn per_read_utf8(chunks: &[(&[u8], u64)], opts: Options) -> Report {
    let mut r = Report::new(Strategy::PerReadUtf8);
    let mut p = Pipeline::new(Options {
        detail: false,
        ..opts
    });
    let mut replaced = 0usize;
    for (bytes, t) in chunks {
        let text = String::from_utf8_lossy(bytes);
        replaced += text.matches('\u{FFFD}').count();
        p.feed(text.as_bytes(), *t);
    }
    let out = p.finish();
    r.notes.push(format!(
        "{replaced} U+FFFD replacement characters produced by per-read decoding"
    ));
    r.calls = outcome_calls(out);
    r
}

/// `per-read-lines`: split each read on `\n` without keeping the unfinished tail; every piece that
/// starts with `data:` is taken as an event, other pieces are dropped.
pub fn per_read_lines(chunks: &[(&[u8], u64)], opts: Options) -> Report {
    let mut r = Report::new(Strategy::PerReadLines);
    let jsonl = matches!(opts.framing, Some(crate::framing::Framing::JsonLines));
    let mut p = Pipeline::new(Options {
        detail: false,
        ..opts
    });
    let (mut dropped, mut events, mut offset) = (0u64, 0u64, 0u64);
    let mut event_type = String::from("message");
    for (i, (bytes, t)) in chunks.iter().enumerate() {
        let text = String::from_utf8_lossy(bytes);
        for piece in text.split('\n') {
            let line = piece.strip_suffix('\r').unwrap_or(piece);
            let span = offset..offset + piece.len() as u64;
            offset += piece.len() as u64 + 1;
            if line.is_empty() {
                continue;
            }
            if jsonl {
                events += 1;
                p.feed_event("message", line, span, i as u32, *t);
            } else if let Some(data) = line.strip_prefix("data:") {
                events += 1;
                p.feed_event(
                    &event_type,
                    data.strip_prefix(' ').unwrap_or(data),
                    span,
                    i as u32,
                    *t,
                );
                event_type = "message".into();
            } else if let Some(ev) = line.strip_prefix("event:") {
                event_type = ev.trim().to_owned();
            } else if !line.starts_with(':') {
                dropped += 1;
            }
        }
        offset -= 1;
    }
    let out = p.finish();
    let bad = out
        .findings
        .list()
        .iter()
        .filter(|f| f.kind == crate::findings::FindingKind::NonJsonData)
        .map(|f| f.count)
        .sum::<u64>();
    r.notes.push(format!("{events} lines taken as events, {bad} of them not valid JSON, {dropped} line pieces dropped"));
    r.calls = outcome_calls(out);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_short_buffers_and_cuts_long_ones_on_a_character_boundary() {
        assert_eq!(tail("{\"a\":"), "{\"a\":");
        let long = "深".repeat(100);
        let t = tail(&long);
        assert!(t.starts_with('…'));
        assert_eq!(t.chars().count(), STEP_TAIL_CHARS + 1);
    }
}
