//! The typewriter preview in a call's card: what a UI that shows arguments while they stream
//! displays at the cursor — jiter's partial-mode value of the arguments so far
//! ([`sse_replay_core::preview`]), as a live JSON tree, with the values the final result contradicts
//! highlighted, and a button that plays the call from its start at the recorded timing.
//!
//! Computed lazily, for the cursor only (one prefix parse, cached per call and fragment count in
//! egui's temporary memory): the app never computes every fragment's preview up front.

use std::sync::Arc;

use egui::{RichText, Ui};

use super::json_tree::json_tree_marked_ui;
use super::style;
use super::view::{Action, ActionQueue, ViewState};
use sse_replay_core::analysis::{Analysis, CallAtCursor};
use sse_replay_core::preview::FragmentPreview;

const CONTRADICTED: &str =
    "The final arguments contradict this value: a typewriter UI showed something that was not so.";

/// The preview section of call `ci`'s card at the cursor.
pub fn preview_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    view: &mut ViewState,
    queue: &mut ActionQueue,
    call_no: usize,
    state: &CallAtCursor<'_>,
    ended: bool,
) {
    let (a, v, ci, st) = (analysis, &mut *view, call_no, state);
    let n = st.fragments.len();
    // Keyed by what the preview depends on (the call's whole text: its prefix and its final
    // value), not only by position, so another document's call never shows a stale preview.
    let text = a.calls.get(ci).map_or("", |c| c.raw_arguments.as_str());
    // DefaultHasher::new() has fixed keys: the same text gives the same key every frame.
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(text, &mut hasher);
    let text_hash = std::hash::Hasher::finish(&hasher);
    let id = egui::Id::unique(("typewriter-preview", ci, n, st.fragments.last(), text_hash));
    let cached = ui.data(|d| d.get_temp::<Arc<Option<FragmentPreview>>>(id));
    let p = cached.unwrap_or_else(|| {
        let p = Arc::new(sse_replay_core::preview::at(a, ci, n));
        ui.data_mut(|d| d.insert_temp(id, Arc::clone(&p)));
        p
    });
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("Typewriter preview").strong())
            .on_hover_text(
                "What a typewriter UI shows now: jiter's partial mode (trailing strings, as openai-python uses) on the arguments so far. A view: the accumulator still parses once at the finish.",
            );
        let typing = v.typing.is_some_and(|t| t.call == ci);
        let (label, tip) = if typing {
            ("⏸ Stop typing", "Show the call as it stands at the cursor again")
        } else {
            (
                "⏵ Type it out",
                "Type this call out again in its card, from its first fragment to the cursor, at the recorded timing (the cursor stays)",
            )
        };
        if ui.button(label).on_hover_text(tip).clicked() {
            queue.push(Action::TypeOut((!typing).then_some(ci)));
        }
        // What the final arguments contradict is known only at the end — or with hindsight.
        let judged = ended || v.hindsight;
        match p.as_ref() {
            Some(p) if judged && !p.contradicted.is_empty() => {
                ui.label(
                    RichText::new(format!(
                        "✗ shows {} value(s) the final arguments contradict",
                        p.contradicted.len()
                    ))
                    .color(style::err_color(ui)),
                )
                .on_hover_text(CONTRADICTED);
            }
            Some(p) => {
                ui.weak(format!("after fragment {}", p.fragment));
            }
            None => {}
        }
    });
    // At the end the last preview is usually the parsed result itself, shown just below (only
    // then: before the end nothing is shown below).
    let judged = ended || v.hindsight;
    let same_as_final = ended
        && matches!(
            (p.as_ref(), a.calls.get(ci).and_then(|c| c.value())),
            (Some(FragmentPreview { value: Some(shown), .. }), Some(fin)) if shown == fin
        );
    match p.as_ref() {
        Some(_) if same_as_final => {
            ui.weak("(now the same as the parsed result below)");
        }
        Some(FragmentPreview {
            value: Some(value),
            contradicted,
            ..
        }) => json_tree_marked_ui(
            ui,
            ui.scope_id().with(("preview-json", ci)),
            value,
            if judged { contradicted } else { &[] },
            CONTRADICTED,
        ),
        Some(_) => {
            ui.weak("(nothing to show yet: the text so far does not start a JSON value)");
        }
        None => {
            ui.weak("(nothing to show yet)");
        }
    }
}
