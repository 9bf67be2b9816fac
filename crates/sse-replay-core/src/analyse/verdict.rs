//! The one verdict: is this stream OK? `check`'s "Result:" line and exit code, `check --json`'s
//! `ok`, `events`', `export`'s and `record`'s exit codes and the app's headline all come from here.
//!
//! The rule: **any error-severity finding makes the stream not OK**; info and warn findings never
//! change it, and server tools never count. The findings that decide it are computed where both
//! the full analysis and the lean streaming `export` see them: in the pipeline (dialect findings,
//! provider errors, invalid UTF-8), per finished call ([`call_findings`], called by
//! [`crate::pipeline::Pipeline::finish_each`]) and from how the stream ended
//! ([`crate::pipeline::PipelineOutput::decide_ending`]).

use crate::accumulate::{Call, Own, Parsed};
use crate::findings::{Finding, FindingKind, Findings, Location, Severity};
use crate::text::truncate;

/// At most this many failed calls are named in the one-line summary; the rest are counted.
const SHOWN_CALLS: usize = 3;

/// The findings a finished call raises on its own that can decide the verdict: a name that
/// changed, cumulative re-sends, a failed or cut-short parse, and arguments that differ from the
/// stream's authoritative copy (`truth` is the recording's ground truth for this call, if any).
/// Server tools raise none of them: they are not the client's calls. `own` are the call's own
/// fragment records, in order (only the few it names are looked up).
pub fn call_findings(call: &Call, truth: Option<&str>, own: Own<'_>, findings: &mut Findings) {
    if !call.is_client_call() {
        return;
    }
    let c = Some(call.position);
    let first = own.first();
    // The records of the fragments the findings name, in one pass over the call's.
    let mut named: Vec<u32> = call.name_conflicts.iter().map(|n| n.fragment).collect();
    named.extend(call.first_resend.map(|r| r.fragment));
    let records = own.only(&named);
    let at = |no: u32| {
        let f =
            crate::accumulate::own_record(&records, no).or(first.as_ref().filter(|f| f.no == no));
        Location {
            fragment: Some(no),
            chunk: f.map(|f| f.pos.chunk),
            event: f.map(|f| f.pos.event),
            offset: None,
        }
    };
    let first_at = first.as_ref().map_or(Location::default(), |f| at(f.no));
    for nc in &call.name_conflicts {
        findings.add(FindingKind::NameConflict, c, at(nc.fragment), || {
            format!(
                "name \"{}\" then \"{}\" (fragment {}); kept the later one, as the seed's assignment does",
                nc.previous, nc.new, nc.fragment
            )
        });
    }
    if let Some(r) = call.first_resend {
        findings.add_count(
            FindingKind::CumulativeArguments,
            c,
            at(r.fragment),
            call.resends,
            || {
                format!(
                    "fragment {} re-sends the {} before it",
                    r.fragment,
                    crate::text::plural(r.before_bytes, "byte")
                )
            },
        );
    }
    match &call.parsed {
        Parsed::Err { error, .. } => {
            let kind = if call.complete {
                FindingKind::ParseFailed
            } else {
                FindingKind::IncompleteCall
            };
            findings.add(kind, c, first_at, || {
                format!("{error}; raw: {}", truncate(&call.raw_arguments, 120))
            });
        }
        Parsed::Ok(_) if !call.complete => {
            findings.add(FindingKind::IncompleteCall, c, first_at, || {
                "the stream ended before this call was finished".into()
            });
        }
        Parsed::Ok(_) => {}
    }
    if let Some(auth) = &call.authoritative {
        if auth != &call.raw_arguments {
            findings.add(FindingKind::ArgumentsMismatch, c, first_at, || {
                "the .done event's arguments differ from the reassembled deltas".into()
            });
        }
    } else if let Some(t) = truth
        && t != call.raw_arguments
    {
        findings.add(FindingKind::ArgumentsMismatch, c, first_at, || {
            "the reassembled arguments differ from the ground truth".into()
        });
    }
}

/// The verdict over a stream's calls and findings: what the analysis (`check`, `events`, the app's
/// headline), `record` and the Recorder panel decide with (`export` feeds a [`Judge`] call by call).
pub fn judge<'a>(calls: impl IntoIterator<Item = &'a Call>, findings: &[Finding]) -> Verdict {
    let mut judge = Judge::default();
    for c in calls {
        judge.call(c);
    }
    judge.verdict(findings)
}

/// Collects what the verdict needs from the calls, one call at a time (the streaming `export`
/// drops each call after writing it).
#[derive(Clone, Debug, Default)]
pub struct Judge {
    calls: usize,
    failed: usize,
    shown: Vec<String>,
}

impl Judge {
    /// Count one finished call (server tools are not counted).
    pub fn call(&mut self, call: &Call) {
        if !call.is_client_call() {
            return;
        }
        self.calls += 1;
        if let Parsed::Err { error, .. } = &call.parsed {
            self.failed += 1;
            if self.shown.len() < SHOWN_CALLS {
                self.shown.push(format!(
                    "call {} {}: {error}",
                    call.position,
                    truncate(&call.name, 60)
                ));
            }
        }
    }

    /// The client calls counted so far (server tools are not).
    pub fn client_calls(&self) -> usize {
        self.calls
    }

    /// The verdict over the counted calls and every finding of the stream.
    pub fn verdict(&self, findings: &[Finding]) -> Verdict {
        let errors: Vec<&Finding> = findings
            .iter()
            .filter(|f| f.kind.severity() == Severity::Error)
            .collect();
        let has = |k: FindingKind| errors.iter().any(|f| f.kind == k);
        let mut problems = Vec::new();
        // Nothing matched the dialect: that is the one thing to say (no finish and no calls
        // follow from it).
        let unrecognised = errors
            .iter()
            .find(|f| f.kind == FindingKind::NothingRecognised);
        if let Some(f) = unrecognised {
            problems.push(format!("nothing recognised: {}", truncate(&f.message, 200)));
        }
        if self.failed > 0 {
            problems.push(format!(
                "{} of {} did not parse ({})",
                self.failed,
                crate::text::plural(self.calls, "call"),
                crate::text::capped_list(&self.shown, self.failed, SHOWN_CALLS, "; ")
            ));
        }
        if let Some(f) = errors.iter().find(|f| f.kind == FindingKind::ProviderError) {
            problems.push(format!("provider error: {}", truncate(&f.message, 200)));
        }
        if has(FindingKind::EndedWithoutFinish) && unrecognised.is_none() {
            problems.push("the stream ended without a finish signal".into());
        }
        // Every other error kind: one line each, in the kinds' declaration order (the analysis
        // sorts its findings and the lean pass does not, so their order cannot be the guide).
        for &kind in FindingKind::ALL {
            let Some(f) = errors.iter().find(|f| f.kind == kind) else {
                continue;
            };
            let covered = match f.kind {
                FindingKind::ProviderError
                | FindingKind::EndedWithoutFinish
                | FindingKind::NothingRecognised => true,
                FindingKind::ParseFailed => self.failed > 0,
                FindingKind::IncompleteCall => {
                    self.failed > 0
                        || has(FindingKind::EndedWithoutFinish)
                        || has(FindingKind::ProviderError)
                }
                _ => false,
            };
            if covered {
                continue;
            }
            let n = errors.iter().filter(|g| g.kind == f.kind).count();
            let more = if n > 1 {
                format!(" (and {} more)", n - 1)
            } else {
                String::new()
            };
            problems.push(format!(
                "{}: {}{more}",
                f.kind.label(),
                truncate(&f.message, 120)
            ));
        }
        Verdict { problems }
    }
}

/// The decision and its reasons.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Why the stream is not OK, one short phrase each; empty when it is OK.
    pub problems: Vec<String>,
}

impl Verdict {
    /// No error-severity finding.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The reasons on one line (for standard error and the report).
    pub fn line(&self) -> String {
        self.problems.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: FindingKind) -> Finding {
        Finding {
            kind,
            call: Some(0),
            first: Location::default(),
            count: 1,
            message: format!("{} happened", kind.label()),
        }
    }

    #[test]
    fn every_error_kind_fails_and_nothing_else_does() {
        let not_errors: Vec<Finding> = FindingKind::ALL
            .iter()
            .filter(|k| k.severity() != Severity::Error)
            .map(|&k| finding(k))
            .collect();
        let judge = Judge::default();
        assert!(
            judge.verdict(&not_errors).ok(),
            "info and warn findings never change the verdict"
        );
        for &k in FindingKind::ALL
            .iter()
            .filter(|k| k.severity() == Severity::Error)
        {
            let mut list = not_errors.clone();
            list.push(finding(k));
            let v = judge.verdict(&list);
            assert!(!v.ok(), "{}", k.label());
            assert!(!v.line().contains('\n'));
        }
    }

    #[test]
    fn a_million_failed_calls_make_a_short_line() {
        let mut judge = Judge::default();
        let (parsed, _) = crate::accumulate::parse_once("{");
        let mut call = Call {
            position: 0,
            key: crate::fact::CallKey::Ordinal(0),
            stated_index: None,
            id: None,
            name: "f".repeat(1000),
            raw_arguments: "{".into(),
            parsed,
            empty_arguments: false,
            object_arguments: false,
            complete: true,
            done_chunk: None,
            fragments: vec![],
            fragment_count: 0,
            name_conflicts: vec![],
            authoritative: None,
            first_resend: None,
            resends: 0,
            server_tool: None,
            kind: None,
            text_input: false,
        };
        for i in 0..1_000_000 {
            call.position = i;
            judge.call(&call);
        }
        let v = judge.verdict(&[finding(FindingKind::ParseFailed)]);
        assert!(v.line().len() < 600, "{}", v.line().len());
        assert!(v.line().contains("… 999997 more"), "{}", v.line());
        // Server tools are never counted.
        call.server_tool = Some("server_tool_use".into());
        let mut judge = Judge::default();
        judge.call(&call);
        assert!(judge.verdict(&[]).ok());
    }
}
