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
    calls: Vec<NaiveCall>,
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
        let outcome = if Balance::of(text).may_parse() {
            match parse_value(text) {
                ok @ Parsed::Ok(_) => Some(ok),
                Parsed::Err { .. } => None,
            }
        } else {
            None
        };
        if let Some(parsed) = &outcome {
            self.calls.push(NaiveCall {
                label: format!("fragment {}", at.fragment_no),
                id: String::new(),
                name: String::new(),
                raw_arguments: text.to_owned(),
                parsed: parsed.clone(),
                chunk: at.pos.chunk,
            });
        }
        self.steps.push(
            at.fragment_no,
            Some(at.call),
            at.pos.chunk,
            where_,
            outcome.is_some(),
        );
    }

    fn finish(self: Box<Self>, _end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::PerFragment);
        r.steps = self.steps;
        r.calls = self.calls;
        r
    }
}
