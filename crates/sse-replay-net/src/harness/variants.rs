//! Variants: the same recording put on the wire in different ways. Framing variants change only how
//! the bytes are cut into writes (or add line endings and keep-alives the parser must ignore), so the
//! correct calls stay the same; fault variants (`cut`, `no-terminator`) change what the stream
//! says, and the expected result follows from their bytes like any other case.

use sse_replay_core::analysis::Analysis;
use sse_replay_core::framing::{Framed, Framer, Framing};
use sse_replay_core::recording::Recording;

/// One way of putting a recording on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// The recorded reads and their timing (scaled by `--speed`).
    Recorded,
    /// The whole body in one write.
    OneRead,
    /// One byte per write.
    Bytewise,
    /// Every write ends inside a multi-byte character (where the body has one).
    Utf8Split,
    /// Random write sizes 1–64 from a seed.
    Random,
    /// Line endings rewritten to CRLF, each write ending between a CR and its LF (SSE only).
    Crlf,
    /// Comment lines and the dialect's ping events between events (SSE only).
    Keepalive,
    /// Fault: the connection closes mid-event, inside a call's arguments, before the end.
    Cut,
    /// Fault: the stream ends with neither a finish reason, `[DONE]` nor the dialect's end event.
    NoTerminator,
}

impl Variant {
    /// Every framing variant, in matrix order.
    pub const FRAMING: [Variant; 7] = [
        Variant::Recorded,
        Variant::OneRead,
        Variant::Bytewise,
        Variant::Utf8Split,
        Variant::Random,
        Variant::Crlf,
        Variant::Keepalive,
    ];
    /// The fault variants (`--faults`).
    pub const FAULTS: [Variant; 2] = [Variant::Cut, Variant::NoTerminator];

    /// Stable name (CLI, JSON, JUnit).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Recorded => "recorded",
            Variant::OneRead => "one-read",
            Variant::Bytewise => "bytewise",
            Variant::Utf8Split => "utf8-split",
            Variant::Random => "random",
            Variant::Crlf => "crlf",
            Variant::Keepalive => "keepalive",
            Variant::Cut => "cut",
            Variant::NoTerminator => "no-terminator",
        }
    }

    /// Parse a name.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::FRAMING
            .into_iter()
            .chain(Self::FAULTS)
            .find(|v| v.name() == s.trim())
    }

    /// A fault variant (changes what the stream says, not only its framing).
    pub fn is_fault(self) -> bool {
        Self::FAULTS.contains(&self)
    }
}

/// What a case's server sends: each write with its due time (µs from the response start), and
/// whether the connection is then aborted instead of ended cleanly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Wire {
    pub writes: Vec<(u64, Vec<u8>)>,
    /// End by aborting the connection (the `cut` fault) rather than with a clean end of body.
    pub abort: bool,
}

impl Wire {
    /// All the bytes, concatenated.
    pub fn body(&self) -> Vec<u8> {
        self.writes
            .iter()
            .flat_map(|(_, b)| b.iter().copied())
            .collect()
    }

    /// The wire as a recording (same metadata as `rec`), for the expected result and the naive
    /// strategies on exactly these reads.
    pub fn to_recording(&self, rec: &Recording) -> Recording {
        Recording {
            version: rec.version,
            meta: sse_replay_core::recording::Meta {
                timing_known: true,
                ..rec.meta.clone()
            },
            request: rec.request.clone(),
            response: rec.response.clone(),
            chunks: self
                .writes
                .iter()
                .map(|(t, b)| sse_replay_core::recording::Chunk {
                    t_micros: *t,
                    bytes: b.clone(),
                })
                .collect(),
            truth: rec.truth.clone(),
        }
    }
}

/// Cuts `body` before each offset in `cuts` (ascending, inside `1..len`), all due at time 0.
fn cut_at(body: &[u8], cuts: impl IntoIterator<Item = usize>) -> Vec<(u64, Vec<u8>)> {
    let mut writes = Vec::new();
    let mut start = 0;
    for c in cuts {
        if c > start && c < body.len() {
            writes.push((0, body[start..c].to_vec()));
            start = c;
        }
    }
    if start < body.len() || writes.is_empty() {
        writes.push((0, body[start..].to_vec()));
    }
    writes
}

/// Largest body the `bytewise` variant is run on (one write per byte: a larger body would take
/// millions of writes and as many small allocations).
pub const BYTEWISE_MAX_BYTES: usize = 1 << 20;

/// Whether `variant` applies to the recording analysed as `base`: not `bytewise` on a body over
/// [`BYTEWISE_MAX_BYTES`], not `utf8-split` on a body without multi-byte characters or on binary
/// frames, not `crlf` and `keepalive` on JSON lines or binary frames, not `cut` without a call's arguments to cut into, not `no-terminator` on
/// a stream that has none. Cheap: no bytes are copied.
pub fn applies(variant: Variant, base: &Analysis) -> bool {
    let sse = base.framing == Framing::Sse;
    match variant {
        Variant::Recorded | Variant::OneRead | Variant::Random => true,
        Variant::Bytewise => base.body.len() <= BYTEWISE_MAX_BYTES,
        // Binary frames have no characters to split (their bytes are not text).
        Variant::Utf8Split => {
            base.framing.is_text()
                && base
                    .body
                    .windows(2)
                    .any(|w| w[0] >= 0xC0 && w[1] & 0xC0 == 0x80)
        }
        Variant::Crlf | Variant::Keepalive => sse,
        Variant::Cut => cut_offset(base).is_some(),
        Variant::NoTerminator => terminator_offset(base).is_some(),
    }
}

/// The wire for `variant` over `rec`, or `None` when the variant does not apply (see
/// [`applies`]). `base` is the analysis of `rec` or of a recording with the same byte layout (the
/// recording before its values were varied: the same length, events and reads), whose positions
/// say where to cut; the bytes are `rec`'s.
pub fn wire(variant: Variant, rec: &Recording, base: &Analysis, random_seed: u64) -> Option<Wire> {
    if !applies(variant, base) {
        return None;
    }
    let body = rec.body();
    if body.len() != base.body.len() {
        return None;
    }
    let writes = match variant {
        Variant::Recorded => rec
            .chunks
            .iter()
            .filter(|c| !c.bytes.is_empty())
            .map(|c| (c.t_micros, c.bytes.clone()))
            .collect(),
        Variant::OneRead => vec![(0, body)],
        Variant::Bytewise => body.iter().map(|b| (0, vec![*b])).collect(),
        Variant::Utf8Split => {
            // Cut one byte into every multi-byte character: each write but the last ends inside one.
            let cuts: Vec<usize> = body
                .iter()
                .enumerate()
                .filter(|(i, b)| **b >= 0xC0 && body.get(i + 1).is_some_and(|n| n & 0xC0 == 0x80))
                .map(|(i, _)| i + 1)
                .collect();
            cut_at(&body, cuts)
        }
        Variant::Random => {
            let mut rng = fastrand::Rng::with_seed(random_seed);
            let cuts = sse_replay_core::chunking::random_cuts(&mut rng, body.len(), 64);
            cut_at(&body, cuts)
        }
        Variant::Crlf => {
            let crlf = to_crlf(&body);
            let cuts: Vec<usize> = crlf
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w == b"\r\n")
                .map(|(i, _)| i + 1)
                .collect();
            cut_at(&crlf, cuts)
        }
        Variant::Keepalive => keepalive(&body, base),
        Variant::Cut => {
            let at = cut_offset(base)?;
            return Some(Wire {
                writes: cut_at(&body[..at], event_ends(&body[..at])),
                abort: true,
            });
        }
        Variant::NoTerminator => {
            let at = terminator_offset(base)?;
            cut_at(&body[..at], event_ends(&body[..at]))
        }
    };
    Some(Wire {
        writes,
        abort: false,
    })
}

/// Every LF without a CR before it, and every CR without an LF after it, becomes CRLF.
pub fn to_crlf(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 16);
    for (i, &b) in body.iter().enumerate() {
        match b {
            b'\n' if i == 0 || body[i - 1] != b'\r' => out.extend_from_slice(b"\r\n"),
            b'\r' if body.get(i + 1) != Some(&b'\n') => out.extend_from_slice(b"\r\n"),
            _ => out.push(b),
        }
    }
    out
}

/// Where each framed event (or comment) ends, past a CRLF's LF.
fn event_ends(body: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut framer = Framer::new(None);
    let mut sink = |item: Framed<'_>| {
        let mut end = item.span().end as usize;
        if end > 0 && body.get(end - 1) == Some(&b'\r') && body.get(end) == Some(&b'\n') {
            end += 1;
        }
        ends.push(end);
    };
    framer.feed(body, &mut sink);
    framer.finish(&mut sink);
    ends.sort_unstable();
    ends.dedup();
    ends
}

/// One write per event, with a comment and the dialect's ping event between events.
fn keepalive(body: &[u8], base: &Analysis) -> Vec<(u64, Vec<u8>)> {
    let nl: &[u8] = if body.windows(2).any(|w| w == b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    };
    use sse_replay_core::dialect::DialectKind as D;
    let ping: Option<&[u8]> = match base.dialect {
        D::AnthropicMessages => Some(b"event: ping\ndata: {\"type\": \"ping\"}\n\n"),
        D::OpenAiChat => Some(b": OPENROUTER PROCESSING\n\n"),
        // No ping event of their own: the comment alone.
        D::OpenAiResponses
        | D::Gemini
        | D::Ollama
        | D::Cohere
        | D::OpenAiAssistants
        | D::AiSdkUi
        | D::BedrockConverse => None,
    };
    let line = |text: &[u8]| -> Vec<u8> {
        // Rewrite the template's LFs to the body's line ending.
        let mut v = Vec::new();
        for &b in text {
            if b == b'\n' {
                v.extend_from_slice(nl);
            } else {
                v.push(b);
            }
        }
        v
    };
    let mut writes = vec![(0, line(b": keepalive\n\n"))];
    let mut start = 0;
    for end in event_ends(body) {
        if end <= start {
            continue;
        }
        writes.push((0, body[start..end].to_vec()));
        writes.push((0, line(b": keepalive\n\n")));
        if let Some(p) = ping {
            writes.push((0, line(p)));
        }
        start = end;
    }
    if start < body.len() {
        writes.push((0, body[start..].to_vec()));
    }
    writes
}

/// A byte offset in the middle of the event that carries the middle fragment of the first call
/// with arguments text: the stream cut there ends inside that call's arguments.
fn cut_offset(base: &Analysis) -> Option<usize> {
    let call = base
        .calls
        .iter()
        .find(|c| c.fragments.iter().filter(|&&n| has_args(base, n)).count() >= 2)
        .or_else(|| base.calls.iter().find(|c| !c.fragments.is_empty()))?;
    let with_args: Vec<u32> = call
        .fragments
        .iter()
        .copied()
        .filter(|&n| has_args(base, n))
        .collect();
    let frag = base
        .fragments
        .get(*with_args.get(with_args.len() / 2)? as usize)?;
    let event = base.events.get(frag.pos.event as usize)?;
    let (start, end) = (event.span.start as usize, event.span.end as usize);
    // Cut inside the fragment's own text when it can be found in the event, else mid-event.
    // The fragment's text as it appears in the event: JSON-escaped, without the quotes.
    let quoted = serde_json::to_string(base.fragment_text(frag)).unwrap_or_default();
    let text = quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default();
    let event_bytes = base.body.get(start..end)?;
    let at = memchr::memmem::find(event_bytes, text.as_bytes())
        .filter(|_| text.len() >= 2)
        .map_or(start + (end - start) / 2, |i| start + i + text.len() / 2);
    Some(at.clamp(start + 1, end.saturating_sub(1).max(start + 1)))
}

fn has_args(base: &Analysis, n: u32) -> bool {
    base.fragments.get(n as usize).is_some_and(|f| f.has_args)
}

/// Where the first terminating event (finish reason, `[DONE]`, the dialect's end event) starts.
fn terminator_offset(base: &Analysis) -> Option<usize> {
    let finish = base.finish.as_ref().map(|f| f.pos.event);
    let done = base.done.map(|p| p.event);
    let event = match (finish, done) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    base.events
        .get(event as usize)
        .map(|e| e.span.start as usize)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn crlf_rewrites_lf_and_lone_cr_once() {
        assert_eq!(to_crlf(b"a\nb\r\nc\rd"), b"a\r\nb\r\nc\r\nd");
    }

    #[test]
    fn names_round_trip() {
        for v in Variant::FRAMING.into_iter().chain(Variant::FAULTS) {
            assert_eq!(Variant::from_name(v.name()), Some(v));
        }
        assert_eq!(Variant::from_name("nope"), None);
    }
}
