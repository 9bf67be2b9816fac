//! The human-readable `check` report: a compact table a person can read in a terminal.

use std::fmt::Write as _;

use crate::accumulate::Parsed;
use crate::analysis::{Analysis, Check, Ending};
use crate::dialect::truncate;
use crate::naive::Strategy;

fn mark(c: &Check) -> &'static str {
    match c.passed() {
        Some(true) => "✓",
        Some(false) => "✗",
        None => "–",
    }
}

/// Render the report.
pub fn check_text(a: &Analysis) -> String {
    let mut s = String::new();
    let ending = match &a.ending {
        Ending::Finished { reason } => format!("finished ({reason})"),
        Ending::CallsComplete => "every call complete, no stream-level finish".into(),
        Ending::ProviderError { message } => format!("PROVIDER ERROR: {message}"),
        Ending::EndedWithoutFinish => "ENDED WITHOUT FINISH (truncated)".into(),
    };
    let _ = writeln!(s, "{}", a.source.name);
    let _ = writeln!(
        s,
        "  {} ({}{}) · {} bytes · {} chunks{} · {} events · {} fragments · {}",
        a.dialect.name(),
        a.framing.name(),
        if a.dialect_known {
            ""
        } else {
            ", dialect guessed"
        },
        a.body.len(),
        a.chunks.len(),
        if a.source.timing_known {
            ""
        } else {
            " (no read boundaries)"
        },
        a.events.len(),
        a.fragments.len(),
        ending
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Correct: table keyed by call, id/name set when present, arguments appended, parsed once at finish"
    );
    if a.calls.is_empty() {
        let _ = writeln!(s, "  (no tool calls)");
    }
    for c in &a.calls {
        let result = match &c.parsed {
            Parsed::Ok(v) => v.to_string(),
            Parsed::Err { error, .. } => {
                format!("ERROR {error}; raw {:?}", truncate(&c.raw_arguments, 60))
            }
        };
        let _ = writeln!(
            s,
            "  {:<2} {:<10} {:<22} {:<16} {:>3} frags {:>4} chars/{:<4} bytes  {}{}",
            c.position,
            c.key.to_string(),
            c.id.as_deref().unwrap_or("(no id)"),
            c.name,
            c.fragments.len(),
            c.char_len(),
            c.byte_len(),
            truncate(&result, 200),
            if c.complete { "" } else { "  [incomplete]" }
        );
    }
    if !a.checkpoints.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "Checkpoints: ① verbatim  ② contiguous in the original  ③ only the first fragment carries id/name"
        );
        for (i, cp) in a.checkpoints.iter().enumerate() {
            let name = a.calls.get(i).map_or("", |c| c.name.as_str());
            let _ = writeln!(
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
                let _ = writeln!(s, "      {n} {}", c.detail());
            }
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Naive strategies on the same input");
    for r in &a.strategies {
        let status = if r.report.not_applicable.is_some() {
            "–"
        } else if r.verdict.matches_correct {
            "✓"
        } else {
            "✗"
        };
        let _ = writeln!(
            s,
            "  {status} {:<17} {}",
            r.report.strategy.name(),
            r.report.strategy.description()
        );
        if r.report.strategy == Strategy::PerFragment {
            // One pass over the steps (not one per call: that was quadratic on many calls).
            let mut per_call = vec![(0usize, 0usize); a.calls.len()];
            for st in &r.report.steps {
                if let Some(slot) = st.call.and_then(|c| per_call.get_mut(c as usize)) {
                    slot.1 += 1;
                    if matches!(st.outcome, Parsed::Ok(_)) {
                        slot.0 += 1;
                    }
                }
            }
            for (ci, (c, (ok, total))) in a.calls.iter().zip(&per_call).enumerate() {
                let _ = writeln!(
                    s,
                    "      call {ci} {}: {ok} of {total} fragments parse alone",
                    c.name
                );
            }
            for st in r
                .report
                .steps
                .iter()
                .filter(|st| matches!(st.outcome, Parsed::Err { .. }))
                .take(6)
            {
                if let Parsed::Err { error, .. } = &st.outcome {
                    let _ = writeln!(
                        s,
                        "      fragment {} {:?} → {error}",
                        st.fragment,
                        truncate(&st.text, 40)
                    );
                }
            }
            continue;
        }
        if r.report.strategy == Strategy::ConcatAll {
            if let Some(c) = r.report.calls.first() {
                let _ = writeln!(s, "      joined: {}", truncate(&c.raw_arguments, 160));
                match &c.parsed {
                    Parsed::Ok(_) => {
                        let _ = writeln!(
                            s,
                            "      parses (only one call, so joining is harmless here)"
                        );
                    }
                    Parsed::Err { error, .. } => {
                        let _ = writeln!(s, "      → {error}");
                    }
                }
            }
            continue;
        }
        for n in &r.report.notes {
            let _ = writeln!(s, "      {n}");
        }
        for d in r.verdict.differences.iter().take(6) {
            let _ = writeln!(s, "      {d}");
        }
        if r.verdict.differences.len() > 6 {
            let _ = writeln!(
                s,
                "      … {} more differences",
                r.verdict.differences.len() - 6
            );
        }
    }
    if !a.findings.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "Findings");
        for f in &a.findings {
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
            let _ = writeln!(
                s,
                "  {:<5} {}{call}{count}{at}: {}",
                format!("{:?}", f.kind.severity()).to_lowercase(),
                f.kind.label(),
                truncate(&f.message, 160)
            );
        }
    }
    let _ = writeln!(s);
    let failed = a.calls.iter().filter(|c| c.value().is_none()).count();
    if a.all_ok() {
        let _ = writeln!(s, "Result: OK, {} calls parsed", a.calls.len());
    } else {
        let invalid_index = if a
            .findings
            .iter()
            .any(|f| f.kind == crate::findings::FindingKind::InvalidIndex)
        {
            "; invalid tool-call index (calls routed by guesswork)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "Result: FAILED, {failed} of {} calls did not parse; {ending}{invalid_index}",
            a.calls.len()
        );
    }
    s
}
