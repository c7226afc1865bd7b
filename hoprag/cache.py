"""A small thread-safe LRU for per-caller structures (search views, graphs).

Both are keyed by a caller's group set; the bound keeps memory proportional to the number of
recently active group sets, whatever issues the identities.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The cached value, or ``build()`` stored (evicting the least recently used)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = build()  # outside the lock: a slow build must not block other callers' lookups
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


class Derived(Protocol):
    """Where derived index data (built search views, the entity index) persists between processes:
    a store keeps it per generation, so the next process over the same generation loads, not builds."""

    def load(self, kind: str, key: str) -> bytes | None: ...

    def save(self, kind: str, key: str, blob: bytes) -> None: ...
