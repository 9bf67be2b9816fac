//! Honest state in the app, through egui_kittest:
//!
//! - a stream still arriving (the Recorder following a live response that pauses mid-call) says
//!   "streaming — N calls so far, M in progress", with no verdict and no end-of-stream finding;
//!   the verdict comes once it has ended;
//! - at a Replay cursor before the end no end-of-stream finding shows;
//! - zero calls is a warning that says what happened, never a green success.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use common::{app, harness, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::headline::{self, Tone};
use sse_replay_app::{Action, App, OpenTarget};
use sse_replay_core::dialect::DialectKind;

fn open(h: &mut Harness<'_, App>, path: PathBuf) {
    h.state_mut()
        .actions
        .push(Action::OpenPath(path, OpenTarget::Primary));
    h.run();
    step_until(h, "the file did not load", |a| {
        !a.is_loading() && a.doc.is_some()
    });
}

/// The headline's tone as the accumulator panel colours it, at the cursor, for an ended stream.
fn tone(h: &Harness<'_, App>) -> Tone {
    let doc = h.state().doc.as_ref().unwrap();
    let a = &doc.loaded.analysis;
    headline::headline(a, &doc.loaded.derived, doc.view.cursor, false).tone
}

const TEXT_ANSWER: &str = concat!(
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"It is sunny.\"},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: [DONE]\n\n",
);

#[test]
fn zero_calls_is_a_warning_that_says_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("answer.sse");
    std::fs::write(&p, TEXT_ANSWER).unwrap();
    let mut h = harness(app());
    open(&mut h, p);
    h.get_by_label("no tool calls — the stream ended normally without one (a text answer?)");
    assert!(h.query_by_label_contains("finished:").is_none());
    assert_eq!(tone(&h), Tone::Warn);
    // The wrong dialect forced: what did not match, and what the events look like.
    h.state_mut()
        .actions
        .push(Action::SetDialect(Some(DialectKind::AnthropicMessages)));
    h.run();
    step_until(&mut h, "the dialect change did not land", |a| {
        !a.is_loading()
            && a.analysis()
                .is_some_and(|x| x.dialect == DialectKind::AnthropicMessages)
    });
    h.get_by_label(
        "no tool calls found — events did not match the Anthropic Messages dialect; detected: OpenAI Chat Completions",
    );
    assert_eq!(tone(&h), Tone::Warn);
    assert!(h.query_by_label_contains("0 of 0").is_none());
}

#[test]
fn no_end_of_stream_finding_before_the_end() {
    let mut h = harness(app());
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("recordings/quirk-truncated.ron");
    open(&mut h, p);
    h.get_by_label_contains("ended-without-finish");
    h.get_by_label_contains("FAILED");
    h.state_mut().actions.push(Action::Home);
    h.run();
    assert!(h.query_by_label_contains("ended-without-finish").is_none());
    assert!(h.query_by_label_contains("incomplete-call").is_none());
    assert!(h.query_by_label_contains("FAILED").is_none());
    h.get_by_label_contains("streaming — ");
}

/// A server that sends the response head and the first part of a stream (one call cut inside
/// its arguments), then waits for `release` before sending the rest and closing.
fn pausing_server(first: &'static str, rest: &'static str) -> (String, mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (release, released) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        // The request: headers, then a small body; read what is there.
        let mut buf = [0u8; 4096];
        s.set_read_timeout(Some(Duration::from_millis(500))).ok();
        // How much arrived does not matter: the test only needs the request gone.
        let _read = s.read(&mut buf);
        let chunk = |s: &mut std::net::TcpStream, text: &str| {
            write!(s, "{:x}\r\n{text}\r\n", text.len()).ok();
            s.flush().ok();
        };
        s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        ).ok();
        chunk(&mut s, first);
        released.recv_timeout(Duration::from_secs(30)).ok();
        chunk(&mut s, rest);
        s.write_all(b"0\r\n\r\n").ok();
        s.flush().ok();
    });
    (format!("http://{addr}/v1/chat/completions"), release)
}

#[test]
fn a_live_stream_is_streaming_until_it_ends() {
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Shen\"}}]},\"finish_reason\":null}]}\n\n";
    let rest = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"zhen\\\"}\"}}]},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let (url, release) = pausing_server(first, rest);
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(app());
    h.run();
    {
        let r = &mut h.state_mut().settings.recorder;
        r.url = url;
        r.headers.clear();
        r.body = "{}".into();
        r.out_dir = dir.path().join("captures");
    }
    h.get_by_label("Recorder").click();
    h.run();
    h.get_by_label("⏺ Start").click();
    h.step();
    h.get_by_label("Replay").click();
    h.step();
    step_until(&mut h, "the first part did not arrive", |a| {
        a.recorder.is_running()
            && !a.is_loading()
            && a.analysis().is_some_and(|x| x.body.len() == first.len())
    });
    // Live: no verdict, the open call in progress with its partial arguments, no end-of-stream
    // finding (the partial analysis holds ended-without-finish and incomplete-call).
    let a = h.state().analysis().unwrap();
    assert!(
        a.findings
            .iter()
            .any(|f| f.kind == sse_replay_core::findings::FindingKind::EndedWithoutFinish),
        "the partial analysis has the end-of-stream findings"
    );
    h.get_by_label("● live");
    h.get_by_label("streaming — 1 call so far, 1 in progress");
    h.get_by_label("in progress");
    // The call card's partial arguments (the event inspector's list and detail pane show the
    // same piece: switch it to the byte view, where the piece is still JSON-escaped).
    h.get_by_label("Bytes as received").click();
    h.step();
    h.step();
    h.get_by_label_contains("{\"city\":\"Shen");
    for absent in [
        "finished:",
        "FAILED",
        "ended-without-finish",
        "incomplete-call",
        "the complete arguments",
        // The naive panel's verdict waits for the end too.
        "differs from the correct calls",
        "same calls as the accumulator",
    ] {
        assert!(
            h.query_by_label_contains(absent).is_none(),
            "{absent:?} shown while the stream is arriving"
        );
    }
    // The rest arrives and the stream ends: now the verdict.
    release.send(()).unwrap();
    step_until(&mut h, "the stream did not end", |a| {
        !a.recorder.is_running()
            && !a.is_loading()
            && a.analysis()
                .is_some_and(|x| x.body.len() == first.len() + rest.len())
    });
    h.get_by_label("finished: 1 of 1 call parsed · OK");
    assert!(h.query_by_label("● live").is_none());
    assert!(h.query_by_label_contains("streaming —").is_none());
    assert!(h.query_by_label_contains("ended-without-finish").is_none());
}

/// A complete (non-streaming) response: its header names it one JSON document (not "one chunk
/// per event"), and its call cards show what was read, never "not started yet" beside a result.
#[test]
fn a_complete_response_is_not_framed_as_a_stream() {
    let mut h = harness(app());
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/data/complete/openai-chat.json");
    open(&mut h, p);
    assert!(h.state().analysis().unwrap().complete);
    h.state_mut().actions.push(Action::Home);
    h.run();
    h.get_by_label_contains("one JSON document (not streamed)");
    assert!(h.query_by_label_contains("one chunk per event").is_none());
    assert!(h.query_by_label_contains("not started yet").is_none());
    assert_eq!(
        h.query_all_by_label("read whole from the complete response")
            .count(),
        2
    );
    h.get_by_label_contains("finished: 2 of 2 calls parsed · OK");
}

/// A server that sends the response head, then one of `writes` each time `step` receives, and
/// closes after the last.
fn stepping_server(writes: Vec<Vec<u8>>) -> (String, mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (step, steps) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let mut buf = [0u8; 4096];
        s.set_read_timeout(Some(Duration::from_millis(500))).ok();
        let _request = s.read(&mut buf);
        s.set_nodelay(true).ok();
        s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        ).ok();
        s.flush().ok();
        for w in writes {
            if steps.recv_timeout(Duration::from_secs(60)).is_err() {
                return;
            }
            write!(s, "{:x}\r\n", w.len()).ok();
            s.write_all(&w).ok();
            s.write_all(b"\r\n").ok();
            s.flush().ok();
        }
        steps.recv_timeout(Duration::from_secs(60)).ok();
        s.write_all(b"0\r\n\r\n").ok();
        s.flush().ok();
    });
    (format!("http://{addr}/v1/chat/completions"), step)
}

/// Every text the comparison shows (the naive panel, then the accumulator's), in drawing order:
/// labels, buttons, and the values of other widgets.
fn comparison_texts(h: &Harness<'_, App>) -> Vec<String> {
    use egui::accesskit::Role;
    use egui_kittest::kittest::NodeT as _;
    fn texts(n: egui_kittest::Node<'_>, out: &mut Vec<String>) {
        let ak = n.accesskit_node();
        let text = if ak.role() == Role::Label {
            ak.value()
        } else {
            ak.label().or_else(|| ak.value())
        };
        if let Some(t) = text.filter(|t| !t.is_empty()) {
            out.push(t);
            if ak.role() == Role::Label {
                return;
            }
        }
        for c in n.children() {
            texts(c, out);
        }
    }
    fn panes(n: egui_kittest::Node<'_>, out: &mut Vec<Vec<String>>) {
        for c in n.children() {
            if c.accesskit_node().role() == Role::Pane {
                let mut t = Vec::new();
                texts(c, &mut t);
                out.push(t);
            } else {
                panes(c, out);
            }
        }
    }
    let mut all = Vec::new();
    panes(h.root(), &mut all);
    let mut out = Vec::new();
    for heading in ["Naive", "Accumulator (correct)"] {
        let pane = all
            .iter()
            .find(|p| p.iter().any(|t| t == heading))
            .unwrap_or_else(|| panic!("no {heading} pane"));
        out.push(format!("--- {heading}"));
        out.extend(pane.iter().cloned());
    }
    out
}

/// The strategies compared: the fragment ones, one that emits mid-stream, and a per-read one.
const COMPARED: [sse_replay_core::naive::Strategy; 5] = [
    sse_replay_core::naive::Strategy::PerFragment,
    sse_replay_core::naive::Strategy::ConcatFields,
    sse_replay_core::naive::Strategy::NextIndexDone,
    sse_replay_core::naive::Strategy::ParseWhenValid,
    sse_replay_core::naive::Strategy::PerReadUtf8,
];

/// What the comparison shows for each compared strategy, the first call card folded.
fn snapshot(h: &mut Harness<'_, App>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for s in COMPARED {
        h.state_mut().actions.push(Action::SelectStrategy(s));
        h.run();
        out.push(comparison_texts(h));
    }
    out
}

fn fold_first_card(h: &mut Harness<'_, App>) {
    let clicked = match h.query_all_by_label("▾").next() {
        Some(fold) => {
            fold.click();
            true
        }
        None => false,
    };
    if clicked {
        h.run();
    }
}

/// The live view (Recorder → Watch in Replay) is exactly what Replay shows for the same bytes at
/// the same cursor, read by read: the folded card's header, the naive panel (no call a strategy
/// only takes as finished because the stream ended), the open card's preview.
#[test]
fn the_live_view_is_what_replay_shows_at_the_same_cursor() {
    let spec = sse_replay_core::stub::StubSpec {
        minimal: false,
        read_bytes: None,
        ..sse_replay_core::stub::seed_example()
    };
    let built = sse_replay_core::stub::build(&spec);
    let writes: Vec<Vec<u8>> = built.chunks.iter().map(|c| c.bytes.clone()).collect();
    let n = writes.len();
    let (url, step) = stepping_server(writes.clone());
    let dir = tempfile::tempdir().unwrap();
    let mut live = harness(app());
    live.run();
    {
        let r = &mut live.state_mut().settings.recorder;
        r.url = url;
        r.headers.clear();
        r.body = "{}".into();
        r.out_dir = dir.path().join("captures");
    }
    live.get_by_label("Recorder").click();
    live.run();
    live.get_by_label("⏺ Start").click();
    live.step();
    live.get_by_label("Replay").click();
    live.step();
    let mut seen: Vec<(u32, Vec<Vec<String>>)> = Vec::new();
    let mut folded = false;
    for (i, _) in writes.iter().enumerate() {
        step.send(()).unwrap();
        let want: usize = writes[..=i].iter().map(Vec::len).sum();
        step_until(&mut live, "the write did not arrive", |a| {
            !a.is_loading() && a.analysis().is_some_and(|x| x.body.len() == want)
        });
        if i + 1 == n {
            break; // the last write: the stream is still open until the server closes it
        }
        if !folded && live.query_all_by_label("▾").next().is_some() {
            fold_first_card(&mut live);
            folded = true;
        }
        let cursor = live.state().view().unwrap().cursor;
        assert_eq!(
            cursor as usize,
            live.state().analysis().unwrap().chunks.len() - 1
        );
        live.get_by_label("● live");
        let shot = snapshot(&mut live);
        seen.push((cursor, shot));
    }
    assert!(folded, "a card was folded");
    step.send(()).unwrap();
    step_until(&mut live, "the stream did not end", |a| {
        !a.recorder.is_running() && !a.is_loading()
    });
    let rec = live.state().recorder.recording().unwrap().clone();
    assert_eq!(rec.body(), built.body());
    assert_eq!(rec.chunks.len(), n, "one read per write");

    // Replay of the same bytes.
    let mut replay = harness(app().with_initial(sse_replay_app::Source::Memory {
        name: "the same bytes".into(),
        recording: Box::new(rec),
    }));
    step_until(&mut replay, "replay did not load", |a| a.doc.is_some());
    replay.state_mut().actions.push(Action::Home);
    replay.run();
    let mut folded = false;
    for (cursor, live_shot) in &seen {
        replay.state_mut().actions.push(Action::Seek(*cursor));
        replay.run();
        if !folded && replay.query_all_by_label("▾").next().is_some() {
            fold_first_card(&mut replay);
            folded = true;
        }
        let shot = snapshot(&mut replay);
        for (s, (l, r)) in COMPARED.iter().zip(live_shot.iter().zip(&shot)) {
            assert_eq!(
                l,
                r,
                "at chunk {cursor}, strategy {}: live (left) and Replay (right) differ",
                s.name()
            );
        }
    }
}

/// A broken stream (cut before its end): a strategy that produced exactly the accumulator's
/// calls is not said to differ from them; the stream is what failed.
#[test]
fn a_strategy_that_matches_a_broken_stream_is_not_blamed() {
    let mut h = harness(app());
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("recordings/quirk-truncated.ron");
    open(&mut h, p);
    h.state_mut().actions.push(Action::SelectStrategy(
        sse_replay_core::naive::Strategy::NextIndexDone,
    ));
    h.run();
    h.get_by_label("✓ same as the accumulator — the stream itself is broken");
    assert!(
        h.query_by_label_contains("differs from the correct calls")
            .is_none()
    );
    // One that did worse still differs.
    h.state_mut().actions.push(Action::SelectStrategy(
        sse_replay_core::naive::Strategy::Overwrite,
    ));
    h.run();
    h.get_by_label_contains("differs from the correct calls");
}

/// A stream that ends without its finish is never called "finished": the headline names how it
/// ended (the core's decision), opened from a file as when recorded live. Once a live stream has
/// ended, no label says it is live any more: not the badge, the header, the status line or the
/// Recorder tab.
#[test]
fn a_broken_stream_is_not_finished_and_live_labels_end_with_it() {
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Shen\"}}]},\"finish_reason\":null}]}\n\n";
    // No finish reason, no [DONE]: the stream is cut short.
    let rest = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"zhen\\\"}\"}}]},\"finish_reason\":null}]}\n\n";
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.sse");
    std::fs::write(&cut, format!("{first}{rest}")).unwrap();
    let mut h = harness(app());
    open(&mut h, cut);
    h.get_by_label("ended without finish (truncated): 1 of 1 call parsed · FAILED");
    assert!(h.query_by_label_contains("finished:").is_none());

    let (url, release) = pausing_server(first, rest);
    {
        let r = &mut h.state_mut().settings.recorder;
        r.url = url;
        r.headers.clear();
        r.body = "{}".into();
        r.out_dir = dir.path().join("captures");
    }
    h.get_by_label("Recorder").click();
    h.run();
    h.get_by_label("⏺ Start").click();
    h.step();
    step_until(&mut h, "the first part did not arrive", |a| {
        a.recorder.is_running()
            && !a.is_loading()
            && a.analysis().is_some_and(|x| x.body.len() == first.len())
    });
    h.get_by_label("The Replay tab shows this recording as it arrives.");
    h.get_by_label("Replay").click();
    h.run();
    h.get_by_label("● live");
    assert_eq!(
        h.state().status.as_ref().map(|s| s.text.as_str()),
        Some("Showing the stream as it arrives")
    );
    release.send(()).unwrap();
    step_until(&mut h, "the stream did not end", |a| {
        !a.recorder.is_running()
            && !a.is_loading()
            && a.analysis()
                .is_some_and(|x| x.body.len() == first.len() + rest.len())
    });
    h.get_by_label("ended without finish (truncated): 1 of 1 call parsed · FAILED");
    assert!(h.query_by_label_contains("finished:").is_none());
    assert!(h.query_by_label("● live").is_none());
    assert!(h.query_by_label_contains("live recording").is_none());
    h.get_by_label_contains("recorded live");
    let status = h.state().status.clone().unwrap().text;
    assert_eq!(
        status,
        "The stream has ended: ended without finish (truncated)"
    );
    h.get_by_label("Recorder").click();
    h.run();
    assert!(
        h.query_by_label("The Replay tab shows this recording as it arrives.")
            .is_none()
    );
    h.get_by_label("The Replay tab shows this recording.");
}
