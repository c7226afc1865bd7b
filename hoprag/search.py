"""Permission-aware search: authorization selects the view *before* anything is scored.

Each distinct set of caller groups gets its own view of the corpus with its own index, so an
unauthorized document is never scored, ranked or counted, not even in BM25's document
frequencies (a physically partitioned index, built lazily and cached).

Three rankers, one analysis (:mod:`.tokens`):

- ``overlap``: the chapter's frequency-weighted token overlap over the text, ties by id;
- ``bm25``: Okapi BM25 (bm25s) over the accent-folded ``title + section + text`` -- Wikipedia-style
  paragraphs often never repeat their subject outside the title, a documentation passage its
  headings;
- ``bm25-titles``: ``bm25`` plus a title match: passages titled with an entity the query names
  gain ``TITLE_WEIGHT`` times the best BM25 score of the query (the query's entities have a
  page of their own);
- ``dense``: the cosine of the query's and each passage's embedding alone (:mod:`.embed`).

With passage vectors (:class:`~hoprag.embed.Vectors`), the BM25 rankers are **hybrid**: each
view scores the query's embedding against *its own rows only* -- an exact matrix product over the
vectors of the passages the caller may read, so dense scores, like BM25's statistics, never see an
unreadable passage -- and fuses the two rankings (:func:`fuse`). ``overlap`` stays lexical: it is
the chapter's ranker, whose tables must reproduce.
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterable, Sequence

import bm25s
import numpy as np
from scipy import sparse

from .assess import stem
from .cache import Derived, Lru, load_or_build, pack, unpack
from .corpus import SECTION_SEPARATOR, Doc
from .embed import Vectors
from .entities import EntityIndex, EntityView
from .lexicon import Lexicon
from .passages import Passages
from .tokens import content, fold, identifiers, tokenize

RANKERS = ("overlap", "bm25", "bm25-titles", "dense")
TITLE_WEIGHT = 0.5
#: How many BM25 hits the title match re-ranks (titled passages outside it still gain the bonus).
TITLE_POOL = 50
#: Hybrid fusion: the weight of the dense ranking against the lexical one, each min-max scaled over
#: the view (dense: from the ``DENSE_POOL``-th best cosine up), tuned on MuSiQue questions 0-49
#: (benchmarks/RESULTS.md, section 11).
DENSE_WEIGHT = 0.5
DENSE_POOL = 20
#: The layout :meth:`_BM25.to_bytes` writes and what :func:`analysed` indexes, part of the kind a view
#: persists under: an older one is a cache miss.
VIEW_FORMAT = "5"


@dataclass(frozen=True)
class Hit:
    """One ranked result."""

    doc: Doc
    score: float


class _Scorer:
    """Scores the documents of one view; subclasses own the index structure."""

    def scores(self, query_tokens: list[str]) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def document_frequencies(self) -> dict[str, int]:  # pragma: no cover - interface
        """How many of the view's documents hold each analysed token (what BM25's IDF counts)."""
        raise NotImplementedError


class _Overlap(_Scorer):
    """The chapter's score: how many of a document's tokens appear in the query (frequency-weighted)."""

    def __init__(self, matrix: sparse.csc_matrix, vocab: dict[str, int],
                 frequencies: Callable[[], dict[str, int]] = dict):
        """``frequencies``: the view's analysed-token document frequencies (its counts are of raw text)."""
        self.matrix, self.vocab, self._frequencies = matrix, vocab, frequencies

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        cols = sorted({self.vocab[t] for t in query_tokens if t in self.vocab})
        if not cols:
            return np.zeros(self.matrix.shape[0])
        return np.asarray(self.matrix[:, cols].sum(axis=1), dtype=np.float64).ravel()

    def document_frequencies(self) -> dict[str, int]:
        return self._frequencies()


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

    def document_frequencies(self) -> dict[str, int]:
        """Read off the index: each token's column holds one entry per document containing it (every
        BM25 weight of a present token is positive); bm25s's padding token ``""`` has no column."""
        counts = np.diff(self.model.scores["indptr"]).tolist()
        return {t: counts[i] for t, i in self.vocab.items() if i < len(counts)}

    def to_bytes(self) -> bytes:
        """The index as plain arrays (:func:`hoprag.cache.pack`, no pickle), so a store can persist a built view."""
        s = self.model.scores
        return pack(dict(data=s["data"], indices=s["indices"], indptr=s["indptr"], num_docs=int(s["num_docs"]),
                         vocab=self.vocab))

    @classmethod
    def from_bytes(cls, blob: bytes) -> "_BM25 | None":
        """The inverse of :meth:`to_bytes`: a scorer equal to the one saved, without re-indexing
        (``None``: a blob of another layout)."""
        arrays = unpack(blob)
        if arrays is None:
            return None
        scorer = cls.__new__(cls)
        scorer.model = bm25s.BM25()
        scorer.model.scores = {"data": arrays["data"], "indices": arrays["indices"], "indptr": arrays["indptr"],
                               "num_docs": int(arrays["num_docs"])}
        scorer.model.vocab_dict = scorer.vocab = arrays["vocab"]
        scorer.model.nonoccurrence_array = None  # the Lucene variant has none
        return scorer


class View:
    """The documents one set of groups may read, ranked by one scorer, ties broken by id."""

    def __init__(self, docs: Sequence[Doc], rows: Sequence[int], scorer: _Scorer, titled: bool,
                 entities: Callable[[], EntityIndex], id_rank: np.ndarray, vectors: Vectors | None = None,
                 dense: str | None = None):
        """``docs``: the view's documents (the corpus's ``rows``); ``id_rank``: each one's place in id
        order (any order-preserving numbers); ``vectors``: the corpus's passage vectors, of which
        the view reads its rows only; ``dense``: ``"hybrid"`` (fused with the lexical scores),
        ``"dense"`` (alone) or ``None`` (lexical)."""
        self.docs, self.rows = docs, rows
        self.scorer, self.titled = scorer, titled
        self._entity_index = entities
        self.id_rank = id_rank
        self.vectors, self.dense = vectors, dense if vectors is not None else None

    @cached_property
    def entities(self) -> EntityView:
        """The caller's entity graph over the same passages (built on first use)."""
        return self._entity_index().view(self.rows)

    @cached_property
    def idf(self) -> dict[str, float]:
        """BM25's (Lucene) IDF of each analysed token, over this view only: how much a match says
        (document frequencies read off an index, never by re-tokenising the view)."""
        df = self.scorer.document_frequencies()
        n = len(self.docs)
        return {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    @cached_property
    def stem_idf(self) -> dict[str, float]:
        """Each stem's weight: the IDF of its most frequent surface form in this view."""
        out: dict[str, float] = {}
        for token, weight in self.idf.items():
            key = stem(token)
            out[key] = min(weight, out.get(key, weight))
        return out

    def weights(self, query: str) -> dict[str, float]:
        """The weight of each of ``query``'s content words in this view. Coverage matches words by stem
        (:mod:`.assess`), so a word the view holds only in another form ("keeps": "keep") weighs as that
        form does -- not as a word no passage holds, the heaviest weight there is."""
        out = {}
        for token in dict.fromkeys(content(identifiers(query))):
            weight = self.idf.get(token, self.stem_idf.get(stem(token)))
            if weight is not None:
                out[token] = weight
        return out

    @cached_property
    def matrix(self) -> np.ndarray:
        """The vectors of this view's rows only (the corpus's matrix itself when the view is all of it)."""
        assert self.vectors is not None
        whole = self.vectors.matrix
        rows = np.asarray(self.rows)
        if len(rows) == len(whole) and (len(rows) == 0 or (rows[0] == 0 and rows[-1] == len(whole) - 1)):
            return whole
        return whole[rows]

    def similarity(self, query: str) -> np.ndarray:
        """The cosine of ``query`` with each of the view's passages (zeros without vectors).

        One dot product per row (``vecdot``), not a matrix-vector product: OpenBLAS's took 14-23 ms
        over 70,000 rows on the shared 2-core machine, this 5-12 ms (benchmarks/RESULTS.md, section
        11); and a row's cosine is then the same whichever other rows the view holds."""
        if self.vectors is None or not len(self.rows):
            return np.zeros(len(self.rows))
        return np.vecdot(self.matrix, self.vectors.query(query))

    def _top(self, scores: np.ndarray, k: int) -> np.ndarray:
        cand = np.flatnonzero(scores > 0)
        if len(cand) > k:  # keep everything tied with the k-th best, then order exactly
            kth = np.partition(scores[cand], len(cand) - k)[len(cand) - k]
            cand = cand[scores[cand] >= kth]
        return cand[np.lexsort((self.id_rank[cand], -scores[cand]))[:k]]

    def search(self, query: str, k: int) -> list[Hit]:
        """Top-``k`` documents of this view with a positive score, best first, ties by id."""
        if k <= 0 or not self.docs:
            return []
        scores = self.scorer.scores(tokenize(query if isinstance(self.scorer, _Overlap) else fold(identifiers(query))))
        if self.titled:
            pool = self._top(scores, max(k, TITLE_POOL))
            boosted = np.zeros_like(scores)
            boosted[pool] = scores[pool]
            if len(pool):
                bonus = TITLE_WEIGHT * scores[pool].max()
                for j in self.entities.index.entities_in(query):
                    boosted[self.entities.titled(j)] += bonus
            scores = boosted
        if self.dense is not None:
            assert self.vectors is not None
            similar = self.similarity(query)
            floor = self.vectors.embedder.min_similarity
            scores = fuse(scores, similar, floor) if self.dense == "hybrid" else np.where(similar >= floor, similar, 0.0)
        return [Hit(self.docs[i], float(scores[i])) for i in self._top(scores, k)]


def fuse(lexical: np.ndarray, similar: np.ndarray, floor: float, weight: float | None = None,
         pool: int | None = None) -> np.ndarray:
    """Hybrid scores: ``weight`` times the dense ranking plus the rest times the lexical one, each
    scaled to 0..1 -- lexical by its best score, dense from the ``pool``-th best cosine (0) to the
    best (1), so only the dense top ``pool`` count. A passage no query word matches is a hit only
    when its cosine reaches the embedder's ``floor`` (a query of unknown words finds nothing)."""
    weight = DENSE_WEIGHT if weight is None else weight
    pool = DENSE_POOL if pool is None else pool
    best = lexical.max() if len(lexical) else 0.0
    lex = lexical / best if best > 0 else np.zeros_like(lexical)
    fused = (1 - weight) * lex
    if len(similar):
        top = similar.max()
        low = np.partition(similar, len(similar) - pool)[len(similar) - pool] if len(similar) > pool else similar.min()
        if top > low:  # only passages above the pool-th cosine have a dense part: fewer than ``pool``
            near = np.flatnonzero(similar > low)
            dense = np.clip((similar[near] - low) / (top - low), 0.0, 1.0)
            dense[(lex[near] <= 0) & (similar[near] < floor)] = 0.0
            fused[near] = weight * dense + (1 - weight) * lex[near]
    return fused


def analysed(doc: Doc) -> str:
    """What the BM25 rankers index: the folded title, section and text.

    A passage's section (its heading path) is a field of its own: a chunked passage rarely repeats
    its headings. It is left out when empty or the title itself, and a leading heading that is the
    title is not counted twice, so records without sections analyse as title and text alone.
    """
    section = doc.section
    if section and doc.title and section.startswith(doc.title + SECTION_SEPARATOR):
        section = section[len(doc.title) + len(SECTION_SEPARATOR):]
    fields = [f for f in (doc.title, section if section != doc.title else "", doc.text) if f]
    return fold(identifiers("\n".join(fields)))


def _counts(token_lists: Iterable[list[str]], n: int) -> tuple[dict[str, int], sparse.csr_matrix]:
    """The vocabulary (token -> column, in order of first use) and the document-token count matrix
    of ``n`` documents' tokens.

    Token ids go straight into flat int32 arrays: holding every document's token list (or
    per-token Python ints) costs about 5x the corpus text in RAM at 100k passages.
    """
    vocab: dict[str, int] = {}
    indices, indptr = array("i"), array("q", [0])
    for tokens in token_lists:
        indices.extend([vocab.setdefault(t, len(vocab)) for t in tokens])
        indptr.append(len(indices))
    cols = np.frombuffer(indices, dtype=np.int32) if indices else np.zeros(0, dtype=np.int32)
    matrix = sparse.csr_matrix((np.ones(len(cols), dtype=np.int32), cols, np.frombuffer(indptr, dtype=np.int64)),
                               shape=(n, max(1, len(vocab))))
    matrix.sum_duplicates()  # a token repeated in a document: one entry holding its count
    return vocab, matrix


class Searcher:
    """Builds and caches one :class:`View` per distinct caller group set."""

    def __init__(self, docs: Sequence[Doc], ranker: str = "overlap", max_views: int = 64,
                 entities: Callable[[], EntityIndex] | None = None, cache: Derived | None = None,
                 rows: Callable[[frozenset[str]], np.ndarray] | None = None, vectors: Vectors | None = None):
        """``cache``: persisted BM25 views (a store's), read before building and written after;
        ``rows``: the engine's permission check for a group set, as the rows it may read (default:
        :meth:`Passages.readable_rows`); ``vectors``: the passages' embeddings (BM25 rankers then
        search hybrid; ``dense`` needs them)."""
        if ranker not in RANKERS:
            raise ValueError(f"unknown ranker {ranker!r}; choose one of {', '.join(RANKERS)}")
        if ranker == "dense" and vectors is None:
            raise ValueError("ranker dense needs passage vectors: index with an embedder (--embedder minilm), "
                             "or choose another --ranker")
        self.docs, self.ranker, self.cache, self.vectors = Passages.of(docs), ranker, cache, vectors
        self._entities = entities or (lambda: EntityIndex(self.docs, Lexicon(())))
        self._views: Lru[frozenset[str], View] = Lru(max_views)
        self._readable = rows or self.docs.readable_rows

    @cached_property
    def _overlap_counts(self) -> tuple[dict[str, int], sparse.csr_matrix]:
        """The corpus's raw-text token counts (the ``overlap`` ranker): every view slices its rows."""
        return self._persisted_counts("counts", lambda: (tokenize(d.text) for d in self.docs))

    @cached_property
    def _analysed_counts(self) -> tuple[dict[str, int], sparse.csr_matrix]:
        """The corpus's analysed-token counts: an ``overlap`` view's document frequencies for its IDF."""
        return self._persisted_counts("analysed-counts", lambda: (tokenize(analysed(d)) for d in self.docs))

    def _persisted_counts(self, kind: str, tokens: Callable[[], Iterable[list[str]]]
                          ) -> tuple[dict[str, int], sparse.csr_matrix]:
        """A corpus-wide count matrix, built once and persisted like a BM25 view."""
        def decode(blob: bytes) -> tuple[dict[str, int], sparse.csr_matrix] | None:
            f = unpack(blob)
            if f is None:
                return None
            matrix = sparse.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
            return dict(zip(f["vocab"], range(len(f["vocab"])))), matrix

        def encode(counts: tuple[dict[str, int], sparse.csr_matrix]) -> bytes:
            vocab, m = counts
            return pack(dict(vocab=list(vocab), data=m.data, indices=m.indices, indptr=m.indptr, shape=list(m.shape)))

        return load_or_build(self.cache, kind, VIEW_FORMAT, decode, lambda: _counts(tokens(), len(self.docs)), encode)

    def _frequencies(self, rows: list[int]) -> dict[str, int]:
        """How many of ``rows`` hold each analysed token (a row holds each of its tokens once)."""
        vocab, matrix = self._analysed_counts
        counts = np.bincount(matrix[rows].indices, minlength=matrix.shape[1]).tolist()
        return {t: c for t, c in zip(vocab, counts) if c}

    @cached_property
    def _id_rank(self) -> np.ndarray:
        """Each document's place in id order, once for the corpus: a view's ties break by its rows' ranks."""
        order = np.argsort(np.array(self.docs.ids, dtype=object), kind="stable")
        rank = np.empty(len(self.docs), dtype=np.int64)
        rank[order] = np.arange(len(self.docs))
        return rank

    @cached_property
    def _tokens(self) -> list[list[str]]:
        """Every document's BM25 tokens, on the first view that must be built (not loaded)."""
        return [tokenize(analysed(d)) for d in self.docs]

    def _build(self, groups: frozenset[str]) -> View:
        rows = self._readable(groups)
        docs = self.docs.take(rows)
        if not len(rows):
            scorer: _Scorer = _Overlap(sparse.csc_matrix((0, 1)), {})
        elif self.ranker == "overlap":
            vocab, matrix = self._overlap_counts
            scorer = _Overlap(matrix[rows].tocsc(), vocab, lambda: self._frequencies(rows))
        else:
            key = json.dumps(sorted(groups))
            lexical = "bm25" if self.ranker == "dense" else self.ranker  # dense: BM25 still weighs query words
            scorer = load_or_build(self.cache, f"view:{lexical}:{VIEW_FORMAT}", key, _BM25.from_bytes,
                                   lambda: _BM25([self._tokens[i] for i in rows]), _BM25.to_bytes)
        dense = None if self.vectors is None or self.ranker == "overlap" else (
            "dense" if self.ranker == "dense" else "hybrid")
        return View(docs, rows, scorer, self.ranker == "bm25-titles", self._entities, self._id_rank[rows],
                    self.vectors, dense)

    def view(self, groups: frozenset[str]) -> View:
        """The caller's view, built on first use (empty groups see nothing)."""
        key = frozenset(groups)
        return self._views.get(key, lambda: self._build(key))
