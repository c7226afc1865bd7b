"""The graph view: a per-caller entity graph whose edges remember their source document.

Permission and integrity are applied at construction -- only trusted documents the caller
may read contribute edges -- so the graph a caller walks never holds a fact it may not see.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

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
    _nodes: set[str] = field(default_factory=set)

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
