//! Sessions of the suite server: each test keeps its own verdicts, so a fault or broken case is
//! gated by the clean form the same test judged, one test never changes another's results, and
//! two runs on one server never mix. Also: the helpers carry the server's version, and the
//! CI guide's `cargo test` snippet (docs/ci.md) is the one the docs compile.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sse_replay_net::harness::{self, CaseOutcome, Variant};
use sse_replay_net::suite::{CaseReport, SuiteCase, SuiteOptions, SuiteServer};

use crate::suite_api::assemble;

/// A few OpenAI Chat recordings in two framings and both faults: clean cases, broken ones, a
/// quirk async-openai fails, and faults gated by them, quickly.
fn options() -> SuiteOptions {
    let paths: Vec<std::path::PathBuf> = [
        "openai-chat-weather",
        "openai-chat-text-four-parallel",
        "quirk-all-at-index-0",
        "quirk-provider-error",
        "quirk-truncated",
    ]
    .iter()
    .map(|r| format!("{}/../../recordings/{r}.ron", env!("CARGO_MANIFEST_DIR")).into())
    .collect();
    let (suite, unreadable) = harness::load_paths(&paths);
    assert!(unreadable.is_empty(), "{unreadable:?}");
    SuiteOptions {
        suite,
        ..SuiteOptions::builtin()
    }
    .variants(&[Variant::OneRead, Variant::Bytewise])
    .with_faults()
    .speed(None)
}

/// A test that reads every case with async-openai and posts what it assembled.
async fn reads(cases: &[SuiteCase]) -> Vec<CaseReport> {
    let mut out = Vec::new();
    for case in cases {
        out.push(match assemble(&case.base_url, &case.tools).await {
            Ok(calls) => case.check(&calls),
            Err(error) => case.check_failed(&Value::Null, &error),
        });
    }
    out
}

/// A test that reads every stream and then always gives up: right on a broken stream, wrong on a
/// clean one, so its passes on broken and fault cases carry no signal.
async fn gives_up(cases: &[SuiteCase]) -> Vec<CaseReport> {
    let mut out = Vec::new();
    for case in cases {
        let _read = assemble(&case.base_url, &case.tools).await;
        out.push(case.check_failed(&Value::Null, "gave up"));
    }
    out
}

fn passes(reports: &[CaseReport]) -> Vec<&str> {
    reports
        .iter()
        .filter(|r| r.outcome == CaseOutcome::Pass)
        .map(|r| r.case.as_str())
        .collect()
}

fn is_fault(case: &str) -> bool {
    case.ends_with("/cut") || case.ends_with("/no-terminator")
}

fn verdicts(reports: &[CaseReport]) -> BTreeMap<String, String> {
    reports
        .iter()
        .map(|r| (r.case.clone(), r.outcome.name().to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_gives_up_is_not_credited_with_another_tests_passes() {
    let suite = SuiteServer::start(options()).expect("start the suite on 127.0.0.1:0");
    let first = reads(&suite.session().cases()).await;
    // The reading test's faults pass on the clean forms it passed itself.
    assert!(
        passes(&first).iter().any(|c| is_fault(c)),
        "no fault case passed: {:?}",
        verdicts(&first)
    );
    // A runner may run the cases in any order: this one judges the faults before their clean forms.
    let mut backwards = suite.session().cases();
    backwards.reverse();
    let quitter = gives_up(&backwards).await;
    assert_eq!(passes(&quitter), Vec::<&str>::new());
    // Its passes on faults stand on its own clean forms, which it had not passed: not judged.
    for r in quitter.iter().filter(|r| is_fault(&r.case)) {
        assert!(
            matches!(&r.outcome, CaseOutcome::NotJudged(_) | CaseOutcome::Fail(_)),
            "{}",
            r.message()
        );
    }
    // And it changed nothing for another test: a third one that reads gets the first one's verdicts.
    let again = reads(&suite.session().cases()).await;
    assert_eq!(verdicts(&again), verdicts(&first));
    // The session-less cases are a session of their own, untouched by all of the above.
    let fault = suite
        .cases()
        .into_iter()
        .find(|c| is_fault(&c.id))
        .expect("a fault case");
    let report = reads(std::slice::from_ref(&fault)).await;
    assert!(
        matches!(
            report[0].outcome,
            CaseOutcome::NotJudged(_) | CaseOutcome::Fail(_)
        ),
        "{}",
        report[0].message()
    );
    suite.stop();
}

async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_str(&response.text().await.expect("body")).expect("JSON")
}

/// One whole run over HTTP as a helper makes it: opens a session, lists its cases, reads each
/// stream and posts a verdict. `clean_done` is signalled once its clean cases are judged;
/// `before_rest` is awaited before the other cases.
async fn http_run(
    url: &str,
    name: &str,
    give_up: bool,
    clean_done: Option<tokio::sync::oneshot::Sender<()>>,
    before_rest: Option<tokio::sync::oneshot::Receiver<()>>,
) -> (String, BTreeMap<String, String>) {
    let http = reqwest::Client::new();
    let opened = http
        .post(format!("{url}/sessions"))
        .body(json!({ "name": name }).to_string())
        .send()
        .await
        .expect("POST /sessions");
    assert_eq!(opened.status().as_u16(), 201);
    let opened = json_of(opened).await;
    assert_eq!(opened["version"], env!("CARGO_PKG_VERSION"));
    let session_url = opened["url"].as_str().expect("url").to_owned();
    let listing = json_of(
        http.get(opened["cases_url"].as_str().expect("cases_url"))
            .send()
            .await
            .expect("GET cases"),
    )
    .await;
    let cases = listing["cases"].as_array().expect("cases");
    let (mut clean_done, mut before_rest) = (clean_done, before_rest);
    let mut out = BTreeMap::new();
    for case in cases {
        if case["kind"] != "clean" {
            if let Some(tx) = clean_done.take() {
                tx.send(()).ok();
            }
            if let Some(rx) = before_rest.take() {
                rx.await.expect("the other run's clean cases");
            }
        }
        let base = case["base_url"].as_str().expect("base_url");
        assert!(
            base.starts_with(&session_url),
            "{base} outside {session_url}"
        );
        let tools: Vec<String> = serde_json::from_value(case["tools"].clone()).expect("tools");
        let read = assemble(base, &tools).await;
        let body = match (give_up, read) {
            (false, Ok(calls)) => calls,
            (false, Err(error)) => json!({"calls": null, "error": error}),
            (true, _) => json!({"calls": null, "error": "gave up"}),
        };
        let verdict = json_of(
            http.post(case["verdict_url"].as_str().expect("verdict_url"))
                .body(body.to_string())
                .send()
                .await
                .expect("POST verdict"),
        )
        .await;
        out.insert(
            verdict["case"].as_str().expect("case").to_owned(),
            verdict["verdict"].as_str().expect("verdict").to_owned(),
        );
    }
    if let Some(tx) = clean_done.take() {
        tx.send(()).ok();
    }
    (session_url, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_on_one_server_at_once_do_not_mix() {
    let suite = SuiteServer::start(options()).expect("start the suite on 127.0.0.1:0");
    let alone = verdicts(&reads(&suite.session().cases()).await);
    // Both at once; the one that gives up judges its faults only after the other one has passed
    // its clean forms, where a shared store of verdicts would credit it with them.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let url = suite.url();
    let ((reader_url, reader), (quitter_url, quitter)) = tokio::join!(
        http_run(&url, "reads", false, Some(tx), None),
        http_run(&url, "gives up", true, None, Some(rx)),
    );
    assert_ne!(reader_url, quitter_url);
    assert_eq!(reader, alone, "the reading run's verdicts changed");
    let passed: Vec<&String> = quitter
        .iter()
        .filter(|(_, v)| *v == "pass")
        .map(|(c, _)| c)
        .collect();
    assert!(passed.is_empty(), "the run that gives up passed {passed:?}");
    assert_eq!(quitter.len(), alone.len());
    // A closed session is gone; an unknown one is a 404 that says how to open one.
    let http = reqwest::Client::new();
    let closed = http.delete(&quitter_url).send().await.expect("DELETE");
    assert_eq!(closed.status().as_u16(), 200);
    let gone = http
        .get(format!("{quitter_url}/cases"))
        .send()
        .await
        .expect("GET");
    assert_eq!(gone.status().as_u16(), 404);
    assert!(
        gone.text()
            .await
            .expect("body")
            .contains("POST /sessions opens one")
    );
    suite.stop();
}

/// The pytest plugin and the npm package are released with the binary: their versions are the
/// workspace's, which they compare with the server's.
#[test]
fn the_helpers_carry_the_binary_version() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let python = std::fs::read_to_string(format!("{root}/python/sse_replay_pytest/__init__.py"))
        .expect("the plugin's source");
    let line = python
        .lines()
        .find(|l| l.starts_with("__version__ = "))
        .expect("__version__ in the plugin");
    assert_eq!(
        line,
        format!("__version__ = \"{}\"", env!("CARGO_PKG_VERSION"))
    );
    let pyproject =
        std::fs::read_to_string(format!("{root}/python/pyproject.toml")).expect("pyproject.toml");
    assert!(
        pyproject.contains("dynamic = [\"version\"]"),
        "pyproject.toml takes its version from __version__"
    );
    let package: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/js/sse-replay/package.json"))
            .expect("package.json"),
    )
    .expect("JSON");
    assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
}

/// The CI guide's `cargo test` snippet (docs/ci.md) is, line for line, the visible part of the
/// doc test on `SuiteServer` (which `cargo test` compiles).
#[test]
fn the_readme_cargo_snippet_compiles_as_written() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/docs/ci.md")).expect("docs/ci.md");
    let after = readme
        .split_once("**cargo test**")
        .expect("the CI guide's cargo test helper")
        .1;
    let block = after
        .split_once("```rust\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a rust block")
        .0;
    let readme_lines: Vec<&str> = block.lines().collect();
    let source = std::fs::read_to_string(format!("{}/src/suite.rs", env!("CARGO_MANIFEST_DIR")))
        .expect("suite.rs");
    let doc = source
        .split_once("/// ```no_run\n")
        .and_then(|(_, rest)| rest.split_once("/// ```\n"))
        .expect("the doc test")
        .0;
    let visible: Vec<&str> = doc
        .lines()
        .map(|l| l.trim_start().trim_start_matches("///"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .filter(|l| *l != "#" && !l.starts_with("# "))
        .collect();
    assert_eq!(readme_lines, visible);
}
