//! Hostile clients and arguments against `serve`, `proxy` and `record`: argument ranges,
//! slowloris / silent / surplus connections, path escapes through the proxy, large request bodies
//! streamed rather than buffered, SIGTERM treated like Ctrl+C, and the non-loopback warning.
//! Every server is on 127.0.0.1 port 0, every wait is bounded, child processes are killed on drop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use sse_replay_core::recording::Recording;
use sse_replay_core::stub::{self, StubCall, StubSpec};

use common::{BIN, Kid, stderr};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Starts `sse-replay ARGS`, which prints `listening on http://ADDR/` first; returns the child, the
/// base URL, its later stdout lines and its stderr lines.
fn start_listening(args: &[&str]) -> (Kid, String, mpsc::Receiver<String>, mpsc::Receiver<String>) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let lines = |r: Box<dyn Read + Send>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            // Read to the end even when nobody listens any more: a closed pipe would make the
            // child's next print fail.
            for line in BufReader::new(r).lines() {
                let Ok(line) = line else { break };
                tx.send(line).ok();
            }
        });
        rx
    };
    let out = lines(Box::new(child.stdout.take().expect("stdout")));
    let err = lines(Box::new(child.stderr.take().expect("stderr")));
    let kid = Kid(child);
    let first = out
        .recv_timeout(Duration::from_secs(30))
        .expect("the server printed nothing");
    let url = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();
    assert!(url.starts_with("http://") && url.ends_with('/'), "{url}");
    (kid, url, out, err)
}

/// `host:port` of a base URL `http://host:port/`.
fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// A recording of one call with `events` fragments `gap_micros` apart.
fn slow_fixture(dir: &Path, gap_micros: u64, chars: usize) -> (PathBuf, Recording) {
    let spec = StubSpec {
        calls: vec![StubCall {
            id: "c".into(),
            name: "slow".into(),
            arguments: format!(r#"{{"text":"{}"}}"#, "x".repeat(chars)),
        }],
        fragment_chars: vec![4],
        gap_micros,
        ..Default::default()
    };
    let rec = stub::build(&spec);
    let path = dir.join(format!("slow-{gap_micros}-{chars}.ron"));
    rec.save(&path).unwrap();
    (path, rec)
}

fn seed() -> String {
    common::manifest()
        .join("recordings/seed-example.ron")
        .to_string_lossy()
        .into_owned()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Waits until the server closes `sock` (EOF or reset); how long that took. While waiting, calls
/// `tick` every 100 ms (to keep a slowloris dribbling). Fails after `limit`.
fn time_until_closed(
    sock: &mut TcpStream,
    limit: Duration,
    mut tick: impl FnMut(&mut TcpStream),
) -> Duration {
    let started = Instant::now();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buf = [0u8; 4096];
    loop {
        assert!(
            started.elapsed() < limit,
            "the server kept the connection open for {limit:?}"
        );
        match sock.read(&mut buf) {
            Ok(0) => return started.elapsed(),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                tick(sock);
            }
            Err(_) => return started.elapsed(), // reset
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every numeric argument is range-checked by clap (exit 2, no panic)
// ---------------------------------------------------------------------------------------------

#[test]
fn out_of_range_numbers_are_usage_errors_not_panics() {
    let seed = seed();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.ron");
    let out = out.to_str().unwrap();
    let serve = |extra: &[&str]| {
        let mut v = vec!["serve", seed.as_str()];
        v.extend_from_slice(extra);
        v.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let proxy = |extra: &[&str]| {
        let mut v = vec![
            "proxy",
            "--upstream",
            "http://127.0.0.1:9",
            "--listen",
            "127.0.0.1:0",
        ];
        v.extend_from_slice(extra);
        v.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let other = |args: &[&str]| args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let mut cases: Vec<Vec<String>> = Vec::new();
    for v in ["1e-30", "0", "-1", "NaN", "inf", "1e300", "0.0001", "x", ""] {
        cases.push(serve(&["--speed", v]));
    }
    for v in ["0", "-1", "99999999999999999999", "2000000000"] {
        cases.push(serve(&["--rechunk", v]));
    }
    for flag in ["--header-timeout", "--idle-timeout"] {
        for v in ["0", "-5", "NaN", "inf", "1e300", "1e7", "0.0000001"] {
            cases.push(serve(&[flag, v]));
            cases.push(proxy(&[flag, v]));
        }
    }
    for v in ["0", "-1", "70000", "1e3"] {
        cases.push(serve(&["--max-connections", v]));
        cases.push(proxy(&["--max-connections", v]));
    }
    cases.push(serve(&["--addr", "127.0.0.1:70000"]));
    cases.push(proxy(&["--listen", "127.0.0.1:99999"]));
    for v in ["1e300", "0", "-1", "NaN", "inf", "1e-9"] {
        cases.push(proxy(&["--timeout", v]));
        cases.push(other(&[
            "record",
            "http://127.0.0.1:9/",
            "-o",
            out,
            "--timeout",
            v,
        ]));
    }
    for v in ["0", "-1", "1e99", "99999999999999999999", "2147483648"] {
        cases.push(other(&["stub", "--call", "f={}", "--read-bytes", v]));
    }
    for v in ["-1", "1e30", "99999999999999", "3600000001"] {
        cases.push(other(&["stub", "--call", "f={}", "--gap-us", v]));
    }
    for v in ["0", "0,3", "x", "99999999999", "", "3,,4", "-2"] {
        cases.push(other(&["stub", "--call", "f={}", "--fragment", v]));
    }
    for v in ["0", "-1", "1e12", "100001"] {
        cases.push(other(&["generate-large", "-o", out, "--calls", v]));
    }
    for args in &cases {
        let o = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error:"),
            "{args:?}: clap's usage error expected: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // The edges of the ranges are accepted.
    for args in [
        other(&[
            "stub",
            "--call",
            "f={}",
            "--read-bytes",
            "1",
            "--gap-us",
            "0",
            "--fragment",
            "1,1000000",
        ]),
        other(&["stub", "--call", "f={}", "--gap-us", "3600000000"]),
    ] {
        let o = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    for speed in ["0.001", "1000000"] {
        let (_kid, _url, _, _) = start_listening(&[
            "serve",
            &seed,
            "--addr",
            "127.0.0.1:0",
            "--speed",
            speed,
            "--header-timeout",
            "0.001",
            "--idle-timeout",
            "1000000",
            "--max-connections",
            "65536",
        ]);
    }
}

// ---------------------------------------------------------------------------------------------
// Header-read timeout, idle timeout, connection cap
// ---------------------------------------------------------------------------------------------

#[test]
fn a_slowloris_connection_is_closed_after_the_header_timeout() {
    let seed = seed();
    let (_kid, url, _, _) = start_listening(&[
        "serve",
        &seed,
        "--addr",
        "127.0.0.1:0",
        "--instant",
        "--header-timeout",
        "0.5",
        "--idle-timeout",
        "30",
    ]);
    let mut sock = TcpStream::connect(authority(&url)).unwrap();
    sock.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // A header line every 100 ms: bytes keep moving (so the idle timeout never fires), but the
    // head never completes.
    let mut n = 0;
    let took = time_until_closed(&mut sock, Duration::from_secs(10), |s| {
        n += 1;
        s.write_all(format!("X-Slow-{n}: a\r\n").as_bytes()).ok();
    });
    assert!(
        took >= Duration::from_millis(400),
        "closed after {took:?}: too early"
    );
    assert!(took < Duration::from_secs(5), "closed after {took:?}");
    assert!(n >= 3, "the client kept sending ({n} lines)");
}

#[test]
fn silent_connections_are_closed_after_the_idle_timeout_but_slow_replays_are_not() {
    let dir = tempfile::tempdir().unwrap();
    // Events 700 ms apart, longer than the 400 ms idle timeout: the server is the one waiting.
    let (fixture, rec) = slow_fixture(dir.path(), 700_000, 8);
    assert!(rec.chunks.len() >= 4);
    let (_kid, url, _, _) = start_listening(&[
        "serve",
        fixture.to_str().unwrap(),
        "--addr",
        "127.0.0.1:0",
        "--header-timeout",
        "30",
        "--idle-timeout",
        "0.4",
    ]);
    // A connection that never sends a byte.
    let mut silent = TcpStream::connect(authority(&url)).unwrap();
    let took = time_until_closed(&mut silent, Duration::from_secs(10), |_| {});
    assert!(
        took >= Duration::from_millis(300),
        "closed after {took:?}: too early"
    );
    assert!(took < Duration::from_secs(5), "closed after {took:?}");

    // A connection that completes a request, reads the whole (slow) answer, then goes silent
    // in keep-alive: the replay is whole, then the connection is closed.
    let mut sock = TcpStream::connect(authority(&url)).unwrap();
    sock.write_all(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let started = Instant::now();
    while !got.ends_with(b"0\r\n\r\n") {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the replay never ended"
        );
        let n = sock.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "closed mid-replay after {:?}: {}",
            started.elapsed(),
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    for c in &rec.chunks {
        let piece = String::from_utf8_lossy(&c.bytes);
        assert!(text.contains(piece.trim()), "missing {piece:?} in {text}");
    }
    let idle = time_until_closed(&mut sock, Duration::from_secs(10), |_| {});
    assert!(
        idle < Duration::from_secs(5),
        "keep-alive closed after {idle:?}"
    );
}

#[test]
fn connections_over_the_limit_are_refused_at_once() {
    let seed = seed();
    let (_kid, url, _, mut errs) = start_listening(&[
        "serve",
        &seed,
        "--addr",
        "127.0.0.1:0",
        "--instant",
        "--max-connections",
        "2",
        "--header-timeout",
        "30",
        "--idle-timeout",
        "30",
    ]);
    let addr = authority(&url);
    // One accept loop takes connections in the order they were made (the kernel's accept queue is
    // first in, first out): a and b have their slots before c is looked at.
    let a = TcpStream::connect(&addr).unwrap();
    let b = TcpStream::connect(&addr).unwrap();
    let mut c = TcpStream::connect(&addr).unwrap();
    // Refused at once, or left waiting until the 30 s header timeout: far apart, so the bound
    // holds on a loaded machine too.
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    c.read_to_end(&mut answer).ok();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the third connection waited"
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 503"),
        "{answer}"
    );
    let line = wait_for_line(&mut errs, "refused");
    assert!(line.contains("--max-connections"), "{line}");
    // A slot frees when a connection closes: once the server has seen a and b go (its own time),
    // a new connection is served. Ask until it is, within a deadline.
    drop(a);
    drop(b);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut d = TcpStream::connect(&addr).unwrap();
        d.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        if d.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .is_ok()
        {
            d.read_to_end(&mut got).ok();
        }
        let got = String::from_utf8_lossy(&got);
        if got.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            got.is_empty() || got.starts_with("HTTP/1.1 503"),
            "neither served nor refused: {got}"
        );
        assert!(
            Instant::now() < deadline,
            "no slot freed after a and b closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The next line on `lines` that contains `needle` (within 5 s).
fn wait_for_line(lines: &mut mpsc::Receiver<String>, needle: &str) -> String {
    wait_for_line_within(lines, needle, Duration::from_secs(5))
}

/// [`wait_for_line`] with its own limit (saving a long capture takes a while in a debug build on
/// a busy machine).
fn wait_for_line_within(
    lines: &mut mpsc::Receiver<String>,
    needle: &str,
    limit: Duration,
) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(l) if l.contains(needle) => return l,
            Ok(_) => {}
            Err(e) => panic!("no line containing {needle:?}: {e}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The proxy keeps requests inside the upstream's path prefix
// ---------------------------------------------------------------------------------------------

/// An upstream that answers every request `200 ok` (closing the connection) and records the
/// request target of each.
fn path_recording_upstream() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { continue };
            sock.set_read_timeout(Some(Duration::from_secs(5))).ok();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && sock.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            if let Some(target) = head.split_whitespace().nth(1) {
                log.lock().unwrap().push(target.to_owned());
            }
            sock.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
            ).ok();
        }
    });
    (format!("http://{addr}"), seen)
}

/// Sends one raw request line (the path exactly as given: no client-side normalisation) and
/// returns the status code.
fn raw_status(addr: &str, target: &str) -> u16 {
    let mut sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(
        format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut got = Vec::new();
    sock.read_to_end(&mut got).ok();
    let text = String::from_utf8_lossy(&got);
    text.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status for {target}: {text:?}"))
}

#[test]
fn proxy_paths_cannot_climb_out_of_the_upstream_prefix() {
    let (upstream, seen) = path_recording_upstream();
    let dir = tempfile::tempdir().unwrap();
    let (_kid, url, _, _) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &format!("{upstream}/api/v1"),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let addr = authority(&url);
    let attacks = [
        "/../../admin/json",
        "/../admin/json",
        "/chat/../../admin/json",
        "/%2e%2e/%2e%2e/admin/json",
        "/%2E%2E/%2E%2E/admin/json",
        "/.%2e/.%2E/admin/json",
        "/..%2f..%2fadmin/json",
        "/..%2F..%2Fadmin/json",
        "/..%5c..%5cadmin/json",
        "/..\\..\\admin/json",
        "/x/..%2f..%2f..%2fadmin/json?q=1",
        "/..",
    ];
    for path in attacks {
        let status = raw_status(&addr, path);
        assert!(
            status == 400,
            "{path}: status {status} (the upstream saw {:?})",
            seen.lock().unwrap()
        );
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the upstream: {:?}",
        seen.lock().unwrap()
    );
    // A dot segment is refused even when it would stay inside (clients resolve them before
    // sending); plain paths are forwarded byte for byte.
    for path in [
        "/chat/./completions",
        "/x/../chat/completions?stream=1",
        "/x/%2e%2e/models",
    ] {
        assert_eq!(raw_status(&addr, path), 400, "{path}");
    }
    let inside = [
        ("/chat/completions", "/api/v1/chat/completions"),
        (
            "/chat/completions?stream=1",
            "/api/v1/chat/completions?stream=1",
        ),
        ("/models/a%2Fb", "/api/v1/models/a%2Fb"),
        ("/", "/api/v1/"),
    ];
    for (path, _) in inside {
        assert_eq!(raw_status(&addr, path), 200, "{path}");
    }
    let got = seen.lock().unwrap().clone();
    let want: Vec<String> = inside.iter().map(|(_, w)| (*w).to_owned()).collect();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------------------------
// Request bodies stream through serve and proxy instead of being buffered
// ---------------------------------------------------------------------------------------------

/// An upstream that reads each request body (Content-Length or chunked is not needed: reqwest
/// sends the length the client gave) in 64 KiB reads, hashes it, and answers an event stream
/// `data: {"len":N,"fnv":H}` followed by `[DONE]`.
fn hashing_upstream() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { continue };
            std::thread::spawn(move || {
                sock.set_read_timeout(Some(Duration::from_secs(30))).ok();
                let (_, len) = common::read_request_head(&mut sock);
                let mut hash = 0xcbf2_9ce4_8422_2325u64;
                let mut left = len;
                let mut buf = vec![0u8; 64 << 10];
                while left > 0 {
                    let n = sock.read(&mut buf[..left.min(64 << 10)]).unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    for &b in &buf[..n] {
                        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                    }
                    left -= n;
                }
                let body = format!(
                    "data: {{\"len\":{},\"fnv\":{hash}}}\n\ndata: [DONE]\n\n",
                    len - left
                );
                sock.write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                ).ok();
            });
        }
    });
    format!("http://{addr}")
}

/// Byte `i` of the deterministic ASCII test body number `seed`.
fn body_byte(i: usize, seed: usize) -> u8 {
    b'a' + ((i / 7 + seed) % 26) as u8
}

/// Test body number `seed`, `len` bytes, generated as it is sent (the test holds none of it).
fn streamed_body(len: usize, seed: usize) -> reqwest::Body {
    const PIECE: usize = 64 << 10;
    let pieces = (0..len.div_ceil(PIECE)).map(move |k| {
        let bytes: Vec<u8> = (k * PIECE..((k + 1) * PIECE).min(len))
            .map(|i| body_byte(i, seed))
            .collect();
        Ok::<_, std::io::Error>(bytes)
    });
    reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
}

/// FNV-1a of test body number `seed`.
fn body_fnv(len: usize, seed: usize) -> u64 {
    (0..len).fold(0xcbf2_9ce4_8422_2325, |h, i| {
        (h ^ u64::from(body_byte(i, seed))).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The first `n` bytes of test body number `seed`.
fn body_prefix(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| body_byte(i, seed)).collect()
}

const BIG_POSTS: usize = 6;
const BIG_POST_BYTES: usize = 16 << 20;

#[test]
fn large_concurrent_posts_stream_through_the_proxy_whole_and_captures_keep_a_prefix() {
    let upstream = hashing_upstream();
    let dir = tempfile::tempdir().unwrap();
    let captures = dir.path().join("captures");
    let (proxy, url, mut lines, _) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--out",
        captures.to_str().unwrap(),
    ]);
    let answers = runtime().block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(10)).unwrap();
        let posts = (0..BIG_POSTS).map(|seed| {
            let client = client.clone();
            let url = format!("{url}v1/chat/completions");
            async move {
                let resp = client
                    .post(url)
                    .header("content-type", "application/json")
                    .header("content-length", BIG_POST_BYTES.to_string())
                    .body(streamed_body(BIG_POST_BYTES, seed))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status(), 200);
                String::from_utf8(resp.bytes().await.unwrap().to_vec()).unwrap()
            }
        });
        futures_util::future::join_all(posts).await
    });
    for (seed, answer) in answers.iter().enumerate() {
        let want = format!(
            "data: {{\"len\":{BIG_POST_BYTES},\"fnv\":{}}}",
            body_fnv(BIG_POST_BYTES, seed)
        );
        assert!(answer.starts_with(&want), "{answer} vs {want}");
    }
    for _ in 0..BIG_POSTS {
        wait_for_line(&mut lines, "captured ");
    }
    let peak = proxy.peak_rss_kib();
    eprintln!(
        "proxy peak RSS after {BIG_POSTS} concurrent {} MiB POSTs: {peak:?} KiB",
        BIG_POST_BYTES >> 20
    );
    if let Some(kib) = peak {
        // Buffered, the bodies alone would be 96 MiB.
        assert!(kib < 64 * 1024, "peak RSS {kib} KiB");
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&captures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), BIG_POSTS, "{files:?}");
    for f in files {
        let rec = Recording::load(&f).unwrap();
        let req = rec.request.unwrap();
        assert_eq!(req.body.len(), sse_replay_net::proxy::CAPTURED_BODY_BYTES);
        let n = sse_replay_net::proxy::CAPTURED_BODY_BYTES;
        assert!(
            (0..BIG_POSTS).any(|seed| body_prefix(n, seed) == req.body.as_bytes()),
            "the capture keeps the body's first bytes"
        );
        assert!(
            rec.meta
                .notes
                .iter()
                .any(|n| n.contains("cut to its first")),
            "{:?}",
            rec.meta.notes
        );
    }
}

#[test]
fn large_concurrent_posts_to_serve_are_drained_not_held() {
    let seed = seed();
    let original = Recording::load(Path::new(&seed)).unwrap();
    let (server, url, _, errs) =
        start_listening(&["serve", &seed, "--addr", "127.0.0.1:0", "--instant"]);
    let answers = runtime().block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(10)).unwrap();
        let posts = (0..BIG_POSTS).map(|seed| {
            let client = client.clone();
            let url = format!("{url}v1/chat/completions");
            async move {
                let resp = client
                    .post(url)
                    .body(streamed_body(BIG_POST_BYTES, seed))
                    .send()
                    .await?;
                let status = resp.status();
                Ok::<_, reqwest::Error>((status, resp.bytes().await?))
            }
        });
        futures_util::future::join_all(posts).await
    });
    for a in &answers {
        // The server's own lines say why, if it turned a request down.
        let said = || errs.try_iter().collect::<Vec<_>>().join("\n");
        let (status, body) = match a {
            Ok(x) => x,
            Err(e) => panic!("{e:?}; the server said:\n{}", said()),
        };
        assert_eq!(*status, 200, "the server said:\n{}", said());
        assert_eq!(body.as_ref(), original.body().as_slice());
    }
    let peak = server.peak_rss_kib();
    eprintln!(
        "serve peak RSS after {BIG_POSTS} concurrent {} MiB POSTs: {peak:?} KiB",
        BIG_POST_BYTES >> 20
    );
    if let Some(kib) = peak {
        assert!(kib < 64 * 1024, "peak RSS {kib} KiB");
    }
}

// ---------------------------------------------------------------------------------------------
// SIGTERM is Ctrl+C; a non-loopback address is warned about
// ---------------------------------------------------------------------------------------------

/// The number of `Chunk(` lines in a journal.
fn journal_chunks(journal: &Path) -> usize {
    std::fs::read_to_string(journal)
        .map_or(0, |t| t.lines().filter(|l| l.starts_with("Chunk(")).count())
}

/// `record` stopped by `kill -SIGNAL` mid-stream: exit 1, the journal finalised into a recording
/// holding what arrived, noted as stopped by the user.
fn record_stops_and_saves_on(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, original) = slow_fixture(dir.path(), 100_000, 40);
    let (_server, url, _, _) =
        start_listening(&["serve", fixture.to_str().unwrap(), "--addr", "127.0.0.1:0"]);
    let out = dir.path().join("terminated.ron");
    let journal = dir.path().join("terminated.ron.partial");
    let mut recorder = Kid(Command::new(BIN)
        .args(["record", &url, "-o", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while journal_chunks(&journal) < 3 {
        assert!(Instant::now() < deadline, "the journal never got 3 chunks");
        std::thread::sleep(Duration::from_millis(50));
    }
    recorder.signal(signal);
    let code = recorder.wait_exit(Duration::from_secs(10));
    assert_eq!(code, Some(1), "stopped before the stream finished");
    assert!(!journal.exists(), "finalised: the journal is gone");
    let rec = Recording::load(&out).unwrap();
    assert!(!rec.meta.interrupted);
    assert!(rec.chunks.len() >= 3 && original.body().starts_with(&rec.body()));
    assert!(
        rec.meta
            .notes
            .iter()
            .any(|n| n.contains("stopped by the user")),
        "{:?}",
        rec.meta.notes
    );
}

#[test]
fn sigterm_stops_the_recorder_and_saves_like_ctrl_c() {
    record_stops_and_saves_on("TERM");
}

#[test]
fn ctrl_c_stops_the_recorder_and_saves() {
    record_stops_and_saves_on("INT");
}

#[test]
fn sigterm_stops_serve_cleanly() {
    let seed = seed();
    let (mut server, _url, _, _) = start_listening(&["serve", &seed, "--addr", "127.0.0.1:0"]);
    server.signal("TERM");
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn sigterm_stops_the_proxy_and_saves_open_captures() {
    let dir = tempfile::tempdir().unwrap();
    // An upstream stream of ~4 s: SIGTERM arrives in the middle of it.
    let (fixture, upstream_rec) = slow_fixture(dir.path(), 200_000, 60);
    let (_upstream, upstream_url, _, _) =
        start_listening(&["serve", fixture.to_str().unwrap(), "--addr", "127.0.0.1:0"]);
    let captures = dir.path().join("captures");
    let (mut proxy, proxy_url, mut lines, _) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        upstream_url.trim_end_matches('/'),
        "--out",
        captures.to_str().unwrap(),
    ]);
    // The client reads in a thread (raw HTTP) until the proxy cuts the stream.
    let addr = authority(&proxy_url);
    let client = std::thread::spawn(move || {
        let mut sock = TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        sock.write_all(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-length: 2\r\n\r\n{}",
        )
        .unwrap();
        let mut got = Vec::new();
        sock.read_to_end(&mut got).ok();
        got
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let journal = loop {
        assert!(
            Instant::now() < deadline,
            "no capture journal with 3 chunks"
        );
        std::thread::sleep(Duration::from_millis(50));
        let partial = std::fs::read_dir(&captures).ok().and_then(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().ends_with(".partial"))
        });
        if let Some(p) = partial
            && journal_chunks(&p) >= 3
        {
            break p;
        }
    };
    proxy.signal("TERM");
    assert_eq!(proxy.wait_exit(Duration::from_secs(15)), Some(0));
    let line = wait_for_line(&mut lines, "captured ");
    assert!(!journal.exists(), "the capture was finalised: {line}");
    let saved: Vec<PathBuf> = std::fs::read_dir(&captures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let rec = Recording::load(&saved[0]).unwrap();
    assert!(!rec.meta.interrupted);
    assert!(rec.chunks.len() >= 3);
    assert!(upstream_rec.body().starts_with(&rec.body()));
    assert!(
        rec.body().len() < upstream_rec.body().len(),
        "cut mid-stream"
    );
    assert!(
        rec.meta
            .notes
            .iter()
            .any(|n| n.contains("proxy was stopped")),
        "{:?}",
        rec.meta.notes
    );
    let got = client.join().unwrap();
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"));
}

#[test]
fn a_non_loopback_address_is_warned_about_on_stderr() {
    let seed = seed();
    let (_kid, url, _, mut errs) =
        start_listening(&["serve", &seed, "--addr", "0.0.0.0:0", "--instant"]);
    assert!(
        url.starts_with("http://0.0.0.0:"),
        "the first line is unchanged: {url}"
    );
    let line = wait_for_line(&mut errs, "warning");
    assert!(
        line.contains("not a loopback address") && line.contains("anyone"),
        "{line}"
    );
    let out = tempfile::tempdir().unwrap();
    let (_kid, _, _, mut errs) = start_listening(&[
        "proxy",
        "--listen",
        "0.0.0.0:0",
        "--upstream",
        "http://127.0.0.1:9/v1",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let line = wait_for_line(&mut errs, "warning");
    assert!(
        line.contains("through this proxy") && line.contains("127.0.0.1:9"),
        "{line}"
    );
    // Loopback: no warning.
    let (_kid, _, _, errs) =
        start_listening(&["serve", &seed, "--addr", "127.0.0.1:0", "--instant"]);
    let first = errs.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(first.starts_with("serving "), "{first}");
}

/// Sends a POST whose head is complete and whose body promises 100 bytes and delivers 10, then
/// reads the answer: its text and how long it took.
fn send_stalled_body(url: &str) -> (String, Duration) {
    let mut sock = TcpStream::connect(authority(url)).unwrap();
    sock.write_all(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-length: 100\r\n\r\n{\"a\":1234",
    )
    .unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut got = Vec::new();
    sock.read_to_end(&mut got).ok();
    (
        String::from_utf8_lossy(&got).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn a_request_body_that_stalls_is_answered_408_after_the_idle_timeout() {
    let seed = seed();
    let (_kid, url, _, _) = start_listening(&[
        "serve",
        &seed,
        "--addr",
        "127.0.0.1:0",
        "--instant",
        "--idle-timeout",
        "0.5",
        "--header-timeout",
        "30",
    ]);
    let (text, took) = send_stalled_body(&url);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(5),
        "answered after {took:?}"
    );
}

#[test]
fn a_request_body_that_stalls_through_the_proxy_is_cut_after_the_idle_timeout() {
    let upstream = hashing_upstream();
    let dir = tempfile::tempdir().unwrap();
    let (_kid, url, _, _) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--out",
        dir.path().to_str().unwrap(),
        "--idle-timeout",
        "0.5",
    ]);
    let (text, took) = send_stalled_body(&url);
    // The upstream request is aborted, so the client gets the proxy's 502, not a hang.
    assert!(text.starts_with("HTTP/1.1 502"), "{text}");
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(5),
        "answered after {took:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Long captures: record and the proxy stream what they receive to disk; memory stays bounded,
// and the proxy ends a capture at --max-capture-bytes with what arrived saved.
// ---------------------------------------------------------------------------------------------

/// One block of a long stream: events of one call's fragments (a realistic shape).
fn long_stream_block() -> Vec<u8> {
    let mut block = Vec::new();
    block.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"t\\\":\\\"\"}}]}}]}\n\n");
    while block.len() < 60 * 1024 {
        block.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}]}}]}\n\n");
    }
    block
}

/// An upstream on 127.0.0.1:0 answering every request with an event stream of about `total`
/// bytes (one call's fragments, then its end and `[DONE]`), as fast as the socket takes it.
fn long_stream_upstream(total: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            std::thread::spawn(move || {
                let (_, len) = common::read_request_head(&mut sock);
                let mut body = vec![0u8; len];
                sock.read_exact(&mut body).ok();
                sock.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
                ).ok();
                let first = long_stream_block();
                let rest: Vec<u8> =
                    first[first.iter().position(|&b| b == b'\n').unwrap() + 2..].to_vec();
                let mut sent = 0;
                let mut block: &[u8] = &first;
                while sent < total {
                    if sock.write_all(block).is_err() {
                        return;
                    }
                    sent += block.len();
                    block = &rest;
                }
                sock.write_all(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n").ok();
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// The most a recorder or the proxy may grow, beyond its baseline, for a stream of `bytes`: a
/// constant (the 4 MiB of reads the writer may lag behind, the progress report's reads and their
/// copy, hyper's buffers, the allocator's slack) plus a tenth of the bytes. Held whole, a stream
/// cost 13–15× its bytes; a long call's arguments kept for the summary cost a third to a half.
fn memory_bound_kib(bytes: u64) -> u64 {
    16 * 1024 + bytes / 1024 / 10
}

/// 48 MiB of one call (a third of it the call's arguments) recorded to a file, and to
/// `/dev/null` (written from a spool at the end) with the recorder stopped (SIGSTOP) for a moment
/// mid-stream, so that the socket's and hyper's buffers fill and the reads come large and fast
/// when it goes on: a slow consumer. Memory stays within a constant and a tenth of the bytes
/// over the same command on a small stream. (The summary's pipeline kept the call's arguments,
/// and parsed them once more at the end: 0.5–0.7× the bytes.)
#[test]
fn record_keeps_a_long_stream_on_disk_not_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let url = long_stream_upstream(LONG_STREAM_BYTES);
    // The baseline: the same command on a small stream of the same shape (the binary, its
    // runtime, its buffers; it differs between build profiles, so the bound is relative to it).
    let small_url = long_stream_upstream(64 * 1024);
    let record = |url: &str, target: &str, pause: bool| {
        let mut child = Command::new(BIN)
            .args(["record", &format!("{url}/v1"), "-o", target, "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, mut said) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                tx.send(line).ok();
            }
        });
        let mut kid = Kid(child);
        if pause {
            // Once the response has begun, stop the recorder while the upstream keeps writing.
            wait_for_line_within(&mut said, "HTTP ", Duration::from_secs(60));
            kid.signal("STOP");
            std::thread::sleep(Duration::from_secs(1));
            kid.signal("CONT");
        }
        let (peak, code) = kid.peak_rss_until_exit(Duration::from_secs(300));
        assert_eq!(
            code,
            Some(0),
            "{target}: {:?}",
            said.try_iter().collect::<Vec<_>>()
        );
        peak
    };
    let small = dir.path().join("small.ron");
    let baseline = record(&small_url, small.to_str().unwrap(), false);
    let out = dir.path().join("long.ron");
    for (target, pause) in [
        (out.to_str().unwrap().to_owned(), false),
        ("/dev/null".to_owned(), true),
    ] {
        let peak = record(&url, &target, pause);
        let bytes = LONG_STREAM_BYTES as u64;
        eprintln!(
            "record -o {target} (paused: {pause}): peak RSS {peak} KiB for {bytes} bytes received (baseline {baseline} KiB)"
        );
        assert!(
            peak < baseline + memory_bound_kib(bytes),
            "{target}: peak RSS {peak} KiB for {bytes} bytes, {baseline} KiB on a small stream"
        );
    }
    let rec = Recording::load(&out).unwrap();
    assert!(
        rec.body_len() >= LONG_STREAM_BYTES as u64,
        "{}",
        rec.body_len()
    );
}

/// The long stream through the proxy: 48 MiB each.
const LONG_STREAM_BYTES: usize = 48 << 20;

#[test]
fn the_proxy_keeps_a_long_stream_on_disk_and_ends_a_capture_at_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = long_stream_upstream(LONG_STREAM_BYTES);
    let captures = dir.path().join("captures");
    let (mut proxy, url, mut lines, err_lines) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--out",
        captures.to_str().unwrap(),
        "--max-capture-bytes",
        "8M",
    ]);
    // The proxy's own memory before any request: its runtime, its threads, its buffers.
    let idle = proxy.peak_rss_kib();
    // Two streams at once: each capture ends at the cap; both clients get every byte.
    let got = runtime().block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(30)).unwrap();
        let one = |i: usize| {
            let client = client.clone();
            let url = format!("{url}v1/chat/completions?n={i}");
            async move {
                let started = Instant::now();
                let mut resp = client
                    .post(url)
                    .body("{}")
                    .send()
                    .await
                    .map_err(|e| format!("stream {i}: no response: {e:?}"))?;
                let mut n = 0usize;
                loop {
                    match resp.chunk().await {
                        Ok(Some(b)) => n += b.len(),
                        Ok(None) => return Ok(n),
                        Err(e) => {
                            return Err(format!(
                                "stream {i}: cut after {n} bytes and {:?}: {e:?}",
                                started.elapsed()
                            ));
                        }
                    }
                }
            }
        };
        futures_util::future::join_all([one(1), one(2)]).await
    });
    if got.iter().any(Result::is_err) {
        // What the proxy said about it (its request log and the captures' lines) and the notes
        // of what it saved, to tell an upstream failure from a stop or a timeout.
        // Stopped, it saves what is open and exits: its output ends with the pipes.
        proxy.signal("TERM");
        let exit = proxy.wait_exit(Duration::from_secs(30));
        let said: Vec<String> = lines.iter().chain(err_lines.iter()).collect();
        let notes: Vec<Vec<String>> = std::fs::read_dir(&captures)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter_map(|e| Recording::load(&e.path()).ok())
                    .map(|r| r.meta.notes)
                    .collect()
            })
            .unwrap_or_default();
        panic!("{got:?}\nthe proxy (exit {exit:?}) said: {said:#?}\ncapture notes: {notes:#?}");
    }
    for n in got.into_iter().flatten() {
        assert!(n >= LONG_STREAM_BYTES, "the client got {n} bytes");
    }
    for _ in 0..2 {
        let line = wait_for_line_within(&mut lines, "captured ", Duration::from_secs(120));
        assert!(line.contains("(the capture stopped at"), "{line}");
    }
    let peak = proxy.peak_rss_kib();
    eprintln!(
        "proxy peak RSS after two {LONG_STREAM_BYTES}-byte streams: {peak:?} KiB ({idle:?} KiB before them)"
    );
    if let (Some(kib), Some(idle)) = (peak, idle) {
        // Each stream within the recorder's bound for what it captured (the cap): the bytes
        // passed on to the client after it are not held.
        let bound = 2 * memory_bound_kib(8 << 20);
        assert!(
            kib < idle + bound,
            "peak RSS {kib} KiB, {idle} KiB before the streams (bound {bound} KiB over it)"
        );
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&captures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for f in files {
        let rec = Recording::load(&f).unwrap();
        assert!(
            rec.body_len() <= 8 << 20 && rec.body_len() > 4 << 20,
            "{}",
            rec.body_len()
        );
        assert!(
            rec.meta
                .notes
                .iter()
                .any(|n| n.contains("--max-capture-bytes")),
            "{:?}",
            rec.meta.notes
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Trickled request bodies: a whole-body deadline and a minimum rate give the slots back.
// ---------------------------------------------------------------------------------------------

/// Opens `n` connections that each send a request head promising a large body and then trickle
/// one body byte every 200 ms (never idle long enough for the idle timeout). Returns their
/// threads' stop flag and handles.
fn tricklers(
    addr: &str,
    n: usize,
) -> (
    Arc<std::sync::atomic::AtomicBool>,
    Vec<std::thread::JoinHandle<()>>,
) {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut handles = Vec::new();
    for _ in 0..n {
        let stop = stop.clone();
        let addr = addr.to_owned();
        handles.push(std::thread::spawn(move || {
            let Ok(mut sock) = TcpStream::connect(&addr) else {
                return;
            };
            sock.write_all(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-length: 100000\r\n\r\n",
            )
            .ok();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if sock.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }));
    }
    (stop, handles)
}

/// How long until a plain request to `url` gets a 200, trying every 50 ms (each try a new
/// connection), at most `limit`.
fn time_until_answered(url: &str, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Ok(mut sock) = TcpStream::connect(authority(url)) {
            sock.set_read_timeout(Some(Duration::from_secs(2))).ok();
            sock.write_all(b"GET /v1 HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n")
                .ok();
            let mut head = [0u8; 12];
            if sock.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200") {
                return Some(started.elapsed());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[allow(
    clippy::print_stderr,
    reason = "a test helper: tests print what they measure"
)]
fn slow_bodies_give_the_slots_back(args: &[&str], what: &str) {
    let (kid, url, _, _) = start_listening(args);
    // Every slot taken by a trickler.
    let (stop, handles) = tricklers(&authority(&url), 8);
    let recovered = time_until_answered(&url, Duration::from_secs(20));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in handles {
        h.join().ok();
    }
    drop(kid);
    let took = recovered.unwrap_or_else(|| panic!("{what}: still refusing everyone after 20 s"));
    eprintln!(
        "{what}: 8 trickled bodies held every slot; a plain request was answered after {took:?}"
    );
    assert!(took < Duration::from_secs(10), "{what}: {took:?}");
}

/// An HTTP/2 frame (prior knowledge, h2c): its 9-byte header, then `payload`.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).unwrap().to_be_bytes();
    let mut f = vec![len[1], len[2], len[3], kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Opens an h2c connection that never reads: the preface and an empty SETTINGS frame, then, if
/// `request`, a whole `GET /v1` request head (HPACK: `:method GET`, `:scheme http` from the static
/// table, `:path /v1` and `:authority x` as literals), and nothing more.
fn silent_h2c(addr: &str, request: bool) -> TcpStream {
    let mut sock = TcpStream::connect(addr).unwrap();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(h2_frame(0x4, 0, 0, &[]));
    if request {
        let head = [0x82, 0x86, 0x44, 3, b'/', b'v', b'1', 0x41, 1, b'x'];
        // END_STREAM | END_HEADERS on stream 1.
        out.extend(h2_frame(0x1, 0x5, 1, &head));
    }
    sock.write_all(&out).unwrap();
    sock
}

#[test]
#[allow(
    clippy::print_stderr,
    reason = "a test helper: tests print what they measure"
)]
fn silent_http2_connections_give_their_slots_back_within_the_header_timeouts() {
    // A replay paced over a minute: a request for it keeps the server busy, so only the client's
    // own silence can free its slot.
    let dir = tempfile::tempdir().unwrap();
    let (slow, _) = slow_fixture(dir.path(), 200_000, 1200);
    let (kid, url, _, _) = start_listening(&[
        "serve",
        slow.to_str().unwrap(),
        "--addr",
        "127.0.0.1:0",
        "--max-connections",
        "4",
        "--header-timeout",
        "1",
    ]);
    let addr = authority(&url);
    // Every slot taken: two h2c connections that never send a request, two whose request's
    // answer they never read.
    let held: Vec<TcpStream> = (0..4).map(|i| silent_h2c(&addr, i % 2 == 1)).collect();
    let took = time_until_answered(&url, Duration::from_secs(30));
    drop(held);
    drop(kid);
    let took = took.expect("still refusing everyone after 30 s");
    eprintln!(
        "4 silent h2c connections held every slot; a plain request was answered after {took:?}"
    );
    // Within a few header timeouts (1 s each), far from the idle timeout (60 s).
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn trickled_request_bodies_do_not_hold_serve_s_slots() {
    let seed = seed();
    slow_bodies_give_the_slots_back(
        &[
            "serve",
            &seed,
            "--addr",
            "127.0.0.1:0",
            "--instant",
            "--max-connections",
            "8",
            "--body-timeout",
            "3",
            "--min-body-rate",
            "100",
        ],
        "serve",
    );
}

#[test]
fn trickled_request_bodies_do_not_hold_the_proxy_s_slots() {
    let upstream = hashing_upstream();
    let dir = tempfile::tempdir().unwrap();
    slow_bodies_give_the_slots_back(
        &[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream,
            "--out",
            dir.path().to_str().unwrap(),
            "--max-connections",
            "8",
            "--body-timeout",
            "3",
            "--min-body-rate",
            "100",
        ],
        "proxy",
    );
}

// ---------------------------------------------------------------------------------------------
// What the proxy and serve say and pass on: true notes, cut bodies flushed, 504 said as 504,
// serve logs what a client that left actually got.
// ---------------------------------------------------------------------------------------------

/// An upstream that reads each request (head and Content-Length body) and answers with
/// `response`, raw, then closes; or never answers when `response` is empty.
fn raw_upstream(response: &'static [u8]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { continue };
            std::thread::spawn(move || {
                sock.set_read_timeout(Some(Duration::from_secs(30))).ok();
                let (_, len) = common::read_request_head(&mut sock);
                let mut body = vec![0u8; len];
                sock.read_exact(&mut body).ok();
                if response.is_empty() {
                    // Never answer; hold the connection until the client goes.
                    let mut buf = [0u8; 1];
                    let _closed = sock.read(&mut buf);
                    return;
                }
                sock.write_all(response).ok();
                sock.flush().ok();
            });
        }
    });
    format!("http://{addr}")
}

#[test]
fn a_capture_of_a_request_with_a_body_carries_no_false_note() {
    let upstream = raw_upstream(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let (_proxy, url, mut lines, _) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    for i in 0..10 {
        let body = format!(
            r#"{{"model":"m","stream":true,"n":{i},"pad":"{}"}}"#,
            "x".repeat(i * 1000)
        );
        let mut sock = TcpStream::connect(authority(&url)).unwrap();
        sock.write_all(
            format!(
                "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .unwrap();
        let mut answer = Vec::new();
        sock.read_to_end(&mut answer).ok();
        assert!(
            answer.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        wait_for_line(&mut lines, "captured ");
    }
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let rec = Recording::load(&f.unwrap().path()).unwrap();
        assert!(
            !rec.meta
                .notes
                .iter()
                .any(|n| n.contains("before the request body ended")),
            "{:?}",
            rec.meta.notes
        );
        assert!(rec.request.unwrap().body.contains("\"model\""));
    }
}

#[test]
fn a_cut_content_length_answer_reaches_the_client_up_to_the_cut() {
    // A JSON answer promising more than it sends (516 bytes, and 300 KiB, of what its
    // Content-Length says), then the upstream closes: the client gets every byte that came.
    for sent in [516usize, 300 << 10] {
        let mut answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"",
            sent * 2
        )
        .into_bytes();
        let head_len = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        answer.resize(head_len + sent, b'x');
        let upstream = raw_upstream(Box::leak(answer.into_boxed_slice()));
        let dir = tempfile::tempdir().unwrap();
        let (_proxy, url, _, _) = start_listening(&[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream,
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        for run in 0..10 {
            let mut sock = TcpStream::connect(authority(&url)).unwrap();
            sock.set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            sock.write_all(b"GET /v1/x HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n")
                .unwrap();
            let mut got = Vec::new();
            sock.read_to_end(&mut got).ok();
            let body = got
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(0, |i| got.len() - i - 4);
            assert_eq!(body, sent, "{sent} bytes sent, run {run}");
        }
    }
}

#[test]
fn a_timed_out_upstream_is_logged_as_the_504_the_client_got() {
    let upstream = raw_upstream(b"");
    let dir = tempfile::tempdir().unwrap();
    let (_proxy, url, _, mut errs) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--out",
        dir.path().to_str().unwrap(),
        "--timeout",
        "0.5",
    ]);
    let mut sock = TcpStream::connect(authority(&url)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(b"GET /v1/slow HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    sock.read_to_end(&mut answer).ok();
    assert!(
        answer.starts_with(b"HTTP/1.1 504"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let line = wait_for_line(&mut errs, "/v1/slow");
    assert!(line.contains("→ 504"), "{line}");
}

#[test]
fn serve_logs_what_a_client_that_left_actually_got() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, rec) = slow_fixture(dir.path(), 50_000, 200);
    let writes = rec.chunks.iter().filter(|c| !c.bytes.is_empty()).count();
    let (_server, url, _, mut errs) =
        start_listening(&["serve", fixture.to_str().unwrap(), "--addr", "127.0.0.1:0"]);
    let mut sock = TcpStream::connect(authority(&url)).unwrap();
    sock.write_all(b"GET /v1 HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 64];
    let _answered = sock.read(&mut first);
    drop(sock);
    let line = wait_for_line(&mut errs, "GET /v1");
    let line = if line.contains("left") {
        line
    } else {
        wait_for_line(&mut errs, "left")
    };
    assert!(line.contains(&format!("of {writes} writes")), "{line}");
    assert!(!line.contains(&format!("200 in {writes} writes")), "{line}");
}

#[test]
fn proxy_refuses_smuggled_dot_segments_and_connect() {
    let (upstream, seen) = path_recording_upstream();
    let dir = tempfile::tempdir().unwrap();
    let (_kid, url, _, _) = start_listening(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &format!("{upstream}/api/v1"),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let addr = authority(&url);
    for path in [
        "/..;/..;/admin/json",
        "/x/..;jsessionid=1/..;/admin/json",
        "/%252e%252e/%252e%252e/admin/json",
        "/%25252e%25252e/admin/json",
        "/%c0%ae%c0%ae/%c0%ae%c0%ae/admin/json",
        "/%C0%AE%C0%AE%c0%afadmin/json",
        "/%e0%80%ae%e0%80%ae/admin/json",
        "/ok/%2e%2e;x/%252e%252e/admin",
    ] {
        assert_eq!(raw_status(&addr, path), 400, "{path}");
    }
    // CONNECT: not a tunnel.
    let mut sock = TcpStream::connect(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        .unwrap();
    let mut got = [0u8; 12];
    sock.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"HTTP/1.1 405", "{}", String::from_utf8_lossy(&got));
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the upstream: {:?}",
        seen.lock().unwrap()
    );
    // A plain encoded character is still passed on as it is.
    assert_eq!(raw_status(&addr, "/models/a%252Fb"), 200);
    assert_eq!(seen.lock().unwrap().clone(), ["/api/v1/models/a%252Fb"]);
}
