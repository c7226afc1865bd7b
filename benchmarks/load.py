"""``hoprag bench load`` and ``hoprag bench soak``: many correct answers, and memory that stays flat.

Both start ``hoprag serve --transport http`` on 127.0.0.1 (a subprocess), drive its ``search`` tool
over stateless HTTP at a fixed concurrency, and stop by themselves (a request count and a time
cap, or a duration). Every non-200 status, socket error or ``isError`` result counts as an error;
every N-th response is kept and compared with the in-process engine's answer for the same
principal and query (``structuredContent`` and the text content both). ``soak`` also samples the
server's resident memory from ``/proc/<pid>/status`` and fits a line to it (MB per minute).
This is a benchmark script, not a timed test: it reports, and exits 1 if anything was wrong.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np
import typer
from tqdm import tqdm

from hoprag import settings
from hoprag.access import load_access
from hoprag.engine import Engine
from hoprag.settings import DEMO_CORPUS

from .httpload import ENDPOINTS, LoadResult, ServerProcess, mcp_command, run_load, target
from .server_bench import OUT, access_path, default_queries, machine, write_outputs, wrong_samples

MCP_ENDPOINTS = [e for e in ENDPOINTS if e != "bare"]


@dataclass
class Session:
    """A running server plus what checking its answers needs."""

    server: ServerProcess
    engine: Engine
    groups: frozenset[str]
    token: str
    queries: list[str]
    k: int
    endpoint: str

    def load(self, connections: int, seconds: float, requests: int | None, sample_every: int,
             generator: str) -> tuple[LoadResult, list[str]]:
        """One load run and the kept responses that differ from the engine."""
        t = target(self.endpoint, self.server, self.token, self.queries, self.k)
        r = run_load(t, connections, seconds, requests, sample_every, generator)
        return r, wrong_samples(self.engine, self.groups, self.queries, self.k, self.endpoint, r.samples)


@contextmanager
def session(corpus: Path, access: Optional[Path], principal: str, endpoint: str, k: int,
            mcp_cmd: Optional[str]) -> Iterator[Session]:
    """Start the server for ``principal`` and yield what loading and checking it needs; stop it after."""
    if endpoint not in MCP_ENDPOINTS:
        raise typer.BadParameter(f"choose from {', '.join(MCP_ENDPOINTS)}", param_hint="--endpoint")
    access = access_path(corpus, access)
    operator = load_access(access)
    token = operator.token_for(principal)
    if token is None:
        raise typer.BadParameter(f"principal {principal!r} has no bearer token", param_hint="--as")
    with ServerProcess(mcp_command(corpus, access, mcp_cmd)) as server:
        yield Session(server, Engine.load(corpus, settings.resolve().ranker), operator.principal(principal).groups, token,
                      default_queries(corpus), k, endpoint)


# Options both commands take (one definition, so load and soak cannot drift apart).
CORPUS_OPT = typer.Option(DEMO_CORPUS, "--corpus", help="Corpus directory or .jsonl.")
ACCESS_OPT = typer.Option(None, "--access", help="Access file [default: access.yaml beside the corpus].")
PRINCIPAL_OPT = typer.Option("engineering", "--as", help="Principal whose bearer token the load carries.")
ENDPOINT_OPT = typer.Option("mcp-2025-11-25", "--endpoint", help=f"One of {', '.join(MCP_ENDPOINTS)}.")
K_OPT = typer.Option(5, "-k", min=1, max=50, help="Results per search.")
GENERATOR_OPT = typer.Option("auto", "--generator", help="auto (wrk if installed) | wrk | python.")
MCP_COMMAND_OPT = typer.Option(None, "--mcp-command", help="Start this instead of `python -m mcp_server`.")


# --- hoprag bench load ---------------------------------------------------------------------------------


def load(
    requests: int = typer.Option(100_000, "--requests", min=1, help="Search calls to make (at least)."),
    concurrency: int = typer.Option(32, "--concurrency", min=1, help="Keep-alive connections."),
    chunks: int = typer.Option(10, "--chunks", min=1, help="Split the calls into this many runs (a time series)."),
    max_seconds: float = typer.Option(900.0, "--max-seconds", min=1, help="Stop after this long even if short of --requests."),
    sample_every: int = typer.Option(97, "--sample-every", min=1, help="Check every N-th response against the engine."),
    corpus: Path = CORPUS_OPT,
    access: Optional[Path] = ACCESS_OPT,
    principal: str = PRINCIPAL_OPT,
    endpoint: str = ENDPOINT_OPT,
    k: int = K_OPT,
    generator: str = GENERATOR_OPT,
    mcp_cmd: Optional[str] = MCP_COMMAND_OPT,
    out: Path = typer.Option(OUT / "load", "--out", help="Directory for load.json and load.png."),
    figures: Optional[Path] = typer.Option(None, "--figures", help="Also copy the PNG here, named after --out's directory."),
) -> dict[str, Any]:
    """>= --requests search calls at --concurrency: zero errors and zero wrong answers, or exit 1."""
    per_chunk = -(-requests // chunks)
    runs, wrong = [], []
    start = time.perf_counter()
    with session(corpus, access, principal, endpoint, k, mcp_cmd) as s:
        rss_start = s.server.rss_mb()
        with tqdm(total=requests, desc="search calls", unit="call", file=sys.stderr, leave=False) as bar:
            while sum(r["requests"] for r in runs) < requests:
                left = max_seconds - (time.perf_counter() - start)
                if left <= 0:
                    break
                r, bad = s.load(concurrency, left, per_chunk, sample_every, generator)
                wrong += bad
                runs.append(r.as_json() | {"checked": len(r.samples), "wrong": len(bad), "rss_mb": round(s.server.rss_mb(), 1)})
                bar.update(r.requests)
        alive = s.server.proc.poll() is None
    total = sum(r["requests"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    report = {
        "machine": machine(), "corpus": str(corpus), "principal": principal, "endpoint": endpoint, "k": k,
        "concurrency": concurrency, "requests": total, "errors": sum(r["errors"] for r in runs),
        "checked": sum(r["checked"] for r in runs), "wrong": len(wrong), "wrong_examples": wrong[:5],
        "seconds": round(seconds, 2), "rps": round(total / seconds, 1) if seconds else 0.0,
        "p50_ms_worst_chunk": max(r["p50_ms"] for r in runs), "p99_ms_worst_chunk": max(r["p99_ms"] for r in runs),
        "rss_mb_start": round(rss_start, 1), "rss_mb_end": runs[-1]["rss_mb"], "server_alive": alive,
        "generator": runs[0]["generator"], "chunks": runs}
    report["passed"] = total >= requests and report["errors"] == 0 and report["wrong"] == 0 and alive
    write_outputs(report, out, "load", _plot_load, figures)
    typer.echo(f"{total} calls in {seconds:.1f} s ({report['rps']:.0f}/s) at concurrency {concurrency}: "
               f"{report['errors']} errors, {report['wrong']} wrong of {report['checked']} checked, "
               f"worst-chunk p99 {report['p99_ms_worst_chunk']:.1f} ms, RSS {rss_start:.0f} -> {report['rss_mb_end']:.0f} MB")
    if not report["passed"]:
        raise typer.Exit(1)
    return report


def _plot_load(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = report["chunks"]
    done = np.cumsum([r["requests"] for r in runs]) / 1000
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
    left.plot(done, [r["rps"] for r in runs], "-o", color="#2a7f9e")
    left.set_ylabel("requests / s")
    left.set_ylim(bottom=0)
    for key, style in (("p50_ms", "-o"), ("p99_ms", "--s")):
        right.plot(done, [r[key] for r in runs], style, label=key.replace("_ms", ""))
    right.set_ylabel("latency (ms)")
    right.legend(fontsize=8)
    for ax in (left, right):
        ax.set_xlabel("thousand calls made")
    fig.suptitle(f"{report['requests']:,} search calls at concurrency {report['concurrency']}: {report['errors']} errors, "
                 f"{report['wrong']} wrong of {report['checked']:,} checked", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- hoprag bench soak -----------------------------------------------------------------------------------


def slope(t_s: list[float], mb: list[float]) -> float | None:
    """Least-squares slope of RSS against time, in MB per minute."""
    if len(t_s) < 2:
        return None
    return float(np.polyfit(np.array(t_s) / 60, np.array(mb), 1)[0])


def soak(
    duration: float = typer.Option(600.0, "--duration", min=1, help="Seconds of continuous load."),
    concurrency: int = typer.Option(32, "--concurrency", min=1, help="Keep-alive connections."),
    interval: float = typer.Option(5.0, "--interval", min=0.1, help="Seconds between RSS samples."),
    sample_every: int = typer.Option(997, "--sample-every", min=1, help="Check every N-th response against the engine."),
    corpus: Path = CORPUS_OPT,
    access: Optional[Path] = ACCESS_OPT,
    principal: str = PRINCIPAL_OPT,
    endpoint: str = ENDPOINT_OPT,
    k: int = K_OPT,
    generator: str = GENERATOR_OPT,
    mcp_cmd: Optional[str] = MCP_COMMAND_OPT,
    out: Path = typer.Option(OUT / "soak", "--out", help="Directory for soak.json and soak.png."),
    figures: Optional[Path] = typer.Option(None, "--figures", help="Also copy the PNG here, named after --out's directory."),
) -> dict[str, Any]:
    """Continuous load for --duration with the server's RSS sampled: slope in MB/min (linear fit)."""
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    with session(corpus, access, principal, endpoint, k, mcp_cmd) as s:
        start = time.perf_counter()

        def sample() -> None:
            with tqdm(total=round(duration), desc="soak", unit="s", file=sys.stderr, leave=False) as bar:
                while True:
                    elapsed = time.perf_counter() - start
                    samples.append((round(elapsed, 2), round(s.server.rss_mb(), 2)))
                    bar.n = min(round(elapsed), round(duration))
                    bar.refresh()
                    if stop.wait(interval):
                        return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        r, wrong = s.load(concurrency, duration, None, sample_every, generator)
        stop.set()
        sampler.join()
        samples.append((round(time.perf_counter() - start, 2), round(s.server.rss_mb(), 2)))
        alive = s.server.proc.poll() is None
    t_s, mb = [t for t, _ in samples], [m for _, m in samples]
    half = [i for i, t in enumerate(t_s) if t >= t_s[-1] / 2]
    report = {
        "machine": machine(), "corpus": str(corpus), "principal": principal, "endpoint": endpoint, "k": k,
        "concurrency": concurrency, "duration_s": duration, "interval_s": interval, "load": r.as_json(),
        "checked": len(r.samples), "wrong": len(wrong), "wrong_examples": wrong[:5],
        "rss_mb_start": mb[0], "rss_mb_end": mb[-1], "rss_mb_max": max(mb),
        "slope_mb_per_min": _round(slope(t_s, mb)),
        "slope_mb_per_min_second_half": _round(slope([t_s[i] for i in half], [mb[i] for i in half])),
        "server_alive": alive, "rss_samples": samples}
    report["passed"] = r.errors == 0 and not wrong and alive
    write_outputs(report, out, "soak", _plot_soak, figures)
    typer.echo(f"soak {duration:.0f} s at concurrency {concurrency}: {r.requests} calls ({r.rps:.0f}/s), "
               f"{r.errors} errors, {len(wrong)} wrong of {len(r.samples)} checked; RSS {mb[0]:.1f} -> {mb[-1]:.1f} MB, "
               f"slope {report['slope_mb_per_min']} MB/min (second half {report['slope_mb_per_min_second_half']})")
    if not report["passed"]:
        raise typer.Exit(1)
    return report


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _plot_soak(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.array([s[0] for s in report["rss_samples"]]) / 60
    mb = np.array([s[1] for s in report["rss_samples"]])
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.plot(t, mb, "-", color="#2a7f9e", label="server RSS")
    if len(t) >= 2:
        a, b = np.polyfit(t, mb, 1)
        ax.plot(t, a * t + b, "--", color="#b13f3f", label=f"linear fit: {a:+.3f} MB/min")
    ax.set_xlabel("minutes under load")
    ax.set_ylabel("RSS (MB)")
    ax.set_ylim(0, max(mb.max() * 1.2, 1))
    ax.legend(fontsize=8)
    load = report["load"]
    ax.set_title(f"{load['requests']:,} calls at concurrency {report['concurrency']} ({load['rps']:.0f}/s), "
                 f"{load['errors']} errors, {report['wrong']} wrong", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
