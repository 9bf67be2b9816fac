//! Non-streaming responses: one complete JSON document (an OpenAI chat completion, a Responses
//! `response` object, an Anthropic message, a Gemini `GenerateContentResponse`, an Ollama
//! `/api/chat` reply with `"done": true`). Its tool calls are read directly, one small reader per
//! dialect: there are no fragments, so there is nothing to accumulate (the seed's last section:
//! an accumulator there is only one more place to fail).
//!
//! [`outcome`] turns such a body into the same [`PipelineOutput`] a stream gives, so the analysis,
//! report, export and verdict work unchanged: the calls (arguments parsed once, exactly as for a
//! stream, so a malformed arguments string is the same parse-failed error), one event (the
//! document), no fragments.

use serde_json::{Map, Value};

use crate::accumulate::{Call, Parsed, parse_once};
use crate::dialect::DialectKind;
use crate::fact::{CallKey, Pos};
use crate::findings::Findings;
use crate::framing::Framing;
use crate::pipeline::{EventKind, EventRecord, FinishMark, PipelineOutput};

/// The event type name given to the one event of a complete response.
pub const EVENT_TYPE: &str = "complete-response";

/// The body as one JSON document, if it is exactly one (surrounding whitespace and a UTF-8 BOM
/// allowed) and an object. Cheap on a stream: an SSE body fails at its first byte, JSON lines
/// after their second line's first byte.
pub fn document(body: &[u8]) -> Option<Map<String, Value>> {
    let body = crate::text::strip_bom(body);
    let first = body.iter().position(|b| !b.is_ascii_whitespace())?;
    if body[first] != b'{' {
        return None;
    }
    let mut it = serde_json::Deserializer::from_slice(&body[first..]).into_iter::<Value>();
    let Some(Ok(Value::Object(doc))) = it.next() else {
        return None;
    };
    // Anything after the document (a second JSON line) makes it a stream.
    if it.next().is_some() {
        return None;
    }
    Some(doc)
}

/// [`document`] over a recording's chunks, without joining them into one body first (a long
/// JSON-lines recording is rejected after its second line, an SSE one at its first byte).
pub fn chunks_are_complete<'a>(chunks: impl Iterator<Item = &'a [u8]>) -> bool {
    let mut chunks = chunks;
    // The first byte that is neither whitespace nor part of a byte order mark.
    let mut first: &[u8] = &[];
    for c in chunks.by_ref() {
        if let Some(i) = c
            .iter()
            .position(|b| !(b.is_ascii_whitespace() || matches!(b, 0xEF | 0xBB | 0xBF)))
        {
            first = &c[i..];
            break;
        }
    }
    if first.first() != Some(&b'{') {
        return false;
    }
    let reader = std::io::BufReader::new(ChunkReader {
        current: first,
        rest: chunks,
    });
    let mut it = serde_json::Deserializer::from_reader(reader).into_iter::<Value>();
    let Some(Ok(Value::Object(doc))) = it.next() else {
        return false;
    };
    it.next().is_none() && shape(&doc).is_some()
}

/// Reads a sequence of byte slices as one stream.
struct ChunkReader<'a, I> {
    current: &'a [u8],
    rest: I,
}

impl<'a, I: Iterator<Item = &'a [u8]>> std::io::Read for ChunkReader<'a, I> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rest.next() {
                Some(c) => self.current = c,
                None => return Ok(0),
            }
        }
        let n = self.current.len().min(buf.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        self.current = &self.current[n..];
        Ok(n)
    }
}

/// Which provider's complete-response shape `doc` has, if any. A streamed chunk (`chat.completion.chunk`,
/// an Ollama line with `"done": false`, a Responses event with a `type`) is not one.
pub fn shape(doc: &Map<String, Value>) -> Option<DialectKind> {
    let s = |k: &str| doc.get(k).and_then(Value::as_str);
    match (s("object"), s("type")) {
        (Some("chat.completion"), _) => return Some(DialectKind::OpenAiChat),
        (Some("response"), _) => return Some(DialectKind::OpenAiResponses),
        (Some("thread.run"), _) => return Some(DialectKind::OpenAiAssistants),
        (_, Some("message")) if doc.get("content").is_some_and(Value::is_array) => {
            return Some(DialectKind::AnthropicMessages);
        }
        _ => {}
    }
    if doc.get("candidates").is_some_and(Value::is_array) && s("object").is_none() {
        return Some(DialectKind::Gemini);
    }
    if doc.get("done") == Some(&Value::Bool(true))
        && doc.get("message").is_some_and(Value::is_object)
    {
        return Some(DialectKind::Ollama);
    }
    // Cohere v2 `/v2/chat`: `message` and a `finish_reason` beside it (Ollama's is `done_reason`).
    if s("finish_reason").is_some()
        && doc.get("message").is_some_and(Value::is_object)
        && doc.get("choices").is_none()
    {
        return Some(DialectKind::Cohere);
    }
    if doc
        .get("output")
        .and_then(|o| o.get("message"))
        .and_then(|m| m.get("content"))
        .is_some_and(Value::is_array)
        && doc.get("stopReason").is_some()
    {
        return Some(DialectKind::BedrockConverse);
    }
    None
}

/// The body is one complete response of a known shape.
pub fn is_complete(body: &[u8]) -> bool {
    document(body).is_some_and(|d| shape(&d).is_some())
}

/// A call read straight from a complete response, before it becomes a [`Call`].
#[derive(Clone, Debug, PartialEq)]
struct RawCall {
    id: Option<String>,
    name: String,
    /// The arguments text: the string the provider sent, or its object written compactly.
    arguments: String,
    object_arguments: bool,
    stated_index: Option<u64>,
    key: CallKey,
    server_tool: Option<String>,
    /// Not a plain function call: the item or block type.
    kind: Option<String>,
    /// Free-form text arguments (a custom tool's input), never parsed as JSON.
    text_input: bool,
}

fn str_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned)
}

/// A string is the arguments text as sent; anything else (an object) is written compactly.
fn args_text(v: Option<&Value>) -> (String, bool) {
    match v {
        None | Some(Value::Null) => (String::new(), false),
        Some(Value::String(s)) => (s.clone(), false),
        Some(other) => (other.to_string(), true),
    }
}

fn openai_chat(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    let mut finish = None;
    let choices = doc.get("choices").and_then(Value::as_array);
    for (ci, choice) in choices.into_iter().flatten().enumerate() {
        let choice_no = choice
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(ci as u64) as u32;
        finish = finish.or_else(|| str_of(choice.get("finish_reason")));
        let tcs = choice
            .get("message")
            .and_then(|m| m.get("tool_calls"))
            .and_then(Value::as_array);
        for (i, tc) in tcs.into_iter().flatten().enumerate() {
            let custom = tc.get("function").is_none() && tc.get("custom").is_some();
            let f = tc.get("function").or_else(|| tc.get("custom"));
            let field = if custom { "input" } else { "arguments" };
            let (arguments, object_arguments) = args_text(f.and_then(|f| f.get(field)));
            let index = tc.get("index").and_then(Value::as_u64);
            calls.push(RawCall {
                id: str_of(tc.get("id")),
                name: str_of(f.and_then(|f| f.get("name"))).unwrap_or_default(),
                arguments,
                object_arguments,
                stated_index: index,
                key: CallKey::Index {
                    choice: choice_no,
                    index: index.unwrap_or(i as u64),
                    generation: 0,
                },
                server_tool: None,
                kind: custom.then(|| "custom".to_owned()),
                text_input: custom,
            });
        }
    }
    finish
}

fn responses(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    let output = doc.get("output").and_then(Value::as_array);
    for (i, item) in output.into_iter().flatten().enumerate() {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let id = str_of(item.get("id"));
        let key = CallKey::Item(id.clone().unwrap_or_else(|| format!("output {i}")));
        let class = crate::dialect::responses::classify(kind);
        if let crate::dialect::responses::ItemClass::Client(ci) = class {
            let name = str_of(item.get("name"))
                .filter(|n| !n.is_empty())
                .or_else(|| ci.tool.map(str::to_owned))
                .unwrap_or_else(|| kind.trim_end_matches("_call").to_owned());
            let value = [ci.field, "action", "operation", "input"]
                .iter()
                .find_map(|f| item.get(*f).filter(|v| !v.is_null()));
            let (arguments, object_arguments) = match value {
                Some(Value::String(t)) if ci.text => (t.clone(), false),
                v => args_text(v),
            };
            calls.push(RawCall {
                id: str_of(item.get("call_id")).or(id),
                name,
                arguments,
                object_arguments,
                stated_index: Some(i as u64),
                key,
                server_tool: None,
                kind: Some(kind.to_owned()),
                text_input: ci.text,
            });
        } else if kind == "function_call" {
            let (arguments, object_arguments) = args_text(item.get("arguments"));
            calls.push(RawCall {
                // The streaming decoder names a function call by its call_id when it has one.
                id: str_of(item.get("call_id")).or(id),
                name: str_of(item.get("name")).unwrap_or_default(),
                arguments,
                object_arguments,
                stated_index: Some(i as u64),
                key,
                server_tool: None,
                kind: None,
                text_input: false,
            });
        } else if class == crate::dialect::responses::ItemClass::Server {
            let name = str_of(item.get("name"))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| kind.trim_end_matches("_call").to_owned());
            let field = |k: &str| item.get(k).map(|v| serde_json::json!({ k: v }).to_string());
            let arguments = match item.get("arguments") {
                Some(Value::String(a)) if !a.is_empty() => a.clone(),
                _ => item
                    .get("action")
                    .map(Value::to_string)
                    .or_else(|| field("queries"))
                    .or_else(|| field("code"))
                    .unwrap_or_default(),
            };
            calls.push(RawCall {
                id,
                name,
                arguments,
                object_arguments: false,
                stated_index: Some(i as u64),
                key,
                server_tool: Some(kind.to_owned()),
                kind: None,
                text_input: false,
            });
        }
    }
    str_of(doc.get("status"))
}

fn anthropic(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    let content = doc.get("content").and_then(Value::as_array);
    for (i, block) in content.into_iter().flatten().enumerate() {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let class = crate::dialect::anthropic::classify(kind);
        if class == crate::dialect::anthropic::BlockClass::Other {
            continue;
        }
        // Anthropic sends `input` as an object (written compactly here); the stream carries its
        // text in deltas. A string `input` is taken as the arguments text.
        let (arguments, _) = args_text(block.get("input"));
        calls.push(RawCall {
            id: str_of(block.get("id")),
            name: str_of(block.get("name")).unwrap_or_default(),
            arguments,
            object_arguments: false,
            stated_index: Some(i as u64),
            key: CallKey::Block(i as u64),
            server_tool: (class == crate::dialect::anthropic::BlockClass::Server)
                .then(|| kind.to_owned()),
            kind: (class == crate::dialect::anthropic::BlockClass::Unknown)
                .then(|| kind.to_owned()),
            text_input: false,
        });
    }
    str_of(doc.get("stop_reason"))
}

fn gemini(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    let mut finish = None;
    let candidates = doc.get("candidates").and_then(Value::as_array);
    for cand in candidates.into_iter().flatten() {
        // A name, or its number under `enum-encoding=int`.
        finish = finish.or_else(|| {
            cand.get("finishReason")
                .and_then(crate::dialect::gemini::finish_reason)
                .map(|(name, _)| name)
        });
        let parts = cand
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let Some(fc) = part.get("functionCall") else {
                continue;
            };
            let n = calls.len() as u32;
            let (arguments, _) = args_text(fc.get("args"));
            calls.push(RawCall {
                id: str_of(fc.get("id")),
                name: str_of(fc.get("name")).unwrap_or_default(),
                arguments,
                object_arguments: true,
                stated_index: None,
                key: CallKey::Ordinal(n),
                server_tool: None,
                kind: None,
                text_input: false,
            });
        }
    }
    finish
}

/// Calls in the OpenAI `{id, type, function: {name, arguments}}` shape (Cohere v2's
/// `message.tool_calls`, an Assistants run's `required_action.submit_tool_outputs.tool_calls`).
fn function_calls(list: Option<&Value>, calls: &mut Vec<RawCall>) {
    for (i, tc) in list
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = tc.get("function");
        let (arguments, object_arguments) = args_text(f.and_then(|f| f.get("arguments")));
        calls.push(RawCall {
            id: str_of(tc.get("id")),
            name: str_of(f.and_then(|f| f.get("name"))).unwrap_or_default(),
            arguments,
            object_arguments,
            stated_index: Some(i as u64),
            key: CallKey::Index {
                choice: 0,
                index: i as u64,
                generation: 0,
            },
            server_tool: None,
            kind: None,
            text_input: false,
        });
    }
}

fn cohere(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    function_calls(doc.get("message").and_then(|m| m.get("tool_calls")), calls);
    str_of(doc.get("finish_reason"))
}

fn assistants(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    let list = doc
        .get("required_action")
        .and_then(|r| r.get("submit_tool_outputs"))
        .and_then(|s| s.get("tool_calls"));
    function_calls(list, calls);
    str_of(doc.get("status"))
}

/// Bedrock Converse: `output.message.content[]` blocks with a `toolUse` (`toolUseId`, `name`,
/// `input` an object); `type: server_tool_use` is run by the provider.
fn bedrock(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    let content = doc
        .get("output")
        .and_then(|o| o.get("message"))
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array);
    for (i, block) in content.into_iter().flatten().enumerate() {
        let Some(tool) = block.get("toolUse") else {
            continue;
        };
        let (arguments, _) = args_text(tool.get("input"));
        let kind = tool.get("type").and_then(Value::as_str);
        calls.push(RawCall {
            id: str_of(tool.get("toolUseId")),
            name: str_of(tool.get("name")).unwrap_or_default(),
            arguments,
            object_arguments: false,
            stated_index: Some(i as u64),
            key: CallKey::Block(i as u64),
            server_tool: kind
                .filter(|k| *k != "tool_use" && k.ends_with("tool_use"))
                .map(str::to_owned),
            kind: None,
            text_input: false,
        });
    }
    str_of(doc.get("stopReason"))
}

fn ollama(doc: &Map<String, Value>, calls: &mut Vec<RawCall>) -> Option<String> {
    let tcs = doc
        .get("message")
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array);
    for tc in tcs.into_iter().flatten() {
        let f = tc.get("function");
        let (arguments, object_arguments) = args_text(f.and_then(|f| f.get("arguments")));
        let n = calls.len() as u32;
        calls.push(RawCall {
            id: str_of(tc.get("id")),
            name: str_of(f.and_then(|f| f.get("name"))).unwrap_or_default(),
            arguments,
            object_arguments,
            stated_index: f.and_then(|f| f.get("index")).and_then(Value::as_u64),
            key: CallKey::Ordinal(n),
            server_tool: None,
            kind: None,
            text_input: false,
        });
    }
    str_of(doc.get("done_reason")).or_else(|| Some("done".into()))
}

/// The tool calls of a complete response of `dialect`, parsed once each, and its finish reason.
pub fn calls(doc: &Map<String, Value>, dialect: DialectKind) -> (Vec<Call>, Option<String>) {
    let mut raw = Vec::new();
    let finish = match dialect {
        DialectKind::OpenAiChat => openai_chat(doc, &mut raw),
        DialectKind::OpenAiResponses => responses(doc, &mut raw),
        DialectKind::AnthropicMessages => anthropic(doc, &mut raw),
        DialectKind::Gemini => gemini(doc, &mut raw),
        DialectKind::Ollama => ollama(doc, &mut raw),
        DialectKind::Cohere => cohere(doc, &mut raw),
        DialectKind::OpenAiAssistants => assistants(doc, &mut raw),
        // Only streams: there is no complete response of its own.
        DialectKind::AiSdkUi => None,
        DialectKind::BedrockConverse => bedrock(doc, &mut raw),
    };
    let calls = raw
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let (parsed, empty) = if r.text_input {
                (Parsed::Ok(Value::String(r.arguments.clone()).into()), false)
            } else {
                parse_once(&r.arguments)
            };
            Call {
                position: i as u32,
                key: r.key,
                stated_index: r.stated_index,
                id: r.id.filter(|s| !s.is_empty()),
                name: r.name,
                raw_arguments: r.arguments.into(),
                parsed,
                empty_arguments: empty,
                object_arguments: r.object_arguments,
                complete: true,
                done_chunk: None,
                fragments: Vec::new(),
                fragment_count: 0,
                name_conflicts: Vec::new(),
                authoritative: None,
                first_resend: None,
                resends: 0,
                server_tool: r.server_tool,
                kind: r.kind,
                text_input: r.text_input,
            }
        })
        .collect();
    (calls, finish)
}

/// A complete response as the [`PipelineOutput`] of a pass: its calls, one event spanning the body
/// (completed in the last of `chunks` network reads), no fragments, finished. `None` when the body
/// is not one complete response (then it is read as a stream). `forced` is `--dialect`: the
/// shape must agree with it.
pub fn outcome(
    body: &[u8],
    chunks: u32,
    t_micros: u64,
    forced: Option<DialectKind>,
    truth: &[String],
) -> Option<PipelineOutput> {
    let doc = document(body)?;
    let dialect = shape(&doc)?;
    if forced.is_some_and(|f| f != dialect) {
        return None;
    }
    let (calls, finish) = calls(&doc, dialect);
    let last = chunks.saturating_sub(1);
    let pos = Pos {
        event: 0,
        chunk: last,
        t_micros,
    };
    let mut findings = Findings::default();
    for c in &calls {
        // The ground truth is compared by value: a provider that sends an object has no
        // arguments text of its own to compare verbatim.
        let t = truth
            .get(c.position as usize)
            .map(String::as_str)
            .filter(|t| !same_value(t, &c.parsed));
        crate::verdict::call_findings(c, t, crate::accumulate::Own::Held(&[]), &mut findings);
    }
    let mut out = PipelineOutput {
        framing: Some(Framing::JsonLines),
        dialect,
        dialect_known: true,
        events: vec![EventRecord {
            span: 0..body.len() as u64,
            chunk: last,
            type_id: 0,
            kind: if calls.is_empty() {
                EventKind::Other
            } else {
                EventKind::ToolCall
            },
            first_fragment: 0,
            fragment_count: 0,
        }],
        event_types: vec![EVENT_TYPE.to_owned()],
        event_count: 1,
        recorded_events: 1,
        finish: Some(FinishMark {
            reason: finish.unwrap_or_else(|| "complete".into()),
            pos,
        }),
        all_calls_complete: !calls.is_empty(),
        bytes: body.len() as u64,
        chunks,
        findings,
        calls,
        ..Default::default()
    };
    out.ending = out.decide_ending();
    Some(out)
}

/// `text` parses to the value `parsed` holds.
fn same_value(text: &str, parsed: &Parsed) -> bool {
    match parsed {
        Parsed::Ok(v) => serde_json::from_str::<Value>(text).is_ok_and(|t| t == **v),
        Parsed::Err { .. } => false,
    }
}

/// The one line `check` prints for a complete response.
pub fn summary(client_calls: usize) -> String {
    format!(
        "not a stream: one complete response, {} parsed directly — no accumulator needed",
        crate::text::plural(client_calls, "call")
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_not_documents() {
        assert!(document(b"data: {\"a\":1}\n\n").is_none());
        assert!(document(b"{\"a\":1}\n{\"b\":2}\n").is_none());
        assert!(document(b"  {\"a\":1}\n").is_some());
        assert!(!is_complete(
            br#"{"object":"chat.completion.chunk","choices":[]}"#
        ));
        assert!(!is_complete(
            br#"{"message":{"role":"assistant"},"done":false}"#
        ));
    }

    #[test]
    fn chunks_are_read_as_one_document() {
        let doc = br#"  {"object":"chat.completion","choices":[]}"#;
        let parts: Vec<&[u8]> = vec![b"", &doc[..5], &doc[5..20], b"", &doc[20..]];
        assert!(chunks_are_complete(parts.iter().copied()));
        let lines: Vec<&[u8]> = vec![&doc[..], b"\n", &doc[..]];
        assert!(!chunks_are_complete(lines.iter().copied()));
        let sse: Vec<&[u8]> = vec![b"data: {}\n\n"];
        assert!(!chunks_are_complete(sse.iter().copied()));
    }

    #[test]
    fn each_shape_is_recognised() {
        let cases = [
            (
                r#"{"object":"chat.completion","choices":[]}"#,
                DialectKind::OpenAiChat,
            ),
            (
                r#"{"object":"response","output":[]}"#,
                DialectKind::OpenAiResponses,
            ),
            (
                r#"{"type":"message","content":[]}"#,
                DialectKind::AnthropicMessages,
            ),
            (r#"{"candidates":[]}"#, DialectKind::Gemini),
            (r#"{"message":{},"done":true}"#, DialectKind::Ollama),
            (
                r#"{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"end_turn"}"#,
                DialectKind::BedrockConverse,
            ),
        ];
        for (body, want) in cases {
            let doc = document(body.as_bytes()).unwrap();
            assert_eq!(shape(&doc), Some(want), "{body}");
        }
    }

    #[test]
    fn a_gemini_finish_reason_sent_as_a_number_is_read_as_its_name() {
        let body = br#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}}}]},"finishReason":1,"safetyRatings":[{"category":8,"probability":1}]}],"usageMetadata":{"promptTokenCount":3}}"#;
        let out = outcome(body, 1, 0, None, &[]).unwrap();
        assert_eq!(out.dialect, DialectKind::Gemini);
        assert_eq!(out.calls.len(), 1);
        assert_eq!(out.finish.map(|f| f.reason).as_deref(), Some("STOP"));
        let body = br#"{"candidates":[{"finishReason":2}]}"#;
        let doc = document(body).unwrap();
        assert_eq!(
            calls(&doc, DialectKind::Gemini).1.as_deref(),
            Some("MAX_TOKENS")
        );
    }

    #[test]
    fn malformed_arguments_fail_as_for_a_stream() {
        let body = br#"{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},"finish_reason":"tool_calls"}]}"#;
        let out = outcome(body, 1, 0, None, &[]).unwrap();
        assert_eq!(out.calls.len(), 1);
        assert!(matches!(out.calls[0].parsed, Parsed::Err { .. }));
        assert!(out.findings.has(crate::findings::FindingKind::ParseFailed));
    }
}
