//! An `export`-echo client, for `sse-replay test` (and its own tests): it reads the case's stream
//! from the served URL and prints what `sse-replay export` makes of it.
//!
//!     cargo build --bin sse-replay-example-client-export
//!     sse-replay test -- target/debug/sse-replay-example-client-export target/debug/sse-replay
//!
//! It POSTs to `$SSE_REPLAY_URL` (every path of a case's server answers with the case's bytes),
//! reads the body to its end (or to where the connection broke), pipes it into
//! `SSE-REPLAY export --dialect $SSE_REPLAY_DIALECT -` and passes on export's output and exit
//! code (`--path P` POSTs to path `P` instead of `/v1/chat/completions`). Export's JSON is the client contract's (`name`, `arguments`, `id`; a call whose
//! arguments do not parse as `error` and `raw_arguments`; a custom tool's input as a string), so
//! this client passes every case a pass can be judged on: it is the harness's own reading,
//! through its own command line. With `--fetch-only` it reads the stream and prints nothing.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a client under test prints its calls on standard output and its complaints on standard error"
)]

#[path = "support/http.rs"]
mod http;

use std::io::Write as _;
use std::process::{ExitCode, Stdio};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `--path P` asks for one API of a dialect that has several (`/v1/messages` or
    // `/model/m/invoke-with-response-stream`; a Gemini path with or without `?alt=sse`): the
    // harness serves a case only to a client that asks for its API.
    let mut path = "/v1/chat/completions".to_owned();
    if args.first().is_some_and(|a| a == "--path") && args.len() > 1 {
        path = args.remove(1);
        args.remove(0);
    }
    let Some(bin) = args.first().cloned() else {
        eprintln!(
            "usage: sse-replay-example-client-export [--path REQUEST-PATH] PATH-TO-SSE-REPLAY | --fetch-only"
        );
        return ExitCode::from(2);
    };
    let body = r#"{"model":"any","stream":true,"messages":[{"role":"user","content":"weather?"}]}"#;
    let response = match http::post(&path, body) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sse-replay-example-client-export: {e}");
            return ExitCode::from(1);
        }
    };
    // Reads the stream and prints nothing: the first half of a client that reads, then prints
    // an answer of its own (the harness's tests of fixed answers).
    if bin == "--fetch-only" {
        return ExitCode::SUCCESS;
    }
    let mut export = std::process::Command::new(&bin);
    export.arg("export");
    if let Ok(dialect) = std::env::var("SSE_REPLAY_DIALECT") {
        export.args(["--dialect", &dialect]);
    }
    let child = export
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sse-replay-example-client-export: cannot run {bin}: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A write error means export stopped reading: its exit code says why.
        stdin.write_all(&response.body).ok();
    }
    match child.wait() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("sse-replay-example-client-export: {e}");
            ExitCode::from(1)
        }
    }
}
