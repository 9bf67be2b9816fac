//! `scan` through the binary: the summary equals what the written rows say (recomputed here from
//! the `streams` and `findings` tables, as the DuckDB queries do), Parquet, JSON lines and CSV
//! hold the same rows, `-o -` with `--files-from -` (a cluster's map step) gives them too, any
//! `-j` gives the same rows, unreadable files are rows, the rows agree with `check --json`, and
//! the exit codes. The corpus is generated (`generate-corpus`), plus the bundled recordings and
//! the test data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};

use common::{BIN, Kid, manifest, stderr, wait_bounded};

type Row = Map<String, Value>;

/// Runs `sse-replay ARGS` (at most 180 s) with `stdin` as its standard input. Its standard
/// output goes to a file (it can be megabytes: a pipe nobody reads until the exit would stall it)
/// and comes back in `Output::stdout`.
fn run(args: &[&str], stdin: &[u8]) -> Output {
    let out_file = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(manifest())
        .stdin(Stdio::piped())
        .stdout(Stdio::from(out_file.reopen().unwrap()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        input.write_all(&bytes).ok();
    });
    let mut out = wait_bounded(
        Kid(child),
        &format!("sse-replay {args:?}"),
        Duration::from_secs(180),
    );
    feeder.join().unwrap();
    out.stdout = std::fs::read(out_file.path()).unwrap();
    out
}

/// A generated corpus of `n` captures (seed 5) in a temporary folder.
fn corpus(n: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "generate-corpus",
            "-o",
            dir.path().to_str().unwrap(),
            "--count",
            &n.to_string(),
            "--seed",
            "5",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    dir
}

/// The scanned inputs: the corpus, the bundled recordings and the test data (captures, raw
/// bodies, complete responses, malformed files).
fn inputs(corpus: &Path) -> Vec<String> {
    vec![
        corpus.display().to_string(),
        "recordings".into(),
        "tests/data".into(),
    ]
}

fn args<'a>(head: &[&'a str], inputs: &'a [String]) -> Vec<&'a str> {
    let mut v = head.to_vec();
    v.extend(inputs.iter().map(String::as_str));
    v
}

fn jsonl(text: &str) -> Vec<Row> {
    text.lines()
        .map(|l| match serde_json::from_str::<Value>(l).unwrap() {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

fn read_jsonl(dir: &Path, table: &str) -> Vec<Row> {
    jsonl(&std::fs::read_to_string(dir.join(format!("{table}.jsonl"))).unwrap())
}

/// The `q` quantile as `percentile_disc` defines it (written out again here, not the core's).
fn percentile_disc(mut v: Vec<i64>, q: f64) -> Value {
    if v.is_empty() {
        return Value::Null;
    }
    v.sort();
    let k = ((q * v.len() as f64).ceil() as usize).max(1) - 1;
    json!(v[k.min(v.len() - 1)])
}

/// The summary recomputed from the rows: groups by dialect, host and model; finding kinds
/// counted from the `findings` table (distinct streams per kind); strategies from the
/// `agrees_*` columns; times from `first_call_us`.
/// Skipped entries (`verdict` `skipped`) are counted apart, never as streams; `other_files` (left
/// unread for their extension) have no row and come from the summary.
fn summary_from_rows(all_rows: &[Row], findings: &[Row], files: usize, other_files: u64) -> Value {
    let skipped = all_rows
        .iter()
        .filter(|r| r["verdict"] == "skipped")
        .count();
    let unreadable = all_rows
        .iter()
        .filter(|r| r["verdict"] == "unreadable")
        .count();
    let streams: Vec<Row> = all_rows
        .iter()
        .filter(|r| r["verdict"] != "skipped")
        .cloned()
        .collect();
    let streams = streams.as_slice();
    let strategies: Vec<String> = streams[0]
        .keys()
        .filter_map(|k| k.strip_prefix("agrees_").map(|s| s.replace('_', "-")))
        .collect();
    let key_of = |r: &Row| {
        (
            r["dialect"].as_str().map(str::to_owned),
            r["provider_host"].as_str().map(str::to_owned),
            r["model"].as_str().map(str::to_owned),
        )
    };
    let mut kinds_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for f in findings {
        kinds_of
            .entry(f["stream_key"].as_str().unwrap())
            .or_default()
            .insert(f["kind"].as_str().unwrap());
    }
    let group = |rows: &[&Row]| {
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for r in rows {
            for k in kinds_of
                .get(r["stream_key"].as_str().unwrap())
                .into_iter()
                .flatten()
            {
                *kinds.entry(k).or_default() += 1;
            }
        }
        let naive: Map<String, Value> = strategies
            .iter()
            .map(|s| {
                let col = format!("agrees_{}", s.replace('-', "_"));
                let ran = rows.iter().filter(|r| r[&col].is_boolean()).count();
                let failed = rows.iter().filter(|r| r[&col] == json!(false)).count();
                (s.clone(), json!({"ran": ran, "failed": failed}))
            })
            .collect();
        let times: Vec<i64> = rows
            .iter()
            .filter_map(|r| r["first_call_us"].as_i64())
            .collect();
        json!({
            "streams": rows.len(),
            "not_ok": rows.iter().filter(|r| r["verdict"] != "ok").count(),
            "finding_kinds": kinds,
            "naive_failures": naive,
            "first_call": {
                "streams": times.len(),
                "p50_us": percentile_disc(times.clone(), 0.5),
                "p95_us": percentile_disc(times, 0.95),
            },
        })
    };
    let mut by_key: BTreeMap<_, Vec<&Row>> = BTreeMap::new();
    for r in streams {
        by_key.entry(key_of(r)).or_default().push(r);
    }
    let groups: Vec<Value> = by_key
        .iter()
        .map(|((d, h, m), rows)| {
            let mut g = group(rows);
            let o = g.as_object_mut().unwrap();
            o.insert("dialect".into(), json!(d));
            o.insert("provider_host".into(), json!(h));
            o.insert("model".into(), json!(m));
            g
        })
        .collect();
    let all: Vec<&Row> = streams.iter().collect();
    json!({
        "schema_version": sse_replay_core::scan::SCHEMA_VERSION,
        "files": files,
        "skipped": skipped,
        "other_files": other_files,
        "unreadable": unreadable,
        "groups": groups,
        "total": group(&all),
    })
}

#[test]
fn the_summary_is_what_the_rows_say_in_every_format_and_any_parallelism() {
    let generated = corpus(300);
    let inputs = inputs(generated.path());
    let out = run(&args(&["scan", "--json"], &inputs), b"");
    assert_eq!(
        out.status.code(),
        Some(1),
        "some streams are not OK: {}",
        stderr(&out)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();

    let tables = tempfile::tempdir().unwrap();
    let dir = |f: &str| tables.path().join(f);
    for (format, j) in [
        ("jsonl", "1"),
        ("jsonl", "3"),
        ("parquet", "2"),
        ("csv", "2"),
    ] {
        let d = dir(&format!("{format}-{j}"));
        let o = run(
            &args(
                &[
                    "scan",
                    "-o",
                    d.to_str().unwrap(),
                    "--format",
                    format,
                    "-j",
                    j,
                ],
                &inputs,
            ),
            b"",
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("not OK"), "{}", stderr(&o));
    }
    let streams = read_jsonl(&dir("jsonl-1"), "streams");
    let findings = read_jsonl(&dir("jsonl-1"), "findings");
    let files = summary["files"].as_u64().unwrap() as usize;
    assert!(files > 330, "{files} files");
    let want = summary_from_rows(
        &streams,
        &findings,
        files,
        summary["other_files"].as_u64().unwrap(),
    );
    assert_eq!(summary["total"], want["total"]);
    let (got_groups, want_groups) = (
        summary["groups"].as_array().unwrap(),
        want["groups"].as_array().unwrap(),
    );
    assert_eq!(got_groups.len(), want_groups.len());
    for (g, w) in got_groups.iter().zip(want_groups) {
        assert_eq!(g, w);
    }
    assert_eq!(summary, want);
    // Every dialect the corpus draws from is there, and so are unreadable files.
    let dialects: BTreeSet<&str> = streams
        .iter()
        .filter_map(|r| r["dialect"].as_str())
        .collect();
    assert!(dialects.len() >= 5, "{dialects:?}");
    assert!(
        streams
            .iter()
            .any(|r| r["verdict"] == "unreadable" && r["error"].is_string())
    );

    // The same rows whatever the format and the number of workers.
    for t in sse_replay_core::scan::Table::ALL {
        let table = t.name();
        let want = || read_jsonl(&dir("jsonl-1"), table);
        assert!(!want().is_empty(), "{table}");
        let j3 = read_jsonl(&dir("jsonl-3"), table);
        assert_same_rows(j3, want(), &format!("{table} -j 3"));
        let pq = read_parquet(&dir("parquet-2").join(format!("{table}.parquet")));
        assert_same_rows(pq, want(), &format!("{table}.parquet"));
        let csv = read_csv(&dir("csv-2").join(format!("{table}.csv")), t);
        assert_same_rows(csv, want(), &format!("{table}.csv"));
    }
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(dir("csv-2").join("schema.json")).unwrap())
            .unwrap();
    assert_eq!(
        schema["schema_version"],
        sse_replay_core::scan::SCHEMA_VERSION
    );
}

/// Rows in a canonical order (each as its sorted columns' JSON), to compare sets of rows; the
/// `scan_id` column, which tells two runs apart by design, left out.
fn sorted(rows: Vec<Row>) -> Vec<String> {
    let mut v: Vec<String> = rows
        .into_iter()
        .map(|mut r| {
            r.remove("scan_id");
            serde_json::to_string(&r.into_iter().collect::<BTreeMap<_, _>>()).unwrap()
        })
        .collect();
    v.sort();
    v
}

/// Two sets of rows are equal; on a difference, only the first differing row is shown.
fn assert_same_rows(got: Vec<Row>, want: Vec<Row>, what: &str) {
    let (got, want) = (sorted(got), sorted(want));
    if let Some((g, w)) = got.iter().zip(&want).find(|(g, w)| g != w) {
        panic!("{what}: first difference\n got: {g}\nwant: {w}");
    }
    assert_eq!(got.len(), want.len(), "{what}: row counts");
}

/// A Parquet table's rows as JSON objects (through the `parquet` crate's record reader), and its
/// `schema_version`.
fn read_parquet(path: &Path) -> Vec<Row> {
    use parquet::file::reader::FileReader as _;
    use parquet::record::Field;
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::file::serialized_reader::SerializedFileReader::new(file).unwrap();
    let kv = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned();
    let version = kv
        .unwrap_or_default()
        .into_iter()
        .find(|k| k.key == "schema_version")
        .and_then(|k| k.value);
    assert_eq!(
        version,
        Some(sse_replay_core::scan::SCHEMA_VERSION.to_string()),
        "{}",
        path.display()
    );
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(name, field)| {
                    let v = match field {
                        Field::Null => Value::Null,
                        Field::Bool(b) => json!(b),
                        Field::Long(n) => json!(n),
                        Field::Str(s) => json!(s),
                        Field::ListInternal(list) => Value::Array(
                            list.elements()
                                .iter()
                                .map(|e| match e {
                                    Field::Str(s) => json!(s),
                                    other => panic!("unexpected element {other:?}"),
                                })
                                .collect(),
                        ),
                        other => panic!("unexpected {other:?}"),
                    };
                    (name.clone(), v)
                })
                .collect()
        })
        .collect()
}

/// A CSV table's rows as JSON objects, typed by the schema.
fn read_csv(path: &Path, table: sse_replay_core::scan::Table) -> Vec<Row> {
    use sse_replay_core::scan::Kind;
    let text = std::fs::read_to_string(path).unwrap();
    let mut records = parse_csv(&text).into_iter();
    let head: Vec<String> = records
        .next()
        .unwrap()
        .into_iter()
        .map(|f| f.unwrap())
        .collect();
    let columns = table.columns();
    assert_eq!(
        head,
        columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>()
    );
    records
        .map(|rec| {
            columns
                .iter()
                .zip(rec)
                .map(|(c, field)| {
                    let v = match (field, c.kind) {
                        (None, _) => Value::Null,
                        (Some(s), Kind::Bool) => json!(s == "true"),
                        (Some(s), Kind::Int) => json!(s.parse::<i64>().unwrap()),
                        // A formula-looking cell was written with one `'` in front.
                        (Some(s), Kind::Text) => json!(s.strip_prefix('\'').unwrap_or(&s)),
                        (Some(s), Kind::TextList) => serde_json::from_str(&s).unwrap(),
                    };
                    (c.name.clone(), v)
                })
                .collect()
        })
        .collect()
}

/// RFC 4180 records; an empty unquoted field is `None` (null), a quoted one `Some("")`.
fn parse_csv(text: &str) -> Vec<Vec<Option<String>>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let (mut quoted, mut in_quotes, mut chars) = (false, false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, in_quotes) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => in_quotes = false,
            ('"', false) => {
                in_quotes = true;
                quoted = true;
            }
            (',', false) => {
                record.push((quoted || !field.is_empty()).then(|| std::mem::take(&mut field)));
                quoted = false;
            }
            ('\r', false) => {}
            ('\n', false) => {
                record.push((quoted || !field.is_empty()).then(|| std::mem::take(&mut field)));
                quoted = false;
                records.push(std::mem::take(&mut record));
            }
            (c, _) => field.push(c),
        }
    }
    records
}

#[test]
fn paths_on_standard_input_give_tagged_rows_on_standard_output() {
    let generated = corpus(40);
    let folder = tempfile::tempdir().unwrap();
    let mut list = String::new();
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(generated.path()).unwrap() {
        let p = e.unwrap().path();
        // A staged copy named by its origin: `PATH<TAB>NAME`.
        let name = format!(
            "s3://bucket/captures/{}",
            p.file_name().unwrap().to_string_lossy()
        );
        list.push_str(&format!("{}\t{name}\n", p.display()));
        names.insert(name);
    }
    // A line without a name: named by the file's own name, as a path on the command line.
    list.push_str("recordings/seed-example.ron\n\n");
    names.insert("seed-example.ron".into());
    let out = run(
        &[
            "scan",
            "--files-from",
            "-",
            "--format",
            "jsonl",
            "-o",
            "-",
            "-j",
            "2",
        ],
        list.as_bytes(),
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let rows = jsonl(&String::from_utf8(out.stdout).unwrap());
    let mut by_table: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for mut r in rows {
        let table = r.remove("table").unwrap().as_str().unwrap().to_owned();
        by_table.entry(table).or_default().push(r);
    }
    assert_eq!(
        by_table.keys().collect::<Vec<_>>(),
        ["calls", "findings", "streams"]
    );
    let seen: BTreeSet<String> = by_table["streams"]
        .iter()
        .map(|r| r["source_file"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(seen, names);
    // The same rows as a folder of JSON lines from the same list.
    let d = folder.path().join("t");
    let o = run(
        &[
            "scan",
            "--files-from",
            "-",
            "--format",
            "jsonl",
            "-o",
            d.to_str().unwrap(),
        ],
        list.as_bytes(),
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    for (table, rows) in by_table {
        assert_same_rows(rows, read_jsonl(&d, &table), &table);
    }
}

#[test]
fn the_rows_say_what_check_says_about_each_file() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(manifest().join("recordings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for d in ["tests/data/fixtures", "tests/data/complete"] {
        files.extend(
            std::fs::read_dir(manifest().join(d))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| sse_replay_core::scan::is_scanned_name(p)),
        );
    }
    files.sort();
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let out = run(
        &args(&["scan", "-o", "-", "--format", "jsonl"], &names),
        b"",
    );
    let rows = jsonl(&String::from_utf8(out.stdout).unwrap());
    // One stream per file, in the order the files were named, each named by its file name.
    let streams: Vec<&Row> = rows.iter().filter(|r| r["table"] == "streams").collect();
    assert_eq!(streams.len(), files.len());
    let mut compared = 0;
    for ((path, name), stream) in files.iter().zip(&names).zip(streams) {
        assert_eq!(
            stream["source_file"],
            path.file_name().unwrap().to_str().unwrap(),
            "{name}"
        );
        let check = run(&["check", "--json", "--no-preview", name], b"");
        let report: Value = serde_json::from_slice(&check.stdout).unwrap();
        assert_eq!(stream["verdict"] == "ok", report["ok"] == true, "{name}");
        assert_eq!(
            stream["verdict"] == "ok",
            check.status.code() == Some(0),
            "{name}"
        );
        assert_eq!(stream["dialect"], report["dialect"], "{name}");
        assert_eq!(
            stream["calls"],
            json!(report["calls"].as_array().unwrap().len()),
            "{name}"
        );
        assert_eq!(stream["events"], report["stats"]["events"], "{name}");
        assert_eq!(stream["bytes"], report["stats"]["bytes"], "{name}");
        assert_eq!(stream["ending"], report["ending"]["status"], "{name}");
        let kinds: BTreeSet<&str> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap())
            .collect();
        let listed: BTreeSet<&str> = stream["finding_kinds"]
            .as_str()
            .unwrap()
            .split(',')
            .filter(|k| !k.is_empty())
            .collect();
        assert_eq!(listed, kinds, "{name}");
        let finding_rows = rows
            .iter()
            .filter(|r| r["table"] == "findings" && r["stream_key"] == stream["stream_key"])
            .count();
        assert_eq!(
            finding_rows,
            report["findings"].as_array().unwrap().len(),
            "{name}"
        );
        for s in report["strategies"].as_array().unwrap() {
            let col = format!("agrees_{}", s["name"].as_str().unwrap().replace('-', "_"));
            let want = if s["not_applicable"].is_string() {
                Value::Null
            } else {
                s["matches_correct"].clone()
            };
            assert_eq!(stream[&col], want, "{name} {col}");
        }
        compared += 1;
    }
    assert!(compared > 30, "{compared}");
}

#[test]
fn exit_codes_unreadable_files_and_usage() {
    // All OK: 0.
    let out = run(
        &[
            "scan",
            "recordings/seed-example.ron",
            "recordings/openai-chat-weather.ron",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 streams in 2 files; 0 not OK"));
    // A missing file and a folder entry that is not a capture are rows, not a stop: exit 1.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("garbage.sse"),
        "<html>502 Bad Gateway</html>",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("notes.md"),
        "not scanned: not a capture's extension",
    )
    .unwrap();
    std::fs::write(dir.path().join(".hidden.ron"), "skipped").unwrap();
    let d = dir.path().to_str().unwrap();
    let list = dir.path().join("list.txt");
    std::fs::write(&list, "no/such/file.ron\n").unwrap();
    let out = run(
        &[
            "scan",
            "--json",
            d,
            "--files-from",
            list.to_str().unwrap(),
            "recordings/seed-example.ron",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    // garbage.sse (a stream by its name, broken), seed-example.ron, and the missing file the
    // list names; list.txt is read as a file of the folder and is not a capture; notes.md is
    // left unread for its extension.
    assert_eq!(summary["files"], 4, "{summary}");
    assert_eq!(summary["total"]["streams"], 3);
    assert_eq!(summary["total"]["not_ok"], 2);
    assert_eq!(summary["unreadable"], 1);
    assert_eq!(summary["skipped"], 1);
    assert_eq!(summary["other_files"], 1);
    // A path named on the command line that is not there: a usage error, said on stderr, with
    // no summary and nothing written (no tables folder left behind), in every output form.
    let out = run(&["scan", "/nonexistent/dir", "recordings"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent/dir") && out.stdout.is_empty(),
        "{}",
        stderr(&out)
    );
    for format in ["csv", "jsonl", "parquet"] {
        let tables = dir.path().join(format!("never-{format}"));
        let out = run(
            &[
                "scan",
                "--format",
                format,
                "-o",
                tables.to_str().unwrap(),
                "recordings",
                "/nonexistent/dir",
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("/nonexistent/dir"),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("streams in"), "{}", stderr(&out));
        assert!(
            !tables.exists(),
            "{format}: {} was created",
            tables.display()
        );
    }
    // Usage: exit 2.
    for bad in [
        vec!["scan"],
        vec!["scan", "-o", "-", "recordings"],
        vec!["scan", "-j", "0", "recordings"],
        vec!["scan", "--json", "-o", "x", "recordings"],
    ] {
        let out = run(&bad, b"");
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
    }
    // An existing table is refused without --force, replaced with it.
    let t = dir.path().join("tables");
    let t = t.to_str().unwrap();
    let first = run(&["scan", "-o", t, "recordings/seed-example.ron"], b"");
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let again = run(&["scan", "-o", t, "recordings/seed-example.ron"], b"");
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    let forced = run(
        &["scan", "-o", t, "--force", "recordings/seed-example.ron"],
        b"",
    );
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    // The schema, for other tools.
    let schema = run(&["scan", "--schema"], b"");
    let schema: Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert_eq!(
        schema["schema_version"],
        sse_replay_core::scan::SCHEMA_VERSION
    );
    assert!(
        schema["tables"]["streams"]["columns"]
            .as_array()
            .unwrap()
            .len()
            > 20
    );
}

#[test]
fn the_corpus_generator_is_deterministic() {
    let (a, b) = (corpus(25), corpus(25));
    let files = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let fa = files(a.path());
    assert_eq!(fa.len(), 25);
    assert_eq!(fa, files(b.path()));
}

/// The `streams` rows of a scan written as JSON lines on standard output.
fn stream_rows(out: &Output) -> Vec<Row> {
    jsonl(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .filter(|r| r["table"] == "streams")
        .collect()
}

/// A folder of hostile entries (a FIFO with no writer, a link to `/dev/urandom`, a 2 GB sparse
/// file, many empty files, a link to a folder, a link to nothing) and endless inputs named on
/// the command line (a FIFO someone writes to without end, `/dev/urandom`): the scan ends, each
/// entry is one row (a skipped entry, an unreadable file, or a stream), and nothing blocks.
#[cfg(unix)]
#[test]
fn a_hostile_folder_ends_with_each_odd_entry_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("hostile");
    std::fs::create_dir(&d).unwrap();
    let fifo = d.join("fifo.sse");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/urandom", d.join("random.sse")).unwrap();
    std::os::unix::fs::symlink(&d, d.join("loop.sse")).unwrap();
    std::os::unix::fs::symlink(d.join("gone"), d.join("dangling.sse")).unwrap();
    let sparse = std::fs::File::create(d.join("sparse.sse")).unwrap();
    sparse.set_len(2 << 30).unwrap();
    drop(sparse);
    let empties = 2000;
    for i in 0..empties {
        std::fs::File::create(d.join(format!("empty-{i:05}.txt"))).unwrap();
    }
    std::fs::copy(
        manifest().join("recordings/seed-example.ron"),
        d.join("seed.ron"),
    )
    .unwrap();
    // An endless named FIFO: a writer that never stops (until the reader goes).
    let named = dir.path().join("endless");
    assert!(
        Command::new("mkfifo")
            .arg(&named)
            .status()
            .unwrap()
            .success()
    );
    let writer_path = named.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&writer_path)
            .unwrap();
        let line = b"data: {\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n".repeat(1000);
        while f.write_all(&line).is_ok() {}
    });
    let started = std::time::Instant::now();
    let out = run(
        &[
            "scan",
            "-o",
            "-",
            "--format",
            "jsonl",
            "--max-input-bytes",
            "4M",
            "-j",
            "2",
            d.to_str().unwrap(),
            named.to_str().unwrap(),
            "/dev/urandom",
        ],
        b"",
    );
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
    let rows = stream_rows(&out);
    let mut by_file: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        by_file
            .entry(r["source_file"].as_str().unwrap().to_owned())
            .or_default()
            .push(r);
    }
    assert!(by_file.values().all(|v| v.len() == 1), "each entry once");
    let row = |name: &str| -> &Row {
        by_file
            .get(name)
            .unwrap_or_else(|| panic!("no row for {name}"))[0]
    };
    let said = |name: &str, verdict: &str, error: &str| {
        let r = row(name);
        assert_eq!(r["verdict"], verdict, "{name}: {r:?}");
        assert!(
            r["error"].as_str().is_some_and(|e| e.contains(error)),
            "{name}: {r:?}"
        );
    };
    said("hostile/fifo.sse", "skipped", "not a regular file: a FIFO");
    said(
        "hostile/random.sse",
        "skipped",
        "not a regular file: a device",
    );
    said("hostile/loop.sse", "skipped", "a link to a folder");
    said("hostile/dangling.sse", "skipped", "a link to nothing");
    said("hostile/sparse.sse", "unreadable", "--max-input-bytes");
    said("endless", "unreadable", "--max-input-bytes");
    said("urandom", "unreadable", "--max-input-bytes");
    said("hostile/empty-00000.txt", "skipped", "not a capture");
    assert_eq!(row("hostile/seed.ron")["verdict"], "ok");
    assert_eq!(rows.len(), empties + 8, "{}", rows.len());
}

/// A folder of captures with what test suites keep beside them (expected results as JSON, a
/// licence, a conformance summary, an empty file): those are skipped as not captures, with the
/// reason, counted apart, and make no row "not OK"; a `.eventstream` file is walked.
#[test]
fn files_that_are_not_captures_are_skipped_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("suite");
    std::fs::create_dir_all(d.join("cases")).unwrap();
    std::fs::write(
        d.join("cases/expected.json"),
        r#"{"calls":[{"name":"get_weather","arguments":{"city":"Paris"}}],"ok":true}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("LICENSE.txt"),
        "MIT License\n\nPermission is hereby granted, free of charge, to any person...\n",
    )
    .unwrap();
    std::fs::write(
        d.join("sse-conformance.json"),
        r#"[{"case":"split-utf8","passed":true},{"case":"done-sentinel","passed":false}]"#,
    )
    .unwrap();
    std::fs::write(d.join("notes.txt"), "").unwrap();
    for f in ["seed-example.ron", "openai-chat-weather.ron"] {
        std::fs::copy(
            manifest().join("recordings").join(f),
            d.join("cases").join(f),
        )
        .unwrap();
    }
    // A raw Bedrock event stream, as AWS SDK tests keep them (the test data holds it as base64).
    let b64 = std::fs::read_to_string(
        manifest()
            .join("tests/data/bedrock/binary/model-stream-error-exception.eventstream.base64.txt"),
    )
    .unwrap();
    let frames = {
        use base64::Engine as _;
        let text: String = b64.split_whitespace().collect();
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap()
    };
    assert!(sse_replay_core::aws_eventstream::looks_like_aws_eventstream(&frames));
    std::fs::write(d.join("cases/converse.eventstream"), frames).unwrap();
    let out = run(
        &["scan", "-o", "-", "--format", "jsonl", d.to_str().unwrap()],
        b"",
    );
    let rows = stream_rows(&out);
    let verdict = |name: &str| {
        rows.iter()
            .find(|r| r["source_file"] == name)
            .unwrap_or_else(|| panic!("no row for {name}"))["verdict"]
            .clone()
    };
    for name in [
        "suite/cases/expected.json",
        "suite/LICENSE.txt",
        "suite/sse-conformance.json",
        "suite/notes.txt",
    ] {
        assert_eq!(verdict(name), "skipped", "{name}");
        let r = rows.iter().find(|r| r["source_file"] == name).unwrap();
        assert!(
            r["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("not a capture: ")),
            "{r:?}"
        );
    }
    assert_eq!(verdict("suite/cases/seed-example.ron"), "ok");
    assert!(
        rows.iter()
            .any(|r| r["source_file"] == "suite/cases/converse.eventstream"
                && r["verdict"] != "skipped"),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .filter(|r| r["verdict"] == "not-ok")
            .all(|r| r["source_file"] == "suite/cases/converse.eventstream"),
        "no not-OK row from what is not a capture"
    );
    let out = run(&["scan", "--json", d.to_str().unwrap()], b"");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["skipped"], 4, "{summary}");
    assert_eq!(summary["total"]["streams"], 3, "{summary}");
    let text = run(&["scan", d.to_str().unwrap()], b"");
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("; 4 skipped (not a capture)"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
}

/// The same folder typed three ways gives byte-identical tables, whatever `-j`; a folder and a
/// file inside it, or the same folder twice, give each file once.
#[test]
fn the_same_folder_however_typed_gives_the_same_tables() {
    let parent = tempfile::tempdir().unwrap();
    let d = parent.path().join("d");
    let generated = corpus(30);
    std::fs::create_dir_all(d.join("sub")).unwrap();
    for e in std::fs::read_dir(generated.path()).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, d.join("sub").join(p.file_name().unwrap())).unwrap();
    }
    std::fs::copy(
        manifest().join("tests/data/import/two-streams.har"),
        d.join("two.har"),
    )
    .unwrap();
    let scan_in = |cwd: &Path, args: &[&str]| -> Output {
        let mut cmd = Command::new(BIN);
        cmd.args(args).current_dir(cwd).stdin(Stdio::null());
        let out = wait_bounded(
            Kid(cmd
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()),
            "scan",
            Duration::from_secs(180),
        );
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        out
    };
    let tables = parent.path().join("tables");
    let abs = d.to_str().unwrap().to_owned();
    // A link to the folder is the folder: its files are named under the folder's own name.
    std::os::unix::fs::symlink(&d, parent.path().join("link")).unwrap();
    let spellings: [(&Path, &str, &str); 6] = [
        (parent.path(), "d", "1"),
        (parent.path(), "./d/", "4"),
        (&d, ".", "2"),
        (Path::new("/"), &abs, "3"),
        (parent.path(), "link/", "2"),
        (&d, "../d/sub/..", "1"),
    ];
    let mut outputs = Vec::new();
    for (i, (cwd, path, j)) in spellings.iter().enumerate() {
        let o = tables.join(i.to_string());
        // Only the scan id tells two runs apart: given, the tables are byte for byte the same.
        scan_in(
            cwd,
            &[
                "scan",
                path,
                "-j",
                j,
                "-o",
                o.to_str().unwrap(),
                "--scan-id",
                "s1",
            ],
        );
        outputs.push(o);
    }
    for t in sse_replay_core::scan::Table::ALL {
        let file = format!("{}.parquet", t.name());
        let first = std::fs::read(outputs[0].join(&file)).unwrap();
        for o in &outputs[1..] {
            assert!(
                std::fs::read(o.join(&file)).unwrap() == first,
                "{file} differs in {}",
                o.display()
            );
        }
    }
    let rows = read_parquet(&outputs[0].join("streams.parquet"));
    assert!(
        rows.iter()
            .all(|r| r["source_file"].as_str().unwrap().starts_with("d/")),
        "{:?}",
        rows.first()
    );
    // Overlapping inputs: each file once, in the first spelling that reached it.
    let once = scan_in(
        parent.path(),
        &[
            "scan",
            "-o",
            "-",
            "--format",
            "jsonl",
            "d",
            "d/two.har",
            "./d",
            &abs,
        ],
    );
    let keys: Vec<String> = stream_rows(&once)
        .iter()
        .map(|r| r["stream_key"].as_str().unwrap().to_owned())
        .collect();
    let distinct: BTreeSet<&String> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "{keys:?}");
    assert_eq!(keys.len(), rows.len());
}

/// CSV cells that a spreadsheet would run as formulas are written as text (a leading `'`).
#[test]
fn csv_cells_never_start_a_formula() {
    let dir = tempfile::tempdir().unwrap();
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"=HYPERLINK(\\\"http://x\\\",\\\"y\\\")\",\"arguments\":\"{}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"@SUM(1)\",\"arguments\":\"{}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let f = dir.path().join("formula.sse");
    std::fs::write(&f, body).unwrap();
    let o = dir.path().join("t");
    let out = run(
        &[
            "scan",
            "-o",
            o.to_str().unwrap(),
            "--format",
            "csv",
            f.to_str().unwrap(),
        ],
        b"",
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let text = std::fs::read_to_string(o.join("calls.csv")).unwrap();
    for record in parse_csv(&text).into_iter().skip(1) {
        for cell in record.into_iter().flatten() {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{cell:?} in {text}"
            );
        }
    }
    assert!(text.contains("'=HYPERLINK("), "{text}");
    assert!(text.contains("'@SUM(1)"), "{text}");
    // Read back, the names are the tool's.
    let calls = read_csv(&o.join("calls.csv"), sse_replay_core::scan::Table::Calls);
    let names: Vec<&str> = calls.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["=HYPERLINK(\"http://x\",\"y\")", "@SUM(1)"]);

    // Every formula start, in every text column a capture sets (the file's name, the model, the
    // response id, the finish reason, a tool's name), and in each table.
    let starts = [
        "=1+1",
        "+cmd|' /C calc'!A0",
        "-2+3",
        "@A1",
        "\tx=1",
        "\rx=1",
        "'quoted",
    ];
    let mut body = String::new();
    for (i, s) in starts.iter().enumerate() {
        let chunk = serde_json::json!({"id": s, "model": s, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": format!("c{i}"), "type": "function", "function": {"name": s, "arguments": "{}"}}]}}]});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    let finish = serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "-1"}]});
    body.push_str(&format!("data: {finish}\n\n"));
    let f = dir.path().join("+cmd.sse");
    std::fs::write(&f, body).unwrap();
    let o = dir.path().join("t2");
    let out = common::run_in(
        dir.path(),
        &["scan", "-o", "t2", "--format", "csv", "+cmd.sse"],
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    for t in sse_replay_core::scan::Table::ALL {
        let text = std::fs::read_to_string(o.join(format!("{}.csv", t.name()))).unwrap();
        for record in parse_csv(&text).into_iter().skip(1) {
            for cell in record.into_iter().flatten() {
                assert!(
                    !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                    "{cell:?} in {text}"
                );
            }
        }
    }
    let calls = read_csv(&o.join("calls.csv"), sse_replay_core::scan::Table::Calls);
    let names: Vec<&str> = calls.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, starts);
    let streams = read_csv(
        &o.join("streams.csv"),
        sse_replay_core::scan::Table::Streams,
    );
    assert_eq!(streams[0]["source_file"], "+cmd.sse");
    assert_eq!(streams[0]["finish_reason"], "-1");
}

/// `--fail-on` says when the exit code is 1.
#[test]
fn fail_on_chooses_what_makes_the_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.sse");
    std::fs::write(
        &broken,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n",
    )
    .unwrap();
    let list = dir.path().join("list");
    std::fs::write(&list, "no/such/file.sse\n").unwrap();
    let (b, l) = (broken.to_str().unwrap(), list.to_str().unwrap());
    let code = |extra: &[&str], files_from: bool| {
        let mut a = vec!["scan", b];
        if files_from {
            a.extend(["--files-from", l]);
        }
        a.extend(extra);
        run(&a, b"").status.code()
    };
    assert_eq!(code(&[], false), Some(1));
    assert_eq!(code(&["--fail-on", "not-ok"], false), Some(1));
    assert_eq!(code(&["--fail-on", "unreadable"], false), Some(0));
    assert_eq!(code(&["--fail-on", "unreadable"], true), Some(1));
    assert_eq!(code(&["--fail-on", "never"], true), Some(0));
    assert_eq!(code(&["--fail-on", "sometimes"], false), Some(2));
}

/// The columns read from a capture's response and stream: the model that answered, the
/// response and request ids, the HTTP status, the normalised finish reason, the capture time,
/// a percent-decoded Bedrock model name, and the scan id.
#[test]
fn the_response_columns_come_from_the_capture() {
    let dir = tempfile::tempdir().unwrap();
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"model\":\"claude-3-5-sonnet-20241022\",\"role\":\"assistant\",\"content\":[]}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let entry = |url: &str, request_body: &str| {
        json!({
            "startedDateTime": "2025-05-01T10:00:00.000Z",
            "time": 10,
            "request": {"method": "POST", "url": url, "httpVersion": "HTTP/1.1",
                "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
                "postData": {"mimeType": "application/json", "text": request_body}},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                "headers": [{"name": "content-type", "value": "text/event-stream"},
                            {"name": "Request-Id", "value": "req_abc123"}],
                "cookies": [], "content": {"size": body.len(), "mimeType": "text/event-stream", "text": body},
                "redirectURL": "", "headersSize": -1, "bodySize": body.len()},
            "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 1}
        })
    };
    let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [
        entry("https://api.anthropic.com/v1/messages", r#"{"model":"claude-3-5-sonnet-latest","stream":true}"#),
        entry("https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke-with-response-stream", "{}"),
    ]}});
    let f = dir.path().join("two.har");
    std::fs::write(&f, serde_json::to_vec(&har).unwrap()).unwrap();
    let out = run(
        &[
            "scan",
            "-o",
            "-",
            "--format",
            "jsonl",
            "--scan-id",
            "job-7",
            f.to_str().unwrap(),
        ],
        b"",
    );
    let rows = stream_rows(&out);
    assert_eq!(rows.len(), 2, "{}", stderr(&out));
    let a = &rows[0];
    assert_eq!(a["model"], "claude-3-5-sonnet-latest");
    assert_eq!(a["response_model"], "claude-3-5-sonnet-20241022");
    assert_eq!(a["response_id"], "msg_01");
    assert_eq!(a["request_id"], "req_abc123");
    assert_eq!(a["http_status"], 200);
    assert_eq!(a["finish_reason"], "tool_use");
    assert_eq!(a["finish_reason_normalised"], "tool_calls");
    assert_eq!(a["scan_id"], "job-7");
    assert_eq!(a["tool_names"], json!(["get_weather"]));
    assert_eq!(
        rows[1]["model"],
        "anthropic.claude-3-5-sonnet-20240620-v1:0"
    );
}
