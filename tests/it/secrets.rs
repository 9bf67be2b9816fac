//! Secrets never on disk: a table of planted secrets — in headers (known and unknown auth
//! headers, cookies), in the URL (query keys, percent-encoded keys, `user:pw@`), in JSON bodies at
//! depth and in form bodies — sent through `record` and the `proxy`, and imported from HAR files
//! and cassettes; every written file is grepped for every secret. `--keep-secrets` keeps them.
//! Servers run on 127.0.0.1:0; every child process is bounded in time and killed on drop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::mpsc;
use std::time::Duration;

use sse_replay_core::recording::Recording;

use common::{canned_upstream, start_server, stderr};

/// Where each secret is planted, and the secret itself (unique, so a grep names the leak).
const TABLE: &[(&str, &str)] = &[
    ("Authorization header", "sk-SECRET-authorization-1"),
    ("X-Auth header", "SECRET-x-auth-2"),
    ("X-Api-Token header", "SECRET-x-api-token-3"),
    ("X-Session-Id header", "SECRET-session-4"),
    ("Cookie header", "SECRET-cookie-5"),
    ("?key= query", "SECRET-query-key-6"),
    ("?%6Bey= query", "SECRET-encoded-key-7"),
    ("user:pw@", "SECRET-password-8"),
    ("body api_key", "SECRET-body-api-key-9"),
    ("body apiKey at depth", "SECRET-body-deep-10"),
    ("body client_secret", "SECRET-body-client-secret-11"),
    ("body password", "SECRET-body-password-12"),
    ("body access_token", "SECRET-body-access-token-13"),
];

fn secret(place: &str) -> &'static str {
    TABLE
        .iter()
        .find(|(p, _)| *p == place)
        .map(|(_, s)| *s)
        .unwrap()
}

/// The JSON request body with its planted secrets (and counters that must stay readable).
fn json_body() -> String {
    serde_json::json!({
        "model": "m",
        "stream": true,
        "max_tokens": 77,
        "api_key": secret("body api_key"),
        "metadata": {"config": [{"auth": {"apiKey": secret("body apiKey at depth")}}], "token_count": 5},
        "client_secret": secret("body client_secret"),
        "password": secret("body password"),
        "access_token": secret("body access_token"),
    })
    .to_string()
}

/// The form body's secret (recorded in a second run: a request has one body).
const FORM_SECRET: &str = "SECRET-form-client-secret-14";

const SSE: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";

/// The gaps an outside review found, each planted once: form bodies with odd characters, arrays
/// under secret keys, header pairs inside JSON, `jwt` and its family, user-only userinfo, URL
/// fragments, multipart bodies.
const MORE: &[(&str, &str)] = &[
    ("form value with a space", "SECRET-form-space-15"),
    ("form value in quotes", "SECRET-form-quote-16"),
    ("form value in braces", "SECRET-form-brace-17"),
    ("form pair after a newline", "SECRET-form-newline-18"),
    ("array under a secret key", "SECRET-array-19"),
    ("header pair in JSON", "SECRET-header-pair-20"),
    ("name/value header object in JSON", "SECRET-name-value-21"),
    ("body jwt", "SECRET-jwt-22"),
    ("body client_assertion", "SECRET-assertion-23"),
    ("user-only userinfo", "SECRET-userinfo-24"),
    ("URL fragment access_token", "SECRET-fragment-25"),
    ("multipart part named api_key", "SECRET-multipart-26"),
    ("JSON inside a multipart part", "SECRET-multipart-json-27"),
    ("body x_session_key", "SECRET-session-key-28"),
];

fn more(place: &str) -> &'static str {
    MORE.iter()
        .find(|(p, _)| *p == place)
        .map(|(_, s)| *s)
        .unwrap()
}

/// Secrets found by their shape or by a metadata pair's name field, not by the key they sit
/// under: `{"key": "Authorization", "value": …}` pairs, keys under ordinary names (`sk-…`,
/// `AKIA…`, a JWT, `ghp_…`, `xoxb-…` in a sentence, `AIza…` in an ordinary header) and a key in
/// a URL path segment (logged by the proxy and `serve`, and in capture titles).
const SHAPES: &[(&str, &str)] = &[
    ("key/value metadata pair", "SECRET-metadata-key-pair-29"),
    ("name/value metadata pair", "SECRET-metadata-name-pair-30"),
    (
        "sk- under an ordinary key",
        "sk-proj-Pl4ntedOrdinaryKey31abcdef",
    ),
    ("AKIA under an ordinary key", "AKIAPLANTED000KEY032"),
    (
        "JWT under an ordinary key",
        "eyJhbGciOiJIUzI1NiJ9.eyJwbGFudGVkIjozM30.UGxhbnRlZFNpZ25hdHVyZTMz",
    ),
    (
        "ghp_ under an ordinary key",
        "ghp_Pl4nted34GithubToken000000000000000",
    ),
    (
        "key in a URL path segment",
        "sk-proj-Pl4ntedPathKey35abcdef",
    ),
    (
        "xoxb- inside a sentence",
        "xoxb-1234567890-Pl4nted36SlackToken",
    ),
    (
        "AIza in an ordinary header",
        "AIzaSyPl4nted37GoogleKey000000000000000",
    ),
];

fn shape(place: &str) -> &'static str {
    SHAPES
        .iter()
        .find(|(p, _)| *p == place)
        .map(|(_, s)| *s)
        .unwrap()
}

/// Every secret planted here: the table's, the form secret, [`MORE`] and [`SHAPES`].
fn planted() -> Vec<&'static str> {
    TABLE
        .iter()
        .chain(MORE)
        .chain(SHAPES)
        .map(|(_, s)| *s)
        .chain([FORM_SECRET])
        .collect()
}

/// Every planted secret that occurs in `text`.
fn leaks(text: &str) -> Vec<&'static str> {
    planted().into_iter().filter(|s| text.contains(s)).collect()
}

/// Every file under `dir` (recursively), as text.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.push_str(&all_text(&path));
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// Runs `sse-replay ARGS` to completion (at most 60 s), with extra environment variables.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    common::run_env(&common::manifest(), args, env, Duration::from_secs(60))
}

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nset-cookie: sid=SECRET-cookie-5";

/// An upstream answering every request with `SSE`; sends each request it read.
fn upstream() -> (String, mpsc::Receiver<String>) {
    canned_upstream(SSE_HEAD, SSE)
}

/// The headers that carry secrets, as `-H` arguments.
fn header_args() -> Vec<String> {
    vec![
        "Authorization: Bearer $SSE_SECRET".into(),
        format!("X-Auth: {}", secret("X-Auth header")),
        format!("X-Api-Token: {}", secret("X-Api-Token header")),
        format!("X-Session-Id: {}", secret("X-Session-Id header")),
        format!("Cookie: sid={}", secret("Cookie header")),
        "Content-Type: application/json".into(),
    ]
}

fn url_with_secrets(base: &str) -> String {
    let base = base.replacen("://", &format!("://user:{}@", secret("user:pw@")), 1);
    format!(
        "{base}/v1/chat?%6Bey={}&key={}&max_tokens=9",
        secret("?%6Bey= query"),
        secret("?key= query")
    )
}

// ---------------------------------------------------------------------------------------------
// record
// ---------------------------------------------------------------------------------------------

#[test]
fn record_writes_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let (base, requests) = upstream();
    let out = dir.path().join("rec.ron");
    let body = json_body();
    let mut args: Vec<String> = vec!["record".into(), url_with_secrets(&base), "-d".into(), body];
    for h in header_args() {
        args.extend(["-H".into(), h]);
    }
    args.extend(["-o".into(), out.to_str().unwrap().into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args, &[("SSE_SECRET", secret("Authorization header"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The secrets went over the wire (all but the password, which became a Basic header)...
    let sent = requests.recv_timeout(Duration::from_secs(10)).unwrap();
    for (place, s) in TABLE {
        if *place != "user:pw@" {
            assert!(sent.contains(s), "{place} was not sent: {sent}");
        }
    }
    // ...and none reached the disk, the terminal, or the summary.
    let text = all_text(dir.path());
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    assert_eq!(leaks(&stderr(&o)), Vec::<&str>::new());
    assert_eq!(
        leaks(&String::from_utf8_lossy(&o.stdout)),
        Vec::<&str>::new()
    );
    // Counters stay readable; the body is still JSON.
    let rec = Recording::load(&out).unwrap();
    let req = rec.request.unwrap();
    let sent_body: serde_json::Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(sent_body["max_tokens"], 77);
    assert_eq!(sent_body["metadata"]["token_count"], 5);
    assert!(req.url.contains("max_tokens=9"), "{}", req.url);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}

#[test]
fn record_redacts_form_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let (base, _requests) = upstream();
    let out = dir.path().join("form.ron");
    let form = format!("grant_type=client_credentials&client_secret={FORM_SECRET}&scope=a+b");
    let o = run(
        &[
            "record",
            &format!("{base}/token"),
            "-d",
            &form,
            "-H",
            "Content-Type: application/x-www-form-urlencoded",
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = all_text(dir.path());
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    let req = Recording::load(&out).unwrap().request.unwrap();
    assert_eq!(
        req.body,
        "grant_type=client_credentials&client_secret=REDACTED&scope=a+b"
    );
}

#[test]
fn keep_secrets_is_the_explicit_opt_out() {
    let dir = tempfile::tempdir().unwrap();
    let (base, _requests) = upstream();
    let out = dir.path().join("kept.ron");
    let o = run(
        &[
            "record",
            &format!("{base}/v1?key={}", secret("?key= query")),
            "-d",
            &json_body(),
            "-H",
            &format!("X-Auth: {}", secret("X-Auth header")),
            "-o",
            out.to_str().unwrap(),
            "--keep-secrets",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    for place in [
        "?key= query",
        "X-Auth header",
        "body api_key",
        "body apiKey at depth",
    ] {
        assert!(text.contains(secret(place)), "{place} not kept");
    }
}

// ---------------------------------------------------------------------------------------------
// proxy
// ---------------------------------------------------------------------------------------------

#[test]
fn proxy_captures_write_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let (base, requests) = upstream();
    let captures = dir.path().join("captures");
    let (_proxy, proxy, lines) = start_server(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &base,
        "--out",
        captures.to_str().unwrap(),
    ]);
    let target = url_with_secrets(proxy.trim_end_matches('/')).replacen(
        &format!("user:{}@", secret("user:pw@")),
        "",
        1,
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let received = rt.block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(10)).unwrap();
        let mut req = client.post(&target).body(json_body());
        for h in header_args() {
            let (name, value) = h.split_once(':').unwrap();
            let value = value
                .trim()
                .replace("$SSE_SECRET", secret("Authorization header"));
            req = req.header(name.trim(), value);
        }
        req.send().await.unwrap().text().await.unwrap()
    });
    assert_eq!(received, SSE);
    let sent = requests.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(sent.contains(secret("body api_key")), "forwarded unchanged");
    let line = lines.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(line.starts_with("captured "), "{line}");
    let text = all_text(&captures);
    assert!(text.contains("max_tokens"), "{text}");
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
}

// ---------------------------------------------------------------------------------------------
// imports
// ---------------------------------------------------------------------------------------------

#[test]
fn har_imports_write_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_with_secrets("https://api.example.com");
    let mut headers: Vec<serde_json::Value> = header_args()
        .iter()
        .map(|h| {
            let (name, value) = h.split_once(':').unwrap();
            let value = value
                .trim()
                .replace("$SSE_SECRET", secret("Authorization header"));
            serde_json::json!({"name": name.trim(), "value": value})
        })
        .collect();
    headers.push(serde_json::json!({"name": "Accept", "value": "text/event-stream"}));
    let har = serde_json::json!({"log": {"entries": [{
        "request": {"method": "POST", "url": url, "headers": headers,
                    "postData": {"mimeType": "application/json", "text": json_body()}},
        "response": {"status": 200,
                     "headers": [{"name": "content-type", "value": "text/event-stream"},
                                 {"name": "set-cookie", "value": "sid=SECRET-cookie-5"}],
                     "content": {"mimeType": "text/event-stream", "text": SSE}}
    }]}});
    let input = dir.path().join("in.har");
    std::fs::write(&input, har.to_string()).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = run(
        &[
            "import",
            input.to_str().unwrap(),
            "-o",
            out.join("har.ron").to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = all_text(&out);
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    assert_eq!(
        leaks(&String::from_utf8_lossy(&o.stdout)),
        Vec::<&str>::new()
    );
    // With --keep-secrets they are all there.
    let o = run(
        &[
            "import",
            input.to_str().unwrap(),
            "-o",
            out.join("kept.ron").to_str().unwrap(),
            "--keep-secrets",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = std::fs::read_to_string(out.join("kept.ron")).unwrap();
    assert_eq!(leaks(&kept).len(), TABLE.len(), "{kept}");
}

#[test]
fn cassette_imports_write_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_with_secrets("https://api.example.com");
    let mut headers = serde_json::Map::new();
    for h in header_args() {
        let (name, value) = h.split_once(':').unwrap();
        let value = value
            .trim()
            .replace("$SSE_SECRET", secret("Authorization header"));
        headers.insert(name.trim().to_owned(), serde_json::json!([value]));
    }
    // YAML is a superset of JSON: write the cassette as JSON, with a pydantic-ai `parsed_body`
    // in a second interaction.
    let cassette = serde_json::json!({"interactions": [
        {"request": {"method": "POST", "uri": url, "headers": headers, "body": json_body()},
         "response": {"status": {"code": 200, "message": "OK"},
                      "headers": {"Content-Type": ["text/event-stream"], "Set-Cookie": ["sid=SECRET-cookie-5"]},
                      "body": {"string": SSE}}},
        {"request": {"method": "POST", "uri": "https://api.example.com/v1/x",
                     "parsed_body": serde_json::from_str::<serde_json::Value>(&json_body()).unwrap()},
         "response": {"status": {"code": 200, "message": "OK"},
                      "headers": {"Content-Type": ["text/event-stream"]},
                      "body": {"string": SSE}}}
    ]});
    let input = dir.path().join("cassette.yaml");
    std::fs::write(&input, cassette.to_string()).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = run(
        &[
            "import",
            input.to_str().unwrap(),
            "-o",
            out.join("c.ron").to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let files: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let text = all_text(&out);
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    assert!(text.contains("max_tokens"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// The gaps: odd form bodies, arrays, header pairs in JSON, jwt, user-only userinfo, fragments,
// multipart — through record, the proxy and import, and every place a URL is printed.
// ---------------------------------------------------------------------------------------------

/// A JSON body with the JSON-shaped gaps planted (and what must stay readable).
fn json_gaps_body() -> String {
    serde_json::json!({
        "model": "m",
        "stream": true,
        "max_tokens": 5,
        "secrets": [more("array under a secret key"), 7],
        "headers": [["Authorization", format!("Bearer {}", more("header pair in JSON"))], ["Accept", "text/event-stream"]],
        "extra_headers": [{"name": "X-Api-Key", "value": more("name/value header object in JSON")}, {"name": "Accept", "value": "*/*"}],
        "jwt": more("body jwt"),
        "client_assertion": more("body client_assertion"),
        "x_session_key": more("body x_session_key"),
    })
    .to_string()
}

/// The form bodies with odd characters around their secret.
fn form_gaps_bodies() -> Vec<String> {
    vec![
        format!(
            "grant_type=x&client_secret={} and more&scope=a b",
            more("form value with a space")
        ),
        format!(
            "grant_type=x&client_secret=\"{}\"&scope=a",
            more("form value in quotes")
        ),
        format!(
            "grant_type=x&client_secret={{{}}}&scope=a",
            more("form value in braces")
        ),
        format!(
            "grant_type=x\nclient_secret={}\nscope=a",
            more("form pair after a newline")
        ),
    ]
}

/// A multipart body with a secret part and a JSON part holding one.
fn multipart_gaps_body() -> String {
    format!(
        "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"api_key\"\r\n\r\n{}\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"config\"\r\nContent-Type: application/json\r\n\r\n{{\"token\":\"{}\",\"n\":1}}\r\n\
         --XyZ--\r\n",
        more("multipart part named api_key"),
        more("JSON inside a multipart part")
    )
}

/// `base` (`http://host:port`) with a user-only userinfo, a path, a counter and a fragment
/// carrying a token.
fn url_with_gaps(base: &str) -> String {
    let base = base.replacen("://", &format!("://{}@", more("user-only userinfo")), 1);
    format!(
        "{base}/v1/chat?max_tokens=9#access_token={}&state=s",
        more("URL fragment access_token")
    )
}

#[test]
fn record_closes_every_gap_on_disk_and_on_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut bodies = vec![json_gaps_body(), multipart_gaps_body()];
    bodies.extend(form_gaps_bodies());
    for (i, body) in bodies.iter().enumerate() {
        let (base, requests) = upstream();
        let out = dir.path().join(format!("gap-{i}.ron"));
        // `--data=…`: the multipart body starts with `--`.
        let o = run(
            &[
                "record",
                &url_with_gaps(&base),
                &format!("--data={body}"),
                "-o",
                out.to_str().unwrap(),
            ],
            &[],
        );
        assert!(o.status.success(), "{i}: {}", stderr(&o));
        let sent = requests.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(!leaks(&sent).is_empty(), "{i}: the secrets were sent");
        let req = Recording::load(&out).unwrap().request.unwrap();
        assert!(req.url.contains("max_tokens=9"), "{}", req.url);
        if i == 0 {
            let v: serde_json::Value = serde_json::from_str(&req.body).unwrap();
            assert_eq!(v["max_tokens"], 5);
            assert_eq!(v["headers"][1][1], "text/event-stream", "{v}");
            assert_eq!(v["extra_headers"][1]["value"], "*/*", "{v}");
        }
    }
    let text = all_text(dir.path());
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    // A failed connection prints the URL on standard error: redacted too.
    let o = run(
        &[
            "record",
            &url_with_gaps("http://127.0.0.1:9"),
            "-d",
            &json_gaps_body(),
            "-o",
            dir.path().join("never.ron").to_str().unwrap(),
            "--timeout",
            "5",
        ],
        &[],
    );
    assert!(!o.status.success());
    let printed = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
    assert!(printed.contains("127.0.0.1:9"), "{printed}");
    assert_eq!(leaks(&printed), Vec::<&str>::new(), "{printed}");
}

#[test]
fn the_proxy_closes_every_gap_in_captures_and_on_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let (base, _requests) = upstream();
    let captures = dir.path().join("captures");
    let upstream_url = base.replacen("://", &format!("://{}@", more("user-only userinfo")), 1);
    let mut child = common::bin()
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream_url,
            "--out",
            captures.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let err = child.stderr.take().unwrap();
    let err_t = std::thread::spawn(move || {
        let mut v = String::new();
        std::io::Read::read_to_string(&mut std::io::BufReader::new(err), &mut v).ok();
        v
    });
    let kid = common::Kid(child);
    let mut first = String::new();
    std::io::BufRead::read_line(&mut out, &mut first).unwrap();
    let proxy = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let mut bodies = vec![json_gaps_body(), multipart_gaps_body()];
    bodies.extend(form_gaps_bodies());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(10)).unwrap();
        for body in &bodies {
            let got = client
                .post(format!("{proxy}/v1/chat?max_tokens=9"))
                .body(body.clone())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(got, SSE);
        }
    });
    // Every capture saved (one stdout line each), then a clean stop.
    let mut lines = String::new();
    for _ in 0..bodies.len() {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        assert!(line.starts_with("captured "), "{line}");
        lines.push_str(&line);
    }
    kid.signal("TERM");
    let mut kid = kid;
    kid.wait_exit(Duration::from_secs(20));
    let printed = format!("{}{lines}", err_t.join().unwrap());
    assert!(printed.contains("forwarding to"), "{printed}");
    assert_eq!(leaks(&printed), Vec::<&str>::new(), "{printed}");
    let text = all_text(&captures);
    assert!(text.contains("max_tokens"), "{text}");
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
}

#[test]
fn imports_close_every_gap_and_the_stream_list_shows_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_with_gaps("https://api.example.com");
    let mut bodies = vec![json_gaps_body(), multipart_gaps_body()];
    bodies.extend(form_gaps_bodies());
    let entries: Vec<serde_json::Value> = bodies
        .iter()
        .map(|b| {
            serde_json::json!({
                "request": {"method": "POST", "url": url, "headers": [],
                            "postData": {"mimeType": "application/json", "text": b}},
                "response": {"status": 200,
                             "headers": [{"name": "content-type", "value": "text/event-stream"}],
                             "content": {"mimeType": "text/event-stream", "text": SSE}}
            })
        })
        .collect();
    let har = serde_json::json!({"log": {"entries": entries}});
    let input = dir.path().join("gaps.har");
    std::fs::write(&input, har.to_string()).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = run(
        &[
            "import",
            input.to_str().unwrap(),
            "-o",
            out.join("gaps.ron").to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
    assert_eq!(leaks(&printed), Vec::<&str>::new(), "{printed}");
    let text = all_text(&out);
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    // The list of streams `check` prints for a capture with several: titles carry the URL.
    for cmd in [
        &["check"][..],
        &["check", "--json"],
        &["events"],
        &["export"],
    ] {
        let mut args = cmd.to_vec();
        args.push(input.to_str().unwrap());
        let o = run(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", stderr(&o));
        let printed = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
        assert!(printed.contains("api.example.com"), "{printed}");
        assert_eq!(leaks(&printed), Vec::<&str>::new(), "{cmd:?}: {printed}");
    }
    // One stream checked: the report and the JSON name no secret either.
    for cmd in [&["check"][..], &["check", "--json"]] {
        let mut args = cmd.to_vec();
        args.extend([input.to_str().unwrap(), "--stream", "1"]);
        let o = run(&args, &[]);
        let printed = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
        assert_eq!(leaks(&printed), Vec::<&str>::new(), "{cmd:?}: {printed}");
    }
}

/// A JSON body with the shape-only secrets and metadata pairs planted (and what must stay).
fn shapes_body() -> String {
    serde_json::json!({
        "model": "m",
        "stream": true,
        "max_tokens": 5,
        "metadata": [
            {"key": "Authorization", "value": format!("Bearer {}", shape("key/value metadata pair"))},
            {"name": "x-api-key", "value": shape("name/value metadata pair")},
            {"key": "region", "value": "us-east-1"},
        ],
        "note": shape("sk- under an ordinary key"),
        "aws": {"id": shape("AKIA under an ordinary key")},
        "context": [shape("JWT under an ordinary key")],
        "repo": {"pat": shape("ghp_ under an ordinary key")},
        "messages": [
            {"role": "user", "content": format!("my slack bot is {} - fix it", shape("xoxb- inside a sentence"))},
            {"role": "assistant", "tool_calls": [{"id": "call_Ab3dEf6hIj9lMn2pQr5tUv8x", "type": "function",
             "function": {"name": "f", "arguments": "{}"}}]},
        ],
    })
    .to_string()
}

/// The path with a key in one segment.
fn shapes_path() -> String {
    format!(
        "/v1/keys/{}/chat/completions",
        shape("key in a URL path segment")
    )
}

/// Spawns `sse-replay ARGS` (a server), returns it, its `listening on` URL (no trailing slash),
/// its standard output lines as they come and a thread collecting its standard error.
fn spawn_server(
    args: &[&str],
) -> (
    common::Kid,
    String,
    mpsc::Receiver<String>,
    std::thread::JoinHandle<String>,
) {
    let mut child = common::bin()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let err_t = std::thread::spawn(move || {
        let mut v = String::new();
        std::io::Read::read_to_string(&mut std::io::BufReader::new(err), &mut v).ok();
        v
    });
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(out)) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = lines.recv_timeout(Duration::from_secs(30)).unwrap();
    let url = first
        .strip_prefix("listening on ")
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    (common::Kid(child), url, lines, err_t)
}

#[test]
fn keys_by_shape_and_metadata_pairs_reach_no_file_and_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let header = format!("X-Debug: {}", shape("AIza in an ordinary header"));
    // record
    let (base, requests) = upstream();
    let out = dir.path().join("rec.ron");
    let o = run(
        &[
            "record",
            &format!("{base}{}", shapes_path()),
            "-d",
            &shapes_body(),
            "-H",
            &header,
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sent = requests.recv_timeout(Duration::from_secs(10)).unwrap();
    for (place, s) in SHAPES {
        assert!(sent.contains(s), "{place} was not sent: {sent}");
    }
    let printed = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
    assert_eq!(leaks(&printed), Vec::<&str>::new(), "{printed}");
    let req = Recording::load(&out).unwrap().request.unwrap();
    let v: serde_json::Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(v["metadata"][2]["value"], "us-east-1", "{v}");
    assert_eq!(
        v["messages"][1]["tool_calls"][0]["id"], "call_Ab3dEf6hIj9lMn2pQr5tUv8x",
        "{v}"
    );
    assert_eq!(v["max_tokens"], 5);

    // proxy: captures (their titles too), standard output and standard error.
    let (base, _requests) = upstream();
    let captures = dir.path().join("captures");
    let (kid, proxy, lines, err_t) = spawn_server(&[
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &base,
        "--out",
        captures.to_str().unwrap(),
    ]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (name, value) = header.split_once(": ").unwrap();
    rt.block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(10)).unwrap();
        let got = client
            .post(format!("{proxy}{}", shapes_path()))
            .header(name, value)
            .body(shapes_body())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(got, SSE);
    });
    let captured = lines.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(captured.starts_with("captured "), "{captured}");
    kid.signal("TERM");
    let mut kid = kid;
    kid.wait_exit(Duration::from_secs(20));
    let printed = format!("{}{captured}", err_t.join().unwrap());
    assert!(printed.contains("/v1/keys/REDACTED/chat"), "{printed}");
    assert_eq!(leaks(&printed), Vec::<&str>::new(), "{printed}");
    let text = all_text(&captures);
    assert!(text.contains("/v1/keys/REDACTED/chat"), "{text}");
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");

    // serve: its request log.
    let (kid, served, _lines, err_t) =
        spawn_server(&["serve", out.to_str().unwrap(), "--addr", "127.0.0.1:0"]);
    rt.block_on(async {
        let client = sse_replay_net::http_client(Duration::from_secs(10)).unwrap();
        client
            .post(format!("{served}{}", shapes_path()))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
    });
    kid.signal("TERM");
    let mut kid = kid;
    kid.wait_exit(Duration::from_secs(20));
    let log = err_t.join().unwrap();
    assert!(log.contains("/v1/keys/REDACTED/chat"), "{log}");
    assert_eq!(leaks(&log), Vec::<&str>::new(), "{log}");
    assert_eq!(leaks(&all_text(dir.path())), Vec::<&str>::new());
}

/// The count the closing note reports: every secret planted in this file, and how many of them
/// any test found on disk or on a terminal (none: each test fails on the first).
#[test]
fn planted_secrets_are_counted_once() {
    let all = planted();
    let mut unique = all.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        all.len(),
        "each secret is unique, so a grep names its place"
    );
    assert_eq!(all.len(), 37);
}
