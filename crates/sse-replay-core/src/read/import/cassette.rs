//! VCR-style YAML cassettes: vcrpy, pytest-recording and pydantic-ai's variant, Ruby's vcr gem
//! (ruby_llm and many Ruby SDKs) and Go's go-vcr.
//!
//! ```yaml
//! interactions:
//! - request:
//!     method: POST
//!     uri: https://api.openai.com/v1/chat/completions
//!     headers: {authorization: [Bearer sk-…]}      # maps of lists
//!     body: '{"model": …}'                          # pydantic-ai: `parsed_body:` (a mapping)
//!   response:
//!     status: {code: 200, message: OK}
//!     headers: {content-type: [text/event-stream]}
//!     body: {string: "data: …\n\n"}                 # may be `!!binary` base64
//! version: 1
//! ```
//!
//! Ruby's vcr gem writes `http_interactions:` with `method: post`, bodies as
//! `{encoding: UTF-8, string: …}` or, for bytes kept exactly, `{encoding: ASCII-8BIT,
//! base64_string: …}` (or Psych's `string: !binary …`), and `recorded_at` beside each
//! interaction. go-vcr (versions 1 and 2) writes `interactions:` with the request's `url`, each
//! body a string, and `status: 200 OK` with `code: 200` beside it.
//!
//! Every interaction whose response is an event stream (SSE, JSON lines, binary AWS event stream
//! frames; a gzip-encoded body decoded first) becomes a recording. Cassettes keep the body whole,
//! so chunk boundaries and timing are lost; the recording says so.

use std::path::Path;

use serde_yaml_ng::Value;

use super::{
    BodyOrigin, ImportError, ImportFormat, Imported, NO_TIMING_NOTE, body_recording, file_name,
};
use crate::content::{is_stream_body, is_stream_type};
use crate::probe::ReadOptions;
use crate::recording::{RequestInfo, ResponseInfo, redact_headers};
use crate::wire::base64::decode as base64_decode;

/// Import every event-stream interaction of a cassette (at most `options.max_streams`; the rest
/// counted). Nesting deeper than [`MAX_FLOW_DEPTH`] is refused before the YAML reader sees it.
/// Secrets in requests and response headers are redacted unless `options.keep_secrets`.
pub fn import(path: &Path, bytes: &[u8], options: &ReadOptions) -> Result<Imported, ImportError> {
    if let Some(line) = too_deep(bytes, MAX_FLOW_DEPTH) {
        return Err(ImportError::TooDeep {
            path: path.to_owned(),
            line,
            limit: MAX_FLOW_DEPTH,
        });
    }
    let doc: Value = serde_yaml_ng::from_slice(bytes).map_err(|e| {
        let loc = e.location();
        ImportError::CassetteSyntax {
            path: path.to_owned(),
            line: loc.as_ref().map(|l| l.line()),
            column: loc.map(|l| l.column()),
            message: e.to_string(),
        }
    })?;
    let bad = |at: String, message: String| ImportError::Cassette {
        path: path.to_owned(),
        at,
        message,
    };
    let Some((key, interactions)) = crate::content::INTERACTION_KEYS
        .iter()
        .find_map(|k| doc.get(*k).map(|v| (*k, v)))
    else {
        return Err(bad(
            "the top level".into(),
            "no `interactions` list (vcrpy, go-vcr) or `http_interactions` list (Ruby's vcr)"
                .into(),
        ));
    };
    let Some(interactions) = interactions.as_sequence() else {
        return Err(bad(key.into(), "not a list".into()));
    };
    let total = interactions.len();
    let mut out = Imported::default();
    let mut skipped: Vec<String> = Vec::new();
    for (i, it) in interactions.iter().enumerate() {
        let at = |field: &str| format!("{key}[{i}].{field}");
        let Some(resp) = it.get("response") else {
            return Err(bad(at("response"), "missing".into()));
        };
        let req = it.get("request");
        let resp_headers =
            headers(resp.get("headers")).map_err(|m| bad(at("response.headers"), m))?;
        let content_type = resp_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str());
        let encoding = resp_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-encoding"))
            .map(|(_, v)| v.to_ascii_lowercase());
        let body = response_body(resp).map_err(|m| bad(at("response.body"), m))?;
        let typed = content_type.is_some_and(is_stream_type);
        let Some(body) = body.filter(|b| !b.is_empty()) else {
            if typed {
                skipped.push(format!(
                    "interaction {} has an event-stream response without a body",
                    i + 1
                ));
            }
            continue;
        };
        // A body kept as it came off the wire (gzip) is decoded, within a size limit.
        let body =
            match super::decode_body(body, encoding.as_deref(), super::max_decoded_body(options)) {
                Ok(b) => b,
                Err(why) => {
                    if typed {
                        skipped.push(format!("interaction {} {why}", i + 1));
                    }
                    continue;
                }
            };
        if !typed && !is_stream_body(&body) {
            continue;
        }
        if !out.has_room(options) {
            out.skipped_streams += 1;
            continue;
        }
        let mut request = match req {
            Some(r) => request_info(r).map_err(|m| bad(at("request"), m))?,
            None => RequestInfo::default(),
        };
        if !options.keep_secrets {
            request.redact();
        }
        let mut headers = resp_headers;
        if !options.keep_secrets {
            redact_headers(&mut headers);
        }
        let status = status_code(resp);
        let title = format!(
            "{} {} (cassette interaction {} of {})",
            request.method,
            request.url,
            i + 1,
            total
        );
        let notes = vec![
            format!(
                "Imported from interaction {} of the cassette {}.",
                i + 1,
                file_name(path)
            ),
            format!("A cassette {NO_TIMING_NOTE}"),
        ];
        let origin = BodyOrigin {
            path,
            at: format!("cassette interaction {}", i + 1),
        };
        let mut rec = body_recording(&body, title, ImportFormat::Cassette, notes, origin, options)?;
        rec.request = Some(request);
        rec.response = Some(ResponseInfo { status, headers });
        out.push(rec, options);
    }
    if out.recordings.is_empty() {
        let why = if skipped.is_empty() {
            format!("none of its {total} interactions has an event-stream response")
        } else {
            skipped.join("; ")
        };
        return Err(ImportError::NoStreams {
            path: path.to_owned(),
            why,
        });
    }
    Ok(out)
}

/// The response's status: `status: {code: 200, message: OK}` (vcrpy, Ruby), `status: 200`, or
/// go-vcr's `status: 200 OK` with `code: 200` beside it; 0 when none says.
fn status_code(resp: &Value) -> u16 {
    let number = |v: &Value| -> Option<u16> {
        match v {
            Value::Number(n) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
            Value::String(s) => s.split_whitespace().next()?.parse().ok(),
            _ => None,
        }
    };
    resp.get("status")
        .and_then(|s| s.get("code").map_or_else(|| number(s), number))
        .or_else(|| resp.get("code").and_then(number))
        .unwrap_or(0)
}

/// Deepest nesting of flow collections (`[`, `{`) accepted. The YAML reader takes time quadratic
/// in this depth (200 KB of `[` took 22 s), and its deserializer refuses more than 128 levels
/// anyway; the margin absorbs brackets this quick scan counts in plain and block scalars.
pub const MAX_FLOW_DEPTH: usize = 1000;

/// A linear pre-scan: the 1-based line where flow collections nest deeper than `limit`, if they
/// do. Quoted scalars (only where a token starts, as in YAML) and comments are skipped; closing
/// brackets never take the depth below zero, so text cannot hide an opening one.
pub fn too_deep(bytes: &[u8], limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut line = 1usize;
    let mut i = 0usize;
    // The previous byte outside a scalar: a quote starts a scalar only after one of these.
    let mut token_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line += 1;
                token_start = true;
            }
            b'#' if token_start => {
                // A comment runs to the end of the line.
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'"' | b'\'' if token_start => {
                // Skip the quoted scalar: `\x` escapes in double quotes, `''` in single ones
                // (which the loop reads as two scalars back to back: same result).
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b {
                    if bytes[j] == b'\n' {
                        line += 1;
                    }
                    if b == b'"' && bytes[j] == b'\\' {
                        j += 1;
                        if bytes.get(j) == Some(&b'\n') {
                            line += 1;
                        }
                    }
                    j += 1;
                }
                i = j + 1;
                token_start = false;
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(line);
                }
                token_start = true;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                token_start = false;
            }
            b',' | b':' | b'-' | b'?' | b' ' | b'\t' | b'\r' => token_start = true,
            _ => token_start = false,
        }
        i += 1;
    }
    None
}

/// A text or `!!binary` scalar as bytes.
fn scalar_bytes(v: &Value) -> Result<Option<Vec<u8>>, String> {
    match v {
        Value::Null => Ok(None),
        // serde_yaml_ng resolves `!!binary` to a plain string: a body made only of base64
        // characters (no `:`, `{` or spaces between words, so never SSE or JSON) is base64.
        Value::String(s) if looks_base64(s) => base64_decode(s)
            .map(Some)
            .map_err(|e| format!("!!binary body: {e}")),
        Value::String(s) => Ok(Some(s.as_bytes().to_vec())),
        Value::Tagged(t) if t.tag.to_string().ends_with("binary") => match &t.value {
            Value::String(s) => base64_decode(s)
                .map(Some)
                .map_err(|e| format!("!!binary body: {e}")),
            _ => Err("!!binary tag on something that is not a string".into()),
        },
        Value::Tagged(t) => scalar_bytes(&t.value),
        other => Err(format!("expected a string, found {}", kind(other))),
    }
}

fn looks_base64(s: &str) -> bool {
    let t = s.trim();
    t.len() >= 8
        && !t.contains(' ')
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\n' | b'\r'))
}

/// `body: {string: …}`, Ruby vcr's `body: {base64_string: …}`, `body: "…"`, or httpx-era
/// `content: "…"`.
fn response_body(resp: &Value) -> Result<Option<Vec<u8>>, String> {
    match resp.get("body") {
        Some(b @ Value::Mapping(_)) => mapped_body(b),
        Some(b) => scalar_bytes(b),
        None => match resp.get("content") {
            Some(c) => scalar_bytes(c),
            None => Ok(None),
        },
    }
}

/// A body written as a mapping: `string` (text, or `!binary` base64), Ruby vcr's
/// `base64_string`; pydantic-ai's `parsed_body` (or nothing) gives no bytes here.
fn mapped_body(b: &Value) -> Result<Option<Vec<u8>>, String> {
    if let Some(s) = b.get("string") {
        return scalar_bytes(s);
    }
    match b.get("base64_string") {
        Some(Value::String(s)) => base64_decode(s)
            .map(Some)
            .map_err(|e| format!("base64_string: {e}")),
        Some(Value::Null) | None => Ok(None),
        Some(other) => Err(format!("base64_string is {}", kind(other))),
    }
}

/// The request: method, uri, headers, and `body` (a string, `{string: …}`) or pydantic-ai's
/// `parsed_body` (a mapping, written back as JSON).
fn request_info(r: &Value) -> Result<RequestInfo, String> {
    let text = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    let body = match (r.get("body"), r.get("parsed_body")) {
        (_, Some(parsed)) => {
            serde_json::to_string(parsed).map_err(|e| format!("parsed_body: {e}"))?
        }
        (Some(b @ Value::Mapping(_)), None) => mapped_body(b)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default(),
        (Some(b), None) => scalar_bytes(b)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default(),
        (None, None) => String::new(),
    };
    let url = if r.get("uri").is_some() {
        text("uri")
    } else {
        text("url")
    };
    Ok(RequestInfo {
        // Ruby's vcr writes `method: post`.
        method: text("method").to_ascii_uppercase(),
        url,
        headers: headers(r.get("headers"))?,
        body,
    })
}

/// Headers as a mapping of name → list of values (vcrpy) or name → value.
fn headers(v: Option<&Value>) -> Result<Vec<(String, String)>, String> {
    let Some(v) = v else { return Ok(Vec::new()) };
    if v.is_null() {
        return Ok(Vec::new());
    }
    let Some(m) = v.as_mapping() else {
        return Err(format!("headers should be a mapping, found {}", kind(v)));
    };
    let mut out = Vec::new();
    for (k, v) in m {
        let name = scalar_text(k).ok_or_else(|| format!("header name is {}", kind(k)))?;
        match v {
            Value::Sequence(vals) => {
                for val in vals {
                    out.push((
                        name.clone(),
                        scalar_text(val)
                            .ok_or_else(|| format!("header {name:?} has a {} value", kind(val)))?,
                    ));
                }
            }
            other => out.push((
                name.clone(),
                scalar_text(other)
                    .ok_or_else(|| format!("header {name:?} has a {} value", kind(other)))?,
            )),
        }
    }
    Ok(out)
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_scan() {
        assert_eq!(too_deep(b"a: [[1], {b: [2]}]", 3), None);
        assert_eq!(too_deep(b"a: [[1], {b: [[2]]}]", 3), Some(1));
        // Brackets inside quoted scalars and comments do not count; closing ones cannot hide
        // opening ones.
        assert_eq!(too_deep(b"a: \"[[[[\"\nb: '{{{{'  # [[[[\n", 1), None);
        assert_eq!(too_deep(b"x: [\"]]]]\", [\"]]]]\", [[", 3), Some(1));
        assert_eq!(too_deep(b"a: \"\\\"[[[\"\nb:\n  - [[[[", 2), Some(3));
        // A quote in the middle of a plain scalar is text, not the start of a quoted one.
        assert_eq!(too_deep(b"[a\"[[[", 3), Some(1));
        let deep = [b'['; 200_000];
        assert_eq!(too_deep(&deep, MAX_FLOW_DEPTH), Some(1));
    }

    #[test]
    fn deep_cassette_is_refused_before_parsing() {
        let mut text = b"interactions:\n- ".to_vec();
        text.extend(std::iter::repeat_n(b'[', 200_000));
        let e =
            import(Path::new("deep.yaml"), &text, &ReadOptions::default()).expect_err("too deep");
        assert!(
            matches!(
                e,
                ImportError::TooDeep {
                    line: 2,
                    limit: MAX_FLOW_DEPTH,
                    ..
                }
            ),
            "{e}"
        );
    }
}
