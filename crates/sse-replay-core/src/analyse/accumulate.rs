//! The accumulator, exactly as the seed document describes it: a table keyed by the call key; `id`
//! and `name` are set only when present (missing, `null` and `""` all count as absent); `arguments`
//! are always appended; nothing is validated while accumulating; at the finish each call's
//! arguments are parsed once, with empty or whitespace-only arguments taken as `{}`.
//!
//! It does not know which dialect fed it. It records, per call, every fragment (number, position
//! in the arguments string, event, chunk, time) so the analysis can show the state at any cursor and
//! check the seed's three checkpoints: as one [`FragmentRecord`] per fragment for a view that
//! steps through them (the app), or — for a report that only needs each call's own fragments
//! (`check` on a raw body) — compactly, a few bytes a fragment in its call's [`FragmentLog`].
//!
//! Two things it only records, never acts on: cumulative re-sends (a piece that starts with
//! everything before it) and the dialect's word that a call is a server tool. Arguments a dialect
//! saw only in a done event reach it as one ordinary fragment
//! ([`crate::fact::Fact::ArgumentsOnlyInDone`]), so even then it just concatenates.

use std::ops::Range;

use crate::fact::{ArgsPiece, CallKey, Fragment, Pos, Presence, Raw};
use crate::text::SharedText;
use rustc_hash::FxHashMap;

/// One fragment as the accumulator recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FragmentRecord {
    /// Fragment number in the stream (0-based, all calls).
    pub no: u32,
    /// The call (position in the table) it was appended to.
    pub call: u32,
    pub pos: Pos,
    /// Byte range of this fragment's text in the call's reassembled arguments.
    pub args_range: Range<u32>,
    pub id: Presence,
    pub name: Presence,
    /// The `arguments` field was present (possibly empty).
    pub has_args: bool,
    /// The arguments came as a JSON object, not a string.
    pub object_args: bool,
}

/// A name that differs from the one already set for the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameConflict {
    pub fragment: u32,
    pub previous: String,
    pub new: String,
}

/// A fragment that re-sent everything before it (a cumulative stream): appending doubles the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resend {
    /// The first such fragment.
    pub fragment: u32,
    /// How many bytes before it it repeated.
    pub before_bytes: usize,
}

/// A call in the accumulator's table, open until the finish parses it into a [`Call`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenCall {
    pub key: Option<CallKey>,
    /// The index the provider stated in the call's first fragment that had one.
    pub stated_index: Option<u64>,
    pub id: String,
    pub name: String,
    pub args: String,
    /// Fragment numbers of this call, in order (none in [`Accumulator::compact`] mode: see
    /// [`OpenCall::log`]).
    pub fragments: Vec<u32>,
    pub name_conflicts: Vec<NameConflict>,
    pub object_args: bool,
    /// The dialect said this call is complete.
    pub done: bool,
    /// The chunk where the dialect said so (the first time).
    pub done_chunk: Option<u32>,
    /// The dialect's authoritative full arguments (Responses `.done` events).
    pub authoritative: Option<String>,
    /// The first fragment that re-sent the arguments so far, and how many did.
    pub first_resend: Option<Resend>,
    pub resends: u64,
    /// The provider runs this tool itself (the block or item type, e.g. `server_tool_use`).
    pub server_tool: Option<String>,
    /// What kind of call it is when not a plain function call (the item type, e.g.
    /// `custom_tool_call`).
    pub kind: Option<String>,
    /// The arguments are free-form text, taken as a string (never parsed as JSON).
    pub text_input: bool,
    /// The call's fragments, compactly (only in [`Accumulator::compact`] mode).
    pub log: FragmentLog,
    /// Another call's fragment came after this call's last one (for [`Interleaving`]).
    left: bool,
}

/// Each [`Presence`] by its two bits in a [`FragmentLog`] entry's flags (see [`presence_bits`]).
const PRESENCES: [Presence; 4] = [
    Presence::Absent,
    Presence::Null,
    Presence::Empty,
    Presence::Value,
];

/// A presence's two bits in a [`FragmentLog`] entry's flags.
fn presence_bits(p: Presence) -> u8 {
    match p {
        Presence::Absent => 0,
        Presence::Null => 1,
        Presence::Empty => 2,
        Presence::Value => 3,
    }
}

/// Appends `v` as a LEB128 varint.
fn put_varint(out: &mut Vec<u8>, v: u64) {
    use integer_encoding::VarInt as _;
    let mut buf = [0u8; 10];
    let n = v.encode_var(&mut buf);
    out.extend_from_slice(&buf[..n]);
}

/// The varint at `at` (moved past it); `None` at the end of `bytes`.
fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    use integer_encoding::VarInt as _;
    let (v, n) = u64::decode_var(bytes.get(*at..)?)?;
    *at += n;
    Some(v)
}

/// A call's fragment records, compactly: each fragment as the differences from the call's
/// previous one (fragment number, where its text starts and how long it is, chunk, event, time)
/// in variable-length integers, and a byte of flags — some 5 bytes where a [`FragmentRecord`]
/// takes 40, so a report that needs each call's fragments (checkpoints, findings, previews) does
/// not hold a 1 GB stream's millions of records. [`FragmentLog::records`] gives them back.
///
/// An [`Accumulator::compact`] moves the bytes, a segment at a time, to one unlinked temporary
/// file that every call's log shares (when one can be made and written: else they stay in
/// memory), so what stays in memory is each call's unwritten tail and where its segments are.
/// The file is only ever appended to, so a clone reads the same records as the original; two
/// logs are equal when they hold the same records.
#[derive(Clone, Debug, Default)]
pub struct FragmentLog {
    /// Where the log's first bytes are in `file` (offset, length), in order.
    segments: Vec<(u64, u32)>,
    /// The file the segments are in.
    file: Option<LogFile>,
    /// The bytes after the segments, in memory.
    tail: Vec<u8>,
    /// The last record pushed (what the next one is a difference from).
    last: Last,
    len: u32,
}

/// A logged record's fragment number, end of its text, chunk, event and time: what the next
/// record is written as differences from.
type Last = (u32, u32, u32, u32, u64);

/// A log's tail goes to the file when it reaches this many bytes.
const SEGMENT_BYTES: usize = 4096;

/// When the tails in memory grow by this many bytes, every tail of at least [`MIN_SEGMENT_BYTES`]
/// goes to the file (calls that ended keep no tail in memory).
const TAILS_BUDGET: usize = 256 * 1024;

/// A tail shorter than this stays in memory (a segment's place takes 16 bytes): a call with a
/// few fragments costs no more than before.
const MIN_SEGMENT_BYTES: usize = 256;

/// The unlinked temporary file an accumulator's compact logs go to (shared by the logs and their
/// clones; equal only to itself).
#[derive(Clone, Debug)]
struct LogFile(std::sync::Arc<std::sync::Mutex<LogFileState>>);

#[derive(Debug)]
struct LogFileState {
    file: std::fs::File,
    /// Bytes written.
    len: u64,
    /// A write failed: nothing more is written (what was written stays readable).
    failed: bool,
}

impl LogFile {
    /// A new unlinked temporary file (`None` when none can be made).
    fn new() -> Option<Self> {
        let file = tempfile::tempfile().ok()?;
        Some(Self(std::sync::Arc::new(std::sync::Mutex::new(
            LogFileState {
                file,
                len: 0,
                failed: false,
            },
        ))))
    }

    /// Append `bytes`: where they start, or `None` when they could not be written (then
    /// nothing more is).
    fn append(&self, bytes: &[u8]) -> Option<u64> {
        use std::io::Write as _;
        let mut state = self.0.lock().ok()?;
        if state.failed {
            return None;
        }
        let at = state.len;
        match state.file.write_all(bytes) {
            Ok(()) => {
                state.len += bytes.len() as u64;
                Some(at)
            }
            Err(_) => {
                state.failed = true;
                None
            }
        }
    }

    /// The `n` bytes at `at` (fewer when they cannot all be read).
    fn read(&self, at: u64, n: usize) -> Vec<u8> {
        let mut buf = vec![0; n];
        let Ok(state) = self.0.lock() else {
            return Vec::new();
        };
        let mut done = 0;
        while done < n {
            #[cfg(unix)]
            let got = std::os::unix::fs::FileExt::read_at(
                &state.file,
                &mut buf[done..],
                at + done as u64,
            );
            #[cfg(windows)]
            let got = std::os::windows::fs::FileExt::seek_read(
                &state.file,
                &mut buf[done..],
                at + done as u64,
            );
            #[cfg(not(any(unix, windows)))]
            let got: std::io::Result<usize> = Ok(0);
            match got {
                Ok(0) | Err(_) => break,
                Ok(k) => done += k,
            }
        }
        buf.truncate(done);
        buf
    }
}

/// Whether (and where) an [`Accumulator::compact`]'s logs go to a temporary file.
#[derive(Debug, Default)]
struct Spill {
    /// The file, once made.
    file: Option<LogFile>,
    /// No file could be made or written: every log stays in memory.
    off: bool,
    /// Bytes in the calls' tails (an estimate from above: a tail written alone is not taken
    /// off until the next round).
    tails: usize,
    /// The next round of writing every tail starts when `tails` passes this.
    next_round: usize,
}

impl Spill {
    /// The file, made the first time (`None` when it cannot be, or writing it failed).
    fn file(&mut self) -> Option<LogFile> {
        if self.off {
            return None;
        }
        if self.file.is_none() {
            self.file = LogFile::new();
            self.off = self.file.is_none();
        }
        self.file.clone()
    }

    /// Write `log`'s tail to the file (see [`FragmentLog::spill`]); stop spilling when that
    /// fails.
    fn write(&mut self, log: &mut FragmentLog) {
        if let Some(file) = self.file()
            && !log.spill(&file)
        {
            self.off = true;
        }
    }
}

impl FragmentLog {
    /// Log `r`, the call's next fragment: a byte of flags (the id's and name's presence, text
    /// carried, an object, and whether the two differences usually 0 follow), then the
    /// differences from the call's previous fragment as varints.
    fn push(&mut self, r: &FragmentRecord) {
        let (no, end, chunk, event, t) = self.last;
        let out = &mut self.tail;
        // Wrapping differences: every field only grows in stream order, but a value that did
        // not would still come back exactly (a longer varint, nothing lost).
        // A fragment's text starts where the call's previous one ended, and a raw body's
        // times are all 0: those two differences are written only when not 0 (a flag says so).
        let dstart = r.args_range.start.wrapping_sub(end);
        let dt = r.pos.t_micros.wrapping_sub(t);
        out.push(
            presence_bits(r.id)
                | presence_bits(r.name) << 2
                | u8::from(r.has_args) << 4
                | u8::from(r.object_args) << 5
                | u8::from(dstart != 0) << 6
                | u8::from(dt != 0) << 7,
        );
        put_varint(out, u64::from(r.no.wrapping_sub(no)));
        if dstart != 0 {
            put_varint(out, u64::from(dstart));
        }
        put_varint(
            out,
            u64::from(r.args_range.end.wrapping_sub(r.args_range.start)),
        );
        put_varint(out, u64::from(r.pos.chunk.wrapping_sub(chunk)));
        put_varint(out, u64::from(r.pos.event.wrapping_sub(event)));
        if dt != 0 {
            put_varint(out, dt);
        }
        self.last = (
            r.no,
            r.args_range.end,
            r.pos.chunk,
            r.pos.event,
            r.pos.t_micros,
        );
        self.len += 1;
    }

    /// Number of fragments logged.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No fragment logged.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the log in memory (its tail).
    fn tail_len(&self) -> usize {
        self.tail.len()
    }

    /// Move the tail to `file`, after the log's earlier segments (the last one grows when the
    /// tail lands right after it): `false` when it could not be written (the tail stays).
    fn spill(&mut self, file: &LogFile) -> bool {
        if self.tail.is_empty() {
            return true;
        }
        if self.file.as_ref().is_some_and(|f| !f.same(file)) {
            // Segments in another file (a log spilled by another accumulator): keep the tail.
            return true;
        }
        let Ok(n) = u32::try_from(self.tail.len()) else {
            return false;
        };
        let Some(at) = file.append(&self.tail) else {
            return false;
        };
        match self.segments.last_mut() {
            Some((start, len))
                if *start + u64::from(*len) == at && len.checked_add(n).is_some() =>
            {
                *len += n;
            }
            _ => self.segments.push((at, n)),
        }
        self.file = Some(file.clone());
        // Freed, not kept: a call that ended holds nothing in memory.
        self.tail = Vec::new();
        true
    }

    /// The tail is all in memory now: its room fitted to it.
    fn seal(&mut self) {
        self.tail.shrink_to_fit();
        self.segments.shrink_to_fit();
    }

    /// The records, in order, of the fragments of call `call` (its position) logged here,
    /// read back a block of its file at a time.
    pub fn records(&self, call: u32) -> Records<'_> {
        Records {
            log: self,
            call,
            segment: 0,
            offset: 0,
            buf: Vec::new(),
            at: 0,
            in_tail: false,
            state: (0, 0, 0, 0, 0),
            done: false,
        }
    }

    /// Every byte of the log (for comparing two logs).
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(file) = &self.file {
            for &(at, n) in &self.segments {
                out.extend(file.read(at, n as usize));
            }
        }
        out.extend_from_slice(&self.tail);
        out
    }
}

impl LogFile {
    /// The same file.
    fn same(&self, other: &LogFile) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Two logs hold the same records (wherever their bytes are).
impl PartialEq for FragmentLog {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.last == other.last && self.bytes() == other.bytes()
    }
}

impl Eq for FragmentLog {}

/// Largest block of a log's file read at once by [`Records`].
const READ_BYTES: usize = 64 * 1024;

/// The records of a [`FragmentLog`], in order ([`FragmentLog::records`]).
#[derive(Debug)]
pub struct Records<'a> {
    log: &'a FragmentLog,
    call: u32,
    /// The next segment to read, and how far into it.
    segment: usize,
    offset: u64,
    /// Bytes read from the file, decoded up to `at` (the tail is decoded where it is).
    buf: Vec<u8>,
    at: usize,
    in_tail: bool,
    /// The previous record's.
    state: Last,
    /// Nothing more to give (the end, or bytes that could not be read).
    done: bool,
}

impl Records<'_> {
    /// More bytes to decode: the next block of the file, else the tail. `false` when there are
    /// none, or they cannot be read.
    fn fill(&mut self) -> bool {
        let log = self.log;
        self.buf.drain(..self.at.min(self.buf.len()));
        self.at = 0;
        if let (Some(file), Some(&(start, len))) = (&log.file, log.segments.get(self.segment)) {
            let n = (u64::from(len) - self.offset).min(READ_BYTES as u64) as usize;
            let got = file.read(start + self.offset, n);
            if got.len() != n {
                return false;
            }
            self.buf.extend_from_slice(&got);
            self.offset += n as u64;
            if self.offset == u64::from(len) {
                self.segment += 1;
                self.offset = 0;
            }
            return true;
        }
        // Segments hold whole records: nothing may be left over when they end.
        if self.in_tail || self.segment < log.segments.len() || !self.buf.is_empty() {
            return false;
        }
        self.in_tail = true;
        true
    }
}

impl Iterator for Records<'_> {
    type Item = FragmentRecord;

    fn next(&mut self) -> Option<FragmentRecord> {
        while !self.done {
            let bytes: &[u8] = if self.in_tail {
                &self.log.tail
            } else {
                &self.buf
            };
            let mut at = self.at;
            if at < bytes.len()
                && let Some((r, state)) = decode(bytes, &mut at, self.state, self.call)
            {
                self.at = at;
                self.state = state;
                return Some(r);
            }
            // The end of what was read (or a record cut by it): read more.
            if self.in_tail || !self.fill() {
                self.done = true;
            }
        }
        None
    }
}

/// The record at `at` in `b` (moved past it), the previous one's being `prev`; with the new
/// (number, end, chunk, event, time). `None` when `b` ends inside it.
fn decode(b: &[u8], at: &mut usize, prev: Last, call: u32) -> Option<(FragmentRecord, Last)> {
    let (no, end, chunk, event, t) = prev;
    let &flags = b.get(*at)?;
    *at += 1;
    // Each value was written from a u32 (a u64 for the time): truncating gives it back.
    let next = |at: &mut usize| get_varint(b, at);
    let maybe = |written: bool, at: &mut usize| {
        if written { next(at) } else { Some(0) }
    };
    let dno = next(at)?;
    let dstart = maybe(flags & 0x40 != 0, at)?;
    let len = next(at)?;
    let dchunk = next(at)?;
    let devent = next(at)?;
    let dt = maybe(flags & 0x80 != 0, at)?;
    let no = no.wrapping_add(dno as u32);
    let start = end.wrapping_add(dstart as u32);
    let end = start.wrapping_add(len as u32);
    let chunk = chunk.wrapping_add(dchunk as u32);
    let event = event.wrapping_add(devent as u32);
    let t = t.wrapping_add(dt);
    Some((
        FragmentRecord {
            no,
            call,
            pos: Pos {
                event,
                chunk,
                t_micros: t,
            },
            args_range: start..end,
            id: PRESENCES[usize::from(flags & 3)],
            name: PRESENCES[usize::from(flags >> 2 & 3)],
            has_args: flags & 0x10 != 0,
            object_args: flags & 0x20 != 0,
        },
        (no, end, chunk, event, t),
    ))
}

/// Fragments of a call that came after another call's fragments that came after its own
/// (parallel calls alternating): how many times, and the first (fragment, call, chunk).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interleaving {
    /// How many fragments returned to a call left before.
    pub count: u64,
    /// The first of them: its number, its call and its chunk.
    pub first: Option<(u32, u32, u32)>,
}

/// How an [`Accumulator`] keeps its fragments' records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Keep {
    /// Not at all (a lean pass).
    #[default]
    Nothing,
    /// One [`FragmentRecord`] each, in stream order.
    Records,
    /// In each call's [`FragmentLog`].
    Compact,
}

/// What [`Accumulator::finish_each`] leaves once every call is handed out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Finished {
    /// Every fragment's record in stream order (empty unless records were kept).
    pub records: Vec<FragmentRecord>,
    /// Each call's compact log, by position (empty unless [`Accumulator::compact`]).
    pub logs: Vec<FragmentLog>,
    /// Parallel calls' fragments alternating.
    pub interleaving: Interleaving,
    /// Fragments pushed.
    pub fragment_count: u32,
}

/// A parsed arguments value: held, or only the text it parsed from, which is parsed again when
/// the value is asked for. A parsed object takes many times its text's size in memory (some
/// 20 KB for a 1.7 KB call), so a report over a stream of thousands of calls whose texts it keeps
/// anyway (`check` on a raw body: [`Accumulator::compact`]) keeps the verdict of the one parse
/// and the text, and writes each value from its text when it gets to it — serialization, not a
/// second validation. Cheap to clone (shared). The text is the call's own
/// ([`Call::raw_arguments`]), shared, not a copy of it.
#[derive(Clone)]
pub struct ParsedValue(std::sync::Arc<Held>);

enum Held {
    Value(serde_json::Value),
    /// A text that parsed, and its value once [`ParsedValue`] was dereferenced.
    Text {
        text: SharedText,
        value: std::sync::OnceLock<serde_json::Value>,
    },
}

impl ParsedValue {
    /// Held as its text (not a parsed tree), and not parsed since.
    #[cfg(test)]
    pub(crate) fn is_text_only(&self) -> bool {
        matches!(&*self.0, Held::Text { value, .. } if value.get().is_none())
    }

    /// A value held as it is.
    pub fn new(value: serde_json::Value) -> Self {
        Self(std::sync::Arc::new(Held::Value(value)))
    }

    /// `text`, which parsed, held as its text only.
    fn of_text(text: &SharedText) -> Self {
        Self(std::sync::Arc::new(Held::Text {
            text: text.clone(),
            value: std::sync::OnceLock::new(),
        }))
    }

    /// The value, without keeping it: borrowed when it is held (or was kept by a dereference),
    /// else parsed from its text for this use only. The writers of `check`'s reports, the
    /// previews and the strategies' agreement use this, so the values are never all held at
    /// once.
    pub fn get(&self) -> std::borrow::Cow<'_, serde_json::Value> {
        match &*self.0 {
            Held::Value(v) => std::borrow::Cow::Borrowed(v),
            Held::Text { text, value } => match value.get() {
                Some(v) => std::borrow::Cow::Borrowed(v),
                None => std::borrow::Cow::Owned(reparse(text)),
            },
        }
    }
}

/// A text that parsed once, parsed again: the same value. (Never `Null` in practice: the text
/// was only kept because it parsed.)
fn reparse(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

/// The value, kept from then on when it was held as its text (the app, the harness: small
/// analyses that look at values again and again). See [`ParsedValue::get`] for a use that
/// does not keep it.
impl std::ops::Deref for ParsedValue {
    type Target = serde_json::Value;

    fn deref(&self) -> &serde_json::Value {
        match &*self.0 {
            Held::Value(v) => v,
            Held::Text { text, value } => value.get_or_init(|| reparse(text)),
        }
    }
}

impl From<serde_json::Value> for ParsedValue {
    fn from(value: serde_json::Value) -> Self {
        Self::new(value)
    }
}

impl PartialEq for ParsedValue {
    fn eq(&self, other: &Self) -> bool {
        if std::sync::Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        if let (Held::Text { text: a, .. }, Held::Text { text: b, .. }) = (&*self.0, &*other.0)
            && a == b
        {
            // The same text parses to the same value.
            return true;
        }
        *self.get() == *other.get()
    }
}

impl std::fmt::Debug for ParsedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Compact JSON, as [`serde_json::Value`]'s.
impl std::fmt::Display for ParsedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

impl serde::Serialize for ParsedValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

/// The outcome of the one parse at the finish.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    /// The parsed arguments (`{}` for empty). Shared: the naive strategies that end up with the
    /// same arguments text as the correct call hold the correct call's value, not a copy (a
    /// parsed object costs some 300 bytes, and there are six strategies per call).
    Ok(ParsedValue),
    /// serde_json's error, verbatim, followed by the 0-based character position.
    Err {
        error: String,
        line: usize,
        column: usize,
    },
}

impl Parsed {
    /// A parse that gave `value`.
    pub fn ok(value: serde_json::Value) -> Self {
        Parsed::Ok(ParsedValue::new(value))
    }
}

/// The one way a parse outcome is shown to a person (the report, every panel): the value as
/// compact JSON, or "not valid JSON: " and serde_json's message with the character position —
/// never Rust's `Debug` form.
impl std::fmt::Display for Parsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Parsed::Ok(v) => write!(f, "{v}"),
            Parsed::Err { error, .. } => write!(f, "not valid JSON: {error}"),
        }
    }
}

/// A finished call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// Position in stream order (order of first fragment).
    pub position: u32,
    pub key: CallKey,
    pub stated_index: Option<u64>,
    /// `None` when no fragment carried an id (Gemini).
    pub id: Option<String>,
    pub name: String,
    /// The reassembled arguments string, verbatim (shared with its parsed value and the naive
    /// strategies' calls that have the same text: see [`SharedText`]).
    pub raw_arguments: SharedText,
    pub parsed: Parsed,
    /// The arguments were empty or whitespace and were taken as `{}`.
    pub empty_arguments: bool,
    pub object_arguments: bool,
    /// Complete: the dialect marked the call done, or the stream finished normally.
    pub complete: bool,
    /// The chunk where the dialect marked the call done (a stop or done event), if it did: before
    /// it the call is still open, whatever [`Call::complete`] says of the whole stream.
    pub done_chunk: Option<u32>,
    /// The call's fragment numbers, in order; empty when they were kept compactly
    /// ([`Accumulator::compact`]: the call's [`FragmentLog`] has them), so
    /// [`Call::fragment_count`] says how many there are.
    pub fragments: Vec<u32>,
    /// How many fragments the call arrived in (`fragments.len()` when they are listed).
    pub fragment_count: u32,
    pub name_conflicts: Vec<NameConflict>,
    pub authoritative: Option<String>,
    /// The first fragment that re-sent everything before it (cumulative arguments), and how many did.
    pub first_resend: Option<Resend>,
    pub resends: u64,
    /// `Some(type)` for a tool the provider runs itself (Anthropic `server_tool_use`, Responses
    /// `web_search_call`…): reported apart, never a call for the client, never in the verdict.
    pub server_tool: Option<String>,
    /// `Some(type)` for a call the client executes that is not a plain function call (Responses
    /// `custom_tool_call`, `apply_patch_call`, `local_shell_call`, `shell_call`, `computer_call`…);
    /// `None` for an ordinary function call, so outputs that predate it stay as they were.
    pub kind: Option<String>,
    /// The arguments are free-form text (a custom tool's input): [`Call::parsed`] is that text as
    /// a JSON string, never a parse of it.
    pub text_input: bool,
}

impl Call {
    /// A call the client must execute (not a server tool).
    pub fn is_client_call(&self) -> bool {
        self.server_tool.is_none()
    }

    /// Arguments length in characters (the seed counts 22 for `{"city":"深圳","days":3}`).
    pub fn char_len(&self) -> usize {
        self.raw_arguments.chars().count()
    }
    /// Arguments length in bytes (26 for the same string).
    pub fn byte_len(&self) -> usize {
        self.raw_arguments.len()
    }
    /// The parsed value, if the parse succeeded.
    pub fn value(&self) -> Option<&serde_json::Value> {
        match &self.parsed {
            Parsed::Ok(v) => Some(v),
            Parsed::Err { .. } => None,
        }
    }
}

/// The table.
#[derive(Debug, Default)]
pub struct Accumulator {
    calls: Vec<OpenCall>,
    table: FxHashMap<CallKey, u32>,
    recent: [Option<(CallKey, u32)>; 2],
    keep: Keep,
    /// Keep no call's arguments (see [`Accumulator::without_arguments`]).
    counts_only: bool,
    /// Keep each parsed value as its text ([`Accumulator::values_as_text`]).
    values_as_text: bool,
    records: Vec<FragmentRecord>,
    /// Where the compact logs go.
    spill: Spill,
    fragment_count: u32,
    /// The call of the last fragment (for [`Interleaving`]).
    last_call: Option<u32>,
    interleaving: Interleaving,
}

impl Accumulator {
    /// An accumulator that keeps per-fragment records (for analysis) or not (lean export).
    pub fn new(keep_records: bool) -> Self {
        Self {
            keep: if keep_records {
                Keep::Records
            } else {
                Keep::Nothing
            },
            ..Default::default()
        }
    }

    /// Each call's parsed value kept as the text it parsed from ([`ParsedValue`]), parsed again
    /// when it is looked at, as [`Accumulator::compact`] keeps it, without keeping fragment
    /// records: for a pass whose calls are only compared and reported (the per-read strategies,
    /// which re-frame a whole recording), so thousands of calls do not each hold a parsed tree
    /// some ten times their text.
    pub fn values_as_text(mut self) -> Self {
        self.values_as_text = true;
        self
    }

    /// An accumulator that keeps no call's arguments (nor the dialect's authoritative copies):
    /// ids, names, kinds and the dialect's "done" marks only. For a caller that needs the number
    /// of calls and how the stream ended, never the arguments (the recorder's summary), whose
    /// memory must not grow with the stream: kept, a long call's arguments were a fifth to a
    /// half of the bytes received, and parsed at the end once more. Its calls come out with
    /// empty arguments, parsed as `{}`.
    pub fn without_arguments(mut self) -> Self {
        self.counts_only = true;
        self
    }

    /// Keep each call's fragments compactly, in its [`FragmentLog`], rather than a
    /// [`FragmentRecord`] per fragment ([`Accumulator::records`] stays empty), and each call's
    /// parsed arguments as the text they parsed from ([`ParsedValue`]), not a value per call.
    pub fn compact(mut self) -> Self {
        self.keep = Keep::Compact;
        self
    }

    fn call_for(&mut self, key: &CallKey) -> u32 {
        // Two most recent keys: parallel calls usually alternate between two.
        for (k, i) in self.recent.iter().flatten() {
            if k == key {
                return *i;
            }
        }
        let i = match self.table.get(key) {
            Some(&i) => i,
            None => {
                let i = self.calls.len() as u32;
                self.calls.push(OpenCall {
                    key: Some(key.clone()),
                    ..Default::default()
                });
                self.table.insert(key.clone(), i);
                i
            }
        };
        self.recent[1] = self.recent[0].take();
        self.recent[0] = Some((key.clone(), i));
        i
    }

    /// The seed's `feedToolCall`: set id and name only when present, always append arguments.
    /// Returns the call position the fragment went to.
    pub fn push(&mut self, frag: Fragment, pos: Pos) -> u32 {
        let call = self.call_for(&frag.key);
        let no = self.fragment_count;
        self.fragment_count += 1;
        let open = &mut self.calls[call as usize];
        if open.stated_index.is_none() {
            open.stated_index = frag.stated_index;
        }
        if let Some(id) = frag.id.non_empty()
            && open.id != id
        {
            open.id = id.to_owned();
        }
        if let Some(name) = frag.name.non_empty()
            && open.name != name
        {
            if !open.name.is_empty() {
                open.name_conflicts.push(NameConflict {
                    fragment: no,
                    previous: open.name.clone(),
                    new: name.to_owned(),
                });
            }
            open.name = name.to_owned();
        }
        let start = open.args.len() as u32;
        let mut object_args = false;
        if let Raw::Value(piece) = &frag.args {
            object_args = matches!(piece, ArgsPiece::Object(_));
            open.object_args |= object_args;
            let text = if self.counts_only { "" } else { piece.text() };
            // Observed, never corrected: a piece that starts with everything before it is a
            // cumulative re-send (`{…}{…}` once appended). Cheap: the comparison only runs for a
            // piece longer than the whole call so far.
            if open.args.len() >= 2 && text.len() > open.args.len() && text.starts_with(&open.args)
            {
                open.resends += 1;
                if open.first_resend.is_none() {
                    open.first_resend = Some(Resend {
                        fragment: no,
                        before_bytes: open.args.len(),
                    });
                }
            }
            open.args.push_str(text);
        }
        let end = open.args.len() as u32;
        if self.keep != Keep::Nothing {
            if self.keep == Keep::Records {
                open.fragments.push(no);
            }
            let record = FragmentRecord {
                no,
                call,
                pos,
                args_range: start..end,
                id: frag.id.presence(),
                name: frag.name.presence(),
                has_args: matches!(frag.args, Raw::Value(_)),
                object_args,
            };
            if self.keep == Keep::Compact {
                let before = open.log.tail_len();
                open.log.push(&record);
                self.spill.tails += open.log.tail_len().saturating_sub(before);
                if open.log.tail_len() >= SEGMENT_BYTES {
                    self.spill.write(&mut open.log);
                }
                if self.spill.tails > self.spill.next_round {
                    self.spill_tails();
                }
            } else {
                self.records.push(record);
            }
            self.interleave(call, no, pos.chunk);
        }
        call
    }

    /// Write every call's tail of at least [`MIN_SEGMENT_BYTES`] to the file, so calls that ended
    /// keep nothing in memory. The next round comes when the tails left grow by
    /// [`TAILS_BUDGET`], or by as much as they hold (short tails of very many calls: the rounds,
    /// which visit every call, then come further and further apart).
    fn spill_tails(&mut self) {
        let mut left = 0;
        for c in &mut self.calls {
            if c.log.tail_len() >= MIN_SEGMENT_BYTES {
                self.spill.write(&mut c.log);
            }
            left += c.log.tail_len();
        }
        self.spill.tails = left;
        self.spill.next_round = left + left.max(TAILS_BUDGET);
    }

    /// A fragment of `call`: count it when `call` had been left for another call before.
    fn interleave(&mut self, call: u32, no: u32, chunk: u32) {
        if self.last_call == Some(call) {
            return;
        }
        if let Some(prev) = self.last_call
            && let Some(p) = self.calls.get_mut(prev as usize)
        {
            p.left = true;
        }
        if self.calls.get(call as usize).is_some_and(|c| c.left) {
            self.interleaving.count += 1;
            self.interleaving.first.get_or_insert((no, call, chunk));
        }
        self.last_call = Some(call);
    }

    /// The dialect says the call with `key` is complete (in chunk `chunk`).
    pub fn call_done(&mut self, key: &CallKey, chunk: u32) {
        if let Some(&i) = self.table.get(key) {
            let call = &mut self.calls[i as usize];
            call.done = true;
            call.done_chunk.get_or_insert(chunk);
        }
    }

    /// The dialect carries the full arguments of the call with `key`.
    pub fn authoritative(&mut self, key: &CallKey, arguments: String) {
        let i = self.call_for(key);
        if !self.counts_only {
            self.calls[i as usize].authoritative = Some(arguments);
        }
    }

    /// The dialect says the call with `key` is a tool the provider runs itself.
    pub fn server_tool(&mut self, key: &CallKey, kind: String) {
        let i = self.call_for(key);
        self.calls[i as usize].server_tool = Some(kind);
    }

    /// The dialect says what kind of client call `key` is (and whether its arguments are text).
    pub fn call_kind(&mut self, key: &CallKey, kind: String, text: bool) {
        let i = self.call_for(key);
        let call = &mut self.calls[i as usize];
        call.kind = Some(kind);
        call.text_input = text;
    }

    /// The call position for `key`, if it has been seen.
    pub fn position_of(&self, key: &CallKey) -> Option<u32> {
        self.table.get(key).copied()
    }

    /// Calls so far (unparsed).
    pub fn open_calls(&self) -> &[OpenCall] {
        &self.calls
    }

    /// Fragment records so far.
    pub fn records(&self) -> &[FragmentRecord] {
        &self.records
    }

    /// Number of fragments pushed.
    pub fn fragment_count(&self) -> u32 {
        self.fragment_count
    }

    /// The seed's `finishToolCalls`: parse each call once. `stream_finished` says whether the stream
    /// ended with a finish signal (otherwise only calls the dialect marked done are complete).
    pub fn finish(self, stream_finished: bool) -> (Vec<Call>, Vec<FragmentRecord>) {
        let mut calls = Vec::with_capacity(self.calls.len());
        let done = self.finish_each(stream_finished, |c, _| calls.push(c));
        (calls, done.records)
    }

    /// [`Accumulator::finish`] one call at a time, in stream order, so a caller that writes each call
    /// out (the streaming `export`) never holds every parsed value at once. `each` also gets the
    /// call's own fragment records, in order (none in a lean pass), to locate what it reports:
    /// read back from the call's log one at a time in compact mode.
    pub fn finish_each(
        self,
        stream_finished: bool,
        mut each: impl FnMut(Call, Own<'_>),
    ) -> Finished {
        let records = self.records;
        let mut spill = self.spill;
        let compact = self.keep == Keep::Compact;
        let values_as_text = self.values_as_text;
        let mut logs = Vec::with_capacity(if compact { self.calls.len() } else { 0 });
        for (i, mut s) in self.calls.into_iter().enumerate() {
            let mut log = std::mem::take(&mut s.log);
            let held = if compact {
                if log.tail_len() >= MIN_SEGMENT_BYTES {
                    spill.write(&mut log);
                }
                log.seal();
                Vec::new()
            } else {
                own_records(&s.fragments, &records)
            };
            let fragment_count = if compact {
                log.len
            } else {
                s.fragments.len() as u32
            };
            // The text moves into its shared form (one copy, the growable buffer then freed).
            let args = SharedText::from(std::mem::take(&mut s.args));
            let (parsed, empty) = if s.text_input {
                // Free-form text is the value itself: nothing to parse, nothing to fail.
                (
                    Parsed::Ok(serde_json::Value::String(args.to_string()).into()),
                    false,
                )
            } else if compact || values_as_text {
                parse_once_keeping_text(&args)
            } else {
                parse_once(&args)
            };
            each(
                Call {
                    position: i as u32,
                    key: s.key.unwrap_or(CallKey::Ordinal(i as u32)),
                    stated_index: s.stated_index,
                    id: if s.id.is_empty() { None } else { Some(s.id) },
                    name: s.name,
                    raw_arguments: args,
                    parsed,
                    empty_arguments: empty,
                    object_arguments: s.object_args,
                    complete: s.done || stream_finished,
                    done_chunk: s.done_chunk,
                    fragments: s.fragments,
                    fragment_count,
                    name_conflicts: s.name_conflicts,
                    authoritative: s.authoritative,
                    first_resend: s.first_resend,
                    resends: s.resends,
                    server_tool: s.server_tool,
                    kind: s.kind,
                    text_input: s.text_input,
                },
                if compact {
                    Own::Log(&log, i as u32)
                } else {
                    Own::Held(&held)
                },
            );
            if compact {
                logs.push(log);
            }
        }
        Finished {
            records,
            logs,
            interleaving: self.interleaving,
            fragment_count: self.fragment_count,
        }
    }
}

/// A call's own fragment records, in order: held, or read back from the call's compact log
/// (never all at once: a call may have millions).
#[derive(Clone, Copy, Debug)]
pub enum Own<'a> {
    /// The records themselves.
    Held(&'a [FragmentRecord]),
    /// The records of the fragments numbered `.0` (one call's), out of every fragment's `.1`
    /// (in stream order).
    Numbered(&'a [u32], &'a [FragmentRecord]),
    /// The call's compact log, and the call's position.
    Log(&'a FragmentLog, u32),
}

impl<'a> Own<'a> {
    /// The records, in order.
    pub fn iter(self) -> OwnIter<'a> {
        match self {
            Own::Held(r) => OwnIter::Held(r.iter()),
            Own::Numbered(n, r) => OwnIter::Numbered(n.iter(), r),
            Own::Log(log, call) => OwnIter::Log(log.records(call)),
        }
    }

    /// The first record.
    pub fn first(self) -> Option<FragmentRecord> {
        self.iter().next()
    }

    /// The records of the fragments numbered `wanted` (in any order), in order: to look a few
    /// up with [`own_record`] in one pass.
    pub fn only(self, wanted: &[u32]) -> Vec<FragmentRecord> {
        let mut wanted = wanted.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        if wanted.is_empty() {
            return Vec::new();
        }
        self.iter()
            .filter(|f| wanted.binary_search(&f.no).is_ok())
            .collect()
    }
}

/// The iterator of [`Own::iter`].
#[derive(Debug)]
pub enum OwnIter<'a> {
    #[doc(hidden)]
    Held(std::slice::Iter<'a, FragmentRecord>),
    #[doc(hidden)]
    Numbered(std::slice::Iter<'a, u32>, &'a [FragmentRecord]),
    #[doc(hidden)]
    Log(Records<'a>),
}

impl Iterator for OwnIter<'_> {
    type Item = FragmentRecord;

    fn next(&mut self) -> Option<FragmentRecord> {
        match self {
            OwnIter::Held(r) => r.next().cloned(),
            OwnIter::Numbered(n, r) => n.find_map(|&no| r.get(no as usize)).cloned(),
            OwnIter::Log(r) => r.next(),
        }
    }
}

/// The records of the fragments numbered `fragments` (one call's), out of every fragment's
/// `records` in stream order.
pub fn own_records(fragments: &[u32], records: &[FragmentRecord]) -> Vec<FragmentRecord> {
    fragments
        .iter()
        .filter_map(|&n| records.get(n as usize))
        .cloned()
        .collect()
}

/// The record of fragment `no` among a call's own records (`own`, in fragment order).
pub fn own_record(own: &[FragmentRecord], no: u32) -> Option<&FragmentRecord> {
    own.binary_search_by_key(&no, |f| f.no)
        .ok()
        .and_then(|i| own.get(i))
}

/// Parse a call's complete arguments once: empty or whitespace-only is `{}`.
pub fn parse_once(args: &str) -> (Parsed, bool) {
    if args.trim().is_empty() {
        return (
            Parsed::ok(serde_json::Value::Object(Default::default())),
            true,
        );
    }
    (parse_value(args), false)
}

/// [`parse_once`], keeping a text that parses as its text rather than its value
/// ([`ParsedValue`]): for a report that keeps the call's text anyway.
fn parse_once_keeping_text(args: &SharedText) -> (Parsed, bool) {
    match parse_once(args) {
        (Parsed::Ok(_), false) => (Parsed::Ok(ParsedValue::of_text(args)), false),
        other => other,
    }
}

/// Parse `text` as JSON with no special cases (the naive strategies use this too).
pub fn parse_value(text: &str) -> Parsed {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => Parsed::ok(v),
        Err(e) => Parsed::Err {
            error: error_text(text, &e),
            line: e.line(),
            column: e.column(),
        },
    }
}

/// serde_json's message plus the 0-based character position that JavaScript's `JSON.parse` reports
/// (the seed's "at position 22"): serde_json gives a line and a byte column, which mean little to
/// someone counting characters in `{"city":"深圳","days":3}{…}`.
fn error_text(text: &str, e: &serde_json::Error) -> String {
    let position = if e.is_eof() {
        text.chars().count()
    } else {
        let line_start: usize = text
            .split_inclusive('\n')
            .take(e.line().saturating_sub(1))
            .map(str::len)
            .sum();
        let mut byte = (line_start + e.column().saturating_sub(1)).min(text.len());
        while !text.is_char_boundary(byte) {
            byte -= 1;
        }
        text[..byte].chars().count()
    };
    format!("{e} (character position {position})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> Fragment {
        Fragment {
            key: CallKey::Index {
                choice: 0,
                index,
                generation: 0,
            },
            stated_index: Some(index),
            id: id.map_or(Raw::Absent, |s| Raw::Value(s.into())),
            name: name.map_or(Raw::Absent, |s| Raw::Value(s.into())),
            args: Raw::Value(ArgsPiece::Text(args.into())),
        }
    }

    #[test]
    fn seed_example() {
        let mut acc = Accumulator::new(true);
        let pieces = ["{\"cit", "y\":\"深", "圳\",\"d", "ays\":", "3}"];
        for (i, p) in pieces.iter().enumerate() {
            let first = i == 0;
            acc.push(
                frag(
                    0,
                    first.then_some("call_1"),
                    first.then_some("get_weather"),
                    p,
                ),
                Pos::default(),
            );
        }
        let (calls, records) = acc.finish(true);
        assert_eq!(calls[0].raw_arguments, r#"{"city":"深圳","days":3}"#);
        assert_eq!(calls[0].char_len(), 22);
        assert_eq!(calls[0].byte_len(), 26);
        assert_eq!(calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(records.len(), 5);
        assert_eq!(records[1].args_range, 5..12, "byte range: 深 is 3 bytes");
    }

    #[test]
    fn empty_and_null_never_overwrite() {
        let mut acc = Accumulator::new(false);
        acc.push(frag(0, Some("call_1"), Some("f"), ""), Pos::default());
        let mut f = frag(0, Some(""), None, "");
        f.name = Raw::Null;
        acc.push(f, Pos::default());
        let (calls, _) = acc.finish(true);
        assert_eq!(calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(calls[0].name, "f");
        assert!(calls[0].empty_arguments);
        assert_eq!(calls[0].value(), Some(&serde_json::json!({})));
    }

    /// A call's compact log gives back exactly the records kept one by one, also with values
    /// that do not grow (wrapping differences) and every flag combination.
    #[test]
    fn the_compact_log_gives_back_every_record() {
        let mut rng = fastrand::Rng::with_seed(7);
        let presence = [
            Presence::Absent,
            Presence::Null,
            Presence::Empty,
            Presence::Value,
        ];
        let mut log = FragmentLog::default();
        let mut want = Vec::new();
        let mut end = 0u32;
        for i in 0..2_000u32 {
            let start = if i % 97 == 5 { rng.u32(..) } else { end };
            end = start.wrapping_add(rng.u32(..300));
            let r = FragmentRecord {
                no: if i % 50 == 3 { rng.u32(..) } else { i * 3 },
                call: 4,
                pos: Pos {
                    event: rng.u32(..),
                    chunk: i / 2,
                    t_micros: if i % 7 == 0 {
                        rng.u64(..)
                    } else {
                        u64::from(i)
                    },
                },
                args_range: start..end,
                id: presence[rng.usize(..4)],
                name: presence[rng.usize(..4)],
                has_args: rng.bool(),
                object_args: rng.bool(),
            };
            log.push(&r);
            want.push(r);
        }
        assert_eq!(log.len(), want.len());
        assert_eq!(log.records(4).collect::<Vec<_>>(), want);
    }

    /// Compact or not, the accumulator hands each call the same own records, and counts the
    /// same interleaving.
    #[test]
    fn compact_and_full_records_agree() {
        let run = |compact: bool| {
            let mut acc = Accumulator::new(true);
            if compact {
                acc = acc.compact();
            }
            for (i, call) in [0u64, 1, 0, 1, 1, 2, 0].into_iter().enumerate() {
                let pos = Pos {
                    event: i as u32 * 2,
                    chunk: i as u32,
                    t_micros: 10 * i as u64,
                };
                acc.push(frag(call, (i < 3).then_some("id"), None, "ab"), pos);
            }
            let mut own = Vec::new();
            let done = acc.finish_each(true, |c, records| {
                own.push((c.position, records.iter().collect::<Vec<_>>()))
            });
            (own, done.interleaving, done.fragment_count)
        };
        let (full, compact) = (run(false), run(true));
        assert_eq!(full, compact);
        assert_eq!(full.1.count, 3, "back to call 0, to call 1, to call 0");
        assert_eq!(full.1.first, Some((2, 0, 2)));
        assert_eq!(full.0[2].1.len(), 1);
    }

    /// A compact accumulator keeps a call's parsed value as its text: the same value when asked
    /// for, the same errors, and not kept by a use that only writes it.
    #[test]
    fn a_value_kept_as_its_text_is_the_value() {
        let run = |compact: bool| {
            let mut acc = Accumulator::new(true);
            if compact {
                acc = acc.compact();
            }
            for (call, piece) in [
                (0, r#"{"a":[1,"深"#),
                (1, "{\"x"),
                (0, r#"圳"],"b":2.5}"#),
                (2, " "),
            ] {
                acc.push(frag(call, None, None, piece), Pos::default());
            }
            acc.finish(true).0
        };
        let (mut full, compact) = (run(false), run(true));
        for (f, c) in full.iter_mut().zip(&compact) {
            // A compact call lists no fragment numbers (its log has them): it counts them.
            assert!(c.fragments.is_empty());
            assert_eq!(f.fragment_count as usize, f.fragments.len());
            f.fragments.clear();
        }
        assert_eq!(full, compact);
        let Parsed::Ok(v) = &compact[0].parsed else {
            panic!("{:?}", compact[0].parsed)
        };
        let held = |v: &ParsedValue| match &*v.0 {
            Held::Value(_) => true,
            Held::Text { value, .. } => value.get().is_some(),
        };
        assert!(!held(v), "kept as text");
        assert_eq!(*v.get(), serde_json::json!({"a": [1, "深圳"], "b": 2.5}));
        assert_eq!(v.to_string(), r#"{"a":[1,"深圳"],"b":2.5}"#);
        assert!(!held(v), "written without being kept");
        assert_eq!(compact[0].value(), full[0].value());
        assert!(held(v), "kept once dereferenced");
        assert!(matches!(compact[1].parsed, Parsed::Err { .. }));
        assert!(compact[2].empty_arguments);
    }

    /// Pushes `n` fragments of `calls` calls taking turns `run` fragments at a time, each of
    /// 1 to 3 bytes: the calls (fragment numbers cleared), their own records and what is left.
    fn pushed(
        mut acc: Accumulator,
        calls: u64,
        run: usize,
        n: usize,
    ) -> (Vec<Call>, Vec<Vec<FragmentRecord>>, Finished) {
        let mut rng = fastrand::Rng::with_seed(3);
        for i in 0..n {
            let call = (i / run) as u64 % calls;
            let text = "abc"[..rng.usize(1..=3)].to_owned();
            let pos = Pos {
                event: i as u32,
                chunk: i as u32 / 2,
                t_micros: 0,
            };
            acc.push(frag(call, (i % 1000 == 0).then_some("x"), None, &text), pos);
        }
        let (mut out, mut own) = (Vec::new(), Vec::new());
        let done = acc.finish_each(true, |mut c, records| {
            let records: Vec<FragmentRecord> = records.iter().collect();
            assert_eq!(c.fragment_count as usize, records.len());
            c.fragments.clear();
            out.push(c);
            own.push(records);
        });
        (out, own, done)
    }

    /// A compact accumulator's logs go to its temporary file: a long call's in segments as it
    /// grows, the calls that ended in rounds (parallel calls taking turns), leaving each a short
    /// tail at most; and they give back every record, as the records kept one by one.
    #[test]
    fn compact_logs_go_to_a_temporary_file_and_come_back() {
        for (calls, run, n) in [(1, 1, 200_000), (2, 1, 100_000), (300, 40, 120_000)] {
            let (calls_full, own_full, _) = pushed(Accumulator::new(true), calls, run, n);
            let (calls_compact, own_compact, done) =
                pushed(Accumulator::new(true).compact(), calls, run, n);
            assert_eq!(calls_full, calls_compact);
            assert_eq!(own_full, own_compact, "{calls} calls");
            let in_memory: usize = done.logs.iter().map(|l| l.tail.capacity()).sum();
            let segments: usize = done.logs.iter().map(|l| l.segments.len()).sum();
            let logged: usize = done.logs.iter().map(|l| l.bytes().len()).sum();
            assert!(logged > 4 * n, "{logged} bytes logged");
            // A tail shorter than a segment's minimum per call, and a segment's place for at
            // most every 256 bytes written.
            assert!(
                in_memory < calls as usize * MIN_SEGMENT_BYTES,
                "{in_memory} bytes of {logged} in memory ({calls} calls)"
            );
            assert!(
                segments * MIN_SEGMENT_BYTES <= logged,
                "{segments} segments"
            );
            assert!(done.logs.iter().all(|l| l.file.is_some()));
            // Read back in blocks: a long call's contiguous segments are one.
            if calls == 1 {
                assert_eq!(segments, 1);
            }
        }
    }

    /// Where the temporary file cannot be written, the logs stay in memory, whole: nothing is
    /// lost and nothing fails.
    #[test]
    fn a_log_file_that_cannot_be_written_leaves_the_logs_in_memory() {
        let (calls_full, own_full, _) = pushed(Accumulator::new(true), 3, 5, 30_000);
        let mut acc = Accumulator::new(true).compact();
        // Opened for reading only: every write fails.
        let file = std::fs::File::open(crate::repo_root().join("Cargo.toml")).expect("open");
        acc.spill.file = Some(LogFile(std::sync::Arc::new(std::sync::Mutex::new(
            LogFileState {
                file,
                len: 0,
                failed: false,
            },
        ))));
        let (calls, own, done) = pushed(acc, 3, 5, 30_000);
        assert_eq!(calls, calls_full);
        assert_eq!(own, own_full);
        assert!(done.logs.iter().all(|l| l.segments.is_empty()));
    }

    /// A clone of a log reads the same records however the original grows after it (the file is
    /// only appended to), and logs holding the same records are equal wherever their bytes are.
    #[test]
    fn a_cloned_log_keeps_its_records_and_equal_logs_hold_the_same_records() {
        let file = LogFile::new().expect("temporary file");
        let record = |i: u32| FragmentRecord {
            no: i,
            call: 0,
            pos: Pos {
                event: i,
                chunk: i,
                t_micros: 0,
            },
            args_range: i..i + 1,
            id: Presence::Absent,
            name: Presence::Absent,
            has_args: true,
            object_args: false,
        };
        let (mut log, mut memory) = (FragmentLog::default(), FragmentLog::default());
        for i in 0..5_000 {
            log.push(&record(i));
            memory.push(&record(i));
            if i % 1_000 == 999 {
                assert!(log.spill(&file));
            }
        }
        assert!(log.tail.is_empty() && !log.segments.is_empty());
        assert_eq!(log, memory);
        let clone = log.clone();
        for i in 5_000..9_000 {
            log.push(&record(i));
            // Another log writing to the same file in between.
            memory.push(&record(i));
            assert!(memory.spill(&file));
            if i % 700 == 0 {
                assert!(log.spill(&file));
            }
        }
        let want: Vec<FragmentRecord> = (0..5_000).map(record).collect();
        assert_eq!(clone.records(0).collect::<Vec<_>>(), want);
        assert_ne!(clone, log);
        assert_eq!(log, memory);
        assert_eq!(log.records(0).count(), 9_000);
    }

    #[test]
    fn conflicting_name_is_recorded() {
        let mut acc = Accumulator::new(true);
        acc.push(frag(0, Some("a"), Some("f"), "{}"), Pos::default());
        acc.push(frag(0, None, Some("g"), ""), Pos::default());
        let (calls, _) = acc.finish(true);
        assert_eq!(calls[0].name_conflicts.len(), 1);
    }
}
