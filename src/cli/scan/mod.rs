//! `sse-replay scan`: every stream of every file under the paths, analysed in parallel, as rows
//! of three tables ([`sse_replay_core::scan`]) written as they are made, or summarised.
//!
//! Three kinds of thread: one lists the files (walking folders, or reading `--files-from`) into
//! a bounded channel; `-j` workers each take a file, analyse its streams and send their rows into
//! a second bounded channel; this thread writes the rows, counts them into the summary and draws
//! the progress line. Both channels are bounded, so memory holds at most a few files' rows in
//! flight, whatever the number of files; a stream's analysis is dropped once its rows are made.
//!
//! The rows come out in the order the files were listed, whatever `-j`: each file has a number,
//! the writer holds the files that finish early until those before them are written, and the
//! lister runs at most [`WINDOW_PER_JOB`] × `-j` files ahead of the writer, so what is held stays
//! bounded. A file is named by its path under the path it was found from (that folder's own name
//! first), so the same folder gives the same names however it was typed, and a file reached twice
//! (a folder and a file in it, one folder under two spellings) is scanned once.

mod sink;

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, fail, shared};
use sse_replay_core::scan::{self, ScanOptions, StreamRow, StreamRows, Summary};

pub use sink::TableFormat;
use sink::{Sink, SinkError};

/// `scan` arguments.
#[derive(Debug, Args)]
#[command(
    mut_arg(shared::EVENT_LIMIT_ID, |a| a.help(shared::EventLimitArg::SCAN_HELP)),
    mut_arg(shared::INPUT_LIMIT_ID, |a| a.help(shared::InputLimitArg::SCAN_HELP)),
)]
pub struct ScanArgs {
    /// Files and folders to scan. Folders are walked recursively (hidden entries skipped, links
    /// to folders not followed) for recordings (.ron), journals (.partial), raw bodies (.sse,
    /// .txt, .jsonl, .ndjson), complete responses (.json) and captures (.har, .yaml, .yml, .jsonl);
    /// files named here are scanned whatever their extension.
    #[arg(required_unless_present_any = ["files_from", "schema"])]
    pub paths: Vec<PathBuf>,
    /// Write the three tables into this folder (streams, calls, findings, as --format), or `-`:
    /// every row as a JSON line on standard output, tagged with its table (needs --format
    /// jsonl). Without it, the summary is printed.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// The tables' format.
    #[arg(long, default_value = "parquet")]
    pub format: TableFormat,
    /// Files analysed at once (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,
    /// Also scan the paths listed in FILE, one per line (`-`: standard input). A line
    /// `PATH<TAB>NAME` scans PATH and names it NAME in the tables (a staged copy of a remote
    /// object). Listed files are taken as found in a folder: one that is not a capture is
    /// skipped.
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,
    /// Print the summary as one JSON object (counts, shares' numerators and denominators, time
    /// to the first call in µs) instead of the table.
    #[arg(long, conflicts_with = "output")]
    pub json: bool,
    /// Replace the table files if they exist (without it, existing ones are refused with exit 2).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub max_event_bytes: shared::EventLimitArg,
    #[command(flatten)]
    pub max_input_bytes: shared::InputLimitArg,
    /// When to exit 1: `not-ok` (a stream is not OK or a file could not be read; the default),
    /// `unreadable` (only when a file could not be read), `never` (0 whatever the rows say).
    /// Skipped entries (not captures) never fail. Usage and output errors exit 2 and 1 anyway.
    #[arg(long, value_name = "WHEN", default_value = "not-ok")]
    pub fail_on: FailOn,
    /// The `scan_id` column of every row (default: the start time, UTC, and the process id,
    /// `20250131-120000-1a2b`): give one id to every part of a job (the Spark job does).
    #[arg(long, value_name = "ID")]
    pub scan_id: Option<String>,
    /// Print the tables' schema (version, columns, types, meaning) as JSON and exit.
    #[arg(long, conflicts_with_all = ["output", "json"])]
    pub schema: bool,
}

/// When `scan` exits 1 (`--fail-on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A stream is not OK, or a file could not be read.
    NotOk,
    /// A file could not be read.
    Unreadable,
    /// Never: the rows say what happened.
    Never,
}

/// A file to scan, or one that cannot be listed, numbered in listing order.
struct Job {
    /// Its place in the listing: the rows are written in this order.
    seq: u64,
    what: JobKind,
}

enum JobKind {
    /// Scan `path`, naming it `name` in the tables; `walked`: found in a folder (so a body in
    /// which nothing is recognised is skipped as not a capture).
    Scan {
        path: PathBuf,
        name: String,
        walked: bool,
    },
    /// A path that could not be listed or read: its row.
    Failed { name: String, error: String },
    /// A folder entry that is not read: its `skipped` row.
    Skipped { name: String, why: String },
    /// A file left unread for its extension: counted, no row.
    Other,
}

/// What a worker sends to the writer: one file's rows, all of them.
struct Done {
    seq: u64,
    rows: Vec<StreamRows>,
    /// A file left unread for its extension.
    other: bool,
}

/// The lister runs at most this many files per worker ahead of the writer.
const WINDOW_PER_JOB: u64 = 8;

/// How many files the writer has written, in listing order; the lister waits on it to stay
/// within the window.
#[derive(Default)]
struct Written {
    count: Mutex<u64>,
    changed: Condvar,
}

impl Written {
    fn set(&self, n: u64) {
        if let Ok(mut c) = self.count.lock() {
            *c = n;
        }
        self.changed.notify_all();
    }

    /// Wait until file `seq` is within `window` of the files written.
    fn wait_for(&self, seq: u64, window: u64) {
        let Ok(mut c) = self.count.lock() else { return };
        while seq >= c.saturating_add(window) {
            c = match self.changed.wait(c) {
                Ok(c) => c,
                Err(_) => return,
            };
        }
    }
}

/// Runs `scan`.
#[allow(
    clippy::print_stdout,
    reason = "the command line: its reports and messages are printed here"
)]
pub(crate) fn run(a: &ScanArgs) -> ExitCode {
    if a.schema {
        let text = serde_json::to_string_pretty(&scan::schema::schema_json()).unwrap_or_default();
        println!("{text}");
        return ExitCode::from(EXIT_OK);
    }
    let to_stdout = a.output.as_deref().is_some_and(|o| o.as_os_str() == "-");
    if to_stdout && a.format != TableFormat::Jsonl {
        return fail(
            EXIT_INPUT,
            "-o - writes JSON lines: give --format jsonl (Parquet and CSV go into a folder)",
        );
    }
    // A path named on the command line that is not there is a usage error, said at once and
    // before anything is written (no empty output folder is left behind); a path read from
    // --files-from is a row: the list may name what has gone since.
    for p in &a.paths {
        if let Err(e) = std::fs::metadata(p) {
            return fail(EXIT_INPUT, format!("cannot read {}: {e}", p.display()));
        }
    }
    super::signals::remove_temp_files_on_interrupt();
    let sink = match &a.output {
        None => None,
        Some(_) if to_stdout => Some(Sink::stdout()),
        Some(dir) => Some(Sink::folder(dir, a.format, a.force)),
    };
    let mut sink = match sink.transpose() {
        Ok(s) => s,
        Err(e) => return fail(sink_code(&e), e),
    };
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    let options = ScanOptions {
        max_event_bytes: a.max_event_bytes.limit(),
        // As `check`'s input flags: the one default, whatever reads it.
        input_limit: a.max_input_bytes.limit(),
        skip_non_captures: false,
    };
    let progress = Progress::new(std::io::stderr().is_terminal());
    let found = Arc::clone(&progress.found);
    let listed = Arc::clone(&progress.listed);
    let (job_tx, job_rx) = sync_channel::<Job>(jobs * 4);
    let paths = a.paths.clone();
    let files_from = a.files_from.clone();
    let written = Arc::new(Written::default());
    let window = WINDOW_PER_JOB * jobs as u64;
    let lister_written = Arc::clone(&written);
    let lister = std::thread::Builder::new()
        .name("scan: list".into())
        .spawn(move || {
            let mut lister = Lister {
                tx: job_tx,
                found: &found,
                seq: 0,
                seen: HashSet::new(),
                written: &lister_written,
                window,
            };
            lister.list(&paths, files_from.as_deref());
            listed.store(true, Ordering::Relaxed);
        });
    if let Err(e) = lister {
        return fail(EXIT_FAILED, format!("cannot start a thread: {e}"));
    }
    let (done_tx, done_rx) = sync_channel::<Done>(jobs * 4);
    let job_rx = Arc::new(Mutex::new(job_rx));
    for i in 0..jobs {
        let (rx, tx) = (Arc::clone(&job_rx), done_tx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("scan: worker {i}"))
            .spawn(move || work(&rx, &tx, &options));
        if let Err(e) = spawned {
            return fail(EXIT_FAILED, format!("cannot start a thread: {e}"));
        }
    }
    drop(done_tx);
    let mut summary = Summary::default();
    let scan_id = a.scan_id.clone().unwrap_or_else(|| {
        format!(
            "{}-{:x}",
            sse_replay_net::file_stamp_now(),
            std::process::id()
        )
    });
    let collected = collect(
        &done_rx,
        sink.as_mut(),
        &mut summary,
        progress,
        &written,
        &scan_id,
    );
    // Whatever happened, the lister must not wait for the writer any more.
    written.set(u64::MAX);
    if let Err(e) = collected {
        return fail(EXIT_FAILED, e);
    }
    if let Some(sink) = sink
        && let Err(e) = sink.finish()
    {
        return fail(sink_code(&e), e);
    }
    match &a.output {
        None => {
            let text = if a.json {
                serde_json::to_string_pretty(&summary.to_json()).unwrap_or_default() + "\n"
            } else {
                summary.to_text()
            };
            if let Err(e) = std::io::stdout().write_all(text.as_bytes()) {
                return fail(EXIT_FAILED, format!("cannot write the summary: {e}"));
            }
        }
        Some(dir) => {
            let into = if to_stdout {
                "standard output".to_owned()
            } else {
                dir.display().to_string()
            };
            sse_replay_core::log_line!(
                "sse-replay: {}",
                summary.last_line(Some(&sse_replay_core::text::visible(&into)))
            );
        }
    }
    let failed = match a.fail_on {
        FailOn::NotOk => summary.any_not_ok(),
        FailOn::Unreadable => summary.unreadable > 0,
        FailOn::Never => false,
    };
    ExitCode::from(if failed { EXIT_FAILED } else { EXIT_OK })
}

/// Exit code of a failed output: 2 when it exists and `--force` was not given, else 1.
fn sink_code(e: &SinkError) -> u8 {
    if e.is_exists() {
        EXIT_INPUT
    } else {
        EXIT_FAILED
    }
}

/// The writer's loop: every file's rows into the sink and the summary, in listing order, until
/// the workers are done. A file that finishes before those listed ahead of it waits here.
fn collect(
    rx: &Receiver<Done>,
    mut sink: Option<&mut Sink>,
    summary: &mut Summary,
    mut progress: Progress,
    written: &Written,
    scan_id: &str,
) -> Result<(), SinkError> {
    let mut waiting: BTreeMap<u64, Done> = BTreeMap::new();
    let mut next = 0u64;
    while let Ok(done) = rx.recv() {
        waiting.insert(done.seq, done);
        while let Some(mut done) = waiting.remove(&next) {
            if done.other {
                summary.add_other_file();
            } else {
                for rows in &mut done.rows {
                    rows.stream.scan_id = Some(scan_id.to_owned());
                    summary.add(&rows.stream);
                    if let Some(sink) = sink.as_deref_mut() {
                        sink.write(rows)?;
                    }
                }
                summary.add_file();
            }
            next += 1;
            written.set(next);
            progress.file(summary);
        }
    }
    progress.clear();
    Ok(())
}

/// One row of the `streams` table and nothing else.
fn lone_row(stream: StreamRow) -> StreamRows {
    StreamRows {
        stream,
        calls: Vec::new(),
        findings: Vec::new(),
    }
}

/// A worker: files from `rx` until it is empty and closed, each file's rows to `tx`.
fn work(rx: &Mutex<Receiver<Job>>, tx: &SyncSender<Done>, options: &ScanOptions) {
    loop {
        // The lock is held only to take one job.
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(Job { seq, what }) = job else { return };
        let mut rows = Vec::new();
        let mut other = false;
        match what {
            JobKind::Failed { name, error } => {
                rows.push(lone_row(StreamRow::unreadable(&name, &error)));
            }
            JobKind::Skipped { name, why } => rows.push(lone_row(StreamRow::skipped(&name, &why))),
            JobKind::Other => other = true,
            JobKind::Scan { path, name, walked } => {
                let options = ScanOptions {
                    skip_non_captures: walked,
                    ..*options
                };
                // A bug in the analysis of one file must not stop the scan of the others: its
                // row says so (the panic message is on standard error).
                let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    scan::scan_file(&path, &name, &options, |r| rows.push(r))
                }));
                if scanned.is_err() {
                    rows = vec![lone_row(StreamRow::unreadable(
                        &name,
                        "internal error: the analysis panicked",
                    ))];
                }
            }
        }
        if tx.send(Done { seq, rows, other }).is_err() {
            // The writer stopped (an output error): nothing more to do.
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Listing the files
// ---------------------------------------------------------------------------------------------

/// Lists the files to scan, numbered, each once, named by its path under the path it was found
/// from.
struct Lister<'a> {
    tx: SyncSender<Job>,
    found: &'a AtomicU64,
    seq: u64,
    /// The files listed so far (their canonical paths): a file reached again is not scanned again.
    seen: HashSet<PathBuf>,
    written: &'a Written,
    window: u64,
}

impl Lister<'_> {
    /// Send one job (after waiting for the writer to be within the window); `false` when the
    /// workers are gone.
    fn send(&mut self, what: JobKind) -> bool {
        self.written.wait_for(self.seq, self.window);
        self.found.fetch_add(1, Ordering::Relaxed);
        let job = Job {
            seq: self.seq,
            what,
        };
        self.seq += 1;
        self.tx.send(job).is_ok()
    }

    /// The first time `path` is reached: a file to scan by its canonical path (the file a link
    /// leads to), an entry that is not read by the canonical path of its folder and its own name
    /// (so a link to `/dev/urandom` in a folder does not hide `/dev/urandom` named on the command
    /// line).
    fn first_time(&mut self, path: &Path, entry: bool) -> bool {
        let key = if entry {
            match (path.parent(), path.file_name()) {
                (Some(parent), Some(name)) => std::fs::canonicalize(parent)
                    .map(|p| p.join(name))
                    .unwrap_or_else(|_| path.to_path_buf()),
                _ => path.to_path_buf(),
            }
        } else {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        };
        self.seen.insert(key)
    }

    /// Every file to scan: each path (a folder walked), then each line of `files_from`.
    fn list(&mut self, paths: &[PathBuf], files_from: Option<&Path>) {
        for p in paths {
            if !self.walk(p, false) {
                return;
            }
        }
        let Some(from) = files_from else { return };
        let reader: Box<dyn std::io::BufRead> = if from.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            match std::fs::File::open(from) {
                Ok(f) => Box::new(std::io::BufReader::new(f)),
                Err(e) => {
                    self.send(JobKind::Failed {
                        name: from.display().to_string(),
                        error: format!("cannot read the list of files: {e}"),
                    });
                    return;
                }
            }
        };
        for line in reader.lines() {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    self.send(JobKind::Failed {
                        name: from.display().to_string(),
                        error: format!("cannot read the list of files: {e}"),
                    });
                    return;
                }
            };
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() {
                continue;
            }
            let ok = match line.split_once('\t') {
                Some((path, name)) => {
                    let path = PathBuf::from(path);
                    !self.first_time(&path, false)
                        || self.send(JobKind::Scan {
                            path,
                            name: name.to_owned(),
                            walked: true,
                        })
                }
                None => self.walk(Path::new(line), true),
            };
            if !ok {
                return;
            }
        }
    }

    /// Send the files under `root` ([`scan::walk`]), each named by [`name_under`]; `false` when
    /// the workers are gone. `listed`: `root` comes from `--files-from` (a listing of a folder,
    /// such as `find`'s), so a file that is not a capture is skipped as in a folder; a file named
    /// on the command line is always scanned.
    fn walk(&mut self, root: &Path, listed: bool) -> bool {
        let label = root_label(root);
        scan::walk(root, true, &mut |found| {
            let (path, what) = match found {
                scan::Found::File(path) => {
                    let name = name_under(&label, root, &path);
                    let walked = listed || path != root;
                    let what = JobKind::Scan {
                        path: path.clone(),
                        name,
                        walked,
                    };
                    (path, what)
                }
                scan::Found::Failed { path, error } => {
                    let name = name_under(&label, root, &path);
                    (path, JobKind::Failed { name, error })
                }
                scan::Found::Skipped { path, why } => {
                    let what = match why {
                        scan::Skip::Name => JobKind::Other,
                        why => JobKind::Skipped {
                            name: name_under(&label, root, &path),
                            why: why.reason(),
                        },
                    };
                    (path, what)
                }
            };
            let entry = !matches!(what, JobKind::Scan { .. });
            !self.first_time(&path, entry) || self.send(what)
        })
    }
}

/// The name a scanned path goes by: its own name once resolved (`.`, `./d`, `d/` and `/abs/d`
/// are all `d`), or the path as given when it has none (`/`).
fn root_label(root: &Path) -> String {
    std::fs::canonicalize(root)
        .ok()
        .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| root.display().to_string())
}

/// A file's name in the tables: the root's label, then the file's path under the root, with `/`
/// between the parts whatever the platform (the same folder gives the same names however it was
/// typed).
fn name_under(label: &str, root: &Path, path: &Path) -> String {
    let mut name = label.to_owned();
    if let Ok(rest) = path.strip_prefix(root) {
        for part in rest.components() {
            name.push('/');
            name.push_str(&part.as_os_str().to_string_lossy());
        }
        name
    } else {
        path.display().to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------------------------

/// The progress line on standard error (only on a terminal): files done of files found so far,
/// streams, not OK, rate.
struct Progress {
    shown: bool,
    found: Arc<AtomicU64>,
    listed: Arc<AtomicBool>,
    started: Instant,
    last: Option<Instant>,
}

impl Progress {
    fn new(shown: bool) -> Self {
        Self {
            shown,
            found: Arc::new(AtomicU64::new(0)),
            listed: Arc::new(AtomicBool::new(false)),
            started: Instant::now(),
            last: None,
        }
    }

    fn file(&mut self, summary: &Summary) {
        if !self.shown
            || self
                .last
                .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(Instant::now());
        let found = self.found.load(Ordering::Relaxed).max(summary.files);
        let listed = self.listed.load(Ordering::Relaxed);
        let width = 30usize;
        let filled = if found == 0 {
            0
        } else {
            (summary.files as usize * width / found as usize).min(width)
        };
        let rate = summary.files as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
        let mut err = std::io::stderr().lock();
        write!(
            err,
            "\r\x1b[2K[{}{}] {}/{}{} files, {} streams, {} not OK, {:.0} files/s",
            "#".repeat(filled),
            " ".repeat(width - filled),
            summary.files,
            found,
            if listed { "" } else { "+" },
            summary.streams(),
            summary.total.not_ok,
            rate
        )
        .ok();
        err.flush().ok();
    }

    fn clear(&mut self) {
        if self.shown && self.last.is_some() {
            let mut err = std::io::stderr().lock();
            write!(err, "\r\x1b[2K").ok();
            err.flush().ok();
        }
    }
}
