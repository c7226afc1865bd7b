"""The benchmark measures the product: a strategy run in-process and the same steps driven through
the real MCP server over HTTP give identical ranked passage ids, hop by hop."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from benchmarks import musique
from benchmarks.retrieval import Bench, load_corpus, load_questions
from benchmarks.strategies import STRATEGIES, Tools
from conftest import ServerProcess, fast_tier
from hoprag.walk import bridge_walk

SAMPLE = 12  # questions; the whole 1,890-passage corpus, so BM25 statistics are the benchmark's own
SLICE = 3  # questions in the fast tier, with only their candidate passages (the same check, on less)


@pytest.fixture(scope="module")
def converted(tmp_path_factory, request) -> Path:
    out = tmp_path_factory.mktemp("musique-full")
    musique.convert(musique.DEFAULT_SOURCE, out, limit=SLICE if fast_tier(request.config) else None)
    return out


@pytest.fixture(scope="module")
def server(converted):
    proc = ServerProcess("--corpus", str(converted / "corpus.jsonl"), "--ranker", "bm25-titles")
    yield proc
    proc.stop()


def mcp_search(url: str):
    """A strategy's search callable that goes through ``tools/call search`` on the running server."""
    client = httpx.Client(headers={"Authorization": "Bearer bench-reader-token", "MCP-Protocol-Version": "2025-11-25",
                                   "Accept": "application/json, text/event-stream"}, timeout=30)
    calls = iter(range(1, 10**9))

    def search(query: str, k: int):
        body = {"jsonrpc": "2.0", "id": next(calls), "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": query, "k": k}}}
        reply = client.post(url, json=body)
        reply.raise_for_status()
        result = reply.json()["result"]
        assert not result.get("isError"), result
        return [SimpleNamespace(id=r["id"], title=r["title"], text=r["text"]) for r in result["structuredContent"]["results"]]

    return search


def test_strategies_rank_the_same_through_the_mcp_server(converted, server):
    bench = Bench(load_corpus(converted / "corpus.jsonl"))
    questions = load_questions(converted / "questions.jsonl")[:SAMPLE]
    view = bench.view("bm25-titles")
    remote = mcp_search(server.url)
    compared = 0
    for q in questions:
        local_walk = bridge_walk(q.question, lambda s, k: [h.doc for h in view.search(s, k)], view, Tools(view, 3).budget)
        served_walk = bridge_walk(q.question, remote, view, Tools(view, 3).budget)
        assert [(h.query, h.results) for h in served_walk.hops] == [(h.query, h.results) for h in local_walk.hops], q.id
        assert served_walk.ranked == local_walk.ranked
        for name in ("bm25-titles", "agentic", "graph"):
            strategy = STRATEGIES[name]
            assert (list(strategy.run(q.question, Tools(view, 3, search=remote)))
                    == list(strategy.run(q.question, Tools(view, 3)))), (name, q.id)
        compared += len(local_walk.hops)
    assert compared >= 2 * len(questions)  # the walk really took several hops through the server


def test_a_wrong_server_ranking_is_caught(converted, server):
    """Negative control: a search that drops the server's best hit changes the walk."""
    bench = Bench(load_corpus(converted / "corpus.jsonl"))
    q = load_questions(converted / "questions.jsonl")[0]
    view = bench.view("bm25-titles")
    remote = mcp_search(server.url)
    skewed = bridge_walk(q.question, lambda s, k: remote(s, k + 1)[1:], view, Tools(view, 3).budget)
    assert skewed.ranked != bridge_walk(q.question, remote, view, Tools(view, 3).budget).ranked
