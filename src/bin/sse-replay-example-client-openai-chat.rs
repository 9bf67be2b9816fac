//! A correct OpenAI Chat Completions tool-call client in plain Rust (standard library and
//! serde_json, no sse-replay code): the seed document's method written out, for `sse-replay test`.
//!
//!     cargo build --bin sse-replay-example-client-openai-chat
//!     sse-replay test --dialect openai-chat --faults all -- target/debug/sse-replay-example-client-openai-chat
//!
//! - SSE per the WHATWG algorithm: lines end in LF, CRLF or CR; `:` lines are comments; `data`
//!   fields join with a newline; a blank line dispatches; an unfinished event at the end is dropped.
//!   Bytes are decoded after the whole line is in (never per read).
//! - The accumulator is a table keyed by `(choice, index)`; id and name are set only when present
//!   and not empty, arguments are appended (an object is taken as its JSON text). A new id *with a
//!   name* at an index already used starts a new call (servers that put every call at index 0). No
//!   index: the call with that id, else the latest call.
//! - Nothing is validated while accumulating; the stream finishes on `finish_reason` or `[DONE]`;
//!   each call is parsed once at the end, empty arguments as `{}`.
//! - Only when the stream finished and every call parsed does it print the calls and exit 0.
//!   Otherwise it prints the calls that are sound — none, if the stream never finished — names the
//!   problem on stderr and exits 1. It never repairs or invents arguments.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a client under test prints its calls on standard output and its complaints on standard error"
)]

#[path = "support/http.rs"]
mod http;

use serde_json::{Value, json};

#[derive(Default)]
struct Call {
    id: String,
    name: String,
    args: String,
}

#[derive(Default)]
struct Table {
    /// Calls in order of first appearance.
    calls: Vec<Call>,
    /// (choice, index) → position of the call currently at that index.
    by_index: Vec<((u64, u64), usize)>,
    latest: Option<usize>,
}

impl Table {
    fn slot(&mut self, choice: u64, index: Option<u64>, id: &str, name: &str) -> usize {
        let Some(index) = index else {
            if !id.is_empty()
                && let Some(p) = self.calls.iter().position(|c| c.id == id)
            {
                return p;
            }
            if id.is_empty()
                && let Some(p) = self.latest
            {
                return p;
            }
            self.calls.push(Call::default());
            return self.calls.len() - 1;
        };
        let known = self
            .by_index
            .iter()
            .find(|(k, _)| *k == (choice, index))
            .map(|(_, p)| *p);
        match known {
            Some(p)
                if !(id.is_empty()
                    || name.is_empty()
                    || self.calls[p].id.is_empty()
                    || self.calls[p].id == id) =>
            {
                // A new id with a name at a used index: a new call.
                self.calls.push(Call::default());
                let p = self.calls.len() - 1;
                self.by_index.retain(|(k, _)| *k != (choice, index));
                self.by_index.push(((choice, index), p));
                p
            }
            Some(p) => p,
            None => {
                self.calls.push(Call::default());
                let p = self.calls.len() - 1;
                self.by_index.push(((choice, index), p));
                p
            }
        }
    }

    fn feed(&mut self, choice: u64, tc: &Value) {
        let id = tc["id"].as_str().unwrap_or("");
        let name = tc["function"]["name"].as_str().unwrap_or("");
        let p = self.slot(choice, tc["index"].as_u64(), id, name);
        self.latest = Some(p);
        let call = &mut self.calls[p];
        if !id.is_empty() && call.id.is_empty() {
            call.id = id.to_owned();
        }
        if !name.is_empty() && call.name.is_empty() {
            call.name = name.to_owned();
        }
        match &tc["function"]["arguments"] {
            Value::String(s) => call.args.push_str(s),
            Value::Null => {}
            other => call.args.push_str(&other.to_string()),
        }
    }
}

/// The SSE events of `body`: (event type, data).
fn events(body: &[u8]) -> Vec<(String, String)> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let mut out = Vec::new();
    let (mut event, mut data, mut has_data) = (String::new(), String::new(), false);
    let mut rest = body;
    // An unterminated last line is not part of any event.
    while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
        let line = String::from_utf8_lossy(&rest[..end]).into_owned();
        let skip = if rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
        if line.is_empty() {
            if has_data {
                let kind = if event.is_empty() {
                    "message".to_owned()
                } else {
                    std::mem::take(&mut event)
                };
                out.push((kind, std::mem::take(&mut data)));
            }
            (event, data, has_data) = (String::new(), String::new(), false);
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => event = value.to_owned(),
            "data" => {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    out
}

fn main() {
    let request = json!({
        "model": "any",
        "stream": true,
        "messages": [{"role": "user", "content": "What is the weather in Shenzhen?"}],
    });
    let response = match http::post("/v1/chat/completions", &request.to_string()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sse-replay-example-client-openai-chat: {e}");
            std::process::exit(1);
        }
    };
    let mut table = Table::default();
    let mut finished = false;
    let mut problems = Vec::new();
    if !response.complete {
        problems.push("the connection broke mid-stream".to_owned());
    }
    for (kind, data) in events(&response.body) {
        if data.trim() == "[DONE]" {
            finished = true;
            continue;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(&data) else {
            continue; // keep-alives wrapped as data, and the like
        };
        if kind == "error" || !chunk["error"].is_null() {
            problems.push(format!("provider error: {}", chunk["error"]));
            break;
        }
        for (i, choice) in chunk["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let n = choice["index"].as_u64().unwrap_or(i as u64);
            let delta = if choice["delta"].is_object() {
                &choice["delta"]
            } else {
                &choice["message"]
            };
            for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                table.feed(n, tc);
            }
            if choice["finish_reason"].is_string() {
                finished = true;
            }
        }
    }
    if !finished && problems.is_empty() {
        problems.push("the stream ended without finish_reason or [DONE]".to_owned());
    }
    let mut printed = Vec::new();
    if problems.is_empty() {
        for (i, c) in table.calls.iter().enumerate() {
            let text = if c.args.trim().is_empty() {
                "{}"
            } else {
                c.args.as_str()
            };
            match serde_json::from_str::<Value>(text) {
                Ok(arguments) => {
                    printed.push(json!({"name": c.name, "arguments": arguments, "id": c.id}))
                }
                Err(e) => {
                    problems.push(format!("call {i} {}: arguments do not parse: {e}", c.name))
                }
            }
        }
    }
    println!("{}", Value::Array(printed));
    if !problems.is_empty() {
        eprintln!(
            "sse-replay-example-client-openai-chat: {}",
            problems.join("; ")
        );
        std::process::exit(1);
    }
}
