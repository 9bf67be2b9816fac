//! The Proxy panel: start/stop [`crate::net::proxy`] and list the sessions it captures, each
//! openable in the player. The proxy runs on its own runtime thread; its events arrive through a
//! channel and a repaint waker. Stopping happens on a helper thread so the UI never waits.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use egui::{RichText, Ui};
use serde::{Deserialize, Serialize};

use super::view::{Action, ActionQueue, OpenTarget, Tab};
use crate::net::proxy::{self, ProxyConfig, ProxyEvent, ProxyHandle};

/// One captured event stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub id: u64,
    pub path: PathBuf,
    pub method: String,
    /// The upstream URL (redacted).
    pub target: String,
    /// `None` while the stream is still arriving.
    pub result: Option<SessionResult>,
}

/// How a captured stream ended.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionResult {
    pub saved: bool,
    pub bytes: u64,
    pub chunks: u64,
    pub calls: usize,
    pub error: Option<String>,
}

/// The running proxy. Dropping it (leaving the app) stops the proxy and saves open captures.
struct Running {
    handle: ProxyHandle,
    rx: mpsc::Receiver<ProxyEvent>,
}

/// The Proxy form: where to listen, where to forward, where to write. Persisted in the settings;
/// the running proxy is a [`ProxyRun`], owned by the app at runtime and never persisted.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyForm {
    pub listen: String,
    pub upstream: String,
    pub out_dir: PathBuf,
    pub timeout_secs: f64,
}

/// The Proxy's runtime: the running proxy (its thread and channel), the sessions it captured and
/// its request log. Owned by the app, never persisted; dropping it stops the proxy.
#[derive(Default)]
pub struct ProxyRun {
    running: Option<Running>,
    sessions: Vec<Session>,
    /// Recent request lines (newest last).
    log: Vec<String>,
    error: Option<String>,
}

impl Default for ProxyForm {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            upstream: "https://api.openai.com".into(),
            out_dir: super::captures::default_dir(),
            timeout_secs: 300.0,
        }
    }
}

impl std::fmt::Debug for ProxyRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyRun")
            .field("running", &self.addr())
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

const LOG_MAX: usize = 200;

impl ProxyRun {
    /// The address the proxy listens on, while it runs.
    pub fn addr(&self) -> Option<std::net::SocketAddr> {
        self.running.as_ref().map(|r| r.handle.addr())
    }

    /// The captured sessions, oldest first.
    pub fn sessions(&self) -> &[Session] {
        &self.sessions
    }

    /// Starts the proxy `form` describes; `ctx` is woken on each event.
    pub fn start(&mut self, form: &ProxyForm, ctx: &egui::Context) {
        let listen = match form.listen.trim().parse() {
            Ok(a) => a,
            Err(e) => {
                self.error = Some(format!("listen address {:?}: {e}", form.listen));
                return;
            }
        };
        let config = ProxyConfig {
            listen,
            upstream: form.upstream.trim().to_owned(),
            out_dir: form.out_dir.clone(),
            timeout: Duration::from_secs_f64(form.timeout_secs.clamp(1.0, 3600.0)),
            keep_secrets: false,
            limits: crate::net::ServerLimits::default(),
        };
        let (tx, rx) = mpsc::channel();
        let waker = ctx.clone();
        match proxy::start(config, move |e| {
            let _ = tx.send(e);
            waker.request_repaint();
        }) {
            Ok(handle) => {
                self.error = None;
                self.running = Some(Running { handle, rx });
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// Stops the proxy on a helper thread (open captures are saved).
    pub fn stop(&mut self) {
        if let Some(Running { handle, rx }) = self.running.take() {
            self.apply(rx.try_iter().collect());
            let _ = std::thread::Builder::new()
                .name("sse-replay-proxy-stop".into())
                .spawn(move || handle.stop());
        }
    }

    fn apply(&mut self, events: Vec<ProxyEvent>) {
        for e in events {
            match e {
                ProxyEvent::Forwarded {
                    method,
                    path,
                    status,
                } => self.log.push(format!("{method} {path} → {status}")),
                ProxyEvent::UpstreamFailed {
                    method,
                    path,
                    message,
                } => self.log.push(format!("{method} {path} → 502: {message}")),
                ProxyEvent::Refused {
                    method,
                    path,
                    status,
                    reason,
                } => self
                    .log
                    .push(format!("{method} {path} → {status}: {reason}")),
                ProxyEvent::CaptureStarted {
                    id,
                    path,
                    method,
                    target,
                } => self.sessions.push(Session {
                    id,
                    path,
                    method,
                    target,
                    result: None,
                }),
                ProxyEvent::CaptureFinished {
                    id,
                    path,
                    bytes,
                    chunks,
                    calls,
                    error,
                } => {
                    let result = SessionResult {
                        saved: path.is_some(),
                        bytes,
                        chunks,
                        calls,
                        error,
                    };
                    match self.sessions.iter_mut().find(|s| s.id == id) {
                        Some(s) => s.result = Some(result),
                        None => self.sessions.push(Session {
                            id,
                            path: path.unwrap_or_default(),
                            method: String::new(),
                            target: String::new(),
                            result: Some(result),
                        }),
                    }
                }
            }
        }
        if self.log.len() > LOG_MAX {
            self.log.drain(..self.log.len() - LOG_MAX);
        }
    }

    /// Draws the panel; a session's Open queues opening it in Replay on `queue`.
    pub fn ui(&mut self, ui: &mut Ui, form: &mut ProxyForm, queue: &mut ActionQueue) {
        if let Some(r) = &self.running {
            let events: Vec<_> = r.rx.try_iter().take(1000).collect();
            self.apply(events);
        }
        let running = self.running.is_some();
        ui.heading("Proxy");
        ui.add_enabled_ui(!running, |ui| {
            egui::Grid::new("proxy-form").num_columns(2).show(ui, |ui| {
                let label = ui.label("Listen on");
                ui.add(egui::TextEdit::singleline(&mut form.listen).desired_width(200.0))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Upstream");
                ui.add(
                    egui::TextEdit::singleline(&mut form.upstream)
                        .hint_text("https://api.openai.com")
                        .desired_width(320.0),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Upstream timeout (s)");
                ui.add(egui::DragValue::new(&mut form.timeout_secs).range(1.0..=3600.0))
                    .labelled_by(label.id);
                ui.end_row();
            });
            super::captures::folder_ui(
                ui,
                "Save captures in",
                &mut form.out_dir,
                super::captures::CapturesFor::Proxy,
                queue,
            );
        });
        ui.horizontal(|ui| {
            if running {
                if ui.button("⏹ Stop proxy").clicked() {
                    self.stop();
                }
            } else if ui.button("▶ Start proxy").clicked() {
                self.start(form, ui.ctx());
            }
            if let Some(addr) = self.addr() {
                ui.label(format!(
                    "Point your application's base URL at http://{addr}/"
                ));
                if ui.small_button("Copy").clicked() {
                    ui.ctx().copy_text(format!("http://{addr}/"));
                }
            }
        });
        if let Some(e) = &self.error {
            ui.label(RichText::new(e).color(ui.visuals().error_fg_color));
        }
        ui.separator();
        ui.label(RichText::new(format!("Captured sessions ({})", self.sessions.len())).strong());
        egui::ScrollArea::vertical()
            .id_salt("proxy-sessions")
            .max_height(260.0)
            .show(ui, |ui| {
                for s in self.sessions.iter().rev() {
                    ui.horizontal(|ui| {
                        let name = s.path.file_name().map_or_else(
                            || s.path.display().to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        );
                        match &s.result {
                            None => {
                                ui.spinner();
                                ui.label(format!(
                                    "{name} · {} {} · streaming…",
                                    s.method, s.target
                                ));
                            }
                            Some(r) => {
                                let text = format!(
                                    "{name} · {} {} · {} bytes, {} reads, {} calls",
                                    s.method, s.target, r.bytes, r.chunks, r.calls
                                );
                                ui.label(text);
                                if let Some(e) = &r.error {
                                    ui.label(RichText::new(e).color(ui.visuals().warn_fg_color));
                                }
                                if r.saved && ui.button("Open").clicked() {
                                    queue.push(Action::OpenPath(
                                        s.path.clone(),
                                        OpenTarget::Primary,
                                    ));
                                    queue.push(Action::ShowTab(Tab::Replay));
                                }
                            }
                        }
                    });
                }
            });
        if !self.log.is_empty() {
            egui::CollapsingHeader::new(format!("Requests ({})", self.log.len()))
                .id_salt("proxy-log")
                .show(ui, |ui| {
                    for line in self.log.iter().rev().take(50) {
                        ui.monospace(line);
                    }
                });
        }
    }
}
