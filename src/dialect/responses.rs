//! OpenAI Responses API streaming: `response.output_item.added` (a `function_call` item with
//! `call_id` and `name`), `response.function_call_arguments.delta` keyed by `item_id`, and the
//! authoritative full arguments in `response.function_call_arguments.done` / `response.output_item.done`.
//! The stream ends with `response.completed`, `.incomplete` or `.failed`; there is no `[DONE]`.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ArgsPiece, CallKey, Fragment, Raw, Signal, error_message, raw_string, undecodable};
use crate::findings::FindingKind;

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
}

#[derive(Deserialize)]
struct ResponseObj<'a> {
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
    #[serde(default, borrow)]
    incomplete_details: Option<Incomplete<'a>>,
}

#[derive(Deserialize)]
struct Incomplete<'a> {
    #[serde(default, borrow)]
    reason: Option<std::borrow::Cow<'a, str>>,
}

/// Decoder state: the function-call items announced by `response.output_item.added`.
#[derive(Debug, Default)]
pub struct Responses {
    items: HashSet<String>,
}

impl Responses {
    /// Decode one event (SSE `event:` name, or the JSON `type` when framed as JSON lines).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Signal>) {
        let ev: Ev<'_> = match serde_json::from_str(data) {
            Ok(ev) => ev,
            Err(e) => {
                if event_type == "error" {
                    out.push(Signal::ProviderError {
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
                let Some(item) = ev.item.filter(|i| i.kind == Some("function_call")) else {
                    return;
                };
                let Some(item_id) = item.id else {
                    out.push(Signal::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: None,
                        message: "function_call item without an id".into(),
                    });
                    return;
                };
                self.items.insert(item_id.as_ref().to_owned());
                out.push(Signal::Fragment(Fragment {
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
                    out.push(Signal::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: None,
                        message: "arguments delta without an item_id".into(),
                    });
                    return;
                };
                let known = self.items.contains(item_id.as_ref());
                let key = CallKey::Item(item_id.into_owned());
                out.push(Signal::Fragment(Fragment {
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
                    out.push(Signal::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: Some(key),
                        message: "arguments delta for an item no output_item.added announced (no call_id, no name)".into(),
                    });
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(item_id), Some(args)) = (ev.item_id, ev.arguments) {
                    out.push(Signal::Authoritative {
                        key: CallKey::Item(item_id.into_owned()),
                        arguments: args.into_owned(),
                    });
                }
            }
            "response.output_item.done" => {
                let Some(item) = ev.item.filter(|i| i.kind == Some("function_call")) else {
                    return;
                };
                let Some(item_id) = item.id else { return };
                let key = CallKey::Item(item_id.into_owned());
                if let Some(args) = item.arguments {
                    out.push(Signal::Authoritative {
                        key: key.clone(),
                        arguments: args.into_owned(),
                    });
                }
                out.push(Signal::CallDone { key });
            }
            "response.completed" | "response.done" => {
                out.push(Signal::Finish {
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
                out.push(Signal::Finding {
                    kind: FindingKind::AbnormalFinish,
                    key: None,
                    message: format!("response.incomplete ({reason})"),
                });
                out.push(Signal::Finish {
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
                out.push(Signal::ProviderError { message });
            }
            "error" | "response.error" => out.push(Signal::ProviderError {
                message: error_text(data),
            }),
            _ => {}
        }
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

    fn run(lines: &[&str]) -> Vec<Signal> {
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
            vec![Signal::ProviderError {
                message: "server_error: The model failed".into()
            }]
        );
        let s = run(&[
            r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}"#,
        ]);
        assert!(
            matches!(&s[0], Signal::Finding { kind: FindingKind::AbnormalFinish, message, .. } if message.contains("max_output_tokens"))
        );
        assert!(matches!(&s[1], Signal::Finish { reason } if reason == "incomplete"));
        let s = run(&[
            r#"{"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}"#,
        ]);
        assert_eq!(
            s,
            vec![Signal::ProviderError {
                message: "rate_limit_exceeded: Slow down".into()
            }]
        );
    }

    #[test]
    fn unannounced_item_is_flagged() {
        let s = run(&[
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{}"}"#,
        ]);
        assert!(matches!(&s[0], Signal::Fragment(_)));
        assert!(matches!(
            &s[1],
            Signal::Finding {
                kind: FindingKind::UnexpectedShape,
                ..
            }
        ));
    }
}
