//! OpenAI Assistants v2 run streams (`POST /threads/runs`, `/threads/{id}/runs`,
//! `…/submit_tool_outputs` with `stream: true`). Function calls stream in
//! `thread.run.step.delta` events: `delta.step_details.tool_calls[]` with `index`, `id`, `type` and
//! `function.name` / `function.arguments` fragments, keyed by the run step and the index.
//! `thread.run.requires_action` then carries every call whole
//! (`required_action.submit_tool_outputs.tool_calls`): it is the stream's own original for
//! checkpoints ① and ② (an `arguments-mismatch` when it differs from the reassembled fragments),
//! and a call it names that never streamed is taken from it. `code_interpreter` and
//! `file_search` tool calls are server tools. `thread.run.completed`, `thread.run.requires_action`
//! (and `thread.run.incomplete`, `.cancelled`, `.expired`) end the run; `thread.run.failed` and
//! `event: error` are provider errors; `event: done` (`data: [DONE]`) closes the stream.
//!
//! Without `event:` lines (a dump of the events) the kind is read from the data's `object` and
//! `status`. A `thread.run.step.completed` for a call streamed earlier in the same stream marks it
//! done; one for a call this stream never opened (a `submit_tool_outputs` stream begins with the
//! previous stream's step) is not a new call.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{FieldArgs, FieldStr, error_message, parse_index, undecodable};
use crate::fact::{CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;

/// The event names an Assistants run stream is recognised by (`thread.*`).
pub fn looks_like_assistants_event(event_type: &str) -> bool {
    event_type.starts_with("thread.")
}

#[derive(Deserialize)]
struct Obj<'a> {
    #[serde(default, borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    object: Option<&'a str>,
    #[serde(default, borrow)]
    status: Option<&'a str>,
    /// A step delta.
    #[serde(default, borrow)]
    delta: Option<StepDelta<'a>>,
    /// A step (created / completed).
    #[serde(default, borrow)]
    step_details: Option<StepDetails<'a>>,
    #[serde(default, borrow)]
    required_action: Option<RequiredAction<'a>>,
    #[serde(default, borrow)]
    last_error: Option<&'a RawValue>,
    #[serde(default, borrow)]
    incomplete_details: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct StepDelta<'a> {
    #[serde(default, borrow)]
    step_details: Option<StepDetails<'a>>,
}

#[derive(Deserialize)]
struct StepDetails<'a> {
    #[serde(default, borrow)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

#[derive(Deserialize)]
struct RequiredAction<'a> {
    #[serde(default, borrow)]
    submit_tool_outputs: Option<StepDetails<'a>>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(default, borrow)]
    index: Option<&'a RawValue>,
    #[serde(default)]
    id: FieldStr,
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default)]
    function: Option<Function>,
}

#[derive(Deserialize)]
struct Function {
    #[serde(default)]
    name: FieldStr,
    #[serde(default)]
    arguments: FieldArgs,
}

/// Decoder state: the calls opened in this stream, by (step, index) and by call id.
#[derive(Debug, Default)]
pub struct Assistants {
    by_id: HashMap<String, CallKey>,
    /// Server tools already marked.
    server: std::collections::HashSet<CallKey>,
}

impl Assistants {
    /// Decode one event (SSE `event:` name, or `message` for a dump without names).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        let trimmed = data.trim();
        if trimmed == "[DONE]" || (event_type == "done" && trimmed.is_empty()) {
            out.push(Fact::Done);
            return;
        }
        if event_type == "error" {
            out.push(Fact::ProviderError {
                message: error_message(data),
            });
            return;
        }
        let obj: Obj<'_> = match serde_json::from_str(data) {
            Ok(o) => o,
            Err(e) => {
                out.push(undecodable(data, &e));
                return;
            }
        };
        let kind = if event_type.starts_with("thread.") {
            event_type.to_owned()
        } else {
            match (obj.object, obj.status) {
                (Some("thread.run"), Some(status)) => format!("thread.run.{status}"),
                (Some("thread.run.step"), Some(status)) => format!("thread.run.step.{status}"),
                (Some(o), _) => o.to_owned(),
                (None, _) if event_type == "message" => {
                    // An error object on its own line.
                    if trimmed.contains("\"error\"") {
                        "error".to_owned()
                    } else {
                        String::new()
                    }
                }
                (None, _) => event_type.to_owned(),
            }
        };
        match kind.as_str() {
            "thread.run.step.delta" => {
                let step = obj.id.as_deref().unwrap_or("step").to_owned();
                let calls = obj
                    .delta
                    .and_then(|d| d.step_details)
                    .and_then(|s| s.tool_calls)
                    .unwrap_or_default();
                for (n, tc) in calls.into_iter().enumerate() {
                    self.step_call(&step, n, tc, out);
                }
            }
            "thread.run.step.completed" => {
                let calls = obj
                    .step_details
                    .and_then(|s| s.tool_calls)
                    .unwrap_or_default();
                for tc in calls {
                    if let Some(key) = tc.id.0.non_empty().and_then(|id| self.by_id.get(id)) {
                        out.push(Fact::CallDone { key: key.clone() });
                    }
                }
            }
            "thread.run.requires_action" => {
                let calls = obj
                    .required_action
                    .and_then(|r| r.submit_tool_outputs)
                    .and_then(|s| s.tool_calls)
                    .unwrap_or_default();
                for tc in calls {
                    self.required_call(tc, out);
                }
                out.push(Fact::Finish {
                    reason: "requires_action".into(),
                });
            }
            "thread.run.completed" => out.push(Fact::Finish {
                reason: "completed".into(),
            }),
            "thread.run.incomplete" | "thread.run.cancelled" | "thread.run.expired" => {
                let status = kind.trim_start_matches("thread.run.").to_owned();
                let detail = obj
                    .incomplete_details
                    .filter(|d| d.get() != "null")
                    .map_or(String::new(), |d| format!(" {}", d.get()));
                out.push(Fact::Finding {
                    kind: FindingKind::AbnormalFinish,
                    key: None,
                    message: format!("thread.run.{status}{detail}"),
                });
                out.push(Fact::Finish { reason: status });
            }
            "thread.run.failed" | "thread.run.step.failed" => {
                let message = obj.last_error.filter(|e| e.get() != "null").map_or_else(
                    || format!("{kind} (no last_error)"),
                    |e| format!("{kind}: {}", error_text(e.get())),
                );
                out.push(Fact::ProviderError { message });
            }
            "error" => out.push(Fact::ProviderError {
                message: error_message(data),
            }),
            _ => {}
        }
    }

    /// One entry of a step delta's `tool_calls`.
    fn step_call(&mut self, step: &str, n: usize, tc: ToolCall<'_>, out: &mut Vec<Fact>) {
        let stated = parse_index(tc.index);
        let index = match stated {
            Ok(Some(i)) => i,
            _ => n as u64,
        };
        let key = CallKey::Item(format!("{step} #{index}"));
        if let Err(bad) = &stated {
            out.push(Fact::Finding {
                kind: FindingKind::InvalidIndex,
                key: Some(key.clone()),
                message: format!("invalid index {bad}; routed to {key}"),
            });
        }
        if let Some(id) = tc.id.0.non_empty() {
            self.by_id
                .entry(id.to_owned())
                .or_insert_with(|| key.clone());
        }
        let server = match tc.kind {
            Some("function") | None => None,
            Some(k) => Some(k),
        };
        let (name, args) = match (tc.function, server) {
            (Some(f), None) => (f.name.0, f.arguments.0),
            // A server tool's own fields (code, queries, results) are not call arguments.
            (_, Some(k)) => (Raw::Value(k.to_owned()), Raw::Absent),
            (None, None) => (Raw::Absent, Raw::Absent),
        };
        if server.is_some() && self.server.contains(&key) {
            // Later deltas of a server tool (its code, its results): nothing for the table.
            return;
        }
        out.push(Fact::Fragment(Fragment {
            key: key.clone(),
            stated_index: stated.ok().flatten(),
            id: tc.id.0,
            name,
            args,
        }));
        if let Some(kind) = server {
            self.server.insert(key.clone());
            out.push(Fact::ServerTool {
                key,
                kind: kind.to_owned(),
            });
        }
    }

    /// One call of `requires_action`: the authoritative copy of a streamed call, or (never
    /// streamed) the call itself.
    fn required_call(&mut self, tc: ToolCall<'_>, out: &mut Vec<Fact>) {
        let Some(id) = tc.id.0.non_empty().map(str::to_owned) else {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: None,
                message: "a required_action tool call without an id".into(),
            });
            return;
        };
        let (name, args) = match tc.function {
            Some(f) => (f.name.0, f.arguments.0),
            None => (Raw::Absent, Raw::Absent),
        };
        let arguments = match &args {
            Raw::Value(p) => p.text().to_owned(),
            _ => String::new(),
        };
        match self.by_id.get(&id).cloned() {
            Some(key) => {
                out.push(Fact::Authoritative {
                    key: key.clone(),
                    arguments,
                });
                out.push(Fact::CallDone { key });
            }
            None => {
                let key = CallKey::Item(format!("required_action {id}"));
                self.by_id.insert(id.clone(), key.clone());
                out.push(Fact::Fragment(Fragment {
                    key: key.clone(),
                    stated_index: None,
                    id: Raw::Value(id),
                    name,
                    args: Raw::Absent,
                }));
                if !arguments.is_empty() {
                    out.push(Fact::ArgumentsOnlyInDone {
                        key: key.clone(),
                        arguments,
                    });
                }
                out.push(Fact::CallDone { key });
            }
        }
    }
}

/// `code: message` from a `last_error` object.
fn error_text(err: &str) -> String {
    #[derive(Deserialize)]
    struct E {
        #[serde(default)]
        code: Option<serde_json::Value>,
        #[serde(default)]
        message: Option<String>,
    }
    match serde_json::from_str::<E>(err) {
        Ok(E {
            code: Some(serde_json::Value::String(c)),
            message: Some(m),
        }) => format!("{c}: {m}"),
        Ok(E {
            message: Some(m), ..
        }) => m,
        _ => crate::text::truncate(err, 200),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: &[(&str, &str)]) -> Vec<Fact> {
        let mut d = Assistants::default();
        let mut out = Vec::new();
        for (t, data) in events {
            d.on_event(t, data, &mut out);
        }
        out
    }

    const DELTA1: &str = r#"{"id":"step_1","object":"thread.run.step.delta","delta":{"step_details":{"type":"tool_calls","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"","output":null}}]}}}"#;
    const DELTA2: &str = r#"{"id":"step_1","object":"thread.run.step.delta","delta":{"step_details":{"type":"tool_calls","tool_calls":[{"index":0,"type":"function","function":{"arguments":"{}"}}]}}}"#;
    const REQUIRES: &str = r#"{"id":"run_1","object":"thread.run","status":"requires_action","required_action":{"type":"submit_tool_outputs","submit_tool_outputs":{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}}}"#;

    #[test]
    fn streamed_call_and_its_authoritative_copy() {
        for named in [true, false] {
            let ev = |name: &'static str| if named { name } else { "message" };
            let s = run(&[
                (ev("thread.run.step.delta"), DELTA1),
                (ev("thread.run.step.delta"), DELTA2),
                (ev("thread.run.requires_action"), REQUIRES),
                (ev("done"), "[DONE]"),
            ]);
            let key = CallKey::Item("step_1 #0".into());
            assert!(s.contains(&Fact::Authoritative {
                key: key.clone(),
                arguments: "{}".into()
            }));
            assert!(s.contains(&Fact::CallDone { key }));
            assert!(s.contains(&Fact::Finish {
                reason: "requires_action".into()
            }));
            assert_eq!(s.last(), Some(&Fact::Done));
        }
    }

    #[test]
    fn a_previous_streams_step_is_not_a_new_call_and_failures_are_errors() {
        let s = run(&[(
            "thread.run.step.completed",
            r#"{"id":"step_1","object":"thread.run.step","status":"completed","step_details":{"type":"tool_calls","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}","output":"x"}}]}}"#,
        )]);
        assert!(s.is_empty(), "{s:?}");
        let s = run(&[(
            "thread.run.failed",
            r#"{"id":"run_1","object":"thread.run","status":"failed","last_error":{"code":"server_error","message":"Sorry"}}"#,
        )]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "thread.run.failed: server_error: Sorry".into()
            }]
        );
    }

    #[test]
    fn hosted_tools_are_server_tools_once() {
        let d = |extra: &str| {
            format!(
                r#"{{"id":"step_2","object":"thread.run.step.delta","delta":{{"step_details":{{"type":"tool_calls","tool_calls":[{{"index":0,{extra}"type":"file_search","file_search":{{}}}}]}}}}}}"#
            )
        };
        let first = d(r#""id":"call_fs","#);
        let later = d("");
        let s = run(&[("message", &first), ("message", &later)]);
        let servers = s
            .iter()
            .filter(|s| matches!(s, Fact::ServerTool { kind, .. } if kind == "file_search"))
            .count();
        assert_eq!(servers, 1);
        assert_eq!(
            s.iter().filter(|s| matches!(s, Fact::Fragment(_))).count(),
            1
        );
    }
}
