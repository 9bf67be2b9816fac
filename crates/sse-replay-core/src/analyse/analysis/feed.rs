//! The one feed loop: an analysis being fed, chunk by chunk ([`Feed`]). Every analysis is made
//! by it: [`Analysis::from_recording`] feeds it a recording's chunks; `check` feeds it a raw
//! body's events straight from the file ([`crate::probe::Probe::analyse`]) without keeping the
//! body, so a 227 MB stream is never held; the app's first stages ([`crate::staged`]) feed it
//! without the naive strategies and with a progress hook that can cancel.
//!
//! What watches the correct pass is the feed's observer ([`FeedObserver`]): the naive strategies
//! on a worker thread ([`StrategyFeed`], their results in the analysis), or nobody
//! ([`NoObserver`]: the strategies are left for a second stage, [`Analysis::strategies`] empty).

use super::{Analysis, ChunkSpan, SourceInfo};
use crate::dialect::DialectKind;
use crate::fact::{FactObserver, NoObserver};
use crate::limits::EventLimit;
use crate::naive::{Reads, Strategies, StrategyFeed};
use crate::pipeline::{Options, Pipeline};
use crate::recording::Recording;
use crate::sse::Overflow;

/// The observer of a [`Feed`]'s correct pass, and what it gives the analysis at the end.
pub trait FeedObserver: FactObserver {
    /// The naive strategies, fed, for the analysis; `None` leaves [`Analysis::strategies`] empty
    /// (a first stage: they are computed later from the analysis's body).
    fn into_strategies(self) -> Option<Strategies>;
}

impl FeedObserver for StrategyFeed {
    fn into_strategies(self) -> Option<Strategies> {
        Some(StrategyFeed::into_strategies(self))
    }
}

impl FeedObserver for NoObserver {
    fn into_strategies(self) -> Option<Strategies> {
        None
    }
}

/// The options the correct pass runs with for `rec`: detail records on, the recording's dialect
/// when none is forced. The app's second stage feeds the strategies with the same options
/// ([`Analysis::options`]), so they see the same facts.
fn run_options(rec: &Recording, opts: Options) -> Options {
    let mut opts = Options {
        detail: true,
        ..opts
    };
    if opts.dialect.is_none() {
        opts.dialect = DialectKind::from_name(&rec.meta.dialect);
    }
    opts
}

/// Report progress about this often (bytes), so a hook costs nothing on small reads.
const PROGRESS_EVERY: u64 = 1 << 20;

/// A progress hook: told (bytes done, bytes in all) every [`PROGRESS_EVERY`] bytes and at the
/// end; `false` asks to stop. The feed and the app's second stage report through it.
pub(crate) struct Progress<F> {
    f: F,
    total: u64,
    done: u64,
    next: u64,
}

impl<F: FnMut(u64, u64) -> bool> Progress<F> {
    pub(crate) fn new(f: F, total: u64) -> Self {
        Self {
            f,
            total,
            done: 0,
            next: PROGRESS_EVERY,
        }
    }

    /// `n` more bytes done; `false` when the hook asks to stop.
    pub(crate) fn add(&mut self, n: u64) -> bool {
        self.done += n;
        if self.done >= self.next {
            self.next = self.done + PROGRESS_EVERY;
            return (self.f)(self.done, self.total);
        }
        true
    }

    /// All done; `false` when the hook asks to stop.
    pub(crate) fn end(&mut self) -> bool {
        (self.f)(self.total, self.total)
    }
}

/// Where the body goes.
enum Body {
    /// Only its chunk boundaries are recorded.
    Dropped,
    /// Copied in as it is fed.
    Kept(Vec<u8>),
    /// Already in one piece; spans of it are fed ([`Feed::feed_span`]).
    Given(Vec<u8>),
}

/// The progress hook's default: never asks to stop.
pub type NoProgress = fn(u64, u64) -> bool;

/// An analysis being fed. See the module documentation.
pub struct Feed<O: FeedObserver = StrategyFeed, P: FnMut(u64, u64) -> bool = NoProgress> {
    pipeline: Pipeline<O>,
    /// The options the pipeline runs with.
    opts: Options,
    body: Body,
    chunks: Vec<ChunkSpan>,
    /// Chunks fed so far (`chunks.len()` while their spans are kept).
    fed_chunks: u64,
    /// Each chunk's span is kept in `chunks` (see [`Feed::counts_only`]).
    spans: bool,
    /// Bytes fed so far.
    offset: u64,
    progress: Progress<P>,
}

impl Feed {
    /// Start analysing `rec` (its metadata and ground truth; its chunks are fed with
    /// [`Feed::feed`]) with the naive strategies beside the correct pass, on a worker thread.
    pub fn new(rec: &Recording, opts: Options, max_event_bytes: EventLimit) -> Self {
        Self::observed(rec, opts, max_event_bytes, StrategyFeed::spawn())
    }

    /// [`Feed::new`] with the naive strategies fed on this thread: for a caller that already
    /// runs one analysis per core (`scan`), where a thread per analysis would only add its
    /// start-up and compete for the same cores.
    pub fn new_inline(rec: &Recording, opts: Options, max_event_bytes: EventLimit) -> Self {
        Self::observed(rec, opts, max_event_bytes, StrategyFeed::inline())
    }
}

impl<O: FeedObserver> Feed<O> {
    /// Start analysing `rec`, the correct pass watched by `observer`. The body is not kept (see
    /// [`Feed::keep_body`]); framing stops at the first line or event longer than
    /// `max_event_bytes` ([`Feed::overflow`]), and later chunks are ignored.
    pub fn observed(
        rec: &Recording,
        opts: Options,
        max_event_bytes: EventLimit,
        observer: O,
    ) -> Self {
        let opts = run_options(rec, opts);
        let mut pipeline = Pipeline::observed(opts, observer).with_max_event_bytes(max_event_bytes);
        pipeline.set_truth(rec.truth.iter().map(|t| t.arguments.clone()).collect());
        Self {
            pipeline,
            opts,
            body: Body::Dropped,
            chunks: Vec::new(),
            fed_chunks: 0,
            spans: true,
            offset: 0,
            progress: Progress::new(|_, _| true, 0),
        }
    }
}

impl<O: FeedObserver, P: FnMut(u64, u64) -> bool> Feed<O, P> {
    /// Keep the body, with room for `capacity` bytes: the app's raw view, the per-read strategies
    /// and a complete response's detection need it. Without it only the chunk boundaries are
    /// recorded — for a raw body (no read timing, so no per-read strategy) that is known not to be
    /// one complete JSON document.
    pub fn keep_body(mut self, capacity: u64) -> Self {
        self.body = Body::Kept(Vec::with_capacity(usize::try_from(capacity).unwrap_or(0)));
        self
    }

    /// Keep no record per chunk or per event, only their numbers: the analysis's
    /// [`Analysis::chunks`] and [`Analysis::events`] stay empty, [`Analysis::chunk_count`],
    /// [`Analysis::event_count`] and [`Analysis::body_len`] say how many there were; and each
    /// call's fragments only compactly ([`Analysis::fragments`] stays empty,
    /// [`Analysis::call_records`] gives a call's). For a report
    /// that needs no more (`check` on a raw body, with no read timing), so its memory does not
    /// grow with the events of a large body; not with a kept body (a complete response is read
    /// from its spans). With real read timing, only where the reads are gone through again at the
    /// end ([`Feed::finish_replaying`]: the per-read strategies and the findings at read
    /// boundaries need them) and the body is not binary frames (the findings of reads that end
    /// inside a frame need every read's and every event's span).
    pub fn counts_only(mut self) -> Self {
        self.spans = false;
        self.pipeline = self.pipeline.without_event_records().compact_fragments();
        self
    }

    /// The body is already in one piece: it is moved into the analysis, never copied, and spans of
    /// it are fed with [`Feed::feed_span`].
    pub fn over_body(mut self, body: Vec<u8>) -> Self {
        self.body = Body::Given(body);
        self
    }

    /// Tell `progress` the bytes fed and `total` every MiB and at the end ([`Feed::end`]); it
    /// cancels by returning `false`.
    pub fn with_progress<Q: FnMut(u64, u64) -> bool>(self, total: u64, progress: Q) -> Feed<O, Q> {
        Feed {
            pipeline: self.pipeline,
            opts: self.opts,
            body: self.body,
            chunks: self.chunks,
            fed_chunks: self.fed_chunks,
            spans: self.spans,
            offset: self.offset,
            progress: Progress::new(progress, total),
        }
    }

    /// One chunk (a network read, or a raw body's event) and its arrival time. `false` when the
    /// progress hook asked to stop. After a line or event over the limit, chunks are ignored.
    pub fn feed(&mut self, bytes: &[u8], t_micros: u64) -> bool {
        if self.pipeline.overflow().is_some() {
            return true;
        }
        if let Body::Kept(body) = &mut self.body {
            body.extend_from_slice(bytes);
        }
        self.fed(bytes.len() as u64, t_micros);
        self.pipeline.feed(bytes, t_micros);
        self.progress.add(bytes.len() as u64)
    }

    /// The next chunk of a body given with [`Feed::over_body`]: its `end` (the chunk starts where
    /// the last one ended). `false` when the progress hook asked to stop.
    pub fn feed_span(&mut self, end: u64, t_micros: u64) -> bool {
        if self.pipeline.overflow().is_some() {
            return true;
        }
        let Body::Given(body) = &self.body else {
            return true;
        };
        let start = self.offset;
        let bytes = body.get(start as usize..end as usize).unwrap_or(&[]);
        self.pipeline.feed(bytes, t_micros);
        let n = end.saturating_sub(start);
        self.fed(n, t_micros);
        self.progress.add(n)
    }

    fn fed(&mut self, n: u64, t_micros: u64) {
        let start = self.offset;
        self.offset += n;
        self.fed_chunks += 1;
        if self.spans {
            self.chunks.push(ChunkSpan {
                start,
                end: self.offset,
                t_micros,
            });
        }
    }

    /// Every chunk was fed: tell the progress hook it is all done. `false` when it asked to stop
    /// (then the analysis is not worth finishing).
    pub fn end(&mut self) -> bool {
        self.progress.end()
    }

    /// The line or event that went past the limit, if one did (later chunks are ignored).
    pub fn overflow(&self) -> Option<Overflow> {
        self.pipeline.overflow()
    }

    /// The options the correct pass runs with (the dialect resolved).
    pub fn options(&self) -> Options {
        self.opts
    }

    /// End of stream: the analysis of `rec` (the recording given when the feed started).
    pub fn finish(self, rec: &Recording, source: SourceInfo) -> Analysis {
        self.finish_with(rec, source, None)
    }

    /// [`Feed::finish`] for reads with real timing whose body was not kept (a recording too
    /// large to hold, read line by line): what needs the reads at the end (the per-read
    /// strategies, the findings at read boundaries) goes through them again with `replay`.
    pub fn finish_replaying(
        self,
        rec: &Recording,
        source: SourceInfo,
        replay: &dyn Reads,
    ) -> Analysis {
        self.finish_with(rec, source, Some(replay))
    }

    fn finish_with(
        self,
        rec: &Recording,
        source: SourceInfo,
        replay: Option<&dyn Reads>,
    ) -> Analysis {
        let Feed {
            pipeline,
            opts,
            body,
            chunks,
            fed_chunks,
            spans,
            offset,
            ..
        } = self;
        let (out, observer) = pipeline.finish_observed();
        let (strategies, later) = match observer.into_strategies() {
            Some(s) => (s, false),
            None => (Strategies::new(), true),
        };
        let body = match body {
            Body::Dropped => None,
            Body::Kept(b) | Body::Given(b) => Some(b),
        };
        let counted = (!spans).then_some(Counted {
            chunks: fed_chunks,
            bytes: offset,
        });
        let mut a = build(
            out, strategies, rec, source, body, chunks, counted, replay, opts,
        );
        if later {
            // Unfed strategies report nothing: their (empty) results are dropped, not shown as
            // final.
            a.strategies.clear();
        }
        a
    }
}

/// How many chunks and bytes were fed, when their spans were not kept ([`Feed::counts_only`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Counted {
    pub chunks: u64,
    pub bytes: u64,
}

/// The analysis from the pipeline's output: a complete response's when the kept body is one.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one feed, handed over once"
)]
fn build(
    out: crate::pipeline::PipelineOutput,
    strategies: Strategies,
    rec: &Recording,
    source: SourceInfo,
    body: Option<Vec<u8>>,
    chunks: Vec<ChunkSpan>,
    counted: Option<Counted>,
    replay: Option<&dyn Reads>,
    opts: Options,
) -> Analysis {
    let t_last = chunks.last().map_or(0, |c| c.t_micros);
    let truth: Vec<String> = rec.truth.iter().map(|t| t.arguments.clone()).collect();
    // A raw body has no read boundaries: a complete response is then one chunk.
    let reads = if source.timing_known {
        chunks.len() as u32
    } else {
        1
    };
    let Some(body) = body else {
        return Analysis::build(
            out,
            strategies,
            rec,
            source,
            Vec::new(),
            chunks,
            counted,
            replay,
            opts,
        );
    };
    if out.overflow.is_none()
        && let Some(whole) = crate::complete::outcome(&body, reads, t_last, opts.dialect, &truth)
    {
        let chunks = if source.timing_known {
            chunks
        } else {
            vec![ChunkSpan {
                start: 0,
                end: body.len() as u64,
                t_micros: 0,
            }]
        };
        return Analysis::build_complete(whole, strategies, rec, source, body, chunks, opts);
    }
    Analysis::build(out, strategies, rec, source, body, chunks, None, None, opts)
}
