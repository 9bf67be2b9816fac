//! A generated corpus of small captures, for `scan`'s tests and benchmarks and the app's Corpus
//! tab (`sse-replay generate-corpus`): capture `n` of corpus `seed` is built by the stub builder
//! from a spec drawn from a generator seeded with `(seed, n)` alone, so any capture can be made
//! on its own, in any order or in parallel, and the same seed always gives the same files.
//!
//! The captures look like what the Proxy writes: a recording with the request (a provider's
//! host, a model in the body or in the URL) and the response head, read boundaries and times
//! (a first byte after 0.1–2 s, then events 5–80 ms apart), and no ground truth. They cover every
//! dialect the stub builder knows ([`DialectKind::ALL`]) and, in about half of them, one quirk
//! (the ones a dialect does not have are ignored by the builder, as in `sse-replay stub`).

use crate::dialect::DialectKind;
use crate::quirk::Quirk;
use crate::recording::{Recording, RequestInfo, ResponseInfo};
use crate::stub::{self, Layout, Quirks, StubCall, StubSpec};

/// One generated capture: its file name and the recording.
#[derive(Clone, Debug, PartialEq)]
pub struct Capture {
    /// `NNNNNN-<dialect>[-<quirk>].ron`.
    pub file_name: String,
    pub recording: Recording,
}

/// Provider hosts and models per dialect.
fn providers(dialect: DialectKind) -> &'static [(&'static str, &'static [&'static str])] {
    use DialectKind as D;
    match dialect {
        D::OpenAiChat => &[
            ("api.openai.com", &["gpt-4o", "gpt-4.1-mini"]),
            (
                "openrouter.ai",
                &["qwen/qwen3-coder", "mistralai/mistral-large"],
            ),
        ],
        D::OpenAiResponses => &[("api.openai.com", &["gpt-4.1", "o4-mini"])],
        D::AnthropicMessages => &[(
            "api.anthropic.com",
            &["claude-sonnet-4", "claude-3-5-haiku"],
        )],
        D::Gemini => &[(
            "generativelanguage.googleapis.com",
            &["gemini-2.5-flash", "gemini-2.0-flash"],
        )],
        D::Ollama => &[("localhost:11434", &["llama3.2", "qwen2.5"])],
        D::Cohere => &[("api.cohere.com", &["command-a-03-2025", "command-r-plus"])],
        D::OpenAiAssistants => &[("api.openai.com", &["gpt-4o", "gpt-4o-mini"])],
        D::BedrockConverse => &[(
            "bedrock-runtime.us-east-1.amazonaws.com",
            &["anthropic.claude-3-5-sonnet", "moonshotai.kimi-k2"],
        )],
        // The AI SDK UI stream comes from the user's own app server.
        D::AiSdkUi => &[("localhost:8080", &["local-model"])],
    }
}

/// Where a dialect's streaming request names its model, which decides the request body's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ModelIn {
    /// In the JSON body, with `"stream": true` and chat `messages`.
    Body,
    /// In the URL, Gemini's way (`contents` in the body).
    GeminiUrl,
    /// In the URL, Bedrock's way (Converse `messages` in the body).
    BedrockUrl,
}

/// The request path of a dialect's streaming endpoint, and where the model goes.
fn endpoint(dialect: DialectKind, model: &str) -> (String, ModelIn) {
    use DialectKind as D;
    match dialect {
        D::OpenAiChat => ("/v1/chat/completions".into(), ModelIn::Body),
        D::OpenAiResponses => ("/v1/responses".into(), ModelIn::Body),
        D::AnthropicMessages => ("/v1/messages".into(), ModelIn::Body),
        D::Gemini => (
            format!("/v1beta/models/{model}:streamGenerateContent?alt=sse"),
            ModelIn::GeminiUrl,
        ),
        D::Ollama => ("/api/chat".into(), ModelIn::Body),
        D::Cohere => ("/v2/chat".into(), ModelIn::Body),
        D::OpenAiAssistants => ("/v1/threads/runs".into(), ModelIn::Body),
        D::BedrockConverse => (
            format!("/model/{model}/converse-stream"),
            ModelIn::BedrockUrl,
        ),
        D::AiSdkUi => ("/v1/stream".into(), ModelIn::Body),
    }
}

const NAMES: &[&str] = &[
    "get_weather",
    "get_time",
    "search_flights",
    "lookup_order",
    "send_email",
    "create_ticket",
];
const CITIES: &[&str] = &["Paris", "深圳", "São Paulo", "Zürich", "東京", "New York"];

fn arguments(rng: &mut fastrand::Rng, name: &str) -> String {
    let city = CITIES[rng.usize(..CITIES.len())];
    let v = match name {
        "get_weather" => {
            serde_json::json!({"location": city, "unit": if rng.bool() {"celsius"} else {"fahrenheit"}, "days": rng.u32(1..8)})
        }
        "get_time" => serde_json::json!({"city": city}),
        "search_flights" => {
            serde_json::json!({"from": city, "to": CITIES[rng.usize(..CITIES.len())], "passengers": rng.u32(1..5), "flexible": rng.bool()})
        }
        "lookup_order" => serde_json::json!({"order_id": format!("A-{}", rng.u32(10_000..99_999))}),
        "send_email" => {
            serde_json::json!({"to": "someone@example.com", "subject": format!("Re: {city} \"trip\""), "body": "Line one.\nLine two: ✓"})
        }
        _ => {
            serde_json::json!({"title": format!("Issue in {city}"), "priority": rng.u32(1..4), "tags": ["a", "b"]})
        }
    };
    v.to_string()
}

/// What capture `n` of corpus `seed` is drawn to be: the stub spec (built by the same builder
/// `sse-replay stub` and the app's builder call, after the same check), its quirk, its provider
/// and when its first byte comes.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// What the stub builder builds.
    pub spec: StubSpec,
    /// The quirk set in the spec, if any (its name goes into the file name).
    pub quirk: Option<Quirk>,
    /// The provider's host.
    pub host: &'static str,
    /// The model asked for.
    pub model: &'static str,
    /// Microseconds before the first byte (the model's thinking time).
    pub first_byte: u64,
}

/// The plan of capture `n` of the corpus of `seed` ([`capture`] builds it).
pub fn plan(seed: u64, n: u64) -> Plan {
    // SplitMix64-style mixing: neighbouring `n` give unrelated generators.
    let mut z = seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    let mut rng = fastrand::Rng::with_seed(z ^ (z >> 31));
    let dialect = DialectKind::ALL[rng.usize(..DialectKind::ALL.len())];
    let hosts = providers(dialect);
    let (host, models) = hosts[rng.usize(..hosts.len())];
    let model = models[rng.usize(..models.len())];
    let calls = (0..rng.usize(1..=3))
        .map(|i| {
            let name = NAMES[rng.usize(..NAMES.len())];
            StubCall {
                id: format!("call_{}", rng.u32(100_000..999_999) as usize * 10 + i),
                name: name.into(),
                arguments: arguments(&mut rng, name),
            }
        })
        .collect::<Vec<_>>();
    // Only the quirks this stream can carry (the one rule `sse-replay stub` and the app's
    // builder follow: its shape and its calls); the quirk's one name goes into the file name,
    // and the stub builder writes every quirk it is given, however short the stream.
    let candidates = Quirk::applicable_to(&StubSpec {
        calls: calls.clone(),
        dialect,
        ..StubSpec::default()
    });
    let quirk =
        (rng.bool() && !candidates.is_empty()).then(|| candidates[rng.usize(..candidates.len())]);
    let mut quirks = Quirks::default();
    if let Some(q) = quirk {
        q.set(&mut quirks, true);
    }
    // Some captures come in small network reads (characters and lines split across reads): a
    // chunking, not a quirk of the stream, so not in the file name.
    let read_bytes = (rng.u8(..6) == 0).then(|| rng.usize(17..90));
    let spec = StubSpec {
        title: format!(
            "Generated capture {n} (seed {seed}): {} via {host}",
            dialect.title()
        ),
        calls,
        fragment_chars: (0..rng.usize(1..4)).map(|_| rng.usize(3..16)).collect(),
        layout: if rng.u8(..4) == 0 {
            Layout::Interleaved
        } else {
            Layout::Sequential
        },
        read_bytes,
        gap_micros: rng.u64(5_000..80_000),
        quirks,
        dialect,
        minimal: false,
        ..StubSpec::default()
    };
    Plan {
        spec,
        quirk,
        host,
        model,
        first_byte: rng.u64(100_000..2_000_000),
    }
}

/// Capture `n` of the corpus of `seed`.
pub fn capture(seed: u64, n: u64) -> Capture {
    let Plan {
        spec,
        quirk,
        host,
        model,
        first_byte,
    } = plan(seed, n);
    let dialect = spec.dialect;
    let mut rec = stub::build(&spec);
    // A capture, not a stub: no ground truth, the request and response head, a first byte after
    // the model's thinking time.
    for c in &mut rec.chunks {
        c.t_micros += first_byte;
    }
    rec.truth.clear();
    let (path, model_in) = endpoint(dialect, model);
    let scheme = if host.starts_with("localhost") {
        "http"
    } else {
        "https"
    };
    let body = match model_in {
        ModelIn::BedrockUrl => {
            serde_json::json!({"messages": [{"role": "user", "content": [{"text": "Plan my trip"}]}]})
        }
        ModelIn::GeminiUrl => {
            serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "Plan my trip"}]}]})
        }
        ModelIn::Body => {
            serde_json::json!({"model": model, "stream": true, "messages": [{"role": "user", "content": "Plan my trip"}]})
        }
    };
    rec.request = Some(RequestInfo {
        method: "POST".into(),
        url: format!("{scheme}://{host}{path}"),
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.to_string(),
    });
    let content_type = dialect.native_framing().content_type();
    rec.response = Some(ResponseInfo {
        status: 200,
        headers: vec![("content-type".into(), content_type.into())],
    });
    rec.meta.source = "generated".into();
    rec.meta.created = "2025-01-01T00:00:00Z".into();
    rec.meta.notes = vec![format!(
        "Generated by `sse-replay generate-corpus --seed {seed}` (capture {n}): a stub with a capture's request, response head and timing; no ground truth."
    )];
    let file_name = match quirk {
        Some(q) => format!("{n:06}-{}-{}.ron", dialect.name(), q.name()),
        None => format!("{n:06}-{}.ron", dialect.name()),
    };
    Capture {
        file_name,
        recording: rec,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quirk::Shape;

    #[test]
    fn the_same_seed_gives_the_same_captures_and_another_seed_others() {
        for n in [0, 1, 7, 9999] {
            assert_eq!(capture(42, n), capture(42, n));
        }
        let names: Vec<String> = (0..50).map(|n| capture(42, n).file_name).collect();
        let other: Vec<String> = (0..50).map(|n| capture(43, n).file_name).collect();
        assert_ne!(names, other);
    }

    /// The quirk word in a file name is the quirk's one name (the one `stub --quirk` takes), and
    /// the capture holds one of the findings that quirk raises.
    #[test]
    fn every_quirk_in_a_file_name_is_named_as_stub_names_it_and_found_inside() {
        use crate::analysis::{Analysis, SourceInfo};
        let mut seen = 0;
        for n in 0..600 {
            let c = capture(7, n);
            let dialect = &c.recording.meta.dialect;
            let rest = c
                .file_name
                .strip_suffix(".ron")
                .and_then(|s| s.split_once('-'))
                .map(|(_, rest)| rest)
                .expect("NNNNNN-<dialect>[-<quirk>].ron");
            let Some(word) = rest
                .strip_prefix(dialect.as_str())
                .and_then(|r| r.strip_prefix('-'))
            else {
                assert_eq!(rest, dialect, "{}", c.file_name);
                continue;
            };
            let quirk = Quirk::from_name(word).unwrap_or_else(|| panic!("{}", c.file_name));
            assert_eq!(quirk.name(), word, "{}", c.file_name);
            let a = Analysis::from_recording(
                &c.recording,
                SourceInfo::default(),
                crate::pipeline::Options::default(),
            );
            assert!(
                a.findings
                    .iter()
                    .any(|f| quirk.findings().contains(&f.kind)),
                "{}: none of {:?} among {:?}",
                c.file_name,
                quirk.findings(),
                a.findings
                    .iter()
                    .map(|f| f.kind.label())
                    .collect::<Vec<_>>()
            );
            seen += 1;
        }
        assert!(seen > 200, "{seen}");
    }

    /// Each capture is the stub builder's stream for its plan's spec (the one `stub` and the
    /// app's builder build, see the CLI's agreement walk), read at the plan's times; the spec
    /// passes the one check they make, and its quirk is the one the file name gives.
    #[test]
    fn every_capture_is_the_stub_builders_stream_for_its_spec() {
        for n in 0..400 {
            let p = plan(11, n);
            let c = capture(11, n);
            assert_eq!(crate::quirk::check(&p.spec), Ok(()), "{}", c.file_name);
            assert_eq!(
                Quirk::set_in(&p.spec.quirks),
                p.quirk.into_iter().collect::<Vec<_>>()
            );
            let stub = stub::build(&p.spec);
            assert_eq!(
                stub.chunks.len(),
                c.recording.chunks.len(),
                "{}",
                c.file_name
            );
            for (s, r) in stub.chunks.iter().zip(&c.recording.chunks) {
                assert_eq!(s.bytes, r.bytes, "{}", c.file_name);
                assert_eq!(s.t_micros + p.first_byte, r.t_micros, "{}", c.file_name);
            }
        }
    }

    #[test]
    fn the_corpus_covers_every_dialect_and_quirk_and_each_capture_is_small() {
        let mut dialects = std::collections::HashSet::new();
        let mut quirks = std::collections::HashSet::new();
        for n in 0..3000 {
            let c = capture(7, n);
            dialects.insert(c.recording.meta.dialect.clone());
            if let Some(q) = c
                .file_name
                .strip_suffix(".ron")
                .and_then(|s| s.split_once('-'))
                .and_then(|(_, rest)| rest.strip_prefix(&format!("{}-", c.recording.meta.dialect)))
            {
                quirks.insert(q.to_owned());
            }
            let len = c.recording.to_ron_string().len();
            // A binary (AWS event stream) body is written as a list of numbers, about four
            // characters a byte.
            let limit = if c.recording.meta.dialect == "bedrock-converse" {
                96_000
            } else {
                40_000
            };
            assert!(len < limit, "{} is {len} bytes", c.file_name);
            assert!(c.recording.request.is_some());
        }
        assert_eq!(dialects.len(), DialectKind::ALL.len(), "{dialects:?}");
        let every: std::collections::HashSet<String> = DialectKind::ALL
            .iter()
            .flat_map(|&dialect| {
                Quirk::applicable(Shape {
                    dialect,
                    framing: dialect.native_framing(),
                })
            })
            .map(|q| q.name().to_owned())
            .collect();
        assert_eq!(quirks, every);
    }
}
