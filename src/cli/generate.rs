//! `sse-replay generate-large` (hidden): a large synthetic stream for benchmarks; and
//! `sse-replay generate-corpus` (hidden): a folder of small generated captures
//! ([`sse_replay_core::corpus`]) for `scan`'s tests and benchmarks and the app's Corpus tab.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{EXIT_OK, fail, write_failed};
use sse_replay_core::recording::{self, OutputFile, RecordingError, WriteOptions};

/// Largest `generate-large --calls` (each call is some 340 events: 100,000 calls is gigabytes).
const MAX_GENERATED_CALLS: u64 = 100_000;

/// `generate-large` arguments.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Output file (raw SSE body).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Number of tool calls.
    #[arg(long, default_value_t = 2000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_GENERATED_CALLS))]
    pub calls: usize,
    /// Write a `.ron` recording (one chunk per event) instead of a raw body.
    #[arg(long)]
    pub ron: bool,
    /// Replace OUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// Each call whole in one event (raw body): the many-calls scale case for `check`.
    #[arg(long, conflicts_with = "ron")]
    pub one_event_calls: bool,
}

/// Runs `generate-large`.
pub(super) fn run(a: &GenerateArgs) -> ExitCode {
    let options = WriteOptions::public(a.force);
    super::signals::remove_temp_files_on_interrupt();
    let res = if a.ron {
        let rec = sse_replay_core::generate::large_recording(a.calls);
        recording::save_with(&a.output, &rec, options)
    } else if a.one_event_calls {
        OutputFile::create(&a.output, options).and_then(|mut f| {
            sse_replay_core::generate::write_one_event_calls(&mut f, a.calls)
                .map_err(|e| RecordingError::Io {
                    op: "writing",
                    path: a.output.clone(),
                    source: e,
                })
                .and_then(|()| f.commit())
        })
    } else {
        OutputFile::create(&a.output, options).and_then(|mut f| {
            sse_replay_core::generate::write_large(&mut f, a.calls)
                .map_err(|e| RecordingError::Io {
                    op: "writing",
                    path: a.output.clone(),
                    source: e,
                })
                .and_then(|()| f.commit())
        })
    };
    match res {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => fail(write_failed(&e), e),
    }
}

/// Largest `generate-corpus --count`.
const MAX_CORPUS: u64 = 10_000_000;

/// `generate-corpus` arguments.
#[derive(Debug, Args)]
pub struct GenerateCorpusArgs {
    /// The folder to write the captures into (created when missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// How many captures.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=MAX_CORPUS))]
    pub count: u64,
    /// The corpus: the same seed gives the same files.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Number the captures from here (to add to a corpus: the next capture of the same seed).
    #[arg(long, default_value_t = 0)]
    pub start: u64,
    /// Replace captures that exist.
    #[arg(long)]
    pub force: bool,
}

/// Runs `generate-corpus`: the captures are written on every core (each written atomically, as
/// recordings always are).
pub(super) fn run_corpus(a: &GenerateCorpusArgs) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(&a.output) {
        return fail(
            super::EXIT_INPUT,
            format!("cannot create {}: {e}", a.output.display()),
        );
    }
    super::signals::remove_temp_files_on_interrupt();
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(8) as u64;
    let next = std::sync::atomic::AtomicU64::new(a.start);
    let end = a.start.saturating_add(a.count);
    let first_error = std::sync::Mutex::new(None::<RecordingError>);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if n >= end {
                        return;
                    }
                    let c = sse_replay_core::corpus::capture(a.seed, n);
                    let path = a.output.join(&c.file_name);
                    if let Err(e) =
                        recording::save_with(&path, &c.recording, WriteOptions::private(a.force))
                    {
                        // Stop everyone: one error is enough to report.
                        next.store(end, std::sync::atomic::Ordering::Relaxed);
                        if let Ok(mut first) = first_error.lock() {
                            first.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    match first_error.into_inner().ok().flatten() {
        Some(e) => fail(write_failed(&e), e),
        None => ExitCode::from(EXIT_OK),
    }
}
