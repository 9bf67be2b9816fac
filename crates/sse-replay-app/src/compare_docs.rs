//! "Compare two"'s own documents: recordings A and B, each loaded on its own background load
//! (never the Replay tab's loader, so opening one never replaces or cancels what Replay shows),
//! and their [`Comparison`], computed once when either side changes.

use super::loader::{self, LoadError, LoadResult, Loaded, Loading, Source};
use super::view::OpenTarget;
use sse_replay_core::compare::{Comparison, compare_analyses};

/// Recording A and B of "Compare two" and their comparison. Runtime state, never persisted.
#[derive(Default)]
pub struct CompareDocs {
    sides: [Option<Loaded>; 2],
    loading: [Option<Loading>; 2],
    comparison: Option<Comparison>,
    /// Show only the call rows that differ.
    pub only_differing: bool,
    /// Each call row's height when last drawn (0: not yet), so rows off screen are skipped with
    /// a space of their height instead of being laid out. View state; reset with the comparison.
    pub row_heights: Vec<f32>,
}

impl std::fmt::Debug for CompareDocs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompareDocs")
            .field("a", &self.side(OpenTarget::CompareA).map(name))
            .field("b", &self.side(OpenTarget::Second).map(name))
            .finish_non_exhaustive()
    }
}

fn name(l: &Loaded) -> &str {
    &l.analysis.source.name
}

/// The slot of a compare side (`Primary` is not one; it maps to A).
fn slot(side: OpenTarget) -> usize {
    match side {
        OpenTarget::Second => 1,
        OpenTarget::CompareA | OpenTarget::Primary => 0,
    }
}

impl CompareDocs {
    /// The recording on `side` (`CompareA` or `Second` = B), once loaded.
    pub fn side(&self, side: OpenTarget) -> Option<&Loaded> {
        self.sides[slot(side)].as_ref()
    }

    /// The comparison, when both sides are loaded.
    pub fn comparison(&self) -> Option<&Comparison> {
        self.comparison.as_ref()
    }

    /// A side is loading.
    pub fn is_loading(&self) -> bool {
        self.loading.iter().any(Option::is_some)
    }

    /// `side` is loading.
    pub fn side_loading(&self, side: OpenTarget) -> bool {
        self.loading[slot(side)].is_some()
    }

    /// Start loading `source` into `side`; the side's previous recording stays until it lands.
    pub fn open(&mut self, side: OpenTarget, source: Source, wake: impl Fn() + Send + 'static) {
        let i = slot(side);
        if let Some(l) = &self.loading[i] {
            l.cancel();
        }
        self.loading[i] = Some(loader::spawn(
            source,
            side,
            None,
            loader::STAGE_MIN_BYTES,
            wake,
        ));
    }

    /// Takes finished loads; returns a status line (text, is an error) for each.
    pub fn poll(&mut self) -> Vec<(String, bool)> {
        // A big recording's strategies and previews land later (the comparison reads only calls).
        for loaded in self.sides.iter_mut().flatten() {
            loaded.poll_later();
        }
        let mut status = Vec::new();
        for i in 0..2 {
            let Some(result) = self.loading[i].as_ref().and_then(Loading::poll) else {
                continue;
            };
            let side = if i == 0 { "A" } else { "B" };
            let name = self.loading[i].take().map(|l| l.name).unwrap_or_default();
            match result {
                Ok(LoadResult::Loaded(loaded)) => {
                    status.push((
                        format!(
                            "Compare two: {side} is {} ({} calls)",
                            loaded.analysis.source.name,
                            loaded.analysis.calls.len()
                        ),
                        false,
                    ));
                    self.sides[i] = Some(*loaded);
                    self.recompare();
                }
                Ok(LoadResult::Choose { recordings, .. }) => status.push((
                    format!(
                        "Compare two: {name} holds {} streams; open it in Replay, pick one and use \
                         it from there",
                        recordings.len()
                    ),
                    true,
                )),
                Err(LoadError::Cancelled) => {}
                Err(e) => status.push((format!("Compare two: cannot open {side}: {e}"), true)),
            }
        }
        status
    }

    fn recompare(&mut self) {
        self.row_heights.clear();
        self.comparison = match &self.sides {
            [Some(a), Some(b)] => Some(compare_analyses(&a.analysis, &b.analysis)),
            _ => None,
        };
    }
}
