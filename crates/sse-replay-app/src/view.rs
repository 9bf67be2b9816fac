//! The mutable view state every panel shares (the player cursor is view state, never a
//! recomputation), the few derived tables computed once per recording, and the queued [`Action`]s.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use sse_replay_core::analysis::Analysis;
use sse_replay_core::dialect::DialectKind;
use sse_replay_core::export::Format;
use sse_replay_core::naive::Strategy;
use sse_replay_core::recording::Recording;

/// Which loaded recording an open goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenTarget {
    /// The recording the player, comparison and timeline show.
    Primary,
    /// Recording A of "Compare two" (its own document: Replay is untouched).
    CompareA,
    /// Recording B of "Compare two".
    Second,
}

/// The top-level tabs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Tab {
    #[default]
    Replay,
    CompareTwo,
    StubBuilder,
    Recorder,
    Proxy,
    TestClient,
    Corpus,
}

impl Tab {
    /// All tabs, in switcher order.
    pub const ALL: [Tab; 7] = [
        Tab::Replay,
        Tab::CompareTwo,
        Tab::StubBuilder,
        Tab::Recorder,
        Tab::Proxy,
        Tab::TestClient,
        Tab::Corpus,
    ];

    /// The switcher label.
    pub fn label(self) -> &'static str {
        match self {
            Tab::Replay => "Replay",
            Tab::CompareTwo => "Compare two",
            Tab::StubBuilder => "Stub builder",
            Tab::Recorder => "Recorder",
            Tab::Proxy => "Proxy",
            Tab::TestClient => "Test a client",
            Tab::Corpus => "Corpus",
        }
    }
}

/// The unit of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepUnit {
    Chunk,
    Event,
    Fragment,
}

/// Something a click asked for; the app applies the queue after drawing.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Ask for a file (native dialog) and open it into the target.
    OpenDialog(OpenTarget),
    /// Open a file into the target (Ctrl+O, drag-and-drop, recent files, CLI argument all end here).
    OpenPath(PathBuf, OpenTarget),
    /// Open stream `n` (from 1) of a capture in Replay (the Corpus tab's rows).
    OpenStream(PathBuf, usize),
    /// Open the bundled seed example.
    OpenSeed,
    /// Stop the background load.
    CancelLoad,
    /// Move the cursor to chunk `k`.
    Seek(u32),
    /// Step by one unit, forward (`+1`) or back (`-1`).
    StepCursor(StepUnit, i32),
    /// Cursor to the first / last chunk.
    Home,
    End,
    /// Start or stop playing.
    TogglePlay,
    /// Move the cursor to the chunk where fragment `no` completed and focus it.
    FocusFragment(u32),
    /// Show this naive strategy on the left.
    SelectStrategy(Strategy),
    /// Write the parsed calls in a format (asks for a file name).
    ExportCalls(Format),
    /// Put the parsed calls (JSON) on the clipboard.
    CopyCallsJson,
    /// Write the `check --json` report (asks for a file name).
    ExportReport,
    /// Save the stub builder's recording (asks for a file name).
    SaveStub,
    /// Open the stub builder's recording in the player.
    OpenStub,
    /// Switch the top-level tab.
    ShowTab(Tab),
    /// Show or hide the help window.
    ToggleAbout,
    /// Show or hide Help → Keyboard shortcuts.
    ToggleShortcuts,
    /// Copy the event the event list shows (the clicked one, else the cursor's) as SSE text.
    CopyEvent,
    /// The event list's detail follows the cursor again (unpins the clicked event).
    FollowCursor,
    /// Ask for a capture (HAR, cassette, JSON lines) and import it.
    ImportDialog,
    /// Open stream `n` of the stream picker.
    PickStream(usize),
    /// Close the stream picker without opening anything.
    ClosePicker,
    /// Analyse the open recording again with this dialect forced (`None`: detect it).
    SetDialect(Option<DialectKind>),
    /// Show a stream arriving (the Recorder's recording, a watched proxy flow) in the Replay panels.
    ShowLive(Box<Recording>),
    /// Ask for a file name and save this recording there.
    SaveRecordingAs(Box<Recording>),
    /// Open case `n` of the last "Test a client" run (that recording in that variant) in Replay.
    OpenTestCase(usize),
    /// In Replay, show the tested client's output on the left (`true`) or the naive strategy.
    ShowClientOutput(bool),
    /// Open Compare two's side (`CompareA` or `Second` = B) in Replay.
    CompareSideInReplay(OpenTarget),
    /// Load Replay's recording into Compare two's side.
    CompareUseReplay(OpenTarget),
    /// Ask for a folder (the folder picker) for the Recorder's or the Proxy's captures.
    PickCapturesDir(super::captures::CapturesFor),
    /// Turn hindsight on or off in Replay ([`ViewState::hindsight`]).
    SetHindsight(bool),
    /// Follow proxy flow `id` in Replay while it streams (the live view).
    WatchFlow(u64),
    /// Ask for a file name and save proxy flow `id` there as a HAR entry.
    SaveFlowHar(u64),
    /// Type call `n`'s card out again from its first fragment, the cursor staying put (`None`:
    /// stop).
    TypeOut(Option<usize>),
}

/// The one queue every intent goes through: menus, keys, drops and every panel push here while
/// the frame is drawn (panels get it as `&mut ActionQueue`, background polls too); the app applies
/// the queue after drawing ([`crate::App`]'s command handling). Tests push into it and can
/// assert what a click queued.
#[derive(Debug, Default)]
pub struct ActionQueue {
    queued: Vec<Action>,
}

impl ActionQueue {
    /// Queue `action`; it is applied after this frame is drawn.
    pub fn push(&mut self, action: Action) {
        self.queued.push(action);
    }

    /// The actions queued so far, oldest first.
    pub fn queued(&self) -> &[Action] {
        &self.queued
    }

    /// Nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    /// Take every queued action (oldest first), leaving the queue empty.
    pub fn take(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.queued)
    }
}

/// Tables computed once per recording (on the loader thread) so that cursor moves stay cheap.
#[derive(Debug, Default)]
pub struct CursorTables {
    /// Per strategy (same order as `Analysis::strategies`): number of parsed steps among the
    /// first `n` steps, at index `n`.
    pub parsed_prefix: Vec<Vec<u32>>,
    /// Per strategy: its calls' indexes sorted by the chunk where the strategy emitted them, so
    /// "calls emitted by the cursor" is a binary search.
    pub call_order: Vec<Vec<u32>>,
    /// Findings attached to a fragment: fragment number → indexes into `Analysis::findings`.
    /// Not the ones decided at the end of the stream (a call's parse, cut-short calls): those
    /// show on the call, once the stream has ended.
    pub fragment_findings: HashMap<u32, Vec<usize>>,
    /// Findings per call: call position → indexes into `Analysis::findings`.
    pub call_findings: HashMap<u32, Vec<usize>>,
    /// Findings about the whole stream (no call).
    pub stream_findings: Vec<usize>,
    /// The time axis is real (recorded microseconds differ); else the chunk number is the axis.
    pub timed: bool,
    /// The one verdict (the same as `check`'s Result line and exit code), computed once.
    pub verdict: sse_replay_core::verdict::Verdict,
    /// Positions of the calls the client must execute, then of the provider's server tools.
    pub client_calls: Vec<usize>,
    pub server_tools: Vec<usize>,
}

impl CursorTables {
    /// Build the tables for an analysis.
    pub fn new(analysis: &Analysis) -> Self {
        Self::from_parts(analysis, &analysis.strategies, &analysis.findings)
    }

    /// The tables for `analysis` once `strategies` and `findings` replace its own (its second
    /// stage, see [`sse_replay_core::staged`]): built on the worker before they are put in.
    pub fn from_parts(
        analysis: &Analysis,
        strategies: &[sse_replay_core::analysis::StrategyResult],
        findings: &[sse_replay_core::findings::Finding],
    ) -> Self {
        let parsed_prefix = strategies
            .iter()
            .map(|s| {
                let mut v = Vec::with_capacity(s.report.steps.len() + 1);
                let mut n = 0u32;
                v.push(0);
                for st in s.report.steps.rows() {
                    n += u32::from(st.ok());
                    v.push(n);
                }
                v
            })
            .collect();
        let call_order = strategies
            .iter()
            .map(|s| {
                let mut order: Vec<u32> = (0..s.report.calls.len() as u32).collect();
                order.sort_by_key(|&i| s.report.calls[i as usize].chunk);
                order
            })
            .collect();
        let mut fragment_findings: HashMap<u32, Vec<usize>> = HashMap::new();
        let mut call_findings: HashMap<u32, Vec<usize>> = HashMap::new();
        let mut stream_findings = Vec::new();
        for (i, f) in findings.iter().enumerate() {
            if let Some(no) = f.first.fragment
                && !f.kind.decided_at_end()
            {
                fragment_findings.entry(no).or_default().push(i);
            }
            match f.call {
                Some(c) => call_findings.entry(c).or_default().push(i),
                None => stream_findings.push(i),
            }
        }
        let timed = super::style::timed(analysis);
        let (client_calls, server_tools): (Vec<usize>, Vec<usize>) =
            (0..analysis.calls.len()).partition(|&i| analysis.calls[i].is_client_call());
        Self {
            parsed_prefix,
            call_order,
            fragment_findings,
            call_findings,
            stream_findings,
            timed,
            verdict: sse_replay_core::verdict::judge(&analysis.calls, findings),
            client_calls,
            server_tools,
        }
    }
}

/// Per-recording view state: the cursor and what each panel shows. Never persisted.
#[derive(Debug)]
pub struct ViewState {
    /// The player cursor: the last chunk received (0-based).
    pub cursor: u32,
    /// A fragment picked by a fragment step or a click (highlighted everywhere); `None` = the
    /// latest fragment at the cursor.
    pub focus_fragment: Option<u32>,
    /// The naive strategy on the left.
    pub strategy: Strategy,
    /// The call shown in detail when there are too many to show all; `None` follows the cursor.
    pub selected_call: Option<usize>,
    /// Playing at recorded timing.
    pub playing: bool,
    /// Playback speed (0.25–16).
    pub speed: f32,
    /// "Instant": play jumps to the end.
    pub instant: bool,
    /// When playing started: wall clock and stream time (µs, or chunks×10⁵ when untimed).
    pub play_anchor: Option<(Instant, f64)>,
    /// Timeline zoom (1 = whole stream).
    pub timeline_zoom: f32,
    /// The raw view's scroll; it brings the cursor's row into view when the cursor moves.
    pub raw_scroll: RowScroll,
    /// The naive steps list's scroll; it brings the current step into view when the cursor moves.
    pub steps_scroll: RowScroll,
    /// The wrapped byte view's row positions ([`super::raw_view::WrapTops`]).
    pub raw_wrap: super::raw_view::WrapTops,
    /// The event inspector's filter, selection and cached rows.
    pub inspector: super::event_inspector::InspectorState,
    /// Hindsight: before the end, mark what the whole recording knows (the values a typewriter
    /// preview shows that the final arguments contradict). Off by default, so that a cursor shows
    /// only what had arrived by it — exactly what the live view showed then; never while a
    /// stream is still arriving.
    pub hindsight: bool,
    /// The stream is still arriving (set by the Replay tab each frame): its latest read is not
    /// its end, and there is no hindsight to have.
    pub arriving: bool,
    /// "Type it out": one call card replaying its own fragments while the cursor stays put.
    pub typing: Option<Typing>,
}

/// A call card typing its call out again ("Type it out"): from the call's first fragment to the
/// ones that had arrived by the cursor, at the recorded timing and the player's speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Typing {
    /// The call (its position).
    pub call: usize,
    /// When it started.
    pub started: Instant,
    /// How many of the call's fragments it types (those at the cursor when it started).
    pub upto: usize,
}

impl Typing {
    /// How many of the call's fragments are shown now, and when the next one is due (`None`:
    /// done), at `speed` × recorded timing (or 10 chunks a second without timing).
    pub fn shown(
        &self,
        analysis: &Analysis,
        tables: &CursorTables,
        speed: f32,
    ) -> (usize, Option<std::time::Duration>) {
        let Some(c) = analysis.calls.get(self.call) else {
            return (0, None);
        };
        let frags = &c.fragments[..self.upto.min(c.fragments.len())];
        let clock = |no: u32| {
            analysis
                .fragments
                .get(no as usize)
                .map_or(0.0, |f| ViewState::clock_of(analysis, tables, f.pos.chunk))
        };
        let Some(&first) = frags.first() else {
            return (0, None);
        };
        let t0 = clock(first);
        let elapsed = self.started.elapsed().as_secs_f64() * 1e6 * f64::from(speed.max(0.01));
        let n = frags.partition_point(|&no| clock(no) - t0 <= elapsed);
        let next = frags.get(n).map(|&no| {
            let wait = (clock(no) - t0 - elapsed) / f64::from(speed.max(0.01));
            std::time::Duration::from_micros(wait.clamp(1_000.0, 250_000.0) as u64)
        });
        (n.max(1), next)
    }
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            cursor: 0,
            focus_fragment: None,
            strategy: Strategy::PerFragment,
            selected_call: None,
            playing: false,
            speed: 1.0,
            instant: false,
            play_anchor: None,
            timeline_zoom: 1.0,
            raw_scroll: RowScroll::default(),
            steps_scroll: RowScroll::default(),
            raw_wrap: Default::default(),
            inspector: Default::default(),
            hindsight: false,
            arriving: false,
            typing: None,
        }
    }
}

impl ViewState {
    /// The last chunk number of the recording.
    pub fn last_chunk(analysis: &Analysis) -> u32 {
        analysis.chunks.len().saturating_sub(1) as u32
    }

    /// The fragment to highlight: the focused one if it has arrived, else the latest one.
    pub fn current_fragment(&self, analysis: &Analysis) -> Option<u32> {
        let n = analysis.fragments_at(self.cursor) as u32;
        match self.focus_fragment {
            Some(f) if f < n => Some(f),
            _ => n.checked_sub(1),
        }
    }

    /// The event to highlight: the current fragment's event, else the latest event at the cursor.
    pub fn current_event(&self, analysis: &Analysis) -> Option<u32> {
        if self.focus_fragment.is_some()
            && let Some(f) = self
                .current_fragment(analysis)
                .and_then(|f| analysis.fragments.get(f as usize))
        {
            return Some(f.pos.event);
        }
        (analysis.events_at(self.cursor) as u32).checked_sub(1)
    }

    /// Move the cursor (clamped); clears the fragment focus.
    pub fn seek(&mut self, analysis: &Analysis, chunk: u32) {
        self.cursor = chunk.min(Self::last_chunk(analysis));
        self.focus_fragment = None;
    }

    /// Step by one unit in direction `dir` (+1 / -1). Stepping is a search in the sorted arrays,
    /// never a re-run.
    pub fn step(&mut self, analysis: &Analysis, unit: StepUnit, dir: i32) {
        let last = Self::last_chunk(analysis);
        match unit {
            StepUnit::Chunk => {
                let k = if dir > 0 {
                    self.cursor.saturating_add(1).min(last)
                } else {
                    self.cursor.saturating_sub(1)
                };
                self.seek(analysis, k);
            }
            StepUnit::Event => {
                let done = analysis.events_at(self.cursor);
                let k = if dir > 0 {
                    // The chunk that completes the next event (skip events in this chunk).
                    analysis.events.get(done).map_or(last, |e| e.chunk)
                } else {
                    done.checked_sub(2)
                        .and_then(|i| analysis.events.get(i))
                        .map_or(0, |e| e.chunk)
                };
                self.seek(analysis, k);
            }
            StepUnit::Fragment => {
                let arrived = analysis.fragments_at(self.cursor) as u32;
                let cur = self.current_fragment(analysis);
                let target = if dir > 0 {
                    match cur {
                        Some(c) if c + 1 < arrived => Some(c + 1),
                        Some(c) => Some(c + 1).filter(|&n| (n as usize) < analysis.fragments.len()),
                        None => (!analysis.fragments.is_empty()).then_some(0),
                    }
                } else {
                    cur.and_then(|c| c.checked_sub(1))
                };
                match target {
                    Some(t) => self.focus(analysis, t),
                    None if dir < 0 => self.seek(analysis, 0),
                    None => {}
                }
            }
        }
    }

    /// Focus fragment `no`: move the cursor to the chunk it completed in.
    pub fn focus(&mut self, analysis: &Analysis, no: u32) {
        if let Some(f) = analysis.fragments.get(no as usize) {
            self.cursor = f.pos.chunk.min(Self::last_chunk(analysis));
            self.focus_fragment = Some(no);
        }
    }

    /// The stream position of the cursor on the player's clock.
    pub fn clock_of(analysis: &Analysis, tables: &CursorTables, chunk: u32) -> f64 {
        if tables.timed {
            analysis
                .chunks
                .get(chunk as usize)
                .map_or(0.0, |c| c.t_micros as f64)
        } else {
            f64::from(chunk) * UNTIMED_MICROS_PER_CHUNK
        }
    }

    /// The chunk the player should show at stream clock `clock`.
    pub fn chunk_at_clock(analysis: &Analysis, tables: &CursorTables, clock: f64) -> u32 {
        if tables.timed {
            let n = analysis
                .chunks
                .partition_point(|c| (c.t_micros as f64) <= clock);
            n.saturating_sub(1) as u32
        } else {
            ((clock / UNTIMED_MICROS_PER_CHUNK) as u64).min(u64::from(Self::last_chunk(analysis)))
                as u32
        }
    }
}

/// A virtualised list that keeps one row (the cursor's) in view: only when that row changes, so the
/// user can scroll freely in between. Remembers where the list was scrolled last frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RowScroll {
    /// The (cursor, row) it last brought into view.
    pub followed: Option<(u32, usize)>,
    /// The scroll offset, viewport height and largest offset drawn last frame (0 before the first).
    pub offset: f32,
    pub viewport_h: f32,
    pub max_offset: f32,
    /// Scrolling to the row needs another frame.
    pending: bool,
}

impl RowScroll {
    /// The offset that brings `row` (of `rows`, `row_full` apart, the last `gap` shorter: egui's
    /// `show_rows` content height) into view when the cursor or the row changed since last time,
    /// if it is not in view already. Near rows scroll just enough; far ones come to the middle.
    ///
    /// Never past last frame's end: egui springs back from there, repainting for a while. So the
    /// list is drawn once before it is scrolled (its height and egui's bounds are unknown until
    /// then), and a list that grew this frame gets the rest of the way next frame; meanwhile
    /// [`RowScroll::pending`] asks for that frame.
    pub fn target(
        &mut self,
        cursor: u32,
        row: usize,
        rows: usize,
        row_full: f32,
        gap: f32,
    ) -> Option<f32> {
        self.pending = false;
        if self.followed == Some((cursor, row)) {
            return None;
        }
        if rows == 0 {
            self.followed = Some((cursor, row));
            return None;
        }
        if self.viewport_h <= 0.0 {
            self.pending = true;
            return None;
        }
        let vh = self.viewport_h;
        let top = row as f32 * row_full;
        let bottom = top + row_full;
        let (view_top, view_bottom) = (self.offset, self.offset + vh);
        if top >= view_top && bottom <= view_bottom {
            self.followed = Some((cursor, row));
            return None;
        }
        let wanted = if bottom > view_bottom && top < view_bottom + vh {
            bottom - vh
        } else if top < view_top && bottom > view_top - vh {
            top
        } else {
            top - (vh - row_full) / 2.0
        };
        let offset = wanted.clamp(0.0, (rows as f32 * row_full - gap - vh).max(0.0));
        if offset > self.max_offset + 0.5 {
            self.pending = true;
            return Some(self.max_offset);
        }
        self.followed = Some((cursor, row));
        Some(offset.min(self.max_offset))
    }

    /// The row is not in view yet and needs one more frame (see [`RowScroll::target`]).
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// Remember where the list is after drawing it.
    pub fn remember<R>(&mut self, out: &egui::scroll_area::ScrollAreaOutput<R>) {
        self.offset = out.state.clamped_offset().y;
        self.max_offset = (out.content_size.y - out.inner_rect.height()).max(0.0);
        let height = out.inner_rect.height();
        if (height - self.viewport_h).abs() > 0.5 {
            // Drawn for the first time, or the panel was resized: look again.
            self.followed = None;
        }
        self.viewport_h = height;
    }
}

/// Without recorded timing the player shows this many microseconds per chunk (10 chunks/s at 1×).
pub const UNTIMED_MICROS_PER_CHUNK: f64 = 100_000.0;
