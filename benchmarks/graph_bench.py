"""``hoprag bench graphs``: the graph tools of this checkout against another one's, and networkx's
PageRank on the mention graph.

Side by side (a noisy machine slows both alike): each run launches ``python -m mcp_server --store``
from this checkout and from ``--against`` in turn, times the cold start (launch to listening, to the
first ``search`` answered, to every principal warm), then calls ``graph_overview``, ``graph_walk`` and
``graph_hops`` over HTTP one at a time and keeps every answer, so the two checkouts' answers are
compared as well as timed. Then, in this process, the mention graph of the same caller is held as a
``networkx.DiGraph`` and ranked with ``networkx.pagerank`` from ``graph_hops``' own restart mass
(:meth:`hoprag.entities.EntityView.restart`): what networkx would cost for the mention graph.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import httpx
import networkx as nx
import numpy as np
import typer

from hoprag.access import load_access
from hoprag.engine import Engine
from hoprag.entities import top
from hoprag.store import open_store

from .httpload import ServerProcess, proc_status
from .ingest_bench import cpu_s, first_search, timed_prepare, until_warm
from .server_bench import OUT, machine

#: PPR's restart probability in ``graph_hops`` (``EntityView.pagerank``'s alpha): networkx's damping is 1 - it.
RESTART = 0.5
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def call(client: httpx.Client, base: str, name: str, arguments: dict[str, Any]) -> tuple[float, Any]:
    """One MCP ``tools/call`` over HTTP: milliseconds and the structured result (a tool error raises)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    start = time.perf_counter()
    response = client.post(f"{base}/mcp", json=body)
    elapsed = (time.perf_counter() - start) * 1000
    result = response.json().get("result") if response.status_code == 200 else None
    if not result or result.get("isError"):
        raise RuntimeError(f"{name}({arguments}) failed: {response.status_code} {response.text[:300]}")
    return elapsed, result["structuredContent"]


def probes(engine: Engine, groups: frozenset[str], queries: Sequence[str], walks: int) -> list[tuple[str, dict[str, Any]]]:
    """The calls each server answers: the overview, ``walks`` walks from subjects spread over the caller's
    relation graph (relations in rotation), and ``graph_hops`` for every query."""
    graph = engine.graph(groups)
    subjects = sorted({s for s, _, _, _ in graph.edges()})
    relations = sorted(graph.relations)
    if not subjects or not queries:
        raise ValueError("the caller's relation graph is empty or no query was given: nothing to walk or rank")
    starts = [subjects[i * len(subjects) // walks] for i in range(min(walks, len(subjects)))]
    return ([("graph_overview", {})] * 10
            + [("graph_walk", {"start": s, "relation": relations[i % len(relations)]}) for i, s in enumerate(starts)]
            + [("graph_hops", {"query": q, "k": 5}) for q in queries])


def cpu_ns(pid: int) -> int:
    """Nanoseconds every thread of a process has run (``/proc/<pid>/task/*/schedstat``): one call's CPU
    time, which a busy machine does not stretch as it stretches wall-clock latency."""
    return sum(int(path.read_text().split()[0]) for path in Path(f"/proc/{pid}/task").glob("*/schedstat"))


def serve(tree: Path, argv: list[str], token: str, first: str, calls: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Cold start of one server of ``tree``, then every call in order once it is warm."""
    launched = time.perf_counter()
    with ServerProcess(argv, cwd=tree) as proc:
        listening_cpu = cpu_s(proc.pid)
        first_search(proc, token, first)
        answered, answered_cpu = time.perf_counter() - launched, cpu_s(proc.pid)
        until_warm(proc)
        warm = time.perf_counter() - launched
        row: dict[str, Any] = {"listening_s": round(proc.startup_s, 2), "listening_cpu_s": round(listening_cpu, 2),
                               "first_answer_s": round(answered, 2), "first_answer_cpu_s": round(answered_cpu, 2),
                               "warm_s": round(warm, 2), "warm_cpu_s": round(cpu_s(proc.pid), 2),
                               "rss_mb": round(proc.rss_mb(), 1), "ms": {}, "cpu_ms": {}, "answers": []}
        with httpx.Client(headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=120) as client:
            for name, arguments in calls:
                used = cpu_ns(proc.pid)
                ms, answer = call(client, proc.base, name, arguments)
                row["cpu_ms"].setdefault(name, []).append((cpu_ns(proc.pid) - used) / 1e6)
                row["ms"].setdefault(name, []).append(ms)
                row["answers"].append(answer)
        return row


def networkx_pagerank(engine: Engine, groups: frozenset[str], queries: Sequence[str], calls: int, k: int = 5
                      ) -> dict[str, Any]:
    """The caller's mention graph as a ``networkx.DiGraph`` (passage -> entity and entity -> passage, with
    ``graph_hops``' transition weights) ranked by ``networkx.pagerank`` from the same restart mass: build
    seconds, memory, milliseconds per call and whether its top ``k`` are ``graph_hops``'."""
    view = engine.view(groups).entities
    to_entity, to_passage = view.walk
    n_p = to_entity.shape[1]
    rss = proc_status("self")["VmRSS"]
    start = time.perf_counter()
    mention = nx.DiGraph()
    mention.add_nodes_from(range(n_p + to_passage.shape[1]))
    for matrix, rows, cols in ((to_entity.tocoo(), n_p, 0), (to_passage.tocoo(), 0, n_p)):  # (to, from) entries
        mention.add_weighted_edges_from(zip((matrix.col + cols).tolist(), (matrix.row + rows).tolist(),
                                            matrix.data.tolist()))
    built = time.perf_counter() - start
    grown = (proc_status("self")["VmRSS"] - rss) / 1024
    ms, same, asked = [], 0, 0
    for query in queries:
        if asked == calls:
            break
        seeds = [h.doc.id for h in engine.search(query, groups, 1)]
        restart = view.restart(query, seeds)
        if restart is None:
            continue
        mass = np.concatenate(restart)
        personal = {i: float(m) for i, m in enumerate(mass) if m}
        start = time.perf_counter()
        ranked = nx.pagerank(mention, alpha=1 - RESTART, personalization=personal, nstart=personal, tol=1e-10)
        ms.append((time.perf_counter() - start) * 1000)
        scores = np.round(np.fromiter((ranked[i] for i in range(n_p)), dtype=float, count=n_p), 12)
        ids = [view.index.docs.ids[int(view.rows[i])] for i in top(scores, k)]
        same += ids == [d for d, _ in view.pagerank(query, seeds, k)]
        asked += 1
    return {"passages": n_p, "nodes": mention.number_of_nodes(), "edges": mention.number_of_edges(),
            "build_s": round(built, 2), "rss_mb": round(grown, 1), "ms": [round(m, 1) for m in ms],
            "same_top": same, "calls": asked}


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def compare(rows: dict[str, list[dict[str, Any]]], calls: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Which answers the two checkouts gave alike in their first run, per tool (``graph_hops``: the ranking,
    and the largest score difference)."""
    mine, theirs = rows["this checkout"][0]["answers"], rows["--against"][0]["answers"]
    out: dict[str, Any] = {}
    for (name, _), a, b in zip(calls, mine, theirs):
        tally = out.setdefault(name, {"calls": 0, "identical": 0, "same_ranking": 0, "max_score_diff": 0.0})
        tally["calls"] += 1
        tally["identical"] += a == b
        if name == "graph_hops":
            tally["same_ranking"] += [p["id"] for p in a["passages"]] == [p["id"] for p in b["passages"]]
            diffs = [abs(p["score"] - q["score"]) for p, q in zip(a["passages"], b["passages"])]
            tally["max_score_diff"] = max([tally["max_score_diff"], *diffs])
    return out


def graphs(
    store: Path = typer.Option(..., "--store", help="A store built by `hoprag index --access` (say the 100k "
                               "synthetic corpus of `hoprag bench ingest`)."),
    access: Path = typer.Option(..., "--access", help="Its access file; its first token asks."),
    against: Optional[Path] = typer.Option(None, "--against", help="Another checkout of hoprag (say the commit "
                                           "before networkx, `git worktree add`): its server takes turns with this "
                                           "one's and their answers are compared."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="JSON list of graph_hops questions [default: "
                                           "queries.json beside the access file, as synthetic corpora have]."),
    runs: int = typer.Option(3, "--runs", min=1, help="Launches of each server, alternating."),
    walks: int = typer.Option(100, "--walks", min=1, help="graph_walk calls per server."),
    networkx_calls: int = typer.Option(5, "--networkx-calls", min=0, help="networkx.pagerank calls (0: skip; "
                                       "each takes seconds at 100k passages)."),
    ranker: str = typer.Option("bm25-titles", "--ranker"),
    out: Path = typer.Option(OUT / "graphs", "--out", help="Directory for graphs.json."),
) -> dict[str, Any]:
    """graph_walk, graph_overview and graph_hops of this checkout (against another, each answer compared),
    cold start included; then networkx.pagerank on the same mention graph."""
    questions = json.loads((queries or access.parent / "queries.json").read_text(encoding="utf-8"))
    operator = load_access(access)
    token, principal = next(iter(operator.tokens.items()))
    groups = operator.principal(principal).groups
    timed_prepare(store, access, ranker)  # the derived data for this ranker: no timed first launch builds them
    engine = Engine.from_snapshot(open_store(store).snapshot(), ranker)
    calls = probes(engine, groups, questions, walks)
    argv = [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", "--ranker", ranker,
            "--store", str(store.resolve()), "--access", str(access.resolve())]
    trees = {"this checkout": Path(__file__).resolve().parent.parent, **({"--against": against.resolve()} if against else {})}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():  # `python -m mcp_server` imports from the working directory first
            rows[name].append(serve(tree, argv, token, questions[0], calls))
    report: dict[str, Any] = {"machine": machine(), "load_average": os.getloadavg()[0], "store": str(store),
                              "principal": principal, "passages": len(engine.docs), "runs": runs,
                              "answers": compare(rows, calls) if against else {}, "rows": rows}
    if networkx_calls:
        report["networkx"] = networkx_pagerank(engine, groups, questions, networkx_calls)
    report["load_average_after"] = os.getloadavg()[0]
    out.mkdir(parents=True, exist_ok=True)
    (out / "graphs.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    typer.echo(table(report, trees))
    return report


def table(report: dict[str, Any], trees: dict[str, Path]) -> str:
    """Medians of the cold start over the runs; tool latencies over every call of every run."""
    lines = [f"{report['store']}: {report['passages']:,} passages, as {report['principal']}, {report['runs']} "
             f"alternating launches each, load average {report['load_average']:.1f} -> {report['load_average_after']:.1f}",
             "", "| server | listening s (CPU s) | first search answered s (CPU s) | every principal warm s (CPU s) | "
             "RSS MB | graph_overview p50 / p99 ms (server CPU p50 / p99 ms) | graph_walk … | graph_hops … |",
             "|---|---|---|---|---|---|---|---|"]
    for name, got in report["rows"].items():
        med = {key: statistics.median(r[key] for r in got) for key in got[0] if key.endswith(("_s", "_mb"))}
        cells = []
        for tool in ("graph_overview", "graph_walk", "graph_hops"):
            ms, cpu = ([m for r in got for m in r[key][tool]] for key in ("ms", "cpu_ms"))
            cells.append(f"{_pct(ms, 50):.1f} / {_pct(ms, 99):.1f} ({_pct(cpu, 50):.1f} / {_pct(cpu, 99):.1f})")
        lines.append(f"| {name} ({trees[name]}) | " + " | ".join(f"{med[f'{key}_s']:.2f} ({med[f'{key}_cpu_s']:.2f})"
                                                               for key in ("listening", "first_answer", "warm"))
                     + f" | {med['rss_mb']:.0f} | " + " | ".join(cells) + " |")
    lines.append("")
    for tool, t in report["answers"].items():
        extra = (f"; same ranking {t['same_ranking']}/{t['calls']}, largest score difference {t['max_score_diff']:.1e}"
                 if tool == "graph_hops" else "")
        lines.append(f"- {tool}: {t['identical']}/{t['calls']} answers identical{extra}")
    nxr = report.get("networkx")
    if nxr:
        lines += ["", f"networkx on the same mention graph ({nxr['passages']:,} passages, {nxr['nodes']:,} nodes, "
                  f"{nxr['edges']:,} edges): DiGraph built in {nxr['build_s']:.2f} s, +{nxr['rss_mb']:.0f} MB; "
                  f"networkx.pagerank {_pct(nxr['ms'], 50):,.0f} ms median, {max(nxr['ms'], default=float('nan')):,.0f} "
                  f"ms max over {nxr['calls']} calls; its top 5 = graph_hops' in {nxr['same_top']}/{nxr['calls']}"]
    return "\n".join(lines)
