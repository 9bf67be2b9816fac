//! Every keyboard shortcut the app handles, in one table ([`all`]): the key handling reads it
//! ([`pressed`], called by the app once a frame) and Help → Keyboard shortcuts lists it
//! ([`shortcuts_ui`]), so the list cannot drift from what the keys do.

use egui::{Key, KeyboardShortcut, Modifiers, Ui};

use super::view::{Action, OpenTarget, StepUnit};

/// Where a shortcut applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Anywhere in the app.
    Anywhere,
    /// The Replay tab with a recording open, while no text field has the keyboard.
    Replay,
    /// Replay's event list (the lower area showing "Event list"), while no text field has the
    /// keyboard.
    EventList,
}

impl Scope {
    /// Where it applies, in the list.
    pub fn label(self) -> &'static str {
        match self {
            Scope::Anywhere => "anywhere",
            Scope::Replay => "Replay",
            Scope::EventList => "Replay's event list",
        }
    }
}

/// One shortcut: its keys, where it applies, the action it queues and what it does in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Shortcut {
    pub keys: KeyboardShortcut,
    pub scope: Scope,
    pub action: Action,
    pub what: &'static str,
}

/// The copy shortcut: the platform's copy command (Ctrl+C, ⌘C), which egui delivers as
/// [`egui::Event::Copy`] rather than as a key.
pub const COPY: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::C);

/// Every shortcut, in the order the list shows them.
pub fn all() -> Vec<Shortcut> {
    let s = |mods, key, scope, action, what| Shortcut {
        keys: KeyboardShortcut::new(mods, key),
        scope,
        action,
        what,
    };
    use Scope::{Anywhere, EventList, Replay};
    vec![
        s(
            Modifiers::COMMAND,
            Key::O,
            Anywhere,
            Action::OpenDialog(OpenTarget::Primary),
            "Open a recording",
        ),
        s(
            Modifiers::NONE,
            Key::Space,
            Replay,
            Action::TogglePlay,
            "Play / pause",
        ),
        s(
            Modifiers::NONE,
            Key::ArrowRight,
            Replay,
            Action::StepCursor(StepUnit::Chunk, 1),
            "Next chunk (network read)",
        ),
        s(
            Modifiers::NONE,
            Key::ArrowLeft,
            Replay,
            Action::StepCursor(StepUnit::Chunk, -1),
            "Previous chunk",
        ),
        s(
            Modifiers::SHIFT,
            Key::ArrowRight,
            Replay,
            Action::StepCursor(StepUnit::Event, 1),
            "Next event",
        ),
        s(
            Modifiers::SHIFT,
            Key::ArrowLeft,
            Replay,
            Action::StepCursor(StepUnit::Event, -1),
            "Previous event",
        ),
        s(
            Modifiers::COMMAND,
            Key::ArrowRight,
            Replay,
            Action::StepCursor(StepUnit::Fragment, 1),
            "Next fragment",
        ),
        s(
            Modifiers::COMMAND,
            Key::ArrowLeft,
            Replay,
            Action::StepCursor(StepUnit::Fragment, -1),
            "Previous fragment",
        ),
        s(
            Modifiers::NONE,
            Key::Home,
            Replay,
            Action::Home,
            "First chunk",
        ),
        s(Modifiers::NONE, Key::End, Replay, Action::End, "Last chunk"),
        Shortcut {
            keys: COPY,
            scope: EventList,
            action: Action::CopyEvent,
            what: "Copy the shown event as SSE text (as received)",
        },
        s(
            Modifiers::NONE,
            Key::Escape,
            EventList,
            Action::FollowCursor,
            "Show the cursor's event again (unpin the clicked one)",
        ),
    ]
}

/// Whether `shortcut` was pressed this frame (consuming the key so no widget also gets it).
/// The copy command arrives as [`egui::Event::Copy`]; it is left alone while some label text is
/// selected (copying that selection is what the user asked for).
pub fn pressed(ctx: &egui::Context, shortcut: &Shortcut) -> bool {
    if shortcut.keys == COPY {
        let text_selected = ctx
            .with_plugin::<egui::text_selection::LabelSelectionState, _>(|s| s.has_selection())
            .unwrap_or(false);
        let copy = ctx.input(|i| i.events.iter().any(|e| matches!(e, egui::Event::Copy)));
        let key = ctx.input_mut(|i| i.consume_shortcut(&COPY));
        return (copy || key) && !text_selected;
    }
    ctx.input_mut(|i| i.consume_shortcut(&shortcut.keys))
}

/// Help → Keyboard shortcuts: every entry of [`all`], its keys as this platform writes them.
pub fn shortcuts_ui(ui: &mut Ui) {
    ui.label("The keys the app answers to (from the same table the key handling reads):");
    ui.add_space(4.0);
    egui::Grid::new("shortcuts")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            ui.strong("keys");
            ui.strong("does");
            ui.strong("where");
            ui.end_row();
            for s in all() {
                ui.monospace(ui.ctx().format_shortcut(&s.keys));
                ui.label(s.what);
                ui.weak(s.scope.label());
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One key, one meaning: no two entries share keys.
    #[test]
    fn every_key_means_one_thing() {
        let all = all();
        for (i, a) in all.iter().enumerate() {
            assert!(
                all[i + 1..].iter().all(|b| b.keys != a.keys),
                "{:?} twice",
                a.keys
            );
        }
    }
}
