//! The "Test a client" tab: `sse-replay test` in the app. A command line, the suite (built-in or
//! paths), the variants; Run starts [`sse_replay_net::harness::run_suite`] on a background thread with
//! progress and Cancel; the matrix shows each case, and clicking a cell opens that recording in that
//! variant (the exact reads the client received) in Replay.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use egui::{RichText, Ui};

use super::view::{Action, ActionQueue};
use sse_replay_core::recording::Recording;
use sse_replay_net::harness::{
    self, CaseCall, CaseId, CaseOutcome, CaseResult, Config, SuiteRecording, Variant,
};

/// The "Test a client" form: what to run against which recordings. Persisted in the settings; the
/// run is a [`ClientTestRun`], owned by the app at runtime and never persisted.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ClientTestForm {
    /// The client's command line, run with `sh -c`.
    pub command: String,
    /// Recording files or folders, one per line; empty = the built-in suite.
    pub recordings: String,
    /// Variant names that are ticked.
    pub variants: Vec<String>,
    pub timeout_secs: f64,
}

/// The "Test a client" runtime: the run in progress (its thread and channels) and the last
/// finished one. Owned by the app, never persisted.
#[derive(Default)]
pub struct ClientTestRun {
    run: Option<Run>,
    /// The last finished (or cancelled) run.
    pub last: Option<Finished>,
    pub error: Option<String>,
}

impl std::fmt::Debug for ClientTestRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTestRun")
            .field("running", &self.run.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ClientTestForm {
    fn default() -> Self {
        Self {
            command: String::new(),
            recordings: String::new(),
            variants: Variant::FRAMING.map(|v| v.name().to_owned()).to_vec(),
            timeout_secs: 30.0,
        }
    }
}

/// What a run works on, shared with its thread.
pub struct Work {
    pub suite: Vec<SuiteRecording>,
    pub cases: Vec<CaseId>,
    pub random_seed: u64,
    pub variants: Vec<Variant>,
    pub unreadable: Vec<String>,
}

/// A finished run: its work (to open a case) and the results in case order.
pub struct Finished {
    pub work: Arc<Work>,
    pub results: Vec<CaseResult>,
    pub cancelled: bool,
}

struct Run {
    work: Arc<Work>,
    cancel: Arc<AtomicBool>,
    progress: mpsc::Receiver<(usize, usize)>,
    done: mpsc::Receiver<Vec<CaseResult>>,
    shown: (usize, usize),
}

impl ClientTestRun {
    /// A run is in progress.
    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    /// Starts a run (loading the suite happens here, it is small; the cases run on a thread).
    pub fn start(&mut self, form: &ClientTestForm, ctx: &egui::Context) {
        self.error = None;
        let command = form.command.trim().to_owned();
        if command.is_empty() {
            self.error = Some("Enter the command that runs your client".into());
            return;
        }
        let paths: Vec<PathBuf> = form
            .recordings
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect();
        let (suite, bad) = if paths.is_empty() {
            harness::builtin_suite()
        } else {
            harness::load_paths(&paths)
        };
        let variants: Vec<Variant> = Variant::FRAMING
            .into_iter()
            .chain(Variant::FAULTS)
            .filter(|v| form.variants.iter().any(|n| n == v.name()))
            .collect();
        let config = Config {
            command: harness::ClientCommand {
                program: "sh".into(),
                args: vec!["-c".into(), command],
            },
            variants: variants.clone(),
            dialects: Vec::new(),
            jobs: std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            timeout: Duration::from_secs_f64(form.timeout_secs.clamp(0.1, 86_400.0)),
            speed: 1.0,
            random_seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_000),
        };
        let cases = harness::plan_cases(&suite, &config);
        let work = Arc::new(Work {
            suite,
            cases,
            random_seed: config.random_seed,
            variants,
            unreadable: bad.iter().map(|u| u.error.clone()).collect(),
        });
        let cancel = Arc::new(AtomicBool::new(false));
        let (progress_tx, progress) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let thread_work = work.clone();
        let thread_cancel = cancel.clone();
        let repaint = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("sse-replay-client-test".into())
            .spawn(move || {
                let progress = |n: usize, total: usize, _: &CaseResult| {
                    progress_tx.send((n, total)).ok();
                    repaint.request_repaint();
                };
                let results = harness::run_suite(
                    &thread_work.suite,
                    &thread_work.cases,
                    &config,
                    &thread_cancel,
                    &progress,
                );
                done_tx.send(results).ok();
                repaint.request_repaint();
            });
        if let Err(e) = spawned {
            self.error = Some(format!("cannot start the run: {e}"));
            return;
        }
        let total = work.cases.len();
        self.run = Some(Run {
            work,
            cancel,
            progress,
            done,
            shown: (0, total),
        });
    }

    /// Asks the run to stop after the cases in progress.
    pub fn cancel(&self) {
        if let Some(r) = &self.run {
            r.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Takes progress and the result from the run thread. Call every frame.
    pub fn poll(&mut self, ctx: &egui::Context) {
        let Some(run) = self.run.as_mut() else { return };
        while let Ok(p) = run.progress.try_recv() {
            run.shown = p;
        }
        match run.done.try_recv() {
            Ok(results) => {
                let cancelled = run.cancel.load(Ordering::Relaxed);
                let work = run.work.clone();
                self.run = None;
                self.last = Some(Finished {
                    work,
                    results,
                    cancelled,
                });
            }
            Err(mpsc::TryRecvError::Empty) => ctx.request_repaint_after(Duration::from_millis(100)),
            Err(mpsc::TryRecvError::Disconnected) => {
                self.run = None;
                self.error = Some("the run stopped unexpectedly".into());
            }
        }
    }

    /// The recording as case `i` of the last run served it (its exact reads), to open in Replay.
    pub fn case_recording(&self, i: usize) -> Option<(String, Recording)> {
        let last = self.last.as_ref()?;
        let r = last.results.get(i)?;
        let rec = last.work.suite.get(r.id.recording)?;
        let wire = rec.wire(r.id.variant, last.work.random_seed)?;
        Some((
            format!("{} × {}", rec.name, r.id.variant.name()),
            wire.to_recording(&rec.recording),
        ))
    }

    /// The tab.
    pub fn ui(&mut self, ui: &mut Ui, form: &mut ClientTestForm, queue: &mut ActionQueue) {
        ui.heading("Test a client");
        ui.label("Runs your program against every recording × chunking variant and judges the tool calls it prints (a JSON array or JSON lines of {\"name\", \"arguments\", \"id\"}). It gets SSE_REPLAY_URL, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST, GOOGLE_GEMINI_BASE_URL and dummy API keys.");
        egui::Grid::new("client-test-form")
            .num_columns(2)
            .show(ui, |ui| {
                let label = ui.label("Command");
                ui.add(
                    egui::TextEdit::singleline(&mut form.command)
                        .hint_text("python my_client.py")
                        .desired_width(500.0),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Recordings");
                ui.add(
                    egui::TextEdit::multiline(&mut form.recordings)
                        .hint_text("empty: the built-in suite; or files/folders, one per line")
                        .desired_rows(2)
                        .desired_width(500.0),
                )
                .labelled_by(label.id);
                ui.end_row();
                ui.label("Variants");
                ui.horizontal_wrapped(|ui| {
                    for v in Variant::FRAMING.into_iter().chain(Variant::FAULTS) {
                        let mut on = form.variants.iter().any(|n| n == v.name());
                        let label = if v.is_fault() {
                            format!("{} (fault)", v.name())
                        } else {
                            v.name().to_owned()
                        };
                        if ui.checkbox(&mut on, label).changed() {
                            form.variants.retain(|n| n != v.name());
                            if on {
                                form.variants.push(v.name().to_owned());
                            }
                        }
                    }
                });
                ui.end_row();
                let label = ui.label("Timeout (s)");
                ui.add(egui::DragValue::new(&mut form.timeout_secs).range(0.1..=3600.0))
                    .labelled_by(label.id);
                ui.end_row();
            });
        ui.horizontal(|ui| {
            if let Some(run) = &self.run {
                if ui.button("Cancel").clicked() {
                    self.cancel();
                }
                let (done, total) = run.shown;
                ui.add(
                    egui::ProgressBar::new(done as f32 / total.max(1) as f32)
                        .text(format!(
                            "{done}/{}",
                            sse_replay_core::text::plural(total, "case")
                        ))
                        .desired_width(300.0),
                );
            } else if ui.button("Run").clicked() {
                self.start(form, ui.ctx());
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let Some(last) = &self.last else { return };
        let summary = harness::Summary::of(&last.results);
        ui.separator();
        ui.label(format!(
            "{}: {} pass, {} fail, {} error{}",
            sse_replay_core::text::plural(summary.cases, "case"),
            summary.pass,
            summary.fail,
            summary.error,
            if last.cancelled { " (cancelled)" } else { "" }
        ));
        for u in &last.work.unreadable {
            ui.colored_label(ui.visuals().error_fg_color, u);
        }
        let mut open = None;
        egui::ScrollArea::vertical()
            .id_salt("client-test-matrix")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                egui::Grid::new("client-test-grid")
                    .striped(true)
                    .show(ui, |ui| {
                        ui.label("");
                        for v in &last.work.variants {
                            ui.label(RichText::new(v.name()).strong());
                        }
                        ui.end_row();
                        for (ri, rec) in last.work.suite.iter().enumerate() {
                            if !last.results.iter().any(|r| r.id.recording == ri) {
                                continue;
                            }
                            ui.label(&rec.name);
                            for v in &last.work.variants {
                                match last
                                    .results
                                    .iter()
                                    .position(|r| r.id.recording == ri && r.id.variant == *v)
                                {
                                    None => {
                                        ui.label("·").on_hover_text("does not apply");
                                    }
                                    Some(i) => {
                                        let r = &last.results[i];
                                        let (mark, color) = match r.outcome {
                                            CaseOutcome::Pass => ("✓", super::style::ok_color(ui)),
                                            CaseOutcome::Fail(_) => {
                                                ("✗", super::style::err_color(ui))
                                            }
                                            CaseOutcome::Error(_) => {
                                                ("!", super::style::warn_color(ui))
                                            }
                                        };
                                        let mut hover = r.outcome.name().to_owned();
                                        if !r.outcome.detail().is_empty() {
                                            hover = format!("{hover}: {}", r.outcome.detail());
                                        }
                                        if let Some(d) = &r.diagnosis {
                                            hover = format!("{hover}\n{d}");
                                        }
                                        hover.push_str("\nClick: open this case in Replay");
                                        if ui
                                            .button(RichText::new(mark).color(color))
                                            .on_hover_text(hover)
                                            .clicked()
                                        {
                                            open = Some(i);
                                        }
                                    }
                                }
                            }
                            ui.end_row();
                        }
                    });
                let failures: Vec<&CaseResult> = last
                    .results
                    .iter()
                    .filter(|r| r.outcome != CaseOutcome::Pass)
                    .collect();
                if !failures.is_empty() {
                    ui.separator();
                    ui.label(RichText::new("Failures").strong());
                    for r in failures {
                        ui.label(format!(
                            "{} × {}: {}",
                            r.recording,
                            r.id.variant.name(),
                            r.outcome.detail()
                        ));
                        if let Some(d) = &r.diagnosis {
                            ui.label(RichText::new(format!("    {d}")).italics());
                        }
                    }
                }
            });
        if let Some(i) = open {
            queue.push(Action::OpenTestCase(i));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// "Your client" in Replay
// ---------------------------------------------------------------------------------------------

/// What the client printed for one case, shown in Replay beside the correct calls (like a naive
/// strategy) while that case's recording is open.
#[derive(Clone, Debug)]
pub struct ClientOutput {
    /// The opened recording's name (`recording × variant`): shown only while it is open.
    pub case: String,
    pub calls: Option<Vec<CaseCall>>,
    pub outcome: CaseOutcome,
    pub diagnosis: Option<String>,
    pub stderr: String,
    /// Shown instead of the naive strategy (the picker on the left).
    pub shown: bool,
}

impl ClientTestRun {
    /// The client's output for case `i` of the last run.
    pub fn case_output(&self, i: usize) -> Option<ClientOutput> {
        let last = self.last.as_ref()?;
        let r = last.results.get(i)?;
        let rec = last.work.suite.get(r.id.recording)?;
        Some(ClientOutput {
            case: format!("{} × {}", rec.name, r.id.variant.name()),
            calls: r.got.clone(),
            outcome: r.outcome.clone(),
            diagnosis: r.diagnosis.clone(),
            stderr: r.stderr.clone(),
            shown: true,
        })
    }
}

fn same_call(got: &CaseCall, want: &sse_replay_core::accumulate::Call) -> bool {
    let args = match (&got.arguments, want.value()) {
        (harness::judge::Args::Value(g), Some(w)) => g == w,
        _ => false,
    };
    let ids = match (&got.id, want.id.as_deref().filter(|s| !s.is_empty())) {
        (Some(g), Some(w)) => g == w,
        _ => true,
    };
    args && ids && got.name == want.name
}

fn show_call(c: &CaseCall) -> String {
    let args = match &c.arguments {
        harness::judge::Args::Value(v) => v.to_string(),
        harness::judge::Args::Raw(s) => format!("{s:?} (not JSON)"),
    };
    format!("{} {}", c.name, sse_replay_core::text::truncate(&args, 200))
}

/// The left panel's "your client" view: the verdict, the diagnosis, each printed call against the
/// correct call at its place (differences in red), and the tail of its stderr.
pub fn client_ui(ui: &mut Ui, analysis: &sse_replay_core::analysis::Analysis, out: &ClientOutput) {
    let color = match out.outcome {
        CaseOutcome::Pass => super::style::ok_color(ui),
        CaseOutcome::Fail(_) => super::style::err_color(ui),
        CaseOutcome::Error(_) => super::style::warn_color(ui),
    };
    ui.heading("What your client printed");
    ui.label(
        RichText::new(format!("{}: {}", out.outcome.name(), out.outcome.detail()))
            .strong()
            .color(color),
    );
    if let Some(d) = &out.diagnosis {
        ui.label(RichText::new(d).italics());
    }
    ui.separator();
    egui::ScrollArea::vertical()
        .id_salt("client-output")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            match &out.calls {
                None => {
                    ui.colored_label(
                        super::style::warn_color(ui),
                        "It printed no parseable JSON.",
                    );
                }
                Some(calls) => {
                    ui.label(RichText::new(format!("Calls it printed: {}", calls.len())).strong());
                    for (i, c) in calls.iter().enumerate() {
                        let want = analysis.calls.get(i);
                        let ok = want.is_some_and(|w| same_call(c, w));
                        let color = if ok {
                            super::style::ok_color(ui)
                        } else {
                            super::style::err_color(ui)
                        };
                        ui.label(
                            RichText::new(format!(
                                "{} {i}: {}",
                                if ok { "✓" } else { "✗" },
                                show_call(c)
                            ))
                            .monospace()
                            .color(color),
                        );
                        if !ok {
                            let correct = match want {
                                Some(w) => match w.value() {
                                    Some(v) => format!(
                                        "correct: {} {}",
                                        w.name,
                                        sse_replay_core::text::truncate(&v.to_string(), 200)
                                    ),
                                    None => format!(
                                        "correct: {} — its arguments do not parse: leave it out",
                                        w.name
                                    ),
                                },
                                None => "correct: no call here".into(),
                            };
                            ui.label(
                                RichText::new(format!("    {correct}"))
                                    .monospace()
                                    .color(color),
                            );
                        }
                    }
                    if calls.len() < analysis.calls.len() {
                        ui.label(format!(
                            "{} of the stream's {} not printed",
                            analysis.calls.len() - calls.len(),
                            sse_replay_core::text::plural(analysis.calls.len(), "call")
                        ));
                    }
                }
            }
            if !out.stderr.trim().is_empty() {
                ui.separator();
                ui.label(RichText::new("stderr").strong());
                let tail: Vec<&str> = out.stderr.trim_end().lines().collect();
                let tail: Vec<String> = tail[tail.len().saturating_sub(20)..]
                    .iter()
                    .map(|l| super::style::visible(l, 300))
                    .collect();
                ui.label(RichText::new(tail.join("\n")).monospace());
            }
        });
}
