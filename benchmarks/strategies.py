"""Retrieval strategies compared by the benchmark; none calls an LLM or sees gold labels.

A strategy maps a question and its :class:`Tools` (the corpus index plus a search tool that
counts calls and refuses to exceed the budget) to ranked passage ids.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Sequence

import numpy as np

from .index import BenchIndex, Scored, is_name, norm


class BudgetExceeded(RuntimeError):
    """A strategy asked for more searches than its budget allows."""


class Tools:
    """What a strategy may use for one question: the index and a budgeted search."""

    def __init__(self, index: BenchIndex, budget: int):
        self.index, self.budget, self.searches = index, budget, 0

    @property
    def remaining(self) -> int:
        return self.budget - self.searches

    def search(self, query: str, k: int = 10, titles: bool = True) -> list[Scored]:
        """One search (see :meth:`BenchIndex.search`); raises :class:`BudgetExceeded` past the budget."""
        if self.searches >= self.budget:
            raise BudgetExceeded(f"search budget of {self.budget} exhausted")
        self.searches += 1
        return self.index.search(query, k, titles)


Strategy = Callable[[str, Tools], Sequence[str]]


def bm25(question: str, tools: Tools, k: int = 10) -> list[str]:
    """Conventional RAG: one plain BM25 search with the question."""
    return [h.doc.id for h in tools.search(question, k, titles=False)]


def bm25_titles(question: str, tools: Tools, k: int = 10) -> list[str]:
    """One title-aware search: isolates what title matching alone adds to BM25."""
    return [h.doc.id for h in tools.search(question, k)]


def bridges(question: str, read: Sequence[Scored], index: BenchIndex, skip: set[str],
            named: str = "") -> dict[str, tuple[float, str]]:
    """Entities of the passages just read that could lead to the next hop: ``key -> (score, name)``.

    A bridge is a proper name absent from the question (and from ``named``, the entity that led
    here), that at least one other passage mentions; its score is how much of the question the
    triple or sentence stating it covers (IDF-weighted), discounted by the passage's rank:
    "Journal of Psychotherapy Integration -- published by -> American Psychological Association".
    """
    asked = set(index.content(question))
    old = asked | set(index.content(named))
    best: dict[str, tuple[float, str]] = {}
    for rank, hit in enumerate(read):
        for surface, context in index.units[index.row[hit.doc.id]]:
            key = norm(surface)
            if key in skip or not is_name(surface) or not set(index.content(surface)) - old:
                continue
            if index.spread_of(surface) < 2:
                continue
            score = index.weight(set(index.content(context)) & asked) / (1 + rank)
            if key not in best or score > best[key][0]:
                best[key] = (score, surface)
    return best


def residual(question: str, read: Sequence[Scored], index: BenchIndex) -> str:
    """The question's content words the passages read so far do not contain: what is still asked."""
    seen = {t for h in read for t in index.content(f"{h.doc.title} {h.doc.text}")}
    return " ".join(t for t in index.content(question) if t not in seen)


def fuse(lists: Sequence[Sequence[str]], c: int = 60) -> list[str]:
    """Each search's best passage not yet taken (one per hop, in search order), then the rest by
    reciprocal-rank fusion. Plain RRF interleaves a hop's runners-up ahead of the next hop's answer."""
    head: list[str] = []
    for ranked in lists:
        new = next((i for i in ranked if i not in head), None)
        if new is not None:
            head.append(new)
    rrf: dict[str, float] = defaultdict(float)
    for ranked in lists:
        for r, i in enumerate(ranked):
            rrf[i] += 1 / (c + r + 1)
    return head + sorted((i for i in rrf if i not in head), key=lambda i: -rrf[i])


def agentic(question: str, tools: Tools, k: int = 10, read: int = 2, discount: float = 0.5) -> list[str]:
    """The chapter's loop (section 15.3) without an LLM: each read chooses the next query.

    Search the question and read the top ``read`` passages' triples: their bridge entities form a
    frontier. While budget remains, search the best frontier entity together with the part of the
    question its chain of passages leaves unexplained, read the best new passage, and add its own
    bridges (scores times ``discount`` per hop). A best-first frontier lets a strong second
    candidate of the first hop (a hedge) compete with the next hop of a chain.
    """
    index = tools.index
    first = tools.search(question, k)
    lists = [[h.doc.id for h in first]]
    start = first[:1]
    frontier = {key: (score, name, start) for key, (score, name) in bridges(question, first[:read], index, set()).items()}
    done: set[str] = set()
    while frontier and tools.remaining > 0:
        key = max(frontier, key=lambda x: frontier[x][0])
        _, name, chain = frontier.pop(key)
        done.add(key)
        hits = tools.search(f"{name} {residual(question, chain, index)}", k)
        lists.append([h.doc.id for h in hits])
        seen = {h.doc.id for h in chain}
        new = next((h for h in hits if h.doc.id not in seen), None)
        if new is None:
            continue
        for nxt, (score, onward) in bridges(question, [new], index, done, named=name).items():
            if nxt not in frontier or discount * score > frontier[nxt][0]:
                frontier[nxt] = (discount * score, onward, chain + [new])
    return fuse(lists)


def graph(question: str, tools: Tools, k: int = 10, alpha: float = 0.5, iterations: int = 15) -> list[str]:
    """Personalised PageRank over the passage-entity mention graph (HippoRAG-style, no LLM).

    Restart mass is split between the question's entities (each weighted by 1/spread, so rare
    names dominate) and the best passage of one title-aware search; passages are ranked by the
    mass they hold. Sparse power iteration over ~20k nodes takes a few milliseconds.
    """
    index = tools.index
    hits = tools.search(question, 1)
    to_entity, to_passage = index.walk
    n_p, n_e = to_entity.shape[1], to_passage.shape[1]
    seed_p, seed_e = np.zeros(n_p), np.zeros(n_e)
    if hits:
        seed_p[index.row[hits[0].doc.id]] = 1.0
    for j in index.entities_in(question):
        seed_e[j] = 1.0 / max(index.spread[j], 1)
    if seed_e.sum():
        seed_e /= seed_e.sum()
    total = seed_p.sum() + seed_e.sum()
    if not total:
        return []
    seed_p, seed_e = seed_p / total, seed_e / total
    p, e = seed_p, seed_e
    for _ in range(iterations):
        p, e = (1 - alpha) * (to_passage @ e) + alpha * seed_p, (1 - alpha) * (to_entity @ p) + alpha * seed_e
    order = np.lexsort((np.arange(n_p), -p))[:k]
    return [index.docs[i].id for i in order if p[i] > 0]


STRATEGIES: dict[str, Strategy] = {"bm25": bm25, "bm25-titles": bm25_titles, "agentic": agentic, "graph": graph}
