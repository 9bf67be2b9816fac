//! The background loader: reads and analyses a recording on a worker thread, reports progress
//! through an atomic, can be cancelled, and sends the result over a channel, waking the UI with
//! `request_repaint`. The analysis is computed here, once per recording (again only when the user
//! forces another dialect). Captures (HAR, cassettes, JSON-lines fixtures) are imported here too;
//! one that holds several streams comes back as a [`LoadResult::Choose`] for the user to pick from.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::view::{CursorTables, OpenTarget};
use crate::analysis::{Analysis, SourceInfo, SourceKind};
use crate::dialect::DialectKind;
use crate::open::{OpenError, OpenOptions, Opened};
use crate::pipeline::Options;
use crate::recording::Recording;

/// The bundled seed example, so a fresh machine opens on it from any working directory.
pub const SEED_RON: &str = include_str!("../../recordings/seed-example.ron");

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
    pub analysis: Analysis,
    pub derived: CursorTables,
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
/// `wake` is called when the result is ready.
pub fn spawn(
    source: Source,
    slot: OpenTarget,
    dialect: Option<DialectKind>,
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
            let result = load(source, dialect, &p, &s, &c).map(|loaded| match loaded {
                WorkerResult::Analysed {
                    analysis,
                    path,
                    source,
                } => {
                    let derived = CursorTables::new(&analysis);
                    LoadResult::Loaded(Box::new(Loaded {
                        analysis: *analysis,
                        derived,
                        path,
                        load_time: started.elapsed(),
                        source,
                        dialect_override: dialect,
                    }))
                }
                WorkerResult::Several { path, recordings } => {
                    LoadResult::Choose { path, recordings }
                }
            });
            let _ = tx.send(result);
            wake();
        });
    let rx = match spawned {
        Ok(_) => rx,
        Err(e) => {
            // No thread: report through a channel that already holds the error.
            let (tx, rx2) = mpsc::channel();
            let _ = tx.send(Err(LoadError::Failed(format!(
                "cannot start the loader thread: {e}"
            ))));
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
    let (rec, kind, path) = match source {
        Source::File(path) | Source::Import(path) => {
            let options = OpenOptions {
                import_only: matches!(keep, Source::Import(_)),
                ..OpenOptions::default()
            };
            let opened = crate::open::open(&path, options, |f| {
                progress.store(f.to_bits(), Ordering::Relaxed);
                if f >= 0.499 {
                    stage.store(1, Ordering::Relaxed);
                }
                !cancel.load(Ordering::Relaxed)
            })?;
            match opened {
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
    progress.store(0.6f32.to_bits(), Ordering::Relaxed);
    let source_info = SourceInfo {
        name,
        timing_known: kind.may_have_timing() && rec.meta.timing_known,
        kind,
    };
    // Consumed: each chunk is freed once copied into the analysis's body (one copy, not two).
    let analysis = Analysis::from_recording_owned(
        rec,
        source_info,
        Options {
            dialect,
            framing: None,
            detail: true,
        },
        u64::MAX,
    );
    if cancel.load(Ordering::Relaxed) {
        return Err(LoadError::Cancelled);
    }
    progress.store(1f32.to_bits(), Ordering::Relaxed);
    Ok(WorkerResult::Analysed {
        analysis: Box::new(analysis),
        path,
        source: keep,
    })
}
