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

use crate::accumulate::{Call, Parsed, parse_value};
use crate::dialect::{DialectKind, FxHashMap};
use crate::fact::{CallKey, Fact, FactObserver, Fragment, Pos};
use crate::framing::Framing;

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
    pub raw_arguments: String,
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
/// key's first fragment), hands each fragment to each strategy, and remembers where the stream
/// ended. [`Strategies::reports`] then builds the reports in [`Strategy::ALL`] order.
pub struct Strategies {
    strategies: Vec<Box<dyn NaiveStrategy>>,
    calls_by_key: FxHashMap<CallKey, u32>,
    last_chunk: u32,
    finished_at: Option<Pos>,
}

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
    /// are what the per-read strategies re-frame (see [`StreamEnd`]).
    pub fn reports(
        self,
        reads: Option<&dyn Reads>,
        dialect: DialectKind,
        framing: Framing,
    ) -> Vec<Report> {
        self.reports_sharing(reads, dialect, framing, &[])
    }

    /// [`Strategies::reports`], the strategies' calls sharing the parsed values of the correct
    /// `calls` where their arguments text is the same ([`Parses`]).
    pub fn reports_sharing(
        self,
        reads: Option<&dyn Reads>,
        dialect: DialectKind,
        framing: Framing,
        calls: &[Call],
    ) -> Vec<Report> {
        let parses = Parses::of(calls);
        let end = StreamEnd {
            end_chunk: self.finished_at.map_or(self.last_chunk, |p| p.chunk),
            reads,
            dialect,
            framing,
            parses: &parses,
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
        let Fact::Fragment(fragment) = fact else {
            return;
        };
        let next = self.calls_by_key.len() as u32;
        let call = *self
            .calls_by_key
            .entry(fragment.key.clone())
            .or_insert(next);
        let at = FragmentAt {
            pos,
            fragment_no,
            call,
        };
        for s in &mut self.strategies {
            s.on_fragment(fragment, at);
        }
    }

    fn on_finish(&mut self, finished_at: Option<Pos>) {
        self.finished_at = finished_at;
    }
}

// --- small pieces the strategies share

/// A call a strategy is building: its label (the call key), id, name and arguments so far.
#[derive(Clone, Debug, Default)]
struct Entry {
    label: String,
    id: String,
    name: String,
    args: String,
}

impl Entry {
    /// The call as the strategy ends up with it, finished at `chunk` (`at_end`: because the
    /// stream ended there): its arguments parsed once (or the correct call's value shared, see
    /// [`Parses`]).
    fn into_call(self, chunk: u32, at_end: bool, parses: &Parses<'_>) -> NaiveCall {
        let parsed = parses.parse(&self.args);
        NaiveCall {
            label: self.label,
            id: self.id,
            name: self.name,
            raw_arguments: self.args,
            parsed,
            chunk,
            at_end,
        }
    }

    /// The seed's rule for one fragment: id and name set when present and non-empty, arguments
    /// appended.
    fn fill(&mut self, f: &Fragment, text: &str) {
        if let Some(id) = f.id.non_empty() {
            self.id = id.to_owned();
        }
        if let Some(name) = f.name.non_empty() {
            self.name = name.to_owned();
        }
        self.args.push_str(text);
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
    fn into_calls(mut self, chunk: u32, parses: &Parses<'_>) -> Vec<NaiveCall> {
        self.order
            .iter()
            .filter_map(|k| self.map.remove(k))
            .map(|e| e.into_call(chunk, true, parses))
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

    /// Two interleaved calls, then a finish at chunk 5.
    fn feed(observer: &mut impl FactObserver) {
        let facts = [
            fragment(0, Some("a"), "{\"x\":"),
            fragment(1, Some("b"), "{\"y\":"),
            fragment(0, None, "1}"),
            fragment(1, None, "2}"),
        ];
        for (no, s) in facts.iter().enumerate() {
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
        let reports = driver.reports(None, DialectKind::OpenAiChat, Framing::Sse);
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
        /// Feeds one strategy alone, numbering calls as the driver does.
        struct Alone(Box<dyn NaiveStrategy>, FxHashMap<CallKey, u32>, Option<Pos>);
        impl FactObserver for Alone {
            fn on_fact(&mut self, fact: &Fact, pos: Pos, fragment_no: u32) {
                if let Fact::Fragment(f) = fact {
                    let next = self.1.len() as u32;
                    let call = *self.1.entry(f.key.clone()).or_insert(next);
                    let at = FragmentAt {
                        pos,
                        fragment_no,
                        call,
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
        let together = driver.reports(None, DialectKind::OpenAiChat, Framing::Sse);
        for (i, strategy) in Strategy::ALL.into_iter().enumerate() {
            let mut alone = Alone(new_strategy(strategy), FxHashMap::default(), None);
            feed(&mut alone);
            let end = StreamEnd {
                end_chunk: alone.2.map_or(0, |p| p.chunk),
                reads: None,
                dialect: DialectKind::OpenAiChat,
                framing: Framing::Sse,
                parses: &Parses::default(),
            };
            assert_eq!(alone.0.strategy(), strategy);
            assert_eq!(alone.0.finish(&end), together[i], "{}", strategy.name());
        }
    }
}
