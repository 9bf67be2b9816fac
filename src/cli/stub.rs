//! `sse-replay stub`: build a recording (the seed's method) from calls and a fragment length.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, fail, write_failed};
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::framing::Framing;
use sse_replay_core::quirk::{self, Quirk};
use sse_replay_core::recording::{self, WriteOptions};
use sse_replay_core::stub::{self, Layout, StubCall, StubSpec};

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
    /// Provider quirks to reproduce (repeatable); the help lists the quirk table's names.
    #[arg(
        long = "quirk",
        help = "Provider quirks to reproduce (repeatable; --help lists them)",
        long_help = quirk_help()
    )]
    pub quirks: Vec<String>,
    /// The dialect of the stream to build (default openai-chat). bedrock-converse builds binary
    /// AWS event stream frames with correct CRCs.
    #[arg(long, value_parser = super::dialect_parser())]
    pub dialect: Option<DialectKind>,
    /// How to frame the events (default: the dialect's own wire, SSE or JSON lines for ollama):
    /// sse, jsonl (one data object per line) or json-array (one JSON array of the chunks, as
    /// Gemini's streamGenerateContent sends it without alt=sse; a dump for other dialects).
    #[arg(long, value_parser = framing_parser())]
    pub framing: Option<Framing>,
    /// Wrap an anthropic-messages stream in binary AWS event stream `chunk` frames (base64 event
    /// JSON), as Bedrock's InvokeModelWithResponseStream sends it.
    #[arg(long)]
    pub invoke_model_stream: bool,
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
    /// Build the complete (non-streaming) response for the same calls instead of a stream: one
    /// JSON document, its calls read directly (no fragments, so no --quirk).
    #[arg(long)]
    pub non_streaming: bool,
}

/// The `--framing` values: the framing table's text framings, by name and alias (binary frames
/// are the dialect's own, never asked for).
fn framing_parser() -> impl clap::builder::TypedValueParser<Value = Framing> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    let values = Framing::ALL.iter().filter(|f| f.is_text()).map(|f| {
        PossibleValue::new(f.name())
            .aliases(f.aliases().iter().copied())
            .help(f.title())
    });
    PossibleValuesParser::new(values)
        .try_map(|s| Framing::from_name(&s).ok_or_else(|| format!("unknown framing {s:?}")))
}

/// `--quirk`'s help: every quirk of the table, by its one name, with what it does.
fn quirk_help() -> String {
    let quirks: Vec<String> = Quirk::ALL
        .iter()
        .map(|q| format!("{} ({})", q.name(), q.description()))
        .collect();
    format!(
        "Provider quirks to reproduce (repeatable): {}",
        quirks.join("; ")
    )
}

/// Largest `stub --read-bytes` (1 GiB: any body a stub can hold).
const MAX_STUB_READ_BYTES: u64 = 1 << 30;
/// Largest `stub --gap-us` (one hour).
const MAX_STUB_GAP_MICROS: u64 = 3_600_000_000;
/// Largest `stub --fragment` length (characters).
const MAX_FRAGMENT_CHARS: usize = 1_000_000;

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

/// Runs `stub`.
pub(super) fn run(a: &StubArgs) -> ExitCode {
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
        // Checked here rather than by clap, so an unknown one is a one-line error like the others.
        let Some(quirk) = Quirk::from_name(q) else {
            let known: Vec<&str> = Quirk::ALL.iter().map(|q| q.name()).collect();
            return fail(
                EXIT_INPUT,
                format!(
                    "unknown quirk {q:?} (expected one of: {})",
                    known.join(", ")
                ),
            );
        };
        quirk.set(&mut spec.quirks, true);
    }
    if let Some(d) = a.dialect {
        spec.dialect = d;
    }
    spec.invoke_model_stream = a.invoke_model_stream;
    spec.framing = a.framing;
    // Which streams the builder writes and which quirks each can carry: the core's one check
    // (the app's builder and `generate-corpus` make it too).
    if let Err(why) = quirk::check(&spec) {
        return fail(EXIT_INPUT, why);
    }
    if a.non_streaming && a.framing.is_some() {
        return fail(
            EXIT_INPUT,
            "--framing frames a stream; a --non-streaming response is one JSON document",
        );
    }
    if a.non_streaming && a.invoke_model_stream {
        return fail(
            EXIT_INPUT,
            "--invoke-model-stream wraps a stream's events; a --non-streaming response has none",
        );
    }
    if a.non_streaming && !a.quirks.is_empty() {
        return fail(
            EXIT_INPUT,
            "--quirk changes how a stream is cut; a --non-streaming response has no fragments",
        );
    }
    let mut rec = if a.non_streaming {
        match sse_replay_core::stub_complete::build(&spec) {
            Ok(rec) => rec,
            Err(e) => return fail(EXIT_FAILED, e),
        }
    } else {
        stub::build(&spec)
    };
    rec.meta.notes.extend(a.notes.iter().cloned());
    let out = a.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    match recording::save_with(&out, &rec, WriteOptions::private(a.force)) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => fail(write_failed(&e), e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--framing` takes exactly the framing table's text framings, by name and by alias.
    #[test]
    fn the_framing_values_are_the_framing_table() {
        use clap::CommandFactory as _;
        let mut cmd = crate::cli::Cli::command();
        let stub = cmd.find_subcommand_mut("stub").expect("stub");
        let arg = stub
            .get_arguments()
            .find(|a| a.get_id() == "framing")
            .expect("--framing");
        let names: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_owned())
            .collect();
        let text: Vec<&Framing> = Framing::ALL.iter().filter(|f| f.is_text()).collect();
        assert_eq!(names, text.iter().map(|f| f.name()).collect::<Vec<_>>());
        for f in text {
            for spelling in std::iter::once(f.name()).chain(f.aliases().iter().copied()) {
                let m = crate::cli::Cli::command()
                    .try_get_matches_from(["sse-replay", "stub", "--framing", spelling])
                    .expect(spelling);
                let (_, sub) = m.subcommand().expect("stub");
                assert_eq!(sub.get_one::<Framing>("framing"), Some(f), "{spelling}");
            }
        }
    }

    /// `--help` lists every quirk of the table by its one name (the list was written by hand).
    #[test]
    fn the_quirk_help_is_the_quirk_table() {
        use clap::CommandFactory as _;
        let help = crate::cli::Cli::command()
            .find_subcommand_mut("stub")
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default();
        for q in Quirk::ALL {
            assert!(
                help.contains(&format!("{} ({})", q.name(), q.description())),
                "{}",
                q.name()
            );
        }
    }

    #[test]
    fn every_quirk_name_accepted_before_still_parses() {
        let names = [
            "repeat-name",
            "empty-id",
            "no-index",
            "index-from-1",
            "all-at-index-0",
            "object-arguments",
            "cumulative",
            "crlf",
            "no-space",
            "keepalive",
            "truncate",
            "finish-with-last",
            "error",
            "partial-args",
            "args-in-start",
            "crc-error",
        ];
        for name in names {
            assert!(Quirk::from_name(name).is_some(), "{name}");
        }
        // One name per quirk.
        assert_eq!(Quirk::ALL.len(), names.len());
        assert!(Quirk::from_name("index-from1").is_none());
    }
}
