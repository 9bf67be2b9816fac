//! The command line: arguments → one action → exit code. The contract scripts rely on:
//! exit 0 = every call parsed and the stream ended normally; 1 = a call failed to parse, the
//! stream ended early or with a provider error, a tool-call `index` was not a non-negative integer
//! (or a network/HTTP failure); 2 = the input cannot be read (or bad usage). `check`, `export` and
//! `events` follow it alike, and say why on exactly one line of standard error.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::analysis::{Analysis, SourceInfo};
use crate::dialect::DialectKind;
use crate::export::{self, Format};
use crate::input::{self, InputError, InputKind};
use crate::pipeline::Options;
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
    /// A `.ron` recording, or a raw SSE / JSON-lines body (e.g. `curl -N` output).
    pub file: PathBuf,
    /// Force the dialect: openai-chat, openai-responses, anthropic-messages, gemini, ollama.
    #[arg(long, value_parser = parse_dialect)]
    pub dialect: Option<DialectKind>,
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
    #[arg(long, default_value = "5")]
    pub fragment: String,
    /// Interleave the calls' fragments (0,1,0,1...) instead of one call after another.
    #[arg(long)]
    pub interleaved: bool,
    /// Cut the body into network reads of N bytes (splits characters on purpose); default one read per event.
    #[arg(long)]
    pub read_bytes: Option<usize>,
    /// Microseconds between events.
    #[arg(long, default_value_t = 30_000)]
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
    /// Output file (`.ron`); standard output when absent.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// `generate-large` arguments.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Output file (raw SSE body).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Number of tool calls.
    #[arg(long, default_value_t = 2000)]
    pub calls: usize,
    /// Write a `.ron` recording (one chunk per event) instead of a raw body.
    #[arg(long)]
    pub ron: bool,
}

/// Entry point: parse arguments and run. `open_app` opens the GUI for `sse-replay [FILE]`.
pub fn run(cli: Cli, open_app: impl FnOnce(Option<PathBuf>) -> ExitCode) -> ExitCode {
    match cli.command {
        None => open_app(cli.file),
        Some(Command::Check(a)) => check(&a),
        Some(Command::Export(a)) => export_cmd(&a),
        Some(Command::Events(a)) => events(&a),
        Some(Command::Stub(a)) => stub_cmd(&a),
        Some(Command::GenerateLarge(a)) => generate(&a),
        Some(Command::Serve(a)) => crate::net::serve::run_cli(&a),
        Some(Command::Record(a)) => crate::net::record::run_cli(&a),
        Some(Command::Proxy(a)) => crate::net::proxy::run_cli(&a),
        Some(Command::Import(a)) => crate::import::run_cli(&a),
        Some(Command::Test(a)) => crate::test_cmd::run_cli(&a),
    }
}

/// Print one line on standard error (line breaks in the message, e.g. from a provider's error text
/// or a hostile function name, are flattened so scripts can rely on one line) and return `code`.
fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    let msg = msg.to_string().replace(['\n', '\r'], " ");
    eprintln!("sse-replay: {msg}");
    ExitCode::from(code)
}

/// Exit 0, or exit 1 with the analysis's problems on one line.
fn verdict(analysis: &Analysis, path: &Path) -> ExitCode {
    let problems = analysis.problems();
    if problems.is_empty() {
        ExitCode::from(EXIT_OK)
    } else {
        fail(
            EXIT_FAILED,
            format!("{} in {}", problems.join("; "), path.display()),
        )
    }
}

/// Load and analyse a file for `check` (and the app).
pub fn analyse_path(path: &Path, dialect: Option<DialectKind>) -> Result<Analysis, InputError> {
    let (rec, kind) = input::open_path(path, |_| true)?;
    let source = SourceInfo {
        name: path.display().to_string(),
        kind: match kind {
            InputKind::Recording if rec.meta.interrupted => {
                "journal (interrupted recording)".into()
            }
            InputKind::Recording => "recording".into(),
            InputKind::RawBody => "raw body".into(),
        },
        timing_known: kind == InputKind::Recording && rec.meta.timing_known,
    };
    Ok(Analysis::from_recording(
        &rec,
        source,
        Options {
            dialect,
            framing: None,
            detail: true,
        },
    ))
}

fn check(a: &CheckArgs) -> ExitCode {
    let analysis = match analyse_path(&a.input.file, a.input.dialect) {
        Ok(x) => x,
        Err(e) => return fail(EXIT_INPUT, e),
    };
    let text = if a.json {
        let mut t =
            serde_json::to_string_pretty(&export::check_json(&analysis)).unwrap_or_default();
        t.push('\n');
        t
    } else {
        crate::report::check_text(&analysis)
    };
    if let Err(e) = std::io::stdout().write_all(text.as_bytes()) {
        return fail(EXIT_FAILED, format!("cannot write the report: {e}"));
    }
    verdict(&analysis, &a.input.file)
}

fn export_cmd(a: &ExportArgs) -> ExitCode {
    let name = a.input.file.display().to_string();
    // Stream: each call is written as soon as it is parsed, then dropped.
    let (sink, tmp): (Box<dyn std::io::Write>, Option<PathBuf>) = match &a.output {
        None => (
            Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
            None,
        ),
        Some(p) if std::fs::metadata(p).is_ok_and(|m| !m.is_file()) => {
            match std::fs::OpenOptions::new().write(true).open(p) {
                Ok(f) => (Box::new(std::io::BufWriter::new(f)), None),
                Err(e) => return fail(EXIT_FAILED, format!("cannot write {}: {e}", p.display())),
            }
        }
        Some(p) => {
            let mut t = p.as_os_str().to_os_string();
            t.push(".tmp");
            let t = PathBuf::from(t);
            match std::fs::File::create(&t) {
                Ok(f) => (Box::new(std::io::BufWriter::new(f)), Some(t)),
                Err(e) => return fail(EXIT_FAILED, format!("cannot write {}: {e}", p.display())),
            }
        }
    };
    let mut writer = export::CallWriter::new(sink, a.format);
    let mut write_error: Option<std::io::Error> = None;
    let (mut total, mut failed) = (0usize, Vec::new());
    let result = input::stream_path_each(
        &a.input.file,
        Options {
            dialect: a.input.dialect,
            framing: None,
            detail: false,
        },
        |c| {
            total += 1;
            if let crate::accumulate::Parsed::Err { error, .. } = &c.parsed {
                failed.push(format!("call {} {}: {error}", c.position, c.name));
            }
            if write_error.is_none()
                && let Err(e) = writer.call(&c)
            {
                write_error = Some(e);
            }
        },
    );
    let out = match result {
        Ok(o) => o,
        Err(e) => {
            if let Some(t) = &tmp {
                let _ = std::fs::remove_file(t);
            }
            return fail(EXIT_INPUT, e);
        }
    };
    let finished = writer.finish().map(drop);
    if let Some(e) = write_error.map(Err).unwrap_or(finished).err() {
        if let Some(t) = &tmp {
            let _ = std::fs::remove_file(t);
        }
        return fail(EXIT_FAILED, format!("cannot write the export: {e}"));
    }
    if let (Some(t), Some(p)) = (&tmp, &a.output)
        && let Err(e) = std::fs::rename(t, p)
    {
        return fail(EXIT_FAILED, format!("cannot write {}: {e}", p.display()));
    }
    // One line on stderr summarising what went wrong, if anything.
    let mut problems = Vec::new();
    if !failed.is_empty() {
        problems.push(format!(
            "{} of {total} calls did not parse ({})",
            failed.len(),
            failed.join("; ")
        ));
    }
    if let Some((m, _)) = &out.provider_error {
        problems.push(format!("provider error: {m}"));
    } else if !out.finished() && !out.all_calls_complete {
        problems.push("the stream ended without a finish signal".into());
    }
    if let Some(f) = out
        .findings
        .list()
        .iter()
        .find(|f| f.kind == crate::findings::FindingKind::InvalidIndex)
    {
        problems.push(format!(
            "{}: {}",
            f.kind.label(),
            crate::dialect::truncate(&f.message, 120)
        ));
    }
    if problems.is_empty() {
        ExitCode::from(EXIT_OK)
    } else {
        fail(EXIT_FAILED, format!("{} in {name}", problems.join("; ")))
    }
}

/// Write a file atomically (temporary file, then rename).
/// Special files (`/dev/null`, `/dev/stdout`, a FIFO) are written in place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(path, bytes);
    }
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

fn events(a: &EventsArgs) -> ExitCode {
    let analysis = match analyse_path(&a.input.file, a.input.dialect) {
        Ok(x) => x,
        Err(e) => return fail(EXIT_INPUT, e),
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
    verdict(&analysis, &a.input.file)
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
    let text = rec.to_ron_string();
    let res = match &a.output {
        Some(p) => crate::recording::save(p, &rec).map_err(|e| e.to_string()),
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| e.to_string()),
    };
    match res {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => fail(EXIT_FAILED, e),
    }
}

fn generate(a: &GenerateArgs) -> ExitCode {
    let res = if a.ron {
        let rec = crate::generate::large_recording(a.calls);
        crate::recording::save(&a.output, &rec).map_err(|e| e.to_string())
    } else {
        std::fs::File::create(&a.output)
            .map_err(|e| e.to_string())
            .and_then(|f| {
                crate::generate::write_large(std::io::BufWriter::new(f), a.calls)
                    .map_err(|e| e.to_string())
            })
    };
    match res {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => fail(EXIT_FAILED, format!("{e} ({})", a.output.display())),
    }
}
