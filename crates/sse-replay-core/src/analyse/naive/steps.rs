//! A strategy's parse attempts, stored compactly: one fixed-size row per attempt (fragment, call,
//! chunk, parsed or not, where its text is) over a few shared text buffers, instead of an owned
//! text and error message per attempt. On the 227 MB benchmark stream (680,000 fragments) the two
//! strategies that attempt parses held some 350 MB as owned [`Attempt`]s; as rows they hold a
//! tenth of it. An [`Attempt`] (text and outcome, serde_json's error message included) is
//! re-derived when one is asked for ([`Steps::get`]): the error by parsing the attempt's text
//! again, which gives the same message as the first time.
//!
//! For a report that lists every attempt but looks at none twice (`check --json` on a raw body:
//! [`Steps::spilled`]), the rows go to an unlinked temporary file as they come, a few thousand
//! at a time, and the texts to another, and are read back in order when listed: memory then does
//! not grow with the fragments at all.
//!
//! [`Balance`] is the cheap test that spares most parses: a text with an open string or
//! unbalanced brackets cannot be a JSON document, so it is not parsed at all (its outcome is an
//! error, re-derived on demand like any other).

use super::Attempt;
use crate::accumulate::parse_value;
use crate::text::SharedText;

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

/// Rows written to the spill file at once (and read back at once).
const SPILL_ROWS: usize = 4096;

/// Texts written to the text file at once.
const SPILL_TEXT_BYTES: usize = 64 << 10;

/// The bytes of one row in the spill file.
const ROW_BYTES: usize = 20;

impl StepRow {
    fn to_bytes(self) -> [u8; ROW_BYTES] {
        let mut b = [0; ROW_BYTES];
        for (i, v) in [self.fragment, self.chunk, self.call, self.text, self.end]
            .into_iter()
            .enumerate()
        {
            b[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn from_bytes(b: &[u8]) -> Option<Self> {
        let v = |i: usize| -> Option<u32> {
            Some(u32::from_le_bytes(
                b.get(i * 4..i * 4 + 4)?.try_into().ok()?,
            ))
        };
        Some(StepRow {
            fragment: v(0)?,
            chunk: v(1)?,
            call: v(2)?,
            text: v(3)?,
            end: v(4)?,
        })
    }
}

/// The unlinked temporary file the first rows of a [`Steps::spilled`] went to (shared by clones;
/// equal only to itself).
#[derive(Clone, Debug)]
struct SpillFile(std::sync::Arc<std::fs::File>);

impl PartialEq for SpillFile {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl SpillFile {
    /// `n` bytes at `at` as text (`None` when the file has fewer, or they are not UTF-8).
    fn text(&self, at: u64, n: usize) -> Option<String> {
        let mut buf = vec![0; n];
        (read_at(&self.0, &mut buf, at) == n)
            .then(|| String::from_utf8(buf).ok())
            .flatten()
    }

    /// Append `bytes` (the file is only ever appended to).
    fn append(&self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write as _;
        (&*self.0).write_all(bytes)
    }

    /// A new unlinked temporary file.
    fn new() -> Option<Self> {
        tempfile::tempfile()
            .ok()
            .map(|f| SpillFile(std::sync::Arc::new(f)))
    }

    /// Rows `first..first + n` (fewer at the end of the file).
    fn read(&self, first: usize, n: usize) -> Vec<StepRow> {
        let mut buf = vec![0; n * ROW_BYTES];
        let got = read_at(&self.0, &mut buf, (first * ROW_BYTES) as u64);
        buf[..got]
            .chunks_exact(ROW_BYTES)
            .filter_map(StepRow::from_bytes)
            .collect()
    }
}

/// Fill `buf` from `file` at `offset` without moving a shared position (clones of the steps read
/// the same file): the bytes read.
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> usize {
    let mut done = 0;
    while done < buf.len() {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(file, &mut buf[done..], offset + done as u64);
        #[cfg(windows)]
        let n =
            std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], offset + done as u64);
        #[cfg(not(any(unix, windows)))]
        let n: std::io::Result<usize> = {
            let _ = (file, offset);
            Ok(0)
        };
        match n {
            Ok(0) | Err(_) => break,
            Ok(n) => done += n,
        }
    }
    done
}

/// Every attempt of one strategy, in stream order. See the module documentation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps {
    /// The rows after the first [`Steps::spilled_rows`] (all of them when none were spilled).
    rows: Vec<StepRow>,
    /// Rows go to a temporary file ([`Steps::spilled`]).
    spill: bool,
    /// The file the first `spilled_rows` rows are in.
    spill_file: Option<SpillFile>,
    spilled_rows: usize,
    /// The texts: arenas of every fragment's text (`per-fragment`). Numbered after the buffers
    /// in `text_file`, when there are some.
    texts: Vec<String>,
    /// Each call's final text, whose prefixes were the attempts (`parse-when-valid`), shared
    /// with the call: numbered after `texts`.
    shared: Vec<SharedText>,
    /// The file the first texts of a [`Steps::spilled`] went to, its buffers (where each
    /// starts, and its length: at most [`MAX_ARENA`]), and its length.
    text_file: Option<SpillFile>,
    file_buffers: Vec<(u64, usize)>,
    text_file_len: u64,
    /// The texts not written yet (they are written [`SPILL_TEXT_BYTES`] at a time, not one
    /// write per fragment), from byte `text_written` on.
    text_pending: Vec<u8>,
    text_written: u64,
    /// Texts no longer go to `text_file` (it could not be made or written).
    texts_in_memory: bool,
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

    /// Attempts kept in an unlinked temporary file rather than in memory, for a report that only
    /// lists them in order (`check`'s `per-fragment` failures). Where no temporary file can be
    /// made or written, the rows stay in memory.
    pub(super) fn spilled(mut self) -> Self {
        self.spill = true;
        self
    }

    /// Move the rows in memory to the spill file, when there is one (made the first time).
    fn spill_rows(&mut self) {
        if self.spill_file.is_none() {
            self.spill_file = SpillFile::new();
        }
        let Some(file) = &self.spill_file else {
            self.spill = false;
            return;
        };
        let bytes: Vec<u8> = self.rows.iter().flat_map(|r| r.to_bytes()).collect();
        // Written at the end of what is there: a failed write leaves the rows in memory (and
        // every later one: spilling stops), never a row lost.
        match file.append(&bytes) {
            Ok(()) => {
                self.spilled_rows += self.rows.len();
                self.rows.clear();
            }
            Err(_) => self.spill = false,
        }
    }

    /// Row `i` (spilled or not).
    fn row(&self, i: usize) -> Option<StepRow> {
        match i.checked_sub(self.spilled_rows) {
            Some(j) => self.rows.get(j).copied(),
            None => self.spill_file.as_ref()?.read(i, 1).first().copied(),
        }
    }

    /// Every row in order, spilled ones read back a few thousand at a time.
    pub fn all_rows(&self) -> impl Iterator<Item = StepRow> + '_ {
        let spilled = (0..self.spilled_rows)
            .step_by(SPILL_ROWS)
            .flat_map(move |first| {
                let n = SPILL_ROWS.min(self.spilled_rows - first);
                self.spill_file
                    .as_ref()
                    .map(|f| f.read(first, n))
                    .unwrap_or_default()
            });
        spilled.chain(self.rows.iter().copied())
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
        if self.spill && self.rows.len() >= SPILL_ROWS {
            self.spill_rows();
        }
    }

    /// Append `text` to the last arena (a new one when it would pass 4 GiB) and say where it is.
    pub(super) fn push_text(&mut self, text: &str) -> TextAt {
        if self.spill
            && !self.texts_in_memory
            && let Some(at) = self.spill_text(text)
        {
            return at;
        }
        if self
            .texts
            .last()
            .is_none_or(|a| a.len().saturating_add(text.len()) > MAX_ARENA)
        {
            self.texts.push(String::new());
        }
        let buffer = self.file_buffers.len() + self.texts.len() - 1;
        let arena = self.texts.last_mut().map_or(0, |a| {
            a.push_str(text);
            a.len()
        });
        TextAt {
            buffer: buffer as u32,
            end: arena,
        }
    }

    /// [`Steps::push_text`] into the text file; `None` (and texts stay in memory from then on)
    /// when it cannot be made or written.
    fn spill_text(&mut self, text: &str) -> Option<TextAt> {
        if self.text_pending.len() + text.len() > SPILL_TEXT_BYTES {
            if self.text_file.is_none() {
                self.text_file = SpillFile::new();
            }
            let written = self
                .text_file
                .as_ref()
                .map(|f| f.append(&self.text_pending));
            if !matches!(written, Some(Ok(()))) {
                // What is pending stays readable where it is; the rest goes to memory.
                self.texts_in_memory = true;
                return None;
            }
            self.text_written += self.text_pending.len() as u64;
            self.text_pending.clear();
        }
        self.text_pending.extend_from_slice(text.as_bytes());
        if self
            .file_buffers
            .last()
            .is_none_or(|&(_, len)| len.saturating_add(text.len()) > MAX_ARENA)
        {
            self.file_buffers.push((self.text_file_len, 0));
        }
        self.text_file_len += text.len() as u64;
        let buffer = self.file_buffers.len() - 1;
        let last = self.file_buffers.last_mut()?;
        last.1 += text.len();
        Some(TextAt {
            buffer: buffer as u32,
            end: last.1,
        })
    }

    /// The calls' final texts, the buffers after the arenas (for a strategy that numbered its
    /// attempts' buffers by call: `parse-when-valid`).
    pub(super) fn set_shared_texts(&mut self, texts: Vec<SharedText>) {
        self.shared = texts;
    }

    /// Number of attempts (also those only counted: see `Steps::counts_only`).
    pub fn len(&self) -> usize {
        self.spilled_rows + self.rows.len() + self.counted
    }

    /// No attempt.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows, in stream order (cheap: for counting and searching); none when the attempts
    /// were only counted, only the last ones when they were spilled (see [`Steps::all_rows`]).
    pub fn rows(&self) -> &[StepRow] {
        &self.rows
    }

    /// Attempts that parsed.
    pub fn parsed(&self) -> usize {
        self.parsed
    }

    /// The whole text attempt `i` parsed (a `parse-when-valid` attempt's whole buffer).
    pub fn text(&self, i: usize) -> Option<std::borrow::Cow<'_, str>> {
        let r = self.row(i)?;
        let prev = i.checked_sub(1).and_then(|p| self.row(p));
        self.text_of(r, prev)
    }

    /// The text of row `r`, whose previous row is `prev`.
    fn text_of(&self, r: StepRow, prev: Option<StepRow>) -> Option<std::borrow::Cow<'_, str>> {
        let start = match prev {
            Some(prev) if !self.tail_only && prev.buffer() == r.buffer() => prev.end,
            _ => 0,
        };
        let (start, end, buffer) = (start as usize, r.end as usize, r.buffer() as usize);
        match self.file_buffers.get(buffer) {
            Some(&(at, _)) => {
                let (at, n) = (at + start as u64, end.checked_sub(start)?);
                // A text is pending or written whole, never split between the two.
                match at.checked_sub(self.text_written) {
                    Some(p) => {
                        let p = usize::try_from(p).ok()?;
                        let bytes = self.text_pending.get(p..p.checked_add(n)?)?;
                        std::str::from_utf8(bytes)
                            .ok()
                            .map(std::borrow::Cow::Borrowed)
                    }
                    None => self
                        .text_file
                        .as_ref()?
                        .text(at, n)
                        .map(std::borrow::Cow::Owned),
                }
            }
            None => {
                let i = buffer - self.file_buffers.len();
                match self.texts.get(i) {
                    Some(arena) => arena.get(start..end),
                    None => self.shared.get(i - self.texts.len())?.get(start..end),
                }
                .map(std::borrow::Cow::Borrowed)
            }
        }
    }

    /// Attempt `i` in full: its text, and its outcome (re-derived by parsing the text again,
    /// which gives the same value or error message as the first time).
    pub fn get(&self, i: usize) -> Option<Attempt> {
        let r = self.row(i)?;
        let prev = i.checked_sub(1).and_then(|p| self.row(p));
        Some(self.attempt(r, prev))
    }

    /// The attempt of row `r`, whose previous row is `prev` (see [`Steps::get`]).
    fn attempt(&self, r: StepRow, prev: Option<StepRow>) -> Attempt {
        let text = self.text_of(r, prev);
        let text = text.as_deref().unwrap_or("");
        let outcome = parse_value(text);
        let text = if self.tail_only {
            super::parse_when_valid::tail(text)
        } else {
            text.to_owned()
        };
        Attempt {
            fragment: r.fragment,
            call: r.call(),
            chunk: r.chunk,
            text,
            outcome,
        }
    }

    /// Every attempt in full, in order (each built as it is reached: see [`Steps::get`]).
    pub fn iter(&self) -> impl Iterator<Item = Attempt> + '_ {
        self.with_prev().map(|(r, prev)| self.attempt(r, prev))
    }

    /// The attempts that did not parse, in full.
    pub fn failures(&self) -> impl Iterator<Item = Attempt> + '_ {
        self.with_prev()
            .filter(|(r, _)| !r.ok())
            .map(|(r, prev)| self.attempt(r, prev))
    }

    /// How many attempts did not parse (none re-parsed).
    pub fn failed(&self) -> usize {
        self.len() - self.parsed
    }

    /// Every row with the one before it, in one pass.
    fn with_prev(&self) -> impl Iterator<Item = (StepRow, Option<StepRow>)> + '_ {
        let mut prev = None;
        self.all_rows().map(move |r| (r, prev.replace(r)))
    }

    /// Point every row at buffer `map[buffer]` (a strategy that numbered its buffers before
    /// knowing their final order; its steps are never [`Steps::spilled`]).
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

    /// Attempts spilled to a temporary file give back what attempts kept in memory give, in
    /// order, across several spills; only the last ones stay in memory.
    #[test]
    fn spilled_attempts_are_the_kept_ones() {
        let mut kept = Steps::default();
        let mut spilled = Steps::default().spilled();
        let n = SPILL_ROWS * 2 + 123;
        for i in 0..n {
            // Texts of many lengths: some 160 KB in all, written in blocks.
            let text = if i % 5 == 0 {
                "7".to_owned()
            } else {
                format!("{{\"a\":{}", " ".repeat(i % 40))
            };
            for s in [&mut kept, &mut spilled] {
                let at = s.push_text(&text);
                s.push(i as u32, Some(i as u32 % 3), i as u32 / 2, at, i % 5 == 0);
            }
        }
        assert_eq!(spilled.len(), n);
        assert_eq!(spilled.rows().len(), 123, "the rest is in the file");
        assert!(spilled.texts.is_empty(), "the texts are in the other file");
        assert!(
            spilled.text_written > SPILL_TEXT_BYTES as u64,
            "written in blocks"
        );
        assert!(spilled.all_rows().eq(kept.rows().iter().copied()));
        assert!(spilled.iter().eq(kept.iter()));
        assert!(spilled.failures().eq(kept.failures()));
        assert_eq!(spilled.failed(), kept.failures().count());
        for i in [0, 1, SPILL_ROWS - 1, SPILL_ROWS, n - 124, n - 1] {
            assert_eq!(spilled.get(i), kept.get(i), "{i}");
            assert_eq!(spilled.text(i), kept.text(i), "{i}");
        }
        assert_eq!(spilled.get(n), None);
    }

    #[test]
    fn a_row_gives_back_its_text_and_outcome() {
        let mut s = Steps::default();
        s.set_shared_texts(vec!["{\"a\"1".into()]);
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
