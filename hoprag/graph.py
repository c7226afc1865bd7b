"""The graph view: a per-caller entity graph whose edges remember their source document.

Permission and integrity are applied at construction -- only trusted documents the caller
may read contribute edges -- so the graph a caller walks never holds a fact it may not see.
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from .facts import Triple
from .verdict import Resolution, Verdict, resolve
from .walk import reach

Edge = tuple[str, str, str, str]  # (subject, relation, object, doc_id)


@dataclass
class Graph:
    """A provenance-bearing multigraph for one caller: edges kept in document order, and per entity
    the edges leaving it (plain lists: a walk needs nothing more, and they build in one pass)."""

    updated: dict[str, dt.date | None] = field(default_factory=dict)
    _edges: list[Edge] = field(default_factory=list)
    _out: dict[str, list[Edge]] = field(default_factory=dict)
    _nodes: Counter = field(default_factory=Counter)  # entity -> how many edge ends it is (a change moves it)

    def add(self, edge: Edge) -> None:
        self._edges.append(edge)
        self._out.setdefault(edge[0], []).append(edge)
        self._nodes.update(edge[:3:2])

    def edges(self) -> tuple[Edge, ...]:
        """Every edge in insertion (document) order."""
        return tuple(self._edges)

    def out(self, entity: str) -> list[Edge]:
        """Edges leaving ``entity`` in document order."""
        return list(self._out.get(entity, ()))

    def has(self, entity: str) -> bool:
        """Is ``entity`` a subject or object of some edge (spelled exactly so)?"""
        return entity in self._nodes

    def nodes(self) -> frozenset[str]:
        """Every entity the edges connect."""
        return frozenset(self._nodes)

    def node_count(self) -> int:
        """How many entities the edges connect."""
        return len(self._nodes)

    def edge_count(self) -> int:
        return len(self._edges)

    def amended(self, removed: set[str], added: Sequence[tuple[str, dt.date | None, Sequence[Triple]]],
                row: Callable[[str], int]) -> "Graph":
        """This graph without the edges of the ``removed`` documents and with those of ``added`` ones
        (``(doc id, updated, evidence)`` in document order), as :func:`build_graph` would build it from
        the result: every edge list stays in document order (``row``: a document's place in it). The
        lists of entities no edge of the change leaves are shared with this graph, not copied."""
        new = Graph()
        new.updated = dict(self.updated)
        for doc_id in removed:
            new.updated.pop(doc_id, None)
        incoming: list[Edge] = []
        for doc_id, updated, facts in added:
            new.updated[doc_id] = updated
            incoming += [(s, r, o, doc_id) for s, r, o in facts]
        gone = [e for e in self._edges if e[3] in removed] if removed else []
        new._edges = _merged([e for e in self._edges if e[3] not in removed] if gone else self._edges, incoming, row)
        new._out = dict(self._out)
        for entity in {e[0] for e in gone} | {e[0] for e in incoming}:
            mine = [e for e in self._out.get(entity, ()) if e[3] not in removed]
            merged = _merged(mine, [e for e in incoming if e[0] == entity], row)
            if merged:
                new._out[entity] = merged
            else:
                new._out.pop(entity, None)
        new._nodes = self._nodes.copy()
        new._nodes.update(x for e in incoming for x in e[:3:2])
        new._nodes.subtract(x for e in gone for x in e[:3:2])
        for x in {x for e in gone for x in e[:3:2]}:
            if new._nodes[x] <= 0:
                del new._nodes[x]
        return new


def _merged(edges: list[Edge], incoming: list[Edge], row: Callable[[str], int]) -> list[Edge]:
    """``edges`` and ``incoming`` (each in document order) as one list in document order."""
    if not incoming:
        return list(edges)
    out = list(edges)
    keys = _Rows(out, row)
    for edge in reversed(incoming):  # from the last, each before what it precedes (its own document's later edges)
        out.insert(bisect_left(keys, row(edge[3])), edge)
    return out


class _Rows(Sequence[int]):
    """The document row of each edge of a list, read only where a binary search looks."""

    def __init__(self, edges: list[Edge], row: Callable[[str], int]):
        self.edges, self.row = edges, row

    def __len__(self) -> int:
        return len(self.edges)

    def __getitem__(self, i):  # type: ignore[override]
        return self.row(self.edges[i][3])


def build_graph(stated: Iterable[tuple[str, dt.date | None, Sequence[Triple]]]) -> Graph:
    """Build a caller's graph from ``(doc id, updated, evidence)`` of each document with citable facts
    that they may read, in corpus order (the engine applies its permission check and the integrity
    gate to choose them)."""
    graph = Graph()
    for doc_id, updated, facts in stated:
        graph.updated[doc_id] = updated
        for s, r, o in facts:
            graph.add((s, r, o, doc_id))
    return graph


@dataclass(frozen=True)
class Walk:
    """A local-search outcome: the answer (``None`` if unreached or unresolved) and its path.

    ``resolution`` reports how competing goal edges at the final entity were settled.
    """

    answer: str | None
    path: tuple[Edge, ...]
    resolution: Resolution | None = None


def local_search(graph: Graph, start: str, goal: str, max_hops: int = 4) -> Walk:
    """Breadth-first walk from ``start`` to the first entity holding the ``goal`` relation.

    Paths are at most ``max_hops`` edges long. When that entity has several ``goal`` edges
    that disagree, the gate's freshness policy picks one, or the walk returns no answer.
    """
    found = reach(start, goal, graph.out, max_hops)
    if found.entity is None:
        return Walk(None, ())
    verdicts = [Verdict(e[3], True, True, (e[0], e[1], e[2]), "cite") for e in found.goals]
    res = resolve(verdicts, graph.updated)
    if res.answer is None:
        return Walk(None, found.path + found.goals, res)
    chosen = next(e for e in found.goals if e[2] == res.answer and e[3] in res.cited)
    return Walk(res.answer, found.path + (chosen,), res)


def relation_counts(graph: Graph) -> Counter:
    """How many edges of each relation the caller's graph holds (the corpus-scale inventory no walk gives)."""
    return Counter(r for (_, r, _, _) in graph.edges())
