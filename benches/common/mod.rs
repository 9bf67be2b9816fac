//! Shared by the benches (`mod common;`): measuring a child process.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` (its stdout discarded) and returns its peak RSS in KiB, its wall time and its exit
/// code. The peak is `VmHWM`, polled from /proc every 2 ms until the child exits (wait4's
/// `ru_maxrss` is no good here: exec records the forking parent's high-water mark into it, so the
/// bench's own memory would be counted).
pub fn child_peak_rss_kib(cmd: &mut Command) -> (u64, Duration, Option<i32>) {
    let t = Instant::now();
    let mut child = cmd.stdout(Stdio::null()).spawn().expect("spawn sse-replay");
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let status = loop {
        let hwm = std::fs::read_to_string(&status_path).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        });
        peak = peak.max(hwm.unwrap_or(0));
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    (peak, t.elapsed(), status.code())
}
