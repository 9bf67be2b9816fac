//! The Vercel AI SDK UI message stream (`toUIMessageStreamResponse()`, protocol v1: SSE
//! `data: {"type": …}` lines ending with `data: [DONE]`, header `x-vercel-ai-ui-message-stream`),
//! and the same chunks kept as a JSON array or JSON lines by test suites. A call opens with
//! `tool-input-start` (`toolCallId`, `toolName`), streams its input as text in `tool-input-delta`
//! (`inputTextDelta`), and is confirmed whole by `tool-input-available` (`input`, a parsed
//! value): the stream's own original, compared by value with the reassembled text (an
//! `arguments-mismatch` when they differ). A call that did not stream its input comes whole in
//! `tool-input-available`. `tool-output-available` / `tool-output-error` mean the tool ran, so its
//! input was complete. `providerExecuted` calls are server tools. `finish` ends the message,
//! `error` (`errorText`) is a provider error, `abort` an abnormal end.
//!
//! A `tool-input-available` under an id that never streamed, while a streamed call of the same tool
//! is still open, confirms that call (`id-mismatch`, a warning): adapters that mint their own ids
//! for approval requests do this, and a client keyed by id sees two calls.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::undecodable;
use crate::fact::{ArgsPiece, CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;

/// The chunk types an AI SDK UI message stream is recognised by (the generic `start`, `finish`,
/// `error` and `abort` are not enough on their own).
pub const DECISIVE_TYPES: &[&str] = &[
    "tool-input-start",
    "tool-input-delta",
    "tool-input-available",
    "tool-input-error",
    "tool-output-available",
    "tool-output-error",
    "tool-approval-request",
    "start-step",
    "finish-step",
    "text-start",
    "text-delta",
    "text-end",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
];

/// A chunk `type` that names the AI SDK UI message stream.
pub fn looks_like_ai_sdk_chunk(kind: &str) -> bool {
    DECISIVE_TYPES.contains(&kind)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default, borrow)]
    tool_call_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_name: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    input_text_delta: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    #[serde(default)]
    provider_executed: Option<bool>,
    #[serde(default, borrow)]
    error_text: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

/// What the decoder keeps per call.
#[derive(Debug, Default)]
struct CallState {
    name: String,
    /// The input text streamed so far (to compare with `tool-input-available` by value).
    streamed: String,
    deltas: usize,
    /// `tool-input-available` (or an output) came: the input is complete.
    done: bool,
}

/// Decoder state: the calls by `toolCallId`, in the order they opened.
#[derive(Debug, Default)]
pub struct AiSdk {
    calls: HashMap<String, CallState>,
    order: Vec<String>,
}

impl AiSdk {
    /// Decode one event (SSE data, a JSON-lines line or a JSON array element).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        if data.trim() == "[DONE]" {
            out.push(Fact::Done);
            return;
        }
        let c: Chunk<'_> = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                out.push(undecodable(data, &e));
                return;
            }
        };
        let kind = c.kind.unwrap_or(event_type);
        let id = c.tool_call_id.as_deref().map(str::to_owned);
        match (kind, id) {
            ("tool-input-start", Some(id)) => {
                let key = CallKey::Item(id.clone());
                let state = self.open(&id);
                state.name = c.tool_name.as_deref().unwrap_or("").to_owned();
                out.push(Fact::Fragment(Fragment {
                    key: key.clone(),
                    stated_index: None,
                    id: Raw::Value(id),
                    name: c
                        .tool_name
                        .map_or(Raw::Absent, |n| Raw::Value(n.into_owned())),
                    args: Raw::Absent,
                }));
                if c.provider_executed == Some(true) {
                    out.push(Fact::ServerTool {
                        key,
                        kind: "provider-executed".into(),
                    });
                }
            }
            ("tool-input-delta", Some(id)) => {
                let known = self.calls.contains_key(&id);
                let state = self.open(&id);
                let piece = c.input_text_delta.map(|d| d.into_owned());
                if let Some(p) = &piece {
                    state.streamed.push_str(p);
                    state.deltas += 1;
                }
                let key = CallKey::Item(id);
                out.push(Fact::Fragment(Fragment {
                    key: key.clone(),
                    stated_index: None,
                    id: Raw::Absent,
                    name: Raw::Absent,
                    args: piece.map_or(Raw::Absent, |p| Raw::Value(ArgsPiece::Text(p))),
                }));
                if !known {
                    out.push(Fact::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: Some(key),
                        message: "tool-input-delta for a call no tool-input-start opened (no name)"
                            .into(),
                    });
                }
            }
            ("tool-input-available" | "tool-input-error", Some(id)) => {
                self.available(&c, id, kind == "tool-input-error", out);
            }
            ("tool-output-available" | "tool-output-error", Some(id)) => {
                if let Some(state) = self.calls.get_mut(&id) {
                    state.done = true;
                    out.push(Fact::CallDone {
                        key: CallKey::Item(id),
                    });
                }
            }
            ("finish", _) => out.push(Fact::Finish {
                reason: c
                    .finish_reason
                    .map_or_else(|| "finish".to_owned(), |r| r.into_owned()),
            }),
            ("abort", _) => {
                out.push(Fact::Finding {
                    kind: FindingKind::AbnormalFinish,
                    key: None,
                    message: "the stream was aborted (abort chunk)".into(),
                });
                out.push(Fact::Finish {
                    reason: "abort".into(),
                });
            }
            ("error", _) => out.push(Fact::ProviderError {
                message: c
                    .error_text
                    .map_or_else(|| super::error_message(data), |t| t.into_owned()),
            }),
            (k, None) if k.starts_with("tool-input-") || k.starts_with("tool-output-") => {
                out.push(Fact::Finding {
                    kind: FindingKind::UnexpectedShape,
                    key: None,
                    message: format!("{k} without a toolCallId"),
                });
            }
            _ => {}
        }
    }

    fn open(&mut self, id: &str) -> &mut CallState {
        if !self.calls.contains_key(id) {
            self.order.push(id.to_owned());
        }
        self.calls.entry(id.to_owned()).or_default()
    }

    /// `tool-input-available` (or `tool-input-error`): the call's whole input.
    fn available(&mut self, c: &Chunk<'_>, id: String, error: bool, out: &mut Vec<Fact>) {
        let input = c.input.map(RawValue::get).filter(|t| *t != "null");
        let value = input.and_then(|t| serde_json::from_str::<Value>(t).ok());
        // Under an id that never streamed, while a streamed call of the same tool is open: that
        // call, confirmed under another id.
        let target = if self.calls.contains_key(&id) {
            id.clone()
        } else {
            let name = c.tool_name.as_deref().unwrap_or("");
            match self.order.iter().find(|k| {
                self.calls
                    .get(*k)
                    .is_some_and(|s| !s.done && s.deltas > 0 && s.name == name)
            }) {
                Some(streamed) => {
                    out.push(Fact::Finding {
                        kind: FindingKind::IdMismatch,
                        key: Some(CallKey::Item(streamed.clone())),
                        message: format!(
                            "tool-input-available names call {streamed} ({name}) with id {id}; kept the streamed call"
                        ),
                    });
                    streamed.clone()
                }
                None => id.clone(),
            }
        };
        let key = CallKey::Item(target.clone());
        let opened = self.calls.contains_key(&target);
        let state = self.open(&target);
        state.done = true;
        if !opened {
            // A call whose input did not stream: whole in this chunk.
            state.name = c.tool_name.as_deref().unwrap_or("").to_owned();
            out.push(Fact::Fragment(Fragment {
                key: key.clone(),
                stated_index: None,
                id: Raw::Value(target.clone()),
                name: c
                    .tool_name
                    .as_deref()
                    .map_or(Raw::Absent, |n| Raw::Value(n.to_owned())),
                args: Raw::Absent,
            }));
            if c.provider_executed == Some(true) {
                out.push(Fact::ServerTool {
                    key: key.clone(),
                    kind: "provider-executed".into(),
                });
            }
        }
        if state.deltas == 0 {
            if let Some(t) = input {
                let piece = match &value {
                    Some(Value::String(s)) => ArgsPiece::Text(s.clone()),
                    Some(v) => ArgsPiece::Object(v.to_string()),
                    None => ArgsPiece::Text(t.to_owned()),
                };
                out.push(Fact::Fragment(Fragment {
                    key: key.clone(),
                    stated_index: None,
                    id: Raw::Absent,
                    name: Raw::Absent,
                    args: Raw::Value(piece),
                }));
            }
        } else if let Some(v) = &value {
            // The original for checkpoint ①: the streamed text when it means the same value (no
            // text at all means `{}`, as an empty arguments string does everywhere).
            let same = if state.streamed.trim().is_empty() {
                v.as_object().is_some_and(serde_json::Map::is_empty)
            } else {
                serde_json::from_str::<Value>(&state.streamed).is_ok_and(|s| &s == v)
            };
            out.push(Fact::Authoritative {
                key: key.clone(),
                arguments: if same {
                    state.streamed.clone()
                } else {
                    v.to_string()
                },
            });
        }
        if error {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: Some(key.clone()),
                message: format!(
                    "tool-input-error: {}",
                    crate::text::truncate(c.error_text.as_deref().unwrap_or("(no errorText)"), 160)
                ),
            });
        }
        out.push(Fact::CallDone { key });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<Fact> {
        let mut d = AiSdk::default();
        let mut out = Vec::new();
        for l in lines {
            d.on_event("message", l, &mut out);
        }
        out
    }

    #[test]
    fn streamed_input_confirmed_by_available() {
        let s = run(&[
            r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}"#,
            r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"a\":"}"#,
            r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":" 1}"}"#,
            r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{"a":1}}"#,
            r#"{"type":"finish"}"#,
            "[DONE]",
        ]);
        assert!(s.contains(&Fact::Authoritative {
            key: CallKey::Item("c1".into()),
            arguments: "{\"a\": 1}".into()
        }));
        assert_eq!(s.last(), Some(&Fact::Done));
    }

    #[test]
    fn available_under_another_id_confirms_the_streamed_call() {
        let s = run(&[
            r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}"#,
            r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{}"}"#,
            r#"{"type":"tool-input-available","toolCallId":"other","toolName":"f","input":{}}"#,
        ]);
        assert!(s.iter().any(|s| matches!(
            s,
            Fact::Finding {
                kind: FindingKind::IdMismatch,
                ..
            }
        )));
        assert!(s.contains(&Fact::CallDone {
            key: CallKey::Item("c1".into())
        }));
        let opened: Vec<&CallKey> = s
            .iter()
            .filter_map(|s| match s {
                Fact::Fragment(f) => Some(&f.key),
                _ => None,
            })
            .collect();
        assert!(opened.iter().all(|k| **k == CallKey::Item("c1".into())));
    }

    #[test]
    fn whole_call_without_deltas() {
        let s = run(&[
            r#"{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}"#,
            r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{"x":"y"}}"#,
        ]);
        assert!(s.iter().any(|s| matches!(
            s,
            Fact::Fragment(Fragment { args: Raw::Value(ArgsPiece::Object(t)), .. }) if t == "{\"x\":\"y\"}"
        )));
    }
}
