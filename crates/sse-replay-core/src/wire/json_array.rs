//! A push framer for a body that is one JSON array streamed element by element: Gemini's
//! `streamGenerateContent` without `alt=sse` (the REST default: `[{…}\n,\r\n{…}\n]`), and the
//! snapshot dumps test suites keep (`[ {chunk}, {chunk}, … ]`, pretty-printed). Each top-level
//! element is one event, with its byte span; the brackets, commas and whitespace between elements
//! belong to no event.
//!
//! Like the SSE parser it does no I/O and any chunking of the same bytes gives the same events: the
//! state is per byte (depth, inside a string, after a backslash), and an element's bytes are kept
//! only until it is complete, at most `max_event_bytes` of them. It is lenient where a reader can
//! still tell what was meant (a missing comma, a stray comma, a second array after the first, a
//! body that is only elements with no brackets): the elements are delivered, and a dialect reports
//! any that is not the JSON it expects.

use std::ops::Range;

use crate::framing::Framed;
use crate::limits::EventLimit;
use crate::sse::{EventFlags, Overflow, Unterminated};

/// The body starts like a JSON array: the first byte that is not whitespace (after a UTF-8 byte
/// order mark) is `[`. No SSE body (`data:`, `event:`, `:`) or JSON-lines body (`{`) does.
pub fn looks_like_json_array(prefix: &[u8]) -> bool {
    let p = crate::text::strip_bom(prefix);
    p.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// Where the framer is between elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Nothing but whitespace (and a byte order mark) so far.
    Start,
    /// After `[` or `,`: an element or `]` comes next.
    ExpectValue,
    /// Inside an element.
    InValue(Kind),
    /// After an element: `,` or `]` comes next.
    AfterValue,
    /// After the closing `]`.
    Closed,
}

/// What kind of element is in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// An object or array: ends when its brackets balance.
    Container,
    /// A string: ends at its closing quote.
    Str,
    /// A number or literal: ends before a comma, bracket or whitespace.
    Scalar,
}

/// The push framer. See the module documentation.
#[derive(Debug)]
pub struct JsonArrayFramer {
    state: State,
    /// Stream offset of the next byte fed.
    offset: u64,
    /// The element in progress (its bytes so far) and where it started.
    elem: Vec<u8>,
    elem_start: u64,
    depth: u64,
    in_string: bool,
    escape: bool,
    /// Elements delivered.
    elements: u64,
    /// Longest element accepted; `u64::MAX` = no limit.
    max: u64,
    overflow: Option<Overflow>,
    /// Scratch for an element that is not valid UTF-8.
    text: String,
    /// An opening `[` was seen (a body of bare elements has none).
    opened: bool,
}

impl Default for JsonArrayFramer {
    fn default() -> Self {
        Self::with_max_event_bytes(EventLimit::UNBOUNDED)
    }
}

impl JsonArrayFramer {
    /// A framer that stops at the first element longer than `limit` bytes (see [`Self::overflow`]).
    pub fn with_max_event_bytes(limit: EventLimit) -> Self {
        Self {
            state: State::Start,
            offset: 0,
            elem: Vec::new(),
            elem_start: 0,
            depth: 0,
            in_string: false,
            escape: false,
            elements: 0,
            max: limit.bytes(),
            overflow: None,
            text: String::new(),
            opened: false,
        }
    }

    /// The element that went past the limit, if one did. Nothing is delivered after it.
    pub fn overflow(&self) -> Option<Overflow> {
        self.overflow
    }

    /// Elements delivered so far.
    pub fn elements(&self) -> u64 {
        self.elements
    }

    /// The array was opened with `[` but its `]` has not come (yet).
    pub fn unclosed(&self) -> bool {
        self.opened && self.state != State::Closed
    }

    /// Feed bytes; `sink` gets one event per complete top-level element.
    pub fn feed(&mut self, input: &[u8], sink: &mut impl FnMut(Framed<'_>)) {
        let base = self.offset;
        self.offset += input.len() as u64;
        if self.overflow.is_some() {
            return;
        }
        // Start (within `input`) of the part of the current element not yet copied to `elem`.
        let mut seg: Option<usize> = matches!(self.state, State::InValue(_)).then_some(0);
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.state {
                State::Start => {
                    if b.is_ascii_whitespace() || matches!(b, 0xEF | 0xBB | 0xBF) {
                        i += 1;
                    } else if b == b'[' {
                        self.opened = true;
                        self.state = State::ExpectValue;
                        i += 1;
                    } else {
                        // Not an array: the elements stand on their own.
                        self.state = State::ExpectValue;
                    }
                }
                State::ExpectValue | State::AfterValue | State::Closed => {
                    if b.is_ascii_whitespace() {
                        i += 1;
                    } else if b == b',' && self.state != State::Closed {
                        self.state = State::ExpectValue;
                        i += 1;
                    } else if b == b']' && self.state != State::Closed {
                        self.state = State::Closed;
                        i += 1;
                    } else if b == b'[' && self.state == State::Closed {
                        // A second array after the first: its elements follow on.
                        self.state = State::ExpectValue;
                        i += 1;
                    } else {
                        let kind = match b {
                            b'{' | b'[' => Kind::Container,
                            b'"' => Kind::Str,
                            _ => Kind::Scalar,
                        };
                        self.state = State::InValue(kind);
                        self.elem.clear();
                        self.elem_start = base + i as u64;
                        self.depth = 0;
                        self.in_string = false;
                        self.escape = false;
                        seg = Some(i);
                        if kind == Kind::Scalar {
                            // A scalar's first byte is part of it; the others are checked below.
                            i += 1;
                        }
                    }
                }
                State::InValue(kind) => {
                    let ends_at = match kind {
                        Kind::Scalar => {
                            if b.is_ascii_whitespace() || matches!(b, b',' | b']' | b'[' | b'{') {
                                Some(i)
                            } else {
                                i += 1;
                                None
                            }
                        }
                        Kind::Str | Kind::Container => {
                            let end = self.scan(input, &mut i, kind == Kind::Str);
                            end.then_some(i)
                        }
                    };
                    if let Some(end) = ends_at {
                        let start = seg.take().unwrap_or(0);
                        if !self.take(&input[start..end]) {
                            return;
                        }
                        self.emit(base + end as u64, sink);
                        self.state = State::AfterValue;
                    }
                }
            }
        }
        if let Some(start) = seg {
            let _ = self.take(&input[start..]);
        }
    }

    /// Scan string/container bytes from `*i`; `true` when the element ended (then `*i` is just
    /// past its last byte). `top_string`: the element itself is a string.
    fn scan(&mut self, input: &[u8], i: &mut usize, top_string: bool) -> bool {
        if top_string && self.depth == 0 && !self.in_string {
            // The opening quote of a top-level string.
            self.in_string = true;
            self.depth = 1;
            *i += 1;
        }
        while *i < input.len() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                    *i += 1;
                    continue;
                }
                // Jump to the next quote or backslash.
                match memchr::memchr2(b'"', b'\\', &input[*i..]) {
                    None => {
                        *i = input.len();
                        return false;
                    }
                    Some(n) => {
                        *i += n;
                        if input[*i] == b'\\' {
                            self.escape = true;
                        } else {
                            self.in_string = false;
                            if top_string {
                                *i += 1;
                                return true;
                            }
                        }
                        *i += 1;
                    }
                }
                continue;
            }
            let b = input[*i];
            *i += 1;
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Append a piece of the element; `false` (and the framer stops) when it grew past the limit.
    fn take(&mut self, piece: &[u8]) -> bool {
        if (self.elem.len() + piece.len()) as u64 > self.max {
            self.overflow = Some(Overflow {
                start: self.elem_start,
                limit: self.max,
            });
            self.elem = Vec::new();
            self.state = State::Closed;
            return false;
        }
        self.elem.extend_from_slice(piece);
        true
    }

    fn emit(&mut self, end: u64, sink: &mut impl FnMut(Framed<'_>)) {
        self.elements += 1;
        let mut flags = EventFlags::default();
        let elem = std::mem::take(&mut self.elem);
        let data = match std::str::from_utf8(&elem) {
            Ok(s) => s,
            Err(_) => {
                flags.lossy_utf8 = true;
                self.text.clear();
                self.text.push_str(&String::from_utf8_lossy(&elem));
                self.text.as_str()
            }
        };
        sink(Framed::Event {
            event_type: "message",
            data,
            span: self.elem_start..end,
            flags,
        });
        self.elem = elem;
        self.elem.clear();
    }

    /// End of input: a number or literal running to the end is complete; an object, array or
    /// string cut short is returned as unterminated (discarded, like an SSE event without its blank
    /// line).
    pub fn finish(&mut self, sink: &mut impl FnMut(Framed<'_>)) -> Option<Unterminated> {
        if self.overflow.is_some() {
            return None;
        }
        match self.state {
            State::InValue(Kind::Scalar) => {
                self.emit(self.offset, sink);
                self.state = State::AfterValue;
                None
            }
            State::InValue(_) => {
                let elem = std::mem::take(&mut self.elem);
                self.state = State::AfterValue;
                let keep = elem.len().min(4096);
                Some(Unterminated {
                    span: self.elem_start..self.offset,
                    text: String::from_utf8_lossy(&elem[..keep]).into_owned(),
                    had_data: true,
                })
            }
            _ => None,
        }
    }

    /// The byte range of the element in progress, if any (for tests and the raw view).
    pub fn pending(&self) -> Option<Range<u64>> {
        matches!(self.state, State::InValue(_)).then(|| self.elem_start..self.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Item = (String, Range<u64>);

    fn run(
        body: &[u8],
        cuts: &[usize],
        limit: u64,
    ) -> (Vec<Item>, Option<Unterminated>, Option<Overflow>) {
        let mut f = JsonArrayFramer::with_max_event_bytes(EventLimit::new(limit));
        let mut out = Vec::new();
        let mut sink = |i: Framed<'_>| {
            if let Framed::Event { data, span, .. } = i {
                out.push((data.to_owned(), span));
            }
        };
        for piece in crate::chunking::split(body, cuts) {
            f.feed(piece, &mut sink);
        }
        let u = f.finish(&mut sink);
        (out, u, f.overflow())
    }

    fn same(
        a: &(Vec<Item>, Option<Unterminated>, Option<Overflow>),
        b: &(Vec<Item>, Option<Unterminated>, Option<Overflow>),
    ) -> bool {
        a.0 == b.0
            && a.2 == b.2
            && a.1.as_ref().map(|u| (u.span.clone(), u.text.clone()))
                == b.1.as_ref().map(|u| (u.span.clone(), u.text.clone()))
    }

    const GEMINI: &[u8] = b"[{\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"a]}\\\"\"}]}}]}\n,\r\n{\"candidates\": [{\"finishReason\": \"STOP\"}]}\n]";

    #[test]
    fn elements_and_spans() {
        let (items, u, o) = run(GEMINI, &[], u64::MAX);
        assert!(u.is_none() && o.is_none());
        assert_eq!(items.len(), 2);
        assert!(items[0].0.starts_with("{\"candidates\"") && items[0].0.ends_with("]}"));
        assert_eq!(
            &GEMINI[items[0].1.start as usize..items[0].1.end as usize],
            items[0].0.as_bytes()
        );
        assert_eq!(
            &GEMINI[items[1].1.start as usize..items[1].1.end as usize],
            items[1].0.as_bytes()
        );
        assert!(serde_json::from_str::<serde_json::Value>(&items[0].0).is_ok());
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bodies: [&[u8]; 5] = [
            GEMINI,
            "\u{feff}[\n  {\"type\": \"start\"},\n  {\"type\": \"text-delta\", \"delta\": \"深圳\\\\\"}\n]\n".as_bytes(),
            b"[1, -2.5e3 ,true,null,\"x,]\",[1,[2]],{}]",
            b"[{\"a\":1}{\"b\":2},,]  [{\"c\":3}]",
            b"[{\"a\":\"cut",
        ];
        for body in bodies {
            let whole = run(body, &[], u64::MAX);
            for cut in 0..=body.len() {
                assert!(
                    same(&run(body, &[cut], u64::MAX), &whole),
                    "{body:?} cut at {cut}"
                );
            }
            let bytewise: Vec<usize> = (1..body.len()).collect();
            assert!(same(&run(body, &bytewise, u64::MAX), &whole));
        }
    }

    #[test]
    fn lenient_forms() {
        let (items, _, _) = run(b"[1, -2.5e3 ,true,null,\"x,]\",[1,[2]],{}]", &[], u64::MAX);
        let data: Vec<&str> = items.iter().map(|i| i.0.as_str()).collect();
        assert_eq!(
            data,
            ["1", "-2.5e3", "true", "null", "\"x,]\"", "[1,[2]]", "{}"]
        );
        let (items, _, _) = run(b"[{\"a\":1}{\"b\":2},,]  [{\"c\":3}]", &[], u64::MAX);
        assert_eq!(items.len(), 3, "missing comma, stray comma, a second array");
        let (items, u, _) = run(b"[{\"a\":\"cut", &[], u64::MAX);
        assert!(items.is_empty());
        let u = u.expect("unterminated");
        assert_eq!(
            (u.span, u.text.as_str(), u.had_data),
            (1..10, "{\"a\":\"cut", true)
        );
    }

    #[test]
    fn an_element_over_the_limit_stops_the_framer() {
        let body = b"[{\"a\":1},\n{\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\":2},{\"c\":3}]";
        for cut in 0..=body.len() {
            let (items, _, o) = run(body, &[cut], 16);
            assert_eq!(items.len(), 1, "cut at {cut}");
            assert_eq!(o.map(|o| o.start), Some(10), "cut at {cut}");
        }
    }

    #[test]
    fn random_splits_of_random_arrays() {
        let pieces: [&[u8]; 12] = [
            b"[",
            b"]",
            b",",
            b" ",
            b"\r\n",
            b"{\"k\":\"v\\\"]\"}",
            b"{",
            b"}",
            b"\"",
            b"\\",
            b"12",
            "é".as_bytes(),
        ];
        let mut rng = fastrand::Rng::with_seed(18);
        for _ in 0..3000 {
            let mut body = Vec::new();
            for _ in 0..rng.usize(0..30) {
                body.extend_from_slice(pieces[rng.usize(0..pieces.len())]);
            }
            let limit = rng.u64(1..40);
            let whole = run(&body, &[], limit);
            let cuts = crate::chunking::random_cuts(&mut rng, body.len(), 5);
            assert!(
                same(&run(&body, &cuts, limit), &whole),
                "{body:?} {cuts:?} {limit}"
            );
        }
    }

    #[test]
    fn detection() {
        assert!(looks_like_json_array(b"\xEF\xBB\xBF \n[{"));
        assert!(looks_like_json_array(b"["));
        assert!(!looks_like_json_array(b"{\"a\":1}"));
        assert!(!looks_like_json_array(b"data: [DONE]"));
        assert!(!looks_like_json_array(b"   "));
    }
}
