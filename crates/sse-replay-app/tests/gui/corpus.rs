//! The Corpus tab through egui_kittest: a folder of generated captures loads in the background
//! into the table, the filters narrow it, a new capture appears while the tab watches, and a
//! selected row opens its stream in Replay ("Open in Replay", as a double click does), a
//! capture's second stream included.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

use common::{app, step_until, wait_loaded};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::{App, Tab};
use sse_replay_core::recording::{self, WriteOptions};
use sse_replay_core::scan::RowVerdict;

/// `n` generated captures (seed 3) in `dir`.
fn captures(dir: &Path, from: u64, n: u64) {
    for i in from..from + n {
        let c = sse_replay_core::corpus::capture(3, i);
        recording::save_with(
            &dir.join(&c.file_name),
            &c.recording,
            WriteOptions::private(false),
        )
        .unwrap();
    }
}

/// The Corpus tab scanning `dir`, loaded. Frames 1/60 s apart (the default quarter second
/// would make two clicks three frames apart too slow for a double click).
fn corpus_of(dir: &Path) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1500.0, 940.0))
        .with_step_dt(1.0 / 60.0)
        .with_max_steps(30)
        .with_context_setup(sse_replay_app::style::install_fonts)
        .build_ui_state(|ui, app: &mut App| app.ui_root(ui), app());
    // The folder the tab scans when first shown (the captures folder when none was set).
    h.state_mut().corpus.folder = dir.to_path_buf();
    h.get_by_label("Corpus").click();
    h.run();
    assert_eq!(h.state().settings.tab, Tab::Corpus);
    step_until(&mut h, "the corpus did not load", |a| {
        !a.corpus.is_loading() && !a.corpus.rows.is_empty()
    });
    h
}

#[test]
fn a_folder_loads_in_the_background_into_the_table() {
    let dir = tempfile::tempdir().unwrap();
    captures(dir.path(), 0, 30);
    let mut h = corpus_of(dir.path());
    let a = h.state();
    assert_eq!(a.corpus.rows.len(), 30);
    assert_eq!(a.corpus.view().len(), 30);
    // The rows are what scan makes of the files.
    let first = sse_replay_core::corpus::capture(3, 0);
    let row = a
        .corpus
        .rows
        .iter()
        .find(|r| r.source_file.ends_with(&first.file_name))
        .unwrap();
    assert_eq!(
        row.dialect.as_deref(),
        Some(first.recording.meta.dialect.as_str())
    );
    h.get_by_label_contains("30 of 30 streams");
    // A row is on screen, by its file name.
    h.get_by_label(&first.file_name);
    // A capture written while the tab is open appears (the folder is polled).
    captures(dir.path(), 30, 1);
    step_until(&mut h, "the new capture did not appear", |a| {
        a.corpus.rows.len() == 31
    });
}

/// Click the free-text filter and type `text`.
fn type_filter(h: &mut Harness<'static, App>, text: &str) {
    h.get_by_role_and_label(egui::Role::TextInput, "Text")
        .click();
    h.run();
    h.get_by_role_and_label(egui::Role::TextInput, "Text")
        .type_text(text);
    h.run();
}

#[test]
fn the_filters_narrow_the_table() {
    let dir = tempfile::tempdir().unwrap();
    captures(dir.path(), 0, 39);
    // One stream that is surely not OK (cut short).
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recordings/quirk-truncated.ron"),
        dir.path().join("truncated.ron"),
    )
    .unwrap();
    let mut h = corpus_of(dir.path());
    let not_ok = h.state().corpus.rows.iter().filter(|r| !r.ok()).count();
    assert!(not_ok > 0 && not_ok < 40, "{not_ok} not OK of 40");
    h.state_mut().corpus.filter.verdict = Some(RowVerdict::NotOk);
    // The filter is applied when the head sees it changed: one frame.
    type_filter(&mut h, "zzz-no-such-thing");
    assert_eq!(h.state().corpus.view().len(), 0);
    h.get_by_label_contains("0 of 40 streams");
    h.get_by_label("Clear filters").click();
    h.run();
    assert_eq!(h.state().corpus.view().len(), 40);
    // The free text matches the model, among other things.
    let model = h.state().corpus.rows[0].model.clone().unwrap();
    let with_model = h
        .state()
        .corpus
        .rows
        .iter()
        .filter(|r| r.model.as_deref() == Some(model.as_str()))
        .count();
    type_filter(&mut h, &model);
    let shown = h.state().corpus.view().len();
    assert!(
        shown >= with_model && shown < 40,
        "{shown} shown, {with_model} with {model}"
    );
    assert!(
        h.state()
            .corpus
            .view()
            .iter()
            .all(
                |&i| h.state().corpus.rows[i].model.as_deref() == Some(model.as_str())
                    || h.state().corpus.rows[i].source_file.contains(&model)
            )
    );
}

#[test]
fn a_row_opens_its_stream_in_replay() {
    let dir = tempfile::tempdir().unwrap();
    captures(dir.path(), 0, 5);
    // A capture with two streams: its second row opens its second stream.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/import/two-streams.har"),
        dir.path().join("two-streams.har"),
    )
    .unwrap();
    let mut h = corpus_of(dir.path());
    assert_eq!(h.state().corpus.rows.len(), 7);
    let name = sse_replay_core::corpus::capture(3, 2).file_name;
    // A click selects the row; "Open in Replay" opens it (as a double click on the row does).
    h.get_by_label(&name).click();
    h.run();
    assert!(h.state().corpus.selected.is_some());
    h.get_by_label("Open in Replay").click();
    h.run();
    wait_loaded(&mut h);
    assert_eq!(h.state().settings.tab, Tab::Replay);
    let a = h.state().analysis().unwrap();
    assert!(a.source.name.ends_with(&name), "{}", a.source.name);
    // The second stream of the HAR, with "Open in Replay" on the selected row.
    h.get_by_label("Corpus").click();
    h.run();
    h.get_by_label("two-streams.har #2").click();
    h.run();
    h.get_by_label("Open in Replay").click();
    h.run();
    step_until(&mut h, "stream 2 did not open", |a| {
        a.analysis()
            .is_some_and(|x| x.source.name.contains("stream 2 of 2"))
    });
    assert_eq!(h.state().settings.tab, Tab::Replay);
    assert!(
        h.state().picker.is_none(),
        "no picker: the stream was chosen"
    );
}
