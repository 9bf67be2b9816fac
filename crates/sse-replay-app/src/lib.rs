//! The desktop app (egui/eframe). A thin shell over the core: it opens recordings through one
//! function ([`App::open`]) on a background thread, keeps one immutable [`Analysis`] per recording
//! plus a mutable [`ViewState`], and draws panels that read both.
//!
//! Laid out the way rerun lays out its viewer:
//! - `state`: what persists between runs ([`Settings`]: choices and the Recorder, Proxy and
//!   "Test a client" *forms*; never recording data, secrets or running state);
//! - `logic`: what happens between frames (opening, background loads finishing, live updates,
//!   answered dialogs, frame timing);
//! - `ui`: drawing one frame (menu, tabs, status bar, the Replay header, the stream picker);
//! - `commands`: applying the queue.
//!
//! Every intent (a click in any panel, a menu, a key, a drop, a background update) is pushed as an
//! [`Action`] onto the one [`ActionQueue`]; the app applies it after drawing. The *runs* behind the
//! forms ([`recorder::RecorderRun`], [`proxy_panel::ProxyRun`],
//! [`client_test_panel::ClientTestRun`]: threads, channels, handles) are owned by [`App`] at
//! runtime and never persisted.
//!
//! Panels, one file each: [`player`] (transport), [`naive_panel`] and [`accumulator_panel`] (the
//! side-by-side comparison), [`timeline`], [`raw_view`], [`compare_panel`] (two recordings),
//! [`stub_panel`], [`about`], [`recorder`] (its recording so far shows live in the Replay panels),
//! [`proxy_panel`] and [`client_test_panel`].

pub mod about;
pub mod accumulator_panel;
pub mod captures;
pub mod client_test_panel;
pub mod compare_docs;
pub mod compare_panel;
pub mod corpus_panel;
pub mod dialogs;
pub mod event_inspector;
pub mod headline;
pub mod json_tree;
pub mod layout;
pub mod loader;
pub mod naive_panel;
pub mod persist;
pub mod player;
pub mod preview_panel;
pub mod proxy_list;
pub mod proxy_panel;
pub mod raw_view;
pub mod recorder;
pub mod shortcuts;
pub mod stub_panel;
pub mod style;
pub mod timeline;
pub mod view;

mod commands;
mod logic;
mod state;
mod ui;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use egui::Ui;

use sse_replay_core::analysis::Analysis;
use sse_replay_core::compare::Comparison;
use sse_replay_core::recording::Recording;

use commands::DialogPurpose;
use logic::Perf;
use proxy_panel::ProxyRun;
use recorder::RecorderRun;

pub use commands::BUILTIN_NOTE;
pub use dialogs::{BuiltinDialog, DialogSpec, FileDialogs, NativeDialogs, ScriptedDialogs};
pub use loader::{LaterDone, LaterState, LoadError, LoadResult, Loaded, Source};
pub use state::Settings;
pub use ui::format_label;
pub use view::{Action, ActionQueue, CursorTables, OpenTarget, StepUnit, Tab, ViewState};

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

/// A capture with several streams, waiting for the user to pick one.
#[derive(Debug)]
pub struct StreamPicker {
    /// The file they came from.
    pub path: PathBuf,
    pub recordings: Vec<Recording>,
}

/// The app.
pub struct App {
    pub settings: Settings,
    /// The recording the player shows.
    pub doc: Option<Doc>,
    /// "Compare two"'s own recordings A and B (never the Replay document).
    pub compare: compare_docs::CompareDocs,
    loading: Option<loader::Loading>,
    pub status: Option<Status>,
    dialogs: Box<dyn FileDialogs>,
    pending_dialog: Option<(DialogPurpose, mpsc::Receiver<Option<PathBuf>>)>,
    /// The in-app file browser, open, when no native dialog can be shown.
    builtin_dialog: Option<(DialogPurpose, dialogs::BuiltinDialog)>,
    /// The status line has said once that the in-app browser replaces the native dialog.
    builtin_noted: bool,
    /// A save in the in-app browser chose an existing file: replace it only when confirmed.
    confirm_replace: Option<(DialogPurpose, PathBuf)>,
    pub stub: stub_panel::StubForm,
    pub show_about: bool,
    /// Help → Keyboard shortcuts is open.
    pub show_shortcuts: bool,
    /// The stream picker of a multi-stream capture, while open.
    pub picker: Option<StreamPicker>,
    /// The newest live recording, waiting for the loader to be free (live updates coalesce).
    live_pending: Option<Box<Recording>>,
    /// Live updates replace the Replay recording: set when a recording starts (or on "Watch in
    /// Replay"), cleared when the user opens something else.
    live_follow: bool,
    recorder_was_running: bool,
    /// What the tested client printed for the case opened from "Test a client" (shown in Replay
    /// while that case is open).
    pub client_case: Option<client_test_panel::ClientOutput>,
    /// The Recorder's running recording (its form is `settings.recorder`).
    pub recorder: RecorderRun,
    /// The running proxy and its sessions (its form is `settings.proxy`).
    pub proxy: ProxyRun,
    /// The "Test a client" run in progress and the last finished one (its form is
    /// `settings.client_test`).
    pub client_test: client_test_panel::ClientTestRun,
    /// The Corpus tab: a folder of captures as a table and charts (runtime only).
    pub corpus: corpus_panel::CorpusPanel,
    /// Stream `n` of this capture is to be opened once its streams are listed
    /// ([`Action::OpenStream`]).
    pick_stream: Option<(PathBuf, usize)>,
    /// The one action queue: menus, keys, drops, every panel and the background polls push
    /// here while a frame is drawn; [`App::ui_root`] applies it after drawing.
    pub actions: ActionQueue,
    initial: Option<Source>,
    ctx: Option<egui::Context>,
    first_frame_pending: Option<Instant>,
    perf: Perf,
    /// A body at least this big is shown before its naive strategies and previews are computed
    /// ([`loader::STAGE_MIN_BYTES`]; the GUI tests set 0 to see the "computing…" state).
    pub stage_min_bytes: u64,
    /// Test seam: while set, a finished load is not picked up (the app stays "loading").
    pub hold_load: bool,
    /// Test seam: while set, a finished second stage (strategies, previews) is not put in.
    pub hold_later: bool,
    /// Where the settings are saved ([`persist`]); `None`: not saved (tests, no data folder).
    pub settings_path: Option<PathBuf>,
    /// The settings file's text as last written (an unchanged one is not written again).
    settings_written: Option<String>,
}

/// When the process started ([`mark_process_start`]), for `timing: first full frame`.
static PROCESS_START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// Remember now as the process start (the binary calls it first thing in `main`); the first
/// full frame is timed from here (from the app's creation when never called).
pub fn mark_process_start() {
    PROCESS_START.set(Instant::now()).ok();
}

impl Default for App {
    fn default() -> Self {
        Self::new(Settings::default(), Box::new(NativeDialogs))
    }
}

impl App {
    /// An app with these settings and dialogs, nothing open.
    pub fn new(settings: Settings, dialogs: Box<dyn FileDialogs>) -> Self {
        let _ = process_start();
        Self {
            settings,
            doc: None,
            compare: compare_docs::CompareDocs::default(),
            loading: None,
            status: None,
            dialogs,
            pending_dialog: None,
            builtin_dialog: None,
            builtin_noted: false,
            confirm_replace: None,
            stub: stub_panel::StubForm::default(),
            show_about: false,
            show_shortcuts: false,
            picker: None,
            live_pending: None,
            live_follow: false,
            recorder_was_running: false,
            client_case: None,
            recorder: RecorderRun::default(),
            proxy: ProxyRun::default(),
            client_test: client_test_panel::ClientTestRun::default(),
            corpus: corpus_panel::CorpusPanel::default(),
            pick_stream: None,
            actions: ActionQueue::default(),
            initial: None,
            ctx: None,
            first_frame_pending: None,
            perf: Perf::new(),
            stage_min_bytes: loader::STAGE_MIN_BYTES,
            hold_load: false,
            hold_later: false,
            settings_path: None,
            settings_written: None,
        }
    }

    /// Open `source` on the first frame (the CLI argument, or the bundled seed).
    /// A file named at start is what the user wants to see: the Replay tab, whatever tab was
    /// last used.
    pub fn with_initial(mut self, source: Source) -> Self {
        if matches!(source, Source::File(_)) {
            self.settings.tab = view::Tab::Replay;
        }
        self.initial = Some(source);
        self
    }

    /// For eframe: the saved settings (`persisted`, else an older version's from eframe's
    /// storage) and egui's saved memory put back ([`App::restored`]), the first source.
    pub fn from_creation(
        cc: &eframe::CreationContext<'_>,
        source: Source,
        persisted: Option<persist::Persisted>,
    ) -> Self {
        let dir = persist::default_dir();
        let (settings, memory) = match persisted {
            Some(p) => (p.settings, p.memory),
            None => {
                let old = dir
                    .as_deref()
                    .and_then(|d| persist::take_over_old(d, cc.storage));
                (old.unwrap_or_default(), None)
            }
        };
        let mut app = Self::restored(&cc.egui_ctx, settings, memory, Box::new(NativeDialogs))
            .with_initial(source);
        app.settings_path = dir.as_deref().map(persist::settings_path);
        app
    }

    /// An app on `ctx` as a launch makes it: the saved `settings`, egui's saved `memory` (panel
    /// sizes, folded sections, the theme) put back, then the app's fonts. In that order: egui
    /// keeps fonts set before a pass in its memory until the pass starts, so restoring the
    /// memory after them would drop them (every CJK character and ✓ drawn as a box from the
    /// second launch on). [`style::ensure_fonts`] checks again on every frame.
    pub fn restored(
        ctx: &egui::Context,
        mut settings: Settings,
        memory: Option<egui::Memory>,
        dialogs: Box<dyn FileDialogs>,
    ) -> Self {
        captures::upgrade(&mut settings.recorder.out_dir);
        captures::upgrade(&mut settings.proxy.out_dir);
        if let Some(memory) = memory {
            ctx.memory_mut(|m| *m = memory);
        }
        // Scroll offsets are view state: never restored from a previous run (panel sizes stay).
        ctx.data_mut(|d| d.remove_by_type::<egui::scroll_area::State>());
        style::install_fonts(ctx);
        let mut app = Self::new(settings, dialogs);
        app.ctx = Some(ctx.clone());
        app
    }

    /// A load is running (Replay's, or one of Compare two's).
    pub fn is_loading(&self) -> bool {
        self.loading.is_some() || self.compare.is_loading()
    }

    /// The open analysis.
    pub fn analysis(&self) -> Option<&Analysis> {
        self.doc.as_ref().map(|d| &*d.loaded.analysis)
    }

    /// The open recording's view state.
    pub fn view(&self) -> Option<&ViewState> {
        self.doc.as_ref().map(|d| &d.view)
    }

    /// The open recording's view state, mutable.
    pub fn view_mut(&mut self) -> Option<&mut ViewState> {
        self.doc.as_mut().map(|d| &mut d.view)
    }

    /// The in-app file browser is open (no native dialog could be shown).
    pub fn builtin_dialog_open(&self) -> bool {
        self.builtin_dialog.is_some()
    }

    /// The alignment of Compare two's recordings, when both are open.
    pub fn comparison(&self) -> Option<&Comparison> {
        self.compare.comparison()
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.ui_root(ui);
    }

    fn save(&mut self, _storage: &mut dyn eframe::Storage) {
        // The app's own file, not eframe's storage (see `persist`).
        self.save_settings();
    }

    fn persist_egui_memory(&self) -> bool {
        // Saved in the app's own settings file.
        false
    }
}

/// When the process started: [`mark_process_start`], else the first time this is asked.
pub(crate) fn process_start() -> Instant {
    *PROCESS_START.get_or_init(Instant::now)
}

/// Start the desktop app on `file`, or on the bundled seed example; returns when its window
/// closes, or the reason it could not start.
pub fn run(file: Option<PathBuf>) -> Result<(), eframe::Error> {
    let persisted = persist::default_dir().and_then(|d| persist::load(&persist::settings_path(&d)));
    let size = persisted
        .as_ref()
        .and_then(|p| p.window)
        .filter(|[w, h]| *w >= 400.0 && *h >= 300.0)
        .unwrap_or([1500.0, 940.0]);
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("sse-replay")
        .with_inner_size(size)
        .with_min_inner_size([800.0, 500.0])
        .with_drag_and_drop(true);
    if let Ok(icon) = eframe::icon_data::from_png_bytes(style::ICON_PNG) {
        viewport = viewport.with_icon(std::sync::Arc::new(icon));
    }
    let options = eframe::NativeOptions {
        viewport,
        // The window's size is in the app's own settings file.
        persist_window: false,
        ..Default::default()
    };
    let source = file.map_or(Source::Seed, Source::File);
    eframe::run_native(
        persist::APP_ID,
        options,
        Box::new(move |cc| Ok(Box::new(App::from_creation(cc, source, persisted)))),
    )
}
