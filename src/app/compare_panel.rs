//! "Compare two": a second recording beside the first, their calls aligned by the core's
//! [`crate::compare`] and the differences (name, arguments, missing calls) highlighted.

use egui::{RichText, Ui};

use super::loader::Loaded;
use super::style;
use super::view::{Action, ActionQueue, OpenTarget};
use crate::accumulate::Call;
use crate::compare::{ArgsDiff, Comparison};

/// The compare-two panel. `cmp` is computed once when either side changes.
pub fn compare_ui(
    ui: &mut Ui,
    a: Option<&Loaded>,
    b: Option<&Loaded>,
    cmp: Option<&Comparison>,
    queue: &mut ActionQueue,
) {
    ui.horizontal(|ui| {
        ui.heading("Compare two recordings");
        if ui
            .button("Open A…")
            .on_hover_text("The recording the player shows")
            .clicked()
        {
            queue.push(Action::OpenDialog(OpenTarget::Primary));
        }
        if ui
            .button("Open B…")
            .on_hover_text("A second recording, e.g. the same prompt from another provider")
            .clicked()
        {
            queue.push(Action::OpenDialog(OpenTarget::Second));
        }
    });
    ui.horizontal(|ui| {
        ui.label(
            RichText::new(format!(
                "A: {}",
                a.map_or("(none)", |l| l.analysis.source.name.as_str())
            ))
            .strong(),
        );
        ui.separator();
        ui.label(
            RichText::new(format!(
                "B: {}",
                b.map_or("(none — open a second recording)", |l| l
                    .analysis
                    .source
                    .name
                    .as_str())
            ))
            .strong(),
        );
    });
    let (Some(a), Some(b), Some(cmp)) = (a, b, cmp) else {
        ui.label("Open two recordings to align their calls. Ids are not compared (each provider mints its own); calls are aligned by name and order.");
        return;
    };
    let differing = cmp.differing();
    let color = if differing == 0 {
        style::ok_color(ui)
    } else {
        style::err_color(ui)
    };
    ui.label(
        RichText::new(format!("{} rows · {differing} differ", cmp.rows.len()))
            .strong()
            .color(color),
    );
    ui.separator();
    let (ca, cb) = (&a.analysis.calls, &b.analysis.calls);
    let row_h = ui.text_style_height(&egui::TextStyle::Body) * 2.0 + 8.0;
    egui::ScrollArea::vertical()
        .id_salt("compare-rows")
        .auto_shrink([false, false])
        .show_rows(ui, row_h, cmp.rows.len(), |ui, range| {
            // Fixed-height rows: never wrap (a wrapped row would overlap the next).
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            for row in &cmp.rows[range] {
                let (status, bad) = match (&row.args, row.a, row.b) {
                    (_, Some(_), None) => ("only in A".to_owned(), true),
                    (_, None, Some(_)) => ("only in B".to_owned(), true),
                    (Some(ArgsDiff::Identical), ..) if !row.name_differs => {
                        ("identical".to_owned(), false)
                    }
                    (Some(ArgsDiff::SameValue), ..) if !row.name_differs => {
                        ("same value, different text".to_owned(), false)
                    }
                    (Some(ArgsDiff::Different { paths }), ..) => {
                        (format!("arguments differ at {}", paths.join(", ")), true)
                    }
                    (Some(ArgsDiff::Unparsable), ..) => (
                        "arguments differ (one side does not parse)".to_owned(),
                        true,
                    ),
                    _ => ("name differs".to_owned(), true),
                };
                let status = if row.name_differs && !status.starts_with("name") {
                    format!("name differs; {status}")
                } else {
                    status
                };
                ui.columns(3, |cols| {
                    call_cell(
                        &mut cols[0],
                        row.a.and_then(|i| ca.get(i)),
                        row.name_differs,
                    );
                    let c = if bad {
                        style::err_color(&cols[1])
                    } else {
                        style::ok_color(&cols[1])
                    };
                    cols[1].label(
                        RichText::new(format!("{} {status}", if bad { "✗" } else { "✓" })).color(c),
                    );
                    call_cell(
                        &mut cols[2],
                        row.b.and_then(|i| cb.get(i)),
                        row.name_differs,
                    );
                });
                ui.separator();
            }
        });
}

fn call_cell(ui: &mut Ui, c: Option<&Call>, name_differs: bool) {
    match c {
        None => {
            ui.label(RichText::new("— missing —").color(style::err_color(ui)));
        }
        Some(c) => {
            let name = RichText::new(&c.name).strong();
            let name = if name_differs {
                name.color(style::err_color(ui))
            } else {
                name
            };
            ui.horizontal(|ui| {
                ui.label(name);
                ui.weak(c.id.as_deref().unwrap_or("(no id)"));
            });
            ui.label(RichText::new(style::visible(&c.raw_arguments, 90)).monospace());
        }
    }
}
