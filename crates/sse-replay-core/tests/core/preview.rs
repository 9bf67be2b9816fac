//! The partial-JSON preview at the library level: jiter's partial-mode value after every fragment,
//! and preview honesty (contradictions against the final arguments). The `preview` command and
//! `check`'s Preview section are the root `tests/it/preview.rs`.

use serde_json::{Value, json};
use sse_replay_core::analysis::{Analysis, SourceInfo};
use sse_replay_core::findings::FindingKind;
use sse_replay_core::pipeline::Options;
use sse_replay_core::preview::{self, CallPreview, Contradiction};
use sse_replay_core::stub::{self, StubCall, StubSpec};

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
