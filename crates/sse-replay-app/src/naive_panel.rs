//! The left half of the comparison: one naive strategy (picked from all of the core's), its
//! per-fragment attempts up to the cursor (fragment text, then serde_json's error in red or the
//! parsed value), the calls it has emitted by the cursor, and at the end whether they agree with
//! the correct calls.

use egui::{RichText, Ui};

use super::loader::LaterState;
use super::style;
use super::view::{Action, ActionQueue, CursorTables, ViewState};
use sse_replay_core::accumulate::Parsed;
use sse_replay_core::analysis::Analysis;
use sse_replay_core::naive::{NaiveCall, Strategy};

/// While the strategies are computed in the background: the picker (each strategy
/// "computing…") and the chosen one's name and description, no result.
fn computing_ui(ui: &mut Ui, view: &ViewState, queue: &mut ActionQueue, progress: f32) {
    let computing = format!("computing… {:.0}%", progress * 100.0);
    ui.horizontal(|ui| {
        ui.heading("Naive");
        egui::ComboBox::from_label("strategy")
            .selected_text(view.strategy.name())
            .width(170.0)
            .show_ui(ui, |ui| {
                for st in Strategy::ALL {
                    let text = format!("{} (computing…)", st.name());
                    if ui.selectable_label(st == view.strategy, text).clicked() {
                        queue.push(Action::SelectStrategy(st));
                    }
                }
            });
    });
    ui.label(RichText::new(view.strategy.description()).italics());
    ui.separator();
    ui.label(
        RichText::new(format!("{}: {computing}", view.strategy.name()))
            .strong()
            .size(16.0),
    );
    ui.weak("The recording and the correct calls are shown; what this strategy makes of them is being computed in the background.");
}

/// The naive strategy panel.
pub fn naive_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    later: &LaterState,
    tables: &CursorTables,
    view: &mut ViewState,
    queue: &mut ActionQueue,
    arriving: bool,
) {
    if analysis.complete {
        ui.heading("Naive");
        ui.label("Not a stream: one complete response. There are no fragments, so the naive strategies have nothing to get wrong.");
        return;
    }
    let Some(si) = analysis
        .strategies
        .iter()
        .position(|s| s.report.strategy == view.strategy)
    else {
        match later {
            LaterState::Pending(p) => computing_ui(ui, view, queue, p.progress()),
            LaterState::Failed(why) => {
                ui.heading("Naive");
                ui.colored_label(style::err_color(ui), format!("Not computed: {why}"));
            }
            LaterState::Ready => {
                ui.label("This strategy was not run on this recording.");
            }
        }
        return;
    };
    let s = &analysis.strategies[si];
    let r = &s.report;
    let cursor = view.cursor;
    // The strategy's verdict only once the stream has ended: while a recording is still
    // arriving, its latest read is not the end (the accumulator's rule, `headline::ended_at`).
    let finished = super::headline::ended_at(analysis, cursor, arriving);
    ui.horizontal(|ui| {
        ui.heading("Naive");
        egui::ComboBox::from_label("strategy")
            .selected_text(r.strategy.name())
            .width(170.0)
            .show_ui(ui, |ui| {
                for st in &analysis.strategies {
                    // Each strategy's mark is a verdict: only once the stream has ended.
                    let text = if finished {
                        let ok = st.agreement.matches_correct;
                        format!(
                            "{} {}",
                            if ok { "✓" } else { "✗" },
                            st.report.strategy.name()
                        )
                    } else {
                        st.report.strategy.name().to_owned()
                    };
                    if ui
                        .selectable_label(st.report.strategy == view.strategy, text)
                        .clicked()
                    {
                        queue.push(Action::SelectStrategy(st.report.strategy));
                    }
                }
            });
    });
    ui.label(RichText::new(r.strategy.description()).italics());
    if let Some(why) = &r.not_applicable {
        ui.colored_label(style::warn_color(ui), format!("Not run: {why}"));
        return;
    }
    ui.separator();
    // The height is shared so that the verdict (once there is one) always has a few lines: the
    // attempts first, the calls produced, then the verdict; each list scrolls within its share.
    let line = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    let verdict_min = if finished { 4.0 * line } else { 0.0 };
    let calls_min = 3.0 * line;

    // Attempts (steps) up to the cursor: for the strategies that attempt a parse per fragment,
    // whether or not one has arrived yet.
    if matches!(r.strategy, Strategy::PerFragment | Strategy::ParseWhenValid) {
        let n_at = r.steps.rows().partition_point(|st| st.chunk <= cursor);
        let parsed = tables
            .parsed_prefix
            .get(si)
            .and_then(|p| p.get(n_at))
            .copied()
            .unwrap_or(0) as usize;
        let one = n_at == 1;
        let what = match (r.strategy == Strategy::PerFragment, one) {
            (true, true) => "fragment parses alone",
            (true, false) => "fragments parse alone",
            (false, true) => "re-parse succeeds",
            (false, false) => "re-parses succeed",
        };
        if n_at == 0 {
            // Nothing attempted yet: neither a success nor a failure.
            let text = if finished {
                "no fragments in this stream"
            } else {
                "no fragment so far"
            };
            ui.label(
                RichText::new(format!("{}: {text}", r.strategy.name()))
                    .strong()
                    .size(16.0)
                    .weak(),
            );
        } else {
            let color = if parsed < n_at {
                style::err_color(ui)
            } else {
                style::ok_color(ui)
            };
            ui.label(
                RichText::new(format!("{}: {parsed} of {n_at} {what}", r.strategy.name()))
                    .strong()
                    .size(16.0)
                    .color(color),
            );
        }
        let room = ui.available_height() - calls_min - verdict_min;
        steps_list(ui, analysis, tables, view, queue, (si, n_at), room);
    } else if r.strategy == Strategy::ConcatAll {
        concat_all_live(ui, analysis, view);
    }

    ui.separator();
    let emitted = calls_emitted(analysis, tables, si, cursor, finished);
    ui.label(
        RichText::new(format!(
            "Calls it has produced by chunk {cursor}: {}",
            emitted.len()
        ))
        .strong(),
    );
    let row_h = ui.text_style_height(&egui::TextStyle::Body) * 2.0 + 4.0;
    let room = (ui.available_height() - verdict_min).max(row_h);
    let max_h = if finished { room * 0.55 } else { room };
    egui::ScrollArea::vertical()
        .id_salt("naive-calls")
        .min_scrolled_height(row_h.min(max_h))
        .max_height(max_h)
        .auto_shrink([false, true])
        .show_rows(ui, row_h, emitted.len(), |ui, range| {
            // Fixed-height rows: never wrap (a wrapped row would overlap the next).
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            for &ci in &emitted[range] {
                naive_call_row(ui, &r.calls[ci as usize]);
            }
        });
    if finished {
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("naive-verdict")
            .min_scrolled_height(line)
            .max_height(ui.available_height())
            .auto_shrink([false, true])
            .show(ui, |ui| {
                if s.agreement.matches_correct && !tables.verdict.ok() {
                    // The accumulator's calls fail too: the stream is what is broken.
                    ui.label(
                        RichText::new("✓ same as the accumulator — the stream itself is broken")
                            .strong()
                            .color(style::warn_color(ui)),
                    )
                    .on_hover_text(tables.verdict.line());
                } else if s.agreement.matches_correct {
                    ui.label(
                        RichText::new("✓ same calls as the accumulator")
                            .strong()
                            .color(style::ok_color(ui)),
                    );
                } else {
                    ui.label(
                        RichText::new("✗ differs from the correct calls:")
                            .strong()
                            .color(style::err_color(ui)),
                    );
                    for diff in s.agreement.differences.iter().take(30) {
                        let text = format!("• {}", style::visible(diff, 400));
                        style::marked_label(ui, &text, style::err_color(ui), false);
                    }
                    if s.agreement.differences.len() > 30 {
                        ui.weak(format!("… {} more", s.agreement.differences.len() - 30));
                    }
                }
                for note in &r.notes {
                    ui.weak(format!("note: {}", style::visible(note, 400)));
                }
            });
    }
}

/// The strategy's calls produced by chunk `cursor`. Before the end (`ended` false) not the ones it
/// only takes as finished because the stream ended: a stream still arriving has not ended, and a
/// cursor before the end has not reached it.
fn calls_emitted(a: &Analysis, d: &CursorTables, si: usize, cursor: u32, ended: bool) -> Vec<u32> {
    let Some(order) = d.call_order.get(si) else {
        return Vec::new();
    };
    let calls = &a.strategies[si].report.calls;
    let n = order.partition_point(|&i| calls.get(i as usize).is_some_and(|c| c.chunk <= cursor));
    order[..n]
        .iter()
        .copied()
        .filter(|&i| ended || calls.get(i as usize).is_some_and(|c| !c.at_end))
        .collect()
}

fn steps_list(
    ui: &mut Ui,
    a: &Analysis,
    d: &CursorTables,
    v: &mut ViewState,
    queue: &mut ActionQueue,
    (si, n_at): (usize, usize),
    room: f32,
) {
    let steps = &a.strategies[si].report.steps;
    let current = v.current_fragment(a);
    let row_h = ui
        .spacing()
        .interact_size
        .y
        .max(ui.text_style_height(&egui::TextStyle::Monospace) + 4.0);
    let row_full = row_h + ui.spacing().item_spacing.y;
    let max_h = (room * 0.6).max(row_full * 2.0);
    // Vertical only: a row is as wide as the panel, and a long error is elided (the full text
    // on hover) rather than running past the edge out of sight.
    let mut area = egui::ScrollArea::vertical()
        .id_salt("naive-steps")
        .min_scrolled_height(row_full * 2.0)
        .max_height(max_h)
        .auto_shrink([false, true]);
    // The cursor's row: the focused fragment's latest attempt, else the latest attempt.
    let row = current
        .and_then(|f| steps.rows()[..n_at].iter().rposition(|st| st.fragment == f))
        .unwrap_or(n_at.saturating_sub(1));
    let gap = ui.spacing().item_spacing.y;
    if let Some(offset) = v.steps_scroll.target(v.cursor, row, n_at, row_full, gap) {
        area = area.vertical_scroll_offset(offset);
    }
    let out = area.show_rows(ui, row_h, n_at, |ui, range| {
        // Each visible attempt is built from its compact row (its error re-derived) as it is drawn.
        for st in range.filter_map(|i| steps.get(i)) {
            let is_current = Some(st.fragment) == current;
            ui.horizontal(|ui| {
                ui.set_min_height(row_h);
                let label = RichText::new(format!("#{:<3}", st.fragment)).monospace();
                let label = if is_current {
                    label.background_color(style::fragment_bg(ui, 0, true))
                } else {
                    label.weak()
                };
                if ui
                    .add(egui::Button::new(label).frame(false))
                    .on_hover_text("Move the cursor to this fragment")
                    .clicked()
                {
                    queue.push(Action::FocusFragment(st.fragment));
                }
                if let Some(c) = st.call {
                    ui.label(RichText::new(format!("call {c}")).small().weak());
                }
                let text = format!("{:?}", style::visible(&st.text, 48));
                style::marked_label(ui, &text, ui.visuals().text_color(), true);
                ui.label("→");
                // Badges before the outcome, so an elided error never hides them.
                if let Some(fs) = d.fragment_findings.get(&st.fragment) {
                    for &fi in fs {
                        if let Some(f) = a.findings.get(fi) {
                            style::badge(ui, f);
                        }
                    }
                }
                match &st.outcome {
                    Parsed::Err { error, .. } => {
                        let text = RichText::new(format!("✗ {error}")).color(style::err_color(ui));
                        ui.add(egui::Label::new(text).truncate());
                    }
                    Parsed::Ok(val) => {
                        let text = format!("✓ {}", style::visible(&val.to_string(), 60));
                        style::marked_label(ui, &text, style::ok_color(ui), false);
                    }
                }
            });
        }
    });
    v.steps_scroll.remember(&out);
    if v.steps_scroll.pending() {
        ui.ctx().request_repaint();
    }
}

/// concat-all at the cursor: every fragment so far, of every call, joined.
fn concat_all_live(ui: &mut Ui, a: &Analysis, v: &ViewState) {
    let n = a.fragments_at(v.cursor);
    let mut joined = String::new();
    for f in a.fragments.iter().take(n.min(400)) {
        joined.push_str(a.fragment_text(f));
    }
    if n > 400 {
        joined.push('…');
    }
    let n_text = sse_replay_core::text::plural(n, "fragment");
    ui.label(RichText::new(format!("Joined so far ({n_text}, all calls):")).strong());
    egui::ScrollArea::vertical()
        .id_salt("concat-all")
        .max_height(120.0)
        .show(ui, |ui| {
            ui.add(
                egui::Label::new(RichText::new(style::visible(&joined, 4000)).monospace()).wrap(),
            );
        });
    if !joined.is_empty() {
        match serde_json::from_str::<serde_json::Value>(&joined) {
            Ok(_) => ui.colored_label(style::ok_color(ui), "✓ parses"),
            Err(e) => ui.colored_label(style::err_color(ui), format!("✗ {e}")),
        };
    }
}

fn naive_call_row(ui: &mut Ui, c: &NaiveCall) {
    ui.vertical(|ui| {
        ui.horizontal(|ui| {
            ui.label(RichText::new(&c.label).weak());
            if !c.id.is_empty() {
                ui.label(RichText::new(style::visible(&c.id, 40)).monospace());
            }
            if !c.name.is_empty() {
                ui.label(RichText::new(style::visible(&c.name, 60)).strong());
            }
            let args = style::visible(&c.raw_arguments, 80);
            style::marked_label(ui, &args, ui.visuals().text_color(), true);
        });
        match &c.parsed {
            Parsed::Err { error, .. } => {
                ui.label(RichText::new(format!("✗ {error}")).color(style::err_color(ui)))
            }
            Parsed::Ok(val) => {
                let text = format!("✓ {}", style::visible(&val.to_string(), 100));
                style::marked_label(ui, &text, style::ok_color(ui), false)
            }
        };
    });
}
