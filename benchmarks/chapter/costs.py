"""Token costs of long context, RAG and cache-augmented generation (chapter section 15.8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from hoprag.corpus import Doc
from hoprag.tokens import token_count


@dataclass(frozen=True)
class ContextCosts:
    """Prompt tokens per query for each context strategy, for one caller and question."""

    authorized_docs: int
    corpus_tokens: int
    question_tokens: int
    long_context: int
    rag: int
    rag_ids: tuple[str, ...]
    cag_prefill: int
    cag_per_query: int


def context_costs(authorized: Sequence[Doc], question: str, retrieved: Sequence[Doc]) -> ContextCosts:
    """Compare strategies: all authorized trusted docs every query, a retrieved set, or a cached corpus."""
    corpus_tokens = sum(token_count(d.text) for d in authorized)
    qt = token_count(question)
    rag_tokens = sum(token_count(d.text) for d in retrieved)
    return ContextCosts(len(authorized), corpus_tokens, qt, corpus_tokens + qt, rag_tokens + qt,
                        tuple(d.id for d in retrieved), corpus_tokens, qt)


def utilization(position: int, n: int) -> float:
    """An illustrative lost-in-the-middle curve (Liu et al. 2024): 1.0 at the ends, 0.5 mid-window."""
    x = position / (n - 1) if n > 1 else 0.0
    return 1.0 - 0.5 * (1 - abs(2 * x - 1)) ** 1.5

