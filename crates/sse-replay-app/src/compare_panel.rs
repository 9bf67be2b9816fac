//! "Compare two": two recordings of its own (A and B; the Replay tab's recording is never
//! replaced), diffed by the core ([`sse_replay_core::compare::compare_analyses`]): the stream-level facts side
//! by side, the findings only one side has, then the aligned calls with their arguments diffed as
//! JSON — changed values highlighted inline ([`sse_replay_core::json_diff`]). Both columns share the window's
//! width.

use egui::{Color32, RichText, Ui};

use super::compare_docs::CompareDocs;
use super::loader::Loaded;
use super::style;
use super::view::{Action, ActionQueue, OpenTarget};
use sse_replay_core::accumulate::Call;
use sse_replay_core::compare::{ArgsDiff, Comparison, OneSidedFinding, Row, StreamRowKind};
use sse_replay_core::json_diff::{Mark, Span};

/// At most this many call rows are listed; the rest are counted.
const MAX_ROWS_DRAWN: usize = 20_000;

/// The compare-two panel. `replay_open`: Replay has a recording to use as a side.
pub fn compare_ui(ui: &mut Ui, docs: &mut CompareDocs, replay_open: bool, queue: &mut ActionQueue) {
    // View state taken out while the sides are borrowed; put back at the end.
    let mut only_differing = docs.only_differing;
    let mut heights = std::mem::take(&mut docs.row_heights);
    ui.heading("Compare two recordings");
    ui.columns(2, |cols| {
        side_header(&mut cols[0], docs, OpenTarget::CompareA, replay_open, queue);
        side_header(&mut cols[1], docs, OpenTarget::Second, replay_open, queue);
    });
    let (Some(a), Some(b), Some(cmp)) = (
        docs.side(OpenTarget::CompareA),
        docs.side(OpenTarget::Second),
        docs.comparison(),
    ) else {
        ui.separator();
        ui.label(
            "Open two recordings (or use the one Replay shows) to diff them. Ids are not \
             compared (each provider mints its own); calls are aligned by name and order.",
        );
        return;
    };
    ui.separator();
    let (differing, facts) = (cmp.differing(), cmp.stream_differing());
    let color = if differing == 0 && facts == 0 {
        style::ok_color(ui)
    } else {
        style::err_color(ui)
    };
    ui.label(
        RichText::new(format!(
            "{} call rows · {differing} differ · {facts} stream facts differ",
            cmp.rows.len()
        ))
        .strong()
        .color(color),
    );
    heights.resize(cmp.rows.len(), 0.0);
    egui::ScrollArea::vertical()
        .id_salt("compare-all")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::CollapsingHeader::new("Stream")
                .id_salt("compare-stream")
                .default_open(true)
                .show(ui, |ui| stream_ui(ui, cmp));
            findings_ui(ui, cmp);
            ui.separator();
            ui.horizontal(|ui| {
                ui.label(RichText::new("Calls").strong());
                ui.checkbox(&mut only_differing, "only rows that differ");
            });
            calls_ui(ui, a, b, cmp, only_differing, &mut heights);
        });
    docs.only_differing = only_differing;
    docs.row_heights = heights;
}

fn side_header(
    ui: &mut Ui,
    docs: &CompareDocs,
    side: OpenTarget,
    replay_open: bool,
    queue: &mut ActionQueue,
) {
    let letter = if side == OpenTarget::CompareA {
        "A"
    } else {
        "B"
    };
    let loaded = docs.side(side);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("{letter}:")).strong());
        match loaded {
            Some(l) => {
                ui.label(RichText::new(short(&l.analysis.source.name)).strong())
                    .on_hover_text(&l.analysis.source.name);
            }
            None => {
                ui.weak("(none)");
            }
        }
        if docs.side_loading(side) {
            ui.spinner();
        }
    });
    ui.horizontal_wrapped(|ui| {
        if ui.button(format!("Open {letter}…")).clicked() {
            queue.push(Action::OpenDialog(side));
        }
        if ui
            .add_enabled(replay_open, egui::Button::new("Use Replay's"))
            .on_hover_text(format!("Compare the recording Replay shows, as {letter}"))
            .clicked()
        {
            queue.push(Action::CompareUseReplay(side));
        }
        if ui
            .add_enabled(loaded.is_some(), egui::Button::new("Open in Replay"))
            .on_hover_text(format!("Show {letter} in the Replay tab"))
            .clicked()
        {
            queue.push(Action::CompareSideInReplay(side));
        }
    });
}

/// The last path component (or the whole name).
fn short(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

fn stream_ui(ui: &mut Ui, cmp: &Comparison) {
    egui::Grid::new("compare-stream-grid")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            ui.weak("");
            ui.strong("A");
            ui.strong("B");
            ui.end_row();
            for r in &cmp.stream {
                ui.label(r.label);
                let color = match r.kind {
                    StreamRowKind::Fact if r.differs() => Some(style::err_color(ui)),
                    StreamRowKind::Fact => None,
                    StreamRowKind::Timing => Some(ui.visuals().weak_text_color()),
                };
                for v in [&r.a, &r.b] {
                    let text = RichText::new(v);
                    let resp = ui.label(match color {
                        Some(c) => text.color(c),
                        None => text,
                    });
                    if r.same && r.a != r.b {
                        // Different words for the same thing (a finish reason per dialect).
                        resp.on_hover_text(
                            "The same meaning in another provider's words: not a difference",
                        );
                    }
                }
                ui.end_row();
            }
        });
}

fn findings_ui(ui: &mut Ui, cmp: &Comparison) {
    if cmp.findings_only_a.is_empty() && cmp.findings_only_b.is_empty() {
        ui.label("Findings: the same kinds on both sides");
        return;
    }
    ui.label(RichText::new("Findings on one side only").strong());
    ui.columns(2, |cols| {
        one_sided(&mut cols[0], "A", &cmp.findings_only_a);
        one_sided(&mut cols[1], "B", &cmp.findings_only_b);
    });
}

fn one_sided(ui: &mut Ui, letter: &str, findings: &[OneSidedFinding]) {
    if findings.is_empty() {
        ui.weak(format!("only in {letter}: none"));
    }
    for f in findings {
        let times = if f.count > 1 {
            format!(" ×{}", f.count)
        } else {
            String::new()
        };
        ui.label(
            RichText::new(format!("only in {letter}: {}{times}", f.kind))
                .color(style::warn_color(ui)),
        )
        .on_hover_text(&f.message);
    }
}

fn status(row: &Row) -> (String, bool) {
    let (text, bad) = match (&row.args, row.a, row.b) {
        (_, Some(_), None) => ("only in A".to_owned(), true),
        (_, None, Some(_)) => ("only in B".to_owned(), true),
        (Some(ArgsDiff::Identical), ..) => ("identical".to_owned(), row.name_differs),
        (Some(ArgsDiff::SameValue), ..) => {
            ("same value, different text".to_owned(), row.name_differs)
        }
        (Some(ArgsDiff::Different { paths }), ..) => {
            (format!("arguments differ at {}", paths.join(", ")), true)
        }
        (Some(ArgsDiff::Unparsable), ..) => (
            "arguments differ (one side does not parse)".to_owned(),
            true,
        ),
        _ => (String::new(), true),
    };
    if row.name_differs {
        (format!("name differs; {text}"), true)
    } else {
        (text, bad)
    }
}

/// The call rows. Rows off screen are not laid out: a space of their last height (or an estimate)
/// stands in, so a frame costs the rows on screen, not all of them.
fn calls_ui(
    ui: &mut Ui,
    a: &Loaded,
    b: &Loaded,
    cmp: &Comparison,
    only_differing: bool,
    heights: &mut [f32],
) {
    let (ca, cb) = (&a.analysis.calls, &b.analysis.calls);
    let estimate = ui.text_style_height(&egui::TextStyle::Body) * 3.0 + 12.0;
    let clip = ui.clip_rect();
    let mut drawn = 0usize;
    let mut hidden = 0usize;
    for (n, row) in cmp.rows.iter().enumerate() {
        if only_differing && row.same() {
            continue;
        }
        if drawn >= MAX_ROWS_DRAWN {
            hidden += 1;
            continue;
        }
        drawn += 1;
        let top = ui.cursor().top();
        let known = heights.get(n).copied().unwrap_or(0.0);
        let h = if known > 0.0 { known } else { estimate };
        if top > clip.bottom() || top + h < clip.top() {
            ui.add_space(h);
            continue;
        }
        draw_row(ui, n, row, ca, cb);
        if let Some(slot) = heights.get_mut(n) {
            *slot = ui.cursor().top() - top;
        }
    }
    if hidden > 0 {
        ui.weak(format!(
            "{hidden} more rows not drawn (tick \"only rows that differ\" to see the differences first)"
        ));
    }
}

fn draw_row(ui: &mut Ui, n: usize, row: &Row, ca: &[Call], cb: &[Call]) {
    {
        let (text, bad) = status(row);
        let color = if bad {
            style::err_color(ui)
        } else {
            style::ok_color(ui)
        };
        ui.label(
            RichText::new(format!("#{} {} {text}", n + 1, if bad { "✗" } else { "✓" }))
                .color(color),
        );
        ui.columns(2, |cols| {
            let inline = row.inline.as_ref();
            call_cell(
                &mut cols[0],
                "A",
                row.a.and_then(|i| ca.get(i)),
                row.name_differs,
                inline.map(|d| d.a.as_slice()),
            );
            call_cell(
                &mut cols[1],
                "B",
                row.b.and_then(|i| cb.get(i)),
                row.name_differs,
                inline.map(|d| d.b.as_slice()),
            );
        });
        ui.separator();
    }
}

fn call_cell(
    ui: &mut Ui,
    letter: &str,
    c: Option<&Call>,
    name_differs: bool,
    spans: Option<&[Span]>,
) {
    let Some(c) = c else {
        ui.label(RichText::new("— missing —").color(style::err_color(ui)));
        return;
    };
    ui.horizontal_wrapped(|ui| {
        let name = RichText::new(&c.name).strong();
        ui.label(if name_differs {
            name.color(style::err_color(ui))
        } else {
            name
        });
        ui.weak(c.id.as_deref().unwrap_or("(no id)"));
    });
    match spans {
        Some(spans) => spans_ui(ui, letter, spans),
        None => {
            ui.add(
                egui::Label::new(RichText::new(style::visible(&c.raw_arguments, 400)).monospace())
                    .wrap(),
            );
        }
    }
}

/// One side's arguments, changed parts highlighted. A highlighted part also says what it is to
/// assistive technology ("changed in B: 4"), not only by its colour.
fn spans_ui(ui: &mut Ui, letter: &str, spans: &[Span]) {
    let dark = ui.visuals().dark_mode;
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 0.0;
        for s in spans {
            let text = RichText::new(&s.text).monospace();
            let (text, what) = match s.mark {
                Mark::Same => (text, None),
                Mark::Changed => (
                    text.background_color(highlight(dark, false)).strong(),
                    Some("changed"),
                ),
                Mark::Only => (
                    text.background_color(highlight(dark, true)).strong(),
                    Some("only"),
                ),
            };
            let resp = ui.add(egui::Label::new(text).wrap());
            if let Some(what) = what {
                let label = format!("{what} in {letter}: {}", s.text);
                resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &label));
            }
        }
    });
}

/// Background of a changed (amber) or one-sided (red) part.
fn highlight(dark: bool, only: bool) -> Color32 {
    match (dark, only) {
        (true, false) => Color32::from_rgb(110, 85, 10),
        (true, true) => Color32::from_rgb(120, 30, 30),
        (false, false) => Color32::from_rgb(255, 225, 140),
        (false, true) => Color32::from_rgb(255, 190, 190),
    }
}
