//! The analysis in two stages, for the app: first what the first frame needs (the recording, the
//! correct accumulator, the findings: [`first_stage`], [`first_stage_body`]), then, on a worker,
//! what can come later ([`second_stage`]: the naive strategies with their verdicts, and the
//! per-call preview summaries with their `preview-contradiction` findings). Both stages together
//! give what [`Analysis::from_recording_owned`] gives in one go (the tests prove it); `check`
//! still uses that.
//!
//! The second stage re-feeds the analysis's body, read by read, through a lean pipeline observed
//! by [`Strategies`] — the same facts in the same order as the first pass, so the same reports.
//! Both stages take a `progress` callback (bytes done, bytes in all) that cancels by returning
//! `false`; a cancelled stage returns `None`.

use crate::analysis::{Analysis, CallPreview, Feed, SourceInfo, StrategyResult};
use crate::analysis::{Progress, body_reads, strategy_results};
use crate::fact::NoObserver;
use crate::findings::Finding;
use crate::limits::EventLimit;
use crate::naive::Strategies;
use crate::open::RawBody;
use crate::pipeline::{Options, Pipeline};
use crate::recording::Recording;

/// The first stage of a recording: the analysis with [`Analysis::strategies`] empty and no
/// previews. Each chunk's bytes are freed once copied into the body (held once). `None` when
/// `progress` cancelled it.
pub fn first_stage(
    mut rec: Recording,
    source: SourceInfo,
    opts: Options,
    max_event_bytes: EventLimit,
    progress: impl FnMut(u64, u64) -> bool,
) -> Option<Analysis> {
    let body_len = rec.body_len();
    let chunks = std::mem::take(&mut rec.chunks);
    let mut feed = Feed::observed(&rec, opts, max_event_bytes, NoObserver)
        .keep_body(body_len)
        .with_progress(body_len, progress);
    for c in chunks {
        if feed.overflow().is_some() {
            break;
        }
        if !feed.feed(&c.bytes, c.t_micros) {
            return None;
        }
    }
    feed.end().then(|| feed.finish(&rec, source))
}

/// [`first_stage`] of a raw body read whole ([`crate::probe::Probe::raw_body`]): the body is
/// moved into the analysis, never copied, and fed at its chunks (one per event).
pub fn first_stage_body(
    raw: RawBody,
    source: SourceInfo,
    opts: Options,
    max_event_bytes: EventLimit,
    progress: impl FnMut(u64, u64) -> bool,
) -> Option<Analysis> {
    let RawBody { meta, body, chunks } = raw;
    let total = body.len() as u64;
    let mut feed = Feed::observed(&meta, opts, max_event_bytes, NoObserver)
        .over_body(body)
        .with_progress(total, progress);
    for c in &chunks {
        if feed.overflow().is_some() {
            break;
        }
        if !feed.feed_span(c.end, c.t_micros) {
            return None;
        }
    }
    feed.end().then(|| feed.finish(&meta, source))
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

/// The naive strategies of a first-stage analysis `a`, fed with the options its correct pass
/// ran with ([`Analysis::options`]), so they see the same facts. `None` when cancelled.
pub fn strategies(
    a: &Analysis,
    progress: impl FnMut(u64, u64) -> bool,
) -> Option<Vec<StrategyResult>> {
    if a.complete {
        return Some(Vec::new());
    }
    let mut progress = Progress::new(progress, a.body.len() as u64);
    let opts = Options {
        detail: false,
        ..a.options
    };
    let mut p = Pipeline::observed(opts, Strategies::new());
    for c in &a.chunks {
        let bytes = a.bytes(&(c.start..c.end));
        p.feed(bytes, c.t_micros);
        if !progress.add(bytes.len() as u64) {
            return None;
        }
    }
    let (_, observed) = p.finish_observed();
    let reads = body_reads(&a.source, &a.body, &a.chunks);
    let reads = reads.as_ref().map(|r| r as &dyn crate::naive::Reads);
    let results = strategy_results(observed, reads, a.dialect, a.framing, &a.calls);
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
    progress: impl FnMut(u64, u64) -> bool,
    cancelled: impl Fn() -> bool,
) -> Option<Later> {
    let strategies = strategies(a, progress)?;
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

    fn probe(p: &std::path::Path) -> crate::probe::Probe {
        crate::probe::open(p, crate::probe::ReadOptions::default()).unwrap()
    }

    fn recordings() -> Vec<Recording> {
        files()
            .iter()
            .filter_map(|p| match probe(p).recordings(|_, _| true) {
                Ok(crate::open::Opened::One { recording, .. }) => Some(*recording),
                _ => None,
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
            let probe = probe(&p);
            if !matches!(probe.kind(), crate::probe::Kind::Body(_)) {
                continue;
            }
            let raw = probe.raw_body(|_, _| true).unwrap();
            n += 1;
            let rec = crate::input::raw_to_recording(&raw.body, &raw.meta.meta.title);
            let meta = raw.meta.meta.clone();
            let spans: Vec<&[u8]> = raw
                .chunks
                .iter()
                .map(|c| &raw.body[c.start as usize..c.end as usize])
                .collect();
            let chunks: Vec<&[u8]> = rec.chunks.iter().map(|c| c.bytes.as_slice()).collect();
            assert_eq!(spans, chunks, "{}", p.display());
            assert_eq!(meta, rec.meta, "{}", p.display());
            let source = SourceInfo {
                name: "t".into(),
                kind: SourceKind::RawBody,
                timing_known: false,
            };
            let opts = Options::default();
            let whole =
                Analysis::from_recording_owned(rec, source.clone(), opts, EventLimit::UNBOUNDED);
            let first =
                first_stage_body(raw, source, opts, EventLimit::UNBOUNDED, |_, _| true).unwrap();
            assert_eq!(first.body, whole.body, "{}", p.display());
            assert_eq!(first.chunks, whole.chunks, "{}", p.display());
            assert_eq!(first.calls, whole.calls, "{}", p.display());
            assert_eq!(first.findings, whole.findings, "{}", p.display());
        }
        assert!(n > 3, "raw bodies read: {n}");
    }

    #[test]
    fn two_stages_give_what_one_go_gives() {
        let recs = recordings();
        assert!(recs.len() > 3, "recordings found: {}", recs.len());
        for rec in recs {
            let opts = Options::default();
            let mut whole = Analysis::from_recording_owned(
                rec.clone(),
                source(&rec),
                opts,
                EventLimit::UNBOUNDED,
            );
            whole.compute_previews();
            let mut staged = first_stage(
                rec.clone(),
                source(&rec),
                opts,
                EventLimit::UNBOUNDED,
                |_, _| true,
            )
            .unwrap();
            assert!(staged.strategies.is_empty());
            assert_eq!(staged.calls, whole.calls, "{}", rec.meta.title);
            let later = second_stage(&staged, |_, _| true, || false).unwrap();
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
        assert!(
            first_stage(
                rec.clone(),
                source(&rec),
                opts,
                EventLimit::UNBOUNDED,
                |_, _| false
            )
            .is_none()
        );
        let a = first_stage(
            rec.clone(),
            source(&rec),
            opts,
            EventLimit::UNBOUNDED,
            |_, _| true,
        )
        .unwrap();
        assert!(second_stage(&a, |_, _| false, || false).is_none());
        assert!(second_stage(&a, |_, _| true, || true).is_none());
    }
}
