//! The recording model: one captured (or stubbed, or imported) streaming response, with the exact
//! bytes of every network read and its arrival time, stored as a versioned, human-readable RON document.
//!
//! Chunks keep exact byte boundaries, even when a read ends in the middle of a UTF-8 character. To keep
//! the file readable in a text editor, a chunk is stored as `text` (valid UTF-8, CJK stays CJK), plus
//! optional `lead` (continuation bytes that finish a character begun in the previous chunk) and `trail`
//! (the first bytes of a character finished in the next chunk), both as hex. A chunk that is not UTF-8
//! at all is stored as `hex` only:
//!
//! ```text
//! (t_us: 1200, text: "data: 深", trail: "e5 9c")
//! (t_us: 1300, lead: "b3", text: "\"}\n\n")
//! (t_us: 1400, hex: "de ad be ef")
//! ```
//!
//! Besides the document format, this module holds the recorder's crash-safe journal
//! ([`JournalWriter`], [`salvage_journal`]): a line-per-record file `<out>.partial` that
//! [`load`] recognises by its first line and turns back into a [`Recording`] marked
//! [`Meta::interrupted`].

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The newest file format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

pub use crate::redact::{
    REDACTED, REDACTED_URL_VALUE, is_secret_header, redact_headers, redact_url,
};

/// The first line of a recorder journal (see [`JournalWriter`]).
pub const JOURNAL_MAGIC: &str = "# sse-replay journal v1";

/// Everything before the journal format number in [`JOURNAL_MAGIC`].
pub const JOURNAL_MAGIC_PREFIX: &str = "# sse-replay journal v";

/// The journal format version this build writes and reads.
const JOURNAL_VERSION: u64 = 1;

/// Buffered journal records are handed to the OS at append time when this much time passed since
/// they last were (a killed process loses nothing the OS holds).
const JOURNAL_WRITE_OUT_INTERVAL: Duration = Duration::from_millis(50);

/// Nesting limit for the RON parser and serializer: recordings nest about 6 deep, so this only
/// stops hostile or broken input before it can overflow the stack.
const RECURSION_LIMIT: usize = 64;

/// Indentation of a top-level field in `ron`'s pretty output (default indentor: 4 spaces).
const FIELD_INDENT: &str = "    ";

/// One recording: what was asked, what came back, and how it arrived.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Recording {
    /// File format version (see [`FORMAT_VERSION`]).
    pub version: u32,
    pub meta: Meta,
    /// The request that produced the stream, when known (headers redacted).
    pub request: Option<RequestInfo>,
    /// The response status and headers, when known.
    pub response: Option<ResponseInfo>,
    /// The response body as received: exact bytes per read, with arrival times.
    pub chunks: Vec<Chunk>,
    /// Optional ground truth (stub recordings): the original arguments of each call.
    pub truth: Vec<TruthCall>,
}

/// Descriptive metadata.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Meta {
    pub title: String,
    /// Where it came from: "record", "proxy", "stub", "import:har", "raw file", ...
    pub source: String,
    /// RFC 3339 creation time (UTC), or empty.
    pub created: String,
    /// Dialect name when known ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama"), or empty = auto-detect.
    pub dialect: String,
    /// Free-form notes shown in the app (e.g. "HAR keeps no chunk boundaries or timing").
    pub notes: Vec<String>,
    /// True when chunk boundaries/timing are real network reads; false for imports that lost them.
    pub timing_known: bool,
    /// Set by the salvage loader when the file was a journal left by an interrupted recorder.
    pub interrupted: bool,
}

/// The HTTP request, secrets redacted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestInfo {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// The HTTP response head.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResponseInfo {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

/// One network read: exact bytes and arrival time in microseconds since the request was sent
/// (or since the first chunk, for imports).
///
/// Serialized as `(t_us: .., lead: "..", text: "..", trail: "..")` or `(t_us: .., hex: "..")`,
/// see the module documentation. Any byte sequence round-trips exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunk {
    pub t_micros: u64,
    pub bytes: Vec<u8>,
}

/// Ground truth for one call of a stub recording.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TruthCall {
    pub id: String,
    pub name: String,
    /// The original arguments string, verbatim.
    pub arguments: String,
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Why a recording could not be loaded or saved. Messages name the position first and the file last.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// Reading, writing, renaming or removing a file failed.
    #[error("I/O error while {op}: {source} in {}", .path.display())]
    Io {
        /// What was being done: "reading", "writing", "renaming to the final name", ...
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The RON parser (or a type check during deserialization) failed at this position.
    #[error("RON syntax error at line {line}, column {col}: {message}{}", InPath(.path))]
    Syntax {
        path: Option<PathBuf>,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        col: usize,
        message: String,
    },
    /// The file was written by a newer build.
    #[error(
        "recording format version {found} is newer than this build supports ({supported}){}",
        InPath(.path)
    )]
    FutureVersion {
        path: Option<PathBuf>,
        found: u64,
        supported: u64,
    },
    /// The document parsed but has no `version` field.
    #[error("not an sse-replay recording (no version field){}", InPath(.path))]
    MissingVersion { path: Option<PathBuf> },
    /// `version: 0` (versions start at 1).
    #[error("invalid recording format version {found} (versions start at 1){}", InPath(.path))]
    InvalidVersion { path: Option<PathBuf>, found: u64 },
    /// The file is not UTF-8 text.
    #[error("file is not valid UTF-8 text at byte offset {offset} (line {line}){}", InPath(.path))]
    InvalidUtf8 {
        path: Option<PathBuf>,
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// 1-based line of that byte.
        line: usize,
    },
    /// A chunk's `hex`/`lead`/`trail` could not be decoded.
    #[error("invalid chunks[{index}] (t_us: {t_micros}): {message}{}", InPath(.path))]
    BadChunk {
        path: Option<PathBuf>,
        /// 0-based index in `chunks`.
        index: usize,
        t_micros: u64,
        message: String,
    },
    /// A journal is structurally wrong (not a parse error): e.g. chunks before the head record.
    #[error("invalid recorder journal at line {line}: {message}{}", InPath(.path))]
    BadJournal {
        path: Option<PathBuf>,
        line: usize,
        message: String,
    },
    /// The output exists and overwriting it was not asked for (`--force`).
    #[error("refusing to overwrite an existing file (use --force): {}", .path.display())]
    Exists { path: PathBuf },
    /// [`JournalWriter::create`] found the journal of an earlier, interrupted recording in the way.
    #[error(
        "a journal of an interrupted recording already exists (load it to salvage its chunks, or delete it) in {}",
        .path.display()
    )]
    JournalExists { path: PathBuf },
    /// RON serialization failed (not expected to happen for these types).
    #[error("cannot serialize the recording to RON: {message}{}", InPath(.path))]
    Serialize {
        path: Option<PathBuf>,
        message: String,
    },
}

/// Displays ` in <path>` when there is a path.
struct InPath<'a>(&'a Option<PathBuf>);

impl fmt::Display for InPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, " in {}", path.display()),
            None => Ok(()),
        }
    }
}

impl RecordingError {
    /// The file the error is about, if known.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Io { path, .. } | Self::JournalExists { path } | Self::Exists { path } => {
                Some(path)
            }
            Self::Syntax { path, .. }
            | Self::FutureVersion { path, .. }
            | Self::MissingVersion { path }
            | Self::InvalidVersion { path, .. }
            | Self::InvalidUtf8 { path, .. }
            | Self::BadChunk { path, .. }
            | Self::BadJournal { path, .. }
            | Self::Serialize { path, .. } => path.as_deref(),
        }
    }

    /// Attaches `path` to an error that came from parsing text (keeps an existing path).
    #[must_use]
    pub fn with_path(mut self, new_path: &Path) -> Self {
        match &mut self {
            Self::Io { .. } | Self::JournalExists { .. } | Self::Exists { .. } => {}
            Self::Syntax { path, .. }
            | Self::FutureVersion { path, .. }
            | Self::MissingVersion { path }
            | Self::InvalidVersion { path, .. }
            | Self::InvalidUtf8 { path, .. }
            | Self::BadChunk { path, .. }
            | Self::BadJournal { path, .. }
            | Self::Serialize { path, .. } => {
                if path.is_none() {
                    *path = Some(new_path.to_path_buf());
                }
            }
        }
        self
    }

    fn io(op: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }

    /// `text` is what was parsed; `line_offset` is added to the reported line (journal records).
    fn syntax(text: &str, err: &ron::error::SpannedError, line_offset: usize) -> Self {
        let pos = error_position(text, &err.span);
        Self::Syntax {
            path: None,
            line: pos.line + line_offset,
            col: pos.col,
            message: err.code.to_string(),
        }
    }

    fn serialize(err: &ron::Error) -> Self {
        Self::Serialize {
            path: None,
            message: err.to_string(),
        }
    }
}

/// Where to point for a `ron` error. Its span runs from the parser's cursor before the failing
/// token, often still before whitespace, to after it; the start with that whitespace skipped is the
/// token (`title: 5` → the `5`, `garbage` → the `g`).
fn error_position(text: &str, span: &ron::error::Span) -> ron::error::Position {
    let (start, end) = (span.start, span.end);
    let line_start = if start.line <= 1 {
        Some(0)
    } else {
        text.match_indices('\n')
            .nth(start.line - 2)
            .map(|(i, _)| i + 1)
    };
    let Some(line_start) = line_start else {
        return start;
    };
    let mut pos = start;
    let rest = text[line_start..].chars().skip(start.col.saturating_sub(1));
    for c in rest {
        if !c.is_whitespace() || (pos.line, pos.col) >= (end.line, end.col) {
            break;
        }
        if c == '\n' {
            pos.line += 1;
            pos.col = 1;
        } else {
            pos.col += 1;
        }
    }
    pos
}

// ---------------------------------------------------------------------------------------------
// Chunk serialization
// ---------------------------------------------------------------------------------------------

/// How a chunk's bytes are laid out in the file.
#[derive(Debug, PartialEq, Eq)]
enum ChunkLayout<'a> {
    /// `lead ++ text ++ trail` where `lead` is ≤ 3 continuation bytes and `trail` a ≤ 3 byte
    /// incomplete UTF-8 sequence.
    Text {
        lead: &'a [u8],
        text: &'a str,
        trail: &'a [u8],
    },
    /// Not UTF-8 even after removing lead and trail.
    Hex,
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

fn chunk_layout(bytes: &[u8]) -> ChunkLayout<'_> {
    let lead_len = bytes
        .iter()
        .take(3)
        .take_while(|&&b| is_continuation(b))
        .count();
    let (lead, rest) = bytes.split_at(lead_len);
    match std::str::from_utf8(rest) {
        Ok(text) => ChunkLayout::Text {
            lead,
            text,
            trail: &[],
        },
        // `error_len() == None`: the input ends in the middle of a valid sequence.
        Err(err) if err.error_len().is_none() => {
            let (valid, trail) = rest.split_at(err.valid_up_to());
            match std::str::from_utf8(valid) {
                Ok(text) => ChunkLayout::Text { lead, text, trail },
                Err(_) => ChunkLayout::Hex,
            }
        }
        Err(_) => ChunkLayout::Hex,
    }
}

/// Lowercase hex pairs separated by single spaces: `de ad be ef`.
fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, &b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0F)]));
    }
    out
}

/// Parses hex digits, ignoring any whitespace (`de ad`, `dead`, `d e\na d` are all `[0xde, 0xad]`).
fn from_hex(text: &str, field: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        let Some(digit) = c.to_digit(16) else {
            return Err(format!("invalid hex digit {c:?} in `{field}`"));
        };
        // A hex digit is < 16, so it fits a u8.
        let digit = u8::try_from(digit).unwrap_or(0);
        match high.take() {
            None => high = Some(digit),
            Some(h) => out.push(h << 4 | digit),
        }
    }
    if high.is_some() {
        return Err(format!("odd number of hex digits in `{field}`"));
    }
    Ok(out)
}

/// The written form of a chunk.
#[derive(Serialize)]
#[serde(rename = "Chunk")]
struct ChunkOut<'a> {
    t_us: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    lead: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    text: &'a str,
    #[serde(skip_serializing_if = "String::is_empty")]
    trail: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    hex: String,
}

impl<'a> From<&'a Chunk> for ChunkOut<'a> {
    fn from(chunk: &'a Chunk) -> Self {
        match chunk_layout(&chunk.bytes) {
            ChunkLayout::Text { lead, text, trail } => ChunkOut {
                t_us: chunk.t_micros,
                lead: to_hex(lead),
                text,
                trail: to_hex(trail),
                hex: String::new(),
            },
            ChunkLayout::Hex => ChunkOut {
                t_us: chunk.t_micros,
                lead: String::new(),
                text: "",
                trail: String::new(),
                hex: to_hex(&chunk.bytes),
            },
        }
    }
}

/// The read form of a chunk: strings, decoded by [`RawChunk::decode`].
#[derive(Debug, Deserialize)]
#[serde(rename = "Chunk", deny_unknown_fields)]
struct RawChunk {
    t_us: u64,
    #[serde(default)]
    lead: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    trail: String,
    #[serde(default)]
    hex: String,
}

impl RawChunk {
    fn decode(self) -> Result<Chunk, String> {
        let bytes = if self.hex.trim().is_empty() {
            let mut bytes = from_hex(&self.lead, "lead")?;
            bytes.extend_from_slice(self.text.as_bytes());
            bytes.extend(from_hex(&self.trail, "trail")?);
            bytes
        } else {
            if !(self.lead.is_empty() && self.text.is_empty() && self.trail.is_empty()) {
                return Err("`hex` cannot be combined with `lead`, `text` or `trail`".into());
            }
            from_hex(&self.hex, "hex")?
        };
        Ok(Chunk {
            t_micros: self.t_us,
            bytes,
        })
    }
}

impl Serialize for Chunk {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ChunkOut::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Chunk {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RawChunk::deserialize(deserializer)?
            .decode()
            .map_err(serde::de::Error::custom)
    }
}

/// Appends the one-line document form of a chunk: `(t_us: 1200, lead: "b1", text: "…", trail: "e6")`
/// or `(t_us: 1200, hex: "de ad")`, empty fields omitted. Same fields as [`Chunk`]'s `Serialize`, but
/// the text is escaped by [`push_ron_str`] so that combining marks stay readable.
fn write_chunk_line(out: &mut String, chunk: &Chunk) {
    use std::fmt::Write as _;
    let _ = write!(out, "(t_us: {}", chunk.t_micros);
    let field = |out: &mut String, name: &str, value: &str| {
        if !value.is_empty() {
            out.push_str(", ");
            out.push_str(name);
            out.push_str(": ");
            push_ron_str(out, value);
        }
    };
    match chunk_layout(&chunk.bytes) {
        ChunkLayout::Text { lead, text, trail } => {
            field(out, "lead", &to_hex(lead));
            field(out, "text", text);
            field(out, "trail", &to_hex(trail));
        }
        ChunkLayout::Hex => field(out, "hex", &to_hex(&chunk.bytes)),
    }
    out.push(')');
}

/// Appends `value` as a RON string literal that stays on one line and keeps every printable character
/// literal. (`ron` itself escapes with `char::escape_debug`, which also escapes combining marks such
/// as Devanagari vowel signs or U+FE0F, making such text unreadable.) Escaped: `"`, `\`, control
/// characters, and invisible or direction-changing format characters.
fn push_ron_str(out: &mut String, value: &str) {
    use std::fmt::Write as _;
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() || is_invisible_format(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Soft hyphen, zero-width space, line/paragraph separators, bidi marks and controls, word joiner
/// and invisible operators, and the BOM.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{200b}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    )
}

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

fn ron_options() -> ron::Options {
    ron::Options::default().with_recursion_limit(RECURSION_LIMIT)
}

/// The written form of a recording: borrowed, with `version` forced to [`FORMAT_VERSION`] and the
/// short fields before the (long) chunk list.
#[derive(Serialize)]
#[serde(rename = "Recording")]
struct RecordingOut<'a> {
    version: u32,
    meta: &'a Meta,
    request: &'a Option<RequestInfo>,
    response: &'a Option<ResponseInfo>,
    truth: &'a [TruthCall],
    chunks: &'a [Chunk],
}

/// The read form of a recording: chunks are decoded afterwards so that a bad chunk can be reported
/// with its index.
#[derive(Deserialize)]
#[serde(rename = "Recording", default)]
struct RawRecording {
    version: u32,
    meta: Meta,
    request: Option<RequestInfo>,
    response: Option<ResponseInfo>,
    chunks: Vec<RawChunk>,
    truth: Vec<TruthCall>,
}

impl Default for RawRecording {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            meta: Meta::default(),
            request: None,
            response: None,
            chunks: Vec::new(),
            truth: Vec::new(),
        }
    }
}

impl RawRecording {
    fn decode(self) -> Result<Recording, RecordingError> {
        // Destructured without `..`: a field added to `Recording` must be added here too.
        let RawRecording {
            version,
            meta,
            request,
            response,
            chunks,
            truth,
        } = self;
        let chunks = chunks
            .into_iter()
            .enumerate()
            .map(|(index, raw)| {
                let t_micros = raw.t_us;
                raw.decode().map_err(|message| RecordingError::BadChunk {
                    path: None,
                    index,
                    t_micros,
                    message,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Recording {
            version,
            meta,
            request,
            response,
            chunks,
            truth,
        })
    }
}

/// First pass of loading: only the version, every other field ignored, so that a newer file is
/// reported as such even when this build does not know its fields.
#[derive(Deserialize)]
#[serde(rename = "Recording")]
struct VersionProbe {
    #[serde(default, deserialize_with = "deserialize_some")]
    version: Option<u64>,
}

fn deserialize_some<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    u64::deserialize(deserializer).map(Some)
}

/// When the probe itself fails (syntax this build cannot parse), a leading `version: N` field is
/// still worth looking for: a newer format may use syntax we do not know.
fn scan_version(text: &str) -> Option<u64> {
    let start = text.find("version")?;
    // Only the first field of the top-level struct: `(version` or `Recording(version` after comments.
    let before = text[..start].trim_end();
    if !before.ends_with('(') {
        return None;
    }
    let rest = text[start + "version".len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn check_version(found: Option<u64>) -> Result<(), RecordingError> {
    match found {
        None => Err(RecordingError::MissingVersion { path: None }),
        Some(0) => Err(RecordingError::InvalidVersion {
            path: None,
            found: 0,
        }),
        Some(found) if found > u64::from(FORMAT_VERSION) => Err(RecordingError::FutureVersion {
            path: None,
            found,
            supported: u64::from(FORMAT_VERSION),
        }),
        Some(_) => Ok(()),
    }
}

fn parse_document(text: &str) -> Result<Recording, RecordingError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let options = ron_options();
    match options.from_str::<VersionProbe>(text) {
        Ok(probe) => check_version(probe.version)?,
        Err(err) => {
            if let Some(found) = scan_version(text) {
                check_version(Some(found))?;
            }
            return Err(RecordingError::syntax(text, &err, 0));
        }
    }
    options
        .from_str::<RawRecording>(text)
        .map_err(|err| RecordingError::syntax(text, &err, 0))?
        .decode()
}

/// 1-based line of byte `offset`.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    1 + bytes.iter().take(offset).filter(|&&b| b == b'\n').count()
}

fn is_journal(bytes: &[u8]) -> bool {
    bytes.starts_with(JOURNAL_MAGIC_PREFIX.as_bytes())
}

impl Recording {
    /// The response body: all chunks concatenated.
    pub fn body(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.chunks.iter().map(|c| c.bytes.len()).sum());
        for chunk in &self.chunks {
            body.extend_from_slice(&chunk.bytes);
        }
        body
    }

    /// Total body length in bytes.
    pub fn body_len(&self) -> u64 {
        self.chunks.iter().map(|c| c.bytes.len() as u64).sum()
    }

    /// Arrival time of the latest chunk (0 without chunks).
    pub fn duration_micros(&self) -> u64 {
        self.chunks.iter().map(|c| c.t_micros).max().unwrap_or(0)
    }

    /// The pretty RON document, always with `version: FORMAT_VERSION`, non-ASCII text as literal
    /// characters and one chunk per line.
    pub fn to_ron_string(&self) -> String {
        match self.try_to_ron_string() {
            Ok(text) => text,
            // Serializing these plain types into a String cannot fail; keep a readable trace if it
            // ever does rather than panicking in a writer.
            Err(err) => format!("// {err}\n"),
        }
    }

    /// [`Recording::to_ron_string`], reporting serializer errors.
    pub fn try_to_ron_string(&self) -> Result<String, RecordingError> {
        // Destructured without `..`: a field added to `Recording` must be written here too.
        let Recording {
            version: _,
            meta,
            request,
            response,
            chunks,
            truth,
        } = self;
        let doc = |chunks| RecordingOut {
            version: FORMAT_VERSION,
            meta,
            request,
            response,
            truth,
            chunks,
        };
        let options = ron_options();
        let config = ron::ser::PrettyConfig::new().new_line("\n");
        // Render without chunks, then put one compact chunk per line where `chunks: []` is. Strings
        // are escaped (no raw newlines), so a line that is exactly `    chunks: [],` can only be
        // the top-level field.
        let mut text = options
            .to_string_pretty(&doc(&[]), config.clone())
            .map_err(|e| RecordingError::serialize(&e))?;
        let empty = format!("\n{FIELD_INDENT}chunks: [],\n");
        match text.find(&empty) {
            Some(at) if !chunks.is_empty() => {
                let mut list = format!("\n{FIELD_INDENT}chunks: [\n");
                for chunk in chunks {
                    list.push_str(FIELD_INDENT);
                    list.push_str(FIELD_INDENT);
                    write_chunk_line(&mut list, chunk);
                    list.push_str(",\n");
                }
                list.push_str(FIELD_INDENT);
                list.push_str("],\n");
                text.replace_range(at..at + empty.len(), &list);
            }
            Some(_) => {}
            None => {
                // Not expected; depth_limit(2) still gives one chunk per line.
                text = options
                    .to_string_pretty(&doc(chunks), config.depth_limit(2))
                    .map_err(|e| RecordingError::serialize(&e))?;
            }
        }
        text.push('\n');
        Ok(text)
    }

    /// Parses a recording document (not a journal: see [`salvage_journal`]).
    ///
    /// The version is checked first, leniently, so a newer file reports
    /// [`RecordingError::FutureVersion`] rather than a confusing error about a field it has.
    pub fn from_ron_str(text: &str) -> Result<Recording, RecordingError> {
        parse_document(text)
    }

    /// Loads a recording file, or salvages a recorder journal (recognised by its first line,
    /// whatever the file name).
    pub fn load(path: &Path) -> Result<Recording, RecordingError> {
        let bytes = fs::read(path).map_err(|e| RecordingError::io("reading", path, e))?;
        Self::from_bytes(&bytes).map_err(|e| e.with_path(path))
    }

    /// [`Recording::load`] on bytes already read.
    pub fn from_bytes(bytes: &[u8]) -> Result<Recording, RecordingError> {
        let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
        match std::str::from_utf8(bytes) {
            Ok(text) if is_journal(bytes) => salvage_journal(text),
            Ok(text) => parse_document(text),
            Err(err) => {
                let offset = err.valid_up_to();
                // A journal cut in the middle of a character: the bad bytes are all in the
                // (truncated) last line, which salvage drops anyway.
                if is_journal(bytes)
                    && !bytes[offset..].contains(&b'\n')
                    && let Ok(text) = std::str::from_utf8(&bytes[..offset])
                {
                    return salvage_journal(text);
                }
                Err(RecordingError::InvalidUtf8 {
                    path: None,
                    offset,
                    line: line_of(bytes, offset),
                })
            }
        }
    }

    /// Writes the recording atomically (see [`save`]).
    pub fn save(&self, path: &Path) -> Result<(), RecordingError> {
        save(path, self)
    }
}

/// Parses a recording document; see [`Recording::from_ron_str`].
pub fn from_ron_str(text: &str) -> Result<Recording, RecordingError> {
    Recording::from_ron_str(text)
}

/// Loads a recording file or salvages a journal; see [`Recording::load`].
pub fn load(path: &Path) -> Result<Recording, RecordingError> {
    Recording::load(path)
}

/// `path` with `suffix` appended to its file name: `out.ron` + `.tmp` = `out.ron.tmp`.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Best effort: make a rename or a new file in `path`'s directory durable.
fn sync_parent_dir(path: &Path) {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // Opening a directory fails on some platforms (Windows): nothing to do there.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
}

// ---------------------------------------------------------------------------------------------
// Safe file writes
// ---------------------------------------------------------------------------------------------

/// Who may read a file this program creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileMode {
    /// `0600`: recordings, journals, captures and imports hold other people's requests.
    Private,
    /// `0666` minus the umask, like any other program's output: exports and reports.
    Umask,
}

/// How an output is written (see [`OutputFile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Replace an existing file (`--force`, or a Save dialog that asked). Without it an existing
    /// file is an error ([`RecordingError::Exists`]).
    pub overwrite: bool,
    pub mode: FileMode,
}

impl WriteOptions {
    /// A recording (`0600`); `overwrite` as given.
    pub const fn private(overwrite: bool) -> Self {
        Self {
            overwrite,
            mode: FileMode::Private,
        }
    }

    /// An export or a report (umask); `overwrite` as given.
    pub const fn public(overwrite: bool) -> Self {
        Self {
            overwrite,
            mode: FileMode::Umask,
        }
    }
}

/// Where an output path leads, decided before anything is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// `-`: standard output.
    Stdout,
    /// An existing character device or FIFO (`/dev/null`, a pipe), or anything under `/dev/` or
    /// `/proc/self/fd/` (`/dev/stdout`): written straight, never replaced.
    Special,
    /// Nothing there yet.
    New,
    /// A regular file, or a symlink (which is replaced, never followed), that
    /// [`WriteOptions::overwrite`] allows to replace.
    Replace,
}

/// Whether `path` names a stream to write into rather than a file to create (`/dev/stdout`,
/// `/dev/fd/3`, `/proc/self/fd/1`): those are written straight whatever they point to.
fn is_device_path(path: &Path) -> bool {
    path.starts_with("/dev/") || path.starts_with("/proc/self/fd/")
}

/// Decides what writing `path` would do: standard output, a straight write into a device or
/// FIFO, a new file, or a replacement (only with `overwrite`). Errors: a directory, or an
/// existing file without `overwrite` ([`RecordingError::Exists`], CLI exit 2).
pub fn output_target(path: &Path, overwrite: bool) -> Result<OutputTarget, RecordingError> {
    if path.as_os_str() == "-" {
        return Ok(OutputTarget::Stdout);
    }
    if is_device_path(path) {
        return Ok(OutputTarget::Special);
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutputTarget::New),
        Err(e) => return Err(RecordingError::io("inspecting", path, e)),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(RecordingError::io(
            "writing",
            path,
            std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"),
        ));
    }
    if is_special_file(&kind) {
        return Ok(OutputTarget::Special);
    }
    if overwrite {
        Ok(OutputTarget::Replace)
    } else {
        Err(RecordingError::Exists {
            path: path.to_path_buf(),
        })
    }
}

#[cfg(unix)]
fn is_special_file(kind: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    kind.is_char_device() || kind.is_fifo()
}

#[cfg(not(unix))]
fn is_special_file(_kind: &fs::FileType) -> bool {
    false
}

/// Temporary files being written, removed by the interrupt handler (see
/// [`remove_temp_files_on_interrupt`]).
static PENDING_TEMPS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn pending_temps() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING_TEMPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// For commands that write for a while and have no Ctrl+C handling of their own (`export -o`):
/// on Ctrl+C or SIGTERM, remove the temporary files of unfinished [`OutputFile`]s, then exit
/// with 130 (143 for SIGTERM), as the default action would have — but with no temporary file
/// left behind. Installed once; later calls do nothing.
pub fn remove_temp_files_on_interrupt() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
        else {
            return;
        };
        // Register the handlers before returning, so an interrupt right after is caught.
        let signals = rt.block_on(async { Signals::new() });
        let Ok(mut signals) = signals else { return };
        let spawned = std::thread::Builder::new()
            .name("sse-replay-interrupt".into())
            .spawn(move || {
                let code = rt.block_on(signals.recv());
                for path in pending_temps().drain(..) {
                    let _ = fs::remove_file(path);
                }
                std::process::exit(code);
            });
        drop(spawned);
    });
}

/// Ctrl+C (and SIGTERM on Unix), registered.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Self> {
        Ok(Self {})
    }

    /// Waits for a signal; returns the exit code its default action would give.
    #[cfg(unix)]
    async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => 130,
            _ = self.term.recv() => 143,
        }
    }

    #[cfg(not(unix))]
    async fn recv(&mut self) -> i32 {
        let _ = tokio::signal::ctrl_c().await;
        130
    }
}

enum OutputInner {
    Stdout(BufWriter<std::io::Stdout>),
    Direct(BufWriter<File>),
    Temp(BufWriter<tempfile::NamedTempFile>),
}

/// An output being written: the one safe writer behind every `-o`, `record`, proxy capture,
/// import, export and Save As.
///
/// A new file (or a replacement, with [`WriteOptions::overwrite`]) is written to a temporary file
/// with a random name created with `O_EXCL` in the target's folder (so a symlink planted at any
/// predictable name is never followed), `0600` or umask as asked; [`OutputFile::commit`] syncs it
/// and renames it into place (without `overwrite`, a rename that never replaces a file that
/// appeared meanwhile), then syncs the folder. A crash leaves the old file or the new one, never
/// a mix. Dropping an uncommitted `OutputFile` (an error on the way) removes the temporary file;
/// [`remove_temp_files_on_interrupt`] does the same on Ctrl+C. `-` is standard output, and an
/// existing character device or FIFO is written straight, never replaced.
pub struct OutputFile {
    inner: OutputInner,
    path: PathBuf,
    overwrite: bool,
}

impl fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl OutputFile {
    /// Opens `path` for writing as described on [`OutputFile`]. Fails before creating anything
    /// when the target is a directory or an existing file without `overwrite`.
    pub fn create(path: &Path, options: WriteOptions) -> Result<Self, RecordingError> {
        let inner = match output_target(path, options.overwrite)? {
            OutputTarget::Stdout => OutputInner::Stdout(BufWriter::new(std::io::stdout())),
            OutputTarget::Special => {
                let file = OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(|e| RecordingError::io("opening", path, e))?;
                OutputInner::Direct(BufWriter::new(file))
            }
            OutputTarget::New | OutputTarget::Replace => {
                let dir = match path.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir,
                    _ => Path::new("."),
                };
                let name = path
                    .file_name()
                    .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
                let prefix = format!(".{name}.");
                let mut builder = tempfile::Builder::new();
                builder.prefix(&prefix).suffix(".tmp");
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    let mode = match options.mode {
                        FileMode::Private => 0o600,
                        FileMode::Umask => 0o666,
                    };
                    builder.permissions(fs::Permissions::from_mode(mode));
                }
                let tmp = builder
                    .tempfile_in(dir)
                    .map_err(|e| RecordingError::io("creating a temporary file for", path, e))?;
                pending_temps().push(tmp.path().to_path_buf());
                OutputInner::Temp(BufWriter::new(tmp))
            }
        };
        Ok(Self {
            inner,
            path: path.to_path_buf(),
            overwrite: options.overwrite,
        })
    }

    /// The path being written (`-` for standard output).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Finishes the write: flushes, and for a file syncs it and renames it into place.
    pub fn commit(mut self) -> Result<(), RecordingError> {
        let inner = std::mem::replace(
            &mut self.inner,
            OutputInner::Stdout(BufWriter::new(std::io::stdout())),
        );
        let path = self.path.clone();
        match inner {
            OutputInner::Stdout(mut out) => out
                .flush()
                .map_err(|e| RecordingError::io("writing", &path, e)),
            OutputInner::Direct(mut out) => out
                .flush()
                .map_err(|e| RecordingError::io("writing", &path, e)),
            OutputInner::Temp(out) => {
                let tmp = out
                    .into_inner()
                    .map_err(|e| RecordingError::io("writing", &path, e.into_error()))?;
                let tmp_path = tmp.path().to_path_buf();
                let forget = |p: &Path| pending_temps().retain(|q| q != p);
                let result = tmp
                    .as_file()
                    .sync_all()
                    .map_err(|e| RecordingError::io("syncing", &path, e))
                    .and_then(|()| {
                        let persisted = if self.overwrite {
                            tmp.persist(&path)
                        } else {
                            tmp.persist_noclobber(&path)
                        };
                        // On error the temporary file is dropped with the error: removed.
                        persisted.map(drop).map_err(|e| {
                            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                                RecordingError::Exists { path: path.clone() }
                            } else {
                                RecordingError::io("renaming into place", &path, e.error)
                            }
                        })
                    });
                forget(&tmp_path);
                result?;
                sync_parent_dir(&path);
                Ok(())
            }
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let OutputInner::Temp(out) = &self.inner {
            let tmp = out.get_ref().path().to_path_buf();
            pending_temps().retain(|q| *q != tmp);
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.write(buf),
            OutputInner::Direct(w) => w.write(buf),
            OutputInner::Temp(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.write_all(buf),
            OutputInner::Direct(w) => w.write_all(buf),
            OutputInner::Temp(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.flush(),
            OutputInner::Direct(w) => w.flush(),
            OutputInner::Temp(w) => w.flush(),
        }
    }
}

/// Writes `bytes` to `path` with [`OutputFile`] (atomic, no symlink followed, devices written
/// straight, an existing file replaced only with `options.overwrite`).
pub fn write_file(path: &Path, bytes: &[u8], options: WriteOptions) -> Result<(), RecordingError> {
    let mut out = OutputFile::create(path, options)?;
    out.write_all(bytes)
        .map_err(|e| RecordingError::io("writing", path, e))?;
    out.commit()
}

/// Writes `rec` to `path` atomically and privately (`0600`), replacing an existing file (the
/// caller asked: a Save dialog, `--force`). See [`save_with`].
pub fn save(path: &Path, rec: &Recording) -> Result<(), RecordingError> {
    save_with(path, rec, WriteOptions::private(true))
}

/// Writes `rec` to `path` with [`OutputFile`]: a random-named temporary file, fsync, rename.
pub fn save_with(
    path: &Path,
    rec: &Recording,
    options: WriteOptions,
) -> Result<(), RecordingError> {
    let text = rec.try_to_ron_string().map_err(|e| e.with_path(path))?;
    write_file(path, text.as_bytes(), options)
}

/// `path` itself when neither it nor its journal (`path.partial`) exists, else the first free
/// `stem-2.ext`, `stem-3.ext`, …: default names (the recorder's, the proxy's) never collide.
/// Creating the journal with `O_EXCL` and saving without overwrite still guard against a race.
pub fn free_path(path: &Path) -> PathBuf {
    let taken = |p: &Path| {
        fs::symlink_metadata(p).is_ok() || fs::symlink_metadata(with_suffix(p, ".partial")).is_ok()
    };
    if !taken(path) {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map_or_else(|| "recording".into(), |s| s.to_string_lossy().into_owned());
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (2u64..)
        .map(|n| path.with_file_name(format!("{stem}-{n}{ext}")))
        .find(|p| !taken(p))
        .unwrap_or_else(|| path.to_path_buf())
}

// ---------------------------------------------------------------------------------------------
// Redaction (what counts as a secret lives in `crate::redact`)
// ---------------------------------------------------------------------------------------------

impl RequestInfo {
    /// Redacts the URL ([`redact_url`]), the headers ([`redact_headers`]) and the body
    /// ([`crate::redact::redact_body`]). Idempotent.
    pub fn redact(&mut self) {
        self.url = redact_url(&self.url);
        redact_headers(&mut self.headers);
        self.body = crate::redact::redact_body(&self.body);
    }
}

// ---------------------------------------------------------------------------------------------
// Crash-safe journal
// ---------------------------------------------------------------------------------------------

/// The head of a recording as the journal stores it (everything but the chunks).
#[derive(Serialize, Deserialize)]
#[serde(default)]
struct JournalHead {
    version: u32,
    meta: Meta,
    request: Option<RequestInfo>,
    response: Option<ResponseInfo>,
    truth: Vec<TruthCall>,
}

impl Default for JournalHead {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            meta: Meta::default(),
            request: None,
            response: None,
            truth: Vec::new(),
        }
    }
}

/// One journal line after the magic line: `Head((..))`, `Response((..))` or `Chunk((..))`, written
/// with the non-pretty serializer (strings escaped), so a record never spans lines.
#[derive(Deserialize)]
enum JournalLine {
    Head(Box<JournalHead>),
    Response(ResponseInfo),
    Chunk(Chunk),
}

/// The written form of [`JournalLine`] (borrowed, same RON).
#[derive(Serialize)]
#[serde(rename = "JournalLine")]
enum JournalLineRef<'a> {
    Head(&'a JournalHead),
    Response(&'a ResponseInfo),
    Chunk(&'a Chunk),
}

/// Writes a recording as it arrives, so a killed recorder leaves something [`load`] can salvage.
///
/// The journal `<final_path>.partial` starts with [`JOURNAL_MAGIC`], then one RON record per line.
/// Appends are buffered. They reach the OS (safe from a killed process) on
/// [`JournalWriter::write_out`], and automatically when an append comes ≥ 50 ms after the last
/// write-out; they reach the disk (`sync_data`, safe from a machine crash) on
/// [`JournalWriter::flush`], or through [`JournalWriter::sync_handle`] from another thread, so a
/// slow disk does not hold up the writer. [`JournalWriter::finish`]
/// writes the final document atomically and removes the journal. Dropping the writer without
/// finishing flushes the buffer (without syncing) and leaves the journal in place.
#[derive(Debug)]
pub struct JournalWriter {
    final_path: PathBuf,
    /// Whether [`JournalWriter::finish`] may replace an existing final file (`--force`).
    overwrite: bool,
    journal_path: PathBuf,
    out: BufWriter<File>,
    last_flush: Instant,
    chunks: u64,
}

impl JournalWriter {
    /// Creates `<final_path>.partial` (failing with [`RecordingError::JournalExists`] if an earlier
    /// interrupted recording left one) and durably writes the magic line and `head`'s meta,
    /// request, response and truth. `head.chunks` is ignored. [`JournalWriter::finish`] will not
    /// replace an existing final file (see [`JournalWriter::create_with`]).
    pub fn create(final_path: &Path, head: &Recording) -> Result<Self, RecordingError> {
        Self::create_with(final_path, head, false)
    }

    /// [`JournalWriter::create`]; with `overwrite`, `finish` may replace an existing final file.
    ///
    /// The journal's name is predictable on purpose (users look for it after a crash), so it is
    /// created with `O_CREAT|O_EXCL` (`create_new`): a file or a symlink planted at that name is
    /// refused, never followed. It is `0600`: it holds the request.
    pub fn create_with(
        final_path: &Path,
        head: &Recording,
        overwrite: bool,
    ) -> Result<Self, RecordingError> {
        let journal_path = with_suffix(final_path, ".partial");
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let file = options.open(&journal_path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                RecordingError::JournalExists {
                    path: journal_path.clone(),
                }
            } else {
                RecordingError::io("creating", &journal_path, e)
            }
        })?;
        let mut writer = Self {
            final_path: final_path.to_path_buf(),
            overwrite,
            journal_path,
            out: BufWriter::new(file),
            last_flush: Instant::now(),
            chunks: 0,
        };
        writer.write_raw_line(JOURNAL_MAGIC)?;
        let head = JournalHead {
            version: FORMAT_VERSION,
            meta: head.meta.clone(),
            request: head.request.clone(),
            response: head.response.clone(),
            truth: head.truth.clone(),
        };
        writer.write_record(&JournalLineRef::Head(&head))?;
        writer.flush()?;
        sync_parent_dir(&writer.journal_path);
        Ok(writer)
    }

    /// The journal file (`<final_path>.partial`).
    pub fn journal_path(&self) -> &Path {
        &self.journal_path
    }

    /// Where [`JournalWriter::finish`] will write the recording.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Whether [`JournalWriter::finish`] may replace an existing final file.
    pub fn overwrite(&self) -> bool {
        self.overwrite
    }

    /// Number of chunks appended so far.
    pub fn chunk_count(&self) -> u64 {
        self.chunks
    }

    /// Records the response head (status, headers) once known; the last one wins on salvage.
    pub fn set_response(&mut self, resp: &ResponseInfo) -> Result<(), RecordingError> {
        self.write_record(&JournalLineRef::Response(resp))?;
        self.flush()
    }

    /// Appends one chunk (buffered; written out when ≥ 50 ms passed since the last write-out).
    pub fn append_chunk(&mut self, chunk: &Chunk) -> Result<(), RecordingError> {
        self.write_record(&JournalLineRef::Chunk(chunk))?;
        self.chunks += 1;
        if self.last_flush.elapsed() >= JOURNAL_WRITE_OUT_INTERVAL {
            self.write_out()?;
        }
        Ok(())
    }

    /// Hands the buffered records to the OS without waiting for the disk: one `write` call; after
    /// it a killed process loses none of them (a machine crash still can, until a sync).
    pub fn write_out(&mut self) -> Result<(), RecordingError> {
        self.out
            .flush()
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))?;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// A second handle on the journal file, to `sync_data` it from another thread while this one
    /// keeps writing.
    pub fn sync_handle(&self) -> Result<File, RecordingError> {
        self.out
            .get_ref()
            .try_clone()
            .map_err(|e| RecordingError::io("opening a sync handle on", &self.journal_path, e))
    }

    /// Writes the buffer out and syncs the file data to disk.
    pub fn flush(&mut self) -> Result<(), RecordingError> {
        self.out
            .flush()
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))?;
        self.out
            .get_ref()
            .sync_data()
            .map_err(|e| RecordingError::io("syncing", &self.journal_path, e))?;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Saves `rec` atomically to the final path (see [`save_with`]; an existing file is replaced
    /// only when the writer was created with `overwrite`), then removes the journal.
    /// Returns the final path. On error the journal is left in place.
    pub fn finish(mut self, rec: &Recording) -> Result<PathBuf, RecordingError> {
        self.out
            .flush()
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))?;
        save_with(&self.final_path, rec, WriteOptions::private(self.overwrite))?;
        let Self {
            final_path,
            journal_path,
            out,
            ..
        } = self;
        drop(out);
        fs::remove_file(&journal_path)
            .map_err(|e| RecordingError::io("removing the journal", &journal_path, e))?;
        sync_parent_dir(&final_path);
        Ok(final_path)
    }

    fn write_record(&mut self, line: &JournalLineRef<'_>) -> Result<(), RecordingError> {
        let text = ron_options()
            .to_string(line)
            .map_err(|e| RecordingError::serialize(&e).with_path(&self.journal_path))?;
        debug_assert!(!text.contains('\n'), "journal records are one line");
        self.write_raw_line(&text)
    }

    fn write_raw_line(&mut self, text: &str) -> Result<(), RecordingError> {
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))
    }
}

/// Rebuilds a recording from a journal left by [`JournalWriter`]: the head, the last response
/// record and every complete chunk record. A damaged last line (the recorder was killed while
/// writing it) is dropped. The result has `meta.interrupted = true` and a note
/// `recorder was interrupted: N chunks salvaged`.
pub fn salvage_journal(text: &str) -> Result<Recording, RecordingError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|line| line.trim_end_matches('\r'));
    let magic = lines.next().unwrap_or_default();
    let Some(version) = magic.strip_prefix(JOURNAL_MAGIC_PREFIX) else {
        return Err(RecordingError::BadJournal {
            path: None,
            line: 1,
            message: format!("the first line is not `{JOURNAL_MAGIC}`"),
        });
    };
    match version.trim().parse::<u64>() {
        Ok(JOURNAL_VERSION) => {}
        Ok(found) if found > JOURNAL_VERSION => {
            return Err(RecordingError::FutureVersion {
                path: None,
                found,
                supported: JOURNAL_VERSION,
            });
        }
        _ => {
            return Err(RecordingError::BadJournal {
                path: None,
                line: 1,
                message: format!("unknown journal format {version:?}"),
            });
        }
    }

    // Records: (1-based line, text); blank lines (and the NUL padding a power loss can leave) skipped.
    let records: Vec<(usize, &str)> = lines
        .enumerate()
        .map(|(i, line)| (i + 2, line))
        .filter(|(_, line)| {
            !line
                .trim_matches(|c: char| c.is_whitespace() || c == '\0')
                .is_empty()
        })
        .collect();
    let options = ron_options();
    let mut head: Option<JournalHead> = None;
    let mut response: Option<ResponseInfo> = None;
    let mut chunks = Vec::new();
    let mut dropped_last = false;
    for (n, &(line_no, line)) in records.iter().enumerate() {
        let record = match options.from_str::<JournalLine>(line) {
            Ok(record) => record,
            // The head is written and synced before any chunk: a damaged head is damage, not a
            // cut tail, and is reported rather than replaced by defaults.
            Err(err) if n == 0 => {
                let pos = error_position(line, &err.span);
                return Err(RecordingError::BadJournal {
                    path: None,
                    line: line_no,
                    message: format!(
                        "the head record is damaged (column {}: {})",
                        pos.col, err.code
                    ),
                });
            }
            Err(_) if n + 1 == records.len() => {
                dropped_last = true;
                break;
            }
            Err(err) => return Err(RecordingError::syntax(line, &err, line_no - 1)),
        };
        match record {
            JournalLine::Head(h) if head.is_none() && n == 0 => {
                if u64::from(h.version) > u64::from(FORMAT_VERSION) {
                    return Err(RecordingError::FutureVersion {
                        path: None,
                        found: u64::from(h.version),
                        supported: u64::from(FORMAT_VERSION),
                    });
                }
                head = Some(*h);
            }
            JournalLine::Head(_) => {
                return Err(RecordingError::BadJournal {
                    path: None,
                    line: line_no,
                    message: "a head record after the first record".into(),
                });
            }
            _ if head.is_none() => {
                return Err(RecordingError::BadJournal {
                    path: None,
                    line: line_no,
                    message: "the first record is not the head".into(),
                });
            }
            JournalLine::Response(r) => response = Some(r),
            JournalLine::Chunk(c) => chunks.push(c),
        }
    }

    let Some(head) = head else {
        return Err(RecordingError::BadJournal {
            path: None,
            line: 2,
            message: "no head record after the first line (nothing was recorded)".into(),
        });
    };
    let JournalHead {
        version: _,
        mut meta,
        request,
        response: head_response,
        truth,
    } = head;
    meta.interrupted = true;
    meta.notes.push(format!(
        "recorder was interrupted: {} chunks salvaged",
        chunks.len()
    ));
    if dropped_last {
        meta.notes
            .push("the journal's last record was incomplete and was dropped".into());
    }
    Ok(Recording {
        version: FORMAT_VERSION,
        meta,
        request,
        response: response.or(head_response),
        chunks,
        truth,
    })
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// xorshift64*: deterministic, dependency-free.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn bytes(&mut self, len: usize) -> Vec<u8> {
            (0..len).map(|_| self.next() as u8).collect()
        }
        /// Text-like bytes: ASCII (with quotes, escapes, controls), CJK, emoji, combining marks.
        fn texty(&mut self, len: usize) -> Vec<u8> {
            const PIECES: &[&str] = &[
                "a",
                "Z",
                " ",
                "\"",
                "\\",
                "\n",
                "\r",
                "\t",
                "\0",
                "'",
                "#",
                "深",
                "圳",
                "é",
                "\u{301}",
                "😀",
                "\u{2028}",
                "\u{7f}",
                "\u{feff}",
                "data: ",
                "{\"a\":",
                "\u{10ffff}",
                "}",
            ];
            let mut out = Vec::new();
            while out.len() < len {
                out.extend_from_slice(PIECES[self.below(PIECES.len())].as_bytes());
            }
            out
        }
    }

    fn rec_with_chunks(chunks: Vec<Chunk>) -> Recording {
        Recording {
            version: FORMAT_VERSION,
            meta: Meta {
                title: "深圳 weather \"quoted\"\nsecond line \\ back".into(),
                source: "record".into(),
                created: "2025-01-02T03:04:05Z".into(),
                dialect: "openai-chat".into(),
                notes: vec!["note one".into(), "ノート".into()],
                timing_known: true,
                interrupted: false,
            },
            request: Some(RequestInfo {
                method: "POST".into(),
                url: "https://api.example.com/v1/chat?x=1".into(),
                headers: vec![
                    ("content-type".into(), "application/json".into()),
                    ("authorization".into(), "Bearer ‹redacted›".into()),
                ],
                body: "{\"model\":\"m\",\"messages\":[{\"content\":\"深圳\"}]}".into(),
            }),
            response: Some(ResponseInfo {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
            }),
            chunks,
            truth: vec![TruthCall {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: "{\"city\":\"深圳\"}".into(),
            }],
        }
    }

    fn chunks_of(pieces: &[&[u8]]) -> Vec<Chunk> {
        pieces
            .iter()
            .enumerate()
            .map(|(i, b)| Chunk {
                t_micros: 1000 * i as u64,
                bytes: b.to_vec(),
            })
            .collect()
    }

    fn roundtrip(rec: &Recording) -> Recording {
        let text = rec.to_ron_string();
        match Recording::from_ron_str(&text) {
            Ok(back) => back,
            Err(e) => panic!("{e}\n{text}"),
        }
    }

    /// The document form of a chunk, checked against the `Serialize` form (which escapes more).
    fn chunk_line(bytes: &[u8]) -> String {
        let chunk = Chunk {
            t_micros: 1200,
            bytes: bytes.to_vec(),
        };
        let mut line = String::new();
        write_chunk_line(&mut line, &chunk);
        let serialized = ron_options()
            .to_string_pretty(&chunk, ron::ser::PrettyConfig::new().compact_structs(true))
            .unwrap();
        let parsed: Chunk = ron::from_str(&line).unwrap();
        assert_eq!(parsed, chunk, "{line}");
        assert_eq!(ron::from_str::<Chunk>(&serialized).unwrap(), chunk);
        if !line.contains("\\u{") && !line.contains('\'') {
            assert_eq!(line, serialized);
        }
        line
    }

    // ----- chunk encoding -----

    #[test]
    fn chunk_text_lead_trail_and_hex_forms() {
        assert_eq!(
            chunk_line(b"data: {\"a\":\"x"),
            r#"(t_us: 1200, text: "data: {\"a\":\"x")"#
        );
        let shen = "深".as_bytes(); // e6 b7 b1
        let mut first = b"data: ".to_vec();
        first.extend_from_slice(&shen[..2]);
        assert_eq!(
            chunk_line(&first),
            r#"(t_us: 1200, text: "data: ", trail: "e6 b7")"#
        );
        let mut second = shen[2..].to_vec();
        second.extend_from_slice(b"\"}\n\n");
        assert_eq!(
            chunk_line(&second),
            r#"(t_us: 1200, lead: "b1", text: "\"}\n\n")"#
        );
        assert_eq!(
            chunk_line(&[0xde, 0xad, 0xbe, 0xef]),
            r#"(t_us: 1200, hex: "de ad be ef")"#
        );
        assert_eq!(chunk_line(b""), "(t_us: 1200)");
        assert_eq!(chunk_line(&shen[1..2]), r#"(t_us: 1200, lead: "b7")"#);
        assert_eq!(chunk_line(&shen[..1]), r#"(t_us: 1200, trail: "e6")"#);
        // Garbage in the middle: the whole chunk is hex.
        assert_eq!(
            chunk_line(b"ab\xffcd"),
            r#"(t_us: 1200, hex: "61 62 ff 63 64")"#
        );
        // Four continuation bytes cannot all be a lead.
        assert_eq!(
            chunk_line(&[0x80, 0x80, 0x80, 0x80]),
            r#"(t_us: 1200, hex: "80 80 80 80")"#
        );
    }

    #[test]
    fn hex_reading_accepts_any_whitespace_or_none() {
        for text in [
            "(t_us: 5, hex: \"deadbeef\")",
            "(t_us: 5, hex: \"DE AD BE EF\")",
            "(t_us: 5, hex: \"de\\nad\\tbe  ef \")",
            "(t_us: 5, hex: \"d e a d b e e f\")",
        ] {
            let chunk: Chunk = ron::from_str(text).unwrap();
            assert_eq!(chunk.bytes, [0xde, 0xad, 0xbe, 0xef], "{text}");
            assert_eq!(chunk.t_micros, 5);
        }
        let chunk: Chunk =
            ron::from_str("(t_us: 1, lead: \"b1\", text: \"x\", trail: \"e6b7\")").unwrap();
        assert_eq!(chunk.bytes, [0xb1, b'x', 0xe6, 0xb7]);
        for bad in [
            "(t_us: 5, hex: \"dg\")",
            "(t_us: 5, hex: \"abc\")",
            "(t_us: 5, hex: \"ab\", text: \"x\")",
            "(t_us: 5, txet: \"x\")",
            "(text: \"x\")",
        ] {
            assert!(ron::from_str::<Chunk>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn splits_of_multibyte_characters_round_trip() {
        for s in ["深圳", "a😀b", "😀", "é深😀圳"] {
            let bytes = s.as_bytes();
            // Every way to cut the string into chunks of 1..=3 bytes (and some longer).
            for size in 1..=4 {
                for offset in 0..size {
                    let mut pieces: Vec<&[u8]> = vec![&bytes[..offset.min(bytes.len())]];
                    pieces.extend(bytes[offset.min(bytes.len())..].chunks(size));
                    let rec = rec_with_chunks(chunks_of(&pieces));
                    let back = roundtrip(&rec);
                    assert_eq!(back.chunks, rec.chunks, "{s:?} size {size} offset {offset}");
                    assert_eq!(back.body(), bytes);
                }
            }
            // Every two-way split.
            for cut in 0..=bytes.len() {
                let rec = rec_with_chunks(chunks_of(&[&bytes[..cut], &bytes[cut..]]));
                let text = rec.to_ron_string();
                assert!(
                    !text.contains("hex:"),
                    "a split of valid text is never hex:\n{text}"
                );
                assert_eq!(roundtrip(&rec).chunks, rec.chunks);
            }
        }
    }

    #[test]
    fn random_chunks_round_trip_exactly() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for case in 0..3000 {
            let n = rng.below(6);
            let chunks: Vec<Chunk> = (0..n)
                .map(|_| {
                    let len = rng.below(24);
                    let mut bytes = if case % 2 == 0 {
                        rng.bytes(len)
                    } else {
                        rng.texty(len)
                    };
                    // Cut text at random byte positions so leads and trails appear.
                    if case % 2 == 1 && !bytes.is_empty() {
                        let start = rng.below(bytes.len().min(4));
                        let end = bytes.len() - rng.below(bytes.len() - start).min(3);
                        bytes = bytes[start..end].to_vec();
                    }
                    Chunk {
                        t_micros: rng.next() >> rng.below(64),
                        bytes,
                    }
                })
                .collect();
            let rec = rec_with_chunks(chunks);
            assert_eq!(roundtrip(&rec), rec, "case {case}");
        }
    }

    #[test]
    fn random_strings_in_every_field_round_trip() {
        let mut rng = Rng(42);
        for _ in 0..500 {
            let mut s = || String::from_utf8_lossy(&rng.texty(12)).into_owned();
            let rec = Recording {
                version: FORMAT_VERSION,
                meta: Meta {
                    title: s(),
                    source: s(),
                    created: s(),
                    dialect: s(),
                    notes: vec![s(), s()],
                    timing_known: true,
                    interrupted: true,
                },
                request: Some(RequestInfo {
                    method: s(),
                    url: s(),
                    headers: vec![(s(), s())],
                    body: s(),
                }),
                response: None,
                chunks: vec![],
                truth: vec![TruthCall {
                    id: s(),
                    name: s(),
                    arguments: s(),
                }],
            };
            assert_eq!(roundtrip(&rec), rec);
        }
    }

    // ----- document writing -----

    #[test]
    fn output_is_readable_one_chunk_per_line() {
        let rec = rec_with_chunks(chunks_of(&[
            "data: {\"city\":\"深".as_bytes(),
            "圳\"}\n\n".as_bytes(),
            b"\xff\xfe",
            "हिन्दी ❤️ e\u{301} 👨\u{200d}👩\u{200d}👧 \u{202e}".as_bytes(),
        ]));
        let text = rec.to_ron_string();
        assert!(text.contains("深圳"), "CJK must stay literal:\n{text}");
        assert!(text.contains("ノート"));
        assert!(text.contains("\n    version: 1,\n"));
        assert!(text.contains(
            "\n    chunks: [\n        (t_us: 0, text: \"data: {\\\"city\\\":\\\"深\"),\n"
        ));
        assert!(text.contains("\n        (t_us: 1000, text: \"圳\\\"}\\n\\n\"),\n"));
        assert!(text.contains("\n        (t_us: 2000, hex: \"ff fe\"),\n"));
        // Combining marks, variation selectors and ZWJ sequences stay literal; a bidi override doesn't.
        assert!(text.contains(
            "\n        (t_us: 3000, text: \"हिन्दी ❤️ e\u{301} 👨\u{200d}👩\u{200d}👧 \\u{202e}\"),\n    ],\n"
        ), "{text}");
        assert!(text.ends_with(")\n"));
        // Short fields come before the chunk list.
        assert!(text.find("truth:").unwrap() < text.find("chunks:").unwrap());
        assert_eq!(roundtrip(&rec), rec);
    }

    #[test]
    fn version_is_always_written_as_current() {
        let mut rec = rec_with_chunks(vec![]);
        rec.version = 0;
        let text = rec.to_ron_string();
        assert!(text.contains("version: 1,"));
        assert!(text.contains("chunks: [],"));
        assert_eq!(
            Recording::from_ron_str(&text).unwrap().version,
            FORMAT_VERSION
        );
        assert!(Recording::default().to_ron_string().contains("version: 1,"));
    }

    #[test]
    fn body_helpers() {
        let rec = rec_with_chunks(chunks_of(&[b"ab", b"", b"cde"]));
        assert_eq!(rec.body(), b"abcde");
        assert_eq!(rec.body_len(), 5);
        assert_eq!(rec.duration_micros(), 2000);
        assert_eq!(Recording::default().duration_micros(), 0);
        assert_eq!(Recording::default().body_len(), 0);
    }

    // ----- loading and errors -----

    #[test]
    fn minimal_and_hand_written_documents_load() {
        let rec = Recording::from_ron_str("(version: 1)").unwrap();
        assert_eq!(rec.version, 1);
        assert!(rec.chunks.is_empty());
        let rec = Recording::from_ron_str(
            "// a stub\nRecording(\n  version: 1,\n  chunks: [(t_us: 3, text: \"hi\"), (t_us: 4, hex: \"00\")],\n)\n",
        )
        .unwrap();
        assert_eq!(rec.body(), b"hi\0");
        // BOM from a Windows editor.
        assert!(Recording::from_bytes("\u{feff}(version: 1)".as_bytes()).is_ok());
    }

    #[test]
    fn syntax_error_names_line_column_and_path_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.ron");
        fs::write(&path, "(\n    version: 1,\n    meta: (title: 5),\n)\n").unwrap();
        let err = load(&path).unwrap_err();
        assert!(
            matches!(
                err,
                RecordingError::Syntax {
                    line: 3,
                    col: 19,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "RON syntax error at line 3, column 19: Expected string in {}",
                path.display()
            )
        );
        assert_eq!(err.path(), Some(path.as_path()));

        // Positions point at the offending token, not the whitespace before it.
        let at = |text: &str| match Recording::from_ron_str(text) {
            Err(RecordingError::Syntax { line, col, .. }) => (line, col),
            other => panic!("{other:?}"),
        };
        assert_eq!(at("garbage"), (1, 1));
        assert_eq!(at("(version: 1,\n  request:   Somee(()))"), (2, 14));
        assert_eq!(
            at("(version: 1,\n  meta: (title:\n\n    \"x\", notes: 5))"),
            (4, 17)
        );
        assert_eq!(at("(version: 1)\n\n  )"), (3, 3));

        let err = Recording::from_ron_str("(version: 1, meta: (title: \"x\"").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("RON syntax error at line 1, column "),
            "{msg}"
        );
        assert!(!msg.contains(" in "), "no path, no ` in `: {msg}");
    }

    #[test]
    fn future_version_is_reported_before_unknown_fields() {
        let text = "(version: 7, meta: (title: \"t\", mood: Happy(level: 3)), hologram: { \"a\": [1, 2] })";
        let err = Recording::from_ron_str(text).unwrap_err();
        assert!(matches!(
            err,
            RecordingError::FutureVersion {
                found: 7,
                supported: 1,
                ..
            }
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.ron");
        fs::write(&path, text).unwrap();
        assert_eq!(
            load(&path).unwrap_err().to_string(),
            format!(
                "recording format version 7 is newer than this build supports (1) in {}",
                path.display()
            )
        );
        // Even with syntax this build cannot parse.
        let err =
            Recording::from_ron_str("(\n  version: 2,\n  chunks: <<new syntax>>,\n)").unwrap_err();
        assert!(
            matches!(err, RecordingError::FutureVersion { found: 2, .. }),
            "{err:?}"
        );
        // Current version with an unknown field: accepted (ignored).
        assert!(Recording::from_ron_str("(version: 1, hologram: 3)").is_ok());
    }

    #[test]
    fn missing_or_zero_version() {
        let err = Recording::from_ron_str("(meta: (title: \"t\"))").unwrap_err();
        assert!(matches!(err, RecordingError::MissingVersion { .. }));
        assert_eq!(
            err.to_string(),
            "not an sse-replay recording (no version field)"
        );
        let err = Recording::from_ron_str("()").unwrap_err();
        assert!(matches!(err, RecordingError::MissingVersion { .. }));
        let err = Recording::from_ron_str("(version: 0)").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid recording format version 0 (versions start at 1)"
        );
        // Not a struct at all.
        let err = Recording::from_ron_str("[1, 2]").unwrap_err();
        assert!(matches!(err, RecordingError::Syntax { .. }), "{err:?}");
    }

    #[test]
    fn invalid_utf8_names_the_byte_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.ron");
        fs::write(&path, b"(\n  version: 1,\n  meta: (title: \"\xff\"),\n)").unwrap();
        let err = load(&path).unwrap_err();
        assert!(
            matches!(
                err,
                RecordingError::InvalidUtf8 {
                    offset: 33,
                    line: 3,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "file is not valid UTF-8 text at byte offset 33 (line 3) in {}",
                path.display()
            )
        );
    }

    #[test]
    fn bad_chunk_names_the_chunk() {
        let text = "(version: 1, chunks: [(t_us: 1, text: \"ok\"), (t_us: 1200, hex: \"zz\")])";
        let err = Recording::from_ron_str(text).unwrap_err();
        assert!(matches!(
            err,
            RecordingError::BadChunk {
                index: 1,
                t_micros: 1200,
                ..
            }
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.ron");
        fs::write(&path, text).unwrap();
        assert_eq!(
            load(&path).unwrap_err().to_string(),
            format!(
                "invalid chunks[1] (t_us: 1200): invalid hex digit 'z' in `hex` in {}",
                path.display()
            )
        );
        let err =
            Recording::from_ron_str("(version: 1, chunks: [(t_us: 9, trail: \"e\")])").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid chunks[0] (t_us: 9): odd number of hex digits in `trail`"
        );
        // Misspelled chunk field: a syntax error with its position, not silently dropped bytes.
        let err =
            Recording::from_ron_str("(version: 1, chunks: [(t_us: 9, txet: \"e\")])").unwrap_err();
        assert!(matches!(err, RecordingError::Syntax { .. }), "{err:?}");
        assert!(err.to_string().contains("txet"), "{err}");
    }

    #[test]
    fn io_error_names_the_path_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.ron");
        let err = load(&path).unwrap_err();
        assert!(matches!(err, RecordingError::Io { .. }));
        let msg = err.to_string();
        assert!(msg.starts_with("I/O error while reading: "), "{msg}");
        assert!(msg.ends_with(&format!(" in {}", path.display())), "{msg}");
    }

    #[test]
    fn truncated_documents_fail_cleanly() {
        let rec = rec_with_chunks(chunks_of(&["data: 深圳\n\n".as_bytes(), b"\xff\x00"]));
        let text = rec.to_ron_string();
        let end = text.trim_end().len();
        let boundaries: Vec<usize> = (0..end).filter(|&i| text.is_char_boundary(i)).collect();
        for &cut in &boundaries {
            let result = Recording::from_ron_str(&text[..cut]);
            assert!(
                result.is_err(),
                "a truncated document must not load (cut {cut})"
            );
        }
        // Byte-level truncation through load's UTF-8 check.
        for cut in 0..text.len() {
            let _ = Recording::from_bytes(&text.as_bytes()[..cut]);
        }
    }

    #[test]
    fn hostile_input_never_panics() {
        let mut rng = Rng(7);
        for _ in 0..2000 {
            let len = rng.below(200);
            let bytes = rng.bytes(len);
            let _ = Recording::from_bytes(&bytes);
            let _ = Recording::from_ron_str(&String::from_utf8_lossy(&rng.texty(len)));
        }
        // RON-ish token soup.
        const TOKENS: &[&str] = &[
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ":",
            ",",
            "version",
            "1",
            "7",
            "chunks",
            "t_us",
            "hex",
            "\"",
            "\"de\"",
            "Some",
            "None",
            "r#\"",
            "#",
            "//",
            "/*",
            "*/",
            "-",
            "1e9999",
            "'",
            "\\",
            "b\"",
            "true",
            "#![enable(implicit_some)]",
            "Recording",
            ".",
            "..",
            "0x",
        ];
        for _ in 0..5000 {
            let mut s = String::from("(version: 1, ");
            for _ in 0..rng.below(30) {
                s.push_str(TOKENS[rng.below(TOKENS.len())]);
                if rng.below(3) == 0 {
                    s.push(' ');
                }
            }
            let _ = Recording::from_ron_str(&s);
            let _ = salvage_journal(&format!("{JOURNAL_MAGIC}\n{s}\n{s}"));
        }
        // Mutations of a valid document.
        let text = rec_with_chunks(chunks_of(&[b"data: x\n\n", b"\xe6"])).to_ron_string();
        let bytes = text.as_bytes();
        for _ in 0..2000 {
            let mut m = bytes.to_vec();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(m.len());
                m[i] = TOKENS[rng.below(TOKENS.len())].as_bytes()[0];
            }
            let _ = Recording::from_bytes(&m);
        }
    }

    #[test]
    fn deep_nesting_hits_the_recursion_limit() {
        for (open, close) in [("[", "]"), ("(", ")"), ("{\"a\":", "}"), ("Some(", ")")] {
            let deep = format!("{}{}", open.repeat(100_000), close.repeat(100_000));
            for text in [
                format!("(version: 1, extra: {deep})"),
                format!("(version: 1, meta: (notes: {deep}))"),
                format!("(version: 7, extra: {deep})"),
                deep.clone(),
            ] {
                assert!(Recording::from_ron_str(&text).is_err());
            }
            let _ = salvage_journal(&format!("{JOURNAL_MAGIC}\n{deep}\n{deep}\n"));
        }
    }

    #[test]
    fn request_redaction_covers_url_headers_and_body() {
        let mut req = RequestInfo {
            url: "https://h/?key=abc".into(),
            headers: vec![("Authorization".into(), "Bearer x".into())],
            body: r#"{"api_key":"S1","max_tokens":3}"#.into(),
            ..RequestInfo::default()
        };
        req.redact();
        assert_eq!(req.url, "https://h/?key=REDACTED");
        assert_eq!(req.headers[0].1, "Bearer ‹redacted›");
        assert_eq!(req.body, r#"{"api_key":"‹redacted›","max_tokens":3}"#);
    }

    // ----- save and journal -----

    #[test]
    fn save_is_atomic_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.ron");
        let rec = rec_with_chunks(chunks_of(&[b"a", b"\xe6\xb7", b"\xb1"]));
        save(&path, &rec).unwrap();
        assert_eq!(names_in(dir.path()), ["out.ron"]);
        assert_eq!(load(&path).unwrap(), rec);
        let rec2 = rec_with_chunks(vec![]);
        rec2.save(&path).unwrap();
        assert_eq!(load(&path).unwrap(), rec2);
        let err = save(&dir.path().join("no/such/dir/x.ron"), &rec).unwrap_err();
        assert!(matches!(err, RecordingError::Io { .. }), "{err:?}");
        assert_eq!(names_in(dir.path()), ["out.ron"]);
    }

    /// The names in `dir`, sorted.
    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_existing_file_is_kept_without_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.ron");
        fs::write(&path, "precious").unwrap();
        let err = write_file(&path, b"new", WriteOptions::private(false)).unwrap_err();
        assert!(matches!(err, RecordingError::Exists { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "refusing to overwrite an existing file (use --force): {}",
                path.display()
            )
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "precious");
        write_file(&path, b"new", WriteOptions::private(true)).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names_in(dir.path()), ["out.ron"]);
    }

    #[test]
    fn a_file_that_appears_while_writing_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut out = OutputFile::create(&path, WriteOptions::public(false)).unwrap();
        out.write_all(b"mine").unwrap();
        fs::write(&path, "theirs").unwrap();
        let err = out.commit().unwrap_err();
        assert!(matches!(err, RecordingError::Exists { .. }), "{err:?}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "theirs");
        assert_eq!(names_in(dir.path()), ["out.json"], "no temporary file left");
        assert!(pending_temps().is_empty());
    }

    #[test]
    fn an_uncommitted_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut out = OutputFile::create(&path, WriteOptions::public(false)).unwrap();
        out.write_all(&[b'x'; 100_000]).unwrap();
        assert_eq!(names_in(dir.path()).len(), 1, "the temporary file");
        assert!(names_in(dir.path())[0].starts_with(".out.json."));
        drop(out);
        assert!(names_in(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "untouched").unwrap();
        let path = dir.path().join("out.ron");
        // At the target: refused without overwrite; replaced (not followed) with it.
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let err = write_file(&path, b"new", WriteOptions::private(false)).unwrap_err();
        assert!(matches!(err, RecordingError::Exists { .. }), "{err:?}");
        write_file(&path, b"new", WriteOptions::private(true)).unwrap();
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
        // At the journal's predictable name: refused.
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&victim, with_suffix(&path, ".partial")).unwrap();
        let err = JournalWriter::create(&path, &head()).unwrap_err();
        assert!(
            matches!(err, RecordingError::JournalExists { .. }),
            "{err:?}"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
    }

    #[cfg(unix)]
    #[test]
    fn modes_private_and_umask() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let rec_path = dir.path().join("r.ron");
        save(&rec_path, &head()).unwrap();
        assert_eq!(mode(&rec_path), 0o600);
        let journal = JournalWriter::create(&dir.path().join("j.ron"), &head()).unwrap();
        assert_eq!(mode(journal.journal_path()), 0o600);
        // Public outputs get 0666 minus the umask: at most 0666, and never less than 0600.
        let export = dir.path().join("e.json");
        write_file(&export, b"[]", WriteOptions::public(false)).unwrap();
        let m = mode(&export);
        assert_eq!(m & !0o666, 0, "{m:o}");
        assert_eq!(m & 0o600, 0o600, "{m:o}");
    }

    #[test]
    fn special_targets_are_written_straight() {
        assert_eq!(
            output_target(Path::new("-"), false).unwrap(),
            OutputTarget::Stdout
        );
        #[cfg(unix)]
        {
            assert_eq!(
                output_target(Path::new("/dev/null"), false).unwrap(),
                OutputTarget::Special
            );
            write_file(Path::new("/dev/null"), b"x", WriteOptions::private(false)).unwrap();
            assert!(!fs::metadata("/dev/null").unwrap().file_type().is_file());
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            output_target(dir.path(), true),
            Err(RecordingError::Io { .. })
        ));
    }

    #[test]
    fn free_paths_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("recording-1.ron");
        assert_eq!(free_path(&base), base);
        fs::write(&base, "").unwrap();
        let second = free_path(&base);
        assert_eq!(second, dir.path().join("recording-1-2.ron"));
        fs::write(with_suffix(&second, ".partial"), "").unwrap();
        assert_eq!(free_path(&base), dir.path().join("recording-1-3.ron"));
    }

    fn head() -> Recording {
        let mut rec = rec_with_chunks(vec![Chunk {
            t_micros: 1,
            bytes: b"ignored".to_vec(),
        }]);
        rec.response = None;
        rec
    }

    #[test]
    fn journal_lines_are_single_line_records() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        assert_eq!(w.journal_path(), dir.path().join("out.ron.partial"));
        w.append_chunk(&Chunk {
            t_micros: 5,
            bytes: "a\nb\r\"深\u{2028}".as_bytes().to_vec(),
        })
        .unwrap();
        w.flush().unwrap();
        let text = fs::read_to_string(w.journal_path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], JOURNAL_MAGIC);
        assert!(lines[1].starts_with("Head("), "{}", lines[1]);
        assert!(lines[2].starts_with("Chunk("), "{}", lines[2]);
        assert!(lines[2].contains('深'), "{}", lines[2]);
    }

    #[test]
    fn killed_recorder_is_salvaged() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let response = ResponseInfo {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
        };
        w.set_response(&response).unwrap();
        let chunks = chunks_of(&["data: 深".as_bytes(), b"\xe5\x9c", b"\xb3\n\n", b"\xff"]);
        for c in &chunks[..3] {
            w.append_chunk(c).unwrap();
        }
        w.flush().unwrap();
        w.append_chunk(&chunks[3]).unwrap(); // buffered only
        let journal = w.journal_path().to_path_buf();
        // SIGKILL: no destructor, the buffered chunk is lost.
        std::mem::forget(w);

        let rec = load(&journal).unwrap();
        assert!(rec.meta.interrupted);
        assert_eq!(rec.chunks, chunks[..3]);
        assert_eq!(rec.response, Some(response.clone()));
        assert_eq!(rec.request, head().request);
        assert_eq!(rec.truth, head().truth);
        assert_eq!(rec.meta.title, head().meta.title);
        assert_eq!(
            rec.meta.notes.last().unwrap(),
            "recorder was interrupted: 3 chunks salvaged"
        );
        assert_eq!(rec.version, FORMAT_VERSION);

        // The same journal under any name is recognised by its first line.
        let renamed = dir.path().join("whatever.txt");
        fs::copy(&journal, &renamed).unwrap();
        assert_eq!(load(&renamed).unwrap().chunks, chunks[..3]);

        // A second recorder refuses to overwrite the interrupted journal.
        let err = JournalWriter::create(&out, &head()).unwrap_err();
        assert!(matches!(err, RecordingError::JournalExists { .. }));
        assert!(
            err.to_string()
                .ends_with(&format!(" in {}", journal.display()))
        );
    }

    #[test]
    fn dropped_writer_keeps_buffered_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let chunks = chunks_of(&[b"one", b"two"]);
        for c in &chunks {
            w.append_chunk(c).unwrap();
        }
        let journal = w.journal_path().to_path_buf();
        drop(w);
        let rec = load(&journal).unwrap();
        assert_eq!(rec.chunks, chunks);
        assert!(rec.meta.interrupted);
        assert!(!out.exists());
    }

    #[test]
    fn half_written_last_line_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let chunks = chunks_of(&["深圳 one".as_bytes(), "深圳 two".as_bytes()]);
        for c in &chunks {
            w.append_chunk(c).unwrap();
        }
        w.flush().unwrap();
        let journal = w.journal_path().to_path_buf();
        drop(w);
        let full = fs::read(&journal).unwrap();
        let second_start = full[..full.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        let head_end = full
            .iter()
            .skip(JOURNAL_MAGIC.len() + 1)
            .position(|&b| b == b'\n')
            .unwrap()
            + JOURNAL_MAGIC.len()
            + 2;

        // Cut at every byte of the last record (including inside 深, making the file invalid UTF-8).
        for cut in second_start..full.len() {
            fs::write(&journal, &full[..cut]).unwrap();
            let rec = load(&journal).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            let expect = if cut + 1 >= full.len() { 2 } else { 1 };
            assert_eq!(rec.chunks, chunks[..expect], "cut {cut}");
            assert!(rec.meta.interrupted);
            assert!(rec.meta.notes.contains(&format!(
                "recorder was interrupted: {expect} chunks salvaged"
            )));
        }
        // Any cut after the head salvages without error; cuts before it never panic.
        for cut in 0..full.len() {
            let result = Recording::from_bytes(&full[..cut]);
            if cut >= head_end {
                assert!(result.is_ok(), "cut {cut}: {result:?}");
            }
        }
        // Garbage in a middle line is an error with the journal line number.
        let mut text = String::from_utf8(full).unwrap();
        text = text.replacen("Chunk((t_us:0", "Chunk((t_us:zz", 1);
        let err = salvage_journal(&text).unwrap_err();
        assert!(
            matches!(err, RecordingError::Syntax { line: 3, .. }),
            "{err:?}"
        );
        // Power loss padding.
        let padded = format!("{}\0\0\0\0\n", text.replacen("t_us:zz", "t_us:0", 1));
        assert_eq!(salvage_journal(&padded).unwrap().chunks, chunks);
    }

    #[test]
    fn journal_structure_errors() {
        assert!(matches!(
            salvage_journal("# something else\n"),
            Err(RecordingError::BadJournal { line: 1, .. })
        ));
        assert!(matches!(
            salvage_journal("# sse-replay journal v9\nHead(())\n"),
            Err(RecordingError::FutureVersion { found: 9, .. })
        ));
        let err =
            salvage_journal(&format!("{JOURNAL_MAGIC}\nChunk((t_us:1))\nHead(())\n")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid recorder journal at line 2: the first record is not the head"
        );
        let err = salvage_journal(&format!(
            "{JOURNAL_MAGIC}\nHead((version:3))\nChunk((t_us:1))\n"
        ))
        .unwrap_err();
        assert!(matches!(
            err,
            RecordingError::FutureVersion { found: 3, .. }
        ));
        // A damaged head is reported with its line, never replaced by defaults.
        let err = salvage_journal(&format!("{JOURNAL_MAGIC}\nHead((ver")).unwrap_err();
        assert!(
            matches!(err, RecordingError::BadJournal { line: 2, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("head record is damaged"), "{err}");
        let err = salvage_journal(&format!(
            "{JOURNAL_MAGIC}\nHead((meta:(title:5)))\nChunk((t_us:1,text:\"a\"))\n"
        ))
        .unwrap_err();
        assert!(
            matches!(err, RecordingError::BadJournal { line: 2, .. }),
            "{err:?}"
        );
        let err = salvage_journal(&format!("{JOURNAL_MAGIC}\n")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid recorder journal at line 2: no head record after the first line (nothing was recorded)"
        );
    }

    #[test]
    fn finish_writes_the_final_file_and_removes_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let mut rec = head();
        rec.chunks = chunks_of(&[b"data: 1\n\n", b"data: 2\n\n"]);
        for c in &rec.chunks {
            w.append_chunk(c).unwrap();
        }
        let journal = w.journal_path().to_path_buf();
        let final_path = w.finish(&rec).unwrap();
        assert_eq!(final_path, out);
        assert!(!journal.exists());
        assert_eq!(names_in(dir.path()), ["out.ron"]);
        let loaded = load(&out).unwrap();
        assert_eq!(loaded, rec);
        assert!(!loaded.meta.interrupted);
        // A new recording to the same path works again.
        JournalWriter::create(&out, &head()).unwrap();
    }

    #[test]
    fn journal_auto_flushes_after_100ms() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        w.append_chunk(&Chunk {
            t_micros: 1,
            bytes: b"a".to_vec(),
        })
        .unwrap();
        std::thread::sleep(Duration::from_millis(120));
        w.append_chunk(&Chunk {
            t_micros: 2,
            bytes: b"b".to_vec(),
        })
        .unwrap();
        // Both are on disk without an explicit flush.
        let rec = salvage_journal(&fs::read_to_string(w.journal_path()).unwrap()).unwrap();
        assert_eq!(rec.chunks.len(), 2);
        assert_eq!(w.chunk_count(), 2);
        std::mem::forget(w);
    }
}
