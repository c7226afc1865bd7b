"""Documents and the corpus loader: Markdown with YAML front matter, or JSONL.

Validation collects every problem in the corpus and names the file (or line) and the field,
so an operator fixes a bad corpus in one pass; no document is ever dropped silently.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from .lexicon import Lexicon, LexiconError, load_lexicon
from .yamlfile import READ_ERRORS, read_yaml

#: Files in a corpus directory that configure it rather than being documents.
CONFIG_FILES = ("corpus.yaml", "relations.yaml", "access.yaml", "questions.yaml", "allowlist.yaml")
#: Keys of ``corpus.yaml``, the corpus's own settings.
CONFIG_KEYS = ("ranker", "rules")
FIELDS = ("id", "title", "groups", "trusted", "source", "updated")
REQUIRED = ("id", "groups", "trusted", "source", "updated")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Short(reprlib.Repr):
    """Renders a hostile value for a message in bounded size and time: a YAML alias bomb is
    exponential in full, and a hex integer can be too long for ``repr`` to convert at all."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother = 2, 80, 80
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 4

    def repr_int(self, x: int, level: int) -> str:
        return super().repr_int(x, level) if x.bit_length() <= 128 else f"<a {x.bit_length()}-bit integer>"


_SHOW = _Short()


def _field(key: Any) -> str:
    """A record key as a field name, quoted when it is not a plain one (YAML keys may be numbers,
    dates, null, empty or hold newlines)."""
    return key if isinstance(key, str) and key.isprintable() and key else _SHOW.repr(key)


#: Between the headings of a passage's section path (``Background Tasks › Add the task``).
SECTION_SEPARATOR = " › "


@dataclass(frozen=True)
class Doc:
    """A retrievable record with access-control and provenance metadata.

    ``groups`` gates who may see it and ``trusted`` records whether ingestion verified
    where the text came from; both are enforced around the model, not by it.
    ``triples`` holds precomputed facts (JSONL corpora) that replace cue extraction.
    A passage of a chunked document (``hoprag index``) names its ``document``, its ``position``
    in it (from 0) and its ``section``: the heading path it sits under, from the document's top
    heading down, joined with :data:`SECTION_SEPARATOR`, so a citation names document and section;
    a record loaded whole is its own document (``document`` empty).
    """

    id: str
    text: str
    groups: frozenset[str]
    trusted: bool = True
    title: str = ""
    source: str = ""
    updated: dt.date | None = None
    triples: tuple[tuple[str, str, str], ...] | None = field(default=None, compare=False)
    document: str = ""
    position: int = 0
    section: str = ""

    @property
    def document_id(self) -> str:
        """The id of the document this passage belongs to (its own id when loaded whole)."""
        return self.document or self.id

    def readable_by(self, groups: frozenset[str]) -> bool:
        """hoprag's own permission check (:func:`shares`); a store may enforce a second one of its
        own, e.g. PostgreSQL row-level security."""
        return shares(self.groups, groups)


def shares(doc_groups: frozenset[str], caller_groups: frozenset[str]) -> bool:
    """hoprag's own permission check: a caller reads a document sharing any of its groups."""
    return not doc_groups.isdisjoint(caller_groups)


@dataclass(frozen=True)
class Problem:
    """One validation failure: where (file or file:line), which field, what is wrong."""

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        # One line, always printable: file names, keys and parser messages may hold line breaks
        # or lone surrogates.
        text = " ".join(f"{self.where}: field '{self.field}': {self.message}".splitlines())
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


class CorpusError(ValueError):
    """Raised with every problem found; ``str()`` lists one per line."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(frozen=True)
class Corpus:
    """Validated documents plus the relation lexicon they are read with."""

    docs: Sequence[Doc]
    lexicon: Lexicon
    root: Path | None = None
    allowlist: tuple[str, ...] | None = None
    #: The ranker ``corpus.yaml`` asks for (``None``: the product default).
    ranker: str | None = None

    def by_id(self) -> dict[str, Doc]:
        return {d.id: d for d in self.docs}

    def config_path(self, name: str) -> Path | None:
        """Where a config file (``access.yaml``…) of this corpus lives, if it has a home."""
        if self.root is None:
            return None
        return (self.root if self.root.is_dir() else self.root.parent) / name


def _check(record: dict[str, Any], where: str, allowed: Iterable[str]) -> tuple[dict[str, Any], list[Problem]]:
    """Validate one record's metadata; return the normalised fields and any problems."""
    problems: list[Problem] = []
    out: dict[str, Any] = {}
    for key in sorted(set(record) - set(allowed), key=_field):
        problems.append(Problem(where, _field(key), "unknown key (allowed: " + ", ".join(allowed) + ")"))
    for key in REQUIRED:
        if key not in record or record[key] is None:
            problems.append(Problem(where, key, "missing"))
    doc_id = record.get("id")
    if doc_id is not None:
        if not isinstance(doc_id, str) or not _ID.fullmatch(doc_id):
            problems.append(Problem(where, "id", f"expected an id of letters, digits and _.:/- (got {_SHOW.repr(doc_id)})"))
        else:
            out["id"] = doc_id
    title = record.get("title", "")
    if not isinstance(title, str):
        problems.append(Problem(where, "title", f"expected a string, got {type(title).__name__}"))
    else:
        out["title"] = title.strip()
    groups = record.get("groups")
    if groups is not None:
        if not isinstance(groups, list) or not groups:
            problems.append(Problem(where, "groups", "expected a non-empty list of group names"))
        elif not all(isinstance(g, str) and g.strip() for g in groups):
            problems.append(Problem(where, "groups", "every group must be a non-empty string"))
        else:
            out["groups"] = frozenset(g.strip() for g in groups)
    trusted = record.get("trusted")
    if trusted is not None:
        if not isinstance(trusted, bool):
            problems.append(Problem(where, "trusted", f"expected true or false, got {_SHOW.repr(trusted)}"))
        else:
            out["trusted"] = trusted
    source = record.get("source")
    if source is not None:
        if not isinstance(source, str) or not _URI.fullmatch(source.strip()):
            problems.append(Problem(where, "source", f"expected a URI such as https://host/path, got {_SHOW.repr(source)}"))
        else:
            out["source"] = source.strip()
    updated = record.get("updated")
    if updated is not None:
        date = _date(updated)
        if date is None:
            problems.append(Problem(where, "updated", f"expected an ISO date YYYY-MM-DD, got {_SHOW.repr(updated)}"))
        else:
            out["updated"] = date
    return out, problems


def _date(value: Any) -> dt.date | None:
    """YAML parses dates itself; JSON carries ISO strings. Anything else is not a date."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def _lone_surrogate(value: Any) -> bool:
    """Whether a parsed value holds a lone UTF-16 surrogate: JSON and YAML ``\\ud800`` escapes make
    them, and no UTF-8 response can carry one. Shared objects (YAML aliases) are visited once."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, (list, tuple, set, dict)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend([*item.keys(), *item.values()] if isinstance(item, dict) else item)
    return False


def _triples(value: Any, where: str) -> tuple[tuple[tuple[str, str, str], ...] | None, list[Problem]]:
    if value is None:
        return None, []
    ok = isinstance(value, list) and all(
        isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t) for t in value
    )
    if not ok:
        return None, [Problem(where, "triples", "expected a list of [subject, relation, object] strings")]
    return tuple((s.strip(), r.strip(), o.strip()) for s, r, o in value), []


def _front_matter(raw: str, where: str) -> tuple[dict[str, Any] | None, str, list[Problem]]:
    if not raw.startswith("---"):
        return None, "", [Problem(where, "front matter", "file must start with a '---' YAML front-matter block")]
    parts = re.split(r"^---[ \t]*\r?$", raw, maxsplit=2, flags=re.M)
    if len(parts) < 3:
        return None, "", [Problem(where, "front matter", "no closing '---' line")]
    try:
        meta = yaml.safe_load(parts[1])
    except RecursionError:
        return None, "", [Problem(where, "front matter", "invalid YAML: nested too deeply")]
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: impossible dates, integers past Python's digit limit
        return None, "", [Problem(where, "front matter", f"invalid YAML: {exc}")]
    if not isinstance(meta, dict):
        return None, "", [Problem(where, "front matter", "expected a mapping of fields")]
    return meta, parts[2].strip(), []


def _read_text(path: Path) -> tuple[str | None, list[Problem]]:
    try:
        return path.read_bytes().decode("utf-8"), []
    except UnicodeDecodeError as exc:
        return None, [Problem(str(path), "encoding", f"not valid UTF-8 ({exc.reason} at byte {exc.start})")]
    except OSError as exc:
        return None, [Problem(str(path), "file", f"unreadable: {exc.strerror or exc}")]


def _make(meta: dict[str, Any], text: Any, where: str, allowed: tuple[str, ...], defaults: dict[str, Any]):
    record = {**defaults, **meta}
    fields, problems = _check(record, where, allowed)
    problems += [Problem(where, _field(key), "not valid Unicode (a lone surrogate escape such as \\ud800)")
                 for key, value in [*record.items(), ("text", text)] if _lone_surrogate(key) or _lone_surrogate(value)]
    triples, more = _triples(record.get("triples"), where)
    problems += more
    if not isinstance(text, str) or not text.strip():
        problems.append(Problem(where, "text", "document text is empty"))
    if problems:
        return None, problems
    return Doc(text=text.strip(), triples=triples, **fields), []


def _markdown_docs(root: Path, defaults: dict[str, Any]) -> tuple[list[tuple[Doc, str]], list[Problem]]:
    docs, problems = [], []
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or path.name in CONFIG_FILES:
            continue
        if path.suffix != ".md" or not path.is_file():
            problems.append(Problem(str(path), "file", "not a document (*.md) or a known config file "
                                    f"({', '.join(CONFIG_FILES)}); move it out of the corpus directory"))
            continue
        raw, bad = _read_text(path)
        if raw is None:
            problems += bad
            continue
        meta, body, bad = _front_matter(raw, str(path))
        if meta is None:
            problems += bad
            continue
        doc, bad = _make(meta, body, str(path), FIELDS, defaults)
        problems += bad
        if doc:
            docs.append((doc, str(path)))
    return docs, problems


def json_lines(text: str, path: str) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """Each non-blank line of a JSONL text as ``(path:line, object)``; a line that is not one JSON
    object is a problem naming it (the corpus loader and ``hoprag index`` read JSONL alike)."""
    out, problems = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(where, "json", f"invalid JSON: {exc.msg} at column {exc.colno}"))
            continue
        except RecursionError:
            problems.append(Problem(where, "json", "invalid JSON: nested too deeply"))
            continue
        except ValueError as exc:  # an integer past Python's digit limit
            problems.append(Problem(where, "json", f"invalid JSON: {exc}"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(where, "json", "expected one JSON object per line"))
            continue
        out.append((where, record))
    return out, problems


def _jsonl_docs(path: Path, defaults: dict[str, Any]) -> tuple[list[tuple[Doc, str]], list[Problem]]:
    raw, problems = _read_text(path)
    if raw is None:
        return [], problems
    docs = []
    records, bad = json_lines(raw, str(path))
    problems += bad
    for where, record in records:
        text = record.pop("text", None)
        doc, bad = _make(record, text, where, FIELDS + ("triples",), defaults)
        problems += bad
        if doc:
            docs.append((doc, where))
    return docs, problems


def load_docs(path: str | Path, defaults: dict[str, Any] | None = None) -> tuple[Doc, ...]:
    """Load and validate every document under ``path`` (a directory of ``*.md`` or a ``.jsonl``).

    ``defaults`` fills fields a record leaves out (a benchmark corpus without ACLs, say).
    Raises :class:`CorpusError` listing every problem, each naming file (or line) and field.
    """
    path = Path(path)
    defaults = defaults or {}
    if path.is_dir():
        found, problems = _markdown_docs(path, defaults)
    elif path.is_file() and path.suffix == ".jsonl":
        found, problems = _jsonl_docs(path, defaults)
    elif not path.exists():
        raise CorpusError([Problem(str(path), "path", "no such file or directory: pass --corpus (or HOPRAG_CORPUS) "
                                                      "naming a directory of *.md files or a *.jsonl file")])
    else:
        raise CorpusError([Problem(str(path), "path", "expected a directory of *.md files or a *.jsonl file")])
    first: dict[str, str] = {}
    for doc, where in found:
        if doc.id in first:
            problems.append(Problem(where, "id", f"duplicate id {doc.id!r} (first defined in {first[doc.id]})"))
        else:
            first[doc.id] = where
    if not found and not problems:
        problems.append(Problem(str(path), "documents", "corpus holds no documents"))
    if problems:
        raise CorpusError(problems)
    return tuple(doc for doc, _ in found)


def load_corpus(path: str | Path, defaults: dict[str, Any] | None = None) -> Corpus:
    """Load documents and the corpus's config files: ``corpus.yaml``, ``relations.yaml``, ``allowlist.yaml``.

    Without ``relations.yaml`` the lexicon is empty: no relation is read by cue.
    """
    path = Path(path)
    docs = load_docs(path, defaults)
    home = path if path.is_dir() else path.parent
    try:
        lexicon = load_lexicon(home / "relations.yaml")
    except LexiconError as exc:
        raise CorpusError([Problem(str(home / "relations.yaml"), "relations", str(exc))]) from exc
    config = load_config(home / "corpus.yaml")
    return Corpus(docs, lexicon, path, load_allowlist(home / "allowlist.yaml"), config.get("ranker"))


def load_config(path: Path) -> dict[str, Any]:
    """A corpus's own settings (``corpus.yaml``); ``{}`` when the file is absent."""
    if not path.exists():
        return {}
    try:
        data = read_yaml(path) or {}
    except READ_ERRORS as exc:
        raise CorpusError([Problem(str(path), "file", f"cannot read corpus config: {exc}")]) from exc
    if not isinstance(data, dict):
        raise CorpusError([Problem(str(path), "file", f"expected a mapping of {', '.join(CONFIG_KEYS)}")])
    unknown = [k for k in data if k not in CONFIG_KEYS]
    if unknown:
        raise CorpusError([Problem(str(path), _field(unknown[0]), f"unknown key; expected {', '.join(CONFIG_KEYS)}")])
    ranker = data.get("ranker")
    if ranker is not None and not isinstance(ranker, str):
        raise CorpusError([Problem(str(path), "ranker", "expected a ranker name")])
    return data


def load_allowlist(path: Path) -> tuple[str, ...] | None:
    """Source-URI prefixes whose documents may be evidence (``None`` when the file is absent)."""
    if not path.exists():
        return None
    try:
        data = read_yaml(path) or {}
    except READ_ERRORS as exc:
        raise CorpusError([Problem(str(path), "file", f"cannot read allowlist: {exc}")]) from exc
    sources = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(sources, list) or not all(isinstance(s, str) and _URI.fullmatch(s) for s in sources):
        raise CorpusError([Problem(str(path), "sources", "expected a list of source URI prefixes")])
    return tuple(sources)
