//! OpenAI Chat Completions streaming: `choices[].delta.tool_calls[]`
//! `{index, id, type, function: {name, arguments}}`, finished by `finish_reason`, `data: [DONE]` or the
//! end of the stream. Handles every routing quirk of OpenAI-compatible servers (see the README).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{FieldArgs, FieldStr, FxHashMap, error_message, parse_index};
use crate::fact::{CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;
use crate::text::truncate;

#[derive(Deserialize)]
struct ChatChunk<'a> {
    #[serde(default, borrow)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    /// Some servers send the whole message instead of a delta.
    #[serde(default, borrow)]
    message: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(default, borrow)]
    index: Option<&'a RawValue>,
    #[serde(default)]
    id: FieldStr,
    #[serde(default)]
    function: Option<Function>,
    /// `"function"`, `"custom"`, or a type this decoder does not know.
    #[serde(default, borrow, rename = "type")]
    kind: Option<std::borrow::Cow<'a, str>>,
    /// A custom (free-form text) tool's call: `{name, input}`.
    #[serde(default)]
    custom: Option<Custom>,
}

#[derive(Deserialize)]
struct Custom {
    #[serde(default)]
    name: FieldStr,
    #[serde(default)]
    input: FieldArgs,
}

#[derive(Deserialize)]
struct Function {
    #[serde(default)]
    name: FieldStr,
    #[serde(default)]
    arguments: FieldArgs,
}

#[derive(Debug, Default)]
struct SlotState {
    generation: u32,
    id: Option<String>,
}

/// Decoder state: the routing table (which call each `(choice, index)` currently means).
#[derive(Debug, Default)]
pub struct OpenAiChat {
    slots: FxHashMap<(u32, u64), SlotState>,
    by_id: HashMap<String, CallKey>,
    /// The most recent call per choice, for fragments without index and id.
    latest: FxHashMap<u32, CallKey>,
    /// Next index to give a call that arrived with neither index nor known id.
    next_free: FxHashMap<u32, u64>,
    seen_index: bool,
    done: bool,
}

impl OpenAiChat {
    /// Decode one event.
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        if event_type == "error" {
            out.push(Fact::ProviderError {
                message: error_message(data),
            });
            return;
        }
        let trimmed = data.trim();
        if trimmed == "[DONE]" {
            self.done = true;
            out.push(Fact::Done);
            return;
        }
        if event_type == "ping" {
            out.push(Fact::Finding {
                kind: FindingKind::PingEvent,
                key: None,
                message: "ping event".into(),
            });
            return;
        }
        if !trimmed.starts_with('{') {
            out.push(Fact::Finding {
                kind: FindingKind::NonJsonData,
                key: None,
                message: format!("data is not JSON: {}", truncate(trimmed, 80)),
            });
            return;
        }
        let chunk: ChatChunk<'_> = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                let kind = if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() {
                    FindingKind::UnexpectedShape
                } else {
                    FindingKind::NonJsonData
                };
                out.push(Fact::Finding {
                    kind,
                    key: None,
                    message: format!("{e}: {}", truncate(trimmed, 80)),
                });
                return;
            }
        };
        if let Some(err) = chunk.error
            && err.get() != "null"
        {
            out.push(Fact::ProviderError {
                message: error_message(data),
            });
            return;
        }
        let Some(choices) = chunk.choices else { return };
        if choices.is_empty() {
            out.push(Fact::Finding {
                kind: FindingKind::EmptyChoices,
                key: None,
                message: "chunk with choices: [] (usage chunk)".into(),
            });
            return;
        }
        for choice in choices {
            let choice_index = match parse_index(choice.index) {
                Ok(i) => u32::try_from(i.unwrap_or(0)).unwrap_or(u32::MAX),
                Err(_) => 0,
            };
            let delta = choice.delta.or(choice.message);
            let mut had_calls = false;
            if let Some(calls) = delta.and_then(|d| d.tool_calls) {
                for tc in calls {
                    had_calls = true;
                    self.tool_call(choice_index, tc, out);
                }
            }
            if let Some(reason) = choice.finish_reason {
                if had_calls {
                    out.push(Fact::Finding {
                        kind: FindingKind::FinishInSameChunk,
                        key: self.latest.get(&choice_index).cloned(),
                        message: format!(
                            "finish_reason \"{reason}\" in the same chunk as tool-call data"
                        ),
                    });
                }
                out.push(Fact::Finish {
                    reason: reason.into_owned(),
                });
            }
        }
    }

    fn tool_call(&mut self, choice: u32, tc: ToolCallDelta<'_>, out: &mut Vec<Fact>) {
        let id = tc.id.0;
        let custom = tc.function.is_none() && tc.custom.is_some();
        // A type that is neither a function nor a custom tool, carrying neither: still a call
        // (never dropped), named in a finding.
        let unknown = tc
            .kind
            .filter(|k| !matches!(k.as_ref(), "function" | "custom"))
            .filter(|_| tc.function.is_none() && tc.custom.is_none());
        let (name, args) = match (tc.function, tc.custom) {
            (Some(f), _) => (f.name.0, f.arguments.0),
            (None, Some(c)) => (c.name.0, c.input.0),
            (None, None) => (Raw::Absent, Raw::Absent),
        };
        let (stated_index, invalid) = match parse_index(tc.index) {
            Ok(i) => (i, None),
            Err(bad) => (None, Some(bad)),
        };
        let key = match stated_index {
            Some(index) => self.route_indexed(choice, index, &id, &name, out),
            None => {
                let key = self.route_unindexed(choice, &id, out);
                let (kind, message) = match invalid {
                    Some(bad) => (
                        FindingKind::InvalidIndex,
                        format!("invalid index {bad}; routed to {key}"),
                    ),
                    None => (
                        FindingKind::MissingIndex,
                        format!("no index; routed to {key}"),
                    ),
                };
                out.push(Fact::Finding {
                    kind,
                    key: Some(key.clone()),
                    message,
                });
                key
            }
        };
        if let Some(id) = id.non_empty() {
            self.by_id
                .entry(id.to_owned())
                .or_insert_with(|| key.clone());
        }
        self.latest.insert(choice, key.clone());
        out.push(Fact::Fragment(Fragment {
            key: key.clone(),
            stated_index,
            id,
            name,
            args,
        }));
        if custom {
            // A custom tool's input is free-form text, never parsed as JSON.
            out.push(Fact::CallKind {
                key,
                kind: "custom".into(),
                text: true,
            });
        } else if let Some(k) = unknown {
            out.push(Fact::Finding {
                kind: FindingKind::UnknownCallItem,
                key: Some(key),
                message: format!(
                    "tool call type {} is not one sse-replay models; kept as a call",
                    crate::text::quoted(&k)
                ),
            });
        }
    }

    fn route_indexed(
        &mut self,
        choice: u32,
        index: u64,
        id: &Raw<String>,
        name: &Raw<String>,
        out: &mut Vec<Fact>,
    ) -> CallKey {
        let first_ever = !self.seen_index;
        self.seen_index = true;
        let known = self.slots.len();
        let next_free = self.next_free.entry(choice).or_insert(0);
        let slot = match self.slots.get_mut(&(choice, index)) {
            Some(slot) => slot,
            None => {
                let key = CallKey::Index {
                    choice,
                    index,
                    generation: 0,
                };
                if first_ever && index != 0 {
                    out.push(Fact::Finding {
                        kind: FindingKind::IndexNotFromZero,
                        key: Some(key.clone()),
                        message: format!("first tool call has index {index}"),
                    });
                } else if !first_ever && index > *next_free && known > 0 {
                    out.push(Fact::Finding {
                        kind: FindingKind::SparseIndex,
                        key: Some(key.clone()),
                        message: format!("index {index} skips {next_free}"),
                    });
                }
                *next_free = (*next_free).max(index.saturating_add(1));
                self.slots.insert(
                    (choice, index),
                    SlotState {
                        generation: 0,
                        id: id.non_empty().map(str::to_owned),
                    },
                );
                return key;
            }
        };
        let old = slot.id.clone();
        if let (Some(new_id), Some(old_id)) = (id.non_empty(), old.as_deref()) {
            if new_id != old_id {
                if name.non_empty().is_some() {
                    slot.generation += 1;
                    slot.id = Some(new_id.to_owned());
                    let key = CallKey::Index {
                        choice,
                        index,
                        generation: slot.generation,
                    };
                    out.push(Fact::Finding {
                        kind: FindingKind::ReusedIndexNewCall,
                        key: Some(key.clone()),
                        message: format!("new id {new_id} with a name at index {index} (was {old_id}): a new call"),
                    });
                    return key;
                }
                let key = CallKey::Index {
                    choice,
                    index,
                    generation: slot.generation,
                };
                out.push(Fact::Finding {
                    kind: FindingKind::FreshIdContinuation,
                    key: Some(key.clone()),
                    message: format!("id {new_id} without a name at index {index} (call id {old_id}): a continuation"),
                });
                return key;
            }
        } else if slot.id.is_none() {
            slot.id = id.non_empty().map(str::to_owned);
        }
        CallKey::Index {
            choice,
            index,
            generation: slot.generation,
        }
    }

    fn route_unindexed(&mut self, choice: u32, id: &Raw<String>, _out: &mut Vec<Fact>) -> CallKey {
        if let Some(id) = id.non_empty() {
            if let Some(key) = self.by_id.get(id) {
                return key.clone();
            }
            // A new call: give it the next free index of this choice.
            let next = self.next_free.entry(choice).or_insert(0);
            let index = *next;
            *next += 1;
            self.slots.insert(
                (choice, index),
                SlotState {
                    generation: 0,
                    id: Some(id.to_owned()),
                },
            );
            return CallKey::Index {
                choice,
                index,
                generation: 0,
            };
        }
        if let Some(key) = self.latest.get(&choice) {
            return key.clone();
        }
        let next = self.next_free.entry(choice).or_insert(0);
        let index = *next;
        *next += 1;
        self.slots.insert((choice, index), SlotState::default());
        CallKey::Index {
            choice,
            index,
            generation: 0,
        }
    }
}

#[cfg(test)]
mod custom_tests {
    use super::*;

    #[test]
    fn a_custom_tool_call_is_text_and_an_unknown_type_is_named() {
        let mut d = OpenAiChat::default();
        let mut out = Vec::new();
        for data in [
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"custom","custom":{"name":"sql","input":"SELECT "}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":"1"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"teleport"}]}}]}"#,
        ] {
            d.on_event("message", data, &mut out);
        }
        let texts: Vec<&str> = out
            .iter()
            .filter_map(|s| match s {
                Fact::Fragment(f) => f.args.value().map(|a| a.text()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["SELECT ", "1"]);
        assert!(
            out.iter()
                .any(|s| matches!(s, Fact::CallKind { kind, text: true, .. } if kind == "custom"))
        );
        assert!(out.iter().any(|s| matches!(
            s,
            Fact::Finding {
                kind: FindingKind::UnknownCallItem,
                ..
            }
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::ArgsPiece;

    fn run(lines: &[&str]) -> Vec<Fact> {
        let mut d = OpenAiChat::default();
        let mut out = Vec::new();
        for l in lines {
            d.on_event("message", l, &mut out);
        }
        out
    }

    fn frags(s: &[Fact]) -> Vec<&Fragment> {
        s.iter()
            .filter_map(|s| {
                if let Fact::Fragment(f) = s {
                    Some(f)
                } else {
                    None
                }
            })
            .collect()
    }

    #[test]
    fn reused_index_with_new_id_and_name_is_a_new_call() {
        let s = run(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":""}}]}}]}"#,
        ]);
        let f = frags(&s);
        assert_ne!(f[0].key, f[1].key);
        assert_eq!(f[1].key, f[2].key, "a new id without a name continues");
    }

    #[test]
    fn missing_index_routes_by_id_then_latest() {
        let s = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
        ]);
        let f = frags(&s);
        assert_eq!(f[0].key, f[1].key);
        assert_ne!(f[0].key, f[2].key);
        assert!(s.iter().any(|s| matches!(
            s,
            Fact::Finding {
                kind: FindingKind::MissingIndex,
                ..
            }
        )));
    }

    #[test]
    fn object_arguments_and_nulls() {
        let s = run(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":null,"function":{"name":null,"arguments":{"a":1}}}]}}]}"#,
        ]);
        let f = frags(&s);
        assert_eq!(f[0].id, Raw::Null);
        assert_eq!(
            f[0].args,
            Raw::Value(ArgsPiece::Object(r#"{"a":1}"#.into()))
        );
    }

    #[test]
    fn errors_and_sentinels_never_panic() {
        let s = run(&[
            "[DONE]",
            ": keepalive",
            r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
            "{",
            r#"{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1e400}]}}]}"#,
        ]);
        assert!(matches!(s[0], Fact::Done));
        assert!(s.iter().any(
            |s| matches!(s, Fact::ProviderError { message } if message.contains("overloaded"))
        ));
    }
}
