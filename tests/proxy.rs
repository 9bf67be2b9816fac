//! The proxy passes non-streaming responses through as they are: a JSON answer keeps its
//! `Content-Length` (not re-framed as chunked); a complete LLM response is captured after it has
//! passed. The upstream and the proxy
//! run on 127.0.0.1:0; every wait is bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read as _, Write as _};
use std::time::Duration;

const JSON: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#;

/// Sends a raw HTTP/1.1 request to `url` (`http://127.0.0.1:PORT`) and returns the whole raw
/// response (the proxy closes or the read times out).
fn raw_request(url: &str, request: &str) -> String {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut sock = std::net::TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match sock.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
        }
        let text = String::from_utf8_lossy(&response);
        if text.contains("\r\n\r\n") && text.ends_with(JSON) {
            break;
        }
    }
    String::from_utf8_lossy(&response).into_owned()
}

#[test]
fn json_responses_keep_their_content_length() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, _requests) =
        common::canned_upstream("HTTP/1.1 200 OK\r\ncontent-type: application/json", JSON);
    let captures = dir.path().join("captures");
    let (_proxy, proxy, lines) = common::start_server(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--out",
        captures.to_str().unwrap(),
    ]);
    let response = raw_request(
        &proxy,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
    );
    let (head, body) = response.split_once("\r\n\r\n").expect(&response);
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.lines()
            .any(|l| l == format!("content-length: {}", JSON.len())),
        "{head}"
    );
    assert!(!head.contains("transfer-encoding"), "{head}");
    assert_eq!(body, JSON);
    // Not an event stream, but one complete chat completion to a request without
    // "stream": true (issue 12): captured once it has arrived whole, as a complete response.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut reported = false;
    while !reported && std::time::Instant::now() < deadline {
        reported = lines
            .recv_timeout(Duration::from_millis(200))
            .is_ok_and(|l| l.contains(".ron"));
    }
    assert!(reported, "the proxy reported no capture");
    let captured = std::fs::read_dir(&captures).map_or(0, |d| d.count());
    assert_eq!(captured, 1);
}
