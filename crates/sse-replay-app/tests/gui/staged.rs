//! The app's staged load: a big recording is shown after its first stage
//! (the correct calls) while the naive strategies and the preview summaries are computed in the
//! background. The test seams `App::stage_min_bytes` (0: every recording is staged),
//! `App::hold_later` (the finished second stage waits) and `App::hold_load` (the finished load
//! waits) make the pending states deterministic: no timing is asserted.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{app, harness, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::{App, Source};
use sse_replay_core::stub::{self, StubCall, StubSpec};

fn later_pending(app: &App) -> bool {
    app.doc.as_ref().is_some_and(|d| d.loaded.later_pending())
}

/// An app that stages every recording and holds the second stage until released.
fn staged_harness(source: Source) -> Harness<'static, App> {
    let mut app = app().with_initial(source);
    app.stage_min_bytes = 0;
    app.hold_later = true;
    let mut h = harness(app);
    step_until(&mut h, "the load", |a| !a.is_loading());
    h
}

#[test]
fn the_naive_panel_says_computing_until_the_strategies_are_ready() {
    let mut h = staged_harness(Source::Seed);
    // The first stage is drawn: the correct calls, no strategy result yet.
    assert!(later_pending(h.state()));
    assert!(h.state().analysis().unwrap().strategies.is_empty());
    h.get_by_label("get_weather");
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    h.get_by_label_contains("per-fragment: computing…");
    h.get_by_label_contains("computing strategies…");
    assert_eq!(
        h.query_all_by_label_contains("fragments parse alone")
            .count(),
        0,
        "no result is shown while it is computed"
    );
    // Released: the result replaces "computing…".
    h.state_mut().hold_later = false;
    step_until(&mut h, "the second stage", |a| !later_pending(a));
    assert_eq!(h.state().analysis().unwrap().strategies.len(), 8);
    h.get_by_label_contains("per-fragment: 0 of 10 fragments parse alone");
    assert_eq!(h.query_all_by_label_contains("computing").count(), 0);
}

#[test]
fn a_small_recording_is_shown_whole_with_no_computing_state() {
    let mut h = harness(app().with_initial(Source::Seed));
    step_until(&mut h, "the load", |a| !a.is_loading());
    assert!(!later_pending(h.state()));
    assert_eq!(h.state().analysis().unwrap().strategies.len(), 8);
    assert!(h.state().analysis().unwrap().preview.is_some());
    assert_eq!(h.query_all_by_label_contains("computing").count(), 0);
    h.get_by_label_contains("per-fragment: 0 of 10 fragments parse alone");
}

#[test]
fn the_preview_badge_appears_once_the_previews_are_ready() {
    // One call, `{"days":31}`, cut after `{"days":3`: the preview shows 3, the final is 31.
    let spec = StubSpec {
        calls: vec![StubCall {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: r#"{"days":31}"#.into(),
        }],
        fragment_chars: vec![9, 2],
        ..StubSpec::default()
    };
    let recording = Box::new(stub::build(&spec));
    let mut h = staged_harness(Source::Memory {
        name: "cut number".into(),
        recording,
    });
    assert!(later_pending(h.state()));
    h.get_by_label("get_weather");
    assert_eq!(
        h.query_all_by_label_contains("preview: ").count(),
        0,
        "nothing while pending"
    );
    h.state_mut().hold_later = false;
    step_until(&mut h, "the second stage", |a| !later_pending(a));
    h.get_by_label("preview: 1 contradiction");
    let a = h.state().analysis().unwrap();
    let p = &a.preview.as_ref().unwrap()[0];
    assert_eq!(p.contradicted, 1);
    // The finding is there too, as `check` has it.
    assert!(
        a.findings
            .iter()
            .any(|f| f.kind == sse_replay_core::findings::FindingKind::PreviewContradiction)
    );
}

#[test]
fn during_a_load_the_empty_state_shows_progress_not_the_seed_button() {
    let mut app = app();
    app.hold_load = true;
    let mut h = harness(app);
    h.run();
    h.get_by_label("Open the seed example");
    h.state_mut()
        .open(Source::Seed, sse_replay_app::OpenTarget::Primary);
    h.run();
    assert!(h.state().is_loading());
    assert_eq!(
        h.query_all_by_label("Open the seed example").count(),
        0,
        "the seed button is hidden while a load runs"
    );
    // In the middle of the window and in the status bar.
    assert_eq!(
        h.query_all_by_label_contains("Loading seed-example.ron")
            .count(),
        2
    );
    h.state_mut().hold_load = false;
    step_until(&mut h, "the load", |a| !a.is_loading());
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
}
