//! `check` on many small calls: each call arrives whole in one event, so the
//! work per call is constant and the total must grow linearly. It used to be quadratic (20k calls
//! 0.66 s, 40k 2.2 s, 80k 8.0 s; 300k did not finish in 60 s). Measured, not asserted.
//!
//! Run: `cargo bench --no-default-features --bench check_many_calls`
//! (`BENCH_CALLS=300000` is the default top size; `BENCH_STEPS=4` sizes, each half the next).
//! Prints, for each size, the in-process analysis + text report time and its time per call (flat
//! when linear), then `sse-replay check` and `check --json` as child processes on the top size:
//! wall time and peak RSS.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a bench reports its figures on standard output"
)]

mod common;
use common::child_peak_rss_kib;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn generate(dir: &Path, calls: usize) -> PathBuf {
    let path = dir.join(format!("one-event-calls-{calls}.sse"));
    if !path.exists() {
        let f = std::fs::File::create(&path).expect("create bench file");
        sse_replay_core::generate::write_one_event_calls(std::io::BufWriter::new(f), calls)
            .expect("generate");
    }
    path
}

/// The work `check` does: load, analyse, render the text report.
fn check_in_process(path: &Path) -> (usize, Duration) {
    let t = Instant::now();
    let a = sse_replay_core::probe::open(path, Default::default())
        .expect("open")
        .analyse(true)
        .expect("analyse");
    let text = sse_replay_core::report::check_text(&a);
    std::hint::black_box(text.len());
    (a.calls.len(), t.elapsed())
}

fn main() {
    let top: usize = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let steps: u32 = std::env::var("BENCH_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let mut base: Option<f64> = None;
    for k in (0..steps).rev() {
        let calls = top >> k;
        let path = generate(&dir, calls);
        let mb = std::fs::metadata(&path).expect("stat").len() as f64 / 1e6;
        let (n, t) = check_in_process(&path);
        assert_eq!(n, calls, "every call found");
        let per_call_us = t.as_secs_f64() * 1e6 / calls as f64;
        let ratio = per_call_us / *base.get_or_insert(per_call_us);
        println!(
            "{calls:>8} calls ({mb:>5.1} MB): analysis + report {:>8.1} ms, {per_call_us:.2} µs/call ({ratio:.2}× the smallest size's)",
            t.as_secs_f64() * 1e3
        );
    }
    let path = generate(&dir, top);
    let exe = env!("CARGO_BIN_EXE_sse-replay");
    for extra in [None, Some("--json")] {
        let mut cmd = std::process::Command::new(exe);
        // Past the default input limit (32 MiB): the point is to measure the large size.
        cmd.args([
            "check",
            path.to_str().unwrap_or(""),
            "--max-input-bytes",
            "4G",
        ])
        .args(extra);
        let (rss, wall, code) = child_peak_rss_kib(&mut cmd);
        println!(
            "sse-replay check{} (child process) on {top} calls: exit {code:?}, wall {:.2} s (target <= 20 s), peak RSS {:.1} MB",
            extra.map_or(String::new(), |e| format!(" {e}")),
            wall.as_secs_f64(),
            rss as f64 / 1024.0
        );
    }
}
