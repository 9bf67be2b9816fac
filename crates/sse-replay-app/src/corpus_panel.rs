//! The Corpus tab: a folder of captures as a data set. Every stream of every capture under the
//! folder is analysed in the background (the captures folder by default) by the same
//! [`sse_replay_core::scan`] as `sse-replay scan`, and shown as a virtualised, sortable,
//! filterable table of `streams` rows and three charts (finding kinds per group, naive
//! strategies' failure shares, time to the first call). Rows arrive as they are made, so the
//! first are on screen while the rest load; afterwards the folder is polled for new or changed
//! captures (names, sizes and modification times, every two seconds, on the worker). A double
//! click (or "Open in Replay") opens a stream in Replay through the action queue.
//!
//! Runtime only: nothing of it is persisted (the folder comes from the Proxy's captures folder).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant, SystemTime};

use egui::{RichText, Sense, Ui};
use egui_plot::{Bar, BarChart, Legend, Plot};

use sse_replay_core::naive::Strategy;
use sse_replay_core::scan::{self, RowVerdict, ScanOptions, StreamRow};

use super::view::{Action, ActionQueue, OpenTarget, Tab};

/// How often the folder is looked at again for new or changed captures.
const POLL_EVERY: Duration = Duration::from_secs(2);
/// While rows arrive, the filtered and sorted view is rebuilt at most this often.
const REVIEW_EVERY: Duration = Duration::from_millis(250);
/// The most row batches taken from the worker in one frame (the rest wait for the next).
const BATCHES_PER_FRAME: usize = 2000;
/// Row height in points.
const ROW_H: f32 = 20.0;
/// Groups shown as their own series in the finding-kind chart (the rest are "other").
const CHART_GROUPS: usize = 6;
/// Finding kinds shown in that chart (the most frequent).
const CHART_KINDS: usize = 10;

/// What the worker sends.
enum Msg {
    /// The rows of one file (replacing any it had).
    Rows(PathBuf, Vec<StreamRow>),
    /// A file is gone.
    Removed(PathBuf),
    /// The first pass over the folder is done.
    Listed,
}

/// The background scan of a folder; dropping it stops the worker.
struct Loading {
    rx: mpsc::Receiver<Msg>,
    stop: Arc<AtomicBool>,
    found: Arc<AtomicU64>,
    done: Arc<AtomicU64>,
    started: Instant,
    first_pass_done: bool,
}

impl Drop for Loading {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The sortable columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    File,
    Dialect,
    Host,
    Model,
    Verdict,
    Calls,
    FirstCall,
    Findings,
}

/// What the charts' groups are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    Dialect,
    Host,
    Model,
}

/// The table's filter. Empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub dialect: Option<String>,
    pub model: Option<String>,
    pub verdict: Option<RowVerdict>,
    pub kind: Option<String>,
    /// Matched, ignoring case, against the file, host, model, problems, error and kinds.
    pub text: String,
}

impl Filter {
    fn matches(&self, r: &StreamRow, text_lower: &str) -> bool {
        let eq = |want: &Option<String>, got: &Option<String>| {
            want.as_ref().is_none_or(|w| got.as_ref() == Some(w))
        };
        eq(&self.dialect, &r.dialect)
            && eq(&self.model, &r.model)
            && self.verdict.is_none_or(|v| r.verdict == v)
            && self
                .kind
                .as_ref()
                .is_none_or(|k| r.kinds().any(|x| x == k.as_str()))
            && (text_lower.is_empty() || row_text(r).contains(text_lower))
    }
}

/// The text the free-text filter searches, lower-cased.
fn row_text(r: &StreamRow) -> String {
    let parts = [
        Some(&r.source_file),
        r.provider_host.as_ref(),
        r.model.as_ref(),
        r.problems.as_ref(),
        r.error.as_ref(),
        r.finding_kinds.as_ref(),
    ];
    parts
        .into_iter()
        .flatten()
        .map(|s| s.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The charts' data, computed from the rows in view.
#[derive(Debug, Default)]
struct Charts {
    /// The groups (in order) and, per finding kind, each group's share of its streams (%).
    groups: Vec<String>,
    kinds: Vec<(String, Vec<f64>)>,
    /// Per strategy: share of the streams it ran on where it failed (%), and how many it ran on.
    naive: Vec<(&'static str, f64, u64)>,
    /// Time to the first call: bin width (ms) and counts.
    ttfc_bin_ms: f64,
    ttfc: Vec<u64>,
}

/// The Corpus tab's state (runtime only).
pub struct CorpusPanel {
    /// The folder scanned (or to scan).
    pub folder: PathBuf,
    /// The folder was set (the captures folder, or typed); until then the tab offers it.
    started: bool,
    loading: Option<Loading>,
    /// Every stream row, in arrival order.
    pub rows: Vec<StreamRow>,
    /// The rows of each file (indexes into `rows`), to replace them when the file changes.
    by_file: HashMap<PathBuf, Vec<usize>>,
    /// Indexes of the rows shown, filtered and sorted.
    view: Vec<usize>,
    view_dirty: bool,
    last_review: Option<Instant>,
    pub filter: Filter,
    pub sort: (SortBy, bool),
    pub group_by: GroupBy,
    charts: Charts,
    /// The filters' choices (dialects, models, finding kinds of all rows), kept with the view.
    choices: [Vec<String>; 3],
    /// The row selected (an index into `rows`).
    pub selected: Option<usize>,
    /// When the first rows were shown after the scan started (`SSE_REPLAY_TIMING`).
    first_rows: Option<Duration>,
    timing: bool,
}

impl Default for CorpusPanel {
    fn default() -> Self {
        Self {
            folder: PathBuf::new(),
            started: false,
            loading: None,
            rows: Vec::new(),
            by_file: HashMap::new(),
            view: Vec::new(),
            view_dirty: false,
            last_review: None,
            filter: Filter::default(),
            sort: (SortBy::File, false),
            group_by: GroupBy::Dialect,
            charts: Charts::default(),
            choices: Default::default(),
            selected: None,
            first_rows: None,
            timing: std::env::var_os("SSE_REPLAY_TIMING").is_some(),
        }
    }
}

impl CorpusPanel {
    /// Scan `folder` (replacing what was shown), waking `ctx` as rows arrive.
    pub fn open(&mut self, folder: PathBuf, ctx: &egui::Context) {
        self.loading = None;
        self.rows.clear();
        self.by_file.clear();
        self.view.clear();
        self.selected = None;
        self.first_rows = None;
        self.charts = Charts::default();
        self.folder = folder.clone();
        self.started = true;
        self.loading = Some(spawn(folder, ctx.clone()));
    }

    /// The first pass over the folder is running.
    pub fn is_loading(&self) -> bool {
        self.loading.as_ref().is_some_and(|l| !l.first_pass_done)
    }

    /// The rows shown (filtered and sorted), as indexes into [`CorpusPanel::rows`].
    pub fn view(&self) -> &[usize] {
        &self.view
    }

    /// Take what the worker sent (bounded per frame), and rebuild the view when needed.
    fn poll(&mut self) {
        let Some(l) = &mut self.loading else { return };
        let mut changed = false;
        for _ in 0..BATCHES_PER_FRAME {
            match l.rx.try_recv() {
                Ok(Msg::Rows(path, rows)) => {
                    remove_file(&mut self.rows, &mut self.by_file, &path);
                    let start = self.rows.len();
                    self.rows.extend(rows);
                    self.by_file
                        .insert(path, (start..self.rows.len()).collect());
                    changed = true;
                }
                Ok(Msg::Removed(path)) => {
                    remove_file(&mut self.rows, &mut self.by_file, &path);
                    changed = true;
                }
                Ok(Msg::Listed) => {
                    l.first_pass_done = true;
                    changed = true;
                    if self.timing {
                        sse_replay_core::log_line!(
                            "timing: corpus loaded {} streams in {:.0} ms",
                            self.rows.len(),
                            l.started.elapsed().as_secs_f64() * 1000.0
                        );
                    }
                }
                Err(_) => break,
            }
        }
        if changed {
            self.view_dirty = true;
            self.selected = self.selected.filter(|&i| i < self.rows.len());
        }
        let loading = !l.first_pass_done;
        let due = !loading || self.last_review.is_none_or(|t| t.elapsed() >= REVIEW_EVERY);
        if self.view_dirty && due {
            self.review();
        }
    }

    /// Rebuild the filtered, sorted view and the charts.
    fn review(&mut self) {
        let text = self.filter.text.trim().to_lowercase();
        let mut view: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.filter.matches(&self.rows[i], &text))
            .collect();
        let rows = &self.rows;
        let (by, desc) = self.sort;
        let key_str = |r: &StreamRow| -> String {
            match by {
                SortBy::File => format!("{}#{:06}", r.source_file, r.stream),
                SortBy::Dialect => r.dialect.clone().unwrap_or_default(),
                SortBy::Host => r.provider_host.clone().unwrap_or_default(),
                SortBy::Model => r.model.clone().unwrap_or_default(),
                SortBy::Verdict => r.verdict.name().to_owned(),
                _ => String::new(),
            }
        };
        match by {
            SortBy::Calls => view.sort_by_key(|&i| rows[i].calls),
            SortBy::FirstCall => view.sort_by_key(|&i| rows[i].first_call_us),
            SortBy::Findings => view.sort_by_key(|&i| rows[i].kinds().count()),
            _ => {
                let keys: Vec<String> = view.iter().map(|&i| key_str(&rows[i])).collect();
                let mut order: Vec<usize> = (0..view.len()).collect();
                order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
                view = order.into_iter().map(|k| view[k]).collect();
            }
        }
        if desc {
            view.reverse();
        }
        self.charts = charts(rows, &view, self.group_by);
        self.choices = [
            distinct(rows, |r| r.dialect.clone()),
            distinct(rows, |r| r.model.clone()),
            distinct_kinds(rows),
        ];
        self.view = view;
        self.view_dirty = false;
        self.last_review = Some(Instant::now());
    }

    /// The tab. `captures` is the captures folder (the default folder).
    pub fn ui(&mut self, ui: &mut Ui, captures: &Path, queue: &mut ActionQueue) {
        if !self.started {
            // First shown: the captures folder (or the folder set before), scanned at once when
            // it exists.
            if self.folder.as_os_str().is_empty() {
                self.folder = captures.to_path_buf();
            }
            if self.folder.is_dir() {
                let folder = self.folder.clone();
                self.open(folder, ui.ctx());
            }
        }
        self.poll();
        if self.loading.as_ref().is_some_and(|l| !l.first_pass_done) {
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        egui::Panel::top("corpus-head").show(ui, |ui| self.head_ui(ui, queue));
        egui::Panel::right("corpus-charts")
            .resizable(true)
            .default_size(460.0)
            .min_size(320.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("corpus-charts-scroll")
                    .show(ui, |ui| self.charts_ui(ui));
            });
        egui::CentralPanel::default().show(ui, |ui| self.table_ui(ui, queue));
    }

    fn head_ui(&mut self, ui: &mut Ui, queue: &mut ActionQueue) {
        ui.horizontal(|ui| {
            let label = ui.label("Folder");
            let mut text = self.folder.display().to_string();
            if ui
                .add(egui::TextEdit::singleline(&mut text).desired_width(420.0))
                .labelled_by(label.id)
                .changed()
            {
                self.folder = PathBuf::from(text);
            }
            let verb = if self.started { "Rescan" } else { "Scan" };
            if ui
                .button(verb)
                .on_hover_text("Analyse every capture under the folder (as sse-replay scan)")
                .clicked()
            {
                let folder = self.folder.clone();
                self.open(folder, ui.ctx());
            }
            if let Some(l) = &self.loading {
                let (found, done) = (
                    l.found.load(Ordering::Relaxed),
                    l.done.load(Ordering::Relaxed),
                );
                if l.first_pass_done {
                    ui.weak(format!(
                        "{} files, {} streams; watching for new captures",
                        done,
                        self.rows.len()
                    ));
                } else {
                    let f = if found == 0 {
                        0.0
                    } else {
                        done as f32 / found as f32
                    };
                    ui.add(
                        egui::ProgressBar::new(f)
                            .desired_width(220.0)
                            .text(format!("{done} / {found} files")),
                    );
                }
            }
        });
        ui.horizontal_wrapped(|ui| {
            let before = self.filter.clone();
            let [dialects, models, kinds] = &self.choices;
            choice(ui, "Dialect", &mut self.filter.dialect, dialects);
            choice(ui, "Model", &mut self.filter.model, models);
            keep_with_label(ui, "Verdict", ui.spacing().combo_width);
            let label = ui.label("Verdict");
            egui::ComboBox::from_id_salt("corpus-verdict")
                .selected_text(self.filter.verdict.map_or("any", RowVerdict::name))
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.filter.verdict, None, "any");
                    for v in RowVerdict::ALL {
                        ui.selectable_value(&mut self.filter.verdict, Some(v), v.name());
                    }
                })
                .response
                .labelled_by(label.id);
            choice(ui, "Finding", &mut self.filter.kind, kinds);
            keep_with_label(ui, "Text", TEXT_FILTER_WIDTH);
            let label = ui.label("Text");
            ui.add(
                egui::TextEdit::singleline(&mut self.filter.text)
                    .desired_width(TEXT_FILTER_WIDTH)
                    .hint_text("file, host, model, problem…"),
            )
            .labelled_by(label.id);
            if self.filter != Filter::default() && ui.button("Clear filters").clicked() {
                self.filter = Filter::default();
            }
            if self.filter != before {
                self.view_dirty = true;
                self.last_review = None;
            }
            ui.separator();
            let shown = self.view.len();
            let not_ok = self.view.iter().filter(|&&i| !self.rows[i].ok()).count();
            ui.label(format!(
                "{shown} of {} streams, {not_ok} not OK",
                self.rows.len()
            ));
            let selected = self.selected.and_then(|i| self.rows.get(i));
            if ui
                .add_enabled(selected.is_some(), egui::Button::new("Open in Replay"))
                .on_hover_text("Open the selected stream in Replay (or double-click its row)")
                .clicked()
                && let Some(r) = selected
            {
                open_in_replay(r, queue);
            }
        });
        if self.view_dirty && self.last_review.is_none() {
            self.review();
        }
    }

    fn table_ui(&mut self, ui: &mut Ui, queue: &mut ActionQueue) {
        if self.rows.is_empty() {
            ui.add_space(30.0);
            ui.vertical_centered(|ui| {
                if self.started {
                    ui.label("No captures here yet: recordings (.ron), raw bodies (.sse, .txt, .jsonl), complete responses (.json) and captures (.har, .yaml) are scanned.");
                } else {
                    ui.label("Scan a folder of captures: every stream becomes a row, with its dialect, model, verdict and findings.");
                }
            });
            return;
        }
        let widths = [240.0, 120.0, 150.0, 150.0, 70.0, 45.0, 75.0];
        let heads = [
            ("File", SortBy::File),
            ("Dialect", SortBy::Dialect),
            ("Host", SortBy::Host),
            ("Model", SortBy::Model),
            ("Verdict", SortBy::Verdict),
            ("Calls", SortBy::Calls),
            ("1st call", SortBy::FirstCall),
            ("Findings", SortBy::Findings),
        ];
        ui.horizontal(|ui| {
            for (i, (name, by)) in heads.iter().enumerate() {
                let arrow = match self.sort {
                    (s, false) if s == *by => " ⏶",
                    (s, true) if s == *by => " ⏷",
                    _ => "",
                };
                let w = widths.get(i).copied().unwrap_or(200.0);
                let b = egui::Button::new(RichText::new(format!("{name}{arrow}")).strong())
                    .frame(false)
                    .min_size(egui::vec2(w, 0.0));
                if ui
                    .add_sized([w, ROW_H], b)
                    .on_hover_text("Sort by this column (again: reverse)")
                    .clicked()
                {
                    self.sort = if self.sort.0 == *by {
                        (*by, !self.sort.1)
                    } else {
                        (*by, false)
                    };
                    self.review();
                }
            }
        });
        ui.separator();
        let (err, warn, ok) = (
            super::style::err_color(ui),
            super::style::warn_color(ui),
            super::style::ok_color(ui),
        );
        let view = &self.view;
        let rows = &self.rows;
        let mut clicked = None;
        let mut opened = None;
        egui::ScrollArea::vertical()
            .id_salt("corpus-table")
            .auto_shrink([false, false])
            .show_rows(ui, ROW_H, view.len(), |ui, range| {
                for &i in &view[range] {
                    let r = &rows[i];
                    // As wide as the view: the last column takes what is left, clipped.
                    let (rect, resp) = ui.allocate_exact_size(
                        egui::vec2(ui.available_width(), ROW_H),
                        Sense::click(),
                    );
                    let name = file_label(r);
                    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &name));
                    if self.selected == Some(i) {
                        ui.painter()
                            .rect_filled(rect, 2.0, ui.visuals().selection.bg_fill);
                    } else if resp.hovered() {
                        ui.painter().rect_filled(
                            rect,
                            2.0,
                            ui.visuals().widgets.hovered.weak_bg_fill,
                        );
                    }
                    let verdict_color = match r.verdict {
                        RowVerdict::Ok => ok,
                        RowVerdict::NotOk => err,
                        RowVerdict::Unreadable => warn,
                        RowVerdict::Skipped => ui.visuals().weak_text_color(),
                    };
                    let first_call = r
                        .first_call_us
                        .map(|us| format!("{:.0} ms", us as f64 / 1000.0))
                        .unwrap_or_default();
                    let calls = r.calls.map(|n| n.to_string()).unwrap_or_default();
                    let cells: [(String, Option<egui::Color32>); 8] = [
                        (name.clone(), None),
                        (r.dialect.clone().unwrap_or_default(), None),
                        (r.provider_host.clone().unwrap_or_default(), None),
                        (r.model.clone().unwrap_or_default(), None),
                        (r.verdict.name().to_owned(), Some(verdict_color)),
                        (calls, None),
                        (first_call, None),
                        (
                            r.error
                                .clone()
                                .unwrap_or_else(|| r.finding_kinds.clone().unwrap_or_default()),
                            None,
                        ),
                    ];
                    let mut x = rect.left() + 4.0;
                    let font = egui::TextStyle::Body.resolve(ui.style());
                    let text_color = ui.visuals().text_color();
                    for (k, (text, color)) in cells.iter().enumerate() {
                        let w = widths
                            .get(k)
                            .copied()
                            .unwrap_or((rect.right() - x).max(0.0));
                        let cell = egui::Rect::from_min_size(
                            egui::pos2(x, rect.top()),
                            egui::vec2(w - 8.0, ROW_H),
                        );
                        let text = sse_replay_core::text::visible(text);
                        ui.painter().with_clip_rect(cell).text(
                            egui::pos2(x, rect.center().y),
                            egui::Align2::LEFT_CENTER,
                            text,
                            font.clone(),
                            color.unwrap_or(text_color),
                        );
                        x += w;
                    }
                    let resp = resp.on_hover_text(format!(
                        "{} (stream {}){}",
                        r.source_file,
                        r.stream,
                        r.problems
                            .as_deref()
                            .or(r.error.as_deref())
                            .map(|p| format!("\n{p}"))
                            .unwrap_or_default()
                    ));
                    if resp.double_clicked() {
                        opened = Some(i);
                    } else if resp.clicked() {
                        clicked = Some(i);
                    }
                }
            });
        if self.first_rows.is_none()
            && !self.view.is_empty()
            && let Some(l) = &self.loading
        {
            // The first rows were drawn in this frame.
            let t = l.started.elapsed();
            self.first_rows = Some(t);
            if self.timing {
                sse_replay_core::log_line!(
                    "timing: corpus first rows drawn {:.0} ms after the scan started",
                    t.as_secs_f64() * 1000.0
                );
            }
        }
        if let Some(i) = clicked {
            self.selected = Some(i);
        }
        if let Some(i) = opened {
            self.selected = Some(i);
            if let Some(r) = self.rows.get(i) {
                open_in_replay(r, queue);
            }
        }
    }

    fn charts_ui(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.strong("Finding kinds by");
            let before = self.group_by;
            for (g, name) in [
                (GroupBy::Dialect, "dialect"),
                (GroupBy::Host, "provider"),
                (GroupBy::Model, "model"),
            ] {
                ui.selectable_value(&mut self.group_by, g, name);
            }
            if self.group_by != before {
                self.review();
            }
        });
        let c = &self.charts;
        if c.kinds.is_empty() {
            ui.weak("No findings in the streams shown.");
        } else {
            // Horizontal bars: one row per kind (its name on the axis, one mark per row), one
            // bar per group in it.
            let n_groups = c.groups.len().max(1) as f64;
            let width = 0.8 / n_groups;
            let kinds: Vec<String> = c.kinds.iter().map(|(k, _)| k.clone()).collect();
            let rows = kinds.len();
            let names: Vec<String> = kinds.iter().rev().cloned().collect();
            Plot::new("corpus-kinds")
                .height(40.0 + 26.0 * rows as f32)
                .legend(Legend::default().position(egui_plot::Corner::RightBottom))
                .allow_zoom(false)
                .allow_drag(false)
                .allow_scroll(false)
                .include_x(0.0)
                .include_x(100.0)
                .x_axis_label("% of the group's streams")
                .y_grid_spacer(egui_plot::uniform_grid_spacer(|_| [1.0, 5.0, 10.0]))
                .y_axis_formatter(move |m, _| axis_name(&names, m.value))
                .show(ui, |p| {
                    for (g, name) in c.groups.iter().enumerate() {
                        let bars = c
                            .kinds
                            .iter()
                            .enumerate()
                            .map(|(k, (kind, shares))| {
                                // The first row on top.
                                let y = (rows - 1 - k) as f64 + 0.4 - width * (g as f64 + 0.5);
                                Bar::new(y, shares.get(g).copied().unwrap_or(0.0))
                                    .width(width * 0.95)
                                    .name(kind)
                            })
                            .collect();
                        p.bar_chart(BarChart::new(name.clone(), bars).horizontal());
                    }
                });
        }
        ui.add_space(8.0);
        ui.strong("Naive strategies: share of streams they get wrong");
        let names: Vec<String> = c
            .naive
            .iter()
            .rev()
            .map(|(n, _, _)| (*n).to_owned())
            .collect();
        Plot::new("corpus-naive")
            .height(40.0 + 26.0 * c.naive.len() as f32)
            .allow_zoom(false)
            .allow_drag(false)
            .allow_scroll(false)
            .include_x(0.0)
            .include_x(100.0)
            .x_axis_label("% of the streams it ran on")
            .y_grid_spacer(egui_plot::uniform_grid_spacer(|_| [1.0, 5.0, 10.0]))
            .y_axis_formatter(move |m, _| axis_name(&names, m.value))
            .show(ui, |p| {
                let bars = c
                    .naive
                    .iter()
                    .enumerate()
                    .map(|(i, (name, share, ran))| {
                        // The first strategy on top.
                        Bar::new((c.naive.len() - 1 - i) as f64, *share)
                            .width(0.7)
                            .name(format!("{name} ({ran} streams)"))
                    })
                    .collect();
                p.bar_chart(BarChart::new("fails", bars).horizontal());
            });
        ui.add_space(8.0);
        ui.strong("Time to the first call");
        let bin = c.ttfc_bin_ms;
        Plot::new("corpus-ttfc")
            .height(200.0)
            .allow_zoom(false)
            .allow_drag(false)
            .allow_scroll(false)
            .include_y(0.0)
            .x_axis_label("ms from the request")
            .y_axis_label("streams")
            .show(ui, |p| {
                let bars = c
                    .ttfc
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        Bar::new((i as f64 + 0.5) * bin, n as f64)
                            .width(bin * 0.95)
                            .name(format!(
                                "{:.0}–{:.0} ms",
                                i as f64 * bin,
                                (i + 1) as f64 * bin
                            ))
                    })
                    .collect();
                p.bar_chart(BarChart::new("streams", bars));
            });
    }
}

/// The name of row `value` of a bar chart (at whole numbers only).
fn axis_name(names: &[String], value: f64) -> String {
    let i = value.round();
    if (value - i).abs() < 1e-6 && i >= 0.0 {
        names.get(i as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

/// The file's name in the table: its name, and the stream number for a capture with several.
fn file_label(r: &StreamRow) -> String {
    let name = Path::new(&r.source_file).file_name().map_or_else(
        || r.source_file.clone(),
        |n| n.to_string_lossy().into_owned(),
    );
    if r.stream > 1 {
        format!("{name} #{}", r.stream)
    } else {
        name
    }
}

/// Queue opening the row's stream in Replay.
fn open_in_replay(r: &StreamRow, queue: &mut ActionQueue) {
    let path = PathBuf::from(&r.source_file);
    queue.push(Action::ShowTab(Tab::Replay));
    if r.stream > 1 {
        queue.push(Action::OpenStream(path, r.stream as usize));
    } else {
        queue.push(Action::OpenPath(path, OpenTarget::Primary));
    }
}

/// The width of the filter row's text field.
const TEXT_FILTER_WIDTH: f32 = 200.0;

/// The width of a filter's drop-down list.
const CHOICE_WIDTH: f32 = 150.0;

/// In a wrapping row, starts a new line unless `label` and its control (`control_width` wide, plus
/// its frame) both fit on this one: a label never ends a line with its control on the next.
fn keep_with_label(ui: &mut Ui, label: &str, control_width: f32) {
    let text = egui::WidgetText::from(label).into_galley(
        ui,
        Some(egui::TextWrapMode::Extend),
        f32::INFINITY,
        egui::TextStyle::Body,
    );
    let s = ui.spacing();
    let needed = text.size().x
        + 2.0 * s.item_spacing.x
        + control_width
        + 2.0 * s.button_padding.x
        + s.icon_width;
    if ui.available_size_before_wrap().x < needed {
        ui.end_row();
    }
}

/// A labelled combo box choosing one of `values` (or any).
fn choice(ui: &mut Ui, label: &str, value: &mut Option<String>, values: &[String]) {
    keep_with_label(ui, label, CHOICE_WIDTH);
    let l = ui.label(label);
    egui::ComboBox::from_id_salt(("corpus-choice", label))
        .selected_text(value.as_deref().unwrap_or("any"))
        .width(CHOICE_WIDTH)
        .show_ui(ui, |ui| {
            ui.selectable_value(value, None, "any");
            for v in values {
                ui.selectable_value(value, Some(v.clone()), v);
            }
        })
        .response
        .labelled_by(l.id);
}

fn distinct(rows: &[StreamRow], f: impl Fn(&StreamRow) -> Option<String>) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().filter_map(f).collect();
    v.sort();
    v.dedup();
    v
}

fn distinct_kinds(rows: &[StreamRow]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .flat_map(|r| r.kinds().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Drop the rows of `path` (keeping the others' indexes right).
fn remove_file(rows: &mut Vec<StreamRow>, by_file: &mut HashMap<PathBuf, Vec<usize>>, path: &Path) {
    let Some(mut gone) = by_file.remove(path) else {
        return;
    };
    gone.sort_unstable();
    for &i in gone.iter().rev() {
        rows.remove(i);
    }
    for idx in by_file.values_mut() {
        for i in idx.iter_mut() {
            *i -= gone.partition_point(|&g| g < *i);
        }
    }
}

/// The charts over the rows in `view`.
fn charts(rows: &[StreamRow], view: &[usize], group_by: GroupBy) -> Charts {
    let group_of = |r: &StreamRow| {
        match group_by {
            GroupBy::Dialect => r.dialect.clone(),
            GroupBy::Host => r.provider_host.clone(),
            GroupBy::Model => r.model.clone(),
        }
        .unwrap_or_else(|| "(unknown)".into())
    };
    // The biggest groups get their own series.
    let mut sizes: BTreeMap<String, u64> = BTreeMap::new();
    for &i in view {
        *sizes.entry(group_of(&rows[i])).or_default() += 1;
    }
    let mut order: Vec<(String, u64)> = sizes.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut groups: Vec<String> = order
        .iter()
        .take(CHART_GROUPS)
        .map(|g| g.0.clone())
        .collect();
    let other = order.len() > CHART_GROUPS;
    if other {
        groups.push("other".into());
    }
    let slot = |g: &str| {
        groups
            .iter()
            .position(|x| x == g)
            .unwrap_or(groups.len().saturating_sub(1))
    };
    let mut streams = vec![0u64; groups.len()];
    let mut per_kind: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut naive_ran = vec![0u64; Strategy::ALL.len()];
    let mut naive_failed = vec![0u64; Strategy::ALL.len()];
    let mut times = Vec::new();
    for &i in view {
        let r = &rows[i];
        let s = slot(&group_of(r));
        streams[s] += 1;
        for k in r.kinds() {
            per_kind
                .entry(k.to_owned())
                .or_insert_with(|| vec![0; groups.len()])[s] += 1;
        }
        for (j, a) in r.naive.iter().enumerate() {
            if let Some(agrees) = a {
                naive_ran[j] += 1;
                naive_failed[j] += u64::from(!agrees);
            }
        }
        if let Some(t) = r.first_call_us {
            times.push(t);
        }
    }
    let mut kinds: Vec<(String, Vec<f64>)> = per_kind
        .into_iter()
        .map(|(k, counts)| {
            let shares = counts
                .iter()
                .zip(&streams)
                .map(|(&n, &of)| {
                    if of == 0 {
                        0.0
                    } else {
                        n as f64 * 100.0 / of as f64
                    }
                })
                .collect();
            (k, shares)
        })
        .collect();
    kinds.sort_by(|a, b| {
        let total = |v: &Vec<f64>| v.iter().sum::<f64>();
        total(&b.1).total_cmp(&total(&a.1)).then(a.0.cmp(&b.0))
    });
    kinds.truncate(CHART_KINDS);
    let naive = Strategy::ALL
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let share = if naive_ran[j] == 0 {
                0.0
            } else {
                naive_failed[j] as f64 * 100.0 / naive_ran[j] as f64
            };
            (s.name(), share, naive_ran[j])
        })
        .collect();
    // 20 bins up to the 99th percentile (a few slow streams do not squash the rest).
    let top = scan::quantile_disc(&mut times, 0.99).unwrap_or(0) as f64 / 1000.0;
    let bin = ((top / 20.0).max(1.0) * 10.0).ceil() / 10.0;
    let mut ttfc = vec![0u64; 21];
    for t in &times {
        let k = ((*t as f64 / 1000.0) / bin) as usize;
        ttfc[k.min(20)] += 1;
    }
    Charts {
        groups,
        kinds,
        naive,
        ttfc_bin_ms: bin,
        ttfc,
    }
}

// ---------------------------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------------------------

/// A file's identity for noticing changes: size and modification time.
type Stamp = (u64, Option<SystemTime>);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()))
}

/// Start scanning `folder`: the files are listed, then scanned on every core; afterwards the
/// folder is polled every [`POLL_EVERY`] for new, changed and removed files.
fn spawn(folder: PathBuf, ctx: egui::Context) -> Loading {
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let found = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let (s, f, d) = (stop.clone(), found.clone(), done.clone());
    let spawned = std::thread::Builder::new()
        .name("corpus scan".into())
        .spawn(move || work(&folder, &tx, &s, &f, &d, &ctx));
    if spawned.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    Loading {
        rx,
        stop,
        found,
        done,
        started: Instant::now(),
        first_pass_done: false,
    }
}

fn list(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    scan::walk(folder, true, &mut |found| {
        if let scan::Found::File(p) = found {
            files.push(p);
        }
        true
    });
    files
}

fn scan_one(path: &Path) -> Vec<StreamRow> {
    let mut rows = Vec::new();
    let name = path.display().to_string();
    scan::scan_file(path, &name, &ScanOptions::default(), |r| {
        rows.push(r.stream)
    });
    rows
}

fn work(
    folder: &Path,
    tx: &mpsc::Sender<Msg>,
    stop: &AtomicBool,
    found: &AtomicU64,
    done: &AtomicU64,
    ctx: &egui::Context,
) {
    let files = list(folder);
    found.store(files.len() as u64, Ordering::Relaxed);
    let mut known: HashMap<PathBuf, Option<Stamp>> =
        files.iter().map(|p| (p.clone(), stamp(p))).collect();
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { return };
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let rows = scan_one(path);
                    done.fetch_add(1, Ordering::Relaxed);
                    if tx.send(Msg::Rows(path.clone(), rows)).is_err() {
                        return;
                    }
                    ctx.request_repaint();
                }
            });
        }
    });
    if stop.load(Ordering::Relaxed) || tx.send(Msg::Listed).is_err() {
        return;
    }
    ctx.request_repaint();
    // Watch: new or changed files are scanned, removed ones dropped.
    loop {
        let t0 = Instant::now();
        while t0.elapsed() < POLL_EVERY {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let now = list(folder);
        let mut changed = false;
        let mut seen = std::collections::HashSet::new();
        for p in now {
            let st = stamp(&p);
            seen.insert(p.clone());
            if known.get(&p) == Some(&st) {
                continue;
            }
            let rows = scan_one(&p);
            known.insert(p.clone(), st);
            if known.len() as u64 > found.load(Ordering::Relaxed) {
                found.store(known.len() as u64, Ordering::Relaxed);
                done.store(known.len() as u64, Ordering::Relaxed);
            }
            if tx.send(Msg::Rows(p, rows)).is_err() {
                return;
            }
            changed = true;
        }
        let gone: Vec<PathBuf> = known
            .keys()
            .filter(|p| !seen.contains(*p))
            .cloned()
            .collect();
        for p in gone {
            known.remove(&p);
            if tx.send(Msg::Removed(p)).is_err() {
                return;
            }
            changed = true;
        }
        if changed {
            ctx.request_repaint();
        }
    }
}
