"""Shared fixtures: the demo corpus, its principals and the chapter's question set."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoprag.access import load_access
from hoprag.engine import Engine
from hoprag.questions import load_questions

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
ENG = frozenset({"engineering"})
FIN = frozenset({"finance"})


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
