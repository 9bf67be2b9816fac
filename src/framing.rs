//! Framing: how a body is cut into events before a dialect sees them. Server-Sent Events (the
//! WHATWG parser in [`crate::sse`]) or JSON lines (NDJSON: Ollama, and SDK test fixtures that keep
//! one chunk object per line without `data:`). Auto-detected from the first non-blank byte.

use std::ops::Range;

use crate::sse::{EventFlags, SseItem, SseParser, Unterminated};

/// How events are framed in the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Framing {
    #[serde(rename = "sse")]
    Sse,
    #[serde(rename = "jsonl")]
    JsonLines,
}

impl Framing {
    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Framing::Sse => "sse",
            Framing::JsonLines => "jsonl",
        }
    }
}

/// A framed item: an event, or a comment (SSE only).
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
}

/// A push line splitter for JSON lines: one event per non-blank line, CR stripped.
#[derive(Debug, Default)]
pub struct LineFramer {
    line: Vec<u8>,
    line_start: u64,
    offset: u64,
    text: String,
}

impl LineFramer {
    /// Feed bytes; `sink` gets one event per complete non-blank line.
    pub fn feed(&mut self, mut input: &[u8], sink: &mut impl FnMut(Framed<'_>)) {
        let mut base = self.offset;
        self.offset += input.len() as u64;
        while let Some(i) = memchr::memchr(b'\n', input) {
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
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            Self::emit(&line, self.line_start, self.offset, &mut self.text, sink);
        }
    }
}

/// A framer that decides SSE vs JSON lines from the first non-blank byte, unless told.
// One framer per stream, used on the hot path: boxing the parser would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Framer {
    Undecided(Vec<u8>),
    Sse(SseParser),
    Lines(LineFramer),
}

impl Framer {
    /// A framer; `None` = auto-detect.
    pub fn new(framing: Option<Framing>) -> Self {
        match framing {
            None => Framer::Undecided(Vec::new()),
            Some(Framing::Sse) => Framer::Sse(SseParser::new()),
            Some(Framing::JsonLines) => Framer::Lines(LineFramer::default()),
        }
    }

    /// The framing, once decided.
    pub fn framing(&self) -> Option<Framing> {
        match self {
            Framer::Undecided(_) => None,
            Framer::Sse(_) => Some(Framing::Sse),
            Framer::Lines(_) => Some(Framing::JsonLines),
        }
    }

    /// Sniff: JSON lines when the first non-blank byte (after a BOM) is `{`.
    fn decide(prefix: &[u8]) -> Option<Framing> {
        let p = prefix
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(prefix);
        let first = p.iter().find(|b| !b.is_ascii_whitespace())?;
        Some(if *first == b'{' {
            Framing::JsonLines
        } else {
            Framing::Sse
        })
    }

    /// Feed bytes.
    pub fn feed(&mut self, input: &[u8], sink: &mut impl FnMut(Framed<'_>)) {
        if let Framer::Undecided(buf) = self {
            buf.extend_from_slice(input);
            let Some(f) = Self::decide(buf) else { return };
            let buf = std::mem::take(buf);
            *self = Framer::new(Some(f));
            self.feed(&buf, sink);
            return;
        }
        match self {
            Framer::Sse(p) => p.feed(input, &mut |item| sink(from_sse(item))),
            Framer::Lines(l) => l.feed(input, sink),
            Framer::Undecided(_) => {}
        }
    }

    /// End of input. Returns what an SSE stream left unterminated.
    pub fn finish(&mut self, sink: &mut impl FnMut(Framed<'_>)) -> Option<Unterminated> {
        if let Framer::Undecided(buf) = self {
            let buf = std::mem::take(buf);
            *self = Framer::new(Some(Framing::Sse));
            self.feed(&buf, sink);
        }
        match self {
            Framer::Sse(p) => p.finish(),
            Framer::Lines(l) => {
                l.finish(sink);
                None
            }
            Framer::Undecided(_) => None,
        }
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
