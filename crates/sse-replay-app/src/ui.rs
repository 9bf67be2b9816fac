//! Drawing one frame: the root layout, keys and drops, menu, tabs, status bar, the Replay and
//! Recorder tabs, the stream picker and the Replay header.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::{RichText, Ui};

use sse_replay_core::analysis::Analysis;
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::export::Format;

use super::loader::{LaterState, Source};
use super::view::{Action, ActionQueue, OpenTarget, Tab};
use super::{
    App, about, accumulator_panel, client_test_panel, compare_panel, naive_panel, player,
    stub_panel, style,
};

impl App {
    // --- one frame -------------------------------------------------------------------------

    /// Draw one frame into the root `ui` (eframe calls this; so do the kittest tests).
    pub fn ui_root(&mut self, ui: &mut Ui) {
        let started = Instant::now();
        self.perf.begin();
        let ctx = ui.ctx().clone();
        style::ensure_fonts(&ctx);
        if self.ctx.is_none() {
            self.ctx = Some(ctx.clone());
        }
        if let Some(src) = self.initial.take() {
            self.open(src, OpenTarget::Primary);
        }
        // View → Theme (egui's own memory may hold another one from a saved session).
        if ctx.options(|o| o.theme_preference) != self.settings.theme {
            ctx.set_theme(self.settings.theme);
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
        let later_pending = self.doc.as_ref().is_some_and(|d| d.loaded.later_pending());
        if self.loading.is_some() || self.pending_dialog.is_some() || later_pending {
            // Progress bar updates; the worker also wakes us when done.
            ctx.request_repaint_after(Duration::from_millis(100));
        }

        self.menu_ui(ui);
        self.tabs_ui(ui);
        self.status_ui(ui);
        match self.settings.tab {
            Tab::Replay => self.replay_ui(ui),
            Tab::CompareTwo => {
                let replay_open = self.doc.is_some();
                let (docs, queue) = (&mut self.compare, &mut self.actions);
                egui::CentralPanel::default().show(ui, |ui| {
                    compare_panel::compare_ui(ui, docs, replay_open, queue);
                });
            }
            Tab::StubBuilder => stub_panel::stub_ui(ui, &mut self.stub, &mut self.actions),
            Tab::Recorder => self.recorder_tab_ui(ui),
            Tab::Proxy => {
                let (form, proxy, queue) =
                    (&mut self.settings.proxy, &mut self.proxy, &mut self.actions);
                egui::CentralPanel::default().show(ui, |ui| {
                    egui::ScrollArea::vertical()
                        .id_salt("proxy-tab")
                        .auto_shrink([false, false])
                        .show(ui, |ui| proxy.ui(ui, form, queue));
                });
            }
            Tab::TestClient => {
                let (form, panel, queue) = (
                    &mut self.settings.client_test,
                    &mut self.client_test,
                    &mut self.actions,
                );
                egui::CentralPanel::default().show(ui, |ui| panel.ui(ui, form, queue));
            }
            Tab::Corpus => {
                let (panel, captures, queue) = (
                    &mut self.corpus,
                    &self.settings.proxy.out_dir,
                    &mut self.actions,
                );
                panel.ui(ui, captures, queue);
            }
        }
        self.client_test.poll(&ctx);
        if self.settings.tab != Tab::Recorder {
            // The recording keeps flowing to the Replay tab while its panel is hidden.
            self.recorder.poll(&ctx, &mut self.actions);
        }
        if self.settings.tab != Tab::Proxy {
            // So do the proxy's flows (a watched one to Replay).
            self.proxy.poll(&ctx, &mut self.actions);
        }
        let running = self.recorder.is_running();
        if running && !self.recorder_was_running {
            self.live_follow = true;
            self.proxy.unwatch();
        }
        self.recorder_was_running = running;
        self.end_live_status();
        self.picker_ui(&ctx);
        self.builtin_dialog_ui(&ctx);
        if self.show_about {
            let mut open = true;
            let queue = &mut self.actions;
            egui::Window::new("About sse-replay")
                .open(&mut open)
                .default_width(620.0)
                .show(&ctx, |ui| about::about_ui(ui, queue));
            self.show_about = open;
        }
        if self.show_shortcuts {
            let mut open = true;
            egui::Window::new("Keyboard shortcuts")
                .open(&mut open)
                .default_width(460.0)
                .show(&ctx, super::shortcuts::shortcuts_ui);
            self.show_shortcuts = open;
        }

        self.apply_actions(&ctx);
        if self.settings.tab == Tab::Replay
            && let Some(t0) = self.first_frame_pending.take()
        {
            self.perf.first_full_frame(t0);
        }
        self.perf.frame(started);
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
            let target = match self.settings.tab {
                Tab::CompareTwo if self.compare.side(OpenTarget::CompareA).is_none() => {
                    OpenTarget::CompareA
                }
                Tab::CompareTwo => OpenTarget::Second,
                _ => OpenTarget::Primary,
            };
            self.actions.push(Action::OpenPath(p, target));
        }
        // Every key from the one table Help → Keyboard shortcuts lists.
        let replay = self.settings.tab == Tab::Replay
            && self.doc.is_some()
            && !ctx.egui_wants_keyboard_input();
        let event_list = replay
            && self.settings.lower_view == super::layout::LowerView::Events
            && !self.settings.lower_folded;
        for s in super::shortcuts::all() {
            let applies = match s.scope {
                super::shortcuts::Scope::Anywhere => true,
                super::shortcuts::Scope::Replay => replay,
                super::shortcuts::Scope::EventList => event_list,
            };
            if applies && super::shortcuts::pressed(ctx, &s) {
                self.actions.push(s.action);
            }
        }
    }

    // --- drawing -----------------------------------------------------------------------------

    fn menu_ui(&mut self, ui: &mut Ui) {
        egui::Panel::top("menu").show(ui, |ui| {
            egui::MenuBar::new().ui(ui, |ui| {
                ui.menu_button("File", |ui| {
                    if ui.button("Open recording…  (Ctrl+O)").clicked() {
                        self.actions.push(Action::OpenDialog(OpenTarget::Primary));
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
                                self.actions.push(Action::OpenPath(p, OpenTarget::Primary));
                            }
                        }
                        if !self.settings.recent.is_empty() && ui.button("Clear the list").clicked()
                        {
                            self.settings.recent.clear();
                        }
                    });
                    if ui.button("Open recording B to compare…").clicked() {
                        self.actions.push(Action::OpenDialog(OpenTarget::Second));
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
                    // The Replay tab's lower area: one view at a time, or folded.
                    for view in super::layout::LowerView::ALL {
                        let on = self.settings.lower_view == view && !self.settings.lower_folded;
                        if ui.selectable_label(on, view.label()).clicked() {
                            self.settings.lower_view = view;
                            self.settings.lower_folded = false;
                        }
                    }
                    let folded = self.settings.lower_folded;
                    if ui.selectable_label(folded, "Fold the lower area").clicked() {
                        self.settings.lower_folded = !folded;
                    }
                    ui.checkbox(&mut self.settings.wrap_bytes, "Wrap long lines in \"Bytes as received\"");
                    ui.separator();
                    ui.menu_button("Theme", |ui| {
                        for (theme, label) in [
                            (egui::ThemePreference::System, "System"),
                            (egui::ThemePreference::Light, "Light"),
                            (egui::ThemePreference::Dark, "Dark"),
                        ] {
                            if ui
                                .selectable_label(self.settings.theme == theme, label)
                                .clicked()
                            {
                                self.settings.theme = theme;
                            }
                        }
                    });
                });
                ui.menu_button("Help", |ui| {
                    if ui.button("About the fragment problem").clicked() {
                        self.actions.push(Action::ToggleAbout);
                    }
                    if ui.button("Keyboard shortcuts").clicked() {
                        self.actions.push(Action::ToggleShortcuts);
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
                    self.actions.push(Action::OpenDialog(OpenTarget::Primary));
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
                if let Some(doc) = &self.doc
                    && let LaterState::Pending(p) = &doc.loaded.later
                {
                    ui.label(format!("computing strategies… {:.0}%", p.progress() * 100.0));
                    ui.separator();
                }
                // One line, cut at the window's edge: the full text on hover.
                match &self.status {
                    Some(s) if s.error => {
                        let text = RichText::new(format!("✗ {}", s.text)).color(style::err_color(ui));
                        ui.add(egui::Label::new(text).truncate()).on_hover_text(&s.text);
                    }
                    Some(s) => {
                        ui.add(egui::Label::new(&s.text).truncate()).on_hover_text(&s.text);
                    }
                    None => {
                        ui.weak("Drop a recording (.ron) or a raw stream body (.sse, .txt) on the window to open it.");
                    }
                }
            });
        });
    }

    fn replay_ui(&mut self, ui: &mut Ui) {
        if self.doc.is_none() {
            let queue = &mut self.actions;
            let loading = self.loading.as_ref();
            egui::CentralPanel::default().show(ui, |ui| {
                ui.add_space(40.0);
                ui.vertical_centered(|ui| {
                    ui.heading("sse-replay");
                    if let Some(l) = loading {
                        // A load is running: its progress, not an invitation to open another.
                        ui.label(format!("Loading {} ({})…", short_name(&l.name), l.stage()));
                        ui.add(
                            egui::ProgressBar::new(l.progress())
                                .desired_width(300.0)
                                .show_percentage(),
                        );
                    } else {
                        ui.label("Open a recording (Ctrl+O) or drop one on the window.");
                        if ui.button("Open the seed example").clicked() {
                            queue.push(Action::OpenSeed);
                        }
                    }
                });
            });
            return;
        }
        let arriving = self.arriving();
        let Some(doc) = &mut self.doc else { return };
        let dialect_override = doc.loaded.dialect_override;
        let client = self.client_case.as_ref().filter(
            |c| matches!(&doc.loaded.source, Source::Memory { name, .. } if *name == c.case),
        );
        let (a, d, v) = (&doc.loaded.analysis, &doc.loaded.derived, &mut doc.view);
        // A stream still arriving has no end to look back from: no hindsight.
        v.arriving = arriving;
        if arriving {
            v.hindsight = false;
        }
        let later = &doc.loaded.later;
        let queue = &mut self.actions;
        egui::Panel::top("replay-head").show(ui, |ui| {
            header_ui(ui, a, dialect_override, arriving, queue);
            player::transport_ui(ui, a, d, v, queue);
        });
        let choices = super::layout::LowerChoices {
            view: &mut self.settings.lower_view,
            folded: &mut self.settings.lower_folded,
            wrap_bytes: &mut self.settings.wrap_bytes,
        };
        super::layout::lower_panel(ui, choices, a, d, v, queue);
        let half = ui.available_width() * 0.46;
        egui::Panel::left("naive")
            .resizable(true)
            .default_size(half)
            .min_size(240.0)
            .show(ui, |ui| {
                super::layout::fixed(ui, |ui| {
                    if let Some(c) = client {
                        ui.horizontal(|ui| {
                            if ui.selectable_label(c.shown, "Your client").clicked() {
                                queue.push(Action::ShowClientOutput(true));
                            }
                            if ui.selectable_label(!c.shown, "Naive strategies").clicked() {
                                queue.push(Action::ShowClientOutput(false));
                            }
                        });
                        if c.shown {
                            client_test_panel::client_ui(ui, a, c);
                            return;
                        }
                    }
                    naive_panel::naive_ui(ui, a, later, d, v, queue, arriving);
                });
            });
        egui::CentralPanel::default().show(ui, |ui| {
            super::layout::fixed(ui, |ui| {
                accumulator_panel::accumulator_ui(ui, a, d, v, queue, arriving)
            })
        });
    }

    /// Replay shows a stream still arriving (the Recorder's, a watched proxy flow): its latest read
    /// is not its end. Every live label ("● live", "as it arrives") asks this, so none outlives
    /// the stream.
    pub fn arriving(&self) -> bool {
        self.doc.as_ref().is_some_and(|d| d.loaded.is_live())
            && (self.recorder.is_running()
                || self.proxy.watching_streaming()
                || self.live_pending.is_some()
                || self.loading.as_ref().is_some_and(|l| l.live))
    }

    /// Once a live stream has ended, the status line says how (it said "as it arrives").
    fn end_live_status(&mut self) {
        let live_status = self
            .status
            .as_ref()
            .is_some_and(|s| s.text == super::logic::LIVE_STATUS);
        if !live_status || self.arriving() {
            return;
        }
        if let Some(a) = self.analysis() {
            let text = format!("The stream has ended: {}", super::headline::ending(a));
            self.set_status(text, false);
        }
    }

    fn recorder_tab_ui(&mut self, ui: &mut Ui) {
        let mut watch = None;
        let live_shown = self.doc.as_ref().is_some_and(|d| d.loaded.is_live());
        let following = self.live_follow;
        let recording = self.recorder.is_running();
        let (form, recorder, queue) = (
            &mut self.settings.recorder,
            &mut self.recorder,
            &mut self.actions,
        );
        egui::CentralPanel::default().show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("recorder-tab")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    recorder.ui(ui, form, queue);
                    let Some(rec) = recorder.recording() else {
                        return;
                    };
                    ui.separator();
                    ui.horizontal_wrapped(|ui| {
                        if live_shown && following && recording {
                            ui.label("The Replay tab shows this recording as it arrives.");
                        } else if live_shown && following {
                            ui.label("The Replay tab shows this recording.");
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
        if let Some(rec) = watch {
            self.live_follow = true;
            self.actions.push(Action::ShowLive(rec));
            self.actions.push(Action::ShowTab(Tab::Replay));
        }
    }

    /// The stream picker of a capture with several streams.
    fn picker_ui(&mut self, ctx: &egui::Context) {
        let Some(picker) = &self.picker else { return };
        let mut open = true;
        let queue = &mut self.actions;
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
                                queue.push(Action::PickStream(i));
                            }
                            let url = rec
                                .request
                                .as_ref()
                                .map(|r| r.url.as_str())
                                .filter(|u| !u.is_empty() && !title.contains(u));
                            let mut details = format!(
                                "{}, {}",
                                sse_replay_core::text::plural(rec.chunks.len(), "event"),
                                sse_replay_core::text::plural(rec.body_len(), "byte")
                            );
                            if let Some(url) = url {
                                details = format!("{url} · {details}");
                            }
                            ui.weak(details);
                            ui.add_space(4.0);
                        }
                    });
            });
        if !open {
            queue.push(Action::ClosePicker);
        }
    }
}

/// The Replay header: title, live badge, source, the dialect (named, overridable), framing, and
/// the recording's notes (imports keep no read boundaries: a badge says so).
fn header_ui(
    ui: &mut Ui,
    a: &Analysis,
    dialect_override: Option<DialectKind>,
    arriving: bool,
    queue: &mut ActionQueue,
) {
    ui.horizontal_wrapped(|ui| {
        // A live source is "live" only while it arrives; once ended it was recorded live.
        let live_source = a.source.kind == sse_replay_core::analysis::SourceKind::Live;
        let source_name = match (live_source, arriving) {
            (true, true) => "live recording".to_owned(),
            (true, false) => "recorded live".to_owned(),
            (false, _) => short_name(&a.source.name),
        };
        let title = if a.meta.title.is_empty() {
            source_name.clone()
        } else {
            a.meta.title.clone()
        };
        ui.label(RichText::new(&title).strong().size(16.0));
        if arriving {
            ui.label(
                RichText::new("● live")
                    .strong()
                    .color(egui::Color32::WHITE)
                    .background_color(egui::Color32::from_rgb(200, 40, 40)),
            )
            .on_hover_text("Recording: the panels follow the stream as it arrives");
        }
        // The source's name and its kind, each once: not again when the title or the name
        // already says it ("live recording").
        let name = source_name.clone();
        let kind = if live_source {
            source_name
        } else {
            a.source.kind.to_string()
        };
        let mut parts: Vec<String> = Vec::new();
        if name != title {
            parts.push(name.clone());
        }
        if kind != name && kind != title {
            parts.push(kind);
        }
        // Binary frames name both layers: the AWS envelope and the model's events in it.
        let framing_name = if a.framing == sse_replay_core::framing::Framing::AwsEventStream {
            format!("{} → {}", a.framing.title(), a.dialect.title())
        } else {
            a.framing.name().to_owned()
        };
        let framing = if a.complete {
            "one JSON document (not streamed)".to_owned()
        } else if a.framing == sse_replay_core::framing::Framing::JsonArray {
            sse_replay_core::report::json_array_header(a.dialect, a.events.len())
        } else if a.source.timing_known {
            format!("{framing_name} (recorded reads)")
        } else {
            format!("{framing_name} (one chunk per event)")
        };
        parts.push(framing);
        parts.push(sse_replay_core::text::plural(a.body.len(), "byte"));
        ui.weak(parts.join(" · "));
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
            // Every dialect at once: a list that scrolls hides the last ones.
            .height(f32::INFINITY)
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(dialect_override.is_none(), "detect")
                    .on_hover_text("Detect the dialect from the stream (and the recording's metadata)")
                    .clicked()
                {
                    queue.push(Action::SetDialect(None));
                }
                for k in DialectKind::ALL {
                    if ui
                        .selectable_label(dialect_override == Some(k), k.title())
                        .clicked()
                    {
                        queue.push(Action::SetDialect(Some(k)));
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
            let mut shown = sse_replay_core::text::truncate(first, 90);
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

/// The label of an export format in menus.
pub fn format_label(format: Format) -> &'static str {
    match format {
        Format::Json => "JSON",
        Format::Jsonl => "JSONL",
        Format::OpenAi => "OpenAI assistant message",
        Format::Anthropic => "Anthropic tool_use blocks",
    }
}

pub(super) fn short_name(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map_or_else(|| name.to_owned(), |n| n.to_string_lossy().into_owned())
}
