//! Judging a client: its printed calls against the expected result (what `export` gives for the
//! case's bytes), and, when it fails, which naive strategy it behaves like.
//!
//! The rule: a client passes when it prints exactly the parseable calls; for a broken (unparseable)
//! or unfinished call it may leave it out or exit non-zero; printing a call with partial, repaired
//! or invented arguments fails. When the stream itself ends badly (provider error, no finish, a call
//! that does not parse) exiting non-zero is an expected outcome too, as long as whatever it printed
//! is right.

use serde_json::{Value, json};

use super::Variant;
use sse_replay_core::accumulate::Parsed;
use sse_replay_core::analysis::Analysis;
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
    fn name(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Unfinished => "unfinished",
            CallStatus::Broken => "broken",
        }
    }
}

/// Arguments as printed or expected: a JSON value, or text that is not JSON.
#[derive(Clone, Debug, PartialEq)]
pub enum Args {
    Value(Value),
    /// Text that does not parse as JSON (a broken call, or what a client printed as a string).
    Raw(String),
}

impl Args {
    fn to_json(&self) -> Value {
        match self {
            Args::Value(v) => v.clone(),
            Args::Raw(s) => Value::String(s.clone()),
        }
    }
    fn show(&self) -> String {
        let text = match self {
            Args::Value(v) => v.to_string(),
            Args::Raw(s) => format!("{s:?} (not JSON)"),
        };
        sse_replay_core::text::truncate(&text, 120)
    }
}

/// One call: expected (from the stream) or printed (by the client, or a naive strategy).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseCall {
    /// Empty for a naive strategy that loses names (matches any name).
    pub name: String,
    pub arguments: Args,
    /// `None` when not given (absent, `null` or `""`).
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

    /// Same name and arguments; ids compared only when both sides have one.
    fn same(&self, other: &CaseCall) -> bool {
        let names = self.name == other.name || self.name.is_empty() || other.name.is_empty();
        let ids = match (&self.id, &other.id) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        names && ids && self.arguments == other.arguments
    }

    /// The contract's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "arguments": self.arguments.to_json(), "id": self.id})
    }
}

/// The expected result of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    pub calls: Vec<(CaseCall, CallStatus)>,
    /// Why the stream itself is not clean (`check`'s problems); non-empty = exiting non-zero is fine.
    pub problems: Vec<String>,
}

impl Expected {
    /// From the analysis of the case's bytes.
    pub fn from_analysis(analysis: &Analysis) -> Self {
        let calls = analysis
            .calls
            .iter()
            .map(|c| {
                let (arguments, status) = match &c.parsed {
                    Parsed::Ok(v) if c.complete => {
                        (Args::Value(serde_json::Value::clone(v)), CallStatus::Ok)
                    }
                    Parsed::Ok(v) => (
                        Args::Value(serde_json::Value::clone(v)),
                        CallStatus::Unfinished,
                    ),
                    Parsed::Err { .. } => (Args::Raw(c.raw_arguments.clone()), CallStatus::Broken),
                };
                let call = CaseCall {
                    name: c.name.clone(),
                    arguments,
                    id: c.id.clone().filter(|s| !s.is_empty()),
                };
                (call, status)
            })
            .collect();
        Self {
            calls,
            problems: analysis.problems(),
        }
    }

    /// Exiting non-zero is an acceptable outcome.
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
/// raw text: the client printed arguments that do not parse). Empty output is no calls.
pub fn parse_output(stdout: &[u8]) -> Result<Vec<CaseCall>, OutputError> {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    let values: Vec<Value> = if text.is_empty() {
        Vec::new()
    } else if text.starts_with('[') {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => items,
            Ok(_) => return Err(OutputError::NotJson("not an array".into())),
            Err(e) => return Err(OutputError::NotJson(e.to_string())),
        }
    } else {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<Value>(l.trim()))
            .collect::<Result<_, _>>()
            .map_err(|e| OutputError::NotJson(e.to_string()))?
    };
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let name = v
                .get("name")
                .and_then(Value::as_str)
                .ok_or(OutputError::NotACall(i))?
                .to_owned();
            let arguments = match v.get("arguments") {
                None | Some(Value::Null) => Args::Value(json!({})),
                Some(Value::String(s)) if s.trim().is_empty() => Args::Value(json!({})),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(v) => Args::Value(v),
                    Err(_) => Args::Raw(s.clone()),
                },
                Some(other) => Args::Value(other.clone()),
            };
            let id = v
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            Ok(CaseCall {
                name,
                arguments,
                id,
            })
        })
        .collect()
}

/// The outcome of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseOutcome {
    Pass,
    /// The difference: which call, expected vs got.
    Fail(String),
    /// Crashed, timed out, printed no parseable JSON (or could not be started).
    Error(String),
}

impl CaseOutcome {
    /// `pass`, `fail` or `error`.
    pub fn name(&self) -> &'static str {
        match self {
            CaseOutcome::Pass => "pass",
            CaseOutcome::Fail(_) => "fail",
            CaseOutcome::Error(_) => "error",
        }
    }
    /// The explanation (empty for a pass).
    pub fn detail(&self) -> &str {
        match self {
            CaseOutcome::Pass => "",
            CaseOutcome::Fail(d) | CaseOutcome::Error(d) => d,
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

/// Judges one case (see the module documentation for the rule).
pub fn judge(
    expected: &Expected,
    exit: &Exit,
    got: &Result<Vec<CaseCall>, OutputError>,
) -> CaseOutcome {
    let failed_how = match exit {
        Exit::TimedOut => return CaseOutcome::Error("timed out: killed".into()),
        Exit::Stopped => return CaseOutcome::Error("stopped: the run was interrupted".into()),
        Exit::Code(0) => None,
        Exit::Code(c) => Some(format!("exited with code {c}")),
        Exit::Signal(s) => Some(format!("killed by signal {s}")),
    };
    match (failed_how, got) {
        (None, Err(e)) => CaseOutcome::Error(format!("printed no parseable JSON ({e})")),
        (None, Ok(got)) => match align(expected, got) {
            Ok(()) => CaseOutcome::Pass,
            Err(d) => CaseOutcome::Fail(d),
        },
        (Some(how), got) if expected.failure_allowed() => {
            // Non-zero is expected here; whatever it did print must still be right.
            match got.as_ref().map(|g| subsequence(expected, g)) {
                Ok(Err(d)) => CaseOutcome::Fail(format!("{d} (and {how})")),
                _ => CaseOutcome::Pass,
            }
        }
        (Some(how), _) => CaseOutcome::Error(format!("{how} on a stream whose calls all parse")),
    }
}

/// Exit 0: the printed calls must be the expected ones, broken calls left out, unfinished ones
/// optional.
fn align(expected: &Expected, got: &[CaseCall]) -> Result<(), String> {
    let mut gi = 0;
    let mut skipped: Vec<(usize, &CaseCall, CallStatus)> = Vec::new();
    for (ei, (e, status)) in expected.calls.iter().enumerate() {
        match status {
            CallStatus::Ok => match got.get(gi) {
                Some(g) if g.same(e) => {
                    gi += 1;
                    skipped.clear();
                }
                Some(g) => return Err(mismatch(ei, e, gi, g, &skipped)),
                None => {
                    return Err(format!(
                        "call {ei}: expected {}, got nothing ({} printed)",
                        e.show(),
                        sse_replay_core::text::plural(got.len(), "call")
                    ));
                }
            },
            CallStatus::Unfinished if got.get(gi).is_some_and(|g| g.same(e)) => gi += 1,
            _ => skipped.push((ei, e, *status)),
        }
    }
    match got.get(gi) {
        None => Ok(()),
        Some(g) => Err(match skipped.iter().find(|(_, e, _)| e.name == g.name) {
            Some((ei, e, status)) => broken_printed(*ei, e, *status, gi, g),
            None => format!(
                "call {gi}: printed {} that the stream does not hold (its calls: {})",
                g.show(),
                stream_calls(expected)
            ),
        }),
    }
}

/// Non-zero exit: every printed call must be an expected parseable call, in order.
fn subsequence(expected: &Expected, got: &[CaseCall]) -> Result<(), String> {
    let mut candidates = expected
        .calls
        .iter()
        .enumerate()
        .filter(|(_, (_, s))| *s != CallStatus::Broken);
    for (gi, g) in got.iter().enumerate() {
        if !candidates.any(|(_, (e, _))| e.same(g)) {
            return Err(
                match expected
                    .calls
                    .iter()
                    .enumerate()
                    .find(|(_, (e, _))| e.name == g.name)
                {
                    Some((ei, (e, status))) => broken_printed(ei, e, *status, gi, g),
                    None => format!(
                        "call {gi}: printed {} that the stream does not hold",
                        g.show()
                    ),
                },
            );
        }
    }
    Ok(())
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

fn broken_printed(ei: usize, e: &CaseCall, status: CallStatus, gi: usize, g: &CaseCall) -> String {
    let what = match status {
        CallStatus::Broken => "whose arguments do not parse",
        _ => "that the stream never finished",
    };
    format!(
        "call {gi}: printed {} for call {ei} {what} (its arguments as received: {}): partial, repaired or invented arguments",
        g.show(),
        e.arguments.show()
    )
}

fn mismatch(
    ei: usize,
    e: &CaseCall,
    gi: usize,
    g: &CaseCall,
    skipped: &[(usize, &CaseCall, CallStatus)],
) -> String {
    if let Some((bi, b, status)) = skipped.iter().find(|(_, b, _)| b.name == g.name) {
        return broken_printed(*bi, b, *status, gi, g);
    }
    let mut parts = Vec::new();
    if e.name != g.name {
        parts.push(format!("name {:?} instead of {:?}", g.name, e.name));
    }
    if e.arguments != g.arguments {
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

fn naive_case_calls(calls: &[NaiveCall]) -> Vec<CaseCall> {
    calls
        .iter()
        .map(|n| CaseCall {
            name: n.name.clone(),
            arguments: if n.raw_arguments.trim().is_empty() {
                Args::Value(json!({}))
            } else {
                match &n.parsed {
                    Parsed::Ok(v) => Args::Value(serde_json::Value::clone(v)),
                    Parsed::Err { .. } => Args::Raw(n.raw_arguments.clone()),
                }
            },
            id: Some(n.id.clone()).filter(|s| !s.is_empty()),
        })
        .collect()
}

fn same_list(a: &[CaseCall], b: &[CaseCall]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
}

/// What a client that printed `got` on this case's bytes (`analysis`, expected result
/// `expected`) behaves like: printing the calls as received (broken ones included), or one of the
/// naive strategies (all its calls, or only those whose arguments parse: a client that drops what
/// it cannot parse). Strategies that keep names are tried before those that lose them.
/// `baseline` is the same recording in one read: a strategy that is right there was exposed by the
/// variant, else by the recording's quirk.
pub fn diagnose(
    got: &[CaseCall],
    expected: &Expected,
    analysis: &Analysis,
    baseline: Option<&Analysis>,
    recording: &str,
    variant: Variant,
) -> Option<String> {
    let as_received: Vec<CaseCall> = expected.calls.iter().map(|(c, _)| c.clone()).collect();
    if expected.failure_allowed() && same_list(got, &as_received) {
        return Some(
            "prints the calls as received, broken or unfinished ones included: it checks neither that the arguments parse nor how the stream ended".into(),
        );
    }
    let candidates = || {
        analysis
            .strategies
            .iter()
            .filter(|r| r.report.not_applicable.is_none() && !r.agreement.matches_correct)
    };
    let matches = |r: &&sse_replay_core::analysis::StrategyResult| {
        let all = naive_case_calls(&r.report.calls);
        let parsed: Vec<CaseCall> = all
            .iter()
            .filter(|c| matches!(c.arguments, Args::Value(_)))
            .cloned()
            .collect();
        same_list(got, &all) || same_list(got, &parsed)
    };
    let keeps_names = |r: &&sse_replay_core::analysis::StrategyResult| {
        r.report.calls.iter().all(|c| !c.name.is_empty())
    };
    let result = candidates()
        .filter(keeps_names)
        .find(matches)
        .or_else(|| candidates().find(matches))?;
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
    use super::*;

    fn call(name: &str, args: Value) -> CaseCall {
        CaseCall {
            name: name.into(),
            arguments: Args::Value(args),
            id: None,
        }
    }

    fn expected(calls: Vec<(CaseCall, CallStatus)>) -> Expected {
        Expected {
            calls,
            problems: Vec::new(),
        }
    }

    #[test]
    fn output_forms() {
        let a = parse_output(br#"[{"name":"f","arguments":"{\"a\":1}","id":""}]"#).unwrap();
        assert_eq!(a, vec![call("f", json!({"a":1}))]);
        let b = parse_output(b"{\"name\":\"f\",\"arguments\":{\"a\":1},\"id\":null}\n\n{\"name\":\"g\",\"id\":\"x\"}\n").unwrap();
        assert_eq!(b.len(), 2);
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

    #[test]
    fn broken_calls_may_be_left_out_but_not_repaired() {
        let e = expected(vec![
            (call("f", json!({"a":1})), CallStatus::Ok),
            (
                CaseCall {
                    name: "g".into(),
                    arguments: Args::Raw("{\"city\":\"杭州\",\"days\":".into()),
                    id: None,
                },
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
        let mut repaired = ok;
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

    #[test]
    fn ids_count_only_when_given() {
        let mut want = call("f", json!({}));
        want.id = Some("call_1".into());
        let e = expected(vec![(want, CallStatus::Ok)]);
        assert_eq!(
            judge(&e, &Exit::Code(0), &Ok(vec![call("f", json!({}))])),
            CaseOutcome::Pass
        );
        let mut wrong = call("f", json!({}));
        wrong.id = Some("call_1call_1".into());
        assert!(matches!(
            judge(&e, &Exit::Code(0), &Ok(vec![wrong])),
            CaseOutcome::Fail(_)
        ));
    }
}
