//! The partial-JSON preview: jiter's partial-mode value after every fragment,
//! preview honesty (contradictions against the final arguments), the `preview` command's lines,
//! and `check`'s Preview section.

use crate::common;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use common::{run, stderr};
use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::findings::FindingKind;
use sse_replay_core::pipeline::Options;
use sse_replay_core::preview::{self, CallPreview, Contradiction};
use sse_replay_core::stub::{self, StubCall, StubSpec};

const SEED: &str = "recordings/seed-example.ron";

fn analyse(spec: &StubSpec) -> Analysis {
    let rec = stub::build(spec);
    let source = SourceInfo {
        name: rec.meta.title.clone(),
        kind: "recording".into(),
        timing_known: true,
    };
    Analysis::from_recording(&rec, source, Options::default())
}

/// One call, `{"days":31}`, cut after `{"days":3`: the number is split across two fragments.
fn cut_number() -> StubSpec {
    StubSpec {
        calls: vec![StubCall {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: r#"{"days":31}"#.into(),
        }],
        fragment_chars: vec![9, 2],
        ..StubSpec::default()
    }
}

/// (fragment, call, t_us, preview, contradicted) for every fragment, in stream order.
fn feed(a: &Analysis) -> Vec<(u32, u32, u64, Option<Value>, bool)> {
    let mut v = Vec::new();
    preview::each_fragment(a, None, |p| {
        v.push((
            p.fragment,
            p.call,
            p.t_us,
            p.value,
            !p.contradicted.is_empty(),
        ));
    });
    v
}

#[test]
fn seed_example_previews_at_every_fragment() {
    let a = analyse(&stub::seed_example());
    // The fragments' texts, as the seed cuts them (5 characters each).
    let texts: Vec<&str> = a.fragments.iter().map(|f| a.fragment_text(f)).collect();
    assert_eq!(
        texts,
        [
            r#"{"cit"#,
            r#"y":"深"#,
            r#"圳","d"#,
            r#"ays":"#,
            "3}",
            r#"{"cit"#,
            r#"y":"杭"#,
            r#"州","d"#,
            r#"ays":"#,
            "1}"
        ]
    );
    // jiter (trailing strings) hides a key until its value starts, and shows a string cut short.
    assert_eq!(
        feed(&a),
        [
            (0, 0, 40_000, Some(json!({})), false),
            (1, 0, 80_000, Some(json!({"city": "深"})), false),
            (2, 0, 120_000, Some(json!({"city": "深圳"})), false),
            (3, 0, 160_000, Some(json!({"city": "深圳"})), false),
            (
                4,
                0,
                200_000,
                Some(json!({"city": "深圳", "days": 3})),
                false
            ),
            (5, 1, 240_000, Some(json!({})), false),
            (6, 1, 280_000, Some(json!({"city": "杭"})), false),
            (7, 1, 320_000, Some(json!({"city": "杭州"})), false),
            (8, 1, 360_000, Some(json!({"city": "杭州"})), false),
            (
                9,
                1,
                400_000,
                Some(json!({"city": "杭州", "days": 1})),
                false
            ),
        ]
    );
    // The cursor view gives the same value: call 1 after its second fragment.
    let at = preview::at(&a, 1, 2).expect("call 1 has two fragments by then");
    assert_eq!(at.fragment, 6);
    assert_eq!(at.value, Some(json!({"city": "杭"})));
    assert_eq!(preview::at(&a, 1, 0), None);
}

#[test]
fn seed_example_has_no_contradictions() {
    let mut a = analyse(&stub::seed_example());
    a.compute_previews();
    let expect = |call| CallPreview {
        call,
        previews: 5,
        stable: 5,
        contradicted: 0,
        first_contradiction: None,
        checked: true,
    };
    assert_eq!(a.preview, Some(vec![expect(0), expect(1)]));
    assert!(
        a.findings
            .iter()
            .all(|f| f.kind != FindingKind::PreviewContradiction)
    );
}

#[test]
fn a_number_cut_short_is_a_contradiction() {
    let mut a = analyse(&cut_number());
    let texts: Vec<&str> = a.fragments.iter().map(|f| a.fragment_text(f)).collect();
    // The opening delta carries `"arguments": ""`, then the number is cut after its 3.
    assert_eq!(texts, ["", r#"{"days":3"#, "1}"]);
    assert_eq!(
        feed(&a),
        [
            (0, 0, 30_000, None, false),
            (1, 0, 60_000, Some(json!({"days": 3})), true),
            (2, 0, 90_000, Some(json!({"days": 31})), false),
        ]
    );
    let at = preview::at(&a, 0, 2).expect("second fragment");
    assert_eq!(at.contradicted, ["/days"]);
    let ok_before = a.verdict().ok();
    a.compute_previews();
    assert_eq!(
        a.preview,
        Some(vec![CallPreview {
            call: 0,
            previews: 3,
            stable: 2,
            contradicted: 1,
            first_contradiction: Some(Contradiction {
                fragment: 1,
                path: "/days".into(),
                shown: json!(3),
                final_value: json!(31),
            }),
            checked: true,
        }])
    );
    let f = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::PreviewContradiction)
        .expect("an info finding names the call");
    assert_eq!((f.call, f.count, f.first.fragment), (Some(0), 1, Some(1)));
    assert_eq!(
        f.message,
        "1 of 3 previews show something the final arguments contradict; first after fragment 1: 3 shown at /days, final 31"
    );
    // A view only: the verdict is the same.
    assert!(ok_before);
    assert!(a.verdict().ok());
}

#[test]
fn a_call_that_does_not_parse_is_not_checked() {
    let spec = StubSpec {
        calls: vec![StubCall {
            id: "call_1".into(),
            name: "f".into(),
            arguments: r#"{"days":3}}"#.into(),
        }],
        fragment_chars: vec![8],
        ..StubSpec::default()
    };
    let mut a = analyse(&spec);
    a.compute_previews();
    assert_eq!(
        a.preview,
        Some(vec![CallPreview {
            call: 0,
            previews: 3,
            stable: 0,
            contradicted: 0,
            first_contradiction: None,
            checked: false,
        }])
    );
    assert!(!a.verdict().ok());
    let text = sse_replay_core::report::check_text(&a);
    assert!(
        text.contains("  call 0 f: 3 previews, not checked (the final arguments do not parse)\n"),
        "{text}"
    );
}

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
