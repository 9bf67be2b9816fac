//! The AWS event stream framing (`application/vnd.amazon.eventstream`): the binary frames AWS
//! Bedrock streams `ConverseStream` and `InvokeModelWithResponseStream` in (and Transcribe, Kinesis,
//! S3 Select). A push decoder ([`Decoder::feed`] / [`Decoder::finish`]), cut anywhere, like the
//! SSE parser; it knows frames and headers, never JSON or dialects.
//!
//! One frame ("message" in AWS's words), all integers big-endian:
//!
//! ```text
//! total length u32 | headers length u32 | prelude CRC32 u32      ← the 12-byte prelude
//! headers (headers length bytes)                                ← name u8 len + name, type u8, value
//! payload (total − headers − 16 bytes)
//! message CRC32 u32                                             ← over everything before it
//! ```
//!
//! Both checksums are CRC-32/ISO-HDLC (zlib's). Header value types: 0 bool true, 1 bool false,
//! 2 byte, 3 short, 4 int, 5 long, 6 byte array (u16 length), 7 string (u16 length, UTF-8),
//! 8 timestamp (i64 milliseconds since the epoch), 9 UUID (16 bytes).
//!
//! What goes wrong is reported with its byte offset and never stops the decoder where it can go
//! on: malformed headers under good CRCs skip that one frame; a prelude that does not check out
//! (bad CRC, an impossible length, bytes that are not a frame) or a message CRC mismatch is
//! skipped byte by byte until the next 12 bytes that form a valid prelude (a 32-bit check, so a
//! false start is a one-in-four-billion event), and the skipped range is one
//! [`Decoded::Corrupt`]. Scanning rather than trusting the bad frame's length also finds the next
//! frame when a frame was cut short in the middle of a stream; the frames found inside the bytes a
//! bad frame claimed are checked from prefix CRCs (`crc.rs`), so decoding stays linear in the
//! stream however the claims nest. A frame longer
//! than the limit stops the decoder ([`Overflow`], as for SSE), so memory stays bounded; a frame
//! cut short by the end of input is [`Decoder::finish`]'s [`Cut`].

mod crc;
#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::Range;

use crate::sse::Overflow;

/// Bytes in a prelude: total length, headers length, prelude CRC.
pub const PRELUDE_BYTES: usize = 12;
/// The smallest frame: a prelude and a message CRC, no headers, no payload.
pub const MIN_FRAME_BYTES: usize = PRELUDE_BYTES + 4;
/// The `Content-Type` of an AWS event stream response.
pub const CONTENT_TYPE: &str = "application/vnd.amazon.eventstream";

/// CRC-32/ISO-HDLC, the checksum of both the prelude and the message.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Whether `prefix` starts with a valid AWS event stream prelude: a total length of at least 16
/// bytes, a headers length that fits in it, and the prelude CRC32 of the first eight bytes. The
/// one test of "is this a binary AWS event stream" (the framer's sniffing, the importers, serve's
/// content type all ask it); false when fewer than 12 bytes are given.
pub fn looks_like_aws_eventstream(prefix: &[u8]) -> bool {
    prelude(prefix).is_ok()
}

/// A checked prelude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prelude {
    total: u32,
    headers: u32,
}

/// Why 12 bytes are not a prelude (`None`: fewer than 12 bytes).
fn prelude(b: &[u8]) -> Result<Prelude, Option<FrameFault>> {
    let (Some(total), Some(headers), Some(stated)) = (be32(b, 0), be32(b, 4), be32(b, 8)) else {
        return Err(None);
    };
    let computed = crc32(&b[..8]);
    if stated != computed {
        return Err(Some(FrameFault::PreludeCrc { stated, computed }));
    }
    if (total as usize) < MIN_FRAME_BYTES || headers as u64 > total as u64 - MIN_FRAME_BYTES as u64
    {
        return Err(Some(FrameFault::Length { total, headers }));
    }
    Ok(Prelude { total, headers })
}

/// [`prelude`]`(b).is_ok()`.
fn is_prelude(b: &[u8]) -> bool {
    prelude(b).is_ok()
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

// ---------------------------------------------------------------------------------------------
// Headers

/// A header's value, borrowed from the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderValue<'a> {
    /// Types 0 (true) and 1 (false).
    Bool(bool),
    /// Type 2.
    Byte(i8),
    /// Type 3.
    Short(i16),
    /// Type 4.
    Int(i32),
    /// Type 5.
    Long(i64),
    /// Type 6.
    Bytes(&'a [u8]),
    /// Type 7.
    String(&'a str),
    /// Type 8: milliseconds since the Unix epoch.
    Timestamp(i64),
    /// Type 9.
    Uuid([u8; 16]),
}

impl HeaderValue<'_> {
    /// The wire type number.
    pub fn type_id(&self) -> u8 {
        match self {
            HeaderValue::Bool(true) => 0,
            HeaderValue::Bool(false) => 1,
            HeaderValue::Byte(_) => 2,
            HeaderValue::Short(_) => 3,
            HeaderValue::Int(_) => 4,
            HeaderValue::Long(_) => 5,
            HeaderValue::Bytes(_) => 6,
            HeaderValue::String(_) => 7,
            HeaderValue::Timestamp(_) => 8,
            HeaderValue::Uuid(_) => 9,
        }
    }

    /// The value as JSON (for `events` and the app): numbers as numbers, a byte array as base64,
    /// a UUID in its hyphenated form, a timestamp as its milliseconds.
    pub fn to_json(&self) -> serde_json::Value {
        use base64::Engine as _;
        match *self {
            HeaderValue::Bool(b) => b.into(),
            HeaderValue::Byte(n) => n.into(),
            HeaderValue::Short(n) => n.into(),
            HeaderValue::Int(n) => n.into(),
            HeaderValue::Long(n) | HeaderValue::Timestamp(n) => n.into(),
            HeaderValue::Bytes(b) => base64::engine::general_purpose::STANDARD.encode(b).into(),
            HeaderValue::String(s) => s.into(),
            HeaderValue::Uuid(_) => self.to_string().into(),
        }
    }

    /// The string, for a string header.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            HeaderValue::String(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for HeaderValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderValue::Uuid(u) => {
                for (i, b) in u.iter().enumerate() {
                    if matches!(i, 4 | 6 | 8 | 10) {
                        f.write_str("-")?;
                    }
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
            HeaderValue::String(s) => f.write_str(s),
            other => write!(f, "{}", other.to_json()),
        }
    }
}

/// One header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    pub name: &'a str,
    pub value: HeaderValue<'a>,
}

/// Parse the header at the start of `b`: the header and its length, or why it is malformed.
fn parse_header(b: &[u8]) -> Result<(Header<'_>, usize), String> {
    let short = |what: &str| format!("header cut short in its {what}");
    let name_len = usize::from(*b.first().ok_or_else(|| short("name length"))?);
    let name = b.get(1..1 + name_len).ok_or_else(|| short("name"))?;
    let name = std::str::from_utf8(name).map_err(|_| "header name is not UTF-8".to_owned())?;
    let mut at = 1 + name_len;
    let ty = *b.get(at).ok_or_else(|| short("type"))?;
    at += 1;
    let mut take = |n: usize, what: &str| -> Result<&[u8], String> {
        let v = b
            .get(at..at + n)
            .ok_or_else(|| format!("header {name:?} cut short in its {what}"))?;
        at += n;
        Ok(v)
    };
    let fixed = |s: &[u8]| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[8 - s.len()..].copy_from_slice(s);
        a
    };
    let value = match ty {
        0 => HeaderValue::Bool(true),
        1 => HeaderValue::Bool(false),
        2 => HeaderValue::Byte(take(1, "value")?[0] as i8),
        3 => {
            let v = take(2, "value")?;
            HeaderValue::Short(i16::from_be_bytes([v[0], v[1]]))
        }
        4 => {
            let v = take(4, "value")?;
            HeaderValue::Int(i32::from_be_bytes([v[0], v[1], v[2], v[3]]))
        }
        5 | 8 => {
            let n = i64::from_be_bytes(fixed(take(8, "value")?));
            if ty == 5 {
                HeaderValue::Long(n)
            } else {
                HeaderValue::Timestamp(n)
            }
        }
        6 | 7 => {
            let len = take(2, "value length")?;
            let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
            let v = take(len, "value")?;
            if ty == 6 {
                HeaderValue::Bytes(v)
            } else {
                HeaderValue::String(
                    std::str::from_utf8(v)
                        .map_err(|_| format!("header {name:?} is a string that is not UTF-8"))?,
                )
            }
        }
        9 => {
            let v = take(16, "value")?;
            let mut u = [0u8; 16];
            u.copy_from_slice(v);
            HeaderValue::Uuid(u)
        }
        other => return Err(format!("header {name:?} has unknown value type {other}")),
    };
    Ok((Header { name, value }, at))
}

/// The headers of a frame, in order (already validated when the frame was decoded).
#[derive(Clone, Debug)]
pub struct Headers<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Headers<'a> {
    type Item = Header<'a>;
    fn next(&mut self) -> Option<Header<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        match parse_header(self.rest) {
            Ok((h, n)) => {
                self.rest = &self.rest[n..];
                Some(h)
            }
            Err(_) => {
                self.rest = &[];
                None
            }
        }
    }
}

/// Encode one header (for [`encode_frame`]).
fn encode_header(out: &mut Vec<u8>, h: &Header<'_>) {
    let name = &h.name.as_bytes()[..h.name.len().min(255)];
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.push(h.value.type_id());
    let var = |out: &mut Vec<u8>, v: &[u8]| {
        let v = &v[..v.len().min(u16::MAX as usize)];
        out.extend_from_slice(&(v.len() as u16).to_be_bytes());
        out.extend_from_slice(v);
    };
    match h.value {
        HeaderValue::Bool(_) => {}
        HeaderValue::Byte(n) => out.push(n as u8),
        HeaderValue::Short(n) => out.extend_from_slice(&n.to_be_bytes()),
        HeaderValue::Int(n) => out.extend_from_slice(&n.to_be_bytes()),
        HeaderValue::Long(n) | HeaderValue::Timestamp(n) => out.extend_from_slice(&n.to_be_bytes()),
        HeaderValue::Bytes(b) => var(out, b),
        HeaderValue::String(s) => var(out, s.as_bytes()),
        HeaderValue::Uuid(u) => out.extend_from_slice(&u),
    }
}

/// One frame's bytes: the prelude, `headers` and `payload`, and both CRCs (the stub builder and
/// the tests write frames with it). Names longer than 255 bytes and values longer than 65,535
/// bytes are cut to fit.
pub fn encode_frame(headers: &[Header<'_>], payload: &[u8]) -> Vec<u8> {
    let mut hb = Vec::new();
    for h in headers {
        encode_header(&mut hb, h);
    }
    let total = (MIN_FRAME_BYTES + hb.len() + payload.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(hb.len() as u32).to_be_bytes());
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out.extend_from_slice(&hb);
    out.extend_from_slice(payload);
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out
}

/// A frame with the three headers every AWS event carries (`:event-type`, `:content-type`,
/// `:message-type: event`) and a JSON payload.
pub fn event_frame(event_type: &str, payload: &[u8]) -> Vec<u8> {
    encode_frame(
        &[
            Header {
                name: ":event-type",
                value: HeaderValue::String(event_type),
            },
            Header {
                name: ":content-type",
                value: HeaderValue::String("application/json"),
            },
            Header {
                name: ":message-type",
                value: HeaderValue::String("event"),
            },
        ],
        payload,
    )
}

/// An exception frame (`:message-type: exception`, `:exception-type`) with a JSON payload, as
/// AWS sends `throttlingException` or `modelStreamErrorException` mid-stream.
pub fn exception_frame(exception_type: &str, payload: &[u8]) -> Vec<u8> {
    encode_frame(
        &[
            Header {
                name: ":message-type",
                value: HeaderValue::String("exception"),
            },
            Header {
                name: ":exception-type",
                value: HeaderValue::String(exception_type),
            },
            Header {
                name: ":content-type",
                value: HeaderValue::String("application/json"),
            },
        ],
        payload,
    )
}

// ---------------------------------------------------------------------------------------------
// Frames

/// A decoded frame, borrowed from the decoder's buffer for the duration of the callback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Byte span of the whole frame in the stream.
    pub span: Range<u64>,
    headers: &'a [u8],
    /// The payload bytes.
    pub payload: &'a [u8],
}

impl<'a> Frame<'a> {
    /// The headers, in order.
    pub fn headers(&self) -> Headers<'a> {
        Headers { rest: self.headers }
    }

    /// The first header named `name`.
    pub fn header(&self, name: &str) -> Option<HeaderValue<'a>> {
        self.headers().find(|h| h.name == name).map(|h| h.value)
    }

    /// A string header's value.
    pub fn header_str(&self, name: &str) -> Option<&'a str> {
        match self.header(name) {
            Some(HeaderValue::String(s)) => Some(s),
            _ => None,
        }
    }

    /// `:message-type` (`event`, `exception` or `error`); `event` when absent.
    pub fn message_type(&self) -> &'a str {
        self.header_str(":message-type").unwrap_or("event")
    }

    /// `:event-type` of an event, `:exception-type` of an exception, `:error-code` of an error.
    pub fn event_type(&self) -> Option<&'a str> {
        match self.message_type() {
            "exception" => self.header_str(":exception-type"),
            "error" => self.header_str(":error-code"),
            _ => self.header_str(":event-type"),
        }
    }

    /// The headers as a JSON object (name → value; a repeated name keeps its last value).
    pub fn headers_json(&self) -> serde_json::Map<String, serde_json::Value> {
        self.headers()
            .map(|h| (h.name.to_owned(), h.value.to_json()))
            .collect()
    }
}

/// What is wrong with bytes that should have been a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameFault {
    /// The prelude's CRC32 does not match its first eight bytes.
    PreludeCrc { stated: u32, computed: u32 },
    /// The lengths cannot be a frame (total under 16 bytes, headers longer than the frame).
    Length { total: u32, headers: u32 },
    /// The message CRC32 does not match the frame's bytes.
    MessageCrc { stated: u32, computed: u32 },
    /// The headers do not parse.
    Headers(String),
}

impl fmt::Display for FrameFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameFault::PreludeCrc { stated, computed } => write!(
                f,
                "prelude CRC32 mismatch (the prelude says {stated:08x}, its bytes give {computed:08x})"
            ),
            FrameFault::Length { total, headers } => write!(
                f,
                "impossible lengths (total {total} bytes, headers {headers} bytes)"
            ),
            FrameFault::MessageCrc { stated, computed } => write!(
                f,
                "message CRC32 mismatch (the frame says {stated:08x}, its bytes give {computed:08x})"
            ),
            FrameFault::Headers(why) => write!(f, "malformed headers: {why}"),
        }
    }
}

/// A corrupt stretch of the stream: its span and what was wrong where it starts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.span, .fault))]
pub struct FrameError {
    /// The bytes skipped: one frame (its prelude was good), or everything up to the next valid
    /// prelude (or the end).
    pub span: Range<u64>,
    pub fault: FrameFault,
}

fn describe(span: &Range<u64>, fault: &FrameFault) -> String {
    let skipped = crate::text::plural(span.end - span.start, "byte");
    match fault {
        FrameFault::Headers(_) => {
            format!(
                "frame at byte {}: {fault}; its {skipped} skipped",
                span.start
            )
        }
        FrameFault::MessageCrc { .. } => {
            format!("frame at byte {}: {fault}; {skipped} skipped", span.start)
        }
        FrameFault::PreludeCrc { .. } | FrameFault::Length { .. } => format!(
            "not a frame at byte {}: {fault}; {skipped} skipped to the next valid prelude or the end",
            span.start
        ),
    }
}

/// Decode one whole frame (`bytes` exactly one frame long, at stream offset `offset`): both CRCs
/// and the headers checked. The decoder uses it, and so does `events` to show a frame again.
pub fn decode_frame(bytes: &[u8], offset: u64) -> Result<Frame<'_>, FrameError> {
    decode_with(bytes, offset, crc32)
}

/// [`decode_frame`], with the CRC32 of everything before the message CRC computed by `body_crc`
/// (the decoder derives it from prefix CRCs).
fn decode_with<'a>(
    bytes: &'a [u8],
    offset: u64,
    body_crc: impl FnOnce(&[u8]) -> u32,
) -> Result<Frame<'a>, FrameError> {
    let span = offset..offset + bytes.len() as u64;
    let err = |fault| FrameError {
        span: span.clone(),
        fault,
    };
    let p = prelude(bytes).map_err(|f| {
        err(f.unwrap_or(FrameFault::Length {
            total: bytes.len() as u32,
            headers: 0,
        }))
    })?;
    if p.total as usize != bytes.len() {
        return Err(err(FrameFault::Length {
            total: p.total,
            headers: p.headers,
        }));
    }
    let body_end = bytes.len() - 4;
    let stated = be32(bytes, body_end).unwrap_or_default();
    let computed = body_crc(&bytes[..body_end]);
    if stated != computed {
        return Err(err(FrameFault::MessageCrc { stated, computed }));
    }
    let headers_end = PRELUDE_BYTES + p.headers as usize;
    let headers = &bytes[PRELUDE_BYTES..headers_end];
    let mut rest = headers;
    while !rest.is_empty() {
        let (_, n) = parse_header(rest).map_err(|why| err(FrameFault::Headers(why)))?;
        rest = &rest[n..];
    }
    Ok(Frame {
        span,
        headers,
        payload: &bytes[headers_end..body_end],
    })
}

/// Where the payload sits in a frame's bytes (the raw view shows it as text, the rest as hex);
/// `None` when the bytes do not start with a valid prelude.
pub fn payload_range(frame: &[u8]) -> Option<Range<usize>> {
    let p = prelude(frame).ok()?;
    let start = PRELUDE_BYTES + p.headers as usize;
    Some(start..(p.total as usize).saturating_sub(4).max(start))
}

// ---------------------------------------------------------------------------------------------
// The push decoder

/// What the decoder hands out.
#[derive(Debug)]
pub enum Decoded<'a> {
    /// A frame whose CRCs and headers checked out.
    Frame(Frame<'a>),
    /// A corrupt stretch, skipped.
    Corrupt(FrameError),
}

/// The input ended inside a frame (or its prelude).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The bytes of the unfinished frame.
    pub span: Range<u64>,
    /// The frame's total length as its prelude states it (`None`: the prelude itself is cut).
    pub total: Option<u32>,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let have = self.span.end - self.span.start;
        match self.total {
            Some(total) => write!(
                f,
                "the stream ended inside the frame at byte {}: {have} of its {} arrived",
                self.span.start,
                crate::text::plural(total, "byte")
            ),
            None => write!(
                f,
                "the stream ended inside a frame's prelude at byte {}: {} of 12",
                self.span.start,
                crate::text::plural(have, "byte")
            ),
        }
    }
}

/// The push decoder. See the module documentation.
#[derive(Debug)]
pub struct Decoder {
    /// Bytes not yet handed out: the frame in progress (or the bytes being scanned), after at
    /// most [`crc::Prefixes::keep_from`]'s few bytes already handed out.
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    buf_start: u64,
    /// Stream offset of the first byte not yet handed out (at or after `buf_start`).
    start: u64,
    /// Prefix CRCs over `buf`, which check every frame's message CRC.
    prefixes: crc::Prefixes,
    /// Bytes fed so far.
    offset: u64,
    /// Longest frame accepted.
    max_frame: u64,
    overflow: Option<Overflow>,
    /// Scanning for the next valid prelude after a bad one: where the bad stretch began and why.
    skipping: Option<(u64, FrameFault)>,
    /// Where the bytes claimed by frames whose message CRC failed end: a frame starting before
    /// it overlaps bytes already hashed, and is checked from prefix CRCs instead.
    shadow_end: u64,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::with_max_frame_bytes(u64::MAX)
    }
}

impl Decoder {
    /// A decoder that stops at the first frame longer than `limit` bytes (see [`Self::overflow`]).
    pub fn with_max_frame_bytes(limit: u64) -> Self {
        Self {
            buf: Vec::new(),
            buf_start: 0,
            start: 0,
            prefixes: crc::Prefixes::default(),
            offset: 0,
            max_frame: limit,
            overflow: None,
            skipping: None,
            shadow_end: 0,
        }
    }

    /// The frame that went past the limit, if one did. Nothing is decoded after it.
    pub fn overflow(&self) -> Option<Overflow> {
        self.overflow
    }

    /// Feed bytes; `sink` gets every frame (and corrupt stretch) they complete, in order.
    pub fn feed(&mut self, input: &[u8], sink: &mut impl FnMut(Decoded<'_>)) {
        self.offset += input.len() as u64;
        if self.overflow.is_some() {
            return;
        }
        self.buf.extend_from_slice(input);
        let mut pos = (self.start - self.buf_start) as usize;
        loop {
            let rest = &self.buf[pos..];
            let at = self.buf_start + pos as u64;
            if let Some((start, _)) = &self.skipping {
                // The first offset whose 12 bytes are a valid prelude ends the bad stretch.
                let start = *start;
                let found = crc::next_prelude(rest, is_prelude);
                match found {
                    Some(i) => {
                        if let Some((_, fault)) = self.skipping.take() {
                            sink(Decoded::Corrupt(FrameError {
                                span: start..at + i as u64,
                                fault,
                            }));
                        }
                        pos += i;
                        continue;
                    }
                    None => {
                        // Keep the last 11 bytes: a prelude may start among them.
                        pos += rest.len().saturating_sub(PRELUDE_BYTES - 1);
                        break;
                    }
                }
            }
            let p = match prelude(rest) {
                Err(None) => break,
                Err(Some(fault)) => {
                    self.skipping = Some((at, fault));
                    pos += 1;
                    continue;
                }
                Ok(p) => p,
            };
            if u64::from(p.total) > self.max_frame {
                self.overflow = Some(Overflow {
                    start: at,
                    limit: self.max_frame,
                });
                self.buf = Vec::new();
                self.prefixes.clear();
                return;
            }
            let total = p.total as usize;
            if rest.len() < total {
                break;
            }
            let (buf, buf_start, prefixes) = (&self.buf, self.buf_start, &mut self.prefixes);
            let shadowed = at < self.shadow_end;
            let body_crc = |body: &[u8]| {
                if shadowed {
                    prefixes.span(buf, buf_start, at, at + body.len() as u64)
                } else {
                    crc32(body)
                }
            };
            match decode_with(&rest[..total], at, body_crc) {
                Ok(frame) => sink(Decoded::Frame(frame)),
                // The prelude vouched for the length, but a bad message CRC may also mean the
                // frame was cut and the next one follows inside the bytes it claims: look for it
                // from the next byte on (in the usual case, one flipped bit, it starts right
                // after this frame).
                Err(FrameError {
                    fault: fault @ FrameFault::MessageCrc { .. },
                    ..
                }) => {
                    self.skipping = Some((at, fault));
                    self.shadow_end = self.shadow_end.max(at + total as u64);
                    pos += 1;
                    continue;
                }
                Err(e) => sink(Decoded::Corrupt(e)),
            }
            pos += total;
        }
        self.start = self.buf_start + pos as u64;
        let keep = self.prefixes.keep_from(self.start).max(self.buf_start);
        let drop = (keep - self.buf_start) as usize;
        if drop > 0 {
            self.buf.drain(..drop);
            self.buf_start = keep;
        }
        // A large read leaves a small tail: give the memory back.
        if self.buf.capacity() > (1 << 20) && self.buf.len() < self.buf.capacity() / 4 {
            self.buf.shrink_to(self.buf.len().max(1 << 16));
        }
    }

    /// End of input: a bad stretch still being skipped is reported (to the end); a frame cut
    /// short is returned.
    pub fn finish(&mut self, sink: &mut impl FnMut(Decoded<'_>)) -> Option<Cut> {
        if self.overflow.is_some() {
            return None;
        }
        if let Some((start, fault)) = self.skipping.take() {
            self.buf.clear();
            self.prefixes.clear();
            self.buf_start = self.offset;
            self.start = self.offset;
            sink(Decoded::Corrupt(FrameError {
                span: start..self.offset,
                fault,
            }));
            return None;
        }
        let rest = self.buf.get((self.start - self.buf_start) as usize..)?;
        if rest.is_empty() {
            return None;
        }
        let cut = Cut {
            span: self.start..self.offset,
            total: prelude(rest).ok().map(|p| p.total),
        };
        self.buf.clear();
        self.prefixes.clear();
        self.buf_start = self.offset;
        self.start = self.offset;
        Some(cut)
    }
}
