//! Why a recording could not be loaded or saved.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a recording could not be loaded or saved. Messages name the position first and the file last.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// Reading, writing, renaming or removing a file failed.
    #[error("I/O error while {op}: {source} in {}", .path.display())]
    Io {
        /// What was being done: "reading", "writing", "renaming to the final name", ...
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The RON parser (or a type check during deserialization) failed at this position.
    #[error("RON syntax error at line {line}, column {col}: {message}{}", InPath(.path))]
    Syntax {
        path: Option<PathBuf>,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        col: usize,
        message: String,
    },
    /// The file was written by a newer build.
    #[error(
        "recording format version {found} is newer than this build supports ({supported}){}",
        InPath(.path)
    )]
    FutureVersion {
        path: Option<PathBuf>,
        found: u64,
        supported: u64,
    },
    /// The document parsed but has no `version` field.
    #[error("not an sse-replay recording (no version field){}", InPath(.path))]
    MissingVersion { path: Option<PathBuf> },
    /// `version: 0` (versions start at 1).
    #[error("invalid recording format version {found} (versions start at 1){}", InPath(.path))]
    InvalidVersion { path: Option<PathBuf>, found: u64 },
    /// The file is not UTF-8 text.
    #[error("file is not valid UTF-8 text at byte offset {offset} (line {line}){}", InPath(.path))]
    InvalidUtf8 {
        path: Option<PathBuf>,
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// 1-based line of that byte.
        line: usize,
    },
    /// A chunk's `hex`/`lead`/`trail` could not be decoded.
    #[error("invalid chunks[{index}] (t_us: {t_micros}): {message}{}", InPath(.path))]
    BadChunk {
        path: Option<PathBuf>,
        /// 0-based index in `chunks`.
        index: usize,
        t_micros: u64,
        message: String,
    },
    /// A journal is structurally wrong (not a parse error): e.g. chunks before the head record.
    #[error("invalid recorder journal at line {line}: {message}{}", InPath(.path))]
    BadJournal {
        path: Option<PathBuf>,
        line: usize,
        message: String,
    },
    /// The output exists and overwriting it was not asked for (`--force`).
    #[error("refusing to overwrite an existing file (use --force): {}", .path.display())]
    Exists { path: PathBuf },
    /// [`JournalWriter::create`](super::JournalWriter::create) found the journal of an earlier, interrupted recording in the way.
    #[error(
        "a journal of an interrupted recording already exists (load it to salvage its chunks, or delete it) in {}",
        .path.display()
    )]
    JournalExists { path: PathBuf },
    /// The output is a FIFO nobody is reading (yet): opened without waiting, so the caller can
    /// wait for a reader in a way a stop signal can end.
    #[error("no process is reading the FIFO (start its reader first): {}", .path.display())]
    NoReader { path: PathBuf },
    /// The output looked like a device or a FIFO by name, and the descriptor opened is something
    /// else (a file swapped in meanwhile): not written.
    #[error("not a device or FIFO once opened (refusing to write into it): {}", .path.display())]
    NotSpecial { path: PathBuf },
    /// RON serialization failed (not expected to happen for these types).
    #[error("cannot serialize the recording to RON: {message}{}", InPath(.path))]
    Serialize {
        path: Option<PathBuf>,
        message: String,
    },
}

/// Displays ` in <path>` when there is a path.
pub(super) struct InPath<'a>(&'a Option<PathBuf>);

impl fmt::Display for InPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, " in {}", path.display()),
            None => Ok(()),
        }
    }
}

impl RecordingError {
    /// The file the error is about, if known.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Io { path, .. }
            | Self::JournalExists { path }
            | Self::Exists { path }
            | Self::NoReader { path }
            | Self::NotSpecial { path } => Some(path),
            Self::Syntax { path, .. }
            | Self::FutureVersion { path, .. }
            | Self::MissingVersion { path }
            | Self::InvalidVersion { path, .. }
            | Self::InvalidUtf8 { path, .. }
            | Self::BadChunk { path, .. }
            | Self::BadJournal { path, .. }
            | Self::Serialize { path, .. } => path.as_deref(),
        }
    }

    /// Attaches `path` to an error that came from parsing text (keeps an existing path).
    #[must_use]
    pub fn with_path(mut self, new_path: &Path) -> Self {
        match &mut self {
            Self::Io { .. }
            | Self::JournalExists { .. }
            | Self::Exists { .. }
            | Self::NoReader { .. }
            | Self::NotSpecial { .. } => {}
            Self::Syntax { path, .. }
            | Self::FutureVersion { path, .. }
            | Self::MissingVersion { path }
            | Self::InvalidVersion { path, .. }
            | Self::InvalidUtf8 { path, .. }
            | Self::BadChunk { path, .. }
            | Self::BadJournal { path, .. }
            | Self::Serialize { path, .. } => {
                if path.is_none() {
                    *path = Some(new_path.to_path_buf());
                }
            }
        }
        self
    }

    pub(super) fn io(op: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }

    /// `text` is what was parsed; `line_offset` is added to the reported line (journal records).
    pub(super) fn syntax(text: &str, err: &ron::error::SpannedError, line_offset: usize) -> Self {
        let pos = error_position(text, &err.span);
        Self::Syntax {
            path: None,
            line: pos.line + line_offset,
            col: pos.col,
            message: ron_message(&err.code),
        }
    }

    pub(super) fn serialize(err: &ron::Error) -> Self {
        Self::Serialize {
            path: None,
            message: ron_message(err),
        }
    }
}

/// A `ron` error as a person reading about their file should see it: the parser's own words,
/// except where they are advice to the program's developer (its recursion limit's message tells
/// the reader to raise `ron::Options::recursion_limit` and use `serde_stacker`).
pub(super) fn ron_message(err: &ron::Error) -> String {
    match err {
        ron::Error::ExceededRecursionLimit => format!(
            "brackets nested more than {} levels deep (a recording nests about 6); not read any further",
            super::RECURSION_LIMIT
        ),
        other => other.to_string(),
    }
}

/// Where to point for a `ron` error. Its span runs from the parser's cursor before the failing
/// token, often still before whitespace, to after it; the start with that whitespace skipped is the
/// token (`title: 5` → the `5`, `garbage` → the `g`).
pub(super) fn error_position(text: &str, span: &ron::error::Span) -> ron::error::Position {
    let (start, end) = (span.start, span.end);
    let line_start = if start.line <= 1 {
        Some(0)
    } else {
        text.match_indices('\n')
            .nth(start.line - 2)
            .map(|(i, _)| i + 1)
    };
    let Some(line_start) = line_start else {
        return start;
    };
    let mut pos = start;
    let rest = text[line_start..].chars().skip(start.col.saturating_sub(1));
    for c in rest {
        if !c.is_whitespace() || (pos.line, pos.col) >= (end.line, end.col) {
            break;
        }
        if c == '\n' {
            pos.line += 1;
            pos.col = 1;
        } else {
            pos.col += 1;
        }
    }
    pos
}
