//! The analysis: one immutable value per recording, computed once, that every view reads (CLI
//! report, JSON, exports, GUI panels). It holds the body and its chunk boundaries, the events,
//! every fragment, the correct calls with the seed's three checkpoints, the findings, and what each
//! naive strategy made of the same input. "State at cursor k" is a cheap filter over it
//! ([`Analysis::call_state_at`]), never a re-run.

use std::ops::Range;

use crate::accumulate::{Call, FragmentLog, FragmentRecord, Own, Parsed};
use crate::dialect::DialectKind;
use crate::fact::{Pos, Presence};
use crate::findings::{Finding, FindingKind, Findings, Location};
use crate::framing::Framing;
use crate::limits::EventLimit;
use crate::naive::{NaiveCall, Reads, Report, Strategies, Strategy};
pub use crate::pipeline::StreamEnding;
use crate::pipeline::{EventRecord, FinishMark, Options, PipelineOutput};
use crate::recording::{Meta, Recording, RequestInfo, ResponseInfo, TruthCall};
use crate::sse::{Overflow, Unterminated};

mod feed;
pub(crate) use feed::Progress;
pub use feed::{Feed, FeedObserver, NoProgress};

/// One network read's place in the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSpan {
    pub start: u64,
    pub end: u64,
    pub t_micros: u64,
}

/// The result of one checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Check {
    Pass {
        detail: Detail,
    },
    Fail {
        detail: Detail,
    },
    /// Cannot be checked honestly (e.g. no original to compare against).
    NotApplicable {
        detail: Detail,
    },
}

/// A checkpoint's explanation: most are one of a few fixed sentences, held without a copy per
/// call (a stream can have hundreds of thousands of calls).
pub type Detail = std::borrow::Cow<'static, str>;

impl Check {
    /// `Some(true)` pass, `Some(false)` fail, `None` not applicable.
    pub fn passed(&self) -> Option<bool> {
        match self {
            Check::Pass { .. } => Some(true),
            Check::Fail { .. } => Some(false),
            Check::NotApplicable { .. } => None,
        }
    }
    /// The explanation.
    pub fn detail(&self) -> &str {
        match self {
            Check::Pass { detail } | Check::Fail { detail } | Check::NotApplicable { detail } => {
                detail
            }
        }
    }
}

/// The seed's three checkpoints for one call.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Checkpoints {
    /// ① The reassembled string equals the original verbatim.
    pub verbatim: Check,
    /// ② Every fragment sits contiguously, in order, in the original.
    pub contiguous: Check,
    /// ③ Only the first fragment carries id and name.
    pub first_only: Check,
    /// Where the original came from: "ground truth", "authoritative copy (… .done)", or none.
    pub original_source: Option<String>,
}

/// How a strategy's final calls agree with the accumulator's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agreement {
    /// Same number of calls, same ids, names and parsed arguments.
    pub matches_correct: bool,
    /// What differs, one line each.
    pub differences: Vec<String>,
}

/// A naive strategy's report plus how it agrees with the correct calls.
#[derive(Clone, Debug, PartialEq)]
pub struct StrategyResult {
    pub report: Report,
    pub agreement: Agreement,
}

/// Where the input came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceInfo {
    /// File path or URL, for messages.
    pub name: String,
    /// What kind of source it is (shown as its [`SourceKind::label`]).
    pub kind: SourceKind,
    /// Chunk boundaries and times are real network reads.
    pub timing_known: bool,
}

/// What kind of source an analysis was built from; its [`label`](SourceKind::label) is what the
/// report, `check --json`'s `source` and the app's status line show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SourceKind {
    /// A `.ron` recording.
    #[default]
    Recording,
    /// A recorder's journal, salvaged (the recording was interrupted).
    Journal,
    /// A raw body (SSE or JSON lines): no read boundaries or timing.
    RawBody,
    /// One stream imported from a capture; `format` is the importer's name (`har`, `cassette`,
    /// `jsonl`, …), empty when unknown.
    Imported { format: String },
    /// The Recorder panel's recording so far.
    Live,
    /// A stub built in memory.
    Stub,
    /// Any other source, named by the caller.
    Other(String),
}

impl SourceKind {
    /// The label shown to people and written as `check --json`'s `source`.
    pub fn label(&self) -> String {
        match self {
            SourceKind::Recording => "recording".into(),
            SourceKind::Journal => "journal (interrupted recording)".into(),
            SourceKind::RawBody => "raw body".into(),
            SourceKind::Imported { format } if format.is_empty() => "import".into(),
            SourceKind::Imported { format } => format!("{format} import"),
            SourceKind::Live => "live recording".into(),
            SourceKind::Stub => "stub".into(),
            SourceKind::Other(label) => label.clone(),
        }
    }

    /// Whether chunk boundaries and times can be real network reads (a raw body has none).
    pub fn may_have_timing(&self) -> bool {
        !matches!(self, SourceKind::RawBody)
    }
}

/// A label back to its kind (the inverse of [`SourceKind::label`]); any other text is
/// [`SourceKind::Other`].
impl From<&str> for SourceKind {
    fn from(label: &str) -> Self {
        match label {
            "recording" => SourceKind::Recording,
            "journal (interrupted recording)" => SourceKind::Journal,
            "raw body" => SourceKind::RawBody,
            "import" => SourceKind::Imported {
                format: String::new(),
            },
            "live recording" => SourceKind::Live,
            "stub" => SourceKind::Stub,
            other => match other.strip_suffix(" import") {
                Some(format) => SourceKind::Imported {
                    format: format.to_owned(),
                },
                None => SourceKind::Other(other.to_owned()),
            },
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// Everything about one recording. Immutable once built.
#[derive(Debug)]
pub struct Analysis {
    pub source: SourceInfo,
    pub meta: Meta,
    pub request: Option<RequestInfo>,
    pub response: Option<ResponseInfo>,
    pub truth: Vec<TruthCall>,
    pub body: Vec<u8>,
    /// Each chunk's place in the body; empty when only their number was kept
    /// ([`Feed::counts_only`]: see [`Analysis::chunk_count`]).
    pub chunks: Vec<ChunkSpan>,
    pub framing: Framing,
    pub dialect: DialectKind,
    pub dialect_known: bool,
    /// Every framed event; empty when only their number was kept ([`Feed::counts_only`]: see
    /// [`Analysis::event_count`]).
    pub events: Vec<EventRecord>,
    pub event_types: Vec<String>,
    /// Every fragment's record, in stream order; empty when each call's were kept compactly
    /// ([`Feed::counts_only`]: see [`Analysis::call_records`] and [`Analysis::fragment_count`]).
    pub fragments: Vec<FragmentRecord>,
    pub calls: Vec<Call>,
    pub checkpoints: Vec<Checkpoints>,
    pub finish: Option<FinishMark>,
    pub done: Option<Pos>,
    pub provider_error: Option<(String, Pos)>,
    pub ending: StreamEnding,
    pub unterminated: Option<Unterminated>,
    /// The stream was cut at a line or event over the limit (see
    /// [`Analysis::from_recording_owned`]); everything here is what came before it.
    pub overflow: Option<Overflow>,
    pub findings: Vec<Finding>,
    pub strategies: Vec<StrategyResult>,
    /// Not a stream: one complete (non-streaming) response, its calls read directly
    /// ([`crate::complete`]); no fragments, no naive strategies.
    pub complete: bool,
    /// Per-call partial-JSON preview summaries, once [`Analysis::compute_previews`] ran.
    pub preview: Option<Vec<CallPreview>>,
    /// The options the correct pass ran with (the dialect forced, or the recording's): a second
    /// pass over the body ([`crate::staged::strategies`]) feeds the naive strategies with them,
    /// so they see the same facts.
    pub options: Options,
    /// Chunks fed ([`Analysis::chunk_count`]).
    chunk_total: usize,
    /// Events framed ([`Analysis::event_count`]).
    event_total: usize,
    /// Body bytes fed ([`Analysis::body_len`]).
    body_total: u64,
    /// Each call's fragments, compactly, by position, when [`Analysis::fragments`] is not kept.
    fragment_logs: Vec<FragmentLog>,
    /// Fragments read ([`Analysis::fragment_count`]).
    fragment_total: usize,
}

/// One call as it stands at a cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallAtCursor<'a> {
    /// Fragments received so far.
    pub fragments: &'a [u32],
    /// The arguments string so far.
    pub arguments: &'a str,
    /// The call's first fragment has arrived.
    pub started: bool,
    /// The stream has finished (so the parse result is shown).
    pub finished: bool,
}

impl Analysis {
    /// The dialect the reports name: none when nothing matched and none was forced (rather than
    /// the default's guess). `check --json`, `export` and `scan` all say this one.
    pub fn reported_dialect(&self) -> Option<DialectKind> {
        let unrecognised = !self.dialect_known
            && self
                .findings
                .iter()
                .any(|f| f.kind == crate::findings::FindingKind::NothingRecognised);
        (!unrecognised).then_some(self.dialect)
    }

    /// Analyse a recording; `source` says where it came from (name, kind, whether the timing is
    /// real) for the report and messages.
    pub fn from_recording(rec: &Recording, source: SourceInfo, opts: Options) -> Self {
        let chunks = rec.chunks.iter().map(|c| (c.bytes.as_slice(), c.t_micros));
        Self::run(
            rec,
            chunks,
            rec.body_len(),
            source,
            opts,
            EventLimit::UNBOUNDED,
        )
    }

    /// [`Analysis::from_recording`], consuming the recording so each chunk's bytes are freed as
    /// soon as they are copied into the body (the body is then held once, not twice), and
    /// stopping at the first line or event longer than `max_event_bytes`
    /// ([`Analysis::overflow`] says where).
    pub fn from_recording_owned(
        mut rec: Recording,
        source: SourceInfo,
        opts: Options,
        max_event_bytes: EventLimit,
    ) -> Self {
        let body_len = rec.body_len();
        let chunks = std::mem::take(&mut rec.chunks);
        let chunks = chunks.into_iter().map(|c| (c.bytes, c.t_micros));
        Self::run(&rec, chunks, body_len, source, opts, max_event_bytes)
    }

    fn run<B: AsRef<[u8]>>(
        rec: &Recording,
        rec_chunks: impl Iterator<Item = (B, u64)>,
        body_len: u64,
        source: SourceInfo,
        opts: Options,
        max_event_bytes: EventLimit,
    ) -> Self {
        let mut feed = Feed::new(rec, opts, max_event_bytes).keep_body(body_len);
        for (bytes, t_micros) in rec_chunks {
            if feed.overflow().is_some() {
                break;
            }
            feed.feed(bytes.as_ref(), t_micros);
        }
        feed.finish(rec, source)
    }

    /// A complete (non-streaming) response: the calls were read directly, so there are no
    /// fragments to check, no naive strategies (they have nothing to get wrong), and no findings
    /// about read boundaries (one JSON document split across reads is no defect).
    fn build_complete(
        out: PipelineOutput,
        strategies: Strategies,
        rec: &Recording,
        source: SourceInfo,
        body: Vec<u8>,
        chunks: Vec<ChunkSpan>,
        options: Options,
    ) -> Self {
        let mut a = Self::build(
            out, strategies, rec, source, body, chunks, None, None, options,
        );
        a.complete = true;
        a.strategies.clear();
        a.findings
            .retain(|f| !matches!(f.kind, FindingKind::SplitLine | FindingKind::SplitUtf8));
        let na = || Check::NotApplicable {
            detail: "not a stream: one complete response, no fragments".into(),
        };
        for cp in &mut a.checkpoints {
            cp.verbatim = na();
            cp.contiguous = na();
            cp.first_only = na();
        }
        a
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the parts of one feed, handed over once"
    )]
    fn build(
        mut out: PipelineOutput,
        strategies: Strategies,
        rec: &Recording,
        source: SourceInfo,
        body: Vec<u8>,
        chunks: Vec<ChunkSpan>,
        counted: Option<feed::Counted>,
        replay: Option<&dyn Reads>,
        options: Options,
    ) -> Self {
        let chunk_total = counted.map_or(chunks.len(), |c| {
            usize::try_from(c.chunks).unwrap_or(usize::MAX)
        });
        let body_total = counted.map_or_else(|| chunks.last().map_or(0, |c| c.end), |c| c.bytes);
        let event_total = out.recorded_events as usize;
        let framing = out.framing.unwrap_or(Framing::Sse);
        let dialect = out.dialect;
        let mut findings = std::mem::take(&mut out.findings);
        // The recorded reads: spans of the kept body, else read again (`replay`); none held when
        // their spans were not kept.
        let held = counted
            .is_none()
            .then(|| body_reads(&source, &body, &chunks))
            .flatten();
        let reads = held.as_ref().map(|r| r as &dyn Reads).or(replay);
        // Chunk-level findings (need boundaries).
        if source.timing_known {
            if framing.is_text() {
                if let Some(reads) = reads {
                    chunk_findings(reads, &mut findings);
                }
            } else {
                frame_split_findings(&out.events, &chunks, &mut findings);
            }
        }
        let mut checkpoints = Vec::with_capacity(out.calls.len());
        for c in &out.calls {
            let own = match out.fragment_logs.get(c.position as usize) {
                Some(log) => Own::Log(log, c.position),
                None => Own::Numbered(&c.fragments, &out.fragments),
            };
            checkpoints.push(self::checkpoints(c, own, &rec.truth));
            call_findings(c, own, dialect, &mut findings);
        }
        interleaving_finding(&out, &mut findings);
        let ending = out.ending.clone();
        if out.calls.is_empty() {
            findings.add(FindingKind::NoToolCalls, None, Location::default(), || {
                "no tool calls in this stream".into()
            });
        }
        let strategies = strategy_results(strategies, reads, dialect, framing, &out.calls);
        Analysis {
            source,
            meta: rec.meta.clone(),
            request: rec.request.clone(),
            response: rec.response.clone(),
            truth: rec.truth.clone(),
            body,
            chunks,
            framing,
            dialect,
            dialect_known: out.dialect_known,
            events: out.events,
            event_types: out.event_types,
            fragments: out.fragments,
            calls: out.calls,
            checkpoints,
            fragment_total: out.fragment_count as usize,
            fragment_logs: out.fragment_logs,
            finish: out.finish,
            done: out.done,
            provider_error: out.provider_error,
            ending,
            unterminated: out.unterminated,
            overflow: out.overflow,
            findings: findings.into_sorted(),
            strategies,
            complete: false,
            preview: None,
            options,
            chunk_total,
            event_total,
            body_total,
        }
    }

    /// The one verdict ([`crate::verdict`]): OK unless some finding has error severity. `check`'s
    /// Result line and exit code, `check --json`'s `ok`, `events` and the app's headline use it.
    pub fn verdict(&self) -> crate::verdict::Verdict {
        crate::verdict::judge(&self.calls, &self.findings)
    }

    /// No error-severity finding (the `check` exit code 0 condition).
    pub fn all_ok(&self) -> bool {
        self.verdict().ok()
    }

    /// Why [`Analysis::all_ok`] is false, one short phrase each (the CLI prints them on one line).
    pub fn problems(&self) -> Vec<String> {
        self.verdict().problems
    }

    /// The calls the client must execute (server tools left out), in stream order.
    pub fn client_calls(&self) -> impl Iterator<Item = &Call> {
        self.calls.iter().filter(|c| c.is_client_call())
    }

    /// The tools the provider ran itself, in stream order.
    pub fn server_tools(&self) -> impl Iterator<Item = &Call> {
        self.calls.iter().filter(|c| !c.is_client_call())
    }

    /// The event type name of an event.
    pub fn event_type(&self, event: &EventRecord) -> &str {
        self.event_types
            .get(event.type_id as usize)
            .map_or("?", String::as_str)
    }

    /// The raw bytes of a span of the body.
    pub fn bytes(&self, span: &Range<u64>) -> &[u8] {
        let s = (span.start as usize).min(self.body.len());
        let e = (span.end as usize).clamp(s, self.body.len());
        &self.body[s..e]
    }

    /// The text of a fragment (its slice of the call's arguments).
    pub fn fragment_text(&self, fragment: &FragmentRecord) -> &str {
        let args = self
            .calls
            .get(fragment.call as usize)
            .map_or("", |c| c.raw_arguments.as_str());
        args.get(fragment.args_range.start as usize..fragment.args_range.end as usize)
            .unwrap_or("")
    }

    /// The finish position's chunk, if the stream finished.
    pub fn finish_chunk(&self) -> Option<u32> {
        let f = self.finish.as_ref().map(|f| f.pos.chunk);
        match (f, self.done.map(|d| d.chunk)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Number of fragments that completed at or before chunk `cursor` (fragments are in stream order,
    /// so this is a binary search).
    pub fn fragments_at(&self, cursor: u32) -> usize {
        self.fragments.partition_point(|f| f.pos.chunk <= cursor)
    }

    /// Number of events completed at or before chunk `cursor`.
    pub fn events_at(&self, cursor: u32) -> usize {
        self.events.partition_point(|e| e.chunk <= cursor)
    }

    /// The state of call `call` at chunk `cursor`.
    pub fn call_state_at(&self, call: usize, cursor: u32) -> CallAtCursor<'_> {
        let Some(c) = self.calls.get(call) else {
            return CallAtCursor {
                fragments: &[],
                arguments: "",
                started: false,
                finished: false,
            };
        };
        let n = c.fragments.partition_point(|&no| {
            self.fragments
                .get(no as usize)
                .is_some_and(|f| f.pos.chunk <= cursor)
        });
        let end = if n == 0 {
            0
        } else {
            self.fragments[c.fragments[n - 1] as usize].args_range.end as usize
        };
        let finished = self.finish_chunk().is_some_and(|f| f <= cursor)
            || cursor + 1 >= self.chunks.len() as u32;
        CallAtCursor {
            fragments: &c.fragments[..n],
            arguments: c.raw_arguments.get(..end).unwrap_or(""),
            started: n > 0,
            finished,
        }
    }

    /// The body's length in bytes (also when the body was not kept: see [`Feed`]).
    pub fn body_len(&self) -> u64 {
        self.body_total
    }

    /// How many chunks (network reads, or a raw body's events) were fed: `chunks.len()`, also
    /// when their spans were not kept ([`Feed::counts_only`]).
    pub fn chunk_count(&self) -> usize {
        self.chunk_total
    }

    /// How many events were framed: `events.len()`, also when their records were not kept
    /// ([`Feed::counts_only`]).
    pub fn event_count(&self) -> usize {
        self.event_total
    }

    /// How many fragments the stream carried: `fragments.len()`, also when only each call's
    /// compact log was kept ([`Feed::counts_only`]).
    pub fn fragment_count(&self) -> usize {
        self.fragment_total
    }

    /// The records of `call`'s own fragments, in order: out of [`Analysis::fragments`], or out
    /// of the call's compact log when those were not kept ([`Feed::counts_only`]).
    pub fn call_records(&self, call: &Call) -> Vec<FragmentRecord> {
        self.call_own(call).iter().collect()
    }

    /// [`Analysis::call_records`] without collecting them: a call may have millions (a report
    /// goes through them one call, and one block of its log, at a time).
    pub fn call_own<'a>(&'a self, call: &'a Call) -> Own<'a> {
        match self.fragment_logs.get(call.position as usize) {
            Some(log) => Own::Log(log, call.position),
            None => Own::Numbered(&call.fragments, &self.fragments),
        }
    }

    /// The strategy result by kind.
    pub fn strategy(&self, strategy: Strategy) -> Option<&StrategyResult> {
        self.strategies
            .iter()
            .find(|r| r.report.strategy == strategy)
    }
}

/// The reads of a kept body (its spans), when the timing is real; `None` when the body was not
/// kept (a raw body read as it came, or a recording too large to hold, whose reads are read again).
pub(crate) fn body_reads<'a>(
    source: &SourceInfo,
    body: &'a [u8],
    chunks: &[ChunkSpan],
) -> Option<Vec<(&'a [u8], u64)>> {
    let body_kept = body.len() as u64 == chunks.last().map_or(0, |c| c.end);
    (source.timing_known && body_kept).then(|| {
        chunks
            .iter()
            .map(|c| (&body[c.start as usize..c.end as usize], c.t_micros))
            .collect()
    })
}

/// A character or a line split where one read ends and the next begins: each non-empty read is
/// judged by its last byte and the first byte of the next non-empty one (none after the last).
fn chunk_findings(reads: &dyn Reads, findings: &mut Findings) {
    // The last non-empty read so far, waiting for the next byte: its number, end and last byte.
    let mut open: Option<(u32, u64, u8)> = None;
    let (mut i, mut offset) = (0u32, 0u64);
    reads.each(&mut |bytes, _| {
        if let (Some(&next), Some((n, end, prev))) = (bytes.first(), open) {
            let at = Location {
                chunk: Some(n),
                offset: Some(end),
                ..Default::default()
            };
            // The byte after the boundary is a UTF-8 continuation byte: a character was split.
            if next & 0xC0 == 0x80 {
                findings.add(FindingKind::SplitUtf8, None, at, || {
                    format!("read {n} ends inside a UTF-8 character at byte {end}")
                });
            }
            // The boundary is not right after a line ending: a line was split.
            if prev != b'\n' && prev != b'\r' {
                findings.add(FindingKind::SplitLine, None, at, || {
                    format!("read {n} ends in the middle of a line at byte {end}")
                });
            }
        }
        offset += bytes.len() as u64;
        if let Some(&last) = bytes.last() {
            open = Some((i, offset, last));
        }
        i += 1;
    });
}

/// Binary frames: a read that ends inside a frame (split characters and lines mean nothing in a
/// binary body; a reader that takes each read as whole frames is what fails here).
fn frame_split_findings(events: &[EventRecord], chunks: &[ChunkSpan], findings: &mut Findings) {
    let mut e = events.iter().peekable();
    for (i, c) in chunks.iter().enumerate() {
        while e.next_if(|ev| ev.span.end <= c.end).is_some() {}
        let Some(ev) = e.peek() else { break };
        if ev.span.start < c.end && c.end < ev.span.end {
            let at = Location {
                chunk: Some(i as u32),
                offset: Some(c.end),
                ..Default::default()
            };
            findings.add(FindingKind::SplitFrame, None, at, || {
                format!(
                    "read {i} ends inside the frame at byte {} (at byte {})",
                    ev.span.start, c.end
                )
            });
        }
    }
}

/// The original arguments for a call, and where they come from.
fn original_for<'a>(call: &'a Call, truth: &'a [TruthCall]) -> Option<(&'a str, String)> {
    if let Some(t) = truth.get(call.position as usize) {
        return Some((t.arguments.as_str(), "ground truth (stub recording)".into()));
    }
    call.authoritative
        .as_deref()
        .map(|a| (a, "authoritative copy in the stream (.done event)".into()))
}

/// The three checkpoints of `call`, whose own fragment records are `own` (in order): one pass
/// over them.
fn checkpoints(call: &Call, own: Own<'_>, truth: &[TruthCall]) -> Checkpoints {
    let original = original_for(call, truth);
    // Fragments, those after the first with an id and with a name; fragments carrying text, and
    // the first of those not at its offset in the original.
    let (mut total, mut with_id, mut with_name) = (0usize, 0usize, 0usize);
    let (mut text_frags, mut bad) = (0usize, None);
    for f in own.iter() {
        if total > 0 {
            with_id += usize::from(f.id == Presence::Value);
            with_name += usize::from(f.name == Presence::Value);
        }
        total += 1;
        if f.has_args
            && let Some((orig, _)) = &original
        {
            text_frags += 1;
            let r = f.args_range.start as usize..f.args_range.end as usize;
            if bad.is_none() && orig.get(r.clone()) != call.raw_arguments.get(r) {
                bad = Some(f.no);
            }
        }
    }
    let (verbatim, contiguous) = match &original {
        None => {
            let na = || {
                Check::NotApplicable {
                detail: "no original to compare: the stream carries no full copy and the recording no ground truth".into(),
            }
            };
            (na(), na())
        }
        Some((orig, _)) => {
            let verbatim = if *orig == call.raw_arguments {
                Check::Pass {
                    detail: format!(
                        "reassembled {} ({}), identical to the original",
                        crate::text::plural(call.char_len(), "character"),
                        crate::text::plural(call.byte_len(), "byte")
                    )
                    .into(),
                }
            } else {
                let at = orig
                    .bytes()
                    .zip(call.raw_arguments.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(orig.len().min(call.raw_arguments.len()));
                Check::Fail {
                    detail: format!(
                        "reassembled {} vs original {}; first difference at byte {at}",
                        crate::text::plural(call.byte_len(), "byte"),
                        crate::text::plural(orig.len(), "byte")
                    )
                    .into(),
                }
            };
            let contiguous = match bad {
                None => Check::Pass {
                    detail: if text_frags == 1 {
                        "its one fragment found at its offset in the original".into()
                    } else {
                        format!(
                            "all {text_frags} fragments found in order at their offsets in the original"
                        )
                        .into()
                    },
                },
                Some(no) => Check::Fail {
                    detail: format!("fragment {no} is not at its offset in the original").into(),
                },
            };
            (verbatim, contiguous)
        }
    };
    let later = total.saturating_sub(1);
    let first_only = if total <= 1 {
        Check::Pass {
            detail: "single fragment".into(),
        }
    } else {
        if with_id == 0 && with_name == 0 {
            Check::Pass {
                detail: if later == 1 {
                    "the 1 continuation fragment carries no id and no name".into()
                } else {
                    format!("{later} continuation fragments carry no id and no name").into()
                },
            }
        } else {
            Check::Fail {
                detail: format!(
                    "{with_name} of {} {} the name, {with_id} the id (a provider quirk: the call is still right)",
                    crate::text::plural(later, "continuation fragment"),
                    if with_name == 1 { "repeats" } else { "repeat" }
                )
                .into(),
            }
        }
    };
    Checkpoints {
        verbatim,
        contiguous,
        first_only,
        original_source: original.map(|(_, s)| s),
    }
}

/// The findings about calls that describe the provider (info and warn). The ones that decide the
/// verdict are computed by the pipeline ([`crate::verdict::call_findings`]), where `export` sees
/// them too. `own` are the call's own fragment records, in order: one pass over them.
fn call_findings(call: &Call, own: Own<'_>, dialect: DialectKind, findings: &mut Findings) {
    let c = Some(call.position);
    let at_record = |f: &FragmentRecord| Location {
        fragment: Some(f.no),
        chunk: Some(f.pos.chunk),
        event: Some(f.pos.event),
        offset: None,
    };
    let mut records = own.iter();
    let first_frag = records.next();
    let first_at = first_frag.as_ref().map_or(Location::default(), at_record);
    // Fragments, and those that carried some text.
    let mut total = usize::from(first_frag.is_some());
    let text = |f: &FragmentRecord| f.has_args && f.args_range.end > f.args_range.start;
    let mut with_args = first_frag.as_ref().map_or(0, |f| usize::from(text(f)));
    for f in records {
        total += 1;
        with_args += usize::from(text(&f));
        let no = f.no;
        if f.name == Presence::Value {
            findings.add(FindingKind::RepeatedName, c, at_record(&f), || {
                format!("name \"{}\" repeated in fragment {no}", call.name)
            });
        }
        if f.id == Presence::Value {
            findings.add(FindingKind::RepeatedId, c, at_record(&f), || {
                format!("id repeated in fragment {no}")
            });
        }
        // Only the fields that are empty or null: a repeated real id or name is reported
        // above as what it is.
        let empties: Vec<String> = [("id", f.id), ("name", f.name)]
            .into_iter()
            .filter_map(|(field, p)| match p {
                Presence::Empty => Some(format!("\"{field}\": \"\"")),
                Presence::Null => Some(format!("\"{field}\": null")),
                Presence::Absent | Presence::Value => None,
            })
            .collect();
        if !empties.is_empty() {
            findings.add(
                FindingKind::EmptyFieldContinuation,
                c,
                at_record(&f),
                || {
                    format!(
                        "fragment {no} carries {} (taken as absent)",
                        empties.join(" and ")
                    )
                },
            );
        }
    }
    if call.object_arguments && dialect == DialectKind::OpenAiChat {
        findings.add(FindingKind::ObjectArguments, c, first_at, || {
            "arguments arrived as a JSON object".into()
        });
    }
    if with_args == 1
        && total <= 2
        && matches!(call.parsed, Parsed::Ok(_))
        && !call.empty_arguments
        && dialect == DialectKind::OpenAiChat
    {
        findings.add(FindingKind::WholeCallInOneChunk, c, first_at, || {
            "id, name and complete arguments in one fragment".into()
        });
    }
    if call.empty_arguments {
        findings.add(FindingKind::EmptyArguments, c, first_at, || {
            format!(
                "arguments {} taken as {{}}",
                crate::text::quoted(&call.raw_arguments)
            )
        });
    }
}

/// Interleaving: a call's fragment after another call's fragment that came after its own (counted
/// as the fragments arrive, [`crate::accumulate::Interleaving`]).
fn interleaving_finding(out: &PipelineOutput, findings: &mut Findings) {
    let i = out.interleaving;
    if let Some((no, call, chunk)) = i.first {
        findings.add_count(
            FindingKind::InterleavedCalls,
            None,
            Location {
                fragment: Some(no),
                chunk: Some(chunk),
                ..Default::default()
            },
            i.count,
            || format!("fragment {no} returns to call {call} after another call's fragments"),
        );
    }
}

/// The strategies' reports with how they agree with the correct `calls`: the per-read ones
/// re-frame the recorded `reads`, when they are real ([`body_reads`], or read again).
pub(crate) fn strategy_results(
    strategies: Strategies,
    reads: Option<&dyn Reads>,
    dialect: DialectKind,
    framing: Framing,
    calls: &[Call],
) -> Vec<StrategyResult> {
    let reports = strategies.reports_sharing(reads, dialect, framing, calls);
    reports
        .into_iter()
        .map(|report| {
            let agreement = agreement(&report, calls);
            StrategyResult { report, agreement }
        })
        .collect()
}

/// A strategy's call is the accumulator's: the same value, or — where the stream itself is
/// broken and the accumulator's parse fails — the very same arguments text (which fails the same
/// way): the strategy did nothing wrong there.
fn same_value(got: &Parsed, got_raw: &str, want: &Call) -> bool {
    match (got, &want.parsed) {
        (Parsed::Ok(x), Parsed::Ok(y)) => x == y,
        (Parsed::Err { .. }, Parsed::Err { .. }) => got_raw == want.raw_arguments,
        _ => false,
    }
}

fn agreement(report: &Report, correct: &[Call]) -> Agreement {
    let mut differences = Vec::new();
    if let Some(why) = &report.not_applicable {
        return Agreement {
            matches_correct: false,
            differences: vec![format!("not run: {why}")],
        };
    }
    let calls: &[NaiveCall] = &report.calls;
    if report.strategy == Strategy::PerFragment {
        let failed = report.steps.len() - report.steps_parsed();
        if failed > 0 {
            differences.push(format!(
                "{failed} of {} {} to parse alone",
                crate::text::plural(report.steps.len(), "fragment"),
                if failed == 1 { "fails" } else { "fail" }
            ));
        }
    }
    if report.strategy == Strategy::ParseWhenValid {
        let failed = report.steps.len() - report.steps_parsed();
        if failed > 0 {
            differences.push(if failed == 1 {
                "1 re-parse of an incomplete buffer reported as an error".to_owned()
            } else {
                format!("{failed} re-parses of incomplete buffers reported as errors")
            });
        }
    }
    if calls.len() != correct.len() {
        differences.push(format!(
            "{} instead of {}",
            crate::text::plural(calls.len(), "call"),
            correct.len()
        ));
    }
    for (i, (n, c)) in calls.iter().zip(correct).enumerate() {
        let got_value = if n.raw_arguments.trim().is_empty() {
            Parsed::ok(serde_json::json!({}))
        } else {
            n.parsed.clone()
        };
        if report.strategy != Strategy::PerFragment && report.strategy != Strategy::ConcatAll {
            if n.name != c.name {
                differences.push(format!(
                    "call {i}: name \"{}\" instead of \"{}\"",
                    n.name, c.name
                ));
            }
            if n.id != c.id.clone().unwrap_or_default() {
                differences.push(format!(
                    "call {i}: id \"{}\" instead of \"{}\"",
                    n.id,
                    c.id.clone().unwrap_or_default()
                ));
            }
        }
        if !same_value(&got_value, &n.raw_arguments, c) {
            match &got_value {
                Parsed::Err { error, .. } => differences.push(format!("call {i}: {error}")),
                Parsed::Ok(v) => differences.push(format!(
                    "call {i}: arguments {} instead of {}",
                    crate::text::truncate(&v.to_string(), 80),
                    crate::text::truncate(
                        // Written from the value without keeping it (see `ParsedValue::get`).
                        &match &c.parsed {
                            Parsed::Ok(v) => v.to_string(),
                            Parsed::Err { .. } => "(unparsable)".into(),
                        },
                        80
                    )
                )),
            }
        }
    }
    Agreement {
        matches_correct: differences.is_empty(),
        differences,
    }
}

// --- the typewriter preview's summaries (computed by `crate::preview`, carried here)

/// The first preview of a call that the final result contradicts.
#[derive(Clone, Debug, PartialEq)]
pub struct Contradiction {
    /// The fragment (stream-wide number) after which the preview was shown.
    pub fragment: u32,
    /// JSON Pointer (RFC 6901) to the contradicted value; `""` is the whole arguments value.
    pub path: String,
    /// The value the preview showed there.
    pub shown: serde_json::Value,
    /// The final value there (the parent's final object when a shown key was removed).
    pub final_value: serde_json::Value,
}

/// One call's preview summary (`check`'s Preview section, `check --json`'s `preview`).
#[derive(Clone, Debug, PartialEq)]
pub struct CallPreview {
    /// The call's position in stream order.
    pub call: u32,
    /// Previews shown: one per fragment of the call.
    pub previews: u64,
    /// Previews the final result does not contradict (0 when not checked).
    pub stable: u64,
    /// Previews showing something the final result contradicts.
    pub contradicted: u64,
    pub first_contradiction: Option<Contradiction>,
    /// The final arguments parsed, so the previews were checked against them.
    pub checked: bool,
}
