//! `next-index-done`: treat a call as finished when a fragment of another call appears (the OpenAI
//! SDK helpers' done events); what arrives for it later is lost.
//!
//! A call's text is a prefix of the correct call's (the pieces before it was declared done): it
//! keeps where they are, and takes a shared prefix of the correct call's text at the end.

use super::{Entry, FragmentAt, NaiveStrategy, Report, Strategy, StreamEnd, Table};
use crate::fact::{CallKey, Fragment};
use rustc_hash::FxHashSet;

/// The call being filled, the calls declared done, and how many fragments came too late.
#[derive(Clone, Debug, Default)]
pub(super) struct NextIndexDone {
    current: Option<CallKey>,
    open: Table,
    /// The calls declared done and the chunk where (parsed at the end, see [`super::Parses`]).
    done: Vec<(Entry, u32)>,
    closed: FxHashSet<CallKey>,
    dropped: u64,
}

impl NaiveStrategy for NextIndexDone {
    fn strategy(&self) -> Strategy {
        Strategy::NextIndexDone
    }

    fn on_fragment(&mut self, fragment: &Fragment, at: FragmentAt) {
        // Another key appearing finishes the current call with what it has.
        if self.current.as_ref() != Some(&fragment.key) {
            if let Some(prev) = self.current.take()
                && let Some(e) = self.open.remove(&prev)
            {
                self.done.push((e, at.pos.chunk));
                self.closed.insert(prev);
            }
            self.current = Some(fragment.key.clone());
        }
        if self.closed.contains(&fragment.key) {
            self.dropped += 1;
        } else {
            self.open.entry(&fragment.key).fill(fragment, at);
        }
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::NextIndexDone);
        let mut calls: Vec<_> = self
            .done
            .into_iter()
            .map(|(e, chunk)| e.into_call(chunk, false, end))
            .collect();
        calls.extend(self.open.into_calls(end.end_chunk, end));
        r.calls = calls;
        if self.dropped > 0 {
            r.notes.push(if self.dropped == 1 {
                "1 fragment arrived for a call already declared done and was lost".to_owned()
            } else {
                format!(
                    "{} fragments arrived for calls already declared done and were lost",
                    self.dropped
                )
            });
        }
        r
    }
}
