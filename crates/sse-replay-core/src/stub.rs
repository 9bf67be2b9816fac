//! The stub builder (the seed's own method is stub-driven): from calls (name, arguments) and a
//! fragment length in characters, build a recording of an OpenAI Chat Completions stream (or of
//! another dialect's stream, see [`StubSpec::dialect`]), with the original arguments as ground
//! truth. Optional quirks reproduce provider deviations.

use serde_json::{Value, json};

use crate::dialect::DialectKind;
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
    /// Which provider's stream to build. Quirks that only exist in OpenAI Chat streams
    /// ([`Quirks::chat_only`]) are ignored for the others.
    pub dialect: DialectKind,
    /// OpenAI Chat only: write the seed document's own minimal lines (`id`, `choices`, and the
    /// tool-call fields `index`, `id`, `function.name`, `function.arguments`) instead of what
    /// OpenAI really sends (`object`, `created`, `model`, `system_fingerprint`, a first delta with
    /// `role: "assistant"`, and an opening tool-call delta with `type` and `"arguments": ""`).
    /// Some real SDKs reject these lines (openai-node: `missing role for choice 0`).
    pub minimal: bool,
    /// Text or reasoning streamed before the calls.
    pub lead: Lead,
    /// Every call whole in one chunk (id, name and all its arguments in one delta or event), as
    /// Groq and Mistral send them, instead of cut into `fragment_chars` pieces.
    pub whole_calls: bool,
    /// Tools the provider runs itself, streamed before the client calls (Anthropic
    /// `server_tool_use` with its `web_search_tool_result`, Responses `web_search_call` items; the
    /// arguments are the search's input). Ignored by dialects that have none.
    pub server_tools: Vec<StubCall>,
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
            lead: Lead::None,
            whole_calls: false,
            server_tools: Vec::new(),
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

/// Which dialects report tools the provider runs itself (their stub builder writes
/// [`StubSpec::server_tools`]).
pub fn has_server_tools(dialect: DialectKind) -> bool {
    matches!(
        dialect,
        DialectKind::OpenAiResponses | DialectKind::AnthropicMessages
    )
}

/// Whether the dialect streams a call's arguments in pieces at all (Gemini and Ollama send each
/// call whole: for them every call is a "whole call").
pub fn streams_argument_pieces(dialect: DialectKind) -> bool {
    !matches!(dialect, DialectKind::Gemini | DialectKind::Ollama)
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
    if spec.dialect != DialectKind::OpenAiChat {
        return assemble(spec, other_dialect_events(spec));
    }
    let q = &spec.quirks;
    // Per call: its fragments (text, or the whole object).
    let per_call: Vec<Vec<String>> = spec
        .calls
        .iter()
        .map(|c| {
            if q.object_arguments || spec.whole_calls {
                vec![c.arguments.clone()]
            } else {
                let mut pieces = split_chars(&c.arguments, &spec.fragment_chars);
                if pieces.is_empty() {
                    pieces.push(String::new());
                }
                if q.cumulative {
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
    for (n, &(c, f)) in order.iter().enumerate() {
        if q.keepalive_every > 0 && n > 0 && n % q.keepalive_every == 0 {
            events.push(format!(": keep-alive{eol}{eol}"));
        }
        if q.error_after == Some(n) {
            events.push(format!(
                "event: error{eol}{prefix}{}{eol}{eol}",
                json!({"error": {"type": "overloaded_error", "message": "Overloaded"}})
            ));
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
        // A call without arguments: its opening delta's `"arguments": ""` was all of them.
        if first && separate_opening && piece.is_empty() && per_call[c].len() == 1 {
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
            let v: Value = serde_json::from_str(piece).unwrap_or_else(|_| json!(piece));
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
    assemble(spec, events)
}

/// Cut the events into chunks and wrap them in a recording with the ground truth.
fn assemble(spec: &StubSpec, events: Vec<String>) -> Recording {
    // Chunks: one per event, or fixed-size reads; times advance per event.
    let mut chunks = Vec::new();
    match spec.read_bytes {
        None => {
            for (i, e) in events.iter().enumerate() {
                chunks.push(Chunk {
                    t_micros: i as u64 * spec.gap_micros,
                    bytes: e.as_bytes().to_vec(),
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
            let body: Vec<u8> = events.concat().into_bytes();
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
            .filter(|_| has_server_tools(spec.dialect))
            .chain(&spec.calls)
            .map(|c| truth_call(spec, c))
            .collect(),
    }
}

/// The ground truth for one call: what a correct reader must end up with. Dialects that send the
/// arguments as a JSON object carry them re-serialized compactly, and Gemini and Ollama carry no id.
fn truth_call(spec: &StubSpec, c: &StubCall) -> TruthCall {
    match spec.dialect {
        DialectKind::OpenAiChat | DialectKind::OpenAiResponses | DialectKind::AnthropicMessages => {
            TruthCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            }
        }
        DialectKind::Gemini | DialectKind::Ollama => TruthCall {
            id: String::new(),
            name: c.name.clone(),
            arguments: args_value(&c.arguments).to_string(),
        },
    }
}

impl Quirks {
    /// The names of the quirks that are set but only exist in OpenAI Chat streams.
    pub fn chat_only(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let flags = [
            (self.repeat_name, "repeat-name"),
            (self.empty_id_continuations, "empty-id"),
            (self.no_index, "no-index"),
            (self.index_base != 0, "index-from-1"),
            (self.all_at_index_zero, "all-at-index-0"),
            (self.object_arguments, "object-arguments"),
            (self.cumulative, "cumulative"),
            (self.finish_with_last_fragment, "finish-with-last"),
        ];
        for (set, name) in flags {
            if set {
                v.push(name);
            }
        }
        v
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

/// Writes events in one dialect's framing, honouring the SSE-level quirks.
struct Writer<'a> {
    spec: &'a StubSpec,
    events: Vec<String>,
    fragments: usize,
}

impl Writer<'_> {
    fn eol(&self) -> &'static str {
        if self.spec.quirks.crlf { "\r\n" } else { "\n" }
    }

    /// An SSE event (or, for Ollama, one NDJSON line). `fragment` marks events carrying arguments,
    /// which is where keep-alives and the error quirk are inserted (as in the chat builder).
    fn push(&mut self, name: Option<&str>, data: &Value, fragment: bool) {
        let q = &self.spec.quirks;
        let eol = self.eol();
        if fragment {
            let n = self.fragments;
            let ndjson = self.spec.dialect == DialectKind::Ollama;
            if !ndjson && q.keepalive_every > 0 && n > 0 && n.is_multiple_of(q.keepalive_every) {
                self.events.push(format!(": keep-alive{eol}{eol}"));
            }
            if q.error_after == Some(n) {
                let text = self.error_text();
                self.events.push(text);
            }
            self.fragments += 1;
        }
        let text = if self.spec.dialect == DialectKind::Ollama {
            format!("{data}{eol}")
        } else {
            let prefix = if q.no_space { "data:" } else { "data: " };
            match name {
                Some(n) => format!("event: {n}{eol}{prefix}{data}{eol}{eol}"),
                None => format!("{prefix}{data}{eol}{eol}"),
            }
        };
        self.events.push(text);
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
            DialectKind::OpenAiChat | DialectKind::AnthropicMessages => format!(
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
        }
    }
}

/// Per call, its argument fragments; and the order in which (call, fragment) pairs are sent.
fn fragment_plan(spec: &StubSpec) -> (Vec<Vec<String>>, Vec<(usize, usize)>) {
    let per_call: Vec<Vec<String>> = spec
        .calls
        .iter()
        .map(|c| {
            let mut pieces = if spec.whole_calls {
                vec![c.arguments.clone()]
            } else {
                split_chars(&c.arguments, &spec.fragment_chars)
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

fn other_dialect_events(spec: &StubSpec) -> Vec<String> {
    let mut w = Writer {
        spec,
        events: Vec::new(),
        fragments: 0,
    };
    match spec.dialect {
        DialectKind::OpenAiChat => {}
        DialectKind::OpenAiResponses => responses_events(&mut w),
        DialectKind::AnthropicMessages => anthropic_events(&mut w),
        DialectKind::Gemini if spec.quirks.partial_args => gemini_partial_events(&mut w),
        DialectKind::Gemini => gemini_events(&mut w),
        DialectKind::Ollama => ollama_events(&mut w),
    }
    w.events
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
        if f == 0 {
            let it = json!({"id": item(c), "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call.id, "name": call.name});
            w.push(Some("response.output_item.added"), &json!({"type": "response.output_item.added", "sequence_number": next_seq(), "output_index": at(c), "item": it}), false);
        }
        let delta = json!({"type": "response.function_call_arguments.delta", "sequence_number": next_seq(), "item_id": item(c), "output_index": at(c), "delta": per_call[c][f]});
        w.push(Some("response.function_call_arguments.delta"), &delta, true);
        let last_of_call = f + 1 == per_call[c].len();
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
