//! The desktop app (egui/eframe). A thin shell over the core: it opens recordings through one
//! function ([`App::open`]) on a background thread, keeps one immutable [`Analysis`] per recording
//! plus a mutable [`ViewState`], and draws panels that read both. Clicks queue [`Action`]s; the app
//! applies them after drawing. Settings (never recording data) persist through eframe storage.
//!
//! Panels, one file each: [`player`] (transport), [`naive_panel`] and [`accumulator_panel`] (the
//! side-by-side comparison), [`timeline`], [`raw_view`], [`compare_panel`] (two recordings),
//! [`stub_panel`], [`about`]. The Recorder and Proxy tabs are slots for panels that arrive later.

pub mod about;
pub mod accumulator_panel;
pub mod compare_panel;
pub mod dialogs;
pub mod json_tree;
pub mod loader;
pub mod naive_panel;
pub mod player;
pub mod raw_view;
pub mod stub_panel;
pub mod style;
pub mod timeline;
pub mod view;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use egui::{Key, Modifiers, RichText, Ui};

pub use dialogs::{DialogSpec, FileDialogs, NativeDialogs, ScriptedDialogs};
pub use loader::{Loaded, Source};
pub use view::{Action, Derived, Slot, StepUnit, Tab, ViewState};

use crate::analysis::Analysis;
use crate::compare::Comparison;
use crate::export::{self, Format};
use crate::naive::Strategy;

/// At most this many recent files are remembered.
const RECENT_MAX: usize = 10;

/// What eframe storage keeps between runs: settings only, never recording data.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Recently opened files, newest first.
    pub recent: Vec<PathBuf>,
    /// Player speed.
    pub speed: f32,
    /// The naive strategy shown on the left (its stable name).
    pub strategy: String,
    /// The tab shown at start.
    pub tab: Tab,
    pub show_timeline: bool,
    pub show_raw: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            recent: Vec::new(),
            speed: 0.25,
            strategy: Strategy::PerFragment.name().into(),
            tab: Tab::Replay,
            show_timeline: true,
            show_raw: true,
        }
    }
}

/// A line in the status bar: errors stay until the next success.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

/// The open recording and how it is being viewed.
pub struct Doc {
    pub loaded: Loaded,
    pub view: ViewState,
}

/// What an answered dialog was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    Open(Slot),
    ExportCalls(Format),
    ExportReport,
    SaveStub,
}

/// Frame timing, printed to stderr when `SSE_REPLAY_TIMING` is set (for the scale measurements).
#[derive(Debug)]
struct Perf {
    enabled: bool,
    ui_micros: Vec<u64>,
    intervals_micros: Vec<u64>,
    last_frame: Option<Instant>,
    last_report: Instant,
}

impl Perf {
    fn new() -> Self {
        Self {
            enabled: std::env::var_os("SSE_REPLAY_TIMING").is_some(),
            ui_micros: Vec::new(),
            intervals_micros: Vec::new(),
            last_frame: None,
            last_report: Instant::now(),
        }
    }

    fn frame(&mut self, started: Instant) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        self.ui_micros
            .push(now.duration_since(started).as_micros() as u64);
        if let Some(prev) = self.last_frame {
            self.intervals_micros
                .push(started.duration_since(prev).as_micros() as u64);
        }
        self.last_frame = Some(started);
        if now.duration_since(self.last_report) >= Duration::from_secs(2)
            && !self.ui_micros.is_empty()
        {
            let stats = |v: &mut Vec<u64>| {
                v.sort_unstable();
                let n = v.len().max(1);
                let mean = v.iter().sum::<u64>() as f64 / n as f64 / 1000.0;
                let p95 = v.get(n * 95 / 100).copied().unwrap_or(0) as f64 / 1000.0;
                let max = v.last().copied().unwrap_or(0) as f64 / 1000.0;
                format!(
                    "n={} mean={mean:.2}ms p95={p95:.2}ms max={max:.2}ms",
                    v.len()
                )
            };
            eprintln!(
                "timing: ui build {} | frame interval {}",
                stats(&mut self.ui_micros),
                stats(&mut self.intervals_micros)
            );
            self.ui_micros.clear();
            self.intervals_micros.clear();
            self.last_report = now;
        }
    }
}

/// The app.
pub struct App {
    pub settings: Settings,
    /// The recording the player shows.
    pub doc: Option<Doc>,
    /// The second recording of "Compare two".
    pub second: Option<Loaded>,
    comparison: Option<Comparison>,
    loading: Option<loader::Loading>,
    pub status: Option<Status>,
    dialogs: Box<dyn FileDialogs>,
    pending_dialog: Option<(Pending, mpsc::Receiver<Option<PathBuf>>)>,
    pub stub: stub_panel::StubForm,
    pub show_about: bool,
    /// App-level actions (menus, keys, drops); panels queue into the view's list.
    pub actions: Vec<Action>,
    initial: Option<Source>,
    ctx: Option<egui::Context>,
    fonts_installed: bool,
    first_frame_pending: Option<Instant>,
    perf: Perf,
}

impl Default for App {
    fn default() -> Self {
        Self::new(Settings::default(), Box::new(NativeDialogs))
    }
}

impl App {
    /// An app with these settings and dialogs, nothing open.
    pub fn new(settings: Settings, dialogs: Box<dyn FileDialogs>) -> Self {
        Self {
            settings,
            doc: None,
            second: None,
            comparison: None,
            loading: None,
            status: None,
            dialogs,
            pending_dialog: None,
            stub: stub_panel::StubForm::default(),
            show_about: false,
            actions: Vec::new(),
            initial: None,
            ctx: None,
            fonts_installed: false,
            first_frame_pending: None,
            perf: Perf::new(),
        }
    }

    /// Open `source` on the first frame (the CLI argument, or the bundled seed).
    pub fn with_initial(mut self, source: Source) -> Self {
        self.initial = Some(source);
        self
    }

    /// For eframe: fonts, persisted settings, the first source.
    pub fn from_creation(cc: &eframe::CreationContext<'_>, source: Source) -> Self {
        style::install_fonts(&cc.egui_ctx);
        let settings = cc
            .storage
            .and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY))
            .unwrap_or_default();
        let mut app = Self::new(settings, Box::new(NativeDialogs)).with_initial(source);
        app.fonts_installed = true;
        app.ctx = Some(cc.egui_ctx.clone());
        app
    }

    /// A load is running.
    pub fn is_loading(&self) -> bool {
        self.loading.is_some()
    }

    /// The open analysis.
    pub fn analysis(&self) -> Option<&Analysis> {
        self.doc.as_ref().map(|d| &d.loaded.analysis)
    }

    /// The open recording's view state.
    pub fn view(&self) -> Option<&ViewState> {
        self.doc.as_ref().map(|d| &d.view)
    }

    /// The open recording's view state, mutable.
    pub fn view_mut(&mut self) -> Option<&mut ViewState> {
        self.doc.as_mut().map(|d| &mut d.view)
    }

    /// The alignment of the two recordings, when both are open.
    pub fn comparison(&self) -> Option<&Comparison> {
        self.comparison.as_ref()
    }

    /// The one open function: every way of opening (dialog, Ctrl+O, drop, recent, CLI, seed,
    /// stub) ends here. The previous recording stays until the new one has loaded.
    pub fn open(&mut self, source: Source, slot: Slot) {
        if let Some(l) = &self.loading {
            l.cancel();
        }
        let ctx = self.ctx.clone();
        self.loading = Some(loader::spawn(source, slot, move || {
            if let Some(ctx) = &ctx {
                ctx.request_repaint();
            }
        }));
    }

    fn set_status(&mut self, text: impl Into<String>, error: bool) {
        self.status = Some(Status {
            text: text.into(),
            error,
        });
    }

    // --- one frame -------------------------------------------------------------------------

    /// Draw one frame into the root `ui` (eframe calls this; so do the kittest tests).
    pub fn ui_root(&mut self, ui: &mut Ui) {
        let started = Instant::now();
        let ctx = ui.ctx().clone();
        if !self.fonts_installed {
            style::install_fonts(&ctx);
            self.fonts_installed = true;
        }
        if self.ctx.is_none() {
            self.ctx = Some(ctx.clone());
        }
        if let Some(src) = self.initial.take() {
            self.open(src, Slot::Primary);
        }
        self.poll_background();
        self.input(&ctx);
        if let Some(doc) = &mut self.doc {
            player::tick(
                &ctx,
                &doc.loaded.analysis,
                &doc.loaded.derived,
                &mut doc.view,
            );
        }
        if self.loading.is_some() || self.pending_dialog.is_some() {
            // Progress bar updates; the worker also wakes us when done.
            ctx.request_repaint_after(Duration::from_millis(100));
        }

        self.menu_ui(ui);
        self.tabs_ui(ui);
        self.status_ui(ui);
        match self.settings.tab {
            Tab::Replay => self.replay_ui(ui),
            Tab::CompareTwo => {
                let cmp = self.comparison.as_ref();
                let mut actions = Vec::new();
                egui::CentralPanel::default().show(ui, |ui| {
                    compare_panel::compare_ui(
                        ui,
                        self.doc.as_ref().map(|d| &d.loaded),
                        self.second.as_ref(),
                        cmp,
                        &mut actions,
                    );
                });
                self.actions.extend(actions);
            }
            Tab::StubBuilder => stub_panel::stub_ui(ui, &mut self.stub, &mut self.actions),
            Tab::Recorder => placeholder_ui(ui, "Recorder", "src/app/recorder.rs"),
            Tab::Proxy => placeholder_ui(ui, "Proxy", "src/app/proxy_panel.rs"),
        }
        if self.show_about {
            let mut open = true;
            let mut actions = Vec::new();
            egui::Window::new("About sse-replay")
                .open(&mut open)
                .default_width(620.0)
                .show(&ctx, |ui| about::about_ui(ui, &mut actions));
            self.show_about = open;
            self.actions.extend(actions);
        }

        self.apply_actions(&ctx);
        if let Some(t0) = self.first_frame_pending.take() {
            let took = t0.elapsed();
            if self.perf.enabled {
                eprintln!(
                    "timing: open → first full frame {:.1} ms",
                    took.as_secs_f64() * 1000.0
                );
            }
        }
        self.perf.frame(started);
    }

    fn poll_background(&mut self) {
        if let Some(l) = &self.loading
            && let Some(result) = l.poll()
        {
            let (slot, name, t0) = (l.slot, l.name.clone(), l.started);
            self.loading = None;
            self.finish_load(result, slot, &name, t0);
        }
        if let Some((pending, rx)) = &self.pending_dialog {
            let answer = match rx.try_recv() {
                Ok(a) => Some(a),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => Some(None),
            };
            if let Some(answer) = answer {
                let pending = *pending;
                self.pending_dialog = None;
                if let Some(path) = answer {
                    self.dialog_answered(pending, path);
                }
            }
        }
    }

    fn finish_load(&mut self, result: Result<Loaded, String>, slot: Slot, name: &str, t0: Instant) {
        match result {
            Ok(loaded) => {
                let a = &loaded.analysis;
                let text = format!(
                    "Opened {name}: {} chunks, {} events, {} fragments, {} calls ({:.0} ms)",
                    a.chunks.len(),
                    a.events.len(),
                    a.fragments.len(),
                    a.calls.len(),
                    loaded.load_time.as_secs_f64() * 1000.0
                );
                if let Some(p) = &loaded.path {
                    self.remember_recent(p);
                }
                match slot {
                    Slot::Primary => {
                        let strategy = Strategy::ALL
                            .into_iter()
                            .find(|s| s.name() == self.settings.strategy)
                            .unwrap_or(Strategy::PerFragment);
                        let view = ViewState {
                            cursor: ViewState::last_chunk(a),
                            strategy,
                            speed: self.settings.speed,
                            ..Default::default()
                        };
                        if let Some(ctx) = &self.ctx {
                            ctx.send_viewport_cmd(egui::ViewportCommand::Title(format!(
                                "sse-replay — {}",
                                short_name(name)
                            )));
                        }
                        self.doc = Some(Doc { loaded, view });
                        self.first_frame_pending = Some(t0);
                    }
                    Slot::Second => self.second = Some(loaded),
                }
                self.recompare();
                self.set_status(text, false);
            }
            Err(e) if e == "cancelled" => self.set_status(
                format!("Cancelled opening {name}; the previous recording stays open"),
                false,
            ),
            Err(e) => self.set_status(format!("Cannot open: {e}"), true),
        }
    }

    fn recompare(&mut self) {
        self.comparison = match (&self.doc, &self.second) {
            (Some(a), Some(b)) => Some(crate::compare::compare(
                &a.loaded.analysis.calls,
                &b.analysis.calls,
            )),
            _ => None,
        };
    }

    fn remember_recent(&mut self, p: &Path) {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        self.settings.recent.retain(|q| q != &p);
        self.settings.recent.insert(0, p);
        self.settings.recent.truncate(RECENT_MAX);
    }

    /// Keyboard shortcuts and dropped files.
    fn input(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        if let Some(p) = dropped.into_iter().next() {
            let slot = if self.settings.tab == Tab::CompareTwo && self.doc.is_some() {
                Slot::Second
            } else {
                Slot::Primary
            };
            self.actions.push(Action::OpenPath(p, slot));
        }
        if ctx.input_mut(|i| i.consume_key(Modifiers::COMMAND, Key::O)) {
            self.actions.push(Action::OpenDialog(Slot::Primary));
        }
        if self.settings.tab != Tab::Replay || self.doc.is_none() || ctx.egui_wants_keyboard_input()
        {
            return;
        }
        let keys = [
            (Modifiers::NONE, Key::Space, Action::TogglePlay),
            (
                Modifiers::NONE,
                Key::ArrowRight,
                Action::Step(StepUnit::Chunk, 1),
            ),
            (
                Modifiers::NONE,
                Key::ArrowLeft,
                Action::Step(StepUnit::Chunk, -1),
            ),
            (
                Modifiers::SHIFT,
                Key::ArrowRight,
                Action::Step(StepUnit::Event, 1),
            ),
            (
                Modifiers::SHIFT,
                Key::ArrowLeft,
                Action::Step(StepUnit::Event, -1),
            ),
            (
                Modifiers::COMMAND,
                Key::ArrowRight,
                Action::Step(StepUnit::Fragment, 1),
            ),
            (
                Modifiers::COMMAND,
                Key::ArrowLeft,
                Action::Step(StepUnit::Fragment, -1),
            ),
            (Modifiers::NONE, Key::Home, Action::Home),
            (Modifiers::NONE, Key::End, Action::End),
        ];
        for (mods, key, action) in keys {
            if ctx.input_mut(|i| i.consume_key(mods, key)) {
                self.actions.push(action);
            }
        }
    }

    // --- drawing -----------------------------------------------------------------------------

    fn menu_ui(&mut self, ui: &mut Ui) {
        egui::Panel::top("menu").show(ui, |ui| {
            egui::MenuBar::new().ui(ui, |ui| {
                ui.menu_button("File", |ui| {
                    if ui.button("Open recording…  (Ctrl+O)").clicked() {
                        self.actions.push(Action::OpenDialog(Slot::Primary));
                    }
                    if ui.button("Open seed example").clicked() {
                        self.actions.push(Action::OpenSeed);
                    }
                    ui.menu_button("Open recent", |ui| {
                        if self.settings.recent.is_empty() {
                            ui.weak("(none yet)");
                        }
                        for p in self.settings.recent.clone() {
                            if ui.button(p.display().to_string()).clicked() {
                                self.actions.push(Action::OpenPath(p, Slot::Primary));
                            }
                        }
                        if !self.settings.recent.is_empty() && ui.button("Clear the list").clicked()
                        {
                            self.settings.recent.clear();
                        }
                    });
                    if ui.button("Open second recording to compare…").clicked() {
                        self.actions.push(Action::OpenDialog(Slot::Second));
                    }
                    ui.separator();
                    ui.menu_button("Export calls", |ui| {
                        for f in Format::ALL {
                            if ui.button(format!("{}…", format_label(f))).clicked() {
                                self.actions.push(Action::ExportCalls(f));
                            }
                        }
                    });
                    if ui.button("Copy calls as JSON").clicked() {
                        self.actions.push(Action::CopyCallsJson);
                    }
                    if ui.button("Export check report (JSON)…").clicked() {
                        self.actions.push(Action::ExportReport);
                    }
                    ui.separator();
                    if ui.button("Quit").clicked() {
                        ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                });
                ui.menu_button("View", |ui| {
                    ui.checkbox(&mut self.settings.show_timeline, "Timeline");
                    ui.checkbox(&mut self.settings.show_raw, "Raw stream");
                });
                ui.menu_button("Help", |ui| {
                    if ui.button("About the fragment problem").clicked() {
                        self.actions.push(Action::ToggleAbout);
                    }
                });
            });
        });
    }

    fn tabs_ui(&mut self, ui: &mut Ui) {
        egui::Panel::top("tabs").show(ui, |ui| {
            ui.horizontal(|ui| {
                for t in Tab::ALL {
                    if ui.selectable_label(self.settings.tab == t, RichText::new(t.label()).strong()).clicked() {
                        self.actions.push(Action::ShowTab(t));
                    }
                }
                ui.separator();
                if ui.button("Open…").on_hover_text("Open a .ron recording or a raw .sse/.txt body (Ctrl+O, or drop a file on the window)").clicked() {
                    self.actions.push(Action::OpenDialog(Slot::Primary));
                }
                if ui.button("About…").on_hover_text("What is the fragment problem? How to use the app").clicked() {
                    self.actions.push(Action::ToggleAbout);
                }
            });
        });
    }

    fn status_ui(&mut self, ui: &mut Ui) {
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                if let Some(l) = &self.loading {
                    ui.label(format!("Loading {} ({})", short_name(&l.name), l.stage()));
                    ui.add(egui::ProgressBar::new(l.progress()).desired_width(200.0).show_percentage());
                    if ui.button("Cancel").clicked() {
                        self.actions.push(Action::CancelLoad);
                    }
                    ui.separator();
                }
                match &self.status {
                    Some(s) if s.error => {
                        ui.label(RichText::new(format!("× {}", s.text)).color(style::err_color(ui)));
                    }
                    Some(s) => {
                        ui.label(&s.text);
                    }
                    None => {
                        ui.weak("Drop a recording (.ron) or a raw stream body (.sse, .txt) on the window to open it.");
                    }
                }
            });
        });
    }

    fn replay_ui(&mut self, ui: &mut Ui) {
        let Some(doc) = &mut self.doc else {
            let mut actions = Vec::new();
            egui::CentralPanel::default().show(ui, |ui| {
                ui.add_space(40.0);
                ui.vertical_centered(|ui| {
                    ui.heading("sse-replay");
                    ui.label("Open a recording (Ctrl+O) or drop one on the window.");
                    if ui.button("Open the seed example").clicked() {
                        actions.push(Action::OpenSeed);
                    }
                });
            });
            self.actions.extend(actions);
            return;
        };
        let (a, d, v) = (&doc.loaded.analysis, &doc.loaded.derived, &mut doc.view);
        egui::Panel::top("replay-head").show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                let title = if a.meta.title.is_empty() {
                    short_name(&a.source.name)
                } else {
                    a.meta.title.clone()
                };
                ui.label(RichText::new(title).strong().size(16.0));
                ui.weak(format!(
                    "{} · {} ({}) · {} · {} bytes",
                    short_name(&a.source.name),
                    a.dialect.name(),
                    a.framing.name(),
                    a.source.kind,
                    a.body.len()
                ));
            });
            player::transport_ui(ui, a, d, v);
        });
        if self.settings.show_raw {
            egui::Panel::bottom("raw")
                .resizable(true)
                .default_size(200.0)
                .min_size(60.0)
                .show(ui, |ui| raw_view::raw_ui(ui, a, d, v));
        }
        if self.settings.show_timeline {
            egui::Panel::bottom("timeline")
                .resizable(true)
                .default_size(120.0)
                .min_size(60.0)
                .show(ui, |ui| timeline::timeline_ui(ui, a, d, v));
        }
        let half = ui.available_width() * 0.46;
        egui::Panel::left("naive")
            .resizable(true)
            .default_size(half)
            .min_size(240.0)
            .show(ui, |ui| naive_panel::naive_ui(ui, a, d, v));
        egui::CentralPanel::default().show(ui, |ui| accumulator_panel::accumulator_ui(ui, a, d, v));
    }

    // --- actions -----------------------------------------------------------------------------

    fn apply_actions(&mut self, ctx: &egui::Context) {
        let mut queue = std::mem::take(&mut self.actions);
        if let Some(doc) = &mut self.doc {
            queue.append(&mut doc.view.actions);
        }
        if !queue.is_empty() {
            // The frame just drawn predates these actions: draw their result.
            ctx.request_repaint();
        }
        for action in queue {
            self.apply(ctx, action);
        }
    }

    /// Apply one action (tests may call this directly).
    pub fn apply(&mut self, ctx: &egui::Context, action: Action) {
        match action {
            Action::OpenDialog(slot) => {
                let spec = DialogSpec {
                    save: false,
                    title: if slot == Slot::Second {
                        "Open a second recording to compare".into()
                    } else {
                        "Open a recording".into()
                    },
                    file_name: String::new(),
                    filters: vec![
                        (
                            "Recordings and stream bodies".into(),
                            vec!["ron".into(), "sse".into(), "txt".into(), "partial".into()],
                        ),
                        ("All files".into(), vec!["*".into()]),
                    ],
                };
                self.ask(ctx, spec, Pending::Open(slot));
            }
            Action::OpenPath(p, slot) => self.open(Source::File(p), slot),
            Action::OpenSeed => {
                self.settings.tab = Tab::Replay;
                self.open(Source::Seed, Slot::Primary);
            }
            Action::CancelLoad => {
                if let Some(l) = &self.loading {
                    l.cancel();
                }
            }
            Action::ShowTab(t) => self.settings.tab = t,
            Action::ToggleAbout => self.show_about = !self.show_about,
            Action::CopyCallsJson => match self.analysis() {
                Some(a) => {
                    let n = a.calls.len();
                    ctx.copy_text(export::render(&a.calls, Format::Json));
                    self.set_status(format!("Copied {n} calls as JSON to the clipboard"), false);
                }
                None => self.set_status("Nothing to copy: no recording is open", true),
            },
            Action::ExportCalls(f) => {
                let Some(name) = self.export_stem() else {
                    return self.set_status("Nothing to export: no recording is open", true);
                };
                let spec = DialogSpec {
                    save: true,
                    title: format!("Export calls as {}", format_label(f)),
                    file_name: format!("{name}-calls.{}", f.extension()),
                    filters: vec![(format_label(f).into(), vec![f.extension().into()])],
                };
                self.ask(ctx, spec, Pending::ExportCalls(f));
            }
            Action::ExportReport => {
                let Some(name) = self.export_stem() else {
                    return self.set_status("Nothing to export: no recording is open", true);
                };
                let spec = DialogSpec {
                    save: true,
                    title: "Export the check report".into(),
                    file_name: format!("{name}-check.json"),
                    filters: vec![("JSON".into(), vec!["json".into()])],
                };
                self.ask(ctx, spec, Pending::ExportReport);
            }
            Action::SaveStub => {
                let spec = DialogSpec {
                    save: true,
                    title: "Save the stub as a recording".into(),
                    file_name: "stub.ron".into(),
                    filters: vec![("Recording".into(), vec!["ron".into()])],
                };
                self.ask(ctx, spec, Pending::SaveStub);
            }
            Action::OpenStub => match self.stub.recording() {
                Some(rec) => {
                    let name = format!("stub: {}", rec.meta.title);
                    let recording = Box::new(rec.clone());
                    self.settings.tab = Tab::Replay;
                    self.open(Source::Memory { name, recording }, Slot::Primary);
                }
                None => self.set_status("The stub form is incomplete (see the preview)", true),
            },
            Action::SelectStrategy(s) => {
                self.settings.strategy = s.name().into();
                if let Some(v) = self.view_mut() {
                    v.strategy = s;
                }
            }
            other => self.apply_player(other),
        }
    }

    fn apply_player(&mut self, action: Action) {
        let Some(doc) = &mut self.doc else { return };
        let (a, v) = (&doc.loaded.analysis, &mut doc.view);
        match action {
            Action::Seek(k) => v.seek(a, k),
            Action::Step(unit, dir) => {
                v.playing = false;
                v.step(a, unit, dir);
            }
            Action::Home => v.seek(a, 0),
            Action::End => v.seek(a, ViewState::last_chunk(a)),
            Action::TogglePlay => {
                v.playing = !v.playing;
                if v.playing && v.cursor >= ViewState::last_chunk(a) && !v.instant {
                    v.seek(a, 0);
                }
                self.settings.speed = v.speed;
            }
            Action::FocusFragment(no) => v.focus(a, no),
            _ => {}
        }
        v.play_anchor = None;
    }

    fn export_stem(&self) -> Option<String> {
        let doc = self.doc.as_ref()?;
        let stem = doc
            .loaded
            .path
            .as_deref()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned());
        Some(stem.unwrap_or_else(|| "recording".into()))
    }

    fn ask(&mut self, ctx: &egui::Context, spec: DialogSpec, pending: Pending) {
        if self.pending_dialog.is_some() {
            return self.set_status("A file dialog is already open", true);
        }
        let waker = ctx.clone();
        let rx = self
            .dialogs
            .ask(spec, Box::new(move || waker.request_repaint()));
        self.pending_dialog = Some((pending, rx));
        // A scripted dialog has answered already: handle it in this frame.
        self.poll_background();
    }

    fn dialog_answered(&mut self, pending: Pending, path: PathBuf) {
        match pending {
            Pending::Open(slot) => self.open(Source::File(path), slot),
            Pending::ExportCalls(f) => {
                let Some(a) = self.analysis() else { return };
                let (text, n) = (export::render(&a.calls, f), a.calls.len());
                self.write_file(
                    &path,
                    text.as_bytes(),
                    &format!("{n} calls as {}", format_label(f)),
                );
            }
            Pending::ExportReport => {
                let Some(a) = self.analysis() else { return };
                let mut text =
                    serde_json::to_string_pretty(&export::check_json(a)).unwrap_or_default();
                text.push('\n');
                self.write_file(&path, text.as_bytes(), "the check report");
            }
            Pending::SaveStub => match self.stub.recording() {
                Some(rec) => match crate::recording::save(&path, rec) {
                    Ok(()) => self.set_status(
                        format!("Saved the stub recording to {}", path.display()),
                        false,
                    ),
                    Err(e) => self.set_status(format!("Cannot save the stub: {e:#}"), true),
                },
                None => self.set_status("The stub form is incomplete (see the preview)", true),
            },
        }
    }

    fn write_file(&mut self, path: &Path, bytes: &[u8], what: &str) {
        match crate::cli::write_atomic(path, bytes) {
            Ok(()) => self.set_status(format!("Exported {what} to {}", path.display()), false),
            Err(e) => self.set_status(
                format!("Cannot write {what}: {e} in {}", path.display()),
                true,
            ),
        }
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.ui_root(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.settings);
    }
}

fn placeholder_ui(ui: &mut Ui, name: &str, file: &str) {
    egui::CentralPanel::default().show(ui, |ui| {
        ui.heading(name);
        ui.label(format!(
            "The {name} panel is not part of this build yet; it will live in {file}."
        ));
    });
}

/// The label of an export format in menus.
pub fn format_label(f: Format) -> &'static str {
    match f {
        Format::Json => "JSON",
        Format::Jsonl => "JSONL",
        Format::OpenAi => "OpenAI assistant message",
        Format::Anthropic => "Anthropic tool_use blocks",
    }
}

fn short_name(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map_or_else(|| name.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// Start the desktop app on `file`, or on the bundled seed example.
pub fn run(file: Option<PathBuf>) -> ExitCode {
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("sse-replay")
        .with_inner_size([1500.0, 940.0])
        .with_min_inner_size([800.0, 500.0])
        .with_drag_and_drop(true);
    if let Ok(icon) = eframe::icon_data::from_png_bytes(style::ICON_PNG) {
        viewport = viewport.with_icon(std::sync::Arc::new(icon));
    }
    let options = eframe::NativeOptions {
        viewport,
        ..Default::default()
    };
    let source = file.map_or(Source::Seed, Source::File);
    match eframe::run_native(
        "sse-replay",
        options,
        Box::new(move |cc| Ok(Box::new(App::from_creation(cc, source)))),
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sse-replay: cannot start the app: {e}");
            ExitCode::from(crate::cli::EXIT_INPUT)
        }
    }
}
