//! `concat-fields`: append every string field, name and id included (openai-python's
//! `accumulate_delta`): `get_weatherget_weather`.

use super::{FragmentAt, NaiveStrategy, Report, Strategy, StreamEnd, Table, args_text};
use crate::fact::Fragment;

/// Per call key, every id, name and arguments piece appended.
#[derive(Clone, Debug, Default)]
pub(super) struct ConcatFields {
    calls: Table,
}

impl NaiveStrategy for ConcatFields {
    fn strategy(&self) -> Strategy {
        Strategy::ConcatFields
    }

    fn on_fragment(&mut self, fragment: &Fragment, _at: FragmentAt) {
        let e = self.calls.entry(&fragment.key);
        if let Some(v) = fragment.id.value() {
            e.id.push_str(v);
        }
        if let Some(v) = fragment.name.value() {
            e.name.push_str(v);
        }
        e.args.push_str(args_text(fragment));
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::ConcatFields);
        r.calls = self.calls.into_calls(end.end_chunk, end.parses);
        r
    }
}
