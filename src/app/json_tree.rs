//! A parsed JSON value as a collapsible tree.

use egui::{RichText, Ui};
use serde_json::Value;

/// Show `value` as a tree; `id` keeps the open/closed state apart between calls.
pub fn json_tree_ui(ui: &mut Ui, id: egui::Id, value: &Value) {
    node(ui, id, None, value, 0);
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", super::style::visible(s, 2000)),
        other => other.to_string(),
    }
}

fn node(ui: &mut Ui, id: egui::Id, key: Option<&str>, v: &Value, depth: usize) {
    let prefix = key.map(|k| format!("{k}: ")).unwrap_or_default();
    match v {
        Value::Object(m) if !m.is_empty() => {
            egui::CollapsingHeader::new(
                RichText::new(format!("{prefix}{{…}} {} keys", m.len())).monospace(),
            )
            .id_salt(id)
            .default_open(depth < 2)
            .show(ui, |ui| {
                for (k, child) in m.iter().take(500) {
                    node(ui, id.with(k), Some(k), child, depth + 1);
                }
                if m.len() > 500 {
                    ui.weak(format!("… {} more", m.len() - 500));
                }
            });
        }
        Value::Array(a) if !a.is_empty() => {
            egui::CollapsingHeader::new(
                RichText::new(format!("{prefix}[…] {} items", a.len())).monospace(),
            )
            .id_salt(id)
            .default_open(depth < 1)
            .show(ui, |ui| {
                for (i, child) in a.iter().enumerate().take(500) {
                    node(ui, id.with(i), Some(&i.to_string()), child, depth + 1);
                }
                if a.len() > 500 {
                    ui.weak(format!("… {} more", a.len() - 500));
                }
            });
        }
        other => {
            ui.horizontal(|ui| {
                ui.spacing_mut().item_spacing.x = 0.0;
                ui.label(RichText::new(prefix).monospace().weak());
                ui.label(RichText::new(scalar(other)).monospace());
            });
        }
    }
}
