//! The background loader: reads and analyses a recording on a worker thread, reports progress
//! through an atomic, can be cancelled, and sends the result over a channel, waking the UI with
//! `request_repaint`. The analysis is computed here, once per recording (again only when the user
//! forces another dialect). Captures (HAR, cassettes, JSON-lines fixtures) are imported here too;
//! one that holds several streams comes back as a [`Done::Choose`] for the user to pick from.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::view::{CursorTables, OpenTarget};
use crate::analysis::{Analysis, SourceInfo};
use crate::dialect::DialectKind;
use crate::import::{self, ImportError, ImportFormat};
use crate::input::{self, InputError, InputKind};
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
pub enum Done {
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
    rx: mpsc::Receiver<Result<Done, String>>,
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

    /// Ask the worker to stop; the result will be `Err("cancelled")`.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// The result, once the worker is done.
    pub fn poll(&self) -> Option<Result<Done, String>> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => {
                Some(Err("the loader stopped unexpectedly".into()))
            }
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
                Opened::One {
                    analysis,
                    path,
                    source,
                } => {
                    let derived = CursorTables::new(&analysis);
                    Done::Loaded(Box::new(Loaded {
                        analysis: *analysis,
                        derived,
                        path,
                        load_time: started.elapsed(),
                        source,
                        dialect_override: dialect,
                    }))
                }
                Opened::Several { path, recordings } => Done::Choose { path, recordings },
            });
            let _ = tx.send(result);
            wake();
        });
    let rx = match spawned {
        Ok(_) => rx,
        Err(e) => {
            // No thread: report through a channel that already holds the error.
            let (tx, rx2) = mpsc::channel();
            let _ = tx.send(Err(format!("cannot start the loader thread: {e}")));
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
enum Opened {
    One {
        analysis: Box<Analysis>,
        path: Option<PathBuf>,
        source: Source,
    },
    Several {
        path: PathBuf,
        recordings: Vec<Recording>,
    },
}

/// How a recording was obtained, for the source line.
enum Kind {
    Input(InputKind),
    Imported,
    Live,
}

/// The capture format of a file that is neither a recording nor a plain stream body, judged from
/// its first 64 KiB (the importer reads it all afterwards). JSON lines only by extension: a raw
/// Ollama body is JSON lines too and opens as a body.
fn capture_format(path: &std::path::Path) -> Option<ImportFormat> {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(64 * 1024);
    // Opened as every input is: a FIFO without a writer reads as empty instead of blocking.
    let file = input::open_input(path).ok()?.reader;
    file.take(64 * 1024).read_to_end(&mut head).ok()?;
    let by_ext = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson"));
    match import::detect(path, &head) {
        Ok(f @ (ImportFormat::Har | ImportFormat::Cassette)) => Some(f),
        Ok(ImportFormat::JsonLines) if by_ext => Some(ImportFormat::JsonLines),
        _ => None,
    }
}

fn load(
    source: Source,
    dialect: Option<DialectKind>,
    progress: &AtomicU32,
    stage: &AtomicU32,
    cancel: &AtomicBool,
) -> Result<Opened, String> {
    let name = source.name();
    let keep = source.clone();
    let (rec, kind, path) = match source {
        Source::File(path) if capture_format(&path).is_none() => {
            let (rec, kind) = input::open_path(&path, |f| {
                progress.store(f.to_bits(), Ordering::Relaxed);
                if f >= 0.499 {
                    stage.store(1, Ordering::Relaxed);
                }
                !cancel.load(Ordering::Relaxed)
            })
            .map_err(|e| match e {
                InputError::Cancelled => "cancelled".to_owned(),
                e => format!("{e:#}"),
            })?;
            (rec, Kind::Input(kind), Some(path))
        }
        Source::File(path) | Source::Import(path) => match import::import_path(&path) {
            Err(ImportError::AlreadyRecording { .. }) => {
                let rec = crate::recording::load(&path).map_err(|e| format!("{e:#}"))?;
                (rec, Kind::Input(InputKind::Recording), Some(path))
            }
            Err(e) => return Err(format!("{e:#}")),
            Ok(mut recs) if recs.len() == 1 => {
                let rec = recs.pop().ok_or("no stream")?;
                (rec, Kind::Imported, Some(path))
            }
            Ok(recordings) => return Ok(Opened::Several { path, recordings }),
        },
        Source::Seed => {
            let rec = Recording::from_ron_str(SEED_RON).map_err(|e| format!("{e:#}"))?;
            (rec, Kind::Input(InputKind::Recording), None)
        }
        Source::Memory { recording, .. } => (*recording, Kind::Input(InputKind::Recording), None),
        Source::Live(recording) => (*recording, Kind::Live, None),
    };
    if cancel.load(Ordering::Relaxed) {
        return Err("cancelled".into());
    }
    stage.store(2, Ordering::Relaxed);
    progress.store(0.6f32.to_bits(), Ordering::Relaxed);
    let source_info = SourceInfo {
        name,
        kind: match kind {
            Kind::Input(InputKind::Recording) if rec.meta.interrupted => {
                "journal (interrupted recording)".into()
            }
            Kind::Input(InputKind::Recording) => "recording".into(),
            Kind::Input(InputKind::RawBody) => "raw body".into(),
            Kind::Imported => match rec.meta.source.strip_prefix("import:") {
                Some(format) => format!("{format} import"),
                None => "import".into(),
            },
            Kind::Live => "live recording".into(),
        },
        timing_known: !matches!(kind, Kind::Input(InputKind::RawBody)) && rec.meta.timing_known,
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
        return Err("cancelled".into());
    }
    progress.store(1f32.to_bits(), Ordering::Relaxed);
    Ok(Opened::One {
        analysis: Box::new(analysis),
        path,
        source: keep,
    })
}
