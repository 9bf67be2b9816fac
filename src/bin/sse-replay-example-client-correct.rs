//! A correct streaming tool-call client, for `sse-replay test` (and its own tests):
//!
//!     cargo build --bin sse-replay-example-client-correct
//!     sse-replay test -- target/debug/sse-replay-example-client-correct
//!
//! It POSTs a chat request to `$SSE_REPLAY_URL` (or `$OPENAI_BASE_URL`), reads the streamed body
//! read by read as it arrives, and assembles the tool calls the way the seed document says:
//! one table keyed by the call's key, id and name taken when present, arguments appended, each
//! call parsed once at the finish. The assembling is sse-replay's own accumulator (the library),
//! so every dialect and quirk is covered; the HTTP side is an ordinary reqwest client.
//!
//! Output, per the client contract: a JSON array of `{"name", "arguments", "id"}` on stdout, only
//! the calls that are finished and parse (tools the provider ran itself are not calls). A call whose arguments do not parse, a stream that ends
//! without its finish signal, a provider error or a cut connection: what is sound is printed, the
//! problem goes to stderr, and the exit code is 1.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a client under test prints its calls on standard output and its complaints on standard error"
)]

use futures_util::StreamExt as _;
use sse_replay_core::accumulate::Parsed;
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::pipeline::{Options, Pipeline};

fn main() -> std::process::ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("sse-replay-example-client-correct: cannot start tokio: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    rt.block_on(run())
}

async fn run() -> std::process::ExitCode {
    let base = std::env::var("SSE_REPLAY_URL")
        .or_else(|_| std::env::var("OPENAI_BASE_URL"))
        .unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let url = format!("{}/v1/chat/completions", base.trim_end_matches('/'));
    let dialect = std::env::var("SSE_REPLAY_DIALECT")
        .ok()
        .and_then(|d| DialectKind::from_name(&d));
    let client = match sse_replay_net::http_client(std::time::Duration::from_secs(10)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sse-replay-example-client-correct: cannot build the HTTP client: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let body = serde_json::json!({
        "model": "any",
        "stream": true,
        "messages": [{"role": "user", "content": "What is the weather in Shenzhen?"}],
    });
    let response = match client
        .post(&url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sse-replay-example-client-correct: request failed: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let mut pipeline = Pipeline::new(Options {
        dialect,
        framing: None,
        detail: false,
    });
    let mut problems = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(read) = stream.next().await {
        match read {
            Ok(bytes) => pipeline.feed(&bytes, 0),
            Err(e) => {
                problems.push(format!("the connection failed mid-stream: {e}"));
                break;
            }
        }
    }
    let outcome = pipeline.finish();
    if let Some((message, _)) = &outcome.provider_error {
        problems.push(format!("provider error: {message}"));
    } else if outcome.ending == sse_replay_core::pipeline::StreamEnding::EndedWithoutFinish {
        problems.push("the stream ended without a finish signal".into());
    }
    let mut printed = Vec::new();
    // Tools the provider ran itself (server tools) are not calls for the client to execute.
    for call in outcome.calls.iter().filter(|c| c.is_client_call()) {
        match (&call.parsed, call.complete) {
            (Parsed::Ok(arguments), true) => printed.push(serde_json::json!({
                "name": call.name,
                "arguments": arguments,
                "id": call.id,
            })),
            (Parsed::Ok(_), false) => problems.push(format!(
                "call {} {} never finished",
                call.position, call.name
            )),
            (Parsed::Err { error, .. }, _) => {
                problems.push(format!(
                    "call {} {}: arguments do not parse: {error}",
                    call.position, call.name
                ));
            }
        }
    }
    println!("{}", serde_json::Value::Array(printed));
    if problems.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!("sse-replay-example-client-correct: {}", problems.join("; "));
        std::process::ExitCode::from(1)
    }
}
