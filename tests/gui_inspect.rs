//! Compare two as a diff (its own A/B documents, arguments diffed inline) and the proxy's
//! inspectable request list, driven through egui_kittest (no GPU, no window). Servers run on
//! 127.0.0.1:0; every wait is bounded.
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay::app::{App, OpenTarget, ScriptedDialogs, Settings, Source};

fn harness(app: App) -> Harness<'static, App> {
    Harness::builder()
        .with_size(egui::vec2(1500.0, 940.0))
        .with_max_steps(30)
        .with_context_setup(sse_replay::app::style::install_fonts)
        .build_ui_state(|ui, app: &mut App| app.ui_root(ui), app)
}

fn app_with(answers: Vec<Option<PathBuf>>) -> App {
    App::new(Settings::default(), Box::new(ScriptedDialogs::new(answers)))
}

/// Step frames until every background load is done, then settle.
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

/// Two recordings that differ in one argument value (`days` 3 → 4): the changed value is drawn
/// highlighted on both sides, the stream rows are shown, and Replay's document is untouched by
/// opening A and B; "Open in Replay" then shows B there.
#[test]
fn compare_two_diffs_arguments_inline_and_leaves_replay_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.ron"), dir.path().join("b.ron"));
    let spec = sse_replay::stub::seed_example();
    sse_replay::recording::save(&pa, &sse_replay::stub::build(&spec)).unwrap();
    let mut other = spec.clone();
    other.calls[0].arguments = r#"{"city":"深圳","days":4}"#.into();
    sse_replay::recording::save(&pb, &sse_replay::stub::build(&other)).unwrap();

    let mut h =
        harness(app_with(vec![Some(pa.clone()), Some(pb.clone())]).with_initial(Source::Seed));
    wait_loaded(&mut h);
    let replay_name = h.state().analysis().unwrap().source.name.clone();
    h.get_by_label("Compare two").click();
    h.run();
    h.get_by_label("Open A…").click();
    h.run();
    wait_loaded(&mut h);
    h.get_by_label("Open B…").click();
    h.run();
    wait_loaded(&mut h);

    // Replay still shows what it showed.
    assert_eq!(h.state().analysis().unwrap().source.name, replay_name);
    let cmp = h.state().comparison().unwrap();
    assert_eq!(cmp.differing(), 1);
    // The changed value, highlighted (and named as changed) on each side.
    h.get_by_label("changed in A: 3");
    h.get_by_label("changed in B: 4");
    h.get_by_label_contains("arguments differ at $.days");
    // Stream-level rows.
    h.get_by_label("dialect");
    h.get_by_label("time to first call");
    h.get_by_label_contains("2 call rows · 1 differ");

    h.query_all_by_label("Open in Replay")
        .nth(1)
        .unwrap()
        .click();
    h.run();
    wait_loaded(&mut h);
    assert_eq!(
        h.state().analysis().unwrap().source.name,
        pb.display().to_string()
    );
    // …and Compare two keeps both of its own.
    assert!(h.state().compare.side(OpenTarget::CompareA).is_some());
    assert!(h.state().compare.side(OpenTarget::Second).is_some());
}
