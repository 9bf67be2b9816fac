//! `sse-replay events`: one JSON object per framed event, and the verdict as the exit code. A
//! binary AWS event stream frame adds its `headers` and `payload`; its `span` is its byte range.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;

use super::{EXIT_FAILED, InputArgs, fail, open_failed, verdict};
use sse_replay_core::analysis::Analysis;

/// `events` arguments.
#[derive(Debug, Args)]
pub struct EventsArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

/// Runs `events`.
pub(super) fn run(a: &EventsArgs) -> ExitCode {
    let analysis = match a.input.analyse() {
        Ok(x) => x,
        Err(e) => return open_failed(&e),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, e) in analysis.events.iter().enumerate() {
        let data = events_data(&analysis, e);
        let t = analysis
            .chunks
            .get(e.chunk as usize)
            .map_or(0, |c| c.t_micros);
        let mut v = serde_json::json!({
            "event_no": i,
            "event": analysis.event_type(e),
            "data": data.data,
            "id": data.id,
            "span": [e.span.start, e.span.end],
            "chunk": e.chunk,
            "t_us": t,
            "kind": e.kind,
            "fragments": e.fragment_count,
        });
        // A binary frame: its headers and its payload as sent (for an InvokeModel `chunk`, the
        // base64 envelope; `data` is the event it held).
        if let (Some(frame), Some(m)) = (data.frame, v.as_object_mut()) {
            for (k, x) in frame {
                if k != "decoded" {
                    m.insert(k, x);
                }
            }
        }
        if let Err(e) = writeln!(out, "{}", sse_replay_core::text::json_compact(&v)) {
            return fail(EXIT_FAILED, format!("cannot write to standard output: {e}"));
        }
    }
    if let Err(e) = out.flush() {
        return fail(EXIT_FAILED, format!("cannot write to standard output: {e}"));
    }
    drop(out);
    let code = verdict(&analysis, &a.input.file);
    // As in `check`: the process ends here, so skip freeing every allocation one by one.
    #[allow(
        clippy::mem_forget,
        reason = "the process ends here: freeing is left to the OS"
    )]
    std::mem::forget(analysis);
    code
}

struct EventData {
    data: String,
    id: String,
    /// A binary frame's `headers` and `payload` ([`sse_replay_core::framing::aws_frame_json`]).
    frame: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Re-frame one event's bytes to recover its data and id for display (cheap: one event).
fn events_data(a: &Analysis, e: &sse_replay_core::pipeline::EventRecord) -> EventData {
    let bytes = a.bytes(&e.span);
    if a.complete {
        // One event: the whole document.
        return EventData {
            data: String::from_utf8_lossy(bytes).trim().to_owned(),
            id: String::new(),
            frame: None,
        };
    }
    let mut data = String::new();
    let mut id = String::new();
    let mut framer = sse_replay_core::framing::Framer::new(Some(a.framing));
    let mut sink = |item: sse_replay_core::framing::Framed<'_>| {
        if let sse_replay_core::framing::Framed::Event { data: d, .. } = item {
            data = d.to_owned();
        }
    };
    framer.feed(bytes, &mut sink);
    if a.framing == sse_replay_core::framing::Framing::Sse {
        // A terminating blank line is part of the span; make sure the event dispatches.
        framer.feed(b"\n\n", &mut sink);
        for line in bytes.split(|b| *b == b'\n') {
            if let Some(v) = line.strip_prefix(b"id:") {
                id = String::from_utf8_lossy(v.strip_prefix(b" ").unwrap_or(v))
                    .trim_end_matches('\r')
                    .to_owned();
            }
        }
    } else {
        framer.finish(&mut sink);
    }
    let frame = (a.framing == sse_replay_core::framing::Framing::AwsEventStream)
        .then(|| sse_replay_core::framing::aws_frame_json(bytes, e.span.start).ok())
        .flatten()
        .and_then(|v| match v {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        });
    EventData { data, id, frame }
}
