"""The chapter's two retrieval loops over an engine: the one-shot baseline and the agentic loop.

Both are the chapter's (sections 15.2-15.4) over an :class:`~hoprag.engine.Engine`, so they
run on any corpus and every ranker; both walk through :mod:`hoprag.walk`. Only the chapter's
benchmark and its tests run them: the product's loop is the agent's.
"""

from __future__ import annotations

from dataclasses import dataclass

from hoprag.engine import Engine
from hoprag.text import is_entity
from hoprag.walk import DEFAULT_BUDGET, Budget, Frontier, edges_of_table, reach, relation_graph


@dataclass(frozen=True)
class Result:
    """The outcome of a retrieval strategy, with cost counters and a trace."""

    answer: str | None
    docs_read: int
    searches: int
    trace: tuple[str, ...]


def one_shot(engine: Engine, query: str, groups: frozenset[str], start: str, goal: str, k: int = 3) -> Result:
    """Retrieve ``k`` documents once, then chain within them (conventional RAG).

    It resolves a multi-hop chain only if every needed document lands in the top ``k``.
    """
    hits = engine.search_docs(query, groups, k)
    admitted, _ = engine.admit(hits)
    table = engine.table(admitted)
    trace = [f"search(k={k}) -> {[d.id for d in hits]}"]
    found = reach(relation_graph(edges_of_table(table)), start, goal, max_hops=6)
    if found.entity is not None:
        _, _, obj, did = found.goals[0]
        trace.append(f"answer: {found.entity} {goal} {obj} [{did}]")
        return Result(obj, len(hits), 1, tuple(trace))
    trace.append("abstain: chain not in fixed context")
    return Result(None, len(hits), 1, tuple(trace))


def agentic(engine: Engine, query: str, groups: frozenset[str], start: str, goal: str,
            budget: int = DEFAULT_BUDGET, k: int = 2) -> Result:
    """Let each observation choose the next retrieval, within a hard search budget.

    Search the current entity, admit only trusted passages, read their triples; the goal
    relation answers, otherwise newly discovered entities are queued as the next searches.
    ``query`` is kept for the caller's records; the searches use entity names only.
    """
    frontier: Frontier[str, None] = Frontier()
    frontier.offer(start, None)
    spent = Budget(budget)
    docs_read, trace = 0, [f"plan: reach '{goal}' from '{start}'"]
    while frontier and not spent.exhausted:
        entity, _ = frontier.pop()
        spent.spend()
        hits = engine.search_docs(entity, groups, k)
        admitted, dropped = engine.admit(hits)
        docs_read += len(hits)
        trace.append(f"search({entity}) -> {[d.id for d in hits]}"
                     + (f" (dropped untrusted {dropped})" if dropped else ""))
        table = engine.table(admitted)
        if (entity, goal) in table:
            obj, did = table[(entity, goal)][0]
            trace.append(f"read: {entity} {goal} {obj} [{did}]")
            return Result(obj, docs_read, spent.used, tuple(trace))
        for (s, r), lst in table.items():
            if s == entity:
                for o, _ in lst:
                    if is_entity(o) and frontier.offer(o, None):
                        trace.append(f"refine: {entity} {r} {o} -> queue search({o})")
    trace.append("stop: budget exhausted" if spent.exhausted else "abstain")
    return Result(None, docs_read, spent.used, tuple(trace))
