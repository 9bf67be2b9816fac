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
//!   its clean form in the same session (see [`harness::plan`]); until then it is `not-judged`.
//!   A case is judged once per session: the verdict shows the expected calls, so a second answer
//!   is judged `fail` ("answered twice"), never a pass.
//!
//! **Sessions.** Verdicts are kept per session, and the clean form a fault or broken case is gated
//! by is looked up in its own session only, so one test's passes never count for another's, and
//! two test runs on one server never mix. Each session's cases carry values of their own (ids and
//! argument values varied with the session's seed), so what one session's verdicts show is no
//! answer in another. A helper opens one session per test function:
//!
//! - `POST /sessions` (body empty or `{"name": "…"}`, a label for the log) opens one and answers
//!   `201 {"id", "url", "cases_url", "version", "schema_version"}`: `version` is the server's
//!   (the binary's) version, which a helper compares with its own.
//! - Every route above is also served under `/sessions/<id>/` (`GET /sessions/<id>/cases` lists the
//!   cases with base URLs in that session), and `DELETE /sessions/<id>` closes it.
//! - The session-less routes (`/cases/…`) are one default session, as before sessions existed.
//!
//! In-process ([`SuiteServer::start`], as wiremock's `MockServer::start()`): the same server on
//! `127.0.0.1:0`; [`SuiteServer::session`] opens a session (one per test that shares the server) to
//! iterate its [`SuiteSession::cases`] in a `cargo test`, each with [`SuiteCase::check`];
//! [`SuiteServer::cases`] are the default session's.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::harness::judge::{CaseCall, CaseOutcome, Exit, Expected, OutputError, OutputLimits};
use crate::harness::plan::{self, CleanForm};
use crate::harness::{self, CaseContext, CaseId, SuiteRecording, Variant};
use crate::{AnyBody, NetError, ServerHandle, ServerLimits};
use sse_replay_core::dialect::DialectKind;

/// Largest verdict request body read.
const MAX_VERDICT_BYTES: usize = 16 << 20;

/// Largest `POST /sessions` body read (a name).
const MAX_SESSION_BODY_BYTES: usize = 64 << 10;

/// Sessions open at once through `POST /sessions` (a client that never closes its sessions runs
/// into this bound, not out of memory).
const MAX_SESSIONS: usize = 4096;

/// The most calls a verdict body is read for, whatever the case (see [`State::verdict_limits`]).
const MAX_VERDICT_CALLS: usize = 100_000;

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
    /// Each listed case's wire, built once (its values varied for this server's seed).
    wires: Vec<std::sync::OnceLock<Arc<harness::Wire>>>,
    /// The session of the session-less routes and [`SuiteServer::cases`].
    default_session: Arc<Session>,
    /// Sessions opened by `POST /sessions` and [`SuiteServer::session`].
    sessions: Mutex<Sessions>,
    /// Part of every session id: an id from an earlier server on the same address is not one of
    /// this server's.
    nonce: u32,
}

/// One test's verdicts: what a fault or broken case's clean form is looked up in. Everything a
/// session keeps lives here, so one session never changes another's results.
#[derive(Debug, Default)]
struct Session {
    /// What the log calls it (empty: the default session).
    name: String,
    /// The seed its cases' values are varied with (and the `random` variant cut with): the
    /// server's for the default session, one of its own for every other. A verdict shows the
    /// expected values, so the values one session's verdicts show are never another's to print.
    seed: u64,
    /// The verdict judged per case: the first one stands (a case is judged once per session;
    /// a second answer is judged "answered twice" and replaces it).
    verdicts: Mutex<HashMap<CaseId, CaseOutcome>>,
    /// What each listed case's stream requests in this session were served (by index in
    /// `cases`): a verdict on a case whose stream this session never requested is not a pass.
    served: Vec<Arc<crate::serve::ServedLog>>,
}

impl Session {
    /// A session named `name` over `cases` listed cases, its values varied with `seed`.
    fn new(name: String, cases: usize, seed: u64) -> Self {
        Self {
            name,
            seed,
            verdicts: Mutex::default(),
            served: (0..cases).map(|_| Arc::default()).collect(),
        }
    }
}

/// The open sessions by id.
#[derive(Debug, Default)]
struct Sessions {
    open: HashMap<String, Arc<Session>>,
    /// Sessions opened so far (the ids' counter).
    opened: u64,
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
        let wires = cases.iter().map(|_| std::sync::OnceLock::new()).collect();
        let default_session = Arc::new(Session::new(String::new(), cases.len(), opts.random_seed));
        Self {
            wires,
            addr,
            suite: opts.suite,
            variants: opts.variants,
            random_seed: opts.random_seed,
            speed: opts.speed,
            log: opts.log,
            cases,
            by_key,
            default_session,
            sessions: Mutex::new(Sessions::default()),
            nonce: fastrand::u32(..),
        }
    }

    /// Opens a session named `name` (for the log): its id and its verdicts.
    fn open_session(&self, name: &str) -> (String, Arc<Session>) {
        let mut sessions = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sessions.opened += 1;
        let id = format!("{}-{:08x}", sessions.opened, self.nonce);
        let label = if name.is_empty() {
            id.clone()
        } else {
            name.to_owned()
        };
        let seed = session_seed(self.random_seed, sessions.opened);
        let session = Arc::new(Session::new(label, self.cases.len(), seed));
        sessions.open.insert(id.clone(), session.clone());
        (id, session)
    }

    /// The open session `id`.
    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .open
            .get(id)
            .cloned()
    }

    /// Closes session `id` (false: no such session).
    fn close_session(&self, id: &str) -> bool {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .open
            .remove(id)
            .is_some()
    }

    fn open_sessions(&self) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .open
            .len()
    }

    /// Every case as [`SuiteCase`]s served under `base` (the server's URL, or a session's) and
    /// judged in `session`.
    fn suite_cases(self: &Arc<Self>, base: &str, session: &Arc<Session>) -> Vec<SuiteCase> {
        self.cases
            .iter()
            .enumerate()
            .map(|(index, c)| {
                let r = &self.suite[c.id.recording];
                SuiteCase {
                    id: c.key.clone(),
                    recording: c.slug.clone(),
                    variant: c.id.variant,
                    dialect: r.base.dialect,
                    base_url: format!("{base}/cases/{}", c.key),
                    tools: r.tool_names().into_iter().map(str::to_owned).collect(),
                    expected: self.context(c.id, session.seed).map_or_else(
                        || Expected {
                            calls: Vec::new(),
                            problems: Vec::new(),
                        },
                        |ctx| ctx.expected,
                    ),
                    index,
                    session: session.clone(),
                    state: self.clone(),
                }
            })
            .collect()
    }

    /// What a verdict body for case `i` is read within: more calls than its recording holds, or
    /// a call longer than its longest, can only come from a broken client, so reading stops
    /// there — at twice the calls and 16 more (at most [`MAX_VERDICT_CALLS`]), and eight times the
    /// longest arguments and 64 KiB more (a client may print them escaped, indented, with fields
    /// of its own).
    fn verdict_limits(&self, i: usize) -> OutputLimits {
        let (calls, longest) = self
            .cases
            .get(i)
            .and_then(|c| self.suite.get(c.id.recording))
            .map_or((0, 0), |r| {
                r.base.client_calls().fold((0usize, 0usize), |(n, l), c| {
                    (n + 1, l.max(c.raw_arguments.len()))
                })
            });
        OutputLimits {
            calls: calls
                .saturating_mul(2)
                .saturating_add(16)
                .min(MAX_VERDICT_CALLS),
            call_bytes: longest.saturating_mul(8).saturating_add(64 << 10),
        }
    }

    /// Case `id` as served with `seed` (a session's, [`Session::seed`]).
    fn context(&self, id: CaseId, seed: u64) -> Option<CaseContext<'_>> {
        let r = self.suite.get(id.recording)?;
        Some(CaseContext::new(r, id.variant, seed))
    }

    /// The bytes case `i` serves in `session`: the default session's are built once per server,
    /// every other session's on each request (a session asks for each case about once, and
    /// keeping them would hold every case's bytes per open session).
    fn wire(&self, session: &Arc<Session>, i: usize) -> Arc<harness::Wire> {
        let Some(listed) = self.cases.get(i) else {
            return Arc::default();
        };
        let build = || {
            self.suite
                .get(listed.id.recording)
                .and_then(|r| r.wire(listed.id.variant, session.seed))
                .unwrap_or_default()
        };
        if Arc::ptr_eq(session, &self.default_session) {
            self.wires.get(i).map_or_else(
                || Arc::new(build()),
                |w| w.get_or_init(|| Arc::new(build())).clone(),
            )
        } else {
            Arc::new(build())
        }
    }

    fn label(&self, id: CaseId) -> String {
        self.cases
            .iter()
            .find(|c| c.id == id)
            .map_or_else(|| "?".into(), |c| c.key.clone())
    }

    /// Judges case `i` on what the client did, gates a pass by its clean form's verdict in
    /// `session`, and remembers it there.
    fn judge(
        &self,
        session: &Session,
        i: usize,
        exit: &Exit,
        got: Result<Vec<CaseCall>, OutputError>,
        error: &str,
    ) -> CaseReport {
        let listed = &self.cases[i];
        let Some(ctx) = self.context(listed.id, session.seed) else {
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
        let served = session
            .served
            .get(i)
            .map(|w| w.snapshot())
            .unwrap_or_default();
        let judged = match (
            served.asked_other_api(),
            self.suite[listed.id.recording].api(),
        ) {
            // Never handed the stream: the client speaks another API of the dialect, which is
            // no verdict on this case (the helpers skip a case that is not judged).
            (Some(asked), Some(api)) => harness::Judgement {
                outcome: CaseOutcome::NotJudged(format!(
                    "not spoken: the client asked for {}, this case streams {}; a case is served only to a client that asks for its API",
                    asked.label(),
                    api.label()
                )),
                diagnosis: None,
                got: None,
            },
            _ => ctx.judge_parsed(exit, got, error, &served),
        };
        // Looked up and recorded under one lock: of two answers at once, one is the second.
        let (verdict, twice) = {
            let mut verdicts = session
                .verdicts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let twice = verdicts.contains_key(&listed.id);
            let verdict = match verdicts.get(&listed.id) {
                // The first verdict showed the expected calls: an answer after it proves
                // nothing, whatever it holds.
                Some(first) => answered_twice(first),
                None => {
                    let gated =
                        plan::gate(judged.outcome, listed.id, &listed.form, &self.suite, |c| {
                            verdicts.get(&c).cloned()
                        });
                    // The clean form's own label is the server's key (`recording/variant`).
                    match gated {
                        CaseOutcome::NotJudged(reason) => {
                            CaseOutcome::NotJudged(self.rename(&reason))
                        }
                        v => v,
                    }
                }
            };
            verdicts.insert(listed.id, verdict.clone());
            (verdict, twice)
        };
        if self.log {
            let session = if session.name.is_empty() {
                String::new()
            } else {
                format!(
                    " (session {})",
                    sse_replay_core::text::visible(&session.name)
                )
            };
            sse_replay_core::log_line!("verdict {}{session}: {}", listed.key, verdict.name());
        }
        // What the second answer behaves like is beside the point.
        let diagnosis = if twice { None } else { judged.diagnosis };
        CaseReport {
            case: listed.key.clone(),
            outcome: verdict,
            diagnosis,
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

    fn case_json(&self, listed: &Listed, base: &str, seed: u64) -> Value {
        let r = &self.suite[listed.id.recording];
        let ctx = self.context(listed.id, seed);
        let base_url = format!("{base}/cases/{}", listed.key);
        json!({
            "id": listed.key,
            "recording": listed.slug,
            "variant": listed.id.variant.name(),
            "base_url": base_url,
            "verdict_url": format!("{base_url}/verdict"),
            "dialect": r.base.dialect.name(),
            // The streaming API when the dialect has several (`InvokeModel`): a request for
            // another one is answered 404 and the case is not judged.
            "api": r.api().map(|a| a.name),
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
            "random_seed": (listed.id.variant == Variant::Random).then_some(seed),
        })
    }

    /// The listing (`GET /cases`) of `session`'s cases, only `dialect`'s when given; the seed
    /// shown is the session's ([`Session::seed`]: `sse-replay test --random-seed` with it serves
    /// the same bytes).
    fn listing(&self, base: &str, dialect: Option<DialectKind>, session: &Session) -> Value {
        let cases: Vec<Value> = self
            .cases
            .iter()
            .filter(|c| dialect.is_none_or(|d| self.suite[c.id.recording].base.dialect == d))
            .map(|c| self.case_json(c, base, session.seed))
            .collect();
        json!({
            "schema_version": 1,
            "random_seed": session.seed,
            "variants": self.variants.iter().map(|v| v.name()).collect::<Vec<_>>(),
            "cases": cases,
        })
    }
}

/// The verdict on a second answer to a case `first` was judged on: never a pass.
fn answered_twice(first: &CaseOutcome) -> CaseOutcome {
    CaseOutcome::Fail(format!(
        "answered twice: this session judged the case already ({}), and that verdict showed the expected calls; a case is judged once per session (POST /sessions opens a new one)",
        first.name()
    ))
}

/// Session number `opened`'s seed: the server's mixed with it (splitmix64's finaliser), kept
/// below 10⁹ as the server's own seeds are. The same server seed gives the same sessions the
/// same seeds, so a run is reproduced by its seed as before sessions had their own.
fn session_seed(server: u64, opened: u64) -> u64 {
    let mut z = server ^ opened.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % 1_000_000_000
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
///
/// In a `cargo test` (this is the snippet in the user guide's `docs/ci.md`; `my_client` is the
/// code under test, returning the calls it assembled in the client contract's JSON):
///
/// ```no_run
/// # use sse_replay_core::dialect::DialectKind;
/// # use sse_replay_net::suite::{SuiteOptions, SuiteServer};
/// # async fn my_client(base_url: &str) -> Result<serde_json::Value, std::io::Error> {
/// #     Err(std::io::Error::other(base_url.to_owned()))
/// # }
/// # async fn a_test() -> Result<(), Box<dyn std::error::Error>> {
/// let suite = SuiteServer::start(SuiteOptions::builtin().dialect(DialectKind::OpenAiChat).with_faults())?;
/// let session = suite.session();                    // this test's own verdicts
/// for case in session.cases() {
///     let outcome = match my_client(&case.base_url).await {
///         Ok(calls) => case.check(&calls),          // calls: serde_json::Value, the contract's array
///         Err(e) => case.check_failed(&serde_json::Value::Null, &e.to_string()),
///     };
///     assert!(!outcome.is_failure(), "{}", outcome.message());
/// }
/// # Ok(())
/// # }
/// ```
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
    /// Where its verdicts are kept.
    session: Arc<Session>,
    state: Arc<State>,
}

/// A session of a running [`SuiteServer`]: its cases are judged against each other only, so a
/// test that opens its own session is never credited with another test's passes.
#[derive(Clone, Debug)]
pub struct SuiteSession {
    /// The session's id (its URL is `<server>/sessions/<id>`).
    pub id: String,
    /// `http://ADDR/sessions/<id>`: the session's routes (`/cases`, each case's base URL).
    pub url: String,
    session: Arc<Session>,
    state: Arc<State>,
}

impl SuiteSession {
    /// Every case in this session, clean ones first.
    pub fn cases(&self) -> Vec<SuiteCase> {
        self.state.suite_cases(&self.url, &self.session)
    }
}

impl SuiteCase {
    /// Judges the calls the client assembled (`calls`: the client contract's JSON array of
    /// `{"name", "arguments", "id"}`) as `sse-replay test` would judge a client that printed
    /// them and exited 0.
    pub fn check(&self, calls: &Value) -> CaseReport {
        self.state.judge(
            &self.session,
            self.index,
            &Exit::Code(0),
            parse_calls(calls),
            "",
        )
    }

    /// Judges a client that failed with `error` (an exception, a non-zero exit) after
    /// assembling `calls` (often none).
    pub fn check_failed(&self, calls: &Value, error: &str) -> CaseReport {
        self.state.judge(
            &self.session,
            self.index,
            &Exit::Code(1),
            parse_calls(calls),
            error,
        )
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

    /// Every case in the default session (the session-less routes'), clean ones first. Tests
    /// that share one server open a [`SuiteServer::session`] each instead.
    pub fn cases(&self) -> Vec<SuiteCase> {
        self.state
            .suite_cases(&self.url(), &self.state.default_session)
    }

    /// Opens a session: its cases' verdicts are gated by clean forms judged in it only (one per
    /// test function, so that one test's passes never count for another's).
    pub fn session(&self) -> SuiteSession {
        let (id, session) = self.state.open_session("");
        SuiteSession {
            url: format!("{}/sessions/{id}", self.url()),
            id,
            session,
            state: self.state.clone(),
        }
    }

    /// The listing `GET /cases` answers with (the default session's).
    pub fn listing(&self) -> Value {
        self.state
            .listing(&self.url(), None, &self.state.default_session)
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
    let all: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // `/sessions/<id>/…` is every route in that session; without the prefix, the default session.
    let (session, prefix, segments) = match all.as_slice() {
        ["sessions"] | ["sessions", ""] if method == hyper::Method::POST => {
            let base = base_of(&req, local);
            return open_session(req, &state, &base).await;
        }
        ["sessions", id] | ["sessions", id, ""] if method == hyper::Method::DELETE => {
            return if state.close_session(id) {
                json_response(200, &json!({"closed": id}))
            } else {
                error_json(404, &format!("no session {id} on this server"))
            };
        }
        ["sessions", id, rest @ ..] => {
            let Some(session) = state.session(id) else {
                return error_json(
                    404,
                    &format!("no session {id} on this server (POST /sessions opens one)"),
                );
            };
            (session, format!("/sessions/{id}"), rest)
        }
        rest => (state.default_session.clone(), String::new(), rest),
    };
    match segments {
        ["cases"] | ["cases", ""] if method == hyper::Method::GET => {
            let dialect = req.uri().query().and_then(|q| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("dialect="))
                    .and_then(DialectKind::from_name)
            });
            let base = format!("{}{prefix}", base_of(&req, local));
            json_response(200, &state.listing(&base, dialect, &session))
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
                return verdict(req, &state, &session, i).await;
            }
            let listed = &state.cases[i];
            let r = &state.suite[listed.id.recording];
            if state.log {
                let shown = sse_replay_core::redact::redact_url(&path);
                let p = sse_replay_core::text::visible(&shown);
                sse_replay_core::log_line!("{method} {p} from {peer}: case {key}");
            }
            let wire = state.wire(&session, i);
            let watch = session.served.get(i).cloned();
            let speed = (listed.id.variant == Variant::Recorded)
                .then_some(state.speed)
                .flatten();
            let plan = crate::serve::Plan {
                api: r.api(),
                ..harness::run::wire_plan(&wire, r.response_head(), speed)
            };
            crate::serve::respond(req, peer, Arc::new(plan), false, limits, stop, watch).await
        }
        _ => error_json(
            404,
            "sse-replay suite: GET /cases lists the cases; each is served under /cases/<recording>/<variant>/; POST /sessions opens a session",
        ),
    }
}

/// `POST …/verdict`: the body is the client's output (a JSON array or JSON lines of calls), or an
/// object `{"calls": […] | null, "error": "…", "exit": N}` (a client that failed: `error` or a
/// non-zero `exit`).
async fn verdict(
    req: hyper::Request<hyper::body::Incoming>,
    state: &State,
    session: &Session,
    i: usize,
) -> hyper::Response<AnyBody> {
    let body = match http_body_util::Limited::new(req.into_body(), MAX_VERDICT_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => return error_json(400, &format!("cannot read the request body: {e}")),
    };
    let (exit, got, error) = read_verdict_body(&body, state.verdict_limits(i));
    json_response(200, &state.judge(session, i, &exit, got, &error).to_json())
}

/// `POST /sessions`: opens a session named by the body's `name` (optional) and answers with its
/// id, URLs and the server's version.
async fn open_session(
    req: hyper::Request<hyper::body::Incoming>,
    state: &State,
    base: &str,
) -> hyper::Response<AnyBody> {
    let body = match http_body_util::Limited::new(req.into_body(), MAX_SESSION_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => return error_json(400, &format!("cannot read the request body: {e}")),
    };
    let name = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    if state.open_sessions() >= MAX_SESSIONS {
        return error_json(
            503,
            &format!(
                "{MAX_SESSIONS} sessions are open on this server: DELETE /sessions/<id> closes one"
            ),
        );
    }
    let (id, _) = state.open_session(&name);
    let url = format!("{base}/sessions/{id}");
    json_response(
        201,
        &json!({
            "id": id,
            "cases_url": format!("{url}/cases"),
            "url": url,
            "version": env!("CARGO_PKG_VERSION"),
            "schema_version": 1,
        }),
    )
}

/// A verdict request body as the judge's inputs: how the client ended, its calls, its error text.
/// Read without a tree of the whole body: the envelope's keys are looked up without building its
/// other values ([`Envelope`]), and the calls are read one at a time within `limits`
/// ([`harness::judge::parse_output_limited`]).
fn read_verdict_body(
    body: &Bytes,
    limits: OutputLimits,
) -> (Exit, Result<Vec<CaseCall>, OutputError>, String) {
    if let Ok(o) = serde_json::from_slice::<Envelope<'_>>(body)
        && !o.name
        && (o.calls.is_some() || o.error.is_some() || o.exit.is_some())
    {
        // Only a string is an error text, only an integer an exit code.
        let error = o
            .error
            .and_then(|r| serde_json::from_str::<String>(r.get()).ok())
            .unwrap_or_default();
        let code = o
            .exit
            .and_then(|r| serde_json::from_str::<i64>(r.get()).ok())
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(if error.is_empty() { 0 } else { 1 });
        return (Exit::Code(code), envelope_calls(o.calls, limits), error);
    }
    (
        Exit::Code(0),
        harness::judge::parse_output_limited(body, limits),
        String::new(),
    )
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

/// A verdict envelope's `calls`, as [`parse_calls`] reads a value: absent or `null` is no calls,
/// an array is read call by call from its text.
fn envelope_calls(
    calls: Option<&RawValue>,
    limits: OutputLimits,
) -> Result<Vec<CaseCall>, OutputError> {
    match calls.map(RawValue::get) {
        None | Some("null") => Ok(Vec::new()),
        Some(text) if text.starts_with('[') => {
            harness::judge::parse_output_limited(text.as_bytes(), limits)
        }
        Some(_) => Err(OutputError::NotJson("not an array of calls".into())),
    }
}

/// A verdict body's top-level object, its other values skipped unbuilt: whether it has a `name`
/// (then it is a call printed as a JSON line, not an envelope), and the text of `calls`, `error`
/// and `exit` (the last of each, as a JSON object reader keeps).
#[derive(Default)]
struct Envelope<'a> {
    name: bool,
    calls: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    exit: Option<&'a RawValue>,
}

impl<'de> serde::Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Envelope<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut e = Envelope::default();
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "calls" => &mut e.calls,
                        "error" => &mut e.error,
                        "exit" => &mut e.exit,
                        other => {
                            e.name |= other == "name";
                            map.next_value::<serde::de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value::<&'de RawValue>()?);
                }
                Ok(e)
            }
        }
        d.deserialize_map(V)
    }
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
        let (exit, got, err) = read_verdict_body(
            &Bytes::from_static(br#"[{"name":"f","arguments":"{}"}]"#),
            OutputLimits::NONE,
        );
        assert_eq!(exit, Exit::Code(0));
        assert_eq!(got.unwrap().len(), 1);
        assert!(err.is_empty());
        let (exit, got, err) = read_verdict_body(
            &Bytes::from_static(br#"{"calls": null, "error": "APIError: boom"}"#),
            OutputLimits::NONE,
        );
        assert_eq!(exit, Exit::Code(1));
        assert_eq!(got.unwrap(), vec![]);
        assert_eq!(err, "APIError: boom");
        let (_, got, _) = read_verdict_body(
            &Bytes::from_static(b"{\"name\":\"f\"}\n"),
            OutputLimits::NONE,
        );
        // A JSON line of one call reads as the client contract's JSON lines, not as an envelope.
        assert!(got.is_ok());
    }

    /// A verdict body is read call by call within its limits, in every form (an array, JSON
    /// lines, an envelope's `calls`); the envelope's other values are skipped.
    #[test]
    fn verdict_bodies_are_read_call_by_call_and_bounded() {
        let limits = OutputLimits {
            calls: 50,
            call_bytes: 64,
        };
        let read = |body: String| read_verdict_body(&Bytes::from(body), limits);
        let call = r#"{"name":"f","arguments":{"a":1}}"#;
        let array = |n: usize| format!("[{}]", vec![call; n].join(","));
        let lines = |n: usize| format!("{call}\n").repeat(n);
        let envelope = |n: usize| format!(r#"{{"exit":3,"junk":[[[{{}}]]],"calls":{}}}"#, array(n));
        for (form, body) in [
            ("array", &array as &dyn Fn(usize) -> String),
            ("lines", &lines),
            ("envelope", &envelope),
        ] {
            let (_, got, _) = read(body(50));
            assert_eq!(got.map(|c| c.len()), Ok(50), "{form}");
            let (_, got, _) = read(body(51));
            assert_eq!(
                got,
                Err(OutputError::NotJson("more than 50 calls".into())),
                "{form}"
            );
        }
        let long = format!(
            r#"[{call},{{"name":"f","arguments":"{}"}}]"#,
            "x".repeat(64)
        );
        let (_, got, _) = read(long);
        assert_eq!(
            got,
            Err(OutputError::NotJson(
                "call 1 is longer than 64 bytes".into()
            ))
        );
        let (exit, got, err) = read(envelope(2));
        assert_eq!(
            (exit, got.map(|c| c.len()), err),
            (Exit::Code(3), Ok(2), String::new())
        );
        // What a value would have said: a float is no exit code, a number no error text, a
        // string no array of calls, a non-call its index, broken JSON not JSON.
        let (exit, got, err) = read(r#"{"exit":2.0,"error":5,"calls":"x"}"#.into());
        assert_eq!(exit, Exit::Code(0));
        assert!(err.is_empty());
        assert_eq!(
            got,
            Err(OutputError::NotJson("not an array of calls".into()))
        );
        let (_, got, _) = read(r#"{"calls":[{"name":"f"},7,{"x":1}]}"#.into());
        assert_eq!(got, Err(OutputError::NotACall(1)));
        let (_, got, _) = read(r#"[{"name":"f"},7,{"#.into());
        assert!(matches!(got, Err(OutputError::NotJson(_))), "{got:?}");
    }

    /// A case's verdict body is read within what its recording could give: a few more calls than
    /// it holds, calls a few times longer than its longest.
    #[test]
    fn the_verdict_limits_follow_the_case() {
        let opts = SuiteOptions::builtin();
        let addr = opts.addr;
        let state = State::new(opts, addr);
        for (i, case) in state.cases.iter().enumerate() {
            let r = &state.suite[case.id.recording];
            let limits = state.verdict_limits(i);
            assert_eq!(limits.calls, 2 * r.base.client_calls().count() + 16);
            let longest = r.base.client_calls().map(|c| c.raw_arguments.len()).max();
            assert_eq!(limits.call_bytes, 8 * longest.unwrap_or(0) + (64 << 10));
            assert!(limits.call_bytes < 16 << 20, "{}", case.key);
        }
        assert_eq!(state.verdict_limits(usize::MAX).calls, 16);
    }
}
