//! The stub builder: the core's [`sse_replay_core::stub`] behind a form (calls, arguments, fragment length,
//! layout, read size, quirks), previewed at once, saved as a recording or opened in the player.

use egui::{RichText, Ui};

use super::style;
use super::view::{Action, ActionQueue};
use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::naive::Strategy;
use sse_replay_core::pipeline::Options;
use sse_replay_core::quirk::Quirk;
use sse_replay_core::recording::Recording;
use sse_replay_core::stub::{self, Layout, StubCall, StubSpec};

/// The form's state (never persisted).
#[derive(Debug)]
pub struct StubForm {
    pub spec: StubSpec,
    /// The fragment lengths as typed ("5" or "3,7").
    pub fragment_text: String,
    pub split_reads: bool,
    pub read_bytes: usize,
    /// Build the complete (non-streaming) response for the same calls instead of a stream.
    pub non_streaming: bool,
    /// `non_streaming` as it was when the preview was built.
    preview_non_streaming: bool,
    /// The user wrote the title: it no longer follows the calls and choices.
    pub title_edited: bool,
    preview: Option<(StubSpec, Recording, Analysis)>,
}

impl Default for StubForm {
    fn default() -> Self {
        let spec = stub::seed_example();
        let read_bytes = spec.read_bytes.unwrap_or(44);
        Self {
            split_reads: spec.read_bytes.is_some(),
            read_bytes,
            fragment_text: "5".into(),
            spec,
            non_streaming: false,
            preview_non_streaming: false,
            title_edited: false,
            preview: None,
        }
    }
}

impl StubForm {
    /// The recording's title: the user's, else one that says what the form builds.
    pub fn title(&self) -> String {
        if self.title_edited {
            return self.spec.title.clone();
        }
        let names: Vec<&str> = self.spec.calls.iter().map(|c| c.name.as_str()).collect();
        let names = if names.is_empty() {
            "no calls".to_owned()
        } else {
            names.join(" + ")
        };
        if self.non_streaming {
            return format!(
                "{names}: one complete response ({})",
                self.spec.dialect.title()
            );
        }
        let mut t = format!(
            "{names}, arguments cut every {} characters",
            self.fragment_text.trim()
        );
        if self.spec.layout == Layout::Interleaved {
            t.push_str(", interleaved");
        }
        let quirks: Vec<&str> = Quirk::set_in(&self.spec.quirks)
            .into_iter()
            .map(Quirk::name)
            .collect();
        if !quirks.is_empty() {
            t.push_str(&format!(", {}", quirks.join(", ")));
        }
        format!("{t} ({})", self.spec.dialect.title())
    }

    /// The spec as the form describes it, or why not.
    pub fn current_spec(&self) -> Result<StubSpec, String> {
        let lens: Result<Vec<usize>, _> = self
            .fragment_text
            .split(',')
            .map(|s| s.trim().parse::<usize>())
            .collect();
        let lens = match lens {
            Ok(l) if !l.is_empty() && l.iter().all(|&n| n > 0) => l,
            _ => {
                return Err(format!(
                    "fragment length {:?}: expected positive numbers like 5 or 3,7",
                    self.fragment_text
                ));
            }
        };
        if self.spec.calls.is_empty() {
            return Err("add at least one call".into());
        }
        // The check `sse-replay stub` makes: a quirk this stream cannot carry is refused.
        if !self.non_streaming {
            sse_replay_core::quirk::check(&self.spec)?;
        }
        Ok(StubSpec {
            title: self.title(),
            fragment_chars: lens,
            read_bytes: self.split_reads.then_some(self.read_bytes.max(1)),
            ..self.spec.clone()
        })
    }

    /// The recording for the current spec (built for the preview).
    pub fn recording(&mut self) -> Option<&Recording> {
        self.refresh();
        self.preview.as_ref().map(|(_, r, _)| r)
    }

    fn refresh(&mut self) {
        let Ok(spec) = self.current_spec() else {
            self.preview = None;
            return;
        };
        if self.preview.as_ref().is_some_and(|(s, _, _)| *s == spec)
            && self.preview_non_streaming == self.non_streaming
        {
            return;
        }
        self.preview_non_streaming = self.non_streaming;
        let rec = if self.non_streaming {
            match sse_replay_core::stub_complete::build(&spec) {
                Ok(rec) => rec,
                Err(_) => {
                    self.preview = None;
                    return;
                }
            }
        } else {
            stub::build(&spec)
        };
        let source = SourceInfo {
            name: "stub preview".into(),
            kind: sse_replay_core::analysis::SourceKind::Stub,
            timing_known: true,
        };
        let analysis = Analysis::from_recording(
            &rec,
            source,
            Options {
                dialect: None,
                framing: None,
                detail: true,
            },
        );
        self.preview = Some((spec, rec, analysis));
    }
}

/// The stub builder panel.
pub fn stub_ui(ui: &mut Ui, form: &mut StubForm, queue: &mut ActionQueue) {
    egui::Panel::left("stub-form")
        .resizable(true)
        .default_size(520.0)
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("stub-form-scroll")
                .show(ui, |ui| form_ui(ui, form, queue));
        });
    form.refresh();
    egui::CentralPanel::default().show(ui, |ui| {
        egui::ScrollArea::vertical()
            .id_salt("stub-preview")
            .auto_shrink([false, false])
            .show(ui, |ui| preview_ui(ui, form));
    });
}

fn form_ui(ui: &mut Ui, form: &mut StubForm, queue: &mut ActionQueue) {
    ui.heading("Stub builder");
    ui.label("Build a stream from calls and a fragment length, the seed's method. The preview updates as you type.");
    ui.horizontal(|ui| {
        let l = ui.label("Title");
        if !form.title_edited {
            form.spec.title = form.title();
        }
        let r = ui
            .add(egui::TextEdit::singleline(&mut form.spec.title).desired_width(400.0))
            .labelled_by(l.id)
            .on_hover_text("Follows the calls and choices until you write your own");
        if r.changed() {
            form.title_edited = true;
        }
        if form.title_edited
            && ui
                .small_button("Follow")
                .on_hover_text("Let the title follow the calls and choices again")
                .clicked()
        {
            form.title_edited = false;
        }
    });
    ui.horizontal(|ui| {
        egui::ComboBox::from_label("Dialect")
            .selected_text(form.spec.dialect.title())
            .show_ui(ui, |ui| {
                for k in sse_replay_core::dialect::DialectKind::ALL {
                    ui.selectable_value(&mut form.spec.dialect, k, k.title());
                }
            })
            .response
            .on_hover_text("Which provider's stream to build");
    });
    ui.separator();
    let mut remove = None;
    for (i, c) in form.spec.calls.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            ui.label(format!("call {i}"));
            ui.add(
                egui::TextEdit::singleline(&mut c.name)
                    .hint_text("function name")
                    .desired_width(120.0),
            );
            ui.add(
                egui::TextEdit::singleline(&mut c.id)
                    .hint_text("id")
                    .desired_width(70.0),
            );
            if ui.button("×").on_hover_text("Remove this call").clicked() {
                remove = Some(i);
            }
        });
        ui.add(
            egui::TextEdit::multiline(&mut c.arguments)
                .hint_text("arguments (JSON)")
                .desired_rows(1)
                .desired_width(f32::INFINITY)
                .code_editor(),
        );
    }
    if let Some(i) = remove {
        form.spec.calls.remove(i);
    }
    if ui.button("+ Add call").clicked() {
        let n = form.spec.calls.len() + 1;
        form.spec.calls.push(StubCall {
            id: format!("call_{n}"),
            name: "get_time".into(),
            arguments: r#"{"city":"杭州"}"#.into(),
        });
    }
    ui.separator();
    ui.horizontal(|ui| {
        let l = ui.label("Fragment length (characters, comma list cycles)");
        ui.add(egui::TextEdit::singleline(&mut form.fragment_text).desired_width(80.0))
            .labelled_by(l.id);
    });
    ui.horizontal(|ui| {
        ui.radio_value(&mut form.spec.layout, Layout::Sequential, "Sequential");
        ui.radio_value(&mut form.spec.layout, Layout::Interleaved, "Interleaved");
    });
    ui.horizontal(|ui| {
        ui.checkbox(&mut form.split_reads, "Cut into network reads of");
        ui.add_enabled(
            form.split_reads,
            egui::DragValue::new(&mut form.read_bytes)
                .range(1..=65536)
                .suffix(" bytes"),
        )
        .on_hover_text("Read size in bytes (splits characters on purpose)");
    });
    ui.checkbox(
        &mut form.non_streaming,
        "Non-streaming: the complete response for the same calls",
    )
    .on_hover_text("One JSON document, as the provider answers a request without \"stream\": true: no fragments, so fragment length, layout and quirks do not apply. Open it beside the stream in Compare two.");
    ui.horizontal(|ui| {
        ui.label("Gap between events");
        ui.add(
            egui::DragValue::new(&mut form.spec.gap_micros)
                .range(0..=10_000_000)
                .suffix(" µs"),
        )
        .on_hover_text("Microseconds between events");
    });
    ui.collapsing("Provider quirks", |ui| {
        // Every quirk `stub --quirk` has (the core's one table); the ones this stream cannot
        // carry are greyed out with the reason the CLI gives (a set one can still be cleared).
        for quirk in Quirk::ALL.iter().copied() {
            let mut on = quirk.is_set(&form.spec.quirks);
            let refusal = quirk.refusal_in(&form.spec);
            let r = ui.add_enabled(
                refusal.is_none() || on,
                egui::Checkbox::new(
                    &mut on,
                    format!("{} — {}", quirk.name(), quirk.description()),
                ),
            );
            if r.changed() {
                quirk.set(&mut form.spec.quirks, on);
            }
            if let Some(why) = refusal {
                r.on_disabled_hover_text(why);
            }
        }
    });
    ui.separator();
    ui.horizontal(|ui| {
        if ui.button("Open in player").clicked() {
            queue.push(Action::OpenStub);
        }
        if ui.button("Save as recording…").clicked() {
            queue.push(Action::SaveStub);
        }
    });
}

fn preview_ui(ui: &mut Ui, form: &StubForm) {
    ui.heading("Preview");
    if let Err(e) = form.current_spec() {
        ui.colored_label(style::err_color(ui), e);
        return;
    }
    let Some((_, rec, a)) = &form.preview else {
        return;
    };
    ui.label(RichText::new(form.title()).strong());
    ui.label(format!(
        "{} · {} · {} · {} · {}",
        sse_replay_core::text::plural(rec.chunks.len(), "chunk"),
        sse_replay_core::text::plural(a.body.len(), "byte"),
        sse_replay_core::text::plural(a.events.len(), "event"),
        sse_replay_core::text::plural(a.fragments.len(), "fragment"),
        a.dialect.name()
    ));
    for (ci, c) in a.calls.iter().enumerate() {
        ui.separator();
        ui.label(
            RichText::new(format!(
                "call {ci}: {} {}",
                c.id.as_deref().unwrap_or(""),
                c.name
            ))
            .strong(),
        );
        let pieces: Vec<String> = c
            .fragments
            .iter()
            .filter_map(|&no| a.fragments.get(no as usize))
            .map(|f| format!("{:?}", a.fragment_text(f)))
            .collect();
        ui.label(RichText::new(pieces.join("  |  ")).monospace());
        match (c.value(), a.complete) {
            (Some(v), false) => ui.colored_label(
                style::ok_color(ui),
                format!("✓ accumulated and parsed once: {v}"),
            ),
            (Some(v), true) => ui.colored_label(
                style::ok_color(ui),
                format!("✓ parsed directly — no accumulator: {v}"),
            ),
            (None, _) => ui.colored_label(style::err_color(ui), format!("✗ {}", c.parsed)),
        };
    }
    ui.separator();
    if a.complete {
        // One JSON document: no fragments, so nothing for the naive strategies to get wrong.
        ui.weak("One complete response: its calls are parsed directly — no accumulator, no fragments, no naive strategies.");
        body_lines_ui(ui, a);
        return;
    }
    if let Some(s) = a.strategy(Strategy::PerFragment) {
        let n = s.report.steps.len();
        let ok = s.report.steps_parsed();
        let color = if ok < n {
            style::err_color(ui)
        } else {
            style::ok_color(ui)
        };
        ui.colored_label(
            color,
            format!(
                "per-fragment: {ok} of {} alone",
                sse_replay_core::text::plural(n, "fragment")
                    + if n == 1 { " parses" } else { " parse" }
            ),
        );
    }
    for s in &a.strategies {
        ui.horizontal(|ui| {
            style::mark(
                ui,
                if s.report.not_applicable.is_some() {
                    None
                } else {
                    Some(s.agreement.matches_correct)
                },
            );
            ui.label(s.report.strategy.name());
        });
    }
    body_lines_ui(ui, a);
}

fn body_lines_ui(ui: &mut Ui, a: &Analysis) {
    ui.separator();
    ui.label(RichText::new("Body (first 30 lines)").strong());
    let body = String::from_utf8_lossy(&a.body);
    for line in body.lines().take(30) {
        ui.label(RichText::new(style::visible(line, 200)).monospace().small());
    }
}
