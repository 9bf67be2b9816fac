//! What a byte sequence is: the one module that looks at bytes (and at a `Content-Type`) to decide
//! what they are. It sits below the probe ([`crate::probe`]) and the importers
//! ([`crate::import`]) and depends on neither: they ask it, and never look at content to decide
//! again.
//!
//! - [`decide`]: an input's name and head → [`Content`]: what it is ([`Kind`]), the framing its
//!   body is cut with ([`Framing`], the framer's own decision) and the importer that reads it
//!   ([`ImportFormat`], or why none does). The probe keeps this answer; `import` takes it.
//! - [`framing`]: the framing of a body from its first bytes, as the
//!   framer ([`crate::framing::Framer`] with no framing given) decides it while bytes arrive; the
//!   one rule for serve's and the harness's `Content-Type` of a recording that has none.
//! - [`is_stream_body`], [`is_chunk_array`], [`is_stream_type`], [`stream_type`]: whether a body
//!   inside a capture (or an answer a proxy holds) is a stream, by its bytes or its content type.
//! - [`may_be_one_document`], [`may_open_document`]: whether bytes may still be one complete JSON
//!   document (the recorder keeps a copy while they may).
//!
//! The binary AWS event stream's prelude check stays with its decoder
//! ([`crate::aws_eventstream::looks_like_aws_eventstream`]); this module is the one that asks it
//! to decide what a body is.

use std::path::Path;

use crate::framing::Framing;

/// What an input is. New forms plug in here (and in [`decide`]): see the probe's documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An sse-replay recording (RON), or a file named `.ron` / `.partial`.
    Recording,
    /// A recorder's journal (`# sse-replay journal v…`), salvaged when read.
    Journal,
    /// A capture file that holds one or more streams with their requests: imported.
    Capture(CaptureFormat),
    /// A response body as a server sent it (`curl -N … > file`): no read boundaries, no timing.
    Body(BodyForm),
}

/// The capture formats the importer reads ([`crate::import`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureFormat {
    /// HAR (browser devtools, proxies): `{"log": {"entries": …}}`.
    Har,
    /// A VCR-style YAML cassette (vcrpy, pytest-recording, pydantic-ai, go-vcr): `interactions:`;
    /// Ruby's vcr gem: `http_interactions:`.
    Cassette,
    /// A JSON-lines fixture (one chunk object per line), told from a raw JSON-lines body only by
    /// its name (`.jsonl`, `.ndjson`).
    JsonLines,
    /// An Azure SDK test-proxy session record (`{"Entries": [{"RequestUri", "ResponseBody"…}]}`).
    TestProxy,
    /// A stream body written as base64 (a binary AWS event stream kept as text).
    Base64Body,
    /// A JSON object holding a response's status, headers and body (a proxy's or a test's capture).
    JsonCapture,
    /// An httprr trace (Go): `httprr trace v1`, then each request and response as on the wire.
    Httprr,
}

/// What a body looks like from its head. Every form is read the same way (cut into events by the
/// framing layer as it is read); the form decides what else is done with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyForm {
    /// Server-sent events: the first line is an SSE field or comment, or a `data:` / `event:`
    /// line comes among the first 64.
    Sse,
    /// JSON lines (Ollama's `/api/chat`, SDK fixtures): the first two non-blank lines are each a
    /// JSON object.
    JsonLines,
    /// Opens with `{` but is not JSON lines: one JSON document, perhaps a complete
    /// (non-streaming) response whose calls are read directly ([`crate::complete`]), so it is
    /// kept whole; also a document longer than the head, or broken JSON.
    Document,
    /// Nothing but whitespace.
    Blank,
    /// None of these: read as a stream all the same (binary AWS frames and a JSON array of chunks
    /// among them: [`Content::framing`] says which), and the findings say what it holds.
    Unrecognised,
}

impl Kind {
    /// A short name for messages and logs.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Recording => "recording",
            Kind::Journal => "journal",
            Kind::Capture(CaptureFormat::Har) => "HAR capture",
            Kind::Capture(CaptureFormat::Cassette) => "cassette",
            Kind::Capture(CaptureFormat::JsonLines) => "JSON-lines fixture",
            Kind::Capture(CaptureFormat::TestProxy) => "test-proxy session record",
            Kind::Capture(CaptureFormat::Base64Body) => "base64 body",
            Kind::Capture(CaptureFormat::JsonCapture) => "JSON capture",
            Kind::Capture(CaptureFormat::Httprr) => "httprr trace",
            Kind::Body(BodyForm::Sse) => "SSE body",
            Kind::Body(BodyForm::JsonLines) => "JSON-lines body",
            Kind::Body(BodyForm::Document) => "JSON document",
            Kind::Body(BodyForm::Blank) => "blank body",
            Kind::Body(BodyForm::Unrecognised) => "unrecognised body",
        }
    }
}

/// Which importer reads an input ([`crate::import`]): a capture format, or a raw body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFormat {
    /// A HAR file.
    Har,
    /// A VCR-style YAML cassette.
    Cassette,
    /// A JSON-lines fixture: one chunk object per line.
    JsonLines,
    /// An Azure SDK test-proxy session record.
    TestProxy,
    /// A body as a server sent it (SSE, JSON lines, a JSON array, binary AWS frames, one complete
    /// response).
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

/// Why no importer reads an input (the importer turns it into its error, naming the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotImportable {
    /// Nothing but whitespace.
    Empty,
    /// Already a recording (or a journal): opened, not imported.
    AlreadyRecording,
    /// No capture format and no stream body this build reads.
    Unrecognised,
}

/// The one answer on what an input is: its kind, the framing its body is cut with, and the
/// importer that reads it. Decided once from the name and the head ([`decide`]); every reader
/// takes it as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Content {
    /// What the input is.
    pub kind: Kind,
    /// For a body, the framing the framer gives it ([`framing`]); `None` for recordings, journals
    /// and captures, and while the head cannot tell (blank).
    pub framing: Option<Framing>,
    /// The importer that reads it, or why none does.
    pub import: Result<ImportFormat, NotImportable>,
}

/// The recording markers are looked for in this much of the head (after a byte order mark and
/// leading whitespace).
const MARKER_BYTES: usize = 256;

/// SSE field names are looked for in this many lines of the head.
const SSE_LINES: usize = 64;

/// A HAR's `"log"` key is looked for this far into a first line that is not JSON by itself.
const HAR_KEY_BYTES: usize = 4096;

/// A JSON capture's `"bodyBase64"` key is looked for this far into the head.
const JSON_CAPTURE_KEY_BYTES: usize = 64 * 1024;

/// A base64 body is tried on this much of the head.
const BASE64_HEAD_BYTES: usize = 4096;

/// The first line of every httprr trace.
pub const HTTPRR_HEADER: &[u8] = b"httprr trace v1";

/// The top-level keys that hold a cassette's interactions: vcrpy's and go-vcr's, Ruby vcr's.
pub const INTERACTION_KEYS: [&str; 2] = ["interactions", "http_interactions"];

/// What an input is, from its name (the extension breaks ties) and its head (the first
/// [`crate::input::PEEK_BYTES`], or all of it). The one decision: every reader asks this, and
/// nothing else looks at content to decide. Rules for the kind, in order:
///
/// 1. a journal's first line → [`Kind::Journal`];
/// 2. named `.ron` / `.partial`, or opening like a RON document (`(`, `Recording(`, `#![enable`,
///    `# sse-replay journal`) → [`Kind::Recording`];
/// 3. nothing but whitespace → [`BodyForm::Blank`];
/// 4. named `.har`, `.yaml` / `.yml`, `.jsonl` / `.ndjson`, `.httprr` → that [`Kind::Capture`];
/// 5. binary AWS event stream frames → a body ([`BodyForm::Unrecognised`], framed as frames);
///    a JSON object holding a response's status, headers and body → [`CaptureFormat::JsonCapture`];
///    opening with `{`: a HAR when its first line (or the whole document) has a `log` key, a
///    test-proxy session record, else [`BodyForm::Document`] or [`BodyForm::JsonLines`];
/// 6. a line `interactions:` or `http_interactions:` → a cassette; `httprr trace v1` → an httprr
///    trace;
/// 7. a JSON array (the framer cuts it element by element) → [`BodyForm::Unrecognised`];
/// 8. a first line that is an SSE field or comment, or a `data:` / `event:` line among the first
///    64 → [`BodyForm::Sse`];
/// 9. base64 text that decodes to a stream → [`CaptureFormat::Base64Body`];
/// 10. else [`BodyForm::Unrecognised`].
///
/// A body's framing is [`framing`] of the head; its importer follows from the kind (a body goes
/// to the raw-body reader, as `check` reads it, except JSON lines and broken JSON).
pub fn decide(name: &Path, head: &[u8]) -> Content {
    let kind = kind(name, head);
    Content {
        kind,
        framing: match kind {
            Kind::Body(_) => framing(head),
            Kind::Recording | Kind::Journal | Kind::Capture(_) => None,
        },
        import: import_format(kind, head),
    }
}

fn kind(name: &Path, head: &[u8]) -> Kind {
    let bom_stripped = crate::text::strip_bom(head);
    if crate::recording::is_journal(bom_stripped) {
        return Kind::Journal;
    }
    let ext = extension(name);
    let text = trim_start(bom_stripped);
    if matches!(ext.as_str(), "ron" | "partial") || opens_like_recording(text) {
        return Kind::Recording;
    }
    if text.is_empty() {
        return Kind::Body(BodyForm::Blank);
    }
    match ext.as_str() {
        "har" => return Kind::Capture(CaptureFormat::Har),
        "yaml" | "yml" => return Kind::Capture(CaptureFormat::Cassette),
        "jsonl" | "ndjson" => return Kind::Capture(CaptureFormat::JsonLines),
        "httprr" => return Kind::Capture(CaptureFormat::Httprr),
        _ => {}
    }
    // Binary AWS event stream frames (Bedrock): a body, cut into frames by the framing layer.
    if crate::aws_eventstream::looks_like_aws_eventstream(bom_stripped) {
        return Kind::Body(BodyForm::Unrecognised);
    }
    if looks_like_json_capture(text) {
        return Kind::Capture(CaptureFormat::JsonCapture);
    }
    if text[0] == b'{' {
        let document = one_document(text);
        if first_line_is_har(text) || document == Some(Document::Har) {
            return Kind::Capture(CaptureFormat::Har);
        }
        if document == Some(Document::TestProxy) {
            return Kind::Capture(CaptureFormat::TestProxy);
        }
        return Kind::Body(json_form(text));
    }
    if lines(text).any(opens_interactions) {
        return Kind::Capture(CaptureFormat::Cassette);
    }
    if is_httprr_trace(text) {
        return Kind::Capture(CaptureFormat::Httprr);
    }
    // A JSON array of chunks (Gemini's streamGenerateContent without alt=sse, a dump): the framer
    // cuts it element by element, whatever lines it holds, so it is no SSE body.
    if crate::json_array::looks_like_json_array(text) {
        return Kind::Body(BodyForm::Unrecognised);
    }
    if is_sse(text) {
        return Kind::Body(BodyForm::Sse);
    }
    if looks_like_base64_stream(text) {
        return Kind::Capture(CaptureFormat::Base64Body);
    }
    Kind::Body(BodyForm::Unrecognised)
}

/// Which importer reads an input of this kind (`head`: its first bytes), or why none does. A body
/// goes to the raw-body reader, as `check` reads it, except JSON lines (a fixture, one chunk
/// object per line) and a `{` body that is not one JSON document, perhaps cut short (broken JSON:
/// the JSON-lines reader names the line that is not an object).
fn import_format(kind: Kind, head: &[u8]) -> Result<ImportFormat, NotImportable> {
    let text = trim_start(crate::text::strip_bom(head));
    match kind {
        Kind::Recording | Kind::Journal if text.is_empty() => Err(NotImportable::Empty),
        Kind::Recording | Kind::Journal => Err(NotImportable::AlreadyRecording),
        Kind::Capture(format) => Ok(format.into()),
        Kind::Body(BodyForm::Blank) => Err(NotImportable::Empty),
        Kind::Body(BodyForm::Sse) => Ok(ImportFormat::RawBody),
        Kind::Body(BodyForm::JsonLines) => Ok(ImportFormat::JsonLines),
        Kind::Body(BodyForm::Document) if may_be_one_document(text) => Ok(ImportFormat::RawBody),
        Kind::Body(BodyForm::Document) => Ok(ImportFormat::JsonLines),
        Kind::Body(BodyForm::Unrecognised) => match framing(head) {
            Some(Framing::AwsEventStream | Framing::JsonArray) => Ok(ImportFormat::RawBody),
            Some(Framing::Sse | Framing::JsonLines) | None => Err(NotImportable::Unrecognised),
        },
    }
}

/// The first line of the head after leading whitespace, for messages about unrecognised input.
pub fn first_line(head: &[u8]) -> &[u8] {
    let text = trim_start(crate::text::strip_bom(head));
    &text[..memchr::memchr(b'\n', text).unwrap_or(text.len())]
}

fn extension(name: &Path) -> String {
    name.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

fn opens_like_recording(text: &[u8]) -> bool {
    let text = &text[..text.len().min(MARKER_BYTES)];
    text.starts_with(b"# sse-replay journal")
        || text.starts_with(b"(")
        || text.starts_with(b"Recording(")
        || text.starts_with(b"#![enable")
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// A first line that is a JSON object with a `log` key; a minified HAR is one line too, perhaps
/// longer than the head, so a first line that does not parse is a HAR when `"log"` appears early.
fn first_line_is_har(text: &[u8]) -> bool {
    let first = &text[..memchr::memchr(b'\n', text).unwrap_or(text.len())];
    match serde_json::from_slice::<serde_json::Value>(first) {
        Ok(v) => v.get("log").is_some(),
        Err(_) => {
            memchr::memmem::find(&text[..text.len().min(HAR_KEY_BYTES)], b"\"log\"").is_some()
        }
    }
}

/// What a head that is exactly one JSON object holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Document {
    /// A HAR: a `log` key.
    Har,
    /// A test-proxy session record: an `Entries` list.
    TestProxy,
    /// Anything else (a complete response).
    Other,
}

/// The head as one JSON object, if it is exactly one (`None`: JSON lines, a document longer than
/// the head, broken JSON, anything else).
fn one_document(text: &[u8]) -> Option<Document> {
    let mut it = serde_json::Deserializer::from_slice(text).into_iter::<serde_json::Value>();
    let serde_json::Value::Object(doc) = it.next()?.ok()? else {
        return None;
    };
    if it.next().is_some() {
        return None;
    }
    Some(if doc.contains_key("log") {
        Document::Har
    } else if looks_like_test_proxy_session(&doc) {
        Document::TestProxy
    } else {
        Document::Other
    })
}

/// A test-proxy session record: a JSON object with an `Entries` list.
fn looks_like_test_proxy_session(doc: &serde_json::Map<String, serde_json::Value>) -> bool {
    doc.get("Entries").is_some_and(serde_json::Value::is_array)
}

/// A body opening with `{`: JSON lines when its first two non-blank lines are each a JSON object,
/// else one document (a complete response, a document longer than the head, or broken JSON).
fn json_form(text: &[u8]) -> BodyForm {
    let mut non_blank = lines(text).filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    if non_blank.next().is_some_and(is_json_object_line)
        && non_blank.next().is_some_and(is_json_object_line)
    {
        BodyForm::JsonLines
    } else {
        BodyForm::Document
    }
}

fn is_json_object_line(l: &[u8]) -> bool {
    l.first() == Some(&b'{') && serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok()
}

/// The line is an SSE field or comment a stream may open with (`data:`, `event:`, `id:`, `:`).
fn opens_sse(line: &[u8]) -> bool {
    [b"data:".as_slice(), b"event:", b"id:", b":"]
        .iter()
        .any(|field| line.starts_with(field))
}

/// Server-sent events: the first line is a field or a comment (`data:`, `event:`, `id:`, `:`), or
/// a `data:` / `event:` line comes among the first lines.
fn is_sse(text: &[u8]) -> bool {
    opens_sse(lines(text).next().unwrap_or_default())
        || lines(text)
            .take(SSE_LINES)
            .any(|l| l.starts_with(b"data:") || l.starts_with(b"event:"))
}

/// Whether a line of a YAML file opens a cassette's interactions (the one test of "this is a
/// cassette").
fn opens_interactions(line: &[u8]) -> bool {
    INTERACTION_KEYS.iter().any(|k| {
        line.strip_prefix(k.as_bytes())
            .is_some_and(|rest| rest.starts_with(b":"))
    })
}

/// Whether `head` (leading whitespace and a BOM allowed) opens an httprr trace.
fn is_httprr_trace(head: &[u8]) -> bool {
    trim_start(crate::text::strip_bom(head))
        .strip_prefix(HTTPRR_HEADER)
        .is_some_and(|rest| rest.first().is_none_or(|&b| b == b'\n' || b == b'\r'))
}

/// Whether a JSON document's head names a base64 body (`"bodyBase64"`): checked before the
/// document is parsed.
fn looks_like_json_capture(text: &[u8]) -> bool {
    text.first() == Some(&b'{')
        && memchr::memmem::find(
            &text[..text.len().min(JSON_CAPTURE_KEY_BYTES)],
            b"\"bodyBase64\"",
        )
        .is_some()
}

/// Whether `text` (a file's head, leading whitespace skipped) is base64 text whose decoding
/// starts like a stream: an AWS event stream prelude, or SSE / JSON lines.
fn looks_like_base64_stream(text: &[u8]) -> bool {
    let head = &text[..text.len().min(BASE64_HEAD_BYTES)];
    let alphabet =
        |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_');
    if head.len() < 16 || !head.iter().all(|b| alphabet(b) || b.is_ascii_whitespace()) {
        return false;
    }
    // Decode whole 4-character groups of the head only.
    let chars: Vec<u8> = head.iter().copied().filter(alphabet).collect();
    let whole = chars.len() / 4 * 4;
    let Ok(decoded) = std::str::from_utf8(&chars[..whole])
        .map_err(|e| e.to_string())
        .and_then(crate::wire::base64::decode)
    else {
        return false;
    };
    is_stream_body(&decoded)
}

/// The framing of a body that starts with `head`, decided as the framer decides it
/// ([`crate::framing::Framer::new`] with no framing given); `None` while `head` cannot tell
/// (empty, only blank bytes, or fewer bytes than a binary frame's prelude).
pub fn framing(head: &[u8]) -> Option<Framing> {
    crate::framing::Framer::decide(head, crate::limits::EventLimit::DEFAULT.bytes(), 0).ok()
}

/// Does this body (one inside a capture, with no stream content type) look like a stream: SSE
/// lines, JSON lines, binary AWS event stream frames, or a JSON array whose first element is a
/// chunk of a known dialect ([`is_chunk_array`]), rather than one JSON document?
pub fn is_stream_body(body: &[u8]) -> bool {
    if crate::aws_eventstream::looks_like_aws_eventstream(body) {
        return true;
    }
    if crate::json_array::looks_like_json_array(body) {
        return is_chunk_array(body.chunks(64 * 1024));
    }
    let mut lines = lines(body).filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let Some(first) = lines.next() else {
        return false;
    };
    if opens_sse(first) {
        return true;
    }
    // Two or more lines that are each a JSON object: NDJSON (Ollama).
    is_json_object_line(first) && lines.next().is_some_and(is_json_object_line)
}

/// A body, in the pieces it came in, is a JSON array whose first element is a chunk of a known
/// dialect (Gemini's `streamGenerateContent` without `alt=sse`, a stream served as
/// `application/json`) rather than one JSON document.
pub fn is_chunk_array<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> bool {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let mut framer = crate::json_array::JsonArrayFramer::default();
    let mut opened: Option<bool> = None;
    let mut first: Option<bool> = None;
    // The bytes up to the first that is not whitespace (after a byte order mark): it decides
    // whether this is an array at all, however the pieces were cut.
    let mut start = Vec::new();
    for piece in pieces {
        // The first element decides; the framer stops being fed once it has been seen.
        framer.feed(piece, &mut |item| {
            if let crate::framing::Framed::Event { data, .. } = item {
                first.get_or_insert_with(|| crate::dialect::detect("message", data).is_some());
            }
        });
        if opened.is_none() {
            start.extend_from_slice(piece);
            if start.len() < BOM.len() && BOM.starts_with(&start) {
                continue;
            }
            opened = crate::text::strip_bom(&start)
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .map(|&b| b == b'[');
        }
        if opened == Some(false) {
            return false;
        }
        if first.is_some() {
            break;
        }
    }
    opened == Some(true) && first == Some(true)
}

/// The framing a `Content-Type` names for a stream: `text/event-stream` (SSE), NDJSON / JSON
/// lines, binary AWS event stream frames (`application/vnd.amazon.eventstream`); `None` for any
/// other type (`application/json` among them: a document, or a JSON array told by its bytes).
pub fn stream_type(content_type: &str) -> Option<Framing> {
    let media = content_type.split(';').next().unwrap_or_default().trim();
    let is = |t: &str| media.eq_ignore_ascii_case(t);
    if is("text/event-stream") {
        Some(Framing::Sse)
    } else if is(crate::aws_eventstream::CONTENT_TYPE) {
        Some(Framing::AwsEventStream)
    } else if [
        "application/x-ndjson",
        "application/ndjson",
        "application/jsonl",
        "application/x-jsonlines",
    ]
    .iter()
    .any(|t| is(t))
    {
        Some(Framing::JsonLines)
    } else {
        None
    }
}

/// Whether a content type names one JSON document (`application/json`, `…+json`): a complete
/// response, or a JSON array of chunks told by its bytes ([`is_chunk_array`]).
pub fn is_json_type(content_type: &str) -> bool {
    let media = content_type.split(';').next().unwrap_or_default().trim();
    media.eq_ignore_ascii_case("application/json") || media.to_ascii_lowercase().ends_with("+json")
}

/// Whether a content type names a stream ([`stream_type`]).
pub fn is_stream_type(content_type: &str) -> bool {
    stream_type(content_type).is_some()
}

/// Whether `bytes` may still be (the start of) one single JSON document: the first document is
/// unfinished, or finished with nothing but whitespace after it. JSON lines (a second document)
/// and text that is not JSON are not.
pub fn may_be_one_document(bytes: &[u8]) -> bool {
    let bytes = crate::text::strip_bom(bytes);
    let mut it = serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
    match it.next() {
        None => true,
        Some(Err(e)) => e.is_eof(),
        Some(Ok(_)) => it.next().is_none(),
    }
}

/// The first JSON document in `bytes` is not finished yet (more bytes may complete it).
pub fn first_document_unfinished(bytes: &[u8]) -> bool {
    let bytes = crate::text::strip_bom(bytes);
    let mut it = serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
    matches!(it.next(), Some(Err(e)) if e.is_eof())
}

/// What a body that framed no event looks like from its first bytes, for the one-line
/// description `nothing-recognised` gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Appearance {
    /// Shaped like AWS event stream frames, whether or not their checksums hold.
    AwsFrames,
    /// Control bytes (other than line endings and tabs), or a few bytes that are not UTF-8.
    Binary,
    /// Anything else.
    Text,
}

/// What a body that framed no event looks like: AWS event stream frames (a big-endian total
/// length, a headers length, a prelude CRC, then `:event-type`-style headers), binary data, or
/// text.
pub fn appearance(head: &[u8]) -> Appearance {
    if resembles_aws_eventstream(head) {
        return Appearance::AwsFrames;
    }
    let binary = head
        .iter()
        .any(|&b| b == 0 || (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t')))
        || std::str::from_utf8(head).is_err() && head.len() < 4;
    if binary {
        Appearance::Binary
    } else {
        Appearance::Text
    }
}

/// The body is shaped like an AWS event stream message (`application/vnd.amazon.eventstream`),
/// whether or not its checksums hold: a prelude whose total length covers at least the prelude
/// and the CRCs, a headers length inside it, and a header name starting with `:` right after the
/// 12-byte prelude. Only for describing a body that framed no event: a body whose first prelude
/// CRC is corrupt is still said to be AWS frames. Whether a body *is* an event stream (sniffing,
/// importing, serving) is [`crate::aws_eventstream::looks_like_aws_eventstream`], which checks
/// the prelude CRC.
fn resembles_aws_eventstream(head: &[u8]) -> bool {
    if head.len() < 16 {
        return false;
    }
    let total = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let headers = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
    let name_len = head[12] as usize;
    total >= 16
        && headers < total
        && name_len > 1
        && head.get(13) == Some(&b':')
        && head
            .get(13..13 + name_len.min(head.len() - 13))
            .is_some_and(|n| n.iter().all(|b| b.is_ascii_graphic()))
}

/// Whether a body that starts with `head` may open a JSON document: its first byte that is not
/// whitespace (after a byte order mark) is `{`, or none has come yet. A stream is plainly not one
/// from its first byte.
pub fn may_open_document(head: &[u8]) -> bool {
    trim_start(crate::text::strip_bom(head))
        .first()
        .is_none_or(|&b| b == b'{')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{self, ImportError};
    use crate::probe::ReadOptions;

    fn kind(name: &str, head: &[u8]) -> Kind {
        decide(Path::new(name), head).kind
    }

    fn content(name: &str, head: &[u8]) -> Content {
        decide(Path::new(name), head)
    }

    /// Every kind, with the framing and the importer the one decision gives it.
    #[test]
    fn every_kind_with_its_framing_and_importer() {
        use Framing as F;
        use ImportFormat as I;
        let frame = crate::aws_eventstream::event_frame("contentBlockDelta", b"{}");
        let base64_sse = {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(b"data: {\"a\":1}\n\ndata: [DONE]\n\n")
        };
        let gemini = br#"[{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}]"#;
        // A HAR whose `log` key comes after the first 4096 bytes: the probe called it a document
        // (check read it as a complete response) while the importer read it as a HAR.
        let late_log = format!(
            "{{\n  \"comment\": \"{}\",\n  \"log\": {{\"entries\": []}}\n}}\n",
            "x".repeat(5000)
        );
        type Row<'a> = (
            &'a str,
            &'a [u8],
            Kind,
            Option<Framing>,
            Result<I, NotImportable>,
        );
        let rows: Vec<Row<'_>> = vec![
            (
                "x",
                b"(version: 1)",
                Kind::Recording,
                None,
                Err(NotImportable::AlreadyRecording),
            ),
            (
                "x.ron",
                b"",
                Kind::Recording,
                None,
                Err(NotImportable::Empty),
            ),
            (
                "x",
                b"# sse-replay journal v1\n",
                Kind::Journal,
                None,
                Err(NotImportable::AlreadyRecording),
            ),
            (
                "x.har",
                b"{}",
                Kind::Capture(CaptureFormat::Har),
                None,
                Ok(I::Har),
            ),
            (
                "x",
                late_log.as_bytes(),
                Kind::Capture(CaptureFormat::Har),
                None,
                Ok(I::Har),
            ),
            (
                "x",
                br#"{"log":{"entries":[]}}"#,
                Kind::Capture(CaptureFormat::Har),
                None,
                Ok(I::Har),
            ),
            (
                "x",
                b"interactions:\n- a",
                Kind::Capture(CaptureFormat::Cassette),
                None,
                Ok(I::Cassette),
            ),
            (
                "x.jsonl",
                b"{}",
                Kind::Capture(CaptureFormat::JsonLines),
                None,
                Ok(I::JsonLines),
            ),
            (
                "x",
                br#"{"Entries": []}"#,
                Kind::Capture(CaptureFormat::TestProxy),
                None,
                Ok(I::TestProxy),
            ),
            (
                "x",
                base64_sse.as_bytes(),
                Kind::Capture(CaptureFormat::Base64Body),
                None,
                Ok(I::Base64Body),
            ),
            (
                "x",
                br#"{"response":{"bodyBase64":"ZGF0YTo="}}"#,
                Kind::Capture(CaptureFormat::JsonCapture),
                None,
                Ok(I::JsonCapture),
            ),
            (
                "x",
                b"httprr trace v1\n",
                Kind::Capture(CaptureFormat::Httprr),
                None,
                Ok(I::Httprr),
            ),
            (
                "x",
                b"data: {}\n\n",
                Kind::Body(BodyForm::Sse),
                Some(F::Sse),
                Ok(I::RawBody),
            ),
            (
                "x",
                b"{\"a\":1}\n{\"a\":2}\n",
                Kind::Body(BodyForm::JsonLines),
                Some(F::JsonLines),
                Ok(I::JsonLines),
            ),
            (
                "x",
                b"{\n  \"id\": 1\n}\n",
                Kind::Body(BodyForm::Document),
                Some(F::JsonLines),
                Ok(I::RawBody),
            ),
            (
                "x",
                b"{nope}\n",
                Kind::Body(BodyForm::Document),
                Some(F::JsonLines),
                Ok(I::JsonLines),
            ),
            (
                "x",
                b" \r\n",
                Kind::Body(BodyForm::Blank),
                None,
                Err(NotImportable::Empty),
            ),
            (
                "x",
                &frame,
                Kind::Body(BodyForm::Unrecognised),
                Some(F::AwsEventStream),
                Ok(I::RawBody),
            ),
            (
                "x",
                gemini,
                Kind::Body(BodyForm::Unrecognised),
                Some(F::JsonArray),
                Ok(I::RawBody),
            ),
            (
                "x",
                b"<html>",
                Kind::Body(BodyForm::Unrecognised),
                Some(F::Sse),
                Err(NotImportable::Unrecognised),
            ),
        ];
        for (name, head, want_kind, want_framing, want_import) in rows {
            let c = content(name, head);
            let shown = crate::text::truncate(&String::from_utf8_lossy(head), 60);
            assert_eq!(c.kind, want_kind, "{name} {shown:?}");
            assert_eq!(c.framing, want_framing, "{name} {shown:?}");
            assert_eq!(c.import, want_import, "{name} {shown:?}");
        }
    }

    /// A body's form and its framing never disagree: an SSE body is framed as SSE, JSON lines as
    /// lines. A JSON array with `data:` lines inside was an SSE body to the probe and a JSON array
    /// to the framer that cut it.
    #[test]
    fn a_body_form_agrees_with_its_framing() {
        let heads: [&[u8]; 7] = [
            b"[\ndata: {}\n\n",
            b"[{\"a\":1},\nevent: x\n",
            b": ping\n\ndata: 1\n\n",
            b"{\"a\":1}\n{\"b\":2}\n",
            b"\xEF\xBB\xBF[]",
            b"id: 1\n",
            b"<p>\ndata: x\n",
        ];
        for head in heads {
            let c = content("x", head);
            let shown = String::from_utf8_lossy(head);
            match c.kind {
                Kind::Body(BodyForm::Sse) => assert_eq!(c.framing, Some(Framing::Sse), "{shown:?}"),
                Kind::Body(BodyForm::JsonLines) => {
                    assert_eq!(c.framing, Some(Framing::JsonLines), "{shown:?}");
                }
                _ => {}
            }
            // The framing is the framer's own, fed the same bytes.
            let mut framer = crate::framing::Framer::new(None);
            framer.feed(head, &mut |_| {});
            framer.finish(&mut |_| {});
            assert_eq!(c.framing, framer.framing(), "{shown:?}");
        }
        assert_eq!(
            kind("x", b"[\ndata: {}\n\n"),
            Kind::Body(BodyForm::Unrecognised)
        );
    }

    /// A body that opens with an SSE comment or `id:` is an SSE body to `check`; the importer
    /// called it unrecognised.
    #[test]
    fn an_sse_body_of_comments_imports_as_check_reads_it() {
        for head in [b": keep-alive\n\n".as_slice(), b"id: 7\n\n"] {
            let c = content("x", head);
            assert_eq!(c.kind, Kind::Body(BodyForm::Sse));
            assert_eq!(c.import, Ok(ImportFormat::RawBody));
            let imported = import::import_bytes(Path::new("x"), head, &ReadOptions::default())
                .expect("imports");
            assert_eq!(imported.recordings.len(), 1);
            assert_eq!(imported.recordings[0].meta.source, "import:raw");
        }
    }

    /// A complete response longer than the head (the probe sees the first MiB) is a document to
    /// `check`, and the importer read it as JSON lines ("line 1 is not a JSON object").
    #[test]
    fn a_document_longer_than_the_head_imports_as_a_document() {
        let path = crate::repo_root().join("tests/data/complete/openai-chat.json");
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        let mut doc = doc;
        doc["padding"] = serde_json::Value::String("x".repeat(crate::input::PEEK_BYTES + 10));
        let pretty = serde_json::to_vec_pretty(&doc).expect("ser");
        assert!(pretty.len() > crate::input::PEEK_BYTES);
        let c = content("big.json", &pretty[..crate::input::PEEK_BYTES]);
        assert_eq!(c.kind, Kind::Body(BodyForm::Document));
        assert_eq!(c.import, Ok(ImportFormat::RawBody));

        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("big.json");
        std::fs::write(&file, &pretty).expect("write");
        let probe = crate::probe::open(&file, ReadOptions::default()).expect("open");
        let imported = import::import(probe).expect("imports");
        assert_eq!(imported.recordings[0].meta.source, "import:raw");
        // As the same bytes import when the whole of them is seen at once, and as `check` reads it.
        let whole = import::import_bytes(&file, &pretty, &ReadOptions::default()).expect("whole");
        assert_eq!(imported.recordings[0].body(), whole.recordings[0].body());
        let checked = crate::probe::open(&file, ReadOptions::default())
            .expect("open")
            .analyse(false)
            .expect("analyse");
        assert!(checked.client_calls().count() > 0);
    }

    /// Over every file the repository keeps: the probe's decision is the one the readers follow.
    /// A body's framing is the framer's on the whole file; an importable input is read by the
    /// importer named (its recordings say so), and one that is not fails for the reason given.
    #[test]
    fn the_probe_and_the_readers_agree_on_every_file() {
        let root = crate::repo_root();
        let mut files = Vec::new();
        let mut stack = vec![root.join("tests/data"), root.join("recordings")];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).expect("dir") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 100, "{}", files.len());
        let mut imported_formats = std::collections::BTreeSet::new();
        for path in files {
            let probe = crate::probe::open(&path, ReadOptions::default()).expect("open");
            let c = probe.content();
            assert_eq!(c, decide(&path, probe.input().head()), "{}", path.display());
            assert_eq!(probe.kind(), c.kind);
            let bytes = std::fs::read(&path).expect("read");
            if let Kind::Body(_) = c.kind {
                let mut framer = crate::framing::Framer::new(None);
                framer.feed(&bytes, &mut |_| {});
                if c.framing.is_some() {
                    assert_eq!(c.framing, framer.framing(), "{}", path.display());
                }
            }
            match (c.import, import::import(probe)) {
                (Ok(format), Ok(imported)) => {
                    imported_formats.insert(format.name());
                    for rec in &imported.recordings {
                        assert_eq!(
                            rec.meta.source,
                            format!("import:{}", format.name()),
                            "{}",
                            path.display()
                        );
                    }
                }
                // A capture that holds no stream, or a malformed file: the named importer said so.
                (Ok(_), Err(e)) => assert!(
                    !matches!(
                        e,
                        ImportError::Empty { .. }
                            | ImportError::AlreadyRecording { .. }
                            | ImportError::Unrecognised { .. }
                    ),
                    "{}: {e}",
                    path.display()
                ),
                (Err(why), Err(e)) => assert_eq!(
                    why,
                    match e {
                        ImportError::Empty { .. } => NotImportable::Empty,
                        ImportError::AlreadyRecording { .. } => NotImportable::AlreadyRecording,
                        ImportError::Unrecognised { .. } => NotImportable::Unrecognised,
                        other => panic!("{}: {other}", path.display()),
                    },
                    "{}",
                    path.display()
                ),
                (Err(why), Ok(_)) => panic!("{}: imported, not {why:?}", path.display()),
            }
        }
        // The walk reached every importer.
        for f in [
            "har",
            "cassette",
            "jsonl",
            "test-proxy",
            "raw",
            "base64",
            "json-capture",
            "httprr",
        ] {
            assert!(imported_formats.contains(f), "{f}: {imported_formats:?}");
        }
    }

    #[test]
    fn recordings_and_journals() {
        assert_eq!(kind("x.txt", b"(version: 1)"), Kind::Recording);
        assert_eq!(kind("x", b"\xEF\xBB\xBF  Recording(x)"), Kind::Recording);
        assert_eq!(kind("x.ron", b"data: {}"), Kind::Recording);
        assert_eq!(kind("x.partial", b""), Kind::Recording);
        assert_eq!(kind("x.sse", b"# sse-replay journal v1\n"), Kind::Journal);
        assert_eq!(
            kind("x.ron", b"\xEF\xBB\xBF# sse-replay journal v9\n"),
            Kind::Journal
        );
        // Indented, it is not a journal's first line: the recording reader says what is wrong.
        assert_eq!(kind("x", b"  # sse-replay journal v1\n"), Kind::Recording);
    }

    #[test]
    fn bodies() {
        assert_eq!(kind("x", b" \r\n"), Kind::Body(BodyForm::Blank));
        assert_eq!(
            kind("x", b": hi\n\ndata: {}\n\n"),
            Kind::Body(BodyForm::Sse)
        );
        assert_eq!(kind("x", b"event: a\n"), Kind::Body(BodyForm::Sse));
        assert_eq!(kind("x", b"{\"a\":1}\n"), Kind::Body(BodyForm::Document));
        assert_eq!(
            kind("x", b"{\"a\":1}\n{\"a\":2}\n"),
            Kind::Body(BodyForm::JsonLines)
        );
        assert_eq!(kind("x", b"{\"a\":"), Kind::Body(BodyForm::Document));
        assert_eq!(kind("x", b"{nope}\n"), Kind::Body(BodyForm::Document));
        assert_eq!(
            kind("x", b"{\"a\":1}\r\n\r\n{\"b\":2}"),
            Kind::Body(BodyForm::JsonLines)
        );
        assert_eq!(kind("x", b"id: 1\n"), Kind::Body(BodyForm::Sse));
        assert_eq!(kind("x", b":ok\n"), Kind::Body(BodyForm::Sse));
        assert_eq!(kind("x", b"<html>"), Kind::Body(BodyForm::Unrecognised));
        assert_eq!(kind("x", b"\0\0\0"), Kind::Body(BodyForm::Unrecognised));
    }

    #[test]
    fn captures() {
        assert_eq!(
            kind("x.har", b"data: {}"),
            Kind::Capture(CaptureFormat::Har)
        );
        assert_eq!(
            kind("x", b"{\"log\":{}}"),
            Kind::Capture(CaptureFormat::Har)
        );
        assert_eq!(
            kind("x", b"{\n  \"log\": {\"entries\": []}}"),
            Kind::Capture(CaptureFormat::Har)
        );
        assert_eq!(
            kind("x.YML", b"a: 1"),
            Kind::Capture(CaptureFormat::Cassette)
        );
        assert_eq!(
            kind("x", b"interactions:\n- a"),
            Kind::Capture(CaptureFormat::Cassette)
        );
        // Ruby's vcr gem; an httprr trace, whose responses hold `data:` lines.
        assert_eq!(
            kind("x", b"---\nhttp_interactions:\n- request:"),
            Kind::Capture(CaptureFormat::Cassette)
        );
        assert_eq!(
            kind(
                "x",
                b"httprr trace v1\n3 30\nGETHTTP/1.1 200 OK\r\n\r\ndata: x\n\n"
            ),
            Kind::Capture(CaptureFormat::Httprr)
        );
        assert_eq!(
            kind("x.jsonl", b"{}"),
            Kind::Capture(CaptureFormat::JsonLines)
        );
        assert_eq!(
            kind("x.ndjson", b"data: x"),
            Kind::Capture(CaptureFormat::JsonLines)
        );
        // Blank before the name's capture format: an empty `.har` is empty, not a broken HAR.
        assert_eq!(kind("x.har", b""), Kind::Body(BodyForm::Blank));
    }

    #[test]
    fn traces_json_arrays_and_base64() {
        assert!(is_httprr_trace(b"httprr trace v1\n12 34\n"));
        assert!(is_httprr_trace(b"\xEF\xBB\xBFhttprr trace v1\r\n"));
        assert!(!is_httprr_trace(b"httprr trace v10\n"));
        assert!(!is_httprr_trace(b"data: httprr trace v1\n"));
        assert!(crate::json_array::looks_like_json_array(
            b"\xEF\xBB\xBF \n[{"
        ));
        assert!(crate::json_array::looks_like_json_array(b"["));
        assert!(!crate::json_array::looks_like_json_array(b"{\"a\":1}"));
        assert!(!crate::json_array::looks_like_json_array(b"data: [DONE]"));
        assert!(!crate::json_array::looks_like_json_array(b"   "));
        assert_eq!(
            crate::wire::base64::decode("ZGF0YTogW0RPTkVdCgo=").as_deref(),
            Ok(b"data: [DONE]\n\n".as_slice())
        );
        assert_eq!(
            crate::wire::base64::decode("YWI").as_deref(),
            Ok(b"ab".as_slice())
        );
        // URL-safe alphabet, whitespace, and anything after the padding.
        assert_eq!(
            crate::wire::base64::decode("-_-_\n-_8=\r\n").as_deref(),
            Ok(b"\xfb\xff\xbf\xfb\xff".as_slice())
        );
        assert_eq!(
            crate::wire::base64::decode("+/+/").as_deref(),
            Ok(b"\xfb\xff\xbf".as_slice())
        );
        assert_eq!(
            crate::wire::base64::decode("YQ==ignored").as_deref(),
            Ok(b"a".as_slice())
        );
        assert_eq!(
            crate::wire::base64::decode("a$b"),
            Err("invalid base64 character '$'".to_owned())
        );
    }

    #[test]
    fn stream_bodies_chunk_arrays_and_types() {
        let gemini = br#" [{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}]"#;
        assert!(is_stream_body(b"data: 1\n\n"));
        assert!(is_stream_body(b"\n: ping\n"));
        assert!(is_stream_body(b"{\"a\":1}\n{\"a\":2}\n"));
        assert!(is_stream_body(&crate::aws_eventstream::event_frame(
            "x", b"{}"
        )));
        assert!(is_stream_body(gemini));
        assert!(!is_stream_body(b"[1, 2]"));
        assert!(!is_stream_body(b"{\"a\":1}"));
        assert!(!is_stream_body(b"<html>\ndata: x"));
        // However the pieces are cut, a byte order mark and blank pieces first.
        for cut in 0..gemini.len() {
            let (a, b) = gemini.split_at(cut);
            assert!(
                is_chunk_array([b"\xEF".as_slice(), b"\xBB\xBF", b"", a, b]),
                "{cut}"
            );
            assert!(!is_chunk_array([b" ".as_slice(), b"{", a]), "{cut}");
        }
        assert!(!is_chunk_array([b"  ".as_slice()]));
        assert_eq!(
            stream_type("text/event-stream; charset=utf-8"),
            Some(Framing::Sse)
        );
        assert_eq!(
            stream_type(" Application/X-NDJSON"),
            Some(Framing::JsonLines)
        );
        assert_eq!(
            stream_type("application/vnd.amazon.eventstream"),
            Some(Framing::AwsEventStream)
        );
        assert_eq!(stream_type("application/json"), None);
        assert!(is_json_type("Application/JSON; charset=utf-8"));
        assert!(is_json_type("application/problem+json"));
        assert!(!is_json_type("text/event-stream"));
        assert!(may_open_document(b"\xEF\xBB\xBF  {"));
        assert!(may_open_document(b"  "));
        let mut frame = crate::aws_eventstream::event_frame("x", b"{}");
        frame[8] ^= 0xff;
        assert_eq!(appearance(&frame), Appearance::AwsFrames);
        assert_eq!(appearance(b"\0\x01abc"), Appearance::Binary);
        assert_eq!(appearance(b"<html>\n\t"), Appearance::Text);
        assert!(!may_open_document(b"data: {"));
        assert!(may_be_one_document(b"{\"a\": [1,"));
        assert!(!may_be_one_document(b"{}\n{}"));
        assert!(first_document_unfinished(b"{\"a\": [1,"));
        assert!(!first_document_unfinished(b"{}"));
        assert!(!first_document_unfinished(b"{nope"));
    }
}
