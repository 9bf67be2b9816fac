//! `sse-replay export`: the parsed calls in one of the export formats, streamed (each call written
//! as soon as it is parsed), with the same verdict as `check` as the exit code.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{EnumValueParser, TypedValueParser as _};
use clap::{Args, ValueEnum};

use super::{EXIT_FAILED, EXIT_OK, InputArgs, fail, open_failed, write_failed};
use sse_replay_core::export::{self, Format};
use sse_replay_core::input;
use sse_replay_core::recording::{OutputFile, WriteOptions};

/// `export` arguments.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write here instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// json (default), jsonl, openai, anthropic.
    #[arg(long, default_value = "json",
          value_parser = EnumValueParser::<FormatArg>::new().map(Format::from))]
    pub format: Format,
    /// Replace OUT if it exists (without it, an existing file is refused with exit 2).
    #[arg(long)]
    pub force: bool,
    /// Also write the tools the provider ran itself (Anthropic server_tool_use / mcp_tool_use,
    /// Responses web_search_call…), marked `"server_tool": true` with their type.
    #[arg(long)]
    pub include_server_tools: bool,
}

/// The `--format` values ([`Format`]'s names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "lower")]
pub enum FormatArg {
    /// One JSON array of calls.
    Json,
    /// One call per line.
    Jsonl,
    /// OpenAI `tool_calls` entries.
    Openai,
    /// Anthropic `tool_use` blocks.
    Anthropic,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Json => Format::Json,
            FormatArg::Jsonl => Format::Jsonl,
            FormatArg::Openai => Format::OpenAi,
            FormatArg::Anthropic => Format::Anthropic,
        }
    }
}

/// Runs `export`.
pub(super) fn run(a: &ExportArgs) -> ExitCode {
    let name = input::display_name(&a.input.file);
    // Stream: each call is written as soon as it is parsed, then dropped. A file is written to a
    // temporary file and renamed into place at the end (removed on error or Ctrl+C).
    let out_path = a.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    super::signals::remove_temp_files_on_interrupt();
    let sink = match OutputFile::create(&out_path, WriteOptions::public(a.force)) {
        Ok(f) => f,
        Err(e) => return fail(write_failed(&e), e),
    };
    let mut writer = export::CallWriter::new(sink, a.format);
    let mut write_error: Option<std::io::Error> = None;
    let mut judge = sse_replay_core::verdict::Judge::default();
    let result = a.input.open().and_then(|p| {
        p.stream_calls(|c| {
            judge.call(&c);
            if write_error.is_none()
                && (a.include_server_tools || c.is_client_call())
                && let Err(e) = writer.call(&c)
            {
                write_error = Some(e);
            }
        })
    });
    // On any error the writer (and with it the temporary file) is dropped: nothing is left.
    let out = match result {
        Ok(o) => o,
        Err(e) => return open_failed(&e),
    };
    let file = match write_error.map(Err).unwrap_or_else(|| writer.finish()) {
        Ok(file) => file,
        Err(e) => {
            return fail(
                EXIT_FAILED,
                format!("cannot write the export: {e} in {}", out_path.display()),
            );
        }
    };
    // The same verdict as `check`, from the findings the lean pass computed; one line on stderr.
    let verdict = judge.verdict(out.findings.list());
    if !verdict.ok() {
        // A file gets nothing rather than calls a script would take for the whole answer;
        // standard output (or a FIFO) has had them as they were parsed, failed ones with their
        // raw text.
        file.discard();
        return fail(EXIT_FAILED, format!("{} in {name}", verdict.line()));
    }
    if let Err(e) = file.commit() {
        return fail(write_failed(&e), e);
    }
    if judge.client_calls() == 0 {
        // Not an error (a text answer), but an empty export should not pass unremarked.
        sse_replay_core::log_line!(
            "sse-replay: warning: no tool calls in {} (the stream ended normally without one)",
            sse_replay_core::text::visible(&name)
        );
    }
    ExitCode::from(EXIT_OK)
}
