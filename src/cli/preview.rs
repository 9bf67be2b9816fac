//! `sse-replay preview FILE [--call N]`: one JSON line per fragment with what a typewriter UI
//! shows after it (jiter's partial-mode value of the call's arguments so far, see
//! [`sse_replay_core::preview`]) — a feed a UI developer can drive their own component with. Exit codes
//! as `events`: the one verdict.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, InputArgs, fail, open_failed, verdict};

/// `preview` arguments.
#[derive(Debug, Args)]
pub struct PreviewArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Only this call (its position in stream order, 0-based).
    #[arg(long, value_name = "N")]
    pub call: Option<u32>,
}

/// Run `preview`.
pub(super) fn run(a: &PreviewArgs) -> ExitCode {
    let analysis = match a.input.analyse() {
        Ok(x) => x,
        Err(e) => return open_failed(&e),
    };
    // A call that is not there is a usage error, not an empty answer.
    if let Some(call) = a.call
        && call as usize >= analysis.calls.len()
    {
        return fail(
            EXIT_INPUT,
            format!(
                "no call {call} ({}) in {}",
                sse_replay_core::text::plural(analysis.calls.len(), "call"),
                sse_replay_core::input::display_name(&a.input.file)
            ),
        );
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut written = Ok(());
    sse_replay_core::preview::each_fragment(&analysis, a.call, |p| {
        if written.is_ok() {
            let line = serde_json::json!({
                "fragment": p.fragment,
                "call": p.call,
                "t_us": p.t_us,
                "preview": p.value,
                "contradicted": !p.contradicted.is_empty(),
            });
            written = writeln!(out, "{}", sse_replay_core::text::json_compact(&line));
        }
    });
    if let Err(e) = written.and_then(|()| out.flush()) {
        return fail(EXIT_FAILED, format!("cannot write to standard output: {e}"));
    }
    drop(out);
    let code = verdict(&analysis, &a.input.file);
    // As in `events`: the process ends here, so skip freeing every allocation one by one.
    #[allow(
        clippy::mem_forget,
        reason = "the process ends here: freeing is left to the OS"
    )]
    std::mem::forget(analysis);
    code
}
