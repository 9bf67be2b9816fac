#!/usr/bin/env bash
# Layering guards: the permanent rules of the module map, checked rather than hoped for.
#
#   bash .ci/guards.sh            all guards, from the repo root (what .ci/run does)
#   bash .ci/guards.sh layering   one or more named guards: layering, sizes, cycles, core
#
# GUARD_ROOT=<dir> runs them on another tree (used to test this script on a temporary copy).
#
#   layering  no module below cli/ and app/ names either of them: outside src/cli/, src/app/ and
#             src/main.rs, no `crate::cli` / `crate::app` (code or doc link), no `crate::{…cli…}`
#             group import, no `super::cli` / `super::app`.
#   sizes     no file in src/ over MAX_LINES (900) lines.
#   cycles    no import cycle between the top-level modules of src/ (.ci/cycles.py; needs python3).
#   core      the core builds without the GUI (`cargo check --no-default-features`), and its
#             normal dependency tree contains no egui, eframe or rfd.
set -euo pipefail

ROOT="${GUARD_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
MAX_LINES="${MAX_LINES:-900}"
cd "$ROOT"

failed=0
fail() {
    echo "guard failed: $*" >&2
    failed=1
}

# Every file under src/ that is neither the CLI, the app, nor main.rs.
core_files() {
    find src -type f -name '*.rs' \
        -not -path 'src/cli/*' -not -path 'src/app/*' -not -path 'src/main.rs' | LC_ALL=C sort
}

guard_layering() {
    echo "== guard: nothing below cli/ and app/ names them"
    local hits
    # Single-line forms: paths and doc links (`crate::cli::run`, [`crate::app::App`]), super::.
    hits="$(core_files | xargs -r grep -nE '(crate|super)::(cli|app)\b' || true)"
    # Group imports, possibly over several lines: `use crate::{\n    cli::exit,\n …};`.
    hits+="$(core_files | xargs -r perl -0777 -ne '
        while (/crate::\{(?:[^;]*?[{,])?\s*(cli|app)\b/g) {
            my $line = 1 + (substr($_, 0, pos($_)) =~ tr/\n//);
            print "$ARGV:$line: crate::{…$1…}\n";
        }' || true)"
    if [ -n "$hits" ]; then
        echo "$hits" >&2
        fail "modules outside src/cli/, src/app/ and src/main.rs name crate::cli or crate::app (above)"
    fi
}

guard_sizes() {
    echo "== guard: no file in src/ over $MAX_LINES lines"
    local big
    big="$(find src -type f -print0 | LC_ALL=C sort -z | xargs -0 -r wc -l |
        awk -v max="$MAX_LINES" '$2 != "total" && $1 > max { print "  " $2 ": " $1 " lines" }')"
    if [ -n "$big" ]; then
        echo "$big" >&2
        fail "files in src/ over $MAX_LINES lines (above): split them"
    fi
}

guard_cycles() {
    echo "== guard: no import cycle between modules"
    if ! command -v python3 > /dev/null; then
        fail "python3 is needed for the import-cycle guard"
        return
    fi
    if ! python3 "$(dirname "${BASH_SOURCE[0]}")/cycles.py" src; then
        fail "import cycles between modules (see above)"
    fi
}

guard_core() {
    echo "== guard: the core builds without the GUI and depends on no GUI crate"
    if ! cargo check --locked --no-default-features --lib --bins --quiet; then
        fail "the core does not build with --no-default-features"
    fi
    local gui
    gui="$(cargo tree --locked -e normal --no-default-features --target all --prefix none \
        --format '{p}' | awk '{ print $1 }' | grep -xE 'egui|eframe|rfd' | LC_ALL=C sort -u || true)"
    if [ -n "$gui" ]; then
        fail "cargo tree -e normal --no-default-features contains GUI crates: $(echo $gui)"
    fi
}

guards=("$@")
[ ${#guards[@]} -gt 0 ] || guards=(layering sizes cycles core)
for g in "${guards[@]}"; do
    case "$g" in
        layering | sizes | cycles | core) "guard_$g" ;;
        *)
            echo "unknown guard: $g (layering, sizes, cycles, core)" >&2
            exit 2
            ;;
    esac
done
exit "$failed"
