//! `sse-replay proxy`: a recording reverse proxy. Point an application's base URL at it; every
//! request is forwarded unchanged to the upstream (minus hop-by-hop headers; `Host` is the
//! upstream's), every response streams back read by read with no buffering, and every
//! `text/event-stream` response is teed into a new recording `DIR/<UTC time>-<n>.ron`, redacted and
//! crash-safe (a JSON answer to a request without `"stream": true` is held to its end and recorded
//! when it is one complete LLM response, [`sse_replay_core::complete`]) (the same writer thread as `record`). Arrival times count from when the request was
//! forwarded. Bodies are passed through as they are: a compressed event stream is recorded
//! compressed (and says so in its notes).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

pub use super::confine::confine_path;
use super::exchange::{self, Exchange, ExchangeEnd};
use super::headers;
use super::sink::Sink;
use super::{AnyBody, ChannelBody, NetError};
use sse_replay_core::recording::{
    self, Chunk, Meta, Recording, RecordingError, RequestInfo, ResponseInfo,
};

/// How much of a request body a capture keeps. The body itself streams upstream whole, frame by
/// frame, whatever its size; only this prefix is held in memory for the recording.
pub const CAPTURED_BODY_BYTES: usize = 1 << 20;

/// What the proxy needs.
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    pub listen: SocketAddr,
    /// `http(s)://host[:port][/prefix]`.
    pub upstream: String,
    pub out_dir: PathBuf,
    /// Connect timeout and upstream idle timeout.
    pub timeout: Duration,
    /// Keep the requests' secrets in the captures (`--keep-secrets`); redacted by default.
    pub keep_secrets: bool,
    /// Client-side time-outs and the connection cap.
    pub limits: super::ServerLimits,
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
    /// The upstream could not be reached or did not answer in time; the client got `status`
    /// (502, or 504 for a timeout).
    UpstreamFailed {
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    /// The request was not forwarded (e.g. its path climbs out of the upstream's prefix); the
    /// client got `status`.
    Refused {
        method: String,
        path: String,
        status: u16,
        reason: String,
    },
    /// A response head arrived, or the request failed before one: one row of a request list
    /// (redacted). Every request gets exactly one, then one [`ProxyEvent::ExchangeEnded`].
    Exchange(Box<Exchange>),
    /// The response body of an [`Exchange`] ended.
    ExchangeEnded(ExchangeEnd),
    /// The first byte of an [`Exchange`]'s response body arrived, this many microseconds after
    /// the request was forwarded (so a list can show it while the body streams).
    FirstByte { id: u64, micros: u64 },
    /// Reads of a captured event stream as they arrive (at most every
    /// [`super::sink::FLUSH_INTERVAL`]): a live view can follow the stream. `id` is its
    /// [`Exchange`]'s; the reads are as the capture records them (times from the forward).
    CaptureProgress {
        id: u64,
        chunks: Vec<Chunk>,
        progress: super::sink::Progress,
    },
    /// An event stream started; it is being journalled next to `path`. `id` is its
    /// [`Exchange`]'s.
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
        /// The stream ended normally (finish signal, `[DONE]` or every call complete).
        ended_normally: bool,
    },
}

/// A running `proxy` (see [`super::ServerHandle`]).
pub type ProxyHandle = super::ServerHandle;

struct Shared {
    upstream: String,
    out_dir: PathBuf,
    timeout: Duration,
    keep_secrets: bool,
    client: reqwest::Client,
    next_id: AtomicU64,
    on_event: Arc<dyn Fn(ProxyEvent) + Send + Sync>,
    stop: tokio::sync::watch::Receiver<bool>,
    /// The client-side limits: the request body's clock as it streams upstream, the capture
    /// cap, the budget for held JSON answers.
    limits: super::ServerLimits,
    /// Bytes of JSON answers held right now, all requests together (see
    /// [`super::ServerLimits::max_held_json_bytes`]).
    held_json: Arc<AtomicU64>,
    /// Captures still being written: the proxy waits for them when it stops.
    captures: InFlight,
}

/// A count of tasks that must finish before the proxy exits (open captures), and a way to wait
/// until it drops to zero.
#[derive(Debug, Default)]
struct InFlight {
    count: std::sync::atomic::AtomicUsize,
    done: tokio::sync::Notify,
}

/// One task counted in [`InFlight`] while it lives.
struct InFlightGuard(Arc<Shared>);

impl InFlight {
    fn enter(shared: &Arc<Shared>) -> InFlightGuard {
        shared.captures.count.fetch_add(1, Ordering::SeqCst);
        InFlightGuard(shared.clone())
    }

    /// Waits until nothing is in flight.
    async fn idle(&self) {
        loop {
            let notified = self.done.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.0.captures.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.captures.done.notify_waiters();
        }
    }
}

/// Longest the proxy waits, when stopping, for open captures to be saved.
const SAVE_GRACE: Duration = Duration::from_secs(10);

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
        keep_secrets: config.keep_secrets,
        client,
        next_id: AtomicU64::new(1),
        on_event: Arc::new(on_event),
        stop: stop_rx.clone(),
        limits: config.limits,
        held_json: Arc::new(AtomicU64::new(0)),
        captures: InFlight::default(),
    });
    let limits = config.limits;
    let thread = std::thread::Builder::new()
        .name("sse-replay-proxy".into())
        .spawn(move || {
            rt.block_on(async move {
                let handler_shared = shared.clone();
                super::accept_loop(listener, stop_rx, limits, false, move |req, _peer| {
                    let shared = handler_shared.clone();
                    async move { forward(req, shared).await }
                })
                .await;
                // Open captures have seen the stop: wait (bounded) until each is saved.
                if tokio::time::timeout(SAVE_GRACE, shared.captures.idle())
                    .await
                    .is_err()
                {
                    sse_replay_core::log_line!(
                        "sse-replay: captures still open after {} s; their journals are kept",
                        SAVE_GRACE.as_secs()
                    );
                }
            });
            // Dropping the runtime also waits for spawn_blocking saves in progress.
            drop(rt);
        })
        .map_err(NetError::Runtime)?;
    Ok(super::ServerHandle::new(addr, stop, thread))
}

/// A free file name `DIR/<stamp>-<n>.ron` (neither it nor its journal exists yet). Free now; the
/// journal's `O_EXCL` creation and the final no-overwrite rename settle a race with another
/// process (see [`open_capture`]).
fn capture_path(dir: &std::path::Path, id: u64) -> PathBuf {
    recording::free_path(&dir.join(format!("{}-{id:04}.ron", super::file_stamp_now())))
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
    begun: Exchange,
    method: String,
    path: String,
    url: &str,
    status: u16,
    message: String,
) -> hyper::Response<AnyBody> {
    report_failed(shared, begun, status, &message);
    (shared.on_event)(ProxyEvent::UpstreamFailed {
        method,
        path,
        status,
        message: message.clone(),
    });
    error_response(status, format!("sse-replay proxy: {message}: {url}\n"))
}

/// Reports an exchange that got no upstream response (`status` is what the client got).
fn report_failed(shared: &Shared, mut begun: Exchange, status: u16, message: &str) {
    let id = begun.id;
    begun.status = status;
    begun.error = Some(message.to_owned());
    (shared.on_event)(ProxyEvent::Exchange(Box::new(begun)));
    (shared.on_event)(ProxyEvent::ExchangeEnded(ExchangeEnd {
        id,
        first_byte_micros: None,
        duration_micros: 0,
        bytes: 0,
        error: Some(message.to_owned()),
    }));
}

/// The first bytes of a request body, kept for the capture while the whole body streams upstream.
#[derive(Debug, Default)]
struct BodyPrefix {
    bytes: Vec<u8>,
    total: u64,
    complete: bool,
}

/// The client's request body as a stream for reqwest: frames pass straight through (memory stays
/// at a frame or two, whatever the size), the first [`CAPTURED_BODY_BYTES`] are copied into
/// `prefix`, and a body that stalls, takes longer than the body deadline or arrives slower than
/// the minimum rate ([`super::BodyClock`]) ends the stream with an error (which aborts the
/// upstream request and frees the connection).
fn stream_body(
    body: hyper::body::Incoming,
    prefix: Arc<std::sync::Mutex<BodyPrefix>>,
    limits: super::ServerLimits,
) -> reqwest::Body {
    let clock = super::BodyClock::new(&limits);
    let stream = futures_util::stream::unfold(Some((body, clock)), move |state| {
        let prefix = prefix.clone();
        async move {
            let (mut body, mut clock) = state?;
            loop {
                let item = match clock.frame(&mut body).await {
                    Err(stall) => Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "the client's {}",
                            stall.describe(&limits).trim_start_matches("the ")
                        ),
                    )),
                    Ok(None) => {
                        lock(&prefix).complete = true;
                        return None;
                    }
                    Ok(Some(Err(e))) => Err(std::io::Error::other(e)),
                    Ok(Some(Ok(frame))) => match frame.into_data() {
                        Ok(data) => {
                            // The client sends no more than its Content-Length: the upstream
                            // side stops asking then, so the end is seen here, not as `None`.
                            if hyper::body::Body::is_end_stream(&body) {
                                lock(&prefix).complete = true;
                            }
                            Ok(data)
                        }
                        Err(_) => continue, // trailers: not forwarded
                    },
                };
                return Some(match item {
                    Ok(data) => {
                        let mut p = lock(&prefix);
                        p.total += data.len() as u64;
                        let room = CAPTURED_BODY_BYTES.saturating_sub(p.bytes.len());
                        let keep = room.min(data.len());
                        p.bytes.extend_from_slice(&data[..keep]);
                        // The last frame of a body with a length: reqwest may not ask for the
                        // end after it, so the body is complete now (not "cut when answered").
                        if hyper::body::Body::is_end_stream(&body) {
                            p.complete = true;
                        }
                        drop(p);
                        (Ok(data), Some((body, clock)))
                    }
                    Err(e) => (Err(e), None),
                });
            }
        }
    });
    reqwest::Body::wrap_stream(stream)
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn forward(
    req: hyper::Request<hyper::body::Incoming>,
    shared: Arc<Shared>,
) -> hyper::Response<AnyBody> {
    use hyper::body::Body as _;
    let (parts, body) = req.into_parts();
    let method = parts.method.to_string();
    // The path as forwarded is `raw_path`; everything shown or written (the request list, the
    // log lines, capture titles) gets it redacted: a gateway may take a key in the path.
    let raw_path = parts.uri.path().to_owned();
    let path = recording::redact_url(&raw_path);
    let mut begun = Exchange {
        id: shared.next_id.fetch_add(1, Ordering::Relaxed),
        started: super::rfc3339_now(),
        method: method.clone(),
        path: path.clone(),
        url: String::new(),
        model: None,
        request_headers: Vec::new(),
        request_body: String::new(),
        status: 0,
        response_headers: Vec::new(),
        head_micros: 0,
        error: None,
    };
    if parts.method == hyper::Method::CONNECT {
        let reason = "CONNECT is not forwarded: this proxy sends requests to its upstream, it is not a tunnel".to_owned();
        report_failed(&shared, begun, 405, &reason);
        (shared.on_event)(ProxyEvent::Refused {
            method,
            path: path.clone(),
            status: 405,
            reason: reason.clone(),
        });
        return error_response(405, format!("sse-replay proxy: {reason}\n"));
    }
    let Some(confined) = confine_path(&raw_path) else {
        let reason = "the path holds a dot segment (`.` or `..`, plain, encoded, double-encoded, overlong, backslashed or with a `;` parameter): it could leave the upstream's prefix, and clients resolve dot segments before they send".to_owned();
        report_failed(&shared, begun, 400, &reason);
        (shared.on_event)(ProxyEvent::Refused {
            method,
            path: path.clone(),
            status: 400,
            reason: reason.clone(),
        });
        return error_response(400, format!("sse-replay proxy: {reason}: {path}\n"));
    };
    let path_and_query = match parts.uri.query() {
        Some(q) => format!("{confined}?{q}"),
        None => confined,
    };
    let target = format!("{}{}", shared.upstream, path_and_query);
    let safe_url = recording::redact_url(&target);
    let listed = headers::connection_listed(&parts.headers);
    let mut out_headers = reqwest::header::HeaderMap::new();
    for (name, value) in &parts.headers {
        let n = name.as_str();
        if headers::is_hop_by_hop(n) || listed.iter().any(|l| l == n) {
            continue;
        }
        out_headers.append(name.clone(), value.clone());
    }
    let recorded_headers = headers::header_pairs(&out_headers);
    begun.url = safe_url.clone();
    begun.request_headers = exchange::shown_headers(recorded_headers.clone());
    // The body streams through as it arrives, so its length is the client's: keep a
    // Content-Length the client sent (hyper has checked it and reads exactly that much) rather
    // than switching the upstream request to chunked encoding, which some servers refuse.
    if !parts.headers.contains_key(hyper::header::TRANSFER_ENCODING)
        && let Some(len) = parts.headers.get(hyper::header::CONTENT_LENGTH)
    {
        out_headers.insert(reqwest::header::CONTENT_LENGTH, len.clone());
    }

    let prefix = Arc::new(std::sync::Mutex::new(BodyPrefix::default()));
    let mut request = shared
        .client
        .request(parts.method.clone(), &target)
        .headers(out_headers);
    // A small body of a known length (an LLM request, usually) is read whole before it is sent:
    // it is there to show even when the upstream cannot be reached. A larger or chunked one
    // streams through as it arrives.
    let small = !parts.headers.contains_key(hyper::header::TRANSFER_ENCODING)
        && parts
            .headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .is_some_and(|n| n <= exchange::SHOWN_BODY_BYTES as u64);
    if body.is_end_stream() {
        lock(&prefix).complete = true;
    } else if small {
        match tokio::time::timeout(
            shared.limits.idle_timeout.min(shared.limits.body_timeout),
            http_body_util::BodyExt::collect(body),
        )
        .await
        {
            Ok(Ok(whole)) => {
                let bytes = whole.to_bytes();
                let mut p = lock(&prefix);
                p.total = bytes.len() as u64;
                p.bytes = bytes.to_vec();
                p.complete = true;
                drop(p);
                request = request.body(bytes);
            }
            // As when the body streams through: the upstream request is given up (502).
            Ok(Err(e)) => {
                let reason = format!("the client's request body could not be read: {e}");
                return upstream_failed(&shared, begun, method, path, &safe_url, 502, reason);
            }
            Err(_) => {
                let reason = "the client's request body stalled (idle timeout)".to_owned();
                return upstream_failed(&shared, begun, method, path, &safe_url, 502, reason);
            }
        }
    } else {
        request = request.body(stream_body(body, prefix.clone(), shared.limits));
    }
    // What the request was, for an exchange that gets no response: the body read so far.
    let attempted = |begun: &mut Exchange| {
        let p = lock(&prefix);
        let info = RequestInfo {
            method: method.clone(),
            url: target.clone(),
            headers: recorded_headers.clone(),
            body: String::from_utf8_lossy(&p.bytes).into_owned(),
        };
        drop(p);
        (begun.request_headers, begun.request_body, begun.model) = exchange::shown_request(&info);
    };
    let t0 = Instant::now();
    let sent = tokio::time::timeout(shared.timeout, request.send()).await;
    let upstream = match sent {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let message = super::describe_reqwest_error(&e);
            attempted(&mut begun);
            let (m, p) = (method.clone(), path.clone());
            return upstream_failed(&shared, begun, m, p, &safe_url, 502, message);
        }
        Err(_) => {
            let message = format!("no response within {} s", shared.timeout.as_secs_f64());
            attempted(&mut begun);
            let (m, p) = (method.clone(), path.clone());
            return upstream_failed(&shared, begun, m, p, &safe_url, 504, message);
        }
    };
    let (request_info, body_notes) = {
        let p = lock(&prefix);
        let mut notes = Vec::new();
        if p.total > p.bytes.len() as u64 {
            notes.push(format!(
                "the request body is cut to its first {} bytes here (the upstream got all of it)",
                p.bytes.len()
            ));
        } else if !p.complete {
            notes.push(
                "the upstream answered before the request body ended: the request body here is \
                 what had been sent by then"
                    .to_owned(),
            );
        }
        let mut info = RequestInfo {
            method: method.clone(),
            url: target.clone(),
            headers: recorded_headers,
            body: String::from_utf8_lossy(&p.bytes).into_owned(),
        };
        if !shared.keep_secrets {
            info.redact();
        }
        (info, notes)
    };

    let status = upstream.status();
    let listed = headers::connection_listed(upstream.headers());
    let mut resp = hyper::Response::new(super::boxed_full(Bytes::new()));
    *resp.status_mut() = status;
    for (name, value) in upstream.headers() {
        let n = name.as_str();
        // The body is forwarded byte for byte (never decoded), so the upstream's
        // Content-Length stays true: keeping it lets a JSON answer arrive framed by length, as
        // the client would have seen it, rather than re-framed as chunked.
        let keep_length = name == hyper::header::CONTENT_LENGTH;
        if (headers::is_hop_by_hop(n) && !keep_length) || listed.iter().any(|l| l == n) {
            continue;
        }
        resp.headers_mut().append(name.clone(), value.clone());
    }
    (shared.on_event)(ProxyEvent::Forwarded {
        method: method.clone(),
        path: path.clone(),
        status: status.as_u16(),
    });
    let id = begun.id;
    (begun.request_headers, begun.request_body, begun.model) =
        exchange::shown_request(&request_info);
    begun.status = status.as_u16();
    begun.response_headers = exchange::shown_headers(headers::header_pairs(upstream.headers()));
    begun.head_micros = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
    (shared.on_event)(ProxyEvent::Exchange(Box::new(begun)));
    let content_type = upstream
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let mut pending = None;
    // Gemini's streamGenerateContent without alt=sse streams one JSON array: a stream, teed as it
    // arrives like an event stream.
    let json_stream = content_type.is_some_and(sse_replay_core::content::is_json_type)
        && path.contains(":streamGenerateContent");
    let sink = if headers::is_event_stream(content_type) || json_stream {
        open_capture(
            &shared,
            id,
            request_info,
            body_notes,
            &upstream,
            &method,
            &path,
        )
    } else {
        if content_type.is_some_and(sse_replay_core::content::is_json_type)
            && !asks_for_stream(&request_info.body)
        {
            // Perhaps a non-streaming LLM response: held until its end, captured only when it
            // is one complete response of a known shape.
            pending = Some(PendingCapture {
                id,
                request: request_info,
                notes: body_notes,
                status: upstream.status().as_u16(),
                headers: upstream.headers().clone(),
                method: method.clone(),
                path: path.clone(),
                chunks: Vec::new(),
                held: HeldBytes {
                    counter: shared.held_json.clone(),
                    limit: shared.limits.max_held_json_bytes,
                    bytes: 0,
                },
            });
        }
        None
    };
    let (tx, client_body) = ChannelBody::channel();
    *resp.body_mut() = super::boxed_channel(client_body);
    let guard = (sink.is_some() || pending.is_some()).then(|| InFlight::enter(&shared));
    tokio::spawn(async move {
        pump(id, upstream, tx, sink, pending, t0, shared).await;
        drop(guard);
    });
    resp
}

/// The request body asks for a stream (`"stream": true`).
fn asks_for_stream(body: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(body)
        .is_ok_and(|v| v.get("stream") == Some(&serde_json::Value::Bool(true)))
}

/// The largest JSON response held to see whether it is one complete LLM response.
const MAX_PENDING_JSON: u64 = 64 * 1024 * 1024;

/// A JSON response held until its end (see [`sse_replay_core::content::is_json_type`]): captured when it turns out to be one
/// complete (non-streaming) response ([`sse_replay_core::complete`]).
struct PendingCapture {
    id: u64,
    request: RequestInfo,
    notes: Vec<String>,
    status: u16,
    headers: reqwest::header::HeaderMap,
    method: String,
    path: String,
    chunks: Vec<Chunk>,
    held: HeldBytes,
}

/// The bytes one held JSON answer counts against the budget of all of them
/// ([`super::ServerLimits::max_held_json_bytes`]); given back when it is dropped.
struct HeldBytes {
    counter: Arc<AtomicU64>,
    limit: u64,
    bytes: u64,
}

impl HeldBytes {
    /// Counts `n` more bytes, unless that would go past this answer's limit or the budget of all.
    fn take(&mut self, n: u64) -> bool {
        if self.bytes + n > MAX_PENDING_JSON {
            return false;
        }
        let before = self.counter.fetch_add(n, Ordering::SeqCst);
        if before + n > self.limit {
            self.counter.fetch_sub(n, Ordering::SeqCst);
            return false;
        }
        self.bytes += n;
        true
    }
}

impl Drop for HeldBytes {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

impl PendingCapture {
    /// Keeps one read; gives up (returns `false`) past [`MAX_PENDING_JSON`] for this answer or
    /// past the budget of every answer held at once: such an answer is passed on, not captured.
    fn hold(&mut self, chunk: Chunk) -> bool {
        if !self.held.take(chunk.bytes.len() as u64) {
            return false;
        }
        self.chunks.push(chunk);
        true
    }

    /// The held body is one complete response, or a JSON array of a dialect's chunks (a stream
    /// served as `application/json`): record it, as a stream would have been.
    fn capture(self, shared: &Shared) -> Option<(u64, Sink)> {
        let complete = sse_replay_core::complete::chunks_are_complete(
            self.chunks.iter().map(|c| c.bytes.as_slice()),
        );
        if !complete
            && !sse_replay_core::content::is_chunk_array(
                self.chunks.iter().map(|c| c.bytes.as_slice()),
            )
        {
            return None;
        }
        let (id, sink) = open_capture_with(
            shared,
            self.id,
            self.request,
            self.notes,
            (self.status, &self.headers),
            &self.method,
            &self.path,
        )?;
        for c in self.chunks {
            sink.chunk(c);
        }
        Some((id, sink))
    }
}

fn open_capture(
    shared: &Shared,
    id: u64,
    request: RequestInfo,
    notes: Vec<String>,
    upstream: &reqwest::Response,
    method: &str,
    path: &str,
) -> Option<(u64, Sink)> {
    let status = upstream.status().as_u16();
    open_capture_with(
        shared,
        id,
        request,
        notes,
        (status, upstream.headers()),
        method,
        path,
    )
}

fn open_capture_with(
    shared: &Shared,
    id: u64,
    request: RequestInfo,
    mut notes: Vec<String>,
    (status, upstream_headers): (u16, &reqwest::header::HeaderMap),
    method: &str,
    path: &str,
) -> Option<(u64, Sink)> {
    let mut response_headers = headers::header_pairs(upstream_headers);
    if !shared.keep_secrets {
        recording::redact_headers(&mut response_headers);
    }
    if let Some(enc) = upstream_headers
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
            status,
            headers: response_headers,
        }),
        ..Default::default()
    };
    // Another process may take the same free name between the check and the journal's
    // creation: try the next free name (a capture never replaces a file).
    let mut attempt = 0;
    let started = loop {
        let file = capture_path(&shared.out_dir, id);
        // The reads as the writer takes them, for a live view of the flow.
        let report = shared.on_event.clone();
        let progress: super::sink::ProgressFn = Box::new(move |chunks, progress| {
            if !chunks.is_empty() {
                report(ProxyEvent::CaptureProgress {
                    id,
                    chunks: chunks.to_vec(),
                    progress,
                });
            }
        });
        match Sink::start(Some(&file), false, head.clone(), progress) {
            Err(RecordingError::JournalExists { .. } | RecordingError::Exists { .. })
                if attempt < 8 =>
            {
                attempt += 1;
            }
            other => break other.map(|sink| (file, sink)),
        }
    };
    match started {
        Ok((file, sink)) => {
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
                ended_normally: false,
            });
            None
        }
    }
}

/// Moves the upstream body to the client read by read, teeing each read into the capture.
async fn pump(
    id: u64,
    mut upstream: reqwest::Response,
    tx: tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    mut sink: Option<(u64, Sink)>,
    mut pending: Option<PendingCapture>,
    t0: Instant,
    shared: Arc<Shared>,
) {
    let mut stop = shared.stop.clone();
    let mut notes = Vec::new();
    let mut error = None;
    let (mut first_byte_micros, mut body_bytes) = (None, 0u64);
    let mut captured = 0u64;
    loop {
        let read = tokio::select! {
            biased;
            () = super::stopped(&mut stop) => {
                notes.push("the proxy was stopped during the stream".to_owned());
                tx.send(Err(std::io::Error::other("proxy stopping"))).await.ok();
                break;
            }
            r = tokio::time::timeout(shared.timeout, upstream.chunk()) => r,
        };
        match read {
            Ok(Ok(Some(bytes))) => {
                body_bytes += bytes.len() as u64;
                if first_byte_micros.is_none() {
                    let micros = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
                    first_byte_micros = Some(micros);
                    (shared.on_event)(ProxyEvent::FirstByte { id, micros });
                }
                let cap = shared.limits.max_capture_bytes;
                if sink.is_some() && captured + bytes.len() as u64 > cap {
                    // The capture ends here, saved; the stream goes on to the client.
                    let message = format!(
                        "the capture stopped at {} (--max-capture-bytes); the client got the rest, not recorded",
                        sse_replay_core::text::plural(captured, "byte")
                    );
                    let mut capped = notes.clone();
                    capped.push(message.clone());
                    if let Some((id, capture)) = sink.take() {
                        let guard = InFlight::enter(&shared);
                        let shared = shared.clone();
                        tokio::spawn(async move {
                            finish_capture(id, capture, capped, Some(message), &shared).await;
                            drop(guard);
                        });
                    }
                }
                if let Some((_, sink)) = &sink {
                    let t_micros = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
                    captured += bytes.len() as u64;
                    sink.send(Chunk {
                        t_micros,
                        bytes: bytes.to_vec(),
                    })
                    .await;
                }
                if let Some(p) = pending.as_mut() {
                    let t_micros = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
                    let chunk = Chunk {
                        t_micros,
                        bytes: bytes.to_vec(),
                    };
                    if !p.hold(chunk) {
                        pending = None;
                    }
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
                tx.send(Err(std::io::Error::other(message))).await.ok();
                break;
            }
            Err(_) => {
                let message = format!(
                    "no upstream data for {} s (idle timeout)",
                    shared.timeout.as_secs_f64()
                );
                notes.push(message.clone());
                error = Some(message.clone());
                tx.send(Err(std::io::Error::other(message))).await.ok();
                break;
            }
        }
    }
    drop(tx);
    (shared.on_event)(ProxyEvent::ExchangeEnded(ExchangeEnd {
        id,
        first_byte_micros,
        duration_micros: u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX),
        bytes: body_bytes,
        error: error.clone().or_else(|| notes.first().cloned()),
    }));
    // A held JSON response is captured only when it arrived whole and is one complete response.
    let sink = match (sink, pending) {
        (None, Some(p)) if error.is_none() && notes.is_empty() => p.capture(&shared),
        (sink, _) => sink,
    };
    if let Some((id, sink)) = sink {
        finish_capture(id, sink, notes, error, &shared).await;
    }
}

/// Saves a capture with `notes` (off the runtime's threads) and reports it; `error` is what
/// went wrong with the stream, if anything.
async fn finish_capture(
    id: u64,
    sink: Sink,
    notes: Vec<String>,
    error: Option<String>,
    shared: &Shared,
) {
    let done = tokio::task::spawn_blocking(move || sink.finish(notes)).await;
    let event = match done {
        Ok(done) => ProxyEvent::CaptureFinished {
            id,
            path: done.saved,
            bytes: done.progress.bytes,
            chunks: done.progress.chunks,
            calls: done.calls,
            error: error.or(done.write_error.map(|e| e.to_string())),
            ended_normally: done.outcome.ended_normally(),
        },
        Err(e) => ProxyEvent::CaptureFinished {
            id,
            path: None,
            bytes: 0,
            chunks: 0,
            calls: 0,
            error: Some(e.to_string()),
            ended_normally: false,
        },
    };
    (shared.on_event)(event);
}
