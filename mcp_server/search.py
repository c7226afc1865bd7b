"""Permission-aware search: authorization selects the view *before* anything is scored.

Each distinct set of caller groups gets its own view of the corpus with its own index, so an
unauthorized document is never scored, ranked or counted, not even in BM25's document
frequencies (a physically partitioned index, built lazily and cached).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Sequence

import bm25s
import numpy as np
from scipy import sparse

from .cache import Lru
from .corpus import Doc
from .tokens import tokenize

RANKERS = ("bm25", "overlap")


@dataclass(frozen=True)
class Hit:
    """One ranked result."""

    doc: Doc
    score: float


class _Scorer:
    """Scores the documents of one view; subclasses own the index structure."""

    def scores(self, query_tokens: list[str]) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


class _Overlap(_Scorer):
    """The chapter's score: how many of a document's tokens appear in the query (frequency-weighted)."""

    def __init__(self, matrix: sparse.csc_matrix, vocab: dict[str, int]):
        self.matrix, self.vocab = matrix, vocab

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        cols = sorted({self.vocab[t] for t in query_tokens if t in self.vocab})
        if not cols:
            return np.zeros(self.matrix.shape[0])
        return np.asarray(self.matrix[:, cols].sum(axis=1), dtype=np.float64).ravel()


class _BM25(_Scorer):
    """Okapi BM25 (bm25s, Lucene variant) with statistics from this view's documents only."""

    def __init__(self, token_lists: list[list[str]]):
        self.model = bm25s.BM25()
        self.model.index(token_lists, show_progress=False)
        self.vocab = self.model.vocab_dict

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        known = list(dict.fromkeys(t for t in query_tokens if t in self.vocab))
        if not known:
            return np.zeros(self.model.scores["num_docs"])
        return self.model.get_scores(known).astype(np.float64)


class View:
    """The documents one set of groups may read, ranked by one scorer, ties broken by id."""

    def __init__(self, docs: Sequence[Doc], scorer: _Scorer):
        self.docs = tuple(docs)
        self.scorer = scorer
        order = np.argsort(np.array([d.id for d in self.docs], dtype=object), kind="stable")
        self.id_rank = np.empty(len(self.docs), dtype=np.int64)
        self.id_rank[order] = np.arange(len(self.docs))

    def search(self, query: str, k: int) -> list[Hit]:
        if k <= 0 or not self.docs:
            return []
        scores = self.scorer.scores(tokenize(query))
        cand = np.flatnonzero(scores > 0)
        if len(cand) > k:  # keep everything tied with the k-th best, then order exactly
            kth = np.partition(scores[cand], len(cand) - k)[len(cand) - k]
            cand = cand[scores[cand] >= kth]
        order = np.lexsort((self.id_rank[cand], -scores[cand]))[:k]
        return [Hit(self.docs[i], float(scores[i])) for i in cand[order]]


def _counts(docs: Sequence[Doc]) -> tuple[dict[str, int], sparse.csr_matrix]:
    """The vocabulary (token -> column, in order of first use) and the document-token count matrix.

    Token ids go straight into flat int32 arrays: holding every document's token list (or
    per-token Python ints) costs about 5x the corpus text in RAM at 100k passages.
    """
    vocab: dict[str, int] = {}
    indices, indptr = array("i"), array("q", [0])
    for d in docs:
        indices.extend([vocab.setdefault(t, len(vocab)) for t in tokenize(d.text)])
        indptr.append(len(indices))
    cols = np.frombuffer(indices, dtype=np.int32) if indices else np.zeros(0, dtype=np.int32)
    matrix = sparse.csr_matrix((np.ones(len(cols), dtype=np.int32), cols, np.frombuffer(indptr, dtype=np.int64)),
                               shape=(len(docs), max(1, len(vocab))))
    matrix.sum_duplicates()  # a token repeated in a document: one entry holding its count
    return vocab, matrix


class Searcher:
    """Builds and caches one :class:`View` per distinct caller group set."""

    def __init__(self, docs: Sequence[Doc], ranker: str = "overlap", max_views: int = 64):
        if ranker not in RANKERS:
            raise ValueError(f"unknown ranker {ranker!r}; choose one of {', '.join(RANKERS)}")
        self.docs, self.ranker = tuple(docs), ranker
        self._views: Lru[frozenset[str], View] = Lru(max_views)
        if ranker == "overlap":
            self._vocab, self._matrix = _counts(self.docs)
        else:  # bm25 indexes token lists per view; overlap needs only the count matrix
            self._tokens = [tokenize(d.text) for d in self.docs]

    def authorized(self, groups: frozenset[str]) -> list[int]:
        """Indices of the documents any of ``groups`` may read."""
        return [i for i, d in enumerate(self.docs) if d.groups & groups]

    def _build(self, rows: list[int]) -> View:
        docs = [self.docs[i] for i in rows]
        if not rows:
            scorer: _Scorer = _Overlap(sparse.csc_matrix((0, 1)), {})
        elif self.ranker == "overlap":
            scorer = _Overlap(self._matrix[rows].tocsc(), self._vocab)
        else:
            scorer = _BM25([self._tokens[i] for i in rows])
        return View(docs, scorer)

    def view(self, groups: frozenset[str]) -> View:
        """The caller's view, built on first use (empty groups see nothing)."""
        key = frozenset(groups)
        return self._views.get(key, lambda: self._build(self.authorized(key)))

    def search(self, query: str, groups: frozenset[str], k: int = 3) -> list[Hit]:
        """Top-``k`` authorized documents with a positive score, best first, ties by id."""
        return self.view(groups).search(query, k)
