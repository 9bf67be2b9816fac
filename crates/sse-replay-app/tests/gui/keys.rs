//! The event list's copy menu and Ctrl+C, the shortcut list, the theme and the wrapped byte view,
//! through egui_kittest (click by label, assert state).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{harness_sized, wait_loaded};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::{App, ScriptedDialogs, Settings, Source};

/// The last text the app put on the clipboard.
fn copied(h: &Harness<'_, App>) -> Option<String> {
    h.output()
        .platform_output
        .commands
        .iter()
        .rev()
        .find_map(|c| match c {
            egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
}

const IDS: &str = concat!(
    "id: ev-1\nretry: 2500\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n",
    "id: ev-2\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
);

fn open_body(body: &str, name: &str) -> (Harness<'static, App>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, body).unwrap();
    let app = App::new(Settings::default(), Box::new(ScriptedDialogs::default()))
        .with_initial(Source::File(path));
    let mut h = harness_sized(app, 1500.0, 940.0, true);
    wait_loaded(&mut h);
    (h, dir)
}

fn event_row<'a>(h: &'a Harness<'_, App>, n: u32) -> egui_kittest::Node<'a> {
    let head = format!("e{n:<7} ");
    h.get_by(move |node| node.label().is_some_and(|l| l.starts_with(&head)))
}

/// A right click on an event row copies its data, the event as SSE text (as received) or its
/// JSON; Ctrl+C copies the shown event as SSE text.
#[test]
fn the_event_list_copies_by_right_click_and_ctrl_c() {
    let (mut h, _dir) = open_body(IDS, "ids.sse");
    h.get_by_label("Event list").click();
    h.run();
    let menu = |h: &mut Harness<'_, App>, item: &str| -> String {
        event_row(h, 1).click_secondary();
        h.run();
        h.get_by_label(item).click();
        h.step();
        let text = copied(h).expect("copied");
        h.run();
        text
    };
    let data = menu(&mut h, "Copy data");
    assert_eq!(
        data,
        "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"
    );
    let sse = menu(&mut h, "Copy event as SSE text");
    assert_eq!(
        sse,
        "id: ev-2\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
    );
    let json = menu(&mut h, "Copy JSON");
    assert!(json.starts_with("{\n  \"choices\": ["), "{json}");
    // Ctrl+C (egui's copy event): the clicked event, as received.
    event_row(&h, 0).click();
    h.run();
    h.event(egui::Event::Copy);
    h.step();
    let text = copied(&h).expect("Ctrl+C copied");
    assert!(text.starts_with("id: ev-1\nretry: 2500\ndata: {"), "{text}");
    assert!(text.ends_with("}\n\n"), "{text}");
    h.run();
    assert_eq!(
        h.state().status.as_ref().map(|s| s.text.as_str()),
        Some("Copied event 0 as SSE text")
    );
    // Esc (from the same key table): the detail follows the cursor again.
    assert_eq!(h.state().view().unwrap().inspector.selected, Some(0));
    h.key_press(egui::Key::Escape);
    h.run();
    assert_eq!(h.state().view().unwrap().inspector.selected, None);
}

/// Help → Keyboard shortcuts lists every shortcut of the table the key handling reads, its keys as
/// this platform writes them.
#[test]
fn help_lists_every_keyboard_shortcut() {
    let (mut h, _dir) = open_body(IDS, "ids.sse");
    h.get_by_label("Help").click();
    h.run();
    h.get_by_label("Keyboard shortcuts").click();
    h.run();
    assert!(h.state().show_shortcuts);
    let all = sse_replay_app::shortcuts::all();
    assert!(all.len() >= 12, "{}", all.len());
    let ctx = h.ctx.clone();
    for s in &all {
        h.get_by_label(s.what);
        let keys = ctx.format_shortcut(&s.keys);
        assert!(
            h.query_all_by_label(&keys).next().is_some(),
            "{keys} is not listed"
        );
    }
    // And they do what the list says: Space plays (Replay's scope).
    h.key_press(egui::Key::Escape);
    h.run();
    assert!(!h.state().view().unwrap().playing);
    // One frame: the key is read and its action applied (a longer run would play to the end).
    h.key_press(egui::Key::Space);
    h.step();
    assert!(h.state().view().unwrap().playing);
}

/// View → Theme: System, Light or Dark, applied at once and kept in the saved settings with the
/// byte view's wrap choice.
#[test]
fn the_theme_is_chosen_in_the_view_menu_and_persisted() {
    let (mut h, dir) = open_body(IDS, "ids.sse");
    assert_eq!(h.state().settings.theme, egui::ThemePreference::System);
    for (label, theme, want) in [
        ("Dark", egui::ThemePreference::Dark, egui::Theme::Dark),
        ("Light", egui::ThemePreference::Light, egui::Theme::Light),
    ] {
        h.get_by_label("View").click();
        h.run();
        h.get_by_label("Theme").click();
        h.run();
        h.get_by_label(label).click();
        h.run();
        assert_eq!(h.state().settings.theme, theme);
        assert_eq!(h.ctx.theme(), want);
    }
    h.state_mut().settings.wrap_bytes = true;
    let path = dir.path().join("settings.ron");
    h.state().save_settings_to(&path).unwrap();
    let back = sse_replay_app::persist::load_settings(&path).unwrap();
    assert_eq!(back.theme, egui::ThemePreference::Light);
    assert!(back.wrap_bytes);
}

/// "Bytes as received" wraps a long read onto several lines when asked (the rows below move
/// down), and goes back to one line per read.
#[test]
fn the_byte_view_wraps_long_reads() {
    let long = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}},\"finish_reason\":null}}]}}\n\n",
        "word ".repeat(300)
    );
    let body = format!("{long}data: [DONE]\n\n");
    let (mut h, _dir) = open_body(&body, "long.sse");
    h.get_by_label("Bytes as received").click();
    h.run();
    let gap = |h: &Harness<'_, App>| {
        let top = |k: usize| {
            let head = format!("{k:>6} ");
            h.get_by(|n| n.label().is_some_and(|l| l.starts_with(&head)))
                .rect()
                .top()
        };
        top(1) - top(0)
    };
    let line = gap(&h);
    assert!(!h.state().settings.wrap_bytes);
    h.get_by_label("Wrap long lines").click();
    h.run();
    assert!(h.state().settings.wrap_bytes);
    let wrapped = gap(&h);
    assert!(
        wrapped > 2.5 * line,
        "the long read takes several lines: {wrapped} vs {line}"
    );
    h.get_by_label("Wrap long lines").click();
    h.run();
    assert!((gap(&h) - line).abs() < 0.5);
}
