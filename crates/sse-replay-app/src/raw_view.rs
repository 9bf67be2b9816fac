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

/// At most this many bytes of a chunk are shown on its row when rows wrap (a few hundred lines).
const WRAP_ROW_BYTES: usize = 16 * 1024;

/// The raw view; `wrap`: long reads wrap onto several lines (a persisted setting, toggled here).
pub fn raw_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    _tables: &CursorTables,
    view: &mut ViewState,
    queue: &mut ActionQueue,
    wrap: &mut bool,
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
        ui.checkbox(wrap, "Wrap long lines")
            .on_hover_text("Show each read whole, on as many lines as it takes (else one line each, scrolled sideways)");
        if *wrap {
            return;
        }
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
    if *wrap {
        wrapped_rows(ui, analysis, view, queue, event);
        return;
    }
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
                let job = row_job(ui, analysis, k, event, ROW_BYTES);
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

/// Read `k`'s bytes as the row shows them (at most `cap`): the event under the cursor
/// highlighted, a U+FFFD marked, a binary frame's parts told apart; one line (no wrapping).
fn row_job(
    ui: &Ui,
    analysis: &Analysis,
    k: usize,
    event: Option<&sse_replay_core::pipeline::EventRecord>,
    cap: usize,
) -> LayoutJob {
    let mut job = LayoutJob::default();
    let Some(c) = analysis.chunks.get(k) else {
        return job;
    };
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let bytes = analysis.bytes(&(c.start..c.end));
    let shown = &bytes[..bytes.len().min(cap)];
    let binary = analysis.framing == Framing::AwsEventStream;
    // Split the row at the highlighted event's edges.
    let (hs, he) = event.map_or((0, 0), |e| {
        let s = e.span.start.clamp(c.start, c.end) - c.start;
        let t = e.span.end.clamp(c.start, c.end) - c.start;
        (s as usize, t as usize)
    });
    let normal = TextFormat {
        font_id: font,
        color: ui.visuals().text_color(),
        ..Default::default()
    };
    let hl = TextFormat {
        background: style::fragment_bg(ui, 0, true),
        ..normal.clone()
    };
    let cut = |x: usize| x.min(shown.len());
    for (range, fmt) in [
        (0..cut(hs), &normal),
        (cut(hs)..cut(he), &hl),
        (cut(he)..shown.len(), &normal),
    ] {
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
                let marker = TextFormat {
                    color: ui.visuals().strong_text_color(),
                    ..fmt.clone()
                };
                job.append(&format!("⟦frame @{at}⟧ "), 0.0, marker);
            }
            let piece = analysis.bytes(&seg.range);
            let weak = TextFormat {
                color: ui.visuals().weak_text_color(),
                ..fmt.clone()
            };
            match seg.part {
                FramePart::Payload => style::append_marked(&mut job, &escape(piece), fmt),
                FramePart::Headers => {
                    job.append(&format!("{} ", headers_text(analysis, &seg)), 0.0, weak);
                }
                FramePart::Binary => job.append(&format!("{} ", hex(piece)), 0.0, weak),
            }
        }
    }
    if bytes.len() > cap {
        let more = sse_replay_core::text::plural(bytes.len() - cap, "byte");
        let weak = TextFormat {
            color: ui.visuals().weak_text_color(),
            ..normal
        };
        job.append(&format!(" … +{more}"), 0.0, weak);
    }
    job
}

/// The wrapped byte view's row tops for one line width, estimated from each read's length (so a
/// 700,000-read body needs no layout to be scrolled); only the rows on screen are laid out, and a
/// row taller than its estimate pushes the rows under it down.
#[derive(Debug, Default)]
pub struct WrapTops {
    /// The body (address, length), its reads and the characters per line they were estimated for.
    key: (usize, usize, usize, usize),
    /// Row `k`'s top in points from the list's top; the last entry is the whole height.
    tops: Vec<f32>,
}

/// About how many characters read `k`'s wrapped row shows (see [`row_job`]): one per byte, more
/// for the escaped control characters and a binary frame's hex.
fn estimated_chars(a: &Analysis, k: usize) -> usize {
    let Some(c) = a.chunks.get(k) else { return 0 };
    let bytes = a.bytes(&(c.start..c.end));
    let shown = &bytes[..bytes.len().min(WRAP_ROW_BYTES)];
    if a.framing == Framing::AwsEventStream {
        return shown.len() * 3;
    }
    let controls = shown.iter().filter(|&&b| b < 0x20 || b == 0x7f).count();
    let more = if bytes.len() > WRAP_ROW_BYTES { 20 } else { 0 };
    let split = split_utf8_hex(&a.body, c.end as usize).map_or(0, |h| h.chars().count() + 1);
    shown.len() + controls + more + split
}

/// "Bytes as received" with long reads wrapped: one row per read, as tall as its lines, the read
/// number and time beside its first line.
fn wrapped_rows(
    ui: &mut Ui,
    analysis: &Analysis,
    view: &mut ViewState,
    queue: &mut ActionQueue,
    event: Option<&sse_replay_core::pipeline::EventRecord>,
) {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let char_w = ui.ctx().fonts_mut(|f| f.glyph_width(&font, '0')).max(1.0);
    let line_h = ui
        .spacing()
        .interact_size
        .y
        .max(ui.text_style_height(&egui::TextStyle::Monospace) + 2.0);
    let gap = ui.spacing().item_spacing.y;
    let text_h = ui.text_style_height(&egui::TextStyle::Monospace);
    let head_w = ui
        .painter()
        .layout_no_wrap(
            "000000 000000000".into(),
            font.clone(),
            egui::Color32::WHITE,
        )
        .size()
        .x
        + 2.0 * ui.spacing().button_padding.x
        + ui.spacing().item_spacing.x;
    let text_w =
        (ui.available_width() - head_w - ui.spacing().scroll.bar_width - 8.0).max(char_w * 20.0);
    let per_line = ((text_w / char_w).floor() as usize).max(1);
    let n = analysis.chunks.len();
    let key = (
        analysis.body.as_ptr() as usize,
        analysis.body.len(),
        n,
        per_line,
    );
    let cache = &mut view.raw_wrap;
    if cache.key != key || cache.tops.len() != n + 1 {
        let mut tops = Vec::with_capacity(n + 1);
        let mut y = 0.0f32;
        tops.push(y);
        for k in 0..n {
            let lines = estimated_chars(analysis, k).div_ceil(per_line).max(1);
            y += lines as f32 * (line_h - 2.0).max(1.0) + 2.0 + gap;
            tops.push(y);
        }
        *cache = WrapTops { key, tops };
    }
    let tops = &view.raw_wrap.tops;
    let total = tops.last().copied().unwrap_or(0.0);
    let mut area = egui::ScrollArea::vertical()
        .id_salt("raw-rows-wrapped")
        .min_scrolled_height(line_h)
        .max_height(ui.available_height())
        .auto_shrink([false, false]);
    // Bring the cursor's read into view when the cursor moves (as the unwrapped rows do).
    let cursor = (view.cursor as usize).min(n.saturating_sub(1));
    let rs = &mut view.raw_scroll;
    if rs.followed != Some((view.cursor, cursor)) && rs.viewport_h > 0.0 && n > 0 {
        let (top, bottom) = (tops[cursor], tops[cursor + 1]);
        if top < rs.offset || bottom > rs.offset + rs.viewport_h {
            let offset = top - ((rs.viewport_h - (bottom - top)) / 2.0).max(0.0);
            area = area.vertical_scroll_offset(offset.max(0.0));
        }
        rs.followed = Some((view.cursor, cursor));
    }
    let out = area.show_viewport(ui, |ui, viewport| {
        ui.set_height(total);
        let origin = ui.max_rect().min;
        let first = tops
            .partition_point(|&t| t <= viewport.min.y)
            .saturating_sub(1);
        let mut y = tops.get(first).copied().unwrap_or(0.0);
        let mut k = first;
        while k < n && y < viewport.max.y {
            let Some(c) = analysis.chunks.get(k) else {
                break;
            };
            let mut job = LayoutJob::default();
            if let Some(hex) = split_utf8_hex(&analysis.body, c.end as usize) {
                let warn = TextFormat {
                    font_id: font.clone(),
                    color: style::warn_color(ui),
                    ..Default::default()
                };
                job.append(&format!("{hex} "), 0.0, warn);
            }
            let bytes = row_job(ui, analysis, k, event, WRAP_ROW_BYTES);
            let offset = job.text.len();
            job.sections
                .extend(bytes.sections.into_iter().map(|mut sec| {
                    sec.byte_range = sec.byte_range.start + offset..sec.byte_range.end + offset;
                    sec
                }));
            job.text.push_str(&bytes.text);
            job.wrap.max_width = text_w;
            let galley = ui.painter().layout_job(job);
            let h = galley.size().y.max(line_h);
            let is_cursor = k == view.cursor as usize;
            let head = RichText::new(format!(
                "{k:>6} {:>9}",
                style::time_of(analysis, c.t_micros)
            ))
            .monospace();
            let head = if is_cursor {
                head.background_color(style::fragment_bg(ui, 0, true))
                    .strong()
            } else {
                head.weak()
            };
            let head_rect =
                egui::Rect::from_min_size(origin + egui::vec2(0.0, y), egui::vec2(head_w, line_h));
            if ui
                .put(head_rect, egui::Button::new(head).frame(false))
                .on_hover_text("Move the cursor to this chunk")
                .clicked()
            {
                queue.push(Action::Seek(k as u32));
            }
            let text_pos = origin + egui::vec2(head_w, y + (line_h - text_h) / 2.0);
            ui.painter()
                .galley(text_pos, galley, ui.visuals().text_color());
            y += h + gap;
            k += 1;
        }
    });
    view.raw_scroll.remember(&out);
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
