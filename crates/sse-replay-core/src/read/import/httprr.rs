//! httprr traces (Go: `golang.org/x/oscar/internal/httprr` and its copies in langchaingo and other
//! Go SDKs): a header line `httprr trace v1`, then one record per exchange, `n1 n2\n` followed by
//! the request as written on the wire (`n1` bytes, `Request.WriteProxy`: the absolute URL in the
//! request line) and the response (`n2` bytes, `Response.Write`: a stream of unknown length is
//! written with `Transfer-Encoding: chunked`).
//!
//! Every exchange whose response is an event stream (by its `Content-Type`, or by its body; a
//! gzip body decoded first) becomes a recording. A trace keeps the body whole, so chunk boundaries
//! and timing are lost; the recording says so.

use std::path::Path;

use super::{
    BodyOrigin, ImportError, ImportFormat, Imported, NO_TIMING_NOTE, body_recording, file_name,
};
use crate::content::{is_stream_body, is_stream_type};
use crate::probe::ReadOptions;
use crate::recording::{RequestInfo, ResponseInfo, redact_headers};

/// One HTTP message as written on the wire: its first line, headers and body (still transfer-
/// encoded).
struct Message<'a> {
    first_line: String,
    headers: Vec<(String, String)>,
    body: &'a [u8],
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Split a message into its head and body.
fn message(bytes: &[u8]) -> Result<Message<'_>, String> {
    let end = memchr::memmem::find(bytes, b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| memchr::memmem::find(bytes, b"\n\n").map(|i| (i, i + 2)))
        .ok_or("no blank line after its headers")?;
    let head = String::from_utf8_lossy(&bytes[..end.0]);
    let mut lines = head.lines();
    let first_line = lines.next().unwrap_or_default().trim().to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Ok(Message {
        first_line,
        headers,
        body: &bytes[end.1..],
    })
}

/// A `Transfer-Encoding: chunked` body decoded (trailers dropped).
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len());
    loop {
        let eol = memchr::memchr(b'\n', body).ok_or("a chunk size line without its end")?;
        let line = String::from_utf8_lossy(&body[..eol]);
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| {
            format!(
                "chunk size {:?} is not hexadecimal",
                crate::text::truncate(size, 20)
            )
        })?;
        body = &body[eol + 1..];
        if size == 0 {
            return Ok(out);
        }
        let data = body
            .get(..size)
            .ok_or_else(|| format!("a chunk of {size} bytes is cut short"))?;
        out.extend_from_slice(data);
        body = &body[size..];
        body = body
            .strip_prefix(b"\r\n")
            .or_else(|| body.strip_prefix(b"\n"))
            .unwrap_or(body);
    }
}

/// Import every event-stream exchange of a trace (at most `options.max_streams`; the rest
/// counted). Secrets in requests and response headers are redacted unless `options.keep_secrets`.
pub fn import(path: &Path, bytes: &[u8], options: &ReadOptions) -> Result<Imported, ImportError> {
    let bad = |at: String, message: String| ImportError::Capture {
        path: path.to_owned(),
        at,
        message,
    };
    let text = crate::text::strip_bom(bytes);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let mut rest = text[start..]
        .strip_prefix(crate::content::HTTPRR_HEADER)
        .ok_or_else(|| bad("the first line".into(), "not `httprr trace v1`".into()))?;
    rest = rest.strip_prefix(b"\r").unwrap_or(rest);
    rest = rest.strip_prefix(b"\n").unwrap_or(rest);
    let mut out = Imported::default();
    let mut skipped: Vec<String> = Vec::new();
    let mut n = 0usize;
    while !rest.is_empty() {
        n += 1;
        let at = |what: &str| format!("record {n} ({what})");
        let eol = memchr::memchr(b'\n', rest)
            .ok_or_else(|| bad(at("sizes"), "no `n1 n2` line".into()))?;
        let sizes = String::from_utf8_lossy(&rest[..eol]);
        let parsed: Vec<Option<usize>> = sizes.split_whitespace().map(|s| s.parse().ok()).collect();
        let [Some(n1), Some(n2)] = parsed[..] else {
            return Err(bad(
                at("sizes"),
                format!(
                    "expected two lengths, found {:?}",
                    crate::text::truncate(&sizes, 40)
                ),
            ));
        };
        let record = &rest[eol + 1..];
        let total = n1
            .checked_add(n2)
            .filter(|&t| t <= record.len())
            .ok_or_else(|| {
                bad(
                    at("sizes"),
                    format!(
                        "{n1} + {n2} bytes claimed, {} left in the file",
                        record.len()
                    ),
                )
            })?;
        let (req_bytes, resp_bytes) = record[..total].split_at(n1);
        rest = &record[total..];
        let resp = message(resp_bytes).map_err(|m| bad(at("response"), m))?;
        let content_type = header(&resp.headers, "content-type").map(str::to_owned);
        let typed = content_type.as_deref().is_some_and(is_stream_type);
        let chunked = header(&resp.headers, "transfer-encoding")
            .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
        let body = if chunked {
            match dechunk(resp.body) {
                Ok(b) => b,
                Err(why) => {
                    if typed {
                        skipped.push(format!("exchange {n}'s body: {why}"));
                    }
                    continue;
                }
            }
        } else {
            let len = header(&resp.headers, "content-length").and_then(|l| l.parse().ok());
            resp.body[..len.unwrap_or(resp.body.len()).min(resp.body.len())].to_vec()
        };
        let encoding = header(&resp.headers, "content-encoding").map(str::to_ascii_lowercase);
        let body =
            match super::decode_body(body, encoding.as_deref(), super::max_decoded_body(options)) {
                Ok(b) => b,
                Err(why) => {
                    if typed {
                        skipped.push(format!("exchange {n} {why}"));
                    }
                    continue;
                }
            };
        if body.is_empty() || !typed && !is_stream_body(&body) {
            continue;
        }
        if !out.has_room(options) {
            out.skipped_streams += 1;
            continue;
        }
        let req = message(req_bytes).map_err(|m| bad(at("request"), m))?;
        let mut words = req.first_line.split_whitespace();
        let method = words.next().unwrap_or_default().to_owned();
        let target = words.next().unwrap_or_default();
        let url = if target.starts_with('/') {
            let host = header(&req.headers, "host").unwrap_or_default();
            format!("https://{host}{target}")
        } else {
            target.to_owned()
        };
        let mut request = RequestInfo {
            method,
            url,
            headers: req.headers,
            body: String::from_utf8_lossy(req.body).into_owned(),
        };
        let mut headers = resp.headers;
        if !options.keep_secrets {
            request.redact();
            redact_headers(&mut headers);
        }
        let status = resp
            .first_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let title = format!("{} {} (httprr exchange {n})", request.method, request.url);
        let notes = vec![
            format!(
                "Imported from exchange {n} of the httprr trace {}.",
                file_name(path)
            ),
            format!("An httprr trace {NO_TIMING_NOTE}"),
        ];
        let origin = BodyOrigin {
            path,
            at: format!("httprr exchange {n}"),
        };
        let mut rec = body_recording(&body, title, ImportFormat::Httprr, notes, origin, options)?;
        rec.request = Some(request);
        rec.response = Some(ResponseInfo { status, headers });
        out.push(rec, options);
    }
    if out.recordings.is_empty() {
        let why = if skipped.is_empty() {
            format!(
                "none of its {} has an event-stream response",
                crate::text::plural(n, "exchange")
            )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_decoded() {
        assert_eq!(
            dechunk(b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n").ok(),
            Some(b"hello, world".to_vec())
        );
        assert!(dechunk(b"zz\r\n").is_err());
        assert!(dechunk(b"10\r\nshort").is_err());
    }

    #[test]
    fn a_chunked_event_stream_exchange_is_a_recording() {
        let req = "POST https://api.example.com/v1/chat HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer sk-secret\r\n\r\n{}";
        let body = "data: {\"a\":1}\n\ndata: [DONE]\n\n";
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        );
        let json_resp =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        let trace = format!(
            "httprr trace v1\n{} {}\n{req}{json_resp}{} {}\n{req}{resp}",
            req.len(),
            json_resp.len(),
            req.len(),
            resp.len()
        );
        let got = import(
            Path::new("t.httprr"),
            trace.as_bytes(),
            &ReadOptions::default(),
        )
        .expect("imports");
        assert_eq!(got.recordings.len(), 1, "the JSON exchange is not a stream");
        let rec = &got.recordings[0];
        assert_eq!(rec.body(), body.as_bytes());
        let request = rec.request.as_ref().expect("request");
        assert_eq!(
            (request.method.as_str(), request.url.as_str()),
            ("POST", "https://api.example.com/v1/chat")
        );
        assert!(
            request
                .headers
                .iter()
                .all(|(_, v)| !v.contains("sk-secret"))
        );
        assert_eq!(rec.response.as_ref().map(|r| r.status), Some(200));
        assert!(
            rec.meta.title.contains("httprr exchange 2"),
            "{}",
            rec.meta.title
        );
        // Lengths that run past the file are an error naming the record.
        let e = import(
            Path::new("t.httprr"),
            b"httprr trace v1\n10 900\nGET",
            &ReadOptions::default(),
        )
        .expect_err("cut");
        assert!(e.to_string().contains("record 1 (sizes)"), "{e}");
    }
}
