//! Native file dialogs behind a trait, so tests can replace them (the test seam). The native
//! implementation runs the blocking rfd dialog on a worker thread and hands the answer back over a
//! channel; the UI thread never blocks.
//!
//! When no native dialog can be shown (Linux without an xdg-desktop-portal file chooser and
//! without `zenity`, common on minimal installs and over SSH) rfd answers "cancelled" at once; the
//! app asks [`FileDialogs::native_available`] first and shows [`BuiltinDialog`] (the `egui_file`
//! browser, drawn inside the window) instead.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc;

/// What to ask the user for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialogSpec {
    /// Save dialog (else open).
    pub save: bool,
    pub title: String,
    /// Suggested file name (save dialogs).
    pub file_name: String,
    /// Filters: (label, extensions).
    pub filters: Vec<(String, Vec<String>)>,
}

/// Something that can ask the user for a path. `wake` must be called once the answer is sent.
pub trait FileDialogs {
    /// A native dialog can be shown; when `false` the app uses the in-app browser.
    fn native_available(&self) -> bool {
        true
    }

    /// Start a dialog; the answer (`None` = cancelled) arrives on the returned channel.
    fn ask(
        &mut self,
        spec: DialogSpec,
        wake: Box<dyn Fn() + Send>,
    ) -> mpsc::Receiver<Option<PathBuf>>;

    /// Start a folder picker titled `title`; the answer (`None` = cancelled) arrives on the
    /// returned channel. Dialogs that cannot pick folders answer `None` (the path can be typed).
    fn ask_folder(
        &mut self,
        title: String,
        wake: Box<dyn Fn() + Send>,
    ) -> mpsc::Receiver<Option<PathBuf>> {
        let _ = title;
        let (tx, rx) = mpsc::channel();
        tx.send(None).ok();
        wake();
        rx
    }
}

/// The real dialogs (rfd), each on its own thread.
#[derive(Debug, Default)]
pub struct NativeDialogs;

impl FileDialogs for NativeDialogs {
    fn native_available(&self) -> bool {
        static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVAILABLE.get_or_init(native_dialog_available)
    }

    fn ask(
        &mut self,
        spec: DialogSpec,
        wake: Box<dyn Fn() + Send>,
    ) -> mpsc::Receiver<Option<PathBuf>> {
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("sse-replay-dialog".into())
            .spawn(move || {
                let mut d = rfd::FileDialog::new().set_title(&spec.title);
                for (label, exts) in &spec.filters {
                    d = d.add_filter(label, exts);
                }
                let answer = if spec.save {
                    d.set_file_name(&spec.file_name).save_file()
                } else {
                    d.pick_file()
                };
                tx.send(answer).ok();
                wake();
            });
        if spawned.is_err() {
            // The sender was moved into the failed closure and dropped: the receiver reports
            // "disconnected", which the app treats as cancelled.
        }
        rx
    }

    fn ask_folder(
        &mut self,
        title: String,
        wake: Box<dyn Fn() + Send>,
    ) -> mpsc::Receiver<Option<PathBuf>> {
        let (tx, rx) = mpsc::channel();
        // A failed spawn drops the sender: "disconnected" reads as cancelled.
        std::thread::Builder::new()
            .name("sse-replay-dialog".into())
            .spawn(move || {
                let answer = rfd::FileDialog::new().set_title(&title).pick_folder();
                tx.send(answer).ok();
                wake();
            })
            .ok();
        rx
    }
}

/// Scripted answers for tests: each dialog takes the next answer at once; the specs asked for are
/// kept so a test can check what was asked.
#[derive(Debug, Default)]
pub struct ScriptedDialogs {
    pub answers: VecDeque<Option<PathBuf>>,
    pub asked: std::sync::Arc<std::sync::Mutex<Vec<DialogSpec>>>,
    /// Pretend no native dialog can be shown (the app falls back to the in-app browser).
    pub no_native: bool,
}

impl ScriptedDialogs {
    /// Dialogs that answer with these paths, in order (then `None`).
    pub fn new(answers: impl IntoIterator<Item = Option<PathBuf>>) -> Self {
        Self {
            answers: answers.into_iter().collect(),
            asked: Default::default(),
            no_native: false,
        }
    }

    /// Dialogs on a machine where no native dialog can be shown.
    pub fn without_native() -> Self {
        Self {
            no_native: true,
            ..Self::default()
        }
    }
}

impl FileDialogs for ScriptedDialogs {
    fn native_available(&self) -> bool {
        !self.no_native
    }

    fn ask(
        &mut self,
        spec: DialogSpec,
        wake: Box<dyn Fn() + Send>,
    ) -> mpsc::Receiver<Option<PathBuf>> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(spec);
        }
        let (tx, rx) = mpsc::channel();
        tx.send(self.answers.pop_front().flatten()).ok();
        wake();
        rx
    }

    fn ask_folder(
        &mut self,
        title: String,
        wake: Box<dyn Fn() + Send>,
    ) -> mpsc::Receiver<Option<PathBuf>> {
        self.ask(
            DialogSpec {
                save: false,
                title,
                file_name: String::new(),
                filters: Vec::new(),
            },
            wake,
        )
    }
}

/// Whether rfd can show a dialog here. `SSE_REPLAY_DIALOG=builtin` forces the in-app browser,
/// `=native` the native one. On Linux and the BSDs rfd asks the xdg-desktop-portal over D-Bus and
/// falls back to `zenity`; with neither it answers "cancelled" without showing anything.
fn native_dialog_available() -> bool {
    match std::env::var("SSE_REPLAY_DIALOG").as_deref() {
        Ok("builtin") => return false,
        Ok("native") => return true,
        _ => {}
    }
    if !cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd"
    )) {
        return true;
    }
    on_path("zenity") || portal_file_chooser()
}

/// An executable called `name` is on `PATH`.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths)
            .any(|dir| std::fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file()))
    })
}

/// A session bus is there, the portal can be D-Bus activated, and a portal backend implements the
/// file chooser (xdg-desktop-portal-gtk, -gnome, -kde, -wlr does not).
fn portal_file_chooser() -> bool {
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some()
        || std::env::var_os("XDG_RUNTIME_DIR")
            .is_some_and(|d| PathBuf::from(d).join("bus").exists());
    if !bus {
        return false;
    }
    let data_dirs = std::env::var("XDG_DATA_DIRS")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    let dirs: Vec<PathBuf> = std::env::split_paths(&data_dirs).collect();
    let service = dirs.iter().any(|d| {
        d.join("dbus-1/services/org.freedesktop.portal.Desktop.service")
            .exists()
    });
    service
        && dirs.iter().any(|d| {
            std::fs::read_dir(d.join("xdg-desktop-portal/portals")).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    std::fs::read_to_string(e.path())
                        .is_ok_and(|t| t.contains("org.freedesktop.impl.portal.FileChooser"))
                })
            })
        })
}

/// The in-app file browser (`egui_file`), used when no native dialog can be shown.
pub struct BuiltinDialog {
    inner: egui_file::FileDialog,
    /// A save dialog: an existing file is replaced only after a confirmation (the native dialogs
    /// ask; egui_file does not).
    save: bool,
}

impl std::fmt::Debug for BuiltinDialog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinDialog").finish_non_exhaustive()
    }
}

impl BuiltinDialog {
    /// A browser for `spec`, open, starting in `start` (a directory).
    pub fn new(spec: &DialogSpec, start: Option<PathBuf>) -> Self {
        let mut d = if spec.save {
            egui_file::FileDialog::save_file().default_filename(spec.file_name.clone())
        } else {
            egui_file::FileDialog::open_file()
        };
        d = d
            .title(&spec.title)
            .id(egui::Id::unique("sse-replay-builtin-dialog"))
            .default_size(egui::vec2(640.0, 480.0))
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .keep_on_top(true)
            .show_rename(false);
        if let Some(dir) = start {
            d = d.initial_path(dir);
        }
        let exts: Vec<String> = spec
            .filters
            .iter()
            .flat_map(|(_, e)| e.iter().map(|x| x.to_ascii_lowercase()))
            .collect();
        if !spec.save && !exts.is_empty() && !exts.iter().any(|e| e == "*") {
            d = d.show_files_filter(Box::new(move |p: &std::path::Path| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| exts.iter().any(|x| x.eq_ignore_ascii_case(e)))
            }));
        }
        d.open();
        Self {
            inner: d,
            save: spec.save,
        }
    }

    /// A folder chooser (the captures folder), open, starting in `start`.
    pub fn folder(title: &str, start: Option<PathBuf>) -> Self {
        let mut d = egui_file::FileDialog::select_folder()
            .title(title)
            .id(egui::Id::unique("sse-replay-builtin-dialog"))
            .default_size(egui::vec2(640.0, 480.0))
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .keep_on_top(true)
            .show_rename(false);
        if let Some(dir) = start {
            d = d.initial_path(dir);
        }
        d.open();
        Self {
            inner: d,
            save: false,
        }
    }

    /// Draw the browser. `None` while it is open; then `Some(answer)` (`None` = cancelled).
    pub fn show(&mut self, ctx: &egui::Context) -> Option<Option<PathBuf>> {
        match self.inner.show(ctx).state() {
            egui_file::State::Open => None,
            egui_file::State::Selected => Some(self.inner.path().map(|p| p.to_path_buf())),
            egui_file::State::Cancelled | egui_file::State::Closed => Some(None),
        }
    }
}

impl super::App {
    /// Draw the in-app browser and, for a save onto an existing file, the confirmation; hand the
    /// answer to the dialog's purpose.
    pub(super) fn builtin_dialog_ui(&mut self, ctx: &egui::Context) {
        if let Some((_, dialog)) = &mut self.builtin_dialog
            && let Some(answer) = dialog.show(ctx)
        {
            let save = dialog.save;
            if let Some((pending, _)) = self.builtin_dialog.take()
                && let Some(path) = answer
            {
                if save && path.exists() {
                    self.confirm_replace = Some((pending, path));
                } else {
                    self.dialog_answered(pending, path);
                }
            }
        }
        let Some((_, path)) = &self.confirm_replace else {
            return;
        };
        let mut choice = None;
        egui::Window::new("Replace the file?")
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .show(ctx, |ui| {
                ui.label(format!("{} exists. Replace it?", path.display()));
                ui.horizontal(|ui| {
                    if ui.button("Replace").clicked() {
                        choice = Some(true);
                    }
                    if ui.button("Cancel").clicked() {
                        choice = Some(false);
                    }
                });
            });
        match choice {
            Some(true) => {
                if let Some((pending, path)) = self.confirm_replace.take() {
                    self.dialog_answered(pending, path);
                }
            }
            Some(false) => self.confirm_replace = None,
            None => {}
        }
    }
}
