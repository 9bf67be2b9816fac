//! The suite inside `cargo test`, as a user would write it: sse-replay-net's in-process suite
//! server (started like wiremock's `MockServer::start()`) and a real SDK, async-openai, pointed at
//! every case. Clean recordings pass; a quirk shows a named failure. No network: everything is on
//! 127.0.0.1.

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestUserMessage, ChatCompletionTool, ChatCompletionTools,
    CreateChatCompletionRequestArgs, FunctionObjectArgs,
};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use sse_replay_core::dialect::DialectKind;
use sse_replay_net::harness::CaseOutcome;
use sse_replay_net::suite::{CaseReport, SuiteOptions, SuiteServer};

/// The tools a case's recording calls, with loose schemas.
fn tools(names: &[String]) -> Vec<ChatCompletionTools> {
    names
        .iter()
        .filter_map(|name| {
            FunctionObjectArgs::default()
                .name(name)
                .description(name)
                .parameters(json!({"type": "object"}))
                .build()
                .ok()
        })
        .map(|function| ChatCompletionTools::Function(ChatCompletionTool { function }))
        .collect()
}

/// The code under test: stream a chat completion with async-openai and assemble its tool calls
/// the way the crate's streaming examples do (a list indexed by the chunk's `index`, id and name
/// replaced when present, arguments appended). Returns the calls in the client contract's JSON.
pub(crate) async fn assemble(base_url: &str, tool_names: &[String]) -> Result<Value, String> {
    let config = OpenAIConfig::new()
        .with_api_base(format!("{base_url}/v1"))
        .with_api_key("sk-sse-replay-dummy");
    let client = Client::with_config(config);
    let request = CreateChatCompletionRequestArgs::default()
        .model("gpt-stub")
        .messages(vec![
            ChatCompletionRequestUserMessage::from("What is the weather in Shenzhen?").into(),
        ])
        .tools(tools(tool_names))
        .build()
        .map_err(|e| e.to_string())?;
    let mut stream = client
        .chat()
        .create_stream(request)
        .await
        .map_err(|e| e.to_string())?;
    // (id, name, arguments) per index.
    let mut calls: Vec<(String, String, String)> = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        for choice in chunk.choices {
            for tc in choice.delta.tool_calls.unwrap_or_default() {
                let index = tc.index as usize;
                while calls.len() <= index {
                    calls.push(Default::default());
                }
                let call = &mut calls[index];
                if let Some(id) = tc.id {
                    call.0 = id;
                }
                if let Some(f) = tc.function {
                    if let Some(name) = f.name {
                        call.1 = name;
                    }
                    if let Some(args) = f.arguments {
                        call.2.push_str(&args);
                    }
                }
            }
        }
    }
    Ok(Value::Array(
        calls
            .into_iter()
            .map(|(id, name, arguments)| json!({"name": name, "arguments": arguments, "id": id}))
            .collect(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_openai_against_every_openai_chat_case() {
    let suite = SuiteServer::start(
        SuiteOptions::builtin()
            .dialect(DialectKind::OpenAiChat)
            .with_faults()
            .speed(None),
    )
    .expect("start the suite on 127.0.0.1:0");
    let cases = suite.cases();
    assert!(cases.len() > 100, "{} cases", cases.len());
    let mut outcomes: Vec<CaseReport> = Vec::new();
    for case in &cases {
        let outcome = match assemble(&case.base_url, &case.tools).await {
            Ok(calls) => case.check(&calls),
            Err(error) => case.check_failed(&Value::Null, &error),
        };
        outcomes.push(outcome);
    }
    let find = |id: &str| {
        outcomes
            .iter()
            .find(|o| o.case == id)
            .unwrap_or_else(|| panic!("{id} not run"))
    };
    // Clean recordings without quirks pass, in every variant.
    for o in &outcomes {
        let recording = o.case.split('/').next().unwrap_or_default();
        if [
            "openai-chat-weather",
            "openai-chat-text-four-parallel",
            "openai-chat-long-arguments",
            "openai-chat-reasoning-one-call",
        ]
        .contains(&recording)
            && !o.case.ends_with("/cut")
            && !o.case.ends_with("/no-terminator")
        {
            assert_eq!(o.outcome, CaseOutcome::Pass, "{}", o.message());
        }
    }
    // A quirk: every call at index 0 → async-openai's list indexed by `index` merges them.
    let merged = find("quirk-all-at-index-0/one-read");
    assert!(merged.is_failure(), "{}", merged.message());
    assert!(
        merged
            .diagnosis
            .as_deref()
            .is_some_and(|d| d.starts_with("behaves like `concat-all`")),
        "{}",
        merged.message()
    );
    // Empty ids on continuations overwrite the real one: a printed "" is a wrong id (the real
    // one is this run's, varied from the recording's).
    let blanked = find("quirk-empty-id-continuations/bytewise");
    let real = blanked.expected.calls[0].0.id.clone().expect("an id");
    assert_ne!(real, "call_1");
    assert!(
        blanked
            .outcome
            .detail()
            .contains(&format!("id \"\" instead of {real:?}")),
        "{}",
        blanked.message()
    );
    let failures: Vec<String> = outcomes
        .iter()
        .filter(|o| o.is_failure())
        .map(CaseReport::message)
        .collect();
    eprintln!(
        "async-openai 0.43: {} cases, {} failures:\n{}",
        outcomes.len(),
        failures.len(),
        failures.join("\n")
    );
    suite.stop();
}

/// The in-process listing is what `GET /cases` answers with, and the verdict endpoint judges a
/// posted body as `check` does. A case is judged once per session, so each body is posted over
/// HTTP in a session of one server and checked in-process in the same-numbered session of a
/// second server with the same seed (the same values).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listing_and_the_verdict_endpoint_match_the_api() {
    let options = || {
        SuiteOptions::builtin()
            .dialect(DialectKind::OpenAiChat)
            .speed(None)
            .random_seed(31)
    };
    let suite = SuiteServer::start(options()).expect("start");
    let twin = SuiteServer::start(options()).expect("start");
    let http = reqwest::Client::new();
    let text = http
        .get(format!("{}/cases", suite.url()))
        .send()
        .await
        .expect("GET /cases")
        .text()
        .await
        .expect("body");
    let listing: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(listing, suite.listing());
    let key = "openai-chat-weather/bytewise";
    let case = |cases: Vec<sse_replay_net::suite::SuiteCase>| {
        cases.into_iter().find(|c| c.id == key).expect("case")
    };
    // A verdict counts only once the case's stream was requested.
    let unread = case(suite.cases()).check(&json!([]));
    assert!(
        unread
            .outcome
            .detail()
            .starts_with("did not request the stream"),
        "{}",
        unread.message()
    );
    let request = |base: String| {
        let http = http.clone();
        async move {
            http.post(format!("{base}/v1/chat/completions"))
                .body("{}")
                .send()
                .await
                .expect("POST the case")
                .text()
                .await
                .expect("body")
        }
    };
    for printed in [
        json!([]),
        json!([{"name": "get_weather", "arguments": "{\"city\":\"深圳\",\"days\":3.0}"}]),
    ] {
        let (posted_in, checked_in) = (case(suite.session().cases()), case(twin.session().cases()));
        request(posted_in.base_url.clone()).await;
        request(checked_in.base_url.clone()).await;
        let post = || async {
            let text = http
                .post(format!("{}/verdict", posted_in.base_url))
                .body(printed.to_string())
                .send()
                .await
                .expect("POST verdict")
                .text()
                .await
                .expect("body");
            serde_json::from_str::<Value>(&text).expect("JSON")
        };
        let posted = post().await;
        let direct = checked_in.check(&printed);
        assert_eq!(posted, direct.to_json());
        assert_eq!(posted["verdict"], "fail");
        if printed == json!([]) {
            assert_eq!(
                direct.diagnosis.as_deref(),
                Some("printed no calls on this openai-chat stream (2 calls expected)")
            );
        }
        // A second answer in the session is never judged again.
        let again = post().await;
        assert_eq!(again["verdict"], "fail", "{again:#}");
        assert!(
            again["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with("answered twice")),
            "{again:#}"
        );
    }
}

/// The suite server serves a case only to a client that asks for its streaming API: a request
/// for the Messages API (`…/v1/messages`) on an InvokeModel case is answered 404 and its verdict
/// is not judged ("not spoken"), and the other way round; the listing names each case's API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_served_only_the_cases_of_the_api_its_client_asks_for() {
    let suite = SuiteServer::start(
        SuiteOptions::builtin()
            .dialect(DialectKind::AnthropicMessages)
            .variants(&[sse_replay_net::harness::Variant::OneRead])
            .speed(None)
            .random_seed(9),
    )
    .expect("start");
    let listing = suite.listing();
    let api_of = |id: &str| {
        listing["cases"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["id"] == id))
            .map(|c| c["api"].clone())
            .expect("listed")
    };
    let http = reqwest::Client::new();
    for (path, mine) in [
        ("/v1/messages", "the Messages API over SSE"),
        ("/model/m/invoke-with-response-stream", "InvokeModel"),
    ] {
        let (mut served, mut refused) = (0, 0);
        for case in suite.session().cases() {
            let status = http
                .post(format!("{}{path}", case.base_url))
                .body("{}")
                .send()
                .await
                .expect("POST the case")
                .status()
                .as_u16();
            let report = case.check(&json!([]));
            if api_of(&case.id) == mine {
                served += 1;
                assert_eq!(status, 200, "{path}: {}", case.id);
                assert!(
                    !report.outcome.detail().starts_with("not spoken"),
                    "{path}: {}",
                    report.message()
                );
            } else {
                refused += 1;
                assert_eq!(status, 404, "{path}: {}", case.id);
                assert!(
                    matches!(&report.outcome, CaseOutcome::NotJudged(d) if d.starts_with("not spoken: the client asked for anthropic-messages via ")),
                    "{path}: {}",
                    report.message()
                );
            }
        }
        assert!(
            served >= 3 && refused >= 3,
            "{path}: {served} served, {refused} refused"
        );
    }
    suite.stop();
}
