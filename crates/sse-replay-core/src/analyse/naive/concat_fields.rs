//! `concat-fields`: append every string field, name and id included (openai-python's
//! `accumulate_delta`): `get_weatherget_weather`.
//!
//! Its arguments per key are the correct call's: the same key, the same pieces appended in the
//! same order (only arguments a dialect gave in a done event, which no strategy sees, differ).
//! So it keeps only the id and name concatenations and where its pieces are, and takes the
//! correct call's shared text at the end.

use super::{FragmentAt, NaiveStrategy, Report, Strategy, StreamEnd, Table, args_text};
use crate::fact::Fragment;

/// Per call key, every id and name appended, and where each arguments piece is in the correct
/// call's text.
#[derive(Clone, Debug, Default)]
pub(super) struct ConcatFields {
    calls: Table,
}

impl NaiveStrategy for ConcatFields {
    fn strategy(&self) -> Strategy {
        Strategy::ConcatFields
    }

    fn on_fragment(&mut self, fragment: &Fragment, at: FragmentAt) {
        let e = self.calls.entry(&fragment.key);
        if let Some(v) = fragment.id.value() {
            e.id.push_str(v);
        }
        if let Some(v) = fragment.name.value() {
            e.name.push_str(v);
        }
        e.append(args_text(fragment).len(), at);
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::ConcatFields);
        r.calls = self.calls.into_calls(end.end_chunk, end);
        r
    }
}
