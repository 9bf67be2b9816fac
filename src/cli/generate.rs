//! `sse-replay generate-large` (hidden): a large synthetic stream for benchmarks.

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
