"""``hoprag bench replicas``: many ``hoprag serve`` replicas over one PostgreSQL store.

Everything runs as users run it: ``hoprag index`` commits into PostgreSQL, N ``hoprag serve
--transport http --store postgresql://...`` processes serve it behind HAProxy (Debian's), and an
MCP client drives the proxy. Reported side by side in one run:

* indexing into PostgreSQL next to the embedded SQLite store (seconds, passages/s);
* update visibility: commit -> every replica answering from the new generation (p50/p99);
* throughput through the proxy with 1 and with 2 replicas;
* failover: one replica killed (SIGKILL) mid-run; the client retries a failed call (the proxy
  routes it to a live replica) and every answer is checked against the in-process engine.

A benchmark, not a timed test: it reports numbers, and exits 1 only if an answer was wrong or a
call never succeeded.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import httpx
import numpy as np
import typer

from hoprag.access import load_access
from hoprag.engine import Engine
from hoprag.store import open_store

from . import synthetic
from .httpload import ServerProcess, run_load, target
from .ingest_bench import timed_index, until_serving, write_files
from .pgcluster import Cluster, free_port
from .server_bench import OUT, expected, machine, wrong_samples

PRINCIPAL = "engineering"
ENDPOINT = "mcp-2025-11-25"
RETRIES = 5


def serve_command(url: str, access: Path) -> list[str]:
    return [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", "--store", url,
            "--access", str(access)]


class Proxy:
    """HAProxy round-robin over the replicas, health-checking ``/health`` every 200 ms (a dead one
    is taken out of rotation; a refused connection is redispatched to another)."""

    def __init__(self, backends: Sequence[ServerProcess], root: Path):
        haproxy = shutil.which("haproxy")
        if haproxy is None:
            raise RuntimeError("haproxy is not installed (Debian: apt-get install haproxy; tests/system-deps.sh does it)")
        self.port = free_port()
        servers = "".join(f"  server r{i} {b.host}:{b.port} check inter 200ms fall 1 rise 2\n"
                          for i, b in enumerate(backends))
        config = root / "haproxy.cfg"
        config.write_text(f"""global
  maxconn 1024
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch 1
frontend mcp
  bind 127.0.0.1:{self.port}
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /health
{servers}""")
        self.proc = subprocess.Popen([haproxy, "-f", str(config), "-db"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.host, self.base = "127.0.0.1", f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:  # up once a health check passed and a request goes through
            try:
                if httpx.get(f"{self.base}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"haproxy did not start: {self.proc.stderr.read() if self.proc.stderr else ''}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@contextmanager
def fleet(url: str, access: Path, n: int, root: Path) -> Iterator[tuple[list[ServerProcess], Proxy]]:
    """``n`` replicas over the store at ``url``, and the proxy in front of them."""
    with ExitStack() as stack:
        servers = [stack.enter_context(ServerProcess(serve_command(url, access))) for _ in range(n)]
        proxy = Proxy(servers, root)
        stack.callback(proxy.stop)
        yield servers, proxy


@dataclass
class Drive:
    """What the clients saw: calls, calls that failed at first and were retried, calls that never
    succeeded, answers that differ from the engine, and per-call latency (retries included)."""

    calls: int = 0
    failed_first: int = 0
    retries: int = 0
    never: int = 0
    wrong: int = 0
    errors_seen: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        ms = np.array(self.latencies) * 1000 if self.latencies else np.zeros(1)
        return {"calls": self.calls, "failed_first_try": self.failed_first, "retries": self.retries,
                "never_succeeded": self.never, "wrong": self.wrong, "errors_seen": self.errors_seen,
                "seconds": round(self.seconds, 2), "calls_per_s": round(self.calls / self.seconds, 1) if self.seconds else 0,
                "p50_ms": round(float(np.percentile(ms, 50)), 2), "p99_ms": round(float(np.percentile(ms, 99)), 2)}


async def drive(proxy: Proxy, token: str, queries: Sequence[str], want: dict[str, Any], k: int, calls: int,
                concurrency: int, on_progress: Any = None) -> Drive:
    """``calls`` MCP ``search`` calls through the proxy; a failed call (connection error, non-200,
    ``isError``) is retried up to :data:`RETRIES` times; every final answer is checked."""
    t = target(ENDPOINT, proxy, token, queries, k)  # type: ignore[arg-type]
    out, next_id = Drive(), iter(range(1, calls + 1))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async def one(client: httpx.AsyncClient, i: int) -> None:
        query, start = queries[(i - 1) % len(queries)], time.perf_counter()
        for attempt in range(RETRIES + 1):
            try:
                reply = await client.post(t.path, content=t.body(i))
                body = reply.json() if reply.status_code == 200 else None
                result = body.get("result") if body else None
                problem = None if result and not result.get("isError") else f"http {reply.status_code}"
            except httpx.HTTPError as exc:
                problem, result = type(exc).__name__, None
            if problem is None:
                break
            out.errors_seen[problem] = out.errors_seen.get(problem, 0) + 1
            out.failed_first += attempt == 0
            if attempt == RETRIES:
                out.never += 1
                return
            out.retries += 1
            await asyncio.sleep(0.05 * (attempt + 1))
        out.latencies.append(time.perf_counter() - start)
        out.calls += 1
        out.wrong += result.get("structuredContent") != want[query]
        if on_progress:
            on_progress(out.calls + out.never)

    async def worker(client: httpx.AsyncClient) -> None:
        for i in next_id:
            await one(client, i)

    start = time.perf_counter()
    async with httpx.AsyncClient(base_url=proxy.base, headers=dict(t.headers), timeout=60, limits=limits) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    out.seconds = time.perf_counter() - start
    return out


def visibility(src: Path, url: str, servers: Sequence[ServerProcess], commits: int) -> dict[str, Any]:
    """Seconds from each committed one-file change to every replica serving its generation."""
    seen: list[float] = []
    files = sorted(src.rglob("*.md"))
    for c in range(commits):
        changed = files[c % len(files)]
        changed.write_text(changed.read_text(encoding="utf-8") + f"\nVisibility marker {c}.\n", encoding="utf-8")
        step = timed_index(src, url)
        seen += until_serving(servers, step["generation"], time.perf_counter())
    ms = np.array(seen) * 1000
    return {"commits": commits, "replicas": len(servers), "p50_ms": round(float(np.percentile(ms, 50)), 1),
            "p99_ms": round(float(np.percentile(ms, 99)), 1), "max_ms": round(float(ms.max()), 1)}


def reference(url: str, access: Path) -> tuple[Engine, frozenset[str]]:
    """The in-process engine over the same store and readers as a replica, and the load's groups."""
    operator = load_access(access)
    store = open_store(url)
    try:
        return Engine.over(store, readers=operator.groups()), operator.principal(PRINCIPAL).groups
    finally:
        store.close()


def throughput(proxy: Proxy | ServerProcess, token: str, queries: Sequence[str], engine: Engine, groups: frozenset[str], k: int,
               calls: int, concurrency: int) -> dict[str, Any]:
    """Closed-loop load through the proxy with the server benchmarks' generator (wrk if installed);
    every 7th answer checked against the engine."""
    t = target(ENDPOINT, proxy, token, queries, k)  # type: ignore[arg-type]
    run_load(t, concurrency, 60, max(calls // 10, concurrency))  # warm-up: connections, first calls
    r = run_load(t, concurrency, 600, calls, sample_every=7)
    return r.as_json() | {"checked": len(r.samples), "wrong": len(wrong_samples(engine, groups, queries, k, ENDPOINT, r.samples))}


def run(passages: int, calls: int, concurrency: int, commits: int, k: int = 5, url: Optional[str] = None,
        root: Optional[Path] = None, index_passages: int = 0) -> dict[str, Any]:
    """The whole benchmark: replicas serve ``passages`` synthetic Markdown files; ``index_passages``
    (if any) more go into a second database as one JSONL, timed beside SQLite. ``url`` uses an
    existing database (else a throwaway cluster is made)."""
    root = Path(root or tempfile.mkdtemp(prefix="hoprag-replicas-"))
    with ExitStack() as stack:
        cluster = None
        if url is None:
            cluster = Cluster()
            stack.callback(cluster.destroy)
            url = cluster.url()
        src = write_files(root / "src", passages)
        synthetic.write(root / "small", 10)  # the synthetic principals and their bearer tokens
        access, token = root / "small" / "access.yaml", synthetic.token_for(PRINCIPAL)
        report: dict[str, Any] = {"machine": machine(), "passages": passages, "concurrency": concurrency, "k": k,
                                  "load_average_start": os.getloadavg()[0]}  # the machine is shared: say how busy
        report["index"] = {"postgresql": timed_index(src, url), "sqlite": timed_index(src, root / "side.db")}
        if index_passages and cluster:  # (a given --store holds the served folder: no second database there)
            big = synthetic.write(root / "big", index_passages)
            report["index_jsonl"] = {"postgresql": timed_index(big, cluster.create_database("big"), max_bytes=2**31),
                                     "sqlite": timed_index(big, root / "big.db", max_bytes=2**31)}
        queries = json.loads((root / "small" / "queries.json").read_text())[:50]
        with fleet(url, access, 2, root) as (servers, _):
            report["visibility"] = visibility(src, url, servers, commits)
        engine, groups = reference(url, access)
        want = {q: expected(engine, groups, q, k) for q in queries}
        report["throughput"] = {}
        for n in (1, 2):
            with fleet(url, access, n, root) as (servers, proxy):
                if n == 1:  # the proxy's own cost: the same replica without it
                    report["throughput"]["1, no proxy"] = throughput(servers[0], token, queries, engine, groups, k,
                                                                     calls, concurrency)
                report["throughput"][str(n)] = throughput(proxy, token, queries, engine, groups, k, calls, concurrency)
        with fleet(url, access, 2, root) as (servers, proxy):
            victim = servers[0]

            def kill_midway(done: int) -> None:
                if done >= calls // 2 and victim.proc.poll() is None:
                    victim.proc.send_signal(signal.SIGKILL)

            seen = asyncio.run(drive(proxy, token, queries, want, k, calls, concurrency, kill_midway))
            report["failover"] = seen.as_json() | {"killed": victim.proc.poll() is not None,
                                                   "survivor_alive": servers[1].proc.poll() is None}
    report["load_average_end"] = os.getloadavg()[0]
    f = report["failover"]
    report["passed"] = (f["wrong"] == 0 and f["never_succeeded"] == 0 and f["killed"] and f["survivor_alive"]
                        and all(t["wrong"] == 0 and t["errors"] == 0 for t in report["throughput"].values()))
    return report


def table(report: dict[str, Any]) -> str:
    i, v, t, f = (report[key] for key in ("index", "visibility", "throughput", "failover"))
    lines = [f"| index {j['postgresql']['passages']:,} passages (one JSONL) | PostgreSQL {j['postgresql']['seconds']} s "
             f"({j['postgresql']['passages_per_s']:,.0f}/s, {j['postgresql']['store_mb']} MB) | SQLite {j['sqlite']['seconds']} s "
             f"({j['sqlite']['passages_per_s']:,.0f}/s, {j['sqlite']['store_mb']} MB) |"
             for j in ([report["index_jsonl"]] if "index_jsonl" in report else [])]
    lines += [f"| index {report['passages']:,} passages | PostgreSQL {i['postgresql']['seconds']} s "
             f"({i['postgresql']['passages_per_s']:,.0f}/s, {i['postgresql']['store_mb']} MB) | SQLite {i['sqlite']['seconds']} s "
             f"({i['sqlite']['passages_per_s']:,.0f}/s, {i['sqlite']['store_mb']} MB) |",
             f"| update visible on {v['replicas']} replicas ({v['commits']} commits) | p50 {v['p50_ms']} ms | p99 {v['p99_ms']} ms |"]
    for n, r in t.items():
        lines.append(f"| {n} replica(s), c = {report['concurrency']} ({r['generator']}) | {r['rps']:.0f} calls/s, "
                     f"{r['errors']} errors, {r['wrong']} wrong of {r['checked']} checked | p50 {r['p50_ms']:.1f} / p99 {r['p99_ms']:.1f} ms |")
    lines.append(f"| failover: 1 of 2 killed mid-run | {f['calls']} calls, {f['wrong']} wrong, {f['never_succeeded']} never "
                 f"succeeded | {f['failed_first_try']} failed first and were retried ({f['errors_seen']}) |")
    return "\n".join(lines)


def replicas(
    passages: int = typer.Option(2_000, "--passages", min=10, help="Synthetic passages the replicas serve (Markdown files)."),
    index_passages: int = typer.Option(100_000, "--index-passages", min=0,
                                       help="Synthetic passages (one JSONL) to time indexing into PostgreSQL and SQLite; 0 skips."),
    calls: int = typer.Option(20_000, "--calls", min=10, help="Search calls per throughput and failover run."),
    concurrency: int = typer.Option(16, "--concurrency", min=1, help="Concurrent client calls."),
    commits: int = typer.Option(20, "--commits", min=1, help="One-file changes for the visibility latency."),
    url: Optional[str] = typer.Option(None, "--store", help="A postgresql:// URL to use (default: a throwaway cluster)."),
    out: Path = typer.Option(OUT / "replicas", "--out", help="Directory for replicas.json."),
) -> dict[str, Any]:
    """Index into PostgreSQL, then 1 and 2 replicas behind HAProxy: visibility, throughput, failover."""
    report = run(passages, calls, concurrency, commits, url=url, index_passages=index_passages)
    out.mkdir(parents=True, exist_ok=True)
    (out / "replicas.json").write_text(json.dumps(report, indent=1))
    typer.echo(table(report))
    if not report["passed"]:
        raise typer.Exit(1)
    return report
