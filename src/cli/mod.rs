//! The command line: arguments → one action → exit code. The contract scripts rely on:
//! exit 0 = no error-severity finding (every call parsed, the stream ended normally, …);
//! 1 = some finding has error severity (a call failed to parse, the stream ended early or with a
//! provider error, arguments differ from the stream's own full copy, a line or event was longer
//! than `--max-event-bytes` — reading stops there, so an endless input ends at bounded memory —
//! …) or a network/HTTP failure; 2 = the input cannot be read (or bad usage). `check`, `export`
//! and `events` decide it with the one verdict in [`sse_replay_core::verdict`], and say why on exactly one
//! line of standard error. `-` as the input path is standard input. Files are opened by the one
//! probe, [`sse_replay_core::probe`], as in the app (a HAR or cassette with several streams takes
//! `--stream N`).
//!
//! One file per command; this module holds the clap [`Cli`], the exit codes, the shared flags and
//! value parsers, and `fail`. Nothing below `cli` knows clap or exit codes: the core returns typed
//! results and errors, and each command maps them to an exit code here.

mod check;
mod events;
mod export;
mod generate;
mod import;
mod preview;
mod proxy;
mod record;
mod scan;
mod serve;
mod signals;
mod stub;
mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use sse_replay_core::analysis::Analysis;
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::input;
use sse_replay_core::open::OpenError;
use sse_replay_core::probe::{self, ReadOptions};
use sse_replay_core::recording::RecordingError;

pub use check::CheckArgs;
pub use events::EventsArgs;
pub use export::ExportArgs;
pub use generate::{GenerateArgs, GenerateCorpusArgs};
pub use import::ImportArgs;
pub use proxy::ProxyArgs;
pub use record::RecordArgs;
pub use scan::ScanArgs;
pub use serve::{LimitArgs, ServeArgs, parse_seconds};
pub use stub::StubArgs;
pub use test::TestArgs;

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
    Preview(preview::PreviewArgs),
    /// Build a stub recording (the seed's method) from calls and a fragment length.
    Stub(StubArgs),
    /// Generate a large synthetic OpenAI stream for benchmarks (raw SSE body).
    #[command(hide = true)]
    GenerateLarge(GenerateArgs),
    /// Generate a folder of small captures across the dialects and quirks, deterministic from a
    /// seed (for scan's tests and benchmarks, and trying the Corpus tab).
    #[command(hide = true)]
    GenerateCorpus(GenerateCorpusArgs),
    /// Serve a recording over HTTP as a streaming endpoint (a mock LLM API).
    Serve(ServeArgs),
    /// Send a request and record the streamed response (crash-safe, secrets redacted).
    Record(RecordArgs),
    /// Forward requests to an upstream API and record every event stream that passes through.
    Proxy(ProxyArgs),
    /// Convert a HAR file, a VCR cassette, a JSON-lines fixture or a raw body into recordings.
    Import(ImportArgs),
    /// Run a client program against every recording × chunking variant and judge its tool calls.
    Test(TestArgs),
    /// Analyse every capture under folders in parallel: a summary per dialect, host and model, or
    /// three tables (streams, calls, findings) as Parquet, JSON lines or CSV.
    Scan(ScanArgs),
}

/// Options shared by commands that read a file.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// A `.ron` recording, a raw SSE / JSON-lines body (e.g. `curl -N` output), or a capture (HAR,
    /// VCR cassette, `.jsonl` fixture) recognised by its content; `-` reads standard input.
    pub file: PathBuf,
    /// Force the dialect (aliases: openai, chat, openai-compatible, responses, anthropic, claude,
    /// google, vertex, cohere-v2, assistants, ai-sdk).
    #[arg(long, value_parser = dialect_parser())]
    pub dialect: Option<DialectKind>,
    /// The longest line or event accepted, in bytes (suffixes K, M, G = KiB, MiB, GiB): a longer
    /// one stops the read with exit 1, so an endless input ends at bounded memory.
    #[arg(long, value_name = "N", default_value = "64M", value_parser = parse_size)]
    pub max_event_bytes: u64,
    /// The most bytes read from an input that may grow without end (standard input, a pipe, a
    /// FIFO, a device; suffixes K, M, G), or held from a file read whole (a `.ron` recording, a
    /// capture, the body `events` and `preview` keep): past it the read stops with exit 1 and one
    /// line saying where, so an endless input ends at bounded memory. Default 32M. A regular file
    /// `export` or `check` streams is read to its end, unless this is given.
    #[arg(long, value_name = "N", value_parser = parse_size)]
    pub max_input_bytes: Option<u64>,
    /// Which stream of a capture (HAR, cassette) holding several, from 1; without it such a
    /// capture is refused with exit 2 and the list of its streams.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 32))]
    pub stream: Option<u64>,
}

impl InputArgs {
    /// `--stream` as an index-sized number.
    fn stream(&self) -> Option<usize> {
        self.stream
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// How these flags read the file.
    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            max_event_bytes: self.max_event_bytes,
            max_input_bytes: self
                .max_input_bytes
                .unwrap_or(input::DEFAULT_MAX_INPUT_BYTES),
            // Given, it bounds every file; by default only what grows or is held whole.
            limit_files: self.max_input_bytes.is_some(),
            stream: self.stream(),
            dialect: self.dialect,
            ..ReadOptions::default()
        }
    }

    /// Open the file: once, through the probe.
    fn open(&self) -> Result<probe::Probe, OpenError> {
        Ok(probe::open(&self.file, self.read_options())?)
    }

    /// Open and analyse the file as `events` and `preview` do (the body kept).
    fn analyse(&self) -> Result<Analysis, OpenError> {
        self.open()?.analyse(true)
    }
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

/// The value parser of every `--dialect`: the dialect table's names and aliases
/// ([`DialectKind::name`], [`DialectKind::aliases`]), any case, surrounding spaces ignored; help
/// and errors list the names as clap lists any possible values.
#[derive(Clone, Copy, Debug, Default)]
pub struct DialectParser;

impl DialectParser {
    fn values() -> impl Iterator<Item = PossibleValue> {
        DialectKind::ALL.into_iter().map(|d| {
            PossibleValue::new(d.name())
                .aliases(d.aliases().iter().copied())
                .help(d.help())
        })
    }
}

impl TypedValueParser for DialectParser {
    type Value = DialectKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<DialectKind, clap::Error> {
        if let Some(d) = value.to_str().and_then(DialectKind::from_name) {
            return Ok(d);
        }
        // Not one of them: clap's own error, listing the possible values.
        clap::builder::PossibleValuesParser::new(Self::values())
            .parse_ref(cmd, arg, value)
            .and_then(|_| Err(clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd)))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::values()))
    }
}

/// The value parser of every `--dialect`.
pub fn dialect_parser() -> DialectParser {
    DialectParser
}

/// Before clap and before any window: a first argument that is neither a subcommand, an option
/// nor an existing file is a mistyped subcommand (`sse-replay chek x`) or a missing file
/// (`sse-replay missing.ron`); say which, on one line, exit 2. `None`: go on.
pub fn preflight(args: &[std::ffi::OsString]) -> Option<ExitCode> {
    use clap::CommandFactory as _;
    let first = args.get(1)?;
    let text = first.to_string_lossy();
    if text.starts_with('-') || Path::new(first).exists() {
        return None;
    }
    let cmd = Cli::command();
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .map(str::to_owned)
        .chain(["help".to_owned()])
        .collect();
    if names.iter().any(|n| *n == text) || cmd.get_subcommands().any(|c| c.get_name() == text) {
        return None;
    }
    let nearest = names
        .iter()
        .map(|n| (edit_distance(&text, n), n))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.clone());
    let path_like = text.contains(['.', '/', std::path::MAIN_SEPARATOR]);
    let msg = match nearest {
        Some(n) if !path_like || args.len() > 2 => {
            format!("unknown subcommand '{text}' (did you mean '{n}'?); see sse-replay --help")
        }
        _ if args.len() > 2 => format!(
            "unknown subcommand '{text}' (subcommands: {}); see sse-replay --help",
            names.join(", ")
        ),
        _ if path_like => format!("no such file: {text}"),
        _ => format!("no such file or subcommand: {text}"),
    };
    Some(fail(EXIT_INPUT, msg))
}

/// Levenshtein distance (short words: subcommand names).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// Entry point: parse arguments and run. `open_app` opens the GUI for `sse-replay [FILE]`.
pub fn run(cli: Cli, open_app: impl FnOnce(Option<PathBuf>) -> ExitCode) -> ExitCode {
    match cli.command {
        None => open_app(cli.file),
        Some(Command::Check(a)) => check::run(&a),
        Some(Command::Export(a)) => export::run(&a),
        Some(Command::Events(a)) => events::run(&a),
        Some(Command::Preview(a)) => preview::run(&a),
        Some(Command::Stub(a)) => stub::run(&a),
        Some(Command::GenerateLarge(a)) => generate::run(&a),
        Some(Command::GenerateCorpus(a)) => generate::run_corpus(&a),
        Some(Command::Serve(a)) => serve::run(&a),
        Some(Command::Record(a)) => record::run(&a),
        Some(Command::Proxy(a)) => proxy::run(&a),
        Some(Command::Import(a)) => import::run(&a),
        Some(Command::Test(a)) => test::run(&a),
        Some(Command::Scan(a)) => scan::run(&a),
    }
}

/// Print one line on standard error and return `code`. Control characters in the message (line
/// breaks or ESC from a provider's error text or a hostile function name) are escaped
/// ([`sse_replay_core::text::visible`]), so scripts can rely on one line and the terminal is left alone.
#[allow(
    clippy::print_stderr,
    reason = "the command line: its reports and messages are printed here"
)]
fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    eprintln!(
        "sse-replay: {}",
        sse_replay_core::text::visible(&msg.to_string())
    );
    ExitCode::from(code)
}

/// Exit 0, or exit 1 with the verdict's problems on one line.
fn verdict(analysis: &Analysis, path: &Path) -> ExitCode {
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

/// Exit code for a failed write: 2 when the output exists and `--force` was not given, else 1.
fn write_failed(e: &RecordingError) -> u8 {
    match e {
        RecordingError::Exists { .. } => EXIT_INPUT,
        _ => EXIT_FAILED,
    }
}

/// Report a file that could not be opened and return its exit code: 1 when it was read but went
/// past a limit (the stream is at fault, like a truncated one), 2 when it could not be read, is not
/// a capture, or is a capture with several streams and no `--stream`. The first line is the error;
/// for a capture with several streams one line per stream follows (each escaped like the error).
#[allow(
    clippy::print_stderr,
    reason = "the command line: its reports and messages are printed here"
)]
fn open_failed(e: &OpenError) -> ExitCode {
    let code = if e.is_over_limit() {
        EXIT_FAILED
    } else {
        EXIT_INPUT
    };
    if let OpenError::ChooseStream { .. } = e {
        let code = fail(code, e.to_string().lines().next().unwrap_or_default());
        for line in e.stream_lines() {
            eprintln!("{}", sse_replay_core::text::visible(&line));
        }
        return code;
    }
    fail(code, e)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `--dialect D` on `check`, `stub` and `test` (before a `test` client's `--`).
    fn dialect(args: &[&str], d: &str) -> Result<Option<DialectKind>, clap::Error> {
        let mut argv = vec!["sse-replay", args[0], "--dialect", d];
        argv.extend_from_slice(&args[1..]);
        Cli::try_parse_from(argv).map(|cli| match cli.command {
            Some(Command::Check(a)) => a.input.dialect,
            Some(Command::Stub(a)) => a.dialect,
            Some(Command::Test(a)) => a.dialect.first().copied(),
            _ => None,
        })
    }

    #[test]
    fn every_dialect_spelling_accepted_before_still_parses() {
        // Every name and alias DialectKind::from_name accepts, in any case, with spaces around.
        let table = [
            ("openai-chat", DialectKind::OpenAiChat),
            ("openai", DialectKind::OpenAiChat),
            ("chat", DialectKind::OpenAiChat),
            ("openai-compatible", DialectKind::OpenAiChat),
            ("openai-responses", DialectKind::OpenAiResponses),
            ("responses", DialectKind::OpenAiResponses),
            ("anthropic-messages", DialectKind::AnthropicMessages),
            ("anthropic", DialectKind::AnthropicMessages),
            ("claude", DialectKind::AnthropicMessages),
            ("gemini", DialectKind::Gemini),
            ("google", DialectKind::Gemini),
            ("vertex", DialectKind::Gemini),
            ("ollama", DialectKind::Ollama),
            ("cohere", DialectKind::Cohere),
            ("cohere-v2", DialectKind::Cohere),
            ("cohere-v2-chat", DialectKind::Cohere),
            ("openai-assistants", DialectKind::OpenAiAssistants),
            ("assistants", DialectKind::OpenAiAssistants),
            ("openai-assistants-v2", DialectKind::OpenAiAssistants),
            ("ai-sdk-ui", DialectKind::AiSdkUi),
            ("ai-sdk", DialectKind::AiSdkUi),
            ("vercel-ai", DialectKind::AiSdkUi),
            ("ui-message-stream", DialectKind::AiSdkUi),
            ("bedrock-converse", DialectKind::BedrockConverse),
            ("bedrock", DialectKind::BedrockConverse),
            ("bedrock-converse-stream", DialectKind::BedrockConverse),
            ("converse", DialectKind::BedrockConverse),
            ("converse-stream", DialectKind::BedrockConverse),
            ("aws-bedrock", DialectKind::BedrockConverse),
        ];
        let commands: [&[&str]; 3] = [
            &["check", "x.ron"],
            &["stub", "--seed"],
            &["test", "--", "client"],
        ];
        for (spelling, kind) in table {
            assert_eq!(DialectKind::from_name(spelling), Some(kind), "{spelling}");
            for written in [
                spelling.to_owned(),
                spelling.to_ascii_uppercase(),
                format!(" {spelling} "),
            ] {
                for args in commands {
                    assert_eq!(
                        dialect(args, &written).unwrap(),
                        Some(kind),
                        "{args:?} --dialect {written:?}"
                    );
                }
            }
        }
        for args in commands {
            let e = dialect(args, "nonsense").unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue, "{args:?}");
            assert!(e.to_string().contains("anthropic-messages"), "{e}");
        }
        // Every kind has its value (nothing the core knows is missing from the flag).
        let listed: Vec<String> = DialectParser
            .possible_values()
            .into_iter()
            .flatten()
            .map(|v| v.get_name().to_owned())
            .collect();
        for kind in DialectKind::ALL {
            assert!(listed.iter().any(|n| n == kind.name()), "{kind:?}");
        }
    }

    #[test]
    fn the_input_limit_defaults_to_the_documented_constant() {
        for args in [
            vec!["sse-replay", "check", "x"],
            vec!["sse-replay", "events", "x"],
            vec!["sse-replay", "preview", "x"],
            vec!["sse-replay", "export", "x"],
        ] {
            let options = match Cli::try_parse_from(&args).unwrap().command {
                Some(Command::Check(a)) => a.input.read_options(),
                Some(Command::Events(a)) => a.input.read_options(),
                Some(Command::Preview(a)) => a.input.read_options(),
                Some(Command::Export(a)) => a.input.read_options(),
                _ => ReadOptions::default(),
            };
            assert_eq!(
                options.max_input_bytes,
                input::DEFAULT_MAX_INPUT_BYTES,
                "{args:?}"
            );
            // By default the limit bounds what grows and what is held whole, not every file.
            assert!(!options.limit_files, "{args:?}");
        }
        let Some(Command::Import(a)) = Cli::try_parse_from(["sse-replay", "import", "x"])
            .unwrap()
            .command
        else {
            panic!("not import");
        };
        assert_eq!(a.max_input_bytes, input::DEFAULT_MAX_INPUT_BYTES);
    }

    #[test]
    fn every_format_spelling_accepted_before_still_parses() {
        for format in sse_replay_core::export::Format::ALL {
            let cli =
                Cli::try_parse_from(["sse-replay", "export", "x.ron", "--format", format.name()])
                    .unwrap();
            let Some(Command::Export(a)) = cli.command else {
                panic!("not export");
            };
            assert_eq!(a.format, format);
        }
        let e =
            Cli::try_parse_from(["sse-replay", "export", "x.ron", "--format", "xml"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
    }
}
