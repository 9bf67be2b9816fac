//! The Replay tab's regions: the header on top (as tall as its content: a title may wrap), one
//! lower area at the bottom shared by the timeline, the event list and the bytes (tabs, resizable,
//! foldable to its tab row), and the naive/correct comparison — the product — in between.
//!
//! Every region draws inside its own rect ([`fixed`]): content taller than its region is clipped
//! (its lists scroll) and never pushes a panel, or its resize handle, over the next one. The lower
//! area opens on any click on its tabs; by default it leaves the comparison half of the window
//! (and at least [`COMPARISON_MIN`]), and the user may drag it up to [`COMPARISON_DRAG_MIN`].

use egui::{RichText, Ui};

use super::event_inspector;
use super::view::{ActionQueue, CursorTables, ViewState};
use super::{raw_view, timeline};
use sse_replay_core::analysis::Analysis;

/// What the lower area shows (a persisted choice).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LowerView {
    /// A lane per call: when each fragment arrived.
    Timeline,
    /// The event list and the selected event's detail.
    #[default]
    Events,
    /// The body as received, one row per network read.
    Bytes,
}

impl LowerView {
    /// Every view, in tab order.
    pub const ALL: [LowerView; 3] = [LowerView::Timeline, LowerView::Events, LowerView::Bytes];

    /// The tab's label.
    pub fn label(self) -> &'static str {
        match self {
            LowerView::Timeline => "Timeline",
            LowerView::Events => "Event list",
            LowerView::Bytes => "Bytes as received",
        }
    }

    fn tip(self) -> &'static str {
        match self {
            LowerView::Timeline => {
                "A lane per call: when each fragment arrived; click one to move the cursor there"
            }
            LowerView::Events => {
                "One row per event: time, type, id, retry, size, call, arguments piece; a filter; the selected event's JSON"
            }
            LowerView::Bytes => {
                "The body as received, one row per network read, hex where a read splits a character"
            }
        }
    }
}

/// The lower area's choices (a part of the persisted settings).
pub struct LowerChoices<'a> {
    pub view: &'a mut LowerView,
    pub folded: &'a mut bool,
    /// "Bytes as received" wraps long reads.
    pub wrap_bytes: &'a mut bool,
}

/// By default the comparison keeps at least this much height (a call card down to its three
/// checkpoints) and half the window.
pub const COMPARISON_MIN: f32 = 390.0;

/// Dragging the lower area up leaves the comparison at least this much (its headings, the
/// headline and a few rows: the rest scrolls).
pub const COMPARISON_DRAG_MIN: f32 = 200.0;

/// The lower area's default height out of `avail` (what is left below the header) in a window
/// `window_h` tall: the comparison keeps half the window and at least [`COMPARISON_MIN`]; the
/// lower area takes at most 35% of what is left.
pub fn lower_budget(avail: f32, window_h: f32) -> f32 {
    (avail - (window_h * 0.5).max(COMPARISON_MIN))
        .min(avail * 0.35)
        .max(0.0)
}

/// The open lower area's size range and default, for `avail` below the header in a window
/// `window_h` tall, with `min` its own least useful height (tab row and a few rows). It always
/// gets `min` (so a click always opens it), however little that leaves the comparison.
pub fn lower_sizes(avail: f32, window_h: f32, min: f32) -> (f32, f32, f32) {
    let max = (avail - COMPARISON_DRAG_MIN).max(min);
    let default = lower_budget(avail, window_h).clamp(min, max);
    (min, default, max)
}

/// Draw `add` inside the rest of `ui`'s room and claim exactly that room: content taller or wider
/// than the region is clipped, never grows the region (or its panel and resize handle) past it.
pub fn fixed<R>(ui: &mut Ui, add: impl FnOnce(&mut Ui) -> R) -> R {
    let rect = ui.available_rect_before_wrap();
    let mut child = ui.new_child(
        egui::UiBuilder::new()
            .max_rect(rect)
            .layout(egui::Layout::top_down(egui::Align::Min)),
    );
    child.shrink_clip_rect(rect);
    // Tell assistive tools (and the layout tests) where the region is and that it clips.
    ui.ctx().accesskit_node_builder(child.unique_id(), |node| {
        node.set_bounds(egui::accesskit::Rect {
            x0: rect.min.x.into(),
            y0: rect.min.y.into(),
            x1: rect.max.x.into(),
            y1: rect.max.y.into(),
        });
        node.set_clips_children();
    });
    let r = add(&mut child);
    ui.advance_cursor_after_rect(rect);
    r
}

/// The tab row: a fold toggle, then one tab per view (a click on a tab opens the area on it).
fn tabs_ui(ui: &mut Ui, choices: &mut LowerChoices<'_>) {
    ui.horizontal(|ui| {
        let (arrow, tip) = if *choices.folded {
            ("▸ Open", "Open this area on the selected view")
        } else {
            (
                "▾ Fold",
                "Fold this area to its tabs (the comparison gets the room)",
            )
        };
        if ui
            .add(egui::Button::new(RichText::new(arrow).strong()).frame(false))
            .on_hover_text(tip)
            .clicked()
        {
            *choices.folded = !*choices.folded;
        }
        ui.separator();
        for view in LowerView::ALL {
            let selected = *choices.view == view && !*choices.folded;
            if ui
                .selectable_label(selected, view.label())
                .on_hover_text(view.tip())
                .clicked()
            {
                *choices.view = view;
                *choices.folded = false;
            }
        }
    });
}

/// Draw the lower area (a bottom panel: call before the comparison's panels).
pub fn lower_panel(
    ui: &mut Ui,
    mut choices: LowerChoices<'_>,
    a: &Analysis,
    d: &CursorTables,
    v: &mut ViewState,
    queue: &mut ActionQueue,
) {
    let row = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
    let margin = 2.0 * ui.spacing().window_margin.topf().max(6.0);
    let tabs_h = row + margin;
    let window_h = ui.ctx().content_rect().height();
    let avail = ui.available_height();
    if *choices.folded {
        egui::Panel::bottom("lower-folded")
            .resizable(false)
            .exact_size(tabs_h.min(avail))
            .show(ui, |ui| fixed(ui, |ui| tabs_ui(ui, &mut choices)));
        return;
    }
    // The tab row and three rows of content.
    let (min, default, max) = lower_sizes(avail, window_h, tabs_h + 3.0 * row + 8.0);
    egui::Panel::bottom("lower")
        .resizable(true)
        .show_separator_line(true)
        .default_size(default)
        .min_size(min.min(avail))
        .max_size(max.min(avail))
        .show(ui, |ui| {
            fixed(ui, |ui| {
                tabs_ui(ui, &mut choices);
                if *choices.folded {
                    return;
                }
                match *choices.view {
                    LowerView::Timeline => timeline::timeline_ui(ui, a, d, v, queue),
                    LowerView::Events => event_inspector::inspector_ui(ui, a, v, queue),
                    LowerView::Bytes => {
                        raw_view::raw_ui(ui, a, d, v, queue, choices.wrap_bytes);
                    }
                }
            })
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_comparison_keeps_half_the_window_by_default() {
        // 1024×700: ~530 px below the header; the comparison keeps 390.
        assert_eq!(lower_budget(530.0, 700.0), 140.0);
        // A taller window: 35% of what is left.
        assert_eq!(lower_budget(700.0, 900.0), 245.0);
        assert_eq!(lower_budget(1000.0, 1100.0), 350.0);
        // No room at all.
        assert_eq!(lower_budget(300.0, 700.0), 0.0);
    }

    #[test]
    fn the_lower_area_always_gets_its_minimum_and_may_be_dragged_up() {
        // A two-line title at 1024×700: little room, but it opens at its minimum.
        assert_eq!(lower_sizes(420.0, 700.0, 110.0), (110.0, 110.0, 220.0));
        // 1600×1000: half the window by default, dragged up to leave the comparison 200.
        let (min, default, max) = lower_sizes(860.0, 1000.0, 110.0);
        assert_eq!((min, default, max), (110.0, 301.0, 660.0));
        // No room at all: still its minimum.
        assert_eq!(lower_sizes(100.0, 700.0, 110.0), (110.0, 110.0, 110.0));
    }
}
