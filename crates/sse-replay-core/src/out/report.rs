//! The human-readable `check` report: a compact table a person can read in a terminal. Every line
//! goes through `out!`, which escapes control characters ([`crate::text::visible`]): names, ids,
//! error texts and comments come from the stream and must not reach the terminal raw.

/// Append one report line, control characters escaped, then the newline.
macro_rules! out {
    ($s:expr, $($arg:tt)*) => {
        push_line(&mut *$s, &format!($($arg)*))
    };
}

fn push_line(s: &mut Out<'_>, line: &str) {
    if s.error.is_some() {
        return;
    }
    let line = crate::text::visible(line);
    if let Err(e) =
        s.w.write_all(line.as_bytes())
            .and_then(|()| s.w.write_all(b"\n"))
    {
        s.error = Some(e);
    }
}

/// Where the report goes, line by line: a writer, and the first error writing to it (the lines
/// after it are dropped, and the error returned at the end).
struct Out<'a> {
    w: &'a mut dyn std::io::Write,
    error: Option<std::io::Error>,
}

use crate::accumulate::Parsed;
use crate::analysis::{Analysis, Check, StreamEnding};
use crate::findings::FindingKind;
use crate::naive::Strategy;
use crate::text::{plural, plural_word, truncate};

fn mark(c: &Check) -> &'static str {
    match c.passed() {
        Some(true) => "✓",
        Some(false) => "✗",
        None => "–",
    }
}

/// Render the report.
pub fn check_text(analysis: &Analysis) -> String {
    let mut text = Vec::new();
    // Writing into a Vec cannot fail.
    write_check_text(analysis, &mut text).ok();
    String::from_utf8(text).unwrap_or_default()
}

/// Write the report to `w` line by line, as [`check_text`] renders it, without holding it
/// whole: a stream with 300,000 calls has a report of some 170 MB.
pub fn write_check_text(analysis: &Analysis, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut s = Out { w, error: None };
    check_lines(analysis, &mut s);
    match s.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn check_lines(analysis: &Analysis, s: &mut Out<'_>) {
    let ending = match &analysis.ending {
        StreamEnding::Finished { reason } => format!("finished ({reason})"),
        StreamEnding::CallsComplete => "every call complete, no stream-level finish".into(),
        StreamEnding::ProviderError { message } => format!("PROVIDER ERROR: {message}"),
        StreamEnding::EndedWithoutFinish => "ENDED WITHOUT FINISH (truncated)".into(),
    };
    if let Some(f) = analysis
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::NothingRecognised)
    {
        // Nothing to tabulate: say what the input was and stop (the verdict follows).
        out!(
            s,
            "{}: no tool calls found — {}",
            analysis.source.name,
            truncate(&f.message, 200)
        );
        if analysis.meta.interrupted {
            out!(s, "  INTERRUPTED recording (salvaged from its journal)");
        }
        out!(s, "Result: FAILED, nothing recognised");
        return;
    }
    out!(s, "{}", analysis.source.name);
    out!(
        s,
        "  {} ({}{}) · {} · {}{} · {} · {} · {}",
        analysis.dialect.name(),
        if analysis.complete {
            "one JSON document"
        } else {
            analysis.framing.name()
        },
        if analysis.dialect_known {
            ""
        } else {
            ", dialect guessed"
        },
        plural(analysis.body_len() as usize, "byte"),
        plural(analysis.chunk_count(), "chunk"),
        if analysis.source.timing_known {
            ""
        } else {
            " (no read boundaries)"
        },
        plural(analysis.event_count(), "event"),
        plural(analysis.fragment_count(), "fragment"),
        ending
    );
    if analysis.framing == crate::framing::Framing::JsonArray && !analysis.complete {
        out!(
            s,
            "  {}",
            json_array_header(analysis.dialect, analysis.event_count())
        );
    }
    if analysis.meta.interrupted {
        out!(
            s,
            "  INTERRUPTED recording: the recorder stopped before the response ended (salvaged from its journal); what follows is what was flushed"
        );
    }
    out!(s, "");
    if analysis.complete {
        out!(
            s,
            "{}",
            crate::complete::summary(analysis.client_calls().count())
        );
    } else {
        out!(
            s,
            "Correct: table keyed by call, id/name set when present, arguments appended, parsed once at finish"
        );
    }
    if analysis.client_calls().next().is_none() {
        out!(s, "  (no tool calls)");
    }
    for c in analysis.client_calls() {
        call_line(s, c);
        if let Some(kind) = &c.kind {
            out!(
                s,
                "     kind {kind}{}",
                if c.text_input {
                    " (free-form text input: taken as a string, never parsed as JSON)"
                } else {
                    ""
                }
            );
        }
    }
    if analysis.server_tools().next().is_some() {
        out!(s, "");
        out!(
            s,
            "Server tools: run by the provider, not calls for the client (export --include-server-tools adds them)"
        );
        for c in analysis.server_tools() {
            call_line(s, c);
            out!(s, "     type {}", c.server_tool.as_deref().unwrap_or(""));
        }
    }
    if analysis.complete && analysis.client_calls().next().is_some() {
        out!(s, "");
        out!(
            s,
            "Checkpoints: not applicable (not a stream: no fragments to reassemble or check)"
        );
    } else if !analysis.checkpoints.is_empty() {
        out!(s, "");
        out!(
            s,
            "Checkpoints: ① verbatim  ② contiguous in the original  ③ only the first fragment carries id/name"
        );
        for (i, cp) in analysis.checkpoints.iter().enumerate() {
            if analysis.calls.get(i).is_some_and(|c| !c.is_client_call()) {
                continue;
            }
            let name = analysis.calls.get(i).map_or("", |c| c.name.as_str());
            out!(
                s,
                "  call {i} {name}: ① {} ② {} ③ {}",
                mark(&cp.verbatim),
                mark(&cp.contiguous),
                mark(&cp.first_only)
            );
            for (n, c) in [
                ("①", &cp.verbatim),
                ("②", &cp.contiguous),
                ("③", &cp.first_only),
            ] {
                out!(s, "      {n} {}", c.detail());
            }
        }
    }
    let no_fragments = analysis.fragment_count() == 0 && !analysis.complete;
    if no_fragments {
        out!(s, "");
        out!(
            s,
            "Naive strategies: nothing to compare (no tool-call fragments in this stream)"
        );
    } else if !analysis.complete {
        out!(s, "");
        out!(s, "Naive strategies on the same input");
    }
    let client_calls = analysis.client_calls().count();
    for r in analysis.strategies.iter().filter(|_| !no_fragments) {
        let status = if r.report.not_applicable.is_some() {
            "–"
        } else if r.agreement.matches_correct {
            "✓"
        } else {
            "✗"
        };
        out!(
            s,
            "  {status} {:<17} {}",
            r.report.strategy.name(),
            r.report.strategy.description()
        );
        if r.report.strategy == Strategy::PerFragment {
            // One pass over the steps (not one per call: that was quadratic on many calls).
            let mut per_call = vec![(0usize, 0usize); analysis.calls.len()];
            for st in r.report.steps.all_rows() {
                if let Some(slot) = st.call().and_then(|c| per_call.get_mut(c as usize)) {
                    slot.1 += 1;
                    if st.ok() {
                        slot.0 += 1;
                    }
                }
            }
            for (ci, (c, (ok, total))) in analysis.calls.iter().zip(&per_call).enumerate() {
                out!(
                    s,
                    "      call {ci} {}: {ok} of {} {} alone",
                    c.name,
                    plural(*total, "fragment"),
                    if *total == 1 { "parses" } else { "parse" }
                );
            }
            for st in r.report.steps.failures().take(6) {
                if let Parsed::Err { error, .. } = &st.outcome {
                    out!(
                        s,
                        "      fragment {} {:?} → {error}",
                        st.fragment,
                        truncate(&st.text, 40)
                    );
                }
            }
            // The list is cut: say by how much.
            let failed = r.report.steps.failed();
            if failed > 6 {
                out!(s, "      … {} more", plural(failed - 6, "failure"));
            }
            continue;
        }
        if r.report.strategy == Strategy::ConcatAll {
            if let Some(c) = r.report.calls.first() {
                out!(s, "      joined: {}", truncate(&c.raw_arguments, 160));
                match &c.parsed {
                    Parsed::Ok(_) if client_calls == 1 => {
                        out!(
                            s,
                            "      parses (only one call, so joining is harmless here)"
                        );
                    }
                    Parsed::Ok(_) => out!(s, "      parses"),
                    Parsed::Err { error, .. } => {
                        out!(s, "      → {error}");
                    }
                }
            }
            continue;
        }
        for n in &r.report.notes {
            out!(s, "      {n}");
        }
        if r.agreement.matches_correct && !analysis.verdict().ok() {
            out!(
                s,
                "      same calls as the accumulator — the stream itself is broken"
            );
        }
        for d in r.agreement.differences.iter().take(6) {
            out!(s, "      {d}");
        }
        if r.agreement.differences.len() > 6 {
            out!(
                s,
                "      … {} more",
                plural(r.agreement.differences.len() - 6, "difference")
            );
        }
    }
    if let Some(preview) = &analysis.preview {
        preview_section(s, analysis, preview);
    }
    if !analysis.findings.is_empty() {
        out!(s, "");
        out!(s, "Findings");
        for f in &analysis.findings {
            let call = f.call.map_or(String::new(), |c| format!(" call {c}"));
            let count = if f.count > 1 {
                format!(" ×{}", f.count)
            } else {
                String::new()
            };
            let at = match (f.first.fragment, f.first.event, f.first.chunk) {
                (Some(fr), _, _) => format!(" @fragment {fr}"),
                (None, Some(e), _) => format!(" @event {e}"),
                (None, None, Some(c)) => format!(" @chunk {c}"),
                _ => String::new(),
            };
            out!(
                s,
                "  {:<5} {}{call}{count}{at}: {}",
                f.kind.severity().label(),
                f.kind.label(),
                truncate(&f.message, 160)
            );
        }
    }
    out!(s, "");
    let verdict = analysis.verdict();
    if verdict.ok() && client_calls == 0 {
        out!(
            s,
            "Result: OK, but no tool calls (warning: the stream ended normally without a tool call)"
        );
    } else if verdict.ok() {
        out!(s, "Result: OK, {} parsed", plural(client_calls, "call"));
    } else {
        out!(s, "Result: FAILED, {}", verdict.line());
    }
}

/// What the report and `check --json` say of a body framed as one JSON array of `elements`
/// elements: for Gemini, the REST endpoint's own wire (`streamGenerateContent` without
/// `alt=sse`); for any other dialect a dump of its chunks (a snapshot a test suite stored), which
/// is not how the stream arrived. Said here, not by the framer: naming the dialect is not the
/// byte layer's business.
pub fn json_array_header(dialect: crate::dialect::DialectKind, elements: usize) -> String {
    let n = crate::text::plural(elements, "chunk");
    if dialect == crate::dialect::DialectKind::Gemini {
        format!(
            "a JSON array of {n}, streamed element by element (Gemini streamGenerateContent without alt=sse)"
        )
    } else {
        format!("a JSON array of {n} — a dump, not the wire: no read boundaries or timing")
    }
}

/// One call's row in the calls table.
fn call_line(s: &mut Out<'_>, c: &crate::accumulate::Call) {
    let result = match &c.parsed {
        Parsed::Ok(v) => v.to_string(),
        Parsed::Err { error, .. } => {
            format!("ERROR {error}; raw {:?}", truncate(&c.raw_arguments, 60))
        }
    };
    let (frags, chars, bytes) = (c.fragment_count as usize, c.char_len(), c.byte_len());
    out!(
        s,
        "  {:<2} {:<10} {:<22} {:<16} {:>3} {:<5} {:>4} {}/{:<4} {:<5}  {}{}",
        c.position,
        c.key.to_string(),
        c.id.as_deref().unwrap_or("(no id)"),
        c.name,
        frags,
        plural_word(&frags.to_string(), "frag"),
        chars,
        plural_word(&chars.to_string(), "char"),
        bytes,
        plural_word(&bytes.to_string(), "byte"),
        truncate(&result, 200),
        if c.complete { "" } else { "  [incomplete]" }
    );
}

/// The Preview section: per call, how many partial-JSON previews the final result contradicts.
fn preview_section(s: &mut Out<'_>, a: &Analysis, preview: &[crate::preview::CallPreview]) {
    if preview.is_empty() {
        return;
    }
    out!(s, "");
    out!(
        s,
        "Preview: what a typewriter UI shows after each fragment (jiter partial mode, trailing strings); a view, never the verdict"
    );
    for p in preview {
        let name = a.calls.get(p.call as usize).map_or("", |c| c.name.as_str());
        if !p.checked {
            out!(
                s,
                "  call {} {name}: {}, not checked (the final arguments do not parse)",
                p.call,
                plural(p.previews, "preview")
            );
            continue;
        }
        out!(
            s,
            "  {} call {} {name}: {}, {} stable, {} contradicted",
            if p.contradicted == 0 { "✓" } else { "✗" },
            p.call,
            plural(p.previews, "preview"),
            p.stable,
            p.contradicted
        );
        if let Some(c) = &p.first_contradiction {
            out!(
                s,
                "      first after fragment {}: {} shown at {}, final {}",
                c.fragment,
                truncate(&c.shown.to_string(), 60),
                if c.path.is_empty() { "/" } else { &c.path },
                truncate(&c.final_value.to_string(), 60)
            );
        }
    }
}
