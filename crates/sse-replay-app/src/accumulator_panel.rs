//! The right half of the comparison: the seed's accumulator at the cursor. A row per call (key, id,
//! name, characters and bytes so far, the arguments string growing fragment by fragment with the
//! boundaries visible), then at the finish the parsed arguments as a tree and the three
//! checkpoints; quirk badges where they occurred.

use egui::text::LayoutJob;
use egui::{RichText, TextFormat, Ui};

use super::headline::{self, Tone};
use super::json_tree::json_tree_ui;
use super::style;
use super::view::{Action, ActionQueue, CursorTables, ViewState};
use sse_replay_core::accumulate::Parsed;
use sse_replay_core::analysis::{Analysis, Check};
use sse_replay_core::findings::FindingKind;
use sse_replay_core::text::plural;

/// With at most this many calls every call gets a full card; beyond, a virtualised table plus one
/// detailed call.
const CARDS_MAX: usize = 12;

/// At most this many fragment segments are laid out for one call (the rest is elided).
const SEGMENTS_MAX: usize = 400;

/// The accumulator panel. `arriving`: the stream is still coming in (a live recording), so its
/// last chunk is not its end.
pub fn accumulator_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    tables: &CursorTables,
    view: &mut ViewState,
    queue: &mut ActionQueue,
    arriving: bool,
) {
    ui.heading("Accumulator (correct)");
    if analysis.complete {
        // Not a stream: the calls were read straight from one JSON document.
        let text = sse_replay_core::complete::summary(tables.client_calls.len());
        ui.label(RichText::new(text).strong().color(style::ok_color(ui)));
    } else {
        ui.label(RichText::new("A table keyed by the call's index: id and name set when present, arguments appended, parsed once at the finish.").italics());
    }
    let cursor = view.cursor;
    let ended = headline::ended_at(analysis, cursor, arriving);
    ui.horizontal_wrapped(|ui| {
        let h = headline::headline(analysis, tables, cursor, arriving);
        let color = match h.tone {
            Tone::Neutral => ui.visuals().text_color(),
            Tone::Ok => style::ok_color(ui),
            Tone::Warn => style::warn_color(ui),
            Tone::Error => style::err_color(ui),
        };
        let r = ui.label(RichText::new(h.text).strong().size(16.0).color(color));
        if let Some(hover) = h.hover {
            r.on_hover_text(style::visible(&hover, 600));
        }
        // Only what has happened by the cursor; how the stream ended only once it has.
        for &fi in &tables.stream_findings {
            if let Some(f) = analysis.findings.get(fi)
                && headline::shown(f, cursor, ended)
            {
                let r = style::badge(ui, f);
                if r.clicked()
                    && let Some(c) = f.first.chunk
                {
                    queue.push(Action::Seek(c));
                }
            }
        }
    });
    ui.separator();
    // Only the calls that have begun by the cursor: a call still to come has not happened (and
    // a stream still arriving cannot know of it).
    let begun =
        |ci: usize| analysis.call_state_at(ci, cursor).started || (analysis.complete && ended);
    let shown: Vec<usize> = (0..analysis.calls.len()).filter(|&ci| begun(ci)).collect();
    if shown.is_empty() {
        ui.label(if ended {
            "No tool calls in this stream."
        } else {
            "No tool calls so far."
        });
        return;
    }
    if analysis.calls.len() <= CARDS_MAX {
        egui::ScrollArea::vertical()
            .id_salt("acc-cards")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                for &ci in tables.client_calls.iter().filter(|&&ci| begun(ci)) {
                    call_card(ui, analysis, tables, view, queue, ci, ended);
                    ui.add_space(6.0);
                }
                server_tools_ui(ui, analysis, tables, view, queue, ended);
            });
        return;
    }
    // Many calls: a virtualised table, then the selected (or current) call in detail.
    let current_call = view
        .current_fragment(analysis)
        .and_then(|f| analysis.fragments.get(f as usize))
        .map(|f| f.call as usize);
    let rows = shown;
    let shown = view
        .selected_call
        .filter(|c| rows.contains(c))
        .or(current_call)
        .unwrap_or(rows[0]);
    let row_h = ui.spacing().interact_size.y;
    let table_h = (ui.available_height() * 0.4).max(row_h * 4.0);
    egui::ScrollArea::vertical()
        .id_salt("acc-table")
        .max_height(table_h)
        .auto_shrink([false, false])
        .show_rows(ui, row_h, rows.len(), |ui, range| {
            // Fixed-height rows: never wrap (a wrapped row would overlap the next).
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            for &ci in &rows[range] {
                let c = &analysis.calls[ci];
                let st = analysis.call_state_at(ci, cursor);
                // The call's total only once the stream has ended: before, only what arrived.
                let frags = if ended {
                    format!("{:>4}/{:<4}", st.fragments.len(), c.fragments.len())
                } else {
                    format!("{:>9}", st.fragments.len())
                };
                let text = format!(
                    "{:>5}  {:<14} {:<18} {frags} frags  {}",
                    ci,
                    c.key.to_string(),
                    style::visible(&c.name, 18),
                    style::visible(st.arguments, 60)
                );
                // Server tools stay in stream order here, marked so they read apart.
                let text = if c.is_client_call() {
                    text
                } else {
                    format!("{text}  [server tool, not for the client]")
                };
                let r = ui.selectable_label(ci == shown, RichText::new(text).monospace());
                if r.clicked() {
                    view.selected_call = Some(ci);
                }
            }
        });
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("Call {shown} in detail")).strong());
        if view.selected_call.is_some() && ui.button("Follow the cursor").clicked() {
            view.selected_call = None;
        }
    });
    egui::ScrollArea::vertical()
        .id_salt("acc-detail")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            call_card(ui, analysis, tables, view, queue, shown, ended);
        });
}

/// The provider's server tools, apart from the client's calls: a labelled group below them.
fn server_tools_ui(
    ui: &mut Ui,
    a: &Analysis,
    d: &CursorTables,
    v: &mut ViewState,
    queue: &mut ActionQueue,
    ended: bool,
) {
    // The ones that have begun by the cursor, as for the client's calls.
    let begun: Vec<usize> = d
        .server_tools
        .iter()
        .copied()
        .filter(|&ci| a.call_state_at(ci, v.cursor).started || (a.complete && ended))
        .collect();
    if begun.is_empty() {
        return;
    }
    ui.separator();
    ui.label(RichText::new(format!("Server tools ({})", begun.len())).strong())
        .on_hover_text(sse_replay_core::findings::FindingKind::ServerTool.explanation());
    ui.weak("Run by the provider, not calls for the client; left out of exports unless asked for.");
    for ci in begun {
        if let Some(kind) = a.calls.get(ci).and_then(|c| c.server_tool.as_deref()) {
            ui.weak(style::visible(kind, 60));
        }
        call_card(ui, a, d, v, queue, ci, ended);
        ui.add_space(6.0);
    }
}

fn call_card(
    ui: &mut Ui,
    a: &Analysis,
    d: &CursorTables,
    v: &mut ViewState,
    queue: &mut ActionQueue,
    ci: usize,
    ended: bool,
) {
    let Some(c) = a.calls.get(ci) else { return };
    let mut st = a.call_state_at(ci, v.cursor);
    // "Type it out": this card shows its call as it stood a few fragments in, moving forward at
    // the recorded timing; the verdict below waits until it has caught up with the cursor.
    let mut ended = ended;
    if let Some(t) = v.typing.filter(|t| t.call == ci) {
        let (k, next) = t.shown(a, d, v.speed);
        match next {
            Some(wait) => ui.ctx().request_repaint_after(wait),
            None => queue.push(Action::TypeOut(None)),
        }
        let k = k.min(st.fragments.len());
        let end = st.fragments[..k]
            .last()
            .and_then(|&no| a.fragments.get(no as usize))
            .map_or(0, |f| f.args_range.end as usize);
        st = sse_replay_core::analysis::CallAtCursor {
            fragments: &st.fragments[..k],
            arguments: c.raw_arguments.get(..end).unwrap_or(""),
            started: k > 0,
            finished: false,
        };
        ended = ended && next.is_none();
    }
    // A complete response's calls have no fragments: they are there once the document is.
    let started = st.started || (a.complete && ended);
    let current = v.current_fragment(a);
    // Folded cards are view state (egui's temporary memory: never persisted).
    let fold_id = egui::Id::unique(("call-card-folded", ci));
    let mut folded = ui.data(|d| d.get_temp::<bool>(fold_id)).unwrap_or(false);
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.horizontal_wrapped(|ui| {
            if ui
                .add(
                    egui::Button::new(if folded { "▸" } else { "▾" })
                        .frame(false)
                        .small(),
                )
                .on_hover_text(if folded {
                    "Unfold this call"
                } else {
                    "Fold this call to one line"
                })
                .clicked()
            {
                folded = !folded;
                ui.data_mut(|d| d.insert_temp(fold_id, folded));
            }
            ui.label(RichText::new(c.key.to_string()).strong());
            if a.complete && started {
                ui.label(RichText::new(c.id.as_deref().unwrap_or("(no id)")).monospace());
                ui.label(RichText::new(&c.name).strong().size(15.0));
                ui.weak("read whole from the complete response");
            } else if st.started {
                ui.label(RichText::new(c.id.as_deref().unwrap_or("(no id)")).monospace());
                ui.label(RichText::new(&c.name).strong().size(15.0));
                if let Some(kind) = &c.kind {
                    // Not a plain function call: say which item it is (and that text stays text).
                    let tip = if c.text_input {
                        "A client call that is not a function call; its input is free-form text, taken as a string and never parsed as JSON."
                    } else {
                        "A client call that is not a function call: its arguments are the item's own object (operation, action)."
                    };
                    ui.label(RichText::new(kind).monospace().weak()).on_hover_text(tip);
                }
                let chars = st.arguments.chars().count();
                // The totals only once the stream has ended: before, what has arrived (all a
                // stream still arriving can know).
                if ended {
                    ui.label(format!(
                        "{chars}/{} · {}/{} · {}/{}",
                        plural(c.char_len(), "char"),
                        st.arguments.len(),
                        plural(c.byte_len(), "byte"),
                        st.fragments.len(),
                        plural(c.fragments.len(), "fragment")
                    ));
                } else {
                    ui.label(format!(
                        "{} · {} · {} so far",
                        plural(chars, "char"),
                        plural(st.arguments.len(), "byte"),
                        plural(st.fragments.len(), "fragment")
                    ));
                }
                if !ended {
                    ui.label(RichText::new("in progress").italics())
                        .on_hover_text("Parsed once, when the stream has ended: until then these are the arguments so far, with no verdict.");
                }
            } else if a.complete {
                ui.label(RichText::new("not received yet").weak());
            } else {
                ui.label(RichText::new("not started yet").weak());
            }
            // The folded card's verdict, only once the stream has ended (as unfolded).
            if folded && ended && started {
                let ok = matches!(c.parsed, Parsed::Ok(_));
                style::mark(ui, Some(ok));
            }
        });
        if folded {
            return;
        }
        if st.started {
            arguments_job(ui, a, &st, current);
            super::preview_panel::preview_ui(ui, a, v, queue, ci, &st, ended);
        }
        if ended && started {
            match &c.parsed {
                Parsed::Ok(val) => {
                    ui.label(
                        RichText::new("✓ parsed once at the finish:").color(style::ok_color(ui)),
                    );
                    json_tree_ui(ui, ui.scope_id().with(("call-json", ci)), val);
                }
                Parsed::Err { .. } => {
                    ui.label(
                        RichText::new(format!("✗ the complete arguments: {}", c.parsed))
                            .color(style::err_color(ui)),
                    );
                }
            }
            if let Some(cp) = a.checkpoints.get(ci) {
                checkpoint_row(ui, "① reassembled = original, verbatim", &cp.verbatim);
                checkpoint_row(
                    ui,
                    "② every fragment contiguous in the original",
                    &cp.contiguous,
                );
                checkpoint_row(
                    ui,
                    "③ only the first fragment carries id and name",
                    &cp.first_only,
                );
                if let Some(src) = &cp.original_source {
                    ui.weak(format!("original: {src}"));
                }
            }
        }
        // The preview summary compares with the final arguments: a verdict, once ended.
        let preview = a
            .preview
            .as_ref()
            .and_then(|list| list.get(ci))
            .filter(|p| ended && p.call == c.position && p.contradicted > 0);
        if let Some(p) = preview {
            ui.horizontal_wrapped(|ui| preview_badge(ui, p, queue));
        }
        if let Some(fs) = d.call_findings.get(&(ci as u32)) {
            ui.horizontal_wrapped(|ui| {
                for &fi in fs {
                    let Some(f) = a.findings.get(fi).filter(|f| f.shown_at(v.cursor, ended))
                    else {
                        continue;
                    };
                    if preview.is_some() && f.kind == FindingKind::PreviewContradiction {
                        continue; // shown by the preview badge
                    }
                    let r = style::badge(ui, f);
                    if r.clicked()
                        && let Some(no) = f.first.fragment
                    {
                        queue.push(Action::FocusFragment(no));
                    }
                    if let Some(no) = f.first.fragment {
                        ui.weak(format!("@ fragment {no}"));
                    }
                }
            });
        }
    });
}

/// "preview: N contradictions" (computed in the background, shown once ready), the first
/// contradiction on hover; a click focuses its fragment.
fn preview_badge(ui: &mut Ui, p: &sse_replay_core::analysis::CallPreview, queue: &mut ActionQueue) {
    let color = ui.visuals().hyperlink_color;
    let text = format!(
        "preview: {} {}",
        p.contradicted,
        if p.contradicted == 1 {
            "contradiction"
        } else {
            "contradictions"
        }
    );
    let r = ui.add(
        egui::Button::new(RichText::new(text).small().color(color))
            .stroke(egui::Stroke::new(1.0, color))
            .corner_radius(8.0)
            .small(),
    );
    let first = p.first_contradiction.clone();
    let r = r.on_hover_ui(move |ui| {
        ui.set_max_width(420.0);
        ui.label(FindingKind::PreviewContradiction.explanation());
        if let Some(f) = &first {
            ui.separator();
            let at = if f.path.is_empty() { "/" } else { &f.path };
            ui.label(
                RichText::new(format!(
                    "first after fragment {}: {at} shown as {}, final {}",
                    f.fragment, f.shown, f.final_value
                ))
                .weak(),
            );
        }
    });
    if r.clicked()
        && let Some(f) = &p.first_contradiction
    {
        // Back to where the preview was contradicted, with hindsight on to mark it there.
        queue.push(Action::FocusFragment(f.fragment));
        queue.push(Action::SetHindsight(true));
    }
}

fn checkpoint_row(ui: &mut Ui, name: &str, check: &Check) {
    ui.horizontal_wrapped(|ui| {
        style::mark(ui, check.passed());
        ui.label(RichText::new(name).strong());
        ui.label(RichText::new(check.detail()).weak());
    });
}

/// The arguments so far, one coloured segment per fragment; the current fragment highlighted.
fn arguments_job(
    ui: &mut Ui,
    a: &Analysis,
    st: &sse_replay_core::analysis::CallAtCursor<'_>,
    current: Option<u32>,
) {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let fg = ui.visuals().text_color();
    let mut job = LayoutJob::default();
    let skip = st.fragments.len().saturating_sub(SEGMENTS_MAX);
    if skip > 0 {
        job.append(
            &format!("… {} … ", plural(skip, "fragment")),
            0.0,
            TextFormat {
                font_id: font.clone(),
                color: ui.visuals().weak_text_color(),
                ..Default::default()
            },
        );
    }
    for &no in &st.fragments[skip..] {
        let Some(f) = a.fragments.get(no as usize) else {
            continue;
        };
        let text = a.fragment_text(f);
        if text.is_empty() {
            continue;
        }
        let is_current = Some(no) == current;
        let format = TextFormat {
            font_id: font.clone(),
            color: fg,
            background: style::fragment_bg(ui, no, is_current),
            ..Default::default()
        };
        job.append(text, 0.0, format);
    }
    job.wrap.max_width = ui.available_width();
    ui.label(job).on_hover_text("Each coloured segment is one fragment; the highlighted one is the fragment under the cursor.");
}
