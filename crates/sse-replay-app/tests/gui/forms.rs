//! The new forms in the app: a Gemini JSON array, a dump of chunks, Cohere, Assistants and the AI
//! SDK UI stream are detected, named in the header (with what a JSON array is), listed in the
//! dialect picker, and a non-function Responses call shows its kind.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::PathBuf;

use common::{app_with, harness, wait_loaded};
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::Source;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(path)
}

#[test]
fn each_new_form_is_detected_and_named_in_the_header() {
    for (path, title, header) in [
        (
            "recordings/gemini-array-weather.ron",
            "Google Gemini",
            Some(
                "a JSON array of 3 chunks, streamed element by element (Gemini streamGenerateContent without alt=sse)",
            ),
        ),
        (
            "tests/data/json-array-chunks/langgraph-hitl-request-2.json",
            "Vercel AI SDK UI message stream",
            Some("a JSON array of 36 chunks — a dump, not the wire: no read boundaries or timing"),
        ),
        ("recordings/cohere-weather.ron", "Cohere v2 Chat", None),
        (
            "recordings/openai-assistants-weather.ron",
            "OpenAI Assistants v2 runs",
            None,
        ),
    ] {
        let mut h = harness(app_with(vec![]).with_initial(Source::File(repo(path))));
        wait_loaded(&mut h);
        h.get_by_label(title);
        assert!(h.query_by_label("(guessed)").is_none(), "{path}");
        if let Some(header) = header {
            h.get_by_label_contains(header);
        }
        // The headline names how the stream ended, as the core decides it.
        let ending = sse_replay_app::headline::ending(h.state().analysis().unwrap());
        h.get_by_label_contains(&format!("{ending}: "));
        assert!(h.state().analysis().unwrap().all_ok(), "{path}");
    }
}

#[test]
fn the_dialect_picker_lists_the_new_dialects_and_kinds_show() {
    let p = repo("tests/data/responses-items/openai-custom-tool.1.chunks.txt");
    let mut h = harness(app_with(vec![]).with_initial(Source::File(p)));
    wait_loaded(&mut h);
    h.get_by_label("OpenAI Responses");
    h.get_by_label("write_sql");
    h.get_by_label("custom_tool_call");
    h.get_by_value("detect").click();
    h.run();
    for title in [
        "Cohere v2 Chat",
        "OpenAI Assistants v2 runs",
        "Vercel AI SDK UI message stream",
    ] {
        h.get_by_label(title);
    }
    h.get_by_label("Cohere v2 Chat").click();
    h.run();
    wait_loaded(&mut h);
    h.get_by_label("(forced)");
    assert_eq!(
        h.state().analysis().unwrap().dialect,
        sse_replay_core::dialect::DialectKind::Cohere
    );
}
