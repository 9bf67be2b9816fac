//! Helpers shared by the GUI tests (egui_kittest): the harness at the default window size, an app
//! with scripted dialogs, and bounded waits for background work (loads, live updates).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use sse_replay_app::{App, ScriptedDialogs, Settings};

/// The app in a harness of `w`×`h`, with the fonts the app installs (CJK, symbols).
pub fn harness_sized(app: App, w: f32, h: f32, check_accessibility: bool) -> Harness<'static, App> {
    Harness::builder()
        .with_size(egui::vec2(w, h))
        .with_accessibility_check(check_accessibility)
        .with_max_steps(30)
        .with_context_setup(sse_replay_app::style::install_fonts)
        .build_ui_state(|ui, app: &mut App| app.ui_root(ui), app)
}

/// The app in a harness of the default window size (1500×940).
pub fn harness(app: App) -> Harness<'static, App> {
    harness_sized(app, 1500.0, 940.0, true)
}

/// An app with default settings whose file dialogs answer `answers` in turn.
pub fn app_with(answers: Vec<Option<PathBuf>>) -> App {
    App::new(Settings::default(), Box::new(ScriptedDialogs::new(answers)))
}

/// An app with default settings and no dialog answers.
pub fn app() -> App {
    app_with(vec![])
}

/// Step frames until `done` holds, then settle; a stuck worker fails the test after 60 s.
pub fn step_until(h: &mut Harness<'_, App>, what: &str, done: impl Fn(&App) -> bool) {
    let t0 = Instant::now();
    loop {
        h.step();
        if done(h.state()) {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
}

/// Step frames until every background load is done, then settle.
pub fn wait_loaded(h: &mut Harness<'_, App>) {
    step_until(h, "load did not finish", |a| !a.is_loading());
}
