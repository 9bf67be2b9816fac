//! Cohere v2 chat streaming (`POST /v2/chat` with `stream: true`): `message-start`,
//! `tool-plan-delta` (the model's plan, text), `tool-call-start` (the call's `id`, `name` and first
//! `arguments`), `tool-call-delta` (an `arguments` fragment), `tool-call-end`, content and citation
//! events (text: ignored for calls), and `message-end` with `finish_reason` (`TOOL_CALL`,
//! `COMPLETE`, `MAX_TOKENS`, `ERROR`…). Calls are keyed by the event's `index`. The same events
//! come as SSE (`event:` + `data:`, or the type only inside the data) or as JSON lines; the type
//! is read from the data first. `delta.message.tool_calls` is one object (a list is read too).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{FieldArgs, FieldStr, FxHashMap, error_message, parse_index, undecodable};
use crate::fact::{CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;

/// Every event type of a Cohere v2 chat stream (what detection and the message for an
/// unrecognised stream name).
pub const EVENT_TYPES: &[&str] = &[
    "message-start",
    "content-start",
    "content-delta",
    "content-end",
    "tool-plan-delta",
    "tool-call-start",
    "tool-call-delta",
    "tool-call-end",
    "citation-start",
    "citation-end",
    "message-end",
];

/// The event names a Cohere v2 stream is recognised by: any of [`EVENT_TYPES`].
pub fn looks_like_cohere_event(event_type: &str) -> bool {
    EVENT_TYPES.contains(&event_type)
}

#[derive(Deserialize)]
struct Ev<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default, borrow)]
    index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    message: Option<Message<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow)]
    tool_calls: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct ToolCall {
    #[serde(default)]
    id: FieldStr,
    #[serde(default)]
    function: Option<Function>,
}

#[derive(Deserialize, Default)]
struct Function {
    #[serde(default)]
    name: FieldStr,
    #[serde(default)]
    arguments: FieldArgs,
}

/// Decoder state: per index, how many calls started there (a `tool-call-start` at an index whose
/// call already ended starts a new one), and the most recent call for events without an index.
#[derive(Debug, Default)]
pub struct Cohere {
    generations: FxHashMap<u64, (u32, bool)>,
    latest: Option<CallKey>,
}

impl Cohere {
    /// Decode one event (SSE `event:` name, or the JSON `type` when framed as JSON lines).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        if data.trim() == "[DONE]" {
            out.push(Fact::Done);
            return;
        }
        let ev: Ev<'_> = match serde_json::from_str(data) {
            Ok(ev) => ev,
            Err(e) => {
                out.push(if event_type == "error" {
                    Fact::ProviderError {
                        message: error_message(data),
                    }
                } else {
                    undecodable(data, &e)
                });
                return;
            }
        };
        let kind = ev.kind.unwrap_or(event_type);
        match kind {
            "tool-call-start" | "tool-call-delta" => {
                let start = kind == "tool-call-start";
                let key = self.key(ev.index, start, out);
                let calls = ev
                    .delta
                    .as_ref()
                    .and_then(|d| d.message.as_ref())
                    .and_then(|m| m.tool_calls);
                let call = tool_call(calls);
                let (name, args) = match call.function {
                    Some(f) => (f.name.0, f.arguments.0),
                    None => (Raw::Absent, Raw::Absent),
                };
                let first_piece = start && args.value().is_some_and(|a| !a.text().is_empty());
                out.push(Fact::Fragment(Fragment {
                    stated_index: key.index(),
                    key: key.clone(),
                    id: call.id.0,
                    name,
                    args,
                }));
                if first_piece {
                    out.push(Fact::Finding {
                        kind: FindingKind::ArgumentsInStart,
                        key: Some(key),
                        message: "tool-call-start carries the first arguments fragment".into(),
                    });
                }
            }
            "tool-call-end" => {
                let key = self.key(ev.index, false, out);
                if let CallKey::Index { index, .. } = &key
                    && let Some(slot) = self.generations.get_mut(index)
                {
                    slot.1 = true;
                }
                out.push(Fact::CallDone { key });
            }
            "message-end" => {
                let delta = ev.delta.as_ref();
                let reason = delta
                    .and_then(|d| d.finish_reason.as_deref())
                    .unwrap_or("message-end")
                    .to_owned();
                match reason.as_str() {
                    "ERROR" | "TIMEOUT" => {
                        let detail = delta
                            .and_then(|d| d.error)
                            .filter(|e| e.get() != "null")
                            .map(|e| match serde_json::from_str::<String>(e.get()) {
                                Ok(s) => s,
                                Err(_) => error_message(e.get()),
                            });
                        out.push(Fact::ProviderError {
                            message: match detail {
                                Some(d) => format!("finish_reason {reason}: {d}"),
                                None => format!("finish_reason {reason}"),
                            },
                        });
                    }
                    other => {
                        if other == "MAX_TOKENS" {
                            out.push(Fact::Finding {
                                kind: FindingKind::AbnormalFinish,
                                key: None,
                                message: "finish_reason MAX_TOKENS".into(),
                            });
                        }
                        out.push(Fact::Finish { reason });
                    }
                }
            }
            "error" => out.push(Fact::ProviderError {
                message: error_message(data),
            }),
            _ => {}
        }
    }

    /// The call an event's `index` names. A start at an index whose call ended opens the next call
    /// there; an event without an index goes to the most recent call (and says so).
    fn key(&mut self, index: Option<&RawValue>, start: bool, out: &mut Vec<Fact>) -> CallKey {
        let stated = parse_index(index);
        let Ok(Some(index)) = stated else {
            let key = self.latest.clone().unwrap_or(CallKey::Index {
                choice: 0,
                index: 0,
                generation: 0,
            });
            let (kind, what) = match stated {
                Err(bad) => (FindingKind::InvalidIndex, format!("invalid index {bad}")),
                Ok(_) => (FindingKind::MissingIndex, "no index".to_owned()),
            };
            out.push(Fact::Finding {
                kind,
                key: Some(key.clone()),
                message: format!("{what}; routed to {key}"),
            });
            self.latest = Some(key.clone());
            return key;
        };
        let slot = self.generations.entry(index).or_insert((0, false));
        if start && slot.1 {
            *slot = (slot.0 + 1, false);
        }
        let key = CallKey::Index {
            choice: 0,
            index,
            generation: slot.0,
        };
        self.latest = Some(key.clone());
        key
    }
}

/// The one tool call in `delta.message.tool_calls` (an object; the first element of a list).
fn tool_call(raw: Option<&RawValue>) -> ToolCall {
    let Some(raw) = raw else {
        return ToolCall::default();
    };
    if raw.get().trim_start().starts_with('[') {
        serde_json::from_str::<Vec<ToolCall>>(raw.get())
            .ok()
            .and_then(|v| v.into_iter().next())
            .unwrap_or_default()
    } else {
        serde_json::from_str(raw.get()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::ArgsPiece;

    fn run(events: &[(&str, &str)]) -> Vec<Fact> {
        let mut d = Cohere::default();
        let mut out = Vec::new();
        for (t, data) in events {
            d.on_event(t, data, &mut out);
        }
        out
    }

    #[test]
    fn a_call_in_start_delta_end() {
        let s = run(&[
            (
                "message",
                r#"{"type":"message-start","delta":{"message":{"role":"assistant"}}}"#,
            ),
            (
                "message",
                r#"{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I"}}}"#,
            ),
            (
                "tool-call-start",
                r#"{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"w_1","type":"function","function":{"name":"weather","arguments":""}}}}}"#,
            ),
            (
                "tool-call-delta",
                r#"{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\"a\":1}"}}}}}"#,
            ),
            ("tool-call-end", r#"{"type":"tool-call-end","index":0}"#),
            (
                "message-end",
                r#"{"type":"message-end","delta":{"finish_reason":"TOOL_CALL"}}"#,
            ),
        ]);
        let frags: Vec<&Fragment> = s
            .iter()
            .filter_map(|s| match s {
                Fact::Fragment(f) => Some(f),
                _ => None,
            })
            .collect();
        assert_eq!(frags.len(), 2);
        assert_eq!(frags[0].id, Raw::Value("w_1".into()));
        assert_eq!(frags[0].name, Raw::Value("weather".into()));
        assert_eq!(
            frags[1].args,
            Raw::Value(ArgsPiece::Text("{\"a\":1}".into()))
        );
        assert!(s.iter().any(|s| matches!(s, Fact::CallDone { .. })));
        assert!(matches!(s.last(), Some(Fact::Finish { reason }) if reason == "TOOL_CALL"));
    }

    #[test]
    fn a_second_start_at_an_ended_index_is_a_new_call() {
        let start = r#"{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"x","function":{"name":"f","arguments":"{}"}}}}}"#;
        let s = run(&[
            ("message", start),
            ("message", r#"{"type":"tool-call-end","index":0}"#),
            ("message", start),
        ]);
        let gens: Vec<u32> = s
            .iter()
            .filter_map(|s| match s {
                Fact::Fragment(Fragment {
                    key: CallKey::Index { generation, .. },
                    ..
                }) => Some(*generation),
                _ => None,
            })
            .collect();
        assert_eq!(gens, [0, 1]);
    }

    #[test]
    fn error_finish_is_a_provider_error() {
        let s = run(&[(
            "message",
            r#"{"type":"message-end","delta":{"finish_reason":"ERROR","error":"internal"}}"#,
        )]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "finish_reason ERROR: internal".into()
            }]
        );
    }
}
