//! Embeds every bundled recording (`recordings/*.ron`) in the binary for `sse-replay test`'s
//! built-in suite, so the command works from any folder after `cargo install` and a new recording
//! is never forgotten in a hand-kept list.

#![allow(
    clippy::print_stdout,
    reason = "a build script talks to cargo on standard output (`cargo:rerun-if-changed`)"
)]

fn main() {
    // Read at run time, not with `env!`: a build-script binary compiled for one checkout can be
    // reused for another (a shared target directory), and must then list *this* checkout's files.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| ".".into());
    let dir = std::path::Path::new(&manifest_dir).join("../../recordings");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".ron"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("&[\n");
    for n in &names {
        let path = dir.join(n);
        println!("cargo:rerun-if-changed={}", path.display());
        out.push_str(&format!(
            "    ({n:?}, include_bytes!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("]\n");
    let target = std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()))
        .join("builtin_recordings.rs");
    if let Err(e) = std::fs::write(&target, out) {
        panic!("cannot write {}: {e}", target.display());
    }
}
