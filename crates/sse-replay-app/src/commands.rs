//! Applying what the panels, menus and keys queued, after the frame is drawn.

use std::path::{Path, PathBuf};

use sse_replay_core::export::{self, Format};
use sse_replay_core::recording::Recording;

use super::captures::CapturesFor;
use super::dialogs::{BuiltinDialog, DialogSpec};
use super::loader::Source;
use super::view::{Action, OpenTarget, Tab, ViewState};
use super::{App, format_label};

/// The status note shown the first time the in-app browser replaces the native dialog.
pub const BUILTIN_NOTE: &str = "No native file dialog here (no xdg-desktop-portal file chooser, no zenity): using the built-in file browser";

/// What an answered dialog was for.
#[derive(Debug)]
pub(super) enum DialogPurpose {
    Open(OpenTarget),
    Import,
    ExportCalls(Format),
    ExportReport,
    SaveStub,
    SaveRecording(Box<Recording>),
    /// Text (a HAR document) to write, and what it is for the status line.
    SaveText(String, &'static str),
    CapturesDir(CapturesFor),
}

impl App {
    // --- actions -----------------------------------------------------------------------------

    pub(super) fn apply_actions(&mut self, ctx: &egui::Context) {
        let queue = self.actions.take();
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
            Action::OpenDialog(target) => {
                let spec = DialogSpec {
                    save: false,
                    title: match target {
                        OpenTarget::Primary => "Open a recording".into(),
                        OpenTarget::CompareA => "Open recording A to compare".into(),
                        OpenTarget::Second => "Open recording B to compare".into(),
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
                self.ask(ctx, spec, DialogPurpose::Open(target));
            }
            Action::OpenPath(p, target) => self.open(Source::File(p), target),
            Action::OpenStream(p, n) => {
                self.pick_stream = Some((p.clone(), n));
                self.open(Source::File(p), OpenTarget::Primary);
            }
            Action::OpenSeed => {
                self.settings.tab = Tab::Replay;
                self.open(Source::Seed, OpenTarget::Primary);
            }
            Action::CancelLoad => {
                if let Some(l) = &self.loading {
                    l.cancel();
                }
            }
            Action::ShowTab(t) => self.settings.tab = t,
            Action::ToggleAbout => self.show_about = !self.show_about,
            Action::ToggleShortcuts => self.show_shortcuts = !self.show_shortcuts,
            Action::FollowCursor => {
                if let Some(v) = self.view_mut() {
                    v.inspector.selected = None;
                }
            }
            Action::CopyEvent => {
                let Some(doc) = &self.doc else {
                    return self.set_status("Nothing to copy: no recording is open", true);
                };
                let a = &doc.loaded.analysis;
                let shown = doc.view.inspector.selected.or(doc.view.current_event(a));
                match shown.and_then(|n| Some((n, a.events.get(n as usize)?))) {
                    Some((n, e)) => {
                        ctx.copy_text(super::event_inspector::event_sse_text(a, e));
                        self.set_status(format!("Copied event {n} as SSE text"), false);
                    }
                    None => self.set_status("No event at the cursor to copy", true),
                }
            }
            Action::CopyCallsJson => match self.analysis() {
                Some(a) => {
                    let n = a.client_calls().count();
                    ctx.copy_text(export::render(&a.calls, Format::Json));
                    self.set_status(
                        format!(
                            "Copied {} as JSON to the clipboard",
                            sse_replay_core::text::plural(n, "call")
                        ),
                        false,
                    );
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
                self.ask(ctx, spec, DialogPurpose::ExportCalls(f));
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
                self.ask(ctx, spec, DialogPurpose::ExportReport);
            }
            Action::SaveStub => {
                let spec = DialogSpec {
                    save: true,
                    title: "Save the stub as a recording".into(),
                    file_name: "stub.ron".into(),
                    filters: vec![("Recording".into(), vec!["ron".into()])],
                };
                self.ask(ctx, spec, DialogPurpose::SaveStub);
            }
            Action::OpenStub => match self.stub.recording() {
                Some(rec) => {
                    let name = format!("stub: {}", rec.meta.title);
                    let recording = Box::new(rec.clone());
                    self.settings.tab = Tab::Replay;
                    self.open(Source::Memory { name, recording }, OpenTarget::Primary);
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
                self.ask(ctx, spec, DialogPurpose::Import);
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
                self.open(Source::Memory { name, recording }, OpenTarget::Primary);
            }
            Action::ClosePicker => self.picker = None,
            Action::ShowClientOutput(shown) => {
                if let Some(c) = &mut self.client_case {
                    c.shown = shown;
                }
            }
            Action::OpenTestCase(i) => match self.client_test.case_recording(i) {
                Some((name, rec)) => {
                    self.client_case = self.client_test.case_output(i);
                    self.settings.tab = Tab::Replay;
                    let recording = Box::new(rec);
                    self.open(Source::Memory { name, recording }, OpenTarget::Primary);
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
                self.ask(ctx, spec, DialogPurpose::SaveRecording(rec));
            }
            Action::CompareSideInReplay(side) => match self.compare.side(side) {
                Some(l) => {
                    let source = l.source.clone();
                    self.settings.tab = Tab::Replay;
                    self.open(source, OpenTarget::Primary);
                }
                None => self.set_status("That side of Compare two is empty", true),
            },
            Action::CompareUseReplay(side) => match &self.doc {
                Some(d) => {
                    let source = d.loaded.source.clone();
                    self.open(source, side);
                }
                None => self.set_status("Replay has no recording open", true),
            },
            Action::PickCapturesDir(which) => {
                if self.pending_dialog.is_some() || self.builtin_dialog.is_some() {
                    return self.set_status("A file dialog is already open", true);
                }
                if !self.dialogs.native_available() {
                    // No portal and no zenity: the in-app browser chooses the folder.
                    let title = "Save captures in";
                    let dialog = BuiltinDialog::folder(title, dirs_start(self, which));
                    self.builtin_dialog = Some((DialogPurpose::CapturesDir(which), dialog));
                    if !self.builtin_noted {
                        self.builtin_noted = true;
                        self.set_status(BUILTIN_NOTE, false);
                    }
                    ctx.request_repaint();
                    return;
                }
                let waker = ctx.clone();
                let rx = self.dialogs.ask_folder(
                    "Save captures in".into(),
                    Box::new(move || waker.request_repaint()),
                );
                self.pending_dialog = Some((DialogPurpose::CapturesDir(which), rx));
                self.poll_background();
            }
            Action::WatchFlow(id) => {
                if self.proxy.watch(id) {
                    self.live_follow = true;
                    self.settings.tab = Tab::Replay;
                } else {
                    self.set_status("That flow is no longer streaming: open its capture", true);
                }
            }
            Action::SaveFlowHar(id) => {
                let Some(row) = self.proxy.exchanges().iter().find(|r| r.exchange.id == id) else {
                    return self.set_status("That flow is no longer listed", true);
                };
                let rec = super::proxy_list::flow_recording(row);
                let doc = super::proxy_list::har(row, rec.as_ref());
                let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
                text.push('\n');
                let spec = DialogSpec {
                    save: true,
                    title: "Export the flow as a HAR entry".into(),
                    file_name: format!("flow-{id}.har"),
                    filters: vec![("HAR".into(), vec!["har".into()])],
                };
                self.ask(ctx, spec, DialogPurpose::SaveText(text, "the HAR entry"));
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
        if !matches!(action, Action::TypeOut(_) | Action::SetHindsight(_)) {
            // The cursor moves: a card typing its call out shows the cursor's state again.
            v.typing = None;
        }
        match action {
            Action::Seek(k) => v.seek(a, k),
            Action::StepCursor(unit, dir) => {
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
            Action::SetHindsight(on) => v.hindsight = on,
            Action::TypeOut(call) => {
                v.typing = call.map(|ci| super::view::Typing {
                    call: ci,
                    started: std::time::Instant::now(),
                    upto: a.call_state_at(ci, v.cursor).fragments.len(),
                });
            }
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

    fn ask(&mut self, ctx: &egui::Context, spec: DialogSpec, pending: DialogPurpose) {
        if self.pending_dialog.is_some()
            || self.builtin_dialog.is_some()
            || self.confirm_replace.is_some()
        {
            return self.set_status("A file dialog is already open", true);
        }
        if !self.dialogs.native_available() {
            // No portal and no zenity: rfd would answer "cancelled" without showing anything.
            let start = self
                .doc
                .as_ref()
                .and_then(|d| d.loaded.path.as_deref())
                .and_then(|p| p.parent())
                .filter(|p| p.is_dir())
                .map(Path::to_path_buf);
            self.builtin_dialog = Some((pending, BuiltinDialog::new(&spec, start)));
            if !self.builtin_noted {
                self.builtin_noted = true;
                self.set_status(BUILTIN_NOTE, false);
            }
            ctx.request_repaint();
            return;
        }
        let waker = ctx.clone();
        let rx = self
            .dialogs
            .ask(spec, Box::new(move || waker.request_repaint()));
        self.pending_dialog = Some((pending, rx));
        // A scripted dialog has answered already: handle it in this frame.
        self.poll_background();
    }

    pub(super) fn dialog_answered(&mut self, pending: DialogPurpose, path: PathBuf) {
        match pending {
            DialogPurpose::Open(target) => {
                if target != OpenTarget::Primary {
                    // From the File menu too: show where it went.
                    self.settings.tab = Tab::CompareTwo;
                }
                self.open(Source::File(path), target);
            }
            DialogPurpose::CapturesDir(which) => {
                let dir = match which {
                    CapturesFor::Recorder => &mut self.settings.recorder.out_dir,
                    CapturesFor::Proxy => &mut self.settings.proxy.out_dir,
                };
                *dir = path;
            }
            DialogPurpose::Import => {
                self.settings.tab = Tab::Replay;
                self.open(Source::Import(path), OpenTarget::Primary);
            }
            DialogPurpose::SaveText(text, what) => {
                // It may hold a request's secrets (a proxy told to keep them): private.
                let options = sse_replay_core::recording::WriteOptions::private(true);
                match sse_replay_core::recording::write_file(&path, text.as_bytes(), options) {
                    Ok(()) => self.set_status(format!("Saved {what} to {}", path.display()), false),
                    Err(e) => self.set_status(format!("Cannot write {what}: {e}"), true),
                }
            }
            DialogPurpose::SaveRecording(rec) => {
                match sse_replay_core::recording::save(&path, &rec) {
                    Ok(()) => {
                        self.set_status(format!("Saved the recording to {}", path.display()), false)
                    }
                    Err(e) => self.set_status(format!("Cannot save the recording: {e:#}"), true),
                }
            }
            DialogPurpose::ExportCalls(f) => {
                let Some(a) = self.analysis() else { return };
                let (text, n) = (export::render(&a.calls, f), a.client_calls().count());
                self.write_file(
                    &path,
                    text.as_bytes(),
                    &format!(
                        "{} as {}",
                        sse_replay_core::text::plural(n, "call"),
                        format_label(f)
                    ),
                );
            }
            DialogPurpose::ExportReport => {
                if self.doc.as_ref().is_some_and(|d| d.loaded.later_pending()) {
                    // The report has every section `check --json` has: not before they exist.
                    self.set_status(
                        "The naive strategies are still being computed: export the report when they are done",
                        true,
                    );
                    return;
                }
                let Some(a) = self.analysis() else { return };
                let mut text =
                    serde_json::to_string_pretty(&export::check_json(a)).unwrap_or_default();
                text.push('\n');
                self.write_file(&path, text.as_bytes(), "the check report");
            }
            DialogPurpose::SaveStub => match self.stub.recording() {
                Some(rec) => match sse_replay_core::recording::save(&path, rec) {
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
        let options = sse_replay_core::recording::WriteOptions::public(true);
        match sse_replay_core::recording::write_file(path, bytes, options) {
            Ok(()) => self.set_status(format!("Exported {what} to {}", path.display()), false),
            Err(e) => self.set_status(format!("Cannot write {what}: {e}"), true),
        }
    }
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

/// Where the folder chooser starts: the form's folder when it exists, else its nearest existing
/// parent (the default data folder may not exist before the first capture).
fn dirs_start(app: &App, which: CapturesFor) -> Option<PathBuf> {
    let dir = match which {
        CapturesFor::Recorder => &app.settings.recorder.out_dir,
        CapturesFor::Proxy => &app.settings.proxy.out_dir,
    };
    let full = super::captures::full_path(dir);
    full.ancestors().find(|p| p.is_dir()).map(Path::to_path_buf)
}
