//! The recording model: one captured (or stubbed, or imported) streaming response, with the exact
//! bytes of every network read and its arrival time, stored as a versioned, human-readable RON document.
//!
//! Chunks keep exact byte boundaries, even when a read ends in the middle of a UTF-8 character. To keep
//! the file readable in a text editor, a chunk is stored as `text` (valid UTF-8, CJK stays CJK), plus
//! optional `lead` (continuation bytes that finish a character begun in the previous chunk) and `trail`
//! (the first bytes of a character finished in the next chunk), both as hex. A chunk that is not UTF-8
//! at all is stored as `hex` only:
//!
//! ```text
//! (t_us: 1200, text: "data: 深", trail: "e5 9c")
//! (t_us: 1300, lead: "b3", text: "\"}\n\n")
//! (t_us: 1400, hex: "de ad be ef")
//! ```
//!
//! The module is split by concern: [`error`] (why a load or save failed), `chunk_text` (the chunk
//! line above), `document` (the RON document and its version check), [`mod@write`] (the one safe,
//! atomic writer every output of the program goes through) and [`journal`] (the recorder's
//! crash-safe `<out>.partial` file, which [`load`] recognises by its first line and turns back into
//! a [`Recording`] marked [`Meta::interrupted`]). What counts as a secret lives in [`crate::redact`].

use serde::{Deserialize, Serialize};

mod chunk_text;
mod document;
pub mod error;
pub mod journal;
#[cfg(test)]
mod test_support;
pub mod write;

pub use document::{
    CHUNKS_CLOSE_LINE, CHUNKS_OPEN_LINE, DocumentWriter, from_ron_str, is_journal, load,
    parse_chunk_line, parse_document_head,
};
pub use error::RecordingError;
pub use journal::{JOURNAL_MAGIC, JOURNAL_MAGIC_PREFIX, JournalWriter, salvage_journal};
pub use write::{
    FileMode, OutputFile, OutputTarget, WriteOptions, free_path, output_target,
    remove_pending_temps, save, save_with, write_file,
};

// Kept so `recording::redact_url` and friends still resolve for callers in net/ and import/.
pub use crate::redact::{
    REDACTED, REDACTED_URL_VALUE, is_secret_header, redact_headers, redact_url,
};

/// The newest file format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Nesting limit for the RON parser and serializer: recordings nest about 6 deep, so this only
/// stops hostile or broken input before it can overflow the stack.
const RECURSION_LIMIT: usize = 64;

/// The RON settings every reader and writer of recordings and journals uses.
fn ron_options() -> ron::Options {
    ron::Options::default().with_recursion_limit(RECURSION_LIMIT)
}

/// One recording: what was asked, what came back, and how it arrived.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Recording {
    /// File format version (see [`FORMAT_VERSION`]).
    pub version: u32,
    pub meta: Meta,
    /// The request that produced the stream, when known (headers redacted).
    pub request: Option<RequestInfo>,
    /// The response status and headers, when known.
    pub response: Option<ResponseInfo>,
    /// The response body as received: exact bytes per read, with arrival times.
    pub chunks: Vec<Chunk>,
    /// Optional ground truth (stub recordings): the original arguments of each call.
    pub truth: Vec<TruthCall>,
}

/// Descriptive metadata.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Meta {
    pub title: String,
    /// Where it came from: "record", "proxy", "stub", "import:har", "raw file", ...
    pub source: String,
    /// RFC 3339 creation time (UTC), or empty.
    pub created: String,
    /// Dialect name when known ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama"), or empty = auto-detect.
    pub dialect: String,
    /// Free-form notes shown in the app (e.g. "HAR keeps no chunk boundaries or timing").
    pub notes: Vec<String>,
    /// True when chunk boundaries/timing are real network reads; false for imports that lost them.
    pub timing_known: bool,
    /// Set by the salvage loader when the file was a journal left by an interrupted recorder.
    pub interrupted: bool,
}

/// The HTTP request, secrets redacted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestInfo {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// The HTTP response head.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResponseInfo {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

/// One network read: exact bytes and arrival time in microseconds since the request was sent
/// (or since the first chunk, for imports).
///
/// Serialized as `(t_us: .., lead: "..", text: "..", trail: "..")` or `(t_us: .., hex: "..")`,
/// see the module documentation. Any byte sequence round-trips exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunk {
    pub t_micros: u64,
    pub bytes: Vec<u8>,
}

/// Ground truth for one call of a stub recording.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TruthCall {
    pub id: String,
    pub name: String,
    /// The original arguments string, verbatim.
    pub arguments: String,
}

impl Recording {
    /// The response body: all chunks concatenated.
    pub fn body(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.chunks.iter().map(|c| c.bytes.len()).sum());
        for chunk in &self.chunks {
            body.extend_from_slice(&chunk.bytes);
        }
        body
    }

    /// Total body length in bytes.
    pub fn body_len(&self) -> u64 {
        self.chunks.iter().map(|c| c.bytes.len() as u64).sum()
    }

    /// Arrival time of the latest chunk (0 without chunks).
    pub fn duration_micros(&self) -> u64 {
        self.chunks.iter().map(|c| c.t_micros).max().unwrap_or(0)
    }
}

// The masking rules are `crate::redact`'s; this only applies them to every part of a request, so
// `redact` never needs to know the recording model (the dependency runs one way).
impl RequestInfo {
    /// Redacts the URL ([`redact_url`]), the headers ([`redact_headers`]) and the body
    /// ([`crate::redact::redact_body`]). Idempotent.
    pub fn redact(&mut self) {
        self.url = redact_url(&self.url);
        redact_headers(&mut self.headers);
        self.body = crate::redact::redact_body(&self.body);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    #[test]
    fn request_redaction_covers_url_headers_and_body() {
        let mut req = RequestInfo {
            url: "https://h/?key=abc".into(),
            headers: vec![("Authorization".into(), "Bearer x".into())],
            body: r#"{"api_key":"S1","max_tokens":3}"#.into(),
            ..RequestInfo::default()
        };
        req.redact();
        assert_eq!(req.url, "https://h/?key=REDACTED");
        assert_eq!(req.headers[0].1, "Bearer ‹redacted›");
        assert_eq!(req.body, r#"{"api_key":"‹redacted›","max_tokens":3}"#);
    }
}
