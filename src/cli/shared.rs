//! The options several commands take, each defined once: its flag name, value syntax, default and
//! help, and the typed value it produces ([`EventLimit`], [`InputLimit`], [`DialectKind`]). A
//! command flattens the definition (`#[command(flatten)]`); where what the limit does differs by
//! command (`scan` makes a row unreadable where `check` exits 1), the command's own wording of
//! the consequence is kept here too, next to the definition, and applied with
//! [`clap::Command::mut_arg`] on the arg's id ([`EVENT_LIMIT_ID`], [`INPUT_LIMIT_ID`]).

use clap::Args;
use clap::builder::{PossibleValue, TypedValueParser};

use sse_replay_core::dialect::DialectKind;
use sse_replay_core::limits::{EventLimit, InputLimit};
use sse_replay_net::harness::Variant;

/// The id of the `--max-event-bytes` arg (for `mut_arg`).
pub const EVENT_LIMIT_ID: &str = "max_event_bytes";

/// The id of the `--max-input-bytes` arg (for `mut_arg`).
pub const INPUT_LIMIT_ID: &str = "max_input_bytes";

/// [`EventLimit::DEFAULT`] as `--max-event-bytes` writes it (a test holds them equal: clap takes
/// a default as text, and shows it in the help as written here).
pub const EVENT_LIMIT_DEFAULT: &str = "64M";

/// [`sse_replay_core::limits::DEFAULT_MAX_INPUT_BYTES`] as `--max-input-bytes` writes it (a test
/// holds them equal, and holds every help text that names the default to this spelling).
pub const INPUT_LIMIT_DEFAULT: &str = "32M";

/// `--max-event-bytes`: the longest line or event accepted.
#[derive(Clone, Copy, Debug, Args)]
pub struct EventLimitArg {
    /// The longest line or event accepted, in bytes (suffixes K, M, G = KiB, MiB, GiB): a longer
    /// one stops the read with exit 1, so an endless input ends at bounded memory.
    #[arg(long, value_name = "N", default_value = EVENT_LIMIT_DEFAULT, value_parser = parse_event_limit)]
    pub max_event_bytes: EventLimit,
}

impl EventLimitArg {
    /// `scan`'s wording: a file over the limit is a row, not an exit. (Help text as clap shows
    /// a doc comment: no final period.)
    pub const SCAN_HELP: &str = "The longest line or event accepted, in bytes (as `check`): a \
        longer one makes the file's row unreadable, with the reason";

    /// `import`'s wording: nothing is written.
    pub const IMPORT_HELP: &str = "The longest line or event accepted in a stream, in bytes \
        (suffixes K, M, G); a longer one stops the import with exit 1";

    /// The limit asked for.
    pub fn limit(&self) -> EventLimit {
        self.max_event_bytes
    }
}

/// `--max-input-bytes` of the commands that stream a regular file and hold what grows (`check`,
/// `events`, `preview`, `export`, `scan`): not given, [`InputLimit::DEFAULT`]; given, it bounds
/// every input, regular files too ([`InputLimit::from_flag`]).
#[derive(Clone, Copy, Debug, Args)]
pub struct InputLimitArg {
    /// The most bytes read from an input that may grow without end (standard input, a pipe, a
    /// FIFO, a device; suffixes K, M, G), or held from a file read whole (a `.ron` recording, a
    /// capture, the body `events` and `preview` keep): past it the read stops with exit 1 and one
    /// line saying where, so an endless input ends at bounded memory. Default 32M. A regular file
    /// `export` or `check` streams is read to its end, unless this is given.
    #[arg(long, value_name = "N", value_parser = parse_size)]
    pub max_input_bytes: Option<u64>,
}

impl InputLimitArg {
    /// `scan`'s wording: a file over the limit is a row, not an exit.
    pub const SCAN_HELP: &str = "The most bytes read from one file, as `check` reads it \
        (suffixes K, M, G; default 32M): a longer one (a FIFO, a device, an endless file named \
        here) makes the file's row unreadable, with the reason, at bounded memory";

    /// The limit asked for.
    pub fn limit(&self) -> InputLimit {
        InputLimit::from_flag(self.max_input_bytes)
    }
}

/// `--max-input-bytes` of `import`, which holds its whole input (a capture) before writing
/// anything: always [`INPUT_LIMIT_DEFAULT`] unless given, shown as the default; regular files
/// are bounded by the reader that holds them whole, so [`InputLimit::files`] stays unset, as the
/// probe reads a capture.
#[derive(Clone, Copy, Debug, Args)]
pub struct HeldInputLimitArg {
    /// The most bytes read from the input (suffixes K, M, G): past it the import stops with exit 1
    /// and one line saying where, so an endless input ends at bounded memory.
    #[arg(long, value_name = "N", default_value = INPUT_LIMIT_DEFAULT, value_parser = parse_size)]
    pub max_input_bytes: u64,
}

impl HeldInputLimitArg {
    /// The limit asked for.
    pub fn limit(&self) -> InputLimit {
        InputLimit {
            bytes: self.max_input_bytes,
            files: false,
        }
    }
}

/// A positive byte count: digits with an optional K, M or G suffix (powers of 1024; `KiB`,
/// `MiB`, `GiB` and a trailing `B` are accepted too).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(digits_end);
    let unit: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => 0,
    };
    match digits.parse::<u64>() {
        Ok(n) if n > 0 && unit > 0 => n
            .checked_mul(unit)
            .ok_or_else(|| format!("{s:?}: too large")),
        _ => Err(format!(
            "{s:?}: expected a positive number of bytes, like 65536, 512K or 64M"
        )),
    }
}

/// `--max-event-bytes`'s value: a byte count as [`parse_size`] reads it.
fn parse_event_limit(s: &str) -> Result<EventLimit, String> {
    parse_size(s).map(EventLimit::new)
}

/// The value parser of every `--dialect`: the dialect table's names and aliases
/// ([`DialectKind::name`], [`DialectKind::aliases`]), any case, surrounding spaces ignored; help
/// and errors list the names as clap lists any possible values.
#[derive(Clone, Copy, Debug, Default)]
pub struct DialectParser;

impl DialectParser {
    fn values() -> impl Iterator<Item = PossibleValue> {
        DialectKind::ALL.into_iter().map(|d| {
            PossibleValue::new(d.name())
                .aliases(d.aliases().iter().copied())
                .help(d.help())
        })
    }
}

impl TypedValueParser for DialectParser {
    type Value = DialectKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<DialectKind, clap::Error> {
        if let Some(d) = value.to_str().and_then(DialectKind::from_name) {
            return Ok(d);
        }
        // Not one of them: clap's own error, listing the possible values.
        clap::builder::PossibleValuesParser::new(Self::values())
            .parse_ref(cmd, arg, value)
            .and_then(|_| Err(clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd)))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::values()))
    }
}

/// The value parser of every `--dialect`.
pub fn dialect_parser() -> DialectParser {
    DialectParser
}

/// `--faults`' word for every fault variant.
const ALL_FAULTS: &str = "all";

/// The value parser of every `--variants` (`test`, `serve --suite`): a framing variant's name
/// (faults go to `--faults`).
pub fn parse_variant(s: &str) -> Result<Variant, String> {
    Variant::from_name(s)
        .filter(|v| !v.is_fault())
        .ok_or_else(|| {
            format!(
                "unknown variant {s:?} (expected one of: {}; faults go to --faults)",
                Variant::FRAMING.map(Variant::name).join(", ")
            )
        })
}

/// The value parser of every `--faults` (`test`, `serve --suite`): the harness's fault variants
/// by name ([`Variant::FAULTS`]), or `all`.
pub fn faults_parser() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        Variant::FAULTS
            .map(Variant::name)
            .into_iter()
            .chain([ALL_FAULTS]),
    )
}

/// The variants `--variants` and `--faults` select, sorted, each once: the framing variants
/// named (all of them when none is), then each fault named (`all`: every fault).
pub fn selected_variants(variants: &[Variant], faults: &[String]) -> Vec<Variant> {
    let mut selected: Vec<Variant> = if variants.is_empty() {
        Variant::FRAMING.to_vec()
    } else {
        variants.to_vec()
    };
    for f in faults {
        match Variant::from_name(f) {
            Some(v) => selected.push(v),
            None => selected.extend(Variant::FAULTS),
        }
    }
    selected.sort();
    selected.dedup();
    selected
}
