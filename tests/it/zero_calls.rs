//! Zero calls is not success, and counts agree with their nouns, through
//! the binary:
//!
//! - nothing recognisable (a text file, an empty body) or a forced dialect that matches nothing:
//!   `check` says so in at most 4 lines (stdout and stderr together), exit 1, and `check --json`,
//!   `export` and `events` give the same verdict;
//! - a stream that ended normally with no tool call (a text answer): a warning, exit 0;
//! - a one-call stream says "1 call", never "1 calls".

use crate::common;

use serde_json::Value;

use common::{code, run, stderr, stdout, write};

/// A plain text answer: content deltas, `finish_reason: stop`, `[DONE]`.
const TEXT_ANSWER: &str = concat!(
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"It is sunny.\"},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: [DONE]\n\n",
);

/// `check` on `path` fails in at most 4 lines with `needle` on stderr; `check --json`, `export`
/// and `events` fail with the same one line.
fn fails_briefly(path: &str, extra: &[&str], needle: &str) {
    let mut args = vec!["check", path];
    args.extend_from_slice(extra);
    let o = run(&args);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(code(&o), 1, "{out}{err}");
    assert!(
        out.lines().count() + err.lines().count() <= 4,
        "at most 4 lines:\n{out}{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    assert!(out.contains("no tool calls found"), "{out}");
    for bad in ["parses (only one call", "discarded", "Naive strategies"] {
        assert!(!out.contains(bad), "{bad:?} in\n{out}");
    }
    let mut args = vec!["check", "--json", path];
    args.extend_from_slice(extra);
    let o = run(&args);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("check --json prints JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(code(&o), 1);
    assert_eq!(stderr(&o), err, "check --json");
    let kinds: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"nothing-recognised"), "{kinds:?}");
    for cmd in ["export", "events"] {
        let mut args = vec![cmd, path];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(code(&o), 1, "{cmd}: {}", stderr(&o));
        assert_eq!(stderr(&o), err, "{cmd}");
    }
}

#[test]
fn a_text_file_is_nothing_recognisable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(
        dir.path(),
        "notes.txt",
        b"Meeting notes\nthe weather tool: ask about Shenzhen\n",
    );
    fails_briefly(
        p.to_str().expect("path"),
        &[],
        "nothing recognised: no server-sent events or JSON lines",
    );
    let p = write(dir.path(), "empty.sse", b"");
    fails_briefly(
        p.to_str().expect("path"),
        &[],
        "nothing recognised: the input is empty",
    );
}

#[test]
fn a_forced_dialect_that_matches_nothing_fails() {
    fails_briefly(
        "recordings/openai-chat-weather.ron",
        &["--dialect", "anthropic"],
        "events did not match the Anthropic Messages dialect; detected: OpenAI Chat Completions",
    );
    fails_briefly(
        "recordings/anthropic-weather.ron",
        &["--dialect", "gemini"],
        "detected: Anthropic Messages",
    );
}

#[test]
fn a_text_answer_is_a_warning_not_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = write(dir.path(), "answer.sse", TEXT_ANSWER.as_bytes());
    let path = p.to_str().expect("path");
    let o = run(&["check", path]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(
        out.contains("Result: OK, but no tool calls (warning:"),
        "{out}"
    );
    assert!(out.contains("warn  no-tool-calls"), "{out}");
    for bad in ["0 calls parsed", "parses (only one call", "joined: \n"] {
        assert!(!out.contains(bad), "{bad:?} in\n{out}");
    }
    let o = run(&["check", "--json", path]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!((code(&o), v["ok"].as_bool()), (0, Some(true)));
    let warn = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["kind"] == "no-tool-calls")
        .expect("no-tool-calls finding");
    assert_eq!(warn["severity"], "warn");
    let o = run(&["export", path]);
    assert_eq!(code(&o), 0);
    assert_eq!(stdout(&o).trim(), "[]");
    assert!(
        stderr(&o).starts_with("sse-replay: warning: no tool calls in"),
        "{}",
        stderr(&o)
    );
    let o = run(&["events", path]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn a_one_call_stream_says_1_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    // One call in one fragment (as Mistral or Groq send it), then the finish.
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n";
    let p = write(dir.path(), "one.sse", body.as_bytes());
    let o = run(&["check", p.to_str().expect("path")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("Result: OK, 1 call parsed"), "{out}");
    assert!(out.contains("· 1 event ·"), "{out}");
    assert!(out.contains("· 1 fragment ·"), "{out}");
    assert!(out.contains(" 1 frag "), "{out}");
    let wrong = one_then_plural(&out);
    assert!(wrong.is_empty(), "plural after 1: {wrong:?}\n{out}");
}

/// Every "1 <noun>s" in `text` (a count of one followed by a plural noun).
fn one_then_plural(text: &str) -> Vec<String> {
    let nouns = [
        "calls",
        "fragments",
        "frags",
        "bytes",
        "events",
        "chunks",
        "reads",
        "keys",
        "previews",
        "characters",
        "chars",
        "differences",
        "lines",
    ];
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| {
            w[0].trim_start_matches(['(', '/']) == "1"
                && nouns.contains(&w[1].trim_end_matches([',', ')', ';', ':', '.']))
        })
        .map(|w| w.join(" "))
        .collect()
}

/// Streams in which a tool call was lost, one or more per dialect: an event that names a tool
/// call and cannot be read, or a finish that announces calls when none was assembled. Each is
/// `(what, extra args, body)`.
fn lost_call_streams() -> Vec<(&'static str, Vec<&'static str>, String)> {
    let chat_call = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n";
    let chat_cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}\n\n";
    let chat_finish = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let anthropic_head = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n";
    let anthropic_tail = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    vec![
        (
            "openai-chat: a cut event carrying tool_calls, finish tool_calls",
            vec![],
            [chat_cut, chat_finish].concat(),
        ),
        (
            "openai-chat: one call read, a second one's event cut",
            vec![],
            [chat_call, chat_cut, chat_finish].concat(),
        ),
        (
            "openai-chat: finish_reason tool_calls and no call at all",
            vec![],
            chat_finish.to_owned(),
        ),
        (
            "anthropic: a tool_use block start that does not parse",
            vec![],
            [
                anthropic_head,
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}\n\n",
                anthropic_tail,
            ]
            .concat(),
        ),
        (
            "anthropic: stop_reason tool_use and no tool_use block",
            vec![],
            [anthropic_head, anthropic_tail].concat(),
        ),
        (
            "openai-responses: response.completed lists a function_call item never streamed",
            vec![],
            [
                "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
                "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"f\",\"arguments\":\"{}\"}]}}\n\n",
            ]
            .concat(),
        ),
        (
            "openai-responses: a function_call item event that does not parse",
            vec![],
            [
                "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
                "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"f\"\n\n",
                "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\"}}\n\n",
            ]
            .concat(),
        ),
        (
            "gemini: a functionCall part in an event that does not parse",
            vec!["--dialect", "gemini"],
            [
                "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{\"a\":1}}}]}\n\n",
                "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}]},\"finishReason\":\"STOP\"}]}\n\n",
            ]
            .concat(),
        ),
        (
            "gemini: finishReason MALFORMED_FUNCTION_CALL and no call",
            vec![],
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}]},\"finishReason\":\"MALFORMED_FUNCTION_CALL\"}]}\n\n".to_owned(),
        ),
        (
            "ollama: a line with tool_calls that does not parse",
            vec!["--dialect", "ollama"],
            [
                "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]},\"done\":false\n",
                "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n",
            ]
            .concat(),
        ),
    ]
}

#[test]
fn a_tool_call_lost_to_a_malformed_event_or_announced_and_missing_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, (what, extra, body)) in lost_call_streams().into_iter().enumerate() {
        let p = write(dir.path(), &format!("lost-{i}.sse"), body.as_bytes());
        let path = p.to_str().expect("path");
        let mut args = vec!["check", path];
        args.extend(extra.iter().copied());
        let o = run(&args);
        let out = stdout(&o);
        assert_eq!(code(&o), 1, "{what}:\n{out}{}", stderr(&o));
        assert!(out.contains("Result: FAILED"), "{what}:\n{out}");
        assert!(!out.contains("OK, but no tool calls"), "{what}:\n{out}");
        assert!(out.contains("lost-tool-call"), "{what}:\n{out}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains("tool call"), "{what}: {err}");
        let mut args = vec!["check", "--json", path];
        args.extend(extra.iter().copied());
        let o = run(&args);
        let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
        assert_eq!((code(&o), v["ok"].as_bool()), (1, Some(false)), "{what}");
        let lost = v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|f| f["kind"] == "lost-tool-call")
            .unwrap_or_else(|| panic!("{what}: no lost-tool-call finding"));
        assert_eq!(lost["severity"], "error", "{what}");
        for cmd in ["export", "events"] {
            let mut args = vec![cmd, path];
            args.extend(extra.iter().copied());
            let o = run(&args);
            assert_eq!(code(&o), 1, "{what}: {cmd}: {}", stderr(&o));
            assert_eq!(stderr(&o), err, "{what}: {cmd}");
        }
    }
}

#[test]
fn unreadable_events_that_name_no_tool_call_and_finishes_that_announce_none_stay_ok() {
    let dir = tempfile::tempdir().expect("tempdir");
    let keepalive = [
        "data: : keepalive\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]\n\n",
        TEXT_ANSWER,
    ]
    .concat();
    let anthropic_text = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    for (name, body) in [
        ("keepalive.sse", keepalive.as_str()),
        ("text.sse", anthropic_text),
    ] {
        let p = write(dir.path(), name, body.as_bytes());
        let o = run(&["check", p.to_str().expect("path")]);
        let out = stdout(&o);
        assert_eq!(code(&o), 0, "{name}:\n{out}{}", stderr(&o));
        assert!(
            out.contains("Result: OK, but no tool calls"),
            "{name}:\n{out}"
        );
        assert!(!out.contains("lost-tool-call"), "{name}:\n{out}");
    }
}
