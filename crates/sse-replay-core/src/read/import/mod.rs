//! Imports: turn the capture formats people already have into recordings. One entry point,
//! [`import`] (an input opened by [`crate::probe::open`]; [`import_bytes`] for data already in
//! memory), used by `sse-replay import` and by the app's File → Import and drag-and-drop.
//!
//! The format is what [`crate::content::decide`] made of the content (the extension only breaks
//! ties and chooses which error to report for a broken file); no importer decides again:
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

pub use crate::content::ImportFormat;
use crate::content::{Content, NotImportable};
use crate::input::InputError;
use crate::probe::{Probe, ReadOptions};
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

/// The note every imported recording carries: which boundaries are made up.
pub const NO_TIMING_NOTE: &str = "keeps no chunk boundaries or timing: the body is shown as one chunk per event, and the strategies that need real network reads cannot run.";

/// Which importer reads an input, as the one decision on its content said
/// ([`crate::content::Content::import`]; `head`: its first bytes, for the messages), or why none
/// does.
pub fn importer(content: Content, path: &Path, head: &[u8]) -> Result<ImportFormat, ImportError> {
    let path = path.to_owned();
    content.import.map_err(|why| match why {
        NotImportable::Empty => ImportError::Empty { path },
        NotImportable::AlreadyRecording => ImportError::AlreadyRecording { path },
        NotImportable::Unrecognised => ImportError::Unrecognised {
            path,
            first_line: crate::text::truncate(
                &String::from_utf8_lossy(crate::content::first_line(head)),
                60,
            ),
        },
    })
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
    let content = probe.content();
    let options = *probe.options();
    let input = probe.into_input();
    let path = input.path().to_owned();
    // Read whole: a regular file over the input limit is refused before it is read.
    input
        .refuse_larger_file()
        .map_err(|e| open_error(&path, e))?;
    let format = importer(content, &path, input.head())?;
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
    let format = importer(crate::content::decide(path, bytes), path, bytes)?;
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
