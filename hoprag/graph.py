"""The graph view: a per-caller entity graph whose edges remember their source document.

Permission and integrity are applied at construction -- only trusted documents the caller
may read contribute edges -- so the graph a caller walks never holds a fact it may not see.
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from .facts import Triple
from .verdict import Resolution, Verdict, resolve
from .walk import Edge, in_order, reach, relation_graph

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True, eq=False)
class Graph:
    """A provenance-bearing multigraph for one caller: a networkx ``MultiDiGraph`` whose edges keep their
    document order (:func:`~hoprag.walk.relation_graph`), the date of each document stating one, and
    every edge in document order (``stated``: what :meth:`edges` returns and a change is merged into)."""

    g: nx.MultiDiGraph
    updated: Mapping[str, dt.date | None]
    stated: tuple[Edge, ...]

    def edges(self) -> tuple[Edge, ...]:
        """Every edge in insertion (document) order."""
        return self.stated

    @cached_property
    def relations(self) -> Counter[str]:
        """How many edges of each relation, first stated first (every ``graph_walk`` and overview reads it)."""
        return Counter(r for _, r, _, _ in self.stated)

    def has(self, entity: str) -> bool:
        """Is ``entity`` a subject or object of some edge (spelled exactly so)?"""
        return entity in self.g

    def nodes(self) -> frozenset[str]:
        """Every entity the edges connect."""
        return frozenset(self.g)

    def node_count(self) -> int:
        """How many entities the edges connect."""
        return self.g.number_of_nodes()

    def edge_count(self) -> int:
        return len(self.stated)

    def amended(self, removed: Mapping[str, Sequence[Triple]],
                added: Sequence[tuple[str, dt.date | None, Sequence[Triple]]], row: Callable[[str], int]) -> "Graph":
        """This graph without the edges of the ``removed`` documents (id -> the evidence it stated here) and
        with those of ``added`` ones (``(doc id, updated, evidence)``), as :func:`build_graph` would build it
        from the result: the same edges in the same order, the same keys, each entity's successors in the
        same order (what a walk reads); only the order networkx lists nodes and predecessors in may differ,
        which no tool reads. ``row``: a document's place in the new document order.

        This graph is not modified -- requests still walking it keep it whole -- and the new one shares
        the adjacency of every entity the change does not touch: a change costs one shallow copy of the
        node tables plus what it touches, where rebuilding costs every edge (≈ 3 µs each)."""
        gone = [(s, r, o, d) for d, facts in removed.items() for s, r, o in facts]
        incoming = [(s, r, o, d) for d, _, facts in added for s, r, o in facts]
        updated = dict(self.updated)
        for doc_id in removed:
            updated.pop(doc_id, None)
        updated.update((doc_id, date) for doc_id, date, _ in added)
        kept = [e for e in self.stated if e[3] not in removed] if removed else self.stated
        stated = tuple(_merged(kept, incoming, row))
        g = self.g
        node, succ, pred = dict(g._node), dict(g._succ), dict(g._pred)  # shallow: untouched entities shared
        copied: set[str] = set()

        def predecessors(v: str) -> dict:
            if v not in copied:
                copied.add(v)
                pred[v] = dict(pred.get(v, {}))
            return pred[v]

        by_subject: dict[str, list[Edge]] = defaultdict(list)
        for e in incoming:
            by_subject[e[0]].append(e)
        for u in {e[0] for e in gone} | by_subject.keys():
            mine = [e for e in in_order(g.out_edges(u, keys=True, data=True)) if e[3] not in removed] if u in g else []
            out: dict[str, dict[int, dict[str, str]]] = {}
            for key, (_, r, o, d) in enumerate(_merged(mine, by_subject.get(u, []), row)):
                out.setdefault(o, {})[key] = {"relation": r, "doc": d}  # keyed as relation_graph keys
            for v in succ.get(u, {}).keys() | out.keys():
                if v in out:
                    predecessors(v)[u] = out[v]  # the key dict is shared by both directions, as networkx holds it
                else:
                    predecessors(v).pop(u, None)
            succ[u] = out
        for x in {x for e in gone + incoming for x in (e[0], e[2])}:
            if succ.get(x) or pred.get(x):
                if x not in node:
                    node[x] = {}
                succ.setdefault(x, {})
                pred.setdefault(x, {})
            else:
                for table in (node, succ, pred):
                    table.pop(x, None)
        new = type(g)()
        new._node, new._adj, new._pred = node, succ, pred  # networkx's descriptors reset its cached views
        return Graph(new, updated, stated)


def _merged(edges: Sequence[Edge], incoming: list[Edge], row: Callable[[str], int]) -> list[Edge]:
    """``edges`` and ``incoming`` (each in document order; no document in both) as one list in document order."""
    out = list(edges)
    if incoming:
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
    updated: dict[str, dt.date | None] = {}
    edges: list[Edge] = []
    for doc_id, date, facts in stated:
        updated[doc_id] = date
        edges += [(s, r, o, doc_id) for s, r, o in facts]
    return Graph(relation_graph(edges), updated, tuple(edges))


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
    found = reach(graph.g, start, goal, max_hops)
    if found.entity is None:
        return Walk(None, ())
    verdicts = [Verdict(e[3], True, True, (e[0], e[1], e[2]), "cite") for e in found.goals]
    res = resolve(verdicts, graph.updated)
    if res.answer is None:
        return Walk(None, found.path + found.goals, res)
    chosen = next(e for e in found.goals if e[2] == res.answer and e[3] in res.cited)
    return Walk(res.answer, found.path + (chosen,), res)


def relation_counts(graph: Graph) -> Counter[str]:
    """How many edges of each relation the caller's graph holds (the corpus-scale inventory no walk gives)."""
    return Counter(graph.relations)
