"""``hoprag bench server`` and ``hoprag bench scale``: what the MCP layer costs, and how the engine scales.

``server`` puts the MCP ``search`` tool (stateless HTTP, both protocol eras) side by side with a
bare Starlette endpoint that does the same useful work -- bearer token to principal, the same
engine search, the same result JSON (:func:`search_payload`) -- served by the same uvicorn
settings: one process, one event loop, the listener from :func:`mcp_server.run.open_listener`.
The difference is the protocol layer. ``scale`` builds synthetic corpora of growing size
(:mod:`benchmarks.synthetic`) and measures build time, memory and search latency in-process and
over HTTP.

``python -m benchmarks.server_bench bare|probe`` runs the bare endpoint and the in-process probe
as separate processes, so every measurement gets a fresh interpreter.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import httpx
import numpy as np
import typer
import uvicorn
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from tqdm import tqdm

from hoprag import settings
from hoprag.access import Access, Principal, load_access
from hoprag.corpus import load_corpus
from hoprag.engine import Engine
from hoprag.settings import DEMO_CORPUS
from hoprag.text import is_entity
from mcp_server.run import open_listener
from mcp_server import tools
from mcp_server.tools import MAX_K, MAX_QUERY_CHARS

from . import synthetic
from .httpload import ENDPOINTS, LoadResult, ServerProcess, bare_command, have_wrk, mcp_command, proc_status, run_load, target

OUT = Path(__file__).resolve().parent / "out"
#: Process settings the bare endpoint can be given (``--tune-bare``): those of the recommended serve.py patch.
TUNINGS = ("gc-freeze",)  # TCP_NODELAY needs no switch: the shared listener always sets it


def search_payload(engine: Engine, groups: frozenset[str], query: str, k: int) -> dict[str, Any]:
    """The ``search`` tool's structured result for a caller reading ``groups``, built without MCP (the bare
    baseline does the same work)."""
    return tools.search(engine, Principal("caller", groups), query, k).model_dump(mode="json")


def bare_app(engine: Engine, access: Access) -> Starlette:
    """POST /search ``{query, k}`` with a bearer token -> :func:`search_payload` (same limits as the tool)."""

    async def search(request: Request) -> JSONResponse:
        auth = request.headers.get("authorization", "")
        principal = access.by_token(auth[7:]) if auth[:7].lower() == "bearer " else None
        if principal is None:
            return JSONResponse({"error": "unauthenticated"}, status_code=401)
        try:
            args = await request.json()
            query, k = args["query"], args.get("k", 5)
            valid = isinstance(query, str) and 1 <= len(query) <= MAX_QUERY_CHARS and type(k) is int and 1 <= k <= MAX_K
        except (ValueError, KeyError, TypeError):
            valid = False
        if not valid:
            return JSONResponse({"error": f"expected {{query: 1-{MAX_QUERY_CHARS} chars, k: 1-{MAX_K}}}"}, status_code=400)
        return JSONResponse(search_payload(engine, principal.groups, query, k))

    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "documents": len(engine.docs)})

    return Starlette(routes=[Route("/search", search, methods=["POST"]), Route("/health", health)])


# --- correctness of what the servers answer -------------------------------------------------------


def expected(engine: Engine, groups: frozenset[str], query: str, k: int) -> dict[str, Any]:
    """What a correct server answers this principal's search with."""
    return search_payload(engine, groups, query, k)


def wrong_samples(engine: Engine, groups: frozenset[str], queries: Sequence[str], k: int,
                  endpoint: str, bodies: Sequence[str]) -> list[str]:
    """Kept response bodies that differ from the in-process engine for the same principal and query.

    An MCP body names its request by JSON-RPC id (request ``i`` asked query ``(i - 1) % len(queries)``);
    both its ``structuredContent`` and its text content must equal the engine's result.
    """
    if endpoint == "bare":
        raise ValueError("bare responses carry no request id; check them with check_endpoint")
    bad = []
    for raw in bodies:
        body = json.loads(raw)
        want = expected(engine, groups, queries[(int(body["id"]) - 1) % len(queries)], k)
        result = body.get("result", {})
        texts = [json.loads(c["text"]) for c in result.get("content", []) if c.get("type") == "text"]
        if result.get("isError") or result.get("structuredContent") != want or texts != [want]:
            bad.append(raw[:300])
    return bad


def check_endpoint(engine: Engine, groups: frozenset[str], queries: Sequence[str], k: int,
                   endpoint: str, server: ServerProcess, token: str) -> None:
    """One request per query through the real endpoint; raises if any answer differs from the engine."""
    t = target(endpoint, server, token, queries, k)
    with httpx.Client(base_url=f"http://{t.host}:{t.port}", headers=dict(t.headers), timeout=30) as client:
        for i, query in enumerate(queries, start=1):
            reply = client.post(t.path, content=t.body(i))
            reply.raise_for_status()
            wrong = (reply.json() != expected(engine, groups, query, k) if endpoint == "bare"
                     else wrong_samples(engine, groups, queries, k, endpoint, [reply.text]))
            if wrong:
                raise RuntimeError(f"{endpoint} answered {query!r} differently from the engine")


# --- inputs -----------------------------------------------------------------------------------------


def default_queries(corpus: Path) -> list[str]:
    """``queries.json`` beside a synthetic corpus, else from ``questions.yaml``: the question texts,
    then the entity names an agent would search for (start entities and one-word expected answers)."""
    home = corpus if corpus.is_dir() else corpus.parent
    if (home / "queries.json").exists():
        return json.loads((home / "queries.json").read_text(encoding="utf-8"))
    questions = yaml.safe_load((home / "questions.yaml").read_text(encoding="utf-8"))["questions"]
    names = [q["start"] for q in questions] + [q["expected"] for q in questions if is_entity(q.get("expected") or "")]
    return [q["text"] for q in questions] + list(dict.fromkeys(names))


def access_path(corpus: Path, access: Optional[Path]) -> Path:
    return access or (corpus if corpus.is_dir() else corpus.parent) / "access.yaml"


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    model = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                  if ln.startswith("model name")), "unknown")
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "load_generator": "wrk" if have_wrk() else "python"}


def write_outputs(report: dict[str, Any], out: Path, name: str, plot: Callable[[dict[str, Any], Path], None],
                  figures: Optional[Path]) -> None:
    """``NAME.json`` and ``NAME.png`` under ``out``; with ``figures``, the PNG is also copied there as
    ``<out dir name>.png`` (so ``--out benchmarks/out/server-patched`` publishes ``server-patched.png``)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    plot(report, out / f"{name}.png")
    if figures is not None:
        figures.mkdir(parents=True, exist_ok=True)
        shutil.copy(out / f"{name}.png", figures / f"{out.name}.png")


# --- hoprag bench server ------------------------------------------------------------------------------


def server(
    corpus: Path = typer.Option(DEMO_CORPUS, "--corpus", help="Corpus directory or .jsonl."),
    access: Optional[Path] = typer.Option(None, "--access", help="Access file [default: access.yaml beside the corpus]."),
    principal: str = typer.Option("engineering", "--as", help="Principal whose bearer token the load carries."),
    concurrency: str = typer.Option("1,16,64", "--concurrency", help="Comma-separated connection counts."),
    duration: float = typer.Option(8.0, "--duration", min=0.5, help="Seconds per endpoint and concurrency."),
    endpoints: str = typer.Option(",".join(ENDPOINTS), "--endpoints", help=f"Comma-separated, from {', '.join(ENDPOINTS)}."),
    k: int = typer.Option(5, "-k", min=1, max=MAX_K, help="Results per search."),
    generator: str = typer.Option("auto", "--generator", help="auto (wrk if installed) | wrk | python."),
    mcp_cmd: Optional[str] = typer.Option(None, "--mcp-command", help="Start this instead of `python -m mcp_server` "
                                          "(a prototype taking the same flags)."),
    tune_bare: str = typer.Option("", "--tune-bare", help="Process settings for the bare endpoint, comma-separated: "
                                  f"{', '.join(TUNINGS)} (to pair it with a prototype --mcp-command that has them)."),
    out: Path = typer.Option(OUT / "server", "--out", help="Directory for server.json and server.png."),
    figures: Optional[Path] = typer.Option(None, "--figures", help="Also copy the PNG here, named after --out's directory."),
) -> dict[str, Any]:
    """MCP search over stateless HTTP vs a bare Starlette endpoint: req/s ratio, p50, p99 per concurrency."""
    chosen = [e.strip() for e in endpoints.split(",") if e.strip()]
    if not chosen or set(chosen) - set(ENDPOINTS):
        raise typer.BadParameter(f"choose from {', '.join(ENDPOINTS)}", param_hint="--endpoints")
    tune = _tunings(tune_bare)
    levels = [int(c) for c in concurrency.split(",")]
    access = access_path(corpus, access)
    engine = Engine.load(corpus, settings.resolve().ranker)  # the ranker `hoprag serve` picks (HOPRAG_RANKER)
    operator = load_access(access)
    groups, token = operator.principal(principal).groups, operator.token_for(principal)
    if token is None:
        raise typer.BadParameter(f"principal {principal!r} has no bearer token", param_hint="--as")
    queries = default_queries(corpus)
    runs: list[LoadResult] = []
    with ServerProcess(bare_command(corpus, access, tune)) as bare, \
            ServerProcess(mcp_command(corpus, access, mcp_cmd)) as mcp:
        servers = {e: bare if e == "bare" else mcp for e in chosen}
        for e in chosen:  # also the warm-up: every query once through every endpoint
            check_endpoint(engine, groups, queries, k, e, servers[e], token)
        with tqdm(total=len(levels) * len(chosen), desc="server bench", file=sys.stderr, leave=False) as bar:
            for c in levels:
                for e in chosen:
                    runs.append(run_load(target(e, servers[e], token, queries, k), c, duration, generator=generator))
                    bar.update()
        rss = {"bare": bare.rss_mb(), "mcp": mcp.rss_mb()}
    report = {"machine": machine(), "corpus": str(corpus), "principal": principal, "k": k, "queries": len(queries),
              "duration_s": duration, "mcp_command": mcp_cmd or "python -m mcp_server", "bare_tuning": tune,
              "rss_mb": {n: round(v, 1) for n, v in rss.items()}, "runs": [_with_ratio(r, runs) for r in runs]}
    write_outputs(report, out, "server", _plot_server, figures)
    typer.echo(server_table(report))
    return report


def _tunings(spec: str) -> list[str]:
    tune = [t.strip() for t in spec.split(",") if t.strip()]
    if set(tune) - set(TUNINGS):
        raise typer.BadParameter(f"choose from {', '.join(TUNINGS)}", param_hint="--tune-bare")
    return tune


def _with_ratio(r: LoadResult, runs: Sequence[LoadResult]) -> dict[str, Any]:
    bare = next((b for b in runs if b.endpoint == "bare" and b.connections == r.connections), None)
    return r.as_json() | {"ratio_to_bare": round(r.rps / bare.rps, 3) if bare and bare.rps else None}


def server_table(report: dict[str, Any]) -> str:
    lines = ["| concurrency | endpoint | req/s | ratio to bare | p50 ms | p99 ms | errors | requests |",
             "|---|---|---|---|---|---|---|---|"]
    for r in report["runs"]:
        ratio = "" if r["ratio_to_bare"] is None else f"{r['ratio_to_bare']:.2f}"
        lines.append(f"| {r['connections']} | {r['endpoint']} | {r['rps']:.0f} | {ratio} | {r['p50_ms']:.2f} | "
                     f"{r['p99_ms']:.2f} | {r['errors']} | {r['requests']} |")
    return "\n".join(lines)


def _plot_server(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = report["runs"]
    levels = sorted({r["connections"] for r in runs})
    names = list(dict.fromkeys(r["endpoint"] for r in runs))
    colors = {"bare": "#4b7f52", "mcp-2025-11-25": "#2a7f9e", "mcp-2026-07-28": "#b13f3f"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(levels))]
        rows = [next(r for r in runs if r["endpoint"] == name and r["connections"] == c) for c in levels]
        left.bar(xs, [r["rps"] for r in rows], width, label=name, color=colors.get(name))
        right.bar(xs, [r["p99_ms"] for r in rows], width, label=name, color=colors.get(name))
    for ax, label in ((left, "requests / s"), (right, "p99 latency (ms, log)")):
        ax.set_xticks(range(len(levels)), [f"c={c}" for c in levels])
        ax.set_ylabel(label)
    right.set_yscale("log")
    right.axhline(20, color="grey", ls=":", lw=1)
    left.legend(fontsize=8)
    tuning = ", ".join(report["bare_tuning"]) or "none"
    fig.suptitle(f"search over HTTP ({report['machine']['load_generator']} load, {report['machine']['nproc']} cores)\n"
                 f"MCP: {report['mcp_command']}; bare tuning: {tuning}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- hoprag bench scale -------------------------------------------------------------------------------


def _percentiles(seconds: Sequence[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 4), "p99_ms": round(float(np.percentile(ms, 99)), 4)}


def probe(corpus: Path, access: Path, searches: int, principal: str = "engineering") -> dict[str, Any]:
    """Build everything ``hoprag serve`` builds at start-up, then time searches in-process (run in a fresh process)."""
    t0 = time.perf_counter()
    loaded = load_corpus(corpus)
    t1 = time.perf_counter()
    engine = Engine(loaded, settings.ranker_for(loaded, settings.resolve().ranker))
    t2 = time.perf_counter()
    operator = load_access(access)
    for p in operator.principals.values():
        engine.searcher.view(p.groups)
    t3 = time.perf_counter()
    for p in operator.principals.values():
        engine.contested(p.groups)  # the graph and its conflict claims, as serve.py builds them
    t4 = time.perf_counter()
    groups = operator.principal(principal).groups
    queries = default_queries(corpus)
    plain, full = [], []
    for i in range(searches):
        q = queries[i % len(queries)]
        a = time.perf_counter()
        engine.search(q, groups, 5)
        b = time.perf_counter()
        search_payload(engine, groups, q, 5)  # the search again, with the result the tool returns
        plain.append(b - a)
        full.append(time.perf_counter() - b)
    status = proc_status("self")
    return {"load_s": round(t1 - t0, 3), "engine_s": round(t2 - t1, 3), "views_s": round(t3 - t2, 3),
            "graphs_s": round(t4 - t3, 3), "build_s": round(t4 - t0, 3),
            "rss_mb": round(status["VmRSS"] / 1024, 1), "peak_rss_mb": round(status["VmHWM"] / 1024, 1),
            "search": _percentiles(plain), "search_and_payload": _percentiles(full)}


def scale(
    sizes: str = typer.Option("1000,10000,100000", "--sizes", help="Comma-separated passage counts."),
    searches: int = typer.Option(3000, "--searches", min=10, help="In-process searches per size."),
    duration: float = typer.Option(5.0, "--duration", min=0.5, help="Seconds of HTTP load per endpoint and size."),
    generator: str = typer.Option("auto", "--generator", help="auto (wrk if installed) | wrk | python."),
    mcp_cmd: Optional[str] = typer.Option(None, "--mcp-command", help="Start this instead of `python -m mcp_server`."),
    tune_bare: str = typer.Option("", "--tune-bare", help=f"Process settings for the bare endpoint: {', '.join(TUNINGS)}."),
    out: Path = typer.Option(OUT / "scale", "--out", help="Directory for corpora, scale.json and scale.png."),
    figures: Optional[Path] = typer.Option(None, "--figures", help="Also copy the PNG here, named after --out's directory."),
) -> dict[str, Any]:
    """Synthetic corpora of growing size: build time, RSS, search p50/p99 in-process and over HTTP (c=1)."""
    tune = _tunings(tune_bare)
    rows = []
    token = synthetic.token_for("engineering")
    for n in tqdm([int(s) for s in sizes.split(",")], desc="scale", file=sys.stderr, leave=False):
        corpus = synthetic.write(out / f"corpus-{n}", n)
        access = corpus.parent / "access.yaml"
        queries = default_queries(corpus)
        argv = [sys.executable, "-m", "benchmarks.server_bench", "probe", "--corpus", str(corpus),
                "--access", str(access), "--searches", str(searches)]
        row: dict[str, Any] = {"passages": n, "in_process": json.loads(subprocess.run(
            argv, check=True, capture_output=True, text=True).stdout)}
        commands = {"mcp-2025-11-25": mcp_command(corpus, access, mcp_cmd), "bare": bare_command(corpus, access, tune)}
        for name, command in commands.items():
            with ServerProcess(command) as proc:
                idle = proc.rss_mb()
                load = run_load(target(name, proc, token, queries, 5), 1, duration, generator=generator)
                row[name] = {"startup_s": round(proc.startup_s, 2), "rss_idle_mb": round(idle, 1),
                             "rss_after_mb": round(proc.rss_mb(), 1)} | load.as_json()
        rows.append(row)
    report = {"machine": machine(), "duration_s": duration, "searches": searches,
              "mcp_command": mcp_cmd or "python -m mcp_server", "bare_tuning": tune, "sizes": rows}
    write_outputs(report, out, "scale", _plot_scale, figures)
    typer.echo(scale_table(report))
    return report


def scale_table(report: dict[str, Any]) -> str:
    lines = ["| passages | build s (graphs s) | RSS MB (peak) | in-process p50 / p99 ms | bare HTTP p50 / p99 ms "
             "| MCP p50 / p99 ms | MCP startup s | MCP RSS MB |", "|---|---|---|---|---|---|---|---|"]
    for r in report["sizes"]:
        ip, bare, mcp = r["in_process"], r["bare"], r["mcp-2025-11-25"]
        lines.append(f"| {r['passages']:,} | {ip['build_s']:.2f} ({ip['graphs_s']:.2f}) | {ip['rss_mb']:.0f} "
                     f"({ip['peak_rss_mb']:.0f}) | {ip['search']['p50_ms']:.3f} / {ip['search']['p99_ms']:.3f} | "
                     f"{bare['p50_ms']:.2f} / {bare['p99_ms']:.2f} | {mcp['p50_ms']:.2f} / {mcp['p99_ms']:.2f} | "
                     f"{mcp['startup_s']:.1f} | {mcp['rss_after_mb']:.0f} |")
    return "\n".join(lines)


def _plot_scale(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["sizes"]
    n = [r["passages"] for r in rows]
    series = lambda *keys: [_dig(r, keys) for r in rows]  # noqa: E731
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    axes[0].plot(n, series("in_process", "build_s"), "-o", label="in-process build, repo code (all principals)")
    axes[0].plot(n, series("in_process", "graphs_s"), "--o", label="of which graphs")
    axes[0].plot(n, series("mcp-2025-11-25", "startup_s"), "-s", label="MCP server start-up")
    axes[0].set_ylabel("seconds")
    axes[1].plot(n, series("in_process", "search", "p50_ms"), "-o", label="in-process p50")
    axes[1].plot(n, series("in_process", "search", "p99_ms"), "--o", label="in-process p99")
    axes[1].plot(n, series("bare", "p50_ms"), "-^", label="bare HTTP p50")
    axes[1].plot(n, series("mcp-2025-11-25", "p50_ms"), "-s", label="MCP HTTP p50")
    axes[1].plot(n, series("mcp-2025-11-25", "p99_ms"), "--s", label="MCP HTTP p99")
    axes[1].set_ylabel("search latency (ms, c=1)")
    axes[2].plot(n, series("in_process", "rss_mb"), "-o", label="in-process RSS")
    axes[2].plot(n, series("mcp-2025-11-25", "rss_after_mb"), "-s", label="MCP server RSS")
    axes[2].set_ylabel("MB")
    axes[2].set_ylim(bottom=0)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("passages")
        ax.legend(fontsize=7)
    for ax in axes[:2]:
        ax.set_yscale("log")
    fig.suptitle(f"MCP server: {report['mcp_command']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _dig(row: dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        row = row[key]
    return row


# --- the separate processes ---------------------------------------------------------------------------

_main = typer.Typer(add_completion=False, no_args_is_help=True)


@_main.command("bare")
def _bare(corpus: Path = typer.Option(DEMO_CORPUS, "--corpus"), access: Optional[Path] = typer.Option(None, "--access"),
          host: str = typer.Option("127.0.0.1", "--host"), port: int = typer.Option(0, "--port"),
          gc_freeze: bool = typer.Option(False, "--gc-freeze")) -> None:
    """Serve the bare endpoint with the MCP server's listener and uvicorn settings."""
    engine = Engine.load(corpus, settings.resolve().ranker)  # the ranker `hoprag serve` picks (HOPRAG_RANKER)
    operator = load_access(access_path(corpus, access))
    for p in operator.principals.values():
        engine.searcher.view(p.groups)
    sock = open_listener(host, port)
    if gc_freeze:  # start-up objects leave the collector's generations: no long full collections mid-request
        gc.collect()
        gc.freeze()
    print(f"bare search endpoint on http://{host}:{sock.getsockname()[1]}/search", file=sys.stderr, flush=True)
    config = uvicorn.Config(bare_app(engine, operator), log_level="warning", access_log=False, lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


@_main.command("probe")
def _probe(corpus: Path = typer.Option(..., "--corpus"), access: Path = typer.Option(..., "--access"),
           searches: int = typer.Option(3000, "--searches")) -> None:
    """Print :func:`probe` as JSON."""
    typer.echo(json.dumps(probe(corpus, access, searches)))


if __name__ == "__main__":
    _main()
