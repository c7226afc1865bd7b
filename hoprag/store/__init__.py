"""Persistent stores: documents, passages, content digests and derived index data behind one protocol.

``hoprag index`` mirrors a source folder into a store; ``hoprag serve|ask|search --store`` start from
it without re-parsing. The embedded SQLite file (:mod:`.sqlite`, standard library) is the default;
``postgresql://`` URL names a shared PostgreSQL store (:mod:`.postgres`) that many server replicas
read, enforcing permissions a second time with row-level security.

Every change is one atomic commit that bumps the store's *generation* and logs what it removed and
added; a reader takes a :class:`Snapshot` of one generation, so it never sees half an update, and a
server polls :meth:`Store.generation` and applies what changed since its own (:meth:`Store.delta`,
:mod:`hoprag.delta`) to the engine it serves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Iterable, Protocol, Sequence
from urllib.parse import urlsplit

import numpy as np

from ..corpus import Doc
from ..delta import Delta
from ..lexicon import Lexicon, Relation
from ..facts import Triple
from ..cache import Derived, pack, unpack
from ..passages import Passages


@dataclass(frozen=True)
class Config:
    """The validated corpus configuration a store carries (from ``corpus.yaml``, ``relations.yaml``,
    ``allowlist.yaml`` in the indexed folder), so a store serves without its source folder."""

    lexicon: Lexicon = Lexicon(())
    allowlist: tuple[str, ...] | None = None
    ranker: str | None = None

    def as_json(self) -> dict:
        return {"relations": [{"name": r.name, "cues": list(r.cues), "asks": list(r.asks)} for r in self.lexicon.relations],
                "allowlist": list(self.allowlist) if self.allowlist is not None else None, "ranker": self.ranker}

    @classmethod
    def from_json(cls, data: dict) -> "Config":
        relations = tuple(Relation(r["name"], tuple(r["cues"]), tuple(r["asks"])) for r in data.get("relations", ()))
        allow = data.get("allowlist")
        return cls(Lexicon(relations), tuple(allow) if allow is not None else None, data.get("ranker"))


@dataclass(frozen=True)
class Passage:
    """A passage with the facts read from it at index time (under the store's lexicon), and its
    embedding (float16 bytes) with the digest of what was embedded (:func:`hoprag.embed.digest`)."""

    doc: Doc
    facts: tuple[Triple, ...]
    vector: bytes | None = None
    embedded: str | None = None


@dataclass(frozen=True)
class Embedding:
    """Which embedder made a store's vectors: its setting name, identity and dimension."""

    name: str
    identity: str
    dim: int

    def as_json(self) -> dict:
        return {"name": self.name, "identity": self.identity, "dim": self.dim}

    @classmethod
    def from_json(cls, data: dict | None) -> "Embedding | None":
        return cls(str(data["name"]), str(data["identity"]), int(data["dim"])) if data else None


@dataclass
class Changes:
    """One mirror step, applied as a single commit: files (re)indexed with their passages, files gone,
    vectors of unchanged passages (re)computed, and the embedder every vector is now of (``None``:
    none; the store's vectors are dropped)."""

    source: str
    config: Config
    config_digest: str
    upsert: dict[str, tuple[str, list[Passage]]] = field(default_factory=dict)  # file -> (digest, passages)
    delete: list[str] = field(default_factory=list)
    vectors: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # passage id -> (digest, vector)
    embedding: Embedding | None = None


#: The derived-data kind a generation's vectors persist under (one float16 matrix in passage order).
VECTORS = "vectors"


@dataclass(frozen=True)
class StoredVectors:
    """A snapshot's passage vectors: one float16 row per passage in passage order (zeros for a
    passage that has none, ``missing`` of them), made by ``embedding``."""

    embedding: Embedding
    matrix: np.ndarray
    missing: int = 0


def stored_vectors(embedding: Embedding, docs: Passages, rows: Iterable[tuple[str, bytes]]) -> StoredVectors:
    """The matrix of a snapshot's vectors from ``(passage id, float16 bytes)`` rows; a row of
    another dimension counts as missing (it is re-embedded by the next ``hoprag index``)."""
    matrix = np.zeros((len(docs), embedding.dim), dtype=np.float16)
    have = np.zeros(len(docs), dtype=bool)
    for pid, blob in rows:
        row = docs.row(pid)
        if row is not None and blob is not None and len(blob) == 2 * embedding.dim:
            matrix[row] = np.frombuffer(blob, dtype="<f2")
            have[row] = True
    return StoredVectors(embedding, matrix, int(len(docs) - have.sum()))


def pack_vectors(vectors: StoredVectors) -> bytes:
    return pack({"matrix": vectors.matrix, "missing": vectors.missing, "embedding": vectors.embedding.as_json()})


def unpack_vectors(blob: bytes, embedding: Embedding, passages: int) -> StoredVectors | None:
    """The inverse of :func:`pack_vectors`; ``None`` for a blob of another embedder or size."""
    f = unpack(blob)
    if f is None or Embedding.from_json(f.get("embedding")) != embedding or f["matrix"].shape != (passages, embedding.dim):
        return None
    return StoredVectors(embedding, f["matrix"], int(f["missing"]))


#: The derived-data kind a generation's passages persist under, packed (:meth:`Passages.to_bytes`): a
#: snapshot reads that one blob rather than every row, and writes it when it had to read the rows.
PASSAGES = "passages"


@dataclass(frozen=True)
class Snapshot:
    """Everything an engine needs, read at one generation; ``derived`` persists what engines build
    over it (postings, the entity index), so the next process of this generation loads them;
    ``delta``: the change from this generation to the store's newest, when the snapshot starts from
    an earlier generation whose derived data was saved (one consistent read with it); ``guard`` (a
    store that enforces permissions itself) returns the passage ids a group set may read."""

    generation: int
    docs: Passages
    facts: dict[str, tuple[Triple, ...]]  # only passages that state facts
    config: Config
    derived: Derived | None = None
    guard: Callable[[frozenset[str], Sequence[str] | None], frozenset[str]] | None = None  # the store's own check
    delta: Delta | None = None
    vectors: StoredVectors | None = None  # of ``generation``'s passages (a delta carries its added ones' own)


class StoreError(ValueError):
    """A store that cannot be opened or used; the message names it."""


class Store(Protocol):
    """What ingestion and the engine need from a persistent store."""

    def generation(self) -> int:
        """The number of the last committed change (0: empty). Cheap: servers poll it."""

    def source(self) -> str | None:
        """The source folder (or file) this store mirrors, if it has been indexed."""

    def config_digest(self) -> str | None:
        """The digest of the configuration the stored facts were derived under."""

    def files(self) -> dict[str, str]:
        """Mirrored source files (relative path) and the digest each was indexed at."""

    def documents(self) -> dict[str, str]:
        """Document id -> the source file it came from (ids are unique across the store)."""

    def passage_count(self) -> int:
        """How many passages the store holds."""

    def embedding(self) -> Embedding | None:
        """The embedder the stored vectors are of (``None``: the store holds none)."""

    def embedded(self) -> dict[str, tuple[str, str | None]]:
        """Every passage id -> (its file, the digest of its vector or ``None``): what re-indexing
        must embed."""

    def vectors(self, digests: Iterable[str]) -> dict[str, bytes]:
        """The stored vectors with these digests (a passage re-chunked with unchanged text keeps its vector)."""

    def apply(self, changes: Changes) -> int:
        """Apply ``changes`` in one atomic commit; returns the new generation. Deleting (or re-indexing) a
        file removes every passage and fact derived from it, and logs the passages removed, so
        :meth:`delta` can tell readers what changed."""

    def snapshot(self, readers: frozenset[str] | None = None) -> Snapshot:
        """A consistent read of the newest generation. ``readers``: the groups of everyone the reading
        process serves; a store that enforces permissions itself returns only rows they may read
        (PostgreSQL requires it; the embedded file is the operator's own and is read whole)."""

    def delta(self, since: int, readers: frozenset[str] | None = None) -> Delta | None:
        """What changed from generation ``since`` to the newest, as ``readers`` see it (one consistent
        read); ``None`` when it cannot be told (``since`` is older than the change log kept, or the
        corpus configuration changed since): the reader then takes a whole :meth:`snapshot`."""

    def derived(self, generation: int, readers: frozenset[str] | None = None) -> Derived:
        """Where the derived data of ``generation``, read by ``readers``, persists (:meth:`Engine.persist`)."""

    def saving(self, generation: int, readers: frozenset[str] | None = None) -> ContextManager[bool]:
        """Whether this process is the one to save a base of ``generation`` for ``readers`` now (held
        for the block): not when another process (a replica, ``hoprag index``) is saving one, nor when a
        base of this generation or a later one is saved -- the same bytes, built and written once."""

    def wait(self, timeout: float) -> None:
        """Block until a change may have been committed, at most ``timeout`` seconds (a store that
        announces commits returns early; servers then compare :meth:`generation`)."""

    def size_bytes(self) -> int:
        """Bytes on disk (or in the database) the store takes."""

    def close(self) -> None: ...


def redact(target: str | Path) -> str:
    """A ``--store`` value fit for messages and logs: a database URL without its password."""
    parts = urlsplit(str(target))
    if not is_database(target) or parts.password is None:
        return str(target)
    return str(target).replace(f":{parts.password}@", ":***@", 1)


def is_database(target: str | Path) -> bool:
    """Whether a ``--store`` value names a PostgreSQL database (a URL) rather than a file."""
    return str(target).startswith(("postgresql://", "postgres://"))


def open_store(target: str | Path, create: bool = False) -> Store:
    """Open the store ``target`` names: a ``postgresql://`` URL is a PostgreSQL store, a file path
    an embedded SQLite store.

    ``create`` makes the store's schema when it is missing (``hoprag index``); readers (serve, ask,
    search) get a :class:`StoreError` instead, naming the store.
    """
    if is_database(target):
        from .postgres import PostgresStore

        return PostgresStore(str(target), create=create)
    from .sqlite import SqliteStore

    return SqliteStore(Path(target), create=create)
