//! The chunk line: a chunk's exact bytes as readable `text` plus hex `lead`/`trail`, or `hex`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Chunk;

/// How a chunk's bytes are laid out in the file.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ChunkLayout<'a> {
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

pub(super) fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

pub(super) fn chunk_layout(bytes: &[u8]) -> ChunkLayout<'_> {
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
pub(super) fn to_hex(bytes: &[u8]) -> String {
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
pub(super) fn from_hex(text: &str, field: &str) -> Result<Vec<u8>, String> {
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
pub(super) struct ChunkOut<'a> {
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
pub(super) struct RawChunk {
    pub(super) t_us: u64,
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
    pub(super) fn decode(self) -> Result<Chunk, String> {
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
pub(super) fn write_chunk_line(out: &mut String, chunk: &Chunk) {
    use std::fmt::Write as _;
    write!(out, "(t_us: {}", chunk.t_micros).ok();
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
pub(super) fn push_ron_str(out: &mut String, value: &str) {
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
                write!(out, "\\u{{{:x}}}", u32::from(c)).ok();
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Soft hyphen, zero-width space, line/paragraph separators, bidi marks and controls, word joiner
/// and invisible operators, and the BOM.
pub(super) fn is_invisible_format(c: char) -> bool {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::recording::test_support::*;
    use crate::recording::*;

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
        let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
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
        let mut rng = Rng::new(42);
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
}
