//! Azure SDK test-proxy session records (the recordings of the Azure SDKs and of openai-dotnet,
//! `SessionRecords/**/*.json`):
//!
//! ```json
//! {"Entries": [{"RequestUri": "https://api.openai.com/v1/threads/runs", "RequestMethod": "POST",
//!               "RequestHeaders": {…}, "RequestBody": {…},
//!               "StatusCode": 200, "ResponseHeaders": {"Content-Type": "text/event-stream"},
//!               "ResponseBody": ["event: thread.created\n", "data: {…}\n\n", …]}],
//!  "Variables": {}}
//! ```
//!
//! An event-stream `ResponseBody` is a list of the stream's lines, which concatenate to the raw
//! stream; a text body is a string, a JSON body a JSON value. Every entry whose response is a
//! stream becomes a recording with its request (secrets redacted); the body is whole, so chunk
//! boundaries and timing are lost, and the recording says so.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::{
    BodyOrigin, ImportError, ImportFormat, Imported, NO_TIMING_NOTE, body_recording, file_name,
};
use crate::content::{is_stream_body, is_stream_type};
use crate::probe::ReadOptions;
use crate::recording::{RequestInfo, ResponseInfo, redact_headers};

#[derive(Deserialize)]
struct Session {
    #[serde(rename = "Entries")]
    entries: Vec<Entry>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Entry {
    #[serde(rename = "RequestUri")]
    uri: String,
    #[serde(rename = "RequestMethod")]
    method: String,
    #[serde(rename = "RequestHeaders")]
    request_headers: Value,
    #[serde(rename = "RequestBody")]
    request_body: Value,
    #[serde(rename = "StatusCode")]
    status: Option<u64>,
    #[serde(rename = "ResponseHeaders")]
    response_headers: Value,
    #[serde(rename = "ResponseBody")]
    response_body: Value,
}

/// Headers as the record keeps them: a map of name to a string (or a list of strings).
fn headers(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, v) in m {
            match v {
                Value::String(s) => out.push((k.clone(), s.clone())),
                Value::Array(a) => {
                    for x in a {
                        out.push((k.clone(), x.as_str().unwrap_or_default().to_owned()));
                    }
                }
                other => out.push((k.clone(), other.to_string())),
            }
        }
    }
    out
}

/// A body as bytes: a list of line strings concatenated, a string as it is, JSON written back.
fn body_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Array(lines) if lines.iter().all(Value::is_string) => Some(
            lines
                .iter()
                .filter_map(Value::as_str)
                .collect::<String>()
                .into_bytes(),
        ),
        other => Some(other.to_string().into_bytes()),
    }
}

/// Import every event-stream entry of a session record (at most `options.max_streams`; the rest
/// counted). Secrets in requests and response headers are redacted unless `options.keep_secrets`.
pub fn import(path: &Path, bytes: &[u8], options: &ReadOptions) -> Result<Imported, ImportError> {
    let bytes = crate::text::strip_bom(bytes);
    let session: Session = serde_json::from_slice(bytes).map_err(|e| ImportError::TestProxy {
        path: path.to_owned(),
        at: format!("line {}, column {}", e.line(), e.column()),
        message: e.to_string(),
    })?;
    let total = session.entries.len();
    let mut out = Imported::default();
    for (i, entry) in session.entries.into_iter().enumerate() {
        let resp_headers = headers(&entry.response_headers);
        let typed = resp_headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && is_stream_type(v));
        let Some(body) = body_bytes(&entry.response_body).filter(|b| !b.is_empty()) else {
            continue;
        };
        if !typed && !is_stream_body(&body) {
            continue;
        }
        if !out.has_room(options) {
            out.skipped_streams += 1;
            continue;
        }
        let mut request = RequestInfo {
            method: entry.method.clone(),
            url: entry.uri.clone(),
            headers: headers(&entry.request_headers),
            body: match &entry.request_body {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
        };
        if !options.keep_secrets {
            request.redact();
        }
        let mut headers = resp_headers;
        if !options.keep_secrets {
            redact_headers(&mut headers);
        }
        let status = entry
            .status
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(0);
        let title = format!(
            "{} {} (test-proxy entry {} of {})",
            request.method,
            request.url,
            i + 1,
            total
        );
        let notes = vec![
            format!(
                "Imported from entry {} of the test-proxy session record {}.",
                i + 1,
                file_name(path)
            ),
            format!("A test-proxy record {NO_TIMING_NOTE}"),
        ];
        let origin = BodyOrigin {
            path,
            at: format!("test-proxy entry {}", i + 1),
        };
        let mut rec = body_recording(
            &body,
            title,
            ImportFormat::TestProxy,
            notes,
            origin,
            options,
        )?;
        rec.request = Some(request);
        rec.response = Some(ResponseInfo { status, headers });
        out.push(rec, options);
    }
    if out.recordings.is_empty() {
        return Err(ImportError::NoStreams {
            path: path.to_owned(),
            why: format!("none of its {total} entries has an event-stream response"),
        });
    }
    Ok(out)
}
