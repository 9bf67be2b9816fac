//! The background loader: reads and analyses a recording on a worker thread, reports progress
//! through an atomic, can be cancelled, and sends the result over a channel, waking the UI with
//! `request_repaint`. The analysis is computed here, once per recording (again only when the user
//! forces another dialect). Captures (HAR, cassettes, JSON-lines fixtures) are imported here too;
//! one that holds several streams comes back as a [`LoadResult::Choose`] for the user to pick from.
//!
//! A big recording comes in two stages ([`sse_replay_core::staged`]): the recording, the correct calls and
//! the findings first (what the first frame needs), then — on the same worker, after the first
//! result was sent — the naive strategies and the preview summaries ([`staged::Later`], applied by
//! [`Loaded::poll_later`]). Until then the panels show "computing…". A recording under
//! [`STAGE_MIN_BYTES`] is analysed whole before it is shown (no "computing…" flash). A file is
//! opened once, through the same probe as the command line ([`sse_replay_core::probe`]); a raw
//! body is read into one buffer ([`sse_replay_core::probe::Probe::raw_body`]), not one allocation
//! per event.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::view::{CursorTables, OpenTarget};
use sse_replay_core::analysis::{Analysis, SourceInfo, SourceKind};
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::findings::Finding;
use sse_replay_core::limits::EventLimit;
use sse_replay_core::open::{OpenError, Opened};
use sse_replay_core::pipeline::Options;
use sse_replay_core::probe::{self, Kind, ReadOptions};
use sse_replay_core::recording::Recording;
use sse_replay_core::staged;

/// A body at least this big is shown before its naive strategies and previews are computed
/// (they follow in the background); a smaller one is analysed whole first.
pub const STAGE_MIN_BYTES: u64 = 16 << 20;

/// The longest line or event the app's analysis accepts: the command line's default
/// (`--max-event-bytes`), so a stream the app opens stops where `check` stops on it, at bounded
/// memory, and says so as `check` does.
pub const EVENT_LIMIT: EventLimit = EventLimit::DEFAULT;

/// The bundled seed example, so a fresh machine opens on it from any working directory.
pub const SEED_RON: &str = include_str!("../../../recordings/seed-example.ron");

/// Where a recording comes from (puffin's `Source`).
#[derive(Clone, Debug)]
pub enum Source {
    /// A file: a `.ron` recording, a raw `.sse`/`.txt` body, or a capture (HAR, cassette,
    /// `.jsonl`) recognised by its content, which is imported.
    File(PathBuf),
    /// File → Import…: the file must be a capture (a recording opens as usual); errors say why it
    /// is not.
    Import(PathBuf),
    /// The bundled seed example.
    Seed,
    /// A recording in memory (the stub builder's).
    Memory {
        name: String,
        recording: Box<Recording>,
    },
    /// The Recorder panel's recording so far.
    Live(Box<Recording>),
}

impl Source {
    /// A short name for the title bar and messages.
    pub fn name(&self) -> String {
        match self {
            Source::File(p) | Source::Import(p) => p.display().to_string(),
            Source::Live(_) => "live recording".into(),
            Source::Seed => "seed-example.ron (bundled)".into(),
            Source::Memory { name, .. } => name.clone(),
        }
    }
}

/// A recording that finished loading.
#[derive(Debug)]
pub struct Loaded {
    /// Shared with the worker while [`Loaded::later`] is pending (it reads the body); the app's
    /// only copy once that is done, when the second stage is put into it.
    pub analysis: Arc<Analysis>,
    pub derived: CursorTables,
    /// The second stage: the naive strategies and the preview summaries.
    pub later: LaterState,
    /// The file, when it came from one (for the recent list and export names).
    pub path: Option<PathBuf>,
    /// Wall time from the open request to the analysis being ready.
    pub load_time: Duration,
    /// Where it came from, to analyse it again with another dialect.
    pub source: Source,
    /// The dialect the user forced (`None` = detected). Per recording, never persisted.
    pub dialect_override: Option<DialectKind>,
}

impl Loaded {
    /// The Recorder panel's recording (rather than a file).
    pub fn is_live(&self) -> bool {
        matches!(self.source, Source::Live(_))
    }

    /// The naive strategies and previews are still being computed.
    pub fn later_pending(&self) -> bool {
        matches!(self.later, LaterState::Pending(_))
    }

    /// Put the second stage in once the worker sent it; `true` when something changed (the
    /// panels then show the strategies and badges).
    pub fn poll_later(&mut self) -> bool {
        let LaterState::Pending(pending) = &self.later else {
            return false;
        };
        let done = match pending.rx.try_recv() {
            Ok(done) => done,
            Err(mpsc::TryRecvError::Empty) => return false,
            Err(mpsc::TryRecvError::Disconnected) => {
                self.later =
                    LaterState::Failed("the naive strategies could not be computed".into());
                return true;
            }
        };
        self.apply_later(done);
        true
    }

    fn apply_later(&mut self, done: LaterDone) {
        // The worker dropped its handle before sending, so the analysis is ours alone.
        let Some(a) = Arc::get_mut(&mut self.analysis) else {
            self.later = LaterState::Failed("the analysis was still shared".into());
            return;
        };
        a.strategies = done.later.strategies;
        a.preview = Some(done.later.preview);
        a.findings = done.findings;
        self.derived = done.derived;
        self.later = LaterState::Ready;
    }
}

/// Where the second stage of a loaded recording stands.
#[derive(Debug)]
pub enum LaterState {
    /// Computed (or nothing to compute).
    Ready,
    /// Running on the worker.
    Pending(Pending),
    /// The worker stopped without it; the text says why.
    Failed(String),
}

/// The second stage in progress. Dropping it (another recording replaced this one) cancels it.
pub struct Pending {
    rx: mpsc::Receiver<LaterDone>,
    cancel: Arc<AtomicBool>,
    progress: Arc<AtomicU32>,
}

impl Pending {
    /// Fraction done (of the strategies' pass over the body).
    pub fn progress(&self) -> f32 {
        f32::from_bits(self.progress.load(Ordering::Relaxed))
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("progress", &self.progress())
            .finish_non_exhaustive()
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// The second stage, ready to be put into its analysis: the strategies and previews, the findings
/// with the preview ones merged in, and the cursor tables for them (built on the worker, so
/// putting them in costs the UI thread nothing).
#[derive(Debug)]
pub struct LaterDone {
    pub later: staged::Later,
    pub findings: Vec<Finding>,
    pub derived: CursorTables,
}

impl LaterDone {
    /// The second stage of `a`, computed here (the GUI tests' seam, and small recordings).
    pub fn compute(a: &Analysis) -> Option<Self> {
        let later = staged::second_stage(a, |_, _| true, || false)?;
        Some(Self::from_later(a, later))
    }

    fn from_later(a: &Analysis, later: staged::Later) -> Self {
        let mut findings = a.findings.clone();
        findings.extend(later.preview_findings.iter().cloned());
        sse_replay_core::findings::sort(&mut findings);
        let derived = CursorTables::from_parts(a, &later.strategies, &findings);
        Self {
            later,
            findings,
            derived,
        }
    }
}

/// What a finished load produced.
#[derive(Debug)]
pub enum LoadResult {
    /// One analysed recording.
    Loaded(Box<Loaded>),
    /// A capture with several streams: the user picks one to open.
    Choose {
        path: PathBuf,
        recordings: Vec<Recording>,
    },
}

/// A load in progress.
pub struct Loading {
    pub name: String,
    pub slot: OpenTarget,
    pub started: Instant,
    progress: Arc<AtomicU32>,
    stage: Arc<AtomicU32>,
    cancel: Arc<AtomicBool>,
    rx: mpsc::Receiver<Result<LoadResult, LoadError>>,
    /// Keep the current view (cursor, strategy) when it lands: a live update or a dialect change.
    pub keep_view: bool,
    /// A live update (the Recorder's recording so far).
    pub live: bool,
}

impl Loading {
    /// Fraction done (reading is the first half, analysing the second).
    pub fn progress(&self) -> f32 {
        f32::from_bits(self.progress.load(Ordering::Relaxed))
    }

    /// What the worker is doing.
    pub fn stage(&self) -> &'static str {
        match self.stage.load(Ordering::Relaxed) {
            0 => "reading",
            1 => "parsing",
            _ => "analysing",
        }
    }

    /// Ask the worker to stop; the result will be [`LoadError::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// The result, once the worker is done.
    pub fn poll(&self) -> Option<Result<LoadResult, LoadError>> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => Some(Err(LoadError::Failed(
                "the loader stopped unexpectedly".into(),
            ))),
        }
    }
}

/// Start loading `source` on a worker thread, with the dialect forced when `dialect` is set;
/// `wake` is called when the result is ready (and again when its second stage is). A body of at
/// least `stage_min_bytes` is sent before its strategies and previews are computed.
pub fn spawn(
    source: Source,
    slot: OpenTarget,
    dialect: Option<DialectKind>,
    stage_min_bytes: u64,
    wake: impl Fn() + Send + 'static,
) -> Loading {
    let progress = Arc::new(AtomicU32::new(0f32.to_bits()));
    let stage = Arc::new(AtomicU32::new(0));
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let name = source.name();
    let live = matches!(source, Source::Live(_));
    let started = Instant::now();
    let (p, s, c) = (progress.clone(), stage.clone(), cancel.clone());
    let spawned = std::thread::Builder::new()
        .name("sse-replay-loader".into())
        .spawn(move || {
            let result = load(source, dialect, &p, &s, &c);
            let (tx_later, rx_later) = mpsc::channel();
            let mut later_job = None;
            let result = result.map(|loaded| match loaded {
                WorkerResult::Analysed {
                    analysis,
                    path,
                    source,
                } => {
                    let mut analysis = *analysis;
                    let staged = analysis.body.len() as u64 >= stage_min_bytes;
                    let later = if staged {
                        let cancel = Arc::new(AtomicBool::new(false));
                        let progress = Arc::new(AtomicU32::new(0f32.to_bits()));
                        later_job = Some((cancel.clone(), progress.clone()));
                        LaterState::Pending(Pending {
                            rx: rx_later,
                            cancel,
                            progress,
                        })
                    } else {
                        match staged::second_stage(
                            &analysis,
                            |_, _| !c.load(Ordering::Relaxed),
                            || c.load(Ordering::Relaxed),
                        ) {
                            Some(later) => later.apply(&mut analysis),
                            None => return Err(LoadError::Cancelled),
                        }
                        LaterState::Ready
                    };
                    let derived = CursorTables::new(&analysis);
                    Ok(LoadResult::Loaded(Box::new(Loaded {
                        analysis: Arc::new(analysis),
                        derived,
                        later,
                        path,
                        load_time: started.elapsed(),
                        source,
                        dialect_override: dialect,
                    })))
                }
                WorkerResult::Several { path, recordings } => {
                    Ok(LoadResult::Choose { path, recordings })
                }
            });
            let result = result.and_then(|r| r);
            // The worker's handle on the analysis, for the second stage.
            let shared = match (&result, &later_job) {
                (Ok(LoadResult::Loaded(l)), Some(_)) => Some(l.analysis.clone()),
                _ => None,
            };
            tx.send(result).ok();
            wake();
            if let (Some(a), Some((cancel, progress))) = (shared, later_job) {
                let report = |done: u64, total: u64| {
                    let f = done as f64 / total.max(1) as f64;
                    progress.store((f as f32).to_bits(), Ordering::Relaxed);
                    !cancel.load(Ordering::Relaxed)
                };
                let later = staged::second_stage(&a, report, || cancel.load(Ordering::Relaxed))
                    .map(|later| LaterDone::from_later(&a, later));
                // Drop the handle before sending: the app then holds the only one.
                drop(a);
                if let Some(done) = later {
                    tx_later.send(done).ok();
                }
                wake();
            }
        });
    let rx = match spawned {
        Ok(_) => rx,
        Err(e) => {
            // No thread: report through a channel that already holds the error.
            let (tx, rx2) = mpsc::channel();
            tx.send(Err(LoadError::Failed(format!(
                "cannot start the loader thread: {e}"
            ))))
            .ok();
            rx2
        }
    };
    Loading {
        name,
        slot,
        started,
        progress,
        stage,
        cancel,
        rx,
        keep_view: false,
        live,
    }
}

/// What the worker produced, before the tables are derived.
enum WorkerResult {
    Analysed {
        analysis: Box<Analysis>,
        path: Option<PathBuf>,
        source: Source,
    },
    Several {
        path: PathBuf,
        recordings: Vec<Recording>,
    },
}

/// Why a load ended without a recording.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The user cancelled it.
    #[error("cancelled")]
    Cancelled,
    /// The file could not be opened or the recording read; the message says why.
    #[error("{0}")]
    Failed(String),
}

impl From<OpenError> for LoadError {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Cancelled => LoadError::Cancelled,
            e => LoadError::Failed(format!("{e:#}")),
        }
    }
}

fn load(
    source: Source,
    dialect: Option<DialectKind>,
    progress: &AtomicU32,
    stage: &AtomicU32,
    cancel: &AtomicBool,
) -> Result<WorkerResult, LoadError> {
    let name = source.name();
    let keep = source.clone();
    let set = |f: f32| progress.store(f.to_bits(), Ordering::Relaxed);
    let opts = Options {
        dialect,
        framing: None,
        detail: true,
    };
    // Analysing is the second half of the bar, moved by the bytes the pipeline has consumed.
    let analysing = |done: u64, total: u64| {
        set(0.5 + 0.5 * (done as f64 / total.max(1) as f64) as f32);
        !cancel.load(Ordering::Relaxed)
    };
    // Reading is the first half of the bar.
    let reading = |done: u64, total: u64| {
        set((0.5 * (done as f64 / total.max(1) as f64)).min(0.5) as f32);
        if done >= total {
            stage.store(1, Ordering::Relaxed);
        }
        !cancel.load(Ordering::Relaxed)
    };
    let (rec, kind, path) = match source {
        Source::File(path) | Source::Import(path) => {
            let options = ReadOptions {
                import_only: matches!(keep, Source::Import(_)),
                max_event_bytes: EVENT_LIMIT,
                ..ReadOptions::default()
            };
            // Opened once; what it is decides how it is read.
            let probe = probe::open(&path, options).map_err(OpenError::from)?;
            if matches!(probe.kind(), Kind::Body(_)) && !options.import_only {
                // A raw body: read into one buffer, cut per event, and analysed from there.
                let raw = probe.raw_body(reading)?;
                stage.store(2, Ordering::Relaxed);
                let source_info = SourceInfo {
                    name,
                    timing_known: false,
                    kind: SourceKind::RawBody,
                };
                let analysis =
                    staged::first_stage_body(raw, source_info, opts, EVENT_LIMIT, analysing)
                        .ok_or(LoadError::Cancelled)?;
                return Ok(WorkerResult::Analysed {
                    analysis: Box::new(analysis),
                    path: Some(path),
                    source: keep,
                });
            }
            match probe.recordings(reading)? {
                Opened::One { recording, kind } => (*recording, kind, Some(path)),
                Opened::Several { recordings } => {
                    return Ok(WorkerResult::Several { path, recordings });
                }
            }
        }
        Source::Seed => {
            let rec = Recording::from_ron_str(SEED_RON)
                .map_err(|e| LoadError::Failed(format!("{e:#}")))?;
            (rec, SourceKind::Recording, None)
        }
        Source::Memory { recording, .. } => (*recording, SourceKind::Recording, None),
        Source::Live(recording) => (*recording, SourceKind::Live, None),
    };
    if cancel.load(Ordering::Relaxed) {
        return Err(LoadError::Cancelled);
    }
    stage.store(2, Ordering::Relaxed);
    set(0.5);
    let source_info = SourceInfo {
        name,
        timing_known: kind.may_have_timing() && rec.meta.timing_known,
        kind,
    };
    // Consumed: each chunk is freed once copied into the analysis's body (one copy, not two).
    let analysis = staged::first_stage(rec, source_info, opts, EVENT_LIMIT, analysing)
        .ok_or(LoadError::Cancelled)?;
    set(1.0);
    Ok(WorkerResult::Analysed {
        analysis: Box::new(analysis),
        path,
        source: keep,
    })
}

#[cfg(test)]
#[allow(clippy::panic, reason = "tests")]
mod tests {
    use super::*;
    use sse_replay_core::recording::Chunk;

    /// Loads `source` on this thread, as the worker does.
    fn analysed(source: Source) -> Analysis {
        let (progress, stage, cancel) =
            (AtomicU32::new(0), AtomicU32::new(0), AtomicBool::new(false));
        match load(source, None, &progress, &stage, &cancel) {
            Ok(WorkerResult::Analysed { analysis, .. }) => *analysis,
            Ok(WorkerResult::Several { .. }) => panic!("several streams"),
            Err(e) => panic!("{e:?}"),
        }
    }

    /// A recording of one SSE event whose data line is `len` bytes long.
    fn one_event(len: u64) -> Source {
        let mut bytes = b"data: ".to_vec();
        bytes.resize(usize::try_from(len).unwrap_or(usize::MAX), b'x');
        bytes.extend_from_slice(b"\n\n");
        let recording = Recording {
            chunks: vec![Chunk { t_micros: 0, bytes }],
            ..Recording::default()
        };
        Source::Memory {
            name: "one event".into(),
            recording: Box::new(recording),
        }
    }

    #[test]
    fn a_recording_is_analysed_with_the_command_lines_event_limit() {
        // A line one byte past `--max-event-bytes`'s default stops `check` (event-too-large, at
        // bounded memory); the app stops at the same byte, and reads a line at the limit whole.
        let limit = EventLimit::DEFAULT.bytes();
        let over = analysed(one_event(limit + 1)).overflow;
        assert_eq!(over.map(|o| (o.start, o.limit)), Some((0, limit)));
        assert_eq!(analysed(one_event(limit)).overflow, None);
    }
}
