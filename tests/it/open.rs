//! One way in for the CLI and the app (`sse_replay_core::probe`): `check`, `export` and `events` open a
//! capture (HAR, cassette, JSON-lines fixture) as the app does; a capture with several streams
//! takes `--stream N` and without it fails with exit 2, the error on the first line of standard
//! error and one line per stream after it.

use crate::common;

use common::{code, manifest, run, stderr};

const TWO_HAR: &str = "tests/data/import/two-streams.har";
const TWO_CASSETTE: &str = "tests/data/import/vcr-two-streams.yaml";
const ONE_CASSETTE: &str = "tests/data/import/pydantic-ai-style.yaml";

#[test]
fn a_capture_with_several_streams_needs_stream_n() {
    for file in [TWO_HAR, TWO_CASSETTE] {
        for cmd in ["check", "export", "events"] {
            let o = run(&[cmd, file]);
            assert_eq!(code(&o), 2, "{cmd} {file}: {}", stderr(&o));
            assert!(o.stdout.is_empty(), "{cmd} {file}: nothing on stdout");
            let err = stderr(&o);
            let lines: Vec<&str> = err.lines().collect();
            assert_eq!(lines.len(), 3, "{cmd} {file}: {err}");
            assert!(
                lines[0].starts_with("sse-replay: the capture holds 2 streams: give --stream N")
                    && lines[0].ends_with(file),
                "{err}"
            );
            assert!(lines[1].starts_with("  1: POST "), "{err}");
            assert!(lines[2].starts_with("  2: POST "), "{err}");
            // A number that is not one of them says so, with the same list.
            let o = run(&[cmd, file, "--stream", "3"]);
            assert_eq!(code(&o), 2, "{cmd} {file} --stream 3");
            assert!(
                stderr(&o).starts_with("sse-replay: no stream 3"),
                "{}",
                stderr(&o)
            );
            assert_eq!(stderr(&o).lines().count(), 3);
        }
    }
}

#[test]
fn ruby_vcr_go_vcr_and_httprr_captures_are_checked_as_captures() {
    // Each holds one stream with one call, among exchanges that are no streams.
    for (file, source) in [
        (
            "tests/data/import/ruby-vcr-openai-stream.yml",
            "cassette import",
        ),
        (
            "tests/data/import/ruby-vcr-binary-anthropic.yml",
            "cassette import",
        ),
        ("tests/data/import/go-vcr-v2-stream.yaml", "cassette import"),
        ("tests/data/import/openai-stream.httprr", "httprr import"),
    ] {
        let o = run(&["check", file, "--json"]);
        assert_eq!(code(&o), 0, "{file}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["source"], source, "{file}");
        assert_eq!(v["calls"].as_array().map(Vec::len), Some(1), "{file}: {v}");
        assert_eq!(v["ok"], true, "{file}");
    }
    // The same bytes under a name that says nothing are decided by their content.
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["ruby-vcr-openai-stream.yml", "openai-stream.httprr"] {
        let copy = dir.path().join(format!("{file}.txt"));
        std::fs::copy(manifest().join("tests/data/import").join(file), &copy).expect("copy");
        let o = run(&["check", copy.to_str().expect("path")]);
        assert_eq!(code(&o), 0, "{file}: {}", stderr(&o));
    }
}

#[test]
fn check_export_and_events_open_each_stream_of_a_capture() {
    // Stream 1 of the HAR is an OpenAI chat stream with get_weather, stream 2 an Anthropic one.
    let o = run(&["export", TWO_HAR, "--stream", "1", "--format", "jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(r#""name":"get_weather""#), "{out}");
    let o = run(&["check", TWO_HAR, "--stream", "2", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["dialect"], "anthropic-messages");
    assert_eq!(v["source"], "har import");
    let o = run(&["events", TWO_CASSETTE, "--stream", "2"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).lines().count() > 1);
    // A capture with one stream needs no --stream (and accepts --stream 1).
    for args in [
        &["check", ONE_CASSETTE][..],
        &["check", ONE_CASSETTE, "--stream", "1"],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    }
    // A recording has one stream: --stream 2 is refused like a capture's.
    let o = run(&["check", "recordings/seed-example.ron", "--stream", "2"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).starts_with("sse-replay: no stream 2"),
        "{}",
        stderr(&o)
    );
}

/// A pipe can be read only once: a capture, a recording or a journal through standard input opens
/// as the file does (the probe peeks, decides, and reads on from where it peeked).
#[test]
fn standard_input_is_read_once_and_decided_as_a_file_is() {
    use std::io::Write as _;
    use std::process::Stdio;
    let root = manifest();
    let with_stdin = |args: &[&str], file: &str| {
        let mut child = common::bin_in(&root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let bytes = std::fs::read(root.join(file)).expect("read");
        let mut stdin = child.stdin.take().expect("stdin");
        // A writer thread: a pipe holds less than a capture, and the child reads as it goes.
        let writer = std::thread::spawn(move || stdin.write_all(&bytes));
        let out = child.wait_with_output().expect("wait");
        writer.join().expect("writer").expect("write");
        out
    };
    for (file, args) in [
        (TWO_HAR, &["export", "--stream", "2"][..]),
        (TWO_CASSETTE, &["export", "--stream", "1"]),
        ("recordings/seed-example.ron", &["export"]),
    ] {
        let direct = run(&[args, &[file]].concat());
        assert_eq!(code(&direct), 0, "{file}: {}", stderr(&direct));
        let piped = with_stdin(&[args, &["-"]].concat(), file);
        assert_eq!(code(&piped), 0, "{file}: {}", stderr(&piped));
        assert_eq!(piped.stdout, direct.stdout, "{file}");
    }
    // Several streams and none chosen: the same refusal as for the file.
    let piped = with_stdin(&["check", "-"], TWO_HAR);
    assert_eq!(code(&piped), 2);
    assert!(stderr(&piped).starts_with("sse-replay: the capture holds 2 streams"));
}
