"""A corpus's passages in row order, held as columns so a server starts without building them all.

What the engine reads of *every* passage to start -- its id, its group set (who may read it) and
its date (which of two conflicting facts is newer) -- is held as plain columns; a
:class:`~hoprag.corpus.Doc` is built the first time it is asked for and kept. A store persists the
columns as one packed blob per generation (:meth:`Passages.to_bytes`), so starting over 100,000
passages is one read and no per-passage work, where building every ``Doc`` from rows took ~0.4 s. An in-memory corpus (:meth:`Passages.of`) has its ``Doc`` objects
already.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Callable, Iterable, Iterator, Mapping, Sequence, overload

import numpy as np

from .cache import pack, unpack
from . import corpus
from .corpus import Doc
from .facts import Triple

#: The layout :meth:`Passages.to_bytes` writes (the key a store keeps it under): another one is a cache miss.
#: 2: each passage's ``path`` and ``front_matter`` (distinct metadata texts once, an index per row).
FORMAT = "2"


class _Strings:
    """One string per row as UTF-8 bytes and offsets: decoded only when a row is read."""

    def __init__(self, data: np.ndarray, ptr: np.ndarray):
        self.data, self.ptr = memoryview(data), ptr.tolist()

    def __getitem__(self, i: int) -> str:
        return str(self.data[self.ptr[i]:self.ptr[i + 1]], "utf-8")

    @staticmethod
    def pack(strings: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        raw = [s.encode() for s in strings]
        ptr = np.zeros(len(raw) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in raw], out=ptr[1:])
        return np.frombuffer(b"".join(raw), dtype=np.uint8), ptr


#: The string columns a packed ``Doc`` keeps (``triples`` as JSON, ``""`` for none).
_TEXT = ("text", "title", "source", "section", "document", "triples", "path")


class Passages(Sequence[Doc]):
    """The corpus's passages, by row; ids and group sets as columns, each ``Doc`` built on first use."""

    def __init__(self, ids: list[str], group_sets: Sequence[frozenset[str]], group_of: np.ndarray,
                 updated: list[dt.date | None], make: Callable[[int], Doc] | None = None,
                 docs: Sequence[Doc] | None = None, documents: Callable[[], Sequence[str]] | None = None):
        """``group_of[i]``: row ``i``'s group set, an index into ``group_sets``; ``make(i)`` builds row
        ``i``'s ``Doc`` (or ``docs`` holds them all); ``documents()``: each row's ``Doc.document``."""
        self.ids, self.group_sets, self.group_of, self.updated = ids, tuple(group_sets), group_of, updated
        self._made: list[Doc | None] = list(docs) if docs is not None else [None] * len(ids)
        self._make = make
        self._documents = documents or (lambda: [d.document for d in self])
        self._rows: dict[str, int] | None = None
        self._parts: dict[str, list[int]] | None = None

    @classmethod
    def of(cls, docs: Iterable[Doc]) -> "Passages":
        """Passages over ``Doc`` objects already built (a corpus loaded from files)."""
        if isinstance(docs, Passages):
            return docs
        docs = tuple(docs)
        codes: dict[frozenset[str], int] = {}
        group_of = np.fromiter((codes.setdefault(d.groups, len(codes)) for d in docs), dtype=np.int32, count=len(docs))
        return cls([d.id for d in docs], list(codes), group_of, [d.updated for d in docs], docs=docs)

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> Doc: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Doc, ...]: ...

    def __getitem__(self, i: int | slice) -> Doc | tuple[Doc, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        doc = self._made[i]
        if doc is None:
            assert self._make is not None
            # Two threads may both build a row: one object wins the slot, and the two are equal.
            doc = self._made[i] = self._make(i % len(self.ids))
        return doc

    def __iter__(self) -> Iterator[Doc]:
        return map(self.__getitem__, range(len(self.ids)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Passages):
            return NotImplemented
        return self.ids == other.ids and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Passages: {len(self)} passages, {len(self.group_sets)} group sets>"

    def row(self, doc_id: str) -> int | None:
        """The row of passage ``doc_id``, ``None`` for any other id."""
        if self._rows is None:
            self._rows = dict(zip(self.ids, range(len(self.ids))))
        return self._rows.get(doc_id)

    def get(self, doc_id: str) -> Doc | None:
        row = self.row(doc_id)
        return None if row is None else self[row]

    def readable_rows(self, groups: frozenset[str]) -> np.ndarray:
        """The rows (ascending) a caller with ``groups`` may read: hoprag's own check
        (:func:`~hoprag.corpus.shares`, the one :meth:`Doc.readable_by` asks) asked once per distinct
        group set, not once per passage."""
        ok = np.fromiter((corpus.shares(g, groups) for g in self.group_sets), dtype=bool, count=len(self.group_sets))
        return np.flatnonzero(ok[self.group_of]) if len(ok) else np.zeros(0, dtype=np.int64)

    def parts(self) -> Mapping[str, list[int]]:
        """The rows of each chunked document (a passage loaded whole belongs to none), in row order."""
        if self._parts is None:
            parts: dict[str, list[int]] = {}
            for i, document in enumerate(self._documents()):
                if document:
                    parts.setdefault(document, []).append(i)
            self._parts = parts
        return self._parts

    def take(self, rows: Sequence[int]) -> "Take":
        return Take(self, rows)

    def to_bytes(self, facts: Mapping[str, tuple[Triple, ...]]) -> bytes:
        """Every column and each passage's ``facts`` as one blob (:func:`~hoprag.cache.pack`, no pickle)."""
        docs = list(self)
        fields: dict = {"ids": self.ids, "group_sets": [sorted(g) for g in self.group_sets], "group_of": self.group_of,
                        "trusted": np.fromiter((d.trusted for d in docs), dtype=np.uint8, count=len(docs)),
                        "position": np.fromiter((d.position for d in docs), dtype=np.int64, count=len(docs)),
                        "updated": np.fromiter((d.updated.toordinal() if d.updated else 0 for d in docs),
                                               dtype=np.int32, count=len(docs))}
        # A document's metadata repeats on each of its passages: each distinct text is packed once.
        metadata: dict[str, int] = {}
        fields["front_matter_of"] = np.fromiter((metadata.setdefault(d.front_matter, len(metadata)) for d in docs),
                                                dtype=np.int32, count=len(docs))
        columns = {"text": (d.text for d in docs), "title": (d.title for d in docs), "source": (d.source for d in docs),
                   "section": (d.section for d in docs), "document": (d.document for d in docs),
                   "triples": ("" if d.triples is None else json.dumps(d.triples) for d in docs),
                   "path": (d.path for d in docs), "front_matter": metadata,
                   "facts": (json.dumps(facts[d.id]) if facts.get(d.id) else "" for d in docs)}
        for name, strings in columns.items():
            fields[name], fields[f"{name}_ptr"] = _Strings.pack(strings)
        return pack(fields)

    @classmethod
    def from_bytes(cls, blob: bytes) -> tuple["Passages", dict[str, tuple[Triple, ...]]] | None:
        """The passages and facts :meth:`to_bytes` saved (``None``: another layout). Only the ids and
        the passages that state facts are read now; every other field when its row is."""
        f = unpack(blob)
        if f is None:
            return None
        ids: list[str] = f["ids"]
        group_sets = [frozenset(g) for g in f["group_sets"]]
        group_of = f["group_of"]
        groups = [group_sets[g] for g in group_of.tolist()]  # plain lists: a numpy scalar per field is slow
        trusted, position = f["trusted"].astype(bool).tolist(), f["position"].tolist()
        days = {n: dt.date.fromordinal(n) for n in np.unique(f["updated"]).tolist() if n}
        updated = [days.get(n) for n in f["updated"].tolist()]
        text, title, source, section, document, triples, path = (_Strings(f[n], f[f"{n}_ptr"]) for n in _TEXT)
        metadata, metadata_of = _Strings(f["front_matter"], f["front_matter_ptr"]), f["front_matter_of"]

        def make(i: int) -> Doc:
            stated = triples[i]
            return Doc(ids[i], text[i], groups[i], trusted[i], title[i], source[i], updated[i],
                       tuple(map(tuple, json.loads(stated))) if stated else None, document[i], position[i], section[i],
                       path[i], metadata[int(metadata_of[i])])

        stating = np.flatnonzero(np.diff(f["facts_ptr"])).tolist()
        facts_of = _Strings(f["facts"], f["facts_ptr"])
        parsed = json.loads(f"[{','.join(facts_of[i] for i in stating)}]")  # one parse, not one per passage
        facts = {ids[i]: tuple(map(tuple, found)) for i, found in zip(stating, parsed)}
        return cls(ids, group_sets, group_of, updated, make, documents=lambda: [document[i] for i in range(len(ids))]), facts


class Take(Sequence[Doc]):
    """Some rows of :class:`Passages` (a caller's view), built as they are read."""

    def __init__(self, passages: Passages, rows: Sequence[int]):
        self.passages, self.rows = passages, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        return self.passages[int(self.rows[i])]

    def __iter__(self) -> Iterator[Doc]:
        return (self.passages[int(r)] for r in self.rows)
