//! `parse-when-valid`: re-parse the buffer after every fragment and finish the call as soon as it
//! parses (validation while accumulating); later fragments of that call are ignored.

use super::{
    Attempt, FragmentAt, NaiveCall, NaiveStrategy, Report, Strategy, StreamEnd, Table, args_text,
};
use crate::accumulate::{Parsed, parse_value};
use crate::dialect::FxHashMap;
use crate::signal::{CallKey, Fragment};

/// How much of a re-parsed buffer a `parse-when-valid` step keeps.
pub const STEP_TAIL_CHARS: usize = 64;

/// Limit on the re-parse buffer, so a huge call does not make the analysis quadratic.
const MAX_BUFFER: usize = 1 << 20;

/// The calls still being filled, the calls that parsed (and at which chunk), every attempt.
#[derive(Clone, Debug, Default)]
pub(super) struct ParseWhenValid {
    open: Table,
    done: Vec<NaiveCall>,
    closed: FxHashMap<CallKey, u32>,
    attempts: Vec<Attempt>,
    ignored: u64,
}

impl NaiveStrategy for ParseWhenValid {
    fn strategy(&self) -> Strategy {
        Strategy::ParseWhenValid
    }

    fn on_fragment(&mut self, fragment: &Fragment, at: FragmentAt) {
        if self.closed.contains_key(&fragment.key) {
            self.ignored += 1;
            return;
        }
        let e = self.open.entry(&fragment.key);
        e.fill(fragment, args_text(fragment));
        if e.args.trim().is_empty() || e.args.len() > MAX_BUFFER {
            return;
        }
        let outcome = parse_value(&e.args);
        let ok = matches!(outcome, Parsed::Ok(_));
        self.attempts.push(Attempt {
            fragment: at.fragment_no,
            call: Some(at.call),
            chunk: at.pos.chunk,
            text: tail(&e.args),
            outcome,
        });
        if ok && let Some(e) = self.open.remove(&fragment.key) {
            self.done.push(e.into_call(at.pos.chunk));
            self.closed.insert(fragment.key.clone(), at.pos.chunk);
        }
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::ParseWhenValid);
        let mut calls = self.done;
        let never = self.open.len();
        calls.extend(self.open.into_calls(end.end_chunk));
        r.calls = calls;
        r.steps = self.attempts;
        if self.ignored > 0 {
            r.notes.push(if self.ignored == 1 {
                "1 fragment arrived after its call had parsed and was ignored".to_owned()
            } else {
                format!(
                    "{} fragments arrived after their call had parsed and were ignored",
                    self.ignored
                )
            });
        }
        if never > 0 {
            r.notes.push(format!(
                "{} never became valid JSON",
                crate::text::plural(never, "call")
            ));
        }
        r
    }
}

/// The last [`STEP_TAIL_CHARS`] characters of `buffer`, after `…` when cut.
fn tail(buffer: &str) -> String {
    match buffer.char_indices().rev().nth(STEP_TAIL_CHARS - 1) {
        Some((i, _)) if i > 0 => format!("…{}", &buffer[i..]),
        _ => buffer.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_short_buffers_and_cuts_long_ones_on_a_character_boundary() {
        assert_eq!(tail("{\"a\":"), "{\"a\":");
        let long = "深".repeat(100);
        let t = tail(&long);
        assert!(t.starts_with('…'));
        assert_eq!(t.chars().count(), STEP_TAIL_CHARS + 1);
    }
}
