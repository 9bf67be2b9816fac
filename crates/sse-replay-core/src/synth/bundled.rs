//! The bundled recordings (`recordings/*.ron`) as stub specs: the one place they are built from.
//! The core's `tests/core/dialects.rs` rebuilds every entry and compares it with the file on
//! disk (`UPDATE_SNAPSHOTS=1` rewrites the files), and checks that each `quirk-*` recording is its
//! clean twin's spec plus exactly one quirk. Bedrock's recordings are binary AWS event stream
//! frames (stored as hex in the RON file).

use crate::dialect::DialectKind;
use crate::framing::Framing;

/// Every bundled recording (`recordings/*.ron`), embedded by `build.rs` so the built-in suite
/// works from any folder after `cargo install`: (file name, bytes).
pub const BUILTIN: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/builtin_recordings.rs"));
use crate::recording::Recording;
use crate::stub::{self, Layout, Lead, Quirks, StubCall, StubSpec};

/// One bundled recording.
#[derive(Clone, Debug)]
pub struct Bundled {
    /// File name under `recordings/`.
    pub file: String,
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
/// The clean Gemini JSON-array recording (streamGenerateContent without alt=sse).
pub const GEMINI_ARRAY_CLEAN: &str = "gemini-array-weather.ron";
/// The clean Cohere v2 recording.
pub const COHERE_CLEAN: &str = "cohere-weather.ron";

/// The clean Gemini JSON-array spec.
fn gemini_array_clean() -> StubSpec {
    StubSpec {
        framing: Some(Framing::JsonArray),
        ..other(
            "Google Gemini without alt=sse: one JSON array streamed element by element",
            DialectKind::Gemini,
            vec![5],
            Quirks::default(),
        )
    }
}

/// The clean Cohere v2 spec.
fn cohere_clean() -> StubSpec {
    other(
        "Cohere v2 chat: tool-call-start, -delta, -end keyed by index",
        DialectKind::Cohere,
        vec![5],
        Quirks::default(),
    )
}

/// The clean Anthropic Messages recording the Anthropic quirk recordings are twins of.
pub const ANTHROPIC_CLEAN: &str = "anthropic-weather.ron";

/// The clean Anthropic Messages spec (`anthropic-weather.ron`).
fn anthropic_clean() -> StubSpec {
    other(
        "Anthropic Messages: two tool_use blocks after a text block",
        DialectKind::AnthropicMessages,
        vec![6, 3],
        Quirks::default(),
    )
}

/// The clean Bedrock InvokeModelWithResponseStream recording (Claude's events in `chunk` frames).
pub const INVOKE_MODEL_CLEAN: &str = "bedrock-invoke-model-weather.ron";

/// The clean InvokeModelWithResponseStream spec: [`anthropic_clean`]'s events, each base64 in a
/// binary `chunk` frame.
fn invoke_model_clean() -> StubSpec {
    StubSpec {
        title: "AWS Bedrock InvokeModelWithResponseStream: Claude's Messages events, base64 in chunk frames".into(),
        invoke_model_stream: true,
        ..anthropic_clean()
    }
}

/// The clean Bedrock ConverseStream recording (binary frames) the Bedrock quirks are twins of.
pub const BEDROCK_CLEAN: &str = "bedrock-converse-weather.ron";

/// The clean Bedrock ConverseStream spec (`bedrock-converse-weather.ron`).
fn bedrock_clean() -> StubSpec {
    other(
        "AWS Bedrock ConverseStream: two toolUse blocks after a text block, binary event stream frames",
        DialectKind::BedrockConverse,
        vec![5],
        Quirks::default(),
    )
}

fn bedrock_quirk(title: &str, quirks: Quirks) -> StubSpec {
    StubSpec {
        title: title.into(),
        quirks,
        ..bedrock_clean()
    }
}

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

/// Every bundled recording, by file name: the weather recordings, the quirks, and every shape of
/// real traffic for every dialect ([`shapes`]).
pub fn all() -> Vec<Bundled> {
    let mut all = weather_and_quirks();
    all.extend(shapes());
    all.extend(responses_items());
    all
}

/// The OpenAI Responses calls the client executes that are not function calls: a custom tool
/// (free-form input) and an apply_patch operation (its diff streamed), each from a public
/// recording's shape.
fn responses_items() -> Vec<Bundled> {
    let base = |title: &str, calls: Vec<StubCall>, kind: stub::CallKind| StubSpec {
        title: title.into(),
        dialect: DialectKind::OpenAiResponses,
        calls,
        call_kinds: vec![kind],
        fragment_chars: vec![9, 11, 14],
        gap_micros: 10_000,
        ..StubSpec::default()
    };
    vec![
        Bundled {
            file: "openai-responses-custom-tool.ron".into(),
            spec: base(
                "OpenAI Responses: a custom tool call, its free-form input streamed in pieces",
                vec![call(
                    "call_custom_sql_001",
                    "write_sql",
                    "SELECT * FROM users WHERE age > 25",
                )],
                stub::CallKind::CustomTool,
            ),
            notes: notes(&[
                "The shape of vercel/ai's openai-custom-tool.1.chunks.txt (packages/openai/src/responses/__fixtures__/, Apache-2.0; tests/data/responses-items/): output_item.added with a custom_tool_call item and an empty input, response.custom_tool_call_input.delta pieces (\"SELECT * \", \"FROM users \", \"WHERE age > 25\"), the item done with the whole input, response.completed. A client prints the input as a JSON string. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "openai-responses-apply-patch.ron".into(),
            spec: StubSpec {
                fragment_chars: vec![2, 9, 10, 3],
                ..base(
                    "OpenAI Responses: an apply_patch call creating a file, its diff streamed in pieces",
                    vec![call(
                        "call_kA46f91ZwocQyMCKyyZqRyC5",
                        "apply_patch",
                        r#"{"diff":"+## Shopping Checklist\n+\n+- [ ] Milk\n+- [ ] Bread\n+- [ ] Eggs\n","path":"shopping-checklist.md","type":"create_file"}"#,
                    )],
                    stub::CallKind::ApplyPatch,
                )
            },
            notes: notes(&[
                "The shape of vercel/ai's openai-apply-patch-tool.1.chunks.txt (a live gpt-5.1 capture; packages/openai/src/responses/__fixtures__/, Apache-2.0; tests/data/responses-items/): output_item.added with an apply_patch_call whose operation has an empty diff, response.apply_patch_call_operation_diff.delta pieces, .done with the whole diff, the item done with the whole operation, response.completed. A client prints the operation object as the arguments. check exits 0.",
            ]),
            clean_twin: None,
        },
    ]
}

/// The weather recordings and the quirk recordings.
fn weather_and_quirks() -> Vec<Bundled> {
    let clean = Some(OPENAI_CHAT_CLEAN);
    let q = Quirks::default;
    let seq = Layout::Sequential;
    vec![
        Bundled {
            file: "seed-example.ron".into(),
            spec: stub::seed_example(),
            notes: notes(&[
                "Kept exactly in the seed's own minimal lines: each chunk has only id and choices, each tool-call delta only index, id, function.name and function.arguments (no object, created, model or system_fingerprint, no first delta with role, no opening delta with type and \"arguments\": \"\"). Continuation fragments carry no name, as the seed's prose and its checkpoint ③ say. Real SDKs that need OpenAI's full chunk shape reject it (openai-node: missing role for choice 0); openai-chat-weather.ron is the same calls in the shape OpenAI sends. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: OPENAI_CHAT_CLEAN.into(),
            spec: openai_chat_clean(),
            notes: notes(&[
                "Built in the shape OpenAI sends (as in tests/data/fixtures/openai-chat-*): every chunk has id, object, created, model and system_fingerprint; the first delta is role assistant with content null; each call opens with a delta of index, id, type function, name and \"arguments\": \"\", then the argument fragments; a chunk with finish_reason tool_calls; data: [DONE].",
                "The clean twin of every quirk-*.ron: each of those is this spec plus one quirk. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "quirk-repeated-name.ron".into(),
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
            file: "quirk-empty-id-continuations.ron".into(),
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
            file: "quirk-index-from-1.ron".into(),
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
            file: "quirk-all-at-index-0.ron".into(),
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
            file: "quirk-interleaved.ron".into(),
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
            file: "quirk-object-arguments.ron".into(),
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
            file: "quirk-cumulative.ron".into(),
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
            file: "quirk-truncated.ron".into(),
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
            file: "quirk-provider-error.ron".into(),
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
            file: "openai-responses-weather.ron".into(),
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
            file: ANTHROPIC_CLEAN.into(),
            spec: anthropic_clean(),
            notes: notes(&[
                "Built by the stub builder in the shape of the Anthropic Messages stream (as in tests/data/fixtures/anthropic-messages-tool-use.sse): event: lines, message_start with the whole message and its usage, a text block at index 0, ping, tool_use blocks at index 1 and 2 opened with input: {} and a first partial_json of \"\", content_block_stop for every block, message_delta with stop_reason tool_use and usage, message_stop.",
                "The tool calls are keyed by content-block index, which text blocks share: they start at 1. The clean twin of quirk-anthropic-*.ron. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "quirk-anthropic-truncated.ron".into(),
            spec: StubSpec {
                title: "Anthropic Messages cut inside a tool_use's input_json_delta fragments (a dropped connection)".into(),
                quirks: Quirks { truncate: true, ..q() },
                ..anthropic_clean()
            },
            notes: notes(&[
                "The shape of anthropic-sdk-python's tests/lib/streaming/fixtures/tool_use_response.txt (tests/data/fixtures/anthropic-messages-tool-use.sse), cut inside the second tool_use block: its last input_json_delta, its content_block_stop, message_delta and message_stop never arrive. The first call is complete (its content_block_stop came); the second's input does not parse and its raw text is shown, nothing is invented. The Anthropic SDKs' message snapshot holds a partial parse of the cut input (often {}): a client that prints it prints arguments the stream never gave. check exits 1 (ended without finish).",
            ]),
            clean_twin: Some(ANTHROPIC_CLEAN),
        },
        Bundled {
            file: "quirk-anthropic-error.ron".into(),
            spec: StubSpec {
                title: "Anthropic Messages with an error event inside a tool_use block (overloaded_error)".into(),
                quirks: Quirks { error_after: Some(2), ..q() },
                ..anthropic_clean()
            },
            notes: notes(&[
                "The error event of Anthropic's streaming documentation (docs.anthropic.com, Streaming Messages, \"Error events\": event: error with {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}) arrives after the first tool_use block's opening \"\" and first input_json_delta: mid-call. Decoding stops there and what was received is kept; the call never finished. The Anthropic SDKs raise an APIStatusError (overloaded) from the stream. check exits 1 (provider error).",
            ]),
            clean_twin: Some(ANTHROPIC_CLEAN),
        },
        Bundled {
            file: INVOKE_MODEL_CLEAN.into(),
            spec: invoke_model_clean(),
            notes: notes(&[
                "Built by the stub builder in the shape Bedrock's InvokeModelWithResponseStream sends for Claude (AWS Bedrock user guide, \"Invoke a model with streaming\": each event's chunk.bytes is the model's own JSON event; read by anthropic-sdk-python's lib/bedrock AWSEventStreamDecoder and boto3's invoke_model_with_response_stream): binary AWS event stream frames (application/vnd.amazon.eventstream), each a chunk event whose JSON payload {\"bytes\": base64, \"p\": padding} holds one Anthropic Messages event, the same events as anthropic-weather.ron.",
                "Read with the Anthropic dialect from the decoded payloads; sse-replay test sets AWS_ENDPOINT_URL_BEDROCK_RUNTIME and ANTHROPIC_BEDROCK_BASE_URL. The clean twin of quirk-bedrock-invoke-model-*.ron. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "quirk-bedrock-invoke-model-truncated.ron".into(),
            spec: StubSpec {
                title: "Bedrock InvokeModelWithResponseStream cut inside a tool_use's input_json_delta fragments".into(),
                quirks: Quirks { truncate: true, ..q() },
                ..invoke_model_clean()
            },
            notes: notes(&[
                "As quirk-anthropic-truncated.ron inside InvokeModel chunk frames: every frame that arrived is whole, the one carrying the second call's last input_json_delta and every frame after it never arrive. The first call is complete; the second does not parse. check exits 1 (ended without finish).",
            ]),
            clean_twin: Some(INVOKE_MODEL_CLEAN),
        },
        Bundled {
            file: "quirk-bedrock-invoke-model-exception.ron".into(),
            spec: StubSpec {
                title: "Bedrock InvokeModelWithResponseStream with an exception frame inside a tool_use block".into(),
                quirks: Quirks { error_after: Some(2), ..q() },
                ..invoke_model_clean()
            },
            notes: notes(&[
                "After the first tool_use block's opening \"\" and first input_json_delta an exception frame arrives (:message-type exception, :exception-type modelStreamErrorException, as in tests/data/bedrock/binary/model-stream-error-exception.eventstream.base64.txt): a provider error mid-call. boto3 raises EventStreamError; the Anthropic SDK's Bedrock client raises too. check exits 1 (provider error).",
            ]),
            clean_twin: Some(INVOKE_MODEL_CLEAN),
        },
        Bundled {
            file: "gemini-weather.ron".into(),
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
            file: "gemini-vertex-partial-args.ron".into(),
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
            file: GEMINI_ARRAY_CLEAN.into(),
            spec: gemini_array_clean(),
            notes: notes(&[
                "Built by the stub builder in the shape of streamGenerateContent without ?alt=sse, the REST default: the body is one JSON array, each element a pretty-printed GenerateContentResponse, elements separated by \"\\n,\\r\\n\" and the array closed by \"\\n]\"; served as application/json. Each functionCall part carries its args as a whole object and no id, then an empty text part with finishReason STOP.",
                "An element spans reads: a reader must find each top-level element by its brackets, not by lines or reads. The clean twin of quirk-gemini-array-truncated.ron. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: BEDROCK_CLEAN.into(),
            spec: bedrock_clean(),
            notes: notes(&[
                "Built by the stub builder in the shape Bedrock's ConverseStream sends (as in tests/data/bedrock/binary/): binary AWS event stream frames (application/vnd.amazon.eventstream) with :event-type, :content-type and :message-type headers and correct prelude and message CRC32s; messageStart, a text block at contentBlockIndex 0, each toolUse block opened by contentBlockStart (toolUseId, name), its input as contentBlockDelta string fragments, contentBlockStop for every block, messageStop with stopReason tool_use, metadata with usage; the p padding field in every payload.",
                "The clean twin of every quirk-bedrock-*.ron. The calls are keyed by contentBlockIndex, which the text block shares: they start at 1. boto3's converse_stream and the AWS SDK for JavaScript read it (sse-replay test sets AWS_ENDPOINT_URL_BEDROCK_RUNTIME). check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "quirk-gemini-array-truncated.ron".into(),
            spec: StubSpec {
                title: "Gemini JSON array cut inside an element (a dropped connection, no closing ])".into(),
                quirks: Quirks { truncate: true, ..q() },
                ..gemini_array_clean()
            },
            notes: notes(&[
                "The array never closes: the last element (finishReason STOP) never arrives and the one before it, the second call, is cut a third from its end. The first call is complete; the cut element is discarded (unterminated-event) and the stream ended without finish. check exits 1.",
            ]),
            clean_twin: Some(GEMINI_ARRAY_CLEAN),
        },
        Bundled {
            file: COHERE_CLEAN.into(),
            spec: cohere_clean(),
            notes: notes(&[
                "Built by the stub builder in the shape of Cohere's /v2/chat stream (as in the cassettes of tests/data/cohere-v2): event: lines, message-start, tool-plan-delta pieces, per call tool-call-start with id, type function, name and arguments \"\", a tool-call-delta per fragment and tool-call-end, keyed by index; message-end with finish_reason TOOL_CALL and usage; data: [DONE].",
                "The clean twin of quirk-cohere-args-in-start.ron. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "quirk-cohere-args-in-start.ron".into(),
            spec: StubSpec {
                title: "Cohere v2: the first arguments fragment rides on tool-call-start".into(),
                quirks: Quirks { args_in_start: true, ..q() },
                ..cohere_clean()
            },
            notes: notes(&[
                "tool-call-start carries the call's first arguments fragment, not \"\": a client that appends only tool-call-delta loses it ({\"lo… becomes cation…). The accumulator appends every piece that carries arguments. check exits 0.",
            ]),
            clean_twin: Some(COHERE_CLEAN),
        },
        Bundled {
            file: "openai-assistants-weather.ron".into(),
            spec: other(
                "OpenAI Assistants v2 run: function calls in thread.run.step.delta, whole in requires_action",
                DialectKind::OpenAiAssistants,
                vec![5],
                q(),
            ),
            notes: notes(&[
                "Built by the stub builder in the shape of an Assistants v2 run stream (as in the openai-dotnet session records of tests/data/assistants): thread.run.created, .queued, .in_progress, a tool_calls step (thread.run.step.created, .in_progress), one thread.run.step.delta per fragment keyed by the step and index (the first of each call with id, type, name, arguments \"\" and output null), thread.run.requires_action with every call whole, event: done / data: [DONE].",
                "requires_action is the stream's own original for checkpoints ① and ②. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "ai-sdk-ui-weather.ron".into(),
            spec: other(
                "Vercel AI SDK UI message stream: tool-input-start, -delta, -available",
                DialectKind::AiSdkUi,
                vec![5],
                q(),
            ),
            notes: notes(&[
                "Built by the stub builder in the shape of the AI SDK's UI message stream (toUIMessageStreamResponse, protocol v1): data: lines without event: names, start, start-step, per call tool-input-start (toolCallId, toolName), a tool-input-delta (inputTextDelta) per fragment and tool-input-available with the parsed input, finish-step, finish, data: [DONE].",
                "tool-input-available is the stream's own original for checkpoint ①, compared by value. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "quirk-bedrock-truncated.ron".into(),
            spec: bedrock_quirk(
                "Bedrock ConverseStream truncated inside the arguments (a dropped connection)",
                Quirks { truncate: true, ..q() },
            ),
            notes: notes(&[
                "The last input fragment, its contentBlockStop, messageStop and metadata never arrive; every frame that did arrive is whole. The first call is complete (its contentBlockStop came); the second does not parse and its raw text is shown, nothing is invented. check exits 1 (ended without finish).",
            ]),
            clean_twin: Some(BEDROCK_CLEAN),
        },
        Bundled {
            file: "quirk-bedrock-exception.ron".into(),
            spec: bedrock_quirk(
                "Bedrock ConverseStream with an exception mid-stream (modelStreamErrorException)",
                Quirks { error_after: Some(2), ..q() },
            ),
            notes: notes(&[
                "After two input fragments an exception frame arrives (:message-type exception, :exception-type modelStreamErrorException, a JSON message): a provider error. Decoding stops there and what was received is kept; boto3 raises EventStreamError. check exits 1 (provider error).",
            ]),
            clean_twin: Some(BEDROCK_CLEAN),
        },
        Bundled {
            file: "quirk-bedrock-crc-error.ron".into(),
            spec: bedrock_quirk(
                "Bedrock ConverseStream with a corrupted frame (message CRC32 mismatch)",
                Quirks { crc_error: true, ..q() },
            ),
            notes: notes(&[
                "The frame carrying the third input fragment has a wrong message CRC32: it is skipped (finding frame-corrupt, naming its byte offset), so the first call loses a piece and does not parse. An AWS SDK raises a checksum error at that frame. check exits 1.",
            ]),
            clean_twin: Some(BEDROCK_CLEAN),
        },
        Bundled {
            file: "bedrock-converse-no-arguments.ron".into(),
            spec: StubSpec {
                calls: vec![
                    paris_calls().remove(0),
                    StubCall {
                        id: "call_2".into(),
                        name: "get_time".into(),
                        arguments: String::new(),
                    },
                ],
                ..other(
                    "AWS Bedrock ConverseStream: a toolUse without arguments (input \"\")",
                    DialectKind::BedrockConverse,
                    vec![5],
                    q(),
                )
            },
            notes: notes(&[
                "As bedrock-converse-weather.ron, but get_time takes no arguments: Bedrock sends its toolUse block with one contentBlockDelta whose input is the empty string (as in tests/data/bedrock/json/bedrock-tool-no-args.chunks.txt). Parsed once at the end, \"\" is {} (finding empty-arguments); json.loads(\"\") would fail. check exits 0.",
            ]),
            clean_twin: None,
        },
        Bundled {
            file: "ollama-weather.ron".into(),
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

// ---------------------------------------------------------------------------------------------
// Shapes of real traffic
// ---------------------------------------------------------------------------------------------

/// A shape real streams have (beyond the two parallel calls every weather recording holds), built
/// by the stub builder for every dialect that has it, from the shapes of public recordings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Reasoning before one call (DeepSeek-reasoner's `reasoning_content`, Claude's thinking
    /// block, a Responses reasoning summary, Gemini thought parts, Ollama `thinking`).
    ReasoningOneCall,
    /// A text reply, then four parallel calls (two to the same tool), the last without arguments.
    TextFourParallel,
    /// Each call whole in one chunk: id, name and all its arguments at once (Groq, Mistral).
    WholeCalls,
    /// One call whose long arguments (nested arrays, CJK, escapes) come in hundreds of fragments.
    LongArguments,
    /// A tool the provider runs itself (a web search) beside a client call.
    ServerTool,
}

impl Shape {
    /// Every shape, in file order.
    pub const ALL: [Shape; 5] = [
        Shape::ReasoningOneCall,
        Shape::TextFourParallel,
        Shape::WholeCalls,
        Shape::LongArguments,
        Shape::ServerTool,
    ];

    /// The file name's tail.
    pub fn slug(self) -> &'static str {
        match self {
            Shape::ReasoningOneCall => "reasoning-one-call",
            Shape::TextFourParallel => "text-four-parallel",
            Shape::WholeCalls => "whole-calls",
            Shape::LongArguments => "long-arguments",
            Shape::ServerTool => "server-tool",
        }
    }

    /// Whether the dialect has this shape: server tools only where the dialect reports them,
    /// whole calls only where calls otherwise come in pieces (Gemini and Ollama send every call
    /// whole, so their other recordings already are that shape).
    pub fn applies(self, dialect: DialectKind) -> bool {
        match self {
            Shape::ServerTool => dialect.has_server_tools(),
            // Reasoning is the point of this shape: only where the builder writes it.
            Shape::ReasoningOneCall => dialect.stub_writes_lead(),
            Shape::WholeCalls => dialect.streams_argument_pieces(),
            _ => true,
        }
    }
}

/// The file-name prefix of a dialect's recordings.
fn file_prefix(dialect: DialectKind) -> &'static str {
    match dialect {
        DialectKind::AnthropicMessages => "anthropic",
        other => other.name(),
    }
}

fn call(id: &str, name: &str, arguments: &str) -> StubCall {
    StubCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// Long arguments for one call: a report with nested sections, CJK text, escaped quotes and a
/// newline, numbers, booleans and null (about 650 characters).
pub fn long_arguments() -> String {
    let sections: Vec<serde_json::Value> = (1..=4)
        .map(|i| {
            serde_json::json!({
                "heading": format!("Section {i}: 深圳 → 杭州 route"),
                "body": format!("Day {i}: take the \"G{}\" train at 0{i}:15; 天气晴朗.\nBring water.", 1000 + i * 7),
                "score": f64::from(i) * 1.5,
                "done": i % 2 == 0,
            })
        })
        .collect();
    serde_json::json!({
        "title": "Trip report — 深圳/杭州",
        "sections": sections,
        "tags": ["travel", "rail", "中国"],
        "priority": 2,
        "draft": false,
        "reviewer": null
    })
    .to_string()
}

/// The spec of `shape` for `dialect`.
pub fn shape_spec(shape: Shape, dialect: DialectKind) -> StubSpec {
    let title = |what: &str| format!("{}: {what}", dialect.title());
    let base = StubSpec {
        dialect,
        fragment_chars: if dialect == DialectKind::AnthropicMessages {
            vec![6, 3]
        } else {
            vec![5]
        },
        // Tokens 10 ms apart, as fast providers stream them: the `recorded` variant stays short.
        gap_micros: 10_000,
        ..StubSpec::default()
    };
    match shape {
        Shape::ReasoningOneCall => StubSpec {
            title: title("reasoning before one call, arguments in 1–4 character fragments"),
            lead: Lead::Reasoning(
                "The user wants the weather in Berlin. I should call get_weather with the city and Celsius, since they are in Europe."
                    .into(),
            ),
            calls: vec![call(
                "call_r1",
                "get_weather",
                r#"{"location":"Berlin, Germany","unit":"celsius"}"#,
            )],
            fragment_chars: vec![1, 3, 2, 4],
            ..base
        },
        Shape::TextFourParallel => {
            // Responses sends a parameterless call's arguments as "{}"; the others send nothing.
            let none = if dialect == DialectKind::OpenAiResponses {
                "{}"
            } else {
                ""
            };
            let (title, lead) = if dialect.stub_writes_lead() {
                (
                    title("a text reply, then four parallel calls, the last without arguments"),
                    Lead::Text(
                        "I'll check the weather in both cities, the time in Tokyo and today's alerts."
                            .into(),
                    ),
                )
            } else {
                (
                    title("four parallel calls, the last without arguments"),
                    Lead::None,
                )
            };
            StubSpec {
                title,
                lead,
                calls: vec![
                    call(
                        "call_p1",
                        "get_weather",
                        r#"{"location":"Paris, France","unit":"celsius"}"#,
                    ),
                    call(
                        "call_p2",
                        "get_weather",
                        r#"{"location":"東京","unit":"celsius"}"#,
                    ),
                    call("call_p3", "get_time", r#"{"timezone":"Asia/Tokyo"}"#),
                    call("call_p4", "list_alerts", none),
                ],
                fragment_chars: vec![7, 4],
                ..base
            }
        }
        Shape::WholeCalls => StubSpec {
            title: title("each call whole in one chunk"),
            calls: vec![
                call(
                    "call_w1",
                    "get_weather",
                    r#"{"location":"Austin, TX","unit":"fahrenheit"}"#,
                ),
                call("call_w2", "get_time", "{}"),
            ],
            whole_calls: true,
            quirks: Quirks {
                // Mistral sends the finish reason in the chunk with the (last) whole call.
                finish_with_last_fragment: dialect == DialectKind::OpenAiChat,
                ..Quirks::default()
            },
            ..base
        },
        Shape::LongArguments => StubSpec {
            title: title("one call with long arguments in hundreds of fragments"),
            calls: vec![call("call_l1", "create_report", &long_arguments())],
            fragment_chars: vec![4, 2, 6, 3],
            gap_micros: 5_000,
            quirks: Quirks {
                // Gemini streams arguments in pieces only as Vertex AI's partialArgs.
                partial_args: dialect == DialectKind::Gemini,
                ..Quirks::default()
            },
            ..base
        },
        Shape::ServerTool => StubSpec {
            title: title("a web search the provider runs, then a client call"),
            server_tools: vec![if dialect == DialectKind::OpenAiResponses {
                call(
                    "ws_stub_1",
                    "web_search",
                    r#"{"type":"search","query":"Paris weather today"}"#,
                )
            } else {
                call(
                    "srvtoolu_01WebSearch",
                    "web_search",
                    r#"{"query":"Paris weather today"}"#,
                )
            }],
            calls: vec![call(
                "call_s1",
                "get_weather",
                r#"{"location":"Paris, France","unit":"celsius"}"#,
            )],
            ..base
        },
    }
}

/// Where each shape comes from, for the recording's notes.
fn shape_notes(shape: Shape, dialect: DialectKind) -> Vec<String> {
    let source = match shape {
        Shape::ReasoningOneCall => {
            "The shape of DeepSeek-reasoner's stream (tests/data/fixtures/vercel-deepseek-reasoner-reasoning-then-call.jsonl): a run of reasoning tokens before a single call whose arguments arrive in tiny pieces; written in this dialect's own reasoning form."
        }
        Shape::TextFourParallel => {
            "Parallel calls as gpt-4o sends them (tests/data/fixtures/openai-chat-gpt4o-two-parallel-calls.sse), four instead of two, two of them to the same tool, after a short text reply; the last takes no arguments, as in tests/data/fixtures/vercel-anthropic-tool-no-args.jsonl (a single empty fragment: the arguments are {})."
        }
        Shape::WholeCalls => {
            "Each call arrives whole in one chunk, as Groq and Mistral send them (tests/data/fixtures/vercel-groq-llama-whole-call-empty-args.jsonl, vercel-mistral-no-index.jsonl); the second takes \"{}\"."
        }
        Shape::LongArguments => {
            "Long arguments (nested sections, CJK, escaped quotes and a newline, numbers, booleans, null) cut into 1–4 character fragments, as DeepSeek and Qwen stream them; hundreds of events."
        }
        Shape::ServerTool => {
            "A web search the provider runs itself (Anthropic server_tool_use with its web_search_tool_result block, Responses web_search_call item), then a client call: only the client call is the client's to run (export, check and test leave the search out)."
        }
    };
    let partial = if shape == Shape::TextFourParallel && !dialect.stub_writes_lead() {
        " This dialect's stream is built without the text reply."
    } else if shape == Shape::LongArguments && dialect == DialectKind::Gemini {
        " Gemini streams arguments in pieces only as Vertex AI partialArgs, so that is the form here."
    } else {
        ""
    };
    vec![format!("{source}{partial} check exits 0.")]
}

/// Every shape of real traffic for every dialect that has it (`<dialect>-<shape>.ron`).
pub fn shapes() -> Vec<Bundled> {
    let mut v = Vec::new();
    for dialect in DialectKind::ALL {
        for shape in Shape::ALL {
            if !shape.applies(dialect) {
                continue;
            }
            v.push(Bundled {
                file: format!("{}-{}.ron", file_prefix(dialect), shape.slug()),
                spec: shape_spec(shape, dialect),
                notes: shape_notes(shape, dialect),
                clean_twin: None,
            });
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_unique_and_twins_exist() {
        let all = all();
        let mut names: Vec<&str> = all.iter().map(|b| b.file.as_str()).collect();
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
