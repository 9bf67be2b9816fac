//! The AWS event stream decoder (Bedrock's binary frames): random bytes, and frames built from
//! random headers and payloads with correct CRCs (then perhaps damaged), fed in random splits must
//! give exactly what one feed gives (frames with their spans, headers and payloads, corrupt
//! stretches, the cut at the end, the overflow), every byte accounted for, and never panic; the
//! whole pipeline over them must not panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sse_replay_core::aws_eventstream::{Cut, Decoded, Decoder, crc32};
use sse_replay_core::sse::Overflow;

#[derive(Debug, PartialEq, Eq)]
enum Item {
    Frame(std::ops::Range<u64>, Vec<(String, String)>, Vec<u8>),
    Corrupt(std::ops::Range<u64>, String),
}

fn run(body: &[u8], cuts: &[usize], limit: u64) -> (Vec<Item>, Option<Cut>, Option<Overflow>) {
    let mut d = Decoder::with_max_frame_bytes(limit);
    let mut items = Vec::new();
    let mut sink = |x: Decoded<'_>| {
        items.push(match x {
            Decoded::Frame(f) => Item::Frame(
                f.span.clone(),
                f.headers()
                    .map(|h| (h.name.to_owned(), h.value.to_string()))
                    .collect(),
                f.payload.to_vec(),
            ),
            Decoded::Corrupt(e) => Item::Corrupt(e.span.clone(), e.to_string()),
        })
    };
    let mut start = 0;
    for &c in cuts.iter().chain(std::iter::once(&body.len())) {
        d.feed(&body[start..c], &mut sink);
        start = c;
    }
    let cut = d.finish(&mut sink);
    (items, cut, d.overflow())
}

/// A frame around raw header bytes and a payload, with correct CRCs.
fn raw_frame(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = (16 + headers.len() + payload.len()) as u32;
    let mut out = total.to_be_bytes().to_vec();
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out
}

fuzz_target!(|data: &[u8]| {
    // 8 bytes seed the split points, one chooses the mode; the rest is the stream (or the
    // material frames are built from).
    if data.len() < 9 {
        return;
    }
    let (seed, rest) = data.split_at(8);
    let (mode, rest) = rest.split_at(1);
    let mut state = u64::from_le_bytes(seed.try_into().unwrap_or_default()) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let body = if mode[0] & 1 == 0 {
        rest.to_vec()
    } else {
        // Frames: each takes a length byte for its headers and one for its payload; now and
        // then one byte of a frame is flipped or the frame is cut short.
        let mut body = Vec::new();
        let mut input = rest;
        while input.len() >= 2 {
            let (h, p) = (usize::from(input[0] % 48), usize::from(input[1]));
            input = &input[2..];
            let h = h.min(input.len());
            let (headers, after) = input.split_at(h);
            let p = p.min(after.len());
            let (payload, after) = after.split_at(p);
            input = after;
            let mut f = raw_frame(headers, payload);
            match next() % 10 {
                0 => {
                    let i = (next() as usize) % f.len();
                    f[i] ^= 1 << (next() % 8);
                }
                1 => f.truncate((next() as usize) % f.len()),
                _ => {}
            }
            body.extend_from_slice(&f);
        }
        body
    };
    let limit = if mode[0] & 2 == 0 {
        u64::MAX
    } else {
        64 + u64::from(mode[0])
    };
    let mut cuts = Vec::new();
    let mut at = 0usize;
    loop {
        at += 1 + (next() % 17) as usize;
        if at >= body.len() {
            break;
        }
        cuts.push(at);
    }
    let whole = run(&body, &[], limit);
    assert_eq!(whole, run(&body, &cuts, limit), "cuts {cuts:?}");
    let bytewise: Vec<usize> = (1..body.len()).collect();
    assert_eq!(whole, run(&body, &bytewise, limit));
    // Frames and corrupt stretches tile the bytes read, up to the cut or the overflow.
    let mut end = 0u64;
    for item in &whole.0 {
        let span = match item {
            Item::Frame(s, ..) | Item::Corrupt(s, _) => s,
        };
        assert_eq!(span.start, end);
        end = span.end;
    }
    match (&whole.1, &whole.2) {
        (Some(c), _) => assert_eq!((c.span.start, c.span.end), (end, body.len() as u64)),
        (None, Some(o)) => assert_eq!(o.start, end),
        (None, None) => assert_eq!(end, body.len() as u64),
    }
    // The whole pipeline, framing forced, never panics on it.
    let opts = sse_replay_core::pipeline::Options {
        framing: Some(sse_replay_core::framing::Framing::AwsEventStream),
        dialect: None,
        detail: true,
    };
    let _ = sse_replay_core::pipeline::run_chunks(
        sse_replay_core::chunking::split(&body, &cuts)
            .into_iter()
            .map(|p| (p, 0u64)),
        opts,
    );
});
