"""``hoprag bench ingest``: indexing speed, incremental re-indexing, store size, reload latency and
server cold start from a store against loading the same corpus from JSONL.

Everything goes through the product's front doors: :func:`hoprag.ingest.index` into a store, and
``python -m mcp_server --store`` / ``--corpus`` subprocesses timed from launch until they announce
their URL (every principal's views and graphs built), then one search over HTTP.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import httpx
import typer

from hoprag.embed import Embedder, load as load_embedder
from hoprag.ingest import MAX_FILE_BYTES, index
from hoprag.settings import DEMO_CORPUS
from hoprag.store import open_store

from . import synthetic
from .httpload import ServerProcess, mcp_command
from .server_bench import OUT, machine

FOLDERS = {("engineering",): "engineering", ("finance",): "finance", ("engineering", "ops"): "engineering-ops"}


def write_files(src: Path, n: int, seed: int = 0) -> Path:
    """``n`` synthetic passages as ordinary Markdown files in nested folders whose groups come from
    ``corpus.yaml`` rules (no front matter, except ``trusted: false`` on uploads)."""
    if src.exists():
        shutil.rmtree(src)
    records, _ = synthetic.generate(n, seed)
    for i, r in enumerate(records):
        path = src / FOLDERS[tuple(r["groups"])] / f"{i // 100:03d}" / f"{r['id']}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        head = "---\ntrusted: false\n---\n" if not r["trusted"] else ""
        path.write_text(f"{head}# {r['title']}\n\n{r['text']}\n", encoding="utf-8")
    rules = "".join(f"  - path: {folder}/\n    groups: [{', '.join(groups)}]\n" for groups, folder in FOLDERS.items())
    (src / "corpus.yaml").write_text(f"rules:\n{rules}", encoding="utf-8")
    shutil.copy(DEMO_CORPUS / "relations.yaml", src / "relations.yaml")
    return src


def timed_index(src: Path, db: str | Path, max_bytes: int | None = None, embedder: Embedder | None = None) -> dict[str, Any]:
    """One :func:`index` run timed; with ``embedder``, what embedding took of it (only new or changed text)."""
    store = open_store(db, create=True)
    try:
        start = time.perf_counter()
        report = index(src, store, max_bytes=max_bytes or MAX_FILE_BYTES, embedder=embedder)
        seconds = time.perf_counter() - start
        if report.failed:
            raise RuntimeError(f"indexing failed: {report.failed[0]}")
        return {"seconds": round(seconds, 3), "files": report.files, "passages_written": report.passages,
                "passages": report.total_passages, "passages_per_s": round(report.passages / seconds, 1),
                "store_mb": round(store.size_bytes() / 2**20, 1), "generation": report.generation,
                **({"embedded": report.embedded, "embed_seconds": round(report.embed_seconds, 2),
                    "embedded_per_s": round(report.embedded / report.embed_seconds, 1) if report.embedded else None}
                   if embedder else {})}
    finally:
        store.close()


def timed_prepare(db: str | Path, access: Path, ranker: str) -> dict[str, Any]:
    """What ``hoprag index --access`` adds after its commit: the derived data servers load at start."""
    from hoprag.access import load_access
    from hoprag.ingest import prepare

    store = open_store(db)
    try:
        principals = [p.groups for p in load_access(access).principals.values()]
        return {"seconds": round(prepare(store, principals, ranker).seconds, 2), "store_mb": round(store.size_bytes() / 2**20, 1)}
    finally:
        store.close()


def first_search(server: ServerProcess, token: str, query: str) -> float:
    """Milliseconds for one MCP ``search`` over HTTP (stateless: no session to open first)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {"query": query, "k": 5}}}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    start = time.perf_counter()
    response = httpx.post(f"{server.base}/mcp", json=body, headers=headers, timeout=600)
    elapsed = (time.perf_counter() - start) * 1000
    result = response.json().get("result") if response.status_code == 200 else None
    if not result or result.get("isError") or not result["structuredContent"]["results"]:
        raise RuntimeError(f"search failed or found nothing: {response.status_code} {response.text[:300]}")
    return round(elapsed, 1)


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used: robust to a busy machine, unlike wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cold_start(argv: list[str], token: str, query: str, cwd: Path | None = None) -> dict[str, Any]:
    """Launch to listening, to the first search answered (the cold start a caller sees: the server
    listens once its corpus is loaded and builds this caller's structures on the first request), and
    to every principal warm (``GET /health``)."""
    launched = time.perf_counter()
    with ServerProcess(argv, cwd=cwd) as proc:
        ready = cpu_s(proc.pid)
        first = first_search(proc, token, query)
        answered = time.perf_counter() - launched
        answered_cpu = cpu_s(proc.pid)
        until_warm(proc)
        return {"startup_s": round(proc.startup_s, 2), "startup_cpu_s": round(ready, 2), "first_search_ms": first,
                "first_search_cpu_s": round(answered_cpu - ready, 2), "first_answer_s": round(answered, 2),
                "first_answer_cpu_s": round(answered_cpu, 2), "warm_s": round(time.perf_counter() - launched, 2),
                "warm_cpu_s": round(cpu_s(proc.pid), 2), "rss_mb": round(proc.rss_mb(), 1)}


def until_warm(server: ServerProcess) -> None:
    """Until the server reports every principal's structures built (``GET /health``, every 50 ms; a
    server without the field warmed before it listened)."""
    while not httpx.get(f"{server.base}/health", timeout=30).json().get("warm", True):
        time.sleep(0.05)


def until_serving(servers: Sequence[Any], generation: int, since: float, timeout: float = 600) -> list[float]:
    """Seconds from ``since`` until each server (anything with a ``base`` URL) reports ``generation``
    on ``GET /health`` (asked every 50 ms: each poll costs the server a request of CPU, so a tighter
    loop slows what it measures); raises if one has not after ``timeout`` seconds."""
    seen: dict[int, float] = {}
    while len(seen) < len(servers):
        for i, s in enumerate(servers):
            if i not in seen and httpx.get(f"{s.base}/health", timeout=30).json()["generation"] == generation:
                seen[i] = time.perf_counter() - since
        if time.perf_counter() - since > timeout:
            raise RuntimeError(f"servers {sorted(set(range(len(servers))) - set(seen))} not at generation "
                               f"{generation} after {timeout:.0f} s")
        time.sleep(0.05)
    return [seen[i] for i in range(len(servers))]


def reload_latency(src: Path, db: Path, access: Path, token: str) -> dict[str, Any]:
    """Seconds from a committed re-index to the running server answering from the new generation
    (committed once the server is warm: the first warm-up is not part of a reload)."""
    with ServerProcess([sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0",
                        "--store", str(db), "--access", str(access)]) as proc:
        until_warm(proc)
        changed = next(src.rglob("*.md"))
        changed.write_text(changed.read_text(encoding="utf-8") + "\nA reload marker paragraph.\n", encoding="utf-8")
        idle = cpu_s(proc.pid)
        step = timed_index(src, db)
        reload_s = until_serving([proc], step["generation"], time.perf_counter())[0]
        return {"reindex_s": step["seconds"], "reload_s": round(reload_s, 2),
                "reload_cpu_s": round(cpu_s(proc.pid) - idle, 2)}


def ingest(
    files: int = typer.Option(10_000, "--files", min=10, help="Synthetic Markdown files to index."),
    passages: int = typer.Option(100_000, "--passages", min=100, help="Passages for the cold-start comparison."),
    out: Path = typer.Option(OUT / "ingest", "--out", help="Directory for the corpora, stores and ingest.json."),
    ranker: str = typer.Option("bm25-titles", "--ranker", help="The ranker the cold-start servers use (the synthetic corpus asks for overlap)."),
    embedder: str = typer.Option("none", "--embedder", help="Embed the N files too (minilm, e5-small, ...): embedding "
                                 "throughput, and re-indexing embeds only what changed [default: none, lexical]."),
) -> dict[str, Any]:
    """Index N files (s, passages/s), re-index unchanged and after one change, store size, reload latency,
    and serve cold start from a store vs from the JSONL corpus."""
    out.mkdir(parents=True, exist_ok=True)
    token = synthetic.token_for("engineering")
    report: dict[str, Any] = {"machine": machine(), "load_average": os.getloadavg()[0], "files": files,
                              "passages": passages, "ranker": ranker, "embedder": embedder}
    model = load_embedder(embedder)

    src, db = write_files(out / "files", files), out / "files.db"
    for stale in out.glob("*.db*"):
        stale.unlink()
    report["index"] = timed_index(src, db, embedder=model)
    report["reindex_unchanged"] = timed_index(src, db, embedder=model)
    one = next(src.rglob("*.md"))
    one.write_text(one.read_text(encoding="utf-8").replace("notes", "notes (edited)", 1), encoding="utf-8")
    report["reindex_one_changed"] = timed_index(src, db, embedder=model)
    synthetic.write(out / "small", 10)  # an access file with the synthetic principals and tokens
    access = out / "small" / "access.yaml"
    report["reload"] = reload_latency(src, db, access, token)

    corpus = synthetic.write(out / f"corpus-{passages}", passages)
    big = out / f"store-{passages}.db"
    report["index_jsonl"] = timed_index(corpus, big, max_bytes=2**31)
    report["prepare"] = timed_prepare(big, corpus.parent / "access.yaml", ranker)
    query = json.loads((corpus.parent / "queries.json").read_text())[0]
    serve = [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", "--ranker", ranker]
    report["cold_start"] = {
        "corpus_jsonl": cold_start([*mcp_command(corpus, corpus.parent / "access.yaml"), "--ranker", ranker], token, query),
        "store_first": cold_start([*serve, "--store", str(big), "--access", str(corpus.parent / "access.yaml")], token, query),  # after prepare
        "store_again": cold_start([*serve, "--store", str(big), "--access", str(corpus.parent / "access.yaml")], token, query),
    }
    report["load_average_after"] = os.getloadavg()[0]
    (out / "ingest.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    typer.echo(table(report))
    return report


def table(report: dict[str, Any]) -> str:
    i, u, c, r, j = (report[k] for k in ("index", "reindex_unchanged", "reindex_one_changed", "reload", "index_jsonl"))
    lines = ["| step | seconds | passages written | passages/s | store MB |", "|---|---|---|---|---|",
             f"| index {report['files']:,} files | {i['seconds']:.2f} | {i['passages_written']:,} | {i['passages_per_s']:,.0f} | {i['store_mb']} |",
             f"| re-index, nothing changed | {u['seconds']:.2f} | {u['passages_written']} | | {u['store_mb']} |",
             f"| re-index, one file changed | {c['seconds']:.2f} | {c['passages_written']} | | {c['store_mb']} |",
             f"| index one {report['passages']:,}-line JSONL | {j['seconds']:.2f} | {j['passages_written']:,} | {j['passages_per_s']:,.0f} | {j['store_mb']} |",
             *([f"| of the {report['files']:,} files' index, embedding with {report['embedder']} (re-index after one "
                f"change: {c['embedded']} embedded) | {i['embed_seconds']:.2f} | {i['embedded']:,} | "
                f"{i['embedded_per_s'] or 0:,.1f} | |"] if i.get("embedded") is not None else []),
             f"| its derived data for the access file's principals (`hoprag index --access`) | "
             f"{report['prepare']['seconds']:.2f} | | | {report['prepare']['store_mb']} |",
             "", f"Reload: a one-file re-index took {r['reindex_s']:.2f} s; the running server answered from the "
             f"new generation {r['reload_s']:.2f} s after the commit ({r.get('reload_cpu_s', 0):.2f} CPU s of the server, "
             "polling included).", "",
             f"| serve {report['passages']:,} passages, `{report.get('ranker', 'overlap')}` | listening s | of it CPU s | "
             "first search answered s (from launch) | of it CPU s | every principal warm s | RSS MB |",
             "|---|---|---|---|---|---|---|"]
    names = {"corpus_jsonl": "`--corpus` JSONL", "store_first": "`--store`, first start (derived data from `hoprag index --access`)",
             "store_again": "`--store`, next start"}
    for key, name in names.items():
        s = report["cold_start"][key]
        lines.append(f"| {name} | {s['startup_s']:.2f} | {s['startup_cpu_s']:.2f} | {s['first_answer_s']:.2f} | "
                     f"{s['first_answer_cpu_s']:.2f} | {s['warm_s']:.2f} | {s['rss_mb']:.0f} |")
    return "\n".join(lines)


def side_by_side(
    store: Path = typer.Option(..., "--store", help="A store built by `hoprag index` (with --access, so both load)."),
    access: Path = typer.Option(..., "--access", help="Its access file; its first token asks."),
    query: str = typer.Option(..., "--query", help="The search the first answer is timed on (must find something)."),
    against: Optional[Path] = typer.Option(None, "--against", help="Another checkout of hoprag (say the previous "
                                           "commit, `git worktree add`): its server alternates with this one's."),
    runs: int = typer.Option(5, "--runs", min=1, help="Launches of each server."),
    ranker: str = typer.Option("bm25-titles", "--ranker"),
) -> dict[str, Any]:
    """Serve cold start from a store, this checkout against another one, launches alternating (a noisy
    machine slows both alike): medians of launch to listening, to the first search answered, to warm."""
    from hoprag.access import load_access

    token = next(iter(load_access(access).tokens))
    argv = [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", "--ranker", ranker,
            "--store", str(store), "--access", str(access)]
    trees = {"this checkout": Path(__file__).resolve().parent.parent, **({"--against": against.resolve()} if against else {})}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():  # `python -m mcp_server` imports from the working directory first
            rows[name].append(cold_start(argv, token, query, cwd=tree))
    lines = ["| server | listening s | first search answered s (min–max) | of it CPU s | every principal warm s | "
             "RSS MB |", "|---|---|---|---|---|---|"]
    for name, got in rows.items():
        med = {k: statistics.median(r[k] for r in got)
               for k in ("startup_s", "first_answer_s", "first_answer_cpu_s", "warm_s", "rss_mb")}
        first = [r["first_answer_s"] for r in got]
        lines.append(f"| {name} ({trees[name]}) | {med['startup_s']:.2f} | {med['first_answer_s']:.2f} "
                     f"({min(first):.2f}–{max(first):.2f}) | {med['first_answer_cpu_s']:.2f} | {med['warm_s']:.2f} | "
                     f"{med['rss_mb']:.0f} |")
    typer.echo("\n".join(lines))
    return rows


#: One timed index phase in a fresh interpreter of the checkout on ``PYTHONPATH``: a warm-up run (lazy
#: imports, compiled patterns, the page cache), then the best of ``repeat`` runs, CPU and wall seconds.
_INDEX_PROBE = """
import json, sys, tempfile, time
from pathlib import Path
from hoprag.embed import Embedder, load as load_embedder
from hoprag.ingest import MAX_FILE_BYTES, index
from hoprag.store import open_store
src, repeat = Path(sys.argv[1]), int(sys.argv[2])
best = None
for n in range(repeat + 1):
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "store.db", create=True)
        cpu, wall = time.process_time(), time.perf_counter()
        report = index(src, store)
        took = (time.process_time() - cpu, time.perf_counter() - wall)
        store.close()
    if n and (best is None or took[0] < best[0]):
        best = took
print(json.dumps({"cpu_s": best[0], "wall_s": best[1], "passages": report.passages, "files": report.files}))
"""


def index_speed(
    against: Path = typer.Option(..., "--against", help="Another checkout of hoprag (say the previous release, "
                                 "`git worktree add`): its index phase alternates with this one's."),
    files: int = typer.Option(3000, "--files", min=10, help="Synthetic Markdown files (one heading and one "
                              "paragraph each) when no --corpus is given."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Index this folder instead (say a docs site)."),
    runs: int = typer.Option(7, "--runs", min=1, help="Fresh processes of each checkout, alternating."),
    repeat: int = typer.Option(3, "--repeat", min=1, help="Timed index runs in each process (the best counts)."),
    out: Path = typer.Option(OUT / "index-speed", "--out", help="Directory for the synthetic files."),
) -> dict[str, Any]:
    """The index phase (``hoprag.ingest.index`` into a fresh store) per passage, this checkout against
    another, each in fresh processes taking turns (a noisy machine slows both alike): CPU ms per
    passage and the ratio of each pair."""
    src = corpus if corpus is not None else write_files(out / "files", files)
    trees = {"this checkout": Path(__file__).resolve().parent.parent, "--against": against.resolve()}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, "-c", _INDEX_PROBE, str(src.resolve()), str(repeat)], cwd=tree,
                                  env=env, capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"{tree}: the index probe failed: {done.stderr.strip()[-500:]}")
            rows[name].append(json.loads(done.stdout.splitlines()[-1]))
    ratios = sorted(a["cpu_s"] / a["passages"] / (b["cpu_s"] / b["passages"])
                    for a, b in zip(rows["this checkout"], rows["--against"]))
    lines = [f"{src}: index phase, {runs} alternating processes each, best of {repeat} runs in each", "",
             "| checkout | files | passages | CPU ms per passage, median (min–max) | wall ms per passage, median |",
             "|---|---|---|---|---|"]
    for name, got in rows.items():
        cpu = [r["cpu_s"] / r["passages"] * 1000 for r in got]
        wall = statistics.median(r["wall_s"] / r["passages"] * 1000 for r in got)
        lines.append(f"| {name} ({trees[name]}) | {got[0]['files']:,} | {got[0]['passages']:,} | "
                     f"{statistics.median(cpu):.3f} ({min(cpu):.3f}–{max(cpu):.3f}) | {wall:.3f} |")
    lines += ["", f"per passage, this checkout / --against: median {statistics.median(ratios):.2f}× "
              f"(pairs {ratios[0]:.2f}–{ratios[-1]:.2f}), load average {os.getloadavg()[0]:.1f}"]
    typer.echo("\n".join(lines))
    return {"rows": rows, "ratios": ratios}


def phases(
    store: Path = typer.Option(..., "--store", help="A store built by `hoprag index`."),
    access: Path = typer.Option(..., "--access", help="Its access file: every principal's view and graph is built."),
    ranker: str | None = typer.Option(None, "--ranker", help="Serve with this ranker [default: the store's choice, else bm25-titles]."),
) -> None:
    """CPU and wall seconds of each start-up phase over a store, in this process, as ``hoprag serve``
    warms an engine (run it twice: the first run builds and saves the derived data, the second loads it)."""
    from hoprag.access import load_access
    from hoprag.engine import Engine

    def lap(name: str) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        typer.echo(f"| {name} | {cpu - clock[0]:.2f} | {wall - clock[1]:.2f} |")
        clock[:] = [cpu, wall]

    # What the server imports before it can listen, in a fresh process (this one has imported it already).
    probe = ("import gc, time; gc.disable(); c, w = time.process_time(), time.perf_counter(); import mcp_server.run; "
             "print(time.process_time() - c, time.perf_counter() - w)")
    imports = [float(x) for x in subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                                check=True).stdout.split()]
    typer.echo("| phase | CPU s | wall s |\n|---|---|---|")
    typer.echo(f"| imports (`mcp_server.run`, a fresh process) | {imports[0]:.2f} | {imports[1]:.2f} |")
    gc.disable()  # as `hoprag serve` loads and warms
    clock = [time.process_time(), time.perf_counter()]
    start = [clock[0] - imports[0], clock[1] - imports[1]]
    snapshot = open_store(store).snapshot()
    lap(f"snapshot ({len(snapshot.docs):,} passages)")
    engine = Engine.from_snapshot(snapshot, ranker)
    lap(f"engine ({engine.ranker})")
    principals = load_access(access).principals.values()
    for p in principals:
        engine.view(p.groups)
    lap(f"views ({len(principals)} principals)")
    engine.derive()
    lap("entity index and evidence check")
    for p in principals:
        engine.view(p.groups).entities  # noqa: B018 - a cached property
    lap("entity views")
    for p in principals:
        engine.graph(p.groups)
    lap("graphs")
    for p in principals:
        engine.warm(p.groups)
    lap("rest of the warm-up (claims, term weights, named entities)")
    engine.search("Who owns Project X", next(iter(principals)).groups, 5)
    lap("first search")
    typer.echo(f"| **total** | {time.process_time() - start[0]:.2f} | {time.perf_counter() - start[1]:.2f} |")
    gc.enable()
