//! The stub builder's non-streaming output (`sse-replay stub … --non-streaming`): the complete
//! response a provider returns for the same calls when the request does not ask for a stream —
//! an OpenAI chat completion, a Responses `response` object, an Anthropic message, a Gemini
//! `GenerateContentResponse`, an Ollama `/api/chat` reply with `"done": true`, a Bedrock Converse
//! response — so the stream and
//! its non-streaming twin can be opened side by side (Compare two). The same ground truth as the
//! stream's; fragment lengths, layout and quirks do not apply (there are no fragments).

use serde_json::{Value, json};

use crate::dialect::DialectKind;
use crate::recording::{Recording, RecordingError, ResponseInfo};
use crate::stub::{StubCall, StubSpec};

/// The fixed timestamps the stream stubs use too (2025-01-01T00:00:00Z).
const CREATED_UNIX: u64 = 1_735_689_600;
const CREATED_RFC3339: &str = "2025-01-01T00:00:00Z";

/// Arguments as the JSON object a provider sends; arguments that are not JSON stay a string (a
/// reader then fails to parse them, as it would on the stream).
fn args_value(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}

/// The complete response document for `spec`'s calls in `spec.dialect`; `None` for a dialect
/// that only streams (the AI SDK UI message stream).
pub fn document(spec: &StubSpec) -> Option<Value> {
    let calls = &spec.calls;
    Some(match spec.dialect {
        DialectKind::OpenAiChat => json!({
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": CREATED_UNIX,
            "model": "gpt-4o-2024-08-06",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": calls.iter().map(|c| json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    })).collect::<Vec<_>>(),
                    "refusal": null,
                    "annotations": [],
                },
                "logprobs": null,
                "finish_reason": "tool_calls",
            }],
            "usage": {"prompt_tokens": 80, "completion_tokens": 40, "total_tokens": 120},
            "system_fingerprint": "fp_stub",
        }),
        DialectKind::OpenAiResponses => json!({
            "id": "resp_stub",
            "object": "response",
            "created_at": CREATED_UNIX,
            "status": "completed",
            "error": null,
            "incomplete_details": null,
            "model": "gpt-4.1-2025-04-14",
            "output": calls.iter().enumerate().map(|(i, c)| json!({
                "type": "function_call",
                "id": format!("fc_stub_{i}"),
                "call_id": c.id,
                "name": c.name,
                "arguments": c.arguments,
                "status": "completed",
            })).collect::<Vec<_>>(),
            "parallel_tool_calls": true,
            "usage": {"input_tokens": 80, "output_tokens": 40, "total_tokens": 120},
        }),
        DialectKind::AnthropicMessages => json!({
            "id": "msg_stub",
            "type": "message",
            "role": "assistant",
            "model": "claude-stub",
            // The stream stub's text block first, so each call keeps its block index.
            "content": std::iter::once(json!({"type": "text", "text": "Let me look that up."}))
                .chain(calls.iter().map(|c| json!({
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": args_value(&c.arguments),
                })))
                .collect::<Vec<_>>(),
            "stop_reason": "tool_use",
            "stop_sequence": null,
            "usage": {"input_tokens": 80, "output_tokens": 40},
        }),
        DialectKind::Gemini => json!({
            "candidates": [{
                "content": {
                    "parts": calls.iter().map(|c| json!({
                        "functionCall": {"name": c.name, "args": args_value(&c.arguments)},
                    })).collect::<Vec<_>>(),
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }],
            "usageMetadata": {"promptTokenCount": 80, "candidatesTokenCount": 40, "totalTokenCount": 120},
            "modelVersion": "gemini-2.5-flash",
            "responseId": "stub",
        }),
        DialectKind::Ollama => json!({
            "model": "llama3.2",
            "created_at": CREATED_RFC3339,
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": calls.iter().map(|c: &StubCall| json!({
                    "function": {"name": c.name, "arguments": args_value(&c.arguments)},
                })).collect::<Vec<_>>(),
            },
            "done_reason": "stop",
            "done": true,
            "total_duration": 1_000_000_000u64,
            "eval_count": 40,
        }),
        DialectKind::Cohere => json!({
            "id": "00000000-0000-4000-8000-000000000000",
            "message": {
                "role": "assistant",
                "tool_plan": "I will call the tools.",
                "tool_calls": calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })).collect::<Vec<_>>(),
            },
            "finish_reason": "TOOL_CALL",
            "usage": {"billed_units": {"input_tokens": 50, "output_tokens": 20}, "tokens": {"input_tokens": 500, "output_tokens": 60}},
        }),
        DialectKind::OpenAiAssistants => json!({
            "id": "run_stub",
            "object": "thread.run",
            "created_at": CREATED_UNIX,
            "assistant_id": "asst_stub",
            "thread_id": "thread_stub",
            "status": "requires_action",
            "required_action": {
                "type": "submit_tool_outputs",
                "submit_tool_outputs": {
                    "tool_calls": calls.iter().map(|c| json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    })).collect::<Vec<_>>(),
                },
            },
            "last_error": null,
            "model": "gpt-4o",
        }),
        DialectKind::AiSdkUi => return None,
        // Bedrock Converse (the non-streaming twin of ConverseStream): the stream stub's text
        // block first, so each call keeps its content-block index.
        DialectKind::BedrockConverse => json!({
            "metrics": {"latencyMs": 800},
            "output": {"message": {
                "content": std::iter::once(json!({"text": "Let me look that up."}))
                    .chain(calls.iter().map(|c| json!({"toolUse": {
                        "input": args_value(&c.arguments),
                        "name": c.name,
                        "toolUseId": c.id,
                    }})))
                    .collect::<Vec<_>>(),
                "role": "assistant",
            }},
            "stopReason": "tool_use",
            "usage": {"inputTokens": 80, "outputTokens": 40, "totalTokens": 120},
        }),
    })
}

/// The body as the provider writes it: OpenAI and Gemini pretty-print, Anthropic and Ollama send
/// one compact line.
pub fn body(spec: &StubSpec) -> Result<String, RecordingError> {
    let err = |e: std::io::Error| RecordingError::Io {
        op: "writing the stub",
        path: std::path::PathBuf::new(),
        source: e,
    };
    let doc = document(spec).ok_or_else(|| {
        err(std::io::Error::other(format!(
            "{} has no non-streaming response (it only streams)",
            spec.dialect.name()
        )))
    })?;
    // As each provider writes it: compact, or pretty-printed.
    let text = match spec.dialect {
        DialectKind::AnthropicMessages | DialectKind::Ollama | DialectKind::BedrockConverse => {
            serde_json::to_string(&doc)
        }
        DialectKind::OpenAiChat
        | DialectKind::OpenAiResponses
        | DialectKind::Gemini
        | DialectKind::Cohere
        | DialectKind::OpenAiAssistants
        | DialectKind::AiSdkUi => serde_json::to_string_pretty(&doc),
    };
    text.map(|t| t + "\n")
        .map_err(|e| err(std::io::Error::other(e)))
}

/// The recording of the non-streaming response: the body in one read (or `--read-bytes` reads),
/// all arriving after one gap, `Content-Type: application/json`, the stream stub's ground truth.
pub fn build(spec: &StubSpec) -> Result<Recording, RecordingError> {
    let text = body(spec)?;
    let mut stream = crate::stub::build(spec);
    let bytes = text.into_bytes();
    let t = spec.gap_micros;
    stream.chunks = match spec.read_bytes {
        Some(n) => bytes
            .chunks(n.max(1))
            .map(|b| crate::recording::Chunk {
                t_micros: t,
                bytes: b.to_vec(),
            })
            .collect(),
        None => vec![crate::recording::Chunk { t_micros: t, bytes }],
    };
    stream.meta.title = format!("{} (non-streaming)", spec.title);
    stream.meta.notes.push(
        "Non-streaming: one complete response; its calls are read directly, no accumulator needed."
            .into(),
    );
    stream.response = Some(ResponseInfo {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
    });
    Ok(stream)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_gives_a_complete_response_with_the_same_calls() {
        for d in DialectKind::ALL {
            if d == DialectKind::AiSdkUi {
                assert!(
                    body(&StubSpec {
                        dialect: d,
                        ..crate::stub::seed_example()
                    })
                    .is_err()
                );
                continue;
            }
            let spec = StubSpec {
                dialect: d,
                ..crate::stub::seed_example()
            };
            let text = body(&spec).unwrap();
            let doc = crate::complete::document(text.as_bytes()).unwrap();
            assert_eq!(crate::complete::shape(&doc), Some(d), "{d:?}");
            let (calls, _) = crate::complete::calls(&doc, d);
            let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["get_weather", "get_time"], "{d:?}");
            assert_eq!(
                calls[0].value(),
                Some(&json!({"city": "深圳", "days": 3})),
                "{d:?}"
            );
        }
    }
}
