//! The event inspector: one row per event (time, type, size, the call it fed, that call's name, the
//! arguments piece it carried), filtered by text or regex and by call, and a detail pane with the
//! selected event's JSON pretty-printed and the arguments piece highlighted — what Chrome DevTools'
//! EventStream tab and mitmproxy show. A right click on a row copies its data, the event as SSE
//! text or its JSON; Ctrl+C copies the shown event as SSE text ([`super::shortcuts`]). The rows are virtualised (`show_rows`) and the filtered row
//! list is cached, keyed by the filter, so a 680,000-event stream scrolls at frame rate.

use egui::text::LayoutJob;
use egui::{RichText, TextFormat, Ui};

use super::style;
use super::view::{Action, ActionQueue, ViewState};
use sse_replay_core::analysis::Analysis;
use sse_replay_core::framing::Framing;
use sse_replay_core::pipeline::EventRecord;

/// Which view the lower area shows (kept here too for older callers).
pub use super::layout::LowerView;

/// At most this many characters of an arguments piece on a row.
const PIECE_CHARS: usize = 80;

/// Up to this many events the filter applies as you type; beyond, on Enter (a pass over a
/// 680,000-event stream takes a noticeable fraction of a second).
const LIVE_FILTER_MAX: usize = 50_000;

/// The detail pane pretty-prints at most this many bytes of an event.
const DETAIL_BYTES: usize = 256 * 1024;

/// The inspector's view state (never persisted: it belongs to one open recording).
#[derive(Debug, Default)]
pub struct InspectorState {
    /// The text filter; a regex when `regex` is set, else a case-insensitive substring.
    pub filter: String,
    /// The filter the rows were computed for (on a large stream: as of the last Enter).
    applied: String,
    pub regex: bool,
    /// Only the events that fed this call (a position in `Analysis::calls`).
    pub call: Option<u32>,
    /// The event shown in the detail pane; `None` follows the cursor's event.
    pub selected: Option<u32>,
    /// The byte view's horizontal offset (its gutter stays put).
    pub bytes_x: f32,
    cache: Option<FilterCache>,
    /// Scroll the list to this event (the cursor moved to another event).
    scroll_to: Option<u32>,
    /// The cursor's event last frame.
    last_cursor_event: Option<u32>,
    /// The filter changed: bring the shown event into view, else go to the top.
    refiltered: bool,
    /// The event whose detail was last scrolled to its arguments piece.
    detail_scrolled: Option<u32>,
    /// Whether the analysis (its body's address and length) has SSE id/retry fields.
    fields: Option<((usize, usize), bool)>,
}

/// The filtered rows for one filter over one analysis.
#[derive(Debug)]
struct FilterCache {
    key: FilterKey,
    /// Event numbers that pass, in stream order; `None` = every event.
    rows: Option<Vec<u32>>,
    error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct FilterKey {
    filter: String,
    regex: bool,
    call: Option<u32>,
    /// The analysis (its body's address and its event count: a live update or another open changes it).
    body: usize,
    events: usize,
}

impl InspectorState {
    /// The events that pass the filter (recomputed only when the filter or the analysis changed).
    fn rows(&mut self, a: &Analysis) -> (&Option<Vec<u32>>, Option<&str>) {
        let key = FilterKey {
            filter: self.applied.clone(),
            regex: self.regex,
            call: self.call,
            body: a.body.as_ptr() as usize,
            events: a.events.len(),
        };
        if self.cache.as_ref().is_none_or(|c| c.key != key) {
            let (rows, error) = filter_events(a, &key.filter, key.regex, key.call);
            self.cache = Some(FilterCache { key, rows, error });
            self.refiltered = true;
        }
        match &self.cache {
            Some(c) => (&c.rows, c.error.as_deref()),
            None => (&None, None),
        }
    }

    /// How many events pass the filter (for tests and the header), computing it if needed.
    pub fn shown_count(&mut self, a: &Analysis) -> usize {
        match self.rows(a).0 {
            Some(r) => r.len(),
            None => a.events.len(),
        }
    }
}

/// The events that pass: `None` when nothing filters. A bad regex filters nothing and says why.
fn filter_events(
    a: &Analysis,
    filter: &str,
    regex: bool,
    call: Option<u32>,
) -> (Option<Vec<u32>>, Option<String>) {
    let filter = filter.trim();
    if filter.is_empty() && call.is_none() {
        return (None, None);
    }
    let pattern = if regex {
        filter.to_owned()
    } else {
        format!("(?i){}", regex::escape(filter))
    };
    let (re, error) = if filter.is_empty() {
        (None, None)
    } else {
        match regex::bytes::RegexBuilder::new(&pattern)
            .size_limit(1 << 22)
            .build()
        {
            Ok(re) => (Some(re), None),
            Err(e) => {
                let msg = e.to_string();
                let line = msg.lines().last().unwrap_or("invalid regex").trim();
                (None, Some(format!("not a regex: {line}")))
            }
        }
    };
    if error.is_some() && call.is_none() {
        return (None, error);
    }
    let rows = a
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| call.is_none_or(|c| event_calls(a, e).any(|x| x == c)))
        .filter(|(_, e)| re.as_ref().is_none_or(|re| event_matches(a, e, re)))
        .map(|(i, _)| i as u32)
        .collect();
    (Some(rows), error)
}

/// The calls an event fed (usually one).
fn event_calls<'a>(a: &'a Analysis, e: &EventRecord) -> impl Iterator<Item = u32> + 'a {
    let start = e.first_fragment as usize;
    let end = start.saturating_add(e.fragment_count as usize);
    a.fragments
        .get(start..end.min(a.fragments.len()))
        .unwrap_or(&[])
        .iter()
        .map(|f| f.call)
}

/// The raw bytes, the event type, or a fed call's name or arguments piece match.
fn event_matches(a: &Analysis, e: &EventRecord, re: &regex::bytes::Regex) -> bool {
    if re.is_match(a.bytes(&e.span)) || re.is_match(a.event_type(e).as_bytes()) {
        return true;
    }
    let start = e.first_fragment as usize;
    let end = start.saturating_add(e.fragment_count as usize);
    a.fragments
        .get(start..end.min(a.fragments.len()))
        .unwrap_or(&[])
        .iter()
        .any(|f| {
            re.is_match(a.fragment_text(f).as_bytes())
                || a.calls
                    .get(f.call as usize)
                    .is_some_and(|c| re.is_match(c.name.as_bytes()))
        })
}

/// The call naming the cards use: the call's key, then its name.
pub fn call_label(a: &Analysis, call: u32) -> String {
    a.calls.get(call as usize).map_or_else(
        || format!("call {call}"),
        |c| {
            if c.name.is_empty() {
                c.key.to_string()
            } else {
                format!("{} {}", c.key, c.name)
            }
        },
    )
}

/// The arguments pieces an event carried, joined.
fn event_piece(a: &Analysis, e: &EventRecord) -> String {
    let start = e.first_fragment as usize;
    let end = start.saturating_add(e.fragment_count as usize);
    a.fragments
        .get(start..end.min(a.fragments.len()))
        .unwrap_or(&[])
        .iter()
        .map(|f| a.fragment_text(f))
        .collect()
}

/// An SSE event's own `id:` and `retry:` fields (the last of each in its lines), as received.
pub fn sse_fields(a: &Analysis, e: &EventRecord) -> (Option<String>, Option<String>) {
    if a.framing != Framing::Sse {
        return (None, None);
    }
    let (mut id, mut retry) = (None, None);
    for line in a.bytes(&e.span).split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let value = |field: &[u8]| {
            line.strip_prefix(field).map(|v| {
                let v = v.strip_prefix(b" ").unwrap_or(v);
                String::from_utf8_lossy(v).into_owned()
            })
        };
        if let Some(v) = value(b"id:") {
            id = Some(v);
        } else if let Some(v) = value(b"retry:") {
            retry = Some(v);
        }
    }
    (id, retry)
}

/// Whether any event of `a` has an `id:` or `retry:` field: the list shows those columns only
/// then (most LLM streams have neither, and the room goes to the call and its piece).
pub fn has_sse_fields(a: &Analysis) -> bool {
    if a.framing != Framing::Sse {
        return false;
    }
    let at_line_start = |field: &[u8]| {
        a.body.starts_with(field)
            || memchr::memmem::find_iter(&a.body, field).any(|i| i > 0 && a.body[i - 1] == b'\n')
    };
    at_line_start(b"id:") || at_line_start(b"retry:")
}

/// The column heads of [`row_text`] (`fields`: with the `id` and `retry` columns).
pub fn row_head(fields: bool) -> String {
    let mut s = format!("{:<8} {:>10}  {:<22}", "#", "time", "type");
    if fields {
        s.push_str(&format!(" {:<12} {:>6}", "id", "retry"));
    }
    s.push_str(&format!(" {:>8}  call, arguments piece", "size"));
    s
}

/// One row's text: `e{n}  {time}  {type}  {size} B  {call}  {piece}`, with the `id` and `retry`
/// columns when the stream has them ([`has_sse_fields`]).
pub fn row_text(a: &Analysis, n: u32) -> String {
    row_text_with(a, n, has_sse_fields(a))
}

/// [`row_text`] with the `id`/`retry` columns decided by the caller (`fields`).
pub fn row_text_with(a: &Analysis, n: u32, fields: bool) -> String {
    let Some(e) = a.events.get(n as usize) else {
        return String::new();
    };
    let t = a.chunks.get(e.chunk as usize).map_or(0, |c| c.t_micros);
    let mut s = format!(
        "e{n:<7} {:>10}  {:<22}",
        style::time_of(a, t),
        style::visible(a.event_type(e), 22),
    );
    if fields {
        let (id, retry) = sse_fields(a, e);
        s.push_str(&format!(
            " {:<12} {:>6}",
            style::visible(id.as_deref().unwrap_or("—"), 12),
            style::visible(retry.as_deref().unwrap_or("—"), 6)
        ));
    }
    s.push_str(&format!(
        " {:>6} B",
        e.span.end.saturating_sub(e.span.start)
    ));
    if e.fragment_count > 0 {
        let call = a
            .fragments
            .get(e.first_fragment as usize)
            .map_or(0, |f| f.call);
        s.push_str("  ");
        s.push_str(&style::visible(&call_label(a, call), 40));
        let piece = event_piece(a, e);
        if !piece.is_empty() {
            s.push_str("  ");
            s.push_str(&style::visible(&piece, PIECE_CHARS));
        }
    }
    s
}

/// The lower panel's Events view: filter bar, list, detail.
pub fn inspector_ui(ui: &mut Ui, a: &Analysis, view: &mut ViewState, queue: &mut ActionQueue) {
    let cursor_event = view.current_event(a);
    let st = &mut view.inspector;
    if cursor_event != st.last_cursor_event {
        st.last_cursor_event = cursor_event;
        if st.selected.is_none() {
            st.scroll_to = cursor_event;
        }
    }
    filter_bar(ui, a, st);
    let shown_event = st.selected.or(cursor_event);
    let avail = ui.available_rect_before_wrap();
    let list_w = (avail.width() * 0.55).max(200.0).min(avail.width());
    let list_rect = egui::Rect::from_min_size(avail.min, egui::vec2(list_w, avail.height()));
    let detail_rect =
        egui::Rect::from_min_max(egui::pos2(list_rect.max.x + 8.0, avail.min.y), avail.max);
    ui.scope_builder(egui::UiBuilder::new().max_rect(list_rect), |ui| {
        list_ui(ui, a, st, shown_event, queue);
    });
    if detail_rect.width() > 40.0 {
        ui.scope_builder(egui::UiBuilder::new().max_rect(detail_rect), |ui| {
            detail_ui(ui, a, shown_event, st);
        });
    }
    ui.allocate_rect(avail, egui::Sense::hover());
}

fn filter_bar(ui: &mut Ui, a: &Analysis, st: &mut InspectorState) {
    ui.horizontal(|ui| {
        ui.label("Filter:");
        let live = a.events.len() <= LIVE_FILTER_MAX;
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut st.filter)
                    .id_salt("event-filter")
                    .hint_text(if st.regex { "regex" } else { "text" })
                    .desired_width(200.0),
            )
            .on_hover_text(if live {
                "Events whose raw bytes, type, call name or arguments piece match"
            } else {
                "Events whose raw bytes, type, call name or arguments piece match (press Enter: a long stream is filtered on Enter, not as you type)"
            });
        if live || r.lost_focus() {
            st.applied.clone_from(&st.filter);
        }
        if st.applied != st.filter {
            ui.weak("Enter to filter");
        }
        ui.checkbox(&mut st.regex, "regex");
        let call_text = st.call.map_or_else(
            || "all calls".to_owned(),
            |c| style::visible(&call_label(a, c), 30),
        );
        egui::ComboBox::from_id_salt("event-call-filter")
            .selected_text(call_text)
            .width(180.0)
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(st.call.is_none(), "all calls")
                    .clicked()
                {
                    st.call = None;
                }
                let row_h = ui.spacing().interact_size.y;
                egui::ScrollArea::vertical()
                    .id_salt("event-call-list")
                    .max_height(300.0)
                    .show_rows(ui, row_h, a.calls.len(), |ui, range| {
                        for c in range {
                            let c = c as u32;
                            if ui
                                .selectable_label(st.call == Some(c), call_label(a, c))
                                .clicked()
                            {
                                st.call = Some(c);
                            }
                        }
                    });
            })
            .response
            .on_hover_text("Only the events that fed this call");
        let total = a.events.len();
        let (rows, error) = st.rows(a);
        let shown = rows.as_ref().map_or(total, Vec::len);
        let error = error.map(str::to_owned);
        ui.weak(format!("{shown} of {total} events"));
        if let Some(e) = error {
            ui.label(RichText::new(e).color(style::err_color(ui)));
        }
        if st.selected.is_some()
            && ui
                .button("Follow the cursor")
                .on_hover_text("Show the cursor's event in the detail pane (Esc)")
                .clicked()
        {
            st.selected = None;
        }
    });
}

fn list_ui(
    ui: &mut Ui,
    a: &Analysis,
    st: &mut InspectorState,
    shown_event: Option<u32>,
    queue: &mut ActionQueue,
) {
    // Whether the stream has id/retry fields: once per analysis (a scan of the body).
    let key = (a.body.as_ptr() as usize, a.body.len());
    let fields = match st.fields {
        Some((k, f)) if k == key => f,
        _ => {
            let f = has_sse_fields(a);
            st.fields = Some((key, f));
            f
        }
    };
    ui.add(egui::Label::new(RichText::new(row_head(fields)).monospace().weak()).truncate());
    let row_h = ui.spacing().interact_size.y;
    let count = st.shown_count(a);
    let mut clicked = None;
    let rows = st.cache.as_ref().and_then(|c| c.rows.as_deref());
    let event_at = |i: usize| -> Option<u32> {
        match rows {
            Some(r) => r.get(i).copied(),
            None => (i < a.events.len()).then_some(i as u32),
        }
    };
    // Never taller than the panel gives (its default minimum is 64 px, which would push the
    // panel's header out of a short panel).
    let mut area = egui::ScrollArea::vertical()
        .id_salt("event-rows")
        .min_scrolled_height(row_h)
        .max_height(ui.available_height())
        .auto_shrink([false, false]);
    let refiltered = std::mem::take(&mut st.refiltered);
    let target = match st.scroll_to.take() {
        Some(t) => Some(t),
        None if refiltered => shown_event,
        None => None,
    };
    if target.is_some() || refiltered {
        let idx = target.and_then(|t| match rows {
            Some(r) => r.binary_search(&t).ok(),
            None => Some(t as usize),
        });
        let full = row_h + ui.spacing().item_spacing.y;
        match idx {
            Some(idx) => {
                area = area.vertical_scroll_offset((idx as f32 * full - 2.0 * full).max(0.0));
            }
            // Filtered away: the top of the filtered rows.
            None if refiltered => area = area.vertical_scroll_offset(0.0),
            None => {}
        }
    }
    area.show_rows(ui, row_h, count, |ui, range| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        for i in range {
            let Some(n) = event_at(i) else { continue };
            let text = RichText::new(row_text_with(a, n, fields)).monospace();
            let r = ui.add(
                egui::Button::selectable(shown_event == Some(n), text)
                    .min_size(egui::vec2(ui.available_width(), row_h)),
            );
            if r.clicked() {
                clicked = Some(n);
            }
            if let Some(e) = a.events.get(n as usize) {
                r.context_menu(|ui| event_menu(ui, a, e));
            }
        }
    });
    if let Some(n) = clicked {
        st.selected = Some(n);
        if let Some(e) = a.events.get(n as usize) {
            queue.push(Action::Seek(e.chunk));
        }
    }
}

/// An event's data, as a client's parser hands it over: the `data` lines joined (SSE), the line
/// (JSON lines), the element (a JSON array), the event a binary frame carries, or the whole
/// document (a complete response).
pub fn event_data(a: &Analysis, e: &EventRecord) -> String {
    data_of(a, a.bytes(&e.span))
}

/// [`event_data`] of an event's `bytes` (all of them, or the first part the detail shows).
fn data_of(a: &Analysis, bytes: &[u8]) -> String {
    if a.complete {
        return String::from_utf8_lossy(bytes).trim().to_owned();
    }
    match a.framing {
        Framing::Sse => sse_replay_core::sse::parse_all([bytes])
            .into_iter()
            .next()
            .map(|ev| ev.data)
            .unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned()),
        Framing::JsonLines | Framing::JsonArray => String::from_utf8_lossy(bytes).trim().to_owned(),
        // The frame's event, as the framer hands it to the dialects.
        Framing::AwsEventStream => {
            let mut data = String::new();
            let mut framer = sse_replay_core::framing::Framer::new(Some(a.framing));
            let mut sink = |item: sse_replay_core::framing::Framed<'_>| {
                if let sse_replay_core::framing::Framed::Event { data: d, .. } = item {
                    d.clone_into(&mut data);
                }
            };
            framer.feed(bytes, &mut sink);
            framer.finish(&mut sink);
            data
        }
    }
}

/// An event as SSE text: as received when the stream is SSE (its own field lines, `id:` and
/// `retry:` included), else `event:` and `data:` lines built from its type and data, so it can be
/// pasted into a `.sse` body.
pub fn event_sse_text(a: &Analysis, e: &EventRecord) -> String {
    if a.framing == Framing::Sse && !a.complete {
        let mut text = String::from_utf8_lossy(a.bytes(&e.span)).into_owned();
        // The blank line that ends it, when the stream's last event had none.
        while !text.ends_with("\n\n") {
            text.push('\n');
        }
        return text;
    }
    let mut text = String::new();
    let kind = a.event_type(e);
    if !kind.is_empty() && kind != "message" {
        text.push_str(&format!("event: {kind}\n"));
    }
    for line in event_data(a, e).split('\n') {
        text.push_str(&format!("data: {line}\n"));
    }
    text.push('\n');
    text
}

/// The menu a row opens on a right click: the shown event's data, the event as SSE text, its
/// JSON.
fn event_menu(ui: &mut Ui, a: &Analysis, e: &EventRecord) {
    if ui
        .button("Copy data")
        .on_hover_text("The event's data, as a client's parser hands it over")
        .clicked()
    {
        ui.ctx().copy_text(event_data(a, e));
        ui.close();
    }
    if ui
        .button("Copy event as SSE text")
        .on_hover_text("As received (its field lines), or as event:/data: lines for a stream that is not SSE (Ctrl+C)")
        .clicked()
    {
        ui.ctx().copy_text(event_sse_text(a, e));
        ui.close();
    }
    let (json, parsed) = event_json(a, e);
    if ui
        .add_enabled(parsed, egui::Button::new("Copy JSON"))
        .on_hover_text("The event's data as pretty JSON")
        .on_disabled_hover_text("Its data is not JSON")
        .clicked()
    {
        ui.ctx().copy_text(json);
        ui.close();
    }
}

/// The JSON of an event: its `data` (SSE), its line (JSON lines), its element (a JSON array), or a
/// binary frame's headers and payload (and a `chunk` frame's decoded event), pretty-printed when
/// it parses.
pub fn event_json(a: &Analysis, e: &EventRecord) -> (String, bool) {
    let bytes = a.bytes(&e.span);
    if a.framing == Framing::AwsEventStream {
        return match sse_replay_core::framing::aws_frame_json(bytes, e.span.start)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
        {
            Some(pretty) => (pretty, true),
            None => (hex_dump(&bytes[..bytes.len().min(DETAIL_BYTES)]), false),
        };
    }
    let data = data_of(a, &bytes[..bytes.len().min(DETAIL_BYTES)]);
    match serde_json::from_str::<serde_json::Value>(&data)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
    {
        Some(pretty) => (pretty, true),
        None => (data, false),
    }
}

/// Bytes as hex, 16 to a line with their offset (a frame that does not decode).
fn hex_dump(bytes: &[u8]) -> String {
    bytes
        .chunks(16)
        .enumerate()
        .map(|(i, row)| {
            let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
            format!("{:08x}  {}", i * 16, hex.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the arguments piece sits in the pretty JSON (as it is escaped there), if it is there.
pub fn piece_range(pretty: &str, piece: &str) -> Option<std::ops::Range<usize>> {
    if piece.is_empty() {
        return None;
    }
    let quoted = serde_json::to_string(piece).ok()?;
    let escaped = quoted.get(1..quoted.len().saturating_sub(1))?;
    if escaped.is_empty() {
        return None;
    }
    let from = ["\"arguments\"", "\"partial_json\"", "\"args\"", "\"input\""]
        .iter()
        .filter_map(|k| pretty.find(k))
        .min()
        .unwrap_or(0);
    let at = pretty[from..]
        .find(escaped)
        .map(|i| i + from)
        .or_else(|| pretty.find(escaped))?;
    Some(at..at + escaped.len())
}

fn detail_ui(ui: &mut Ui, a: &Analysis, event: Option<u32>, st: &mut InspectorState) {
    let pinned = st.selected.is_some();
    let Some(n) = event else {
        ui.weak("No event at the cursor yet.");
        return;
    };
    let Some(e) = a.events.get(n as usize) else {
        return;
    };
    let (text, parsed) = event_json(a, e);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("Event {n}")).strong());
        ui.weak(format!(
            "{} · bytes {}..{} · read {}{}",
            a.event_type(e),
            e.span.start,
            e.span.end,
            e.chunk,
            if pinned { "" } else { " · at the cursor" }
        ));
        if ui
            .small_button("Copy raw")
            .on_hover_text("This event as it was received (its field lines)")
            .clicked()
        {
            ui.ctx()
                .copy_text(String::from_utf8_lossy(a.bytes(&e.span)).into_owned());
        }
        if ui
            .small_button("Copy pretty")
            .on_hover_text("This event's data as pretty JSON (as received when it is not JSON)")
            .clicked()
        {
            ui.ctx().copy_text(text.clone());
        }
    });
    let piece = event_piece(a, e);
    if e.fragment_count > 0 {
        let call = a
            .fragments
            .get(e.first_fragment as usize)
            .map_or(0, |f| f.call);
        ui.horizontal_wrapped(|ui| {
            ui.label(format!("{} fed", call_label(a, call)));
            ui.label(
                RichText::new(style::visible(&piece, 200))
                    .monospace()
                    .background_color(style::fragment_bg(ui, 0, true)),
            );
        });
    }
    if !parsed {
        ui.weak("(not JSON: shown as received)");
    }
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let normal = TextFormat {
        font_id: font,
        color: ui.visuals().text_color(),
        ..Default::default()
    };
    let hl = TextFormat {
        background: style::fragment_bg(ui, 0, true),
        color: ui.visuals().strong_text_color(),
        ..normal.clone()
    };
    let mut job = LayoutJob::default();
    let range = piece_range(&text, &piece);
    match &range {
        Some(r) => {
            job.append(&text[..r.start], 0.0, normal.clone());
            job.append(&text[r.clone()], 0.0, hl);
            job.append(&text[r.end..], 0.0, normal);
        }
        None => job.append(&text, 0.0, normal),
    }
    job.wrap.max_width = ui.available_width();
    let galley = ui.painter().layout_job(job);
    // Once per event: scroll the piece into view (the arguments sit below ~330 bytes of id,
    // model and fingerprint in an OpenAI chunk).
    let piece_at = range
        .filter(|_| st.detail_scrolled != Some(n))
        .map(|r| galley.pos_from_cursor(egui::text::CCursor::new(text[..r.start].chars().count())));
    egui::ScrollArea::vertical()
        .id_salt("event-detail")
        .min_scrolled_height(0.0)
        .max_height(ui.available_height())
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let r = ui.add(egui::Label::new(galley));
            if let Some(at) = piece_at {
                ui.scroll_to_rect(
                    at.translate(r.rect.min.to_vec2()),
                    Some(egui::Align::Center),
                );
            }
        });
    st.detail_scrolled = Some(n);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// An event of a stream that is not SSE copies as SSE text built from its data; an SSE
    /// event copies as received, ended by its blank line.
    #[test]
    fn events_copy_as_sse_text() {
        let analyse = |body: &[u8]| {
            let rec = sse_replay_core::input::raw_to_recording(body, "inline");
            let source = sse_replay_core::analysis::SourceInfo {
                name: "inline".into(),
                kind: "raw body".into(),
                timing_known: false,
            };
            Analysis::from_recording(&rec, source, Default::default())
        };
        let a = analyse(b"{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true}\n");
        assert_eq!(a.framing, Framing::JsonLines);
        assert_eq!(
            event_sse_text(&a, &a.events[1]),
            "data: {\"done\":true}\n\n"
        );
        assert_eq!(event_data(&a, &a.events[1]), "{\"done\":true}");
        let a = analyse(b"event: x\ndata: 1\ndata: 2\n\n");
        assert_eq!(event_data(&a, &a.events[0]), "1\n2");
        assert_eq!(
            event_sse_text(&a, &a.events[0]),
            "event: x\ndata: 1\ndata: 2\n\n"
        );
    }

    #[test]
    fn the_piece_is_found_escaped_after_the_arguments_key() {
        let pretty = "{\n  \"a\": \"{\\\"c\",\n  \"arguments\": \"{\\\"c\"\n}";
        let r = piece_range(pretty, "{\"c").unwrap();
        assert!(r.start > pretty.find("arguments").unwrap());
        assert_eq!(&pretty[r], "{\\\"c");
        assert_eq!(piece_range(pretty, ""), None);
        assert_eq!(piece_range(pretty, "zz"), None);
    }
}
