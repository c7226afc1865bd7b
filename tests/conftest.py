"""Shared fixtures: the demo corpus, its principals and the chapter's question set."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.access import load_access
from mcp_server.engine import Engine
from mcp_server.loop import load_questions

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
