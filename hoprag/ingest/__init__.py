"""``hoprag index``: mirror a folder of ordinary files (or one file, or a JSONL) into a store.

Each file is the unit of mirroring: its digest (content, the metadata defaults it gets, the corpus
configuration) decides whether it is new, changed or unchanged; files gone from the source are
deleted; everything lands in one atomic commit. A file that fails is reported (one line naming it
and the fix) and keeps the version already in the store, so a bad edit never loses indexed data;
the report counts *files* by outcome and by reason.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..corpus import FIELDS, OWN_KEYS, CorpusError, Doc, load_allowlist, load_config, make_doc, valid_text
from ..embed import Embedder, digest as vector_digest, embed_all, text_of
from ..formats import READERS, Problem, Record
from ..lexicon import LexiconError, load_lexicon
from ..facts import extract_facts
from ..store import Changes, Config, Embedding, Passage, Store
from . import meta
from .chunk import VERSION as CHUNKING, chunk
from .discover import discover

#: Files above this size are refused (``--max-file-mb``): a document, not a data dump or a disk image.
MAX_FILE_BYTES = 20 * 2**20
#: Formats whose reader takes the raw bytes; every other one is text, decoded first (:func:`_as_utf8`).
BINARY_SUFFIXES = (".pdf",)
#: Text formats that must be UTF-8 (JSON text is, by its RFC): no legacy-encoding fallback.
UTF8_ONLY = (".jsonl",)
#: Failed or skipped files shown per reason unless ``--verbose``.
EXAMPLES = 3
_CONTROL = re.compile(rb"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_DECODED_NON_ASCII = re.compile("[^\x00-\x7f\ufffd]")

#: The short reason of a problem by its field, when the code that found it gave none.
_REASONS = {"encoding": "not valid UTF-8", "front matter": "with broken front matter", "json": "with invalid JSON lines",
            "text": "empty (no text)", "pdf": "not readable as PDF"}


class IngestError(ValueError):
    """The run cannot start (no source, an empty one, bad corpus config, a store of another source); one line."""


def reason_of(problem: Problem) -> str:
    """What kind of trouble a problem is, to count files by (``not valid UTF-8``)."""
    return problem.reason or _REASONS.get(problem.field, "with invalid metadata fields")


@dataclass
class Outcome:
    """A file that failed, was skipped or was indexed with notes: the file, why (the first problem's
    reason) and every problem line."""

    where: str
    problems: list[Problem]

    @property
    def reason(self) -> str:
        return reason_of(self.problems[0])

    def __str__(self) -> str:
        return "\n".join(map(str, self.problems))


def by_reason(outcomes: Iterable[Outcome]) -> dict[str, list[Outcome]]:
    """Outcomes grouped by reason, the most frequent first."""
    groups: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.reason, []).append(outcome)
    return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


def _files(n: int) -> str:
    return f"{n} file{'' if n == 1 else 's'}"


@dataclass
class Report:
    """What one run did, counted in files: every file of the source is new, changed, unchanged,
    skipped (not a supported type) or failed; ``deleted`` files were gone from the source."""

    files: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    passages: int = 0
    total_passages: int = 0
    skipped: list[Outcome] = field(default_factory=list)
    failed: list[Outcome] = field(default_factory=list)
    #: Files indexed with something to say (read as Windows-1252, metadata left out).
    noted: list[Outcome] = field(default_factory=list)
    #: Documents that named no groups and went into :data:`meta.DEFAULT_GROUP`.
    local: int = 0
    seconds: float = 0.0
    generation: int = 0
    committed: bool = False
    #: Passages embedded this run, vectors reused (unchanged text), and the seconds embedding took.
    embedded: int = 0
    reused: int = 0
    embed_seconds: float = 0.0

    @property
    def indexed(self) -> int:
        """Files of the source now in the store as they are (written this run or unchanged)."""
        return self.new + self.changed + self.unchanged

    def summary(self) -> str:
        return (f"{_files(self.files)} ({self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
                f"{self.deleted} deleted, {len(self.skipped)} skipped, {len(self.failed)} failed), "
                f"{self.passages} passages written ({self.total_passages} in the store), {self.seconds:.2f} s, "
                f"generation {self.generation}")

    def embedding(self, name: str | None) -> str:
        """One line on the vectors (``name``: the embedder's, ``None``: lexical only)."""
        if name is None:
            return "vectors: none (lexical search only)"
        rate = f", {self.embedded / self.embed_seconds:.1f} passages/s" if self.embedded and self.embed_seconds else ""
        return (f"vectors: {self.embedded} passages embedded with {name} in {self.embed_seconds:.1f} s{rate}, "
                f"{self.reused} reused (text unchanged)")

    def counts(self) -> list[str]:
        """One line per outcome with reasons: ``failed: 3 files not valid UTF-8, 1 file over the 20 MB limit``."""
        lines = []
        for label, outcomes in (("failed", self.failed), ("skipped", self.skipped), ("noted", self.noted)):
            if outcomes:
                lines.append(f"{label}: " + ", ".join(f"{_files(len(group))} {reason}"
                                                      for reason, group in by_reason(outcomes).items()))
        return lines


def _config(home: Path) -> tuple[Config, list[meta.Rule], tuple[str, ...], str]:
    """The source's corpus configuration, its per-folder rules, its metadata keys and a digest of what
    derived data depends on."""
    try:
        lexicon = load_lexicon(home / "relations.yaml")
    except LexiconError as exc:
        raise IngestError(str(exc)) from None
    try:
        settings = load_config(home / "corpus.yaml")
        allowlist = load_allowlist(home / "allowlist.yaml")
    except CorpusError as exc:
        raise IngestError(str(exc)) from None
    rules, problems = meta.load_rules(settings.get("rules"), str(home / "corpus.yaml"))
    if problems:
        raise IngestError("\n".join(map(str, problems)))
    config = Config(lexicon, allowlist, settings.get("ranker"))
    keep = tuple(settings.get("metadata_keys") or ())
    digest = hashlib.sha256(json.dumps([config.as_json(), keep], sort_keys=True).encode()).hexdigest()
    return config, rules, keep, digest


def _passages(record: Record, doc: Doc, config: Config) -> list[Passage]:
    """The document's passages (a record with precomputed triples stays whole), with derived data."""
    if doc.triples is not None:
        docs = [doc]
    else:
        parts = chunk(doc.text, record.headings)
        if len(parts) == 1:
            docs = [replace(doc, text=parts[0][1], section=parts[0][0])]
        else:
            docs = [replace(doc, id=f"{doc.id}#{i + 1}", text=text, document=doc.id, position=i, section=section)
                    for i, (section, text) in enumerate(parts)]
    return [Passage(d, extract_facts(d, config.lexicon)) for d in docs]


def _as_utf8(path: Path, data: bytes) -> tuple[bytes | None, list[Problem], list[Problem]]:
    """A text file's bytes as UTF-8 for its reader, or why not; and notes.

    A NUL byte means binary (a PNG renamed ``.md``). UTF-16 with a byte-order mark is decoded. Bytes
    that are not UTF-8: in a mostly-UTF-8 file each bad one becomes U+FFFD; a file with no UTF-8
    multi-byte character at all is legacy 8-bit text, read as Windows-1252 (what browsers do for
    Latin-1) -- both with a note naming the file, never silently. JSONL must be UTF-8.
    """
    where, suffix = str(path), path.suffix.lower()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16").encode("utf-8"), [], []
        except UnicodeDecodeError:
            pass  # not UTF-16 after all: judged as bytes below
    if b"\0" in data:
        return None, [Problem(where, "file", "binary file (it holds NUL bytes), not text: remove it, or give it "
                              "the extension of its real type", reason="binary (NUL bytes)")], []
    try:
        data.decode("utf-8")
        return data, [], []
    except UnicodeDecodeError as exc:
        first = exc
    if suffix in UTF8_ONLY:
        return data, [], []  # the reader names the bad byte
    replaced = data.decode("utf-8", errors="replace")
    if _DECODED_NON_ASCII.search(replaced):
        bad = replaced.count("\ufffd") - data.count("\ufffd".encode())
        return replaced.encode("utf-8"), [], [Problem(
            where, "encoding", f"{bad} byte{'s are' if bad > 1 else ' is'} not valid UTF-8 (first at byte "
            f"{first.start}); indexed with U+FFFD in place of each: fix them or re-save the file as UTF-8",
            reason="with bytes not valid UTF-8")]
    if len(_CONTROL.findall(data[:65536])) > len(data[:65536]) // 100:
        return None, [Problem(where, "file", "binary file (control bytes, no valid UTF-8), not text: remove it, or "
                              "give it the extension of its real type", reason="binary (control bytes)")], []
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:  # the five bytes Windows-1252 leaves undefined
        text = data.decode("latin-1")
    return text.encode("utf-8"), [], [Problem(
        where, "encoding", f"not UTF-8 ({first.reason} at byte {first.start}); indexed as Windows-1252 (Latin-1) "
        "text: re-save it as UTF-8 if a character looks wrong", reason="read as Windows-1252")]


def _load(path: Path, max_bytes: int) -> tuple[os.stat_result, bytes]:
    """A file's status and, unless it is over ``max_bytes``, its bytes: one open, ``fstat`` on it and
    reads to the end -- half the time of pathlib's ``stat`` then ``read_bytes``, paid per file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        stat = os.fstat(fd)
        if stat.st_size > max_bytes:
            return stat, b""
        parts = []
        while part := os.read(fd, max(stat.st_size + 1, 1 << 16)):  # to the end, should the file have grown
            parts.append(part)
        return stat, b"".join(parts)
    finally:
        os.close(fd)


def _read(found_path: Path, rel: str, data: bytes, fixed: dict[str, Any], mtime: float, config: Config,
          keep: tuple[str, ...]) -> tuple[list[Passage], list[Problem], list[Problem], int, list[Problem]]:
    """A file's passages, problems (any refuses the file), notes, how many of its documents went into the
    default group, and why it has nothing of its own to index (a page of includes only: skipped, not failed).
    ``fixed``: its rule-and-flag defaults (:func:`meta.defaults`); ``mtime``: its ``st_mtime``."""
    suffix = found_path.suffix.lower()
    notes: list[Problem] = []
    if suffix not in BINARY_SUFFIXES:
        decoded, problems, notes = _as_utf8(found_path, data)
        if decoded is None:
            return [], problems, [], 0, []
        data = decoded
    records, problems = READERS[suffix](found_path, data)
    notes += [note for r in records for note in r.notes]
    if any(r.empty for r in records):
        return [], problems, notes, 0, [Problem(r.where, "text", r.empty, reason="with nothing to index")
                                        for r in records if r.empty]
    passages: list[Passage] = []
    is_jsonl = suffix == ".jsonl"
    defaulted = 0
    for record in records:
        base = meta.file_defaults(found_path, rel, record.title, mtime)
        if is_jsonl:  # a line is a record of its own: no title from the file name, its id is required
            base["title"] = ""
        else:
            base["id"] = meta.document_id(rel)
        # An own key left empty (``title:``) is not given: its default applies.
        own = {k: v for k, v in record.meta.items() if not (k in OWN_KEYS and v is None)}
        local = "groups" not in own and "groups" not in fixed
        if local:
            base["groups"] = [meta.DEFAULT_GROUP]
        doc, bad, more = make_doc(own, record.body, record.where, OWN_KEYS if is_jsonl else FIELDS,
                                  {**base, **fixed}, keep, valid_text(rel), lenient=True)
        problems += bad
        notes += more
        if doc is not None:
            defaulted += local
            passages += _passages(record, doc, config)
    return passages, problems, notes, defaulted, []


def _embed(changes: Changes, store: Store, embedder: Embedder | None, report: Report,
           progress: Callable[[str], None] | None) -> None:
    """Give every passage the store will hold a vector of ``embedder``: a new or changed passage
    reuses the stored vector of the same text, else is embedded; an unchanged passage without one
    (a store indexed lexically, or by another embedder) is embedded too. ``None``: no vectors."""
    if embedder is None:
        return
    start = time.perf_counter()
    changes.embedding = Embedding(embedder.name, embedder.identity, embedder.dim)
    same = store.embedding() == changes.embedding
    stored = store.embedded()
    rewritten = set(changes.delete) | set(changes.upsert)
    stale = [pid for pid, (file, known) in stored.items() if file not in rewritten and (not same or known is None)]
    texts = store.texts(stale) if stale else {}
    todo: dict[str, str] = {}  # digest -> text, each distinct text embedded once
    fresh: list[tuple[str, str, int]] = []  # (file, digest, position in the file's passages)
    for file, (_, passages) in changes.upsert.items():
        for n, p in enumerate(passages):
            text = text_of(p.doc)
            key = vector_digest(embedder.identity, text)
            todo.setdefault(key, text)
            fresh.append((file, key, n))
    unchanged: dict[str, str] = {}
    for pid in stale:
        title, section, body = texts[pid]
        text = text_of(Doc(pid, body, frozenset(), title=title, section=section))
        unchanged[pid] = key = vector_digest(embedder.identity, text)
        todo.setdefault(key, text)
    known = store.vectors(todo) if same else {}
    missing = [k for k in todo if k not in known]
    if missing:
        if progress:
            progress(f"embedding {len(missing)} passages with {embedder.name} ...")
        made = embed_all(embedder, [todo[k] for k in missing], progress)
        known.update(zip(missing, (row.astype("<f2").tobytes() for row in made)))
    for file, key, n in fresh:
        passages = changes.upsert[file][1]
        passages[n] = replace(passages[n], vector=known[key], embedded=key)
    changes.vectors = {pid: (key, known[key]) for pid, key in unchanged.items()}
    embedded = set(missing)
    report.embedded = len(missing)
    report.reused = sum(key not in embedded for key in [*(f[1] for f in fresh), *unchanged.values()])
    report.embed_seconds = time.perf_counter() - start


def index(src: Path, store: Store, groups: Sequence[str] = (), max_bytes: int = MAX_FILE_BYTES,
          progress: Callable[[str], None] | None = None, embedder: Embedder | None = None) -> Report:
    """Mirror ``src`` into ``store`` in one commit and report what happened; with ``embedder``, every
    passage gets its vector in the same commit (only new or changed text is embedded).

    Raises :class:`IngestError` (before touching the store) for a missing or empty source. When no
    file could be indexed nothing is committed (``report.committed`` is false).
    """
    start = time.perf_counter()
    if not src.exists():
        raise IngestError(f"{src}: no such file or directory: pass the folder (or file) to index")
    found, refused = discover(src)
    if not found and not refused:
        raise IngestError(f"{src}: no files to index (hidden entries and the config files at its top are not "
                          "documents): pass the folder that holds your documents")
    source = str(src.resolve())
    if store.source() not in (None, source):
        raise IngestError(f"the store mirrors {store.source()}, not {source}: index into another --store "
                          "(or delete the store file to start over)")
    home = src if src.is_dir() else src.parent
    config, rules, keep, config_digest = _config(home)
    flags = tuple(sorted({g.strip() for g in groups if g.strip()}))
    report = Report(files=len(found) + len(refused))
    report.failed += [Outcome(p.where, [p]) for p in refused]
    old = store.files()
    alive = {f.rel for f in found}  # ids of files gone from the source are free to be reused
    owners = {doc_id: rel for doc_id, rel in store.documents().items() if rel in alive}
    changes = Changes(source, config, config_digest)
    present: set[str] = set()
    claimed: dict[str, str] = {}  # document id -> file, for this run's new and changed files
    last = time.monotonic()
    for n, item in enumerate(found, start=1):
        if progress and time.monotonic() - last >= 2:
            progress(f"indexing: {n}/{len(found)} files, {report.passages} passages")
            last = time.monotonic()
        where = str(item.path)
        suffix = item.path.suffix.lower()
        if suffix not in READERS:
            report.skipped.append(Outcome(where, [Problem(
                where, "file", f"unsupported type {suffix or '(no suffix)'}; indexed: {', '.join(READERS)}",
                reason=f"of unsupported type {suffix or '(no suffix)'}")]))
            continue
        present.add(item.rel)  # from here on a failure keeps the file's indexed version
        try:
            stat, data = _load(item.path, max_bytes)
            size = stat.st_size
        except OSError as exc:
            report.failed.append(Outcome(where, [Problem(where, "file", f"unreadable: {exc.strerror or exc}; give "
                                                         "hoprag read access (chmod a+r) or move it out",
                                                         reason="unreadable")]))
            continue
        if size > max_bytes:
            report.failed.append(Outcome(where, [Problem(where, "file", f"{size / 2**20:.1f} MB is over the "
                                                         f"{max_bytes / 2**20:g} MB limit (--max-file-mb)",
                                                         reason=f"over the {max_bytes / 2**20:g} MB limit")]))
            continue
        # the chunking is part of what a file yields: a store indexed by an older one re-reads every file
        fixed = meta.defaults(item.rel, rules, flags)
        fingerprint = json.dumps([fixed, config_digest, CHUNKING], sort_keys=True)
        digest = hashlib.sha256(data + b"\0" + fingerprint.encode()).hexdigest()
        if old.get(item.rel) == digest:
            report.unchanged += 1
            continue
        try:
            passages, problems, notes, defaulted, empty = _read(item.path, item.rel, data, fixed, stat.st_mtime,
                                                                config, keep)
        except Exception as exc:  # noqa: BLE001 - one odd file must not cost the rest of the folder
            problems, passages, notes, defaulted, empty = [Problem(
                where, "file", f"hoprag could not read it ({type(exc).__name__}: {exc}); please report this with "
                "the file, and move it out meanwhile", reason="that hoprag failed to read (a bug)")], [], [], 0, []
        if empty and not problems:  # a page of includes or components only: nothing of its own to index
            report.skipped.append(Outcome(where, empty))
            present.discard(item.rel)
            continue
        for doc_id in dict.fromkeys(p.doc.document_id for p in passages):
            other = claimed.get(doc_id) or (owners.get(doc_id) if owners.get(doc_id) != item.rel else None)
            if other is not None:
                problems.append(Problem(where, "id", f"duplicate document id {doc_id!r} (also in {other}); "
                                        "give one of them another id in its front matter", reason="with a duplicate id"))
        if not passages and not problems:
            problems.append(Problem(where, "text", "no text to index (empty document)"))
        if problems:
            report.failed.append(Outcome(where, problems))
            continue
        if notes:
            report.noted.append(Outcome(where, notes))
        claimed.update({p.doc.document_id: item.rel for p in passages})
        changes.upsert[item.rel] = (digest, passages)
        report.passages += len(passages)
        report.local += defaulted
        if item.rel in old:
            report.changed += 1
        else:
            report.new += 1
    changes.delete = sorted(set(old) - present)
    report.deleted = len(changes.delete)
    if report.indexed:
        _embed(changes, store, embedder, report, progress)
    if report.indexed == 0:
        report.generation = store.generation()  # nothing could be indexed: nothing is committed
    elif (changes.upsert or changes.delete or changes.vectors or store.config_digest() != config_digest
          or store.source() != source or store.embedding() != changes.embedding):
        report.generation = store.apply(changes)
        report.committed = True
    else:
        report.generation = store.generation()
    report.total_passages = store.passage_count()
    report.seconds = time.perf_counter() - start
    return report


@dataclass(frozen=True)
class Prepared:
    """What :func:`prepare` did: seconds taken, and the generation whose derived data the store now
    starts servers from, with how many passages changed since (``0``: the newest generation's own)."""

    seconds: float
    base: int
    changed: int


def prepare(store: Store, principals: Sequence[frozenset[str]] = (), ranker: str | None = None,
            embedder: str | None = None) -> Prepared:
    """Make sure the store holds, for its newest generation, the derived data a server would otherwise
    build at its first start (the packed passages and vectors, the postings, the entity index and the
    evidence check): built and saved when missing, as after a first index; when the store holds that
    of a recent generation, left as it is -- servers load it and apply the change since, as reloading
    ones do -- until the change since is big enough to save anew (:func:`hoprag.delta.save_due`).

    A store that enforces its own permissions keys its derived data by who reads it (the union of
    ``principals``' groups, as ``hoprag serve`` reads it), so it needs ``principals``. ``ranker``:
    the one the servers use (default: the store's own choice, else the product default);
    ``embedder``: the setting servers use (default: the store's own; packs the vectors for them).
    """
    from ..delta import save_due
    from ..engine import Engine

    start = time.perf_counter()
    readers = frozenset().union(*principals) if principals else None
    engine = Engine.over(store, ranker, readers, embedder)  # packs the passages and vectors when it read rows
    if not engine.changed:  # a generation of its own: what it lacks is built, and saved through its cache
        engine.prepared()
        return Prepared(time.perf_counter() - start, engine.generation, 0)
    if save_due(engine):
        with store.saving(engine.generation, readers) as mine:
            if mine:  # else a server is saving it (told of the commit first), or saved a later one
                engine.persist(store.derived(engine.generation, readers))
                return Prepared(time.perf_counter() - start, engine.generation, 0)
    return Prepared(time.perf_counter() - start, engine.saved, engine.changed)
