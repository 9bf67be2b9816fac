//! The desktop app (egui/eframe). A thin shell over the core: it opens recordings through one
//! function ([`App::open`]) on a background thread, keeps one immutable [`Analysis`] per recording
//! plus a mutable [`ViewState`], and draws panels that read both. Clicks queue [`Action`]s; the app
//! applies them after drawing. Settings (never recording data) persist through eframe storage.
//!
//! Panels, one file each: [`player`] (transport), [`naive_panel`] and [`accumulator_panel`] (the
//! side-by-side comparison), [`timeline`], [`raw_view`], [`compare_panel`] (two recordings),
//! [`stub_panel`], [`about`], [`recorder`] (its recording so far shows live in the Replay panels)
//! and [`proxy_panel`].

pub mod about;
pub mod accumulator_panel;
pub mod client_test_panel;
pub mod compare_panel;
pub mod dialogs;
pub mod json_tree;
pub mod loader;
pub mod naive_panel;
pub mod player;
pub mod preview_panel;
pub mod proxy_panel;
pub mod raw_view;
pub mod recorder;
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
pub use loader::{Done, Loaded, Source};
pub use view::{Action, Derived, Slot, StepUnit, Tab, ViewState};

use crate::analysis::Analysis;
use crate::compare::Comparison;
use crate::dialect::DialectKind;
use crate::export::{self, Format};
use crate::naive::Strategy;
use crate::recording::Recording;
use proxy_panel::ProxyPanel;
use recorder::{PanelEvent, RecorderPanel};

/// At most this many recent files are remembered.
const RECENT_MAX: usize = 10;

/// What eframe storage keeps between runs: settings only, never recording data (nor secrets: the
/// panels skip their secret header values and running state).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
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
    /// The Recorder form (URL, headers without secret values, body, output folder).
    pub recorder: RecorderPanel,
    /// The Proxy form (listen address, upstream, output folder).
    pub proxy: ProxyPanel,
    /// The "Test a client" form (command line, recordings, variants).
    pub client_test: client_test_panel::ClientTestPanel,
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
            recorder: RecorderPanel::default(),
            proxy: ProxyPanel::default(),
            client_test: client_test_panel::ClientTestPanel::default(),
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
#[derive(Debug)]
enum Pending {
    Open(Slot),
    Import,
    ExportCalls(Format),
    ExportReport,
    SaveStub,
    SaveRecording(Box<Recording>),
}

/// A capture with several streams, waiting for the user to pick one.
#[derive(Debug)]
pub struct Picker {
    /// The file they came from.
    pub path: PathBuf,
    pub recordings: Vec<Recording>,
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
    /// The stream picker of a multi-stream capture, while open.
    pub picker: Option<Picker>,
    /// The newest live recording, waiting for the loader to be free (live updates coalesce).
    live_pending: Option<Box<Recording>>,
    /// Live updates replace the Replay recording: set when a recording starts (or on "Watch in
    /// Replay"), cleared when the user opens something else.
    live_follow: bool,
    recorder_was_running: bool,
    /// What the tested client printed for the case opened from "Test a client" (shown in Replay
    /// while that case is open).
    pub client_case: Option<client_test_panel::ClientOutput>,
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
            picker: None,
            live_pending: None,
            live_follow: false,
            recorder_was_running: false,
            client_case: None,
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
        if slot == Slot::Primary && !matches!(source, Source::Live(_)) {
            self.live_follow = false;
            self.live_pending = None;
        }
        self.load(source, slot, None, false);
    }

    /// Start the loader. `keep_view` keeps the cursor and strategy when it lands (a live update,
    /// a dialect change); `dialect` forces the dialect.
    fn load(&mut self, source: Source, slot: Slot, dialect: Option<DialectKind>, keep_view: bool) {
        if let Some(l) = &self.loading {
            l.cancel();
        }
        let ctx = self.ctx.clone();
        let mut loading = loader::spawn(source, slot, dialect, move || {
            if let Some(ctx) = &ctx {
                ctx.request_repaint();
            }
        });
        loading.keep_view = keep_view;
        self.loading = Some(loading);
    }

    /// Show the Recorder's recording so far in the Replay panels. While a load runs, only the
    /// newest update waits; it starts when the loader is free.
    fn show_live(&mut self, rec: Box<Recording>) {
        if !self.live_follow {
            return;
        }
        if self.loading.is_some() {
            self.live_pending = Some(rec);
            return;
        }
        let (dialect, keep) = match &self.doc {
            Some(d) if d.loaded.is_live() => (d.loaded.dialect_override, true),
            _ => (None, false),
        };
        self.load(Source::Live(rec), Slot::Primary, dialect, keep);
        if let Some(l) = &mut self.loading {
            l.live = true;
        }
    }

    /// Analyse the open recording again with `dialect` forced (`None`: detect it again).
    fn reanalyse(&mut self, dialect: Option<DialectKind>) {
        let Some(doc) = &self.doc else { return };
        if doc.loaded.dialect_override == dialect {
            return;
        }
        let source = doc.loaded.source.clone();
        self.load(source, Slot::Primary, dialect, true);
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
            Tab::Recorder => self.recorder_tab_ui(ui),
            Tab::Proxy => {
                let mut event = None;
                let proxy = &mut self.settings.proxy;
                egui::CentralPanel::default().show(ui, |ui| {
                    egui::ScrollArea::vertical()
                        .id_salt("proxy-tab")
                        .auto_shrink([false, false])
                        .show(ui, |ui| event = proxy.ui(ui));
                });
                self.panel_event(event);
            }
            Tab::TestClient => {
                let mut actions = Vec::new();
                let panel = &mut self.settings.client_test;
                egui::CentralPanel::default().show(ui, |ui| panel.ui(ui, &mut actions));
                self.actions.extend(actions);
            }
        }
        self.settings.client_test.poll(&ctx);
        if self.settings.tab != Tab::Recorder {
            // The recording keeps flowing to the Replay tab while its panel is hidden.
            let event = self.settings.recorder.poll(&ctx);
            self.panel_event(event);
        }
        let running = self.settings.recorder.is_running();
        if running && !self.recorder_was_running {
            self.live_follow = true;
        }
        self.recorder_was_running = running;
        self.picker_ui(&ctx);
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
            let (slot, name, t0, keep_view) = (l.slot, l.name.clone(), l.started, l.keep_view);
            self.loading = None;
            match result {
                Ok(Done::Loaded(loaded)) => self.finish_load(*loaded, slot, keep_view, t0),
                Ok(Done::Choose { path, recordings }) => {
                    self.remember_recent(&path);
                    self.set_status(
                        format!(
                            "{} holds {} streams: pick one to open",
                            short_name(&name),
                            recordings.len()
                        ),
                        false,
                    );
                    self.picker = Some(Picker { path, recordings });
                }
                Err(e) if e == "cancelled" => self.set_status(
                    format!("Cancelled opening {name}; the previous recording stays open"),
                    false,
                ),
                Err(e) => self.set_status(format!("Cannot open: {e}"), true),
            }
            if let Some(rec) = self.live_pending.take() {
                self.show_live(rec);
            }
        }
        let answer = self
            .pending_dialog
            .as_ref()
            .and_then(|(_, rx)| match rx.try_recv() {
                Ok(a) => Some(a),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => Some(None),
            });
        if let Some(answer) = answer
            && let Some((pending, _)) = self.pending_dialog.take()
            && let Some(path) = answer
        {
            self.dialog_answered(pending, path);
        }
    }

    fn finish_load(&mut self, loaded: Loaded, slot: Slot, keep_view: bool, t0: Instant) {
        let name = loaded.analysis.source.name.clone();
        if keep_view
            && slot == Slot::Primary
            && let Some(doc) = &mut self.doc
        {
            // A live update or another dialect: same recording, same view. While live, a cursor
            // at the end follows the end.
            let a = &loaded.analysis;
            let v = &mut doc.view;
            let at_end = v.cursor >= ViewState::last_chunk(&doc.loaded.analysis);
            v.cursor = if at_end && loaded.is_live() {
                ViewState::last_chunk(a)
            } else {
                v.cursor.min(ViewState::last_chunk(a))
            };
            if v.focus_fragment
                .is_some_and(|f| f as usize >= a.fragments.len())
            {
                v.focus_fragment = None;
            }
            if v.selected_call.is_some_and(|c| c >= a.calls.len()) {
                v.selected_call = None;
            }
            v.play_anchor = None;
            let text = (!loaded.is_live()).then(|| {
                format!(
                    "Analysed {} again as {}: {} calls",
                    short_name(&name),
                    a.dialect.title(),
                    a.calls.len()
                )
            });
            doc.loaded = loaded;
            match text {
                Some(text) => self.set_status(text, false),
                // Live: an old error no longer applies once updates arrive.
                None if self.status.as_ref().is_some_and(|s| s.error) => self.status = None,
                None => {}
            }
            self.recompare();
            return;
        }
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
        let live = loaded.is_live();
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
                        short_name(&name)
                    )));
                }
                self.doc = Some(Doc { loaded, view });
                self.first_frame_pending = Some(t0);
            }
            Slot::Second => self.second = Some(loaded),
        }
        self.recompare();
        if live {
            self.set_status("Showing the Recorder's recording as it arrives", false);
        } else {
            self.set_status(text, false);
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
                    if ui
                        .button("Import…")
                        .on_hover_text("A HAR file, a VCR cassette, a JSON-lines fixture or a raw SSE body (or drop one on the window)")
                        .clicked()
                    {
                        self.actions.push(Action::ImportDialog);
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
                        ui.label(RichText::new(format!("✗ {}", s.text)).color(style::err_color(ui)));
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
        let recording_live = self.settings.recorder.is_running() && doc.loaded.is_live();
        let dialect_override = doc.loaded.dialect_override;
        let client = self.client_case.as_ref().filter(
            |c| matches!(&doc.loaded.source, Source::Memory { name, .. } if *name == c.case),
        );
        let (a, d, v) = (&doc.loaded.analysis, &doc.loaded.derived, &mut doc.view);
        egui::Panel::top("replay-head").show(ui, |ui| {
            header_ui(ui, a, dialect_override, recording_live, &mut v.actions);
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
            .show(ui, |ui| {
                if let Some(c) = client {
                    ui.horizontal(|ui| {
                        if ui.selectable_label(c.shown, "Your client").clicked() {
                            v.actions.push(Action::ShowClientOutput(true));
                        }
                        if ui.selectable_label(!c.shown, "Naive strategies").clicked() {
                            v.actions.push(Action::ShowClientOutput(false));
                        }
                    });
                    if c.shown {
                        client_test_panel::client_ui(ui, a, c);
                        return;
                    }
                }
                naive_panel::naive_ui(ui, a, d, v);
            });
        egui::CentralPanel::default().show(ui, |ui| accumulator_panel::accumulator_ui(ui, a, d, v));
    }

    fn recorder_tab_ui(&mut self, ui: &mut Ui) {
        let mut event = None;
        let mut watch = None;
        let live_shown = self.doc.as_ref().is_some_and(|d| d.loaded.is_live());
        let following = self.live_follow;
        let recorder = &mut self.settings.recorder;
        egui::CentralPanel::default().show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("recorder-tab")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    event = recorder.ui(ui);
                    let Some(rec) = recorder.recording() else {
                        return;
                    };
                    ui.separator();
                    ui.horizontal_wrapped(|ui| {
                        if live_shown && following {
                            ui.label("The Replay tab shows this recording as it arrives.");
                        } else {
                            ui.label("The Replay tab shows another recording.");
                        }
                        if ui
                            .button("Watch in Replay")
                            .on_hover_text("Show this recording in the Replay tab, following its end while it records")
                            .clicked()
                        {
                            watch = Some(Box::new(rec.clone()));
                        }
                    });
                });
        });
        self.panel_event(event);
        if let Some(rec) = watch {
            self.live_follow = true;
            self.actions.push(Action::ShowLive(rec));
            self.actions.push(Action::ShowTab(Tab::Replay));
        }
    }

    /// Turn a Recorder/Proxy panel's request into actions.
    fn panel_event(&mut self, event: Option<PanelEvent>) {
        match event {
            Some(PanelEvent::Live(rec)) => self.actions.push(Action::ShowLive(Box::new(rec))),
            Some(PanelEvent::Open(path)) => {
                self.actions.push(Action::OpenPath(path, Slot::Primary));
                self.actions.push(Action::ShowTab(Tab::Replay));
            }
            Some(PanelEvent::SaveAs(rec)) => {
                self.actions.push(Action::SaveRecordingAs(Box::new(rec)));
            }
            None => {}
        }
    }

    /// The stream picker of a capture with several streams.
    fn picker_ui(&mut self, ctx: &egui::Context) {
        let Some(picker) = &self.picker else { return };
        let mut open = true;
        let mut actions = Vec::new();
        egui::Window::new("Choose a stream")
            .open(&mut open)
            .collapsible(false)
            // Below the menu and tabs, where the eye goes after choosing the file.
            .anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 110.0))
            .default_width(640.0)
            .show(ctx, |ui| {
                ui.label(format!(
                    "{} holds {} event streams. Open which one?",
                    short_name(&picker.path.display().to_string()),
                    picker.recordings.len()
                ));
                ui.separator();
                egui::ScrollArea::vertical()
                    .id_salt("picker")
                    .max_height(400.0)
                    .show(ui, |ui| {
                        for (i, rec) in picker.recordings.iter().enumerate() {
                            let title = if rec.meta.title.is_empty() {
                                format!("stream {}", i + 1)
                            } else {
                                rec.meta.title.clone()
                            };
                            if ui
                                .button(format!("{}. {title}", i + 1))
                                .on_hover_text("Open this stream in the player")
                                .clicked()
                            {
                                actions.push(Action::PickStream(i));
                            }
                            let url = rec
                                .request
                                .as_ref()
                                .map(|r| r.url.as_str())
                                .filter(|u| !u.is_empty() && !title.contains(u));
                            let mut details =
                                format!("{} events, {} bytes", rec.chunks.len(), rec.body_len());
                            if let Some(url) = url {
                                details = format!("{url} · {details}");
                            }
                            ui.weak(details);
                            ui.add_space(4.0);
                        }
                    });
            });
        if !open {
            actions.push(Action::ClosePicker);
        }
        self.actions.extend(actions);
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
                    let n = a.client_calls().count();
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
            Action::ImportDialog => {
                let spec = DialogSpec {
                    save: false,
                    title: "Import a capture (HAR, VCR cassette, JSON lines, SSE body)".into(),
                    file_name: String::new(),
                    filters: vec![
                        (
                            "Captures".into(),
                            vec![
                                "har".into(),
                                "yaml".into(),
                                "yml".into(),
                                "jsonl".into(),
                                "ndjson".into(),
                                "sse".into(),
                                "txt".into(),
                            ],
                        ),
                        ("Recordings".into(), vec!["ron".into()]),
                        ("All files".into(), vec!["*".into()]),
                    ],
                };
                self.ask(ctx, spec, Pending::Import);
            }
            Action::PickStream(i) => {
                let Some(mut picker) = self.picker.take() else {
                    return;
                };
                let n = picker.recordings.len();
                if i >= n {
                    return;
                }
                let recording = Box::new(picker.recordings.swap_remove(i));
                let name = format!("{} (stream {} of {n})", picker.path.display(), i + 1);
                self.settings.tab = Tab::Replay;
                self.open(Source::Memory { name, recording }, Slot::Primary);
            }
            Action::ClosePicker => self.picker = None,
            Action::ShowClientOutput(shown) => {
                if let Some(c) = &mut self.client_case {
                    c.shown = shown;
                }
            }
            Action::OpenTestCase(i) => match self.settings.client_test.case_recording(i) {
                Some((name, rec)) => {
                    self.client_case = self.settings.client_test.case_output(i);
                    self.settings.tab = Tab::Replay;
                    let recording = Box::new(rec);
                    self.open(Source::Memory { name, recording }, Slot::Primary);
                }
                None => self.set_status("That case is no longer available", true),
            },
            Action::SetDialect(kind) => self.reanalyse(kind),
            Action::ShowLive(rec) => self.show_live(rec),
            Action::SaveRecordingAs(rec) => {
                let stem = if rec.meta.title.is_empty() {
                    "recording".to_owned()
                } else {
                    file_stem_of(&rec.meta.title)
                };
                let spec = DialogSpec {
                    save: true,
                    title: "Save the recording".into(),
                    file_name: format!("{stem}.ron"),
                    filters: vec![("Recording".into(), vec!["ron".into()])],
                };
                self.ask(ctx, spec, Pending::SaveRecording(rec));
            }
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
            Pending::Import => {
                self.settings.tab = Tab::Replay;
                self.open(Source::Import(path), Slot::Primary);
            }
            Pending::SaveRecording(rec) => match crate::recording::save(&path, &rec) {
                Ok(()) => {
                    self.set_status(format!("Saved the recording to {}", path.display()), false)
                }
                Err(e) => self.set_status(format!("Cannot save the recording: {e:#}"), true),
            },
            Pending::ExportCalls(f) => {
                let Some(a) = self.analysis() else { return };
                let (text, n) = (export::render(&a.calls, f), a.client_calls().count());
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
        // The Save dialog asked before replacing a file: overwriting is confirmed.
        let options = crate::recording::WriteOptions::public(true);
        match crate::recording::write_file(path, bytes, options) {
            Ok(()) => self.set_status(format!("Exported {what} to {}", path.display()), false),
            Err(e) => self.set_status(format!("Cannot write {what}: {e}"), true),
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

/// The Replay header: title, live badge, source, the dialect (named, overridable), framing, and
/// the recording's notes (imports keep no read boundaries: a badge says so).
fn header_ui(
    ui: &mut Ui,
    a: &Analysis,
    dialect_override: Option<DialectKind>,
    recording_live: bool,
    actions: &mut Vec<Action>,
) {
    ui.horizontal_wrapped(|ui| {
        let title = if a.meta.title.is_empty() {
            short_name(&a.source.name)
        } else {
            a.meta.title.clone()
        };
        ui.label(RichText::new(title).strong().size(16.0));
        if recording_live {
            ui.label(
                RichText::new("● live")
                    .strong()
                    .color(egui::Color32::WHITE)
                    .background_color(egui::Color32::from_rgb(200, 40, 40)),
            )
            .on_hover_text("Recording: the panels follow the stream as it arrives");
        }
        ui.weak(format!(
            "{} · {} · {} ({}) · {} bytes",
            short_name(&a.source.name),
            a.source.kind,
            a.framing.name(),
            if a.source.timing_known {
                "recorded reads"
            } else {
                "one chunk per event"
            },
            a.body.len()
        ));
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("Dialect:");
        ui.label(RichText::new(a.dialect.title()).strong());
        if dialect_override.is_some() {
            ui.label(RichText::new("(forced)").color(style::warn_color(ui)))
                .on_hover_text("You chose this dialect; pick \"detect\" to go back");
        } else if !a.dialect_known {
            ui.label(RichText::new("(guessed)").color(style::warn_color(ui)))
                .on_hover_text("No event in the stream identified the dialect; this is the default. Force another one if the calls look wrong.");
        }
        egui::ComboBox::from_id_salt("dialect-override")
            .selected_text(if dialect_override.is_some() { "forced" } else { "detect" })
            .width(90.0)
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(dialect_override.is_none(), "detect")
                    .on_hover_text("Detect the dialect from the stream (and the recording's metadata)")
                    .clicked()
                {
                    actions.push(Action::SetDialect(None));
                }
                for k in DialectKind::ALL {
                    if ui
                        .selectable_label(dialect_override == Some(k), k.title())
                        .clicked()
                    {
                        actions.push(Action::SetDialect(Some(k)));
                    }
                }
            })
            .response
            .on_hover_text("Force another dialect: the stream is analysed again");
        let (boundary_notes, other_notes): (Vec<&String>, Vec<&String>) = a
            .meta
            .notes
            .iter()
            .partition(|n| n.contains("chunk boundaries") || n.contains("read boundaries"));
        if !a.source.timing_known {
            ui.separator();
            let tip = if boundary_notes.is_empty() {
                "This recording keeps no network read boundaries or timing: it is shown as one chunk per event, and the strategies that need real reads cannot run.".to_owned()
            } else {
                boundary_notes
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            ui.add(
                egui::Button::new(
                    RichText::new("no read boundaries")
                        .small()
                        .color(style::warn_color(ui)),
                )
                .stroke(egui::Stroke::new(1.0, style::warn_color(ui)))
                .corner_radius(8.0)
                .small(),
            )
            .on_hover_text(tip);
        }
        if !other_notes.is_empty() {
            // One line: the notes can be long (stub recordings explain their shape).
            let all = other_notes
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join("\n\n");
            let first = other_notes[0].as_str();
            let mut shown = crate::dialect::truncate(first, 90);
            if other_notes.len() > 1 && shown == first {
                shown.push_str(" …");
            }
            ui.weak(shown).on_hover_ui(|ui| {
                ui.set_max_width(520.0);
                ui.label(all);
            });
        }
    });
}

/// A file-name stem from a title: letters, digits, `-` and `_` only, at most 60 characters.
fn file_stem_of(title: &str) -> String {
    let stem: String = title
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let stem = stem.trim_matches('-');
    if stem.is_empty() {
        "recording".into()
    } else {
        stem.into()
    }
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
