//! The documentation, checked: README.md (the front page) and the user guide in `docs/`.
//!
//! - Every ```` ```console ```` block is run. Each `$ …` line (a trailing `\` continues it) runs
//!   with `sh -c` in a fresh folder per block that sees the repository's `recordings/`, `tests/`
//!   and `examples/` and the built `target/debug/` binaries, with the tested `sse-replay` first on
//!   `PATH`. It must exit 0, or the code a trailing `# exit N` names; every other non-blank line
//!   under it (but `…`) must appear, trimmed, in its standard output or error. A trailing
//!   `# server` starts the command in the background on a free port instead (its `--addr` or
//!   `--listen` address is replaced by port 0), waits for its `listening on http://ADDR/` line,
//!   and lets the later commands of the block reach it at the address the page shows; it is
//!   stopped when the block ends.
//! - A `sse-replay …` command in any other code block (```` ```sh ````, indented, YAML) is not
//!   run: each must be listed in [`UNRUN`] with the reason, and every entry there must still be
//!   found, so the list cannot grow silently or go stale.
//! - Every relative link and image points to an existing file, and every `#anchor` to a heading
//!   of that file (GitHub's anchors).
//! - The front page keeps the two set-up commands `.ci/run` relies on, in at most 300 lines.

use crate::common::{self, BIN, Kid, manifest};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Commands shown in blocks that are not run, each with why: (page, a piece of the command line,
/// the reason).
const UNRUN: &[(&str, &str, &str)] = &[
    (
        "docs/building.md",
        "./target/release/sse-replay recordings/seed-example.ron &",
        "opens the app under Xvfb (a GUI)",
    ),
    (
        "docs/ci.md",
        "sse-replay test --dialect openai-chat --faults all",
        "a GitHub Actions step: runs a Python client the repository does not have",
    ),
    (
        "docs/dialects-and-quirks.md",
        "sse-replay record 'https://bedrock-runtime.us-east-1.amazonaws.com",
        "needs a live Bedrock endpoint and API key",
    ),
    (
        "docs/scan.md",
        "sse-replay scan ~/.local/share/sse-replay/captures",
        "the reader's own captures folder",
    ),
    (
        "docs/test-your-client.md",
        "sse-replay test -- python my_agent.py",
        "the reader's own client",
    ),
    (
        "docs/test-your-client.md",
        "sse-replay test --dialect openai-chat --faults all --junit report.xml -- node client.mjs",
        "the reader's own client",
    ),
    (
        "docs/test-your-client.md",
        "sse-replay test --dialect openai-chat -- python client.py",
        "needs openai-python installed",
    ),
    (
        "docs/test-your-client.md",
        "sse-replay test --dialect DIALECT --faults all --random-seed 7 -j 2 -- CLIENT",
        "a template: the real SDK clients need their SDKs installed (examples/clients/install.sh)",
    ),
];

/// Pages whose commands are a record of what was measured elsewhere (real SDKs installed), not
/// instructions: their links are checked, their commands are not collected.
const RECORDS: &[&str] = &["docs/sdk-clients.md"];

/// How long one command may take (the slowest runs a few seconds in a debug build).
const LIMIT: Duration = Duration::from_secs(120);

/// README.md and every `docs/*.md`, as paths relative to the repository root, in name order.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_owned()];
    let mut guide: Vec<String> = std::fs::read_dir(manifest().join("docs"))
        .expect("docs/")
        .map(|e| {
            e.expect("docs/ entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    guide.sort();
    pages.extend(guide);
    pages
}

fn read(page: &str) -> String {
    std::fs::read_to_string(manifest().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// What a line of a page is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Text,
    /// Inside a fenced block: is it a `console` block?
    Fenced {
        console: bool,
    },
    /// A fence line itself.
    Fence,
    /// An indented code block's line.
    Indented,
}

/// Each line of `text` with what it is (fenced with ``` or ~~~, or indented by four spaces after
/// a blank line).
fn classify(text: &str) -> Vec<(Kind, &str)> {
    let mut out = Vec::new();
    let mut fence: Option<(String, bool)> = None;
    let mut prev_blank = true;
    let mut in_indented = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some((marker, console)) = &fence {
            if trimmed.starts_with(marker.as_str()) && trimmed.trim_end() == marker.as_str() {
                out.push((Kind::Fence, line));
                fence = None;
            } else {
                out.push((Kind::Fenced { console: *console }, line));
            }
            prev_blank = false;
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let marker: String = trimmed
                .chars()
                .take_while(|c| *c == '`' || *c == '~')
                .collect();
            let info = trimmed[marker.len()..].trim();
            fence = Some((marker, info == "console"));
            out.push((Kind::Fence, line));
            in_indented = false;
            prev_blank = false;
            continue;
        }
        let blank = line.trim().is_empty();
        if line.starts_with("    ") && !blank && (prev_blank || in_indented) {
            in_indented = true;
            out.push((Kind::Indented, line));
        } else {
            if !blank {
                in_indented = false;
            }
            out.push((Kind::Text, line));
        }
        prev_blank = blank;
    }
    out
}

/// One command of a console block.
#[derive(Debug)]
struct Step {
    line: usize,
    command: String,
    exit: i32,
    server: bool,
    expect: Vec<String>,
}

/// The console blocks of `text`, each as its steps.
fn console_blocks(text: &str) -> Vec<Vec<Step>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<Step>> = None;
    let mut continuing = false;
    for (n, (kind, line)) in classify(text).into_iter().enumerate() {
        match kind {
            Kind::Fenced { console: true } => {
                let steps = current.get_or_insert_with(Vec::new);
                if continuing {
                    let step = steps.last_mut().expect("a step to continue");
                    step.command.push('\n');
                    step.command.push_str(line);
                } else if let Some(cmd) = line.strip_prefix("$ ") {
                    steps.push(Step {
                        line: n + 1,
                        command: cmd.to_owned(),
                        exit: 0,
                        server: false,
                        expect: Vec::new(),
                    });
                } else if !line.trim().is_empty() && line.trim() != "…" {
                    let step = steps
                        .last_mut()
                        .unwrap_or_else(|| panic!("line {}: output before any command", n + 1));
                    step.expect.push(line.trim().to_owned());
                }
                continuing = line.ends_with('\\');
            }
            _ => {
                if let Some(steps) = current.take() {
                    blocks.push(steps);
                }
                continuing = false;
            }
        }
    }
    for step in blocks.iter_mut().flatten() {
        let (command, exit, server) = annotations(&step.command);
        step.command = command;
        step.exit = exit;
        step.server = server;
    }
    blocks
}

/// A command without its trailing `# exit N` / `# server` comment; the exit code it expects and
/// whether it is a server.
fn annotations(command: &str) -> (String, i32, bool) {
    if let Some((cmd, note)) = command.rsplit_once(" # ") {
        let note = note.trim();
        if note == "server" {
            return (cmd.trim_end().to_owned(), 0, true);
        }
        if let Some(code) = note.strip_prefix("exit ") {
            let code = code
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("`# exit N` needs a number: {command}"));
            return (cmd.trim_end().to_owned(), code, false);
        }
    }
    (command.to_owned(), 0, false)
}

/// Whether `line` (of a block that is not run) runs `sse-replay`: the program's name as a
/// command word — at the start (after a `$ ` prompt or variable assignments), after a pipe,
/// `&&`, `;` or a path.
fn runs_sse_replay(line: &str) -> bool {
    let line = line.trim();
    let line = line.strip_prefix("$ ").unwrap_or(line);
    line.split(['|', ';', '&']).any(|part| {
        part.split_whitespace()
            .find(|w| !w.contains('='))
            .is_some_and(|w| w == "sse-replay" || w.ends_with("/sse-replay"))
    })
}

/// `(page, line number, line)` for every `sse-replay` command in a block that is not run.
fn unrun_commands() -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    for page in pages() {
        if RECORDS.contains(&page.as_str()) {
            continue;
        }
        let text = read(&page);
        for (n, (kind, line)) in classify(&text).into_iter().enumerate() {
            let code = matches!(kind, Kind::Indented | Kind::Fenced { console: false });
            if code && runs_sse_replay(line) {
                out.push((page.clone(), n + 1, line.trim().to_owned()));
            }
        }
    }
    out
}

/// A fresh folder for one block: links to the repository's data and to the built binaries.
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["recordings", "tests", "examples"] {
        std::os::unix::fs::symlink(manifest().join(name), dir.path().join(name)).expect("symlink");
    }
    std::fs::create_dir(dir.path().join("target")).expect("target/");
    std::os::unix::fs::symlink(bin_dir(), dir.path().join("target/debug")).expect("symlink");
    dir
}

/// Where the tested `sse-replay` and the example clients were built.
fn bin_dir() -> PathBuf {
    Path::new(BIN)
        .parent()
        .expect("the binary's folder")
        .to_path_buf()
}

/// `sh -c COMMAND` in `dir`, the tested binary first on `PATH`, colour off, no standard input.
fn shell(dir: &Path, command: &str) -> Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin_dir()];
    paths.extend(std::env::split_paths(&path));
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", std::env::join_paths(paths).expect("PATH"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// The address a server command listens on (the word after `--addr` or `--listen`).
fn listen_address(command: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    words
        .windows(2)
        .find(|w| w[0] == "--addr" || w[0] == "--listen")
        .map(|w| w[1].to_owned())
}

/// A server started by a block, stopped (and reaped) when dropped.
struct Server {
    _kid: Kid,
    _lines: Receiver<String>,
}

/// Starts `command` (a server) in `dir`, on a free port; the address it listens on.
fn start(dir: &Path, command: &str) -> (Server, String, String) {
    use std::io::BufRead as _;
    let shown = listen_address(command)
        .unwrap_or_else(|| panic!("a `# server` command names its --addr or --listen: {command}"));
    let command = command.replacen(&shown, "127.0.0.1:0", 1);
    let mut child = shell(dir, &format!("exec {command}"))
        .stderr(Stdio::null())
        .spawn()
        .expect("sh");
    let stdout = child.stdout.take().expect("stdout");
    let kid = Kid(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{command}: printed nothing"));
    let actual = first
        .strip_prefix("listening on http://")
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("{command}: first line {first:?}"))
        .to_owned();
    (
        Server {
            _kid: kid,
            _lines: rx,
        },
        shown,
        actual,
    )
}

/// Runs one console block; a description of each failure. Each command run is logged in `log`.
fn run_block(page: &str, steps: &[Step], log: &mut Vec<String>) -> Vec<String> {
    let dir = sandbox();
    let mut servers = Vec::new();
    // The addresses the page shows, and where their servers really listen.
    let mut addresses: Vec<(String, String)> = Vec::new();
    let mut failures = Vec::new();
    for step in steps {
        let mut command = step.command.clone();
        for (shown, actual) in &addresses {
            command = command.replace(shown.as_str(), actual);
        }
        let started = Instant::now();
        if step.server {
            let (server, shown, actual) = start(dir.path(), &command);
            log.push(format!(
                "  {page}:{} (server on {actual}) $ {}",
                step.line, step.command
            ));
            let expected = step
                .expect
                .iter()
                .map(|e| e.replace(shown.as_str(), &actual));
            for e in expected {
                if !e.starts_with("listening on http://") {
                    failures.push(format!(
                        "{page}:{}: a server's shown output is its `listening on` line: {e:?}",
                        step.line
                    ));
                }
            }
            addresses.push((shown, actual));
            servers.push(server);
            continue;
        }
        let kid = Kid(shell(dir.path(), &command).spawn().expect("sh"));
        let out = common::wait_bounded(kid, &command, LIMIT);
        let code = common::code(&out);
        let text = format!("{}{}", common::stdout(&out), common::stderr(&out));
        log.push(format!(
            "  {page}:{} exit {code} in {:.1} s $ {}",
            step.line,
            started.elapsed().as_secs_f64(),
            step.command
        ));
        if code != step.exit {
            failures.push(format!(
                "{page}:{}: `{}` exited {code}, the page says {}; output:\n{text}",
                step.line, step.command, step.exit
            ));
            continue;
        }
        for e in &step.expect {
            let mut e = e.clone();
            for (shown, actual) in &addresses {
                e = e.replace(shown.as_str(), actual);
            }
            if !text.lines().any(|l| l.contains(e.trim())) {
                failures.push(format!(
                    "{page}:{}: `{}` did not print {e:?}; output:\n{text}",
                    step.line, step.command
                ));
            }
        }
    }
    drop(servers);
    failures
}

/// Every console block of the front page and the guide runs as shown.
#[test]
fn every_console_command_runs_as_shown() {
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        if RECORDS.contains(&page.as_str()) {
            continue;
        }
        for block in console_blocks(&read(&page)) {
            ran += block.len();
            let mut log = Vec::new();
            failures.extend(run_block(&page, &block, &mut log));
            for line in log {
                println!("{line}");
            }
        }
    }
    println!(
        "{ran} documented commands ran in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(ran >= 30, "only {ran} commands found in console blocks");
    assert!(
        failures.is_empty(),
        "{} documented command(s) do not run as shown:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A command in a block that is not run is listed in `UNRUN` with its reason, and each entry
/// there is still on its page.
#[test]
fn commands_not_run_are_listed_with_a_reason() {
    let unrun = unrun_commands();
    for (page, line, command) in &unrun {
        let listed = UNRUN
            .iter()
            .find(|(p, piece, _)| p == page && command.contains(piece));
        match listed {
            Some((_, _, why)) => println!("  not run: {page}:{line} ({why}): {command}"),
            None => panic!(
                "{page}:{line}: `{command}` is in a block that is not run: put it in a \
                 ```console block (run by this test), or list it in UNRUN with the reason"
            ),
        }
    }
    for (page, piece, _) in UNRUN {
        assert!(
            unrun.iter().any(|(p, _, c)| p == page && c.contains(piece)),
            "UNRUN lists `{piece}` on {page}, which no longer shows it: remove the entry"
        );
    }
    println!("{} documented commands not run", unrun.len());
}

/// GitHub's anchor for a heading: lower case, punctuation (backticks, colons, apostrophes…)
/// removed, spaces as hyphens; link text kept, link targets dropped.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](target)` → `text`
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (a repeated heading gets `-1`, `-2`, … as on GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (kind, line) in classify(text) {
        if kind != Kind::Text {
            continue;
        }
        let Some(heading) = line
            .strip_prefix('#')
            .map(|h| h.trim_start_matches('#'))
            .filter(|h| h.starts_with(' '))
        else {
            continue;
        };
        let base = slug(heading.trim().trim_end_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of a line's links and images (`[x](target)`, `![x](target)`), outside code spans.
fn link_targets(line: &str) -> Vec<String> {
    let mut plain = String::new();
    for (i, piece) in line.split('`').enumerate() {
        if i % 2 == 0 {
            plain.push_str(piece);
        }
    }
    let mut out = Vec::new();
    let mut rest = plain.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_owned());
        rest = &after[end..];
    }
    out
}

/// Every relative link of README.md and docs/*.md points to a file that exists, and every
/// `#anchor` to a heading of its page.
#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        let base = manifest().join(&page);
        let dir = base.parent().expect("a page's folder").to_path_buf();
        for (n, (kind, line)) in classify(&text).into_iter().enumerate() {
            if kind != Kind::Text {
                continue;
            }
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let file = if path.is_empty() {
                    base.clone()
                } else {
                    dir.join(path)
                };
                if !file.exists() {
                    broken.push(format!("{page}:{}: no such file: {target}", n + 1));
                    continue;
                }
                if let Some(anchor) = anchor {
                    let headings = std::fs::read_to_string(&file)
                        .map(|t| anchors(&t))
                        .unwrap_or_default();
                    if !headings.contains(anchor) {
                        broken.push(format!(
                            "{page}:{}: no heading #{anchor} in {}",
                            n + 1,
                            file.display()
                        ));
                    }
                }
            }
        }
    }
    println!("{checked} relative links checked");
    assert!(checked > 50, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The cells of a table row: split at each `|` that is not escaped (`\|`), the outer pipes
/// dropped.
fn cells(row: &str) -> usize {
    let row = row.trim();
    let mut n: usize = 0;
    let mut escaped = false;
    for c in row.chars() {
        match c {
            '\\' => escaped = !escaped,
            '|' if !escaped => n += 1,
            _ => escaped = false,
        }
    }
    // `| a | b |` has 3 pipes and 2 cells
    n.saturating_sub(1)
}

/// Every table's rows have as many cells as its header (an unescaped `|` in a cell breaks the
/// row when rendered), and every fenced block is closed.
#[test]
fn every_table_and_fence_is_well_formed() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = read(&page);
        let lines = classify(&text);
        let fences = lines.iter().filter(|(k, _)| *k == Kind::Fence).count();
        if fences % 2 != 0 {
            broken.push(format!("{page}: a fenced block is not closed"));
        }
        let mut header: Option<usize> = None;
        for (n, (kind, line)) in lines.iter().enumerate() {
            let row = *kind == Kind::Text && line.trim_start().starts_with('|');
            if !row {
                header = None;
                continue;
            }
            let count = cells(line);
            match header {
                None => header = Some(count),
                Some(want) if want != count => broken.push(format!(
                    "{page}:{}: {count} cells in a table of {want} columns: {line}",
                    n + 1
                )),
                Some(_) => {}
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The front page keeps the two set-up commands (`.ci/run` runs exactly the test command it
/// gives) in at most 300 lines.
#[test]
fn the_front_page_keeps_the_two_set_up_commands() {
    let readme = read("README.md");
    assert!(
        readme.lines().count() <= 300,
        "README.md is {} lines; the front page keeps to 300",
        readme.lines().count()
    );
    let commands: Vec<&str> = classify(&readme)
        .into_iter()
        .filter(|(k, _)| *k == Kind::Indented)
        .map(|(_, l)| l.trim())
        .collect();
    assert!(commands.contains(&"cargo run --release"), "{commands:?}");
    assert!(commands.contains(&"cargo test --locked"), "{commands:?}");
    let ci = read(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "cargo test --locked"),
        ".ci/run runs the README's test command as written"
    );
}

/// The parser's conventions, on a small page: prompts, continuations, annotations, expected
/// output, blocks that are not run.
#[test]
fn console_blocks_are_read_as_documented() {
    let page = "text\n\n```console\n$ sse-replay check a.ron   # exit 1\nResult: FAILED\n…\n$ sse-replay serve x --addr 127.0.0.1:8080 # server\nlistening on http://127.0.0.1:8080/\n$ sse-replay a \\\n  b\n```\n\n```sh\nsse-replay test -- CMD\n```\n\n    find . | sse-replay scan --files-from -\n";
    let blocks = console_blocks(page);
    assert_eq!(blocks.len(), 1);
    let steps = &blocks[0];
    assert_eq!(steps.len(), 3);
    assert_eq!(
        (steps[0].command.as_str(), steps[0].exit, steps[0].server),
        ("sse-replay check a.ron", 1, false)
    );
    assert_eq!(steps[0].expect, ["Result: FAILED"]);
    assert!(steps[1].server);
    assert_eq!(
        listen_address(&steps[1].command).as_deref(),
        Some("127.0.0.1:8080")
    );
    assert_eq!(steps[2].command, "sse-replay a \\\n  b");
    let code: Vec<&str> = classify(page)
        .into_iter()
        .filter(|(k, l)| {
            matches!(k, Kind::Indented | Kind::Fenced { console: false }) && runs_sse_replay(l)
        })
        .map(|(_, l)| l.trim())
        .collect();
    assert_eq!(
        code,
        [
            "sse-replay test -- CMD",
            "find . | sse-replay scan --files-from -"
        ]
    );
    assert_eq!(cells(r"| a | `b \| c` | d |"), 3);
    assert_eq!(cells("| a | b |"), 2);
    assert_eq!(
        slug("A folder of captures: `scan`"),
        "a-folder-of-captures-scan"
    );
    assert_eq!(
        slug("Security: trusted with other people's traffic"),
        "security-trusted-with-other-peoples-traffic"
    );
}
