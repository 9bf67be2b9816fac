//! Running one case: the replay server in-process on `127.0.0.1:0` with the case's writes, the
//! client as a child process in its own process group (so a timeout kills it and everything it
//! started), its output captured with bounds.

use std::io::Read;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::judge::Exit;
use super::variants::Wire;
use crate::serve::{self, Pacing, Plan, ServeConfig};

/// Most standard output kept from a client (the rest is read and dropped).
pub const STDOUT_LIMIT: usize = 16 << 20;
/// Most standard error kept (its tail).
pub const STDERR_LIMIT: usize = 64 << 10;
/// How long the harness waits for a killed client (and its pipes) before giving up on them.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// The client command: program and arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCommand {
    pub program: String,
    pub args: Vec<String>,
}

/// What running the client produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientRun {
    pub exit: Exit,
    pub stdout: Vec<u8>,
    /// The tail of standard error.
    pub stderr: Vec<u8>,
    /// The client's own run time (spawn to exit).
    pub client_time: Duration,
}

/// Why a case could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The command could not be started (not found, not executable).
    #[error("cannot run {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    /// The replay server could not start.
    #[error("cannot start the replay server: {0}")]
    Server(#[from] crate::NetError),
}

/// The environment that points every common SDK at the server at `addr`, with dummy keys.
pub fn client_env(addr: SocketAddr) -> Vec<(&'static str, String)> {
    let base = format!("http://{addr}");
    vec![
        ("SSE_REPLAY_URL", base.clone()),
        ("OPENAI_BASE_URL", format!("{base}/v1")),
        ("OPENAI_API_BASE", format!("{base}/v1")),
        ("ANTHROPIC_BASE_URL", base.clone()),
        ("OLLAMA_HOST", base.clone()),
        ("GOOGLE_GEMINI_BASE_URL", base.clone()),
        ("GEMINI_BASE_URL", base),
        ("OPENAI_API_KEY", "sk-sse-replay-dummy".into()),
        ("ANTHROPIC_API_KEY", "sk-ant-sse-replay-dummy".into()),
        ("GEMINI_API_KEY", "sse-replay-dummy".into()),
        ("GOOGLE_API_KEY", "sse-replay-dummy".into()),
        ("NO_PROXY", "127.0.0.1,localhost".into()),
        ("no_proxy", "127.0.0.1,localhost".into()),
    ]
}

/// Starts the replay server on `127.0.0.1:0` answering every request with `wire`: the response
/// head `(status, content type)`, then each write as its own HTTP chunk (flushed, `TCP_NODELAY`),
/// due at its time scaled by `speed` (`None` = no waiting), aborted at the end for a `cut`.
pub fn serve_wire(
    wire: &Wire,
    head: (u16, String),
    speed: Option<f64>,
) -> Result<crate::serve::ServeHandle, crate::NetError> {
    let pacing = speed.map_or(Pacing::Instant, |speed| Pacing::Recorded { speed });
    let due = |t_us: u64| match pacing {
        Pacing::Instant => Duration::ZERO,
        Pacing::Recorded { speed } => Duration::from_secs_f64(t_us as f64 / 1e6 / speed),
    };
    let plan = Plan {
        status: head.0,
        content_type: head.1,
        writes: wire
            .writes
            .iter()
            .map(|(t, b)| (due(*t), Bytes::from(b.clone())))
            .collect(),
        abort_at_end: wire.abort,
        complete: sse_replay_core::complete::chunks_are_complete(
            wire.writes.iter().map(|(_, b)| b.as_slice()),
        ),
    };
    serve::start(ServeConfig {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        plan: Arc::new(plan),
        log: false,
        limits: crate::ServerLimits::default(),
    })
}

/// Serves `wire` (with `status`/`content_type`) on `127.0.0.1:0`, runs the client against it with
/// `extra_env`, and returns what it did. `speed` scales the writes' due times (`None` = instant).
pub fn run_client(
    cmd: &ClientCommand,
    wire: &Wire,
    head: (u16, String),
    speed: Option<f64>,
    extra_env: &[(&str, String)],
    timeout: Duration,
) -> Result<ClientRun, RunError> {
    let server = serve_wire(wire, head, speed)?;
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .envs(client_env(server.addr()))
        .envs(extra_env.iter().map(|(k, v)| (*k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let started = Instant::now();
    let mut child = command.spawn().map_err(|source| RunError::Spawn {
        program: cmd.program.clone(),
        source,
    })?;
    let group = Some(rustix::process::Pid::from_child(&child));
    let stdout = child.stdout.take().map(|s| drain(s, STDOUT_LIMIT, false));
    let stderr = child.stderr.take().map(|s| drain(s, STDERR_LIMIT, true));
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("sse-replay-client-wait".into())
        .spawn(move || {
            tx.send(child.wait()).ok();
        });
    let status = if waiter.is_ok() {
        match rx.recv_timeout(timeout) {
            Ok(s) => Some(s),
            Err(_) => {
                kill_group(group);
                rx.recv_timeout(REAP_WAIT).ok();
                None
            }
        }
    } else {
        kill_group(group);
        None
    };
    let client_time = started.elapsed();
    // Whatever the client left behind in its group goes too.
    kill_group(group);
    let exit = match status {
        None => Exit::TimedOut,
        Some(Ok(s)) => {
            use std::os::unix::process::ExitStatusExt as _;
            match (s.code(), s.signal()) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(sig)) => Exit::Signal(sig),
                (None, None) => Exit::Code(-1),
            }
        }
        Some(Err(_)) => Exit::Code(-1),
    };
    let collect = |rx: Option<mpsc::Receiver<Vec<u8>>>| {
        rx.and_then(|rx| rx.recv_timeout(REAP_WAIT).ok())
            .unwrap_or_default()
    };
    let stdout = collect(stdout);
    let stderr = collect(stderr);
    drop(server);
    Ok(ClientRun {
        exit,
        stdout,
        stderr,
        client_time,
    })
}

/// Kills the process group `group` (the client and whatever it started). An already empty group
/// is fine.
fn kill_group(group: Option<rustix::process::Pid>) {
    if let Some(pid) = group {
        rustix::process::kill_process_group(pid, rustix::process::Signal::KILL).ok();
    }
}

/// Reads `source` to its end on a thread, keeping at most `limit` bytes (the head, or with `tail`
/// the last bytes), and sends them when the pipe closes.
fn drain(
    mut source: impl Read + Send + 'static,
    limit: usize,
    tail: bool,
) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("sse-replay-client-pipe".into())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 16 * 1024];
            loop {
                match source.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        kept.extend_from_slice(&buf[..n]);
                        if kept.len() > limit {
                            if tail {
                                let excess = kept.len() - limit;
                                kept.drain(..excess);
                            } else {
                                kept.truncate(limit);
                            }
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            tx.send(kept).ok();
        });
    if spawned.is_err() {
        let (tx, rx) = mpsc::channel();
        tx.send(Vec::new()).ok();
        return rx;
    }
    rx
}

/// Whether `program` can be found: a path that is a file, or a name on `PATH`.
pub fn program_exists(program: &str) -> bool {
    let path = std::path::Path::new(program);
    if program.contains('/') {
        return path.is_file();
    }
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let candidate = dir.join(program);
            std::fs::metadata(&candidate).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt as _;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
    })
}
