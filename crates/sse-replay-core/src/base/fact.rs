//! The pipeline's vocabulary: what a dialect tells the accumulator and the naive strategies. A
//! [`Fragment`] is one piece of a call (its [`CallKey`], and each field [`Raw`]: absent, `null` or
//! present); a [`Fact`] is a fragment or one of the stream-level facts a dialect reports; a
//! [`Pos`] says where it arrived. [`FactObserver`] is the pipeline's hook for anything that
//! watches the facts as they are routed (the naive strategies, fed by the analysis).
//!
//! This module depends on nothing but [`crate::findings`] (for [`Fact::Finding`]): dialects,
//! the accumulator, the naive strategies, compare and the importers all speak it.

use std::fmt;

use crate::findings::FindingKind;

/// A JSON field that may be absent, explicitly `null`, or present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Raw<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Raw<T> {
    /// The value, if present.
    pub fn value(&self) -> Option<&T> {
        match self {
            Raw::Value(v) => Some(v),
            _ => None,
        }
    }
    /// True for `Absent` and `Null`.
    pub fn is_missing(&self) -> bool {
        !matches!(self, Raw::Value(_))
    }
}

impl Raw<String> {
    /// The value when present and non-empty: what the seed's `if (tc.id)` accepts.
    pub fn non_empty(&self) -> Option<&str> {
        match self {
            Raw::Value(v) if !v.is_empty() => Some(v),
            _ => None,
        }
    }
    /// The kind of presence, for per-fragment records.
    pub fn presence(&self) -> Presence {
        match self {
            Raw::Absent => Presence::Absent,
            Raw::Null => Presence::Null,
            Raw::Value(v) if v.is_empty() => Presence::Empty,
            Raw::Value(_) => Presence::Value,
        }
    }
}

/// How a field was present in a fragment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    #[default]
    Absent,
    Null,
    Empty,
    Value,
}

/// A piece of a call's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgsPiece {
    /// A string fragment (the normal case).
    Text(String),
    /// The arguments arrived as a JSON value (usually an object) rather than a string; the compact
    /// JSON text is kept.
    Object(String),
}

impl ArgsPiece {
    /// The text that gets appended.
    pub fn text(&self) -> &str {
        match self {
            ArgsPiece::Text(s) | ArgsPiece::Object(s) => s,
        }
    }
}

/// Identity of one call in the accumulator's table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallKey {
    /// OpenAI Chat: choice index, tool-call index, and a generation that is bumped when a used index
    /// is reused for a new call (new id + name).
    Index {
        choice: u32,
        index: u64,
        generation: u32,
    },
    /// OpenAI Responses: the output item id.
    Item(String),
    /// Anthropic: the content block index.
    Block(u64),
    /// Dialects whose calls arrive whole (Gemini, Ollama): the call's ordinal in the stream.
    Ordinal(u32),
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallKey::Index {
                choice,
                index,
                generation,
            } => {
                if *choice != 0 {
                    write!(f, "choice {choice} ")?;
                }
                write!(f, "index {index}")?;
                if *generation != 0 {
                    write!(f, " (call #{} at this index)", generation + 1)?;
                }
                Ok(())
            }
            CallKey::Item(id) => write!(f, "item {id}"),
            CallKey::Block(i) => write!(f, "block {i}"),
            CallKey::Ordinal(i) => write!(f, "call #{i}"),
        }
    }
}

impl CallKey {
    /// The provider's own index, where the key has one.
    pub fn index(&self) -> Option<u64> {
        match self {
            CallKey::Index { index, .. } | CallKey::Block(index) => Some(*index),
            CallKey::Ordinal(i) => Some(u64::from(*i)),
            CallKey::Item(_) => None,
        }
    }
}

/// One tool-call fragment as the dialect saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fragment {
    pub key: CallKey,
    /// The index as the provider stated it (`None` when missing or invalid).
    pub stated_index: Option<u64>,
    pub id: Raw<String>,
    pub name: Raw<String>,
    pub args: Raw<ArgsPiece>,
}

/// What a dialect tells the accumulator (and the naive strategies).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// A piece of a call.
    Fragment(Fragment),
    /// The response says it is finished (`finish_reason`, `message_stop`, `response.completed`, `done: true`...).
    Finish { reason: String },
    /// `data: [DONE]`.
    Done,
    /// The dialect says one call is complete (`content_block_stop`, `output_item.done`).
    CallDone { key: CallKey },
    /// The dialect carries the call's full arguments (Responses `.done` events): the "original" for checkpoint ①.
    Authoritative { key: CallKey, arguments: String },
    /// The dialect carries a call's full arguments and no piece of them came before (Responses
    /// `.done` events with no `.delta`, as some compatible servers send them). The pipeline appends
    /// the text to the call as its one fragment — so the accumulator still only concatenates — and
    /// names it with an `arguments-only-in-done` finding. Naive strategies never see it: they run
    /// on the pieces, as a delta-only client does.
    ArgumentsOnlyInDone { key: CallKey, arguments: String },
    /// The call with `key` is a tool the provider runs itself (Anthropic `server_tool_use`,
    /// Responses `web_search_call`…); `kind` is the block or item type. It stays visible, apart
    /// from the calls the client must execute.
    ServerTool { key: CallKey, kind: String },
    /// The call with `key` is something the client executes other than a plain function call
    /// (Responses `custom_tool_call`, `apply_patch_call`, `local_shell_call`, `shell_call`,
    /// `computer_call`, or an item type sse-replay does not know): `kind` names it. With `text`,
    /// its arguments are free-form text (a custom tool's input): taken as a JSON string at the
    /// finish, never parsed as JSON, so never a parse failure.
    CallKind {
        key: CallKey,
        kind: String,
        text: bool,
    },
    /// The provider reported an error in the stream.
    ProviderError { message: String },
    /// Something only the dialect can see.
    Finding {
        kind: FindingKind,
        key: Option<CallKey>,
        message: String,
    },
}

/// Where a fact (and so a fragment) arrived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// Event number (0-based).
    pub event: u32,
    /// Chunk (network read) in which the event completed.
    pub chunk: u32,
    /// Arrival time of that chunk.
    pub t_micros: u64,
}

/// The pipeline's hook: something that watches every fact as the pipeline routes it, in stream
/// order, without sharing state with the accumulator. The analysis feeds the naive strategies
/// through it; the lean pass (`export`) has none ([`NoObserver`]), at no cost.
pub trait FactObserver {
    /// One fact from the dialect, before the pipeline acts on it. `fragment_no` is the number the
    /// accumulator gives the fragment if the fact is one (the fragments so far otherwise).
    fn on_fact(&mut self, fact: &Fact, pos: Pos, fragment_no: u32);

    /// End of stream. `finished_at` is where the stream said it finished (the first finish
    /// fact, else `[DONE]`), `None` when it did not.
    fn on_finish(&mut self, finished_at: Option<Pos>);
}

/// The observer of a pipeline that has none (the lean pass): every call compiles to nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl FactObserver for NoObserver {
    #[inline(always)]
    fn on_fact(&mut self, _fact: &Fact, _pos: Pos, _fragment_no: u32) {}
    #[inline(always)]
    fn on_finish(&mut self, _finished_at: Option<Pos>) {}
}
