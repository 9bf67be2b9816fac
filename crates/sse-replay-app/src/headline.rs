//! What the accumulator's headline says at the cursor, decided without drawing (so tests can ask):
//! a stream still arriving, or a cursor before the end, is "streaming — N calls so far, M in
//! progress" with no verdict; the verdict ([`sse_replay_core::verdict`]) only once the stream has
//! ended, named by how it ended ("finished", "ended without finish (truncated)", "provider
//! error: …": [`ending`]); and zero calls is never a green success — it says what happened, as a
//! warning.

use super::view::{CursorTables, ViewState};
use sse_replay_core::analysis::Analysis;
use sse_replay_core::findings::{Finding, FindingKind};
use sse_replay_core::text::plural;

/// How a headline is coloured: a class, so tests can check it without pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Still arriving, or before the end: no verdict yet.
    Neutral,
    /// The verdict is OK.
    Ok,
    /// Nothing failed, but nothing worth calling a success either (no tool calls).
    Warn,
    /// The verdict failed.
    Error,
}

/// The headline: its text, its tone, and the verdict's reasons for a tooltip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Headline {
    pub text: String,
    pub tone: Tone,
    pub hover: Option<String>,
}

/// Whether the stream has ended at chunk `cursor`: its finish signal has arrived, or the cursor is
/// at the last chunk of a stream that is not `arriving` any more (a live recording's last chunk
/// is only the latest one).
pub fn ended_at(a: &Analysis, cursor: u32, arriving: bool) -> bool {
    a.finish_chunk().is_some_and(|f| f <= cursor)
        || (!arriving && cursor >= ViewState::last_chunk(a))
}

/// Whether finding `f` is shown at the cursor: see [`Finding::shown_at`].
pub fn shown(f: &Finding, cursor: u32, ended: bool) -> bool {
    f.shown_at(cursor, ended)
}

/// The headline for `a` at `cursor`.
pub fn headline(a: &Analysis, tables: &CursorTables, cursor: u32, arriving: bool) -> Headline {
    let neutral = |text: String| Headline {
        text,
        tone: Tone::Neutral,
        hover: None,
    };
    if !ended_at(a, cursor, arriving) {
        if a.complete {
            return neutral(
                "receiving one complete response: its calls are read once it has all arrived"
                    .into(),
            );
        }
        // Dialects that close each call (a stop or done event) have it recorded by the
        // analysis; in the others a call is open until the stream's finish.
        let closes_calls = a.dialect.closes_calls();
        let (mut so_far, mut open) = (0usize, 0usize);
        for &ci in &tables.client_calls {
            let st = a.call_state_at(ci, cursor);
            if !st.started {
                continue;
            }
            so_far += 1;
            // Closed only once the dialect's closing event has arrived by the cursor (and all
            // of the call with it): the same at the live edge as in a replay of the whole stream.
            let c = &a.calls[ci];
            let all_here = st.fragments.len() == c.fragments.len();
            let closed = closes_calls && all_here && c.done_chunk.is_some_and(|d| d <= cursor);
            if !closed {
                open += 1;
            }
        }
        return neutral(format!(
            "streaming — {} so far, {open} in progress",
            plural(so_far, "call")
        ));
    }
    let verdict = &tables.verdict;
    let hover = (!verdict.ok()).then(|| verdict.line());
    let total = tables.client_calls.len();
    if total == 0 {
        if let Some(f) = a
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::NothingRecognised)
        {
            return Headline {
                text: format!("no tool calls found — {}", f.message),
                tone: Tone::Warn,
                hover,
            };
        }
        if verdict.ok() {
            return Headline {
                text: "no tool calls — the stream ended normally without one (a text answer?)"
                    .into(),
                tone: Tone::Warn,
                hover,
            };
        }
        return Headline {
            text: format!("no tool calls — {}", verdict.line()),
            tone: Tone::Error,
            hover,
        };
    }
    let ok = tables
        .client_calls
        .iter()
        .filter(|&&i| a.calls[i].value().is_some())
        .count();
    let (word, tone) = if verdict.ok() {
        ("OK", Tone::Ok)
    } else {
        ("FAILED", Tone::Error)
    };
    Headline {
        text: format!(
            "{}: {ok} of {} parsed · {word}",
            ending(a),
            plural(total, "call")
        ),
        tone,
        hover,
    }
}

/// How the stream ended, in a few words: the core's one decision ([`Analysis::ending`], worded by
/// [`sse_replay_core::compare::ending_label`]), so a stream cut short is never called "finished".
/// A provider's message can be long: the headline's hover has it whole.
pub fn ending(a: &Analysis) -> String {
    sse_replay_core::text::truncate(&sse_replay_core::compare::ending_label(&a.ending), 80)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sse_replay_core::analysis::SourceInfo;
    use sse_replay_core::pipeline::Options;

    fn analyse(body: &[u8], dialect: Option<sse_replay_core::dialect::DialectKind>) -> Analysis {
        let rec = sse_replay_core::input::raw_to_recording(body, "inline");
        let source = SourceInfo {
            name: "inline".into(),
            kind: "raw body".into(),
            timing_known: false,
        };
        let opts = Options {
            dialect,
            ..Options::default()
        };
        Analysis::from_recording(&rec, source, opts)
    }

    #[test]
    fn zero_calls_is_a_warning_never_green() {
        let text = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        let a = analyse(text, None);
        let t = CursorTables::new(&a);
        let h = headline(&a, &t, ViewState::last_chunk(&a), false);
        assert_eq!(h.tone, Tone::Warn, "{h:?}");
        assert!(
            h.text
                .starts_with("no tool calls — the stream ended normally")
        );
        let a = analyse(
            text,
            Some(sse_replay_core::dialect::DialectKind::AnthropicMessages),
        );
        let t = CursorTables::new(&a);
        let h = headline(&a, &t, ViewState::last_chunk(&a), false);
        assert_eq!(h.tone, Tone::Warn, "{h:?}");
        assert_eq!(
            h.text,
            "no tool calls found — events did not match the Anthropic Messages dialect; detected: OpenAI Chat Completions"
        );
        assert!(h.hover.is_some(), "the verdict failed: {h:?}");
    }

    #[test]
    fn a_stream_still_arriving_has_no_verdict() {
        // One call cut mid-arguments, no finish: as a live recording sees it.
        let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]},\"finish_reason\":null}]}\n\n";
        let a = analyse(body, None);
        let t = CursorTables::new(&a);
        let end = ViewState::last_chunk(&a);
        let live = headline(&a, &t, end, true);
        assert_eq!(live.tone, Tone::Neutral);
        assert_eq!(live.text, "streaming — 1 call so far, 1 in progress");
        assert!(!ended_at(&a, end, true));
        let at_end: Vec<FindingKind> = a
            .findings
            .iter()
            .filter(|f| f.kind.decided_at_end())
            .map(|f| f.kind)
            .collect();
        assert!(
            at_end.contains(&FindingKind::EndedWithoutFinish),
            "{at_end:?}"
        );
        assert!(at_end.contains(&FindingKind::IncompleteCall), "{at_end:?}");
        for f in a.findings.iter().filter(|f| f.kind.decided_at_end()) {
            assert!(!shown(f, end, false), "{f:?} shown while arriving");
            assert!(shown(f, end, true), "{f:?} not shown at the end");
        }
        // Once it has ended, the verdict.
        let done = headline(&a, &t, end, false);
        assert_eq!(done.tone, Tone::Error);
        assert_eq!(
            done.text,
            "ended without finish (truncated): 0 of 1 call parsed · FAILED"
        );
    }
}
