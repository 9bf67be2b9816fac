//! The desktop app driven through egui_kittest (no GPU, no window): open the seed sample, step the
//! cursor, see the per-fragment failures and the correct calls, switch strategies, open a broken
//! file, export through the dialog test seam. All GUI tests live in this one file (link time).
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{app_with, harness, wait_loaded};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::{Action, App, OpenTarget, Settings, Source, StepUnit, Tab};
use sse_replay_core::naive::Strategy;

fn seed_harness() -> Harness<'static, App> {
    let mut h = harness(app_with(vec![]).with_initial(Source::Seed));
    wait_loaded(&mut h);
    h
}

fn act(h: &mut Harness<'_, App>, action: Action) {
    h.state_mut().actions.push(action);
    h.run();
}

#[test]
fn seed_opens_at_the_end_with_failures_left_and_correct_calls_right() {
    let h = seed_harness();
    let a = h.state().analysis().unwrap();
    assert_eq!(a.calls.len(), 2);
    assert_eq!(
        h.state().view().unwrap().cursor as usize,
        a.chunks.len() - 1
    );
    // Left: per-fragment, every fragment fails, with serde_json's error.
    h.get_by_label_contains("per-fragment: 0 of 10 fragments parse alone");
    assert!(
        h.query_all_by_label_contains("EOF while parsing a string")
            .count()
            >= 1
    );
    assert!(
        h.query_all_by_label_contains("trailing characters at line 1 column 2")
            .count()
            >= 1
    );
    // Right: both calls parsed once at the finish, checkpoints pass.
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    h.get_by_label("get_weather");
    h.get_by_label("get_time");
    assert_eq!(
        h.query_all_by_label_contains("✓ parsed once at the finish")
            .count(),
        2
    );
    assert_eq!(
        h.query_all_by_label_contains(
            "reassembled 22 characters (26 bytes), identical to the original"
        )
        .count(),
        2
    );
    h.get_by_label("\"深圳\"");
    h.get_by_label("\"杭州\"");
}

#[test]
fn stepping_the_cursor_shows_the_state_at_the_cursor() {
    let mut h = seed_harness();
    act(&mut h, Action::Home);
    assert_eq!(h.state().view().unwrap().cursor, 0);
    h.get_by_label_contains("streaming — 0 calls so far, 0 in progress");
    h.get_by_label_contains("per-fragment: no fragment so far");
    // One fragment forward: the first fragment arrives, its error shows.
    h.get_by_label("fragment ▶").click();
    h.run();
    let (cursor, focus) = {
        let v = h.state().view().unwrap();
        (v.cursor, v.focus_fragment)
    };
    assert_eq!(focus, Some(0));
    let a = h.state().analysis().unwrap();
    assert_eq!(a.fragments[0].pos.chunk, cursor);
    h.get_by_label_contains("per-fragment: 0 of 1 fragment parses alone");
    h.get_by_label_contains("EOF while parsing a string at line 1 column 5");
    h.get_by_label_contains("streaming — 1 call so far, 1 in progress");
    // What has arrived; the call's totals only once the stream has ended.
    h.get_by_label_contains("5 chars · 5 bytes · 1 fragment so far");
    // Keyboard: Ctrl+→ is one fragment, → one chunk, End the last chunk.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::ArrowRight);
    h.run();
    assert_eq!(h.state().view().unwrap().focus_fragment, Some(1));
    h.get_by_label_contains("10 chars · 12 bytes · 2 fragments so far");
    let before = h.state().view().unwrap().cursor;
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(h.state().view().unwrap().cursor, before + 1);
    act(&mut h, Action::StepCursor(StepUnit::Event, 1));
    act(&mut h, Action::StepCursor(StepUnit::Event, -1));
    h.key_press(egui::Key::End);
    h.run();
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    // Clicking a fragment in the steps list moves the cursor to it.
    h.get_by_label("#3  ").click();
    h.run();
    assert_eq!(h.state().view().unwrap().focus_fragment, Some(3));
}

#[test]
fn switching_strategies() {
    let mut h = seed_harness();
    h.get_by_label("strategy").click();
    h.run();
    h.get_by_label("✗ concat-all").click();
    h.run();
    assert_eq!(h.state().view().unwrap().strategy, Strategy::ConcatAll);
    assert_eq!(h.state().settings.strategy, "concat-all");
    assert!(
        h.query_all_by_label_contains("trailing characters at line 1 column 27")
            .count()
            >= 1
    );
    act(&mut h, Action::SelectStrategy(Strategy::NextIndexDone));
    h.get_by_label_contains("✓ same calls as the accumulator");
    act(&mut h, Action::SelectStrategy(Strategy::PerReadUtf8));
    h.get_by_label_contains("U+FFFD replacement characters");
    // The replacement character itself is drawn (the symbol font has it), never spelled out.
    assert!(h.query_all_by_label_contains("\u{FFFD}").count() >= 1);
    assert_eq!(h.query_all_by_label_contains("\\u{fffd}").count(), 0);
    // The checkpoints use the circled digits and check marks.
    assert_eq!(
        h.query_all_by_label("① reassembled = original, verbatim")
            .count(),
        2
    );
    assert!(h.query_all_by_label("✓").count() >= 6);
}

#[test]
fn broken_file_shows_the_error_and_keeps_the_previous_recording() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken.ron");
    std::fs::write(&bad, "(\n    version: 1,\n    meta: (title: \"x\" oops\n").unwrap();
    let future = dir.path().join("future.ron");
    std::fs::write(&future, "(version: 99, chunks: [])\n").unwrap();
    let mut h = seed_harness();
    h.state_mut().settings.tab = Tab::Replay;
    h.state_mut()
        .actions
        .push(Action::OpenPath(bad.clone(), OpenTarget::Primary));
    h.run();
    wait_loaded(&mut h);
    let status = h.state().status.clone().unwrap();
    assert!(status.error, "{status:?}");
    assert!(status.text.contains("line 3"), "{}", status.text);
    h.get_by_label_contains("RON syntax error at line 3");
    // The seed is still open.
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    // Future version, through the (scripted) Open dialog.
    let mut h2 = harness(app_with(vec![Some(future)]).with_initial(Source::Seed));
    wait_loaded(&mut h2);
    h2.get_by_label("Open…").click();
    h2.run();
    wait_loaded(&mut h2);
    h2.get_by_label_contains("newer than this build supports");
    assert_eq!(h2.state().analysis().unwrap().calls.len(), 2);
    // Then a good file clears the error.
    act(&mut h2, Action::OpenSeed);
    wait_loaded(&mut h2);
    assert!(!h2.state().status.clone().unwrap().error);
}

#[test]
fn export_through_the_dialog_seam() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.json");
    let openai = dir.path().join("openai.json");
    let report = dir.path().join("report.json");
    let mut h = harness(
        app_with(vec![
            Some(calls.clone()),
            Some(openai.clone()),
            Some(report.clone()),
        ])
        .with_initial(Source::Seed),
    );
    wait_loaded(&mut h);
    // File → Export calls → JSON…
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Export calls").click();
    h.run();
    h.get_by_label("JSON…").click();
    h.run();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&calls).unwrap()).unwrap();
    assert_eq!(v[0]["name"], "get_weather");
    assert_eq!(v[0]["arguments"]["city"], "深圳");
    assert_eq!(
        v[1]["arguments"],
        serde_json::json!({"city": "杭州", "days": 1})
    );
    h.get_by_label_contains("Exported 2 calls as JSON");
    act(
        &mut h,
        Action::ExportCalls(sse_replay_core::export::Format::OpenAi),
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&openai).unwrap()).unwrap();
    assert_eq!(v["role"], "assistant");
    assert_eq!(v["tool_calls"][1]["function"]["name"], "get_time");
    act(&mut h, Action::ExportReport);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(v["strategies"][0]["name"], "per-fragment");
    assert_eq!(v["strategies"][0]["parsed"], 0);
    act(&mut h, Action::CopyCallsJson);
    h.get_by_label_contains("Copied 2 calls as JSON");
}

#[test]
fn raw_body_opens_and_recent_files_remember_it() {
    let dir = tempfile::tempdir().unwrap();
    let sse = dir.path().join("body.sse");
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"cit\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"y\\\":\\\"深圳\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    std::fs::write(&sse, body).unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    act(&mut h, Action::OpenPath(sse.clone(), OpenTarget::Primary));
    wait_loaded(&mut h);
    let a = h.state().analysis().unwrap();
    assert_eq!(a.calls.len(), 1);
    assert_eq!(a.calls[0].raw_arguments, r#"{"city":"深圳"}"#);
    assert_eq!(h.state().settings.recent.len(), 1);
    h.get_by_label_contains("per-fragment: 0 of 2 fragments parse alone");
}

#[test]
fn play_advances_and_stops_at_the_end() {
    let mut h = seed_harness();
    act(&mut h, Action::Home);
    h.state_mut().view_mut().unwrap().speed = 16.0;
    h.get_by_label("⏵ Play").click();
    let t0 = Instant::now();
    loop {
        h.step();
        let v = h.state().view().unwrap();
        if !v.playing {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "never reached the end"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let a = h.state().analysis().unwrap();
    assert_eq!(
        h.state().view().unwrap().cursor as usize,
        a.chunks.len() - 1
    );
    // Idle again: no repaint requested every frame.
    h.run();
}

#[test]
fn compare_two_recordings() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.ron");
    let mut spec = sse_replay_core::stub::seed_example();
    spec.calls[1].arguments = r#"{"city":"杭州","days":2}"#.into();
    spec.calls.push(sse_replay_core::stub::StubCall {
        id: "call_3".into(),
        name: "get_news".into(),
        arguments: "{}".into(),
    });
    sse_replay_core::recording::save(&other, &sse_replay_core::stub::build(&spec)).unwrap();
    let mut h = harness(app_with(vec![Some(other)]).with_initial(Source::Seed));
    wait_loaded(&mut h);
    h.get_by_label("Compare two").click();
    h.run();
    h.query_all_by_label("Use Replay's").next().unwrap().click();
    h.step();
    wait_loaded(&mut h);
    h.get_by_label("Open B…").click();
    h.step();
    wait_loaded(&mut h);
    let cmp = h.state().comparison().unwrap();
    assert_eq!(cmp.rows.len(), 3);
    assert_eq!(cmp.differing(), 2);
    h.get_by_label_contains("arguments differ at $.days");
    h.get_by_label("#3 ✗ only in B");
}

#[test]
fn stub_builder_previews_and_opens_in_the_player() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("stub.ron");
    let mut h = harness(app_with(vec![Some(saved.clone())]));
    h.run();
    h.get_by_label("Stub builder").click();
    h.run();
    h.get_by_label_contains("per-fragment: 0 of 10 fragments parse alone");
    h.state_mut().stub.fragment_text = "100".into();
    h.run();
    h.get_by_label_contains("per-fragment: 2 of 2 fragments parse alone");
    h.get_by_label("Save as recording…").click();
    h.run();
    let rec = sse_replay_core::recording::load(&saved).unwrap();
    assert_eq!(rec.truth.len(), 2);
    h.get_by_label("Open in player").click();
    h.run();
    wait_loaded(&mut h);
    assert_eq!(h.state().settings.tab, Tab::Replay);
    assert_eq!(h.state().analysis().unwrap().fragments.len(), 2);
}

#[test]
fn about_and_badges_explain() {
    let mut h = seed_harness();
    h.get_by_label("About…").click();
    h.run();
    h.get_by_label_contains("Why streamed tool-call arguments break");
    // Stream-level findings show as badges with the quirk's explanation on hover.
    h.get_by_label("split-utf8").hover();
    h.run();
    h.get_by_label_contains("A network read ended in the middle of a UTF-8 character");
    // The keys: one list, the shortcut table's, opened from here too.
    h.get_by_label("Keyboard shortcuts…").click();
    h.run();
    assert!(h.state().show_shortcuts);
    h.get_by_label("Play / pause");
}

#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn drag_and_drop_and_ctrl_o_go_through_the_same_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sse_replay_core::stub::seed_example();
    spec.layout = sse_replay_core::stub::Layout::Interleaved;
    let dropped = dir.path().join("interleaved.ron");
    sse_replay_core::recording::save(&dropped, &sse_replay_core::stub::build(&spec)).unwrap();
    let opened = dir.path().join("opened.ron");
    spec.calls.truncate(1);
    sse_replay_core::recording::save(&opened, &sse_replay_core::stub::build(&spec)).unwrap();
    let mut h = harness(app_with(vec![Some(opened.clone())]));
    h.run();
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(dropped.clone())));
    h.run();
    wait_loaded(&mut h);
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
    assert!(h.query_all_by_label_contains("interleaved-calls").count() >= 1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    h.run();
    wait_loaded(&mut h);
    assert_eq!(h.state().analysis().unwrap().calls.len(), 1);
    // Both ended up in the recent list, newest first.
    let recent = &h.state().settings.recent;
    assert_eq!(recent.len(), 2);
    assert!(recent[0].ends_with("opened.ron"), "{recent:?}");
}

#[test]
fn a_large_load_can_be_cancelled_and_keeps_the_previous_recording() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.sse");
    let f = std::fs::File::create(&big).unwrap();
    sse_replay_core::generate::write_large(std::io::BufWriter::new(f), 60).unwrap();
    let mut h = seed_harness();
    act(&mut h, Action::OpenPath(big, OpenTarget::Primary));
    assert!(h.state().is_loading());
    h.get_by_label_contains("Loading big.sse");
    h.get_by_label("Cancel").click();
    h.run();
    wait_loaded(&mut h);
    assert!(
        h.state()
            .status
            .clone()
            .unwrap()
            .text
            .starts_with("Cancelled opening")
    );
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
}

#[test]
fn recorder_and_proxy_tabs_render() {
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Recorder").click();
    h.run();
    assert_eq!(h.state().settings.tab, Tab::Recorder);
    h.get_by_label("⏺ Start");
    h.get_by_label("Template:");
    h.get_by_label_contains("Save recordings in:");
    h.get_by_label("Proxy").click();
    h.run();
    assert_eq!(h.state().settings.tab, Tab::Proxy);
    h.get_by_label("▶ Start proxy");
    h.get_by_label("Requests (0) · 0 captured");
    // Both forms persist with the settings (secret header values do not).
    h.state_mut().settings.recorder.headers[0].value = "Bearer sk-never-saved".into();
    let text = ron::to_string(&h.state().settings).unwrap();
    assert!(text.contains("api.openai.com"), "{text}");
    assert!(!text.contains("sk-never-saved"), "{text}");
    let back: Settings = ron::from_str(&text).unwrap();
    assert_eq!(back.proxy.listen, "127.0.0.1:8080");
    let old: Settings = ron::from_str("(speed: 2.0)").unwrap();
    assert_eq!(old.recorder.method, "POST");
}

/// Record from a local `serve` (the seed, at its recorded timing) with the Replay tab showing:
/// the live recording flows into the accumulator panel as it arrives, then Save As goes through
/// the dialog seam.
#[test]
fn records_live_from_a_local_server_into_the_replay_panels() {
    use sse_replay_net::serve::{self, Pacing, Plan, ServeConfig};
    let seed = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
    let plan = std::sync::Arc::new(Plan::new(&seed, Pacing::Recorded { speed: 0.5 }, None));
    let body = seed.body();
    let server = serve::start(ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        plan,
        log: false,
        limits: Default::default(),
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved.ron");
    let mut h = harness(app_with(vec![Some(saved.clone())]));
    h.run();
    {
        let r = &mut h.state_mut().settings.recorder;
        r.url = format!("http://{}/v1/chat/completions", server.addr());
        r.headers.clear();
        r.body = "{}".into();
        r.out_dir = dir.path().join("captures");
    }
    h.get_by_label("Recorder").click();
    h.run();
    h.get_by_label("⏺ Start").click();
    h.step();
    assert!(h.state().recorder.is_running());
    h.get_by_label("Replay").click();
    h.step();
    let t0 = Instant::now();
    let mut saw_live_badge = false;
    let mut partial_views = 0;
    loop {
        h.step();
        if h.query_by_label("● live").is_some() {
            saw_live_badge = true;
        }
        let app = h.state();
        if let Some(doc) = &app.doc {
            assert!(doc.loaded.is_live());
            let last = doc.loaded.analysis.chunks.len().saturating_sub(1);
            // While live the cursor follows the end.
            assert_eq!(doc.view.cursor as usize, last);
            if doc.loaded.analysis.body.len() < body.len() {
                partial_views += 1;
            }
        }
        let done = !app.recorder.is_running()
            && !app.is_loading()
            && app.analysis().is_some_and(|a| a.body == body);
        if done {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the live recording did not arrive"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    assert!(saw_live_badge, "the header never showed the live badge");
    assert!(partial_views > 0, "never showed a partial stream");
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    h.get_by_label("get_weather");
    h.get_by_label("\"深圳\"");
    assert!(h.query_by_label("● live").is_none());
    // Save As from the Recorder tab, through the dialog seam.
    h.get_by_label("Recorder").click();
    h.run();
    h.get_by_label("Save As…").click();
    h.run();
    let rec = sse_replay_core::recording::load(&saved).unwrap();
    assert_eq!(rec.body(), body);
    h.get_by_label_contains("Saved the recording to");
    server.stop();
}

fn import_data(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/import"
    ))
    .join(name)
}

#[test]
fn importing_a_har_with_two_streams_offers_a_choice() {
    let har = import_data("two-streams.har");
    let mut h = harness(app_with(vec![Some(har.clone())]).with_initial(Source::Seed));
    wait_loaded(&mut h);
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Import…").click();
    h.run();
    wait_loaded(&mut h);
    // The picker lists both event streams (the HTML entry is not one); the seed stays open.
    h.get_by_label_contains("two-streams.har holds 2 event streams");
    h.get_by_label_contains("1. POST https://api.openai.com/v1/chat/completions");
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
    h.get_by_label_contains("2. POST https://api.anthropic.com/v1/messages")
        .click();
    h.run();
    wait_loaded(&mut h);
    assert!(h.state().picker.is_none());
    let a = h.state().analysis().unwrap();
    assert_eq!(a.calls.len(), 1);
    assert_eq!(a.calls[0].name, "get_time");
    assert_eq!(a.calls[0].raw_arguments, r#"{"tz": "UTC"}"#);
    assert!(h.query_all_by_label("get_time").count() >= 1);
    h.get_by_label("Anthropic Messages");
    // HAR keeps no read boundaries: a badge says so, the note is its tooltip.
    h.get_by_label("no read boundaries").hover();
    h.run();
    h.get_by_label_contains("HAR keeps no chunk boundaries or timing");
    h.get_by_label_contains("Imported from entry 3 of the HAR file two-streams.har.");
    // Dropping the same file opens the picker again; a broken one names the file.
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(har)));
    h.run();
    wait_loaded(&mut h);
    assert_eq!(h.state().picker.as_ref().unwrap().recordings.len(), 2);
    act(&mut h, Action::ClosePicker);
    act(
        &mut h,
        Action::OpenPath(import_data("malformed.har"), OpenTarget::Primary),
    );
    wait_loaded(&mut h);
    let status = h.state().status.clone().unwrap();
    assert!(status.error, "{status:?}");
    assert!(status.text.ends_with("malformed.har"), "{}", status.text);
    assert_eq!(h.state().analysis().unwrap().calls[0].name, "get_time");
}

#[test]
fn dialect_is_named_and_can_be_forced() {
    let ron = PathBuf::from(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/recordings/anthropic-weather.ron"
    ));
    let mut h = harness(app_with(vec![]).with_initial(Source::File(ron)));
    wait_loaded(&mut h);
    h.get_by_label("Anthropic Messages");
    assert!(h.query_by_label("(guessed)").is_none());
    h.get_by_label("ping-event");
    assert!(h.query_all_by_label("get_weather").count() >= 1);
    assert!(h.query_all_by_label("get_time").count() >= 1);
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    act(
        &mut h,
        Action::SetDialect(Some(sse_replay_core::dialect::DialectKind::OpenAiChat)),
    );
    wait_loaded(&mut h);
    h.get_by_label("OpenAI Chat Completions");
    h.get_by_label("(forced)");
    assert_eq!(h.state().analysis().unwrap().calls.len(), 0);
    // Back to detection, through the combo box.
    h.get_by_value("forced").click();
    h.run();
    h.get_by_label("detect").click();
    h.run();
    wait_loaded(&mut h);
    h.get_by_label("Anthropic Messages");
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
}

#[test]
fn a_raw_body_is_marked_guessed_and_without_read_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let sse = dir.path().join("body.sse");
    std::fs::write(&sse, "data: {\"x\":1}\n\ndata: [DONE]\n\n").unwrap();
    let mut h = harness(app_with(vec![]).with_initial(Source::File(sse)));
    wait_loaded(&mut h);
    h.get_by_label("OpenAI Chat Completions");
    h.get_by_label("(guessed)");
    h.get_by_label("no read boundaries");
}

/// The raw view and the naive steps list scroll to the cursor's row when the cursor moves (the
/// large stream opened at its end once showed the first steps).
#[test]
fn the_lists_keep_the_cursor_row_in_view() {
    let recording = Box::new(sse_replay_core::generate::large_recording(40));
    let name = "large (generated)".to_owned();
    let mut app = app_with(vec![]).with_initial(Source::Memory { name, recording });
    app.settings.lower_view = sse_replay_app::event_inspector::LowerView::Bytes;
    let mut h = harness(app);
    wait_loaded(&mut h);
    let last = h.state().view().unwrap().cursor;
    let last_fragment = h.state().analysis().unwrap().fragments.len() - 1;
    assert!(last > 100 && last_fragment > 100, "{last} {last_fragment}");
    let raw_row = |k: u32| format!("{k:>6} ");
    // A raw row's chunk button is labelled "{k:>6} {t:>9}".
    let shown = |h: &Harness<'_, App>, head: &str| {
        h.query_all_by(|n| n.label().is_some_and(|l| l.starts_with(head)))
            .count()
            > 0
    };
    // Opened at the end: the last chunk's row and the last attempt are in view.
    assert!(shown(&h, &raw_row(last)));
    h.get_by_label(&format!("#{last_fragment:<3}"));
    assert!(!shown(&h, &raw_row(0)));
    act(&mut h, Action::Home);
    assert!(shown(&h, &raw_row(0)));
    assert!(!shown(&h, &raw_row(last)));
    act(&mut h, Action::End);
    assert!(shown(&h, &raw_row(last)));
    h.get_by_label(&format!("#{last_fragment:<3}"));
    // A fragment in the middle: its chunk's row and its attempt come into view.
    act(&mut h, Action::FocusFragment(60));
    let chunk = h.state().view().unwrap().cursor;
    assert!(shown(&h, &raw_row(chunk)));
    h.get_by_label("#60 ");
}

#[test]
fn server_tools_are_a_separate_group_and_the_headline_is_the_verdict() {
    // An Anthropic stream: a server-run web search, then the client's call.
    let dir = tempfile::tempdir().unwrap();
    let sse = dir.path().join("server-tool.sse");
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_01\",\"name\":\"web_search\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\":\\\"Oslo\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_02\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    std::fs::write(&sse, body).unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    act(&mut h, Action::OpenPath(sse, OpenTarget::Primary));
    wait_loaded(&mut h);
    h.get_by_label_contains("finished: 1 of 1 call parsed · OK");
    h.get_by_label_contains("Server tools (1)");

    // Every call parses, but the .done copy differs from the deltas: an error finding, so the
    // headline says FAILED, as `check` does.
    let mismatch = dir.path().join("mismatch.sse");
    let body = concat!(
        "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"arguments\":\"\",\"call_id\":\"call_1\",\"name\":\"f\"}}\n\n",
        "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"{\\\"a\\\":1}\"}\n\n",
        "event: response.function_call_arguments.done\ndata: {\"type\":\"response.function_call_arguments.done\",\"item_id\":\"fc_1\",\"output_index\":0,\"arguments\":\"{\\\"a\\\":2}\"}\n\n",
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n",
    );
    std::fs::write(&mismatch, body).unwrap();
    act(&mut h, Action::OpenPath(mismatch, OpenTarget::Primary));
    wait_loaded(&mut h);
    assert!(!h.state().analysis().unwrap().all_ok());
    h.get_by_label_contains("finished: 1 of 1 call parsed · FAILED");

    // Arguments only in the .done events: the call carries them, and the headline says OK.
    let done_only = dir.path().join("done-only.sse");
    let body = concat!(
        "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"arguments\":\"\",\"call_id\":\"call_1\",\"name\":\"f\"}}\n\n",
        "event: response.function_call_arguments.done\ndata: {\"type\":\"response.function_call_arguments.done\",\"item_id\":\"fc_1\",\"output_index\":0,\"arguments\":\"{\\\"a\\\":2}\"}\n\n",
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n",
    );
    std::fs::write(&done_only, body).unwrap();
    act(&mut h, Action::OpenPath(done_only, OpenTarget::Primary));
    wait_loaded(&mut h);
    let a = h.state().analysis().unwrap();
    assert_eq!(a.calls[0].value(), Some(&serde_json::json!({"a": 2})));
    h.get_by_label_contains("finished: 1 of 1 call parsed · OK");
}

/// "Test a client": run a (wrong) client on the seed example in one read, see the matrix, and open
/// the failing case in Replay with the exact reads the client received.
#[test]
fn test_a_client_tab_runs_shows_the_matrix_and_opens_a_case() {
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Test a client").click();
    h.run();
    assert_eq!(h.state().settings.tab, Tab::TestClient);
    {
        let panel = &mut h.state_mut().settings.client_test;
        panel.command = "echo '[{\"name\":\"get_weather\",\"arguments\":{}}]'".into();
        panel.recordings = manifest_path("recordings/seed-example.ron");
        panel.variants = vec!["one-read".into()];
    }
    h.run();
    h.get_by_label("Run").click();
    let t0 = Instant::now();
    loop {
        h.step();
        if !h.state().client_test.is_running() {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "run did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    h.get_by_label("1 case: 0 pass, 1 fail, 0 error");
    // `echo` never asks for the stream: whatever it prints, it cannot have read this run's values.
    h.get_by_label_contains("did not request the stream");
    h.get_by_label("✗").click();
    h.run();
    wait_loaded(&mut h);
    assert_eq!(h.state().settings.tab, Tab::Replay);
    let a = h.state().analysis().unwrap();
    assert_eq!(a.chunks.len(), 1, "the one-read variant: one read");
    assert_eq!(a.calls.len(), 2);
    // "Your client" on the left: what it printed against the correct calls, the difference in red.
    h.get_by_label("Your client");
    h.get_by_label_contains("✗ 0: get_weather {}");
    // The case's own bytes: its values varied for this run (the key and the number stay).
    h.get_by_label_contains("correct: get_weather {\"city\":");
    assert!(
        h.query_by_label_contains("\"深圳\"").is_none(),
        "the recording's own values are not this run's"
    );
    h.get_by_label_contains("1 of the stream's 2 calls not printed");
    h.get_by_label("Naive strategies").click();
    h.run();
    assert!(!h.state().client_case.as_ref().unwrap().shown);
    h.get_by_label_contains("per-fragment: 0 of 10 fragments parse alone");
}

/// "Test a client" with a command the shell cannot find: no verdict at all (it used to count as
/// passes on the broken streams), one line saying why.
#[test]
fn test_a_client_tab_stops_on_a_command_that_cannot_start() {
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Test a client").click();
    h.run();
    {
        let panel = &mut h.state_mut().settings.client_test;
        // Past the tab's own check of the first word (a builtin first): the run finds it.
        panel.command = "cd . && sse-replay-no-such-client --flag".into();
        panel.recordings = manifest_path("recordings/quirk-truncated.ron");
        panel.variants = vec!["one-read".into(), "bytewise".into()];
    }
    h.run();
    h.get_by_label("Run").click();
    let t0 = Instant::now();
    loop {
        h.step();
        if !h.state().client_test.is_running() {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "run did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    assert!(
        h.state().client_test.last.is_none(),
        "no matrix, no verdicts"
    );
    h.get_by_label_contains(
        "could not start the client: cannot run sh: exit 127 (command not found)",
    );
}

/// "Test a client" with a client that prints no call on a dialect: the dialect is reported once as
/// not spoken instead of as failures.
#[test]
fn test_a_client_tab_reports_a_dialect_the_client_does_not_speak() {
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Test a client").click();
    h.run();
    {
        let panel = &mut h.state_mut().settings.client_test;
        panel.command = "echo '[]'".into();
        panel.recordings = manifest_path("recordings/openai-chat-weather.ron");
        panel.variants = vec!["one-read".into()];
    }
    h.run();
    h.get_by_label("Run").click();
    let t0 = Instant::now();
    loop {
        h.step();
        if !h.state().client_test.is_running() {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "run did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    // What `sse-replay test` says for the same run (it exits 1 with it): never a neutral
    // "0 cases".
    assert!(h.query_by_label_contains("0 cases").is_none());
    h.get_by_label_contains(
        "the client printed no call on any clean recording: it speaks none of the suite's dialects (--dialect runs one anyway); e.g. ",
    );
    h.get_by_label(
        "openai-chat: not spoken (1 case skipped) — pass --dialect openai-chat to include it",
    );
    // No case ran: no empty matrix (only the form's checkbox is named after the variant).
    assert_eq!(h.query_all_by_label("one-read").count(), 1);
    // A new run: the previous run's results are gone as soon as it starts, not when it ends.
    {
        let panel = &mut h.state_mut().settings.client_test;
        panel.command = "sleep 5".into();
        panel.timeout_secs = 1.0;
    }
    h.run();
    h.get_by_label("Run").click();
    h.step();
    assert!(h.state().client_test.is_running());
    assert!(h.state().client_test.last.is_none());
    assert!(h.query_by_label_contains("not spoken").is_none());
    assert!(h.query_by_label_contains("printed no call").is_none());
    let t0 = Instant::now();
    while h.state().client_test.is_running() {
        h.step();
        assert!(t0.elapsed() < Duration::from_secs(60), "run did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn manifest_path(rel: &str) -> String {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join(rel)
        .display()
        .to_string()
}

/// A non-streaming response opens with the "no accumulator needed" banner and no naive strategy;
/// the stub builder's "Non-streaming" checkbox builds the same calls as one complete response.
#[test]
fn a_non_streaming_response_opens_with_its_banner() {
    let mut h = harness(app_with(vec![]));
    h.run();
    let body = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/data/complete/openai-chat.json");
    act(&mut h, Action::OpenPath(body, OpenTarget::Primary));
    wait_loaded(&mut h);
    let a = h.state().analysis().unwrap();
    assert!(a.complete);
    assert_eq!(a.calls.len(), 2);
    assert!(a.strategies.is_empty());
    h.get_by_label(
        "not a stream: one complete response, 2 calls parsed directly — no accumulator needed",
    );
    h.get_by_label_contains("the naive strategies have nothing to get wrong");
    h.get_by_label_contains("finished: 2 of 2 calls parsed · OK");

    h.get_by_label("Stub builder").click();
    h.run();
    h.get_by_label("Non-streaming: the complete response for the same calls")
        .click();
    h.run();
    assert!(h.state().stub.non_streaming);
    let rec = h.state_mut().stub.recording().unwrap().clone();
    let doc: serde_json::Value = serde_json::from_slice(&rec.body()).unwrap();
    assert_eq!(doc["object"], "chat.completion");
    h.get_by_label("Open in player").click();
    h.run();
    wait_loaded(&mut h);
    let a = h.state().analysis().unwrap();
    assert!(a.complete);
    assert_eq!(a.calls.len(), 2);
    h.get_by_label(
        "not a stream: one complete response, 2 calls parsed directly — no accumulator needed",
    );
}

/// The typewriter preview in the accumulator card: at a cursor mid-call, jiter's partial value of
/// the arguments so far as a tree; a number cut short is flagged; "Type it out" plays the call.
#[test]
fn typewriter_preview_at_a_cursor_mid_call() {
    let mut h = seed_harness();
    let chunk = h.state().analysis().unwrap().fragments[1].pos.chunk;
    act(&mut h, Action::Seek(chunk));
    {
        let a = h.state().analysis().unwrap();
        assert_eq!(
            a.fragments_at(chunk),
            2,
            "call 0 has `{{\"cit` + `y\":\"深`"
        );
    }
    h.get_by_label("Typewriter preview");
    h.get_by_label("after fragment 1");
    h.get_by_label("city: ");
    h.get_by_label("\"深\"");
    assert!(h.query_by_label_contains("contradict").is_none());

    // "Type it out": the card types the call out again, from its first fragment to the cursor,
    // at the recorded timing; the cursor (and the rest of the replay) stays where it is.
    h.get_by_label("⏵ Type it out").click();
    h.step();
    h.step();
    {
        let v = h.state().view().unwrap();
        assert_eq!(v.cursor, chunk, "the cursor stays");
        assert!(!v.playing, "the replay is not played");
        assert!(v.typing.is_some(), "the card is typing");
    }
    h.get_by_label("⏸ Stop typing");
    assert!(
        h.query_by_label("after fragment 1").is_none(),
        "the card starts from the call's beginning"
    );
    common::step_until(&mut h, "the typing did not finish", |a| {
        a.view().is_some_and(|v| v.typing.is_none())
    });
    assert_eq!(h.state().view().unwrap().cursor, chunk);
    h.get_by_label("after fragment 1");
    h.get_by_label("⏵ Type it out");

    // A number cut short (`{"days":3` then `1}`): the preview shows 3, flagged as contradicted.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.ron");
    let spec = sse_replay_core::stub::StubSpec {
        calls: vec![sse_replay_core::stub::StubCall {
            id: "call_1".into(),
            name: "f".into(),
            arguments: r#"{"days":31}"#.into(),
        }],
        fragment_chars: vec![9, 2],
        ..Default::default()
    };
    sse_replay_core::recording::save(&path, &sse_replay_core::stub::build(&spec)).unwrap();
    act(&mut h, Action::OpenPath(path, OpenTarget::Primary));
    wait_loaded(&mut h);
    let chunk = h.state().analysis().unwrap().fragments[1].pos.chunk;
    act(&mut h, Action::Seek(chunk));
    h.get_by_label("days: ");
    h.get_by_label("3");
    // What the final arguments contradict is not known at that cursor (the live view could not
    // know it): only with hindsight, or once the stream has ended.
    assert!(h.query_by_label_contains("contradict").is_none());
    h.get_by_label("hindsight").click();
    h.run();
    h.get_by_label("✗ shows 1 value(s) the final arguments contradict");
}

/// `sse-replay FILE` shows that file: the Replay tab, whichever tab was last used.
#[test]
fn a_file_given_at_start_opens_on_replay() {
    let settings = Settings {
        tab: Tab::Recorder,
        ..Settings::default()
    };
    let app = sse_replay_app::App::new(
        settings,
        Box::new(sse_replay_app::ScriptedDialogs::default()),
    )
    .with_initial(Source::File(PathBuf::from(manifest_path(
        "recordings/seed-example.ron",
    ))));
    let mut h = harness(app);
    wait_loaded(&mut h);
    assert_eq!(h.state().settings.tab, Tab::Replay);
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    // Without a file the last tab stays (the seed opens in Replay behind it).
    let settings = Settings {
        tab: Tab::Recorder,
        ..Settings::default()
    };
    let app = sse_replay_app::App::new(
        settings,
        Box::new(sse_replay_app::ScriptedDialogs::default()),
    )
    .with_initial(Source::Seed);
    let mut h = harness(app);
    wait_loaded(&mut h);
    assert_eq!(h.state().settings.tab, Tab::Recorder);
}

fn run_client_test(h: &mut Harness<'_, App>) {
    h.get_by_label("Run").click();
    let t0 = Instant::now();
    loop {
        h.step();
        if !h.state().client_test.is_running() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "run did not finish"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
}

/// A command that does not exist stops at once with the CLI's line: no case runs (the shell's
/// exit 127 is never counted as a client that refuses broken streams).
#[test]
fn test_a_client_stops_at_once_on_a_command_that_does_not_exist() {
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Test a client").click();
    h.run();
    h.state_mut().settings.client_test.command = "no-such-client-program-4711 --stream".into();
    h.run();
    h.get_by_label("Run").click();
    h.step();
    h.step();
    assert!(!h.state().client_test.is_running());
    assert!(h.state().client_test.last.is_none(), "no case ran");
    h.get_by_label("cannot run the client: command not found: no-such-client-program-4711");
}

/// The CLI's options in the tab: dialects, a random seed shown and settable, jobs, speed, a JUnit
/// report and the working folder the command runs in.
#[test]
fn test_a_client_has_the_clis_options() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // A client only found from the working folder; it prints no calls.
    std::fs::write(work.join("client.sh"), "#!/bin/sh\necho '[]'\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(
            work.join("client.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    let junit = dir.path().join("report.xml");
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Test a client").click();
    h.run();
    {
        let f = &mut h.state_mut().settings.client_test;
        f.command = "./client.sh".into();
        f.working_dir = work.display().to_string();
        f.dialects = vec![
            sse_replay_core::dialect::DialectKind::AnthropicMessages
                .name()
                .into(),
        ];
        f.variants = vec!["random".into()];
        f.random_seed = Some(4242);
        f.jobs = 1;
        f.speed = 4.0;
        f.junit = junit.display().to_string();
    }
    h.run();
    h.get_by_label("Random seed");
    h.get_by_label("Parallel jobs");
    h.get_by_label("Speed (recorded)");
    h.get_by_label("JUnit report");
    h.get_by_label("Working folder");
    run_client_test(&mut h);
    let last = h.state().client_test.last.as_ref().expect("a run");
    assert!(!last.results.is_empty());
    assert_eq!(last.work.random_seed, 4242);
    for r in &last.results {
        let rec = &last.work.suite[r.id.recording];
        assert_eq!(
            rec.base.dialect,
            sse_replay_core::dialect::DialectKind::AnthropicMessages,
            "{}",
            rec.name
        );
        assert!(
            r.exit.is_some() && !r.start_failed,
            "the client ran: {:?}",
            r.outcome
        );
    }
    h.get_by_label_contains("random seed 4242");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuite"), "{xml}");
}

/// The stub builder offers every dialect and every quirk `stub --quirk` has; the title and the
/// preview follow the edits; a non-streaming stub says its calls are parsed directly.
#[test]
fn stub_builder_has_every_dialect_and_quirk_and_follows_the_edits() {
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Stub builder").click();
    h.run();
    h.get_by_label("Provider quirks").click();
    h.run();
    for quirk in sse_replay_core::quirk::Quirk::ALL {
        let name = quirk.name();
        assert!(
            h.query_all_by_label_contains(name).next().is_some(),
            "quirk {name} missing"
        );
    }
    h.get_by_label("Dialect").click();
    h.run();
    for k in sse_replay_core::dialect::DialectKind::ALL {
        h.get_by_label(k.title());
    }
    h.get_by_label(sse_replay_core::dialect::DialectKind::AnthropicMessages.title())
        .click();
    h.run();
    assert_eq!(
        h.state().stub.spec.dialect,
        sse_replay_core::dialect::DialectKind::AnthropicMessages
    );
    h.get_by_label_contains("anthropic-messages");
    // The title follows the calls until the user writes one.
    h.state_mut().stub.spec.calls[0].name = "get_forecast".into();
    h.run();
    assert!(
        h.state().stub.title().contains("get_forecast"),
        "{}",
        h.state().stub.title()
    );
    h.state_mut().stub.non_streaming = true;
    h.run();
    assert!(
        h.query_all_by_label_contains("parsed directly — no accumulator")
            .count()
            >= 2
    );
    assert!(
        h.query_by_label_contains("accumulated and parsed once")
            .is_none()
    );
    assert!(h.query_by_label_contains("per-fragment:").is_none());
}

/// The Recorder says which environment variables its `$VAR`s need and whether they are set (a
/// reference is shown, not masked: it is not the secret), and keeps a named list of saved
/// requests, written without their secrets.
#[test]
fn recorder_names_its_variables_and_saves_requests() {
    let mut h = harness(app_with(vec![]));
    h.run();
    h.get_by_label("Recorder").click();
    h.run();
    {
        let r = &mut h.state_mut().settings.recorder;
        r.headers[0].value = "Bearer $SSE_REPLAY_SURELY_UNSET_VAR_7".into();
        r.url = "https://example.invalid/v1/chat?key=$HOME".into();
    }
    h.run();
    h.get_by_label("$SSE_REPLAY_SURELY_UNSET_VAR_7 is not set");
    h.get_by_label("$HOME is set");
    // The reference itself is on screen (a secret value would be masked).
    assert!(
        h.query_all_by_value("Bearer $SSE_REPLAY_SURELY_UNSET_VAR_7")
            .count()
            >= 1
    );

    // Save the request under a name, change the form, load it back.
    h.state_mut().settings.recorder.save_name = "weather".into();
    h.state_mut()
        .settings
        .recorder
        .headers
        .push(sse_replay_app::recorder::HeaderRow {
            name: "x-api-key".into(),
            value: "sk-saved-secret-123456".into(),
            secret: true,
        });
    h.run();
    h.get_by_label("Save request").click();
    h.run();
    assert_eq!(h.state().settings.recorder.saved.len(), 1);
    h.state_mut().settings.recorder.url = "https://changed.invalid/".into();
    h.run();
    h.get_by_label("Saved requests").click();
    h.run();
    h.get_by_label("weather").click();
    h.run();
    assert_eq!(
        h.state().settings.recorder.url,
        "https://example.invalid/v1/chat?key=$HOME"
    );
    let text = ron::to_string(&h.state().settings).unwrap();
    assert!(text.contains("weather"), "{text}");
    assert!(!text.contains("sk-saved-secret-123456"), "{text}");
}

/// The stub builder greys out exactly the quirks `sse-replay stub` refuses for the chosen
/// dialect (the core's one table: it offered `args-in-start` and `crc-error` for Anthropic), and
/// a quirk set before the dialect changed is refused with the CLI's reason.
#[test]
fn stub_builder_offers_exactly_the_quirks_the_dialect_can_carry() {
    use egui_kittest::kittest::NodeT as _;
    use sse_replay_core::dialect::DialectKind;
    use sse_replay_core::quirk::{Quirk, Shape};
    let mut h = harness(app_with(vec![]));
    let mut offered_somewhere = std::collections::HashSet::new();
    h.run();
    h.get_by_label("Stub builder").click();
    h.run();
    h.get_by_label("Provider quirks").click();
    h.run();
    for dialect in DialectKind::ALL {
        h.state_mut().stub.spec.dialect = dialect;
        h.state_mut().stub.spec.quirks = Default::default();
        h.run();
        // Offered (enabled) exactly where the core's one check lets the stream carry it.
        let offered: Vec<Quirk> = Quirk::ALL
            .iter()
            .copied()
            .filter(|q| {
                let label = format!("{} — {}", q.name(), q.description());
                !h.get_by_label(&label).accesskit_node().is_disabled()
            })
            .collect();
        let spec = h.state().stub.spec.clone();
        assert_eq!(offered, Quirk::applicable_to(&spec), "{}", dialect.name());
        // The two calls of the form's example: the calls leave every quirk of the shape
        // something to show in.
        assert_eq!(
            offered,
            Quirk::applicable(Shape::of(&spec)),
            "{}",
            dialect.name()
        );
        offered_somewhere.extend(offered);
    }
    assert_eq!(
        offered_somewhere.len(),
        Quirk::ALL.len(),
        "{offered_somewhere:?}"
    );
    // What the form builds for each of them is the core builder's stream for the form's spec
    // (the one `sse-replay stub` builds, see the CLI's agreement walk), and it shows the quirk.
    for dialect in DialectKind::ALL {
        for quirk in Quirk::ALL.iter().copied() {
            let form = &mut h.state_mut().stub;
            form.spec.dialect = dialect;
            form.spec.quirks = Default::default();
            quirk.set(&mut form.spec.quirks, true);
            let Ok(spec) = form.current_spec() else {
                assert!(quirk.refusal_in(&form.spec).is_some(), "{}", quirk.name());
                continue;
            };
            let rec = form.recording().cloned().expect("a preview");
            assert_eq!(rec.chunks, sse_replay_core::stub::build(&spec).chunks);
            let a = sse_replay_core::analysis::Analysis::from_recording(
                &rec,
                Default::default(),
                Default::default(),
            );
            assert!(
                a.findings
                    .iter()
                    .any(|f| quirk.findings().contains(&f.kind)),
                "{} in {}",
                quirk.name(),
                dialect.name()
            );
        }
    }
    let anthropic = Shape {
        dialect: DialectKind::AnthropicMessages,
        framing: sse_replay_core::framing::Framing::Sse,
    };
    assert!(Quirk::ArgsInStart.refusal(anthropic).is_some());
    assert!(Quirk::CrcError.refusal(anthropic).is_some());
    // Set for OpenAI Chat, then the dialect changes: refused as `stub` refuses it.
    h.state_mut().stub.spec.dialect = DialectKind::OpenAiChat;
    Quirk::RepeatName.set(&mut h.state_mut().stub.spec.quirks, true);
    h.state_mut().stub.spec.dialect = DialectKind::AnthropicMessages;
    h.run();
    let err = h.state().stub.current_spec().unwrap_err();
    assert!(
        err.contains("quirk repeat-name exists only in openai-chat streams"),
        "{err}"
    );
}
