//! A deliberately naive streaming tool-call client, for `sse-replay test` to catch:
//!
//!     cargo build --example client_naive
//!     sse-replay test --dialect openai-chat -- target/debug/examples/client_naive
//!
//! It speaks OpenAI Chat Completions only and assembles tool calls the way openai-python's
//! `accumulate_delta` does: every string field of a delta is appended to what the call already
//! has, the name and id included. On a clean stream that is right; on a provider that repeats the
//! name in every fragment it prints `get_weatherget_weather`, and the harness says it "behaves like
//! `concat-fields`". It prints every call it saw, arguments as it assembled them, and never
//! checks how the stream ended.
//!
//! Only the standard library and serde_json: one HTTP/1.1 request over a `TcpStream`
//! (`Connection: close`), the body read to the end, chunked transfer coding removed, then split into
//! lines.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;

use serde_json::{Value, json};

fn main() {
    let base = std::env::var("SSE_REPLAY_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let host = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut conn = match TcpStream::connect(&host) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("client_naive: cannot connect to {host}: {e}");
            std::process::exit(1);
        }
    };
    let body = r#"{"model":"any","stream":true,"messages":[{"role":"user","content":"weather?"}]}"#;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if let Err(e) = conn.write_all(request.as_bytes()) {
        eprintln!("client_naive: cannot send the request: {e}");
        std::process::exit(1);
    }
    // Read until the server closes (or the connection breaks: keep what arrived).
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = conn.read(&mut buf) {
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let Some(head_end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        eprintln!("client_naive: no HTTP response head");
        std::process::exit(1);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let mut body = raw[head_end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    let text = String::from_utf8_lossy(&body);

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

/// Removes HTTP/1.1 chunked transfer coding (a truncated body keeps what is complete).
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size else { break };
        if size == 0 {
            break;
        }
        let start = eol + 2;
        let end = (start + size).min(body.len());
        out.extend_from_slice(&body[start..end]);
        if end < start + size {
            break;
        }
        body = body.get(end + 2..).unwrap_or_default();
    }
    out
}
