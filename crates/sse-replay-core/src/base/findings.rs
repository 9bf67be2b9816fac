//! Findings: named observations about how a stream deviates from the textbook shape (the quirks in
//! the README's quirk table). Each is shown as a badge on the call, fragment or stream where it was
//! seen. Findings are aggregated: the same kind on the same call is one finding with a count and the
//! location of its first occurrence, so a 700,000-event stream does not produce 700,000 badges.

use serde::Serialize;

/// How much a finding matters to someone writing a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Normal for this provider; worth knowing.
    Info,
    /// A deviation that breaks some naive clients.
    Warn,
    /// Data was lost or a call could not be extracted.
    Error,
}

impl Severity {
    /// The lowercase label (as in JSON): `info`, `warn`, `error`.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Error => "error",
        }
    }
}

macro_rules! finding_kinds {
    ($( $variant:ident = $label:literal, $sev:ident, $explain:literal; )*) => {
        /// Every kind of finding. `label()` is the stable kebab-case name used in JSON output.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum FindingKind { $( $variant, )* }

        impl FindingKind {
            /// All kinds, in declaration order.
            pub const ALL: &'static [FindingKind] = &[ $( FindingKind::$variant, )* ];

            /// Stable kebab-case name (JSON, CLI).
            pub fn label(self) -> &'static str {
                match self { $( FindingKind::$variant => $label, )* }
            }

            /// Default severity.
            pub fn severity(self) -> Severity {
                match self { $( FindingKind::$variant => Severity::$sev, )* }
            }

            /// One or two sentences for a tooltip: what it is and why it matters.
            pub fn explanation(self) -> &'static str {
                match self { $( FindingKind::$variant => $explain, )* }
            }
        }
    };
}

finding_kinds! {
    MissingIndex = "missing-index", Warn, "The tool-call delta has no `index` (Mistral, Gemini's OpenAI-compatible endpoint, old Ollama). Routed by id, else to the most recent call. Clients that require an index crash.";
    InvalidIndex = "invalid-index", Error, "The `index` is not a non-negative integer. Treated as missing, so the call was routed by guesswork.";
    IndexNotFromZero = "index-not-from-zero", Info, "The first tool call's index is not 0 (e.g. Claude behind an OpenAI-compatible gateway uses 1 because text used 0). The index is a key, not a list position.";
    SparseIndex = "sparse-index", Info, "Tool-call indexes skip values. The index is a key, not a list position.";
    ReusedIndexNewCall = "reused-index-new-call", Warn, "A new id and name arrived at an index already in use (Ollama /v1, Copilot proxy, SGLang put parallel calls all at index 0). Started a new call; merging would give `{…}{…}`.";
    FreshIdContinuation = "fresh-id-continuation", Info, "A continuation fragment carried a different id but no name (LM Studio sends a fresh id on every fragment). Treated as a continuation of the same call.";
    RepeatedName = "repeated-name", Warn, "The function name is repeated in continuation fragments (NIM, Fireworks, LiteLLM proxy, old llama.cpp). Appending every string field gives `get_weatherget_weather`.";
    RepeatedId = "repeated-id", Warn, "The call id is repeated in continuation fragments. Appending every string field gives `call_1call_1`.";
    NameConflict = "name-conflict", Error, "A later fragment of the same call carried a different function name.";
    EmptyFieldContinuation = "empty-field-continuation", Info, "Continuation fragments carry `\"id\": \"\"` or explicit `null` for id/type/name (Qwen via DashScope, some gateways). Empty and null mean absent; assigning them erases the real id or name. Only empty or null values count: a continuation that repeats a real id or name is `repeated-id` / `repeated-name`.";
    ObjectArguments = "object-arguments", Warn, "`arguments` arrived as a JSON object, not a string (llama.cpp server, TGI, Ollama native, Gemini). Used as is.";
    WholeCallInOneChunk = "whole-call-in-one-chunk", Info, "The whole call (id, name, complete arguments) arrived in one fragment (Mistral, Groq, Gemini-compatible).";
    FinishInSameChunk = "finish-in-same-chunk", Info, "`finish_reason` arrived in the same chunk as tool-call data. Logic that checks finish before reading the delta drops the call.";
    CumulativeArguments = "cumulative-arguments", Error, "Each fragment re-sends the arguments so far (reported for DeepSeek / Baidu Qianfan). Appending gives `{…}{…}`; sse-replay flags it and never de-duplicates silently.";
    EmptyArguments = "empty-arguments", Info, "The call's arguments were empty or whitespace (a tool without parameters). Parsed as `{}`; `json.loads(\"\")` would fail.";
    InterleavedCalls = "interleaved-calls", Info, "Fragments of parallel calls alternate. Only an index-keyed table keeps them apart; \"done when the next index appears\" emits partial arguments.";
    EndedWithoutFinish = "ended-without-finish", Error, "The stream ended without a finish signal (finish_reason, [DONE], or the dialect's end event): truncated by max_tokens or a dropped connection.";
    NoFinalEvent = "no-final-event", Warn, "Every call was closed, but the response's own final event (Gemini's finishReason, Ollama's done, Anthropic's message_stop, Bedrock's messageStop…) never came: the stream was cut after the last call that arrived, and more calls may have been lost. The calls that came are whole.";
    IncompleteCall = "incomplete-call", Error, "The stream ended before this call's arguments were complete. Its raw text is shown; no result is invented.";
    UnterminatedEvent = "unterminated-event", Warn, "The stream ended inside an event (no blank line after it). Per the WHATWG algorithm the incomplete event is discarded.";
    NonJsonData = "non-json-data", Warn, "An event's data is not JSON (e.g. a gateway wrapping a keep-alive as `data: : keepalive`). Skipped.";
    UnexpectedShape = "unexpected-shape", Warn, "An event's JSON does not have the shape this dialect expects. Skipped.";
    KeepAliveComment = "keep-alive-comment", Info, "SSE comment lines (`: ping`, `: OPENROUTER PROCESSING`). Ignored, per spec.";
    PingEvent = "ping-event", Info, "`ping` events interleave with the data. Ignored for tool calls.";
    EmptyChoices = "empty-choices", Info, "A chunk with `choices: []` (usage chunk). Ignored for tool calls; code that indexes `choices[0]` crashes.";
    DataWithoutSpace = "data-without-space", Info, "`data:` without a space after the colon. Valid SSE: exactly one optional space is stripped.";
    CrlfLineEndings = "crlf-line-endings", Info, "Lines end with CRLF (Gemini, some proxies). Valid SSE; splitting on `\\n` alone leaves a `\\r` in the JSON.";
    CrLineEndings = "cr-line-endings", Warn, "Lines end with a lone CR. Valid SSE, rarely handled by hand-written parsers.";
    DataBeforeEvent = "data-before-event", Info, "A `data:` line came before the `event:` line (Bedrock Mantle). Fields are order-free within an event.";
    MultiLineData = "multi-line-data", Info, "An event had several `data:` lines, joined with `\\n` before parsing.";
    Bom = "bom", Info, "The stream starts with a UTF-8 byte order mark, stripped once.";
    InvalidUtf8 = "invalid-utf8", Error, "The stream contains bytes that are not UTF-8; replaced with U+FFFD.";
    SplitUtf8 = "split-utf8", Info, "A network read ended in the middle of a UTF-8 character. Decoding each read separately yields U+FFFD.";
    SplitFrame = "split-frame", Info, "A network read ended inside a binary AWS event stream frame. A reader that takes each read as whole frames loses or misreads it; the frame's length prefix says how many bytes to wait for.";
    SplitLine = "split-line", Info, "A network read ended in the middle of an SSE line. Splitting each read into lines without buffering truncates the JSON.";
    DoneSentinel = "done-sentinel", Info, "`data: [DONE]` ends the stream. It is a sentinel, never JSON.";
    ProviderError = "provider-error", Error, "The provider reported an error in the stream (`event: error`, or an `error` object). Stopped there; what was received is kept.";
    FragmentAfterFinish = "fragment-after-finish", Warn, "Tool-call data arrived after the finish signal. Kept, but clients that stop at finish lose it.";
    ArgumentsMismatch = "arguments-mismatch", Error, "The reassembled arguments differ from the authoritative full copy the stream (or the recording's ground truth) carries.";
    UnknownField = "unknown-field", Info, "An SSE line had a field name other than event/data/id/retry. Ignored, per spec.";
    NoToolCalls = "no-tool-calls", Warn, "The stream ended with no tool call (a plain text answer, a refusal, or tools not offered). Not an error, but nothing for a client to execute.";
    NothingRecognised = "nothing-recognised", Error, "Nothing in the input matched the dialect: not a server-sent event stream or JSON lines at all (a text file, an HTML error page, an empty body), or events of another dialect than the one forced. No call could be read.";
    DialectGuess = "dialect-guess", Info, "No event identified the dialect; assumed OpenAI Chat Completions (AWS Bedrock ConverseStream for binary AWS event stream frames).";
    ParseFailed = "parse-failed", Error, "The call's complete arguments are not valid JSON. Reported with the parser's error and the raw text.";
    AbnormalFinish = "abnormal-finish", Warn, "The provider finished the response early or abnormally (Responses `response.incomplete`, Anthropic `stop_reason: max_tokens`, Gemini `finishReason` other than STOP, Ollama `done_reason: length`). The stream is finished, but the last call may be cut short.";
    NoCallId = "no-call-id", Info, "The call carries no id (Gemini, Ollama). Clients that key calls by id, or must echo one back with the tool result, have to make one up; export writes `\"id\": null`.";
    ArgumentsOnlyInDone = "arguments-only-in-done", Info, "The arguments came only in the done event (`response.function_call_arguments.done` / `response.output_item.done`), with no `.delta` pieces (some Responses-compatible servers). The correct call carries the done text; a client that only appends deltas gets empty arguments.";
    ServerTool = "server-tool", Info, "A tool the provider runs itself (Anthropic `server_tool_use` / `mcp_tool_use`, Responses `web_search_call`, `file_search_call`, `code_interpreter_call`, `mcp_call`, …). Shown apart: it is not a call the client must execute, and it never changes the verdict.";
    ArgumentsInStart = "arguments-in-start", Info, "The event that opens a call (Cohere `tool-call-start`) already carries a piece of its arguments. The accumulator appends it; a client that appends only the delta events loses the first piece.";
    UnknownCallItem = "unknown-call-item", Warn, "An output item, block or tool call of a type sse-replay does not model carries what looks like a call (a Responses `*_call` item, an Anthropic `*_tool_use` block, a Chat tool call of another `type`). It is read as a call the client executes, so it is never dropped silently; check whether the provider runs it itself.";
    IdMismatch = "id-mismatch", Warn, "A later event names a call under another id than the one it streamed under (e.g. an AI SDK `tool-input-available` whose `toolCallId` differs from the streamed `tool-input-start`). The streamed call is kept; a client that keys calls by id sees two.";
    PartialArgs = "partial-args", Info, "The arguments were streamed as Vertex AI `partialArgs` (a JSON path and a value per piece, `willContinue` on unfinished strings) and assembled into one object when the call closed. Clients that read only `args` get no arguments.";
    FrameCorrupt = "frame-corrupt", Error, "A binary AWS event stream frame failed its checks: a prelude or message CRC32 mismatch, an impossible length, malformed headers, or bytes that are not a frame at all. Skipped to the next valid frame (the message names the byte offset); what it carried is lost, and an AWS SDK raises an error there.";
    UnreadablePayload = "unreadable-payload", Error, "A binary AWS event stream frame arrived whole (its CRCs check out) but its payload cannot be read: an InvokeModelWithResponseStream `chunk` whose `bytes` are missing or not base64, or whose decoded model event is not JSON, or a frame whose `:content-type` says JSON and whose payload is not. The event it carried is lost (the message names the frame's byte offset): an AWS SDK, or the client's JSON parser, fails there.";
    EventTooLarge = "event-too-large", Error, "A line or event was longer than the limit (`--max-event-bytes`): an endless line such as `/dev/zero`, or a broken stream. Reading stopped there; only what came before it is analysed.";
    LostToolCall = "lost-tool-call", Error, "A tool call was lost: an event that names a tool call could not be read (its JSON is cut short, or not the shape the dialect expects), or the response announced tool calls (`finish_reason: tool_calls`, `stop_reason: tool_use`, a Responses `function_call` output item, Gemini's `MALFORMED_FUNCTION_CALL`) and none arrived. Whatever else parsed, the client did not get every call.";
    PreviewContradiction = "preview-contradiction", Info, "A partial-JSON preview of the arguments (jiter's partial mode, as openai-python's typewriter view uses) showed something the final arguments contradict: a number or literal cut short (`3` shown, `31` final), a value that later changed, or a key later removed. A view only: it never changes the verdict.";
}

impl FindingKind {
    /// Decided only once the stream has ended (how it ended, a call's final parse, what never
    /// came): never shown for a cursor before the end or while a stream is still arriving.
    pub fn decided_at_end(self) -> bool {
        matches!(
            self,
            FindingKind::EndedWithoutFinish
                | FindingKind::NoFinalEvent
                | FindingKind::IncompleteCall
                | FindingKind::ParseFailed
                | FindingKind::ArgumentsMismatch
                | FindingKind::UnterminatedEvent
                | FindingKind::NoToolCalls
                | FindingKind::NothingRecognised
                | FindingKind::EmptyArguments
                | FindingKind::WholeCallInOneChunk
                | FindingKind::PreviewContradiction
        )
    }
}

impl Finding {
    /// Whether this finding has happened by chunk `cursor`: one decided at the end only once the
    /// stream `ended` there, any other once its first occurrence has arrived.
    pub fn shown_at(&self, cursor: u32, ended: bool) -> bool {
        if self.kind.decided_at_end() {
            ended
        } else {
            self.first.chunk.is_none_or(|c| c <= cursor)
        }
    }
}

/// Where something happened. All numbers are 0-based positions in the analysis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragment: Option<u32>,
    /// Byte offset in the body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

/// One (aggregated) finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The call (position in stream order) it concerns, if any.
    pub call: Option<u32>,
    /// Where it was first seen.
    pub first: Location,
    /// How many times it was seen (same kind, same call).
    pub count: u64,
    /// Human-readable detail about the first occurrence.
    pub message: String,
}

/// Collects findings, merging repeats of the same kind on the same call.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    list: Vec<Finding>,
    index: std::collections::HashMap<(FindingKind, Option<u32>), usize>,
}

impl Findings {
    /// Record one occurrence.
    pub fn add(
        &mut self,
        kind: FindingKind,
        call: Option<u32>,
        at: Location,
        message: impl FnOnce() -> String,
    ) {
        match self.index.get(&(kind, call)) {
            Some(&i) => self.list[i].count += 1,
            None => {
                self.index.insert((kind, call), self.list.len());
                self.list.push(Finding {
                    kind,
                    call,
                    first: at,
                    count: 1,
                    message: message(),
                });
            }
        }
    }

    /// Record `count` occurrences at once (the first at `at`); nothing when `count` is 0.
    pub fn add_count(
        &mut self,
        kind: FindingKind,
        call: Option<u32>,
        at: Location,
        count: u64,
        message: impl FnOnce() -> String,
    ) {
        if count == 0 {
            return;
        }
        self.add(kind, call, at, message);
        if let Some(&i) = self.index.get(&(kind, call)) {
            self.list[i].count += count - 1;
        }
    }

    /// Whether a kind was recorded (for any call).
    pub fn has(&self, kind: FindingKind) -> bool {
        self.list.iter().any(|f| f.kind == kind)
    }

    /// All findings, in the order first seen.
    pub fn list(&self) -> &[Finding] {
        &self.list
    }

    /// Consume into the list, sorted by severity (worst first), then first location.
    pub fn into_sorted(mut self) -> Vec<Finding> {
        sort(&mut self.list);
        self.list
    }
}

/// Sort findings by severity (worst first), then first location, then call (stable).
pub fn sort(list: &mut [Finding]) {
    list.sort_by(|a, b| {
        b.kind
            .severity()
            .cmp(&a.kind.severity())
            .then(a.first.chunk.cmp(&b.first.chunk))
            .then(a.call.cmp(&b.call))
    });
}
