"""The embedded store: one SQLite file (standard library ``sqlite3``), nothing to install.

WAL journaling lets readers work during a write: a writer's whole mirror step is one
``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction, and a reader's snapshot is one read transaction,
which SQLite serves from a single committed state -- never a mix of old and new rows.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..corpus import Doc
from ..passages import FORMAT as PASSAGES_FORMAT, Passages
from . import (PASSAGES, VECTORS, Changes, Config, Embedding, Snapshot, StoreError, StoredVectors, pack_vectors,
               stored_vectors, unpack_vectors)

log = logging.getLogger("hoprag.store")
#: 2: passages carry ``path`` and ``metadata`` (the document's other front-matter keys, JSON).
#: 3: passages carry their embedding (``vector``, float16) and the digest of what was embedded.
SCHEMA_VERSION = "3"
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
_UPGRADES = {"1": _UPGRADE_1 + _UPGRADE_2, "2": _UPGRADE_2}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS passages (
    id TEXT PRIMARY KEY,
    file TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    document TEXT NOT NULL, position INTEGER NOT NULL, section TEXT NOT NULL,
    title TEXT NOT NULL, text TEXT NOT NULL, groups TEXT NOT NULL, trusted INTEGER NOT NULL,
    source TEXT NOT NULL, updated TEXT, triples TEXT, facts TEXT NOT NULL,
    path TEXT NOT NULL DEFAULT '', metadata TEXT, vector BLOB, embedded TEXT);
CREATE INDEX IF NOT EXISTS passages_file ON passages(file, document, position);
CREATE TABLE IF NOT EXISTS derived (
    generation INTEGER NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (generation, kind, key));
"""
_COLUMNS = ("id, file, document, position, section, title, text, groups, trusted, source, updated, triples, facts, "
            "path, metadata, vector, embedded")
#: What a snapshot reads, in document order; the common values come back as NULL (no string built
#: per row for a passage that is its own document or states no fact).
_SNAPSHOT = ("SELECT id, NULLIF(document, id), position, section, title, text, groups, trusted, source, updated, "
             "triples, NULLIF(facts, '[]'), path, metadata FROM passages ORDER BY file, document, position")


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
                    self._db.executescript(f"BEGIN IMMEDIATE;{_UPGRADES[version]}COMMIT;")
                except sqlite3.Error:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                log.warning("%s: upgraded the store from schema %s to %s: %s", path, version, SCHEMA_VERSION,
                            "every file is read again" if version == "1" else "every passage is embedded again")
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
                gone = [*changes.delete, *changes.upsert]
                db.executemany("DELETE FROM files WHERE path = ?", [(f,) for f in gone])  # cascades to passages
                db.executemany("INSERT INTO files VALUES (?, ?)", [(f, d) for f, (d, _) in changes.upsert.items()])
                db.executemany(f"INSERT INTO passages ({_COLUMNS}) VALUES ({', '.join('?' * 17)})", rows)
                db.executemany("UPDATE passages SET vector = ?, embedded = ? WHERE id = ?",
                               [(v, d, pid) for pid, (d, v) in changes.vectors.items()])
                if changes.embedding is None:  # lexical from now on: no vector outlives its embedder
                    db.execute("UPDATE passages SET vector = NULL, embedded = NULL WHERE embedded IS NOT NULL")
                    db.execute("DELETE FROM meta WHERE key = 'embedder'")
                else:
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)",
                               (json.dumps(changes.embedding.as_json()),))
                generation = int(self._meta("generation") or 0) + 1
                db.execute("DELETE FROM derived")  # built over an older generation: never served again
                db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                    ("generation", str(generation)), ("source", changes.source),
                    ("config", json.dumps(changes.config.as_json())), ("config_digest", changes.config_digest)])
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
                found = db.execute("SELECT data FROM derived WHERE generation = ? AND kind = ? AND key = ?",
                                   (generation, PASSAGES, PASSAGES_FORMAT)).fetchone()
                packed = Passages.from_bytes(found[0]) if found else None
                rows = db.execute(_SNAPSHOT).fetchall() if packed is None else []
                embedding = Embedding.from_json(json.loads(self._meta("embedder") or "null"))
                vectors, vector_rows = None, None
                if embedding is not None:  # read in this transaction: vectors of this generation
                    blob = db.execute("SELECT data FROM derived WHERE generation = ? AND kind = ? AND key = ?",
                                      (generation, VECTORS, embedding.identity)).fetchone()
                    vectors = unpack_vectors(blob[0], embedding, len(packed[0]) if packed else len(rows)) if blob else None
                    if vectors is None:
                        vector_rows = db.execute("SELECT id, vector FROM passages WHERE vector IS NOT NULL").fetchall()
            finally:
                db.execute("COMMIT")
        derived = _Derived(self, generation)
        if packed is not None:
            return Snapshot(generation, *packed, config, derived,
                            vectors=vectors or _pack_vectors(derived, embedding, packed[0], vector_rows))
        docs, stated = [], []
        group_sets: dict[str, frozenset[str]] = {}  # most passages share a few group sets and dates:
        days: dict[str, dt.date] = {}  # share the objects
        for (pid, document, position, section, title, text, groups, trusted, source, updated, triples,
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
            if fact_json is not None:
                stated.append((pid, fact_json))
        # One JSON parse for every passage's facts, not one per passage.
        parsed = json.loads(f"[{','.join(f for _, f in stated)}]")
        facts = {pid: tuple(map(tuple, f)) for (pid, _), f in zip(stated, parsed) if f}
        passages = Passages.of(docs)
        derived.save(PASSAGES, PASSAGES_FORMAT, passages.to_bytes(facts))  # the next start reads one blob
        return Snapshot(generation, passages, facts, config, derived,
                        vectors=vectors or _pack_vectors(derived, embedding, passages, vector_rows))

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
        """Persist derived data, only while its generation is still the newest (never a stale row)."""
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR IGNORE INTO derived SELECT ?, ?, ?, ? WHERE (SELECT value FROM meta WHERE key = 'generation') = ?",
                    (generation, kind, key, blob, str(generation)))
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
