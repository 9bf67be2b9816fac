//! A folder of captures as a data set: each stream of each file analysed completely, then turned
//! into rows of three tables ([`Table::Streams`], [`Table::Calls`], [`Table::Findings`]: the one
//! schema in [`schema`]) and counted into a [`Summary`]. `sse-replay scan` runs [`scan_file`] on
//! many files at once and writes the rows (Parquet, JSON lines, CSV); the app's Corpus tab shows
//! them.
//!
//! A file is opened by the one opener ([`crate::open`]) and analysed by the one analysis
//! ([`Analysis`]), as `check` does: the rows say what `check` would say about each stream. The
//! analysis of a stream is dropped once its rows are made, so memory depends on the largest
//! stream, never on the number of files. A file that cannot be read is one row with its error,
//! never a stop.

mod rows;
pub mod schema;
mod summary;

use std::hash::Hasher as _;
use std::path::{Path, PathBuf};

use crate::analysis::{Analysis, Feed, SourceInfo, SourceKind};
use crate::input;
use crate::limits::{EventLimit, InputLimit};
use crate::naive::StrategyFeed;
use crate::open::{self, Opened};
use crate::pipeline::Options;
use crate::probe::{BodyForm, Kind as InputKind, ReadOptions};
use crate::recording::Recording;

pub use rows::{
    CallRow, FindingRow, RowVerdict, StreamContext, StreamRow, StreamRows, TokenUsage,
    model_in_event, normalised_finish_reason, request_host_model, response_in_event, stream_key,
};
pub use schema::{AnyRow, Column, Kind, Row, SCHEMA_VERSION, Table, Value, strategy_column};
pub use summary::{GroupKey, GroupStats, Summary, quantile_disc};

/// The model is looked for in this many events at the start of a stream whose request did not
/// name one (providers send it in the first event, or the first few).
const MODEL_EVENTS: usize = 8;

/// File extensions `scan` picks up when it walks a folder (files named explicitly are always
/// scanned): recordings and journals, raw bodies (binary AWS event streams among them), complete
/// responses and captures.
pub const EXTENSIONS: &[&str] = &[
    "ron",
    "partial",
    "sse",
    "eventstream",
    "txt",
    "ndjson",
    "jsonl",
    "json",
    "har",
    "yaml",
    "yml",
];

/// Extensions that say a file is a stream body whatever it holds: such a file found in a folder
/// is a (perhaps broken) stream even when nothing in it is recognised, never "not a capture".
/// The name breaks the tie only here, as it does in [`crate::content::decide`].
const STREAM_EXTENSIONS: &[&str] = &["sse", "eventstream"];

fn has_extension(path: &Path, list: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| list.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// Whether a file found in a folder is one `scan` reads (by its extension, any case).
pub fn is_scanned_name(path: &Path) -> bool {
    has_extension(path, EXTENSIONS)
}

/// What [`walk`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// A file to scan.
    File(PathBuf),
    /// A path that could not be read or listed, and why (one line).
    Failed { path: PathBuf, error: String },
    /// An entry of a folder that is not scanned, and why.
    Skipped { path: PathBuf, why: Skip },
}

/// Why [`walk`] skipped an entry of a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A regular file without a scanned extension ([`is_scanned_name`]): counted, not read.
    Name,
    /// Not a regular file (a FIFO, a device, a socket, a link to a folder or to nothing): never
    /// opened, since reading it could block or never end. The text says what it is.
    NotRegular(&'static str),
}

impl Skip {
    /// The reason, on one line (a `skipped` row's `error`).
    pub fn reason(&self) -> String {
        match self {
            Skip::Name => "not a capture's extension".into(),
            Skip::NotRegular(what) => format!("not a regular file: {what}"),
        }
    }
}

/// What a folder entry is, when it is not a regular file (links followed, as `walk` follows
/// them to files).
fn not_regular(path: &Path, meta: &std::fs::Metadata) -> Option<&'static str> {
    if meta.file_type().is_symlink() {
        return match std::fs::metadata(path) {
            Err(_) => Some("a link to nothing"),
            Ok(m) if m.is_dir() => Some("a link to a folder (not followed)"),
            Ok(m) if m.is_file() => None,
            Ok(m) => Some(special_kind(&m)),
        };
    }
    (!meta.is_file()).then(|| special_kind(meta))
}

#[cfg(unix)]
fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::Metadata) -> &'static str {
    "a special file"
}

/// Hand `each` the files to scan under `path`: the file itself, or every file under a folder
/// (recursively, in name order) with a scanned extension ([`is_scanned_name`]), hidden entries
/// (`.name`) skipped without a word, links followed to files but never to folders (no cycles).
/// Every other entry of a folder is handed out once as [`Found::Skipped`]: a file with another
/// extension, and what is not a regular file (a FIFO, a device, a socket, a link to one, to a
/// folder or to nothing), which is never opened. `named`: the path was named by the user:
/// scanned whatever it is (a FIFO or a device is read within the input limit), and a missing
/// one is reported. Stops, returning `false`, when `each` does. `scan` and the app's Corpus tab
/// list files here.
pub fn walk(path: &Path, named: bool, each: &mut dyn FnMut(Found) -> bool) -> bool {
    let meta = if named {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) => {
            let error = format!("cannot read {}: {e}", path.display());
            return each(Found::Failed {
                path: path.to_path_buf(),
                error,
            });
        }
    };
    if meta.is_dir() {
        let entries = match std::fs::read_dir(path) {
            Ok(d) => d,
            Err(e) => {
                let error = format!("cannot list {}: {e}", path.display());
                return each(Found::Failed {
                    path: path.to_path_buf(),
                    error,
                });
            }
        };
        let mut children: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect();
        children.sort();
        return children.iter().all(|child| walk(child, false, each));
    }
    if !named {
        let skip = match not_regular(path, &meta) {
            Some(what) => Some(Skip::NotRegular(what)),
            None => (!is_scanned_name(path)).then_some(Skip::Name),
        };
        if let Some(why) = skip {
            return each(Found::Skipped {
                path: path.to_path_buf(),
                why,
            });
        }
    }
    each(Found::File(path.to_path_buf()))
}

/// How files are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// The longest line or event accepted (as `check --max-event-bytes`).
    pub max_event_bytes: EventLimit,
    /// The most bytes read from what grows without end (as `check --max-input-bytes`): a FIFO, a
    /// device or an endless stream named on the command line ends there, as one unreadable row;
    /// a regular file analysed as it is read is read to its end unless [`InputLimit::files`].
    pub input_limit: InputLimit,
    /// A body in which nothing was recognised (a licence note, a JSON file that is not a
    /// response, an empty file) is a [`RowVerdict::Skipped`] row ("not a capture") rather than a
    /// stream that is not OK, unless its extension says it is a stream (`.sse`,
    /// `.eventstream`). `scan` sets it for files found in a folder, not for files named.
    pub skip_non_captures: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            max_event_bytes: EventLimit::DEFAULT,
            input_limit: InputLimit::DEFAULT,
            skip_non_captures: true,
        }
    }
}

impl ScanOptions {
    /// The probe's read options for these.
    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            max_event_bytes: self.max_event_bytes,
            input_limit: self.input_limit,
            ..ReadOptions::default()
        }
    }
}

/// XXH64 of a body fed in pieces (the same whatever the pieces), as the `content_hash` column
/// writes it.
#[derive(Default)]
struct BodyHash(twox_hash::XxHash64);

impl BodyHash {
    fn add(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    fn hex(&self) -> String {
        format!("{:016x}", self.0.finish())
    }
}

/// The model and the response id named by the first [`MODEL_EVENTS`] events of a stream (each
/// the first one found), and the token usage of all its events.
#[derive(Default)]
struct ModelProbe {
    seen: usize,
    model: Option<String>,
    response_id: Option<String>,
    /// Token usage, from every event that carries it.
    usage: rows::TokenUsage,
}

impl ModelProbe {
    fn event(&mut self, bytes: &[u8]) {
        self.usage.event(bytes);
        if (self.model.is_none() || self.response_id.is_none()) && self.seen < MODEL_EVENTS {
            self.seen += 1;
            let (model, id) = rows::response_in_event(bytes);
            self.model = self.model.take().or(model);
            self.response_id = self.response_id.take().or(id);
        }
    }
}

/// Analyse every stream of the file at `path` and hand each stream's rows to `emit`, naming the
/// file `name` (`source_file`). A file that cannot be read is handed out as one
/// [`StreamRow::unreadable`] row. Returns the number of rows of the `streams` table handed out.
pub fn scan_file(
    path: &Path,
    name: &str,
    options: &ScanOptions,
    mut emit: impl FnMut(StreamRows),
) -> usize {
    let probe = match crate::probe::open(path, options.read_options()) {
        Ok(p) => p,
        Err(e) => {
            emit(unreadable(name, &e));
            return 1;
        }
    };
    // Only a body can be "not a capture": recordings, journals and captures are what they say.
    let may_skip = options.skip_non_captures
        && matches!(probe.kind(), InputKind::Body(_))
        && !has_extension(path, STREAM_EXTENSIONS);
    // A raw stream body is analysed as it is read, without keeping it (as `check` reads one); a
    // complete JSON document is kept whole, and recordings and captures are opened.
    if let InputKind::Body(form) = probe.kind()
        && form != BodyForm::Document
    {
        emit(match scan_raw_body(probe, name, options, may_skip) {
            Ok(rows) => rows,
            Err(e) => unreadable(name, &e),
        });
        return 1;
    }
    // A recording too large to hold whole is read line by line, as `check` reads it.
    if probe.reads_recording_lines() {
        emit(match scan_recording_lines(probe, name, may_skip) {
            Ok(rows) => rows,
            Err(e) => unreadable(name, &e),
        });
        return 1;
    }
    match probe.recordings(|_, _| true) {
        Err(e) => {
            emit(unreadable(name, &e));
            1
        }
        Ok(Opened::One { recording, kind }) => {
            emit(analyse(*recording, kind, name, 1, options, may_skip));
            1
        }
        Ok(Opened::Several { recordings }) => {
            let n = recordings.len();
            for (i, recording) in recordings.into_iter().enumerate() {
                let kind = open::imported_kind(&recording);
                emit(analyse(recording, kind, name, i as u32 + 1, options, false));
            }
            n
        }
    }
}

fn unreadable(name: &str, e: &dyn std::fmt::Display) -> StreamRows {
    // The first line: a capture with several streams lists them on the lines after it.
    let text = e.to_string();
    StreamRows {
        stream: StreamRow::unreadable(name, text.lines().next().unwrap_or_default()),
        calls: Vec::new(),
        findings: Vec::new(),
    }
}

/// One recording (or one stream of a capture), analysed as `check` analyses it.
fn analyse(
    rec: Recording,
    kind: SourceKind,
    name: &str,
    stream: u32,
    options: &ScanOptions,
    may_skip: bool,
) -> StreamRows {
    let mut hash = BodyHash::default();
    let mut probe = ModelProbe::default();
    let source = SourceInfo {
        name: name.to_owned(),
        timing_known: kind.may_have_timing() && rec.meta.timing_known,
        kind,
    };
    let opts = Options {
        dialect: None,
        framing: None,
        detail: true,
    };
    // As `Analysis::from_recording_owned`, with the strategies on this thread: `scan` runs an
    // analysis per core already. Each chunk is freed once fed (the body is held once).
    let mut rec = rec;
    let chunks = std::mem::take(&mut rec.chunks);
    let body_len = chunks.iter().map(|c| c.bytes.len() as u64).sum();
    let mut feed = Feed::new_inline(&rec, opts, options.max_event_bytes).keep_body(body_len);
    for c in chunks {
        if feed.overflow().is_some() {
            break;
        }
        hash.add(&c.bytes);
        feed.feed(&c.bytes, c.t_micros);
    }
    let analysis = feed.finish(&rec, source);
    for e in &analysis.events {
        probe.event(analysis.bytes(&e.span));
    }
    rows_of(&analysis, name, stream, &hash, probe, may_skip)
}

/// A recording too large to hold whole, analysed as `check` reads it
/// ([`crate::probe::Probe::analyse_recording_lines`]): its body not kept, its events' bytes (the
/// model, the response id and the token usage are read from them) read again from the file.
fn scan_recording_lines(
    probe: crate::probe::Probe,
    name: &str,
    may_skip: bool,
) -> Result<StreamRows, open::OpenError> {
    let mut hash = BodyHash::default();
    let (mut analysis, reads) = probe.analyse_recording_lines(|bytes| hash.add(bytes))?;
    analysis.source.name = name.to_owned();
    let mut model = ModelProbe::default();
    each_event(&reads, &analysis.events, |bytes| model.event(bytes));
    if let Some(e) = reads.take_error() {
        return Err(e.into());
    }
    Ok(rows_of(&analysis, name, 1, &hash, model, may_skip))
}

/// Each event's bytes, from the reads of a body that was not kept: `events` in body order, each
/// given the bytes [`Analysis::bytes`] would give of its span.
fn each_event(
    reads: &dyn crate::naive::Reads,
    events: &[crate::pipeline::EventRecord],
    mut f: impl FnMut(&[u8]),
) {
    let mut next = events.iter().peekable();
    let mut held = Vec::new();
    let mut offset = 0u64;
    reads.each(&mut |bytes, _| {
        let end = offset + bytes.len() as u64;
        while let Some(e) = next.peek() {
            let (from, to) = (e.span.start.max(offset), e.span.end.min(end));
            if from < to {
                held.extend_from_slice(&bytes[(from - offset) as usize..(to - offset) as usize]);
            }
            if e.span.end > end {
                break;
            }
            f(&held);
            held.clear();
            next.next();
        }
        offset = end;
    });
    // Spans past the body's end: what of them there was.
    for _ in next {
        f(&held);
        held.clear();
    }
}

/// A raw stream body, analysed as it is read without keeping the body (as `check` reads one).
fn scan_raw_body(
    probe: crate::probe::Probe,
    name: &str,
    options: &ScanOptions,
    may_skip: bool,
) -> Result<StreamRows, input::InputError> {
    let opts = Options {
        dialect: None,
        framing: None,
        detail: true,
    };
    // The recording's metadata is only known at the end (it names the file). The feed starts
    // with the first event.
    let empty = Recording::default();
    // As `check` reads a raw body: no record per event, chunk or fragment, and of the naive
    // strategies' attempts only what the rows need, so memory does not grow with the events.
    let start = || {
        Feed::observed(
            &empty,
            opts,
            options.max_event_bytes,
            StrategyFeed::inline_counting(),
        )
        .counts_only()
    };
    let mut feed = None;
    let mut hash = BodyHash::default();
    let mut model = ModelProbe::default();
    // A line or event over the limit is an error here as in `check` (its one line, exit 1).
    let rec = input::read_events(
        probe.into_input(),
        options.max_event_bytes,
        input::EventRows::None,
        |_, _| true,
        |event| {
            hash.add(event);
            model.event(event);
            feed.get_or_insert_with(start).feed(event, 0);
        },
    )?;
    let source = SourceInfo {
        name: name.to_owned(),
        timing_known: false,
        kind: SourceKind::RawBody,
    };
    let analysis = feed.unwrap_or_else(start).finish(&rec, source);
    Ok(rows_of(&analysis, name, 1, &hash, model, may_skip))
}

/// Why an analysed body is not a capture at all: nothing in it was recognised (no event of any
/// dialect, not a complete response, no call), as the verdict's `nothing-recognised` says, with
/// its description of what the bytes look like.
fn not_a_capture(a: &Analysis) -> Option<String> {
    if a.reported_dialect().is_some() || a.complete || a.client_calls().next().is_some() {
        return None;
    }
    let f = a
        .findings
        .iter()
        .find(|f| f.kind == crate::findings::FindingKind::NothingRecognised)?;
    Some(format!("not a capture: {}", f.message))
}

fn rows_of(
    analysis: &Analysis,
    name: &str,
    stream: u32,
    hash: &BodyHash,
    probe: ModelProbe,
    may_skip: bool,
) -> StreamRows {
    if let Some(why) = may_skip.then(|| not_a_capture(analysis)).flatten() {
        return StreamRows {
            stream: StreamRow::skipped(name, &why),
            calls: Vec::new(),
            findings: Vec::new(),
        };
    }
    let ctx = StreamContext {
        source_file: name.to_owned(),
        stream,
        content_hash: hash.hex(),
        stream_model: probe.model,
        response_id: probe.response_id,
        usage: probe.usage,
    };
    StreamRows::from_analysis(analysis, &ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw body is analysed as it is read (its body not kept); the rows are those of the
    /// ordinary open-then-analyse path, for every raw body of the test data and odd ones.
    #[test]
    fn a_raw_body_read_as_it_comes_gives_the_ordinary_rows() {
        let root = crate::repo_root();
        let dir = tempfile::tempdir().expect("temp dir");
        let odd = dir.path().join("odd.sse");
        std::fs::write(
            &odd,
            ": hi\r\ndata: {\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\":3\"}}]}}]}\r\n\r\ndata: {\"choices\"",
        )
        .expect("write");
        let empty = dir.path().join("empty.sse");
        std::fs::write(&empty, "").expect("write");
        let mut paths = vec![odd, empty];
        for e in std::fs::read_dir(root.join("tests/data/fixtures"))
            .into_iter()
            .flatten()
            .flatten()
        {
            paths.push(e.path());
        }
        let options = ScanOptions::default();
        let mut compared = 0;
        for p in &paths {
            let name = p.display().to_string();
            let probe = crate::probe::open(p, ReadOptions::default()).expect("opens");
            if !matches!(probe.kind(), InputKind::Body(f) if f != BodyForm::Document) {
                continue;
            }
            let Ok(streamed) = scan_raw_body(probe, &name, &options, false) else {
                continue;
            };
            let opened = crate::probe::open(p, ReadOptions::default())
                .expect("opens")
                .recordings(|_, _| true)
                .expect("opens");
            let (rec, kind) = match opened {
                Opened::One { recording, kind } => (*recording, kind),
                Opened::Several { .. } => panic!("{name}: one stream"),
            };
            assert_eq!(
                streamed,
                analyse(rec, kind, &name, 1, &options, false),
                "{name}"
            );
            compared += 1;
        }
        assert!(compared >= 7, "{compared} raw bodies compared");
    }

    /// Every bundled recording scanned over an input limit below its size (read line by line,
    /// as `check` reads it) gives the rows it gives held whole.
    #[test]
    fn a_recording_over_the_input_limit_gives_the_rows_held_whole() {
        let root = crate::repo_root();
        let mut compared = 0;
        for e in std::fs::read_dir(root.join("recordings")).expect("recordings") {
            let p = e.expect("entry").path();
            if p.extension().is_none_or(|x| x != "ron") {
                continue;
            }
            let size = std::fs::metadata(&p).expect("size").len();
            let over = ScanOptions {
                input_limit: InputLimit {
                    bytes: size - 1,
                    files: false,
                },
                ..ScanOptions::default()
            };
            let probe = crate::probe::open(&p, over.read_options()).expect("opens");
            assert!(probe.reads_recording_lines(), "{}", p.display());
            let rows = |options: &ScanOptions| {
                let mut rows = Vec::new();
                scan_file(&p, "r.ron", options, |r| rows.push(r));
                rows
            };
            let want = rows(&ScanOptions::default());
            assert!(want[0].stream.error.is_none(), "{}", p.display());
            assert_eq!(rows(&over), want, "{}", p.display());
            compared += 1;
        }
        assert!(compared >= 60, "{compared} recordings compared");
    }

    #[test]
    fn every_file_is_rows_even_a_missing_one() {
        let root = crate::repo_root();
        let mut rows = Vec::new();
        let n = scan_file(
            &root.join("tests/data/import/two-streams.har"),
            "two.har",
            &ScanOptions::default(),
            |r| rows.push(r),
        );
        assert_eq!(n, 2);
        assert_eq!(
            rows.iter().map(|r| r.stream.stream).collect::<Vec<_>>(),
            [1, 2]
        );
        assert!(
            rows.iter()
                .all(|r| r.stream.source_kind.as_deref() == Some("har import"))
        );
        let mut missing = Vec::new();
        scan_file(
            Path::new("/no/such/file.ron"),
            "gone.ron",
            &ScanOptions::default(),
            |r| missing.push(r),
        );
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].stream.verdict, RowVerdict::Unreadable);
        assert!(
            missing[0]
                .stream
                .error
                .as_deref()
                .is_some_and(|e| e.contains("/no/such/file.ron")),
            "{:?}",
            missing[0].stream.error
        );
    }
}
