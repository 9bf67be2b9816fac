//! The app's settings on disk. The app writes them itself rather than through eframe's storage
//! (whose `app.ron` is created with the default mode and rewritten in place): one file,
//! [`SETTINGS_FILE`] in the app's data folder, written atomically and privately (`0600`) by the
//! core's safe writer ([`sse_replay_core::recording::write_file`]).
//!
//! Nothing secret gets there: the forms serialize their secrets redacted ([`redacted`]: the URL,
//! header and body rules of recordings, [`sse_replay_core::redact`]), so no serializer — this
//! file, a test, a future export of settings — can write one. `$VAR` references stay: they say
//! where a key comes from, not what it is.
//!
//! The file holds the settings, egui's memory (panel sizes, folded sections, the theme) and the
//! window's size; settings of an older version (eframe's `app.ron`) are taken over once and
//! that file removed, since it may hold a key in plain text.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{App, Settings};
use sse_replay_core::recording::{RecordingError, WriteOptions};

/// The settings file's name, in the app's data folder ([`default_dir`]).
pub const SETTINGS_FILE: &str = "settings.ron";

/// The app's id for the platform's data folder (as eframe names it).
pub const APP_ID: &str = "sse-replay";

/// The file eframe's storage wrote before the app wrote its own (taken over, then removed).
const OLD_FILE: &str = "app.ron";

/// What the settings file holds.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct Persisted {
    pub settings: Settings,
    /// egui's memory: panel sizes, folded sections, the theme.
    pub memory: Option<egui::Memory>,
    /// The window's inner size in points.
    pub window: Option<[f32; 2]>,
}

/// [`Persisted`] by reference, for writing.
#[derive(Serialize)]
struct PersistedRef<'a> {
    settings: &'a Settings,
    memory: Option<&'a egui::Memory>,
    window: Option<[f32; 2]>,
}

/// The app's data folder: `~/.local/share/sse-replay` on Linux (`XDG_DATA_HOME`),
/// `~/Library/Application Support/sse-replay` on macOS, `%APPDATA%\sse-replay\data` on Windows.
pub fn default_dir() -> Option<PathBuf> {
    eframe::storage_dir(APP_ID)
}

/// The settings file in `dir`.
pub fn settings_path(dir: &Path) -> PathBuf {
    dir.join(SETTINGS_FILE)
}

/// What the settings file at `path` holds; `None` when there is none or it cannot be read (the
/// app then starts with defaults, as on a first run).
pub fn load(path: &Path) -> Option<Persisted> {
    let text = std::fs::read_to_string(path).ok()?;
    ron::from_str(&text).ok()
}

/// The settings saved at `path`, if any.
pub fn load_settings(path: &Path) -> Option<Settings> {
    load(path).map(|p| p.settings)
}

/// Settings an older version kept in eframe's storage (`app.ron` in `dir`): read once, then the
/// old file is removed (it may hold a key in plain text, readable by others). `None` when there
/// were none.
pub fn take_over_old(dir: &Path, storage: Option<&dyn eframe::Storage>) -> Option<Settings> {
    let settings = storage.and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY))?;
    let old = dir.join(OLD_FILE);
    if let Err(e) = std::fs::remove_file(&old)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        sse_replay_core::log_line!(
            "sse-replay: cannot remove the old settings file {}: {e}",
            old.display()
        );
    }
    Some(settings)
}

impl App {
    /// The settings file's text: settings (secrets redacted as they serialize), egui's memory
    /// and the window size.
    fn settings_text(&self) -> Result<String, ron::Error> {
        let window = self.ctx.as_ref().and_then(|ctx| {
            ctx.input(|i| i.viewport().inner_rect)
                .map(|r| [r.width(), r.height()])
        });
        let write = |memory: Option<&egui::Memory>| {
            let data = PersistedRef {
                settings: &self.settings,
                memory,
                window,
            };
            ron::ser::to_string_pretty(&data, ron::ser::PrettyConfig::default())
        };
        match &self.ctx {
            Some(ctx) => ctx.memory(|m| write(Some(m))),
            None => write(None),
        }
    }

    /// Write the settings to `path`: secrets redacted, atomically, `0600`, replacing the
    /// previous file.
    pub fn save_settings_to(&self, path: &Path) -> Result<(), RecordingError> {
        let io = |op: &'static str, source: std::io::Error| RecordingError::Io {
            op,
            path: path.to_path_buf(),
            source,
        };
        let text = self
            .settings_text()
            .map_err(|e| io("serializing the settings for", std::io::Error::other(e)))?;
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| io("creating the folder of", e))?;
        }
        sse_replay_core::recording::write_file(path, text.as_bytes(), WriteOptions::private(true))
    }

    /// Write the settings to the app's settings file, when it has one and they changed since the
    /// last write (eframe asks every 30 s and at exit).
    pub(crate) fn save_settings(&mut self) {
        let Some(path) = self.settings_path.clone() else {
            return;
        };
        let Ok(text) = self.settings_text() else {
            return;
        };
        if self.settings_written.as_deref() == Some(text.as_str()) {
            return;
        }
        match self.save_settings_to(&path) {
            Ok(()) => self.settings_written = Some(text),
            Err(e) => {
                sse_replay_core::log_line!("sse-replay: cannot save the settings: {e}");
            }
        }
    }
}

/// Serializers that write a form's secrets redacted (used with `#[serde(serialize_with)]`).
pub mod redacted {
    use serde::Serializer;
    use sse_replay_core::redact;

    /// A URL with its credentials redacted ([`redact::redact_url`]).
    pub fn url<S: Serializer>(url: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&redact::redact_url(url))
    }

    /// A request body with its secret fields redacted ([`redact::redact_body`]).
    pub fn body<S: Serializer>(body: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&redact::redact_body(body))
    }

    /// Whether a header value may be written: a `$VAR` reference always; otherwise only when
    /// neither the row (ticked secret), its name, nor the value itself (a key, or one inside it)
    /// says it is a secret.
    pub fn header_value_kept(name: &str, value: &str, secret: bool) -> bool {
        redact::is_env_reference(value)
            || !(secret || redact::is_secret_header(name) || redact::contains_credential(value))
    }
}
