//! The proxy passes non-streaming responses through as they are: a JSON answer keeps its
//! `Content-Length` (not re-framed as chunked); a complete LLM response is captured after it has
//! passed. The upstream and the proxy
//! run on 127.0.0.1:0; every wait is bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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
    // "stream": true: captured once it has arrived whole, as a complete response.
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

/// The core reports one `Exchange` per request (redacted, with the model) and then its end; a
/// capture carries its exchange's id; a request to an upstream that is down is an exchange too
/// (502, with the error).
#[test]
fn every_request_is_reported_as_an_exchange() {
    use sse_replay_net::proxy::{self, ProxyConfig, ProxyEvent};
    const SSE: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let (upstream, _requests) =
        common::canned_upstream("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream", SSE);
    let dir = tempfile::tempdir().unwrap();
    let start = |upstream: String| {
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = proxy::start(
            ProxyConfig {
                listen: "127.0.0.1:0".parse().unwrap(),
                upstream,
                out_dir: dir.path().to_path_buf(),
                timeout: Duration::from_secs(10),
                keep_secrets: false,
                limits: Default::default(),
            },
            move |e| {
                tx.send(e).ok();
            },
        )
        .unwrap();
        (handle, rx)
    };
    let request = |addr: std::net::SocketAddr| {
        let body = r#"{"model":"m-1","stream":true,"api_key":"sk-body-secret"}"#;
        raw_request(
            &format!("http://{addr}"),
            &format!(
                "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk-head-secret\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            ),
        )
    };
    let events_until = |rx: &std::sync::mpsc::Receiver<ProxyEvent>,
                        last: fn(&ProxyEvent) -> bool| {
        let mut events = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            if let Ok(e) = rx.recv_timeout(Duration::from_millis(100)) {
                let done = last(&e);
                events.push(e);
                if done {
                    break;
                }
            }
        }
        events
    };

    let (handle, rx) = start(upstream);
    request(handle.addr());
    let events = events_until(&rx, |e| matches!(e, ProxyEvent::CaptureFinished { .. }));
    handle.stop();
    let exchange = events
        .iter()
        .find_map(|e| match e {
            ProxyEvent::Exchange(x) => Some(x.clone()),
            _ => None,
        })
        .expect("an exchange");
    assert_eq!(exchange.status, 200);
    assert_eq!(exchange.model.as_deref(), Some("m-1"));
    let shown = format!("{exchange:?}");
    assert!(
        !shown.contains("sk-head-secret") && !shown.contains("sk-body-secret"),
        "{shown}"
    );
    assert!(events.iter().any(|e| matches!(e,
        ProxyEvent::ExchangeEnded(end) if end.id == exchange.id && end.bytes == SSE.len() as u64
            && end.first_byte_micros.is_some())));
    assert!(events.iter().any(|e| matches!(e,
        ProxyEvent::CaptureStarted { id, .. } if *id == exchange.id)));
    assert!(events.iter().any(|e| matches!(e,
        ProxyEvent::CaptureFinished { id, ended_normally: true, .. } if *id == exchange.id)));

    // The upstream is down: still one exchange, 502, with the error, and its end.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (handle, rx) = start(format!("http://127.0.0.1:{port}"));
    let response = request(handle.addr());
    assert!(response.starts_with("HTTP/1.1 502"), "{response}");
    let events = events_until(&rx, |e| matches!(e, ProxyEvent::ExchangeEnded(_)));
    handle.stop();
    assert!(
        events.iter().any(|e| matches!(e,
        ProxyEvent::Exchange(x) if x.status == 502 && x.error.is_some())),
        "{events:?}"
    );
}

/// `proxy --out` keeps its relative default but says at start where the captures really go: the
/// full path.
#[test]
fn the_captures_folder_is_printed_in_full_at_start() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(common::BIN)
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:9",
            "--out",
            "rel-captures",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let kid = common::Kid(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let line = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("no 'forwarding to' line");
        if line.starts_with("forwarding to") {
            break line;
        }
    };
    let full = std::fs::canonicalize(dir.path())
        .unwrap()
        .join("rel-captures");
    assert!(
        line.contains(&full.display().to_string()),
        "{line} (want {})",
        full.display()
    );
    kid.signal("TERM");
}

/// Every spelling of a dot segment (plain, encoded, mixed case, encoded slashes and backslashes,
/// double-encoded, overlong UTF-8, IIS `%u`, fullwidth, `;` parameters, trailing blanks and
/// NULs, `...`), whether it would climb out of the upstream's prefix or stay inside: 400, one
/// `Refused` event each (the command line logs it), and nothing reaches the upstream; a plain
/// path after them is forwarded byte for byte under the prefix.
#[test]
fn every_spelling_of_a_dot_segment_is_refused_and_logged() {
    use sse_replay_net::proxy::{self, ProxyConfig, ProxyEvent};
    let spellings = [
        "/..",
        "/../admin",
        "/v1/../admin",
        "/v1/./../admin",
        "/v1/./chat",
        "/v1/chat/..",
        "/v1/%2e%2e/admin",
        "/v1/%2E%2E/admin",
        "/v1/.%2E/admin",
        "/v1/%2e./admin",
        "/v1/%2e%2e%2fadmin",
        "/v1/..%2Fadmin",
        "/v1/..%5cadmin",
        "/v1/..\\admin",
        "/v1/%5c../admin",
        "/v1/%252e%252e/admin",
        "/v1/%25252E%25252E/admin",
        "/v1/..%252fadmin",
        "/v1/%c0%ae%c0%ae/admin",
        "/v1/%e0%80%ae%e0%80%ae/admin",
        "/v1/%u002e%u002e/admin",
        "/v1/%ef%bc%8e%ef%bc%8e/admin",
        "/v1/..;/admin",
        "/v1/..%3b/admin",
        "/v1/..%00/admin",
        "/v1/..%20/admin",
        "/v1/..%09/admin",
        "/v1/.../admin",
        "//../admin",
        "/v1//../../admin",
    ];
    let (upstream, requests) =
        common::canned_upstream("HTTP/1.1 200 OK\r\ncontent-type: application/json", JSON);
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = proxy::start(
        ProxyConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            upstream: format!("{upstream}/api/v1"),
            out_dir: dir.path().to_path_buf(),
            timeout: Duration::from_secs(10),
            keep_secrets: false,
            limits: Default::default(),
        },
        move |e| {
            tx.send(e).ok();
        },
    )
    .unwrap();
    let url = format!("http://{}", handle.addr());
    for path in spellings {
        let response = raw_request(
            &url,
            &format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
        );
        assert!(response.starts_with("HTTP/1.1 400"), "{path}: {response}");
        let refused = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(10)).ok())
            .find_map(|e| match e {
                ProxyEvent::Refused { path, status, .. } => Some((path, status)),
                _ => None,
            });
        assert_eq!(refused, Some((path.to_owned(), 400)), "{path}");
    }
    // A plain path is forwarded under the prefix, byte for byte: the first request the upstream
    // sees (none of the refused ones reached it).
    let response = raw_request(
        &url,
        "GET /models/a%2Fb/x..y HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let first = requests.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        first.starts_with("GET /api/v1/models/a%2Fb/x..y HTTP/1.1"),
        "{first}"
    );
}
