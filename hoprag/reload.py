"""Reloading an engine over a store: a committed change is served without a restart, never half-applied.

A poller reads the store's generation counter (one indexed row) every ``interval`` seconds, or
as soon as the store announces a commit (PostgreSQL ``LISTEN``/``NOTIFY``); on a new generation it
builds a complete engine from one snapshot in the background, warms it (the callers' views and
graphs) and only then swaps the reference. Callers take :meth:`Reloader.current` once per request, so
every request is answered by exactly one generation. The first engine is served as soon as it is
loaded: its warm-up is the caller's to run (``hoprag serve`` runs it beside the listener).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from .engine import Engine
from .store import open_store, redact

log = logging.getLogger("hoprag.reload")

#: How often a serving process looks for a new generation (the reload latency is this plus a build).
POLL_SECONDS = 0.5


class Reloader:
    """The current engine of a store; ``warm`` runs on each reloaded engine before it is swapped in."""

    def __init__(self, store: str | Path, ranker: str | None = None, warm: Callable[[Engine], None] = lambda e: None,
                 interval: float = POLL_SECONDS, on_swap: Callable[[], None] = lambda: None,
                 readers: frozenset[str] | None = None, embedder: str | None = None):
        """``readers``: the groups of every principal this process serves (what a store enforcing its
        own permissions returns rows for); ``embedder``: the setting (unset: the store's own)."""
        self.path, self.ranker, self.warm, self.interval, self.on_swap = store, ranker, warm, interval, on_swap
        self.readers, self.embedder = readers, embedder
        self._store = open_store(store)
        self._engine = self._load()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _build(self) -> Engine:
        """A complete engine, warmed before it is swapped in, so no request after a swap pays for a build."""
        engine = self._load()
        self.warm(engine)
        return engine

    def _load(self) -> Engine:
        return Engine.over(self._store, self.ranker, self.readers, self.embedder, redact(self.path))

    def current(self) -> Engine:
        return self._engine

    def refresh(self) -> bool:
        """Swap in the store's newest generation if it moved; whether it did."""
        if self._store.generation() == self._engine.generation:
            return False
        engine = self._build()
        self._engine = engine  # one reference assignment: atomic for every reader
        self.on_swap()
        log.info("serving store generation %d (%d passages)", engine.generation, len(engine.docs))
        return True

    def _run(self) -> None:
        failing = ""
        while not self._stop.is_set():
            try:
                self._store.wait(self.interval)
                if self._stop.is_set():
                    break
                self.refresh()
            except Exception as exc:  # noqa: BLE001 - keep serving the last good generation
                if str(exc) != failing:  # once per outage, not every poll
                    log.warning("store reload failed, still serving generation %d: %s", self._engine.generation, exc)
                failing = str(exc)
            else:
                if failing:
                    log.warning("store reachable again, serving generation %d", self._engine.generation)
                failing = ""

    def start(self) -> "Reloader":
        self._thread = threading.Thread(target=self._run, name="hoprag-store-poll", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        self._store.close()
