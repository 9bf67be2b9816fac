//! The partial-JSON preview: what a typewriter UI shows while a call's arguments stream.
//!
//! UIs that display tool-call arguments as they arrive run a *partial* (lenient) JSON parser on
//! the text accumulated so far after every fragment. openai-python does it with jiter's partial
//! mode allowing trailing strings; this module runs the same parser ([`jiter`], in
//! [`PartialMode::TrailingStrings`]) on each call's prefix after each of its fragments. It is a
//! view, kept apart from the accumulator: the accumulator still parses once, at the finish, and
//! nothing here changes a call, its parse result or the verdict.
//!
//! **Preview honesty.** A preview is *contradicted* when it shows something the call's final
//! parsed arguments contradict: a number or literal cut short (`"days": 3` shown, `31` final), a
//! complete value that later changes, a key later removed, an element the final array lacks. A
//! shown string that is a prefix of its final value is not a contradiction, nor is a key or an
//! element not shown yet. A call whose final arguments do not parse is not checked.
//!
//! jiter cannot resume a parse, so a preview per fragment re-parses the call's prefix: quadratic
//! per call. [`Analysis::compute_previews`] (for `check`) parses only the prefixes whose
//! judgement is not known without a parse: in a call whose text parses and repeats no key, a
//! prefix that ends between complete values or inside a string value cannot be contradicted, nor
//! one that ends inside a number jiter shows as its final value (the `fast` module). The app asks [`at`]
//! for the cursor only.

use std::fmt::Write as _;

use jiter::{JsonValue, JsonValueScratch, PartialMode};
use serde_json::Value;

use crate::accumulate::{Call, Own, Parsed};
use crate::analysis::Analysis;
use crate::findings::{Finding, FindingKind, Location};

mod fast;

/// The partial mode openai-python uses (`jiter.from_json(..., partial_mode="trailing-strings")`).
pub const MODE: PartialMode = PartialMode::TrailingStrings;

pub use crate::analysis::{CallPreview, Contradiction};

/// jiter's partial-mode value for `text`, as a serde_json value; `None` when nothing parses
/// (empty text, or text that is not the start of a JSON document).
pub fn parse_partial(text: &str) -> Option<Value> {
    JsonValue::parse_with_config(text.as_bytes(), false, MODE)
        .ok()
        .map(|v| to_serde(&v))
}

/// Convert a jiter value to a serde_json value (object keys in order; a repeated key keeps its
/// last value, as serde_json does when parsing).
pub fn to_serde(v: &JsonValue<'_>) -> Value {
    match v {
        JsonValue::Null => Value::Null,
        JsonValue::Bool(b) => Value::Bool(*b),
        JsonValue::Int(i) => Value::from(*i),
        JsonValue::BigInt(b) => {
            serde_json::from_str::<Value>(&b.to_string()).unwrap_or(Value::Null)
        }
        JsonValue::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        JsonValue::Str(s) => Value::String(s.to_string()),
        JsonValue::Array(a) => Value::Array(a.iter().map(to_serde).collect()),
        JsonValue::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.to_string(), to_serde(v)))
                .collect(),
        ),
    }
}

/// Every place where `shown` (a partial preview) shows something `fin` (the final value)
/// contradicts, as JSON Pointers, in document order. Empty: the preview is stable.
pub fn contradictions(shown: &JsonValue<'_>, fin: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(shown, fin, &mut String::new(), &mut out);
    out
}

fn walk(shown: &JsonValue<'_>, fin: &Value, path: &mut String, out: &mut Vec<String>) {
    let bad = match (shown, fin) {
        (JsonValue::Null, Value::Null) => false,
        (JsonValue::Bool(a), Value::Bool(b)) => a != b,
        // A shown string that is a prefix of the final one is what a typewriter should show.
        (JsonValue::Str(a), Value::String(b)) => !b.starts_with(a.as_ref()),
        (JsonValue::Int(a), Value::Number(b)) => match b.as_i64() {
            Some(b) => *a != b,
            None => b.as_f64() != Some(*a as f64) || !b.is_f64(),
        },
        (JsonValue::BigInt(a), Value::Number(b)) => a.to_string() != b.to_string(),
        (JsonValue::Float(a), Value::Number(b)) => b.as_f64() != Some(*a),
        (JsonValue::Array(a), Value::Array(b)) => {
            if a.len() > b.len() {
                true
            } else {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let len = path.len();
                    // No allocation per element (this runs for every element of every preview).
                    write!(path, "/{i}").ok();
                    walk(x, y, path, out);
                    path.truncate(len);
                }
                false
            }
        }
        (JsonValue::Object(a), Value::Object(b)) => {
            // One lookup per shown key (a prefix's keys usually come in the final's order, so
            // mostly none): the children are walked as the keys are found, and their findings
            // taken back if a shown key turns out to be missing (then the object is the finding).
            let mark = out.len();
            let mut in_order = b.iter();
            let mut missing = false;
            for (k, x) in a.iter() {
                let k: &str = k.as_ref();
                let y = match in_order.next() {
                    Some((fk, fv)) if fk == k => Some(fv),
                    _ => b.get(k),
                };
                let Some(y) = y else {
                    missing = true;
                    break;
                };
                let len = path.len();
                path.push('/');
                push_pointer_token(path, k);
                walk(x, y, path, out);
                path.truncate(len);
            }
            if missing {
                out.truncate(mark);
            }
            missing
        }
        _ => true,
    };
    if bad {
        out.push(path.clone());
    }
}

/// RFC 6901: `~` → `~0`, `/` → `~1`.
fn push_pointer_token(path: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// The preview after one fragment (the app's cursor view, `sse-replay preview`'s lines).
#[derive(Clone, Debug, PartialEq)]
pub struct FragmentPreview {
    /// The fragment (stream-wide number).
    pub fragment: u32,
    /// The call's position in stream order.
    pub call: u32,
    /// Arrival time of the fragment's chunk, microseconds.
    pub t_us: u64,
    /// jiter's value for the call's arguments so far; `None` before anything parses.
    pub value: Option<Value>,
    /// JSON Pointers of the shown values the final result contradicts (empty when the final
    /// arguments do not parse: nothing is checked against them).
    pub contradicted: Vec<String>,
}

/// The final arguments to check previews against (`None`: they did not parse, or they are
/// free-form text, which a partial-JSON preview does not apply to).
fn final_of(c: &Call) -> Option<std::borrow::Cow<'_, Value>> {
    if c.text_input {
        return None;
    }
    match &c.parsed {
        // Not kept after the summary: a report over thousands of calls holds their texts only.
        Parsed::Ok(v) => Some(v.get()),
        Parsed::Err { .. } => None,
    }
}

/// The call's arguments up to and including fragment `frag` (stream-wide number).
fn prefix<'a>(a: &'a Analysis, c: &'a Call, frag: u32) -> &'a str {
    let end = a
        .fragments
        .get(frag as usize)
        .map_or(0, |f| f.args_range.end as usize);
    c.raw_arguments.get(..end).unwrap_or("")
}

/// The preview of call `call` (its index in [`Analysis::calls`]) after its first `n` fragments;
/// `None` when the call does not exist or `n` is 0. Parses one prefix: cheap enough per frame.
pub fn at(a: &Analysis, call: usize, n: usize) -> Option<FragmentPreview> {
    let c = a.calls.get(call)?;
    let no = *c.fragments.get(n.checked_sub(1)?)?;
    Some(fragment_preview(a, c, no))
}

fn fragment_preview(a: &Analysis, c: &Call, no: u32) -> FragmentPreview {
    let text = prefix(a, c, no);
    let parsed = JsonValue::parse_with_config(text.as_bytes(), false, MODE).ok();
    let contradicted = match (&parsed, final_of(c).as_deref()) {
        (Some(v), Some(fin)) => contradictions(v, fin),
        _ => Vec::new(),
    };
    FragmentPreview {
        fragment: no,
        call: c.position,
        t_us: a.fragments.get(no as usize).map_or(0, |f| f.pos.t_micros),
        value: parsed.as_ref().map(to_serde),
        contradicted,
    }
}

/// Every fragment's preview in stream order (optionally of one call, by position): the
/// `preview` command's feed. Calls `f` for each, so nothing is collected.
pub fn each_fragment(a: &Analysis, call: Option<u32>, mut f: impl FnMut(FragmentPreview)) {
    for fr in &a.fragments {
        let Some(c) = a.calls.get(fr.call as usize) else {
            continue;
        };
        if call.is_some_and(|n| n != c.position) {
            continue;
        }
        f(fragment_preview(a, c, fr.no));
    }
}

/// One call's summary: every fragment's preview parsed and checked against the final value.
pub fn summarize(a: &Analysis, c: &Call) -> CallPreview {
    summarize_own(c, a.call_own(c))
}

/// [`summarize`] with the call's own fragment records (`own`, in order): one pass over them.
fn summarize_own(c: &Call, own: Own<'_>) -> CallPreview {
    summarize_text(
        c.position,
        c.fragment_count as usize,
        own.iter().map(|f| (f.no, f.args_range.end as usize)),
        &c.raw_arguments,
        final_of(c).as_deref(),
    )
}

/// [`summarize`] over a call's text: its `count` fragments, each as its stream-wide number and
/// the byte of `text` it ends at, checked against `fin` (not checked when `None`).
fn summarize_text(
    position: u32,
    count: usize,
    fragments: impl Iterator<Item = (u32, usize)>,
    text: &str,
    fin: Option<&Value>,
) -> CallPreview {
    let mut out = CallPreview {
        call: position,
        previews: count as u64,
        stable: 0,
        contradicted: 0,
        first_contradiction: None,
        checked: fin.is_some(),
    };
    let Some(fin) = fin else {
        return out;
    };
    summarize_prefixes(&mut out, fragments, text, fin, fast::eligible(text, fin));
    out
}

/// The loop of [`summarize_text`]: with `fast` (the call passed [`fast::eligible`]), a prefix
/// that [`Visible::settled`] says shows only complete values and a string cut short is judged
/// stable without a parse; otherwise (and always with `fast` false, the tests' oracle) every
/// prefix that may show more is parsed by jiter and checked.
fn summarize_prefixes(
    out: &mut CallPreview,
    fragments: impl Iterator<Item = (u32, usize)>,
    text: &str,
    fin: &Value,
    fast: bool,
) {
    let mut scratch = JsonValueScratch::new();
    let mut last_end = usize::MAX;
    let mut last_bad = false;
    let mut visible = Visible::default();
    for (no, end) in fragments {
        let prefix = text.get(..end).unwrap_or("");
        // An empty fragment leaves the prefix as it was: the same preview, the same judgement;
        // so does one that only adds what jiter does not show yet ([`Visible`]).
        let grows = last_end != usize::MAX && prefix.len() >= last_end;
        let shows_more = match prefix.get(if grows { last_end } else { 0 }..) {
            Some(piece) if grows => visible.feed(piece),
            _ => {
                visible = Visible::default();
                visible.feed(prefix);
                true
            }
        };
        if prefix.len() != last_end && !shows_more {
            last_end = prefix.len();
        }
        if prefix.len() != last_end {
            last_end = prefix.len();
            // With `fast`, the prefix is parsed only when it is unsure or shows the call's
            // first contradiction (whose place and values are reported).
            let number = || {
                let at = visible.open_number()?;
                fast::number_judgement(text, at, prefix.len())
            };
            last_bad = match fast && visible.settled() {
                true => false,
                false => match fast.then(number).flatten() {
                    Some(false) => false,
                    Some(true) if out.first_contradiction.is_some() => true,
                    _ => judge(&mut scratch, prefix, fin, no, out),
                },
            };
        }
        if last_bad {
            out.contradicted += 1;
        } else {
            out.stable += 1;
        }
    }
}

/// jiter's preview of `prefix` checked against `fin`: `true` when contradicted (the first
/// contradiction is noted in `out`).
fn judge<'t>(
    scratch: &mut JsonValueScratch<'t>,
    prefix: &'t str,
    fin: &Value,
    no: u32,
    out: &mut CallPreview,
) -> bool {
    match scratch.parse(prefix.as_bytes(), false, MODE) {
        Ok(v) => {
            let found = contradictions(&v, fin);
            if let (Some(path), None) = (found.first(), &out.first_contradiction) {
                let shown = to_serde(&v);
                out.first_contradiction = Some(Contradiction {
                    fragment: no,
                    path: path.clone(),
                    shown: shown.pointer(path).cloned().unwrap_or(Value::Null),
                    final_value: fin.pointer(path).cloned().unwrap_or(Value::Null),
                });
            }
            !found.is_empty()
        }
        Err(_) => false,
    }
}

/// Where a JSON text stands for what jiter's partial mode shows of it, fed piece by piece:
/// [`Visible::feed`] says whether a piece may change the preview. It cannot when all it adds is
/// whitespace, `:`, `,`, a closing `]` or `}`, an object key (jiter shows no key before its
/// value starts) or the closing quote of a string; anything else (a value's first character, a
/// string's content, a number's or literal's characters) may. A `check` preview is re-parsed
/// only then: the same preview is the same judgement. (Checked against jiter itself, character
/// by character, in the tests.)
#[derive(Clone, Debug, Default)]
struct Visible {
    /// Open containers, `{` or `[`.
    stack: Vec<u8>,
    /// In an object, a key is expected next (or its end).
    want_key: bool,
    in_string: bool,
    string_is_key: bool,
    escaped: bool,
    /// Inside a number or literal (`true`, `false`, `null`) that nothing has ended yet.
    in_scalar: bool,
    /// Hex digits of a `\uXXXX` escape still to come, and those read so far.
    hex_left: u8,
    hex: u32,
    /// The last `\uXXXX` escape was a high surrogate: its low half is still to come.
    high_pending: bool,
    /// Bytes taken so far, and where the scalar being read began.
    at: usize,
    scalar_start: usize,
}

impl Visible {
    /// Take the next piece; `true` when it may change what a partial parser shows.
    fn feed(&mut self, piece: &str) -> bool {
        let mut shows_more = false;
        let start = self.at;
        self.at += piece.len();
        for (i, &b) in piece.as_bytes().iter().enumerate() {
            if self.in_string {
                self.follow_escape(b);
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    continue;
                }
                shows_more |= !self.string_is_key;
                continue;
            }
            let was_scalar = std::mem::replace(&mut self.in_scalar, false);
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b':' => {}
                b',' => self.want_key = self.stack.last() == Some(&b'{'),
                b'}' | b']' => {
                    self.stack.pop();
                    self.want_key = false;
                }
                b'"' => {
                    self.in_string = true;
                    (self.hex_left, self.high_pending) = (0, false);
                    self.string_is_key = self.want_key;
                    self.want_key = false;
                    shows_more |= !self.string_is_key;
                }
                b'{' | b'[' => {
                    self.stack.push(b);
                    self.want_key = b == b'{';
                    shows_more = true;
                }
                _ => {
                    if !was_scalar {
                        self.scalar_start = start + i;
                    }
                    self.in_scalar = true;
                    shows_more = true;
                }
            }
        }
        shows_more
    }

    /// Follow `\uXXXX` escapes in an open string (byte `b`, before `escaped` is updated for it):
    /// where one ends, and whether it was a surrogate pair's first half.
    fn follow_escape(&mut self, b: u8) {
        if self.escaped {
            if b == b'u' {
                (self.hex_left, self.hex) = (4, 0);
            }
        } else if self.hex_left > 0 {
            self.hex = self.hex << 4 | (b as char).to_digit(16).unwrap_or(0);
            self.hex_left -= 1;
            if self.hex_left == 0 {
                self.high_pending = (0xD800..=0xDBFF).contains(&self.hex);
            }
        }
    }

    /// What has been taken so far ends where every value it shows is complete, or is a string
    /// cut short between whole characters: not inside a number or literal (which a partial
    /// parser shows cut short), nor inside an escape (`\`, `\u00`) or between the halves of a
    /// surrogate pair (`\ud83d` of `\ud83d\ude00`). Then a prefix of a document without
    /// repeated keys shows nothing the whole document contradicts (see [`fast`]).
    /// Where the number being read began, when what has been taken so far ends inside one.
    fn open_number(&self) -> Option<usize> {
        (self.in_scalar && !self.in_string).then_some(self.scalar_start)
    }

    fn settled(&self) -> bool {
        !self.in_scalar
            && !(self.in_string && (self.escaped || self.hex_left > 0 || self.high_pending))
    }
}

/// The `preview-contradiction` finding for a summary with contradictions.
pub fn finding(p: &CallPreview, a: &Analysis) -> Option<Finding> {
    p.first_contradiction.as_ref()?;
    let own = a.calls.get(p.call as usize).map(|c| a.call_own(c));
    finding_own(p, own.unwrap_or(Own::Held(&[])))
}

/// [`finding`] with the call's own fragment records (`own`, in order).
fn finding_own(p: &CallPreview, own: Own<'_>) -> Option<Finding> {
    let first = p.first_contradiction.as_ref()?;
    let chunk = own
        .iter()
        .find(|f| f.no == first.fragment)
        .map(|f| f.pos.chunk);
    Some(Finding {
        kind: FindingKind::PreviewContradiction,
        call: Some(p.call),
        first: Location {
            chunk,
            fragment: Some(first.fragment),
            ..Default::default()
        },
        count: p.contradicted,
        message: format!(
            "{} of {} {} something the final arguments contradict; first after fragment {}: {} shown at {}, final {}",
            p.contradicted,
            crate::text::plural(p.previews, "preview"),
            if p.previews == 1 { "shows" } else { "show" },
            first.fragment,
            first.shown,
            if first.path.is_empty() {
                "/"
            } else {
                &first.path
            },
            first.final_value
        ),
    })
}

impl Analysis {
    /// Compute every call's preview summary into [`Analysis::preview`] and add a
    /// `preview-contradiction` (info) finding per call with contradictions. `check` does it, the
    /// app does not.
    pub fn compute_previews(&mut self) {
        let mut list = Vec::with_capacity(self.calls.len());
        let mut found = Vec::new();
        for c in &self.calls {
            // Each call's records in turn (read again for a finding: they are not collected).
            let own = self.call_own(c);
            let p = summarize_own(c, own);
            found.extend(finding_own(&p, own));
            list.push(p);
        }
        if !found.is_empty() {
            self.findings.extend(found);
            crate::findings::sort(&mut self.findings);
        }
        self.preview = Some(list);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(text: &str) -> JsonValue<'_> {
        JsonValue::parse_with_config(text.as_bytes(), false, MODE).unwrap_or(JsonValue::Null)
    }

    #[test]
    fn string_prefix_is_stable_number_cut_short_is_not() {
        let fin = json!({"city": "深圳", "days": 31});
        assert!(contradictions(&shown(r#"{"city": "深"#), &fin).is_empty());
        assert_eq!(
            contradictions(&shown(r#"{"city": "深圳", "days": 3"#), &fin),
            ["/days"]
        );
    }

    #[test]
    fn removed_key_changed_value_and_extra_element() {
        let fin = json!({"a": [1, 2], "b": true});
        assert_eq!(contradictions(&shown(r#"{"x": 1"#), &fin), [""]);
        assert_eq!(contradictions(&shown(r#"{"b": false"#), &fin), ["/b"]);
        assert_eq!(contradictions(&shown(r#"{"a": [1, 2, 3"#), &fin), ["/a"]);
        assert!(contradictions(&shown(r#"{"a": [1"#), &fin).is_empty());
        assert_eq!(contradictions(&shown(r#"{"a": "s"#), &fin), ["/a"]);
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        let fin = json!({"a/b~": 2});
        assert_eq!(contradictions(&shown(r#"{"a/b~": 1"#), &fin), ["/a~1b~0"]);
    }

    /// Whenever [`Visible`] says a piece cannot change the preview, jiter shows the same value
    /// before and after it: every document cut into pieces of 1 to 5 characters at every
    /// offset.
    #[test]
    fn what_visible_calls_invisible_jiter_does_not_show() {
        let docs = [
            r#"{"k":"v \"q\" 深","n":12,"a":[true,null,-1.5e3],"o":{}}"#,
            r#"{ "a" : [ 1 , 2.5 , [ ] , { "b" : "x\\y\u00e9" } ] , "c" : false }"#,
            "{\n  \"pretty\": {\n    \"x\": [\n      1e-3,\n      \"s\"\n    ]\n  }\n}",
            r#"[{"k":"}]{[,:"},{"":""},"\"",-0,1E+2]"#,
            r#""top-level string with \" and \\""#,
            "  42 ",
            r#"{"dup":1,"dup":"two","z":{"dup":[null]}}"#,
        ];
        let mut checked = 0;
        for doc in docs {
            let cuts: Vec<usize> = doc
                .char_indices()
                .map(|(i, _)| i)
                .chain([doc.len()])
                .collect();
            for size in 1..=5 {
                for first in 0..size.min(cuts.len()) {
                    let mut v = Visible::default();
                    let mut prev = cuts[0];
                    v.feed(&doc[..prev]);
                    let mut at = first;
                    while at < cuts.len() {
                        let end = cuts[at];
                        if end > prev && !v.feed(&doc[prev..end]) {
                            assert_eq!(
                                parse_partial(&doc[..prev]),
                                parse_partial(&doc[..end]),
                                "{doc:?} from {prev} to {end}"
                            );
                            checked += 1;
                        }
                        prev = end;
                        at += size;
                    }
                }
            }
        }
        assert!(checked > 500, "{checked} invisible pieces checked");
    }

    #[test]
    fn nothing_parses_before_the_first_byte() {
        assert_eq!(parse_partial(""), None);
        assert_eq!(parse_partial("   "), None);
        assert_eq!(parse_partial(r#"{"a": "b"#), Some(json!({"a": "b"})));
    }
}
