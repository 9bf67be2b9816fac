//! `sse-replay proxy`: forward to an upstream API and record every event stream passing through.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, LimitArgs, fail, parse_seconds};
use sse_replay_core::recording;
use sse_replay_net::proxy;

/// `proxy` arguments.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Address to listen on; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The real API base, e.g. https://api.openai.com (a path prefix is kept).
    #[allow(
        rustdoc::bare_urls,
        reason = "clap prints this comment as the flag's help, where a URL is plain text"
    )]
    #[arg(long)]
    pub upstream: String,
    /// Directory for the captured event streams.
    #[arg(long = "out", value_name = "DIR", default_value = "sse-captures")]
    pub out: PathBuf,
    /// Seconds allowed to connect upstream, and of upstream silence before giving up on a response.
    #[arg(long, value_name = "S", default_value_t = 300.0, value_parser = parse_seconds)]
    pub timeout: f64,
    /// Write the requests' secrets (auth headers, `?key=`, body fields such as `api_key`) to the
    /// captures as they are, instead of redacting them.
    #[arg(long)]
    pub keep_secrets: bool,
    /// Bytes one capture holds at most (suffixes K, M, G): a longer (or endless) stream's
    /// capture ends there, saved with a note, while the client still gets the whole stream.
    #[arg(long, value_name = "N", default_value = "1G", value_parser = super::parse_size)]
    pub max_capture_bytes: u64,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// `sse-replay proxy`: prints `listening on http://ADDR/` first, then one line per captured stream
/// on standard output (requests on standard error); Ctrl+C or SIGTERM stops and saves open captures.
#[allow(
    clippy::print_stdout,
    reason = "the command line: its reports and messages are printed here"
)]
pub(super) fn run(a: &ProxyArgs) -> ExitCode {
    let config = proxy::ProxyConfig {
        listen: a.listen,
        upstream: a.upstream.clone(),
        out_dir: a.out.clone(),
        timeout: sse_replay_net::secs(a.timeout),
        keep_secrets: a.keep_secrets,
        limits: sse_replay_net::ServerLimits {
            max_capture_bytes: a.max_capture_bytes,
            ..a.limits.limits()
        },
    };
    let handle = match proxy::start(config, print_event) {
        Ok(h) => h,
        Err(e @ sse_replay_net::NetError::BadUpstream(_)) => return fail(EXIT_INPUT, e),
        Err(e) => return fail(EXIT_FAILED, e),
    };
    // Handlers first: a signal sent as soon as the line below is read must stop cleanly.
    let rt = match sse_replay_net::current_thread_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            handle.stop();
            return fail(EXIT_FAILED, format!("cannot start a runtime: {e}"));
        }
    };
    let mut signal = match super::signals::install(&rt) {
        Ok(s) => s,
        Err(code) => {
            handle.stop();
            return code;
        }
    };
    println!("listening on http://{}/", handle.addr());
    // The full path: a relative default lands wherever the proxy was started from.
    let out = std::path::absolute(&a.out).unwrap_or_else(|_| a.out.clone());
    let upstream = recording::redact_url(&a.upstream);
    if let Some(w) = sse_replay_net::exposure_warning(
        handle.addr(),
        &format!(
            "send requests to {upstream} through this proxy from this machine (reaching what only \
             it may reach, with any credentials the upstream grants by network location), and \
             their traffic is recorded in {}",
            out.display()
        ),
    ) {
        sse_replay_core::log_line!("sse-replay: {w}");
    }
    sse_replay_core::log_line!(
        "forwarding to {upstream}, event streams recorded into {}; Ctrl+C or SIGTERM stops",
        out.display()
    );
    rt.block_on(signal.recv());
    handle.stop();
    sse_replay_core::log_line!("stopped");
    ExitCode::from(EXIT_OK)
}

/// One line on standard error per request and capture; the finished captures on standard output.
#[allow(
    clippy::print_stdout,
    reason = "the command line: its reports and messages are printed here"
)]
fn print_event(e: proxy::ProxyEvent) {
    match e {
        proxy::ProxyEvent::Forwarded {
            method,
            path,
            status,
        } => sse_replay_core::log_line!(
            "{method} {} → {status}",
            sse_replay_core::text::visible(&path)
        ),
        proxy::ProxyEvent::UpstreamFailed {
            method,
            path,
            status,
            message,
        } => sse_replay_core::log_line!(
            "{method} {} → {status}: {}",
            sse_replay_core::text::visible(&path),
            sse_replay_core::text::visible(&message)
        ),
        proxy::ProxyEvent::Refused {
            method,
            path,
            status,
            reason,
        } => sse_replay_core::log_line!(
            "{method} {} → {status}: {}",
            sse_replay_core::text::visible(&path),
            sse_replay_core::text::visible(&reason)
        ),
        // The request list is the app's; standard error already has one line per request.
        proxy::ProxyEvent::Exchange(_)
        | proxy::ProxyEvent::ExchangeEnded(_)
        | proxy::ProxyEvent::FirstByte { .. }
        | proxy::ProxyEvent::CaptureProgress { .. } => {}
        proxy::ProxyEvent::CaptureStarted { path, .. } => {
            sse_replay_core::log_line!("recording {}", path.display())
        }
        proxy::ProxyEvent::CaptureFinished {
            path: Some(p),
            bytes,
            chunks,
            calls,
            error,
            ..
        } => {
            let tail = error.map(|e| format!(" ({e})")).unwrap_or_default();
            println!(
                "captured {}: {} in {}, {}{tail}",
                p.display(),
                sse_replay_core::text::plural(bytes, "byte"),
                sse_replay_core::text::plural(chunks, "read"),
                sse_replay_core::text::plural(calls, "call")
            );
        }
        proxy::ProxyEvent::CaptureFinished {
            path: None, error, ..
        } => {
            sse_replay_core::log_line!(
                "sse-replay: a capture could not be saved: {}",
                sse_replay_core::text::visible(&error.unwrap_or_default())
            );
        }
    }
}
