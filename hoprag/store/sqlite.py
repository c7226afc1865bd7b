"""The embedded store: one SQLite file (standard library ``sqlite3``), nothing to install.

WAL journaling lets readers work during a write: a writer's whole mirror step is one
``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction, and a reader's snapshot is one read transaction,
which SQLite serves from a single committed state -- never a mix of old and new rows.

Each passage row carries the generation that wrote it, and a commit logs the passages it removes in
``removed`` (tombstones): what changed since any generation is two indexed reads (:meth:`delta`).
Derived data is kept per generation; a generation whose packed passages are saved is a *base*, which
a snapshot starts from before applying the change since. Saving a base prunes what no reader needs:
derived data and tombstones older than the base before it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..corpus import Doc
from ..passages import FORMAT as PASSAGES_FORMAT, Passages
from ..delta import Delta
from . import (PASSAGES, VECTORS, Changes, Config, Embedding, Snapshot, StoreError, StoredVectors, pack_vectors,
               stored_vectors, unpack_vectors)

log = logging.getLogger("hoprag.store")
#: 2: passages carry ``path`` and ``metadata`` (the document's other front-matter keys, JSON).
#: 3: passages carry their embedding (``vector``, float16) and the digest of what was embedded.
#: 4: the generation that wrote each passage, and the log of removed passages.
SCHEMA_VERSION = "4"
#: How ``hoprag index`` upgrades a store of schema 1 in place: the new columns, and every file's digest
#: forgotten, so the next mirror step re-reads each file and fills them.
_UPGRADE_1 = """
ALTER TABLE passages ADD COLUMN path TEXT NOT NULL DEFAULT '';
ALTER TABLE passages ADD COLUMN metadata TEXT;
UPDATE files SET digest = '';
DELETE FROM derived;
UPDATE meta SET value = '2' WHERE key = 'schema';
"""
#: Schema 2 to 3: the vector columns, empty (the next mirror step embeds every passage).
_UPGRADE_2 = """
ALTER TABLE passages ADD COLUMN vector BLOB;
ALTER TABLE passages ADD COLUMN embedded TEXT;
DELETE FROM derived;
UPDATE meta SET value = '3' WHERE key = 'schema';
"""
#: Schema 3 to 4: the change log, starting now (a reader further back takes a whole snapshot).
_UPGRADE_3 = """
ALTER TABLE passages ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS passages_generation ON passages(generation);
CREATE TABLE IF NOT EXISTS removed (generation INTEGER NOT NULL, id TEXT NOT NULL, groups TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS removed_generation ON removed(generation);
DELETE FROM derived;
INSERT OR REPLACE INTO meta SELECT 'log_floor', value FROM meta WHERE key = 'generation';
UPDATE meta SET value = '4' WHERE key = 'schema';
"""
_UPGRADES = {"1": _UPGRADE_1 + _UPGRADE_2 + _UPGRADE_3, "2": _UPGRADE_2 + _UPGRADE_3, "3": _UPGRADE_3}
#: A schema 3 of the change log's own development (the log without the vector columns): its step to 4.
_UPGRADE_3_LOGGED = _UPGRADE_2.replace("'3'", "'4'")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS passages (
    id TEXT PRIMARY KEY,
    file TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    document TEXT NOT NULL, position INTEGER NOT NULL, section TEXT NOT NULL,
    title TEXT NOT NULL, text TEXT NOT NULL, groups TEXT NOT NULL, trusted INTEGER NOT NULL,
    source TEXT NOT NULL, updated TEXT, triples TEXT, facts TEXT NOT NULL,
    path TEXT NOT NULL DEFAULT '', metadata TEXT, vector BLOB, embedded TEXT, generation INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS passages_file ON passages(file, document, position);
CREATE INDEX IF NOT EXISTS passages_generation ON passages(generation);
CREATE TABLE IF NOT EXISTS removed (generation INTEGER NOT NULL, id TEXT NOT NULL, groups TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS removed_generation ON removed(generation);
CREATE TABLE IF NOT EXISTS derived (
    generation INTEGER NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (generation, kind, key));
"""
_COLUMNS = ("id, file, document, position, section, title, text, groups, trusted, source, updated, triples, facts, "
            "path, metadata, vector, embedded, generation")
#: What a snapshot reads, in document order; the common values come back as NULL (no string built
#: per row for a passage that is its own document or states no fact).
_READ = ("SELECT file, id, NULLIF(document, id), position, section, title, text, groups, trusted, source, updated, "
         "triples, NULLIF(facts, '[]'), path, metadata FROM passages")
_ORDER = " ORDER BY file, document, position"


def _passages(rows: list[tuple]) -> tuple[Passages, dict[str, tuple]]:
    """Passages (with the files they came from) and the facts of those that state some, from rows of
    :data:`_READ`."""
    docs, stated, files = [], [], []
    group_sets: dict[str, frozenset[str]] = {}  # most passages share a few group sets and dates:
    days: dict[str, dt.date] = {}  # share the objects
    for (file, pid, document, position, section, title, text, groups, trusted, source, updated, triples,
         fact_json, path, metadata) in rows:
        gs = group_sets.get(groups)
        if gs is None:
            gs = group_sets[groups] = frozenset(json.loads(groups))
        day = days.get(updated) if updated else None
        if updated and day is None:
            day = days[updated] = dt.date.fromisoformat(updated)
        docs.append(Doc(pid, text, gs, bool(trusted), title, source, day,
                        tuple(map(tuple, json.loads(triples))) if triples else None,
                        document or "", position, section, path, metadata or ""))
        files.append(file)
        if fact_json is not None:
            stated.append((pid, fact_json))
    # One JSON parse for every passage's facts, not one per passage.
    parsed = json.loads(f"[{','.join(f for _, f in stated)}]")
    facts = {pid: tuple(map(tuple, f)) for (pid, _), f in zip(stated, parsed) if f}
    return Passages.of(docs, files), facts


@dataclass(frozen=True)
class _Derived:
    """The derived-data cache of one generation of a store (:class:`hoprag.cache.Derived`)."""

    store: "SqliteStore"
    generation: int

    def load(self, kind: str, key: str) -> bytes | None:
        return self.store.load_derived(self.generation, kind, key)

    def save(self, kind: str, key: str, blob: bytes) -> None:
        self.store.save_derived(self.generation, kind, key, blob)


def _pack_vectors(derived: _Derived, embedding: Embedding | None, passages: Passages,
                  rows: list | None) -> StoredVectors | None:
    """A snapshot's vectors built from its rows, packed for the next start to read as one blob."""
    if embedding is None or rows is None:
        return None
    found = stored_vectors(embedding, passages, rows)
    derived.save(VECTORS, embedding.identity, pack_vectors(found))
    return found


class SqliteStore:
    """A :class:`~hoprag.store.Store` in one SQLite file."""

    def __init__(self, path: Path, create: bool = False):
        self.path = path
        if not path.exists() and not create:
            raise StoreError(f"{path}: no such store; build it with `hoprag index SRC --store {path}`")
        if path.is_dir():
            raise StoreError(f"{path}: is a directory; --store takes a file path (an SQLite file)")
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            version = self._meta("schema")
            if version is None:
                if not create and self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise StoreError(f"{path}: not a hoprag store (no schema version); pass another --store path")
                self._db.executescript(_SCHEMA)
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?), ('generation', '0')", (SCHEMA_VERSION,))
            elif version in _UPGRADES and create:
                try:
                    self._db.executescript(f"BEGIN IMMEDIATE;{self._upgrade(version)}COMMIT;")
                except sqlite3.Error:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                log.warning("%s: upgraded the store from schema %s to %s: %s", path, version, SCHEMA_VERSION,
                            "every file is read again" if version == "1" else
                            "every passage is embedded again" if version == "2" else "the change log starts now")
            elif version in _UPGRADES:
                raise StoreError(f"{path}: store schema {version} is older than this hoprag's {SCHEMA_VERSION}: run "
                                 f"`hoprag index SRC --store {path}` once to upgrade it in place")
            elif version != SCHEMA_VERSION:
                raise StoreError(f"{path}: store schema {version}, this hoprag reads {SCHEMA_VERSION}; re-index into a new store")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a usable SQLite store ({exc})") from None
        self._lock = threading.Lock()  # one connection, shared by a server's poller and loader threads

    def _meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:  # a fresh file: no meta table yet
            return None
        return row[0] if row else None

    def generation(self) -> int:
        with self._lock:
            return int(self._meta("generation") or 0)

    def source(self) -> str | None:
        with self._lock:
            return self._meta("source")

    def config_digest(self) -> str | None:
        with self._lock:
            return self._meta("config_digest")

    def files(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute("SELECT path, digest FROM files"))

    def documents(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute("SELECT DISTINCT document, file FROM passages"))

    def passage_count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM passages").fetchone()[0]

    def embedding(self) -> Embedding | None:
        with self._lock:
            return Embedding.from_json(json.loads(self._meta("embedder") or "null"))

    def embedded(self) -> dict[str, tuple[str, str | None]]:
        with self._lock:
            return {pid: (file, digest) for pid, file, digest in self._db.execute("SELECT id, file, embedded FROM passages")}

    def vectors(self, digests: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(digests))
        found: dict[str, bytes] = {}
        with self._lock:
            for i in range(0, len(wanted), 500):  # SQLite's bound on parameters per statement
                part = wanted[i:i + 500]
                found.update(self._db.execute(f"SELECT embedded, vector FROM passages WHERE vector IS NOT NULL AND "
                                              f"embedded IN ({', '.join('?' * len(part))})", part))
        return found

    def texts(self, ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """Passage id -> (title, section, text): what re-embedding an unchanged passage reads."""
        wanted = list(ids)
        found: dict[str, tuple[str, str, str]] = {}
        with self._lock:
            for i in range(0, len(wanted), 500):
                part = wanted[i:i + 500]
                found.update((pid, (title, section, text)) for pid, title, section, text in self._db.execute(
                    f"SELECT id, title, section, text FROM passages WHERE id IN ({', '.join('?' * len(part))})", part))
        return found

    def apply(self, changes: Changes) -> int:
        groups: dict[frozenset[str], str] = {}  # a folder's passages share a few group sets: each encoded once
        rows = [(p.doc.id, path, p.doc.document_id, p.doc.position, p.doc.section, p.doc.title, p.doc.text,
                 groups.get(p.doc.groups) or groups.setdefault(p.doc.groups, json.dumps(sorted(p.doc.groups))),
                 int(p.doc.trusted), p.doc.source, p.doc.updated.isoformat() if p.doc.updated else None,
                 json.dumps(p.doc.triples) if p.doc.triples is not None else None,
                 json.dumps(p.facts) if p.facts else "[]", p.doc.path, p.doc.front_matter or None,
                 p.vector, p.embedded)
                for path, (_, passages) in changes.upsert.items() for p in passages]
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                generation = int(self._meta("generation") or 0) + 1
                gone = [(f,) for f in [*changes.delete, *changes.upsert]]
                # the log: every passage this commit removes (a changed file's old ones included)
                db.executemany(f"INSERT INTO removed SELECT {generation}, id, groups FROM passages WHERE file = ?", gone)
                db.executemany("DELETE FROM files WHERE path = ?", gone)  # cascades to passages
                db.executemany("INSERT INTO files VALUES (?, ?)", [(f, d) for f, (d, _) in changes.upsert.items()])
                db.executemany(f"INSERT INTO passages ({_COLUMNS}) VALUES ({', '.join('?' * 17)}, {generation})", rows)
                same = Embedding.from_json(json.loads(self._meta("embedder") or "null")) == changes.embedding
                revectored = [(pid,) for pid in changes.vectors]
                if same:  # an unchanged passage given a vector is logged as changed: readers take its new row
                    db.executemany(f"INSERT INTO removed SELECT {generation}, id, groups FROM passages WHERE id = ?",
                                   revectored)
                db.executemany(f"UPDATE passages SET vector = ?, embedded = ?, generation = {generation} WHERE id = ?",
                               [(v, d, pid) for pid, (d, v) in changes.vectors.items()])
                if changes.embedding is None:  # lexical from now on: no vector outlives its embedder
                    db.execute("UPDATE passages SET vector = NULL, embedded = NULL WHERE embedded IS NOT NULL")
                    db.execute("DELETE FROM meta WHERE key = 'embedder'")
                else:
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)",
                               (json.dumps(changes.embedding.as_json()),))
                meta = [("generation", str(generation)), ("source", changes.source),
                        ("config", json.dumps(changes.config.as_json())), ("config_digest", changes.config_digest)]
                # what every reader derives from changed (the configuration, or the embedder of every vector)
                if self._meta("config_digest") != changes.config_digest or not same:
                    meta.append(("config_generation", str(generation)))
                db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return generation

    def snapshot(self, readers: frozenset[str] | None = None) -> Snapshot:
        with self._lock:
            db = self._db
            db.execute("BEGIN")  # one read transaction: every row below is of one committed generation
            try:
                generation = int(self._meta("generation") or 0)
                config = Config.from_json(json.loads(self._meta("config") or "{}"))
                embedding = Embedding.from_json(json.loads(self._meta("embedder") or "null"))
                found = db.execute("SELECT generation, data FROM derived WHERE kind = ? AND key = ? AND generation <= ? "
                                   "ORDER BY generation DESC LIMIT 1", (PASSAGES, PASSAGES_FORMAT, generation)).fetchone()
                base = found[0] if found else generation
                packed = Passages.from_bytes(found[1]) if found else None
                # the base's own vectors: a base saved without them (served lexically) is not started from
                vectors = self._stored_vectors(base, embedding, len(packed[0])) if packed is not None else None
                usable = packed is not None and (embedding is None or vectors is not None or base == generation)
                delta = self._delta(base, embedding) if usable and base < generation else None
                if usable and (base == generation or delta is not None):
                    vector_rows = self._vector_rows() if embedding is not None and vectors is None else None
                    derived = _Derived(self, base)
                    assert packed is not None
                    return Snapshot(base, *packed, config, derived, delta=delta,
                                    vectors=vectors or _pack_vectors(derived, embedding, packed[0], vector_rows))
                rows = db.execute(_READ + _ORDER).fetchall()
                vectors = self._stored_vectors(generation, embedding, len(rows))
                vector_rows = self._vector_rows() if embedding is not None and vectors is None else None
            finally:
                db.execute("COMMIT")
        derived = _Derived(self, generation)
        passages, facts = _passages(rows)
        derived.save(PASSAGES, PASSAGES_FORMAT, passages.to_bytes(facts))  # the next start reads one blob
        return Snapshot(generation, passages, facts, config, derived,
                        vectors=vectors or _pack_vectors(derived, embedding, passages, vector_rows))

    def _stored_vectors(self, generation: int, embedding: Embedding | None, size: int) -> StoredVectors | None:
        """The packed vectors of ``generation`` (``size`` passages), inside the caller's read transaction."""
        if embedding is None:
            return None
        blob = self._db.execute("SELECT data FROM derived WHERE generation = ? AND kind = ? AND key = ?",
                                (generation, VECTORS, embedding.identity)).fetchone()
        return unpack_vectors(blob[0], embedding, size) if blob else None

    def _vector_rows(self) -> list[tuple[str, bytes]]:
        return self._db.execute("SELECT id, vector FROM passages WHERE vector IS NOT NULL").fetchall()

    def _upgrade(self, version: str) -> str:
        """The script from schema ``version`` to this one (a schema 3 that has the change log but no vectors
        was written by the change log's development branch: it gains the vector columns instead)."""
        if version == "3" and self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'removed'").fetchone():
            return _UPGRADE_3_LOGGED
        return _UPGRADES[version]

    def delta(self, since: int, readers: frozenset[str] | None = None) -> Delta | None:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                return self._delta(since, Embedding.from_json(json.loads(self._meta("embedder") or "null")))
            finally:
                self._db.execute("COMMIT")

    def _delta(self, since: int, embedding: Embedding | None) -> Delta | None:
        """:meth:`delta`, inside the caller's read transaction (``embedding``: the store's, whose vectors
        the added passages carry)."""
        generation = int(self._meta("generation") or 0)
        if since < int(self._meta("log_floor") or 0) or since < int(self._meta("config_generation") or 0) or since > generation:
            return None
        db = self._db
        removed = frozenset(r[0] for r in db.execute("SELECT id FROM removed WHERE generation > ?", (since,)))
        # (by the generation index: the order index would walk every passage)
        passages, facts = _passages(db.execute(_READ + " INDEXED BY passages_generation WHERE generation > ?" + _ORDER,
                                               (since,)).fetchall())
        vectors: tuple[bytes | None, ...] = ()
        if embedding is not None:  # the added passages' vectors, as a fresh snapshot would read them
            found = dict(db.execute("SELECT id, vector FROM passages INDEXED BY passages_generation WHERE generation > ? "
                                    "AND vector IS NOT NULL", (since,)))
            vectors = tuple(found.get(pid) for pid in passages.ids)
        return Delta(since, generation, removed, tuple(passages), tuple(map(passages.file, range(len(passages)))), facts,
                     vectors)

    def derived(self, generation: int, readers: frozenset[str] | None = None) -> "_Derived":
        return _Derived(self, generation)

    @contextmanager
    def saving(self, generation: int, readers: frozenset[str] | None = None) -> Iterator[bool]:
        """No base of ``generation`` or later is saved yet: ``hoprag index`` saves the one after its commit,
        and a server asks only after :data:`~hoprag.reload.SAVE_GRACE` (two saving at once write the same
        rows; ``INSERT OR IGNORE`` keeps the first)."""
        try:
            with self._lock:
                saved = self._db.execute("SELECT 1 FROM derived WHERE kind = ? AND generation >= ? LIMIT 1",
                                         (PASSAGES, generation)).fetchone()
        except sqlite3.Error as exc:
            log.info("%s: derived data unreadable: %s", self.path, exc)
            saved = None
        yield saved is None

    def load_derived(self, generation: int, kind: str, key: str) -> bytes | None:
        try:
            with self._lock:
                row = self._db.execute("SELECT data FROM derived WHERE generation = ? AND kind = ? AND key = ?",
                                       (generation, kind, key)).fetchone()
        except sqlite3.Error as exc:  # a cache that cannot be read is a cache miss
            log.info("%s: derived data unreadable: %s", self.path, exc)
            return None
        return row[0] if row else None

    def save_derived(self, generation: int, kind: str, key: str, blob: bytes) -> None:
        """Persist derived data of the newest generation or of a base (a generation whose packed
        passages are saved: snapshots start from it); saving a new base prunes what no reader needs
        any more -- derived data and tombstones older than the previous base."""
        try:
            with self._lock:
                db = self._db
                db.execute("BEGIN IMMEDIATE")
                try:
                    saved = db.execute(
                        "INSERT OR IGNORE INTO derived SELECT ?, ?, ?, ? WHERE (SELECT value FROM meta WHERE key = "
                        "'generation') = ? OR EXISTS (SELECT 1 FROM derived WHERE generation = ? AND kind = ?)",
                        (generation, kind, key, blob, str(generation), generation, PASSAGES)).rowcount
                    if saved and kind == PASSAGES:
                        bases = [g for (g,) in db.execute("SELECT generation FROM derived WHERE kind = ? ORDER BY "
                                                          "generation DESC LIMIT 2", (PASSAGES,))]
                        if len(bases) == 2:
                            db.execute("DELETE FROM derived WHERE generation < ?", (bases[1],))
                            db.execute("DELETE FROM removed WHERE generation <= ?", (bases[1],))
                            db.execute("INSERT OR REPLACE INTO meta SELECT 'log_floor', max(?, coalesce((SELECT CAST("
                                       "value AS INTEGER) FROM meta WHERE key = 'log_floor'), 0))", (bases[1],))
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:  # a read-only store still serves; it just builds again each start
            log.info("%s: derived data not saved: %s", self.path, exc)

    def wait(self, timeout: float) -> None:
        """SQLite announces nothing: a server just polls the generation every ``timeout`` seconds."""
        time.sleep(timeout)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def close(self) -> None:
        with self._lock:
            self._db.close()
