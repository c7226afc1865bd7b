"""The store end to end: a served store picks up committed changes, deletes leave no trace for any
principal through any tool or the agent, changed facts answer, and readers never see a mix --
for the embedded SQLite store and for PostgreSQL alike (the same tests, parametrized)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from benchmarks.ingest_bench import until_serving
from conftest import ServerProcess
from hoprag.engine import Engine
from hoprag.ingest import index
from hoprag.reload import Reloader
from hoprag.store import StoreError, open_store
from ingest_tree import BUDGET_METADATA, HERON_OVERVIEW, HERON_TEAM, QUESTION, basalt_html, build
from mcp_client import call, http_client, run
from test_agent import ask

PRINCIPALS = {"engineering": frozenset({"engineering"}), "finance": frozenset({"finance"})}
EVERYONE = frozenset().union(*PRINCIPALS.values())


def new_store(kind: str, root: Path, name: str, request) -> str:
    """An empty store of ``kind``: a file under ``root``, or a fresh database of the session cluster."""
    if kind == "sqlite":
        return str(root / f"{name}.db")
    return request.getfixturevalue("postgres").create_database(f"{name}_{root.name}".lower().replace("-", "_"))


def reindex(src: Path, db: str | Path) -> int:
    store = open_store(db, create=True)
    try:
        report = index(src, store, ["engineering"])
    finally:
        store.close()
    assert report.failed == [], report.failed
    return report.generation


def wait_for(server: ServerProcess, generation: int, timeout: float = 120) -> None:
    """Until the running server answers from ``generation`` (it polls the store; no restart)."""
    until_serving([server], generation, time.perf_counter(), timeout)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def served(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("store")
    src, db = build(root), new_store(request.param, root, "s", request)
    reindex(src, db)
    server = ServerProcess("--store", str(db), "--access", str(root / "access.yaml"))
    yield src, db, root, server
    server.stop()


def ask_store(db: str | Path, root: Path, principal: str = "engineering") -> dict:
    return ask(QUESTION, "--store", str(db), "--access", str(root / "access.yaml"), "--as", principal)


@pytest.mark.slow  # `hoprag ask` processes (each starts the ADK app)
def test_multi_hop_across_txt_and_html_is_answered_with_both_cited(served):
    _, db, root, _ = served
    result = ask_store(db, root)
    assert result["answer"] == "eu-north-2", result["trace"]
    assert [c["doc_id"] for c in result["citations"]] == ["notes/heron.md#1", "notes/deep/quill.txt", "basalt.html"]
    assert "uploads/inbox.txt" not in str(result["citations"])


def test_fetch_returns_the_passage_or_the_whole_document(served):
    server = served[3]

    async def go():
        async with http_client(server.url, "engineering") as c:
            part = await call(c, "fetch", id="notes/heron.md#2")
            whole = await call(c, "fetch", id="notes/heron.md#2", document=True)
            search = await call(c, "search", query="Heron team Fridays", k=1)
        async with http_client(server.url, "finance") as c:
            hidden = await call(c, "fetch", id="notes/heron.md#2", document=True)
            budget = await call(c, "fetch", id="finance/budget.md")
        return part, whole, search, hidden, budget
    part, whole, search, hidden, budget = run(go())
    assert part.structured_content["text"] == HERON_TEAM  # the section's heading is its section, not its text
    assert (part.structured_content["document"], part.structured_content["section"]) == ("notes/heron.md",
                                                                                         "Heron overview › Team")
    assert whole.structured_content["id"] == "notes/heron.md"
    assert HERON_OVERVIEW in whole.structured_content["text"]
    assert "meets on Fridays" in whole.structured_content["text"]
    assert whole.structured_content["facts"] == [["Heron", "depends_on", "Quill"]]
    hit = search.structured_content["results"][0]
    assert (hit["id"], hit["document"], hit["section"]) == ("notes/heron.md#2", "notes/heron.md",
                                                            "Heron overview › Team")
    assert hidden.is_error
    # the metadata column: a document's own front-matter keys and its file, as the store kept them
    assert budget.structured_content["metadata"]["front_matter"] == BUDGET_METADATA
    assert list(budget.structured_content["metadata"]["front_matter"]) == list(BUDGET_METADATA)  # the author's order
    assert budget.structured_content["metadata"]["path"] == "finance/budget.md"
    assert whole.structured_content["metadata"] == {**part.structured_content["metadata"], "front_matter": {}}
    assert part.structured_content["metadata"]["path"] == "notes/heron.md"


@pytest.mark.slow  # `hoprag ask` processes (each starts the ADK app)
def test_a_changed_file_answers_with_the_new_fact(served):
    src, db, root, server = served
    (src / "basalt.html").write_text(basalt_html("ap-south-3"))
    wait_for(server, reindex(src, db))

    async def go():
        async with http_client(server.url, "engineering") as c:
            return await call(c, "graph_walk", start="Heron", relation="region")
    walk = run(go())
    assert walk.structured_content["answer"] == "ap-south-3"
    result = ask_store(db, root)
    assert result["answer"] == "ap-south-3" and result["citations"][-1]["doc_id"] == "basalt.html"


ZOMBIE_QUERIES = ("Basalt region", "Basalt storage", "ap-south-3", "Which region stores telemetry for Project Heron?")


@pytest.mark.slow  # `hoprag ask` processes (each starts the ADK app)
def test_a_deleted_file_leaves_no_trace_for_any_principal(served, tmp_path, request):
    src, db, root, server = served
    (src / "basalt.html").unlink()
    wait_for(server, reindex(src, db))

    async def tools(principal: str) -> list:
        async with http_client(server.url, principal) as c:
            out = [await call(c, "search", query=q, k=50) for q in ZOMBIE_QUERIES]
            out += [await call(c, "fetch", id="basalt.html"), await call(c, "fetch", id="basalt.html", document=True),
                    await call(c, "grep", text="Basalt runs"), await call(c, "grep", text="ap-south-3"),
                    await call(c, "graph_walk", start="Heron", relation="region"),
                    await call(c, "graph_walk", start="Basalt", relation="region"),
                    await call(c, "graph_overview")]
            return out

    for principal in PRINCIPALS:
        results = run(tools(principal))
        seen = " ".join(str(r.structured_content) + " ".join(getattr(p, "text", "") for p in r.content) for r in results)
        assert "ap-south-3" not in seen and "Basalt storage" not in seen, principal
        for r in results[:len(ZOMBIE_QUERIES)]:
            assert "basalt.html" not in [h["id"] for h in r.structured_content["results"]]
        fetched, whole = results[len(ZOMBIE_QUERIES):len(ZOMBIE_QUERIES) + 2]
        assert fetched.is_error and whole.is_error
        assert "region" not in {r["name"] for r in results[-1].structured_content["relations"]}
        answer = ask_store(db, root, principal)  # (engineering now gets the telemetry store, the last fact left)
        assert "basalt.html" not in str(answer) and "ap-south-3" not in str(answer), principal
        assert answer["abstained"] == (principal == "finance")

    # Engine-level: the reloaded store equals a store freshly built from the same folder, for every
    # derived structure a caller can observe (facts, graph edges, entity counts, grep, ranking).
    fresh = new_store("sqlite" if not str(db).startswith("postgresql") else "postgresql", tmp_path, "fresh", request)
    reindex(src, fresh)
    kept, clean = (Engine.from_snapshot(open_store(p).snapshot(EVERYONE)) for p in (db, fresh))
    assert [d.id for d in kept.docs] == [d.id for d in clean.docs]
    assert kept._facts == clean._facts
    for groups in PRINCIPALS.values():
        assert kept.graph(groups).edges() == clean.graph(groups).edges()
        a, b = kept.view(groups).entities, clean.view(groups).entities
        assert {kept.entities.names[j]: int(n) for j, n in enumerate(a.spread) if n} == \
               {clean.entities.names[j]: int(n) for j, n in enumerate(b.spread) if n}
        assert a.named == b.named and kept.view(groups).idf == clean.view(groups).idf  # persisted names, weights
        assert kept.graph(groups).node_count() == clean.graph(groups).node_count()
        assert kept.grep("Basalt", groups) == clean.grep("Basalt", groups)
        for q in ZOMBIE_QUERIES:
            assert [(h.doc.id, h.score) for h in kept.search(q, groups, 10)] == \
                   [(h.doc.id, h.score) for h in clean.search(q, groups, 10)]


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_reader_during_reindexing_never_sees_a_mix(tmp_path, request, kind):
    src, db = tmp_path / "src", new_store(kind, tmp_path, "mix", request)
    src.mkdir()

    def write(version: int) -> None:
        for i in range(40):
            (src / f"f{i:02d}.txt").write_text(f"Item {i} is at version v{version}.\n")
    write(0)
    reindex(src, db)
    live = Reloader(db, interval=0.01, readers=EVERYONE)
    reader = open_store(db)
    seen: list[set[str]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.append({d.text.split()[-1] for d in reader.snapshot(EVERYONE).docs})
            live.refresh()
            seen.append({d.text.split()[-1] for d in live.current().docs})

    thread = threading.Thread(target=read)
    thread.start()
    for version in range(1, 7):
        write(version)
        reindex(src, db)
    time.sleep(0.2)
    done.set()
    thread.join()
    live.stop()
    reader.close()
    assert all(len(versions) == 1 for versions in seen), [v for v in seen if len(v) > 1][:3]
    assert len({next(iter(v)) for v in seen}) >= 2  # the reader did overlap with the writes
    assert {d.text.split()[-1] for d in Reloader(db, readers=EVERYONE).current().docs} == {"v6."}


def downgrade_to_schema_1(db: str) -> None:
    """Make a store look as an older hoprag (schema 1: no path, metadata or vector columns) wrote it."""
    if db.startswith("postgresql"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn, conn.transaction():
            conn.execute("ALTER TABLE hoprag.passages DROP COLUMN path, DROP COLUMN metadata, DROP COLUMN vector, "
                         "DROP COLUMN embedded")
            conn.execute("UPDATE hoprag.meta SET value = '1' WHERE key = 'schema'")
        return
    import sqlite3

    conn = sqlite3.connect(db)
    conn.executescript("ALTER TABLE passages DROP COLUMN path; ALTER TABLE passages DROP COLUMN metadata; "
                       "ALTER TABLE passages DROP COLUMN vector; ALTER TABLE passages DROP COLUMN embedded; "
                       "UPDATE meta SET value = '1' WHERE key = 'schema';")
    conn.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_store_of_the_older_schema_is_upgraded_by_the_next_index(tmp_path, request, kind):
    src, db = build(tmp_path), new_store(kind, tmp_path, "old", request)
    reindex(src, db)
    downgrade_to_schema_1(db)
    with pytest.raises(StoreError, match="store schema 1 is older than this hoprag's 3: run `hoprag index SRC --store"):
        open_store(db)  # a reader names the fix in one line
    store = open_store(db, create=True)  # hoprag index: adds the columns, forgets every digest
    try:
        report = index(src, store, ["engineering"])
    finally:
        store.close()
    assert report.failed == [] and (report.changed, report.new, report.unchanged) == (6, 0, 0)  # every file read again
    docs = {d.id: d for d in open_store(db).snapshot(EVERYONE).docs}
    assert docs["finance/budget.md"].path == "finance/budget.md"
    assert json.loads(docs["finance/budget.md"].front_matter) == BUDGET_METADATA
