//! `per-fragment`: parse every arguments fragment alone, as it arrives (the seed's counter-example 1).

use super::steps::{Balance, Steps};
use super::{FragmentAt, NaiveCall, NaiveStrategy, Report, Strategy, StreamEnd, args_text};
use crate::accumulate::{Parsed, parse_value};
use crate::fact::{Fragment, Raw};

/// Every fragment that carries arguments text, parsed on its own; a fragment that parses is a call.
/// The texts go to one arena (the steps' only buffer); a fragment that cannot be a JSON document
/// ([`Balance`]) is not parsed (its error is re-derived when asked for).
#[derive(Clone, Debug, Default)]
pub(super) struct PerFragment {
    steps: Steps,
    /// The fragments that parsed alone (their texts are pieces of the correct calls', taken at
    /// the end; their values shared with the correct call's when the text is the same: see
    /// [`super::Parses`]).
    calls: Vec<Alone>,
}

/// A fragment that parsed alone: its number, where its text is (the correct call and the byte
/// range in its arguments) and its chunk.
#[derive(Clone, Copy, Debug)]
struct Alone {
    no: u32,
    call: u32,
    start: usize,
    len: usize,
    chunk: u32,
}

impl PerFragment {
    /// Its attempts in a temporary file ([`Steps::spilled`]): `check` lists every failure in
    /// order, and a large stream has millions.
    pub(super) fn spilled() -> Self {
        Self {
            steps: Steps::default().spilled(),
            ..Self::default()
        }
    }
}

impl NaiveStrategy for PerFragment {
    fn strategy(&self) -> Strategy {
        Strategy::PerFragment
    }

    fn on_fragment(&mut self, fragment: &Fragment, at: FragmentAt) {
        // Only fragments that carry text (null and absent arguments are no attempt).
        if !matches!(fragment.args, Raw::Value(_)) {
            return;
        }
        let text = args_text(fragment);
        let where_ = self.steps.push_text(text);
        let parsed = Balance::of(text).may_parse() && matches!(parse_value(text), Parsed::Ok(_));
        if parsed {
            self.calls.push(Alone {
                no: at.fragment_no,
                call: at.call,
                start: at.args_start,
                len: text.len(),
                chunk: at.pos.chunk,
            });
        }
        self.steps
            .push(at.fragment_no, Some(at.call), at.pos.chunk, where_, parsed);
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::PerFragment);
        r.steps = self.steps;
        r.calls = self
            .calls
            .into_iter()
            .map(|a| {
                let text = end.texts.slice(a.call, a.start..a.start + a.len);
                debug_assert!(text.is_some(), "fragment {} is in call {}", a.no, a.call);
                let text = text.unwrap_or_default();
                NaiveCall {
                    label: format!("fragment {}", a.no),
                    id: String::new(),
                    name: String::new(),
                    parsed: end.parses.parse(&text),
                    raw_arguments: text,
                    chunk: a.chunk,
                    at_end: false,
                }
            })
            .collect();
        r
    }
}
