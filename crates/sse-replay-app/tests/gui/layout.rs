//! The Replay tab's layout holds for any header height (a title that wraps to two lines, a long
//! file name, a large font) at a laptop's 1024×700 and a desktop's 1600×1000: no region draws over
//! another (compared on the rects of every widget egui reports, scroll content clipped to its
//! scroll area), nothing leaves the window, and the lower area opens on a click whichever view is
//! asked for.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::PathBuf;

use common::{harness_sized, wait_loaded};
use egui::{Pos2, Rect};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use sse_replay_app::{App, ScriptedDialogs, Settings, Source};

fn recording(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../recordings")).join(name)
}

fn open(source: Source, w: f32, h: f32, zoom: f32) -> Harness<'static, App> {
    let app =
        App::new(Settings::default(), Box::new(ScriptedDialogs::default())).with_initial(source);
    let mut h = harness_sized(app, w, h, true);
    if zoom != 1.0 {
        h.ctx.set_zoom_factor(zoom);
    }
    wait_loaded(&mut h);
    h.run();
    h
}

/// One widget as drawn: its pane (the top-level panel it is in), its label and the part of its
/// rect that can be seen (scroll content clipped to its scroll area).
#[derive(Debug)]
struct Drawn {
    pane: usize,
    what: String,
    rect: Rect,
}

fn to_rect(r: egui::accesskit::Rect) -> Rect {
    Rect::from_min_max(
        Pos2::new(r.x0 as f32, r.y0 as f32),
        Pos2::new(r.x1 as f32, r.y1 as f32),
    )
}

/// Every widget with a rect, by pane. A panel's resize handle belongs to the panel before it.
/// Inside a scroll area (a container beside a scroll bar) a widget is seen only within the scroll
/// bar's span.
fn drawn(h: &Harness<'_, App>) -> Vec<Drawn> {
    fn walk(n: egui_kittest::Node<'_>, pane: usize, clip: Rect, out: &mut Vec<Drawn>) {
        let ak = n.accesskit_node();
        let children: Vec<_> = n.children().collect();
        if let Some(b) = ak.bounding_box() {
            let mut rect = to_rect(b);
            if ak.clips_children() {
                // A region that clips what it holds (the app's fixed regions).
                let inner = clip.intersect(rect);
                for c in children {
                    walk(c, pane, inner, out);
                }
                return;
            }
            if ak.role() == egui::accesskit::Role::Splitter {
                // A resize handle reaches a few points past its panel's edge on each side (its
                // grab area): the edge itself is what must not cross another pane.
                let size = (rect.size() - egui::vec2(6.0, 6.0)).max(egui::vec2(1.0, 1.0));
                rect = Rect::from_center_size(rect.center(), size);
            }
            let rect = rect.intersect(clip);
            if rect.height() > 0.5 && rect.width() > 0.5 {
                out.push(Drawn {
                    pane,
                    what: format!("{:?} {:?}", ak.role(), ak.label().unwrap_or_default()),
                    rect,
                });
            }
            // A label's text runs are inside it: the label is enough.
            return;
        }
        // A scroll area's content is the container just before its scroll bar: seen only within
        // the bar's span.
        for (i, c) in children.iter().enumerate() {
            let bar = children.get(i + 1).and_then(|next| {
                let ak = next.accesskit_node();
                (ak.role() == egui::accesskit::Role::ScrollBar)
                    .then(|| ak.bounding_box())
                    .flatten()
            });
            let inner = match bar {
                Some(b) => {
                    let mut r = clip;
                    r.min.y = r.min.y.max(b.y0 as f32);
                    r.max.y = r.max.y.min(b.y1 as f32);
                    r
                }
                None => clip,
            };
            walk(*c, pane, inner, out);
        }
    }
    fn panes(n: egui_kittest::Node<'_>, pane: &mut usize, out: &mut Vec<Drawn>) {
        for c in n.children() {
            let role = c.accesskit_node().role();
            if role == egui::accesskit::Role::Pane {
                *pane += 1;
                walk(c, *pane, Rect::EVERYTHING, out);
            } else if role == egui::accesskit::Role::Splitter {
                walk(c, *pane, Rect::EVERYTHING, out);
            } else if matches!(
                role,
                egui::accesskit::Role::GenericContainer | egui::accesskit::Role::Window
            ) {
                panes(c, pane, out);
            }
        }
    }
    let mut out = Vec::new();
    let mut pane = 0;
    panes(h.root(), &mut pane, &mut out);
    out
}

/// The widgets drawn past the edge of a `w`×`hgt` window, as problems to report.
fn outside_the_window(all: &[Drawn], w: f32, hgt: f32) -> Vec<String> {
    let window = Rect::from_min_size(Pos2::ZERO, egui::vec2(w, hgt)).expand(0.5);
    all.iter()
        .filter(|d| !window.contains_rect(d.rect))
        .map(|d| format!("outside the window: {} at {:?}", d.what, d.rect))
        .collect()
}

/// Nothing leaves the window and no two panes' widgets overlap.
fn assert_no_overlap(h: &Harness<'_, App>, w: f32, hgt: f32, zoom: f32) {
    // The rects are in physical pixels: the window's size whatever the zoom.
    let _ = zoom;
    let all = drawn(h);
    assert!(all.len() > 30, "too few widgets: {all:#?}");
    let mut problems = outside_the_window(&all, w, hgt);
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            if a.pane == b.pane {
                continue;
            }
            let x = a.rect.intersect(b.rect);
            if x.width() > 1.0 && x.height() > 1.0 {
                problems.push(format!(
                    "{} at {:?} overlaps {} at {:?}",
                    a.what, a.rect, b.what, b.rect
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A row of the event list (`e12      …  292 B …`) is on screen.
fn event_row_shown(h: &Harness<'_, App>) -> bool {
    h.query_all_by(|n| {
        n.label().is_some_and(|l| {
            let mut c = l.chars();
            c.next() == Some('e')
                && c.next().is_some_and(|d| d.is_ascii_digit())
                && l.contains(" B ")
        })
    })
    .count()
        > 0
}

/// The title wraps to two lines at 1024×700: the layout holds, and the lower area opens on the
/// event list and on the timeline when asked.
#[test]
fn a_two_line_title_on_a_laptop_screen_holds_and_the_lower_views_open() {
    let (w, hgt) = (1024.0, 700.0);
    let mut h = open(Source::File(recording("quirk-cumulative.ron")), w, hgt, 1.0);
    // The title, then the source line wrapping onto a second line.
    let header = h.get_by_label_contains("quirk-cumulative.ron · ");
    assert!(
        header.rect().height() > 30.0,
        "the header wraps: {:?}",
        header.rect()
    );
    assert_no_overlap(&h, w, hgt, 1.0);
    h.get_by_label("Event list").click();
    h.run();
    assert!(event_row_shown(&h), "the event list opened");
    assert_no_overlap(&h, w, hgt, 1.0);
    h.get_by_label("Timeline").click();
    h.run();
    h.get_by_label_contains("index 0 get_weather: ");
    assert_no_overlap(&h, w, hgt, 1.0);
    // The bytes, wrapped: still inside the window.
    h.get_by_label("Bytes as received").click();
    h.run();
    h.get_by_label("Wrap long lines").click();
    h.run();
    assert!(h.state().settings.wrap_bytes);
    assert_no_overlap(&h, w, hgt, 1.0);
}

#[test]
fn a_two_line_title_on_a_desktop_screen_holds() {
    let (w, hgt) = (1600.0, 1000.0);
    let mut h = open(Source::File(recording("quirk-cumulative.ron")), w, hgt, 1.0);
    assert_no_overlap(&h, w, hgt, 1.0);
    h.get_by_label("Event list").click();
    h.run();
    assert!(event_row_shown(&h), "the event list opened");
    assert_no_overlap(&h, w, hgt, 1.0);
}

/// A long file name (the header wraps) and a large font (zoomed 1.3×).
#[test]
fn a_long_file_name_and_a_large_font_hold() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!(
        "{}.sse",
        "a-very-long-capture-name-from-a-proxy-session-".repeat(3)
    );
    let path = dir.path().join(name);
    let rec = sse_replay_core::recording::Recording::from_bytes(
        &std::fs::read(recording("openai-chat-weather.ron")).unwrap(),
    )
    .unwrap();
    std::fs::write(&path, rec.body()).unwrap();
    for (w, hgt) in [(1024.0, 700.0), (1600.0, 1000.0)] {
        let mut h = open(Source::File(path.clone()), w, hgt, 1.3);
        assert_no_overlap(&h, w, hgt, 1.3);
        h.get_by_label("Event list").click();
        h.run();
        assert!(event_row_shown(&h), "the event list opened at {w}×{hgt}");
        assert_no_overlap(&h, w, hgt, 1.3);
    }
}

/// Every widget of a form tab, including the ones in the same pane: no two overlap. A grid row
/// whose contents wrap (the nine dialects of Test a client at 1024 wide) must take its wrapped
/// height rather than draw its second line over the next row.
fn assert_no_overlap_in_pane(h: &Harness<'_, App>, tab: &str, w: f32, hgt: f32) {
    let all = drawn(h);
    assert!(all.len() > 10, "{tab}: too few widgets: {all:#?}");
    let mut problems = outside_the_window(&all, w, hgt);
    // egui's scroll bars float over the content's edge by design, and a widget drawn with its
    // label (a combo box from_label) is reported whole around its parts: neither is an overlap.
    let leaves: Vec<&Drawn> = all
        .iter()
        .filter(|d| !d.what.starts_with("ScrollBar"))
        .collect();
    for (i, a) in leaves.iter().enumerate() {
        for b in &leaves[i + 1..] {
            let x = a.rect.intersect(b.rect);
            let nested = a.rect.expand(0.5).contains_rect(b.rect)
                || b.rect.expand(0.5).contains_rect(a.rect);
            if x.width() > 1.0 && x.height() > 1.0 && !nested {
                problems.push(format!(
                    "{} at {:?} overlaps {} at {:?}",
                    a.what, a.rect, b.what, b.rect
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{tab} at {w}×{hgt}:\n{}",
        problems.join("\n")
    );
}

/// The Corpus tab's filters: each label and its control stay on one line when the row wraps. A
/// control is named by its label, the widget drawn just before it.
fn assert_filters_beside_their_labels(h: &Harness<'_, App>, w: f32, hgt: f32) {
    let all = drawn(h);
    for control in [
        "ComboBox \"Dialect\"",
        "ComboBox \"Model\"",
        "ComboBox \"Verdict\"",
        "ComboBox \"Finding\"",
        "TextInput \"Text\"",
    ] {
        let i = all
            .iter()
            .position(|d| d.what == control)
            .unwrap_or_else(|| panic!("{control} not in {all:#?}"));
        let (l, c) = (&all[i - 1], &all[i]);
        assert!(
            (l.rect.center().y - c.rect.center().y).abs() < 6.0,
            "{control} and its label on different lines at {w}×{hgt}: {l:?} {c:?}"
        );
    }
}

#[test]
fn every_form_tab_holds_without_overlap_on_a_laptop_and_a_desktop_screen() {
    for (w, hgt) in [(1024.0, 700.0), (1600.0, 1000.0)] {
        let mut h = open(Source::File(recording("seed-example.ron")), w, hgt, 1.0);
        for tab in [
            "Compare two",
            "Stub builder",
            "Recorder",
            "Proxy",
            "Test a client",
            "Corpus",
        ] {
            h.get_by_label(tab).click();
            h.run();
            h.run();
            assert_no_overlap_in_pane(&h, tab, w, hgt);
            if tab == "Corpus" {
                assert_filters_beside_their_labels(&h, w, hgt);
            }
        }
    }
}
