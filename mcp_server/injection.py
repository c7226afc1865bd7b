"""Indirect prompt injection (chapter section 15.9): a naive reader next to the hardened one.

``naive_agent`` exists only to demonstrate the attack; the product reads through
``hardened_agent``'s path (:func:`~mcp_server.read.admit` before extraction) everywhere.
"""

from __future__ import annotations

import re

from .engine import Engine

#: The chapter's directive detector; used to *report* directives, never to act on them.
INJECT = re.compile(r"(?i)ignore .*instructions|email .* to \s*\S+@\S+")
_CLAUSE = re.compile(r"[.\n]")


def directives(text: str) -> list[str]:
    """Clauses of retrieved text that look like instructions (to flag as detected, not executed)."""
    return [c.strip() for c in _CLAUSE.split(text) if INJECT.search(c)]


def naive_agent(engine: Engine, query: str, groups: frozenset[str], subject: str, relation: str, k: int = 3):
    """A vulnerable reader: obeys directives in retrieved text and reads facts from every document.

    Returns ``(executed_directives, facts)`` exposing the compromise.
    """
    hits = engine.search_docs(query, groups, k)
    executed = [(d.id, clause) for d in hits for clause in directives(d.text)]
    return executed, engine.table(hits).get((subject, relation))


def hardened_agent(engine: Engine, query: str, groups: frozenset[str], subject: str, relation: str, k: int = 3):
    """A safe reader: untrusted documents are dropped before extraction; text is never a command.

    Returns ``(blocked_ids, facts)`` showing the attack contained.
    """
    admitted, blocked = engine.admit(engine.search_docs(query, groups, k))
    return blocked, engine.table(admitted).get((subject, relation))
