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
//! One file per command; this module holds the clap [`Cli`], the exit codes, the input flags
//! ([`InputArgs`]) and `fail`; the options several commands share, each defined once, and their
//! value parsers are in `shared`. Nothing below `cli` knows clap or exit codes: the core returns typed
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
mod shared;
mod signals;
mod stub;
mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
pub use shared::{dialect_parser, parse_size};
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
    #[command(flatten)]
    pub max_event_bytes: shared::EventLimitArg,
    #[command(flatten)]
    pub max_input_bytes: shared::InputLimitArg,
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
            max_event_bytes: self.max_event_bytes.limit(),
            input_limit: self.max_input_bytes.limit(),
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
    use clap::builder::TypedValueParser as _;
    use sse_replay_core::limits::{EventLimit, InputLimit};

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
        let listed: Vec<String> = shared::DialectParser
            .possible_values()
            .into_iter()
            .flatten()
            .map(|v| v.get_name().to_owned())
            .collect();
        for kind in DialectKind::ALL {
            assert!(listed.iter().any(|n| n == kind.name()), "{kind:?}");
        }
    }

    /// The limits a parsed command reads with: `--max-event-bytes` and `--max-input-bytes` as
    /// typed values. `None` for a command that takes neither; a command that takes them and is
    /// not listed here fails the tests below, so a new one is checked as the others are.
    fn limits_of(cli: Cli) -> Option<(EventLimit, InputLimit)> {
        let read = |o: ReadOptions| (o.max_event_bytes, o.input_limit);
        match cli.command? {
            Command::Check(a) => Some(read(a.input.read_options())),
            Command::Events(a) => Some(read(a.input.read_options())),
            Command::Preview(a) => Some(read(a.input.read_options())),
            Command::Export(a) => Some(read(a.input.read_options())),
            Command::Scan(a) => Some((a.max_event_bytes.limit(), a.max_input_bytes.limit())),
            Command::Import(a) => Some((a.max_event_bytes.limit(), a.max_input_bytes.limit())),
            _ => None,
        }
    }

    /// Every subcommand that defines the arg `id`, by name.
    fn commands_with(id: &str) -> Vec<clap::Command> {
        use clap::CommandFactory as _;
        Cli::command()
            .get_subcommands()
            .filter(|c| c.get_arguments().any(|a| a.get_id() == id))
            .cloned()
            .collect()
    }

    /// `sse-replay <name> x <extra…>`, parsed (every command with the limits takes a path first).
    fn parse_with(name: &str, extra: &[&str]) -> Cli {
        let mut argv = vec!["sse-replay", name, "x"];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(&argv).unwrap()
    }

    #[test]
    fn every_command_with_max_event_bytes_parses_it_the_same_way() {
        let commands = commands_with(shared::EVENT_LIMIT_ID);
        let names: Vec<&str> = commands.iter().map(clap::Command::get_name).collect();
        for expected in ["check", "events", "preview", "export", "scan", "import"] {
            assert!(
                names.contains(&expected),
                "{expected} lost --max-event-bytes: {names:?}"
            );
        }
        // The shown default is the core's constant, written as the flag takes it.
        assert_eq!(
            shared::parse_size(shared::EVENT_LIMIT_DEFAULT),
            Ok(EventLimit::DEFAULT.bytes())
        );
        for cmd in &commands {
            let name = cmd.get_name();
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_id() == shared::EVENT_LIMIT_ID)
                .unwrap();
            assert_eq!(arg.get_long(), Some("max-event-bytes"), "{name}");
            assert_eq!(
                arg.get_default_values(),
                [shared::EVENT_LIMIT_DEFAULT],
                "{name}"
            );
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            assert!(
                help.starts_with("The longest line or event accepted"),
                "{name}: {help}"
            );
            // Absent: the core's default; given: the same typed value whatever the command.
            let (absent, _) = limits_of(parse_with(name, &[])).unwrap();
            assert_eq!(absent, EventLimit::DEFAULT, "{name}");
            for (text, bytes) in [("512K", 512 << 10), ("3", 3), ("2GiB", 2 << 30)] {
                let (given, _) = limits_of(parse_with(name, &["--max-event-bytes", text])).unwrap();
                assert_eq!(given, EventLimit::new(bytes), "{name} {text}");
            }
            for bad in ["0", "1.5M", "12X", ""] {
                let argv = ["sse-replay", name, "x", "--max-event-bytes", bad];
                let e = Cli::try_parse_from(argv).unwrap_err();
                assert_eq!(
                    e.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "{name} {bad:?}"
                );
            }
        }
    }

    #[test]
    fn every_command_with_max_input_bytes_parses_it_the_same_way() {
        let commands = commands_with(shared::INPUT_LIMIT_ID);
        let names: Vec<&str> = commands.iter().map(clap::Command::get_name).collect();
        for expected in ["check", "events", "preview", "export", "scan", "import"] {
            assert!(
                names.contains(&expected),
                "{expected} lost --max-input-bytes: {names:?}"
            );
        }
        assert_eq!(
            shared::parse_size(shared::INPUT_LIMIT_DEFAULT),
            Ok(sse_replay_core::limits::DEFAULT_MAX_INPUT_BYTES)
        );
        for cmd in &commands {
            let name = cmd.get_name();
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_id() == shared::INPUT_LIMIT_ID)
                .unwrap();
            assert_eq!(arg.get_long(), Some("max-input-bytes"), "{name}");
            // The default is shown as a default or named in the help, and either way it is the
            // core's constant.
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            let defaults = arg.get_default_values();
            assert!(
                defaults == [shared::INPUT_LIMIT_DEFAULT]
                    || (defaults.is_empty()
                        && help.to_ascii_lowercase().contains(
                            &format!("default {}", shared::INPUT_LIMIT_DEFAULT)
                                .to_ascii_lowercase()
                        )),
                "{name}: {defaults:?} {help}"
            );
            // Absent: the one default (what grows and what is held whole; not every file).
            let (_, absent) = limits_of(parse_with(name, &[])).unwrap();
            assert_eq!(absent, InputLimit::DEFAULT, "{name}");
            // Given: that many bytes. It bounds every file where a file may be streamed past
            // it; `import` holds its input whole, so the holding reader bounds files there.
            let (_, given) = limits_of(parse_with(name, &["--max-input-bytes", "1M"])).unwrap();
            let expected = if name == "import" {
                InputLimit {
                    bytes: 1 << 20,
                    files: false,
                }
            } else {
                InputLimit::given(1 << 20)
            };
            assert_eq!(given, expected, "{name}");
            let argv = ["sse-replay", name, "x", "--max-input-bytes", "0"];
            let e = Cli::try_parse_from(argv).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{name}");
        }
    }

    #[test]
    fn every_dialect_flag_takes_the_dialect_table() {
        // Each `--dialect` (a forced dialect, the stub's, a suite filter) lists exactly the
        // table's names, from the one parser.
        let table: Vec<&str> = DialectKind::ALL.iter().map(|d| d.name()).collect();
        let commands = commands_with("dialect");
        let names: Vec<&str> = commands.iter().map(clap::Command::get_name).collect();
        for expected in [
            "check", "events", "preview", "export", "stub", "test", "serve",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} lost --dialect: {names:?}"
            );
        }
        for cmd in &commands {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_id() == "dialect")
                .unwrap();
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect();
            assert_eq!(values, table, "{}", cmd.get_name());
        }
        // A help text that names aliases names ones the table accepts, for that dialect's flag.
        for cmd in &commands {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_id() == "dialect")
                .unwrap();
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            let Some((_, rest)) = help.split_once("aliases: ") else {
                continue;
            };
            let listed = rest.split(')').next().unwrap_or_default();
            for alias in listed.split(',').map(str::trim) {
                assert!(
                    DialectKind::from_name(alias).is_some_and(|d| d.name() != alias),
                    "{}: {alias:?} is not an alias",
                    cmd.get_name()
                );
            }
        }
    }

    #[test]
    fn every_faults_and_variants_flag_takes_the_harness_table() {
        use sse_replay_net::harness::Variant;
        let faults: Vec<String> = Variant::FAULTS
            .iter()
            .map(|v| v.name().to_owned())
            .chain(["all".to_owned()])
            .collect();
        let commands = commands_with("faults");
        let names: Vec<&str> = commands.iter().map(clap::Command::get_name).collect();
        assert_eq!(names, ["serve", "test"], "commands with --faults");
        for cmd in &commands {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_id() == "faults")
                .unwrap();
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect();
            assert_eq!(values, faults, "{}", cmd.get_name());
        }
        // Both commands select the same variants from the same words.
        let parsed = |argv: &[&str]| match Cli::try_parse_from(argv).unwrap().command {
            Some(Command::Test(a)) => shared::selected_variants(&a.variants, &a.faults),
            Some(Command::Serve(a)) => shared::selected_variants(&a.variants, &a.faults),
            _ => panic!("{argv:?}"),
        };
        for (variants, faults) in [("bytewise,crlf", "all"), ("one-read", "cut")] {
            let test = parsed(&[
                "sse-replay",
                "test",
                "--variants",
                variants,
                "--faults",
                faults,
                "--",
                "c",
            ]);
            let serve = parsed(&[
                "sse-replay",
                "serve",
                "--suite",
                "--variants",
                variants,
                "--faults",
                faults,
            ]);
            assert_eq!(test, serve, "{variants} {faults}");
        }
        let all = shared::selected_variants(&[], &["all".to_owned(), "cut".to_owned()]);
        let mut expected: Vec<Variant> = Variant::FRAMING
            .into_iter()
            .chain(Variant::FAULTS)
            .collect();
        expected.sort();
        assert_eq!(all, expected, "every framing variant, every fault once");
        let one = shared::selected_variants(&[Variant::Crlf], &["no-terminator".to_owned()]);
        assert_eq!(one, [Variant::Crlf, Variant::NoTerminator]);
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
