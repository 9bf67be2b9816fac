//! The one way in: every file the CLI and the app read is opened here once, its first block read
//! once ([`crate::input::Peeked`]), and what it is decided once, by [`crate::content::decide`],
//! into a [`Content`] (its [`Kind`], its body's framing, its importer).
//! The [`Probe`] then hands its reader on (the peeked bytes first, so a pipe or standard input is
//! read exactly once) to the reader for that kind: the `open` module's methods on [`Probe`]
//! (recordings, analysis, `export`'s streaming pass, the app's raw body) and
//! [`crate::import::import`].
//!
//! # Adding a form
//!
//! A new input form (say a JSON array of chunk objects, or binary AWS event-stream frames) is added
//! in one place, [`crate::content`]: a variant of [`Kind`] (or, for a body a server sends, of
//! [`BodyForm`]) and its rule in [`crate::content::decide`]. Every `match` on the kind is exhaustive, so the compiler then lists each reader
//! that must say what to do with it (`open.rs`, `import/mod.rs`); a body form also needs the
//! framing layer ([`crate::framing`]) to cut it into events.

use std::path::Path;

use crate::content::Content;
pub use crate::content::{BodyForm, CaptureFormat, Kind};
use crate::dialect::DialectKind;
use crate::input::{InputError, Peeked};
use crate::limits::{EventLimit, InputLimit};

/// `--max-streams` default: far more than a real capture holds, far fewer than a hostile one.
pub const DEFAULT_MAX_STREAMS: usize = 1000;

/// How an input is read: its limits and the choices the caller made. One struct for every reader
/// (`check`, `events`, `export`, `import`, `serve`, `test`, the app).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The longest line or event accepted (`--max-event-bytes`); a longer one stops the read.
    pub max_event_bytes: EventLimit,
    /// `--max-input-bytes`: the most bytes read from an input that has no size (standard input, a
    /// pipe, a FIFO, a device, a socket: what may grow without end), checked by the reader under
    /// it, so every reading path stops at the same byte ([`InputError::InputTooLong`]); and the
    /// most a reader holds of a regular file it reads whole (a recording, a capture, a body kept
    /// in memory), refused before it is read. A regular file read by a streaming pass (`export`,
    /// `check`'s analysis of a body) is read to its size unless [`InputLimit::files`].
    /// Unbounded by default ([`InputLimit::NONE`]: library callers that read files a person
    /// chose, such as the app); the command line passes its own, [`InputLimit::DEFAULT`] unless
    /// told otherwise.
    pub input_limit: InputLimit,
    /// Which stream of a capture holding several, from 1 (`--stream`); `None`: the only one.
    pub stream: Option<usize>,
    /// The dialect, forced (`--dialect`); `None`: detected.
    pub dialect: Option<DialectKind>,
    /// File → Import… in the app: a body is imported as a capture would be (a recording still
    /// opens as one), and errors say why it is not one.
    pub import_only: bool,
    /// Recordings made from one capture at most (`--max-streams`); the rest are counted, not made.
    pub max_streams: usize,
    /// Keep the requests' secrets of an imported capture instead of redacting them
    /// (`--keep-secrets`).
    pub keep_secrets: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            max_event_bytes: EventLimit::DEFAULT,
            input_limit: InputLimit::NONE,
            stream: None,
            dialect: None,
            import_only: false,
            max_streams: DEFAULT_MAX_STREAMS,
            keep_secrets: false,
        }
    }
}

/// An input, opened once, its head read and its [`Kind`] decided; read it with one of its
/// readers (`open.rs`: [`Probe::recordings`], [`Probe::recording`], [`Probe::analyse`],
/// [`Probe::stream_calls`], [`Probe::raw_body`]; or [`crate::import::import`]).
pub struct Probe {
    pub(crate) content: Content,
    pub(crate) input: Peeked,
    pub(crate) options: ReadOptions,
}

/// Open `path` (`-` is standard input), read its head and decide what it is.
pub fn open(path: &Path, options: ReadOptions) -> Result<Probe, InputError> {
    Ok(Probe::new(
        Peeked::open(path, options.input_limit)?,
        options,
    ))
}

impl Probe {
    /// Decide what an already opened input is.
    pub fn new(input: Peeked, options: ReadOptions) -> Self {
        let content = crate::content::decide(input.path(), input.head());
        Self {
            content,
            input,
            options,
        }
    }

    /// What the input is.
    pub fn kind(&self) -> Kind {
        self.content.kind
    }

    /// What the input is, the framing of its body and the importer that reads it: the one
    /// decision ([`crate::content::decide`]), which no reader makes again.
    pub fn content(&self) -> Content {
        self.content
    }

    /// How it is read.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The opened input (its head, its name, its size).
    pub fn input(&self) -> &Peeked {
        &self.input
    }

    /// The opened input, to read it with a reader of one's own.
    pub fn into_input(self) -> Peeked {
        self.input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_is_read_back_before_the_rest() {
        use std::io::Read as _;
        let p = Peeked::from_bytes(Path::new("x"), b"data: 1\n\n".to_vec());
        let probe = Probe::new(p, ReadOptions::default());
        assert_eq!(probe.kind(), Kind::Body(BodyForm::Sse));
        let mut all = Vec::new();
        probe.into_input().read_to_end(&mut all).expect("read");
        assert_eq!(all, b"data: 1\n\n");
    }
}
