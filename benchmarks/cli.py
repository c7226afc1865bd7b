"""``hoprag bench``: the multi-hop retrieval benchmark and its dataset converter."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from hoprag.corpus import CorpusError
from hoprag.walk import DEFAULT_BUDGET

from . import musique
from .retrieval import Bench, load_corpus, load_questions, report_json, report_table, run, select
from .strategies import AGENT, AGENT_HYBRID, DENSE_STRATEGIES, STRATEGIES

bench_app = typer.Typer(help="Benchmarks: quality, cost and speed, measured side by side in one run.",
                        no_args_is_help=True, add_completion=False)


def _fail(message: str) -> None:
    typer.secho(message, err=True, fg=typer.colors.RED)
    raise typer.Exit(1)


@bench_app.command()
def retrieval(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus JSONL: {id, title, text, triples?} per line."),
    questions: Path = typer.Option(..., "--questions", help="Questions JSONL: {id, question, answer, supporting_ids} per line."),
    strategies: str = typer.Option(",".join(STRATEGIES), "--strategies",
                                   help=f"Comma-separated, from: {', '.join([*STRATEGIES, *DENSE_STRATEGIES, AGENT, AGENT_HYBRID])} "
                                        "(agent: the ADK agent through a real hoprag serve over HTTP, agent-hybrid: "
                                        "over a store with the passages' vectors; not run by default, they are slow)."),
    budget: int = typer.Option(DEFAULT_BUDGET, "--budget", min=1, help="Hard cap on searches per question (MuSiQue runs are reported at 3)."),
    offset: int = typer.Option(0, "--offset", min=0, help="Skip the first N questions (with --limit: a held-out range)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N questions (after --offset)."),
    as_json: bool = typer.Option(False, "--json", help="Print {\"strategies\": {name: {recall@2, ...}}} only."),
    embedder: str = typer.Option("minilm", "--embedder", help="The embedder of the dense and hybrid strategies."),
    vectors_cache: Path = typer.Option(Path("benchmarks/out/vectors"), "--vectors-cache",
                                       help="Folder keeping each corpus's passage vectors (embedded once)."),
) -> None:
    """Recall@2/5/10 of supporting passages, searches and milliseconds per question, per strategy."""
    from hoprag import embed

    try:
        chosen = select([s.strip() for s in strategies.split(",") if s.strip()])
        dense = any(n in DENSE_STRATEGIES or n == AGENT_HYBRID for n in chosen)
        model = embed.load(embedder) if dense else None
        loaded = load_corpus(corpus)
        every = load_questions(questions)
        qs = every[offset:][:limit]
        if not qs:
            raise ValueError(f"--offset {offset} leaves no question ({questions} has {len(every)}); use a smaller --offset")
    except (CorpusError, ValueError, OSError) as exc:
        _fail(str(exc))
        return
    start = time.perf_counter()
    bench = Bench(loaded, model, vectors_cache)
    if dense:
        bench.vectors  # noqa: B018 - embedded (or read from the cache) before timing
    for s in chosen.values():  # each ranker's index before timing (entity graphs: in the untimed warm-up)
        if s is not None:
            bench.view(s.ranker)
    built = time.perf_counter() - start
    try:
        scores = run(bench, qs, chosen, budget, progress=len(qs) * len(chosen) >= 50)
    except ValueError as exc:
        _fail(str(exc))
        return
    if as_json:
        typer.echo(report_json(scores))
        return
    typer.echo(f"{len(qs)} questions, {len(loaded.docs)} passages (index built in {built:.2f} s), budget {budget} searches"
               + (f", embedder {model.name}" + (f" ({len(loaded.docs) / bench.embed_seconds:.1f} passages/s)"
                                                 if bench.embed_seconds else " (vectors cached)") if model else ""))
    typer.echo(report_table(scores))


@bench_app.command("convert-musique")
def convert_musique(
    source: Path = typer.Option(musique.DEFAULT_SOURCE, "--source", help="Directory with questions.json, corpus.json, openie_triples.json."),
    out: Path = typer.Option(musique.DEFAULT_OUT, "--out", help="Output directory (gitignored benchmarks/out/ by default)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="First N questions and only their candidate paragraphs."),
    triples: bool = typer.Option(True, "--triples/--no-triples", help="Keep the OpenIE triples (omit them to test the fallback)."),
) -> None:
    """Convert HippoRAG's MuSiQue sample (CC BY 4.0, via OSU-NLP-Group/HippoRAG, MIT) to benchmark JSONL."""
    try:
        corpus_path, questions_path = musique.convert(source, out, limit, triples)
    except (OSError, KeyError, ValueError) as exc:
        _fail(f"cannot convert {source}: {exc}")
        return
    typer.echo(f"wrote {corpus_path} and {questions_path}")


def _register() -> None:
    """Mount the other benchmarks: each module owns its command's options."""
    from .acl_recall import acl
    from .chapter.bench import chapter
    from .docs import docs
    from .embed_bench import dense_speed, embed_bench, vector_stores
    from .fusion import fusion
    from .graph_bench import graphs
    from .ingest_bench import index_speed, ingest, phases, side_by_side
    from .load import load, soak
    from .reload_bench import reload
    from .replicas import replicas
    from .server_bench import scale, server

    for name, command in (("chapter", chapter), ("server", server), ("scale", scale), ("load", load),
                          ("soak", soak), ("acl", acl), ("ingest", ingest), ("startup-phases", phases),
                          ("cold-start", side_by_side), ("index-speed", index_speed),
                          ("replicas", replicas), ("reload", reload), ("docs", docs), ("fusion", fusion),
                          ("embed", embed_bench), ("dense-speed", dense_speed), ("vector-stores", vector_stores),
                          ("graphs", graphs)):
        bench_app.command(name)(command)


_register()
