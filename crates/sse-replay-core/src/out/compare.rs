//! Comparing the calls of two recordings (e.g. the same prompt recorded from two providers): align
//! the calls, then say what differs — the name, the arguments, or a call missing on one side.
//!
//! Ids are never compared: providers mint their own. Calls are aligned by the longest common
//! subsequence of their names (so one missing call does not shift every later pair); the calls left
//! between two aligned pairs are paired in order (a name difference) and the rest are missing.
//!
//! Beside the calls, [`compare_analyses`] lines up the stream-level facts (dialect, ending, finish
//! reason, counts, timing) and the findings only one side has. Arguments that differ carry an
//! inline diff ([`crate::json_diff`]) for display.
//! No egui here: the app's "Compare two" panel only displays [`Comparison`].

use serde_json::Value;

use crate::accumulate::{Call, Parsed};
use crate::analysis::Analysis;
use crate::json_diff::{self, InlineDiff};
use crate::pipeline::StreamEnding;

/// How the arguments of two aligned calls compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgsDiff {
    /// Same raw text.
    Identical,
    /// Different text, same parsed value (whitespace, key order of a re-serialisation…).
    SameValue,
    /// Different values; the JSON paths that differ (at most [`MAX_PATHS`]).
    Different { paths: Vec<String> },
    /// One side (or both) did not parse; the raw texts differ.
    Unparsable,
}

/// At most this many differing paths are listed per call.
pub const MAX_PATHS: usize = 20;

/// One row of the aligned table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Call position in recording A, if this row has one.
    pub a: Option<usize>,
    /// Call position in recording B, if this row has one.
    pub b: Option<usize>,
    /// Both sides present and the names differ.
    pub name_differs: bool,
    /// Both sides present: how their arguments compare.
    pub args: Option<ArgsDiff>,
    /// Both sides' arguments with what differs marked, when they parse and differ.
    pub inline: Option<InlineDiff>,
}

impl Row {
    /// Nothing differs on this row (both calls present, same name, same value).
    pub fn same(&self) -> bool {
        self.a.is_some()
            && self.b.is_some()
            && !self.name_differs
            && matches!(self.args, Some(ArgsDiff::Identical | ArgsDiff::SameValue))
    }
}

/// What a stream-level row holds: counts and words differ meaningfully; timings always differ a
/// little between two recordings, so they are shown but not counted as differences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamRowKind {
    Fact,
    Timing,
}

/// One stream-level fact of both recordings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRow {
    pub label: &'static str,
    pub a: String,
    pub b: String,
    pub kind: StreamRowKind,
    /// A and B say the same thing (for most rows: the same text; finish reasons by what they
    /// mean, [`finish_meaning`]).
    pub same: bool,
}

impl StreamRow {
    /// A fact (not a timing) that differs.
    pub fn differs(&self) -> bool {
        self.kind == StreamRowKind::Fact && !self.same
    }
}

/// What a provider's finish reason means, the same words for every dialect: `tool_calls`
/// (OpenAI), `tool_use` (Anthropic) and `function_call` are "tool calls"; `stop`, `end_turn`,
/// `STOP`, `completed` are "stop" — or "tool calls" when the stream `has_calls` (Gemini and Ollama
/// end a tool-calling turn with `STOP`/`stop`); `length`, `max_tokens`, `MAX_TOKENS` are
/// "length limit"; `content_filter`, `SAFETY`, `refusal` are "filtered". Others are themselves,
/// lowercased.
pub fn finish_meaning(reason: &str, has_calls: bool) -> String {
    let r = reason.trim().to_ascii_lowercase();
    match r.as_str() {
        "tool_calls" | "tool_use" | "function_call" | "tool_call" => "tool calls".into(),
        "stop" | "end_turn" | "stop_sequence" | "completed" | "finish_reason_unspecified" => {
            if has_calls {
                "tool calls".into()
            } else {
                "stop".into()
            }
        }
        "length" | "max_tokens" | "max_output_tokens" | "model_length" => "length limit".into(),
        "content_filter" | "safety" | "refusal" | "recitation" | "prohibited_content"
        | "blocklist" | "spii" => "filtered".into(),
        _ => r,
    }
}

/// A finding one side has and the other does not (by kind).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OneSidedFinding {
    /// The kind's stable name (`missing-index`…).
    pub kind: &'static str,
    /// The first occurrence's detail.
    pub message: String,
    /// Times seen on that side.
    pub count: u64,
}

/// The aligned calls of two recordings, and (from [`compare_analyses`]) their stream-level rows and
/// the findings only one side has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub rows: Vec<Row>,
    pub stream: Vec<StreamRow>,
    pub findings_only_a: Vec<OneSidedFinding>,
    pub findings_only_b: Vec<OneSidedFinding>,
}

impl Comparison {
    /// Rows where something differs.
    pub fn differing(&self) -> usize {
        self.rows.iter().filter(|r| !r.same()).count()
    }

    /// Stream-level facts that differ (timings not counted).
    pub fn stream_differing(&self) -> usize {
        self.stream.iter().filter(|r| r.differs()).count()
    }
}

/// Compare two whole recordings: calls, stream-level facts, findings.
pub fn compare_analyses(a: &Analysis, b: &Analysis) -> Comparison {
    let mut c = compare(&a.calls, &b.calls);
    c.stream = stream_rows(a, b);
    c.findings_only_a = one_sided_findings(a, b);
    c.findings_only_b = one_sided_findings(b, a);
    c
}

/// How a stream ended, in a few words.
pub fn ending_label(e: &StreamEnding) -> String {
    match e {
        StreamEnding::Finished { .. } => "finished".into(),
        StreamEnding::CallsComplete => "every call complete, no finish".into(),
        StreamEnding::ProviderError { message } => format!("provider error: {message}"),
        StreamEnding::EndedWithoutFinish => "ended without finish (truncated)".into(),
    }
}

fn ms(micros: u64) -> String {
    format!("{:.1} ms", micros as f64 / 1000.0)
}

/// The stream-level rows: dialect, ending, finish reason, counts, time to the first call's first
/// fragment and total duration (last read).
pub fn stream_rows(a: &Analysis, b: &Analysis) -> Vec<StreamRow> {
    type Fact = fn(&Analysis) -> String;
    let facts: [(&'static str, StreamRowKind, Fact); 10] = [
        ("dialect", StreamRowKind::Fact, |x| {
            x.dialect.title().to_owned()
        }),
        ("ending", StreamRowKind::Fact, |x| ending_label(&x.ending)),
        ("finish reason", StreamRowKind::Fact, |x| {
            x.finish
                .as_ref()
                .map_or_else(|| "—".to_owned(), |f| f.reason.clone())
        }),
        ("calls", StreamRowKind::Fact, |x| x.calls.len().to_string()),
        ("events", StreamRowKind::Fact, |x| {
            x.events.len().to_string()
        }),
        ("fragments", StreamRowKind::Fact, |x| {
            x.fragments.len().to_string()
        }),
        ("reads", StreamRowKind::Fact, |x| x.chunks.len().to_string()),
        ("bytes", StreamRowKind::Fact, |x| x.body.len().to_string()),
        ("time to first call", StreamRowKind::Timing, |x| {
            if !x.source.timing_known {
                return "(no timing)".into();
            }
            x.fragments
                .first()
                .map_or_else(|| "—".to_owned(), |f| ms(f.pos.t_micros))
        }),
        ("total duration", StreamRowKind::Timing, |x| {
            if !x.source.timing_known {
                return "(no timing)".into();
            }
            x.chunks
                .last()
                .map_or_else(|| "—".to_owned(), |c| ms(c.t_micros))
        }),
    ];
    let meaning = |x: &Analysis| {
        x.finish
            .as_ref()
            .map(|f| finish_meaning(&f.reason, x.client_calls().next().is_some()))
    };
    facts
        .into_iter()
        .map(|(label, kind, f)| {
            let (va, vb) = (f(a), f(b));
            let same = if label == "finish reason" {
                meaning(a) == meaning(b)
            } else {
                va == vb
            };
            StreamRow {
                label,
                a: va,
                b: vb,
                kind,
                same,
            }
        })
        .collect()
}

/// The kinds of finding `x` has and `y` does not, each with its first message and count.
fn one_sided_findings(x: &Analysis, y: &Analysis) -> Vec<OneSidedFinding> {
    let mut out: Vec<OneSidedFinding> = Vec::new();
    for f in &x.findings {
        if y.findings.iter().any(|g| g.kind == f.kind) {
            continue;
        }
        match out.iter_mut().find(|o| o.kind == f.kind.label()) {
            Some(o) => o.count += f.count,
            None => out.push(OneSidedFinding {
                kind: f.kind.label(),
                message: f.message.clone(),
                count: f.count,
            }),
        }
    }
    out
}

/// Align the calls of A and B and compare each pair.
pub fn compare(calls_a: &[Call], calls_b: &[Call]) -> Comparison {
    let pairs = lcs_pairs(calls_a, calls_b);
    let mut rows = Vec::with_capacity(calls_a.len().max(calls_b.len()));
    let (mut i, mut j) = (0usize, 0usize);
    for (pi, pj) in pairs
        .into_iter()
        .chain(std::iter::once((calls_a.len(), calls_b.len())))
    {
        // Calls between the previous aligned pair and this one: pair them in order, rest missing.
        while i < pi && j < pj {
            rows.push(row(calls_a, calls_b, Some(i), Some(j)));
            i += 1;
            j += 1;
        }
        while i < pi {
            rows.push(row(calls_a, calls_b, Some(i), None));
            i += 1;
        }
        while j < pj {
            rows.push(row(calls_a, calls_b, None, Some(j)));
            j += 1;
        }
        if pi < calls_a.len() && pj < calls_b.len() {
            rows.push(row(calls_a, calls_b, Some(pi), Some(pj)));
            i = pi + 1;
            j = pj + 1;
        }
    }
    Comparison {
        rows,
        ..Default::default()
    }
}

fn row(a: &[Call], b: &[Call], ia: Option<usize>, ib: Option<usize>) -> Row {
    match (ia.and_then(|i| a.get(i)), ib.and_then(|j| b.get(j))) {
        (Some(x), Some(y)) => {
            let args = args_diff(x, y);
            let inline = match (&args, &x.parsed, &y.parsed) {
                (ArgsDiff::Different { .. }, Parsed::Ok(vx), Parsed::Ok(vy)) => {
                    Some(json_diff::inline_diff(vx, vy))
                }
                _ => None,
            };
            Row {
                a: ia,
                b: ib,
                name_differs: x.name != y.name,
                args: Some(args),
                inline,
            }
        }
        _ => Row {
            a: ia,
            b: ib,
            name_differs: false,
            args: None,
            inline: None,
        },
    }
}

/// Compare the arguments of two calls.
pub fn args_diff(call_a: &Call, call_b: &Call) -> ArgsDiff {
    if call_a.raw_arguments == call_b.raw_arguments {
        return ArgsDiff::Identical;
    }
    match (&call_a.parsed, &call_b.parsed) {
        (Parsed::Ok(vx), Parsed::Ok(vy)) => {
            let mut paths = Vec::new();
            diff_paths(vx, vy, "$", &mut paths);
            if paths.is_empty() {
                ArgsDiff::SameValue
            } else {
                ArgsDiff::Different { paths }
            }
        }
        _ => ArgsDiff::Unparsable,
    }
}

/// The JSON paths at which two values differ (`$.city`, `$.items[3]`), at most [`MAX_PATHS`].
pub fn diff_paths(x: &Value, y: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() >= MAX_PATHS || x == y {
        return;
    }
    match (x, y) {
        (Value::Object(mx), Value::Object(my)) => {
            for (k, vx) in mx {
                let p = format!("{path}.{k}");
                match my.get(k) {
                    Some(vy) => diff_paths(vx, vy, &p, out),
                    None => out.push(format!("{p} (only in A)")),
                }
                if out.len() >= MAX_PATHS {
                    return;
                }
            }
            for k in my.keys().filter(|k| !mx.contains_key(*k)) {
                if out.len() >= MAX_PATHS {
                    return;
                }
                out.push(format!("{path}.{k} (only in B)"));
            }
        }
        (Value::Array(ax), Value::Array(ay)) => {
            for (n, (vx, vy)) in ax.iter().zip(ay).enumerate() {
                diff_paths(vx, vy, &format!("{path}[{n}]"), out);
                if out.len() >= MAX_PATHS {
                    return;
                }
            }
            if ax.len() != ay.len() {
                out.push(format!("{path} (length {} vs {})", ax.len(), ay.len()));
            }
        }
        _ => out.push(path.to_owned()),
    }
}

/// Index pairs of the longest common subsequence of the two name lists. Quadratic, so for very
/// long lists (over 4,000 calls a side) it falls back to pairing in order.
fn lcs_pairs(a: &[Call], b: &[Call]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 16_000_000 {
        return Vec::new();
    }
    // table[i][j] = LCS length of a[i..] and b[j..]
    let w = m + 1;
    let mut table = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * w + j] = if a[i].name == b[j].name {
                table[(i + 1) * w + j + 1] + 1
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i].name == b[j].name {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::accumulate::parse_once;
    use crate::fact::CallKey;

    fn call(pos: u32, name: &str, args: &str) -> Call {
        let (parsed, empty) = parse_once(args);
        Call {
            position: pos,
            key: CallKey::Ordinal(pos),
            stated_index: Some(u64::from(pos)),
            id: Some(format!("id{pos}")),
            name: name.into(),
            raw_arguments: args.into(),
            parsed,
            empty_arguments: empty,
            object_arguments: false,
            complete: true,
            done_chunk: None,
            fragments: vec![],
            fragment_count: 0,
            name_conflicts: vec![],
            authoritative: None,
            first_resend: None,
            resends: 0,
            server_tool: None,
            kind: None,
            text_input: false,
        }
    }

    #[test]
    fn identical_and_reformatted_calls_are_the_same() {
        let a = [
            call(0, "get_weather", r#"{"city":"深圳","days":3}"#),
            call(1, "get_time", r#"{"city":"杭州"}"#),
        ];
        let b = [
            call(0, "get_weather", r#"{"city":"深圳","days":3}"#),
            call(1, "get_time", r#"{ "city": "杭州" }"#),
        ];
        let c = compare(&a, &b);
        assert_eq!(c.rows.len(), 2);
        assert_eq!(c.rows[0].args, Some(ArgsDiff::Identical));
        assert_eq!(c.rows[1].args, Some(ArgsDiff::SameValue));
        assert_eq!(c.differing(), 0);
    }

    #[test]
    fn missing_call_does_not_shift_the_rest() {
        let a = [call(0, "a", "{}"), call(1, "b", "{}"), call(2, "c", "{}")];
        let b = [call(0, "a", "{}"), call(1, "c", "{}")];
        let c = compare(&a, &b);
        let shape: Vec<_> = c.rows.iter().map(|r| (r.a, r.b)).collect();
        assert_eq!(
            shape,
            vec![(Some(0), Some(0)), (Some(1), None), (Some(2), Some(1))]
        );
        assert_eq!(c.differing(), 1);
    }

    #[test]
    fn name_and_value_differences() {
        let a = [
            call(0, "get_weather", r#"{"city":"深圳","days":3}"#),
            call(1, "x", r#"{"k":[1,2]}"#),
        ];
        let b = [
            call(0, "get_weather", r#"{"city":"深圳","days":4,"unit":"c"}"#),
            call(1, "y", r#"{"k":[1,2]}"#),
        ];
        let c = compare(&a, &b);
        assert_eq!(
            c.rows[0].args,
            Some(ArgsDiff::Different {
                paths: vec!["$.days".into(), "$.unit (only in B)".into()]
            })
        );
        assert!(c.rows[1].name_differs);
        assert_eq!(c.differing(), 2);
        let inline = c.rows[0].inline.as_ref().unwrap();
        assert!(
            inline
                .b
                .iter()
                .any(|s| s.text == "4" && s.mark == json_diff::Mark::Changed)
        );
        assert!(
            c.rows[1].inline.is_none(),
            "same arguments: nothing to highlight"
        );
    }

    #[test]
    fn stream_rows_and_one_sided_findings() {
        use crate::analysis::SourceInfo;
        let analyse = |spec: &crate::stub::StubSpec| {
            let source = SourceInfo {
                name: spec.title.clone(),
                timing_known: true,
                ..Default::default()
            };
            Analysis::from_recording(&crate::stub::build(spec), source, Default::default())
        };
        let a = analyse(&crate::stub::seed_example());
        let mut spec = crate::stub::seed_example();
        spec.quirks.no_index = true;
        spec.quirks.truncate = true;
        let b = analyse(&spec);
        let c = compare_analyses(&a, &b);
        let row = |label: &str| c.stream.iter().find(|r| r.label == label).unwrap();
        assert_eq!(row("dialect").a, row("dialect").b);
        assert_eq!(row("ending").a, "finished");
        assert!(row("ending").b.contains("truncated"), "{:?}", row("ending"));
        assert!(row("ending").differs());
        assert_eq!(row("total duration").kind, StreamRowKind::Timing);
        assert!(
            !row("total duration").differs(),
            "timings are not differences"
        );
        assert!(c.stream_differing() >= 1);
        assert!(
            c.findings_only_b.iter().any(|f| f.kind == "missing-index"),
            "{:?}",
            c.findings_only_b
        );
        assert!(c.findings_only_a.iter().all(|f| f.kind != "missing-index"));
    }

    /// The same calls from OpenAI (`tool_calls`) and Anthropic (`tool_use`), or Gemini (`STOP`
    /// after calls): the finish reasons say the same thing and are not a difference.
    #[test]
    fn finish_reasons_are_compared_by_what_they_mean() {
        use crate::analysis::SourceInfo;
        use crate::dialect::DialectKind;
        let analyse = |dialect: DialectKind| {
            let spec = crate::stub::StubSpec {
                dialect,
                ..crate::stub::seed_example()
            };
            let source = SourceInfo {
                name: spec.title.clone(),
                timing_known: true,
                ..Default::default()
            };
            Analysis::from_recording(&crate::stub::build(&spec), source, Default::default())
        };
        let openai = analyse(DialectKind::OpenAiChat);
        for other in [DialectKind::AnthropicMessages, DialectKind::Gemini] {
            let b = analyse(other);
            let c = compare_analyses(&openai, &b);
            let row = c
                .stream
                .iter()
                .find(|r| r.label == "finish reason")
                .unwrap();
            assert_ne!(row.a, row.b, "{other:?}: the raw reasons are shown");
            assert!(!row.differs(), "{other:?}: {row:?}");
        }
        assert_eq!(
            finish_meaning("tool_calls", true),
            finish_meaning("tool_use", true)
        );
        assert_ne!(
            finish_meaning("length", true),
            finish_meaning("tool_calls", true)
        );
        assert_eq!(
            finish_meaning("max_tokens", false),
            finish_meaning("length", false)
        );
    }

    #[test]
    fn unparsable_side() {
        let a = [call(0, "f", r#"{"a":1"#)];
        let b = [call(0, "f", r#"{"a":1}"#)];
        assert_eq!(compare(&a, &b).rows[0].args, Some(ArgsDiff::Unparsable));
    }

    #[test]
    fn extra_calls_in_b() {
        let a: [Call; 0] = [];
        let b = [call(0, "f", "{}")];
        let c = compare(&a, &b);
        assert_eq!(
            c.rows,
            vec![Row {
                a: None,
                b: Some(0),
                name_differs: false,
                args: None,
                inline: None,
            }]
        );
    }
}
