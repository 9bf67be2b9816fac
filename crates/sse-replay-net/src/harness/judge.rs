//! Judging a client: its printed calls against the expected result (the client calls `export`
//! gives for the case's bytes, server tools left out), and, when it fails, what it behaves like.
//!
//! The rule: a client passes when it prints exactly the parseable calls; for a broken (unparseable)
//! or unfinished call it may leave it out or exit non-zero; printing a call with partial, repaired
//! or invented arguments fails. When the stream itself ends badly (provider error, no finish, a call
//! that does not parse) exiting non-zero, or printing nothing, is an expected outcome too; whatever
//! it does print must be right, and must hold every call the stream completed before it failed.
//!
//! Printed values are taken as printed: an absent (or `null`) `id` is "not given", but `"id": ""`
//! is an id, and a wrong one where the stream gave one; `"name": ""` is a wrong name. Arguments
//! compare as JSON values, numbers as numbers (`3.0` equals `3`).

use serde_json::{Value, json};

use super::Variant;
use sse_replay_core::accumulate::Parsed;
use sse_replay_core::analysis::{Analysis, StrategyResult};
use sse_replay_core::naive::{NaiveCall, Strategy};

/// How a call of the expected result stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallStatus {
    /// Parsed, and finished (by the dialect or a normal end of stream): the client must print it.
    Ok,
    /// Parsed, but the stream never finished it: the client may print it as parsed, or leave it out.
    Unfinished,
    /// Its arguments do not parse: the client must leave it out (or exit non-zero).
    Broken,
}

impl CallStatus {
    /// `ok`, `unfinished` or `broken` (JSON reports, `GET /cases`).
    pub fn name(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Unfinished => "unfinished",
            CallStatus::Broken => "broken",
        }
    }
}

/// Two JSON values are the same value: objects by key whatever the order, numbers as numbers (an
/// integer equals the same float, `3` and `3.0`), everything else exactly.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(i), Some(j)) = (x.as_i64(), y.as_i64()) {
                i == j
            } else if let (Some(i), Some(j)) = (x.as_u64(), y.as_u64()) {
                i == j
            } else {
                x.as_f64().zip(y.as_f64()).is_some_and(|(f, g)| f == g)
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| json_eq(v, w))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Arguments as printed or expected: a JSON value, or text that is not JSON. Two are the same
/// when they are the same JSON value ([`json_eq`]).
#[derive(Clone, Debug)]
pub enum Args {
    Value(Value),
    /// Text that does not parse as JSON (a broken call, or what a client printed as a string).
    Raw(String),
    /// Free-form text: a custom tool's input (expected), compared as text. A client prints it as
    /// a JSON string holding the text (or that string JSON-encoded once more, as the AI SDK hands
    /// it out).
    Text(String),
    /// A call the client printed as failed, in `export`'s shape (`"error"` and `"raw_arguments"`,
    /// no `"arguments"`): it says the call's arguments did not parse, which is leaving it out.
    Failed {
        /// The error it gave.
        error: String,
        /// The text it says it received, when it gave it.
        raw: Option<String>,
    },
}

impl PartialEq for Args {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Args::Failed { raw: a, .. }, Args::Failed { raw: b, .. }) => a == b,
            _ => self.same(other),
        }
    }
}

impl Args {
    /// The arguments as JSON (raw text as a string).
    pub fn to_json(&self) -> Value {
        match self {
            Args::Value(v) => v.clone(),
            Args::Raw(s) | Args::Text(s) => Value::String(s.clone()),
            Args::Failed { raw, .. } => raw.clone().map_or(Value::Null, Value::String),
        }
    }

    /// The arguments in a few words, for messages.
    pub fn show(&self) -> String {
        let text = match self {
            Args::Value(v) => v.to_string(),
            Args::Raw(s) => format!("{s:?} (not JSON)"),
            Args::Text(s) => format!("{s:?} (text)"),
            Args::Failed { error, .. } => format!("(reported as failed: {error})"),
        };
        sse_replay_core::text::truncate(&text, 120)
    }

    /// The same arguments: equal JSON values ([`json_eq`]) or the same raw text; free-form text
    /// equals a printed string holding it (once or twice JSON-encoded) or, for text that is JSON,
    /// the same value. A call reported as failed is never the same as arguments.
    pub fn same(&self, other: &Args) -> bool {
        match (self, other) {
            (Args::Value(a), Args::Value(b)) => json_eq(a, b),
            (Args::Raw(a), Args::Raw(b)) | (Args::Text(a), Args::Text(b)) => a == b,
            (Args::Text(t), Args::Raw(s)) | (Args::Raw(s), Args::Text(t)) => s == t,
            (Args::Text(t), Args::Value(v)) | (Args::Value(v), Args::Text(t)) => match v {
                Value::String(s) => s == t,
                other => serde_json::from_str::<Value>(t).is_ok_and(|p| json_eq(&p, other)),
            },
            _ => false,
        }
    }
}

/// One call: expected (from the stream) or printed (by the client, or a naive strategy).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseCall {
    /// The name as printed: `""` is a name (a wrong one), never a wildcard.
    pub name: String,
    /// The arguments, parsed when they are JSON.
    pub arguments: Args,
    /// `None` when not given (the key absent, or `null`). A printed `""` is kept: it is a value.
    /// Expected calls carry `None` where the stream gave no id (Gemini, Ollama).
    pub id: Option<String>,
}

impl CaseCall {
    fn show(&self) -> String {
        format!(
            "{} {}",
            sse_replay_core::text::truncate(&self.name, 60),
            self.arguments.show()
        )
    }

    /// The printed call `got` is this expected call: the same name and arguments, and the same id
    /// when both sides have one (a client may leave the id out, not print a different one).
    pub fn accepts(&self, got: &CaseCall) -> bool {
        let ids = match (&self.id, &got.id) {
            (Some(want), Some(printed)) => want == printed,
            _ => true,
        };
        self.name == got.name && ids && self.arguments.same(&got.arguments)
    }

    /// The contract's JSON shape (a call reported as failed: `export`'s, with `"error"`).
    pub fn to_json(&self) -> Value {
        let mut v =
            json!({"name": self.name, "arguments": self.arguments.to_json(), "id": self.id});
        if let (Args::Failed { error, .. }, Some(o)) = (&self.arguments, v.as_object_mut()) {
            o.insert("error".into(), json!(error));
        }
        v
    }
}

/// The expected result of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// The client calls in stream order, each with how it stands.
    pub calls: Vec<(CaseCall, CallStatus)>,
    /// Why the stream itself is not clean (`check`'s problems); non-empty = exiting non-zero is fine.
    pub problems: Vec<String>,
}

impl Expected {
    /// From the analysis of the case's bytes: the client calls, as `export` writes them (the
    /// provider's server tools are not the client's calls, here as in `export` and `check`).
    pub fn from_analysis(analysis: &Analysis) -> Self {
        // What `export` gives: the calls the client must execute, not the tools the provider
        // ran itself (Anthropic `server_tool_use`, Bedrock's code interpreter, Responses
        // `web_search_call`…), which a client does not assemble into calls.
        let calls = analysis
            .client_calls()
            .map(|c| {
                let (arguments, status) = match &c.parsed {
                    // A custom tool's input is text, judged as text.
                    Parsed::Ok(_) if c.text_input => (
                        Args::Text(c.raw_arguments.to_string()),
                        if c.complete {
                            CallStatus::Ok
                        } else {
                            CallStatus::Unfinished
                        },
                    ),
                    Parsed::Ok(v) if c.complete => {
                        (Args::Value(serde_json::Value::clone(v)), CallStatus::Ok)
                    }
                    Parsed::Ok(v) => (
                        Args::Value(serde_json::Value::clone(v)),
                        CallStatus::Unfinished,
                    ),
                    Parsed::Err { .. } => {
                        (Args::Raw(c.raw_arguments.to_string()), CallStatus::Broken)
                    }
                };
                let call = CaseCall {
                    name: c.name.clone(),
                    arguments,
                    id: c.id.clone().filter(|s| !s.is_empty()),
                };
                (call, status)
            })
            .collect();
        let mut problems = analysis.problems();
        // Every call closed, the response never: `check` is satisfied (the calls are whole), but
        // a client may well refuse a response that did not finish (more calls could have come).
        if analysis.ending == sse_replay_core::analysis::StreamEnding::CallsComplete {
            problems.push(
                "the stream ended without its final event: every call was closed, the response was not"
                    .into(),
            );
        }
        Self { calls, problems }
    }

    /// Exiting non-zero (or printing nothing) is an acceptable outcome: the stream ended badly.
    pub fn failure_allowed(&self) -> bool {
        !self.problems.is_empty() || self.calls.iter().any(|(_, s)| *s != CallStatus::Ok)
    }

    /// JSON for reports: each call with its `status`.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.calls
                .iter()
                .map(|(c, s)| {
                    let mut v = c.to_json();
                    if let Some(o) = v.as_object_mut() {
                        o.insert("status".into(), json!(s.name()));
                    }
                    v
                })
                .collect(),
        )
    }
}

/// Why a client's standard output is not the contract's JSON.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OutputError {
    #[error("stdout is not a JSON array or JSON lines: {0}")]
    NotJson(String),
    #[error("call {0} is not an object with a \"name\" string")]
    NotACall(usize),
}

/// Parses a client's standard output: a JSON array, or JSON lines, of `{"name", "arguments", "id"?}`.
/// `arguments` may be a JSON value or a string holding one (a string that is not JSON is kept as
/// raw text: the client printed arguments that do not parse). Empty output is no calls. An `id`
/// that is absent or `null` is not given; any other value is kept as printed (`""` included).
pub fn parse_output(stdout: &[u8]) -> Result<Vec<CaseCall>, OutputError> {
    parse_output_limited(stdout, OutputLimits::NONE)
}

/// How much of a client's output is read into calls ([`parse_output_limited`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    /// The most calls.
    pub calls: usize,
    /// The longest call, as printed (its JSON text).
    pub call_bytes: usize,
}

impl OutputLimits {
    /// No limit.
    pub const NONE: OutputLimits = OutputLimits {
        calls: usize::MAX,
        call_bytes: usize::MAX,
    };
}

/// [`parse_output`] within `limits`: more calls, or a longer one, is [`OutputError::NotJson`]
/// saying which, found as soon as that call is read. The output is read call by call (each call's
/// text first, and its JSON value only within the limit), never as one tree of every value printed
/// (which took fifty times the bytes of a long output).
pub fn parse_output_limited(
    stdout: &[u8],
    limits: OutputLimits,
) -> Result<Vec<CaseCall>, OutputError> {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    let mut calls = Calls {
        calls: Vec::new(),
        not_a_call: None,
        seen: 0,
        limits,
        over: None,
    };
    if text.is_empty() {
        return Ok(Vec::new());
    } else if text.starts_with('[') {
        let mut de = serde_json::Deserializer::from_str(text);
        let read =
            serde::Deserializer::deserialize_seq(&mut de, &mut calls).and_then(|()| de.end());
        if let Some(over) = calls.over.take() {
            return Err(over);
        }
        read.map_err(|e| OutputError::NotJson(e.to_string()))?;
    } else {
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            calls.push(line, || serde_json::from_str::<Value>(line))?;
        }
    }
    match calls.not_a_call {
        Some(i) => Err(OutputError::NotACall(i)),
        None => Ok(calls.calls),
    }
}

/// The calls of an output as it is read, element by element ([`parse_output_limited`]).
struct Calls {
    calls: Vec<CaseCall>,
    /// The first element that is not a call; later ones are read (a syntax error after it
    /// still makes the output not JSON) but not kept.
    not_a_call: Option<usize>,
    /// Elements read.
    seen: usize,
    limits: OutputLimits,
    /// Why reading stopped at a limit.
    over: Option<OutputError>,
}

impl Calls {
    /// One more element, `text` as printed; `value` parses it (only within the limits).
    fn push(
        &mut self,
        text: &str,
        value: impl FnOnce() -> Result<Value, serde_json::Error>,
    ) -> Result<(), OutputError> {
        let i = self.seen;
        if i >= self.limits.calls {
            return Err(OutputError::NotJson(format!(
                "more than {} calls",
                self.limits.calls
            )));
        }
        if text.len() > self.limits.call_bytes {
            return Err(OutputError::NotJson(format!(
                "call {i} is longer than {} bytes",
                self.limits.call_bytes
            )));
        }
        let v = value().map_err(|e| OutputError::NotJson(e.to_string()))?;
        self.seen += 1;
        if self.not_a_call.is_none() {
            match call_from_json(&v) {
                Some(call) => self.calls.push(call),
                None => {
                    self.not_a_call = Some(i);
                    // Nothing more is kept; the rest is only checked to be JSON.
                    self.calls = Vec::new();
                }
            }
        }
        Ok(())
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Calls {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON array of calls")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // Each element's text, borrowed: nothing is built before it is found within the limits.
        while let Some(raw) = seq.next_element::<&'de serde_json::value::RawValue>()? {
            let text = raw.get();
            if let Err(e) = self.push(text, || serde_json::from_str::<Value>(text)) {
                self.over = Some(e);
                return Err(serde::de::Error::custom("over the limit"));
            }
        }
        Ok(())
    }
}

/// One printed call from its JSON object (`None`: not an object with a `"name"` string). A call
/// with an `"error"` string and no `"arguments"` is a call reported as failed, as `export` writes
/// one ([`Args::Failed`]).
pub fn call_from_json(v: &Value) -> Option<CaseCall> {
    let name = v.get("name").and_then(Value::as_str)?.to_owned();
    let failed = v
        .get("error")
        .and_then(Value::as_str)
        .filter(|_| v.get("arguments").is_none_or(Value::is_null));
    let arguments = match v.get("arguments") {
        _ if failed.is_some() => Args::Failed {
            error: failed.unwrap_or_default().to_owned(),
            raw: v
                .get("raw_arguments")
                .and_then(Value::as_str)
                .map(str::to_owned),
        },
        None | Some(Value::Null) => Args::Value(json!({})),
        Some(Value::String(s)) if s.trim().is_empty() => Args::Value(json!({})),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => Args::Value(v),
            Err(_) => Args::Raw(s.clone()),
        },
        Some(other) => Args::Value(other.clone()),
    };
    let id = match v.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    Some(CaseCall {
        name,
        arguments,
        id,
    })
}

/// The outcome of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseOutcome {
    Pass,
    /// The difference: which call, expected vs got.
    Fail(String),
    /// Crashed, timed out, printed no parseable JSON (or could not be started).
    Error(String),
    /// A pass that carries no signal: the case is a fault or a broken stream, where printing
    /// nothing or crashing is right, and the client does not pass the same recording's clean form
    /// (or there is none to compare with). The reason says which.
    NotJudged(String),
}

impl CaseOutcome {
    /// `pass`, `fail`, `error` or `not-judged`.
    pub fn name(&self) -> &'static str {
        match self {
            CaseOutcome::Pass => "pass",
            CaseOutcome::Fail(_) => "fail",
            CaseOutcome::Error(_) => "error",
            CaseOutcome::NotJudged(_) => "not-judged",
        }
    }
    /// The explanation (empty for a pass).
    pub fn detail(&self) -> &str {
        match self {
            CaseOutcome::Pass => "",
            CaseOutcome::Fail(d) | CaseOutcome::Error(d) | CaseOutcome::NotJudged(d) => d,
        }
    }
}

/// How the client's run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit code (0 = success).
    Code(i32),
    /// Killed by a signal (a crash).
    Signal(i32),
    /// Killed by the harness at the timeout.
    TimedOut,
    /// Killed by the harness because the run was stopped (Ctrl+C, SIGTERM, the app's Stop).
    Stopped,
}

/// What the case's bytes hold when the provider's error event is skipped (a client that ignores
/// `event: error` reads on): the error's message and the calls it would then see.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorSkipped {
    /// The provider error's message.
    pub message: String,
    /// The calls of the bytes without the error event.
    pub expected: Expected,
}

/// Judges one case (see the module documentation for the rule).
pub fn judge(
    expected: &Expected,
    exit: &Exit,
    got: &Result<Vec<CaseCall>, OutputError>,
) -> CaseOutcome {
    judge_with(expected, exit, got, None)
}

/// [`judge`], telling a client that read past the provider's error event (`error_skipped`: what
/// it would then see) that it did, instead of blaming its arguments.
pub fn judge_with(
    expected: &Expected,
    exit: &Exit,
    got: &Result<Vec<CaseCall>, OutputError>,
    error_skipped: Option<&ErrorSkipped>,
) -> CaseOutcome {
    let failed_how = match exit {
        Exit::TimedOut => return CaseOutcome::Error("timed out: killed".into()),
        Exit::Stopped => return CaseOutcome::Error("stopped: the run was interrupted".into()),
        Exit::Code(0) => None,
        Exit::Code(c) => Some(format!("exited with code {c}")),
        Exit::Signal(s) => Some(format!("killed by signal {s}")),
    };
    if let Some(how) = &failed_how
        && !expected.failure_allowed()
    {
        return CaseOutcome::Error(format!("{how} on a stream whose calls all parse"));
    }
    let got = match got {
        Ok(g) => g,
        // Crashing is an expected outcome here, whatever it printed before.
        Err(_) if failed_how.is_some() => return CaseOutcome::Pass,
        // JSON whose calls lack a name is not "no parseable JSON" (a nameless partial call).
        Err(e @ OutputError::NotACall(_)) => {
            return CaseOutcome::Error(format!(
                "printed JSON that is not the contract's calls: {e}"
            ));
        }
        Err(e) => return CaseOutcome::Error(format!("printed no parseable JSON ({e})")),
    };
    // The stream ended badly: printing nothing is a choice the client may make.
    if got.is_empty() && expected.failure_allowed() {
        return CaseOutcome::Pass;
    }
    match align(expected, got) {
        Ok(()) => CaseOutcome::Pass,
        Err(d) => {
            let d = match error_skipped {
                Some(skip) if align(&skip.expected, got).is_ok() => format!(
                    "ignored the provider's error event ({}) and read on: printed {} the stream only holds past the error",
                    sse_replay_core::text::truncate(&skip.message, 120),
                    if got.len() == 1 {
                        "a call".to_owned()
                    } else {
                        format!("{} calls", got.len())
                    }
                ),
                _ => d,
            };
            CaseOutcome::Fail(match failed_how {
                Some(how) => format!("{d} (and {how})"),
                None => d,
            })
        }
    }
}

/// The printed calls must be the expected ones in order: every `Ok` call, unfinished ones as
/// parsed or left out, broken ones left out.
fn align(expected: &Expected, got: &[CaseCall]) -> Result<(), String> {
    let mut gi = 0;
    // Calls passed over since the last match (unfinished or broken): what a stray print may be.
    let mut skipped: Vec<usize> = Vec::new();
    for (ei, (e, status)) in expected.calls.iter().enumerate() {
        let g = got.get(gi);
        // A call reported as failed, as `export` writes one: it stands for this call when the
        // names agree, and is right for a call that does not parse (or never finished).
        if let Some(g) = g
            && let Args::Failed { error, raw } = &g.arguments
            && g.name == e.name
        {
            match (status, &e.arguments, raw) {
                (CallStatus::Ok, _, _) => {
                    return Err(format!(
                        "call {gi}: reported {} as failed ({}), but its arguments parse: {}",
                        sse_replay_core::text::truncate(&g.name, 60),
                        sse_replay_core::text::truncate(error, 120),
                        e.arguments.show()
                    ));
                }
                (CallStatus::Broken, Args::Raw(received), Some(r)) if r != received => {
                    return Err(format!(
                        "call {gi}: reported call {ei} {} as failed with other text than was received ({} instead of {})",
                        sse_replay_core::text::truncate(&g.name, 60),
                        Args::Raw(r.clone()).show(),
                        e.arguments.show()
                    ));
                }
                _ => {
                    gi += 1;
                    skipped.clear();
                    continue;
                }
            }
        }
        match status {
            CallStatus::Ok => match g {
                Some(g) if e.accepts(g) => {
                    gi += 1;
                    skipped.clear();
                }
                Some(_) => return Err(explain(expected, got, ei, gi, &skipped)),
                None => {
                    return Err(format!(
                        "call {ei}: expected {}, got nothing ({} printed)",
                        e.show(),
                        sse_replay_core::text::plural(got.len(), "call")
                    ));
                }
            },
            CallStatus::Unfinished if g.is_some_and(|g| e.accepts(g)) => {
                gi += 1;
                skipped.clear();
            }
            _ => skipped.push(ei),
        }
    }
    match got.get(gi) {
        None => Ok(()),
        Some(g) if matches!(g.arguments, Args::Failed { .. }) => Err(format!(
            "call {gi}: reported {} as failed, a call the stream does not hold at that place (its calls: {})",
            sse_replay_core::text::truncate(&g.name, 60),
            stream_calls(expected)
        )),
        Some(g) => Err(
            match skipped
                .iter()
                .copied()
                .find(|&ei| expected.calls[ei].0.name == g.name)
            {
                Some(ei) => unparseable_printed(expected, ei, gi, g),
                None => match expected.calls.iter().position(|(e, _)| e.accepts(g)) {
                    Some(ei) => format!("call {gi}: printed {} again (call {ei})", g.show()),
                    None => format!(
                        "call {gi}: printed {} that the stream does not hold (its calls: {})",
                        g.show(),
                        stream_calls(expected)
                    ),
                },
            },
        ),
    }
}

/// Why printed call `gi` is not the expected `Ok` call `ei`.
fn explain(
    expected: &Expected,
    got: &[CaseCall],
    ei: usize,
    gi: usize,
    skipped: &[usize],
) -> String {
    let (e, _) = &expected.calls[ei];
    let g = &got[gi];
    if g.name != e.name {
        // A print standing for a call passed over (broken or unfinished) with its name.
        if let Some(&bi) = skipped
            .iter()
            .find(|&&bi| expected.calls[bi].0.name == g.name)
        {
            return unparseable_printed(expected, bi, gi, g);
        }
        // The right call, at the wrong place: this one is missing (or comes later).
        if let Some(later) = expected
            .calls
            .iter()
            .enumerate()
            .skip(ei + 1)
            .find(|(_, (c, _))| c.accepts(g))
            .map(|(i, _)| i)
        {
            return format!(
                "call {ei}: expected {}, got {} (call {later}) in its place",
                e.show(),
                g.show()
            );
        }
    }
    mismatch(ei, e, gi, g)
}

/// The expected calls in a few words: `get_weather, get_time (broken)`.
fn stream_calls(expected: &Expected) -> String {
    if expected.calls.is_empty() {
        return "none".into();
    }
    expected
        .calls
        .iter()
        .map(|(c, s)| match s {
            CallStatus::Ok => sse_replay_core::text::truncate(&c.name, 60),
            _ => format!(
                "{} ({})",
                sse_replay_core::text::truncate(&c.name, 60),
                s.name()
            ),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Printed call `gi` stands for expected call `ei`, which is broken or unfinished, with other
/// arguments than the stream gave: said for what it is (as received, repaired, or different).
fn unparseable_printed(expected: &Expected, ei: usize, gi: usize, g: &CaseCall) -> String {
    let (e, status) = &expected.calls[ei];
    match (status, &g.arguments) {
        (CallStatus::Broken, Args::Raw(_)) if g.arguments.same(&e.arguments) => format!(
            "call {gi}: printed call {ei} {} whose arguments do not parse, as received: a call that does not parse must be left out",
            sse_replay_core::text::truncate(&g.name, 60)
        ),
        (CallStatus::Broken, Args::Value(v)) if json_eq(v, &json!({})) => format!(
            "call {gi}: printed {{}} for call {ei} {} whose arguments do not parse (as received: {}): empty arguments stand in for what was received",
            sse_replay_core::text::truncate(&g.name, 60),
            e.arguments.show()
        ),
        (CallStatus::Broken, Args::Value(_)) => format!(
            "call {gi}: printed {} for call {ei} whose arguments do not parse (as received: {}): partial, repaired or invented arguments",
            g.show(),
            e.arguments.show()
        ),
        (CallStatus::Broken, Args::Raw(_)) => format!(
            "call {gi}: printed {} for call {ei} whose arguments do not parse (as received: {}): not what was received, and a call that does not parse must be left out",
            g.show(),
            e.arguments.show()
        ),
        _ => format!(
            "call {gi}: printed {} for call {ei}, which the stream never finished: it holds {} (print that, or leave the call out)",
            g.show(),
            e.arguments.show()
        ),
    }
}

fn mismatch(ei: usize, e: &CaseCall, gi: usize, g: &CaseCall) -> String {
    let mut parts = Vec::new();
    if e.name != g.name {
        parts.push(format!("name {:?} instead of {:?}", g.name, e.name));
    }
    if !e.arguments.same(&g.arguments) {
        parts.push(format!(
            "arguments {} instead of {}",
            g.arguments.show(),
            e.arguments.show()
        ));
    }
    if let (Some(a), Some(b)) = (&e.id, &g.id)
        && a != b
    {
        parts.push(format!("id {b:?} instead of {a:?}"));
    }
    let at = if ei == gi {
        format!("call {ei}")
    } else {
        format!("call {ei} (printed as {gi})")
    };
    format!("{at}: {}", parts.join(", "))
}

// ---------------------------------------------------------------------------------------------
// Diagnosis
// ---------------------------------------------------------------------------------------------

/// The printed calls are the expected ones, except that some call whose arguments do not parse
/// was printed with `{}`: the client stands an empty object in for arguments it could not parse
/// (the Anthropic SDKs' message snapshot does this for an input cut mid-fragment: their partial
/// parse of `{"locat` is `{}`). Said as "cut" when the stream ended early, which is how such
/// arguments come about.
fn empty_for_unparseable(
    got: &[CaseCall],
    expected: &Expected,
    analysis: &Analysis,
) -> Option<String> {
    if got.len() != expected.calls.len() {
        return None;
    }
    let mut emptied = Vec::new();
    for (i, (g, (e, status))) in got.iter().zip(&expected.calls).enumerate() {
        let empty = matches!(&g.arguments, Args::Value(v) if json_eq(v, &json!({})));
        if *status == CallStatus::Broken && empty && g.name == e.name {
            emptied.push(i);
        } else if !(g.name == e.name && g.arguments.same(&e.arguments)) {
            return None;
        }
    }
    let first = *emptied.first()?;
    let how = if matches!(
        analysis.ending,
        sse_replay_core::analysis::StreamEnding::Finished { .. }
    ) {
        "do not parse"
    } else {
        "were cut"
    };
    let calls = if emptied.len() == 1 {
        format!("call {first}")
    } else {
        format!("{} calls", emptied.len())
    };
    Some(format!(
        "printed {{}} for a call whose arguments {how} ({calls}: {} as received): it stands an empty object in for arguments it could not parse, as the Anthropic SDKs' partial parse of a cut input does, instead of leaving the call out or failing",
        expected.calls[first].0.arguments.show()
    ))
}

/// A short phrase for what a strategy's code does wrong.
fn strategy_phrase(s: Strategy) -> &'static str {
    match s {
        Strategy::PerFragment => "parses every fragment on its own",
        Strategy::ConcatAll => "joins every call's fragments into one string",
        Strategy::Overwrite => "assigns each fragment instead of appending",
        Strategy::ConcatFields => "appends every string field, names and ids included",
        Strategy::NextIndexDone => "declares a call done when another call's fragment appears",
        Strategy::ParseWhenValid => "finishes a call as soon as its buffer parses",
        Strategy::PerReadUtf8 => "decodes each network read on its own (U+FFFD)",
        Strategy::PerReadLines => "splits each read into lines without carrying the tail",
    }
}

/// The strategies that append each call's fragments (whatever else they get wrong). On a stream
/// whose calls end unparseable (truncated, cumulative) they all print the same thing, so such a
/// stream cannot tell them apart.
pub const APPENDING: [Strategy; 6] = [
    Strategy::ConcatAll,
    Strategy::ConcatFields,
    Strategy::NextIndexDone,
    Strategy::ParseWhenValid,
    Strategy::PerReadUtf8,
    Strategy::PerReadLines,
];

/// A strategy's calls as the client contract prints them, the provider's server tools left out
/// (a strategy does not know them: its calls with a server tool's id, or with a name only server
/// tools have, are dropped).
fn naive_client_calls(calls: &[NaiveCall], analysis: &Analysis) -> Vec<CaseCall> {
    let server_ids: Vec<&str> = analysis
        .server_tools()
        .filter_map(|c| c.id.as_deref())
        .filter(|s| !s.is_empty())
        .collect();
    let server_only_names: Vec<&str> = analysis
        .server_tools()
        .map(|c| c.name.as_str())
        .filter(|n| !analysis.client_calls().any(|c| c.name == *n))
        .collect();
    calls
        .iter()
        .filter(|n| !server_ids.contains(&n.id.as_str()))
        .filter(|n| n.name.is_empty() || !server_only_names.contains(&n.name.as_str()))
        .map(|n| CaseCall {
            name: n.name.clone(),
            arguments: if n.raw_arguments.trim().is_empty() {
                Args::Value(json!({}))
            } else {
                match &n.parsed {
                    Parsed::Ok(v) => Args::Value(serde_json::Value::clone(v)),
                    Parsed::Err { .. } => Args::Raw(n.raw_arguments.to_string()),
                }
            },
            id: Some(n.id.clone()).filter(|s| !s.is_empty()),
        })
        .collect()
}

/// The printed calls `got` are `model`'s calls, by name and arguments: what a diagnosis compares.
/// Ids are left out: a strategy's id is its table's, not what a client built on the same mistake
/// prints (one keeps the first id, another the last). A model call without a name (a strategy
/// that does not track names, such as `concat-all`) says nothing about the name.
fn same_list(got: &[CaseCall], model: &[CaseCall]) -> bool {
    got.len() == model.len()
        && got
            .iter()
            .zip(model)
            .all(|(g, m)| (m.name.is_empty() || g.name == m.name) && g.arguments.same(&m.arguments))
}

/// What a diagnosis looks at: the case, its bytes and the same recording in one read.
#[derive(Clone, Copy, Debug)]
pub struct Scene<'a> {
    pub expected: &'a Expected,
    /// The analysis of the case's bytes (its naive strategies ran on exactly these reads).
    pub analysis: &'a Analysis,
    /// The same recording in one read: a strategy that is right there was exposed by the variant,
    /// else by the recording's quirk.
    pub baseline: Option<&'a Analysis>,
    pub recording: &'a str,
    pub variant: Variant,
}

/// What a client that printed `got` on this case behaves like: nothing at all (it printed no
/// calls: the dialect is named), printing the calls as received, or one naive strategy (all its
/// calls, or only those whose arguments parse: a client that drops what it cannot parse).
///
/// A strategy is named only when the output is not empty, is exactly that strategy's, and is not
/// what every appending strategy prints alike (truncated or cumulative streams, where they all
/// agree: then the group is named). Strategies that keep names are tried before those that lose
/// them.
pub fn diagnose(got: &[CaseCall], scene: &Scene<'_>) -> Option<String> {
    let Scene {
        expected,
        analysis,
        baseline,
        recording,
        variant,
    } = *scene;
    if got.is_empty() {
        return Some(format!(
            "printed no calls on this {} stream ({} expected)",
            analysis.dialect.name(),
            sse_replay_core::text::plural(expected.calls.len(), "call")
        ));
    }
    let as_received: Vec<CaseCall> = expected.calls.iter().map(|(c, _)| c.clone()).collect();
    if let Some(said) = empty_for_unparseable(got, expected, analysis) {
        return Some(said);
    }
    if same_list(got, &as_received) {
        if expected.failure_allowed() {
            return Some(
                "prints the calls as received, broken or unfinished ones included: it checks neither that the arguments parse nor how the stream ended".into(),
            );
        }
        // Names and arguments are right: only the ids differ.
        let blanked = got.iter().any(|g| g.id.as_deref() == Some(""));
        let empty_ids_sent = analysis
            .fragments
            .iter()
            .any(|f| f.id == sse_replay_core::fact::Presence::Empty);
        return Some(match (blanked, empty_ids_sent) {
            (true, true) => "only the ids are wrong: a later fragment's empty `id` replaced the real one (empty means absent)".into(),
            (true, false) => "only the ids are wrong: it prints them empty".into(),
            _ => "only the ids are wrong".into(),
        });
    }
    // A nameless, argument-less call the stream does not hold, before the right ones: the
    // call's `index` used as a position in a list (a stream whose indexes do not start at 0).
    let placeholder = |g: &CaseCall| {
        g.name.is_empty()
            && match &g.arguments {
                Args::Value(v) => json_eq(v, &json!({})),
                Args::Raw(r) => r.trim().is_empty(),
                Args::Text(_) | Args::Failed { .. } => false,
            }
    };
    let without: Vec<CaseCall> = got.iter().filter(|g| !placeholder(g)).cloned().collect();
    if without.len() < got.len() && same_list(&without, &as_received) {
        return Some(
            "prints an empty call with no name before the real ones: it uses the call's `index` as a position in a list, and this stream's indexes do not start at 0".into(),
        );
    }
    let outputs: Vec<(&StrategyResult, Vec<CaseCall>)> = analysis
        .strategies
        .iter()
        .filter(|r| r.report.not_applicable.is_none())
        .map(|r| (r, naive_client_calls(&r.report.calls, analysis)))
        .collect();
    let matches = |calls: &[CaseCall]| {
        let parsed: Vec<CaseCall> = calls
            .iter()
            .filter(|c| matches!(c.arguments, Args::Value(_)))
            .cloned()
            .collect();
        same_list(got, calls) || same_list(got, &parsed)
    };
    let appending: Vec<&(&StrategyResult, Vec<CaseCall>)> = outputs
        .iter()
        .filter(|(r, _)| APPENDING.contains(&r.report.strategy))
        .collect();
    if appending.len() >= 2 && appending.iter().all(|(_, calls)| matches(calls)) {
        let names: Vec<&str> = appending
            .iter()
            .map(|(r, _)| r.report.strategy.name())
            .collect();
        return Some(format!(
            "prints what every appending strategy prints on this stream ({}): the stream does not tell them apart",
            names.join(", ")
        ));
    }
    // A strategy that prints the right names and arguments explains nothing about a wrong print.
    let candidates = || {
        outputs
            .iter()
            .filter(|(r, _)| !r.agreement.matches_correct)
            .filter(|(_, calls)| !same_list(calls, &as_received))
            .filter(|(_, calls)| matches(calls))
    };
    let (result, _) = candidates()
        .find(|(_, calls)| calls.iter().all(|c| !c.name.is_empty()))
        .or_else(|| candidates().next())?;
    let s = result.report.strategy;
    let example = result
        .agreement
        .differences
        .first()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    let right_in_one_read = baseline
        .and_then(|b| b.strategy(s))
        .is_some_and(|b| b.agreement.matches_correct);
    let exposed = if right_in_one_read && variant.is_fault() {
        format!("exposed by the `{}` fault", variant.name())
    } else if right_in_one_read {
        format!(
            "exposed by the `{}` variant (right when the body comes in one read)",
            variant.name()
        )
    } else {
        let mut quirks: Vec<&str> = analysis
            .findings
            .iter()
            .filter(|f| f.kind.severity() != sse_replay_core::findings::Severity::Info)
            .map(|f| f.kind.label())
            .collect();
        quirks.sort_unstable();
        quirks.dedup();
        if quirks.is_empty() {
            format!("exposed by {recording}")
        } else {
            format!("exposed by {recording}: {}", quirks.join(", "))
        }
    };
    Some(format!(
        "behaves like `{}`: {}{example}; {exposed}",
        s.name(),
        strategy_phrase(s)
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn numbers_are_compared_by_value() {
        let a = |v: Value| Args::Value(v);
        assert_eq!(
            a(json!({"result": 7006652.0})),
            a(json!({"result": 7006652}))
        );
        assert_eq!(a(json!([1.5, {"x": -2}])), a(json!([1.5, {"x": -2.0}])));
        assert_ne!(
            a(json!({"result": 7006652.5})),
            a(json!({"result": 7006652}))
        );
        assert_ne!(a(json!({"a": 1})), a(json!({"a": 1, "b": 2})));
        assert_ne!(a(json!({"a": "1"})), a(json!({"a": 1})));
        assert_ne!(a(json!("x")), Args::Raw("x".into()));
        assert_eq!(
            a(json!(u64::MAX)),
            a(serde_json::from_str("18446744073709551615").unwrap())
        );
    }
    use super::*;

    fn call(name: &str, args: Value) -> CaseCall {
        CaseCall {
            name: name.into(),
            arguments: Args::Value(args),
            id: None,
        }
    }

    fn with_id(mut c: CaseCall, id: &str) -> CaseCall {
        c.id = Some(id.into());
        c
    }

    fn expected(calls: Vec<(CaseCall, CallStatus)>) -> Expected {
        Expected {
            calls,
            problems: Vec::new(),
        }
    }

    fn broken(name: &str, raw: &str) -> CaseCall {
        CaseCall {
            name: name.into(),
            arguments: Args::Raw(raw.into()),
            id: None,
        }
    }

    #[test]
    fn output_forms() {
        let a = parse_output(br#"[{"name":"f","arguments":"{\"a\":1}"}]"#).unwrap();
        assert_eq!(a, vec![call("f", json!({"a":1}))]);
        let b = parse_output(b"{\"name\":\"f\",\"arguments\":{\"a\":1},\"id\":null}\n\n{\"name\":\"g\",\"id\":\"x\"}\n").unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].id, None, "null is not given");
        assert_eq!(b[1].id.as_deref(), Some("x"));
        assert_eq!(b[1].arguments, Args::Value(json!({})));
        assert_eq!(parse_output(b"  \n").unwrap(), vec![]);
        let raw = parse_output(br#"[{"name":"f","arguments":"{\"a\":"}]"#).unwrap();
        assert_eq!(raw[0].arguments, Args::Raw("{\"a\":".into()));
        assert!(matches!(
            parse_output(b"hello"),
            Err(OutputError::NotJson(_))
        ));
        assert_eq!(parse_output(b"[1]"), Err(OutputError::NotACall(0)));
        // A nameless call (google-genai's partial calls) is named for what it is.
        let nameless = parse_output(br#"[{"name":null,"arguments":{}}]"#);
        let v = judge(&expected(vec![]), &Exit::Code(0), &nameless);
        assert_eq!(
            v.detail(),
            "printed JSON that is not the contract's calls: call 0 is not an object with a \"name\" string"
        );
        // An empty id or name printed is a value, kept as printed.
        let empty = parse_output(br#"[{"name":"","arguments":{},"id":""}]"#).unwrap();
        assert_eq!(empty[0].name, "");
        assert_eq!(empty[0].id.as_deref(), Some(""));
    }

    #[test]
    fn exact_calls_pass_wrong_ones_fail() {
        let e = expected(vec![(call("f", json!({"a":1})), CallStatus::Ok)]);
        assert_eq!(
            judge(&e, &Exit::Code(0), &Ok(vec![call("f", json!({"a":1}))])),
            CaseOutcome::Pass
        );
        let v = judge(&e, &Exit::Code(0), &Ok(vec![call("ff", json!({"a":1}))]));
        assert!(v.detail().contains("name \"ff\" instead of \"f\""), "{v:?}");
        let v = judge(&e, &Exit::Code(0), &Ok(vec![]));
        assert!(matches!(v, CaseOutcome::Fail(_)));
        // Non-zero exit on a clean stream is an error.
        assert!(matches!(
            judge(&e, &Exit::Code(1), &Ok(vec![])),
            CaseOutcome::Error(_)
        ));
        assert!(matches!(
            judge(&e, &Exit::TimedOut, &Ok(vec![])),
            CaseOutcome::Error(_)
        ));
    }

    /// A blanked name used to match any expected name, and a blanked id counted as "not given":
    /// a client that loses names or ids passed.
    #[test]
    fn an_empty_name_or_id_printed_is_a_wrong_value_an_absent_id_is_not_given() {
        let e = expected(vec![(
            with_id(call("get_weather", json!({"a": 1})), "call_1"),
            CallStatus::Ok,
        )]);
        let v = judge(&e, &Exit::Code(0), &Ok(vec![call("", json!({"a": 1}))]));
        assert!(
            v.detail().contains("name \"\" instead of \"get_weather\""),
            "{v:?}"
        );
        let v = judge(
            &e,
            &Exit::Code(0),
            &Ok(vec![with_id(call("get_weather", json!({"a": 1})), "")]),
        );
        assert!(
            v.detail().contains("id \"\" instead of \"call_1\""),
            "{v:?}"
        );
        // Not printing the id at all is fine.
        assert_eq!(
            judge(
                &e,
                &Exit::Code(0),
                &Ok(vec![call("get_weather", json!({"a": 1}))])
            ),
            CaseOutcome::Pass
        );
        // A stream without ids (Gemini): any id printed is the client's own.
        let no_id = expected(vec![(call("f", json!({})), CallStatus::Ok)]);
        assert_eq!(
            judge(
                &no_id,
                &Exit::Code(0),
                &Ok(vec![with_id(call("f", json!({})), "")])
            ),
            CaseOutcome::Pass
        );
    }

    #[test]
    fn numbers_compare_as_numbers() {
        assert!(json_eq(
            &json!({"a": 3, "b": [1.5, 2]}),
            &json!({"b": [1.5, 2.0], "a": 3.0})
        ));
        assert!(!json_eq(&json!(3), &json!(3.5)));
        assert!(!json_eq(&json!(3), &json!("3")));
        assert!(!json_eq(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(json_eq(&json!(u64::MAX), &json!(u64::MAX)));
        assert!(!json_eq(&json!(-1), &json!(u64::MAX)));
        let e = expected(vec![(call("f", json!({"days": 3})), CallStatus::Ok)]);
        let printed = parse_output(br#"[{"name":"f","arguments":"{\"days\": 3.0}"}]"#).unwrap();
        assert_eq!(judge(&e, &Exit::Code(0), &Ok(printed)), CaseOutcome::Pass);
    }

    #[test]
    fn broken_calls_may_be_left_out_but_not_repaired() {
        let e = expected(vec![
            (call("f", json!({"a":1})), CallStatus::Ok),
            (
                broken("g", "{\"city\":\"杭州\",\"days\":"),
                CallStatus::Broken,
            ),
        ]);
        let ok = vec![call("f", json!({"a":1}))];
        assert_eq!(
            judge(&e, &Exit::Code(0), &Ok(ok.clone())),
            CaseOutcome::Pass
        );
        assert_eq!(
            judge(&e, &Exit::Code(1), &Ok(ok.clone())),
            CaseOutcome::Pass
        );
        assert_eq!(
            judge(&e, &Exit::Code(1), &Err(OutputError::NotACall(0))),
            CaseOutcome::Pass
        );
        let mut repaired = ok.clone();
        repaired.push(call("g", json!({"city":"杭州"})));
        let v = judge(&e, &Exit::Code(0), &Ok(repaired.clone()));
        assert!(
            v.detail().contains("partial, repaired or invented"),
            "{v:?}"
        );
        assert!(matches!(
            judge(&e, &Exit::Code(1), &Ok(repaired)),
            CaseOutcome::Fail(_)
        ));
        // Printed as received (not JSON): said so, not "repaired".
        let mut as_received = ok;
        as_received.push(broken("g", "{\"city\":\"杭州\",\"days\":"));
        let v = judge(&e, &Exit::Code(0), &Ok(as_received));
        assert!(v.detail().contains("as received"), "{v:?}");
        assert!(!v.detail().contains("repaired"), "{v:?}");
    }

    /// The "partial, repaired or invented" label used to be given to any print that shared a
    /// broken call's name; a wrong value for a call that parsed is a plain difference.
    #[test]
    fn repaired_is_said_only_when_a_broken_call_was_printed_parsed() {
        let e = expected(vec![
            (broken("g", "{\"x\":"), CallStatus::Broken),
            (call("f", json!({"a": 1})), CallStatus::Ok),
        ]);
        let v = judge(&e, &Exit::Code(0), &Ok(vec![call("f", json!({"a": 2}))]));
        assert!(
            v.detail()
                .contains("arguments {\"a\":2} instead of {\"a\":1}"),
            "{v:?}"
        );
        assert!(!v.detail().contains("repaired"), "{v:?}");
        // An unfinished call printed with other arguments than the stream gave.
        let u = expected(vec![(call("f", json!({"a": 1})), CallStatus::Unfinished)]);
        let v = judge(&u, &Exit::Code(0), &Ok(vec![call("f", json!({"a": 2}))]));
        assert!(v.detail().contains("never finished"), "{v:?}");
        assert!(!v.detail().contains("repaired"), "{v:?}");
    }

    #[test]
    fn unfinished_calls_are_optional() {
        let e = expected(vec![
            (call("f", json!({"a":1})), CallStatus::Ok),
            (call("g", json!({})), CallStatus::Unfinished),
        ]);
        let one = vec![call("f", json!({"a":1}))];
        let mut two = one.clone();
        two.push(call("g", json!({})));
        assert_eq!(judge(&e, &Exit::Code(0), &Ok(one)), CaseOutcome::Pass);
        assert_eq!(judge(&e, &Exit::Code(0), &Ok(two)), CaseOutcome::Pass);
    }

    /// On a stream that ends badly a client may print nothing (exit 0 or not); once it prints,
    /// the calls the stream completed before the fault must be there.
    #[test]
    fn a_failed_stream_expects_the_completed_calls_once_the_client_prints_any() {
        let mut e = expected(vec![
            (call("f", json!({"a": 1})), CallStatus::Ok),
            (call("g", json!({"b": 2})), CallStatus::Ok),
            (broken("h", "{\"c\":"), CallStatus::Broken),
        ]);
        e.problems.push("the stream was cut".into());
        for exit in [Exit::Code(0), Exit::Code(1)] {
            assert_eq!(judge(&e, &exit, &Ok(vec![])), CaseOutcome::Pass);
            assert_eq!(
                judge(
                    &e,
                    &exit,
                    &Ok(vec![call("f", json!({"a": 1})), call("g", json!({"b": 2}))])
                ),
                CaseOutcome::Pass
            );
            let v = judge(&e, &exit, &Ok(vec![call("g", json!({"b": 2}))]));
            assert!(v.detail().starts_with("call 0: expected f"), "{v:?}");
        }
    }

    #[test]
    fn ids_count_only_when_given() {
        let want = with_id(call("f", json!({})), "call_1");
        let e = expected(vec![(want, CallStatus::Ok)]);
        assert_eq!(
            judge(&e, &Exit::Code(0), &Ok(vec![call("f", json!({}))])),
            CaseOutcome::Pass
        );
        let wrong = with_id(call("f", json!({})), "call_1call_1");
        assert!(matches!(
            judge(&e, &Exit::Code(0), &Ok(vec![wrong])),
            CaseOutcome::Fail(_)
        ));
    }

    #[test]
    fn a_client_that_reads_past_the_error_event_is_told_so() {
        let mut e = expected(vec![(broken("f", "{\"ci"), CallStatus::Broken)]);
        e.problems.push("provider error".into());
        let whole = vec![call("f", json!({"city": "x"})), call("g", json!({}))];
        let skip = ErrorSkipped {
            message: "overloaded_error: Overloaded".into(),
            expected: expected(vec![
                (call("f", json!({"city": "x"})), CallStatus::Ok),
                (call("g", json!({})), CallStatus::Ok),
            ]),
        };
        let v = judge_with(&e, &Exit::Code(0), &Ok(whole.clone()), Some(&skip));
        assert!(
            v.detail()
                .starts_with("ignored the provider's error event (overloaded_error"),
            "{v:?}"
        );
        assert!(!v.detail().contains("repaired"), "{v:?}");
        // Without that knowledge it is a repaired call.
        let v = judge(&e, &Exit::Code(0), &Ok(whole));
        assert!(v.detail().contains("repaired"), "{v:?}");
    }

    /// A custom tool's input is text: printed as a JSON string holding it (as the README says),
    /// it passes; it used to pass only JSON-encoded twice. Other text is a difference.
    #[test]
    fn a_custom_tool_input_printed_as_a_string_passes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/responses-items/openai-custom-tool.1.chunks.txt");
        let (suite, bad) = crate::harness::load_paths(&[path]);
        assert!(bad.is_empty(), "{bad:?}");
        let e = Expected::from_analysis(&suite[0].base);
        assert_eq!(
            e.calls[0].0.arguments,
            Args::Text("SELECT * FROM users WHERE age > 25".into())
        );
        for printed in [
            r#"[{"name":"write_sql","arguments":"SELECT * FROM users WHERE age > 25"}]"#,
            r#"[{"name":"write_sql","arguments":"\"SELECT * FROM users WHERE age > 25\""}]"#,
            r#"[{"name":"write_sql","arguments":"SELECT * FROM users WHERE age > 25","id":"call_custom_sql_001"}]"#,
        ] {
            let got = parse_output(printed.as_bytes());
            assert_eq!(
                judge(&e, &Exit::Code(0), &got),
                CaseOutcome::Pass,
                "{printed}"
            );
        }
        let got = parse_output(br#"[{"name":"write_sql","arguments":"SELECT 1"}]"#);
        let v = judge(&e, &Exit::Code(0), &got);
        assert!(v.detail().contains("\"SELECT 1\""), "{v:?}");
    }

    /// `export`'s own output read back: a call that failed to parse is written with `error` and
    /// `raw_arguments` (no `arguments`); it used to read as `{}` and be called "partial, repaired
    /// or invented". It is a call reported as failed: right for a broken call, named for an ok one.
    #[test]
    fn a_failed_call_in_exports_output_is_named_as_failed() {
        let e = Expected {
            calls: vec![
                (call("f", json!({"a": 1})), CallStatus::Ok),
                (broken("g", "{\"city\":\"杭"), CallStatus::Broken),
            ],
            problems: vec!["the stream was cut".into()],
        };
        let export = r#"[{"index":0,"id":null,"name":"f","arguments":{"a":1}},{"index":1,"id":null,"name":"g","error":"EOF while parsing a string at line 1 column 12","raw_arguments":"{\"city\":\"杭"}]"#.as_bytes();
        let got = parse_output(export);
        assert!(matches!(
            got.as_ref().unwrap()[1].arguments,
            Args::Failed { .. }
        ));
        assert_eq!(judge(&e, &Exit::Code(1), &got), CaseOutcome::Pass);
        // Reported as failed with other text than received.
        let other =
            br#"[{"name":"f","arguments":{"a":1}},{"name":"g","error":"x","raw_arguments":"{"}]"#;
        let v = judge(&e, &Exit::Code(1), &parse_output(other));
        assert!(v.detail().contains("as failed with other text"), "{v:?}");
        assert!(!v.detail().contains("invented"), "{v:?}");
        // A call that parsed, reported as failed.
        let wrong = br#"[{"name":"f","error":"x","raw_arguments":"{\"a\":1}"}]"#;
        let v = judge(&e, &Exit::Code(1), &parse_output(wrong));
        assert!(
            v.detail()
                .contains("reported f as failed (x), but its arguments parse"),
            "{v:?}"
        );
        assert!(!v.detail().contains("printed {}"), "{v:?}");
    }

    fn analysis_of(file: &str) -> Analysis {
        let b = sse_replay_core::bundled::all()
            .into_iter()
            .find(|b| b.file == file)
            .unwrap();
        let rec = b.build();
        Analysis::from_recording(
            &rec,
            sse_replay_core::analysis::SourceInfo::default(),
            sse_replay_core::pipeline::Options::default(),
        )
    }

    fn scene<'a>(e: &'a Expected, a: &'a Analysis) -> Scene<'a> {
        Scene {
            expected: e,
            analysis: a,
            baseline: Some(a),
            recording: "r",
            variant: Variant::OneRead,
        }
    }

    /// An empty output used to be labelled with whatever strategy also printed nothing (or a
    /// strategy that lost names): it is said as it is, with the dialect.
    #[test]
    fn an_empty_output_is_printed_no_calls_never_a_strategy() {
        let a = analysis_of("gemini-weather.ron");
        let e = Expected::from_analysis(&a);
        assert_eq!(
            diagnose(&[], &scene(&e, &a)).as_deref(),
            Some("printed no calls on this gemini stream (2 calls expected)")
        );
    }

    #[test]
    fn a_strategy_is_named_when_the_output_is_exactly_its_own() {
        let a = analysis_of("quirk-repeated-name.ron");
        let e = Expected::from_analysis(&a);
        let concat_fields = a.strategy(Strategy::ConcatFields).unwrap();
        let got = naive_client_calls(&concat_fields.report.calls, &a);
        let d = diagnose(&got, &scene(&e, &a)).unwrap();
        assert!(d.starts_with("behaves like `concat-fields`"), "{d}");
        // Right names and arguments, a blanked id: no strategy explains that.
        let mut ids_blanked: Vec<CaseCall> = e.calls.iter().map(|(c, _)| c.clone()).collect();
        ids_blanked[0].id = Some(String::new());
        let d = diagnose(&ids_blanked, &scene(&e, &a)).unwrap();
        assert!(d.starts_with("only the ids are wrong"), "{d}");
        // Something no strategy prints: no diagnosis at all.
        let odd = vec![call("get_weather", json!({"city": "x"}))];
        assert_eq!(diagnose(&odd, &scene(&e, &a)), None);
    }

    /// The provider's server tools are not among a strategy's client calls either.
    #[test]
    fn strategies_are_compared_on_client_calls() {
        let a = analysis_of("anthropic-server-tool.ron");
        let concat_all = a.strategy(Strategy::ConcatAll).unwrap();
        let calls = naive_client_calls(&concat_all.report.calls, &a);
        // concat-all joins the search's input and the client call's: one nameless call, kept.
        assert_eq!(calls.len(), 1);
        let per_fragment = a.strategy(Strategy::Overwrite).unwrap();
        let calls = naive_client_calls(&per_fragment.report.calls, &a);
        assert!(calls.iter().all(|c| c.name != "web_search"), "{calls:?}");
    }

    /// A Responses stream cut before `response.completed`, every call closed by its
    /// `output_item.done`: a client that refuses the unfinished response (openai-python raises
    /// "Didn't receive a `response.completed` event") is not wrong; one that prints the calls is
    /// right too.
    #[test]
    fn a_response_that_never_finished_may_be_refused() {
        let a = analysis_of("openai-responses-weather.ron");
        let body = a.body.clone();
        let at = memchr::memmem::find(&body, b"event: response.completed").unwrap();
        let rec = sse_replay_core::recording::Recording {
            chunks: vec![sse_replay_core::recording::Chunk {
                t_micros: 0,
                bytes: body[..at].to_vec(),
            }],
            ..Default::default()
        };
        let cut = Analysis::from_recording(
            &rec,
            sse_replay_core::analysis::SourceInfo::default(),
            sse_replay_core::pipeline::Options::default(),
        );
        assert!(cut.problems().is_empty(), "check is satisfied");
        let e = Expected::from_analysis(&cut);
        assert!(e.failure_allowed());
        assert!(e.calls.iter().all(|(_, s)| *s == CallStatus::Ok));
        assert_eq!(judge(&e, &Exit::Code(1), &Ok(vec![])), CaseOutcome::Pass);
        let both: Vec<CaseCall> = e.calls.iter().map(|(c, _)| c.clone()).collect();
        assert_eq!(judge(&e, &Exit::Code(0), &Ok(both)), CaseOutcome::Pass);
    }
}
