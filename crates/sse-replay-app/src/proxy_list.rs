//! The Proxy panel as a flow inspector (what DevTools' network panel and mitmproxy show): one row
//! per request (start time, request, status, model, time to first byte as soon as it is known,
//! duration, size, calls and verdict of its capture), filtered by text, host, status and model.
//! Clicking a row shows its redacted request headers and body, its response headers and its
//! response body as the list of its events (growing while it streams); a streaming flow can be
//! watched live in Replay (the Recorder's honest live view), a captured one opened there, and any
//! flow exported as a HAR entry or copied as a `curl` command (secrets redacted unless the proxy
//! keeps them).

use egui::{RichText, Ui};

use super::proxy_panel::{ExchangeRow, ProxyRun, SessionResult};
use super::style;
use super::view::{Action, ActionQueue, OpenTarget, Tab};
use sse_replay_core::analysis::{Analysis, SourceInfo, SourceKind};
use sse_replay_core::recording::Recording;

/// `micros` as milliseconds (or seconds past ten of them).
fn duration(micros: u64) -> String {
    if micros >= 10_000_000 {
        format!("{:.1} s", micros as f64 / 1e6)
    } else {
        format!("{:.0} ms", micros as f64 / 1000.0)
    }
}

/// A byte count for people.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / f64::from(1u32 << 20)),
        b if b >= 1 << 10 => format!("{:.1} kB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// `HH:MM:SS` of an RFC 3339 time (the whole text if it is not one).
fn clock(rfc3339: &str) -> &str {
    rfc3339.get(11..19).unwrap_or(rfc3339)
}

/// The calls/verdict cell of a capture.
fn verdict(r: &SessionResult) -> (String, bool) {
    let calls = if r.calls == 1 {
        "1 call".to_owned()
    } else {
        format!("{} calls", r.calls)
    };
    match (&r.error, r.saved, r.ended_normally) {
        (Some(e), ..) => (format!("{calls} · {e}"), false),
        (None, false, _) => (format!("{calls} · not saved"), false),
        (None, true, true) => (format!("{calls} ✓"), true),
        (None, true, false) => (format!("{calls} · ended early"), false),
    }
}

/// The columns and their widths (points).
const HEADERS: [&str; 8] = [
    "started",
    "request",
    "status",
    "model",
    "first byte",
    "duration",
    "size",
    "calls",
];
/// The columns' widths for a window `window_w` points wide: fixed ones for times, status and
/// sizes; the request and the calls share the rest, so no column is cut off at 1024 points.
fn widths(window_w: f32) -> [f32; 8] {
    let fixed = [70.0, 0.0, 50.0, 130.0, 75.0, 70.0, 65.0, 0.0];
    // Item spacing between eight cells and the panel's margins.
    let rest = (window_w - fixed.iter().sum::<f32>() - 8.0 * 8.0 - 40.0).max(260.0);
    let request = (rest * 0.55).clamp(140.0, 420.0);
    let mut w = fixed;
    w[1] = request;
    w[7] = rest - request;
    w
}

/// Column `i` of a row: its fixed width, one line, longer text elided (`…`; the full text is in
/// the cell's hover where it can be long).
fn cell(ui: &mut Ui, i: usize, add: impl FnOnce(&mut Ui)) {
    let w = widths(ui.ctx().content_rect().width())
        .get(i)
        .copied()
        .unwrap_or(80.0);
    let h = ui.spacing().interact_size.y;
    ui.allocate_ui_with_layout(
        egui::vec2(w, h),
        egui::Layout::left_to_right(egui::Align::Center),
        |ui| {
            ui.set_min_width(w);
            ui.set_max_width(w);
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            add(ui);
        },
    );
}

/// Which status codes the list shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatusFilter {
    #[default]
    All,
    /// 2xx.
    Success,
    /// 4xx.
    ClientError,
    /// 5xx.
    ServerError,
    /// No response from the upstream, or a body that ended with an error.
    Failed,
}

impl StatusFilter {
    const ALL: [StatusFilter; 5] = [
        StatusFilter::All,
        StatusFilter::Success,
        StatusFilter::ClientError,
        StatusFilter::ServerError,
        StatusFilter::Failed,
    ];

    fn label(self) -> &'static str {
        match self {
            StatusFilter::All => "any status",
            StatusFilter::Success => "2xx",
            StatusFilter::ClientError => "4xx",
            StatusFilter::ServerError => "5xx",
            StatusFilter::Failed => "failed",
        }
    }

    fn matches(self, row: &ExchangeRow) -> bool {
        let s = row.exchange.status;
        match self {
            StatusFilter::All => true,
            StatusFilter::Success => (200..300).contains(&s),
            StatusFilter::ClientError => (400..500).contains(&s),
            StatusFilter::ServerError => (500..600).contains(&s),
            StatusFilter::Failed => {
                row.exchange.error.is_some() || row.end.as_ref().is_some_and(|e| e.error.is_some())
            }
        }
    }
}

/// The list's filter (runtime view state, never persisted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowFilter {
    /// Any of method, path, URL, model, status or request body contains it (case-insensitive).
    pub text: String,
    /// Only this upstream host (`host:port`).
    pub host: Option<String>,
    pub status: StatusFilter,
    /// Only this model.
    pub model: Option<String>,
}

/// `host[:port]` of a URL.
pub fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

impl FlowFilter {
    /// Whether `row` passes.
    pub fn matches(&self, row: &ExchangeRow) -> bool {
        let x = &row.exchange;
        if self.host.as_deref().is_some_and(|h| host_of(&x.url) != h) {
            return false;
        }
        if self.model.is_some() && x.model != self.model {
            return false;
        }
        if !self.status.matches(row) {
            return false;
        }
        let t = self.text.trim().to_lowercase();
        t.is_empty()
            || [
                x.method.as_str(),
                x.path.as_str(),
                x.url.as_str(),
                x.model.as_deref().unwrap_or(""),
                x.request_body.as_str(),
            ]
            .iter()
            .any(|f| f.to_lowercase().contains(&t))
            || x.status.to_string() == t
    }

    fn is_set(&self) -> bool {
        *self != Self::default()
    }
}

/// A flow's response body, analysed for its event list.
pub struct FlowBody {
    pub analysis: Analysis,
    /// The reads it was analysed at (a streaming flow is analysed again as reads arrive).
    reads: usize,
}

impl std::fmt::Debug for FlowBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowBody")
            .field("events", &self.analysis.events.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for FlowBody {
    fn eq(&self, other: &Self) -> bool {
        self.reads == other.reads && self.analysis.body == other.analysis.body
    }
}

fn analyse_flow(rec: &Recording) -> FlowBody {
    let source = SourceInfo {
        name: rec.meta.title.clone(),
        kind: SourceKind::Live,
        timing_known: true,
    };
    FlowBody {
        analysis: Analysis::from_recording(rec, source, Default::default()),
        reads: rec.chunks.len(),
    }
}

/// The flow's recording as it stands: in memory while it streams, else its saved capture.
pub fn flow_recording(row: &ExchangeRow) -> Option<Recording> {
    let c = row.capture.as_ref()?;
    match &c.live {
        Some(live) => Some(live.clone()),
        None if c.result.as_ref().is_some_and(|r| r.saved) => {
            sse_replay_core::recording::load(&c.path).ok()
        }
        None => None,
    }
}

/// The list, then the selected request's detail.
pub fn list_ui(ui: &mut Ui, run: &mut ProxyRun, queue: &mut ActionQueue) {
    let (rows, selected, filter, loaded) = run.parts();
    let captured = rows.iter().filter(|r| r.capture.is_some()).count();
    ui.label(RichText::new(format!("Requests ({}) · {captured} captured", rows.len())).strong());
    if rows.is_empty() {
        ui.weak("Requests through the proxy appear here as they arrive.");
        return;
    }
    filter_ui(ui, rows, filter);
    // Newest first, those that pass the filter.
    let shown: Vec<&ExchangeRow> = rows.iter().rev().filter(|r| filter.matches(r)).collect();
    if shown.len() < rows.len() {
        ui.weak(format!("{} of {} shown", shown.len(), rows.len()));
    }
    let row_h = ui.spacing().interact_size.y;
    ui.horizontal(|ui| {
        for (i, h) in HEADERS.iter().enumerate() {
            cell(ui, i, |ui| {
                ui.weak(*h);
            });
        }
    });
    // One line per request, fixed column widths: only the rows on screen are laid out.
    egui::ScrollArea::vertical()
        .id_salt("proxy-requests")
        .max_height(220.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_h, shown.len(), |ui, range| {
            for row in &shown[range] {
                ui.horizontal(|ui| row_ui(ui, row, selected, queue));
            }
        });
    // The detail is the selected flow's, whatever its state, and only while the list shows it.
    if let Some(id) = *selected {
        match rows.iter().find(|r| r.exchange.id == id) {
            Some(row) if filter.matches(row) => {
                ui.separator();
                detail_ui(ui, row, loaded, queue);
            }
            Some(_) => {
                ui.separator();
                ui.weak(format!(
                    "The selected request #{id} is hidden by the filter: clear the filter to see its detail."
                ));
            }
            None => {}
        }
    }
}

fn filter_ui(ui: &mut Ui, rows: &[ExchangeRow], filter: &mut FlowFilter) {
    let mut hosts: Vec<String> = rows
        .iter()
        .map(|r| host_of(&r.exchange.url).to_owned())
        .collect();
    hosts.sort();
    hosts.dedup();
    let mut models: Vec<String> = rows
        .iter()
        .filter_map(|r| r.exchange.model.clone())
        .collect();
    models.sort();
    models.dedup();
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("Filter:");
        ui.add(
            egui::TextEdit::singleline(&mut filter.text)
                .hint_text("text")
                .desired_width(160.0),
        )
        .labelled_by(label.id)
        .on_hover_text("Method, path, URL, model, status or request body containing this");
        let pick =
            |ui: &mut Ui, id: &str, all: &str, value: &mut Option<String>, choices: &[String]| {
                egui::ComboBox::from_id_salt(id)
                    .selected_text(value.clone().unwrap_or_else(|| all.to_owned()))
                    .width(150.0)
                    .show_ui(ui, |ui| {
                        ui.selectable_value(value, None, all);
                        for c in choices {
                            ui.selectable_value(value, Some(c.clone()), c);
                        }
                    })
                    .response
            };
        pick(ui, "flow-host", "any host", &mut filter.host, &hosts)
            .on_hover_text("Only this upstream host");
        egui::ComboBox::from_id_salt("flow-status")
            .selected_text(filter.status.label())
            .width(90.0)
            .show_ui(ui, |ui| {
                for s in StatusFilter::ALL {
                    ui.selectable_value(&mut filter.status, s, s.label());
                }
            })
            .response
            .on_hover_text("Only these statuses");
        pick(ui, "flow-model", "any model", &mut filter.model, &models)
            .on_hover_text("Only this model");
        if filter.is_set() && ui.small_button("Clear").clicked() {
            *filter = FlowFilter::default();
        }
    });
}

fn open_capture(row: &ExchangeRow, queue: &mut ActionQueue) -> bool {
    match &row.capture {
        Some(c) if c.result.as_ref().is_some_and(|r| r.saved) => {
            queue.push(Action::OpenPath(c.path.clone(), OpenTarget::Primary));
            queue.push(Action::ShowTab(Tab::Replay));
            true
        }
        _ => false,
    }
}

fn row_ui(ui: &mut Ui, row: &ExchangeRow, selected: &mut Option<u64>, queue: &mut ActionQueue) {
    let x = &row.exchange;
    cell(ui, 0, |ui| {
        ui.monospace(clock(&x.started)).on_hover_text(&x.started);
    });
    cell(ui, 1, |ui| {
        let is_selected = *selected == Some(x.id);
        let text = format!("{} {}", x.method, style::visible(&x.path, 200));
        let resp = ui
            .selectable_label(is_selected, &text)
            .on_hover_text(format!(
                "{text}\nClick for the headers and body; double-click opens the capture in Replay"
            ));
        if resp.double_clicked() {
            open_capture(row, queue);
        }
        if resp.clicked() {
            *selected = Some(x.id);
        }
    });
    cell(ui, 2, |ui| {
        let status = RichText::new(x.status.to_string());
        let color = if (200..300).contains(&x.status) {
            style::ok_color(ui)
        } else {
            style::err_color(ui)
        };
        let resp = ui.label(status.color(color));
        if let Some(e) = &x.error {
            resp.on_hover_text(e);
        }
    });
    cell(ui, 3, |ui| {
        let model = x.model.as_deref().unwrap_or("—");
        ui.label(model).on_hover_text(model);
    });
    // The first byte as soon as it is known (the end may be far off).
    cell(ui, 4, |ui| {
        let text = match (row.first_byte_micros, &row.end) {
            (Some(t), _) => duration(t),
            (None, Some(_)) => "—".into(),
            (None, None) if row.gone => "—".into(),
            (None, None) => "…".into(),
        };
        ui.label(text);
    });
    match &row.end {
        Some(end) => {
            // No response at all: no duration to show (the proxy reports 0 for it).
            let answered = x.error.is_none() || !x.response_headers.is_empty();
            cell(ui, 5, |ui| {
                if answered {
                    ui.label(duration(end.duration_micros));
                } else {
                    ui.weak("—").on_hover_text("No response from the upstream");
                }
            });
            cell(ui, 6, |ui| {
                ui.label(size(end.bytes));
            });
        }
        None if row.gone => {
            // Its proxy stopped first: no end will come.
            for i in [5, 6] {
                cell(ui, i, |ui| {
                    ui.weak("—")
                        .on_hover_text("The proxy stopped before this response ended");
                });
            }
        }
        None => {
            // Still streaming: no spinner (it would repaint every frame for as long as a
            // stream lasts); the first-byte column and the calls column say it is under way.
            cell(ui, 5, |ui| {
                ui.label("…");
            });
            cell(ui, 6, |ui| {
                ui.label("…");
            });
        }
    }
    cell(ui, 7, |ui| {
        match row.capture.as_ref().map(|c| c.result.as_ref()) {
            None => {
                ui.weak("not captured");
            }
            Some(None) => {
                ui.label("streaming…");
            }
            Some(Some(r)) => {
                let (text, ok) = verdict(r);
                let color = if ok {
                    style::ok_color(ui)
                } else {
                    style::warn_color(ui)
                };
                ui.label(RichText::new(&text).color(color))
                    .on_hover_text(&text);
            }
        }
    });
}

fn headers_ui(ui: &mut Ui, id: &str, headers: &[(String, String)]) {
    if headers.is_empty() {
        ui.weak("(none)");
        return;
    }
    egui::Grid::new(id)
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (name, value) in headers {
                ui.monospace(name);
                ui.monospace(style::visible(value, 200));
                ui.end_row();
            }
        });
}

fn detail_ui(
    ui: &mut Ui,
    row: &ExchangeRow,
    loaded: &mut Option<(u64, Option<FlowBody>)>,
    queue: &mut ActionQueue,
) {
    let x = &row.exchange;
    let streaming = row.capture.as_ref().is_some_and(|c| c.live.is_some());
    ui.horizontal_wrapped(|ui| {
        ui.label(
            RichText::new(format!(
                "#{} {} {} → {}",
                x.id,
                x.method,
                style::visible(&x.url, 120),
                x.status
            ))
            .strong(),
        );
        if streaming
            && ui
                .button("Watch live in Replay")
                .on_hover_text("Follow this stream in the Replay tab as it arrives (no verdict before its end)")
                .clicked()
        {
            queue.push(Action::WatchFlow(x.id));
        }
        let saved = row
            .capture
            .as_ref()
            .and_then(|c| c.result.as_ref())
            .is_some_and(|r| r.saved);
        if saved && ui.button("Open in Replay").clicked() {
            open_capture(row, queue);
        }
        if ui
            .button("Export HAR entry…")
            .on_hover_text("Save this request and its response as a HAR file (one entry)")
            .clicked()
        {
            queue.push(Action::SaveFlowHar(x.id));
        }
        if ui
            .button("Copy as curl")
            .on_hover_text("The request as a curl command (secrets redacted unless the proxy keeps them)")
            .clicked()
        {
            let rec = flow_recording(row);
            let request = rec.as_ref().and_then(|r| r.request.as_ref());
            ui.ctx().copy_text(curl_command(row, request));
        }
    });
    if let Some(e) = &x.error {
        ui.label(RichText::new(e).color(style::err_color(ui)));
    }
    if let Some(c) = &row.capture {
        ui.weak(format!("capture: {}", c.path.display()));
    }
    if x.error.is_some() && x.response_headers.is_empty() {
        let why = x.error.as_deref().unwrap_or_default();
        ui.label(RichText::new(format!("no response: {why}")).weak());
    } else {
        ui.label(RichText::new(format!("response head after {}", duration(x.head_micros))).weak());
    }
    egui::CollapsingHeader::new("Request headers (redacted)")
        .id_salt("proxy-detail-req-headers")
        .default_open(true)
        .show(ui, |ui| {
            headers_ui(ui, "proxy-req-headers", &x.request_headers)
        });
    egui::CollapsingHeader::new("Request body (redacted)")
        .id_salt("proxy-detail-req-body")
        .default_open(true)
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("proxy-req-body")
                .max_height(160.0)
                .show(ui, |ui| {
                    if x.request_body.is_empty() {
                        ui.weak("(empty)");
                    } else {
                        ui.add(egui::Label::new(RichText::new(&x.request_body).monospace()).wrap());
                    }
                });
        });
    egui::CollapsingHeader::new("Response headers")
        .id_salt("proxy-detail-resp-headers")
        .default_open(true)
        .show(ui, |ui| {
            headers_ui(ui, "proxy-resp-headers", &x.response_headers)
        });
    response_body_ui(ui, row, loaded);
}

/// The response body as its events: one row per event (time, type, size, call, arguments piece),
/// growing while the flow streams.
fn response_body_ui(ui: &mut Ui, row: &ExchangeRow, loaded: &mut Option<(u64, Option<FlowBody>)>) {
    let id = row.exchange.id;
    let Some(c) = &row.capture else {
        ui.label(RichText::new("Response body").strong());
        ui.weak("Not captured: only event streams (and complete LLM answers) are kept.");
        return;
    };
    // The analysis of what has arrived: again when a streaming flow grew, read back from its file
    // once (when selected) after its end.
    let reads = c.live.as_ref().map(|l| l.chunks.len());
    let fresh = match (&*loaded, reads) {
        (Some((lid, Some(b))), Some(n)) => *lid == id && b.reads == n,
        (Some((lid, _)), None) => *lid == id,
        _ => false,
    };
    if !fresh {
        let body = match &c.live {
            Some(live) => Some(analyse_flow(live)),
            None => flow_recording(row).map(|r| analyse_flow(&r)),
        };
        *loaded = Some((id, body));
    }
    let Some((_, Some(body))) = &*loaded else {
        ui.label(RichText::new("Response body").strong());
        ui.weak("The capture could not be read back.");
        return;
    };
    let a = &body.analysis;
    let n = a.events.len();
    let title = if c.live.is_some() {
        format!(
            "Response body ({} so far)",
            sse_replay_core::text::plural(n, "event")
        )
    } else {
        format!(
            "Response body ({})",
            sse_replay_core::text::plural(n, "event")
        )
    };
    ui.label(RichText::new(title).strong());
    let row_h = ui.spacing().interact_size.y;
    egui::ScrollArea::vertical()
        .id_salt("proxy-resp-events")
        .max_height(240.0)
        .auto_shrink([false, true])
        .stick_to_bottom(c.live.is_some())
        .show_rows(ui, row_h, n, |ui, range| {
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            for i in range {
                let text = super::event_inspector::row_text(a, i as u32);
                ui.label(RichText::new(text).monospace());
            }
        });
}

/// Single-quote `s` for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The flow's request as a `curl` command: the capture's request when there is one (it keeps
/// secrets only when the proxy was told to), else the redacted one the list shows.
pub fn curl_command(
    row: &ExchangeRow,
    captured: Option<&sse_replay_core::recording::RequestInfo>,
) -> String {
    let x = &row.exchange;
    let (method, url, headers, body) = match captured {
        Some(r) => (&r.method, &r.url, &r.headers, &r.body),
        None => (&x.method, &x.url, &x.request_headers, &x.request_body),
    };
    let mut cmd = format!("curl -N -X {} {}", method, shell_quote(url));
    for (name, value) in headers {
        let n = name.to_ascii_lowercase();
        // curl sets these itself.
        if matches!(n.as_str(), "host" | "content-length") {
            continue;
        }
        cmd.push_str(&format!(" -H {}", shell_quote(&format!("{name}: {value}"))));
    }
    if !body.is_empty() {
        cmd.push_str(&format!(" --data-raw {}", shell_quote(body)));
    }
    cmd
}

/// One HAR 1.2 document holding this flow as its one entry: the request (the capture's when
/// there is one, else the redacted one shown), the response head and, when captured, its body
/// as received.
pub fn har(row: &ExchangeRow, rec: Option<&Recording>) -> serde_json::Value {
    use serde_json::json;
    let x = &row.exchange;
    let request = rec.and_then(|r| r.request.clone()).unwrap_or_else(|| {
        sse_replay_core::recording::RequestInfo {
            method: x.method.clone(),
            url: x.url.clone(),
            headers: x.request_headers.clone(),
            body: x.request_body.clone(),
        }
    });
    let pairs = |h: &[(String, String)]| {
        h.iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect::<Vec<_>>()
    };
    let header = |h: &[(String, String)], name: &str| {
        h.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or(String::new(), |(_, v)| v.clone())
    };
    let query: Vec<serde_json::Value> = request
        .url
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or(""))
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (n, v) = p.split_once('=').unwrap_or((p, ""));
            json!({"name": n, "value": v})
        })
        .collect();
    let body = rec.map(|r| String::from_utf8_lossy(&r.body()).into_owned());
    let response_headers = rec
        .and_then(|r| r.response.as_ref())
        .map_or_else(|| x.response_headers.clone(), |r| r.headers.clone());
    let duration_ms = row
        .end
        .as_ref()
        .map_or(0.0, |e| e.duration_micros as f64 / 1000.0);
    let wait_ms = row
        .first_byte_micros
        .map_or(x.head_micros as f64 / 1000.0, |t| t as f64 / 1000.0);
    let mut entry = json!({
        "startedDateTime": x.started,
        "time": duration_ms,
        "request": {
            "method": request.method,
            "url": request.url,
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": pairs(&request.headers),
            "queryString": query,
            "headersSize": -1,
            "bodySize": request.body.len(),
        },
        "response": {
            "status": x.status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": pairs(&response_headers),
            "content": {
                "size": body.as_ref().map_or(0, String::len),
                "mimeType": header(&response_headers, "content-type"),
                "text": body.clone().unwrap_or_default(),
            },
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": row.end.as_ref().map_or(-1, |e| e.bytes as i64),
        },
        "cache": {},
        "timings": {
            "send": 0.0,
            "wait": wait_ms,
            "receive": (duration_ms - wait_ms).max(0.0),
        },
    });
    if !request.body.is_empty() {
        entry["request"]["postData"] = json!({
            "mimeType": header(&request.headers, "content-type"),
            "text": request.body,
        });
    }
    if body.is_none() {
        entry["response"]["content"]["comment"] =
            json!("not captured: the proxy keeps event streams and complete LLM answers only");
    }
    json!({
        "log": {
            "version": "1.2",
            "creator": {"name": "sse-replay", "version": env!("CARGO_PKG_VERSION")},
            "entries": [entry],
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_for_people() {
        assert_eq!(duration(1_500), "2 ms");
        assert_eq!(duration(12_345_678), "12.3 s");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(2048), "2.0 kB");
        assert_eq!(clock("2026-12-01T02:59:00.123Z"), "02:59:00");
        assert_eq!(clock("?"), "?");
        assert_eq!(
            host_of("https://u:p@api.example:8443/v1?x"),
            "api.example:8443"
        );
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
