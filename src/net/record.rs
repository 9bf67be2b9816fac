//! `sse-replay record`: send one request and record the response body as it arrives.
//!
//! Each read (`Response::chunk`) is kept with its exact bytes and its arrival time in microseconds
//! since the request was sent (a monotonic [`Instant`]). The network task does nothing else per
//! read: the bytes go to the writer thread ([`super::sink`]), which journals them crash-safely and
//! reports progress. Secrets never reach the disk: the request's URL and headers are redacted
//! before the journal is created, and so is any header whose value came from `$VAR` expansion.
//!
//! For the app: [`start`] runs the recorder on its own thread and reports [`RecorderUpdate`]s
//! through a callback; [`RecorderHandle::stop`] ends it and saves what arrived.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clap::Args;

use super::fail;
use super::headers::{self, HeaderError};
use super::sink::{Progress, Sink};
use crate::cli::{EXIT_FAILED, EXIT_INPUT, EXIT_OK};
use crate::recording::{self, Chunk, Meta, Recording, RecordingError, RequestInfo, ResponseInfo};

/// `record` arguments.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The URL to request (http:// or https://).
    pub url: String,
    /// Request body (the request becomes a POST); `@FILE` reads it from a file.
    #[arg(short = 'd', long = "data", value_name = "BODY|@FILE")]
    pub data: Option<String>,
    /// A request header 'Name: value' (repeatable). `$VAR` and `${VAR}` are read from the
    /// environment, so keys stay out of shell history: -H 'Authorization: Bearer $OPENAI_API_KEY'.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// HTTP method (default: POST with a body, GET without).
    #[arg(short = 'X', long = "request", value_name = "METHOD")]
    pub method: Option<String>,
    /// Output recording; default `recording-<UTC time>.ron` in the current directory.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Seconds allowed to connect, and of silence before the response head or between reads.
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = super::parse_seconds)]
    pub timeout: f64,
    /// Recording title (default: METHOD URL, redacted).
    #[arg(long)]
    pub title: Option<String>,
    /// Replace OUT if it exists (without it, an existing file is refused with exit 2).
    #[arg(long)]
    pub force: bool,
    /// Write the request's secrets (auth headers, `?key=`, body fields such as `api_key`) to the
    /// recording as they are, instead of redacting them.
    #[arg(long)]
    pub keep_secrets: bool,
    /// The longest request body `-d @FILE` reads, in bytes (suffixes K, M, G); a longer one is
    /// refused with exit 2. `-d @-` reads standard input.
    #[arg(long, value_name = "N", default_value = "64M", value_parser = crate::cli::parse_size)]
    pub max_body_bytes: u64,
}

/// One request to record.
#[derive(Clone, Debug, Default)]
pub struct RecordRequest {
    pub url: String,
    /// `None`: POST with a body, GET without.
    pub method: Option<String>,
    /// Headers with their real values (sent as is, redacted in the recording).
    pub headers: Vec<(String, String)>,
    /// Header names whose values are redacted whatever the name (e.g. filled from `$VAR`, or masked
    /// in the app), on top of [`recording::is_secret_header`].
    pub secret_headers: Vec<String>,
    pub body: Option<Vec<u8>>,
    /// Where to save; `None` keeps the recording in memory only (no journal). `-` is standard
    /// output (no journal either).
    pub output: Option<PathBuf>,
    /// Replace `output` if it exists (otherwise an existing file is refused before sending).
    pub overwrite: bool,
    /// Keep the request's secrets in the recording (`--keep-secrets`); redacted by default.
    pub keep_secrets: bool,
    /// Connect timeout, and the longest silence allowed before the response head and between reads.
    pub timeout: Duration,
    /// Empty: `METHOD URL` (redacted).
    pub title: String,
}

/// What the recorder reports while it runs (from the network thread and the writer thread).
#[derive(Debug)]
pub enum RecorderUpdate {
    /// The request was sent; the journal (if any) is being written.
    Sent { journal: Option<PathBuf> },
    /// The response head (headers redacted).
    Response(ResponseInfo),
    /// Reads that arrived since the last update (at most every 100 ms), with the counts so far.
    Chunks {
        chunks: Vec<Chunk>,
        progress: Progress,
    },
    /// The recorder is done; the recording is saved (or the error says why not).
    Finished(Box<RecordOutcome>),
}

/// Why a recording ended badly. Messages end with the (redacted) URL or the path.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Bad URL, method or header: nothing was sent.
    #[error("{0}")]
    Usage(String),
    /// Connection refused, TLS failure, connect timeout, a cut connection.
    #[error("{message}: {url}")]
    Network { message: String, url: String },
    /// Nothing arrived for the idle timeout.
    #[error("no data for {secs} s (idle timeout) after {chunks} reads: {url}")]
    Idle { secs: f64, chunks: u64, url: String },
    /// A non-2xx status; `message` is the provider's message from the body.
    #[error("HTTP {status}: {message} ({url})")]
    Http {
        status: u16,
        message: String,
        url: String,
    },
    /// The journal or the final file could not be written.
    #[error(transparent)]
    Write(#[from] RecordingError),
}

/// The end of a recording.
#[derive(Debug)]
pub struct RecordOutcome {
    /// Everything received (also when the recorder failed).
    pub recording: Recording,
    /// Where it was saved.
    pub saved: Option<PathBuf>,
    /// The first thing that went wrong, if anything did.
    pub error: Option<RecordError>,
    /// Stopped on request (Ctrl+C, the app's Stop button).
    pub stopped: bool,
    /// Counts over the whole body.
    pub progress: Progress,
    /// The stream's own verdict: finished normally (finish signal / `[DONE]`, or every call marked
    /// complete) and no event cut off at the end.
    pub stream_complete: bool,
    /// An error event inside the stream (the provider's message).
    pub provider_error: Option<String>,
}

impl RecordOutcome {
    /// The CLI's exit code: 0 when the exchange succeeded and the stream ended normally; 1 for a
    /// network/HTTP failure, a provider error or a stream that ended early; 2 for bad usage.
    pub fn exit_code(&self) -> u8 {
        match &self.error {
            Some(RecordError::Usage(_) | RecordError::Write(RecordingError::Exists { .. })) => {
                EXIT_INPUT
            }
            Some(_) => EXIT_FAILED,
            None if self.provider_error.is_some() || !self.stream_complete => EXIT_FAILED,
            None => EXIT_OK,
        }
    }

    /// One line: what was recorded and where.
    pub fn summary(&self) -> String {
        let p = &self.progress;
        let status = self.recording.response.as_ref().map_or_else(
            || "no response".to_owned(),
            |r| format!("HTTP {}", r.status),
        );
        let place = self.saved.as_ref().map_or_else(
            || "not saved".to_owned(),
            |p| format!("saved {}", p.display()),
        );
        format!(
            "{status}, {} bytes in {} reads, {} events, {} calls; {place}",
            p.bytes, p.chunks, p.events, p.calls
        )
    }
}

/// A recorder running on its own thread (see [`start`]).
#[derive(Debug)]
pub struct RecorderHandle {
    stop: tokio::sync::watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

impl RecorderHandle {
    /// Asks the recorder to stop; it saves what arrived and sends [`RecorderUpdate::Finished`].
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }

    /// Whether the recorder thread has ended.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the recorder thread to end.
    pub fn join(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts recording on a background thread with its own runtime. `on_update` is called from that
/// thread and from the writer thread; it must not block (send on a channel, request a repaint).
/// It always ends with [`RecorderUpdate::Finished`].
pub fn start(
    req: RecordRequest,
    on_update: impl Fn(RecorderUpdate) + Send + Sync + 'static,
) -> RecorderHandle {
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let on_update: Arc<dyn Fn(RecorderUpdate) + Send + Sync> = Arc::new(on_update);
    let thread = std::thread::Builder::new()
        .name("sse-replay-record".into())
        .spawn({
            let on_update = on_update.clone();
            move || {
                let outcome = match super::current_thread_runtime() {
                    Ok(rt) => rt.block_on(run(req, stop_rx, on_update.clone())),
                    Err(e) => failed_outcome(RecordError::Network {
                        message: format!("cannot start the network runtime: {e}"),
                        url: String::new(),
                    }),
                };
                on_update(RecorderUpdate::Finished(Box::new(outcome)));
            }
        });
    match thread {
        Ok(t) => RecorderHandle {
            stop,
            thread: Some(t),
        },
        Err(e) => {
            on_update(RecorderUpdate::Finished(Box::new(failed_outcome(
                RecordError::Network {
                    message: format!("cannot start the recorder thread: {e}"),
                    url: String::new(),
                },
            ))));
            RecorderHandle { stop, thread: None }
        }
    }
}

fn failed_outcome(error: RecordError) -> RecordOutcome {
    RecordOutcome {
        recording: Recording::default(),
        saved: None,
        error: Some(error),
        stopped: false,
        progress: Progress::default(),
        stream_complete: false,
        provider_error: None,
    }
}

/// The request as it is written to the recording: URL, headers and body redacted (unless
/// [`RecordRequest::keep_secrets`]).
pub fn redacted_request(req: &RecordRequest, method: &str) -> RequestInfo {
    let mut info = RequestInfo {
        method: method.to_owned(),
        url: req.url.clone(),
        headers: req.headers.clone(),
        body: req
            .body
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default(),
    };
    if req.keep_secrets {
        return info;
    }
    info.redact();
    for (name, value) in &mut info.headers {
        if !value.is_empty()
            && req
                .secret_headers
                .iter()
                .any(|s| s.eq_ignore_ascii_case(name))
            && !value.contains(recording::REDACTED)
        {
            *value = recording::REDACTED.to_owned();
        }
    }
    info
}

/// Records one exchange until the body ends, an error, or `stop`. Never panics on network input.
pub async fn run(
    req: RecordRequest,
    mut stop: tokio::sync::watch::Receiver<bool>,
    on_update: Arc<dyn Fn(RecorderUpdate) + Send + Sync>,
) -> RecordOutcome {
    let safe_url = recording::redact_url(&req.url);
    let url = match reqwest::Url::parse(&req.url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u,
        Ok(_) => {
            return failed_outcome(RecordError::Usage(format!(
                "only http:// and https:// URLs can be recorded: {safe_url}"
            )));
        }
        Err(e) => {
            return failed_outcome(RecordError::Usage(format!("invalid URL ({e}): {safe_url}")));
        }
    };
    let method_name = req
        .method
        .clone()
        .unwrap_or_else(|| if req.body.is_some() { "POST" } else { "GET" }.to_owned())
        .to_ascii_uppercase();
    let Ok(method) = reqwest::Method::from_bytes(method_name.as_bytes()) else {
        return failed_outcome(RecordError::Usage(format!(
            "invalid HTTP method {method_name:?}"
        )));
    };
    let mut header_map = reqwest::header::HeaderMap::new();
    for (name, value) in &req.headers {
        let parsed = (
            reqwest::header::HeaderName::from_bytes(name.as_bytes()),
            reqwest::header::HeaderValue::from_str(value),
        );
        let (Ok(n), Ok(mut v)) = parsed else {
            return failed_outcome(RecordError::Usage(format!(
                "invalid header {name:?} (the value is not shown)"
            )));
        };
        if recording::is_secret_header(name)
            || req
                .secret_headers
                .iter()
                .any(|s| s.eq_ignore_ascii_case(name))
        {
            v.set_sensitive(true);
        }
        header_map.append(n, v);
    }
    if req.body.is_some() && !header_map.contains_key(reqwest::header::CONTENT_TYPE) {
        header_map.insert(
            reqwest::header::CONTENT_TYPE,
            reqwest::header::HeaderValue::from_static("application/json"),
        );
    }

    let request_info = redacted_request(&req, &method_name);
    let title = if req.title.is_empty() {
        format!("{method_name} {}", request_info.url)
    } else {
        req.title.clone()
    };
    let head = Recording {
        version: recording::FORMAT_VERSION,
        meta: Meta {
            title,
            source: "record".into(),
            created: super::rfc3339_now(),
            timing_known: true,
            ..Default::default()
        },
        request: Some(request_info),
        ..Default::default()
    };
    let progress_cb = on_update.clone();
    let sink = match Sink::start(
        req.output.as_deref(),
        req.overwrite,
        head.clone(),
        Box::new(move |chunks, progress| {
            progress_cb(RecorderUpdate::Chunks {
                chunks: chunks.to_vec(),
                progress,
            })
        }),
    ) {
        Ok(s) => s,
        Err(e) => {
            return RecordOutcome {
                recording: head,
                ..failed_outcome(RecordError::Write(e))
            };
        }
    };
    let client = match super::http_client(req.timeout) {
        Ok(c) => c,
        Err(e) => {
            let error = RecordError::Network {
                message: format!(
                    "cannot set up the HTTP client: {}",
                    super::describe_reqwest_error(&e)
                ),
                url: safe_url,
            };
            return finish(sink, vec![], Some(error), false).await;
        }
    };
    let mut builder = client.request(method, url).headers(header_map);
    if let Some(body) = &req.body {
        builder = builder.body(body.clone());
    }

    on_update(RecorderUpdate::Sent {
        journal: sink.journal_path().map(std::path::Path::to_path_buf),
    });
    let t0 = Instant::now();
    let sent = tokio::select! {
        biased;
        () = super::stopped(&mut stop) => None,
        r = tokio::time::timeout(req.timeout, builder.send()) => Some(r),
    };
    let mut resp = match sent {
        None => {
            return finish(
                sink,
                vec!["stopped before the response arrived".into()],
                None,
                true,
            )
            .await;
        }
        Some(Err(_)) => {
            let error = RecordError::Network {
                message: format!(
                    "no response within {} s (timeout)",
                    req.timeout.as_secs_f64()
                ),
                url: safe_url,
            };
            return finish(sink, vec![], Some(error), false).await;
        }
        Some(Ok(Err(e))) => {
            let error = RecordError::Network {
                message: super::describe_reqwest_error(&e),
                url: safe_url,
            };
            return finish(sink, vec![], Some(error), false).await;
        }
        Some(Ok(Ok(resp))) => resp,
    };
    let status = resp.status().as_u16();
    let mut response_headers = headers::header_pairs(resp.headers());
    recording::redact_headers(&mut response_headers);
    let response = ResponseInfo {
        status,
        headers: response_headers,
    };
    sink.response(response.clone());
    on_update(RecorderUpdate::Response(response));

    let mut chunks = 0u64;
    let mut error_body = Vec::new();
    let mut error = None;
    let mut stopped = false;
    loop {
        let read = tokio::select! {
            biased;
            () = super::stopped(&mut stop) => {
                stopped = true;
                break;
            }
            r = tokio::time::timeout(req.timeout, resp.chunk()) => r,
        };
        match read {
            Ok(Ok(Some(bytes))) => {
                let t_micros = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
                if !(200..300).contains(&status) && error_body.len() < 64 * 1024 {
                    error_body.extend_from_slice(&bytes);
                }
                sink.chunk(Chunk {
                    t_micros,
                    bytes: bytes.to_vec(),
                });
                chunks += 1;
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                error = Some(RecordError::Network {
                    message: super::describe_reqwest_error(&e),
                    url: safe_url.clone(),
                });
                break;
            }
            Err(_) => {
                error = Some(RecordError::Idle {
                    secs: req.timeout.as_secs_f64(),
                    chunks,
                    url: safe_url.clone(),
                });
                break;
            }
        }
    }
    let mut notes = Vec::new();
    if stopped {
        notes.push(format!("stopped by the user after {chunks} reads"));
    }
    if let Some(e) = &error {
        notes.push(format!("the recording ended with an error: {e}"));
    }
    if error.is_none() && !(200..300).contains(&status) {
        let message = headers::provider_message(&error_body);
        notes.push(format!("HTTP {status}: {message}"));
        error = Some(RecordError::Http {
            status,
            message,
            url: safe_url,
        });
    }
    finish(sink, notes, error, stopped).await
}

async fn finish(
    sink: Sink,
    notes: Vec<String>,
    error: Option<RecordError>,
    stopped: bool,
) -> RecordOutcome {
    let done = match tokio::task::spawn_blocking(move || sink.finish(notes)).await {
        Ok(done) => done,
        Err(e) => {
            return failed_outcome(RecordError::Write(RecordingError::Io {
                op: "finishing the recording",
                path: PathBuf::new(),
                source: std::io::Error::other(e.to_string()),
            }));
        }
    };
    let outcome = &done.outcome;
    let (events, calls) = (outcome.event_count, outcome.calls.len());
    let stream_complete = outcome.unterminated.is_none()
        && (outcome.finished()
            || (!outcome.calls.is_empty() && outcome.calls.iter().all(|c| c.complete)));
    let provider_error = outcome.provider_error.as_ref().map(|(m, _)| m.clone());
    let progress = Progress {
        bytes: done.recording.body_len(),
        chunks: done.recording.chunks.len() as u64,
        events,
        calls,
    };
    RecordOutcome {
        error: error.or(done.write_error.map(RecordError::Write)),
        recording: done.recording,
        saved: done.saved,
        stopped,
        progress,
        stream_complete,
        provider_error,
    }
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

/// Turns the CLI arguments into a request: `$VAR` expansion, `@file` bodies, the default output.
pub fn request_from_args(
    a: &RecordArgs,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<RecordRequest, String> {
    let mut headers = Vec::new();
    let mut secret_headers = Vec::new();
    for h in &a.headers {
        let (name, value) =
            headers::parse_header(h, &lookup).map_err(|e: HeaderError| format!("-H: {e}"))?;
        if h.split_once(':').is_some_and(|(_, v)| {
            headers::expand_env(v, &|_| Some(String::new())).is_ok_and(|plain| plain != v)
        }) {
            // The value came (at least partly) from the environment: treat it as a secret.
            secret_headers.push(name.clone());
        }
        headers.push((name, value));
    }
    let body = match a.data.as_deref() {
        None => None,
        Some(d) => match d.strip_prefix('@') {
            Some(path) => Some(
                crate::input::read_bounded(
                    std::path::Path::new(path),
                    a.max_body_bytes,
                    "the request body",
                    "--max-body-bytes",
                )
                .map_err(|e| match e {
                    crate::input::InputError::Io { source, path } => {
                        format!("cannot read the request body: {source} in {path}")
                    }
                    e => e.to_string(),
                })?,
            ),
            None => Some(d.as_bytes().to_vec()),
        },
    };
    let output = a.output.clone().unwrap_or_else(|| {
        recording::free_path(&PathBuf::from(format!(
            "recording-{}.ron",
            super::file_stamp_now()
        )))
    });
    Ok(RecordRequest {
        url: a.url.clone(),
        method: a.method.clone(),
        headers,
        secret_headers,
        body,
        output: Some(output),
        overwrite: a.force,
        keep_secrets: a.keep_secrets,
        timeout: super::secs(a.timeout),
        title: a.title.clone().unwrap_or_default(),
    })
}

/// `sse-replay record`: progress on standard error, the summary on standard output, Ctrl+C or
/// SIGTERM stops and saves. Exit codes: see [`RecordOutcome::exit_code`].
pub fn run_cli(a: &RecordArgs) -> ExitCode {
    let req = match request_from_args(a, headers::env_lookup) {
        Ok(r) => r,
        Err(e) => return fail(EXIT_INPUT, e),
    };
    let rt = match super::current_thread_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            return fail(
                EXIT_FAILED,
                format!("cannot start the network runtime: {e}"),
            );
        }
    };
    // With `-o -` the recording goes to standard output: the summary goes to standard error.
    let to_stdout = req.output.as_deref() == Some(std::path::Path::new("-"));
    let terminal = std::io::stderr().is_terminal();
    let last_line = std::sync::Mutex::new(Instant::now());
    let on_update = move |u: RecorderUpdate| match u {
        RecorderUpdate::Sent { journal } => {
            if let Some(j) = journal {
                eprintln!("recording into {}", j.display());
            }
        }
        RecorderUpdate::Response(r) => eprintln!("HTTP {}", r.status),
        RecorderUpdate::Chunks { progress: p, .. } => {
            let line = format!(
                "{} bytes, {} reads, {} events, {} calls",
                p.bytes, p.chunks, p.events, p.calls
            );
            if terminal {
                eprint!("\r{line}   ");
            } else if let Ok(mut last) = last_line.lock()
                && last.elapsed() >= Duration::from_secs(1)
            {
                *last = Instant::now();
                eprintln!("{line}");
            }
        }
        RecorderUpdate::Finished(_) => {}
    };
    let signal = {
        let _context = rt.enter();
        super::ShutdownSignal::install()
    };
    let signal = match signal {
        Ok(s) => s,
        Err(e) => {
            return fail(
                EXIT_FAILED,
                format!("cannot watch for Ctrl+C or SIGTERM: {e}"),
            );
        }
    };
    let outcome = rt.block_on(async move {
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        super::stop_on_signal(signal, stop);
        run(req, stop_rx, Arc::new(on_update)).await
    });
    if terminal {
        eprintln!();
    }
    if to_stdout {
        eprintln!("{}", outcome.summary());
    } else {
        println!("{}", outcome.summary());
    }
    if let Some(e) = &outcome.error {
        eprintln!("sse-replay: {}", crate::text::visible(&e.to_string()));
    } else if let Some(m) = &outcome.provider_error {
        let m = crate::text::visible(m);
        eprintln!("sse-replay: provider error in the stream: {m}");
    } else if !outcome.stream_complete && !outcome.stopped {
        eprintln!("sse-replay: the stream ended early (no finish signal, or an event was cut off)");
    } else if !outcome.stream_complete {
        eprintln!("sse-replay: stopped before the stream finished");
    }
    ExitCode::from(outcome.exit_code())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn env_headers_are_secret_and_redacted() {
        let args = RecordArgs {
            url: "http://127.0.0.1:1/v1?key=abc".into(),
            data: Some("{}".into()),
            headers: vec![
                "Authorization: Bearer $K".into(),
                "X-Custom: $K".into(),
                "Accept: text/event-stream".into(),
            ],
            method: None,
            output: Some("x.ron".into()),
            timeout: 5.0,
            title: None,
            force: false,
            keep_secrets: false,
            max_body_bytes: 1 << 20,
        };
        let req =
            request_from_args(&args, |n| (n == "K").then(|| "sk-live-123".to_owned())).unwrap();
        assert_eq!(req.headers[0].1, "Bearer sk-live-123");
        let info = redacted_request(&req, "POST");
        let text = format!("{info:?}");
        assert!(!text.contains("sk-live-123"), "{text}");
        assert!(!text.contains("key=abc"), "{text}");
        assert_eq!(info.headers[0].1, format!("Bearer {}", recording::REDACTED));
        assert_eq!(info.headers[1].1, recording::REDACTED);
        assert_eq!(info.headers[2].1, "text/event-stream");
    }
}
