//! A deliberately naive streaming tool-call client, for `sse-replay test` to catch:
//!
//!     cargo build --bin sse-replay-example-client-naive
//!     sse-replay test --dialect openai-chat -- target/debug/sse-replay-example-client-naive
//!
//! It speaks OpenAI Chat Completions only and assembles tool calls the way openai-python's
//! `accumulate_delta` does: every string field of a delta is appended to what the call already
//! has, the name and id included. On a clean stream that is right; on a provider that repeats the
//! name in every fragment it prints `get_weatherget_weather`, and the harness says it "behaves like
//! `concat-fields`". It prints every call it saw, arguments as it assembled them, and never
//! checks how the stream ended.
//!
//! Only the standard library and serde_json (`support/http.rs`: one HTTP/1.1 POST, the body read
//! to the end), then split into lines.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a client under test prints its calls on standard output and its complaints on standard error"
)]

#[path = "support/http.rs"]
mod http;

use serde_json::{Value, json};

fn main() {
    let body = r#"{"model":"any","stream":true,"messages":[{"role":"user","content":"weather?"}]}"#;
    let response = match http::post("/v1/chat/completions", body) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sse-replay-example-client-naive: {e}");
            std::process::exit(1);
        }
    };
    let text = String::from_utf8_lossy(&response.body);

    // The naive part: append every string field.
    let mut calls: Vec<(u64, String, String, String)> = Vec::new();
    for line in text.split('\n') {
        let Some(data) = line.trim().strip_prefix("data:") else {
            continue;
        };
        let Ok(chunk) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        let deltas = chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for d in deltas {
            let index = d["index"].as_u64().unwrap_or(0);
            let pos = match calls.iter().position(|c| c.0 == index) {
                Some(p) => p,
                None => {
                    calls.push((index, String::new(), String::new(), String::new()));
                    calls.len() - 1
                }
            };
            let c = &mut calls[pos];
            if let Some(id) = d["id"].as_str() {
                c.1.push_str(id);
            }
            if let Some(name) = d["function"]["name"].as_str() {
                c.2.push_str(name);
            }
            match &d["function"]["arguments"] {
                Value::String(s) => c.3.push_str(s),
                Value::Null => {}
                other => c.3.push_str(&other.to_string()),
            }
        }
    }
    let out: Vec<Value> = calls
        .into_iter()
        .map(|(_, id, name, args)| json!({"name": name, "arguments": args, "id": id}))
        .collect();
    println!("{}", Value::Array(out));
}
