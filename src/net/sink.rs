//! The recording writer thread shared by the recorder and the proxy.
//!
//! The network task stamps each read with its arrival time and sends it here; this thread appends
//! it to the crash-safe journal ([`JournalWriter`]), feeds the lean pipeline for live progress, and
//! flushes the journal at least every 100 ms, also while the stream is silent (so a stalled
//! stream's data is on disk). [`Sink::finish`] writes the final document atomically and removes the
//! journal. If the network side disappears without finishing (a panic), the journal is flushed and
//! left for salvage, like after a crash.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::pipeline::{Options, Outcome, Pipeline};
use crate::recording::{
    self, Chunk, JournalWriter, OutputTarget, Recording, RecordingError, ResponseInfo, WriteOptions,
};

/// How often buffered journal records are synced to disk, and how often progress is reported.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Live counts, reported with the new chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Body bytes received.
    pub bytes: u64,
    /// Network reads received.
    pub chunks: u64,
    /// Events framed so far.
    pub events: u32,
    /// Tool calls seen so far.
    pub calls: usize,
}

/// Called from the writer thread with the chunks that arrived since the last call (at most every
/// [`FLUSH_INTERVAL`], and once more at the end) and the counts so far.
pub type ProgressFn = Box<dyn FnMut(&[Chunk], Progress) + Send>;

enum Msg {
    Response(ResponseInfo),
    Chunk(Chunk),
    Finish(Vec<String>),
}

/// What the writer produced.
#[derive(Debug)]
pub struct SinkDone {
    /// The whole recording (also when it could not be written).
    pub recording: Recording,
    /// Where it was saved (`None` without an output path, or when writing failed).
    pub saved: Option<PathBuf>,
    /// The first write error; the journal may still hold what was flushed before it.
    pub write_error: Option<RecordingError>,
    /// The lean pipeline's outcome over the whole body (calls, finish, provider error...).
    pub outcome: Outcome,
}

/// Handle to the writer thread. See the module documentation.
pub struct Sink {
    tx: mpsc::Sender<Msg>,
    thread: JoinHandle<SinkDone>,
    journal: Option<PathBuf>,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("journal", &self.journal)
            .finish_non_exhaustive()
    }
}

impl Sink {
    /// Creates the journal `<out>.partial` (when `out` is given) with `head`'s meta and request,
    /// then starts the writer thread. Fails before anything is sent when the journal cannot be
    /// created (e.g. an earlier interrupted recording left one) or `out` exists and `overwrite`
    /// is false. `out` = `-` (standard output) or a device / FIFO gets no journal: the recording
    /// is written there once, at the end.
    pub fn start(
        out: Option<&Path>,
        overwrite: bool,
        head: Recording,
        on_progress: ProgressFn,
    ) -> Result<Self, RecordingError> {
        let journal = match out {
            Some(path) => match recording::output_target(path, overwrite)? {
                OutputTarget::Stdout | OutputTarget::Special => None,
                OutputTarget::New | OutputTarget::Replace => {
                    Some(JournalWriter::create_with(path, &head, overwrite)?)
                }
            },
            None => None,
        };
        let direct = match (&journal, out) {
            (None, Some(path)) => Some(path.to_path_buf()),
            _ => None,
        };
        let journal_path = journal.as_ref().map(|j| j.journal_path().to_path_buf());
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("sse-replay-writer".into())
            .spawn(move || writer_loop(rx, journal, direct, head, on_progress))
            .map_err(|source| RecordingError::Io {
                op: "starting the writer thread",
                path: out.unwrap_or(Path::new(".")).to_path_buf(),
                source,
            })?;
        Ok(Self {
            tx,
            thread,
            journal: journal_path,
        })
    }

    /// The journal being written, if any.
    pub fn journal_path(&self) -> Option<&Path> {
        self.journal.as_deref()
    }

    /// Records the response head.
    pub fn response(&self, resp: ResponseInfo) {
        let _ = self.tx.send(Msg::Response(resp));
    }

    /// Hands over one read. Never blocks.
    pub fn chunk(&self, chunk: Chunk) {
        let _ = self.tx.send(Msg::Chunk(chunk));
    }

    /// Adds `notes` to the recording, saves it atomically and removes the journal. Blocks until the
    /// file is written (call from a blocking context).
    pub fn finish(self, notes: Vec<String>) -> SinkDone {
        let _ = self.tx.send(Msg::Finish(notes));
        match self.thread.join() {
            Ok(done) => done,
            Err(_) => SinkDone {
                recording: Recording::default(),
                saved: None,
                write_error: Some(RecordingError::Io {
                    op: "writing the recording",
                    path: self.journal.unwrap_or_default(),
                    source: std::io::Error::other(
                        "the writer thread panicked; the journal holds what was flushed",
                    ),
                }),
                outcome: Outcome::default(),
            },
        }
    }
}

fn writer_loop(
    rx: mpsc::Receiver<Msg>,
    mut journal: Option<JournalWriter>,
    direct: Option<PathBuf>,
    mut rec: Recording,
    mut on_progress: ProgressFn,
) -> SinkDone {
    let mut pipeline = Pipeline::new(Options::default());
    let mut write_error: Option<RecordingError> = None;
    let mut progress = Progress::default();
    let mut unreported = 0usize;
    let mut dirty = false;
    let mut last_flush = Instant::now();
    let mut last_report = Instant::now();
    let remember = |err: RecordingError, slot: &mut Option<RecordingError>| {
        if slot.is_none() {
            *slot = Some(err);
        }
    };
    let notes = loop {
        let wait = FLUSH_INTERVAL.saturating_sub(last_flush.elapsed());
        match rx.recv_timeout(wait) {
            Ok(Msg::Chunk(chunk)) => {
                if let Some(j) = journal.as_mut()
                    && let Err(e) = j.append_chunk(&chunk)
                {
                    remember(e, &mut write_error);
                }
                dirty = true;
                pipeline.feed(&chunk.bytes, chunk.t_micros);
                progress.bytes += chunk.bytes.len() as u64;
                progress.chunks += 1;
                rec.chunks.push(chunk);
                unreported += 1;
            }
            Ok(Msg::Response(resp)) => {
                if let Some(j) = journal.as_mut()
                    && let Err(e) = j.set_response(&resp)
                {
                    remember(e, &mut write_error);
                }
                rec.response = Some(resp);
            }
            Ok(Msg::Finish(notes)) => break Some(notes),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break None,
        }
        if last_flush.elapsed() >= FLUSH_INTERVAL {
            if dirty
                && let Some(j) = journal.as_mut()
                && let Err(e) = j.flush()
            {
                remember(e, &mut write_error);
            }
            dirty = false;
            last_flush = Instant::now();
        }
        if unreported > 0 && last_report.elapsed() >= FLUSH_INTERVAL {
            (progress.events, progress.calls) = pipeline.progress();
            on_progress(&rec.chunks[rec.chunks.len() - unreported..], progress);
            unreported = 0;
            last_report = Instant::now();
        }
    };
    (progress.events, progress.calls) = pipeline.progress();
    if unreported > 0 {
        on_progress(&rec.chunks[rec.chunks.len() - unreported..], progress);
    }
    let outcome = pipeline.finish();
    let Some(notes) = notes else {
        // The network side vanished: keep the journal for salvage, as after a crash.
        if let Some(mut j) = journal
            && let Err(e) = j.flush()
        {
            remember(e, &mut write_error);
        }
        return SinkDone {
            recording: rec,
            saved: None,
            write_error,
            outcome,
        };
    };
    rec.meta.notes.extend(notes);
    if rec.meta.dialect.is_empty() && outcome.dialect_known {
        rec.meta.dialect = outcome.dialect.name().to_owned();
    }
    let saved = match journal {
        Some(j) if write_error.is_none() => match j.finish(&rec) {
            Ok(path) => Some(path),
            Err(e) => {
                remember(e, &mut write_error);
                None
            }
        },
        Some(j) => {
            // The journal is incomplete (a write failed): still try to save everything we hold,
            // leaving the journal in place as well.
            let path = j.final_path().to_path_buf();
            match recording::save_with(&path, &rec, WriteOptions::private(j.overwrite())) {
                Ok(()) => Some(path),
                Err(e) => {
                    remember(e, &mut write_error);
                    None
                }
            }
        }
        // Standard output or a device: written once, straight.
        None => direct.and_then(|path| {
            match recording::save_with(&path, &rec, WriteOptions::private(true)) {
                Ok(()) => Some(path),
                Err(e) => {
                    remember(e, &mut write_error);
                    None
                }
            }
        }),
    };
    SinkDone {
        recording: rec,
        saved,
        write_error,
        outcome,
    }
}
