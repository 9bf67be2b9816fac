//! OpenAI Responses API streaming: `response.output_item.added` (a `function_call` item with
//! `call_id` and `name`), `response.function_call_arguments.delta` keyed by `item_id`, and the
//! authoritative full arguments in `response.function_call_arguments.done` / `response.output_item.done`.
//! The stream ends with `response.completed`, `.incomplete` or `.failed`; there is no `[DONE]`.
//!
//! Two deviations are handled here. Some compatible servers send a call's arguments only in the
//! `.done` events, with no `.delta`: the done text then becomes the call's one fragment
//! ([`Fact::ArgumentsOnlyInDone`]). Items the provider runs itself (`web_search_call`,
//! `file_search_call`, `code_interpreter_call`, `image_generation_call`, `mcp_call`,
//! `tool_search_call`) are reported as server tools ([`Fact::ServerTool`]), apart from the
//! `function_call` items the client must execute.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{error_message, raw_string, undecodable};
use crate::fact::{ArgsPiece, CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;
use crate::text::truncate;

#[derive(Deserialize)]
struct Ev<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default, borrow)]
    item_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default, borrow)]
    delta: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    item: Option<Item<'a>>,
    #[serde(default, borrow)]
    response: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default, borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "super::present")]
    call_id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "super::present")]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    arguments: Option<std::borrow::Cow<'a, str>>,
    /// `web_search_call`: what the search did.
    #[serde(default, borrow)]
    action: Option<&'a RawValue>,
    /// `file_search_call`: the queries.
    #[serde(default, borrow)]
    queries: Option<&'a RawValue>,
    /// `code_interpreter_call`: the code run.
    #[serde(default, borrow)]
    code: Option<&'a RawValue>,
}

/// Output item types the provider runs itself: not calls for the client. (`function_call`,
/// `custom_tool_call`, `computer_call`, `local_shell_call`, `shell_call` and `apply_patch_call` are
/// executed by the client.)
pub const SERVER_ITEM_TYPES: &[&str] = &[
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "tool_search_call",
];

#[derive(Deserialize)]
struct ResponseObj<'a> {
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
    #[serde(default, borrow)]
    incomplete_details: Option<Incomplete<'a>>,
    /// The output items (`response.completed`): the calls the response made.
    #[serde(default, borrow)]
    output: Option<Vec<Item<'a>>>,
}

#[derive(Deserialize)]
struct Incomplete<'a> {
    #[serde(default, borrow)]
    reason: Option<std::borrow::Cow<'a, str>>,
}

/// What the decoder knows about one function-call item.
#[derive(Debug, Default)]
struct ItemState {
    /// `response.output_item.added` announced it.
    announced: bool,
    /// Bytes of arguments received as pieces (`.delta`, or a non-empty `arguments` on `added`).
    piece_bytes: usize,
    /// The `.done` text was already handed on as the call's fragment.
    from_done: bool,
}

/// Decoder state: the function-call items seen, and the server-run items announced.
#[derive(Debug, Default)]
pub struct Responses {
    items: HashMap<String, ItemState>,
    server_items: HashMap<String, String>,
}

impl Responses {
    /// The `function_call` items the final response lists that no event streamed: calls lost on
    /// the way (`lost-tool-call`).
    fn announced_items(&self, response: Option<&RawValue>, out: &mut Vec<Fact>) {
        let Some(output) = response
            .and_then(|r| serde_json::from_str::<ResponseObj<'_>>(r.get()).ok())
            .and_then(|r| r.output)
        else {
            return;
        };
        let missing: Vec<String> = output
            .iter()
            .filter(|i| i.kind == Some("function_call"))
            .filter(|i| {
                i.id.as_deref()
                    .is_none_or(|id| !self.items.contains_key(id))
            })
            .map(|i| {
                let name = raw_string(i.name).non_empty().unwrap_or("?").to_owned();
                truncate(&name, 60)
            })
            .collect();
        if !missing.is_empty() {
            out.push(Fact::Finding {
                kind: FindingKind::LostToolCall,
                key: None,
                message: format!(
                    "the completed response lists {} (function_call items) that no event streamed: {}",
                    crate::text::plural(missing.len(), "tool call"),
                    missing.join(", ")
                ),
            });
        }
    }

    /// Decode one event (SSE `event:` name, or the JSON `type` when framed as JSON lines).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        let ev: Ev<'_> = match serde_json::from_str(data) {
            Ok(ev) => ev,
            Err(e) => {
                if event_type == "error" {
                    out.push(Fact::ProviderError {
                        message: error_message(data),
                    });
                } else {
                    out.push(undecodable(data, &e));
                }
                return;
            }
        };
        let kind = ev.kind.unwrap_or(event_type);
        match kind {
            "response.output_item.added" => {
                if let Some(item) = ev
                    .item
                    .as_ref()
                    .filter(|i| i.kind.is_some_and(|k| SERVER_ITEM_TYPES.contains(&k)))
                {
                    self.server_item_added(item, ev.output_index, out);
                    return;
                }
                let Some(item) = ev.item.filter(|i| i.kind == Some("function_call")) else {
                    return;
                };
                let Some(item_id) = item.id else {
                    out.push(Fact::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: None,
                        message: "function_call item without an id".into(),
                    });
                    return;
                };
                let piece_bytes = item.arguments.as_ref().map_or(0, |a| a.len());
                let state = self.items.entry(item_id.as_ref().to_owned()).or_default();
                state.announced = true;
                state.piece_bytes += piece_bytes;
                out.push(Fact::Fragment(Fragment {
                    key: CallKey::Item(item_id.into_owned()),
                    stated_index: ev.output_index,
                    id: raw_string(item.call_id),
                    name: raw_string(item.name),
                    // The item opens with `arguments: ""`; anything else is already part of them.
                    args: match item.arguments {
                        Some(a) if !a.is_empty() => Raw::Value(ArgsPiece::Text(a.into_owned())),
                        _ => Raw::Absent,
                    },
                }));
            }
            "response.function_call_arguments.delta" => {
                let Some(item_id) = ev.item_id else {
                    out.push(Fact::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: None,
                        message: "arguments delta without an item_id".into(),
                    });
                    return;
                };
                let pieces = ev.delta.as_ref().map_or(0, |d| d.len());
                let known = match self.items.get_mut(item_id.as_ref()) {
                    Some(state) => {
                        state.piece_bytes += pieces;
                        state.announced
                    }
                    None => {
                        self.items.insert(
                            item_id.as_ref().to_owned(),
                            ItemState {
                                piece_bytes: pieces,
                                ..Default::default()
                            },
                        );
                        false
                    }
                };
                let key = CallKey::Item(item_id.into_owned());
                out.push(Fact::Fragment(Fragment {
                    key: key.clone(),
                    stated_index: ev.output_index,
                    id: Raw::Absent,
                    name: Raw::Absent,
                    args: match ev.delta {
                        Some(d) => Raw::Value(ArgsPiece::Text(d.into_owned())),
                        None => Raw::Absent,
                    },
                }));
                if !known {
                    out.push(Fact::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: Some(key),
                        message: "arguments delta for an item no output_item.added announced (no call_id, no name)".into(),
                    });
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(item_id), Some(args)) = (ev.item_id, ev.arguments) {
                    self.done_arguments(&item_id, &args, out);
                    out.push(Fact::Authoritative {
                        key: CallKey::Item(item_id.into_owned()),
                        arguments: args.into_owned(),
                    });
                }
            }
            "response.output_item.done" => {
                if let Some(item) = ev
                    .item
                    .as_ref()
                    .filter(|i| i.kind.is_some_and(|k| SERVER_ITEM_TYPES.contains(&k)))
                {
                    self.server_item_done(item, ev.output_index, out);
                    return;
                }
                let Some(item) = ev.item.filter(|i| i.kind == Some("function_call")) else {
                    return;
                };
                let Some(item_id) = item.id else { return };
                if let Some(args) = &item.arguments {
                    self.done_arguments(&item_id, args, out);
                }
                let key = CallKey::Item(item_id.into_owned());
                if let Some(args) = item.arguments {
                    out.push(Fact::Authoritative {
                        key: key.clone(),
                        arguments: args.into_owned(),
                    });
                }
                out.push(Fact::CallDone { key });
            }
            "response.completed" | "response.done" => {
                self.announced_items(ev.response, out);
                out.push(Fact::Finish {
                    reason: kind.trim_start_matches("response.").to_owned(),
                });
            }
            "response.incomplete" => {
                let reason = ev
                    .response
                    .and_then(|r| serde_json::from_str::<ResponseObj<'_>>(r.get()).ok())
                    .and_then(|r| r.incomplete_details)
                    .and_then(|d| d.reason)
                    .map_or_else(|| "no reason given".to_owned(), |r| r.into_owned());
                out.push(Fact::Finding {
                    kind: FindingKind::AbnormalFinish,
                    key: None,
                    message: format!("response.incomplete ({reason})"),
                });
                out.push(Fact::Finish {
                    reason: "incomplete".into(),
                });
            }
            "response.failed" => {
                let message = ev
                    .response
                    .and_then(|r| serde_json::from_str::<ResponseObj<'_>>(r.get()).ok())
                    .and_then(|r| r.error)
                    .filter(|e| e.get() != "null")
                    .map_or_else(
                        || "response.failed (no error object)".to_owned(),
                        |e| error_text(e.get()),
                    );
                out.push(Fact::ProviderError { message });
            }
            "error" | "response.error" => out.push(Fact::ProviderError {
                message: error_text(data),
            }),
            _ => {}
        }
    }
}

impl Responses {
    /// A `.done` event carries the full arguments: when no piece of them came before (no `.delta`,
    /// nothing on `added`), they become the call's fragment, once. When pieces did come, the done
    /// text is only the authoritative copy (and a difference is an `arguments-mismatch`).
    fn done_arguments(&mut self, item_id: &str, args: &str, out: &mut Vec<Fact>) {
        if args.is_empty() {
            return;
        }
        let state = self.items.entry(item_id.to_owned()).or_default();
        if state.piece_bytes == 0 && !state.from_done {
            state.from_done = true;
            out.push(Fact::ArgumentsOnlyInDone {
                key: CallKey::Item(item_id.to_owned()),
                arguments: args.to_owned(),
            });
        }
    }

    /// A server-run item opens: a fragment with its id and a name (the MCP tool's own name, else
    /// the item type without `_call`), then the mark that the provider runs it.
    fn server_item_added(
        &mut self,
        item: &Item<'_>,
        output_index: Option<u64>,
        out: &mut Vec<Fact>,
    ) {
        let (Some(id), Some(kind)) = (item.id.as_deref(), item.kind) else {
            return;
        };
        self.server_items.insert(id.to_owned(), kind.to_owned());
        let name = match raw_string(item.name) {
            Raw::Value(n) if !n.is_empty() => n,
            _ => kind.trim_end_matches("_call").to_owned(),
        };
        let key = CallKey::Item(id.to_owned());
        out.push(Fact::Fragment(Fragment {
            key: key.clone(),
            stated_index: output_index,
            id: Raw::Value(id.to_owned()),
            name: Raw::Value(name),
            args: Raw::Absent,
        }));
        out.push(Fact::ServerTool {
            key,
            kind: kind.to_owned(),
        });
    }

    /// A server-run item is done: what it did (`arguments` of an MCP call, the search `action`,
    /// the file-search `queries`, the interpreter's `code`) becomes its arguments.
    fn server_item_done(
        &mut self,
        item: &Item<'_>,
        output_index: Option<u64>,
        out: &mut Vec<Fact>,
    ) {
        let Some(id) = item.id.as_deref() else { return };
        if !self.server_items.contains_key(id) {
            // Done without added: open it now so it is still reported apart.
            self.server_item_added(item, output_index, out);
        }
        let key = CallKey::Item(id.to_owned());
        let field = |name: &str, v: &RawValue| format!("{{\"{name}\":{}}}", v.get());
        let args = if let Some(a) = item.arguments.as_deref().filter(|a| !a.is_empty()) {
            Some(ArgsPiece::Text(a.to_owned()))
        } else if let Some(a) = item.action {
            Some(ArgsPiece::Object(a.get().to_owned()))
        } else if let Some(q) = item.queries {
            Some(ArgsPiece::Object(field("queries", q)))
        } else {
            item.code.map(|c| ArgsPiece::Object(field("code", c)))
        };
        if let Some(args) = args {
            out.push(Fact::Fragment(Fragment {
                key: key.clone(),
                stated_index: output_index,
                id: Raw::Absent,
                name: Raw::Absent,
                args: Raw::Value(args),
            }));
        }
        out.push(Fact::CallDone { key });
    }
}

/// `code: message` from a Responses error object (`{"code","message"}` at the top level, or nested
/// under `error`).
fn error_text(data: &str) -> String {
    #[derive(Deserialize)]
    struct E {
        #[serde(default)]
        code: Option<serde_json::Value>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        error: Option<serde_json::Value>,
    }
    match serde_json::from_str::<E>(data) {
        Ok(E {
            error: Some(serde_json::Value::Object(_)),
            ..
        }) => error_message(data),
        Ok(E {
            code,
            message: Some(m),
            ..
        }) => match code {
            Some(serde_json::Value::String(c)) => format!("{c}: {m}"),
            Some(c) if !c.is_null() => format!("{c}: {m}"),
            _ => m,
        },
        _ => error_message(data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<Fact> {
        let mut d = Responses::default();
        let mut out = Vec::new();
        for l in lines {
            d.on_event("message", l, &mut out);
        }
        out
    }

    #[test]
    fn failed_and_incomplete() {
        let s = run(&[
            r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed"}}}"#,
        ]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "server_error: The model failed".into()
            }]
        );
        let s = run(&[
            r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}"#,
        ]);
        assert!(
            matches!(&s[0], Fact::Finding { kind: FindingKind::AbnormalFinish, message, .. } if message.contains("max_output_tokens"))
        );
        assert!(matches!(&s[1], Fact::Finish { reason } if reason == "incomplete"));
        let s = run(&[
            r#"{"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}"#,
        ]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "rate_limit_exceeded: Slow down".into()
            }]
        );
    }

    #[test]
    fn done_only_arguments_become_the_fragment_once() {
        let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_1","name":"f"}}"#;
        let args_done = r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"a\":1}"}"#;
        let item_done = r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"{\"a\":1}"}}"#;
        let s = run(&[added, args_done, item_done]);
        let from_done: Vec<&Fact> = s
            .iter()
            .filter(|s| matches!(s, Fact::ArgumentsOnlyInDone { .. }))
            .collect();
        assert_eq!(
            from_done,
            vec![&Fact::ArgumentsOnlyInDone {
                key: CallKey::Item("fc_1".into()),
                arguments: r#"{"a":1}"#.into()
            }],
            "once, though two done events carry the text"
        );
        // With a delta, the done text is only the authoritative copy.
        let delta = r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"a\":1}"}"#;
        let s = run(&[added, delta, args_done, item_done]);
        assert!(
            !s.iter()
                .any(|s| matches!(s, Fact::ArgumentsOnlyInDone { .. }))
        );
        assert!(s.iter().any(|s| matches!(s, Fact::Authoritative { .. })));
    }

    #[test]
    fn provider_run_items_are_server_tools() {
        let s = run(&[
            r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"mcp_1","type":"mcp_call","name":"roll","server_label":"dice"}}"#,
            r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"mcp_1","type":"mcp_call","name":"roll","arguments":"{\"sides\":6}"}}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"fs_1","type":"file_search_call"}}"#,
            r#"{"type":"response.output_item.done","output_index":1,"item":{"id":"fs_1","type":"file_search_call","queries":["a"]}}"#,
        ]);
        let kinds: Vec<&str> = s
            .iter()
            .filter_map(|s| match s {
                Fact::ServerTool { kind, .. } => Some(kind.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, ["mcp_call", "file_search_call"]);
        let texts: Vec<(String, &str)> = s
            .iter()
            .filter_map(|s| match s {
                Fact::Fragment(f) => match &f.args {
                    Raw::Value(p) => Some((f.key.to_string(), p.text())),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        assert_eq!(
            texts,
            [
                ("item mcp_1".to_owned(), r#"{"sides":6}"#),
                ("item fs_1".to_owned(), r#"{"queries":["a"]}"#)
            ]
        );
        let names: Vec<&str> = s
            .iter()
            .filter_map(|s| match s {
                Fact::Fragment(f) => f.name.non_empty(),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["roll", "file_search"]);
    }

    #[test]
    fn unannounced_item_is_flagged() {
        let s = run(&[
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{}"}"#,
        ]);
        assert!(matches!(&s[0], Fact::Fragment(_)));
        assert!(matches!(
            &s[1],
            Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                ..
            }
        ));
    }
}
