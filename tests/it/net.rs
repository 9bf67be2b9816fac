//! Real HTTP on 127.0.0.1, with servers these tests start: `serve` → `record` round trips, secret
//! redaction, HTTP errors, cut and stalled streams, SIGKILL during recording, and the proxy.
//! Every wait is bounded; child processes are killed on drop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sse_replay_core::pipeline::{Options, run_chunks};
use sse_replay_core::recording::{Chunk, Recording, ResponseInfo};
use sse_replay_core::stub::{self, Layout, StubCall, StubSpec};

use common::{BIN, Kid, start_server, stderr};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// `serve FILE EXTRA...` on port 0.
fn serve(file: &Path, extra: &[&str]) -> (Kid, String) {
    let mut args = vec!["serve", file.to_str().unwrap(), "--addr", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let (kid, url, _) = start_server(&args);
    (kid, url)
}

/// Runs `sse-replay ARGS` to completion (at most `limit`), with extra environment variables.
fn run(args: &[&str], env: &[(&str, &str)], limit: Duration) -> Output {
    common::run_env(&common::manifest(), args, env, limit)
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The calls a body yields: (name, raw arguments).
fn calls_of(chunks: &[Chunk]) -> Vec<(String, String)> {
    let out = run_chunks(
        chunks.iter().map(|c| (c.bytes.as_slice(), c.t_micros)),
        Options::default(),
    );
    out.calls
        .iter()
        .map(|c| (c.name.clone(), c.raw_arguments.to_string()))
        .collect()
}

/// Parallel calls with CJK arguments, interleaved, CRLF line endings, cut into 11-byte reads 20 ms
/// apart: multi-byte characters and CRLFs straddle reads.
fn parallel_fixture(dir: &Path) -> (PathBuf, Recording) {
    let mut spec = StubSpec {
        title: "parallel".into(),
        calls: vec![
            StubCall {
                id: "call_a".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"深圳","days":3}"#.into(),
            },
            StubCall {
                id: "call_b".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"東京","unit":"℃"}"#.into(),
            },
        ],
        fragment_chars: vec![3, 4],
        layout: Layout::Interleaved,
        read_bytes: Some(11),
        gap_micros: 2_000,
        ..Default::default()
    };
    spec.quirks.crlf = true;
    let rec = stub::build(&spec);
    let path = dir.join("parallel.ron");
    rec.save(&path).unwrap();
    (path, rec)
}

fn seed_fixture() -> (PathBuf, Recording) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("recordings/seed-example.ron");
    let rec = Recording::load(&path).unwrap();
    (path, rec)
}

/// A recording of a whole error response.
fn error_fixture(dir: &Path, status: u16, content_type: &str, body: &str) -> PathBuf {
    let rec = Recording {
        response: Some(ResponseInfo {
            status,
            headers: vec![("content-type".into(), content_type.into())],
        }),
        chunks: vec![Chunk {
            t_micros: 0,
            bytes: body.as_bytes().to_vec(),
        }],
        ..Default::default()
    };
    let path = dir.join(format!("error-{status}.ron"));
    rec.save(&path).unwrap();
    path
}

/// A test server without any HTTP library: answers each connection with a hand-written chunked
/// response following `script`, and reports each request head it read.
enum Step {
    Write(&'static [u8]),
    /// One chunk of bytes made at run time.
    WriteOwned(Vec<u8>),
    Sleep(u64),
    /// Hold until the test says go (or it is gone, or 30 s passed).
    WaitFor(mpsc::Receiver<()>),
    /// End the chunked body properly.
    End,
}

fn raw_server(script: Vec<Step>) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut sock, _)) = listener.accept() else {
            return;
        };
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let (head, len) = common::read_request_head(&mut sock);
        let mut body = vec![0u8; len];
        sock.read_exact(&mut body).ok();
        tx.send(head).ok();
        sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n").ok();
        for step in script {
            let mut chunk = |b: &[u8]| {
                sock.write_all(format!("{:x}\r\n", b.len()).as_bytes())
                    .and_then(|()| sock.write_all(b))
                    .and_then(|()| sock.write_all(b"\r\n"))
            };
            match step {
                Step::Write(b) => chunk(b),
                Step::WriteOwned(b) => chunk(&b),
                Step::WaitFor(go) => {
                    go.recv_timeout(Duration::from_secs(30)).ok();
                    Ok(())
                }
                Step::Sleep(ms) => {
                    std::thread::sleep(Duration::from_millis(ms));
                    Ok(())
                }
                Step::End => sock.write_all(b"0\r\n\r\n"),
            }
            .ok();
        }
        // Dropping the socket closes the connection (abruptly when the body was not ended).
    });
    (url, rx)
}

const EVENT_1: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n";
const HALF_EVENT: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_ca";

// ---------------------------------------------------------------------------------------------
// serve → record
// ---------------------------------------------------------------------------------------------

#[test]
fn serve_record_round_trip_keeps_bytes_and_calls() {
    let dir = tmp();
    let (parallel, parallel_rec) = parallel_fixture(dir.path());
    let (seed, seed_rec) = seed_fixture();
    for (file, original) in [(&seed, &seed_rec), (&parallel, &parallel_rec)] {
        let want_calls = calls_of(&original.chunks);
        assert_eq!(want_calls.len(), 2);
        for rechunk in [None, Some("1"), Some("7")] {
            let mut extra = vec!["--instant"];
            if let Some(n) = rechunk {
                extra.extend(["--rechunk", n]);
            }
            let (_server, url) = serve(file, &extra);
            let out = dir.path().join(format!(
                "rt-{}-{}.ron",
                file.file_stem().unwrap().to_string_lossy(),
                rechunk.unwrap_or("0")
            ));
            let o = run(
                &[
                    "record",
                    &format!("{url}v1/chat/completions"),
                    "-d",
                    "{}",
                    "-o",
                    out.to_str().unwrap(),
                ],
                &[],
                Duration::from_secs(60),
            );
            assert!(o.status.success(), "rechunk {rechunk:?}: {}", stderr(&o));
            let got = Recording::load(&out).unwrap();
            assert_eq!(
                got.body(),
                original.body(),
                "same bytes (rechunk {rechunk:?}, {})",
                file.display()
            );
            assert_eq!(
                calls_of(&got.chunks),
                want_calls,
                "same calls (rechunk {rechunk:?})"
            );
            assert_eq!(got.meta.source, "record");
            assert!(got.meta.timing_known && !got.meta.interrupted);
            assert_eq!(got.response.as_ref().map(|r| r.status), Some(200));
            assert_eq!(
                got.request.as_ref().map(|r| r.method.as_str()),
                Some("POST")
            );
            assert!(
                got.chunks
                    .windows(2)
                    .all(|w| w[0].t_micros <= w[1].t_micros),
                "times are monotonic"
            );
            assert!(
                !out.with_extension("ron.partial").exists(),
                "the journal is removed after a clean finish"
            );
        }
    }
}

#[test]
fn recorded_timing_is_replayed() {
    // Pacing is a lower bound a loaded machine cannot break: a write is never sent before it is
    // due, so the last read arrives at least the recorded span (÷ speed) after the request left
    // (the recorder's clock starts there). --speed 0.5 must take twice the span, which an ignored
    // --speed would not. How close to the schedule it runs is measured, not asserted
    // (`timing_fidelity`); the schedule itself is `serve::Plan`'s unit tests'.
    let dir = tmp();
    let (seed, original) = seed_fixture();
    let last_read = |extra: &[&str], name: &str| {
        let (_server, url) = serve(&seed, extra);
        let out = dir.path().join(name);
        let o = run(
            &["record", &url, "-o", out.to_str().unwrap()],
            &[],
            Duration::from_secs(60),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let got = Recording::load(&out).unwrap();
        assert_eq!(got.body(), original.body());
        got.duration_micros()
    };
    let want = original.duration_micros();
    assert!(want >= 400_000, "{want}");
    // 1 ms for rounding the schedule to whole microseconds.
    let s1 = last_read(&[], "s1.ron");
    assert!(s1 + 1_000 >= want, "speed 1: {s1} µs vs recorded {want} µs");
    let slow = last_read(&["--speed", "0.5"], "slow.ron");
    assert!(
        slow + 1_000 >= 2 * want,
        "speed 0.5: {slow} µs vs {} µs",
        2 * want
    );
}

#[test]
fn serve_handles_concurrent_clients_and_stops_on_ctrl_c() {
    let (seed, original) = seed_fixture();
    // At a quarter speed each stream takes four times its span: served one after another, the
    // second answer would only start when the first has ended. Served together, every answer
    // starts before any ends — a question of order, not of how fast a loaded machine is.
    let (mut server, url) = serve(&seed, &["--speed", "0.25"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answers = rt.block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(5)).unwrap();
        let get = |path: &'static str| {
            let client = client.clone();
            let url = format!("{url}{path}");
            async move {
                let resp = client.post(url).body("{}").send().await.unwrap();
                let head_at = Instant::now();
                let body = resp.bytes().await.unwrap();
                (head_at, Instant::now(), body)
            }
        };
        let (a, b, c) = tokio::join!(get("a"), get("b"), get("c"));
        [a, b, c]
    });
    for (_, _, body) in &answers {
        assert_eq!(body.as_ref(), original.body().as_slice());
    }
    let last_head = answers.iter().map(|a| a.0).max().unwrap();
    let first_end = answers.iter().map(|a| a.1).min().unwrap();
    assert!(
        last_head < first_end,
        "an answer started only after another had ended: not concurrent"
    );
    // Ctrl+C (SIGINT) stops it cleanly.
    let pid = server.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = server.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "serve did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}

// ---------------------------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------------------------

#[test]
fn secrets_sent_by_record_never_reach_the_disk() {
    let dir = tmp();
    let (url, heads) = raw_server(vec![
        Step::Write(EVENT_1),
        Step::Write(b"data: [DONE]\n\n"),
        Step::End,
    ]);
    let out = dir.path().join("secret.ron");
    let target = format!("{url}v1/chat?key=url-secret-3&model=x");
    let o = run(
        &[
            "record",
            &target,
            "-d",
            r#"{"stream":true}"#,
            "-H",
            "Authorization: Bearer $SSE_TEST_KEY",
            "-H",
            "x-api-key: literal-secret-2",
            "-H",
            "X-Custom-Auth: ${SSE_TEST_KEY}",
            "-o",
            out.to_str().unwrap(),
        ],
        &[("SSE_TEST_KEY", "sk-test-secret-1")],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The real values went over the wire...
    let head = heads.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(head.contains("Bearer sk-test-secret-1"), "{head}");
    assert!(
        head.contains("literal-secret-2") && head.contains("key=url-secret-3"),
        "{head}"
    );
    // ...and none reached the recording or the terminal.
    let text = std::fs::read_to_string(&out).unwrap();
    for secret in ["sk-test-secret-1", "literal-secret-2", "url-secret-3"] {
        assert!(
            !text.contains(secret),
            "{secret} leaked into the recording:\n{text}"
        );
        assert!(
            !stderr(&o).contains(secret) && !String::from_utf8_lossy(&o.stdout).contains(secret)
        );
    }
    let rec = Recording::load(&out).unwrap();
    let req = rec.request.unwrap();
    assert!(
        req.headers
            .iter()
            .any(|(k, v)| k == "Authorization" && v == "Bearer ‹redacted›"),
        "{:?}",
        req.headers
    );
    assert!(
        req.url.contains("key=REDACTED") && req.url.contains("model=x"),
        "{}",
        req.url
    );
}

#[test]
fn a_missing_environment_variable_is_a_usage_error() {
    let o = run(
        &[
            "record",
            "http://127.0.0.1:9/",
            "-H",
            "Authorization: Bearer $SSE_TEST_UNSET_VAR",
        ],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("SSE_TEST_UNSET_VAR"), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------

#[test]
fn http_errors_are_recorded_with_the_providers_message() {
    let dir = tmp();
    let cases = [
        (
            401,
            "application/json",
            r#"{"error":{"message":"Incorrect API key provided: sk-xx","type":"invalid_request_error"}}"#,
            "Incorrect API key provided",
        ),
        (
            500,
            "text/plain",
            "Internal Server Error\n",
            "Internal Server Error",
        ),
    ];
    for (status, ct, body, message) in cases {
        let fixture = error_fixture(dir.path(), status, ct, body);
        let (_server, url) = serve(&fixture, &[]);
        let out = dir.path().join(format!("got-{status}.ron"));
        let o = run(
            &["record", &url, "-d", "{}", "-o", out.to_str().unwrap()],
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(&format!("HTTP {status}: {message}")), "{err}");
        let rec = Recording::load(&out).unwrap();
        assert_eq!(rec.response.as_ref().unwrap().status, status);
        assert_eq!(rec.body(), body.as_bytes(), "the error body is recorded");
        assert!(
            rec.meta.notes.iter().any(|n| n.contains(message)),
            "{:?}",
            rec.meta.notes
        );
    }
}

#[test]
fn a_server_that_closes_mid_event_keeps_what_arrived() {
    let dir = tmp();
    // Abrupt close (no final chunk) and a clean end of body in the middle of an event.
    for (name, end) in [("abrupt", None), ("clean", Some(Step::End))] {
        let mut script = vec![
            Step::Write(EVENT_1),
            Step::Sleep(50),
            Step::Write(HALF_EVENT),
        ];
        script.extend(end);
        let (url, _) = raw_server(script);
        let out = dir.path().join(format!("{name}.ron"));
        let o = run(
            &["record", &url, "-o", out.to_str().unwrap()],
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        let error_lines: Vec<_> = err
            .lines()
            .filter(|l| l.starts_with("sse-replay:"))
            .collect();
        assert_eq!(error_lines.len(), 1, "one error line: {err}");
        let rec = Recording::load(&out).unwrap();
        assert_eq!(
            rec.body(),
            [EVENT_1, HALF_EVENT].concat(),
            "{name}: nothing received is lost"
        );
        assert_eq!(rec.chunks.len(), 2);
    }
}

#[test]
fn a_stalled_stream_hits_the_idle_timeout() {
    let dir = tmp();
    let (url, _) = raw_server(vec![Step::Write(EVENT_1), Step::Sleep(6_000), Step::End]);
    let out = dir.path().join("stall.ron");
    let started = Instant::now();
    let o = run(
        &[
            "record",
            &url,
            "--timeout",
            "1",
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(30),
    );
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("idle timeout"), "{}", stderr(&o));
    assert!(took < Duration::from_secs(5), "gave up after {took:?}");
    let rec = Recording::load(&out).unwrap();
    assert_eq!(rec.body(), EVENT_1);
    assert!(
        rec.meta.notes.iter().any(|n| n.contains("idle timeout")),
        "{:?}",
        rec.meta.notes
    );
}

#[test]
fn connection_refused_is_one_clear_line() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tmp();
    let out = dir.path().join("refused.ron");
    let o = run(
        &[
            "record",
            &format!("http://127.0.0.1:{port}/v1?key=zz-secret"),
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let lines: Vec<_> = err
        .lines()
        .filter(|l| l.starts_with("sse-replay:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("cannot connect") && lines[0].contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
    assert!(!err.contains("zz-secret"), "{err}");
    // Nothing arrived, so nothing is written: no recording, no journal, nothing else.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
    let out_text = String::from_utf8_lossy(&o.stdout);
    assert!(out_text.contains("not saved"), "{out_text}");
}

#[test]
fn an_https_url_without_a_tls_server_fails_cleanly() {
    // A plain-HTTP server behind an https:// URL: it answers the ClientHello with plain text.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        if let Ok((mut sock, _)) = listener.accept() {
            sock.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .ok();
            // Keep the connection until the client gives up on it (it has read the answer then).
            sock.set_read_timeout(Some(Duration::from_secs(30))).ok();
            let mut sink = [0u8; 4096];
            while sock.read(&mut sink).is_ok_and(|n| n > 0) {}
        }
    });
    let dir = tmp();
    let o = run(
        &[
            "record",
            &url,
            "--timeout",
            "5",
            "-o",
            dir.path().join("tls.ron").to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.lines().filter(|l| l.starts_with("sse-replay:")).count() == 1,
        "{err}"
    );
    assert!(err.contains("TLS"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Crash safety
// ---------------------------------------------------------------------------------------------

#[test]
fn sigkill_during_recording_leaves_a_file_with_the_flushed_chunks() {
    let dir = tmp();
    // One event every 100 ms for several seconds.
    let spec = StubSpec {
        calls: vec![StubCall {
            id: "c".into(),
            name: "slow".into(),
            arguments: format!(r#"{{"text":"{}"}}"#, "深".repeat(40)),
        }],
        fragment_chars: vec![1],
        gap_micros: 100_000,
        ..Default::default()
    };
    let original = stub::build(&spec);
    let fixture = dir.path().join("slow.ron");
    original.save(&fixture).unwrap();
    let (_server, url) = serve(&fixture, &[]);
    let out = dir.path().join("killed.ron");
    let journal = dir.path().join("killed.ron.partial");
    let mut recorder = Kid(Command::new(BIN)
        .args(["record", &url, "-o", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = 0;
    while seen < 5 {
        assert!(Instant::now() < deadline, "the journal never got 5 chunks");
        std::thread::sleep(Duration::from_millis(50));
        seen = std::fs::read_to_string(&journal)
            .map_or(0, |t| t.lines().filter(|l| l.starts_with("Chunk(")).count());
    }
    recorder.0.kill().unwrap(); // SIGKILL
    recorder.0.wait().unwrap();
    assert!(!out.exists(), "no final file after SIGKILL");
    let rec = Recording::load(&journal).unwrap();
    assert!(rec.meta.interrupted, "marked interrupted");
    assert!(
        rec.chunks.len() >= seen,
        "{} chunks salvaged, {seen} were on disk",
        rec.chunks.len()
    );
    assert!(
        original.body().starts_with(&rec.body()),
        "the salvaged body is a prefix of what was served"
    );
    assert_eq!(rec.response.map(|r| r.status), Some(200));
    // The CLI opens it too (exit 1: the stream in it ended early; 2 would mean unreadable).
    let o = run(
        &["check", journal.to_str().unwrap()],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{} chunks", rec.chunks.len())));
}

/// When each write of [`timed_server`] left, with the body bytes sent by then.
type SendLog = std::sync::Arc<std::sync::Mutex<Vec<(Instant, usize)>>>;

/// A server that streams one small event every `gap_ms` for as long as the client reads, noting
/// after each write when it left and how many body bytes had been sent by then.
fn timed_server(gap_ms: u64) -> (String, SendLog) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = sent.clone();
    std::thread::spawn(move || {
        let Ok((mut sock, _)) = listener.accept() else {
            return;
        };
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && sock.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        if sock
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            .is_err()
        {
            return;
        }
        let mut total = 0usize;
        for i in 0..3000u32 {
            let event = format!("data: {{\"n\":{i}}}\n\n");
            let framed = format!("{:x}\r\n{event}\r\n", event.len());
            if sock.write_all(framed.as_bytes()).is_err() {
                return; // the recorder is gone
            }
            total += event.len();
            log.lock().unwrap().push((Instant::now(), total));
            std::thread::sleep(Duration::from_millis(gap_ms));
        }
    });
    (url, sent)
}

/// Kills `record` (SIGKILL) mid-stream and returns how much it lost: the time between the kill
/// and the sending of the first byte the journal does not hold (zero when it holds all that was
/// sent before the kill). "Lost" is data the server had sent, which a live recorder would have
/// received within a loopback hop, but which is not in the journal.
fn sigkill_loss(dir: &Path, name: &str, extra_delay: Duration) -> Duration {
    let (url, sent) = timed_server(5);
    let out = dir.join(format!("{name}.ron"));
    let journal = dir.join(format!("{name}.ron.partial"));
    let mut recorder = Kid(Command::new(BIN)
        .args(["record", &url, "-o", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&journal)
        .map_or(0, |t| t.lines().filter(|l| l.starts_with("Chunk(")).count())
        < 5
    {
        assert!(Instant::now() < deadline, "the journal never got 5 chunks");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(extra_delay);
    let killed_at = Instant::now();
    recorder.0.kill().unwrap(); // SIGKILL
    recorder.0.wait().unwrap();
    let held = Recording::load(&journal).unwrap().body().len();
    let sent = sent.lock().unwrap().clone();
    // The first write that carried a byte the journal lacks.
    sent.iter()
        .find(|(_, total)| *total > held)
        .map_or(Duration::ZERO, |(at, _)| {
            killed_at.saturating_duration_since(*at)
        })
}

/// The documented bound: a SIGKILLed recorder loses less than this much of the stream.
const SIGKILL_LOSS_BOUND: Duration = Duration::from_millis(100);

#[test]
fn sigkill_loses_well_under_the_bound() {
    let dir = tmp();
    let mut rng = fastrand::Rng::with_seed(0x5eed_1234_abcd_0042);
    let mut losses = Vec::new();
    for k in 0..4 {
        let delay = Duration::from_millis(rng.usize(..60) as u64);
        losses.push(sigkill_loss(dir.path(), &format!("k{k}"), delay));
    }
    let worst = losses.iter().max().copied().unwrap_or_default();
    // Reads are handed to the OS as soon as the writer drains its queue, so the loss is what is
    // in flight inside the process: milliseconds. Half the bound leaves room for a loaded machine.
    assert!(
        worst < SIGKILL_LOSS_BOUND / 2,
        "losses {losses:?}: worst {worst:?}"
    );
}

/// Measurement (reported in the notes): many kills at random moments.
/// `cargo test --test it net::sigkill_loss_distribution -- --ignored --nocapture`
#[test]
#[ignore = "measurement; run with --ignored --nocapture"]
fn sigkill_loss_distribution() {
    let dir = tmp();
    let mut rng = fastrand::Rng::with_seed(0xfeed_beef_0000_0001);
    let mut ms: Vec<f64> = (0..42)
        .map(|k| {
            let delay = Duration::from_millis(rng.usize(..200) as u64);
            sigkill_loss(dir.path(), &format!("m{k}"), delay).as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    let over = ms
        .iter()
        .filter(|&&m| m > SIGKILL_LOSS_BOUND.as_secs_f64() * 1e3)
        .count();
    println!(
        "SIGKILL loss over {} kills: median {:.2} ms, p90 {:.2} ms, max {:.2} ms, over the bound: {over}",
        ms.len(),
        ms[ms.len() / 2],
        ms[ms.len() * 9 / 10],
        ms[ms.len() - 1]
    );
    assert_eq!(over, 0);
}

// ---------------------------------------------------------------------------------------------
// Proxy
// ---------------------------------------------------------------------------------------------

#[test]
fn proxy_streams_unbuffered_and_records_what_the_client_received() {
    let dir = tmp();
    // The upstream sends one event, then waits until the client has it through the proxy before
    // it sends the next: a proxy that held anything back would stall the exchange (no timing).
    let spec = StubSpec {
        calls: vec![StubCall {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: r#"{"city":"深圳"}"#.into(),
        }],
        fragment_chars: vec![4],
        ..Default::default()
    };
    let upstream_rec = stub::build(&spec);
    let events: Vec<Vec<u8>> = upstream_rec
        .chunks
        .iter()
        .map(|c| c.bytes.clone())
        .collect();
    assert!(events.len() >= 4, "{} events", events.len());
    let mut script = Vec::new();
    let mut releases = Vec::new();
    for (i, event) in events.iter().enumerate() {
        script.push(Step::WriteOwned(event.clone()));
        if i + 1 < events.len() {
            let (go, wait) = mpsc::channel();
            releases.push(go);
            script.push(Step::WaitFor(wait));
        }
    }
    script.push(Step::End);
    let (upstream_url, _heads) = raw_server(script);
    let captures = dir.path().join("captures");
    let (_proxy, proxy_url, proxy_lines) = start_server(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        upstream_url.trim_end_matches('/'),
        "--out",
        captures.to_str().unwrap(),
    ]);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let received = rt.block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(5)).unwrap();
        let mut resp = client
            .post(format!("{proxy_url}v1/chat/completions"))
            .header("authorization", "Bearer sk-proxy-secret")
            .header("content-type", "application/json")
            .body(r#"{"stream":true}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(
            resp.headers().get("content-type").unwrap(),
            "text/event-stream"
        );
        let mut received = Vec::new();
        let mut releases = releases.into_iter();
        let mut want = 0;
        for (i, event) in events.iter().enumerate() {
            want += event.len();
            // Event i must arrive while the upstream still holds event i + 1.
            while received.len() < want {
                let chunk = tokio::time::timeout(Duration::from_secs(20), resp.chunk())
                    .await
                    .unwrap_or_else(|_| panic!("event {i} never came through: buffered?"))
                    .unwrap()
                    .unwrap_or_else(|| panic!("the body ended before event {i}"));
                received.extend_from_slice(&chunk);
            }
            assert_eq!(received.len(), want, "more than event {i} arrived at once");
            if let Some(go) = releases.next() {
                go.send(()).unwrap();
            }
        }
        let rest = tokio::time::timeout(Duration::from_secs(20), resp.chunk())
            .await
            .expect("the body never ended")
            .unwrap();
        assert!(rest.is_none(), "bytes after the last event: {rest:?}");
        received
    });
    assert_eq!(
        received,
        upstream_rec.body(),
        "the client gets the upstream's bytes"
    );

    let line = proxy_lines
        .recv_timeout(Duration::from_secs(10))
        .expect("no capture line");
    assert!(line.starts_with("captured "), "{line}");
    let files: Vec<_> = std::fs::read_dir(&captures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].extension().unwrap(), "ron");
    let rec = Recording::load(&files[0]).unwrap();
    assert_eq!(
        rec.body(),
        received,
        "the recording matches what the client received"
    );
    assert_eq!(rec.meta.source, "proxy");
    assert!(!rec.meta.interrupted);
    assert_eq!(
        rec.chunks.len(),
        upstream_rec.chunks.len(),
        "read by read: one event per read, as the upstream sent them"
    );
    let req = rec.request.unwrap();
    assert!(
        req.url.starts_with(upstream_url.trim_end_matches('/'))
            && req.url.ends_with("/v1/chat/completions"),
        "{}",
        req.url
    );
    assert_eq!(req.body, r#"{"stream":true}"#);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!text.contains("sk-proxy-secret"), "{text}");
    assert_eq!(calls_of(&rec.chunks), calls_of(&upstream_rec.chunks));
}

#[test]
fn proxy_answers_502_when_the_upstream_is_down() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tmp();
    let (_proxy, proxy_url, _) = start_server(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &format!("http://127.0.0.1:{port}"),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let status = rt.block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(5)).unwrap();
        client
            .get(format!("{proxy_url}x"))
            .send()
            .await
            .unwrap()
            .status()
    });
    assert_eq!(status, 502);
}

// ---------------------------------------------------------------------------------------------
// Timing fidelity (measured, reported): cargo test --test it net::timing_fidelity -- --ignored --nocapture
// ---------------------------------------------------------------------------------------------

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[ignore = "measurement; run with --ignored --nocapture"]
fn timing_fidelity() {
    let dir = tmp();
    // 60 events with gaps from 5 to 40 ms.
    let mut chunks = Vec::new();
    let mut t = 0u64;
    for i in 0..60u64 {
        chunks.push(Chunk {
            t_micros: t,
            bytes: format!("data: {{\"n\":{i}}}\n\n").into_bytes(),
        });
        t += 5_000 + (i * 7_919) % 35_000;
    }
    let original = Recording {
        chunks,
        meta: sse_replay_core::recording::Meta {
            timing_known: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let fixture = dir.path().join("gaps.ron");
    original.save(&fixture).unwrap();
    let (_server, url) = serve(&fixture, &["--speed", "1"]);
    let out = dir.path().join("gaps-rec.ron");
    let o = run(
        &["record", &url, "-o", out.to_str().unwrap()],
        &[],
        Duration::from_secs(60),
    );
    assert!(o.status.code().is_some());
    let got = Recording::load(&out).unwrap();
    assert_eq!(got.body(), original.body());
    assert_eq!(
        got.chunks.len(),
        original.chunks.len(),
        "one read per event at these gaps"
    );
    let gaps = |r: &Recording| {
        r.chunks
            .windows(2)
            .map(|w| (w[1].t_micros - w[0].t_micros) as f64)
            .collect::<Vec<_>>()
    };
    let errors: Vec<f64> = gaps(&got)
        .iter()
        .zip(gaps(&original))
        .map(|(a, b)| (a - b).abs() / 1000.0)
        .collect();
    let max = errors.iter().copied().fold(0.0, f64::max);
    let med = median(errors);
    println!(
        "serve --speed 1 → record: inter-chunk gap error median {med:.3} ms, max {max:.3} ms over {} gaps",
        original.chunks.len() - 1
    );
    assert!(med < 2.0, "median gap error {med} ms");

    // Recorder cost per read: a 4 MB body in 64-byte writes as fast as possible; wall time per read
    // is an upper bound on what the recorder adds (it includes the server and the kernel).
    let body: Vec<u8> = (0..65_536)
        .flat_map(|i| format!("data: {{\"i\":{i:>20}}}\n\n").into_bytes())
        .collect();
    let big = Recording {
        chunks: vec![Chunk {
            t_micros: 0,
            bytes: body.clone(),
        }],
        ..Default::default()
    };
    let big_path = dir.path().join("big.ron");
    big.save(&big_path).unwrap();
    let (_server, url) = serve(&big_path, &["--instant", "--rechunk", "64"]);
    let out = dir.path().join("big-rec.ron");
    let o = run(
        &["record", &url, "-o", out.to_str().unwrap()],
        &[],
        Duration::from_secs(300),
    );
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let got = Recording::load(&out).unwrap();
    assert_eq!(got.body(), body);
    let span = got.duration_micros() - got.chunks[0].t_micros;
    let per = span as f64 / got.chunks.len() as f64;
    println!(
        "record: {} bytes in {} reads over {:.1} ms: {per:.1} µs per read (upper bound on recorder overhead)",
        body.len(),
        got.chunks.len(),
        span as f64 / 1000.0
    );
    assert!(per < 1000.0);
}
