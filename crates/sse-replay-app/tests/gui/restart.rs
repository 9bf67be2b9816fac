//! Launching twice: the second launch puts back what the first saved (settings, egui's memory)
//! and still draws CJK text and the app's marks with their glyphs, never as boxes.

#![allow(clippy::unwrap_used)]

use egui::{FontFamily, FontId};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::{App, ScriptedDialogs, Settings, Source, persist};

/// What the app draws that egui's own faces lack: CJK, the verdict marks, the numbered
/// checkpoints, the fold arrow, U+FFFD.
const NEEDS_THE_APP_FONTS: &str = "深圳杭州東京✓✗①②③▾�";

/// A harness as eframe gives the app a context: nothing installed on it beforehand (the other
/// GUI tests install the fonts in the context's setup, which would hide a launch that does not).
fn launch(settings: Settings, memory: Option<egui::Memory>) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1024.0, 700.0))
        .with_max_steps(30)
        .build_ui_state(
            |ui, app: &mut App| app.ui_root(ui),
            App::new(Settings::default(), Box::new(ScriptedDialogs::new(vec![]))),
        );
    let ctx = h.ctx.clone();
    *h.state_mut() = App::restored(
        &ctx,
        settings,
        memory,
        Box::new(ScriptedDialogs::new(vec![])),
    )
    .with_initial(Source::Seed);
    h.run();
    super::common::wait_loaded(&mut h);
    h
}

/// The characters of `text` the fonts in use cannot draw, in both families.
fn missing_glyphs(h: &Harness<'_, App>, text: &str) -> String {
    let mut missing = String::new();
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        let id = FontId::new(14.0, family);
        missing.extend(
            text.chars()
                .filter(|c| !h.ctx.fonts_mut(|f| f.has_glyph(&id, *c))),
        );
    }
    missing
}

#[test]
fn a_second_launch_with_the_first_launchs_saved_state_draws_cjk_and_marks() {
    let dir = tempfile::tempdir().unwrap();
    let path = persist::settings_path(dir.path());

    // First launch: fresh settings, no saved memory; then quit (the settings file is written).
    let first = launch(Settings::default(), None);
    assert_eq!(missing_glyphs(&first, NEEDS_THE_APP_FONTS), "");
    first.get_by_label("\"深圳\"");
    first.state().save_settings_to(&path).unwrap();
    drop(first);

    // Second launch with what the first saved, egui's memory included.
    let saved = persist::load(&path).expect("the first launch saved its settings");
    assert!(saved.memory.is_some(), "egui's memory is saved");
    let mut second = launch(saved.settings, saved.memory);
    assert_eq!(missing_glyphs(&second, NEEDS_THE_APP_FONTS), "");
    second.get_by_label("\"深圳\"");

    // And a third, from the second's file: the state survives any number of restarts.
    second.run();
    second.state().save_settings_to(&path).unwrap();
    drop(second);
    let saved = persist::load(&path).expect("the second launch saved its settings");
    let third = launch(saved.settings, saved.memory);
    assert_eq!(missing_glyphs(&third, NEEDS_THE_APP_FONTS), "");
}

/// Whatever replaces the fonts while the app runs (a memory reset, another `set_fonts`), the
/// next frames put the app's back.
#[test]
fn fonts_replaced_while_running_come_back_on_the_next_frames() {
    let mut h = launch(Settings::default(), None);
    h.ctx.set_fonts(egui::FontDefinitions::default());
    h.run();
    assert_eq!(missing_glyphs(&h, NEEDS_THE_APP_FONTS), "");
}
