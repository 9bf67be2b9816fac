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
//! per call. [`Analysis::compute_previews`] does it for `check`; the app asks [`at`] for the
//! cursor only.

use std::fmt::Write as _;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use jiter::{JsonValue, JsonValueScratch, PartialMode};
use serde_json::Value;

use crate::accumulate::{Call, Parsed, parse_value};
use crate::analysis::Analysis;
use crate::dialect::FxHashMap;
use crate::findings::{Finding, FindingKind, Location};
use crate::naive::Balance;
use crate::signal::{CallKey, Pos, Signal, SignalObserver};

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
                    let _ = write!(path, "/{i}");
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

/// The final arguments to check previews against (`None`: they did not parse).
fn final_of(c: &Call) -> Option<&Value> {
    match &c.parsed {
        Parsed::Ok(v) => Some(v),
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
    let contradicted = match (&parsed, final_of(c)) {
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
    let end_of = |i: usize| {
        c.fragments
            .get(i)
            .and_then(|&no| a.fragments.get(no as usize))
            .map_or(0, |f| f.args_range.end as usize)
    };
    summarize_text(
        c.position,
        &c.fragments,
        end_of,
        &c.raw_arguments,
        final_of(c),
    )
}

/// [`summarize`] over a call's text: its `fragments` (stream-wide numbers), the `i`-th ending at
/// byte `end_of(i)` of `text`, checked against `fin` (not checked when `None`).
fn summarize_text(
    position: u32,
    fragments: &[u32],
    end_of: impl Fn(usize) -> usize,
    text: &str,
    fin: Option<&Value>,
) -> CallPreview {
    let mut out = CallPreview {
        call: position,
        previews: fragments.len() as u64,
        stable: 0,
        contradicted: 0,
        first_contradiction: None,
        checked: fin.is_some(),
    };
    let Some(fin) = fin else {
        return out;
    };
    summarize_prefixes(
        &mut out,
        fragments,
        end_of,
        text,
        fin,
        fast::eligible(text, fin),
    );
    out
}

/// The loop of [`summarize_text`]: with `fast` (the call passed [`fast::eligible`]), a prefix
/// that [`Visible::settled`] says shows only complete values and a string cut short is judged
/// stable without a parse; otherwise (and always with `fast` false, the tests' oracle) every
/// prefix that may show more is parsed by jiter and checked.
fn summarize_prefixes(
    out: &mut CallPreview,
    fragments: &[u32],
    end_of: impl Fn(usize) -> usize,
    text: &str,
    fin: &Value,
    fast: bool,
) {
    let mut scratch = JsonValueScratch::new();
    let mut last_end = usize::MAX;
    let mut last_bad = false;
    let mut visible = Visible::default();
    for (i, &no) in fragments.iter().enumerate() {
        let prefix = text.get(..end_of(i)).unwrap_or("");
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

// --- `check`'s previews, computed while the stream is read

/// The previews worked out beside the analysis ([`crate::analysis::Feed::with_observer`], on the
/// strategies' worker thread): as soon as a call's arguments so far parse (the moment a
/// `parse-when-valid` client would take them as final), its summary is computed against that
/// value, on threads of their own. At the end, [`Analysis::compute_previews_with`] keeps each
/// summary whose call really ended there (same fragments, same text, same parse) and computes the
/// others as [`Analysis::compute_previews`] does, so the result is the same; the quadratic work
/// has then mostly run in parallel with the stream's reading. [`Speculative::default`] does
/// nothing (no previews asked for).
#[derive(Debug, Default)]
pub struct Speculative {
    enabled: bool,
    by_key: FxHashMap<CallKey, u32>,
    calls: Vec<SpeculativeCall>,
    /// The summaries' threads, started with the first summary to work out, and which is next.
    workers: Vec<(SyncSender<Job>, JoinHandle<Vec<Job>>)>,
    next: usize,
}

/// One call as [`Speculative`] follows it, and its summary once worked out.
#[derive(Debug, Default)]
struct SpeculativeCall {
    text: String,
    fragments: Vec<u32>,
    /// End of the text after each fragment.
    ends: Vec<u32>,
    balance: Balance,
    /// Its summary was sent to be worked out (what came in is then in the job).
    sent: bool,
    /// More fragments came after it was sent: the call did not end there.
    went_on: bool,
    summary: Option<CallPreview>,
}

/// A summary to work out (and, worked out, the text it was worked out on).
#[derive(Debug)]
struct Job {
    call: u32,
    text: String,
    fragments: Vec<u32>,
    ends: Vec<u32>,
    value: Option<Value>,
    summary: Option<CallPreview>,
}

/// Summaries in flight: a lagging thread holds the stream back rather than piling up values.
const JOBS_IN_FLIGHT: usize = 64;

impl Speculative {
    /// Work the previews out while the stream is read (`check` without `--no-preview`).
    pub fn enabled() -> Self {
        Self {
            enabled: true,
            ..Self::default()
        }
    }

    fn submit(&mut self, job: Job) {
        if self.workers.is_empty() {
            // One per core (at most 4): the summaries are independent, and once the stream is
            // read they are all that is left to do.
            let n = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
            for _ in 0..n {
                let (tx, rx) = sync_channel::<Job>(JOBS_IN_FLIGHT);
                let spawned =
                    std::thread::Builder::new()
                        .name("previews".into())
                        .spawn(move || {
                            let mut done = Vec::new();
                            while let Ok(mut job) = rx.recv() {
                                work_out(&mut job);
                                done.push(job);
                            }
                            done
                        });
                if let Ok(handle) = spawned {
                    self.workers.push((tx, handle));
                }
            }
        }
        let mut job = job;
        self.next = self.next.wrapping_add(1);
        match self.workers.get(self.next % self.workers.len().max(1)) {
            Some((tx, _)) => {
                if let Err(back) = tx.send(job) {
                    // The thread is gone (it panicked): work it out here.
                    job = back.0;
                    work_out(&mut job);
                    self.take_back(job);
                }
            }
            None => {
                work_out(&mut job);
                self.take_back(job);
            }
        }
    }

    /// A worked-out job back into its call.
    fn take_back(&mut self, job: Job) {
        if let Some(c) = self.calls.get_mut(job.call as usize) {
            c.text = job.text;
            c.fragments = job.fragments;
            c.ends = job.ends;
            c.summary = job.summary;
        }
    }
}

fn work_out(job: &mut Job) {
    if let Some(value) = job.value.take() {
        let ends = &job.ends;
        let end_of = |k: usize| ends.get(k).map_or(0, |&e| e as usize);
        job.summary = Some(summarize_text(
            job.call,
            &job.fragments,
            end_of,
            &job.text,
            Some(&value),
        ));
    }
}

impl SignalObserver for Speculative {
    fn on_signal(&mut self, signal: &Signal, _pos: Pos, fragment_no: u32) {
        let Signal::Fragment(f) = signal else {
            return;
        };
        if !self.enabled {
            return;
        }
        let next = self.calls.len() as u32;
        let i = *self.by_key.entry(f.key.clone()).or_insert(next);
        if i == next {
            self.calls.push(SpeculativeCall::default());
        }
        let Some(c) = self.calls.get_mut(i as usize) else {
            return;
        };
        if c.sent {
            c.went_on = true;
            return;
        }
        let piece = f.args.value().map_or("", |p| p.text());
        c.text.push_str(piece);
        c.balance.feed(piece);
        c.fragments.push(fragment_no);
        // A call's arguments past 4 GiB are not followed (they are computed at the end).
        let Ok(end) = u32::try_from(c.text.len()) else {
            c.went_on = true;
            c.sent = true;
            return;
        };
        c.ends.push(end);
        if !c.balance.may_parse() || c.text.trim().is_empty() {
            return;
        }
        if let Parsed::Ok(v) = parse_value(&c.text) {
            c.sent = true;
            let job = Job {
                call: i,
                text: std::mem::take(&mut c.text),
                fragments: std::mem::take(&mut c.fragments),
                ends: std::mem::take(&mut c.ends),
                value: Some(v),
                summary: None,
            };
            self.submit(job);
        }
    }

    fn on_finish(&mut self, _finished_at: Option<Pos>) {
        for (tx, handle) in std::mem::take(&mut self.workers) {
            drop(tx);
            // A panic there is a bug; the calls it had are then computed at the end.
            for job in handle.join().unwrap_or_default() {
                self.take_back(job);
            }
        }
    }
}

impl SpeculativeCall {
    /// The summary, if it was computed on exactly what call `c` ended as.
    fn take_for(&mut self, a: &Analysis, c: &Call) -> Option<CallPreview> {
        let same = !self.went_on
            && matches!(c.parsed, Parsed::Ok(_))
            && self.text == c.raw_arguments
            && self.fragments == c.fragments
            && self.fragments.iter().zip(&self.ends).all(|(&no, &end)| {
                a.fragments
                    .get(no as usize)
                    .is_some_and(|f| f.args_range.end == end)
            });
        if same { self.summary.take() } else { None }
    }
}

/// The `preview-contradiction` finding for a summary with contradictions.
pub fn finding(p: &CallPreview, a: &Analysis) -> Option<Finding> {
    let first = p.first_contradiction.as_ref()?;
    let chunk = a
        .fragments
        .get(first.fragment as usize)
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
    /// `preview-contradiction` (info) finding per call with contradictions. Quadratic per call
    /// (jiter re-parses each prefix); `check` does it, the app does not.
    pub fn compute_previews(&mut self) {
        self.compute_previews_with(Speculative::default());
    }

    /// [`Analysis::compute_previews`], taking the summaries [`Speculative`] worked out while the
    /// stream was read where they hold (the same result, sooner).
    pub fn compute_previews_with(&mut self, speculative: Speculative) {
        let mut ahead = speculative.calls;
        let list: Vec<CallPreview> = self
            .calls
            .iter()
            .map(|c| {
                ahead
                    .get_mut(c.position as usize)
                    .and_then(|s| s.take_for(self, c))
                    .unwrap_or_else(|| summarize(self, c))
            })
            .collect();
        let found: Vec<Finding> = list.iter().filter_map(|p| finding(p, self)).collect();
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

    #[test]
    fn a_call_is_summarized_once_it_parses_and_not_kept_if_it_goes_on() {
        use crate::signal::{ArgsPiece, Fragment, Raw};
        let frag = |index: u64, text: &str| {
            Signal::Fragment(Fragment {
                key: CallKey::Index {
                    choice: 0,
                    index,
                    generation: 0,
                },
                stated_index: Some(index),
                id: Raw::Absent,
                name: Raw::Absent,
                args: Raw::Value(ArgsPiece::Text(text.into())),
            })
        };
        let mut s = Speculative::enabled();
        let pos = Pos::default();
        s.on_signal(&frag(0, r#"{"days": 3"#), pos, 0);
        s.on_signal(&frag(1, "[1"), pos, 1);
        s.on_signal(&frag(0, "1}"), pos, 2);
        s.on_signal(&frag(1, "]"), pos, 3);
        // Call 1 goes on after it parsed: its summary cannot be kept.
        s.on_signal(&frag(1, " "), pos, 4);
        s.on_finish(None);
        let first = s.calls[0].summary.as_ref().expect("worked out");
        assert_eq!(
            (first.previews, first.stable, first.contradicted),
            (2, 1, 1)
        );
        assert_eq!(s.calls[0].text, r#"{"days": 31}"#);
        assert_eq!(
            first
                .first_contradiction
                .as_ref()
                .map(|c| (c.fragment, c.path.as_str())),
            Some((0, "/days"))
        );
        assert!(s.calls[1].went_on);
        // Not asked for: nothing is followed.
        let mut off = Speculative::default();
        off.on_signal(&frag(0, "{}"), pos, 0);
        off.on_finish(None);
        assert!(off.calls.is_empty());
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
