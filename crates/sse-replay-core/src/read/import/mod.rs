//! Imports: turn the capture formats people already have into recordings. One entry point,
//! [`import`] (an input opened by [`crate::probe::open`]; [`import_bytes`] for data already in
//! memory), used by `sse-replay import` and by the app's File → Import and drag-and-drop.
//!
//! The format is what [`crate::probe::decide`] made of the content (the extension only breaks ties
//! and chooses which error to report for a broken file):
//! - HAR (browser devtools "Save all as HAR", proxies): every event-stream entry becomes a
//!   recording with its request, secrets redacted ([`har`]);
//! - VCR-style YAML cassettes (vcrpy, pytest-recording, pydantic-ai) whose response body holds the
//!   raw stream ([`cassette`]);
//! - JSON-lines fixtures, one chunk object per line without `data:` framing, as SDK test suites keep
//!   them ([`jsonl`]);
//! - Azure SDK test-proxy session records (openai-dotnet, the Azure SDKs), whose entries keep an
//!   event stream as a list of its lines ([`testproxy`]);
//! - a body kept as base64 text, and a JSON capture whose `response.bodyBase64` holds the body
//!   ([`wrapped`]: how test suites keep binary AWS event streams);
//! - raw bodies (`curl -N … > file`: SSE, JSON lines or binary AWS event stream frames), a JSON
//!   array of chunks (Gemini without `alt=sse`, a dump) and one complete JSON response,
//!   pretty-printed or not, through [`crate::input::raw_to_recording`].
//!
//! A body stored compressed (`Content-Encoding: gzip` or `deflate`, or gzip's magic bytes) is
//! decompressed (`encoding.rs`), up to a size limit.
//!
//! None of these formats keeps network read boundaries or timing, so every imported recording has
//! `meta.timing_known = false`, one chunk per event, and a note saying so.

pub mod cassette;
mod encoding;
pub mod har;
pub mod httprr;
pub mod jsonl;
pub mod testproxy;
pub mod wrapped;

use std::path::{Path, PathBuf};

use crate::input::InputError;
use crate::probe::{BodyForm, CaptureFormat, Kind, Probe, ReadOptions};
use crate::recording::Recording;

pub use crate::probe::DEFAULT_MAX_STREAMS;

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
        "not a capture this build can import (expected a HAR file, a VCR cassette, JSON lines, an SSE body or an AWS event stream; first line: {first_line:?}) in {}",
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
    /// The test-proxy session record is JSON but not shaped like one.
    #[error("invalid test-proxy session record at {at}: {message} in {}", .path.display())]
    TestProxy {
        path: PathBuf,
        at: String,
        message: String,
    },
    /// A JSON capture or a base64 body is malformed.
    #[error("invalid capture at {at}: {message} in {}", .path.display())]
    Capture {
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
        "input longer than {} (--max-input-bytes): reading stopped at byte {limit} in {}; {}",
        crate::text::plural(*.limit, "byte"),
        .path.display(),
        crate::input::RAISE_INPUT_LIMIT
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
            | Self::TestProxy { path, .. }
            | Self::JsonLine { path, .. }
            | Self::Capture { path, .. }
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

/// What an import produced.
#[derive(Debug, Default)]
pub struct Imported {
    /// One recording per event stream, at most [`ReadOptions::max_streams`].
    pub recordings: Vec<Recording>,
    /// Event streams left out because of [`ReadOptions::max_streams`].
    pub skipped_streams: usize,
}

impl Imported {
    /// Keep `rec` if there is room, else count it as skipped.
    pub(crate) fn push(&mut self, rec: Recording, options: &ReadOptions) {
        if self.recordings.len() < options.max_streams {
            self.recordings.push(rec);
        } else {
            self.skipped_streams += 1;
        }
    }

    /// Whether another recording would be kept (so building it is worth the work).
    pub(crate) fn has_room(&self, options: &ReadOptions) -> bool {
        self.recordings.len() < options.max_streams
    }
}

/// Where an imported recording came from: a capture format, or a raw body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFormat {
    Har,
    Cassette,
    JsonLines,
    /// An Azure SDK test-proxy session record.
    TestProxy,
    RawBody,
    /// A file that is the base64 text of a stream.
    Base64Body,
    /// A JSON document holding one response with a base64 (or text) body.
    JsonCapture,
    /// An httprr trace (Go).
    Httprr,
}

impl ImportFormat {
    /// Short name for messages and `meta.source` (`import:har`, …).
    pub fn name(self) -> &'static str {
        match self {
            ImportFormat::Har => "har",
            ImportFormat::Cassette => "cassette",
            ImportFormat::JsonLines => "jsonl",
            ImportFormat::TestProxy => "test-proxy",
            ImportFormat::RawBody => "raw",
            ImportFormat::Base64Body => "base64",
            ImportFormat::JsonCapture => "json-capture",
            ImportFormat::Httprr => "httprr",
        }
    }
}

/// The note every imported recording carries: which boundaries are made up.
pub const NO_TIMING_NOTE: &str = "keeps no chunk boundaries or timing: the body is shown as one chunk per event, and the strategies that need real network reads cannot run.";

impl From<CaptureFormat> for ImportFormat {
    fn from(f: CaptureFormat) -> Self {
        match f {
            CaptureFormat::Har => ImportFormat::Har,
            CaptureFormat::Cassette => ImportFormat::Cassette,
            CaptureFormat::JsonLines => ImportFormat::JsonLines,
            CaptureFormat::TestProxy => ImportFormat::TestProxy,
            CaptureFormat::Base64Body => ImportFormat::Base64Body,
            CaptureFormat::JsonCapture => ImportFormat::JsonCapture,
            CaptureFormat::Httprr => ImportFormat::Httprr,
        }
    }
}

/// The format of a body by its content (`text`: the first bytes, a BOM and leading whitespace
/// removed; `path`'s extension breaks ties): the capture formats and bodies only import reads
/// (a test-proxy session, a base64 or JSON-wrapped capture, a binary AWS event stream, a JSON
/// array of chunks) beside what [`crate::probe::decide`] tells apart.
fn detect_body(path: &Path, bytes: &[u8]) -> Result<ImportFormat, ImportError> {
    let body = crate::text::strip_bom(bytes);
    let Some(start) = body.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Err(ImportError::Empty {
            path: path.to_owned(),
        });
    };
    let text = &body[start..];
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "har" => return Ok(ImportFormat::Har),
        "yaml" | "yml" => return Ok(ImportFormat::Cassette),
        "jsonl" | "ndjson" => return Ok(ImportFormat::JsonLines),
        "httprr" => return Ok(ImportFormat::Httprr),
        _ => {}
    }
    // Before the SSE rule: a trace's responses hold `data:` lines, but its requests and response
    // heads are no events.
    if httprr::is_trace(text) {
        return Ok(ImportFormat::Httprr);
    }
    // A binary AWS event stream body (its first byte is a control byte, never whitespace).
    if crate::aws_eventstream::looks_like_aws_eventstream(body) {
        return Ok(ImportFormat::RawBody);
    }
    let first_line_end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    let first_line = &text[..first_line_end];
    if wrapped::looks_like_json_capture(text) {
        return Ok(ImportFormat::JsonCapture);
    }
    if let Some(format) = whole_document(text) {
        return Ok(format);
    }
    if crate::json_array::looks_like_json_array(text) {
        // A JSON array of chunks (Gemini without alt=sse, a dump), even one cut short.
        return Ok(ImportFormat::RawBody);
    }
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
    if lines().any(cassette::opens_interactions) {
        return Ok(ImportFormat::Cassette);
    }
    if lines()
        .take(64)
        .any(|l| l.starts_with(b"data:") || l.starts_with(b"event:"))
    {
        return Ok(ImportFormat::RawBody);
    }
    if wrapped::looks_like_base64_stream(text) {
        return Ok(ImportFormat::Base64Body);
    }
    Err(ImportError::Unrecognised {
        path: path.to_owned(),
        first_line: crate::text::truncate(&String::from_utf8_lossy(first_line), 60),
    })
}

/// Is `text` (a head, perhaps cut short) one JSON document that is a test-proxy session record?
pub(crate) fn is_test_proxy_session(text: &[u8]) -> bool {
    whole_document(text) == Some(ImportFormat::TestProxy)
}

/// The format of a body that is exactly one JSON document: a HAR (`log`), a test-proxy session
/// record (`Entries`), or anything else: a complete response (pretty-printed or not) or a JSON
/// array of chunks, read as a raw body exactly as `check` reads it. `None` when it is not one
/// document (JSON lines, SSE, YAML…).
fn whole_document(text: &[u8]) -> Option<ImportFormat> {
    if !matches!(text.first(), Some(b'{' | b'[')) {
        return None;
    }
    let mut it = serde_json::Deserializer::from_slice(text).into_iter::<serde_json::Value>();
    let doc = it.next()?.ok()?;
    if it.next().is_some() {
        return None;
    }
    Some(match &doc {
        serde_json::Value::Object(m) if m.contains_key("log") => ImportFormat::Har,
        serde_json::Value::Object(m) if testproxy::looks_like_session(m) => ImportFormat::TestProxy,
        _ => ImportFormat::RawBody,
    })
}

/// Which importer reads an input of this kind (`head`: its first bytes, for the messages), or why
/// none does.
pub fn importer(kind: Kind, path: &Path, head: &[u8]) -> Result<ImportFormat, ImportError> {
    let path = path.to_owned();
    match kind {
        Kind::Recording | Kind::Journal if crate::probe::is_blank(head) => {
            Err(ImportError::Empty { path })
        }
        Kind::Recording | Kind::Journal => Err(ImportError::AlreadyRecording { path }),
        Kind::Capture(format) => Ok(format.into()),
        Kind::Body(BodyForm::Blank) => Err(ImportError::Empty { path }),
        // Every other body by its content: JSON lines, SSE, a JSON array, one document (a HAR, a
        // test-proxy session, a complete response), a wrapped or binary capture.
        Kind::Body(_) => detect_body(&path, head),
    }
}

/// Import an opened input: one recording per event stream it holds (at least one), each with a
/// title, within its [`ReadOptions`] (at most `max_streams`, lines and events at most
/// `max_event_bytes`, secrets redacted unless `keep_secrets`). The importer is chosen from the
/// probe's decision before the rest is read, so an input that is not a capture (`/dev/zero`) is
/// refused at once; a regular file is read up to its size, a pipe or device up to
/// [`crate::input::RECORDING_LINE_FACTOR`] × the event limit, and no input past `max_input_bytes`
/// ([`ImportError::InputTooLong`]).
pub fn import(probe: Probe) -> Result<Imported, ImportError> {
    use std::io::Read as _;
    let kind = probe.kind();
    let options = *probe.options();
    let input = probe.into_input();
    let path = input.path().to_owned();
    // Read whole: a regular file over the input limit is refused before it is read.
    input
        .refuse_larger_file()
        .map_err(|e| open_error(&path, e))?;
    let format = importer(kind, &path, input.head())?;
    let io = |source: std::io::Error| match crate::input::over_input_limit(&source) {
        Some(limit) => ImportError::InputTooLong {
            path: path.clone(),
            limit,
        },
        None => ImportError::Io {
            path: path.clone(),
            source,
        },
    };
    let size = input.size();
    let limit = match size {
        Some(n) => n,
        None => options.max_event_bytes.recording_line_bytes(),
    };
    let (mut bytes, rest) = input.into_parts();
    rest.take(limit.saturating_sub(bytes.len() as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if size.is_none() && bytes.len() as u64 > limit {
        return Err(ImportError::TooLong { path, limit });
    }
    import_as(format, &path, &bytes, &options)
}

/// The error opening an input for import gives: a directory is "cannot read the file".
pub fn open_error(path: &Path, e: InputError) -> ImportError {
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    match e {
        InputError::IsDirectory { .. } => io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is a directory",
        )),
        InputError::InputTooLong { limit, .. } => ImportError::InputTooLong {
            path: path.to_owned(),
            limit,
        },
        InputError::Io { source, .. } => io(source),
        other => io(std::io::Error::other(other.to_string())),
    }
}

/// Import bytes already read; `path` names them in titles and errors (and its extension breaks
/// ties, as for a file).
pub fn import_bytes(
    path: &Path,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Imported, ImportError> {
    let format = importer(crate::probe::decide(path, bytes), path, bytes)?;
    import_as(format, path, bytes, options)
}

fn import_as(
    format: ImportFormat,
    path: &Path,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Imported, ImportError> {
    let imported = match format {
        ImportFormat::Har => har::import(path, bytes, options)?,
        ImportFormat::Cassette => cassette::import(path, bytes, options)?,
        ImportFormat::JsonLines => Imported {
            recordings: vec![jsonl::import(path, bytes, options)?],
            skipped_streams: 0,
        },
        ImportFormat::TestProxy => testproxy::import(path, bytes, options)?,
        ImportFormat::RawBody => Imported {
            recordings: vec![raw_body(path, bytes, options)?],
            skipped_streams: 0,
        },
        ImportFormat::Base64Body => wrapped::import_base64(path, bytes, options)?,
        ImportFormat::JsonCapture => wrapped::import_json_capture(path, bytes, options)?,
        ImportFormat::Httprr => httprr::import(path, bytes, options)?,
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

/// A raw body (`curl -N … > file`): SSE, JSON lines, a JSON array or one complete JSON
/// response, one chunk per event.
fn raw_body(path: &Path, bytes: &[u8], options: &ReadOptions) -> Result<Recording, ImportError> {
    let mut rec =
        crate::input::raw_to_recording_limited(bytes, &file_name(path), options.max_event_bytes)
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

/// The most a compressed body may decode to: as much as a recording read from a pipe may hold.
pub(crate) fn max_decoded_body(options: &ReadOptions) -> u64 {
    options.max_event_bytes.recording_line_bytes()
}

pub(crate) use crate::wire::base64::decode as base64_decode;
pub(crate) use encoding::decode_body;

/// A body as a recording, with the import's metadata; a line or event over the limit is an error.
pub(crate) fn body_recording(
    body: &[u8],
    title: String,
    format: ImportFormat,
    notes: Vec<String>,
    origin: BodyOrigin<'_>,
    options: &ReadOptions,
) -> Result<Recording, ImportError> {
    let mut rec = crate::input::raw_to_recording_limited(body, &title, options.max_event_bytes)
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

/// Does this body look like a stream (SSE lines, JSON lines, binary AWS event stream frames, or a
/// JSON array whose first element is a chunk of a known dialect, as Gemini's
/// `streamGenerateContent` without `alt=sse` sends) rather than one JSON document?
pub(crate) fn is_stream_body(body: &[u8]) -> bool {
    if crate::aws_eventstream::looks_like_aws_eventstream(body) {
        return true;
    }
    if crate::json_array::looks_like_json_array(body) {
        let mut framer = crate::json_array::JsonArrayFramer::default();
        let mut first: Option<bool> = None;
        // The first element decides; the framer stops being fed once it has been seen.
        for block in body.chunks(64 * 1024) {
            framer.feed(block, &mut |item| {
                if let crate::framing::Framed::Event { data, .. } = item {
                    first.get_or_insert_with(|| crate::dialect::detect("message", data).is_some());
                }
            });
            if first.is_some() {
                break;
            }
        }
        return first.unwrap_or(false);
    }
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

/// Whether a content type names a stream: `text/event-stream`, NDJSON / JSON lines, or binary AWS
/// event stream frames (`application/vnd.amazon.eventstream`).
pub(crate) fn is_stream_type(content_type: &str) -> bool {
    let t = content_type.trim().to_ascii_lowercase();
    t.starts_with("text/event-stream")
        || t.starts_with(crate::aws_eventstream::CONTENT_TYPE)
        || t.starts_with("application/x-ndjson")
        || t.starts_with("application/ndjson")
        || t.starts_with("application/jsonl")
        || t.starts_with("application/x-jsonlines")
}
