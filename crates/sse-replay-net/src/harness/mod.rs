//! The client-test harness (`sse-replay test -- CMD`): the seed's stub-driven method turned on the
//! user's own program. Every case is a recording × a variant of how its bytes go on the wire; each
//! case serves those bytes in-process on `127.0.0.1:0`, runs the client with the environment that
//! points common SDKs at it, and judges what it printed against what `export` gives for the same
//! bytes. A failure that matches one of the naive strategies is named.
//!
//! No clap, no exit codes, no drawing here: the `test` command is the command line, the app can
//! drive [`run_suite`] the same way.

pub mod case;
pub mod judge;
pub mod junit;
pub mod plan;
pub mod run;
pub mod variants;
pub mod vary;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::open::OpenError;
use sse_replay_core::pipeline::Options;
use sse_replay_core::recording::Recording;

pub use crate::serve::Served;
pub use case::{CaseContext, Judgement};
pub use judge::{CaseCall, CaseOutcome, Exit, Expected};
pub use plan::{CleanForm, NotSpoken, SuiteRun, plan_cases, run_plan};
pub use run::{ClientCommand, ClientRun, RunError};
pub use variants::{Variant, Wire};
pub use vary::Variation;

/// Every bundled recording (`recordings/*.ron`): (file name, bytes).
pub use sse_replay_core::bundled::BUILTIN;

/// A recording in the suite.
#[derive(Debug)]
pub struct SuiteRecording {
    /// File name without `.ron` (built-in) or the path as given.
    pub name: String,
    pub recording: Recording,
    /// The analysis of the recording as stored (dialect, framing, events for the fault variants).
    pub base: Analysis,
    /// The body in one read: tells whether a naive strategy's failure comes from the variant.
    pub one_read: Analysis,
    /// The stream is clean: every call parses and it ends well (exiting non-zero on it is wrong).
    pub clean: bool,
    /// For a broken recording: the clean recording of the suite with the same calls, its twin
    /// (set by [`plan::link_twins`]).
    pub twin: Option<usize>,
}

impl SuiteRecording {
    /// Analyses `recording` for the suite.
    pub fn new(name: String, recording: Recording, dialect: Option<DialectKind>) -> Self {
        let opts = Options {
            dialect,
            framing: None,
            detail: true,
        };
        let source = |timing_known| SourceInfo {
            name: name.clone(),
            kind: sse_replay_core::analysis::SourceKind::Recording,
            timing_known,
        };
        let base = Analysis::from_recording(&recording, source(true), opts);
        let one = Wire {
            writes: vec![(0, recording.body())],
            abort: false,
        }
        .to_recording(&recording);
        let one_read = Analysis::from_recording(&one, source(true), opts);
        let clean = !Expected::from_analysis(&base).failure_allowed();
        Self {
            name,
            recording,
            base,
            one_read,
            clean,
            twin: None,
        }
    }
}

impl SuiteRecording {
    /// The streaming API the recording belongs to when its dialect has several (the Messages
    /// API over SSE or InvokeModel; Gemini with or without `alt=sse`): a case is served only to
    /// a client that asks for it ([`sse_replay_core::dialect::DialectKind::apis`]).
    pub fn api(&self) -> Option<sse_replay_core::dialect::StreamApi> {
        self.base.dialect.api_of_framing(self.base.framing)
    }

    /// Whether `other` streams the same dialect in the same API: only such a recording can be
    /// the clean form a pass on this one stands on.
    pub fn same_api(&self, other: &SuiteRecording) -> bool {
        self.base.dialect == other.base.dialect && self.api() == other.api()
    }

    /// The response head a case serves: the recorded status (200 when none) and content type
    /// (`text/event-stream`, `application/x-ndjson` for JSON lines, `application/json` for a JSON
    /// array, or `application/vnd.amazon.eventstream` for binary AWS frames, when none was recorded).
    pub fn response_head(&self) -> (u16, String) {
        let response = self.recording.response.as_ref();
        let status = response.map_or(200, |h| h.status).clamp(200, 599);
        let content_type = response
            .and_then(|h| {
                h.headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            })
            .map_or_else(
                || self.base.framing.content_type().to_owned(),
                |(_, v)| v.clone(),
            );
        (status, content_type)
    }
}

/// A recording that could not be read.
#[derive(Debug)]
pub struct Unreadable {
    pub path: PathBuf,
    pub error: String,
}

/// The built-in suite: every bundled recording.
pub fn builtin_suite() -> (Vec<SuiteRecording>, Vec<Unreadable>) {
    let mut suite = Vec::new();
    let mut bad = Vec::new();
    for (file, bytes) in BUILTIN {
        let name = file.strip_suffix(".ron").unwrap_or(file).to_owned();
        match Recording::from_bytes(bytes) {
            Ok(rec) => suite.push(SuiteRecording::new(name, rec, None)),
            Err(e) => bad.push(Unreadable {
                path: PathBuf::from(format!("(built-in) recordings/{file}")),
                error: e.to_string(),
            }),
        }
    }
    plan::link_twins(&mut suite);
    (suite, bad)
}

/// File extensions taken from folders given to `--recordings` (a file named directly is always
/// taken): recordings and raw bodies.
pub const FOLDER_EXTENSIONS: [&str; 8] = [
    "ron", "sse", "txt", "jsonl", "ndjson", "body", "raw", "partial",
];

/// The recordings under `paths` (files, or folders searched recursively), in path order.
pub fn load_paths(paths: &[PathBuf]) -> (Vec<SuiteRecording>, Vec<Unreadable>) {
    let mut files = Vec::new();
    let mut bad = Vec::new();
    for p in paths {
        if p.is_dir() {
            collect_dir(p, &mut files, &mut bad);
        } else {
            files.push(p.clone());
        }
    }
    let mut suite = Vec::new();
    for f in files {
        let opened = sse_replay_core::probe::open(&f, Default::default())
            .map_err(OpenError::from)
            .and_then(|p| p.recording(|_, _| true));
        match opened {
            Ok((rec, _)) => suite.push(SuiteRecording::new(f.display().to_string(), rec, None)),
            Err(e) => bad.push(unreadable(&f, &e)),
        }
    }
    plan::link_twins(&mut suite);
    (suite, bad)
}

fn unreadable(path: &Path, e: &OpenError) -> Unreadable {
    Unreadable {
        path: path.to_path_buf(),
        error: e.to_string(),
    }
}

fn collect_dir(dir: &Path, files: &mut Vec<PathBuf>, bad: &mut Vec<Unreadable>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            bad.push(Unreadable {
                path: dir.to_path_buf(),
                error: format!("cannot read the folder: {e} in {}", dir.display()),
            });
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        // Do not follow symlinked folders (loops); symlinked files are fine.
        let is_link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        if p.is_dir() {
            if !is_link {
                collect_dir(&p, files, bad);
            }
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| FOLDER_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        {
            files.push(p);
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    pub command: ClientCommand,
    /// Variants in matrix order (framing and fault variants alike).
    pub variants: Vec<Variant>,
    /// Only recordings of these dialects (empty = all).
    pub dialects: Vec<DialectKind>,
    /// Parallel cases.
    pub jobs: usize,
    pub timeout: Duration,
    /// Speed of the `recorded` variant's timing (1 = as recorded).
    pub speed: f64,
    pub random_seed: u64,
}

/// One case to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CaseId {
    /// Index into the suite.
    pub recording: usize,
    pub variant: Variant,
}

/// The outcome of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub id: CaseId,
    pub recording: String,
    pub random_seed: Option<u64>,
    pub outcome: CaseOutcome,
    pub expected: Expected,
    /// What the client printed (`None` when it printed no parseable JSON or did not run).
    pub got: Option<Vec<CaseCall>>,
    pub diagnosis: Option<String>,
    /// The tail of its standard error, lossily decoded.
    pub stderr: String,
    pub exit: Option<Exit>,
    /// What the case's server saw of the client: its requests and how much of the stream it
    /// was handed (nothing when it did not run).
    pub served: Served,
    /// The bytes the case serves.
    pub wire_bytes: u64,
    /// The largest of its writes: one write is handed to the connection whole, read or not.
    pub largest_write: u64,
    /// The client's run time.
    pub client_time: Duration,
    /// The whole case (building the bytes, serving, judging), client included.
    pub case_time: Duration,
    /// The client could not be started (the run should end with "could not start").
    pub start_failed: bool,
}

impl SuiteRecording {
    /// The bytes case `variant` puts on the wire (`None`: the variant does not apply): the
    /// recording with its values varied for this case and run ([`vary`]), cut as the variant cuts.
    pub fn wire(&self, variant: Variant, random_seed: u64) -> Option<Wire> {
        self.case_wire(variant, random_seed).map(|(wire, _)| wire)
    }

    /// The recording case `variant` serves, its exact reads and varied values (to open it as
    /// the client saw it).
    pub fn case_recording(&self, variant: Variant, random_seed: u64) -> Option<Recording> {
        let (wire, variation) = self.case_wire(variant, random_seed)?;
        Some(wire.to_recording(&variation.recording))
    }

    /// [`SuiteRecording::wire`] with the variation it was cut from (whether its values changed).
    pub fn case_wire(&self, variant: Variant, random_seed: u64) -> Option<(Wire, Variation)> {
        if !variants::applies(variant, &self.base) {
            return None;
        }
        let variation = vary::vary(
            &self.recording,
            &self.base,
            vary::case_seed(random_seed, &self.name, variant),
        );
        let wire = variants::wire(variant, &variation.recording, &self.base, random_seed)?;
        Some((wire, variation))
    }
}

/// The most standard error shown per case in reports.
pub const STDERR_TAIL_CHARS: usize = 2000;

/// Exit codes a shell gives when it cannot start the command (126: found but not executable,
/// 127: not found): never a client's verdict.
pub const SHELL_CANNOT_START: [i32; 2] = [126, 127];

/// Runs one case.
pub fn run_case(recording: &SuiteRecording, id: CaseId, config: &Config) -> CaseResult {
    run_case_until(recording, id, config, &AtomicBool::new(false))
}

/// [`run_case`], its client (and everything it started) killed as soon as `cancel` is set.
pub fn run_case_until(
    recording: &SuiteRecording,
    id: CaseId,
    config: &Config,
    cancel: &AtomicBool,
) -> CaseResult {
    let started = Instant::now();
    let ctx = CaseContext::new(recording, id.variant, config.random_seed);
    let head = recording.response_head();
    let tools = recording.tool_names();
    let extra_env = [
        (
            "SSE_REPLAY_DIALECT",
            recording.base.dialect.name().to_owned(),
        ),
        ("SSE_REPLAY_RECORDING", recording.name.clone()),
        ("SSE_REPLAY_VARIANT", id.variant.name().to_owned()),
        (
            "SSE_REPLAY_TOOLS",
            serde_json::to_string(&tools).unwrap_or_default(),
        ),
    ];
    let speed = (id.variant == Variant::Recorded).then_some(config.speed);
    let random_seed = (id.variant == Variant::Random).then_some(config.random_seed);
    let base = |outcome, stderr: String, start_failed| CaseResult {
        id,
        recording: recording.name.clone(),
        random_seed,
        outcome,
        expected: ctx.expected.clone(),
        got: None,
        diagnosis: None,
        stderr,
        exit: None,
        served: Served::default(),
        wire_bytes: ctx.wire.writes.iter().map(|(_, b)| b.len() as u64).sum(),
        largest_write: ctx
            .wire
            .writes
            .iter()
            .map(|(_, b)| b.len() as u64)
            .max()
            .unwrap_or(0),
        client_time: Duration::ZERO,
        case_time: started.elapsed(),
        start_failed,
    };
    let run = match run::run_client_until(
        &config.command,
        &ctx.wire,
        head,
        speed,
        recording.api(),
        &extra_env,
        config.timeout,
        cancel,
    ) {
        Ok(run) => run,
        Err(e) => {
            let start_failed = matches!(e, RunError::Spawn { .. });
            return base(
                CaseOutcome::Error(e.to_string()),
                String::new(),
                start_failed,
            );
        }
    };
    let stderr = stderr_tail(&run.stderr);
    if let Exit::Code(code) = run.exit
        && SHELL_CANNOT_START.contains(&code)
    {
        let why = if code == 127 {
            "command not found"
        } else {
            "not executable"
        };
        let said = case::telling_line(&stderr)
            .map(|l| format!(": {}", sse_replay_core::text::truncate(l.trim(), 200)))
            .unwrap_or_default();
        return CaseResult {
            exit: Some(run.exit),
            ..base(
                CaseOutcome::Error(format!(
                    "cannot run {}: exit {code} ({why}){said}",
                    config.command.program
                )),
                stderr,
                true,
            )
        };
    }
    // A client that asked for another API of the dialect was never handed the stream: its
    // output says nothing about this case (the run reports such cases as not spoken).
    if let (Some(asked), Some(api)) = (run.served.asked_other_api(), recording.api()) {
        return CaseResult {
            exit: Some(run.exit),
            served: run.served,
            client_time: run.client_time,
            case_time: started.elapsed(),
            ..base(
                CaseOutcome::Error(format!(
                    "not spoken: the client asked for {}, this case streams {} (answered 404)",
                    asked.label(),
                    api.label()
                )),
                stderr,
                false,
            )
        };
    }
    let judged = ctx.judge(&run.exit, &run.stdout, &stderr, &run.served);
    CaseResult {
        got: judged.got,
        diagnosis: judged.diagnosis,
        exit: Some(run.exit),
        served: run.served,
        client_time: run.client_time,
        case_time: started.elapsed(),
        ..base(judged.outcome, stderr, false)
    }
}

impl SuiteRecording {
    /// The names of the tools the recording calls (client calls only), sorted: what a client
    /// must declare to be offered them.
    pub fn tool_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.base.client_calls().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// The last [`STDERR_TAIL_CHARS`] characters of `bytes`, lossily decoded.
fn stderr_tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let n = text.chars().count();
    if n <= STDERR_TAIL_CHARS {
        text.into_owned()
    } else {
        let skip = n - STDERR_TAIL_CHARS;
        format!("…{}", text.chars().skip(skip).collect::<String>())
    }
}

/// Progress: (cases done, cases total, the case just finished).
pub type ProgressFn<'a> = dyn Fn(usize, usize, &CaseResult) + Sync + 'a;

/// Runs exactly `cases` on `config.jobs` threads; results in case order. `cancel` stops handing
/// out new cases (running ones finish); so does a client that cannot be started (and sets
/// `stop`). `report` is called from the worker threads as cases finish.
pub(crate) fn run_cases(
    suite: &[SuiteRecording],
    cases: &[CaseId],
    config: &Config,
    cancel: &AtomicBool,
    stop: &AtomicBool,
    report: &(dyn Fn(&CaseResult) + Sync),
) -> Vec<CaseResult> {
    let next = AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<CaseResult>>> =
        std::sync::Mutex::new(vec![None; cases.len()]);
    let jobs = config.jobs.clamp(1, cases.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    if cancel.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(id) = cases.get(i) else {
                        break;
                    };
                    let Some(r) = suite.get(id.recording) else {
                        break;
                    };
                    let result = run_case_until(r, *id, config, cancel);
                    if result.start_failed {
                        stop.store(true, Ordering::Relaxed);
                    }
                    report(&result);
                    if let Ok(mut all) = results.lock()
                        && let Some(slot) = all.get_mut(i)
                    {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    // A worker that panicked leaves its slots empty; the others' results are kept.
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .flatten()
        .collect()
}

/// Runs every case on `config.jobs` threads; results in case order, not gated by clean forms
/// (see [`run_plan`] for a whole run). `cancel` stops handing out new cases (running ones
/// finish), as does a client that cannot be started. `progress` is called from the worker
/// threads as cases finish.
pub fn run_suite(
    suite: &[SuiteRecording],
    cases: &[CaseId],
    config: &Config,
    cancel: &AtomicBool,
    progress: &ProgressFn<'_>,
) -> Vec<CaseResult> {
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    run_cases(suite, cases, config, cancel, &stop, &|r| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(n, cases.len(), r);
    })
}

/// Counts per verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Cases run.
    pub cases: usize,
    /// Passed.
    pub pass: usize,
    /// Printed wrong calls.
    pub fail: usize,
    /// Crashed, timed out, printed no JSON, or exited non-zero on a clean stream.
    pub error: usize,
    /// Passes that carry no signal (see [`CaseOutcome::NotJudged`]), counted apart.
    pub not_judged: usize,
}

impl Summary {
    /// Counts `results`.
    pub fn of(results: &[CaseResult]) -> Self {
        let mut s = Self {
            cases: results.len(),
            ..Self::default()
        };
        for r in results {
            match r.outcome {
                CaseOutcome::Pass => s.pass += 1,
                CaseOutcome::Fail(_) => s.fail += 1,
                CaseOutcome::Error(_) => s.error += 1,
                CaseOutcome::NotJudged(_) => s.not_judged += 1,
            }
        }
        s
    }
}

/// One case as JSON (`--json`'s `cases` element).
pub fn case_json(result: &CaseResult) -> serde_json::Value {
    serde_json::json!({
        "recording": result.recording,
        "variant": result.id.variant.name(),
        "random_seed": result.random_seed,
        "verdict": result.outcome.name(),
        "detail": result.outcome.detail(),
        "expected": result.expected.to_json(),
        "got": result.got.as_ref().map(|g| g.iter().map(CaseCall::to_json).collect::<Vec<_>>()),
        "diagnosis": result.diagnosis,
        "stderr": result.stderr,
        "exit": match &result.exit {
            Some(Exit::Code(c)) => serde_json::json!({"code": c}),
            Some(Exit::Signal(s)) => serde_json::json!({"signal": s}),
            Some(Exit::TimedOut) => serde_json::json!("timeout"),
            Some(Exit::Stopped) => serde_json::json!("stopped"),
            None => serde_json::Value::Null,
        },
        "served": served_json(result),
        "client_ms": result.client_time.as_secs_f64() * 1e3,
        "case_ms": result.case_time.as_secs_f64() * 1e3,
    })
}

/// The most bytes the server can hand to a connection whose client reads none of them, beside
/// the writes in hand: hyper's write buffer (its default limit, 8 KiB + 100 × 4 KiB) and the
/// kernel's socket buffers at their largest (`tcp_wmem` and `tcp_rmem`'s maximum, read once from
/// `/proc`; Linux's defaults, 4 MiB and 6 MiB, where they cannot be read). The kernel grows a
/// loopback connection's buffers towards them whether the client reads or not: a client that
/// sent its request and never read was handed 2,510,386 bytes whole (`tcp_rmem` max 32 MiB),
/// the same body in 1-byte writes 65,073 bytes before it left (each tiny write costs the
/// buffers far more than its byte).
pub fn unread_buffered_bytes() -> u64 {
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let max = |file: &str, default: u64| {
            std::fs::read_to_string(file)
                .ok()
                .and_then(|t| t.split_whitespace().nth(2)?.parse::<u64>().ok())
                .unwrap_or(default)
        };
        let hyper_buffer = 8192 + 100 * 4096;
        hyper_buffer
            + max("/proc/sys/net/ipv4/tcp_wmem", 4 << 20)
            + max("/proc/sys/net/ipv4/tcp_rmem", 6 << 20)
    })
}

/// How many of a case's last bytes may have been sent without being read: the buffers between
/// server and client ([`unread_buffered_bytes`]) and two writes handed over whole (one in the
/// response body's channel, one taken from it).
pub fn unobserved_tail(result: &CaseResult) -> u64 {
    unread_buffered_bytes().saturating_add(result.largest_write.saturating_mul(2))
}

/// Whether handing a case's whole stream over shows that the client read it: only when the
/// body is larger than what the buffers can hold unread ([`unobserved_tail`]). Below that, a
/// client that sends its request and reads nothing is handed the whole body as well.
pub fn reading_observable(result: &CaseResult) -> bool {
    result.wire_bytes > unobserved_tail(result)
}

/// How much of the stream the client was served, in a few words: `did not request the stream`;
/// for a stream handed over to its end, `read to the end (N bytes; the last U may sit unread in
/// the buffers)` when the body is larger than the buffers can hold, else `sent whole (N bytes;
/// whether it was read is not observable: …)`; `left after X of N bytes were sent`; `was sent X
/// of N bytes when it ended`.
pub fn served_text(result: &CaseResult) -> String {
    let s = &result.served;
    let n = result.wire_bytes;
    let times = if s.requests > 1 {
        format!(", {} requests", s.requests)
    } else {
        String::new()
    };
    let bytes = sse_replay_core::text::plural(n, "byte");
    if s.requests == 0 {
        "did not request the stream".into()
    } else if s.whole > 0 && reading_observable(result) {
        format!(
            "read to the end ({bytes}{times}; the last {} may sit unread in the buffers)",
            unobserved_tail(result)
        )
    } else if s.whole > 0 {
        format!(
            "sent whole ({bytes}{times}; whether it was read is not observable: a body this size fits in the buffers between server and client)"
        )
    } else if s.left > 0 {
        format!("left after {} of {n} bytes were sent{times}", s.bytes)
    } else {
        format!("was sent {} of {n} bytes when it ended{times}", s.bytes)
    }
}

/// `--json`'s `served` of a case: `{"requests", "bytes", "of", "to_the_end", "left_early",
/// "reading_observable", "text"}`. `bytes` and `to_the_end` say what was handed to the
/// connection; `reading_observable` whether that tells the client read it
/// ([`reading_observable`]).
fn served_json(result: &CaseResult) -> serde_json::Value {
    let s = &result.served;
    serde_json::json!({
        "requests": s.requests,
        "bytes": s.bytes,
        "of": result.wire_bytes,
        "to_the_end": s.whole > 0,
        "left_early": s.whole == 0 && s.left > 0,
        "reading_observable": reading_observable(result),
        "text": served_text(result),
    })
}
