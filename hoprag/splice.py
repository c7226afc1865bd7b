"""How one generation's rows become the next one's when passages are removed and added.

Rows stay in the store's order (file, document, position), the order a fresh build reads, so every
row-ordered structure -- ties broken by row, graph edges in document order, the first passage to
state a name -- comes out as a fresh build would make it. A :class:`Splice` says which old rows
are kept and where the added passages go; every per-row column is then carried over in a few
slices or one numpy pass, never rebuilt from the passages.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

T = TypeVar("T")
#: What orders rows: (file, document id, position), as the store reads them.
Key = tuple[str, str, int]


@dataclass(frozen=True)
class Splice:
    """``kept``: the old rows kept (ascending); ``placed``: the new row of each added passage (ascending,
    in the order they were given); ``size``: rows after."""

    old: int
    kept: np.ndarray
    placed: np.ndarray
    size: int

    @classmethod
    def of(cls, old: int, removed: Sequence[int], key: Callable[[int], Key], added: Sequence[Key]) -> "Splice":
        """The plan for ``old`` rows ordered by ``key(row)``: ``removed`` rows go, passages with keys
        ``added`` (ascending, none equal to a kept row's) are inserted where that order puts them."""
        keep = np.ones(old, dtype=bool)
        keep[np.asarray(removed, dtype=np.int64)] = False
        kept = np.flatnonzero(keep)
        view = _Keys(kept, key)
        at = np.array([bisect_left(view, k) for k in added], dtype=np.int64)  # kept rows before each
        placed = at + np.arange(len(added), dtype=np.int64)
        return cls(old, kept, placed, len(kept) + len(added))

    @cached_property
    def new_of_old(self) -> np.ndarray:
        """Each old row's new row, ``-1`` for a removed one."""
        out = np.full(self.old, -1, dtype=np.int64)
        out[self.kept] = self.moved
        return out

    @cached_property
    def moved(self) -> np.ndarray:
        """The new row of each kept row (parallel to :attr:`kept`)."""
        before = np.searchsorted(self.placed - np.arange(len(self.placed)), np.arange(len(self.kept)), side="right")
        return np.arange(len(self.kept), dtype=np.int64) + before

    def array(self, old: np.ndarray, added: np.ndarray) -> np.ndarray:
        """A per-row array of the next generation from the old one and the added rows' values."""
        out = np.empty((self.size, *old.shape[1:]), dtype=np.result_type(old, added) if len(added) else old.dtype)
        out[self.moved] = old[self.kept]
        out[self.placed] = added
        return out

    def list(self, old: Sequence[T], added: Sequence[T]) -> list[T]:
        """A per-row list of the next generation, assembled from slices of the old one (the kept rows
        form a few runs, so this is a few list copies, not a Python loop over rows)."""
        out: list[T] = []
        for source, start, stop in self.runs:
            out += old[start:stop] if source else added[start:stop]
        return out

    @cached_property
    def runs(self) -> list[tuple[bool, int, int]]:
        """The next generation's rows as runs, in order: ``(True, a, b)`` old rows ``a:b``,
        ``(False, a, b)`` added passages ``a:b``."""
        out: list[tuple[bool, int, int]] = []
        kept, moved, placed = self.kept, self.moved, self.placed
        if len(kept):  # a run of kept rows ends where the old rows or the new ones stop being consecutive
            breaks = np.flatnonzero((np.diff(kept) != 1) | (np.diff(moved) != 1)) + 1
            starts, stops = np.concatenate([[0], breaks]), np.concatenate([breaks, [len(kept)]])
            runs = [(int(moved[a]), True, int(kept[a]), int(kept[b - 1]) + 1) for a, b in zip(starts, stops)]
        else:
            runs = []
        if len(placed):
            breaks = np.flatnonzero(np.diff(placed) != 1) + 1
            starts, stops = np.concatenate([[0], breaks]), np.concatenate([breaks, [len(placed)]])
            runs += [(int(placed[a]), False, int(a), int(b)) for a, b in zip(starts, stops)]
        for _, source, a, b in sorted(runs):
            out.append((source, a, b))
        return out

    def ragged(self, flat: np.ndarray, ptr: np.ndarray, added: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray]:
        """A per-row list of ints held flat (``flat[ptr[i]:ptr[i + 1]]``: row ``i``'s), carried over."""
        lengths = self.array(np.diff(ptr), np.array([len(a) for a in added], dtype=np.int64))
        new_ptr = np.zeros(self.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=new_ptr[1:])
        parts = [flat[ptr[a]:ptr[b]] if source else np.array([j for own in added[a:b] for j in own], dtype=flat.dtype)
                 for source, a, b in self.runs]
        return (np.concatenate(parts) if parts else flat[:0]).astype(flat.dtype, copy=False), new_ptr


class _Keys(Sequence[Key]):
    """The kept rows' keys, read only where a binary search looks."""

    def __init__(self, rows: np.ndarray, key: Callable[[int], Key]):
        self.rows, self.key = rows, key

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):  # type: ignore[override]
        return self.key(int(self.rows[i]))
