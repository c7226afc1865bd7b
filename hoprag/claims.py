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
        self.updated: dict[str, dt.date | None] = {}
        for doc_id, date, facts in stated:
            self.updated[doc_id] = date
            for s, r, o in facts:
                pairs_of[(s, r)].add((o, doc_id))
        #: (subject, relation) -> its (object, doc id) pairs: what a change settles a pair again from
        self._pairs: dict[tuple[str, str], frozenset[tuple[str, str]]] = {k: frozenset(v) for k, v in pairs_of.items()}
        self._contested: dict[tuple[str, str, str, str], Claim] = {}
        for (s, r), pairs in self._pairs.items():
            if len({o for o, _ in pairs}) > 1:
                self._settle(s, r, sorted(pairs), self.updated)

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

    def amended(self, removed: Mapping[str, Sequence[Triple]],
                added: Sequence[tuple[str, dt.date | None, Sequence[Triple]]]) -> "Claims":
        """These claims without the facts of the ``removed`` documents (id -> the evidence it stated here)
        and with those of ``added`` ones (``(doc id, updated, evidence)``), as built from the result: only
        the ``(subject, relation)`` pairs the change states are settled again, every other standing is
        carried over. These claims are not modified (requests still reading them keep them whole)."""
        new = Claims.__new__(Claims)
        new.updated = dict(self.updated)
        for doc_id in removed:
            new.updated.pop(doc_id, None)
        new.updated.update((doc_id, date) for doc_id, date, _ in added)
        moved: dict[tuple[str, str], set[tuple[str, str]]] = {}

        def pairs(key: tuple[str, str]) -> set[tuple[str, str]]:
            if key not in moved:
                moved[key] = set(self._pairs.get(key, ()))
            return moved[key]

        for doc_id, facts in removed.items():
            for s, r, o in facts:
                pairs((s, r)).discard((o, doc_id))
        for doc_id, _, facts in added:
            for s, r, o in facts:
                pairs((s, r)).add((o, doc_id))
        new._pairs = dict(self._pairs)
        new._contested = {k: c for k, c in self._contested.items() if k[:2] not in moved}
        for (s, r), now in moved.items():
            if now:
                new._pairs[(s, r)] = frozenset(now)
            else:
                new._pairs.pop((s, r), None)
            if len({o for o, _ in now}) > 1:
                new._settle(s, r, sorted(now), new.updated)
        return new

    def of(self, doc_id: str, fact: Triple) -> Claim:
        """The standing of ``fact`` as stated by ``doc_id`` (``current`` unless contested)."""
        return self._contested.get((*fact, doc_id)) or Claim(*fact)

    def __len__(self) -> int:
        """How many (fact, document) pairs are contested."""
        return len(self._contested)
