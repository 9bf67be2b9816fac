//! `export` against a bare reference loop, on the large generated stream (2,000 calls, two
//! interleaved at a time, ~680,000 events, ~227 MB).
//!
//! The reference does no SSE compliance work: memchr line splitting, `data: ` prefix, serde_json
//! into a borrowed struct of only the needed fields, index-keyed append, one parse per call. The
//! contender is the real `export` path (`Probe::stream_calls`, lean pipeline: WHATWG SSE parser,
//! dialect with every quirk, accumulator). Both read the file in 256 KiB blocks.
//!
//! Run: `cargo bench --no-default-features --bench export_vs_reference`
//! (`BENCH_CALLS=200` for a quick run; `BENCH_ROUNDS=N` rounds, default 5). Prints MB/s for both,
//! the ratio of medians, and the peak RSS of `sse-replay export` run as a child process.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a bench reports its figures on standard output"
)]

mod common;
use common::child_peak_rss_kib;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

#[derive(Deserialize)]
struct RefChunk<'a> {
    #[serde(borrow)]
    choices: Vec<RefChoice<'a>>,
}

#[derive(Deserialize)]
struct RefChoice<'a> {
    #[serde(borrow, default)]
    delta: Option<RefDelta<'a>>,
}

#[derive(Deserialize)]
struct RefDelta<'a> {
    #[serde(borrow, default)]
    tool_calls: Option<Vec<RefToolCall<'a>>>,
}

#[derive(Deserialize)]
struct RefToolCall<'a> {
    index: u64,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<RefFunction<'a>>,
}

#[derive(Deserialize)]
struct RefFunction<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Default)]
struct RefCall {
    id: String,
    name: String,
    args: String,
}

fn handle_line(line: &[u8], calls: &mut HashMap<u64, RefCall>, order: &mut Vec<u64>) {
    let Some(data) = line.strip_prefix(b"data: ") else {
        return;
    };
    if data == b"[DONE]" {
        return;
    }
    let Ok(chunk) = serde_json::from_slice::<RefChunk<'_>>(data) else {
        return;
    };
    for choice in chunk.choices {
        for tc in choice.delta.and_then(|d| d.tool_calls).unwrap_or_default() {
            let slot = calls.entry(tc.index).or_insert_with(|| {
                order.push(tc.index);
                RefCall::default()
            });
            if let Some(id) = tc.id {
                slot.id = id.into_owned();
            }
            if let Some(f) = tc.function {
                if let Some(n) = f.name {
                    slot.name = n.into_owned();
                }
                if let Some(a) = f.arguments {
                    slot.args.push_str(&a);
                }
            }
        }
    }
}

/// The bare reference loop. Returns the number of calls that parsed.
fn reference(path: &Path) -> usize {
    let mut file = std::fs::File::open(path).expect("bench file");
    let mut buf = vec![0u8; 256 * 1024];
    let mut carry: Vec<u8> = Vec::new();
    let mut calls: HashMap<u64, RefCall> = HashMap::new();
    let mut order = Vec::new();
    loop {
        let n = file.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        let mut rest = &buf[..n];
        while let Some(i) = memchr::memchr(b'\n', rest) {
            if carry.is_empty() {
                handle_line(&rest[..i], &mut calls, &mut order);
            } else {
                carry.extend_from_slice(&rest[..i]);
                let line = std::mem::take(&mut carry);
                handle_line(&line, &mut calls, &mut order);
            }
            rest = &rest[i + 1..];
        }
        carry.extend_from_slice(rest);
    }
    order
        .iter()
        .filter_map(|i| calls.get(i))
        .filter(|c| {
            serde_json::from_str::<serde_json::Value>(&c.args).is_ok()
                && !c.name.is_empty()
                && !c.id.is_empty()
        })
        .count()
}

fn contender(path: &Path) -> usize {
    let mut parsed = 0;
    sse_replay_core::probe::open(path, Default::default())
        .expect("open")
        .stream_calls(|c| parsed += usize::from(c.value().is_some()))
        .expect("export pass");
    parsed
}

/// The fastest round: the least disturbed by other processes on a shared machine.
fn best(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let calls: usize = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("large-{calls}.sse"));
    if !path.exists() {
        let f = std::fs::File::create(&path).expect("create bench file");
        sse_replay_core::generate::write_large(std::io::BufWriter::new(f), calls)
            .expect("generate");
    }
    let bytes = std::fs::metadata(&path).expect("stat").len();
    let mb = bytes as f64 / 1e6;
    println!("input: {} ({:.1} MB, {calls} calls)", path.display(), mb);

    // Warm the page cache and check both agree.
    let (r, c) = (reference(&path), contender(&path));
    assert_eq!(r, calls, "reference parsed every call");
    assert_eq!(c, calls, "export parsed every call");

    let (mut tr, mut tc) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        std::hint::black_box(reference(&path));
        tr.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(contender(&path));
        tc.push(t.elapsed());
    }
    let (br, bc) = (best(&tr), best(&tc));
    let (mr, mc) = (median(tr.clone()), median(tc.clone()));
    println!(
        "reference loop : {:>8.1} ms  {:>7.1} MB/s",
        mr.as_secs_f64() * 1e3,
        mb / mr.as_secs_f64()
    );
    println!(
        "export pipeline: {:>8.1} ms  {:>7.1} MB/s",
        mc.as_secs_f64() * 1e3,
        mb / mc.as_secs_f64()
    );
    println!(
        "ratio export/reference: {:.3} of medians, {:.3} of best rounds (target <= 1.25)",
        mc.as_secs_f64() / mr.as_secs_f64(),
        bc.as_secs_f64() / br.as_secs_f64()
    );

    let exe = env!("CARGO_BIN_EXE_sse-replay");
    let (rss, wall, _) = child_peak_rss_kib(std::process::Command::new(exe).args([
        "export",
        path.to_str().unwrap_or(""),
        "-o",
        "/dev/null",
        // The 227 MB stream is past the default input limit (32 MiB).
        "--max-input-bytes",
        "4G",
    ]));
    println!(
        "sse-replay export (child process): peak RSS {:.1} MB, wall {:.0} ms (target <= 64 MB)",
        rss as f64 / 1024.0,
        wall.as_secs_f64() * 1e3
    );
}
