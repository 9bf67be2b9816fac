//! HAR files (HTTP Archive 1.2: browser devtools "Save all as HAR", mitmproxy, Charles, Proxyman):
//! every entry whose response is an event stream becomes a recording with its request (secrets
//! redacted) and response head. HAR stores the body as one string (or base64 when
//! `content.encoding` is `base64`), so chunk boundaries and timing are lost; the recording says so.

use std::path::Path;

use serde::Deserialize;

use super::{
    BodyOrigin, ImportError, ImportFormat, Imported, NO_TIMING_NOTE, body_recording, file_name,
};
use crate::content::{is_stream_body, is_stream_type};
use crate::probe::ReadOptions;
use crate::recording::{RequestInfo, ResponseInfo, redact_headers};
use crate::wire::base64::decode as base64_decode;

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    entries: Option<Vec<Entry>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Entry {
    #[serde(rename = "startedDateTime")]
    started: String,
    request: Request,
    response: Option<Response>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Request {
    method: String,
    url: String,
    headers: Vec<Header>,
    #[serde(rename = "postData")]
    post_data: Option<PostData>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PostData {
    text: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Response {
    status: Option<serde_json::Number>,
    headers: Vec<Header>,
    content: Content,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Content {
    #[serde(rename = "mimeType")]
    mime_type: Option<String>,
    text: Option<String>,
    encoding: Option<String>,
}

/// Import every event-stream entry of a HAR file (at most `options.max_streams`; the rest counted).
/// Secrets in requests and response headers are redacted unless `options.keep_secrets`.
pub fn import(path: &Path, bytes: &[u8], options: &ReadOptions) -> Result<Imported, ImportError> {
    let bytes = crate::text::strip_bom(bytes);
    let har: Har = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_data() {
            ImportError::Har {
                path: path.to_owned(),
                at: format!("line {}, column {}", e.line(), e.column()),
                message: e.to_string(),
            }
        } else {
            ImportError::HarSyntax {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
                message: strip_position(&e),
            }
        }
    })?;
    let Some(entries) = har.log.entries else {
        return Err(ImportError::Har {
            path: path.to_owned(),
            at: "log".into(),
            message: "no `entries` list".into(),
        });
    };
    let total = entries.len();
    let mut out = Imported::default();
    let mut without_body = 0usize;
    let mut undecodable: Vec<String> = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let Some(resp) = entry.response else { continue };
        let header_type = resp
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            .map(|h| h.value.as_str());
        let typed = resp
            .content
            .mime_type
            .as_deref()
            .is_some_and(is_stream_type)
            || header_type.is_some_and(is_stream_type);
        let body = match (&resp.content.text, resp.content.encoding.as_deref()) {
            (None, _) => None,
            (Some(t), Some(enc)) if enc.eq_ignore_ascii_case("base64") => {
                Some(base64_decode(t).map_err(|m| ImportError::Har {
                    path: path.to_owned(),
                    at: format!("log.entries[{i}].response.content.text"),
                    message: m,
                })?)
            }
            (Some(t), _) => Some(t.as_bytes().to_vec()),
        };
        let encoding = resp
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-encoding"))
            .map(|h| h.value.clone());
        // Browsers store the decoded text whatever `Content-Encoding` says; a proxy may keep the
        // compressed bytes (base64): those are decoded, within a size limit.
        let body = match body
            .map(|b| super::decode_body(b, encoding.as_deref(), super::max_decoded_body(options)))
        {
            Some(Err(why)) => {
                if typed {
                    undecodable.push(format!("entry {} {why}", i + 1));
                }
                continue;
            }
            Some(Ok(b)) => Some(b),
            None => None,
        };
        let body = match body {
            Some(b) if !b.is_empty() && (typed || is_stream_body(&b)) => b,
            _ => {
                if typed {
                    without_body += 1;
                }
                continue;
            }
        };
        if !out.has_room(options) {
            out.skipped_streams += 1;
            continue;
        }
        let mut request = RequestInfo {
            method: entry.request.method.clone(),
            url: entry.request.url.clone(),
            headers: entry
                .request
                .headers
                .into_iter()
                .map(|h| (h.name, h.value))
                .collect(),
            body: entry
                .request
                .post_data
                .and_then(|p| p.text)
                .unwrap_or_default(),
        };
        if !options.keep_secrets {
            request.redact();
        }
        let mut headers: Vec<(String, String)> = resp
            .headers
            .into_iter()
            .map(|h| (h.name, h.value))
            .collect();
        if !options.keep_secrets {
            redact_headers(&mut headers);
        }
        let status = resp
            .status
            .and_then(|n| n.as_u64())
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(0);
        let title = format!(
            "{} {} (HAR entry {} of {})",
            request.method,
            request.url,
            i + 1,
            total
        );
        let notes = vec![
            format!(
                "Imported from entry {} of the HAR file {}.",
                i + 1,
                file_name(path)
            ),
            format!("HAR {NO_TIMING_NOTE}"),
        ];
        let origin = BodyOrigin {
            path,
            at: format!("HAR entry {}", i + 1),
        };
        let mut rec = body_recording(&body, title, ImportFormat::Har, notes, origin, options)?;
        rec.meta.created = entry.started;
        rec.request = Some(request);
        rec.response = Some(ResponseInfo { status, headers });
        out.push(rec, options);
    }
    if out.recordings.is_empty() {
        let why = if !undecodable.is_empty() {
            undecodable.join("; ")
        } else if without_body > 0 {
            format!(
                "{without_body} event-stream entries have no saved body (some browsers do not keep streamed bodies; export from a proxy such as mitmproxy instead)"
            )
        } else {
            format!("none of its {total} entries is a text/event-stream or NDJSON response")
        };
        return Err(ImportError::NoStreams {
            path: path.to_owned(),
            why,
        });
    }
    Ok(out)
}

/// serde_json's message without its trailing " at line L column C" (the error shows it itself).
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
