//! Nothing secret reaches the disk: secrets planted in every Recorder and Proxy field (a URL's
//! query, userinfo and path, secret and ordinary header values, a body's key field, the proxy's
//! upstream) are in no file the app writes — its settings file (written `0600`), the Recorder's
//! recording, the proxy's capture — and the next launch does not show them.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{app_with, harness};
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::recorder::HeaderRow;

/// Every planted secret (each appears in exactly one field).
const SECRETS: [&str; 10] = [
    "pw-url-7f3a",
    "sk-proj-path9d2c1e",
    "AIzaQueryKey55b1",
    "sk-auth-header-61e0",
    "x-api-key-value-2b9",
    "sk-live-custom-0c44",
    "body-api-key-8e21",
    "upstream-pw-4d0a",
    "upstream-key-90f3",
    "sk-proxied-request-77",
];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn serve_seed() -> sse_replay_net::serve::ServeHandle {
    use sse_replay_net::serve::{self, Pacing, Plan, ServeConfig};
    let seed = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
    let plan = std::sync::Arc::new(Plan::new(&seed, Pacing::Instant, None));
    serve::start(ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        plan,
        log: false,
        limits: Default::default(),
    })
    .unwrap()
}

#[test]
fn secrets_in_the_recorder_and_proxy_forms_reach_no_file() {
    let server = serve_seed();
    let dir = tempfile::tempdir().unwrap();
    let (config, captures) = (dir.path().join("config"), dir.path().join("captures"));
    std::fs::create_dir_all(&config).unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    let addr = server.addr();
    {
        let s = &mut h.state_mut().settings;
        s.recorder.url = format!(
            "http://me:{}@{addr}/v1/{}/chat/completions?key={}&alt=sse",
            SECRETS[0], SECRETS[1], SECRETS[2]
        );
        s.recorder.headers = vec![
            HeaderRow {
                name: "Authorization".into(),
                value: format!("Bearer {}", SECRETS[3]),
                secret: true,
            },
            // A secret header name, not ticked by hand (the form ticks it).
            HeaderRow {
                name: "x-api-key".into(),
                value: SECRETS[4].into(),
                secret: false,
            },
            // An ordinary name holding a key.
            HeaderRow {
                name: "X-Custom".into(),
                value: SECRETS[5].into(),
                secret: false,
            },
            HeaderRow {
                name: "Content-Type".into(),
                value: "application/json".into(),
                secret: false,
            },
        ];
        s.recorder.body = format!(
            r#"{{"model":"gpt-test","stream":true,"api_key":"{}","messages":[]}}"#,
            SECRETS[6]
        );
        s.recorder.out_dir = captures.join("recorder");
        s.proxy.listen = "127.0.0.1:0".into();
        s.proxy.upstream = format!("http://admin:{}@{addr}/?key={}", SECRETS[7], SECRETS[8]);
        s.proxy.out_dir = captures.join("proxy");
    }
    // Both forms drawn (as a user filling them in sees them), then both run.
    h.get_by_label("Recorder").click();
    h.run();
    h.get_by_label("⏺ Start").click();
    h.run();
    h.get_by_label("Proxy").click();
    h.run();
    h.get_by_label("▶ Start proxy").click();
    h.run();
    let proxy = h.state().proxy.addr().expect("the proxy started");
    {
        use std::io::{Read as _, Write as _};
        let body = r#"{"model":"m","stream":true}"#;
        let mut sock = std::net::TcpStream::connect(proxy).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        write!(
            sock,
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
             content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            SECRETS[9],
            body.len()
        )
        .unwrap();
        let mut out = Vec::new();
        sock.read_to_end(&mut out).ok();
    }
    let t0 = Instant::now();
    loop {
        h.step();
        let app = h.state();
        let captured = app.proxy.exchanges().first().is_some_and(|r| {
            r.capture
                .as_ref()
                .is_some_and(|c| c.result.as_ref().is_some_and(|r| r.saved))
        });
        if captured && !app.recorder.is_running() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "nothing was captured"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    h.state_mut().proxy.stop();
    let settings = config.join(sse_replay_app::persist::SETTINGS_FILE);
    h.state().save_settings_to(&settings).unwrap();

    let mut files = Vec::new();
    files_under(dir.path(), &mut files);
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    assert!(files.contains(&settings), "{names:?}");
    assert!(
        files
            .iter()
            .any(|p| p.starts_with(captures.join("recorder"))),
        "the recording was written: {names:?}"
    );
    assert!(
        files.iter().any(|p| p.starts_with(captures.join("proxy"))),
        "the capture was written: {names:?}"
    );
    let mut leaks = Vec::new();
    for f in &files {
        let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
        for s in SECRETS {
            if text.contains(s) {
                leaks.push(format!("{s} in {}", f.display()));
            }
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&settings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the settings file is private");

    // The next launch: the forms are back, without the secrets.
    let back = sse_replay_app::persist::load_settings(&settings).unwrap();
    let mut h = harness(sse_replay_app::App::new(
        back,
        Box::new(sse_replay_app::ScriptedDialogs::default()),
    ));
    h.run();
    h.get_by_label("Recorder").click();
    h.run();
    h.get_by_label("Proxy").click();
    h.run();
    let app = h.state();
    let shown = format!(
        "{} {:?} {} {} {}",
        app.settings.recorder.url,
        app.settings.recorder.headers,
        app.settings.recorder.body,
        app.settings.proxy.upstream,
        app.settings.proxy.listen
    );
    for s in SECRETS {
        assert!(!shown.contains(s), "{s} came back: {shown}");
    }
    assert!(
        app.settings.recorder.url.contains(&format!("{addr}/v1/")),
        "the rest of the URL stays: {}",
        app.settings.recorder.url
    );
    assert!(h.query_all_by_label_contains(SECRETS[8]).next().is_none());
    server.stop();
}
