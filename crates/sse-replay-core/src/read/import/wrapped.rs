//! Bodies kept inside another text: a file that is only the base64 of a binary stream (as test
//! suites keep AWS event stream fixtures: `*.eventstream.base64.txt`), and a JSON capture document
//! holding one response whose body is base64 (`response.bodyBase64`, as vercel/ai keeps its live
//! Bedrock captures) or text (`response.body`), with its status and content type.
//!
//! Both become one recording of the decoded body; like every import, no read boundaries or
//! timing survive.

use std::path::Path;

use serde_json::Value;

use super::{
    BodyOrigin, ImportError, ImportFormat, Imported, NO_TIMING_NOTE, body_recording, file_name,
};
use crate::content::{is_stream_body, is_stream_type};
use crate::probe::ReadOptions;
use crate::recording::{ResponseInfo, redact_headers};
use crate::wire::base64::decode as base64_decode;

/// Import a base64 text file as the stream it encodes.
pub fn import_base64(
    path: &Path,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Imported, ImportError> {
    let text = String::from_utf8_lossy(crate::text::strip_bom(bytes));
    let body = base64_decode(text.trim()).map_err(|message| ImportError::Capture {
        path: path.to_owned(),
        at: "the file".into(),
        message,
    })?;
    let notes = vec![
        format!(
            "Imported from {}, the base64 text of a stream ({} decoded).",
            file_name(path),
            crate::text::plural(body.len(), "byte")
        ),
        format!("A base64 body {NO_TIMING_NOTE}"),
    ];
    let origin = BodyOrigin {
        path,
        at: "the decoded body".into(),
    };
    let rec = body_recording(
        &body,
        file_name(path),
        ImportFormat::Base64Body,
        notes,
        origin,
        options,
    )?;
    let mut out = Imported::default();
    out.push(rec, options);
    Ok(out)
}

/// Import a JSON capture: `response.bodyBase64` (or `response.body`, or a top-level
/// `bodyBase64`), with `response.status` and `response.contentType` / `response.headers`.
pub fn import_json_capture(
    path: &Path,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Imported, ImportError> {
    let bad = |at: &str, message: String| ImportError::Capture {
        path: path.to_owned(),
        at: at.to_owned(),
        message,
    };
    let doc: Value = serde_json::from_slice(crate::text::strip_bom(bytes)).map_err(|e| {
        bad(
            &format!("line {}, column {}", e.line(), e.column()),
            "not valid JSON".into(),
        )
    })?;
    let response = doc
        .get("response")
        .filter(|r| r.is_object())
        .unwrap_or(&doc);
    let at = if response == &doc { "" } else { "response." };
    let body = match (response.get("bodyBase64"), response.get("body")) {
        (Some(Value::String(b64)), _) => {
            base64_decode(b64).map_err(|m| bad(&format!("{at}bodyBase64"), m))?
        }
        (_, Some(Value::String(text))) => text.as_bytes().to_vec(),
        _ => {
            return Err(ImportError::NoStreams {
                path: path.to_owned(),
                why: "no bodyBase64 or body string in the capture".into(),
            });
        }
    };
    let mut headers: Vec<(String, String)> = match response.get("headers") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                (k.clone(), v)
            })
            .collect(),
        _ => Vec::new(),
    };
    if let Some(ct) = response.get("contentType").and_then(Value::as_str)
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        headers.push(("content-type".into(), ct.to_owned()));
    }
    let typed = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && is_stream_type(v));
    if body.is_empty() || !(typed || is_stream_body(&body)) {
        return Err(ImportError::NoStreams {
            path: path.to_owned(),
            why: "the captured body is not an event stream".into(),
        });
    }
    if !options.keep_secrets {
        redact_headers(&mut headers);
    }
    let status = response
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|n| u16::try_from(n).ok())
        .unwrap_or(0);
    let model = doc.get("modelId").and_then(Value::as_str);
    let title = match model {
        Some(m) => format!("{m} ({})", file_name(path)),
        None => file_name(path),
    };
    let notes = vec![
        format!(
            "Imported from the JSON capture {} ({at}{}).",
            file_name(path),
            if response.get("bodyBase64").is_some() {
                "bodyBase64"
            } else {
                "body"
            }
        ),
        format!("A JSON capture {NO_TIMING_NOTE}"),
    ];
    let origin = BodyOrigin {
        path,
        at: "the captured body".into(),
    };
    let mut rec = body_recording(
        &body,
        title,
        ImportFormat::JsonCapture,
        notes,
        origin,
        options,
    )?;
    if let Some(t) = doc.get("capturedAt").and_then(Value::as_str) {
        rec.meta.created = t.to_owned();
    }
    rec.response = Some(ResponseInfo { status, headers });
    let mut out = Imported::default();
    out.push(rec, options);
    Ok(out)
}
