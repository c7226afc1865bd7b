"""Vectors as derived data and hybrid search: ``hoprag index`` embeds only new or changed text, in the
same commit, into both stores; vectors go with their passage; serving checks the embedder; dense
scores are computed over the caller's view only."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from fake_models import HashEmbedder
from hoprag import embed
from hoprag.corpus import Corpus, Doc
from hoprag.embed import EmbedderError, Vectors
from hoprag.engine import Engine
from hoprag.ingest import index
from hoprag.lexicon import Lexicon
from hoprag.search import fuse
from hoprag.store import open_store
from ingest_tree import HERON_OVERVIEW, build
from test_store import EVERYONE, new_store


class Counting:
    """An embedder that counts the passages it embeds."""

    def __init__(self, inner):
        self.inner, self.count = inner, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def passages(self, texts):
        self.count += len(texts)
        return self.inner.passages(texts)


@pytest.fixture
def hashed(monkeypatch):
    """The test embedder, loadable by its name as a packaged one is (what serving a store does)."""
    model = HashEmbedder()
    monkeypatch.setitem(embed._NAMED, "hash", lambda: model)
    monkeypatch.setattr(embed, "_LOADED", {})
    return model


def run_index(src, db, model):
    store = open_store(db, create=True)
    try:
        return index(src, store, ["engineering"], embedder=model)
    finally:
        store.close()


def stored_rows(db: str) -> dict[str, bytes | None]:
    store = open_store(db)
    try:
        return {pid: key for pid, (_, key) in store.embedded().items()}
    finally:
        store.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_index_embeds_only_new_or_changed_text_and_vectors_go_with_their_passage(tmp_path, request, kind, hashed):
    src, db = build(tmp_path), new_store(kind, tmp_path, "v", request)
    counting = Counting(hashed)
    first = run_index(src, db, counting)
    total = first.total_passages
    assert first.embedded == counting.count == total and first.reused == 0
    assert all(stored_rows(db).values())  # every passage has its vector, in the same commit
    again = run_index(src, db, counting)
    assert (again.embedded, again.committed, counting.count) == (0, False, total)  # nothing changed: nothing embedded
    # a changed file: its unchanged section keeps its vector, the new one is embedded
    (src / "notes/heron.md").write_text(f"# Heron overview\n\n{HERON_OVERVIEW}\n\n## Team\n\n" + "The team moved to "
                                        "Mondays. " * 40 + "\n")
    changed = run_index(src, db, counting)
    assert changed.embedded == 1 and changed.reused == 1 and counting.count == total + 1
    (src / "notes/deep/quill.txt").unlink()
    gone = run_index(src, db, counting)
    rows = stored_rows(db)
    assert "notes/deep/quill.txt" not in rows and len(rows) == total - 1 and gone.embedded == 0
    snapshot = open_store(db).snapshot(EVERYONE)
    assert snapshot.vectors is not None and snapshot.vectors.matrix.shape == (total - 1, hashed.dim)
    assert snapshot.vectors.missing == 0 and snapshot.vectors.matrix.dtype == np.float16
    lexical = run_index(src, db, None)  # --embedder none: no vector outlives its embedder
    assert lexical.committed and not any(stored_rows(db).values())
    assert open_store(db).snapshot(EVERYONE).vectors is None
    back = run_index(src, db, counting)  # and back: every passage embedded again
    assert back.embedded == total - 1 and all(stored_rows(db).values())


def test_a_store_indexed_before_vectors_is_upgraded_and_embedded(tmp_path, hashed):
    src, db = build(tmp_path), str(tmp_path / "old.db")
    run_index(src, db, None)
    conn = sqlite3.connect(db)
    conn.executescript("DROP TABLE removed; DROP INDEX passages_generation; ALTER TABLE passages DROP COLUMN generation; "
                       "ALTER TABLE passages DROP COLUMN vector; ALTER TABLE passages DROP COLUMN embedded; "
                       "UPDATE meta SET value = '2' WHERE key = 'schema';")
    conn.close()
    with pytest.raises(ValueError, match="store schema 2 is older than this hoprag's 4: run `hoprag index SRC"):
        open_store(db)
    report = run_index(src, db, hashed)
    assert report.embedded == report.total_passages and report.committed


def test_serving_checks_the_embedder_against_the_store(tmp_path, hashed, monkeypatch, caplog):
    src, db = build(tmp_path), str(tmp_path / "s.db")
    run_index(src, db, hashed)
    snapshot = open_store(db).snapshot()
    assert Engine.from_snapshot(snapshot).vectors is not None  # unset: the store's own
    assert Engine.from_snapshot(snapshot, embedder="hash").vectors is not None
    assert Engine.from_snapshot(snapshot, embedder="none").vectors is None  # lexical, explicitly
    with pytest.raises(EmbedderError, match=r"was indexed with embedder hash, not minilm: serve it with --embedder "
                                            r"hash \(or leave it unset\), or re-index with --embedder minilm"):
        Engine.from_snapshot(snapshot, embedder="minilm")
    other = HashEmbedder(dim=32)
    monkeypatch.setitem(embed._NAMED, "hash", lambda: other)
    monkeypatch.setattr(embed, "_LOADED", {})
    with pytest.raises(EmbedderError, match="its vectors were made by hash/test/48, this machine's hash is "
                                            "hash/test/32: re-index"):
        Engine.from_snapshot(snapshot)

    def cannot() -> None:
        raise EmbedderError("embedder hash needs hashlib2: pip install hashlib2")

    monkeypatch.setitem(embed._NAMED, "hash", cannot)
    monkeypatch.setattr(embed, "_LOADED", {})
    with caplog.at_level(logging.WARNING, "hoprag.embed"):
        assert Engine.from_snapshot(snapshot, where="s.db").vectors is None  # falls back to lexical, saying so
    assert caplog.messages == ["s.db: lexical search only: embedder hash needs hashlib2: pip install hashlib2"]
    lexical = str(tmp_path / "lexical.db")
    run_index(src, lexical, None)
    with pytest.raises(EmbedderError, match="holds no passage vectors: re-index it with .* --embedder minilm"):
        Engine.from_snapshot(open_store(lexical).snapshot(), embedder="minilm", where=lexical)


def test_a_vector_of_another_dimension_is_missing_and_said(tmp_path, hashed, caplog):
    src, db = build(tmp_path), str(tmp_path / "d.db")
    run_index(src, db, hashed)
    conn = sqlite3.connect(db)
    conn.executescript("UPDATE passages SET vector = x'0000' WHERE id = 'notes/deep/quill.txt'; DELETE FROM derived;")
    conn.close()
    snapshot = open_store(db).snapshot()
    assert snapshot.vectors.missing == 1
    with caplog.at_level(logging.WARNING, "hoprag.embed"):
        Engine.from_snapshot(snapshot, where="d.db")
    assert any("1 passages have no vector and rank by their words only: re-index" in m for m in caplog.messages)


def corpus() -> Corpus:
    docs = (Doc("pub1", "The release gate checks telemetry before a deploy.", frozenset({"pub"}), title="Release gate"),
            Doc("pub2", "Budgets are reviewed every quarter by finance.", frozenset({"pub"}), title="Budget review"),
            Doc("pub3", "Region failover moves traffic between clusters.", frozenset({"pub"}), title="Failover"),
            Doc("sec1", "Secret telemetry gate plan for the release.", frozenset({"sec"}), title="Secret plan"))
    return Corpus(docs, Lexicon(()))


@pytest.mark.parametrize("ranker", ["bm25", "bm25-titles", "dense"])
def test_dense_scores_are_computed_over_the_callers_view_only(ranker):
    c, model = corpus(), HashEmbedder()
    full = Engine(c, ranker, vectors=Vectors.of(model, c.docs))
    mine = Corpus(tuple(d for d in c.docs if "pub" in d.groups), Lexicon(()))
    ref = Engine(mine, ranker, vectors=Vectors.of(model, mine.docs))
    for query in ("secret telemetry gate plan release", "telemetry", "budget quarter", "sec1"):
        got = [(h.doc.id, h.score, h.agreed, h.stands_out) for h in full.search(query, frozenset({"pub"}), 10)]
        assert got == [(h.doc.id, h.score, h.agreed, h.stands_out) for h in ref.search(query, frozenset({"pub"}), 10)]
        assert "sec1" not in [i for i, *_ in got]
    view = full.view(frozenset({"pub"}))
    assert view.matrix.shape == (3, model.dim) and view.dense == ("dense" if ranker == "dense" else "hybrid")


def test_fusion_equals_its_formula_over_every_passage():
    """:func:`fuse` computes the dense part only above the pool-th cosine; the scores are exactly the
    formula's over every passage (ties, empty rankings and equal cosines included)."""
    def formula(lexical, similar, floor, weight, pool):
        best = lexical.max() if len(lexical) else 0.0
        lex = lexical / best if best > 0 else np.zeros_like(lexical)
        dense = np.zeros_like(lex)
        top = similar.max()
        low = np.partition(similar, len(similar) - pool)[len(similar) - pool] if len(similar) > pool else similar.min()
        if top > low:
            dense = np.clip((similar - low) / (top - low), 0.0, 1.0)
        dense[(lex <= 0) & (similar < floor)] = 0.0
        return weight * dense + (1 - weight) * lex

    rng = np.random.default_rng(7)
    for trial in range(500):
        n = int(rng.integers(1, 120))
        lexical = np.where(rng.random(n) < 0.5, rng.random(n) * 10, 0.0) if trial % 6 else np.zeros(n)
        similar = (rng.standard_normal(n) / 3).astype(np.float32)
        if trial % 4 == 0:
            similar = np.round(similar, 1).astype(np.float32)  # ties at the pool-th cosine
        if trial % 9 == 0:
            similar[:] = 0.3
        weight, pool = float(rng.choice([0.0, 0.5, 0.8, 1.0])), int(rng.choice([1, 3, 20]))
        assert np.array_equal(fuse(lexical, similar, 0.25, weight, pool), formula(lexical, similar, 0.25, weight, pool))


def test_overlap_stays_lexical_and_dense_needs_vectors():
    c = corpus()
    engine = Engine(c, "overlap", vectors=Vectors.of(HashEmbedder(), c.docs))
    assert engine.view(frozenset({"pub"})).dense is None  # the chapter's ranker: its tables reproduce
    with pytest.raises(ValueError, match="ranker dense needs passage vectors: index with an embedder"):
        Engine(c, "dense")


def test_fusion_keeps_dense_gains_and_drops_what_neither_ranking_supports():
    lexical = np.array([0.0, 4.0, 2.0, 0.0])
    similar = np.array([0.9, 0.3, 0.5, 0.05])
    fused = fuse(lexical, similar, floor=0.2, weight=0.8, pool=3)
    assert fused.argmax() == 0  # no query word, but by far the closest: first at a dense weight of 0.8
    assert fused[3] == 0  # no query word and below the floor: not a hit
    assert fuse(lexical, similar, 0.2, weight=0.0, pool=3).argmax() == 1  # weight 0: BM25's order
    assert np.array_equal(fuse(np.zeros(2), np.zeros(2), 0.2), np.zeros(2))


@pytest.mark.slow  # three CLI processes, the real model embedding in one
def test_hoprag_index_embeds_with_the_default_and_serving_a_mismatch_is_one_line(tmp_path):
    """The front doors: the packaged default embeds with a progress line and a summary; asking a store
    for another embedder is one line and exit 1."""
    src = build(tmp_path)
    (tmp_path / "access.yaml").unlink()
    db = tmp_path / "cli.db"
    cli = [sys.executable, "-c", "from hoprag_cli.main import main; main()"]
    done = subprocess.run([*cli, "index", str(src), "--store", str(db)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "embedding 7 passages with minilm ..." in done.stderr
    assert "vectors: 7 passages embedded with minilm in " in done.stdout
    found = subprocess.run([*cli, "search", "which service runs in which region", "--store", str(db), "--json"],
                           capture_output=True, text=True, timeout=300)
    assert found.returncode == 0 and '"id": "basalt.html"' in found.stdout, found.stderr
    wrong = subprocess.run([*cli, "search", "x", "--store", str(db), "--embedder", "e5-small"], capture_output=True,
                           text=True, timeout=300)
    assert wrong.returncode == 1 and "Traceback" not in wrong.stderr
    assert wrong.stderr.strip().splitlines()[-1].endswith("was indexed with embedder minilm, not e5-small: serve it "
                                                          "with --embedder minilm (or leave it unset), or re-index "
                                                          "with --embedder e5-small")


def test_re_indexing_keeps_the_stores_embedder_unless_told(tmp_path, hashed):
    from typer.testing import CliRunner

    from hoprag_cli.main import app

    src = build(tmp_path)
    db = str(tmp_path / "keep.db")
    first = CliRunner().invoke(app, ["index", str(src), "--store", db, "--embedder", "hash", "--quiet"])
    assert first.exit_code == 0 and "vectors: 7 passages embedded with hash" in first.stdout, first.output
    (src / "notes/deep/quill.txt").write_text("Quill stores telemetry in Basalt, twice a day.\n")
    again = CliRunner().invoke(app, ["index", str(src), "--store", db, "--quiet"])  # unset: the store's own
    assert again.exit_code == 0 and "vectors: 1 passages embedded with hash" in again.stdout, again.output
    off = CliRunner().invoke(app, ["index", str(src), "--store", db, "--quiet", "--embedder", "none"])
    assert off.exit_code == 0 and "vectors: none (lexical search only)" in off.stdout
    assert open_store(db).embedding() is None


def test_a_hybrid_hit_is_agreed_only_when_the_word_and_the_meaning_rankings_both_put_it_first():
    """``agreed`` is the hit first in the lexical ranking alone and in the dense ranking alone, each over the
    caller's view; a lexical or a dense search alone agrees on nothing. Both outcomes occur below."""
    c, model = corpus(), HashEmbedder()
    vectors = Vectors.of(model, c.docs)
    hybrid, alone = Engine(c, "bm25-titles", vectors=vectors), Engine(c, "bm25-titles")
    dense, pub = Engine(c, "dense", vectors=vectors), frozenset({"pub"})
    outcomes = set()
    for query in ("release gate telemetry", "telemetry", "budget quarter finance", "traffic failover clusters",
                  "finance reviews the release", "gate quarter traffic", "secret telemetry gate plan release"):
        hits = hybrid.search(query, pub, 10)
        words, meaning = alone.search(query, pub, 10), dense.search(query, pub, 10)
        both = words[0].doc.id if words and meaning and words[0].doc.id == meaning[0].doc.id else None
        assert [h.doc.id for h in hits if h.agreed] == ([both] if both else []), query
        assert not any(h.agreed for h in (*words, *meaning))
        outcomes.add(both is not None)
    assert outcomes == {True, False}


def test_a_hits_standing_is_its_cosine_in_standard_deviations_above_the_views_mean():
    """``stands_out`` measures how far the embedding singles a passage out among the caller's documents (over the view
    only: the test above holds it equal to a corpus of the caller's documents alone); without vectors it is 0."""
    c, model, pub = corpus(), HashEmbedder(), frozenset({"pub"})
    for ranker in ("bm25-titles", "dense"):
        engine = Engine(c, ranker, vectors=Vectors.of(model, c.docs))
        view = engine.view(pub)
        for query in ("release gate telemetry", "budget quarter finance", "traffic failover clusters"):
            cosines = view.similarity(query)
            want = {d.id: (x - cosines.mean()) / cosines.std() for d, x in zip(view.docs, cosines)}
            hits = engine.search(query, pub, 10)
            assert hits and all(h.stands_out == pytest.approx(want[h.doc.id]) for h in hits), query
            assert max(h.stands_out for h in hits) > 0
    assert [h.stands_out for h in Engine(c, "bm25-titles").search("release gate telemetry", pub, 10)] == [0.0]


def test_an_untrusted_hit_carries_no_standing_and_no_agreement():
    """Coverage, highlights, agreement and standing are evidence: an untrusted hit has none of them (docs/tools.md), so
    no client reads the embedding's verdict on text that must never become evidence. Control: the same document
    trusted stands out and is agreed on."""
    from hoprag.access import Principal
    from mcp_server import tools

    def first(trusted: bool) -> dict:
        docs = (Doc("gate", "The release gate checks telemetry before a deploy.", frozenset({"pub"}),
                    title="Release gate", trusted=trusted),
                *(d for d in corpus().docs if d.id != "pub1"))
        engine = Engine(Corpus(docs, Lexicon(())), "bm25-titles", vectors=Vectors.of(HashEmbedder(), docs))
        hits = tools.search(engine, Principal("p", frozenset({"pub"})), "release gate telemetry", 5).results
        return next(h.model_dump() for h in hits if h.id == "gate")

    assert first(True)["agreed"] and first(True)["stands_out"] > 0
    assert not first(False)["agreed"] and first(False)["stands_out"] == 0.0
