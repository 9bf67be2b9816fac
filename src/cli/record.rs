//! `sse-replay record`: the arguments, turning them into a [`record::RecordRequest`], progress on
//! standard error, and the outcome's exit code.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, fail, parse_seconds, parse_size};
use sse_replay_core::recording::RecordingError;
use sse_replay_net::record::{self, RecordError, RecordOutcome};

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
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = parse_seconds)]
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
    #[arg(long, value_name = "N", default_value = "64M", value_parser = parse_size)]
    pub max_body_bytes: u64,
}

/// `record`'s exit code: 0 when the exchange succeeded and the stream ended normally
/// ([`RecordOutcome::ok`]); 1 for a network/HTTP failure, a provider error or a stream that ended
/// early; 2 for bad usage or an existing output without `--force`.
pub fn record_exit_code(outcome: &RecordOutcome) -> u8 {
    match &outcome.error {
        Some(RecordError::Usage(_) | RecordError::Write(RecordingError::Exists { .. })) => {
            EXIT_INPUT
        }
        Some(_) => EXIT_FAILED,
        None if outcome.ok() => EXIT_OK,
        None => EXIT_FAILED,
    }
}

/// Turns the CLI arguments into a request: `$VAR` expansion, `@file` bodies, the default output.
pub fn request_from_args(
    a: &RecordArgs,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<record::RecordRequest, String> {
    let record::RequestHeaders {
        headers,
        secret_headers,
    } = record::request_headers(a.headers.iter().map(|h| (h.as_str(), false)), lookup)
        .map_err(|e| format!("-H: {e}"))?;
    let body = match a.data.as_deref() {
        None => None,
        Some(d) => match d.strip_prefix('@') {
            Some(path) => Some(
                sse_replay_core::input::read_bounded(
                    std::path::Path::new(path),
                    a.max_body_bytes,
                    "the request body",
                    "--max-body-bytes",
                )
                .map_err(|e| match e {
                    sse_replay_core::input::InputError::Io { source, path } => {
                        format!("cannot read the request body: {source} in {path}")
                    }
                    e => e.to_string(),
                })?,
            ),
            None => Some(d.as_bytes().to_vec()),
        },
    };
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| record::default_output(std::path::Path::new("")));
    Ok(record::RecordRequest {
        url: a.url.clone(),
        method: a.method.clone(),
        headers,
        secret_headers,
        body,
        output: Some(output),
        overwrite: a.force,
        keep_secrets: a.keep_secrets,
        timeout: sse_replay_net::secs(a.timeout),
        title: a.title.clone().unwrap_or_default(),
    })
}

/// `sse-replay record`: progress on standard error, the summary on standard output, Ctrl+C or
/// SIGTERM stops and saves. Exit codes: see [`record_exit_code`].
#[allow(
    clippy::print_stderr,
    clippy::print_stdout,
    reason = "the command line: its reports and messages are printed here"
)]
pub(super) fn run(a: &RecordArgs) -> ExitCode {
    let req = match request_from_args(a, sse_replay_net::headers::env_lookup) {
        Ok(r) => r,
        Err(e) => return fail(EXIT_INPUT, e),
    };
    let rt = match sse_replay_net::current_thread_runtime() {
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
    // Named once the response head arrives: without a response nothing is written.
    let journal = std::sync::Mutex::new(None);
    let on_update = move |u: record::RecorderUpdate| match u {
        record::RecorderUpdate::WaitingForReader { path } => {
            sse_replay_core::log_line!(
                "sse-replay: waiting for a process to read the FIFO {} (nothing is sent until one does; Ctrl+C or SIGTERM gives up)",
                sse_replay_core::text::visible(&path.display().to_string())
            );
        }
        record::RecorderUpdate::Sent { journal: j } => {
            if let Ok(mut slot) = journal.lock() {
                *slot = j;
            }
        }
        record::RecorderUpdate::Response(r) => {
            sse_replay_core::log_line!("HTTP {}", r.status);
            if let Some(j) = journal.lock().ok().and_then(|mut slot| slot.take()) {
                sse_replay_core::log_line!("recording into {}", j.display());
            }
        }
        record::RecorderUpdate::Chunks { progress: p, .. } => {
            let line = format!(
                "{}, {}, {}, {}",
                sse_replay_core::text::plural(p.bytes, "byte"),
                sse_replay_core::text::plural(p.chunks, "read"),
                sse_replay_core::text::plural(p.events, "event"),
                sse_replay_core::text::plural(p.calls, "call")
            );
            if terminal {
                eprint!("\r{line}   ");
            } else if let Ok(mut last) = last_line.lock()
                && last.elapsed() >= Duration::from_secs(1)
            {
                *last = Instant::now();
                sse_replay_core::log_line!("{line}");
            }
        }
        record::RecorderUpdate::Finished(_) => {}
    };
    let signal = match super::signals::install(&rt) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let outcome = rt.block_on(async move {
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        signal.stop_on_signal(stop);
        record::run(req, stop_rx, Arc::new(on_update)).await
    });
    if terminal {
        sse_replay_core::log_line!();
    }
    // The reason first; and no summary when the request was refused before it was sent (bad
    // usage, an existing output file): there is nothing to sum up.
    let problem = outcome.problem();
    if outcome.error.is_some()
        && let Some(p) = &problem
    {
        sse_replay_core::log_line!("sse-replay: {}", sse_replay_core::text::visible(p));
    }
    let refused = record_exit_code(&outcome) == EXIT_INPUT;
    if !refused {
        if to_stdout {
            sse_replay_core::log_line!("{}", outcome.summary());
        } else {
            println!("{}", outcome.summary());
        }
    }
    if outcome.error.is_none()
        && let Some(p) = &problem
    {
        sse_replay_core::log_line!("sse-replay: {}", sse_replay_core::text::visible(p));
    }
    ExitCode::from(record_exit_code(&outcome))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sse_replay_core::recording;

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
        let info = record::redacted_request(&req, "POST");
        let text = format!("{info:?}");
        assert!(!text.contains("sk-live-123"), "{text}");
        assert!(!text.contains("key=abc"), "{text}");
        assert_eq!(info.headers[0].1, format!("Bearer {}", recording::REDACTED));
        assert_eq!(info.headers[1].1, recording::REDACTED);
        assert_eq!(info.headers[2].1, "text/event-stream");
    }
}
