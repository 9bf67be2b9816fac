//! Google Gemini `streamGenerateContent?alt=sse` (and Vertex AI): `candidates[].content.parts[].functionCall`
//! with a whole-object `args` and (usually) no id; `finishReason` ends the candidate. The real API
//! frames events with CRLF, which the SSE layer handles.
//!
//! Vertex AI can also stream the arguments (`streamFunctionCallArguments`): a call opens with a part
//! `{"functionCall":{"name":"f","willContinue":true}}`, continues with parts carrying
//! `partialArgs: [{"jsonPath":"$.location","stringValue":"Bos","willContinue":true}, …]` (a JSON
//! path and one of `stringValue`/`numberValue`/`boolValue`/`nullValue`; a string whose piece says
//! `willContinue` is continued by the next piece for the same path), and closes with a part whose
//! `willContinue` is absent or false (often an empty `{"functionCall":{}}`). The decoder assembles
//! the pieces into one arguments object and hands it to the accumulator when the call closes; every
//! part is still a fragment, so the player shows when each arrived.
//!
//! With `$alt=json;enum-encoding=int` the API writes enums as their numbers (`"finishReason": 1`):
//! a number is read as the enum's name ([`finish_reason_name`]); the other enums in a chunk
//! (safety ratings, modalities) are not read at all, so their form does not matter.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{error_message, raw_string, undecodable};
use crate::fact::{ArgsPiece, CallKey, Fact, Fragment, Raw};
use crate::findings::FindingKind;

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    candidates: Option<Vec<Candidate<'a>>>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    #[serde(default, borrow)]
    content: Option<Content<'a>>,
    /// A name, or the enum's number (`enum-encoding=int`): see [`finish_reason`].
    #[serde(default, borrow)]
    finish_reason: Option<&'a RawValue>,
}

/// A `FinishReason` by its number in the Gemini API's protocol buffers
/// (`google.ai.generativelanguage.v1beta.Candidate.FinishReason`), as
/// `$alt=json;enum-encoding=int` sends it. Numbers 0–5 mean the same on Vertex AI
/// (`google.cloud.aiplatform.v1.Candidate.FinishReason`); from 6 on Vertex AI numbers differ
/// (it has no `LANGUAGE`), so a Vertex AI stream's 6 and above are named by the Gemini API's
/// table. A number neither knows is `FINISH_REASON_<n>`.
pub fn finish_reason_name(n: u64) -> std::borrow::Cow<'static, str> {
    const NAMES: [&str; 18] = [
        "FINISH_REASON_UNSPECIFIED",
        "STOP",
        "MAX_TOKENS",
        "SAFETY",
        "RECITATION",
        "OTHER",
        "LANGUAGE",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "MALFORMED_FUNCTION_CALL",
        "IMAGE_SAFETY",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_OTHER",
        "NO_IMAGE",
        "IMAGE_RECITATION",
    ];
    match usize::try_from(n).ok().and_then(|i| NAMES.get(i)) {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None => std::borrow::Cow::Owned(format!("FINISH_REASON_{n}")),
    }
}

/// A `finishReason` value read: its name, and how it was written when that was a number
/// (`"2 (MAX_TOKENS)"`, for messages). `None` for `null` or a value that is neither.
pub fn finish_reason(v: &Value) -> Option<(String, Option<String>)> {
    match v {
        Value::String(s) => Some((s.clone(), None)),
        Value::Number(n) => {
            let name = finish_reason_name(n.as_u64()?).into_owned();
            let shown = format!("{n} ({name})");
            Some((name, Some(shown)))
        }
        _ => None,
    }
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(default, borrow)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(default, borrow)]
    function_call: Option<FunctionCall<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FunctionCall<'a> {
    #[serde(default, borrow, deserialize_with = "super::present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "super::present")]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    args: Option<&'a RawValue>,
    #[serde(default)]
    partial_args: Option<Vec<PartialArg>>,
    #[serde(default)]
    will_continue: Option<bool>,
}

/// One Vertex AI `PartialArg`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartialArg {
    #[serde(default)]
    json_path: Option<String>,
    #[serde(default)]
    string_value: Option<String>,
    #[serde(default)]
    number_value: Option<serde_json::Number>,
    #[serde(default)]
    bool_value: Option<bool>,
    /// `"NULL_VALUE"` (the protobuf enum) when present.
    #[serde(default)]
    null_value: Option<Value>,
    #[serde(default)]
    will_continue: Option<bool>,
}

/// A call whose arguments are still streaming (`willContinue: true`).
#[derive(Debug)]
struct OpenCall {
    key: CallKey,
    id: Option<String>,
    name: Option<String>,
    args: Value,
    /// Paths whose last string piece said `willContinue`: the next piece is appended.
    continuing: HashSet<String>,
    partial: bool,
}

/// Decoder state: how many calls so far, and the call whose arguments are still streaming.
#[derive(Debug, Default)]
pub struct Gemini {
    calls: u32,
    open: Option<OpenCall>,
}

impl Gemini {
    /// Decode one event.
    pub fn on_event(&mut self, event_type: &str, data: &str, out: &mut Vec<Fact>) {
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                out.push(if event_type == "error" {
                    Fact::ProviderError {
                        message: error_message(data),
                    }
                } else {
                    undecodable(data, &e)
                });
                return;
            }
        };
        if let Some(err) = chunk.error.filter(|e| e.get() != "null") {
            out.push(Fact::ProviderError {
                message: gemini_error(err.get(), data),
            });
            return;
        }
        if event_type == "error" {
            out.push(Fact::ProviderError {
                message: error_message(data),
            });
            return;
        }
        for cand in chunk.candidates.unwrap_or_default() {
            for part in cand.content.and_then(|c| c.parts).unwrap_or_default() {
                if let Some(fc) = part.function_call {
                    self.function_call(fc, out);
                }
            }
            let reason = cand.finish_reason.and_then(|raw| {
                let v = serde_json::from_str::<Value>(raw.get()).ok()?;
                let read = finish_reason(&v);
                if read.is_none() && !v.is_null() {
                    out.push(Fact::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: None,
                        message: format!(
                            "finishReason {} is neither a name nor a number",
                            crate::text::truncate(raw.get(), 40)
                        ),
                    });
                }
                read
            });
            if let Some((reason, as_sent)) = reason {
                let shown = as_sent.unwrap_or_else(|| reason.clone());
                if let Some(open) = self.open.take() {
                    out.push(Fact::Finding {
                        kind: FindingKind::UnexpectedShape,
                        key: Some(open.key.clone()),
                        message: format!("finishReason {shown} while the streamed call still had willContinue: true"),
                    });
                    Self::close(open, empty_fragment(), out);
                }
                if reason != "STOP" {
                    out.push(Fact::Finding {
                        kind: FindingKind::AbnormalFinish,
                        key: None,
                        message: format!("finishReason {shown}"),
                    });
                }
                out.push(Fact::Finish { reason });
            }
        }
    }

    fn function_call(&mut self, fc: FunctionCall<'_>, out: &mut Vec<Fact>) {
        let id = raw_string(fc.id);
        let name = raw_string(fc.name);
        // A part naming a different function (or id) while a call is open starts a new call.
        let starts_other = self.open.as_ref().is_some_and(|open| {
            let other_name = name
                .non_empty()
                .is_some_and(|n| open.name.as_deref().is_some_and(|o| o != n));
            let other_id = id
                .non_empty()
                .is_some_and(|n| open.id.as_deref().is_some_and(|o| o != n));
            other_name || other_id
        });
        if starts_other && let Some(open) = self.open.take() {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: Some(open.key.clone()),
                message: "a new functionCall started before the streamed one closed (willContinue was true)".into(),
            });
            Self::close(open, empty_fragment(), out);
        }
        let streamed =
            self.open.is_some() || fc.will_continue == Some(true) || fc.partial_args.is_some();
        if !streamed {
            // The common Gemini shape: the whole call in one part, `args` kept verbatim.
            let key = self.next_key();
            let args = match fc.args.map(RawValue::get) {
                None | Some("null") => Raw::Absent,
                Some(t) => Raw::Value(ArgsPiece::Object(super::minify_json(t).into_owned())),
            };
            let no_id = id.non_empty().is_none();
            out.push(Fact::Fragment(Fragment {
                key: key.clone(),
                stated_index: None,
                id,
                name,
                args,
            }));
            if no_id {
                out.push(no_id_finding(&key));
            }
            out.push(Fact::CallDone { key });
            return;
        }
        let mut open = match self.open.take() {
            Some(o) => o,
            None => OpenCall {
                key: self.next_key(),
                id: None,
                name: None,
                args: Value::Object(Map::new()),
                continuing: HashSet::new(),
                partial: false,
            },
        };
        if let Some(i) = id.non_empty() {
            open.id.get_or_insert_with(|| i.to_owned());
        }
        if let Some(n) = name.non_empty() {
            open.name.get_or_insert_with(|| n.to_owned());
        }
        if let Some(raw) = fc.args.filter(|a| a.get() != "null") {
            match serde_json::from_str::<Value>(raw.get()) {
                Ok(Value::Object(m)) => {
                    if let Value::Object(target) = &mut open.args {
                        target.extend(m);
                    }
                }
                _ => out.push(Fact::Finding {
                    kind: FindingKind::UnexpectedShape,
                    key: Some(open.key.clone()),
                    message: format!(
                        "args is not an object: {}",
                        crate::text::truncate(raw.get(), 60)
                    ),
                }),
            }
        }
        let mut problems = Vec::new();
        for pa in fc.partial_args.unwrap_or_default() {
            open.partial = true;
            if let Err(e) = apply_partial(&mut open, pa) {
                problems.push(e);
            }
        }
        let frag = Fragment {
            key: open.key.clone(),
            stated_index: None,
            id,
            name,
            args: Raw::Absent,
        };
        let key = open.key.clone();
        if fc.will_continue == Some(true) {
            out.push(Fact::Fragment(frag));
            self.open = Some(open);
        } else {
            Self::close(open, frag, out);
        }
        for p in problems {
            out.push(Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                key: Some(key.clone()),
                message: p,
            });
        }
    }

    fn next_key(&mut self) -> CallKey {
        let key = CallKey::Ordinal(self.calls);
        self.calls += 1;
        key
    }

    /// The call is complete: its last fragment carries the assembled arguments object.
    fn close(open: OpenCall, mut frag: Fragment, out: &mut Vec<Fact>) {
        frag.key = open.key.clone();
        let text = serde_json::to_string(&open.args).unwrap_or_else(|_| "{}".to_owned());
        frag.args = Raw::Value(ArgsPiece::Object(text));
        out.push(Fact::Fragment(frag));
        if open.partial {
            out.push(Fact::Finding {
                kind: FindingKind::PartialArgs,
                key: Some(open.key.clone()),
                message: "arguments streamed as partialArgs, assembled into one object".into(),
            });
        }
        if open.id.is_none() {
            out.push(no_id_finding(&open.key));
        }
        out.push(Fact::CallDone { key: open.key });
    }
}

/// A fragment with nothing but a (placeholder) key: closes a streamed call when no part does.
fn empty_fragment() -> Fragment {
    Fragment {
        key: CallKey::Ordinal(0),
        stated_index: None,
        id: Raw::Absent,
        name: Raw::Absent,
        args: Raw::Absent,
    }
}

fn no_id_finding(key: &CallKey) -> Fact {
    Fact::Finding {
        kind: FindingKind::NoCallId,
        key: Some(key.clone()),
        message: "functionCall without an id".into(),
    }
}

/// `STATUS (code): message` from a Gemini error object, else the shared rendering.
fn gemini_error(err: &str, data: &str) -> String {
    #[derive(Deserialize)]
    struct E {
        #[serde(default)]
        code: Option<Value>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        status: Option<String>,
    }
    match serde_json::from_str::<E>(err) {
        Ok(E {
            status: Some(s),
            message: Some(m),
            code,
        }) => match code {
            Some(c) => format!("{s} ({c}): {m}"),
            None => format!("{s}: {m}"),
        },
        _ => error_message(data),
    }
}

/// One segment of a JSON path.
#[derive(Debug, PartialEq)]
enum PathSegment {
    Key(String),
    Index(usize),
}

/// Parse the RFC 9535 subset Vertex uses: `$`, `.name`, `['name']` / `["name"]`, `[0]`.
fn parse_path(path: &str) -> Result<Vec<PathSegment>, String> {
    let bad = |why: &str| format!("unsupported jsonPath {}: {why}", crate::text::quoted(path));
    let rest = path
        .strip_prefix('$')
        .ok_or_else(|| bad("does not start with $"))?;
    let chars: Vec<char> = rest.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && chars[j] != '.' && chars[j] != '[' {
                    j += 1;
                }
                if j == start {
                    return Err(bad("empty name"));
                }
                let name: String = chars[start..j].iter().collect();
                if name == "*" {
                    return Err(bad("wildcard"));
                }
                steps.push(PathSegment::Key(name));
                i = j;
            }
            '[' => {
                let close = chars[i..]
                    .iter()
                    .position(|&c| c == ']')
                    .map(|p| p + i)
                    .ok_or_else(|| bad("unclosed ["))?;
                let inner: String = chars[i + 1..close].iter().collect();
                let inner = inner.trim();
                if let Some(q) = inner.chars().next().filter(|c| *c == '\'' || *c == '"') {
                    let name = inner
                        .strip_prefix(q)
                        .and_then(|s| s.strip_suffix(q))
                        .ok_or_else(|| bad("unbalanced quotes"))?;
                    steps.push(PathSegment::Key(name.to_owned()));
                } else {
                    let n = inner
                        .parse::<usize>()
                        .map_err(|_| bad("index is not a number"))?;
                    if n > 100_000 {
                        return Err(bad("index too large"));
                    }
                    steps.push(PathSegment::Index(n));
                }
                i = close + 1;
            }
            _ => return Err(bad("expected . or [")),
        }
    }
    if steps.is_empty() {
        return Err(bad("no member"));
    }
    Ok(steps)
}

/// Set (or, for a continued string, extend) the value at one partial's path.
fn apply_partial(open: &mut OpenCall, pa: PartialArg) -> Result<(), String> {
    let path = pa.json_path.clone().unwrap_or_default();
    let steps = parse_path(&path)?;
    let appending = open.continuing.contains(&path);
    let value = if let Some(s) = pa.string_value {
        Value::String(s)
    } else if let Some(n) = pa.number_value {
        Value::Number(n)
    } else if let Some(b) = pa.bool_value {
        Value::Bool(b)
    } else if pa.null_value.is_some() {
        Value::Null
    } else if appending {
        // A continuation piece may be empty.
        Value::String(String::new())
    } else {
        return Err(format!("partialArg for {path} has no value"));
    };
    let slot = slot_at(&mut open.args, &steps).map_err(|e| format!("jsonPath {path}: {e}"))?;
    match (appending, slot, value) {
        (true, Value::String(existing), Value::String(more)) => existing.push_str(&more),
        (true, _, _) => {
            return Err(format!(
                "jsonPath {path}: a continued string went on with another type"
            ));
        }
        (false, slot, value) => {
            if slot.is_object() || slot.is_array() {
                return Err(format!(
                    "jsonPath {path}: would replace an object or array with a scalar"
                ));
            }
            *slot = value;
        }
    }
    if pa.will_continue == Some(true) {
        open.continuing.insert(path);
    } else {
        open.continuing.remove(&path);
    }
    Ok(())
}

/// The value at `steps`, creating objects, arrays and `null` slots on the way.
fn slot_at<'v>(root: &'v mut Value, steps: &[PathSegment]) -> Result<&'v mut Value, String> {
    let mut cur = root;
    for step in steps {
        if cur.is_null() {
            *cur = match step {
                PathSegment::Key(_) => Value::Object(Map::new()),
                PathSegment::Index(_) => Value::Array(Vec::new()),
            };
        }
        cur = match (step, cur) {
            (PathSegment::Key(k), Value::Object(m)) => m.entry(k.clone()).or_insert(Value::Null),
            (PathSegment::Index(i), Value::Array(a)) => {
                if a.len() <= *i {
                    a.resize(*i + 1, Value::Null);
                }
                &mut a[*i]
            }
            (PathSegment::Key(k), _) => {
                return Err(format!(
                    "member {} of something that is not an object",
                    crate::text::quoted(k)
                ));
            }
            (PathSegment::Index(i), _) => {
                return Err(format!("element [{i}] of something that is not an array"));
            }
        };
    }
    Ok(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<Fact> {
        let mut d = Gemini::default();
        let mut out = Vec::new();
        for l in lines {
            d.on_event("message", l, &mut out);
        }
        out
    }

    fn args_of(s: &[Fact]) -> Vec<String> {
        s.iter()
            .filter_map(|s| match s {
                Fact::Fragment(Fragment {
                    args: Raw::Value(p),
                    ..
                }) => Some(p.text().to_owned()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn integer_enums_are_read_as_their_names() {
        // `$alt=json;enum-encoding=int`: every enum a number, the call on the finishing chunk.
        let s = run(&[
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},"finishReason":1,"index":0,"safetyRatings":[{"category":8,"probability":1}]}],"usageMetadata":{"promptTokenCount":5,"promptTokensDetails":[{"modality":1,"tokenCount":5}]},"modelVersion":"gemini-2.5-flash"}"#,
        ]);
        assert_eq!(args_of(&s), [r#"{"city":"Paris"}"#]);
        assert_eq!(
            s.last(),
            Some(&Fact::Finish {
                reason: "STOP".into()
            })
        );
        assert!(
            !s.iter()
                .any(|f| matches!(f, Fact::Finding { kind, .. } if *kind != FindingKind::NoCallId)),
            "{s:?}"
        );
        // Any other number is an abnormal finish under its name; 10 announces a lost call.
        let s = run(&[r#"{"candidates":[{"finishReason":2}]}"#]);
        assert!(s.contains(&Fact::Finding {
            kind: FindingKind::AbnormalFinish,
            key: None,
            message: "finishReason 2 (MAX_TOKENS)".into()
        }));
        let s = run(&[r#"{"candidates":[{"finishReason":10}]}"#]);
        assert_eq!(
            s.last(),
            Some(&Fact::Finish {
                reason: "MALFORMED_FUNCTION_CALL".into()
            })
        );
        assert_eq!(finish_reason_name(12), "UNEXPECTED_TOOL_CALL");
        assert_eq!(finish_reason_name(99), "FINISH_REASON_99");
        // A value that is neither is a finding, and the chunk's call is still read.
        let s = run(&[
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]},"finishReason":{"x":1}}]}"#,
        ]);
        assert_eq!(args_of(&s), ["{}"]);
        assert!(s.iter().any(|f| matches!(
            f,
            Fact::Finding {
                kind: FindingKind::UnexpectedShape,
                ..
            }
        )));
    }

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("$.a.b[2]['c d']").ok(),
            Some(vec![
                PathSegment::Key("a".into()),
                PathSegment::Key("b".into()),
                PathSegment::Index(2),
                PathSegment::Key("c d".into())
            ])
        );
        assert!(parse_path("$..a").is_err());
        assert!(parse_path("a").is_err());
        assert!(parse_path("$").is_err());
    }

    #[test]
    fn partial_args_are_assembled() {
        let s = run(&[
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"controlLight","args":{"room":"living"},"willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.brightness","numberValue":50},{"jsonPath":"$.color","stringValue":"warm","willContinue":true}],"willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.color","stringValue":" white"}],"willContinue":true}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{}},{"functionCall":{"name":"setThermostat","partialArgs":[{"jsonPath":"$.temp","numberValue":21}]}}]},"finishReason":"STOP"}]}"#,
        ]);
        assert_eq!(
            args_of(&s),
            vec![
                r#"{"room":"living","brightness":50,"color":"warm white"}"#,
                r#"{"temp":21}"#
            ]
        );
        assert!(s.iter().any(|s| matches!(
            s,
            Fact::Finding {
                kind: FindingKind::PartialArgs,
                ..
            }
        )));
        assert!(matches!(s.last(), Some(Fact::Finish { reason }) if reason == "STOP"));
    }

    #[test]
    fn error_object_and_abnormal_finish() {
        let s = run(&[
            r#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}"#,
        ]);
        assert_eq!(
            s,
            vec![Fact::ProviderError {
                message: "RESOURCE_EXHAUSTED (429): Resource exhausted".into()
            }]
        );
        let s = run(&[r#"{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL"}]}"#]);
        assert!(matches!(
            &s[0],
            Fact::Finding {
                kind: FindingKind::AbnormalFinish,
                ..
            }
        ));
    }
}
