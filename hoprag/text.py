"""The text rules every reader of the engine shares: what is a name.

One rule, so the fact reader's subjects, the entity index's names, the relation walk's next
searches and the agent's start entity agree on what a name is.
"""

from __future__ import annotations

#: Lower-case words allowed inside a proper name ("Church of England", "Ludwig van Beethoven").
CONNECTORS = frozenset("of the de du la le del della von van der den da di des y and for upon on".split())
MONTHS = frozenset("january february march april may june july august september october november december".split())


def is_name(surface: str) -> bool:
    """A proper-name-like surface (every word capitalised or a connector), not a date or a number:
    some word is a capitalised one that is not a month.

    Bridges between passages are named things; "seventh studio album", "April and June" or "April
    4, 2010" are not, nor is a connector alone ("on" in "What does Falcon depend on?").
    """
    words = surface.split()
    if any(w[:1].islower() and w.lower() not in CONNECTORS for w in words):
        return False
    return any(w[:1].isalpha() and not w[:1].islower() and w.lower().strip(",.") not in MONTHS for w in words)


def is_entity(name: str) -> bool:
    """One name word: what the reader takes as a fact's subject and a relation walk searches for
    next (the chapter's rule: "Project Falcon" is read, and searched, as "Falcon")."""
    return len(name.split()) == 1 and is_name(name)
