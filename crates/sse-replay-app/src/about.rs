//! The help window: the fragment problem explained on the seed example, and the way to the keys
//! (Help → Keyboard shortcuts, [`super::shortcuts`]).

use egui::{RichText, Ui};

use super::view::{Action, ActionQueue};

/// The help text body.
pub fn about_ui(ui: &mut Ui, queue: &mut ActionQueue) {
    ui.heading("Why streamed tool-call arguments break");
    ui.label("When a model streams a tool call, its arguments arrive as many small JSON fragments spread over Server-Sent Events, cut anywhere — in the middle of a string, even in the middle of a UTF-8 character.");
    ui.add_space(4.0);
    ui.label(RichText::new("The seed example: get_weather with {\"city\":\"深圳\",\"days\":3} arrives in five fragments:").strong());
    for p in [
        r#""{\"cit""#,
        r#""y\":\"深""#,
        r#""圳\",\"d""#,
        r#""ays\":""#,
        r#""3}""#,
    ] {
        ui.label(RichText::new(format!("    {p}")).monospace());
    }
    ui.add_space(4.0);
    ui.label("• Parsing each fragment as it arrives: 0 of 5 parse (\"EOF while parsing a string\", \"expected value\").");
    ui.label("• Joining every fragment of every call: {…}{…} — \"trailing characters\".");
    ui.label("• Correct: a table keyed by the call's index; set id and name only when present; always append the arguments; parse each call once when the stream finishes.");
    ui.add_space(4.0);
    ui.label(RichText::new("Three checkpoints").strong());
    ui.label("① the reassembled string equals the original verbatim; ② every fragment sits contiguously, in order, in the original; ③ only the first fragment carries id and name.");
    ui.add_space(4.0);
    ui.label(RichText::new("Using the app").strong());
    ui.label("Left: a naive strategy (pick any) and what it makes of each fragment. Right: the accumulator as it grows. Below, as tabs: the timeline (click a fragment), the event list and the bytes as received. Badges mark provider quirks; hover one for the explanation.");
    ui.add_space(6.0);
    ui.horizontal(|ui| {
        if ui.button("Open the seed example").clicked() {
            queue.push(Action::OpenSeed);
        }
        // The keys are listed once, from the table the key handling reads.
        if ui.button("Keyboard shortcuts…").clicked() {
            queue.push(Action::ToggleShortcuts);
        }
    });
}
