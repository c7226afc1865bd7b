"""``hoprag bench embed``: what hybrid search costs -- indexing throughput per embedder (through
:func:`hoprag.ingest.index`, re-indexing included), query embedding latency, and dense search at scale
(an exact matrix product over a view's rows) with the start-up and memory it adds.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import typer

from hoprag import embed
from hoprag.embed import Vectors
from hoprag.engine import Engine
from hoprag.ingest import index
from hoprag.store import Embedding, StoredVectors, open_store, pack_vectors, unpack_vectors

from . import synthetic
from .ingest_bench import write_files
from .server_bench import OUT, machine

#: Dense and hybrid search over a synthetic corpus in a fresh interpreter of the checkout on PYTHONPATH:
#: random unit vectors reach the engine as a store's do (float16, through :func:`hoprag.embed.attach`),
#: so each checkout holds and searches them its own way; the query vectors are kept after a first pass,
#: so what is timed is the search itself.
_SEARCH_PROBE = """
import json, statistics, sys, time
from pathlib import Path
import numpy as np
from hoprag import embed
from hoprag.corpus import load_corpus
from hoprag.engine import Engine
from hoprag.store import Embedding, StoredVectors
corpus, group = Path(sys.argv[1]), frozenset({sys.argv[2]})
loaded = load_corpus(corpus)
queries = json.loads((corpus.parent / "queries.json").read_text())[:100]
rng, dim = np.random.default_rng(0), 384
matrix = rng.standard_normal((len(loaded.docs), dim)).astype(np.float32)
matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)

class Fixed(embed.Embedder):
    name, identity, min_similarity, dim = "random", "random/bench/384", 0.25, 384

    def _embed(self, texts, query):
        return rng.standard_normal((len(texts), dim))

embed._NAMED["random"] = Fixed
stored = StoredVectors(Embedding("random", Fixed.identity, dim), matrix.astype(np.float16))
start = time.perf_counter()
vectors = embed.attach(stored, None, "bench")
report = {"attach_s": time.perf_counter() - start}
for label, ranker, vecs in (("bm25-titles", "bm25-titles", None), ("hybrid", "bm25-titles", vectors),
                            ("dense", "dense", vectors)):
    engine = Engine(loaded, ranker, vectors=vecs)  # held: a view reads back into its engine
    view = engine.view(group)
    view.entities.named  # the title match's entity index: not what the first search's time is about
    start = time.perf_counter()
    view.search(queries[0], 10)
    first = time.perf_counter() - start
    for q in queries:
        view.search(q, 10)
    times = []
    for q in queries:
        start = time.perf_counter()
        view.search(q, 10)
        times.append(1000 * (time.perf_counter() - start))
    report[label] = {"p50": statistics.median(times), "p90": float(np.percentile(times, 90)), "first_s": first,
                     "rows": len(view.rows)}
print(json.dumps(report))
"""


def throughput(name: str, files: int, out: Path) -> dict[str, Any]:
    """Index ``files`` synthetic files with embedder ``name``, then re-index unchanged and after one edit."""
    model = embed.load(name)
    src, db = write_files(out / "files", files), out / f"embed-{name.replace(':', '_')}.db"
    for stale in out.glob(f"{db.name}*"):
        stale.unlink()
    rows = {}
    for step in ("index", "reindex_unchanged", "reindex_one_changed"):
        if step == "reindex_one_changed":
            one = next(src.rglob("*.md"))
            one.write_text(one.read_text(encoding="utf-8").replace("notes", "notes (edited)", 1), encoding="utf-8")
        store = open_store(db, create=True)
        try:
            start = time.perf_counter()
            report = index(src, store, embedder=model)
            rows[step] = {"seconds": round(time.perf_counter() - start, 2), "embedded": report.embedded,
                          "reused": report.reused, "embed_seconds": round(report.embed_seconds, 2),
                          "passages": report.total_passages}
        finally:
            store.close()
    first = rows["index"]
    first["passages_per_s"] = round(first["embedded"] / max(first["embed_seconds"], 1e-9), 1)
    first["minutes_per_10k"] = round(10_000 / max(first["passages_per_s"], 1e-9) / 60, 1)
    queries = ["Who owns the release gate for Atlas?", "which region stores telemetry", "budget review", "x"] * 5
    model.query("warm up")
    times = []
    for q in queries:
        start = time.perf_counter()
        model.query(q + " ")  # not the kept query vectors: an embedding each time
        times.append(1000 * (time.perf_counter() - start))
    return {**rows, "query_ms_p50": round(statistics.median(times), 1), "dim": model.dim}


def at_scale(passages: int, out: Path) -> dict[str, Any]:
    """Dense and hybrid search over ``passages`` synthetic passages with random unit vectors: search
    p50 with the query's embedding given (what the matrix product and fusion cost), the packed
    vectors' size and load time, and the memory the vectors add."""
    corpus = synthetic.write(out / f"corpus-{passages}", passages)
    rng = np.random.default_rng(0)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from hoprag.corpus import load_corpus

    loaded = load_corpus(corpus)
    dim = 384
    matrix = rng.standard_normal((len(loaded.docs), dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    embedding = Embedding("random", "random/bench/384", dim)
    blob = pack_vectors(StoredVectors(embedding, matrix.astype(np.float16)))
    start = time.perf_counter()
    stored = unpack_vectors(blob, embedding, len(loaded.docs))
    assert stored is not None
    as_float = np.asarray(stored.matrix, dtype=np.float32)
    load_s = time.perf_counter() - start

    class Fixed(embed.Embedder):
        name, identity, min_similarity = "random", "random/bench/384", 0.25

        def _embed(self, texts: list[str], query: bool) -> np.ndarray:
            return rng.standard_normal((len(texts), dim))

    model = Fixed()
    model.dim = dim
    vectors = Vectors(model, as_float)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queries = json.loads((corpus.parent / "queries.json").read_text())[:100]
    groups = frozenset({"engineering"})
    report: dict[str, Any] = {"passages": len(loaded.docs), "packed_mb": round(len(blob) / 2**20, 1),
                              "unpack_s": round(load_s, 3)}
    for label, ranker, vecs in (("bm25-titles", "bm25-titles", None), ("hybrid", "bm25-titles", vectors),
                                ("dense", "dense", vectors)):
        engine = Engine(loaded, ranker, vectors=vecs)
        view = engine.view(groups)
        for q in queries:  # the query vectors kept: what follows times the search itself
            view.search(q, 10)
        times = []
        for q in queries:
            start = time.perf_counter()
            view.search(q, 10)
            times.append(1000 * (time.perf_counter() - start))
        report[label] = {"search_ms_p50": round(statistics.median(times), 2),
                         "search_ms_p90": round(float(np.percentile(times, 90)), 2), "view_rows": len(view.rows)}
    report["rss_mb_vectors"] = round(rss1 - rss0, 0)
    report["rss_mb_peak"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0)
    return report


def embed_bench(
    embedders: str = typer.Option("minilm,e5-small", "--embedders", help="Embedders to measure, comma-separated."),
    files: int = typer.Option(300, "--files", min=10, help="Synthetic Markdown files to index with each embedder."),
    passages: int = typer.Option(100_000, "--passages", min=100, help="Passages for dense search at scale (0: skip)."),
    out: Path = typer.Option(OUT / "embed", "--out", help="Directory for the corpora, stores and embed.json."),
) -> dict[str, Any]:
    """Indexing throughput per embedder (and re-indexing: only what changed is embedded), query
    embedding latency, and dense/hybrid search p50, vector load time and memory at scale."""
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"machine": machine(), "load_average": os.getloadavg()[0], "files": files}
    for name in [e.strip() for e in embedders.split(",") if e.strip()]:
        try:
            report[name] = throughput(name, files, out)
        except embed.EmbedderError as exc:
            report[name] = {"error": str(exc)}
    if passages:
        report["at_scale"] = at_scale(passages, out)
    report["load_average_after"] = os.getloadavg()[0]
    (out / "embed.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    typer.echo(json.dumps(report, indent=2))
    return report


def dense_speed(
    against: Path = typer.Option(..., "--against", help="Another checkout of hoprag (say main, `git worktree add`): "
                                 "its search alternates with this one's."),
    passages: int = typer.Option(100_000, "--passages", min=100, help="Synthetic passages (written once under --out)."),
    group: str = typer.Option("engineering", "--group", help="The caller's group (engineering reads about 2/3)."),
    runs: int = typer.Option(3, "--runs", min=1, help="Fresh processes of each checkout, alternating."),
    out: Path = typer.Option(OUT / "embed", "--out", help="Directory for the synthetic corpus."),
) -> dict[str, Any]:
    """BM25, hybrid and dense search p50/p90 at scale (query vectors given), this checkout against
    another, in fresh processes taking turns (a noisy machine slows both alike), with the time to attach
    a store's vectors and a view's first search (its dense rows built)."""
    corpus = out / f"corpus-{passages}" / "corpus.jsonl"
    if not (corpus.parent / "queries.json").exists():
        synthetic.write(corpus.parent, passages)
    trees = {"this checkout": Path(__file__).resolve().parent.parent, "--against": against.resolve()}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    load = [os.getloadavg()[0]]
    for _ in range(runs):
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, "-c", _SEARCH_PROBE, str(corpus.resolve()), group], cwd=tree,
                                  env=env, capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"{tree}: the search probe failed: {done.stderr.strip()[-500:]}")
            rows[name].append(json.loads(done.stdout.splitlines()[-1]))
            load.append(os.getloadavg()[0])
    med = statistics.median
    lines = [f"{passages:,} passages, the {group} view: {rows['this checkout'][0]['hybrid']['rows']:,} rows; "
             f"{runs} alternating processes each; load average {min(load):.1f}-{max(load):.1f}", "",
             "| checkout | BM25-titles p50 / p90 ms | hybrid p50 / p90 ms | dense p50 / p90 ms | vectors attached s | "
             "a view's first hybrid search s (its dense rows) |", "|---|---|---|---|---|---|"]
    for name, got in rows.items():
        cells = [f"{med(r[k]['p50'] for r in got):.2f} / {med(r[k]['p90'] for r in got):.2f}"
                 for k in ("bm25-titles", "hybrid", "dense")]
        lines.append(f"| {name} ({trees[name]}) | {' | '.join(cells)} | {med(r['attach_s'] for r in got):.2f} | "
                     f"{med(r['hybrid']['first_s'] for r in got):.2f} |")
    ratios = sorted(a["hybrid"]["p50"] / b["hybrid"]["p50"] for a, b in zip(rows["this checkout"], rows["--against"]))
    lines += ["", f"hybrid p50, this checkout / --against: median {med(ratios):.2f}x (pairs {ratios[0]:.2f}-{ratios[-1]:.2f})"]
    typer.echo("\n".join(lines))
    return {"rows": rows, "ratios": ratios}


def vector_stores(
    passages: int = typer.Option(100_000, "--passages", min=100, help="Synthetic passages."),
    embedder: str = typer.Option("minilm", "--embedder", help="Whose identity the vectors carry (it loads at serve)."),
    out: Path = typer.Option(OUT / "embed", "--out", help="Directory for the corpus and the two stores."),
) -> None:
    """Two stores of one synthetic corpus for ``hoprag bench cold-start``: lexical, and with random unit
    vectors under ``embedder``'s identity (so serving loads the real model, without embedding 100,000
    passages first), each with the derived data ``hoprag index --access`` prepares."""
    from hoprag.access import load_access
    from hoprag.ingest import prepare

    model = embed.load(embedder)
    if model is None:
        raise typer.BadParameter("name an embedder, not none", param_hint="--embedder")
    rng = np.random.default_rng(0)

    class Random(embed.Embedder):
        name, identity, dim, batch = model.name, model.identity, model.dim, 4096

        def _embed(self, texts: list[str], query: bool) -> np.ndarray:
            return rng.standard_normal((len(texts), self.dim))

    corpus = synthetic.write(out / f"corpus-{passages}", passages)
    access = corpus.parent / "access.yaml"
    principals = [p.groups for p in load_access(access).principals.values()]
    for name, fake in (("lexical", None), ("vectors", Random())):
        db = out / f"store-{name}-{passages}.db"
        for stale in out.glob(f"{db.name}*"):
            stale.unlink()
        store = open_store(db, create=True)
        try:
            index(corpus, store, max_bytes=2**31, embedder=fake)
            prepare(store, principals, "bm25-titles")
        finally:
            store.close()
        query = json.loads((corpus.parent / "queries.json").read_text())[0]
        typer.echo(f"hoprag bench cold-start --store {db} --access {access} --query '{query}' --against CHECKOUT")
