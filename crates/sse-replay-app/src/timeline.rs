//! The timeline: a lane per call showing when each fragment arrived (recorded microseconds, or the
//! chunk number for a raw body), chunk boundaries, the finish, and the cursor. Clicking a fragment
//! moves the cursor there. Lanes are virtualised; within a lane only the visible time window is
//! searched (binary search) and at most one mark per pixel is drawn.

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, Ui, vec2};

use super::style;
use super::view::{Action, ActionQueue, CursorTables, ViewState};
use sse_replay_core::analysis::Analysis;

const LABEL_W: f32 = 150.0;
const LANE_H: f32 = 18.0;

/// The timeline panel.
pub fn timeline_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    tables: &CursorTables,
    view: &mut ViewState,
    queue: &mut ActionQueue,
) {
    let axis_of = |k: u32| -> f64 { ViewState::clock_of(analysis, tables, k) };
    let last = ViewState::last_chunk(analysis);
    let total = axis_of(last).max(1.0);
    ui.horizontal(|ui| {
        ui.weak(if tables.timed {
            "x: recorded arrival time"
        } else {
            "x: chunk number (this recording has no timing)"
        });
        ui.separator();
        if ui.button("－").on_hover_text("Zoom out").clicked() {
            view.timeline_zoom = (view.timeline_zoom / 2.0).max(1.0);
        }
        if ui
            .button("＋")
            .on_hover_text("Zoom in (centred on the cursor)")
            .clicked()
        {
            view.timeline_zoom = (view.timeline_zoom * 2.0).min(1.0e6);
        }
        if ui.button("Fit").clicked() {
            view.timeline_zoom = 1.0;
        }
        ui.weak(format!("zoom {}×", view.timeline_zoom));
    });
    // The visible window, centred on the cursor when zoomed in.
    let span = total / f64::from(view.timeline_zoom);
    let centre = axis_of(view.cursor);
    let x0 = (centre - span / 2.0).clamp(0.0, (total - span).max(0.0));
    let x1 = x0 + span;

    // Axis row: chunk ticks, finish, cursor.
    let width = ui.available_width();
    let (axis_rect, axis_resp) = ui.allocate_exact_size(vec2(width, LANE_H), Sense::click());
    // A margin on the right keeps the finish mark and the cursor at the end visible.
    let track = Rect::from_min_max(
        Pos2::new(axis_rect.left() + LABEL_W, axis_rect.top()),
        Pos2::new(axis_rect.right() - 10.0, axis_rect.bottom()),
    );
    let to_x = |t: f64| track.left() + ((t - x0) / (x1 - x0).max(1e-9)) as f32 * track.width();
    let from_x = |x: f32| x0 + f64::from((x - track.left()) / track.width().max(1.0)) * (x1 - x0);
    let painter = ui.painter_at(axis_rect);
    let weak = ui.visuals().weak_text_color();
    painter.text(
        axis_rect.left_center(),
        egui::Align2::LEFT_CENTER,
        "chunks",
        egui::FontId::proportional(12.0),
        weak,
    );
    let first_chunk = ViewState::chunk_at_clock(analysis, tables, x0);
    let last_chunk = ViewState::chunk_at_clock(analysis, tables, x1).min(last);
    let mut last_px = f32::NEG_INFINITY;
    // With more chunks than pixels, sample one per 3 pixels (a binary search each) instead of
    // walking 700,000 chunks every frame.
    let ticks: Vec<u32> = if (last_chunk - first_chunk) as f32 <= track.width() / 3.0 {
        (first_chunk..=last_chunk).collect()
    } else {
        let mut ks: Vec<u32> = (0..(track.width() / 3.0) as u32)
            .map(|i| {
                ViewState::chunk_at_clock(analysis, tables, from_x(track.left() + i as f32 * 3.0))
            })
            .collect();
        ks.dedup();
        ks
    };
    for k in ticks {
        let x = to_x(axis_of(k));
        if x - last_px >= 3.0 {
            painter.line_segment(
                [
                    Pos2::new(x, track.top() + 4.0),
                    Pos2::new(x, track.bottom()),
                ],
                Stroke::new(1.0, weak),
            );
            last_px = x;
        }
    }
    if let Some(fc) = analysis.finish_chunk() {
        let x = to_x(axis_of(fc));
        painter.text(
            Pos2::new(x, track.center().y),
            egui::Align2::CENTER_CENTER,
            "◆",
            egui::FontId::proportional(14.0),
            style::ok_color(ui),
        );
    }
    let cursor_x = to_x(axis_of(view.cursor));
    painter.line_segment(
        [
            Pos2::new(cursor_x, track.top()),
            Pos2::new(cursor_x, track.bottom()),
        ],
        Stroke::new(2.0, style::warn_color(ui)),
    );
    if axis_resp.clicked()
        && let Some(p) = axis_resp.interact_pointer_pos()
        && p.x >= track.left()
    {
        queue.push(Action::Seek(ViewState::chunk_at_clock(
            analysis,
            tables,
            from_x(p.x),
        )));
    }
    axis_resp
        .on_hover_text("Chunk boundaries (network reads); ◆ = finish. Click to move the cursor.");

    let current = view.current_fragment(analysis);
    let cursor = view.cursor;
    // With many calls the lanes follow the call at the cursor: scrolled to it when it changes.
    let cursor_call = current
        .and_then(|f| analysis.fragments.get(f as usize))
        .map(|f| f.call);
    let follow_id = ui.scope_id().with("timeline-follows");
    let followed = ui.data(|d| d.get_temp::<Option<u32>>(follow_id)).flatten();
    let mut area = egui::ScrollArea::vertical()
        .id_salt("timeline-lanes")
        .auto_shrink([false, false]);
    if cursor_call != followed {
        ui.data_mut(|d| d.insert_temp(follow_id, cursor_call));
        if let Some(ci) = cursor_call {
            let full = LANE_H + ui.spacing().item_spacing.y;
            area = area.vertical_scroll_offset((ci as f32 - 1.0).max(0.0) * full);
        }
    }
    area.show_rows(ui, LANE_H, analysis.calls.len(), |ui, range| {
            for ci in range {
                let Some(c) = analysis.calls.get(ci) else {
                    continue;
                };
                let (rect, resp) = ui.allocate_exact_size(vec2(width, LANE_H), Sense::click());
                let painter = ui.painter_at(rect);
                // The cards' naming: the call's key, then its name.
                let full_label = super::event_inspector::call_label(analysis, ci as u32);
                let label = style::visible(&full_label, 22);
                painter.text(
                    rect.left_center(),
                    egui::Align2::LEFT_CENTER,
                    label,
                    egui::FontId::proportional(12.0),
                    ui.visuals().text_color(),
                );
                let lane = Rect::from_min_max(
                    Pos2::new(track.left(), rect.top() + 2.0),
                    Pos2::new(track.right(), rect.bottom() - 2.0),
                );
                painter.rect_filled(lane, 2.0, ui.visuals().extreme_bg_color);
                // Fragments of this call inside the window.
                let frags = &c.fragments;
                let clock_of_frag = |no: u32| {
                    analysis
                        .fragments
                        .get(no as usize)
                        .map_or(0.0, |f| axis_of(f.pos.chunk))
                };
                let start = frags.partition_point(|&no| clock_of_frag(no) < x0);
                let mut last_px = f32::NEG_INFINITY;
                let mut hit: Option<(f32, u32)> = None;
                let pointer = resp.interact_pointer_pos().or(resp.hover_pos());
                for &no in &frags[start..] {
                    let t = clock_of_frag(no);
                    if t > x1 {
                        break;
                    }
                    let x = to_x(t);
                    if let Some(p) = pointer {
                        let dist = (p.x - x).abs();
                        if dist < 8.0 && hit.is_none_or(|(best, _)| dist < best) {
                            hit = Some((dist, no));
                        }
                    }
                    if x - last_px < 2.0 && Some(no) != current {
                        continue;
                    }
                    last_px = x;
                    let arrived = analysis
                        .fragments
                        .get(no as usize)
                        .is_some_and(|f| f.pos.chunk <= cursor);
                    let r = Rect::from_center_size(
                        Pos2::new(x, lane.center().y),
                        vec2(6.0, lane.height() - 2.0),
                    );
                    let color = if Some(no) == current {
                        style::fragment_bg(ui, no, true)
                    } else if arrived {
                        ui.visuals().hyperlink_color
                    } else {
                        Color32::TRANSPARENT
                    };
                    painter.rect_filled(r, 1.0, color);
                    painter.rect_stroke(
                        r,
                        1.0,
                        Stroke::new(1.0, ui.visuals().hyperlink_color),
                        egui::StrokeKind::Inside,
                    );
                }
                painter.line_segment(
                    [
                        Pos2::new(cursor_x, rect.top()),
                        Pos2::new(cursor_x, rect.bottom()),
                    ],
                    Stroke::new(2.0, style::warn_color(ui)),
                );
                if resp.clicked() {
                    match hit {
                        Some((_, no)) => queue.push(Action::FocusFragment(no)),
                        None => {
                            if let Some(p) = pointer.filter(|p| p.x >= lane.left()) {
                                queue.push(Action::Seek(ViewState::chunk_at_clock(
                                    analysis,
                                    tables,
                                    from_x(p.x),
                                )));
                            }
                        }
                    }
                }
                // Over a fragment: its text and time; else the lane.
                let tip = match hit.and_then(|(_, no)| analysis.fragments.get(no as usize)) {
                    Some(f) => format!(
                        "fragment {} of {full_label}: {} at {} (read {}). Click to move the cursor there.",
                        f.no,
                        style::visible(analysis.fragment_text(f), 200),
                        style::time_of(analysis, f.pos.t_micros),
                        f.pos.chunk
                    ),
                    None => format!(
                        "{full_label}: {}. Click a fragment to move the cursor there.",
                        sse_replay_core::text::plural(c.fragments.len(), "fragment")
                    ),
                };
                resp.on_hover_text(RichText::new(tip));
            }
        });
}
