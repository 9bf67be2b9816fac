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
//!
//! Memory does not grow with the stream: the chunks live in the journal on disk (for standard
//! output, a device or a FIFO, in an unnamed spool file), the final document is written from it
//! one chunk at a time, and the writer keeps only the reads not yet reported, the lean
//! pipeline's state (which keeps no call's arguments: it counts calls and decides the ending,
//! and the calls are counted at the end, not collected) and, while the body may still be one complete JSON document, a bounded copy
//! of it. The network side waits for the writer ([`Sink::send`]) when more than
//! [`IN_FLIGHT_BYTES`] are queued, so a fast upstream cannot outrun the disk into memory. Only a
//! sink with no output keeps the recording in memory (the caller asked for that).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sse_replay_core::pipeline::{Options, Pipeline, PipelineOutput};
use sse_replay_core::recording::{
    self, Chunk, JournalWriter, OutputFile, OutputTarget, Recording, RecordingError, ResponseInfo,
    WriteOptions,
};

/// How often written journal records are synced to disk, and how often progress is reported.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// Longest the writer keeps taking queued reads before handing them to the OS (under a flood of
/// reads; otherwise each batch is written out as soon as the queue is empty).
pub const BATCH_LIMIT: Duration = Duration::from_millis(10);

/// Most bytes handed to the writer and not yet written ([`Sink::send`] waits beyond it).
pub const IN_FLIGHT_BYTES: usize = 4 << 20;

/// Reads reported to the progress callback at once at most (it is called early when more
/// arrived within one [`FLUSH_INTERVAL`]).
const REPORT_BYTES: usize = 1 << 20;

/// What one read costs in memory beyond its bytes while it waits (in the channel, then among the
/// reads not yet reported): its message in the channel's slot and its buffer's allocation, about
/// 100 bytes. Counted with its bytes against [`IN_FLIGHT_BYTES`] and the progress report's share,
/// so a stream of tiny reads holds no more than one of large reads: counting the bytes alone let
/// four million one-byte reads wait at once, about 100 bytes each.
pub const READ_COST_BYTES: usize = 128;

/// A read of `len` bytes as counted against the budgets: its bytes and [`READ_COST_BYTES`].
fn read_cost(len: usize) -> usize {
    len.saturating_add(READ_COST_BYTES).min(IN_FLIGHT_BYTES)
}

/// The longest body kept in memory while it may be one complete (non-streaming) JSON response,
/// to read its calls at the end; past it, or once the body is plainly a stream, none is kept.
const MAX_COMPLETE_BYTES: usize = 64 << 20;

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
    /// A read, and the budget it took ([`Sink::send`]), given back once it is written.
    Chunk(Chunk, usize),
    Finish(Vec<String>),
}

/// Where the chunks go as they arrive.
enum Store {
    /// A file output: its journal `<out>.partial`, turned into the document at the end.
    Journal(JournalWriter),
    /// Standard output, a device or a FIFO (opened at the start): the chunks in a spool file,
    /// the document written to `out` at the end.
    Direct {
        out: OutputFile,
        spool: JournalWriter,
    },
    /// No output: the recording in memory.
    Memory(Vec<Chunk>),
}

impl Store {
    fn journal(&self) -> Option<&JournalWriter> {
        match self {
            Store::Journal(j) | Store::Direct { spool: j, .. } => Some(j),
            Store::Memory(_) => None,
        }
    }

    fn journal_mut(&mut self) -> Option<&mut JournalWriter> {
        match self {
            Store::Journal(j) | Store::Direct { spool: j, .. } => Some(j),
            Store::Memory(_) => None,
        }
    }
}

/// What the writer produced.
#[derive(Debug)]
pub struct SinkDone {
    /// The recording's head (meta, request, response). Its chunks are in the saved file; only a
    /// sink without an output holds them here.
    pub recording: Recording,
    /// Body bytes and reads received (the recording's, also when its chunks are not held here).
    pub progress: Progress,
    /// Where it was saved (`None` without an output path, or when writing failed).
    pub saved: Option<PathBuf>,
    /// The first write error; the journal may still hold what was flushed before it.
    pub write_error: Option<RecordingError>,
    /// The lean pipeline's outcome over the whole body (finish, provider error, events...). It
    /// keeps no call's arguments, nor the calls themselves: their number is [`SinkDone::calls`].
    pub outcome: PipelineOutput,
    /// The tool calls the body held.
    pub calls: usize,
}

/// Handle to the writer thread. See the module documentation.
pub struct Sink {
    tx: mpsc::Sender<Msg>,
    thread: JoinHandle<SinkDone>,
    journal: Option<PathBuf>,
    /// Bytes the network side may still hand over before it waits for the writer.
    budget: std::sync::Arc<tokio::sync::Semaphore>,
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
    /// is false. `out` = `-` (standard output) or a device / FIFO is opened now (a FIFO nobody
    /// reads is [`RecordingError::NoReader`] at once: the caller may wait for a reader and try
    /// again) and gets a spool file instead of a journal: the recording is written there once,
    /// at the end. Without `out` the recording is kept in memory.
    pub fn start(
        out: Option<&Path>,
        overwrite: bool,
        head: Recording,
        on_progress: ProgressFn,
    ) -> Result<Self, RecordingError> {
        let store = match out {
            Some(path) => match recording::output_target(path, overwrite)? {
                OutputTarget::Stdout | OutputTarget::Special => {
                    let out = OutputFile::try_create(path, WriteOptions::private(true))?;
                    Store::Direct {
                        out,
                        spool: JournalWriter::spool(&head)?,
                    }
                }
                OutputTarget::New | OutputTarget::Replace => {
                    Store::Journal(JournalWriter::create_with(path, &head, overwrite)?)
                }
            },
            None => Store::Memory(Vec::new()),
        };
        let journal_path = match &store {
            Store::Journal(j) => Some(j.journal_path().to_path_buf()),
            _ => None,
        };
        let budget = std::sync::Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT_BYTES));
        let writer_budget = budget.clone();
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("sse-replay-writer".into())
            .spawn(move || writer_loop(rx, store, head, on_progress, writer_budget))
            .map_err(|source| RecordingError::Io {
                op: "starting the writer thread",
                path: out.unwrap_or(Path::new(".")).to_path_buf(),
                source,
            })?;
        Ok(Self {
            tx,
            thread,
            journal: journal_path,
            budget,
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

    /// Hands over one read. Never blocks (for reads already held in memory: a complete JSON
    /// answer); a network loop hands its reads over with [`Sink::send`].
    pub fn chunk(&self, chunk: Chunk) {
        self.tx.send(Msg::Chunk(chunk, 0)).ok();
    }

    /// Hands over one read, first waiting while reads costing more than [`IN_FLIGHT_BYTES`]
    /// ([`READ_COST_BYTES`] each beyond their bytes) wait to be written: a fast upstream is slowed
    /// to the disk's pace rather than queued in memory.
    pub async fn send(&self, chunk: Chunk) {
        let want = read_cost(chunk.bytes.len());
        let permits = u32::try_from(want).unwrap_or(u32::MAX);
        match self.budget.acquire_many(permits).await {
            Ok(p) => {
                // Given back by the writer once the read is written.
                p.forget();
                self.tx.send(Msg::Chunk(chunk, permits as usize)).ok();
            }
            Err(_) => {
                self.tx.send(Msg::Chunk(chunk, 0)).ok();
            }
        }
    }

    /// Writes nothing: stops the writer and removes the journal. For an exchange that never got a
    /// response (connection refused, no answer before the timeout): an empty recording would only
    /// say "nothing happened" in a file the user has to clean up. Returns the removal error, if any.
    pub fn abandon(self) -> Option<RecordingError> {
        let Sink {
            tx,
            thread,
            journal,
            ..
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
                calls: 0,
                progress: Progress::default(),
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
    store: Store,
    /// The recording's head: meta, request, response (no chunks).
    head: Recording,
    pipeline: Pipeline,
    progress: Progress,
    /// Reads not yet reported, and what they cost ([`read_cost`]).
    unreported: Vec<Chunk>,
    unreported_bytes: usize,
    /// The body so far while it may be one complete JSON document (see [`MAX_COMPLETE_BYTES`]).
    complete: Option<Vec<u8>>,
    last_t: u64,
    write_error: Option<RecordingError>,
    /// Records were appended since the last write-out.
    dirty: bool,
    budget: std::sync::Arc<tokio::sync::Semaphore>,
}

impl Writer {
    fn remember(&mut self, err: RecordingError) {
        if self.write_error.is_none() {
            self.write_error = Some(err);
        }
    }

    fn journal_path(&self) -> PathBuf {
        self.store
            .journal()
            .map(|j| j.journal_path().to_path_buf())
            .unwrap_or_default()
    }

    /// Keeps a copy of the body while it may be one complete JSON document, and drops it for
    /// good once it is plainly a stream (its first byte, or a second document after the first)
    /// or too long.
    fn keep_for_complete(&mut self, bytes: &[u8]) {
        let Some(body) = self.complete.as_mut() else {
            return;
        };
        let before = body.len();
        body.extend_from_slice(bytes);
        let grew_past = |n: usize| before < n && body.len() >= n;
        let check = (0..40).map(|k| 4096usize << k).any(grew_past);
        // Its first byte decides: a document opens with `{`.
        if !sse_replay_core::content::may_open_document(body)
            || body.len() > MAX_COMPLETE_BYTES
            || (check && !sse_replay_core::content::may_be_one_document(body))
        {
            self.complete = None;
        }
    }

    fn handle(&mut self, msg: Msg) -> LoopControl {
        match msg {
            Msg::Chunk(chunk, permits) => {
                if let Some(j) = self.store.journal_mut()
                    && let Err(e) = j.append_chunk(&chunk)
                {
                    self.remember(e);
                }
                self.pipeline.feed(&chunk.bytes, chunk.t_micros);
                self.keep_for_complete(&chunk.bytes);
                self.progress.bytes += chunk.bytes.len() as u64;
                self.progress.chunks += 1;
                self.last_t = chunk.t_micros;
                self.unreported_bytes += read_cost(chunk.bytes.len());
                if let Store::Memory(chunks) = &mut self.store {
                    chunks.push(chunk.clone());
                }
                self.unreported.push(chunk);
                self.dirty = true;
                self.budget.add_permits(permits);
                LoopControl::Continue
            }
            Msg::Response(resp) => {
                if let Some(Err(e)) = self.store.journal_mut().map(|j| j.set_response(&resp)) {
                    self.remember(e);
                }
                self.head.response = Some(resp);
                LoopControl::Continue
            }
            Msg::Finish(notes) => LoopControl::Finish(notes),
        }
    }

    /// Reports the chunks not reported yet, with the counts so far, and lets them go.
    fn report(&mut self, on_progress: &mut ProgressFn) {
        if !self.unreported.is_empty() {
            (self.progress.events, self.progress.calls) = self.pipeline.progress();
            on_progress(&self.unreported, self.progress);
            self.unreported.clear();
            self.unreported_bytes = 0;
            if self.unreported.capacity() > 1024 {
                self.unreported.shrink_to(64);
            }
        }
    }
}

fn writer_loop(
    rx: mpsc::Receiver<Msg>,
    store: Store,
    head: Recording,
    mut on_progress: ProgressFn,
    budget: std::sync::Arc<tokio::sync::Semaphore>,
) -> SinkDone {
    let mut w = Writer {
        store,
        head,
        // The summary needs the number of calls and the ending, never the arguments: kept, a
        // long call's arguments grew with the stream (a fifth to a half of its bytes).
        pipeline: Pipeline::new(Options::default()).without_arguments(),
        progress: Progress::default(),
        unreported: Vec::new(),
        unreported_bytes: 0,
        complete: Some(Vec::new()),
        last_t: 0,
        write_error: None,
        dirty: false,
        budget,
    };
    let mut last_report = Instant::now();
    let syncer = match &w.store {
        Store::Journal(j) => match j.sync_handle() {
            Ok(file) => match Syncer::start(file) {
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
            Err(e) => {
                w.remember(e);
                None
            }
        },
        // A spool is not for salvage (it goes with the process): no sync.
        _ => None,
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
        while matches!(step, LoopControl::Continue)
            && batch_started.elapsed() < BATCH_LIMIT
            && w.unreported_bytes < REPORT_BYTES
        {
            match rx.try_recv() {
                Ok(msg) => step = w.handle(msg),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    disconnected = true;
                    break;
                }
            }
        }
        if w.dirty {
            w.dirty = false;
            if let Some(result) = w.store.journal_mut().map(JournalWriter::write_out) {
                match result {
                    Ok(()) => {
                        if let Some(s) = &syncer {
                            s.poke();
                        }
                    }
                    Err(e) => w.remember(e),
                }
            }
        }
        if let LoopControl::Finish(notes) = step {
            break Some(notes);
        }
        if disconnected {
            break None;
        }
        if last_report.elapsed() >= FLUSH_INTERVAL || w.unreported_bytes >= REPORT_BYTES {
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
        store,
        mut head,
        pipeline,
        mut write_error,
        progress,
        complete,
        last_t,
        ..
    } = w;
    let remember = |err: RecordingError, slot: &mut Option<RecordingError>| {
        if slot.is_none() {
            *slot = Some(err);
        }
    };
    // Counted one by one, none kept.
    let mut calls = 0;
    let mut outcome = pipeline.finish_each(|_| calls += 1);
    // A non-streaming response (one complete JSON document): its calls are read directly.
    if let Some(body) = complete
        && sse_replay_core::complete::chunks_are_complete(std::iter::once(body.as_slice()))
        && let Some(whole) = sse_replay_core::complete::outcome(
            &body,
            u32::try_from(progress.chunks).unwrap_or(u32::MAX),
            last_t,
            None,
            &[],
        )
    {
        calls = whole.calls.len();
        outcome = whole;
    }
    let done = |recording, saved, write_error, outcome| SinkDone {
        recording,
        progress,
        saved,
        write_error,
        outcome,
        calls,
    };
    let Some(notes) = notes else {
        // The network side vanished: keep the journal for salvage, as after a crash.
        match store {
            Store::Journal(mut j) => {
                if let Err(e) = j.flush() {
                    remember(e, &mut write_error);
                }
            }
            Store::Memory(chunks) => head.chunks = chunks,
            Store::Direct { .. } => {}
        }
        return done(head, None, write_error, outcome);
    };
    head.meta.notes.extend(notes);
    if head.meta.dialect.is_empty() && outcome.dialect_known {
        head.meta.dialect = outcome.dialect.name().to_owned();
    }
    let saved = match store {
        // On error the journal stays for salvage.
        Store::Journal(j) if write_error.is_none() => match j.finish(&head) {
            Ok(path) => Some(path),
            Err(e) => {
                remember(e, &mut write_error);
                None
            }
        },
        // The journal is incomplete (a write failed): it stays in place, as it is, for salvage.
        Store::Journal(mut j) => {
            j.flush().ok();
            None
        }
        // Standard output, a device or a FIFO: written once, from the spool.
        Store::Direct { mut out, mut spool } => {
            let path = out.path().to_path_buf();
            match spool
                .write_document(&head, &mut out)
                .and_then(|()| out.commit())
            {
                Ok(()) => Some(path),
                Err(e) => {
                    remember(e, &mut write_error);
                    None
                }
            }
        }
        Store::Memory(chunks) => {
            head.chunks = chunks;
            None
        }
    };
    done(head, saved, write_error, outcome)
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

    /// A writer that cannot keep up stops the network side once the reads waiting for it cost
    /// the budget, their own size counted with their bytes: tiny reads wait in no greater number
    /// than their cost allows (counted by bytes alone, four million one-byte reads could wait).
    #[test]
    fn tiny_reads_wait_within_the_budget_counted_with_their_cost() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("tiny.ron");
        // The progress callback runs on the writer thread: holding it there stalls the writer.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let held = std::sync::Mutex::new(held);
        let sink = Sink::start(
            Some(&out),
            false,
            Recording::default(),
            Box::new(move |_, _| {
                held.lock().unwrap().recv().ok();
            }),
        )
        .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let most = (IN_FLIGHT_BYTES + REPORT_BYTES) / READ_COST_BYTES + 64;
        let sent = rt.block_on(async {
            let mut sent = 0usize;
            while sent <= 4 * most {
                let read = Chunk {
                    t_micros: sent as u64,
                    bytes: vec![b'x'],
                };
                let handed = tokio::time::timeout(Duration::from_millis(500), sink.send(read));
                if handed.await.is_err() {
                    break;
                }
                sent += 1;
            }
            sent
        });
        drop(release);
        let done = sink.finish(Vec::new());
        assert!(done.write_error.is_none(), "{:?}", done.write_error);
        assert!(
            sent <= most,
            "{sent} one-byte reads waited (at most {most})"
        );
        assert!(
            sent > IN_FLIGHT_BYTES / (2 * READ_COST_BYTES),
            "{sent} reads"
        );
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
