//! The app as a daily tool, through egui_kittest: the in-app file browser when no native dialog
//! can be shown, the event inspector (list, filter, detail), and the layout on a laptop screen.
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay::app::{App, BUILTIN_NOTE, ScriptedDialogs, Settings, Source};

fn harness_sized(app: App, w: f32, h: f32) -> Harness<'static, App> {
    Harness::builder()
        .with_size(egui::vec2(w, h))
        // egui_file's path and file-name fields carry no accessible name (not ours to label).
        .with_accessibility_check(false)
        .with_max_steps(30)
        .with_context_setup(sse_replay::app::style::install_fonts)
        .build_ui_state(|ui, app: &mut App| app.ui_root(ui), app)
}

/// Step frames until the background load is done, then settle.
fn wait_loaded(h: &mut Harness<'_, App>) {
    let t0 = Instant::now();
    loop {
        h.step();
        if !h.state().is_loading() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "load did not finish"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
}

fn seed(dialogs: ScriptedDialogs, w: f32, h: f32) -> Harness<'static, App> {
    let app = App::new(Settings::default(), Box::new(dialogs)).with_initial(Source::Seed);
    let mut h = harness_sized(app, w, h);
    wait_loaded(&mut h);
    h
}

#[test]
fn without_a_native_dialog_open_shows_the_in_app_browser_and_says_so_once() {
    let mut h = seed(ScriptedDialogs::without_native(), 1500.0, 940.0);
    assert!(!h.state().builtin_dialog_open());
    h.get_by_label("Open…").click();
    h.run();
    assert!(h.state().builtin_dialog_open(), "the in-app browser opened");
    // The browser's own controls are drawn inside the window.
    assert!(h.query_all_by_label("Cancel").count() >= 1);
    let status = h.state().status.clone().unwrap();
    assert_eq!(status.text, BUILTIN_NOTE);
    assert!(!status.error);
    h.get_by_label_contains("using the built-in file browser");
    // Cancel closes it; nothing is opened and the recording stays.
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().builtin_dialog_open());
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
    // The note is said once: a second Open does not set it again.
    h.state_mut().status = None;
    h.get_by_label("Open…").click();
    h.run();
    assert!(h.state().builtin_dialog_open());
    assert!(h.state().status.is_none());
}
