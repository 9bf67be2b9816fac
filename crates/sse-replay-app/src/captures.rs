//! Where the app writes what the Recorder and the Proxy capture: by default the platform data
//! directory (`~/.local/share/sse-replay/captures` on Linux, `~/Library/Application Support/…` on
//! macOS, `%APPDATA%\…` on Windows), never a folder relative to wherever the app was started (under
//! `cargo run` that was inside the git checkout). The folder is shown in full and can be changed
//! by typing or through the folder picker (the dialog seam, [`super::dialogs`]).

use std::path::{Path, PathBuf};

use egui::Ui;

use super::view::{Action, ActionQueue};

/// The old default, relative to the working directory: settings that still hold it (never chosen
/// by the user) move to [`default_dir`].
pub const OLD_DEFAULT: &str = "sse-captures";

/// Which form's captures folder a picked folder goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapturesFor {
    Recorder,
    Proxy,
}

/// The default captures folder: `<platform data dir>/captures`; without a home directory (rare: a
/// service account), `sse-captures` under the system's temporary folder.
pub fn default_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "sse-replay").map_or_else(
        || std::env::temp_dir().join(OLD_DEFAULT),
        |d| d.data_dir().join("captures"),
    )
}

/// `dir` as the full path the files will land in (a relative path is taken from the working
/// directory, as the writer will).
pub fn full_path(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Replaces the old relative default with [`default_dir`]; any other choice stays.
pub fn upgrade(dir: &mut PathBuf) {
    if dir.as_os_str() == OLD_DEFAULT {
        *dir = default_dir();
    }
}

/// The folder row: a label, the path (editable), "Choose…" (queues the folder picker) and the
/// full path when the typed one is relative.
pub fn folder_ui(
    ui: &mut Ui,
    label: &str,
    dir: &mut PathBuf,
    which: CapturesFor,
    queue: &mut ActionQueue,
) {
    ui.horizontal(|ui| {
        let label = ui.label(label);
        let mut text = dir.display().to_string();
        if ui
            .add(egui::TextEdit::singleline(&mut text).desired_width(380.0))
            .labelled_by(label.id)
            .changed()
        {
            *dir = PathBuf::from(text);
        }
        if ui
            .button("Choose…")
            .on_hover_text("Pick the folder captures are written to")
            .clicked()
        {
            queue.push(Action::PickCapturesDir(which));
        }
        if ui
            .small_button("Default")
            .on_hover_text(default_dir().display().to_string())
            .clicked()
        {
            *dir = default_dir();
        }
    });
    if dir.is_relative() {
        ui.weak(format!("= {}", full_path(dir).display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_absolute_and_the_old_default_moves() {
        assert!(default_dir().is_absolute(), "{}", default_dir().display());
        let mut old = PathBuf::from(OLD_DEFAULT);
        upgrade(&mut old);
        assert_eq!(old, default_dir());
        let mut chosen = PathBuf::from("my-captures");
        upgrade(&mut chosen);
        assert_eq!(chosen, PathBuf::from("my-captures"));
        assert!(full_path(&chosen).is_absolute());
    }
}
