//! `scan` at scale: a generated corpus of small captures (1,000 and 10,000, `generate-corpus`)
//! and the 227 MB stream (`generate-large`, 2,000 calls), medians of 3 runs of child processes.
//!
//! - throughput: `scan -o DIR` (Parquet) at `-j 1` and `-j 2`, in files/s and MB/s, wall and CPU
//!   time, and the speed-up from one worker to two;
//! - the per-stream cost against `export`'s on the same inputs: measured in this process, one
//!   thread, file by file — `scan`'s analysis and rows ([`sse_replay_core::scan::scan_file`])
//!   against `export`'s lean pass ([`sse_replay_core::open::stream_each`] writing the calls to
//!   nowhere) — so process start-up is in neither; for the 227 MB stream, as child processes
//!   (`scan -j 1` against `export`);
//! - peak RSS (`VmHWM`) of `scan -j 2` on 1,000 and on 10,000 files: it must not grow with the
//!   number of files.
//!
//! Measured, not asserted: the machine's load moves the times (the load average is printed with
//! the figures). Run: `cargo bench --no-default-features --bench scan`. `BENCH_RUNS` sets the runs
//! per figure (3); `BENCH_LARGE` an existing 227 MB stream; `BENCH_CORPUS` an existing folder of
//! 10,000 captures.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a bench reports its figures on standard output"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sse-replay");

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// A corpus of `n` captures (seed 21), generated once into the bench's temporary folder.
fn corpus(n: u64) -> PathBuf {
    if n == 10_000
        && let Ok(p) = std::env::var("BENCH_CORPUS")
    {
        return PathBuf::from(p);
    }
    let dir = tmp().join(format!("corpus-{n}"));
    let count = std::fs::read_dir(&dir).map_or(0, |d| d.count() as u64);
    if count != n {
        std::fs::remove_dir_all(&dir).ok();
        let st = Command::new(BIN)
            .args([
                "generate-corpus",
                "--count",
                &n.to_string(),
                "--seed",
                "21",
                "-o",
            ])
            .arg(&dir)
            .status()
            .expect("generate-corpus");
        assert!(st.success());
    }
    dir
}

/// The 227 MB stream (2,000 calls), generated once (the same file `check_scale` uses).
fn large() -> PathBuf {
    if let Ok(p) = std::env::var("BENCH_LARGE") {
        return PathBuf::from(p);
    }
    let path = tmp().join("large-2000.sse");
    if !path.exists() {
        let f = std::fs::File::create(&path).expect("create bench file");
        sse_replay_core::generate::write_large(std::io::BufWriter::new(f), 2000).expect("generate");
    }
    path
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    sse_replay_core::scan::walk(dir, true, &mut |f| {
        if let sse_replay_core::scan::Found::File(p) = f {
            v.push(p);
        }
        true
    });
    v
}

fn bytes_of(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum()
}

/// One child process: wall time, CPU time (user + system, from /proc while it runs) and peak RSS
/// (KiB).
struct Run {
    wall: f64,
    cpu: f64,
    peak_kib: u64,
}

fn run(args: &[&str], paths: &[&Path]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .args(paths)
        .stderr(Stdio::null())
        .stdout(Stdio::null());
    let ticks = 100.0; // USER_HZ on Linux
    let t = Instant::now();
    let mut child = cmd.spawn().expect("spawn sse-replay");
    let (status_path, stat_path) = (
        format!("/proc/{}/status", child.id()),
        format!("/proc/{}/stat", child.id()),
    );
    let (mut peak, mut cpu) = (0u64, 0.0f64);
    loop {
        if let Ok(s) = std::fs::read_to_string(&status_path)
            && let Some(v) = s.lines().find_map(|l| l.strip_prefix("VmHWM:"))
        {
            peak = peak.max(v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0));
        }
        if let Ok(s) = std::fs::read_to_string(&stat_path)
            && let Some((_, rest)) = s.rsplit_once(')')
        {
            // Fields after the command: state is 3rd overall; utime and stime are 14th and 15th.
            let f: Vec<&str> = rest.split_whitespace().collect();
            let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
            cpu = cpu.max((t(11) + t(12)) / ticks);
        }
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Run {
        wall: t.elapsed().as_secs_f64(),
        cpu,
        peak_kib: peak,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Medians of `runs` runs of each command, the runs interleaved so a change of load touches
/// every command alike.
fn measure(cmds: &[(Vec<&str>, Vec<&Path>)], runs: usize) -> Vec<(f64, f64, f64)> {
    let mut all: Vec<Vec<Run>> = cmds.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs {
        for (i, (args, paths)) in cmds.iter().enumerate() {
            let out = tmp().join("scan-bench-out");
            std::fs::remove_dir_all(&out).ok();
            let o = out.to_string_lossy().into_owned();
            let mut a = args.clone();
            if a.first() == Some(&"scan") {
                a.extend(["-o", o.as_str()]);
            }
            all[i].push(run(&a, paths));
        }
    }
    all.into_iter()
        .map(|r| {
            (
                median(r.iter().map(|x| x.wall).collect()),
                median(r.iter().map(|x| x.cpu).collect()),
                median(r.iter().map(|x| x.peak_kib as f64 / 1024.0).collect()),
            )
        })
        .collect()
}

/// CPU seconds per stream in this process, one thread: scan's analysis and rows, and export's
/// lean pass, on the same files (each measured `runs` times; the median).
fn per_stream_in_process(files: &[PathBuf], runs: usize) -> (f64, f64) {
    let options = sse_replay_core::scan::ScanOptions::default();
    let mut scan_t = Vec::new();
    let mut export_t = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut rows = 0usize;
        for p in files {
            let name = p.display().to_string();
            rows += sse_replay_core::scan::scan_file(p, &name, &options, |r| {
                std::hint::black_box(&r);
            });
        }
        scan_t.push(t.elapsed().as_secs_f64() / rows.max(1) as f64);
        let t = Instant::now();
        for p in files {
            let mut w = sse_replay_core::export::CallWriter::new(
                std::io::sink(),
                sse_replay_core::export::Format::Json,
            );
            if let Ok(probe) = sse_replay_core::probe::open(p, Default::default()) {
                probe
                    .stream_calls(|c| {
                        w.call(&c).ok();
                    })
                    .ok();
            }
            w.finish().ok();
        }
        export_t.push(t.elapsed().as_secs_f64() / files.len().max(1) as f64);
    }
    (median(scan_t), median(export_t))
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let (c1k, c10k, big) = (corpus(1000), corpus(10_000), large());
    let files10k = files_in(&c10k);
    let mb10k = bytes_of(&files10k) as f64 / 1e6;
    let mb_big = bytes_of(std::slice::from_ref(&big)) as f64 / 1e6;
    println!("load average before: {}", load());

    let small = measure(
        &[
            (vec!["scan", "-j", "1"], vec![c10k.as_path()]),
            (vec!["scan", "-j", "2"], vec![c10k.as_path()]),
            (vec!["scan", "-j", "2"], vec![c1k.as_path()]),
        ],
        runs,
    );
    let n = files10k.len() as f64;
    println!(
        "\n10,000 captures ({n} files, {mb10k:.1} MB), scan -o DIR (Parquet), medians of {runs}:"
    );
    println!("| run | wall s | CPU s | files/s | MB/s | peak RSS MB |");
    println!("|---|---|---|---|---|---|");
    for (label, (w, c, m)) in [("-j 1", small[0]), ("-j 2", small[1])] {
        println!(
            "| `scan {label}` | {w:.2} | {c:.2} | {:.0} | {:.1} | {m:.0} |",
            n / w,
            mb10k / w
        );
    }
    println!("speed-up -j 1 → -j 2: {:.2}×", small[0].0 / small[1].0);
    println!(
        "peak RSS, scan -j 2: 1,000 files {:.1} MB, 10,000 files {:.1} MB",
        small[2].2, small[1].2
    );

    let sample: Vec<PathBuf> = files10k.iter().step_by(10).cloned().collect();
    let (scan_s, export_s) = per_stream_in_process(&sample, runs);
    println!(
        "\nper stream, in process, one thread, {} captures: scan {:.0} µs, export {:.0} µs: {:.2}× export",
        sample.len(),
        scan_s * 1e6,
        export_s * 1e6,
        scan_s / export_s
    );

    let bigr = measure(
        &[
            (vec!["export"], vec![big.as_path()]),
            (vec!["scan", "-j", "1"], vec![big.as_path()]),
            (vec!["scan", "-j", "2"], vec![big.as_path()]),
        ],
        runs,
    );
    println!("\nthe {mb_big:.0} MB stream, medians of {runs}:");
    println!("| run | wall s | CPU s | MB/s | peak RSS MB | wall ÷ export | CPU ÷ export |");
    println!("|---|---|---|---|---|---|---|");
    for (label, r) in [
        ("export", bigr[0]),
        ("scan -j 1", bigr[1]),
        ("scan -j 2", bigr[2]),
    ] {
        println!(
            "| `{label}` | {:.2} | {:.2} | {:.0} | {:.0} | {:.2}× | {:.2}× |",
            r.0,
            r.1,
            mb_big / r.0,
            r.2,
            r.0 / bigr[0].0,
            r.1 / bigr[0].1
        );
    }
    println!("\nload average after: {}", load());
    std::fs::remove_dir_all(tmp().join("scan-bench-out")).ok();
}
