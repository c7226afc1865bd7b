"""Run the MCP server: stdio for a launched subprocess, stateless HTTP for a shared service.

The server listens as soon as its corpus is loaded; every principal's index and graph are then
built beside the listener (a request arriving first builds its caller's, once: it never waits for
the others). To reload a changed corpus or access file, restart the process (it holds no other
state). Served from a store (``--store``), a committed ``hoprag index`` is picked up without a
restart (:mod:`hoprag.reload`), warmed before it is swapped in.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Callable, Optional

import typer
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from hoprag import settings
from hoprag.access import AccessError
from hoprag.corpus import CorpusError
from hoprag.embed import choices as embedder_choices
from hoprag.engine import Engine
from hoprag.reload import Reloader
from hoprag.search import RANKERS

from .auth import fixed_caller, http_caller
from .server import build_server, http_app


LOG_LEVELS = ("debug", "info", "warning", "error")
EMBEDDERS = embedder_choices().replace(", ", " | ")
#: The longest the warm-up waits for a quiet moment before each principal.
QUIET_WAIT_S = 0.2


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
    embedder: Optional[str] = typer.Option(None, "--embedder", help=f"{EMBEDDERS} [env HOPRAG_EMBEDDER; default: a "
                                           "store's own; a corpus: none (lexical)]."),
    log_level: str = typer.Option("warning", "--log-level", envvar="HOPRAG_LOG_LEVEL",
                                  help="debug | info | warning | error (stderr; bearer tokens are never logged)."),
) -> None:
    """Serve search / fetch / graph_walk / graph_hops / graph_overview / grep over MCP."""
    busy = Busy()
    level = log_level.lower()
    if level not in LOG_LEVELS:
        raise typer.BadParameter(f"expected one of {', '.join(LOG_LEVELS)}", param_hint="--log-level")
    logging.basicConfig(level=level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if level != "debug":  # bm25s announces every per-caller index build at DEBUG on its own logger
        logging.getLogger("bm25s").setLevel(logging.WARNING)
    if transport not in ("stdio", "http"):
        raise typer.BadParameter("expected stdio or http", param_hint="--transport")
    gc.disable()  # loading allocates ~1M long-lived objects: collecting them meanwhile is pure cost
    try:
        resolved = settings.resolve(corpus=corpus, access=access, ranker=ranker, store=store, embedder=embedder)
        loaded = Engine.open(resolved) if resolved.store is None else None
        operator = settings.load_operator_access(resolved)
        if transport == "stdio":  # stdio carries no per-call identity: the launch names who every call runs as
            who = settings.principal_for(resolved, principal)
            needs_token, principals = None, [who]
            if operator.single_user and not os.environ.get(settings.NOTED):
                print(settings.single_user_note(resolved), file=sys.stderr, flush=True)
        else:
            if principal:
                raise AccessError("--as is for stdio; over HTTP the bearer token names the caller")
            if operator.single_user:
                raise AccessError(f"serving over HTTP needs an access file (bearer tokens tell callers apart): write "
                                  f"{settings.access_path(resolved)} with principals: {{me: {{groups: [local]}}}} and "
                                  "tokens: {<a long random token>: me}, or pass --access FILE")
            needs_token, principals = operator, list(operator.principals.values())

        def warm(engine: Engine) -> None:  # every caller's index, graphs and conflict claims
            for p in principals:
                busy.quiet(QUIET_WAIT_S)
                engine.warm(p.reads(engine.served_groups))
            engine.warmed.set()

        live = None
        if loaded is None:
            readers = frozenset().union(*(p.groups for p in principals))
            live = Reloader(resolved.store, resolved.ranker, warm, on_swap=_refreeze, readers=readers,
                            embedder=resolved.embedder)
            current: Engine | Callable[[], Engine] = live.current
        else:
            current = loaded
        caller = fixed_caller(who) if transport == "stdio" else http_caller(operator)
    except BaseException as exc:
        gc.enable()  # nothing loaded to protect
        if not isinstance(exc, (CorpusError, AccessError, ValueError)):
            raise
        typer.secho(str(exc), err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from None
    server = build_server(current, caller, needs_token)
    threading.Thread(target=_warm_up, args=(warm, live.current() if live else loaded, live), name="hoprag-warm-up",
                     daemon=True).start()
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
    config = uvicorn.Config(busy.around(http_app(server, host)), log_level=level, access_log=level in ("debug", "info"),
                            lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


class Busy:
    """MCP requests in flight (not health checks: a load balancer polls those). Warm-up steps aside for
    them: one interpreter lock serves both, and a caller waiting is worse than a principal warmed a
    moment later."""

    def __init__(self) -> None:
        self._count, self._lock, self._idle = 0, threading.Lock(), threading.Event()
        self._idle.set()

    def around(self, app: ASGIApp) -> ASGIApp:
        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope["path"] == "/health":
                return await app(scope, receive, send)
            self._step(1)
            try:
                await app(scope, receive, send)
            finally:
                self._step(-1)
        return counted

    def _step(self, by: int) -> None:
        with self._lock:
            self._count += by
            (self._idle.set if self._count == 0 else self._idle.clear)()

    def quiet(self, at_most: float) -> bool:
        """Wait until no request is in flight, but at most ``at_most`` seconds (steady load must not
        starve the warm-up: the reload poller starts only after it); whether it got quiet."""
        return self._idle.wait(at_most)


def _warm_up(warm: Callable[[Engine], None], engine: Engine, live: Reloader | None) -> None:
    """Build every principal's structures of the first engine, then hand its objects to the collector
    as frozen (they live for the process: no GC pass should scan them), and only then look for newer
    generations: a reload must not race the first warm-up."""
    try:
        warm(engine)
    except Exception:  # noqa: BLE001 - a request builds what it needs itself and reports the error
        logging.getLogger("hoprag.serve").exception("warm-up failed; requests build what they need")
    _refreeze()
    gc.enable()
    if live is not None:
        live.start()


def _refreeze() -> None:
    """After a warm-up or a reload: let the collector free what is garbage (an old engine: frozen
    objects are never collected), then freeze what lives on."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def main() -> None:
    typer.run(serve)
