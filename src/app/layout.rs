//! The Replay tab's lower panels (timeline, event inspector / bytes) sized so that the
//! naive/correct comparison — the product — keeps at least half of the window's height: the lower
//! panels shrink first and fold to a one-line header when there is no room (or on a click).

use egui::{RichText, Ui};

use super::event_inspector::{self, LowerView};
use super::view::{ActionQueue, CursorTables, ViewState};
use super::{raw_view, timeline};
use crate::analysis::Analysis;

/// The lower panels' choices (a part of the persisted settings).
pub struct LowerChoices<'a> {
    pub show_timeline: bool,
    pub show_raw: bool,
    pub view: &'a mut LowerView,
    pub timeline_folded: &'a mut bool,
    pub lower_folded: &'a mut bool,
}

/// How much height the lower panels may take, out of `avail` (what is left below the header) in a
/// window `window_h` tall: the comparison keeps half the window and 60% of what is left.
pub fn lower_budget(avail: f32, window_h: f32) -> f32 {
    (avail - (window_h * 0.5).max(avail * 0.6)).max(0.0)
}

/// A fold toggle and the panel's name: the one-line header.
fn fold_header(ui: &mut Ui, folded: &mut bool, name: &str, room: bool) {
    let arrow = if *folded || !room { "▸" } else { "▾" };
    let r =
        ui.add(egui::Button::new(RichText::new(format!("{arrow} {name}")).strong()).frame(false));
    let r = if room {
        r.on_hover_text(if *folded {
            "Unfold this panel"
        } else {
            "Fold this panel to one line"
        })
    } else {
        r.on_hover_text("Folded: the window is too short to show it beside the comparison. Make the window taller, or hide the other lower panel (View menu).")
    };
    if r.clicked() && room {
        *folded = !*folded;
    }
}

/// Draw the lower panels (bottom up: inspector, then timeline above it).
pub fn lower_panels(
    ui: &mut Ui,
    choices: LowerChoices<'_>,
    a: &Analysis,
    d: &CursorTables,
    v: &mut ViewState,
    queue: &mut ActionQueue,
) {
    let header_h = ui.spacing().interact_size.y + 8.0;
    let window_h = ui.ctx().content_rect().height();
    let budget = lower_budget(ui.available_height(), window_h);
    let min_open = header_h * 3.0;
    let (raw_share, tl_share) = match (choices.show_raw, choices.show_timeline) {
        (true, true) => (0.6, 0.4),
        _ => (1.0, 1.0),
    };
    if choices.show_raw {
        let max = budget * raw_share;
        let room = max >= min_open;
        let folded = *choices.lower_folded || !room;
        let panel = egui::Panel::bottom("raw").show_separator_line(true);
        let panel = if folded {
            panel.resizable(false).exact_size(header_h)
        } else {
            panel
                .resizable(true)
                .default_size(200.0_f32.min(max))
                .min_size(min_open)
                .max_size(max)
        };
        panel.show(ui, |ui| {
            ui.horizontal(|ui| {
                let name = match *choices.view {
                    LowerView::Events => "Events",
                    LowerView::Bytes => "Bytes",
                };
                fold_header(ui, choices.lower_folded, name, room);
                ui.separator();
                for (view, label, tip) in [
                    (LowerView::Events, "Event list", "One row per event: time, type, size, call, arguments piece; a filter; the selected event's JSON"),
                    (LowerView::Bytes, "Bytes as received", "The body as received, one row per network read, hex where a read splits a character"),
                ] {
                    if ui.selectable_label(*choices.view == view, label).on_hover_text(tip).clicked() {
                        *choices.view = view;
                        *choices.lower_folded = false;
                    }
                }
            });
            if folded {
                return;
            }
            match *choices.view {
                LowerView::Events => event_inspector::inspector_ui(ui, a, v, queue),
                LowerView::Bytes => raw_view::raw_ui(ui, a, d, v, queue),
            }
        });
    }
    if choices.show_timeline {
        let max = budget * tl_share;
        let room = max >= min_open;
        let folded = *choices.timeline_folded || !room;
        let panel = egui::Panel::bottom("timeline").show_separator_line(true);
        let panel = if folded {
            panel.resizable(false).exact_size(header_h)
        } else {
            panel
                .resizable(true)
                .default_size(120.0_f32.min(max))
                .min_size(min_open)
                .max_size(max)
        };
        panel.show(ui, |ui| {
            if folded {
                ui.horizontal(|ui| fold_header(ui, choices.timeline_folded, "Timeline", room));
                return;
            }
            timeline::timeline_ui(ui, a, d, v, queue, choices.timeline_folded);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_comparison_keeps_half_the_window() {
        // 1024×700: ~560 px below the header; the lower panels get what leaves 350 px.
        assert_eq!(lower_budget(560.0, 700.0), 210.0);
        // A tall window: 60% of what is left stays with the comparison.
        assert_eq!(lower_budget(1000.0, 1100.0), 400.0);
        // No room at all.
        assert_eq!(lower_budget(300.0, 700.0), 0.0);
    }
}
