//! `per-fragment`: parse every arguments fragment alone, as it arrives (the seed's counter-example 1).

use super::{
    Attempt, FragmentAt, NaiveCall, NaiveStrategy, Report, Strategy, StreamEnd, args_text,
};
use crate::accumulate::{Parsed, parse_value};
use crate::signal::{Fragment, Raw};

/// Every fragment that carries arguments text, parsed on its own; a fragment that parses is a call.
#[derive(Clone, Debug, Default)]
pub(super) struct PerFragment {
    attempts: Vec<Attempt>,
}

impl NaiveStrategy for PerFragment {
    fn strategy(&self) -> Strategy {
        Strategy::PerFragment
    }

    fn on_fragment(&mut self, fragment: &Fragment, at: FragmentAt) {
        // Only fragments that carry text (null and absent arguments are no attempt).
        if matches!(fragment.args, Raw::Value(_)) {
            let text = args_text(fragment);
            self.attempts.push(Attempt {
                fragment: at.fragment_no,
                call: Some(at.call),
                chunk: at.pos.chunk,
                text: text.to_owned(),
                outcome: parse_value(text),
            });
        }
    }

    fn finish(self: Box<Self>, _end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::PerFragment);
        r.steps = self.attempts;
        r.calls = r
            .steps
            .iter()
            .filter_map(|s| match &s.outcome {
                Parsed::Ok(_) => Some(NaiveCall {
                    label: format!("fragment {}", s.fragment),
                    id: String::new(),
                    name: String::new(),
                    raw_arguments: s.text.clone(),
                    parsed: s.outcome.clone(),
                    chunk: s.chunk,
                }),
                Parsed::Err { .. } => None,
            })
            .collect();
        r
    }
}
