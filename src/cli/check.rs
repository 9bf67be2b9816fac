//! `sse-replay check`: the table (or `--json`) and the one verdict as the exit code.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;

use super::{EXIT_FAILED, InputArgs, fail, open_failed, verdict};
use sse_replay_core::export;

/// `check` arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Skip the partial-JSON preview section (jiter re-parses each call's prefix per fragment).
    #[arg(long)]
    pub no_preview: bool,
}

/// Runs `check`.
pub(super) fn run(a: &CheckArgs) -> ExitCode {
    // A raw body is analysed as it is read, and not kept: the report needs none of its bytes.
    let mut analysis = match a.input.open().and_then(|p| p.analyse(false)) {
        Ok(x) => x,
        Err(e) => return open_failed(&e),
    };
    if !a.no_preview {
        analysis.compute_previews();
    }
    let written = if a.json {
        // Streamed to standard output piece by piece: no copy of the analysis as JSON values
        // (300,000 calls took 8.8 GB and 52 s that way).
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        sse_replay_core::text::write_json_pretty(&mut out, &export::CheckReport(&analysis))
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
    } else {
        // Line by line: the report of a stream with many calls is larger than its input.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        sse_replay_core::report::write_check_text(&analysis, &mut out).and_then(|()| out.flush())
    };
    if let Err(e) = written {
        return fail(EXIT_FAILED, format!("cannot write the report: {e}"));
    }
    let code = verdict(&analysis, &a.input.file);
    // The process ends here: freeing millions of small allocations one by one (a stream with
    // 300,000 calls) would only add seconds before the same memory is returned at exit.
    #[allow(
        clippy::mem_forget,
        reason = "the process ends here: freeing is left to the OS"
    )]
    std::mem::forget(analysis);
    code
}
