"""The benchmark's corpus-level structures: a title-aware lexical search and an entity index.

Both are built once per corpus, before any question is seen. Passages are searched as
``title + text`` (Wikipedia-style paragraphs often never repeat their subject) and accent-folded
(a question spelling "Tekeze" must find "Tekezé"), like Lucene's ASCII folding; ranking itself is
the engine's :class:`~mcp_server.search.Searcher` with ``ranker="bm25"``.

Entities come from a passage's precomputed ``triples`` when it has them, otherwise from the
engine's cue extractor plus capitalised spans per sentence; titles are entities too. The
passage-entity *mention* matrix links a passage to every vocabulary entity its text names, not
just those in its own triples: OpenIE leaves half the bridge entities of a hop out of the next
hop's triples, but the text still names them.
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from collections import Counter, defaultdict
from functools import cached_property
from typing import Iterable, Iterator, Sequence

import numpy as np
from scipy import sparse

from mcp_server.corpus import Doc
from mcp_server.lexicon import Lexicon, load_lexicon
from mcp_server.read import extract_facts
from mcp_server.search import Searcher
from mcp_server.tokens import tokenize

GROUPS = frozenset({"public"})
#: English function words: never a bridge on their own, dropped from follow-up queries.
STOP = frozenset(
    "a an the of in on at to for by with from and or not no is was were are be been being am who what which "
    "when where whose whom why how many much did do does done that this these those as it its his her hers "
    "their theirs he she they them him there than then into onto after before during one same also s".split())
#: Lower-case words allowed inside a proper name ("Church of England", "Ludwig van Beethoven").
CONNECTORS = frozenset("of the de du la le del della von van der den da di des y and for upon on".split())
MONTHS = frozenset("january february march april may june july august september october november december".split())
_SPAN = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|du|la|le|von|van|del|da|di|and)\s+)*[A-Z][\w'’.-]*)*")
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
MAX_NGRAM = 8

Unit = tuple[str, str]  # (entity surface, context the entity was stated in)


def fold(text: str) -> str:
    """Strip diacritics (NFKD, drop combining marks) so spellings with and without accents meet."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def norm(text: str) -> str:
    """An entity's key: folded, lower-cased engine tokens joined by spaces."""
    return " ".join(tokenize(fold(text)))


def title_base(title: str) -> str:
    """The entity a title names: ``Hello Love (song)`` -> ``hello love``, ``Baure, Nigeria`` -> ``baure``."""
    return norm(re.sub(r"\s*\(.*?\)", "", title).split(",")[0])


def is_name(surface: str) -> bool:
    """A proper-name-like entity (every word capitalised or a connector), not a date or a number.

    Bridges between passages are named things; "seventh studio album" or "April 4, 2010" are not.
    """
    words = surface.split()
    if any(w[:1].islower() and w.lower() not in CONNECTORS for w in words):
        return False
    return any(w[:1].isalpha() and w.lower().strip(",.") not in MONTHS for w in words)


def grams(tokens: Sequence[str], longest: int = MAX_NGRAM) -> Iterator[str]:
    """Every token n-gram up to ``longest`` words, as a space-joined key."""
    for n in range(1, longest + 1):
        for i in range(len(tokens) - n + 1):
            yield " ".join(tokens[i:i + n])


def _useful(key: str) -> bool:
    words = key.split()
    return bool(words) and not all(w in STOP for w in words) and not key.replace(" ", "").isdigit()


def units(doc: Doc, lexicon: Lexicon) -> tuple[Unit, ...]:
    """``(entity, context)`` pairs a reader can take a bridge from.

    A triple ``(s, r, o)`` yields ``(s, "r o")`` and ``(o, "s r")``. Without ``triples``, the engine's
    cue triples are used plus every capitalised span of a sentence with that sentence as context.
    """
    out: list[Unit] = []
    facts = doc.triples if doc.triples is not None else extract_facts(doc, lexicon)
    for s, r, o in facts:
        out += [(s, f"{r} {o}"), (o, f"{s} {r}")]
    if doc.triples is None:
        for sentence in _SENTENCES.split(doc.text):
            for span in _SPAN.findall(sentence):
                words = span.split()
                while words and words[0].lower() in STOP:
                    words.pop(0)
                if words:
                    out.append((" ".join(words), sentence))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class Scored:
    """A passage and its score in one search."""

    doc: Doc
    score: float


class BenchIndex:
    """Everything a strategy may consult about the corpus, built before the first question."""

    def __init__(self, docs: Sequence[Doc], lexicon: Lexicon | None = None, title_weight: float = 0.5):
        self.docs = tuple(docs)
        self.title_weight = title_weight
        self.row = {d.id: i for i, d in enumerate(self.docs)}
        lexicon = lexicon or load_lexicon()
        searchable = [dataclasses.replace(d, text=fold(f"{d.title}\n{d.text}" if d.title else d.text)) for d in self.docs]
        self.searcher = Searcher(searchable, ranker="bm25")
        self.units = [units(d, lexicon) for d in self.docs]
        titles = [title_base(d.title) for d in self.docs]
        keys = [[norm(e) for e, _ in u] for u in self.units]
        self.vocab: dict[str, int] = {}
        for title, named in zip(titles, keys):
            for key in [title, *named]:
                if _useful(key):
                    self.vocab.setdefault(key, len(self.vocab))
        self.titled: dict[int, list[int]] = defaultdict(list)  # entity -> passages it is the title of
        rows, cols, vals = [], [], []
        for i, d in enumerate(self.docs):
            found = {self.vocab[g]: 1.0 for g in grams(tokenize(fold(f"{d.title} {d.text}"))) if g in self.vocab}
            found.update({self.vocab[k]: 1.0 for k in keys[i] if k in self.vocab})
            title = self.vocab.get(titles[i])
            if title is not None:
                found[title] = 2.0  # a passage is most strongly about the entity it is titled with
                self.titled[title].append(i)
            rows += [i] * len(found)
            cols += list(found)
            vals += list(found.values())
        self.mentions = sparse.csr_matrix((vals, (rows, cols)), shape=(len(self.docs), max(1, len(self.vocab))))
        #: How many passages mention each entity: a bridge must reach another passage.
        self.spread = np.asarray((self.mentions > 0).sum(axis=0)).ravel()
        df = Counter(t for d in searchable for t in set(tokenize(d.text)))
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def entities_in(self, text: str) -> set[int]:
        """Vocabulary entities named in ``text`` (n-gram lookup, so a 3-word entity needs all 3 words)."""
        return {self.vocab[g] for g in grams(tokenize(fold(text))) if g in self.vocab}

    def spread_of(self, surface: str) -> int:
        j = self.vocab.get(norm(surface))
        return int(self.spread[j]) if j is not None else 0

    def search(self, query: str, k: int, titles: bool = True, pool: int = 50) -> list[Scored]:
        """BM25 over ``title + text``; with ``titles``, passages whose title the query names gain
        ``title_weight`` times the best BM25 score (the query's entities have a page of their own)."""
        hits = self.searcher.search(fold(query), GROUPS, max(k, pool) if titles else k)
        scores = {self.row[h.doc.id]: h.score for h in hits}
        if titles and scores:
            bonus = self.title_weight * max(scores.values())
            for j in self.entities_in(query):
                for i in self.titled.get(j, ()):
                    scores[i] = scores.get(i, 0.0) + bonus
        order = sorted(scores, key=lambda i: (-scores[i], self.docs[i].id))[:k]
        return [Scored(self.docs[i], scores[i]) for i in order]

    @cached_property
    def walk(self) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
        """Transposed transition matrices passage->entity and entity->passage for PPR.

        Passage->entity steps are weighted by 1/spread, so mass flows to specific entities rather
        than hubs ("United States") that touch hundreds of passages.
        """
        def rows_stochastic(m: sparse.spmatrix) -> sparse.csr_matrix:
            total = np.asarray(m.sum(axis=1)).ravel()
            total[total == 0] = 1
            return (sparse.diags(1 / total) @ m).tocsr()
        specific = self.mentions @ sparse.diags(1 / np.maximum(self.spread, 1))
        return rows_stochastic(specific).T.tocsr(), rows_stochastic(self.mentions.T).T.tocsr()

    def content(self, text: str) -> list[str]:
        """Folded tokens of ``text`` that are not function words, in order."""
        return [t for t in tokenize(fold(text)) if t not in STOP]

    def weight(self, tokens: Iterable[str]) -> float:
        """Summed IDF: how much a token overlap says."""
        return sum(self.idf.get(t, 0.0) for t in tokens)
