//! Text from a stream is data, not markup: before it reaches a terminal (the `check` report, every
//! command's line on standard error) or a label in the app, control characters are made visible.
//! A function name carrying ESC, BEL, CR or a newline would otherwise rewrite the user's terminal
//! or break the one-line error contract. This is the one escaper; the app re-uses it.
//!
//! It is also the one place a UTF-8 byte order mark is recognised at the start of a file or body
//! (a Windows editor's, a capture tool's): every reader strips at most one, as the SSE decode
//! algorithm does.

/// `eprintln!` that never panics: a line for standard error, dropped when it cannot be written
/// (stderr closed or a broken pipe). Servers and recorders log with it from their worker threads,
/// where `eprintln!`'s panic on a closed stderr would kill a connection or a capture.
#[macro_export]
macro_rules! log_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stderr(), $($arg)*).ok();
    }};
}

/// True for characters that must not reach a terminal raw: C0 controls (ESC, BEL, CR, LF, TAB…),
/// DEL, C1 controls (U+0080–U+009F, e.g. CSI U+009B), and the bidirectional overrides and isolates
/// that reorder what a terminal shows (U+200E/F, U+202A–U+202E, U+2066–U+2069).
pub fn needs_escape(ch: char) -> bool {
    ch.is_control()
        || matches!(
            ch,
            '\u{61C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// True for characters the JSON the commands print writes as `\uXXXX` rather than raw: what
/// [`needs_escape`] keeps from a terminal (serde_json already escapes C0 controls), and the line
/// and paragraph separators U+2028 and U+2029, which end a line in JavaScript source and in
/// some line-based tools.
pub fn json_needs_escape(ch: char) -> bool {
    needs_escape(ch) || matches!(ch, '\u{2028}' | '\u{2029}')
}

/// serde_json's formatter `F` (compact or pretty), writing the characters of
/// [`json_needs_escape`] inside strings as `\uXXXX` escapes: the output stays the same JSON (the
/// same values once parsed), but no C1 control, bidi override or line separator reaches a
/// terminal, a log or a JavaScript `eval` raw.
pub struct JsonEscaping<F>(pub F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for JsonEscaping<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, ch) in fragment.char_indices() {
            if json_needs_escape(ch) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", u32::from(ch))?;
                start = i + ch.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `value` as compact JSON, escaped as [`JsonEscaping`] says (one line: `events`, `preview`,
/// `export --format jsonl`).
pub fn json_compact<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        JsonEscaping(serde_json::ser::CompactFormatter),
    );
    // Serializing plain values into a Vec cannot fail.
    value.serialize(&mut ser).ok();
    String::from_utf8(out).unwrap_or_default()
}

/// `value` as pretty JSON (two spaces, as `serde_json::to_string_pretty`), escaped as
/// [`JsonEscaping`] says.
pub fn json_pretty<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    write_json_pretty(&mut out, value).ok();
    String::from_utf8(out).unwrap_or_default()
}

/// [`json_pretty`] written to `w` as it is produced (the `check --json` report of a large stream
/// is not held whole).
pub fn write_json_pretty<W: std::io::Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(
        w,
        JsonEscaping(serde_json::ser::PrettyFormatter::new()),
    );
    value.serialize(&mut ser).map_err(std::io::Error::from)
}

/// Append `ch` to `out`, escaped when [`needs_escape`] says so: `\n`, `\r`, `\t`, else `\u{…}`.
pub fn push_visible(out: &mut String, ch: char) {
    match ch {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if needs_escape(c) => {
            use std::fmt::Write as _;
            write!(out, "\\u{{{:04x}}}", c as u32).ok();
        }
        c => out.push(c),
    }
}

/// `s` with every control character escaped (see [`push_visible`]); borrowed when nothing needed
/// escaping, which is the common case.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        push_visible(&mut out, ch);
    }
    std::borrow::Cow::Owned(out)
}

/// Bytes as text: valid UTF-8 as is, control characters escaped (`\n`), broken sequences as
/// `\xNN` (the app's raw view).
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    for piece in bytes.utf8_chunks() {
        for ch in piece.valid().chars() {
            push_visible(&mut out, ch);
        }
        for b in piece.invalid() {
            use std::fmt::Write as _;
            write!(out, "\\x{b:02x}").ok();
        }
    }
    out
}

/// At most `max` items of `items` joined with `sep`, then `… N more` when some were left out: an
/// error line about a million failing calls stays short.
pub fn capped_list(items: &[String], total: usize, max: usize, sep: &str) -> String {
    let mut s = items
        .iter()
        .take(max)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(sep);
    let shown = items.len().min(max);
    if total > shown {
        s.push_str(&format!("{sep}… {} more", total - shown));
    }
    s
}

/// `s` as a JSON string literal (`"a\"b"`): how text from a stream is quoted in a message a
/// person reads, instead of Rust's `Debug` form (`{:?}`), whose escapes (`\u{7f}`) and names
/// are the program's, not the stream's.
pub fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Cut `s` to at most `max` bytes on a character boundary, adding `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `n` and `word`, the word in the plural unless `n` is 1: `plural(1, "call")` is "1 call",
/// `plural(2, "call")` "2 calls", `plural(0, "match")` "0 matches". The one place counts meet
/// nouns, in the report, the findings, the CLI's lines and the app.
pub fn plural(n: impl std::fmt::Display, word: &str) -> String {
    let n = n.to_string();
    format!("{n} {}", plural_word(&n, word))
}

/// `word` as it follows the count `n` (already formatted): unchanged for "1", else the plural
/// ("-s", "-es" after s, x, ch and sh).
pub fn plural_word(n: &str, word: &str) -> String {
    if n == "1" {
        return word.to_owned();
    }
    if ["s", "x", "ch", "sh"].iter().any(|e| word.ends_with(e)) {
        format!("{word}es")
    } else {
        format!("{word}s")
    }
}

/// The UTF-8 byte order mark (U+FEFF encoded).
pub const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// `bytes` without one leading UTF-8 byte order mark, if any.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM.as_slice()).unwrap_or(bytes)
}

/// `text` without one leading byte order mark (U+FEFF), if any.
pub fn strip_bom_str(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// A call's arguments text, shared: reference-counted, so the accumulator's call, its parsed
/// value ([`crate::accumulate::ParsedValue`]) and every naive strategy that ends up with the same
/// text (or a prefix or piece of it) hold one copy between them, not one each. It derefs to
/// `str`, compares by content and serializes as a JSON string; `"…".into()` or
/// `String::into` make one.
pub type SharedText = arcstr::Substr;

/// `text[range]` sharing `text`'s bytes; `None` when `range` is out of bounds or not on character
/// boundaries.
pub fn shared_slice(text: &SharedText, range: std::ops::Range<usize>) -> Option<SharedText> {
    text.get(range.clone())?;
    Some(text.substr(range))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bom_is_stripped() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBFdata"), b"data");
        assert_eq!(strip_bom(b"\xEF\xBB\xBF\xEF\xBB\xBFx"), b"\xEF\xBB\xBFx");
        assert_eq!(strip_bom(b"\xEF\xBB"), b"\xEF\xBB");
        assert_eq!(strip_bom(b""), b"");
        assert_eq!(strip_bom_str("\u{feff}(version: 1)"), "(version: 1)");
        assert_eq!(strip_bom_str("\u{feff}\u{feff}x"), "\u{feff}x");
        assert_eq!(strip_bom_str("x\u{feff}"), "x\u{feff}");
        assert_eq!(BOM.as_slice(), "\u{feff}".as_bytes());
    }

    #[test]
    fn terminal_controls_are_escaped() {
        let hostile = "get\u{1b}[2J\u{7}name\r\n\u{9b}31m\u{202e}x";
        let v = visible(hostile);
        assert!(!v.chars().any(needs_escape), "{v}");
        assert_eq!(
            v,
            "get\\u{001b}[2J\\u{0007}name\\r\\n\\u{009b}31m\\u{202e}x"
        );
        assert!(matches!(visible("深圳 ok"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn bytes_keep_text_and_mark_broken_sequences() {
        assert_eq!(escape_bytes(b"a\n\xe6\xb7"), "a\\n\\xe6\\xb7");
        assert_eq!(escape_bytes("深".as_bytes()), "深");
    }

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(plural(1, "call"), "1 call");
        assert_eq!(plural(0, "call"), "0 calls");
        assert_eq!(plural(2_000u64, "fragment"), "2000 fragments");
        assert_eq!(plural(1usize, "byte"), "1 byte");
        assert_eq!(plural(3, "match"), "3 matches");
        assert_eq!(plural(1, "difference"), "1 difference");
        assert_eq!(plural_word("11", "key"), "keys");
    }

    #[test]
    fn lists_are_capped() {
        let items: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        assert_eq!(
            capped_list(&items, 1_000_000, 3, "; "),
            "0; 1; 2; … 999997 more"
        );
        assert_eq!(capped_list(&items[..2], 2, 3, "; "), "0; 1");
    }
}

#[cfg(test)]
mod quoted_tests {
    #[test]
    fn json_quoting_not_rust_debug() {
        assert_eq!(super::quoted("a\"b\n\u{7f}é"), "\"a\\\"b\\n\u{7f}é\"");
        assert_eq!(super::quoted(""), "\"\"");
    }
}
