//! The smallest HTTP/1.1 client the example clients need (the server is sse-replay's own, on
//! loopback): one POST with `Connection: close`, the body read to the end — or to where the
//! connection broke — and chunked transfer coding removed. Standard library only.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;

/// What came back: the body, and whether the connection ended cleanly (a complete chunked body).
pub struct Response {
    pub body: Vec<u8>,
    /// The naive client never looks (that is part of being naive).
    #[allow(dead_code)]
    pub complete: bool,
}

/// POSTs `json` to `path` on the server at `$SSE_REPLAY_URL` (`http://host:port`).
pub fn post(path: &str, json: &str) -> Result<Response, String> {
    let base =
        std::env::var("SSE_REPLAY_URL").map_err(|_| "SSE_REPLAY_URL is not set".to_owned())?;
    let host = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut conn =
        TcpStream::connect(&host).map_err(|e| format!("cannot connect to {host}: {e}"))?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    );
    conn.write_all(request.as_bytes())
        .map_err(|e| format!("cannot send the request: {e}"))?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let mut broken = false;
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(_) => {
                broken = true;
                break;
            }
        }
    }
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no HTTP response head")?;
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let body = &raw[head_end + 4..];
    if head.contains("transfer-encoding: chunked") {
        let (body, complete) = dechunk(body);
        Ok(Response {
            body,
            complete: complete && !broken,
        })
    } else {
        Ok(Response {
            body: body.to_vec(),
            complete: !broken,
        })
    }
}

/// Removes chunked transfer coding; `false` when the terminating zero-size chunk never came.
fn dechunk(mut body: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size else { break };
        if size == 0 {
            return (out, true);
        }
        let start = eol + 2;
        let Some(chunk) = body.get(start..start + size) else {
            out.extend_from_slice(&body[start.min(body.len())..]);
            break;
        };
        out.extend_from_slice(chunk);
        body = body.get(start + size + 2..).unwrap_or_default();
    }
    (out, false)
}
