#!/usr/bin/env bash
# Self-test for .ci/guards.sh: runs each guard on small temporary trees that should pass or fail.
#
#   bash .ci/guards-selftest.sh
#
# Needs only cargo (the `core` cases build two tiny local crates offline, no registry).
set -euo pipefail

GUARDS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/guards.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
bad=0

# expect <pass|fail> <description> <tree> <guard…>
expect() {
    local want="$1" what="$2" tree="$3"
    shift 3
    local got=pass
    GUARD_ROOT="$tree" bash "$GUARDS" "$@" >"$TMP/out" 2>&1 || got=fail
    if [ "$got" = "$want" ]; then
        echo "ok    ($want) $what"
    else
        echo "WRONG (wanted $want, got $got) $what"
        sed 's/^/      | /' "$TMP/out"
        bad=1
    fi
}

# A tree with the allowed shape: cli/ and app/ may name each other and themselves, main.rs too;
# names that merely start with cli/app (crate::client, cli_like) are fine.
base() {
    local t="$TMP/$1"
    rm -rf "$t"
    mkdir -p "$t/src/cli" "$t/src/app" "$t/src/net"
    printf 'pub mod app;\npub mod cli;\npub mod client;\npub mod net;\n' >"$t/src/lib.rs"
    printf 'use crate::app::App;\n/// See [`crate::cli::run`].\npub fn run() {}\n' >"$t/src/cli/mod.rs"
    printf 'use crate::cli::run;\npub struct App;\n' >"$t/src/app/mod.rs"
    printf 'fn main() { sse_replay::cli::run(); let _ = crate::app::App; }\n' >"$t/src/main.rs"
    printf 'use crate::client::Client;\nuse crate::{client, net::cli_like};\n/// [`crate::apply`]\npub fn f() {}\n' \
        >"$t/src/net/mod.rs"
    printf 'pub struct Client;\n' >"$t/src/client.rs"
    echo "$t"
}

t="$(base clean)"
expect pass "clean tree" "$t" layering sizes

t="$(base use_cli)"
echo 'use crate::cli::{EXIT_OK, EXIT_INPUT};' >>"$t/src/net/mod.rs"
expect fail "net/ imports crate::cli" "$t" layering

t="$(base doc_link)"
printf '//! Used by [`crate::app::App`].\n' >>"$t/src/client.rs"
expect fail "a doc link to crate::app" "$t" layering

t="$(base group)"
printf 'use crate::{\n    client::Client,\n    cli::EXIT_OK,\n};\n' >>"$t/src/client.rs"
expect fail "a multi-line group import naming cli" "$t" layering

t="$(base group_first)"
printf 'use crate::{app, client};\n' >>"$t/src/client.rs"
expect fail "a group import starting with app" "$t" layering

t="$(base super_app)"
mkdir -p "$t/src/harness"
printf 'use super::app::App;\n' >"$t/src/harness/mod.rs"
expect fail "super::app from a core module" "$t" layering

t="$(base lines_900)"
seq 900 | sed 's|^|// |' >"$t/src/client.rs"
expect pass "a file of exactly 900 lines" "$t" sizes

t="$(base lines_901)"
seq 901 | sed 's|^|// |' >"$t/src/app/mod.rs"
expect fail "a file of 901 lines (in app/ too)" "$t" sizes

# `core`: a package whose GUI crates (local stand-ins named egui/eframe/rfd) are optional behind
# a default `gui` feature passes; one that depends on egui unconditionally fails.
crate() {
    mkdir -p "$1/src"
    printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n' "$2" >"$1/Cargo.toml"
    : >"$1/src/lib.rs"
}
crate "$TMP/fake/egui" egui
crate "$TMP/fake/rfd" rfd
core_tree() {
    local t
    t="$(base "$1")"
    cat >"$t/Cargo.toml" <<EOF
[package]
name = "sse_replay"
version = "0.1.0"
edition = "2021"
[features]
default = ["gui"]
gui = ["dep:rfd"]
[dependencies]
rfd = { path = "$TMP/fake/rfd", optional = true }
$2
EOF
    rm -rf "$t/src/cli" "$t/src/app" "$t/src/net" "$t/src/client.rs"
    printf 'fn main() {}\n' >"$t/src/main.rs"
    : >"$t/src/lib.rs"
    (cd "$t" && cargo generate-lockfile --offline --quiet)
    echo "$t"
}
export CARGO_TARGET_DIR="$TMP/target"
t="$(core_tree core_ok 'egui = { path = "'"$TMP"'/fake/egui", optional = true }')"
expect pass "GUI crates only behind the gui feature" "$t" core
t="$(core_tree core_egui 'egui = { path = "'"$TMP"'/fake/egui" }')"
expect fail "egui as a normal dependency of the core" "$t" core
t="$(core_tree core_broken '')"
echo 'this does not compile' >"$t/src/lib.rs"
expect fail "a core that does not build" "$t" core

expect fail "an unknown guard name" "$(base unknown)" nonsense

if [ "$bad" -ne 0 ]; then
    echo "guards self-test: FAILED" >&2
    exit 1
fi
echo "guards self-test: all cases as expected"
