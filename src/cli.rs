//! The command line: arguments → one action → exit code. The contract scripts rely on:
//! exit 0 = no error-severity finding (every call parsed, the stream ended normally, …);
//! 1 = some finding has error severity (a call failed to parse, the stream ended early or with a
//! provider error, arguments differ from the stream's own full copy, a line or event was longer
//! than `--max-event-bytes` — reading stops there, so an endless input ends at bounded memory —
//! …) or a network/HTTP failure; 2 = the input cannot be read (or bad usage). `check`, `export`
//! and `events` decide it with the one verdict in [`crate::verdict`], and say why on exactly one
//! line of standard error. `-` as the input path is standard input.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::analysis::{Analysis, SourceInfo};
use crate::dialect::DialectKind;
use crate::export::{self, Format};
use crate::input::{self, InputError, InputKind};
use crate::pipeline::Options;
use crate::recording::{self, OutputFile, RecordingError, WriteOptions};
use crate::stub::{self, Layout, StubCall, StubSpec};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: a call failed, the stream ended early, a provider or network error.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: the input cannot be read, or bad usage.
pub const EXIT_INPUT: u8 = 2;

/// Record, replay and compare streamed LLM tool calls.
#[derive(Debug, Parser)]
#[command(name = "sse-replay", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Open this recording or raw stream body in the app.
    pub file: Option<PathBuf>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare the correct accumulator with every naive strategy; exit 0 when every call parsed.
    Check(CheckArgs),
    /// Write the parsed calls (json, jsonl, openai, anthropic).
    Export(ExportArgs),
    /// Print one JSON object per framed event.
    Events(EventsArgs),
    /// Print one JSON line per fragment: the partial-JSON preview a typewriter UI shows after it.
    Preview(crate::preview_cmd::PreviewArgs),
    /// Build a stub recording (the seed's method) from calls and a fragment length.
    Stub(StubArgs),
    /// Generate a large synthetic OpenAI stream for benchmarks (raw SSE body).
    #[command(hide = true)]
    GenerateLarge(GenerateArgs),
    /// Serve a recording over HTTP as a streaming endpoint (a mock LLM API).
    Serve(crate::net::serve::ServeArgs),
    /// Send a request and record the streamed response (crash-safe, secrets redacted).
    Record(crate::net::record::RecordArgs),
    /// Forward requests to an upstream API and record every event stream that passes through.
    Proxy(crate::net::proxy::ProxyArgs),
    /// Convert a HAR file, a VCR cassette, a JSON-lines fixture or a raw body into recordings.
    Import(crate::import::ImportArgs),
    /// Run a client program against every recording × chunking variant and judge its tool calls.
    Test(crate::test_cmd::TestArgs),
}

/// Options shared by commands that read a file.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// A `.ron` recording, or a raw SSE / JSON-lines body (e.g. `curl -N` output); `-` reads
    /// standard input.
    pub file: PathBuf,
    /// Force the dialect: openai-chat, openai-responses, anthropic-messages, gemini, ollama.
    #[arg(long, value_parser = parse_dialect)]
    pub dialect: Option<DialectKind>,
    /// The longest line or event accepted, in bytes (suffixes K, M, G = KiB, MiB, GiB): a longer
    /// one stops the read with exit 1, so an endless input ends at bounded memory.
    #[arg(long, value_name = "N", default_value = "64M", value_parser = parse_size)]
    pub max_event_bytes: u64,
}

/// A positive byte count: digits with an optional K, M or G suffix (powers of 1024; `KiB`,
/// `MiB`, `GiB` and a trailing `B` are accepted too).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(digits_end);
    let unit: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => 0,
    };
    match digits.parse::<u64>() {
        Ok(n) if n > 0 && unit > 0 => n
            .checked_mul(unit)
            .ok_or_else(|| format!("{s:?}: too large")),
        _ => Err(format!(
            "{s:?}: expected a positive number of bytes, like 65536, 512K or 64M"
        )),
    }
}

fn parse_dialect(s: &str) -> Result<DialectKind, String> {
    DialectKind::from_name(s).ok_or_else(|| {
        format!(
            "unknown dialect {s:?} (expected one of: {})",
            DialectKind::ALL.map(DialectKind::name).join(", ")
        )
    })
}

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

/// `export` arguments.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write here instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// json (default), jsonl, openai, anthropic.
    #[arg(long, default_value = "json", value_parser = parse_format)]
    pub format: Format,
    /// Replace OUT if it exists (without it, an existing file is refused with exit 2).
    #[arg(long)]
    pub force: bool,
    /// Also write the tools the provider ran itself (Anthropic server_tool_use / mcp_tool_use,
    /// Responses web_search_call…), marked `"server_tool": true` with their type.
    #[arg(long)]
    pub include_server_tools: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s)
        .ok_or_else(|| format!("unknown format {s:?} (expected json, jsonl, openai or anthropic)"))
}

/// `events` arguments.
#[derive(Debug, Args)]
pub struct EventsArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

/// `stub` arguments.
#[derive(Debug, Args)]
pub struct StubArgs {
    /// A call as NAME=ARGUMENTS (repeatable), e.g. --call 'get_weather={"city":"深圳","days":3}'.
    #[arg(long = "call", value_name = "NAME=ARGS")]
    pub calls: Vec<String>,
    /// Build the seed document's example (get_weather + get_time, 5-character fragments).
    #[arg(long)]
    pub seed: bool,
    /// Fragment length in characters; a comma list is cycled (e.g. 5 or 3,7).
    #[arg(long, default_value = "5", value_parser = parse_fragment_list)]
    pub fragment: String,
    /// Interleave the calls' fragments (0,1,0,1...) instead of one call after another.
    #[arg(long)]
    pub interleaved: bool,
    /// Cut the body into network reads of N bytes (splits characters on purpose); default one read per event.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_STUB_READ_BYTES))]
    pub read_bytes: Option<usize>,
    /// Microseconds between events (at most one hour).
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(0..=MAX_STUB_GAP_MICROS))]
    pub gap_us: u64,
    /// Provider quirks to reproduce (repeatable): repeat-name, empty-id, no-index, index-from-1,
    /// all-at-index-0, object-arguments, cumulative, crlf, no-space, keepalive, truncate,
    /// finish-with-last, error; partial-args (gemini only: Vertex AI streamed arguments).
    #[arg(long = "quirk")]
    pub quirks: Vec<String>,
    /// The dialect of the stream to build: openai-chat (default), openai-responses,
    /// anthropic-messages, gemini, ollama.
    #[arg(long, value_parser = parse_dialect)]
    pub dialect: Option<DialectKind>,
    /// Recording title.
    #[arg(long)]
    pub title: Option<String>,
    /// A note shown with the recording (repeatable).
    #[arg(long = "note")]
    pub notes: Vec<String>,
    /// Output file (`.ron`); standard output when absent or `-`.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Replace OUT if it exists (without it, an existing file is refused with exit 2).
    #[arg(long)]
    pub force: bool,
}

/// Largest `stub --read-bytes` (1 GiB: any body a stub can hold).
const MAX_STUB_READ_BYTES: u64 = 1 << 30;
/// Largest `stub --gap-us` (one hour).
const MAX_STUB_GAP_MICROS: u64 = 3_600_000_000;
/// Largest `stub --fragment` length (characters).
const MAX_FRAGMENT_CHARS: usize = 1_000_000;
/// Largest `generate-large --calls` (each call is some 340 events: 100,000 calls is gigabytes).
const MAX_GENERATED_CALLS: u64 = 100_000;

/// Checks a `--fragment` list (positive lengths up to [`MAX_FRAGMENT_CHARS`], comma-separated) and
/// keeps it as written (the stub command tells the seed's default `5` apart from an explicit one).
fn parse_fragment_list(s: &str) -> Result<String, String> {
    let ok = s.split(',').all(|n| {
        n.trim()
            .parse::<usize>()
            .is_ok_and(|n| (1..=MAX_FRAGMENT_CHARS).contains(&n))
    });
    if ok {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "expected lengths from 1 to {MAX_FRAGMENT_CHARS}, like 5 or 3,7"
        ))
    }
}

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

/// Entry point: parse arguments and run. `open_app` opens the GUI for `sse-replay [FILE]`.
pub fn run(cli: Cli, open_app: impl FnOnce(Option<PathBuf>) -> ExitCode) -> ExitCode {
    match cli.command {
        None => open_app(cli.file),
        Some(Command::Check(a)) => check(&a),
        Some(Command::Export(a)) => export_cmd(&a),
        Some(Command::Events(a)) => events(&a),
        Some(Command::Preview(a)) => crate::preview_cmd::run_cli(&a),
        Some(Command::Stub(a)) => stub_cmd(&a),
        Some(Command::GenerateLarge(a)) => generate(&a),
        Some(Command::Serve(a)) => crate::net::serve::run_cli(&a),
        Some(Command::Record(a)) => crate::net::record::run_cli(&a),
        Some(Command::Proxy(a)) => crate::net::proxy::run_cli(&a),
        Some(Command::Import(a)) => crate::import::run_cli(&a),
        Some(Command::Test(a)) => crate::test_cmd::run_cli(&a),
    }
}

/// Print one line on standard error and return `code`. Control characters in the message (line
/// breaks or ESC from a provider's error text or a hostile function name) are escaped
/// ([`crate::text::visible`]), so scripts can rely on one line and the terminal is left alone.
pub(crate) fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("sse-replay: {}", crate::text::visible(&msg.to_string()));
    ExitCode::from(code)
}

/// Exit 0, or exit 1 with the verdict's problems on one line.
pub(crate) fn verdict(analysis: &Analysis, path: &Path) -> ExitCode {
    let verdict = analysis.verdict();
    if verdict.ok() {
        ExitCode::from(EXIT_OK)
    } else {
        fail(
            EXIT_FAILED,
            format!("{} in {}", verdict.line(), input::display_name(path)),
        )
    }
}

/// Load and analyse a file for `check` (and the app), with the default event limit.
pub fn analyse_path(path: &Path, dialect: Option<DialectKind>) -> Result<Analysis, InputError> {
    analyse_path_limited(path, dialect, input::DEFAULT_MAX_EVENT_BYTES)
}

/// [`analyse_path`] refusing a line or event longer than `max_event_bytes`
/// ([`InputError::EventTooLarge`]).
pub fn analyse_path_limited(
    path: &Path,
    dialect: Option<DialectKind>,
    max_event_bytes: u64,
) -> Result<Analysis, InputError> {
    let (rec, kind) = input::open_path_limited(path, max_event_bytes, |_| true)?;
    let source = SourceInfo {
        name: input::display_name(path),
        kind: match kind {
            InputKind::Recording if rec.meta.interrupted => {
                "journal (interrupted recording)".into()
            }
            InputKind::Recording => "recording".into(),
            InputKind::RawBody => "raw body".into(),
        },
        timing_known: kind == InputKind::Recording && rec.meta.timing_known,
    };
    let analysis = Analysis::from_recording_owned(
        rec,
        source,
        Options {
            dialect,
            framing: None,
            detail: true,
        },
        max_event_bytes,
    );
    match analysis.overflow {
        Some(overflow) => Err(InputError::EventTooLarge {
            path: input::display_name(path),
            overflow,
        }),
        None => Ok(analysis),
    }
}

fn check(a: &CheckArgs) -> ExitCode {
    let mut analysis =
        match analyse_path_limited(&a.input.file, a.input.dialect, a.input.max_event_bytes) {
            Ok(x) => x,
            Err(e) => return fail(e.exit_code(), e),
        };
    if !a.no_preview {
        analysis.compute_previews();
    }
    let written = if a.json {
        // Streamed to standard output piece by piece: no copy of the analysis as JSON values
        // (300,000 calls took 8.8 GB and 52 s that way).
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &export::CheckReport(&analysis))
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
    } else {
        std::io::stdout().write_all(crate::report::check_text(&analysis).as_bytes())
    };
    if let Err(e) = written {
        return fail(EXIT_FAILED, format!("cannot write the report: {e}"));
    }
    let code = verdict(&analysis, &a.input.file);
    // The process ends here: freeing millions of small allocations one by one (a stream with
    // 300,000 calls) would only add seconds before the same memory is returned at exit.
    std::mem::forget(analysis);
    code
}

/// Exit code for a failed write: 2 when the output exists and `--force` was not given, else 1.
fn write_failed(e: &RecordingError) -> u8 {
    match e {
        RecordingError::Exists { .. } => EXIT_INPUT,
        _ => EXIT_FAILED,
    }
}

fn export_cmd(a: &ExportArgs) -> ExitCode {
    let name = input::display_name(&a.input.file);
    // Stream: each call is written as soon as it is parsed, then dropped. A file is written to a
    // temporary file and renamed into place at the end (removed on error or Ctrl+C).
    let out_path = a.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    recording::remove_temp_files_on_interrupt();
    let sink = match OutputFile::create(&out_path, WriteOptions::public(a.force)) {
        Ok(f) => f,
        Err(e) => return fail(write_failed(&e), e),
    };
    let mut writer = export::CallWriter::new(sink, a.format);
    let mut write_error: Option<std::io::Error> = None;
    let mut judge = crate::verdict::Judge::default();
    let result = input::stream_path_each_limited(
        &a.input.file,
        Options {
            dialect: a.input.dialect,
            framing: None,
            detail: false,
        },
        a.input.max_event_bytes,
        |c| {
            judge.call(&c);
            if write_error.is_none()
                && (a.include_server_tools || c.is_client_call())
                && let Err(e) = writer.call(&c)
            {
                write_error = Some(e);
            }
        },
    );
    // On any error the writer (and with it the temporary file) is dropped: nothing is left.
    let out = match result {
        Ok(o) => o,
        Err(e) => return fail(e.exit_code(), e),
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
    if let Err(e) = file.commit() {
        return fail(write_failed(&e), e);
    }
    // The same verdict as `check`, from the findings the lean pass computed; one line on stderr.
    let verdict = judge.verdict(out.findings.list());
    if verdict.ok() {
        ExitCode::from(EXIT_OK)
    } else {
        fail(EXIT_FAILED, format!("{} in {name}", verdict.line()))
    }
}

fn events(a: &EventsArgs) -> ExitCode {
    let analysis =
        match analyse_path_limited(&a.input.file, a.input.dialect, a.input.max_event_bytes) {
            Ok(x) => x,
            Err(e) => return fail(e.exit_code(), e),
        };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, e) in analysis.events.iter().enumerate() {
        let data = events_data(&analysis, e);
        let t = analysis
            .chunks
            .get(e.chunk as usize)
            .map_or(0, |c| c.t_micros);
        let v = serde_json::json!({
            "event_no": i,
            "event": analysis.event_type(e),
            "data": data.data,
            "id": data.id,
            "span": [e.span.start, e.span.end],
            "chunk": e.chunk,
            "t_us": t,
            "kind": e.kind,
            "fragments": e.fragment_count,
        });
        if let Err(e) = writeln!(out, "{v}") {
            return fail(EXIT_FAILED, format!("cannot write to standard output: {e}"));
        }
    }
    if let Err(e) = out.flush() {
        return fail(EXIT_FAILED, format!("cannot write to standard output: {e}"));
    }
    drop(out);
    let code = verdict(&analysis, &a.input.file);
    // As in `check`: the process ends here, so skip freeing every allocation one by one.
    std::mem::forget(analysis);
    code
}

struct EventData {
    data: String,
    id: String,
}

/// Re-frame one event's bytes to recover its data and id for display (cheap: one event).
fn events_data(a: &Analysis, e: &crate::pipeline::EventRecord) -> EventData {
    let bytes = a.bytes(&e.span);
    let mut data = String::new();
    let mut id = String::new();
    let mut framer = crate::framing::Framer::new(Some(a.framing));
    let mut sink = |item: crate::framing::Framed<'_>| {
        if let crate::framing::Framed::Event { data: d, .. } = item {
            data = d.to_owned();
        }
    };
    framer.feed(bytes, &mut sink);
    if a.framing == crate::framing::Framing::Sse {
        // A terminating blank line is part of the span; make sure the event dispatches.
        framer.feed(b"\n\n", &mut sink);
        for line in bytes.split(|b| *b == b'\n') {
            if let Some(v) = line.strip_prefix(b"id:") {
                id = String::from_utf8_lossy(v.strip_prefix(b" ").unwrap_or(v))
                    .trim_end_matches('\r')
                    .to_owned();
            }
        }
    } else {
        framer.finish(&mut sink);
    }
    EventData { data, id }
}

fn parse_calls(args: &[String]) -> Result<Vec<StubCall>, String> {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            let (name, arguments) = a
                .split_once('=')
                .ok_or_else(|| format!("--call {a:?}: expected NAME=ARGUMENTS"))?;
            Ok(StubCall {
                id: format!("call_{}", i + 1),
                name: name.trim().to_owned(),
                arguments: arguments.to_owned(),
            })
        })
        .collect()
}

fn stub_cmd(a: &StubArgs) -> ExitCode {
    let mut spec = if a.seed {
        stub::seed_example()
    } else {
        StubSpec::default()
    };
    if !a.calls.is_empty() {
        match parse_calls(&a.calls) {
            Ok(c) => spec.calls = c,
            Err(e) => return fail(EXIT_INPUT, e),
        }
    }
    if spec.calls.is_empty() {
        return fail(
            EXIT_INPUT,
            "no calls: give --call NAME=ARGS (repeatable) or --seed",
        );
    }
    if !a.seed || a.fragment != "5" {
        let lens: Result<Vec<usize>, _> = a
            .fragment
            .split(',')
            .map(|s| s.trim().parse::<usize>())
            .collect();
        match lens {
            Ok(l) if !l.is_empty() && l.iter().all(|&n| n > 0) => spec.fragment_chars = l,
            _ => {
                return fail(
                    EXIT_INPUT,
                    format!(
                        "--fragment {:?}: expected positive numbers like 5 or 3,7",
                        a.fragment
                    ),
                );
            }
        }
    }
    if a.interleaved {
        spec.layout = Layout::Interleaved;
    }
    if a.read_bytes.is_some() {
        spec.read_bytes = a.read_bytes;
    }
    if !a.seed || a.gap_us != 30_000 {
        spec.gap_micros = a.gap_us;
    }
    if let Some(t) = &a.title {
        spec.title = t.clone();
    } else if !a.seed {
        spec.title = format!(
            "stub: {}",
            spec.calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for q in &a.quirks {
        let qs = &mut spec.quirks;
        match q.as_str() {
            "repeat-name" => qs.repeat_name = true,
            "empty-id" => qs.empty_id_continuations = true,
            "no-index" => qs.no_index = true,
            "index-from-1" => qs.index_base = 1,
            "all-at-index-0" => qs.all_at_index_zero = true,
            "object-arguments" => qs.object_arguments = true,
            "cumulative" => qs.cumulative = true,
            "crlf" => qs.crlf = true,
            "no-space" => qs.no_space = true,
            "keepalive" => qs.keepalive_every = 3,
            "truncate" => qs.truncate = true,
            "finish-with-last" => qs.finish_with_last_fragment = true,
            "error" => qs.error_after = Some(2),
            "partial-args" => qs.partial_args = true,
            other => return fail(EXIT_INPUT, format!("unknown quirk {other:?}")),
        }
    }
    if let Some(d) = a.dialect {
        spec.dialect = d;
    }
    let chat_only = spec.quirks.chat_only();
    if spec.dialect != DialectKind::OpenAiChat && !chat_only.is_empty() {
        return fail(
            EXIT_INPUT,
            format!(
                "quirk {} exists only in openai-chat streams",
                chat_only.join(", ")
            ),
        );
    }
    if spec.quirks.partial_args && spec.dialect != DialectKind::Gemini {
        return fail(
            EXIT_INPUT,
            "quirk partial-args exists only in gemini streams (give --dialect gemini)",
        );
    }
    let mut rec = stub::build(&spec);
    rec.meta.notes.extend(a.notes.iter().cloned());
    let out = a.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    match recording::save_with(&out, &rec, WriteOptions::private(a.force)) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => fail(write_failed(&e), e),
    }
}

fn generate(a: &GenerateArgs) -> ExitCode {
    let options = WriteOptions::public(a.force);
    recording::remove_temp_files_on_interrupt();
    let res = if a.ron {
        let rec = crate::generate::large_recording(a.calls);
        recording::save_with(&a.output, &rec, options)
    } else if a.one_event_calls {
        OutputFile::create(&a.output, options).and_then(|mut f| {
            crate::generate::write_one_event_calls(&mut f, a.calls)
                .map_err(|e| RecordingError::Io {
                    op: "writing",
                    path: a.output.clone(),
                    source: e,
                })
                .and_then(|()| f.commit())
        })
    } else {
        OutputFile::create(&a.output, options).and_then(|mut f| {
            crate::generate::write_large(&mut f, a.calls)
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
