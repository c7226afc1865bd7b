"""Indirect prompt injection (chapter section 15.9): the naive reader next to the hardened one.

``naive_agent`` exists only to demonstrate the attack; the product reads through the hardened
path (the integrity gate before extraction, :meth:`hoprag.Engine.table`) everywhere.
"""

from __future__ import annotations

from agents.hoprag_agent.directives import directives
from hoprag.engine import Engine
from hoprag.facts import facts_from


def naive_agent(engine: Engine, query: str, groups: frozenset[str], subject: str, relation: str, k: int = 3):
    """A vulnerable reader: obeys directives in retrieved text and reads facts from every document.

    Returns ``(executed_directives, facts)`` exposing the compromise.
    """
    hits = engine.search_docs(query, groups, k)
    executed = [(d.id, clause) for d in hits for clause in directives(d.text)]
    return executed, facts_from(hits, engine.facts).get((subject, relation))  # ungated: the vulnerability


def hardened_agent(engine: Engine, query: str, groups: frozenset[str], subject: str, relation: str, k: int = 3):
    """A safe reader: untrusted documents are dropped before extraction; text is never a command.

    Returns ``(blocked_ids, facts)`` showing the attack contained.
    """
    admitted, blocked = engine.admit(engine.search_docs(query, groups, k))
    return blocked, engine.table(admitted).get((subject, relation))
