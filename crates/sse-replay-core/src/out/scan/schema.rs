//! The three tables `scan` writes, described once: each column's name, type, whether it can be
//! null, what it means, and how it is read from a row. Every writer (Parquet, JSON lines, CSV),
//! the README's schema table and the app's Corpus table read this description, so a column is
//! added or renamed in one place. [`SCHEMA_VERSION`] is written into each file's metadata and
//! goes up whenever a column changes meaning, type or name (adding one at the end does too).

use std::sync::OnceLock;

use crate::naive::Strategy;

use super::rows::{CallRow, FindingRow, StreamRow};

/// The version of the tables' schema (the `schema_version` key of each file's metadata).
pub const SCHEMA_VERSION: u32 = 2;

/// One of the three tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// One row per stream (or per file that could not be read).
    Streams,
    /// One row per call (client calls and server tools).
    Calls,
    /// One row per finding (aggregated per kind and call, as `check` reports them).
    Findings,
}

impl Table {
    /// The three tables, in the order they are written.
    pub const ALL: [Table; 3] = [Table::Streams, Table::Calls, Table::Findings];

    /// The table's name: the file stem (`streams.parquet`) and the `table` tag of a JSON line.
    pub fn name(self) -> &'static str {
        match self {
            Table::Streams => "streams",
            Table::Calls => "calls",
            Table::Findings => "findings",
        }
    }

    /// One sentence: what a row is.
    pub fn description(self) -> &'static str {
        match self {
            Table::Streams => {
                "One row per stream (each stream of a capture is its own row), per file that could not be read, or per entry found in a folder that is not a capture (`verdict` `skipped`), in the order the files were listed."
            }
            Table::Calls => "One row per tool call of a stream, server tools included.",
            Table::Findings => {
                "One row per finding of a stream: each kind once per call (or once for the stream), with how often it was seen and where first."
            }
        }
    }

    /// The table's columns, in order.
    pub fn columns(self) -> &'static [Column] {
        match self {
            Table::Streams => &stream_fields().columns,
            Table::Calls => &call_fields().columns,
            Table::Findings => &finding_fields().columns,
        }
    }
}

/// A column's type, as every format stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `true`/`false` (Parquet BOOLEAN, JSON boolean, CSV `true`/`false`).
    Bool,
    /// A signed 64-bit integer (Parquet INT64; counts, numbers and microseconds).
    Int,
    /// UTF-8 text (Parquet BYTE_ARRAY annotated as a string).
    Text,
    /// A list of UTF-8 texts (Parquet LIST of strings, a JSON array; in CSV the JSON array as
    /// text).
    TextList,
}

impl Kind {
    /// The name the schema documentation uses.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Int => "int64",
            Kind::Text => "string",
            Kind::TextList => "string[]",
        }
    }
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    /// The value may be null (empty in CSV, `null` in JSON).
    pub nullable: bool,
    /// What it holds.
    pub doc: String,
}

/// One value of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Text(&'a str),
    TextList(&'a [String]),
}

impl Value<'_> {
    /// The value as text, as CSV writes it and the app shows it (`""` for null).
    pub fn to_text(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::Bool(b) => b.to_string(),
            Value::Int(n) => n.to_string(),
            Value::Text(s) => (*s).to_owned(),
            Value::TextList(v) => v.join(", "),
        }
    }
}

/// A row of one of the tables, read column by column.
pub trait Row {
    /// Which table it belongs to.
    const TABLE: Table;
    /// The value of column `i` (in [`Table::columns`] order); [`Value::Null`] past the end.
    fn value(&self, i: usize) -> Value<'_>;
}

/// A row of any of the three tables, for writers that take them in any order.
#[derive(Clone, Copy, Debug)]
pub enum AnyRow<'a> {
    Stream(&'a StreamRow),
    Call(&'a CallRow),
    Finding(&'a FindingRow),
}

impl AnyRow<'_> {
    /// The row's table.
    pub fn table(&self) -> Table {
        match self {
            AnyRow::Stream(_) => Table::Streams,
            AnyRow::Call(_) => Table::Calls,
            AnyRow::Finding(_) => Table::Findings,
        }
    }

    /// The value of column `i` of the row's table.
    pub fn value(&self, i: usize) -> Value<'_> {
        match self {
            AnyRow::Stream(r) => r.value(i),
            AnyRow::Call(r) => r.value(i),
            AnyRow::Finding(r) => r.value(i),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The columns: each with its accessor, so the order is written once.
// ---------------------------------------------------------------------------------------------

type Getter<R> = Box<dyn Fn(&R) -> Value<'_> + Send + Sync>;

/// A table's columns and how each is read from its row type.
struct Fields<R> {
    columns: Vec<Column>,
    getters: Vec<Getter<R>>,
}

impl<R> Fields<R> {
    fn new() -> Self {
        Self {
            columns: Vec::new(),
            getters: Vec::new(),
        }
    }

    fn add(
        &mut self,
        name: &str,
        kind: Kind,
        nullable: bool,
        doc: &str,
        get: impl Fn(&R) -> Value<'_> + Send + Sync + 'static,
    ) {
        self.columns.push(Column {
            name: name.to_owned(),
            kind,
            nullable,
            doc: doc.to_owned(),
        });
        self.getters.push(Box::new(get));
    }

    fn value<'r>(&self, row: &'r R, i: usize) -> Value<'r> {
        self.getters.get(i).map_or(Value::Null, |g| g(row))
    }
}

fn text(s: &str) -> Value<'_> {
    Value::Text(s)
}

fn opt_text(s: &Option<String>) -> Value<'_> {
    s.as_deref().map_or(Value::Null, Value::Text)
}

fn int(n: u64) -> Value<'static> {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn opt_int(n: Option<u64>) -> Value<'static> {
    n.map_or(Value::Null, int)
}

fn opt_bool(b: Option<bool>) -> Value<'static> {
    b.map_or(Value::Null, Value::Bool)
}

/// The column of a naive strategy's agreement: `agrees_` and its name with `_` for `-`.
pub fn strategy_column(strategy: Strategy) -> String {
    format!("agrees_{}", strategy.name().replace('-', "_"))
}

fn stream_fields() -> &'static Fields<StreamRow> {
    static FIELDS: OnceLock<Fields<StreamRow>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        use Kind::{Bool, Int, Text, TextList};
        let mut f = Fields::<StreamRow>::new();
        f.add("stream_key", Text, false, "The stream's key in the three tables: `source_file#stream@content_hash` (`source_file#0` for a file that could not be read or was skipped).", |r| text(&r.stream_key));
        f.add("source_file", Text, false, "The file: the name of the path it was found from (a folder's own name, however it was typed: `d`, `./d` and `/abs/d` are all `d`), then its path under it with `/` between the parts; or the name a `--files-from` line gives it.", |r| text(&r.source_file));
        f.add("stream", Int, false, "The stream's number in its file, from 1 (a HAR or cassette holds several); 0 for a file that could not be read or was skipped.", |r| Value::Int(i64::from(r.stream)));
        f.add("source_kind", Text, true, "What the file is: `recording`, `journal (interrupted recording)`, `raw body`, `har import`, `cassette import`, `jsonl import` (as `check --json`'s `source`).", |r| opt_text(&r.source_kind));
        f.add("content_hash", Text, true, "XXH64 of the stream's body bytes, 16 hex digits: the same stream captured twice (or copied) has the same hash whatever its read boundaries.", |r| opt_text(&r.content_hash));
        f.add("dialect", Text, true, "The dialect's name (`openai-chat`, `anthropic-messages`, …): the one the recording names, else the one detected.", |r| opt_text(&r.dialect));
        f.add("provider_host", Text, true, "The request URL's host (and port), when the capture has the request.", |r| opt_text(&r.provider_host));
        f.add("model", Text, true, "The model: the request body's `model`, else the URL's `/models/NAME` or `/model/NAME` (percent-decoded: Bedrock's `…-v1%3A0` is `…-v1:0`), else the stream's own (`response_model`).", |r| opt_text(&r.model));
        f.add("complete", Bool, true, "Not a stream: one complete (non-streaming) response, its calls read directly.", |r| opt_bool(r.complete));
        f.add("ending", Text, true, "How the stream ended: `finished`, `calls-complete`, `provider-error`, `ended-without-finish`.", |r| opt_text(&r.ending));
        f.add("finish_reason", Text, true, "The finish reason the stream gave (`tool_calls`, `stop`, `[DONE]`, …).", |r| opt_text(&r.finish_reason));
        f.add("verdict", Text, false, "`ok` (no error-severity finding: `check` exits 0), `not-ok` (`check` exits 1), `unreadable` (the file could not be read: see `error`), `skipped` (an entry found in a folder that is not a capture: nothing in it was recognised, or it is not a regular file; see `error`; never counted as a stream).", |r| text(r.verdict.name()));
        f.add("problems", Text, true, "Why the stream is not OK, on one line (`check`'s reason).", |r| opt_text(&r.problems));
        f.add("error", Text, true, "Why the file could not be read, or why it was skipped (`not a capture: …`, `not a regular file: …`), on one line.", |r| opt_text(&r.error));
        f.add("calls", Int, true, "Calls the client must execute (server tools not counted).", |r| opt_int(r.calls));
        f.add("server_tools", Int, true, "Tools the provider ran itself.", |r| opt_int(r.server_tools));
        f.add("events", Int, true, "Framed events (SSE events or JSON lines).", |r| opt_int(r.events));
        f.add("fragments", Int, true, "Tool-call fragments.", |r| opt_int(r.fragments));
        f.add("reads", Int, true, "Network reads, when the capture kept them (null for raw bodies and imports without timing).", |r| opt_int(r.reads));
        f.add("bytes", Int, true, "Body bytes.", |r| opt_int(r.bytes));
        f.add("first_byte_us", Int, true, "Time to the first read, in microseconds from the request (when the timing is real).", |r| opt_int(r.first_byte_us));
        f.add("first_call_us", Int, true, "Time to the first call's first fragment, in microseconds (when the timing is real and there is a call).", |r| opt_int(r.first_call_us));
        f.add("end_us", Int, true, "Time to the last read, in microseconds (when the timing is real).", |r| opt_int(r.end_us));
        f.add("finding_kinds", Text, true, "The kinds of the stream's findings, sorted, comma-separated (the `findings` table has one row each).", |r| opt_text(&r.finding_kinds));
        f.add("tool_names", TextList, true, "The names of the calls the client must execute, in call order (repeats kept; server tools not included); an empty list for a stream without calls (OpenTelemetry `gen_ai.tool.name`, one per call).", |r| r.tool_names.as_deref().map_or(Value::Null, Value::TextList));
        f.add("response_model", Text, true, "The model the stream itself names (`model`, `message.model`, `response.model`, `modelVersion` of its first events): the one that answered, which a router may have chosen over the requested `model` (OpenTelemetry `gen_ai.response.model`).", |r| opt_text(&r.response_model));
        f.add("response_id", Text, true, "The response's id as the stream gives it (`id`, `message.id`, `response.id`, `responseId` of its first events; OpenTelemetry `gen_ai.response.id`).", |r| opt_text(&r.response_id));
        f.add("request_id", Text, true, "The provider's request id from the response headers (`x-request-id`, `request-id`, `x-amzn-requestid`, `x-amz-request-id`, `apim-request-id`), when the capture has them.", |r| opt_text(&r.request_id));
        f.add("http_status", Int, true, "The response's HTTP status, when the capture has it (OpenTelemetry `http.response.status_code`).", |r| opt_int(r.http_status));
        f.add("finish_reason_normalised", Text, true, "`finish_reason` in one vocabulary across dialects (OpenTelemetry `gen_ai.response.finish_reasons` values): `tool_calls` (`tool_use`, `TOOL_CALL`, `function_call`), `stop` (`end_turn`, `STOP`, `COMPLETE`, `stop_sequence`), `length` (`max_tokens`, `MAX_TOKENS`), `content_filter` (`SAFETY`, `RECITATION`, `guardrail_intervened`, `refusal`, …), `error`; any other reason lower-cased; null for `[DONE]` or no reason.", |r| opt_text(&r.finish_reason_normalised));
        f.add("captured_at", Text, true, "When the capture was made (RFC 3339, UTC), when it says (a recording's `created`).", |r| opt_text(&r.captured_at));
        f.add("usage_input_tokens", Int, true, "Input (prompt) tokens the stream reports (OpenTelemetry `gen_ai.usage.input_tokens`): OpenAI, Assistants, Anthropic, Responses, Cohere and Bedrock `usage`, Gemini's `usageMetadata`, Ollama's `prompt_eval_count`; the last value the stream gave (running totals end at the total); null when the stream reports none (OpenAI Chat without `stream_options.include_usage`, binary Bedrock frames).", |r| opt_int(r.usage.input));
        f.add("usage_output_tokens", Int, true, "Output (completion) tokens the stream reports (OpenTelemetry `gen_ai.usage.output_tokens`), reasoning included where the provider includes it; read as `usage_input_tokens`.", |r| opt_int(r.usage.output));
        f.add("usage_reasoning_tokens", Int, true, "Reasoning (thinking) tokens, where the provider counts them apart (`reasoning_tokens` in OpenAI's details, Gemini's `thoughtsTokenCount`); null elsewhere.", |r| opt_int(r.usage.reasoning));
        f.add("scan_id", Text, true, "The scan that wrote the row: `--scan-id`, by default the scan's start time and process (`20250131-120000-1a2b`); every row of one run (or of one Spark job) has the same.", |r| opt_text(&r.scan_id));
        for (i, s) in Strategy::ALL.into_iter().enumerate() {
            f.add(
                &strategy_column(s),
                Bool,
                true,
                &format!(
                    "Naive strategy `{}` ends with the correct calls (null when it cannot run on this input, e.g. per-read strategies without read boundaries, or a complete response). {}",
                    s.name(),
                    s.description()
                ),
                move |r| opt_bool(r.naive.get(i).copied().flatten()),
            );
        }
        f
    })
}

fn call_fields() -> &'static Fields<CallRow> {
    static FIELDS: OnceLock<Fields<CallRow>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        use Kind::{Bool, Int, Text};
        let mut f = Fields::<CallRow>::new();
        f.add("stream_key", Text, false, "The stream (`streams.stream_key`).", |r| text(&r.stream_key));
        f.add("call", Int, false, "The call's number in its stream, from 0, in order of its first fragment.", |r| Value::Int(i64::from(r.call)));
        f.add("name", Text, false, "The function name.", |r| text(&r.name));
        f.add("id_present", Bool, false, "Some fragment carried a call id.", |r| Value::Bool(r.id_present));
        f.add("server_tool", Text, true, "For a tool the provider ran itself, its type (`server_tool_use`, `web_search_call`, …).", |r| opt_text(&r.server_tool));
        f.add("argument_bytes", Int, false, "Length of the reassembled arguments, in bytes.", |r| int(r.argument_bytes));
        f.add("fragments", Int, false, "Fragments the call arrived in.", |r| int(r.fragments));
        f.add("parsed", Bool, false, "The arguments parsed as JSON (empty arguments count as `{}`).", |r| Value::Bool(r.parsed));
        f.add("complete", Bool, false, "The call was finished (the dialect closed it or the stream finished).", |r| Value::Bool(r.complete));
        f.add("verbatim", Bool, true, "Checkpoint 1: the reassembled arguments equal the original (null when there is no original to compare).", |r| opt_bool(r.verbatim));
        f.add("contiguous", Bool, true, "Checkpoint 2: every fragment sits at its offset in the original (null without an original).", |r| opt_bool(r.contiguous));
        f.add("first_only", Bool, true, "Checkpoint 3: only the first fragment carried id and name.", |r| opt_bool(r.first_only));
        f.add("first_fragment_us", Int, true, "Arrival of the call's first fragment, in microseconds (when the timing is real).", |r| opt_int(r.first_fragment_us));
        f.add("last_fragment_us", Int, true, "Arrival of its last fragment, in microseconds (when the timing is real).", |r| opt_int(r.last_fragment_us));
        f.add("parse_error", Text, true, "The JSON parser's error when the arguments did not parse.", |r| opt_text(&r.parse_error));
        f
    })
}

fn finding_fields() -> &'static Fields<FindingRow> {
    static FIELDS: OnceLock<Fields<FindingRow>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        use Kind::{Int, Text};
        let mut f = Fields::<FindingRow>::new();
        f.add(
            "stream_key",
            Text,
            false,
            "The stream (`streams.stream_key`).",
            |r| text(&r.stream_key),
        );
        f.add(
            "kind",
            Text,
            false,
            "The finding's kind (`repeated-name`, `split-utf8`, …; the README's quirk table).",
            |r| text(r.kind.label()),
        );
        f.add(
            "severity",
            Text,
            false,
            "`info`, `warn` or `error` (an error makes the stream not OK).",
            |r| text(r.severity()),
        );
        f.add(
            "call",
            Int,
            true,
            "The call it concerns (`calls.call`), null for the stream as a whole.",
            |r| r.call.map_or(Value::Null, |c| Value::Int(i64::from(c))),
        );
        f.add(
            "count",
            Int,
            false,
            "How many times it was seen (same kind, same call).",
            |r| int(r.count),
        );
        f.add(
            "chunk",
            Int,
            true,
            "Where it was first seen: the read (chunk) number, from 0.",
            |r| opt_int(r.chunk.map(u64::from)),
        );
        f.add("event", Int, true, "The event number, from 0.", |r| {
            opt_int(r.event.map(u64::from))
        });
        f.add("fragment", Int, true, "The fragment number, from 0.", |r| {
            opt_int(r.fragment.map(u64::from))
        });
        f.add("offset", Int, true, "The byte offset in the body.", |r| {
            opt_int(r.offset)
        });
        f.add("message", Text, false, "What was seen, on one line.", |r| {
            text(&r.message)
        });
        f
    })
}

impl Row for StreamRow {
    const TABLE: Table = Table::Streams;
    fn value(&self, i: usize) -> Value<'_> {
        stream_fields().value(self, i)
    }
}

impl Row for CallRow {
    const TABLE: Table = Table::Calls;
    fn value(&self, i: usize) -> Value<'_> {
        call_fields().value(self, i)
    }
}

impl Row for FindingRow {
    const TABLE: Table = Table::Findings;
    fn value(&self, i: usize) -> Value<'_> {
        finding_fields().value(self, i)
    }
}

/// The schema as one JSON document (`schema.json` beside JSON-lines and CSV tables): the
/// version, and each table's columns with their types and meaning.
pub fn schema_json() -> serde_json::Value {
    let tables: serde_json::Map<String, serde_json::Value> = Table::ALL
        .into_iter()
        .map(|t| {
            let cols: Vec<serde_json::Value> = t
                .columns()
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "name": c.name,
                        "type": c.kind.name(),
                        "nullable": c.nullable,
                        "doc": c.doc,
                    })
                })
                .collect();
            (
                t.name().to_owned(),
                serde_json::json!({"description": t.description(), "columns": cols}),
            )
        })
        .collect();
    serde_json::json!({"schema_version": SCHEMA_VERSION, "tables": tables})
}

/// The schema as Markdown: one table per table (the README's schema section is this text).
pub fn schema_markdown() -> String {
    let mut s = String::new();
    for t in Table::ALL {
        s.push_str(&format!("#### `{}`\n\n{}\n\n", t.name(), t.description()));
        s.push_str("| column | type | null | meaning |\n|---|---|---|---|\n");
        for c in t.columns() {
            s.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                c.name,
                c.kind.name(),
                if c.nullable { "yes" } else { "no" },
                c.doc.replace('|', "\\|")
            ));
        }
        s.push('\n');
    }
    s
}
