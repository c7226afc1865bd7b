"""Permission-aware search: authorization selects the view *before* anything is scored.

Each distinct set of caller groups gets its own view of the corpus, so an unauthorized document is
never scored, ranked or counted, not even in BM25's document frequencies: a view is the set of rows
its callers may read, and every statistic is counted over those rows only, at query time, from one
corpus-wide postings (:mod:`.postings`). A view therefore holds no index of its own: it is built in
a few array operations, and a change to the corpus grows the postings by what it adds.

Three rankers, one analysis (:mod:`.tokens`):

- ``overlap``: the chapter's frequency-weighted token overlap over the text, ties by id;
- ``bm25``: Okapi BM25 (the Lucene variant, as bm25s scores it, to the bit) over the accent-folded
  ``title + section + text`` -- Wikipedia-style paragraphs often never repeat their subject outside
  the title, a documentation passage its headings;
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

import math
import re
import threading
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from .assess import said, stem
from .cache import Derived, Lru, load_or_build
from .corpus import SECTION_SEPARATOR, Doc
from .embed import Vectors
from .entities import EntityIndex, EntityView
from .lexicon import Lexicon
from .passages import Passages
from .postings import FORMAT as POSTINGS_FORMAT, Postings
from .splice import Splice
from .tokens import content, fold, identifiers, tokenize

#: A word with an inner capital ("PyPy", "WebAssembly"): a name.
_CAMEL = re.compile(r"\b[A-Za-z]*[a-z][A-Z][A-Za-z]*\b")

RANKERS = ("overlap", "bm25", "bm25-titles", "dense")
TITLE_WEIGHT = 0.5
#: How many BM25 hits the title match re-ranks (titled passages outside it still gain the bonus).
TITLE_POOL = 50
#: The layout of persisted postings (:mod:`.postings`) and what :func:`analysed` indexes, part of the
#: key they persist under: an older one is a cache miss.
TERMS_FORMAT = f"6.{POSTINGS_FORMAT}"
#: Okapi BM25's parameters, bm25s's defaults (its Lucene variant), which scores were first defined by.
K1, B = 1.5, 0.75
#: Postings a view keeps weighed (its most recently used tokens'), 8 bytes each: room for a large view's
#: every token, as a precomputed BM25 index would hold them (64 MB at most).
WEIGHTS_KEPT = 1 << 23
#: Hybrid fusion: the weight of the dense ranking against the lexical one, each min-max scaled over
#: the view (dense: from the ``DENSE_POOL``-th best cosine up), tuned on MuSiQue questions 0-49
#: (benchmarks/RESULTS.md, section 11).
DENSE_WEIGHT = 0.5
DENSE_POOL = 20


@dataclass(frozen=True)
class Hit:
    """One ranked result."""

    doc: Doc
    score: float
    #: first in both the lexical and the dense ranking of the view (hybrid search only): two rankings that
    #: share nothing but the query agree on it -- the surest sign the search found what the query asks
    agreed: bool = False
    #: how far the passage's cosine with the query stands above the view's mean cosine, in standard deviations
    #: (hybrid and dense search only; 0 otherwise): a passage the embedding singles out among everything the caller
    #: may read is about the query even when it shares few of its words
    stands_out: float = 0.0


class _Restricted:
    """One corpus-wide postings as one view sees it: a token's postings at the view's rows only, as
    positions in the view (every other slot, another view's or a removed passage's, falls outside)."""

    def __init__(self, postings: Postings, slots: np.ndarray):
        """``slots``: the view's rows' slots, in row order."""
        self.postings, self.n = postings, len(slots)
        self.local = np.full(postings.slots, self.n, dtype=np.int32)
        self.local[slots] = np.arange(self.n, dtype=np.int32)
        self._df: dict[str, int] = {}

    def hits(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The view positions holding ``token`` (ascending) and its count in each."""
        slots, counts = self.postings.lookup(token)
        at = self.local[slots]
        inside = at < self.n
        return at[inside], counts[inside]

    def df(self, token: str) -> int:
        """How many of the view's passages hold ``token`` (what IDF counts), kept once asked."""
        found = self._df.get(token)
        if found is None:
            found = self._df[token] = len(self.hits(token)[0])
        return found


class _Idf(Mapping[str, float]):
    """BM25's (Lucene) IDF of each analysed token over one view, worked out for a token when first
    asked: a view is ready at once, and a change costs no pass over its vocabulary."""

    def __init__(self, terms: _Restricted):
        self._terms = terms

    def __getitem__(self, token: str) -> float:
        c = self._terms.df(token) if isinstance(token, str) else 0
        if not c:
            raise KeyError(token)
        n = self._terms.n
        return math.log(1 + (n - c + 0.5) / (c + 0.5))

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and bool(self._terms.df(token))

    def __iter__(self) -> Iterator[str]:
        return (t for t in self._terms.postings.vocab if t in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Scorer:
    """Scores the documents of one view."""

    def scores(self, query_tokens: list[str]) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


class _Overlap(_Scorer):
    """The chapter's score: how many of a document's tokens appear in the query (frequency-weighted)."""

    def __init__(self, counts: _Restricted):
        self.counts = counts

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        out = np.zeros(self.counts.n)
        for token in set(query_tokens):
            at, counts = self.counts.hits(token)
            out[at] += counts
        return out


class _BM25(_Scorer):
    """Okapi BM25 (Lucene variant, as bm25s computes it, to the bit) with statistics from this view's
    documents only: document frequency, count and length are read off the corpus-wide postings at
    query time, so nothing of it is precomputed per view and a change to the corpus costs no rebuild.
    Each token's weights are kept once worked out (the most recently used ones)."""

    def __init__(self, terms: _Restricted, lengths: np.ndarray):
        """``lengths``: each view document's analysed token count."""
        self.terms, n = terms, terms.n
        self.denom = K1 * ((1 - B) + B * lengths / (lengths.sum() / n)) if n else np.zeros(0)
        self._kept: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def weights(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The view positions holding ``token`` and its BM25 weight in each (float32, as bm25s stores them)."""
        with self._lock:
            found = self._kept.get(token)
            if found is not None:
                self._kept.move_to_end(token)
                return found
        at, counts = self.terms.hits(token)
        n, df = self.terms.n, len(at)
        idf = np.float64(np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))) if df else 0.0
        tf = counts.astype(np.float64)
        found = at, (idf * (tf / (self.denom[at] + tf))).astype(np.float32)
        with self._lock:
            if token not in self._kept:
                self._kept[token], self._size = found, self._size + len(at)
                while self._size > WEIGHTS_KEPT and len(self._kept) > 1:
                    self._size -= len(self._kept.popitem(last=False)[1][0])
        return found

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        out = np.zeros(self.terms.n, dtype=np.float32)
        for token in dict.fromkeys(query_tokens):  # summed in float32, token by token, as bm25s does
            at, weights = self.weights(token)
            out[at] += weights
        return out.astype(np.float64)


class View:
    """The documents one set of groups may read, ranked by one scorer, ties broken by id."""

    def __init__(self, docs: Sequence[Doc], rows: Sequence[int], scorer: _Scorer, titled: bool,
                 entities: Callable[[], EntityIndex], id_rank: np.ndarray, terms: _Restricted,
                 vectors: Vectors | None = None, dense: str | None = None):
        """``docs``: the view's documents (the corpus's ``rows``); ``id_rank``: each one's place in id
        order (any order-preserving numbers); ``terms``: the analysed postings as the view sees them
        (its IDF); ``vectors``: the corpus's passage vectors, of which the view reads its rows only;
        ``dense``: ``"hybrid"`` (fused with the lexical scores), ``"dense"`` (alone) or ``None`` (lexical)."""
        self.docs, self.rows = docs, rows
        self.scorer, self.titled = scorer, titled
        self._entity_index = entities
        self.id_rank = id_rank
        self.terms = terms
        self.idf: Mapping[str, float] = _Idf(terms)
        """BM25's (Lucene) IDF of each analysed token, over this view only: how much a match says."""
        self.vectors, self.dense = vectors, dense if vectors is not None else None

    @cached_property
    def entities(self) -> EntityView:
        """The caller's entity graph over the same passages (built on first use)."""
        return self._entity_index().view(self.rows)

    def weights(self, query: str) -> dict[str, float]:
        """The weight of each of ``query``'s content words in this view. Coverage matches words by stem
        (:mod:`.assess`), so a word the view holds only in another form ("keeps": "keep") weighs as that
        form does -- its most frequent one in this view -- not as a word no passage holds, the heaviest
        weight there is. The forms come from the corpus's stem index (:meth:`Postings.forms`), asked
        only for a word the view does not hold: no pass over the view's vocabulary. A name written CamelCase has
        only its own forms ("DataFrames": "DataFrame"), not every word sharing its stem: "PyPy" and "PyPI" stem
        alike, and pages naming PyPI do not mention PyPy."""
        idf, out = self.idf, {}
        camel = {w.lower() for w in _CAMEL.findall(query)}
        for token in dict.fromkeys(content(identifiers(said(query)))):
            weight = idf.get(token)
            if weight is None:
                weight = min((idf[t] for t in self.terms.postings.forms(stem(token)) if t in idf
                              and (token not in camel or t.startswith(token) or token.startswith(t))), default=None)
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
        agreed: set[int] = set()
        standing = _no_standing
        if self.dense is not None:
            assert self.vectors is not None
            similar = self.similarity(query)
            standing = _standing(similar)
            floor = self.vectors.embedder.min_similarity
            if self.dense == "hybrid":
                agreed = _first_in_both(scores, similar)
                scores = fuse(scores, similar, floor)
            else:
                scores = np.where(similar >= floor, similar, 0.0)
        return [Hit(self.docs[i], float(scores[i]), int(i) in agreed, standing(int(i))) for i in self._top(scores, k)]


def _standing(similar: np.ndarray) -> Callable[[int], float]:
    """A row's cosine in standard deviations above the mean of all of them (0 when they do not vary): over the
    caller's view only, so a passage's standing says nothing of what the caller may not read. Only the returned hits
    are scaled, not every row of the view."""
    mean, spread = (float(similar.mean()), float(similar.std())) if len(similar) > 1 else (0.0, 0.0)
    return (lambda i: float((similar[i] - mean) / spread)) if spread > 0 else _no_standing


def _no_standing(i: int) -> float:
    """No standing: a search without passage vectors, or over cosines that do not vary."""
    return 0.0


def _first_in_both(lexical: np.ndarray, similar: np.ndarray) -> set[int]:
    """The positions first in the lexical ranking (a positive score) and in the dense one alike -- ties included."""
    if not len(lexical) or lexical.max() <= 0:
        return set()
    return {int(i) for i in np.flatnonzero((lexical == lexical.max()) & (similar == similar.max()))}


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


class Searcher:
    """Builds and caches one :class:`View` per distinct caller group set, over corpus-wide postings
    (:mod:`.postings`) that a change to the corpus grows by what it adds (:meth:`advanced`)."""

    def __init__(self, docs: Sequence[Doc], ranker: str = "overlap", max_views: int = 64,
                 entities: Callable[[], EntityIndex] | None = None, cache: Derived | None = None,
                 rows: Callable[[frozenset[str]], np.ndarray] | None = None, vectors: Vectors | None = None):
        """``cache``: persisted postings (a store's), read before building and written after;
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
    def terms(self) -> Postings:
        """The corpus's analysed tokens (what the BM25 rankers score, and every view's IDF counts)."""
        return self._postings("terms", lambda d: tokenize(analysed(d)))

    @cached_property
    def counts(self) -> Postings:
        """The corpus's raw-text tokens (what the ``overlap`` ranker counts)."""
        return self._postings("counts", lambda d: tokenize(d.text))

    def _postings(self, kind: str, tokens: Callable[[Doc], list[str]]) -> Postings:
        """Corpus-wide postings by slot, built once and persisted."""
        docs, of_slot = self.docs, self.docs.row_of_slot.tolist()
        return load_or_build(self.cache, kind, TERMS_FORMAT, Postings.from_bytes,
                             lambda: Postings.build(tokens(docs[r]) if r >= 0 else [] for r in of_slot),
                             Postings.to_bytes)

    @cached_property
    def _by_id(self) -> np.ndarray:
        """The rows in id order, once for the corpus (then carried over by each change)."""
        return np.argsort(np.array(self.docs.ids, dtype=object), kind="stable")

    @cached_property
    def _id_rank(self) -> np.ndarray:
        """Each document's place in id order: a view's ties break by its rows' ranks."""
        rank = np.empty(len(self.docs), dtype=np.int64)
        rank[self._by_id] = np.arange(len(self.docs))
        return rank

    def _build(self, groups: frozenset[str]) -> View:
        rows = self._readable(groups)
        docs, slots = self.docs.take(rows), self.docs.slot_of_row[rows]
        terms = _Restricted(self.terms, slots)
        if self.ranker == "overlap":
            scorer: _Scorer = _Overlap(_Restricted(self.counts, slots))
        else:
            scorer = _BM25(terms, self.terms.lengths[slots])  # dense too: BM25 still weighs query words
        dense = None if self.vectors is None or self.ranker == "overlap" else (
            "dense" if self.ranker == "dense" else "hybrid")
        return View(docs, rows, scorer, self.ranker == "bm25-titles", self._entities, self._id_rank[rows], terms,
                    self.vectors, dense)

    def view(self, groups: frozenset[str]) -> View:
        """The caller's view, built on first use (empty groups see nothing)."""
        key = frozenset(groups)
        return self._views.get(key, lambda: self._build(key))

    def advanced(self, docs: Passages, splice: Splice, added: Sequence[Doc], slots: np.ndarray,
                 renumber: np.ndarray | None, entities: Callable[[], EntityIndex],
                 rows: Callable[[frozenset[str]], np.ndarray], vectors: Vectors | None = None) -> "Searcher":
        """The searcher of the next generation (``docs``, made by ``splice`` with ``added``; ``vectors``:
        its dense matrix, spliced alike by :func:`hoprag.delta.advance`): the postings
        built so far grown by the added passages (``slots``: each slot's row before compaction) and
        compacted when ``renumber`` says so, the id order carried over; views are rebuilt on first
        use, cheaply (no index of their own)."""
        new = Searcher(docs, self.ranker, self._views.size, entities, None, rows, vectors)
        alive = slots >= 0
        for kind, tokens in (("terms", lambda d: tokenize(analysed(d))), ("counts", lambda d: tokenize(d.text))):
            if kind in vars(self):
                grown = getattr(self, kind).grown([tokens(d) for d in added], alive)
                vars(new)[kind] = grown.compacted(renumber) if renumber is not None else grown
        if "_by_id" in vars(self):
            order = splice.new_of_old[self._by_id]
            order = order[order >= 0]
            ids, old = docs.ids, _IdsOf(order, docs.ids)
            placed = sorted(splice.placed.tolist(), key=ids.__getitem__)
            vars(new)["_by_id"] = np.insert(order, [bisect_left(old, ids[r]) for r in placed], placed)
        return new


class _IdsOf(Sequence[str]):
    """The ids of some rows, read only where a binary search looks."""

    def __init__(self, rows: np.ndarray, ids: Sequence[str]):
        self.rows, self.ids = rows, ids

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):  # type: ignore[override]
        return self.ids[int(self.rows[i])]
