//! The core's layer folders stay layers: no module's non-test code names a module of a higher
//! layer through a `crate::` path (ARCHITECTURE.md, "Modules of the core crate").

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layer folders, lowest first.
const LAYERS: [&str; 6] = ["base", "wire", "read", "analyse", "synth", "out"];

fn src() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code a build without `cfg(test)` compiles: files that are test modules are skipped, a
/// trailing `mod tests` is cut off, and comment lines (doc links may name any layer) are dropped.
fn non_test_code(path: &Path) -> String {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name == "tests.rs" || name == "test_support.rs" {
        return String::new();
    }
    let text = fs::read_to_string(path).expect("read a source file");
    let code = text
        .split_once("#[cfg(test)]\nmod tests")
        .map_or(text.as_str(), |(before, _)| before);
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment after every `crate::`, including each name in a `crate::{a, b::c}` group.
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut top = String::new();
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 1 => break,
                    '}' => depth -= 1,
                    c if depth == 1 => top.push(c),
                    _ => {}
                }
            }
            names.extend(top.split(',').map(|item| ident(item.trim_start())));
        } else {
            names.push(ident(rest));
        }
    }
    names
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn no_layer_uses_a_higher_one() {
    let src = src();
    // Each module (and each layer's own name) → its layer's rank.
    let mut rank = BTreeMap::new();
    for (r, layer) in LAYERS.iter().enumerate() {
        rank.insert((*layer).to_owned(), r);
        for entry in fs::read_dir(src.join(layer)).expect("a layer folder") {
            let path = entry.expect("a folder entry").path();
            let stem = path
                .file_stem()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if stem != "mod" {
                rank.insert(stem.to_owned(), r);
            }
        }
    }
    assert!(
        rank.len() > 30,
        "every module is in a layer folder: {rank:?}"
    );

    let mut wrong = Vec::new();
    for (r, layer) in LAYERS.iter().enumerate() {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        for file in files {
            for name in crate_paths(&non_test_code(&file)) {
                if let Some(&used) = rank.get(&name)
                    && used > r
                {
                    wrong.push(format!(
                        "{} ({layer}) uses crate::{name} ({})",
                        file.strip_prefix(&src).unwrap_or(&file).display(),
                        LAYERS[used]
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "lower layers use higher ones:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn crate_paths_reads_groups_and_plain_paths() {
    let code = "use crate::{framing::Framer, text, dialect::{self, DialectKind}};\n\
                let x = crate::report::check_text(a);";
    assert_eq!(crate_paths(code), ["framing", "text", "dialect", "report"]);
}
