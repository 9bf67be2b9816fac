//! `overwrite`: assign each fragment's fields instead of appending the arguments, so later
//! fragments erase earlier ones.

use super::{FragmentAt, NaiveStrategy, Report, Strategy, StreamEnd, Table};
use crate::fact::{Fragment, Raw};

/// Per call key, the fields of the last fragment that had them.
#[derive(Clone, Debug, Default)]
pub(super) struct Overwrite {
    calls: Table,
}

impl NaiveStrategy for Overwrite {
    fn strategy(&self) -> Strategy {
        Strategy::Overwrite
    }

    fn on_fragment(&mut self, fragment: &Fragment, _at: FragmentAt) {
        // Every field that is present is assigned (null and "" included).
        let e = self.calls.entry(&fragment.key);
        if !matches!(fragment.id, Raw::Absent) {
            e.id = fragment.id.value().cloned().unwrap_or_default();
        }
        if !matches!(fragment.name, Raw::Absent) {
            e.name = fragment.name.value().cloned().unwrap_or_default();
        }
        if let Raw::Value(p) = &fragment.args {
            e.args = p.text().to_owned();
        }
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::Overwrite);
        r.calls = self.calls.into_calls(end.end_chunk, end);
        r
    }
}
