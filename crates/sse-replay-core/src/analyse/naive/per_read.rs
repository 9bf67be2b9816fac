//! The per-read strategies: client code that treats each network read as if it held whole units.
//! `per-read-utf8` decodes each read to text on its own; `per-read-lines` splits each read into
//! lines without carrying the unfinished last one. Both need the recorded reads (a recording with
//! chunk boundaries) and run at the end of the stream, on the reads as they re-framed them.
//!
//! Direction: this is the one file of [`crate::naive`] that imports [`crate::pipeline`]: after
//! re-framing, each runs the correct (lean) pipeline on what it made of the reads. The pipeline
//! never imports this module.

use super::{NaiveCall, NaiveStrategy, Reads, Report, Strategy, StreamEnd};
use crate::findings::FindingKind;
use crate::framing::Framing;
use crate::pipeline::{Options, Pipeline, PipelineOutput};

/// Why the per-read strategies cannot run on a raw body.
const NO_READS: &str = "needs a recording with chunk boundaries (a raw body has none)";

/// `per-read-utf8`: decode each read lossily on its own, then run the correct parser on the text.
#[derive(Clone, Copy, Debug, Default)]
pub struct PerReadUtf8;

impl NaiveStrategy for PerReadUtf8 {
    fn strategy(&self) -> Strategy {
        Strategy::PerReadUtf8
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        match end.reads {
            Some(reads) => shared(per_read_utf8(reads, lean(end)), end),
            None => Report::not_applicable(Strategy::PerReadUtf8, NO_READS),
        }
    }
}

/// `per-read-lines`: split each read on `\n` and take every `data:` piece as an event.
#[derive(Clone, Copy, Debug, Default)]
pub struct PerReadLines;

impl NaiveStrategy for PerReadLines {
    fn strategy(&self) -> Strategy {
        Strategy::PerReadLines
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        match end.reads {
            _ if !end.framing.is_text() => Report::not_applicable(
                Strategy::PerReadLines,
                "a binary event stream has no lines to split",
            ),
            Some(reads) => shared(per_read_lines(reads, lean(end)), end),
            None => Report::not_applicable(Strategy::PerReadLines, NO_READS),
        }
    }
}

/// `report` with its calls' values replaced by the correct calls' where the text is the same
/// ([`super::Parses`]): the strategy's own copies are dropped as soon as they are made.
fn shared(mut report: Report, end: &StreamEnd<'_>) -> Report {
    for c in &mut report.calls {
        if let Some(p) = end.parses.get(&c.raw_arguments) {
            c.parsed = p;
        }
    }
    report
}

/// The lean pass with the dialect and framing the correct pass settled on.
fn lean(end: &StreamEnd<'_>) -> Options {
    Options {
        dialect: Some(end.dialect),
        framing: Some(end.framing),
        detail: false,
    }
}

/// The calls of a re-framed pass, as the strategy's calls (finished where that pass finished).
fn output_calls(out: PipelineOutput) -> Vec<NaiveCall> {
    let end = out
        .finish
        .as_ref()
        .map_or(out.chunks.saturating_sub(1), |f| f.pos.chunk);
    out.calls
        .into_iter()
        .map(|c| NaiveCall {
            label: c.key.to_string(),
            id: c.id.unwrap_or_default(),
            name: c.name,
            raw_arguments: c.raw_arguments,
            parsed: c.parsed,
            chunk: end,
            // Re-framed and parsed after the whole body was read.
            at_end: true,
        })
        .collect()
}

/// `per-read-utf8` on `reads` (each read's bytes and arrival time).
pub fn per_read_utf8(reads: &dyn Reads, opts: Options) -> Report {
    let mut r = Report::new(Strategy::PerReadUtf8);
    // Its calls are only compared and reported: no event records, values kept as their text.
    let mut p = Pipeline::new(Options {
        detail: false,
        ..opts
    })
    .without_event_records()
    .values_as_text();
    let mut replaced = 0usize;
    reads.each(&mut |bytes, t| {
        let text = String::from_utf8_lossy(bytes);
        replaced += text.matches('\u{FFFD}').count();
        p.feed(text.as_bytes(), t);
    });
    let out = p.finish();
    r.notes.push(format!(
        "{} produced by per-read decoding",
        crate::text::plural(replaced, "U+FFFD replacement character")
    ));
    r.calls = output_calls(out);
    r
}

/// `per-read-lines` on `reads`: split each read on `\n` without keeping the unfinished tail; every
/// piece that starts with `data:` is taken as an event, other pieces are dropped.
pub fn per_read_lines(reads: &dyn Reads, opts: Options) -> Report {
    let mut r = Report::new(Strategy::PerReadLines);
    let jsonl = matches!(opts.framing, Some(Framing::JsonLines));
    // Its calls are only compared and reported: no event records, values kept as their text.
    let mut p = Pipeline::new(Options {
        detail: false,
        ..opts
    })
    .without_event_records()
    .values_as_text();
    let (mut dropped, mut events, mut offset) = (0u64, 0u64, 0u64);
    let mut event_type = String::from("message");
    let mut i = 0u32;
    reads.each(&mut |bytes, t| {
        let text = String::from_utf8_lossy(bytes);
        for piece in text.split('\n') {
            let line = piece.strip_suffix('\r').unwrap_or(piece);
            let span = offset..offset + piece.len() as u64;
            offset += piece.len() as u64 + 1;
            if line.is_empty() {
                continue;
            }
            if jsonl {
                events += 1;
                p.feed_event("message", line, span, i, t);
            } else if let Some(data) = line.strip_prefix("data:") {
                events += 1;
                p.feed_event(
                    &event_type,
                    data.strip_prefix(' ').unwrap_or(data),
                    span,
                    i,
                    t,
                );
                event_type = "message".into();
            } else if let Some(ev) = line.strip_prefix("event:") {
                event_type = ev.trim().to_owned();
            } else if !line.starts_with(':') {
                dropped += 1;
            }
        }
        offset -= 1;
        i += 1;
    });
    let out = p.finish();
    let bad = out
        .findings
        .list()
        .iter()
        .filter(|f| f.kind == FindingKind::NonJsonData)
        .map(|f| f.count)
        .sum::<u64>();
    r.notes.push(format!(
        "{} taken as events, {bad} of them not valid JSON, {} dropped",
        crate::text::plural(events, "line"),
        crate::text::plural(dropped, "line piece")
    ));
    r.calls = output_calls(out);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::Parsed;
    use crate::dialect::DialectKind;

    /// The per-read strategies re-frame a whole recording at the end: their calls keep each value
    /// as its text, not a parsed tree some ten times its size (thousands of calls in a large
    /// recording held 48 MB of trees), and give the same values.
    #[test]
    fn the_per_read_calls_keep_their_values_as_text() {
        let body: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"city\\\":\\\"\xe6\xb7\xb1\xe5\x9c\xb3\\\"}\"}}]}}]}\n\ndata: [DONE]\n\n";
        // Each read ends an event: both strategies find the call.
        let cut = body.len() - b"data: [DONE]\n\n".len();
        let reads: Vec<(&[u8], u64)> = vec![(&body[..cut], 0), (&body[cut..], 1)];
        let opts = Options {
            dialect: Some(DialectKind::OpenAiChat),
            framing: Some(Framing::Sse),
            detail: true,
        };
        for report in [per_read_utf8(&reads, opts), per_read_lines(&reads, opts)] {
            let call = report.calls.first().expect("a call");
            let Parsed::Ok(v) = &call.parsed else {
                panic!("{:?}: {:?}", report.strategy, call.parsed);
            };
            assert!(v.is_text_only(), "{:?}", report.strategy);
            assert_eq!(*v.get(), serde_json::json!({"city": "深圳"}));
        }
    }
}
