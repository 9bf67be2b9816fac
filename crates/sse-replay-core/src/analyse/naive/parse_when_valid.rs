//! `parse-when-valid`: re-parse the buffer after every fragment and finish the call as soon as it
//! parses (validation while accumulating); later fragments of that call are ignored.
//!
//! Every attempt is recorded as a row over the call's final buffer (each attempt's text is a
//! prefix of it, see [`Steps`]), and a buffer with an open string or unbalanced brackets
//! ([`Balance`]) is not parsed at all: it cannot be valid, so the quadratic re-parsing a client
//! does is only done here when it can succeed (its errors are re-derived when asked for).
//!
//! It holds a call's buffer only while it re-parses it: once the call parses (or the stream
//! ends) the buffer is freed, and the call's text — a prefix of the correct call's — is taken
//! from the correct call at the end, shared, as are the steps' texts.

use super::steps::{Balance, Steps, TextAt};
use super::{Entry, FragmentAt, NaiveStrategy, Report, Strategy, StreamEnd, Table, args_text};
use crate::accumulate::{Parsed, parse_value};
use crate::dialect::FxHashMap;
use crate::fact::{CallKey, Fragment};

/// How much of a re-parsed buffer a `parse-when-valid` step keeps.
pub const STEP_TAIL_CHARS: usize = 64;

/// Limit on the re-parse buffer, so a huge call does not make the analysis quadratic.
const MAX_BUFFER: usize = 1 << 20;

/// One call's buffer as this strategy tracks it: its number (in order of first fragment) and
/// whether it can be a JSON document yet.
#[derive(Clone, Copy, Debug)]
struct Track {
    buffer: u32,
    balance: Balance,
}

/// The calls still being filled, the calls that parsed (and at which chunk), every attempt.
#[derive(Clone, Debug)]
pub(super) struct ParseWhenValid {
    open: Table,
    tracks: FxHashMap<CallKey, Track>,
    /// The calls that parsed and the chunk where; their values are taken again at the end (the
    /// correct call's, when the text is the same: see [`super::Parses`]).
    done: Vec<(Entry, u32)>,
    /// The buffer number of each call in `done`.
    done_buffers: Vec<u32>,
    closed: FxHashMap<CallKey, u32>,
    steps: Steps,
    ignored: u64,
}

impl Default for ParseWhenValid {
    fn default() -> Self {
        Self {
            open: Table::default(),
            tracks: FxHashMap::default(),
            done: Vec::new(),
            done_buffers: Vec::new(),
            closed: FxHashMap::default(),
            steps: Steps::tail_only(),
            ignored: 0,
        }
    }
}

impl ParseWhenValid {
    /// Its attempts counted, not kept (see [`Steps::counts_only`]).
    pub(super) fn counting() -> Self {
        Self {
            steps: Steps::tail_only().counts_only(),
            ..Self::default()
        }
    }
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
        let text = args_text(fragment);
        let next = self.tracks.len() as u32;
        let track = self.tracks.entry(fragment.key.clone()).or_insert(Track {
            buffer: next,
            balance: Balance::default(),
        });
        track.balance.feed(text);
        let track = *track;
        let e = self.open.entry(&fragment.key);
        e.fill(fragment, at);
        // Past the limit the buffer is never parsed again, and the call's text is the correct
        // call's at the end: it stops growing (a call of a gigabyte kept a second gigabyte).
        if e.args.len() <= MAX_BUFFER {
            e.args.push_str(text);
        }
        if e.args.trim().is_empty() || e.args.len() > MAX_BUFFER {
            return;
        }
        let parsed = track.balance.may_parse() && matches!(parse_value(&e.args), Parsed::Ok(_));
        let where_ = TextAt {
            buffer: track.buffer,
            end: e.args.len(),
        };
        self.steps
            .push(at.fragment_no, Some(at.call), at.pos.chunk, where_, parsed);
        if parsed && let Some(mut e) = self.open.remove(&fragment.key) {
            // Its text is taken from the correct call at the end.
            e.args = String::new();
            self.done.push((e, at.pos.chunk));
            self.done_buffers.push(track.buffer);
            self.closed.insert(fragment.key.clone(), at.pos.chunk);
        }
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::ParseWhenValid);
        let mut this = *self;
        // The buffers of the calls that never parsed are freed too: every call's text is the
        // correct call's, shared.
        for e in this.open.map.values_mut() {
            e.args = String::new();
        }
        let mut calls: Vec<_> = this
            .done
            .into_iter()
            .map(|(e, chunk)| e.into_call(chunk, false, end))
            .collect();
        let never = this.open.len();
        // The buffer number of each call, in the order the calls are reported.
        let mut buffers = this.done_buffers;
        buffers.extend(
            this.open
                .open_keys()
                .map(|k| this.tracks.get(k).map_or(u32::MAX, |t| t.buffer)),
        );
        calls.extend(this.open.into_calls(end.end_chunk, end));
        // Each attempt's text is a prefix of its call's final buffer.
        let mut steps = this.steps;
        let mut map = vec![u32::MAX; this.tracks.len()];
        for (i, &b) in buffers.iter().enumerate() {
            if let Some(slot) = map.get_mut(b as usize) {
                *slot = i as u32;
            }
        }
        steps.renumber_texts(&map);
        steps.set_shared_texts(calls.iter().map(|c| c.raw_arguments.clone()).collect());
        r.calls = calls;
        r.steps = steps;
        if this.ignored > 0 {
            r.notes.push(if this.ignored == 1 {
                "1 fragment arrived after its call had parsed and was ignored".to_owned()
            } else {
                format!(
                    "{} fragments arrived after their call had parsed and were ignored",
                    this.ignored
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
pub(super) fn tail(buffer: &str) -> String {
    match buffer.char_indices().rev().nth(STEP_TAIL_CHARS - 1) {
        Some((i, _)) if i > 0 => format!("…{}", &buffer[i..]),
        _ => buffer.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::{ArgsPiece, Pos, Raw};

    /// A call longer than the re-parse limit is not re-parsed past it, and its buffer stops
    /// growing there: it holds the limit and one fragment at most, not the call.
    #[test]
    fn a_call_past_the_buffer_limit_holds_no_more_of_its_text() {
        let mut s = ParseWhenValid::counting();
        let key = CallKey::Index {
            choice: 0,
            index: 0,
            generation: 0,
        };
        let piece = format!("[{}", "1,".repeat(4095));
        let mut start = 0;
        for no in 0..1024u32 {
            let fragment = Fragment {
                key: key.clone(),
                stated_index: Some(0),
                id: Raw::Absent,
                name: Raw::Absent,
                args: Raw::Value(ArgsPiece::Text(piece.clone())),
            };
            let at = FragmentAt {
                pos: Pos {
                    event: no,
                    chunk: no,
                    t_micros: 0,
                },
                fragment_no: no,
                call: 0,
                args_start: start,
            };
            s.on_fragment(&fragment, at);
            start += piece.len();
        }
        assert!(start > 4 * MAX_BUFFER, "{start} bytes fed");
        let held = s.open.map.get(&key).map_or(0, |e| e.args.len());
        assert!(held <= MAX_BUFFER + piece.len(), "{held} bytes held");
    }

    #[test]
    fn tail_keeps_short_buffers_and_cuts_long_ones_on_a_character_boundary() {
        assert_eq!(tail("{\"a\":"), "{\"a\":");
        let long = "深".repeat(100);
        let t = tail(&long);
        assert!(t.starts_with('…'));
        assert_eq!(t.chars().count(), STEP_TAIL_CHARS + 1);
    }
}
