//! The large synthetic stream for benchmarks and the app's scale test: an OpenAI Chat Completions
//! stream with `calls` tool calls, two interleaved at a time, arguments cut into small fragments
//! (about 227 MB and 680,000 events for 2,000 calls). Deterministic.

use std::io::{self, Write};

use crate::recording::{Chunk, Meta, Recording};

/// Fragments per call (each becomes one event).
const FRAGMENTS_PER_CALL: usize = 340;

fn call_arguments(call: usize) -> String {
    // A realistic-looking argument object with CJK text, escapes and numbers, ~1.7 KB.
    let mut s = format!(
        "{{\"query\":\"城市天气 forecast #{call}\",\"days\":{},\"items\":[",
        call % 14 + 1
    );
    for i in 0..40 {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"k\":\"v{call}_{i} \\\"q\\\" 深圳\",\"n\":{}}}",
            i * 7 + call
        ));
    }
    s.push_str("]}");
    s
}

fn split(s: &str, pieces: usize) -> Vec<&str> {
    let n = s.len();
    let mut out = Vec::with_capacity(pieces);
    let mut start = 0;
    for k in 1..=pieces {
        let mut end = (n * k / pieces).max(start);
        while end < n && !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// Emit the events, one `String` each (with its blank line), to `f`.
fn for_each_event(calls: usize, mut f: impl FnMut(&str) -> io::Result<()>) -> io::Result<()> {
    let mut line = String::with_capacity(512);
    let pad = "x".repeat(67); // providers' metadata fields (system_fingerprint, obfuscation...)
    let mut pair = 0;
    while pair * 2 < calls {
        let a = pair * 2;
        let members: Vec<usize> = (a..(a + 2).min(calls)).collect();
        let args: Vec<String> = members.iter().map(|&c| call_arguments(c)).collect();
        let pieces: Vec<Vec<&str>> = args.iter().map(|s| split(s, FRAGMENTS_PER_CALL)).collect();
        for k in 0..FRAGMENTS_PER_CALL {
            for (&c, call_pieces) in members.iter().zip(&pieces) {
                line.clear();
                let piece = serde_json::to_string(call_pieces[k]).unwrap_or_default();
                let head = if k == 0 {
                    format!(
                        r#""id":"call_{c:06}","type":"function","function":{{"name":"get_weather","arguments":{piece}}}"#
                    )
                } else {
                    format!(r#""function":{{"arguments":{piece}}}"#)
                };
                line.push_str(&format!(
                    "data: {{\"id\":\"chatcmpl-large\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-large\",\"system_fingerprint\":\"fp_{pad}\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{c},{head}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
                ));
                f(&line)?;
            }
        }
        pair += 1;
    }
    f(
        "data: {\"id\":\"chatcmpl-large\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    )?;
    f("data: [DONE]\n\n")
}

/// Write the raw SSE body.
pub fn write_large(mut w: impl Write, calls: usize) -> io::Result<()> {
    for_each_event(calls, |e| w.write_all(e.as_bytes()))?;
    w.flush()
}

/// The same stream as a recording, one chunk per event, 100 µs apart.
pub fn large_recording(calls: usize) -> Recording {
    let mut chunks = Vec::new();
    // Collecting into memory cannot fail: the callback never returns an error.
    for_each_event(calls, |e| {
        let t = chunks.len() as u64 * 100;
        chunks.push(Chunk {
            t_micros: t,
            bytes: e.as_bytes().to_vec(),
        });
        Ok(())
    })
    .ok();
    Recording {
        version: crate::recording::FORMAT_VERSION,
        meta: Meta {
            title: format!("Large generated stream: {calls} calls, two interleaved at a time"),
            source: "generated".into(),
            dialect: "openai-chat".into(),
            timing_known: true,
            ..Default::default()
        },
        chunks,
        ..Default::default()
    }
}

/// A stream of `calls` tool calls that each arrive whole in one event (id, name and complete
/// arguments, as some providers send them), then the finish and `[DONE]`: about 120 bytes per
/// call, so 300,000 calls make ~36 MB. The scale case for `check` (many calls rather than many
/// fragments).
pub fn write_one_event_calls(mut w: impl Write, calls: usize) -> io::Result<()> {
    for c in 0..calls {
        writeln!(
            w,
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{c},\"id\":\"call_{c}\",\"type\":\"function\",\"function\":{{\"name\":\"f\",\"arguments\":\"{{\\\"n\\\":{c}}}\"}}}}]}}}}]}}\n"
        )?;
    }
    w.write_all(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
    )?;
    w.flush()
}

/// The original arguments of call `n` (for tests).
pub fn original_arguments(call_no: usize) -> String {
    call_arguments(call_no)
}
