//! Running one case: the replay server in-process on `127.0.0.1:0` with the case's writes, the
//! client as a child process, its output captured with bounds.
//!
//! Every process a case starts is killed when the case ends (the client exited, timed out, or
//! the run was stopped), `setsid` and double-forked descendants included. How they are found,
//! unprivileged: the harness makes itself the *child subreaper* (`PR_SET_CHILD_SUBREAPER`), so a
//! descendant whose parent exits is re-parented to the harness rather than to init and stays
//! findable; the client starts in a process group of its own, killed whole; each client starts
//! with a marker in its environment (`SSE_REPLAY_CASE`) and with the case's own pipes as its
//! standard input, output and error, which its descendants inherit, so when several cases run at
//! once the orphans re-parented to the harness are told apart — by the marker, or, for one that
//! cleared its environment (`env -i`) after leaving the group (`setsid`), by an open descriptor
//! of one of its case's pipes (`/proc/PID/fd`); and the client's own descendants are walked by
//! parent pid in `/proc`. Each found process is stopped (`SIGSTOP`, so it cannot fork away while
//! the rest are found), then killed (`SIGKILL`), round after round until none is left; the
//! harness reaps the ones re-parented to it. (A PID namespace would need user namespaces, often disabled, and
//! would make the client PID 1, which ignores default signals; a cgroup needs a delegated,
//! writable cgroup, which ordinary users rarely have. Both are also Linux-only; this works
//! wherever `/proc` does.) A descendant that leaves the group, clears its environment and closes
//! or redirects all three inherited descriptors, and whose parent has exited, carries none of
//! these marks: where the process starts no children but clients (the `sse-replay` binary says
//! so with [`claim_orphans`]), every orphan re-parented to it is some case's, and it is killed
//! when a case ends while no other runs. A client that exits while a
//! descendant still holds its standard output is judged on what it printed: the descendant is
//! killed, and what was read by then is kept.

use std::io::Read;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::judge::Exit;
use super::variants::Wire;
use crate::serve::{self, Pacing, Plan, ServeConfig};
use sse_replay_core::dialect::StreamApi;

/// Most standard output kept from a client (the rest is read and dropped).
pub const STDOUT_LIMIT: usize = 16 << 20;
/// Most standard error kept (its tail).
pub const STDERR_LIMIT: usize = 64 << 10;
/// How long the harness waits for a killed client (and its pipes) before giving up on them.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// How often a running client is looked at (its exit, the time-out, a stop).
const POLL: Duration = Duration::from_millis(20);

/// The environment variable marking every process of one case (see the module documentation).
pub const CASE_MARKER: &str = "SSE_REPLAY_CASE";

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
    /// What the case's server saw of it: its requests, how much of the stream it was handed.
    pub served: serve::Served,
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

/// The environment that points every common SDK at the server at `addr`, with dummy keys (the
/// caller's own credentials are removed first, see [`is_caller_credential`]; the SDKs' shared
/// credentials and config files are `/dev/null`, so no profile on disk is read either).
pub fn client_env(addr: SocketAddr) -> Vec<(&'static str, String)> {
    use sse_replay_core::dialect::{ClientEnv, DialectKind};
    let base = format!("http://{addr}");
    let mut env: Vec<(&'static str, String)> = vec![("SSE_REPLAY_URL", base.clone())];
    // Each provider's variables, from the dialect table (several dialects share OpenAI's and
    // the AWS ones: each is set once).
    for (name, value) in DialectKind::ALL.iter().flat_map(|d| d.client_env()) {
        if env.iter().any(|(n, _)| n == name) {
            continue;
        }
        let value = match value {
            ClientEnv::BaseUrl(path) => format!("{base}{path}"),
            ClientEnv::Fixed(v) => (*v).to_owned(),
        };
        env.push((name, value));
    }
    env.push(("NO_PROXY", "127.0.0.1,localhost".into()));
    env.push(("no_proxy", "127.0.0.1,localhost".into()));
    for (name, value) in NO_AMBIENT_CREDENTIALS {
        if !env.iter().any(|(n, _)| n == name) {
            env.push((name, (*value).to_owned()));
        }
    }
    env
}

/// Where SDKs find credentials nobody passed them, pointed at nothing for every client (as the
/// dialect table points AWS's shared files at `/dev/null` and turns its instance metadata off):
/// the gcloud configuration folder holding application-default credentials
/// (`CLOUDSDK_CONFIG`), Google's metadata server (google-auth's `GCE_METADATA_HOST` and
/// `GCE_METADATA_IP`, a closed local port; gcp-metadata's `METADATA_SERVER_DETECTION`), and the
/// Azure CLI's folder of signed-in accounts (`AZURE_CONFIG_DIR`). A client under test that asks
/// for Vertex AI or `DefaultAzureCredential` then finds no real identity.
const NO_AMBIENT_CREDENTIALS: &[(&str, &str)] = &[
    ("CLOUDSDK_CONFIG", "/dev/null"),
    ("GCE_METADATA_HOST", "127.0.0.1:1"),
    ("GCE_METADATA_IP", "127.0.0.1:1"),
    ("METADATA_SERVER_DETECTION", "none"),
    ("AZURE_CONFIG_DIR", "/dev/null"),
];

/// Variables that lead an SDK to real credentials without naming a secret themselves: a profile,
/// a role, a web-identity token file, an identity endpoint (AWS containers; Azure App Service,
/// Functions, Arc and Cloud Shell managed identity, whose `IDENTITY_HEADER` is itself the
/// secret that endpoint asks for), Vertex AI instead of the API key. Removed from a client's
/// environment with the secrets ([`is_caller_credential`]).
const AMBIENT_CREDENTIALS: &[&str] = &[
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_SSO_SESSION",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    "AZURE_FEDERATED_TOKEN_FILE",
    "IDENTITY_ENDPOINT",
    "IDENTITY_HEADER",
    "IDENTITY_SERVER_THUMBPRINT",
    "IMDS_ENDPOINT",
    "MSI_ENDPOINT",
    "MSI_SECRET",
];

/// Whether the caller's variable `name` (with `value`) may carry a real credential, so it is not
/// passed on to a client under test: its name names a secret (the rule recordings are redacted
/// by, [`sse_replay_core::redact::is_secret_key`]: `AWS_SESSION_TOKEN`, `HF_TOKEN`,
/// `GOOGLE_APPLICATION_CREDENTIALS`, `*_API_KEY`, …), it is an `AMBIENT_CREDENTIALS` setting,
/// or its value is shaped like a key whatever its name
/// ([`sse_replay_core::redact::looks_like_credential`]).
pub fn is_caller_credential(name: &str, value: &str) -> bool {
    AMBIENT_CREDENTIALS.contains(&name)
        || sse_replay_core::redact::is_secret_key(name)
        || sse_replay_core::redact::looks_like_credential(value)
}

/// The caller's environment variables that [`is_caller_credential`] keeps from a client.
fn caller_credentials() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .filter(|(name, value)| {
            let name = name.to_string_lossy();
            let value = value.to_string_lossy();
            is_caller_credential(&name, &value)
        })
        .map(|(name, _)| name)
        .collect()
}

/// Starts the replay server on `127.0.0.1:0` answering every request with `wire`: the response
/// head `(status, content type)`, then each write as its own HTTP chunk (flushed, `TCP_NODELAY`),
/// due at its time scaled by `speed` (`None` = no waiting), aborted at the end for a `cut`.
pub fn serve_wire(
    wire: &Wire,
    head: (u16, String),
    speed: Option<f64>,
) -> Result<crate::serve::ServeHandle, crate::NetError> {
    serve_wire_watched(wire, head, speed, None, None)
}

/// [`serve_wire`], noting in `watch` what each client was served; with `api`, only a request
/// for that streaming API (or one that names none) is served ([`Plan::api`]).
pub fn serve_wire_watched(
    wire: &Wire,
    head: (u16, String),
    speed: Option<f64>,
    api: Option<StreamApi>,
    watch: Option<Arc<serve::ServedLog>>,
) -> Result<crate::serve::ServeHandle, crate::NetError> {
    serve::start_watched(
        ServeConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            plan: Arc::new(Plan {
                api,
                ..wire_plan(wire, head, speed)
            }),
            log: false,
            limits: crate::ServerLimits::default(),
        },
        watch,
    )
}

/// What a server answers with to put `wire` on the wire: the response head `(status, content
/// type)`, each write as its own chunk due at its time scaled by `speed` (`None` = no waiting),
/// aborted at the end for a `cut`.
pub fn wire_plan(wire: &Wire, head: (u16, String), speed: Option<f64>) -> Plan {
    let pacing = speed.map_or(Pacing::Instant, |speed| Pacing::Recorded { speed });
    let due = |t_us: u64| match pacing {
        Pacing::Instant => Duration::ZERO,
        Pacing::Recorded { speed } => crate::secs(t_us as f64 / 1e6 / speed),
    };
    Plan {
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
        api: None,
    }
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
    run_client_until(
        cmd,
        wire,
        head,
        speed,
        None,
        extra_env,
        timeout,
        &AtomicBool::new(false),
    )
}

/// [`run_client`], ended early when `cancel` is set: the client and everything it started are
/// killed at once, and the run is [`Exit::Stopped`]. With `api`, a request for another
/// streaming API of the dialect is answered 404 and noted in [`ClientRun::served`].
#[allow(
    clippy::too_many_arguments,
    reason = "one case's server and client, each part its own"
)]
pub fn run_client_until(
    cmd: &ClientCommand,
    wire: &Wire,
    head: (u16, String),
    speed: Option<f64>,
    api: Option<StreamApi>,
    extra_env: &[(&str, String)],
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<ClientRun, RunError> {
    static NEXT_CASE: AtomicU64 = AtomicU64::new(1);
    become_subreaper();
    let watch = Arc::new(serve::ServedLog::default());
    let server = serve_wire_watched(wire, head, speed, api, Some(watch.clone()))?;
    let marker = format!(
        "{}-{}",
        std::process::id(),
        NEXT_CASE.fetch_add(1, Ordering::Relaxed)
    );
    // Standard input is a pipe of the case's own with no writer (the client reads end of file,
    // as from /dev/null): a descriptor every descendant inherits, found in `/proc/PID/fd` whatever
    // its environment or session. The harness keeps no end of it once the client is started, so
    // no other case's client, forked meanwhile, can hold it.
    let stdin = std::io::pipe().ok().map(|(reader, _writer)| reader);
    let stdin_name = stdin.as_ref().and_then(fd_link);
    let mut command = Command::new(&cmd.program);
    for name in caller_credentials() {
        command.env_remove(name);
    }
    command
        .args(&cmd.args)
        .envs(client_env(server.addr()))
        .envs(extra_env.iter().map(|(k, v)| (*k, v)))
        .env(CASE_MARKER, &marker)
        .stdin(stdin.map_or_else(Stdio::null, Stdio::from))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let started = Instant::now();
    // Started and listed as a live client in one step: a sweep of unmarked orphans
    // ([`claim_orphans`]) never sees a client that is started but not yet listed.
    let (mut child, root, _registered) = {
        let _spawning = spawning();
        let child = command.spawn().map_err(|source| RunError::Spawn {
            program: cmd.program.clone(),
            source,
        })?;
        let root = rustix::process::Pid::from_child(&child);
        (child, root, LiveClient::register(root))
    };
    // The command holds the parent's copy of the client's standard input until it is dropped.
    drop(command);
    let marks = CaseMarks {
        marker,
        stdin: stdin_name,
        outputs: child
            .stdout
            .iter()
            .filter_map(fd_link)
            .chain(child.stderr.iter().filter_map(fd_link))
            .collect(),
    };
    let stdout = child.stdout.take().map(|s| drain(s, STDOUT_LIMIT, false));
    let stderr = child.stderr.take().map(|s| drain(s, STDERR_LIMIT, true));
    // The client's exit is watched without reaping it (`WNOWAIT`): until it is reaped its pid,
    // and so its process group's id, cannot be given to another process, so killing what the
    // case left behind never hits a stranger that got the pid meanwhile.
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("sse-replay-client-wait".into())
        .spawn(move || {
            use rustix::process::{WaitId, WaitIdOptions, waitid};
            loop {
                match waitid(
                    WaitId::Pid(root),
                    WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
                ) {
                    Err(e) if e == rustix::io::Errno::INTR => {}
                    _ => break,
                }
            }
            tx.send(()).ok();
        });
    let mut stopped = false;
    let mut exited = false;
    if waiter.is_ok() {
        loop {
            match rx.recv_timeout(POLL) {
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    exited = true;
                    break;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            stopped = cancel.load(Ordering::Relaxed);
            if stopped || started.elapsed() >= timeout {
                break;
            }
        }
    }
    let client_time = started.elapsed();
    // The client (if still running) and whatever it left behind: its group, its descendants
    // wherever they went. Then the client is reaped.
    kill_case(root, &marks);
    let reap_deadline = Instant::now() + REAP_WAIT;
    let reaped = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(Ok(s)),
            Ok(None) if Instant::now() < reap_deadline => std::thread::sleep(POLL),
            Ok(None) => break None,
            Err(e) => break Some(Err(e)),
        }
    };
    let status = if exited { reaped } else { None };
    let exit = match status {
        None if stopped => Exit::Stopped,
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
    // The pipes close once every holder is gone (killed above); what was read is kept either way.
    let stdout = stdout.map(Drained::collect).unwrap_or_default();
    let stderr = stderr.map(Drained::collect).unwrap_or_default();
    drop(server);
    Ok(ClientRun {
        exit,
        stdout,
        stderr,
        client_time,
        served: watch.snapshot(),
    })
}

/// This process is the child subreaper (see [`become_subreaper`]).
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// Makes this process the child subreaper (once): descendants orphaned by their parent's exit
/// are re-parented here, where [`kill_case`] finds them and reaps them.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok() {
            SUBREAPER.store(true, Ordering::Relaxed);
        }
    });
}

/// Set by [`claim_orphans`]: every orphan re-parented to this process descends from a case.
static ORPHANS_ARE_CASES: AtomicBool = AtomicBool::new(false);

/// Declares that this process starts no child process but the harness's clients (the
/// `sse-replay` binary's `test`), so that every orphan re-parented to it (it is the child
/// subreaper) descends from some case's client — also one that left the client's group, cleared
/// its environment and closed every inherited descriptor, which carries none of the case's marks.
/// Such an unmarked orphan is killed when a case ends while no other case runs (at the latest
/// with the run's last case): which of the running cases it came from cannot be told, and a
/// running case's helper is left alone. A process that starts children of its own (a test
/// binary, the app) must not call it: their orphans would be killed as well.
pub fn claim_orphans() {
    ORPHANS_ARE_CASES.store(true, Ordering::Relaxed);
}

/// Held while a client is started and listed ([`LIVE_CLIENTS`]), and while unmarked orphans are
/// swept ([`kill_case`]): the sweep never takes a client being started for an orphan.
static SPAWNING: Mutex<()> = Mutex::new(());

fn spawning() -> std::sync::MutexGuard<'static, ()> {
    SPAWNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What `/proc/self/fd/N` says descriptor `fd` is (`pipe:[1234]`): the name every process
/// holding the same pipe shows for it.
fn fd_link(fd: &impl std::os::fd::AsRawFd) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
}

/// The clients of the cases running now: one case's cleanup never kills another's client (a
/// client being started holds, between its fork and its exec, every descriptor of the harness).
static LIVE_CLIENTS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// A client listed in [`LIVE_CLIENTS`] while this lives.
struct LiveClient(i32);

impl LiveClient {
    fn register(pid: rustix::process::Pid) -> Self {
        let raw = pid.as_raw_nonzero().get();
        live_clients().push(raw);
        Self(raw)
    }
}

impl Drop for LiveClient {
    fn drop(&mut self) {
        live_clients().retain(|&p| p != self.0);
    }
}

fn live_clients() -> std::sync::MutexGuard<'static, Vec<i32>> {
    LIVE_CLIENTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How one case's processes are recognised once they are no longer below its client: the
/// environment marker, and the case's pipes as `/proc` names them — its standard input (the
/// harness keeps no end of it), and the write ends of its standard output and error (the
/// harness holds their read ends, and so, for an instant, does any client being started).
struct CaseMarks {
    marker: String,
    stdin: Option<std::path::PathBuf>,
    outputs: Vec<std::path::PathBuf>,
}

impl CaseMarks {
    /// Whether process `pid` carries the marker in its environment or holds one of the case's
    /// pipes ([`CaseMarks`]) open (unreadable — another user's process — is no).
    fn carried_by(&self, pid: i32) -> bool {
        let needle = format!("{CASE_MARKER}={}", self.marker);
        if std::fs::read(format!("/proc/{pid}/environ"))
            .unwrap_or_default()
            .split(|&b| b == 0)
            .any(|kv| kv == needle.as_bytes())
        {
            return true;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        fds.flatten().any(|fd| {
            let Ok(link) = std::fs::read_link(fd.path()) else {
                return false;
            };
            self.stdin.as_ref() == Some(&link)
                || (self.outputs.contains(&link) && opened_for_writing(pid, &fd.file_name()))
        })
    }
}

/// Whether descriptor `fd` of process `pid` is open for writing (`/proc/PID/fdinfo/FD`'s
/// `flags`, octal: the access mode is write-only or read-write).
fn opened_for_writing(pid: i32, fd: &std::ffi::OsStr) -> bool {
    let path = std::path::Path::new("/proc")
        .join(pid.to_string())
        .join("fdinfo")
        .join(fd);
    std::fs::read_to_string(path).is_ok_and(|info| {
        info.lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .is_some_and(|flags| flags & 0o3 != 0)
    })
}

/// One process as `/proc` shows it.
struct ProcEntry {
    pid: rustix::process::Pid,
    ppid: i32,
    /// Whether it carries the case's marks ([`CaseMarks::carried_by`]).
    marked: bool,
}

/// Every process in `/proc` with its parent, and whether it carries the case's `marks`.
fn processes(marks: &CaseMarks) -> Vec<ProcEntry> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut all = Vec::new();
    for e in dir.flatten() {
        let Some(raw) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Some(pid) = rustix::process::Pid::from_raw(raw) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{raw}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: the command may hold spaces and parentheses.
        let mut rest = stat
            .rsplit_once(')')
            .map_or("", |(_, r)| r)
            .split_whitespace();
        let state = rest.next().unwrap_or("");
        let ppid = rest.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if state == "Z" && ppid != rustix::process::getpid().as_raw_nonzero().get() {
            continue; // someone else's zombie: nothing to kill
        }
        // Orphans come to this subreaper: only they need their marks read (every process does
        // when this is not the subreaper and they went to init).
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let marked = raw != me
            && (ppid == me || !SUBREAPER.load(Ordering::Relaxed))
            && marks.carried_by(raw);
        all.push(ProcEntry { pid, ppid, marked });
    }
    all
}

/// Kills every process of one case: the client `root`, its process group, its descendants by
/// parent pid (wherever their sessions), every process carrying the case's marks (the orphans
/// re-parented to this subreaper: its environment marker or one of its pipes), and — when this
/// process has [claimed its orphans](claim_orphans) and no other case is running — every other
/// orphan re-parented here. Stopped first, so none forks away while the others are found; then
/// killed; round after round until a round finds none. The ones re-parented here are reaped. An
/// already finished case is fine.
fn kill_case(root: rustix::process::Pid, marks: &CaseMarks) {
    use rustix::process::{Signal, kill_process, kill_process_group};
    let me = rustix::process::getpid();
    let me_raw = me.as_raw_nonzero().get();
    let root_raw = root.as_raw_nonzero().get();
    kill_process_group(root, Signal::KILL).ok();
    for _ in 0..20 {
        // No client is started while a round looks for orphans (see `SPAWNING`).
        let _spawning = spawning();
        let all = processes(marks);
        // The case's processes: the marked ones, and the descendants of the root; never another
        // case's client.
        let others: Vec<i32> = live_clients()
            .iter()
            .copied()
            .filter(|&p| p != root_raw)
            .collect();
        // Every child of this process is then a case's client or its orphan, and no other
        // case runs: the unmarked orphans are this case's, or left by a case that has ended.
        let sweep = ORPHANS_ARE_CASES.load(Ordering::Relaxed)
            && SUBREAPER.load(Ordering::Relaxed)
            && others.is_empty();
        let mut mine: Vec<rustix::process::Pid> = all
            .iter()
            .filter(|p| {
                (p.marked || (sweep && p.ppid == me_raw))
                    && p.pid != me
                    && !others.contains(&p.pid.as_raw_nonzero().get())
            })
            .map(|p| p.pid)
            .collect();
        // Their descendants too (a marked orphan's children still have it as their parent).
        let mut frontier: Vec<i32> = mine
            .iter()
            .map(|p| p.as_raw_nonzero().get())
            .chain([root_raw])
            .collect();
        while let Some(parent) = frontier.pop() {
            for p in all.iter().filter(|p| p.ppid == parent && p.pid != me) {
                if !mine.contains(&p.pid) {
                    mine.push(p.pid);
                }
                frontier.push(p.pid.as_raw_nonzero().get());
            }
        }
        let live: Vec<_> = mine
            .iter()
            .copied()
            .filter(|pid| !is_zombie(*pid))
            .collect();
        for &pid in &live {
            kill_process(pid, Signal::STOP).ok();
        }
        for &pid in &live {
            kill_process(pid, Signal::KILL).ok();
        }
        reap_orphans(&all, &mine, root, me);
        if live.is_empty() {
            break;
        }
        drop(_spawning);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether `pid` is a zombie (dead, not yet reaped).
fn is_zombie(pid: rustix::process::Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero().get())).map_or(
        true,
        |s| {
            s.rsplit_once(')')
                .map_or("", |(_, r)| r)
                .trim_start()
                .starts_with('Z')
        },
    )
}

/// Reaps this case's processes (`mine`) re-parented to this subreaper that have died: not its
/// client `root` (reaped by [`run_client_until`]) and never another case's (other cases' clients
/// are this process's children too, and are never in `mine`).
fn reap_orphans(
    all: &[ProcEntry],
    mine: &[rustix::process::Pid],
    root: rustix::process::Pid,
    me: rustix::process::Pid,
) {
    for p in all
        .iter()
        .filter(|p| p.ppid == me.as_raw_nonzero().get() && p.pid != root && mine.contains(&p.pid))
    {
        rustix::process::waitpid(Some(p.pid), rustix::process::WaitOptions::NOHANG).ok();
    }
}

/// What a pipe drain thread has read so far, and whether the pipe has closed.
struct Drained {
    kept: Arc<Mutex<Vec<u8>>>,
    closed: mpsc::Receiver<()>,
}

impl Drained {
    /// What was read: everything, once the pipe has closed (at most [`REAP_WAIT`] from now);
    /// what had arrived by then otherwise (a holder the harness could not kill).
    fn collect(self) -> Vec<u8> {
        self.closed.recv_timeout(REAP_WAIT).ok();
        std::mem::take(
            &mut *self
                .kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// Reads `source` to its end on a thread, keeping at most `limit` bytes (the head, or with `tail`
/// the last bytes), readable at any time ([`Drained::collect`]).
fn drain(mut source: impl Read + Send + 'static, limit: usize, tail: bool) -> Drained {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (tx, closed) = mpsc::channel();
    let shared = kept.clone();
    let spawned = std::thread::Builder::new()
        .name("sse-replay-client-pipe".into())
        .spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            loop {
                match source.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut kept = shared
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
            tx.send(()).ok();
        });
    if spawned.is_err() {
        let (tx, closed) = mpsc::channel();
        tx.send(()).ok();
        return Drained { kept, closed };
    }
    Drained { kept, closed }
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

#[cfg(test)]
mod tests {
    use super::*;
    use sse_replay_core::dialect::{ClientEnv, DialectKind};

    /// Every variable of every dialect's descriptor is set once: base URLs at the server (with
    /// their path), fixed values as the table gives them, and nothing else but the harness's own.
    #[test]
    fn the_environment_is_the_dialect_tables() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 4567));
        let env = client_env(addr);
        let mut names: Vec<&str> = env.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a variable set twice");
        for d in DialectKind::ALL {
            for (name, value) in d.client_env() {
                let expected = match value {
                    ClientEnv::BaseUrl(path) => format!("http://127.0.0.1:4567{path}"),
                    ClientEnv::Fixed(v) => (*v).to_owned(),
                };
                assert!(
                    env.iter().any(|(n, v)| n == name && *v == expected),
                    "{name} for {}",
                    d.name()
                );
            }
        }
        let from_table: usize = {
            let mut all: Vec<&str> = DialectKind::ALL
                .iter()
                .flat_map(|d| d.client_env().iter().map(|(n, _)| *n))
                .collect();
            all.sort_unstable();
            all.dedup();
            all.len()
        };
        // SSE_REPLAY_URL, the two spellings of NO_PROXY and the ambient-credential blockers are
        // the harness's own.
        assert_eq!(env.len(), from_table + 3 + NO_AMBIENT_CREDENTIALS.len());
        for (name, value) in NO_AMBIENT_CREDENTIALS {
            assert!(env.contains(&(name, (*value).to_owned())), "{name}");
        }
        assert!(env.contains(&("OPENAI_BASE_URL", "http://127.0.0.1:4567/v1".into())));
        assert!(env.contains(&("CO_API_URL", "http://127.0.0.1:4567".into())));
        // Azure OpenAI's clients (the OpenAI SDKs' `AzureOpenAI`, LangChain's, LiteLLM's
        // `azure/`) read their endpoint from the environment: the caller's real one must not
        // pass through, as its key would be the next thing asked for.
        assert!(env.contains(&("AZURE_OPENAI_ENDPOINT", "http://127.0.0.1:4567".into())));
    }
}
