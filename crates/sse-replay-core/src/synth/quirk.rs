//! Every provider quirk the stub builder reproduces, declared once: its one name (the word
//! `stub --quirk` takes, the app's stub builder shows and `generate-corpus` writes into file
//! names), what it does, the finding a correct reader raises on it, and which streams can carry
//! it ([`Quirk::refusal`]). `sse-replay stub`, the app's builder and `generate-corpus` all ask
//! this table; adding a quirk without saying where it applies does not compile (every `match`
//! here is over [`Quirk`], with no catch-all).

use crate::dialect::DialectKind;
use crate::findings::FindingKind;
use crate::framing::Framing;
use crate::stub::{self, Quirks, StubSpec};

macro_rules! stub_quirks {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal $(| $alias:literal)*, $what:literal, [$($finding:ident),+]; )*) => {
        /// A provider quirk the stub builder can reproduce.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Quirk {
            $( $(#[$doc])* $variant, )*
        }

        impl Quirk {
            /// Every quirk, in the order the CLI's help and the app's builder list them.
            pub const ALL: &'static [Quirk] = &[$( Quirk::$variant, )*];

            /// The one name: `stub --quirk NAME`, the app's builder, `generate-corpus` file names.
            pub fn name(self) -> &'static str {
                match self { $( Quirk::$variant => $name, )* }
            }

            /// What it does, in a few words (the CLI's help, the app's checkbox).
            pub fn description(self) -> &'static str {
                match self { $( Quirk::$variant => $what, )* }
            }

            /// The findings a correct reader raises on a stream with this quirk: at least one of
            /// them is in every stream the stub builder makes with it.
            pub fn findings(self) -> &'static [FindingKind] {
                match self { $( Quirk::$variant => &[$(FindingKind::$finding),+], )* }
            }

            /// The quirk named `name` ([`Quirk::name`], or an older spelling such as
            /// `keep-alive` or `truncated`, which earlier corpora used in file names).
            pub fn from_name(name: &str) -> Option<Quirk> {
                match name {
                    $( $name $(| $alias)* => Some(Quirk::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

stub_quirks! {
    /// Continuation fragments repeat the function name.
    RepeatName = "repeat-name", "continuations repeat the function name", [RepeatedName];
    /// Continuation fragments carry `"id": ""`.
    EmptyId = "empty-id", "continuations carry \"id\": \"\"", [EmptyFieldContinuation];
    /// No `index` on tool-call deltas.
    NoIndex = "no-index", "no index on tool-call deltas", [MissingIndex];
    /// Indexes count from 1.
    IndexFrom1 = "index-from-1", "indexes count from 1", [IndexNotFromZero];
    /// Every call at index 0, told apart by id and name.
    AllAtIndex0 = "all-at-index-0", "every call at index 0", [ReusedIndexNewCall];
    /// Arguments as a JSON object in one fragment.
    ObjectArguments = "object-arguments", "arguments as a JSON object", [ObjectArguments];
    /// Each fragment re-sends the arguments so far.
    Cumulative = "cumulative", "each fragment re-sends the arguments so far", [CumulativeArguments];
    /// CRLF line endings.
    Crlf = "crlf", "CRLF line endings", [CrlfLineEndings];
    /// `data:` without a space.
    NoSpace = "no-space", "data: without a space", [DataWithoutSpace];
    /// A keep-alive comment between events.
    Keepalive = "keepalive" | "keep-alive", "a keep-alive comment every third event", [KeepAliveComment];
    /// The stream stops before it finishes.
    Truncate = "truncate" | "truncated", "the stream stops before it finishes", [EndedWithoutFinish, NoFinalEvent];
    /// The finish rides on the last fragment's chunk.
    FinishWithLast = "finish-with-last", "the finish rides on the last fragment's chunk", [FinishInSameChunk];
    /// A provider error event after two fragments.
    Error = "error" | "provider-error", "a provider error event after two fragments", [ProviderError];
    /// Gemini only: Vertex AI streamed arguments (`partialArgs`).
    PartialArgs = "partial-args", "Gemini only: Vertex AI streamed arguments (partialArgs)", [PartialArgs];
    /// Cohere only: `tool-call-start` carries the first arguments fragment.
    ArgsInStart = "args-in-start", "Cohere only: tool-call-start carries the first arguments fragment", [ArgumentsInStart];
    /// Binary AWS event streams only: one frame with a wrong message CRC32.
    CrcError = "crc-error", "binary AWS event streams only: one frame with a wrong message CRC32", [FrameCorrupt];
}

/// What a stub stream is, as far as its quirks are concerned: its dialect and how its events
/// are framed on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The dialect the events are written in.
    pub dialect: DialectKind,
    /// The framing on the wire: the one asked for, else the dialect's own
    /// ([`DialectKind::native_framing`]); binary AWS frames for an InvokeModel-wrapped stream.
    pub framing: Framing,
}

impl Shape {
    /// The shape `spec` builds.
    pub fn of(spec: &StubSpec) -> Self {
        let framing = if stub::builds_binary(spec) {
            Framing::AwsEventStream
        } else {
            spec.framing
                .unwrap_or_else(|| spec.dialect.native_framing())
        };
        Self {
            dialect: spec.dialect,
            framing,
        }
    }
}

/// One stream the stub builder can write: a dialect, the framing asked for (`None`: the
/// dialect's own) and whether its events are wrapped as InvokeModelWithResponseStream sends them
/// (`stub --dialect`, `--framing`, `--invoke-model-stream`). [`StubShape::all`] lists every one
/// the dialect table allows; `stub`, the app's builder and `generate-corpus` build only these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StubShape {
    /// The dialect the events are written in.
    pub dialect: DialectKind,
    /// The framing asked for; `None` is the dialect's own.
    pub framing: Option<Framing>,
    /// Each event wrapped in a binary AWS `chunk` frame.
    pub invoke_model_stream: bool,
}

impl StubShape {
    /// Every stub shape the dialect table allows: each dialect in its own framing, a text
    /// dialect reframed as each text framing, and the InvokeModel wrapping where the dialect has
    /// it ([`DialectKind::invoke_model_stream`]).
    pub fn all() -> Vec<StubShape> {
        let mut out = Vec::new();
        for dialect in DialectKind::ALL {
            let shape = |framing, invoke_model_stream| StubShape {
                dialect,
                framing,
                invoke_model_stream,
            };
            out.push(shape(None, false));
            if dialect.native_framing().is_text() {
                out.extend(
                    Framing::ALL
                        .iter()
                        .filter(|f| f.is_text())
                        .map(|&f| shape(Some(f), false)),
                );
            }
            if dialect.invoke_model_stream() {
                out.push(shape(None, true));
            }
        }
        out
    }

    /// The shape `spec` asks for.
    pub fn of(spec: &StubSpec) -> Self {
        Self {
            dialect: spec.dialect,
            framing: spec.framing,
            invoke_model_stream: spec.invoke_model_stream,
        }
    }

    /// A spec of this shape with the builder's defaults (no calls, no quirks).
    pub fn spec(self) -> StubSpec {
        StubSpec {
            dialect: self.dialect,
            framing: self.framing,
            invoke_model_stream: self.invoke_model_stream,
            ..StubSpec::default()
        }
    }

    /// Why the stub builder cannot write this shape (`None`: it can), as one line.
    pub fn refusal(self) -> Option<String> {
        if self.invoke_model_stream && !self.dialect.invoke_model_stream() {
            let wraps = || {
                DialectKind::ALL
                    .into_iter()
                    .filter(|d| d.invoke_model_stream())
            };
            let titles: Vec<&str> = wraps().map(DialectKind::title).collect();
            let names: Vec<&str> = wraps().map(DialectKind::name).collect();
            return Some(format!(
                "--invoke-model-stream wraps {} events, as Bedrock's InvokeModelWithResponseStream sends them (give --dialect {})",
                titles.join(" or "),
                names.join(" or --dialect ")
            ));
        }
        let binary = self.invoke_model_stream || !self.dialect.native_framing().is_text();
        match self.framing {
            Some(f) if binary || !f.is_text() => Some(
                "--framing frames text events; a binary AWS event stream has its own frames".into(),
            ),
            Some(_) | None => None,
        }
    }
}

impl Quirk {
    /// Why a stream of this `shape` cannot carry the quirk (`None`: it can), as one line that
    /// says where it does exist. The one rule `stub`, the app's builder and `generate-corpus`
    /// follow.
    pub fn refusal(self, shape: Shape) -> Option<String> {
        use DialectKind as D;
        let name = self.name();
        let only_in = |dialect: DialectKind| {
            (shape.dialect != dialect).then(|| {
                format!(
                    "quirk {name} exists only in {} streams (give --dialect {})",
                    dialect.name(),
                    dialect.name()
                )
            })
        };
        let sse_only = || match shape.framing {
            Framing::Sse => None,
            Framing::AwsEventStream => Some(format!(
                "quirk {name} exists only in text streams (a binary AWS event stream has no lines)"
            )),
            Framing::JsonLines | Framing::JsonArray => Some(format!(
                "quirk {name} exists only in server-sent events (a {} body has no data: lines or comments)",
                shape.framing.title()
            )),
        };
        let ollama_lines = || {
            (shape.dialect == D::Ollama).then(|| {
                format!("quirk {name} exists only in server-sent events; the stub builder writes ollama's events as its JSON lines")
            })
        };
        match self {
            Quirk::RepeatName
            | Quirk::EmptyId
            | Quirk::NoIndex
            | Quirk::IndexFrom1
            | Quirk::AllAtIndex0
            | Quirk::ObjectArguments
            | Quirk::Cumulative
            | Quirk::FinishWithLast => only_in(D::OpenAiChat),
            Quirk::PartialArgs => only_in(D::Gemini),
            Quirk::ArgsInStart => only_in(D::Cohere),
            // The builder writes Ollama's events as its own JSON lines, whatever the framing.
            Quirk::NoSpace => sse_only().or_else(ollama_lines),
            // The builder writes keep-alive comments between the events that carry fragments;
            // a Gemini stream has none (every call is one whole part).
            Quirk::Keepalive => sse_only().or_else(ollama_lines).or_else(|| {
                (shape.dialect == D::Gemini).then(|| {
                    format!("quirk {name} needs fragment events; gemini streams send each call whole")
                })
            }),
            Quirk::Crlf => match shape.framing {
                Framing::Sse => None,
                Framing::JsonLines if shape.dialect == D::Ollama => None,
                Framing::AwsEventStream => sse_only(),
                Framing::JsonLines | Framing::JsonArray => Some(format!(
                    "quirk {name} changes server-sent event lines (or ollama's own JSON lines); a {} body written from events has none",
                    shape.framing.title()
                )),
            },
            Quirk::CrcError => (shape.framing != Framing::AwsEventStream).then(|| {
                format!(
                    "quirk {name} exists only in binary AWS event streams (give --dialect bedrock-converse or --invoke-model-stream)"
                )
            }),
            // The builder has no error event for these dialects' streams.
            Quirk::Error => match shape.dialect {
                D::Gemini | D::Ollama => Some(format!(
                    "quirk {name} is not built for {} streams (the stub builder has no error event for them)",
                    shape.dialect.name()
                )),
                // An Assistants error is known by its `event: error` line alone: written from
                // the events' data, JSON lines or an array lose it.
                D::OpenAiAssistants => sse_only(),
                D::OpenAiChat
                | D::OpenAiResponses
                | D::AnthropicMessages
                | D::Cohere
                | D::AiSdkUi
                | D::BedrockConverse => None,
            },
            // Gemini sends each call whole: cut after a whole chunk, a body of JSON lines left
            // with one line is one complete response, which no reader can tell from a cut stream.
            Quirk::Truncate => (shape.dialect == D::Gemini && shape.framing == Framing::JsonLines)
                .then(|| {
                    format!(
                        "quirk {name} cannot be shown in gemini JSON lines: what is left reads as one complete response"
                    )
                }),
        }
    }

    /// Why `spec`'s stream cannot carry the quirk (`None`: it can): its shape's refusal
    /// ([`Quirk::refusal`]), or calls that leave the quirk nothing to show in (one call for
    /// calls told apart at one index, no arguments to re-send, cut or start with). The rule
    /// `stub`, the app's builder and `generate-corpus` follow.
    pub fn refusal_in(self, spec: &StubSpec) -> Option<String> {
        if let Some(why) = self.refusal(Shape::of(spec)) {
            return Some(why);
        }
        let name = self.name();
        let longest = spec
            .calls
            .iter()
            .map(|c| c.arguments.chars().count())
            .max()
            .unwrap_or(0);
        match self {
            Quirk::AllAtIndex0 => (spec.calls.len() < 2).then(|| {
                format!("quirk {name} needs two calls or more (calls told apart at one index)")
            }),
            Quirk::Cumulative => (longest < 3).then(|| {
                format!("quirk {name} needs arguments of three characters or more to re-send")
            }),
            Quirk::ArgsInStart => (longest == 0)
                .then(|| format!("quirk {name} needs a call with arguments to start with")),
            Quirk::PartialArgs => (!spec
                .calls
                .iter()
                .any(|c| stub::has_argument_values(&c.arguments)))
            .then(|| format!("quirk {name} needs a call with argument values to stream")),
            Quirk::RepeatName
            | Quirk::EmptyId
            | Quirk::NoIndex
            | Quirk::IndexFrom1
            | Quirk::ObjectArguments
            | Quirk::Crlf
            | Quirk::NoSpace
            | Quirk::Keepalive
            | Quirk::Truncate
            | Quirk::FinishWithLast
            | Quirk::Error
            | Quirk::CrcError => None,
        }
    }

    /// Whether the quirk is set in `quirks`.
    pub fn is_set(self, quirks: &Quirks) -> bool {
        match self {
            Quirk::RepeatName => quirks.repeat_name,
            Quirk::EmptyId => quirks.empty_id_continuations,
            Quirk::NoIndex => quirks.no_index,
            Quirk::IndexFrom1 => quirks.index_base != 0,
            Quirk::AllAtIndex0 => quirks.all_at_index_zero,
            Quirk::ObjectArguments => quirks.object_arguments,
            Quirk::Cumulative => quirks.cumulative,
            Quirk::Crlf => quirks.crlf,
            Quirk::NoSpace => quirks.no_space,
            Quirk::Keepalive => quirks.keepalive_every != 0,
            Quirk::Truncate => quirks.truncate,
            Quirk::FinishWithLast => quirks.finish_with_last_fragment,
            Quirk::Error => quirks.error_after.is_some(),
            Quirk::PartialArgs => quirks.partial_args,
            Quirk::ArgsInStart => quirks.args_in_start,
            Quirk::CrcError => quirks.crc_error,
        }
    }

    /// Set (`on`) or clear the quirk in `quirks`, as `stub --quirk` sets it (a keep-alive every
    /// third event, the error after two fragments, indexes from 1).
    pub fn set(self, quirks: &mut Quirks, on: bool) {
        match self {
            Quirk::RepeatName => quirks.repeat_name = on,
            Quirk::EmptyId => quirks.empty_id_continuations = on,
            Quirk::NoIndex => quirks.no_index = on,
            Quirk::IndexFrom1 => quirks.index_base = u64::from(on),
            Quirk::AllAtIndex0 => quirks.all_at_index_zero = on,
            Quirk::ObjectArguments => quirks.object_arguments = on,
            Quirk::Cumulative => quirks.cumulative = on,
            Quirk::Crlf => quirks.crlf = on,
            Quirk::NoSpace => quirks.no_space = on,
            Quirk::Keepalive => quirks.keepalive_every = if on { 3 } else { 0 },
            Quirk::Truncate => quirks.truncate = on,
            Quirk::FinishWithLast => quirks.finish_with_last_fragment = on,
            Quirk::Error => quirks.error_after = on.then_some(2),
            Quirk::PartialArgs => quirks.partial_args = on,
            Quirk::ArgsInStart => quirks.args_in_start = on,
            Quirk::CrcError => quirks.crc_error = on,
        }
    }

    /// The quirks set in `quirks`, in [`Quirk::ALL`] order.
    pub fn set_in(quirks: &Quirks) -> Vec<Quirk> {
        Quirk::ALL
            .iter()
            .copied()
            .filter(|q| q.is_set(quirks))
            .collect()
    }

    /// The quirks `spec`'s stream can carry ([`Quirk::refusal_in`]), in [`Quirk::ALL`] order.
    pub fn applicable_to(spec: &StubSpec) -> Vec<Quirk> {
        Quirk::ALL
            .iter()
            .copied()
            .filter(|q| q.refusal_in(spec).is_none())
            .collect()
    }

    /// The quirks a stream of `shape` can carry, in [`Quirk::ALL`] order.
    pub fn applicable(shape: Shape) -> Vec<Quirk> {
        Quirk::ALL
            .iter()
            .copied()
            .filter(|q| q.refusal(shape).is_none())
            .collect()
    }
}

/// Whether the stub builder can write `spec` as asked: its shape ([`StubShape::refusal`]) and
/// every quirk it sets ([`Quirk::refusal_in`]). The one check `stub`, the app's builder and
/// `generate-corpus` make; the error is one line.
pub fn check(spec: &StubSpec) -> Result<(), String> {
    if let Some(why) = StubShape::of(spec).refusal() {
        return Err(why);
    }
    let refusals = refusals(spec);
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(refusals.join("; "))
    }
}

/// Why `spec`'s stream cannot carry the quirks it sets: one line per quirk it cannot carry
/// (empty: it can carry them all).
pub fn refusals(spec: &StubSpec) -> Vec<String> {
    Quirk::set_in(&spec.quirks)
        .into_iter()
        .filter_map(|q| q.refusal_in(spec))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for q in Quirk::ALL {
            assert!(seen.insert(q.name()), "{}", q.name());
            assert_eq!(Quirk::from_name(q.name()), Some(*q));
        }
        assert_eq!(Quirk::from_name("keep-alive"), Some(Quirk::Keepalive));
        assert_eq!(Quirk::from_name("index-from1"), None);
    }

    /// Every dialect × framing × quirk the table allows builds a stream in which a correct
    /// reader raises one of the quirk's findings; with a second call and arguments long enough
    /// for the quirks that need several fragments (a keep-alive every third, an error after two).
    #[test]
    fn every_allowed_quirk_shows_its_finding_in_every_shape() {
        use crate::analysis::{Analysis, SourceInfo};
        use crate::stub::StubCall;
        let mut walked = 0;
        let mut missing = Vec::new();
        for stub_shape in StubShape::all() {
            for &quirk in Quirk::ALL {
                let mut spec = stub_shape.spec();
                spec.calls = vec![
                    StubCall {
                        id: "call_1".into(),
                        name: "get_weather".into(),
                        arguments: r#"{"city":"Shenzhen","days":3}"#.into(),
                    },
                    StubCall {
                        id: "call_2".into(),
                        name: "get_time".into(),
                        arguments: r#"{"tz":"Asia/Shanghai"}"#.into(),
                    },
                ];
                quirk.set(&mut spec.quirks, true);
                let shape = Shape::of(&spec);
                if quirk.refusal(shape).is_some() {
                    continue;
                }
                walked += 1;
                let rec = stub::build(&spec);
                let a = Analysis::from_recording(
                    &rec,
                    SourceInfo::default(),
                    crate::pipeline::Options::default(),
                );
                if !a
                    .findings
                    .iter()
                    .any(|f| quirk.findings().contains(&f.kind))
                {
                    missing.push(format!(
                        "{} in {stub_shape:?}: none of {:?} among {:?}",
                        quirk.name(),
                        quirk.findings(),
                        a.findings
                            .iter()
                            .map(|f| f.kind.label())
                            .collect::<Vec<_>>()
                    ));
                }
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
        assert!(walked > 100, "{walked}");
    }

    /// Every shape the table lists can be built (no refusal), and a shape outside it is refused.
    #[test]
    fn stub_shapes_are_the_tables() {
        let all = StubShape::all();
        assert!(all.iter().all(|s| s.refusal().is_none()));
        for d in DialectKind::ALL {
            assert!(all.contains(&StubShape {
                dialect: d,
                framing: None,
                invoke_model_stream: false
            }));
            let wrapped = StubShape {
                dialect: d,
                framing: None,
                invoke_model_stream: true,
            };
            assert_eq!(
                all.contains(&wrapped),
                d.invoke_model_stream(),
                "{}",
                d.name()
            );
            assert_eq!(
                wrapped.refusal().is_none(),
                d.invoke_model_stream(),
                "{}",
                d.name()
            );
            for &f in Framing::ALL {
                let framed = StubShape {
                    dialect: d,
                    framing: Some(f),
                    invoke_model_stream: false,
                };
                let text = f.is_text() && d.native_framing().is_text();
                assert_eq!(all.contains(&framed), text, "{} {}", d.name(), f.name());
                assert_eq!(
                    framed.refusal().is_none(),
                    text,
                    "{} {}",
                    d.name(),
                    f.name()
                );
            }
        }
    }

    /// A requested quirk is always written, however little there is to write it into: one
    /// call with one or two fragments, a call without arguments, whole calls, interleaved
    /// calls. Every dialect × framing × quirk the table allows.
    #[test]
    fn every_allowed_quirk_is_written_into_the_smallest_streams() {
        use crate::analysis::{Analysis, SourceInfo};
        use crate::stub::{Layout, StubCall};
        let call = |id: &str, name: &str, args: &str| StubCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        };
        let call_sets: Vec<Vec<StubCall>> = vec![
            vec![call("call_1", "get_time", r#"{"a":1}"#)],
            vec![call("call_1", "ping", "")],
            vec![call("call_1", "ping", "{}")],
            vec![
                call("call_1", "get_time", r#"{"a":1}"#),
                call("call_2", "ping", "{}"),
            ],
        ];
        let mut walked = 0;
        let mut missing = Vec::new();
        for shape in StubShape::all() {
            for calls in &call_sets {
                for fragment_chars in [vec![1], vec![5], vec![1000]] {
                    for whole_calls in [false, true] {
                        for layout in [Layout::Sequential, Layout::Interleaved] {
                            for &quirk in Quirk::ALL {
                                let mut spec = shape.spec();
                                spec.calls = calls.clone();
                                spec.fragment_chars = fragment_chars.clone();
                                spec.whole_calls = whole_calls;
                                spec.layout = layout;
                                quirk.set(&mut spec.quirks, true);
                                if quirk.refusal_in(&spec).is_some() {
                                    continue;
                                }
                                walked += 1;
                                let rec = stub::build(&spec);
                                let a = Analysis::from_recording(
                                    &rec,
                                    SourceInfo::default(),
                                    crate::pipeline::Options::default(),
                                );
                                if !a
                                    .findings
                                    .iter()
                                    .any(|f| quirk.findings().contains(&f.kind))
                                {
                                    missing.push(format!(
                                        "{} in {:?} {:?} calls {:?} fragments {fragment_chars:?} whole {whole_calls} {layout:?}: none of {:?} among {:?}",
                                        quirk.name(),
                                        Shape::of(&spec),
                                        shape,
                                        calls.iter().map(|c| c.arguments.as_str()).collect::<Vec<_>>(),
                                        quirk.findings(),
                                        a.findings.iter().map(|f| f.kind.label()).collect::<Vec<_>>()
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "{} of {walked}:\n{}",
            missing.len(),
            missing.join("\n")
        );
        assert!(walked > 1000, "{walked}");
    }

    #[test]
    fn set_and_is_set_agree_for_every_quirk() {
        for q in Quirk::ALL {
            let mut quirks = Quirks::default();
            q.set(&mut quirks, true);
            assert_eq!(Quirk::set_in(&quirks), vec![*q]);
            q.set(&mut quirks, false);
            assert_eq!(quirks, Quirks::default(), "{}", q.name());
        }
    }
}
