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
            events: Some(a.events.len() as u64),
            fragments: Some(a.fragments.len() as u64),
            reads: timed.then_some(a.chunks.len() as u64),
            bytes: Some(a.body_len()),
            first_byte_us: timed
                .then(|| a.chunks.first().map(|c| c.t_micros))
                .flatten(),
            first_call_us,
            end_us: timed.then(|| a.chunks.last().map(|c| c.t_micros)).flatten(),
            finding_kinds: Some(kinds.join(",")),
            naive,
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
                    fragments: c.fragments.len() as u64,
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
/// `:streamGenerateContent`), URL escapes left as they are.
fn model_in_path(path: &str) -> Option<String> {
    let mut segments = path.split('/');
    while let Some(s) = segments.next() {
        if s == "models" || s == "model" {
            let name = segments.next()?.split(':').next()?;
            return (!name.is_empty()).then(|| name.to_owned());
        }
    }
    None
}

/// The model named in one event's JSON data, if any: `model`, `modelVersion`, `message.model`
/// (Anthropic `message_start`) or `response.model` (Responses `response.created`). `scan` asks
/// the first few events of a stream whose request did not name one.
pub fn model_in_event(data: &[u8]) -> Option<String> {
    let line = data
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find_map(|l| {
            let l = l.strip_prefix(b"data:").unwrap_or(l);
            let l = l.strip_prefix(b" ").unwrap_or(l);
            l.starts_with(b"{").then_some(l)
        })?;
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let pick = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .and_then(|m| m.as_str())
            .filter(|m| !m.is_empty())
            .map(str::to_owned)
    };
    pick(&v, "model")
        .or_else(|| pick(&v, "modelVersion"))
        .or_else(|| v.get("message").and_then(|m| pick(m, "model")))
        .or_else(|| v.get("response").and_then(|m| pick(m, "model")))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn an_unreadable_row_is_one_line_with_nothing_else_known() {
        let r = StreamRow::unreadable("a/b.ron", "bad\nthing");
        assert_eq!(r.stream_key, "a/b.ron#0");
        assert_eq!(r.error.as_deref(), Some("bad\\nthing"));
        assert_eq!(r.verdict, RowVerdict::Unreadable);
        assert!(r.naive.iter().all(Option::is_none));
        assert_eq!(r.kinds().count(), 0);
    }
}
