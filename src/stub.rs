//! The stub builder (the seed's own method is stub-driven): from calls (name, arguments) and a
//! fragment length in characters, build a recording of an OpenAI Chat Completions stream, with
//! the original arguments as ground truth. Optional quirks reproduce provider deviations.

use serde_json::json;

use crate::recording::{Chunk, Meta, Recording, TruthCall};

/// One call to stub.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StubCall {
    pub id: String,
    pub name: String,
    /// The arguments, verbatim (usually JSON).
    pub arguments: String,
}

/// How the calls' fragments are ordered in the stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// All of call 0, then all of call 1, ...
    #[default]
    Sequential,
    /// Round robin: one fragment of each call in turn (0,1,0,1...).
    Interleaved,
}

/// Provider deviations to reproduce.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quirks {
    /// Repeat the function name in every fragment.
    pub repeat_name: bool,
    /// Continuation fragments carry `"id": ""`.
    pub empty_id_continuations: bool,
    /// Leave out `index`.
    pub no_index: bool,
    /// First index (Claude behind a gateway uses 1).
    pub index_base: u64,
    /// Put every call at index 0, told apart by id + name.
    pub all_at_index_zero: bool,
    /// Send arguments as a JSON object in one fragment instead of string fragments.
    pub object_arguments: bool,
    /// Re-send the arguments so far in each fragment.
    pub cumulative: bool,
    /// CRLF line endings.
    pub crlf: bool,
    /// `data:` without a space.
    pub no_space: bool,
    /// A `: keep-alive` comment every N events (0 = none).
    pub keepalive_every: usize,
    /// Leave out `finish_reason` and `[DONE]` and cut the last call short (a truncated stream).
    pub truncate: bool,
    /// Put `finish_reason` in the same chunk as the last fragment.
    pub finish_with_last_fragment: bool,
    /// Insert an `event: error` after this many fragments.
    pub error_after: Option<usize>,
}

/// What to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StubSpec {
    pub title: String,
    pub calls: Vec<StubCall>,
    /// Fragment lengths in characters, cycled (e.g. `[5]`).
    pub fragment_chars: Vec<usize>,
    pub layout: Layout,
    /// Cut the body into network reads of this many bytes (splitting characters on purpose);
    /// `None` = one read per event.
    pub read_bytes: Option<usize>,
    /// Time between events.
    pub gap_micros: u64,
    pub quirks: Quirks,
}

impl Default for StubSpec {
    fn default() -> Self {
        Self {
            title: "stub".into(),
            calls: Vec::new(),
            fragment_chars: vec![5],
            layout: Layout::Sequential,
            read_bytes: None,
            gap_micros: 30_000,
            quirks: Quirks::default(),
        }
    }
}

/// Split `s` into pieces of `lens` characters (cycled), cutting anywhere, mid-string included.
pub fn split_chars(s: &str, lens: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut k = 0;
    while i < chars.len() {
        let n = lens.get(k % lens.len().max(1)).copied().unwrap_or(5).max(1);
        let end = (i + n).min(chars.len());
        out.push(chars[i..end].iter().collect());
        i = end;
        k += 1;
    }
    out
}

/// The seed document's example: get_weather `{"city":"深圳","days":3}` in fragments of 5,5,5,5,2
/// characters and get_time `{"city":"杭州","days":1}` in parallel.
pub fn seed_example() -> StubSpec {
    StubSpec {
        title: "The seed's example: two calls in one response, arguments cut every 5 characters".into(),
        calls: vec![
            StubCall { id: "call_1".into(), name: "get_weather".into(), arguments: r#"{"city":"深圳","days":3}"#.into() },
            StubCall { id: "call_2".into(), name: "get_time".into(), arguments: r#"{"city":"杭州","days":1}"#.into() },
        ],
        fragment_chars: vec![5],
        layout: Layout::Sequential,
        read_bytes: Some(47),
        gap_micros: 40_000,
        quirks: Quirks::default(),
    }
}

/// Build the recording.
pub fn build(spec: &StubSpec) -> Recording {
    let q = &spec.quirks;
    // Per call: its fragments (text, or the whole object).
    let per_call: Vec<Vec<String>> = spec
        .calls
        .iter()
        .map(|c| {
            if q.object_arguments {
                vec![c.arguments.clone()]
            } else {
                let mut pieces = split_chars(&c.arguments, &spec.fragment_chars);
                if pieces.is_empty() {
                    pieces.push(String::new());
                }
                if q.cumulative {
                    let mut acc = String::new();
                    pieces = pieces
                        .into_iter()
                        .map(|p| {
                            acc.push_str(&p);
                            acc.clone()
                        })
                        .collect();
                }
                pieces
            }
        })
        .collect();
    // Order of (call, fragment) pairs.
    let mut order = Vec::new();
    match spec.layout {
        Layout::Sequential => {
            for (c, frags) in per_call.iter().enumerate() {
                for f in 0..frags.len() {
                    order.push((c, f));
                }
            }
        }
        Layout::Interleaved => {
            let longest = per_call.iter().map(Vec::len).max().unwrap_or(0);
            for f in 0..longest {
                for (c, frags) in per_call.iter().enumerate() {
                    if f < frags.len() {
                        order.push((c, f));
                    }
                }
            }
        }
    }
    if q.truncate && order.len() > 1 {
        order.truncate(order.len() - 1);
    }
    let eol = if q.crlf { "\r\n" } else { "\n" };
    let prefix = if q.no_space { "data:" } else { "data: " };
    let mut events: Vec<String> = Vec::new();
    let data_event = |v: &serde_json::Value| format!("{prefix}{v}{eol}{eol}");
    let last = order.len().saturating_sub(1);
    for (n, &(c, f)) in order.iter().enumerate() {
        if q.keepalive_every > 0 && n > 0 && n % q.keepalive_every == 0 {
            events.push(format!(": keep-alive{eol}{eol}"));
        }
        if q.error_after == Some(n) {
            events.push(format!(
                "event: error{eol}{prefix}{}{eol}{eol}",
                json!({"error": {"type": "overloaded_error", "message": "Overloaded"}})
            ));
        }
        let call = &spec.calls[c];
        let first = f == 0;
        let mut tc = serde_json::Map::new();
        if !q.no_index {
            let index = if q.all_at_index_zero { 0 } else { q.index_base + c as u64 };
            tc.insert("index".into(), json!(index));
        }
        if first {
            tc.insert("id".into(), json!(call.id));
            tc.insert("type".into(), json!("function"));
        } else if q.empty_id_continuations {
            tc.insert("id".into(), json!(""));
        }
        let mut function = serde_json::Map::new();
        if first || q.repeat_name {
            function.insert("name".into(), json!(call.name));
        }
        let piece = &per_call[c][f];
        if q.object_arguments {
            let v: serde_json::Value = serde_json::from_str(piece).unwrap_or_else(|_| json!(piece));
            function.insert("arguments".into(), v);
        } else {
            function.insert("arguments".into(), json!(piece));
        }
        tc.insert("function".into(), serde_json::Value::Object(function));
        let finish = if q.finish_with_last_fragment && n == last && !q.truncate { json!("tool_calls") } else { json!(null) };
        let v = json!({
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"tool_calls": [tc]}, "finish_reason": finish}]
        });
        events.push(data_event(&v));
    }
    if !q.truncate {
        if !q.finish_with_last_fragment {
            let v = json!({
                "id": "chatcmpl-stub",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]
            });
            events.push(data_event(&v));
        }
        events.push(format!("{prefix}[DONE]{eol}{eol}"));
    }
    // Chunks: one per event, or fixed-size reads; times advance per event.
    let mut chunks = Vec::new();
    match spec.read_bytes {
        None => {
            for (i, e) in events.iter().enumerate() {
                chunks.push(Chunk { t_micros: i as u64 * spec.gap_micros, bytes: e.as_bytes().to_vec() });
            }
        }
        Some(n) => {
            let n = n.max(1);
            let mut ends = Vec::new(); // (end offset, time) of each event
            let mut off = 0u64;
            for (i, e) in events.iter().enumerate() {
                off += e.len() as u64;
                ends.push((off, i as u64 * spec.gap_micros));
            }
            let body: Vec<u8> = events.concat().into_bytes();
            for (k, piece) in body.chunks(n).enumerate() {
                let end = (k * n + piece.len()) as u64;
                // A read arrives when the event containing its last byte was sent.
                let t = ends.iter().find(|(e, _)| *e >= end).map_or(0, |(_, t)| *t);
                chunks.push(Chunk { t_micros: t, bytes: piece.to_vec() });
            }
        }
    }
    Recording {
        version: crate::recording::FORMAT_VERSION,
        meta: Meta {
            title: spec.title.clone(),
            source: "stub".into(),
            created: String::new(),
            dialect: "openai-chat".into(),
            notes: vec!["Built by the stub builder; the model's behaviour was not measured (as in the seed).".into()],
            timing_known: true,
            interrupted: false,
        },
        request: None,
        response: None,
        chunks,
        truth: spec
            .calls
            .iter()
            .map(|c| TruthCall { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_split_is_5_5_5_5_2() {
        let p = split_chars(r#"{"city":"深圳","days":3}"#, &[5]);
        assert_eq!(p, vec!["{\"cit", "y\":\"深", "圳\",\"d", "ays\":", "3}"]);
    }
}
