//! Files written safely, through the binary: symlinks planted at every predictable name and at the
//! target, `--force`, devices and FIFOs written straight, `-o -`, file modes, no temporary file
//! left after an error or Ctrl+C, and journals turned into recordings with `import`.
//! Every child process is bounded in time and killed on drop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use sse_replay_core::recording::{JOURNAL_MAGIC, Recording};

use common::{BIN, Kid, code, stderr, wait_bounded};

/// Runs `sse-replay ARGS` in `dir` (at most 60 s).
fn run_in(dir: &Path, args: &[&str]) -> Output {
    common::run_env(dir, args, &[], Duration::from_secs(60))
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn seed() -> PathBuf {
    common::manifest().join("recordings/seed-example.ron")
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

// ---------------------------------------------------------------------------------------------
// Symlinks
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_symlink_planted_at_the_old_temporary_name_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "untouched").unwrap();
    for name in ["o.ron.tmp", ".o.ron.tmp", "o.ron.partial.tmp"] {
        std::os::unix::fs::symlink(&victim, dir.path().join(name)).unwrap();
    }
    let o = run_in(dir.path(), &["stub", "--seed", "-o", "o.ron"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert!(Recording::load(&dir.path().join("o.ron")).is_ok());
    assert_eq!(
        names_in(dir.path()),
        [
            ".o.ron.tmp",
            "o.ron",
            "o.ron.partial.tmp",
            "o.ron.tmp",
            "victim.txt"
        ],
        "exactly the expected files"
    );
    // The same for export -o and import -o.
    let o = run_in(
        dir.path(),
        &[
            "export",
            seed().to_str().unwrap(),
            "-o",
            "o.ron.tmp",
            "--force",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert!(
        std::fs::symlink_metadata(dir.path().join("o.ron.tmp"))
            .unwrap()
            .file_type()
            .is_file(),
        "--force replaces the symlink itself"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_at_the_target_is_refused_or_replaced_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "untouched").unwrap();
    let target = dir.path().join("out.ron");
    std::os::unix::fs::symlink(&victim, &target).unwrap();
    for args in [
        vec!["stub", "--seed", "-o", "out.ron"],
        vec!["export", seed().to_str().unwrap(), "-o", "out.ron"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim_end(),
            "sse-replay: refusing to overwrite an existing file (use --force): out.ron"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    }
    let o = run_in(dir.path(), &["stub", "--seed", "-o", "out.ron", "--force"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert!(
        std::fs::symlink_metadata(&target)
            .unwrap()
            .file_type()
            .is_file()
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_at_the_journal_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "untouched").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("rec.ron.partial")).unwrap();
    // The journal is created before anything is sent: no server is needed.
    let o = run_in(
        dir.path(),
        &[
            "record",
            "http://127.0.0.1:9/v1",
            "-o",
            "rec.ron",
            "--timeout",
            "2",
        ],
    );
    assert_ne!(code(&o), 0);
    assert!(stderr(&o).contains("journal"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert!(!dir.path().join("rec.ron").exists());
}

// ---------------------------------------------------------------------------------------------
// --force
// ---------------------------------------------------------------------------------------------

#[test]
fn existing_files_need_force() {
    let dir = tempfile::tempdir().unwrap();
    let seed = seed();
    let seed = seed.to_str().unwrap();
    let raw = common::manifest().join("tests/data/import/curl-body.txt");
    let (upstream, requests) = common::canned_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream",
        "data: [DONE]\n\n",
    );
    let url = format!("{upstream}/v1");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["stub", "--seed", "-o", "x.ron"], "x.ron"),
        (vec!["export", seed, "-o", "x.json"], "x.json"),
        (
            vec!["import", raw.to_str().unwrap(), "-o", "imported.ron"],
            "imported.ron",
        ),
        (vec!["record", &url, "-o", "rec.ron"], "rec.ron"),
    ];
    for (args, out) in cases {
        let path = dir.path().join(out);
        std::fs::write(&path, "precious").unwrap();
        let o = run_in(dir.path(), &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim_end(),
            format!("sse-replay: refusing to overwrite an existing file (use --force): {out}"),
            "{args:?}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
        if args[0] == "record" {
            // Refused before anything was sent.
            assert!(requests.try_recv().is_err());
        }
        let mut forced = args.clone();
        forced.push("--force");
        let o = run_in(dir.path(), &forced);
        assert_eq!(code(&o), 0, "{forced:?}: {}", stderr(&o));
        assert_ne!(std::fs::read_to_string(&path).unwrap(), "precious");
    }
    let mut names = names_in(dir.path());
    names.retain(|n| n.starts_with('.'));
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

// ---------------------------------------------------------------------------------------------
// Devices, FIFOs, standard output
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn dev_null_is_written_straight_never_replaced() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["stub", "--seed", "-o", "/dev/null"],
        vec![
            "export",
            seed().to_str().unwrap().to_owned().leak(),
            "-o",
            "/dev/null",
        ],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }
    assert!(names_in(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_fifo_is_written_straight_never_replaced() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).unwrap())
    };
    let o = run_in(
        dir.path(),
        &["export", seed().to_str().unwrap(), "-o", "pipe"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got = reader.join().unwrap();
    let expected = run_in(dir.path(), &["export", seed().to_str().unwrap()]).stdout;
    assert_eq!(got, expected);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names_in(dir.path()), ["pipe"]);
}

#[test]
fn dash_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let stub = run_in(dir.path(), &["stub", "--seed", "-o", "-"]);
    assert_eq!(code(&stub), 0, "{}", stderr(&stub));
    let rec = Recording::from_bytes(&stub.stdout).unwrap();
    assert!(!rec.chunks.is_empty());
    let export = run_in(dir.path(), &["export", seed().to_str().unwrap(), "-o", "-"]);
    assert_eq!(code(&export), 0, "{}", stderr(&export));
    let calls: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(calls.as_array().unwrap().len(), 2);
    let raw = common::manifest().join("tests/data/import/curl-body.txt");
    let import = run_in(dir.path(), &["import", raw.to_str().unwrap(), "-o", "-"]);
    assert_eq!(code(&import), 0, "{}", stderr(&import));
    assert!(Recording::from_bytes(&import.stdout).is_ok());
    assert!(
        names_in(dir.path()).is_empty(),
        "{:?}",
        names_in(dir.path())
    );
}

// ---------------------------------------------------------------------------------------------
// Modes
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn recordings_are_private_and_exports_follow_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let raw = common::manifest().join("tests/data/import/curl-body.txt");
    let seed = seed();
    // Run through `sh` to set the umask of the child.
    let with_umask = |umask: &str, args: &str| {
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" {args}"))
            .arg(BIN)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_bounded(Kid(child), args, Duration::from_secs(60));
        assert_eq!(code(&o), 0, "{args}: {}", stderr(&o));
    };
    with_umask("022", "stub --seed -o stub.ron");
    with_umask("022", &format!("import {} -o imported.ron", raw.display()));
    with_umask("022", &format!("export {} -o calls.json", seed.display()));
    with_umask("077", &format!("export {} -o private.json", seed.display()));
    with_umask("002", &format!("export {} -o group.json", seed.display()));
    assert_eq!(mode(&dir.path().join("stub.ron")), 0o600);
    assert_eq!(mode(&dir.path().join("imported.ron")), 0o600);
    assert_eq!(mode(&dir.path().join("calls.json")), 0o644);
    assert_eq!(mode(&dir.path().join("private.json")), 0o600);
    assert_eq!(mode(&dir.path().join("group.json")), 0o664);
}

// ---------------------------------------------------------------------------------------------
// No temporary file left behind
// ---------------------------------------------------------------------------------------------

#[test]
fn a_failed_export_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    // The input cannot be read: exit 2, and the output folder holds nothing new.
    let o = run_in(
        dir.path(),
        &["export", "no-such-input.sse", "-o", "out.json"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        names_in(dir.path()).is_empty(),
        "{:?}",
        names_in(dir.path())
    );
    // A folder that does not exist: exit 1, one line naming the file.
    let o = run_in(
        dir.path(),
        &["export", seed().to_str().unwrap(), "-o", "missing/out.json"],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).trim_end().ends_with("missing/out.json"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1);
    assert!(
        names_in(dir.path()).is_empty(),
        "{:?}",
        names_in(dir.path())
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_export_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.sse");
    let made = Command::new("mkfifo").arg(&input).status().unwrap();
    assert!(made.success());
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let child = Command::new(BIN)
        .args(["export", input.to_str().unwrap(), "-o", "out/calls.json"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let kid = Kid(child);
    // Keep a writer open and feed part of a stream: export waits for the rest.
    let mut writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&input)
        .unwrap();
    std::io::Write::write_all(&mut writer, b"data: {\"choices\":[]}\n\n").unwrap();
    // Once the temporary file is there, export has its Ctrl+C handler (installed first) and the
    // file is on the list the handler removes (registered as it is created, under one lock).
    let deadline = Instant::now() + Duration::from_secs(30);
    while names_in(&out_dir).is_empty() {
        assert!(Instant::now() < deadline, "export never opened its output");
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = Command::new("kill")
        .args(["-INT", &kid.0.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = wait_bounded(kid, "export after SIGINT", Duration::from_secs(30));
    drop(writer);
    assert_eq!(code(&o), 130, "{}", stderr(&o));
    assert!(names_in(&out_dir).is_empty(), "{:?}", names_in(&out_dir));
}

// ---------------------------------------------------------------------------------------------
// Journals
// ---------------------------------------------------------------------------------------------

/// A journal as a killed recorder leaves it: magic, head, chunks, and a last line cut short.
fn journal_text() -> String {
    let rec = sse_replay_core::stub::build(&sse_replay_core::stub::seed_example());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.ron");
    let mut w = sse_replay_core::recording::JournalWriter::create(&out, &rec).unwrap();
    for c in &rec.chunks {
        w.append_chunk(c).unwrap();
    }
    w.flush().unwrap();
    let text = std::fs::read_to_string(w.journal_path()).unwrap();
    drop(w);
    // Cut in the middle of the last record, as SIGKILL can.
    text[..text.len() - 7].to_owned()
}

#[test]
fn import_turns_a_journal_into_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.ron.partial"), journal_text()).unwrap();
    let o = run_in(dir.path(), &["import", "x.ron.partial"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let rec = Recording::load(&dir.path().join("x.ron")).unwrap();
    assert!(rec.meta.interrupted);
    assert!(
        rec.meta.notes.iter().any(|n| n.contains("interrupted")),
        "{:?}",
        rec.meta.notes
    );
    assert!(!rec.chunks.is_empty());
    #[cfg(unix)]
    assert_eq!(mode(&dir.path().join("x.ron")), 0o600);
    // The result is a plain recording now (not a journal), and `check` says it was interrupted.
    let text = std::fs::read_to_string(dir.path().join("x.ron")).unwrap();
    assert!(!text.starts_with(JOURNAL_MAGIC));
    // Again: the recording exists now.
    let o = run_in(dir.path(), &["import", "x.ron.partial"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = run_in(dir.path(), &["import", "x.ron.partial", "-o", "y.ron"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(dir.path().join("y.ron").exists());
}

#[test]
fn a_damaged_journal_head_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = journal_text();
    let damaged = text.replacen("Head((", "Head((meta: 5, ", 1);
    assert_ne!(damaged, text);
    std::fs::write(dir.path().join("bad.ron.partial"), &damaged).unwrap();
    for args in [
        vec!["import", "bad.ron.partial"],
        vec!["check", "bad.ron.partial"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("line 2"), "{err}");
        assert!(err.trim_end().ends_with("bad.ron.partial"), "{err}");
    }
    assert!(!dir.path().join("bad.ron").exists());
}

#[test]
fn record_to_standard_output_writes_no_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, _requests) = common::canned_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    );
    let o = run_in(
        dir.path(),
        &["record", &format!("{upstream}/v1"), "-o", "-"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let rec = Recording::from_bytes(&o.stdout).unwrap();
    assert!(rec.body().ends_with(b"data: [DONE]\n\n"));
    assert!(
        stderr(&o).contains("HTTP 200"),
        "the summary goes to stderr"
    );
    assert!(
        names_in(dir.path()).is_empty(),
        "{:?}",
        names_in(dir.path())
    );
}

#[test]
fn default_recorder_names_never_collide() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, _requests) = common::canned_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream",
        "data: [DONE]\n\n",
    );
    // Three recordings within (most likely) one second, all with the default name.
    for _ in 0..3 {
        let o = run_in(dir.path(), &["record", &format!("{upstream}/v1")]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let names = names_in(dir.path());
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("recording-") && n.ends_with(".ron"))
    );
}

#[test]
fn export_to_a_file_writes_nothing_when_it_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let failing =
        common::manifest().join("tests/data/fixtures/anthropic-messages-tool-use-invalid-json.sse");
    assert!(failing.exists(), "{}", failing.display());
    for format in ["json", "jsonl", "openai", "anthropic"] {
        let out = format!("out.{format}");
        let o = run_in(
            dir.path(),
            &[
                "export",
                failing.to_str().unwrap(),
                "-o",
                &out,
                "--format",
                format,
            ],
        );
        assert_eq!(code(&o), 1, "{format}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(
            names_in(dir.path()).is_empty(),
            "{format}: {:?}",
            names_in(dir.path())
        );
    }
    // A lost call too (nothing parsed at all): no `[]` left behind.
    std::fs::write(
        dir.path().join("lost.sse"),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
    )
    .unwrap();
    let o = run_in(dir.path(), &["export", "lost.sse", "-o", "out.json"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(names_in(dir.path()), ["lost.sse"]);
    // Standard output keeps what it always printed: the calls, the failed one's raw text too.
    let o = run_in(dir.path(), &["export", failing.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v[0]["raw_arguments"].is_string(), "{v}");
    // And a stream that passes is written as before.
    let o = run_in(
        dir.path(),
        &["export", seed().to_str().unwrap(), "-o", "ok.json"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(dir.path().join("ok.json").exists());
}

// ---------------------------------------------------------------------------------------------
// Paths under /dev/: only a real character device or FIFO is written straight, checked on the
// opened descriptor; /dev/shm is a folder like any other (world-writable: symlinks are planted
// there).
// ---------------------------------------------------------------------------------------------

/// A unique name in /dev/shm, removed (with anything left at it) on drop.
#[cfg(target_os = "linux")]
struct ShmName(PathBuf);

#[cfg(target_os = "linux")]
impl ShmName {
    fn new(what: &str) -> Self {
        let name = format!(
            "sse-replay-test-{}-{}-{what}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        Self(PathBuf::from("/dev/shm").join(name))
    }
}

#[cfg(target_os = "linux")]
impl Drop for ShmName {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
        std::fs::remove_file(format!("{}.partial", self.0.display())).ok();
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_symlink_planted_in_dev_shm_is_never_followed() {
    if !Path::new("/dev/shm").is_dir() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    let link = ShmName::new("link");
    std::os::unix::fs::symlink(&victim, &link.0).unwrap();
    let l = link.0.to_str().unwrap();
    let seed = seed();
    let seed = seed.to_str().unwrap();
    for args in [
        vec!["export", seed, "-o", l],
        vec!["stub", "--seed", "-o", l],
        vec!["import", "tests/data/import/curl-body.txt", "-o", l],
    ] {
        let o = run_in(&common::manifest(), &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("refusing to overwrite"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert!(
            std::fs::symlink_metadata(&link.0)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    // With --force the link itself is replaced, never followed.
    let o = run_in(dir.path(), &["export", seed, "-o", l, "--force"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link.0)
            .unwrap()
            .file_type()
            .is_file()
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    let calls: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&link.0).unwrap()).unwrap();
    assert_eq!(calls.as_array().map(Vec::len), Some(2));
}

#[cfg(target_os = "linux")]
#[test]
fn an_existing_file_in_dev_shm_is_not_appended_to() {
    if !Path::new("/dev/shm").is_dir() {
        return;
    }
    let file = ShmName::new("file");
    std::fs::write(&file.0, "precious").unwrap();
    let seed = seed();
    let o = run_in(
        &common::manifest(),
        &[
            "export",
            seed.to_str().unwrap(),
            "-o",
            file.0.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file.0).unwrap(), "precious");
    // Devices are still written straight: /dev/null, and standard output by name.
    let o = run_in(
        &common::manifest(),
        &["export", seed.to_str().unwrap(), "-o", "/dev/null"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run_in(
        &common::manifest(),
        &["export", seed.to_str().unwrap(), "-o", "/dev/stdout"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let calls: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(calls.as_array().map(Vec::len), Some(2));
}

#[cfg(target_os = "linux")]
#[test]
fn record_into_dev_shm_saves_the_recording() {
    if !Path::new("/dev/shm").is_dir() {
        return;
    }
    let raw = std::fs::read_to_string(common::manifest().join("tests/data/import/curl-body.txt"))
        .unwrap();
    let body: &'static str = Box::leak(raw.into_boxed_str());
    let (upstream, _requests) =
        common::canned_upstream("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream", body);
    let out = ShmName::new("rec.ron");
    let o = run_in(
        &common::manifest(),
        &[
            "record",
            &format!("{upstream}/v1"),
            "-o",
            out.0.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let rec = Recording::load(&out.0).unwrap();
    assert_eq!(rec.body(), body.as_bytes());
    assert!(
        std::fs::symlink_metadata(&out.0)
            .unwrap()
            .file_type()
            .is_file()
    );
}

/// `record -o FIFO` with nobody reading: it says it waits, a stop signal ends it at once
/// (nothing was sent, so nothing is lost), and a reader that comes gets the recording.
#[cfg(unix)]
#[test]
fn record_into_a_fifo_without_a_reader_waits_and_stops_on_a_signal() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let raw = std::fs::read_to_string(common::manifest().join("tests/data/import/curl-body.txt"))
        .unwrap();
    let body: &'static str = Box::leak(raw.into_boxed_str());
    let (upstream, requests) =
        common::canned_upstream("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream", body);
    let spawn = || {
        let mut child = Command::new(BIN)
            .args([
                "record",
                &format!("{upstream}/v1"),
                "-o",
                fifo.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = std::io::BufReader::new(child.stderr.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                tx.send(line).ok();
            }
        });
        (Kid(child), rx)
    };
    let waiting = |rx: &std::sync::mpsc::Receiver<String>| loop {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a waiting line");
        if line.contains("waiting for a process to read") {
            return line;
        }
    };
    for signal in ["TERM", "INT"] {
        let (mut kid, rx) = spawn();
        let line = waiting(&rx);
        assert!(line.contains("pipe"), "{line}");
        kid.signal(signal);
        let rc = kid.wait_exit(Duration::from_secs(10));
        assert_eq!(rc, Some(1), "{signal}");
        assert!(requests.try_recv().is_err(), "nothing was sent");
    }
    // A reader that comes later gets the whole recording.
    let (mut kid, rx) = spawn();
    waiting(&rx);
    let text = std::fs::read(&fifo).unwrap();
    assert_eq!(kid.wait_exit(Duration::from_secs(20)), Some(0));
    let rec = Recording::from_bytes(&text).unwrap();
    assert_eq!(rec.body(), body.as_bytes());
}
