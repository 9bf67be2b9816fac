//! The byte layer: opening an input (a file, a pipe, a device, or `-` for standard input) and
//! reading it. [`Peeked`] is an opened input whose first block was read (the head [`crate::probe`]
//! decides by) with the rest still to come; the readers here take it and read on, so every input is
//! opened once and read once: [`read_recording`] (a `.ron` recording or a journal), [`read_events`]
//! (a raw body cut into one piece per event as it is read). Nothing here decides what a file is (the
//! probe does) or analyses it (the `open` module hands what is read to the analysis).

use std::cell::Cell;
use std::io::Read;
use std::path::Path;

use crate::framing::{Framed, Framer, Overflow};
use crate::limits::EventLimit;
pub use crate::limits::{DEFAULT_MAX_INPUT_BYTES, InputLimit, RECORDING_LINE_FACTOR};
use crate::recording::{self, Chunk, Meta, Recording, RecordingError};

/// Why an input could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read the file: {source} in {path}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("a directory, not a recording or a stream body: {path}")]
    IsDirectory { path: String },
    #[error(transparent)]
    Recording(#[from] RecordingError),
    /// A line or event went past `--max-event-bytes`; reading stopped there.
    #[error("{overflow} in {path}")]
    EventTooLarge { path: String, overflow: Overflow },
    /// A line of a recording read from a pipe or device went past its limit.
    #[error(
        "a recording line longer than {limit} bytes ({RECORDING_LINE_FACTOR} × --max-event-bytes), starting at byte {start} in {path}"
    )]
    RecordingLineTooLong {
        path: String,
        start: u64,
        limit: u64,
    },
    /// A whole-file input (a request body) is longer than its limit.
    #[error("{what} is longer than {limit} bytes ({flag}) in {path}")]
    TooLong {
        path: String,
        what: &'static str,
        flag: &'static str,
        limit: u64,
    },
    /// The input went past `--max-input-bytes`: nothing after that byte was read.
    #[error(
        "input longer than {} (--max-input-bytes): reading stopped at byte {limit} in {path}; {RAISE_INPUT_LIMIT}",
        crate::text::plural(*.limit, "byte")
    )]
    InputTooLong { path: String, limit: u64 },
    /// The input's events are so short that the rows kept for them would outgrow the input limit
    /// ([`EVENT_STATE_BYTES`] counted for each): reading stopped after this many.
    #[error(
        "events too short for their rows: more than {} in the first {} would be held past --max-input-bytes ({limit} bytes, each event counted as {EVENT_STATE_BYTES} at least): reading stopped at byte {at} in {path}; {RAISE_INPUT_LIMIT}",
        crate::text::plural(*.events, "event"),
        crate::text::plural(*.at, "byte")
    )]
    TooManyEvents {
        path: String,
        events: u64,
        at: u64,
        limit: u64,
    },
    /// The caller's progress callback asked to stop.
    #[error("cancelled")]
    Cancelled,
}

impl InputError {
    /// The input was read but went past a limit (the stream is at fault, like a truncated one),
    /// rather than being unreadable.
    pub fn is_over_limit(&self) -> bool {
        matches!(
            self,
            InputError::EventTooLarge { .. }
                | InputError::RecordingLineTooLong { .. }
                | InputError::InputTooLong { .. }
                | InputError::TooManyEvents { .. }
        )
    }
}

/// What every refusal at the input limit ends with: how to read further.
pub const RAISE_INPUT_LIMIT: &str =
    "to read further, raise the limit: --max-input-bytes N (e.g. 1G)";

/// What a raw body's event is counted as against the input limit at the least ([`read_events`]):
/// the rows an analysis keeps per event (its record and its chunk span, about 70 bytes), so a
/// body of tiny events (`[{},{},…`, 3 bytes an event) holds no more than about twice its limit,
/// where counting its bytes alone let it hold twenty times as much. Real streams' events are
/// longer (a `data: [DONE]` line is 14 bytes, a content delta 50 to 300), so honest input is never
/// refused by it.
pub const EVENT_STATE_BYTES: u64 = 32;

/// What a reader of a raw body's events keeps per event ([`read_events`]), and so how its events
/// are counted against the input limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventRows {
    /// Rows per event (a record, a chunk span, the event's own allocation): each event is
    /// counted as [`EVENT_STATE_BYTES`] at least.
    Kept,
    /// Nothing per event (`check`'s and `scan`'s streamed pass, which keep counts only): each
    /// event is counted as its bytes, so tiny events are read as far as any other bytes.
    None,
}

/// The payload of the I/O error [`LimitedReader`] returns past the input limit, turned into
/// [`InputError::InputTooLong`] by the readers' error mapping.
#[derive(Debug, thiserror::Error)]
#[error("input longer than {limit} bytes (--max-input-bytes)")]
pub struct OverInputLimit {
    /// The limit.
    pub limit: u64,
}

/// Whether an I/O error is the input limit's (see [`LimitedReader`]), and which limit.
pub fn over_input_limit(e: &std::io::Error) -> Option<u64> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<OverInputLimit>())
        .map(|o| o.limit)
}

/// The reader under every input: hands out at most `limit` bytes, then an [`OverInputLimit`]
/// error if the input goes on (an input exactly `limit` bytes long ends normally). A regular file
/// read by a streaming pass has no limit here (`u64::MAX`): its size bounds it.
pub struct LimitedReader {
    inner: Box<dyn Read + Send>,
    read: u64,
    limit: u64,
}

impl Read for LimitedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.read >= self.limit {
            // At the limit: the input may end here; one more byte means it goes on.
            let mut one = [0u8; 1];
            loop {
                return match self.inner.read(&mut one) {
                    Ok(0) => Ok(0),
                    Ok(_) => Err(std::io::Error::other(OverInputLimit { limit: self.limit })),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
            }
        }
        let room = usize::try_from(self.limit - self.read).unwrap_or(usize::MAX);
        let n = buf.len().min(room);
        let got = self.inner.read(&mut buf[..n])?;
        self.read += got as u64;
        Ok(got)
    }
}

/// `-` as an input path: standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How a path is named in messages (`-` is "standard input").
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// An I/O error reading `path`; the input limit's ([`LimitedReader`]) is
/// [`InputError::InputTooLong`].
pub(crate) fn io_err(path: &Path, source: std::io::Error) -> InputError {
    match over_input_limit(&source) {
        Some(limit) => InputError::InputTooLong {
            path: display_name(path),
            limit,
        },
        None => InputError::Io {
            path: display_name(path),
            source,
        },
    }
}

/// An opened input: a reader, and the size when it is a regular file (which bounds the read, so
/// a file that grows while it is read is read up to the size it had).
struct OpenInput {
    /// The bytes, at most the input limit of them (see [`LimitedReader`]).
    reader: LimitedReader,
    /// The size of a regular file; `None` for pipes, terminals, devices and `/proc` files.
    len: Option<u64>,
}

/// Open an input for reading: a file, a pipe, a device, or standard input (`-`). A FIFO is opened
/// without blocking, so one with no writer reads as empty input instead of hanging in `open`.
/// An input without a size is read up to `limit.bytes` ([`LimitedReader`]); a regular file up to
/// its size, and refused at once ([`InputError::InputTooLong`], nothing of it read) when it is
/// longer than the limit and `limit.files` says the limit bounds files too.
fn open_input(path: &Path, limit: InputLimit) -> Result<OpenInput, InputError> {
    let limited = |inner: Box<dyn Read + Send>, limit: u64| LimitedReader {
        inner,
        read: 0,
        limit,
    };
    if is_stdin(path) {
        return Ok(OpenInput {
            reader: limited(Box::new(std::io::stdin()), limit.bytes),
            len: None,
        });
    }
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return Err(InputError::IsDirectory {
            path: display_name(path),
        });
    }
    let len = (meta.is_file() && meta.len() > 0).then_some(meta.len());
    if limit.files && len.is_some_and(|n| n > limit.bytes) {
        return Err(InputError::InputTooLong {
            path: display_name(path),
            limit: limit.bytes,
        });
    }
    let file = open_nonblocking(path).map_err(|e| io_err(path, e))?;
    Ok(match len {
        // Bounded by its size; a reader that holds it whole refuses it first
        // ([`Peeked::refuse_larger_file`]).
        Some(n) => OpenInput {
            reader: limited(Box::new(file.take(n)), u64::MAX),
            len,
        },
        None => OpenInput {
            reader: limited(Box::new(file), limit.bytes),
            len,
        },
    })
}

/// `open(O_NONBLOCK)` (a FIFO's open does not wait for a writer), then back to blocking reads:
/// a FIFO without a writer then reads as end of file at once.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
    Ok(file)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// How much of an input is read before anything is decided about it ([`Peeked::head`]): enough for
/// every rule of [`crate::content::decide`], and the block size the readers read in anyway.
pub const PEEK_BYTES: usize = 1 << 20;

/// An input opened once, its first block (up to [`PEEK_BYTES`]) read: the head, for deciding what
/// it is, and the rest, still to be read. Reading it ([`Read`]) gives the head first, then the
/// rest, so a pipe or standard input is read exactly once.
pub struct Peeked {
    path: std::path::PathBuf,
    head: Vec<u8>,
    /// How much of `head` was already handed out through [`Read`].
    consumed: usize,
    rest: Box<dyn Read + Send>,
    len: Option<u64>,
    whole: bool,
    /// The input limit it was opened with.
    limit: InputLimit,
}

impl Peeked {
    /// Open `path` (`-` is standard input) and read its first block. A FIFO without a writer is
    /// empty input; a regular file is read up to the size it had when opened. An input without a
    /// size (standard input, a pipe, a device) is read up to `limit.bytes` (`--max-input-bytes`):
    /// past that, a read fails with [`InputError::InputTooLong`]. A regular file longer than that
    /// is refused at once, nothing of it read, when `limit.files`, or later by a reader that holds
    /// it whole ([`Peeked::refuse_larger_file`]).
    pub fn open(path: &Path, limit: InputLimit) -> Result<Self, InputError> {
        let mut input = open_input(path, limit)?;
        let cap = input.len.map_or(PEEK_BYTES, |n| {
            usize::try_from(n).map_or(PEEK_BYTES, |n| n.min(PEEK_BYTES))
        });
        let mut head = vec![0u8; cap];
        let n = read_some(&mut input.reader, &mut head).map_err(|e| io_err(path, e))?;
        head.truncate(n);
        let whole = n < cap || input.len == Some(n as u64);
        Ok(Self {
            path: path.to_owned(),
            head,
            consumed: 0,
            rest: Box::new(input.reader),
            len: input.len,
            whole,
            limit,
        })
    }

    /// For a reader that holds the whole input (a recording's text, a capture, a body kept in
    /// memory): a regular file longer than the input limit is refused now
    /// ([`InputError::InputTooLong`]), nothing past its head read. An input without a size is
    /// bounded as it is read.
    pub fn refuse_larger_file(&self) -> Result<(), InputError> {
        match self.len {
            Some(n) if n > self.limit.bytes => Err(InputError::InputTooLong {
                path: self.name(),
                limit: self.limit.bytes,
            }),
            _ => Ok(()),
        }
    }

    /// How many bytes of rows a reader that keeps rows per event may count ([`read_events`],
    /// [`EVENT_STATE_BYTES`] at least per event): the input limit; for a regular file the limit
    /// does not bound (a streaming pass reads it whole), its own size plus the limit, so the few
    /// short events of an honest stream (`data: [DONE]`) never tip it.
    fn event_budget(&self) -> u64 {
        match self.len {
            Some(n) if !self.limit.files => n.saturating_add(self.limit.bytes),
            _ => self.limit.bytes,
        }
    }

    /// An input already in memory, named `path` in messages (for tests and callers that hold the
    /// bytes).
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Self {
        let len = Some(bytes.len() as u64);
        Self {
            path: path.to_owned(),
            head: bytes,
            consumed: 0,
            rest: Box::new(std::io::empty()),
            len,
            whole: true,
            limit: InputLimit::NONE,
        }
    }

    /// The first bytes (all of them when [`Peeked::is_whole`]).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The head is the whole input.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// The size of a regular file; `None` for pipes, terminals, devices and standard input.
    pub fn size(&self) -> Option<u64> {
        self.len
    }

    /// The path it was opened by (`-` is standard input).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The input limit it was opened with (to open it again the same way).
    pub fn limit(&self) -> InputLimit {
        self.limit
    }

    /// The input as it is named in messages.
    pub fn name(&self) -> String {
        display_name(&self.path)
    }

    /// The head and the reader of the rest, for a reader that keeps the head as it is.
    pub fn into_parts(self) -> (Vec<u8>, Box<dyn Read + Send>) {
        let Peeked {
            mut head,
            consumed,
            rest,
            ..
        } = self;
        head.drain(..consumed);
        (head, rest)
    }

    fn io_err(&self, source: std::io::Error) -> InputError {
        io_err(&self.path, source)
    }
}

impl Read for Peeked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.consumed < self.head.len() {
            let n = (self.head.len() - self.consumed).min(buf.len());
            buf[..n].copy_from_slice(&self.head[self.consumed..self.consumed + n]);
            self.consumed += n;
            if self.consumed == self.head.len() {
                // Handed out: give the memory back before the long read that follows.
                self.head = Vec::new();
                self.consumed = 0;
            }
            return Ok(n);
        }
        self.rest.read(buf)
    }
}

/// Read a whole input (a file, a pipe, `-` for standard input) of at most `limit` bytes; a longer
/// one is [`InputError::TooLong`] (`what` and `flag` name it), found after reading `limit + 1`
/// bytes, never more.
pub fn read_bounded(
    path: &Path,
    limit: u64,
    what: &'static str,
    flag: &'static str,
) -> Result<Vec<u8>, InputError> {
    let input = open_input(path, InputLimit::NONE)?;
    let mut bytes = Vec::new();
    if let Some(n) = input.len {
        bytes.reserve(n.min(limit) as usize);
    }
    input
        .reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_err(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLong {
            path: display_name(path),
            what,
            flag,
            limit,
        });
    }
    Ok(bytes)
}

/// Cuts a raw body into one piece per event (a raw body has no read boundaries, so it is shown as
/// one chunk per event) as it is read in blocks, handing each piece to a sink; stops at the first
/// line or event over the limit. [`RawChunker`] keeps the pieces as a recording's chunks;
/// [`read_events`] hands them on as they come, holding nothing.
struct EventCutter {
    framer: Framer,
    /// Bytes read but not yet handed out (the event in progress).
    tail: Vec<u8>,
    /// Stream offset of `tail[0]`.
    tail_start: u64,
    ends: Vec<u64>,
}

impl EventCutter {
    fn new(max_event_bytes: EventLimit) -> Self {
        Self {
            framer: Framer::with_max_event_bytes(None, max_event_bytes),
            tail: Vec::new(),
            tail_start: 0,
            ends: Vec::new(),
        }
    }

    fn feed(&mut self, block: &[u8], sink: &mut dyn FnMut(&[u8])) {
        let ends = &mut self.ends;
        self.framer
            .feed(block, &mut |item: Framed<'_>| ends.push(item.span().end));
        self.tail.extend_from_slice(block);
        self.cut(sink);
    }

    /// Hand every completed event in `tail` to `sink`.
    fn cut(&mut self, sink: &mut dyn FnMut(&[u8])) {
        self.ends.sort_unstable();
        let mut from = 0usize;
        for end in self.ends.drain(..) {
            let end = (end.saturating_sub(self.tail_start) as usize).min(self.tail.len());
            if end > from {
                sink(&self.tail[from..end]);
                from = end;
            }
        }
        if from > 0 {
            self.tail.drain(..from);
            self.tail_start += from as u64;
        }
    }

    fn overflow(&self) -> Option<Overflow> {
        self.framer.overflow()
    }

    /// End of input: the last events, then what is left (an unterminated event) as one piece.
    fn finish(mut self, sink: &mut dyn FnMut(&[u8])) -> Result<(), Overflow> {
        let ends = &mut self.ends;
        self.framer
            .finish(&mut |item: Framed<'_>| ends.push(item.span().end));
        if let Some(o) = self.framer.overflow() {
            return Err(o);
        }
        self.cut(sink);
        if !self.tail.is_empty() {
            sink(&std::mem::take(&mut self.tail));
        }
        Ok(())
    }
}

/// A raw body's recording with no chunks yet: what [`RawChunker`] fills.
fn raw_recording(title: &str) -> Recording {
    Recording {
        version: recording::FORMAT_VERSION,
        meta: Meta {
            title: title.to_owned(),
            source: "raw body".into(),
            notes: vec!["Raw body: no network read boundaries or timing were recorded; shown as one chunk per event.".into()],
            timing_known: false,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Cuts a raw body into one chunk per event as it is read, so the body is held once (in its
/// chunks), and stops at the first line or event over the limit.
struct RawChunker {
    cutter: EventCutter,
    chunks: Vec<Chunk>,
}

impl RawChunker {
    fn new(max_event_bytes: EventLimit) -> Self {
        Self {
            cutter: EventCutter::new(max_event_bytes),
            chunks: Vec::new(),
        }
    }

    fn feed(&mut self, block: &[u8]) {
        let chunks = &mut self.chunks;
        self.cutter.feed(block, &mut |bytes| {
            chunks.push(Chunk {
                t_micros: 0,
                bytes: bytes.to_vec(),
            })
        });
    }

    fn overflow(&self) -> Option<Overflow> {
        self.cutter.overflow()
    }

    fn finish(self, title: &str) -> Result<Recording, Overflow> {
        let mut chunks = self.chunks;
        self.cutter.finish(&mut |bytes| {
            chunks.push(Chunk {
                t_micros: 0,
                bytes: bytes.to_vec(),
            })
        })?;
        Ok(Recording {
            chunks,
            ..raw_recording(title)
        })
    }
}

/// The title of a raw body's recording: the file name ("standard input" for `-`).
pub fn raw_title(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".to_owned()
    } else {
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// A raw body (SSE, JSON lines, or anything else the probe did not recognise) read in blocks and
/// handed to `each` one event at a time (one chunk per event, exactly as [`raw_to_recording`]
/// cuts it), so nothing of the body is held here: `check` analyses a 227 MB stream this way.
/// Returns the recording the events belong to, without its chunks. Stops at the first line or
/// event longer than `max_event_bytes` ([`InputError::EventTooLarge`]), and where the events,
/// each counted as [`EVENT_STATE_BYTES`] at least (the rows every reader of it keeps per event),
/// come to more than the input limit allows ([`InputError::TooManyEvents`]); `progress` is told
/// the bytes read and the file size (0 for a pipe) after each block and cancels by returning
/// `false` ([`InputError::Cancelled`]). `rows` says whether the caller keeps rows per event
/// ([`EventRows::Kept`]: each event is counted as [`EVENT_STATE_BYTES`] at least) or none
/// ([`EventRows::None`]: an event is counted as its bytes, so a regular file is read to its end
/// whatever its events, and a pipe is bounded by its bytes alone).
pub fn read_events(
    mut input: Peeked,
    max_event_bytes: EventLimit,
    rows: EventRows,
    mut progress: impl FnMut(u64, u64) -> bool,
    mut each: impl FnMut(&[u8]),
) -> Result<Recording, InputError> {
    let total = input.len.unwrap_or(0);
    let name = input.name();
    let too_large = |overflow| InputError::EventTooLarge {
        path: name.clone(),
        overflow,
    };
    let mut cutter = EventCutter::new(max_event_bytes);
    let budget = input.event_budget();
    // The rows counted so far, the events and the byte just past the last one handed on.
    let (charged, events, at) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let mut each = |event: &[u8]| {
        if charged.get() > budget {
            return;
        }
        let len = event.len() as u64;
        let least = match rows {
            EventRows::Kept => EVENT_STATE_BYTES,
            EventRows::None => 0,
        };
        charged.set(charged.get().saturating_add(len.max(least)));
        if charged.get() > budget {
            // Past the budget: this event is not handed on, and reading stops before it.
            return;
        }
        events.set(events.get() + 1);
        at.set(at.get() + len);
        each(event);
    };
    let over_budget = || {
        (charged.get() > budget).then(|| InputError::TooManyEvents {
            path: name.clone(),
            events: events.get(),
            at: at.get(),
            limit: budget,
        })
    };
    let mut read = 0u64;
    let mut buf = vec![0u8; PEEK_BYTES];
    loop {
        let n = read_some(&mut input, &mut buf).map_err(|e| input.io_err(e))?;
        if n == 0 {
            break;
        }
        cutter.feed(&buf[..n], &mut each);
        if let Some(overflow) = cutter.overflow() {
            return Err(too_large(overflow));
        }
        if let Some(e) = over_budget() {
            return Err(e);
        }
        read += n as u64;
        if !progress(read, total) {
            return Err(InputError::Cancelled);
        }
    }
    cutter.finish(&mut each).map_err(too_large)?;
    if let Some(e) = over_budget() {
        return Err(e);
    }
    Ok(raw_recording(&raw_title(&input.path)))
}

/// Turn a raw body into a recording: one chunk per event (a raw body has no read boundaries).
pub fn raw_to_recording(body: &[u8], title: &str) -> Recording {
    match raw_to_recording_limited(body, title, EventLimit::UNBOUNDED) {
        Ok(rec) => rec,
        // Without a limit there is no overflow; keep the body whole rather than lose it.
        Err(_) => Recording {
            version: recording::FORMAT_VERSION,
            chunks: vec![Chunk {
                t_micros: 0,
                bytes: body.to_vec(),
            }],
            ..Default::default()
        },
    }
}

/// [`raw_to_recording`], refusing a line or event longer than `max_event_bytes`.
pub fn raw_to_recording_limited(
    body: &[u8],
    title: &str,
    max_event_bytes: EventLimit,
) -> Result<Recording, Overflow> {
    let mut c = RawChunker::new(max_event_bytes);
    // In blocks, so the event in progress is the only copy held besides the chunks.
    for block in body.chunks(1 << 20) {
        c.feed(block);
        if let Some(o) = c.overflow() {
            return Err(o);
        }
    }
    c.finish(title)
}

/// Read up to `buf.len()` bytes, fewer only at end of input.
pub(crate) fn read_some(reader: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A recording (a `.ron` document, or a recorder's journal, salvaged). Its text is bounded by the
/// file's size for a regular file, and by a line limit ([`RECORDING_LINE_FACTOR`] × the event
/// limit; a recording holds one chunk per line), so an endless input (a pipe, a device) ends early
/// at bounded memory. `progress` is told the bytes read and the file size (0 for a pipe) after
/// each block and cancels by returning `false` ([`InputError::Cancelled`]).
pub fn read_recording(
    input: Peeked,
    max_event_bytes: EventLimit,
    mut progress: impl FnMut(u64, u64) -> bool,
) -> Result<Recording, InputError> {
    let path = input.path.clone();
    let len = input.len;
    let (head, mut rest) = input.into_parts();
    let line_limit = max_event_bytes.recording_line_bytes();
    let mut bytes = head;
    if let Some(n) = len {
        bytes.reserve((n as usize).saturating_sub(bytes.len()));
    }
    let mut line_start = 0u64;
    let mut check = |bytes: &[u8], from: usize| -> Result<(), InputError> {
        if let Some(i) = memchr::memrchr(b'\n', &bytes[from..]) {
            line_start = (from + i + 1) as u64;
        }
        if bytes.len() as u64 - line_start > line_limit {
            return Err(InputError::RecordingLineTooLong {
                path: display_name(&path),
                start: line_start,
                limit: line_limit,
            });
        }
        Ok(())
    };
    check(&bytes, 0)?;
    let mut buf = vec![0u8; PEEK_BYTES];
    loop {
        let n = read_some(&mut *rest, &mut buf).map_err(|e| io_err(&path, e))?;
        if n == 0 {
            break;
        }
        let from = bytes.len();
        bytes.extend_from_slice(&buf[..n]);
        check(&bytes, from)?;
        if !progress(bytes.len() as u64, len.unwrap_or(0)) {
            return Err(InputError::Cancelled);
        }
    }
    drop(buf);
    Ok(Recording::from_bytes(&bytes).map_err(|e| e.with_path(&path))?)
}

/// How a recording document read line by line ([`read_recording_lines`]) turned out.
#[derive(Debug, PartialEq, Eq)]
pub enum LinesRead {
    /// In the writers' layout: its head went to `head` and every chunk, in order, to `each`.
    Streamed,
    /// Not in that layout (no chunk list on lines of its own, a head longer than the input limit,
    /// or something after the list but the document's closing parenthesis): what was handed out
    /// does not stand for the document, which only a whole read can take.
    OtherLayout,
}

/// Lines of an input, each at most `limit` bytes ([`InputError::RecordingLineTooLong`] past it).
struct Lines {
    reader: std::io::BufReader<Peeked>,
    path: std::path::PathBuf,
    limit: u64,
    /// Bytes read so far.
    at: u64,
    /// Lines read so far.
    count: usize,
}

impl Lines {
    /// The next line, without its line break (`\n` or `\r\n`); `None` at the end of the input.
    fn next(&mut self, line: &mut Vec<u8>) -> Result<Option<String>, InputError> {
        use std::io::BufRead as _;
        line.clear();
        let start = self.at;
        loop {
            let block = self.reader.fill_buf().map_err(|e| io_err(&self.path, e))?;
            if block.is_empty() {
                if line.is_empty() {
                    return Ok(None);
                }
                break;
            }
            let (take, done) = match memchr::memchr(b'\n', block) {
                Some(i) => (i + 1, true),
                None => (block.len(), false),
            };
            line.extend_from_slice(&block[..take]);
            self.reader.consume(take);
            self.at += take as u64;
            if line.len() as u64 > self.limit {
                return Err(InputError::RecordingLineTooLong {
                    path: display_name(&self.path),
                    start,
                    limit: self.limit,
                });
            }
            if done {
                break;
            }
        }
        self.count += 1;
        while line.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
            line.pop();
        }
        match std::str::from_utf8(line) {
            Ok(text) => Ok(Some(text.to_owned())),
            Err(e) => Err(InputError::Recording(RecordingError::InvalidUtf8 {
                path: Some(self.path.clone()),
                offset: usize::try_from(start).unwrap_or(usize::MAX) + e.valid_up_to(),
                line: self.count,
            })),
        }
    }
}

/// A recording document (a regular file, not a journal) read one line at a time, in the layout
/// [`Recording::to_ron_string`] and [`crate::recording::DocumentWriter`] write: the head, then
/// [`crate::recording::CHUNKS_OPEN_LINE`], one chunk per line, its closing line and the
/// document's `)`. `head` makes the reader's state from the recording without chunks when the
/// list opens, `each` gets every chunk with it as its line is read: nothing but one line is held,
/// so a recording of any size is read in bounded memory. A line longer than
/// [`RECORDING_LINE_FACTOR`] × the event limit stops the read, as [`read_recording`] does.
pub fn read_recording_lines<S>(
    input: Peeked,
    max_event_bytes: EventLimit,
    head: impl FnOnce(&Recording) -> S,
    mut each: impl FnMut(&mut S, Chunk),
) -> Result<(LinesRead, Option<S>), InputError> {
    let head_limit = input.limit.bytes;
    let path = input.path.clone();
    let mut lines = Lines {
        path: path.clone(),
        reader: std::io::BufReader::with_capacity(PEEK_BYTES, input),
        limit: max_event_bytes.recording_line_bytes(),
        at: 0,
        count: 0,
    };
    let mut buf = Vec::new();
    let mut text = String::new();
    loop {
        let Some(l) = lines.next(&mut buf)? else {
            return Ok((LinesRead::OtherLayout, None));
        };
        if l == recording::CHUNKS_OPEN_LINE {
            break;
        }
        text.push_str(crate::text::strip_bom_str(&l));
        text.push('\n');
        if text.len() as u64 > head_limit {
            return Ok((LinesRead::OtherLayout, None));
        }
    }
    let rec = recording::parse_document_head(&text).map_err(|e| e.with_path(&path))?;
    drop(text);
    let mut state = head(&rec);
    let mut index = 0;
    loop {
        let Some(l) = lines.next(&mut buf)? else {
            return Ok((LinesRead::OtherLayout, Some(state)));
        };
        if l == recording::CHUNKS_CLOSE_LINE {
            break;
        }
        if l.trim().is_empty() {
            continue;
        }
        let chunk = recording::parse_chunk_line(&l, index).map_err(|e| e.with_path(&path))?;
        each(&mut state, chunk);
        index += 1;
    }
    // After the list: the document's closing parenthesis, nothing else.
    let mut rest = String::new();
    while let Some(l) = lines.next(&mut buf)? {
        rest.push_str(&l);
        if rest.len() > 64 {
            break;
        }
    }
    let layout = if rest.trim() == ")" {
        LinesRead::Streamed
    } else {
        LinesRead::OtherLayout
    };
    Ok((layout, Some(state)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).expect("write");
        p
    }

    /// Every chunk (text, bytes that are not UTF-8, an empty one, line breaks and quotes) and the
    /// head come back from a document read line by line as from a whole read; a document in
    /// another layout says so; a line past the limit stops the read.
    #[test]
    fn a_recording_read_line_by_line_is_the_recording_read_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rec = Recording::default();
        rec.meta.title = "lines".into();
        rec.meta.dialect = "openai-chat".into();
        rec.truth = vec![crate::recording::TruthCall {
            arguments: "{\"a\":1}".into(),
            ..Default::default()
        }];
        let pieces: [&[u8]; 6] = [
            b"data: {\"x\":\"\\\"q\\\"\"}\n\n",
            b"",
            &[0xff, 0xfe, b'\n', 0x00],
            "data: 深圳 🌧\r\n\r\n".as_bytes(),
            b"    chunks: [\n    ],\n",
            b"data: [DONE]\n\n",
        ];
        rec.chunks = pieces
            .iter()
            .enumerate()
            .map(|(i, b)| Chunk {
                t_micros: i as u64 * 7,
                bytes: b.to_vec(),
            })
            .collect();
        let text = rec.to_ron_string();
        let whole = file(dir.path(), "r.ron", text.as_bytes());
        let open = |p: &Path| Peeked::open(p, InputLimit::DEFAULT).expect("open");
        let expected =
            read_recording(open(&whole), EventLimit::DEFAULT, |_, _| true).expect("whole");
        let (layout, got) = read_recording_lines(
            open(&whole),
            EventLimit::DEFAULT,
            |head| (head.clone(), Vec::new()),
            |(_, chunks): &mut (Recording, Vec<Chunk>), c| chunks.push(c),
        )
        .expect("lines");
        assert_eq!(layout, LinesRead::Streamed);
        let (head, chunks) = got.expect("a head");
        assert_eq!(chunks, expected.chunks);
        assert_eq!(Recording { chunks, ..head }, expected);
        // Other layouts: everything on one line; a field after the chunk list.
        let one_line = text.replace('\n', " ");
        let after = text.replacen("\n    ],\n)", "\n    ],\n    truth: [],\n)", 1);
        assert_ne!(after, text);
        for (name, other) in [("one.ron", one_line), ("after.ron", after)] {
            let p = file(dir.path(), name, other.as_bytes());
            let got = read_recording_lines(open(&p), EventLimit::DEFAULT, |_| (), |_, _| ());
            assert!(
                matches!(got, Ok((LinesRead::OtherLayout, _))),
                "{name}: {got:?}"
            );
        }
        // A line past the limit: stopped with the line's start.
        let limit = EventLimit::new(4);
        let got = read_recording_lines(open(&whole), limit, |_| (), |_, _| ());
        assert!(
            matches!(got, Err(InputError::RecordingLineTooLong { .. })),
            "{got:?}"
        );
    }

    fn events_read(
        path: &Path,
        limit: InputLimit,
        rows: EventRows,
    ) -> (u64, Result<Recording, InputError>) {
        let mut n = 0u64;
        let r = Peeked::open(path, limit)
            .and_then(|p| read_events(p, EventLimit::UNBOUNDED, rows, |_, _| true, |_| n += 1));
        (n, r)
    }

    /// A body of tiny events is counted at least [`EVENT_STATE_BYTES`] an event, so no reader
    /// keeps rows for more events than its limit allows; events of an honest size are counted
    /// as their bytes, so a body of them as long as the limit is read whole.
    #[test]
    fn tiny_events_are_counted_as_their_rows() {
        let dir = tempfile::tempdir().expect("temp dir");
        let limit = InputLimit {
            bytes: 64 << 10,
            files: true,
        };
        let mut tiny = b"[".to_vec();
        tiny.extend(b"{},".repeat(20_000));
        tiny.extend_from_slice(b"{}]");
        let p = file(dir.path(), "tiny.json", &tiny);
        let (n, r) = events_read(&p, limit, EventRows::Kept);
        assert!(n <= limit.bytes / EVENT_STATE_BYTES, "{n} events handed on");
        assert!(
            matches!(r, Err(InputError::TooManyEvents { events, .. }) if events == n),
            "{r:?}"
        );
        // The same limit on a regular file a streaming pass reads to its end: counted against
        // the file's own size instead.
        let file_limit = InputLimit {
            files: false,
            ..limit
        };
        let (_, r) = events_read(&p, file_limit, EventRows::Kept);
        assert!(matches!(r, Err(InputError::TooManyEvents { .. })), "{r:?}");
        // A reader that keeps nothing per event (`check`'s streamed pass) reads the same file to
        // its end: its events cost it nothing the limit must bound.
        let (n, r) = events_read(&p, file_limit, EventRows::None);
        assert!(r.is_ok(), "{r:?}");
        let (all, _) = events_read(&p, InputLimit::NONE, EventRows::Kept);
        assert_eq!(n, all, "every event handed on");
        assert!(n > 20_000, "{n} events");
        // Where the limit bounds the file itself, as it bounds a pipe: by its bytes alone (these
        // are within it), never by its rows.
        let (_, r) = events_read(&p, limit, EventRows::None);
        assert!(r.is_ok(), "{r:?}: within the byte limit");
        let honest = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n";
        let body = honest.repeat((64 << 10) / honest.len());
        let p = file(dir.path(), "honest.sse", &body);
        let (n, r) = events_read(&p, limit, EventRows::Kept);
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(n as usize, body.len() / honest.len());
    }

    /// A regular file a streaming reader reads is bounded by its size, not by the limit, unless
    /// the limit bounds files; a reader that holds it whole refuses it first.
    #[test]
    fn a_regular_file_is_limited_only_where_it_is_held() {
        let dir = tempfile::tempdir().expect("temp dir");
        let honest = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n";
        let body = honest.repeat(4 * PEEK_BYTES / honest.len());
        let p = file(dir.path(), "big.sse", &body);
        let limit = InputLimit {
            bytes: PEEK_BYTES as u64,
            files: false,
        };
        let (n, r) = events_read(&p, limit, EventRows::Kept);
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(n as usize, body.len() / honest.len());
        let peeked = Peeked::open(&p, limit).expect("opens");
        assert!(matches!(
            peeked.refuse_larger_file(),
            Err(InputError::InputTooLong { limit: l, .. }) if l == limit.bytes
        ));
        let refused = Peeked::open(
            &p,
            InputLimit {
                files: true,
                ..limit
            },
        );
        assert!(matches!(refused, Err(InputError::InputTooLong { .. })));
    }
}
