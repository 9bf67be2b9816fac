//! Inputs to recordings and events: the recording model and its safe writer ([`recording`]),
//! secrets ([`redact`]), the byte layer under every reader ([`input`]), every test of what a byte
//! sequence is ([`content`]), what an input is ([`probe`]), capture formats ([`import`]) and the dialects ([`dialect`]) that turn framed events
//! into facts. It uses [`crate::wire`] and [`crate::base`], never the accumulator or the analysis.

pub mod content;
pub mod dialect;
pub mod import;
pub mod input;
pub mod probe;
pub mod recording;
pub mod redact;
