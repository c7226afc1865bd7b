"""The engine: one corpus, its reader, its search views and its per-caller graphs.

Everything a caller can learn goes through a method that takes the caller's groups, so the
permission boundary is in one place; the MCP server is a thin typed surface over this.
"""

from __future__ import annotations

import datetime as dt
import sys
import threading
import weakref
from functools import cached_property
from itertools import compress
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

import numpy as np

from .cache import Derived, Lru, load_or_build, pack, unpack
from .claims import Claim, Claims
from .corpus import Corpus, Doc, load_corpus
from .delta import advance
from .embed import NONE, Vectors, attach, load as load_embedder
from .entities import FORMAT as ENTITY_FORMAT, EntityIndex
from .facts import FactTable, Triple, extract_facts, facts_from
from .graph import Graph, build_graph
from .grep import grep
from .integrity import Provenance, admit, supported
from .passages import FORMAT as PASSAGES_FORMAT, Passages
from .search import TERMS_FORMAT, Hit, Searcher, View
from .settings import Settings, ranker_for
from .store import PASSAGES, VECTORS, pack_vectors

if TYPE_CHECKING:
    from .store import Snapshot, Store

#: The layout of the persisted evidence check (:meth:`Engine._citing`): another one is a cache miss.
EVIDENCE_FORMAT = "1"
#: A store's own permission check: the passage ids it returns to a group set (of ``among`` only, when given).
Guard = Callable[[frozenset[str], Sequence[str] | None], frozenset[str]]


class Engine:
    """Permission-aware retrieval over one validated corpus."""

    def __init__(self, corpus: Corpus, ranker: str | None = None, facts: Mapping[str, tuple[Triple, ...]] | None = None,
                 cache: Derived | None = None, generation: int = 0, guard: Guard | None = None,
                 vectors: Vectors | None = None):
        """``ranker`` defaults to the corpus's own choice (``corpus.yaml``), else the product default;
        ``facts`` and ``cache`` (built views, the entity index) are derived data a store persisted
        (:meth:`from_snapshot`); ``guard`` is the store's own permission check (PostgreSQL row-level
        security), enforced on top of hoprag's; ``vectors``: the passages' embeddings, in passage
        order (the BM25 rankers then search hybrid)."""
        self.corpus = corpus
        self.passages = Passages.of(corpus.docs)
        self.lexicon = corpus.lexicon
        self.ranker = ranker_for(corpus, ranker)
        self.generation = generation
        self.cache = cache
        self._once = threading.Lock()  # corpus-wide structures (entity index, evidence) are built once
        self._guard = guard
        self._guarded: Lru[frozenset[str], np.ndarray] = Lru(64)
        self.vectors = vectors
        me = weakref.proxy(self)  # the searcher reads back into its engine without a cycle: a retired
        # generation is freed as soon as its last request is done, with no collection to wait for
        self.searcher = Searcher(self.passages, self.ranker, entities=lambda: me.entities, cache=cache,
                                 rows=lambda groups: me.rows(groups), vectors=vectors)
        self.provenance = Provenance(corpus.allowlist)
        #: Each passage's facts; a passage absent states none (a store keeps only those that state some).
        self._facts = dict(facts) if facts is not None else {d.id: extract_facts(d, self.lexicon) for d in self.passages}
        self._evidence: dict[str, tuple[Triple, ...]] = {}
        self._graphs: Lru[frozenset[str], Graph] = Lru(64)
        self._claims: Lru[frozenset[str], Claims] = Lru(64)
        #: Set by a server once every principal's structures are built (``GET /health`` reports it).
        self.warmed = threading.Event()
        #: The generation whose saved derived data this engine started from, and how many passages changed since.
        self.saved, self.changed = generation, 0

    @classmethod
    def from_snapshot(cls, snapshot: "Snapshot", ranker: str | None = None, embedder: str | None = None,
                      where: str = "the store") -> "Engine":
        """An engine over one generation of a store, reusing the derived data and vectors it persisted:
        read at the snapshot's generation, or at an earlier one it carries the change since (then
        applied, by delta). ``embedder``: the setting, checked against the store's vectors by
        :func:`~hoprag.embed.attach`."""
        cfg = snapshot.config
        corpus = Corpus(snapshot.docs, cfg.lexicon, None, cfg.allowlist, cfg.ranker)
        engine = cls(corpus, ranker, snapshot.facts, snapshot.derived, snapshot.generation, snapshot.guard,
                     attach(snapshot.vectors, embedder, where))
        if snapshot.delta is None:
            return engine
        engine.prepared()  # what the change is applied to: loaded at the earlier generation
        return advance(engine, snapshot.delta)

    def prepared(self) -> "Engine":
        """This engine with every corpus-wide structure built or loaded (the entity index, the evidence
        check, the postings its ranker reads): what a change is applied to, and what a store persists."""
        self.derive()
        self.searcher.terms  # noqa: B018 - a cached property: BM25's, and every view's IDF
        if self.ranker == "overlap":
            self.searcher.counts  # noqa: B018 - a cached property
        return self

    def persist(self, cache: Derived) -> None:
        """Save every corpus-wide structure into ``cache`` (a store's, of this engine's generation), the
        packed passages last: a generation whose passages are saved is complete, and a snapshot may
        start from it and apply what changed since."""
        self.prepared()
        searcher = self.searcher
        for kind in ("terms", "counts"):
            if kind in vars(searcher):
                cache.save(kind, TERMS_FORMAT, getattr(searcher, kind).to_bytes())
        cache.save("entities", ENTITY_FORMAT, self.entities.to_bytes())
        if self.vectors is not None:  # a base's vectors: a snapshot starting from it reads them with its passages
            cache.save(VECTORS, self.vectors.embedder.identity, pack_vectors(self.vectors.stored()))
        cache.save("evidence", EVIDENCE_FORMAT, self._write_evidence(
            {pid: self._evidence[pid] for pid in (self.passages.ids[r] for r in self._citing.tolist())}))
        cache.save(PASSAGES, PASSAGES_FORMAT, self.passages.to_bytes(self._facts))

    @classmethod
    def over(cls, store: "Store", ranker: str | None = None, readers: frozenset[str] | None = None,
             embedder: str | None = None, where: str = "the store") -> "Engine":
        """An engine over an open store's newest generation: the one way every process opens one (a front
        door, a server and each of its reloads, ``hoprag index`` preparing what servers load). ``readers``:
        the groups of everyone the process serves (a store enforcing its own permissions returns their rows);
        ``embedder``: the setting, checked against the store's vectors; ``where``: the store, for messages."""
        return cls.from_snapshot(store.snapshot(readers), ranker, embedder, where)

    @classmethod
    def load(cls, path: str | Path, ranker: str | None = None, embedder: str | None = None,
             progress: Callable[[str], None] | None = None) -> "Engine":
        """Load a corpus; ``ranker`` defaults to the one the corpus asks for (:func:`~hoprag.settings.ranker_for`).
        ``embedder`` (a setting other than ``none``) embeds every passage now: a corpus has no store
        to keep vectors in, so a large one is better indexed (``hoprag index``)."""
        corpus = load_corpus(path)
        found = load_embedder(embedder) if embedder not in (None, NONE) else None
        return cls(corpus, ranker, vectors=Vectors.of(found, corpus.docs, progress) if found else None)

    @classmethod
    def open(cls, settings: Settings) -> "Engine":
        """The engine resolved settings name: their store when they name one (kept open for the engine's
        life: it persists the derived data the engine builds), else their corpus; served with their
        (or the corpus's) ranker."""
        if settings.store is not None:
            from .settings import load_operator_access
            from .store import is_database, open_store, redact

            readers = load_operator_access(settings).groups() if is_database(settings.store) else None
            return cls.over(open_store(settings.store), settings.ranker, readers, settings.embedder,
                            redact(settings.store))
        return cls.load(settings.corpus, settings.ranker, settings.embedder,
                        lambda line: print(line, file=sys.stderr, flush=True))

    @cached_property
    def entities(self) -> EntityIndex:
        """The corpus-wide entity vocabulary and mentions, built on first use (prose rankers and walks)."""
        with self._once:
            return load_or_build(self.cache, "entities", ENTITY_FORMAT,
                                 lambda blob: EntityIndex.from_bytes(self.passages, self.lexicon, blob),
                                 lambda: EntityIndex(self.passages, self.lexicon), EntityIndex.to_bytes)

    @cached_property
    def served_groups(self) -> frozenset[str]:
        """Every group some passage is in: what single-user mode's one principal reads."""
        return frozenset().union(*self.passages.group_sets)

    def permits(self, groups: frozenset[str]) -> Callable[[Doc], bool]:
        """The one permission check every caller-facing method applies: hoprag's own
        (:meth:`Doc.readable_by`) and, over a store that enforces its own, the passages the store returns
        to these groups -- so a bug in one still cannot show a caller an unreadable document.
        The store's answer is held per group set for this generation (a store outage does not stop
        callers already served)."""
        key = frozenset(groups)
        if self._guard is None:
            return lambda d: d.readable_by(key)
        allowed, passages = self._allowed(key), self.passages

        def check(d: Doc) -> bool:
            row = passages.row(d.id)
            return d.readable_by(key) and row is not None and bool(allowed[passages.slot_of_row[row]])
        return check

    def rows(self, groups: frozenset[str]) -> np.ndarray:
        """The rows of :attr:`passages` (ascending) :meth:`permits` lets ``groups`` read -- the same two
        checks, hoprag's asked once per distinct group set rather than once per passage."""
        key = frozenset(groups)
        rows = self.passages.readable_rows(key)
        if self._guard is None:
            return rows
        return rows[self._allowed(key)[self.passages.slot_of_row[rows]]]

    def _allowed(self, key: frozenset[str]) -> np.ndarray:
        """The passages the store's own check returns to a group set, as a flag per slot (asked once per
        group set for this generation; a change carries the answer over, asking of the added passages
        only: :mod:`.delta`)."""
        def ask() -> np.ndarray:
            assert self._guard is not None
            flags = np.zeros(len(self.passages.row_of_slot), dtype=bool)
            rows = [r for r in map(self.passages.row, self._guard(key, None)) if r is not None]
            flags[self.passages.slot_of_row[np.array(rows, dtype=np.int64)]] = True
            return flags

        return self._guarded.get(key, ask)

    def derive(self) -> None:
        """Build now what every caller's structures are built from (the entity index and the evidence
        check), once for the corpus; over a store, this loads what an earlier process persisted."""
        self.entities, self._citing  # noqa: B018 - cached properties

    def warm(self, groups: frozenset[str]) -> None:
        """Build now what a caller's requests read (their view, its entity counts, contested claims and
        relation graph), so no request pays for it; each is then kept per group set (and a change carries
        it over, :mod:`.delta`). The relation graph comes last: only the graph tools read it, every search
        reads the claims. (What ``graph_hops`` and ``graph_overview`` add -- the walk's matrices, the named
        entities -- is built on their first call.)"""
        self.view(groups).entities  # noqa: B018 - a cached property
        self.contested(groups)
        self.graph(groups)

    def view(self, groups: frozenset[str]) -> View:
        """The caller's view: their documents, ranker, IDF and entity graph. Keep the engine while you use
        it: the view reads its entity index back through the engine, held weakly so that a retired
        generation is freed as soon as its last request is done."""
        return self.searcher.view(groups)

    @property
    def docs(self) -> Passages:
        return self.passages

    def facts(self, doc: Doc) -> tuple[Triple, ...]:
        """The reader's triples for a document (extracted once at load)."""
        found = self._facts.get(doc.id)
        if found is not None:
            return found
        return () if self.passages.row(doc.id) is not None else extract_facts(doc, self.lexicon)

    def evidence(self, doc: Doc) -> tuple[Triple, ...]:
        """Facts that may be cited: from an admitted document, each with its support span in the text.

        A whole document (:meth:`document`) holds its passages' evidence, in passage order.
        """
        parts = self._whole(doc)
        if parts:
            return tuple(t for p in parts for t in self.evidence(p))
        facts = self.facts(doc)
        if not facts or not self.provenance.admits(doc):
            return ()
        if self.passages.get(doc.id) != doc:  # not this corpus's passage: nothing to remember it by
            return tuple(t for t in facts if supported(t, doc))
        found = self._evidence.get(doc.id)
        if found is None:  # every caller's graph reads the same passages: check each support span once
            found = self._evidence[doc.id] = tuple(t for t in facts if supported(t, doc))
        return found

    def _whole(self, doc: Doc) -> list[Doc] | None:
        """The passages of ``doc`` when it is a whole document joined by :meth:`document`, else ``None``."""
        return None if self.passages.row(doc.id) is not None else self._parts(doc.id)

    def _parts(self, document: str) -> list[Doc] | None:
        """The passages of a chunked document, in order (``None``: no such document)."""
        rows = self.passages.parts().get(document)
        return [self.passages[r] for r in rows] if rows else None

    def admit(self, hits: Sequence[Doc]) -> tuple[list[Doc], list[str]]:
        """The integrity gate with this corpus's provenance controls."""
        return admit(hits, self.provenance)

    def table(self, docs: Sequence[Doc]) -> FactTable:
        """The evidence of ``docs`` by ``(subject, relation)``: only what the integrity gate admits."""
        return facts_from(docs, self.evidence)

    def search(self, query: str, groups: frozenset[str], k: int = 3) -> list[Hit]:
        """The caller's top-``k`` hits: authorization picks the view before anything is scored."""
        return self.view(groups).search(query, k)

    def search_docs(self, query: str, groups: frozenset[str], k: int = 3) -> tuple[Doc, ...]:
        """The chapter's ``search``: just the documents, best first."""
        return tuple(h.doc for h in self.search(query, groups, k))

    def fetch(self, doc_id: str, groups: frozenset[str]) -> Doc | None:
        """A document by id, or ``None`` -- the same for unknown and unauthorized ids."""
        doc = self.passages.get(doc_id)
        return doc if doc is not None and self.permits(groups)(doc) else None

    def document(self, doc_id: str, groups: frozenset[str]) -> Doc | None:
        """The whole document a passage id or document id belongs to: its passages joined in order,
        ``None`` alike for unknown and unauthorized ids (a document's passages share its groups)."""
        doc = self.passages.get(doc_id)
        parts = self._parts(doc.document_id if doc else doc_id)
        if not parts:
            return self.fetch(doc_id, groups)
        if not all(map(self.permits(groups), parts)):
            return None
        text = "\n\n".join(p.text for p in parts)
        first = parts[0]
        return Doc(first.document, text, first.groups, first.trusted, first.title, first.source, first.updated,
                   path=first.path, front_matter=first.front_matter)

    def _stated(self, groups: frozenset[str]) -> Iterator[tuple[str, dt.date | None, tuple[Triple, ...]]]:
        """``(doc id, updated, evidence)`` of each passage with citable facts the caller may read, in corpus
        order: what their relation graph and their contested claims are built from."""
        ids, updated, evidence = self.passages.ids, self.passages.updated, self._evidence
        mine = np.intersect1d(self._citing, self.rows(frozenset(groups)), assume_unique=True).tolist()
        return ((ids[r], updated[r], evidence[ids[r]]) for r in mine)

    def graph(self, groups: frozenset[str]) -> Graph:
        """The caller's trusted, authorized entity graph (built once per group set)."""
        key = frozenset(groups)
        return self._graphs.get(key, lambda: build_graph(self._stated(key)))

    @cached_property
    def _citing(self) -> np.ndarray:
        """The rows (ascending) of passages with citable facts: the only ones that can add an edge.
        Their evidence is checked once for every caller's graph, and persisted like a view (so a
        store's next process reads it rather than every passage); :meth:`evidence` reads it."""
        with self._once:
            found = load_or_build(self.cache, "evidence", EVIDENCE_FORMAT, self._read_evidence, self._check_evidence,
                                  self._write_evidence)
        self._evidence.update(found)
        return np.sort(np.fromiter(map(self.passages.row, found), dtype=np.int64, count=len(found)))

    def _check_evidence(self) -> dict[str, tuple[Triple, ...]]:
        """The integrity gate over every passage stating facts, in one pass: the facts of admitted
        passages with their support span in the text (none for a passage that has no such fact)."""
        admits, found = self.provenance.admits, {}
        for pid, facts in self._facts.items():
            doc = self.passages.get(pid) if facts else None
            if doc is not None and admits(doc):
                kept = tuple(t for t in facts if supported(t, doc))
                if kept:
                    found[pid] = kept
        return found

    def _write_evidence(self, found: Mapping[str, tuple[Triple, ...]]) -> bytes:
        """Which passages cite, and which of each one's facts the gate kept (one flag per fact)."""
        keep = [t in kept for pid, kept in found.items() for t in self._facts[pid]]
        rows = [self.passages.row(pid) for pid in found]
        return pack({"rows": np.array(rows, dtype=np.int64), "keep": np.array(keep, dtype=np.uint8)})

    def _read_evidence(self, blob: bytes) -> dict[str, tuple[Triple, ...]] | None:
        f = unpack(blob)
        if f is None:
            return None
        ids, keep, at, found = self.passages.ids, f["keep"].tolist(), 0, {}
        for row in f["rows"].tolist():
            facts = self._facts[ids[row]]
            found[ids[row]] = tuple(compress(facts, keep[at:at + len(facts)]))
            at += len(facts)
        return found

    def contested(self, groups: frozenset[str]) -> Claims:
        """What is contested among the facts of the caller's graph (built once per group set, from those facts
        alone; not from the networkx graph, which a search that reports claims need not wait for)."""
        key = frozenset(groups)
        return self._claims.get(key, lambda: Claims(self._stated(key)))

    def claims(self, doc: Doc, groups: frozenset[str]) -> tuple[Claim, ...]:
        """The standing of each of ``doc``'s evidence facts in the caller's view (parallel to :meth:`evidence`).

        Judged over the caller's whole graph, not over what a search happened to return; documents
        the caller cannot read take no part (:mod:`.claims`).
        """
        contested = self.contested(groups)
        parts = self._whole(doc) or [doc]  # a whole document: each fact judged as its passage states it
        return tuple(contested.of(p.id, t) for p in parts for t in self.evidence(p))

    def grep(self, needle: str, groups: frozenset[str], k: int | None = None) -> list[tuple[str, str]]:
        return grep(self.passages.take(self.rows(groups)), needle, k)
