"""The benchmark harnesses on tiny inputs: each writes well-formed JSON (and its PNGs). No speed is checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from benchmarks import synthetic
from benchmarks.chapter.bench import chapter
from benchmarks.embed_bench import dense_speed, vector_stores
from benchmarks.graph_bench import compare, graphs
from benchmarks.httpload import ENDPOINTS, have_wrk
from benchmarks.ingest_bench import index_speed, ingest, side_by_side, timed_index
from benchmarks.load import load, soak
from benchmarks.server_bench import expected, scale, server, wrong_samples
from hoprag.corpus import load_corpus
from hoprag.engine import Engine
from hoprag.settings import DEMO_CORPUS

app = typer.Typer()
for command in (server, scale, load, soak, ingest, side_by_side, index_speed, graphs, dense_speed, vector_stores):
    app.command(command.__name__.replace("_", "-"))(command)


def invoke(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.slow  # a benchmark run
def test_chapter_bench_reproduces_the_chapter_and_runs_the_agent(tmp_path):
    # Called directly: the agent's stdio MCP subprocess needs a real stderr, which CliRunner replaces.
    chapter(corpus=DEMO_CORPUS, access=None, token_question="q3", agent=True, out=tmp_path, figures=None)
    report = read(tmp_path / "chapter.json")
    assert all(report["matches_chapter"].values()), report["matches_chapter"]
    assert report["frontier"]["loop"] == {"accuracy": 1.0, "mean_docs": 3.67, "mean_searches": 1.83}
    assert report["frontier"]["knee"] == 3
    assert (report["tokens"]["long_context"], report["tokens"]["rag"]) == (73, 36)
    agent = report["agent"]
    assert agent["accuracy"] == 1.0 and [r["id"] for r in agent["questions"]] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert agent["mean"]["prompt_tokens"] > 0 and agent["mean"]["model_calls"] > 0
    assert all(r["docs_read"] <= r["docs_returned"] for r in agent["questions"])
    for png in ("fig15_2_frontier.png", "budget_sweep.png", "fig15_4_tokens.png", "agent_cost.png"):
        assert (tmp_path / png).stat().st_size > 0


@pytest.mark.slow  # a benchmark run
@pytest.mark.parametrize("generator", ["python", pytest.param("wrk", marks=pytest.mark.skipif(
    not have_wrk(), reason="wrk is not installed (apt-get install wrk)"))])
def test_server_bench_puts_every_endpoint_side_by_side(tmp_path, generator):
    invoke("server", "--duration", "1", "--concurrency", "1", "--generator", generator, "--out", str(tmp_path))
    report = read(tmp_path / "server.json")
    assert [r["endpoint"] for r in report["runs"]] == list(ENDPOINTS)
    for r in report["runs"]:
        assert r["generator"] == generator and r["connections"] == 1
        assert r["requests"] > 0 and r["errors"] == 0 and 0 < r["p50_ms"] <= r["p99_ms"]
        assert r["ratio_to_bare"] > 0
    assert report["runs"][0]["ratio_to_bare"] == 1.0
    assert (tmp_path / "server.png").stat().st_size > 0


@pytest.mark.slow  # a benchmark run
def test_scale_bench_on_a_tiny_synthetic_corpus(tmp_path):
    invoke("scale", "--sizes", "200", "--searches", "20", "--duration", "1", "--generator", "python",
           "--out", str(tmp_path))
    (row,) = read(tmp_path / "scale.json")["sizes"]
    assert row["passages"] == 200
    assert row["in_process"]["build_s"] >= row["in_process"]["graphs_s"] >= 0
    assert row["in_process"]["rss_mb"] > 0 and row["in_process"]["search"]["p50_ms"] > 0
    assert row["mcp-2025-11-25"]["errors"] == 0 and row["bare"]["errors"] == 0
    assert (tmp_path / "scale.png").stat().st_size > 0


@pytest.mark.slow  # a benchmark run
def test_ingest_and_cold_start_benches_serve_from_the_store_they_index(tmp_path):
    invoke("ingest", "--files", "30", "--passages", "300", "--out", str(tmp_path))
    report = read(tmp_path / "ingest.json")
    assert report["index"]["passages_written"] == 30 and report["reindex_one_changed"]["passages_written"] == 1
    assert report["index_jsonl"]["passages"] == 300 and report["reload"]["reload_s"] > 0
    for start in report["cold_start"].values():
        assert 0 < start["startup_s"] <= start["first_answer_s"] <= start["warm_s"]
    query = json.loads((tmp_path / "corpus-300" / "queries.json").read_text())[0]
    result = CliRunner().invoke(app, ["side-by-side", "--store", str(tmp_path / "store-300.db"), "--access",
                                      str(tmp_path / "corpus-300" / "access.yaml"), "--query", query, "--runs", "1",
                                      "--against", str(Path(__file__).resolve().parent.parent)])
    assert result.exit_code == 0, result.output
    assert result.output.count("| this checkout") == 1 and result.output.count("| --against") == 1


@pytest.mark.slow  # a benchmark run
def test_index_speed_alternates_two_checkouts_over_the_same_files(tmp_path):
    result = CliRunner().invoke(app, ["index-speed", "--files", "20", "--runs", "2", "--repeat", "1", "--out",
                                      str(tmp_path), "--against", str(Path(__file__).resolve().parent.parent)])
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    rows = [line for line in result.output.splitlines() if line.startswith(("| this checkout", "| --against"))]
    assert len(rows) == 2 and all("| 20 | 20 |" in row for row in rows), result.output  # files, passages
    assert "per passage, this checkout / --against: median" in result.output


@pytest.mark.slow  # fresh processes of two checkouts
def test_dense_speed_alternates_two_checkouts_over_the_same_corpus(tmp_path):
    result = CliRunner().invoke(app, ["dense-speed", "--passages", "300", "--runs", "1", "--out", str(tmp_path),
                                      "--against", str(Path(__file__).resolve().parent.parent)])
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    rows = [line for line in result.output.splitlines() if line.startswith(("| this checkout", "| --against"))]
    assert len(rows) == 2 and "300 passages, the engineering view:" in result.output, result.output
    assert "hybrid p50, this checkout / --against: median" in result.output


@pytest.mark.slow  # indexes two stores and loads the packaged model
def test_vector_stores_carry_the_embedders_identity_so_serving_loads_it(tmp_path):
    from hoprag import embed
    from hoprag.store import open_store

    invoke("vector-stores", "--passages", "200", "--out", str(tmp_path))
    lexical, vectors = open_store(tmp_path / "store-lexical-200.db"), open_store(tmp_path / "store-vectors-200.db")
    try:
        assert lexical.embedding() is None and lexical.passage_count() == vectors.passage_count() == 200
        assert vectors.embedding().identity == embed.load("minilm").identity
        engine = Engine.over(vectors)  # the store's own embedder, the real one: identities match
        assert engine.vectors is not None and engine.vectors.matrix.shape == (200, 384) and engine.vectors.matrix.any()
    finally:
        lexical.close()
        vectors.close()


@pytest.mark.slow  # two servers, alternating
def test_graphs_bench_compares_two_checkouts_answers_and_networkx(tmp_path):
    corpus = synthetic.write(tmp_path / "corpus", 400)
    timed_index(corpus, tmp_path / "store.db", max_bytes=2**31)
    result = CliRunner().invoke(app, ["graphs", "--store", str(tmp_path / "store.db"), "--access",
                                      str(corpus.parent / "access.yaml"), "--runs", "1", "--walks", "5",
                                      "--networkx-calls", "2", "--out", str(tmp_path),
                                      "--against", str(Path(__file__).resolve().parent.parent)])
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    report = read(tmp_path / "graphs.json")
    calls = {"graph_overview": 10, "graph_walk": 5, "graph_hops": 200}
    assert {tool: t["identical"] for tool, t in report["answers"].items()} == calls  # the same checkout twice
    assert report["answers"]["graph_hops"]["same_ranking"] == 200 and report["networkx"]["calls"] == 2
    assert 0 <= report["networkx"]["same_top"] <= 2 and "networkx.pagerank" in result.output
    # a changed ranking or answer is counted as one
    rows = {name: [{"answers": [dict(a) for a in run["answers"]]} for run in runs] for name, runs in report["rows"].items()}
    hops = rows["--against"][0]["answers"][-1]
    hops["passages"] = hops["passages"][::-1]
    walk = rows["--against"][0]["answers"][10]
    walk["answer"] = "elsewhere"
    probes = [("graph_overview", {})] * 10 + [("graph_walk", {})] * 5 + [("graph_hops", {})] * 200
    changed = compare(rows, probes)
    assert changed["graph_walk"]["identical"] == 4 and changed["graph_hops"]["identical"] == 199
    assert changed["graph_hops"]["same_ranking"] == 199 + (len(hops["passages"]) < 2)


@pytest.mark.slow  # a benchmark run
def test_load_checks_answers_against_the_engine(tmp_path):
    invoke("load", "--requests", "200", "--chunks", "2", "--sample-every", "5", "--generator", "python",
           "--out", str(tmp_path))
    report = read(tmp_path / "load.json")
    assert report["passed"] and report["requests"] >= 200 and len(report["chunks"]) == 2
    assert report["errors"] == 0 and report["wrong"] == 0 and report["checked"] >= 30
    assert (tmp_path / "load.png").stat().st_size > 0


@pytest.mark.slow  # a benchmark run
def test_soak_samples_rss_and_fits_a_slope(tmp_path):
    invoke("soak", "--duration", "3", "--interval", "0.5", "--sample-every", "11", "--generator", "python",
           "--endpoint", "mcp-2026-07-28", "--out", str(tmp_path))
    report = read(tmp_path / "soak.json")
    assert report["passed"] and report["load"]["requests"] > 0 and report["checked"] > 0
    assert len(report["rss_samples"]) >= 4 and isinstance(report["slope_mb_per_min"], float)
    assert (tmp_path / "soak.png").stat().st_size > 0


def test_a_wrong_answer_is_caught(engine):
    """Negative control for the spot checks: a tampered result or a result for another query is wrong."""
    eng, queries = frozenset({"engineering"}), ["Aurora", "Falcon"]
    payload = expected(engine, eng, "Aurora", 3)
    good = {"jsonrpc": "2.0", "id": 1, "result": {"isError": False, "structuredContent": payload,
                                                  "content": [{"type": "text", "text": json.dumps(payload, indent=2)}]}}
    assert wrong_samples(engine, eng, queries, 3, "mcp-2025-11-25", [json.dumps(good)]) == []
    tampered = json.loads(json.dumps(good))
    tampered["result"]["structuredContent"]["results"][0]["facts"] = [["Aurora", "region", "attacker-zone"]]
    other = dict(good, id=2)  # request 2 asked "Falcon"
    assert len(wrong_samples(engine, eng, queries, 3, "mcp-2025-11-25", [json.dumps(tampered), json.dumps(other)])) == 2


def test_synthetic_corpus_is_deterministic_and_loads(tmp_path):
    assert synthetic.generate(50, seed=1) == synthetic.generate(50, seed=1)
    corpus = load_corpus(synthetic.write(tmp_path, 100))
    engine = Engine(corpus, "overlap")
    assert len(corpus.docs) == 100 and {r for d in corpus.docs for _, r, _ in engine.facts(d)} >= {"depends_on", "region"}
    assert any(not r["trusted"] for r in synthetic.generate(1000)[0])
