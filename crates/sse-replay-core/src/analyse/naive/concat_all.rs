//! `concat-all`: ignore the index and join every fragment of every call into one string
//! (the seed's counter-example 2: `{…}{…}`).

use super::{FragmentAt, NaiveCall, NaiveStrategy, Report, Strategy, StreamEnd, args_text};
use crate::accumulate::parse_once;
use crate::fact::Fragment;

/// All arguments text of the stream, joined, parsed once at the end.
#[derive(Clone, Debug, Default)]
pub(super) struct ConcatAll {
    joined: String,
    /// A fragment arrived: without one there is nothing to join, and no call (not one empty
    /// call beside a correct answer of none).
    any: bool,
}

impl NaiveStrategy for ConcatAll {
    fn strategy(&self) -> Strategy {
        Strategy::ConcatAll
    }

    fn on_fragment(&mut self, fragment: &Fragment, _at: FragmentAt) {
        self.joined.push_str(args_text(fragment));
        self.any = true;
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::ConcatAll);
        if !self.any {
            return r;
        }
        let (parsed, _) = parse_once(&self.joined);
        r.calls.push(NaiveCall {
            label: "everything".into(),
            id: String::new(),
            name: String::new(),
            raw_arguments: self.joined,
            parsed,
            chunk: end.end_chunk,
            at_end: true,
        });
        r
    }
}
