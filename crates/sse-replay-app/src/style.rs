//! Fonts, colours and small shared widgets (finding badges, ✓/✗ marks, U+FFFD highlighted).

use egui::text::{LayoutJob, TextFormat};
use egui::{Color32, RichText, Ui};

use sse_replay_core::findings::{Finding, Severity};

/// The bundled CJK face (a subset of Noto Sans CJK SC, see `assets/fonts/README.md`).
const CJK_FONT: &[u8] = include_bytes!("../../../assets/fonts/NotoSansCJKsc-Regular-subset.otf");

/// Symbols egui's faces lack: U+FFFD, ✓ ✗, ①②③, ⏎ (a subset of DejaVu Sans).
const SYMBOLS_FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-symbols-subset.ttf");

/// Media controls DejaVu lacks: ⏵ ⏸ ⏹ ⏺ (a subset of Noto Sans Symbols 2).
const MEDIA_FONT: &[u8] = include_bytes!("../../../assets/fonts/NotoSansSymbols2-media-subset.ttf");

/// Emoji egui's own faces lack (🌧 🌤 🌡 🙂 🤖 🥶, skin tones, U+FE0F): a subset of Noto Emoji.
const EMOJI_FONT: &[u8] = include_bytes!("../../../assets/fonts/NotoEmoji-Regular-subset.ttf");

/// The app icon.
pub const ICON_PNG: &[u8] = include_bytes!("../../../assets/icon.png");

/// The name of the bundled CJK face in egui's font definitions: its presence says the app's
/// fonts are the ones in use ([`ensure_fonts`]).
const CJK_FACE: &str = "noto-cjk-sc";

/// Add the CJK face, then the two symbol subsets, as fallbacks to both families, so `深圳`, `�`,
/// `✓` and `⏸` render everywhere; then egui's emoji faces and, last, the emoji they lack, so any
/// single emoji a model writes is drawn. Called at start (and by the tests' context setup); the
/// fonts take effect at the start of the next pass.
pub fn install_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    let faces: [(&str, &'static [u8]); 3] = [
        (CJK_FACE, CJK_FONT),
        ("dejavu-symbols", SYMBOLS_FONT),
        ("noto-symbols2-media", MEDIA_FONT),
    ];
    for (name, bytes) in faces {
        fonts.font_data.insert(
            name.into(),
            std::sync::Arc::new(egui::FontData::from_static(bytes)),
        );
        for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
            fonts.families.entry(family).or_default().push(name.into());
        }
    }
    // Hack (egui's monospace face) has the arrows and shapes the player uses (◀ ▶ ⇤ ⇥ ◆).
    fonts
        .families
        .entry(egui::FontFamily::Proportional)
        .or_default()
        .push("Hack".into());
    // egui's monochrome emoji faces go last, behind every face above, so the text they drew
    // before is drawn the same; they only fill in the in-app file browser's icons (📂 💾 🗀 🗋).
    let emoji = ["emoji-icon-font", "NotoEmoji-Regular"];
    fonts.font_data.insert(
        "noto-emoji-rest".into(),
        std::sync::Arc::new(egui::FontData::from_static(EMOJI_FONT)),
    );
    for list in fonts.families.values_mut() {
        list.retain(|f| !emoji.contains(&f.as_str()));
        if fonts.font_data.contains_key(emoji[0]) {
            list.extend(emoji.iter().map(|f| f.to_string()));
        }
        list.push("noto-emoji-rest".into());
    }
    ctx.set_fonts(fonts);
}

/// Install the app's fonts unless the fonts in use already hold them; called on every frame
/// (inside a pass, where egui's fonts exist). The fonts in use are asked, not a flag: whatever
/// replaced them — egui's memory restored from the settings file after the fonts were set (it
/// drops fonts still waiting for the next pass), a context reset — they come back on the next
/// pass. Returns whether they had to be installed (that frame then asks for one more pass).
pub fn ensure_fonts(ctx: &egui::Context) -> bool {
    let installed = ctx.fonts(|f| f.definitions().font_data.contains_key(CJK_FACE));
    if !installed {
        install_fonts(ctx);
        ctx.request_repaint();
    }
    !installed
}

/// Green that reads on both themes.
pub fn ok_color(ui: &Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(110, 200, 110)
    } else {
        Color32::from_rgb(20, 120, 40)
    }
}

/// Red for errors.
pub fn err_color(ui: &Ui) -> Color32 {
    ui.visuals().error_fg_color
}

/// Amber for warnings.
pub fn warn_color(ui: &Ui) -> Color32 {
    ui.visuals().warn_fg_color
}

/// Alternating backgrounds for fragment segments, and the highlight for the current one.
pub fn fragment_bg(ui: &Ui, n: u32, current: bool) -> Color32 {
    let dark = ui.visuals().dark_mode;
    match (current, dark, n % 2) {
        (true, true, _) => Color32::from_rgb(120, 90, 10),
        (true, false, _) => Color32::from_rgb(255, 220, 120),
        (false, true, 0) => Color32::from_rgb(30, 70, 125),
        (false, true, _) => Color32::from_rgb(25, 95, 70),
        (false, false, 0) => Color32::from_rgb(195, 220, 255),
        (false, false, _) => Color32::from_rgb(200, 240, 210),
    }
}

/// ✓ / ✗ / – for a check result.
pub fn mark(ui: &mut Ui, ok: Option<bool>) {
    match ok {
        Some(true) => ui.label(RichText::new("✓").color(ok_color(ui)).strong()),
        Some(false) => ui.label(RichText::new("✗").color(err_color(ui)).strong()),
        None => ui.label(RichText::new("–").weak()),
    };
}

/// A finding badge: the kind's label coloured by severity, with the explanation in a tooltip.
/// Returns the response so callers can react to clicks.
pub fn badge(ui: &mut Ui, finding: &Finding) -> egui::Response {
    let color = match finding.kind.severity() {
        Severity::Info => ui.visuals().hyperlink_color,
        Severity::Warn => warn_color(ui),
        Severity::Error => err_color(ui),
    };
    let text = if finding.count > 1 {
        format!("{} ×{}", finding.kind.label(), finding.count)
    } else {
        finding.kind.label().to_owned()
    };
    let r = ui.add(
        egui::Button::new(RichText::new(text).small().color(color))
            .stroke(egui::Stroke::new(1.0, color))
            .corner_radius(8.0)
            .small(),
    );
    let explanation = finding.kind.explanation();
    let message = finding.message.clone();
    let at = location_text(finding);
    r.on_hover_ui(move |ui| {
        ui.set_max_width(420.0);
        ui.label(RichText::new(explanation));
        ui.separator();
        ui.label(RichText::new(format!("{message}{at}")).weak());
    })
}

fn location_text(f: &Finding) -> String {
    let l = &f.first;
    let mut parts = Vec::new();
    if let Some(c) = l.chunk {
        parts.push(format!("chunk {c}"));
    }
    if let Some(e) = l.event {
        parts.push(format!("event {e}"));
    }
    if let Some(n) = l.fragment {
        parts.push(format!("fragment {n}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" (first at {})", parts.join(", "))
    }
}

/// Show a string with control characters made visible (`\n` as ⏎), cut to `max` characters.
pub fn visible(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4));
    for (n, ch) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        push_visible(&mut out, ch);
    }
    out
}

/// Append `ch` to `out`, control characters escaped: the core's one escaper.
pub use sse_replay_core::text::push_visible;

/// The replacement character: what decoding each network read on its own leaves where a character
/// was split across reads.
pub const REPLACEMENT: char = '\u{FFFD}';

/// Append `text` to `job`, each U+FFFD drawn white on red so the damage stands out.
pub fn append_marked(job: &mut LayoutJob, text: &str, format: &TextFormat) {
    let mark = TextFormat {
        color: Color32::WHITE,
        background: Color32::from_rgb(200, 40, 40),
        ..format.clone()
    };
    for (i, piece) in text.split(REPLACEMENT).enumerate() {
        if i > 0 {
            job.append("\u{FFFD}", 0.0, mark.clone());
        }
        if !piece.is_empty() {
            job.append(piece, 0.0, format.clone());
        }
    }
}

/// A label for text that may hold U+FFFD (highlighted, see [`append_marked`]).
pub fn marked_label(ui: &mut Ui, text: &str, color: Color32, monospace: bool) -> egui::Response {
    if !text.contains(REPLACEMENT) {
        let rich = RichText::new(text).color(color);
        return ui.label(if monospace { rich.monospace() } else { rich });
    }
    let style = if monospace {
        egui::TextStyle::Monospace
    } else {
        egui::TextStyle::Body
    };
    let format = TextFormat {
        font_id: style.resolve(ui.style()),
        color,
        ..Default::default()
    };
    let mut job = LayoutJob::default();
    append_marked(&mut job, text, &format);
    ui.label(job).on_hover_text(
        "\u{FFFD} (red): U+FFFD, the replacement character. A character was split across two network reads and decoding each read on its own destroyed it.",
    )
}

/// Format microseconds as milliseconds.
pub fn ms(t_micros: u64) -> String {
    format!("{:.1} ms", t_micros as f64 / 1000.0)
}

/// Whether `a`'s times are real: recorded reads with their arrival times (a raw body, or an import
/// without times, has none: every time would be 0).
pub fn timed(a: &sse_replay_core::analysis::Analysis) -> bool {
    a.source.timing_known && a.chunks.last().is_some_and(|c| c.t_micros > 0)
}

/// A time of `a` for people: milliseconds, or `—` when `a` has no timing ([`timed`]).
pub fn time_of(a: &sse_replay_core::analysis::Analysis, t_micros: u64) -> String {
    if timed(a) {
        ms(t_micros)
    } else {
        "—".to_owned()
    }
}
#[cfg(test)]
mod tests {
    /// Emoji from model answers (weather, faces, hands, marks; with U+FE0F, the emoji
    /// presentation selector) are drawn, in both families, never as the empty box.
    #[test]
    fn emoji_have_glyphs() {
        let ctx = egui::Context::default();
        super::install_fonts(&ctx);
        let mut out = ctx.run_ui(Default::default(), |_| {});
        out.textures_delta.clear();
        let text = "☀️ 🌤 ⛅ 🌧 🌦 ❄️ 🌡️ 🗓️ 🔥 😀 🙂 🤖 🥶 👍 👍🏽 ✅ ❌ ⚠️ 🚀 💡 📍 深圳 ✓ ⏵ �";
        for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
            let id = egui::FontId::new(14.0, family.clone());
            let missing: String = text
                .chars()
                .filter(|c| *c != ' ' && !ctx.fonts_mut(|f| f.has_glyph(&id, *c)))
                .collect();
            assert!(missing.is_empty(), "{family:?} lacks {missing:?}");
        }
    }
}
