//! The RON document: writing one chunk per line, reading with a version check first.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

use super::chunk_text::{RawChunk, write_chunk_line};
use super::error::RecordingError;
use super::journal::{JOURNAL_MAGIC_PREFIX, salvage_journal};
use super::write::save;
use super::{
    Chunk, FORMAT_VERSION, Meta, Recording, RequestInfo, ResponseInfo, TruthCall, ron_options,
};

/// Indentation of a top-level field in `ron`'s pretty output (default indentor: 4 spaces).
pub(super) const FIELD_INDENT: &str = "    ";

/// The written form of a recording: borrowed, with `version` forced to [`FORMAT_VERSION`] and the
/// short fields before the (long) chunk list.
#[derive(Serialize)]
#[serde(rename = "Recording")]
pub(super) struct RecordingOut<'a> {
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
pub(super) struct RawRecording {
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

/// The RON document of a recording written piece by piece: the short fields first, then one chunk
/// line per [`DocumentWriter::chunk`], then the end. The recorder and the proxy write a capture's
/// document this way from their journal, one chunk at a time, so a long capture is never held
/// whole in memory. [`Recording::to_ron_string`] is this, collected: the same bytes either way.
pub struct DocumentWriter {
    /// The whole document with `chunks: []` (what is written when no chunk comes).
    empty: String,
    /// Where `chunks: []` is in `empty`.
    at: usize,
    started: bool,
}

impl DocumentWriter {
    /// A document for `head`'s fields (its chunks are ignored: give them to
    /// [`DocumentWriter::chunk`]), always with `version: FORMAT_VERSION`.
    pub fn new(head: &Recording) -> Result<Self, RecordingError> {
        // Destructured without `..`: a field added to `Recording` must be written here too.
        let Recording {
            version: _,
            meta,
            request,
            response,
            chunks: _,
            truth,
        } = head;
        let doc = RecordingOut {
            version: FORMAT_VERSION,
            meta,
            request,
            response,
            truth,
            chunks: &[],
        };
        let config = ron::ser::PrettyConfig::new().new_line("\n");
        let mut empty = ron_options()
            .to_string_pretty(&doc, config)
            .map_err(|e| RecordingError::serialize(&e))?;
        empty.push('\n');
        // Strings are escaped (no raw newlines), so a line that is exactly `    chunks: [],` can
        // only be the top-level field.
        let at = empty.find(&Self::empty_list()).ok_or_else(|| {
            RecordingError::serialize(&ron::Error::Message(
                "the document has no chunk list".into(),
            ))
        })?;
        Ok(Self {
            empty,
            at,
            started: false,
        })
    }

    fn empty_list() -> String {
        format!("\n{FIELD_INDENT}chunks: [],\n")
    }

    /// Writes one chunk's line (and, before the first, the document up to the chunk list).
    pub fn chunk(&mut self, out: &mut dyn std::io::Write, chunk: &Chunk) -> std::io::Result<()> {
        if !self.started {
            self.started = true;
            out.write_all(&self.empty.as_bytes()[..self.at])?;
            out.write_all(format!("\n{FIELD_INDENT}chunks: [\n").as_bytes())?;
        }
        let mut line = String::with_capacity(chunk.bytes.len() + 32);
        line.push_str(FIELD_INDENT);
        line.push_str(FIELD_INDENT);
        write_chunk_line(&mut line, chunk);
        line.push_str(",\n");
        out.write_all(line.as_bytes())
    }

    /// Writes the end of the document (the whole of it when no chunk came).
    pub fn finish(self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        if !self.started {
            return out.write_all(self.empty.as_bytes());
        }
        out.write_all(format!("{FIELD_INDENT}],\n").as_bytes())?;
        out.write_all(&self.empty.as_bytes()[self.at + Self::empty_list().len()..])
    }
}

/// First pass of loading: only the version, every other field ignored, so that a newer file is
/// reported as such even when this build does not know its fields.
/// The line that opens the chunk list in the layout [`DocumentWriter`] and
/// [`Recording::to_ron_string`] write: the list last, one chunk per line.
pub const CHUNKS_OPEN_LINE: &str = "    chunks: [";

/// The line that closes that chunk list.
pub const CHUNKS_CLOSE_LINE: &str = "    ],";

/// A document's head in that layout (every line before [`CHUNKS_OPEN_LINE`]) as the recording
/// without its chunks: the list taken as empty and last, as the writers put it. For a reader that
/// goes on with the chunks one line at a time ([`parse_chunk_line`]) instead of holding them.
pub fn parse_document_head(head: &str) -> Result<Recording, RecordingError> {
    parse_document(&format!("{head}{FIELD_INDENT}chunks: [],\n)\n"))
}

/// One line of the chunk list in that layout (`        (t_us: 0, text: "…"),`) as its chunk,
/// the `index`-th (0-based, for the message), read as the whole document reads it.
pub fn parse_chunk_line(line: &str, index: usize) -> Result<Chunk, RecordingError> {
    let item = line.trim().trim_end_matches(',');
    let bad = |message: String, t_micros: u64| RecordingError::BadChunk {
        path: None,
        index,
        t_micros,
        message,
    };
    let raw = ron_options()
        .from_str::<RawChunk>(item)
        .map_err(|e| bad(e.to_string(), 0))?;
    let t_micros = raw.t_us;
    raw.decode().map_err(|message| bad(message, t_micros))
}

#[derive(Deserialize)]
#[serde(rename = "Recording")]
pub(super) struct VersionProbe {
    #[serde(default, deserialize_with = "deserialize_some")]
    version: Option<u64>,
}

pub(super) fn deserialize_some<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    u64::deserialize(deserializer).map(Some)
}

/// When the probe itself fails (syntax this build cannot parse), a leading `version: N` field is
/// still worth looking for: a newer format may use syntax we do not know.
pub(super) fn scan_version(text: &str) -> Option<u64> {
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

pub(super) fn check_version(found: Option<u64>) -> Result<(), RecordingError> {
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

pub(super) fn parse_document(text: &str) -> Result<Recording, RecordingError> {
    let text = crate::text::strip_bom_str(text);
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
pub(super) fn line_of(bytes: &[u8], offset: usize) -> usize {
    1 + bytes.iter().take(offset).filter(|&&b| b == b'\n').count()
}

/// The bytes (after a byte order mark) start with a journal's first line: the one rule telling a
/// journal from a recording document, for [`Recording::from_bytes`] and [`crate::probe`] alike.
pub fn is_journal(bytes: &[u8]) -> bool {
    bytes.starts_with(JOURNAL_MAGIC_PREFIX.as_bytes())
}

impl Recording {
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
        let mut doc = DocumentWriter::new(self)?;
        let mut out = Vec::new();
        for chunk in &self.chunks {
            doc.chunk(&mut out, chunk)
                .map_err(|e| RecordingError::serialize(&ron::Error::Io(e.to_string())))?;
        }
        doc.finish(&mut out)
            .map_err(|e| RecordingError::serialize(&ron::Error::Io(e.to_string())))?;
        Ok(String::from_utf8(out).unwrap_or_default())
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
        let bytes = crate::text::strip_bom(bytes);
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::recording::test_support::*;
    use crate::recording::*;

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
            Recording::from_bytes(&text.as_bytes()[..cut]).ok();
        }
    }

    #[test]
    fn hostile_input_never_panics() {
        let mut rng = Rng::new(7);
        for _ in 0..2000 {
            let len = rng.below(200);
            let bytes = rng.bytes(len);
            Recording::from_bytes(&bytes).ok();
            Recording::from_ron_str(&String::from_utf8_lossy(&rng.texty(len))).ok();
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
            Recording::from_ron_str(&s).ok();
            salvage_journal(&format!("{JOURNAL_MAGIC}\n{s}\n{s}")).ok();
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
            Recording::from_bytes(&m).ok();
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
            salvage_journal(&format!("{JOURNAL_MAGIC}\n{deep}\n{deep}\n")).ok();
        }
    }
}
