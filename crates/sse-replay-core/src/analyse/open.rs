//! Reading what the probe found ([`crate::probe`]): the readers of a [`Probe`], for the CLI
//! (`check`, `events`, `export`, `serve`, `test`) and the app alike. Each says, once, what every
//! [`Kind`] is read as:
//!
//! - a recording or a journal: its text, parsed ([`input::read_recording`]);
//! - a body: cut into events as it is read ([`input::read_events`]), analysed as it comes
//!   ([`Probe::analyse`]) or fed to `export`'s lean pipeline in blocks ([`Probe::stream_calls`]),
//!   never held twice;
//! - a capture: imported ([`crate::import::import`]); one holding several streams gives them all
//!   ([`Probe::recordings`]) or the one asked for ([`Probe::recording`], `--stream`).
//!
//! This sits above `input`, `probe` and `import`, so none of them depends on the analysis.

use crate::accumulate::Call;
use crate::analysis::{Analysis, ChunkSpan, Feed, SourceInfo, SourceKind};
use crate::import::{self, ImportError};
use crate::input::{self, EventRows, InputError, Peeked};
use crate::limits::EventLimit;
use crate::naive::StrategyFeed;
use crate::pipeline::{Options, Pipeline, PipelineOutput};
use crate::probe::{BodyForm, Kind, Probe};
use crate::recording::{Chunk, Recording};
use crate::sse::Overflow;

/// Why a file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file (a recording or raw body) could not be read, or went past a limit.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The capture could not be imported.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The caller's progress callback asked to stop.
    #[error("cancelled")]
    Cancelled,
    /// A capture holds several streams and none was chosen (or the chosen number is not one of
    /// them). The first line of the message is the error; a line per stream follows, at most
    /// [`SHOWN_STREAMS`] of them ([`OpenError::stream_lines`]).
    #[error("{} in {path}{}", why(*.asked, .titles.len(), *.total), list(.titles, *.total))]
    ChooseStream {
        path: String,
        /// The number asked for (1-based), if any.
        asked: Option<usize>,
        /// Each stream's title, in order: the streams read (at most the import's stream limit).
        titles: Vec<String>,
        /// How many streams the file holds (more than `titles` when it holds more than are read).
        total: usize,
    },
}

/// The most streams listed when one must be chosen; the rest are counted.
pub const SHOWN_STREAMS: usize = 20;

fn why(asked: Option<usize>, n: usize, total: usize) -> String {
    let range = if total > n {
        format!("1 to {n}: only the first {n} are read")
    } else {
        format!("1 to {n}")
    };
    match asked {
        Some(k) => {
            format!("no stream {k}: the capture holds {total} streams (give --stream {range})")
        }
        None => format!("the capture holds {total} streams: give --stream N ({range})"),
    }
}

fn list(titles: &[String], total: usize) -> String {
    stream_list(titles, total)
        .into_iter()
        .map(|l| format!("\n{l}"))
        .collect()
}

/// `  1: title` for the first [`SHOWN_STREAMS`] titles, then `  … and N more` (of `total`).
fn stream_list(titles: &[String], total: usize) -> Vec<String> {
    let mut lines: Vec<String> = titles
        .iter()
        .take(SHOWN_STREAMS)
        .enumerate()
        .map(|(i, t)| format!("  {}: {t}", i + 1))
        .collect();
    let shown = lines.len();
    let total = total.max(titles.len());
    if total > shown {
        lines.push(format!("  … and {} more", total - shown));
    }
    lines
}

impl OpenError {
    /// For [`OpenError::ChooseStream`]: the lines listing the streams after the first line of the
    /// message (at most [`SHOWN_STREAMS`] and a count of the rest); empty for any other error.
    pub fn stream_lines(&self) -> Vec<String> {
        match self {
            OpenError::ChooseStream { titles, total, .. } => stream_list(titles, *total),
            _ => Vec::new(),
        }
    }

    /// The input was read but went past a limit (the stream is at fault, like a truncated one),
    /// rather than being unreadable, unrecognised or ambiguous.
    pub fn is_over_limit(&self) -> bool {
        match self {
            OpenError::Input(e) => e.is_over_limit(),
            OpenError::Import(e) => e.is_over_limit(),
            OpenError::Cancelled | OpenError::ChooseStream { .. } => false,
        }
    }
}

/// A reading error, with a cancellation as [`OpenError::Cancelled`].
fn input_error(e: InputError) -> OpenError {
    match e {
        InputError::Cancelled => OpenError::Cancelled,
        e => OpenError::Input(e),
    }
}

/// What a file held.
#[derive(Debug)]
pub enum Opened {
    /// One recording, and what kind of source it came from.
    One {
        recording: Box<Recording>,
        kind: SourceKind,
    },
    /// A capture with several streams (in file order), for the caller to choose from.
    Several { recordings: Vec<Recording> },
}

/// A raw body read whole: one buffer and its chunk spans (one per event, as
/// [`input::raw_to_recording`] cuts it), instead of one allocation per event; what the app's
/// first stage takes ([`crate::staged::first_stage_body`]).
#[derive(Debug)]
pub struct RawBody {
    /// The metadata a raw body's recording has (no chunks).
    pub meta: Recording,
    /// The body, as read.
    pub body: Vec<u8>,
    /// One span per event.
    pub chunks: Vec<ChunkSpan>,
}

/// The kind of a recording read from a `.ron` file or a journal.
fn recording_kind(rec: &Recording) -> SourceKind {
    if rec.meta.interrupted {
        SourceKind::Journal
    } else {
        SourceKind::Recording
    }
}

/// The kind of one imported stream (`meta.source` is `import:<format>`).
pub(crate) fn imported_kind(rec: &Recording) -> SourceKind {
    SourceKind::Imported {
        format: rec
            .meta
            .source
            .strip_prefix("import:")
            .unwrap_or_default()
            .to_owned(),
    }
}

impl Probe {
    /// Read as a body (cut into events as it is read), rather than as a recording or a capture:
    /// a body, not imported, and no stream other than the first asked for (which the
    /// recording reader refuses, naming the one stream).
    fn streams_as_body(&self) -> Option<BodyForm> {
        match self.content.kind {
            Kind::Body(form)
                if !self.options.import_only && matches!(self.options.stream, None | Some(1)) =>
            {
                Some(form)
            }
            _ => None,
        }
    }

    /// Every recording the input holds: one (a recording, a journal, a raw body, a capture with
    /// one stream), or several (a capture), in file order. With
    /// [`crate::probe::ReadOptions::import_only`] a body is imported as a capture would be.
    /// `progress` is told the bytes read and the size (0 for a pipe) and cancels by returning
    /// `false` ([`OpenError::Cancelled`]).
    pub fn recordings(self, progress: impl FnMut(u64, u64) -> bool) -> Result<Opened, OpenError> {
        self.recordings_counted(progress).map(|(opened, _)| opened)
    }

    /// [`Probe::recordings`], with how many streams the input holds past those read (the
    /// import's stream limit, [`crate::probe::ReadOptions::max_streams`]).
    fn recordings_counted(
        self,
        mut progress: impl FnMut(u64, u64) -> bool,
    ) -> Result<(Opened, usize), OpenError> {
        let mx = self.options.max_event_bytes;
        let size = self.input.size().unwrap_or(0);
        let import_only = self.options.import_only;
        // Every reader below holds the input whole (a recording's text, a body's chunks, a
        // capture): a regular file over the input limit is refused before it is read.
        self.input.refuse_larger_file().map_err(input_error)?;
        let one = match self.content.kind {
            // Import… on a recording opens it as one (an empty file is "empty" either way).
            Kind::Recording | Kind::Journal
                if !(import_only
                    && self.content.import == Err(crate::content::NotImportable::Empty)) =>
            {
                let recording =
                    input::read_recording(self.input, mx, &mut progress).map_err(input_error)?;
                let kind = recording_kind(&recording);
                (recording, kind)
            }
            Kind::Body(_) if !import_only => {
                let mut chunks = Vec::new();
                let meta =
                    input::read_events(self.input, mx, EventRows::Kept, &mut progress, |event| {
                        chunks.push(Chunk {
                            t_micros: 0,
                            bytes: event.to_vec(),
                        });
                    })
                    .map_err(input_error)?;
                (Recording { chunks, ..meta }, SourceKind::RawBody)
            }
            Kind::Recording | Kind::Journal | Kind::Body(_) | Kind::Capture(_) => {
                let path = self.input.path().to_owned();
                let imported = import::import(self)?;
                let (mut recordings, skipped) = (imported.recordings, imported.skipped_streams);
                if !progress(size, size) {
                    return Err(OpenError::Cancelled);
                }
                return match recordings.pop() {
                    // One stream read and none left out: the capture's only stream.
                    Some(recording) if recordings.is_empty() && skipped == 0 => {
                        let kind = imported_kind(&recording);
                        Ok((
                            Opened::One {
                                recording: Box::new(recording),
                                kind,
                            },
                            0,
                        ))
                    }
                    Some(last) => {
                        recordings.push(last);
                        Ok((Opened::Several { recordings }, skipped))
                    }
                    None => Err(ImportError::NoStreams {
                        path,
                        why: "nothing found".into(),
                    }
                    .into()),
                };
            }
        };
        // Read (a small file never reached a progress report).
        if !progress(size, size) {
            return Err(OpenError::Cancelled);
        }
        Ok((
            Opened::One {
                recording: Box::new(one.0),
                kind: one.1,
            },
            0,
        ))
    }

    /// [`Probe::recordings`] down to one recording: stream
    /// [`crate::probe::ReadOptions::stream`] (1-based) of a capture with several, or
    /// [`OpenError::ChooseStream`] naming them when none (or no such stream) was given. A file
    /// with one stream opens whatever `stream` says, except a number other than 1.
    pub fn recording(
        self,
        progress: impl FnMut(u64, u64) -> bool,
    ) -> Result<(Recording, SourceKind), OpenError> {
        let stream = self.options.stream;
        let name = self.input.name();
        let choose = |titles: Vec<String>, skipped: usize| OpenError::ChooseStream {
            path: name.clone(),
            asked: stream,
            total: titles.len() + skipped,
            titles,
        };
        // A recording too large to hold whole, asked for a stream it does not have: read line
        // by line to its end (as it would be parsed whole), nothing kept but its title, to say
        // what a small one says.
        if stream.is_some_and(|k| k != 1) && self.recording_too_large() {
            let title = title_of_recording_lines(self, progress)?;
            return Err(choose(vec![title], 0));
        }
        let (opened, skipped) = self.recordings_counted(progress)?;
        match opened {
            Opened::One { recording, kind } => match stream {
                None | Some(1) => Ok((*recording, kind)),
                Some(_) => Err(choose(vec![recording.meta.title.clone()], 0)),
            },
            Opened::Several { mut recordings } => {
                let n = recordings.len();
                match stream {
                    Some(k) if (1..=n).contains(&k) => {
                        let recording = recordings.swap_remove(k - 1);
                        let kind = imported_kind(&recording);
                        Ok((recording, kind))
                    }
                    _ => Err(choose(
                        recordings.into_iter().map(|r| r.meta.title).collect(),
                        skipped,
                    )),
                }
            }
        }
    }

    /// The analysis, as `check` and `events` make it: stream `stream` of a capture (see
    /// [`Probe::recording`]), the dialect forced when [`crate::probe::ReadOptions::dialect`] is
    /// set, reading stopped at the first line or event longer than `max_event_bytes`
    /// ([`InputError::EventTooLarge`]). A body is analysed as it is read, one event at a time;
    /// without `keep_body` a stream body is not kept ([`Analysis::body`] is empty; its length is
    /// [`Analysis::body_len`]), nor are its per-event and per-chunk records
    /// ([`Analysis::events`] and [`Analysis::chunks`] are empty; their numbers are
    /// [`Analysis::event_count`] and [`Analysis::chunk_count`]), so a large stream is never held
    /// twice, and the report is the same either way. A document or a blank body is always kept (a complete response is read from
    /// it).
    pub fn analyse(self, keep_body: bool) -> Result<Analysis, OpenError> {
        let name = self.input.name();
        let mx = self.options.max_event_bytes;
        let opts = Options {
            dialect: self.options.dialect,
            framing: None,
            detail: true,
        };
        let analysis = match self.streams_as_body() {
            Some(form) => {
                let keep = keep_body || matches!(form, BodyForm::Document | BodyForm::Blank);
                if keep {
                    // Held whole: a regular file over the input limit is refused before it is
                    // read. Not kept, a regular file is read to its end: only rows per event are
                    // kept, and those are bounded by the input (`input::read_events`).
                    self.input.refuse_larger_file().map_err(input_error)?;
                }
                // A raw body's recording has no metadata to analyse with (its title comes at the
                // end): the empty one stands for it until then.
                let empty = Recording::default();
                // No room reserved for the file's size: reading may stop long before it (a
                // sparse file, a line over the limit).
                let mut feed = if keep {
                    Feed::new(&empty, opts, mx).keep_body(0)
                } else {
                    // Nor a record per event or per chunk (a raw body's chunks are its events),
                    // nor `parse-when-valid`'s attempts: the report needs only their numbers,
                    // and a large body has millions.
                    Feed::observed(&empty, opts, mx, StrategyFeed::spawn_counting()).counts_only()
                };
                // Rows per event only when the body is held (its spans); the streamed pass
                // keeps counts, so tiny events are read as far as any bytes.
                let rows = if keep {
                    EventRows::Kept
                } else {
                    EventRows::None
                };
                let rec = input::read_events(
                    self.input,
                    mx,
                    rows,
                    |_, _| true,
                    |event| {
                        // No progress hook: nothing asks to stop.
                        feed.feed(event, 0);
                    },
                )
                .map_err(input_error)?;
                let source = SourceInfo {
                    name: name.clone(),
                    timing_known: false,
                    kind: SourceKind::RawBody,
                };
                feed.finish(&rec, source)
            }
            // Not for a caller that keeps the body (`events` and `preview` show its bytes): held
            // whole, a recording over the input limit is refused before it is read.
            None if !keep_body && self.reads_recording_lines() => {
                self.analyse_lines(Spool::new(), true, |_| ())?.0
            }
            None => self.analyse_whole()?,
        };
        match analysis.overflow {
            Some(overflow) => Err(InputError::EventTooLarge {
                path: name,
                overflow,
            }
            .into()),
            None => Ok(analysis),
        }
    }

    /// A recording too large to hold whole (a regular file over the input limit), read line by
    /// line instead when it is in the writers' layout ([`Probe::analyse_recording_lines`]), as
    /// `export` and `check` read it: not imported, and no stream other than the first asked for.
    pub fn reads_recording_lines(&self) -> bool {
        matches!(self.options.stream, None | Some(1)) && self.recording_too_large()
    }

    /// The input limit's error, as a reader that holds the file whole refuses it with.
    fn too_long(&self) -> InputError {
        match self.input.refuse_larger_file() {
            Err(e) => e,
            Ok(()) => InputError::InputTooLong {
                path: self.input.name(),
                limit: self.input.limit().bytes,
            },
        }
    }

    /// A recording (not imported) too large to hold whole: a regular file over the input limit,
    /// read line by line when it is in the writers' layout.
    fn recording_too_large(&self) -> bool {
        self.content.kind == Kind::Recording
            && !self.options.import_only
            && self.input.refuse_larger_file().is_err()
    }

    /// [`Probe::analyse`] (the report only, no body kept) of a recording read line by line
    /// ([`input::read_recording_lines`]), for [`Probe::reads_recording_lines`]: each chunk fed
    /// with its time to the feed [`Analysis::from_recording_owned`] uses, as it is read, and
    /// handed to `each_chunk` unless an earlier one went past the event limit; the body is not
    /// kept. What needs the reads at the end goes through the file again: the returned
    /// [`crate::naive::Reads`] does that for the caller too. Memory is bounded by the records per
    /// chunk and event, not the body. Refused with the input limit's error (which says how to
    /// raise it), as a recording held whole would be, when the document is not in the writers'
    /// layout or its body may be one complete response (one JSON object, nothing after it). A
    /// line or event over the event limit is in [`Analysis::overflow`], as
    /// [`Analysis::from_recording_owned`] says it.
    pub fn analyse_recording_lines(
        self,
        each_chunk: impl FnMut(&[u8]),
    ) -> Result<(Analysis, RecordingReads), OpenError> {
        self.analyse_lines(Spool::new(), false, each_chunk)
    }

    /// [`Probe::analyse_recording_lines`] with the reads kept in `spool`, else read again from
    /// the document; `lean`: keeping only the numbers of reads and events, and each call's
    /// fragments compactly ([`Feed::counts_only`]), unless the body may be binary frames.
    fn analyse_lines(
        self,
        spool: Option<Spool>,
        lean: bool,
        each_chunk: impl FnMut(&[u8]),
    ) -> Result<(Analysis, RecordingReads), OpenError> {
        let too_long = self.too_long();
        let opts = Options {
            dialect: self.options.dialect,
            framing: None,
            detail: true,
        };
        analyse_recording_lines(
            self.input,
            opts,
            self.options.max_event_bytes,
            too_long,
            spool,
            lean,
            each_chunk,
        )
    }

    /// [`Probe::analyse`] of a recording or capture read whole.
    fn analyse_whole(self) -> Result<Analysis, OpenError> {
        let name = self.input.name();
        let mx = self.options.max_event_bytes;
        let opts = Options {
            dialect: self.options.dialect,
            framing: None,
            detail: true,
        };
        let (rec, kind) = self.recording(|_, _| true)?;
        let source = SourceInfo {
            name,
            timing_known: kind.may_have_timing() && rec.meta.timing_known,
            kind,
        };
        Ok(Analysis::from_recording_owned(rec, source, opts, mx))
    }

    /// The lean streaming pass of `export`: each parsed call goes to `each` in stream order and
    /// is not kept, so memory stays bounded by the accumulated argument strings. A body is read in
    /// blocks and never held whole (a document as long as one event at most, to tell a complete
    /// response); a recording is read and its chunks fed; a capture is imported and stream
    /// `stream` fed. Reading stops at the first line or event longer than `max_event_bytes` (an
    /// error; no call is handed out then).
    pub fn stream_calls(self, each: impl FnMut(Call)) -> Result<PipelineOutput, OpenError> {
        let name = self.input.name();
        let mx = self.options.max_event_bytes;
        let opts = Options {
            dialect: self.options.dialect,
            framing: None,
            detail: false,
        };
        if let Some(form) = self.streams_as_body() {
            return stream_body(self.input, form, opts, mx, each).map_err(input_error);
        }
        // A recording too large to hold whole (a regular file over the input limit) is read
        // line by line when it is in the writers' layout, as a raw body is read block by block.
        if self.reads_recording_lines()
            && let Err(too_long) = self.input.refuse_larger_file()
        {
            return stream_recording_lines(self.input, opts, mx, too_long, each);
        }
        let (rec, _) = self.recording(|_, _| true)?;
        stream_recording(&rec, opts, mx, each).map_err(|overflow| {
            InputError::EventTooLarge {
                path: name,
                overflow,
            }
            .into()
        })
    }

    /// A body read whole into one buffer, cut per event (for a [`Kind::Body`]: the app shows it
    /// before its naive strategies are computed). Stops at the first line or event longer than
    /// `max_event_bytes`; `progress` (bytes read, size) cancels by returning `false`.
    pub fn raw_body(self, progress: impl FnMut(u64, u64) -> bool) -> Result<RawBody, OpenError> {
        self.input.refuse_larger_file().map_err(input_error)?;
        // Room for the whole file at once: growing by doubling would peak at twice the body.
        let size = self.input.size().unwrap_or(0);
        let mut body = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        let mut chunks = Vec::new();
        let mx = self.options.max_event_bytes;
        let meta = input::read_events(self.input, mx, EventRows::Kept, progress, |event| {
            let start = body.len() as u64;
            body.extend_from_slice(event);
            chunks.push(ChunkSpan {
                start,
                end: body.len() as u64,
                t_micros: 0,
            });
        })
        .map_err(input_error)?;
        Ok(RawBody { meta, body, chunks })
    }
}

/// `export` reads a body in blocks of this size.
const STREAM_BLOCK: usize = 256 * 1024;

/// A body fed to a lean pipeline block by block. A document is read ahead while its first JSON
/// document is unfinished (checked each time the bytes double, so linear), at most one event's
/// limit: a complete response's calls are read from it directly.
fn stream_body(
    mut input: Peeked,
    form: BodyForm,
    opts: Options,
    max_event_bytes: EventLimit,
    each: impl FnMut(Call),
) -> Result<PipelineOutput, InputError> {
    let name = input.name();
    let too_large = |overflow| InputError::EventTooLarge {
        path: name.clone(),
        overflow,
    };
    // Through the input layer's mapping, so the input limit reads as `InputTooLong`.
    let at = input.path().to_owned();
    let io = |source| input::io_err(&at, source);
    let mut buf = vec![0u8; STREAM_BLOCK];
    let mut p = Pipeline::new(opts).with_max_event_bytes(max_event_bytes);
    let mut n = input::read_some(&mut input, &mut buf).map_err(io)?;
    if form == BodyForm::Document {
        let mut whole = buf[..n].to_vec();
        let mut eof = n < buf.len();
        let mut next_check = whole.len();
        while !eof && (whole.len() as u64) <= max_event_bytes.bytes() {
            if whole.len() >= next_check {
                if !crate::content::first_document_unfinished(&whole) {
                    break;
                }
                next_check = whole.len() * 2;
            }
            let m = input::read_some(&mut input, &mut buf).map_err(io)?;
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
            input::read_some(&mut input, &mut buf).map_err(io)?
        };
    }
    while n > 0 {
        p.feed(&buf[..n], 0);
        if let Some(o) = p.overflow() {
            return Err(too_large(o));
        }
        n = input::read_some(&mut input, &mut buf).map_err(io)?;
    }
    let out = p.finish_each(each);
    match out.overflow {
        Some(o) => Err(too_large(o)),
        None => Ok(out),
    }
}

/// The lean streaming pass over a recording in memory (a `.ron` file, or one stream of a
/// capture): its chunks are fed in order, each parsed call handed to `each`. `Err` when a line or
/// event went past `max_event_bytes` (no call is handed out then).
fn stream_recording(
    rec: &Recording,
    opts: Options,
    max_event_bytes: EventLimit,
    each: impl FnMut(Call),
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
    let mut p = lean_pipeline(rec, dialect, opts, max_event_bytes);
    for c in &rec.chunks {
        p.feed(&c.bytes, c.t_micros);
        if let Some(o) = p.overflow() {
            return Err(o);
        }
    }
    Ok(p.finish_each(each))
}

/// The lean pipeline `export` feeds a recording's chunks to (no detail records), in `dialect`,
/// with the recording's ground truth.
fn lean_pipeline(
    rec: &Recording,
    dialect: Option<crate::dialect::DialectKind>,
    opts: Options,
    max_event_bytes: EventLimit,
) -> Pipeline {
    let mut p = Pipeline::new(Options {
        dialect,
        detail: false,
        ..opts
    })
    .with_max_event_bytes(max_event_bytes);
    p.set_truth(rec.truth.iter().map(|t| t.arguments.clone()).collect());
    p
}

/// [`stream_recording`] for a recording read line by line ([`input::read_recording_lines`]):
/// its chunks fed to the pipeline as they are read, none kept. A recording whose body may be one
/// complete (non-streaming) response ([`OneDocument`]: that needs the whole body) or whose
/// document is not in the writers' layout is refused with `too_long` (the input limit's error,
/// which says how to raise it), as a recording held whole is: no call is handed out before the
/// document was read to its end.
fn stream_recording_lines(
    input: Peeked,
    opts: Options,
    max_event_bytes: EventLimit,
    too_long: input::InputError,
    each: impl FnMut(Call),
) -> Result<PipelineOutput, OpenError> {
    /// The pipeline, and what the chunks said so far.
    struct Lean {
        pipeline: Pipeline,
        one_document: OneDocument,
        overflow: Option<Overflow>,
    }
    let name = input.name();
    let (read, lean) = input::read_recording_lines(
        input,
        max_event_bytes,
        |rec| {
            let dialect = opts
                .dialect
                .or_else(|| crate::dialect::DialectKind::from_name(&rec.meta.dialect));
            Lean {
                pipeline: lean_pipeline(rec, dialect, opts, max_event_bytes),
                one_document: OneDocument::new(),
                overflow: None,
            }
        },
        |lean, chunk| {
            lean.one_document.add(&chunk.bytes, max_event_bytes.bytes());
            if matches!(lean.one_document, OneDocument::TooLong) || lean.overflow.is_some() {
                return;
            }
            lean.pipeline.feed(&chunk.bytes, chunk.t_micros);
            lean.overflow = lean.pipeline.overflow();
        },
    )
    .map_err(input_error)?;
    match (read, lean) {
        (_, Some(lean)) if lean.one_document.may_be() => Err(input_error(too_long)),
        (
            _,
            Some(Lean {
                overflow: Some(overflow),
                ..
            }),
        ) => Err(input_error(input::InputError::EventTooLarge {
            path: name,
            overflow,
        })),
        (input::LinesRead::Streamed, Some(lean)) => Ok(lean.pipeline.finish_each(each)),
        _ => Err(input_error(too_long)),
    }
}

/// Whether a recording's body, fed chunk by chunk, may be one complete (non-streaming) response,
/// which only the whole body tells ([`may_be_one_object`]): its start is held
/// while it may be (checked each time it doubles, so linear), at most `limit` bytes. JSON lines
/// and SSE are told from their first lines, and nothing more is held.
enum OneDocument {
    /// It may still be: the body so far, and its length at the next check.
    Maybe { held: Vec<u8>, next_check: usize },
    /// A stream: not one document.
    Stream,
    /// Its start grew past the limit while it might still be one document.
    TooLong,
}

/// `bytes` (a body's start) may be one complete response, as [`crate::complete::document`]
/// takes one: one JSON object, nothing but white space after it.
fn may_be_one_object(bytes: &[u8]) -> bool {
    let bytes = crate::text::strip_bom(bytes);
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(b'{') => crate::content::may_be_one_document(bytes),
        Some(_) => false,
    }
}

impl OneDocument {
    fn new() -> Self {
        OneDocument::Maybe {
            held: Vec::new(),
            next_check: 0,
        }
    }

    /// The next chunk of the body.
    fn add(&mut self, bytes: &[u8], limit: u64) {
        let OneDocument::Maybe { held, next_check } = self else {
            return;
        };
        held.extend_from_slice(bytes);
        if held.len() >= *next_check {
            if !may_be_one_object(held) {
                *self = OneDocument::Stream;
                return;
            }
            *next_check = held.len().max(1) * 2;
        }
        if held.len() as u64 > limit {
            *self = OneDocument::TooLong;
        }
    }

    /// The whole body was fed: whether it may be one document (then only a whole read can take
    /// it).
    fn may_be(&self) -> bool {
        match self {
            OneDocument::Maybe { held, .. } => may_be_one_object(held),
            OneDocument::Stream => false,
            OneDocument::TooLong => true,
        }
    }
}

/// A recording's reads read again from its file, line by line ([`input::read_recording_lines`]),
/// for what needs them after an analysis that did not keep the body. A read that fails, or finds
/// the document no longer in the writers' layout (refused then as the first read would have
/// been), is kept ([`RecordingReads::take_error`]) and hands out no more reads.
#[derive(Debug)]
pub struct RecordingReads {
    path: std::path::PathBuf,
    limit: crate::limits::InputLimit,
    max_event_bytes: EventLimit,
    failed: std::cell::RefCell<Option<InputError>>,
    /// The reads as they were first read, when they could be kept in a temporary file
    /// ([`Spool`]): gone through instead of the document, which is then parsed only once.
    spooled: Option<Spooled>,
}

impl RecordingReads {
    /// Why a read of the reads failed, if one did: what was handed out then does not stand for
    /// the recording.
    pub fn take_error(&self) -> Option<InputError> {
        self.failed.take()
    }
}

impl crate::naive::Reads for RecordingReads {
    fn each(&self, f: &mut dyn FnMut(&[u8], u64)) {
        if self.failed.borrow().is_some() {
            return;
        }
        if let Some(spooled) = &self.spooled {
            if let Err(source) = spooled.each(f) {
                *self.failed.borrow_mut() = Some(InputError::Io {
                    path: format!(
                        "the temporary copy of the reads of {}",
                        input::display_name(&self.path)
                    ),
                    source,
                });
            }
            return;
        }
        let read = Peeked::open(&self.path, self.limit).and_then(|input| {
            input::read_recording_lines(
                input,
                self.max_event_bytes,
                |_| (),
                |(), chunk| f(&chunk.bytes, chunk.t_micros),
            )
        });
        let failed = match read {
            Ok((input::LinesRead::Streamed, _)) => return,
            Ok((input::LinesRead::OtherLayout, _)) => InputError::InputTooLong {
                path: input::display_name(&self.path),
                limit: self.limit.bytes,
            },
            Err(e) => e,
        };
        *self.failed.borrow_mut() = Some(failed);
    }
}

/// The reads of a recording read line by line, written to an unlinked temporary file
/// ([`tempfile::tempfile`]) as they are read, so that what needs them again at the end goes
/// through them without parsing the document again: each read as its arrival time and its
/// length (8 bytes each, little-endian), then its bytes.
struct Spool {
    out: std::io::BufWriter<std::fs::File>,
    reads: u64,
}

/// The buffer a [`Spool`] is written and read through.
const SPOOL_BUFFER: usize = 256 * 1024;

impl Spool {
    /// A new spool, or `None` when no temporary file can be made (the document is then read
    /// again instead).
    fn new() -> Option<Self> {
        let file = tempfile::tempfile().ok()?;
        Some(Spool {
            out: std::io::BufWriter::with_capacity(SPOOL_BUFFER, file),
            reads: 0,
        })
    }

    /// One read and its arrival time.
    fn add(&mut self, bytes: &[u8], t_micros: u64) -> std::io::Result<()> {
        use std::io::Write as _;
        self.out.write_all(&t_micros.to_le_bytes())?;
        self.out.write_all(&(bytes.len() as u64).to_le_bytes())?;
        self.out.write_all(bytes)?;
        self.reads += 1;
        Ok(())
    }

    /// Every read was written: the file to go through them again, or `None` when it could not
    /// be written to its end.
    fn finish(self) -> Option<Spooled> {
        let reads = self.reads;
        let file = self.out.into_inner().ok()?;
        Some(Spooled { file, reads })
    }
}

/// A [`Spool`] written to its end.
#[derive(Debug)]
struct Spooled {
    file: std::fs::File,
    /// How many reads it holds.
    reads: u64,
}

impl Spooled {
    /// Every read, in order, to `f`; an error when the file cannot be read back as it was
    /// written.
    fn each(&self, f: &mut dyn FnMut(&[u8], u64)) -> std::io::Result<()> {
        use std::io::{BufRead as _, Read as _, Seek as _};
        let mut file = &self.file;
        file.seek(std::io::SeekFrom::Start(0))?;
        let mut from = std::io::BufReader::with_capacity(SPOOL_BUFFER, file);
        let mut word = [0u8; 8];
        let mut bytes = Vec::new();
        let mut reads = 0u64;
        while !from.fill_buf()?.is_empty() {
            from.read_exact(&mut word)?;
            let t_micros = u64::from_le_bytes(word);
            from.read_exact(&mut word)?;
            let len = u64::from_le_bytes(word);
            bytes.clear();
            if (&mut from).take(len).read_to_end(&mut bytes)? as u64 != len {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            f(&bytes, t_micros);
            reads += 1;
        }
        if reads != self.reads {
            return Err(std::io::Error::other(format!(
                "{reads} reads where {} were written",
                self.reads
            )));
        }
        Ok(())
    }
}

/// The title of a recording too large to hold whole ([`Probe::recording_too_large`]), read line
/// by line to its end, every chunk parsed and none kept: the error a whole read would give, or
/// the input limit's error when the document is not in the writers' layout (a whole read is
/// refused then). `progress` is told when it was read, as [`Probe::recordings`] tells it.
fn title_of_recording_lines(
    probe: Probe,
    mut progress: impl FnMut(u64, u64) -> bool,
) -> Result<String, OpenError> {
    let too_long = probe.too_long();
    let size = probe.input.size().unwrap_or(0);
    let (read, title) = input::read_recording_lines(
        probe.input,
        probe.options.max_event_bytes,
        |rec| rec.meta.title.clone(),
        |_, _| (),
    )
    .map_err(input_error)?;
    match (read, title) {
        (input::LinesRead::Streamed, Some(title)) => {
            if !progress(size, size) {
                return Err(OpenError::Cancelled);
            }
            Ok(title)
        }
        _ => Err(input_error(too_long)),
    }
}

/// [`Probe::analyse_recording_lines`], refused with `too_long`; the reads kept in `spool` for
/// what needs them again, else read again from the document; `lean` as
/// [`Probe::analyse_lines`] says.
fn analyse_recording_lines(
    input: Peeked,
    opts: Options,
    max_event_bytes: EventLimit,
    too_long: InputError,
    spool: Option<Spool>,
    lean: bool,
    mut each_chunk: impl FnMut(&[u8]),
) -> Result<(Analysis, RecordingReads), OpenError> {
    /// The recording without its chunks, the feed, what the chunks said so far, and where the
    /// reads are kept.
    struct Fed {
        head: Recording,
        /// Started at the first read that is not empty, whose first byte tells whether the body
        /// may be binary frames ([`crate::framing::Framer::may_open_frames`]): only then are the
        /// records per read and event kept when `lean`.
        feed: Option<Feed>,
        /// The arrival times of the empty reads before it, fed when it starts.
        empty: Vec<u64>,
        one_document: OneDocument,
        spool: Option<Spool>,
    }
    impl Fed {
        /// The feed, started (if it was not) with `first`, the first byte of the body (`None`:
        /// the body is empty), and the empty reads before it.
        fn started(
            &mut self,
            first: Option<u8>,
            lean: bool,
            start: &dyn Fn(&Recording) -> Feed,
        ) -> &mut Feed {
            self.feed.get_or_insert_with(|| {
                let mut feed = start(&self.head);
                if lean && first.is_some_and(|b| !crate::framing::Framer::may_open_frames(b)) {
                    feed = feed.counts_only();
                }
                for t in self.empty.drain(..) {
                    feed.feed(&[], t);
                }
                feed
            })
        }

        fn overflowed(&self) -> bool {
            self.feed.as_ref().is_some_and(|f| f.overflow().is_some())
        }
    }
    // Of `parse-when-valid`'s attempts only their number, as for a raw body: the report needs no
    // more.
    let start = |rec: &Recording| {
        Feed::observed(rec, opts, max_event_bytes, StrategyFeed::spawn_counting())
    };
    let name = input.name();
    let mut replay = RecordingReads {
        path: input.path().to_owned(),
        limit: input.limit(),
        max_event_bytes,
        failed: std::cell::RefCell::new(None),
        spooled: None,
    };
    let (read, fed) = input::read_recording_lines(
        input,
        max_event_bytes,
        |rec| Fed {
            head: rec.clone(),
            feed: None,
            empty: Vec::new(),
            one_document: OneDocument::new(),
            spool,
        },
        |fed, chunk| {
            fed.one_document.add(&chunk.bytes, max_event_bytes.bytes());
            if matches!(fed.one_document, OneDocument::TooLong) {
                return;
            }
            if !fed.overflowed() {
                each_chunk(&chunk.bytes);
                // A spool that cannot be written is dropped: the document is read again.
                if let Some(spool) = &mut fed.spool
                    && spool.add(&chunk.bytes, chunk.t_micros).is_err()
                {
                    fed.spool = None;
                }
            }
            match chunk.bytes.first() {
                None if fed.feed.is_none() => fed.empty.push(chunk.t_micros),
                first => {
                    fed.started(first.copied(), lean, &start)
                        .feed(&chunk.bytes, chunk.t_micros);
                }
            }
        },
    )
    .map_err(input_error)?;
    let mut fed = match (read, fed) {
        (input::LinesRead::Streamed, Some(fed)) if !fed.one_document.may_be() => fed,
        _ => return Err(input_error(too_long)),
    };
    let kind = recording_kind(&fed.head);
    let source = SourceInfo {
        name,
        timing_known: kind.may_have_timing() && fed.head.meta.timing_known,
        kind,
    };
    replay.spooled = fed.spool.take().and_then(Spool::finish);
    // An empty body: nothing tells its framing.
    fed.started(None, lean, &start);
    let Some(feed) = fed.feed.take() else {
        // Not taken: started just above.
        return Err(input_error(too_long));
    };
    if feed.overflow().is_some() {
        // Refused by the caller, where the line or event went past the limit: no need of the
        // reads again.
        return Ok((feed.finish(&fed.head, source), replay));
    }
    let analysis = feed.finish_replaying(&fed.head, source, &replay);
    if let Some(e) = replay.take_error() {
        return Err(input_error(e));
    }
    Ok((analysis, replay))
}

/// A complete response's outcome as [`Pipeline::finish_each`] gives it: each call handed to
/// `each`, none kept.
fn hand_out(mut out: PipelineOutput, mut each: impl FnMut(Call)) -> PipelineOutput {
    for c in std::mem::take(&mut out.calls) {
        each(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::ReadOptions;

    /// `check`'s text and JSON of `got` are those of `want` (the file `p`).
    fn assert_same_report(got: &Analysis, want: &Analysis, p: &std::path::Path) {
        assert_eq!(
            crate::report::check_text(got),
            crate::report::check_text(want),
            "{}",
            p.display()
        );
        assert_eq!(
            crate::export::check_json(got),
            crate::export::check_json(want),
            "{}",
            p.display()
        );
    }

    fn probe(p: &std::path::Path) -> Probe {
        crate::probe::open(p, ReadOptions::default()).expect("opens")
    }

    /// Every file `check` may meet (bundled recordings, raw-body fixtures, captures, a raw body
    /// cut into odd pieces): the streamed analysis `check` uses (the body not kept) gives the same
    /// report and JSON as the analysis that keeps the body, and as the analysis of the recording
    /// the file opens as, previews and all.
    #[test]
    fn the_streamed_report_is_the_ordinary_report() {
        let root = crate::repo_root();
        let dir = tempfile::tempdir().expect("temp dir");
        // A raw body with CRLF endings, a comment and an unterminated last event.
        let odd = dir.path().join("odd.sse");
        std::fs::write(
            &odd,
            ": hi\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\":3\"}}]}}]}\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\r\n\r\ndata: {\"choices\"",
        )
        .expect("write");
        // Binary Bedrock frames: a corrupted one, then a frame cut short at the end.
        let frames = dir.path().join("frames.bin");
        let mut bin = crate::aws_eventstream::event_frame(
            "contentBlockStart",
            br#"{"contentBlockIndex":0,"start":{"toolUse":{"name":"f","toolUseId":"t"}}}"#,
        );
        let mut bad = crate::aws_eventstream::event_frame(
            "contentBlockDelta",
            br#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}}}"#,
        );
        bad[20] ^= 1;
        bin.extend(bad);
        let stop = crate::aws_eventstream::event_frame("messageStop", br#"{"stopReason":"x"}"#);
        bin.extend_from_slice(&stop[..stop.len() - 3]);
        std::fs::write(&frames, bin).expect("write");
        let mut paths = vec![odd, frames];
        for d in [
            "recordings",
            "tests/data/fixtures",
            "tests/data/import",
            "tests/data/cohere-v2",
            "tests/data/assistants",
            "tests/data/responses-items",
            "tests/data/json-array-chunks",
            "tests/data/bedrock/binary",
            "tests/data/bedrock/json",
            "tests/data/complete",
        ] {
            for e in std::fs::read_dir(root.join(d))
                .into_iter()
                .flatten()
                .flatten()
            {
                paths.push(e.path());
            }
        }
        let mut compared = 0;
        for p in &paths {
            let Ok((rec, kind)) = probe(p).recording(|_, _| true) else {
                continue;
            };
            let source = SourceInfo {
                name: input::display_name(p),
                timing_known: kind.may_have_timing() && rec.meta.timing_known,
                kind,
            };
            let mut want = Analysis::from_recording_owned(
                rec,
                source,
                Options::default(),
                EventLimit::UNBOUNDED,
            );
            for previews in [false, true] {
                if previews {
                    want.compute_previews();
                }
                for keep_body in [false, true] {
                    let mut got = probe(p).analyse(keep_body).expect("opens as it did");
                    if previews {
                        got.compute_previews();
                    }
                    assert_same_report(&got, &want, p);
                    compared += 1;
                }
            }
        }
        assert!(compared > 80, "{compared} reports compared");
    }

    /// Every bundled recording analysed as `check` does over an input limit below its size (read
    /// line by line, the body not kept, the reads gone through again at the end) gives the report
    /// and JSON of the recording held whole, previews and all; a recording whose body may be one
    /// complete response, or in another layout, is refused with the limit's message.
    /// `p` opened with an input limit one byte below its size (a recording then read line by
    /// line), `stream` asked for.
    fn over_with(p: &std::path::Path, stream: Option<usize>) -> Probe {
        let size = std::fs::metadata(p).expect("size").len();
        let options = ReadOptions {
            input_limit: crate::limits::InputLimit {
                bytes: size - 1,
                files: false,
            },
            stream,
            ..ReadOptions::default()
        };
        crate::probe::open(p, options).expect("opens")
    }

    fn over(p: &std::path::Path) -> Probe {
        over_with(p, None)
    }

    #[test]
    fn a_recording_over_the_input_limit_is_reported_as_held_whole() {
        let root = crate::repo_root();
        let mut compared = 0;
        let mut split = 0;
        for e in std::fs::read_dir(root.join("recordings")).expect("recordings") {
            let p = e.expect("entry").path();
            if p.extension().is_none_or(|x| x != "ron") {
                continue;
            }
            let mut want = probe(&p).analyse(false).expect("held whole");
            let mut got = over(&p).analyse(false).expect("read line by line");
            // Read line by line indeed: no body held, nor a record per read or event but for
            // binary frames.
            assert!(got.body.is_empty() && got.body_len() > 0, "{}", p.display());
            let binary = !want.framing.is_text();
            assert_eq!(got.chunks.is_empty(), !binary, "{}", p.display());
            assert_eq!(got.events.is_empty(), !binary, "{}", p.display());
            // Where no temporary file holds the reads, they are read again from the document;
            // with every record kept (as `scan` reads it), the same report.
            let mut others = Vec::new();
            for (spool, lean) in [(false, true), (true, false)] {
                let spool = Spool::new().filter(|_| spool);
                let (a, reads) = over(&p).analyse_lines(spool, lean, |_| ()).expect("read");
                assert!(reads.take_error().is_none(), "{}", p.display());
                others.push(a);
            }
            want.compute_previews();
            got.compute_previews();
            assert_same_report(&got, &want, &p);
            for mut other in others {
                other.compute_previews();
                assert_same_report(&other, &want, &p);
            }
            split += usize::from(want.findings.iter().any(|f| {
                matches!(
                    f.kind,
                    crate::findings::FindingKind::SplitUtf8
                        | crate::findings::FindingKind::SplitLine
                )
            }));
            compared += 1;
        }
        assert!(compared >= 60, "{compared} recordings compared");
        // Findings at read boundaries were among them (they need the reads again).
        assert!(split > 0);
        // Refused as a recording held whole is: a body that may be one complete response, a
        // document in another layout.
        let dir = tempfile::tempdir().expect("temp dir");
        let mut complete = Recording::default();
        complete.meta.timing_known = true;
        complete.chunks = vec![Chunk {
            t_micros: 0,
            bytes: b"  {\"choices\":[]}".to_vec(),
        }];
        let text = complete.to_ron_string();
        let other = text.replacen("\n    chunks: [\n", "\n    chunks: [ \n", 1);
        assert_ne!(other, text);
        for (name, doc) in [("complete.ron", text), ("other.ron", other)] {
            let p = dir.path().join(name);
            std::fs::write(&p, doc).expect("write");
            assert!(probe(&p).analyse(false).is_ok(), "{name}");
            match over(&p).analyse(false) {
                Err(OpenError::Input(InputError::InputTooLong { .. })) => {}
                got => panic!("{name}: {got:?}"),
            }
        }
    }

    /// A recording over the input limit is parsed once: what needs its reads again (the findings
    /// at read boundaries, the per-read strategies, `scan`) goes through the copy taken as it was
    /// read, every read with its time, even once the document is gone; without that copy the
    /// document is read again (and gone, that fails).
    #[test]
    fn a_recording_over_the_input_limit_is_parsed_once() {
        let root = crate::repo_root();
        let dir = tempfile::tempdir().expect("temp dir");
        let name = "seed-example.ron";
        let text = std::fs::read(root.join("recordings").join(name)).expect("read");
        let (rec, _) = probe(&root.join("recordings").join(name))
            .recording(|_, _| true)
            .expect("held whole");
        let want: Vec<(Vec<u8>, u64)> = rec
            .chunks
            .iter()
            .map(|c| (c.bytes.clone(), c.t_micros))
            .collect();
        assert!(want.len() > 2);
        let each = |reads: &RecordingReads| {
            let mut got = Vec::new();
            crate::naive::Reads::each(reads, &mut |b, t| got.push((b.to_vec(), t)));
            (got, reads.take_error())
        };
        for spool in [true, false] {
            let p = dir.path().join(name);
            std::fs::write(&p, &text).expect("write");
            let (a, reads) = over(&p)
                .analyse_lines(Spool::new().filter(|_| spool), true, |_| ())
                .expect("read line by line");
            assert!(
                a.findings
                    .iter()
                    .any(|f| f.kind == crate::findings::FindingKind::SplitUtf8)
            );
            let (got, error) = each(&reads);
            assert_eq!(got, want);
            assert!(error.is_none(), "{error:?}");
            // The document gone: the copy still has every read; read again, it fails.
            std::fs::write(&p, b"").expect("write");
            let (got, error) = each(&reads);
            if spool {
                assert_eq!(got, want);
                assert!(error.is_none(), "{error:?}");
            } else {
                assert!(got.is_empty());
                assert!(error.is_some());
            }
        }
    }

    /// A spool gives back every read as it was written, empty ones too; one cut short (or
    /// holding more than was written) is an error, never fewer reads taken for all of them.
    #[test]
    fn a_spool_gives_back_its_reads_or_an_error() {
        let reads: [(&[u8], u64); 3] = [(b"data: a\n", 0), (b"", 7), (&[0xff, b'\n'], 9)];
        let spooled = || {
            let mut spool = Spool::new().expect("a temporary file");
            for (bytes, t) in reads {
                spool.add(bytes, t).expect("written");
            }
            spool.finish().expect("finished")
        };
        let each = |s: &Spooled| {
            let mut got = Vec::new();
            s.each(&mut |b, t| got.push((b.to_vec(), t))).map(|()| got)
        };
        let s = spooled();
        let want: Vec<(Vec<u8>, u64)> = reads.iter().map(|(b, t)| (b.to_vec(), *t)).collect();
        // Twice: each pass starts from the first read.
        assert_eq!(each(&s).expect("read back"), want);
        assert_eq!(each(&s).expect("read back"), want);
        let len = s.file.metadata().expect("size").len();
        s.file.set_len(len - 1).expect("cut");
        assert!(each(&s).is_err());
        let mut s = spooled();
        s.reads += 1;
        assert!(each(&s).is_err());
    }

    /// A recording over the input limit asked for a stream it does not have says what a small
    /// one says (no such stream, the one it has); in another layout it is refused with the limit.
    #[test]
    fn a_recording_over_the_input_limit_has_no_second_stream() {
        let root = crate::repo_root();
        let p = root.join("recordings").join("seed-example.ron");
        let small = |stream| {
            let options = ReadOptions {
                stream,
                ..ReadOptions::default()
            };
            crate::probe::open(&p, options).expect("opens")
        };
        let want = small(Some(2))
            .recording(|_, _| true)
            .expect_err("no stream 2");
        assert!(matches!(want, OpenError::ChooseStream { .. }), "{want}");
        let got = over_with(&p, Some(2))
            .recording(|_, _| true)
            .expect_err("no stream 2");
        assert_eq!(got.to_string(), want.to_string());
        let got = over_with(&p, Some(2))
            .analyse(false)
            .expect_err("no stream 2");
        assert_eq!(got.to_string(), want.to_string());
        let got = over_with(&p, Some(2))
            .stream_calls(|_| ())
            .expect_err("no stream 2");
        assert_eq!(got.to_string(), want.to_string());
        // Stream 1 is the recording.
        assert!(over_with(&p, Some(1)).analyse(false).is_ok());
        // Another layout: the limit's error, as before.
        let dir = tempfile::tempdir().expect("temp dir");
        let other = dir.path().join("other.ron");
        let text = std::fs::read_to_string(&p).expect("read");
        std::fs::write(
            &other,
            text.replacen("\n    chunks: [\n", "\n    chunks: [ \n", 1),
        )
        .expect("write");
        match over_with(&other, Some(2)).recording(|_, _| true) {
            Err(OpenError::Input(InputError::InputTooLong { .. })) => {}
            got => panic!("{got:?}"),
        }
    }

    /// What the probe peeked comes first, then the rest, as one stream, read once.
    #[test]
    fn a_body_larger_than_the_head_is_read_whole_once() {
        let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n";
        let mut body = Vec::new();
        while body.len() <= 3 * input::PEEK_BYTES {
            body.extend_from_slice(event);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("big.sse");
        std::fs::write(&path, &body).expect("write");
        let p = probe(&path);
        assert_eq!(p.kind(), Kind::Body(BodyForm::Sse));
        assert_eq!(p.input().head().len(), input::PEEK_BYTES);
        let raw = p.raw_body(|_, _| true).expect("read");
        assert_eq!(raw.body, body);
        assert_eq!(raw.chunks.len(), body.len() / event.len());
    }
}
