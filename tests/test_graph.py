"""The graphs on networkx and SciPy walk exactly as the plain algorithms they stand for.

``reach`` (networkx's breadth-first search over a multigraph) is checked against a breadth-first walk
over per-entity edge lists in document order -- the first path to an entity and the goal edges in the
order the documents state them decide which fact a walk cites. ``EntityView.pagerank`` computes only
the alternate chain of steps that ends on passages; it is checked against both vectors stepped in
full, digit for digit.
"""

from __future__ import annotations

import json
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from benchmarks import synthetic
from conftest import examples
from hoprag.engine import Engine
from hoprag.graph import build_graph, relation_counts
from hoprag.walk import Edge, reach, relation_graph

ENTITIES, RELATIONS, DOCS = "ABCDEF", "rst", ("d1", "d2", "d3")
edge = st.tuples(st.sampled_from(ENTITIES), st.sampled_from(RELATIONS), st.sampled_from(ENTITIES), st.sampled_from(DOCS))


def plain_reach(edges: list[Edge], start: str, goal: str, max_hops: int | None):
    """Breadth-first over each entity's edges in document order: an entity's first path wins."""
    out: dict[str, list[Edge]] = {}
    for e in edges:
        out.setdefault(e[0], []).append(e)
    paths, queue = {start: ()}, deque([start])
    while queue:
        entity = queue.popleft()
        goals = tuple(e for e in out.get(entity, ()) if e[1] == goal)
        if goals:
            return entity, paths[entity], goals, None
        if max_hops is not None and len(paths[entity]) + 1 >= max_hops:
            continue
        for e in out.get(entity, ()):
            if e[2] not in paths:
                paths[e[2]] = paths[entity] + (e,)
                queue.append(e[2])
    return None, (), (), tuple(paths)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(edge, max_size=30), st.sampled_from(ENTITIES + "Z"), st.sampled_from(RELATIONS),
       st.one_of(st.none(), st.integers(0, 5)))
def test_reach_walks_breadth_first_in_document_order(edges, start, goal, max_hops):
    found = reach(relation_graph(edges), start, goal, max_hops)
    entity, path, goals, order = plain_reach(edges, start, goal, max_hops)
    assert (found.entity, found.path, found.goals) == (entity, path, goals)
    if entity is None:  # all it reached: the agent's candidates for the next gap, in discovery order
        assert found.order == order


@given(st.lists(st.tuples(st.sampled_from(DOCS), st.lists(st.tuples(*[st.sampled_from(ENTITIES)] * 3), max_size=4)),
                max_size=6, unique_by=lambda d: d[0]))
def test_a_graph_keeps_document_order_and_counts(stated):
    graph = build_graph((doc, None, facts) for doc, facts in stated)
    edges = tuple((s, r, o, doc) for doc, facts in stated for s, r, o in facts)
    assert graph.edges() == edges
    counts: dict[str, int] = {}
    for _, r, _, _ in edges:
        counts[r] = counts.get(r, 0) + 1
    assert list(relation_counts(graph).items()) == list(counts.items())  # ties in most_common: first stated first
    assert graph.edge_count() == len(edges)
    assert graph.nodes() == {x for s, _, o, _ in edges for x in (s, o)} and graph.node_count() == len(graph.nodes())
    assert set(graph.updated) == {doc for doc, _ in stated}


def full_steps(view, question: str, seeds: list[str], k: int, alpha: float, iterations: int) -> list[tuple[str, float]]:
    """Both the passage and the entity vector stepped every iteration, every passage sorted."""
    to_entity, to_passage = view.walk
    seed_p, seed_e = np.zeros(to_entity.shape[1]), np.zeros(to_passage.shape[1])
    for doc_id in seeds:
        seed_p[view.local(view.index.docs.row(doc_id))] = 1.0
    for j in view.index.entities_in(question):
        if view.spread[j]:
            seed_e[j] = 1.0 / view.spread[j]
    if seed_e.sum():
        seed_e /= seed_e.sum()
    total = seed_p.sum() + seed_e.sum()
    if not total:
        return []
    seed_p, seed_e = seed_p / total, seed_e / total
    p, e = seed_p, seed_e
    for _ in range(iterations):
        p, e = (1 - alpha) * (to_passage @ e) + alpha * seed_p, (1 - alpha) * (to_entity @ p) + alpha * seed_e
    p = np.round(p, 12)
    order = np.lexsort((np.arange(len(p)), -p))[:k]
    return [(view.index.docs.ids[int(view.rows[i])], float(p[i])) for i in order if p[i] > 0]


@pytest.fixture(scope="module")
def synthetic_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, list[str]]:
    corpus = synthetic.write(tmp_path_factory.mktemp("synthetic"), 1500)
    return Engine.load(corpus), json.loads((corpus.parent / "queries.json").read_text())


@pytest.mark.parametrize("iterations", [0, 1, 14, 15])
def test_pagerank_equals_stepping_both_vectors(synthetic_corpus, iterations):
    engine, queries = synthetic_corpus
    for groups in (frozenset({"engineering"}), frozenset({"finance"})):
        view = engine.view(groups).entities
        for query in queries[:40]:
            seeds = [h.doc.id for h in engine.search(query, groups, 1)]
            for k in (1, 3, 10, 10_000):
                assert view.pagerank(query, seeds, k, iterations=iterations) == \
                    full_steps(view, query, seeds, k, 0.5, iterations), (query, k)


def adjacency(graph) -> dict[str, list]:
    """What a walk reads of a relation graph: each entity's successors in networkx's order, with their keyed edges."""
    return {u: [(v, sorted((k, d["relation"], d["doc"]) for k, d in keyed.items())) for v, keyed in graph.g.succ[u].items()]
            for u in graph.g}


ALL_DOCS = tuple(f"d{i}" for i in range(8))
doc_facts = st.lists(st.tuples(*[st.sampled_from(ENTITIES)] * 2, st.sampled_from(ENTITIES)).map(
    lambda t: (t[0], "rst"[ord(t[1]) % 3], t[2])), max_size=4)


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.sampled_from(ALL_DOCS), doc_facts, max_size=6), st.sets(st.sampled_from(ALL_DOCS)),
       st.dictionaries(st.sampled_from(ALL_DOCS), doc_facts, max_size=4))
def test_an_amended_graph_is_the_graph_built_from_the_result(before, removed, added):
    """Documents removed (or changed: removed and added) and added by a change: the amended graph walks,
    counts and lists exactly as one built from the final documents, and the graph it came from is untouched."""
    removed = {d for d in removed if d in before} | {d for d in added if d in before}
    after = {d: f for d, f in before.items() if d not in removed} | added
    old = build_graph((d, None, before[d]) for d in sorted(before))
    def held(graph) -> tuple:
        return graph.edges(), adjacency(graph), {v: sorted(graph.g.pred[v]) for v in graph.g}

    was = held(old)
    got = old.amended({d: before[d] for d in removed}, [(d, None, added[d]) for d in sorted(added)],
                      lambda d: sorted(after).index(d))
    want = build_graph((d, None, after[d]) for d in sorted(after))
    assert got.edges() == want.edges() and adjacency(got) == adjacency(want)
    assert list(got.relations.items()) == list(want.relations.items())
    assert got.nodes() == want.nodes() and got.node_count() == want.node_count() and dict(got.updated) == dict(want.updated)
    for start in ENTITIES:
        for goal in RELATIONS:
            assert reach(got.g, start, goal) == reach(want.g, start, goal)
    assert held(old) == was
    assert {v: sorted(got.g.pred[v]) for v in got.g} == {v: sorted(want.g.pred[v]) for v in want.g}
