//! The rows `scan` makes of one analysed stream (or of a file that could not be read): one
//! [`StreamRow`], a [`CallRow`] per call and a [`FindingRow`] per finding. They are built from
//! the [`Analysis`] and hold nothing of it, so the analysis is dropped once they are made.

use crate::analysis::{Analysis, Check, StreamEnding};
use crate::findings::{Finding, FindingKind, Severity};
use crate::naive::Strategy;
use crate::recording::RequestInfo;

/// The one verdict of a stream, as the `verdict` column writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowVerdict {
    /// No error-severity finding (`check` exits 0).
    Ok,
    /// Some error-severity finding (`check` exits 1).
    NotOk,
    /// The file could not be read (its error is in the `error` column).
    Unreadable,
    /// An entry found in a folder that is not a capture (the `error` column says why: nothing in
    /// it was recognised, or it is not a regular file): reported, never counted as a stream.
    Skipped,
}

impl RowVerdict {
    /// Every verdict, in the order filters list them.
    pub const ALL: [RowVerdict; 4] = [
        RowVerdict::Ok,
        RowVerdict::NotOk,
        RowVerdict::Unreadable,
        RowVerdict::Skipped,
    ];

    /// The column's text.
    pub fn name(self) -> &'static str {
        match self {
            RowVerdict::Ok => "ok",
            RowVerdict::NotOk => "not-ok",
            RowVerdict::Unreadable => "unreadable",
            RowVerdict::Skipped => "skipped",
        }
    }

    /// The text back to the verdict.
    pub fn from_name(s: &str) -> Option<Self> {
        RowVerdict::ALL.into_iter().find(|v| v.name() == s)
    }
}

/// One row of the `streams` table (see [`super::Table::Streams`]'s columns for each field's
/// meaning).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRow {
    pub stream_key: String,
    pub source_file: String,
    pub stream: u32,
    pub source_kind: Option<String>,
    pub content_hash: Option<String>,
    pub dialect: Option<String>,
    pub provider_host: Option<String>,
    pub model: Option<String>,
    pub complete: Option<bool>,
    pub ending: Option<String>,
    pub finish_reason: Option<String>,
    pub verdict: RowVerdict,
    pub problems: Option<String>,
    pub error: Option<String>,
    pub calls: Option<u64>,
    pub server_tools: Option<u64>,
    pub events: Option<u64>,
    pub fragments: Option<u64>,
    pub reads: Option<u64>,
    pub bytes: Option<u64>,
    pub first_byte_us: Option<u64>,
    pub first_call_us: Option<u64>,
    pub end_us: Option<u64>,
    /// Sorted, comma-separated.
    pub finding_kinds: Option<String>,
    /// Per strategy, in [`Strategy::ALL`] order: it ended with the correct calls; `None` when it
    /// could not run.
    pub naive: Vec<Option<bool>>,
    /// The names of the client's calls, in call order.
    pub tool_names: Option<Vec<String>>,
    /// The model the stream itself names (the one that answered, which a router may have chosen).
    pub response_model: Option<String>,
    /// The response's id as the stream gives it.
    pub response_id: Option<String>,
    /// The provider's request id (a response header), when the capture has the response head.
    pub request_id: Option<String>,
    /// The response's HTTP status, when the capture has it.
    pub http_status: Option<u64>,
    /// [`finish_reason`](Self::finish_reason) in one vocabulary ([`normalised_finish_reason`]).
    pub finish_reason_normalised: Option<String>,
    /// When the capture was made (RFC 3339), when it says.
    pub captured_at: Option<String>,
    /// Token usage the stream reports ([`TokenUsage`]).
    pub usage: TokenUsage,
    /// The scan that wrote the row (set by the writer; `None` elsewhere).
    pub scan_id: Option<String>,
}

impl StreamRow {
    /// The row of a file that could not be read: its one-line `error`, nothing else known.
    pub fn unreadable(source_file: &str, error: &str) -> Self {
        Self {
            stream_key: stream_key(source_file, 0, None),
            source_file: source_file.to_owned(),
            stream: 0,
            source_kind: None,
            content_hash: None,
            dialect: None,
            provider_host: None,
            model: None,
            complete: None,
            ending: None,
            finish_reason: None,
            verdict: RowVerdict::Unreadable,
            problems: None,
            error: Some(one_line(error)),
            calls: None,
            server_tools: None,
            events: None,
            fragments: None,
            reads: None,
            bytes: None,
            first_byte_us: None,
            first_call_us: None,
            end_us: None,
            finding_kinds: None,
            naive: vec![None; Strategy::ALL.len()],
            tool_names: None,
            response_model: None,
            response_id: None,
            request_id: None,
            http_status: None,
            finish_reason_normalised: None,
            captured_at: None,
            usage: TokenUsage::default(),
            scan_id: None,
        }
    }

    /// The row of a folder entry that is not a capture: its one-line reason in `error`, nothing
    /// else known.
    pub fn skipped(source_file: &str, why: &str) -> Self {
        Self {
            verdict: RowVerdict::Skipped,
            ..Self::unreadable(source_file, why)
        }
    }

    /// The row is a stream (or a file that could not be read), not a skipped entry.
    pub fn is_stream(&self) -> bool {
        self.verdict != RowVerdict::Skipped
    }

    /// The stream is OK (the `check` exit code 0 condition).
    pub fn ok(&self) -> bool {
        self.verdict == RowVerdict::Ok
    }

    /// The finding kinds, one by one.
    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.finding_kinds
            .as_deref()
            .unwrap_or("")
            .split(',')
            .filter(|k| !k.is_empty())
    }

    /// Strategy `s` ran and ended with other calls than the correct ones.
    pub fn naive_failed(&self, s: Strategy) -> Option<bool> {
        let i = Strategy::ALL.iter().position(|&x| x == s)?;
        self.naive.get(i).copied().flatten().map(|agrees| !agrees)
    }
}

/// One row of the `calls` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallRow {
    pub stream_key: String,
    pub call: u32,
    pub name: String,
    pub id_present: bool,
    pub server_tool: Option<String>,
    pub argument_bytes: u64,
    pub fragments: u64,
    pub parsed: bool,
    pub complete: bool,
    pub verbatim: Option<bool>,
    pub contiguous: Option<bool>,
    pub first_only: Option<bool>,
    pub first_fragment_us: Option<u64>,
    pub last_fragment_us: Option<u64>,
    pub parse_error: Option<String>,
}

/// One row of the `findings` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FindingRow {
    pub stream_key: String,
    pub kind: FindingKind,
    pub call: Option<u32>,
    pub count: u64,
    pub chunk: Option<u32>,
    pub event: Option<u32>,
    pub fragment: Option<u32>,
    pub offset: Option<u64>,
    pub message: String,
}

impl FindingRow {
    /// The kind's severity, as the column writes it.
    pub fn severity(&self) -> &'static str {
        match self.kind.severity() {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Error => "error",
        }
    }
}

/// Everything `scan` writes about one stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRows {
    pub stream: StreamRow,
    pub calls: Vec<CallRow>,
    pub findings: Vec<FindingRow>,
}

/// The key of stream `stream` of `source_file` in the three tables: `source_file#stream`, then
/// `@` and the stream's content hash when its body was read, so the key names the content as
/// well as the place (two roots holding a file of the same name, or a file that changed between
/// two scans, give different keys).
pub fn stream_key(source_file: &str, stream: u32, content_hash: Option<&str>) -> String {
    match content_hash {
        Some(h) => format!("{source_file}#{stream}@{h}"),
        None => format!("{source_file}#{stream}"),
    }
}

/// `s` on one line: line breaks and other control characters made visible.
fn one_line(s: &str) -> String {
    crate::text::visible(s).into_owned()
}

/// What `scan` knows about a stream besides its analysis.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamContext {
    /// The file as it is to be named (`source_file`).
    pub source_file: String,
    /// The stream's number in its file, from 1.
    pub stream: u32,
    /// XXH64 of the body, hex.
    pub content_hash: String,
    /// The model the stream itself names (read from its first events), if any.
    pub stream_model: Option<String>,
    /// The response id the stream gives (read from its first events), if any.
    pub response_id: Option<String>,
    /// The token usage the stream reports (read from every event that carries it).
    pub usage: TokenUsage,
}

impl StreamRows {
    /// The rows of one analysed stream.
    pub fn from_analysis(a: &Analysis, ctx: &StreamContext) -> Self {
        let key = stream_key(&ctx.source_file, ctx.stream, Some(&ctx.content_hash));
        let timed = a.source.timing_known;
        let chunk_time = |chunk: u32| -> Option<u64> {
            timed
                .then(|| a.chunks.get(chunk as usize).map(|c| c.t_micros))
                .flatten()
        };
        let fragment_time = |no: u32| -> Option<u64> {
            a.fragments
                .get(no as usize)
                .and_then(|f| chunk_time(f.pos.chunk))
        };
        let verdict = a.verdict();
        let (ending, finish_reason) = match &a.ending {
            StreamEnding::Finished { reason } => ("finished", Some(reason.clone())),
            StreamEnding::CallsComplete => ("calls-complete", None),
            StreamEnding::ProviderError { .. } => ("provider-error", None),
            StreamEnding::EndedWithoutFinish => ("ended-without-finish", None),
        };
        let mut kinds: Vec<&str> = a.findings.iter().map(|f| f.kind.label()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let first_call_us = a
            .client_calls()
            .filter_map(|c| c.fragments.first().copied())
            .min()
            .and_then(fragment_time)
            .or_else(|| {
                // A complete response has no fragments: its calls arrive with its last read.
                (a.complete && a.client_calls().next().is_some())
                    .then(|| a.chunks.last().and_then(|c| timed.then_some(c.t_micros)))
                    .flatten()
            });
        let naive = Strategy::ALL
            .iter()
            .map(|&s| {
                a.strategy(s)
                    .filter(|r| r.report.not_applicable.is_none())
                    .map(|r| r.agreement.matches_correct)
            })
            .collect();
        let (host, model) = request_host_model(a.request.as_ref());
        let finish_reason_normalised = finish_reason.as_deref().and_then(normalised_finish_reason);
        let stream = StreamRow {
            stream_key: key.clone(),
            source_file: ctx.source_file.clone(),
            stream: ctx.stream,
            source_kind: Some(a.source.kind.label()),
            content_hash: Some(ctx.content_hash.clone()),
            dialect: a.reported_dialect().map(|d| d.name().to_owned()),
            provider_host: host,
            model: model.or_else(|| ctx.stream_model.clone()),
            complete: Some(a.complete),
            ending: Some(ending.to_owned()),
            finish_reason,
            verdict: if verdict.ok() {
                RowVerdict::Ok
            } else {
                RowVerdict::NotOk
            },
            problems: (!verdict.ok()).then(|| one_line(&verdict.line())),
            error: None,
            calls: Some(a.client_calls().count() as u64),
            server_tools: Some(a.server_tools().count() as u64),
            events: Some(a.event_count() as u64),
            fragments: Some(a.fragment_count() as u64),
            reads: timed.then_some(a.chunk_count() as u64),
            bytes: Some(a.body_len()),
            first_byte_us: timed
                .then(|| a.chunks.first().map(|c| c.t_micros))
                .flatten(),
            first_call_us,
            end_us: timed.then(|| a.chunks.last().map(|c| c.t_micros)).flatten(),
            finding_kinds: Some(kinds.join(",")),
            naive,
            tool_names: Some(a.client_calls().map(|c| c.name.clone()).collect()),
            response_model: ctx.stream_model.clone(),
            response_id: ctx.response_id.clone(),
            request_id: a.response.as_ref().and_then(|r| request_id(&r.headers)),
            http_status: a.response.as_ref().map(|r| u64::from(r.status)),
            finish_reason_normalised,
            captured_at: Some(a.meta.created.clone()).filter(|c| !c.is_empty()),
            usage: ctx.usage,
            scan_id: None,
        };
        let calls = a
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let cp = a.checkpoints.get(i);
                let check = |f: fn(&crate::analysis::Checkpoints) -> &Check| {
                    cp.and_then(|cp| f(cp).passed())
                };
                let (parsed, parse_error) = match &c.parsed {
                    crate::accumulate::Parsed::Ok(_) => (true, None),
                    crate::accumulate::Parsed::Err { error, .. } => (false, Some(one_line(error))),
                };
                CallRow {
                    stream_key: key.clone(),
                    call: c.position,
                    name: c.name.clone(),
                    id_present: c.id.as_deref().is_some_and(|id| !id.is_empty()),
                    server_tool: c.server_tool.clone(),
                    argument_bytes: c.byte_len() as u64,
                    fragments: u64::from(c.fragment_count),
                    parsed,
                    complete: c.complete,
                    verbatim: check(|cp| &cp.verbatim),
                    contiguous: check(|cp| &cp.contiguous),
                    first_only: check(|cp| &cp.first_only),
                    first_fragment_us: c.fragments.first().and_then(|&n| fragment_time(n)),
                    last_fragment_us: c.fragments.last().and_then(|&n| fragment_time(n)),
                    parse_error,
                }
            })
            .collect();
        let findings = a.findings.iter().map(|f| finding_row(&key, f)).collect();
        StreamRows {
            stream,
            calls,
            findings,
        }
    }
}

fn finding_row(key: &str, f: &Finding) -> FindingRow {
    FindingRow {
        stream_key: key.to_owned(),
        kind: f.kind,
        call: f.call,
        count: f.count,
        chunk: f.first.chunk,
        event: f.first.event,
        fragment: f.first.fragment,
        offset: f.first.offset,
        message: one_line(&f.message),
    }
}

// ---------------------------------------------------------------------------------------------
// Provider host and model
// ---------------------------------------------------------------------------------------------

/// The request URL's host (with its port, lower-cased, without user info), and the model the
/// request names: its JSON body's `model`, else the URL path's `/models/NAME` (Gemini) or
/// `/model/NAME` (Bedrock).
pub fn request_host_model(request: Option<&RequestInfo>) -> (Option<String>, Option<String>) {
    let Some(req) = request else {
        return (None, None);
    };
    let (host, path) = split_url(&req.url);
    let from_body = serde_json::from_str::<serde_json::Value>(&req.body)
        .ok()
        .and_then(|v| v.get("model").and_then(|m| m.as_str()).map(str::to_owned))
        .filter(|m| !m.is_empty());
    let model = from_body.or_else(|| model_in_path(path));
    (host, model)
}

/// The host and the path of a URL (`https://user@Host:8080/v1/x?q` → `host:8080`, `/v1/x`).
fn split_url(url: &str) -> (Option<String>, &str) {
    let Some((_, rest)) = url.split_once("://") else {
        return (None, url);
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let path = rest[end..].split(['?', '#']).next().unwrap_or("");
    let host = (!host.is_empty()).then(|| host.to_ascii_lowercase());
    (host, path)
}

/// `NAME` from a path segment pair `models/NAME` or `model/NAME` (cut at `:` — Gemini's
/// `:streamGenerateContent`), then percent-decoded: Bedrock's URLs escape the `:` and `/` of
/// ARNs and versioned ids (`anthropic.claude-3-5-sonnet-20240620-v1%3A0`), and the column holds
/// the model's name as the provider spells it.
fn model_in_path(path: &str) -> Option<String> {
    let mut segments = path.split('/');
    while let Some(s) = segments.next() {
        if s == "models" || s == "model" {
            let name = decode_segment(segments.next()?.split(':').next()?);
            return (!name.is_empty()).then_some(name);
        }
    }
    None
}

/// A URL path segment with its `%XX` escapes decoded (lossily as UTF-8; `+` stays a `+` in a
/// path, unlike in a query).
fn decode_segment(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |k: usize| b.get(k).and_then(|&c| (c as char).to_digit(16));
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Response headers that carry the provider's id of the request, in the order they are
/// preferred (OpenAI and most: `x-request-id`; Anthropic: `request-id`; AWS: `x-amzn-requestid`;
/// Azure: `apim-request-id`).
const REQUEST_ID_HEADERS: &[&str] = &[
    "x-request-id",
    "request-id",
    "x-amzn-requestid",
    "x-amz-request-id",
    "apim-request-id",
];

/// The provider's request id among a response's headers.
fn request_id(headers: &[(String, String)]) -> Option<String> {
    REQUEST_ID_HEADERS.iter().find_map(|want| {
        headers
            .iter()
            .find(|(k, v)| k.eq_ignore_ascii_case(want) && !v.trim().is_empty())
            .map(|(_, v)| one_line(v.trim()))
    })
}

/// A finish reason in one vocabulary across dialects (OpenTelemetry's
/// `gen_ai.response.finish_reasons` values, OpenAI's words): `tool_calls`, `stop`, `length`,
/// `content_filter`, `error`; any other reason lower-cased as it is; `None` for `[DONE]` (a
/// terminator, not a reason).
pub fn normalised_finish_reason(reason: &str) -> Option<String> {
    let r = reason.trim().to_ascii_lowercase();
    let word = match r.as_str() {
        "" | "[done]" => return None,
        "tool_calls" | "tool_call" | "tool_use" | "function_call" => "tool_calls",
        "stop" | "end_turn" | "stop_sequence" | "complete" | "eos" | "finish_reason_stop" => "stop",
        "length" | "max_tokens" | "max_output_tokens" | "model_context_window_exceeded" => "length",
        "content_filter"
        | "content_filtered"
        | "safety"
        | "recitation"
        | "blocklist"
        | "prohibited_content"
        | "spii"
        | "guardrail_intervened"
        | "refusal" => "content_filter",
        "error" | "error_toxic" | "error_limit" => "error",
        other => other,
    };
    Some(word.to_owned())
}

/// The model named in one event's JSON data, if any: `model`, `modelVersion`, `message.model`
/// (Anthropic `message_start`) or `response.model` (Responses `response.created`). `scan` asks
/// the first few events of a stream whose request did not name one.
pub fn model_in_event(data: &[u8]) -> Option<String> {
    response_in_event(data).0
}

/// The model and the response id named in one event's JSON data: the model as
/// [`model_in_event`]; the id as `id` (OpenAI Chat chunks, Cohere), `responseId` (Gemini),
/// `message.id` (Anthropic `message_start`) or `response.id` (Responses `response.created`).
pub fn response_in_event(data: &[u8]) -> (Option<String>, Option<String>) {
    let Some(v) = event_json(data) else {
        return (None, None);
    };
    let pick = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .and_then(|m| m.as_str())
            .filter(|m| !m.is_empty())
            .map(str::to_owned)
    };
    let nested = |outer: &str, k: &str| v.get(outer).and_then(|m| pick(m, k));
    let model = pick(&v, "model")
        .or_else(|| pick(&v, "modelVersion"))
        .or_else(|| nested("message", "model"))
        .or_else(|| nested("response", "model"));
    let id = pick(&v, "id")
        .or_else(|| pick(&v, "responseId"))
        .or_else(|| nested("message", "id"))
        .or_else(|| nested("response", "id"));
    (model, id)
}

/// Token usage as a stream reports it (OpenTelemetry `gen_ai.usage.input_tokens` and
/// `gen_ai.usage.output_tokens`; reasoning tokens where the provider counts them apart). Each
/// field is the last value the stream gave: providers that stream usage send running totals
/// (Gemini's `usageMetadata` in every chunk, Anthropic's `message_delta`), so the last is the total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// Prompt (input) tokens.
    pub input: Option<u64>,
    /// Completion (output) tokens, reasoning included where the provider includes it.
    pub output: Option<u64>,
    /// Reasoning (thinking) tokens, where counted apart.
    pub reasoning: Option<u64>,
}

impl TokenUsage {
    /// Take what the event `data` says of usage, if anything: the `usage` object of OpenAI Chat,
    /// Assistants, Anthropic (`message.usage` too), Responses (`response.usage`), Cohere
    /// (`delta.usage.billed_units`) and Bedrock (`usage`, `metadata.usage`), Gemini's
    /// `usageMetadata`, Ollama's `prompt_eval_count` / `eval_count`. Cheap on events without any.
    pub fn event(&mut self, data: &[u8]) {
        const MARKERS: [&[u8]; 3] = [b"sage", b"eval_count", b"Usage"];
        if !MARKERS
            .iter()
            .any(|m| memchr::memmem::find(data, m).is_some())
        {
            return;
        }
        let Some(v) = event_json(data) else {
            return;
        };
        let num = |o: &serde_json::Value, keys: &[&str]| -> Option<u64> {
            keys.iter()
                .find_map(|k| o.get(*k).and_then(serde_json::Value::as_u64))
        };
        let objects = [
            v.get("usage"),
            v.get("usageMetadata"),
            v.get("message").and_then(|m| m.get("usage")),
            v.get("response").and_then(|m| m.get("usage")),
            v.get("data").and_then(|m| m.get("usage")),
            v.get("metadata").and_then(|m| m.get("usage")),
            v.get("delta")
                .and_then(|m| m.get("usage"))
                .map(|u| u.get("billed_units").unwrap_or(u)),
        ];
        for u in objects.into_iter().flatten().filter(|u| u.is_object()) {
            if let Some(n) = num(
                u,
                &[
                    "input_tokens",
                    "prompt_tokens",
                    "inputTokens",
                    "promptTokenCount",
                ],
            ) {
                self.input = Some(n);
            }
            if let Some(n) = num(
                u,
                &[
                    "output_tokens",
                    "completion_tokens",
                    "outputTokens",
                    "candidatesTokenCount",
                ],
            ) {
                self.output = Some(n);
            }
            let details = ["output_tokens_details", "completion_tokens_details"]
                .iter()
                .find_map(|k| u.get(*k));
            if let Some(n) = details
                .and_then(|d| num(d, &["reasoning_tokens"]))
                .or_else(|| num(u, &["thoughtsTokenCount"]))
            {
                self.reasoning = Some(n);
            }
        }
        if let Some(n) = num(&v, &["prompt_eval_count"]) {
            self.input = Some(n);
        }
        if let Some(n) = num(&v, &["eval_count"]) {
            self.output = Some(n);
        }
    }
}

/// The JSON object of an event's first `data:` line (or of a JSON line).
fn event_json(data: &[u8]) -> Option<serde_json::Value> {
    let line = data
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find_map(|l| {
            let l = l.strip_prefix(b"data:").unwrap_or(l);
            let l = l.strip_prefix(b" ").unwrap_or(l);
            l.starts_with(b"{").then_some(l)
        })?;
    serde_json::from_slice(line).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Usage as each provider streams it, the last value winning (running totals).
    #[test]
    fn token_usage_is_read_from_every_providers_shape() {
        let cases: [(&[&str], [Option<u64>; 3]); 8] = [
            // OpenAI Chat with stream_options.include_usage: the last chunk.
            (
                &[
                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":20,\"completion_tokens_details\":{\"reasoning_tokens\":8}}}\n\n",
                ],
                [Some(50), Some(20), Some(8)],
            ),
            // Anthropic: input in message_start, the output total in message_delta.
            (
                &[
                    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":472,\"output_tokens\":2}}}\n\n",
                    "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":89}}\n\n",
                ],
                [Some(472), Some(89), None],
            ),
            // Responses: response.completed.
            (
                &[
                    "event: response.completed\ndata: {\"response\":{\"usage\":{\"input_tokens\":9,\"output_tokens\":30,\"output_tokens_details\":{\"reasoning_tokens\":12}}}}\n\n",
                ],
                [Some(9), Some(30), Some(12)],
            ),
            // Gemini: usageMetadata in every chunk, a running total.
            (
                &[
                    "data: {\"usageMetadata\":{\"promptTokenCount\":7,\"candidatesTokenCount\":1}}\r\n\r\n",
                    "data: {\"usageMetadata\":{\"promptTokenCount\":7,\"candidatesTokenCount\":15,\"thoughtsTokenCount\":4}}\r\n\r\n",
                ],
                [Some(7), Some(15), Some(4)],
            ),
            // Ollama: the done line.
            (
                &["{\"done\":true,\"prompt_eval_count\":26,\"eval_count\":298}\n"],
                [Some(26), Some(298), None],
            ),
            // Cohere: message-end's billed units.
            (
                &[
                    "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":{\"usage\":{\"billed_units\":{\"input_tokens\":31,\"output_tokens\":17},\"tokens\":{\"input_tokens\":900,\"output_tokens\":60}}}}\n\n",
                ],
                [Some(31), Some(17), None],
            ),
            // Bedrock ConverseStream, decoded.
            (
                &["data: {\"metadata\":{\"usage\":{\"inputTokens\":120,\"outputTokens\":45}}}\n\n"],
                [Some(120), Some(45), None],
            ),
            // No usage anywhere.
            (
                &["data: {\"choices\":[{\"delta\":{\"content\":\"the usage of words\"}}]}\n\n"],
                [None, None, None],
            ),
        ];
        for (events, [input, output, reasoning]) in cases {
            let mut u = TokenUsage::default();
            for e in events {
                u.event(e.as_bytes());
            }
            assert_eq!(
                u,
                TokenUsage {
                    input,
                    output,
                    reasoning
                },
                "{events:?}"
            );
        }
    }

    #[test]
    fn host_and_model_come_from_the_request() {
        let req = |url: &str, body: &str| RequestInfo {
            method: "POST".into(),
            url: url.into(),
            headers: vec![],
            body: body.into(),
        };
        let table = [
            (
                "https://API.openai.com/v1/chat/completions",
                r#"{"model":"gpt-4o","stream":true}"#,
                Some("api.openai.com"),
                Some("gpt-4o"),
            ),
            (
                "https://u:p@generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse&key=REDACTED",
                "{}",
                Some("generativelanguage.googleapis.com"),
                Some("gemini-2.0-flash"),
            ),
            (
                "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku/converse-stream",
                "",
                Some("bedrock-runtime.us-east-1.amazonaws.com"),
                Some("anthropic.claude-3-haiku"),
            ),
            (
                "http://127.0.0.1:4000/api/chat",
                r#"{"model":""}"#,
                Some("127.0.0.1:4000"),
                None,
            ),
            ("not a url", "not json", None, None),
        ];
        for (url, body, host, model) in table {
            let (h, m) = request_host_model(Some(&req(url, body)));
            assert_eq!(h.as_deref(), host, "{url}");
            assert_eq!(m.as_deref(), model, "{url}");
        }
        assert_eq!(request_host_model(None), (None, None));
    }

    #[test]
    fn the_model_is_read_from_each_dialects_first_events() {
        let table: [(&[u8], Option<&str>); 6] = [
            (b"data: {\"id\":\"c\",\"model\":\"gpt-4o-2024\"}\n\n", Some("gpt-4o-2024")),
            (
                b"event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\"}}\r\n\r\n",
                Some("claude-x"),
            ),
            (
                b"event: response.created\ndata:{\"response\":{\"model\":\"o4\"}}\n\n",
                Some("o4"),
            ),
            (b"data: {\"modelVersion\":\"gemini-2.5\"}\n\n", Some("gemini-2.5")),
            (b"{\"model\":\"llama3\",\"message\":{}}\n", Some("llama3")),
            (b"data: [DONE]\n\n", None),
        ];
        for (event, want) in table {
            assert_eq!(
                model_in_event(event).as_deref(),
                want,
                "{}",
                String::from_utf8_lossy(event)
            );
        }
    }

    #[test]
    fn finish_reasons_are_normalised_across_dialects() {
        for (raw, want) in [
            ("tool_calls", Some("tool_calls")),
            ("tool_use", Some("tool_calls")),
            ("TOOL_CALL", Some("tool_calls")),
            ("end_turn", Some("stop")),
            ("STOP", Some("stop")),
            ("COMPLETE", Some("stop")),
            ("max_tokens", Some("length")),
            ("MAX_TOKENS", Some("length")),
            ("SAFETY", Some("content_filter")),
            ("guardrail_intervened", Some("content_filter")),
            ("Something_New", Some("something_new")),
            ("[DONE]", None),
        ] {
            assert_eq!(normalised_finish_reason(raw).as_deref(), want, "{raw}");
        }
    }

    #[test]
    fn request_ids_and_response_ids_are_read() {
        let h = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        assert_eq!(
            request_id(&[h("content-type", "x"), h("X-Amzn-RequestId", " r-1 ")]).as_deref(),
            Some("r-1")
        );
        assert_eq!(
            request_id(&[h("request-id", "b"), h("x-request-id", "a")]).as_deref(),
            Some("a")
        );
        assert_eq!(request_id(&[h("x-request-id", " ")]), None);
        let (m, id) = response_in_event(
            b"event: response.created\ndata: {\"response\":{\"id\":\"resp_1\",\"model\":\"o4\"}}\n\n",
        );
        assert_eq!((m.as_deref(), id.as_deref()), (Some("o4"), Some("resp_1")));
        let (m, id) =
            response_in_event(b"data: {\"responseId\":\"g1\",\"modelVersion\":\"gemini-2.5\"}\n\n");
        assert_eq!(
            (m.as_deref(), id.as_deref()),
            (Some("gemini-2.5"), Some("g1"))
        );
        assert_eq!(decode_segment("a%3A0%2Fb+c%zz"), "a:0/b+c%zz");
    }

    #[test]
    fn an_unreadable_row_is_one_line_with_nothing_else_known() {
        let r = StreamRow::unreadable("a/b.ron", "bad\nthing");
        assert_eq!(r.stream_key, "a/b.ron#0");
        assert_eq!(r.error.as_deref(), Some("bad\\nthing"));
        assert_eq!(r.verdict, RowVerdict::Unreadable);
        assert!(r.naive.iter().all(Option::is_none));
        assert_eq!(r.kinds().count(), 0);
    }
}
