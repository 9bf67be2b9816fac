//! What happens between frames: opening, background loads finishing, live updates, dialogs
//! answering, and frame timing.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use sse_replay_core::dialect::DialectKind;
use sse_replay_core::naive::Strategy;
use sse_replay_core::recording::Recording;

use super::loader::{LoadError, LoadResult, Loaded, Source};
use super::ui::short_name;
use super::view::{OpenTarget, ViewState};
use super::{App, Doc, Status, StreamPicker, loader};

/// The status line while Replay shows a stream as it arrives (replaced by how it ended, once it
/// has).
pub(super) const LIVE_STATUS: &str = "Showing the stream as it arrives";

/// Frame timing, printed to stderr when `SSE_REPLAY_TIMING` is set (for the scale measurements).
#[derive(Debug)]
pub(super) struct Perf {
    pub(super) enabled: bool,
    ui_micros: Vec<u64>,
    intervals_micros: Vec<u64>,
    last_frame: Option<Instant>,
    last_report: Instant,
    /// `timing: first full frame` was printed (once per process).
    first_reported: bool,
    /// The UI thread's scheduler figures when the frame began ([`Perf::begin`]).
    sched_at_begin: Option<(u64, u64)>,
}

/// The calling thread's time on a CPU and time spent runnable but waiting for one (ns), from
/// `/proc/thread-self/schedstat` (Linux): tells a slow frame's own work from preemption.
fn schedstat() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut it = s.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

impl Perf {
    pub(super) fn new() -> Self {
        Self {
            enabled: std::env::var_os("SSE_REPLAY_TIMING").is_some(),
            ui_micros: Vec::new(),
            intervals_micros: Vec::new(),
            last_frame: None,
            last_report: Instant::now(),
            first_reported: false,
            sched_at_begin: None,
        }
    }

    /// A frame begins (only measured when enabled).
    pub(super) fn begin(&mut self) {
        if self.enabled {
            self.sched_at_begin = schedstat();
        }
    }

    /// A recording opened at `t0` was drawn in the Replay tab. The first one is timed from the
    /// process start (`timing: first full frame N ms`: how the scale bound is measured).
    pub(super) fn first_full_frame(&mut self, t0: Instant) {
        if !self.enabled {
            return;
        }
        if !self.first_reported {
            self.first_reported = true;
            sse_replay_core::log_line!(
                "timing: first full frame {} ms",
                super::process_start().elapsed().as_millis()
            );
        }
        sse_replay_core::log_line!(
            "timing: open → first full frame {:.1} ms",
            t0.elapsed().as_secs_f64() * 1000.0
        );
    }

    pub(super) fn frame(&mut self, started: Instant) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let built = now.duration_since(started);
        if built >= Duration::from_millis(16) {
            let split = match (self.sched_at_begin, schedstat()) {
                (Some((c0, w0)), Some((c1, w1))) => format!(
                    " (on a CPU {:.1} ms, waiting for one {:.1} ms)",
                    c1.saturating_sub(c0) as f64 / 1e6,
                    w1.saturating_sub(w0) as f64 / 1e6
                ),
                _ => String::new(),
            };
            sse_replay_core::log_line!(
                "timing: slow frame: ui build {:.1} ms at {} ms{split}",
                built.as_secs_f64() * 1000.0,
                super::process_start().elapsed().as_millis()
            );
        }
        self.ui_micros.push(built.as_micros() as u64);
        if let Some(prev) = self.last_frame {
            self.intervals_micros
                .push(started.duration_since(prev).as_micros() as u64);
        }
        self.last_frame = Some(started);
        if now.duration_since(self.last_report) >= Duration::from_secs(2)
            && !self.ui_micros.is_empty()
        {
            let stats = |v: &mut Vec<u64>| {
                v.sort_unstable();
                let n = v.len().max(1);
                let mean = v.iter().sum::<u64>() as f64 / n as f64 / 1000.0;
                let p95 = v.get(n * 95 / 100).copied().unwrap_or(0) as f64 / 1000.0;
                let max = v.last().copied().unwrap_or(0) as f64 / 1000.0;
                format!(
                    "n={} mean={mean:.2}ms p95={p95:.2}ms max={max:.2}ms",
                    v.len()
                )
            };
            sse_replay_core::log_line!(
                "timing: ui build {} | frame interval {}",
                stats(&mut self.ui_micros),
                stats(&mut self.intervals_micros)
            );
            self.ui_micros.clear();
            self.intervals_micros.clear();
            self.last_report = now;
        }
    }
}

impl App {
    /// The one open function: every way of opening (dialog, Ctrl+O, drop, recent, CLI, seed,
    /// stub) ends here. The previous recording stays until the new one has loaded.
    pub fn open(&mut self, source: Source, target: OpenTarget) {
        if target != OpenTarget::Primary {
            let ctx = self.ctx.clone();
            self.compare.open(target, source, move || {
                if let Some(ctx) = &ctx {
                    ctx.request_repaint();
                }
            });
            return;
        }
        if target == OpenTarget::Primary && !matches!(source, Source::Live(_)) {
            self.live_follow = false;
            self.live_pending = None;
            self.proxy.unwatch();
        }
        self.load(source, target, None, false);
    }

    /// Start the loader. `keep_view` keeps the cursor and strategy when it lands (a live update,
    /// a dialect change); `dialect` forces the dialect.
    fn load(
        &mut self,
        source: Source,
        target: OpenTarget,
        dialect: Option<DialectKind>,
        keep_view: bool,
    ) {
        if let Some(l) = &self.loading {
            l.cancel();
        }
        let ctx = self.ctx.clone();
        let mut loading = loader::spawn(source, target, dialect, self.stage_min_bytes, move || {
            if let Some(ctx) = &ctx {
                ctx.request_repaint();
            }
        });
        loading.keep_view = keep_view;
        self.loading = Some(loading);
    }

    /// Show a stream as it arrives (the Recorder's recording, a watched proxy flow) in Replay. While a load runs, only the
    /// newest update waits; it starts when the loader is free.
    pub(super) fn show_live(&mut self, rec: Box<Recording>) {
        if !self.live_follow {
            return;
        }
        if self.loading.is_some() {
            self.live_pending = Some(rec);
            return;
        }
        let (dialect, keep) = match &self.doc {
            Some(d) if d.loaded.is_live() => (d.loaded.dialect_override, true),
            _ => (None, false),
        };
        self.load(Source::Live(rec), OpenTarget::Primary, dialect, keep);
        if let Some(l) = &mut self.loading {
            l.live = true;
        }
    }

    /// Analyse the open recording again with `dialect` forced (`None`: detect it again).
    pub(super) fn reanalyse(&mut self, dialect: Option<DialectKind>) {
        let Some(doc) = &self.doc else { return };
        if doc.loaded.dialect_override == dialect {
            return;
        }
        let source = doc.loaded.source.clone();
        self.load(source, OpenTarget::Primary, dialect, true);
    }

    pub(super) fn set_status(&mut self, text: impl Into<String>, error: bool) {
        self.status = Some(Status {
            text: text.into(),
            error,
        });
    }

    pub(super) fn poll_background(&mut self) {
        self.poll_later();
        for (text, error) in self.compare.poll() {
            self.set_status(text, error);
        }
        if let Some(l) = &self.loading
            && !self.hold_load
            && let Some(result) = l.poll()
        {
            let (target, name, t0, keep_view) = (l.slot, l.name.clone(), l.started, l.keep_view);
            self.loading = None;
            match result {
                Ok(LoadResult::Loaded(loaded)) => self.finish_load(*loaded, target, keep_view, t0),
                Ok(LoadResult::Choose { path, recordings }) => {
                    self.remember_recent(&path);
                    self.set_status(
                        format!(
                            "{} holds {} streams: pick one to open",
                            short_name(&name),
                            recordings.len()
                        ),
                        false,
                    );
                    // The Corpus tab asked for one stream of it: open that one.
                    if let Some((want, n)) = self.pick_stream.take()
                        && want == path
                        && (1..=recordings.len()).contains(&n)
                    {
                        self.actions.push(super::view::Action::PickStream(n - 1));
                    }
                    self.picker = Some(StreamPicker { path, recordings });
                }
                Err(LoadError::Cancelled) => self.set_status(
                    format!("Cancelled opening {name}; the previous recording stays open"),
                    false,
                ),
                Err(e) => self.set_status(format!("Cannot open: {e}"), true),
            }
            if let Some(rec) = self.live_pending.take() {
                self.show_live(rec);
            }
        }
        let answer = self
            .pending_dialog
            .as_ref()
            .and_then(|(_, rx)| match rx.try_recv() {
                Ok(a) => Some(a),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => Some(None),
            });
        if let Some(answer) = answer
            && let Some((pending, _)) = self.pending_dialog.take()
            && let Some(path) = answer
        {
            self.dialog_answered(pending, path);
        }
    }

    fn finish_load(&mut self, loaded: Loaded, target: OpenTarget, keep_view: bool, t0: Instant) {
        let name = loaded.analysis.source.name.clone();
        if keep_view
            && target == OpenTarget::Primary
            && let Some(doc) = &mut self.doc
        {
            // A live update or another dialect: same recording, same view. While live, a cursor
            // at the end follows the end.
            let a = &loaded.analysis;
            let v = &mut doc.view;
            let at_end = v.cursor >= ViewState::last_chunk(&doc.loaded.analysis);
            v.cursor = if at_end && loaded.is_live() {
                ViewState::last_chunk(a)
            } else {
                v.cursor.min(ViewState::last_chunk(a))
            };
            if v.focus_fragment
                .is_some_and(|f| f as usize >= a.fragments.len())
            {
                v.focus_fragment = None;
            }
            if v.selected_call.is_some_and(|c| c >= a.calls.len()) {
                v.selected_call = None;
            }
            v.play_anchor = None;
            let text = (!loaded.is_live()).then(|| {
                format!(
                    "Analysed {} again as {}: {}",
                    short_name(&name),
                    a.dialect.title(),
                    sse_replay_core::text::plural(a.calls.len(), "call")
                )
            });
            doc.loaded = loaded;
            match text {
                Some(text) => self.set_status(text, false),
                // Live: an old error no longer applies once updates arrive.
                None if self.status.as_ref().is_some_and(|s| s.error) => self.status = None,
                None => {}
            }
            return;
        }
        let a = &loaded.analysis;
        let text = format!(
            "Opened {name}: {}, {}, {}, {} ({:.0} ms)",
            sse_replay_core::text::plural(a.chunks.len(), "chunk"),
            sse_replay_core::text::plural(a.events.len(), "event"),
            sse_replay_core::text::plural(a.fragments.len(), "fragment"),
            sse_replay_core::text::plural(a.calls.len(), "call"),
            loaded.load_time.as_secs_f64() * 1000.0
        );
        if let Some(p) = &loaded.path {
            self.remember_recent(p);
        }
        let live = loaded.is_live();
        match target {
            OpenTarget::Primary => {
                let strategy = Strategy::ALL
                    .into_iter()
                    .find(|s| s.name() == self.settings.strategy)
                    .unwrap_or(Strategy::PerFragment);
                let view = ViewState {
                    cursor: ViewState::last_chunk(a),
                    strategy,
                    speed: self.settings.speed,
                    ..Default::default()
                };
                if let Some(ctx) = &self.ctx {
                    ctx.send_viewport_cmd(egui::ViewportCommand::Title(format!(
                        "sse-replay — {}",
                        short_name(&name)
                    )));
                }
                self.doc = Some(Doc { loaded, view });
                self.first_frame_pending = Some(t0);
            }
            // Compare two's sides load on their own loads (`compare_docs`), never this one.
            OpenTarget::CompareA | OpenTarget::Second => return,
        }
        if live {
            self.set_status(LIVE_STATUS, false);
        } else {
            self.set_status(text, false);
        }
    }

    /// Put in the second stage (naive strategies, previews) of the open recordings when ready.
    fn poll_later(&mut self) {
        if self.hold_later {
            return;
        }
        if let Some(doc) = &mut self.doc
            && doc.loaded.poll_later()
        {
            if self.perf.enabled {
                sse_replay_core::log_line!(
                    "timing: naive strategies and previews ready {} ms",
                    super::process_start().elapsed().as_millis()
                );
            }
            if let loader::LaterState::Failed(why) = &doc.loaded.later {
                let text = format!("Cannot show the naive strategies: {why}");
                self.set_status(text, true);
            }
        }
    }
}
