//! The one opener: how a file becomes a recording, for the CLI (`check`, `export`, `events`) and
//! the app alike. A `.ron` recording or journal and a raw body (SSE or JSON lines) are read by
//! [`crate::input`]; a capture (HAR, VCR cassette, `.jsonl`/`.ndjson` fixture), recognised by its
//! content, is imported by [`crate::import`]. A capture can hold several streams: the caller picks
//! one ([`open_stream`] takes its number; the app lets the user choose).
//!
//! This sits above both `input` and `import` (the importer reads through `input`), so neither
//! depends on the other in both directions.

use std::path::Path;

use crate::analysis::{Analysis, Feed, SourceInfo, SourceKind};
use crate::dialect::DialectKind;
use crate::import::{self, ImportError, ImportFormat};
use crate::input::{self, InputError, InputKind, ReadLimits};
use crate::pipeline::{Options, PipelineOutput};
use crate::recording::Recording;

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

/// How to open a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenOptions {
    /// The longest line or event accepted (`--max-event-bytes`).
    pub max_event_bytes: u64,
    /// The most bytes read from the file (`--max-input-bytes`); unbounded by default.
    pub max_input_bytes: u64,
    /// File → Import…: the file must be a capture (a recording still opens as one); errors say
    /// why it is not. Otherwise a capture is recognised by its content.
    pub import_only: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            max_event_bytes: input::DEFAULT_MAX_EVENT_BYTES,
            max_input_bytes: u64::MAX,
            import_only: false,
        }
    }
}

impl OpenOptions {
    /// Both limits as the readers take them.
    pub fn read_limits(&self) -> ReadLimits {
        ReadLimits {
            max_event_bytes: self.max_event_bytes,
            max_input_bytes: self.max_input_bytes,
        }
    }

    /// The default options within `limits`.
    pub fn within(limits: ReadLimits) -> Self {
        Self {
            max_event_bytes: limits.max_event_bytes,
            max_input_bytes: limits.max_input_bytes,
            ..Self::default()
        }
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

/// The capture format of a regular file that is neither a recording nor a plain stream body,
/// judged from its first 64 KiB (the importer reads it all afterwards). JSON lines only by
/// extension: a raw Ollama body is JSON lines too and opens as a body. Standard input, pipes and
/// devices are never captures here: their head cannot be read twice.
pub fn capture_format(path: &Path) -> Option<ImportFormat> {
    use std::io::Read as _;
    if input::is_stdin(path) || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut head = Vec::with_capacity(64 * 1024);
    let file = input::open_input(path, u64::MAX).ok()?.reader;
    file.take(64 * 1024).read_to_end(&mut head).ok()?;
    if input::sniff(path, &head) == InputKind::Recording {
        return None;
    }
    let by_ext = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson"));
    match import::detect(path, &head) {
        Ok(f @ (ImportFormat::Har | ImportFormat::Cassette)) => Some(f),
        Ok(ImportFormat::JsonLines) if by_ext => Some(ImportFormat::JsonLines),
        _ => None,
    }
}

/// The kind of a recording read by [`crate::input`].
fn input_kind(kind: InputKind, rec: &Recording) -> SourceKind {
    match kind {
        InputKind::Recording if rec.meta.interrupted => SourceKind::Journal,
        InputKind::Recording => SourceKind::Recording,
        InputKind::RawBody => SourceKind::RawBody,
    }
}

/// The kind of one imported stream (`meta.source` is `import:<format>`).
fn imported_kind(rec: &Recording) -> SourceKind {
    SourceKind::Imported {
        format: rec
            .meta
            .source
            .strip_prefix("import:")
            .unwrap_or_default()
            .to_owned(),
    }
}

/// Open any supported file (`-` is standard input). `progress` is told the fraction read (0..1,
/// reading is the first half of a load) and cancels by returning `false`
/// ([`OpenError::Cancelled`]).
pub fn open(
    path: &Path,
    options: OpenOptions,
    progress: impl FnMut(f32) -> bool,
) -> Result<Opened, OpenError> {
    open_counted(path, options, progress).map(|(opened, _)| opened)
}

/// [`open`], with how many streams the file holds past those read (the import's stream limit).
fn open_counted(
    path: &Path,
    options: OpenOptions,
    mut progress: impl FnMut(f32) -> bool,
) -> Result<(Opened, usize), OpenError> {
    let capture = if options.import_only {
        true
    } else {
        capture_format(path).is_some()
    };
    if !capture {
        let (recording, kind) =
            input::open_path_limited(path, options.read_limits(), &mut progress).map_err(|e| {
                match e {
                    InputError::Cancelled => OpenError::Cancelled,
                    e => OpenError::Input(e),
                }
            })?;
        // Read: the first half of a load (a small file never reached a progress report).
        if !progress(0.5) {
            return Err(OpenError::Cancelled);
        }
        let kind = input_kind(kind, &recording);
        return Ok((
            Opened::One {
                recording: Box::new(recording),
                kind,
            },
            0,
        ));
    }
    let limits = import::ImportLimits {
        max_event_bytes: options.max_event_bytes,
        max_input_bytes: options.max_input_bytes,
        ..Default::default()
    };
    let (mut recordings, skipped) = match import::import_path_with(path, &limits, false) {
        Err(ImportError::AlreadyRecording { .. }) => {
            // Read as any recording is, within the same limits.
            let (recording, _) = input::open_path_limited(path, options.read_limits(), |_| true)?;
            let kind = input_kind(InputKind::Recording, &recording);
            return Ok((
                Opened::One {
                    recording: Box::new(recording),
                    kind,
                },
                0,
            ));
        }
        Err(e) => return Err(e.into()),
        Ok(imported) => (imported.recordings, imported.skipped_streams),
    };
    if !progress(0.5) {
        return Err(OpenError::Cancelled);
    }
    match recordings.pop() {
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
            path: path.to_owned(),
            why: "nothing found".into(),
        }
        .into()),
    }
}

/// [`open`] down to one recording: stream `stream` (1-based) of a capture with several, or
/// [`OpenError::ChooseStream`] naming them when none (or no such stream) was given. A file with
/// one stream opens whatever `stream` says, except a number other than 1.
pub fn open_stream(
    path: &Path,
    stream: Option<usize>,
    options: OpenOptions,
    progress: impl FnMut(f32) -> bool,
) -> Result<(Recording, SourceKind), OpenError> {
    let choose = |titles: Vec<String>, skipped: usize| OpenError::ChooseStream {
        path: input::display_name(path),
        asked: stream,
        total: titles.len() + skipped,
        titles,
    };
    let (opened, skipped) = open_counted(path, options, progress)?;
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

/// Open and analyse a file, as `check` and `events` do: stream `stream` of a capture (see
/// [`open_stream`]), the dialect forced when `dialect` is set, reading stopped at the first line
/// or event longer than `limits.max_event_bytes` ([`InputError::EventTooLarge`]) or at
/// `limits.max_input_bytes` ([`InputError::InputTooLong`]).
pub fn analyse(
    path: &Path,
    dialect: Option<DialectKind>,
    stream: Option<usize>,
    limits: ReadLimits,
) -> Result<Analysis, OpenError> {
    let max_event_bytes = limits.max_event_bytes;
    let options = OpenOptions::within(limits);
    let (rec, kind) = open_stream(path, stream, options, |_| true)?;
    let source = SourceInfo {
        name: input::display_name(path),
        timing_known: kind.may_have_timing() && rec.meta.timing_known,
        kind,
    };
    let analysis = Analysis::from_recording_owned(
        rec,
        source,
        Options {
            dialect,
            framing: None,
            detail: true,
        },
        max_event_bytes,
    );
    match analysis.overflow {
        Some(overflow) => Err(InputError::EventTooLarge {
            path: input::display_name(path),
            overflow,
        }
        .into()),
        None => Ok(analysis),
    }
}

/// [`analyse`] for a report (`check`), with the previews computed when `previews`
/// ([`Analysis::compute_previews`]): a raw stream body in a regular file is analysed as it is
/// read, one event at a time, and the body is not kept ([`Analysis::body`] is empty; its length
/// is [`Analysis::body_len`]), so memory does not grow with a second copy of a large stream. Any
/// other input is opened as [`analyse`] opens it. The report is the same either way.
pub fn analyse_for_report(
    path: &Path,
    dialect: Option<DialectKind>,
    stream: Option<usize>,
    limits: ReadLimits,
    previews: bool,
) -> Result<Analysis, OpenError> {
    let max_event_bytes = limits.max_event_bytes;
    let ordinary = || {
        let mut a = analyse(path, dialect, stream, limits)?;
        if previews {
            a.compute_previews();
        }
        Ok(a)
    };
    if stream.is_some_and(|k| k != 1) || capture_format(path).is_some() {
        return ordinary();
    }
    let opts = Options {
        dialect,
        framing: None,
        detail: true,
    };
    // The recording's metadata is only known at the end (it names the file): a raw body's is
    // empty until then.
    let empty = Recording::default();
    let mut feed = Feed::new(&empty, opts, max_event_bytes, None);
    let Some(rec) = input::each_raw_event(path, limits, |event| feed.feed(event, 0))? else {
        drop(feed);
        return ordinary();
    };
    let source = SourceInfo {
        name: input::display_name(path),
        timing_known: false,
        kind: SourceKind::RawBody,
    };
    let mut analysis = feed.finish(&rec, source);
    if let Some(overflow) = analysis.overflow {
        return Err(InputError::EventTooLarge {
            path: input::display_name(path),
            overflow,
        }
        .into());
    }
    if previews {
        analysis.compute_previews();
    }
    Ok(analysis)
}

/// [`analyse`] with the default event limit and no stream choice (benches and tests).
pub fn analyse_path(path: &Path, dialect: Option<DialectKind>) -> Result<Analysis, OpenError> {
    analyse(path, dialect, None, ReadLimits::default())
}

/// The lean streaming pass of `export`: a raw body is read in blocks and never held whole
/// ([`input::stream_path_each_limited`]); a capture is imported and stream `stream` fed. Each
/// parsed call goes to `each` in stream order.
pub fn stream_each(
    path: &Path,
    stream: Option<usize>,
    opts: Options,
    limits: ReadLimits,
    each: impl FnMut(crate::accumulate::Call),
) -> Result<PipelineOutput, OpenError> {
    let options = OpenOptions::within(limits);
    if capture_format(path).is_none() {
        if stream.is_some_and(|k| k != 1) {
            // Not a capture: one stream only; say so the way a capture would.
            open_stream(path, stream, options, |_| true)?;
        }
        return Ok(input::stream_path_each_limited(path, opts, limits, each)?);
    }
    let (rec, _) = open_stream(path, stream, options, |_| true)?;
    input::stream_recording_each(&rec, opts, limits.max_event_bytes, each).map_err(|overflow| {
        InputError::EventTooLarge {
            path: input::display_name(path),
            overflow,
        }
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file `check` may meet (bundled recordings, raw-body fixtures, captures, a raw body
    /// cut into odd pieces): the streamed analysis `check` uses gives the same report and JSON as
    /// the ordinary one, previews and all.
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
        let mut paths = vec![odd];
        for d in ["recordings", "tests/data/fixtures", "tests/data/import"] {
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
            for previews in [false, true] {
                let Ok(mut want) = analyse_path(p, None) else {
                    continue;
                };
                if previews {
                    want.compute_previews();
                }
                let got = analyse_for_report(p, None, None, ReadLimits::default(), previews)
                    .expect("opens as it did");
                assert_eq!(
                    crate::report::check_text(&got),
                    crate::report::check_text(&want),
                    "{}",
                    p.display()
                );
                assert_eq!(
                    crate::export::check_json(&got),
                    crate::export::check_json(&want),
                    "{}",
                    p.display()
                );
                compared += 1;
            }
        }
        assert!(compared > 40, "{compared} reports compared");
    }
}
