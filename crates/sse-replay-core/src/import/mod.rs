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
    /// A stream in the file has a line or event over `--max-event-bytes`.
    #[error("{overflow} in {at} of {}", .path.display())]
    EventTooLarge {
        path: PathBuf,
        at: String,
        overflow: crate::sse::Overflow,
    },
    /// Read from a pipe or device, the input went past its size limit.
    #[error("input longer than {limit} bytes ({} × --max-event-bytes) in {}", crate::input::RECORDING_LINE_FACTOR, .path.display())]
    TooLong { path: PathBuf, limit: u64 },
    /// The input went past `--max-input-bytes`: nothing after that byte was read.
    #[error(
        "input longer than {} (--max-input-bytes): reading stopped at byte {limit} in {}",
        crate::text::plural(*.limit, "byte"),
        .path.display()
    )]
    InputTooLong { path: PathBuf, limit: u64 },
    /// The cassette nests deeper than any real cassette (and than the YAML reader accepts).
    #[error("cassette nests brackets more than {limit} levels deep at line {line}; refused before parsing in {}", .path.display())]
    TooDeep {
        path: PathBuf,
        line: usize,
        limit: usize,
    },
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
            | Self::NoStreams { path, .. }
            | Self::EventTooLarge { path, .. }
            | Self::TooLong { path, .. }
            | Self::InputTooLong { path, .. }
            | Self::TooDeep { path, .. } => path,
        }
    }

    /// The input went past a size limit (the stream is at fault, as for `check`), rather than
    /// being unreadable or not a capture.
    pub fn is_over_limit(&self) -> bool {
        matches!(
            self,
            Self::EventTooLarge { .. } | Self::TooLong { .. } | Self::InputTooLong { .. }
        )
    }
}

/// How much one import may produce and accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportLimits {
    /// The longest line or event accepted in a stream (`--max-event-bytes`).
    pub max_event_bytes: u64,
    /// Recordings made from one file at most (`--max-streams`); the rest are counted, not made.
    pub max_streams: usize,
    /// The most bytes read from the file (`--max-input-bytes`); unbounded by default.
    pub max_input_bytes: u64,
}

/// `--max-streams` default: far more than a real capture holds, far fewer than a hostile one.
pub const DEFAULT_MAX_STREAMS: usize = 1000;

impl Default for ImportLimits {
    fn default() -> Self {
        Self {
            max_event_bytes: crate::input::DEFAULT_MAX_EVENT_BYTES,
            max_streams: DEFAULT_MAX_STREAMS,
            max_input_bytes: u64::MAX,
        }
    }
}

/// What an import produced.
#[derive(Debug, Default)]
pub struct Imported {
    /// One recording per event stream, at most [`ImportLimits::max_streams`].
    pub recordings: Vec<Recording>,
    /// Event streams left out because of [`ImportLimits::max_streams`].
    pub skipped_streams: usize,
}

impl Imported {
    /// Keep `rec` if there is room, else count it as skipped.
    pub(crate) fn push(&mut self, rec: Recording, limits: &ImportLimits) {
        if self.recordings.len() < limits.max_streams {
            self.recordings.push(rec);
        } else {
            self.skipped_streams += 1;
        }
    }

    /// Whether another recording would be kept (so building it is worth the work).
    pub(crate) fn has_room(&self, limits: &ImportLimits) -> bool {
        self.recordings.len() < limits.max_streams
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
    let body = crate::text::strip_bom(bytes);
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
        first_line: crate::text::truncate(&String::from_utf8_lossy(first_line), 60),
    })
}

/// Import a file: one recording per event stream it holds (at least one), each with a title, with
/// the default [`ImportLimits`] (streams past the limit are dropped; see [`import_path_with`]).
pub fn import_path(path: &Path) -> Result<Vec<Recording>, ImportError> {
    import_path_with(path, &ImportLimits::default(), false).map(|i| i.recordings)
}

/// Import a file (`-` = standard input) within `limits`. A regular file is read up to its size;
/// a pipe or device up to [`crate::input::RECORDING_LINE_FACTOR`] × the event limit. An input
/// whose first block is recognisably not a capture is refused before the rest is read (so
/// `/dev/zero` ends at once), and a FIFO without a writer is empty input. Secrets are redacted
/// unless `keep_secrets` (`--keep-secrets`).
pub fn import_path_with(
    path: &Path,
    limits: &ImportLimits,
    keep_secrets: bool,
) -> Result<Imported, ImportError> {
    use std::io::Read as _;
    let io = |source: std::io::Error| match crate::input::over_input_limit(&source) {
        Some(limit) => ImportError::InputTooLong {
            path: path.to_owned(),
            limit,
        },
        None => ImportError::Io {
            path: path.to_owned(),
            source,
        },
    };
    let mut input =
        crate::input::open_input(path, limits.max_input_bytes).map_err(|e| match e {
            crate::input::InputError::IsDirectory { .. } => io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "is a directory",
            )),
            crate::input::InputError::InputTooLong { limit, .. } => ImportError::InputTooLong {
                path: path.to_owned(),
                limit,
            },
            crate::input::InputError::Io { source, .. } => io(source),
            other => io(std::io::Error::other(other.to_string())),
        })?;
    let head_len = 1usize << 20;
    let mut bytes = Vec::new();
    (&mut input.reader)
        .take(head_len as u64)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() == head_len
        && let Err(e @ ImportError::Unrecognised { .. }) = detect(path, &bytes)
    {
        return Err(e);
    }
    let limit = match input.len {
        Some(n) => n,
        None => limits
            .max_event_bytes
            .saturating_mul(crate::input::RECORDING_LINE_FACTOR),
    };
    (&mut input.reader)
        .take(limit.saturating_sub(bytes.len() as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if input.len.is_none() && bytes.len() as u64 > limit {
        return Err(ImportError::TooLong {
            path: path.to_owned(),
            limit,
        });
    }
    import_bytes_with(path, &bytes, limits, keep_secrets)
}

/// Import bytes already read; `path` names them in titles and errors. Secrets are redacted.
pub fn import_bytes(path: &Path, bytes: &[u8]) -> Result<Vec<Recording>, ImportError> {
    import_bytes_with(path, bytes, &ImportLimits::default(), false).map(|i| i.recordings)
}

/// [`import_bytes`] within `limits`; with `keep_secrets` the requests' secrets are kept.
pub fn import_bytes_with(
    path: &Path,
    bytes: &[u8],
    limits: &ImportLimits,
    keep_secrets: bool,
) -> Result<Imported, ImportError> {
    let imported = match detect(path, bytes)? {
        ImportFormat::Har => har::import(path, bytes, limits, keep_secrets)?,
        ImportFormat::Cassette => cassette::import(path, bytes, limits, keep_secrets)?,
        ImportFormat::JsonLines => Imported {
            recordings: vec![jsonl::import(path, bytes, limits)?],
            skipped_streams: 0,
        },
        ImportFormat::RawBody => Imported {
            recordings: vec![raw_body(path, bytes, limits)?],
            skipped_streams: 0,
        },
    };
    if imported.recordings.is_empty() {
        return Err(ImportError::NoStreams {
            path: path.to_owned(),
            why: "nothing found".into(),
        });
    }
    Ok(imported)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A raw body (`curl -N … > file`): SSE or JSON lines, one chunk per event.
fn raw_body(path: &Path, bytes: &[u8], limits: &ImportLimits) -> Result<Recording, ImportError> {
    let mut rec =
        crate::input::raw_to_recording_limited(bytes, &file_name(path), limits.max_event_bytes)
            .map_err(|overflow| ImportError::EventTooLarge {
                path: path.to_owned(),
                at: "the body".into(),
                overflow,
            })?;
    rec.meta.source = "import:raw".into();
    rec.meta.notes = vec![format!(
        "Imported from the raw body {}. A raw body {NO_TIMING_NOTE}",
        file_name(path)
    )];
    Ok(rec)
}

/// Where a body came from in a capture, for [`body_recording`]'s errors.
pub(crate) struct BodyOrigin<'a> {
    pub path: &'a Path,
    /// E.g. "HAR entry 3".
    pub at: String,
}

/// A body as a recording, with the import's metadata; a line or event over the limit is an error.
pub(crate) fn body_recording(
    body: &[u8],
    title: String,
    format: ImportFormat,
    notes: Vec<String>,
    origin: BodyOrigin<'_>,
    limits: &ImportLimits,
) -> Result<Recording, ImportError> {
    let mut rec = crate::input::raw_to_recording_limited(body, &title, limits.max_event_bytes)
        .map_err(|overflow| ImportError::EventTooLarge {
            path: origin.path.to_owned(),
            at: origin.at,
            overflow,
        })?;
    rec.meta.source = format!("import:{}", format.name());
    rec.meta.notes = notes;
    rec.meta.timing_known = false;
    Ok(rec)
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

/// Decode standard or URL-safe base64 (padding optional, whitespace ignored, the two alphabets'
/// 62nd/63rd characters both accepted, and anything after the first `=` ignored, as before the
/// `base64` crate did the decoding).
pub(crate) fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let data = s.split('=').next().unwrap_or_default();
    let standard: Vec<u8> = data
        .bytes()
        .filter(|c| !c.is_ascii_whitespace())
        .map(|c| match c {
            b'-' => b'+',
            b'_' => b'/',
            c => c,
        })
        .collect();
    LENIENT.decode(standard).map_err(|e| match e {
        base64::DecodeError::InvalidByte(_, byte) => {
            format!("invalid base64 character {:?}", char::from(byte))
        }
        other => format!("invalid base64: {other}"),
    })
}

/// Whether the file is a regular file that starts like a recorder journal
/// (`# sse-replay journal v…`).
pub fn is_journal_file(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 64];
    // Only a regular file: opening a FIFO would wait for a writer, and reading a pipe's head here
    // would take it from the importer.
    if crate::input::is_stdin(path) || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let n = file.take(64).read(&mut head).unwrap_or(0);
    let head = crate::text::strip_bom(&head[..n]);
    head.starts_with(crate::recording::JOURNAL_MAGIC_PREFIX.as_bytes())
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
        // URL-safe alphabet, whitespace, and anything after the padding.
        assert_eq!(
            base64_decode("-_-_\n-_8=\r\n").as_deref(),
            Ok(b"\xfb\xff\xbf\xfb\xff".as_slice())
        );
        assert_eq!(
            base64_decode("+/+/").as_deref(),
            Ok(b"\xfb\xff\xbf".as_slice())
        );
        assert_eq!(base64_decode("YQ==ignored").as_deref(), Ok(b"a".as_slice()));
        assert_eq!(
            base64_decode("a$b"),
            Err("invalid base64 character '$'".to_owned())
        );
    }
}
