//! An inline diff of two JSON values, for showing two calls' arguments side by side with what
//! changed highlighted: each side is rendered as compact JSON, cut into spans marked
//! [`Mark::Same`], [`Mark::Changed`] (the value at this place differs on the other side) or
//! [`Mark::Only`] (the key or element is missing on the other side).
//!
//! Objects are matched by key (A's key order, then B's extra keys), arrays by index. Rendering
//! stops after [`TEXT_BUDGET`] characters a side (then `…`), so a megabyte of arguments costs a
//! bounded amount. No egui here: the app's Compare two panel draws the spans.

use serde_json::Value;

/// At most this many characters of each side are rendered.
pub const TEXT_BUDGET: usize = 4_000;

/// How a span compares with the other side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The same on both sides.
    Same,
    /// A value that differs on the other side.
    Changed,
    /// A key or element the other side does not have.
    Only,
}

/// A piece of one side's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub mark: Mark,
}

/// Both sides' spans.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InlineDiff {
    pub a: Vec<Span>,
    pub b: Vec<Span>,
}

impl InlineDiff {
    /// Some span differs.
    pub fn has_changes(&self) -> bool {
        self.a.iter().chain(&self.b).any(|s| s.mark != Mark::Same)
    }
}

/// One side's text under construction: adjacent spans of one mark merge; past the budget only
/// `…` is added, once.
#[derive(Default)]
struct Side {
    spans: Vec<Span>,
    len: usize,
    cut: bool,
}

impl Side {
    fn push(&mut self, text: &str, mark: Mark) {
        if self.cut || text.is_empty() {
            return;
        }
        let room = TEXT_BUDGET.saturating_sub(self.len);
        let (text, cut) = if text.chars().count() > room {
            let kept: String = text.chars().take(room).collect();
            (kept, true)
        } else {
            (text.to_owned(), false)
        };
        self.len += text.chars().count();
        match self.spans.last_mut() {
            Some(last) if last.mark == mark => last.text.push_str(&text),
            _ => self.spans.push(Span { text, mark }),
        }
        if cut {
            self.cut = true;
            self.spans.push(Span {
                text: "…".into(),
                mark: Mark::Same,
            });
        }
    }

    fn value(&mut self, v: &Value, mark: Mark) {
        if !self.cut {
            self.push(&compact(v), mark);
        }
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn key_text(k: &str) -> String {
    format!("{}:", compact(&Value::String(k.to_owned())))
}

/// The inline diff of `a` and `b`.
pub fn inline_diff(a: &Value, b: &Value) -> InlineDiff {
    let (mut sa, mut sb) = (Side::default(), Side::default());
    walk(a, b, &mut sa, &mut sb);
    InlineDiff {
        a: sa.spans,
        b: sb.spans,
    }
}

fn walk(a: &Value, b: &Value, sa: &mut Side, sb: &mut Side) {
    if a == b {
        sa.value(a, Mark::Same);
        sb.value(b, Mark::Same);
        return;
    }
    if sa.cut && sb.cut {
        return;
    }
    match (a, b) {
        (Value::Object(ma), Value::Object(mb)) => {
            sa.push("{", Mark::Same);
            sb.push("{", Mark::Same);
            let (mut first_a, mut first_b) = (true, true);
            let sep = |side: &mut Side, first: &mut bool| {
                if !*first {
                    side.push(",", Mark::Same);
                }
                *first = false;
            };
            for (k, va) in ma {
                match mb.get(k) {
                    Some(vb) => {
                        sep(sa, &mut first_a);
                        sep(sb, &mut first_b);
                        sa.push(&key_text(k), Mark::Same);
                        sb.push(&key_text(k), Mark::Same);
                        walk(va, vb, sa, sb);
                    }
                    None => {
                        sep(sa, &mut first_a);
                        sa.push(&key_text(k), Mark::Only);
                        sa.value(va, Mark::Only);
                    }
                }
            }
            for (k, vb) in mb.iter().filter(|(k, _)| !ma.contains_key(*k)) {
                sep(sb, &mut first_b);
                sb.push(&key_text(k), Mark::Only);
                sb.value(vb, Mark::Only);
            }
            sa.push("}", Mark::Same);
            sb.push("}", Mark::Same);
        }
        (Value::Array(xa), Value::Array(xb)) => {
            sa.push("[", Mark::Same);
            sb.push("[", Mark::Same);
            for i in 0..xa.len().max(xb.len()) {
                match (xa.get(i), xb.get(i)) {
                    (Some(va), Some(vb)) => {
                        if i > 0 {
                            sa.push(",", Mark::Same);
                            sb.push(",", Mark::Same);
                        }
                        walk(va, vb, sa, sb);
                    }
                    (Some(va), None) => {
                        if i > 0 {
                            sa.push(",", Mark::Same);
                        }
                        sa.value(va, Mark::Only);
                    }
                    (None, Some(vb)) => {
                        if i > 0 {
                            sb.push(",", Mark::Same);
                        }
                        sb.value(vb, Mark::Only);
                    }
                    (None, None) => {}
                }
            }
            sa.push("]", Mark::Same);
            sb.push("]", Mark::Same);
        }
        _ => {
            sa.value(a, Mark::Changed);
            sb.value(b, Mark::Changed);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spans(side: &[Span]) -> Vec<(&str, Mark)> {
        side.iter().map(|s| (s.text.as_str(), s.mark)).collect()
    }

    #[test]
    fn one_changed_value_is_the_only_marked_span() {
        let d = inline_diff(
            &json!({"city": "深圳", "days": 3}),
            &json!({"city": "深圳", "days": 4}),
        );
        assert_eq!(
            spans(&d.a),
            vec![
                (r#"{"city":"深圳","days":"#, Mark::Same),
                ("3", Mark::Changed),
                ("}", Mark::Same)
            ]
        );
        assert_eq!(spans(&d.b)[1], ("4", Mark::Changed));
        assert!(d.has_changes());
    }

    #[test]
    fn keys_on_one_side_and_array_tails_are_marked_only() {
        let d = inline_diff(
            &json!({"a": [1, 2, 3], "gone": true}),
            &json!({"a": [1, 5], "new": null}),
        );
        let text = |s: &[Span]| s.iter().map(|s| s.text.as_str()).collect::<String>();
        assert_eq!(text(&d.a), r#"{"a":[1,2,3],"gone":true}"#);
        assert_eq!(text(&d.b), r#"{"a":[1,5],"new":null}"#);
        assert!(spans(&d.a).contains(&("2", Mark::Changed)));
        assert!(spans(&d.a).contains(&("3", Mark::Only)));
        assert!(spans(&d.a).contains(&(r#""gone":true"#, Mark::Only)));
        assert!(spans(&d.b).contains(&(r#""new":null"#, Mark::Only)));
    }

    #[test]
    fn equal_values_have_no_changes_and_types_that_differ_change_whole() {
        let v = json!({"x": [1, {"y": "z"}]});
        assert!(!inline_diff(&v, &v).has_changes());
        let d = inline_diff(&json!({"x": [1]}), &json!({"x": {"0": 1}}));
        assert_eq!(spans(&d.a)[1], ("[1]", Mark::Changed));
        assert_eq!(spans(&d.b)[1], (r#"{"0":1}"#, Mark::Changed));
    }

    #[test]
    fn huge_values_are_cut_at_the_budget() {
        let big: Vec<u32> = (0..100_000).collect();
        let d = inline_diff(&json!({ "v": big }), &json!({ "v": [] }));
        let len: usize = d.a.iter().map(|s| s.text.chars().count()).sum();
        assert!(len <= TEXT_BUDGET + 1, "{len}");
        assert_eq!(d.a.last().unwrap().text, "…");
    }
}
