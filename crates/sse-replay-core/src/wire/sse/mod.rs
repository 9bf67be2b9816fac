//! A push parser for the Server-Sent Events wire format, as specified by the WHATWG HTML Living
//! Standard, §9.2.5 "Parsing an event stream" and §9.2.6 "Interpreting an event stream".
//!
//! The parser does no I/O: feed it bytes as they arrive ([`SseParser::feed`]), in any chunking, and
//! it calls back with every event (and comment) that became complete; [`SseParser::finish`] reports
//! what was left pending at end of stream. Feeding the same bytes in any split gives the same items.
//!
//! Deviations from a browser's `EventSource` are deliberate and limited to *reporting*: events keep
//! their byte span in the input, and [`EventFlags`] say which tolerated-but-notable forms an event
//! used (CR or CRLF line endings, `data:` without a space, `data` before `event`, ...), so the layers
//! above can show them as findings. Parsing results themselves follow the spec exactly.

use std::ops::Range;

// "The UTF-8 decode algorithm strips one leading UTF-8 Byte Order Mark (BOM), if any." The parser
// does it incrementally (the three bytes may arrive in separate reads), against the one constant.
use crate::limits::EventLimit;
use crate::text::BOM;

/// Notable forms an event used. All are valid per the spec; the flags exist so they can be reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventFlags {
    /// At least one line of the event ended with CRLF (the blank line that dispatches it does not
    /// count: whether its CR is followed by a LF may not be known yet when the event is dispatched).
    pub crlf: bool,
    /// At least one line of the event ended with a lone CR (the dispatching blank line excluded).
    pub cr: bool,
    /// A `data:` field had no space after the colon.
    pub data_without_space: bool,
    /// The event had more than one `data` line (joined with `\n`).
    pub multi_line_data: bool,
    /// A `data` line came before the `event` line.
    pub data_before_event: bool,
    /// The event had a field this parser ignores (not event/data/id/retry).
    pub unknown_field: bool,
    /// The data was not valid UTF-8 and was decoded with U+FFFD replacements.
    pub lossy_utf8: bool,
    /// The event is a binary AWS event stream frame ([`crate::aws_eventstream`]), not SSE text:
    /// when no event names the dialect, the framing's own (Bedrock ConverseStream) is assumed.
    pub binary_frame: bool,
}

/// A dispatched event, borrowed from the parser's buffers for the duration of the callback.
#[derive(Clone, Debug)]
pub struct Event<'a> {
    /// The event type: the last `event` field's value, or `"message"` when none was given.
    pub event_type: &'a str,
    /// The data buffer with the final `\n` removed (multiple `data` lines joined with `\n`).
    pub data: &'a str,
    /// The last event ID string at dispatch time (persists across events, per spec).
    pub last_event_id: &'a str,
    /// Byte offsets in the whole stream: from the event's first field line to the end of the blank
    /// line that dispatched it. A blank line ending in CRLF ends the span after its CR: the LF may be
    /// in the next read, and spans must not depend on how the bytes were split.
    pub span: Range<u64>,
    /// Tolerated forms the event used.
    pub flags: EventFlags,
}

/// Something the parser recognised.
#[derive(Clone, Debug)]
pub enum SseItem<'a> {
    /// A dispatched event.
    Event(Event<'a>),
    /// A comment line (`:` first), e.g. a keep-alive such as `: OPENROUTER PROCESSING`.
    Comment {
        /// The text after the colon, decoded lossily.
        text: &'a str,
        /// Byte span of the line, without its line ending.
        span: Range<u64>,
    },
}

/// What was pending when the stream ended (all of it discarded, per spec).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unterminated {
    /// Byte span of the discarded text (the incomplete event and/or unterminated last line).
    pub span: Range<u64>,
    /// The discarded text, decoded lossily (at most 4 KiB kept).
    pub text: String,
    /// The discarded event had a `data` field (so an event was lost, not just noise).
    pub had_data: bool,
}

/// A line or an event grew past the parser's limit ([`SseParser::with_max_event_bytes`]). The
/// parser stops there: every item before the offending line was delivered, nothing after it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    /// Stream offset where the offending line (or event) starts.
    pub start: u64,
    /// The limit, in bytes.
    pub limit: u64,
}

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a line or event longer than {} (--max-event-bytes), starting at byte {}",
            crate::text::plural(self.limit, "byte"),
            self.start
        )
    }
}

/// Stream-level counters, for findings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseStats {
    /// A BOM was stripped at the start of the stream.
    pub bom: bool,
    /// Lines by line ending.
    pub lf_lines: u64,
    pub crlf_lines: u64,
    pub cr_lines: u64,
    /// Comment lines seen.
    pub comments: u64,
    /// Events dispatched.
    pub events: u64,
    /// Longest line seen, in bytes.
    pub longest_line: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BomState {
    /// Not enough bytes seen yet to decide.
    Pending,
    Decided,
}

/// The push parser. See the module documentation.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of an unterminated line carried over from previous feeds.
    line: Vec<u8>,
    /// Stream offset of `line[0]`.
    line_start: u64,
    /// Total bytes fed so far.
    offset: u64,
    bom: BomState,
    bom_buf: Vec<u8>,
    /// The previous feed ended with CR: a LF at the start of the next feed belongs to it. `Some(true)`
    /// when that CR ended a non-blank line (whose ending is counted once the next byte is known).
    pending_cr: Option<bool>,
    // --- the event being built (spec: data buffer, event type buffer, last event ID buffer)
    data: Vec<u8>,
    data_lines: u32,
    event_type: Vec<u8>,
    last_event_id_buffer: String,
    last_event_id: String,
    event_start: Option<u64>,
    flags: EventFlags,
    // --- output scratch, reused
    data_text: String,
    type_text: String,
    retry_ms: Option<u64>,
    stats: SseStats,
    /// Longest line, and longest data buffer, accepted; `u64::MAX` = no limit.
    max_event_bytes: u64,
    /// Set once a line or event went past `max_event_bytes`; later input is ignored.
    overflow: Option<Overflow>,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self {
            line: Vec::new(),
            line_start: 0,
            offset: 0,
            bom: BomState::Pending,
            bom_buf: Vec::new(),
            pending_cr: None,
            data: Vec::new(),
            data_lines: 0,
            event_type: Vec::new(),
            last_event_id_buffer: String::new(),
            last_event_id: String::new(),
            event_start: None,
            flags: EventFlags::default(),
            data_text: String::new(),
            type_text: String::new(),
            retry_ms: None,
            stats: SseStats::default(),
            max_event_bytes: u64::MAX,
            overflow: None,
        }
    }

    /// A parser that refuses a line, or an event's data, longer than `limit` bytes: it stops at
    /// the first one and reports it through [`SseParser::overflow`], so an endless line (such as
    /// `/dev/zero`) costs at most `limit` bytes of memory. Whether the limit is hit does not depend
    /// on how the bytes were split.
    pub fn with_max_event_bytes(limit: EventLimit) -> Self {
        Self {
            max_event_bytes: limit.bytes(),
            ..Self::new()
        }
    }

    /// The line or event that went past the limit, if one did. Nothing is parsed after it.
    pub fn overflow(&self) -> Option<Overflow> {
        self.overflow
    }

    /// Record an overflow of the line or event starting at `start`.
    fn overflowed(&mut self, start: u64) {
        self.overflow = Some(Overflow {
            start,
            limit: self.max_event_bytes,
        });
        self.line = Vec::new();
        self.data = Vec::new();
    }

    /// A parser for a reconnection: the last event ID string starts as `id`.
    pub fn with_last_event_id(id: &str) -> Self {
        let mut p = Self::new();
        p.last_event_id_buffer = id.to_owned();
        p.last_event_id = id.to_owned();
        p
    }

    /// The reconnection time set by the last valid `retry` field, if any.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// The last event ID string.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Counters about the stream so far.
    pub fn stats(&self) -> &SseStats {
        &self.stats
    }

    /// Total bytes fed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Feed the next bytes of the stream; `sink` is called for every item that became complete.
    pub fn feed(&mut self, input: &[u8], sink: &mut impl FnMut(SseItem<'_>)) {
        let mut input = input;
        let mut base = self.offset;
        self.offset += input.len() as u64;
        if self.overflow.is_some() {
            return;
        }

        if self.bom == BomState::Pending {
            // Collect up to three bytes to decide whether the stream starts with a BOM.
            let take = (3 - self.bom_buf.len()).min(input.len());
            self.bom_buf.extend_from_slice(&input[..take]);
            input = &input[take..];
            base += take as u64;
            if self.bom_buf.len() < 3 && BOM.starts_with(&self.bom_buf) {
                return; // still undecided
            }
            self.bom = BomState::Decided;
            let prefix = std::mem::take(&mut self.bom_buf);
            if prefix.as_slice() == BOM {
                self.stats.bom = true;
            } else {
                self.feed_lines(&prefix, 0, sink);
            }
        }
        self.feed_lines(input, base, sink);
    }

    /// Split `input` (starting at stream offset `base`) into lines, carrying an unterminated tail.
    fn feed_lines(&mut self, mut input: &[u8], mut base: u64, sink: &mut impl FnMut(SseItem<'_>)) {
        if input.is_empty() || self.overflow.is_some() {
            return;
        }
        if let Some(non_blank) = self.pending_cr.take() {
            if input[0] == b'\n' {
                // The CR that ended the previous feed was the first half of a CRLF.
                self.count_ending(LineEnding::CrLf, non_blank);
                input = &input[1..];
                base += 1;
            } else {
                self.count_ending(LineEnding::Cr, non_blank);
            }
        }
        let limit = self.max_event_bytes;
        while !input.is_empty() {
            let Some(i) = memchr::memchr2(b'\n', b'\r', input) else {
                if self.line.is_empty() {
                    self.line_start = base;
                }
                if (self.line.len() + input.len()) as u64 > limit {
                    self.overflowed(self.line_start);
                    return;
                }
                self.line.extend_from_slice(input);
                return;
            };
            // A line longer than the limit (its ending excluded) stops the parser, wherever the
            // reads split it.
            if (self.line.len() + i) as u64 > limit {
                let start = if self.line.is_empty() {
                    base
                } else {
                    self.line_start
                };
                self.overflowed(start);
                return;
            }
            // Work out the line ending: CRLF, LF or CR (a CR at the very end may become CRLF).
            let (ending_len, ending) = if input[i] == b'\n' {
                (1, Some(LineEnding::Lf))
            } else if i + 1 < input.len() {
                if input[i + 1] == b'\n' {
                    (2, Some(LineEnding::CrLf))
                } else {
                    (1, Some(LineEnding::Cr))
                }
            } else {
                (1, None)
            };
            let line_end = base + (i + ending_len) as u64;
            // Fast path for the overwhelmingly common event, `data: …\n\n` wholly inside this read
            // with nothing pending: dispatch straight from the input, without copying the data into
            // the data buffer. It does exactly what the general path would (see the tests).
            if ending == Some(LineEnding::Lf)
                && input.get(i + 1) == Some(&b'\n')
                && input.starts_with(b"data:")
                && self.line.is_empty()
                && self.event_start.is_none()
                && self.data.is_empty()
                && self.event_type.is_empty()
                && self.flags == EventFlags::default()
                && self.last_event_id == self.last_event_id_buffer
            {
                self.dispatch_single_data(&input[..i], base, line_end + 1, sink);
                input = &input[i + 2..];
                base = line_end + 1;
                continue;
            }
            if self.line.is_empty() {
                self.process_line(&input[..i], base, line_end, ending, sink);
                if self.overflow.is_some() {
                    return;
                }
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&input[..i]);
                let start = self.line_start;
                self.process_line(&line, start, line_end, ending, sink);
                if self.overflow.is_some() {
                    return;
                }
                line.clear();
                self.line = line;
            }
            input = &input[i + ending_len..];
            base = line_end;
        }
    }

    /// Count a line ending; a non-blank line's ending also sets the event's flags.
    fn count_ending(&mut self, ending: LineEnding, non_blank: bool) {
        match ending {
            LineEnding::Lf => self.stats.lf_lines += 1,
            LineEnding::CrLf => {
                self.stats.crlf_lines += 1;
                self.flags.crlf |= non_blank;
            }
            LineEnding::Cr => {
                self.stats.cr_lines += 1;
                self.flags.cr |= non_blank;
            }
        }
    }

    /// The fast path's dispatch: one `data:` line (without its LF) followed by a blank line; the
    /// event spans `start..end`. Same result as processing the two lines one by one.
    fn dispatch_single_data(
        &mut self,
        line: &[u8],
        start: u64,
        end: u64,
        sink: &mut impl FnMut(SseItem<'_>),
    ) {
        self.stats.lf_lines += 2;
        self.stats.longest_line = self.stats.longest_line.max(line.len() as u64);
        self.stats.events += 1;
        let value = &line[5..];
        let (value, had_space) = match value.first() {
            Some(b' ') => (&value[1..], true),
            _ => (value, false),
        };
        let mut flags = EventFlags {
            data_without_space: !had_space && !value.is_empty(),
            ..EventFlags::default()
        };
        let data: &str = match std::str::from_utf8(value) {
            Ok(s) => s,
            Err(_) => {
                flags.lossy_utf8 = true;
                self.data_text.clear();
                self.data_text.push_str(&String::from_utf8_lossy(value));
                &self.data_text
            }
        };
        sink(SseItem::Event(Event {
            event_type: "message",
            data,
            last_event_id: &self.last_event_id,
            span: start..end,
            flags,
        }));
    }

    /// §9.2.6: process one line (without its line ending) that spans `start..end` (with the ending).
    /// `ending` is `None` for a CR at the end of a feed: CR or the first half of a CRLF.
    fn process_line(
        &mut self,
        line: &[u8],
        start: u64,
        end: u64,
        ending: Option<LineEnding>,
        sink: &mut impl FnMut(SseItem<'_>),
    ) {
        match ending {
            Some(e) => self.count_ending(e, !line.is_empty()),
            None => self.pending_cr = Some(!line.is_empty()),
        }
        self.stats.longest_line = self.stats.longest_line.max(line.len() as u64);
        // "If the line is empty (a blank line): Dispatch the event."
        if line.is_empty() {
            // The span ends after the CR of a CRLF, whether or not the LF was fed yet.
            let end = if ending == Some(LineEnding::CrLf) {
                end - 1
            } else {
                end
            };
            self.dispatch(end, sink);
            return;
        }
        // "If the line starts with a U+003A COLON character (:): Ignore the line."
        if line[0] == b':' {
            self.stats.comments += 1;
            let text = String::from_utf8_lossy(&line[1..]);
            sink(SseItem::Comment {
                text: &text,
                span: start..start + line.len() as u64,
            });
            return;
        }
        if self.event_start.is_none() {
            self.event_start = Some(start);
        }
        // "If the line contains a U+003A COLON character: collect the characters on the line before
        // the first colon, and let field be that string; collect the characters on the line after the
        // first colon, and let value be that string. If value starts with a U+0020 SPACE character,
        // remove it from value." Otherwise the whole line is the field name and value is empty.
        let (field, value, had_space) = match memchr::memchr(b':', line) {
            Some(c) => {
                let v = &line[c + 1..];
                match v.first() {
                    Some(b' ') => (&line[..c], &v[1..], true),
                    _ => (&line[..c], v, false),
                }
            }
            None => (line, &line[line.len()..], true),
        };
        match field {
            // "If the field name is "data": Append the field value to the data buffer, then append a
            // single U+000A LINE FEED (LF) character to the data buffer."
            b"data" => {
                if (self.data.len() + value.len()) as u64 > self.max_event_bytes {
                    self.overflowed(self.event_start.unwrap_or(start));
                    return;
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.data_lines += 1;
                if self.data_lines > 1 {
                    self.flags.multi_line_data = true;
                }
                if !had_space && !value.is_empty() {
                    self.flags.data_without_space = true;
                }
            }
            // "If the field name is "event": Set the event type buffer to field value."
            b"event" => {
                self.event_type.clear();
                self.event_type.extend_from_slice(value);
                if self.data_lines > 0 {
                    self.flags.data_before_event = true;
                }
            }
            // "If the field name is "id": If the field value does not contain U+0000 NULL, then set
            // the last event ID buffer to the field value. Otherwise, ignore the field."
            b"id" => {
                if memchr::memchr(0, value).is_none() {
                    self.last_event_id_buffer = String::from_utf8_lossy(value).into_owned();
                }
            }
            // "If the field name is "retry": If the field value consists of only ASCII digits, then
            // interpret the field value as an integer in base ten, and set the event stream's
            // reconnection time to that integer. Otherwise, ignore the field."
            b"retry" => {
                if !value.is_empty() && value.iter().all(u8::is_ascii_digit) {
                    let ms = value.iter().fold(0u64, |acc, d| {
                        acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                    });
                    self.retry_ms = Some(ms);
                }
            }
            // "Otherwise: The field is ignored."
            _ => self.flags.unknown_field = true,
        }
    }

    /// §9.2.6 "dispatch the event".
    fn dispatch(&mut self, end: u64, sink: &mut impl FnMut(SseItem<'_>)) {
        // 1. "Set the last event ID string of the event source to the value of the last event ID buffer."
        if self.last_event_id != self.last_event_id_buffer {
            self.last_event_id.clone_from(&self.last_event_id_buffer);
        }
        let start = self.event_start.take().unwrap_or(end);
        // 2. "If the data buffer is an empty string, set the data buffer and the event type buffer to
        // the empty string and return."
        if self.data.is_empty() {
            self.reset_event();
            return;
        }
        // 3. "If the data buffer's last character is a U+000A LINE FEED (LF) character, then remove
        // the last character from the data buffer."
        if self.data.last() == Some(&b'\n') {
            self.data.pop();
        }
        let mut flags = self.flags;
        let data: &str = match std::str::from_utf8(&self.data) {
            Ok(s) => s,
            Err(_) => {
                flags.lossy_utf8 = true;
                self.data_text.clear();
                self.data_text
                    .push_str(&String::from_utf8_lossy(&self.data));
                &self.data_text
            }
        };
        // 4. "Initialize event's type attribute to "message", ... If the event type buffer has a
        // value other than the empty string, change the type of the newly created event to equal
        // the value of the event type buffer."
        let event_type: &str = if self.event_type.is_empty() {
            "message"
        } else {
            match std::str::from_utf8(&self.event_type) {
                Ok(s) => s,
                Err(_) => {
                    self.type_text.clear();
                    self.type_text
                        .push_str(&String::from_utf8_lossy(&self.event_type));
                    &self.type_text
                }
            }
        };
        self.stats.events += 1;
        sink(SseItem::Event(Event {
            event_type,
            data,
            last_event_id: &self.last_event_id,
            span: start..end,
            flags,
        }));
        // 5. "Set the data buffer and the event type buffer to the empty string."
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.data_lines = 0;
        self.event_type.clear();
        self.flags = EventFlags::default();
        self.event_start = None;
    }

    /// End of stream: "any pending data must be discarded. (If the file ends in the middle of an
    /// event, before the final empty line, the incomplete event is not dispatched.)" Returns what was
    /// discarded, if anything, so it can be reported.
    pub fn finish(&mut self) -> Option<Unterminated> {
        if self.overflow.is_some() {
            // What was cut off is reported as the overflow, not as an unterminated event.
            self.reset_event();
            return None;
        }
        if self.bom == BomState::Pending && !self.bom_buf.is_empty() {
            // A stream shorter than three bytes that looked like the start of a BOM.
            let prefix = std::mem::take(&mut self.bom_buf);
            self.bom = BomState::Decided;
            self.feed_lines(&prefix, 0, &mut |_| {});
        }
        if let Some(non_blank) = self.pending_cr.take() {
            self.count_ending(LineEnding::Cr, non_blank);
        }
        let had_data = !self.data.is_empty();
        let start = match (self.event_start, self.line.is_empty()) {
            (Some(s), _) => Some(s),
            (None, false) => Some(self.line_start),
            (None, true) => None,
        };
        let result = start.map(|start| {
            let keep = (self.offset - start).min(4096) as usize;
            let mut text = String::new();
            if had_data {
                text.push_str("data buffer: ");
                text.push_str(&String::from_utf8_lossy(
                    &self.data[..self.data.len().min(keep)],
                ));
            }
            if !self.line.is_empty() {
                if !text.is_empty() {
                    text.push_str(" | ");
                }
                text.push_str("unterminated line: ");
                text.push_str(&String::from_utf8_lossy(
                    &self.line[..self.line.len().min(keep)],
                ));
            }
            Unterminated {
                span: start..self.offset,
                text,
                had_data: had_data
                    || self.line.starts_with(b"data:")
                    || self.line.as_slice() == b"data",
            }
        });
        self.line.clear();
        self.reset_event();
        result
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineEnding {
    Lf,
    CrLf,
    Cr,
}

/// An owned copy of an event, for tests and small tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedEvent {
    pub event_type: String,
    pub data: String,
    pub last_event_id: String,
    pub span: Range<u64>,
}

impl From<&Event<'_>> for OwnedEvent {
    fn from(e: &Event<'_>) -> Self {
        Self {
            event_type: e.event_type.to_owned(),
            data: e.data.to_owned(),
            last_event_id: e.last_event_id.to_owned(),
            span: e.span.clone(),
        }
    }
}

/// Parse a whole body fed in the given pieces; returns the events (comments dropped).
pub fn parse_all<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Vec<OwnedEvent> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    let mut sink = |item: SseItem<'_>| {
        if let SseItem::Event(e) = item {
            out.push(OwnedEvent::from(&e));
        }
    };
    for piece in pieces {
        p.feed(piece, &mut sink);
    }
    p.finish();
    out
}

#[cfg(test)]
mod tests;
