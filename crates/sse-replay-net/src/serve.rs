//! `sse-replay serve`: a recording as a streaming HTTP endpoint (a mock LLM API).
//!
//! Any path and method gets the recorded response (so an AWS SDK's `/model/{id}/converse-stream`
//! works as well as `/v1/chat/completions`): its status (200 when none was recorded), its
//! `Content-Type` (when none: the one of the body's framing, [`Framing::content_type`] —
//! `text/event-stream`, `application/x-ndjson` for JSON lines, `application/vnd.amazon.eventstream`
//! for binary AWS frames, `application/json` for a JSON array streamed element by element — or
//! `application/json` for one complete response), then the body with the recorded chunk boundaries and timing,
//! scaled by `--speed`, or re-cut into `--rechunk N`-byte writes that split UTF-8 characters and
//! CRLFs on purpose. A client that opens with the HTTP/2 preface (prior knowledge, as the AWS SDK
//! for JavaScript's Bedrock client does) is answered in HTTP/2, any other in HTTP/1.1. Each chunk
//! is its own write (chunked transfer encoding, no
//! `Content-Length`, `TCP_NODELAY`). Writes are scheduled against one start instant, so sleeping
//! never accumulates drift.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;

use super::{AnyBody, ChannelBody, NetError};
use sse_replay_core::dialect::StreamApi;
use sse_replay_core::framing::Framing;
use sse_replay_core::recording::Recording;

/// Largest request body `serve` reads (and discards, frame by frame) before answering; more is
/// answered with 413.
const MAX_REQUEST_BYTES: u64 = 64 << 20;

/// Slowest and fastest `--speed`: within these every scaled time fits a [`Duration`].
pub const SPEED_RANGE: std::ops::RangeInclusive<f64> = 0.001..=1_000_000.0;

/// How writes are timed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pacing {
    /// The recorded arrival times divided by `speed`.
    Recorded { speed: f64 },
    /// No waiting.
    Instant,
}

/// What every request is answered with: computed once per server.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub status: u16,
    pub content_type: String,
    /// Each write and when it is due, relative to the response start.
    pub writes: Vec<(Duration, Bytes)>,
    /// After the last write, abort the connection instead of ending the body cleanly (a stream
    /// cut mid-event, for `sse-replay test`'s `cut` fault).
    pub abort_at_end: bool,
    /// The body is one complete (non-streaming) JSON response ([`sse_replay_core::complete`]): it is sent
    /// whole, with its `Content-Length`, when its last byte is due.
    pub complete: bool,
    /// The streaming API the body belongs to when its dialect has several
    /// ([`sse_replay_core::dialect::StreamApi`]): a request that asks for another of them is
    /// answered 404 at once, and noted ([`Served::other_api`]), instead of handed a stream it
    /// cannot read. `None` (`serve`): every request gets the body.
    pub api: Option<StreamApi>,
}

impl Plan {
    /// Builds the plan for `rec`. With `rechunk`, the body is re-cut into `n`-byte writes; each
    /// write is due when its last byte was recorded as received.
    pub fn new(rec: &Recording, pacing: Pacing, rechunk: Option<usize>) -> Self {
        let due = |t_micros: u64| match pacing {
            Pacing::Instant => Duration::ZERO,
            // Saturates rather than panics for a speed set in code outside the CLI's range.
            Pacing::Recorded { speed } => super::secs(t_micros as f64 / 1e6 / speed),
        };
        let writes = match rechunk {
            None => rec
                .chunks
                .iter()
                .filter(|c| !c.bytes.is_empty())
                .map(|c| (due(c.t_micros), Bytes::from(c.bytes.clone())))
                .collect(),
            Some(n) => {
                let n = n.max(1);
                let body = Bytes::from(rec.body());
                // Arrival time of each byte's chunk, found by walking chunk ends.
                let mut ends = rec.chunks.iter().scan(0usize, |end, c| {
                    *end += c.bytes.len();
                    Some((*end, c.t_micros))
                });
                let mut current = ends.next();
                let mut writes = Vec::with_capacity(body.len() / n + 1);
                let mut start = 0;
                while start < body.len() {
                    let end = (start + n).min(body.len());
                    while let Some((chunk_end, _)) = current
                        && chunk_end < end
                    {
                        current = ends.next();
                    }
                    let t = current.map_or(0, |(_, t)| t);
                    writes.push((due(t), body.slice(start..end)));
                    start = end;
                }
                writes
            }
        };
        let complete = sse_replay_core::complete::chunks_are_complete(
            rec.chunks.iter().map(|c| c.bytes.as_slice()),
        );
        // The body's first bytes decide its framing (Gemini's streamGenerateContent without
        // alt=sse and any dump of chunks is a JSON array, Ollama's JSON lines, Bedrock's frames).
        let head: Vec<u8> = rec
            .chunks
            .iter()
            .flat_map(|c| c.bytes.iter().copied())
            .take(4096)
            .collect();
        let response = rec.response.as_ref();
        let status = response.map_or(200, |r| r.status);
        let status = if (200..=599).contains(&status) {
            status
        } else {
            200
        };
        let content_type = response
            .and_then(|r| {
                r.headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            })
            .map_or_else(
                || {
                    if complete {
                        "application/json".to_owned()
                    } else {
                        // The framer's own decision on the body's first bytes.
                        sse_replay_core::content::framing(&head)
                            .unwrap_or(Framing::Sse)
                            .content_type()
                            .to_owned()
                    }
                },
                |(_, v)| v.clone(),
            );
        Self {
            status,
            content_type,
            writes,
            abort_at_end: false,
            complete,
            api: None,
        }
    }
}

/// What a server saw of its clients, filled as it answers: how many asked for the response and
/// how much of it was handed to their connection. The client-test harness reads it to tell a
/// client that read the stream from one that never asked for it. "Handed to the connection" is
/// what the server can know: a small body fits in the socket buffers, so a client that reads a
/// few bytes and closes may still count as served whole.
#[derive(Debug, Default)]
pub struct ServedLog {
    requests: AtomicU32,
    most_bytes: AtomicU64,
    whole: AtomicU32,
    left: AtomicU32,
    /// The first API another than the plan's that a request asked for.
    other_api: std::sync::OnceLock<StreamApi>,
}

/// A snapshot of a [`ServedLog`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Served {
    /// Requests answered with the response (a request refused for its body is not counted).
    pub requests: u32,
    /// The most bytes of the body one response handed to its connection.
    pub bytes: u64,
    /// Responses handed over to their end.
    pub whole: u32,
    /// Responses whose client left before their end (the connection closed while writing).
    pub left: u32,
    /// A request asked for another streaming API of the dialect than the stream's
    /// ([`Plan::api`]): the first one asked for. It was answered 404, not counted in `requests`.
    pub other_api: Option<StreamApi>,
}

impl Served {
    /// The API the client asked for when it asked only for another one than the case's: it
    /// was never handed the stream, so the case is not one it speaks.
    pub fn asked_other_api(&self) -> Option<StreamApi> {
        self.other_api.filter(|_| self.requests == 0)
    }
}

impl ServedLog {
    /// What was seen so far.
    pub fn snapshot(&self) -> Served {
        Served {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.most_bytes.load(Ordering::Relaxed),
            whole: self.whole.load(Ordering::Relaxed),
            left: self.left.load(Ordering::Relaxed),
            other_api: self.other_api.get().copied(),
        }
    }

    fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    fn progress(&self, bytes: usize) {
        self.most_bytes.fetch_max(bytes as u64, Ordering::Relaxed);
    }

    fn ended(&self, whole: bool, left: bool) {
        if whole {
            self.whole.fetch_add(1, Ordering::Relaxed);
        }
        if left {
            self.left.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What to serve and where.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    pub plan: Arc<Plan>,
    /// Log each request on standard error.
    pub log: bool,
    /// Time-outs and the connection cap.
    pub limits: super::ServerLimits,
}

/// A running `serve` (see [`super::ServerHandle`]).
pub type ServeHandle = super::ServerHandle;

/// Binds `config.addr` and serves on a background thread with its own runtime.
pub fn start(config: ServeConfig) -> Result<ServeHandle, NetError> {
    start_watched(config, None)
}

/// [`start`], noting what each client was served in `watch`.
pub fn start_watched(
    config: ServeConfig,
    watch: Option<Arc<ServedLog>>,
) -> Result<ServeHandle, NetError> {
    let listener = super::bind(config.addr)?;
    let addr = listener.local_addr().map_err(|source| NetError::Bind {
        addr: config.addr,
        source,
    })?;
    let rt = super::multi_thread_runtime().map_err(NetError::Runtime)?;
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let thread = std::thread::Builder::new()
        .name("sse-replay-serve".into())
        .spawn(move || {
            rt.block_on(run_watched(
                listener,
                config.plan,
                config.log,
                config.limits,
                stop_rx,
                watch,
            ));
        })
        .map_err(NetError::Runtime)?;
    Ok(super::ServerHandle::new(addr, stop, thread))
}

/// Serves `plan` on `listener` until `stop`.
pub async fn run(
    listener: std::net::TcpListener,
    plan: Arc<Plan>,
    log: bool,
    limits: super::ServerLimits,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    run_watched(listener, plan, log, limits, stop, None).await;
}

async fn run_watched(
    listener: std::net::TcpListener,
    plan: Arc<Plan>,
    log: bool,
    limits: super::ServerLimits,
    stop: tokio::sync::watch::Receiver<bool>,
    watch: Option<Arc<ServedLog>>,
) {
    let stop_streams = stop.clone();
    super::accept_loop(listener, stop, limits, true, move |req, peer| {
        let plan = plan.clone();
        let stop = stop_streams.clone();
        let watch = watch.clone();
        async move { respond(req, peer, plan, log, limits, stop, watch).await }
    })
    .await;
}

/// Why a request body was not read to its end.
enum DrainError {
    TooLarge,
    Stalled(super::BodyStall),
    Read(hyper::Error),
}

/// Reads the request body to its end and throws it away, one frame at a time (memory stays at one
/// frame however large the body): at most `limit` bytes, within the body's clock
/// ([`super::BodyClock`]: idle timeout, whole-body deadline, minimum rate).
async fn drain_body(
    mut body: hyper::body::Incoming,
    limit: u64,
    limits: &super::ServerLimits,
) -> Result<u64, DrainError> {
    let mut total = 0u64;
    let mut clock = super::BodyClock::new(limits);
    loop {
        match clock.frame(&mut body).await {
            Err(stall) => return Err(DrainError::Stalled(stall)),
            Ok(None) => return Ok(total),
            Ok(Some(Err(e))) => return Err(DrainError::Read(e)),
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    total += data.len() as u64;
                    if total > limit {
                        return Err(DrainError::TooLarge);
                    }
                }
            }
        }
    }
}

/// Answers one request with `plan` (the request body read and dropped first), noting in `watch`
/// what the client was served.
pub(crate) async fn respond(
    req: hyper::Request<hyper::body::Incoming>,
    peer: SocketAddr,
    plan: Arc<Plan>,
    log: bool,
    limits: super::ServerLimits,
    mut stop: tokio::sync::watch::Receiver<bool>,
    watch: Option<Arc<ServedLog>>,
) -> hyper::Response<AnyBody> {
    let method = req.method().clone();
    let asked = plan.api.and_then(|api| {
        api.dialect
            .api_of_request(req.uri().path(), req.uri().query())
            .filter(|asked| *asked != api)
            .map(|asked| (api, asked))
    });
    // Only logged: redacted, as a gateway may take a key in the path.
    let path = sse_replay_core::redact::redact_url(req.uri().path());
    // Read the request body first, as a real endpoint does (the client may still be sending), but
    // keep none of it: the answer does not depend on it.
    let body_len = match drain_body(req.into_body(), MAX_REQUEST_BYTES, &limits).await {
        Ok(n) => n,
        Err(e) => {
            let (status, text, why) = match e {
                DrainError::TooLarge => (
                    413,
                    "the request body is larger than 64 MiB\n".to_owned(),
                    "too large".to_owned(),
                ),
                DrainError::Stalled(stall) => {
                    let why = stall.describe(&limits);
                    (408, format!("{why}\n"), why)
                }
                DrainError::Read(e) => (
                    400,
                    "cannot read the request body\n".to_owned(),
                    e.to_string(),
                ),
            };
            if log {
                let path = sse_replay_core::text::visible(&path);
                sse_replay_core::log_line!(
                    "{method} {path} from {peer}: request body {why}: answered {status}"
                );
            }
            return simple(status, text);
        }
    };
    if let Some((api, asked)) = asked {
        if let Some(w) = &watch {
            w.other_api.set(asked).ok();
        }
        if log {
            let path = sse_replay_core::text::visible(&path);
            sse_replay_core::log_line!(
                "{method} {path} from {peer}: asks for {}, this stream is {}: answered 404",
                asked.label(),
                api.label()
            );
        }
        return simple(
            404,
            format!(
                "this case streams {}; the request asks for {}\n",
                api.label(),
                asked.label()
            ),
        );
    }
    // Logged once the response is over, with what was actually written (a client may leave).
    let request_line = format!(
        "{method} {} from {peer} ({})",
        sse_replay_core::text::visible(&path),
        sse_replay_core::text::plural(body_len, "byte")
    );
    if let Some(w) = &watch {
        w.request();
    }
    if plan.complete && !plan.abort_at_end {
        let resp = respond_whole(&plan, &mut stop).await;
        if let Some(w) = &watch
            && resp.status().as_u16() == plan.status
        {
            w.progress(plan.writes.iter().map(|(_, b)| b.len()).sum());
            w.ended(true, false);
        }
        if log {
            let bytes: usize = plan.writes.iter().map(|(_, b)| b.len()).sum();
            sse_replay_core::log_line!(
                "{request_line}: {}, one complete body of {}",
                resp.status().as_u16(),
                sse_replay_core::text::plural(bytes, "byte")
            );
        }
        return resp;
    }
    let (tx, body) = ChannelBody::channel();
    let (status, content_type) = (plan.status, plan.content_type.clone());
    tokio::spawn(async move {
        let start = tokio::time::Instant::now();
        let total = plan.writes.len();
        let (mut written, mut bytes_written) = (0usize, 0usize);
        let mut ending = "";
        for (due, bytes) in &plan.writes {
            if !due.is_zero() {
                tokio::select! {
                    biased;
                    () = super::stopped(&mut stop) => {
                        tx.send(Err(std::io::Error::other("server stopping"))).await.ok();
                        ending = " before the server stopped";
                        break;
                    }
                    () = tokio::time::sleep_until(start + *due) => {}
                }
            }
            if tx.send(Ok(bytes.clone())).await.is_err() {
                ending = " before the client left";
                break;
            }
            written += 1;
            bytes_written += bytes.len();
            if let Some(w) = &watch {
                w.progress(bytes_written);
            }
        }
        if let Some(w) = &watch {
            w.ended(
                ending.is_empty() && written == total,
                ending == " before the client left",
            );
        }
        if ending.is_empty() && plan.abort_at_end {
            tx.send(Err(std::io::Error::other("stream cut"))).await.ok();
            ending = ", then cut (as planned)";
        }
        // Handed to the connection is not yet received: a client that left is only noticed at
        // the next write, so its count says what reached the connection at most.
        drop(tx);
        if log {
            let of = if written == total {
                sse_replay_core::text::plural(total, "write")
            } else {
                format!(
                    "{written} of {}",
                    sse_replay_core::text::plural(total, "write")
                )
            };
            sse_replay_core::log_line!(
                "{request_line}: {status}, {of} ({}){ending}",
                sse_replay_core::text::plural(bytes_written, "byte")
            );
        }
    });
    let mut resp = hyper::Response::new(super::boxed_channel(body));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
    let headers = resp.headers_mut();
    if let Ok(v) = hyper::header::HeaderValue::from_str(&content_type) {
        headers.insert(hyper::header::CONTENT_TYPE, v);
    }
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    headers.insert(
        "x-accel-buffering",
        hyper::header::HeaderValue::from_static("no"),
    );
    resp
}

/// A complete (non-streaming) response: the whole body at once, when its last byte is due, with
/// its `Content-Length` (a full body's exact size), as a non-streaming endpoint answers.
async fn respond_whole(
    plan: &Plan,
    stop: &mut tokio::sync::watch::Receiver<bool>,
) -> hyper::Response<AnyBody> {
    let due = plan
        .writes
        .iter()
        .map(|(d, _)| *d)
        .max()
        .unwrap_or_default();
    if !due.is_zero() {
        tokio::select! {
            biased;
            () = super::stopped(stop) => {
                return simple(503, "the server is stopping\n");
            }
            () = tokio::time::sleep(due) => {}
        }
    }
    let mut body = Vec::with_capacity(plan.writes.iter().map(|(_, b)| b.len()).sum());
    for (_, b) in &plan.writes {
        body.extend_from_slice(b);
    }
    let mut resp = hyper::Response::new(super::boxed_full(body));
    *resp.status_mut() = hyper::StatusCode::from_u16(plan.status).unwrap_or(hyper::StatusCode::OK);
    if let Ok(v) = hyper::header::HeaderValue::from_str(&plan.content_type) {
        resp.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    resp
}

pub(crate) fn simple(status: u16, text: impl Into<Bytes>) -> hyper::Response<AnyBody> {
    let mut resp = hyper::Response::new(super::boxed_full(text));
    *resp.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
    resp
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sse_replay_core::recording::Chunk;

    fn rec() -> Recording {
        Recording {
            chunks: vec![
                Chunk {
                    t_micros: 0,
                    bytes: b"data: a\n\n".to_vec(),
                },
                Chunk {
                    t_micros: 10_000,
                    bytes: b"data: \xe6\xb7".to_vec(),
                },
                Chunk {
                    t_micros: 30_000,
                    bytes: b"\xb1\r\n\r\n".to_vec(),
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn recorded_pacing_scales_times() {
        let p = Plan::new(&rec(), Pacing::Recorded { speed: 2.0 }, None);
        let due: Vec<_> = p.writes.iter().map(|(d, _)| d.as_micros()).collect();
        assert_eq!(due, [0, 5_000, 15_000]);
        assert_eq!(p.status, 200);
        assert_eq!(p.content_type, "text/event-stream");
    }

    /// A recording with no response head is served with its body's framing's content type, the
    /// one the client-test harness sends for the same recording: JSON lines as
    /// `application/x-ndjson` (it was `text/event-stream` here), a JSON array as JSON, binary
    /// frames as an AWS event stream.
    #[test]
    fn the_content_type_without_a_recorded_head_is_the_bodys_framings() {
        use sse_replay_core::dialect::DialectKind;
        use sse_replay_core::stub::{self, StubSpec};
        for (dialect, framing, want) in [
            (DialectKind::Ollama, None, "application/x-ndjson"),
            (
                DialectKind::OpenAiChat,
                Some(Framing::JsonLines),
                "application/x-ndjson",
            ),
            (
                DialectKind::Gemini,
                Some(Framing::JsonArray),
                "application/json",
            ),
            (DialectKind::AnthropicMessages, None, "text/event-stream"),
            (
                DialectKind::BedrockConverse,
                None,
                "application/vnd.amazon.eventstream",
            ),
        ] {
            let mut rec = stub::build(&StubSpec {
                dialect,
                framing,
                calls: ["get_weather", "get_time"]
                    .iter()
                    .enumerate()
                    .map(|(i, name)| stub::StubCall {
                        id: format!("call_{i}"),
                        name: (*name).into(),
                        arguments: r#"{"city":"Shenzhen"}"#.into(),
                    })
                    .collect(),
                ..StubSpec::default()
            });
            rec.response = None;
            let p = Plan::new(&rec, Pacing::Instant, None);
            assert_eq!(p.content_type, want, "{dialect:?} {framing:?}");
            let suite = crate::harness::SuiteRecording::new("stub.ron".into(), rec, None);
            assert_eq!(suite.response_head().1, want, "{dialect:?} {framing:?}");
        }
    }

    #[test]
    fn rechunk_keeps_bytes_and_times_each_piece_by_its_last_byte() {
        let r = rec();
        for n in 1..=20 {
            let p = Plan::new(&r, Pacing::Recorded { speed: 1.0 }, Some(n));
            let body: Vec<u8> = p.writes.iter().flat_map(|(_, b)| b.to_vec()).collect();
            assert_eq!(body, r.body(), "n={n}");
            assert!(p.writes.iter().all(|(_, b)| b.len() <= n));
            assert!(
                p.writes.windows(2).all(|w| w[0].0 <= w[1].0),
                "due times are monotonic"
            );
        }
        let p = Plan::new(&r, Pacing::Recorded { speed: 1.0 }, Some(9));
        let due: Vec<_> = p.writes.iter().map(|(d, _)| d.as_micros()).collect();
        // Chunks end at bytes 9, 17, 22: 0..9 → chunk 0; 9..18 and 18..22 end in chunk 2.
        assert_eq!(due, [0, 30_000, 30_000]);
        let p = Plan::new(&r, Pacing::Instant, Some(4));
        assert!(p.writes.iter().all(|(d, _)| d.is_zero()));
    }
}
