//! Feeding the strategies beside the pipeline: [`StrategyFeed`] is the pipeline's observer that
//! hands every fact to a [`Strategies`] driver, either on the same thread or on a worker thread
//! of its own (facts sent in batches over a bounded channel), so the correct pass and the naive
//! ones run in parallel on two cores. The reports are the same either way: the driver sees the
//! same facts in the same order.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::Strategies;
use crate::fact::{Fact, FactObserver, Pos};

/// Facts per batch sent to the worker.
const BATCH: usize = 2048;
/// Batches in flight: the channel is bounded, so a slow worker holds the pipeline back rather than
/// letting the batches pile up in memory.
const IN_FLIGHT: usize = 8;

enum Msg {
    Facts(Vec<(Fact, Pos, u32)>),
    Finish(Option<Pos>),
}

/// The strategies' observer: inline, or on a worker thread. See the module documentation.
pub struct StrategyFeed(Mode);

enum Mode {
    /// Fed on the pipeline's thread.
    Inline(Strategies),
    /// Fed on a worker thread.
    Worker {
        batch: Vec<(Fact, Pos, u32)>,
        tx: SyncSender<Msg>,
        handle: JoinHandle<Strategies>,
    },
}

impl StrategyFeed {
    /// Every strategy, fed on the pipeline's thread.
    pub fn inline() -> Self {
        StrategyFeed(Mode::Inline(Strategies::new()))
    }

    /// [`StrategyFeed::inline`] with [`Strategies::counting`]: for a caller that runs one
    /// analysis per core and keeps only what a report needs (`scan`).
    pub fn inline_counting() -> Self {
        StrategyFeed(Mode::Inline(Strategies::counting()))
    }

    /// Every strategy, fed on a worker thread (inline when no thread can be started).
    pub fn spawn() -> Self {
        Self::spawn_with(Strategies::new)
    }

    /// [`StrategyFeed::spawn`] with [`Strategies::counting`].
    pub fn spawn_counting() -> Self {
        Self::spawn_with(Strategies::counting)
    }

    fn spawn_with(fresh: fn() -> Strategies) -> Self {
        let (tx, rx) = sync_channel::<Msg>(IN_FLIGHT);
        let spawned = std::thread::Builder::new()
            .name("naive strategies".into())
            .spawn(move || work(&rx, fresh()));
        match spawned {
            Ok(handle) => StrategyFeed(Mode::Worker {
                batch: Vec::with_capacity(BATCH),
                tx,
                handle,
            }),
            Err(_) => StrategyFeed(Mode::Inline(fresh())),
        }
    }

    /// The strategies are fed on a worker thread.
    pub fn is_worker(&self) -> bool {
        matches!(self.0, Mode::Worker { .. })
    }

    /// The driver, once the stream is finished ([`FactObserver::on_finish`] was called): waits
    /// for the worker to take the last batch.
    pub fn into_strategies(self) -> Strategies {
        match self.0 {
            Mode::Inline(s) => s,
            Mode::Worker { tx, handle, .. } => {
                drop(tx);
                match handle.join() {
                    Ok(s) => s,
                    // A panic in a strategy is a bug: surface it as the inline feed would.
                    Err(e) => std::panic::resume_unwind(e),
                }
            }
        }
    }

    fn send(tx: &SyncSender<Msg>, batch: &mut Vec<(Fact, Pos, u32)>) {
        if !batch.is_empty() {
            let full = std::mem::replace(batch, Vec::with_capacity(BATCH));
            // The worker only stops early by panicking, which `into_strategies` reports.
            tx.send(Msg::Facts(full)).ok();
        }
    }
}

fn work(rx: &Receiver<Msg>, mut s: Strategies) -> Strategies {
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Facts(batch) => {
                for (fact, pos, no) in &batch {
                    s.on_fact(fact, *pos, *no);
                }
            }
            Msg::Finish(at) => s.on_finish(at),
        }
    }
    s
}

impl FactObserver for StrategyFeed {
    fn on_fact(&mut self, fact: &Fact, pos: Pos, fragment_no: u32) {
        match &mut self.0 {
            Mode::Inline(s) => s.on_fact(fact, pos, fragment_no),
            Mode::Worker { batch, tx, .. } => {
                batch.push((fact.clone(), pos, fragment_no));
                if batch.len() >= BATCH {
                    Self::send(tx, batch);
                }
            }
        }
    }

    fn on_finish(&mut self, finished_at: Option<Pos>) {
        match &mut self.0 {
            Mode::Inline(s) => s.on_finish(finished_at),
            Mode::Worker { batch, tx, .. } => {
                Self::send(tx, batch);
                // As above: a worker gone early is reported by `into_strategies`.
                tx.send(Msg::Finish(finished_at)).ok();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::DialectKind;
    use crate::fact::{ArgsPiece, CallKey, Fragment, Raw};
    use crate::framing::Framing;

    #[test]
    fn the_worker_reports_what_the_inline_feed_reports() {
        // More than one batch, two interleaved calls.
        let fragment = |no: u32| Fragment {
            key: CallKey::Index {
                choice: 0,
                index: u64::from(no % 2),
                generation: 0,
            },
            stated_index: Some(u64::from(no % 2)),
            id: Raw::Absent,
            name: Raw::Absent,
            args: Raw::Value(ArgsPiece::Text(if no < 2 {
                "[".into()
            } else {
                "1,".into()
            })),
        };
        let feed = |f: &mut StrategyFeed| {
            for no in 0..(BATCH as u32 * 2 + 7) {
                let fact = Fact::Fragment(fragment(no));
                let pos = Pos {
                    event: no,
                    chunk: no,
                    t_micros: 0,
                };
                f.on_fact(&fact, pos, no);
            }
            f.on_finish(None);
        };
        let (mut a, mut b) = (StrategyFeed::inline(), StrategyFeed::spawn());
        feed(&mut a);
        feed(&mut b);
        // The correct calls of the same facts, which the strategies take their texts from.
        let mut acc = crate::accumulate::Accumulator::new(false);
        for no in 0..(BATCH as u32 * 2 + 7) {
            acc.push(fragment(no), Pos::default());
        }
        let calls = acc.finish(true).0;
        assert!(b.is_worker());
        let report = |f: StrategyFeed| {
            f.into_strategies()
                .reports_sharing(None, DialectKind::OpenAiChat, Framing::Sse, &calls)
        };
        let (ra, rb) = (report(a), report(b));
        assert_eq!(ra.len(), 8);
        assert_eq!(ra[0].steps.len(), BATCH * 2 + 7);
        assert_eq!(ra, rb);
    }
}
