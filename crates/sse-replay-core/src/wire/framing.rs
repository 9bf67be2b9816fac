//! Framing: how a body is cut into events before a dialect sees them. Server-Sent Events (the
//! WHATWG parser in [`crate::sse`]), JSON lines (NDJSON: Ollama, and SDK test fixtures that keep
//! one chunk object per line without `data:`), one JSON array streamed element by element
//! ([`crate::json_array`]: Gemini without `alt=sse`, and snapshot dumps of chunks), or binary AWS
//! event stream frames (Bedrock, the decoder in [`crate::aws_eventstream`]). Auto-detected from
//! the first bytes, as [`Framer::decide`] decides.

use std::ops::Range;

use crate::aws_eventstream::{self, Decoded};
use crate::findings::FindingKind;
use crate::limits::EventLimit;
pub use crate::sse::Overflow;
use crate::sse::{EventFlags, SseItem, SseParser, Unterminated};

macro_rules! framings {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal $(| $alias:literal)*; )*) => {
        /// How events are framed in the body.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum Framing {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Framing {
            /// Every framing, in the table's order (generated with the enum, so it cannot miss
            /// one).
            pub const ALL: &'static [Framing] = &[$( Framing::$variant, )*];

            /// Stable name.
            pub fn name(self) -> &'static str {
                match self { $( Framing::$variant => $name, )* }
            }

            /// Its other spellings, which [`Framing::from_name`] accepts too.
            pub fn aliases(self) -> &'static [&'static str] {
                match self { $( Framing::$variant => &[$($alias),*], )* }
            }

            /// Parse a name as [`Framing::name`] gives it, or one of its other spellings
            /// (`array` for `json-array`, `ndjson` for `jsonl`), any case.
            pub fn from_name(s: &str) -> Option<Self> {
                match s.trim().to_ascii_lowercase().as_str() {
                    $( $name $(| $alias)* => Some(Framing::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

framings! {
    /// Server-sent events.
    Sse = "sse";
    /// One JSON object per line.
    JsonLines = "jsonl" | "ndjson" | "json-lines";
    /// One JSON array whose top-level elements are the events.
    JsonArray = "json-array" | "array";
    /// Binary AWS event stream frames (`application/vnd.amazon.eventstream`): Bedrock
    /// ConverseStream and InvokeModelWithResponseStream.
    AwsEventStream = "aws-eventstream" | "eventstream";
}

impl Framing {
    /// Human title (the app's header).
    pub fn title(self) -> &'static str {
        match self {
            Framing::Sse => "server-sent events",
            Framing::JsonLines => "JSON lines",
            Framing::JsonArray => "JSON array",
            Framing::AwsEventStream => "AWS event stream",
        }
    }

    /// The `Content-Type` a server sends a body of this framing with (serve, the client-test
    /// harness and the generated corpus all answer with it when a recording has none).
    pub fn content_type(self) -> &'static str {
        match self {
            Framing::Sse => "text/event-stream",
            Framing::JsonLines => "application/x-ndjson",
            Framing::JsonArray => "application/json",
            Framing::AwsEventStream => aws_eventstream::CONTENT_TYPE,
        }
    }

    /// Whether events are text (SSE, JSON lines, a JSON array), so line endings, split lines and
    /// split characters mean something; binary frames have none of these.
    pub fn is_text(self) -> bool {
        !matches!(self, Framing::AwsEventStream)
    }
}

/// A framed item: an event, a comment (SSE only), or a corrupt stretch (binary frames only).
#[derive(Clone, Debug)]
pub enum Framed<'a> {
    Event {
        event_type: &'a str,
        data: &'a str,
        span: Range<u64>,
        flags: EventFlags,
    },
    Comment {
        text: &'a str,
        span: Range<u64>,
    },
    /// Bytes that should have been a frame and are not (a CRC mismatch, an impossible length,
    /// garbage between frames: [`FindingKind::FrameCorrupt`]), or a whole frame whose payload
    /// cannot be read ([`FindingKind::UnreadablePayload`]): skipped, with what was wrong and
    /// where, and the finding it is.
    Corrupt {
        span: Range<u64>,
        message: &'a str,
        kind: FindingKind,
    },
}

impl Framed<'_> {
    /// The item's byte span in the body.
    pub fn span(&self) -> &Range<u64> {
        match self {
            Framed::Event { span, .. }
            | Framed::Comment { span, .. }
            | Framed::Corrupt { span, .. } => span,
        }
    }
}

/// A push line splitter for JSON lines: one event per non-blank line, CR stripped.
#[derive(Debug)]
pub struct LineFramer {
    line: Vec<u8>,
    line_start: u64,
    offset: u64,
    text: String,
    /// Longest line accepted (without its LF); `u64::MAX` = no limit.
    max_line: u64,
    overflow: Option<Overflow>,
}

impl Default for LineFramer {
    fn default() -> Self {
        Self::with_max_line(u64::MAX)
    }
}

impl LineFramer {
    /// A splitter that stops at the first line longer than `limit` bytes (see [`Self::overflow`]).
    pub fn with_max_line(limit: u64) -> Self {
        Self {
            line: Vec::new(),
            line_start: 0,
            offset: 0,
            text: String::new(),
            max_line: limit,
            overflow: None,
        }
    }

    /// The line that went past the limit, if one did. Nothing is split after it.
    pub fn overflow(&self) -> Option<Overflow> {
        self.overflow
    }

    fn overflowed(&mut self, start: u64) {
        self.overflow = Some(Overflow {
            start,
            limit: self.max_line,
        });
        self.line = Vec::new();
    }

    /// Feed bytes; `sink` gets one event per complete non-blank line.
    pub fn feed(&mut self, mut input: &[u8], sink: &mut impl FnMut(Framed<'_>)) {
        let mut base = self.offset;
        self.offset += input.len() as u64;
        if self.overflow.is_some() {
            return;
        }
        while let Some(i) = memchr::memchr(b'\n', input) {
            if (self.line.len() + i) as u64 > self.max_line {
                let start = if self.line.is_empty() {
                    base
                } else {
                    self.line_start
                };
                self.overflowed(start);
                return;
            }
            let end = base + i as u64 + 1;
            if self.line.is_empty() {
                Self::emit(&input[..i], base, end, &mut self.text, sink);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&input[..i]);
                Self::emit(&line, self.line_start, end, &mut self.text, sink);
                line.clear();
                self.line = line;
            }
            input = &input[i + 1..];
            base = end;
        }
        if !input.is_empty() {
            if self.line.is_empty() {
                self.line_start = base;
            }
            if (self.line.len() + input.len()) as u64 > self.max_line {
                self.overflowed(self.line_start);
                return;
            }
            self.line.extend_from_slice(input);
        }
    }

    fn emit(
        line: &[u8],
        start: u64,
        end: u64,
        scratch: &mut String,
        sink: &mut impl FnMut(Framed<'_>),
    ) {
        let mut flags = EventFlags::default();
        let line = match line.last() {
            Some(b'\r') => {
                flags.crlf = true;
                &line[..line.len() - 1]
            }
            _ => line,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let data = match std::str::from_utf8(line) {
            Ok(s) => s,
            Err(_) => {
                flags.lossy_utf8 = true;
                scratch.clear();
                scratch.push_str(&String::from_utf8_lossy(line));
                scratch.as_str()
            }
        };
        sink(Framed::Event {
            event_type: "message",
            data,
            span: start..end,
            flags,
        });
    }

    /// End of input: a last line without a newline is still a line (files often end that way).
    pub fn finish(&mut self, sink: &mut impl FnMut(Framed<'_>)) {
        if self.overflow.is_none() && !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            Self::emit(&line, self.line_start, self.offset, &mut self.text, sink);
        }
    }
}

/// Binary AWS event stream frames as events: each frame is one event, named by its
/// `:event-type`, its payload the data. Two envelopes of the protocol are opened here, so every
/// dialect reads them without knowing AWS:
/// - an InvokeModelWithResponseStream `chunk` event's payload `{"bytes": "<base64>"}` holds the
///   model's own event JSON (Anthropic Messages on Bedrock): the decoded JSON is the data;
///   a chunk that cannot be opened (no `bytes`, not base64, not JSON inside) is no event but an
///   [`FindingKind::UnreadablePayload`] at the frame's offset, as is a frame whose
///   `:content-type` says JSON and whose payload is not: the frame arrived whole, so what it
///   carried is lost, never passed on as if it were some other event;
/// - an exception frame (`:message-type: exception`, `:exception-type: throttlingException`…) or
///   an error frame (`:error-code`, `:error-message`) is the protocol's error event: it becomes
///   an `error` event whose data is `{"error": {"type": …, "message": …}}`, which every dialect
///   reads as a provider error.
#[derive(Debug)]
pub struct AwsFramer {
    decoder: aws_eventstream::Decoder,
    event_type: String,
    data: String,
    message: String,
}

impl AwsFramer {
    /// A framer that stops at the first frame longer than `limit` bytes.
    pub fn with_max_frame_bytes(limit: u64) -> Self {
        Self {
            decoder: aws_eventstream::Decoder::with_max_frame_bytes(limit),
            event_type: String::new(),
            data: String::new(),
            message: String::new(),
        }
    }

    /// The frame that went past the limit, if one did.
    pub fn overflow(&self) -> Option<Overflow> {
        self.decoder.overflow()
    }

    /// Feed bytes; `sink` gets one event per complete frame.
    pub fn feed(&mut self, input: &[u8], sink: &mut impl FnMut(Framed<'_>)) {
        let (event_type, data, message) = (&mut self.event_type, &mut self.data, &mut self.message);
        self.decoder.feed(input, &mut |d| {
            emit_frame(d, event_type, data, message, sink)
        });
    }

    /// End of input: a frame cut short is returned as the unterminated event (its text says how
    /// much of the frame arrived).
    pub fn finish(&mut self, sink: &mut impl FnMut(Framed<'_>)) -> Option<Unterminated> {
        let (event_type, data, message) = (&mut self.event_type, &mut self.data, &mut self.message);
        let cut = self
            .decoder
            .finish(&mut |d| emit_frame(d, event_type, data, message, sink))?;
        Some(Unterminated {
            span: cut.span.clone(),
            text: cut.to_string(),
            had_data: true,
        })
    }
}

/// One decoded frame (or corrupt stretch) as a framed item; see [`AwsFramer`].
fn emit_frame(
    d: Decoded<'_>,
    event_type: &mut String,
    data: &mut String,
    message: &mut String,
    sink: &mut impl FnMut(Framed<'_>),
) {
    let frame = match d {
        Decoded::Corrupt(e) => {
            message.clear();
            message.push_str(&e.to_string());
            sink(Framed::Corrupt {
                span: e.span,
                message,
                kind: FindingKind::FrameCorrupt,
            });
            return;
        }
        Decoded::Frame(f) => f,
    };
    let mut flags = EventFlags {
        binary_frame: true,
        ..EventFlags::default()
    };
    event_type.clear();
    data.clear();
    match frame.message_type() {
        "exception" | "error" => {
            event_type.push_str("error");
            data.push_str(&error_json(&frame));
        }
        _ => {
            event_type.push_str(frame.header_str(":event-type").unwrap_or("message"));
            let opened = if event_type.as_str() == "chunk" {
                open_chunk(frame.payload).map(std::borrow::Cow::Owned)
            } else {
                json_payload(&frame).map(|()| std::borrow::Cow::Borrowed(frame.payload))
            };
            match opened {
                Ok(bytes) => push_text(&bytes, data, &mut flags),
                Err(why) => {
                    message.clear();
                    message.push_str(&format!(
                        "frame at byte {} ({event_type}): {why}; the event it carried is lost",
                        frame.span.start
                    ));
                    sink(Framed::Corrupt {
                        span: frame.span.clone(),
                        message,
                        kind: FindingKind::UnreadablePayload,
                    });
                    return;
                }
            }
        }
    }
    sink(Framed::Event {
        event_type,
        data,
        span: frame.span.clone(),
        flags,
    });
}

fn push_text(bytes: &[u8], out: &mut String, flags: &mut EventFlags) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.push_str(s),
        Err(_) => {
            flags.lossy_utf8 = true;
            out.push_str(&String::from_utf8_lossy(bytes));
        }
    }
}

/// The model's own event in an InvokeModelWithResponseStream `chunk` payload: the base64 `bytes`
/// of `{"bytes": "…"}` (other fields, such as the `p` padding, ignored). `None` when the payload
/// is not that shape.
pub fn chunk_bytes(payload: &[u8]) -> Option<Vec<u8>> {
    open_chunk(payload).ok()
}

/// A `chunk` payload opened: the model's event JSON, or why it cannot be read (the payload is
/// not JSON, has no string `bytes`, the `bytes` are not base64, or what they hold is not JSON).
fn open_chunk(payload: &[u8]) -> Result<Vec<u8>, String> {
    #[derive(serde::Deserialize)]
    struct Chunk<'a> {
        #[serde(borrow, default)]
        bytes: Option<std::borrow::Cow<'a, str>>,
    }
    let shown = || crate::text::truncate(String::from_utf8_lossy(payload).trim(), 80);
    let c: Chunk<'_> = serde_json::from_slice(payload).map_err(|e| {
        if e.is_data() {
            format!(
                "its chunk payload is not {{\"bytes\": \"<base64>\"}} ({e}): {}",
                shown()
            )
        } else {
            format!("its chunk payload is not JSON ({e}): {}", shown())
        }
    })?;
    let Some(b64) = c.bytes else {
        return Err(format!("its chunk payload has no \"bytes\": {}", shown()));
    };
    let inner = crate::wire::base64::decode(&b64)
        .map_err(|e| format!("its chunk's bytes are not base64 ({e})"))?;
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&inner) {
        return Err(format!(
            "the model event in its chunk is not JSON ({e}): {}",
            crate::text::truncate(String::from_utf8_lossy(&inner).trim(), 80)
        ));
    }
    Ok(inner)
}

/// A frame whose `:content-type` names JSON must carry JSON (an empty payload carries nothing
/// and is let through): why not, if it does not.
fn json_payload(frame: &aws_eventstream::Frame<'_>) -> Result<(), String> {
    let says_json = frame
        .header_str(":content-type")
        .is_some_and(|t| t.to_ascii_lowercase().contains("json"));
    if !says_json || frame.payload.trim_ascii().is_empty() {
        return Ok(());
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(frame.payload)
        .map(|_| ())
        .map_err(|e| {
            format!(
                "its payload is not the JSON its :content-type says ({e}): {}",
                crate::text::truncate(String::from_utf8_lossy(frame.payload).trim(), 80)
            )
        })
}

/// One binary frame for people (`events`, the app's event inspector): `{"headers": {…},
/// "payload": …}` with the payload parsed when it is JSON (else its text), and for an
/// InvokeModelWithResponseStream `chunk`, the model's own event under `"decoded"`. `bytes` is the
/// frame (an event's span), `offset` where it starts in the body.
pub fn aws_frame_json(
    bytes: &[u8],
    offset: u64,
) -> Result<serde_json::Value, aws_eventstream::FrameError> {
    use serde_json::Value;
    let frame = aws_eventstream::decode_frame(bytes, offset)?;
    let shown = |b: &[u8]| -> Value {
        serde_json::from_slice(b)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(b).into_owned()))
    };
    let mut m = serde_json::Map::new();
    m.insert("headers".into(), Value::Object(frame.headers_json()));
    m.insert("payload".into(), shown(frame.payload));
    if frame.header_str(":event-type") == Some("chunk")
        && let Some(inner) = chunk_bytes(frame.payload)
    {
        m.insert("decoded".into(), shown(&inner));
    }
    Ok(Value::Object(m))
}

/// An exception or error frame as the error object every dialect reads: the exception type (or
/// error code) and the payload's `message` (or the `:error-message` header, or the payload).
fn error_json(frame: &aws_eventstream::Frame<'_>) -> String {
    let kind = frame.event_type().unwrap_or(frame.message_type());
    let payload = String::from_utf8_lossy(frame.payload);
    let from_payload = serde_json::from_str::<serde_json::Value>(&payload)
        .ok()
        .and_then(|v| {
            ["message", "Message"]
                .iter()
                .find_map(|k| v.get(*k).and_then(|m| m.as_str()).map(str::to_owned))
        });
    let message = from_payload
        .or_else(|| frame.header_str(":error-message").map(str::to_owned))
        .unwrap_or_else(|| payload.trim().to_owned());
    serde_json::json!({"error": {"type": kind, "message": message}}).to_string()
}

/// A framer that decides SSE vs JSON lines from the first non-blank byte, unless told.
// One framer per stream, used on the hot path: boxing the parser would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Framer {
    /// Only blank bytes so far: the bytes (kept, handed to the framer once decided), the limit
    /// the decided framer will get, and how many of them (after a byte order mark) are known
    /// to be blank, so each byte is looked at once however the input is split.
    Undecided {
        held: Vec<u8>,
        limit: EventLimit,
        blank: usize,
    },
    Sse(SseParser),
    Lines(LineFramer),
    Array(crate::json_array::JsonArrayFramer),
    Aws(AwsFramer),
}

impl Framer {
    /// A framer without a size limit; `None` = auto-detect.
    pub fn new(framing: Option<Framing>) -> Self {
        Self::with_max_event_bytes(framing, EventLimit::UNBOUNDED)
    }

    /// A framer that stops at the first line or event longer than `limit` and reports it
    /// through [`Framer::overflow`] (the events before it are delivered as usual).
    pub fn with_max_event_bytes(framing: Option<Framing>, limit: EventLimit) -> Self {
        match framing {
            None => Framer::Undecided {
                held: Vec::new(),
                limit,
                blank: 0,
            },
            Some(Framing::Sse) => Framer::Sse(SseParser::with_max_event_bytes(limit)),
            Some(Framing::JsonLines) => Framer::Lines(LineFramer::with_max_line(limit.bytes())),
            Some(Framing::JsonArray) => Framer::Array(
                crate::json_array::JsonArrayFramer::with_max_event_bytes(limit),
            ),
            Some(Framing::AwsEventStream) => {
                Framer::Aws(AwsFramer::with_max_frame_bytes(limit.bytes()))
            }
        }
    }

    /// The line or event that went past the limit, if one did: the framer ignores later input.
    pub fn overflow(&self) -> Option<Overflow> {
        match self {
            Framer::Undecided { .. } => None,
            Framer::Sse(p) => p.overflow(),
            Framer::Lines(l) => l.overflow(),
            Framer::Array(a) => a.overflow(),
            Framer::Aws(a) => a.overflow(),
        }
    }

    /// The framing, once decided.
    pub fn framing(&self) -> Option<Framing> {
        match self {
            Framer::Undecided { .. } => None,
            Framer::Sse(_) => Some(Framing::Sse),
            Framer::Lines(_) => Some(Framing::JsonLines),
            Framer::Array(_) => Some(Framing::JsonArray),
            Framer::Aws(_) => Some(Framing::AwsEventStream),
        }
    }

    /// A body whose first byte is `first` may be binary AWS event stream frames (a frame starts
    /// with its length, a control byte no text body starts with); any other is framed as text.
    pub fn may_open_frames(first: u8) -> bool {
        first < 0x20 && !first.is_ascii_whitespace()
    }

    /// Sniff: binary AWS event stream frames when the body opens with a valid prelude
    /// ([`aws_eventstream::looks_like_aws_eventstream`]; a frame starts with its length, a control
    /// byte no text body starts with, so only then are its 12 bytes awaited); JSON lines when the
    /// first non-blank byte (after a BOM) is `{`, a JSON array when it is `[`
    /// ([`crate::json_array::looks_like_json_array`]). More than `limit` blank bytes first: SSE
    /// (only blank lines so far; no JSON line can be that long), decided the same way however the
    /// bytes were split. `blank`: how many bytes (after a byte order mark) an earlier call
    /// found blank; undecided, the error says how many are now.
    pub fn decide(prefix: &[u8], limit: u64, blank: usize) -> Result<Framing, usize> {
        if prefix.first().is_some_and(|&b| Self::may_open_frames(b)) {
            if prefix.len() < aws_eventstream::PRELUDE_BYTES {
                return Err(0);
            }
            if aws_eventstream::looks_like_aws_eventstream(prefix) {
                return Ok(Framing::AwsEventStream);
            }
        }
        let p = crate::text::strip_bom(prefix);
        let from = blank.min(p.len());
        let Some(at) = p[from..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .map(|i| i + from)
        else {
            return if p.len() as u64 > limit {
                Ok(Framing::Sse)
            } else {
                Err(p.len())
            };
        };
        Ok(if at as u64 > limit {
            Framing::Sse
        } else if p[at] == b'{' {
            Framing::JsonLines
        } else if crate::json_array::looks_like_json_array(&p[at..]) {
            Framing::JsonArray
        } else {
            Framing::Sse
        })
    }

    /// Feed bytes.
    pub fn feed(&mut self, input: &[u8], sink: &mut impl FnMut(Framed<'_>)) {
        if let Framer::Undecided { held, limit, blank } = self {
            held.extend_from_slice(input);
            let decided = match Self::decide(held, limit.bytes(), *blank) {
                Ok(decided) => decided,
                Err(known) => {
                    *blank = known;
                    return;
                }
            };
            let (buf, limit) = (std::mem::take(held), *limit);
            *self = Framer::with_max_event_bytes(Some(decided), limit);
            self.feed(&buf, sink);
            return;
        }
        match self {
            Framer::Sse(p) => p.feed(input, &mut |item| sink(from_sse(item))),
            Framer::Lines(l) => l.feed(input, sink),
            Framer::Array(a) => a.feed(input, sink),
            Framer::Aws(a) => a.feed(input, sink),
            Framer::Undecided { .. } => {}
        }
    }

    /// End of input. Returns what an SSE stream left unterminated.
    pub fn finish(&mut self, sink: &mut impl FnMut(Framed<'_>)) -> Option<Unterminated> {
        if let Framer::Undecided { held, limit, .. } = self {
            let (buf, limit) = (std::mem::take(held), *limit);
            *self = Framer::with_max_event_bytes(Some(Framing::Sse), limit);
            self.feed(&buf, sink);
        }
        match self {
            Framer::Sse(p) => p.finish(),
            Framer::Lines(l) => {
                l.finish(sink);
                None
            }
            Framer::Array(a) => a.finish(sink),
            Framer::Aws(a) => a.finish(sink),
            Framer::Undecided { .. } => None,
        }
    }

    /// A JSON array that was opened and not (yet) closed with `]`.
    pub fn unclosed(&self) -> bool {
        matches!(self, Framer::Array(a) if a.unclosed())
    }

    /// The SSE parser's statistics, when SSE.
    pub fn sse_stats(&self) -> Option<&crate::sse::SseStats> {
        match self {
            Framer::Sse(p) => Some(p.stats()),
            _ => None,
        }
    }
}

fn from_sse(item: SseItem<'_>) -> Framed<'_> {
    match item {
        SseItem::Event(e) => Framed::Event {
            event_type: e.event_type,
            data: e.data,
            span: e.span,
            flags: e.flags,
        },
        SseItem::Comment { text, span } => Framed::Comment { text, span },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(
        body: &[u8],
        cut: usize,
        limit: u64,
    ) -> (Vec<String>, Option<Framing>, Option<Overflow>) {
        let mut f = Framer::with_max_event_bytes(None, EventLimit::new(limit));
        let mut out = Vec::new();
        let mut sink = |i: Framed<'_>| {
            if let Framed::Event { data, .. } = i {
                out.push(data.to_owned());
            }
        };
        f.feed(&body[..cut], &mut sink);
        f.feed(&body[cut..], &mut sink);
        f.finish(&mut sink);
        (out, f.framing(), f.overflow())
    }

    #[test]
    fn json_lines_over_the_limit_stop_the_framer() {
        let body = b"{\"a\":1}\n{\"bbbbbbbbbbbbbbbbbbbbbbbbb\":2}\n{\"c\":3}";
        for cut in 0..=body.len() {
            let (events, framing, overflow) = frame(body, cut, 16);
            assert_eq!(events, ["{\"a\":1}"], "cut at {cut}");
            assert_eq!(framing, Some(Framing::JsonLines));
            assert_eq!(overflow.map(|o| o.start), Some(8), "cut at {cut}");
        }
        let (events, _, overflow) = frame(body, 3, 64);
        assert_eq!((events.len(), overflow), (3, None));
        // An unterminated last line over the limit is refused too.
        let (events, _, overflow) = frame(b"{\"a\":1}\n{\"xxxxxxxxxxxxxxxxxxxxxx", 12, 16);
        assert_eq!((events.len(), overflow.map(|o| o.start)), (1, Some(8)));
    }

    #[test]
    fn blank_bytes_past_the_limit_decide_sse_however_they_are_split() {
        let mut body = vec![b' '; 40];
        body.extend_from_slice(b"{\"a\":1}\n");
        for cut in 0..=body.len() {
            // 40 blanks then `{`: past a limit of 20, SSE (and then a 48-byte line: too long).
            let (_, framing, overflow) = frame(&body, cut, 20);
            assert_eq!(framing, Some(Framing::Sse), "cut at {cut}");
            assert_eq!(overflow.map(|o| o.start), Some(0), "cut at {cut}");
            // Within a limit of 100, JSON lines.
            let (events, framing, _) = frame(&body, cut, 100);
            assert_eq!(framing, Some(Framing::JsonLines), "cut at {cut}");
            assert_eq!(events.len(), 1);
        }
    }

    #[test]
    fn binary_frames_are_detected_however_the_prelude_is_split() {
        let frame = |t: &str, p: &str| aws_eventstream::event_frame(t, p.as_bytes());
        let mut body = frame("messageStart", r#"{"role":"assistant"}"#);
        body.extend(frame("messageStop", r#"{"stopReason":"end_turn"}"#));
        body.extend(aws_eventstream::exception_frame(
            "throttlingException",
            br#"{"message":"Too many requests"}"#,
        ));
        let run = |cuts: &[usize]| {
            let mut f = Framer::with_max_event_bytes(None, EventLimit::new(1 << 20));
            let mut out = Vec::new();
            let mut sink = |i: Framed<'_>| {
                if let Framed::Event {
                    event_type,
                    data,
                    span,
                    flags,
                } = i
                {
                    out.push((
                        event_type.to_owned(),
                        data.to_owned(),
                        span,
                        flags.binary_frame,
                    ));
                }
            };
            for piece in crate::chunking::split(&body, cuts) {
                f.feed(piece, &mut sink);
            }
            let u = f.finish(&mut sink);
            (out, u, f.framing())
        };
        let whole = run(&[]);
        assert_eq!(whole.2, Some(Framing::AwsEventStream));
        assert_eq!(whole.1, None);
        let names: Vec<&str> = whole.0.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(names, ["messageStart", "messageStop", "error"]);
        assert!(whole.0.iter().all(|e| e.3));
        // The exception is the error event every dialect reads.
        assert_eq!(
            whole.0[2].1,
            r#"{"error":{"type":"throttlingException","message":"Too many requests"}}"#
        );
        for cut in 0..=body.len() {
            assert_eq!(run(&[cut]), whole, "split at {cut}");
        }
        // A body that starts with a control byte but no valid prelude is read as text.
        let mut f = Framer::new(None);
        f.feed(b"\x01\x02 not a frame at all\n", &mut |_| {});
        assert_eq!(f.framing(), Some(Framing::Sse));
        let mut f = Framer::new(None);
        f.feed(b"\x00\x00\x00", &mut |_| {});
        assert_eq!(f.framing(), None, "waits for a whole prelude");
        f.finish(&mut |_| {});
        assert_eq!(f.framing(), Some(Framing::Sse));
    }

    #[test]
    fn limited_framer_chunking_property_on_random_streams() {
        let pieces: [&[u8]; 8] = [
            b"{\"a\":1}",
            b"data: x",
            b"\n",
            b"\r\n",
            b" ",
            b"  \n",
            b"{",
            b"zz",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let run = |body: &[u8], cuts: &[usize], limit: u64| {
            let mut f = Framer::with_max_event_bytes(None, EventLimit::new(limit));
            let mut out = Vec::new();
            let mut sink = |i: Framed<'_>| match i {
                Framed::Event { data, span, .. } => out.push((data.to_owned(), span)),
                Framed::Comment { text, span } => out.push((format!("#{text}"), span)),
                Framed::Corrupt { message, span, .. } => out.push((format!("!{message}"), span)),
            };
            let mut start = 0;
            for &c in cuts.iter().chain(std::iter::once(&body.len())) {
                f.feed(&body[start..c], &mut sink);
                start = c;
            }
            let u = f.finish(&mut sink);
            (out, u, f.framing(), f.overflow())
        };
        for _ in 0..2000 {
            let mut body = Vec::new();
            for _ in 0..(next() % 30) {
                body.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let limit = 1 + next() % 20;
            let whole = run(&body, &[], limit);
            let bytewise: Vec<usize> = (1..body.len()).collect();
            assert_eq!(run(&body, &bytewise, limit), whole, "{body:?} {limit}");
            let mut cuts = Vec::new();
            let mut at = 0usize;
            loop {
                at += 1 + (next() % 5) as usize;
                if at >= body.len() {
                    break;
                }
                cuts.push(at);
            }
            assert_eq!(run(&body, &cuts, limit), whole, "{body:?} {cuts:?} {limit}");
        }
    }
}
