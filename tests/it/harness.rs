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
