//! Real HTTP in and out: [`serve`] replays a recording as a streaming endpoint, [`record`] captures a
//! live response, [`proxy`] sits between an application and its provider and tees every event stream
//! into a recording. Nothing in the core pipeline calls this module; it only feeds the pipeline.
//!
//! Each entry point runs its own tokio runtime on a dedicated thread (`start` functions, for the app
//! and tests) or on the caller's thread (`run_cli` functions), so callers never block on the network.
//! Recordings are written through [`sink`], a writer thread that owns the crash-safe
//! [`crate::recording::JournalWriter`]: the network task only stamps the arrival time and hands the
//! bytes over, so disk syncs never delay (or skew the timing of) the next read.

pub mod headers;
pub mod proxy;
pub mod record;
pub mod serve;
pub mod sink;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use hyper::body::{Body, Frame};

/// Installs the `ring` crypto provider for rustls once per process. reqwest is built with
/// `rustls-no-provider`, so a client built before this panics on the first TLS connection.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another provider is already installed: that one is used, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
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
pub(crate) fn multi_thread_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// A current-thread tokio runtime (the recorder: one stream, one thread, precise timing).
pub(crate) fn current_thread_runtime() -> std::io::Result<tokio::runtime::Runtime> {
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

/// Spawns a task on the current runtime that turns Ctrl+C into `stop = true`.
pub(crate) fn stop_on_ctrl_c(stop: tokio::sync::watch::Sender<bool>) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = stop.send(true);
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Response bodies fed from a channel
// ---------------------------------------------------------------------------------------------

/// A response body fed by a channel, one frame per message, so each chunk is handed to hyper as its
/// own write (chunked transfer encoding, no Content-Length). An `Err` message aborts the connection,
/// so a client sees an upstream failure as a cut stream rather than a clean end.
pub(crate) struct ChannelBody {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
}

impl ChannelBody {
    /// A body and the sender that feeds it. Capacity 1: the producer waits for hyper to take each
    /// chunk, so chunks are not queued up and coalesced into one write.
    pub(crate) fn channel() -> (
        tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
        Self,
    ) {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        (tx, Self { rx })
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.rx.poll_recv(cx).map(|m| m.map(|r| r.map(Frame::data)))
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

/// Print `sse-replay: MSG` on standard error and return `code` (the net commands' exit path).
pub(crate) fn fail(code: u8, msg: impl std::fmt::Display) -> std::process::ExitCode {
    eprintln!("sse-replay: {}", crate::text::visible(&msg.to_string()));
    std::process::ExitCode::from(code)
}

/// Binds a listening socket synchronously (so the caller learns the address, or the error, before
/// anything runs), ready to hand to a tokio runtime.
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
        let _ = self.stop.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

pub(crate) fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, NetError> {
    let listener =
        std::net::TcpListener::bind(addr).map_err(|source| NetError::Bind { addr, source })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| NetError::Bind { addr, source })?;
    Ok(listener)
}

/// The HTTP/1.1 accept loop shared by `serve` and `proxy`: one task per connection (concurrent
/// clients), `TCP_NODELAY` so small event writes leave at once, and on `stop` no new connections,
/// then a graceful close of the open ones (bounded: streams are told to stop by their own watch of
/// `stop`, and whatever remains after 2 s is dropped).
pub(crate) async fn accept_loop<F, Fut>(
    listener: std::net::TcpListener,
    mut stop: tokio::sync::watch::Receiver<bool>,
    handler: F,
) where
    F: Fn(hyper::Request<hyper::body::Incoming>, SocketAddr) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = hyper::Response<AnyBody>> + Send + 'static,
{
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("sse-replay: cannot use the listening socket: {e}");
            return;
        }
    };
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
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
                eprintln!("sse-replay: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let handler = handler.clone();
        let service = hyper::service::service_fn(move |req| {
            let handler = handler.clone();
            async move { Ok::<_, Infallible>(handler(req, peer).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
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

/// Seconds since the Unix epoch → (year, month, day, hour, minute, second), UTC.
fn civil_utc(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-from-civil inverse.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month,
        day,
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
    )
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The current time as RFC 3339 UTC (`2025-01-31T12:00:00Z`), for `meta.created`.
pub fn rfc3339_now() -> String {
    let (y, mo, d, h, mi, s) = civil_utc(now_secs());
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// The current time as a file-name stamp (`20250131-120000`), UTC.
pub fn file_stamp_now() -> String {
    let (y, mo, d, h, mi, s) = civil_utc(now_secs());
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_utc(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil_utc(951_782_400), (2000, 2, 29, 0, 0, 0));
        assert_eq!(civil_utc(1_735_689_599), (2024, 12, 31, 23, 59, 59));
    }
}
