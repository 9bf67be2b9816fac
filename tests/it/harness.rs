//! `sse-replay test` end to end: the Rust example clients (real processes) against the replay
//! server on loopback, verdicts, diagnosis, timeouts, JUnit and JSON reports, and the bytes the
//! variants really put on the wire.

use crate::common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{bin, manifest, stderr};
use serde_json::Value;
use sse_replay_net::harness::{self, Expected, Variant, variants};

/// The example client `name` (`client_correct`, …): a binary of this package
/// (`src/bin/sse-replay-example-client-*.rs`), built by cargo before the tests run.
fn example(name: &str) -> PathBuf {
    PathBuf::from(match name {
        "client_correct" => env!("CARGO_BIN_EXE_sse-replay-example-client-correct"),
        "client_naive" => env!("CARGO_BIN_EXE_sse-replay-example-client-naive"),
        "client_openai_chat" => env!("CARGO_BIN_EXE_sse-replay-example-client-openai-chat"),
        "client_export" => env!("CARGO_BIN_EXE_sse-replay-example-client-export"),
        other => panic!("no example client {other}"),
    })
}

fn run_test(args: &[&str], client: &[&str]) -> Output {
    bin()
        .arg("test")
        .args(args)
        .arg("--")
        .args(client)
        .output()
        .expect("run sse-replay test")
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

fn rec(name: &str) -> String {
    manifest()
        .join("recordings")
        .join(name)
        .display()
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// The suite and the variants (library level)
// ---------------------------------------------------------------------------------------------

#[test]
fn the_builtin_suite_is_every_bundled_recording() {
    let mut on_disk: Vec<String> = std::fs::read_dir(manifest().join("recordings"))
        .expect("recordings/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".ron"))
        .collect();
    on_disk.sort();
    let embedded: Vec<String> = harness::BUILTIN
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    assert_eq!(embedded, on_disk);
    let (suite, bad) = harness::builtin_suite();
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(suite.len(), on_disk.len());
}

#[test]
fn framing_variants_keep_the_calls_and_really_change_the_writes() {
    let (suite, _) = harness::builtin_suite();
    for r in &suite {
        let want = Expected::from_analysis(&r.one_read);
        let body = r.recording.body();
        for v in Variant::FRAMING {
            let Some(wire) = variants::wire(v, &r.recording, &r.base, 42) else {
                continue;
            };
            let analysis = sse_replay_core::analysis::Analysis::from_recording(
                &wire.to_recording(&r.recording),
                sse_replay_core::analysis::SourceInfo::default(),
                sse_replay_core::pipeline::Options {
                    dialect: Some(r.base.dialect),
                    framing: None,
                    detail: true,
                },
            );
            let got = Expected::from_analysis(&analysis);
            assert_eq!(got.calls, want.calls, "{} × {}", r.name, v.name());
            assert!(!wire.abort);
            match v {
                Variant::OneRead => assert_eq!(wire.writes.len(), 1),
                Variant::Bytewise => {
                    assert!(wire.writes.iter().all(|(_, w)| w.len() == 1));
                    assert_eq!(wire.body(), body);
                }
                Variant::Utf8Split => {
                    assert_eq!(wire.body(), body);
                    // Every write but the last ends inside a multi-byte character.
                    for (_, w) in &wire.writes[..wire.writes.len() - 1] {
                        let last = *w.last().expect("non-empty write");
                        assert!(last >= 0xC0, "{} write ends with {last:#x}", r.name);
                    }
                }
                Variant::Random => {
                    assert_eq!(wire.body(), body);
                    assert!(wire.writes.iter().all(|(_, w)| (1..=64).contains(&w.len())));
                    assert_eq!(
                        Some(wire.clone()),
                        variants::wire(v, &r.recording, &r.base, 42)
                    );
                }
                Variant::Crlf => {
                    let b = wire.body();
                    assert!(!b.windows(2).any(|w| w[1] == b'\n' && w[0] != b'\r'));
                    for pair in wire.writes.windows(2) {
                        assert_eq!(pair[0].1.last(), Some(&b'\r'));
                        assert_eq!(pair[1].1.first(), Some(&b'\n'));
                    }
                }
                Variant::Keepalive => {
                    assert!(wire.body().len() > body.len());
                    assert!(
                        wire.writes
                            .iter()
                            .any(|(_, w)| w.starts_with(b": keepalive"))
                    );
                }
                _ => {}
            }
        }
    }
}

#[test]
fn fault_variants_cut_inside_arguments_and_drop_the_terminator() {
    let (suite, _) = harness::builtin_suite();
    let seed = suite
        .iter()
        .find(|r| r.name == "seed-example")
        .expect("seed-example");
    let cut = variants::wire(Variant::Cut, &seed.recording, &seed.base, 0).expect("cut applies");
    assert!(cut.abort);
    assert!(cut.body().len() < seed.recording.body().len());
    let a = sse_replay_core::analysis::Analysis::from_recording(
        &cut.to_recording(&seed.recording),
        sse_replay_core::analysis::SourceInfo::default(),
        sse_replay_core::pipeline::Options::default(),
    );
    let e = Expected::from_analysis(&a);
    assert!(e.failure_allowed());
    assert!(
        e.calls
            .iter()
            .any(|(_, s)| *s == harness::judge::CallStatus::Broken),
        "{e:?}"
    );
    let nt =
        variants::wire(Variant::NoTerminator, &seed.recording, &seed.base, 0).expect("applies");
    let body = String::from_utf8(nt.body()).expect("utf-8");
    assert!(!body.contains("[DONE]") && !body.contains("finish_reason\":\"tool_calls"));
}

/// Reads one HTTP/1.1 response with chunked coding and returns each chunk's bytes: the server's
/// writes, whatever TCP did to them.
fn served_chunks(addr: std::net::SocketAddr) -> Vec<Vec<u8>> {
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    conn.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        .expect("send");
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).expect("read");
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("head") + 4;
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    let mut body = &raw[head_end..];
    let mut chunks = Vec::new();
    loop {
        let eol = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size = usize::from_str_radix(std::str::from_utf8(&body[..eol]).expect("hex"), 16)
            .expect("chunk size");
        if size == 0 {
            return chunks;
        }
        chunks.push(body[eol + 2..eol + 2 + size].to_vec());
        body = &body[eol + 2 + size + 2..];
    }
}

#[test]
fn the_wire_carries_each_write_as_its_own_chunk() {
    let (suite, _) = harness::builtin_suite();
    let seed = suite
        .iter()
        .find(|r| r.name == "seed-example")
        .expect("seed-example");
    for v in [Variant::Bytewise, Variant::Utf8Split, Variant::Crlf] {
        let wire = variants::wire(v, &seed.recording, &seed.base, 1).expect("applies");
        let server = harness::run::serve_wire(&wire, seed.response_head(), None).expect("serve");
        let chunks = served_chunks(server.addr());
        let want: Vec<Vec<u8>> = wire.writes.iter().map(|(_, b)| b.clone()).collect();
        assert_eq!(chunks, want, "{}", v.name());
        match v {
            Variant::Bytewise => assert!(chunks.iter().all(|c| c.len() == 1)),
            Variant::Utf8Split => {
                // The first write ends inside 深 (e6 b7 b1): after its lead byte.
                assert_eq!(chunks[0].last(), Some(&0xe6));
                assert_eq!(chunks[1].first(), Some(&0xb7));
                assert!(std::str::from_utf8(&chunks[0]).is_err());
            }
            Variant::Crlf => {
                assert!(chunks.len() > 10);
                assert!(
                    chunks[..chunks.len() - 1]
                        .iter()
                        .all(|c| c.ends_with(b"\r"))
                );
                assert!(chunks[1..].iter().all(|c| c.starts_with(b"\n")));
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The command, with real clients
// ---------------------------------------------------------------------------------------------

/// A tool the provider ran itself is not a call the client must print: the expected result is
/// what `export` gives (client calls only). The real Nova code-interpreter stream (a server
/// `toolUse`, a `toolResult` block, then the client call `final_result`), imported.
#[test]
fn server_tools_are_not_expected_of_the_client() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ron = dir.path().join("code.ron");
    let o =
        bin()
            .arg("import")
            .arg(manifest().join(
                "tests/data/bedrock/binary/test_bedrock_model_code_execution_tool_stream.yaml",
            ))
            .arg("-o")
            .arg(&ron)
            .output()
            .expect("import");
    assert!(o.status.success(), "{}", stderr(&o));
    let client = example("client_correct");
    let o = run_test(
        &[
            "--json",
            "--recordings",
            ron.to_str().expect("path"),
            "--variants",
            "one-read,bytewise",
        ],
        &[client.to_str().expect("path")],
    );
    let doc = json_of(&o);
    let cases = doc["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2);
    for c in cases {
        assert_eq!(c["verdict"], "pass", "{c:#}");
        let names: Vec<&str> = c["expected"]
            .as_array()
            .expect("expected")
            .iter()
            .filter_map(|x| x["name"].as_str())
            .collect();
        assert_eq!(names, ["final_result"], "{c:#}");
    }
}

#[test]
fn the_correct_client_passes_every_case_in_every_variant() {
    let client = example("client_correct");
    let t = Instant::now();
    let o = run_test(
        &["--json", "--faults", "all", "--random-seed", "7"],
        &[client.to_str().expect("path")],
    );
    let elapsed = t.elapsed();
    let doc = json_of(&o);
    let cases = doc["cases"].as_array().expect("cases");
    let bad: Vec<&Value> = cases.iter().filter(|c| c["verdict"] != "pass").collect();
    assert!(
        bad.is_empty(),
        "failing cases: {bad:#?}\nstderr: {}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Every recording in every framing variant that applies to it, plus the faults.
    let recordings = harness::BUILTIN.len();
    assert!(cases.len() >= recordings * 5, "{} cases", cases.len());
    for (file, _) in harness::BUILTIN {
        let name = file.trim_end_matches(".ron");
        for v in ["recorded", "one-read", "bytewise", "random"] {
            assert!(
                cases
                    .iter()
                    .any(|c| c["recording"] == name && c["variant"] == v),
                "{name} × {v} missing"
            );
        }
    }
    // The shape of --json.
    assert_eq!(doc["schema_version"], 1);
    for key in [
        "recording",
        "variant",
        "random_seed",
        "verdict",
        "expected",
        "got",
        "diagnosis",
        "stderr",
    ] {
        assert!(cases[0].get(key).is_some(), "case key {key} missing");
    }
    let random = cases
        .iter()
        .find(|c| c["variant"] == "random")
        .expect("random case");
    assert_eq!(random["random_seed"], 7);
    assert_eq!(doc["summary"]["cases"], cases.len());
    assert_eq!(doc["summary"]["pass"], cases.len());
    // The matrix went to stderr.
    let err = stderr(&o);
    assert!(err.contains("seed-example") && err.contains('✓'), "{err}");
    eprintln!(
        "built-in suite × every variant: {} cases in {:.1} s, harness {:.2} ms per case",
        cases.len(),
        elapsed.as_secs_f64(),
        doc["summary"]["harness_ms_per_case"]
            .as_f64()
            .unwrap_or(-1.0)
    );
}

/// The plain-Rust OpenAI-chat client (no sse-replay code in it) passes every OpenAI-chat case, faults
/// included: the suite does not ask for anything a correct independent client would not do.
#[test]
fn an_independent_openai_chat_client_passes_every_openai_chat_case() {
    let client = example("client_openai_chat");
    let o = run_test(
        &["--json", "--dialect", "openai-chat", "--faults", "all"],
        &[client.to_str().expect("path")],
    );
    let doc = json_of(&o);
    let cases = doc["cases"].as_array().expect("cases");
    let bad: Vec<&Value> = cases.iter().filter(|c| c["verdict"] != "pass").collect();
    assert!(bad.is_empty(), "failing cases: {bad:#?}");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(cases.len() >= 60, "{} cases", cases.len());
    assert!(
        cases
            .iter()
            .all(|c| !c["recording"].as_str().unwrap_or("").contains("anthropic"))
    );
}

#[test]
fn the_naive_client_fails_with_the_concat_fields_diagnosis_and_junit_counts_it() {
    let client = example("client_naive");
    let dir = tempfile::tempdir().expect("tempdir");
    let junit = dir.path().join("report.xml");
    let o = run_test(
        &[
            "--json",
            "--variants",
            "one-read,bytewise",
            "--junit",
            junit.to_str().expect("path"),
            "--recordings",
            &rec("seed-example.ron"),
            &rec("quirk-repeated-name.ron"),
        ],
        &[client.to_str().expect("path")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json_of(&o);
    let cases = doc["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 4);
    for c in cases {
        let name = c["recording"].as_str().expect("recording");
        if name.ends_with("seed-example.ron") {
            assert_eq!(c["verdict"], "pass", "{c:#}");
        } else {
            assert_eq!(c["verdict"], "fail", "{c:#}");
            let d = c["diagnosis"].as_str().expect("a diagnosis");
            assert!(d.starts_with("behaves like `concat-fields`"), "{d}");
            assert!(d.contains("get_weatherget_weather"), "{d}");
            assert!(
                c["detail"]
                    .as_str()
                    .expect("detail")
                    .contains("get_weatherget_weather")
            );
        }
    }
    // JUnit: valid XML, one testcase per case, the right counts.
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut testcases, mut failures, mut errors) = (0, 0, 0);
    let mut suite_attrs = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                match e.name().as_ref() {
                    b"testcase" => testcases += 1,
                    b"failure" => failures += 1,
                    b"error" => errors += 1,
                    b"testsuite" => {
                        for a in e.attributes() {
                            let a = a.expect("attribute");
                            suite_attrs.push((
                                String::from_utf8_lossy(a.key.as_ref()).into_owned(),
                                String::from_utf8_lossy(&a.value).into_owned(),
                            ));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert_eq!((testcases, failures, errors), (4, 2, 0));
    let attr = |k: &str| {
        suite_attrs
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(attr("tests").as_deref(), Some("4"));
    assert_eq!(attr("failures").as_deref(), Some("2"));
    assert_eq!(attr("errors").as_deref(), Some("0"));
}

fn alive(pid: u32) -> bool {
    // A zombie is dead for our purposes (killed, waiting to be reaped by its parent).
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn a_client_that_hangs_is_killed_with_everything_it_started() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pids = dir.path().join("pids");
    let script = format!(
        "echo $$ > {0}; sleep 1000 & echo $! >> {0}; wait",
        pids.display()
    );
    let t = Instant::now();
    let o = run_test(
        &[
            "--json",
            "--dialect",
            "openai-chat",
            "--timeout",
            "1",
            "--variants",
            "one-read",
            "--recordings",
            &rec("seed-example.ron"),
        ],
        &["sh", "-c", &script],
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json_of(&o);
    let case = &doc["cases"][0];
    assert_eq!(case["verdict"], "error");
    assert!(
        case["detail"]
            .as_str()
            .expect("detail")
            .contains("timed out"),
        "{case:#}"
    );
    let pids: Vec<u32> = std::fs::read_to_string(&pids)
        .expect("the client wrote its pids")
        .split_whitespace()
        .map(|p| p.parse().expect("pid"))
        .collect();
    assert_eq!(pids.len(), 2);
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for p in pids {
        assert!(!alive(p), "process {p} still running");
    }
}

#[test]
fn a_client_printing_garbage_is_an_error_with_its_stderr() {
    let o = run_test(
        &[
            "--json",
            "--variants",
            "one-read",
            "--recordings",
            &rec("seed-example.ron"),
        ],
        &["sh", "-c", "echo 'hello, world'; echo 'it broke' >&2"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json_of(&o);
    let case = &doc["cases"][0];
    assert_eq!(case["verdict"], "error");
    assert!(
        case["detail"]
            .as_str()
            .expect("detail")
            .contains("no parseable JSON"),
        "{case:#}"
    );
    assert!(
        case["stderr"]
            .as_str()
            .expect("stderr")
            .contains("it broke")
    );
    assert_eq!(doc["summary"]["error"], 1);
}

#[test]
fn an_unreadable_recording_is_named_and_the_rest_still_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("broken.ron");
    std::fs::write(&bad, "(version: 1, meta: (title: ").expect("write");
    let missing = dir.path().join("missing.ron");
    let client = example("client_correct");
    let o = run_test(
        &[
            "--json",
            "--variants",
            "one-read",
            "--recordings",
            &rec("seed-example.ron"),
            bad.to_str().expect("path"),
            missing.to_str().expect("path"),
        ],
        &[client.to_str().expect("path")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
    let doc = json_of(&o);
    assert_eq!(doc["cases"].as_array().expect("cases").len(), 1);
    assert_eq!(doc["cases"][0]["verdict"], "pass");
    assert_eq!(
        doc["summary"]["unreadable"].as_array().expect("list").len(),
        2
    );
}

#[test]
fn a_missing_command_is_one_line_and_exit_2() {
    let o = run_test(&[], &["/nonexistent/sse-replay-client"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("command not found: /nonexistent/sse-replay-client"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

// ---------------------------------------------------------------------------------------------
// A verdict and a diagnosis you can trust
// ---------------------------------------------------------------------------------------------

/// Our own OpenAI Chat client on the whole suite, without `--dialect`: every OpenAI Chat case
/// passes, every other dialect is reported once as not spoken (not as dozens of failures), and no
/// strategy is named on an empty output.
#[test]
fn an_openai_client_without_dialect_is_judged_on_openai_and_skips_the_rest() {
    let client = example("client_openai_chat");
    let o = run_test(
        &["--json", "--faults", "all", "--random-seed", "3"],
        &[client.to_str().expect("path")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = json_of(&o);
    let cases = doc["cases"].as_array().expect("cases");
    let openai_chat: Vec<String> = harness::builtin_suite()
        .0
        .iter()
        .filter(|r| r.base.dialect == sse_replay_core::dialect::DialectKind::OpenAiChat)
        .map(|r| r.name.clone())
        .collect();
    assert!(cases.len() > 100, "{} cases", cases.len());
    for c in cases {
        let name = c["recording"].as_str().expect("name");
        assert!(
            openai_chat.iter().any(|n| n == name),
            "{name} is not OpenAI Chat"
        );
        assert_eq!(c["verdict"], "pass", "{c:#}");
    }
    let not_spoken: Vec<&str> = doc["summary"]["not_spoken"]
        .as_array()
        .expect("not_spoken")
        .iter()
        .map(|n| n["dialect"].as_str().expect("dialect"))
        .collect();
    let mut sorted = not_spoken.clone();
    sorted.sort_unstable();
    // Every other dialect the suite holds, each once.
    let mut others: Vec<&str> = sse_replay_core::dialect::DialectKind::ALL
        .iter()
        .map(|d| d.name())
        .filter(|n| *n != "openai-chat")
        .collect();
    others.sort_unstable();
    assert_eq!(sorted, others);
    let err = stderr(&o);
    for d in not_spoken {
        let line = format!("{d}: not spoken (");
        assert_eq!(err.matches(&line).count(), 1, "{d} once: {err}");
        assert!(
            err.contains(&format!("pass --dialect {d} to include it")),
            "{err}"
        );
    }
    assert!(!err.contains("behaves like"), "{err}");
}

/// Runs `client` on the OpenAI Chat cases (faults included) and returns the cases.
fn forced_openai_chat(client: &[&str]) -> (Output, Vec<Value>) {
    let o = run_test(
        &[
            "--json",
            "--dialect",
            "openai-chat",
            "--faults",
            "all",
            "--random-seed",
            "3",
        ],
        client,
    );
    let cases = json_of(&o)["cases"].as_array().expect("cases").clone();
    (o, cases)
}

/// A client that prints `[]` used to pass every fault case and every broken recording (46 of the
/// default cases): printing nothing is right there, and says nothing. Now a pass there counts only
/// when the client passes the same recording's clean form: it passes nothing.
#[test]
fn a_client_that_prints_nothing_passes_no_case() {
    // It reads the stream (so it is judged on what it prints, not on never asking).
    let fetch = example("client_export");
    let (o, cases) = forced_openai_chat(&[
        "sh",
        "-c",
        "\"$0\" --fetch-only; echo '[]'",
        fetch.to_str().expect("path"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        cases.iter().all(|c| c["verdict"] != "pass"),
        "a case passed"
    );
    let not_judged: Vec<&Value> = cases
        .iter()
        .filter(|c| c["verdict"] == "not-judged")
        .collect();
    assert!(not_judged.len() > 20, "{}", not_judged.len());
    for c in &not_judged {
        assert!(
            c["detail"]
                .as_str()
                .expect("detail")
                .contains("the client does not pass its clean form"),
            "{c:#}"
        );
    }
    assert_eq!(json_of(&o)["summary"]["not_judged"], not_judged.len());
    // Empty output is said as such, with the dialect, never as a naive strategy.
    for c in cases.iter().filter(|c| c["verdict"] == "fail") {
        assert_eq!(
            c["diagnosis"].as_str().expect("diagnosis"),
            format!(
                "printed no calls on this openai-chat stream ({} expected)",
                match c["expected"].as_array().expect("expected").len() {
                    1 => "1 call".to_owned(),
                    n => format!("{n} calls"),
                }
            )
        );
    }
    assert!(stderr(&o).contains("not judged"), "{}", stderr(&o));
}

/// The same for a client that always crashes: exiting non-zero is right on a broken stream, and
/// says nothing unless the client passes the clean form.
#[test]
fn a_client_that_always_exits_1_passes_no_case() {
    let fetch = example("client_export");
    let (o, cases) = forced_openai_chat(&[
        "sh",
        "-c",
        "\"$0\" --fetch-only; exit 1",
        fetch.to_str().expect("path"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        cases.iter().all(|c| c["verdict"] != "pass"),
        "a case passed"
    );
    assert!(cases.iter().any(|c| c["verdict"] == "not-judged"));
    assert!(cases.iter().any(|c| c["verdict"] == "error"));
}

/// A command the shell cannot run (exit 127, or 126 for a file that is not executable) is not a
/// client's verdict: the run stops at once with one line and exit 2.
#[test]
fn a_command_the_shell_cannot_start_stops_the_run_with_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_executable = dir.path().join("client.sh");
    std::fs::write(&not_executable, "#!/bin/sh\necho '[]'\n").expect("write");
    for (script, code) in [
        ("sse-replay-no-such-command --flag".to_owned(), "127"),
        (not_executable.display().to_string(), "126"),
    ] {
        let t = Instant::now();
        let o = run_test(&["--json", "--faults", "all"], &["sh", "-c", &script]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            o.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("could not start the client"), "{err}");
        assert!(err.contains(&format!("exit {code}")), "{err}");
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    }
}

/// The provider's own tools are not the client's calls, in `test` as in `export`: the expected
/// calls of a recording with a web search beside a client call are the client call alone.
#[test]
fn server_tools_are_not_expected_from_the_client() {
    let (suite, _) = harness::builtin_suite();
    for name in ["anthropic-server-tool", "openai-responses-server-tool"] {
        let r = suite.iter().find(|r| r.name == name).expect(name);
        assert_eq!(r.base.server_tools().count(), 1, "{name}");
        let e = Expected::from_analysis(&r.one_read);
        let names: Vec<&str> = e.calls.iter().map(|(c, _)| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather"], "{name}");
        // export writes the same calls.
        let export = bin()
            .args(["export", &rec(&format!("{name}.ron"))])
            .output()
            .expect("export");
        let exported: Value = serde_json::from_slice(&export.stdout).expect("JSON");
        assert_eq!(exported.as_array().map(Vec::len), Some(1), "{name}");
        assert_eq!(exported[0]["name"], "get_weather");
    }
    // A client that prints what `export` reads from the served bytes (this run's values).
    let client = example("client_export");
    let o = run_test(
        &[
            "--json",
            "--dialect",
            "anthropic-messages",
            "--variants",
            "one-read",
            "--recordings",
            &rec("anthropic-server-tool.ron"),
        ],
        &[client.to_str().expect("path"), common::BIN],
    );
    let case = &json_of(&o)["cases"][0];
    assert_eq!(case["verdict"], "pass", "{}", stderr(&o));
    assert_eq!(case["got"].as_array().map(Vec::len), Some(1), "{case:#}");
    assert_eq!(case["got"][0]["name"], "get_weather");
}

/// A client that reads on past `event: error` is told so, not that it repaired arguments.
#[test]
fn a_client_that_ignores_the_error_event_is_told_so() {
    // The naive client looks at `data:` lines only: it reads on past `event: error`.
    let naive = example("client_naive");
    let o = run_test(
        &[
            "--json",
            "--dialect",
            "openai-chat",
            "--variants",
            "one-read",
            "--recordings",
            &rec("quirk-provider-error.ron"),
            &rec("openai-chat-weather.ron"),
        ],
        &[naive.to_str().expect("path")],
    );
    let doc = json_of(&o);
    let case = doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| {
            c["recording"]
                .as_str()
                .is_some_and(|r| r.ends_with("quirk-provider-error.ron"))
        })
        .expect("the error case")
        .clone();
    assert_eq!(case["verdict"], "fail", "{case:#}");
    let detail = case["detail"].as_str().expect("detail");
    assert!(
        detail.starts_with("ignored the provider's error event (overloaded_error: Overloaded)"),
        "{detail}"
    );
    assert!(!detail.contains("repaired"), "{detail}");
}

/// An Anthropic stream cut (or failing) inside a tool_use's input: a client that prints `{}` for
/// the call whose input does not parse — what the Anthropic SDKs' message snapshot holds — fails
/// and is told so; one that leaves the call out, or exits 1, passes. Both Anthropic over SSE and
/// inside InvokeModel's chunk frames.
#[test]
fn a_client_that_prints_empty_arguments_for_a_cut_call_is_told_so() {
    use harness::judge::{Args, CallStatus, Exit};
    let (suite, _) = harness::builtin_suite();
    let served = harness::Served {
        requests: 1,
        bytes: 1,
        whole: 1,
        left: 0,
        other_api: None,
    };
    for name in [
        "quirk-anthropic-truncated",
        "quirk-anthropic-error",
        "quirk-bedrock-invoke-model-truncated",
        "quirk-bedrock-invoke-model-exception",
    ] {
        let r = suite
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{name} is in the suite"));
        let ctx = harness::CaseContext::new(r, Variant::OneRead, 3);
        assert!(
            ctx.expected
                .calls
                .iter()
                .any(|(_, s)| *s == CallStatus::Broken),
            "{name}: a call is cut"
        );
        let sdk_like: Vec<harness::CaseCall> = ctx
            .expected
            .calls
            .iter()
            .map(|(c, s)| harness::CaseCall {
                arguments: if *s == CallStatus::Broken {
                    Args::Value(serde_json::json!({}))
                } else {
                    c.arguments.clone()
                },
                ..c.clone()
            })
            .collect();
        let judged = ctx.judge_parsed(&Exit::Code(0), Ok(sdk_like), "", &served);
        assert_eq!(judged.outcome.name(), "fail", "{name}: {judged:?}");
        assert!(
            judged.outcome.detail().contains(": printed {} for call "),
            "{name}: {}",
            judged.outcome.detail()
        );
        let diagnosis = judged.diagnosis.unwrap_or_default();
        assert!(
            diagnosis.starts_with("printed {} for a call whose arguments were cut"),
            "{name}: {diagnosis}"
        );
        // Leaving the cut call out, or failing, is right.
        let whole: Vec<harness::CaseCall> = ctx
            .expected
            .calls
            .iter()
            .filter(|(_, s)| *s == CallStatus::Ok)
            .map(|(c, _)| c.clone())
            .collect();
        let judged = ctx.judge_parsed(&Exit::Code(0), Ok(whole), "", &served);
        assert_eq!(judged.outcome, harness::CaseOutcome::Pass, "{name}");
        let judged = ctx.judge_parsed(&Exit::Code(1), Ok(Vec::new()), "overloaded", &served);
        assert_eq!(judged.outcome, harness::CaseOutcome::Pass, "{name}");
    }
}

/// A client that sends its request and never reads: the server still hands a small body over
/// whole (it fits in the buffers), so the case never says the stream was read; it says reading
/// was not observable.
#[test]
fn a_client_that_never_reads_a_small_body_is_not_said_to_have_read_it() {
    let client = concat!(
        "u=${OPENAI_BASE_URL#http://}; hp=${u%%/*}; ",
        "exec 3<>\"/dev/tcp/${hp%:*}/${hp##*:}\"; ",
        "printf 'POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 2\\r\\n\\r\\n{}' >&3; ",
        "sleep 1; echo '[]'"
    );
    let o = run_test(
        &[
            "--json",
            "--dialect",
            "openai-chat",
            "--variants",
            "one-read,bytewise",
            "--recordings",
            &rec("openai-chat-weather.ron"),
        ],
        &["bash", "-c", client],
    );
    let doc = json_of(&o);
    let cases = doc["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2, "{doc:#}");
    let mut whole = 0;
    for c in cases {
        let served = &c["served"];
        assert_eq!(served["requests"], 1, "{c:#}");
        assert_eq!(served["reading_observable"], false, "{c:#}");
        let text = served["text"].as_str().expect("text");
        assert!(!text.starts_with("read to the end"), "{text}");
        if served["to_the_end"] == true {
            whole += 1;
            assert!(
                text.starts_with("sent whole (") && text.contains("not observable"),
                "{text}"
            );
        }
        assert_ne!(c["verdict"], "pass", "{c:#}");
    }
    // Loopback's buffers take a few kilobytes at once: at least one case was handed over whole.
    assert!(whole > 0, "{doc:#}");
}

/// `serve --suite` lists the cases `test` runs and judges a posted output exactly as `test` judges
/// a client that printed it.
#[test]
fn serve_suite_lists_the_cases_and_judges_like_test() {
    use std::io::BufRead as _;
    let mut server = common::Kid(
        bin()
            .args([
                "serve",
                "--suite",
                "--dialect",
                "openai-chat",
                "--faults",
                "all",
                "--random-seed",
                "5",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("serve --suite"),
    );
    let mut first = String::new();
    std::io::BufReader::new(server.0.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("first line");
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .expect("listening on …")
        .trim_end_matches('/')
        .to_owned();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    sse_replay_net::install_crypto_provider();
    let http = reqwest::Client::new();
    let get = |u: String| {
        rt.block_on(async {
            http.get(u)
                .send()
                .await
                .expect("GET")
                .text()
                .await
                .expect("body")
        })
    };
    let listing: Value = serde_json::from_str(&get(format!("{url}/cases"))).expect("JSON");
    let listed = listing["cases"].as_array().expect("cases");
    // The same cases as `test --dialect openai-chat --faults all` plans.
    let (suite, _) = harness::builtin_suite();
    let config = harness::Config {
        command: harness::ClientCommand {
            program: "x".into(),
            args: Vec::new(),
        },
        variants: Variant::FRAMING
            .into_iter()
            .chain(Variant::FAULTS)
            .collect(),
        dialects: vec![sse_replay_core::dialect::DialectKind::OpenAiChat],
        jobs: 1,
        timeout: Duration::from_secs(1),
        speed: 1.0,
        random_seed: 5,
    };
    assert_eq!(listed.len(), harness::plan_cases(&suite, &config).len());
    let first_case = &listed[0];
    for key in [
        "id",
        "base_url",
        "dialect",
        "tools",
        "expected",
        "kind",
        "verdict_url",
    ] {
        assert!(first_case.get(key).is_some(), "{key}: {first_case:#}");
    }
    assert_eq!(first_case["kind"], "clean", "clean cases first");
    assert!(
        listed
            .iter()
            .flat_map(|c| c["expected"].as_array().expect("expected"))
            .any(|e| e["status"] == "broken")
    );
    // The listing names the calls, never this run's values: they must be read from the stream.
    assert!(
        listed
            .iter()
            .flat_map(|c| c["expected"].as_array().expect("expected"))
            .all(|e| e.get("arguments").is_none()
                && e.get("id").is_none()
                && e["name"].is_string()),
        "{listing:#}"
    );
    // A verdict on a case whose stream was never requested is not a pass.
    let unread = listed
        .iter()
        .find(|c| c["id"] == "openai-chat-weather/one-read")
        .expect("case");
    let verdict: Value = serde_json::from_str(&rt.block_on(async {
        http.post(unread["verdict_url"].as_str().expect("url"))
            .body("[]")
            .send()
            .await
            .expect("POST")
            .text()
            .await
            .expect("body")
    }))
    .expect("JSON");
    assert_eq!(verdict["verdict"], "fail", "{verdict:#}");
    assert!(
        verdict["detail"]
            .as_str()
            .expect("detail")
            .starts_with("did not request the stream"),
        "{verdict:#}"
    );
    // A case's bytes under its base URL, with the SDK's own path below it.
    let case = listed
        .iter()
        .find(|c| c["id"] == "quirk-repeated-name/bytewise")
        .expect("case");
    let body = get(format!(
        "{}/v1/chat/completions",
        case["base_url"].as_str().expect("url")
    ));
    assert!(
        body.contains("get_weather") && body.ends_with("data: [DONE]\n\n"),
        "{body}"
    );
    // The verdict on an output equals `test`'s on a client that prints it.
    let printed = r#"[{"name":"get_weather","arguments":{"city":"深圳","days":3.0}},{"name":"get_tim","arguments":"{}","id":""}]"#;
    let posted: Value = serde_json::from_str(&rt.block_on(async {
        http.post(case["verdict_url"].as_str().expect("url"))
            .body(printed)
            .send()
            .await
            .expect("POST")
            .text()
            .await
            .expect("body")
    }))
    .expect("JSON");
    let o = run_test(
        &[
            "--json",
            "--dialect",
            "openai-chat",
            "--variants",
            "bytewise",
            "--random-seed",
            "5",
            "--recordings",
            &rec("quirk-repeated-name.ron"),
        ],
        &[
            "sh",
            "-c",
            &format!("\"$0\" --fetch-only; echo '{printed}'"),
            example("client_export").to_str().expect("path"),
        ],
    );
    let tested = &json_of(&o)["cases"][0];
    for key in ["verdict", "detail", "diagnosis", "expected", "got"] {
        assert_eq!(posted[key], tested[key], "{key}");
    }
    assert_eq!(posted["verdict"], "fail");
}

/// Live `sleep` processes whose duration starts with `mark` (what `ps` would list).
fn processes_with(mark: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<String> = cmdline
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let is_sleep = args
            .first()
            .is_some_and(|a| a == "sleep" || a.ends_with("/sleep"));
        if is_sleep && args.get(1).is_some_and(|d| d.starts_with(mark)) && alive(pid) {
            found.push((pid, args.join(" ")));
        }
    }
    found
}

/// `sse-replay test` stopped by a signal while its clients run: every process a case started is
/// killed — the client, its background child, and a `setsid` grandchild in a session of its own.
#[test]
fn stopping_the_test_command_kills_every_process_its_cases_started() {
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let pids = dir.path().join("pids");
        // Durations no other process on the machine has: the marker `ps` is searched for.
        let mark = format!("9{}7", std::process::id());
        let script = format!(
            "echo $$ >> {p}; setsid sh -c 'echo $$ >> {p}; exec sleep {mark}1' & sleep {mark}2 & echo $! >> {p}; wait",
            p = pids.display()
        );
        let mut kid = common::Kid(
            bin()
                .args([
                    "test",
                    "--timeout",
                    "600",
                    "--variants",
                    "one-read",
                    "--recordings",
                    &rec("seed-example.ron"),
                    "--",
                    "sh",
                    "-c",
                    &script,
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn"),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        let started = loop {
            let pids: Vec<u32> = std::fs::read_to_string(&pids)
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if pids.len() >= 3 {
                break pids;
            }
            assert!(Instant::now() < deadline, "the client never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        // The pids are written before each `sleep` is exec'd: wait until both are sleeping.
        while processes_with(&mark).len() < 2 {
            assert!(
                Instant::now() < deadline,
                "the sleeps never started: {:?}",
                processes_with(&mark)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            processes_with(&mark).len(),
            2,
            "{:?}",
            processes_with(&mark)
        );
        kid.signal(signal);
        assert_eq!(
            kid.wait_exit(Duration::from_secs(20)),
            Some(code),
            "{signal}"
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while started.iter().any(|p| alive(*p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for p in &started {
            assert!(!alive(*p), "{signal}: process {p} still running");
        }
        assert_eq!(
            processes_with(&mark),
            Vec::new(),
            "{signal}: ps still lists them"
        );
    }
}

/// A client that prints its calls and exits, leaving a `setsid` grandchild that holds its
/// standard output open: judged on what it printed (PASS), at once, and the grandchild killed.
#[test]
fn a_client_whose_grandchild_keeps_stdout_open_is_judged_on_what_it_printed() {
    let client = example("client_correct");
    let mark = format!("9{}3", std::process::id());
    let script = format!("\"$0\"; setsid sleep {mark} & exit 0");
    let t = Instant::now();
    let o = bin()
        .args([
            "test",
            "--json",
            "--variants",
            "one-read",
            "--recordings",
            &rec("seed-example.ron"),
            "--",
            "sh",
            "-c",
            &script,
            client.to_str().expect("path"),
        ])
        .output()
        .expect("run");
    let took = t.elapsed();
    let doc = json_of(&o);
    assert_eq!(doc["cases"][0]["verdict"], "pass", "{:#}", doc["cases"][0]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(took < Duration::from_secs(8), "{took:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with(&mark).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        processes_with(&mark),
        Vec::new(),
        "ps still lists the grandchild"
    );
}

/// The caller's real credentials never reach a client under test: every cloud and model
/// provider's key, token, profile and credentials file in the caller's environment is removed
/// (by name, and any value shaped like a key whatever its name), and each provider the harness
/// points at itself gets its fake key instead.
#[test]
fn the_callers_credentials_never_reach_the_client() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("env");
    let client = example("client_correct");
    let script = format!("env > {}; exec \"$0\"", dump.display());
    // Real-looking values, each unique so a grep names the leak.
    let real: &[(&str, &str)] = &[
        ("AWS_ACCESS_KEY_ID", "AKIAREALCALLER0KEY01"),
        ("AWS_SECRET_ACCESS_KEY", "real-caller-secret-access-key-02"),
        ("AWS_SESSION_TOKEN", "real-caller-session-token-03"),
        ("AWS_SECURITY_TOKEN", "real-caller-security-token-04"),
        ("AWS_PROFILE", "real-caller-profile-05"),
        ("AWS_DEFAULT_PROFILE", "real-caller-profile-06"),
        ("AWS_BEARER_TOKEN_BEDROCK", "real-caller-bedrock-bearer-07"),
        (
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "/real-caller/web-identity-08",
        ),
        (
            "AWS_ROLE_ARN",
            "arn:aws:iam::123456789012:role/real-caller-09",
        ),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/real-caller/adc-10.json"),
        ("GOOGLE_API_KEY", "real-caller-google-key-11"),
        ("GEMINI_API_KEY", "real-caller-gemini-key-12"),
        ("OPENAI_API_KEY", "sk-real-caller-openai-13"),
        ("ANTHROPIC_API_KEY", "sk-ant-real-caller-14"),
        ("ANTHROPIC_AUTH_TOKEN", "real-caller-anthropic-token-15"),
        ("CO_API_KEY", "real-caller-cohere-16"),
        ("AZURE_OPENAI_API_KEY", "real-caller-azure-17"),
        ("AZURE_CLIENT_SECRET", "real-caller-azure-secret-18"),
        ("MISTRAL_API_KEY", "real-caller-mistral-19"),
        ("HF_TOKEN", "real-caller-hf-20"),
        ("GITHUB_TOKEN", "real-caller-github-21"),
        ("MY_GATEWAY_SETTING", "sk-proj-RealCallerKey22abcdef0123"),
        // Azure managed identity (App Service, Functions, Arc): the endpoint hands a real token
        // to whoever sends the header's value.
        (
            "IDENTITY_ENDPOINT",
            "http://localhost:42356/real-caller-msi-23",
        ),
        ("IDENTITY_HEADER", "real-caller-identity-header-24"),
        ("MSI_ENDPOINT", "http://localhost:42356/real-caller-msi-25"),
        (
            "IMDS_ENDPOINT",
            "http://localhost:40342/real-caller-imds-26",
        ),
        ("X_UPSTREAM_AUTHORISATION", "Bearer RealCallerBearer27abc"),
        // Where application-default credentials and signed-in accounts live.
        ("CLOUDSDK_CONFIG", "/real-caller/gcloud-28"),
        ("AZURE_CONFIG_DIR", "/real-caller/azure-29"),
    ];
    let mut cmd = bin();
    cmd.args([
        "test",
        "--json",
        "--variants",
        "one-read",
        "--recordings",
        &rec("seed-example.ron"),
        "--",
        "sh",
        "-c",
        &script,
        client.to_str().expect("path"),
    ]);
    for (k, v) in real {
        cmd.env(k, v);
    }
    cmd.env("SSE_REPLAY_TEST_KEEPS_THIS", "ordinary-value");
    let o = cmd.output().expect("run");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_of(&o)["cases"][0]["verdict"], "pass");
    let env = std::fs::read_to_string(&dump).expect("the client dumped its environment");
    let leaked: Vec<&str> = real
        .iter()
        .filter(|(_, v)| env.contains(v))
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(leaked, Vec::<&str>::new(), "{env}");
    // Each provider the harness points at itself has its fake key; other settings stay.
    for var in [
        "OPENAI_API_KEY=",
        "ANTHROPIC_API_KEY=",
        "AWS_ACCESS_KEY_ID=",
        "AWS_SECRET_ACCESS_KEY=",
        "GEMINI_API_KEY=",
        "CO_API_KEY=",
    ] {
        assert!(
            env.lines().any(|l| l.starts_with(var)),
            "{var} missing: {env}"
        );
    }
    // Google's and Azure's ambient credentials point at nothing.
    for set in [
        "CLOUDSDK_CONFIG=/dev/null",
        "GCE_METADATA_HOST=127.0.0.1:1",
        "GCE_METADATA_IP=127.0.0.1:1",
        "METADATA_SERVER_DETECTION=none",
        "AZURE_CONFIG_DIR=/dev/null",
    ] {
        assert!(env.lines().any(|l| l == set), "{set} missing: {env}");
    }
    assert!(
        env.contains("SSE_REPLAY_TEST_KEEPS_THIS=ordinary-value"),
        "{env}"
    );
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
}

/// Grandchildren that double-fork and clear their environment (`env -i`, so no marker), in the
/// client's process group or in a session of their own (`setsid`), holding the client's
/// standard output or only its standard input (saved on descriptor 3 first: `sh` gives a
/// background job `/dev/null`), outlive the client that started them: each is killed when its
/// case ends, and the case is judged on what the client printed.
#[test]
fn double_forked_grandchildren_without_the_environment_are_killed_with_their_case() {
    let client = example("client_correct");
    let mark = format!("9{}5", std::process::id());
    let script = format!(
        "(env -i sh -c 'sleep {mark}1' &); \
         (setsid env -i sh -c 'sleep {mark}2' &); \
         exec 3<&0; (setsid env -i sh -c 'sleep {mark}3' <&3 3<&- >/dev/null 2>&1 &); \
         exec \"$0\""
    );
    let o = bin()
        .args([
            "test",
            "--json",
            "--variants",
            "one-read",
            "--recordings",
            &rec("seed-example.ron"),
            "--",
            "sh",
            "-c",
            &script,
            client.to_str().expect("path"),
        ])
        .output()
        .expect("run");
    let doc = json_of(&o);
    assert_eq!(doc["cases"][0]["verdict"], "pass", "{:#}", doc["cases"][0]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with(&mark).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = processes_with(&mark);
    // Clean up before failing, so a failed run leaves nothing behind.
    for (pid, _) in &left {
        std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .ok();
    }
    assert_eq!(left, Vec::new(), "ps still lists them");
}

/// A grandchild that double-forks, leaves the session (`setsid`), clears its environment
/// (`env -i`) and closes or redirects all three inherited descriptors carries none of its case's
/// marks: `sse-replay test` starts nothing but clients, so it is killed as an orphan of the run
/// (checked by its pid), and the case is judged on what the client printed.
#[test]
fn an_unmarked_double_forked_grandchild_is_killed_with_its_case() {
    let client = example("client_correct");
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pid");
    let mark = format!("9{}3", std::process::id());
    // The client goes on only once the grandchild has said its pid (it then execs `sleep`).
    let script = format!(
        "(setsid env -i sh -c 'echo $$ > {p}.tmp && mv {p}.tmp {p} && exec sleep {mark}' \
         <&- >/dev/null 2>&1 &); \
         while [ ! -s {p} ]; do :; done; exec \"$0\"",
        p = pid_file.display()
    );
    let o = bin()
        .args([
            "test",
            "--json",
            "--variants",
            "one-read",
            "--recordings",
            &rec("seed-example.ron"),
            "--",
            "sh",
            "-c",
            &script,
            client.to_str().expect("path"),
        ])
        .output()
        .expect("run");
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("the grandchild wrote its pid")
        .trim()
        .parse()
        .expect("a pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = alive(pid);
    if left {
        std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .ok();
    }
    assert!(!left, "the grandchild {pid} outlived its case");
    let doc = json_of(&o);
    assert_eq!(doc["cases"][0]["verdict"], "pass", "{:#}", doc["cases"][0]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------------
// Proof of reading: a pass needs this run's values, read from the stream
// ---------------------------------------------------------------------------------------------

/// The flags of the proof-of-reading runs: the whole built-in suite and the Responses client
/// items (custom tools, apply_patch, local shell), four framing variants and both faults.
fn proof_args<'a>(seed: &'a str, items: &'a str) -> Vec<&'a str> {
    vec![
        "--json",
        "--faults",
        "all",
        "--variants",
        "one-read,bytewise,utf8-split,keepalive",
        "--random-seed",
        seed,
        "--recordings",
        "recordings",
        items,
    ]
}

fn verdicts(cases: &[Value]) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for c in cases {
        *m.entry(c["verdict"].as_str().unwrap_or("?").to_owned())
            .or_insert(0) += 1;
    }
    m
}

/// A client that reads the stream and prints what `sse-replay export` makes of it passes every
/// case, faults, broken recordings and custom tools included; run with another seed, its answers
/// of the first run — printed without connecting (looked up by recording and variant), or after
/// reading the new stream — pass none.
#[test]
fn the_export_echo_client_passes_every_case_and_its_old_answers_pass_none() {
    let items = manifest().join("tests/data/responses-items");
    let items = items.to_str().expect("path");
    let export = example("client_export");
    let run = |seed: &str, client: &[&str]| {
        let o = bin()
            .current_dir(manifest())
            .arg("test")
            .args(proof_args(seed, items))
            .arg("--")
            .args(client)
            .output()
            .expect("run sse-replay test");
        let cases = json_of(&o)["cases"].as_array().expect("cases").clone();
        (o, cases)
    };
    let (o, first) = run("11", &[export.to_str().expect("path"), common::BIN]);
    let bad: Vec<&Value> = first.iter().filter(|c| c["verdict"] != "pass").collect();
    assert!(bad.is_empty(), "{bad:#?}\n{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first.len() > 250, "{} cases", first.len());
    // Custom tools were judged as text, the apply_patch and shell items as their objects; the
    // Anthropic cut and error, InvokeModel's chunk frames and Vertex's partialArgs passed too.
    for kind in [
        "custom-tool",
        "apply-patch",
        "local-shell",
        "quirk-anthropic-truncated",
        "quirk-anthropic-error",
        "bedrock-invoke-model-weather",
        "quirk-bedrock-invoke-model-truncated",
        "quirk-bedrock-invoke-model-exception",
        "gemini-vertex-partial-args",
    ] {
        assert!(
            first.iter().any(
                |c| c["recording"].as_str().is_some_and(|r| r.contains(kind))
                    && c["verdict"] == "pass"
            ),
            "{kind}"
        );
    }
    // Every case read to the end (the faults' cut included: what was planned was served).
    for c in &first {
        assert_eq!(c["served"]["requests"], 1, "{c:#}");
        assert_eq!(c["served"]["to_the_end"], true, "{c:#}");
    }
    // Run 1's answers, keyed by recording and variant.
    let dir = tempfile::tempdir().expect("tempdir");
    for c in &first {
        let file = format!(
            "{}.{}.json",
            c["recording"].as_str().expect("name").replace('/', "_"),
            c["variant"].as_str().expect("variant")
        );
        std::fs::write(dir.path().join(file), c["got"].to_string()).expect("write");
    }
    let lookup = format!(
        "cat \"{}/$(printf %s \"$SSE_REPLAY_RECORDING\" | tr / _).$SSE_REPLAY_VARIANT.json\"",
        dir.path().display()
    );
    // Never connects.
    let (_, cases) = run("12", &["sh", "-c", &lookup]);
    assert_eq!(cases.len(), first.len());
    assert_eq!(verdicts(&cases).get("pass"), None, "{:?}", verdicts(&cases));
    for c in &cases {
        assert_eq!(c["served"]["requests"], 0, "{c:#}");
        assert!(
            c["detail"]
                .as_str()
                .expect("detail")
                .contains("did not request the stream"),
            "{c:#}"
        );
    }
    // Reads the new stream, prints the old answer.
    let (_, cases) = run(
        "12",
        &[
            "sh",
            "-c",
            &format!("\"$0\" --fetch-only; {lookup}"),
            export.to_str().expect("path"),
        ],
    );
    assert_eq!(verdicts(&cases).get("pass"), None, "{:?}", verdicts(&cases));
    assert!(cases.iter().all(|c| c["served"]["requests"] == 1));
}

/// The degenerate clients: none passes a case, on the whole suite with faults.
#[test]
fn degenerate_clients_pass_no_case() {
    let fetch = example("client_export");
    let fetch = fetch.to_str().expect("path");
    let fixed =
        r#"echo '[{"name":"get_weather","arguments":{"city":"深圳","days":3},"id":"call_1"}]'"#;
    let table: Vec<(&str, Vec<String>)> = vec![
        (
            "prints []",
            vec!["sh".into(), "-c".into(), "echo '[]'".into()],
        ),
        ("exits 1", vec!["sh".into(), "-c".into(), "exit 1".into()]),
        (
            "random JSON",
            vec![
                "sh".into(),
                "-c".into(),
                r#"echo "[{\"name\":\"x$$\",\"arguments\":{\"r\":$$}}]""#.into(),
            ],
        ),
        (
            "crashes",
            vec!["sh".into(), "-c".into(), "kill -SEGV $$".into()],
        ),
        ("fixed answer", vec!["sh".into(), "-c".into(), fixed.into()]),
        (
            "reads, then a fixed answer",
            vec![
                "sh".into(),
                "-c".into(),
                format!("\"$0\" --fetch-only; {fixed}"),
                fetch.into(),
            ],
        ),
        (
            "reads, then []",
            vec![
                "sh".into(),
                "-c".into(),
                "\"$0\" --fetch-only; echo '[]'".into(),
                fetch.into(),
            ],
        ),
        (
            "reads, then exits 1",
            vec![
                "sh".into(),
                "-c".into(),
                "\"$0\" --fetch-only; exit 1".into(),
                fetch.into(),
            ],
        ),
    ];
    for (what, client) in &table {
        let client: Vec<&str> = client.iter().map(String::as_str).collect();
        let o = run_test(
            &[
                "--json",
                "--faults",
                "all",
                "--variants",
                "one-read,bytewise",
                "--dialect",
                "openai-chat,anthropic-messages,gemini,bedrock-converse,openai-responses",
            ],
            &client,
        );
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stderr(&o));
        let doc = json_of(&o);
        let cases = doc["cases"].as_array().expect("cases");
        assert!(cases.len() > 100, "{what}: {} cases", cases.len());
        assert_eq!(doc["summary"]["pass"], 0, "{what}: {:?}", verdicts(cases));
        // The Anthropic cut and error, InvokeModel's chunk frames, Vertex's partialArgs are run.
        for name in [
            "quirk-anthropic-truncated",
            "quirk-anthropic-error",
            "bedrock-invoke-model-weather",
            "quirk-bedrock-invoke-model-truncated",
            "quirk-bedrock-invoke-model-exception",
            "gemini-vertex-partial-args",
        ] {
            assert!(
                cases.iter().any(|c| c["recording"] == name),
                "{what}: {name} was not run"
            );
        }
        let reads = what.starts_with("reads");
        for c in cases {
            assert_eq!(c["served"]["requests"] != 0, reads, "{what}: {c:#}");
        }
    }
}

/// A case is served only to a client that asks for its streaming API: with `--dialect
/// anthropic-messages`, a client that POSTs to the Messages API (`/v1/messages`) is judged on
/// the SSE recordings and the InvokeModel ones are one "not spoken" line (never a failure, nor a
/// pass that is not judged); a client that calls InvokeModel (`…/invoke-with-response-stream`)
/// the other way round. Gemini's `alt=sse` in the query likewise chooses SSE or the JSON array.
/// The client is the export echo, which could read any of them: only the request decides.
#[test]
fn a_case_reaches_only_a_client_that_asks_for_its_api() {
    let export = example("client_export");
    let export = export.to_str().expect("path");
    let run = |dialect: &str, path: &str| {
        let o = run_test(
            &[
                "--json",
                "--faults",
                "all",
                "--variants",
                "one-read,bytewise",
                "--random-seed",
                "5",
                "--dialect",
                dialect,
            ],
            &[export, "--path", path, common::BIN],
        );
        let doc = json_of(&o);
        (o, doc)
    };
    let invoke = |name: &str| name.contains("bedrock-invoke-model");
    let array = |name: &str| name.contains("gemini-array");
    // (dialect, the request's path, which recordings it is served, the other API, its line)
    type Row<'a> = (&'a str, &'a str, &'a dyn Fn(&str) -> bool, &'a str, &'a str);
    let table: [Row<'_>; 4] = [
        (
            "anthropic-messages",
            "/v1/messages",
            &|n: &str| !invoke(n),
            "InvokeModel",
            "anthropic-messages via InvokeModel: not spoken (",
        ),
        (
            "anthropic-messages",
            "/model/anthropic.claude-sonnet-4-5-v1%3A0/invoke-with-response-stream",
            &invoke,
            "the Messages API over SSE",
            "anthropic-messages via the Messages API over SSE: not spoken (",
        ),
        (
            "gemini",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            &|n: &str| !array(n),
            "streamGenerateContent without alt=sse (a JSON array)",
            "gemini via streamGenerateContent without alt=sse (a JSON array): not spoken (",
        ),
        (
            "gemini",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            &array,
            "streamGenerateContent with alt=sse",
            "gemini via streamGenerateContent with alt=sse: not spoken (",
        ),
    ];
    for (dialect, path, served, other, line) in table {
        let (o, doc) = run(dialect, path);
        let what = format!("{dialect} at {path}");
        assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
        let cases = doc["cases"].as_array().expect("cases");
        assert!(cases.len() >= 6, "{what}: {} cases", cases.len());
        for c in cases {
            let name = c["recording"].as_str().expect("name");
            assert!(served(name), "{what}: {name} was served");
            assert_eq!(c["verdict"], "pass", "{what}: {c:#}");
        }
        assert_eq!(doc["summary"]["fail"], 0, "{what}");
        assert_eq!(doc["summary"]["not_judged"], 0, "{what}");
        let not_spoken = doc["summary"]["not_spoken"].as_array().expect("not_spoken");
        assert_eq!(not_spoken.len(), 1, "{what}: {not_spoken:#?}");
        assert_eq!(not_spoken[0]["api"], other, "{what}");
        assert!(
            not_spoken[0]["skipped"].as_u64().is_some_and(|n| n >= 2),
            "{what}: {not_spoken:#?}"
        );
        let err = stderr(&o);
        assert_eq!(err.matches(line).count(), 1, "{what}: {err}");
    }
    // Without --dialect the probe decides per API as well: the Messages client speaks
    // Anthropic, and InvokeModel's cases are still one line, not failures.
    let o = bin()
        .current_dir(manifest())
        .args(["test", "--json", "--variants", "one-read", "--recordings"])
        .args([
            "recordings/anthropic-weather.ron",
            "recordings/quirk-anthropic-truncated.ron",
            "recordings/bedrock-invoke-model-weather.ron",
            "recordings/quirk-bedrock-invoke-model-truncated.ron",
        ])
        .args(["--", export, "--path", "/v1/messages", common::BIN])
        .output()
        .expect("run sse-replay test");
    let doc = json_of(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let names: Vec<&str> = doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| c["recording"].as_str().expect("name"))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| !invoke(n)), "{names:?}");
    assert_eq!(doc["summary"]["pass"], 2, "{}", stderr(&o));
    assert_eq!(doc["summary"]["not_spoken"][0]["api"], "InvokeModel");
    assert_eq!(doc["summary"]["not_spoken"][0]["skipped"], 2);
}
