"""The engine: one corpus, its reader, its search views and its per-caller graphs.

Everything a caller can learn goes through a method that takes the caller's groups, so the
permission boundary is in one place; the MCP server is a thin typed surface over this.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .cache import Lru
from .corpus import Corpus, Doc, load_corpus
from .graph import Graph, build_graph
from .grep import grep
from .read import FactTable, Provenance, Triple, admit, extract_facts, facts_from, supported
from .search import Hit, Searcher

#: ``overlap`` (the chapter's frequency-weighted token overlap) is the default because every
#: published trace, eval trajectory and table is defined against it, and on corpora of short
#: single-fact passages it ranks as well as BM25. Choose ``bm25`` (``--ranker bm25`` or
#: ``HOPRAG_RANKER=bm25``) for long, real-world text: it weighs rare terms and normalises length.
DEFAULT_RANKER = "overlap"
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "corpus"


class Engine:
    """Permission-aware retrieval over one validated corpus."""

    def __init__(self, corpus: Corpus, ranker: str = DEFAULT_RANKER):
        self.corpus = corpus
        self.lexicon = corpus.lexicon
        self.ranker = ranker
        self.searcher = Searcher(corpus.docs, ranker)
        self.provenance = Provenance(corpus.allowlist)
        self._docs = corpus.by_id()
        self._facts = {d.id: extract_facts(d, self.lexicon) for d in corpus.docs}
        self._graphs: Lru[frozenset[str], Graph] = Lru(64)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_CORPUS, ranker: str = DEFAULT_RANKER) -> "Engine":
        return cls(load_corpus(path), ranker)

    @property
    def docs(self) -> tuple[Doc, ...]:
        return self.corpus.docs

    def facts(self, doc: Doc) -> tuple[Triple, ...]:
        """The reader's triples for a document (extracted once at load)."""
        if doc.id in self._facts:
            return self._facts[doc.id]
        return extract_facts(doc, self.lexicon)

    def evidence(self, doc: Doc) -> tuple[Triple, ...]:
        """Facts that may be cited: from an admitted document, each with its support span in the text."""
        if not self.provenance.admits(doc):
            return ()
        return tuple(t for t in self.facts(doc) if supported(t, doc))

    def admit(self, hits: Sequence[Doc]) -> tuple[list[Doc], list[str]]:
        """The integrity gate with this corpus's provenance controls."""
        return admit(hits, self.provenance)

    def table(self, docs: Sequence[Doc]) -> FactTable:
        """The evidence of ``docs`` by ``(subject, relation)``: only what the integrity gate admits."""
        return facts_from(docs, self.evidence)

    def search(self, query: str, groups: frozenset[str], k: int = 3) -> list[Hit]:
        return self.searcher.search(query, groups, k)

    def search_docs(self, query: str, groups: frozenset[str], k: int = 3) -> tuple[Doc, ...]:
        """The chapter's ``search``: just the documents, best first."""
        return tuple(h.doc for h in self.search(query, groups, k))

    def fetch(self, doc_id: str, groups: frozenset[str]) -> Doc | None:
        """A document by id, or ``None`` -- the same for unknown and unauthorized ids."""
        doc = self._docs.get(doc_id)
        return doc if doc is not None and doc.groups & groups else None

    def graph(self, groups: frozenset[str]) -> Graph:
        """The caller's trusted, authorized entity graph (built once per group set)."""
        key = frozenset(groups)
        return self._graphs.get(key, lambda: build_graph(self.docs, key, self.evidence))

    def grep(self, needle: str, groups: frozenset[str], k: int | None = None) -> list[tuple[str, str]]:
        return grep(self.docs, groups, needle, k)
