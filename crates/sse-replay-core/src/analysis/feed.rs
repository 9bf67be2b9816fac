//! An analysis being fed, chunk by chunk: [`Feed`]. [`Analysis::from_recording`] feeds it a
//! recording's chunks; `check` feeds it a raw body's events straight from the file
//! ([`crate::probe::Probe::analyse`]) without keeping the body, so a 227 MB stream is never
//! held. The naive strategies run beside the correct pass on a worker thread
//! ([`StrategyFeed`]). [`pipeline_for`] sets up the correct pipeline for both this and the app's
//! staged analysis ([`crate::staged`]).

use super::{Analysis, ChunkSpan, SourceInfo};
use crate::dialect::DialectKind;
use crate::naive::StrategyFeed;
use crate::pipeline::{Options, Pipeline};
use crate::recording::Recording;
use crate::signal::SignalObserver;
use crate::sse::Overflow;

/// The correct pipeline for `rec`, watched by `observer`, and the options it runs with: detail
/// records on, the recording's dialect when none is forced, framing stopped at the first line or
/// event longer than `max_event_bytes`, and the recording's ground truth to check against.
pub(crate) fn pipeline_for<O: SignalObserver>(
    rec: &Recording,
    opts: Options,
    max_event_bytes: u64,
    observer: O,
) -> (Pipeline<O>, Options) {
    let mut opts = Options {
        detail: true,
        ..opts
    };
    if opts.dialect.is_none() {
        opts.dialect = DialectKind::from_name(&rec.meta.dialect);
    }
    let mut pipeline = Pipeline::observed(opts, observer).with_max_event_bytes(max_event_bytes);
    pipeline.set_truth(rec.truth.iter().map(|t| t.arguments.clone()).collect());
    (pipeline, opts)
}

/// An analysis being fed. See the module documentation.
pub struct Feed {
    pipeline: Pipeline<StrategyFeed>,
    /// The body, when kept (the app's raw view, the per-read strategies, a complete response's
    /// detection need it); `None`: only its chunk boundaries are recorded.
    body: Option<Vec<u8>>,
    chunks: Vec<ChunkSpan>,
    /// Bytes fed so far.
    offset: u64,
    dialect: Option<DialectKind>,
}

impl Feed {
    /// Start analysing `rec` (its metadata and ground truth; its chunks are fed with
    /// [`Feed::feed`]). `keep_body`: keep the body, with room for this many bytes; `None` keeps
    /// only the chunk boundaries — for a raw body (no read timing, so no per-read strategy)
    /// that is known not to be one complete JSON document. Framing stops at the first line or
    /// event longer than `max_event_bytes` ([`Feed::overflow`]).
    pub fn new(
        rec: &Recording,
        opts: Options,
        max_event_bytes: u64,
        keep_body: Option<u64>,
    ) -> Self {
        let (pipeline, opts) = pipeline_for(rec, opts, max_event_bytes, StrategyFeed::spawn());
        Self {
            pipeline,
            body: keep_body.map(|n| Vec::with_capacity(usize::try_from(n).unwrap_or(0))),
            chunks: Vec::new(),
            offset: 0,
            dialect: opts.dialect,
        }
    }

    /// One chunk (network read, or a raw body's event) and its arrival time.
    pub fn feed(&mut self, bytes: &[u8], t_micros: u64) {
        let start = self.offset;
        self.offset += bytes.len() as u64;
        if let Some(body) = &mut self.body {
            body.extend_from_slice(bytes);
        }
        self.chunks.push(ChunkSpan {
            start,
            end: self.offset,
            t_micros,
        });
        self.pipeline.feed(bytes, t_micros);
    }

    /// The line or event that went past the limit, if one did (later chunks are ignored).
    pub fn overflow(&self) -> Option<Overflow> {
        self.pipeline.overflow()
    }

    /// End of stream: the analysis of `rec` (the recording given to [`Feed::new`]).
    pub fn finish(self, rec: &Recording, source: SourceInfo) -> Analysis {
        let Feed {
            pipeline,
            body,
            chunks,
            dialect,
            ..
        } = self;
        let (out, feed) = pipeline.finish_observed();
        build(
            out,
            feed.into_strategies(),
            rec,
            source,
            body,
            chunks,
            dialect,
        )
    }
}

/// The analysis from the pipeline's output: a complete response's when the kept body is one.
pub(crate) fn build(
    out: crate::pipeline::PipelineOutput,
    strategies: crate::naive::Strategies,
    rec: &Recording,
    source: SourceInfo,
    body: Option<Vec<u8>>,
    chunks: Vec<ChunkSpan>,
    dialect: Option<DialectKind>,
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
        return Analysis::build(out, strategies, rec, source, Vec::new(), chunks);
    };
    if out.overflow.is_none()
        && let Some(whole) = crate::complete::outcome(&body, reads, t_last, dialect, &truth)
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
        return Analysis::build_complete(whole, strategies, rec, source, body, chunks);
    }
    Analysis::build(out, strategies, rec, source, body, chunks)
}
