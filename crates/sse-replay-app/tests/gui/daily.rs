//! The app as a daily tool, through egui_kittest: the in-app file browser when no native dialog
//! can be shown, the event inspector (list, filter, detail), and the layout on a laptop screen.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{harness_sized, wait_loaded};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::{App, BUILTIN_NOTE, ScriptedDialogs, Settings, Source};

fn seed(dialogs: ScriptedDialogs, w: f32, h: f32) -> Harness<'static, App> {
    // egui_file's path and file-name fields carry no accessible name (not ours to label): the
    // check is off only where that browser is shown.
    let check = !dialogs.no_native;
    let app = App::new(Settings::default(), Box::new(dialogs)).with_initial(Source::Seed);
    let mut h = harness_sized(app, w, h, check);
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

#[test]
fn without_a_native_dialog_the_captures_folder_is_chosen_in_the_app() {
    let mut h = seed(ScriptedDialogs::without_native(), 1500.0, 940.0);
    h.get_by_label("Proxy").click();
    h.run();
    let before = h.state().settings.proxy.out_dir.clone();
    h.get_by_label("Choose…").click();
    h.run();
    assert!(
        h.state().builtin_dialog_open(),
        "the in-app folder browser opened"
    );
    assert_eq!(h.state().status.clone().unwrap().text, BUILTIN_NOTE);
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().builtin_dialog_open());
    assert_eq!(
        h.state().settings.proxy.out_dir,
        before,
        "cancel keeps the folder"
    );
}

fn row_shown(h: &Harness<'_, App>, n: u32) -> bool {
    let head = format!("e{n:<7} ");
    h.query_all_by(|node| node.label().is_some_and(|l| l.starts_with(&head)))
        .count()
        > 0
}

#[test]
fn the_event_list_filters_by_text_and_call_and_shows_the_selected_event() {
    let mut h = seed(ScriptedDialogs::default(), 1500.0, 940.0);
    let (total, second_call_events, first_tool_event) = {
        let a = h.state().analysis().unwrap();
        let fed = |e: &sse_replay_core::pipeline::EventRecord, call: u32| {
            (e.first_fragment..e.first_fragment + e.fragment_count)
                .any(|f| a.fragments[f as usize].call == call)
        };
        let second = a.events.iter().filter(|e| fed(e, 1)).count();
        let first = a.events.iter().position(|e| e.fragment_count > 0).unwrap() as u32;
        (a.events.len(), second, first)
    };
    assert!(second_call_events >= 2 && second_call_events < total);
    // Every event has a row (the seed is short), the counter says so.
    h.get_by_label(&format!("{total} of {total} events"));
    // The list shows the cursor's event (opened at the end).
    let at_cursor = {
        let a = h.state().analysis().unwrap();
        h.state().view().unwrap().current_event(a).unwrap()
    };
    assert!(row_shown(&h, at_cursor));
    // A text filter: the second call's name. The rows of the first call go away.
    h.state_mut().view_mut().unwrap().inspector.filter = "GET_TIME".into();
    h.run();
    h.get_by_label(&format!("{second_call_events} of {total} events"));
    assert!(!row_shown(&h, first_tool_event));
    // A regex that does not compile says so and filters nothing.
    {
        let st = &mut h.state_mut().view_mut().unwrap().inspector;
        st.filter = "get_(".into();
        st.regex = true;
    }
    h.run();
    h.get_by_label_contains("not a regex");
    h.get_by_label(&format!("{total} of {total} events"));
    // By call: the first call's events only.
    {
        let st = &mut h.state_mut().view_mut().unwrap().inspector;
        st.filter.clear();
        st.regex = false;
        st.call = Some(0);
    }
    h.run();
    assert!(row_shown(&h, first_tool_event));
    h.get_by_label(&format!(
        "{} of {total} events",
        total - second_call_events - {
            let a = h.state().analysis().unwrap();
            a.events.iter().filter(|e| e.fragment_count == 0).count()
        }
    ));
    // Click the first tool-call event: the detail pane shows its JSON, pretty-printed, with the
    // arguments piece it carried; the cursor moves to its read.
    let head = format!("e{first_tool_event:<7} ");
    h.get_by(|n| n.label().is_some_and(|l| l.starts_with(&head)))
        .click();
    h.run();
    let (chunk, piece) = {
        let a = h.state().analysis().unwrap();
        let e = &a.events[first_tool_event as usize];
        (
            e.chunk,
            a.fragment_text(&a.fragments[e.first_fragment as usize])
                .to_owned(),
        )
    };
    assert_eq!(
        h.state().view().unwrap().inspector.selected,
        Some(first_tool_event)
    );
    assert_eq!(h.state().view().unwrap().cursor, chunk);
    h.get_by_label(&format!("Event {first_tool_event}"));
    h.get_by_label("index 0 get_weather fed");
    assert!(h.query_all_by_label(&piece).count() >= 1);
    let escaped = serde_json::to_string(&piece).unwrap();
    let escaped = escaped[1..escaped.len() - 1].to_owned();
    // Pretty-printed (one key a line, indented) with the arguments.
    let pretty = h
        .query_all_by(|n| {
            n.value().is_some_and(|l| {
                l.contains("\"tool_calls\": [")
                    && l.contains("\n    {")
                    && l.contains(&format!("\"arguments\": \"{escaped}"))
            })
        })
        .count();
    assert_eq!(pretty, 1);
}

#[test]
fn at_1024_by_700_the_first_calls_checkpoints_are_visible_without_scrolling() {
    let h = seed(ScriptedDialogs::default(), 1024.0, 700.0);
    let viewport = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1024.0, 700.0));
    for label in [
        "① reassembled = original, verbatim",
        "② every fragment contiguous in the original",
        "③ only the first fragment carries id and name",
    ] {
        // The first call's row is the first of the two.
        let node = h.query_all_by_label(label).next().unwrap();
        let r = node.rect();
        // Inside the window and not clipped away by the cards' scroll area.
        assert!(viewport.contains_rect(r), "{label} at {r:?}");
        // The lower area's tab row is its top.
        let panel_bottom = h.get_by_label("Event list").rect().top();
        assert!(
            r.bottom() <= panel_bottom,
            "{label} at {r:?} under the lower panels ({panel_bottom})"
        );
    }
    // The comparison keeps at least half of the height: the lower area starts below the middle.
    let lower_top = h.get_by_label("Timeline").rect().top();
    assert!(lower_top >= 350.0, "lower panels start at {lower_top}");
}

#[test]
fn timeline_lanes_use_the_cards_call_names() {
    let mut h = seed(ScriptedDialogs::default(), 1500.0, 940.0);
    h.get_by_label("Timeline").click();
    h.run();
    // The lane's accessible text (its hover text) names the call as the cards do: key, then name.
    h.get_by_label_contains("index 0 get_weather: 5 fragments");
    h.get_by_label_contains("index 1 get_time: 5 fragments");
}

#[test]
fn a_call_card_folds_to_one_line() {
    let mut h = seed(ScriptedDialogs::default(), 1500.0, 940.0);
    let verbatim = "① reassembled = original, verbatim";
    assert_eq!(h.query_all_by_label(verbatim).count(), 2);
    h.query_all_by_label("▾").next().unwrap().click();
    h.run();
    // The first card keeps its one line (key, id, name, counters); its body is gone.
    assert_eq!(h.query_all_by_label(verbatim).count(), 1);
    h.get_by_label("get_weather");
    h.get_by_label("▸").click();
    h.run();
    assert_eq!(h.query_all_by_label(verbatim).count(), 2);
}

#[test]
fn the_transport_counters_are_not_cut_on_a_laptop_screen() {
    // Thousands of chunks, events and fragments: long counters.
    let recording = Box::new(sse_replay_core::generate::large_recording(400));
    let name = "large (generated)".to_owned();
    let app = App::new(Settings::default(), Box::new(ScriptedDialogs::default()))
        .with_initial(Source::Memory { name, recording });
    let mut h = harness_sized(app, 1024.0, 700.0, true);
    wait_loaded(&mut h);
    let (events, frags) = {
        let a = h.state().analysis().unwrap();
        (a.events.len(), a.fragments.len())
    };
    assert!(events > 10_000, "{events}");
    let text = format!("events {events}/{events} · fragments {frags}/{frags}");
    let node = h.get_by_label_contains(&text);
    assert!(node.rect().right() <= 1024.0, "{:?}", node.rect());
}

#[test]
fn hovering_a_timeline_fragment_shows_its_text_and_time() {
    let mut h = seed(ScriptedDialogs::default(), 1500.0, 940.0);
    h.get_by_label("Timeline").click();
    h.run();
    // Where the first call's third fragment is drawn: the lane's track starts 150 px in and ends
    // 10 px before the lane's right edge; zoom 1 spans the whole stream.
    let (t, total, text, chunk, ms) = {
        let d = &h.state().doc.as_ref().unwrap().loaded;
        let (a, tables) = (&d.analysis, &d.derived);
        let f = &a.fragments[a.calls[0].fragments[2] as usize];
        let last = a.chunks.len() as u32 - 1;
        let clock = |k| sse_replay_app::ViewState::clock_of(a, tables, k);
        (
            clock(f.pos.chunk),
            clock(last).max(1.0),
            a.fragment_text(f).to_owned(),
            f.pos.chunk,
            format!("{:.1} ms", f.pos.t_micros as f64 / 1000.0),
        )
    };
    let lane = h
        .get_by_label_contains("index 0 get_weather: 5 fragments")
        .rect();
    let (left, right) = (lane.left() + 150.0, lane.right() - 10.0);
    let x = left + (t / total) as f32 * (right - left);
    let tip = format!("fragment 2 of index 0 get_weather: {text} at {ms} (read {chunk})");
    assert_eq!(h.query_all_by_label_contains(&tip).count(), 0);
    h.input_mut()
        .events
        .push(egui::Event::PointerMoved(egui::pos2(x, lane.center().y)));
    h.run();
    // The lane's text and its tooltip.
    assert!(h.query_all_by_label_contains(&tip).count() >= 1);
}

#[test]
fn saving_onto_an_existing_file_in_the_in_app_browser_asks_first() {
    use egui::accesskit::Role;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("calls.json");
    std::fs::write(&target, "keep me").unwrap();
    let mut h = seed(ScriptedDialogs::without_native(), 1500.0, 940.0);
    h.state_mut()
        .actions
        .push(sse_replay_app::Action::ExportCalls(
            sse_replay_core::export::Format::Json,
        ));
    h.run();
    assert!(h.state().builtin_dialog_open());
    // The browser's file-name field (the other text input holds the folder, an absolute path).
    let set_name = |h: &mut Harness<'_, App>| {
        let field = h.get_by(|n| {
            n.role() == Role::TextInput
                && n.value()
                    .is_some_and(|v| !v.is_empty() && !v.starts_with('/'))
        });
        field.focus();
        h.run();
        let field = h.get_by(|n| {
            n.role() == Role::TextInput
                && n.value()
                    .is_some_and(|v| !v.is_empty() && !v.starts_with('/'))
        });
        field.set_text_value_accesskit(target.to_str().unwrap());
        h.run();
        h.key_press(egui::Key::Enter);
        h.run();
    };
    set_name(&mut h);
    // Not written yet: the app asks.
    h.get_by_label_contains("exists. Replace it?");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    h.get_by_label("Cancel").click();
    h.run();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    // Again, and Replace: written.
    h.state_mut()
        .actions
        .push(sse_replay_app::Action::ExportCalls(
            sse_replay_core::export::Format::Json,
        ));
    h.run();
    set_name(&mut h);
    h.get_by_label("Replace").click();
    h.run();
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(written.contains("get_weather"), "{written}");
}

#[test]
fn the_byte_view_scrolls_sideways_and_its_gutter_stays() {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("recordings/openai-chat-weather.ron");
    let mut app = App::new(Settings::default(), Box::new(ScriptedDialogs::default()))
        .with_initial(Source::File(path));
    app.settings.lower_view = sse_replay_app::event_inspector::LowerView::Bytes;
    let mut h = harness_sized(app, 1500.0, 940.0, true);
    wait_loaded(&mut h);
    let last = h.state().view().unwrap().cursor;
    let head = format!("{last:>6} ");
    let gutter = |h: &Harness<'_, App>| {
        h.get_by(|n| n.label().is_some_and(|l| l.starts_with(&head)))
            .rect()
    };
    let before = gutter(&h);
    assert_eq!(h.state().view().unwrap().inspector.bytes_x, 0.0);
    // A sideways swipe over the rows (content moves left).
    let at = egui::pos2(before.right() + 300.0, before.center().y);
    h.input_mut().events.push(egui::Event::PointerMoved(at));
    h.input_mut().events.push(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(-200.0, 0.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: egui::Modifiers::NONE,
    });
    h.run();
    assert!(h.state().view().unwrap().inspector.bytes_x > 0.0);
    // The read number and time did not move.
    assert_eq!(gutter(&h), before);
}

/// A recording without timing (a raw body, an import without times) shows no made-up times:
/// "—" in the event list, the bytes and the transport, never "0.0 ms".
#[test]
fn an_untimed_recording_shows_no_times() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body.sse");
    let seed = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
    std::fs::write(&path, seed.body()).unwrap();
    let app = App::new(Settings::default(), Box::new(ScriptedDialogs::default()))
        .with_initial(Source::File(path));
    let mut h = harness_sized(app, 1500.0, 940.0, true);
    wait_loaded(&mut h);
    assert!(!h.state().analysis().unwrap().source.timing_known);
    h.get_by_label("Event list").click();
    h.run();
    let rows: Vec<String> = h
        .query_all_by(|n| {
            n.label().is_some_and(|l| {
                let mut c = l.chars();
                c.next() == Some('e') && c.next().is_some_and(|d| d.is_ascii_digit())
            })
        })
        .map(|n| {
            use egui_kittest::kittest::NodeT as _;
            n.accesskit_node().label().unwrap_or_default()
        })
        .collect();
    assert!(!rows.is_empty());
    for r in &rows {
        assert!(!r.contains(" ms "), "{r}");
        assert!(r.contains('—'), "{r}");
    }
    h.get_by_label("Bytes as received").click();
    h.run();
    assert_eq!(h.query_all_by_label_contains("0.0 ms").count(), 0);
    h.get_by_label_contains("no timing");
}

/// A click on the seek track moves the cursor there (the track, not only the handle).
#[test]
fn clicking_the_seek_track_seeks() {
    use egui::accesskit::Role;
    let mut h = seed(ScriptedDialogs::default(), 1500.0, 940.0);
    h.state_mut().actions.push(sse_replay_app::Action::End);
    h.run();
    let last = h.state().view().unwrap().cursor;
    assert!(last > 8);
    let track = h
        .query_all_by_role(Role::Slider)
        .find(|n| {
            use egui_kittest::kittest::NodeT as _;
            n.accesskit_node().label().as_deref() == Some("chunk")
        })
        .unwrap()
        .rect();
    // A quarter of the way along the track: the pointer arrives, then a quick click (pressed and
    // released within one frame, as a real mouse click usually is).
    let at = egui::pos2(track.left() + track.width() * 0.25, track.center().y);
    h.input_mut().events.push(egui::Event::PointerMoved(at));
    h.step();
    for pressed in [true, false] {
        h.input_mut().events.push(egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    h.step();
    h.run();
    let cursor = h.state().view().unwrap().cursor;
    assert!(
        cursor > 0 && cursor < last / 2,
        "cursor {cursor} after clicking a quarter along 0..={last}"
    );
}

/// The event list shows each SSE event's `id` and `retry`, and the selected event copies as it
/// was received or as pretty JSON.
#[test]
fn the_event_list_shows_id_and_retry_and_copies_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ids.sse");
    std::fs::write(
        &path,
        concat!(
            "id: ev-1\nretry: 2500\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n",
            "id: ev-2\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        ),
    )
    .unwrap();
    let app = App::new(Settings::default(), Box::new(ScriptedDialogs::default()))
        .with_initial(Source::File(path));
    let mut h = harness_sized(app, 1500.0, 940.0, true);
    wait_loaded(&mut h);
    h.get_by_label("Event list").click();
    h.run();
    let row = |h: &egui_kittest::Harness<'_, App>, n: u32| -> String {
        use egui_kittest::kittest::NodeT as _;
        let head = format!("e{n:<7} ");
        h.query_all_by(|node| node.label().is_some_and(|l| l.starts_with(&head)))
            .next()
            .map(|node| node.accesskit_node().label().unwrap_or_default())
            .unwrap_or_default()
    };
    let first = row(&h, 0);
    assert!(first.contains("ev-1") && first.contains("2500"), "{first}");
    let second = row(&h, 1);
    assert!(second.contains("ev-2"), "{second}");
    // Select the first event and copy it both ways.
    h.query_all_by(|node| node.label().is_some_and(|l| l.starts_with("e0 ")))
        .next()
        .unwrap()
        .click();
    h.run();
    let copied = |h: &mut egui_kittest::Harness<'_, App>, label: &str| -> String {
        h.get_by_label(label).click();
        h.step();
        h.output()
            .platform_output
            .commands
            .iter()
            .rev()
            .find_map(|c| match c {
                egui::OutputCommand::CopyText(t) => Some(t.clone()),
                _ => None,
            })
            .expect("copied")
    };
    let raw = copied(&mut h, "Copy raw");
    assert!(raw.starts_with("id: ev-1\nretry: 2500\ndata: {"), "{raw}");
    let pretty = copied(&mut h, "Copy pretty");
    assert!(pretty.starts_with("{\n  \"choices\""), "{pretty}");
}
