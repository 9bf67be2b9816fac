//! Fixtures shared by the recording tests.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use super::chunk_text::write_chunk_line;
use super::{
    Chunk, FORMAT_VERSION, Meta, Recording, RequestInfo, ResponseInfo, TruthCall, ron_options,
};

/// A seeded generator (fastrand) with the few draws the recording tests use.
pub(super) struct Rng(fastrand::Rng);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Self(fastrand::Rng::with_seed(seed))
    }
    pub(super) fn next(&mut self) -> u64 {
        self.0.u64(..)
    }
    /// Uniform in `0..n` (`0` when `n` is 0).
    pub(super) fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.0.usize(..n) }
    }
    pub(super) fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.0.u8(..)).collect()
    }
    /// Text-like bytes: ASCII (with quotes, escapes, controls), CJK, emoji, combining marks.
    pub(super) fn texty(&mut self, len: usize) -> Vec<u8> {
        const PIECES: &[&str] = &[
            "a",
            "Z",
            " ",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\0",
            "'",
            "#",
            "深",
            "圳",
            "é",
            "\u{301}",
            "😀",
            "\u{2028}",
            "\u{7f}",
            "\u{feff}",
            "data: ",
            "{\"a\":",
            "\u{10ffff}",
            "}",
        ];
        let mut out = Vec::new();
        while out.len() < len {
            out.extend_from_slice(PIECES[self.below(PIECES.len())].as_bytes());
        }
        out
    }
}

pub(super) fn rec_with_chunks(chunks: Vec<Chunk>) -> Recording {
    Recording {
        version: FORMAT_VERSION,
        meta: Meta {
            title: "深圳 weather \"quoted\"\nsecond line \\ back".into(),
            source: "record".into(),
            created: "2025-01-02T03:04:05Z".into(),
            dialect: "openai-chat".into(),
            notes: vec!["note one".into(), "ノート".into()],
            timing_known: true,
            interrupted: false,
        },
        request: Some(RequestInfo {
            method: "POST".into(),
            url: "https://api.example.com/v1/chat?x=1".into(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("authorization".into(), "Bearer ‹redacted›".into()),
            ],
            body: "{\"model\":\"m\",\"messages\":[{\"content\":\"深圳\"}]}".into(),
        }),
        response: Some(ResponseInfo {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
        }),
        chunks,
        truth: vec![TruthCall {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: "{\"city\":\"深圳\"}".into(),
        }],
    }
}

pub(super) fn chunks_of(pieces: &[&[u8]]) -> Vec<Chunk> {
    pieces
        .iter()
        .enumerate()
        .map(|(i, b)| Chunk {
            t_micros: 1000 * i as u64,
            bytes: b.to_vec(),
        })
        .collect()
}

pub(super) fn roundtrip(rec: &Recording) -> Recording {
    let text = rec.to_ron_string();
    match Recording::from_ron_str(&text) {
        Ok(back) => back,
        Err(e) => panic!("{e}\n{text}"),
    }
}

/// The document form of a chunk, checked against the `Serialize` form (which escapes more).
pub(super) fn chunk_line(bytes: &[u8]) -> String {
    let chunk = Chunk {
        t_micros: 1200,
        bytes: bytes.to_vec(),
    };
    let mut line = String::new();
    write_chunk_line(&mut line, &chunk);
    let serialized = ron_options()
        .to_string_pretty(&chunk, ron::ser::PrettyConfig::new().compact_structs(true))
        .unwrap();
    let parsed: Chunk = ron::from_str(&line).unwrap();
    assert_eq!(parsed, chunk, "{line}");
    assert_eq!(ron::from_str::<Chunk>(&serialized).unwrap(), chunk);
    if !line.contains("\\u{") && !line.contains('\'') {
        assert_eq!(line, serialized);
    }
    line
}

/// The names in `dir`, sorted.
pub(super) fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A recording head for the journal: no response yet.
pub(super) fn head() -> Recording {
    let mut rec = rec_with_chunks(vec![Chunk {
        t_micros: 1,
        bytes: b"ignored".to_vec(),
    }]);
    rec.response = None;
    rec
}
