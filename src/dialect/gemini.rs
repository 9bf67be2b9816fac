//! Google Gemini `streamGenerateContent?alt=sse`: `candidates[].content.parts[].functionCall`
//! with a whole-object `args` and (usually) no id; `finishReason` ends the candidate.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ArgsPiece, CallKey, Fragment, Raw, Signal, error_message, raw_string, truncate};
use crate::findings::FindingKind;

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    candidates: Option<Vec<Candidate<'a>>>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    #[serde(default, borrow)]
    content: Option<Content<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(default, borrow)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(default, borrow)]
    function_call: Option<FunctionCall<'a>>,
}

#[derive(Deserialize)]
struct FunctionCall<'a> {
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    args: Option<&'a RawValue>,
}

/// Decoder state: how many calls so far.
#[derive(Debug, Default)]
pub struct Gemini {
    calls: u32,
}

impl Gemini {
    /// Decode one event.
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Signal>) {
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                out.push(Signal::Finding {
                    kind: FindingKind::NonJsonData,
                    key: None,
                    message: format!("{e}: {}", truncate(data, 80)),
                });
                return;
            }
        };
        if event_type == "error" || chunk.error.is_some_and(|e| e.get() != "null") {
            out.push(Signal::ProviderError { message: error_message(data) });
            return;
        }
        for cand in chunk.candidates.unwrap_or_default() {
            for part in cand.content.and_then(|c| c.parts).unwrap_or_default() {
                let Some(fc) = part.function_call else { continue };
                let key = CallKey::Ordinal(self.calls);
                self.calls += 1;
                let args = match fc.args.map(RawValue::get) {
                    None | Some("null") => Raw::Absent,
                    Some(t) => Raw::Value(ArgsPiece::Object(t.to_owned())),
                };
                out.push(Signal::Fragment(Fragment {
                    key: key.clone(),
                    stated_index: None,
                    id: raw_string(fc.id),
                    name: raw_string(fc.name),
                    args,
                }));
                out.push(Signal::CallDone { key });
            }
            if let Some(reason) = cand.finish_reason {
                out.push(Signal::Finish { reason: reason.into_owned() });
            }
        }
    }
}
