//! Anthropic Messages streaming: `content_block_start` (type `tool_use`: id, name, placeholder
//! `input: {}`), `content_block_delta` with `input_json_delta.partial_json`, `content_block_stop`,
//! `message_delta` (stop_reason), `message_stop`, interleaved `ping`, and `event: error`.
//! Calls are keyed by content-block index, shared with text blocks (so tool calls often start at 1).
//! `server_tool_use` and `mcp_tool_use` blocks (ids `srvtoolu_…`, `mcptoolu_…`) stream the same
//! way but are run by the provider: they are accumulated like any call and marked as server tools.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{error_message, raw_string, undecodable};
use crate::fact::{ArgsPiece, CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;

#[derive(Deserialize)]
struct Ev<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    content_block: Option<Block<'a>>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default, borrow, deserialize_with = "super::present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "super::present")]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default, borrow)]
    partial_json: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    stop_reason: Option<std::borrow::Cow<'a, str>>,
}

/// How a content block type is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockClass {
    /// `tool_use`: a call the client executes.
    Client,
    /// `server_tool_use`, `mcp_tool_use`: run by the provider.
    Server,
    /// Another `*_tool_use` type: read as a client call (its input streams the same way) and
    /// named in an `unknown-call-item` finding, never dropped.
    Unknown,
    /// Not a call (text, thinking, a tool's result…).
    Other,
}

/// The class of a content block type.
pub fn classify(kind: &str) -> BlockClass {
    match kind {
        "tool_use" => BlockClass::Client,
        "server_tool_use" | "mcp_tool_use" => BlockClass::Server,
        k if k.ends_with("_tool_use") => BlockClass::Unknown,
        _ => BlockClass::Other,
    }
}

/// Decoder state: which content blocks are tool calls.
#[derive(Debug, Default)]
pub struct Anthropic {
    tool_blocks: HashSet<u64>,
}

impl Anthropic {
    /// Decode one event (SSE `event:` name, or the JSON `type` when framed as JSON lines).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        if event_type == "error" {
            out.push(Fact::ProviderError {
                message: error_message(data),
            });
            return;
        }
        let ev: Ev<'_> = match serde_json::from_str(data) {
            Ok(ev) => ev,
            Err(e) => {
                out.push(undecodable(data, &e));
                return;
            }
        };
        let kind = ev.kind.unwrap_or(event_type);
        match kind {
            "ping" => out.push(Fact::Finding {
                kind: FindingKind::PingEvent,
                key: None,
                message: "ping event".into(),
            }),
            "error" => out.push(Fact::ProviderError {
                message: error_message(data),
            }),
            "content_block_start" => {
                let (Some(index), Some(block)) = (ev.index, ev.content_block) else {
                    return;
                };
                let kind = block.kind.unwrap_or("");
                let class = classify(kind);
                if class == BlockClass::Other {
                    return;
                }
                self.tool_blocks.insert(index);
                // The `input: {}` placeholder is not part of the arguments; a non-empty input object
                // (some gateways send the whole input here) is.
                let args = match block.input.map(RawValue::get) {
                    Some(t)
                        if t != "{}"
                            && t != "null"
                            && !t.chars().all(|c| c.is_whitespace() || c == '{' || c == '}') =>
                    {
                        Raw::Value(ArgsPiece::Object(t.to_owned()))
                    }
                    _ => Raw::Absent,
                };
                out.push(Fact::Fragment(Fragment {
                    key: CallKey::Block(index),
                    stated_index: Some(index),
                    id: raw_string(block.id),
                    name: raw_string(block.name),
                    args,
                }));
                match class {
                    // Web search, code execution, tool search, MCP: run by the provider, apart.
                    BlockClass::Server => out.push(Fact::ServerTool {
                        key: CallKey::Block(index),
                        kind: kind.to_owned(),
                    }),
                    BlockClass::Unknown => {
                        out.push(Fact::CallKind {
                            key: CallKey::Block(index),
                            kind: kind.to_owned(),
                            text: false,
                        });
                        out.push(Fact::Finding {
                            kind: FindingKind::UnknownCallItem,
                            key: Some(CallKey::Block(index)),
                            message: format!(
                                "content block type {kind} is not one sse-replay models; read as a call the client executes"
                            ),
                        });
                    }
                    BlockClass::Client | BlockClass::Other => {}
                }
            }
            "content_block_delta" => {
                let (Some(index), Some(delta)) = (ev.index, ev.delta) else {
                    return;
                };
                if delta.kind != Some("input_json_delta") {
                    return;
                }
                if !self.tool_blocks.contains(&index) {
                    out.push(Fact::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: Some(CallKey::Block(index)),
                        message: format!(
                            "input_json_delta for block {index}, which did not start as tool_use"
                        ),
                    });
                }
                out.push(Fact::Fragment(Fragment {
                    key: CallKey::Block(index),
                    stated_index: Some(index),
                    id: Raw::Absent,
                    name: Raw::Absent,
                    args: match delta.partial_json {
                        Some(p) => Raw::Value(ArgsPiece::Text(p.into_owned())),
                        None => Raw::Absent,
                    },
                }));
            }
            "content_block_stop" => {
                if let Some(index) = ev.index.filter(|i| self.tool_blocks.contains(i)) {
                    out.push(Fact::CallDone {
                        key: CallKey::Block(index),
                    });
                }
            }
            "message_delta" => {
                if let Some(reason) = ev.delta.and_then(|d| d.stop_reason) {
                    // `max_tokens` cuts the last tool_use block short; `refusal` and a full context
                    // window end the turn before the model meant to.
                    if matches!(
                        reason.as_ref(),
                        "max_tokens" | "refusal" | "model_context_window_exceeded"
                    ) {
                        out.push(Fact::Finding {
                            kind: FindingKind::AbnormalFinish,
                            key: None,
                            message: format!("stop_reason \"{reason}\""),
                        });
                    }
                    out.push(Fact::Finish {
                        reason: reason.into_owned(),
                    });
                }
            }
            "message_stop" => out.push(Fact::Finish {
                reason: "message_stop".into(),
            }),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: &[(&str, &str)]) -> Vec<Fact> {
        let mut d = Anthropic::default();
        let mut out = Vec::new();
        for (t, data) in events {
            d.on_event(t, data, &mut out);
        }
        out
    }

    #[test]
    fn text_block_shares_the_index_space() {
        let s = run(&[
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":1}"#,
            ),
        ]);
        let keys: Vec<&CallKey> = s
            .iter()
            .filter_map(|s| {
                if let Fact::Fragment(f) = s {
                    Some(&f.key)
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(keys, vec![&CallKey::Block(1), &CallKey::Block(1)]);
        assert!(matches!(
            s.last(),
            Some(Fact::CallDone {
                key: CallKey::Block(1)
            })
        ));
    }

    #[test]
    fn overloaded_error_and_max_tokens() {
        let s = run(&[(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "overloaded_error: Overloaded".into()
            }]
        );
        let s = run(&[(
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}"#,
        )]);
        assert!(matches!(
            &s[0],
            Fact::Finding {
                kind: FindingKind::AbnormalFinish,
                ..
            }
        ));
        assert!(matches!(&s[1], Fact::Finish { reason } if reason == "max_tokens"));
    }

    #[test]
    fn bad_index_is_an_unexpected_shape() {
        let s = run(&[(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":-1,"delta":{}}"#,
        )]);
        assert!(matches!(
            &s[0],
            Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                ..
            }
        ));
    }
}
