"""Run the MCP server: stdio for a launched subprocess, stateless HTTP for a shared service.

The corpus is loaded and every principal's index and graph are built at start-up; to reload
a changed corpus or access file, restart the process (it holds no other state). Served from a
store (``--store``), a committed ``hoprag index`` is picked up without a restart (:mod:`hoprag.live`).
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import socket
import sys
from pathlib import Path
from typing import Callable, Optional

import typer
import uvicorn

from hoprag import settings
from hoprag.access import AccessError
from hoprag.corpus import CorpusError
from hoprag.engine import Engine
from hoprag.live import Live
from hoprag.search import RANKERS

from .server import build_server, fixed_caller, http_app, http_caller


LOG_LEVELS = ("debug", "info", "warning", "error")


def open_listener(host: str, port: int) -> socket.socket:
    """Bind first, so ``--port 0`` gets a free port we can announce before serving."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it: without it Nagle holds uvicorn's response body behind the
    # client's delayed ACK, ~40 ms on every keep-alive request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def serve(
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Corpus directory or .jsonl [env HOPRAG_CORPUS]."),
    store: Optional[str] = typer.Option(None, "--store", help="Serve this store (built by `hoprag index`: a file, or a postgresql:// URL) instead of a corpus, reloading committed changes [env HOPRAG_STORE]."),
    transport: str = typer.Option("stdio", "--transport", help="stdio | http (stateless Streamable HTTP)."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address."),
    port: int = typer.Option(8000, "--port", help="HTTP port; 0 picks a free one (announced on stderr)."),
    access: Optional[Path] = typer.Option(None, "--access", help="Operator access file [env HOPRAG_ACCESS; default access.yaml beside the corpus]."),
    principal: Optional[str] = typer.Option(None, "--as", help="stdio only: who every call runs as, a principal or "
                                            f"an ADK user id of the access file's users: [default: {settings.DEFAULT_USER}]."),
    ranker: Optional[str] = typer.Option(None, "--ranker", help=f"{' | '.join(RANKERS)} [env HOPRAG_RANKER; default: the corpus's corpus.yaml, else bm25-titles]."),
    log_level: str = typer.Option("warning", "--log-level", envvar="HOPRAG_LOG_LEVEL",
                                  help="debug | info | warning | error (stderr; bearer tokens are never logged)."),
) -> None:
    """Serve search / fetch / graph_walk / graph_hops / graph_overview / grep over MCP."""
    level = log_level.lower()
    if level not in LOG_LEVELS:
        raise typer.BadParameter(f"expected one of {', '.join(LOG_LEVELS)}", param_hint="--log-level")
    logging.basicConfig(level=level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if level != "debug":  # bm25s announces every per-caller index build at DEBUG on its own logger
        logging.getLogger("bm25s").setLevel(logging.WARNING)
    if transport not in ("stdio", "http"):
        raise typer.BadParameter("expected stdio or http", param_hint="--transport")
    try:
        resolved = settings.resolve(corpus=corpus, access=access, ranker=ranker, store=store)
        loaded = Engine.open(resolved) if resolved.store is None else None
        operator = settings.load_operator_access(resolved)
        if transport == "stdio":  # stdio carries no per-call identity: the launch names who every call runs as
            who = settings.principal_for(resolved, principal)
            caller, needs_token, principals = fixed_caller(who), None, [who]
        else:
            if principal:
                raise AccessError("--as is for stdio; over HTTP the bearer token names the caller")
            caller, needs_token, principals = http_caller(operator), operator, list(operator.principals.values())

        def warm(engine: Engine) -> None:  # every caller's index, graphs and conflict claims now, not on the first request
            for p in principals:
                engine.warm(p.groups)

        if loaded is None:
            readers = frozenset().union(*(p.groups for p in principals))
            current: Engine | Callable[[], Engine] = Live(resolved.store, resolved.ranker, warm, on_swap=_refreeze,
                                                          readers=readers).start().current
        else:
            current = loaded
            warm(loaded)
    except (CorpusError, AccessError, ValueError) as exc:
        typer.secho(str(exc), err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from None
    server = build_server(current, caller, needs_token)
    gc.collect()
    gc.freeze()  # the corpus and indexes live for the process: keep them out of every GC pass
    if transport == "stdio":
        asyncio.run(server.run_stdio_async())
        return
    try:
        sock = open_listener(host, port)
    except OSError as exc:
        hint = ("another process holds it: pass --port N, or --port 0 for a free one" if exc.errno == errno.EADDRINUSE
                else "pass a --host this machine has and a --port you may bind (>= 1024 unless root)")
        typer.secho(f"cannot listen on {host}:{port}: {exc.strerror or exc}: {hint}", err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from None
    bound = sock.getsockname()[1]
    print(f"hoprag MCP server on http://{host}:{bound}/mcp (health: /health)", file=sys.stderr, flush=True)
    config = uvicorn.Config(http_app(server, host), log_level=level, access_log=level in ("debug", "info"),
                            lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


def _refreeze() -> None:
    """After a reload: let the collector free the old engine (frozen objects are never collected),
    then freeze the new one."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def main() -> None:
    typer.run(serve)
