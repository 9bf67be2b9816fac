//! The streaming engine: bytes (with chunk numbers and times) → framing → dialect → accumulator.
//! Push-based: [`Pipeline::feed`] per network read, [`Pipeline::finish`] at the end. Used lean (no
//! records) by `export`, and in full by [`crate::analysis`].
//!
//! Every fact the dialect emits is also handed to the pipeline's [`FactObserver`] before the
//! pipeline acts on it: that hook is how the analysis feeds the naive strategies
//! ([`Pipeline::observed`]). The pipeline knows nothing of what observes it; a pipeline built
//! with [`Pipeline::new`] has [`NoObserver`], which compiles to nothing.

use std::ops::Range;

use crate::accumulate::{Accumulator, Call, FragmentLog, FragmentRecord, Interleaving};
use crate::dialect::{Dialect, DialectKind};
use crate::fact::{ArgsPiece, Fact, FactObserver, Fragment, NoObserver, Pos, Raw};
use crate::findings::{FindingKind, Findings, Location};
use crate::framing::{Framed, Framer, Framing};
use crate::limits::EventLimit;
use crate::sse::{EventFlags, Overflow, Unterminated};
use crate::text::truncate;

/// What to run and keep.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Force a dialect (else auto-detect from the first decisive event).
    pub dialect: Option<DialectKind>,
    /// Force a framing (else auto-detect).
    pub framing: Option<Framing>,
    /// Keep per-event and per-fragment records and every finding (analysis); `false` for a lean
    /// pass (export).
    pub detail: bool,
}

/// What kind of event it was, for the raw view and the player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// Carried tool-call fragments.
    ToolCall,
    /// A finish signal.
    Finish,
    /// `[DONE]`.
    Done,
    /// A provider error.
    Error,
    /// Not JSON / unexpected shape.
    Bad,
    /// A ping.
    Ping,
    /// Anything else (text deltas, metadata, usage).
    Other,
}

/// One framed event as recorded for the analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    /// Byte span in the body.
    pub span: Range<u64>,
    /// The chunk (network read) the event completed in.
    pub chunk: u32,
    /// Index into [`PipelineOutput::event_types`].
    pub type_id: u16,
    pub kind: EventKind,
    /// First fragment number the event produced (if any) and how many.
    pub first_fragment: u32,
    pub fragment_count: u32,
}

/// The first finish signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishMark {
    pub reason: String,
    pub pos: Pos,
}

/// How the stream ended (decided once, by [`PipelineOutput::decide_ending`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StreamEnding {
    /// A finish signal or `[DONE]` arrived.
    Finished { reason: String },
    /// Every call was completed by the dialect, but no stream-level finish arrived.
    CallsComplete,
    /// The provider reported an error.
    ProviderError { message: String },
    /// No finish: truncated.
    #[default]
    EndedWithoutFinish,
}

/// Everything one pipeline pass produced: what the analysis is built from, and what the lean
/// pass (`export`, the recorder's live summary) reads.
#[derive(Debug, Default)]
pub struct PipelineOutput {
    pub framing: Option<Framing>,
    pub dialect: DialectKind,
    /// True when a decisive event named the dialect (or it was forced).
    pub dialect_known: bool,
    pub calls: Vec<Call>,
    /// Every fragment's record, in stream order; empty when they were kept compactly
    /// ([`Pipeline::compact_fragments`]: see [`PipelineOutput::fragment_logs`]).
    pub fragments: Vec<FragmentRecord>,
    /// Each call's fragments, compactly, by call position ([`Pipeline::compact_fragments`]).
    pub fragment_logs: Vec<FragmentLog>,
    /// Fragments the dialect produced (`fragments.len()` when their records are kept).
    pub fragment_count: u32,
    /// Parallel calls' fragments alternating (with detail records).
    pub interleaving: Interleaving,
    pub events: Vec<EventRecord>,
    pub event_types: Vec<String>,
    pub event_count: u32,
    /// The events a record is made for (the raw view's events): `events.len()`, also when the
    /// records are not kept ([`Pipeline::without_event_records`]).
    pub recorded_events: u32,
    pub finish: Option<FinishMark>,
    pub done: Option<Pos>,
    pub provider_error: Option<(String, Pos)>,
    pub unterminated: Option<Unterminated>,
    pub findings: Findings,
    /// There was at least one call and the dialect marked every call done.
    pub all_calls_complete: bool,
    /// A JSON array body opened with `[` and never closed: the body was cut short, so every call
    /// being done does not make it a finished stream.
    pub array_unclosed: bool,
    pub bytes: u64,
    pub chunks: u32,
    /// How the stream ended (set by [`Pipeline::finish_each`]).
    pub ending: StreamEnding,
    /// A line or event went past the pipeline's limit ([`Pipeline::with_max_event_bytes`]): the
    /// stream was cut there, and everything in this outcome is what came before it.
    pub overflow: Option<Overflow>,
}

impl PipelineOutput {
    /// How the stream ended: a provider error, a finish signal or `[DONE]`, every call marked done by
    /// the dialect, or none of these (truncated).
    pub fn decide_ending(&self) -> StreamEnding {
        let out = self;
        if let Some((m, _)) = &out.provider_error {
            StreamEnding::ProviderError { message: m.clone() }
        } else if let Some(f) = &out.finish {
            StreamEnding::Finished {
                reason: f.reason.clone(),
            }
        } else if out.done.is_some() {
            StreamEnding::Finished {
                reason: "[DONE]".into(),
            }
        } else if out.all_calls_complete && !out.array_unclosed {
            StreamEnding::CallsComplete
        } else {
            StreamEnding::EndedWithoutFinish
        }
    }

    /// Did the stream end normally: a finish signal, `[DONE]` or every call marked done by the dialect
    /// (see [`PipelineOutput::decide_ending`]: not a provider error), and no event cut off at the end. `record` and the
    /// Recorder panel ask this (through `RecordOutcome`); a stream that ended normally can still hold a
    /// call that did not parse, which is [`crate::verdict::judge`]'s business.
    pub fn ended_normally(&self) -> bool {
        let out = self;
        matches!(
            out.ending,
            StreamEnding::Finished { .. } | StreamEnding::CallsComplete
        ) && out.unterminated.is_none()
    }
}

impl PipelineOutput {
    /// A finish signal or `[DONE]` arrived. Only that: how the stream ended is
    /// [`PipelineOutput::ending`] and whether it is OK is [`crate::verdict::judge`].
    pub fn finished(&self) -> bool {
        self.finish.is_some() || self.done.is_some()
    }
}

/// An event held (copied) while the dialect is not yet known, with where and when it arrived.
#[derive(Debug)]
struct HeldEvent {
    event_type: String,
    data: String,
    span: Range<u64>,
    flags: EventFlags,
    chunk: u32,
    t_micros: u64,
}

/// The engine. See the module documentation. `O` watches every fact ([`FactObserver`]).
pub struct Pipeline<O: FactObserver = NoObserver> {
    opts: Options,
    framer: Framer,
    dialect: Option<Dialect>,
    /// Events held while the dialect is not yet known.
    pending: Vec<HeldEvent>,
    /// Data bytes in `pending`.
    pending_bytes: usize,
    /// Index of each name in `out.event_types` (a linear search per event was quadratic with
    /// many distinct names).
    event_type_ids: std::collections::HashMap<String, u16>,
    acc: Accumulator,
    facts: Vec<Fact>,
    observer: O,
    out: PipelineOutput,
    chunk: u32,
    t_micros: u64,
    stopped: bool,
    /// Ground-truth arguments by call position (stub recordings), for `arguments-mismatch`.
    truth: Vec<String>,
    /// Some event matched the dialect (a fact, or an event the dialect's detection names);
    /// without one, `nothing-recognised`.
    recognised: bool,
    /// Another dialect an unmatched event looked like (for the `nothing-recognised` message).
    looks_like: Option<DialectKind>,
    /// A finish that announced tool calls (its reason, where): with no call assembled by the
    /// end, a call was lost.
    announced: Option<(String, Location)>,
    /// What the unmatched events were (for the same message).
    unmatched: Unmatched,
    /// The first bytes of the body, to say what a body with no events looks like.
    head: Vec<u8>,
    /// Event records are kept (with `opts.detail`); without them only their number is.
    event_records: bool,
}

/// Bytes of the body kept to describe one that framed no event.
const HEAD_BYTES: usize = 64;

/// What the events no dialect matched were: their names (an SSE `event:` name, a JSON `type` or
/// `object`, else the top-level keys), and how many were terminators, other JSON or plain text.
#[derive(Debug, Default)]
struct Unmatched {
    names: Vec<String>,
    terminators: u32,
    json: u32,
    text: u32,
}

impl Unmatched {
    const MAX_NAMES: usize = 8;

    fn note(&mut self, event_type: &str, data: &str) {
        let d = data.trim();
        if d == "[DONE]" || event_type == "done" {
            self.terminators += 1;
            return;
        }
        let mut add = |n: &str| {
            if self.names.len() < Self::MAX_NAMES && !self.names.iter().any(|x| x == n) {
                self.names.push(n.to_owned());
            }
        };
        if event_type != "message" && !event_type.is_empty() {
            add(event_type);
        }
        match serde_json::from_str::<serde_json::Value>(d) {
            Ok(serde_json::Value::Object(m)) => {
                self.json += 1;
                let s = |k: &str| m.get(k).and_then(serde_json::Value::as_str);
                if let Some(t) = s("type").or_else(|| s("object")).or_else(|| s("event")) {
                    add(t);
                } else if event_type == "message" {
                    let keys: Vec<&str> = m.keys().take(3).map(String::as_str).collect();
                    add(&format!("{{{}}}", keys.join(", ")));
                }
            }
            Ok(_) => self.json += 1,
            Err(_) => self.text += 1,
        }
    }

    /// The most telling name: a call's delta if any, else one about calls or tools, else the
    /// first.
    fn sample(&self) -> Option<&str> {
        let rank = |n: &String| {
            let n = n.to_ascii_lowercase();
            let call = n.contains("call") || n.contains("function");
            match (call, n.contains("tool"), n.contains("delta")) {
                (true, _, true) => 0,
                (true, _, false) => 1,
                (false, true, _) => 2,
                _ => 3,
            }
        };
        self.names
            .iter()
            .enumerate()
            .min_by_key(|(i, n)| (rank(n), *i))
            .map(|(_, n)| n.as_str())
    }

    /// What the unmatched events look like, in a few words.
    fn describe(&self, looks_like: Option<DialectKind>) -> Option<String> {
        let names = || {
            let mut shown: Vec<&str> = self.sample().into_iter().collect();
            for n in &self.names {
                if shown.len() >= 3 {
                    break;
                }
                if !shown.contains(&n.as_str()) {
                    shown.push(n);
                }
            }
            shown
                .iter()
                .map(|n| format!("`{}`", crate::text::truncate(n, 40)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if let Some(k) = looks_like {
            parts.push(format!("{}-style events ({})", k.title(), names()));
        } else if !self.names.is_empty() {
            parts.push(format!("events of an unknown kind ({})", names()));
        } else if self.json > 0 {
            parts.push("JSON of an unknown shape".to_owned());
        }
        if self.text > 0 {
            parts.push("text".to_owned());
        }
        if self.terminators > 0 && parts.is_empty() {
            parts.push(
                "only a terminator ([DONE] or a done event), which is not evidence of any dialect"
                    .to_owned(),
            );
        }
        (!parts.is_empty()).then(|| parts.join(" and "))
    }
}

/// What a body that framed no event looks like, in words ([`crate::content::appearance`] decides).
fn describe_bytes(head: &[u8], bytes: u64) -> String {
    let n = crate::text::plural(bytes, "byte");
    match crate::content::appearance(head) {
        crate::content::Appearance::AwsFrames => format!("binary AWS event stream frames, {n}"),
        crate::content::Appearance::Binary => format!("{n} of binary data"),
        crate::content::Appearance::Text => format!("{n} of other text"),
    }
}

const MAX_PENDING: usize = 64;
/// Events sniffed with [`crate::dialect::detect`] for `nothing-recognised` before only the
/// dialect's facts count.
const MAX_SNIFFED_EVENTS: u32 = 1000;
/// Bytes of event data held while the dialect is not known: past this, the default is assumed
/// (so the held copies never grow with a hostile input).
const MAX_PENDING_BYTES: usize = 8 * 1024 * 1024;

impl Pipeline {
    /// A pipeline at the start of a stream, with no observer.
    pub fn new(opts: Options) -> Self {
        Self::observed(opts, NoObserver)
    }
}

impl<O: FactObserver> Pipeline<O> {
    /// A pipeline at the start of a stream that hands every fact to `observer` (get it back with
    /// [`Pipeline::finish_observed`]).
    pub fn observed(opts: Options, observer: O) -> Self {
        Self {
            framer: Framer::new(opts.framing),
            dialect: opts.dialect.map(Dialect::new),
            pending: Vec::new(),
            pending_bytes: 0,
            event_type_ids: std::collections::HashMap::new(),
            acc: Accumulator::new(opts.detail),
            facts: Vec::new(),
            observer,
            out: PipelineOutput::default(),
            chunk: 0,
            t_micros: 0,
            stopped: false,
            truth: Vec::new(),
            recognised: false,
            looks_like: None,
            unmatched: Unmatched::default(),
            head: Vec::new(),
            announced: None,
            opts,
            event_records: true,
        }
    }

    /// A pipeline that counts the events it would record but keeps no [`EventRecord`]s (nor
    /// their type names): for a report that needs only their number (`check`), whose memory
    /// must not grow with the events of a large body. Fragment records are kept as before.
    pub fn without_event_records(mut self) -> Self {
        self.event_records = false;
        self
    }

    /// A pipeline that keeps no call's arguments ([`Accumulator::without_arguments`]): it still
    /// frames every event, counts the calls and decides how the stream ended, in memory that does
    /// not grow with the arguments. Its calls come out with empty arguments (and the findings
    /// about them mean nothing): for the recorder's and the proxy's summary, which report only
    /// the number of calls and the ending.
    pub fn without_arguments(mut self) -> Self {
        self.acc = std::mem::take(&mut self.acc).without_arguments();
        self
    }

    /// Keep each call's parsed arguments as their text ([`Accumulator::values_as_text`]).
    pub fn values_as_text(mut self) -> Self {
        self.acc = std::mem::take(&mut self.acc).values_as_text();
        self
    }

    /// Keep each call's fragment records compactly ([`PipelineOutput::fragment_logs`]), not one
    /// [`FragmentRecord`] per fragment: for a report that needs only each call's own fragments,
    /// so its memory grows by a few bytes a fragment rather than some 40; and each call's parsed
    /// arguments as their text ([`crate::accumulate::ParsedValue`]).
    pub fn compact_fragments(mut self) -> Self {
        self.acc = std::mem::take(&mut self.acc).compact();
        self
    }

    /// A pipeline that stops framing at the first line or event longer than `limit` bytes (see
    /// [`Pipeline::overflow`]); callers that read unbounded input (a pipe, `/dev/zero`) use it to
    /// keep memory bounded and to know when to stop reading.
    pub fn with_max_event_bytes(mut self, limit: EventLimit) -> Self {
        self.framer = Framer::with_max_event_bytes(self.opts.framing, limit);
        self
    }

    /// The line or event that went past the limit, if one did; later input is ignored.
    pub fn overflow(&self) -> Option<Overflow> {
        self.framer.overflow()
    }

    /// The recording's ground truth (arguments by call position): a call whose reassembled
    /// arguments differ raises `arguments-mismatch`, in the analysis and in `export` alike.
    pub fn set_truth(&mut self, truth: Vec<String>) {
        self.truth = truth;
    }

    /// Feed one network read (chunk), with its arrival time.
    pub fn feed(&mut self, bytes: &[u8], t_micros: u64) {
        self.t_micros = t_micros;
        self.out.bytes += bytes.len() as u64;
        if self.head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        let mut framer = std::mem::replace(&mut self.framer, Framer::new(Some(Framing::Sse)));
        framer.feed(bytes, &mut |item| self.on_framed(item));
        self.framer = framer;
        self.chunk += 1;
        self.out.chunks = self.chunk;
    }

    /// Live progress for a recorder: events framed and calls seen so far (cheap; no parsing).
    pub fn progress(&self) -> (u32, usize) {
        (self.out.event_count, self.acc.open_calls().len())
    }

    /// Feed an already framed event (used by naive framings).
    pub fn feed_event(
        &mut self,
        event_type: &str,
        data: &str,
        span: Range<u64>,
        chunk: u32,
        t_micros: u64,
    ) {
        self.chunk = chunk;
        self.t_micros = t_micros;
        self.on_framed(Framed::Event {
            event_type,
            data,
            span,
            flags: EventFlags::default(),
        });
    }

    fn on_framed(&mut self, item: Framed<'_>) {
        match item {
            Framed::Comment { text, span } => {
                let at = Location {
                    chunk: Some(self.chunk),
                    offset: Some(span.start),
                    ..Default::default()
                };
                self.out
                    .findings
                    .add(FindingKind::KeepAliveComment, None, at, || {
                        format!("comment \":{}\"", truncate(text, 60))
                    });
            }
            Framed::Corrupt {
                span,
                message,
                kind,
            } => {
                let at = Location {
                    chunk: Some(self.chunk),
                    offset: Some(span.start),
                    ..Default::default()
                };
                self.out.findings.add(kind, None, at, || message.to_owned());
            }
            Framed::Event {
                event_type,
                data,
                span,
                flags,
            } => {
                if self.dialect.is_none() {
                    match crate::dialect::detect(event_type, data) {
                        Some(kind) => {
                            self.out.dialect_known = true;
                            self.dialect = Some(Dialect::new(kind));
                            let (chunk, t) = (self.chunk, self.t_micros);
                            self.replay_held();
                            self.chunk = chunk;
                            self.t_micros = t;
                        }
                        None if self.pending.len() < MAX_PENDING
                            && self.pending_bytes + data.len() <= MAX_PENDING_BYTES =>
                        {
                            self.pending_bytes += data.len();
                            self.pending.push(HeldEvent {
                                event_type: event_type.to_owned(),
                                data: data.to_owned(),
                                span,
                                flags,
                                chunk: self.chunk,
                                t_micros: self.t_micros,
                            });
                            return;
                        }
                        None => self.default_dialect(flags.binary_frame),
                    }
                }
                self.on_event(event_type, data, span, flags);
            }
        }
    }

    /// No event named the dialect: assume the framing's own, Bedrock ConverseStream for binary
    /// AWS frames (`binary`), else OpenAI Chat.
    fn default_dialect(&mut self, binary: bool) {
        let kind = if binary {
            DialectKind::BedrockConverse
        } else {
            DialectKind::OpenAiChat
        };
        self.dialect = Some(Dialect::new(kind));
        let at = Location {
            chunk: Some(self.chunk),
            ..Default::default()
        };
        self.out
            .findings
            .add(FindingKind::DialectGuess, None, at, || {
                format!("no event named the dialect; assumed {}", kind.name())
            });
        self.replay_held();
    }

    /// Decode the events held while the dialect was unknown, each at the chunk and time it arrived.
    fn replay_held(&mut self) {
        for held in std::mem::take(&mut self.pending) {
            self.chunk = held.chunk;
            self.t_micros = held.t_micros;
            self.on_event(&held.event_type, &held.data, held.span, held.flags);
        }
    }

    fn on_event(&mut self, event_type: &str, data: &str, span: Range<u64>, flags: EventFlags) {
        let event_no = self.out.event_count;
        self.out.event_count += 1;
        let at = Location {
            chunk: Some(self.chunk),
            event: Some(event_no),
            offset: Some(span.start),
            fragment: None,
        };
        if self.opts.detail {
            self.event_flag_findings(flags, at);
        } else if flags.lossy_utf8 {
            // Decides the verdict, so the lean pass (export) sees it too.
            self.out
                .findings
                .add(FindingKind::InvalidUtf8, None, at, || {
                    "event data is not valid UTF-8".into()
                });
        }
        let first_fragment = self.acc.fragment_count();
        let mut kind = EventKind::Other;
        if self.stopped {
            // After a provider error: keep framing (for the raw view) but decode nothing.
            self.record_event(event_type, span, kind, first_fragment);
            return;
        }
        let Some(dialect) = self.dialect.as_mut() else {
            return;
        };
        let mut facts = std::mem::take(&mut self.facts);
        dialect.on_event(event_type, data, &mut facts);
        let dialect_kind = dialect.kind();
        if !self.recognised {
            let kind = dialect.kind();
            self.recognise(kind, event_type, data, &facts);
        }
        let pos = Pos {
            event: event_no,
            chunk: self.chunk,
            t_micros: self.t_micros,
        };
        // The event could not be read (and gave no call): if it names a tool call, one was lost.
        let mut unreadable = false;
        let mut gave_call = false;
        for fact in facts.drain(..) {
            self.observer.on_fact(&fact, pos, self.acc.fragment_count());
            match fact {
                Fact::Fragment(frag) => {
                    kind = EventKind::ToolCall;
                    gave_call = true;
                    if self.out.finish.is_some() || self.out.done.is_some() {
                        let call = self.acc.position_of(&frag.key);
                        let no = self.acc.fragment_count();
                        self.out.findings.add(
                            FindingKind::FragmentAfterFinish,
                            call,
                            Location {
                                fragment: Some(no),
                                ..at
                            },
                            || "tool-call data after the finish signal".into(),
                        );
                    }
                    self.acc.push(frag, pos);
                }
                Fact::Finish { reason } => {
                    if kind == EventKind::Other {
                        kind = EventKind::Finish;
                    }
                    if self.announced.is_none() && dialect_kind.finish_announces_calls(&reason) {
                        self.announced = Some((reason.clone(), at));
                    }
                    if self.out.finish.is_none() {
                        self.out.finish = Some(FinishMark { reason, pos });
                    }
                }
                Fact::Done => {
                    kind = EventKind::Done;
                    if self.out.done.is_none() {
                        self.out.done = Some(pos);
                        self.out
                            .findings
                            .add(FindingKind::DoneSentinel, None, at, || {
                                "data: [DONE]".into()
                            });
                    }
                }
                Fact::ArgumentsOnlyInDone { key, arguments } => {
                    kind = EventKind::ToolCall;
                    gave_call = true;
                    let len = arguments.len();
                    let call = self.acc.push(
                        Fragment {
                            key,
                            stated_index: None,
                            id: Raw::Absent,
                            name: Raw::Absent,
                            args: Raw::Value(ArgsPiece::Text(arguments)),
                        },
                        pos,
                    );
                    let no = self.acc.fragment_count() - 1;
                    self.out.findings.add(
                        FindingKind::ArgumentsOnlyInDone,
                        Some(call),
                        Location {
                            fragment: Some(no),
                            ..at
                        },
                        || {
                            format!(
                                "arguments came only in the done event ({}, no .delta); a delta-only client gets empty arguments",
                                crate::text::plural(len, "byte")
                            )
                        },
                    );
                }
                Fact::ServerTool { key, kind: tool } => {
                    self.acc.server_tool(&key, tool.clone());
                    let call = self.acc.position_of(&key);
                    let open = call.and_then(|c| self.acc.open_calls().get(c as usize));
                    let name = open.map_or("", |s| s.name.as_str());
                    let id = open.map_or("", |s| s.id.as_str());
                    let message = format!(
                        "{tool} {} ({}) runs on the provider, not in the client",
                        truncate(name, 60),
                        truncate(id, 60)
                    );
                    self.out
                        .findings
                        .add(FindingKind::ServerTool, call, at, || message);
                }
                Fact::CallKind { key, kind, text } => {
                    self.acc.call_kind(&key, kind, text);
                }
                Fact::CallDone { key } => self.acc.call_done(&key, pos.chunk),
                Fact::Authoritative { key, arguments } => self.acc.authoritative(&key, arguments),
                Fact::ProviderError { message } => {
                    kind = EventKind::Error;
                    let m = message.clone();
                    self.out
                        .findings
                        .add(FindingKind::ProviderError, None, at, || m);
                    if self.out.provider_error.is_none() {
                        self.out.provider_error = Some((message, pos));
                    }
                    self.stopped = true;
                }
                Fact::Finding {
                    kind: fk,
                    key,
                    message,
                } => {
                    if matches!(fk, FindingKind::NonJsonData | FindingKind::UnexpectedShape) {
                        kind = EventKind::Bad;
                        unreadable |= key.is_none();
                    } else if fk == FindingKind::PingEvent && kind == EventKind::Other {
                        kind = EventKind::Ping;
                    }
                    let mut call = key.as_ref().and_then(|k| self.acc.position_of(k));
                    let fragment = match fk {
                        FindingKind::MissingIndex
                        | FindingKind::InvalidIndex
                        | FindingKind::ReusedIndexNewCall
                        | FindingKind::FreshIdContinuation
                        | FindingKind::IndexNotFromZero
                        | FindingKind::SparseIndex => Some(self.acc.fragment_count()),
                        _ => None,
                    };
                    if fragment.is_some() && call.is_none() && key.is_some() {
                        // A routing finding about the fragment that follows it, which opens a new
                        // call: it gets the next position (not "no call", which would count it apart).
                        call = Some(self.acc.open_calls().len() as u32);
                    }
                    self.out
                        .findings
                        .add(fk, call, Location { fragment, ..at }, || message);
                }
            }
        }
        self.facts = facts;
        if unreadable && !gave_call && dialect_kind.names_tool_call(event_type, data) {
            self.out
                .findings
                .add(FindingKind::LostToolCall, None, at, || {
                    format!(
                        "event {event_no} names a tool call but cannot be read: {}",
                        truncate(data.trim(), 80)
                    )
                });
        }
        self.record_event(event_type, span, kind, first_fragment);
    }

    /// Whether this event matched the dialect: it gave a tool-call, finish or error signal (a
    /// terminator such as `[DONE]` or a bare `done` event is not evidence of any dialect, nor is a
    /// finding), or the dialect's detection names this dialect. Only until one has (then it costs
    /// nothing). What did not match is noted for the `nothing-recognised` message.
    fn recognise(&mut self, kind: DialectKind, event_type: &str, data: &str, signals: &[Fact]) {
        let decisive = signals
            .iter()
            .any(|s| !matches!(s, Fact::Finding { .. } | Fact::Done));
        if decisive {
            self.recognised = true;
            return;
        }
        // Sniffing costs a JSON parse: on a long stream of another dialect, the first thousand
        // events decide it (the facts above are still looked at on every event).
        if self.out.event_count > MAX_SNIFFED_EVENTS {
            return;
        }
        match crate::dialect::detect(event_type, data) {
            Some(k) if k == kind => self.recognised = true,
            Some(k) => {
                self.looks_like.get_or_insert(k);
                self.unmatched.note(event_type, data);
            }
            None => self.unmatched.note(event_type, data),
        }
    }

    /// The `nothing-recognised` finding, when no event matched the dialect: what was there instead.
    fn nothing_recognised(&mut self) {
        // A stream cut inside its first event (a recorder's journal) is cut short, not
        // unrecognisable: `ended-without-finish` says so.
        let cut_in_event = self.out.unterminated.as_ref().is_some_and(|u| u.had_data);
        if self.recognised || self.out.overflow.is_some() || cut_in_event {
            return;
        }
        let dialect = self.out.dialect.title();
        let looks = self.unmatched.describe(self.looks_like);
        let array = (self.out.framing == Some(Framing::JsonArray)).then(|| {
            format!(
                "a JSON array of {}",
                crate::text::plural(self.out.event_count, "element")
            )
        });
        let what = match (array, looks) {
            (Some(a), Some(l)) => format!(": {a} ({l})"),
            (Some(a), None) => format!(": {a}"),
            (None, Some(l)) => format!(": {l}"),
            (None, None) => String::new(),
        };
        let frames = self.out.framing == Some(Framing::AwsEventStream);
        let message = match (self.out.event_count, self.looks_like) {
            _ if self.out.bytes == 0 => "the input is empty".to_owned(),
            // Say what the bytes are: frames of another AWS service, or of a model not read here.
            (n, None) if frames && n > 0 => format!(
                "binary AWS event stream frames ({}), none of them {}",
                crate::text::plural(n, "frame"),
                if self.opts.dialect.is_some() {
                    format!("an event of the {dialect} dialect")
                } else {
                    "a known dialect's event".to_owned()
                }
            ),
            (0, _) => format!(
                "no server-sent events or JSON lines ({})",
                describe_bytes(&self.head, self.out.bytes)
            ),
            (1, None) => format!(
                "its one event did not match {}{what}",
                if self.opts.dialect.is_some() {
                    format!("the {dialect} dialect")
                } else {
                    "a known dialect".to_owned()
                }
            ),
            (_, Some(other)) => format!(
                "events did not match the {dialect} dialect; detected: {}{}",
                other.title(),
                // The telling event's name, when the events have one (not a chunk's keys).
                self.unmatched
                    .sample()
                    .filter(|s| !s.starts_with('{'))
                    .map_or(String::new(), |s| format!(" (`{s}`)"))
            ),
            (n, None) if self.opts.dialect.is_some() => format!(
                "none of the {} matched the {dialect} dialect{what}",
                crate::text::plural(n, "event")
            ),
            (n, None) => format!(
                "none of the {} matched a known dialect{what}",
                crate::text::plural(n, "event")
            ),
        };
        let at = Location {
            chunk: Some(self.out.chunks.saturating_sub(1)),
            ..Default::default()
        };
        self.out
            .findings
            .add(FindingKind::NothingRecognised, None, at, || message);
    }

    fn record_event(
        &mut self,
        event_type: &str,
        span: Range<u64>,
        kind: EventKind,
        first_fragment: u32,
    ) {
        if !self.opts.detail {
            return;
        }
        self.out.recorded_events += 1;
        if !self.event_records {
            return;
        }
        let type_id = match self.event_type_ids.get(event_type) {
            Some(&i) => i,
            None if self.out.event_types.len() < u16::MAX as usize => {
                let i = self.out.event_types.len() as u16;
                self.out.event_types.push(event_type.to_owned());
                self.event_type_ids.insert(event_type.to_owned(), i);
                i
            }
            None => u16::MAX,
        };
        self.out.events.push(EventRecord {
            span,
            chunk: self.chunk,
            type_id,
            kind,
            first_fragment,
            fragment_count: self.acc.fragment_count() - first_fragment,
        });
    }

    fn event_flag_findings(&mut self, flags: EventFlags, at: Location) {
        let f = &mut self.out.findings;
        if flags.crlf {
            f.add(FindingKind::CrlfLineEndings, None, at, || {
                "lines end with CRLF".into()
            });
        }
        if flags.cr {
            f.add(FindingKind::CrLineEndings, None, at, || {
                "lines end with a lone CR".into()
            });
        }
        if flags.data_without_space {
            f.add(FindingKind::DataWithoutSpace, None, at, || {
                "\"data:\" without a space".into()
            });
        }
        if flags.multi_line_data {
            f.add(FindingKind::MultiLineData, None, at, || {
                "event with several data lines".into()
            });
        }
        if flags.data_before_event {
            f.add(FindingKind::DataBeforeEvent, None, at, || {
                "data line before the event line".into()
            });
        }
        if flags.unknown_field {
            f.add(FindingKind::UnknownField, None, at, || {
                "unknown SSE field ignored".into()
            });
        }
        if flags.lossy_utf8 {
            f.add(FindingKind::InvalidUtf8, None, at, || {
                "event data is not valid UTF-8".into()
            });
        }
    }

    /// End of stream: flush the framer, parse every call once, and hand back the output.
    pub fn finish(self) -> PipelineOutput {
        self.finish_observed().0
    }

    /// [`Pipeline::finish`], handing back the observer too (after its
    /// [`FactObserver::on_finish`]).
    pub fn finish_observed(self) -> (PipelineOutput, O) {
        // Room for every call at once: growing by doubling copies them over and over.
        let mut calls = Vec::with_capacity(self.acc.open_calls().len());
        let (mut out, observer) = self.finish_each_observed(|c| calls.push(c));
        out.calls = calls;
        (out, observer)
    }

    /// [`Pipeline::finish`], handing each parsed call to `each` instead of keeping it (the output's
    /// `calls` stays empty): the streaming `export` writes and drops one call at a time.
    pub fn finish_each(self, each: impl FnMut(Call)) -> PipelineOutput {
        self.finish_each_observed(each).0
    }

    fn finish_each_observed(mut self, each: impl FnMut(Call)) -> (PipelineOutput, O) {
        let mut framer = std::mem::replace(&mut self.framer, Framer::new(Some(Framing::Sse)));
        self.chunk = self.chunk.saturating_sub(1);
        let unterminated = framer.finish(&mut |item| self.on_framed(item));
        self.out.overflow = framer.overflow();
        if let Some(o) = self.out.overflow {
            let at = Location {
                offset: Some(o.start),
                chunk: Some(self.chunk),
                ..Default::default()
            };
            self.out
                .findings
                .add(FindingKind::EventTooLarge, None, at, || o.to_string());
        }
        if self.dialect.is_none() {
            if self.pending.is_empty() {
                self.dialect = Some(Dialect::new(DialectKind::OpenAiChat));
            } else {
                let binary = self.pending.first().is_some_and(|h| h.flags.binary_frame);
                self.default_dialect(binary);
            }
        }
        if let Some(stats) = framer.sse_stats()
            && stats.bom
        {
            self.out.findings.add(
                FindingKind::Bom,
                None,
                Location {
                    offset: Some(0),
                    chunk: Some(0),
                    ..Default::default()
                },
                || "UTF-8 BOM at the start".into(),
            );
        }
        if let Some(u) = &unterminated {
            let at = Location {
                offset: Some(u.span.start),
                chunk: Some(self.chunk),
                ..Default::default()
            };
            let text = u.text.clone();
            let binary = framer.framing() == Some(Framing::AwsEventStream);
            // A binary frame cut short is a frame whose payload cannot be read (its CRC never
            // came; an AWS SDK raises there): an error, where an unterminated text event is a
            // warning (WHATWG discards it by design).
            let kind = if binary {
                FindingKind::FrameCorrupt
            } else {
                FindingKind::UnterminatedEvent
            };
            self.out.findings.add(kind, None, at, || {
                let discarded = crate::text::plural(u.span.end - u.span.start, "byte");
                if binary {
                    // The text says which frame was cut and how much of it arrived.
                    format!("{text}; discarded")
                } else if text.is_empty() {
                    format!("stream ended inside an event; discarded {discarded} (no data)")
                } else {
                    format!(
                        "stream ended inside an event; discarded {discarded}: {}",
                        truncate(&text, 120)
                    )
                }
            });
        }
        self.out.framing = framer.framing();
        self.out.array_unclosed = framer.unclosed();
        self.out.unterminated = unterminated;
        self.out.dialect = self
            .dialect
            .as_ref()
            .map_or(DialectKind::OpenAiChat, Dialect::kind);
        if self.opts.dialect.is_some() {
            self.out.dialect_known = true;
        }
        self.nothing_recognised();
        let finished = self.out.finished();
        let acc = std::mem::take(&mut self.acc);
        if let Some((reason, at)) = self.announced.take()
            && acc.open_calls().iter().all(|c| c.server_tool.is_some())
        {
            self.out
                .findings
                .add(FindingKind::LostToolCall, None, at, || {
                    format!("the stream finished with \"{reason}\", announcing tool calls, but no tool call was read")
                });
        }
        self.out.all_calls_complete =
            !acc.open_calls().is_empty() && acc.open_calls().iter().all(|c| c.done);
        let truth = std::mem::take(&mut self.truth);
        let findings = &mut self.out.findings;
        let mut each = each;
        let done = acc.finish_each(finished, |call, own| {
            let t = truth.get(call.position as usize).map(String::as_str);
            crate::verdict::call_findings(&call, t, own, findings);
            each(call);
        });
        self.out.fragments = done.records;
        self.out.fragment_logs = done.logs;
        self.out.fragment_count = done.fragment_count;
        self.out.interleaving = done.interleaving;
        self.out.ending = self.out.decide_ending();
        if self.out.ending == StreamEnding::EndedWithoutFinish {
            let at = Location {
                chunk: Some(self.out.chunks.saturating_sub(1)),
                offset: Some(self.out.bytes),
                ..Default::default()
            };
            let unclosed = self.out.array_unclosed;
            self.out
                .findings
                .add(FindingKind::EndedWithoutFinish, None, at, || {
                    if unclosed {
                        "no finish_reason or end event, and the JSON array was never closed with ]: the body was cut short".into()
                    } else {
                        "no finish_reason, [DONE] or end event before the end of the stream".into()
                    }
                });
        }
        if self.out.ending == StreamEnding::CallsComplete {
            let at = Location {
                chunk: Some(self.out.chunks.saturating_sub(1)),
                offset: Some(self.out.bytes),
                ..Default::default()
            };
            self.out
                .findings
                .add(FindingKind::NoFinalEvent, None, at, || {
                    "every call was closed, but no finish_reason or end event came before the end of the stream".into()
                });
        }
        let finished_at = self.out.finish.as_ref().map(|f| f.pos).or(self.out.done);
        self.observer.on_finish(finished_at);
        (self.out, self.observer)
    }
}

/// Run a whole body given as chunks with times; convenience for tests and tools.
pub fn run_chunks<'a>(
    chunks: impl IntoIterator<Item = (&'a [u8], u64)>,
    opts: Options,
) -> PipelineOutput {
    let mut p = Pipeline::new(opts);
    for (bytes, t) in chunks {
        p.feed(bytes, t);
    }
    p.finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::recording::Recording;

    /// What a pipeline that keeps no arguments must still say: everything the recorder's summary
    /// reads.
    fn summary(out: &PipelineOutput, calls: usize) -> String {
        format!(
            "{} events, {calls} calls, {:?}, ended normally: {}, dialect {:?} (known: {}), provider error {:?}",
            out.event_count,
            out.ending,
            out.ended_normally(),
            out.dialect,
            out.dialect_known,
            out.provider_error.as_ref().map(|(m, _)| m),
        )
    }

    /// On every bundled recording (every dialect and framing), a pipeline without arguments counts
    /// the same events and calls and decides the same ending as the full one, keeping no byte of
    /// any call's arguments.
    #[test]
    fn without_arguments_says_what_the_summary_needs_and_keeps_no_arguments() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../recordings");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "ron") {
                continue;
            }
            let rec = Recording::load(&path).unwrap();
            let mut full = Pipeline::new(Options::default());
            let mut lean = Pipeline::new(Options::default()).without_arguments();
            for c in &rec.chunks {
                full.feed(&c.bytes, c.t_micros);
                lean.feed(&c.bytes, c.t_micros);
            }
            let kept: usize = lean
                .acc
                .open_calls()
                .iter()
                .map(|c| c.args.len() + c.authoritative.as_ref().map_or(0, String::len))
                .sum();
            assert_eq!(kept, 0, "{}", path.display());
            let full = full.finish();
            let with_arguments: usize = full.calls.iter().map(|c| c.raw_arguments.len()).sum();
            let mut calls = 0;
            let lean = lean.finish_each(|c| {
                assert!(c.raw_arguments.is_empty());
                calls += 1;
            });
            assert_eq!(
                summary(&lean, calls),
                summary(&full, full.calls.len()),
                "{}",
                path.display()
            );
            seen += usize::from(with_arguments > 0);
        }
        assert!(seen > 40, "{seen} recordings with arguments");
    }
}
