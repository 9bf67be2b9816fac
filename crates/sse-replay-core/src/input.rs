//! Opening inputs: a `.ron` recording (or a recorder's journal), or a raw body such as `curl -N`
//! output (SSE or JSON lines), auto-detected: the byte-level layer under the one opener (the `open`
//! module, which adds the captures and is what the CLI and the app call; the importer reads through
//! this layer too, so it names neither); [`stream_path`] for the lean streaming pass of `export`.

use std::io::Read;
use std::path::Path;

pub use crate::framing::DEFAULT_MAX_EVENT_BYTES;
use crate::framing::{Framed, Framer, Overflow};
use crate::pipeline::{Options, Pipeline, PipelineOutput};
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
        "input longer than {} (--max-input-bytes): reading stopped at byte {limit} in {path}",
        crate::text::plural(*.limit, "byte")
    )]
    InputTooLong { path: String, limit: u64 },
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
        )
    }
}

/// The default `--max-input-bytes` of the commands that read an input: generous for any real
/// stream, and small enough that an endless input (a pipe, a FIFO, `/dev/urandom`) ends before
/// the analysis holds a gigabyte (see the measurements in the README).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 32 * 1024 * 1024;

/// How much of one input is read: the one place the bounds travel together, from the command
/// line down to where bytes are read ([`open_input`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// The longest line or event accepted (`--max-event-bytes`): a longer one stops the read.
    pub max_event_bytes: u64,
    /// The most bytes read from the input, whatever it is (a file, standard input, a FIFO, a
    /// device, a capture): `--max-input-bytes`. Checked by the reader itself, so every reading
    /// path stops at the same byte ([`InputError::InputTooLong`]).
    pub max_input_bytes: u64,
}

impl ReadLimits {
    /// `max_event_bytes` per line or event, the input unbounded (library callers that read
    /// files a person chose, such as the app).
    pub const fn events(max_event_bytes: u64) -> Self {
        Self {
            max_event_bytes,
            max_input_bytes: u64::MAX,
        }
    }
}

/// The default event limit; the input unbounded (the command line passes its own
/// `--max-input-bytes`, [`DEFAULT_MAX_INPUT_BYTES`] unless told otherwise).
impl Default for ReadLimits {
    fn default() -> Self {
        Self::events(DEFAULT_MAX_EVENT_BYTES)
    }
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
/// error if the input goes on (an input exactly `limit` bytes long ends normally).
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

/// A recording (RON or journal) keeps one chunk per line, escaped: a line may be this many times
/// the event limit before a recording read from a pipe is refused.
pub const RECORDING_LINE_FACTOR: u64 = 8;

/// What kind of file it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A `.ron` recording or a journal.
    Recording,
    /// A raw body (SSE or JSON lines), no chunk boundaries or timing.
    RawBody,
}

/// Decide from the name and the first bytes.
pub fn sniff(path: &Path, head: &[u8]) -> InputKind {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "ron" || ext == "partial" {
        return InputKind::Recording;
    }
    let head = crate::text::strip_bom(head);
    let trimmed: &[u8] = {
        let start = head
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(head.len());
        &head[start..]
    };
    if trimmed.starts_with(b"# sse-replay journal")
        || trimmed.starts_with(b"(")
        || trimmed.starts_with(b"Recording(")
        || trimmed.starts_with(b"#![enable")
    {
        InputKind::Recording
    } else {
        InputKind::RawBody
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

fn io_err(path: &Path, source: std::io::Error) -> InputError {
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
pub struct OpenInput {
    /// The bytes, at most the input limit of them (see [`LimitedReader`]).
    pub reader: LimitedReader,
    /// The size of a regular file; `None` for pipes, terminals, devices and `/proc` files.
    pub len: Option<u64>,
}

/// Open an input for reading: a file, a pipe, a device, or standard input (`-`). A FIFO is opened
/// without blocking, so one with no writer reads as empty input instead of hanging in `open`.
/// At most `max_input_bytes` are read from it ([`LimitedReader`]); a regular file longer than
/// that is refused at once ([`InputError::InputTooLong`]), nothing of it read.
pub fn open_input(path: &Path, max_input_bytes: u64) -> Result<OpenInput, InputError> {
    let limited = |inner: Box<dyn Read + Send>| LimitedReader {
        inner,
        read: 0,
        limit: max_input_bytes,
    };
    if is_stdin(path) {
        return Ok(OpenInput {
            reader: limited(Box::new(std::io::stdin())),
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
    if len.is_some_and(|n| n > max_input_bytes) {
        return Err(InputError::InputTooLong {
            path: display_name(path),
            limit: max_input_bytes,
        });
    }
    let file = open_nonblocking(path).map_err(|e| io_err(path, e))?;
    let reader: Box<dyn Read + Send> = match len {
        Some(n) => Box::new(file.take(n)),
        None => Box::new(file),
    };
    Ok(OpenInput {
        reader: limited(reader),
        len,
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

/// Read a whole input (a file, a pipe, `-` for standard input) of at most `limit` bytes; a longer
/// one is [`InputError::TooLong`] (`what` and `flag` name it), found after reading `limit + 1`
/// bytes, never more.
pub fn read_bounded(
    path: &Path,
    limit: u64,
    what: &'static str,
    flag: &'static str,
) -> Result<Vec<u8>, InputError> {
    let input = open_input(path, u64::MAX)?;
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
/// [`each_raw_event`] hands them to an analysis as they come, holding nothing.
struct EventCutter {
    framer: Framer,
    /// Bytes read but not yet handed out (the event in progress).
    tail: Vec<u8>,
    /// Stream offset of `tail[0]`.
    tail_start: u64,
    ends: Vec<u64>,
}

impl EventCutter {
    fn new(max_event_bytes: u64) -> Self {
        Self {
            framer: Framer::with_max_event_bytes(None, max_event_bytes),
            tail: Vec::new(),
            tail_start: 0,
            ends: Vec::new(),
        }
    }

    fn feed(&mut self, block: &[u8], sink: &mut dyn FnMut(&[u8])) {
        let ends = &mut self.ends;
        self.framer.feed(block, &mut |item: Framed<'_>| match item {
            Framed::Event { span, .. } | Framed::Comment { span, .. } => ends.push(span.end),
        });
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
        self.framer.finish(&mut |item: Framed<'_>| match item {
            Framed::Event { span, .. } | Framed::Comment { span, .. } => ends.push(span.end),
        });
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
    fn new(max_event_bytes: u64) -> Self {
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
fn raw_title(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".to_owned()
    } else {
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// A raw stream body in a regular file, read in blocks and handed to `each` one event at a time
/// (one chunk per event, exactly as [`open_path_limited`] cuts it into a recording's chunks), so
/// nothing of the body is held here: `check` analyses a 227 MB stream this way. Returns the
/// recording the events belong to, without its chunks; `Ok(None)`, before anything was handed
/// out, when the file is not such a body (a recording, a complete JSON document, standard input, a
/// pipe or device): the caller opens it the ordinary way then.
pub fn each_raw_event(
    path: &Path,
    limits: ReadLimits,
    each: impl FnMut(&[u8]),
) -> Result<Option<Recording>, InputError> {
    read_raw_events(path, limits, false, |_, _| true, each)
}

/// [`each_raw_event`], also taking a body that is one complete JSON document when
/// `documents` (the caller keeps the body and tells a complete response by it), and telling
/// `progress` the bytes read and the file size after each block: it cancels by returning `false`
/// ([`InputError::Cancelled`]).
pub fn read_raw_events(
    path: &Path,
    limits: ReadLimits,
    documents: bool,
    mut progress: impl FnMut(u64, u64) -> bool,
    mut each: impl FnMut(&[u8]),
) -> Result<Option<Recording>, InputError> {
    if is_stdin(path) || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let mut input = open_input(path, limits.max_input_bytes)?;
    let Some(total) = input.len else {
        return Ok(None);
    };
    let mut buf = vec![0u8; 1 << 20];
    let mut n = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
    let head = crate::text::strip_bom(&buf[..n]);
    if sniff(path, &buf[..n.min(256)]) != InputKind::RawBody
        || (!documents
            && (crate::complete::starts_like_document(head)
                || head.iter().all(u8::is_ascii_whitespace)))
    {
        return Ok(None);
    }
    let too_large = |overflow| InputError::EventTooLarge {
        path: display_name(path),
        overflow,
    };
    let mut cutter = EventCutter::new(limits.max_event_bytes);
    let mut read = 0u64;
    while n > 0 {
        cutter.feed(&buf[..n], &mut each);
        if let Some(overflow) = cutter.overflow() {
            return Err(too_large(overflow));
        }
        read += n as u64;
        if !progress(read, total) {
            return Err(InputError::Cancelled);
        }
        n = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
    }
    cutter.finish(&mut each).map_err(too_large)?;
    Ok(Some(raw_recording(&raw_title(path))))
}

/// Turn a raw body into a recording: one chunk per event (a raw body has no read boundaries).
pub fn raw_to_recording(body: &[u8], title: &str) -> Recording {
    match raw_to_recording_limited(body, title, u64::MAX) {
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
    max_event_bytes: u64,
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
fn read_some(reader: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
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

/// The rest of a recording's text after `head`: bounded by the file's size for a regular file,
/// and by a line limit ([`RECORDING_LINE_FACTOR`] × the event limit; a recording holds one chunk
/// per line), so an endless input (a pipe, a device) ends early at bounded memory.
fn read_recording_text(
    path: &Path,
    input: &mut OpenInput,
    head: Vec<u8>,
    max_event_bytes: u64,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Vec<u8>, InputError> {
    let total = input.len.unwrap_or(0).max(1);
    let line_limit = max_event_bytes.saturating_mul(RECORDING_LINE_FACTOR);
    let mut bytes = head;
    if let Some(n) = input.len {
        bytes.reserve((n as usize).saturating_sub(bytes.len()));
    }
    let mut line_start = 0u64;
    let mut check = |bytes: &[u8], from: usize| -> Result<(), InputError> {
        if let Some(i) = memchr::memrchr(b'\n', &bytes[from..]) {
            line_start = (from + i + 1) as u64;
        }
        if bytes.len() as u64 - line_start > line_limit {
            return Err(InputError::RecordingLineTooLong {
                path: display_name(path),
                start: line_start,
                limit: line_limit,
            });
        }
        Ok(())
    };
    check(&bytes, 0)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        let from = bytes.len();
        bytes.extend_from_slice(&buf[..n]);
        check(&bytes, from)?;
        if !progress((bytes.len() as f64 / total as f64).min(1.0) as f32 * 0.5) {
            return Err(InputError::Cancelled);
        }
    }
    Ok(bytes)
}

/// Open any supported file as a recording, with the default event limit
/// ([`DEFAULT_MAX_EVENT_BYTES`]). `progress` is told the fraction read (0..1) and can cancel by
/// returning `false`.
pub fn open_path(
    path: &Path,
    progress: impl FnMut(f32) -> bool,
) -> Result<(Recording, InputKind), InputError> {
    open_path_limited(path, ReadLimits::default(), progress)
}

/// [`open_path`] within `limits`: one line or event (`--max-event-bytes`) and the whole input
/// (`--max-input-bytes`). A raw body is cut into events while it is read, so it is held once and
/// reading stops at the first line or event over the limit (`/dev/zero` ends at once); `-` is
/// standard input.
pub fn open_path_limited(
    path: &Path,
    limits: ReadLimits,
    mut progress: impl FnMut(f32) -> bool,
) -> Result<(Recording, InputKind), InputError> {
    let max_event_bytes = limits.max_event_bytes;
    let mut input = open_input(path, limits.max_input_bytes)?;
    let total = input.len.unwrap_or(0).max(1);
    let mut buf = vec![0u8; 1 << 20];
    let n = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
    let kind = sniff(path, &buf[..n.min(256)]);
    let rec = match kind {
        InputKind::Recording => {
            let head = buf[..n].to_vec();
            drop(buf);
            let bytes =
                read_recording_text(path, &mut input, head, max_event_bytes, &mut progress)?;
            Recording::from_bytes(&bytes).map_err(|e| e.with_path(path))?
        }
        InputKind::RawBody => {
            let mut chunker = RawChunker::new(max_event_bytes);
            let mut read = n as u64;
            let mut n = n;
            while n > 0 {
                chunker.feed(&buf[..n]);
                if let Some(overflow) = chunker.overflow() {
                    return Err(InputError::EventTooLarge {
                        path: display_name(path),
                        overflow,
                    });
                }
                if !progress((read as f64 / total as f64).min(1.0) as f32 * 0.5) {
                    return Err(InputError::Cancelled);
                }
                n = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
                read += n as u64;
            }
            let title = raw_title(path);
            chunker
                .finish(&title)
                .map_err(|overflow| InputError::EventTooLarge {
                    path: display_name(path),
                    overflow,
                })?
        }
    };
    Ok((rec, kind))
}

/// The lean streaming pass over a file (export): a raw body is read in blocks and never held whole;
/// a recording is loaded and its chunks fed. The outcome holds the calls.
pub fn stream_path(path: &Path, opts: Options) -> Result<PipelineOutput, InputError> {
    let mut calls = Vec::new();
    let mut out = stream_path_each(path, opts, |c| calls.push(c))?;
    out.calls = calls;
    Ok(out)
}

/// [`stream_path`], handing each parsed call to `each` in stream order instead of keeping them, so
/// memory stays bounded by the accumulated argument strings, not by every parsed value.
pub fn stream_path_each(
    path: &Path,
    opts: Options,
    each: impl FnMut(crate::accumulate::Call),
) -> Result<PipelineOutput, InputError> {
    stream_path_each_limited(path, opts, ReadLimits::default(), each)
}

/// The lean streaming pass over a recording already in memory (a `.ron` file, or one stream of a
/// capture): its chunks are fed in order, each parsed call handed to `each`. `Err` when a line or
/// event went past `max_event_bytes` (no call is handed out then).
pub fn stream_recording_each(
    rec: &Recording,
    opts: Options,
    max_event_bytes: u64,
    each: impl FnMut(crate::accumulate::Call),
) -> Result<PipelineOutput, Overflow> {
    let dialect = opts
        .dialect
        .or_else(|| crate::dialect::DialectKind::from_name(&rec.meta.dialect));
    // One complete (non-streaming) response: its calls are read directly.
    if crate::complete::chunks_are_complete(rec.chunks.iter().map(|c| c.bytes.as_slice())) {
        let truth: Vec<String> = rec.truth.iter().map(|t| t.arguments.clone()).collect();
        let t = rec.chunks.last().map_or(0, |c| c.t_micros);
        let n = rec.chunks.len() as u32;
        if let Some(out) = crate::complete::outcome(&rec.body(), n, t, dialect, &truth) {
            return Ok(hand_out(out, each));
        }
    }
    let mut p = Pipeline::new(Options {
        dialect,
        detail: false,
        ..opts
    })
    .with_max_event_bytes(max_event_bytes);
    p.set_truth(rec.truth.iter().map(|t| t.arguments.clone()).collect());
    for c in &rec.chunks {
        p.feed(&c.bytes, c.t_micros);
        if let Some(o) = p.overflow() {
            return Err(o);
        }
    }
    Ok(p.finish_each(each))
}

/// [`stream_path_each`] within `limits`: reading stops at the first line or event longer than
/// `max_event_bytes`, or at `max_input_bytes` (an error; no call is handed out then).
pub fn stream_path_each_limited(
    path: &Path,
    opts: Options,
    limits: ReadLimits,
    each: impl FnMut(crate::accumulate::Call),
) -> Result<PipelineOutput, InputError> {
    let max_event_bytes = limits.max_event_bytes;
    let mut input = open_input(path, limits.max_input_bytes)?;
    let mut buf = vec![0u8; 256 * 1024];
    let n = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
    let lean = Options {
        detail: false,
        ..opts
    };
    let too_large = |overflow| InputError::EventTooLarge {
        path: display_name(path),
        overflow,
    };
    if sniff(path, &buf[..n.min(256)]) == InputKind::Recording {
        let head = buf[..n].to_vec();
        drop(buf);
        let bytes = read_recording_text(path, &mut input, head, max_event_bytes, &mut |_| true)?;
        let rec = Recording::from_bytes(&bytes).map_err(|e| e.with_path(path))?;
        drop(bytes);
        return stream_recording_each(&rec, opts, max_event_bytes, each).map_err(too_large);
    }
    let mut p = Pipeline::new(lean).with_max_event_bytes(max_event_bytes);
    let mut n = n;
    if crate::complete::starts_like_document(&buf[..n]) {
        // Perhaps one complete (non-streaming) response: read on while its first JSON document is
        // unfinished (checked each time the bytes double, so linear), at most one event's limit.
        let mut whole = buf[..n].to_vec();
        let mut eof = n < buf.len();
        let mut next_check = whole.len();
        while !eof && (whole.len() as u64) <= max_event_bytes {
            if whole.len() >= next_check {
                if !crate::complete::first_document_unfinished(&whole) {
                    break;
                }
                next_check = whole.len() * 2;
            }
            let m = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
            whole.extend_from_slice(&buf[..m]);
            eof = m < buf.len();
        }
        if eof && let Some(out) = crate::complete::outcome(&whole, 1, 0, opts.dialect, &[]) {
            return Ok(hand_out(out, each));
        }
        // A stream after all: feed what was read ahead, then go on reading.
        p.feed(&whole, 0);
        if let Some(o) = p.overflow() {
            return Err(too_large(o));
        }
        n = if eof {
            0
        } else {
            read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?
        };
    }
    while n > 0 {
        p.feed(&buf[..n], 0);
        if let Some(o) = p.overflow() {
            return Err(too_large(o));
        }
        n = read_some(&mut input.reader, &mut buf).map_err(|e| io_err(path, e))?;
    }
    let out = p.finish_each(each);
    match out.overflow {
        Some(o) => Err(too_large(o)),
        None => Ok(out),
    }
}

/// A complete response's outcome as [`Pipeline::finish_each`] gives it: each call handed to
/// `each`, none kept.
fn hand_out(
    mut out: PipelineOutput,
    mut each: impl FnMut(crate::accumulate::Call),
) -> PipelineOutput {
    for c in std::mem::take(&mut out.calls) {
        each(c);
    }
    out
}
