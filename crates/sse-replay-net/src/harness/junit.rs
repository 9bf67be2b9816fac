//! JUnit XML for CI systems: one `<testcase>` per case (class = recording, name = variant), a
//! `<failure>` or `<error>` with the difference and diagnosis, a `<skipped>` with the reason for a
//! case that was not judged, the client's standard error in `<system-err>`.

use std::fmt::Write as _;

use super::{CaseOutcome, CaseResult, Summary};

/// Text that is safe in XML 1.0: characters XML cannot carry at all (most control characters,
/// e.g. a client's ANSI colour codes) become U+FFFD, then markup characters are escaped.
fn xml(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect();
    quick_xml::escape::escape(clean).into_owned()
}

/// The JUnit document for `results`, `total` the wall-clock time of the run.
pub fn render(results: &[CaseResult], total: std::time::Duration) -> String {
    let s = Summary::of(results);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let head = format!(
        "name=\"sse-replay test\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\"",
        s.cases,
        s.fail,
        s.error,
        s.not_judged,
        total.as_secs_f64()
    );
    writeln!(out, "<testsuites {head}>").ok();
    writeln!(out, "  <testsuite {head}>").ok();
    for r in results {
        write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            xml(&r.recording),
            xml(r.id.variant.name()),
            r.case_time.as_secs_f64()
        )
        .ok();
        let body = match &r.outcome {
            CaseOutcome::Pass => None,
            CaseOutcome::Fail(d) => {
                let mut text = d.clone();
                if let Some(diag) = &r.diagnosis {
                    text.push('\n');
                    text.push_str(diag);
                }
                Some(("failure", d, text))
            }
            CaseOutcome::Error(d) => Some(("error", d, d.clone())),
            CaseOutcome::NotJudged(d) => Some(("skipped", d, d.clone())),
        };
        let stderr = (!r.stderr.is_empty())
            .then(|| format!("      <system-err>{}</system-err>\n", xml(&r.stderr)));
        if body.is_none() && stderr.is_none() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        if let Some((tag, message, text)) = body {
            writeln!(
                out,
                "      <{tag} message=\"{}\" type=\"{tag}\">{}</{tag}>",
                xml(&sse_replay_core::text::truncate(message, 300)),
                xml(&text)
            )
            .ok();
        }
        if let Some(e) = stderr {
            out.push_str(&e);
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_markup_are_made_safe() {
        assert_eq!(
            xml("a<b>&\"\u{1b}[31m"),
            "a&lt;b&gt;&amp;&quot;\u{FFFD}[31m"
        );
    }
}
