//! Compare two as a diff (its own A/B documents, arguments diffed inline) and the proxy's
//! inspectable request list, driven through egui_kittest (no GPU, no window). Servers run on
//! 127.0.0.1:0; every wait is bounded.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::{Duration, Instant};

use common::{app_with, harness, wait_loaded};
use egui_kittest::kittest::Queryable as _;
use sse_replay_app::{OpenTarget, Source};

/// Two recordings that differ in one argument value (`days` 3 → 4): the changed value is drawn
/// highlighted on both sides, the stream rows are shown, and Replay's document is untouched by
/// opening A and B; "Open in Replay" then shows B there.
#[test]
fn compare_two_diffs_arguments_inline_and_leaves_replay_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.ron"), dir.path().join("b.ron"));
    let spec = sse_replay_core::stub::seed_example();
    sse_replay_core::recording::save(&pa, &sse_replay_core::stub::build(&spec)).unwrap();
    let mut other = spec.clone();
    other.calls[0].arguments = r#"{"city":"深圳","days":4}"#.into();
    sse_replay_core::recording::save(&pb, &sse_replay_core::stub::build(&other)).unwrap();

    let mut h =
        harness(app_with(vec![Some(pa.clone()), Some(pb.clone())]).with_initial(Source::Seed));
    wait_loaded(&mut h);
    let replay_name = h.state().analysis().unwrap().source.name.clone();
    h.get_by_label("Compare two").click();
    h.run();
    // step, not run: a side's spinner repaints every frame while it loads.
    h.get_by_label("Open A…").click();
    h.step();
    wait_loaded(&mut h);
    h.get_by_label("Open B…").click();
    h.step();
    wait_loaded(&mut h);

    // Replay still shows what it showed.
    assert_eq!(h.state().analysis().unwrap().source.name, replay_name);
    let cmp = h.state().comparison().unwrap();
    assert_eq!(cmp.differing(), 1);
    // The changed value, highlighted (and named as changed) on each side.
    h.get_by_label("changed in A: 3");
    h.get_by_label("changed in B: 4");
    h.get_by_label_contains("arguments differ at $.days");
    // Stream-level rows.
    h.get_by_label("dialect");
    h.get_by_label("time to first call");
    h.get_by_label_contains("2 call rows · 1 differ");

    h.query_all_by_label("Open in Replay")
        .nth(1)
        .unwrap()
        .click();
    h.run();
    wait_loaded(&mut h);
    assert_eq!(
        h.state().analysis().unwrap().source.name,
        pb.display().to_string()
    );
    // …and Compare two keeps both of its own.
    assert!(h.state().compare.side(OpenTarget::CompareA).is_some());
    assert!(h.state().compare.side(OpenTarget::Second).is_some());
}

/// Sends one POST through the proxy at `addr` with an Authorization header and a JSON body naming
/// `model`, and reads the whole response (the proxy closes the connection).
fn post_through(addr: std::net::SocketAddr, model: &str) -> String {
    use std::io::{Read as _, Write as _};
    let body = format!(r#"{{"model":"{model}","stream":true,"messages":[]}}"#);
    let mut sock = std::net::TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        sock,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk-gui-secret-42\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = Vec::new();
    sock.read_to_end(&mut out).ok();
    String::from_utf8_lossy(&out).into_owned()
}

/// A request through the app's proxy appears with its status, model and duration; its detail
/// shows the Authorization header redacted (the key appears nowhere), and its capture opens in
/// Replay.
#[test]
fn a_proxied_exchange_is_listed_and_inspectable() {
    use sse_replay_net::serve::{self, Pacing, Plan, ServeConfig};
    let seed = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
    let plan = std::sync::Arc::new(Plan::new(&seed, Pacing::Instant, None));
    let upstream = serve::start(ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        plan,
        log: false,
        limits: Default::default(),
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    {
        let p = &mut h.state_mut().settings.proxy;
        p.listen = "127.0.0.1:0".into();
        p.upstream = format!("http://{}", upstream.addr());
        p.out_dir = dir.path().join("captures");
    }
    h.get_by_label("Proxy").click();
    h.run();
    h.get_by_label("▶ Start proxy").click();
    h.run();
    let addr = h.state().proxy.addr().expect("the proxy started");
    let response = post_through(addr, "gpt-test-model");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");

    let t0 = Instant::now();
    loop {
        h.step();
        let done = h.state().proxy.exchanges().first().is_some_and(|r| {
            r.end.is_some() && r.capture.as_ref().is_some_and(|c| c.result.is_some())
        });
        if done {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the exchange was not reported"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    let row = h.state().proxy.exchanges()[0].clone();
    assert_eq!(row.exchange.status, 200);
    assert_eq!(row.exchange.model.as_deref(), Some("gpt-test-model"));
    let end = row.end.clone().unwrap();
    assert!(end.bytes as usize == seed.body().len(), "{end:?}");
    h.get_by_label("Requests (1) · 1 captured");
    h.get_by_label("gpt-test-model");
    h.get_by_label("200");
    h.get_by_label("2 calls ✓");
    // Duration and first byte are shown in ms.
    assert!(h.query_all_by_label_contains(" ms").count() >= 2);

    h.get_by_label("POST /v1/chat/completions").click();
    h.run();
    h.get_by_label("Request headers (redacted)");
    h.get_by_label("authorization");
    h.get_by_label_contains("‹redacted›");
    assert!(
        h.query_all_by_label_contains("sk-gui-secret-42")
            .next()
            .is_none()
    );
    h.get_by_label_contains("\"model\":\"gpt-test-model\"");
    assert_eq!(
        h.query_all_by_label("content-type").count(),
        2,
        "request and response"
    );

    h.get_by_label("Open in Replay").click();
    h.step();
    wait_loaded(&mut h);
    assert_eq!(h.state().analysis().unwrap().calls.len(), 2);
    h.state_mut().proxy.stop();
    upstream.stop();
}

/// The captures folder defaults to an absolute path (the platform data directory), can be picked
/// through the dialog seam, and a relative one is shown in full.
#[test]
fn the_captures_folder_is_absolute_and_can_be_picked() {
    let dir = tempfile::tempdir().unwrap();
    let picked = dir.path().join("picked");
    let mut h = harness(app_with(vec![Some(picked.clone())]));
    h.run();
    assert!(h.state().settings.proxy.out_dir.is_absolute());
    assert!(h.state().settings.recorder.out_dir.is_absolute());
    h.get_by_label("Proxy").click();
    h.run();
    h.get_by_label("Choose…").click();
    h.run();
    assert_eq!(h.state().settings.proxy.out_dir, picked);
    h.state_mut().settings.proxy.out_dir = "relative-captures".into();
    h.run();
    let full = std::path::absolute("relative-captures").unwrap();
    h.get_by_label(&format!("= {}", full.display()));
}

/// Measurement (prints, asserts nothing about time): frame time of Compare two with 2,000
/// differing call rows (only those on screen are laid out). `cargo test -p sse-replay-app --test gui inspect:: -- --ignored --nocapture`.
#[test]
#[ignore = "measurement; run with --ignored --nocapture"]
fn compare_two_frame_time_with_many_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.ron"), dir.path().join("b.ron"));
    for (path, v) in [(&pa, "x"), (&pb, "y")] {
        let spec = sse_replay_core::stub::StubSpec {
            calls: (0..2000)
                .map(|i| sse_replay_core::stub::StubCall {
                    id: format!("call_{i}"),
                    name: "f".into(),
                    arguments: format!(r#"{{"i":{i},"v":"{v}","list":[1,2,3]}}"#),
                })
                .collect(),
            fragment_chars: vec![40],
            ..Default::default()
        };
        sse_replay_core::recording::save(path, &sse_replay_core::stub::build(&spec)).unwrap();
    }
    let mut h = harness(app_with(vec![Some(pa), Some(pb)]));
    h.run();
    h.get_by_label("Compare two").click();
    h.run();
    h.get_by_label("Open A…").click();
    h.step();
    wait_loaded(&mut h);
    h.get_by_label("Open B…").click();
    h.step();
    wait_loaded(&mut h);
    assert_eq!(h.state().comparison().unwrap().differing(), 2000);
    let mut times = Vec::new();
    for _ in 0..20 {
        let t0 = Instant::now();
        h.step();
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "compare two, 2000 differing rows: frame median {:.1} ms, max {:.1} ms",
        times[times.len() / 2],
        times[times.len() - 1]
    );
}

/// A server answering one request with an event stream: the head and `first`, then `rest` when
/// `release` receives. It reads the whole request first.
fn pausing_upstream(
    first: &'static str,
    rest: &'static str,
) -> (std::net::SocketAddr, std::sync::mpsc::Sender<()>) {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (release, released) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        s.set_read_timeout(Some(Duration::from_millis(500))).ok();
        let mut buf = [0u8; 8192];
        let _request = s.read(&mut buf);
        let chunk = |s: &mut std::net::TcpStream, text: &str| {
            write!(s, "{:x}\r\n{text}\r\n", text.len()).ok();
            s.flush().ok();
        };
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n").ok();
        chunk(&mut s, first);
        released.recv_timeout(Duration::from_secs(60)).ok();
        chunk(&mut s, rest);
        s.write_all(b"0\r\n\r\n").ok();
        s.flush().ok();
    });
    (addr, release)
}

/// Sends `body` (JSON) through the proxy at `addr` on a thread; the response is read to its end.
fn post_in_background(addr: std::net::SocketAddr, body: String) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        let mut sock = std::net::TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        write!(
            sock,
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk-flow-secret-1234\r\n\
             content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = Vec::new();
        sock.read_to_end(&mut out).ok();
        String::from_utf8_lossy(&out).into_owned()
    })
}

fn start_proxy(
    h: &mut egui_kittest::Harness<'_, sse_replay_app::App>,
    upstream: String,
    out: &std::path::Path,
) -> std::net::SocketAddr {
    {
        let p = &mut h.state_mut().settings.proxy;
        p.listen = "127.0.0.1:0".into();
        p.upstream = upstream;
        p.out_dir = out.to_path_buf();
    }
    h.get_by_label("Proxy").click();
    h.run();
    h.get_by_label("▶ Start proxy").click();
    h.run();
    h.state().proxy.addr().expect("the proxy started")
}

/// An upstream that cannot be reached (502): the row still shows the request (its body and
/// model), and says there was no response rather than a response head after 0 ms.
#[test]
fn a_failed_upstream_still_shows_the_request() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    let addr = start_proxy(
        &mut h,
        format!("http://{closed}"),
        &dir.path().join("captures"),
    );
    let response = post_in_background(
        addr,
        r#"{"model":"gpt-unreachable","stream":true,"messages":[]}"#.into(),
    )
    .join()
    .unwrap();
    assert!(response.starts_with("HTTP/1.1 502"), "{response}");
    let t0 = Instant::now();
    while h
        .state()
        .proxy
        .exchanges()
        .first()
        .is_none_or(|r| r.end.is_none())
    {
        h.step();
        assert!(t0.elapsed() < Duration::from_secs(30), "not reported");
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run();
    h.get_by_label("gpt-unreachable");
    // No response: no made-up duration.
    assert!(h.query_by_label("0 ms").is_none());
    h.get_by_label("POST /v1/chat/completions").click();
    h.run();
    h.get_by_label_contains("\"model\":\"gpt-unreachable\"");
    assert!(h.query_by_label_contains("response head after").is_none());
    h.get_by_label_contains("no response:");
    h.state_mut().proxy.stop();
}

/// A flow is listed and can be watched live while it streams (the honest live view: no verdict
/// before its end), its first byte's time is shown as soon as it is known, its detail lists the
/// response's events, and the capture carries no false note about the request body.
#[test]
fn a_flow_is_inspectable_and_watchable_while_it_streams() {
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Shen\"}}]},\"finish_reason\":null}]}\n\n";
    let rest = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"zhen\\\"}\"}}]},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let (upstream, release) = pausing_upstream(first, rest);
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    let addr = start_proxy(
        &mut h,
        format!("http://{upstream}"),
        &dir.path().join("captures"),
    );
    let client = post_in_background(
        addr,
        r#"{"model":"gpt-live","stream":true,"messages":[]}"#.into(),
    );
    common::step_until(&mut h, "the first part did not arrive", |a| {
        a.proxy.exchanges().first().is_some_and(|r| {
            r.first_byte_micros.is_some()
                && r.capture
                    .as_ref()
                    .and_then(|c| c.live.as_ref())
                    .is_some_and(|l| !l.chunks.is_empty())
        })
    });
    // Streaming: the first byte's time is there, the row is not finished.
    assert!(h.state().proxy.exchanges()[0].end.is_none());
    h.get_by_label("streaming…");
    h.get_by_label("POST /v1/chat/completions").click();
    h.run();
    // The detail lists the response's events so far.
    h.get_by_label_contains("Response body (1 event so far)");
    // Watch it live in Replay: honest while it streams.
    h.get_by_label("Watch live in Replay").click();
    h.step();
    common::step_until(&mut h, "the live flow did not show", |a| {
        !a.is_loading() && a.analysis().is_some_and(|x| x.body.len() == first.len())
    });
    assert_eq!(h.state().settings.tab, sse_replay_app::Tab::Replay);
    h.get_by_label("● live");
    h.get_by_label("streaming — 1 call so far, 1 in progress");
    assert!(h.query_by_label_contains("finished:").is_none());
    assert!(h.query_by_label_contains("FAILED").is_none());
    release.send(()).unwrap();
    common::step_until(&mut h, "the flow did not end", |a| {
        !a.is_loading()
            && a.analysis()
                .is_some_and(|x| x.body.len() == first.len() + rest.len())
            && a.proxy.exchanges()[0].end.is_some()
            && !a.proxy.watching_streaming()
    });
    h.run();
    h.get_by_label("finished: 1 of 1 call parsed · OK");
    assert!(h.query_by_label("● live").is_none());
    let response = client.join().unwrap();
    assert!(response.contains("[DONE]"), "{response}");
    // The capture: no false note about the request body.
    common::step_until(&mut h, "the capture was not saved", |a| {
        a.proxy.exchanges()[0]
            .capture
            .as_ref()
            .is_some_and(|c| c.result.as_ref().is_some_and(|r| r.saved))
    });
    let path = h.state().proxy.exchanges()[0].capture.clone().unwrap().path;
    let rec = sse_replay_core::recording::load(&path).unwrap();
    assert!(
        rec.meta
            .notes
            .iter()
            .all(|n| !n.contains("before the request body ended")),
        "{:?}",
        rec.meta.notes
    );
    assert!(rec.request.unwrap().body.contains("gpt-live"));
    h.state_mut().proxy.stop();
}

/// Flows filter by text, host, status and model; a flow exports as a HAR entry and copies as a
/// curl command, its secrets redacted.
#[test]
fn flows_filter_and_export_as_har_and_curl() {
    use sse_replay_net::serve::{self, Pacing, Plan, ServeConfig};
    let seed = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
    let plan = std::sync::Arc::new(Plan::new(&seed, Pacing::Instant, None));
    let upstream = serve::start(ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        plan,
        log: false,
        limits: Default::default(),
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("flow.har");
    let mut h = harness(app_with(vec![Some(har.clone())]));
    h.run();
    let addr = start_proxy(
        &mut h,
        format!("http://{}", upstream.addr()),
        &dir.path().join("captures"),
    );
    for model in ["gpt-alpha", "gpt-beta"] {
        post_in_background(
            addr,
            format!(r#"{{"model":"{model}","stream":true,"messages":[]}}"#),
        )
        .join()
        .unwrap();
    }
    common::step_until(&mut h, "both flows", |a| {
        a.proxy.exchanges().len() == 2
            && a.proxy
                .exchanges()
                .iter()
                .all(|r| r.capture.as_ref().is_some_and(|c| c.result.is_some()))
    });
    h.get_by_label("gpt-alpha");
    h.get_by_label("gpt-beta");
    h.state_mut().proxy.filter.model = Some("gpt-beta".into());
    h.run();
    assert!(h.query_by_label("gpt-alpha").is_none());
    h.get_by_label("gpt-beta");
    h.state_mut().proxy.filter.model = None;
    h.state_mut().proxy.filter.status = sse_replay_app::proxy_list::StatusFilter::Failed;
    h.run();
    assert!(h.query_by_label("gpt-beta").is_none());
    h.state_mut().proxy.filter.status = sse_replay_app::proxy_list::StatusFilter::All;
    h.state_mut().proxy.filter.text = "alpha".into();
    h.run();
    assert!(h.query_by_label("gpt-beta").is_none());
    h.get_by_label("gpt-alpha");
    let host = upstream.addr().to_string();
    h.state_mut().proxy.filter.text.clear();
    h.state_mut().proxy.filter.host = Some("elsewhere.example".into());
    h.run();
    assert!(h.query_by_label("gpt-alpha").is_none());
    h.state_mut().proxy.filter.host = Some(host);
    h.run();
    h.get_by_label("gpt-alpha");
    h.state_mut().proxy.filter.host = None;

    h.query_all_by_label("POST /v1/chat/completions")
        .next()
        .unwrap()
        .click();
    h.run();
    h.get_by_label("Copy as curl").click();
    h.step();
    let copied: Vec<String> = h
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let curl = copied.last().expect("a curl command was copied");
    assert!(curl.starts_with("curl -N "), "{curl}");
    assert!(curl.contains("/v1/chat/completions"), "{curl}");
    assert!(curl.contains("--data-raw"), "{curl}");
    assert!(!curl.contains("sk-flow-secret-1234"), "{curl}");
    h.get_by_label("Export HAR entry…").click();
    h.run();
    let text = std::fs::read_to_string(&har).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entry = &doc["log"]["entries"][0];
    assert_eq!(entry["request"]["method"], "POST");
    assert_eq!(entry["response"]["status"], 200);
    assert!(
        entry["response"]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("data: ")
    );
    assert!(!text.contains("sk-flow-secret-1234"));
    h.state_mut().proxy.stop();
    upstream.stop();
}

/// Every flow keeps its own number across restarts of the proxy (which numbers its requests from
/// 1 again): clicking a failed flow selects it alone and its detail is its own request, not the
/// first run's flow #1; the finished flow shows its own detail; and a selected flow the filter
/// hides leaves the detail.
#[test]
fn a_flow_is_selected_by_its_own_number_in_every_state() {
    use sse_replay_net::serve::{self, Pacing, Plan, ServeConfig};
    let seed = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
    let plan = std::sync::Arc::new(Plan::new(&seed, Pacing::Instant, None));
    let upstream = serve::start(ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        plan,
        log: false,
        limits: Default::default(),
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    let addr = start_proxy(
        &mut h,
        format!("http://{}", upstream.addr()),
        &dir.path().join("captures"),
    );
    post_in_background(
        addr,
        r#"{"model":"gpt-first","stream":true,"messages":[]}"#.into(),
    )
    .join()
    .unwrap();
    common::step_until(&mut h, "the first flow did not finish", |a| {
        a.proxy.exchanges().first().is_some_and(|r| {
            r.end.is_some() && r.capture.as_ref().is_some_and(|c| c.result.is_some())
        })
    });
    // The proxy again, to an upstream that cannot be reached: its first request fails (502).
    h.get_by_label("⏹ Stop proxy").click();
    h.run();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    h.state_mut().settings.proxy.upstream = format!("http://{closed}");
    h.get_by_label("▶ Start proxy").click();
    h.run();
    let addr = h.state().proxy.addr().expect("the proxy started again");
    let response = post_in_background(
        addr,
        r#"{"model":"gpt-unreachable","stream":true,"messages":[]}"#.into(),
    )
    .join()
    .unwrap();
    assert!(response.starts_with("HTTP/1.1 502"), "{response}");
    common::step_until(&mut h, "the failed flow was not reported", |a| {
        a.proxy.exchanges().len() == 2 && a.proxy.exchanges()[1].end.is_some()
    });
    let ids: Vec<u64> = h
        .state()
        .proxy
        .exchanges()
        .iter()
        .map(|r| r.exchange.id)
        .collect();
    assert_ne!(ids[0], ids[1], "two flows, one number");
    use egui_kittest::kittest::NodeT as _;
    let selected_rows = |h: &egui_kittest::Harness<'_, sse_replay_app::App>| {
        h.query_all_by_label("POST /v1/chat/completions")
            .filter(|n| n.accesskit_node().toggled() == Some(egui::accesskit::Toggled::True))
            .count()
    };
    // Newest first: the failed flow is the first row.
    h.query_all_by_label("POST /v1/chat/completions")
        .next()
        .unwrap()
        .click();
    h.run();
    assert_eq!(selected_rows(&h), 1, "only the clicked flow is highlighted");
    h.get_by_label_contains(&format!("#{} POST", ids[1]));
    h.get_by_label_contains("no response:");
    h.get_by_label_contains("\"model\":\"gpt-unreachable\"");
    assert!(
        h.query_by_label_contains("\"model\":\"gpt-first\"")
            .is_none()
    );
    assert!(h.query_by_label_contains("Response body (").is_none());
    // The finished flow: its own detail and events.
    h.query_all_by_label("POST /v1/chat/completions")
        .nth(1)
        .unwrap()
        .click();
    h.run();
    assert_eq!(selected_rows(&h), 1);
    h.get_by_label_contains(&format!("#{} POST", ids[0]));
    h.get_by_label_contains("\"model\":\"gpt-first\"");
    h.get_by_label_contains("Response body (");
    assert!(h.query_by_label_contains("no response:").is_none());
    // Hidden by the filter: out of the detail too.
    h.state_mut().proxy.filter.status = sse_replay_app::proxy_list::StatusFilter::Failed;
    h.run();
    assert!(
        h.query_by_label_contains("\"model\":\"gpt-first\"")
            .is_none()
    );
    assert!(h.query_by_label_contains("Response body (").is_none());
    h.get_by_label_contains("hidden by the filter");
    h.state_mut().proxy.stop();
    upstream.stop();
}

/// A flow still streaming when the proxy is stopped: its end (the capture saved) still arrives,
/// so it stops saying "streaming…", and a Replay watching it live stops being live.
#[test]
fn a_flow_cut_by_stopping_the_proxy_is_no_longer_streaming() {
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Shen\"}}]},\"finish_reason\":null}]}\n\n";
    let rest = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"zhen\\\"}\"}}]},\"finish_reason\":null}]}\n\n";
    let (upstream, release) = pausing_upstream(first, rest);
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(app_with(vec![]));
    h.run();
    let addr = start_proxy(
        &mut h,
        format!("http://{upstream}"),
        &dir.path().join("captures"),
    );
    let client = post_in_background(
        addr,
        r#"{"model":"gpt-cut","stream":true,"messages":[]}"#.into(),
    );
    common::step_until(&mut h, "the first part did not arrive", |a| {
        a.proxy.exchanges().first().is_some_and(|r| {
            r.capture
                .as_ref()
                .and_then(|c| c.live.as_ref())
                .is_some_and(|l| !l.chunks.is_empty())
        })
    });
    h.get_by_label("POST /v1/chat/completions").click();
    h.run();
    h.get_by_label("Watch live in Replay").click();
    h.step();
    common::step_until(&mut h, "the live flow did not show", |a| {
        !a.is_loading() && a.analysis().is_some_and(|x| x.body.len() == first.len())
    });
    h.get_by_label("● live");
    h.get_by_label("Proxy").click();
    h.run();
    h.get_by_label("⏹ Stop proxy").click();
    h.run();
    // The upstream ends its stream (without a finish) after the stop.
    release.send(()).unwrap();
    common::step_until(&mut h, "the cut flow never ended", |a| {
        a.proxy.exchanges()[0]
            .capture
            .as_ref()
            .is_some_and(|c| c.result.is_some())
            && !a.proxy.watching_streaming()
            && !a.is_loading()
    });
    h.run();
    assert!(h.query_by_label("streaming…").is_none());
    assert!(h.query_by_label("Watch live in Replay").is_none());
    h.get_by_label("Replay").click();
    h.run();
    assert!(h.query_by_label("● live").is_none());
    client.join().unwrap();
}
