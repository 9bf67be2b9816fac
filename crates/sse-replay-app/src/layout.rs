//! The Replay tab's lower panels (timeline, event inspector / bytes) sized so that the
//! naive/correct comparison — the product — keeps at least half of the window's height: the lower
//! panels shrink first and fold to a one-line header when there is no room (or on a click).

use egui::{RichText, Ui};

use super::event_inspector::{self, LowerView};
use super::view::{ActionQueue, CursorTables, ViewState};
use super::{raw_view, timeline};
use sse_replay_core::analysis::Analysis;

/// The lower panels' choices (a part of the persisted settings).
pub struct LowerChoices<'a> {
    pub show_timeline: bool,
    pub show_raw: bool,
    pub view: &'a mut LowerView,
    pub timeline_folded: &'a mut bool,
    pub lower_folded: &'a mut bool,
}

/// The comparison never gets less than this: a call card down to its three checkpoints.
pub const COMPARISON_MIN: f32 = 390.0;

/// How much height the lower panels may take, out of `avail` (what is left below the header) in a
/// window `window_h` tall: the comparison keeps half the window and at least [`COMPARISON_MIN`];
/// the lower panels take at most 35% of what is left.
pub fn lower_budget(avail: f32, window_h: f32) -> f32 {
    (avail - (window_h * 0.5).max(COMPARISON_MIN))
        .min(avail * 0.35)
        .max(0.0)
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

/// The lower panels' heights: `Some(max)` open, `None` folded to the header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowerPlan {
    pub raw: Option<f32>,
    pub timeline: Option<f32>,
}

/// Share `budget` between the panels that want to be open (`Some(minimum)`), each folded one
/// costing a header: both if both fit (60/40, each at least its minimum), else the inspector, else
/// the timeline, else none. A panel that is not shown at all is `None` and costs nothing.
pub fn plan(
    budget: f32,
    header: f32,
    raw: Option<f32>,
    timeline: Option<f32>,
    raw_shown: bool,
    timeline_shown: bool,
) -> LowerPlan {
    let folded = |shown: bool| if shown { header } else { 0.0 };
    match (raw, timeline) {
        (Some(rm), Some(tm)) if budget >= rm + tm => {
            let r = (budget * 0.6).max(rm).min(budget - tm);
            LowerPlan {
                raw: Some(r),
                timeline: Some(budget - r),
            }
        }
        (Some(rm), _) if budget - folded(timeline_shown) >= rm => LowerPlan {
            raw: Some(budget - folded(timeline_shown)),
            timeline: None,
        },
        (_, Some(tm)) if budget - folded(raw_shown) >= tm => LowerPlan {
            raw: None,
            timeline: Some(budget - folded(raw_shown)),
        },
        _ => LowerPlan {
            raw: None,
            timeline: None,
        },
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
    let row = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
    let header_h = row + 8.0;
    let window_h = ui.ctx().content_rect().height();
    let budget = lower_budget(ui.available_height(), window_h);
    // The inspector: header, filter bar and two rows; the timeline: header, axis and two lanes.
    let raw_min = header_h + 3.0 * row + 8.0;
    let tl_min = header_h + 3.0 * 18.0 + 8.0;
    let want = |shown: bool, folded: bool, min: f32| (shown && !folded).then_some(min);
    let p = plan(
        budget,
        header_h,
        want(choices.show_raw, *choices.lower_folded, raw_min),
        want(choices.show_timeline, *choices.timeline_folded, tl_min),
        choices.show_raw,
        choices.show_timeline,
    );
    if choices.show_raw {
        let room = p.raw.is_some() || *choices.lower_folded;
        let panel = egui::Panel::bottom("raw").show_separator_line(true);
        let panel = match p.raw {
            Some(max) => panel
                .resizable(true)
                .default_size(200.0_f32.min(max))
                .min_size(raw_min.min(max))
                .max_size(max),
            None => panel.resizable(false).exact_size(header_h),
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
            if p.raw.is_none() {
                return;
            }
            match *choices.view {
                LowerView::Events => event_inspector::inspector_ui(ui, a, v, queue),
                LowerView::Bytes => raw_view::raw_ui(ui, a, d, v, queue),
            }
        });
    }
    if choices.show_timeline {
        let room = p.timeline.is_some() || *choices.timeline_folded;
        let panel = egui::Panel::bottom("timeline").show_separator_line(true);
        let panel = match p.timeline {
            Some(max) => panel
                .resizable(true)
                .default_size(120.0_f32.min(max))
                .min_size(tl_min.min(max))
                .max_size(max),
            None => panel.resizable(false).exact_size(header_h),
        };
        panel.show(ui, |ui| {
            if p.timeline.is_none() {
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
        // 1024×700: ~530 px below the header; the comparison keeps 390.
        assert_eq!(lower_budget(530.0, 700.0), 140.0);
        // A taller window: 35% of what is left.
        assert_eq!(lower_budget(700.0, 900.0), 245.0);
        // A tall window: 35% of what is left at most.
        assert_eq!(lower_budget(1000.0, 1100.0), 350.0);
        // No room at all.
        assert_eq!(lower_budget(300.0, 700.0), 0.0);
    }

    #[test]
    fn the_inspector_keeps_its_room_before_the_timeline() {
        let both = plan(500.0, 30.0, Some(130.0), Some(90.0), true, true);
        assert_eq!(
            both,
            LowerPlan {
                raw: Some(300.0),
                timeline: Some(200.0)
            }
        );
        // Not room for both: the inspector opens, the timeline folds to its header.
        let one = plan(180.0, 30.0, Some(130.0), Some(90.0), true, true);
        assert_eq!(
            one,
            LowerPlan {
                raw: Some(150.0),
                timeline: None
            }
        );
        // The inspector folded by the user: the timeline gets the room.
        let tl = plan(180.0, 30.0, None, Some(90.0), true, true);
        assert_eq!(
            tl,
            LowerPlan {
                raw: None,
                timeline: Some(150.0)
            }
        );
        assert_eq!(
            plan(50.0, 30.0, Some(130.0), Some(90.0), true, true),
            LowerPlan {
                raw: None,
                timeline: None
            }
        );
    }
}
