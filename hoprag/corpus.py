"""Documents and the corpus loader: Markdown with YAML front matter, or JSONL.

Validation collects every problem in the corpus and names the file (or line) and the field,
so an operator fixes a bad corpus in one pass; no document is ever dropped silently.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from .formats import READERS, Problem, Record, markdown
from .lexicon import Lexicon, LexiconError, load_lexicon
from .yamlfile import READ_ERRORS, read_yaml

#: Files in a corpus directory that configure it rather than being documents.
CONFIG_FILES = ("corpus.yaml", "relations.yaml", "access.yaml", "questions.yaml", "allowlist.yaml")
#: Keys of ``corpus.yaml``, the corpus's own settings.
CONFIG_KEYS = ("ranker", "rules", "metadata_keys")
FIELDS = ("id", "title", "groups", "trusted", "source", "updated")
REQUIRED = ("id", "groups", "trusted", "source", "updated")
#: hoprag's own keys of a record: validated, never kept as metadata (``triples``: JSONL lines only).
OWN_KEYS = FIELDS + ("triples",)
#: The longest document id; a passage of a chunked document adds ``#N`` (the MCP ``fetch`` id
#: limit leaves room for it).
MAX_ID_CHARS = 128
ID_RULE = (f"an id is 1 to {MAX_ID_CHARS} characters from A-Z a-z 0-9 _ . : / - and starts with a letter or digit")
_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.:/-]{{0,{MAX_ID_CHARS - 1}}}")
#: The most JSON (UTF-8 bytes) a document's own front-matter keys may take as metadata.
MAX_METADATA_BYTES = 16 * 1024
#: How deeply metadata values may nest (lists and mappings).
MAX_METADATA_DEPTH = 32
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


def field_name(key: Any) -> str:
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
    a record loaded whole is its own document (``document`` empty). ``path`` and
    ``front_matter`` are the document's, repeated on each of its passages.
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
    #: The file it came from, relative to the indexed folder or the corpus ('' when unknown).
    path: str = ""
    #: The record's other front-matter keys (or JSONL fields) as a JSON object ('' for none): kept
    #: as text so a ``Doc`` stays hashable, and returned by ``fetch`` as ``metadata.front_matter``.
    front_matter: str = ""

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


def _distance(a: str, b: str, limit: int) -> int:
    """Edit distance (insert, delete, substitute, swap two neighbours) of ``a`` and ``b``, or
    ``limit + 1`` once it is certainly above ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before, row = None, list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (x != y))
            if before is not None and i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]


def misspelt(key: Any) -> str | None:
    """hoprag's own key that ``key`` is probably a misspelling of (``group`` -> ``groups``,
    ``Title`` -> ``title``), else ``None``: a typo must not silently publish a file or trust it.

    Near means: the same letters in another case, or an edit distance of 1 for a key of up to
    four letters (``id``: ``ids``, ``uid``) and of 2 for a longer one (``trused``, ``tittle``), so
    ordinary keys such as ``hide``, ``tags`` or ``description`` stay metadata."""
    if not isinstance(key, str) or key in OWN_KEYS:
        return None
    folded = key.lower()
    for own in OWN_KEYS:
        limit = 1 if len(own) <= 4 else 2
        if folded == own or _distance(folded, own, limit) <= limit:
            return own
    return None


class _Unfit(ValueError):
    """A metadata value JSON cannot hold, or metadata over the size or depth limit."""


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (dt.date, dt.datetime)):
        return key.isoformat()
    return json.dumps(key) if isinstance(key, (bool, int, float)) or key is None else str(key)


def _jsonable(value: Any, budget: list[int], depth: int = 0) -> Any:
    """``value`` as plain JSON data: dates as ISO strings, sets as lists, non-finite floats and
    integers past 64 bits as strings. ``budget`` (a lower bound of the JSON's bytes still allowed)
    stops a YAML alias bomb before it is expanded."""
    if depth > MAX_METADATA_DEPTH:
        raise _Unfit(f"nested deeper than {MAX_METADATA_DEPTH} levels")
    budget[0] -= 1 + (len(value) if isinstance(value, str) else 0)
    if budget[0] < 0:
        raise _Unfit(f"over the {MAX_METADATA_BYTES // 1024} KB limit")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if value.bit_length() > 13_000:  # str() refuses past 4300 digits
            raise _Unfit(f"a {value.bit_length()}-bit integer is too long")
        return value if value.bit_length() <= 63 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {_json_key(k): _jsonable(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, budget, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v, budget, depth + 1) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (bytes, bytearray)):
        raise _Unfit("a binary value (!!binary) has no JSON form")
    raise _Unfit(f"a {type(value).__name__} value has no JSON form")


def metadata_json(extra: dict[Any, Any]) -> str:
    """A record's other keys as one JSON object (``""`` for none); raises :class:`_Unfit` with the
    reason when it cannot be kept (a value JSON cannot hold, over :data:`MAX_METADATA_BYTES`)."""
    if not extra:
        return ""
    data = _jsonable(extra, [MAX_METADATA_BYTES])
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    size = len(text.encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise _Unfit(f"{size / 1024:.1f} KB of JSON is over the {MAX_METADATA_BYTES // 1024} KB limit")
    return text


def _check(record: dict[str, Any], where: str, allowed: Iterable[str],
           keep: Iterable[str] = ()) -> tuple[dict[str, Any], dict[Any, Any], list[Problem]]:
    """Validate one record's own keys; return the normalised fields, the other keys (metadata)
    and any problems. ``keep``: keys ``corpus.yaml`` declares as metadata although they resemble
    an own key (``resource`` is near ``source``)."""
    problems: list[Problem] = []
    out: dict[str, Any] = {}
    extra: dict[Any, Any] = {}
    keep = set(keep)
    for key in record:
        if key in allowed:
            continue
        if key in OWN_KEYS:
            problems.append(Problem(where, key, "only a JSONL line carries triples (precomputed facts); remove it here"))
        elif (own := misspelt(key)) is not None and key not in keep:
            problems.append(Problem(where, field_name(key), f"looks like a misspelling of '{own}', one of hoprag's own keys "
                                    f"({', '.join(allowed)}): fix it, or if it is ordinary metadata list it under "
                                    "metadata_keys: in corpus.yaml", reason="with a misspelt hoprag key"))
        else:
            extra[key] = record[key]
    for key in REQUIRED:
        if key not in record or record[key] is None:
            problems.append(Problem(where, key, "missing"))
    doc_id = record.get("id")
    if doc_id is not None:
        if not isinstance(doc_id, str) or not _ID.fullmatch(doc_id):
            long = isinstance(doc_id, str) and len(doc_id) > MAX_ID_CHARS
            got = f"{len(doc_id)} characters" if long else _SHOW.repr(doc_id)
            problems.append(Problem(where, "id", f"expected an id: {ID_RULE} (got {got})"))
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
    return out, extra, problems


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


def valid_text(name: str) -> str:
    """A file name as valid Unicode: bytes the file system gave that are not UTF-8 (which Python
    keeps as lone surrogates) become U+FFFD, so the name can be stored and served."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _lone_surrogate(value: Any) -> bool:
    """Whether a parsed value holds a lone UTF-16 surrogate: JSON and YAML ``\\ud800`` escapes make
    them, and no UTF-8 response can carry one. Shared objects (YAML aliases) are visited once."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):  # isascii: one C pass, most text is
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


def make_doc(meta: dict[str, Any], text: Any, where: str, allowed: tuple[str, ...], defaults: dict[str, Any],
             keep: Iterable[str] = (), path: str = "",
             lenient: bool = False) -> tuple[Doc | None, list[Problem], list[Problem]]:
    """One validated document from a record's keys (``meta`` over ``defaults``) and its text, or the
    problems that refuse it; and notes. hoprag's own keys are validated; every other key becomes the
    document's ``front_matter`` metadata (a near-misspelling of an own key is a problem instead).
    Metadata that cannot be kept (over :data:`MAX_METADATA_BYTES`, a value JSON cannot hold)
    refuses the document, or with ``lenient`` leaves it out with a note (``hoprag index``)."""
    record = {**defaults, **meta}
    fields, extra, problems = _check(record, where, allowed, keep)
    problems += [Problem(where, field_name(key), "not valid Unicode (a lone surrogate escape such as \\ud800)")
                 for key, value in [*record.items(), ("text", text)] if _lone_surrogate(key) or _lone_surrogate(value)]
    triples, more = _triples(record.get("triples"), where)
    problems += more
    if not isinstance(text, str) or not text.strip():
        problems.append(Problem(where, "text", "document text is empty"))
    if problems:
        return None, problems, []
    notes: list[Problem] = []
    try:
        front_matter = metadata_json(extra)
    except _Unfit as exc:
        front_matter = ""
        if not lenient:
            return None, [Problem(where, "front matter", f"cannot be kept as metadata: {exc}; shorten it "
                                  f"(at most {MAX_METADATA_BYTES // 1024} KB as JSON)")], []
        notes.append(Problem(where, "front matter", f"not kept as metadata: {exc}; indexed without it "
                             f"(at most {MAX_METADATA_BYTES // 1024} KB as JSON is kept)"))
    return Doc(text=text.strip(), triples=triples, path=path, front_matter=front_matter, **fields), [], notes


def _corpus_files(root: Path) -> tuple[list[Path], list[Problem]]:
    """A corpus directory's documents (``*.md``); any other file but its config files is a problem naming it."""
    files, problems = [], []
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or path.name in CONFIG_FILES:
            continue
        if path.suffix != ".md" or not path.is_file():
            problems.append(Problem(str(path), "file", "not a document (*.md) or a known config file "
                                    f"({', '.join(CONFIG_FILES)}); move it out of the corpus directory"))
        else:
            files.append(path)
    return files, problems


def _records(path: Path) -> tuple[list[Record], list[Problem]]:
    """A corpus file's records, read by ``hoprag index``'s reader of its format (:data:`~hoprag.formats.READERS`):
    a Markdown document strictly (front matter required, its text as written), a JSONL file line by line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [Problem(str(path), "file", f"unreadable: {exc.strerror or exc}")]
    return markdown(path, data, strict=True) if path.suffix == ".md" else READERS[path.suffix](path, data)


def _docs(files: Iterable[Path], defaults: dict[str, Any],
          keep: Iterable[str]) -> tuple[list[tuple[Doc, str]], list[Problem]]:
    docs, problems = [], []
    for path in files:
        records, bad = _records(path)
        problems += bad
        for record in records:  # a Markdown document names no triples: only a JSONL line carries them
            doc, bad, _ = make_doc(record.meta, record.body, record.where, FIELDS if path.suffix == ".md" else OWN_KEYS,
                                   defaults, keep, valid_text(path.name))
            problems += bad
            if doc:
                docs.append((doc, record.where))
    return docs, problems


def load_docs(path: str | Path, defaults: dict[str, Any] | None = None) -> tuple[Doc, ...]:
    """Load and validate every document under ``path`` (a directory of ``*.md`` or a ``.jsonl``).

    ``defaults`` fills fields a record leaves out (a benchmark corpus without ACLs, say).
    Raises :class:`CorpusError` listing every problem, each naming file (or line) and field.
    """
    path = Path(path)
    defaults = defaults or {}
    if path.is_dir():
        files, problems = _corpus_files(path)
        found, bad = _docs(files, defaults, metadata_keys(path / "corpus.yaml"))
        problems += bad
    elif path.is_file() and path.suffix == ".jsonl":
        found, problems = _docs([path], defaults, metadata_keys(path.parent / "corpus.yaml"))
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
        raise CorpusError([Problem(str(path), field_name(unknown[0]), f"unknown key; expected {', '.join(CONFIG_KEYS)}")])
    ranker = data.get("ranker")
    if ranker is not None and not isinstance(ranker, str):
        raise CorpusError([Problem(str(path), "ranker", "expected a ranker name")])
    keys = data.get("metadata_keys")
    if keys is not None and not (isinstance(keys, list) and all(isinstance(k, str) and k for k in keys)):
        raise CorpusError([Problem(str(path), "metadata_keys", "expected a list of front-matter keys to keep as "
                                   "metadata although they resemble one of hoprag's own (e.g. [resource, course])")])
    return data


def metadata_keys(path: Path) -> tuple[str, ...]:
    """The front-matter keys ``corpus.yaml`` declares ordinary metadata although they resemble one of
    hoprag's own keys (:func:`misspelt`)."""
    return tuple(load_config(path).get("metadata_keys") or ())


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
