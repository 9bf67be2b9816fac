//! AWS Bedrock in the app: a binary ConverseStream recording opens auto-detected, the header names
//! the framing and the dialect ("AWS event stream → …"), the dialect is in the picker, the event
//! inspector shows a frame's headers and payload, and the raw view lays frames out by offset.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::PathBuf;

use common::{app_with, harness, wait_loaded};
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::raw_view::FramePart;
use sse_replay_app::{Action, Source};
use sse_replay_core::dialect::DialectKind;

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(rel)
}

#[test]
fn a_binary_bedrock_stream_is_detected_named_and_inspectable() {
    let ron = repo("recordings/bedrock-converse-weather.ron");
    let mut app = app_with(vec![]).with_initial(Source::File(ron));
    app.settings.lower_view = sse_replay_app::event_inspector::LowerView::Events;
    let mut h = harness(app);
    wait_loaded(&mut h);
    h.get_by_label("AWS Bedrock ConverseStream");
    assert!(h.query_by_label("(guessed)").is_none());
    h.get_by_label_contains("AWS event stream → AWS Bedrock ConverseStream (recorded reads)");
    h.get_by_label_contains("finished: 2 of 2 calls parsed");
    let a = h.state().analysis().unwrap();
    assert_eq!(a.calls.len(), 2);
    // The event inspector's detail: the frame at the cursor, its headers and its payload.
    h.get_by_label_contains("\":event-type\": \"metadata\"");
    h.get_by_label_contains("\"payload\": {");
}

#[test]
fn bedrock_is_in_the_dialect_picker_and_can_be_forced_on_decoded_events() {
    let jsonl = repo("tests/data/bedrock/json/bedrock-json-other-tool.1.chunks.txt");
    let mut h = harness(app_with(vec![]).with_initial(Source::File(jsonl)));
    wait_loaded(&mut h);
    h.get_by_label("AWS Bedrock ConverseStream");
    assert_eq!(h.state().analysis().unwrap().calls[0].name, "get-weather");
    // Forced to another dialect, nothing is read; picked again from the list, the call is back.
    h.state_mut()
        .actions
        .push(Action::SetDialect(Some(DialectKind::OpenAiChat)));
    h.run();
    wait_loaded(&mut h);
    assert!(h.state().analysis().unwrap().calls.is_empty());
    h.get_by_value("forced").click();
    h.run();
    h.get_by_label("AWS Bedrock ConverseStream").click();
    h.run();
    wait_loaded(&mut h);
    h.get_by_label("(forced)");
    assert_eq!(h.state().analysis().unwrap().calls.len(), 1);
}

#[test]
fn the_raw_view_lays_frames_out_by_offset() {
    let ron = repo("recordings/bedrock-converse-weather.ron");
    let mut app = app_with(vec![]).with_initial(Source::File(ron));
    app.settings.lower_view = sse_replay_app::event_inspector::LowerView::Bytes;
    let mut h = harness(app);
    wait_loaded(&mut h);
    let a = h.state().analysis().unwrap();
    // Each read is one frame here: its prelude, its headers, its payload, its CRC.
    for (k, c) in a.chunks.iter().enumerate() {
        let segs = sse_replay_app::raw_view::frame_segments(a, c.start..c.end);
        let parts: Vec<FramePart> = segs.iter().map(|s| s.part).collect();
        assert_eq!(
            parts,
            [
                FramePart::Binary,
                FramePart::Headers,
                FramePart::Payload,
                FramePart::Binary
            ],
            "read {k}: {segs:?}"
        );
        assert_eq!(segs[0].frame_start, Some(c.start));
        assert_eq!(segs[0].range.end - segs[0].range.start, 12, "the prelude");
        assert!(a.bytes(&segs[1].range).ends_with(b"event"), "the headers");
        let headers = sse_replay_app::raw_view::headers_text(a, &segs[1]);
        assert!(
            headers.starts_with("⟨:event-type=") && headers.ends_with(":message-type=event⟩"),
            "{headers}"
        );
        assert_eq!(
            segs[3].range.end - segs[3].range.start,
            4,
            "the message CRC"
        );
        let payload = a.bytes(&segs[2].range);
        assert!(serde_json::from_slice::<serde_json::Value>(payload).is_ok());
    }
    // A read that ends inside a frame: the next read starts mid-frame, without a marker.
    let c = &a.chunks[3];
    let mid = c.start + 20;
    let segs = sse_replay_app::raw_view::frame_segments(a, mid..c.end);
    assert_eq!(segs[0].frame_start, None);
    assert_eq!(segs.first().unwrap().range.start, mid);
    assert_eq!(segs.last().unwrap().range.end, c.end);
    h.get_by_label_contains("frame 23 (metadata) bytes");
}
