"""Reloading an engine over a store: a committed change is served without a restart, never half-applied.

A poller reads the store's generation counter (one indexed row) every ``interval`` seconds, or
as soon as the store announces a commit (PostgreSQL ``LISTEN``/``NOTIFY``); on a new generation it
reads what changed since the generation it serves (:meth:`~hoprag.store.Store.delta`), applies it to
a new engine in the background (:mod:`hoprag.delta`: by what changed, the served engine untouched),
warms it and only then swaps the reference. When the change cannot be told (the store's log no
longer reaches back, the configuration changed) it builds the new engine from a whole snapshot.
Callers take :meth:`Reloader.current` once per request, so every request is answered by exactly one
generation. The first engine is served as soon as it is loaded: its warm-up is the caller's to run
(``hoprag serve`` runs it beside the listener).

Once enough has changed since the derived data the store holds was saved, a reloaded engine saves
its own (:meth:`Engine.persist`, beside serving, after :data:`SAVE_GRACE` and only if no other process
saved or is saving it), so the next process starts from it.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from .delta import advance, save_due
from .engine import Engine
from .store import open_store, redact

log = logging.getLogger("hoprag.reload")

#: How often a serving process looks for a new generation (the reload latency is this plus applying it).
POLL_SECONDS = 0.5
#: A server waits this long before saving a base itself: ``hoprag index`` saves one after its commit
#: (:func:`hoprag.ingest.prepare`, a few seconds at 100,000 passages) and is not serving, so a server
#: spends nothing on a base an indexer saved -- only on one none did (an index run without the access file).
SAVE_GRACE = 10.0


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
        self._persisting = threading.Event()
        #: ``changed`` of the engine whose derived data this process saved last (0: none yet): a save is
        #: due once as much changed again since, not at every change after the first save.
        self._saved_at = 0
        self._thread: threading.Thread | None = None

    def _build(self) -> Engine:
        """The next engine, warmed before it is swapped in, so no request after a swap pays for a build:
        the served one advanced by what changed (its vectors too), or (when that cannot be told: the
        log, the configuration or the embedder changed) one built from a snapshot."""
        current = self._engine
        delta = self._store.delta(current.generation, self.readers)
        if delta is None:
            log.info("the change since generation %d cannot be told (the store's log is shorter, or the corpus "
                     "configuration or the embedder changed): reading a whole snapshot", current.generation)
            engine = self._load()
            self._saved_at = 0  # counted anew from the base this snapshot started from
        else:
            engine = advance(current.prepared(), delta)
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
        if save_due(engine, self._saved_at) and not self._persisting.is_set():
            self._persisting.set()
            threading.Thread(target=self._persist, args=(engine,), name="hoprag-persist", daemon=True).start()
        return True

    def _persist(self, engine: Engine) -> None:
        """Save ``engine``'s derived data (beside serving) unless another process does: a later start then
        applies less."""
        try:
            if self._stop.wait(SAVE_GRACE):
                return
            with self._store.saving(engine.generation, self.readers) as mine:
                if mine:  # else another replica (or `hoprag index`) saves it, or saved a later one
                    engine.persist(self._store.derived(engine.generation, self.readers))
            self._saved_at = engine.changed
        except Exception as exc:  # noqa: BLE001 - a cache that cannot be saved is rebuilt by the next start
            log.info("derived data of generation %d not saved: %s", engine.generation, exc)
        finally:
            self._persisting.clear()

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
