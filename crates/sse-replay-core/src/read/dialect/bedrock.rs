//! AWS Bedrock ConverseStream: `messageStart`, `contentBlockStart` (a `start.toolUse` with
//! `toolUseId` and `name`), `contentBlockDelta` (`delta.toolUse.input`, a string fragment of the
//! arguments; `delta.text`, `delta.reasoningContent`, `delta.citation` and `delta.toolResult`
//! beside it are not calls), `contentBlockStop`, `messageStop` (`stopReason`) and `metadata`
//! (usage). Calls are keyed by `contentBlockIndex`, which text and reasoning blocks share (so a
//! call often sits at 1 or later). Every payload AWS sends carries a random-length `p` padding
//! field: it is ignored like any field this dialect does not read.
//!
//! The same events arrive in three shapes, all read here:
//! - binary AWS event stream frames: the event name is the `:event-type` header and the payload
//!   is the event's own object (`{"contentBlockIndex": 1, "delta": …}`);
//! - decoded, as the AWS SDKs hand them to code and test suites store them (JSON lines, SSE, a
//!   JSON array): one object per event keyed by the event name (`{"contentBlockDelta": {…}}`);
//! - a `type` naming the event, with the event's fields beside it or under that name.
//!
//! An exception frame (`throttlingException`, `modelStreamErrorException`, `validationException`…)
//! reaches the dialect as an `error` event (see [`crate::framing::AwsFramer`]); in decoded form it
//! is an object keyed by the exception's name. Both are provider errors. A `toolUse` start whose
//! `type` is `server_tool_use` (Nova's `nova_code_interpreter`) is run by the provider: it is
//! accumulated like any call and marked as a server tool; a `toolResult` block is the provider's
//! answer to it, never a call.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{error_message, undecodable};
use crate::fact::{ArgsPiece, CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;
use crate::text::truncate;

/// The ConverseStream event names (the `:event-type` header, or the key of a decoded event).
pub const EVENTS: [&str; 6] = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
];

/// `stopReason`s that end the turn before the model meant to, or cut its last call short.
const ABNORMAL_STOPS: [&str; 6] = [
    "max_tokens",
    "guardrail_intervened",
    "content_filtered",
    "model_context_window_exceeded",
    "malformed_model_output",
    "malformed_tool_use",
];

/// Decoder state: which content blocks are tool calls, and the last one started.
#[derive(Debug, Default)]
pub struct Bedrock {
    tool_blocks: HashSet<u64>,
    last_tool: Option<u64>,
}

impl Bedrock {
    /// Decode one event (a frame's `:event-type` and payload, an SSE event, or a JSON line).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        if event_type == "error" {
            out.push(Fact::ProviderError {
                message: error_message(data),
            });
            return;
        }
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                out.push(undecodable(data, &e));
                return;
            }
        };
        let Some(obj) = v.as_object() else {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: None,
                message: format!("not a JSON object: {}", truncate(data.trim(), 80)),
            });
            return;
        };
        let Some((name, body)) = event_of(event_type, obj) else {
            if let Some((kind, message)) = exception_of(obj) {
                out.push(Fact::ProviderError {
                    message: format!("{kind}: {message}"),
                });
            } else if let Some(name) = EVENTS.iter().find(|e| obj.contains_key(**e)) {
                // Named as one of this dialect's events, but not an object: what it carried
                // cannot be read (an event of no known name is someone else's, and ignored).
                out.push(Fact::Finding {
                    kind: FindingKind::UnexpectedShape,
                    key: None,
                    message: format!("{name} is not an object: {}", truncate(data.trim(), 80)),
                });
            }
            return;
        };
        match name {
            "contentBlockStart" => self.block_start(body, out),
            "contentBlockDelta" => self.block_delta(body, out),
            "contentBlockStop" => {
                if let Ok(Some(index)) = index_of(body)
                    && self.tool_blocks.contains(&index)
                {
                    out.push(Fact::CallDone {
                        key: CallKey::Block(index),
                    });
                }
            }
            "messageStop" => {
                let reason = body
                    .get("stopReason")
                    .and_then(Value::as_str)
                    .unwrap_or("messageStop");
                if ABNORMAL_STOPS.contains(&reason) {
                    out.push(Fact::Finding {
                        kind: FindingKind::AbnormalFinish,
                        key: None,
                        message: format!("stopReason \"{reason}\""),
                    });
                }
                out.push(Fact::Finish {
                    reason: reason.to_owned(),
                });
            }
            // messageStart, metadata: nothing about calls.
            _ => {}
        }
    }

    fn block_start(&mut self, body: &Map<String, Value>, out: &mut Vec<Fact>) {
        let Some(tool) = body
            .get("start")
            .and_then(|s| s.get("toolUse"))
            .and_then(Value::as_object)
        else {
            // A text, reasoning or toolResult block (or `start: {}`): not a call.
            return;
        };
        let Some(index) = self.index(body, out) else {
            return;
        };
        self.tool_blocks.insert(index);
        self.last_tool = Some(index);
        // Some gateways put the whole input in the start; Bedrock itself sends none.
        let args = match tool.get("input") {
            Some(Value::Object(m)) if m.is_empty() => Raw::Absent,
            Some(Value::String(s)) if s.is_empty() => Raw::Absent,
            Some(Value::Null) | None => Raw::Absent,
            Some(Value::String(s)) => Raw::Value(ArgsPiece::Text(s.clone())),
            Some(other) => Raw::Value(ArgsPiece::Object(other.to_string())),
        };
        out.push(Fact::Fragment(Fragment {
            key: CallKey::Block(index),
            stated_index: Some(index),
            id: string_field(tool.get("toolUseId")),
            name: string_field(tool.get("name")),
            args,
        }));
        // `type: server_tool_use` (Nova's code interpreter): run by the provider, reported apart.
        if let Some(kind) = tool.get("type").and_then(Value::as_str)
            && kind != "tool_use"
            && kind.ends_with("tool_use")
        {
            out.push(Fact::ServerTool {
                key: CallKey::Block(index),
                kind: kind.to_owned(),
            });
        }
    }

    fn block_delta(&mut self, body: &Map<String, Value>, out: &mut Vec<Fact>) {
        let Some(tool) = body.get("delta").and_then(|d| d.get("toolUse")) else {
            // text, reasoningContent, citation, toolResult, image: not a call's arguments.
            return;
        };
        let Some(index) = self.index(body, out) else {
            return;
        };
        if !self.tool_blocks.contains(&index) {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: Some(CallKey::Block(index)),
                message: format!(
                    "toolUse delta for block {index}, which did not start with a toolUse"
                ),
            });
        }
        // A string is a fragment (the normal case); an object (some gateways) is kept whole.
        let args = match tool.get("input") {
            None => Raw::Absent,
            Some(Value::Null) => Raw::Null,
            Some(Value::String(s)) => Raw::Value(ArgsPiece::Text(s.clone())),
            Some(other) => Raw::Value(ArgsPiece::Object(other.to_string())),
        };
        out.push(Fact::Fragment(Fragment {
            key: CallKey::Block(index),
            stated_index: Some(index),
            id: Raw::Absent,
            name: Raw::Absent,
            args,
        }));
    }

    /// The event's `contentBlockIndex`; a missing or invalid one is a finding, and the fragment
    /// goes to the last tool block started (the only sensible owner), else block 0.
    fn index(&self, body: &Map<String, Value>, out: &mut Vec<Fact>) -> Option<u64> {
        let fallback = self.last_tool.unwrap_or(0);
        match index_of(body) {
            Ok(Some(i)) => Some(i),
            Ok(None) => {
                out.push(Fact::Finding {
                    kind: FindingKind::MissingIndex,
                    key: Some(CallKey::Block(fallback)),
                    message: format!("no contentBlockIndex; routed to block {fallback}"),
                });
                Some(fallback)
            }
            Err(bad) => {
                out.push(Fact::Finding {
                    kind: FindingKind::InvalidIndex,
                    key: Some(CallKey::Block(fallback)),
                    message: format!("contentBlockIndex {bad}; routed to block {fallback}"),
                });
                Some(fallback)
            }
        }
    }
}

/// The event an object is, and its body: named by the frame (the object is the body), by a
/// `type` field, or by its one key. A body that wraps itself once more under its own name is
/// unwrapped.
fn event_of<'a>(
    event_type: &'a str,
    obj: &'a Map<String, Value>,
) -> Option<(&'a str, &'a Map<String, Value>)> {
    let unwrap = |name: &str, body: &'a Map<String, Value>| -> &'a Map<String, Value> {
        body.get(name).and_then(Value::as_object).unwrap_or(body)
    };
    if let Some(name) = EVENTS.iter().find(|e| **e == event_type) {
        return Some((name, unwrap(name, obj)));
    }
    if let Some(t) = obj.get("type").and_then(Value::as_str)
        && let Some(name) = EVENTS.iter().find(|e| **e == t)
    {
        return Some((name, unwrap(name, obj)));
    }
    EVENTS.iter().find_map(|name| {
        obj.get(*name)
            .and_then(Value::as_object)
            .map(|body| (*name, body))
    })
}

/// A decoded exception event (`{"throttlingException": {"message": "…"}}`): its name and message.
fn exception_of(obj: &Map<String, Value>) -> Option<(&str, String)> {
    let (kind, body) = obj.iter().find(|(k, _)| k.ends_with("Exception"))?;
    let message = match body {
        Value::Object(m) => m
            .get("message")
            .or_else(|| m.get("Message"))
            .and_then(Value::as_str)
            .map_or_else(|| body.to_string(), str::to_owned),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Some((kind, message))
}

fn index_of(body: &Map<String, Value>) -> Result<Option<u64>, String> {
    match body.get("contentBlockIndex") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| truncate(&v.to_string(), 40)),
    }
}

fn string_field(v: Option<&Value>) -> Raw<String> {
    match v {
        None => Raw::Absent,
        Some(Value::Null) => Raw::Null,
        Some(Value::String(s)) => Raw::Value(s.clone()),
        Some(other) => Raw::Value(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: &[(&str, &str)]) -> Vec<Fact> {
        let mut d = Bedrock::default();
        let mut out = Vec::new();
        for (t, data) in events {
            d.on_event(t, data, &mut out);
        }
        out
    }

    /// A fragment's key, id, name and arguments.
    type Seen = (CallKey, Raw<String>, Raw<String>, Raw<ArgsPiece>);

    fn fragments(s: &[Fact]) -> Vec<Seen> {
        s.iter()
            .filter_map(|s| match s {
                Fact::Fragment(f) => {
                    Some((f.key.clone(), f.id.clone(), f.name.clone(), f.args.clone()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn frames_decoded_objects_and_typed_objects_give_the_same_signals() {
        let frames = [
            ("messageStart", r#"{"p":"abcd","role":"assistant"}"#),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"ab"}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":0,"p":"abc"}"#),
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":1,"p":"a","start":{"toolUse":{"name":"f","toolUseId":"tooluse_1"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\":"}},"p":"abcdef"}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"1}"}}}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":1}"#),
            ("messageStop", r#"{"p":"ab","stopReason":"tool_use"}"#),
            ("metadata", r#"{"usage":{"inputTokens":1}}"#),
        ];
        let want = run(&frames);
        let decoded: Vec<(String, String)> = frames
            .iter()
            .map(|(t, d)| ("message".to_owned(), format!("{{\"{t}\":{d}}}")))
            .collect();
        let typed: Vec<(String, String)> = frames
            .iter()
            .map(|(t, d)| {
                (
                    "message".to_owned(),
                    format!("{{\"type\":\"{t}\",{}", &d[1..]),
                )
            })
            .collect();
        for other in [decoded, typed] {
            let ev: Vec<(&str, &str)> = other
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            assert_eq!(run(&ev), want);
        }
        assert_eq!(
            fragments(&want),
            vec![
                (
                    CallKey::Block(1),
                    Raw::Value("tooluse_1".into()),
                    Raw::Value("f".into()),
                    Raw::Absent
                ),
                (
                    CallKey::Block(1),
                    Raw::Absent,
                    Raw::Absent,
                    Raw::Value(ArgsPiece::Text("{\"a\":".into()))
                ),
                (
                    CallKey::Block(1),
                    Raw::Absent,
                    Raw::Absent,
                    Raw::Value(ArgsPiece::Text("1}".into()))
                ),
            ]
        );
        assert!(want.contains(&Fact::CallDone {
            key: CallKey::Block(1)
        }));
        assert_eq!(
            want.last(),
            Some(&Fact::Finish {
                reason: "tool_use".into()
            })
        );
    }

    #[test]
    fn server_tool_use_is_a_server_tool_and_tool_results_are_no_call() {
        let s = run(&[
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":0,"start":{"toolUse":{"name":"nova_code_interpreter","toolUseId":"t0","type":"server_tool_use"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"snippet\":\"1\"}"}}}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":1,"start":{"toolResult":{"status":"success","toolUseId":"t0","type":"nova_code_interpreter_result"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"toolResult":[{"json":{"stdOut":"1"}}]}}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":1}"#),
        ]);
        assert!(s.contains(&Fact::ServerTool {
            key: CallKey::Block(0),
            kind: "server_tool_use".into()
        }));
        assert!(fragments(&s).iter().all(|f| f.0 == CallKey::Block(0)));
        assert!(
            !s.iter().any(|x| matches!(x, Fact::Finding { .. })),
            "{s:?}"
        );
    }

    #[test]
    fn exceptions_are_provider_errors_and_abnormal_stops_are_findings() {
        let s = run(&[(
            "error",
            r#"{"error":{"type":"throttlingException","message":"Too many requests"}}"#,
        )]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "throttlingException: Too many requests".into()
            }]
        );
        let s = run(&[(
            "message",
            r#"{"modelStreamErrorException":{"message":"Model Stream Error","originalStatusCode":500}}"#,
        )]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "modelStreamErrorException: Model Stream Error".into()
            }]
        );
        let s = run(&[("messageStop", r#"{"stopReason":"max_tokens"}"#)]);
        assert!(matches!(
            &s[0],
            Fact::Finding {
                kind: FindingKind::AbnormalFinish,
                ..
            }
        ));
        assert_eq!(
            s[1],
            Fact::Finish {
                reason: "max_tokens".into()
            }
        );
    }

    #[test]
    fn deviations_are_findings() {
        // A toolUse delta for a block that never started, and one without an index.
        let s = run(&[
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{}"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"delta":{"toolUse":{"input":"x"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":-1,"delta":{"toolUse":{"input":"y"}}}"#,
            ),
            ("contentBlockDelta", "not json"),
            ("message", r#"{"contentBlockDelta":"{\"a\":1}"}"#),
        ]);
        let kinds: Vec<FindingKind> = s
            .iter()
            .filter_map(|x| match x {
                Fact::Finding { kind, .. } => Some(*kind),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            [
                FindingKind::UnexpectedShape,
                FindingKind::MissingIndex,
                FindingKind::UnexpectedShape,
                FindingKind::InvalidIndex,
                FindingKind::UnexpectedShape,
                FindingKind::NonJsonData,
                FindingKind::UnexpectedShape
            ]
        );
        // An object input (some gateways) is an object fragment.
        let s = run(&[
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":0,"start":{"toolUse":{"name":"f","toolUseId":"a"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":{"x":1}}}}"#,
            ),
        ]);
        assert_eq!(
            fragments(&s)[1].3,
            Raw::Value(ArgsPiece::Object("{\"x\":1}".into()))
        );
    }
}
