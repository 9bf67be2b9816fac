//! The analysis in two stages, for the app: first what the first frame needs (the recording, the
//! correct accumulator, the findings: [`first_stage`], [`first_stage_body`]), then, on a worker,
//! what can come later ([`second_stage`]: the naive strategies with their verdicts, and the
//! per-call preview summaries with their `preview-contradiction` findings). Both stages together
//! give what [`Analysis::from_recording_owned`] gives in one go (the tests prove it); `check`
//! still uses that.
//!
//! The second stage re-feeds the analysis's body, read by read, through a lean pipeline observed
//! by [`Strategies`] — the same signals in the same order as the first pass, so the same reports.
//! Both stages take a `progress` callback (bytes done, bytes in all) that cancels by returning
//! `false`; a cancelled stage returns `None`.

use crate::analysis::{Analysis, CallPreview, ChunkSpan, SourceInfo};
use crate::analysis::{StrategyResult, build_analysis, strategy_results};
use crate::dialect::DialectKind;
use crate::findings::Finding;
use crate::input::{self, InputError};
use crate::naive::Strategies;
use crate::pipeline::{Options, Pipeline};
use crate::recording::Recording;

/// Report progress about this often (bytes), so a callback costs nothing on small reads.
const PROGRESS_EVERY: u64 = 1 << 20;

/// Calls `progress` every [`PROGRESS_EVERY`] bytes and at the end; `false` = stop.
struct Progress<F> {
    f: F,
    total: u64,
    done: u64,
    next: u64,
}

impl<F: FnMut(u64, u64) -> bool> Progress<F> {
    fn new(f: F, total: u64) -> Self {
        Self {
            f,
            total,
            done: 0,
            next: PROGRESS_EVERY,
        }
    }

    /// `n` more bytes done; `false` when the callback asks to stop.
    fn add(&mut self, n: u64) -> bool {
        self.done += n;
        if self.done >= self.next {
            self.next = self.done + PROGRESS_EVERY;
            return (self.f)(self.done, self.total);
        }
        true
    }

    fn end(&mut self) -> bool {
        (self.f)(self.total, self.total)
    }
}

/// The correct pipeline alone (no strategy observer), as a first stage runs it, and the options
/// it runs with (as a one-go analysis's: [`crate::analysis::pipeline_for`]).
fn start(rec: &Recording, opts: Options, max_event_bytes: u64) -> (Pipeline, Options) {
    crate::analysis::pipeline_for(rec, opts, max_event_bytes, crate::signal::NoObserver)
}

/// The analysis once every read of `body` (at `chunks`) was fed to `p`, its strategies left out.
fn conclude(
    p: Pipeline,
    opts: Options,
    rec: &Recording,
    source: SourceInfo,
    body: Vec<u8>,
    chunks: Vec<ChunkSpan>,
) -> Analysis {
    let out = p.finish();
    // Unfed strategies report nothing: their (empty) results are dropped, not shown as final.
    let mut a = build_analysis(
        out,
        Strategies::new(),
        rec,
        source,
        Some(body),
        chunks,
        opts.dialect,
    );
    a.strategies.clear();
    a
}

/// The first stage of a recording: the analysis with [`Analysis::strategies`] empty and no
/// previews. Each chunk's bytes are freed once copied into the body (held once). `None` when
/// `progress` cancelled it.
pub fn first_stage(
    mut rec: Recording,
    source: SourceInfo,
    opts: Options,
    max_event_bytes: u64,
    progress: impl FnMut(u64, u64) -> bool,
) -> Option<Analysis> {
    let body_len = rec.body_len();
    let rec_chunks = std::mem::take(&mut rec.chunks);
    let mut progress = Progress::new(progress, body_len);
    let (mut p, opts) = start(&rec, opts, max_event_bytes);
    let mut body = Vec::with_capacity(body_len as usize);
    let mut chunks = Vec::with_capacity(rec_chunks.len());
    for c in rec_chunks {
        if p.overflow().is_some() {
            break;
        }
        let start = body.len() as u64;
        body.extend_from_slice(&c.bytes);
        chunks.push(ChunkSpan {
            start,
            end: body.len() as u64,
            t_micros: c.t_micros,
        });
        p.feed(&c.bytes, c.t_micros);
        if !progress.add(c.bytes.len() as u64) {
            return None;
        }
    }
    if !progress.end() {
        return None;
    }
    Some(conclude(p, opts, &rec, source, body, chunks))
}

/// [`first_stage`] of a body already in one piece, read at `chunks` (a raw body cut per event,
/// see [`read_raw_body`]): the body is moved into the analysis, never copied.
/// `rec` gives the metadata (its chunks are ignored).
pub fn first_stage_body(
    rec: &Recording,
    body: Vec<u8>,
    mut chunks: Vec<ChunkSpan>,
    source: SourceInfo,
    opts: Options,
    max_event_bytes: u64,
    progress: impl FnMut(u64, u64) -> bool,
) -> Option<Analysis> {
    let mut progress = Progress::new(progress, body.len() as u64);
    let (mut p, opts) = start(rec, opts, max_event_bytes);
    let mut fed = 0;
    for c in &chunks {
        if p.overflow().is_some() {
            break;
        }
        let bytes = body.get(c.start as usize..c.end as usize).unwrap_or(&[]);
        p.feed(bytes, c.t_micros);
        fed += 1;
        if !progress.add(bytes.len() as u64) {
            return None;
        }
    }
    chunks.truncate(fed);
    if !progress.end() {
        return None;
    }
    Some(conclude(p, opts, rec, source, body, chunks))
}

/// A raw body read whole: one buffer and its chunk spans (one per event, as
/// [`crate::input::raw_to_recording`] cuts it), instead of one allocation per event.
#[derive(Debug)]
pub struct RawBody {
    /// The metadata a raw body's recording has (no chunks).
    pub meta: Recording,
    pub body: Vec<u8>,
    pub chunks: Vec<ChunkSpan>,
}

/// Read a regular file that holds a raw body (SSE or JSON lines) into one buffer, cut per event
/// ([`input::read_raw_events`]). `Ok(None)` when it is not one (a recording, or not a regular
/// file): open it the usual way. Stops at the first line or event longer than `max_event_bytes`
/// ([`InputError::EventTooLarge`]); `progress` (bytes read, file size) cancels by returning
/// `false` ([`InputError::Cancelled`]).
pub fn read_raw_body(
    path: &std::path::Path,
    max_event_bytes: u64,
    progress: impl FnMut(u64, u64) -> bool,
) -> Result<Option<RawBody>, InputError> {
    // Room for the whole file at once: growing by doubling would peak at twice the body.
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let mut body = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    let mut chunks = Vec::new();
    let limits = input::ReadLimits::events(max_event_bytes);
    let meta = input::read_raw_events(path, limits, true, progress, |event| {
        let start = body.len() as u64;
        body.extend_from_slice(event);
        chunks.push(ChunkSpan {
            start,
            end: body.len() as u64,
            t_micros: 0,
        });
    })?;
    Ok(meta.map(|meta| RawBody { meta, body, chunks }))
}

/// What the second stage adds to an analysis ([`Later::apply`]).
#[derive(Debug, Default)]
pub struct Later {
    /// The naive strategies' results, in [`crate::naive::Strategy::ALL`] order (empty for a
    /// complete response, as in a one-go analysis).
    pub strategies: Vec<StrategyResult>,
    /// Per-call preview summaries ([`Analysis::preview`]).
    pub preview: Vec<CallPreview>,
    /// The `preview-contradiction` findings for them.
    pub preview_findings: Vec<Finding>,
}

impl Later {
    /// Put the second stage into `a`: afterwards `a` is what [`Analysis::from_recording_owned`]
    /// followed by [`Analysis::compute_previews`] gives.
    pub fn apply(self, a: &mut Analysis) {
        a.strategies = self.strategies;
        if !self.preview_findings.is_empty() {
            a.findings.extend(self.preview_findings);
            crate::findings::sort(&mut a.findings);
        }
        a.preview = Some(self.preview);
    }
}

/// The naive strategies of a first-stage analysis `a`, analysed with `opts` (the options its
/// first stage had). `None` when cancelled.
pub fn strategies(
    a: &Analysis,
    opts: Options,
    progress: impl FnMut(u64, u64) -> bool,
) -> Option<Vec<StrategyResult>> {
    if a.complete {
        return Some(Vec::new());
    }
    let mut progress = Progress::new(progress, a.body.len() as u64);
    let mut opts = Options {
        detail: false,
        ..opts
    };
    if opts.dialect.is_none() {
        opts.dialect = DialectKind::from_name(&a.meta.dialect);
    }
    let mut p = Pipeline::observed(opts, Strategies::new());
    for c in &a.chunks {
        let bytes = a.bytes(&(c.start..c.end));
        p.feed(bytes, c.t_micros);
        if !progress.add(bytes.len() as u64) {
            return None;
        }
    }
    let (_, observed) = p.finish_observed();
    let results = strategy_results(
        observed, &a.source, &a.body, &a.chunks, a.dialect, a.framing, &a.calls,
    );
    progress.end().then_some(results)
}

/// Every call's preview summary and the findings for those with contradictions. `None` when
/// `cancelled` returned `true` (asked between calls).
pub fn previews(
    a: &Analysis,
    mut cancelled: impl FnMut() -> bool,
) -> Option<(Vec<CallPreview>, Vec<Finding>)> {
    let mut list = Vec::with_capacity(a.calls.len());
    for c in &a.calls {
        if cancelled() {
            return None;
        }
        list.push(crate::preview::summarize(a, c));
    }
    let found = list
        .iter()
        .filter_map(|p| crate::preview::finding(p, a))
        .collect();
    Some((list, found))
}

/// The whole second stage: the strategies, then the previews, on the calling thread (one
/// background thread leaves the other core to the UI). `progress` is told the strategies'
/// progress (the longer part on big recordings); `cancelled` is asked between calls of the
/// previews.
pub fn second_stage(
    a: &Analysis,
    opts: Options,
    progress: impl FnMut(u64, u64) -> bool,
    cancelled: impl Fn() -> bool,
) -> Option<Later> {
    let strategies = strategies(a, opts, progress)?;
    let (preview, preview_findings) = previews(a, cancelled)?;
    Some(Later {
        strategies,
        preview,
        preview_findings,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::analysis::SourceKind;

    fn source(rec: &Recording) -> SourceInfo {
        SourceInfo {
            name: "t".into(),
            kind: SourceKind::Recording,
            timing_known: rec.meta.timing_known,
        }
    }

    fn files() -> Vec<std::path::PathBuf> {
        let root = crate::repo_root();
        let mut out = Vec::new();
        for dir in ["recordings", "tests/data/fixtures", "tests/data/complete"] {
            for e in std::fs::read_dir(root.join(dir)).unwrap() {
                let p = e.unwrap().path();
                if p.extension()
                    .is_some_and(|x| x == "ron" || x == "sse" || x == "jsonl" || x == "json")
                    && !p.ends_with("expected.json")
                {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    fn recordings() -> Vec<Recording> {
        files()
            .iter()
            .filter_map(|p| {
                match crate::open::open(p, crate::open::OpenOptions::default(), |_| true) {
                    Ok(crate::open::Opened::One { recording, .. }) => Some(*recording),
                    _ => None,
                }
            })
            .collect()
    }

    fn seed() -> Recording {
        let p = crate::repo_root().join("recordings/seed-example.ron");
        crate::recording::load(&p).unwrap()
    }

    #[test]
    fn a_raw_body_read_whole_is_cut_as_its_recording_is() {
        let mut n = 0;
        for p in files() {
            let Some(raw) = read_raw_body(&p, u64::MAX, |_, _| true).unwrap() else {
                continue;
            };
            n += 1;
            let rec = crate::input::raw_to_recording(&raw.body, &raw.meta.meta.title);
            let spans: Vec<&[u8]> = raw
                .chunks
                .iter()
                .map(|c| &raw.body[c.start as usize..c.end as usize])
                .collect();
            let chunks: Vec<&[u8]> = rec.chunks.iter().map(|c| c.bytes.as_slice()).collect();
            assert_eq!(spans, chunks, "{}", p.display());
            assert_eq!(raw.meta.meta, rec.meta, "{}", p.display());
            let source = SourceInfo {
                name: "t".into(),
                kind: SourceKind::RawBody,
                timing_known: false,
            };
            let opts = Options::default();
            let whole = Analysis::from_recording_owned(rec, source.clone(), opts, u64::MAX);
            let first = first_stage_body(
                &raw.meta,
                raw.body,
                raw.chunks,
                source,
                opts,
                u64::MAX,
                |_, _| true,
            )
            .unwrap();
            assert_eq!(first.body, whole.body, "{}", p.display());
            assert_eq!(first.chunks, whole.chunks, "{}", p.display());
            assert_eq!(first.calls, whole.calls, "{}", p.display());
            assert_eq!(first.findings, whole.findings, "{}", p.display());
        }
        assert!(n > 3, "raw bodies read: {n}");
    }

    #[test]
    fn a_recording_is_not_read_as_a_raw_body() {
        let p = crate::repo_root().join("recordings/seed-example.ron");
        assert!(read_raw_body(&p, u64::MAX, |_, _| true).unwrap().is_none());
    }

    #[test]
    fn two_stages_give_what_one_go_gives() {
        let recs = recordings();
        assert!(recs.len() > 3, "recordings found: {}", recs.len());
        for rec in recs {
            let opts = Options::default();
            let mut whole =
                Analysis::from_recording_owned(rec.clone(), source(&rec), opts, u64::MAX);
            whole.compute_previews();
            let mut staged =
                first_stage(rec.clone(), source(&rec), opts, u64::MAX, |_, _| true).unwrap();
            assert!(staged.strategies.is_empty());
            assert_eq!(staged.calls, whole.calls, "{}", rec.meta.title);
            let later = second_stage(&staged, opts, |_, _| true, || false).unwrap();
            later.apply(&mut staged);
            assert_eq!(staged.strategies, whole.strategies, "{}", rec.meta.title);
            assert_eq!(staged.preview, whole.preview, "{}", rec.meta.title);
            assert_eq!(staged.findings, whole.findings, "{}", rec.meta.title);
        }
    }

    #[test]
    fn a_stage_stops_when_cancelled() {
        let rec = seed();
        let opts = Options::default();
        assert!(first_stage(rec.clone(), source(&rec), opts, u64::MAX, |_, _| false).is_none());
        let a = first_stage(rec.clone(), source(&rec), opts, u64::MAX, |_, _| true).unwrap();
        assert!(second_stage(&a, opts, |_, _| false, || false).is_none());
        assert!(second_stage(&a, opts, |_, _| true, || true).is_none());
    }
}
