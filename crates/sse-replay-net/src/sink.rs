//! The recording writer thread shared by the recorder and the proxy.
//!
//! The network task stamps each read with its arrival time and sends it here; this thread appends
//! it to the crash-safe journal ([`JournalWriter`]) and feeds the lean pipeline for live progress.
//!
//! What "lost" means after a SIGKILL is data the process had received but the OS did not hold: so
//! each batch of reads is handed to the OS (`write`) as soon as the writer has taken what is waiting
//! in its channel (at most [`BATCH_LIMIT`] later, under a flood) — a killed recorder loses only the
//! reads still in flight inside the process, a few milliseconds' worth. Syncing to the disk
//! (`fdatasync`, against a machine crash) runs every [`FLUSH_INTERVAL`] on a helper thread with its
//! own handle on the journal, so a slow disk never stalls the writer (a stall of the writer is what
//! let the loss exceed 100 ms before). [`Sink::finish`] writes the final document atomically and
//! removes the journal. If the network side disappears without finishing (a panic), the journal is
//! flushed and left for salvage, like after a crash.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sse_replay_core::pipeline::{Options, Pipeline, PipelineOutput};
use sse_replay_core::recording::{
    self, Chunk, JournalWriter, OutputTarget, Recording, RecordingError, ResponseInfo, WriteOptions,
};

/// How often written journal records are synced to disk, and how often progress is reported.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// Longest the writer keeps taking queued reads before handing them to the OS (under a flood of
/// reads; otherwise each batch is written out as soon as the queue is empty).
pub const BATCH_LIMIT: Duration = Duration::from_millis(10);

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
    pub outcome: PipelineOutput,
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
        self.tx.send(Msg::Response(resp)).ok();
    }

    /// Hands over one read. Never blocks.
    pub fn chunk(&self, chunk: Chunk) {
        self.tx.send(Msg::Chunk(chunk)).ok();
    }

    /// Writes nothing: stops the writer and removes the journal. For an exchange that never got a
    /// response (connection refused, no answer before the timeout): an empty recording would only
    /// say "nothing happened" in a file the user has to clean up. Returns the removal error, if any.
    pub fn abandon(self) -> Option<RecordingError> {
        let Sink {
            tx,
            thread,
            journal,
        } = self;
        // Without a Finish message the writer flushes the journal and ends without saving.
        drop(tx);
        thread.join().ok();
        let path = journal?;
        match std::fs::remove_file(&path) {
            Ok(()) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => Some(RecordingError::Io {
                op: "removing",
                path,
                source,
            }),
        }
    }

    /// Adds `notes` to the recording, saves it atomically and removes the journal. Blocks until the
    /// file is written (call from a blocking context).
    pub fn finish(self, notes: Vec<String>) -> SinkDone {
        self.tx.send(Msg::Finish(notes)).ok();
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
                outcome: PipelineOutput::default(),
            },
        }
    }
}

/// Syncs the journal to disk from its own thread: after each write-out the writer pokes it; it
/// syncs at most every [`FLUSH_INTERVAL`], and returns the first sync error when the writer hangs
/// up.
struct Syncer {
    poke: mpsc::Sender<()>,
    thread: JoinHandle<Option<std::io::Error>>,
}

impl Syncer {
    fn start(file: std::fs::File) -> std::io::Result<Self> {
        let (poke, pokes) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sse-replay-sync".into())
            .spawn(move || {
                let mut first_error = None;
                while pokes.recv().is_ok() {
                    while pokes.try_recv().is_ok() {}
                    let started = Instant::now();
                    if let Err(e) = file.sync_data()
                        && first_error.is_none()
                    {
                        first_error = Some(e);
                    }
                    std::thread::sleep(FLUSH_INTERVAL.saturating_sub(started.elapsed()));
                }
                first_error
            })?;
        Ok(Self { poke, thread })
    }

    fn poke(&self) {
        self.poke.send(()).ok();
    }

    /// Stops the thread; the first sync error, if any.
    fn stop(self) -> Option<std::io::Error> {
        drop(self.poke);
        self.thread
            .join()
            .unwrap_or_else(|_| Some(std::io::Error::other("the journal sync thread panicked")))
    }
}

/// What one message did to the writer loop.
enum LoopControl {
    Continue,
    Finish(Vec<String>),
}

/// The writer thread's state.
struct Writer {
    journal: Option<JournalWriter>,
    rec: Recording,
    pipeline: Pipeline,
    progress: Progress,
    unreported: usize,
    write_error: Option<RecordingError>,
    /// Records were appended since the last write-out.
    dirty: bool,
}

impl Writer {
    fn remember(&mut self, err: RecordingError) {
        if self.write_error.is_none() {
            self.write_error = Some(err);
        }
    }

    fn journal_path(&self) -> PathBuf {
        self.journal
            .as_ref()
            .map(|j| j.journal_path().to_path_buf())
            .unwrap_or_default()
    }

    fn handle(&mut self, msg: Msg) -> LoopControl {
        match msg {
            Msg::Chunk(chunk) => {
                if let Some(Err(e)) = self.journal.as_mut().map(|j| j.append_chunk(&chunk)) {
                    self.remember(e);
                }
                self.pipeline.feed(&chunk.bytes, chunk.t_micros);
                self.progress.bytes += chunk.bytes.len() as u64;
                self.progress.chunks += 1;
                self.rec.chunks.push(chunk);
                self.unreported += 1;
                self.dirty = true;
                LoopControl::Continue
            }
            Msg::Response(resp) => {
                if let Some(Err(e)) = self.journal.as_mut().map(|j| j.set_response(&resp)) {
                    self.remember(e);
                }
                self.rec.response = Some(resp);
                LoopControl::Continue
            }
            Msg::Finish(notes) => LoopControl::Finish(notes),
        }
    }

    /// Reports the chunks not reported yet, with the counts so far.
    fn report(&mut self, on_progress: &mut ProgressFn) {
        if self.unreported > 0 {
            (self.progress.events, self.progress.calls) = self.pipeline.progress();
            on_progress(
                &self.rec.chunks[self.rec.chunks.len() - self.unreported..],
                self.progress,
            );
            self.unreported = 0;
        }
    }
}

fn writer_loop(
    rx: mpsc::Receiver<Msg>,
    journal: Option<JournalWriter>,
    direct: Option<PathBuf>,
    rec: Recording,
    mut on_progress: ProgressFn,
) -> SinkDone {
    let mut w = Writer {
        journal,
        rec,
        pipeline: Pipeline::new(Options::default()),
        progress: Progress::default(),
        unreported: 0,
        write_error: None,
        dirty: false,
    };
    let mut last_report = Instant::now();
    let syncer = match w.journal.as_ref().map(JournalWriter::sync_handle) {
        Some(Ok(file)) => match Syncer::start(file) {
            Ok(s) => Some(s),
            Err(source) => {
                let path = w.journal_path();
                w.remember(RecordingError::Io {
                    op: "starting the sync thread for",
                    path,
                    source,
                });
                None
            }
        },
        Some(Err(e)) => {
            w.remember(e);
            None
        }
        None => None,
    };
    let notes = loop {
        let wait = FLUSH_INTERVAL.saturating_sub(last_report.elapsed());
        let mut step = match rx.recv_timeout(wait) {
            Ok(msg) => w.handle(msg),
            Err(RecvTimeoutError::Timeout) => LoopControl::Continue,
            Err(RecvTimeoutError::Disconnected) => break None,
        };
        // Take whatever else is already queued (bounded in time), then write the batch out.
        let batch_started = Instant::now();
        let mut disconnected = false;
        while matches!(step, LoopControl::Continue) && batch_started.elapsed() < BATCH_LIMIT {
            match rx.try_recv() {
                Ok(msg) => step = w.handle(msg),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    disconnected = true;
                    break;
                }
            }
        }
        if let Some(result) = w
            .journal
            .as_mut()
            .filter(|_| w.dirty)
            .map(JournalWriter::write_out)
        {
            w.dirty = false;
            match result {
                Ok(()) => {
                    if let Some(s) = &syncer {
                        s.poke();
                    }
                }
                Err(e) => w.remember(e),
            }
        }
        if let LoopControl::Finish(notes) = step {
            break Some(notes);
        }
        if disconnected {
            break None;
        }
        if last_report.elapsed() >= FLUSH_INTERVAL {
            w.report(&mut on_progress);
            last_report = Instant::now();
        }
    };
    if let Some(source) = syncer.and_then(Syncer::stop) {
        let path = w.journal_path();
        w.remember(RecordingError::Io {
            op: "syncing",
            path,
            source,
        });
    }
    w.report(&mut on_progress);
    let Writer {
        journal,
        mut rec,
        pipeline,
        mut write_error,
        ..
    } = w;
    let remember = |err: RecordingError, slot: &mut Option<RecordingError>| {
        if slot.is_none() {
            *slot = Some(err);
        }
    };
    let mut outcome = pipeline.finish();
    // A non-streaming response (one complete JSON document): its calls are read directly.
    if sse_replay_core::complete::chunks_are_complete(rec.chunks.iter().map(|c| c.bytes.as_slice()))
        && let Some(whole) = sse_replay_core::complete::outcome(
            &rec.body(),
            rec.chunks.len() as u32,
            rec.chunks.last().map_or(0, |c| c.t_micros),
            None,
            &[],
        )
    {
        outcome = whole;
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn chunk(i: u64) -> Chunk {
        Chunk {
            t_micros: i * 10,
            bytes: format!("data: {{\"n\":{i},\"pad\":\"{}\"}}\n\n", "x".repeat(60)).into_bytes(),
        }
    }

    #[test]
    fn the_journal_holds_each_read_soon_after_it_arrives_and_the_final_file_all() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("s.ron");
        let sink =
            Sink::start(Some(&out), false, Recording::default(), Box::new(|_, _| {})).unwrap();
        let journal = sink.journal_path().unwrap().to_path_buf();
        for i in 0..5 {
            sink.chunk(chunk(i));
        }
        // Written out once the writer has drained its queue: well before the sync interval.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let on_disk = Recording::load(&journal).map_or(0, |r| r.chunks.len());
            if on_disk == 5 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{on_disk} of 5 chunks in the journal"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        let done = sink.finish(vec!["n".into()]);
        assert!(done.write_error.is_none(), "{:?}", done.write_error);
        assert_eq!(done.saved.as_deref(), Some(out.as_path()));
        assert!(!journal.exists());
        let rec = Recording::load(&out).unwrap();
        assert_eq!(rec.chunks, (0..5).map(chunk).collect::<Vec<_>>());
    }

    /// Measurement (notes): the writer's cost per read under a flood.
    /// `cargo test --release --lib -- --ignored --nocapture writer_cost`
    #[test]
    #[ignore = "measurement; run with --ignored --nocapture"]
    fn writer_cost_per_read() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("flood.ron");
        let n = 200_000u64;
        let started = Instant::now();
        let sink =
            Sink::start(Some(&out), false, Recording::default(), Box::new(|_, _| {})).unwrap();
        for i in 0..n {
            sink.chunk(chunk(i));
        }
        let sent = started.elapsed();
        let done = sink.finish(vec![]);
        let total = started.elapsed();
        assert!(done.write_error.is_none());
        println!(
            "{n} reads: handing over {:.2} µs/read, journalled and saved {:.2} µs/read",
            sent.as_secs_f64() * 1e6 / n as f64,
            total.as_secs_f64() * 1e6 / n as f64
        );
    }
}
