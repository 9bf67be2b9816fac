//! The SSE push parser: random bytes fed in random splits must give exactly what one feed gives
//! (events with their spans and flags, comments, what `finish` discards, the stats), and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sse_replay_core::sse::{EventFlags, SseItem, SseParser, SseStats, Unterminated};

#[derive(Debug, PartialEq, Eq)]
enum Item {
    Event {
        event_type: String,
        data: String,
        id: String,
        span: std::ops::Range<u64>,
        flags: EventFlags,
    },
    Comment {
        text: String,
        span: std::ops::Range<u64>,
    },
}

type Run = (
    Vec<Item>,
    Option<Unterminated>,
    Option<u64>,
    String,
    SseStats,
);

fn run(body: &[u8], cuts: &[usize]) -> Run {
    let mut p = SseParser::new();
    let mut items = Vec::new();
    let mut sink = |item: SseItem<'_>| {
        items.push(match item {
            SseItem::Event(e) => Item::Event {
                event_type: e.event_type.to_owned(),
                data: e.data.to_owned(),
                id: e.last_event_id.to_owned(),
                span: e.span,
                flags: e.flags,
            },
            SseItem::Comment { text, span } => Item::Comment {
                text: text.to_owned(),
                span,
            },
        })
    };
    let mut start = 0;
    for &c in cuts.iter().chain(std::iter::once(&body.len())) {
        p.feed(&body[start..c], &mut sink);
        start = c;
    }
    let unterminated = p.finish();
    (
        items,
        unterminated,
        p.retry_ms(),
        p.last_event_id().to_owned(),
        p.stats().clone(),
    )
}

fuzz_target!(|data: &[u8]| {
    // The first 8 bytes seed the split points; the rest is the stream.
    if data.len() < 8 {
        return;
    }
    let (seed, body) = data.split_at(8);
    let mut state = u64::from_le_bytes(seed.try_into().unwrap_or_default()) | 1;
    let mut cuts = Vec::new();
    let mut at = 0usize;
    loop {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        at += 1 + (state % 9) as usize;
        if at >= body.len() {
            break;
        }
        cuts.push(at);
    }
    let whole = run(body, &[]);
    let split = run(body, &cuts);
    assert_eq!(whole, split, "cuts {cuts:?}");
    let bytewise: Vec<usize> = (1..body.len()).collect();
    assert_eq!(whole, run(body, &bytewise));
});
