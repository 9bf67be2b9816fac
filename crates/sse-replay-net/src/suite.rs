//! The client-test suite as one server (`sse-replay serve --suite`), for the test runner the user
//! already has: every case of `sse-replay test` at its own base URL, the SDK's own paths below it
//! (`/cases/<recording>/<variant>/v1/chat/completions`), a listing to parametrize over, and the
//! same judge behind `POST …/verdict`.
//!
//! - `GET /cases` lists every case: its base URL, dialect, tool names and expected calls (each with
//!   its `status`: `ok`, `unfinished` or `broken`), clean cases first. `?dialect=NAME` filters.
//! - Any request to `/cases/<recording>/<variant>/<anything>` is answered with that case's bytes,
//!   cut into writes exactly as `sse-replay test` serves them.
//! - `POST /cases/<recording>/<variant>/verdict` with the calls the client assembled (a JSON array
//!   or JSON lines in the client contract's shape, or `{"calls": […], "error": "…"}` for a client
//!   that failed) answers with the verdict and diagnosis [`CaseContext::judge`] gives, the one
//!   judge `sse-replay test` uses. A pass on a fault or broken case counts once the client passed
//!   its clean form on this server (see [`harness::plan`]); until then it is `not-judged`.
//!
//! In-process ([`SuiteServer::start`], as wiremock's `MockServer::start()`): the same server on
//! `127.0.0.1:0`, its [`SuiteServer::cases`] to iterate in a `cargo test`, each with
//! [`SuiteCase::check`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};

use crate::harness::judge::{CaseCall, CaseOutcome, Exit, Expected, OutputError};
use crate::harness::plan::{self, CleanForm};
use crate::harness::{self, CaseContext, CaseId, SuiteRecording, Variant};
use crate::{AnyBody, NetError, ServerHandle, ServerLimits};
use sse_replay_core::dialect::DialectKind;

/// Largest verdict request body read.
const MAX_VERDICT_BYTES: usize = 16 << 20;

/// What a suite server serves.
#[derive(Debug)]
pub struct SuiteOptions {
    /// The recordings (the built-in suite: [`harness::builtin_suite`]).
    pub suite: Vec<SuiteRecording>,
    /// Variants in matrix order, framing and fault alike (variants that do not apply to a
    /// recording are left out for it).
    pub variants: Vec<Variant>,
    /// Only recordings of these dialects (empty = all).
    pub dialects: Vec<DialectKind>,
    /// The `random` variant's seed.
    pub random_seed: u64,
    /// Speed of the `recorded` variant's timing (`None`: no waiting).
    pub speed: Option<f64>,
    /// Where to listen (`127.0.0.1:0`: a free port on loopback).
    pub addr: SocketAddr,
    /// Log each request and verdict on standard error.
    pub log: bool,
    /// Time-outs and the connection cap.
    pub limits: ServerLimits,
}

impl SuiteOptions {
    /// The built-in suite in every framing variant, recorded timing as recorded, on
    /// `127.0.0.1:0`, a new random seed each time (the cases' values change with it; see
    /// [`SuiteOptions::random_seed`]).
    pub fn builtin() -> Self {
        let (suite, _) = harness::builtin_suite();
        Self {
            suite,
            variants: Variant::FRAMING.to_vec(),
            dialects: Vec::new(),
            random_seed: fresh_seed(),
            speed: Some(1.0),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            log: false,
            limits: ServerLimits::default(),
        }
    }

    /// This seed (the `random` variant's writes and every case's varied values): the same seed
    /// serves the same bytes.
    pub fn random_seed(mut self, seed: u64) -> Self {
        self.random_seed = seed;
        self
    }

    /// Only recordings of `dialect` (may be called more than once).
    pub fn dialect(mut self, dialect: DialectKind) -> Self {
        self.dialects.push(dialect);
        self
    }

    /// The fault variants too (`cut`, `no-terminator`).
    pub fn with_faults(mut self) -> Self {
        for v in Variant::FAULTS {
            if !self.variants.contains(&v) {
                self.variants.push(v);
            }
        }
        self.variants.sort();
        self
    }

    /// Only these variants.
    pub fn variants(mut self, variants: &[Variant]) -> Self {
        self.variants = variants.to_vec();
        self
    }

    /// The `recorded` variant's timing at this speed (`None`: no waiting at all).
    pub fn speed(mut self, speed: Option<f64>) -> Self {
        self.speed = speed;
        self
    }
}

/// A seed from the clock: a new one each run.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_000)
}

/// What kind of case it is, for the listing.
fn kind(r: &SuiteRecording, v: Variant) -> &'static str {
    if v.is_fault() {
        "fault"
    } else if r.clean {
        "clean"
    } else {
        "broken"
    }
}

/// One listed case.
#[derive(Clone, Debug)]
struct Listed {
    id: CaseId,
    /// `<recording>/<variant>`, unique on the server.
    key: String,
    slug: String,
    form: CleanForm,
}

/// Everything the server's handlers share.
#[derive(Debug)]
struct State {
    /// The bound address (URLs in the listing when a request carries no `Host`).
    addr: SocketAddr,
    suite: Vec<SuiteRecording>,
    variants: Vec<Variant>,
    random_seed: u64,
    speed: Option<f64>,
    log: bool,
    /// Clean cases first, then the rest, each in suite × variant order.
    cases: Vec<Listed>,
    by_key: HashMap<String, usize>,
    /// The last verdict judged per case (what clean forms are looked up in).
    verdicts: Mutex<HashMap<CaseId, CaseOutcome>>,
    /// What each listed case's stream requests were served (by index in `cases`): a verdict on a
    /// case whose stream was never requested is not a pass.
    served: Vec<Arc<crate::serve::ServedLog>>,
    /// Each listed case's wire, built once (its values varied for this server's seed).
    wires: Vec<std::sync::OnceLock<Arc<harness::Wire>>>,
}

/// A recording's name as a URL path segment: its file stem, anything but letters, digits, `.`,
/// `_` and `-` replaced by `-`.
fn slug_of(name: &str) -> String {
    let stem = std::path::Path::new(name)
        .file_stem()
        .map_or_else(|| name.to_owned(), |s| s.to_string_lossy().into_owned());
    let s: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() { "recording".into() } else { s }
}

impl State {
    fn new(opts: SuiteOptions, addr: SocketAddr) -> Self {
        let config = harness::Config {
            command: harness::ClientCommand {
                program: String::new(),
                args: Vec::new(),
            },
            variants: opts.variants.clone(),
            dialects: opts.dialects.clone(),
            jobs: 1,
            timeout: std::time::Duration::ZERO,
            speed: opts.speed.unwrap_or(1.0),
            random_seed: opts.random_seed,
        };
        let planned = plan::plan_cases(&opts.suite, &config);
        let mut slugs: Vec<String> = Vec::new();
        for r in &opts.suite {
            let base = slug_of(&r.name);
            let mut s = base.clone();
            let mut n = 2;
            while slugs.contains(&s) {
                s = format!("{base}-{n}");
                n += 1;
            }
            slugs.push(s);
        }
        let mut cases: Vec<Listed> = planned
            .iter()
            .map(|&id| {
                let slug = slugs[id.recording].clone();
                Listed {
                    id,
                    key: format!("{slug}/{}", id.variant.name()),
                    slug,
                    form: plan::clean_form(&opts.suite, id, &opts.variants),
                }
            })
            .collect();
        // Clean forms first: a runner that goes down the list judges them before what stands on them.
        cases.sort_by_key(|c| c.form != CleanForm::Itself);
        let by_key = cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key.clone(), i))
            .collect();
        let served = cases.iter().map(|_| Arc::default()).collect();
        let wires = cases.iter().map(|_| std::sync::OnceLock::new()).collect();
        Self {
            served,
            wires,
            addr,
            suite: opts.suite,
            variants: opts.variants,
            random_seed: opts.random_seed,
            speed: opts.speed,
            log: opts.log,
            cases,
            by_key,
            verdicts: Mutex::new(HashMap::new()),
        }
    }

    fn context(&self, id: CaseId) -> Option<CaseContext<'_>> {
        let r = self.suite.get(id.recording)?;
        Some(CaseContext::new(r, id.variant, self.random_seed))
    }

    fn label(&self, id: CaseId) -> String {
        self.cases
            .iter()
            .find(|c| c.id == id)
            .map_or_else(|| "?".into(), |c| c.key.clone())
    }

    /// Judges case `i` on what the client did, gates a pass by its clean form, and remembers it.
    fn judge(
        &self,
        i: usize,
        exit: &Exit,
        got: Result<Vec<CaseCall>, OutputError>,
        error: &str,
    ) -> CaseReport {
        let listed = &self.cases[i];
        let Some(ctx) = self.context(listed.id) else {
            return CaseReport {
                case: listed.key.clone(),
                outcome: CaseOutcome::Error("the case is not in the suite".into()),
                diagnosis: None,
                got: None,
                expected: Expected {
                    calls: Vec::new(),
                    problems: Vec::new(),
                },
            };
        };
        let served = self.served.get(i).map(|w| w.snapshot()).unwrap_or_default();
        let judged = ctx.judge_parsed(exit, got, error, &served);
        let verdict = {
            let verdicts = self
                .verdicts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let gated = plan::gate(judged.outcome, listed.id, &listed.form, &self.suite, |c| {
                verdicts.get(&c).cloned()
            });
            // The clean form's own label is the server's key (`recording/variant`).
            match gated {
                CaseOutcome::NotJudged(reason) => CaseOutcome::NotJudged(self.rename(&reason)),
                v => v,
            }
        };
        if let Ok(mut verdicts) = self.verdicts.lock() {
            verdicts.insert(listed.id, verdict.clone());
        }
        if self.log {
            sse_replay_core::log_line!("verdict {}: {}", listed.key, verdict.name());
        }
        CaseReport {
            case: listed.key.clone(),
            outcome: verdict,
            diagnosis: judged.diagnosis,
            got: judged.got,
            expected: ctx.expected,
        }
    }

    /// `recording × variant` labels in a reason, as the server's case keys.
    fn rename(&self, reason: &str) -> String {
        let mut out = reason.to_owned();
        for c in &self.cases {
            let r = &self.suite[c.id.recording];
            let label = format!("{} × {}", r.name, c.id.variant.name());
            if out.contains(&label) {
                out = out.replace(&label, &c.key);
            }
        }
        out
    }

    fn case_json(&self, listed: &Listed, base: &str) -> Value {
        let r = &self.suite[listed.id.recording];
        let ctx = self.context(listed.id);
        let base_url = format!("{base}/cases/{}", listed.key);
        json!({
            "id": listed.key,
            "recording": listed.slug,
            "variant": listed.id.variant.name(),
            "base_url": base_url,
            "verdict_url": format!("{base_url}/verdict"),
            "dialect": r.base.dialect.name(),
            "tools": r.tool_names(),
            "kind": kind(r, listed.id.variant),
            // Names and statuses only: the ids and arguments change every run, and a client
            // must read them from the stream (the verdict shows them).
            "expected": ctx.as_ref().map(|c| shape_json(&c.expected)),
            "problems": ctx.as_ref().map(|c| c.expected.problems.clone()),
            "clean_form": match &listed.form {
                CleanForm::Cases(ids) => ids.iter().map(|&c| Value::String(self.label(c))).collect(),
                _ => Vec::new(),
            },
            "random_seed": (listed.id.variant == Variant::Random).then_some(self.random_seed),
        })
    }

    /// The listing (`GET /cases`), only `dialect`'s cases when given.
    fn listing(&self, base: &str, dialect: Option<DialectKind>) -> Value {
        let cases: Vec<Value> = self
            .cases
            .iter()
            .filter(|c| dialect.is_none_or(|d| self.suite[c.id.recording].base.dialect == d))
            .map(|c| self.case_json(c, base))
            .collect();
        json!({
            "schema_version": 1,
            "random_seed": self.random_seed,
            "variants": self.variants.iter().map(|v| v.name()).collect::<Vec<_>>(),
            "cases": cases,
        })
    }
}

/// The expected calls as the listing shows them: each call's `name` and `status`, never its
/// values.
fn shape_json(expected: &Expected) -> Value {
    expected
        .calls
        .iter()
        .map(|(c, s)| json!({"name": c.name, "status": s.name()}))
        .collect()
}

/// A verdict on one case, as `POST …/verdict` and [`SuiteCase::check`] give it.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseReport {
    /// `<recording>/<variant>`.
    pub case: String,
    /// The verdict, a pass on a fault or broken case gated by its clean form.
    pub outcome: CaseOutcome,
    /// What the client behaves like (for a failure).
    pub diagnosis: Option<String>,
    /// The calls as read (`None`: not the contract's JSON).
    pub got: Option<Vec<CaseCall>>,
    /// What the case's bytes give.
    pub expected: Expected,
}

impl CaseReport {
    /// The case failed or errored (a case not judged did neither).
    pub fn is_failure(&self) -> bool {
        matches!(self.outcome, CaseOutcome::Fail(_) | CaseOutcome::Error(_))
    }

    /// One paragraph: `case: verdict: detail`, then the diagnosis.
    pub fn message(&self) -> String {
        let mut m = format!("{}: {}", self.case, self.outcome.name());
        if !self.outcome.detail().is_empty() {
            m.push_str(": ");
            m.push_str(self.outcome.detail());
        }
        if let Some(d) = &self.diagnosis {
            m.push_str("\n    ");
            m.push_str(d);
        }
        m
    }

    /// The JSON `POST …/verdict` answers with.
    pub fn to_json(&self) -> Value {
        json!({
            "case": self.case,
            "verdict": self.outcome.name(),
            "detail": self.outcome.detail(),
            "diagnosis": self.diagnosis,
            "expected": self.expected.to_json(),
            "got": self.got.as_ref().map(|g| g.iter().map(CaseCall::to_json).collect::<Vec<_>>()),
        })
    }
}

/// A running suite server (dropping it stops it).
#[derive(Debug)]
pub struct SuiteServer {
    handle: ServerHandle,
    state: Arc<State>,
}

/// One case of a running [`SuiteServer`], to point a client at and judge.
#[derive(Clone, Debug)]
pub struct SuiteCase {
    /// `<recording>/<variant>`.
    pub id: String,
    /// The recording's name as a path segment (its file stem).
    pub recording: String,
    /// How its bytes are cut into writes.
    pub variant: Variant,
    /// The recording's dialect.
    pub dialect: DialectKind,
    /// Where the case is served: the SDK's base URL (append `/v1` for OpenAI SDKs).
    pub base_url: String,
    /// The tools the recording calls.
    pub tools: Vec<String>,
    /// What the case's bytes give: the calls with their status.
    pub expected: Expected,
    index: usize,
    state: Arc<State>,
}

impl SuiteCase {
    /// Judges the calls the client assembled (`calls`: the client contract's JSON array of
    /// `{"name", "arguments", "id"}`) as `sse-replay test` would judge a client that printed
    /// them and exited 0.
    pub fn check(&self, calls: &Value) -> CaseReport {
        self.state
            .judge(self.index, &Exit::Code(0), parse_calls(calls), "")
    }

    /// Judges a client that failed with `error` (an exception, a non-zero exit) after
    /// assembling `calls` (often none).
    pub fn check_failed(&self, calls: &Value, error: &str) -> CaseReport {
        self.state
            .judge(self.index, &Exit::Code(1), parse_calls(calls), error)
    }
}

/// The calls of a JSON value: an array of calls (`null` is none).
fn parse_calls(calls: &Value) -> Result<Vec<CaseCall>, OutputError> {
    match calls {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| harness::judge::call_from_json(v).ok_or(OutputError::NotACall(i)))
            .collect(),
        _ => Err(OutputError::NotJson("not an array of calls".into())),
    }
}

impl SuiteServer {
    /// Binds `opts.addr` and serves the suite on a background thread with its own runtime.
    pub fn start(opts: SuiteOptions) -> Result<Self, NetError> {
        // An SDK built on reqwest in the same test binary shares this crate's reqwest, built
        // without a default TLS provider: install one, or building its client panics.
        crate::install_crypto_provider();
        let listener = crate::bind(opts.addr)?;
        let addr = listener.local_addr().map_err(|source| NetError::Bind {
            addr: opts.addr,
            source,
        })?;
        let rt = crate::multi_thread_runtime().map_err(NetError::Runtime)?;
        let limits = opts.limits;
        let state = Arc::new(State::new(opts, addr));
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let thread_state = state.clone();
        let thread = std::thread::Builder::new()
            .name("sse-replay-suite".into())
            .spawn(move || {
                rt.block_on(run(listener, thread_state, limits, stop_rx));
            })
            .map_err(NetError::Runtime)?;
        Ok(Self {
            handle: ServerHandle::new(addr, stop, thread),
            state,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.handle.addr()
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr())
    }

    /// Every case, clean ones first.
    pub fn cases(&self) -> Vec<SuiteCase> {
        let base = self.url();
        self.state
            .cases
            .iter()
            .enumerate()
            .map(|(index, c)| {
                let r = &self.state.suite[c.id.recording];
                SuiteCase {
                    id: c.key.clone(),
                    recording: c.slug.clone(),
                    variant: c.id.variant,
                    dialect: r.base.dialect,
                    base_url: format!("{base}/cases/{}", c.key),
                    tools: r.tool_names().into_iter().map(str::to_owned).collect(),
                    expected: self.state.context(c.id).map_or_else(
                        || Expected {
                            calls: Vec::new(),
                            problems: Vec::new(),
                        },
                        |ctx| ctx.expected,
                    ),
                    index,
                    state: self.state.clone(),
                }
            })
            .collect()
    }

    /// The listing `GET /cases` answers with.
    pub fn listing(&self) -> Value {
        self.state.listing(&self.url(), None)
    }

    /// Stops the server and waits for its thread.
    pub fn stop(self) {
        self.handle.stop();
    }
}

/// Serves the suite on `listener` until `stop` (the command line's `serve --suite`).
pub fn serve_blocking(
    listener: std::net::TcpListener,
    opts: SuiteOptions,
    stop: tokio::sync::watch::Receiver<bool>,
    rt: &tokio::runtime::Runtime,
) -> usize {
    let limits = opts.limits;
    let addr = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
    let state = Arc::new(State::new(opts, addr));
    let n = state.cases.len();
    rt.block_on(run(listener, state, limits, stop));
    n
}

/// How many cases `opts` makes (for the command line's banner) without serving them.
pub fn count_cases(opts: &SuiteOptions) -> usize {
    let config = harness::Config {
        command: harness::ClientCommand {
            program: String::new(),
            args: Vec::new(),
        },
        variants: opts.variants.clone(),
        dialects: opts.dialects.clone(),
        jobs: 1,
        timeout: std::time::Duration::ZERO,
        speed: 1.0,
        random_seed: opts.random_seed,
    };
    plan::plan_cases(&opts.suite, &config).len()
}

async fn run(
    listener: std::net::TcpListener,
    state: Arc<State>,
    limits: ServerLimits,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let stop_streams = stop.clone();
    crate::accept_loop(listener, stop, limits, true, move |req, peer| {
        let state = state.clone();
        let stop = stop_streams.clone();
        async move { handle(req, peer, state, limits, stop).await }
    })
    .await;
}

fn json_response(status: u16, v: &Value) -> hyper::Response<AnyBody> {
    let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
    text.push('\n');
    let mut resp = hyper::Response::new(crate::boxed_full(text));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn error_json(status: u16, message: &str) -> hyper::Response<AnyBody> {
    json_response(status, &json!({"error": message}))
}

/// `Host` of the request, for URLs in the listing that the client can reach as it reached us.
fn base_of(req: &hyper::Request<hyper::body::Incoming>, fallback: SocketAddr) -> String {
    let host = req
        .headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '[' | ']'))
        })
        .map_or_else(|| fallback.to_string(), str::to_owned);
    format!("http://{host}")
}

async fn handle(
    req: hyper::Request<hyper::body::Incoming>,
    peer: SocketAddr,
    state: Arc<State>,
    limits: ServerLimits,
    stop: tokio::sync::watch::Receiver<bool>,
) -> hyper::Response<AnyBody> {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let local = state.addr;
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["cases"] | ["cases", ""] if method == hyper::Method::GET => {
            let dialect = req.uri().query().and_then(|q| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("dialect="))
                    .and_then(DialectKind::from_name)
            });
            json_response(200, &state.listing(&base_of(&req, local), dialect))
        }
        ["cases", rec, variant, rest @ ..] => {
            let key = format!("{rec}/{variant}");
            let Some(&i) = state.by_key.get(&key) else {
                return error_json(
                    404,
                    &format!("no case {key} on this server (GET /cases lists them)"),
                );
            };
            if rest == ["verdict"] && method == hyper::Method::POST {
                return verdict(req, &state, i).await;
            }
            let listed = &state.cases[i];
            let r = &state.suite[listed.id.recording];
            if state.log {
                let p = sse_replay_core::text::visible(&path);
                sse_replay_core::log_line!("{method} {p} from {peer}: case {key}");
            }
            let wire = state.wires[i].get_or_init(|| {
                Arc::new(
                    r.wire(listed.id.variant, state.random_seed)
                        .unwrap_or_default(),
                )
            });
            let watch = state.served.get(i).cloned();
            let speed = (listed.id.variant == Variant::Recorded)
                .then_some(state.speed)
                .flatten();
            let plan = harness::run::wire_plan(wire, r.response_head(), speed);
            crate::serve::respond(req, peer, Arc::new(plan), false, limits, stop, watch).await
        }
        _ => error_json(
            404,
            "sse-replay suite: GET /cases lists the cases; each is served under /cases/<recording>/<variant>/",
        ),
    }
}

/// `POST …/verdict`: the body is the client's output (a JSON array or JSON lines of calls), or an
/// object `{"calls": […] | null, "error": "…", "exit": N}` (a client that failed: `error` or a
/// non-zero `exit`).
async fn verdict(
    req: hyper::Request<hyper::body::Incoming>,
    state: &State,
    i: usize,
) -> hyper::Response<AnyBody> {
    let body = match http_body_util::Limited::new(req.into_body(), MAX_VERDICT_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => return error_json(400, &format!("cannot read the request body: {e}")),
    };
    let (exit, got, error) = read_verdict_body(&body);
    json_response(200, &state.judge(i, &exit, got, &error).to_json())
}

/// A verdict request body as the judge's inputs: how the client ended, its calls, its error text.
fn read_verdict_body(body: &Bytes) -> (Exit, Result<Vec<CaseCall>, OutputError>, String) {
    if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(body)
        && !o.contains_key("name")
        && ["calls", "error", "exit"]
            .iter()
            .any(|k| o.contains_key(*k))
    {
        let error = o
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_default();
        let code = o
            .get("exit")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(if error.is_empty() { 0 } else { 1 });
        let calls = o.get("calls").cloned().unwrap_or(Value::Null);
        return (Exit::Code(code), parse_calls(&calls), error);
    }
    (
        Exit::Code(0),
        harness::judge::parse_output(body),
        String::new(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_path_segments() {
        assert_eq!(slug_of("openai-chat-weather"), "openai-chat-weather");
        assert_eq!(slug_of("/tmp/my rec/x y?.ron"), "x-y-");
        assert_eq!(slug_of(""), "recording");
    }

    #[test]
    fn verdict_bodies() {
        let (exit, got, err) =
            read_verdict_body(&Bytes::from_static(br#"[{"name":"f","arguments":"{}"}]"#));
        assert_eq!(exit, Exit::Code(0));
        assert_eq!(got.unwrap().len(), 1);
        assert!(err.is_empty());
        let (exit, got, err) = read_verdict_body(&Bytes::from_static(
            br#"{"calls": null, "error": "APIError: boom"}"#,
        ));
        assert_eq!(exit, Exit::Code(1));
        assert_eq!(got.unwrap(), vec![]);
        assert_eq!(err, "APIError: boom");
        let (_, got, _) = read_verdict_body(&Bytes::from_static(b"{\"name\":\"f\"}\n"));
        // A JSON line of one call reads as the client contract's JSON lines, not as an envelope.
        assert!(got.is_ok());
    }
}
