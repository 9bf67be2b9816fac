#!/usr/bin/env bash
# DuckDB's answers equal `sse-replay scan`'s own summary: a generated corpus (10,000 captures by
# default) plus the bundled recordings and the test data are scanned into Parquet tables, the
# queries of examples/spark/queries.sql are run on them with the pinned duckdb Python package, and
# the summary they rebuild must equal `scan --json`'s; then the Spark job's accounting is tested
# (examples/spark/test_scan_job.py, without Spark). Needs Python 3 with venv (installs duckdb
# from PyPI into examples/spark/.venv on first run) and a built binary (debug by default).
#
#   scripts/ci-scan-duckdb.sh            # 10,000 captures
#   CORPUS=1000 scripts/ci-scan-duckdb.sh
#   SSE_REPLAY=target/release/sse-replay scripts/ci-scan-duckdb.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${CORPUS:-10000}"
BIN="${SSE_REPLAY:-target/debug/sse-replay}"
VENV=examples/spark/.venv
if ! "$VENV/bin/python" -c "import duckdb" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "$(grep '^duckdb==' examples/spark/requirements.txt)"
fi
# INSTALL_ONLY=1: install duckdb and stop (CI does it in the background while the workspace builds).
[ -z "${INSTALL_ONLY:-}" ] || exit 0
if [ ! -x "$BIN" ]; then
    cargo build -p sse-replay
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
"$BIN" generate-corpus -o "$work/corpus" --count "$CORPUS" --seed 21
inputs=("$work/corpus" recordings tests/data)
# Exit 1 is expected: some generated streams are not OK (truncated, provider errors, …).
status=0
"$BIN" scan --json "${inputs[@]}" > "$work/summary.json" || status=$?
[ "$status" -le 1 ] || { echo "scan --json failed with $status" >&2; exit 1; }
status=0
"$BIN" scan -o "$work/tables" "${inputs[@]}" 2> "$work/scan.err" || status=$?
[ "$status" -le 1 ] || { cat "$work/scan.err" >&2; exit 1; }
"$VENV/bin/python" examples/spark/duckdb_queries.py "$work/tables" --check "$work/summary.json"
# The Spark job's accounting (no Spark needed): a killed partition's files are named, exit 1.
python3 -W ignore examples/spark/test_scan_job.py "$BIN"
echo "ci-scan-duckdb: $CORPUS captures, $(( $(date +%s) - start )) s"
