//! `sse-replay scan`: every stream of every file under the paths, analysed in parallel, as rows
//! of three tables ([`sse_replay_core::scan`]) written as they are made, or summarised.
//!
//! Three kinds of thread: one lists the files (walking folders, or reading `--files-from`) into
//! a bounded channel; `-j` workers each take a file, analyse its streams and send their rows into
//! a second bounded channel; this thread writes the rows, counts them into the summary and draws
//! the progress line. Both channels are bounded, so memory holds at most a few files' rows in
//! flight, whatever the number of files; a stream's analysis is dropped once its rows are made.

mod sink;

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, fail, parse_size};
use sse_replay_core::scan::{self, ScanOptions, StreamRow, StreamRows, Summary};

pub use sink::TableFormat;
use sink::{Sink, SinkError};

/// `scan` arguments.
#[derive(Debug, Args)]
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
    /// object).
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,
    /// Print the summary as one JSON object (counts, shares' numerators and denominators, time
    /// to the first call in µs) instead of the table.
    #[arg(long, conflicts_with = "output")]
    pub json: bool,
    /// Replace the table files if they exist (without it, existing ones are refused with exit 2).
    #[arg(long)]
    pub force: bool,
    /// The longest line or event accepted, in bytes (as `check`): a longer one makes the file's
    /// row unreadable, with the reason.
    #[arg(long, value_name = "N", default_value = "64M", value_parser = parse_size)]
    pub max_event_bytes: u64,
    /// Print the tables' schema (version, columns, types, meaning) as JSON and exit.
    #[arg(long, conflicts_with_all = ["output", "json"])]
    pub schema: bool,
}

/// A file to scan, or one that cannot be listed.
enum Job {
    /// Scan `path`, naming it `name` in the tables.
    Scan { path: PathBuf, name: String },
    /// A path that could not be listed or read: its row.
    Failed { name: String, error: String },
}

/// What a worker sends to the writer.
enum Done {
    /// One stream's rows.
    Rows(Box<StreamRows>),
    /// A file is finished.
    File,
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
        max_event_bytes: a.max_event_bytes,
    };
    let progress = Progress::new(std::io::stderr().is_terminal());
    let found = Arc::clone(&progress.found);
    let listed = Arc::clone(&progress.listed);
    let (job_tx, job_rx) = sync_channel::<Job>(jobs * 4);
    let paths = a.paths.clone();
    let files_from = a.files_from.clone();
    let lister = std::thread::Builder::new()
        .name("scan: list".into())
        .spawn(move || {
            list(&paths, files_from.as_deref(), &job_tx, &found);
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
    let written = collect(&done_rx, sink.as_mut(), &mut summary, progress);
    if let Err(e) = written {
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
                "sse-replay: {} in {} into {}; {} not OK",
                sse_replay_core::text::plural(summary.streams() as usize, "stream"),
                sse_replay_core::text::plural(summary.files as usize, "file"),
                sse_replay_core::text::visible(&into),
                summary.total.not_ok
            );
        }
    }
    if summary.any_not_ok() {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::from(EXIT_OK)
    }
}

/// Exit code of a failed output: 2 when it exists and `--force` was not given, else 1.
fn sink_code(e: &SinkError) -> u8 {
    if e.is_exists() {
        EXIT_INPUT
    } else {
        EXIT_FAILED
    }
}

/// The writer's loop: every stream's rows into the sink and the summary until the workers are
/// done.
fn collect(
    rx: &Receiver<Done>,
    mut sink: Option<&mut Sink>,
    summary: &mut Summary,
    mut progress: Progress,
) -> Result<(), SinkError> {
    while let Ok(done) = rx.recv() {
        match done {
            Done::Rows(rows) => {
                summary.add(&rows.stream);
                if let Some(sink) = sink.as_deref_mut() {
                    sink.write(&rows)?;
                }
            }
            Done::File => {
                summary.add_file();
                progress.file(summary);
            }
        }
    }
    progress.clear();
    Ok(())
}

/// A worker: files from `rx` until it is empty and closed, each file's rows to `tx`.
fn work(rx: &Mutex<Receiver<Job>>, tx: &SyncSender<Done>, options: &ScanOptions) {
    loop {
        // The lock is held only to take one job.
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let sent = match job {
            Job::Failed { name, error } => tx
                .send(Done::Rows(Box::new(StreamRows {
                    stream: StreamRow::unreadable(&name, &error),
                    calls: Vec::new(),
                    findings: Vec::new(),
                })))
                .is_ok(),
            Job::Scan { path, name } => {
                let mut ok = true;
                // A bug in the analysis of one file must not stop the scan of the others: its
                // row says so (the panic message is on standard error).
                let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    scan::scan_file(&path, &name, options, |rows| {
                        ok &= tx.send(Done::Rows(Box::new(rows))).is_ok();
                    })
                }));
                if scanned.is_err() {
                    let row = StreamRow::unreadable(&name, "internal error: the analysis panicked");
                    ok &= tx
                        .send(Done::Rows(Box::new(StreamRows {
                            stream: row,
                            calls: Vec::new(),
                            findings: Vec::new(),
                        })))
                        .is_ok();
                }
                ok
            }
        };
        if !sent || tx.send(Done::File).is_err() {
            // The writer stopped (an output error): nothing more to do.
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Listing the files
// ---------------------------------------------------------------------------------------------

/// Send every file to scan: each path (a folder walked), then each line of `files_from`.
fn list(paths: &[PathBuf], files_from: Option<&Path>, tx: &SyncSender<Job>, found: &AtomicU64) {
    let mut send = |job: Job| {
        found.fetch_add(1, Ordering::Relaxed);
        tx.send(job).is_ok()
    };
    for p in paths {
        if !walk(p, true, &mut send) {
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
                send(Job::Failed {
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
                send(Job::Failed {
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
        let (path, name) = match line.split_once('\t') {
            Some((p, n)) => (p, Some(n)),
            None => (line, None),
        };
        let ok = match name {
            Some(name) => send(Job::Scan {
                path: PathBuf::from(path),
                name: name.to_owned(),
            }),
            None => walk(Path::new(path), true, &mut send),
        };
        if !ok {
            return;
        }
    }
}

/// Send the files to scan under `path` ([`scan::walk`]); `false` when the receiver is gone.
fn walk(path: &Path, named: bool, send: &mut impl FnMut(Job) -> bool) -> bool {
    scan::walk(path, named, &mut |found| match found {
        scan::Found::File(path) => {
            let name = path.display().to_string();
            send(Job::Scan { path, name })
        }
        scan::Found::Failed { path, error } => send(Job::Failed {
            name: path.display().to_string(),
            error,
        }),
    })
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
