"""The shared store: one PostgreSQL database that many ``hoprag serve`` replicas read.

Permissions are enforced twice. hoprag filters every caller's view itself, and every read of
passages a server makes runs in a transaction that drops to the :data:`READER` role and sets
``hoprag.groups`` from the verified caller (never from a tool argument); row-level security on
that role returns only rows sharing one of those groups, so a bug in hoprag's filter still cannot
hand a caller a row the database would not. Tables ``FORCE`` row-level security, so not even
their owner reads around a policy by accident; the owner needs no superuser rights, only
``CREATEROLE`` the first time (to create :data:`READER` and join it).

A commit bumps the generation, logs the passages it removes (``removed``, under the same
row-level security as the passages: a replica sees only the removals of rows it could read) and
notifies :data:`CHANNEL` in the same transaction; servers ``LISTEN`` (and poll as a fallback) and
apply what changed since their generation (:meth:`PostgresStore.delta`), so a change reaches every
replica as soon as it is applied.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from ..corpus import Doc
from ..passages import FORMAT as PASSAGES_FORMAT, Passages
from ..delta import Delta
from . import (PASSAGES, VECTORS, Changes, Config, Embedding, Snapshot, StoreError, StoredVectors, pack_vectors,
               redact, stored_vectors, unpack_vectors)

log = logging.getLogger("hoprag.store")
#: 2: passages carry ``path`` and ``metadata`` (the document's other front-matter keys; ``json``, which
#: keeps the author's key order, unlike ``jsonb``).
#: 3: passages carry their embedding (``vector``, float16 bytes, under the same row-level security)
#: and the digest of what was embedded.
#: 4: the generation that wrote each passage, and the log of removed passages.
SCHEMA_VERSION = "4"
#: How ``hoprag index`` (the owner) upgrades a store of schema 1 in place: the new columns, and every
#: file's digest forgotten, so the next mirror step re-reads each file and fills them.
_UPGRADE_1 = """
ALTER TABLE hoprag.passages ADD COLUMN path text NOT NULL DEFAULT '', ADD COLUMN metadata json;
UPDATE hoprag.files SET digest = '';
DELETE FROM hoprag.derived;
UPDATE hoprag.meta SET value = '2' WHERE key = 'schema';
"""
#: Schema 2 to 3: the vector columns, empty (the next mirror step embeds every passage).
_UPGRADE_2 = """
ALTER TABLE hoprag.passages ADD COLUMN vector bytea, ADD COLUMN embedded text;
DELETE FROM hoprag.derived;
UPDATE hoprag.meta SET value = '3' WHERE key = 'schema';
"""
#: A schema 3 of the change log's own development (the log without the vector columns): its step to 4.
_UPGRADE_3_LOGGED = _UPGRADE_2.replace("'3'", "'4'")


def _upgrade_3(owner: str) -> str:
    """Schema 3 to 4: the change log, starting now (a reader further back takes a whole snapshot)."""
    return f"""
ALTER TABLE hoprag.passages ADD COLUMN generation bigint NOT NULL DEFAULT 0;
CREATE INDEX passages_generation ON hoprag.passages (generation);
{_REMOVED.format(owner=owner, reader=READER)}
DELETE FROM hoprag.derived;
INSERT INTO hoprag.meta SELECT 'log_floor', value FROM hoprag.meta WHERE key = 'generation';
UPDATE hoprag.meta SET value = '4' WHERE key = 'schema';
"""


#: The log of removed passages, readable as the passages are (what ``{owner}`` and ``{reader}`` name).
_REMOVED = """
CREATE TABLE hoprag.removed (generation bigint NOT NULL, id text COLLATE "C" NOT NULL, groups text[] NOT NULL);
CREATE INDEX removed_generation ON hoprag.removed (generation);
ALTER TABLE hoprag.removed ENABLE ROW LEVEL SECURITY;
ALTER TABLE hoprag.removed FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_writes ON hoprag.removed TO "{owner}" USING (true) WITH CHECK (true);
CREATE POLICY caller_reads ON hoprag.removed FOR SELECT TO {reader} USING (groups && (SELECT hoprag.caller_groups()));
GRANT SELECT ON hoprag.removed TO {reader};
"""
#: The schemas ``hoprag index`` upgrades in place.
_OLDER = ("1", "2", "3")
#: The role every passage read runs as; the store's owner creates it (``CREATEROLE``) and joins it.
READER = "hoprag_reader"
#: The notification channel a commit announces its generation on.
CHANNEL = "hoprag_generation"
CONNECT_SECONDS = 5
T = TypeVar("T")

_COLUMNS = ("id, file, document, position, section, title, text, groups, trusted, source, updated, triples, facts, "
            "path, metadata, vector, embedded")
#: What a snapshot reads of each passage, in the store's order (metadata as its text: the author's key
#: order; its vector apart, packed once per generation).
_READ = ("SELECT id, file, document, position, section, title, text, groups, trusted, source, updated, triples, "
         "facts, path, metadata::text FROM hoprag.passages")
_ORDER = " ORDER BY file, document, position"


def _schema(owner: str) -> str:
    """Tables, the caller-groups function and the row-level security policies (owner ``owner``)."""
    return f"""
CREATE SCHEMA hoprag;
CREATE TABLE hoprag.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE hoprag.files (path text COLLATE "C" PRIMARY KEY, digest text NOT NULL);
CREATE TABLE hoprag.passages (
    id text COLLATE "C" PRIMARY KEY,
    file text COLLATE "C" NOT NULL REFERENCES hoprag.files(path) ON DELETE CASCADE,
    document text COLLATE "C" NOT NULL, position integer NOT NULL, section text NOT NULL,
    title text NOT NULL, text text NOT NULL, groups text[] NOT NULL, trusted boolean NOT NULL,
    source text NOT NULL, updated date, triples jsonb, facts jsonb NOT NULL,
    path text NOT NULL DEFAULT '', metadata json, vector bytea, embedded text, generation bigint NOT NULL DEFAULT 0);
CREATE INDEX passages_order ON hoprag.passages (file, document, position);
CREATE INDEX passages_generation ON hoprag.passages (generation);
CREATE TABLE hoprag.derived (
    generation bigint NOT NULL, readers text[] NOT NULL, kind text NOT NULL, key text NOT NULL,
    data bytea NOT NULL, PRIMARY KEY (generation, readers, kind, key));
-- The caller's groups, as the server set them for this transaction (none set: no groups, no rows).
CREATE FUNCTION hoprag.caller_groups() RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT coalesce(array(SELECT jsonb_array_elements_text(
        nullif(current_setting('hoprag.groups', true), '')::jsonb)), '{{}}'::text[]) $$;
ALTER TABLE hoprag.passages ENABLE ROW LEVEL SECURITY;
ALTER TABLE hoprag.passages FORCE ROW LEVEL SECURITY;
ALTER TABLE hoprag.derived ENABLE ROW LEVEL SECURITY;
ALTER TABLE hoprag.derived FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_writes ON hoprag.passages TO "{owner}" USING (true) WITH CHECK (true);
CREATE POLICY owner_writes ON hoprag.derived TO "{owner}" USING (true) WITH CHECK (true);
CREATE POLICY caller_reads ON hoprag.passages FOR SELECT TO {READER}
    USING (groups && (SELECT hoprag.caller_groups()));
-- Derived data was built over the rows some set of readers may read: visible only to that set.
CREATE POLICY caller_reads ON hoprag.derived FOR SELECT TO {READER}
    USING (readers <@ (SELECT hoprag.caller_groups()));
GRANT USAGE ON SCHEMA hoprag TO {READER};
GRANT SELECT ON hoprag.meta, hoprag.passages, hoprag.derived TO {READER};
GRANT EXECUTE ON FUNCTION hoprag.caller_groups() TO {READER};
{_REMOVED.format(owner=owner, reader=READER)}
INSERT INTO hoprag.meta VALUES ('schema', '{SCHEMA_VERSION}'), ('generation', '0');
"""


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _passages(rows: list[tuple]) -> tuple[Passages, dict[str, tuple]]:
    """Passages (with the files they came from) and the facts of those that state some, from rows of
    :data:`_READ`."""
    docs, facts, files = [], {}, []
    group_sets: dict[tuple[str, ...], frozenset[str]] = {}  # most passages share a few group sets
    for (pid, file, document, position, section, title, text, groups, trusted, source, updated, triples,
         fact_rows, path, metadata) in rows:
        key = tuple(groups)
        gs = group_sets.get(key)
        if gs is None:
            gs = group_sets[key] = frozenset(groups)
        docs.append(Doc(pid, text, gs, trusted, title, source, updated,
                        tuple(map(tuple, triples)) if triples is not None else None,
                        "" if document == pid else document, position, section, path, metadata or ""))
        files.append(file)
        if fact_rows:
            facts[pid] = tuple(map(tuple, fact_rows))
    return Passages.of(docs, files), facts


@dataclass(frozen=True)
class _Derived:
    """Derived data of one generation, built over what ``readers`` may read (:class:`hoprag.cache.Derived`)."""

    store: "PostgresStore"
    generation: int
    readers: tuple[str, ...]

    def load(self, kind: str, key: str) -> bytes | None:
        return self.store.load_derived(self.generation, self.readers, kind, key)

    def save(self, kind: str, key: str, blob: bytes) -> None:
        self.store.save_derived(self.generation, self.readers, kind, key, blob)


class PostgresStore:
    """A :class:`~hoprag.store.Store` in a PostgreSQL database (schema ``hoprag``)."""

    def __init__(self, url: str, create: bool = False):
        try:
            import psycopg
        except ImportError:
            raise StoreError(f"{redact(url)}: a PostgreSQL store needs the driver: pip install 'hoprag[postgres]'") from None

        self._pg = psycopg
        self.url, self.name = url, redact(url)
        self._lock = threading.Lock()  # one connection, shared by a server's request, poller and loader threads
        self._conn: Any = None
        self._listener: Any = None
        self._run(lambda db: self._prepare(db, create))

    # -- connections -------------------------------------------------------------------------

    def _connect(self) -> Any:
        try:
            return self._pg.connect(self.url, autocommit=True, connect_timeout=CONNECT_SECONDS,
                                    application_name="hoprag")
        except self._pg.Error as exc:
            raise StoreError(f"{self.name}: cannot connect to PostgreSQL: {_first_line(exc)}") from None

    def _run(self, work: Callable[[Any], T]) -> T:
        """``work`` on the shared connection, reconnecting after a lost one (a server restart);
        a database error becomes one :class:`StoreError` line naming the store."""
        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._conn = self._connect()
            try:
                return work(self._conn)
            except self._pg.errors.InsufficientPrivilege as exc:
                raise StoreError(f"{self.name}: permission denied: {_first_line(exc)} (see docs/stores.md, "
                                 "Roles and grants)") from None
            except self._pg.Error as exc:
                if self._conn.broken:
                    self._conn.close()
                raise StoreError(f"{self.name}: PostgreSQL: {_first_line(exc)}") from None

    def _prepare(self, db: Any, create: bool) -> None:
        """Check the schema; with ``create``, make it (and the reader role) when it is missing."""
        exists = db.execute("SELECT to_regclass('hoprag.meta') IS NOT NULL").fetchone()[0]
        version = self._meta(db, "schema") if exists else None
        if version in _OLDER and create:
            owner = db.execute("SELECT current_user").fetchone()[0]
            logged = version == "3" and db.execute("SELECT to_regclass('hoprag.removed') IS NOT NULL").fetchone()[0]
            with db.transaction():
                if version == "1":
                    db.execute(_UPGRADE_1)
                if version in ("1", "2"):
                    db.execute(_UPGRADE_2)
                db.execute(_UPGRADE_3_LOGGED if logged else _upgrade_3(owner))
            log.warning("%s: upgraded the store from schema %s to %s: %s", self.name, version, SCHEMA_VERSION,
                        "every file is read again" if version == "1" else
                        "every passage is embedded again" if version == "2" or logged else "the change log starts now")
            return
        if version in _OLDER:
            raise StoreError(f"{self.name}: store schema {version} is older than this hoprag's {SCHEMA_VERSION}: run "
                             f"`hoprag index SRC --store ...` once (as the store's owner) to upgrade it in place")
        if version:
            if version != SCHEMA_VERSION:
                raise StoreError(f"{self.name}: store schema {version}, this hoprag reads {SCHEMA_VERSION}; "
                                 "re-index into a new database")
            return
        if not create:
            raise StoreError(f"{self.name}: no hoprag store in this database; build it with "
                             f"`hoprag index SRC --store {self.name}`")
        owner = db.execute("SELECT current_user").fetchone()[0]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$-]*", owner):
            raise StoreError(f"{self.name}: role name {owner!r} is not a plain identifier; connect as another role")
        with db.transaction():
            if not db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER,)).fetchone():
                try:
                    db.execute(f"CREATE ROLE {READER} NOLOGIN")
                except self._pg.errors.InsufficientPrivilege:
                    raise StoreError(
                        f"{self.name}: role {owner} cannot create role {READER}: grant it CREATEROLE once, or "
                        f"as an administrator run CREATE ROLE {READER} NOLOGIN; GRANT {READER} TO {owner};") from None
            if not db.execute("SELECT pg_has_role(current_user, %s, 'MEMBER')", (READER,)).fetchone()[0]:
                try:
                    db.execute(f'GRANT {READER} TO "{owner}"')
                except self._pg.errors.InsufficientPrivilege:
                    raise StoreError(f"{self.name}: role {owner} cannot join role {READER}: as an administrator "
                                     f"run GRANT {READER} TO {owner};") from None
            db.execute(_schema(owner))

    def _reading(self, db: Any, groups: frozenset[str]) -> None:
        """Start a read as :data:`READER` for ``groups``: what row-level security filters on."""
        db.execute(f"SET LOCAL ROLE {READER}")
        db.execute("SELECT set_config('hoprag.groups', %s, true)", (json.dumps(sorted(groups)),))

    def _meta(self, db: Any, key: str) -> str | None:
        row = db.execute("SELECT value FROM hoprag.meta WHERE key = %s", (key,)).fetchone()
        return row[0] if row else None

    # -- the Store protocol ------------------------------------------------------------------

    def generation(self) -> int:
        return int(self._run(lambda db: self._meta(db, "generation")) or 0)

    def source(self) -> str | None:
        return self._run(lambda db: self._meta(db, "source"))

    def config_digest(self) -> str | None:
        return self._run(lambda db: self._meta(db, "config_digest"))

    def files(self) -> dict[str, str]:
        return self._run(lambda db: dict(db.execute("SELECT path, digest FROM hoprag.files").fetchall()))

    def documents(self) -> dict[str, str]:
        return self._run(lambda db: dict(db.execute("SELECT DISTINCT document, file FROM hoprag.passages").fetchall()))

    def passage_count(self) -> int:
        return self._run(lambda db: db.execute("SELECT count(*) FROM hoprag.passages").fetchone()[0])

    def embedding(self) -> Embedding | None:
        return Embedding.from_json(json.loads(self._run(lambda db: self._meta(db, "embedder")) or "null"))

    def embedded(self) -> dict[str, tuple[str, str | None]]:
        return self._run(lambda db: {pid: (file, digest) for pid, file, digest in
                                     db.execute("SELECT id, file, embedded FROM hoprag.passages").fetchall()})

    def vectors(self, digests: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(digests))
        return self._run(lambda db: {d: bytes(v) for d, v in db.execute(
            "SELECT embedded, vector FROM hoprag.passages WHERE vector IS NOT NULL AND embedded = ANY(%s)",
            (wanted,), binary=True).fetchall()})

    def texts(self, ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """Passage id -> (title, section, text): what re-embedding an unchanged passage reads."""
        return self._run(lambda db: {pid: (title, section, text) for pid, title, section, text in db.execute(
            "SELECT id, title, section, text FROM hoprag.passages WHERE id = ANY(%s)", (list(ids),)).fetchall()})

    def apply(self, changes: Changes) -> int:
        from psycopg.types.json import Jsonb

        rows = [(p.doc.id, path, p.doc.document_id, p.doc.position, p.doc.section, p.doc.title, p.doc.text,
                 sorted(p.doc.groups), p.doc.trusted, p.doc.source, p.doc.updated,
                 Jsonb(p.doc.triples) if p.doc.triples is not None else None, Jsonb(p.facts),
                 p.doc.path, p.doc.front_matter or None, p.vector, p.embedded)
                for path, (_, passages) in changes.upsert.items() for p in passages]

        def commit(db: Any) -> int:
            with db.transaction():
                # one writer at a time: the generation row is the lock
                current = int(db.execute("SELECT value FROM hoprag.meta WHERE key = 'generation' FOR UPDATE").fetchone()[0])
                generation = current + 1
                gone = [*changes.delete, *changes.upsert]
                # the log: every passage this commit removes (a changed file's old ones included)
                db.execute("INSERT INTO hoprag.removed SELECT %s, id, groups FROM hoprag.passages WHERE file = ANY(%s)",
                           (generation, gone))
                db.execute("DELETE FROM hoprag.files WHERE path = ANY(%s)", (gone,))  # cascades to passages
                with db.cursor() as cur:  # pipelined (COPY is refused under row-level security)
                    cur.executemany("INSERT INTO hoprag.files VALUES (%s, %s)",
                                    [(f, d) for f, (d, _) in changes.upsert.items()])
                    cur.executemany(f"INSERT INTO hoprag.passages ({_COLUMNS}, generation) VALUES "
                                    f"({', '.join(['%s'] * 14)}, %s::json, %s, %s, {generation})", rows)
                    same = Embedding.from_json(json.loads(self._meta(db, "embedder") or "null")) == changes.embedding
                    if same:  # an unchanged passage given a vector is logged as changed: readers take its new row
                        cur.executemany("INSERT INTO hoprag.removed SELECT %s, id, groups FROM hoprag.passages "
                                        "WHERE id = %s", [(generation, pid) for pid in changes.vectors])
                    cur.executemany("UPDATE hoprag.passages SET vector = %s, embedded = %s, generation = %s WHERE id = %s",
                                    [(v, d, generation, pid) for pid, (d, v) in changes.vectors.items()])
                if changes.embedding is None:  # lexical from now on: no vector outlives its embedder
                    db.execute("UPDATE hoprag.passages SET vector = NULL, embedded = NULL WHERE embedded IS NOT NULL")
                    db.execute("DELETE FROM hoprag.meta WHERE key = 'embedder'")
                else:
                    db.execute("INSERT INTO hoprag.meta VALUES ('embedder', %s) ON CONFLICT (key) DO UPDATE SET "
                               "value = EXCLUDED.value", (json.dumps(changes.embedding.as_json()),))
                meta = [("generation", str(generation)), ("source", changes.source),
                        ("config", json.dumps(changes.config.as_json())), ("config_digest", changes.config_digest)]
                # what every reader derives from changed (the configuration, or the embedder of every vector)
                if self._meta(db, "config_digest") != changes.config_digest or not same:
                    meta.append(("config_generation", str(generation)))
                with db.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO hoprag.meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                        meta)
                db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(generation)))  # delivered at commit
            return generation

        return self._run(commit)

    def _who(self, readers: frozenset[str] | None) -> frozenset[str]:
        if readers is None:
            raise StoreError(f"{self.name}: a PostgreSQL store is read for the principals of an access file "
                             "(pass --access FILE)")
        return frozenset(readers)

    def snapshot(self, readers: frozenset[str] | None = None) -> Snapshot:
        who = self._who(readers)

        def read(db: Any) -> tuple[int, Config, Any, list[tuple], Delta | None, Embedding | None,
                                   StoredVectors | None, list | None]:
            with db.transaction():
                db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")  # one generation throughout
                self._reading(db, who)
                generation = int(self._meta(db, "generation") or 0)
                config = Config.from_json(json.loads(self._meta(db, "config") or "{}"))
                embedding = Embedding.from_json(json.loads(self._meta(db, "embedder") or "null"))
                found = db.execute("SELECT generation, data FROM hoprag.derived WHERE readers = %s AND kind = %s AND "
                                   "key = %s AND generation <= %s ORDER BY generation DESC LIMIT 1",
                                   (sorted(who), PASSAGES, PASSAGES_FORMAT, generation), binary=True).fetchone()
                base = found[0] if found else generation
                packed = Passages.from_bytes(bytes(found[1])) if found else None
                # the base's own vectors: a base saved without them (served lexically) is not started from
                vectors = self._stored_vectors(db, who, base, embedding, len(packed[0])) if packed else None
                usable = packed is not None and (embedding is None or vectors is not None or base == generation)
                delta = self._delta(db, base, embedding) if usable and base < generation else None
                if usable and (base == generation or delta is not None):
                    return base, config, packed, [], delta, embedding, vectors, self._vector_rows(db, embedding, vectors)
                rows = db.execute(_READ + _ORDER).fetchall()
                vectors = self._stored_vectors(db, who, generation, embedding, len(rows))
                return generation, config, None, rows, None, embedding, vectors, self._vector_rows(db, embedding, vectors)

        generation, config, packed, rows, delta, embedding, vectors, vector_rows = self._run(read)
        cache = _Derived(self, generation, tuple(sorted(who)))

        def matrix(passages: Passages) -> StoredVectors | None:
            if vectors is not None or embedding is None or vector_rows is None:
                return vectors
            built = stored_vectors(embedding, passages, vector_rows)
            cache.save(VECTORS, embedding.identity, pack_vectors(built))  # the next replica start reads one blob
            return built

        if packed is not None:
            return Snapshot(generation, *packed, config, cache, self.readable, delta, matrix(packed[0]))
        passages, facts = _passages(rows)
        cache.save(PASSAGES, PASSAGES_FORMAT, passages.to_bytes(facts))  # the next replica start reads one blob
        return Snapshot(generation, passages, facts, config, cache, self.readable, vectors=matrix(passages))

    @staticmethod
    def _stored_vectors(db: Any, who: frozenset[str], generation: int, embedding: Embedding | None,
                        size: int) -> StoredVectors | None:
        """The packed vectors of ``generation`` (``size`` passages) for ``who``, in the caller's transaction."""
        if embedding is None:
            return None
        blob = db.execute("SELECT data FROM hoprag.derived WHERE generation = %s AND readers = %s AND kind = %s AND "
                          "key = %s", (generation, sorted(who), VECTORS, embedding.identity), binary=True).fetchone()
        return unpack_vectors(bytes(blob[0]), embedding, size) if blob else None

    @staticmethod
    def _vector_rows(db: Any, embedding: Embedding | None, packed: StoredVectors | None) -> list | None:
        """Every readable passage's vector, when none are packed (under row-level security: the readers' only)."""
        if embedding is None or packed is not None:
            return None
        return [(pid, bytes(v)) for pid, v in db.execute(
            "SELECT id, vector FROM hoprag.passages WHERE vector IS NOT NULL", binary=True).fetchall()]

    def delta(self, since: int, readers: frozenset[str] | None = None) -> Delta | None:
        who = self._who(readers)

        def read(db: Any) -> Delta | None:
            with db.transaction():
                db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                self._reading(db, who)
                return self._delta(db, since, Embedding.from_json(json.loads(self._meta(db, "embedder") or "null")))

        return self._run(read)

    def _delta(self, db: Any, since: int, embedding: Embedding | None) -> Delta | None:
        """:meth:`delta`, inside the caller's read transaction (as the reader role, for its groups;
        ``embedding``: the store's, whose vectors the added passages carry)."""
        generation = int(self._meta(db, "generation") or 0)
        if (since < int(self._meta(db, "log_floor") or 0) or since < int(self._meta(db, "config_generation") or 0)
                or since > generation):
            return None
        removed = frozenset(r[0] for r in db.execute("SELECT id FROM hoprag.removed WHERE generation > %s", (since,)))
        passages, facts = _passages(db.execute(_READ + " WHERE generation > %s" + _ORDER, (since,)).fetchall())
        vectors: tuple[bytes | None, ...] = ()
        if embedding is not None:  # the added passages' vectors, as a fresh snapshot would read them
            found = {pid: bytes(v) for pid, v in db.execute(
                "SELECT id, vector FROM hoprag.passages WHERE generation > %s AND vector IS NOT NULL", (since,),
                binary=True)}
            vectors = tuple(found.get(pid) for pid in passages.ids)
        return Delta(since, generation, removed, tuple(passages), tuple(map(passages.file, range(len(passages)))), facts,
                     vectors)

    def derived(self, generation: int, readers: frozenset[str] | None = None) -> "_Derived":
        return _Derived(self, generation, tuple(sorted(self._who(readers))))

    def readable(self, groups: frozenset[str], among: Sequence[str] | None = None) -> frozenset[str]:
        """The passage ids row-level security returns to ``groups`` (of ``among`` only, when given): the
        engine's guard. Failing, it says so to the caller without naming the database (the log has
        the detail)."""
        def read(db: Any) -> frozenset[str]:
            with db.transaction():
                self._reading(db, frozenset(groups))
                found = (db.execute("SELECT id FROM hoprag.passages") if among is None else
                         db.execute("SELECT id FROM hoprag.passages WHERE id = ANY(%s)", (list(among),)))
                return frozenset(r for (r,) in found.fetchall())  # one fetch: iterating a cursor costs a call per row

        try:
            return self._run(read)
        except StoreError as exc:
            log.warning("permission check unavailable: %s", exc)
            raise StoreError("the document store is unavailable right now; retry shortly") from None

    def wait(self, timeout: float) -> None:
        """Block until a commit is announced or ``timeout`` passes (a lost connection just sleeps:
        the caller's poll of :meth:`generation` catches what a notification missed)."""
        try:
            if self._listener is None or self._listener.closed or self._listener.broken:
                self._listener = None
                self._listener = self._pg.connect(self.url, autocommit=True, connect_timeout=CONNECT_SECONDS,
                                                  application_name="hoprag-listen")
                self._listener.execute(f"LISTEN {CHANNEL}")
            for _ in self._listener.notifies(timeout=timeout, stop_after=1):
                pass
        except self._pg.Error as exc:
            log.info("%s: not listening (%s); polling", self.name, _first_line(exc))
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            time.sleep(timeout)

    @contextmanager
    def saving(self, generation: int, readers: frozenset[str] | None = None) -> Iterator[bool]:
        """A session advisory lock per set of readers, on a connection of its own held for the block: two
        replicas told of the same commit would otherwise both build and write the same base (each a second
        of CPU, and the server's compression of every blob), and ``hoprag index`` a third time."""
        conn, mine = None, False
        try:
            who = sorted(self._who(readers))
            conn = self._connect()
            mine = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (" ".join(["hoprag.derived", *who]),)
                                ).fetchone()[0] and not conn.execute(
                "SELECT 1 FROM hoprag.derived WHERE readers = %s AND kind = %s AND generation >= %s LIMIT 1",
                (who, PASSAGES, generation)).fetchone()
        except StoreError as exc:  # a cache that cannot be saved is rebuilt by the next start
            log.info("derived data not saved: %s", exc)
        except self._pg.Error as exc:
            log.info("%s: derived data not saved: %s", self.name, _first_line(exc))
        try:
            yield bool(mine)
        finally:
            if conn is not None:
                conn.close()  # the lock goes with the session

    def load_derived(self, generation: int, readers: tuple[str, ...], kind: str, key: str) -> bytes | None:
        def read(db: Any) -> bytes | None:
            with db.transaction():
                self._reading(db, frozenset(readers))
                row = db.execute("SELECT data FROM hoprag.derived WHERE generation = %s AND readers = %s "
                                 "AND kind = %s AND key = %s", (generation, list(readers), kind, key),
                                 binary=True).fetchone()
            return bytes(row[0]) if row else None

        try:
            return self._run(read)
        except StoreError as exc:  # a cache that cannot be read is a cache miss
            log.info("derived data unreadable: %s", exc)
            return None

    def save_derived(self, generation: int, readers: tuple[str, ...], kind: str, key: str, blob: bytes) -> None:
        """Persist derived data of the newest generation or of a base (a generation whose packed
        passages are saved for these readers: snapshots start from it); saving a new base prunes what
        no reader needs any more -- derived data and tombstones older than the previous base."""
        def save(db: Any) -> None:
            with db.transaction():
                saved = db.execute(
                    "INSERT INTO hoprag.derived SELECT %s, %s, %s, %s, %b WHERE (SELECT value FROM hoprag.meta WHERE "
                    "key = 'generation') = %s OR EXISTS (SELECT 1 FROM hoprag.derived WHERE generation = %s AND "
                    "readers = %s AND kind = %s) ON CONFLICT DO NOTHING",
                    (generation, list(readers), kind, key, blob, str(generation), generation, list(readers),
                     PASSAGES)).rowcount
                if not saved or kind != PASSAGES:
                    return
                bases = [g for (g,) in db.execute("SELECT generation FROM hoprag.derived WHERE readers = %s AND kind = %s "
                                                  "ORDER BY generation DESC LIMIT 2", (list(readers), PASSAGES))]
                if len(bases) == 2:
                    db.execute("DELETE FROM hoprag.derived WHERE generation < %s", (bases[1],))
                    db.execute("DELETE FROM hoprag.removed WHERE generation <= %s", (bases[1],))
                    db.execute("INSERT INTO hoprag.meta VALUES ('log_floor', %s) ON CONFLICT (key) DO UPDATE SET "
                               "value = greatest(hoprag.meta.value::bigint, EXCLUDED.value::bigint)::text", (str(bases[1]),))

        try:
            self._run(save)
        except StoreError as exc:  # a reader-only login still serves; it just builds again each start
            log.info("derived data not saved: %s", exc)

    def size_bytes(self) -> int:
        return self._run(lambda db: db.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'hoprag' AND c.relkind = 'r'").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            for conn in (self._conn, self._listener):
                if conn is not None:
                    conn.close()
            self._conn = self._listener = None
