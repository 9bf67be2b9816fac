//! The stub builder (the seed's own method is stub-driven): from calls (name, arguments) and a
//! fragment length in characters, build a recording of an OpenAI Chat Completions stream (or of
//! another dialect's stream, see [`StubSpec::dialect`]; Bedrock ConverseStream as binary AWS event
//! stream frames with correct CRCs), with the original arguments as ground truth. Optional quirks
//! reproduce provider deviations.

use serde_json::{Value, json};

use crate::dialect::DialectKind;
use crate::framing::Framing;
use crate::recording::{Chunk, Meta, Recording, TruthCall};

/// One call to stub.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StubCall {
    pub id: String,
    pub name: String,
    /// The arguments, verbatim (usually JSON).
    pub arguments: String,
}

/// How the calls' fragments are ordered in the stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// All of call 0, then all of call 1, ...
    #[default]
    Sequential,
    /// Round robin: one fragment of each call in turn (0,1,0,1...).
    Interleaved,
}

/// Provider deviations to reproduce.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quirks {
    /// Repeat the function name in every fragment.
    pub repeat_name: bool,
    /// Continuation fragments carry `"id": ""`.
    pub empty_id_continuations: bool,
    /// Leave out `index`.
    pub no_index: bool,
    /// First index (Claude behind a gateway uses 1).
    pub index_base: u64,
    /// Put every call at index 0, told apart by id + name.
    pub all_at_index_zero: bool,
    /// Send arguments as a JSON object in one fragment instead of string fragments.
    pub object_arguments: bool,
    /// Re-send the arguments so far in each fragment.
    pub cumulative: bool,
    /// CRLF line endings.
    pub crlf: bool,
    /// `data:` without a space.
    pub no_space: bool,
    /// A `: keep-alive` comment every N events (0 = none).
    pub keepalive_every: usize,
    /// Leave out `finish_reason` and `[DONE]` and cut the last call short (a truncated stream).
    pub truncate: bool,
    /// Put `finish_reason` in the same chunk as the last fragment.
    pub finish_with_last_fragment: bool,
    /// Insert an `event: error` after this many fragments.
    pub error_after: Option<usize>,
    /// Gemini only: stream the arguments as Vertex AI `partialArgs` instead of a whole `args` object.
    pub partial_args: bool,
    /// Cohere only: `tool-call-start` carries the first arguments fragment (not `""`), so a client
    /// that appends only `tool-call-delta` loses it.
    pub args_in_start: bool,
    /// Binary AWS event streams only: the frame of the fragment after the first two carries a
    /// wrong message CRC32 (a corrupted frame; an AWS SDK raises a checksum error there).
    pub crc_error: bool,
}

/// What the model streams before its calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Lead {
    /// Nothing (an Anthropic stream keeps its short text block, as it always had).
    #[default]
    None,
    /// A text reply, streamed word by word (chat `content`, a Responses message item, an Anthropic
    /// text block, a Gemini text part, Ollama `content`).
    Text(String),
    /// Reasoning, streamed word by word (DeepSeek's `reasoning_content`, a Responses reasoning
    /// summary, an Anthropic thinking block with its signature, a Gemini `thought` part, Ollama
    /// `thinking`).
    Reasoning(String),
}

/// What to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StubSpec {
    pub title: String,
    pub calls: Vec<StubCall>,
    /// Fragment lengths in characters, cycled (e.g. `[5]`).
    pub fragment_chars: Vec<usize>,
    pub layout: Layout,
    /// Cut the body into network reads of this many bytes (splitting characters on purpose);
    /// `None` = one read per event.
    pub read_bytes: Option<usize>,
    /// Time between events.
    pub gap_micros: u64,
    pub quirks: Quirks,
    /// Which provider's stream to build. Which quirks its stream can carry is
    /// [`crate::quirk::Quirk::refusal`]'s answer; the builder ignores the others.
    pub dialect: DialectKind,
    /// OpenAI Chat only: write the seed document's own minimal lines (`id`, `choices`, and the
    /// tool-call fields `index`, `id`, `function.name`, `function.arguments`) instead of what
    /// OpenAI really sends (`object`, `created`, `model`, `system_fingerprint`, a first delta with
    /// `role: "assistant"`, and an opening tool-call delta with `type` and `"arguments": ""`).
    /// Some real SDKs reject these lines (openai-node: `missing role for choice 0`).
    pub minimal: bool,
    /// How the events are framed: `None` is the dialect's own wire (SSE; JSON lines for Ollama).
    /// [`Framing::JsonArray`] writes one JSON array of the events' data (Gemini's
    /// `streamGenerateContent` without `alt=sse`, `[{…}\n,\r\n{…}\n]`; for another dialect a
    /// dump of its chunks); [`Framing::JsonLines`] one data object per line. SSE-only parts
    /// (comments, `[DONE]`) are left out of the JSON framings.
    pub framing: Option<Framing>,
    /// Anthropic Messages only: each event wrapped in a binary AWS event stream `chunk` frame
    /// whose payload is `{"bytes": "<base64 of the event JSON>"}`, as Bedrock's
    /// InvokeModelWithResponseStream sends Claude's stream.
    pub invoke_model_stream: bool,
    /// Text or reasoning streamed before the calls.
    pub lead: Lead,
    /// Every call whole in one chunk (id, name and all its arguments in one delta or event), as
    /// Groq and Mistral send them, instead of cut into `fragment_chars` pieces.
    pub whole_calls: bool,
    /// Tools the provider runs itself, streamed before the client calls (Anthropic
    /// `server_tool_use` with its `web_search_tool_result`, Responses `web_search_call` items; the
    /// arguments are the search's input). Ignored by dialects that have none.
    pub server_tools: Vec<StubCall>,
    /// OpenAI Responses only: what kind of item each call is, by position (a call past the end
    /// is a function call). Other dialects write every call as a function call.
    pub call_kinds: Vec<CallKind>,
}

/// The kind of a Responses item a stub call is written as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallKind {
    /// A `function_call`: arguments streamed by `response.function_call_arguments.delta`.
    #[default]
    Function,
    /// A `custom_tool_call`: the call's arguments are its free-form input, streamed by
    /// `response.custom_tool_call_input.delta` (as in
    /// tests/data/responses-items/openai-custom-tool.1.chunks.txt).
    CustomTool,
    /// An `apply_patch_call`: the call's arguments are its operation object
    /// (`{"type","diff","path"}`), whose `diff` streams by
    /// `response.apply_patch_call_operation_diff.delta` (as in
    /// tests/data/responses-items/openai-apply-patch-tool.1.chunks.txt).
    ApplyPatch,
}

impl StubSpec {
    /// The kind of call `c` (see [`StubSpec::call_kinds`]).
    pub fn call_kind(&self, c: usize) -> CallKind {
        if self.dialect == DialectKind::OpenAiResponses {
            self.call_kinds.get(c).copied().unwrap_or_default()
        } else {
            CallKind::Function
        }
    }

    /// The text call `c` streams in pieces: its arguments, or an apply_patch operation's diff.
    fn streamed_text(&self, c: usize) -> String {
        let call = &self.calls[c];
        match self.call_kind(c) {
            CallKind::ApplyPatch => serde_json::from_str::<Value>(&call.arguments)
                .ok()
                .and_then(|v| v.get("diff").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_default(),
            _ => call.arguments.clone(),
        }
    }
}

impl Default for StubSpec {
    fn default() -> Self {
        Self {
            title: "stub".into(),
            calls: Vec::new(),
            fragment_chars: vec![5],
            layout: Layout::Sequential,
            read_bytes: None,
            gap_micros: 30_000,
            quirks: Quirks::default(),
            dialect: DialectKind::OpenAiChat,
            minimal: false,
            framing: None,
            invoke_model_stream: false,
            lead: Lead::None,
            whole_calls: false,
            server_tools: Vec::new(),
            call_kinds: Vec::new(),
        }
    }
}

/// `text` cut into words, each with the space before it (`"The"`, `" user"`, `" is"`), as
/// providers stream text and reasoning tokens.
pub fn word_pieces(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, w) in text.split(' ').enumerate() {
        if i == 0 {
            out.push(w.to_owned());
        } else {
            out.push(format!(" {w}"));
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// Split `s` into pieces of `lens` characters (cycled), cutting anywhere, mid-string included.
pub fn split_chars(s: &str, lens: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut k = 0;
    while i < chars.len() {
        let n = lens.get(k % lens.len().max(1)).copied().unwrap_or(5).max(1);
        let end = (i + n).min(chars.len());
        out.push(chars[i..end].iter().collect());
        i = end;
        k += 1;
    }
    out
}

/// The seed document's example: get_weather `{"city":"深圳","days":3}` in fragments of 5,5,5,5,2
/// characters and get_time `{"city":"杭州","days":1}` in parallel, in the seed's own minimal lines
/// ([`StubSpec::minimal`]).
pub fn seed_example() -> StubSpec {
    StubSpec {
        title: "The seed's example: two calls in one response, arguments cut every 5 characters"
            .into(),
        calls: vec![
            StubCall {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"深圳","days":3}"#.into(),
            },
            StubCall {
                id: "call_2".into(),
                name: "get_time".into(),
                arguments: r#"{"city":"杭州","days":1}"#.into(),
            },
        ],
        fragment_chars: vec![5],
        layout: Layout::Sequential,
        read_bytes: Some(44),
        gap_micros: 40_000,
        quirks: Quirks::default(),
        dialect: DialectKind::OpenAiChat,
        minimal: true,
        ..StubSpec::default()
    }
}

/// The fixed values the stub writes where a provider sends a timestamp: 2025-01-01T00:00:00Z.
const CREATED_UNIX: u64 = 1_735_689_600;
const CREATED_RFC3339: &str = "2025-01-01T00:00:00Z";

/// Build the recording.
pub fn build(spec: &StubSpec) -> Recording {
    let events = if spec.framing == Some(Framing::JsonArray) && spec.quirks.truncate {
        // An array is cut in its bytes (see `reframe`), not by leaving events out.
        let mut whole = spec.clone();
        whole.quirks.truncate = false;
        events(&whole)
    } else {
        events(spec)
    };
    assemble(spec, reframe(spec, events))
}

/// OpenAI Chat Completions: the seed's own lines ([`StubSpec::minimal`]) or what OpenAI sends,
/// with every chat quirk.
fn openai_chat_events(spec: &StubSpec) -> Vec<Vec<u8>> {
    let q = &spec.quirks;
    // Per call: its fragments (text, or the whole object).
    let per_call: Vec<Vec<String>> = spec
        .calls
        .iter()
        .map(|c| {
            if q.object_arguments {
                vec![c.arguments.clone()]
            } else {
                let mut pieces = if spec.whole_calls {
                    vec![c.arguments.clone()]
                } else {
                    split_chars(&c.arguments, &spec.fragment_chars)
                };
                if pieces.is_empty() {
                    pieces.push(String::new());
                }
                if (q.repeat_name || q.empty_id_continuations) && pieces.len() == 1 {
                    // These quirks live in a call's continuations: a call that would come in
                    // one piece (whole, or shorter than a fragment) comes in two.
                    pieces = halves(&pieces[0]);
                }
                if q.cumulative {
                    pieces = resendable(pieces);
                    let mut acc = String::new();
                    pieces = pieces
                        .into_iter()
                        .map(|p| {
                            acc.push_str(&p);
                            acc.clone()
                        })
                        .collect();
                }
                pieces
            }
        })
        .collect();
    let order = send_order(&per_call, spec.layout, q.truncate);
    let eol = if q.crlf { "\r\n" } else { "\n" };
    let prefix = if q.no_space { "data:" } else { "data: " };
    let mut events: Vec<String> = Vec::new();
    let data_event = |v: &Value| format!("{prefix}{v}{eol}{eol}");
    // One chunk: the seed's minimal envelope, or OpenAI's (as in tests/data/fixtures/openai-chat-*).
    let chunk = |delta: Value, finish: Value| {
        if spec.minimal {
            json!({"id": "chatcmpl-stub", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        } else {
            json!({
                "id": "chatcmpl-stub",
                "object": "chat.completion.chunk",
                "created": CREATED_UNIX,
                "model": "gpt-stub",
                "system_fingerprint": "fp_stub",
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
            })
        }
    };
    let index_of = |c: usize| {
        if q.all_at_index_zero {
            0
        } else {
            q.index_base + c as u64
        }
    };
    // The fields that open a call: OpenAI sends them in a delta of their own, with
    // `"arguments": ""`; the seed's lines (and object arguments) carry the first piece with them.
    let opening = |c: usize| {
        let mut tc = serde_json::Map::new();
        if !q.no_index {
            tc.insert("index".into(), json!(index_of(c)));
        }
        tc.insert("id".into(), json!(spec.calls[c].id));
        if !spec.minimal {
            tc.insert("type".into(), json!("function"));
        }
        tc
    };
    let separate_opening = !spec.minimal && !q.object_arguments && !spec.whole_calls;
    if !spec.minimal {
        events.push(data_event(&chunk(
            json!({"role": "assistant", "content": null}),
            Value::Null,
        )));
    }
    // Text or reasoning first, as DeepSeek-reasoner streams `reasoning_content` (in
    // tests/data/fixtures/vercel-deepseek-reasoner-reasoning-then-call.jsonl).
    match &spec.lead {
        Lead::None => {}
        Lead::Text(text) => {
            for p in word_pieces(text) {
                events.push(data_event(&chunk(json!({"content": p}), Value::Null)));
            }
        }
        Lead::Reasoning(text) => {
            for p in word_pieces(text) {
                events.push(data_event(&chunk(
                    json!({"content": null, "reasoning_content": p}),
                    Value::Null,
                )));
            }
        }
    }
    let last = order.len().saturating_sub(1);
    let error = format!(
        "event: error{eol}{prefix}{}{eol}{eol}",
        json!({"error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    let mut placed = Placed::default();
    for (n, &(c, f)) in order.iter().enumerate() {
        if q.keepalive_every > 0 && n > 0 && n % q.keepalive_every == 0 {
            events.push(format!(": keep-alive{eol}{eol}"));
            placed.keepalive = true;
        }
        if q.error_after == Some(n) {
            events.push(error.clone());
            placed.error = true;
        }
        let call = &spec.calls[c];
        let first = f == 0;
        if first && separate_opening {
            let mut tc = opening(c);
            tc.insert(
                "function".into(),
                json!({"name": call.name, "arguments": ""}),
            );
            events.push(data_event(&chunk(
                json!({"tool_calls": [Value::Object(tc)]}),
                Value::Null,
            )));
        }
        let piece = &per_call[c][f];
        // A call without arguments: its opening delta's `"arguments": ""` was all of them
        // (unless the finish is to ride on this fragment).
        if first
            && separate_opening
            && piece.is_empty()
            && per_call[c].len() == 1
            && !(q.finish_with_last_fragment && n == last)
        {
            continue;
        }
        let mut tc = if first && !separate_opening {
            opening(c)
        } else {
            let mut tc = serde_json::Map::new();
            if !q.no_index {
                tc.insert("index".into(), json!(index_of(c)));
            }
            if q.empty_id_continuations {
                tc.insert("id".into(), json!(""));
            }
            tc
        };
        let mut function = serde_json::Map::new();
        if (first && !separate_opening) || q.repeat_name {
            function.insert("name".into(), json!(call.name));
        }
        if q.object_arguments {
            // No arguments are the empty object, as providers that send objects send them.
            let v = args_value(piece);
            function.insert("arguments".into(), v);
        } else {
            function.insert("arguments".into(), json!(piece));
        }
        tc.insert("function".into(), Value::Object(function));
        let finish = if q.finish_with_last_fragment && n == last && !q.truncate {
            json!("tool_calls")
        } else {
            Value::Null
        };
        placed.fragment_events.push(events.len());
        events.push(data_event(&chunk(
            json!({"tool_calls": [Value::Object(tc)]}),
            finish,
        )));
    }
    if !q.truncate {
        if !q.finish_with_last_fragment {
            events.push(data_event(&chunk(json!({}), json!("tool_calls"))));
        }
        events.push(format!("{prefix}[DONE]{eol}{eol}"));
    }
    let mut events: Vec<Vec<u8>> = events.into_iter().map(String::into_bytes).collect();
    let keepalive = Some(format!(": keep-alive{eol}{eol}").into_bytes());
    placed.place_the_rest(spec, &mut events, keepalive, error.into_bytes(), false);
    events
}

/// Pieces whose cumulative re-sends a reader can see: one re-sends what came before it once
/// two characters came and it is longer, so the first piece has two characters or more and a
/// call that would come in one piece comes in two (when it has three characters or more).
fn resendable(mut pieces: Vec<String>) -> Vec<String> {
    while pieces.len() > 1 && pieces[0].chars().count() < 2 {
        let next = pieces.remove(1);
        pieces[0].push_str(&next);
    }
    if let [whole] = pieces.as_slice()
        && whole.chars().count() >= 3
    {
        let cut = whole.char_indices().nth(2).map_or(whole.len(), |(i, _)| i);
        return vec![whole[..cut].to_owned(), whole[cut..].to_owned()];
    }
    pieces
}

/// `s` in two pieces, cut at its middle character (`""` and `"x"` give a second, empty piece).
fn halves(s: &str) -> Vec<String> {
    let n = s.chars().count();
    let cut = s.char_indices().nth(n / 2).map_or(s.len(), |(i, _)| i);
    if n < 2 {
        vec![s.to_owned(), String::new()]
    } else {
        vec![s[..cut].to_owned(), s[cut..].to_owned()]
    }
}

/// The events in `spec.framing` when it is not the dialect's own: each event's data (a comment
/// or `[DONE]` has none that is JSON, and is left out) as a JSON line, or as an element of one
/// JSON array written the way Gemini's REST endpoint writes it (pretty-printed elements,
/// `\n,\r\n` between them, `\n]` at the end, which goes with the last event). A truncated
/// array is the whole array with its last element gone and the one before it cut a third from
/// its end: a connection dropped inside an element, no `]`.
/// Binary frames are never reframed (the CLI refuses `--framing` for them).
fn reframe(spec: &StubSpec, events: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let native = spec.dialect.native_framing();
    let Some(target) = spec.framing.filter(|f| *f != native) else {
        return events;
    };
    if builds_binary(spec) {
        return events;
    }
    let mut datas: Vec<String> = Vec::new();
    for e in &events {
        let pieces: Vec<String> = if native == Framing::JsonLines {
            vec![String::from_utf8_lossy(e).trim_end().to_owned()]
        } else {
            crate::sse::parse_all([e.as_slice()])
                .into_iter()
                .map(|ev| ev.data)
                .collect()
        };
        datas.extend(
            pieces
                .into_iter()
                .filter(|d| serde_json::from_str::<Value>(d).is_ok_and(|v| v.is_object())),
        );
    }
    let eol = if spec.quirks.crlf { "\r\n" } else { "\n" };
    let text: Vec<String> = match target {
        Framing::JsonLines => datas.into_iter().map(|d| format!("{d}{eol}")).collect(),
        Framing::Sse => datas
            .into_iter()
            .map(|d| format!("data: {d}{eol}{eol}"))
            .collect(),
        Framing::JsonArray => {
            let n = datas.len();
            let mut out: Vec<String> = datas
                .into_iter()
                .enumerate()
                .map(|(i, d)| {
                    let pretty = serde_json::from_str::<Value>(&d)
                        .ok()
                        .and_then(|v| serde_json::to_string_pretty(&v).ok())
                        .unwrap_or(d);
                    let sep = if i == 0 { "[" } else { "\n,\r\n" };
                    let close = if i + 1 == n { "\n]" } else { "" };
                    format!("{sep}{pretty}{close}")
                })
                .collect();
            if n == 0 {
                out.push("[]".into());
            }
            if spec.quirks.truncate {
                if out.len() > 1 {
                    out.pop();
                }
                if let Some(last) = out.last_mut() {
                    // A connection dropped inside the last element: no closing brace, no `]`.
                    let mut cut = last.len() * 2 / 3;
                    while !last.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    last.truncate(cut);
                }
            }
            out
        }
        // Binary frames returned above.
        Framing::AwsEventStream => Vec::new(),
    };
    text.into_iter().map(String::into_bytes).collect()
}

/// Cut the events into chunks and wrap them in a recording with the ground truth.
fn assemble(spec: &StubSpec, events: Vec<Vec<u8>>) -> Recording {
    // Chunks: one per event, or fixed-size reads; times advance per event.
    let mut chunks = Vec::new();
    match spec.read_bytes {
        None => {
            for (i, e) in events.iter().enumerate() {
                chunks.push(Chunk {
                    t_micros: i as u64 * spec.gap_micros,
                    bytes: e.clone(),
                });
            }
        }
        Some(n) => {
            let n = n.max(1);
            let mut ends = Vec::new(); // (end offset, time) of each event
            let mut off = 0u64;
            for (i, e) in events.iter().enumerate() {
                off += e.len() as u64;
                ends.push((off, i as u64 * spec.gap_micros));
            }
            let body: Vec<u8> = events.concat();
            for (k, piece) in body.chunks(n).enumerate() {
                let end = (k * n + piece.len()) as u64;
                // A read arrives when the event containing its last byte was sent.
                let t = ends.iter().find(|(e, _)| *e >= end).map_or(0, |(_, t)| *t);
                chunks.push(Chunk {
                    t_micros: t,
                    bytes: piece.to_vec(),
                });
            }
        }
    }
    Recording {
        version: crate::recording::FORMAT_VERSION,
        meta: Meta {
            title: spec.title.clone(),
            source: "stub".into(),
            created: String::new(),
            dialect: spec.dialect.name().into(),
            notes: vec!["Built by the stub builder; the model's behaviour was not measured (as in the seed).".into()],
            timing_known: true,
            interrupted: false,
        },
        request: None,
        response: None,
        chunks,
        // By call position, as the stream orders them: the provider's own tools come first.
        truth: spec
            .server_tools
            .iter()
            .filter(|_| spec.dialect.has_server_tools())
            .chain(&spec.calls)
            .map(|c| truth_call(spec, c))
            .collect(),
    }
}

/// The ground truth for one call: what a correct reader must end up with. Dialects that send the
/// arguments as a JSON object carry them re-serialized compactly, and Gemini and Ollama carry no id.
fn truth_call(spec: &StubSpec, c: &StubCall) -> TruthCall {
    match spec.dialect {
        DialectKind::OpenAiChat
        | DialectKind::OpenAiResponses
        | DialectKind::AnthropicMessages
        | DialectKind::Cohere
        | DialectKind::OpenAiAssistants
        | DialectKind::AiSdkUi
        | DialectKind::BedrockConverse => TruthCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.clone(),
        },
        DialectKind::Gemini | DialectKind::Ollama => TruthCall {
            id: String::new(),
            name: c.name.clone(),
            arguments: args_value(&c.arguments).to_string(),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Other dialects
// ---------------------------------------------------------------------------------------------

/// The arguments as a JSON value (a string value when they are not JSON).
fn args_value(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        // No arguments: the providers that send objects send `{}`.
        return json!({});
    }
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}

/// Whether `arguments` hold a value to stream piece by piece (Vertex AI's `partialArgs` sends
/// one part per leaf: `{}` has none).
pub fn has_argument_values(arguments: &str) -> bool {
    let mut out = Vec::new();
    leaves("$", &args_value(arguments), &mut out);
    !out.is_empty()
}

/// Writes events in one dialect's framing, honouring the SSE-level quirks.
struct Writer<'a> {
    spec: &'a StubSpec,
    events: Vec<Vec<u8>>,
    fragments: usize,
    /// Where the event quirks went, and which fragment events a stream too short for the
    /// usual places has ([`Placed`]).
    placed: Placed,
}

/// Whether `spec` builds binary AWS event stream frames (Bedrock ConverseStream, or a dialect's
/// events wrapped as InvokeModelWithResponseStream sends them) rather than text.
pub fn builds_binary(spec: &StubSpec) -> bool {
    spec.dialect.native_framing() == Framing::AwsEventStream || spec.invoke_model_stream
}

impl Writer<'_> {
    fn eol(&self) -> &'static str {
        if self.spec.quirks.crlf { "\r\n" } else { "\n" }
    }

    /// An SSE event (for Ollama, one NDJSON line; for Bedrock, one binary frame named `name`;
    /// wrapped as InvokeModelWithResponseStream, one `chunk` frame). `fragment` marks events
    /// carrying arguments, which is where keep-alives and the error and CRC quirks are inserted
    /// (as in the chat builder).
    fn push(&mut self, name: Option<&str>, data: &Value, fragment: bool) {
        let q = &self.spec.quirks;
        let eol = self.eol();
        let binary = builds_binary(self.spec);
        let mut corrupt = false;
        if fragment {
            let n = self.fragments;
            let ndjson = self.spec.dialect.native_framing() == Framing::JsonLines;
            if !ndjson
                && !binary
                && q.keepalive_every > 0
                && n > 0
                && n.is_multiple_of(q.keepalive_every)
            {
                self.events
                    .push(format!(": keep-alive{eol}{eol}").into_bytes());
                self.placed.keepalive = true;
            }
            if q.error_after == Some(n) {
                let bytes = self.error_bytes();
                self.events.push(bytes);
                self.placed.error = true;
            }
            corrupt = binary && q.crc_error && n == 2;
            self.placed.corrupt |= corrupt;
            self.placed.fragment_events.push(self.events.len());
            self.fragments += 1;
        }
        let bytes = if self.spec.invoke_model_stream {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD.encode(data.to_string());
            let payload = json!({"bytes": b64, "p": padding(self.events.len())});
            crate::aws_eventstream::event_frame("chunk", payload.to_string().as_bytes())
        } else if binary {
            crate::aws_eventstream::event_frame(
                name.unwrap_or("message"),
                data.to_string().as_bytes(),
            )
        } else if self.spec.dialect.native_framing() == Framing::JsonLines {
            format!("{data}{eol}").into_bytes()
        } else {
            let prefix = if q.no_space { "data:" } else { "data: " };
            match name {
                Some(n) => format!("event: {n}{eol}{prefix}{data}{eol}{eol}"),
                None => format!("{prefix}{data}{eol}{eol}"),
            }
            .into_bytes()
        };
        let mut bytes = bytes;
        if corrupt && let Some(last) = bytes.last_mut() {
            // The message CRC's last byte: the frame's bytes no longer match it.
            *last ^= 0xff;
        }
        self.events.push(bytes);
    }

    /// The provider's own mid-stream error, as bytes on the wire.
    fn error_bytes(&self) -> Vec<u8> {
        if builds_binary(self.spec) {
            let payload = json!({"message": "Model Stream Error", "originalMessage": "The model stream failed.", "originalStatusCode": 500});
            return crate::aws_eventstream::exception_frame(
                "modelStreamErrorException",
                payload.to_string().as_bytes(),
            );
        }
        self.error_text().into_bytes()
    }

    /// The `data: [DONE]` sentinel (with an `event:` line when `name` is given).
    fn done(&mut self, name: Option<&str>) {
        let eol = self.eol();
        let prefix = if self.spec.quirks.no_space {
            "data:"
        } else {
            "data: "
        };
        self.events.push(
            match name {
                Some(n) => format!("event: {n}{eol}{prefix}[DONE]{eol}{eol}"),
                None => format!("{prefix}[DONE]{eol}{eol}"),
            }
            .into_bytes(),
        );
    }

    /// The provider's own mid-stream error.
    fn error_text(&self) -> String {
        let eol = self.eol();
        let prefix = if self.spec.quirks.no_space {
            "data:"
        } else {
            "data: "
        };
        match self.spec.dialect {
            DialectKind::OpenAiChat
            | DialectKind::AnthropicMessages
            | DialectKind::BedrockConverse => format!(
                "event: error{eol}{prefix}{}{eol}{eol}",
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            ),
            DialectKind::OpenAiResponses => format!(
                "event: error{eol}{prefix}{}{eol}{eol}",
                json!({"type": "error", "code": "server_error", "message": "The server had an error while processing your request.", "param": null})
            ),
            DialectKind::Gemini => format!(
                "{prefix}{}{eol}{eol}",
                json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})
            ),
            DialectKind::Ollama => format!(
                "{}{eol}",
                json!({"error": "an error was encountered while running the model"})
            ),
            DialectKind::Cohere => format!(
                "event: message-end{eol}{prefix}{}{eol}{eol}",
                json!({"type": "message-end", "delta": {"finish_reason": "ERROR", "error": "internal server error"}})
            ),
            DialectKind::OpenAiAssistants => format!(
                "event: error{eol}{prefix}{}{eol}{eol}",
                json!({"code": "server_error", "message": "Sorry, something went wrong."})
            ),
            DialectKind::AiSdkUi => format!(
                "{prefix}{}{eol}{eol}",
                json!({"type": "error", "errorText": "Overloaded"})
            ),
        }
    }
}

/// Per call, its argument fragments; and the order in which (call, fragment) pairs are sent.
fn fragment_plan(spec: &StubSpec) -> (Vec<Vec<String>>, Vec<(usize, usize)>) {
    let per_call: Vec<Vec<String>> = (0..spec.calls.len())
        .map(|c| {
            let text = spec.streamed_text(c);
            let mut pieces = if spec.whole_calls {
                vec![text]
            } else {
                split_chars(&text, &spec.fragment_chars)
            };
            if pieces.is_empty() {
                pieces.push(String::new());
            }
            pieces
        })
        .collect();
    let order = send_order(&per_call, spec.layout, spec.quirks.truncate);
    (per_call, order)
}

/// The order in which (call, fragment) pairs are sent; `truncate` drops the last one (when there
/// is more than one).
fn send_order(per_call: &[Vec<String>], layout: Layout, truncate: bool) -> Vec<(usize, usize)> {
    let mut order = Vec::new();
    match layout {
        Layout::Sequential => {
            for (c, frags) in per_call.iter().enumerate() {
                order.extend((0..frags.len()).map(|f| (c, f)));
            }
        }
        Layout::Interleaved => {
            let longest = per_call.iter().map(Vec::len).max().unwrap_or(0);
            for f in 0..longest {
                for (c, frags) in per_call.iter().enumerate() {
                    if f < frags.len() {
                        order.push((c, f));
                    }
                }
            }
        }
    }
    if truncate && order.len() > 1 {
        order.truncate(order.len() - 1);
    }
    order
}

/// The events in the dialect's own wire framing (SSE; JSON lines for Ollama; binary frames for
/// Bedrock), one builder per dialect.
fn events(spec: &StubSpec) -> Vec<Vec<u8>> {
    let mut w = Writer {
        spec,
        events: Vec::new(),
        fragments: 0,
        placed: Placed::default(),
    };
    match spec.dialect {
        DialectKind::OpenAiChat => return openai_chat_events(spec),
        DialectKind::OpenAiResponses => responses_events(&mut w),
        DialectKind::AnthropicMessages => anthropic_events(&mut w),
        DialectKind::Gemini if spec.quirks.partial_args => gemini_partial_events(&mut w),
        DialectKind::Gemini => gemini_events(&mut w),
        DialectKind::Ollama => ollama_events(&mut w),
        DialectKind::Cohere => cohere_events(&mut w),
        DialectKind::OpenAiAssistants => assistants_events(&mut w),
        DialectKind::AiSdkUi => ai_sdk_events(&mut w),
        DialectKind::BedrockConverse => bedrock_events(&mut w),
    }
    let error = w.error_bytes();
    let ndjson = spec.dialect.native_framing() == Framing::JsonLines;
    let keepalive = (!ndjson && !builds_binary(spec))
        .then(|| format!(": keep-alive{}{}", w.eol(), w.eol()).into_bytes());
    let binary = builds_binary(spec);
    let mut events = w.events;
    w.placed
        .place_the_rest(spec, &mut events, keepalive, error, binary);
    events
}

/// Where the builders put the quirks that are events of their own (a keep-alive comment every
/// Nth fragment, the error before fragment N, the corrupt frame at the third fragment), and the
/// index of each fragment event. A stream with fewer fragments than those places (one short
/// call, whole calls) still carries every quirk asked for: [`Placed::place_the_rest`] puts what
/// was not placed after the stream's first (keep-alive) or last (error, corrupt frame) fragment.
#[derive(Debug, Default)]
struct Placed {
    keepalive: bool,
    error: bool,
    corrupt: bool,
    /// The index in the events of each fragment event, in order.
    fragment_events: Vec<usize>,
}

impl Placed {
    /// Writes the requested event quirks the stream was too short to place where they usually
    /// go. `keepalive` is the comment (`None` where the framing has no comments), `error` the
    /// provider's error event, `binary` whether the events are AWS frames (the CRC quirk).
    fn place_the_rest(
        &self,
        spec: &StubSpec,
        events: &mut Vec<Vec<u8>>,
        keepalive: Option<Vec<u8>>,
        error: Vec<u8>,
        binary: bool,
    ) {
        let q = &spec.quirks;
        // With no fragment event at all (a call without arguments), the quirks go after the
        // first event and before the last one.
        let first = self.fragment_events.first().map_or(1, |&i| i + 1);
        let last = self
            .fragment_events
            .last()
            .copied()
            .unwrap_or(events.len().saturating_sub(2));
        if binary
            && q.crc_error
            && !self.corrupt
            && let Some(frame) = events.get_mut(last).and_then(|e| e.last_mut())
        {
            // The message CRC's last byte: the frame's bytes no longer match it.
            *frame ^= 0xff;
        }
        // The later position first, so the earlier one stays where it was computed.
        if q.error_after.is_some() && !self.error {
            let at = (last + 1).min(events.len());
            events.insert(at, error);
        }
        if let Some(comment) = keepalive.filter(|_| q.keepalive_every > 0 && !self.keepalive) {
            events.insert(first.min(events.len()), comment);
        }
    }
}

/// Cohere v2 chat: `message-start`, a few `tool-plan-delta`, per call `tool-call-start` (id, name,
/// `arguments: ""`), a `tool-call-delta` per fragment and `tool-call-end`, then `message-end` with
/// `finish_reason: TOOL_CALL` and usage, and `data: [DONE]` (as in the Cohere cassettes of
/// tests/data/cohere-v2). Keyed by `index`. With [`Quirks::args_in_start`], the first fragment
/// rides on `tool-call-start`.
fn cohere_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    let (per_call, order) = fragment_plan(spec);
    w.push(
        Some("message-start"),
        &json!({"id": "00000000-0000-4000-8000-000000000000", "type": "message-start", "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}}}),
        false,
    );
    for word in ["I", " will", " call", " the", " tools", "."] {
        w.push(
            Some("tool-plan-delta"),
            &json!({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": word}}}),
            false,
        );
    }
    let in_start = spec.quirks.args_in_start;
    for &(c, f) in &order {
        let call = &spec.calls[c];
        let piece = &per_call[c][f];
        if f == 0 {
            let first = if in_start { piece.as_str() } else { "" };
            w.push(Some("tool-call-start"), &json!({"type": "tool-call-start", "index": c, "delta": {"message": {"tool_calls": {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": first}}}}}), in_start);
        }
        if f > 0 || !in_start {
            w.push(Some("tool-call-delta"), &json!({"type": "tool-call-delta", "index": c, "delta": {"message": {"tool_calls": {"function": {"arguments": piece}}}}}), true);
        }
        if f + 1 == per_call[c].len() {
            w.push(
                Some("tool-call-end"),
                &json!({"type": "tool-call-end", "index": c}),
                false,
            );
        }
    }
    if !spec.quirks.truncate {
        w.push(Some("message-end"), &json!({"type": "message-end", "delta": {"finish_reason": "TOOL_CALL", "usage": {"billed_units": {"input_tokens": 50, "output_tokens": 20}, "tokens": {"input_tokens": 500, "output_tokens": 60}}}}), false);
        w.done(None);
    }
}

/// OpenAI Assistants v2: `thread.run.created`, `.queued`, `.in_progress`, a `tool_calls` step
/// (`thread.run.step.created`, `.in_progress`), one `thread.run.step.delta` per fragment (the first
/// of each call with its `id`, `type` and name, `arguments: ""` and `output: null`), then
/// `thread.run.requires_action` with every call whole, and `event: done` / `data: [DONE]` (as in
/// the openai-dotnet session records of tests/data/assistants).
fn assistants_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    let (per_call, order) = fragment_plan(spec);
    let tools: Vec<Value> = spec
        .calls
        .iter()
        .map(|c| json!({"type": "function", "function": {"name": c.name, "parameters": {"type": "object"}, "strict": false}}))
        .collect();
    let run = |status: &str, required: Value| json!({"id": "run_stub", "object": "thread.run", "created_at": CREATED_UNIX, "assistant_id": "asst_stub", "thread_id": "thread_stub", "status": status, "required_action": required, "last_error": null, "model": "gpt-stub", "instructions": null, "tools": tools, "parallel_tool_calls": true});
    for status in ["created", "queued", "in_progress"] {
        let name = format!("thread.run.{status}");
        let st = if status == "created" {
            "queued"
        } else {
            status
        };
        w.push(Some(&name), &run(st, Value::Null), false);
    }
    let step = |status: &str| json!({"id": "step_stub", "object": "thread.run.step", "created_at": CREATED_UNIX, "run_id": "run_stub", "assistant_id": "asst_stub", "thread_id": "thread_stub", "type": "tool_calls", "status": status, "step_details": {"type": "tool_calls", "tool_calls": []}, "usage": null});
    w.push(Some("thread.run.step.created"), &step("in_progress"), false);
    w.push(
        Some("thread.run.step.in_progress"),
        &step("in_progress"),
        false,
    );
    let delta = |tc: Value| json!({"id": "step_stub", "object": "thread.run.step.delta", "delta": {"step_details": {"type": "tool_calls", "tool_calls": [tc]}}});
    for &(c, f) in &order {
        let call = &spec.calls[c];
        if f == 0 {
            w.push(Some("thread.run.step.delta"), &delta(json!({"index": c, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": "", "output": null}})), false);
        }
        w.push(
            Some("thread.run.step.delta"),
            &delta(
                json!({"index": c, "type": "function", "function": {"arguments": per_call[c][f]}}),
            ),
            true,
        );
    }
    if !spec.quirks.truncate {
        let calls: Vec<Value> = spec
            .calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
        let required =
            json!({"type": "submit_tool_outputs", "submit_tool_outputs": {"tool_calls": calls}});
        w.push(
            Some("thread.run.requires_action"),
            &run("requires_action", required),
            false,
        );
        w.done(Some("done"));
    }
}

/// The Vercel AI SDK UI message stream: `start`, `start-step`, per call `tool-input-start`
/// (`toolCallId`, `toolName`), a `tool-input-delta` per fragment and `tool-input-available` with
/// the parsed input, `finish-step`, `finish`, and `data: [DONE]`; no `event:` lines.
fn ai_sdk_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    let (per_call, order) = fragment_plan(spec);
    w.push(
        None,
        &json!({"type": "start", "messageId": "msg-stub"}),
        false,
    );
    w.push(None, &json!({"type": "start-step"}), false);
    for &(c, f) in &order {
        let call = &spec.calls[c];
        if f == 0 {
            w.push(
                None,
                &json!({"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name}),
                false,
            );
        }
        w.push(None, &json!({"type": "tool-input-delta", "toolCallId": call.id, "inputTextDelta": per_call[c][f]}), true);
        if f + 1 == per_call[c].len() {
            w.push(None, &json!({"type": "tool-input-available", "toolCallId": call.id, "toolName": call.name, "input": args_value(&call.arguments)}), false);
        }
    }
    if !spec.quirks.truncate {
        w.push(None, &json!({"type": "finish-step"}), false);
        w.push(None, &json!({"type": "finish"}), false);
        w.done(None);
    }
}

/// The `p` field AWS adds to every payload: a random-length prefix of the alphabet, so an
/// observer cannot tell the content from the frame sizes. Here its length follows the frame's
/// number, so the stub stays deterministic.
fn padding(n: usize) -> &'static str {
    const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    &ALPHABET[..(n * 17 + 5) % ALPHABET.len()]
}

/// Bedrock ConverseStream as AWS sends it (as in tests/data/bedrock/binary/): binary frames with
/// `:event-type`, `:content-type` and `:message-type` headers; `messageStart`, a text block at
/// index 0 (so the toolUse blocks start at 1), each call opened by a `contentBlockStart` with
/// `start.toolUse` (`name`, `toolUseId`), its input in `contentBlockDelta` string fragments, a
/// `contentBlockStop` for every block, `messageStop` with `stopReason: tool_use`, and `metadata`
/// with usage and latency; keys in alphabetical order and the `p` padding in every payload.
fn bedrock_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    let (per_call, order) = fragment_plan(spec);
    let p = |w: &Writer<'_>| padding(w.events.len());
    let pad = p(w);
    w.push(
        Some("messageStart"),
        &json!({"p": pad, "role": "assistant"}),
        false,
    );
    let pad = p(w);
    w.push(
        Some("contentBlockDelta"),
        &json!({"contentBlockIndex": 0, "delta": {"text": "Let me look that up."}, "p": pad}),
        false,
    );
    let pad = p(w);
    w.push(
        Some("contentBlockStop"),
        &json!({"contentBlockIndex": 0, "p": pad}),
        false,
    );
    for &(c, f) in &order {
        let call = &spec.calls[c];
        let index = c + 1;
        if f == 0 {
            let pad = p(w);
            w.push(Some("contentBlockStart"), &json!({"contentBlockIndex": index, "p": pad, "start": {"toolUse": {"name": call.name, "toolUseId": call.id}}}), false);
        }
        let pad = p(w);
        w.push(Some("contentBlockDelta"), &json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": per_call[c][f]}}, "p": pad}), true);
        if f + 1 == per_call[c].len() {
            let pad = p(w);
            w.push(
                Some("contentBlockStop"),
                &json!({"contentBlockIndex": index, "p": pad}),
                false,
            );
        }
    }
    if !spec.quirks.truncate {
        let pad = p(w);
        w.push(
            Some("messageStop"),
            &json!({"p": pad, "stopReason": "tool_use"}),
            false,
        );
        let pad = p(w);
        w.push(Some("metadata"), &json!({"metrics": {"latencyMs": 800}, "p": pad, "usage": {"inputTokens": 50, "outputTokens": 20, "serverToolUsage": {}, "totalTokens": 70}}), false);
    }
}

/// OpenAI Responses: `response.created` and `response.in_progress` (a response object with
/// `created_at`), `output_item.added` before a call's first delta, `.done` and `output_item.done`
/// (with the full arguments) after its last, `response.completed` with the output and usage at the
/// end; every event carries its `sequence_number`, as in tests/data/fixtures/vercel-azure-responses-*.
fn responses_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    let (per_call, order) = fragment_plan(spec);
    let item = |c: usize| format!("fc_stub_{}", c + 1);
    let mut seq = 0u64;
    let mut next_seq = || {
        seq += 1;
        seq - 1
    };
    let resp = |status: &str, output: Vec<Value>| {
        let usage = if status == "completed" {
            json!({"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 70})
        } else {
            Value::Null
        };
        json!({
            "id": "resp_stub",
            "object": "response",
            "created_at": CREATED_UNIX,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "instructions": null,
            "model": "gpt-stub",
            "output": output,
            "parallel_tool_calls": true,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage
        })
    };
    for kind in ["response.created", "response.in_progress"] {
        w.push(
            Some(kind),
            &json!({"type": kind, "sequence_number": next_seq(), "response": resp("in_progress", vec![])}),
            false,
        );
    }
    let mut done_items = Vec::new();
    // Reasoning or a message first, then the provider's own tools, then the function calls.
    let mut output_index = 0usize;
    match &spec.lead {
        Lead::None => {}
        Lead::Reasoning(text) => {
            let (id, oi) = ("rs_stub", output_index);
            output_index += 1;
            let added = json!({"id": id, "type": "reasoning", "summary": []});
            w.push(Some("response.output_item.added"), &json!({"type": "response.output_item.added", "sequence_number": next_seq(), "output_index": oi, "item": added}), false);
            w.push(Some("response.reasoning_summary_part.added"), &json!({"type": "response.reasoning_summary_part.added", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}), false);
            for p in word_pieces(text) {
                w.push(Some("response.reasoning_summary_text.delta"), &json!({"type": "response.reasoning_summary_text.delta", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "summary_index": 0, "delta": p}), false);
            }
            w.push(Some("response.reasoning_summary_text.done"), &json!({"type": "response.reasoning_summary_text.done", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "summary_index": 0, "text": text}), false);
            w.push(Some("response.reasoning_summary_part.done"), &json!({"type": "response.reasoning_summary_part.done", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "summary_index": 0, "part": {"type": "summary_text", "text": text}}), false);
            let it = json!({"id": id, "type": "reasoning", "summary": [{"type": "summary_text", "text": text}]});
            w.push(Some("response.output_item.done"), &json!({"type": "response.output_item.done", "sequence_number": next_seq(), "output_index": oi, "item": it.clone()}), false);
            done_items.push(it);
        }
        Lead::Text(text) => {
            let (id, oi) = ("msg_stub", output_index);
            output_index += 1;
            let added = json!({"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []});
            w.push(Some("response.output_item.added"), &json!({"type": "response.output_item.added", "sequence_number": next_seq(), "output_index": oi, "item": added}), false);
            w.push(Some("response.content_part.added"), &json!({"type": "response.content_part.added", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}}), false);
            for p in word_pieces(text) {
                w.push(Some("response.output_text.delta"), &json!({"type": "response.output_text.delta", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "content_index": 0, "delta": p}), false);
            }
            w.push(Some("response.output_text.done"), &json!({"type": "response.output_text.done", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "content_index": 0, "text": text}), false);
            let part = json!({"type": "output_text", "annotations": [], "text": text});
            w.push(Some("response.content_part.done"), &json!({"type": "response.content_part.done", "sequence_number": next_seq(), "item_id": id, "output_index": oi, "content_index": 0, "part": part}), false);
            let it = json!({"id": id, "type": "message", "status": "completed", "role": "assistant", "content": [part]});
            w.push(Some("response.output_item.done"), &json!({"type": "response.output_item.done", "sequence_number": next_seq(), "output_index": oi, "item": it.clone()}), false);
            done_items.push(it);
        }
    }
    for t in &spec.server_tools {
        let oi = output_index;
        output_index += 1;
        let added = json!({"id": t.id, "type": "web_search_call", "status": "in_progress"});
        w.push(Some("response.output_item.added"), &json!({"type": "response.output_item.added", "sequence_number": next_seq(), "output_index": oi, "item": added}), false);
        for step in ["in_progress", "searching", "completed"] {
            let kind = format!("response.web_search_call.{step}");
            w.push(Some(&kind), &json!({"type": kind, "sequence_number": next_seq(), "output_index": oi, "item_id": t.id}), false);
        }
        let it = json!({"id": t.id, "type": "web_search_call", "status": "completed", "action": args_value(&t.arguments)});
        w.push(Some("response.output_item.done"), &json!({"type": "response.output_item.done", "sequence_number": next_seq(), "output_index": oi, "item": it.clone()}), false);
        done_items.push(it);
    }
    let at = |c: usize| output_index + c;
    for &(c, f) in &order {
        let call = &spec.calls[c];
        let last_of_call = f + 1 == per_call[c].len();
        match spec.call_kind(c) {
            CallKind::Function => {}
            CallKind::CustomTool => {
                let id = format!("ctc_stub_{}", c + 1);
                if f == 0 {
                    let it = json!({"type": "custom_tool_call", "id": id, "call_id": call.id, "name": call.name, "input": ""});
                    w.push(Some("response.output_item.added"), &json!({"type": "response.output_item.added", "sequence_number": next_seq(), "output_index": at(c), "item": it}), false);
                }
                let delta = json!({"type": "response.custom_tool_call_input.delta", "sequence_number": next_seq(), "item_id": id, "output_index": at(c), "delta": per_call[c][f]});
                w.push(Some("response.custom_tool_call_input.delta"), &delta, true);
                if last_of_call {
                    w.push(Some("response.custom_tool_call_input.done"), &json!({"type": "response.custom_tool_call_input.done", "sequence_number": next_seq(), "item_id": id, "output_index": at(c), "input": call.arguments}), false);
                    let it = json!({"type": "custom_tool_call", "id": id, "call_id": call.id, "name": call.name, "input": call.arguments, "status": "completed"});
                    w.push(Some("response.output_item.done"), &json!({"type": "response.output_item.done", "sequence_number": next_seq(), "output_index": at(c), "item": it.clone()}), false);
                    done_items.push(it);
                }
                continue;
            }
            CallKind::ApplyPatch => {
                let id = format!("apc_stub_{}", c + 1);
                let op = args_value(&call.arguments);
                if f == 0 {
                    let mut opening = op.clone();
                    if let Some(o) = opening.as_object_mut() {
                        o.insert("diff".into(), json!(""));
                    }
                    let it = json!({"id": id, "type": "apply_patch_call", "status": "in_progress", "call_id": call.id, "operation": opening});
                    w.push(Some("response.output_item.added"), &json!({"type": "response.output_item.added", "sequence_number": next_seq(), "output_index": at(c), "item": it}), false);
                }
                let delta = json!({"type": "response.apply_patch_call_operation_diff.delta", "sequence_number": next_seq(), "item_id": id, "output_index": at(c), "delta": per_call[c][f]});
                w.push(
                    Some("response.apply_patch_call_operation_diff.delta"),
                    &delta,
                    true,
                );
                if last_of_call {
                    w.push(Some("response.apply_patch_call_operation_diff.done"), &json!({"type": "response.apply_patch_call_operation_diff.done", "sequence_number": next_seq(), "item_id": id, "output_index": at(c), "diff": op.get("diff").cloned().unwrap_or(Value::Null)}), false);
                    let it = json!({"id": id, "type": "apply_patch_call", "status": "completed", "call_id": call.id, "operation": op});
                    w.push(Some("response.output_item.done"), &json!({"type": "response.output_item.done", "sequence_number": next_seq(), "output_index": at(c), "item": it.clone()}), false);
                    done_items.push(it);
                }
                continue;
            }
        }
        if f == 0 {
            let it = json!({"id": item(c), "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call.id, "name": call.name});
            w.push(Some("response.output_item.added"), &json!({"type": "response.output_item.added", "sequence_number": next_seq(), "output_index": at(c), "item": it}), false);
        }
        let delta = json!({"type": "response.function_call_arguments.delta", "sequence_number": next_seq(), "item_id": item(c), "output_index": at(c), "delta": per_call[c][f]});
        w.push(Some("response.function_call_arguments.delta"), &delta, true);
        if last_of_call {
            let it = json!({"id": item(c), "type": "function_call", "status": "completed", "arguments": call.arguments, "call_id": call.id, "name": call.name});
            w.push(Some("response.function_call_arguments.done"), &json!({"type": "response.function_call_arguments.done", "sequence_number": next_seq(), "item_id": item(c), "output_index": at(c), "arguments": call.arguments}), false);
            w.push(Some("response.output_item.done"), &json!({"type": "response.output_item.done", "sequence_number": next_seq(), "output_index": at(c), "item": it.clone()}), false);
            done_items.push(it);
        }
    }
    if !spec.quirks.truncate {
        w.push(Some("response.completed"), &json!({"type": "response.completed", "sequence_number": next_seq(), "response": resp("completed", done_items)}), false);
    }
}

/// Anthropic Messages: `message_start` with the whole message and its usage, a text block at
/// index 0 (so the tool_use blocks start at 1), `ping`, each tool_use block opened with
/// `input: {}` and a first `partial_json` of `""`, `content_block_stop` for every block,
/// `message_delta` with `stop_reason: tool_use` and usage, `message_stop` (as in
/// tests/data/fixtures/anthropic-messages-tool-use.sse).
fn anthropic_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    let (per_call, order) = fragment_plan(spec);
    let message = json!({"id": "msg_stub", "type": "message", "role": "assistant", "model": "claude-stub", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 50, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1, "service_tier": "standard"}});
    w.push(
        Some("message_start"),
        &json!({"type": "message_start", "message": message}),
        false,
    );
    // A thinking block (with its signature) before the text, when the model reasons first.
    let mut index = 0usize;
    if let Lead::Reasoning(text) = &spec.lead {
        w.push(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}), false);
        for p in word_pieces(text) {
            w.push(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}}), false);
        }
        w.push(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}), false);
        w.push(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
            false,
        );
        index += 1;
    }
    w.push(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}), false);
    w.push(Some("ping"), &json!({"type": "ping"}), false);
    let text_pieces = match &spec.lead {
        Lead::Text(text) => word_pieces(text),
        _ => vec!["Let me look that up.".to_owned()],
    };
    for p in text_pieces {
        w.push(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}), false);
    }
    w.push(
        Some("content_block_stop"),
        &json!({"type": "content_block_stop", "index": index}),
        false,
    );
    index += 1;
    let delta = |index: usize, p: &str| json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}});
    // The provider's own tools: a server_tool_use block streamed like a call, then its result.
    for t in &spec.server_tools {
        w.push(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": {"type": "server_tool_use", "id": t.id, "name": t.name, "input": {}}}), false);
        w.push(Some("content_block_delta"), &delta(index, ""), false);
        for p in split_chars(&t.arguments, &spec.fragment_chars) {
            w.push(Some("content_block_delta"), &delta(index, &p), false);
        }
        w.push(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
            false,
        );
        index += 1;
        let result = json!([{"type": "web_search_result", "title": "Weather forecast", "url": "https://weather.example.com/forecast", "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2M", "page_age": null}]);
        w.push(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": {"type": "web_search_tool_result", "tool_use_id": t.id, "content": result}}), false);
        w.push(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
            false,
        );
        index += 1;
    }
    let first_tool = index;
    for &(c, f) in &order {
        let call = &spec.calls[c];
        let index = first_tool + c;
        if f == 0 {
            w.push(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}), false);
            w.push(Some("content_block_delta"), &delta(index, ""), true);
        }
        // A call without arguments: the opening `""` was all of them (as in
        // tests/data/fixtures/vercel-anthropic-tool-no-args.jsonl).
        if !(f == 0 && per_call[c].len() == 1 && per_call[c][0].is_empty()) {
            w.push(
                Some("content_block_delta"),
                &delta(index, &per_call[c][f]),
                true,
            );
        }
        if f + 1 == per_call[c].len() {
            w.push(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": index}),
                false,
            );
        }
    }
    if !spec.quirks.truncate {
        let usage = if spec.server_tools.is_empty() {
            json!({"output_tokens": 20})
        } else {
            json!({"output_tokens": 20, "server_tool_use": {"web_search_requests": spec.server_tools.len()}})
        };
        w.push(Some("message_delta"), &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": usage}), false);
        w.push(
            Some("message_stop"),
            &json!({"type": "message_stop"}),
            false,
        );
    }
}

fn gemini_chunk(parts: Vec<Value>, finish: Option<&str>) -> Value {
    let mut cand = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let (Some(f), Some(m)) = (finish, cand.as_object_mut()) {
        m.insert("finishReason".into(), json!(f));
    }
    json!({
        "candidates": [cand],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 20, "totalTokenCount": 70},
        "modelVersion": "gemini-stub",
        "responseId": "resp_stub"
    })
}

/// Gemini: each call whole in one part (`args` an object, no id), then an empty text part with
/// `finishReason: STOP`; every chunk carries `usageMetadata`, `modelVersion` and `responseId` (as in
/// tests/data/fixtures/vercel-google-gemini3-*).
fn gemini_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    gemini_lead(w);
    let mut calls: Vec<&StubCall> = spec.calls.iter().collect();
    if spec.quirks.truncate && calls.len() > 1 {
        calls.pop();
    }
    for call in calls {
        let part =
            json!({"functionCall": {"name": call.name, "args": args_value(&call.arguments)}});
        w.push(None, &gemini_chunk(vec![part], None), true);
    }
    if !spec.quirks.truncate {
        w.push(
            None,
            &gemini_chunk(vec![json!({"text": ""})], Some("STOP")),
            false,
        );
    }
}

/// Words grouped a few to a piece, as Gemini and Ollama stream text.
fn word_groups(text: &str) -> Vec<String> {
    word_pieces(text)
        .chunks(3)
        .map(|group| group.concat())
        .collect()
}

/// Gemini's text before the calls: `text` parts, marked `"thought": true` for reasoning (as
/// Gemini 2.5 streams its thought summaries).
fn gemini_lead(w: &mut Writer<'_>) {
    let (text, thought) = match &w.spec.lead {
        Lead::None => return,
        Lead::Text(t) => (t.clone(), false),
        Lead::Reasoning(t) => (t.clone(), true),
    };
    for p in word_groups(&text) {
        let part = if thought {
            json!({"text": p, "thought": true})
        } else {
            json!({"text": p})
        };
        w.push(None, &gemini_chunk(vec![part], None), false);
    }
}

/// The leaves of a JSON value as (JSON path, value), in document order.
fn leaves(path: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let simple =
                    !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                let p = if simple {
                    format!("{path}.{k}")
                } else {
                    format!("{path}[{}]", json!(k))
                };
                leaves(&p, v, out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                leaves(&format!("{path}[{i}]"), v, out);
            }
        }
        other => out.push((path.to_owned(), other.clone())),
    }
}

/// Vertex AI streamed arguments: `{"name", "willContinue": true}`, then one part per piece
/// (`partialArgs` with a JSON path; strings cut into fragments, all but the last with
/// `willContinue`), then an empty `functionCall` that closes the call.
fn gemini_partial_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    gemini_lead(w);
    let mut parts: Vec<(Value, bool)> = Vec::new();
    for call in &spec.calls {
        parts.push((
            json!({"functionCall": {"name": call.name, "willContinue": true}}),
            false,
        ));
        let mut ls = Vec::new();
        leaves("$", &args_value(&call.arguments), &mut ls);
        for (path, value) in ls {
            let pieces: Vec<Value> = match &value {
                Value::String(s) => {
                    let cut = split_chars(s, &spec.fragment_chars);
                    let n = cut.len().max(1);
                    let cut = if cut.is_empty() {
                        vec![String::new()]
                    } else {
                        cut
                    };
                    cut.into_iter()
                        .enumerate()
                        .map(|(i, p)| {
                            if i + 1 < n {
                                json!({"jsonPath": path, "stringValue": p, "willContinue": true})
                            } else {
                                json!({"jsonPath": path, "stringValue": p})
                            }
                        })
                        .collect()
                }
                Value::Number(n) => vec![json!({"jsonPath": path, "numberValue": n})],
                Value::Bool(b) => vec![json!({"jsonPath": path, "boolValue": b})],
                _ => vec![json!({"jsonPath": path, "nullValue": "NULL_VALUE"})],
            };
            for p in pieces {
                parts.push((
                    json!({"functionCall": {"partialArgs": [p], "willContinue": true}}),
                    true,
                ));
            }
        }
        parts.push((json!({"functionCall": {}}), false));
    }
    if spec.quirks.truncate && parts.len() > 1 {
        // Cut inside the last call: drop its closing part and its last piece.
        parts.truncate(parts.len() - 2);
    }
    for (part, fragment) in parts {
        w.push(None, &gemini_chunk(vec![part], None), fragment);
    }
    if !spec.quirks.truncate {
        w.push(
            None,
            &gemini_chunk(vec![json!({"text": ""})], Some("STOP")),
            false,
        );
    }
}

/// Ollama `/api/chat`: NDJSON, one line per call (complete, object `arguments`, `function.index`,
/// no id), then the final `done: true` object with `done_reason: stop`, the token counts and the
/// durations (nanoseconds).
fn ollama_events(w: &mut Writer<'_>) {
    let spec = w.spec;
    let mut calls: Vec<(usize, &StubCall)> = spec.calls.iter().enumerate().collect();
    if spec.quirks.truncate && calls.len() > 1 {
        calls.pop();
    }
    let created = CREATED_RFC3339;
    // Text or thinking first (Ollama's `thinking` field for reasoning models).
    let lead = match &spec.lead {
        Lead::None => None,
        Lead::Text(t) => Some((t, "content")),
        Lead::Reasoning(t) => Some((t, "thinking")),
    };
    if let Some((text, field)) = lead {
        for p in word_groups(text) {
            let mut message = json!({"role": "assistant", "content": ""});
            if let Some(m) = message.as_object_mut() {
                m.insert(field.to_owned(), json!(p));
            }
            let line = json!({"model": "llama3.2", "created_at": created, "message": message, "done": false});
            w.push(None, &line, false);
        }
    }
    for (i, call) in calls {
        let tc = json!({"function": {"index": i, "name": call.name, "arguments": args_value(&call.arguments)}});
        let line = json!({"model": "llama3.2", "created_at": created, "message": {"role": "assistant", "content": "", "tool_calls": [tc]}, "done": false});
        w.push(None, &line, true);
    }
    if !spec.quirks.truncate {
        let line = json!({"model": "llama3.2", "created_at": created, "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "total_duration": 1_200_000_000u64, "load_duration": 20_000_000, "prompt_eval_count": 50, "prompt_eval_duration": 300_000_000, "eval_count": 20, "eval_duration": 800_000_000u64});
        w.push(None, &line, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_split_is_5_5_5_5_2() {
        let p = split_chars(r#"{"city":"深圳","days":3}"#, &[5]);
        assert_eq!(p, vec!["{\"cit", "y\":\"深", "圳\",\"d", "ays\":", "3}"]);
    }
}
