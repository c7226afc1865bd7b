"""The PostgreSQL store: row-level security as a second, independent permission check; roles an
ordinary owner can set up; replicas that see every commit; PostgreSQL restarts; failover.

Every test but the unreachable-server one runs a real server (a throwaway cluster from
``benchmarks.pgcluster``, so they are in the slow tier); the shared store end-to-end tests (index,
serve, change, delete, ask) run on PostgreSQL in ``test_store.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
import pytest
from hypothesis import Phase

from benchmarks import replicas as bench
from benchmarks.ingest_bench import until_serving
from benchmarks.pgcluster import Cluster
from conftest import ServerProcess
from hoprag import corpus
from hoprag.corpus import Corpus
from hoprag.embed import Vectors
from hoprag.engine import Engine
from hoprag.ingest import index
from hoprag.facts import extract_facts
from hoprag.store import Changes, Config, Passage, StoreError, open_store
from ingest_tree import BUDGET_METADATA, basalt_html, build
from mcp_client import call, http_client, run
from test_permission_properties import GROUPS, run_property

EVERYONE = frozenset({"engineering", "finance"})
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def database(postgres, request) -> str:
    return postgres.create_database(f"t_{abs(hash(request.node.nodeid)) % 10**9}")


def indexed(database: str, root: Path) -> Path:
    src = build(root)
    store = open_store(database, create=True)
    try:
        assert index(src, store, ["engineering"]).failed == []
    finally:
        store.close()
    return src


def rows_as(url: str, groups: list[str] | None, role: bool = True) -> set[str]:
    """Passage ids a connection reads as the reader role with ``hoprag.groups`` set (or not)."""
    with psycopg.connect(url, autocommit=True) as db, db.transaction():
        if role:
            db.execute("SET LOCAL ROLE hoprag_reader")
        if groups is not None:
            db.execute("SELECT set_config('hoprag.groups', %s, true)", (json.dumps(groups),))
        return {r[0] for r in db.execute("SELECT id FROM hoprag.passages")}


# -- row-level security ----------------------------------------------------------------------------


@pytest.mark.slow  # a PostgreSQL cluster
def test_the_metadata_column_keeps_the_authors_json_and_row_level_security_covers_it(database, tmp_path):
    indexed(database, tmp_path)
    with psycopg.connect(database, autocommit=True) as db:
        kind = db.execute("SELECT data_type FROM information_schema.columns WHERE table_schema = 'hoprag' "
                          "AND table_name = 'passages' AND column_name = 'metadata'").fetchone()[0]
    assert kind == "json"  # json, not jsonb: the front matter's key order survives
    for groups, expected in ((["finance"], {"finance/budget.md"}), (["engineering"], set())):
        with psycopg.connect(database, autocommit=True) as db, db.transaction():
            db.execute("SET LOCAL ROLE hoprag_reader")
            db.execute("SELECT set_config('hoprag.groups', %s, true)", (json.dumps(groups),))
            rows = db.execute("SELECT id, path, metadata::text FROM hoprag.passages WHERE metadata IS NOT NULL").fetchall()
        assert {r[0] for r in rows} == expected
        for _, path, metadata in rows:
            assert path == "finance/budget.md" and list(json.loads(metadata)) == list(BUDGET_METADATA)


@pytest.mark.slow  # a PostgreSQL cluster
def test_row_level_security_returns_only_the_callers_rows(database, tmp_path, postgres):
    indexed(database, tmp_path)
    finance = {"finance/budget.md"}
    assert rows_as(database, ["finance"]) == finance
    assert "finance/budget.md" not in rows_as(database, ["engineering"])
    assert rows_as(database, None) == set() and rows_as(database, []) == set()  # no groups set: nothing
    assert rows_as(database, ["engineering", "finance"]) == rows_as(database, None, role=False)  # the owner sees all
    # a login that is only a member of the reader role (least privilege): the same rows, and no writes
    postgres.sql("CREATE ROLE replica LOGIN PASSWORD 'replica-secret' IN ROLE hoprag_reader")
    reader = postgres.url("replica", "replica-secret", database.rsplit("/", 1)[1])
    assert rows_as(reader, ["finance"], role=False) == rows_as(reader, ["finance"]) == finance  # policies bind members
    assert rows_as(reader, None, role=False) == set()
    with psycopg.connect(reader, autocommit=True) as db, pytest.raises(psycopg.errors.InsufficientPrivilege):
        db.execute("DELETE FROM hoprag.passages")
    store = open_store(reader)  # a reader-only login serves (derived data just is not saved)
    assert {d.id for d in store.snapshot(frozenset({"finance"})).docs} == finance
    assert store.readable(frozenset({"finance"})) == finance
    store.close()
    postgres.sql("DROP OWNED BY replica", database=database.rsplit("/", 1)[1])
    postgres.sql("DROP ROLE replica")


@pytest.mark.slow  # a PostgreSQL cluster
def test_a_broken_inprocess_filter_still_shows_nothing_unreadable_over_postgresql(database, tmp_path, monkeypatch):
    indexed(database, tmp_path)
    monkeypatch.setattr(corpus, "shares", lambda doc_groups, caller_groups: True)  # hoprag's own check, broken
    engine = Engine.from_snapshot(open_store(database).snapshot(EVERYONE))
    eng = frozenset({"engineering"})
    assert [h.doc.id for h in engine.search("Heron budget annual dollars", eng, 20)] and \
        "finance/budget.md" not in [h.doc.id for h in engine.search("Heron budget annual dollars", eng, 20)]
    assert engine.fetch("finance/budget.md", eng) is None and engine.document("finance/budget.md", eng) is None
    assert engine.grep("annual budget", eng) == []
    assert all(d != "finance/budget.md" for *_, d in engine.graph(eng).edges())
    assert engine.search("Heron budget", frozenset(), 5) == []  # no groups: PostgreSQL returns no rows
    # control: the same broken check over the embedded store (no second check) does leak
    side = tmp_path / "side.db"
    store = open_store(side, create=True)
    index(tmp_path / "src", store, ["engineering"])
    leaky = Engine.from_snapshot(store.snapshot())
    assert leaky.fetch("finance/budget.md", eng) is not None and leaky.grep("annual budget", eng)


class PgEngines:
    """Engines for the permission property, each over one generated corpus committed to PostgreSQL
    (the previous corpus deleted in the same commit) and read back under row-level security."""

    def __init__(self, url: str):
        self.store = open_store(url, create=True)

    def __call__(self, corpus: Corpus, ranker: str, vectors: Vectors | None = None) -> Engine:
        upsert = {f"{i:04d}": (d.id, [Passage(d, extract_facts(d, corpus.lexicon))]) for i, d in enumerate(corpus.docs)}
        self.store.apply(Changes("property", Config(corpus.lexicon, corpus.allowlist), "-", upsert,
                                 [f for f in self.store.files() if f not in upsert]))
        snapshot = self.store.snapshot(frozenset(GROUPS))
        if vectors is None:
            return Engine.from_snapshot(snapshot, ranker)
        # The property's test embedder is no model a store can name, so the hybrid and dense engines embed
        # the passages read back under row-level security here, in their own order: those of the newest
        # generation, which a snapshot may give as an earlier one's (whose derived data was saved) and the
        # change since, so read through a lexical engine that applies it.
        current = Engine.from_snapshot(snapshot, "bm25")
        return Engine(current.corpus, ranker, current._facts, None, current.generation, snapshot.guard,
                      Vectors.of(vectors.embedder, current.docs))


PROBES = int(os.environ.get("HOPRAG_PG_PROBES", "600"))


@pytest.mark.slow  # a PostgreSQL cluster
def test_permission_property_over_postgresql(database):
    tally = run_property(PgEngines(database), PROBES, derandomize=True, database=None)
    assert tally.mcp >= PROBES and tally.hidden


@pytest.mark.slow  # a PostgreSQL cluster
def test_permission_property_over_postgresql_with_the_inprocess_filter_broken(database, monkeypatch):
    """Row-level security alone keeps every answer equal to one over the caller's documents."""
    monkeypatch.setattr(corpus, "shares", lambda doc_groups, caller_groups: True)
    tally = run_property(PgEngines(database), PROBES // 2, derandomize=True, database=None)
    assert tally.mcp >= PROBES // 2 and tally.hidden
    with pytest.raises(AssertionError, match="depends on unreadable documents|leaked|differs from an unknown id"):
        run_property(Engine, PROBES // 2, derandomize=True, database=None, phases=[Phase.generate])  # control: one check


# -- roles, errors ---------------------------------------------------------------------------------


@pytest.mark.slow  # a PostgreSQL cluster
def test_an_owner_without_createrole_gets_the_grants_to_ask_for(postgres):
    postgres.sql("CREATE ROLE plain LOGIN PASSWORD 'plain-secret'", "CREATE DATABASE plaindb OWNER plain")
    url = postgres.url("plain", "plain-secret", "plaindb")
    exists = postgres.sql("SELECT 1 FROM pg_roles WHERE rolname = 'hoprag_reader'").strip() == "1"
    if not exists:
        with pytest.raises(StoreError, match="cannot create role hoprag_reader: grant it CREATEROLE"):
            open_store(url, create=True)
        postgres.sql("CREATE ROLE hoprag_reader NOLOGIN")
    with pytest.raises(StoreError, match="cannot join role hoprag_reader: as an administrator run GRANT hoprag_reader TO plain"):
        open_store(url, create=True)
    postgres.sql("GRANT hoprag_reader TO plain")
    open_store(url, create=True).close()  # with the grant an administrator ran, an ordinary owner sets it up


def hoprag(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "hoprag"), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def notes(tmp_path: Path) -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\nAlpha.\n")
    return tmp_path / "notes"


def fails_in_one_line_without_the_password(args: list[str], message: str) -> None:
    done = hoprag(*args)
    assert done.returncode != 0 and message in done.stderr, (args, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "not-the-password" not in done.stderr + done.stdout and "s3cret-pw" not in done.stderr + done.stdout


@pytest.mark.slow  # a PostgreSQL cluster
def test_bad_store_urls_are_one_line_and_never_show_the_password(postgres, tmp_path):
    wrong = postgres.url(password="not-the-password")
    access = ROOT / "corpus" / "access.yaml"
    cases = [(["index", str(notes(tmp_path)), "--store", wrong, "--groups", "g"], "password authentication failed"),
             (["search", "Falcon", "--store", postgres.url(database="postgres"), "--access", str(access)],
              "no hoprag store in this database"),
             (["search", "Falcon", "--store", postgres.url()], "holds no credentials: pass --access FILE")]
    for args, message in cases:
        fails_in_one_line_without_the_password(args, message)


def test_a_server_that_is_down_is_one_line_and_never_shows_the_password(tmp_path):
    """No cluster: nothing listens on the port (the fast tier's PostgreSQL test)."""
    down = f"postgresql://hoprag_owner:s3cret-pw@127.0.0.1:{bench.free_port()}/hoprag"
    fails_in_one_line_without_the_password(["index", str(notes(tmp_path)), "--store", down, "--groups", "g"],
                                           "cannot connect to PostgreSQL")


# -- replicas --------------------------------------------------------------------------------------


def generation(server: ServerProcess) -> int:
    return httpx.get(f"{server.base}/health", timeout=10).json()["generation"]


def reindex(src: Path, url: str) -> tuple[int, float]:
    """``hoprag index`` as users run it; the generation it committed and when it returned."""
    done = hoprag("index", str(src), "--store", url, "--groups", "engineering", "--quiet")
    assert done.returncode == 0, done.stderr
    return int(done.stdout.rsplit("generation ", 1)[1].split()[0]), time.perf_counter()


def until_everywhere(servers: list[ServerProcess], gen: int, since: float) -> list[float]:
    """Seconds until each replica answers from ``gen``."""
    return until_serving(servers, gen, since, timeout=120)


async def region_and_hits(server: ServerProcess, principal: str) -> tuple[str | None, list[str], bool]:
    async with http_client(server.url, principal) as c:
        walk = await call(c, "graph_walk", start="Heron", relation="region")
        search = await call(c, "search", query="Basalt region storage", k=20)
        fetched = await call(c, "fetch", id="basalt.html")
    return walk.structured_content["answer"], [h["id"] for h in search.structured_content["results"]], fetched.is_error


async def hits(server: ServerProcess, query: str, principal: str = "engineering") -> list[str]:
    async with http_client(server.url, principal) as c:
        return [h["id"] for h in (await call(c, "search", query=query, k=5)).structured_content["results"]]


@pytest.mark.slow  # a PostgreSQL cluster
def test_two_replicas_see_every_add_update_and_delete(database, tmp_path):
    src = indexed(database, tmp_path)
    access = str(tmp_path / "access.yaml")
    servers = [ServerProcess("--store", database, "--access", access) for _ in range(2)]
    try:
        for s in servers:
            assert run(region_and_hits(s, "engineering"))[0] == "eu-north-2"
        (src / "basalt.html").write_text(basalt_html("ap-south-3"))  # update, and add a file
        (src / "notes" / "wren.md").write_text("# Wren\n\nProject Wren depends on Quill.\n")
        lag = until_everywhere(servers, *reindex(src, database))
        for s in servers:
            assert run(region_and_hits(s, "engineering"))[0] == "ap-south-3"
            assert run(hits(s, "Project Wren"))[0] == "notes/wren.md"
        (src / "basalt.html").unlink()
        lag += until_everywhere(servers, *reindex(src, database))
        for s in servers:
            for principal in ("engineering", "finance"):
                answer, found, fetch_failed = run(region_and_hits(s, principal))
                assert answer != "ap-south-3" and "basalt.html" not in found and fetch_failed, principal
        # a restarted replica catches up: it starts from the newest generation
        servers[0].stop()
        servers[0] = ServerProcess("--store", database, "--access", access)
        assert generation(servers[0]) == generation(servers[1])
        print(f"\nupdate visible on both replicas after {', '.join(f'{s:.2f}' for s in lag)} s")
    finally:
        for s in servers:
            s.stop()


@pytest.mark.slow  # a PostgreSQL cluster
def test_a_postgresql_restart_leaves_replicas_answering_then_resyncing(tmp_path):
    cluster = Cluster()  # its own: this test stops it
    try:
        url = cluster.url()
        src = indexed(url, tmp_path)
        servers = [ServerProcess("--store", url, "--access", str(tmp_path / "access.yaml")) for _ in range(2)]
        try:
            before = [run(region_and_hits(s, "engineering")) for s in servers]
            engine = Engine.from_snapshot(open_store(url).snapshot(EVERYONE))
            held = engine.search("Basalt region", frozenset({"engineering"}), 5)
            cluster.stop()
            during = [run(region_and_hits(s, "engineering")) for s in servers]  # from what they hold
            assert during == before and before[0][0] == "eu-north-2"
            assert engine.search("Basalt region", frozenset({"engineering"}), 5) == held
            with pytest.raises(StoreError, match=r"^the document store is unavailable right now; retry shortly$"):
                engine.search("Basalt region", frozenset({"finance"}), 5)  # never checked: no unchecked answer
            cluster.start()
            (src / "basalt.html").write_text(basalt_html("ap-south-3"))
            until_everywhere(servers, *reindex(src, url))  # resynced: listeners reconnect, or the poll finds it
            assert all(run(region_and_hits(s, "engineering"))[0] == "ap-south-3" for s in servers)
            assert all(s.alive() for s in servers)
        finally:
            for s in servers:
                s.stop()
    finally:
        cluster.destroy()


@pytest.mark.slow  # a PostgreSQL cluster
def test_killing_a_replica_midrun_loses_no_call_and_gives_no_wrong_answer(tmp_path):
    """CI-sized; ``hoprag bench replicas`` is the full-size run (the same code)."""
    report = bench.run(passages=200, calls=int(os.environ.get("HOPRAG_FAILOVER_CALLS", "400")), concurrency=4,
                       commits=3, root=tmp_path)
    f = report["failover"]
    print(f"\n{bench.table(report)}")
    assert f["killed"] and f["survivor_alive"]
    assert f["never_succeeded"] == 0 and f["wrong"] == 0 and f["calls"] == 400
    assert report["passed"]
    assert report["index"]["postgresql"]["passages"] == report["index"]["sqlite"]["passages"] == 200


# -- same answers ----------------------------------------------------------------------------------


@pytest.mark.slow  # a PostgreSQL cluster
def test_rankings_from_postgresql_equal_the_embedded_stores_on_musique(database, tmp_path):
    """All 100 shipped MuSiQue questions, 1,890 passages: search, the bridge walk and the prose
    graph rank identically from both stores, so recall cannot differ."""
    from benchmarks import musique
    from benchmarks.retrieval import load_questions
    from benchmarks.strategies import STRATEGIES, Tools

    corpus, questions = musique.convert(out=tmp_path / "musique")
    engines = []
    for target in (str(tmp_path / "m.db"), database):
        store = open_store(target, create=True)
        assert index(corpus, store, ["public"]).failed == []
        engines.append(Engine.from_snapshot(store.snapshot(frozenset({"public"}))))
        store.close()
    public = frozenset({"public"})
    runs = []
    for engine in engines:
        view = engine.view(public)
        out = []
        for q in load_questions(questions):
            out.append(([(h.doc.id, round(h.score, 9)) for h in engine.search(q.question, public, 10)],
                        [STRATEGIES[s].run(q.question, Tools(view, 3)) for s in ("agentic", "graph")]))
        runs.append(out)
    assert len(runs[0]) == 100 and all(hits for hits, _ in runs[0])
    assert runs[0] == runs[1]


@pytest.mark.slow  # a PostgreSQL cluster
def test_backup_and_restore_as_the_readme_says(postgres, database, tmp_path):
    indexed(database, tmp_path)
    dump, restored = tmp_path / "hoprag.dump", postgres.create_database("restored")
    for argv in ([str(postgres.bin / "pg_dump"), "--schema=hoprag", "--enable-row-security", "-Fc", "-f", str(dump), database],
                 [str(postgres.bin / "pg_restore"), "--no-owner", "--role=hoprag_owner", "-d", restored, str(dump)]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    a, b = (open_store(u).snapshot(EVERYONE) for u in (database, restored))
    assert (a.generation, a.docs, a.facts) == (b.generation, b.docs, b.facts)
    assert rows_as(restored, ["finance"]) == {"finance/budget.md"}  # row-level security came back with the tables
