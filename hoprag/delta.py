"""A change to a store applied to a running engine by what changed, never by rebuilding it.

A store logs what each commit removed and added (:meth:`hoprag.store.Store.delta`); :func:`advance`
makes the next generation's engine from the current one and that :class:`Delta`: the passage columns
spliced (:mod:`.splice`), the corpus-wide postings grown (:mod:`.postings`), the entity index and
every cached view's entity counts moved, the evidence of the added passages checked, and each
caller's relation graph and contested claims amended only where the change touched them. The
current engine is never modified -- its readers keep answering from it -- and the new one is
swapped in whole, so no request sees a half-applied change. The result equals an engine built
fresh from the new generation (``tests/test_delta.py`` checks every tool against one).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, TypeVar

import numpy as np

from .corpus import Corpus, Doc
from .integrity import supported
from .passages import Passages
from .facts import Triple
from .splice import Splice

if TYPE_CHECKING:
    from .embed import Vectors
    from .engine import Engine

T = TypeVar("T")

#: Compact (drop dead slots, fold every postings tail into its base) once this share of the slots is
#: dead or in a tail: a change then costs what it adds, and compaction, linear in the corpus, is rare.
COMPACT_SHARE = 0.02
#: ... and at least this many slots, so a small corpus is not compacted at every change.
COMPACT_MIN = 500
#: Save a generation's derived data anew (a base snapshots start from) once this share of its passages
#: changed since the saved one: a start then applies little, and saving, linear in the corpus, is rare.
#: Measured at 100,000 passages (benchmarks/RESULTS.md section 14): a start applying a change pays ≈ 0.1-0.15 s
#: of copying whatever its size plus ≈ 1-1.5 ms per changed passage, and a save costs ≈ 3.5 CPU s; so 0.1 %
#: adds at most ≈ 0.25 s to a cold start (0.25 % added ≈ 0.45 s, 1 % ≈ 1 s) for ≈ 35 ms of saving per changed
#: passage -- within the goal of 0.2 CPU s per changed file.
SAVE_SHARE = 0.001


@dataclass(frozen=True)
class Delta:
    """What changed in a store from generation ``since`` to ``generation``, as one reader sees it:
    the passages gone (``removed``, ids; a changed passage's old version is one of them) and the
    passages new since (``added``, in the store's order, with the store ``files`` they came from and
    the ``facts`` of those that state some, and ``vectors``: each added passage's stored embedding,
    float16 bytes or ``None``, parallel to ``added``; empty when the store holds none)."""

    since: int
    generation: int
    removed: frozenset[str]
    added: tuple[Doc, ...]
    files: tuple[str, ...]
    facts: Mapping[str, tuple[Triple, ...]]
    vectors: tuple[bytes | None, ...] = ()

    def __len__(self) -> int:
        return len(self.removed) + len(self.added)


def save_due(engine: "Engine", since: int = 0) -> bool:
    """Whether enough changed since ``engine``'s saved derived data to save its own (:data:`SAVE_SHARE`);
    ``since``: the count of changes (``engine.changed``) at which a later base was saved, if one was."""
    return engine.changed - since > max(1, SAVE_SHARE * len(engine.passages))


def advance(engine: "Engine", delta: Delta) -> "Engine":
    """The engine of ``delta.generation``, made from ``engine`` (of ``delta.since``) by what changed."""
    from .engine import Engine

    if delta.since != engine.generation:
        raise ValueError(f"a change from generation {delta.since} cannot apply to generation {engine.generation}")
    old = engine.passages
    order = sorted(range(len(delta.added)), key=lambda i: _key(delta.added[i], delta.files[i]))
    added = [delta.added[i] for i in order]
    files = [delta.files[i] for i in order]
    removed = sorted(r for r in map(old.row, delta.removed) if r is not None)
    splice = Splice.of(len(old), removed, old.key, [_key(d, f) for d, f in zip(added, files)])
    spliced = old.spliced(splice, added, files)
    renumber = _renumber(spliced, engine)
    passages = spliced.renumbered(renumber) if renumber is not None else spliced
    slots = spliced.row_of_slot  # the structures grow in these slots, then are renumbered with the passages
    gone = {old.ids[r] for r in removed}
    facts = _without(engine._facts, gone)
    facts.update({pid: f for pid, f in delta.facts.items() if f})
    corpus = engine.corpus
    new = Engine(Corpus(passages, corpus.lexicon, None, corpus.allowlist, corpus.ranker), engine.ranker, facts,
                 None, delta.generation, engine._guard, _vectors(engine, delta, order, splice))
    new.saved, new.changed = engine.saved, engine.changed + len(delta)
    gained = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    if "entities" in vars(engine):
        index, *gained = engine.entities.advanced(passages, splice, added, slots, renumber)
        vars(new)["entities"] = index
    me = weakref.proxy(new)  # as Engine does: no cycle through its searcher
    new.searcher = engine.searcher.advanced(passages, splice, added, slots, renumber, lambda: me.entities,
                                            lambda groups: me.rows(groups), new.vectors)
    _carry_guard(engine, new, added, renumber)
    citing = _carry_evidence(engine, new, gone, splice, added)
    for key, view in engine.searcher._views.items():
        fresh = new.searcher.view(key)
        if "entities" in vars(view) and "entities" in vars(engine):
            vars(fresh)["entities"] = view.entities.advanced(new.entities, fresh.rows, splice, tuple(gained))
    if citing is not None:
        _carry_graphs(engine, new, gone, citing)
    return new


def _vectors(engine: "Engine", delta: Delta, order: list[int], splice: Splice) -> "Vectors | None":
    """The dense matrix of the next generation: the kept rows' vectors carried over, each added
    passage's stored one in its row (a zero row for one stored without, as a fresh load reads it)."""
    if engine.vectors is None:
        return None
    old = engine.vectors.matrix
    rows = np.zeros((len(order), old.shape[1]), dtype=old.dtype)
    for n, i in enumerate(order):
        blob = delta.vectors[i] if delta.vectors else None
        if blob is not None and len(blob) == 2 * old.shape[1]:
            rows[n] = np.frombuffer(blob, dtype="<f2")
    return engine.vectors.spliced(splice.array(old, rows))


def _without(mapping: Mapping[str, T], gone: set[str]) -> dict[str, T]:
    """A copy of ``mapping`` without the keys ``gone`` (copied whole, then trimmed: cheaper than filtering)."""
    out = dict(mapping)
    for key in gone:
        out.pop(key, None)
    return out


def _key(doc: Doc, file: str) -> tuple[str, str, int]:
    return file, doc.document_id, doc.position


def _renumber(passages: Passages, engine: "Engine") -> np.ndarray | None:
    """The new slot of every slot (``-1``: dead) when it is time to compact, else ``None``: once the slots
    that are dead or added since the postings' base outgrow :data:`COMPACT_SHARE` of the corpus."""
    searcher = engine.searcher
    added = max((getattr(searcher, kind).tail_slots for kind in ("terms", "counts") if kind in vars(searcher)),
                default=0)
    alive = passages.row_of_slot >= 0
    if len(alive) - len(passages) + added <= max(COMPACT_MIN, COMPACT_SHARE * len(passages)):
        return None
    return np.where(alive, np.cumsum(alive) - 1, -1)


def _carry_guard(engine: "Engine", new: "Engine", added: list[Doc], renumber: np.ndarray | None) -> None:
    """The store's own permission answers, carried over: each group set's flags moved to the new slots
    (a removed passage's slot is held by no row), and the store asked about the added passages only."""
    if engine._guard is None:
        return
    passages = new.passages
    for key, flags in engine._guarded.items():
        grown = np.zeros(len(passages.row_of_slot), dtype=bool)
        if renumber is None:
            grown[:len(flags)] = flags
        else:
            alive = renumber >= 0
            grown[renumber[alive]] = np.concatenate([flags, np.zeros(len(alive) - len(flags), dtype=bool)])[alive]
        candidates = [d.id for d in added if d.readable_by(key)]
        more = engine._guard(key, candidates) if candidates else ()
        grown[passages.slot_of_row[np.array([passages.row(pid) for pid in more], dtype=np.int64)]] = True
        new._guarded.put(key, grown)


def _carry_evidence(engine: "Engine", new: "Engine", gone: set[str], splice: Splice,
                    added: list[Doc]) -> list[int] | None:
    """The evidence check carried over: the added passages checked, the removed ones dropped. Returns
    the added citing passages' rows (``None``: the check was never built, so nothing depends on it)."""
    if "_citing" not in vars(engine):
        return None
    evidence = _without(engine._evidence, gone)
    admits, citing = new.provenance.admits, []
    for doc, row in zip(added, splice.placed.tolist()):
        facts = new._facts.get(doc.id)
        kept = tuple(t for t in facts if supported(t, doc)) if facts and admits(doc) else ()
        if kept:
            evidence[doc.id] = kept
            citing.append(row)
    new._evidence = evidence
    rows = splice.new_of_old[engine._citing]
    vars(new)["_citing"] = np.sort(np.concatenate([rows[rows >= 0], np.array(citing, dtype=np.int64)]))
    return citing


def _carry_graphs(engine: "Engine", new: "Engine", gone: set[str], citing: list[int]) -> None:
    """Each cached caller's relation graph and contested claims, amended only where the change touched
    them: one none of whose documents left and no readable citing passage joined is kept as is."""
    passages, ids, evidence = new.passages, new.passages.ids, engine._evidence
    change: dict[frozenset[str], tuple[dict, list]] = {}

    def of(key: frozenset[str], updated: Mapping[str, object]) -> tuple[dict, list]:
        """What left the caller's graph (id -> its evidence) and what joined it, asked once per group set."""
        if key not in change:
            permits = new.permits(key)
            joined = [(ids[r], passages.updated[r], new._evidence[ids[r]]) for r in citing if permits(passages[r])]
            change[key] = {pid: evidence[pid] for pid in gone if pid in updated}, joined
        return change[key]

    for key, graph in engine._graphs.items():
        left, joined = of(key, graph.updated)
        new._graphs.put(key, graph.amended(left, joined, passages.row) if left or joined else graph)
    for key, claims in engine._claims.items():
        left, joined = of(key, claims.updated)
        new._claims.put(key, claims.amended(left, joined) if left or joined else claims)
