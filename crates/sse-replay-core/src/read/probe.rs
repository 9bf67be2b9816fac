//! The one way in: every file the CLI and the app read is opened here once, its first block read
//! once ([`crate::input::Peeked`]), and what it is decided once, by [`decide`], into a [`Kind`].
//! The [`Probe`] then hands its reader on (the peeked bytes first, so a pipe or standard input is
//! read exactly once) to the reader for that kind: the `open` module's methods on [`Probe`]
//! (recordings, analysis, `export`'s streaming pass, the app's raw body) and
//! [`crate::import::import`].
//!
//! # Adding a form
//!
//! A new input form (say a JSON array of chunk objects, or binary AWS event-stream frames) is added
//! in one place: a variant of [`Kind`] (or, for a body a server sends, of [`BodyForm`]) and its rule
//! in [`decide`]. Every `match` on the kind is exhaustive, so the compiler then lists each reader
//! that must say what to do with it (`open.rs`, `import/mod.rs`); a body form also needs the
//! framing layer ([`crate::framing`]) to cut it into events.

use std::path::Path;

use crate::dialect::DialectKind;
use crate::input::{InputError, Peeked};
use crate::limits::{EventLimit, InputLimit};

/// `--max-streams` default: far more than a real capture holds, far fewer than a hostile one.
pub const DEFAULT_MAX_STREAMS: usize = 1000;

/// How an input is read: its limits and the choices the caller made. One struct for every reader
/// (`check`, `events`, `export`, `import`, `serve`, `test`, the app).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The longest line or event accepted (`--max-event-bytes`); a longer one stops the read.
    pub max_event_bytes: EventLimit,
    /// `--max-input-bytes`: the most bytes read from an input that has no size (standard input, a
    /// pipe, a FIFO, a device, a socket: what may grow without end), checked by the reader under
    /// it, so every reading path stops at the same byte ([`InputError::InputTooLong`]); and the
    /// most a reader holds of a regular file it reads whole (a recording, a capture, a body kept
    /// in memory), refused before it is read. A regular file read by a streaming pass (`export`,
    /// `check`'s analysis of a body) is read to its size unless [`InputLimit::files`].
    /// Unbounded by default ([`InputLimit::NONE`]: library callers that read files a person
    /// chose, such as the app); the command line passes its own, [`InputLimit::DEFAULT`] unless
    /// told otherwise.
    pub input_limit: InputLimit,
    /// Which stream of a capture holding several, from 1 (`--stream`); `None`: the only one.
    pub stream: Option<usize>,
    /// The dialect, forced (`--dialect`); `None`: detected.
    pub dialect: Option<DialectKind>,
    /// File → Import… in the app: a body is imported as a capture would be (a recording still
    /// opens as one), and errors say why it is not one.
    pub import_only: bool,
    /// Recordings made from one capture at most (`--max-streams`); the rest are counted, not made.
    pub max_streams: usize,
    /// Keep the requests' secrets of an imported capture instead of redacting them
    /// (`--keep-secrets`).
    pub keep_secrets: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            max_event_bytes: EventLimit::DEFAULT,
            input_limit: InputLimit::NONE,
            stream: None,
            dialect: None,
            import_only: false,
            max_streams: DEFAULT_MAX_STREAMS,
            keep_secrets: false,
        }
    }
}

/// What an input is. New forms plug in here (and in [`decide`]): see the module documentation.
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
    /// None of these: read as a stream all the same, and the findings say what it holds.
    Unrecognised,
    // New body forms go here (a JSON array of chunk objects; AWS event-stream frames), with their
    // rule in `decide` and their cutting in `crate::framing`.
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

/// The recording markers are looked for in this much of the head (after a byte order mark and
/// leading whitespace).
const MARKER_BYTES: usize = 256;

/// SSE field names are looked for in this many lines of the head.
const SSE_LINES: usize = 64;

/// A HAR's `"log"` key is looked for this far into a first line that is not JSON by itself.
const HAR_KEY_BYTES: usize = 4096;

/// What an input is, from its name (the extension breaks ties) and its head (the first
/// [`crate::input::PEEK_BYTES`], or all of it). The one decision: every reader asks this, and nothing else looks at content to
/// decide. Rules, in order:
///
/// 1. a journal's first line → [`Kind::Journal`];
/// 2. named `.ron` / `.partial`, or opening like a RON document (`(`, `Recording(`, `#![enable`,
///    `# sse-replay journal`) → [`Kind::Recording`];
/// 3. nothing but whitespace → [`BodyForm::Blank`];
/// 4. named `.har`, `.yaml` / `.yml`, `.jsonl` / `.ndjson`, `.httprr` → that [`Kind::Capture`];
/// 5. binary AWS event stream frames → a body ([`BodyForm::Unrecognised`], framed as frames);
///    a JSON object holding a response's status, headers and body → [`CaptureFormat::JsonCapture`];
///    opening with `{`: a HAR when its first line has a `log` key, a test-proxy session record,
///    else [`BodyForm::Document`] or [`BodyForm::JsonLines`];
/// 6. a line `interactions:` or `http_interactions:` → a cassette; `httprr trace v1` → an httprr
///    trace;
/// 7. a first line that is an SSE field or comment, or a `data:` / `event:` line among the first
///    64 → [`BodyForm::Sse`];
/// 8. base64 text that decodes to a stream → [`CaptureFormat::Base64Body`];
/// 9. else [`BodyForm::Unrecognised`] (a JSON array of chunks among them).
pub fn decide(name: &Path, head: &[u8]) -> Kind {
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
    if crate::import::wrapped::looks_like_json_capture(text) {
        return Kind::Capture(CaptureFormat::JsonCapture);
    }
    if text[0] == b'{' {
        if first_line_is_har(text) {
            return Kind::Capture(CaptureFormat::Har);
        }
        if crate::import::is_test_proxy_session(text) {
            return Kind::Capture(CaptureFormat::TestProxy);
        }
        return Kind::Body(json_form(text));
    }
    if lines(text).any(crate::import::cassette::opens_interactions) {
        return Kind::Capture(CaptureFormat::Cassette);
    }
    if crate::import::httprr::is_trace(text) {
        return Kind::Capture(CaptureFormat::Httprr);
    }
    if is_sse(text) {
        return Kind::Body(BodyForm::Sse);
    }
    if crate::import::wrapped::looks_like_base64_stream(text) {
        return Kind::Capture(CaptureFormat::Base64Body);
    }
    // A JSON array of chunks (Gemini's streamGenerateContent without alt=sse) is among these: the
    // framing layer finds its elements.
    Kind::Body(BodyForm::Unrecognised)
}

/// The head holds nothing but whitespace (after a byte order mark): an empty input.
pub fn is_blank(head: &[u8]) -> bool {
    trim_start(crate::text::strip_bom(head)).is_empty()
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

/// A body opening with `{`: JSON lines when its first two non-blank lines are each a JSON object,
/// else one document (a complete response, a document longer than the head, or broken JSON).
fn json_form(text: &[u8]) -> BodyForm {
    let is_object = |l: &[u8]| {
        l.first() == Some(&b'{') && serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok()
    };
    let mut non_blank = lines(text).filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    if non_blank.next().is_some_and(is_object) && non_blank.next().is_some_and(is_object) {
        BodyForm::JsonLines
    } else {
        BodyForm::Document
    }
}

/// Server-sent events: the first line is a field or a comment (`data:`, `event:`, `id:`, `:`), or
/// a `data:` / `event:` line comes among the first lines.
fn is_sse(text: &[u8]) -> bool {
    let first = lines(text).next().unwrap_or_default();
    [b"data:".as_slice(), b"event:", b"id:", b":"]
        .iter()
        .any(|field| first.starts_with(field))
        || lines(text)
            .take(SSE_LINES)
            .any(|l| l.starts_with(b"data:") || l.starts_with(b"event:"))
}

/// An input, opened once, its head read and its [`Kind`] decided; read it with one of its
/// readers (`open.rs`: [`Probe::recordings`], [`Probe::recording`], [`Probe::analyse`],
/// [`Probe::stream_calls`], [`Probe::raw_body`]; or [`crate::import::import`]).
pub struct Probe {
    pub(crate) kind: Kind,
    pub(crate) input: Peeked,
    pub(crate) options: ReadOptions,
}

/// Open `path` (`-` is standard input), read its head and decide what it is.
pub fn open(path: &Path, options: ReadOptions) -> Result<Probe, InputError> {
    Ok(Probe::new(
        Peeked::open(path, options.input_limit)?,
        options,
    ))
}

impl Probe {
    /// Decide what an already opened input is.
    pub fn new(input: Peeked, options: ReadOptions) -> Self {
        let kind = decide(input.path(), input.head());
        Self {
            kind,
            input,
            options,
        }
    }

    /// What the input is.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// How it is read.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The opened input (its head, its name, its size).
    pub fn input(&self) -> &Peeked {
        &self.input
    }

    /// The opened input, to read it with a reader of one's own.
    pub fn into_input(self) -> Peeked {
        self.input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, head: &[u8]) -> Kind {
        decide(Path::new(name), head)
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
    fn the_head_is_read_back_before_the_rest() {
        use std::io::Read as _;
        let p = Peeked::from_bytes(Path::new("x"), b"data: 1\n\n".to_vec());
        let probe = Probe::new(p, ReadOptions::default());
        assert_eq!(probe.kind(), Kind::Body(BodyForm::Sse));
        let mut all = Vec::new();
        probe.into_input().read_to_end(&mut all).expect("read");
        assert_eq!(all, b"data: 1\n\n");
    }
}
