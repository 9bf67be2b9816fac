//! `sse-replay proxy`: a recording reverse proxy. Point an application's base URL at it; every
//! request is forwarded unchanged to the upstream (minus hop-by-hop headers; `Host` is the
//! upstream's), every response streams back read by read with no buffering, and every
//! `text/event-stream` response is teed into a new recording `DIR/<UTC time>-<n>.ron`, redacted and
//! crash-safe (the same writer thread as `record`). Arrival times count from when the request was
//! forwarded. Bodies are passed through as they are: a compressed event stream is recorded
//! compressed (and says so in its notes).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Args;
use http_body_util::BodyExt as _;

use super::headers;
use super::sink::Sink;
use super::{AnyBody, ChannelBody, NetError, fail};
use crate::cli::{EXIT_FAILED, EXIT_INPUT, EXIT_OK};
use crate::recording::{self, Chunk, Meta, Recording, RequestInfo, ResponseInfo};

/// Largest request body forwarded (LLM requests are small; this bounds memory).
const MAX_REQUEST_BYTES: usize = 64 << 20;

/// `proxy` arguments.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Address to listen on; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The real API base, e.g. https://api.openai.com (a path prefix is kept).
    #[arg(long)]
    pub upstream: String,
    /// Directory for the captured event streams.
    #[arg(long = "out", value_name = "DIR", default_value = "sse-captures")]
    pub out: PathBuf,
    /// Seconds allowed to connect upstream, and of upstream silence before giving up on a response.
    #[arg(long, value_name = "S", default_value_t = 300.0)]
    pub timeout: f64,
}

/// What the proxy needs.
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    pub listen: SocketAddr,
    /// `http(s)://host[:port][/prefix]`.
    pub upstream: String,
    pub out_dir: PathBuf,
    /// Connect timeout and upstream idle timeout.
    pub timeout: Duration,
}

/// What the proxy reports (from its runtime's threads).
#[derive(Clone, Debug, PartialEq)]
pub enum ProxyEvent {
    /// A request was forwarded and answered (any content type).
    Forwarded {
        method: String,
        path: String,
        status: u16,
    },
    /// The upstream could not be reached; the client got a 502.
    UpstreamFailed {
        method: String,
        path: String,
        message: String,
    },
    /// An event stream started; it is being journalled next to `path`.
    CaptureStarted {
        id: u64,
        path: PathBuf,
        method: String,
        target: String,
    },
    /// An event stream ended and its recording is saved (or `error` says why not).
    CaptureFinished {
        id: u64,
        path: Option<PathBuf>,
        bytes: u64,
        chunks: u64,
        calls: usize,
        error: Option<String>,
    },
}

/// A running `proxy` (see [`super::ServerHandle`]).
pub type ProxyHandle = super::ServerHandle;

struct Shared {
    upstream: String,
    out_dir: PathBuf,
    timeout: Duration,
    client: reqwest::Client,
    next_id: AtomicU64,
    on_event: Box<dyn Fn(ProxyEvent) + Send + Sync>,
    stop: tokio::sync::watch::Receiver<bool>,
}

fn check_upstream(upstream: &str) -> Result<String, NetError> {
    match reqwest::Url::parse(upstream) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            Ok(upstream.trim_end_matches('/').to_owned())
        }
        _ => Err(NetError::BadUpstream(recording::redact_url(upstream))),
    }
}

/// Binds `config.listen` and proxies on a background thread with its own runtime. `on_event` is
/// called from the runtime's threads; it must not block.
pub fn start(
    config: ProxyConfig,
    on_event: impl Fn(ProxyEvent) + Send + Sync + 'static,
) -> Result<ProxyHandle, NetError> {
    let upstream = check_upstream(&config.upstream)?;
    std::fs::create_dir_all(&config.out_dir).map_err(|source| NetError::OutDir {
        path: config.out_dir.clone(),
        source,
    })?;
    let client = super::http_client(config.timeout)
        .map_err(|e| NetError::Client(super::describe_reqwest_error(&e)))?;
    let listener = super::bind(config.listen)?;
    let addr = listener.local_addr().map_err(|source| NetError::Bind {
        addr: config.listen,
        source,
    })?;
    let rt = super::multi_thread_runtime().map_err(NetError::Runtime)?;
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let shared = Arc::new(Shared {
        upstream,
        out_dir: config.out_dir,
        timeout: config.timeout,
        client,
        next_id: AtomicU64::new(1),
        on_event: Box::new(on_event),
        stop: stop_rx.clone(),
    });
    let thread = std::thread::Builder::new()
        .name("sse-replay-proxy".into())
        .spawn(move || {
            rt.block_on(async move {
                super::accept_loop(listener, stop_rx, move |req, _peer| {
                    let shared = shared.clone();
                    async move { forward(req, shared).await }
                })
                .await;
                // Let open captures see the stop and save.
                tokio::time::sleep(Duration::from_millis(50)).await;
            });
            // Dropping the runtime waits for spawn_blocking saves in progress.
            drop(rt);
        })
        .map_err(NetError::Runtime)?;
    Ok(super::ServerHandle::new(addr, stop, thread))
}

/// A free file name `DIR/<stamp>-<n>.ron` (neither it nor its journal exists yet).
fn capture_path(dir: &std::path::Path, id: u64) -> PathBuf {
    let stamp = super::file_stamp_now();
    let mut n = id;
    loop {
        let p = dir.join(format!("{stamp}-{n:04}.ron"));
        let mut partial = p.clone().into_os_string();
        partial.push(".partial");
        if !p.exists() && !PathBuf::from(partial).exists() {
            return p;
        }
        n += 1000;
    }
}

fn error_response(status: u16, text: String) -> hyper::Response<AnyBody> {
    let mut resp = hyper::Response::new(super::boxed_full(text));
    *resp.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// The upstream failed (`status` 502) or timed out (504): report it, and answer the client.
fn upstream_failed(
    shared: &Shared,
    method: String,
    path: String,
    url: &str,
    status: u16,
    message: String,
) -> hyper::Response<AnyBody> {
    (shared.on_event)(ProxyEvent::UpstreamFailed {
        method,
        path,
        message: message.clone(),
    });
    error_response(status, format!("sse-replay proxy: {message}: {url}\n"))
}

async fn forward(
    req: hyper::Request<hyper::body::Incoming>,
    shared: Arc<Shared>,
) -> hyper::Response<AnyBody> {
    let (parts, body) = req.into_parts();
    let method = parts.method.to_string();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let path = parts.uri.path().to_owned();
    let body = match http_body_util::Limited::new(body, MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return error_response(
                400,
                format!("sse-replay proxy: cannot read the request body: {e}\n"),
            );
        }
    };
    let target = format!("{}{}", shared.upstream, path_and_query);
    let listed = headers::connection_listed(&parts.headers);
    let mut out_headers = reqwest::header::HeaderMap::new();
    for (name, value) in &parts.headers {
        let n = name.as_str();
        if headers::is_hop_by_hop(n) || listed.iter().any(|l| l == n) {
            continue;
        }
        out_headers.append(name.clone(), value.clone());
    }
    let request_info = {
        let mut info = RequestInfo {
            method: method.clone(),
            url: target.clone(),
            headers: headers::header_pairs(&out_headers),
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        info.redact();
        info
    };

    let t0 = Instant::now();
    let sent = tokio::time::timeout(
        shared.timeout,
        shared
            .client
            .request(parts.method.clone(), &target)
            .headers(out_headers)
            .body(body)
            .send(),
    )
    .await;
    let upstream = match sent {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let message = super::describe_reqwest_error(&e);
            return upstream_failed(&shared, method, path, &request_info.url, 502, message);
        }
        Err(_) => {
            let message = format!("no response within {} s", shared.timeout.as_secs_f64());
            return upstream_failed(&shared, method, path, &request_info.url, 504, message);
        }
    };

    let status = upstream.status();
    let listed = headers::connection_listed(upstream.headers());
    let mut resp = hyper::Response::new(super::boxed_full(Bytes::new()));
    *resp.status_mut() = status;
    for (name, value) in upstream.headers() {
        let n = name.as_str();
        if headers::is_hop_by_hop(n) || listed.iter().any(|l| l == n) {
            continue;
        }
        resp.headers_mut().append(name.clone(), value.clone());
    }
    (shared.on_event)(ProxyEvent::Forwarded {
        method: method.clone(),
        path: path.clone(),
        status: status.as_u16(),
    });
    let content_type = upstream
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let sink = if headers::is_event_stream(content_type) {
        open_capture(&shared, request_info, &upstream, &method, &path)
    } else {
        None
    };
    let (tx, client_body) = ChannelBody::channel();
    *resp.body_mut() = super::boxed_channel(client_body);
    tokio::spawn(pump(upstream, tx, sink, t0, shared));
    resp
}

fn open_capture(
    shared: &Shared,
    request: RequestInfo,
    upstream: &reqwest::Response,
    method: &str,
    path: &str,
) -> Option<(u64, Sink)> {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let file = capture_path(&shared.out_dir, id);
    let mut response_headers = headers::header_pairs(upstream.headers());
    recording::redact_headers(&mut response_headers);
    let mut notes = Vec::new();
    if let Some(enc) = upstream
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        && !enc.eq_ignore_ascii_case("identity")
    {
        notes.push(format!(
            "the body is {enc}-encoded as it came over the wire; the proxy forwards bytes unchanged"
        ));
    }
    let head = Recording {
        version: recording::FORMAT_VERSION,
        meta: Meta {
            title: format!("{method} {path} (proxy)"),
            source: "proxy".into(),
            created: super::rfc3339_now(),
            notes,
            timing_known: true,
            ..Default::default()
        },
        request: Some(request.clone()),
        response: Some(ResponseInfo {
            status: upstream.status().as_u16(),
            headers: response_headers,
        }),
        ..Default::default()
    };
    match Sink::start(Some(&file), head, Box::new(|_, _| {})) {
        Ok(sink) => {
            (shared.on_event)(ProxyEvent::CaptureStarted {
                id,
                path: file,
                method: method.to_owned(),
                target: request.url,
            });
            Some((id, sink))
        }
        Err(e) => {
            (shared.on_event)(ProxyEvent::CaptureFinished {
                id,
                path: None,
                bytes: 0,
                chunks: 0,
                calls: 0,
                error: Some(e.to_string()),
            });
            None
        }
    }
}

/// Moves the upstream body to the client read by read, teeing each read into the capture.
async fn pump(
    mut upstream: reqwest::Response,
    tx: tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    sink: Option<(u64, Sink)>,
    t0: Instant,
    shared: Arc<Shared>,
) {
    let mut stop = shared.stop.clone();
    let mut notes = Vec::new();
    let mut error = None;
    loop {
        let read = tokio::select! {
            biased;
            () = super::stopped(&mut stop) => {
                notes.push("the proxy was stopped during the stream".to_owned());
                let _ = tx.send(Err(std::io::Error::other("proxy stopping"))).await;
                break;
            }
            r = tokio::time::timeout(shared.timeout, upstream.chunk()) => r,
        };
        match read {
            Ok(Ok(Some(bytes))) => {
                if let Some((_, sink)) = &sink {
                    let t_micros = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
                    sink.chunk(Chunk {
                        t_micros,
                        bytes: bytes.to_vec(),
                    });
                }
                if tx.send(Ok(bytes)).await.is_err() {
                    // Dropping the upstream response cancels the generation upstream as well.
                    notes.push("the client disconnected during the stream".to_owned());
                    break;
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                let message = super::describe_reqwest_error(&e);
                notes.push(format!("the upstream failed during the stream: {message}"));
                error = Some(message.clone());
                let _ = tx.send(Err(std::io::Error::other(message))).await;
                break;
            }
            Err(_) => {
                let message = format!(
                    "no upstream data for {} s (idle timeout)",
                    shared.timeout.as_secs_f64()
                );
                notes.push(message.clone());
                error = Some(message.clone());
                let _ = tx.send(Err(std::io::Error::other(message))).await;
                break;
            }
        }
    }
    drop(tx);
    if let Some((id, sink)) = sink {
        let done = tokio::task::spawn_blocking(move || sink.finish(notes)).await;
        let event = match done {
            Ok(done) => ProxyEvent::CaptureFinished {
                id,
                path: done.saved,
                bytes: done.recording.body_len(),
                chunks: done.recording.chunks.len() as u64,
                calls: done.outcome.calls.len(),
                error: error.or(done.write_error.map(|e| e.to_string())),
            },
            Err(e) => ProxyEvent::CaptureFinished {
                id,
                path: None,
                bytes: 0,
                chunks: 0,
                calls: 0,
                error: Some(e.to_string()),
            },
        };
        (shared.on_event)(event);
    }
}

/// `sse-replay proxy`: prints `listening on http://ADDR/` first, then one line per captured stream
/// on standard output (requests on standard error); Ctrl+C stops and saves open captures.
pub fn run_cli(a: &ProxyArgs) -> ExitCode {
    if !a.timeout.is_finite() || a.timeout <= 0.0 {
        return fail(
            EXIT_INPUT,
            format!(
                "--timeout {}: expected a positive number of seconds",
                a.timeout
            ),
        );
    }
    let config = ProxyConfig {
        listen: a.listen,
        upstream: a.upstream.clone(),
        out_dir: a.out.clone(),
        timeout: Duration::from_secs_f64(a.timeout),
    };
    let handle = match start(config, print_event) {
        Ok(h) => h,
        Err(e @ NetError::BadUpstream(_)) => return fail(EXIT_INPUT, e),
        Err(e) => return fail(EXIT_FAILED, e),
    };
    println!("listening on http://{}/", handle.addr());
    eprintln!(
        "forwarding to {}, event streams recorded into {}; Ctrl+C stops",
        recording::redact_url(&a.upstream),
        a.out.display()
    );
    let waited = super::current_thread_runtime().map(|rt| rt.block_on(tokio::signal::ctrl_c()));
    if let Err(e) | Ok(Err(e)) = waited {
        eprintln!("sse-replay: cannot wait for Ctrl+C: {e}");
    }
    handle.stop();
    eprintln!("stopped");
    ExitCode::from(EXIT_OK)
}

fn print_event(e: ProxyEvent) {
    match e {
        ProxyEvent::Forwarded {
            method,
            path,
            status,
        } => eprintln!("{method} {} → {status}", crate::text::visible(&path)),
        ProxyEvent::UpstreamFailed {
            method,
            path,
            message,
        } => eprintln!(
            "{method} {} → 502: {}",
            crate::text::visible(&path),
            crate::text::visible(&message)
        ),
        ProxyEvent::CaptureStarted { path, .. } => eprintln!("recording {}", path.display()),
        ProxyEvent::CaptureFinished {
            path: Some(p),
            bytes,
            chunks,
            calls,
            error,
            ..
        } => {
            let tail = error.map(|e| format!(" ({e})")).unwrap_or_default();
            println!(
                "captured {}: {bytes} bytes in {chunks} reads, {calls} calls{tail}",
                p.display()
            );
        }
        ProxyEvent::CaptureFinished {
            path: None, error, ..
        } => {
            eprintln!(
                "sse-replay: a capture could not be saved: {}",
                crate::text::visible(&error.unwrap_or_default())
            );
        }
    }
}
