//! Facts to calls and judgements: the accumulator ([`accumulate`]), the push pipeline
//! ([`pipeline`]), the naive strategies ([`naive`]), the immutable [`analysis::Analysis`], previews
//! ([`preview`]), complete responses ([`complete`]), the one verdict ([`verdict`]), the probe's
//! readers ([`open`]) and the app's two stages ([`staged`]). It reads through [`crate::read`] and
//! never builds stubs or writes reports.

pub mod accumulate;
pub mod analysis;
pub mod complete;
pub mod naive;
pub mod open;
pub mod pipeline;
pub mod preview;
pub mod staged;
pub mod verdict;
