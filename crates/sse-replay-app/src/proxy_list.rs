//! The Proxy panel's request list and detail view: one row per request (start time, request,
//! status, model, time to first byte, duration, size, calls and verdict of its capture); clicking
//! a row shows its redacted request headers, request body and response headers, and a captured
//! one opens in Replay (double-click, or the detail's button).

use egui::{RichText, Ui};

use super::proxy_panel::{ExchangeRow, SessionResult};
use super::style;
use super::view::{Action, ActionQueue, OpenTarget, Tab};

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
const WIDTHS: [f32; 8] = [70.0, 250.0, 50.0, 150.0, 75.0, 75.0, 70.0, 240.0];

/// Column `i` of a row: its fixed width, one line, longer text elided (`…`; the full text is in
/// the cell's hover where it can be long).
fn cell(ui: &mut Ui, i: usize, add: impl FnOnce(&mut Ui)) {
    let w = WIDTHS.get(i).copied().unwrap_or(80.0);
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

/// The list, then the selected request's detail.
pub fn list_ui(
    ui: &mut Ui,
    rows: &[ExchangeRow],
    selected: &mut Option<u64>,
    queue: &mut ActionQueue,
) {
    let captured = rows.iter().filter(|r| r.capture.is_some()).count();
    ui.label(RichText::new(format!("Requests ({}) · {captured} captured", rows.len())).strong());
    if rows.is_empty() {
        ui.weak("Requests through the proxy appear here as they arrive.");
        return;
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
        .max_height(280.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_h, rows.len(), |ui, range| {
            for i in range {
                // Newest first.
                let Some(row) = rows.len().checked_sub(i + 1).and_then(|k| rows.get(k)) else {
                    continue;
                };
                ui.horizontal(|ui| row_ui(ui, row, selected, queue));
            }
        });
    if let Some(row) = selected.and_then(|id| rows.iter().find(|r| r.exchange.id == id)) {
        ui.separator();
        detail_ui(ui, row, queue);
    }
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
    match &row.end {
        Some(end) => {
            cell(ui, 4, |ui| {
                ui.label(end.first_byte_micros.map_or_else(|| "—".into(), duration));
            });
            cell(ui, 5, |ui| {
                ui.label(duration(end.duration_micros));
            });
            cell(ui, 6, |ui| {
                ui.label(size(end.bytes));
            });
        }
        None => {
            cell(ui, 4, |ui| {
                ui.label("…");
            });
            cell(ui, 5, |ui| {
                ui.spinner();
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

fn detail_ui(ui: &mut Ui, row: &ExchangeRow, queue: &mut ActionQueue) {
    let x = &row.exchange;
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
        let saved = row
            .capture
            .as_ref()
            .and_then(|c| c.result.as_ref())
            .is_some_and(|r| r.saved);
        if saved && ui.button("Open in Replay").clicked() {
            open_capture(row, queue);
        }
    });
    if let Some(e) = &x.error {
        ui.label(RichText::new(e).color(style::err_color(ui)));
    }
    if let Some(c) = &row.capture {
        ui.weak(format!("capture: {}", c.path.display()));
    }
    ui.label(RichText::new(format!("response head after {}", duration(x.head_micros))).weak());
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
                .max_height(220.0)
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
    }
}
