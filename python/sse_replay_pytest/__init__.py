"""sse-replay's client-test suite inside pytest.

Every case of `sse-replay test` (a recording x a way of cutting its bytes into network reads) becomes
one parametrized test. A test takes the ``sse_replay_case`` argument, points the code under test at
``case.base_url`` (``case.openai_base_url`` for OpenAI SDKs), and hands the tool calls it assembled
to ``case.check(calls)``, which asks the suite server for the verdict ``sse-replay test`` would give
and raises ``AssertionError`` with the diagnosis when the case fails::

    import pytest

    @pytest.mark.sse_replay(dialect="openai-chat")
    def test_my_agent_reads_tool_calls(sse_replay_case):
        try:
            calls = my_agent.tool_calls(base_url=sse_replay_case.openai_base_url)
        except Exception as e:          # the SDK gave up: right on a broken stream
            sse_replay_case.check(error=e)
            return
        sse_replay_case.check(calls)    # [{"name": ..., "arguments": ..., "id": ...}, ...]

The plugin starts ``sse-replay serve --suite`` itself (``--sse-replay-bin`` or ``$SSE_REPLAY_BIN``,
default ``sse-replay`` on PATH; extra flags with ``--sse-replay-args`` or
``$SSE_REPLAY_SUITE_ARGS``), or uses a running one (``--sse-replay-url`` or
``$SSE_REPLAY_SUITE_URL``). A case that is not judged (a pass on a fault or broken stream while the
client fails the same recording's clean form) is skipped with the reason.

Each test function has its own session of verdicts on the server: a fault or broken case counts
only on the clean form that the same function passed, so one test never changes another's results,
and two pytest runs on one server never mix. The plugin's version must be the server's (it refuses
any other sse-replay with the versions in the message). Standard library only.
"""

import json
import os
import shlex
import subprocess
import urllib.error
import urllib.request

import pytest

__all__ = ["Case", "Session", "SuiteServer", "__version__"]

# Released with sse-replay: the server's version must be this one.
__version__ = "0.1.0"


def _mismatch(what, version):
    if not version:
        return pytest.UsageError(
            f"sse-replay-pytest {__version__} needs sse-replay {__version__}, but {what} does not say "
            "which sse-replay version it is"
        )
    return pytest.UsageError(
        f"sse-replay-pytest {__version__} needs sse-replay {__version__}, but {what} is sse-replay {version}: "
        f"install the plugin of that version (pip install sse-replay-pytest=={version}) "
        f"or point --sse-replay-bin / $SSE_REPLAY_BIN at sse-replay {__version__}"
    )


def _binary_version(binary):
    """The version `binary --version` prints (``sse-replay X.Y.Z``), or None if it prints no such line."""
    try:
        out = subprocess.run(
            [binary, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise pytest.UsageError(
            f"sse-replay: cannot run {binary!r} ({e}); set --sse-replay-bin or $SSE_REPLAY_BIN"
        ) from e
    words = out.split()
    return words[1] if len(words) == 2 and words[0] == "sse-replay" else None


class SuiteServer:
    """A running ``sse-replay serve --suite``: started here, or one given by its URL."""

    def __init__(self, url=None, binary="sse-replay", args=()):
        self.process = None
        self.sessions = []
        if url:
            self.url = url.rstrip("/")
            self.what = f"the server at {self.url}"
            return
        self.what = binary
        version = _binary_version(binary)
        if version != __version__:
            raise _mismatch(binary, version)
        command = [binary, "serve", "--suite", "--addr", "127.0.0.1:0", *args]
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        except OSError as e:
            raise pytest.UsageError(
                f"sse-replay: cannot start {binary!r} ({e}); set --sse-replay-bin or $SSE_REPLAY_BIN"
            ) from e
        # The server's first line says where it listens: the wait is on that line, not a sleep.
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening on "):
            code = self.process.wait()
            raise pytest.UsageError(
                f"sse-replay: `{' '.join(command)}` did not start (exit {code}); run it by hand to see why"
            )
        self.url = line[len("listening on "):].rstrip("/")

    def session(self, name=None):
        """Opens a :class:`Session` on the server: verdicts of its own (one per test function).
        Refuses a server of another version than the plugin's."""
        request = urllib.request.Request(
            f"{self.url}/sessions",
            data=json.dumps({"name": name} if name else {}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                info = json.load(r)
        except urllib.error.HTTPError as e:
            if e.code == 404:
                raise pytest.UsageError(
                    f"sse-replay-pytest {__version__}: {self.what} opens no sessions, it is older than "
                    f"sse-replay {__version__}: install sse-replay {__version__}"
                ) from e
            raise pytest.UsageError(
                f"sse-replay: POST {self.url}/sessions: {e.code} {e.read().decode(errors='replace')}"
            ) from e
        if info.get("version") != __version__:
            raise _mismatch(self.what, info.get("version"))
        session = Session(info)
        self.sessions.append(session)
        return session

    def cases(self, dialect=None):
        """Every case (clean ones first), as :class:`Case`, in a new session (each call is one)."""
        return self.session().cases(dialect)

    def stop(self):
        # A server we did not start outlives us: close our sessions on it.
        if self.process is None:
            for session in self.sessions:
                session.close()
        self.sessions = []
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


class Session:
    """A session on the suite server: its cases are judged against each other only."""

    def __init__(self, info):
        self.id = info["id"]
        self.url = info["url"].rstrip("/")

    def cases(self, dialect=None):
        """Every case (clean ones first), as :class:`Case`, served and judged in this session."""
        query = f"?dialect={dialect}" if dialect else ""
        with urllib.request.urlopen(f"{self.url}/cases{query}", timeout=60) as r:
            listing = json.load(r)
        return [Case(c) for c in listing["cases"]]

    def close(self):
        """Closes the session on the server (its verdicts are dropped)."""
        try:
            urllib.request.urlopen(urllib.request.Request(self.url, method="DELETE"), timeout=60).close()
        except (urllib.error.URLError, OSError):
            pass  # the server is gone, and the session with it

    def __repr__(self):
        return f"Session({self.id})"


class Case:
    """One case of the suite: where it is served, what it must give, and its judge."""

    def __init__(self, listing):
        self.listing = listing
        self.id = listing["id"]
        self.recording = listing["recording"]
        self.variant = listing["variant"]
        self.dialect = listing["dialect"]
        self.kind = listing["kind"]
        self.base_url = listing["base_url"]
        self.tools = listing["tools"]
        # Each expected call: {"name", "arguments", "id", "status": "ok" | "unfinished" | "broken"}
        # (None if the server does not list them).
        self.expected = listing.get("expected")

    @property
    def openai_base_url(self):
        """``base_url`` with ``/v1``, as the OpenAI SDKs want their base URL."""
        return f"{self.base_url}/v1"

    def __repr__(self):
        return f"Case({self.id})"

    def verdict(self, calls=None, error=None):
        """The suite server's verdict on what the client did: ``calls`` it assembled (a list of
        ``{"name", "arguments", "id"}``; ``arguments`` a JSON string or a value), and ``error`` if
        it failed (an exception or a message). Returns the verdict as a dict."""
        body = {"calls": calls if calls is not None else []}
        if error is not None:
            body["error"] = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
        request = urllib.request.Request(
            self.listing["verdict_url"],
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            raise AssertionError(f"sse-replay: the verdict request failed: {e.read().decode(errors='replace')}") from e

    def check(self, calls=None, error=None):
        """Asserts the case passes: raises ``AssertionError`` with the difference and the
        diagnosis when it fails, skips the test when it is not judged."""
        v = self.verdict(calls, error)
        if v["verdict"] == "pass":
            return v
        if v["verdict"] == "not-judged":
            pytest.skip(f"not judged: {v['detail']}")
        message = f"{self.id}: {v['verdict']}: {v['detail']}"
        if v.get("diagnosis"):
            message += f"\n    {v['diagnosis']}"
        raise AssertionError(message)


def pytest_addoption(parser):
    group = parser.getgroup("sse-replay", "sse-replay client-test suite")
    group.addoption(
        "--sse-replay-url",
        default=os.environ.get("SSE_REPLAY_SUITE_URL"),
        help="URL of a running `sse-replay serve --suite` (default: start one)",
    )
    group.addoption(
        "--sse-replay-bin",
        default=os.environ.get("SSE_REPLAY_BIN", "sse-replay"),
        help="the sse-replay binary to start (default: sse-replay on PATH)",
    )
    group.addoption(
        "--sse-replay-args",
        default=os.environ.get("SSE_REPLAY_SUITE_ARGS", ""),
        help="more flags for `serve --suite`, e.g. '--faults all --random-seed 7'",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "sse_replay(dialect=None, kind=None): only the suite's cases of this dialect (and kind: clean, broken, fault)",
    )
    config._sse_replay_server = None


def _server(config):
    if config._sse_replay_server is None:
        config._sse_replay_server = SuiteServer(
            url=config.getoption("--sse-replay-url"),
            binary=config.getoption("--sse-replay-bin"),
            args=shlex.split(config.getoption("--sse-replay-args") or ""),
        )
    return config._sse_replay_server


def pytest_unconfigure(config):
    server = getattr(config, "_sse_replay_server", None)
    if server is not None:
        server.stop()


def pytest_generate_tests(metafunc):
    if "sse_replay_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("sse_replay")
    options = marker.kwargs if marker else {}
    # One session per test function: its fault and broken cases are gated by its own clean forms.
    session = _server(metafunc.config).session(name=metafunc.definition.nodeid)
    cases = session.cases(dialect=options.get("dialect"))
    kind = options.get("kind")
    if kind:
        kinds = {kind} if isinstance(kind, str) else set(kind)
        cases = [c for c in cases if c.kind in kinds]
    metafunc.parametrize("sse_replay_case", cases, ids=[c.id for c in cases])


@pytest.fixture(scope="session")
def sse_replay_suite(request):
    """The suite server (its ``url``, ``session()`` and ``cases()``), for tests that iterate it
    themselves: each ``session()`` (and each ``cases()`` call) has verdicts of its own."""
    return _server(request.config)
