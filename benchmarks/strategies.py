"""Retrieval strategies compared by the benchmark: the product's own search, walker and graph.

Nothing here ranks, weighs or walks by itself: each strategy is a few calls into the engine's
public API (:mod:`hoprag.search`, :mod:`hoprag.walk`, :mod:`hoprag.entities`), and none calls an
LLM or sees gold labels. A strategy maps a question and its :class:`Tools` (the caller's view and
a search that spends the product's :class:`~hoprag.walk.Budget`) to ranked passage ids.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from hoprag.corpus import Corpus, Doc
from hoprag.embed import Vectors, digest, text_of
from hoprag.facts import extract_facts
from hoprag.search import View
from hoprag.store import Changes, Config, Embedding, Passage, open_store
from hoprag.walk import Budget, BudgetExceeded, Search, bridge_walk, specific

__all__ = ["AGENT", "AGENT_HYBRID", "DENSE_STRATEGIES", "STRATEGIES", "AgentServer", "BudgetExceeded", "Strategy", "Tools", "agentic", "bm25", "bm25_titles", "graph"]


class Tools:
    """What a strategy may use for one question: the caller's view and a budgeted search.

    ``search`` defaults to the view's own ranking; the MCP equivalence test passes a search that
    goes through the real server instead, so the same steps can be compared hop by hop.
    """

    def __init__(self, view: View, budget: int, search: Search | None = None):
        self.view, self.budget = view, Budget(budget)
        self.raw: Search = search or (lambda query, k: [h.doc for h in view.search(query, k)])

    @property
    def searches(self) -> int:
        return self.budget.used

    def search(self, query: str, k: int = 10) -> Sequence[Doc]:
        """One search; raises :class:`BudgetExceeded` past the budget."""
        self.budget.spend()
        return self.raw(query, k)


@dataclass(frozen=True)
class Strategy:
    """A strategy and the ranker its searches use (``bm25`` plain, ``bm25-titles`` title-aware,
    ``dense`` the embedder alone, ``hybrid`` title-aware BM25 fused with it)."""

    ranker: str
    run: Callable[[str, Tools], Sequence[str]]


def bm25(question: str, tools: Tools, k: int = 10) -> list[str]:
    """Conventional RAG: one search with the question (served by the plain ``bm25`` ranker)."""
    return [d.id for d in tools.search(question, k)]


bm25_titles = bm25  # the same single search, served by the title-aware ranker


def agentic(question: str, tools: Tools, k: int = 10) -> list[str]:
    """The product's bridge walk (:func:`hoprag.walk.bridge_walk`) within the tools' budget, bridging on
    specific names only (:func:`hoprag.walk.specific`), as the agent does."""
    return bridge_walk(question, tools.raw, tools.view, tools.budget, k, most=specific(len(tools.view.docs))).ranked


def graph(question: str, tools: Tools, k: int = 10) -> list[str]:
    """Personalised PageRank over the caller's mention graph, seeded by the question's entities
    and the best passage of one title-aware search (:meth:`hoprag.entities.EntityView.pagerank`)."""
    seeds = [d.id for d in tools.search(question, 1)]
    return [doc_id for doc_id, _ in tools.view.entities.pagerank(question, seeds, k)]


STRATEGIES: dict[str, Strategy] = {
    "bm25": Strategy("bm25", bm25),
    "bm25-titles": Strategy("bm25-titles", bm25_titles),
    "agentic": Strategy("bm25-titles", agentic),
    "graph": Strategy("bm25-titles", graph),
}


#: The same strategies over passage vectors (``--embedder``): dense alone, and hybrid (title-aware BM25
#: fused with dense, :func:`hoprag.search.fuse`) one-shot, walked and seeding the graph.
DENSE_STRATEGIES: dict[str, Strategy] = {
    "dense": Strategy("dense", bm25),
    "hybrid": Strategy("hybrid", bm25),
    "agentic-hybrid": Strategy("hybrid", agentic),
    "graph-hybrid": Strategy("hybrid", graph),
}

#: The shipped ADK agent (offline model) through a real ``hoprag serve`` over HTTP: it is scored
#: from its ``hoprag ask`` report (:func:`benchmarks.retrieval.evaluate_agent`), not through :class:`Tools`.
AGENT = "agent"
#: The same agent, the server searching hybrid (a store holding the passages' vectors).
AGENT_HYBRID = "agent-hybrid"


class AgentServer:
    """A benchmark corpus served by a real ``hoprag serve --transport http`` subprocess, and the agent asking it.

    The corpus is written out with the benchmark's neutral defaults applied (one ``public`` group,
    trusted) next to an access file with one principal, so the server loads it as any corpus.
    """

    PRINCIPAL, TOKEN = "bench", "bench-token"

    def __init__(self, corpus: Corpus, workdir: Path, budget: int, vectors: Vectors | None = None):
        """``vectors``: serve a store holding the corpus and these passage vectors (hybrid search)."""
        self.budget, self.workdir, self.vectors = budget, workdir, vectors
        self.corpus_path = workdir / "corpus.jsonl"
        with self.corpus_path.open("w", encoding="utf-8") as f:
            for d in corpus.docs:
                record = {"id": d.id, "title": d.title, "text": d.text, "groups": sorted(d.groups),
                          "trusted": d.trusted, "source": d.source,
                          "updated": d.updated.isoformat() if d.updated else None}
                if d.triples is not None:
                    record["triples"] = [list(t) for t in d.triples]
                f.write(json.dumps({k: v for k, v in record.items() if v is not None}, ensure_ascii=False) + "\n")
        self.access_path = workdir / "access.yaml"
        groups = sorted(set().union(*(d.groups for d in corpus.docs)))
        self.access_path.write_text(json.dumps({"principals": {self.PRINCIPAL: {"groups": groups}},
                                                "tokens": {self.TOKEN: self.PRINCIPAL},
                                                "users": {self.PRINCIPAL: self.PRINCIPAL}}), encoding="utf-8")
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.store = workdir / "bench.db" if vectors is not None else None
        if self.store is not None:
            assert vectors is not None
            write_store(corpus, vectors, self.store, str(self.corpus_path))

    def __enter__(self) -> "AgentServer":
        source = ["--store", str(self.store)] if self.store is not None else ["--corpus", str(self.corpus_path)]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", *source,
             "--access", str(self.access_path)],
            stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        for line in self.process.stderr:
            found = re.search(r"(http://\S+/mcp)", line)
            if found:
                self.url = found.group(1)
                break
        if not self.url:
            self.process.wait(5)
            raise RuntimeError(f"hoprag serve did not start (exit {self.process.returncode})")
        threading.Thread(target=self.process.stderr.read, daemon=True).start()  # keep the pipe drained
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)

    def ask(self, question: str) -> dict:
        """The agent's ``hoprag ask --json`` report for one question, through the served MCP tools."""
        from agents.hoprag_agent.run import ask

        os.environ.setdefault("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")
        return asyncio.run(ask(question, self.PRINCIPAL, self.corpus_path, self.access_path,
                               mcp_url=self.url, search_budget=self.budget, model="hoprag-offline"))


def write_store(corpus: Corpus, vectors: Vectors, path: Path, source: str) -> None:
    """A store holding ``corpus`` as it is (no chunking: the benchmark's passage ids stay) and its vectors,
    written as ``hoprag index`` commits (one generation), so a server searches it hybrid."""
    model = vectors.embedder
    passages = [Passage(d, extract_facts(d, corpus.lexicon), row.astype("<f2").tobytes(),
                        digest(model.identity, text_of(d))) for d, row in zip(corpus.docs, vectors.matrix)]
    store = open_store(path, create=True)
    try:
        store.apply(Changes(source, Config(corpus.lexicon, corpus.allowlist, corpus.ranker), "bench",
                            {"corpus.jsonl": ("bench", passages)},
                            embedding=Embedding(model.name, model.identity, model.dim)))
    finally:
        store.close()
