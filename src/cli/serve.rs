//! `sse-replay serve`, and the flags `serve` and `proxy` share (time-outs, the connection cap).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, fail, shared};
use sse_replay_core::open::OpenError;
use sse_replay_net::{MAX_SECONDS, MIN_SECONDS, NetError, ServerLimits, secs, serve};

/// `serve` arguments.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The recording (`.ron`, a journal) or raw SSE body to serve.
    #[arg(required_unless_present = "suite", conflicts_with = "suite")]
    pub file: Option<PathBuf>,
    /// Serve every case of `sse-replay test`'s suite on one server: each at its own base URL
    /// (`/cases/<recording>/<variant>/`, the SDK's paths below it), `GET /cases` lists them with
    /// their expected calls, `POST /cases/<recording>/<variant>/verdict` judges what a client
    /// assembled. For pytest, vitest/jest and `cargo test`.
    #[arg(long, conflicts_with = "rechunk")]
    pub suite: bool,
    /// With --suite: the recordings (files or folders, searched recursively). Default: the
    /// built-in suite.
    #[arg(long, num_args = 1.., value_name = "PATH", requires = "suite")]
    pub recordings: Vec<PathBuf>,
    /// With --suite: framing variants (comma list). Default: all that apply to each recording.
    #[arg(long, value_delimiter = ',', value_parser = shared::parse_variant, requires = "suite")]
    pub variants: Vec<sse_replay_net::harness::Variant>,
    /// With --suite: fault variants to add (comma list): cut, no-terminator, or all.
    #[arg(long, value_delimiter = ',', value_parser = shared::faults_parser(), requires = "suite")]
    pub faults: Vec<String>,
    /// With --suite: only recordings of these dialects (comma list or repeated).
    #[arg(long, value_delimiter = ',', value_parser = super::dialect_parser(), requires = "suite")]
    pub dialect: Vec<sse_replay_core::dialect::DialectKind>,
    /// With --suite: the seed of the `random` variant's write sizes (listed in `GET /cases`).
    /// Default: new each run.
    #[arg(long, value_name = "N", requires = "suite")]
    pub random_seed: Option<u64>,
    /// Address to listen on; loopback unless told otherwise. Port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub addr: SocketAddr,
    /// Replay the recorded timing at this speed (2 = twice as fast). Default 1.
    #[arg(long, conflicts_with = "instant", value_parser = parse_speed)]
    pub speed: Option<f64>,
    /// Send everything as fast as possible, ignoring the recorded timing.
    #[arg(long)]
    pub instant: bool,
    /// Re-cut the body into writes of N bytes (splits characters and CRLFs on purpose).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub rechunk: Option<u64>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// A `--speed`: a number within [`serve::SPEED_RANGE`].
fn parse_speed(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if serve::SPEED_RANGE.contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a number from {} to {}, such as 1, 0.5 or 10",
            serve::SPEED_RANGE.start(),
            serve::SPEED_RANGE.end()
        )),
    }
}

/// The clap value parser for every seconds argument (`--timeout`, `--header-timeout`,
/// `--idle-timeout`): a finite number from [`MIN_SECONDS`] to [`MAX_SECONDS`]. Out of range is a
/// usage error (exit 2), never a panic in `Duration::from_secs_f64`.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (MIN_SECONDS..=MAX_SECONDS).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a number of seconds from {MIN_SECONDS} to {MAX_SECONDS}"
        )),
    }
}

/// The command-line flags for [`ServerLimits`], shared by `serve` and `proxy`.
#[derive(Clone, Debug, clap::Args)]
pub struct LimitArgs {
    /// Seconds a client has to send a complete request head; slower connections are closed.
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = parse_seconds)]
    pub header_timeout: f64,
    /// Seconds a connection may stay silent (no byte either way, the server not busy with it)
    /// before it is closed.
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = parse_seconds)]
    pub idle_timeout: f64,
    /// Connections served at once; more are accepted and closed at once with a 503.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub max_connections: u32,
    /// Seconds a request body has to arrive whole; a slower one is cut off (serve answers 408,
    /// the proxy aborts the upstream request) and its connection slot freed.
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = parse_seconds)]
    pub body_timeout: f64,
    /// Bytes per second a request body must average after its first 5 seconds (suffixes K, M);
    /// a body trickled slower is cut off like one past --body-timeout.
    #[arg(long, value_name = "N", default_value = "1K", value_parser = super::parse_size)]
    pub min_body_rate: u64,
}

impl LimitArgs {
    /// The limits these flags ask for.
    pub fn limits(&self) -> ServerLimits {
        ServerLimits {
            header_timeout: secs(self.header_timeout),
            idle_timeout: secs(self.idle_timeout),
            max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
            body_timeout: secs(self.body_timeout),
            min_body_rate: self.min_body_rate,
            ..ServerLimits::default()
        }
    }
}

/// `sse-replay serve`: prints `listening on http://ADDR/` as the first line of standard output,
/// serves until Ctrl+C or SIGTERM. Exit 2 when the file cannot be read, 1 when the address cannot be bound.
pub(super) fn run(args: &ServeArgs) -> ExitCode {
    let Some(file) = args.file.as_ref().filter(|_| !args.suite) else {
        return run_suite(args);
    };
    let opened = sse_replay_core::probe::open(file, Default::default())
        .map_err(OpenError::from)
        .and_then(|p| p.recording(|_, _| true));
    let (rec, _kind) = match opened {
        Ok(x) => x,
        Err(e) => return fail(EXIT_INPUT, e),
    };
    let pacing = if args.instant {
        serve::Pacing::Instant
    } else {
        serve::Pacing::Recorded {
            speed: args.speed.unwrap_or(1.0),
        }
    };
    let rechunk = args
        .rechunk
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let plan = Arc::new(serve::Plan::new(&rec, pacing, rechunk));
    let total = plan.writes.last().map_or(Duration::ZERO, |(d, _)| *d);
    let Listening {
        listener,
        rt,
        signal,
        ..
    } = match listen(args.addr, "download the served recording") {
        Ok(l) => l,
        Err(code) => return code,
    };
    sse_replay_core::log_line!(
        "serving {} ({} in {} over {:.3} s, HTTP {}); Ctrl+C or SIGTERM stops",
        file.display(),
        sse_replay_core::text::plural(rec.body_len(), "byte"),
        sse_replay_core::text::plural(plan.writes.len(), "write"),
        total.as_secs_f64(),
        plan.status
    );
    rt.block_on(async move {
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        signal.stop_on_signal(stop);
        serve::run(listener, plan, true, args.limits.limits(), stop_rx).await;
    });
    sse_replay_core::log_line!("stopped");
    ExitCode::from(EXIT_OK)
}

/// `sse-replay serve --suite`: the suite's cases on one server (see [`sse_replay_net::suite`]).
/// Prints `listening on http://ADDR/` first, like `serve`. Exit 2 when a recording cannot be read
/// (nothing is served), 1 when the address cannot be bound.
fn run_suite(args: &ServeArgs) -> ExitCode {
    use sse_replay_net::harness;
    let (suite, unreadable) = if args.recordings.is_empty() {
        harness::builtin_suite()
    } else {
        harness::load_paths(&args.recordings)
    };
    if let Some(u) = unreadable.first() {
        return fail(
            EXIT_INPUT,
            format!(
                "{} recording(s) could not be read, the first: {}",
                unreadable.len(),
                u.error.replace(['\n', '\r'], " ")
            ),
        );
    }
    let variants = shared::selected_variants(&args.variants, &args.faults);
    let random_seed = args.random_seed.unwrap_or_else(super::test::fresh_seed);
    let opts = sse_replay_net::suite::SuiteOptions {
        suite,
        variants,
        dialects: args.dialect.clone(),
        random_seed,
        speed: if args.instant {
            None
        } else {
            Some(args.speed.unwrap_or(1.0))
        },
        addr: args.addr,
        log: true,
        limits: args.limits.limits(),
    };
    let cases = sse_replay_net::suite::count_cases(&opts);
    let Listening {
        listener,
        addr,
        rt,
        signal,
    } = match listen(args.addr, "download the served recordings") {
        Ok(l) => l,
        Err(code) => return code,
    };
    sse_replay_core::log_line!(
        "serving the suite: {} at http://{addr}/cases (random seed {random_seed}); Ctrl+C or SIGTERM stops",
        sse_replay_core::text::plural(cases, "case")
    );
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    {
        // The signal watch is a task on the runtime.
        let _entered = rt.enter();
        signal.stop_on_signal(stop);
    }
    sse_replay_net::suite::serve_blocking(listener, opts, stop_rx, &rt);
    sse_replay_core::log_line!("stopped");
    ExitCode::from(EXIT_OK)
}

/// A bound server, ready to serve: its listener and address, the runtime, the signal handlers.
struct Listening {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    rt: tokio::runtime::Runtime,
    signal: super::signals::ShutdownSignal,
}

/// What both forms of `serve` do before serving: bind `addr`, start the runtime, warn when the
/// address is reachable from other machines (who could `exposed` then), install the signal
/// handlers, and print `listening on http://ADDR/`, in that order: the handlers come before the
/// line, so that a signal sent as soon as it is read stops cleanly. An error is the exit code.
#[allow(
    clippy::print_stdout,
    reason = "the command line: its reports and messages are printed here"
)]
fn listen(addr: SocketAddr, exposed: &str) -> Result<Listening, ExitCode> {
    let listener = sse_replay_net::bind(addr).map_err(|e| fail(EXIT_FAILED, e))?;
    let addr = listener.local_addr().map_err(|e| fail(EXIT_FAILED, e))?;
    let rt = sse_replay_net::multi_thread_runtime()
        .map_err(|e| fail(EXIT_FAILED, NetError::Runtime(e)))?;
    if let Some(w) = sse_replay_net::exposure_warning(addr, exposed) {
        sse_replay_core::log_line!("sse-replay: {w}");
    }
    let signal = super::signals::install(&rt)?;
    println!("listening on http://{addr}/");
    Ok(Listening {
        listener,
        addr,
        rt,
        signal,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn seconds_arguments_are_range_checked_and_never_panic() {
        for ok in ["0.001", "1", "10", "300", "1000000", " 2.5 "] {
            assert!(parse_seconds(ok).is_ok(), "{ok}");
        }
        for bad in [
            "0",
            "-1",
            "1e300",
            "NaN",
            "inf",
            "-inf",
            "1e-30",
            "x",
            "",
            "1000000.1",
        ] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(secs(1.5), Duration::from_millis(1500));
        assert_eq!(secs(f64::NAN), Duration::ZERO);
        assert_eq!(secs(-3.0), Duration::ZERO);
        assert_eq!(secs(1e300), Duration::MAX);
        assert_eq!(secs(f64::INFINITY), Duration::MAX);
    }
}
