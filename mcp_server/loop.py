"""Retrieval strategies as library functions: the one-shot baseline and the agentic loop.

Both are the chapter's (sections 15.2-15.4) over an :class:`~mcp_server.engine.Engine`, so they
run on any corpus and either ranker. The labelled question set is data, loaded from a corpus's
``questions.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .access import Access
from .engine import Engine


@dataclass(frozen=True)
class Result:
    """The outcome of a retrieval strategy, with cost counters and a trace."""

    answer: str | None
    docs_read: int
    searches: int
    trace: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    """A labelled question: who asks, where the walk starts, which relation answers it.

    ``expected`` is ``None`` when the correct behaviour is to abstain.
    """

    id: str
    text: str
    groups: frozenset[str]
    start: str
    goal: str
    expected: str | None


def load_questions(path: str | Path, access: Access) -> tuple[Question, ...]:
    """Read ``questions.yaml``; each question names a principal of the access file."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return tuple(
        Question(q["id"], q["text"], access.principal(q["principal"]).groups, q["start"], q["goal"], q.get("expected"))
        for q in data["questions"]
    )


def score(answer: str | None, expected: str | None) -> bool:
    """True when a required abstention held or the answer matched."""
    return answer is None if expected is None else answer == expected


def one_shot(engine: Engine, query: str, groups: frozenset[str], start: str, goal: str, k: int = 3) -> Result:
    """Retrieve ``k`` documents once, then chain within them (conventional RAG).

    It resolves a multi-hop chain only if every needed document lands in the top ``k``.
    """
    hits = engine.search_docs(query, groups, k)
    admitted, _ = engine.admit(hits)
    table = engine.table(admitted)
    trace = [f"search(k={k}) -> {[d.id for d in hits]}"]
    frontier, seen = [start], {start}
    for _ in range(6):
        nxt: list[str] = []
        for e in frontier:
            if (e, goal) in table:
                obj, did = table[(e, goal)][0]
                trace.append(f"answer: {e} {goal} {obj} [{did}]")
                return Result(obj, len(hits), 1, tuple(trace))
            for (s, _r), lst in table.items():
                if s == e:
                    for o, _ in lst:
                        if o not in seen:
                            seen.add(o)
                            nxt.append(o)
        frontier = nxt
        if not frontier:
            break
    trace.append("abstain: chain not in fixed context")
    return Result(None, len(hits), 1, tuple(trace))


def is_entity(name: str) -> bool:
    """A discovered object worth searching for: one capitalised token (the chapter's rule)."""
    return len(name.split()) == 1 and name[:1].isupper()


def agentic(engine: Engine, query: str, groups: frozenset[str], start: str, goal: str,
            budget: int = 4, k: int = 2) -> Result:
    """Let each observation choose the next retrieval, within a hard search budget.

    Search the current entity, admit only trusted passages, read their triples; the goal
    relation answers, otherwise newly discovered entities are queued as the next searches.
    ``query`` is kept for the caller's records; the searches use entity names only.
    """
    frontier, seen = [start], {start}
    docs_read, searches, trace = 0, 0, [f"plan: reach '{goal}' from '{start}'"]
    while frontier and searches < budget:
        entity = frontier.pop(0)
        hits = engine.search_docs(entity, groups, k)
        searches += 1
        admitted, dropped = engine.admit(hits)
        docs_read += len(hits)
        trace.append(f"search({entity}) -> {[d.id for d in hits]}"
                     + (f" (dropped untrusted {dropped})" if dropped else ""))
        table = engine.table(admitted)
        if (entity, goal) in table:
            obj, did = table[(entity, goal)][0]
            trace.append(f"read: {entity} {goal} {obj} [{did}]")
            return Result(obj, docs_read, searches, tuple(trace))
        for (s, r), lst in table.items():
            if s == entity:
                for o, _ in lst:
                    if o not in seen and is_entity(o):
                        seen.add(o)
                        frontier.append(o)
                        trace.append(f"refine: {entity} {r} {o} -> queue search({o})")
    trace.append("stop: budget exhausted" if searches >= budget else "abstain")
    return Result(None, docs_read, searches, tuple(trace))


@dataclass(frozen=True)
class Point:
    """One operating point of a strategy over a question set."""

    accuracy: float
    mean_docs: float
    mean_calls: float


def evaluate(engine: Engine, questions: tuple[Question, ...], strategy: str, **params: int) -> Point:
    """Run ``one_shot`` or ``agentic`` over every question and average accuracy and cost."""
    run = {"one_shot": one_shot, "agentic": agentic}[strategy]
    results = [(run(engine, q.text, q.groups, q.start, q.goal, **params), q.expected) for q in questions]
    n = len(results)
    return Point(sum(score(r.answer, e) for r, e in results) / n,
                 sum(r.docs_read for r, _ in results) / n,
                 sum(r.searches for r, _ in results) / n)


def k_sweep(engine: Engine, questions: tuple[Question, ...], ks: range = range(1, 9)) -> dict[int, Point]:
    """One-shot's quality-cost frontier: accuracy against mean documents read, per ``k``."""
    return {k: evaluate(engine, questions, "one_shot", k=k) for k in ks}


def budget_sweep(engine: Engine, questions: tuple[Question, ...], budgets: tuple[int, ...] = (1, 2, 3, 4)) -> dict[int, Point]:
    """The loop's accuracy and mean calls against its search budget."""
    return {b: evaluate(engine, questions, "agentic", budget=b) for b in budgets}


def knee(sweep: dict[int, Point]) -> int:
    """The smallest budget that reaches the sweep's best accuracy (the operating point)."""
    best = max(p.accuracy for p in sweep.values())
    return min(b for b, p in sweep.items() if p.accuracy == best)
