"""The chapter's sweeps (fig. 15.2 and the budget knee) over the library strategies."""

from __future__ import annotations

from dataclasses import dataclass

from hoprag.engine import Engine
from hoprag.questions import Question, score
from benchmarks.chapter.loops import agentic, one_shot


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
