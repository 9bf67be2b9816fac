//! `check` at scale: `export`, `check --no-preview`, `check` and `check --json`
//! as child processes on the generated benchmark stream at two sizes (200 calls, about 22.6 MB,
//! and 2,000 calls, about 227 MB / 680,000 events), medians of 3 runs: wall time, peak RSS
//! (`VmHWM`), and the ratios to read (each figure against `export`'s in the same run,
//! `check` against `check --no-preview`, the large size against the small one). Measured, not
//! asserted: the machine's load moves the times, so the ratios are what to read.
//!
//! Run: `cargo bench --no-default-features --bench check_scale`. `BENCH_SMALL` / `BENCH_LARGE`
//! give existing files instead of generating them (e.g. `BENCH_LARGE=/tmp/big.sse`);
//! `BENCH_RUNS` the runs per figure (3).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a bench reports its figures on standard output"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The generated stream with `calls` calls (written once into the bench's temporary folder).
fn stream(env: &str, calls: usize) -> PathBuf {
    if let Ok(p) = std::env::var(env) {
        return PathBuf::from(p);
    }
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("large-{calls}.sse"));
    if !path.exists() {
        let f = std::fs::File::create(&path).expect("create bench file");
        sse_replay_core::generate::write_large(std::io::BufWriter::new(f), calls)
            .expect("generate");
    }
    path
}

/// Wall time and peak RSS (KiB) of one child process.
fn run(args: &[&str], path: &Path) -> (Duration, u64) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sse-replay"));
    // Past the default input limit (32 MiB): the large stream is 227 MB.
    cmd.args(args)
        .arg(path)
        .args(["--max-input-bytes", "4G"])
        .stderr(Stdio::null());
    let (peak, wall, _) = common::child_peak_rss_kib(&mut cmd);
    (wall, peak)
}

fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

const COMMANDS: [(&str, &[&str]); 4] = [
    ("export", &["export"]),
    ("check --no-preview", &["check", "--no-preview"]),
    ("check", &["check"]),
    ("check --json", &["check", "--json"]),
];

/// Median seconds and MB of each command on `path`, the runs of each command interleaved with
/// the others' so a change in the machine's load touches all of them alike.
fn measure(path: &Path, runs: usize) -> Vec<(f64, f64)> {
    let mut times = vec![Vec::new(); COMMANDS.len()];
    let mut rss = vec![Vec::new(); COMMANDS.len()];
    for _ in 0..runs {
        for (i, (_, args)) in COMMANDS.iter().enumerate() {
            let (t, kib) = run(args, path);
            times[i].push(t.as_secs_f64());
            rss[i].push(kib as f64 / 1024.0);
        }
    }
    times
        .into_iter()
        .zip(rss)
        .map(|(t, r)| (median(t), median(r)))
        .collect()
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let small = stream("BENCH_SMALL", 200);
    let large = stream("BENCH_LARGE", 2000);
    let mb = |p: &Path| std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6);
    let (s, l) = (measure(&small, runs), measure(&large, runs));
    println!(
        "medians of {runs}; small {:.1} MB, large {:.1} MB",
        mb(&small),
        mb(&large)
    );
    println!(
        "| command | small s | small MB | large s | large MB | large ÷ export (time) | large ÷ small (time, MB) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (i, (name, _)) in COMMANDS.iter().enumerate() {
        println!(
            "| `{name}` | {:.2} | {:.0} | {:.2} | {:.0} | {:.2}× | {:.1}×, {:.1}× |",
            s[i].0,
            s[i].1,
            l[i].0,
            l[i].1,
            l[i].0 / l[0].0,
            l[i].0 / s[i].0,
            l[i].1 / s[i].1
        );
    }
    println!(
        "check ÷ check --no-preview: small {:.2}×, large {:.2}×",
        s[2].0 / s[1].0,
        l[2].0 / l[1].0
    );
}
