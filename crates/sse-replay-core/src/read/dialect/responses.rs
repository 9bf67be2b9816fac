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
//!
//! The client executes other items too ([`classify`]): `custom_tool_call` (free-form text input,
//! streamed by `response.custom_tool_call_input.delta`: a string, never parsed as JSON),
//! `apply_patch_call` (its `operation`; a `create_file`/`update_file` diff streamed by
//! `response.apply_patch_call_operation_diff.delta`), `local_shell_call`, `shell_call` and
//! `computer_call` (their `action`, complete in `response.output_item.done`). Each is a call with a
//! kind ([`Fact::CallKind`]). A streamed diff stays a concatenation: the operation's JSON text is
//! cut around the diff (the text before it opens the call, each delta is appended JSON-escaped, the
//! text after it closes the call at `output_item.done`), so the arguments are still only appended
//! and parsed once. Any other `*_call` item type is read the same way as an `action` item and named
//! in an `unknown-call-item` finding, never dropped.

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
    /// `response.custom_tool_call_input.done`: the whole input.
    #[serde(default, borrow)]
    input: Option<std::borrow::Cow<'a, str>>,
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
    /// `custom_tool_call`: the free-form input.
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    /// `apply_patch_call`: the file operation.
    #[serde(default, borrow)]
    operation: Option<&'a RawValue>,
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

/// How the client reads an item type it executes that is not a plain `function_call`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientItem {
    /// The tool's name when the item type fixes it (`apply_patch`); `None` when the item carries
    /// its own `name` (a custom tool).
    pub tool: Option<&'static str>,
    /// The item field that holds the arguments: `input`, `operation` or `action`.
    pub field: &'static str,
    /// The arguments are free-form text, not JSON.
    pub text: bool,
    /// An item type sse-replay models (otherwise it is named in an `unknown-call-item` finding).
    pub known: bool,
}

/// How one Responses output item type is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemClass {
    /// `function_call`: arguments streamed as text.
    Function,
    /// Another item the client executes.
    Client(ClientItem),
    /// An item the provider runs itself ([`SERVER_ITEM_TYPES`]).
    Server,
    /// Not a call (a message, reasoning, a tool's output…).
    Other,
}

/// The class of an output item type. Any `*_call` type sse-replay does not know is a client call
/// read from its `action` (or `operation`, `arguments`, `input`), so that a new kind of call is
/// never dropped silently.
pub fn classify(kind: &str) -> ItemClass {
    let client = |tool, field, text| {
        ItemClass::Client(ClientItem {
            tool,
            field,
            text,
            known: true,
        })
    };
    match kind {
        "function_call" => ItemClass::Function,
        "custom_tool_call" => client(None, "input", true),
        "apply_patch_call" => client(Some("apply_patch"), "operation", false),
        "local_shell_call" => client(Some("local_shell"), "action", false),
        "shell_call" => client(Some("shell"), "action", false),
        "computer_call" => client(Some("computer"), "action", false),
        k if SERVER_ITEM_TYPES.contains(&k) => ItemClass::Server,
        k if k.ends_with("_call") => ItemClass::Client(ClientItem {
            tool: None,
            field: "action",
            text: false,
            known: false,
        }),
        _ => ItemClass::Other,
    }
}

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
    /// A client item other than a function call: how it is read.
    client: Option<ClientItem>,
    /// Its arguments value as `output_item.added` carried it (compact JSON), for an item whose
    /// arguments come whole at `output_item.done` (or whose diff streams into it).
    added_value: Option<String>,
    /// A streamed diff: the operation's text after the diff, appended at `output_item.done`.
    suffix: Option<String>,
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
                let class = ev
                    .item
                    .as_ref()
                    .map_or(ItemClass::Other, |i| classify(i.kind.unwrap_or("")));
                let item = match (class, ev.item) {
                    (ItemClass::Server, Some(item)) => {
                        self.server_item_added(&item, ev.output_index, out);
                        return;
                    }
                    (ItemClass::Client(ci), Some(item)) => {
                        self.client_item_added(&item, ci, ev.output_index, out);
                        return;
                    }
                    (ItemClass::Function, Some(item)) => item,
                    _ => return,
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
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
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
            "response.apply_patch_call_operation_diff.delta" => {
                self.diff_delta(
                    ev.item_id.as_deref(),
                    ev.delta.as_deref(),
                    ev.output_index,
                    out,
                );
            }
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done" => {
                if let (Some(item_id), Some(args)) = (ev.item_id, ev.arguments.or(ev.input)) {
                    self.done_arguments(&item_id, &args, out);
                    out.push(Fact::Authoritative {
                        key: CallKey::Item(item_id.into_owned()),
                        arguments: args.into_owned(),
                    });
                }
            }
            "response.output_item.done" => {
                let class = ev
                    .item
                    .as_ref()
                    .map_or(ItemClass::Other, |i| classify(i.kind.unwrap_or("")));
                let item = match (class, ev.item) {
                    (ItemClass::Server, Some(item)) => {
                        self.server_item_done(&item, ev.output_index, out);
                        return;
                    }
                    (ItemClass::Client(ci), Some(item)) => {
                        self.client_item_done(&item, ci, ev.output_index, out);
                        return;
                    }
                    (ItemClass::Function, Some(item)) => item,
                    _ => return,
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

    /// A client item other than a function call opens: a fragment with its `call_id` and the
    /// tool's name, the mark of its kind, and (custom tools) any input it already carries.
    fn client_item_added(
        &mut self,
        item: &Item<'_>,
        ci: ClientItem,
        output_index: Option<u64>,
        out: &mut Vec<Fact>,
    ) {
        let (Some(id), Some(kind)) = (item.id.as_deref(), item.kind) else {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: None,
                message: format!("{} item without an id", item.kind.unwrap_or("output")),
            });
            return;
        };
        let key = CallKey::Item(id.to_owned());
        let name = match raw_string(item.name) {
            Raw::Value(n) if !n.is_empty() => n,
            _ => ci
                .tool
                .map_or_else(|| kind.trim_end_matches("_call").to_owned(), str::to_owned),
        };
        let field = field_of(item, ci.field);
        let state = self.items.entry(id.to_owned()).or_default();
        state.announced = true;
        state.client = Some(ci);
        let args = if ci.text {
            // The item opens with `input: ""`; anything else is already part of the input.
            match field.and_then(|v| serde_json::from_str::<String>(v.get()).ok()) {
                Some(t) if !t.is_empty() => {
                    state.piece_bytes += t.len();
                    Raw::Value(ArgsPiece::Text(t))
                }
                _ => Raw::Absent,
            }
        } else {
            state.added_value = field.and_then(|v| compact(v.get()));
            Raw::Absent
        };
        out.push(Fact::Fragment(Fragment {
            key: key.clone(),
            stated_index: output_index,
            id: raw_string(item.call_id),
            name: Raw::Value(name),
            args,
        }));
        out.push(Fact::CallKind {
            key: key.clone(),
            kind: kind.to_owned(),
            text: ci.text,
        });
        if !ci.known {
            out.push(Fact::Finding {
                kind: FindingKind::UnknownCallItem,
                key: Some(key),
                message: format!(
                    "output item type {kind} is not one sse-replay models; read as a call the client executes, its arguments from the item's {}",
                    ci.field
                ),
            });
        }
    }

    /// One piece of an `apply_patch_call`'s diff: the first opens the operation's JSON text up to
    /// the diff's value; each is appended JSON-escaped (the rest is appended at `output_item.done`).
    fn diff_delta(
        &mut self,
        item_id: Option<&str>,
        delta: Option<&str>,
        output_index: Option<u64>,
        out: &mut Vec<Fact>,
    ) {
        let Some(item_id) = item_id else {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: None,
                message: "operation diff delta without an item_id".into(),
            });
            return;
        };
        let key = CallKey::Item(item_id.to_owned());
        let state = self.items.entry(item_id.to_owned()).or_default();
        let known = state.announced;
        let escaped = escape_json(delta.unwrap_or(""));
        let text = if state.suffix.is_some() {
            escaped
        } else {
            let (prefix, suffix) = split_at_diff(state.added_value.as_deref());
            state.suffix = Some(suffix);
            prefix + &escaped
        };
        state.piece_bytes += text.len();
        out.push(Fact::Fragment(Fragment {
            key: key.clone(),
            stated_index: output_index,
            id: Raw::Absent,
            name: Raw::Absent,
            args: Raw::Value(ArgsPiece::Text(text)),
        }));
        if !known {
            out.push(Fact::CallKind {
                key: key.clone(),
                kind: "apply_patch_call".into(),
                text: false,
            });
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: Some(key),
                message:
                    "operation diff delta for an item no output_item.added announced (no call_id)"
                        .into(),
            });
        }
    }

    /// A client item is complete: a custom tool's input is the authoritative copy (or, with no
    /// piece before it, the call's one fragment); a streamed diff gets the rest of the operation's
    /// text; any other item's arguments are the item's value, whole.
    fn client_item_done(
        &mut self,
        item: &Item<'_>,
        ci: ClientItem,
        output_index: Option<u64>,
        out: &mut Vec<Fact>,
    ) {
        let Some(id) = item.id.as_deref() else { return };
        if !self.items.get(id).is_some_and(|s| s.announced) {
            // Done without added: open it now.
            self.client_item_added(item, ci, output_index, out);
        }
        let key = CallKey::Item(id.to_owned());
        let field = field_of(item, ci.field);
        if ci.text {
            if let Some(input) = field.and_then(|v| serde_json::from_str::<String>(v.get()).ok()) {
                self.done_arguments(id, &input, out);
                out.push(Fact::Authoritative {
                    key: key.clone(),
                    arguments: input,
                });
            }
            out.push(Fact::CallDone { key });
            return;
        }
        let done_value = field.and_then(|v| compact(v.get()));
        let state = self.items.entry(id.to_owned()).or_default();
        if let Some(suffix) = state.suffix.take() {
            out.push(Fact::Fragment(Fragment {
                key: key.clone(),
                stated_index: output_index,
                id: Raw::Absent,
                name: Raw::Absent,
                args: Raw::Value(ArgsPiece::Text(suffix)),
            }));
            if let Some(v) = done_value {
                out.push(Fact::Authoritative {
                    key: key.clone(),
                    arguments: v,
                });
            }
        } else if let Some(v) = done_value.or_else(|| state.added_value.take()) {
            out.push(Fact::Fragment(Fragment {
                key: key.clone(),
                stated_index: output_index,
                id: Raw::Absent,
                name: Raw::Absent,
                args: Raw::Value(ArgsPiece::Object(v)),
            }));
        }
        out.push(Fact::CallDone { key });
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

/// The arguments field `name` of an item (`input`, `operation`, `action`); an unknown item type
/// falls back on whichever of `action`, `operation`, `input` it has.
fn field_of<'a>(item: &Item<'a>, name: &str) -> Option<&'a RawValue> {
    let pick = |n: &str| match n {
        "input" => item.input,
        "operation" => item.operation,
        "action" => item.action,
        _ => None,
    };
    pick(name)
        .filter(|v| v.get() != "null")
        .or_else(|| pick("action").filter(|v| v.get() != "null"))
        .or_else(|| pick("operation").filter(|v| v.get() != "null"))
        .or_else(|| pick("input").filter(|v| v.get() != "null"))
}

/// A JSON value's text written compactly (keys in their order), or `None` when it is not JSON.
fn compact(text: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .map(|v| v.to_string())
}

/// `s` escaped as the inside of a JSON string (no quotes): pieces escaped one by one join into
/// the escaped whole, since JSON escapes character by character.
fn escape_json(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// An operation's compact JSON text cut around its `diff` value: the text up to and including the
/// opening quote (with whatever diff `output_item.added` already carried), and the text from the
/// closing quote on. Without an operation to cut, `{"diff":"` and `"}`.
fn split_at_diff(operation: Option<&str>) -> (String, String) {
    const MARK: &str = "\\u0000sse-replay-diff\\u0000";
    let fallback = || ("{\"diff\":\"".to_owned(), "\"}".to_owned());
    let Some(serde_json::Value::Object(mut op)) =
        operation.and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
    else {
        return fallback();
    };
    let before = match op.get("diff") {
        Some(serde_json::Value::String(d)) => escape_json(d),
        None | Some(serde_json::Value::Null) => String::new(),
        Some(_) => return fallback(),
    };
    op.insert(
        "diff".into(),
        serde_json::Value::String("\0sse-replay-diff\0".into()),
    );
    let text = serde_json::Value::Object(op).to_string();
    match text.split_once(MARK) {
        Some((a, b)) => (format!("{a}{before}"), b.to_owned()),
        None => fallback(),
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
