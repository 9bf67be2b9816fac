//! The bundled recordings (`recordings/*.ron`) as stub specs: the one place they are built from.
//! `tests/it/dialects.rs` rebuilds every entry and compares it with the file on disk
//! (`UPDATE_SNAPSHOTS=1` rewrites the files), and checks that each `quirk-*` recording is its
//! clean twin's spec plus exactly one quirk.

use crate::dialect::DialectKind;

/// Every bundled recording (`recordings/*.ron`), embedded by `build.rs` so the built-in suite
/// works from any folder after `cargo install`: (file name, bytes).
pub const BUILTIN: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/builtin_recordings.rs"));
use crate::recording::Recording;
use crate::stub::{self, Layout, Quirks, StubCall, StubSpec};

/// One bundled recording.
#[derive(Clone, Debug)]
pub struct Bundled {
    /// File name under `recordings/`.
    pub file: &'static str,
    pub spec: StubSpec,
    /// Notes after the stub builder's own.
    pub notes: Vec<String>,
    /// For a quirk recording: the clean recording it differs from only in its quirk.
    pub clean_twin: Option<&'static str>,
}

impl Bundled {
    /// The recording as it is stored.
    pub fn build(&self) -> Recording {
        let mut rec = stub::build(&self.spec);
        rec.meta.notes.extend(self.notes.iter().cloned());
        rec
    }
}

/// The clean OpenAI Chat recording the quirk recordings are twins of.
pub const OPENAI_CHAT_CLEAN: &str = "openai-chat-weather.ron";

/// The calls of the seed's example, which the OpenAI Chat recordings share.
fn seed_calls() -> Vec<StubCall> {
    stub::seed_example().calls
}

/// The calls the other dialects' recordings share.
fn paris_calls() -> Vec<StubCall> {
    vec![
        StubCall {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: r#"{"location":"Paris, France","unit":"celsius"}"#.into(),
        },
        StubCall {
            id: "call_2".into(),
            name: "get_time".into(),
            arguments: r#"{"timezone":"Europe/Paris"}"#.into(),
        },
    ]
}

/// The clean OpenAI Chat spec (`openai-chat-weather.ron`).
pub fn openai_chat_clean() -> StubSpec {
    StubSpec {
        title: "OpenAI Chat Completions: two parallel calls, arguments cut every 5 characters"
            .into(),
        calls: seed_calls(),
        fragment_chars: vec![5],
        ..StubSpec::default()
    }
}

fn quirk(title: &str, layout: Layout, quirks: Quirks) -> StubSpec {
    StubSpec {
        title: title.into(),
        layout,
        quirks,
        ..openai_chat_clean()
    }
}

fn other(
    title: &str,
    dialect: DialectKind,
    fragment_chars: Vec<usize>,
    quirks: Quirks,
) -> StubSpec {
    StubSpec {
        title: title.into(),
        calls: paris_calls(),
        fragment_chars,
        dialect,
        quirks,
        ..StubSpec::default()
    }
}

fn notes(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| (*s).to_owned()).collect()
}

/// Every bundled recording, by file name.
pub fn all() -> Vec<Bundled> {
    let clean = Some(OPENAI_CHAT_CLEAN);
    let q = Quirks::default;
    let seq = Layout::Sequential;
    vec![
        Bundled {
            file: "seed-example.ron",
            spec: stub::seed_example(),
            notes: notes(&[
                "Kept exactly in the seed's own minimal lines: each chunk has only id and choices, each tool-call delta only index, id, function.name and function.arguments (no object, created, model or system_fingerprint, no first delta with role, no opening delta with type and \"arguments\": \"\"). Continuation fragments carry no name, as the seed's prose and its checkpoint ③ say. Real SDKs that need OpenAI's full chunk shape reject it (openai-node: missing role for choice 0); openai-chat-weather.ron is the same calls in the shape OpenAI sends. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: OPENAI_CHAT_CLEAN,
            spec: openai_chat_clean(),
            notes: notes(&[
                "Built in the shape OpenAI sends (as in tests/data/fixtures/openai-chat-*): every chunk has id, object, created, model and system_fingerprint; the first delta is role assistant with content null; each call opens with a delta of index, id, type function, name and \"arguments\": \"\", then the argument fragments; a chunk with finish_reason tool_calls; data: [DONE].",
                "The clean twin of every quirk-*.ron: each of those is this spec plus one quirk. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "quirk-repeated-name.ron",
            spec: quirk(
                "Function name repeated in every fragment (NIM, Fireworks, LiteLLM proxy, old llama.cpp)",
                seq,
                Quirks { repeat_name: true, ..q() },
            ),
            notes: notes(&[
                "The function name is repeated in every continuation fragment. The accumulator keeps one name; concat-fields (openai-python's accumulate_delta) gives get_weatherget_weather. check exits 0.",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-empty-id-continuations.ron",
            spec: quirk(
                "Continuation fragments with \"id\": \"\" (Qwen via DashScope)",
                seq,
                Quirks { empty_id_continuations: true, ..q() },
            ),
            notes: notes(&[
                "Every continuation repeats an empty id; empty means absent, so the real id is kept (overwrite erases it). check exits 0.",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-index-from-1.ron",
            spec: quirk(
                "First tool call at index 1 (Claude behind an OpenAI-compatible gateway)",
                seq,
                Quirks { index_base: 1, ..q() },
            ),
            notes: notes(&[
                "The only tool calls use tool_calls index 1 and 2: the index is a key, not a list position. check exits 0.",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-all-at-index-0.ron",
            spec: quirk(
                "Parallel calls all at index 0, told apart by a new id + name (Ollama /v1, Copilot proxy, SGLang)",
                seq,
                Quirks { all_at_index_zero: true, ..q() },
            ),
            notes: notes(&[
                "Both calls use index 0; the second starts with a new id and a name, so it is a new call. concat-all-style merging gives {…}{…}. check exits 0.",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-interleaved.ron",
            spec: quirk(
                "Interleaved fragments of two parallel calls (0,1,0,1…)",
                Layout::Interleaved,
                q(),
            ),
            notes: notes(&[
                "Allowed by the format: only an index-keyed table keeps the calls apart; next-index-done emits partial arguments. check exits 0.",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-object-arguments.ron",
            spec: quirk(
                "arguments as a JSON object, not a string (llama.cpp server, TGI)",
                seq,
                Quirks { object_arguments: true, ..q() },
            ),
            notes: notes(&[
                "Each call arrives whole in one delta (id, type, name) with its arguments as a JSON object; they are used as is (finding object-arguments). check exits 0.",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-cumulative.ron",
            spec: quirk(
                "Cumulative arguments: each fragment re-sends everything so far (reported for DeepSeek / Baidu Qianfan)",
                seq,
                Quirks { cumulative: true, ..q() },
            ),
            notes: notes(&[
                "Appending gives {\"ci{\"city… and the calls do not parse; sse-replay flags it (cumulative-arguments) and never de-duplicates silently. check exits 1 (the calls fail to parse).",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-truncated.ron",
            spec: quirk(
                "Stream truncated inside the arguments (max_tokens, dropped connection)",
                seq,
                Quirks { truncate: true, ..q() },
            ),
            notes: notes(&[
                "The last fragment, finish_reason and [DONE] never arrive. Chat Completions has no per-call end signal, so both calls are reported incomplete; the second does not parse and its raw text is shown, nothing is invented. check exits 1 (ended without finish).",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "quirk-provider-error.ron",
            spec: quirk(
                "Provider error mid-stream (event: error, overloaded_error)",
                seq,
                Quirks { error_after: Some(2), ..q() },
            ),
            notes: notes(&[
                "An event: error with overloaded_error arrives after two fragments; decoding stops there and what was received is kept. check exits 1 (provider error).",
            ]),
            clean_twin: clean,
        },
        Bundled {
            file: "openai-responses-weather.ron",
            spec: other(
                "OpenAI Responses: two function_call items with .done cross-checks",
                DialectKind::OpenAiResponses,
                vec![5],
                q(),
            ),
            notes: notes(&[
                "Built by the stub builder in the shape of the Responses API stream (as in tests/data/fixtures/vercel-azure-responses-*): response.created and response.in_progress with the response object (created_at, model, status), response.output_item.added (function_call item with call_id and name), response.function_call_arguments.delta keyed by item_id with output_index, response.function_call_arguments.done and response.output_item.done with the full arguments, response.completed with the output and usage; a sequence_number on every event. No [DONE].",
                "The .done events' arguments are the original for checkpoint ① (and an arguments-mismatch finding if they differed). check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "anthropic-weather.ron",
            spec: other(
                "Anthropic Messages: two tool_use blocks after a text block",
                DialectKind::AnthropicMessages,
                vec![6, 3],
                q(),
            ),
            notes: notes(&[
                "Built by the stub builder in the shape of the Anthropic Messages stream (as in tests/data/fixtures/anthropic-messages-tool-use.sse): event: lines, message_start with the whole message and its usage, a text block at index 0, ping, tool_use blocks at index 1 and 2 opened with input: {} and a first partial_json of \"\", content_block_stop for every block, message_delta with stop_reason tool_use and usage, message_stop.",
                "The tool calls are keyed by content-block index, which text blocks share: they start at 1. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "gemini-weather.ron",
            spec: other(
                "Google Gemini: whole-object args, no call id, CRLF framing",
                DialectKind::Gemini,
                vec![5],
                Quirks { crlf: true, ..q() },
            ),
            notes: notes(&[
                "Built by the stub builder in the shape of streamGenerateContent?alt=sse: each functionCall part carries its args as a whole JSON object and no id (export writes id null), then an empty text part with finishReason STOP; every chunk carries usageMetadata, modelVersion and responseId. Lines end with CRLF, as the real API sends them.",
                "check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "gemini-vertex-partial-args.ron",
            spec: StubSpec {
                calls: vec![
                    StubCall {
                        id: "call_1".into(),
                        name: "get_weather".into(),
                        arguments:
                            r#"{"location":"Boston, MA","unit":"fahrenheit","days":3,"hourly":false}"#
                                .into(),
                    },
                    paris_calls().remove(1),
                ],
                ..other(
                    "Vertex AI: arguments streamed as partialArgs (jsonPath + values, willContinue)",
                    DialectKind::Gemini,
                    vec![4],
                    Quirks { partial_args: true, ..q() },
                )
            },
            notes: notes(&[
                "Built by the stub builder in the documented Vertex AI shape for streamed function-call arguments: a part {name, willContinue: true}, then parts with partialArgs [{jsonPath, stringValue|numberValue|boolValue|nullValue, willContinue}], strings cut into 4-character pieces continued with willContinue, and an empty functionCall closing each call; finishReason STOP; every chunk carries usageMetadata, modelVersion and responseId.",
                "sse-replay assembles the pieces into one arguments object when each call closes (finding partial-args). check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "ollama-weather.ron",
            spec: other(
                "Ollama /api/chat: NDJSON, complete tool_calls with object arguments",
                DialectKind::Ollama,
                vec![5],
                q(),
            ),
            notes: notes(&[
                "Built by the stub builder in the shape of Ollama's native /api/chat stream: newline-delimited JSON (no SSE framing), each line with model and created_at, each tool call complete in one line with object arguments and function.index but no id, then the final done: true object with done_reason stop, token counts and durations.",
                "check exits 0.",
            ]),
            clean_twin: None,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_unique_and_twins_exist() {
        let all = all();
        let mut names: Vec<&str> = all.iter().map(|b| b.file).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        for b in &all {
            if let Some(t) = b.clean_twin {
                assert!(names.contains(&t), "{}: twin {t}", b.file);
                assert!(b.file.starts_with("quirk-"), "{}", b.file);
            }
        }
    }
}
