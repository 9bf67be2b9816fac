//! Bytes → framing → every dialect (forced in turn, then auto-detected) → accumulator, with detail
//! records and every naive strategy watching the pipeline's facts. Must never panic; the
//! auto-detected pass must give the same calls whether the body arrives in one read or in two.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::framing::Framing;
use sse_replay_core::naive::Strategies;
use sse_replay_core::pipeline::{Options, Pipeline, PipelineOutput};

fn run(pieces: &[&[u8]], dialect: Option<DialectKind>) -> PipelineOutput {
    let opts = Options {
        dialect,
        framing: None,
        detail: true,
    };
    let mut p = Pipeline::observed(opts, Strategies::new());
    for (i, piece) in pieces.iter().enumerate() {
        p.feed(piece, i as u64 * 1000);
    }
    let (out, strategies) = p.finish_observed();
    // The naive strategies' reports, per-read ones included: they must not panic either.
    let reads: Vec<(&[u8], u64)> = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, i as u64 * 1000))
        .collect();
    let framing = out.framing.unwrap_or(Framing::Sse);
    let _ = strategies.reports_sharing(Some(&reads), out.dialect, framing, &out.calls);
    out
}

fn summary(o: &PipelineOutput) -> Vec<(Option<String>, String, String, bool)> {
    o.calls
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                c.name.clone(),
                c.raw_arguments.to_string(),
                c.value().is_some(),
            )
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    for kind in DialectKind::ALL {
        let out = run(&[data], Some(kind));
        let _ = summary(&out);
    }
    let whole = run(&[data], None);
    let cut = data
        .first()
        .map_or(0, |&b| (b as usize * 7919) % (data.len() + 1));
    let split = run(&[&data[..cut], &data[cut..]], None);
    assert_eq!(summary(&whole), summary(&split), "cut at {cut}");
    assert_eq!(whole.event_count, split.event_count, "cut at {cut}");
});
