//! Native file dialogs behind a trait, so tests can replace them (the test seam). The native
//! implementation runs the blocking rfd dialog on a worker thread and hands the answer back over a
//! channel; the UI thread never blocks.

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
        let _ = tx.send(None);
        wake();
        rx
    }
}

/// The real dialogs (rfd), each on its own thread.
#[derive(Debug, Default)]
pub struct NativeDialogs;

impl FileDialogs for NativeDialogs {
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
                let _ = tx.send(answer);
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
        let _ = std::thread::Builder::new()
            .name("sse-replay-dialog".into())
            .spawn(move || {
                let answer = rfd::FileDialog::new().set_title(&title).pick_folder();
                let _ = tx.send(answer);
                wake();
            });
        rx
    }
}

/// Scripted answers for tests: each dialog takes the next answer at once; the specs asked for are
/// kept so a test can check what was asked.
#[derive(Debug, Default)]
pub struct ScriptedDialogs {
    pub answers: VecDeque<Option<PathBuf>>,
    pub asked: std::sync::Arc<std::sync::Mutex<Vec<DialogSpec>>>,
}

impl ScriptedDialogs {
    /// Dialogs that answer with these paths, in order (then `None`).
    pub fn new(answers: impl IntoIterator<Item = Option<PathBuf>>) -> Self {
        Self {
            answers: answers.into_iter().collect(),
            asked: Default::default(),
        }
    }
}

impl FileDialogs for ScriptedDialogs {
    fn ask(
        &mut self,
        spec: DialogSpec,
        wake: Box<dyn Fn() + Send>,
    ) -> mpsc::Receiver<Option<PathBuf>> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(spec);
        }
        let (tx, rx) = mpsc::channel();
        let _ = tx.send(self.answers.pop_front().flatten());
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
