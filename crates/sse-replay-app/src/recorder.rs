//! The Recorder panel: URL, method, headers (secret values masked and never persisted), a body with
//! ready templates, Start/Stop, live counts, Save As. The recording runs on
//! [`sse_replay_net::record::start`]'s own thread; updates arrive through a channel and a repaint
//! waker, so the UI never waits on the network. While it runs, the panel hands the host the
//! recording so far ([`Action::ShowLive`] on the app's [`ActionQueue`], at most ~10 per second) so the comparison panels can
//! follow the stream as it arrives.
//!
//! Every recording is written crash-safely into [`RecorderForm::out_dir`] as it arrives (the same
//! journal as the CLI); Save As copies the finished recording elsewhere.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use egui::{RichText, Ui};
use serde::{Deserialize, Serialize};

use super::view::{Action, ActionQueue, OpenTarget, Tab};
use sse_replay_core::recording::Recording;
use sse_replay_core::redact;
use sse_replay_net::record::{self, RecordOutcome, RecordRequest, RecorderHandle, RecorderUpdate};
use sse_replay_net::sink::Progress;

/// One request header row. A secret row's value is masked on screen and never persisted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeaderRow {
    pub name: String,
    pub value: String,
    pub secret: bool,
}

/// What storage keeps of a header row: the value only when it is not secret.
#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct StoredHeader {
    name: String,
    value: String,
    secret: bool,
}

impl Serialize for HeaderRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kept =
            super::persist::redacted::header_value_kept(&self.name, &self.value, self.secret);
        let value = if kept {
            self.value.clone()
        } else {
            String::new()
        };
        StoredHeader {
            name: self.name.clone(),
            value,
            secret: self.secret,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for HeaderRow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let h = StoredHeader::deserialize(d)?;
        let kept = super::persist::redacted::header_value_kept(&h.name, &h.value, h.secret);
        Ok(Self {
            value: if kept { h.value } else { String::new() },
            secret: h.secret || redact::is_secret_header(&h.name),
            name: h.name,
        })
    }
}

/// Ready-made requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Template {
    /// OpenAI Chat Completions, streaming, a `get_weather` tool, parallel calls.
    OpenAiChat,
    /// Anthropic Messages, streaming, a `get_weather` tool.
    AnthropicMessages,
}

impl Template {
    pub const ALL: [Template; 2] = [Template::OpenAiChat, Template::AnthropicMessages];

    /// The menu label.
    pub fn label(self) -> &'static str {
        match self {
            Template::OpenAiChat => "OpenAI chat: get_weather, parallel calls",
            Template::AnthropicMessages => "Anthropic messages: get_weather",
        }
    }

    /// URL, headers (keys read from the environment at Start) and body.
    pub fn request(self) -> (&'static str, Vec<HeaderRow>, String) {
        let row = |name: &str, value: &str, secret: bool| HeaderRow {
            name: name.into(),
            value: value.into(),
            secret,
        };
        match self {
            Template::OpenAiChat => (
                "https://api.openai.com/v1/chat/completions",
                vec![row("Authorization", "Bearer $OPENAI_API_KEY", true), row("Content-Type", "application/json", false)],
                serde_json::to_string_pretty(&serde_json::json!({
                    "model": "gpt-4o-mini",
                    "stream": true,
                    "parallel_tool_calls": true,
                    "messages": [{"role": "user", "content": "What's the weather in 深圳 and in Tokyo for the next 3 days? Call the tool once per city."}],
                    "tools": [{"type": "function", "function": {
                        "name": "get_weather",
                        "description": "Weather forecast for a city",
                        "parameters": {"type": "object", "properties": {
                            "city": {"type": "string"},
                            "days": {"type": "integer", "minimum": 1, "maximum": 7}
                        }, "required": ["city", "days"]}
                    }}]
                }))
                .unwrap_or_default(),
            ),
            Template::AnthropicMessages => (
                "https://api.anthropic.com/v1/messages",
                vec![
                    row("x-api-key", "$ANTHROPIC_API_KEY", true),
                    row("anthropic-version", "2023-06-01", false),
                    row("Content-Type", "application/json", false),
                ],
                serde_json::to_string_pretty(&serde_json::json!({
                    "model": "claude-3-5-haiku-latest",
                    "max_tokens": 1024,
                    "stream": true,
                    "messages": [{"role": "user", "content": "What's the weather in 深圳 and in Tokyo for the next 3 days?"}],
                    "tools": [{
                        "name": "get_weather",
                        "description": "Weather forecast for a city",
                        "input_schema": {"type": "object", "properties": {
                            "city": {"type": "string"},
                            "days": {"type": "integer"}
                        }, "required": ["city", "days"]}
                    }]
                }))
                .unwrap_or_default(),
            ),
        }
    }
}

/// A recording in progress or just finished.
struct Run {
    handle: RecorderHandle,
    rx: mpsc::Receiver<RecorderUpdate>,
    live: Recording,
    progress: Progress,
    outcome: Option<Box<RecordOutcome>>,
    /// New chunks not yet handed to the host.
    dirty: bool,
    last_live: Option<Instant>,
}

impl Drop for Run {
    fn drop(&mut self) {
        // Leaving the panel (or the app) stops the recorder; it saves what arrived.
        self.handle.stop();
    }
}

/// The Recorder form: what to request and where to write it. Persisted in the settings
/// (`#[serde(default)]`) without secret header values; the recording itself is a [`RecorderRun`],
/// owned by the app at runtime and never persisted.
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct RecorderForm {
    /// Written with its credentials redacted (query, user name and password, path).
    #[serde(serialize_with = "super::persist::redacted::url")]
    pub url: String,
    pub method: String,
    pub headers: Vec<HeaderRow>,
    /// Written with its secret fields redacted.
    #[serde(serialize_with = "super::persist::redacted::body")]
    pub body: String,
    /// Where recordings are written as they arrive.
    pub out_dir: PathBuf,
    pub timeout_secs: f64,
    /// Write the request's secrets to the recording as they are (off at every start: never
    /// persisted, so a forgotten tick cannot leak keys into later recordings).
    #[serde(skip)]
    pub keep_secrets: bool,
    /// Saved requests, by name (written without their secrets, as the form is).
    pub saved: Vec<SavedRequest>,
    /// The name the next "Save request" uses.
    #[serde(skip)]
    pub save_name: String,
}

/// A request saved under a name: what the form sends, secrets redacted when written.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SavedRequest {
    pub name: String,
    #[serde(serialize_with = "super::persist::redacted::url")]
    pub url: String,
    pub method: String,
    pub headers: Vec<HeaderRow>,
    #[serde(serialize_with = "super::persist::redacted::body")]
    pub body: String,
}

/// The environment variables `text` refers to (`$VAR`, `${VAR}`), as the recorder expands them.
pub fn env_names(text: &str) -> Vec<String> {
    let names = std::cell::RefCell::new(Vec::new());
    sse_replay_net::headers::expand_env(text, &|name: &str| {
        names.borrow_mut().push(name.to_owned());
        Some(String::new())
    })
    .ok();
    names.into_inner()
}

/// The Recorder's runtime: the recording in progress (its thread, channel and handle) and the
/// last result. Owned by the app, never persisted; dropping it stops the recording.
#[derive(Default)]
pub struct RecorderRun {
    run: Option<Run>,
    /// The last error or result, shown in the status line; cleared by the next Start.
    status: Option<(bool, String)>,
}

impl Default for RecorderForm {
    fn default() -> Self {
        let (url, headers, body) = Template::OpenAiChat.request();
        Self {
            url: url.into(),
            method: "POST".into(),
            headers,
            body,
            out_dir: super::captures::default_dir(),
            timeout_secs: 60.0,
            keep_secrets: false,
            saved: Vec::new(),
            save_name: String::new(),
        }
    }
}

impl std::fmt::Debug for RecorderForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // No header values here: they may be secrets.
        f.debug_struct("RecorderForm")
            .field("url", &redact::redact_url(&self.url))
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for RecorderRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecorderRun")
            .field("running", &self.is_running())
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl RecorderForm {
    /// Fills the form from a template.
    pub fn apply_template(&mut self, t: Template) {
        let (url, headers, body) = t.request();
        self.url = url.into();
        self.method = "POST".into();
        self.headers = headers;
        self.body = body;
    }

    /// The request the form describes, `$VAR` expanded through `lookup` (in the URL and the
    /// header values), or why not.
    pub fn build_request(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<RecordRequest, String> {
        let url = self.url.trim();
        if url.is_empty() {
            return Err("enter a URL".into());
        }
        let url = sse_replay_net::headers::expand_env(url, &lookup)
            .map_err(|name| format!("the URL needs ${name}, which is not set"))?;
        let url = url.as_str();
        let lines: Vec<(String, bool)> = self
            .headers
            .iter()
            .filter(|r| !r.name.trim().is_empty())
            .map(|r| (format!("{}: {}", r.name.trim(), r.value), r.secret))
            .collect();
        let sse_replay_net::record::RequestHeaders {
            headers,
            secret_headers,
        } = sse_replay_net::record::request_headers(
            lines.iter().map(|(l, secret)| (l.as_str(), *secret)),
            lookup,
        )
        .map_err(|e| e.to_string())?;
        let method = self.method.trim().to_ascii_uppercase();
        let body = (!self.body.trim().is_empty() && method != "GET")
            .then(|| self.body.clone().into_bytes());
        let output = sse_replay_net::record::default_output(&self.out_dir);
        Ok(RecordRequest {
            url: url.to_owned(),
            method: Some(method),
            headers,
            secret_headers,
            body,
            output: Some(output),
            overwrite: false,
            keep_secrets: self.keep_secrets,
            timeout: Duration::from_secs_f64(self.timeout_secs.clamp(1.0, 3600.0)),
            title: String::new(),
        })
    }

    fn form_ui(&mut self, ui: &mut Ui, queue: &mut ActionQueue) {
        ui.horizontal(|ui| {
            egui::ComboBox::from_id_salt("recorder-method")
                .selected_text(self.method.clone())
                .width(80.0)
                .show_ui(ui, |ui| {
                    for m in ["POST", "GET", "PUT"] {
                        ui.selectable_value(&mut self.method, m.to_owned(), m);
                    }
                })
                .response
                .on_hover_text("HTTP method");
            ui.add(
                egui::TextEdit::singleline(&mut self.url)
                    .hint_text("https://api.openai.com/v1/chat/completions")
                    .desired_width(f32::INFINITY),
            );
        });
        self.saved_ui(ui);
        ui.horizontal(|ui| {
            let template_label = ui.label("Template:");
            let mut chosen = None;
            egui::ComboBox::from_id_salt("recorder-template")
                .selected_text("choose…")
                .show_ui(ui, |ui| {
                    for t in Template::ALL {
                        if ui.selectable_label(false, t.label()).clicked() {
                            chosen = Some(t);
                        }
                    }
                })
                .response
                .labelled_by(template_label.id);
            if let Some(t) = chosen {
                self.apply_template(t);
            }
            let timeout_label = ui.label("Timeout (s):");
            ui.add(egui::DragValue::new(&mut self.timeout_secs).range(1.0..=3600.0))
                .labelled_by(timeout_label.id);
            ui.checkbox(&mut self.keep_secrets, "Keep secrets")
                .on_hover_text("Write auth headers, ?key= and body fields such as api_key to the recording as they are (normally redacted)");
        });
        ui.label(RichText::new("Headers").strong()).on_hover_text("$VAR and ${VAR} are read from the environment at Start. Secret values are masked, redacted in recordings and never saved in settings.");
        let mut remove = None;
        egui::Grid::new("recorder-headers")
            .num_columns(4)
            .striped(true)
            .show(ui, |ui| {
                for (i, row) in self.headers.iter_mut().enumerate() {
                    ui.add(
                        egui::TextEdit::singleline(&mut row.name)
                            .hint_text("Name")
                            // In a grid a text field only gets last frame's column width:
                            // a minimum size is what makes the column wide.
                            .min_size(egui::vec2(160.0, 0.0))
                            .desired_width(160.0),
                    );
                    if redact::is_secret_header(&row.name) {
                        row.secret = true;
                    }
                    // A `$VAR` reference is where the key comes from, not the key: shown.
                    let masked = row.secret && !redact::is_env_reference(&row.value);
                    ui.add(
                        egui::TextEdit::singleline(&mut row.value)
                            .password(masked)
                            .hint_text("value or $ENV_VAR")
                            .min_size(egui::vec2(320.0, 0.0))
                            .desired_width(320.0),
                    );
                    ui.checkbox(&mut row.secret, "secret");
                    if ui.small_button("✖").on_hover_text("Remove").clicked() {
                        remove = Some(i);
                    }
                    ui.end_row();
                }
            });
        if let Some(i) = remove {
            self.headers.remove(i);
        }
        if ui.small_button("+ header").clicked() {
            self.headers.push(HeaderRow::default());
        }
        self.env_ui(ui);
        let body_label = ui.label(RichText::new("Body").strong());
        // The body gets a share of the window: 260 points on a 700-high laptop screen, more on a
        // desktop one, leaving room below for the recording as it arrives.
        let body_height = (ui.ctx().content_rect().height() * 0.37).clamp(200.0, 560.0);
        let rows = (body_height / ui.text_style_height(&egui::TextStyle::Monospace)).floor();
        egui::ScrollArea::vertical()
            .id_salt("recorder-body")
            .max_height(body_height)
            .show(ui, |ui| {
                ui.add(
                    egui::TextEdit::multiline(&mut self.body)
                        .code_editor()
                        .desired_rows(rows.max(8.0) as usize)
                        .desired_width(f32::INFINITY),
                )
                .labelled_by(body_label.id);
            });
        super::captures::folder_ui(
            ui,
            "Save recordings in:",
            &mut self.out_dir,
            super::captures::CapturesFor::Recorder,
            queue,
        );
    }
}

impl RecorderForm {
    /// The environment variables the URL and headers refer to, each said set or not set (read at
    /// Start: a missing one stops it).
    fn env_ui(&self, ui: &mut Ui) {
        let mut names = env_names(&self.url);
        for h in &self.headers {
            names.extend(env_names(&h.value));
        }
        names.dedup();
        if names.is_empty() {
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.weak("Environment:");
            for name in names {
                let set = std::env::var_os(&name).is_some_and(|v| !v.is_empty());
                let (text, color) = if set {
                    (format!("${name} is set"), super::style::ok_color(ui))
                } else {
                    (format!("${name} is not set"), super::style::err_color(ui))
                };
                ui.label(RichText::new(text).color(color)).on_hover_text(
                    "Read from the app's environment at Start; its value is never shown or saved",
                );
            }
        });
    }

    /// The saved requests: choose one to fill the form, save the form under a name, delete.
    fn saved_ui(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            let mut chosen = None;
            let label = ui.label("Saved requests");
            egui::ComboBox::from_id_salt("recorder-saved")
                .selected_text(if self.saved.is_empty() {
                    "none yet"
                } else {
                    "choose…"
                })
                .show_ui(ui, |ui| {
                    for (i, r) in self.saved.iter().enumerate() {
                        if ui.selectable_label(false, &r.name).clicked() {
                            chosen = Some(i);
                        }
                    }
                })
                .response
                .labelled_by(label.id);
            if let Some(r) = chosen.and_then(|i| self.saved.get(i)).cloned() {
                self.url = r.url;
                self.method = r.method;
                self.headers = r.headers;
                self.body = r.body;
                self.save_name = r.name;
            }
            ui.add(
                egui::TextEdit::singleline(&mut self.save_name)
                    .hint_text("name")
                    .desired_width(140.0),
            );
            let name = self.save_name.trim().to_owned();
            if ui
                .add_enabled(!name.is_empty(), egui::Button::new("Save request"))
                .on_hover_text(
                    "Keep this request under this name (secrets are not written to disk)",
                )
                .clicked()
            {
                let saved = SavedRequest {
                    name: name.clone(),
                    url: self.url.clone(),
                    method: self.method.clone(),
                    headers: self.headers.clone(),
                    body: self.body.clone(),
                };
                match self.saved.iter_mut().find(|r| r.name == name) {
                    Some(r) => *r = saved,
                    None => self.saved.push(saved),
                }
            }
            if self.saved.iter().any(|r| r.name == name) && ui.small_button("Delete").clicked() {
                self.saved.retain(|r| r.name != name);
            }
        });
    }
}

impl RecorderRun {
    /// Whether a recording is in progress.
    pub fn is_running(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.outcome.is_none())
    }

    /// The recording so far (or the finished one), if any.
    pub fn recording(&self) -> Option<&Recording> {
        self.run
            .as_ref()
            .map(|r| r.outcome.as_ref().map_or(&r.live, |o| &o.recording))
    }

    /// Starts recording what `form` describes; `ctx` is woken when updates arrive.
    pub fn start(&mut self, form: &RecorderForm, ctx: &egui::Context) {
        let req = match form.build_request(sse_replay_net::headers::env_lookup) {
            Ok(r) => r,
            Err(e) => {
                self.status = Some((false, e));
                return;
            }
        };
        if let Err(e) = std::fs::create_dir_all(&form.out_dir) {
            self.status = Some((
                false,
                format!("cannot create {}: {e}", form.out_dir.display()),
            ));
            return;
        }
        let (tx, rx) = mpsc::channel();
        let waker = ctx.clone();
        let handle = record::start(req, move |u| {
            tx.send(u).ok();
            waker.request_repaint_after(Duration::from_millis(10));
        });
        self.status = None;
        self.run = Some(Run {
            handle,
            rx,
            live: Recording::default(),
            progress: Progress::default(),
            outcome: None,
            dirty: false,
            last_live: None,
        });
    }

    /// Asks the recorder to stop (it saves what arrived).
    pub fn stop(&mut self) {
        if let Some(run) = &self.run {
            run.handle.stop();
        }
    }

    /// Applies the updates that arrived; queues the live recording when the host should see it.
    fn drain(&mut self, queue: &mut ActionQueue) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        let budget = Instant::now() + Duration::from_millis(5);
        loop {
            if Instant::now() >= budget {
                // More may be queued than the time budget allows: come back next frame.
                run.dirty = true;
                break;
            }
            let Ok(update) = run.rx.try_recv() else { break };
            match update {
                RecorderUpdate::Sent { .. } | RecorderUpdate::WaitingForReader { .. } => {}
                RecorderUpdate::Response(r) => run.live.response = Some(r),
                RecorderUpdate::Chunks { chunks, progress } => {
                    run.live.chunks.extend(chunks);
                    run.live.meta.timing_known = true;
                    run.progress = progress;
                    run.dirty = true;
                }
                RecorderUpdate::Finished(mut outcome) => {
                    // The outcome's recording is the head (its chunks are in the saved file, not
                    // held by the recorder): the chunks are the ones the updates brought.
                    if outcome.recording.chunks.is_empty() {
                        outcome.recording.chunks = std::mem::take(&mut run.live.chunks);
                    }
                    // The summary names the file ("…; saved PATH"); a problem (`record`'s exit 1 or
                    // 2: an error, a provider error, a stream cut short) comes first.
                    self.status = Some(match outcome.problem() {
                        Some(p) if outcome.error.is_some() => (false, p),
                        Some(p) => (false, format!("{p} — {}", outcome.summary())),
                        None => (true, outcome.summary()),
                    });
                    run.progress = outcome.progress;
                    // No response: nothing was written and there is nothing to show in Replay.
                    let arrived = outcome.recording.response.is_some()
                        || !outcome.recording.chunks.is_empty();
                    run.live = outcome.recording.clone();
                    run.outcome = Some(outcome);
                    run.dirty = arrived;
                    run.last_live = None; // hand over the final state at once
                }
            }
        }
        let due = run
            .last_live
            .is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
        if run.dirty && due {
            run.dirty = false;
            run.last_live = Some(Instant::now());
            queue.push(Action::ShowLive(Box::new(run.live.clone())));
        }
    }

    /// Applies the recorder's updates without drawing: the host calls this on frames where the
    /// panel is not shown, so the live recording keeps flowing to the other tabs.
    pub fn poll(&mut self, ctx: &egui::Context, queue: &mut ActionQueue) {
        self.drain(queue);
        if self.run.as_ref().is_some_and(|r| r.dirty) {
            // Live updates are throttled; make sure the pending one is delivered.
            ctx.request_repaint_after(Duration::from_millis(100));
        }
    }

    /// Draws the panel; what it asks of the host (live updates, open, save as) goes on `queue`.
    pub fn ui(&mut self, ui: &mut Ui, form: &mut RecorderForm, queue: &mut ActionQueue) {
        self.poll(ui.ctx(), queue);
        let running = self.is_running();
        ui.heading("Recorder");
        ui.add_enabled_ui(!running, |ui| form.form_ui(ui, queue));
        ui.separator();
        ui.horizontal(|ui| {
            if running {
                if ui
                    .button("⏹ Stop")
                    .on_hover_text("Stop and save what arrived")
                    .clicked()
                {
                    self.stop();
                }
            } else if ui.button("⏺ Start").clicked() {
                self.start(form, ui.ctx());
            }
            if let Some(run) = &self.run {
                let p = run.progress;
                let status = run.live.response.as_ref().map_or_else(
                    || {
                        if running {
                            "waiting for the response…".to_owned()
                        } else {
                            String::new()
                        }
                    },
                    |r| format!("HTTP {}", r.status),
                );
                ui.label(format!(
                    "{status} · {} · {} · {} · {}",
                    sse_replay_core::text::plural(p.bytes, "byte"),
                    sse_replay_core::text::plural(p.chunks, "read"),
                    sse_replay_core::text::plural(p.events, "event"),
                    sse_replay_core::text::plural(p.calls, "call")
                ));
            }
        });
        if let Some((ok, text)) = &self.status {
            let color = if *ok {
                ui.visuals().text_color()
            } else {
                ui.visuals().error_fg_color
            };
            ui.label(RichText::new(text).color(color));
        }
        if let Some(outcome) = self.run.as_ref().and_then(|r| r.outcome.as_ref()) {
            ui.horizontal(|ui| {
                if let Some(path) = &outcome.saved
                    && ui.button("Open in player").clicked()
                {
                    queue.push(Action::OpenPath(path.clone(), OpenTarget::Primary));
                    queue.push(Action::ShowTab(Tab::Replay));
                }
                let arrived = outcome.recording.response.is_some();
                if arrived && ui.button("Save As…").clicked() {
                    queue.push(Action::SaveRecordingAs(Box::new(outcome.recording.clone())));
                }
            });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn secret_header_values_are_never_persisted() {
        let mut panel = RecorderForm::default();
        panel.headers[0].value = "Bearer sk-live-abc".into();
        panel.headers.push(HeaderRow {
            name: "X-Trace".into(),
            value: "t-1".into(),
            secret: false,
        });
        // A key under an ordinary name, alone or inside the value: not persisted either.
        for value in [
            "sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8x",
            "id=7; k=sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8x",
        ] {
            panel.headers.push(HeaderRow {
                name: "X-Debug".into(),
                value: value.into(),
                secret: false,
            });
        }
        let text = ron::to_string(&panel).unwrap();
        assert!(!text.contains("sk-live-abc"), "{text}");
        assert!(!text.contains("Ab3dEf6hIj9"), "{text}");
        assert!(text.contains("t-1"), "{text}");
        let back: RecorderForm = ron::from_str(&text).unwrap();
        assert_eq!(back.headers[0].value, "");
        assert!(back.headers[0].secret);
    }

    #[test]
    fn keep_secrets_is_passed_on_and_never_persisted() {
        let mut panel = RecorderForm {
            keep_secrets: true,
            ..RecorderForm::default()
        };
        panel.headers[0].value = "Bearer x".into();
        let req = panel.build_request(|_| None).unwrap();
        assert!(req.keep_secrets);
        assert!(!req.overwrite, "default names are never overwritten");
        let back: RecorderForm = ron::from_str(&ron::to_string(&panel).unwrap()).unwrap();
        assert!(!back.keep_secrets);
    }

    /// The panel records from a local `serve`, hands the host the stream as it arrives, and saves
    /// it without the secret.
    #[test]
    fn records_live_from_a_local_server() {
        use sse_replay_net::serve::{self, Pacing, Plan, ServeConfig};
        let seed = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
        let plan = std::sync::Arc::new(Plan::new(&seed, Pacing::Recorded { speed: 1.0 }, None));
        let server = serve::start(ServeConfig {
            addr: "127.0.0.1:0".parse().unwrap(),
            plan,
            log: false,
            limits: Default::default(),
        })
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut form = RecorderForm {
            url: format!("http://{}/v1/chat/completions", server.addr()),
            headers: vec![HeaderRow {
                name: "Authorization".into(),
                value: "Bearer sk-panel-secret".into(),
                secret: true,
            }],
            body: "{}".into(),
            out_dir: dir.path().to_path_buf(),
            ..Default::default()
        };
        let ctx = egui::Context::default();
        let mut panel = RecorderRun::default();
        panel.start(&form, &ctx);
        assert!(panel.is_running(), "{:?}", panel.status);
        let mut lives = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while panel
            .run
            .as_ref()
            .is_none_or(|r| r.outcome.is_none() || r.dirty)
        {
            assert!(Instant::now() < deadline, "the recording did not finish");
            let mut queue = ActionQueue::default();
            let mut out = ctx.run_ui(egui::RawInput::default(), |ui| {
                panel.ui(ui, &mut form, &mut queue)
            });
            for action in queue.take() {
                if let Action::ShowLive(rec) = action {
                    lives.push(*rec);
                }
            }
            out.textures_delta.clear(); // no renderer here
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(lives.len() >= 3, "followed live: {} updates", lives.len());
        assert!(
            lives
                .windows(2)
                .all(|w| w[0].chunks.len() <= w[1].chunks.len())
        );
        let last = lives.last().unwrap();
        assert_eq!(last.body(), seed.body());
        let saved = panel
            .run
            .as_ref()
            .and_then(|r| r.outcome.as_ref())
            .and_then(|o| o.saved.clone())
            .unwrap();
        let text = std::fs::read_to_string(saved).unwrap();
        assert!(!text.contains("sk-panel-secret"));
        assert!(
            panel.status.as_ref().is_some_and(|(ok, _)| *ok),
            "{:?}",
            panel.status
        );
        server.stop();
    }

    /// A stream cut before its end is flagged as `record` flags it (exit 1 there): not a success.
    #[test]
    fn a_truncated_stream_is_flagged() {
        use sse_replay_net::serve::{self, Pacing, Plan, ServeConfig};
        let mut spec = sse_replay_core::stub::seed_example();
        spec.quirks.truncate = true;
        let cut = sse_replay_core::stub::build(&spec);
        let plan = std::sync::Arc::new(Plan::new(&cut, Pacing::Instant, None));
        let server = serve::start(ServeConfig {
            addr: "127.0.0.1:0".parse().unwrap(),
            plan,
            log: false,
            limits: Default::default(),
        })
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut form = RecorderForm {
            url: format!("http://{}/v1/chat/completions", server.addr()),
            headers: vec![],
            body: "{}".into(),
            out_dir: dir.path().to_path_buf(),
            ..Default::default()
        };
        let ctx = egui::Context::default();
        let mut panel = RecorderRun::default();
        panel.start(&form, &ctx);
        let deadline = Instant::now() + Duration::from_secs(20);
        while panel.run.as_ref().is_none_or(|r| r.outcome.is_none()) {
            assert!(Instant::now() < deadline, "the recorder did not finish");
            let mut queue = ActionQueue::default();
            let mut out = ctx.run_ui(egui::RawInput::default(), |ui| {
                panel.ui(ui, &mut form, &mut queue)
            });
            out.textures_delta.clear();
            std::thread::sleep(Duration::from_millis(20));
        }
        let (ok, text) = panel.status.clone().unwrap();
        assert!(!ok, "{text}");
        assert!(text.contains("ended early"), "{text}");
        assert!(text.contains("saved"), "it is still saved: {text}");
        server.stop();
    }

    /// An unreachable host: the panel says why, writes nothing and shows nothing in Replay.
    #[test]
    fn an_unreachable_host_writes_nothing() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let mut form = RecorderForm {
            url: format!("http://127.0.0.1:{port}/v1/chat/completions"),
            headers: vec![],
            body: "{}".into(),
            out_dir: dir.path().to_path_buf(),
            ..Default::default()
        };
        let ctx = egui::Context::default();
        let mut panel = RecorderRun::default();
        panel.start(&form, &ctx);
        let mut shown = 0;
        let deadline = Instant::now() + Duration::from_secs(20);
        while panel.run.as_ref().is_none_or(|r| r.outcome.is_none()) {
            assert!(Instant::now() < deadline, "the recorder did not finish");
            let mut queue = ActionQueue::default();
            let mut out = ctx.run_ui(egui::RawInput::default(), |ui| {
                panel.ui(ui, &mut form, &mut queue)
            });
            shown += queue
                .take()
                .into_iter()
                .filter(|a| matches!(a, Action::ShowLive(_)))
                .count();
            out.textures_delta.clear();
            std::thread::sleep(Duration::from_millis(20));
        }
        let (ok, text) = panel.status.clone().unwrap();
        assert!(!ok);
        assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
        assert_eq!(shown, 0);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn templates_build_requests_with_env_keys() {
        let mut panel = RecorderForm::default();
        for t in Template::ALL {
            panel.apply_template(t);
            let req = panel.build_request(|_| Some("sk-env".into())).unwrap();
            assert!(req.headers.iter().any(|(_, v)| v.contains("sk-env")));
            assert!(!req.secret_headers.is_empty());
            let body: serde_json::Value =
                serde_json::from_slice(req.body.as_deref().unwrap()).unwrap();
            assert_eq!(body["stream"], true);
            assert_eq!(req.method.as_deref(), Some("POST"));
        }
        let err = panel.build_request(|_| None).unwrap_err();
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    }
}
