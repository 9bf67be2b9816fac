//! Ollama native `/api/chat` NDJSON: each line a JSON object; `message.tool_calls` arrive complete,
//! with object `arguments`; `done: true` ends the stream.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ArgsPiece, CallKey, Fragment, Raw, Signal, error_message, raw_string, truncate};
use crate::findings::FindingKind;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow)]
    message: Option<Message<'a>>,
    #[serde(default)]
    done: Option<bool>,
    #[serde(default, borrow)]
    done_reason: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(default, borrow)]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
}

/// Decoder state: how many calls so far.
#[derive(Debug, Default)]
pub struct Ollama {
    calls: u32,
}

impl Ollama {
    /// Decode one line.
    pub fn on_event(&mut self, _event_type: &str, data: &str, out: &mut Vec<Signal>) {
        let line: Line<'_> = match serde_json::from_str(data) {
            Ok(l) => l,
            Err(e) => {
                out.push(Signal::Finding {
                    kind: FindingKind::NonJsonData,
                    key: None,
                    message: format!("{e}: {}", truncate(data, 80)),
                });
                return;
            }
        };
        if line.error.is_some_and(|e| e.get() != "null") {
            out.push(Signal::ProviderError { message: error_message(data) });
            return;
        }
        for tc in line.message.and_then(|m| m.tool_calls).unwrap_or_default() {
            let key = CallKey::Ordinal(self.calls);
            self.calls += 1;
            let (name, args) = match tc.function {
                Some(f) => (raw_string(f.name), super::raw_args(f.arguments)),
                None => (Raw::Absent, Raw::Absent),
            };
            let args = match args {
                Raw::Value(ArgsPiece::Text(t)) => Raw::Value(ArgsPiece::Text(t)),
                other => other,
            };
            out.push(Signal::Fragment(Fragment { key: key.clone(), stated_index: None, id: raw_string(tc.id), name, args }));
            out.push(Signal::CallDone { key });
        }
        if line.done == Some(true) {
            out.push(Signal::Finish { reason: line.done_reason.map_or_else(|| "done".to_owned(), |r| r.into_owned()) });
        }
    }
}
