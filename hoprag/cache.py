"""Caches: a small thread-safe LRU for per-caller structures (search views, graphs), and the
persisted derived data (built views, the entity index) a store keeps between processes.

The LRU is keyed by a caller's group set; the bound keeps memory proportional to the number of
recently active group sets, whatever issues the identities.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any, Callable, Generic, Hashable, Protocol, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._building: dict[K, Future[V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The cached value, or ``build()`` stored (evicting the least recently used). One build per
        key at a time: a caller arriving while it runs (a request racing the start-up warm-up) waits
        for that build instead of repeating it."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            pending = self._building.get(key)
            mine = pending is None
            if mine:
                pending = self._building[key] = Future()
        if not mine:
            return pending.result()
        try:  # outside the lock: a slow build must not block other callers' lookups
            value = build()
        except BaseException as exc:
            with self._lock:
                del self._building[key]
            pending.set_exception(exc)
            raise
        with self._lock:
            del self._building[key]
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        pending.set_result(value)
        return value

    def items(self) -> list[tuple[K, V]]:
        """What is cached now, least recently used first."""
        with self._lock:
            return list(self._items.items())

    def put(self, key: K, value: V) -> None:
        """Cache ``value`` (built elsewhere: say carried over from another generation's cache)."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class Derived(Protocol):
    """Where derived index data (postings, the entity index) persists between processes: a store keeps
    it per generation, so the next process over the same generation loads, not builds."""

    def load(self, kind: str, key: str) -> bytes | None: ...

    def save(self, kind: str, key: str, blob: bytes) -> None: ...


def load_or_build(cache: Derived | None, kind: str, key: str, decode: Callable[[bytes], V | None],
                  build: Callable[[], V], encode: Callable[[V], bytes]) -> V:
    """Derived data from ``cache`` when it holds a blob ``decode`` can read (``None``: another layout,
    rebuilt), else ``build()`` saved there: how every persisted structure is loaded or made."""
    blob = cache.load(kind, key) if cache else None
    found = decode(blob) if blob is not None else None
    if found is None:
        found = build()
        if cache:
            cache.save(kind, key, encode(found))
    return found


#: What :func:`pack` writes first: a blob without it (an older layout) is a cache miss, never misread.
MAGIC = b"hoprag-arrays-2\n"


def pack(fields: dict[str, Any]) -> bytes:
    """Named fields as one blob: a JSON header holding the plain values (vocabularies, names, shapes)
    and each array's dtype, shape and offset, then the arrays' raw bytes (each 8-byte aligned), so
    :func:`unpack` maps them back without copying (no pickle, no zip checksum over tens of megabytes
    at every start). Numpy arrays and scalars are stored raw; anything else as JSON."""
    arrays, values, offset, parts = [], {}, 0, []
    for name, value in fields.items():
        if not isinstance(value, (np.ndarray, np.generic)):
            values[name] = value
            continue
        raw = np.asarray(value).tobytes()  # C order
        arrays.append([name, value.dtype.str, list(np.shape(value)), offset])
        parts.append(raw + bytes(-len(raw) % 8))
        offset += len(parts[-1])
    head = json.dumps({"arrays": arrays, "values": values}, ensure_ascii=False).encode()
    head += b" " * (-(len(MAGIC) + 8 + len(head)) % 8)
    return b"".join([MAGIC, len(head).to_bytes(8, "little"), head, *parts])


def unpack(blob: bytes) -> dict[str, Any] | None:
    """The fields :func:`pack` wrote (arrays as read-only views of ``blob``); ``None`` for another
    layout or a damaged blob (a truncated one, say): derived data that cannot be read is rebuilt."""
    if not blob.startswith(MAGIC):
        return None
    try:
        at = len(MAGIC) + 8
        body = at + int.from_bytes(blob[len(MAGIC):at], "little")
        head = json.loads(blob[at:body])
        fields: dict[str, Any] = head["values"]
        for name, dtype, shape, offset in head["arrays"]:
            count = int(np.prod(shape, dtype=np.int64))
            fields[name] = np.frombuffer(blob, dtype=np.dtype(dtype), count=count, offset=body + offset).reshape(shape)
    except (ValueError, TypeError, KeyError):  # JSON, header or array bounds: not what pack wrote
        return None
    return fields
