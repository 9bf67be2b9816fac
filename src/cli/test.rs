//! `sse-replay test [OPTIONS] -- CMD [ARGS…]`: run a client program against every recording ×
//! variant and judge the tool calls it prints (see [`sse_replay_net::harness`]). Exit 0 when no case
//! failed or errored (a case not judged is neither), 1 when any did, 2 when the command could not
//! start (the run stops at once with one line) or a recording could not be read (the readable ones
//! still run). Without `--dialect`, dialects the client does not speak are reported once and
//! skipped.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use super::{EXIT_FAILED, EXIT_INPUT, EXIT_OK, fail, shared};
use sse_replay_core::dialect::DialectKind;
use sse_replay_net::harness::{self, CaseOutcome, CaseResult, Config, Summary, Variant};

/// `test` arguments.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Recordings to run (files or folders, searched recursively; `.ron` and raw bodies). Default:
    /// the built-in suite (every bundled recording).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub recordings: Vec<PathBuf>,
    /// Only recordings of these dialects (comma list or repeated). Without it, a dialect on whose
    /// clean recordings the client prints no call is reported once as not spoken and skipped;
    /// naming it here runs it anyway.
    #[arg(long, value_delimiter = ',', value_parser = super::dialect_parser())]
    pub dialect: Vec<DialectKind>,
    /// Framing variants (comma list): recorded, one-read, bytewise, utf8-split, random, crlf,
    /// keepalive. Default: all that apply to each recording.
    #[arg(long, value_delimiter = ',', value_parser = shared::parse_variant)]
    pub variants: Vec<Variant>,
    /// Fault variants to add (comma list): cut, no-terminator, or all.
    #[arg(long, value_delimiter = ',', value_parser = shared::faults_parser())]
    pub faults: Vec<String>,
    /// Cases run in parallel. Default: the number of cores.
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: Option<u16>,
    /// Seconds a client may run per case before it (and its process group) is killed.
    #[arg(long, default_value = "30", value_parser = parse_seconds)]
    pub timeout: f64,
    /// Speed of the `recorded` variant's timing (2 = twice as fast).
    #[arg(long, default_value = "1", value_parser = parse_speed)]
    pub speed: f64,
    /// Seed of the `random` variant's write sizes (printed, so a failure reproduces). Default: new
    /// each run.
    #[arg(long, value_name = "N")]
    pub random_seed: Option<u64>,
    /// Print one JSON object on standard output (the matrix goes to standard error).
    #[arg(long)]
    pub json: bool,
    /// Also write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Replace the JUnit FILE if it exists (without it, an existing file is refused with exit 2
    /// before any case runs).
    #[arg(long)]
    pub force: bool,
    /// The client under test and its arguments (after `--`).
    #[arg(last = true, required = true, num_args = 1.., value_name = "CMD")]
    pub command: Vec<String>,
}

fn parse_positive(s: &str, flag: &str, max: f64) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= max => Ok(v),
        _ => Err(format!(
            "{flag} {s:?}: expected a positive number up to {max}"
        )),
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    parse_positive(s, "--timeout", 86_400.0)
}

fn parse_speed(s: &str) -> Result<f64, String> {
    parse_positive(s, "--speed", 1e6)
}

/// Control characters from a client's output made visible before they reach a terminal.
fn visible(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

fn mark(v: &CaseOutcome) -> &'static str {
    match v {
        CaseOutcome::Pass => "✓",
        CaseOutcome::Fail(_) => "✗",
        CaseOutcome::Error(_) => "!",
        CaseOutcome::NotJudged(_) => "○",
    }
}

/// The matrix (recordings × variants) and the failure list, for people.
pub fn matrix_text(names: &[String], variants: &[Variant], results: &[CaseResult]) -> String {
    let mut out = String::new();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(9);
    let mut header = format!("{:width$}", "");
    for v in variants {
        header.push_str(&format!("  {}", v.name()));
    }
    out.push_str(header.trim_end());
    out.push('\n');
    for (ri, name) in names.iter().enumerate() {
        let row: Vec<&CaseResult> = results.iter().filter(|r| r.id.recording == ri).collect();
        if row.is_empty() {
            continue;
        }
        let mut line = format!("{:width$}", visible(name));
        for v in variants {
            let cell = row
                .iter()
                .find(|r| r.id.variant == *v)
                .map_or("·", |r| mark(&r.outcome));
            let w = v.name().chars().count();
            let pad = w.saturating_sub(1);
            line.push_str(&format!(
                "  {:>left$}{cell}{:right$}",
                "",
                "",
                left = pad / 2,
                right = pad - pad / 2
            ));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("✓ pass  ✗ fail  ! error  ○ not judged  · does not apply\n");
    let bad: Vec<&CaseResult> = results
        .iter()
        .filter(|r| matches!(r.outcome, CaseOutcome::Fail(_) | CaseOutcome::Error(_)))
        .collect();
    if !bad.is_empty() {
        out.push_str("\nFailures:\n");
        for r in bad {
            let seed = r
                .random_seed
                .map(|s| format!(" (--random-seed {s})"))
                .unwrap_or_default();
            out.push_str(&format!(
                "{} {} × {}{seed}: {}\n",
                mark(&r.outcome),
                visible(&r.recording),
                r.id.variant.name(),
                visible(r.outcome.detail())
            ));
            if let Some(d) = &r.diagnosis {
                out.push_str(&format!("    {}\n", visible(d)));
            }
            // How much of the stream it read (a client that never asked says so in its detail).
            if r.served.requests > 0 {
                out.push_str(&format!("    stream: {}\n", harness::served_text(r)));
            }
            if matches!(r.outcome, CaseOutcome::Error(_)) && !r.stderr.trim().is_empty() {
                let lines: Vec<&str> = r.stderr.trim_end().lines().collect();
                for l in &lines[lines.len().saturating_sub(5)..] {
                    out.push_str(&format!("    stderr: {}\n", visible(l)));
                }
            }
        }
    }
    let unjudged: Vec<&CaseResult> = results
        .iter()
        .filter(|r| matches!(r.outcome, CaseOutcome::NotJudged(_)))
        .collect();
    if !unjudged.is_empty() {
        out.push_str("\nNot judged (a pass that carries no signal):\n");
        for r in unjudged {
            out.push_str(&format!(
                "○ {} × {}: {}\n",
                visible(&r.recording),
                r.id.variant.name(),
                visible(r.outcome.detail())
            ));
        }
    }
    out
}

/// Runs `sse-replay test`.
#[allow(
    clippy::print_stderr,
    reason = "the command line: its reports and messages are printed here"
)]
pub(super) fn run(a: &TestArgs) -> ExitCode {
    let Some((program, args)) = a.command.split_first() else {
        return fail(EXIT_INPUT, "no command to test: give it after --");
    };
    // This process starts no child but the cases' clients: every orphan re-parented to it is
    // a case's, even one that carries none of the case's marks.
    harness::run::claim_orphans();
    if !harness::run::program_exists(program) {
        return fail(
            EXIT_INPUT,
            format!("cannot run the client: command not found: {program}"),
        );
    }
    if let Some(path) = &a.junit
        && let Err(e) = sse_replay_core::recording::output_target(path, a.force)
    {
        return fail(EXIT_INPUT, e);
    }
    let started = Instant::now();
    let (suite, unreadable) = if a.recordings.is_empty() {
        harness::builtin_suite()
    } else {
        harness::load_paths(&a.recordings)
    };
    for u in &unreadable {
        eprintln!("sse-replay: {}", u.error.replace(['\n', '\r'], " "));
    }
    let variants = shared::selected_variants(&a.variants, &a.faults);
    let config = Config {
        command: harness::ClientCommand {
            program: program.clone(),
            args: args.to_vec(),
        },
        variants: variants.clone(),
        dialects: a.dialect.clone(),
        jobs: a.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            usize::from,
        ),
        timeout: Duration::from_secs_f64(a.timeout),
        speed: a.speed,
        random_seed: a.random_seed.unwrap_or_else(fresh_seed),
    };
    let planned = harness::plan_cases(&suite, &config);
    let mut in_cases: Vec<usize> = planned.iter().map(|id| id.recording).collect();
    in_cases.dedup();
    let header = format!(
        "sse-replay test: {}, {}, -j {}, random seed {}",
        sse_replay_core::text::plural(in_cases.len(), "recording"),
        sse_replay_core::text::plural(planned.len(), "case"),
        config.jobs,
        config.random_seed
    );
    // Said once the client has started: a client that cannot start gets one line, nothing else.
    let header_said = std::sync::Once::new();
    let tty = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize, r: &CaseResult| {
        if r.start_failed {
            return;
        }
        header_said.call_once(|| eprintln!("{header}"));
        if tty {
            let width = 30;
            let filled = (done * width / total.max(1)).min(width);
            eprint!(
                "\r[{}{}] {done}/{total} {} {} × {}\x1b[K",
                "#".repeat(filled),
                " ".repeat(width - filled),
                mark(&r.outcome),
                visible(&r.recording),
                r.id.variant.name()
            );
            if done == total {
                eprint!("\r\x1b[K");
            }
        }
    };
    // Ctrl+C or SIGTERM: the running cases' clients, and everything they started, are killed,
    // and no case starts after; what finished is reported.
    let stop = match super::signals::stop_on_signal_flag() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let run = harness::run_plan(&suite, &config, &stop.flag, &progress);
    if tty && header_said.is_completed() {
        eprint!("\r\x1b[K");
    }
    if let Some(code) = stop.code() {
        let ran = run
            .results
            .iter()
            .filter(|r| r.exit != Some(harness::Exit::Stopped))
            .count();
        return fail(
            code,
            format!(
                "stopped after {ran} of {}: the clients still running were killed, with every process they started",
                sse_replay_core::text::plural(run.planned.len(), "case")
            ),
        );
    }
    if let Some(why) = &run.start_failure {
        return fail(EXIT_INPUT, format!("could not start the client: {why}"));
    }
    header_said.call_once(|| eprintln!("{header}"));
    let speaks_none = run.speaks_none();
    let results = run.results;
    let total = started.elapsed();
    let names: Vec<String> = suite.iter().map(|r| r.name.clone()).collect();
    let summary = Summary::of(&results);
    let client: Duration = results.iter().map(|r| r.client_time).sum();
    let case: Duration = results.iter().map(|r| r.case_time).sum();
    let overhead_ms = if results.is_empty() {
        0.0
    } else {
        (case.saturating_sub(client)).as_secs_f64() * 1e3 / results.len() as f64
    };
    let mut text = matrix_text(&names, &variants, &results);
    if !run.not_spoken.is_empty() {
        text.push('\n');
        for n in &run.not_spoken {
            text.push_str(&n.line());
            text.push('\n');
        }
    }
    let not_judged = if summary.not_judged > 0 {
        format!(", {} not judged", summary.not_judged)
    } else {
        String::new()
    };
    text.push_str(&format!(
        "\n{}: {} pass, {} fail, {} error{not_judged} in {:.1} s (harness {:.2} ms per case over the client's run time)\n",
        sse_replay_core::text::plural(summary.cases, "case"),
        summary.pass,
        summary.fail,
        summary.error,
        total.as_secs_f64(),
        overhead_ms
    ));
    if let Some(path) = &a.junit {
        let xml = harness::junit::render(&results, total);
        if let Err(e) = sse_replay_core::recording::write_file(
            path,
            xml.as_bytes(),
            sse_replay_core::recording::WriteOptions::public(a.force),
        ) {
            eprintln!(
                "sse-replay: cannot write the JUnit report: {e} in {}",
                path.display()
            );
        }
    }
    let written = if a.json {
        std::io::stderr().write_all(text.as_bytes()).ok();
        let doc = serde_json::json!({
            "schema_version": 1,
            "cases": results.iter().map(harness::case_json).collect::<Vec<_>>(),
            "summary": {
                "cases": summary.cases,
                "pass": summary.pass,
                "fail": summary.fail,
                "error": summary.error,
                "not_judged": summary.not_judged,
                "not_spoken": run.not_spoken.iter().map(|n| serde_json::json!({"dialect": n.dialect.name(), "api": n.api.map(|(api, _)| api.name), "asked": n.api.map(|(_, asked)| asked.name), "skipped": n.skipped, "example": n.example})).collect::<Vec<_>>(),
                "unreadable": unreadable.iter().map(|u| serde_json::json!({"path": u.path.display().to_string(), "error": u.error})).collect::<Vec<_>>(),
                "random_seed": config.random_seed,
                "seconds": total.as_secs_f64(),
                "harness_ms_per_case": overhead_ms,
            },
        });
        let mut s = sse_replay_core::text::json_pretty(&doc);
        s.push('\n');
        std::io::stdout().write_all(s.as_bytes())
    } else {
        std::io::stdout().write_all(text.as_bytes())
    };
    if let Err(e) = written {
        return fail(EXIT_FAILED, format!("cannot write the report: {e}"));
    }
    if !unreadable.is_empty() {
        return fail(
            EXIT_INPUT,
            format!(
                "{} recording(s) could not be read: {}",
                unreadable.len(),
                unreadable
                    .iter()
                    .map(|u| u.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if let Some(why) = speaks_none {
        return fail(EXIT_FAILED, why);
    }
    if summary.fail == 0 && summary.error == 0 {
        ExitCode::from(EXIT_OK)
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// A new random seed per run (printed, so a failure reproduces).
pub(super) fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_000)
}
