//! sse-replay's network crate. Real HTTP in and out: [`serve`] replays a recording as a streaming
//! endpoint, [`record`] captures a live response, [`proxy`] sits between an application and its
//! provider and tees every event stream into a recording, and [`harness`] runs a client program
//! against recordings served here. Nothing in the core pipeline calls this crate; it only feeds the
//! pipeline. Stopping is a `watch` channel the caller owns: OS signals are the binary's.
//!
//! Each entry point runs its own tokio runtime on a dedicated thread (`start` functions, for the app
//! and tests) or on the caller's thread (`run` functions, driven by the command line), so callers
//! never block on the network. Recordings are written through [`sink`], a writer thread that owns
//! the crash-safe [`sse_replay_core::recording::JournalWriter`]: the network task only stamps the arrival time
//! and hands the bytes over, so disk syncs never delay (or skew the timing of) the next read.

mod confine;
pub mod exchange;
pub mod harness;
pub mod headers;
pub mod proxy;
pub mod record;
pub mod serve;
pub mod sink;
pub mod suite;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Once};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Body, Frame};

/// Installs the `ring` crypto provider for rustls once per process. reqwest is built with
/// `rustls-no-provider`, so a client built before this panics on the first TLS connection.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another provider is already installed: that one is used, which is fine.
        rustls::crypto::ring::default_provider()
            .install_default()
            .ok();
    });
}

/// An HTTP client for recording and proxying: TLS through rustls with the platform verifier, no
/// redirects followed (a proxy must be transparent; a recorder shows what the server said), no
/// system proxy, no decompression (bytes are recorded as they arrive), `TCP_NODELAY`.
pub fn http_client(connect_timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    install_crypto_provider();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .tcp_nodelay(true)
        .build()
}

/// A multi-thread tokio runtime with two workers (the machine is shared; streams are I/O bound).
pub fn multi_thread_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// A current-thread tokio runtime (the recorder: one stream, one thread, precise timing).
pub fn current_thread_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Resolves when `stop` becomes true (or its sender is gone).
pub(crate) async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
    // An error means every sender is gone: nobody can ask to stop any more, so treat it as a stop
    // only if it was already requested; otherwise wait forever.
    if stop.wait_for(|s| *s).await.is_err() && !*stop.borrow() {
        std::future::pending::<()>().await;
    }
}

/// The stderr warning for a server bound to an address other than loopback (`None` on loopback).
/// `reach` says what a stranger on the network could do with it.
pub fn exposure_warning(addr: SocketAddr, reach: &str) -> Option<String> {
    (!addr.ip().is_loopback()).then(|| {
        format!(
            "warning: listening on {addr}, which is not a loopback address: anyone who can reach \
             this machine on the network can {reach}; use 127.0.0.1 unless that is intended"
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Response bodies fed from a channel
// ---------------------------------------------------------------------------------------------

/// A response body fed by a channel, one frame per message, so each chunk is handed to hyper as its
/// own write (chunked transfer encoding, no Content-Length). An `Err` message aborts the connection,
/// so a client sees an upstream failure as a cut stream rather than a clean end.
pub(crate) struct ChannelBody {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
    /// An error received and held back one poll (see [`ChannelBody::poll_frame`]).
    held: Option<std::io::Error>,
}

impl ChannelBody {
    /// A body and the sender that feeds it. Capacity 1: the producer waits for hyper to take each
    /// chunk, so chunks are not queued up and coalesced into one write.
    pub(crate) fn channel() -> (
        tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
        Self,
    ) {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        (tx, Self { rx, held: None })
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    /// The next message as a frame. An error is held back for one poll: hyper writes the frames
    /// it has into its buffer in a loop until the body is pending, and only then flushes; an
    /// error met in that loop aborts the connection with the last frames unsent (a client got 0
    /// of 516 bytes of a cut answer). Pending once (with a wake-up) lets that flush happen first.
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(e) = self.held.take() {
            return Poll::Ready(Some(Err(e)));
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Err(e))) => {
                self.held = Some(e);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            other => other.map(|m| m.map(|r| r.map(Frame::data))),
        }
    }
}

/// A complete, small response body (errors, 502 pages).
pub(crate) fn full_body(text: impl Into<Bytes>) -> http_body_util::Full<Bytes> {
    http_body_util::Full::new(text.into())
}

/// Either body type behind one response type.
pub(crate) type AnyBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

/// Boxes a [`ChannelBody`].
pub(crate) fn boxed_channel(body: ChannelBody) -> AnyBody {
    use http_body_util::BodyExt as _;
    body.boxed()
}

/// Boxes a complete body.
pub(crate) fn boxed_full(text: impl Into<Bytes>) -> AnyBody {
    use http_body_util::BodyExt as _;
    full_body(text).map_err(|e: Infallible| match e {}).boxed()
}

// ---------------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------------

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// Binding the listening socket failed (address in use, permission...).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// The tokio runtime or its thread could not start.
    #[error("cannot start the network runtime: {0}")]
    Runtime(std::io::Error),
    /// The upstream is not an http(s) URL.
    #[error("invalid upstream URL (expected http://host or https://host): {0}")]
    BadUpstream(String),
    /// The directory for captured sessions cannot be created.
    #[error("cannot create the capture directory: {source} in {}", .path.display())]
    OutDir {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The HTTP client could not be built (TLS setup).
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

/// A server (`serve` or `proxy`) running on its own thread and runtime: its bound address, the
/// stop signal its tasks watch, and the thread. Dropping it stops the server.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: tokio::sync::watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServerHandle {
    pub(crate) fn new(
        addr: SocketAddr,
        stop: tokio::sync::watch::Sender<bool>,
        thread: std::thread::JoinHandle<()>,
    ) -> Self {
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// The bound address (the real port when port 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, ends the open streams (a proxy saves their recordings), and waits for the
    /// server thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    /// Whether the server thread has ended.
    pub fn is_finished(&self) -> bool {
        self.thread
            .as_ref()
            .is_none_or(std::thread::JoinHandle::is_finished)
    }

    fn shutdown(&mut self) {
        self.stop.send(true).ok();
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Binds a listening socket synchronously (so the caller learns the address, or the error, before
/// anything runs), ready to hand to a tokio runtime.
pub fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, NetError> {
    let listener =
        std::net::TcpListener::bind(addr).map_err(|source| NetError::Bind { addr, source })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| NetError::Bind { addr, source })?;
    Ok(listener)
}

// ---------------------------------------------------------------------------------------------
// Limits: time-outs and the connection cap
// ---------------------------------------------------------------------------------------------

/// Largest number of seconds any time argument accepts (about 11.6 days): large enough for any
/// real use, small enough that every conversion to a [`Duration`] is exact and cannot overflow.
pub const MAX_SECONDS: f64 = 1_000_000.0;
/// Smallest number of seconds any time argument accepts (one millisecond).
pub const MIN_SECONDS: f64 = 0.001;

/// Seconds → [`Duration`], saturating instead of panicking (arguments are range-checked by
/// the CLI; this is the second line of defence for values set in code or the app).
pub fn secs(s: f64) -> Duration {
    if s.is_nan() || s <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}

/// How long a client may take and how many may be connected, for `serve` and `proxy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    /// A connection must deliver a complete request head within this long of starting to send one
    /// (hyper's header-read timeout): slowloris connections are closed.
    pub header_timeout: Duration,
    /// A connection on which no byte moved either way for this long, while the server was not
    /// itself busy with it (waiting for the upstream, or pacing a replay), is closed.
    pub idle_timeout: Duration,
    /// Connections served at once; one more is accepted and closed at once (see `accept_loop`).
    pub max_connections: usize,
    /// A request body must arrive whole within this long of the request head (`408` from
    /// `serve`, the upstream request aborted by the proxy): a body trickled a byte at a time, never
    /// idle long enough for the idle timeout, gives its connection slot back.
    pub body_timeout: Duration,
    /// After the first [`BODY_RATE_GRACE`], a request body must arrive at this many bytes per
    /// second on average (0: no minimum).
    pub min_body_rate: u64,
    /// The proxy: a capture ends when it holds this many bytes (saved with a note; the client
    /// still gets the rest of the stream, unrecorded), so an endless upstream stream cannot fill
    /// the disk.
    pub max_capture_bytes: u64,
    /// The proxy: JSON answers held at once (to see whether each is one complete response), all
    /// of them together; an answer that would go past it is passed on without being captured.
    pub max_held_json_bytes: u64,
}

/// How long a request body may arrive slower than [`ServerLimits::min_body_rate`] at its start
/// (a client's first write can lag its head).
pub const BODY_RATE_GRACE: Duration = Duration::from_secs(5);

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 256,
            body_timeout: Duration::from_secs(60),
            min_body_rate: 1024,
            max_capture_bytes: 1 << 30,
            max_held_json_bytes: 128 << 20,
        }
    }
}

/// Why a request body was not read to its end in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyStall {
    /// No frame for the idle timeout.
    Idle,
    /// Not whole within [`ServerLimits::body_timeout`].
    Deadline,
    /// Slower than [`ServerLimits::min_body_rate`] after [`BODY_RATE_GRACE`].
    TooSlow,
}

impl BodyStall {
    /// What to tell the client and the log.
    pub(crate) fn describe(self, limits: &ServerLimits) -> String {
        match self {
            BodyStall::Idle => "the request body stalled (idle timeout)".to_owned(),
            BodyStall::Deadline => format!(
                "the request body did not arrive within {} s (--body-timeout)",
                limits.body_timeout.as_secs_f64()
            ),
            BodyStall::TooSlow => format!(
                "the request body arrived slower than {} bytes per second (--min-body-rate)",
                limits.min_body_rate
            ),
        }
    }
}

/// The clock of one request body: each frame within the idle timeout, the whole body within the
/// body deadline, and (after the grace) at least the minimum rate on average.
pub(crate) struct BodyClock {
    started: tokio::time::Instant,
    last_frame: tokio::time::Instant,
    received: u64,
    idle: Duration,
    deadline: tokio::time::Instant,
    min_rate: u64,
}

impl BodyClock {
    pub(crate) fn new(limits: &ServerLimits) -> Self {
        let now = tokio::time::Instant::now();
        Self {
            started: now,
            last_frame: now,
            received: 0,
            idle: limits.idle_timeout,
            deadline: now + limits.body_timeout,
            min_rate: limits.min_body_rate,
        }
    }

    /// The body's next frame (`None` at its end), or why it is given up on.
    pub(crate) async fn frame(
        &mut self,
        body: &mut hyper::body::Incoming,
    ) -> Result<Option<Result<Frame<Bytes>, hyper::Error>>, BodyStall> {
        use http_body_util::BodyExt as _;
        loop {
            let now = tokio::time::Instant::now();
            if now >= self.deadline {
                return Err(BodyStall::Deadline);
            }
            let elapsed = now - self.started;
            if elapsed >= BODY_RATE_GRACE
                && (self.received as f64) < self.min_rate as f64 * elapsed.as_secs_f64()
            {
                return Err(BodyStall::TooSlow);
            }
            let idle_at = self.last_frame + self.idle;
            if now >= idle_at {
                return Err(BodyStall::Idle);
            }
            // Look again each second (the rate), or at the first deadline.
            let until = self.deadline.min(idle_at).min(now + Duration::from_secs(1));
            if let Ok(frame) = tokio::time::timeout_at(until, body.frame()).await {
                self.last_frame = tokio::time::Instant::now();
                if let Some(Ok(f)) = &frame
                    && let Some(data) = f.data_ref()
                {
                    self.received += data.len() as u64;
                }
                return Ok(frame);
            }
        }
    }
}

/// What one connection has been doing, for its idle watchdog: when a byte last moved (either
/// way), and how many things the server itself is waiting on for it (a handler running, a
/// response body waiting for its producer). While the server is busy the client is not idle.
#[derive(Debug)]
struct Activity {
    origin: tokio::time::Instant,
    last_millis: std::sync::atomic::AtomicU64,
    server_busy: std::sync::atomic::AtomicUsize,
    /// Requests under way: from the request head to the end of its response (or its reset).
    requests: std::sync::atomic::AtomicUsize,
    /// When the last request began or ended (the connection's start before any).
    request_millis: std::sync::atomic::AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Self {
            origin: tokio::time::Instant::now(),
            last_millis: std::sync::atomic::AtomicU64::new(0),
            server_busy: std::sync::atomic::AtomicUsize::new(0),
            requests: std::sync::atomic::AtomicUsize::new(0),
            request_millis: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn now_millis(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A request began (`true`) or ended.
    fn request(&self, began: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        if began {
            self.requests.fetch_add(1, Relaxed);
        } else {
            self.requests.fetch_sub(1, Relaxed);
        }
        self.request_millis.store(self.now_millis(), Relaxed);
    }

    /// With no request under way: when the connection must have begun its next one, `within`
    /// after the last ended (or after it opened). `None` while a request is under way.
    fn next_request_due(&self, within: Duration) -> Option<tokio::time::Instant> {
        use std::sync::atomic::Ordering::Relaxed;
        (self.requests.load(Relaxed) == 0).then(|| {
            self.origin + Duration::from_millis(self.request_millis.load(Relaxed)) + within
        })
    }

    fn touch(&self) {
        self.last_millis
            .store(self.now_millis(), std::sync::atomic::Ordering::Relaxed);
    }

    fn last(&self) -> tokio::time::Instant {
        self.origin
            + Duration::from_millis(self.last_millis.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn busy(&self) -> bool {
        self.server_busy.load(std::sync::atomic::Ordering::Relaxed) > 0
    }

    fn begin(&self) {
        self.server_busy
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Ends one busy stretch; the client's idle clock restarts from here.
    fn end(&self) {
        self.touch();
        self.server_busy
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Marks the server busy for as long as it lives (a request handler running).
struct BusyGuard(Arc<Activity>);

impl BusyGuard {
    fn new(activity: Arc<Activity>) -> Self {
        activity.begin();
        Self(activity)
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A request under way for as long as it lives: made when the handler is called, moved into the
/// response body, dropped with it (or with the handler, if the request is reset first).
struct RequestGuard(Arc<Activity>);

impl RequestGuard {
    fn new(activity: Arc<Activity>) -> Self {
        activity.request(true);
        Self(activity)
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.0.request(false);
    }
}

/// The socket, noting in [`Activity`] every read or write that moved at least one byte.
struct WatchedIo<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WatchedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for WatchedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A response body that tells [`Activity`] when hyper is waiting for the server's producer (the
/// replay's schedule, the upstream): that wait is the server's, not the client's idleness.
struct WatchedBody {
    inner: AnyBody,
    activity: Arc<Activity>,
    waiting: bool,
    /// The request this body answers, under way until the body is dropped.
    _request: RequestGuard,
}

impl WatchedBody {
    fn set_waiting(&mut self, waiting: bool) {
        if waiting != self.waiting {
            self.waiting = waiting;
            if waiting {
                self.activity.begin();
            } else {
                self.activity.end();
            }
        }
    }
}

impl Body for WatchedBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        self.set_waiting(r.is_pending());
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for WatchedBody {
    fn drop(&mut self) {
        self.set_waiting(false);
    }
}

/// The HTTP/2 connection preface a prior-knowledge (h2c) client sends first.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Whether the connection's first bytes (peeked, not taken) are the HTTP/2 preface. Decided as
/// soon as they differ from it (an HTTP/1.1 method does at its second byte at the latest);
/// `false` at end of input.
async fn opens_with_h2_preface(stream: &tokio::net::TcpStream) -> bool {
    let mut buf = [0u8; H2_PREFACE.len()];
    let mut seen = 0;
    loop {
        let n = match stream.peek(&mut buf).await {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 || !H2_PREFACE.starts_with(&buf[..n]) {
            return false;
        }
        if n == H2_PREFACE.len() {
            return true;
        }
        if n == seen {
            // Part of the preface, and nothing new yet: peek returns at once, so wait a little.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        seen = n;
    }
}

/// Answers a connection over the limit with a 503 if the socket takes it at once (best effort: a
/// client that already sent its request may see a reset instead), then closes it.
fn refuse(stream: &tokio::net::TcpStream, limit: usize) {
    let text = format!("sse-replay: too many connections (limit {limit}); try again later\n");
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\nretry-after: 1\r\n\r\n{text}",
        text.len()
    );
    stream.try_write(head.as_bytes()).ok();
}

/// The HTTP/1.1 accept loop shared by `serve` and `proxy`: one task per connection (concurrent
/// clients), `TCP_NODELAY` so small event writes leave at once, and on `stop` no new connections,
/// then a graceful close of the open ones (bounded: streams are told to stop by their own watch of
/// `stop`, and whatever remains after 2 s is dropped).
///
/// With `http2`, a connection that opens with the HTTP/2 preface is served as HTTP/2 over cleartext
/// (prior knowledge, h2c): the AWS SDK for JavaScript's Bedrock Runtime client speaks nothing else
/// to an `http://` endpoint. Any other first bytes are HTTP/1.1 as before; the preface is looked
/// for within the header timeout (or the idle timeout, if shorter), so a silent or slow client is
/// closed exactly as an HTTP/1.1-only server closes it.
///
/// [`ServerLimits`] are enforced here: hyper's header-read timeout (with the tokio timer; for
/// HTTP/2, which has none, the watchdog closes a connection with no request under way once the
/// header timeout passes without a new one, and hyper pings it so one that stops reading is closed
/// too), an idle watchdog per connection, and a connection cap. Over the cap a connection is accepted and closed
/// at once (with a best-effort 503) rather than left waiting in the kernel's backlog: the client
/// learns immediately, and a flood of idle connections cannot hold the listener hostage.
pub(crate) async fn accept_loop<F, Fut>(
    listener: std::net::TcpListener,
    mut stop: tokio::sync::watch::Receiver<bool>,
    limits: ServerLimits,
    http2: bool,
    handler: F,
) where
    F: Fn(hyper::Request<hyper::body::Incoming>, SocketAddr) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = hyper::Response<AnyBody>> + Send + 'static,
{
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            sse_replay_core::log_line!("sse-replay: cannot use the listening socket: {e}");
            return;
        }
    };
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let mut refused = 0u64;
    let mut last_refusal_report: Option<Instant> = None;
    loop {
        let accepted = tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            r = listener.accept() => r,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                sse_replay_core::log_line!("sse-replay: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            refuse(&stream, limits.max_connections);
            drop(stream);
            refused += 1;
            // One line a second at most: a flood must not flood the terminal too.
            if last_refusal_report.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                sse_replay_core::log_line!(
                    "sse-replay: {refused} connection(s) refused so far: over the limit of {} \
                     (--max-connections)",
                    limits.max_connections
                );
                last_refusal_report = Some(Instant::now());
            }
            continue;
        };
        stream.set_nodelay(true).ok();
        let activity = Arc::new(Activity::new());
        let handler = handler.clone();
        let service_activity = activity.clone();
        let service = hyper::service::service_fn(move |req| {
            let handler = handler.clone();
            let activity = service_activity.clone();
            async move {
                let request = RequestGuard::new(activity.clone());
                let busy = BusyGuard::new(activity.clone());
                let resp = handler(req, peer).await;
                drop(busy);
                Ok::<_, Infallible>(resp.map(|inner| WatchedBody {
                    inner,
                    activity,
                    waiting: false,
                    _request: request,
                }))
            }
        });
        let watcher = graceful.watcher();
        let idle = limits.idle_timeout;
        tokio::spawn(async move {
            let _slot = slot;
            let first_bytes = limits.header_timeout.min(idle);
            let h2 = http2
                && tokio::time::timeout(first_bytes, opens_with_h2_preface(&stream))
                    .await
                    .unwrap_or(false);
            let io = hyper_util::rt::TokioIo::new(WatchedIo {
                inner: stream,
                activity: activity.clone(),
            });
            type Conn = std::pin::Pin<
                Box<dyn std::future::Future<Output = Result<(), hyper::Error>> + Send>,
            >;
            let conn: Conn = if h2 {
                // A client that stops reading stops acknowledging pings: closed within two
                // header timeouts, not the idle timeout (its bytes stopped moving because it
                // does not read, while its slot is held).
                let conn =
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .timer(hyper_util::rt::TokioTimer::new())
                        .keep_alive_interval(Some(limits.header_timeout))
                        .keep_alive_timeout(limits.header_timeout)
                        .serve_connection(io, service);
                Box::pin(watcher.watch(conn))
            } else {
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(limits.header_timeout)
                    .serve_connection(io, service);
                Box::pin(watcher.watch(conn))
            };
            let mut conn = conn;
            // HTTP/1.1 has hyper's header-read timeout; HTTP/2 has none, so a connection that
            // sends no complete request head within the header timeout (after opening, or after
            // its last response) is closed here, as HTTP/1.1's would be.
            let request_due = || {
                h2.then(|| activity.next_request_due(limits.header_timeout))
                    .flatten()
            };
            loop {
                let deadline = activity.last() + idle;
                let deadline = request_due().map_or(deadline, |due| due.min(deadline));
                tokio::select! {
                    _ = conn.as_mut() => break,
                    () = tokio::time::sleep_until(deadline) => {
                        if request_due().is_some_and(|due| due <= tokio::time::Instant::now()) {
                            break; // no request head in time: its slot goes back
                        }
                        if activity.busy() {
                            // The server is the one waiting: the client gets a fresh window.
                            activity.touch();
                        } else if activity.last() + idle <= tokio::time::Instant::now() {
                            break; // idle: dropping the connection closes the socket
                        }
                    }
                }
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(2)) => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// A one-line description of a client error, without the URL (it may carry a key; callers add the
/// redacted URL themselves): what failed, then the innermost cause.
pub fn describe_reqwest_error(err: &reqwest::Error) -> String {
    let mut cause: Option<String> = None;
    let mut tls = false;
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        if s.downcast_ref::<rustls::Error>().is_some() {
            tls = true;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
        {
            tls = true;
        }
        cause = Some(s.to_string());
        source = s.source();
    }
    let text = cause.as_deref().unwrap_or_default();
    // rustls errors often arrive boxed inside an io::Error whose `source()` skips them: recognise
    // their messages too.
    let tls_words = [
        "certificate",
        "handshake",
        "corrupt message",
        "fatal alert",
        "peer is incompatible",
        "peer misbehaved",
        "tls",
    ];
    let lower = text.to_ascii_lowercase();
    let what = if tls || tls_words.iter().any(|w| lower.contains(w)) {
        "TLS handshake failed"
    } else if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "cannot connect"
    } else if err.is_body() || err.is_decode() {
        "the connection failed mid-stream"
    } else {
        "request failed"
    };
    match cause {
        Some(cause) if what != "timed out" => format!("{what}: {cause}"),
        _ => what.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Time stamps
// ---------------------------------------------------------------------------------------------

/// The current time as RFC 3339 UTC (`2025-01-31T12:00:00Z`), for `meta.created`.
pub fn rfc3339_now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The current time as a file-name stamp (`20250131-120000`), UTC.
pub fn file_stamp_now() -> String {
    jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S").to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn stamps_are_utc_and_shaped() {
        let s = super::rfc3339_now();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.ends_with('Z') && s.as_bytes()[10] == b'T', "{s}");
        let f = super::file_stamp_now();
        assert_eq!(f.len(), 15, "{f}");
        assert_eq!(f.as_bytes()[8], b'-', "{f}");
        assert!(
            f.bytes().filter(|b| *b != b'-').all(|b| b.is_ascii_digit()),
            "{f}"
        );
        let t = jiff::Timestamp::from_second(951_782_400).expect("in range");
        assert_eq!(
            t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "2000-02-29T00:00:00Z"
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod seconds_tests {
    use super::*;

    #[test]
    fn only_non_loopback_addresses_are_warned_about() {
        let reach = "do things";
        for quiet in ["127.0.0.1:0", "[::1]:8080", "127.9.9.9:1"] {
            assert_eq!(
                exposure_warning(quiet.parse().unwrap(), reach),
                None,
                "{quiet}"
            );
        }
        for loud in ["0.0.0.0:0", "[::]:80", "192.168.1.5:8080"] {
            let w = exposure_warning(loud.parse().unwrap(), reach).unwrap();
            assert!(w.contains(loud) && w.contains(reach), "{w}");
        }
    }
}
