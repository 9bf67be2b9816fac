//! The limits of a read, one type each, so a limit travels as what it is rather than as a loose
//! number: [`EventLimit`] (`--max-event-bytes`: the longest line or event a framer accepts) and
//! [`InputLimit`] (`--max-input-bytes`: how much of an input is read or held). Their defaults are
//! decided here once; the command line, the network crate and the app take them from here.

/// A recording (RON or journal) keeps one chunk per line, escaped: a line may be this many times
/// the event limit before a recording read from a pipe is refused.
pub const RECORDING_LINE_FACTOR: u64 = 8;

/// The longest line or event accepted, in bytes (`--max-event-bytes`). A longer one stops the read
/// (an overflow, or [`crate::input::InputError::EventTooLarge`]), so an endless line (`/dev/zero`)
/// ends at bounded memory. Every framer, the pipeline, the feed and the readers take one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventLimit(u64);

impl EventLimit {
    /// The default limit: generous for real streams (the largest event a real provider sends is a
    /// few MiB of arguments), and small enough that an endless line ends the read early.
    pub const DEFAULT: EventLimit = EventLimit(64 * 1024 * 1024);

    /// No limit: for callers that analyse what is already in memory (a recording built in the
    /// process), where a line cannot grow without end.
    pub const UNBOUNDED: EventLimit = EventLimit(u64::MAX);

    /// A limit of `bytes` bytes.
    pub const fn new(bytes: u64) -> Self {
        EventLimit(bytes)
    }

    /// The limit in bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// The longest line of a recording's text (a `.ron` document, a journal) read with this
    /// limit: [`RECORDING_LINE_FACTOR`] times it, as a recording keeps one chunk
    /// per line, escaped.
    pub const fn recording_line_bytes(self) -> u64 {
        self.0.saturating_mul(RECORDING_LINE_FACTOR)
    }
}

impl Default for EventLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The default `--max-input-bytes` of the commands that read an input: generous for any real
/// stream, and small enough that an endless input (a pipe, a FIFO, `/dev/urandom`) ends before
/// the analysis holds a gigabyte (see the measurements in the README).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 32 * 1024 * 1024;

/// Which inputs `--max-input-bytes` bounds, and how much. What grows without end is always bounded
/// by it (standard input, pipes, FIFOs, character devices, sockets: whatever has no size), and so
/// is a regular file a reader holds whole (a recording's text, a capture, a body kept for
/// `events`); a regular file read by a streaming pass (`export`, `check`'s analysis of a body) is
/// read to its size unless `files` is set (the limit was given explicitly).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputLimit {
    /// The most bytes read from an input without a size, or held from one read whole.
    pub bytes: u64,
    /// The limit bounds every regular file too, whatever reads it: a file over it is refused
    /// before anything of it is read.
    pub files: bool,
}

impl InputLimit {
    /// No limit at all (library callers reading files a person chose, such as the app).
    pub const NONE: InputLimit = InputLimit {
        bytes: u64::MAX,
        files: false,
    };

    /// The command line's limit when `--max-input-bytes` is not given:
    /// [`DEFAULT_MAX_INPUT_BYTES`] on what grows and what is held whole, regular files read by a
    /// streaming pass to their end.
    pub const DEFAULT: InputLimit = InputLimit {
        bytes: DEFAULT_MAX_INPUT_BYTES,
        files: false,
    };

    /// `--max-input-bytes N` given explicitly: it bounds every input, regular files too (asking
    /// for a limit means wanting it whatever the input is).
    pub const fn given(bytes: u64) -> Self {
        InputLimit { bytes, files: true }
    }

    /// The limit a `--max-input-bytes` flag asks for: [`Self::given`] when it was given,
    /// [`Self::DEFAULT`] when not.
    pub const fn from_flag(bytes: Option<u64>) -> Self {
        match bytes {
            Some(b) => Self::given(b),
            None => Self::DEFAULT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_given_bounds_files_and_its_absence_is_the_default() {
        assert_eq!(InputLimit::from_flag(None), InputLimit::DEFAULT);
        let given = InputLimit::from_flag(Some(1000));
        assert_eq!(given, InputLimit::given(1000));
        assert_eq!(
            (given.bytes, given.files),
            (1000, true),
            "given, it bounds files too"
        );
    }

    #[test]
    fn the_recording_line_limit_is_a_multiple_of_the_event_limit_and_never_wraps() {
        let factor = RECORDING_LINE_FACTOR;
        assert_eq!(EventLimit::new(1000).recording_line_bytes(), 1000 * factor);
        assert_eq!(EventLimit::UNBOUNDED.recording_line_bytes(), u64::MAX);
    }
}
