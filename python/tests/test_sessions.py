"""The plugin as a user installs it: each test function keeps its own verdicts, two runs on one
server never mix, and a server of another version is refused.

Each test runs pytest on a small test file in a subprocess (the plugin found by its entry point) and
reads its JUnit report. Needs the plugin and openai-python installed, and sse-replay in
``$SSE_REPLAY_BIN``; ``scripts/ci-helpers.sh`` runs it (``python -m pytest python/tests``).
"""

import http.server
import json
import os
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import sse_replay_pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("SSE_REPLAY_BIN", "sse-replay")
# Two OpenAI Chat recordings, a clean one and a broken one, in one framing and both faults.
RECORDINGS = [ROOT / "recordings" / f"{r}.ron" for r in ("openai-chat-weather", "quirk-truncated")]
SUITE_ARGS = ["--recordings", *map(str, RECORDINGS), "--variants", "one-read", "--faults", "all"]
SUITE_ARGS += ["--random-seed", "7", "--instant"]

READS = '''
import pytest
from openai_python_client import tool_calls


@pytest.mark.sse_replay(dialect="openai-chat")
def test_reads(sse_replay_case):
    try:
        calls = tool_calls(sse_replay_case.openai_base_url, sse_replay_case.tools)
    except Exception as e:
        sse_replay_case.check(error=e)
        return
    sse_replay_case.check(calls)
'''

# Reads every stream, then gives up: right on a broken stream only. It takes the fault and broken
# cases only, so a verdict store shared with test_reads would gate them by test_reads' clean passes.
GIVES_UP = '''
import pytest
from openai_python_client import tool_calls


@pytest.mark.sse_replay(dialect="openai-chat", kind=["fault", "broken"])
def test_gives_up(sse_replay_case):
    try:
        tool_calls(sse_replay_case.openai_base_url, sse_replay_case.tools)
    except Exception:
        pass
    sse_replay_case.check(error="gave up")
'''

# For the runs that must stop before any case: no SDK to import.
ANY = """
def test_any(sse_replay_case):
    sse_replay_case.check([])
"""


def pytest_run(folder, name, source, env):
    """Starts pytest on a test file holding ``source``; returns (process, junit path)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"test_{name}.py").write_text(source)
    junit = folder / f"{name}.xml"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "examples" / "pytest"),
        "SSE_REPLAY_BIN": BIN,
        "SSE_REPLAY_SUITE_ARGS": " ".join(SUITE_ARGS),
        **env,
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore"]
    command += [f"--junitxml={junit}", f"test_{name}.py"]
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return process, junit


def outcomes(process, junit):
    """(function, case) -> passed | failed | skipped, from the run's JUnit report."""
    output = process.communicate()[0]
    assert junit.exists(), output
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        function, _, case = tc.get("name", "").partition("[")
        outcome = "passed"
        for child in tc:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        out[(function, case.rstrip("]"))] = outcome
    assert out, output
    return out


def passes(results, function):
    return sorted(case for (f, case), o in results.items() if f == function and o == "passed")


def test_a_function_that_gives_up_passes_nothing(tmp_path):
    results = outcomes(*pytest_run(tmp_path, "two_functions", READS + GIVES_UP, {}))
    # test_reads passes faults on the clean forms it passed itself...
    assert "openai-chat-weather/cut" in passes(results, "test_reads"), results
    # ...which count for nothing in test_gives_up, judged against its own.
    gave_up = {case: o for (f, case), o in results.items() if f == "test_gives_up"}
    assert gave_up, results
    assert passes(results, "test_gives_up") == [], results


def test_two_runs_on_one_server_do_not_mix(tmp_path):
    server = sse_replay_pytest.SuiteServer(binary=BIN, args=SUITE_ARGS)
    try:
        env = {"SSE_REPLAY_SUITE_URL": server.url}
        alone = outcomes(*pytest_run(tmp_path / "alone", "reads", READS, env))
        # Both runs at once on the same server.
        reads = pytest_run(tmp_path / "reads", "reads", READS, env)
        gives_up = pytest_run(tmp_path / "gives_up", "gives_up", GIVES_UP, env)
        together, quitter = outcomes(*reads), outcomes(*gives_up)
    finally:
        server.stop()
    assert together == alone
    assert passes(quitter, "test_gives_up") == [], quitter


class _OtherVersion(http.server.BaseHTTPRequestHandler):
    """A suite server of another version: what POST /sessions answers with."""

    def do_POST(self):
        body = json.dumps({"id": "1", "url": f"http://{self.headers['host']}/sessions/1", "version": "0.0.1"})
        self.send_response(201)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


def test_a_server_of_another_version_is_refused(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OtherVersion)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        process, _ = pytest_run(tmp_path, "any", ANY, {"SSE_REPLAY_SUITE_URL": url})
        output = process.communicate()[0]
    finally:
        server.shutdown()
    assert process.returncode != 0, output
    mine = sse_replay_pytest.__version__
    assert f"sse-replay-pytest {mine} needs sse-replay {mine}, but the server at {url} is sse-replay 0.0.1" in output


def test_a_binary_of_another_version_is_refused(tmp_path):
    fake = tmp_path / "sse-replay"
    fake.write_text("#!/bin/sh\necho 'sse-replay 9.9.9'\n")
    fake.chmod(0o755)
    process, _ = pytest_run(tmp_path, "any", ANY, {"SSE_REPLAY_BIN": str(fake)})
    output = process.communicate()[0]
    assert process.returncode != 0, output
    mine = sse_replay_pytest.__version__
    assert f"needs sse-replay {mine}, but {fake} is sse-replay 9.9.9" in output
