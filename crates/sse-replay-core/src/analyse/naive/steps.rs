//! A strategy's parse attempts, stored compactly: one fixed-size row per attempt (fragment, call,
//! chunk, parsed or not, where its text is) over a few shared text buffers, instead of an owned
//! text and error message per attempt. On the 227 MB benchmark stream (680,000 fragments) the two
//! strategies that attempt parses held some 350 MB as owned [`Attempt`]s; as rows they hold a
//! tenth of it. An [`Attempt`] (text and outcome, serde_json's error message included) is
//! re-derived when one is asked for ([`Steps::get`]): the error by parsing the attempt's text
//! again, which gives the same message as the first time.
//!
//! [`Balance`] is the cheap test that spares most parses: a text with an open string or
//! unbalanced brackets cannot be a JSON document, so it is not parsed at all (its outcome is an
//! error, re-derived on demand like any other).

use super::Attempt;
use crate::accumulate::parse_value;

/// One attempt, compactly: where and what, not its text or error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRow {
    /// The fragment after which the parse was attempted (stream-wide number).
    pub fragment: u32,
    /// The chunk the fragment completed in.
    pub chunk: u32,
    /// The correct call the fragment belongs to; `u32::MAX` when unknown (see [`StepRow::call`]).
    call: u32,
    /// Index of the buffer in [`Steps::texts`] that holds the text, and [`OK`] when it parsed.
    text: u32,
    /// End of the text in its buffer (a buffer is cut before it reaches 4 GiB). Where it starts
    /// is not kept: at 0 for whole buffers, else where the previous row's text in the same
    /// buffer ended (an arena's texts are in row order).
    end: u32,
}

/// The bit of [`StepRow::text`] that says the text parsed (20 bytes a row, not 28: there are
/// hundreds of thousands).
const OK: u32 = 1 << 31;

impl StepRow {
    /// The correct call the fragment belongs to (position in stream order), if known.
    pub fn call(&self) -> Option<u32> {
        (self.call != u32::MAX).then_some(self.call)
    }

    /// The text parsed.
    pub fn ok(&self) -> bool {
        self.text & OK != 0
    }

    fn buffer(&self) -> u32 {
        self.text & !OK
    }
}

/// Every attempt of one strategy, in stream order. See the module documentation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps {
    rows: Vec<StepRow>,
    /// The texts: arenas of every fragment's text (`per-fragment`), or each call's final buffer,
    /// whose prefixes were the attempts (`parse-when-valid`).
    texts: Vec<String>,
    /// Attempts that parsed (their values are not kept: parsing the text again gives them).
    parsed: usize,
    /// An [`Attempt`]'s `text` is only the last [`super::STEP_TAIL_CHARS`] characters of the
    /// text parsed (`parse-when-valid`, whose texts are whole buffers).
    tail_only: bool,
    /// Only the attempts' numbers are kept ([`Steps::counts_only`]): `rows` stays empty.
    counts_only: bool,
    /// Attempts counted and not kept as rows.
    counted: usize,
}

/// Where an attempt's text is, as a strategy records it.
#[derive(Clone, Copy, Debug)]
pub(super) struct TextAt {
    pub buffer: u32,
    /// End of the text in the buffer (see [`Steps::push`] for where it starts).
    pub end: usize,
}

/// Largest arena: offsets are kept as `u32`.
const MAX_ARENA: usize = u32::MAX as usize;

impl Steps {
    /// Attempts whose [`Attempt::text`] is the last characters of the buffer parsed.
    pub(super) fn tail_only() -> Self {
        Self {
            tail_only: true,
            ..Self::default()
        }
    }

    /// Attempts counted, none kept: [`Steps::len`] and [`Steps::parsed`] say how many, nothing
    /// lists them. For a report that needs only the numbers (`check`'s `parse-when-valid`).
    pub(super) fn counts_only(mut self) -> Self {
        self.counts_only = true;
        self
    }

    /// Record one attempt and whether it parsed. Its text must start where the previous row's
    /// text in the same buffer ended (at 0 when there is none, or when every text is a whole
    /// buffer's prefix: [`Steps::tail_only`]).
    pub(super) fn push(
        &mut self,
        fragment: u32,
        call: Option<u32>,
        chunk: u32,
        text: TextAt,
        ok: bool,
    ) {
        self.parsed += usize::from(ok);
        if self.counts_only {
            self.counted += 1;
            return;
        }
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.rows.push(StepRow {
            fragment,
            chunk,
            call: call.unwrap_or(u32::MAX),
            text: (text.buffer & !OK) | if ok { OK } else { 0 },
            end: clamp(text.end),
        });
    }

    /// Append `text` to the last arena (a new one when it would pass 4 GiB) and say where it is.
    pub(super) fn push_text(&mut self, text: &str) -> TextAt {
        if self
            .texts
            .last()
            .is_none_or(|a| a.len().saturating_add(text.len()) > MAX_ARENA)
        {
            self.texts.push(String::new());
        }
        let buffer = self.texts.len() - 1;
        let arena = &mut self.texts[buffer];
        arena.push_str(text);
        TextAt {
            buffer: buffer as u32,
            end: arena.len(),
        }
    }

    /// The text buffers, for the strategy to fill (an arena, or the calls' buffers at the end).
    pub(super) fn texts_mut(&mut self) -> &mut Vec<String> {
        &mut self.texts
    }

    /// Number of attempts (also those only counted: see `Steps::counts_only`).
    pub fn len(&self) -> usize {
        self.rows.len() + self.counted
    }

    /// No attempt.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows, in stream order (cheap: for counting and searching); none when the attempts
    /// were only counted.
    pub fn rows(&self) -> &[StepRow] {
        &self.rows
    }

    /// Attempts that parsed.
    pub fn parsed(&self) -> usize {
        self.parsed
    }

    /// The whole text attempt `i` parsed (a `parse-when-valid` attempt's whole buffer).
    pub fn text(&self, i: usize) -> Option<&str> {
        let r = self.rows.get(i)?;
        let start = match i.checked_sub(1).and_then(|p| self.rows.get(p)) {
            Some(prev) if !self.tail_only && prev.buffer() == r.buffer() => prev.end,
            _ => 0,
        };
        self.texts
            .get(r.buffer() as usize)?
            .get(start as usize..r.end as usize)
    }

    /// Attempt `i` in full: its text, and its outcome (re-derived by parsing the text again,
    /// which gives the same value or error message as the first time).
    pub fn get(&self, i: usize) -> Option<Attempt> {
        let r = self.rows.get(i)?;
        let text = self.text(i).unwrap_or("");
        let outcome = parse_value(text);
        let text = if self.tail_only {
            super::parse_when_valid::tail(text)
        } else {
            text.to_owned()
        };
        Some(Attempt {
            fragment: r.fragment,
            call: r.call(),
            chunk: r.chunk,
            text,
            outcome,
        })
    }

    /// Every attempt in full, in order (each built as it is reached: see [`Steps::get`]).
    pub fn iter(&self) -> impl Iterator<Item = Attempt> + '_ {
        (0..self.rows.len()).filter_map(|i| self.get(i))
    }

    /// The attempts that did not parse, in full.
    pub fn failures(&self) -> impl Iterator<Item = Attempt> + '_ {
        (0..self.rows.len())
            .filter(|&i| !self.rows[i].ok())
            .filter_map(|i| self.get(i))
    }

    /// Point every row at buffer `map[buffer]` (a strategy that numbered its buffers before
    /// knowing their final order).
    pub(super) fn renumber_texts(&mut self, map: &[u32]) {
        for r in &mut self.rows {
            if let Some(&to) = map.get(r.buffer() as usize) {
                r.text = (r.text & OK) | (to & !OK);
            }
        }
    }
}

/// Whether a text can still be a JSON document: no string left open and every bracket closed,
/// fed piece by piece (the naive strategies and `check`'s previews use it to skip parses that
/// cannot succeed). A JSON document always ends balanced, so an unbalanced text is certain not
/// to parse; a balanced one must still be parsed to know.
#[derive(Clone, Copy, Debug, Default)]
pub struct Balance {
    depth: i64,
    in_string: bool,
    escaped: bool,
}

impl Balance {
    /// Take the next piece of the text.
    pub fn feed(&mut self, text: &str) {
        for &b in text.as_bytes() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => self.depth -= 1,
                    _ => {}
                }
            }
        }
    }

    /// The text so far may be a JSON document (no open string, brackets balanced).
    pub fn may_parse(&self) -> bool {
        !self.in_string && self.depth == 0
    }

    /// [`Balance::may_parse`] of one whole text.
    pub fn of(text: &str) -> Self {
        let mut b = Self::default();
        b.feed(text);
        b
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::accumulate::Parsed;

    /// Attempts only counted give the same numbers as attempts kept, and keep no row.
    #[test]
    fn counted_attempts_give_the_numbers_of_kept_ones() {
        let mut kept = Steps::tail_only();
        let mut counted = Steps::tail_only().counts_only();
        for (i, ok) in [false, false, true, false, true].into_iter().enumerate() {
            for s in [&mut kept, &mut counted] {
                let at = TextAt {
                    buffer: 0,
                    end: i + 1,
                };
                s.push(i as u32, Some(0), i as u32, at, ok);
            }
        }
        assert_eq!((kept.len(), kept.parsed()), (5, 2));
        assert_eq!((counted.len(), counted.parsed()), (5, 2));
        assert!(!counted.is_empty());
        assert!(counted.rows().is_empty());
        assert_eq!(counted.failures().count(), 0);
    }

    /// Every text that parses is balanced (the one direction the shortcut relies on), on texts
    /// built to confuse a scanner: escaped quotes, backslashes, brackets inside strings.
    #[test]
    fn every_text_that_parses_is_balanced() {
        let docs = [
            r#"{"a":"x\"}","b":[1,{"c":"]\\"}]}"#,
            r#"["\\\\",{"k":"{[\"}"}]"#,
            r#""just a string with } and ]""#,
            "12",
            "true",
            r#"{"深圳":"\u00e9\\"}"#,
        ];
        for doc in docs {
            assert!(matches!(parse_value(doc), Parsed::Ok(_)), "{doc}");
            assert!(Balance::of(doc).may_parse(), "{doc}");
            // Fed in pieces at every character boundary, the same.
            for (i, _) in doc.char_indices() {
                let mut b = Balance::default();
                b.feed(&doc[..i]);
                b.feed(&doc[i..]);
                assert!(b.may_parse(), "{doc} split at {i}");
                let prefix = &doc[..i];
                if !Balance::of(prefix).may_parse() {
                    assert!(
                        matches!(parse_value(prefix), Parsed::Err { .. }),
                        "{prefix}"
                    );
                }
            }
        }
        assert!(!Balance::of(r#"{"a":"#).may_parse());
        assert!(!Balance::of(r#"{"a":"}"#).may_parse());
        assert!(!Balance::of(r#""abc\""#).may_parse());
    }

    #[test]
    fn a_row_gives_back_its_text_and_outcome() {
        let mut s = Steps::default();
        s.texts_mut().push("{\"a\"1".into());
        let at = |_start: usize, end| TextAt { buffer: 0, end };
        s.push(0, Some(0), 3, at(0, 4), false);
        s.push(1, None, 4, at(4, 5), true);
        assert_eq!(s.len(), 2);
        assert_eq!(s.parsed(), 1);
        let a = s.get(0).unwrap();
        assert_eq!((a.fragment, a.call, a.chunk), (0, Some(0), 3));
        assert_eq!(a.text, "{\"a\"");
        assert_eq!(a.outcome, parse_value("{\"a\""));
        let b = s.get(1).unwrap();
        assert_eq!((b.call, b.text.as_str()), (None, "1"));
        assert_eq!(b.outcome, Parsed::ok(serde_json::json!(1)));
        assert_eq!(s.failures().count(), 1);
    }
}
