"""The columnar corpus: packed passages equal the documents they were packed from, a store starts
from one blob without building a passage object, and the row-level permission check is the
document-level one."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from hypothesis import given, settings, strategies as st

import hoprag.passages as passages_module
from conftest import examples
from hoprag.corpus import Doc
from hoprag.engine import EVIDENCE_FORMAT, Engine
from hoprag.ingest import index
from hoprag.passages import FORMAT, Passages
from hoprag.splice import Splice
from hoprag.store import PASSAGES, open_store
from ingest_tree import build

ENG, FIN = frozenset({"engineering"}), frozenset({"finance"})

DOCS = (
    Doc("a", "Plain ASCII text.", ENG, True, "Alpha", "file:///a.md", dt.date(2026, 1, 2)),
    Doc("b", "Ünïcödé — 東京 and an emoji 🛰️ in the text.", FIN, False, "Beta ✓", "upload://b", None,
        (("Beta", "region", "東京"),)),
    Doc("c#1", "Second passage of a chunked document.", ENG | FIN, True, "Gamma", "file:///c.md", dt.date(1999, 12, 31),
        (), "c.md", 1, "Setup › Install"),
    Doc("d", "x", frozenset({"ops"}), True),
)
FACTS = {"a": (("Alpha", "owner", "Maya"),), "c#1": (("Gamma", "depends_on", "Beta"), ("Gamma", "region", "eu"))}


def test_packed_passages_equal_the_docs_and_facts_they_were_packed_from():
    loaded, facts = Passages.from_bytes(Passages.of(DOCS).to_bytes(FACTS))
    assert tuple(loaded) == DOCS and loaded == Passages.of(DOCS)
    assert [d.triples for d in loaded] == [None, (("Beta", "region", "東京"),), (), None]  # none and empty kept apart
    assert facts == FACTS  # passages that state no fact are left out
    assert loaded.ids == [d.id for d in DOCS] and loaded.updated == [d.updated for d in DOCS]
    assert loaded.get("c#1") == DOCS[2] and loaded.get("zz") is None and loaded.row("d") == 3
    assert dict(loaded.parts()) == {"c.md": [2]}
    assert loaded[-1] == DOCS[-1] and loaded[1:3] == DOCS[1:3]
    assert Passages.from_bytes(b"hoprag-arrays-1\n" + bytes(64)) is None  # another layout: a cache miss
    blob = Passages.of(DOCS).to_bytes(FACTS)
    assert Passages.from_bytes(blob[:len(blob) // 2]) is None  # and so is a damaged one, never a misread


def test_a_packed_passage_is_built_when_it_is_read(monkeypatch):
    built: list[str] = []

    class Counted(Doc):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self.id)

    blob = Passages.of(DOCS).to_bytes(FACTS)
    monkeypatch.setattr(passages_module, "Doc", Counted)
    loaded, _ = Passages.from_bytes(blob)
    assert (len(loaded), loaded.readable_rows(FIN).tolist(), loaded.row("c#1")) == (4, [1, 2], 2)
    assert built == []  # ids, group sets and dates are columns: nothing built to start
    assert loaded[2] is loaded[2] and [d.id for d in loaded.take([0, 2])] == ["a", "c#1"]
    assert built == ["c#1", "a"]  # each row once, when first read


group_names = st.sampled_from(["engineering", "finance", "ops", "legal"])


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.frozensets(group_names, min_size=1), max_size=30), st.frozensets(group_names))
def test_readable_rows_are_the_rows_the_document_check_admits(doc_groups, caller):
    docs = [Doc(f"p{i}", "text", g) for i, g in enumerate(doc_groups)]
    expected = [i for i, d in enumerate(docs) if d.readable_by(caller)]
    assert Passages.of(docs).readable_rows(caller).tolist() == expected
    loaded, _ = Passages.from_bytes(Passages.of(docs).to_bytes({}))
    assert loaded.readable_rows(caller).tolist() == expected


def test_a_store_starts_from_its_packed_passages_and_evidence(tmp_path: Path, monkeypatch):
    src = build(tmp_path)
    db = tmp_path / "s.db"
    store = open_store(db, create=True)
    index(src, store, ["engineering"])
    generation = store.generation()
    assert store.load_derived(generation, PASSAGES, FORMAT) is None
    first = store.snapshot()  # read row by row, then packed for the next reader of this generation
    assert store.load_derived(generation, PASSAGES, FORMAT) is not None
    again = store.snapshot()
    assert (again.docs, again.facts) == (first.docs, first.facts) and len(first.docs) > 5
    built = Engine.from_snapshot(first, "bm25-titles")
    for groups in (ENG, FIN):
        built.warm(groups)
    assert store.load_derived(generation, "evidence", EVIDENCE_FORMAT) is not None

    made: list[str] = []
    real = Doc.__init__

    def counted(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self.id)

    monkeypatch.setattr(Doc, "__init__", counted)
    loaded = Engine.from_snapshot(store.snapshot(), "bm25-titles")
    for groups in (ENG, FIN):
        loaded.warm(groups)
    assert made == []  # a warm start builds no passage object: everything it reads is persisted columns
    monkeypatch.setattr(Doc, "__init__", real)
    for groups in (ENG, FIN):
        assert loaded.graph(groups).edges() == built.graph(groups).edges()
        assert loaded.graph(groups).updated == built.graph(groups).updated
        for query in ("Basalt region", "Heron team", "Quill pager rotation"):
            assert ([(h.doc, h.score) for h in loaded.search(query, groups, 5)]
                    == [(h.doc, h.score) for h in built.search(query, groups, 5)])
            assert all(loaded.evidence(h.doc) == built.evidence(h.doc) for h in built.search(query, groups, 5))
    with sqlite3.connect(db) as raw:  # damaged on disk: read row by row again, not misread
        raw.execute("UPDATE derived SET data = substr(data, 1, length(data) / 2) WHERE kind = ?", (PASSAGES,))
    assert (store.snapshot().docs, store.snapshot().facts) == (first.docs, first.facts)
    (src / "notes" / "new.txt").write_text("Basalt region notes.\n")
    index(src, store, ["engineering"])
    later = store.snapshot()  # the damaged columns are passed over: this generation read row by row
    assert "notes/new.txt" in later.docs.ids and later.delta is None
    assert store.load_derived(generation + 1, PASSAGES, FORMAT) is not None
    (src / "notes" / "new.txt").write_text("Basalt region notes, changed.\n")
    index(src, store, ["engineering"])
    started = store.snapshot()  # the saved generation's columns, and the change since
    assert (started.generation, started.delta.generation, [d.id for d in started.delta.added]) == (
        generation + 1, generation + 2, ["notes/new.txt"])
    assert started.delta.removed == {"notes/new.txt"}
    store.close()


def test_saving_a_changed_generation_copies_the_rows_it_never_built_as_they_were_packed():
    """A generation spliced from a packed one (rows never built, one built since, one added) saves the
    same bytes as when every row is built first: the packed rows are copied, not built and re-encoded."""
    loaded, facts = Passages.from_bytes(Passages.of(DOCS).to_bytes(FACTS))
    loaded[1]  # noqa: B018 - a row built by a request, as a served generation has some
    added = Doc("new.md", "A passage added by a change.", frozenset({"eng"}), True, "New", "new.md",
                None, None, "new.md", 0, "New", "new.md", '{"owner": "x"}')
    splice = Splice.of(len(loaded), [0], loaded.key, [("zz", added.document_id, 0)])
    spliced = loaded.spliced(splice, [added], ["zz"])
    saved = spliced.to_bytes(facts)
    for i in range(len(spliced)):
        spliced[i]  # noqa: B018 - every row built: what is saved then comes from the Doc objects
    assert saved == spliced.to_bytes(facts)
    again, _ = Passages.from_bytes(saved)
    assert list(again) == list(spliced)
