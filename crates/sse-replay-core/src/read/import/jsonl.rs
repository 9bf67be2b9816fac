//! JSON-lines fixtures: one chunk object per line and no `data:` framing, as SDK test suites keep
//! recorded streams (and as Ollama sends them). The bytes are kept exactly as they are; the
//! framing layer recognises JSON lines by itself. Every non-blank line must be a JSON object, so a
//! damaged fixture is reported (with its line number) instead of half imported.

use std::path::Path;

use super::{BodyOrigin, ImportError, ImportFormat, NO_TIMING_NOTE, body_recording, file_name};
use crate::probe::ReadOptions;
use crate::recording::Recording;

/// Import a JSON-lines fixture as one recording.
pub fn import(path: &Path, bytes: &[u8], options: &ReadOptions) -> Result<Recording, ImportError> {
    let body = crate::text::strip_bom(bytes);
    // A line over the limit is refused before any line is parsed.
    let mut start = bytes.len() - body.len();
    for line in body.split(|b| *b == b'\n') {
        if line.len() as u64 > options.max_event_bytes.bytes() {
            return Err(ImportError::EventTooLarge {
                path: path.to_owned(),
                at: "the fixture".into(),
                overflow: crate::sse::Overflow {
                    start: start as u64,
                    limit: options.max_event_bytes.bytes(),
                },
            });
        }
        start += line.len() + 1;
    }
    let mut objects = 0usize;
    for (i, line) in body.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = |message: String| ImportError::JsonLine {
            path: path.to_owned(),
            line: i + 1,
            message,
        };
        match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(_)) => objects += 1,
            Ok(other) => {
                let what = match other {
                    serde_json::Value::Array(_) => "an array",
                    serde_json::Value::String(_) => "a string",
                    serde_json::Value::Number(_) => "a number",
                    serde_json::Value::Bool(_) => "a boolean",
                    _ => "null",
                };
                return Err(bad(format!("found {what}")));
            }
            Err(e) => {
                return Err(bad(format!(
                    "{} (column {})",
                    strip_position(&e),
                    e.column()
                )));
            }
        }
    }
    if objects == 0 {
        return Err(ImportError::Empty {
            path: path.to_owned(),
        });
    }
    let notes = vec![
        format!(
            "Imported from the JSON-lines fixture {} ({objects} chunk objects, no SSE framing).",
            file_name(path)
        ),
        format!("A JSON-lines fixture {NO_TIMING_NOTE}"),
    ];
    let origin = BodyOrigin {
        path,
        at: "the fixture".into(),
    };
    body_recording(
        bytes,
        file_name(path),
        ImportFormat::JsonLines,
        notes,
        origin,
        options,
    )
}

fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
