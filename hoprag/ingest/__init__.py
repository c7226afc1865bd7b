"""``hoprag index``: mirror a folder of ordinary files (or one file, or a JSONL) into a store.

Each file is the unit of mirroring: its digest (content, the metadata defaults it gets, the corpus
configuration) decides whether it is new, changed or unchanged; files gone from the source are
deleted; everything lands in one atomic commit. A file that fails is reported (one line naming it)
and keeps the version already in the store, so a bad edit never loses indexed data.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

from ..corpus import FIELDS, CorpusError, Doc, Problem, _make, load_allowlist, load_config
from ..lexicon import LexiconError, load_lexicon
from ..read import extract_facts
from ..store import Changes, Config, Passage, Store
from . import meta
from .chunk import VERSION as CHUNKING, chunk
from .discover import discover
from .formats import READERS, Record

#: Files above this size are refused (``--max-file-mb``): a document, not a data dump or a disk image.
MAX_FILE_BYTES = 20 * 2**20


class IngestError(ValueError):
    """The run cannot start (no source, bad corpus config, a store of another source); one line."""


@dataclass
class Report:
    """What one run did; ``failed`` makes the exit code non-zero, ``skipped`` does not."""

    files: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    passages: int = 0
    total_passages: int = 0
    skipped: list[Problem] = field(default_factory=list)
    failed: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    generation: int = 0

    def summary(self) -> str:
        return (f"{self.files} files ({self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
                f"{self.deleted} deleted), {self.passages} passages written ({self.total_passages} in the store), "
                f"{len(self.skipped)} skipped, {len(self.failed)} failed, {self.seconds:.2f} s, generation {self.generation}")


def _config(home: Path) -> tuple[Config, list[meta.Rule], str]:
    """The source's corpus configuration, its per-folder rules and a digest of what derived data depends on."""
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
    return config, rules, hashlib.sha256(json.dumps(config.as_json(), sort_keys=True).encode()).hexdigest()


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


def _read(found_path: Path, rel: str, data: bytes, rules: list[meta.Rule], groups: tuple[str, ...],
          config: Config) -> tuple[list[Passage], list[Problem], list[Problem]]:
    """The file's passages, its problems, and why it has nothing to index (skipped, not failed)."""
    records, problems = READERS[found_path.suffix.lower()](found_path, data)
    if any(r.empty for r in records):
        return [], problems, [Problem(r.where, "text", r.empty) for r in records if r.empty]
    passages: list[Passage] = []
    fixed = meta.defaults(rel, rules, groups)
    is_jsonl = found_path.suffix.lower() == ".jsonl"
    for record in records:
        base = meta.file_defaults(found_path, rel, record.title)
        if is_jsonl:  # a line is a record of its own: no title from the file name, its id is required
            base["title"] = ""
        else:
            base["id"] = meta.document_id(rel)
        if not record.meta.get("groups") and "groups" not in fixed:
            problems.append(Problem(record.where, "groups", "no groups from anywhere: add groups to its front matter "
                                    "(or JSONL line), a rule in corpus.yaml, or pass --groups"))
            continue
        doc, bad = _make(record.meta, record.body, record.where, FIELDS + (("triples",) if is_jsonl else ()),
                         {**base, **fixed})
        problems += bad
        if doc is not None:
            passages += _passages(record, doc, config)
    return passages, problems, []


def index(src: Path, store: Store, groups: Sequence[str] = (), max_bytes: int = MAX_FILE_BYTES,
          progress: Callable[[str], None] | None = None) -> Report:
    """Mirror ``src`` into ``store`` in one commit and report what happened."""
    start = time.perf_counter()
    if not src.exists():
        raise IngestError(f"{src}: no such file or directory")
    source = str(src.resolve())
    if store.source() not in (None, source):
        raise IngestError(f"the store mirrors {store.source()}, not {source}: index into another --store "
                          "(or delete the store file to start over)")
    home = src if src.is_dir() else src.parent
    config, rules, config_digest = _config(home)
    flags = tuple(sorted({g.strip() for g in groups if g.strip()}))
    report = Report()
    found, refused = discover(src)
    report.failed += refused
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
        suffix = item.path.suffix.lower()
        if suffix not in READERS:
            report.skipped.append(Problem(str(item.path), "file", f"unsupported type {suffix or '(no suffix)'}; "
                                          f"indexed: {', '.join(READERS)}"))
            continue
        report.files += 1
        present.add(item.rel)
        size = item.path.stat().st_size
        if size > max_bytes:
            report.failed.append(Problem(str(item.path), "file", f"{size / 2**20:.1f} MB is over the "
                                         f"{max_bytes / 2**20:g} MB limit (--max-file-mb)"))
            continue
        try:
            data = item.path.read_bytes()
        except OSError as exc:
            report.failed.append(Problem(str(item.path), "file", f"unreadable: {exc.strerror or exc}"))
            continue
        # the chunking is part of what a file yields: a store indexed by an older one re-reads every file
        fingerprint = json.dumps([meta.defaults(item.rel, rules, flags), config_digest, CHUNKING], sort_keys=True)
        digest = hashlib.sha256(data + b"\0" + fingerprint.encode()).hexdigest()
        if old.get(item.rel) == digest:
            report.unchanged += 1
            continue
        passages, problems, empty = _read(item.path, item.rel, data, rules, flags, config)
        if empty and not problems:  # a page of includes or components only: nothing of its own to index
            report.skipped += empty
            report.files -= 1
            present.discard(item.rel)
            continue
        for doc_id in dict.fromkeys(p.doc.document_id for p in passages):
            other = claimed.get(doc_id) or (owners.get(doc_id) if owners.get(doc_id) != item.rel else None)
            if other is not None:
                problems.append(Problem(str(item.path), "id", f"duplicate document id {doc_id!r} (also in {other}); "
                                        "give one of them another id in its front matter"))
        if not passages and not problems:
            problems.append(Problem(str(item.path), "text", "no text to index (empty document)"))
        if problems:
            report.failed += problems
            continue
        claimed.update({p.doc.document_id: item.rel for p in passages})
        changes.upsert[item.rel] = (digest, passages)
        report.passages += len(passages)
        if item.rel in old:
            report.changed += 1
        else:
            report.new += 1
    changes.delete = sorted(set(old) - present)
    report.deleted = len(changes.delete)
    if changes.upsert or changes.delete or store.config_digest() != config_digest or store.source() != source:
        report.generation = store.apply(changes)
    else:
        report.generation = store.generation()
    report.total_passages = store.passage_count()
    report.seconds = time.perf_counter() - start
    return report


def prepare(store: Store, principals: Sequence[frozenset[str]] = (), ranker: str | None = None) -> float:
    """Build and persist, over the store's newest generation, the derived data a server would
    otherwise build at its first start: the packed passages, the entity index and the evidence check,
    and with ``principals`` (each one's groups) their search views and term weights, so servers
    start by loading. Seconds taken.

    A store that enforces its own permissions keys its derived data by who reads it (the union of
    ``principals``' groups, as ``hoprag serve`` reads it), so it needs ``principals``. ``ranker``:
    the one the servers use (default: the store's own choice, else the product default).
    """
    from ..engine import Engine

    start = time.perf_counter()
    readers = frozenset().union(*principals) if principals else None
    engine = Engine.from_snapshot(store.snapshot(readers), ranker)  # packs the passages for the next reader
    engine.derive()
    for groups in principals:
        engine.warm(groups)
    return time.perf_counter() - start
