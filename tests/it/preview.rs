//! The partial-JSON preview through the binary: the `preview` command's lines and `check`'s
//! Preview section. The preview itself (jiter's partial-mode value after every fragment, and its
//! contradictions) is tested in the core (`crates/sse-replay-core/tests/core/preview.rs`).

use crate::common;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use common::{run, stderr};

const SEED: &str = "recordings/seed-example.ron";

fn lines(o: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect()
}

#[test]
fn preview_command_prints_one_line_per_fragment() {
    let o = run(&["preview", SEED]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = lines(&o);
    assert_eq!(out.len(), 10);
    assert_eq!(
        out[0],
        json!({"fragment": 0, "call": 0, "t_us": 40000, "preview": {}, "contradicted": false})
    );
    assert_eq!(
        out[4],
        json!({"fragment": 4, "call": 0, "t_us": 200000, "preview": {"city": "深圳", "days": 3}, "contradicted": false})
    );
    // Keys in this order, compact, one object per line.
    let first = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .map(str::to_owned);
    assert_eq!(
        first.as_deref(),
        Some(r#"{"fragment":0,"call":0,"t_us":40000,"preview":{},"contradicted":false}"#)
    );

    let o = run(&["preview", SEED, "--call", "1"]);
    assert_eq!(o.status.code(), Some(0));
    let out = lines(&o);
    let frags: Vec<u64> = out.iter().filter_map(|l| l["fragment"].as_u64()).collect();
    assert_eq!(frags, [5, 6, 7, 8, 9]);
    assert!(out.iter().all(|l| l["call"] == 1));
    assert_eq!(out[4]["preview"], json!({"city": "杭州", "days": 1}));
}

fn stub_file(dir: &Path, args: &[&str]) -> String {
    let path = dir.join("stub.ron");
    let mut all = vec!["stub"];
    all.extend_from_slice(args);
    let p = path.to_string_lossy().into_owned();
    all.extend_from_slice(&["-o", &p]);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    p
}

#[test]
fn preview_command_marks_contradictions_and_keeps_the_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = stub_file(
        dir.path(),
        &["--call", r#"f={"days":31}"#, "--fragment", "9,2"],
    );
    let o = run(&["preview", &p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        lines(&o),
        [
            json!({"fragment": 0, "call": 0, "t_us": 30000, "preview": null, "contradicted": false}),
            json!({"fragment": 1, "call": 0, "t_us": 60000, "preview": {"days": 3}, "contradicted": true}),
            json!({"fragment": 2, "call": 0, "t_us": 90000, "preview": {"days": 31}, "contradicted": false}),
        ]
    );
    // A truncated stream: the previews still print, the exit code is the verdict's (1), one
    // line on standard error.
    let t = stub_file(
        dir.path(),
        &[
            "--call",
            r#"f={"days":31}"#,
            "--quirk",
            "truncate",
            "--force",
        ],
    );
    let o = run(&["preview", &t]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!lines(&o).is_empty());
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    // Unreadable input: exit 2.
    let o = run(&["preview", "no/such/file.ron"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn check_json_carries_the_preview_section() {
    let o = run(&["check", "--json", SEED]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let entry = |call| {
        json!({"call": call, "previews": 5, "stable": 5, "contradicted": 0,
               "first_contradiction": null, "checked": true})
    };
    assert_eq!(v["preview"], json!([entry(0), entry(1)]));
    // After every existing key.
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys.last().map(|k| k.as_str()), Some("preview"));
    assert_eq!(keys[keys.len() - 2], "response");
    assert_eq!(keys[keys.len() - 3], "findings");

    let dir = tempfile::tempdir().expect("tempdir");
    let p = stub_file(
        dir.path(),
        &["--call", r#"f={"days":31}"#, "--fragment", "9,2"],
    );
    let o = run(&["check", "--json", &p]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(
        v["preview"],
        json!([{"call": 0, "previews": 3, "stable": 2, "contradicted": 1,
                "first_contradiction": {"fragment": 1, "path": "/days", "shown": 3, "final": 31},
                "checked": true}])
    );
    let f: Vec<&Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == "preview-contradiction")
        .collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["severity"], "info");
    assert_eq!(f[0]["call"], 0);

    // --no-preview: no section, no finding.
    let o = run(&["check", "--json", "--no-preview", &p]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert!(v.get("preview").is_none());
    assert!(
        !v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["kind"] == "preview-contradiction")
    );

    // The text report's section.
    let o = run(&["check", &p]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(
            "  ✗ call 0 f: 3 previews, 2 stable, 1 contradicted\n      first after fragment 1: 3 shown at /days, final 31\n"
        ),
        "{text}"
    );
}
