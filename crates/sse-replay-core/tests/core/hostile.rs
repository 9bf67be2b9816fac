//! A hostile input seen by the library: an event cut by the event limit is an error finding in the
//! analysis. The bounded command-line runs on hostile inputs are the root `tests/it/hostile.rs`.

use crate::common::repo_root as manifest;

fn seed_body() -> Vec<u8> {
    let rec = sse_replay_core::recording::load(&manifest().join("recordings/seed-example.ron"))
        .expect("seed recording");
    rec.body()
}

#[test]
fn the_analysis_names_the_cut_as_an_error_finding() {
    use sse_replay_core::analysis::{Analysis, SourceInfo};
    use sse_replay_core::findings::{FindingKind, Severity};
    let mut body = seed_body();
    let at = body.len() as u64;
    body.extend_from_slice(b"data: ");
    body.extend(std::iter::repeat_n(b'x', 5000));
    body.extend_from_slice(b"\n\n");
    let rec = sse_replay_core::input::raw_to_recording(&body, "cut");
    let a = Analysis::from_recording_owned(
        rec,
        SourceInfo::default(),
        sse_replay_core::pipeline::Options::default(),
        sse_replay_core::limits::EventLimit::new(4096),
    );
    assert_eq!(a.overflow.map(|o| (o.start, o.limit)), Some((at, 4096)));
    let f = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::EventTooLarge)
        .expect("finding");
    assert_eq!(f.kind.severity(), Severity::Error);
    assert_eq!(f.first.offset, Some(at));
    assert!(!a.all_ok(), "a cut stream is never OK");
    // What came before the cut is analysed as usual: the seed's two calls.
    assert_eq!(a.calls.len(), 2);
    assert!(a.calls.iter().all(|c| c.value().is_some()));
}
