//! Helpers shared by the integration tests (`use crate::common;` in each module that needs them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use crate::data::analyse_raw;

/// The `sse-replay` binary built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_sse-replay");

/// The crate root (`CARGO_MANIFEST_DIR`): where `recordings/` and `tests/` live.
pub fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `Command` for the binary, run in `dir`.
pub fn bin_in(dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(dir);
    c
}

/// A `Command` for the binary, run in the crate root.
pub fn bin() -> Command {
    bin_in(&manifest())
}

/// A finished process's standard error, lossily decoded.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A finished process's standard output, lossily decoded.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A finished process's exit code (-1 when a signal ended it).
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Run the binary with `args` in `dir` to the end, colour off.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin_in(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"))
}

/// Run the binary with `args` in the crate root to the end, colour off.
pub fn run(args: &[&str]) -> Output {
    run_in(&manifest(), args)
}

/// Run the binary with `args` in `dir`, standard input closed and `env` added, killing it (and
/// failing) after `limit`. Output is collected after the exit, so it must be small.
pub fn run_env(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> Output {
    use std::process::Stdio;
    let mut cmd = bin_in(dir);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let kid = Kid(cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}")));
    wait_bounded(kid, &format!("sse-replay {args:?}"), limit)
}

/// Write `body` to `dir/name` and return the path.
pub fn write(dir: &Path, name: &str, body: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write");
    p
}

/// Assert that `actual` equals the insta snapshot `tests/snapshots/<name>.snap`.
///
/// A mismatch fails the test; where insta writes is its own business: `auto` (the default) writes
/// `<name>.snap.new` beside it for `cargo insta review`, except under `CI=true`, where nothing is
/// written and a missing snapshot fails too; `INSTA_UPDATE=always` rewrites the `.snap` itself.
///
/// insta compares a snapshot with its trailing whitespace trimmed and CRLF read as LF, so the
/// exactness the plain-file snapshots had is kept by asserting here what the `.snap` cannot hold:
/// the text ends with exactly one newline and has no CR and no leading blank line.
pub fn assert_snapshot(name: &str, actual: &str) {
    assert!(
        actual.ends_with('\n')
            && !actual.ends_with("\n\n")
            && !actual.starts_with('\n')
            && !actual.contains('\r'),
        "{name}: a snapshotted text ends with exactly one newline, and has no CR and no leading \
         blank line; got {:?}",
        actual
    );
    let mut settings = insta::Settings::clone_current();
    // One flat directory named by the snapshot, whichever test file asserts it.
    settings.set_snapshot_path(manifest().join("tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, actual));
}

/// [`assert_snapshot`] for every `(name, text)`, then one failure naming every mismatch (each
/// mismatch's diff is printed as it is found), rather than stopping at the first.
pub fn assert_snapshots(snapshots: impl IntoIterator<Item = (String, String)>) {
    let mut failed = Vec::new();
    for (name, text) in snapshots {
        let outcome = std::panic::catch_unwind(|| assert_snapshot(&name, &text));
        if outcome.is_err() {
            failed.push(name);
        }
    }
    assert!(
        failed.is_empty(),
        "{} snapshot(s) differ: {}",
        failed.len(),
        failed.join(", ")
    );
}

/// A child process killed (SIGKILL) and reaped on drop, so a failing test leaves no process.
pub struct Kid(pub std::process::Child);

impl Drop for Kid {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

impl Kid {
    /// Sends `signal` (e.g. "TERM") with kill(1).
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{signal}"), &self.0.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill -{signal} failed");
    }

    /// Waits (bounded) for the process to exit; its exit code.
    pub fn wait_exit(&mut self, limit: std::time::Duration) -> Option<i32> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(s) = self.0.try_wait().expect("wait") {
                return s.code();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "did not exit within {limit:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Peak resident memory (VmHWM, KiB) of the process, polled until it exits (at most
    /// `limit`), and its exit code.
    pub fn peak_rss_until_exit(&mut self, limit: std::time::Duration) -> (u64, Option<i32>) {
        let started = std::time::Instant::now();
        let mut peak = 0;
        loop {
            if let Some(kib) = self.peak_rss_kib() {
                peak = peak.max(kib);
            }
            if let Some(s) = self.0.try_wait().expect("wait") {
                return (peak, s.code());
            }
            assert!(started.elapsed() < limit, "still running after {limit:?}");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Peak resident memory (VmHWM) in KiB, from /proc (Linux).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

/// Waits for `kid` at most `limit` (panics naming `what` after that) and collects its output,
/// read while it runs (so a child that writes more than a pipe holds is not stuck on a full pipe).
pub fn wait_bounded(mut kid: Kid, what: &str, limit: std::time::Duration) -> Output {
    fn drain(
        pipe: Option<impl std::io::Read + Send + 'static>,
    ) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                p.read_to_end(&mut buf).ok();
            }
            buf
        })
    }
    let stdout = drain(kid.0.stdout.take());
    let stderr = drain(kid.0.stderr.take());
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = kid.0.try_wait().expect("wait") {
            return Output {
                status,
                stdout: stdout.join().expect("stdout reader"),
                stderr: stderr.join().expect("stderr reader"),
            };
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not finish within {limit:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Reads an HTTP request head byte by byte up to its blank line (never into the body): the head,
/// lossily decoded, and its `content-length` (0 when absent or unreadable).
pub fn read_request_head(sock: &mut impl std::io::Read) -> (String, usize) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && sock.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0);
    (head, len)
}

/// An upstream on 127.0.0.1:0 that answers every request with `head` (status line and header
/// lines, without the blank line) plus `content-length` and `connection: close`, then `body`.
/// Sends each request it read (head and body, lossily decoded). Returns `http://127.0.0.1:PORT`.
pub fn canned_upstream(
    head: &'static str,
    body: &'static str,
) -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            sock.set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .ok();
            let (text, len) = read_request_head(&mut sock);
            let mut request_body = vec![0u8; len.min(1 << 20)];
            sock.read_exact(&mut request_body).ok();
            tx.send(format!("{text}{}", String::from_utf8_lossy(&request_body)))
                .ok();
            write!(
                sock,
                "{head}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .ok();
        }
    });
    (format!("http://127.0.0.1:{port}"), rx)
}

/// Starts `sse-replay ARGS` (a `serve` or `proxy`), which prints `listening on http://ADDR/`
/// first; returns the child, that URL and a receiver of its later standard output lines.
pub fn start_server(args: &[&str]) -> (Kid, String, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead as _;
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let kid = Kid(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the server printed nothing");
    let url = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    (kid, url, rx)
}
