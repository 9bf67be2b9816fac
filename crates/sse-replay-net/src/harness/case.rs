//! One case, ready to judge: its bytes, their analysis, the expected result, and the one function
//! that turns what a client did into a verdict and a diagnosis. `sse-replay test` (a client
//! process), `serve --suite`'s `POST …/verdict` and the in-process [`crate::suite`] API all judge
//! through [`CaseContext::judge`].

use sse_replay_core::analysis::{Analysis, SourceInfo, SourceKind};
use sse_replay_core::pipeline::Options;
use sse_replay_core::recording::{Chunk, Recording};

use super::judge::{self, CaseCall, CaseOutcome, ErrorSkipped, Exit, Expected, Scene};
use super::{SuiteRecording, Variant, Wire};
use crate::serve::Served;

/// A case's bytes and what they must give.
#[derive(Debug)]
pub struct CaseContext<'a> {
    /// The recording the case serves.
    pub recording: &'a SuiteRecording,
    /// How its bytes are cut into writes.
    pub variant: Variant,
    /// What the case's server sends.
    pub wire: Wire,
    /// The analysis of exactly those reads (the expected result and the naive strategies).
    pub analysis: Analysis,
    /// The calls those bytes give, with their status.
    pub expected: Expected,
    /// Where the stream carries a provider error: what a client that reads past it would see.
    pub error_skipped: Option<ErrorSkipped>,
    /// Why a pass on this case would not prove the client read it (its values could not be
    /// varied), or `None`.
    pub unproven: Option<String>,
}

/// A verdict with what it was drawn from.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// Pass, fail or error (the gate by clean forms comes after, over the whole run).
    pub outcome: CaseOutcome,
    /// What the client behaves like, for a failure (see [`judge::diagnose`]).
    pub diagnosis: Option<String>,
    /// The calls it printed (`None`: no parseable JSON).
    pub got: Option<Vec<CaseCall>>,
}

fn source(name: &str) -> SourceInfo {
    SourceInfo {
        name: name.to_owned(),
        kind: SourceKind::Recording,
        timing_known: true,
    }
}

impl<'a> CaseContext<'a> {
    /// Builds case `variant` of `recording` (`random_seed` for the `random` variant). A variant
    /// that does not apply gives an empty wire.
    pub fn new(recording: &'a SuiteRecording, variant: Variant, random_seed: u64) -> Self {
        // The wire's metadata (its ground truth above all) is the varied recording's: the
        // original's would contradict the varied values.
        let (wire, unproven, varied) = match recording.case_wire(variant, random_seed) {
            Some((wire, variation)) => (wire, variation.unproven(), variation.recording),
            None => (Wire::default(), None, recording.recording.clone()),
        };
        let opts = Options {
            dialect: Some(recording.base.dialect),
            framing: None,
            detail: true,
        };
        let analysis =
            Analysis::from_recording(&wire.to_recording(&varied), source(&recording.name), opts);
        let expected = Expected::from_analysis(&analysis);
        let error_skipped = analysis.provider_error.as_ref().and_then(|(message, pos)| {
            let event = analysis.events.get(pos.event as usize)?;
            let (start, end) = (event.span.start as usize, event.span.end as usize);
            let body = &analysis.body;
            let mut rest = body.get(..start)?.to_vec();
            rest.extend_from_slice(body.get(end..)?);
            let rec = Recording {
                chunks: vec![Chunk {
                    t_micros: 0,
                    bytes: rest,
                }],
                ..wire.to_recording(&varied)
            };
            let without = Analysis::from_recording(&rec, source(&recording.name), opts);
            Some(ErrorSkipped {
                message: message.clone(),
                expected: Expected::from_analysis(&without),
            })
        });
        Self {
            recording,
            variant,
            wire,
            analysis,
            expected,
            error_skipped,
            unproven,
        }
    }

    /// The one judge: what a client that ended with `exit`, printed `stdout` and wrote `stderr`
    /// (its tail) did on this case, `served` what the case's server saw of it.
    pub fn judge(&self, exit: &Exit, stdout: &[u8], stderr: &str, served: &Served) -> Judgement {
        let got = judge::parse_output(stdout);
        self.judge_parsed(exit, got, stderr, served)
    }

    /// [`CaseContext::judge`] on output already parsed. A client that never requested the stream
    /// fails whatever it printed (its output cannot come from this run's bytes); a pass on a case
    /// whose values could not be varied is not judged.
    pub fn judge_parsed(
        &self,
        exit: &Exit,
        got: Result<Vec<CaseCall>, judge::OutputError>,
        stderr: &str,
        served: &Served,
    ) -> Judgement {
        let expected = &self.expected;
        let mut verdict = judge::judge_with(expected, exit, &got, self.error_skipped.as_ref());
        if let CaseOutcome::Error(msg) = &mut verdict
            && let Some(last) = telling_line(stderr)
        {
            msg.push_str(": ");
            msg.push_str(&sse_replay_core::text::truncate(last.trim(), 200));
        }
        if let CaseOutcome::Fail(msg) = &mut verdict
            && !expected.problems.is_empty()
        {
            msg.push_str(&format!("; the stream: {}", expected.problems.join("; ")));
        }
        if served.requests == 0 {
            let printed = match &got {
                Ok(calls) if calls.is_empty() => "it printed no call".to_owned(),
                Ok(calls) => format!(
                    "it printed {} it cannot have read",
                    sse_replay_core::text::plural(calls.len(), "call")
                ),
                Err(_) => "it printed no calls".to_owned(),
            };
            let verdict = match verdict {
                CaseOutcome::Error(msg) => {
                    CaseOutcome::Error(format!("{msg}; it did not request the stream"))
                }
                _ => CaseOutcome::Fail(format!(
                    "did not request the stream: {printed} (the case's values change every run)"
                )),
            };
            return Judgement {
                outcome: verdict,
                diagnosis: None,
                got: got.ok(),
            };
        }
        if verdict == CaseOutcome::Pass
            && let Some(why) = &self.unproven
        {
            verdict = CaseOutcome::NotJudged(format!(
                "a pass here proves no reading of the stream: {why}"
            ));
        }
        let got = got.ok();
        let diagnosis = match (&verdict, &got) {
            (CaseOutcome::Fail(_), Some(g)) => judge::diagnose(
                g,
                &Scene {
                    expected,
                    analysis: &self.analysis,
                    baseline: Some(&self.recording.one_read),
                    recording: &self.recording.name,
                    variant: self.variant,
                },
            ),
            _ => None,
        };
        Judgement {
            outcome: verdict,
            diagnosis,
            got,
        }
    }
}

/// The stderr line that says most about a crash: the last one naming an error (Node prints its
/// version last after an uncaught exception, Python the exception last), else the last non-empty.
///
/// A line that names a variable of the environment the harness gives every client (an SDK
/// warning that two API keys are set, because the harness set both) is the harness's doing, not
/// the client's, and is never the one quoted.
pub fn telling_line(stderr: &str) -> Option<&str> {
    let ours: Vec<&'static str> =
        super::run::client_env(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
            .into_iter()
            .map(|(k, _)| k)
            .collect();
    let lines = || {
        stderr
            .lines()
            .rev()
            .filter(|l| !l.trim().is_empty())
            .filter(|l| !ours.iter().any(|k| l.contains(k)))
    };
    lines()
        .find(|l| l.contains("Error") || l.contains("error") || l.contains("Exception"))
        .or_else(|| lines().next())
}

#[cfg(test)]
mod tests {
    use super::telling_line;

    #[test]
    fn the_telling_stderr_line_names_the_error_not_the_runtime_version() {
        let node = "file:///c.mjs:9\n    throw new Error('tool call snapshot missing `type`');\n\nError: tool call snapshot missing `type`\n    at x (c.mjs:9:11)\n\nNode.js v20.20.2\n";
        assert_eq!(
            telling_line(node),
            Some("Error: tool call snapshot missing `type`")
        );
        let python =
            "Traceback (most recent call last):\n  File \"c.py\", line 3\nAssertionError\n";
        assert_eq!(telling_line(python), Some("AssertionError"));
        assert_eq!(telling_line("just a line\n\n"), Some("just a line"));
        assert_eq!(telling_line("\n \n"), None);
        // A warning the harness's own environment caused is never the client's telling line.
        let genai = "WARNING:google_genai._api_client:Both GOOGLE_API_KEY and GEMINI_API_KEY are set. Using GOOGLE_API_KEY.\n";
        assert_eq!(telling_line(genai), None);
        assert_eq!(
            telling_line(&format!("ValueError: no function name\n{genai}")),
            Some("ValueError: no function name")
        );
    }
}
