"""What is contested in one caller's view: each fact's standing under the freshness policy.

Retrieval decides what a caller happens to read; this decides, over the caller's *whole* view,
whether a fact may be cited. It is the policy ``graph_walk`` applies (:func:`hoprag.verdict.resolve`:
the newest ``updated`` wins, equal dates stay unresolved), run over every ``(subject, relation)``
the caller's graph states with more than one object. The graph holds only trusted documents the
caller may read, so an untrusted document never wins and an unreadable one is never named,
counted or hinted at: for that caller, the readable fact simply stands.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .facts import Triple
from .verdict import Verdict, resolve

CURRENT, SUPERSEDED, UNRESOLVED = "current", "superseded", "unresolved"


@dataclass(frozen=True)
class Claim:
    """One fact of one document and its standing in the caller's view.

    ``superseded_by``: the newest documents stating this subject and relation (a superseded fact
    only); ``conflicts_with``: the equally recent documents that state another object (an
    unresolved fact only). Both hold only ids the caller may read, sorted.
    """

    subject: str
    relation: str
    object: str
    status: str = CURRENT
    superseded_by: tuple[str, ...] = ()
    conflicts_with: tuple[str, ...] = ()


class Claims:
    """The contested facts of one caller's graph (built once per group set, like the graph)."""

    def __init__(self, stated: Iterable[tuple[str, dt.date | None, Sequence[Triple]]]):
        """``stated``: ``(doc id, updated, evidence)`` of each document of the caller's graph
        (``Engine._stated``)."""
        pairs_of: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
        updated: dict[str, dt.date | None] = {}
        for doc_id, date, facts in stated:
            updated[doc_id] = date
            for s, r, o in facts:
                pairs_of[(s, r)].add((o, doc_id))
        self._contested: dict[tuple[str, str, str, str], Claim] = {}
        for (s, r), pairs in pairs_of.items():
            if len({o for o, _ in pairs}) > 1:
                self._settle(s, r, sorted(pairs), updated)

    def _settle(self, s: str, r: str, pairs: list[tuple[str, str]], updated: Mapping[str, dt.date | None]) -> None:
        res = resolve([Verdict(d, True, True, (s, r, o), "cite") for o, d in pairs], updated)
        newest = tuple(sorted(set(res.cited)))
        for o, d in pairs:
            if res.status == "newest" and o == res.answer:
                continue  # the winner, or an older source agreeing with it: current
            if res.status == "unresolved" and d in newest:
                rivals = tuple(sorted({d2 for o2, d2 in pairs if d2 in newest and o2 != o}))
                self._contested[(s, r, o, d)] = Claim(s, r, o, UNRESOLVED, conflicts_with=rivals)
            else:
                self._contested[(s, r, o, d)] = Claim(s, r, o, SUPERSEDED, superseded_by=newest)

    def of(self, doc_id: str, fact: Triple) -> Claim:
        """The standing of ``fact`` as stated by ``doc_id`` (``current`` unless contested)."""
        return self._contested.get((*fact, doc_id)) or Claim(*fact)

    def __len__(self) -> int:
        """How many (fact, document) pairs are contested."""
        return len(self._contested)
