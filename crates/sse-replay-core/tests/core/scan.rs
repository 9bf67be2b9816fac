//! `scan`'s schema against its documentation page (`docs/scan-schema.md`). `scan` through the
//! binary is the root `tests/it/scan.rs`.

#![allow(clippy::unwrap_used)]

use crate::common::repo_root as manifest;

/// docs/scan-schema.md describes every column of the schema, with its type and version.
#[test]
fn the_schema_page_describes_every_column() {
    let doc = std::fs::read_to_string(manifest().join("docs/scan-schema.md")).unwrap();
    assert!(doc.contains(&format!(
        "`schema_version` {}",
        sse_replay_core::scan::SCHEMA_VERSION
    )));
    for t in sse_replay_core::scan::Table::ALL {
        for c in t.columns() {
            let line = format!("| `{}` | {} |", c.name, c.kind.name());
            assert!(
                doc.contains(&line),
                "{line} missing from docs/scan-schema.md"
            );
        }
    }
}
