//! Every framer is linear in its input: the time per byte at 8 MiB is at most a few times the
//! time per byte at 1 MiB, on adversarial bodies for each (a quadratic framer gives about 8×).
//! Times are compared, never asserted absolutely, so a loaded machine or a debug build only
//! makes both slower; each size is measured more than once and the best time kept.

use std::time::{Duration, Instant};

use sse_replay_core::aws_eventstream::{crc32, event_frame};
use sse_replay_core::framing::{Framed, Framer, Framing};
use sse_replay_core::limits::EventLimit;

const MIB: usize = 1 << 20;

/// Reads of this size feed the framer: odd, so no structure lines up with them.
const READ: usize = 4093;

/// Under this, an 8 MiB run is too short to compare: where a framer does little more than copy
/// (one long line), the page faults and cache misses of its larger buffers, not the framer,
/// decide the ratio. A quadratic framer takes seconds there (25 ns a byte would be 200 ms).
const TOO_FAST_TO_TELL: Duration = Duration::from_millis(200);

/// One adversarial body: its name, the framing forced (`None`: detected), and how to build it
/// at a given size.
struct Case {
    name: &'static str,
    framing: Option<Framing>,
    build: fn(usize) -> Vec<u8>,
}

/// A valid prelude (good CRC) claiming a frame of `total` bytes with no headers.
fn prelude(total: u32) -> [u8; 12] {
    let mut p = [0u8; 12];
    p[..4].copy_from_slice(&total.to_be_bytes());
    let crc = crc32(&p[..8]);
    p[8..].copy_from_slice(&crc.to_be_bytes());
    p
}

fn pseudo_random(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| rng.u8(..)).collect()
}

/// Repeats `unit` up to exactly `n` bytes.
fn repeat(unit: &[u8], n: usize) -> Vec<u8> {
    unit.iter().copied().cycle().take(n).collect()
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "aws: garbage",
            framing: Some(Framing::AwsEventStream),
            build: |n| pseudo_random(n, 1),
        },
        Case {
            name: "aws: near-valid preludes with bad CRCs",
            framing: Some(Framing::AwsEventStream),
            build: |n| {
                let mut p = prelude(100);
                p[11] ^= 1;
                repeat(&p, n)
            },
        },
        Case {
            // Each valid prelude claims the rest of the body, and its message CRC fails: the
            // next frame is looked for inside the claim, where the next such prelude is.
            name: "aws: nested claims with bad message CRCs",
            framing: Some(Framing::AwsEventStream),
            build: |n| {
                let mut out = Vec::with_capacity(n);
                while out.len() + 1024 <= n {
                    let total = (n - out.len()) as u32;
                    out.extend_from_slice(&prelude(total));
                    out.extend_from_slice(&[0x55; 1012]);
                }
                out.resize(n, 0);
                out
            },
        },
        Case {
            name: "aws: a huge declared length",
            framing: Some(Framing::AwsEventStream),
            build: |n| {
                let mut out = prelude((EventLimit::DEFAULT.bytes() - 1) as u32).to_vec();
                out.extend(pseudo_random(n - 12, 2));
                out
            },
        },
        Case {
            name: "aws: many small frames",
            framing: Some(Framing::AwsEventStream),
            build: |n| {
                let f = event_frame("contentBlockDelta", br#"{"contentBlockIndex":1}"#);
                repeat(&f, n)
            },
        },
        Case {
            name: "sse: one long line",
            framing: Some(Framing::Sse),
            build: |n| {
                let mut out = b"data: ".to_vec();
                out.resize(n, b'x');
                out
            },
        },
        Case {
            name: "sse: many tiny events",
            framing: Some(Framing::Sse),
            build: |n| repeat(b"data:x\n\n", n),
        },
        Case {
            name: "sse: one event of many data lines",
            framing: Some(Framing::Sse),
            build: |n| repeat(b"data:x\n", n),
        },
        Case {
            name: "jsonl: one long line",
            framing: Some(Framing::JsonLines),
            build: |n| {
                let mut out = b"{\"a\":\"".to_vec();
                out.resize(n, b'x');
                out
            },
        },
        Case {
            name: "jsonl: many tiny lines",
            framing: Some(Framing::JsonLines),
            build: |n| repeat(b"{}\n", n),
        },
        Case {
            name: "json-array: [{},{},…",
            framing: Some(Framing::JsonArray),
            build: |n| {
                let mut out = b"[".to_vec();
                out.extend(repeat(b"{},", n - 1));
                out
            },
        },
        Case {
            name: "json-array: deep nesting",
            framing: Some(Framing::JsonArray),
            build: |n| {
                let mut out = b"[".to_vec();
                out.extend(repeat(b"[", n - 1));
                out
            },
        },
        Case {
            name: "json-array: one long string",
            framing: Some(Framing::JsonArray),
            build: |n| {
                let mut out = b"[\"".to_vec();
                out.extend(repeat(b"ab\\\"", n - 2));
                out
            },
        },
        Case {
            // Blank bytes keep the framing undecided (up to the event limit).
            name: "detected: a long blank prefix",
            framing: None,
            build: |n| {
                let mut out = repeat(b" \n", n - 2);
                out.extend_from_slice(b"{}");
                out
            },
        },
    ]
}

/// The time to frame `body` read by read.
fn time_to_frame(body: &[u8], framing: Option<Framing>) -> Duration {
    let start = Instant::now();
    let mut f = Framer::with_max_event_bytes(framing, EventLimit::DEFAULT);
    let mut items = 0u64;
    let mut sink = |i: Framed<'_>| {
        items += 1;
        std::hint::black_box(i.span());
    };
    for read in body.chunks(READ) {
        f.feed(read, &mut sink);
    }
    std::hint::black_box(f.finish(&mut sink));
    std::hint::black_box(items);
    start.elapsed()
}

#[test]
fn every_framer_takes_linear_time_on_adversarial_input() {
    let mut report = Vec::new();
    for case in cases() {
        let (small, large) = ((case.build)(MIB), (case.build)(8 * MIB));
        assert_eq!((small.len(), large.len()), (MIB, 8 * MIB), "{}", case.name);
        // A loaded machine can stall one run: a case that looks slow is measured again.
        let mut ratio = f64::INFINITY;
        for _ in 0..3 {
            let t1 = time_to_frame(&small, case.framing).as_secs_f64().max(1e-6);
            let t8 = time_to_frame(&large, case.framing);
            let linear = t8 < TOO_FAST_TO_TELL;
            let t8 = t8.as_secs_f64();
            ratio = ratio.min(if linear { 0.0 } else { t8 / 8.0 / t1 });
            report.push(format!(
                "{}: 1 MiB {:.1} ms, 8 MiB {:.1} ms, per-byte ratio {:.2}",
                case.name,
                t1 * 1e3,
                t8 * 1e3,
                t8 / 8.0 / t1
            ));
            eprintln!("{}", report.last().map(String::as_str).unwrap_or(""));
            if ratio <= 3.0 {
                break;
            }
        }
        assert!(
            ratio <= 3.0,
            "{}: the time per byte grows with the input\n{}",
            case.name,
            report.join("\n")
        );
    }
}
