//! Ollama native `/api/chat` NDJSON (not SSE): each line a JSON object; `message.tool_calls` arrive
//! complete, with object `arguments` (newer builds add `function.index`, some an `id`); `done: true`
//! with `done_reason` ends the stream; a failure is a line `{"error": "…"}`.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{error_message, parse_index, raw_args, raw_string, undecodable};
use crate::fact::{CallKey, Fact, Fragment, Raw};
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
    #[serde(default, borrow, deserialize_with = "super::present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(default, borrow)]
    index: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "super::present")]
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
    pub fn on_event(&mut self, _event_type: &str, data: &str, out: &mut Vec<Fact>) {
        let line: Line<'_> = match serde_json::from_str(data) {
            Ok(l) => l,
            Err(e) => {
                out.push(undecodable(data, &e));
                return;
            }
        };
        if line.error.is_some_and(|e| e.get() != "null") {
            out.push(Fact::ProviderError {
                message: error_message(data),
            });
            return;
        }
        for tc in line.message.and_then(|m| m.tool_calls).unwrap_or_default() {
            let key = CallKey::Ordinal(self.calls);
            self.calls += 1;
            let (stated_index, name, args) = match tc.function {
                Some(f) => (
                    parse_index(f.index).ok().flatten(),
                    raw_string(f.name),
                    raw_args(f.arguments),
                ),
                None => (None, Raw::Absent, Raw::Absent),
            };
            let id = raw_string(tc.id);
            let no_id = id.non_empty().is_none();
            out.push(Fact::Fragment(Fragment {
                key: key.clone(),
                stated_index,
                id,
                name,
                args,
            }));
            if no_id {
                out.push(Fact::Finding {
                    kind: FindingKind::NoCallId,
                    key: Some(key.clone()),
                    message: "tool call without an id".into(),
                });
            }
            out.push(Fact::CallDone { key });
        }
        if line.done == Some(true) {
            let reason = line
                .done_reason
                .map_or_else(|| "done".to_owned(), |r| r.into_owned());
            if reason == "length" {
                out.push(Fact::Finding {
                    kind: FindingKind::AbnormalFinish,
                    key: None,
                    message: "done_reason \"length\": the model hit its output limit".into(),
                });
            }
            out.push(Fact::Finish { reason });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::ArgsPiece;

    #[test]
    fn object_arguments_index_and_error_line() {
        let mut d = Ollama::default();
        let mut s = Vec::new();
        d.on_event("message", r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":0,"name":"f","arguments":{"a":1}}}]},"done":false}"#, &mut s);
        d.on_event("message", r#"{"error":"model 'x' not found"}"#, &mut s);
        let Fact::Fragment(f) = &s[0] else {
            panic!("{s:?}")
        };
        assert_eq!(f.args, Raw::Value(ArgsPiece::Object(r#"{"a":1}"#.into())));
        assert_eq!(f.stated_index, Some(0));
        assert!(matches!(
            &s[1],
            Fact::Finding {
                kind: FindingKind::NoCallId,
                ..
            }
        ));
        assert!(
            matches!(s.last(), Some(Fact::ProviderError { message }) if message == "model 'x' not found")
        );
    }
}
