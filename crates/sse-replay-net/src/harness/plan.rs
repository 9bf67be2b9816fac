//! Which cases a run needs, which of them carry a signal, and which dialects the client speaks.
//!
//! - **Clean forms.** On a fault case (`cut`, `no-terminator`) or a broken recording (truncated,
//!   provider error, cumulative…) printing nothing or crashing is right, so a client that always
//!   does passes them. Such a pass counts only when the client passes the same recording's clean
//!   form in that variant: the recording itself in a framing variant for a fault, the clean twin
//!   (the clean recording of the same dialect with the same ground truth) for a broken one.
//!   Otherwise the case is [`CaseOutcome::NotJudged`], with the reason.
//! - **Dialects.** Without `--dialect`, a dialect on whose clean recordings the client prints no
//!   call (or exits non-zero) is not one it speaks: its cases are skipped and reported once
//!   ([`NotSpoken`]) instead of as dozens of failures. The probe runs each clean recording of the
//!   dialect in one variant and the first one in every variant; a single call printed with exit 0
//!   anywhere means the dialect is spoken and every case runs.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use sse_replay_core::dialect::{DialectKind, StreamApi};

use super::{CaseId, CaseOutcome, CaseResult, Config, SuiteRecording, Variant, variants};

/// What a case's pass stands on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CleanForm {
    /// A clean recording in a framing variant: its verdict stands on its own.
    Itself,
    /// A pass counts only when all of these cases pass.
    Cases(Vec<CaseId>),
    /// No clean form in the suite: a pass is not judged, for this reason.
    Missing(String),
}

/// The variant a recording's fault cases are compared with: `recorded` or `one-read` when the run
/// has them, else the first framing variant of the run that applies, else `recorded` (which
/// always does).
pub fn reference_variant(r: &SuiteRecording, run_variants: &[Variant]) -> Variant {
    let framing = || {
        run_variants
            .iter()
            .copied()
            .filter(|v| !v.is_fault() && variants::applies(*v, &r.base))
    };
    framing()
        .find(|v| matches!(v, Variant::Recorded | Variant::OneRead))
        .or_else(|| framing().next())
        .unwrap_or(Variant::Recorded)
}

/// The stream's warnings and errors: none means a plain stream, fit to stand in for a broken
/// recording that has no clean twin.
fn plain(r: &SuiteRecording) -> bool {
    r.clean
        && r.base
            .findings
            .iter()
            .all(|f| f.kind.severity() == sse_replay_core::findings::Severity::Info)
}

/// The clean form of case `id` (see the module documentation).
pub fn clean_form(suite: &[SuiteRecording], id: CaseId, run_variants: &[Variant]) -> CleanForm {
    let Some(r) = suite.get(id.recording) else {
        return CleanForm::Missing("the recording is not in the suite".into());
    };
    if r.clean && !id.variant.is_fault() {
        return CleanForm::Itself;
    }
    let in_variant = |ci: usize| {
        let c = &suite[ci];
        let variant = if !id.variant.is_fault() && variants::applies(id.variant, &c.base) {
            id.variant
        } else {
            reference_variant(c, run_variants)
        };
        CaseId {
            recording: ci,
            variant,
        }
    };
    if r.clean {
        return CleanForm::Cases(vec![in_variant(id.recording)]);
    }
    if let Some(t) = r.twin {
        return CleanForm::Cases(vec![in_variant(t)]);
    }
    let stand_ins: Vec<CaseId> = suite
        .iter()
        .enumerate()
        .filter(|(_, c)| r.same_api(c) && plain(c))
        .map(|(ci, _)| in_variant(ci))
        .collect();
    if stand_ins.is_empty() {
        CleanForm::Missing(format!(
            "no clean {} recording in the suite to show the client reads this dialect (add its clean twin to --recordings)",
            r.base.dialect.name()
        ))
    } else {
        CleanForm::Cases(stand_ins)
    }
}

/// Links each broken recording of the suite to its clean twin: a clean recording of the same
/// dialect in the same streaming API ([`SuiteRecording::same_api`]: an InvokeModel stream's twin
/// is an InvokeModel stream) with the same (non-empty) ground truth, the bundled twin by name
/// first.
pub fn link_twins(suite: &mut [SuiteRecording]) {
    let stem = |name: &str| {
        Path::new(name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let bundled = sse_replay_core::bundled::all();
    let twins: Vec<Option<usize>> = suite
        .iter()
        .map(|r| {
            if r.clean || r.recording.truth.is_empty() {
                return None;
            }
            let candidates: Vec<usize> = suite
                .iter()
                .enumerate()
                .filter(|(_, c)| c.clean && r.same_api(c) && c.recording.truth == r.recording.truth)
                .map(|(i, _)| i)
                .collect();
            let named = bundled
                .iter()
                .find(|b| b.file.strip_suffix(".ron") == Some(stem(&r.name).as_str()))
                .and_then(|b| b.clean_twin)
                .and_then(|twin| {
                    candidates
                        .iter()
                        .copied()
                        .find(|&i| format!("{}.ron", stem(&suite[i].name)) == twin)
                });
            named.or_else(|| candidates.first().copied())
        })
        .collect();
    for (r, t) in suite.iter_mut().zip(twins) {
        r.twin = t;
    }
}

/// The cases of `suite` for `config`: every recording of the chosen dialects (all when none) in
/// every variant that applies, plus the clean forms those cases need, in suite × variant order.
pub fn plan_cases(suite: &[SuiteRecording], config: &Config) -> Vec<CaseId> {
    let mut cases = Vec::new();
    for (ri, r) in suite.iter().enumerate() {
        if !config.dialects.is_empty() && !config.dialects.contains(&r.base.dialect) {
            continue;
        }
        for &v in &config.variants {
            if variants::applies(v, &r.base) {
                cases.push(CaseId {
                    recording: ri,
                    variant: v,
                });
            }
        }
    }
    let mut needed = Vec::new();
    for &id in &cases {
        if let CleanForm::Cases(ids) = clean_form(suite, id, &config.variants) {
            needed.extend(ids.into_iter().filter(|c| !cases.contains(c)));
        }
    }
    cases.extend(needed);
    cases.sort_by_key(|c| (c.recording, c.variant));
    cases.dedup();
    cases
}

/// The verdict of a case whose clean form is `form`, given its own `verdict` and the verdicts of
/// the cases it stands on (`lookup`): a pass without a passing clean form is not judged.
pub fn gate(
    verdict: CaseOutcome,
    id: CaseId,
    form: &CleanForm,
    suite: &[SuiteRecording],
    lookup: impl Fn(CaseId) -> Option<CaseOutcome>,
) -> CaseOutcome {
    if verdict != CaseOutcome::Pass {
        return verdict;
    }
    let what = if id.variant.is_fault() {
        format!("the `{}` fault", id.variant.name())
    } else {
        "this broken stream".to_owned()
    };
    let label = |c: CaseId| {
        let name = suite.get(c.recording).map_or("?", |r| r.name.as_str());
        format!("{name} × {}", c.variant.name())
    };
    match form {
        CleanForm::Itself => CaseOutcome::Pass,
        CleanForm::Missing(reason) => {
            CaseOutcome::NotJudged(format!("a pass on {what} carries no signal: {reason}"))
        }
        CleanForm::Cases(ids) => {
            for &c in ids {
                match lookup(c) {
                    Some(CaseOutcome::Pass) => {}
                    Some(v) => {
                        return CaseOutcome::NotJudged(format!(
                            "a pass on {what} carries no signal: the client does not pass its clean form, {} ({})",
                            label(c),
                            v.name()
                        ));
                    }
                    None => {
                        return CaseOutcome::NotJudged(format!(
                            "a pass on {what} carries no signal until its clean form, {}, passes (not judged yet)",
                            label(c)
                        ));
                    }
                }
            }
            CaseOutcome::Pass
        }
    }
}

/// Applies [`gate`] to every result of a finished run.
pub fn gate_results(
    results: &mut [CaseResult],
    suite: &[SuiteRecording],
    run_variants: &[Variant],
) {
    let verdicts: Vec<(CaseId, CaseOutcome)> =
        results.iter().map(|r| (r.id, r.outcome.clone())).collect();
    let lookup = |c: CaseId| {
        verdicts
            .iter()
            .find(|(id, _)| *id == c)
            .map(|(_, v)| v.clone())
    };
    for r in results.iter_mut() {
        let form = clean_form(suite, r.id, run_variants);
        r.outcome = gate(r.outcome.clone(), r.id, &form, suite, lookup);
    }
}

/// The dialects of the suite's recordings, in suite order (for a dialect picker).
pub fn dialects_of(suite: &[SuiteRecording]) -> Vec<DialectKind> {
    let mut v: Vec<DialectKind> = Vec::new();
    for r in suite {
        if !v.contains(&r.base.dialect) {
            v.push(r.base.dialect);
        }
    }
    v
}

/// A dialect the client does not speak, or one of a dialect's streaming APIs it does not ask
/// for: its cases were skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotSpoken {
    /// The dialect.
    pub dialect: DialectKind,
    /// Only this API of the dialect, with the one the client asked for instead: (the cases'
    /// API, the client's). `None`: the whole dialect.
    pub api: Option<(StreamApi, StreamApi)>,
    /// The dialect's cases left out (those run to find out included).
    pub skipped: usize,
    /// What the client did on one of them (`recording × variant: verdict detail`).
    pub example: String,
}

impl NotSpoken {
    /// The one line that reports it.
    pub fn line(&self) -> String {
        if let Some((api, asked)) = self.api {
            return format!(
                "{}: not spoken ({} skipped) — the client asked for {}: a case is served only to a client that asks for its API",
                api.label(),
                sse_replay_core::text::plural(self.skipped, "case"),
                asked.name
            );
        }
        format!(
            "{}: not spoken ({} skipped) — pass --dialect {} to include it",
            self.dialect.name(),
            sse_replay_core::text::plural(self.skipped, "case"),
            self.dialect.name()
        )
    }
}

/// A whole run: the results in case order, the dialects left out, and why it stopped early.
#[derive(Clone, Debug, Default)]
pub struct SuiteRun {
    /// The cases planned (before dialects were left out).
    pub planned: Vec<CaseId>,
    /// The results in case order, gated by clean forms.
    pub results: Vec<CaseResult>,
    /// Dialects left out, once each.
    pub not_spoken: Vec<NotSpoken>,
    /// The client could not be started (not found, not executable, exit 127/126 from a shell):
    /// the run stopped at once and no case was judged.
    pub start_failure: Option<String>,
}

impl SuiteRun {
    /// Why the run is a failure although no case failed: the client printed no call on any clean
    /// recording, so every dialect was left out and nothing was judged. `sse-replay test` exits 1
    /// with this line; the app shows it the same way (never a neutral "0 cases").
    pub fn speaks_none(&self) -> Option<String> {
        let first = self
            .not_spoken
            .first()
            .filter(|_| self.results.is_empty())?;
        if first.api.is_some() {
            return Some(format!(
                "the client asked for no streaming API the suite's cases are in; e.g. {}",
                first.line()
            ));
        }
        Some(format!(
            "the client printed no call on any clean recording: it speaks none of the suite's dialects (--dialect runs one anyway); e.g. {}",
            sse_replay_core::text::truncate(&first.example, 300)
        ))
    }
}

/// The cases a probe of `dialect` runs: each clean recording in one variant (`one-read` when the
/// run has it), and the first clean recording in every variant.
fn probe_cases(suite: &[SuiteRecording], planned: &[CaseId], dialect: DialectKind) -> Vec<CaseId> {
    let clean: Vec<CaseId> = planned
        .iter()
        .copied()
        .filter(|c| {
            let r = &suite[c.recording];
            r.base.dialect == dialect && r.clean && !c.variant.is_fault()
        })
        .collect();
    let mut probe = Vec::new();
    let mut recordings: Vec<usize> = clean.iter().map(|c| c.recording).collect();
    recordings.dedup();
    for (k, ri) in recordings.iter().enumerate() {
        let own: Vec<CaseId> = clean
            .iter()
            .copied()
            .filter(|c| c.recording == *ri)
            .collect();
        if k == 0 {
            probe.extend(own);
        } else if let Some(c) = own
            .iter()
            .find(|c| c.variant == Variant::OneRead)
            .or_else(|| own.first())
        {
            probe.push(*c);
        }
    }
    probe
}

/// Whether a result shows the client speaking the dialect: exit 0 with something printed, calls
/// or output that is not the contract's JSON (that is its own error, to be shown, not skipped).
fn spoke(r: &CaseResult) -> bool {
    r.served.asked_other_api().is_none()
        && matches!(r.exit, Some(super::Exit::Code(0)))
        && r.got.as_ref().is_none_or(|g| !g.is_empty())
}

/// Runs `config` on `suite`: plans the cases, finds the dialects the client speaks (unless
/// `config.dialects` names them), runs their cases on `config.jobs` threads and judges every pass
/// against its clean form. `progress(done, total, result)` is called from worker threads;
/// `cancel` stops handing out cases (running ones finish). A client that cannot be started stops
/// the run at once ([`SuiteRun::start_failure`]).
pub fn run_plan(
    suite: &[SuiteRecording],
    config: &Config,
    cancel: &AtomicBool,
    progress: &super::ProgressFn<'_>,
) -> SuiteRun {
    let planned = plan_cases(suite, config);
    let stop = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let total = AtomicUsize::new(planned.len());
    let report = |r: &CaseResult| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(n, total.load(Ordering::Relaxed).max(n), r);
    };
    let mut run = SuiteRun {
        planned: planned.clone(),
        ..SuiteRun::default()
    };
    let mut results: Vec<CaseResult> = Vec::new();
    let mut skip: Vec<DialectKind> = Vec::new();
    if config.dialects.is_empty() {
        let mut dialects: Vec<DialectKind> = Vec::new();
        for c in &planned {
            let d = suite[c.recording].base.dialect;
            if !dialects.contains(&d) {
                dialects.push(d);
            }
        }
        let probes: Vec<(DialectKind, Vec<CaseId>)> = dialects
            .iter()
            .map(|&d| (d, probe_cases(suite, &planned, d)))
            .collect();
        let all: Vec<CaseId> = probes.iter().flat_map(|(_, p)| p.iter().copied()).collect();
        let probed = super::run_cases(suite, &all, config, cancel, &stop, &report);
        if let Some(r) = probed.iter().find(|r| r.start_failed) {
            run.start_failure = Some(r.outcome.detail().to_owned());
            return run;
        }
        for (d, cases) in &probes {
            // A case in another API than the client asks for tells nothing about the dialect.
            let mine: Vec<&CaseResult> = probed
                .iter()
                .filter(|r| cases.contains(&r.id) && r.served.asked_other_api().is_none())
                .collect();
            // No clean recording of the dialect: nothing tells, so it runs.
            if !cases.is_empty() && !mine.is_empty() && !mine.iter().any(|r| spoke(r)) {
                skip.push(*d);
            }
        }
        for d in &skip {
            let skipped = planned
                .iter()
                .filter(|c| suite[c.recording].base.dialect == *d)
                .count();
            total.fetch_sub(
                skipped.min(total.load(Ordering::Relaxed)),
                Ordering::Relaxed,
            );
            let example = probed
                .iter()
                .find(|r| suite[r.id.recording].base.dialect == *d)
                .map(|r| {
                    let what = match (&r.outcome, &r.diagnosis) {
                        (CaseOutcome::Fail(_), Some(d)) => d.clone(),
                        (v, _) => v.detail().to_owned(),
                    };
                    format!("{} × {}: {what}", r.recording, r.id.variant.name())
                })
                .unwrap_or_default();
            run.not_spoken.push(NotSpoken {
                dialect: *d,
                api: None,
                skipped,
                example,
            });
        }
        results.extend(
            probed
                .into_iter()
                .filter(|r| !skip.contains(&suite[r.id.recording].base.dialect)),
        );
    }
    let rest: Vec<CaseId> = planned
        .iter()
        .copied()
        .filter(|c| !skip.contains(&suite[c.recording].base.dialect))
        .filter(|c| !results.iter().any(|r| r.id == *c))
        .collect();
    results.extend(super::run_cases(
        suite, &rest, config, cancel, &stop, &report,
    ));
    if let Some(r) = results.iter().find(|r| r.start_failed) {
        run.start_failure = Some(r.outcome.detail().to_owned());
        run.not_spoken.clear();
        return run;
    }
    run.not_spoken
        .extend(other_apis(suite, &mut results, &skip));
    results.sort_by_key(|r| (r.id.recording, r.id.variant));
    gate_results(&mut results, suite, &config.variants);
    run.results = results;
    run
}

/// Takes out of `results` the cases whose client asked for another streaming API of the
/// dialect than the case's (answered 404, never handed the stream: [`Served::asked_other_api`])
/// and reports them once per API, as a dialect the client does not speak (never a failure, nor
/// a pass). Dialects in `skip` are reported already.
///
/// [`Served::asked_other_api`]: crate::serve::Served::asked_other_api
fn other_apis(
    suite: &[SuiteRecording],
    results: &mut Vec<CaseResult>,
    skip: &[DialectKind],
) -> Vec<NotSpoken> {
    let mut out: Vec<NotSpoken> = Vec::new();
    results.retain(|r| {
        let Some(asked) = r.served.asked_other_api() else {
            return true;
        };
        let rec = &suite[r.id.recording];
        let Some(api) = rec.api() else {
            return true;
        };
        if !skip.contains(&rec.base.dialect) {
            match out
                .iter_mut()
                .find(|n| n.api.is_some_and(|(a, _)| a == api))
            {
                Some(n) => n.skipped += 1,
                None => out.push(NotSpoken {
                    dialect: rec.base.dialect,
                    api: Some((api, asked)),
                    skipped: 1,
                    example: format!(
                        "{} × {}: {}",
                        r.recording,
                        r.id.variant.name(),
                        r.outcome.detail()
                    ),
                }),
            }
        }
        false
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass on a broken or fault case stands on clean forms in its own streaming API only: an
    /// InvokeModel stream's on InvokeModel streams, the Messages API's on SSE ones (a client of
    /// one API is never served the other, so the other could never vouch for it).
    #[test]
    fn clean_forms_are_in_the_cases_own_api() {
        let (suite, _) = super::super::builtin_suite();
        let variants = [Variant::OneRead, Variant::Bytewise, Variant::Cut];
        let mut crossed = Vec::new();
        let mut invoke_gated = 0;
        for (ri, r) in suite.iter().enumerate() {
            for v in variants {
                let id = CaseId {
                    recording: ri,
                    variant: v,
                };
                if let CleanForm::Cases(ids) = clean_form(&suite, id, &variants) {
                    invoke_gated += usize::from(r.name.contains("invoke-model"));
                    for c in ids {
                        if !r.same_api(&suite[c.recording]) {
                            crossed.push(format!(
                                "{} × {}: {}",
                                r.name,
                                v.name(),
                                suite[c.recording].name
                            ));
                        }
                    }
                }
            }
        }
        assert!(crossed.is_empty(), "{crossed:#?}");
        assert!(
            invoke_gated >= 4,
            "InvokeModel's broken and fault cases have clean forms"
        );
        let twin = |name: &str| {
            let r = suite.iter().find(|r| r.name == name).expect("bundled");
            r.twin.map(|t| suite[t].name.as_str())
        };
        assert_eq!(
            twin("quirk-bedrock-invoke-model-truncated"),
            Some("bedrock-invoke-model-weather")
        );
        assert_ne!(
            twin("quirk-anthropic-truncated"),
            Some("bedrock-invoke-model-weather")
        );

        // A user's suite: a cut Messages stream whose only clean Anthropic recording is an
        // InvokeModel one has no clean form (that one can never be served to its client).
        let own = |file: &str, name: &str| {
            let (_, bytes) = super::super::BUILTIN
                .iter()
                .find(|(f, _)| *f == file)
                .expect("bundled");
            let rec = sse_replay_core::recording::Recording::from_bytes(bytes).expect("reads");
            SuiteRecording::new(name.into(), rec, None)
        };
        let mut mine = vec![
            own("quirk-anthropic-truncated.ron", "mine/cut.ron"),
            own("bedrock-invoke-model-weather.ron", "mine/invoke.ron"),
        ];
        link_twins(&mut mine);
        assert_eq!(mine[0].twin, None);
        let form = clean_form(
            &mine,
            CaseId {
                recording: 0,
                variant: Variant::OneRead,
            },
            &variants,
        );
        assert!(matches!(form, CleanForm::Missing(_)), "{form:?}");
    }

    /// A run that judged nothing because every dialect was left out fails with one line (the CLI's
    /// exit 1 and the app's "Test a client" both say it); a run with any result does not.
    #[test]
    fn a_run_that_speaks_no_dialect_says_so() {
        let mut run = SuiteRun {
            not_spoken: vec![NotSpoken {
                dialect: DialectKind::OpenAiChat,
                api: None,
                skipped: 3,
                example: "openai-chat-weather × one-read: fail printed no calls".into(),
            }],
            ..SuiteRun::default()
        };
        let why = run.speaks_none().unwrap_or_default();
        assert!(
            why.starts_with("the client printed no call on any clean recording"),
            "{why}"
        );
        assert!(why.contains("--dialect"), "{why}");
        assert!(why.ends_with("fail printed no calls"), "{why}");
        run.not_spoken.clear();
        assert_eq!(run.speaks_none(), None, "nothing was left out");
    }
}
