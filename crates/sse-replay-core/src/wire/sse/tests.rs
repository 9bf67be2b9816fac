//! The SSE parser's unit tests (beside the code, in their own file to keep files under 900 lines).

use super::*;

fn one(input: &str) -> Vec<OwnedEvent> {
    parse_all([input.as_bytes()])
}

#[test]
fn basic_and_spans() {
    let ev = one("data: a\n\nevent: x\ndata:b\ndata: c\n\n");
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].data, "a");
    assert_eq!(ev[0].span, 0..9);
    assert_eq!(ev[1].event_type, "x");
    assert_eq!(ev[1].data, "b\nc");
}

#[test]
fn crlf_split_across_feeds_is_one_line_ending() {
    let body = b"data: 1\r\n\r\ndata: 2\r\n\r\n";
    for cut in 0..=body.len() {
        let ev = parse_all([&body[..cut], &body[cut..]]);
        assert_eq!(ev.len(), 2, "cut at {cut}");
        assert_eq!(ev[1].data, "2");
    }
}

#[test]
fn flags_are_reported() {
    let mut p = SseParser::new();
    let mut flags = Vec::new();
    p.feed(b"data:x\r\nevent: e\r\n\r\n", &mut |i| {
        if let SseItem::Event(e) = i {
            flags.push(e.flags)
        }
    });
    assert!(flags[0].crlf && flags[0].data_without_space && flags[0].data_before_event);
}

#[test]
fn unterminated_event_is_discarded_and_reported() {
    let mut p = SseParser::new();
    let mut n = 0;
    p.feed(b"data: 1\n\ndata: [DONE]\n", &mut |_| n += 1);
    assert_eq!(n, 1);
    let u = p.finish().expect("pending");
    assert!(u.had_data);
    assert_eq!(u.span, 9..22);
    assert!(u.text.contains("[DONE]"));
}

#[test]
fn split_utf8_is_decoded_after_reassembly() {
    let body = "data: 深圳\n\n".as_bytes();
    for cut in 0..=body.len() {
        let ev = parse_all([&body[..cut], &body[cut..]]);
        assert_eq!(ev[0].data, "深圳");
    }
}

#[test]
fn split_crlf_gives_the_same_spans_and_flags() {
    let body = b"data: 1\r\n\r\ndata: 2\n\r\n: c\r\ndata: 3\r\r";
    let run = |cut: usize| {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        let mut sink = |i: SseItem<'_>| {
            if let SseItem::Event(e) = i {
                out.push((e.span, e.flags));
            }
        };
        p.feed(&body[..cut], &mut sink);
        p.feed(&body[cut..], &mut sink);
        p.finish();
        (out, p.stats().clone())
    };
    let whole = run(body.len());
    assert_eq!(whole.0[0].0, 0..10);
    assert!(whole.0[0].1.crlf && !whole.0[0].1.cr);
    assert!(!whole.0[1].1.crlf, "only the blank line ended with CRLF");
    assert!(whole.0[2].1.cr);
    assert_eq!(
        (whole.1.crlf_lines, whole.1.cr_lines, whole.1.lf_lines),
        (4, 2, 1)
    );
    for cut in 0..=body.len() {
        assert_eq!(run(cut), whole, "cut at {cut}");
    }
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let ev = parse_all([&b"data: \xff\xfe\n\n"[..]]);
    assert_eq!(ev[0].data, "\u{FFFD}\u{FFFD}");
}

/// Feed `body` cut at `cut` into a limited parser: the events' data and the overflow.
fn limited(body: &[u8], cut: usize, limit: u64) -> (Vec<String>, Option<Overflow>) {
    let mut p = SseParser::with_max_event_bytes(EventLimit::new(limit));
    let mut out = Vec::new();
    let mut sink = |i: SseItem<'_>| {
        if let SseItem::Event(e) = i {
            out.push(e.data.to_owned());
        }
    };
    p.feed(&body[..cut], &mut sink);
    p.feed(&body[cut..], &mut sink);
    let u = p.finish();
    assert!(
        p.overflow().is_none() || u.is_none(),
        "overflow is not also unterminated"
    );
    (out, p.overflow())
}

#[test]
fn a_line_over_the_limit_stops_the_parser_wherever_it_is_split() {
    // Events before the long line are delivered; nothing after it; the offset is the line's.
    let body = b"data: a\n\n: ok\ndata: 0123456789abcdef\n\ndata: b\n\n";
    let long_at = 14;
    for cut in 0..=body.len() {
        let (events, overflow) = limited(body, cut, 12);
        assert_eq!(events, ["a"], "cut at {cut}");
        assert_eq!(
            overflow,
            Some(Overflow {
                start: long_at,
                limit: 12
            }),
            "cut at {cut}"
        );
    }
    // At exactly the line's length it passes.
    for cut in 0..=body.len() {
        let (events, overflow) = limited(body, cut, 22);
        assert_eq!(events, ["a", "0123456789abcdef", "b"], "cut at {cut}");
        assert_eq!(overflow, None);
    }
}

#[test]
fn an_endless_line_costs_at_most_the_limit() {
    let mut p = SseParser::with_max_event_bytes(EventLimit::new(1000));
    let zeros = [0u8; 300];
    let mut n = 0;
    for _ in 0..100 {
        p.feed(&zeros, &mut |_| n += 1);
    }
    assert_eq!(n, 0);
    assert_eq!(
        p.overflow(),
        Some(Overflow {
            start: 0,
            limit: 1000
        })
    );
    assert!(p.line.capacity() <= 1000, "the carried line was freed");
    assert_eq!(p.finish(), None);
}

#[test]
fn many_short_data_lines_count_towards_the_event() {
    // No single line is long, but the event's data buffer is: it starts at the event.
    let mut body = b"data: x\n\n".to_vec();
    for _ in 0..50 {
        body.extend_from_slice(b"data: 0123\n");
    }
    body.extend_from_slice(b"\n");
    for cut in [0, 5, 9, 10, 77, body.len()] {
        let (events, overflow) = limited(&body, cut, 100);
        assert_eq!(events, ["x"]);
        assert_eq!(overflow.map(|o| o.start), Some(9), "cut at {cut}");
    }
    assert_eq!(limited(&body, 30, 1000).0.len(), 2);
}

/// Everything a limited parser reports, for comparing splits.
/// Items are (is a comment, data or text, span).
type LimitedRun = (
    Vec<(bool, String, Range<u64>)>,
    Option<Unterminated>,
    Option<Overflow>,
);

fn run_limited(body: &[u8], cuts: &[usize], limit: u64) -> LimitedRun {
    let mut p = SseParser::with_max_event_bytes(EventLimit::new(limit));
    let mut items = Vec::new();
    let mut sink = |i: SseItem<'_>| match i {
        SseItem::Event(e) => items.push((false, e.data.to_owned(), e.span)),
        SseItem::Comment { text, span } => items.push((true, text.to_owned(), span)),
    };
    let mut start = 0;
    for &c in cuts.iter().chain(std::iter::once(&body.len())) {
        p.feed(&body[start..c], &mut sink);
        start = c;
    }
    let u = p.finish();
    (items, u, p.overflow())
}

#[test]
fn limited_parser_chunking_property_on_random_streams() {
    // Random streams over a small alphabet of SSE pieces, random limits: the same items,
    // discarded tail and overflow for one feed, random splits and byte-by-byte feeding.
    let pieces: [&[u8]; 10] = [
        b"data: ",
        b"event: e",
        b"xxxx",
        b"yy",
        b"\n",
        b"\r\n",
        b"\r",
        b": c",
        b"id: 1",
        b"\xEF\xBB",
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..2000 {
        let mut body = Vec::new();
        for _ in 0..(next() % 40) {
            body.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
        }
        let limit = 1 + next() % 24;
        let whole = run_limited(&body, &[], limit);
        let mut cuts = Vec::new();
        let mut at = 0usize;
        loop {
            at += 1 + (next() % 7) as usize;
            if at >= body.len() {
                break;
            }
            cuts.push(at);
        }
        assert_eq!(
            run_limited(&body, &cuts, limit),
            whole,
            "{body:?} {cuts:?} {limit}"
        );
        let bytewise: Vec<usize> = (1..body.len()).collect();
        assert_eq!(
            run_limited(&body, &bytewise, limit),
            whole,
            "{body:?} {limit}"
        );
        // Without an overflow, the limited parser is the plain parser.
        if whole.2.is_none() {
            let plain = parse_all([body.as_slice()]);
            assert_eq!(
                plain
                    .iter()
                    .map(|e| (false, e.data.clone(), e.span.clone()))
                    .collect::<Vec<_>>(),
                whole
                    .0
                    .iter()
                    .filter(|(comment, ..)| !comment)
                    .cloned()
                    .collect::<Vec<_>>()
            );
        }
    }
}
