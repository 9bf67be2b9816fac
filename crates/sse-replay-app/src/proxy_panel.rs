//! The Proxy panel: start/stop [`sse_replay_net::proxy`] and list every request through it (the list
//! and detail view are [`super::proxy_list`]), each capture
//! openable in the player. The proxy runs on its own runtime thread; its events arrive through a
//! channel and a repaint waker. Stopping happens on a helper thread so the UI never waits.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use egui::{RichText, Ui};
use serde::{Deserialize, Serialize};

use super::view::{Action, ActionQueue};
use sse_replay_core::recording::{Meta, Recording, RequestInfo, ResponseInfo};
use sse_replay_net::exchange::{Exchange, ExchangeEnd};
use sse_replay_net::proxy::{self, ProxyConfig, ProxyEvent, ProxyHandle};

/// One request through the proxy (a flow): what [`sse_replay_net::exchange`] reports, joined with
/// its first byte, its body's end and its capture.
///
/// `exchange.id` is the app's flow number, not the proxy's: each start of the proxy numbers its
/// requests from 1 again, so the app gives every flow its own number (in the order their heads
/// arrive) and the selection, the watched flow and the exports all go by it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExchangeRow {
    pub exchange: Exchange,
    /// Microseconds from the forward to the first body byte, as soon as it arrived.
    pub first_byte_micros: Option<u64>,
    /// `None` while the response body is still arriving.
    pub end: Option<ExchangeEnd>,
    /// The capture of an event stream (or of a complete LLM response).
    pub capture: Option<Capture>,
    /// The proxy that carried it has gone before the flow ended: nothing more will arrive.
    pub gone: bool,
}

/// A captured response.
#[derive(Clone, Debug, PartialEq)]
pub struct Capture {
    pub path: PathBuf,
    /// `None` while the stream is still arriving.
    pub result: Option<SessionResult>,
    /// The stream so far, while it arrives (for the detail's event list and the live view);
    /// dropped at its end, when the saved file has it all.
    pub live: Option<Recording>,
}

/// How a captured stream ended.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionResult {
    pub saved: bool,
    pub bytes: u64,
    pub chunks: u64,
    pub calls: usize,
    pub error: Option<String>,
    pub ended_normally: bool,
}

/// The running proxy. Dropping it (leaving the app) stops the proxy and saves open captures.
struct Running {
    handle: ProxyHandle,
    feed: Feed,
}

/// One start of the proxy: its events, and its request numbers mapped to the app's flow numbers.
struct Feed {
    rx: mpsc::Receiver<ProxyEvent>,
    /// The proxy's number of each request → the app's flow number.
    ids: HashMap<u64, u64>,
}

/// The Proxy form: where to listen, where to forward, where to write. Persisted in the settings;
/// the running proxy is a [`ProxyRun`], owned by the app at runtime and never persisted.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyForm {
    /// Keep the requests' secrets in the captures, their HAR entries and curl commands
    /// (`--keep-secrets`): off at every start, never persisted.
    #[serde(skip)]
    pub keep_secrets: bool,
    pub listen: String,
    /// Written with its credentials redacted (query, user name and password, path).
    #[serde(serialize_with = "super::persist::redacted::url")]
    pub upstream: String,
    pub out_dir: PathBuf,
    pub timeout_secs: f64,
}

/// The Proxy's runtime: the running proxy (its thread and channel), the sessions it captured and
/// its request log. Owned by the app, never persisted; dropping it stops the proxy.
#[derive(Default)]
pub struct ProxyRun {
    running: Option<Running>,
    /// Stopped proxies still saving their open captures: their events are taken until they are
    /// gone (a stream cut by the stop ends as its capture is saved).
    stopping: Vec<Feed>,
    /// The last flow number given (flow numbers go on across restarts of the proxy).
    last_id: u64,
    /// The requests, oldest first (at most [`EXCHANGES_MAX`]).
    exchanges: Vec<ExchangeRow>,
    /// The request whose detail is shown.
    selected: Option<u64>,
    error: Option<String>,
    /// The flow shown live in Replay, while it streams.
    watching: Option<u64>,
    /// The watched flow changed since it was last handed to Replay, and when that was.
    watch_dirty: bool,
    last_live: Option<std::time::Instant>,
    /// Which flows the list shows.
    pub filter: super::proxy_list::FlowFilter,
    /// The watched flow, whole, once it has ended: handed to Replay on the next poll.
    finished_watch: Option<Recording>,
    /// The selected finished flow's capture read back from its file, for the detail's event list.
    pub(crate) loaded: Option<(u64, Option<super::proxy_list::FlowBody>)>,
}

impl Default for ProxyForm {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            upstream: "https://api.openai.com".into(),
            out_dir: super::captures::default_dir(),
            timeout_secs: 300.0,
            keep_secrets: false,
        }
    }
}

impl std::fmt::Debug for ProxyRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyRun")
            .field("running", &self.addr())
            .field("exchanges", &self.exchanges.len())
            .finish_non_exhaustive()
    }
}

/// At most this many requests are listed (the oldest go first).
pub const EXCHANGES_MAX: usize = 1000;

impl ProxyRun {
    /// The address the proxy listens on, while it runs.
    pub fn addr(&self) -> Option<std::net::SocketAddr> {
        self.running.as_ref().map(|r| r.handle.addr())
    }

    /// The requests so far, oldest first.
    pub fn exchanges(&self) -> &[ExchangeRow] {
        &self.exchanges
    }

    /// Show the detail of request `id`.
    pub fn select(&mut self, id: u64) {
        self.selected = Some(id);
    }

    /// Follow flow `id` in Replay while it streams; `false` when it is not streaming (a finished
    /// one opens from its file).
    pub fn watch(&mut self, id: u64) -> bool {
        let streaming = self
            .exchanges
            .iter()
            .any(|r| r.exchange.id == id && r.capture.as_ref().is_some_and(|c| c.live.is_some()));
        if streaming {
            self.watching = Some(id);
            self.watch_dirty = true;
            self.last_live = None;
        }
        streaming
    }

    /// A watched flow is still streaming (Replay shows it as arriving).
    pub fn watching_streaming(&self) -> bool {
        self.watching.is_some()
    }

    /// Stop following a flow in Replay (the user opened something else).
    pub fn unwatch(&mut self) {
        self.watching = None;
    }

    /// Take the proxy's events and hand Replay the watched flow (at most ~10 times a second).
    /// Called every frame, whichever tab is shown.
    pub fn poll(&mut self, ctx: &egui::Context, queue: &mut ActionQueue) {
        if let Some(mut r) = self.running.take() {
            let events: Vec<_> = r.feed.rx.try_iter().take(1000).collect();
            self.apply(&mut r.feed.ids, events);
            self.running = Some(r);
        }
        self.poll_stopping();
        if let Some(rec) = self.finished_watch.take() {
            queue.push(Action::ShowLive(Box::new(rec)));
        }
        let Some(id) = self.watching else { return };
        let due = self
            .last_live
            .is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
        let row = self.exchanges.iter().find(|r| r.exchange.id == id);
        let live = row
            .and_then(|r| r.capture.as_ref())
            .and_then(|c| c.live.as_ref());
        match live {
            Some(rec) if self.watch_dirty && due => {
                queue.push(Action::ShowLive(Box::new(rec.clone())));
                self.watch_dirty = false;
                self.last_live = Some(std::time::Instant::now());
            }
            Some(_) if self.watch_dirty => ctx.request_repaint_after(Duration::from_millis(100)),
            Some(_) => {}
            None => self.watching = None,
        }
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
            keep_secrets: form.keep_secrets,
            limits: sse_replay_net::ServerLimits::default(),
        };
        let (tx, rx) = mpsc::channel();
        let waker = ctx.clone();
        match proxy::start(config, move |e| {
            tx.send(e).ok();
            waker.request_repaint();
        }) {
            Ok(handle) => {
                self.error = None;
                let feed = Feed {
                    rx,
                    ids: HashMap::new(),
                };
                self.running = Some(Running { handle, feed });
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// Stops the proxy on a helper thread (open captures are saved: their ends still arrive).
    pub fn stop(&mut self) {
        if let Some(Running { handle, mut feed }) = self.running.take() {
            let events = feed.rx.try_iter().collect();
            self.apply(&mut feed.ids, events);
            self.stopping.push(feed);
            std::thread::Builder::new()
                .name("sse-replay-proxy-stop".into())
                .spawn(move || handle.stop())
                .ok();
        }
    }

    /// Takes the events of stopped proxies; once one is gone, its flows that never ended are
    /// marked so (no "streaming…" for a stream nobody will finish).
    fn poll_stopping(&mut self) {
        let mut feeds = std::mem::take(&mut self.stopping);
        feeds.retain_mut(|feed| {
            let mut events = Vec::new();
            let gone = loop {
                match feed.rx.try_recv() {
                    Ok(e) => events.push(e),
                    Err(mpsc::TryRecvError::Empty) => break false,
                    Err(mpsc::TryRecvError::Disconnected) => break true,
                }
            };
            self.apply(&mut feed.ids, events);
            if gone {
                let ids: Vec<u64> = feed.ids.values().copied().collect();
                for id in ids {
                    self.cut_off(id);
                }
            }
            !gone
        });
        self.stopping.extend(feeds);
    }

    /// Flow `id`'s proxy is gone: whatever had not ended never will.
    fn cut_off(&mut self, id: u64) {
        let watched = self.watching == Some(id);
        let mut last_live = None;
        let Some(row) = self.row_mut(id) else { return };
        if row.end.is_none() {
            row.gone = true;
        }
        if let Some(c) = &mut row.capture
            && c.result.is_none()
        {
            let bytes = c.live.as_ref().map_or(0, |l| l.body_len());
            let chunks = c.live.as_ref().map_or(0, |l| l.chunks.len() as u64);
            c.result = Some(SessionResult {
                saved: c.path.is_file(),
                bytes,
                chunks,
                calls: 0,
                error: Some("the proxy stopped before the stream ended".into()),
                ended_normally: false,
            });
            last_live = c.live.take();
        }
        if watched {
            self.watching = None;
            self.finished_watch = last_live;
        }
    }

    /// Applies one proxy's `events`; `ids` maps its request numbers to the app's flow numbers.
    fn apply(&mut self, ids: &mut HashMap<u64, u64>, events: Vec<ProxyEvent>) {
        for mut e in events {
            // The proxy's number → the flow's: given when the flow is first reported.
            let flow = |ids: &HashMap<u64, u64>, id: u64| ids.get(&id).copied();
            match &mut e {
                ProxyEvent::Exchange(x) => {
                    self.last_id += 1;
                    ids.insert(x.id, self.last_id);
                    x.id = self.last_id;
                }
                ProxyEvent::ExchangeEnded(end) => match flow(ids, end.id) {
                    Some(f) => end.id = f,
                    None => continue,
                },
                ProxyEvent::FirstByte { id, .. }
                | ProxyEvent::CaptureStarted { id, .. }
                | ProxyEvent::CaptureProgress { id, .. }
                | ProxyEvent::CaptureFinished { id, .. } => match flow(ids, *id) {
                    Some(f) => *id = f,
                    None => continue,
                },
                _ => {}
            }
            match e {
                // The request list is built from the exchanges; these lines are the CLI's.
                ProxyEvent::Forwarded { .. }
                | ProxyEvent::UpstreamFailed { .. }
                | ProxyEvent::Refused { .. } => {}
                ProxyEvent::Exchange(x) => {
                    self.exchanges.push(ExchangeRow {
                        exchange: *x,
                        first_byte_micros: None,
                        end: None,
                        capture: None,
                        gone: false,
                    });
                    if self.exchanges.len() > EXCHANGES_MAX {
                        self.exchanges.drain(..self.exchanges.len() - EXCHANGES_MAX);
                    }
                }
                ProxyEvent::ExchangeEnded(end) => {
                    if let Some(row) = self.row_mut(end.id) {
                        row.first_byte_micros = row.first_byte_micros.or(end.first_byte_micros);
                        row.end = Some(end);
                    }
                }
                ProxyEvent::FirstByte { id, micros } => {
                    if let Some(row) = self.row_mut(id) {
                        row.first_byte_micros = Some(micros);
                    }
                }
                ProxyEvent::CaptureStarted { id, path, .. } => {
                    if let Some(row) = self.row_mut(id) {
                        let live = Some(flow_head(&row.exchange));
                        row.capture = Some(Capture {
                            path,
                            result: None,
                            live,
                        });
                    }
                }
                ProxyEvent::CaptureProgress { id, chunks, .. } => {
                    let watched = self.watching == Some(id);
                    if let Some(live) = self
                        .row_mut(id)
                        .and_then(|r| r.capture.as_mut())
                        .and_then(|c| c.live.as_mut())
                    {
                        live.chunks.extend(chunks);
                        if watched {
                            self.watch_dirty = true;
                        }
                    }
                }
                ProxyEvent::CaptureFinished {
                    id,
                    path,
                    bytes,
                    chunks,
                    calls,
                    error,
                    ended_normally,
                } => {
                    let result = SessionResult {
                        saved: path.is_some(),
                        bytes,
                        chunks,
                        calls,
                        error,
                        ended_normally,
                    };
                    let watched = self.watching == Some(id);
                    let mut last_live = None;
                    if let Some(row) = self.row_mut(id) {
                        match &mut row.capture {
                            Some(c) => {
                                c.result = Some(result);
                                // The file has it all now: the copy in memory goes.
                                last_live = c.live.take();
                            }
                            // A complete JSON response is captured after it has passed.
                            None => {
                                row.capture = Some(Capture {
                                    path: path.unwrap_or_default(),
                                    result: Some(result),
                                    live: None,
                                });
                            }
                        }
                    }
                    if watched {
                        // Its end: Replay gets it whole, no longer arriving.
                        self.watching = None;
                        self.finished_watch = last_live;
                    }
                }
            }
        }
    }

    fn row_mut(&mut self, id: u64) -> Option<&mut ExchangeRow> {
        self.exchanges
            .iter_mut()
            .rev()
            .find(|r| r.exchange.id == id)
    }

    /// Draws the panel; a session's Open queues opening it in Replay on `queue`.
    pub fn ui(&mut self, ui: &mut Ui, form: &mut ProxyForm, queue: &mut ActionQueue) {
        self.poll(ui.ctx(), queue);
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
                ui.label("");
                ui.checkbox(&mut form.keep_secrets, "Keep secrets")
                    .on_hover_text("Write the requests' auth headers, ?key= and body secrets to the captures, HAR entries and curl commands as they are (normally redacted; never remembered)");
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
        super::proxy_list::list_ui(ui, self, queue);
    }

    /// The flows, oldest first, with the selection, for the list (`proxy_list`).
    pub(crate) fn parts(&mut self) -> FlowParts<'_> {
        (
            &self.exchanges,
            &mut self.selected,
            &mut self.filter,
            &mut self.loaded,
        )
    }
}

/// The flows and the list's state, borrowed together: rows, selection, filter, loaded body.
pub(crate) type FlowParts<'a> = (
    &'a [ExchangeRow],
    &'a mut Option<u64>,
    &'a mut super::proxy_list::FlowFilter,
    &'a mut Option<(u64, Option<super::proxy_list::FlowBody>)>,
);

/// A flow's recording before its first read: the (redacted) request and the response head, as
/// its capture starts.
fn flow_head(x: &Exchange) -> Recording {
    Recording {
        version: sse_replay_core::recording::FORMAT_VERSION,
        meta: Meta {
            title: format!("{} {} (proxy)", x.method, x.path),
            source: "proxy".into(),
            created: x.started.clone(),
            timing_known: true,
            ..Default::default()
        },
        request: Some(RequestInfo {
            method: x.method.clone(),
            url: x.url.clone(),
            headers: x.request_headers.clone(),
            body: x.request_body.clone(),
        }),
        response: Some(ResponseInfo {
            status: x.status,
            headers: x.response_headers.clone(),
        }),
        ..Default::default()
    }
}
