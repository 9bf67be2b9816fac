//! The raw view: the body as received, one row per chunk (network read), with the event under the
//! cursor highlighted, the cursor's chunk marked, and a hex view of the bytes around a boundary that
//! splits a UTF-8 character. Binary AWS event stream frames are shown by offset: each frame's start
//! marked `⟦frame @offset⟧`, its prelude, headers and CRC in hex, its payload as text. Rows are
//! virtualised (`show_rows`), so a 700,000-chunk body scrolls.

use egui::text::LayoutJob;
use egui::{RichText, TextFormat, Ui};

use super::style;
use super::view::{Action, ActionQueue, CursorTables, ViewState};
use sse_replay_core::analysis::Analysis;
use sse_replay_core::framing::Framing;

/// At most this many bytes of a chunk are shown on its row.
const ROW_BYTES: usize = 600;

/// The raw view.
pub fn raw_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    _tables: &CursorTables,
    view: &mut ViewState,
    queue: &mut ActionQueue,
) {
    let event = view
        .current_event(analysis)
        .and_then(|e| analysis.events.get(e as usize));
    ui.horizontal_wrapped(|ui| {
        ui.strong("Raw stream");
        ui.weak(format!(
            "{} in {} · {} · {}",
            sse_replay_core::text::plural(analysis.body.len(), "byte"),
            sse_replay_core::text::plural(analysis.chunks.len(), "chunk"),
            analysis.framing.name(),
            analysis.source.kind
        ));
        if let Some(e) = event {
            ui.separator();
            let what = if analysis.framing == Framing::AwsEventStream {
                "frame"
            } else {
                "event"
            };
            ui.label(
                RichText::new(format!(
                    "{what} {} ({}) bytes {}..{}",
                    view.current_event(analysis).unwrap_or(0),
                    analysis.event_type(e),
                    e.span.start,
                    e.span.end
                ))
                .background_color(style::fragment_bg(ui, 0, true))
                .color(ui.visuals().strong_text_color()),
            );
        }
    });
    ui.horizontal(|ui| {
        ui.weak("scroll the bytes sideways (Shift+wheel):");
        let mut x = view.inspector.bytes_x;
        if ui
            .add(egui::Slider::new(&mut x, 0.0..=4000.0).show_value(false))
            .on_hover_text("The read number and time stay in place; only the bytes move")
            .changed()
        {
            view.inspector.bytes_x = x;
        }
    });
    // The row's chunk button is at least the interact height: a smaller row height would make
    // the rows taller than the virtualised list plans, and scrolling to a row would miss it.
    let row_h = ui
        .spacing()
        .interact_size
        .y
        .max(ui.text_style_height(&egui::TextStyle::Monospace) + 2.0);
    let row_full = row_h + ui.spacing().item_spacing.y;
    // Vertical scrolling only: the gutter (read number, time) never scrolls away. The bytes scroll
    // sideways on their own (Shift+wheel, a horizontal swipe, or the slider), clipped at the gutter.
    let mut area = egui::ScrollArea::vertical()
        .id_salt("raw-rows")
        .min_scrolled_height(row_h)
        .max_height(ui.available_height())
        .auto_shrink([false, false]);
    if let Some(offset) = view.raw_scroll.target(
        view.cursor,
        view.cursor as usize,
        analysis.chunks.len(),
        row_full,
        ui.spacing().item_spacing.y,
    ) {
        area = area.vertical_scroll_offset(offset);
    }
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let x = view.inspector.bytes_x.max(0.0);
    let mut widest = 0.0f32;
    let mut text_w = 0.0f32;
    let out = area.show_rows(ui, row_h, analysis.chunks.len(), |ui, range| {
        for k in range {
            let Some(c) = analysis.chunks.get(k) else { continue };
            let is_cursor = k as u32 == view.cursor;
            ui.horizontal(|ui| {
                let head = RichText::new(format!("{k:>6} {:>9}", style::time_of(analysis, c.t_micros))).monospace();
                let head = if is_cursor { head.background_color(style::fragment_bg(ui, 0, true)).strong() } else { head.weak() };
                if ui.add(egui::Button::new(head).frame(false)).on_hover_text("Move the cursor to this chunk").clicked() {
                    queue.push(Action::Seek(k as u32));
                }
                if let Some(hex) = split_utf8_hex(&analysis.body, c.end as usize) {
                    ui.label(RichText::new(hex).monospace().color(style::warn_color(ui)))
                        .on_hover_text("This read ends inside a UTF-8 character: the bytes of that character on both sides of the boundary (|). Decoding each read on its own gives U+FFFD.");
                }
                let bytes = analysis.bytes(&(c.start..c.end));
                let shown = &bytes[..bytes.len().min(ROW_BYTES)];
                let binary = analysis.framing == Framing::AwsEventStream;
                // Split the row at the highlighted event's edges.
                let (hs, he) = event.map_or((0, 0), |e| {
                    let s = e.span.start.clamp(c.start, c.end) - c.start;
                    let t = e.span.end.clamp(c.start, c.end) - c.start;
                    (s as usize, t as usize)
                });
                let mut job = LayoutJob::default();
                let normal = TextFormat { font_id: font.clone(), color: ui.visuals().text_color(), ..Default::default() };
                let hl = TextFormat { background: style::fragment_bg(ui, 0, true), ..normal.clone() };
                let cut = |x: usize| x.min(shown.len());
                for (range, fmt) in [(0..cut(hs), &normal), (cut(hs)..cut(he), &hl), (cut(he)..shown.len(), &normal)] {
                    if range.is_empty() {
                        continue;
                    }
                    if !binary {
                        style::append_marked(&mut job, &escape(&shown[range]), fmt);
                        continue;
                    }
                    let abs = c.start + range.start as u64..c.start + range.end as u64;
                    for seg in frame_segments(analysis, abs) {
                        if let Some(at) = seg.frame_start {
                            let marker = TextFormat { color: ui.visuals().strong_text_color(), ..fmt.clone() };
                            job.append(&format!("⟦frame @{at}⟧ "), 0.0, marker);
                        }
                        let piece = analysis.bytes(&seg.range);
                        let weak = TextFormat { color: ui.visuals().weak_text_color(), ..fmt.clone() };
                        match seg.part {
                            FramePart::Payload => style::append_marked(&mut job, &escape(piece), fmt),
                            FramePart::Headers => job.append(&format!("{} ", headers_text(analysis, &seg)), 0.0, weak),
                            FramePart::Binary => job.append(&format!("{} ", hex(piece)), 0.0, weak),
                        }
                    }
                }
                if bytes.len() > ROW_BYTES {
                    job.append(&format!(" … +{}", sse_replay_core::text::plural(bytes.len() - ROW_BYTES, "byte")), 0.0, TextFormat { color: ui.visuals().weak_text_color(), ..normal.clone() });
                }
                let galley = ui.painter().layout_job(job);
                let (rect, _) = ui.allocate_exact_size(egui::vec2(ui.available_width(), row_h), egui::Sense::hover());
                widest = widest.max(galley.size().x);
                text_w = rect.width();
                let clip = rect.intersect(ui.clip_rect());
                let pos = egui::pos2(rect.min.x - x, rect.center().y - galley.size().y / 2.0);
                ui.painter().with_clip_rect(clip).galley(pos, galley, ui.visuals().text_color());
            });
        }
    });
    let max_x = (widest - text_w + 20.0).max(0.0);
    if out
        .inner_rect
        .contains(ui.ctx().pointer_hover_pos().unwrap_or_default())
    {
        let dx = ui.input(|i| i.smooth_scroll_delta.x);
        if dx != 0.0 {
            view.inspector.bytes_x = (x - dx).clamp(0.0, max_x);
            ui.ctx().request_repaint();
        }
    }
    if view.inspector.bytes_x > max_x {
        view.inspector.bytes_x = max_x;
    }
    view.raw_scroll.remember(&out);
    if view.raw_scroll.pending() {
        ui.ctx().request_repaint();
    }
}

/// What part of a binary frame a stretch of bytes is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramePart {
    /// The 12-byte prelude, the message CRC, or bytes that are no frame: shown as hex.
    Binary,
    /// The headers: names and string values are text, so shown as escaped text (dimmed).
    Headers,
    /// The payload: shown as text.
    Payload,
}

/// A stretch of a binary body as the raw view shows it, and the offset of the frame that starts
/// here, if one does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSegment {
    pub range: std::ops::Range<u64>,
    pub part: FramePart,
    pub frame_start: Option<u64>,
}

/// The segments of `range` (a read, or part of one) of a binary AWS event stream body, in order
/// and covering it: each frame's prelude, headers, payload and CRC, from the frames' own preludes
/// (the events are the frames, in order).
pub fn frame_segments(a: &Analysis, range: std::ops::Range<u64>) -> Vec<FrameSegment> {
    let mut out = Vec::new();
    let mut push = |r: std::ops::Range<u64>, part: FramePart, frame_start: Option<u64>| {
        let r = r.start.max(range.start)..r.end.min(range.end);
        if !r.is_empty() {
            let frame_start = frame_start.filter(|s| *s == r.start);
            out.push(FrameSegment {
                range: r,
                part,
                frame_start,
            });
        }
    };
    let first = a.events.partition_point(|e| e.span.end <= range.start);
    let mut at = range.start;
    for e in a.events[first..]
        .iter()
        .take_while(|e| e.span.start < range.end)
    {
        // Bytes between frames (a corrupt stretch).
        push(at..e.span.start, FramePart::Binary, None);
        let frame = a.bytes(&e.span);
        match sse_replay_core::aws_eventstream::payload_range(frame) {
            Some(p) => {
                let start = e.span.start;
                let prelude = start + sse_replay_core::aws_eventstream::PRELUDE_BYTES as u64;
                let p = start + p.start as u64..start + p.end as u64;
                push(start..prelude, FramePart::Binary, Some(start));
                push(prelude..p.start, FramePart::Headers, None);
                push(p.clone(), FramePart::Payload, None);
                push(p.end..e.span.end, FramePart::Binary, None);
            }
            None => push(e.span.clone(), FramePart::Binary, Some(e.span.start)),
        }
        at = e.span.end.max(at);
    }
    push(at..range.end, FramePart::Binary, None);
    out
}

/// A frame's headers as `name=value …` when the segment holds all of them (the usual case: a read
/// that starts inside the headers shows their bytes escaped).
pub fn headers_text(a: &Analysis, seg: &FrameSegment) -> String {
    let i = a.events.partition_point(|e| e.span.end <= seg.range.start);
    if let Some(e) = a.events.get(i) {
        let frame = a.bytes(&e.span);
        let start = e.span.start + sse_replay_core::aws_eventstream::PRELUDE_BYTES as u64;
        let whole = sse_replay_core::aws_eventstream::payload_range(frame)
            .is_some_and(|p| seg.range == (start..e.span.start + p.start as u64));
        if whole && let Ok(f) = sse_replay_core::aws_eventstream::decode_frame(frame, e.span.start)
        {
            let shown: Vec<String> = f
                .headers()
                .map(|h| format!("{}={}", h.name, h.value))
                .collect();
            return format!("⟨{}⟩", escape(shown.join(" ").as_bytes()));
        }
    }
    escape(a.bytes(&seg.range))
}

/// Bytes as lowercase hex pairs separated by spaces.
fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Bytes as text, control characters escaped: the core's one escaper.
pub use sse_replay_core::text::escape_bytes as escape;

/// If the boundary at `end` splits a UTF-8 character, the hex of that character's bytes with `|`
/// at the boundary, e.g. `e6 b7 | b1 (深)`.
pub fn split_utf8_hex(body: &[u8], end: usize) -> Option<String> {
    if end == 0 || end >= body.len() || body[end] & 0xC0 != 0x80 {
        return None;
    }
    let mut start = end;
    while start > 0 && end - start < 4 && body[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    let mut stop = end;
    while stop < body.len() && stop - start < 4 && body[stop] & 0xC0 == 0x80 {
        stop += 1;
    }
    let hex = |s: &[u8]| {
        s.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let ch = std::str::from_utf8(&body[start..stop])
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    Some(format!(
        "split UTF-8: {} | {}{ch}",
        hex(&body[start..end]),
        hex(&body[end..stop])
    ))
}
