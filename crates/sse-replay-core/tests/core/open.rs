//! The library's one way in (`sse_replay_core::probe`, `open`): a capture's streams, each stream's
//! kind, and cancellation. The command-line side is the root `tests/it/open.rs`.

use crate::common::repo_root as manifest;
use sse_replay_core::analysis::SourceKind;
use sse_replay_core::open::{OpenError, Opened};
use sse_replay_core::probe::{self, Probe, ReadOptions};
use std::path::Path;

const TWO_HAR: &str = "tests/data/import/two-streams.har";

fn open(path: &Path, options: ReadOptions) -> Probe {
    probe::open(path, options).expect("opens")
}

fn stream(n: usize) -> ReadOptions {
    ReadOptions {
        stream: Some(n),
        ..ReadOptions::default()
    }
}

#[test]
fn the_library_opener_reports_streams_kinds_and_cancellation() {
    let root = manifest();
    let har = root.join(TWO_HAR);
    let all = ReadOptions::default();
    match open(&har, all).recordings(|_, _| true).expect("open") {
        Opened::Several { recordings } => assert_eq!(recordings.len(), 2),
        Opened::One { .. } => panic!("two streams expected"),
    }
    let (_, kind) = open(&har, stream(2))
        .recording(|_, _| true)
        .expect("stream 2");
    assert_eq!(
        kind,
        SourceKind::Imported {
            format: "har".into()
        }
    );
    let seed = root.join("recordings/seed-example.ron");
    let (_, kind) = open(&seed, all).recording(|_, _| true).expect("seed");
    assert_eq!(kind, SourceKind::Recording);
    // Cancellation is its own variant, not a message.
    let e = open(&seed, all)
        .recordings(|_, _| false)
        .expect_err("cancelled");
    assert!(matches!(e, OpenError::Cancelled), "{e:?}");
    let e = open(&har, all).recording(|_, _| true).expect_err("choose");
    assert!(
        matches!(&e, OpenError::ChooseStream { titles, asked: None, .. } if titles.len() == 2),
        "{e:?}"
    );
    // Import… on a recording opens it as a recording.
    let import_only = ReadOptions {
        import_only: true,
        ..all
    };
    match open(&seed, import_only)
        .recordings(|_, _| true)
        .expect("import a recording")
    {
        Opened::One { kind, .. } => assert_eq!(kind, SourceKind::Recording),
        Opened::Several { .. } => panic!("one recording expected"),
    }
}
