//! The naive strategies: what common-but-wrong client code makes of the same stream. Each is a real,
//! small implementation run on the same input as the accumulator; its failures are data
//! ([`Parsed::Err`] values with serde_json's own error text), never `Err`.
//!
//! Each strategy is one small unit behind one trait, [`NaiveStrategy`]: it is fed the dialect's
//! fragments one at a time and builds its [`Report`] at the end of the stream, with no state shared
//! with the accumulator or with the other strategies (so each can be fed on its own). Six work on
//! the fragments (one file each); two work on the raw network reads and need a recording with chunk
//! boundaries ([`per_read`]).
//!
//! A strategy keeps no copy of text it can take from the correct calls at the end: the driver
//! tells it where each fragment's text starts in its correct call's arguments
//! ([`FragmentAt::args_start`]), and [`Strategies::reports_sharing`] hands it those calls, so a
//! strategy whose call is the correct call's text, or pieces of it, keeps only where they are
//! (as byte ranges) and ends with the same [`SharedText`]. Only `overwrite`, `concat-all` (once a
//! second call appears) and the per-read strategies, whose texts differ, hold text of their own;
//! `parse-when-valid` holds a call's buffer only while it re-parses it.
//!
//! Direction: the pipeline knows nothing of this module. The analysis hands a [`Strategies`]
//! driver to the pipeline as its [`FactObserver`] ([`crate::pipeline::Pipeline::observed`]); the
//! driver numbers the calls and feeds every strategy. Only [`per_read`] imports
//! [`crate::pipeline`], to run the correct parser on the reads as it re-framed them.

mod concat_all;
mod concat_fields;
mod feed;
mod next_index_done;
mod overwrite;
mod parse_when_valid;
mod per_fragment;
pub mod per_read;
mod steps;

use std::ops::Range;

use crate::accumulate::{Call, Parsed, parse_value};
use crate::dialect::{DialectKind, FxHashMap};
use crate::fact::{CallKey, Fact, FactObserver, Fragment, Pos};
use crate::framing::Framing;
use crate::text::{SharedText, shared_slice};

pub use feed::StrategyFeed;
pub use parse_when_valid::STEP_TAIL_CHARS;
pub use steps::{Balance, StepRow, Steps};

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

/// One parse a strategy attempted, for the per-fragment view: a report's [`Steps`] keep each
/// compactly and build this when asked ([`Steps::get`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
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
    /// Its arguments text: the correct call's own (shared, or a piece of it) where the strategy
    /// ended up with that text.
    pub raw_arguments: SharedText,
    pub parsed: Parsed,
    /// The chunk at which the strategy considered the call finished.
    pub chunk: u32,
    /// The strategy took the call as finished only because the stream ended (its `finish`), not
    /// on anything it read: at a cursor before the end (or while the stream is still arriving) it
    /// has not produced it yet.
    pub at_end: bool,
}

/// What one strategy produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub strategy: Strategy,
    /// `Some(reason)` when the strategy cannot run on this input (e.g. no chunk boundaries).
    pub not_applicable: Option<String>,
    /// The parses it attempted, in stream order (per-fragment and parse-when-valid).
    pub steps: Steps,
    pub calls: Vec<NaiveCall>,
    /// Free-form facts ("3 U+FFFD characters", "12 lines dropped").
    pub notes: Vec<String>,
}

impl Report {
    fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            not_applicable: None,
            steps: Steps::default(),
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

    /// Attempts that parsed.
    pub fn steps_parsed(&self) -> usize {
        self.steps.parsed()
    }
}

// --- the one trait

/// Where a fragment sits, as a strategy is told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragmentAt {
    pub pos: Pos,
    /// The number the accumulator gives the fragment.
    pub fragment_no: u32,
    /// The correct call it belongs to (position in stream order of its key).
    pub call: u32,
    /// Where the fragment's arguments text starts in its correct call's arguments (in bytes):
    /// everything the accumulator appended for the same key before it, so the fragment's text
    /// is `args_start..args_start + len` of [`Call::raw_arguments`] at the end.
    pub args_start: usize,
}

/// Recorded network reads with their arrival times, gone through in order as often as asked:
/// held in memory (a slice of them), or read again from a recording too large to hold (its
/// document re-read line by line), so that what re-frames the reads at the end of the stream
/// never needs the body whole.
pub trait Reads: std::fmt::Debug {
    /// Hand every read, in order, to `f` (its bytes and arrival time).
    fn each(&self, f: &mut dyn FnMut(&[u8], u64));
}

impl Reads for Vec<(&[u8], u64)> {
    fn each(&self, f: &mut dyn FnMut(&[u8], u64)) {
        for (bytes, t) in self {
            f(bytes, *t);
        }
    }
}

/// What a strategy gets at the end of the stream.
#[derive(Clone, Copy, Debug)]
pub struct StreamEnd<'a> {
    /// The chunk where the stream said it finished, else the chunk of the last fact: where the
    /// calls a strategy still holds are taken as finished.
    pub end_chunk: u32,
    /// The recorded network reads with their times, when the chunk boundaries are real (`None`
    /// for a raw body).
    pub reads: Option<&'a dyn Reads>,
    /// The dialect and framing the correct pass settled on.
    pub dialect: DialectKind,
    pub framing: Framing,
    /// The correct calls' parses, shared with a strategy that ends up with the same text.
    pub parses: &'a Parses<'a>,
    /// The correct calls' texts, by the number a strategy was told ([`FragmentAt::call`]).
    pub texts: &'a CallTexts<'a>,
}

/// The correct calls' arguments texts by the driver's call numbers ([`FragmentAt::call`]: in
/// order of each key's first fragment, found by key), for a strategy that kept only the byte
/// ranges its text has in them.
#[derive(Debug, Default)]
pub struct CallTexts<'a> {
    by_call: Vec<Option<&'a SharedText>>,
}

impl<'a> CallTexts<'a> {
    /// The texts of `calls` in the order `numbers` gives each key (the driver's numbering).
    fn of<'k>(calls: &'a [Call], numbers: impl Iterator<Item = (&'k CallKey, u32)>) -> Self {
        let by_key: FxHashMap<&CallKey, &SharedText> =
            calls.iter().map(|c| (&c.key, &c.raw_arguments)).collect();
        let mut by_call = Vec::new();
        for (key, no) in numbers {
            let i = no as usize;
            if i >= by_call.len() {
                by_call.resize(i + 1, None);
            }
            by_call[i] = by_key.get(key).copied();
        }
        Self { by_call }
    }

    /// Call `call`'s text.
    pub fn text(&self, call: u32) -> Option<&'a SharedText> {
        self.by_call.get(call as usize).copied().flatten()
    }

    /// `range` of call `call`'s text, shared (`None` when there is no such call or range).
    pub fn slice(&self, call: u32, range: Range<usize>) -> Option<SharedText> {
        shared_slice(self.text(call)?, range)
    }

    /// The text `spans` describe in call `call`'s text: shared when it is one range (the whole
    /// text, or a prefix), else its pieces joined. Empty when there is no such call (the
    /// strategy was not given the correct calls of the stream it was fed).
    fn resolve(&self, call: u32, spans: &Spans) -> SharedText {
        let text = spans.resolve(self.text(call));
        debug_assert_eq!(
            text.as_ref().map(|t| t.len()),
            Some(spans.len()),
            "the correct call {call} holds every piece"
        );
        text.unwrap_or_default()
    }
}

/// Where a strategy's arguments text for one call lies in the correct call's text: byte ranges,
/// in order, contiguous ones merged. A strategy that appended every fragment the accumulator
/// appended has one range from 0 (the whole text, or a prefix of it, with no allocation);
/// another only where the accumulator appended what the strategy did not (arguments a dialect
/// gave only in a done event).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Spans {
    first: Range<usize>,
    more: Vec<Range<usize>>,
}

impl Spans {
    /// The `len` bytes at `start` of the correct call's text follow.
    fn push(&mut self, start: usize, len: usize) {
        if len == 0 {
            return;
        }
        let last = self.more.last_mut().unwrap_or(&mut self.first);
        if Range::is_empty(last) {
            *last = start..start + len;
        } else if last.end == start {
            last.end += len;
        } else {
            self.more.push(start..start + len);
        }
    }

    /// Bytes of text.
    fn len(&self) -> usize {
        self.first.len() + self.more.iter().map(ExactSizeIterator::len).sum::<usize>()
    }

    /// The text in `full` (`None` when a range is not in it).
    fn resolve(&self, full: Option<&SharedText>) -> Option<SharedText> {
        if self.first.is_empty() {
            return Some(SharedText::default());
        }
        let full = full?;
        if self.more.is_empty() {
            return shared_slice(full, self.first.clone());
        }
        let mut joined = String::with_capacity(self.len());
        for r in std::iter::once(&self.first).chain(&self.more) {
            joined.push_str(full.get(r.clone())?);
        }
        Some(joined.into())
    }
}

/// The correct calls' parsed arguments by their text: a strategy whose call ends up with the same
/// text holds the correct call's value ([`Parsed`] shares it) instead of parsing a copy. On a
/// stream of many small calls the six copies were most of the analysis's memory.
#[derive(Debug, Default)]
pub struct Parses<'a> {
    by_text: FxHashMap<&'a str, &'a Parsed>,
}

impl<'a> Parses<'a> {
    /// The parses of `calls` (those whose value is the parse of their text: not the empty
    /// arguments taken as `{}`).
    pub fn of(calls: &'a [Call]) -> Self {
        let by_text = calls
            .iter()
            .filter(|c| !c.empty_arguments)
            .map(|c| (c.raw_arguments.as_str(), &c.parsed))
            .collect();
        Self { by_text }
    }

    /// `text` parsed ([`parse_value`]): the shared value when a correct call has this text.
    pub fn parse(&self, text: &str) -> Parsed {
        self.get(text).unwrap_or_else(|| parse_value(text))
    }

    /// The correct call's value for `text` (what [`parse_value`] gives for it), if one has it.
    pub fn get(&self, text: &str) -> Option<Parsed> {
        self.by_text.get(text).map(|p| (*p).clone())
    }
}

/// One naive strategy: fed the dialect's fragments in stream order, it builds its report at the
/// end. `Send`, and sharing nothing with the others, so a driver may feed each on its own.
pub trait NaiveStrategy: Send {
    /// Which strategy this is.
    fn strategy(&self) -> Strategy;

    /// One fragment. The strategies that work on the reads ignore it (the default).
    fn on_fragment(&mut self, fragment: &Fragment, at: FragmentAt) {
        let _ = (fragment, at);
    }

    /// End of stream: the report.
    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report;
}

/// A fresh instance of `strategy`.
pub fn new_strategy(strategy: Strategy) -> Box<dyn NaiveStrategy> {
    match strategy {
        Strategy::PerFragment => Box::<per_fragment::PerFragment>::default(),
        Strategy::ConcatAll => Box::<concat_all::ConcatAll>::default(),
        Strategy::Overwrite => Box::<overwrite::Overwrite>::default(),
        Strategy::ConcatFields => Box::<concat_fields::ConcatFields>::default(),
        Strategy::NextIndexDone => Box::<next_index_done::NextIndexDone>::default(),
        Strategy::ParseWhenValid => Box::<parse_when_valid::ParseWhenValid>::default(),
        Strategy::PerReadUtf8 => Box::new(per_read::PerReadUtf8),
        Strategy::PerReadLines => Box::new(per_read::PerReadLines),
    }
}

// --- the driver

/// Every strategy, fed from the pipeline's fact hook: it numbers the calls (in order of their
/// key's first fragment), follows how long each correct call's arguments are so far (what the
/// accumulator appended for the key: every fragment, and arguments given only in a done event),
/// hands each fragment to each strategy, and remembers where the stream ended.
/// [`Strategies::reports_sharing`] then builds the reports in [`Strategy::ALL`] order.
pub struct Strategies {
    strategies: Vec<Box<dyn NaiveStrategy>>,
    calls_by_key: FxHashMap<CallKey, Tracked>,
    /// Calls numbered so far.
    numbered: u32,
    last_chunk: u32,
    finished_at: Option<Pos>,
}

/// One call key as the driver follows it.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    /// Its number ([`FragmentAt::call`]); [`NOT_NUMBERED`] until its first fragment.
    call: u32,
    /// Bytes of arguments the accumulator has appended for it so far.
    len: usize,
}

/// A key seen only in a done event's arguments so far.
const NOT_NUMBERED: u32 = u32::MAX;

impl Default for Strategies {
    fn default() -> Self {
        Self::new()
    }
}

impl Strategies {
    /// All strategies, fresh.
    pub fn new() -> Self {
        Self {
            strategies: Strategy::ALL.into_iter().map(new_strategy).collect(),
            calls_by_key: FxHashMap::default(),
            numbered: 0,
            last_chunk: 0,
            finished_at: None,
        }
    }

    /// All strategies, fresh, keeping of the attempts that only a count of is reported
    /// (`parse-when-valid`'s: `check` shows how many, and how many failed) only that count,
    /// and the attempts that are only listed in order (`per-fragment`'s failures) in a
    /// temporary file, so that their memory does not grow with the fragments of a large stream.
    pub fn counting() -> Self {
        let mut s = Self::new();
        for st in &mut s.strategies {
            match st.strategy() {
                Strategy::ParseWhenValid => {
                    *st = Box::new(parse_when_valid::ParseWhenValid::counting());
                }
                Strategy::PerFragment => *st = Box::new(per_fragment::PerFragment::spilled()),
                _ => {}
            }
        }
        s
    }

    /// End of stream: every report, in [`Strategy::ALL`] order. `reads`, `dialect` and `framing`
    /// are what the per-read strategies re-frame (see [`StreamEnd`]). `calls` are the correct
    /// calls of the facts the strategies were fed (the pipeline's that fed them, or one fed the
    /// same facts): the strategies take their arguments texts from them ([`CallTexts`]), and
    /// share their parsed values where the text is the same ([`Parses`]).
    pub fn reports_sharing(
        self,
        reads: Option<&dyn Reads>,
        dialect: DialectKind,
        framing: Framing,
        calls: &[Call],
    ) -> Vec<Report> {
        let parses = Parses::of(calls);
        let numbers = self
            .calls_by_key
            .iter()
            .filter(|(_, t)| t.call != NOT_NUMBERED)
            .map(|(k, t)| (k, t.call));
        let texts = CallTexts::of(calls, numbers);
        let end = StreamEnd {
            end_chunk: self.finished_at.map_or(self.last_chunk, |p| p.chunk),
            reads,
            dialect,
            framing,
            parses: &parses,
            texts: &texts,
        };
        self.strategies
            .into_iter()
            .map(|s| s.finish(&end))
            .collect()
    }
}

impl FactObserver for Strategies {
    fn on_fact(&mut self, fact: &Fact, pos: Pos, fragment_no: u32) {
        self.last_chunk = pos.chunk;
        let fragment = match fact {
            Fact::Fragment(fragment) => fragment,
            // The accumulator appends these arguments to the call as a fragment of its own,
            // which no strategy sees: later fragments' texts start after them.
            Fact::ArgumentsOnlyInDone { key, arguments } => {
                let t = self.calls_by_key.entry(key.clone()).or_insert(Tracked {
                    call: NOT_NUMBERED,
                    len: 0,
                });
                t.len += arguments.len();
                return;
            }
            _ => return,
        };
        let t = self
            .calls_by_key
            .entry(fragment.key.clone())
            .or_insert(Tracked {
                call: NOT_NUMBERED,
                len: 0,
            });
        if t.call == NOT_NUMBERED {
            t.call = self.numbered;
            self.numbered += 1;
        }
        let at = FragmentAt {
            pos,
            fragment_no,
            call: t.call,
            args_start: t.len,
        };
        t.len += args_text(fragment).len();
        for s in &mut self.strategies {
            s.on_fragment(fragment, at);
        }
    }

    fn on_finish(&mut self, finished_at: Option<Pos>) {
        self.finished_at = finished_at;
    }
}

// --- small pieces the strategies share

/// A call a strategy is building: its label (the call key), id, name and arguments so far —
/// where they are in the correct call's text ([`Spans`]), or, for a strategy whose text is not
/// made of the correct call's pieces (`overwrite`) or that must parse it as it grows
/// (`parse-when-valid`), its own text.
#[derive(Clone, Debug, Default)]
struct Entry {
    label: String,
    id: String,
    name: String,
    /// The correct call the fragments belong to ([`FragmentAt::call`]).
    call: u32,
    spans: Spans,
    /// The strategy's own text: when not empty, the call's arguments (not `spans`).
    args: String,
}

impl Entry {
    /// The call as the strategy ends up with it, finished at `chunk` (`at_end`: because the
    /// stream ended there): its arguments text (its own, else the correct call's pieces), parsed
    /// once (or the correct call's value shared, see [`Parses`]).
    fn into_call(self, chunk: u32, at_end: bool, end: &StreamEnd<'_>) -> NaiveCall {
        let text = if self.args.is_empty() {
            end.texts.resolve(self.call, &self.spans)
        } else {
            SharedText::from(self.args)
        };
        let parsed = end.parses.parse(&text);
        NaiveCall {
            label: self.label,
            id: self.id,
            name: self.name,
            raw_arguments: text,
            parsed,
            chunk,
            at_end,
        }
    }

    /// The seed's rule for one fragment: id and name set when present and non-empty, arguments
    /// appended (where they are in the correct call's text).
    fn fill(&mut self, f: &Fragment, at: FragmentAt) {
        if let Some(id) = f.id.non_empty() {
            self.id = id.to_owned();
        }
        if let Some(name) = f.name.non_empty() {
            self.name = name.to_owned();
        }
        self.append(args_text(f).len(), at);
    }

    /// `len` bytes of arguments appended, at `at.args_start` in the correct call's text.
    fn append(&mut self, len: usize, at: FragmentAt) {
        self.call = at.call;
        self.spans.push(at.args_start, len);
    }
}

/// The arguments text a fragment carries (`""` when absent or `null`).
fn args_text(f: &Fragment) -> &str {
    f.args.value().map_or("", |p| p.text())
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

    fn remove(&mut self, key: &CallKey) -> Option<Entry> {
        self.map.remove(key)
    }

    /// The keys of the calls still open, in the order [`Table::into_calls`] gives them (for a
    /// table whose removed keys never come back, as in `parse-when-valid`).
    fn open_keys(&self) -> impl Iterator<Item = &CallKey> {
        self.order.iter().filter(|k| self.map.contains_key(*k))
    }

    /// Calls still open.
    fn len(&self) -> usize {
        self.map.len()
    }

    /// The calls still open, taken as finished because the stream ended at `chunk`.
    fn into_calls(mut self, chunk: u32, end: &StreamEnd<'_>) -> Vec<NaiveCall> {
        self.order
            .iter()
            .filter_map(|k| self.map.remove(k))
            .map(|e| e.into_call(chunk, true, end))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::{ArgsPiece, Raw};

    fn fragment(index: u64, id: Option<&str>, args: &str) -> Fact {
        Fact::Fragment(Fragment {
            key: CallKey::Index {
                choice: 0,
                index,
                generation: 0,
            },
            stated_index: Some(index),
            id: id.map_or(Raw::Absent, |s| Raw::Value(s.to_owned())),
            name: id.map_or(Raw::Absent, |_| Raw::Value("f".to_owned())),
            args: Raw::Value(ArgsPiece::Text(args.to_owned())),
        })
    }

    fn pos(chunk: u32) -> Pos {
        Pos {
            event: chunk,
            chunk,
            t_micros: 0,
        }
    }

    /// Two interleaved calls.
    fn facts() -> [Fact; 4] {
        [
            fragment(0, Some("a"), "{\"x\":"),
            fragment(1, Some("b"), "{\"y\":"),
            fragment(0, None, "1}"),
            fragment(1, None, "2}"),
        ]
    }

    /// The correct calls of [`facts`] (what the pipeline hands the driver at the end).
    fn correct_calls() -> Vec<Call> {
        let mut acc = crate::accumulate::Accumulator::new(false);
        for f in facts() {
            if let Fact::Fragment(f) = f {
                acc.push(f, pos(0));
            }
        }
        acc.finish(true).0
    }

    /// Every strategy's report, with the correct calls of [`facts`].
    fn reports(driver: Strategies) -> Vec<Report> {
        let calls = correct_calls();
        driver.reports_sharing(None, DialectKind::OpenAiChat, Framing::Sse, &calls)
    }

    /// [`facts`], then a finish at chunk 5.
    fn feed(observer: &mut impl FactObserver) {
        for (no, s) in facts().iter().enumerate() {
            observer.on_fact(s, pos(no as u32), no as u32);
        }
        let finish = Fact::Finish {
            reason: "tool_calls".into(),
        };
        observer.on_fact(&finish, pos(5), 4);
        observer.on_finish(Some(pos(5)));
    }

    #[test]
    fn the_driver_reports_every_strategy_in_order_and_per_read_ones_need_reads() {
        let mut driver = Strategies::new();
        feed(&mut driver);
        let reports = reports(driver);
        let order: Vec<Strategy> = reports.iter().map(|r| r.strategy).collect();
        assert_eq!(order, Strategy::ALL);
        let concat_all = &reports[1];
        assert_eq!(concat_all.calls[0].raw_arguments, "{\"x\":{\"y\":1}2}");
        assert_eq!(
            concat_all.calls[0].chunk, 5,
            "finished where the stream said so"
        );
        let nid = &reports[4];
        assert_eq!(nid.calls.len(), 2);
        assert!(nid.notes[0].starts_with("2 fragments"), "{:?}", nid.notes);
        assert!(reports[6].not_applicable.is_some());
        assert!(reports[7].not_applicable.is_some());
    }

    #[test]
    fn a_strategy_fed_on_its_own_reports_what_the_driver_reports() {
        /// Feeds one strategy alone, numbering calls and placing their texts as the driver does.
        struct Alone(
            Box<dyn NaiveStrategy>,
            FxHashMap<CallKey, u32>,
            Option<Pos>,
            FxHashMap<CallKey, usize>,
        );
        impl FactObserver for Alone {
            fn on_fact(&mut self, fact: &Fact, pos: Pos, fragment_no: u32) {
                if let Fact::Fragment(f) = fact {
                    let next = self.1.len() as u32;
                    let call = *self.1.entry(f.key.clone()).or_insert(next);
                    let args_start = *self.3.get(&f.key).unwrap_or(&0);
                    self.3
                        .insert(f.key.clone(), args_start + args_text(f).len());
                    let at = FragmentAt {
                        pos,
                        fragment_no,
                        call,
                        args_start,
                    };
                    self.0.on_fragment(f, at);
                }
            }
            fn on_finish(&mut self, finished_at: Option<Pos>) {
                self.2 = finished_at;
            }
        }
        let mut driver = Strategies::new();
        feed(&mut driver);
        let together = reports(driver);
        let calls = correct_calls();
        for (i, strategy) in Strategy::ALL.into_iter().enumerate() {
            let mut alone = Alone(
                new_strategy(strategy),
                FxHashMap::default(),
                None,
                FxHashMap::default(),
            );
            feed(&mut alone);
            let texts = CallTexts::of(&calls, alone.1.iter().map(|(k, n)| (k, *n)));
            let end = StreamEnd {
                end_chunk: alone.2.map_or(0, |p| p.chunk),
                reads: None,
                dialect: DialectKind::OpenAiChat,
                framing: Framing::Sse,
                parses: &Parses::default(),
                texts: &texts,
            };
            assert_eq!(alone.0.strategy(), strategy);
            assert_eq!(alone.0.finish(&end), together[i], "{}", strategy.name());
        }
    }
}
