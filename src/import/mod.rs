//! Imports: turn the capture formats people already have into recordings. One entry point,
//! [`import_path`] (and [`import_bytes`] for data already in memory), used by `sse-replay import`
//! and by the app's File → Import and drag-and-drop.
//!
//! The format is decided by content (the extension only breaks ties and chooses which error to
//! report for a broken file):
//! - HAR (browser devtools "Save all as HAR", proxies): every event-stream entry becomes a
//!   recording with its request, secrets redacted ([`har`]);
//! - VCR-style YAML cassettes (vcrpy, pytest-recording, pydantic-ai) whose response body holds the
//!   raw stream ([`cassette`]);
//! - JSON-lines fixtures, one chunk object per line without `data:` framing, as SDK test suites keep
//!   them ([`jsonl`]);
//! - raw bodies (`curl -N … > file`), through [`crate::input::raw_to_recording`].
//!
//! None of these formats keeps network read boundaries or timing, so every imported recording has
//! `meta.timing_known = false`, one chunk per event, and a note saying so.

pub mod cassette;
pub mod har;
pub mod jsonl;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::recording::Recording;

/// Why a file could not be imported. Messages say what and where first, and name the file last.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("cannot read the file: {source} in {}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is empty (or only whitespace).
    #[error("the file is empty: {}", .path.display())]
    Empty { path: PathBuf },
    /// The file is already a recording.
    #[error("already an sse-replay recording (open it instead of importing it): {}", .path.display())]
    AlreadyRecording { path: PathBuf },
    /// Not a format this build imports.
    #[error(
        "not a capture this build can import (expected a HAR file, a VCR cassette, JSON lines or an SSE body; first line: {first_line:?}) in {}",
        .path.display()
    )]
    Unrecognised { path: PathBuf, first_line: String },
    /// The HAR file is not valid JSON.
    #[error("HAR file is not valid JSON at line {line}, column {column}: {message} in {}", .path.display())]
    HarSyntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The HAR file is JSON but not shaped like a HAR.
    #[error("invalid HAR at {at}: {message} in {}", .path.display())]
    Har {
        path: PathBuf,
        at: String,
        message: String,
    },
    /// The cassette is not valid YAML (the message names the position; `line`/`column` repeat it).
    #[error("cassette is not valid YAML: {message} in {}", .path.display())]
    CassetteSyntax {
        path: PathBuf,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    /// The cassette is YAML but not shaped like a cassette.
    #[error("invalid cassette at {at}: {message} in {}", .path.display())]
    Cassette {
        path: PathBuf,
        at: String,
        message: String,
    },
    /// A line of a JSON-lines file is not a JSON object.
    #[error("line {line} is not a JSON object: {message} in {}", .path.display())]
    JsonLine {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// The file parsed, but holds no event stream.
    #[error("no event stream to import ({why}) in {}", .path.display())]
    NoStreams { path: PathBuf, why: String },
}

impl ImportError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::Io { path, .. }
            | Self::Empty { path }
            | Self::AlreadyRecording { path }
            | Self::Unrecognised { path, .. }
            | Self::HarSyntax { path, .. }
            | Self::Har { path, .. }
            | Self::CassetteSyntax { path, .. }
            | Self::Cassette { path, .. }
            | Self::JsonLine { path, .. }
            | Self::NoStreams { path, .. } => path,
        }
    }
}

/// A capture format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFormat {
    Har,
    Cassette,
    JsonLines,
    RawBody,
}

impl ImportFormat {
    /// Short name for messages and `meta.source` (`import:har`, …).
    pub fn name(self) -> &'static str {
        match self {
            ImportFormat::Har => "har",
            ImportFormat::Cassette => "cassette",
            ImportFormat::JsonLines => "jsonl",
            ImportFormat::RawBody => "raw",
        }
    }
}

/// The note every imported recording carries: which boundaries are made up.
pub const NO_TIMING_NOTE: &str = "keeps no chunk boundaries or timing: the body is shown as one chunk per event, and the strategies that need real network reads cannot run.";

/// Decide the format of `bytes` (named `path`).
pub fn detect(path: &Path, bytes: &[u8]) -> Result<ImportFormat, ImportError> {
    let body = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(bytes);
    let start = body.iter().position(|b| !b.is_ascii_whitespace());
    let Some(start) = start else {
        return Err(ImportError::Empty {
            path: path.to_owned(),
        });
    };
    let text = &body[start..];
    if crate::input::sniff(path, &text[..text.len().min(256)]) == crate::input::InputKind::Recording
    {
        return Err(ImportError::AlreadyRecording {
            path: path.to_owned(),
        });
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "har" => return Ok(ImportFormat::Har),
        "yaml" | "yml" => return Ok(ImportFormat::Cassette),
        "jsonl" | "ndjson" => return Ok(ImportFormat::JsonLines),
        _ => {}
    }
    let first_line_end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    let first_line = &text[..first_line_end];
    if text[0] == b'{' {
        // A minified HAR is one line too: look for its `log.entries`.
        return Ok(
            match serde_json::from_slice::<serde_json::Value>(first_line) {
                Ok(v) if v.get("log").is_some() => ImportFormat::Har,
                Ok(_) => ImportFormat::JsonLines,
                Err(_)
                    if memchr::memmem::find(&text[..text.len().min(4096)], b"\"log\"")
                        .is_some() =>
                {
                    ImportFormat::Har
                }
                Err(_) => ImportFormat::JsonLines,
            },
        );
    }
    let lines = || {
        text.split(|b| *b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
    };
    if lines().any(|l| l.starts_with(b"interactions:")) {
        return Ok(ImportFormat::Cassette);
    }
    if lines()
        .take(64)
        .any(|l| l.starts_with(b"data:") || l.starts_with(b"event:"))
    {
        return Ok(ImportFormat::RawBody);
    }
    Err(ImportError::Unrecognised {
        path: path.to_owned(),
        first_line: crate::dialect::truncate(&String::from_utf8_lossy(first_line), 60),
    })
}

/// Import a file: one recording per event stream it holds (at least one), each with a title.
/// Secrets are redacted (see [`import_path_with`]).
pub fn import_path(path: &Path) -> Result<Vec<Recording>, ImportError> {
    import_path_with(path, false)
}

/// [`import_path`]; with `keep_secrets` the requests' secrets are kept (`--keep-secrets`).
pub fn import_path_with(path: &Path, keep_secrets: bool) -> Result<Vec<Recording>, ImportError> {
    if path.is_dir() {
        return Err(ImportError::Io {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a directory"),
        });
    }
    let bytes = std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.to_owned(),
        source,
    })?;
    import_bytes_with(path, &bytes, keep_secrets)
}

/// Import bytes already read; `path` names them in titles and errors. Secrets are redacted.
pub fn import_bytes(path: &Path, bytes: &[u8]) -> Result<Vec<Recording>, ImportError> {
    import_bytes_with(path, bytes, false)
}

/// [`import_bytes`]; with `keep_secrets` the requests' secrets are kept.
pub fn import_bytes_with(
    path: &Path,
    bytes: &[u8],
    keep_secrets: bool,
) -> Result<Vec<Recording>, ImportError> {
    let recs = match detect(path, bytes)? {
        ImportFormat::Har => har::import(path, bytes, keep_secrets)?,
        ImportFormat::Cassette => cassette::import(path, bytes, keep_secrets)?,
        ImportFormat::JsonLines => vec![jsonl::import(path, bytes)?],
        ImportFormat::RawBody => vec![raw_body(path, bytes)],
    };
    if recs.is_empty() {
        return Err(ImportError::NoStreams {
            path: path.to_owned(),
            why: "nothing found".into(),
        });
    }
    Ok(recs)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A raw body (`curl -N … > file`): SSE or JSON lines, one chunk per event.
fn raw_body(path: &Path, bytes: &[u8]) -> Recording {
    let mut rec = crate::input::raw_to_recording(bytes, &file_name(path));
    rec.meta.source = "import:raw".into();
    rec.meta.notes = vec![format!(
        "Imported from the raw body {}. A raw body {NO_TIMING_NOTE}",
        file_name(path)
    )];
    rec
}

/// A body as a recording, with the import's metadata.
pub(crate) fn body_recording(
    body: &[u8],
    title: String,
    format: ImportFormat,
    notes: Vec<String>,
) -> Recording {
    let mut rec = crate::input::raw_to_recording(body, &title);
    rec.meta.source = format!("import:{}", format.name());
    rec.meta.notes = notes;
    rec.meta.timing_known = false;
    rec
}

/// Does this body look like a stream (SSE lines, or JSON lines) rather than one JSON document?
pub(crate) fn looks_like_stream(body: &[u8]) -> bool {
    let mut lines = body
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let Some(first) = lines.next() else {
        return false;
    };
    if first.starts_with(b"data:")
        || first.starts_with(b"event:")
        || first.starts_with(b":")
        || first.starts_with(b"id:")
    {
        return true;
    }
    // Two or more lines that are each a JSON object: NDJSON (Ollama).
    let is_obj = |l: &[u8]| {
        l.first() == Some(&b'{') && serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok()
    };
    is_obj(first) && lines.next().is_some_and(is_obj)
}

/// Whether a content type names a stream: `text/event-stream`, or NDJSON / JSON lines.
pub(crate) fn is_stream_type(content_type: &str) -> bool {
    let t = content_type.trim().to_ascii_lowercase();
    t.starts_with("text/event-stream")
        || t.starts_with("application/x-ndjson")
        || t.starts_with("application/ndjson")
        || t.starts_with("application/jsonl")
        || t.starts_with("application/x-jsonlines")
}

/// Decode standard or URL-safe base64 (padding optional, whitespace ignored).
pub(crate) fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for (i, c) in s.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            c if c.is_ascii_whitespace() => continue,
            other => {
                return Err(format!(
                    "invalid base64 character {:?} at offset {i}",
                    other as char
                ));
            }
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

/// `import` arguments.
#[derive(Debug, clap::Args)]
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

/// Whether the file starts like a recorder journal (`# sse-replay journal v…`).
fn is_journal_file(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 64];
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let n = file.take(64).read(&mut head).unwrap_or(0);
    let head = head[..n]
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(&head[..n]);
    head.starts_with(crate::recording::JOURNAL_MAGIC_PREFIX.as_bytes())
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

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("sse-replay: {}", crate::text::visible(&message.to_string()));
    ExitCode::from(code)
}

/// `sse-replay import IN [-o OUT.ron] [--force] [--keep-secrets]`: exit 0 when written; 2 when the
/// input cannot be imported or an output exists without `--force` (nothing is written); 1 when
/// writing failed. A journal (`x.ron.partial`) is salvaged into `x.ron`, marked interrupted; a
/// damaged journal head is an error naming the file and the line.
pub fn run_cli(args: &ImportArgs) -> ExitCode {
    let recs = if is_journal_file(&args.file) {
        match crate::recording::load(&args.file) {
            Ok(rec) => vec![rec],
            Err(e) => return fail(crate::cli::EXIT_INPUT, e),
        }
    } else {
        match import_path_with(&args.file, args.keep_secrets) {
            Ok(r) => r,
            Err(e) => return fail(crate::cli::EXIT_INPUT, e),
        }
    };
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&args.file));
    let to_stdout = out.as_os_str() == "-";
    if to_stdout && recs.len() > 1 {
        return fail(
            crate::cli::EXIT_INPUT,
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
        match crate::recording::output_target(p, args.force) {
            Ok(t) => fresh.push(t == crate::recording::OutputTarget::New),
            Err(e @ crate::recording::RecordingError::Exists { .. }) => {
                return fail(crate::cli::EXIT_INPUT, e);
            }
            Err(e) => return fail(crate::cli::EXIT_FAILED, e),
        }
    }
    let mut texts = Vec::with_capacity(recs.len());
    for (rec, p) in recs.iter().zip(&paths) {
        match rec.try_to_ron_string() {
            Ok(t) => texts.push(t),
            Err(e) => return fail(crate::cli::EXIT_FAILED, e.with_path(p)),
        }
    }
    let options = crate::recording::WriteOptions::private(args.force);
    let mut written: Vec<&PathBuf> = Vec::new();
    for (((rec, p), text), fresh) in recs.iter().zip(&paths).zip(&texts).zip(&fresh) {
        if let Err(e) = crate::recording::write_file(p, text.as_bytes(), options) {
            // Undo this run's new files (never a file that was there before).
            for w in written {
                let _ = std::fs::remove_file(w);
            }
            let code = match e {
                crate::recording::RecordingError::Exists { .. } => crate::cli::EXIT_INPUT,
                _ => crate::cli::EXIT_FAILED,
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
    ExitCode::from(crate::cli::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64() {
        assert_eq!(
            base64_decode("ZGF0YTogW0RPTkVdCgo=").as_deref(),
            Ok(b"data: [DONE]\n\n".as_slice())
        );
        assert_eq!(base64_decode("YWI").as_deref(), Ok(b"ab".as_slice()));
        assert!(base64_decode("a$b").is_err());
    }

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
