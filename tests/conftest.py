"""Shared fixtures: the demo corpus, its principals and the chapter's question set; the test tiers
(``pytest -m "not slow"`` is the fast tier, plain ``pytest`` the full suite: tests/README.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression
from hypothesis import settings

from hoprag.access import load_access
from hoprag.engine import Engine
from hoprag.questions import load_questions

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
ENG = frozenset({"engineering"})
FIN = frozenset({"finance"})
#: The fast tier's profile: every property runs this many examples (see :func:`examples`).
settings.register_profile("fast", max_examples=10)


def fast_tier(config: pytest.Config) -> bool:
    """Whether this session leaves out the slow tests (``-m "not slow"`` or any expression that
    deselects a test marked only ``slow``): the fast tier, which also samples what it still runs.
    The expression is read by pytest's own ``-m`` parser, so the two never disagree."""
    markexpr = config.getoption("markexpr")
    try:
        return bool(markexpr) and not Expression.compile(markexpr).evaluate(lambda name, **_: name == "slow")
    except SyntaxError:
        return False  # pytest reports the malformed -m expression itself


def pytest_configure(config: pytest.Config) -> None:
    """The fast tier runs properties under the ``fast`` hypothesis profile, unless
    ``--hypothesis-profile`` names another."""
    if fast_tier(config) and not config.getoption("hypothesis_profile"):
        settings.load_profile("fast")


#: Tests the ``-m`` expression left out, for the check that every module keeps a fast test.
DESELECTED = pytest.StashKey[list[pytest.Item]]()


def pytest_deselected(items: list[pytest.Item]) -> None:
    for item in items:
        item.config.stash.setdefault(DESELECTED, []).append(item)


def examples(full: int) -> int:
    """How many examples a property runs: ``full``, or under the ``fast`` profile at most
    that profile's ``max_examples`` (a property's own ``@settings`` would otherwise override it)."""
    if settings.get_current_profile_name() == "fast":
        return min(full, settings.default.max_examples)
    return full


#: Where ``adk eval`` keeps every run's results (ADK's default, with no switch to turn it off).
EVAL_HISTORY = ROOT / "agents" / "hoprag_agent" / ".adk" / "eval_history"


def adk_eval(target: str, config: str = "test_config.json", timeout: float = 600,
             **env: str) -> subprocess.CompletedProcess:
    """``adk eval agents/hoprag_agent TARGET`` as a user runs it, offline; the results it saved are
    removed again: a run writes tens of MB into the agent folder, and ``adk web`` loads them all."""
    adk = Path(os.environ.get("VIRTUAL_ENV") or ROOT / ".venv") / "bin" / "adk"
    before = set(EVAL_HISTORY.iterdir()) if EVAL_HISTORY.is_dir() else set()
    try:
        return subprocess.run(
            [str(adk) if adk.exists() else "adk", "eval", "agents/hoprag_agent", target, "--config_file_path", config,
             "--print_detailed_results"], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false", **env})
    finally:
        for saved in (set(EVAL_HISTORY.iterdir()) if EVAL_HISTORY.is_dir() else set()) - before:
            saved.unlink()


@pytest.fixture(scope="session")
def engine() -> Engine:
    """The Falcon corpus under the chapter's overlap ranker."""
    return Engine.load(CORPUS, ranker="overlap")


@pytest.fixture(scope="session")
def questions():
    return load_questions(CORPUS / "questions.yaml", load_access(CORPUS / "access.yaml"))


class ServerProcess:
    """A real ``hoprag serve --transport http`` subprocess on 127.0.0.1 with a free port."""

    def __init__(self, *args: str, env: dict[str, str] | None = None):
        import os
        import re
        import subprocess
        import sys

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", *args],
            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        line = self.proc.stderr.readline()
        match = re.search(r"(http://\S+)/mcp", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line}{self.proc.stderr.read()}")
        self.base = match.group(1)
        self.url = f"{self.base}/mcp"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except Exception:  # noqa: BLE001 - a stuck server must not hang the suite
            self.proc.kill()


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL cluster for the session (``benchmarks.pgcluster``): Debian's
    ``postgresql``, which the README's test command installs; missing in CI is a failure."""
    import os

    from benchmarks.pgcluster import Cluster, bindir

    if bindir() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL is missing in CI: the README's test command (tests/system-deps.sh) installs it")
        pytest.skip("PostgreSQL not found (Debian: apt-get install postgresql)")
    cluster = Cluster()
    yield cluster
    cluster.destroy()


@pytest.fixture(scope="session")
def http_server():
    server = ServerProcess()
    yield server
    server.stop()
