//! The background loader: reads and analyses a recording on a worker thread, reports progress
//! through an atomic, can be cancelled, and sends the result over a channel, waking the UI with
//! `request_repaint`. The analysis is computed here, once per recording.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::view::{Derived, Slot};
use crate::analysis::{Analysis, SourceInfo};
use crate::input::{self, InputError, InputKind};
use crate::pipeline::Options;
use crate::recording::Recording;

/// The bundled seed example, so a fresh machine opens on it from any working directory.
pub const SEED_RON: &str = include_str!("../../recordings/seed-example.ron");

/// Where a recording comes from (puffin's `Source`).
#[derive(Clone, Debug)]
pub enum Source {
    /// A file: a `.ron` recording or a raw `.sse`/`.txt` body.
    File(PathBuf),
    /// The bundled seed example.
    Seed,
    /// A recording in memory (the stub builder's).
    Memory {
        name: String,
        recording: Box<Recording>,
    },
}

impl Source {
    /// A short name for the title bar and messages.
    pub fn name(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Seed => "seed-example.ron (bundled)".into(),
            Source::Memory { name, .. } => name.clone(),
        }
    }
}

/// A recording that finished loading.
#[derive(Debug)]
pub struct Loaded {
    pub analysis: Analysis,
    pub derived: Derived,
    /// The file, when it came from one (for the recent list and export names).
    pub path: Option<PathBuf>,
    /// Wall time from the open request to the analysis being ready.
    pub load_time: Duration,
}

/// A load in progress.
pub struct Loading {
    pub name: String,
    pub slot: Slot,
    pub started: Instant,
    progress: Arc<AtomicU32>,
    stage: Arc<AtomicU32>,
    cancel: Arc<AtomicBool>,
    rx: mpsc::Receiver<Result<Loaded, String>>,
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
    pub fn poll(&self) -> Option<Result<Loaded, String>> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => {
                Some(Err("the loader stopped unexpectedly".into()))
            }
        }
    }
}

/// Start loading `source` on a worker thread; `wake` is called when the result is ready.
pub fn spawn(source: Source, slot: Slot, wake: impl Fn() + Send + 'static) -> Loading {
    let progress = Arc::new(AtomicU32::new(0f32.to_bits()));
    let stage = Arc::new(AtomicU32::new(0));
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let name = source.name();
    let started = Instant::now();
    let (p, s, c) = (progress.clone(), stage.clone(), cancel.clone());
    let spawned = std::thread::Builder::new()
        .name("sse-replay-loader".into())
        .spawn(move || {
            let result = load(source, &p, &s, &c).map(|(analysis, path)| {
                let derived = Derived::new(&analysis);
                Loaded {
                    analysis,
                    derived,
                    path,
                    load_time: started.elapsed(),
                }
            });
            let _ = tx.send(result);
            wake();
        });
    if let Err(e) = spawned {
        // No thread: report through a channel that already holds the error.
        let (tx, rx2) = mpsc::channel();
        let _ = tx.send(Err(format!("cannot start the loader thread: {e}")));
        return Loading {
            name,
            slot,
            started,
            progress,
            stage,
            cancel,
            rx: rx2,
        };
    }
    Loading {
        name,
        slot,
        started,
        progress,
        stage,
        cancel,
        rx,
    }
}

fn load(
    source: Source,
    progress: &AtomicU32,
    stage: &AtomicU32,
    cancel: &AtomicBool,
) -> Result<(Analysis, Option<PathBuf>), String> {
    let name = source.name();
    let (rec, kind, path) = match source {
        Source::File(path) => {
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
            (rec, kind, Some(path))
        }
        Source::Seed => {
            let rec = Recording::from_ron_str(SEED_RON).map_err(|e| format!("{e:#}"))?;
            (rec, InputKind::Recording, None)
        }
        Source::Memory { recording, .. } => (*recording, InputKind::Recording, None),
    };
    if cancel.load(Ordering::Relaxed) {
        return Err("cancelled".into());
    }
    stage.store(2, Ordering::Relaxed);
    progress.store(0.6f32.to_bits(), Ordering::Relaxed);
    let source_info = SourceInfo {
        name,
        kind: match kind {
            InputKind::Recording if rec.meta.interrupted => {
                "journal (interrupted recording)".into()
            }
            InputKind::Recording => "recording".into(),
            InputKind::RawBody => "raw body".into(),
        },
        timing_known: kind == InputKind::Recording && rec.meta.timing_known,
    };
    let analysis = Analysis::from_recording(
        &rec,
        source_info,
        Options {
            dialect: None,
            framing: None,
            detail: true,
        },
    );
    drop(rec);
    if cancel.load(Ordering::Relaxed) {
        return Err("cancelled".into());
    }
    progress.store(1f32.to_bits(), Ordering::Relaxed);
    Ok((analysis, path))
}
