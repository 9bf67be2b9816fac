//! `sse-replay import`: captures (HAR, cassettes, JSON-lines fixtures, raw bodies, journals) into
//! recordings, all checked and serialized before the first is written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, fail, shared};
use sse_replay_core::import;
use sse_replay_core::probe::{self, Kind, ReadOptions};

/// `import` arguments.
#[derive(Debug, clap::Args)]
#[command(mut_arg(shared::EVENT_LIMIT_ID, |a| a.help(shared::EventLimitArg::IMPORT_HELP)))]
pub struct ImportArgs {
    /// A HAR file, a VCR / pytest-recording / pydantic-ai cassette (YAML), a JSON-lines fixture, a
    /// raw SSE body, or a recorder's journal (`OUT.ron.partial`, salvaged and marked interrupted).
    pub file: PathBuf,
    /// The recording to write (`.ron`), `-` for standard output. A file with several streams is
    /// written as OUT-1.ron, OUT-2.ron, …; default: the input's name with `.ron`
    /// (`x.ron.partial` → `x.ron`).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Replace existing output files (without it, an existing file is refused with exit 2).
    #[arg(long)]
    pub force: bool,
    /// Write the requests' secrets (auth headers, `?key=`, body fields such as `api_key`) as they
    /// are, instead of redacting them.
    #[arg(long)]
    pub keep_secrets: bool,
    /// Write at most N recordings from one file; the rest are counted on standard error.
    #[arg(long, value_name = "N", default_value_t = import::DEFAULT_MAX_STREAMS, value_parser = parse_max_streams)]
    pub max_streams: usize,
    #[command(flatten)]
    pub max_event_bytes: shared::EventLimitArg,
    #[command(flatten)]
    pub max_input_bytes: shared::HeldInputLimitArg,
}

fn parse_max_streams(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{s:?}: expected a positive number of recordings")),
    }
}

/// Where the `n` recordings go: `out` itself for one, `out-1.ext`, `out-2.ext`, … for several.
pub fn output_paths(out: &Path, n: usize) -> Vec<PathBuf> {
    if n == 1 {
        return vec![out.to_owned()];
    }
    let stem = out
        .file_stem()
        .map_or_else(|| "import".into(), |s| s.to_string_lossy().into_owned());
    let ext = out
        .extension()
        .map_or_else(|| "ron".into(), |e| e.to_string_lossy().into_owned());
    (1..=n)
        .map(|i| out.with_file_name(format!("{stem}-{i}.{ext}")))
        .collect()
}

/// The default output: `x.ron.partial` → `x.ron`, `x.har` → `x.ron`.
fn default_output(input: &Path) -> PathBuf {
    match input.extension() {
        Some(ext) if ext == "partial" => {
            let salvaged = input.with_extension("");
            if salvaged.extension().is_some_and(|e| e == "ron") {
                salvaged
            } else {
                salvaged.with_extension("ron")
            }
        }
        _ => input.with_extension("ron"),
    }
}

/// `sse-replay import IN [-o OUT.ron] [--force] [--keep-secrets]`: exit 0 when written; 2 when the
/// input cannot be imported or an output exists without `--force` (nothing is written); 1 when
/// writing failed. A journal (`x.ron.partial`) is salvaged into `x.ron`, marked interrupted; a
/// damaged journal head is an error naming the file and the line.
#[allow(
    clippy::print_stderr,
    clippy::print_stdout,
    reason = "the command line: its reports and messages are printed here"
)]
pub(super) fn run(args: &ImportArgs) -> ExitCode {
    let options = ReadOptions {
        max_event_bytes: args.max_event_bytes.limit(),
        max_streams: args.max_streams,
        input_limit: args.max_input_bytes.limit(),
        keep_secrets: args.keep_secrets,
        ..ReadOptions::default()
    };
    let probe = match probe::open(&args.file, options) {
        Ok(p) => p,
        // A file longer than --max-input-bytes is refused before it is read: the input is at
        // fault, as for a stream cut off by the limit.
        Err(e) if e.is_over_limit() => {
            return fail(EXIT_FAILED, import::open_error(&args.file, e));
        }
        Err(e) => return fail(EXIT_INPUT, import::open_error(&args.file, e)),
    };
    // A journal is salvaged into the recording it was becoming, marked interrupted.
    let (recs, skipped) = if probe.kind() == Kind::Journal {
        match probe.recording(|_, _| true) {
            Ok((rec, _)) => (vec![rec], 0),
            Err(e) if e.is_over_limit() => return fail(EXIT_FAILED, e),
            Err(e) => return fail(EXIT_INPUT, e),
        }
    } else {
        match import::import(probe) {
            Ok(i) => (i.recordings, i.skipped_streams),
            Err(e) if e.is_over_limit() => return fail(EXIT_FAILED, e),
            Err(e) => return fail(EXIT_INPUT, e),
        }
    };
    if skipped > 0 {
        eprintln!(
            "sse-replay: skipped {skipped} of {} event streams (--max-streams {}) in {}",
            skipped + recs.len(),
            args.max_streams,
            sse_replay_core::text::visible(&args.file.display().to_string())
        );
    }
    let out = args.output.clone().unwrap_or_else(|| {
        if sse_replay_core::input::is_stdin(&args.file) {
            PathBuf::from("stdin.ron")
        } else {
            default_output(&args.file)
        }
    });
    let to_stdout = out.as_os_str() == "-";
    if to_stdout && recs.len() > 1 {
        return fail(
            EXIT_INPUT,
            format!(
                "{} streams cannot all go to standard output: give -o FILE.ron (written as FILE-1.ron, …) for {}",
                recs.len(),
                args.file.display()
            ),
        );
    }
    let paths = output_paths(&out, recs.len());
    // Check every target and serialize everything first, so a refusal or a failure leaves
    // nothing half-written.
    let mut fresh = Vec::with_capacity(paths.len());
    for p in &paths {
        match sse_replay_core::recording::output_target(p, args.force) {
            Ok(t) => fresh.push(t == sse_replay_core::recording::OutputTarget::New),
            Err(e @ sse_replay_core::recording::RecordingError::Exists { .. }) => {
                return fail(EXIT_INPUT, e);
            }
            Err(e) => return fail(EXIT_FAILED, e),
        }
    }
    let mut texts = Vec::with_capacity(recs.len());
    for (rec, p) in recs.iter().zip(&paths) {
        match rec.try_to_ron_string() {
            Ok(t) => texts.push(t),
            Err(e) => return fail(EXIT_FAILED, e.with_path(p)),
        }
    }
    let options = sse_replay_core::recording::WriteOptions::private(args.force);
    let mut written: Vec<&PathBuf> = Vec::new();
    for (((rec, p), text), fresh) in recs.iter().zip(&paths).zip(&texts).zip(&fresh) {
        if let Err(e) = sse_replay_core::recording::write_file(p, text.as_bytes(), options) {
            // Undo this run's new files (never a file that was there before).
            for w in written {
                std::fs::remove_file(w).ok();
            }
            let code = match e {
                sse_replay_core::recording::RecordingError::Exists { .. } => EXIT_INPUT,
                _ => EXIT_FAILED,
            };
            return fail(code, format!("cannot write the recording: {e}"));
        }
        if *fresh {
            written.push(p);
        }
        if to_stdout {
            eprintln!("standard output  ←  {}", rec.meta.title);
        } else {
            println!("{}  ←  {}", p.display(), rec.meta.title);
        }
    }
    ExitCode::from(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_outputs() {
        assert_eq!(
            default_output(Path::new("d/x.ron.partial")),
            PathBuf::from("d/x.ron")
        );
        assert_eq!(
            default_output(Path::new("x.partial")),
            PathBuf::from("x.ron")
        );
        assert_eq!(default_output(Path::new("x.har")), PathBuf::from("x.ron"));
    }

    #[test]
    fn outputs() {
        assert_eq!(
            output_paths(Path::new("d/x.ron"), 1),
            vec![PathBuf::from("d/x.ron")]
        );
        assert_eq!(
            output_paths(Path::new("d/x.ron"), 2),
            vec![PathBuf::from("d/x-1.ron"), PathBuf::from("d/x-2.ron")]
        );
    }
}
