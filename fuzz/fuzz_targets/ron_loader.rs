//! The recording loader (RON documents and recorder journals, auto-detected by `from_bytes`): any
//! bytes give a recording or an error, never a panic or a stack overflow. A recording that loads
//! must save and load back to the same chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sse_replay_core::recording::Recording;

fuzz_target!(|data: &[u8]| {
    let Ok(rec) = Recording::from_bytes(data) else {
        return;
    };
    let Ok(text) = rec.try_to_ron_string() else {
        return;
    };
    let back = Recording::from_ron_str(&text)
        .unwrap_or_else(|e| panic!("saved recording does not load: {e}\n{text}"));
    assert_eq!(back.chunks, rec.chunks);
    assert_eq!(back.truth, rec.truth);
});
