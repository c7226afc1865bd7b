"""Token postings that change by delta: for each token, the passages holding it and how often.

A passage is named here by its *slot*: a number it gets when it enters the corpus and keeps while
it lives (a generation's row order is another matter: :class:`~hoprag.passages.Passages` maps its
rows to slots). A change adds its passages' postings to a small *tail* segment beside the large
*base* one; a removed passage's postings stay until the next compaction, and readers skip the slots
no row holds. So a change costs what it adds, and everything a ranker needs -- which passages hold
a token, how often, how long each passage is -- is read exactly at query time: Lucene's segments
and deletions, without an approximation. :meth:`Postings.compacted` folds the tail into the base and
drops what is dead, renumbering the living slots in their order, so nothing needs sorting.
"""

from __future__ import annotations

import threading
from array import array
from dataclasses import dataclass
from itertools import islice
from typing import Iterable, Sequence

import numpy as np
from scipy import sparse

from .assess import stem
from .cache import pack, unpack

#: The layout :meth:`Postings.to_bytes` writes: another one is a cache miss.
FORMAT = "2"


@dataclass(frozen=True)
class _Segment:
    """Postings of ``len(indptr) - 1`` tokens: token ``j``'s slots (ascending) and counts are
    ``slots[indptr[j]:indptr[j + 1]]`` and ``counts[...]``."""

    indptr: np.ndarray
    slots: np.ndarray
    counts: np.ndarray

    @classmethod
    def empty(cls) -> "_Segment":
        return cls(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))

    @classmethod
    def counted(cls, tokens: np.ndarray, slots: np.ndarray, width: int, n: int) -> "_Segment":
        """The segment of occurrences: token ``tokens[i]`` once in slot ``slots[i]`` (slots below ``n``)."""
        m = sparse.csc_matrix((np.ones(len(tokens), dtype=np.int32), (slots, tokens)), shape=(max(n, 1), width))
        m.sum_duplicates()  # one entry per (token, slot), holding its count; slots ascending per token
        return cls(m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data.astype(np.int32))

    @classmethod
    def of(cls, tokens: np.ndarray, slots: np.ndarray, counts: np.ndarray, width: int) -> "_Segment":
        """A segment over ``width`` tokens from entries already ordered by (token, slot)."""
        indptr = np.zeros(width + 1, dtype=np.int64)
        np.cumsum(np.bincount(tokens, minlength=width), out=indptr[1:])
        return cls(indptr, slots.astype(np.int32, copy=False), counts.astype(np.int32, copy=False))

    @property
    def width(self) -> int:
        return len(self.indptr) - 1

    def span(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        if j >= self.width:
            return self.slots[:0], self.counts[:0]
        start, end = self.indptr[j], self.indptr[j + 1]
        return self.slots[start:end], self.counts[start:end]

    def tokens(self) -> np.ndarray:
        """Each entry's token."""
        return np.repeat(np.arange(self.width, dtype=np.int32), np.diff(self.indptr))


class Builder:
    """Postings built one passage at a time, in any slot order: token ids go straight into flat int32
    arrays, since holding every passage's token list (or per-token Python ints) would cost about 5x
    the corpus text in RAM at 100k passages."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self._ids, self._slots, self._lengths = array("i"), array("q"), {}

    def add(self, slot: int, tokens: Sequence[str]) -> None:
        vocab = self.vocab
        self._ids.extend([vocab.setdefault(t, len(vocab)) for t in tokens])
        self._slots.extend([slot] * len(tokens))
        self._lengths[slot] = len(tokens)

    def postings(self, capacity: int = 0) -> "Postings":
        """The postings of what was added, over at least ``capacity`` slots."""
        n = max(capacity, max(self._lengths, default=-1) + 1)
        lengths = np.zeros(n, dtype=np.int32)
        lengths[list(self._lengths)] = list(self._lengths.values())
        ids = np.frombuffer(self._ids, dtype=np.int32) if self._ids else np.zeros(0, dtype=np.int32)
        slots = np.frombuffer(self._slots, dtype=np.int64) if self._slots else np.zeros(0, dtype=np.int64)
        base = _Segment.counted(ids, slots, len(self.vocab), n)
        return Postings(self.vocab, base, _Segment.empty(), lengths)


class _Stems:
    """Stem -> the vocabulary's tokens of that stem, indexed when first asked and extended by the tokens
    added since: one index serves every generation grown from the same postings, since a vocabulary only
    grows, in order (a generation with fewer tokens is given forms it does not hold, which hold no
    passage of it)."""

    def __init__(self) -> None:
        self._of: dict[str, list[str]] = {}
        self._covered = 0
        self._lock = threading.Lock()

    def forms(self, key: str, vocab: dict[str, int]) -> tuple[str, ...]:
        with self._lock:
            if self._covered < len(vocab):
                for token in islice(vocab, self._covered, None):
                    self._of.setdefault(stem(token), []).append(token)
                self._covered = len(vocab)
            return tuple(self._of.get(key, ()))


class Postings:
    """Token -> (slots, counts), over every passage slot; ``lengths[slot]``: how many tokens it has."""

    def __init__(self, vocab: dict[str, int], base: _Segment, tail: _Segment, lengths: np.ndarray,
                 covered: int | None = None, stems: _Stems | None = None):
        """``covered``: how many slots the base segment covers (the rest are in the tail); ``stems``: the
        stem index of the postings these grew from (shared: see :class:`_Stems`)."""
        self.vocab, self.base, self.tail, self.lengths = vocab, base, tail, lengths
        self.covered = len(lengths) if covered is None else covered
        self._stems = stems or _Stems()

    def forms(self, key: str) -> tuple[str, ...]:
        """The tokens whose (Snowball) stem is ``key``, some perhaps held by no living passage."""
        return self._stems.forms(key, self.vocab)

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]]) -> "Postings":
        """Postings of passages given in slot order (slot ``i``: the ``i``-th token list)."""
        builder = Builder()
        for slot, tokens in enumerate(token_lists):
            builder.add(slot, tokens)
        return builder.postings()

    @property
    def slots(self) -> int:
        """How many slots these postings know of (living or dead)."""
        return len(self.lengths)

    def lookup(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The slots holding ``token`` (ascending) and its count in each."""
        j = self.vocab.get(token)
        if j is None:
            return self.base.slots[:0], self.base.counts[:0]
        head, tail = self.base.span(j), self.tail.span(j)
        if not len(tail[0]):
            return head
        if not len(head[0]):
            return tail
        return np.concatenate([head[0], tail[0]]), np.concatenate([head[1], tail[1]])

    def grown(self, token_lists: Sequence[Sequence[str]], alive: np.ndarray) -> "Postings":
        """These postings plus passages taking the next slots (one token list each, in slot order).

        The tail is rebuilt from its living entries and the new ones (``alive[slot]``: whether a
        slot is still held), so it stays as small as what changed since the last compaction; the
        base is shared, untouched, with the postings this one came from."""
        vocab = dict(self.vocab)  # a reader of the previous generation keeps its own
        first = self.slots
        ids, slot_of, lengths = [], [], []
        for i, tokens in enumerate(token_lists):
            ids += [vocab.setdefault(t, len(vocab)) for t in tokens]
            slot_of += [first + i] * len(tokens)
            lengths.append(len(tokens))
        added = _Segment.counted(np.array(ids, dtype=np.int32), np.array(slot_of, dtype=np.int32), len(vocab),
                                 first + len(lengths))
        new = added.tokens(), added.slots, added.counts
        old = self.tail.tokens(), self.tail.slots, self.tail.counts
        keep = alive[old[1]]
        tokens, slots, counts = (np.concatenate([a[keep], b]) for a, b in zip(old, new))
        order = np.argsort(tokens, kind="stable")  # old tail slots precede new ones: (token, slot) order
        tail = _Segment.of(tokens[order], slots[order], counts[order], len(vocab))
        return Postings(vocab, self.base, tail, np.concatenate([self.lengths, np.array(lengths, dtype=np.int32)]),
                        self.covered, self._stems)

    @property
    def tail_slots(self) -> int:
        """How many slots were added since the base was built (what a change's tail rebuild costs)."""
        return self.slots - self.covered

    def compacted(self, renumber: np.ndarray) -> "Postings":
        """One segment, dead slots dropped, each living slot renumbered (``renumber[old]``: its new
        slot, ``-1`` when dead; increasing over the living ones, so within a token the base's entries
        stay before the tail's and in order: two sorted runs merged, one pass)."""
        parts = []
        for segment in (self.base, self.tail):
            new = renumber[segment.slots]
            keep = new >= 0
            parts.append((segment.tokens()[keep], new[keep], segment.counts[keep]))
        tokens, slots, counts = (np.concatenate([a, b]) for a, b in zip(*parts))
        order = np.argsort(tokens, kind="stable")  # a merge of the two runs
        alive = renumber >= 0
        lengths = np.zeros(int(renumber.max(initial=-1)) + 1, dtype=np.int32)
        lengths[renumber[alive]] = self.lengths[alive]
        return Postings(dict(self.vocab), _Segment.of(tokens[order], slots[order], counts[order], len(self.vocab)),
                        _Segment.empty(), lengths, stems=self._stems)

    def to_bytes(self) -> bytes:
        """Plain arrays (:func:`hoprag.cache.pack`, no pickle), so a store persists them."""
        fields = {"vocab": list(self.vocab), "lengths": self.lengths, "covered": self.covered}
        for name, segment in (("base", self.base), ("tail", self.tail)):
            fields |= {f"{name}_indptr": segment.indptr, f"{name}_slots": segment.slots,
                       f"{name}_counts": segment.counts}
        return pack(fields)

    @classmethod
    def from_bytes(cls, blob: bytes) -> "Postings | None":
        """What :meth:`to_bytes` wrote (``None``: another layout)."""
        f = unpack(blob)
        try:
            base, tail = (_Segment(f[f"{n}_indptr"], f[f"{n}_slots"], f[f"{n}_counts"]) for n in ("base", "tail"))
            return cls(dict(zip(f["vocab"], range(len(f["vocab"])))), base, tail, f["lengths"], int(f["covered"]))
        except (KeyError, TypeError):  # another layout (or none): rebuilt, never misread
            return None

