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

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::headers::{self, HeaderError};
use super::sink::{Progress, Sink};
use sse_replay_core::recording::{
    self, Chunk, Meta, Recording, RecordingError, RequestInfo, ResponseInfo,
};

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

/// A request's headers, and which of them to redact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestHeaders {
    /// Each header with its real value, in order.
    pub headers: Vec<(String, String)>,
    /// Names to redact whatever they are called (see [`request_headers`]).
    pub secret_headers: Vec<String>,
}

/// The headers of a request as the user wrote them: each `Name: value` line (with `$VAR` /
/// `${VAR}` read through `lookup`) and whether the user marked it secret. Returns the headers with
/// their real values, and the names to redact whatever they are called: the ones marked secret and
/// the ones whose value came (at least partly) from the environment. `record -H` and the Recorder
/// panel both build their requests with this.
pub fn request_headers<'a>(
    lines: impl IntoIterator<Item = (&'a str, bool)>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<RequestHeaders, HeaderError> {
    let mut headers = Vec::new();
    let mut secret_headers = Vec::new();
    for (line, marked_secret) in lines {
        let (name, value) = headers::parse_header(line, &lookup)?;
        let from_env = line.split_once(':').is_some_and(|(_, v)| {
            headers::expand_env(v, &|_| Some(String::new())).is_ok_and(|plain| plain != v)
        });
        if marked_secret || from_env {
            secret_headers.push(name.clone());
        }
        headers.push((name, value));
    }
    Ok(RequestHeaders {
        headers,
        secret_headers,
    })
}

/// Where a recording goes when no name was given: `DIR/recording-<UTC time>.ron`, never an earlier
/// recording's name (`-2`, `-3`, … within one second).
pub fn default_output(dir: &std::path::Path) -> PathBuf {
    recording::free_path(&dir.join(format!("recording-{}.ron", super::file_stamp_now())))
}

/// How often a FIFO output with no reader is tried again.
const READER_POLL: Duration = Duration::from_millis(50);

/// What the recorder reports while it runs (from the network thread and the writer thread).
#[derive(Debug)]
pub enum RecorderUpdate {
    /// The output is a FIFO nobody reads yet: nothing is sent until a reader opens it (a stop
    /// ends the wait, with nothing sent).
    WaitingForReader { path: PathBuf },
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
    #[error("no data for {secs} s (idle timeout) after {}: {url}", sse_replay_core::text::plural(.chunks, "read"))]
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
    /// The stream ended normally ([`sse_replay_core::pipeline::PipelineOutput::ended_normally`]): a finish signal, `[DONE]`
    /// or every call marked complete, and no event cut off at the end.
    pub stream_complete: bool,
    /// An error event inside the stream (the provider's message).
    pub provider_error: Option<String>,
}

impl RecordOutcome {
    /// The exchange succeeded (no [`RecordError`]), no provider error, and the stream ended
    /// normally.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.provider_error.is_none() && self.stream_complete
    }

    /// What went wrong, in one line, or `None` when the recording is a success ([`Self::ok`]): the
    /// error, else the provider's error in the stream, else a stream that ended early (or was
    /// stopped before it finished). The one wording for `record` and the app's Recorder.
    pub fn problem(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(e.to_string());
        }
        if let Some(m) = &self.provider_error {
            return Some(format!("provider error in the stream: {m}"));
        }
        if self.stream_complete {
            return None;
        }
        Some(if self.stopped {
            "stopped before the stream finished".to_owned()
        } else {
            "the stream ended early (no finish signal, or an event was cut off)".to_owned()
        })
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
            "{status}, {} in {}, {}, {}; {place}",
            sse_replay_core::text::plural(p.bytes, "byte"),
            sse_replay_core::text::plural(p.chunks, "read"),
            sse_replay_core::text::plural(p.events, "event"),
            sse_replay_core::text::plural(p.calls, "call")
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
        self.stop.send(true).ok();
    }

    /// Whether the recorder thread has ended.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the recorder thread to end.
    pub fn join(mut self) {
        if let Some(t) = self.thread.take() {
            t.join().ok();
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
    let start_sink = || {
        let progress_cb = on_update.clone();
        Sink::start(
            req.output.as_deref(),
            req.overwrite,
            head.clone(),
            Box::new(move |chunks, progress| {
                progress_cb(RecorderUpdate::Chunks {
                    chunks: chunks.to_vec(),
                    progress,
                })
            }),
        )
    };
    // A FIFO nobody reads yet: wait for its reader here, where a stop ends the wait (nothing has
    // been sent, so nothing is lost), rather than in `open`, where no signal could.
    let mut waiting = false;
    let sink = loop {
        match start_sink() {
            Ok(s) => break s,
            Err(RecordingError::NoReader { path }) => {
                if !waiting {
                    waiting = true;
                    on_update(RecorderUpdate::WaitingForReader { path: path.clone() });
                }
                tokio::select! {
                    biased;
                    () = super::stopped(&mut stop) => {
                        return RecordOutcome {
                            recording: head,
                            stopped: true,
                            ..failed_outcome(RecordError::Write(RecordingError::NoReader { path }))
                        };
                    }
                    () = tokio::time::sleep(READER_POLL) => {}
                }
            }
            Err(e) => {
                return RecordOutcome {
                    recording: head,
                    ..failed_outcome(RecordError::Write(e))
                };
            }
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
            let mut outcome = abandon(sink, head, None).await;
            outcome.stopped = true;
            return outcome;
        }
        Some(Err(_)) => {
            let error = RecordError::Network {
                message: format!(
                    "no response within {} s (timeout)",
                    req.timeout.as_secs_f64()
                ),
                url: safe_url,
            };
            return abandon(sink, head, Some(error)).await;
        }
        Some(Ok(Err(e))) => {
            let error = RecordError::Network {
                message: super::describe_reqwest_error(&e),
                url: safe_url,
            };
            return abandon(sink, head, Some(error)).await;
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
                sink.send(Chunk {
                    t_micros,
                    bytes: bytes.to_vec(),
                })
                .await;
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
        notes.push(format!(
            "stopped by the user after {}",
            sse_replay_core::text::plural(chunks, "read")
        ));
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

/// No response arrived (the host is unreachable, nothing answered before the timeout, or the
/// user stopped first): nothing is written — the journal is removed, no `.ron` is left — and the
/// outcome carries `error`. A stream that started and broke goes through [`finish`] instead and
/// keeps what arrived.
async fn abandon(sink: Sink, head: Recording, error: Option<RecordError>) -> RecordOutcome {
    let removal = tokio::task::spawn_blocking(move || sink.abandon())
        .await
        .ok()
        .flatten();
    RecordOutcome {
        recording: head,
        saved: None,
        error: error.or(removal.map(RecordError::Write)),
        stopped: false,
        progress: Progress::default(),
        stream_complete: false,
        provider_error: None,
    }
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
    let (events, calls) = (outcome.event_count, done.calls);
    let stream_complete = outcome.ended_normally();
    let provider_error = outcome.provider_error.as_ref().map(|(m, _)| m.clone());
    let progress = Progress {
        events,
        calls,
        ..done.progress
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
