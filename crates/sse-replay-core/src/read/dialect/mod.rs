//! Dialects turn framed events (SSE events, NDJSON lines, JSON array elements or AWS event stream frames) into tool-call [`Fact`]s: fragments
//! with their call key, finish signals, provider errors and the findings only the dialect can see.
//! The vocabulary they speak ([`Fact`], [`crate::fact::Fragment`], [`crate::fact::CallKey`],
//! [`Raw`]…) is [`crate::fact`]'s, shared with the accumulator and the naive strategies. One
//! file per dialect. Dialects route (decide which call a fragment belongs to) but never
//! accumulate: that is [`crate::accumulate`]'s job, and it does not know which dialect fed it.

pub mod ai_sdk;
pub mod anthropic;
pub mod assistants;
pub mod bedrock;
pub mod cohere;
pub mod gemini;
pub mod ollama;
pub mod openai_chat;
pub mod responses;

use std::fmt;

use serde::Deserialize;

use crate::fact::{ArgsPiece, Fact, Raw};
use crate::findings::FindingKind;
use crate::text::truncate;

macro_rules! dialects {
    ($(
        $(#[$doc:meta])*
        $variant:ident {
            name: $name:literal,
            aliases: [$($alias:literal),*],
            title: $title:literal,
            short: $short:literal,
            help: $help:literal,
            framing: $framing:ident,
            markers: [$($marker:literal),+],
            announcing_finishes: [$($finish:literal),*],
            closes_calls: $closes:literal,
            stub: {
                lead: $lead:literal,
                argument_pieces: $pieces:literal,
                server_tools: $server_tools:literal,
                invoke_model_stream: $invoke:literal,
            },
            client_env: [$(($env:literal, $env_kind:ident($env_value:literal))),*],
            apis: [$(($api_framing:ident, $api_name:literal, $api_rule:expr)),*],
        }
    )*) => {
        /// The supported dialects, each described once in the table below (`dialects!`): its
        /// names, title, native framing, the words that name a tool call on its wire and the
        /// finish reasons that announce calls. The CLI's `--dialect` values, the app's pickers,
        /// the stub builder and `generate-corpus` read the table; adding a dialect without
        /// filling every field does not compile.
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
        )]
        pub enum DialectKind {
            #[default]
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl DialectKind {
            /// All dialects, in the table's order.
            pub const ALL: [DialectKind; [$(DialectKind::$variant),*].len()] =
                [$(DialectKind::$variant),*];

            /// Stable name (CLI `--dialect`, JSON, recording metadata).
            pub fn name(self) -> &'static str {
                match self { $( DialectKind::$variant => $name, )* }
            }

            /// Other spellings `--dialect` accepts.
            pub fn aliases(self) -> &'static [&'static str] {
                match self { $( DialectKind::$variant => &[$($alias),*], )* }
            }

            /// Human title.
            pub fn title(self) -> &'static str {
                match self { $( DialectKind::$variant => $title, )* }
            }

            /// The name in at most six characters (a column head in `scan`'s summary).
            pub fn short(self) -> &'static str {
                match self { $( DialectKind::$variant => $short, )* }
            }

            /// One line for `--dialect`'s help.
            pub fn help(self) -> &'static str {
                match self { $( DialectKind::$variant => $help, )* }
            }

            /// How the provider frames this dialect's stream on the wire (what the stub builder
            /// writes by default, and serves with [`crate::framing::Framing::content_type`]).
            pub fn native_framing(self) -> crate::framing::Framing {
                match self { $( DialectKind::$variant => crate::framing::Framing::$framing, )* }
            }

            /// Words that name a tool call in this dialect's events: an event the dialect
            /// cannot read and that holds one of them lost a call (`lost-tool-call`). Looked for
            /// in the event type and the data as they are, so they are the wire's spellings.
            pub fn tool_call_markers(self) -> &'static [&'static str] {
                match self { $( DialectKind::$variant => &[$($marker),+], )* }
            }

            /// The finish reasons (as the dialect's `Finish` fact carries them) that say the
            /// response ended for the client to call tools, or that a call went wrong: with no
            /// call assembled, a call was lost. (Responses announces its calls as output items:
            /// its decoder compares them itself.)
            pub fn announcing_finishes(self) -> &'static [&'static str] {
                match self { $( DialectKind::$variant => &[$($finish),*], )* }
            }

            /// Whether the dialect closes each call with an event of its own (a stop, a done, a
            /// whole call), so a call can be complete before the stream ends; OpenAI Chat has no
            /// per-call end: a call is open until the stream's finish.
            pub fn closes_calls(self) -> bool {
                match self { $( DialectKind::$variant => $closes, )* }
            }

            /// Whether the stub builder writes text or reasoning before this dialect's calls
            /// ([`crate::stub::StubSpec::lead`]); the others leave it out.
            pub fn stub_writes_lead(self) -> bool {
                match self { $( DialectKind::$variant => $lead, )* }
            }

            /// Whether the dialect streams a call's arguments in pieces at all (Gemini and
            /// Ollama send each call whole: for them every call is a "whole call").
            pub fn streams_argument_pieces(self) -> bool {
                match self { $( DialectKind::$variant => $pieces, )* }
            }

            /// Whether the dialect reports tools the provider runs itself, and the stub
            /// builder writes them ([`crate::stub::StubSpec::server_tools`]).
            pub fn has_server_tools(self) -> bool {
                match self { $( DialectKind::$variant => $server_tools, )* }
            }

            /// Whether the stub builder can wrap this dialect's events in binary AWS
            /// `chunk` frames, as Bedrock's InvokeModelWithResponseStream sends them
            /// (`stub --invoke-model-stream`).
            pub fn invoke_model_stream(self) -> bool {
                match self { $( DialectKind::$variant => $invoke, )* }
            }

            /// The environment variables this provider's SDKs read to find their server and
            /// key, as the client-test harness sets them (a base URL, with its path suffix, or
            /// a fixed dummy value). Several dialects may share one variable.
            pub fn client_env(self) -> &'static [(&'static str, ClientEnv)] {
                match self { $( DialectKind::$variant => &[$(($env, ClientEnv::$env_kind($env_value))),*], )* }
            }

            /// The streaming APIs of this dialect that a client tells apart in its request, each
            /// with the framing its stream comes in (the Messages API over SSE and Bedrock's
            /// InvokeModel in `chunk` frames; Gemini with and without `alt=sse`). Empty for a
            /// dialect served by one API: every request gets its streams. See [`StreamApi`].
            pub fn apis(self) -> &'static [StreamApi] {
                match self { $( DialectKind::$variant => &[$(StreamApi {
                    dialect: DialectKind::$variant,
                    framing: crate::framing::Framing::$api_framing,
                    name: $api_name,
                    rule: $api_rule,
                }),*], )* }
            }
        }
    };
}

/// The value the client-test harness gives an SDK's environment variable
/// ([`DialectKind::client_env`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientEnv {
    /// The replay server's base URL followed by this path (`/v1` for OpenAI's SDKs).
    BaseUrl(&'static str),
    /// A fixed value: a dummy key, a region, a setting that keeps the SDK off real credentials.
    Fixed(&'static str),
}

dialects! {
    /// OpenAI Chat Completions (and compatible servers).
    OpenAiChat {
        name: "openai-chat",
        aliases: ["openai", "chat", "openai-compatible"],
        title: "OpenAI Chat Completions",
        short: "chat",
        help: "OpenAI Chat Completions (and compatible servers)",
        framing: Sse,
        markers: ["\"tool_calls\"", "\"function_call\""],
        announcing_finishes: ["tool_calls", "function_call"],
        closes_calls: false,
        stub: {
            lead: true,
            argument_pieces: true,
            server_tools: false,
            invoke_model_stream: false,
        },
        client_env: [("OPENAI_BASE_URL", BaseUrl("/v1")), ("OPENAI_API_BASE", BaseUrl("/v1")), ("OPENAI_API_KEY", Fixed("sk-sse-replay-dummy")), ("AZURE_OPENAI_ENDPOINT", BaseUrl("")), ("AZURE_OPENAI_API_KEY", Fixed("sse-replay-dummy"))],
        apis: [],
    }
    /// OpenAI Responses.
    OpenAiResponses {
        name: "openai-responses",
        aliases: ["responses"],
        title: "OpenAI Responses",
        short: "resp",
        help: "OpenAI Responses",
        framing: Sse,
        markers: ["function_call"],
        announcing_finishes: [],
        closes_calls: true,
        stub: {
            lead: true,
            argument_pieces: true,
            server_tools: true,
            invoke_model_stream: false,
        },
        client_env: [("OPENAI_BASE_URL", BaseUrl("/v1")), ("OPENAI_API_BASE", BaseUrl("/v1")), ("OPENAI_API_KEY", Fixed("sk-sse-replay-dummy")), ("AZURE_OPENAI_ENDPOINT", BaseUrl("")), ("AZURE_OPENAI_API_KEY", Fixed("sse-replay-dummy"))],
        apis: [],
    }
    /// Anthropic Messages.
    AnthropicMessages {
        name: "anthropic-messages",
        aliases: ["anthropic", "claude"],
        title: "Anthropic Messages",
        short: "anthr",
        help: "Anthropic Messages",
        framing: Sse,
        markers: ["\"tool_use\"", "input_json_delta"],
        announcing_finishes: ["tool_use"],
        closes_calls: true,
        stub: {
            lead: true,
            argument_pieces: true,
            server_tools: true,
            invoke_model_stream: true,
        },
        client_env: [("ANTHROPIC_BASE_URL", BaseUrl("")), ("ANTHROPIC_API_KEY", Fixed("sk-ant-sse-replay-dummy")), ("ANTHROPIC_BEDROCK_BASE_URL", BaseUrl("")), ("AWS_ACCESS_KEY_ID", Fixed("AKIASSEREPLAYDUMMY00")), ("AWS_SECRET_ACCESS_KEY", Fixed("sse-replay-dummy-secret-access-key")), ("AWS_REGION", Fixed("us-east-1")), ("AWS_DEFAULT_REGION", Fixed("us-east-1")), ("AWS_EC2_METADATA_DISABLED", Fixed("true")), ("AWS_SHARED_CREDENTIALS_FILE", Fixed("/dev/null")), ("AWS_CONFIG_FILE", Fixed("/dev/null"))],
        apis: [(Sse, "the Messages API over SSE", RequestRule::PathEnds("/messages")), (AwsEventStream, "InvokeModel", RequestRule::PathEnds("/invoke-with-response-stream"))],
    }
    /// Google Gemini / Vertex AI.
    Gemini {
        name: "gemini",
        aliases: ["google", "vertex"],
        title: "Google Gemini",
        short: "gemini",
        help: "Google Gemini / Vertex AI",
        framing: Sse,
        markers: ["\"functionCall\"", "\"function_call\""],
        announcing_finishes: ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"],
        closes_calls: true,
        stub: {
            lead: true,
            argument_pieces: false,
            server_tools: false,
            invoke_model_stream: false,
        },
        client_env: [("GOOGLE_GEMINI_BASE_URL", BaseUrl("")), ("GEMINI_BASE_URL", BaseUrl("")), ("GEMINI_API_KEY", Fixed("sse-replay-dummy")), ("GOOGLE_API_KEY", Fixed("sse-replay-dummy"))],
        apis: [(Sse, "streamGenerateContent with alt=sse", RequestRule::Query { path: ":streamGenerateContent", param: "alt=sse", present: true }), (JsonArray, "streamGenerateContent without alt=sse (a JSON array)", RequestRule::Query { path: ":streamGenerateContent", param: "alt=sse", present: false })],
    }
    /// Ollama's `/api/chat` (JSON lines).
    Ollama {
        name: "ollama",
        aliases: [],
        title: "Ollama /api/chat (NDJSON)",
        short: "ollama",
        help: "Ollama (JSON lines)",
        framing: JsonLines,
        markers: ["\"tool_calls\""],
        announcing_finishes: [],
        closes_calls: true,
        stub: {
            lead: true,
            argument_pieces: false,
            server_tools: false,
            invoke_model_stream: false,
        },
        client_env: [("OLLAMA_HOST", BaseUrl(""))],
        apis: [],
    }
    /// Cohere v2 chat.
    Cohere {
        name: "cohere",
        aliases: ["cohere-v2", "cohere-v2-chat"],
        title: "Cohere v2 Chat",
        short: "cohere",
        help: "Cohere v2 chat",
        framing: Sse,
        markers: ["tool-call-", "\"tool_calls\""],
        announcing_finishes: ["TOOL_CALL"],
        closes_calls: true,
        stub: {
            lead: false,
            argument_pieces: true,
            server_tools: false,
            invoke_model_stream: false,
        },
        client_env: [("CO_API_URL", BaseUrl("")), ("CO_API_KEY", Fixed("sse-replay-dummy"))],
        apis: [],
    }
    /// OpenAI Assistants v2 run streams.
    OpenAiAssistants {
        name: "openai-assistants",
        aliases: ["assistants", "openai-assistants-v2"],
        title: "OpenAI Assistants v2 runs",
        short: "asst",
        help: "OpenAI Assistants v2 run streams",
        framing: Sse,
        markers: ["\"tool_calls\"", "\"function\""],
        announcing_finishes: ["requires_action"],
        closes_calls: true,
        stub: {
            lead: false,
            argument_pieces: true,
            server_tools: false,
            invoke_model_stream: false,
        },
        client_env: [("OPENAI_BASE_URL", BaseUrl("/v1")), ("OPENAI_API_BASE", BaseUrl("/v1")), ("OPENAI_API_KEY", Fixed("sk-sse-replay-dummy")), ("AZURE_OPENAI_ENDPOINT", BaseUrl("")), ("AZURE_OPENAI_API_KEY", Fixed("sse-replay-dummy"))],
        apis: [],
    }
    /// The Vercel AI SDK UI message stream.
    AiSdkUi {
        name: "ai-sdk-ui",
        aliases: ["ai-sdk", "vercel-ai", "ui-message-stream"],
        title: "Vercel AI SDK UI message stream",
        short: "ai-sdk",
        help: "The Vercel AI SDK UI message stream",
        framing: Sse,
        markers: ["tool-input-", "tool-call"],
        announcing_finishes: ["tool-calls"],
        closes_calls: true,
        stub: {
            lead: false,
            argument_pieces: true,
            server_tools: false,
            invoke_model_stream: false,
        },
        client_env: [],
        apis: [],
    }
    /// AWS Bedrock ConverseStream (binary AWS event stream frames, or decoded JSON events).
    BedrockConverse {
        name: "bedrock-converse",
        aliases: ["bedrock", "bedrock-converse-stream", "converse", "converse-stream", "aws-bedrock"],
        title: "AWS Bedrock ConverseStream",
        short: "bedrck",
        help: "AWS Bedrock ConverseStream (binary AWS event stream frames, or decoded JSON events)",
        framing: AwsEventStream,
        markers: ["\"toolUse\"", "tool_use"],
        announcing_finishes: ["tool_use"],
        closes_calls: true,
        stub: {
            lead: false,
            argument_pieces: true,
            server_tools: false,
            invoke_model_stream: false,
        },
        client_env: [("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", BaseUrl("")), ("AWS_ENDPOINT_URL", BaseUrl("")), ("AWS_ACCESS_KEY_ID", Fixed("AKIASSEREPLAYDUMMY00")), ("AWS_SECRET_ACCESS_KEY", Fixed("sse-replay-dummy-secret-access-key")), ("AWS_REGION", Fixed("us-east-1")), ("AWS_DEFAULT_REGION", Fixed("us-east-1")), ("AWS_EC2_METADATA_DISABLED", Fixed("true")), ("AWS_SHARED_CREDENTIALS_FILE", Fixed("/dev/null")), ("AWS_CONFIG_FILE", Fixed("/dev/null"))],
        apis: [],
    }
}

/// One of a dialect's streaming APIs as a client requests it ([`DialectKind::apis`]): a client
/// that calls the Anthropic Messages API over SSE cannot read Bedrock's InvokeModel event stream
/// of the same dialect, nor the other way round, so the client-test harness serves a case only
/// to a client whose request asks for the case's API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamApi {
    /// The dialect whose events the API streams.
    pub dialect: DialectKind,
    /// The framing its stream comes in.
    pub framing: crate::framing::Framing,
    /// Its name in reports ("InvokeModel").
    pub name: &'static str,
    /// How a request asks for it.
    pub rule: RequestRule,
}

/// How a request asks for one of a dialect's streaming APIs ([`StreamApi::rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestRule {
    /// The request's path ends with this (`/messages`, `/invoke-with-response-stream`).
    PathEnds(&'static str),
    /// The path contains `path` and its query has (`present`) or lacks the parameter `param`
    /// (`alt=sse`: Gemini's SDKs choose SSE or the REST default's JSON array in the query).
    Query {
        /// Part of the path that names the method (`:streamGenerateContent`).
        path: &'static str,
        /// A `name=value` of the query.
        param: &'static str,
        /// Whether the query has it.
        present: bool,
    },
}

impl RequestRule {
    /// Whether a request for `path` with `query` (without its `?`) follows the rule.
    pub fn matches(self, path: &str, query: Option<&str>) -> bool {
        match self {
            RequestRule::PathEnds(end) => path.trim_end_matches('/').ends_with(end),
            RequestRule::Query {
                path: method,
                param,
                present,
            } => {
                path.contains(method)
                    && query.unwrap_or("").split('&').any(|p| p == param) == present
            }
        }
    }
}

impl StreamApi {
    /// `dialect via API`, as reports name it.
    pub fn label(self) -> String {
        format!("{} via {}", self.dialect.name(), self.name)
    }
}

impl DialectKind {
    /// The API a stream of this dialect in `framing` is served by: `None` when the dialect has
    /// one API ([`DialectKind::apis`] is empty) or none of them streams in that framing (a dump,
    /// which no request tells apart).
    pub fn api_of_framing(self, framing: crate::framing::Framing) -> Option<StreamApi> {
        self.apis().iter().copied().find(|a| a.framing == framing)
    }

    /// The API a request for `path` with `query` asks for: `None` when the dialect has one API
    /// or the request names none of them (any path is served, as `serve` serves every path).
    pub fn api_of_request(self, path: &str, query: Option<&str>) -> Option<StreamApi> {
        self.apis()
            .iter()
            .copied()
            .find(|a| a.rule.matches(path, query))
    }

    /// Whether a finish reason says the response ended for the client to call tools, or that a
    /// call went wrong ([`DialectKind::announcing_finishes`]).
    pub fn finish_announces_calls(self, reason: &str) -> bool {
        self.announcing_finishes().contains(&reason)
    }

    /// Whether `event_type` or `data` names a tool call ([`DialectKind::tool_call_markers`]).
    pub fn names_tool_call(self, event_type: &str, data: &str) -> bool {
        self.tool_call_markers()
            .iter()
            .any(|m| event_type.contains(m) || data.contains(m))
    }

    /// Parse a name or alias as `--dialect` accepts it (any case, surrounding spaces ignored).
    pub fn from_name(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        DialectKind::ALL
            .into_iter()
            .find(|d| d.name() == s || d.aliases().contains(&s.as_str()))
    }
}

/// Sniff the dialect from one event: `Some` when the event is decisive.
pub fn detect(event_type: &str, data: &str) -> Option<DialectKind> {
    match event_type {
        "message_start"
        | "content_block_start"
        | "content_block_delta"
        | "content_block_stop"
        | "message_delta"
        | "message_stop" => return Some(DialectKind::AnthropicMessages),
        t if t.starts_with("response.") => return Some(DialectKind::OpenAiResponses),
        t if assistants::looks_like_assistants_event(t) => {
            return Some(DialectKind::OpenAiAssistants);
        }
        t if cohere::looks_like_cohere_event(t) => return Some(DialectKind::Cohere),
        t if bedrock::EVENTS.contains(&t) => return Some(DialectKind::BedrockConverse),
        _ => {}
    }
    let data = data.trim_start();
    if !data.starts_with('{') {
        return None;
    }
    #[derive(Deserialize)]
    struct Sniff<'a> {
        #[serde(default, borrow, rename = "type")]
        kind: Option<&'a str>,
        #[serde(default)]
        choices: Option<serde::de::IgnoredAny>,
        #[serde(default)]
        candidates: Option<serde::de::IgnoredAny>,
        #[serde(default)]
        done: Option<serde::de::IgnoredAny>,
        #[serde(default)]
        message: Option<serde::de::IgnoredAny>,
        #[serde(default)]
        object: Option<&'a str>,
        #[serde(default, rename = "messageStart")]
        message_start: Option<serde::de::IgnoredAny>,
        #[serde(default, rename = "contentBlockStart")]
        content_block_start: Option<serde::de::IgnoredAny>,
        #[serde(default, rename = "contentBlockDelta")]
        content_block_delta: Option<serde::de::IgnoredAny>,
        #[serde(default, rename = "contentBlockStop")]
        content_block_stop: Option<serde::de::IgnoredAny>,
        #[serde(default, rename = "messageStop")]
        message_stop: Option<serde::de::IgnoredAny>,
    }
    let s: Sniff<'_> = serde_json::from_str(data).ok()?;
    // Bedrock ConverseStream decoded by an AWS SDK: one object keyed by the event's name
    // (`metadata` alone is too common a word to decide), or a `type` naming it.
    if s.kind.is_some_and(|t| bedrock::EVENTS.contains(&t))
        || s.message_start.is_some()
        || s.content_block_start.is_some()
        || s.content_block_delta.is_some()
        || s.content_block_stop.is_some()
        || s.message_stop.is_some()
    {
        return Some(DialectKind::BedrockConverse);
    }
    if let Some(t) = s.kind {
        if t.starts_with("response.") {
            return Some(DialectKind::OpenAiResponses);
        }
        if matches!(
            t,
            "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
        ) {
            return Some(DialectKind::AnthropicMessages);
        }
        if cohere::looks_like_cohere_event(t) {
            return Some(DialectKind::Cohere);
        }
        if ai_sdk::looks_like_ai_sdk_chunk(t) {
            return Some(DialectKind::AiSdkUi);
        }
    }
    if s.object.is_some_and(|o| o.starts_with("thread.")) {
        return Some(DialectKind::OpenAiAssistants);
    }
    if s.choices.is_some() || s.object.is_some_and(|o| o.starts_with("chat.completion")) {
        return Some(DialectKind::OpenAiChat);
    }
    if s.candidates.is_some() {
        return Some(DialectKind::Gemini);
    }
    if s.done.is_some() && s.message.is_some() {
        return Some(DialectKind::Ollama);
    }
    None
}

/// A running dialect decoder. Each event goes to [`Dialect::on_event`]; facts are appended to `out`.
#[derive(Debug)]
pub enum Dialect {
    OpenAiChat(openai_chat::OpenAiChat),
    OpenAiResponses(responses::Responses),
    AnthropicMessages(anthropic::Anthropic),
    Gemini(gemini::Gemini),
    Ollama(ollama::Ollama),
    Cohere(cohere::Cohere),
    OpenAiAssistants(assistants::Assistants),
    AiSdkUi(ai_sdk::AiSdk),
    BedrockConverse(bedrock::Bedrock),
}

impl Dialect {
    /// A fresh decoder for `kind`.
    pub fn new(kind: DialectKind) -> Self {
        match kind {
            DialectKind::OpenAiChat => Dialect::OpenAiChat(Default::default()),
            DialectKind::OpenAiResponses => Dialect::OpenAiResponses(Default::default()),
            DialectKind::AnthropicMessages => Dialect::AnthropicMessages(Default::default()),
            DialectKind::Gemini => Dialect::Gemini(Default::default()),
            DialectKind::Ollama => Dialect::Ollama(Default::default()),
            DialectKind::Cohere => Dialect::Cohere(Default::default()),
            DialectKind::OpenAiAssistants => Dialect::OpenAiAssistants(Default::default()),
            DialectKind::AiSdkUi => Dialect::AiSdkUi(Default::default()),
            DialectKind::BedrockConverse => Dialect::BedrockConverse(Default::default()),
        }
    }

    /// Which dialect this is.
    pub fn kind(&self) -> DialectKind {
        match self {
            Dialect::OpenAiChat(_) => DialectKind::OpenAiChat,
            Dialect::OpenAiResponses(_) => DialectKind::OpenAiResponses,
            Dialect::AnthropicMessages(_) => DialectKind::AnthropicMessages,
            Dialect::Gemini(_) => DialectKind::Gemini,
            Dialect::Ollama(_) => DialectKind::Ollama,
            Dialect::Cohere(_) => DialectKind::Cohere,
            Dialect::OpenAiAssistants(_) => DialectKind::OpenAiAssistants,
            Dialect::AiSdkUi(_) => DialectKind::AiSdkUi,
            Dialect::BedrockConverse(_) => DialectKind::BedrockConverse,
        }
    }

    /// Decode one event (for NDJSON framing, `event_type` is `"message"` and `data` is the line).
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        match self {
            Dialect::OpenAiChat(d) => d.on_event(event_type, data, out),
            Dialect::OpenAiResponses(d) => d.on_event(event_type, data, out),
            Dialect::AnthropicMessages(d) => d.on_event(event_type, data, out),
            Dialect::Gemini(d) => d.on_event(event_type, data, out),
            Dialect::Ollama(d) => d.on_event(event_type, data, out),
            Dialect::Cohere(d) => d.on_event(event_type, data, out),
            Dialect::OpenAiAssistants(d) => d.on_event(event_type, data, out),
            Dialect::AiSdkUi(d) => d.on_event(event_type, data, out),
            Dialect::BedrockConverse(d) => d.on_event(event_type, data, out),
        }
    }
}

/// Shared helper: a `{"error": …}` or `event: error` payload's message.
pub fn error_message(data: &str) -> String {
    #[derive(Deserialize)]
    struct Outer {
        #[serde(default)]
        error: Option<serde_json::Value>,
        #[serde(default)]
        message: Option<String>,
    }
    match serde_json::from_str::<Outer>(data) {
        Ok(Outer { error: Some(e), .. }) => match &e {
            serde_json::Value::Object(m) => {
                let msg = m.get("message").and_then(|v| v.as_str()).unwrap_or("");
                let ty = m.get("type").or_else(|| m.get("code")).map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                match (ty, msg.is_empty()) {
                    (Some(t), false) => format!("{t}: {msg}"),
                    (Some(t), true) => t,
                    (None, false) => msg.to_owned(),
                    (None, true) => e.to_string(),
                }
            }
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        Ok(Outer {
            message: Some(m), ..
        }) => m,
        _ => truncate(data, 300),
    }
}

/// Deserialize `Option<&RawValue>`-typed JSON for a string-ish field into a [`Raw<String>`].
pub(crate) fn raw_string(v: Option<&serde_json::value::RawValue>) -> Raw<String> {
    match v {
        None => Raw::Absent,
        Some(r) => {
            let t = r.get();
            if t == "null" {
                Raw::Null
            } else if t.starts_with('"') {
                match serde_json::from_str::<std::borrow::Cow<'_, str>>(t) {
                    Ok(s) => Raw::Value(s.into_owned()),
                    Err(_) => Raw::Value(t.to_owned()),
                }
            } else {
                Raw::Value(t.to_owned())
            }
        }
    }
}

/// Interpret a JSON `arguments` value: a string is a text fragment, `null` is absent, anything else
/// is an object (or other value) given whole.
pub(crate) fn raw_args(v: Option<&serde_json::value::RawValue>) -> Raw<ArgsPiece> {
    match v {
        None => Raw::Absent,
        Some(r) => {
            let t = r.get();
            if t == "null" {
                Raw::Null
            } else if t.starts_with('"') {
                match serde_json::from_str::<std::borrow::Cow<'_, str>>(t) {
                    Ok(s) => Raw::Value(ArgsPiece::Text(s.into_owned())),
                    Err(_) => Raw::Value(ArgsPiece::Object(t.to_owned())),
                }
            } else {
                Raw::Value(ArgsPiece::Object(t.to_owned()))
            }
        }
    }
}

/// JSON text without the whitespace between its tokens (strings and numbers kept exactly as
/// written): an object given whole (Gemini's `args`) reads the same however the provider indented
/// it (the REST endpoint without `alt=sse` pretty-prints every element).
pub(crate) fn minify_json(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut in_string = false;
    let mut escape = false;
    let needs = bytes.iter().any(|&b| {
        let ws = !in_string && b.is_ascii_whitespace();
        if in_string {
            if escape {
                escape = false;
            } else if b == b'\\' {
                escape = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        }
        ws
    });
    if !needs {
        return std::borrow::Cow::Borrowed(text);
    }
    let (mut in_string, mut escape) = (false, false);
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if in_string {
            if escape {
                escape = false;
            } else if ch == '\\' {
                escape = true;
            } else if ch == '"' {
                in_string = false;
            }
            out.push(ch);
        } else if ch == '"' {
            in_string = true;
            out.push(ch);
        } else if !ch.is_ascii_whitespace() {
            out.push(ch);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A non-negative integer index, or why not.
pub(crate) fn parse_index(v: Option<&serde_json::value::RawValue>) -> Result<Option<u64>, String> {
    match v {
        None => Ok(None),
        Some(r) if r.get() == "null" => Ok(None),
        Some(r) => r
            .get()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| truncate(r.get(), 40)),
    }
}

/// The finding for event data a dialect could not decode: `unexpected-shape` when it is JSON of
/// another shape (e.g. an index that is not a number), `non-json-data` when it is not JSON at all.
pub(crate) fn undecodable(data: &str, err: &serde_json::Error) -> Fact {
    let kind = if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() {
        FindingKind::UnexpectedShape
    } else {
        FindingKind::NonJsonData
    };
    Fact::Finding {
        kind,
        key: None,
        message: format!("{err}: {}", truncate(data.trim(), 80)),
    }
}

/// `deserialize_with` for `Option<&RawValue>` fields that must tell `null` from absent: serde's
/// `Option` maps `null` to `None`, which would make [`raw_string`] see an explicit `null` as absent.
/// Use with `#[serde(default, borrow, deserialize_with = "present")]`.
pub(crate) fn present<'de, D>(d: D) -> Result<Option<&'de serde_json::value::RawValue>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <&'de serde_json::value::RawValue as Deserialize<'de>>::deserialize(d).map(Some)
}

// --- one-pass field decoders for the hot path (no RawValue + re-parse)

/// A string-ish JSON field decoded in one pass: absent (the default), `null`, or its text. A
/// non-string value keeps its compact JSON text.
#[derive(Debug, Default)]
pub(crate) struct FieldStr(pub Raw<String>);

/// An `arguments` field decoded in one pass: a string is a text fragment; an object (or any other
/// value) is kept as compact JSON; `null` is [`Raw::Null`].
#[derive(Debug, Default)]
pub(crate) struct FieldArgs(pub Raw<ArgsPiece>);

/// What a field decoder saw, before it is wrapped.
enum Seen {
    Null,
    Str(String),
    Other(String),
}

struct SeenVisitor;

impl<'de> serde::de::Visitor<'de> for SeenVisitor {
    type Value = Seen;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Seen, E> {
        Ok(Seen::Str(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Seen, E> {
        Ok(Seen::Str(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Seen, E> {
        Ok(Seen::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Seen, E> {
        Ok(Seen::Null)
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Seen, E> {
        Ok(Seen::Other(v.to_string()))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Seen, E> {
        Ok(Seen::Other(v.to_string()))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Seen, E> {
        Ok(Seen::Other(v.to_string()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Seen, E> {
        Ok(Seen::Other(serde_json::Value::from(v).to_string()))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Seen, A::Error> {
        let v = serde_json::Value::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        Ok(Seen::Other(v.to_string()))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Seen, A::Error> {
        let v = serde_json::Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Seen::Other(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for FieldStr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(FieldStr(match d.deserialize_any(SeenVisitor)? {
            Seen::Null => Raw::Null,
            Seen::Str(s) | Seen::Other(s) => Raw::Value(s),
        }))
    }
}

impl<'de> Deserialize<'de> for FieldArgs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(FieldArgs(match d.deserialize_any(SeenVisitor)? {
            Seen::Null => Raw::Null,
            Seen::Str(s) => Raw::Value(ArgsPiece::Text(s)),
            Seen::Other(s) => Raw::Value(ArgsPiece::Object(s)),
        }))
    }
}

/// A `HashMap` with rustc's fast, non-cryptographic hasher (FxHash), for the small routing tables
/// on the per-fragment path.
pub use rustc_hash::FxHashMap;

#[cfg(test)]
mod api_tests {
    use super::*;
    use crate::framing::Framing;

    /// The request says which of a dialect's streaming APIs it asks for, and a recording's
    /// framing which one it streams: Anthropic's Messages API over SSE and Bedrock's InvokeModel,
    /// Gemini with and without `alt=sse`. A request that names none, or a dialect with one API,
    /// is told nothing.
    #[test]
    fn a_request_names_the_api_a_stream_belongs_to() {
        let anthropic = DialectKind::AnthropicMessages;
        let api = |path, query| anthropic.api_of_request(path, query).map(|a| a.name);
        assert_eq!(api("/v1/messages", None), Some("the Messages API over SSE"));
        assert_eq!(
            api(
                "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke-with-response-stream",
                None
            ),
            Some("InvokeModel")
        );
        assert_eq!(api("/v1/chat/completions", None), None);
        assert_eq!(
            anthropic.api_of_framing(Framing::AwsEventStream),
            anthropic.api_of_request("/model/m/invoke-with-response-stream", None)
        );
        assert_eq!(
            anthropic.api_of_framing(Framing::Sse),
            anthropic.api_of_request("/v1/messages", None)
        );
        assert_eq!(anthropic.api_of_framing(Framing::JsonLines), None);

        let gemini = DialectKind::Gemini;
        let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
        assert_eq!(
            gemini.api_of_request(path, Some("alt=sse")),
            gemini.api_of_framing(Framing::Sse)
        );
        assert_eq!(
            gemini.api_of_request(path, Some("key=k&alt=sse")),
            gemini.api_of_framing(Framing::Sse)
        );
        assert_eq!(
            gemini.api_of_request(path, None),
            gemini.api_of_framing(Framing::JsonArray)
        );
        assert_ne!(
            gemini.api_of_framing(Framing::JsonArray),
            gemini.api_of_framing(Framing::Sse)
        );
        assert_eq!(
            gemini.api_of_request("/v1beta/models/m:generateContent", None),
            None
        );

        for d in DialectKind::ALL {
            if d.apis().is_empty() {
                assert_eq!(d.api_of_request("/v1/messages", Some("alt=sse")), None);
                assert_eq!(d.api_of_framing(d.native_framing()), None);
            }
            // Each API is the dialect's own, in a framing of its own.
            for a in d.apis() {
                assert_eq!(a.dialect, d);
                assert_eq!(d.api_of_framing(a.framing), Some(*a));
            }
        }
        assert_eq!(
            anthropic
                .api_of_framing(Framing::AwsEventStream)
                .map(StreamApi::label),
            Some("anthropic-messages via InvokeModel".to_owned())
        );
    }
}
