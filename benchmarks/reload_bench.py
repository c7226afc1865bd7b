"""``hoprag bench reload``: how fast a committed change reaches every replica, and what it costs them.

Two checkouts side by side in one run: this one (a replica applies what changed) and another one
(``--against``, say main before it: a replica rebuilds its engine from the new generation). Each has
its own PostgreSQL database of the same synthetic Markdown folder, indexed by its own ``hoprag
index`` (the schemas differ), and two ``hoprag serve`` replicas, launched from its own tree. Then
the same commits go to both, one side at a time: one file added, one changed, one deleted, a hundred
changed at once. For each commit and replica: the seconds from the commit (``hoprag index``
returning) to the replica answering from the new generation (``GET /health``, asked every 50 ms),
and the CPU seconds the replica spent on it (``/proc``), less what the health checks themselves cost
(measured on each replica first), and over the whole sequence each replica's CPU once it is idle
again (the saves a change starts in the background included). Then what a caller sees, the sides
alternating round by round: MCP ``search`` latency right after a change (the first calls of a
generation) and once settled, and a replica's cold start (launch to the first search answered).
A benchmark, not a timed test: it reports numbers.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Optional, Sequence

import httpx
import numpy as np
import typer

from . import synthetic
from .httpload import ServerProcess
from .ingest_bench import cold_start, cpu_s, until_serving, until_warm, write_files
from .pgcluster import Cluster
from .server_bench import OUT, machine

HERE = Path(__file__).resolve().parent.parent
KINDS = ("add", "change", "delete", "100 files")
PRINCIPAL = "engineering"
#: Searches timed right after a change (a generation's first), and once settled.
FIRST_CALLS, SETTLED_CALLS = 30, 300
#: ``hoprag index`` of a checkout, in a fresh interpreter that imports that checkout.
_INDEX = "from hoprag_cli.main import main; main()"


def hoprag_index(tree: Path, src: Path, url: str, *extra: str) -> tuple[int, float]:
    """``hoprag index SRC --store URL`` as ``tree``'s users run it: the generation it committed, and the
    instant it returned (the commit, give or take the interpreter's exit)."""
    done = subprocess.run([sys.executable, "-c", _INDEX, "index", str(src), "--store", url, "--quiet", *extra], cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{tree}: hoprag index failed: {done.stderr.strip()[-800:]}")
    return int(done.stdout.rsplit("generation ", 1)[1].split()[0]), time.perf_counter()


def poll_cpu(server: ServerProcess, polls: int = 200) -> float:
    """CPU seconds one ``GET /health`` costs the server (what waiting for a generation adds)."""
    before = cpu_s(server.pid)
    with httpx.Client(timeout=30) as client:
        for _ in range(polls):
            client.get(f"{server.base}/health")
    return (cpu_s(server.pid) - before) / polls


def searches(server: ServerProcess, token: str, queries: Sequence[str], calls: int) -> list[float]:
    """Milliseconds of ``calls`` MCP ``search`` calls (k = 5) over stateless HTTP, one at a time."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    out = []
    with httpx.Client(base_url=server.base, headers=headers, timeout=60) as client:
        for i in range(calls):
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": queries[i % len(queries)], "k": 5}}}
            start = time.perf_counter()
            reply = client.post("/mcp", json=body)
            out.append((time.perf_counter() - start) * 1000)
            if reply.status_code != 200 or reply.json()["result"].get("isError"):
                raise RuntimeError(f"search failed: {reply.status_code} {reply.text[:300]}")
    return out


def percentiles(ms: Sequence[float]) -> dict[str, float]:
    return {"calls": len(ms), "p50_ms": round(float(np.percentile(ms, 50)), 2), "p99_ms": round(float(np.percentile(ms, 99)), 2)}


class Side:
    """One checkout: its database, its replicas, and what each of its commits cost them."""

    def __init__(self, name: str, tree: Path, url: str, access: Path, stack: ExitStack):
        self.name, self.tree, self.url = name, tree, url
        serve = [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", "--store", url,
                 "--access", str(access)]
        self.replicas = [stack.enter_context(ServerProcess(serve, cwd=tree)) for _ in range(2)]
        for replica in self.replicas:
            until_warm(replica)
        self.per_poll = [poll_cpu(r) for r in self.replicas]
        self.rows: list[dict[str, Any]] = []
        self.polls = [0.0] * len(self.replicas)
        self.cpu_start = [cpu_s(r.pid) for r in self.replicas]

    def cpu_since_start(self) -> list[float]:
        """Each replica's CPU seconds since its first commit, health checks less, once it is idle again:
        what every commit cost it, the saves a change starts in the background included."""
        until_idle(self.replicas)
        return [round(cpu_s(r.pid) - s - p * c, 3)
                for r, s, p, c in zip(self.replicas, self.cpu_start, self.polls, self.per_poll)]

    def commit(self, kind: str, src: Path, embedder: str) -> None:
        """Index ``src`` (just changed) and time the change to every replica."""
        idle = [cpu_s(r.pid) for r in self.replicas]
        seconds = until_serving(self.replicas, *hoprag_index(self.tree, src, self.url, "--embedder", embedder),
                                timeout=1800)
        polls = [s / 0.05 + 1 for s in seconds]  # until_serving's 50 ms cadence
        cpu = [cpu_s(r.pid) - i - p * c for r, i, p, c in zip(self.replicas, idle, polls, self.per_poll)]
        self.polls = [a + b for a, b in zip(self.polls, polls)]
        self.rows.append({"kind": kind, "files": 100 if kind == "100 files" else 1, "seconds": seconds, "cpu_s": cpu})


def until_idle(replicas: Sequence[ServerProcess], timeout: float = 300) -> None:
    """Wait until no replica spends CPU (under 20 ms in a second): a save started by a change is done."""
    deadline = time.perf_counter() + timeout
    before = [cpu_s(r.pid) for r in replicas]
    while time.perf_counter() < deadline:
        time.sleep(1)
        now = [cpu_s(r.pid) for r in replicas]
        if all(b - a < 0.02 for a, b in zip(before, now)):
            return
        before = now


def change(kind: str, src: Path, files: list[Path], i: int, rng: random.Random) -> None:
    """Make one change of ``kind`` to the folder (``files``: its Markdown files)."""
    added = src / "engineering" / "added" / f"page-{i}.md"
    if kind == "add":
        added.parent.mkdir(parents=True, exist_ok=True)
        added.write_text(f"# Tarn {i}\n\nProject Tarn{i} depends on Quillon. Tarn{i} stores telemetry in Basalt.\n",
                         encoding="utf-8")
    elif kind == "delete":
        added.unlink()
    else:
        for path in rng.sample(files, 1 if kind == "change" else 100):
            path.write_text(path.read_text(encoding="utf-8") + f"\nReload marker {i}.\n", encoding="utf-8")


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per kind of change: commit-to-answer p50 / p99 / max over every replica, and CPU s per replica."""
    out = {}
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        ms = np.array([s for r in mine for s in r["seconds"]]) * 1000
        cpu = [c for r in mine for c in r["cpu_s"]]
        out[kind] = {"commits": len(mine), "samples": len(ms), "p50_ms": round(float(np.percentile(ms, 50)), 1),
                     "p99_ms": round(float(np.percentile(ms, 99)), 1), "max_ms": round(float(ms.max()), 1),
                     "cpu_s_median": round(statistics.median(cpu), 3), "cpu_s_max": round(max(cpu), 3)}
    return out


def run(sizes: Sequence[int], against: Path, repeats: int, against_repeats: int, root: Optional[Path] = None,
        seed: int = 0, embedder: str = "none", caller_rounds: int = 3) -> dict[str, Any]:
    """The whole benchmark, on a throwaway PostgreSQL cluster (a database per size and side); ``embedder``:
    what both sides index with (``none``: lexical; another embeds every passage first, hours at 100k here)."""
    root = Path(root or tempfile.mkdtemp(prefix="hoprag-reload-"))
    report: dict[str, Any] = {"machine": machine(), "against": str(against), "embedder": embedder,
                              "load_average_start": os.getloadavg()[0], "sizes": {}}
    with ExitStack() as outer:
        cluster = Cluster()
        outer.callback(cluster.destroy)
        synthetic.write(root / "small", 10)  # the synthetic principals
        access = root / "small" / "access.yaml"
        token = synthetic.token_for(PRINCIPAL)
        for n in sizes:
            src = write_files(root / f"src-{n}", n, seed)
            queries = synthetic.generate(n, seed)[1]
            files = sorted(src.rglob("*.md"))
            rng = random.Random(seed)
            with ExitStack() as stack:
                sides = []
                for name, tree, times in (("this checkout", HERE, repeats), ("--against", against.resolve(), against_repeats)):
                    db = cluster.create_database(f"reload_{n}_{len(sides)}")
                    start = time.perf_counter()
                    hoprag_index(tree, src, db, "--access", str(access), "--embedder", embedder)  # derived data too
                    indexed = time.perf_counter() - start
                    side = Side(name, tree, db, access, stack)
                    side.index_s, side.times = round(indexed, 1), times
                    sides.append(side)
                for i in range(max(repeats, against_repeats)):
                    for kind in KINDS:
                        change(kind, src, files, i, rng)
                        for side in sides:  # the same folder state committed to each, one after the other
                            if i < side.times:  # (a side timed fewer times commits the rest later, at once)
                                side.commit(kind, src, embedder)
                whole = {s.name: s.cpu_since_start() for s in sides}
                # What callers see, the sides alternating round by round (a busy machine slows both alike):
                # searches right after a change, then settled; then a cold start of each.
                seen: dict[str, dict[str, list]] = {s.name: {"first": [], "settled": [], "cold": []} for s in sides}
                for r in range(caller_rounds):
                    for side in sides:
                        change("change", src, files, max(repeats, against_repeats) + r, rng)
                        until_serving(side.replicas, *hoprag_index(side.tree, src, side.url, "--embedder", embedder),
                                      timeout=1800)
                        seen[side.name]["first"] += searches(side.replicas[0], token, queries, FIRST_CALLS)
                        seen[side.name]["settled"] += searches(side.replicas[0], token, queries, SETTLED_CALLS)
                    for side in sides:
                        serve = [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", "--store",
                                 side.url, "--access", str(access)]
                        seen[side.name]["cold"].append(cold_start(serve, token, queries[0], cwd=side.tree))
                report["sizes"][str(n)] = {s.name: {"tree": str(s.tree), "index_with_derived_s": s.index_s,
                                                    "health_poll_cpu_ms": [round(c * 1000, 3) for c in s.per_poll],
                                                    "rss_mb": [round(r.rss_mb()) for r in s.replicas],
                                                    "changes": summary(s.rows), "rows": s.rows,
                                                    "files_changed": sum(row["files"] for row in s.rows),
                                                    "cpu_s_all_commits": whole[s.name],
                                                    "search_after_a_change": percentiles(seen[s.name]["first"]),
                                                    "search_settled": percentiles(seen[s.name]["settled"]),
                                                    "cold_start": medians(seen[s.name]["cold"]),
                                                    "cold_starts": seen[s.name]["cold"]}
                                           for s in sides}
    report["load_average_end"] = os.getloadavg()[0]
    return report


def medians(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    """Each cold-start figure's median over the launches, with the first answer's range."""
    out = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0]}
    first = [r["first_answer_s"] for r in runs]
    return {**out, "first_answer_min_s": min(first), "first_answer_max_s": max(first), "launches": len(runs)}


def table(report: dict[str, Any]) -> str:
    lines = ["| passages | replicas of | change | commits × replicas | commit → answer p50 / p99 (max) ms | "
             "CPU s per replica, median (max) |", "|---|---|---|---|---|---|"]
    for n, sides in report["sizes"].items():
        for name, side in sides.items():
            for kind, c in side["changes"].items():
                lines.append(f"| {int(n):,} | {name} | {kind} | {c['commits']} × 2 | {c['p50_ms']:.0f} / {c['p99_ms']:.0f} "
                             f"({c['max_ms']:.0f}) | {c['cpu_s_median']:.3f} ({c['cpu_s_max']:.3f}) |")
    lines += ["", "| passages | replicas of | files changed | CPU s per replica over every commit, saves included | "
              "... per file changed |", "|---|---|---|---|---|"]
    for n, sides in report["sizes"].items():
        for name, side in sides.items():
            cpu, files = side["cpu_s_all_commits"], side["files_changed"]
            lines.append(f"| {int(n):,} | {name} | {files} | {' / '.join(f'{c:.2f}' for c in cpu)} | "
                         f"{' / '.join(f'{c / files:.4f}' for c in cpu)} |")
    lines += ["", "| passages | replicas of | search right after a change, p50 / p99 ms | search settled, p50 / p99 ms | "
              "cold start: first search answered s, median (min–max) | listening s | RSS MB |", "|---|---|---|---|---|---|---|"]
    for n, sides in report["sizes"].items():
        for name, side in sides.items():
            a, b, c = side["search_after_a_change"], side["search_settled"], side["cold_start"]
            lines.append(f"| {int(n):,} | {name} | {a['p50_ms']:.1f} / {a['p99_ms']:.1f} | {b['p50_ms']:.1f} / "
                         f"{b['p99_ms']:.1f} | {c['first_answer_s']:.2f} ({c['first_answer_min_s']:.2f}–"
                         f"{c['first_answer_max_s']:.2f}) | {c['startup_s']:.2f} | {c['rss_mb']:.0f} |")
    return "\n".join(lines)


def reload(
    passages: str = typer.Option("10000,100000", "--passages", help="Comma-separated corpus sizes (synthetic "
                                 "Markdown files, one passage each)."),
    against: Path = typer.Option(..., "--against", help="Another checkout of hoprag (`git worktree add`), whose "
                                 "replicas reload the same commits side by side (say main before this change)."),
    repeats: int = typer.Option(5, "--repeats", min=1, help="Commits of each kind timed on this checkout."),
    against_repeats: int = typer.Option(2, "--against-repeats", min=1, help="... and on --against (a full rebuild "
                                        "takes its time)."),
    embedder: str = typer.Option("none", "--embedder", help="What both sides index with: none (lexical, the "
                                 "default), or an embedder, which embeds every passage before the first commit."),
    caller_rounds: int = typer.Option(3, "--caller-rounds", min=1, help="Rounds of what callers see (a change, "
                                      "searches, a cold start), the sides alternating."),
    out: Path = typer.Option(OUT / "reload", "--out", help="Directory for reload.json."),
) -> dict[str, Any]:
    """Commit → every replica answering from the new generation, and CPU per change, at each size:
    this checkout against another, two PostgreSQL replicas each, side by side in one run."""
    sizes = [int(s) for s in passages.split(",") if s.strip()]
    report = run(sizes, against, repeats, against_repeats, embedder=embedder, caller_rounds=caller_rounds)
    out.mkdir(parents=True, exist_ok=True)
    (out / "reload.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    typer.echo(table(report))
    return report
