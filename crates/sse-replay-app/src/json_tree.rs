//! A parsed JSON value as a collapsible tree.

use egui::{RichText, Ui};
use serde_json::Value;

/// Show `v` as a tree; `id` keeps the open/closed state apart between calls.
pub fn json_tree_ui(ui: &mut Ui, id: egui::Id, v: &Value) {
    node(ui, id, None, v, 0, &mut Marks::default());
}

/// [`json_tree_ui`] with the values at `marked` (JSON Pointers, RFC 6901) highlighted in the
/// error colour, `why` on hover (the typewriter preview's contradicted values).
pub fn json_tree_marked_ui(ui: &mut Ui, id: egui::Id, v: &Value, marked: &[String], why: &str) {
    let mut marks = Marks {
        path: String::new(),
        marked,
        why,
    };
    node(ui, id, None, v, 0, &mut marks);
}

/// The path of the node being drawn and the paths to highlight.
#[derive(Default)]
struct Marks<'a> {
    path: String,
    marked: &'a [String],
    why: &'a str,
}

impl Marks<'_> {
    fn here(&self) -> bool {
        self.marked.contains(&self.path)
    }

    /// Run `f` with `token` appended to the path (escaped as a JSON Pointer token).
    fn child<R>(&mut self, token: &str, f: impl FnOnce(&mut Self) -> R) -> R {
        if self.marked.is_empty() {
            return f(self);
        }
        let len = self.path.len();
        self.path.push('/');
        self.path
            .push_str(&token.replace('~', "~0").replace('/', "~1"));
        let r = f(self);
        self.path.truncate(len);
        r
    }

    fn paint(&self, ui: &Ui, text: RichText) -> RichText {
        if self.here() {
            text.color(super::style::err_color(ui)).strong()
        } else {
            text
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", super::style::visible(s, 2000)),
        other => other.to_string(),
    }
}

fn node(
    ui: &mut Ui,
    id: egui::Id,
    key: Option<&str>,
    v: &Value,
    depth: usize,
    marks: &mut Marks<'_>,
) {
    let prefix = key.map(|k| format!("{k}: ")).unwrap_or_default();
    match v {
        Value::Object(m) if !m.is_empty() => {
            let head = marks.paint(
                ui,
                RichText::new(format!(
                    "{prefix}{{…}} {}",
                    sse_replay_core::text::plural(m.len(), "key")
                ))
                .monospace(),
            );
            let r = egui::CollapsingHeader::new(head)
                .id_salt(id)
                .default_open(depth < 2)
                .show(ui, |ui| {
                    for (k, child) in m.iter().take(500) {
                        marks.child(k, |marks| {
                            node(ui, id.with(k), Some(k), child, depth + 1, marks);
                        });
                    }
                    if m.len() > 500 {
                        ui.weak(format!("… {} more", m.len() - 500));
                    }
                });
            if marks.here() {
                r.header_response.on_hover_text(marks.why);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let head = marks.paint(
                ui,
                RichText::new(format!("{prefix}[…] {} items", a.len())).monospace(),
            );
            let r = egui::CollapsingHeader::new(head)
                .id_salt(id)
                .default_open(depth < 1)
                .show(ui, |ui| {
                    for (i, child) in a.iter().enumerate().take(500) {
                        let k = i.to_string();
                        marks.child(&k, |marks| {
                            node(ui, id.with(i), Some(&k), child, depth + 1, marks);
                        });
                    }
                    if a.len() > 500 {
                        ui.weak(format!("… {} more", a.len() - 500));
                    }
                });
            if marks.here() {
                r.header_response.on_hover_text(marks.why);
            }
        }
        other => {
            ui.horizontal(|ui| {
                ui.spacing_mut().item_spacing.x = 0.0;
                ui.label(RichText::new(prefix).monospace().weak());
                let r = ui.label(marks.paint(ui, RichText::new(scalar(other)).monospace()));
                if marks.here() {
                    r.on_hover_text(marks.why);
                }
            });
        }
    }
}
