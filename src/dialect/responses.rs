//! OpenAI Responses API streaming: `response.output_item.added` (a `function_call` item with
//! `call_id` and `name`), `response.function_call_arguments.delta` keyed by `item_id`, and the
//! authoritative full arguments in `response.function_call_arguments.done` / `response.output_item.done`.
//! The stream ends with `response.completed`, `.incomplete` or `.failed`; there is no `[DONE]`.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ArgsPiece, CallKey, Fragment, Raw, Signal, error_message, raw_string, truncate};
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
    #[serde(default, borrow)]
    call_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    arguments: Option<std::borrow::Cow<'a, str>>,
}

/// Decoder state (stateless apart from the finished flag).
#[derive(Debug, Default)]
pub struct Responses {
    finished: bool,
}

impl Responses {
    /// Decode one event.
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Signal>) {
        let ev: Ev<'_> = match serde_json::from_str(data) {
            Ok(ev) => ev,
            Err(e) => {
                if event_type == "error" {
                    out.push(Signal::ProviderError { message: error_message(data) });
                } else {
                    out.push(Signal::Finding {
                        kind: FindingKind::NonJsonData,
                        key: None,
                        message: format!("{e}: {}", truncate(data, 80)),
                    });
                }
                return;
            }
        };
        let kind = ev.kind.unwrap_or(event_type);
        match kind {
            "response.output_item.added" => {
                let Some(item) = ev.item.filter(|i| i.kind == Some("function_call")) else { return };
                let Some(item_id) = item.id else { return };
                out.push(Signal::Fragment(Fragment {
                    key: CallKey::Item(item_id.into_owned()),
                    stated_index: ev.output_index,
                    id: raw_string(item.call_id),
                    name: raw_string(item.name),
                    args: match item.arguments {
                        Some(a) if !a.is_empty() => Raw::Value(ArgsPiece::Text(a.into_owned())),
                        _ => Raw::Absent,
                    },
                }));
            }
            "response.function_call_arguments.delta" => {
                let Some(item_id) = ev.item_id else { return };
                out.push(Signal::Fragment(Fragment {
                    key: CallKey::Item(item_id.into_owned()),
                    stated_index: ev.output_index,
                    id: Raw::Absent,
                    name: Raw::Absent,
                    args: match ev.delta {
                        Some(d) => Raw::Value(ArgsPiece::Text(d.into_owned())),
                        None => Raw::Absent,
                    },
                }));
            }
            "response.function_call_arguments.done" => {
                if let (Some(item_id), Some(args)) = (ev.item_id, ev.arguments) {
                    out.push(Signal::Authoritative { key: CallKey::Item(item_id.into_owned()), arguments: args.into_owned() });
                }
            }
            "response.output_item.done" => {
                let Some(item) = ev.item.filter(|i| i.kind == Some("function_call")) else { return };
                let Some(item_id) = item.id else { return };
                let key = CallKey::Item(item_id.into_owned());
                if let Some(args) = item.arguments {
                    out.push(Signal::Authoritative { key: key.clone(), arguments: args.into_owned() });
                }
                out.push(Signal::CallDone { key });
            }
            "response.completed" | "response.incomplete" | "response.done" => {
                self.finished = true;
                out.push(Signal::Finish { reason: kind.trim_start_matches("response.").to_owned() });
            }
            "response.failed" | "error" | "response.error" => {
                let msg = match ev.response {
                    Some(r) => error_message(r.get()),
                    None => error_message(data),
                };
                out.push(Signal::ProviderError { message: msg });
            }
            _ => {}
        }
    }
}
