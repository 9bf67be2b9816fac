//! What the commands show and write: the human report ([`report`]), export formats and
//! `check --json` ([`export`]), the scan tables ([`scan`]), and two recordings side by side
//! ([`compare`], with arguments diffed as JSON by [`json_diff`]). The top layer: nothing in the
//! crate uses it.

pub mod compare;
pub mod export;
pub mod json_diff;
pub mod report;
pub mod scan;
