//! The player: the transport bar (play/pause, speed, steps, seek slider) and the clock that moves
//! the cursor at recorded timing. Moving the cursor never recomputes anything.

use std::time::{Duration, Instant};

use egui::{RichText, Ui};

use super::style;
use super::view::{Action, ActionQueue, CursorTables, StepUnit, ViewState};
use sse_replay_core::analysis::Analysis;

/// The speeds offered (× recorded timing).
pub const SPEEDS: [f32; 7] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];

/// The transport bar.
pub fn transport_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    tables: &CursorTables,
    view: &mut ViewState,
    queue: &mut ActionQueue,
) {
    let last = ViewState::last_chunk(analysis);
    ui.horizontal_wrapped(|ui| {
        let q = &mut *queue;
        if ui
            .button("⇤ Start")
            .on_hover_text("First chunk (Home)")
            .clicked()
        {
            q.push(Action::Home);
        }
        step_buttons(ui, q, -1);
        let play_label = if view.playing {
            "⏸ Pause"
        } else {
            "⏵ Play"
        };
        if ui
            .button(RichText::new(play_label).strong())
            .on_hover_text("Play at the recorded timing (Space)")
            .clicked()
        {
            q.push(Action::TogglePlay);
        }
        step_buttons(ui, q, 1);
        if ui
            .button("End ⇥")
            .on_hover_text("Last chunk (End)")
            .clicked()
        {
            q.push(Action::End);
        }
        ui.separator();
        let speed_text = if view.instant {
            "instant".to_owned()
        } else {
            format!("{}×", view.speed)
        };
        egui::ComboBox::from_label("speed")
            .selected_text(speed_text)
            .width(70.0)
            .show_ui(ui, |ui| {
                for s in SPEEDS {
                    if ui
                        .selectable_label(!view.instant && view.speed == s, format!("{s}×"))
                        .clicked()
                    {
                        view.speed = s;
                        view.instant = false;
                        view.play_anchor = None;
                    }
                }
                if ui.selectable_label(view.instant, "instant").clicked() {
                    view.instant = true;
                }
            });
        ui.separator();
        // Hindsight: the whole recording's knowledge at a cursor before the end. Not while a
        // stream is arriving (there is none), and off by default so that a cursor shows what
        // had arrived by it, as the live view did.
        let r = ui.add_enabled(
            !view.arriving,
            egui::Checkbox::new(&mut view.hindsight, "hindsight"),
        );
        let r = if view.arriving {
            r.on_disabled_hover_text("The stream is still arriving: its end is not known yet")
        } else {
            r.on_hover_text("Before the end, mark the values a typewriter preview shows that the final arguments contradict (the live view could not know them yet)")
        };
        let _ = r;
    });
    ui.horizontal(|ui| {
        let mut k = view.cursor;
        let t = analysis
            .chunks
            .get(view.cursor as usize)
            .map_or(0, |c| c.t_micros);
        let events = analysis.events_at(view.cursor);
        let frags = analysis.fragments_at(view.cursor);
        let time = if tables.timed {
            format!("t = {}", style::ms(t))
        } else {
            "no timing".to_owned()
        };
        let counters = format!(
            "of {} · {time} · events {events}/{} · fragments {frags}/{}",
            last,
            analysis.events.len(),
            analysis.fragments.len()
        );
        // The counters keep their width (a large stream's "events 679793/679793" was cut): the
        // slider takes what is left, and the counters elide with the full text on hover only
        // when even the narrowest slider leaves no room.
        let counters_w = egui::WidgetText::from(counters.as_str())
            .into_galley(
                ui,
                Some(egui::TextWrapMode::Extend),
                f32::INFINITY,
                egui::TextStyle::Body,
            )
            .size()
            .x;
        let value_box = 130.0 + 4.0 * ui.spacing().item_spacing.x;
        let width = (ui.available_width() - counters_w - value_box).max(120.0);
        ui.spacing_mut().slider_width = width;
        let r = ui.add(
            egui::Slider::new(&mut k, 0..=last)
                .text("chunk")
                .clamping(egui::SliderClamping::Always),
        );
        if r.changed() && k != view.cursor {
            queue.push(Action::Seek(k));
        } else if let Some(k) = clicked_on_rail(ui, r.rect, width, last) {
            // egui's slider moves only on a drag: a quick click on the track (pressed and
            // released within one frame, as most clicks are) seeks too.
            if k != view.cursor {
                queue.push(Action::Seek(k));
            }
        }
        ui.add(egui::Label::new(counters).truncate());
    });
}

/// The chunk under a click on the seek slider's rail (its first `width` points from the left of
/// `rect`), if there was one this frame: where egui's slider puts a dragged handle.
fn clicked_on_rail(ui: &Ui, rect: egui::Rect, width: f32, last: u32) -> Option<u32> {
    let pos = ui.input(|i| {
        i.pointer
            .button_clicked(egui::PointerButton::Primary)
            .then(|| i.pointer.interact_pos())
            .flatten()
    })?;
    let rail = egui::Rect::from_min_size(rect.min, egui::vec2(width, rect.height()));
    if !rail.contains(pos) {
        return None;
    }
    // egui's slider geometry: the handle's centre travels the rail inset by its radius.
    let thickness = ui
        .text_style_height(&egui::TextStyle::Body)
        .max(ui.spacing().interact_size.y);
    let track = rail.x_range().shrink(thickness / 2.5);
    let fraction = egui::remap_clamp(pos.x, track, 0.0..=1.0);
    Some((fraction * last as f32).round() as u32)
}

fn step_buttons(ui: &mut Ui, q: &mut ActionQueue, dir: i32) {
    let units = [
        (StepUnit::Fragment, "fragment"),
        (StepUnit::Event, "event"),
        (StepUnit::Chunk, "chunk"),
    ];
    let ordered: Vec<_> = if dir < 0 {
        units.to_vec()
    } else {
        units.iter().rev().copied().collect()
    };
    for (unit, name) in ordered {
        let (label, key) = if dir < 0 {
            (format!("◀ {name}"), "←")
        } else {
            (format!("{name} ▶"), "→")
        };
        let hint = match unit {
            StepUnit::Chunk => format!(
                "One network read {} ({key})",
                if dir < 0 { "back" } else { "forward" }
            ),
            StepUnit::Event => format!(
                "One SSE event {} (Shift+{key})",
                if dir < 0 { "back" } else { "forward" }
            ),
            StepUnit::Fragment => format!(
                "One tool-call fragment {} (Ctrl+{key})",
                if dir < 0 { "back" } else { "forward" }
            ),
        };
        if ui.button(label).on_hover_text(hint).clicked() {
            q.push(Action::StepCursor(unit, dir));
        }
    }
}

/// Advance the cursor while playing; asks for a repaint only when the next chunk is due.
pub fn tick(ctx: &egui::Context, analysis: &Analysis, tables: &CursorTables, view: &mut ViewState) {
    if !view.playing {
        view.play_anchor = None;
        return;
    }
    let last = ViewState::last_chunk(analysis);
    if view.instant || view.cursor >= last {
        view.cursor = last;
        view.focus_fragment = None;
        view.playing = false;
        view.play_anchor = None;
        return;
    }
    let now = Instant::now();
    let (wall0, clock0) = *view
        .play_anchor
        .get_or_insert((now, ViewState::clock_of(analysis, tables, view.cursor)));
    let clock = clock0 + now.duration_since(wall0).as_secs_f64() * 1e6 * f64::from(view.speed);
    let k = ViewState::chunk_at_clock(analysis, tables, clock).max(view.cursor);
    if k != view.cursor {
        view.cursor = k;
        view.focus_fragment = None;
    }
    if k >= last {
        view.playing = false;
        view.play_anchor = None;
        return;
    }
    let next = ViewState::clock_of(analysis, tables, k + 1);
    let wait_micros = ((next - clock) / f64::from(view.speed)).clamp(1_000.0, 250_000.0);
    ctx.request_repaint_after(Duration::from_micros(wait_micros as u64));
}
