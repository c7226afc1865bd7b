"""Retrieval strategies compared by the benchmark: the product's own search, walker and graph.

Nothing here ranks, weighs or walks by itself: each strategy is a few calls into the engine's
public API (:mod:`hoprag.search`, :mod:`hoprag.walk`, :mod:`hoprag.entities`), and none calls an
LLM or sees gold labels. A strategy maps a question and its :class:`Tools` (the caller's view and
a search that spends the product's :class:`~hoprag.walk.Budget`) to ranked passage ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from hoprag.corpus import Doc
from hoprag.search import View
from hoprag.walk import Budget, BudgetExceeded, Search, bridge_walk

__all__ = ["STRATEGIES", "BudgetExceeded", "Strategy", "Tools", "agentic", "bm25", "bm25_titles", "graph"]


class Tools:
    """What a strategy may use for one question: the caller's view and a budgeted search.

    ``search`` defaults to the view's own ranking; the MCP equivalence test passes a search that
    goes through the real server instead, so the same steps can be compared hop by hop.
    """

    def __init__(self, view: View, budget: int, search: Search | None = None):
        self.view, self.budget = view, Budget(budget)
        self.raw: Search = search or (lambda query, k: [h.doc for h in view.search(query, k)])

    @property
    def searches(self) -> int:
        return self.budget.used

    def search(self, query: str, k: int = 10) -> Sequence[Doc]:
        """One search; raises :class:`BudgetExceeded` past the budget."""
        self.budget.spend()
        return self.raw(query, k)


@dataclass(frozen=True)
class Strategy:
    """A strategy and the ranker its searches use (``bm25`` plain, ``bm25-titles`` title-aware)."""

    ranker: str
    run: Callable[[str, Tools], Sequence[str]]


def bm25(question: str, tools: Tools, k: int = 10) -> list[str]:
    """Conventional RAG: one search with the question (served by the plain ``bm25`` ranker)."""
    return [d.id for d in tools.search(question, k)]


bm25_titles = bm25  # the same single search, served by the title-aware ranker


def agentic(question: str, tools: Tools, k: int = 10) -> list[str]:
    """The product's bridge walk (:func:`hoprag.walk.bridge_walk`) within the tools' budget."""
    return bridge_walk(question, tools.raw, tools.view, tools.budget, k).ranked


def graph(question: str, tools: Tools, k: int = 10) -> list[str]:
    """Personalised PageRank over the caller's mention graph, seeded by the question's entities
    and the best passage of one title-aware search (:meth:`hoprag.entities.EntityView.pagerank`)."""
    seeds = [d.id for d in tools.search(question, 1)]
    return [doc_id for doc_id, _ in tools.view.entities.pagerank(question, seeds, k)]


STRATEGIES: dict[str, Strategy] = {
    "bm25": Strategy("bm25", bm25),
    "bm25-titles": Strategy("bm25-titles", bm25_titles),
    "agentic": Strategy("bm25-titles", agentic),
    "graph": Strategy("bm25-titles", graph),
}
