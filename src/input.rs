//! Opening inputs: a `.ron` recording (or a recorder's journal), or a raw body such as `curl -N`
//! output (SSE or JSON lines), auto-detected. One entry point, [`open_path`], used by the CLI and
//! the app alike; [`stream_path`] for the lean streaming pass of `export`.

use std::io::Read;
use std::path::Path;

use crate::framing::{Framed, Framer};
use crate::pipeline::{Options, Outcome, Pipeline};
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
    #[error("cancelled")]
    Cancelled,
}

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
    let head = head
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(head);
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

fn io_err(path: &Path, source: std::io::Error) -> InputError {
    InputError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn check_not_dir(path: &Path) -> Result<(), InputError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(InputError::IsDirectory {
            path: path.display().to_string(),
        }),
        Ok(_) => Ok(()),
        Err(e) => Err(io_err(path, e)),
    }
}

/// Turn a raw body into a recording: one chunk per event (a raw body has no read boundaries).
pub fn raw_to_recording(body: &[u8], title: &str) -> Recording {
    let mut ends: Vec<u64> = Vec::new();
    let mut framer = Framer::new(None);
    let mut sink = |item: Framed<'_>| match item {
        Framed::Event { span, .. } | Framed::Comment { span, .. } => ends.push(span.end),
    };
    framer.feed(body, &mut sink);
    framer.finish(&mut sink);
    ends.sort_unstable();
    ends.dedup();
    let mut chunks = Vec::with_capacity(ends.len() + 1);
    let mut start = 0usize;
    for end in ends {
        let end = (end as usize).min(body.len());
        if end > start {
            chunks.push(Chunk {
                t_micros: 0,
                bytes: body[start..end].to_vec(),
            });
            start = end;
        }
    }
    if start < body.len() {
        chunks.push(Chunk {
            t_micros: 0,
            bytes: body[start..].to_vec(),
        });
    }
    Recording {
        version: recording::FORMAT_VERSION,
        meta: Meta {
            title: title.to_owned(),
            source: "raw body".into(),
            notes: vec!["Raw body: no network read boundaries or timing were recorded; shown as one chunk per event.".into()],
            timing_known: false,
            ..Default::default()
        },
        chunks,
        ..Default::default()
    }
}

/// Open any supported file as a recording. `progress` is told the fraction read (0..1) and can
/// cancel by returning `false`.
pub fn open_path(
    path: &Path,
    mut progress: impl FnMut(f32) -> bool,
) -> Result<(Recording, InputKind), InputError> {
    check_not_dir(path)?;
    let mut file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    let total = file.metadata().map(|m| m.len()).unwrap_or(0).max(1);
    let mut bytes = Vec::with_capacity(total.min(1 << 30) as usize);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n]);
        if !progress((bytes.len() as f64 / total as f64).min(1.0) as f32 * 0.5) {
            return Err(InputError::Cancelled);
        }
    }
    let kind = sniff(path, &bytes[..bytes.len().min(256)]);
    let title = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let rec = match kind {
        InputKind::Recording => Recording::from_bytes(&bytes).map_err(|e| e.with_path(path))?,
        InputKind::RawBody => raw_to_recording(&bytes, &title),
    };
    Ok((rec, kind))
}

/// The lean streaming pass over a file (export): a raw body is read in blocks and never held whole;
/// a recording is loaded and its chunks fed. The outcome holds the calls.
pub fn stream_path(path: &Path, opts: Options) -> Result<Outcome, InputError> {
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
) -> Result<Outcome, InputError> {
    check_not_dir(path)?;
    let mut file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    let mut buf = vec![0u8; 256 * 1024];
    let n = read_some(&mut file, &mut buf).map_err(|e| io_err(path, e))?;
    let lean = Options {
        detail: false,
        ..opts
    };
    if sniff(path, &buf[..n.min(256)]) == InputKind::Recording {
        drop(file);
        let (rec, _) = open_path(path, |_| true)?;
        let dialect = opts
            .dialect
            .or_else(|| crate::dialect::DialectKind::from_name(&rec.meta.dialect));
        let mut p = Pipeline::new(Options { dialect, ..lean });
        p.set_truth(rec.truth.iter().map(|t| t.arguments.clone()).collect());
        for c in &rec.chunks {
            p.feed(&c.bytes, c.t_micros);
        }
        return Ok(p.finish_each(each));
    }
    let mut p = Pipeline::new(lean);
    p.feed(&buf[..n], 0);
    loop {
        let n = read_some(&mut file, &mut buf).map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        p.feed(&buf[..n], 0);
    }
    Ok(p.finish_each(each))
}

fn read_some(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
