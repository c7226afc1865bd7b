"""Incremental updates: an engine advanced by what each commit changed equals one built fresh.

Hypothesis writes a folder of Markdown files (random groups, trust, dates; relation cues between
shared entities, so graphs have multi-hop edges and dated conflicts; some files long enough to be
several passages), then applies random sequences of commits -- files added, changed, deleted, a
deleted path added again, several at once -- through ``hoprag index`` into a store, while a served
engine (:class:`hoprag.reload.Reloader`) follows by delta. After the last commit every tool's answer
through MCP, for several principals, and the engine's entity counts, named entities, IDF, claims
and personalised-PageRank rankings equal those of an engine built fresh from a new store of the
final folder -- and so does a cold start from the incrementally kept store (its newest saved
derived data plus the change since). On both stores. Compaction and the saving of derived data
happen at random points, or at every step. Some histories index with an embedder (the test's
hashing one), now and then switching it on or off between commits: then each caller's dense matrix
and cosines, and the hybrid search results, must equal a fresh load's too.

``HOPRAG_DELTA_EXAMPLES`` sets the number of generated histories per store in the fast tier (default
6); the slow tier runs ``HOPRAG_DELTA_FULL_EXAMPLES`` (default 60). The bad input of the issue -- a
file changing while it is indexed, one changed twice in quick succession, a file deleted while a
request reads it, a lost notification -- has a test each below.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import os
import shutil
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_models import HashEmbedder
from hoprag import delta as delta_module, embed, reload as reload_module
from hoprag.access import Principal
from hoprag.engine import Engine
from hoprag.graph import Graph
from hoprag.ingest import index, prepare
from hoprag.reload import Reloader
from hoprag.settings import DEMO_CORPUS
from hoprag.store import open_store
from mcp_server.auth import fixed_caller
from mcp_server.server import build_server
from test_permission_properties import CUES, SHARED, VOCAB, call_all, probes

#: Generated histories per store: the fast tier's, and the full profile's (``@pytest.mark.slow``).
EXAMPLES = int(os.environ.get("HOPRAG_DELTA_EXAMPLES", "6"))
FULL_EXAMPLES = int(os.environ.get("HOPRAG_DELTA_FULL_EXAMPLES", "60"))
GROUPS = ("g0", "g1", "g2")
PRINCIPALS = [frozenset(g) for g in ({"g0"}, {"g1"}, {"g0", "g2"}, {"g0", "g1", "g2"})]
FOLDERS = ("", "a/", "a/b/", "z/")
DATES = ("2026-01-01", "2026-02-01", "2026-03-01")
_databases = itertools.count()
#: The embedder of the histories that index with one (fast, deterministic, offline).
HASHED = HashEmbedder()


def private(n: int) -> str:
    """The name page ``n`` (of a history) defines; every other one has two words."""
    return f"Priv{n:03d}y" + (" Lab" if n % 2 else "")


@st.composite
def sentence(draw: st.DrawFn, n: int) -> str:
    """A relation cue between two entities (edges, conflicts: the same subject and cue, another
    object, in another file), else filler that may name, in lower case, what another page (written
    before or after it) defines: a passage that names a thing before any passage defines it."""
    if draw(st.integers(0, 2)):
        subject, obj = draw(st.lists(st.sampled_from(SHARED + (private(n),)), min_size=2, max_size=2, unique=True))
        cue = draw(st.sampled_from(CUES))
        return f"{subject} has an {cue} {obj}." if cue.startswith("annual") else f"{subject} {cue} {obj}."
    others = tuple(private(m).lower() for m in range(n + 4) if m != n)
    return " ".join(draw(st.lists(st.sampled_from(VOCAB + SHARED + others), min_size=1, max_size=8))).capitalize() + "."


@st.composite
def page(draw: st.DrawFn, n: int) -> str:
    """A Markdown file with front matter; one in four has two long sections (several passages)."""
    head = [f"groups: [{', '.join(sorted(draw(st.sets(st.sampled_from(GROUPS), min_size=1, max_size=2))))}]"]
    if not draw(st.integers(0, 4)):
        head.append("trusted: false")
    head.append(f"updated: {draw(st.sampled_from(DATES))}")
    title = draw(st.sampled_from([f"Note {n}", private(n), *SHARED]))  # a title may name a shared entity
    body = " ".join(draw(st.lists(sentence(n), min_size=1, max_size=4)))
    if not draw(st.integers(0, 3)):
        filler = " ".join(draw(st.lists(sentence(n), min_size=30, max_size=34)))
        body = f"## Part one\n\n{body} {filler}\n\n## Part two\n\n{filler} {body}"
    return f"---\n{chr(10).join(head)}\ntitle: {title}\n---\n\n{body}\n"


@st.composite
def history(draw: st.DrawFn) -> tuple[dict[str, str], list[list[tuple[str, str, str | None]]]]:
    """A first folder and the commits made to it: each a batch of ``(op, path, content)``."""
    names = (f"{folder}f{i:02d}.md" for i, folder in zip(itertools.count(), itertools.cycle(FOLDERS)))
    made = itertools.count()
    first = {next(names): draw(page(next(made))) for _ in range(draw(st.integers(1, 5)))}
    files, gone, commits = dict(first), [], []
    for _ in range(draw(st.integers(1, 5))):
        batch: list[tuple[str, str, str | None]] = []
        for _ in range(draw(st.integers(1, 3))):
            op = draw(st.sampled_from(["add", "change", "change", "delete"] + (["again"] if gone else [])))
            if op == "delete" and len(files) > 1:
                path = draw(st.sampled_from(sorted(files)))
                del files[path]
                gone.append(path)
                batch.append(("delete", path, None))
            elif op == "change" and files:
                path = draw(st.sampled_from(sorted(files)))
                files[path] = draw(page(next(made)))
                batch.append(("write", path, files[path]))
            else:
                path = gone.pop(draw(st.integers(0, len(gone) - 1))) if op == "again" else next(names)
                files[path] = draw(page(next(made)))
                batch.append(("write", path, files[path]))
        commits.append(batch)
    return first, commits


def write_folder(src: Path, files: dict[str, str]) -> None:
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(DEMO_CORPUS / "relations.yaml", src / "relations.yaml")
    for path, text in files.items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text(text, encoding="utf-8")


def reindex(src: Path, target: str, embedder: embed.Embedder | None = None) -> int:
    store = open_store(target, create=True)
    try:
        report = index(src, store, embedder=embedder)
    finally:
        store.close()
    assert report.failed == [], report.failed
    return report.generation


def comparable(engine: Engine, groups: frozenset[str]) -> dict[str, Any]:
    """What the engine tells one caller beyond the tools: counts, names, weights, claims, rankings."""
    view = engine.view(groups)
    keys = engine.entities.keys
    readable = [d for d in engine.docs if engine.permits(groups)(d)]
    queries = ["Atlas region", "Borealis depends", "Comet budget", "service telemetry"]
    return {
        "spread": {keys[j]: int(n) for j, n in enumerate(view.entities.spread) if n},
        "named": view.entities.named,
        "idf": dict(view.idf),
        "weights": {q: view.weights(q) for q in queries + ["regions depended budgets Comets"]},  # other forms: by stem
        "claims": {d.id: engine.claims(d, groups) for d in readable},
        "edges": engine.graph(groups).edges(),
        "graph": adjacency(engine.graph(groups)),
        "relations": list(engine.graph(groups).relations.items()),
        "rows": view.rows.tolist(),
        "ppr": {q: view.entities.pagerank(q, [h.doc.id for h in engine.search(q, groups, 1)], 10) for q in queries},
        "search": {q: [(h.doc.id, h.score) for h in engine.search(q, groups, 20)] for q in queries},
        "dense": view.matrix.tolist() if view.vectors is not None else None,
        "cosines": {q: view.similarity(q).tolist() for q in queries},
    }


def adjacency(graph: Graph) -> dict[str, list]:
    """What a walk reads of a relation graph: each entity's successors in networkx's order, each with
    its keyed edges (the order networkx lists nodes in is no answer's)."""
    return {u: [(v, sorted((k, d["relation"], d["doc"]) for k, d in keyed.items())) for v, keyed in graph.g.succ[u].items()]
            for u in graph.g}


def same(got: Engine, want: Engine, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """``got`` answers every caller exactly as ``want`` does."""
    assert got.passages == want.passages and got._facts == want._facts
    assert (got.vectors is None) == (want.vectors is None)
    if want.vectors is not None:
        assert got.vectors.matrix.tobytes() == want.vectors.matrix.tobytes()
    for groups in PRINCIPALS:
        assert comparable(got, groups) == comparable(want, groups), sorted(groups)
        who = Principal("caller", groups)

        async def both() -> tuple[list, list]:
            return (await call_all(build_server(got, fixed_caller(who)), calls, "auto"),
                    await call_all(build_server(want, fixed_caller(who)), calls, "auto"))

        a, b = asyncio.run(both())
        for (name, args), x, y in zip(calls, a, b):
            assert x == y, f"{name}({args}) as {sorted(groups)}"


def replay(make_store, first, commits, data: st.DataObject, readers: frozenset[str] | None) -> None:
    """Index ``first``, follow every commit by delta, then compare with a fresh store of the result."""
    root = Path(tempfile.mkdtemp(prefix="hoprag-delta-"))
    try:
        src, db = root / "src", make_store(root, "kept")
        write_folder(src, first)
        model = HASHED if data.draw(st.booleans(), label="vectors") else None
        reindex(src, db, model)
        live = Reloader(db, readers=readers)
        applied = 0
        for batch in commits:
            for op, path, text in batch:
                if op == "delete":
                    (src / path).unlink()
                else:
                    write_folder(src, {path: text})
            if data.draw(st.integers(0, 5), label="switch embedder") == 0:  # vectors made or dropped: a barrier
                model = None if model else HASHED
            generation = reindex(src, db, model)
            for groups in data.draw(st.lists(st.sampled_from(PRINCIPALS), max_size=3), label="warm"):
                live.current().warm(groups)
            if data.draw(st.booleans(), label="now"):  # or several commits applied as one change
                before = live.current()
                assert live.refresh() and live.current().generation == generation
                applied += live.current() is not before
            if data.draw(st.integers(0, 3), label="persist") == 0:  # the served generation's derived data saved
                engine = live.current()
                store = open_store(db)
                engine.persist(store.derived(engine.generation, readers))
                store.close()
        live.refresh()
        fresh = make_store(root, "fresh")
        reindex(src, fresh, model)
        want = Engine.from_snapshot(open_store(fresh).snapshot(readers))
        calls = data.draw(st.lists(probes(tuple(want.docs)), min_size=8, max_size=8), label="calls")
        same(live.current(), want, calls)
        same(Engine.from_snapshot(open_store(db).snapshot(readers)), want, calls)  # a cold start of the kept store
        live.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def sqlite_store(root: Path, name: str) -> str:
    return str(root / f"{name}.db")


def check_histories(make_store, readers: frozenset[str] | None, examples: int = EXAMPLES) -> None:
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(story=history(), eager=st.booleans(), data=st.data())
    def prop(story, eager: bool, data: st.DataObject) -> None:
        with ExitStack() as stack:
            stack.enter_context(mock.patch.object(delta_module, "SAVE_SHARE", float("inf")))  # saved in step instead
            stack.enter_context(mock.patch.dict(embed._NAMED, {"hash": lambda: HASHED}))  # served as a packaged one
            stack.enter_context(mock.patch.object(embed, "_LOADED", {}))
            if eager:  # compact at every change (dead slots dropped, postings tails folded in)
                stack.enter_context(mock.patch.object(delta_module, "COMPACT_MIN", 0))
                stack.enter_context(mock.patch.object(delta_module, "COMPACT_SHARE", 0.0))
            replay(make_store, *story, data, readers)

    prop()


def postgresql_store(postgres):
    def make(root: Path, name: str) -> str:
        return postgres.create_database(f"delta_{next(_databases)}_{name}")
    return make


def test_every_history_of_changes_answers_as_a_fresh_build_sqlite():
    check_histories(sqlite_store, None)


def test_every_history_of_changes_answers_as_a_fresh_build_postgresql(postgres):
    check_histories(postgresql_store(postgres), frozenset(GROUPS))


@pytest.mark.slow  # the full profile: minutes
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_every_history_of_changes_answers_as_a_fresh_build_full(kind, request):
    if kind == "sqlite":
        check_histories(sqlite_store, None, FULL_EXAMPLES)
    else:
        check_histories(postgresql_store(request.getfixturevalue("postgres")), frozenset(GROUPS), FULL_EXAMPLES)


# -- bad input ---------------------------------------------------------------------------------------

TWO_PARTS = ("---\ngroups: [g0]\nupdated: 2026-01-01\n---\n\n## One\n\n{v} Atlas runs in region Comet. " + "Filler words here. " * 20
             + "\n\n## Two\n\n{v} Borealis depends on Atlas. " + "More filler words. " * 20 + "\n")


def store_of(kind: str, root: Path, request) -> tuple[str, frozenset[str] | None]:
    if kind == "sqlite":
        return str(root / "s.db"), None
    return request.getfixturevalue("postgres").create_database(f"bad_{next(_databases)}"), frozenset(GROUPS)


def versions(engine: Engine) -> set[str]:
    """The versions the served passages of ``x.md`` are of (their first word)."""
    return {d.text.split()[0] for d in engine.docs if d.document_id == "x.md"}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_file_changing_while_it_is_indexed_is_served_whole_then_caught_up(tmp_path, request, kind, monkeypatch):
    """The indexer reads a file once and commits what it read: an edit landing meanwhile is not mixed
    in, and the next run commits it (its digest differs); the replica follows both."""
    import hoprag.ingest as ingest

    src, (db, readers) = tmp_path / "src", store_of(kind, tmp_path, request)
    write_folder(src, {"x.md": TWO_PARTS.format(v="v1"), "y.md": "# Y\n\nComet stores telemetry in Draco.\n"})
    reindex(src, db)
    live = Reloader(db, readers=readers)
    real = ingest._load

    def edited_meanwhile(path: Path, max_bytes: int):
        found = real(path, max_bytes)
        if path.name == "x.md":
            path.write_text(TWO_PARTS.format(v="v3"), encoding="utf-8")  # another editor saves, mid-run
        return found

    write_folder(src, {"x.md": TWO_PARTS.format(v="v2")})
    with monkeypatch.context() as m:
        m.setattr(ingest, "_load", edited_meanwhile)
        reindex(src, db)
    assert live.refresh() and versions(live.current()) == {"v2"}  # what was read, whole
    reindex(src, db)
    assert live.refresh() and versions(live.current()) == {"v3"}  # and the edit is not lost
    live.stop()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_file_changed_twice_in_quick_succession_reaches_its_last_version(tmp_path, request, kind):
    """Two commits land before a replica looks: one change spanning both is applied (the first
    version's passages, never served, leave no trace), and it equals a fresh build."""
    src, (db, readers) = tmp_path / "src", store_of(kind, tmp_path, request)
    write_folder(src, {"x.md": TWO_PARTS.format(v="v1"), "y.md": "# Y\n\nComet stores telemetry in Draco.\n"})
    reindex(src, db)
    live = Reloader(db, readers=readers)
    write_folder(src, {"x.md": TWO_PARTS.format(v="v2")})
    reindex(src, db)
    write_folder(src, {"x.md": "---\ngroups: [g1]\n---\n\nv3 Atlas runs in region Draco.\n"})
    last = reindex(src, db)
    assert live.refresh() and live.current().generation == last
    assert versions(live.current()) == {"v3"} and len([d for d in live.current().docs if d.document_id == "x.md"]) == 1
    fresh = str(tmp_path / "fresh.db") if kind == "sqlite" else store_of(kind, tmp_path, request)[0]
    reindex(src, fresh)
    want = Engine.over(open_store(fresh), readers=readers)
    for groups in PRINCIPALS:
        assert comparable(live.current(), groups) == comparable(want, groups)
    live.stop()


def test_a_file_deleted_while_a_request_reads_it_is_read_whole_by_that_request(tmp_path):
    """A request holds the engine it started with: the deletion builds another one beside it and leaves
    the held one as it was, so the request reads the whole file; the next request sees it gone."""
    src, db = tmp_path / "src", str(tmp_path / "s.db")
    write_folder(src, {"x.md": TWO_PARTS.format(v="v1"), "y.md": "# Y\n\nComet stores telemetry in Draco.\n"})
    reindex(src, db)
    live = Reloader(db)
    held = live.current()  # a request in flight: it searched, and will now fetch what it found
    groups = frozenset({"g0"})
    hits = [h.doc.id for h in held.search("Atlas region Comet", groups, 5)]
    assert "x.md#1" in hits
    (src / "x.md").unlink()
    reindex(src, db)
    assert live.refresh()
    assert held.document("x.md#1", groups).text.count("v1") == 2  # both passages, as they were
    assert [held.fetch(i, groups).id for i in hits] == hits and held.graph(groups).has("Atlas")
    now = live.current()
    assert now.document("x.md#1", groups) is None and not now.search("Atlas region Comet", groups, 5)
    assert not now.graph(groups).has("Atlas")
    live.stop()


def test_a_retired_generation_is_freed_without_a_collection(tmp_path):
    """A server freezes what it serves and collects no more than the young generation at a reload
    (``mcp_server.serve._settle``): an engine must hold no reference cycle, or every retired generation
    would stay in memory."""
    import gc
    import weakref

    src, db = tmp_path / "src", str(tmp_path / "s.db")
    write_folder(src, {"a.md": "# Atlas\n\nAtlas depends on Borealis.\n", "b.md": "# Borealis\n\nBorealis runs in region Comet.\n"})
    reindex(src, db)
    live = Reloader(db)
    for groups in PRINCIPALS:
        live.current().warm(groups)
    retired = weakref.ref(live.current())
    write_folder(src, {"c.md": "# Comet\n\nComet stores telemetry in Draco.\n"})
    reindex(src, db)
    gc.disable()
    try:
        assert live.refresh()
        assert retired() is None
    finally:
        gc.enable()
        live.stop()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_commit_that_fails_midway_leaves_no_trace(tmp_path, request, kind):
    """A writer that fails after logging its removals and before its commit (here: two files claim one
    passage id, refused by the key) rolls all of it back: no generation, no tombstone, and the next
    commit's change is exactly its own."""
    import sqlite3

    from hoprag.store import Changes, Passage, StoreError

    src, (db, readers) = tmp_path / "src", store_of(kind, tmp_path, request)
    write_folder(src, {"x.md": TWO_PARTS.format(v="v1"), "y.md": "# Y\n\nComet stores telemetry in Draco.\n"})
    first = reindex(src, db)
    live = Reloader(db, readers=readers)
    store = open_store(db, create=True)
    clash = live.current().docs.get("x.md#1")
    bad = Changes(store.source(), store.snapshot(readers).config, store.config_digest(),
                  {"x.md": ("d1", [Passage(clash, ())]), "y.md": ("d2", [Passage(clash, ())])})
    with pytest.raises((StoreError, sqlite3.IntegrityError)):  # (PostgreSQL's error comes as a StoreError line)
        store.apply(bad)
    assert store.generation() == first and not store.delta(first, readers)
    store.close()
    assert not live.refresh()
    write_folder(src, {"x.md": TWO_PARTS.format(v="v2")})
    reindex(src, db)
    change = open_store(db).delta(first, readers)
    assert change.removed == {"x.md#1", "x.md#2"} and [d.id for d in change.added] == ["x.md#1", "x.md#2"]
    assert live.refresh() and versions(live.current()) == {"v2"}
    live.stop()


def test_replicas_that_miss_a_notification_catch_up_by_polling(postgres, tmp_path):
    """Commits announce themselves (NOTIFY, sent at commit), but a replica's listening connection may be
    down just then: its poll still finds the new generation, and it applies the change."""
    url = postgres.create_database(f"notify_{next(_databases)}")
    src = tmp_path / "src"
    write_folder(src, {"x.md": TWO_PARTS.format(v="v1")})
    reindex(src, url)
    replicas = [Reloader(url, readers=frozenset(GROUPS), interval=0.2).start() for _ in range(2)]
    try:
        import time

        time.sleep(0.5)  # both listening
        killed = postgres.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
                              "'hoprag-listen'", database=url.rsplit("/", 1)[1])
        assert killed.split() == ["t", "t"]  # both listeners down
        write_folder(src, {"x.md": TWO_PARTS.format(v="v2")})
        generation = reindex(src, url)  # announced to nobody
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(r.current().generation != generation for r in replicas):
            time.sleep(0.05)
        assert [versions(r.current()) for r in replicas] == [{"v2"}, {"v2"}]
    finally:
        for r in replicas:
            r.stop()


def test_a_server_saves_its_derived_data_once_per_share_changed_not_at_every_change_after(tmp_path, monkeypatch):
    """Once SAVE_SHARE of the passages changed, a replica saves a new base beside serving; the count then
    starts again from that save -- else every later commit would start another save (seconds of CPU each
    at 100,000 passages, beside the searches)."""
    src, db = tmp_path / "src", str(tmp_path / "s.db")
    files = {f"f{i}.md": f"# F{i}\n\nAtlas {i} runs in region Comet.\n" for i in range(10)}
    write_folder(src, files)
    reindex(src, db)
    monkeypatch.setattr(delta_module, "SAVE_SHARE", 0.25)  # due once more than 2.5 passages changed
    monkeypatch.setattr(reload_module, "SAVE_GRACE", 0.0)
    saved: list[int] = []
    real = Engine.persist
    monkeypatch.setattr(Engine, "persist", lambda self, cache: (real(self, cache), saved.append(self.generation)))
    live = Reloader(db)

    def commit(*names: str) -> None:
        write_folder(src, {n: files[n].replace("Comet", f"Draco {len(saved)} {n}") for n in names})
        reindex(src, db)
        assert live.refresh()
        deadline = time.monotonic() + 30
        while live._persisting.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)

    commit("f1.md", "f2.md")  # 4 changed (each file's old passage gone, its new one added): a save
    assert saved == [live.current().generation]
    commit("f3.md")  # 2 more since that save: none
    assert len(saved) == 1
    commit("f4.md")  # 4 since: the next
    assert saved[1:] == [live.current().generation]
    live.stop()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_base_is_saved_once_whoever_is_told_of_the_commit(tmp_path, request, kind, monkeypatch):
    """Replicas told of one commit, and `hoprag index` after it, would each build and write the same base:
    only one does -- a replica waits SAVE_GRACE, then skips a base `hoprag index` saved meanwhile (both
    stores) or one another process is saving (PostgreSQL: an advisory lock). Control: with neither, it saves."""
    src, (db, readers) = tmp_path / "src", store_of(kind, tmp_path, request)
    files = {f"f{i}.md": f"---\ngroups: [g0]\n---\n# F{i}\n\nAtlas {i} runs in region Comet.\n" for i in range(10)}
    write_folder(src, files)
    reindex(src, db)
    monkeypatch.setattr(delta_module, "SAVE_SHARE", 0.25)  # due once more than 2.5 passages changed
    saved: list[int] = []
    real = Engine.persist
    monkeypatch.setattr(Engine, "persist", lambda self, cache: (real(self, cache), saved.append(self.generation)))
    live, store = Reloader(db, readers=readers), open_store(db)

    def commit(*names: str) -> int:
        write_folder(src, {n: files[n].replace("Comet", f"Draco {len(saved)} {n}") for n in names})
        return reindex(src, db)

    def settled() -> None:
        deadline = time.monotonic() + 30
        while live._persisting.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)

    monkeypatch.setattr(reload_module, "SAVE_GRACE", 0.0)
    first = commit("f1.md", "f2.md")
    assert live.refresh()
    settled()
    assert saved == [first]  # control: nobody else saved it
    monkeypatch.setattr(reload_module, "SAVE_GRACE", 1.0)
    second = commit("f3.md", "f4.md")
    assert live.refresh()  # its save waits
    assert prepare(store, [readers] if readers else ()).base == second  # `hoprag index` saves it meanwhile
    settled()
    assert saved == [first, second] and live.current().generation == second
    if kind == "postgresql":
        monkeypatch.setattr(reload_module, "SAVE_GRACE", 0.0)
        third = commit("f5.md", "f6.md")
        with store.saving(third, readers) as mine:  # another replica is saving it
            assert mine
            assert live.refresh()
            settled()
        assert saved == [first, second]
    store.close()
    live.stop()


def test_a_start_applying_a_small_change_finds_every_name_without_the_vocabularys_prefixes(tmp_path, monkeypatch):
    """A start loads the entity index from the store without the word prefixes of its vocabulary and
    applies a small change by reading the added passages' grams to full length: the same names, multi-word
    ones included, as a fresh build finds -- and the prefixes of the whole vocabulary were never built."""
    src, db, fresh = tmp_path / "src", str(tmp_path / "s.db"), str(tmp_path / "fresh.db")
    files = {f"f{i}.md": f"# Station Number {i}\n\nThe Borealis Relay {i} runs in region Comet Vale {i}.\n"
             for i in range(40)}
    write_folder(src, files)
    reindex(src, db)
    store = open_store(db)
    prepare(store)  # the base a start loads (as `hoprag index` leaves it)
    store.close()
    write_folder(src, {"f1.md": "# Station Number 1\n\nStation Number 7 now feeds Borealis Relay 3 and Comet Vale 9.\n"})
    reindex(src, db)
    started = Engine.from_snapshot(open_store(db).snapshot(None))
    assert started.changed and "_prefixes" not in vars(started.entities)  # the path under test was taken
    reindex(src, fresh)
    want = Engine.from_snapshot(open_store(fresh).snapshot(None)).prepared()

    def named(engine: Engine) -> dict[str, tuple[str, dict[str, float]]]:
        """Each passage's title entity and mentions, by key (a changed index keeps ids of names gone)."""
        index, keys = engine.entities, engine.entities.keys
        return {d.id: (keys[index.title_of[r]] if index.title_of[r] >= 0 else "",
                       {keys[j]: v for j, v in zip(index.mentions[r].indices, index.mentions[r].data)})
                for r, d in enumerate(engine.docs)}

    got = named(started)
    assert got == named(want)
    assert {"station number 7", "comet vale 9"} <= set(got[next(d.id for d in started.docs if d.document_id == "f1.md")][1])
