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
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, overload

import numpy as np

from .cache import pack, unpack
from . import corpus
from .corpus import Doc
from .facts import Triple
from .splice import Splice

#: The layout :meth:`Passages.to_bytes` writes (the key a store keeps it under): another one is a cache miss.
#: 2: each passage's ``path`` and ``front_matter`` (distinct metadata texts once, an index per row); 3: its store
#: ``file`` and slot.
FORMAT = "3"


class _Strings:
    """One string per row as UTF-8 bytes and offsets: decoded only when a row is read."""

    def __init__(self, data: np.ndarray, ptr: np.ndarray):
        self.data, self.ptr = memoryview(data), ptr.tolist()

    def __getitem__(self, i: int) -> str:
        return str(self.data[self.ptr[i]:self.ptr[i + 1]], "utf-8")

    def raw(self, i: int) -> bytes:
        """Row ``i`` as it is packed (what :meth:`pack` takes back: no decoding and encoding again)."""
        return self.data[self.ptr[i]:self.ptr[i + 1]].tobytes()

    @staticmethod
    def pack(encoded: Iterable[bytes]) -> tuple[np.ndarray, np.ndarray]:
        raw = list(encoded)
        ptr = np.zeros(len(raw) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in raw], out=ptr[1:])
        return np.frombuffer(b"".join(raw), dtype=np.uint8), ptr


#: The string columns a packed ``Doc`` keeps (``triples`` as JSON, ``""`` for none).
_TEXT = ("text", "title", "source", "section", "document", "triples", "path", "file")


class _Columns:
    """A packed generation's per-row fields (:meth:`Passages.from_bytes`), decoded when a row is read."""

    def __init__(self, f: dict, ids: list[str], groups: list[frozenset[str]], updated: list[dt.date | None]):
        self.ids, self.groups, self.updated = ids, groups, updated
        self.trusted, self.position = f["trusted"].astype(bool).tolist(), f["position"].tolist()
        self.text, self.title, self.source, self.section, self.document, self.triples, self.path, self.file = (
            _Strings(f[n], f[f"{n}_ptr"]) for n in _TEXT)
        self.metadata, self.metadata_of = _Strings(f["front_matter"], f["front_matter_ptr"]), f["front_matter_of"]

    def make(self, i: int) -> Doc:
        stated = self.triples[i]
        return Doc(self.ids[i], self.text[i], self.groups[i], self.trusted[i], self.title[i], self.source[i],
                   self.updated[i], tuple(map(tuple, json.loads(stated))) if stated else None, self.document[i],
                   self.position[i], self.section[i], self.path[i], self.metadata[int(self.metadata_of[i])])


class Passages(Sequence[Doc]):
    """The corpus's passages, by row; ids and group sets as columns, each ``Doc`` built on first use.

    Each row also has a *slot* (:attr:`slot_of_row`): a number its passage keeps across generations
    while it lives, which structures that grow by delta (:mod:`hoprag.postings`) index by; and the
    store file it came from (:meth:`file`), part of the order rows are kept in (:meth:`key`)."""

    def __init__(self, ids: list[str], group_sets: Sequence[frozenset[str]], group_of: np.ndarray,
                 updated: list[dt.date | None], docs: Sequence[Doc | None] | None = None,
                 columns: _Columns | None = None, base: np.ndarray | None = None,
                 files: Sequence[str | None] | None = None, slots: np.ndarray | None = None,
                 capacity: int | None = None):
        """``group_of[i]``: row ``i``'s group set, an index into ``group_sets``; ``docs[i]``: row ``i``'s
        ``Doc`` if built, else ``columns`` builds it from its packed row ``base[i]``; ``files[i]``: its
        store file (``None``: read from ``columns``); ``slots[i]``: its slot (default: the row), of
        ``capacity`` slots in all (living or not)."""
        n = len(ids)
        self.ids, self.group_sets, self.group_of, self.updated = ids, tuple(group_sets), group_of, updated
        self._made: list[Doc | None] = list(docs) if docs is not None else [None] * n
        self._columns, self._base = columns, base
        self._files: list[str | None] = list(files) if files is not None else [""] * n
        self.slot_of_row = slots if slots is not None else np.arange(n, dtype=np.int64)
        self.row_of_slot = np.full(max(capacity or 0, int(self.slot_of_row.max(initial=-1)) + 1), -1, dtype=np.int64)
        self.row_of_slot[self.slot_of_row] = np.arange(n, dtype=np.int64)
        self._slot_of: dict[str, int] | None = None
        self._parts: dict[str, list[int]] | None = None

    @classmethod
    def of(cls, docs: Iterable[Doc], files: Sequence[str] | None = None) -> "Passages":
        """Passages over ``Doc`` objects already built (a corpus loaded from files, or a store's rows
        with the ``files`` they came from)."""
        if isinstance(docs, Passages):
            return docs
        docs = tuple(docs)
        codes: dict[frozenset[str], int] = {}
        group_of = np.fromiter((codes.setdefault(d.groups, len(codes)) for d in docs), dtype=np.int32, count=len(docs))
        return cls([d.id for d in docs], list(codes), group_of, [d.updated for d in docs], docs=docs, files=files)

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
            assert self._columns is not None and self._base is not None
            # Two threads may both build a row: one object wins the slot, and the two are equal.
            doc = self._made[i] = self._columns.make(int(self._base[i]))
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
        slot = self._slots.get(doc_id)
        return None if slot is None else int(self.row_of_slot[slot])

    @property
    def _slots(self) -> dict[str, int]:
        """Each passage's slot by id: what a change carries over (slots stay while rows move)."""
        if self._slot_of is None:
            self._slot_of = dict(zip(self.ids, self.slot_of_row.tolist()))
        return self._slot_of

    def get(self, doc_id: str) -> Doc | None:
        row = self.row(doc_id)
        return None if row is None else self[row]

    def file(self, i: int) -> str:
        """The store file row ``i`` came from (``""`` for a corpus loaded otherwise)."""
        found = self._files[i]
        if found is None:
            assert self._columns is not None and self._base is not None
            return self._columns.file[int(self._base[i])]
        return found

    def _field(self, i: int, name: str) -> Any:
        """One field of row ``i`` without building its ``Doc`` (when it is not built yet)."""
        doc = self._made[i]
        if doc is None and self._columns is not None and self._base is not None:
            return getattr(self._columns, name)[int(self._base[i])]
        return getattr(self[i], name)

    def key(self, i: int) -> tuple[str, str, int]:
        """What orders rows, as the store reads them: file, document id, position."""
        return self.file(i), self._field(i, "document") or self.ids[i], self._field(i, "position")

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
            for i in range(len(self.ids)):
                document = self._field(i, "document")
                if document:
                    parts.setdefault(document, []).append(i)
            self._parts = parts
        return self._parts

    def take(self, rows: Sequence[int]) -> "Take":
        return Take(self, rows)

    def spliced(self, splice: Splice, added: Sequence[Doc], files: Sequence[str]) -> "Passages":
        """The next generation's passages: the kept rows carried over (built ``Doc`` objects and packed
        rows alike), ``added`` (with the store ``files`` they came from) where ``splice`` places them,
        each taking a new slot."""
        codes = {g: i for i, g in enumerate(self.group_sets)}
        added_codes = np.array([codes.setdefault(d.groups, len(codes)) for d in added], dtype=np.int32)
        base = self._base if self._base is not None else np.full(len(self.ids), -1, dtype=np.int64)
        capacity = len(self.row_of_slot)
        slots = splice.array(self.slot_of_row, np.arange(capacity, capacity + len(added), dtype=np.int64))
        new = Passages(splice.list(self.ids, [d.id for d in added]), list(codes),
                       splice.array(self.group_of, added_codes), splice.list(self.updated, [d.updated for d in added]),
                       splice.list(self._made, list(added)), self._columns,
                       splice.array(base, np.full(len(added), -1, dtype=np.int64)),
                       splice.list(self._files, list(files)), slots, capacity + len(added))
        by_id = dict(self._slots)  # a copy, then only the change: no pass over every id
        for row in np.flatnonzero(splice.new_of_old < 0).tolist():
            del by_id[self.ids[row]]
        by_id.update(zip((d.id for d in added), range(capacity, capacity + len(added))))
        new._slot_of = by_id
        return new

    def renumbered(self, renumber: np.ndarray) -> "Passages":
        """These passages with their slots renumbered (``renumber[old slot]``), as compaction does."""
        copy = Passages.__new__(Passages)
        copy.__dict__.update(self.__dict__)
        copy.slot_of_row = renumber[self.slot_of_row]
        copy.row_of_slot = np.full(int(copy.slot_of_row.max(initial=-1)) + 1, -1, dtype=np.int64)
        copy.row_of_slot[copy.slot_of_row] = np.arange(len(self.ids), dtype=np.int64)
        copy._slot_of = None  # every slot moved: read again when asked
        return copy

    def to_bytes(self, facts: Mapping[str, tuple[Triple, ...]]) -> bytes:
        """Every column and each passage's ``facts`` as one blob (:func:`~hoprag.cache.pack`, no pickle).
        A row never built is copied from the packed generation it came from as it is packed, not built
        and encoded again: a server saving a new base after some changes (:func:`hoprag.delta.save_due`)
        makes no ``Doc`` per passage (this took 1.6-1.9 CPU s at 100,000 passages, now 0.7)."""
        made, cols = self._made, self._columns
        base = self._base.tolist() if self._base is not None else [-1] * len(made)

        def field(name: str, of: Callable[[Doc], Any]) -> Iterator[Any]:
            """Each row's ``name``: ``of(doc)`` for a built row, else the packed column's value."""
            packed = getattr(cols, name, None)
            return (of(d) if d is not None else packed[b] for d, b in zip(made, base))

        def column(name: str, of: Callable[[Doc], str]) -> Iterator[bytes]:
            """Each row's ``name`` string encoded (a row never built: its packed bytes as they are)."""
            packed = getattr(cols, name, None)
            return (of(d).encode() if d is not None else packed.raw(b) for d, b in zip(made, base))

        n = len(made)
        fields: dict = {"ids": self.ids, "group_sets": [sorted(g) for g in self.group_sets], "group_of": self.group_of,
                        "trusted": np.fromiter(field("trusted", lambda d: d.trusted), dtype=np.uint8, count=n),
                        "position": np.fromiter(field("position", lambda d: d.position), dtype=np.int64, count=n),
                        "updated": np.fromiter((u.toordinal() if u else 0 for u in self.updated), dtype=np.int32, count=n),
                        "slots": self.slot_of_row, "capacity": len(self.row_of_slot)}
        # A document's metadata repeats on each of its passages: each distinct text is packed once.
        metadata: dict[str, int] = {}
        packed_of = cols.metadata_of.tolist() if cols is not None else []
        renamed: dict[int, int] = {}  # a packed metadata text's index -> this blob's

        def meta(d: Doc | None, b: int) -> int:
            if d is not None:
                return metadata.setdefault(d.front_matter, len(metadata))
            k = packed_of[b]
            if k not in renamed:
                renamed[k] = metadata.setdefault(cols.metadata[k], len(metadata))  # type: ignore[union-attr]
            return renamed[k]

        fields["front_matter_of"] = np.fromiter((meta(d, b) for d, b in zip(made, base)), dtype=np.int32, count=n)
        columns = {name: column(name, lambda d, name=name: getattr(d, name))
                   for name in ("text", "title", "source", "section", "document", "path")}
        columns["triples"] = column("triples", lambda d: "" if d.triples is None else json.dumps(d.triples))
        columns["file"] = (f.encode() if f is not None else cols.file.raw(b)  # type: ignore[union-attr]
                           for f, b in zip(self._files, base))
        columns["front_matter"] = (m.encode() for m in metadata)
        columns["facts"] = ((json.dumps(facts[pid]) if facts.get(pid) else "").encode() for pid in self.ids)
        for name, encoded in columns.items():
            fields[name], fields[f"{name}_ptr"] = _Strings.pack(encoded)
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
        days = {n: dt.date.fromordinal(n) for n in np.unique(f["updated"]).tolist() if n}
        updated = [days.get(n) for n in f["updated"].tolist()]
        columns = _Columns(f, ids, groups, updated)
        stating = np.flatnonzero(np.diff(f["facts_ptr"])).tolist()
        facts_of = _Strings(f["facts"], f["facts_ptr"])
        parsed = json.loads(f"[{','.join(facts_of[i] for i in stating)}]")  # one parse, not one per passage
        facts = {ids[i]: tuple(map(tuple, found)) for i, found in zip(stating, parsed)}
        n = len(ids)
        return cls(ids, group_sets, group_of, updated, columns=columns, base=np.arange(n, dtype=np.int64),
                   files=[None] * n, slots=f["slots"].astype(np.int64), capacity=int(f["capacity"])), facts


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
