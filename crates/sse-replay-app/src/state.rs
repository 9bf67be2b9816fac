//! What persists between runs (eframe storage): settings and forms, never recording data,
//! secrets or running state.

use std::path::{Path, PathBuf};

use sse_replay_core::naive::Strategy;

use super::proxy_panel::ProxyForm;
use super::recorder::RecorderForm;
use super::view::Tab;
use super::{App, client_test_panel};

/// At most this many recent files are remembered.
const RECENT_MAX: usize = 10;

/// What eframe storage keeps between runs: choices and forms only, never recording data, secret
/// header values or running state (the runs behind the forms are `App`'s, see [`super::App`]).
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
    /// The Replay tab's lower area: the timeline, the event list or the bytes as received.
    pub lower_view: super::layout::LowerView,
    /// The lower area folded to its tab row.
    pub lower_folded: bool,
    /// "Bytes as received" wraps long reads onto several lines (else one line each, scrolled
    /// sideways).
    pub wrap_bytes: bool,
    /// View → Theme: light, dark, or the system's.
    pub theme: egui::ThemePreference,
    /// The Recorder form (URL, headers without secret values, body, output folder).
    pub recorder: RecorderForm,
    /// The Proxy form (listen address, upstream, output folder).
    pub proxy: ProxyForm,
    /// The "Test a client" form (command line, recordings, variants).
    pub client_test: client_test_panel::ClientTestForm,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            recent: Vec::new(),
            speed: 0.25,
            strategy: Strategy::PerFragment.name().into(),
            tab: Tab::Replay,
            lower_view: Default::default(),
            lower_folded: false,
            wrap_bytes: false,
            theme: egui::ThemePreference::System,
            recorder: RecorderForm::default(),
            proxy: ProxyForm::default(),
            client_test: client_test_panel::ClientTestForm::default(),
        }
    }
}

impl App {
    pub(super) fn remember_recent(&mut self, p: &Path) {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        self.settings.recent.retain(|q| q != &p);
        self.settings.recent.insert(0, p);
        self.settings.recent.truncate(RECENT_MAX);
    }
}
