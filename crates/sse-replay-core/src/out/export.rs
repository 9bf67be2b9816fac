//! Export formats for the parsed calls (JSON, JSONL, OpenAI assistant message, Anthropic tool_use
//! blocks) and the `check --json` report. The GUI and the CLI both write through here.

use serde_json::{Value, json};

use crate::accumulate::{Call, Parsed};
use crate::analysis::{Analysis, StreamEnding};
use crate::naive::Strategy;

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Format {
    #[default]
    Json,
    Jsonl,
    OpenAi,
    Anthropic,
}

impl Format {
    /// All formats.
    pub const ALL: [Format; 4] = [
        Format::Json,
        Format::Jsonl,
        Format::OpenAi,
        Format::Anthropic,
    ];

    /// The `--format` name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
        }
    }

    /// File extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            _ => "json",
        }
    }

    /// Parse a `--format` name.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// One call in the `json` shape: `{"index","id","name","arguments"}`, or for a failed call
/// `{"index","id","name","error","raw_arguments"}`. A call that is not a plain function call
/// (a Responses `custom_tool_call`, `apply_patch_call`…) also has `"kind"` (the item type) after
/// its name; a custom tool's `arguments` is its free-form input, a string.
pub fn call_json(call: &Call) -> Value {
    let index = call.stated_index.unwrap_or(u64::from(call.position));
    let mut m = serde_json::Map::new();
    m.insert("index".into(), json!(index));
    m.insert("id".into(), json!(call.id));
    m.insert("name".into(), json!(call.name));
    if let Some(kind) = &call.kind {
        m.insert("kind".into(), json!(kind));
    }
    match &call.parsed {
        Parsed::Ok(v) => {
            m.insert("arguments".into(), v.get().into_owned());
        }
        Parsed::Err { error, .. } => {
            m.insert("error".into(), json!(error));
            m.insert("raw_arguments".into(), json!(call.raw_arguments));
        }
    }
    Value::Object(m)
}

/// A client call that is not a function call, as the Responses API takes it back as an input
/// item: `{"type": kind, "call_id", …}` with the item's own arguments field (`input` for a custom
/// tool, `operation` for apply_patch, `action` for the shell and computer tools), and the output
/// item's `id` where the API asks for it. `None` for a kind that is not a Responses item.
fn responses_item(c: &Call, kind: &str) -> Option<Value> {
    let crate::dialect::responses::ItemClass::Client(ci) =
        crate::dialect::responses::classify(kind)
    else {
        return None;
    };
    let value = match &c.parsed {
        Parsed::Ok(v) => v.get().into_owned(),
        Parsed::Err { .. } => Value::String(c.raw_arguments.to_string()),
    };
    let mut m = serde_json::Map::new();
    m.insert("type".into(), json!(kind));
    if let crate::fact::CallKey::Item(item_id) = &c.key
        && matches!(kind, "local_shell_call" | "computer_call")
    {
        m.insert("id".into(), json!(item_id));
    }
    m.insert("call_id".into(), json!(c.id));
    if ci.tool.is_none() {
        m.insert("name".into(), json!(c.name));
    }
    m.insert(ci.field.into(), value);
    if kind == "computer_call" {
        m.insert("pending_safety_checks".into(), json!([]));
    }
    m.insert("status".into(), json!("completed"));
    Some(Value::Object(m))
}

/// The `check --json` schema version: bumped when a key changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// One call as the element of the chosen format. A server tool (only exported on request) is
/// marked in every format: `"server_tool": true` and its block or item type as `"type"`.
fn element(c: &Call, format: Format) -> Value {
    let mut v = client_element(c, format);
    if let (Some(kind), Some(o)) = (&c.server_tool, v.as_object_mut()) {
        o.insert("type".into(), json!(kind));
        o.insert("server_tool".into(), json!(true));
    }
    v
}

fn client_element(c: &Call, format: Format) -> Value {
    match format {
        Format::Json | Format::Jsonl => call_json(c),
        Format::OpenAi => {
            if let Some(item) = c.kind.as_deref().and_then(|k| responses_item(c, k)) {
                return item;
            }
            if c.kind.as_deref() == Some("custom") {
                // A Chat Completions custom tool call, as the API takes it back.
                let input = c
                    .value()
                    .and_then(Value::as_str)
                    .unwrap_or(&c.raw_arguments);
                return json!({"id": c.id, "type": "custom", "custom": {"name": c.name, "input": input}});
            }
            let args = match &c.parsed {
                Parsed::Ok(v) => v.to_string(),
                Parsed::Err { .. } => c.raw_arguments.to_string(),
            };
            json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": args}})
        }
        Format::Anthropic => {
            let input = c
                .value()
                .cloned()
                .unwrap_or_else(|| Value::String(c.raw_arguments.to_string()));
            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
        }
    }
}

/// Writes calls in a format one at a time (so a 2,000-call export never holds every parsed value),
/// byte-for-byte the same as `serde_json::to_string_pretty` of the whole document.
pub struct CallWriter<W: std::io::Write> {
    out: W,
    format: Format,
    written: usize,
}

impl<W: std::io::Write> CallWriter<W> {
    /// Start a document.
    pub fn new(out: W, format: Format) -> Self {
        Self {
            out,
            format,
            written: 0,
        }
    }

    /// Indentation of the elements inside the document.
    fn indent(&self) -> &'static str {
        match self.format {
            Format::OpenAi => "    ",
            Format::Jsonl => "",
            _ => "  ",
        }
    }

    /// Write one call.
    pub fn call(&mut self, call: &Call) -> std::io::Result<()> {
        let v = element(call, self.format);
        if self.format == Format::Jsonl {
            self.written += 1;
            return writeln!(self.out, "{}", crate::text::json_compact(&v));
        }
        if self.written == 0 {
            match self.format {
                Format::OpenAi => self.out.write_all(
                    b"{\n  \"role\": \"assistant\",\n  \"content\": null,\n  \"tool_calls\": [\n",
                )?,
                _ => self.out.write_all(b"[\n")?,
            }
        } else {
            self.out.write_all(b",\n")?;
        }
        self.written += 1;
        // JSON strings never contain a raw newline, so indenting line by line is exact.
        let indent = self.indent();
        for (i, line) in pretty(&v).lines().enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(indent.as_bytes())?;
            self.out.write_all(line.as_bytes())?;
        }
        Ok(())
    }

    /// Close the document; returns the writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        match (self.format, self.written) {
            (Format::Jsonl, _) => {}
            (Format::OpenAi, 0) => self.out.write_all(
                b"{\n  \"role\": \"assistant\",\n  \"content\": null,\n  \"tool_calls\": []\n}\n",
            )?,
            (Format::OpenAi, _) => self.out.write_all(b"\n  ]\n}\n")?,
            (_, 0) => self.out.write_all(b"[]\n")?,
            (_, _) => self.out.write_all(b"\n]\n")?,
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Render the client calls in a format (server tools left out). The text ends with a newline
/// (empty for JSONL without calls).
pub fn render(calls: &[Call], format: Format) -> String {
    render_with(calls, format, false)
}

/// [`render`], with the provider's server tools too (marked) when `include_server_tools`.
pub fn render_with(calls: &[Call], format: Format, include_server_tools: bool) -> String {
    let mut w = CallWriter::new(Vec::new(), format);
    for c in calls
        .iter()
        .filter(|c| include_server_tools || c.is_client_call())
    {
        // Writing to a Vec cannot fail.
        w.call(c).ok();
    }
    let bytes = w.finish().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

fn pretty(v: &Value) -> String {
    crate::text::json_pretty(v)
}

fn parsed_json(p: &Parsed) -> Value {
    match p {
        Parsed::Ok(v) => json!({"ok": true, "value": v}),
        Parsed::Err { error, .. } => json!({"ok": false, "error": error}),
    }
}

/// The `check --json` report as a value (the app's "export the report"); the CLI streams
/// [`CheckReport`] instead.
pub fn check_json(analysis: &Analysis) -> Value {
    serde_json::to_value(CheckReport(analysis)).unwrap_or_default()
}

/// The `check --json` report, serialized piece by piece: each call's, strategy call's and
/// finding's object is built, written and dropped in turn, so memory does not grow with a second
/// copy of the whole analysis as JSON values (300,000 calls took 8.8 GB and 52 s as one tree).
/// Keys and their order are those of [`check_json`], which is this, collected.
pub struct CheckReport<'a>(pub &'a Analysis);

/// A sequence serialized from a fresh iterator (nothing collected).
struct Seq<F>(F);

impl<F, I, T> serde::Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator<Item = T>,
    T: serde::Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

impl serde::Serialize for CheckReport<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let a = self.0;
        let ending = match &a.ending {
            StreamEnding::Finished { reason } => json!({"status": "finished", "reason": reason}),
            StreamEnding::CallsComplete => json!({"status": "calls-complete"}),
            StreamEnding::ProviderError { message } => {
                json!({"status": "provider-error", "message": message})
            }
            StreamEnding::EndedWithoutFinish => json!({"status": "ended-without-finish"}),
        };
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("schema_version", &SCHEMA_VERSION)?;
        m.serialize_entry("file", &a.source.name)?;
        m.serialize_entry("source", &a.source.kind.label())?;
        m.serialize_entry("timing_known", &a.source.timing_known)?;
        m.serialize_entry("dialect", &a.reported_dialect().map(|d| d.name()))?;
        m.serialize_entry("framing", a.framing.name())?;
        if a.framing == crate::framing::Framing::JsonArray && !a.complete {
            // What the framing means for this file (present only for a JSON array).
            m.serialize_entry(
                "framing_detail",
                &crate::report::json_array_header(a.dialect, a.event_count()),
            )?;
        }
        m.serialize_entry("ok", &a.verdict().ok())?;
        m.serialize_entry("ending", &ending)?;
        m.serialize_entry(
            "stats",
            &json!({
                "bytes": a.body_len(),
                "chunks": a.chunk_count(),
                "events": a.event_count(),
                "fragments": a.fragment_count(),
            }),
        )?;
        m.serialize_entry("calls", &Seq(|| a.client_calls().map(call_json)))?;
        m.serialize_entry(
            "server_tools",
            &Seq(|| {
                a.server_tools().map(|c| {
                    let mut v = call_json(c);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("type".into(), json!(c.server_tool));
                        o.insert("key".into(), json!(c.key.to_string()));
                        o.insert("complete".into(), json!(c.complete));
                    }
                    v
                })
            }),
        )?;
        m.serialize_entry(
            "call_details",
            &Seq(|| {
                a.client_calls().map(|c| {
                    json!({
                        "key": c.key.to_string(),
                        "fragments": c.fragment_count,
                        "chars": c.char_len(),
                        "bytes": c.byte_len(),
                        "complete": c.complete,
                        "empty_arguments": c.empty_arguments,
                        "parse": parsed_json(&c.parsed),
                    })
                })
            }),
        )?;
        m.serialize_entry(
            "checks",
            &Seq(|| {
                a.checkpoints
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| a.calls.get(*i).is_none_or(Call::is_client_call))
                    .map(|(i, c)| {
                        json!({
                            "call": i,
                            "original": c.original_source,
                            "verbatim": c.verbatim,
                            "contiguous": c.contiguous,
                            "first_fragment_only": c.first_only,
                        })
                    })
            }),
        )?;
        m.serialize_entry(
            "strategies",
            &Seq(|| a.strategies.iter().map(StrategyReport)),
        )?;
        m.serialize_entry(
            "findings",
            &Seq(|| {
                a.findings.iter().map(|f| {
                    json!({
                        "kind": f.kind.label(),
                        "severity": f.kind.severity(),
                        "call": f.call,
                        "count": f.count,
                        "message": f.message,
                        "first": f.first,
                    })
                })
            }),
        )?;
        m.serialize_entry("response", if a.complete { "complete" } else { "stream" })?;
        // Absent when the previews were not computed (`check --no-preview`, the app).
        if let Some(preview) = &a.preview {
            m.serialize_entry("preview", &Seq(|| preview.iter().map(preview_json)))?;
        }
        m.end()
    }
}

/// One call's entry in `check --json`'s `preview` list.
fn preview_json(p: &crate::preview::CallPreview) -> Value {
    json!({
        "call": p.call,
        "previews": p.previews,
        "stable": p.stable,
        "contradicted": p.contradicted,
        "first_contradiction": p.first_contradiction.as_ref().map(|c| json!({
            "fragment": c.fragment,
            "path": c.path,
            "shown": c.shown,
            "final": c.final_value,
        })),
        "checked": p.checked,
    })
}

/// One `per-fragment` failure in the report (the keys in the order `json!` gave them), written
/// without building a JSON value for each of (possibly) hundreds of thousands.
#[derive(serde::Serialize)]
struct Failure {
    fragment: u32,
    call: Option<u32>,
    text: String,
    error: String,
}

/// One strategy's object in the report, its lists streamed.
struct StrategyReport<'a>(&'a crate::analysis::StrategyResult);

impl serde::Serialize for StrategyReport<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let (r, agreement) = (&self.0.report, &self.0.agreement);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", r.strategy.name())?;
        m.serialize_entry("description", r.strategy.description())?;
        m.serialize_entry("matches_correct", &agreement.matches_correct)?;
        m.serialize_entry("differences", &agreement.differences)?;
        m.serialize_entry("notes", &r.notes)?;
        if let Some(why) = &r.not_applicable {
            m.serialize_entry("not_applicable", why)?;
            return m.end();
        }
        match r.strategy {
            Strategy::PerFragment => {
                m.serialize_entry("fragments", &r.steps.len())?;
                m.serialize_entry("parsed", &r.steps_parsed())?;
                m.serialize_entry(
                    "failures",
                    &Seq(|| {
                        r.steps.failures().filter_map(|st| match st.outcome {
                            Parsed::Err { error, .. } => Some(Failure {
                                fragment: st.fragment,
                                call: st.call,
                                text: st.text,
                                error,
                            }),
                            Parsed::Ok(_) => None,
                        })
                    }),
                )?;
            }
            Strategy::ConcatAll => {
                let c = r.calls.first();
                let text = c.map_or("", |c| c.raw_arguments.as_str());
                let (ok, error) = match c.map(|c| &c.parsed) {
                    Some(Parsed::Ok(_)) => (true, Value::Null),
                    Some(Parsed::Err { error, .. }) => (false, json!(error)),
                    None => (true, Value::Null),
                };
                m.serialize_entry("ok", &ok)?;
                m.serialize_entry("error", &error)?;
                m.serialize_entry("text", text)?;
            }
            _ => {
                m.serialize_entry(
                    "calls",
                    &Seq(|| {
                        r.calls.iter().map(|c| {
                            let mut v = json!({"key": c.label, "id": c.id, "name": c.name, "raw_arguments": c.raw_arguments});
                            if let Some(o) = v.as_object_mut() {
                                match &c.parsed {
                                    Parsed::Ok(val) => o.insert("arguments".into(), val.get().into_owned()),
                                    Parsed::Err { error, .. } => {
                                        o.insert("error".into(), json!(error))
                                    }
                                };
                            }
                            v
                        })
                    }),
                )?;
                if r.strategy == Strategy::ParseWhenValid {
                    m.serialize_entry("attempts", &r.steps.len())?;
                    m.serialize_entry("failed_attempts", &(r.steps.len() - r.steps_parsed()))?;
                }
            }
        }
        m.end()
    }
}

#[cfg(test)]
mod check_report_tests {
    use super::*;

    /// The streamed report (CLI) and the collected value (app) print the same, byte for byte, on
    /// every bundled recording and fixture. (When streaming replaced the tree builder, the old
    /// tree was compared the same way and was identical.)
    #[test]
    fn streamed_report_equals_the_value() {
        let root = crate::repo_root();
        let mut paths = Vec::new();
        for dir in [
            "recordings",
            "tests/data/fixtures",
            "tests/data/import",
            "tests/data/cohere-v2",
            "tests/data/assistants",
            "tests/data/responses-items",
            "tests/data/json-array-chunks",
        ] {
            for e in std::fs::read_dir(root.join(dir))
                .into_iter()
                .flatten()
                .flatten()
            {
                paths.push(e.path());
            }
        }
        let mut n = 0;
        for p in paths {
            let opened = crate::probe::open(&p, crate::probe::ReadOptions::default());
            let Some(mut a) = opened.ok().and_then(|probe| probe.analyse(true).ok()) else {
                continue;
            };
            // As `check --json` prints it: with the preview section.
            a.compute_previews();
            let value = serde_json::to_string_pretty(&check_json(&a)).unwrap_or_default();
            let streamed = serde_json::to_string_pretty(&CheckReport(&a)).unwrap_or_default();
            assert!(value.starts_with("{\n  \"schema_version\": 1,\n  \"file\""));
            assert_eq!(streamed, value, "{}", p.display());
            n += 1;
        }
        assert!(n > 20, "{n} files compared");
    }

    /// `check` analyses a raw body without keeping it, its events or a record per fragment
    /// (each call's fragments only in a compact log): its text and JSON reports are the ones the
    /// full analysis gives, on every bundled recording, fixture and test body.
    #[test]
    fn the_report_without_records_is_the_full_analysis_report() {
        let root = crate::repo_root();
        let mut dirs = vec![root.join("recordings"), root.join("tests/data")];
        let mut n = 0;
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                    continue;
                }
                // As `check` and `check --no-preview` write them; with each call's number of
                // fragments (a lean call lists none: its log has them).
                let report = |keep: bool, preview: bool| {
                    let opened = crate::probe::open(&p, crate::probe::ReadOptions::default());
                    let mut a = opened.ok().and_then(|probe| probe.analyse(keep).ok())?;
                    if preview {
                        a.compute_previews();
                    }
                    let json = serde_json::to_string_pretty(&CheckReport(&a)).ok()?;
                    let mut text = Vec::new();
                    crate::report::write_check_text(&a, &mut text).ok()?;
                    let counts: Vec<(u32, usize, usize)> = a
                        .calls
                        .iter()
                        .map(|c| (c.fragment_count, c.fragments.len(), a.call_records(c).len()))
                        .collect();
                    Some((
                        json,
                        String::from_utf8_lossy(&text).into_owned(),
                        a.fragments.len(),
                        counts,
                    ))
                };
                for preview in [true, false] {
                    let (Some(full), Some(lean)) = (report(true, preview), report(false, preview))
                    else {
                        continue;
                    };
                    assert_eq!(lean.0, full.0, "{}", p.display());
                    assert_eq!(lean.1, full.1, "{}", p.display());
                    for (l, f) in lean.3.iter().zip(&full.3) {
                        assert_eq!((f.0 as usize, f.2), (f.1, f.1), "{}", p.display());
                        if lean.2 == 0 {
                            assert_eq!(*l, (f.0, 0, f.2), "{}", p.display());
                        }
                    }
                    n += usize::from(preview && lean.2 == 0 && full.2 > 0);
                }
            }
        }
        assert!(n > 20, "{n} bodies compared without their fragment records");
    }
}
