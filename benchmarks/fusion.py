"""``hoprag bench fusion``: tune hybrid search's fusion on one question range, to report on another.

Sweeps the dense weight and pool of :func:`hoprag.search.fuse` (min-max weighted fusion) and compares
reciprocal rank fusion (RRF, k = 60), for the one-shot hybrid search and the hybrid bridge walk, side
by side with title-aware BM25 and dense alone, over the same questions in one run. The product's
constants (``hoprag.search.DENSE_WEIGHT``, ``DENSE_POOL``) are set per row and restored after.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, Optional

import numpy as np
import typer

from hoprag import embed, search

from .retrieval import DEFAULT_BUDGET, Bench, load_corpus, load_questions, run
from .strategies import DENSE_STRATEGIES, STRATEGIES

RRF_K = 60


def rrf(lexical: np.ndarray, similar: np.ndarray, floor: float, weight: float | None = None,
        pool: int | None = None) -> np.ndarray:
    """Reciprocal rank fusion of the two rankings (each passage ranked by BM25 if it matches a query
    word, and by cosine if it matches one or reaches ``floor``), for comparison with :func:`hoprag.search.fuse`."""
    out = np.zeros(len(lexical))
    for scores, keep in ((lexical, lexical > 0), (similar, (lexical > 0) | (similar >= floor))):
        order = np.argsort(-scores, kind="stable")
        ranks = np.empty(len(scores))
        ranks[order] = np.arange(1, len(scores) + 1)
        out += np.where(keep, 1.0 / (RRF_K + ranks), 0.0)
    return out


def _rows(weights: list[float], pools: list[int]) -> Iterator[tuple[str, float, int, bool]]:
    for pool in pools:
        for weight in weights:
            yield f"w={weight:g} pool={pool}", weight, pool, False
    yield f"rrf k={RRF_K}", 0.0, 0, True


def fusion(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus JSONL: {id, title, text, triples?} per line."),
    questions: Path = typer.Option(..., "--questions", help="Questions JSONL: {id, question, answer, supporting_ids}."),
    offset: int = typer.Option(0, "--offset", min=0, help="Skip the first N questions."),
    limit: Optional[int] = typer.Option(50, "--limit", min=1, help="Questions to tune on (after --offset)."),
    embedder: str = typer.Option("minilm", "--embedder", help="The embedder whose vectors are fused."),
    vectors_cache: Path = typer.Option(Path("benchmarks/out/vectors"), "--vectors-cache",
                                       help="Folder keeping each corpus's passage vectors (embedded once)."),
    weights: str = typer.Option("0.3,0.5,0.6,0.7,0.8,0.9", "--weights", help="Dense weights to try."),
    pools: str = typer.Option("20,50,100", "--pools", help="Dense pools to try."),
    budget: int = typer.Option(DEFAULT_BUDGET, "--budget", min=1, help="Searches per question (the walk)."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report."),
) -> None:
    """R@2/5/10 of hybrid search (one-shot and walked) per fusion setting, with BM25-titles and dense alone."""
    bench = Bench(load_corpus(corpus), embed.load(embedder), vectors_cache)
    qs = load_questions(questions)[offset:][:limit]
    bench.vectors  # noqa: B018 - embedded or read from the cache first
    base = run(bench, qs, {"bm25-titles": STRATEGIES["bm25-titles"], "agentic": STRATEGIES["agentic"],
                           "dense": DENSE_STRATEGIES["dense"]}, budget)
    report = {name: s.as_json() for name, s in base.items()}
    saved = search.DENSE_WEIGHT, search.DENSE_POOL, search.fuse
    try:
        for label, weight, pool, reciprocal in _rows([float(w) for w in weights.split(",")],
                                                     [int(p) for p in pools.split(",")]):
            search.DENSE_WEIGHT, search.DENSE_POOL = weight or saved[0], pool or saved[1]
            search.fuse = rrf if reciprocal else saved[2]
            scores = run(bench, qs, {"hybrid": DENSE_STRATEGIES["hybrid"],
                                     "agentic-hybrid": DENSE_STRATEGIES["agentic-hybrid"]}, budget)
            report[label] = {name: s.as_json() for name, s in scores.items()}
    finally:
        search.DENSE_WEIGHT, search.DENSE_POOL, search.fuse = saved
    if as_json:
        typer.echo(json.dumps({"questions": f"{offset}-{offset + len(qs) - 1}", "rows": report}, indent=2))
        return
    typer.echo(f"questions {offset}-{offset + len(qs) - 1}, embedder {embedder}, budget {budget}")
    typer.echo(f"{'setting':<20} {'one-shot R@2/5/10':>20} {'walk R@2/5/10':>20}")
    for name in ("bm25-titles", "dense", "agentic"):
        r = report[name]
        typer.echo(f"{name:<20} {r['recall@2'] * 100:6.1f}{r['recall@5'] * 100:7.1f}{r['recall@10'] * 100:7.1f}")
    for label, rows in report.items():
        if label in base:
            continue
        one, walk = rows["hybrid"], rows["agentic-hybrid"]
        typer.echo(f"{label:<20} {one['recall@2'] * 100:6.1f}{one['recall@5'] * 100:7.1f}{one['recall@10'] * 100:7.1f}"
                   f" {walk['recall@2'] * 100:6.1f}{walk['recall@5'] * 100:7.1f}{walk['recall@10'] * 100:7.1f}")
