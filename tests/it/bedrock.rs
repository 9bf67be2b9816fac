//! AWS Bedrock end to end through the binary: the real streams in `tests/data/bedrock/` (binary
//! ConverseStream in cassettes, a base64 file and a JSON capture; decoded JSON events) come out as
//! their `expected.json` says — raw, and after `import` to `.ron`; every export format; `events`
//! shows frames; the stub builds binary frames (and InvokeModelWithResponseStream chunks); and
//! `serve` → `record` and `proxy` keep the binary bytes exactly.
//!
//! `expected.json` was written by whoever gathered the streams, by reading them (not from our
//! output): the calls a correct reader must extract, with server-run tools marked.

use crate::common;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sse_replay_core::recording::Recording;

use common::{BIN, Kid, bin, manifest, start_server, stderr};

/// One stream the data promises: which file (and stream of a capture), its client calls and
/// server tools as `(id, name, arguments)`, and whether `check` must fail (and with what).
#[derive(Debug)]
struct Want {
    file: PathBuf,
    stream: Option<usize>,
    calls: Vec<Value>,
    server_tools: Vec<Value>,
    stop_reason: Option<String>,
    error: Option<String>,
}

fn data(dir: &str) -> PathBuf {
    manifest().join("tests/data/bedrock").join(dir)
}

/// Every stream of both folders' `expected.json`.
fn wants() -> Vec<Want> {
    let mut out = Vec::new();
    for dir in ["binary", "json"] {
        let text = std::fs::read_to_string(data(dir).join("expected.json")).expect("expected.json");
        let doc: Value = serde_json::from_str(&text).expect("json");
        for (file, e) in doc["files"].as_object().expect("files") {
            let path = data(dir).join(file);
            assert!(path.exists(), "{}", path.display());
            let streams: Vec<(Option<usize>, &Value)> = match e["streams"].as_array() {
                Some(s) => s
                    .iter()
                    .map(|x| (x["interaction"].as_u64().map(|i| i as usize + 1), x))
                    .collect(),
                None => vec![(None, e)],
            };
            for (stream, s) in streams {
                let split = |server: bool| -> Vec<Value> {
                    s["calls"]
                        .as_array()
                        .expect("calls")
                        .iter()
                        .filter(|c| c["server_executed"].as_bool().unwrap_or(false) == server)
                        .map(|c| json!([c["id"], c["name"], c["arguments"]]))
                        .collect()
                };
                out.push(Want {
                    file: path.clone(),
                    stream,
                    calls: split(false),
                    server_tools: split(true),
                    stop_reason: s["stop_reason"].as_str().map(str::to_owned),
                    error: e["error"][":exception-type"].as_str().map(str::to_owned),
                });
            }
        }
    }
    out
}

fn check_json(file: &Path, stream: Option<usize>) -> (Value, i32, String) {
    let mut cmd = bin();
    cmd.args(["check", "--json"]);
    if let Some(n) = stream {
        cmd.args(["--stream", &n.to_string()]);
    }
    let o = cmd.arg(file).output().expect("run check");
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", file.display(), stderr(&o)));
    (v, o.status.code().unwrap_or(-1), stderr(&o))
}

fn triples(v: &Value) -> Vec<Value> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|c| json!([c["id"], c["name"], c["arguments"]]))
        .collect()
}

/// `check --json` on `file` (stream `stream`) gives what `want` says.
fn assert_comes_out(want: &Want, file: &Path, stream: Option<usize>) {
    let name = format!("{} (stream {stream:?})", file.display());
    let (v, code, err) = check_json(file, stream);
    assert_eq!(v["dialect"], "bedrock-converse", "{name}");
    assert_eq!(triples(&v["calls"]), want.calls, "{name}: calls");
    assert_eq!(
        triples(&v["server_tools"]),
        want.server_tools,
        "{name}: server tools"
    );
    match &want.error {
        Some(kind) => {
            assert_eq!(code, 1, "{name}: {err}");
            assert_eq!(v["ending"]["status"], "provider-error", "{name}");
            let message = v["ending"]["message"].as_str().unwrap_or("");
            assert!(
                message.starts_with(&format!("{kind}: ")),
                "{name}: {message}"
            );
            assert!(err.contains(kind), "{name}: {err}");
        }
        None => {
            assert_eq!(code, 0, "{name}: {err}");
            assert_eq!(v["ok"], true, "{name}");
            assert_eq!(v["ending"]["status"], "finished", "{name}");
            if let Some(r) = &want.stop_reason {
                assert_eq!(v["ending"]["reason"], r.as_str(), "{name}");
            }
        }
    }
}

#[test]
fn every_real_bedrock_stream_comes_out_exact() {
    let wants = wants();
    assert_eq!(wants.len(), 10, "{wants:#?}");
    for w in &wants {
        assert_comes_out(w, &w.file, w.stream);
    }
    // The binary ones say so.
    for w in wants
        .iter()
        .filter(|w| w.file.parent() == Some(&data("binary")))
    {
        let (v, _, _) = check_json(&w.file, w.stream);
        assert_eq!(v["framing"], "aws-eventstream", "{}", w.file.display());
    }
}

#[test]
fn every_real_bedrock_stream_comes_out_exact_after_import() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wants = wants();
    let mut files: Vec<&PathBuf> = wants.iter().map(|w| &w.file).collect();
    files.dedup();
    for (i, file) in files.iter().enumerate() {
        let o = bin()
            .args(["import", file.to_str().expect("path"), "-o"])
            .arg(dir.path().join(format!("f{i}.ron")))
            .output()
            .expect("import");
        assert!(o.status.success(), "{}: {}", file.display(), stderr(&o));
    }
    for w in &wants {
        let i = files.iter().position(|f| **f == w.file).expect("imported");
        // A capture with several streams is written as f{i}-1.ron, f{i}-2.ron, …
        let several = w
            .stream
            .map(|n| dir.path().join(format!("f{i}-{n}.ron")))
            .filter(|p| p.exists());
        let path = several.unwrap_or_else(|| dir.path().join(format!("f{i}.ron")));
        assert_comes_out(w, &path, None);
        let rec = Recording::load(&path).expect("load");
        assert!(!rec.meta.timing_known, "an import keeps no read boundaries");
    }
}

#[test]
fn every_export_format_carries_a_bedrock_call() {
    let file = data("binary").join("test_bedrock_model_iter_stream.yaml");
    for format in sse_replay_core::export::Format::ALL {
        let o = bin()
            .args(["export", "--stream", "1", "--format", format.name()])
            .arg(&file)
            .output()
            .expect("export");
        assert!(o.status.success(), "{}: {}", format.name(), stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("get_capital")
                && text.contains("France")
                && text.contains("tooluse_QjQX34XORLu0wJVplWWHGQ"),
            "{}: {text}",
            format.name()
        );
    }
    // The server tool is left out unless asked for, in every format.
    let file = data("binary").join("test_bedrock_model_code_execution_tool_stream.yaml");
    let o = bin().arg("export").arg(&file).output().expect("export");
    let calls: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(calls.as_array().map(Vec::len), Some(1), "{calls}");
    assert_eq!(calls[0]["name"], "final_result");
    let o = bin()
        .args(["export", "--include-server-tools"])
        .arg(&file)
        .output()
        .expect("export");
    let calls: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(calls.as_array().map(Vec::len), Some(2), "{calls}");
}

#[test]
fn events_show_each_frame_with_its_headers_payload_and_offset() {
    let file = data("binary").join("issue-18994-live-converse-stream.json");
    let o = bin().arg("events").arg(&file).output().expect("events");
    assert!(o.status.success(), "{}", stderr(&o));
    let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let names: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(
        names,
        [
            "messageStart",
            "contentBlockDelta",
            "contentBlockDelta",
            "contentBlockStop",
            "messageStop",
            "metadata"
        ]
    );
    let mut end = 0;
    for e in &events {
        assert_eq!(e["span"][0], end, "frames tile the body: {e}");
        end = e["span"][1].as_u64().expect("span end");
        assert_eq!(e["headers"][":message-type"], "event");
        assert_eq!(e["headers"][":event-type"], e["event"]);
        assert!(e["payload"].is_object(), "{e}");
    }
    assert_eq!(events[1]["payload"]["delta"]["text"], "OK");
    // An exception frame: its own headers, and the error event the dialect read.
    let file = data("binary").join("model-stream-error-exception.eventstream.base64.txt");
    let o = bin().arg("events").arg(&file).output().expect("events");
    assert_eq!(o.status.code(), Some(1));
    let e: Value = serde_json::from_slice(&o.stdout).expect("one event");
    assert_eq!(e["kind"], "error");
    assert_eq!(e["headers"][":exception-type"], "modelStreamErrorException");
    assert_eq!(e["payload"]["originalStatusCode"], 500);
}

#[test]
fn the_stub_builds_binary_frames_and_refuses_text_quirks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("b.ron");
    let o = bin()
        .args([
            "stub",
            "--dialect",
            "bedrock",
            "--call",
            r#"get_weather={"city":"深圳"}"#,
            "--call",
            "list_issues=",
            "--fragment",
            "3",
            "-o",
        ])
        .arg(&out)
        .output()
        .expect("stub");
    assert!(o.status.success(), "{}", stderr(&o));
    let rec = Recording::load(&out).expect("load");
    assert!(sse_replay_core::aws_eventstream::looks_like_aws_eventstream(&rec.body()));
    let (v, code, err) = check_json(&out, None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["framing"], "aws-eventstream");
    assert_eq!(
        triples(&v["calls"]),
        [
            json!(["call_1", "get_weather", {"city": "深圳"}]),
            json!(["call_2", "list_issues", {}])
        ]
    );
    // The text-only quirks do not exist in a binary stream; crc-error only exists there.
    for (args, message) in [
        (
            vec!["--dialect", "bedrock", "--quirk", "crlf"],
            "exists only in text streams",
        ),
        (vec!["--quirk", "crc-error"], "exists only in binary"),
        (
            vec!["--invoke-model-stream"],
            "--invoke-model-stream wraps Anthropic Messages",
        ),
    ] {
        let o = bin()
            .args(["stub", "--call", "f={}"])
            .args(&args)
            .output()
            .expect("stub");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn anthropic_inside_invoke_model_chunks_is_read_with_the_anthropic_dialect() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("invoke.ron");
    let o = bin()
        .args([
            "stub",
            "--dialect",
            "anthropic",
            "--invoke-model-stream",
            "--call",
            r#"get_weather={"city":"Paris"}"#,
            "--quirk",
            "error",
            "-o",
        ])
        .arg(&out)
        .output()
        .expect("stub");
    assert!(o.status.success(), "{}", stderr(&o));
    let (v, code, _) = check_json(&out, None);
    assert_eq!(
        (v["dialect"].as_str(), v["framing"].as_str()),
        (Some("anthropic-messages"), Some("aws-eventstream"))
    );
    // The error quirk is an exception frame here: a provider error, named by its type.
    assert_eq!(code, 1);
    assert_eq!(v["ending"]["status"], "provider-error");
    assert!(
        v["ending"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("modelStreamErrorException")),
        "{}",
        v["ending"]
    );
    let o = bin()
        .args([
            "stub",
            "--dialect",
            "anthropic",
            "--invoke-model-stream",
            "--call",
            r#"get_weather={"city":"Paris"}"#,
            "--force",
            "-o",
        ])
        .arg(&out)
        .output()
        .expect("stub");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = bin().arg("check").arg(&out).output().expect("check");
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    let head = String::from_utf8_lossy(&text.stdout);
    assert!(
        head.lines()
            .nth(1)
            .is_some_and(|l| l.contains("anthropic-messages (aws-eventstream)")),
        "{head}"
    );
    // `events`: the chunk frame's envelope as sent, the model's event as read.
    let o = bin().arg("events").arg(&out).output().expect("events");
    let first: Value = serde_json::from_str(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or(""),
    )
    .expect("json");
    assert_eq!(first["event"], "chunk");
    assert!(first["payload"]["bytes"].is_string(), "{first}");
    let data: Value = serde_json::from_str(first["data"].as_str().unwrap_or("")).expect("data");
    assert_eq!(data["type"], "message_start");
}

// ---------------------------------------------------------------------------------------------
// The wire: serve, record, proxy
// ---------------------------------------------------------------------------------------------

/// Runs `sse-replay ARGS` to completion (at most `limit`).
fn run(args: &[&str], limit: Duration) -> Output {
    let mut child = Kid(Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn"));
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.0.try_wait().expect("wait") {
            let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
            if let Some(mut s) = child.0.stdout.take() {
                s.read_to_end(&mut stdout).expect("stdout");
            }
            if let Some(mut s) = child.0.stderr.take() {
                s.read_to_end(&mut stderr).expect("stderr");
            }
            return Output {
                status,
                stdout,
                stderr,
            };
        }
        assert!(Instant::now() < deadline, "{args:?} did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_sends_the_eventstream_type_and_record_and_proxy_keep_the_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = manifest().join("recordings/bedrock-converse-weather.ron");
    let original = Recording::load(&fixture).expect("load");
    let (_server, url, _) = start_server(&[
        "serve",
        fixture.to_str().expect("path"),
        "--addr",
        "127.0.0.1:0",
        "--instant",
        "--rechunk",
        "7",
    ]);
    // The path boto3 posts to.
    let out = dir.path().join("rec.ron");
    let o = run(
        &[
            "record",
            &format!("{url}model/anthropic.claude-v1%3A0/converse-stream"),
            "-d",
            "{}",
            "-o",
            out.to_str().expect("path"),
        ],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let got = Recording::load(&out).expect("load");
    assert_eq!(got.body(), original.body(), "record keeps the binary bytes");
    let ct = got
        .response
        .as_ref()
        .and_then(|r| r.headers.iter().find(|(k, _)| k == "content-type"))
        .map(|(_, v)| v.clone());
    assert_eq!(ct.as_deref(), Some("application/vnd.amazon.eventstream"));
    let (v, code, err) = check_json(&out, None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["framing"], "aws-eventstream");
    assert_eq!(v["calls"].as_array().map(Vec::len), Some(2));
    // Through the proxy: captured (an event stream by its content type), bytes as received.
    let captures = dir.path().join("captures");
    let (_proxy, proxy_url, lines) = start_server(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        url.trim_end_matches('/'),
        "--out",
        captures.to_str().expect("path"),
    ]);
    let via = dir.path().join("via-proxy.ron");
    let o = run(
        &[
            "record",
            &format!("{proxy_url}model/m/converse-stream"),
            "-d",
            "{}",
            "-o",
            via.to_str().expect("path"),
        ],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let line = lines
        .recv_timeout(Duration::from_secs(20))
        .expect("no capture line");
    assert!(line.starts_with("captured "), "{line}");
    let files: Vec<PathBuf> = std::fs::read_dir(&captures)
        .expect("captures")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let captured = Recording::load(&files[0]).expect("load");
    assert_eq!(
        captured.body(),
        original.body(),
        "the proxy keeps the bytes"
    );
    assert_eq!(
        Recording::load(&via).expect("load").body(),
        original.body(),
        "the client got the upstream's bytes"
    );
}

/// The AWS SDK for JavaScript's Bedrock Runtime client speaks HTTP/2 to an `http://` endpoint
/// (prior knowledge): `serve` (and so every `test` case) answers it, and HTTP/1.1 as before.
#[test]
fn serve_answers_http2_prior_knowledge_as_the_aws_sdk_for_javascript_sends_it() {
    let fixture = manifest().join("recordings/bedrock-converse-weather.ron");
    let original = Recording::load(&fixture).expect("load");
    let (_server, url, _) = start_server(&[
        "serve",
        fixture.to_str().expect("path"),
        "--addr",
        "127.0.0.1:0",
        "--instant",
    ]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Installs the TLS provider reqwest needs to build a client at all.
    let http1 = sse_replay_net::http_client(Duration::from_secs(5)).expect("client");
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .no_proxy()
        .build()
        .expect("client");
    for (client, version) in [
        (h2, reqwest::Version::HTTP_2),
        (http1, reqwest::Version::HTTP_11),
    ] {
        let (got_version, content_type, body) = rt.block_on(async {
            let resp = client
                .post(format!(
                    "{url}model/anthropic.claude-v1%3A0/converse-stream"
                ))
                .body("{}")
                .send()
                .await
                .expect("send");
            let v = resp.version();
            let ct = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            (v, ct, resp.bytes().await.expect("body"))
        });
        assert_eq!(got_version, version);
        assert_eq!(
            content_type.as_deref(),
            Some("application/vnd.amazon.eventstream")
        );
        assert_eq!(body.as_ref(), original.body().as_slice(), "{version:?}");
    }
}

/// Binary bodies in the captures people have: a HAR entry whose body is base64
/// (`encoding: base64`), and a cassette that kept the body gzip-encoded (`!!binary`).
#[test]
fn binary_bodies_import_from_har_base64_and_gzip_cassettes() {
    use base64::Engine as _;
    use std::io::Write as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let body = Recording::load(&manifest().join("recordings/bedrock-converse-weather.ron"))
        .expect("load")
        .body();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-v1%3A0/converse-stream";
    let har = json!({"log": {"version": "1.2", "entries": [{
        "startedDateTime": "2026-01-01T00:00:00Z",
        "request": {"method": "POST", "url": url, "headers": [
            {"name": "authorization", "value": "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20260101/us-east-1/bedrock/aws4_request, Signature=abc"}
        ], "postData": {"text": "{}"}},
        "response": {"status": 200,
            "headers": [{"name": "content-type", "value": "application/vnd.amazon.eventstream"}],
            "content": {"mimeType": "application/vnd.amazon.eventstream", "encoding": "base64", "text": b64(&body)}}
    }]}});
    let har_path = dir.path().join("bedrock.har");
    std::fs::write(&har_path, har.to_string()).expect("write");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&body).expect("gzip");
    let gz = gz.finish().expect("gzip");
    let cassette = format!(
        "interactions:\n- request:\n    method: POST\n    uri: {url}\n    body: '{{}}'\n  response:\n    status: {{code: 200, message: OK}}\n    headers:\n      content-type: [application/vnd.amazon.eventstream]\n      content-encoding: [gzip]\n    body:\n      string: !!binary |\n        {}\nversion: 1\n",
        b64(&gz)
    );
    let yaml_path = dir.path().join("bedrock.yaml");
    std::fs::write(&yaml_path, cassette).expect("write");
    for path in [&har_path, &yaml_path] {
        let (v, code, err) = check_json(path, None);
        assert_eq!(code, 0, "{}: {err}", path.display());
        assert_eq!(v["framing"], "aws-eventstream");
        assert_eq!(
            triples(&v["calls"]),
            [
                json!(["call_1", "get_weather", {"location": "Paris, France", "unit": "celsius"}]),
                json!(["call_2", "get_time", {"timezone": "Europe/Paris"}])
            ],
            "{}",
            path.display()
        );
        let out = dir.path().join(format!(
            "{}.ron",
            path.extension().and_then(|e| e.to_str()).unwrap_or("x")
        ));
        let o = bin()
            .arg("import")
            .arg(path)
            .arg("-o")
            .arg(&out)
            .output()
            .expect("import");
        assert!(o.status.success(), "{}", stderr(&o));
        let rec = Recording::load(&out).expect("load");
        assert_eq!(rec.body(), body, "the decoded bytes, exactly");
        let text = std::fs::read_to_string(&out).expect("read");
        assert!(!text.contains("Signature=abc"), "secrets redacted");
    }
}
