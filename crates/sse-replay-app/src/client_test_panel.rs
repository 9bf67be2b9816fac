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
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::recording::Recording;
use sse_replay_net::harness::{
    self, CaseCall, CaseId, CaseOutcome, CaseResult, Config, NotSpoken, SuiteRecording, SuiteRun,
    Variant,
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
    /// Only recordings of these dialects (their stable names; empty = all), as `--dialect`.
    pub dialects: Vec<String>,
    /// The `random` variant's seed (`--random-seed`); `None`: a new one each run (shown after it).
    pub random_seed: Option<u64>,
    /// Cases run in parallel (`-j`).
    pub jobs: usize,
    /// Speed of the `recorded` variant's timing (`--speed`).
    pub speed: f64,
    /// Also write a JUnit XML report here (`--junit`; empty: none). Replaced if it exists.
    pub junit: String,
    /// The folder the command runs in (empty: the app's own).
    pub working_dir: String,
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
            dialects: Vec::new(),
            random_seed: None,
            jobs: std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            speed: 1.0,
            junit: String::new(),
            working_dir: String::new(),
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
    /// Dialects the client does not speak: skipped, reported once.
    pub not_spoken: Vec<NotSpoken>,
    /// The run failed with no case judged: the client speaks none of the suite's dialects
    /// ([`SuiteRun::speaks_none`], the line `sse-replay test` exits 1 with).
    pub speaks_none: Option<String>,
    pub cancelled: bool,
}

struct Run {
    work: Arc<Work>,
    cancel: Arc<AtomicBool>,
    progress: mpsc::Receiver<(usize, usize)>,
    done: mpsc::Receiver<SuiteRun>,
    shown: (usize, usize),
    started: std::time::Instant,
    /// Where the JUnit report goes when the run ends.
    junit: Option<PathBuf>,
}

/// Shell builtins and keywords: a command line starting with one cannot be checked beforehand.
const SHELL_WORDS: [&str; 22] = [
    "cd", "exec", "eval", "export", "env", "command", "time", "nice", "nohup", "if", "for",
    "while", "until", "case", "{", "(", "!", ".", "source", "set", "unset", "true",
];

/// The program a `sh -c` command line runs first (after `NAME=value` assignments), when it can
/// be told: a plain word, quotes removed; `None` for a shell builtin or keyword.
pub fn first_program(command: &str) -> Option<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, ';' | '|' | '&' | '<' | '>') => break,
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    let is_assignment = |w: &str| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        })
    };
    let program = words.into_iter().find(|w| !is_assignment(w))?;
    (!SHELL_WORDS.contains(&program.as_str()) && !program.is_empty()).then_some(program)
}

impl ClientTestRun {
    /// A run is in progress.
    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    /// Starts a run (loading the suite happens here, it is small; the cases run on a thread). A
    /// command that cannot be found stops here, before any case, with the CLI's line.
    pub fn start(&mut self, form: &ClientTestForm, ctx: &egui::Context) {
        self.error = None;
        // The previous run's results are not this run's: gone as soon as Run is pressed.
        self.last = None;
        let command = form.command.trim().to_owned();
        if command.is_empty() {
            self.error = Some("Enter the command that runs your client".into());
            return;
        }
        let work_dir = form.working_dir.trim();
        let work_dir = (!work_dir.is_empty()).then(|| PathBuf::from(work_dir));
        if let Some(d) = &work_dir
            && !d.is_dir()
        {
            self.error = Some(format!(
                "the working folder is not a folder: {}",
                d.display()
            ));
            return;
        }
        if let Some(program) = first_program(&command) {
            // As the shell will look it up: a path from the working folder, a name on PATH.
            let resolved = match &work_dir {
                Some(d) if program.contains('/') && !program.starts_with('/') => {
                    d.join(&program).display().to_string()
                }
                _ => program.clone(),
            };
            if !harness::run::program_exists(&resolved) {
                self.error = Some(format!(
                    "cannot run the client: command not found: {program}"
                ));
                return;
            }
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
        let dialects: Vec<DialectKind> = DialectKind::ALL
            .into_iter()
            .filter(|k| form.dialects.iter().any(|n| n == k.name()))
            .collect();
        // In the working folder: `cd` there, then the command line as typed.
        let args = match &work_dir {
            Some(d) => vec![
                "-c".into(),
                "cd -- \"$1\" || exit 126; eval \"$2\"".into(),
                "sse-replay-client".into(),
                d.display().to_string(),
                command,
            ],
            None => vec!["-c".into(), command],
        };
        let config = Config {
            command: harness::ClientCommand {
                program: "sh".into(),
                args,
            },
            variants: variants.clone(),
            dialects,
            jobs: form.jobs.clamp(1, 1024),
            timeout: Duration::from_secs_f64(form.timeout_secs.clamp(0.1, 86_400.0)),
            speed: form.speed.clamp(0.01, 1e6),
            random_seed: form.random_seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_000)
            }),
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
                // A command that cannot start (exit 127/126 included) stops the run in the
                // harness itself: the result's `start_failure` says so.
                let progress = |n: usize, total: usize, _: &CaseResult| {
                    progress_tx.send((n, total)).ok();
                    repaint.request_repaint();
                };
                let run = harness::run_plan(&thread_work.suite, &config, &thread_cancel, &progress);
                done_tx.send(run).ok();
                repaint.request_repaint();
            });
        if let Err(e) = spawned {
            self.error = Some(format!("cannot start the run: {e}"));
            return;
        }
        let total = work.cases.len();
        let junit = form.junit.trim();
        self.run = Some(Run {
            work,
            cancel,
            progress,
            done,
            shown: (0, total),
            started: std::time::Instant::now(),
            junit: (!junit.is_empty()).then(|| PathBuf::from(junit)),
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
            Ok(done) => {
                let cancelled = run.cancel.load(Ordering::Relaxed);
                let work = run.work.clone();
                if let Some(path) = run.junit.take() {
                    let xml = harness::junit::render(&done.results, run.started.elapsed());
                    let options = sse_replay_core::recording::WriteOptions::public(true);
                    if let Err(e) =
                        sse_replay_core::recording::write_file(&path, xml.as_bytes(), options)
                    {
                        self.error = Some(format!("cannot write the JUnit report: {e}"));
                    }
                }
                self.run = None;
                if let Some(why) = done.start_failure {
                    // A command that cannot start is never a client's verdict.
                    self.error = Some(format!("could not start the client: {why}"));
                    self.last = None;
                    return;
                }
                let speaks_none = done.speaks_none();
                self.last = Some(Finished {
                    work,
                    results: done.results,
                    not_spoken: done.not_spoken,
                    speaks_none,
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
        Some((
            format!("{} × {}", rec.name, r.id.variant.name()),
            rec.case_recording(r.id.variant, last.work.random_seed)?,
        ))
    }

    /// The tab.
    pub fn ui(&mut self, ui: &mut Ui, form: &mut ClientTestForm, queue: &mut ActionQueue) {
        ui.heading("Test a client");
        ui.label("Runs your program against every recording × chunking variant and judges the tool calls it prints (a JSON array or JSON lines of {\"name\", \"arguments\", \"id\"}). It gets SSE_REPLAY_URL, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST, GOOGLE_GEMINI_BASE_URL, CO_API_URL and dummy API keys.");
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
                wrapped_cell(ui, |ui| {
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
                ui.label("Dialects")
                    .on_hover_text("Only recordings of these dialects (none ticked: all)");
                wrapped_cell(ui, |ui| {
                    for k in DialectKind::ALL {
                        let mut on = form.dialects.iter().any(|n| n == k.name());
                        if ui.checkbox(&mut on, k.title()).changed() {
                            form.dialects.retain(|n| n != k.name());
                            if on {
                                form.dialects.push(k.name().to_owned());
                            }
                        }
                    }
                });
                ui.end_row();
                let label = ui.label("Random seed");
                ui.horizontal(|ui| {
                    let mut fresh = form.random_seed.is_none();
                    if ui
                        .checkbox(&mut fresh, "new each run")
                        .on_hover_text("The random variant's write sizes come from this seed; the run shows the one it used, so a failure reproduces")
                        .changed()
                    {
                        form.random_seed = if fresh { None } else { Some(1) };
                    }
                    if let Some(seed) = &mut form.random_seed {
                        ui.add(egui::DragValue::new(seed)).labelled_by(label.id);
                    }
                });
                ui.end_row();
                let label = ui.label("Parallel jobs");
                ui.add(egui::DragValue::new(&mut form.jobs).range(1..=1024))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Speed (recorded)");
                ui.add(
                    egui::DragValue::new(&mut form.speed)
                        .range(0.01..=1000.0)
                        .speed(0.1)
                        .suffix("×"),
                )
                .labelled_by(label.id)
                .on_hover_text("Timing of the recorded variant: 2 = twice as fast");
                ui.end_row();
                let label = ui.label("JUnit report");
                ui.add(
                    egui::TextEdit::singleline(&mut form.junit)
                        .hint_text("none (a path writes one, replacing it)")
                        .desired_width(500.0),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Working folder");
                ui.add(
                    egui::TextEdit::singleline(&mut form.working_dir)
                        .hint_text("the app's (the command runs in this folder)")
                        .desired_width(500.0),
                )
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
        let not_judged = if summary.not_judged > 0 {
            format!(", {} not judged", summary.not_judged)
        } else {
            String::new()
        };
        match &last.speaks_none {
            // Not a neutral "0 cases": the run failed, as `sse-replay test` says it did.
            Some(why) => {
                ui.colored_label(super::style::err_color(ui), why);
            }
            None => {
                ui.label(format!(
                    "{}: {} pass, {} fail, {} error{not_judged}{}",
                    sse_replay_core::text::plural(summary.cases, "case"),
                    summary.pass,
                    summary.fail,
                    summary.error,
                    if last.cancelled { " (cancelled)" } else { "" }
                ));
            }
        }
        let seed = last.work.random_seed;
        ui.horizontal(|ui| {
            ui.weak(format!("random seed {seed}"));
            if form.random_seed != Some(seed)
                && ui
                    .small_button("Use this seed")
                    .on_hover_text("Run the random variant with the same write sizes again")
                    .clicked()
            {
                form.random_seed = Some(seed);
            }
        });
        for n in &last.not_spoken {
            ui.label(n.line());
        }
        if !last.not_spoken.is_empty() {
            ui.weak("(--dialect is the Dialects row above: tick a dialect to run it anyway)");
        }
        for u in &last.work.unreadable {
            ui.colored_label(ui.visuals().error_fg_color, u);
        }
        if last.results.is_empty() {
            // No case ran: no matrix of empty columns.
            return;
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
                                            CaseOutcome::NotJudged(_) => {
                                                ("○", ui.visuals().weak_text_color())
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
                    .filter(|r| matches!(r.outcome, CaseOutcome::Fail(_) | CaseOutcome::Error(_)))
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
        (harness::judge::Args::Value(g), Some(w)) => harness::judge::json_eq(g, w),
        _ => false,
    };
    let ids = match (
        got.id.as_deref(),
        want.id.as_deref().filter(|s| !s.is_empty()),
    ) {
        (Some(g), Some(w)) => g == w,
        _ => true,
    };
    args && ids && got.name == want.name
}

fn show_call(c: &CaseCall) -> String {
    let args = match &c.arguments {
        harness::judge::Args::Value(v) => v.to_string(),
        harness::judge::Args::Raw(s) => format!("{s:?} (not JSON)"),
        harness::judge::Args::Text(s) => format!("{s:?}"),
        harness::judge::Args::Failed { error, .. } => format!("(failed: {error})"),
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
        CaseOutcome::NotJudged(_) => ui.visuals().weak_text_color(),
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
                    // The client's calls: the provider's server tools are not among them.
                    let client: Vec<&sse_replay_core::accumulate::Call> =
                        analysis.client_calls().collect();
                    for (i, c) in calls.iter().enumerate() {
                        let want = client.get(i).copied();
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
                    if calls.len() < client.len() {
                        ui.label(format!(
                            "{} of the stream's {} not printed",
                            client.len() - calls.len(),
                            sse_replay_core::text::plural(client.len(), "call")
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

/// A form-grid cell whose contents wrap (the variants, the dialects): laid out from the cell's top,
/// so that the row takes every wrapped line's height. egui's `horizontal_wrapped` centres its first
/// line in the row's height from the frame before, and the lines after it then run into the next
/// row ("new each run" drawn over the second line of dialects at 1024 wide).
fn wrapped_cell(ui: &mut Ui, add_contents: impl FnOnce(&mut Ui)) {
    ui.with_layout(
        egui::Layout::left_to_right(egui::Align::Min).with_main_wrap(true),
        add_contents,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_program_of_a_command_line() {
        assert_eq!(
            first_program("python3 c.py --x").as_deref(),
            Some("python3")
        );
        assert_eq!(
            first_program("  A=1 B='x y' node c.mjs").as_deref(),
            Some("node")
        );
        assert_eq!(
            first_program("'./my client' -v").as_deref(),
            Some("./my client")
        );
        assert_eq!(first_program("cd x && python c.py"), None);
        assert_eq!(first_program("./c.sh|tee log").as_deref(), Some("./c.sh"));
        assert_eq!(first_program(""), None);
    }
}
