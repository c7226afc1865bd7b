"""Metadata defaults for ordinary files, and the per-folder rules of ``corpus.yaml``.

What a file says (front matter, a JSONL line's fields) wins; then the last matching rule; then
``hoprag index --groups``; a document that gets no groups from any of them is in the group
:data:`DEFAULT_GROUP` (which an access file must grant explicitly). ``trusted`` defaults to true
(the operator chose to index the file), ``source`` to the file's URI, ``updated`` to its
modification date, ``title`` to the first heading or the file name, ``id`` to its path.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..corpus import MAX_ID_CHARS, field_name, valid_text
from ..formats import Problem

RULE_KEYS = ("path", "groups", "trusted")
#: The group of documents that name none (front matter, a rule, ``--groups``): with no access file
#: the single local user reads it; an access file grants it like any other group.
DEFAULT_GROUP = "local"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/-]")
#: Hex digits of the path digest a shortened or non-ASCII path's id ends with.
_DIGEST_CHARS = 12


@dataclass(frozen=True)
class Rule:
    """``path``: a folder (``finance/``) or a glob over relative paths (``uploads/*.pdf``)."""

    path: str
    groups: tuple[str, ...] | None = None
    trusted: bool | None = None

    def matches(self, rel: str) -> bool:
        folder = self.path.rstrip("/")
        return rel.startswith(folder + "/") or fnmatch.fnmatchcase(rel, self.path)


def load_rules(value: Any, where: str) -> tuple[list[Rule], list[Problem]]:
    """Validate ``corpus.yaml``'s ``rules:`` list (absent: no rules)."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], [Problem(where, "rules", "expected a list of {path, groups, trusted} rules")]
    rules, problems = [], []
    for i, item in enumerate(value):
        at = f"rules[{i}]"
        if not isinstance(item, dict):
            problems.append(Problem(where, at, "expected a mapping with path and groups and/or trusted"))
            continue
        unknown = [k for k in item if k not in RULE_KEYS]
        if unknown:
            problems.append(Problem(where, f"{at}.{field_name(unknown[0])}", f"unknown key (allowed: {', '.join(RULE_KEYS)})"))
            continue
        path, groups, trusted = item.get("path"), item.get("groups"), item.get("trusted")
        if not isinstance(path, str) or not path.strip():
            problems.append(Problem(where, f"{at}.path", "expected a folder (finance/) or a glob (uploads/*.pdf)"))
        elif groups is not None and (not isinstance(groups, list) or not groups
                                     or not all(isinstance(g, str) and g.strip() for g in groups)):
            problems.append(Problem(where, f"{at}.groups", "expected a non-empty list of group names"))
        elif trusted is not None and not isinstance(trusted, bool):
            problems.append(Problem(where, f"{at}.trusted", "expected true or false"))
        elif groups is None and trusted is None:
            problems.append(Problem(where, at, "a rule sets groups and/or trusted"))
        else:
            rules.append(Rule(path.strip(), tuple(g.strip() for g in groups) if groups else None, trusted))
    return rules, problems


def defaults(rel: str, rules: list[Rule], groups: tuple[str, ...]) -> dict[str, Any]:
    """The rule-and-flag defaults of one file: ``groups`` (when any) and ``trusted``."""
    out: dict[str, Any] = {"trusted": True}
    if groups:
        out["groups"] = list(groups)
    for rule in rules:
        if rule.matches(rel):
            if rule.groups is not None:
                out["groups"] = list(rule.groups)
            if rule.trusted is not None:
                out["trusted"] = rule.trusted
    return out


def document_id(rel: str) -> str:
    """A document's id from its relative path, always a valid id (``notes/Falcon plan.md`` ->
    ``notes/Falcon_plan.md``): characters outside ``A-Za-z0-9_.:/-`` become ``_``. A path longer than
    :data:`~hoprag.corpus.MAX_ID_CHARS`, with characters outside ASCII (which would otherwise
    collide: ``日本.md`` and ``中文.md``), or starting with a character an id cannot start with (Sphinx's
    ``_news.rst``, included by ``news.rst``: without its ``_`` the two would collide) keeps a readable prefix and
    ends in ``-`` and a digest of the whole path, so the id is deterministic and unique per path."""
    written = _UNSAFE.sub("_", rel)
    safe = written.lstrip("_.:/-") or "document"
    if len(safe) <= MAX_ID_CHARS and rel.isascii() and safe == written:
        return safe
    digest = hashlib.sha256(rel.encode("utf-8", "surrogateescape")).hexdigest()[:_DIGEST_CHARS]
    prefix = safe[:MAX_ID_CHARS - _DIGEST_CHARS - 1].rstrip("_.:/-")
    return f"{prefix}-{digest}" if prefix else digest


def file_defaults(path: Path, rel: str, title: str, mtime: float) -> dict[str, Any]:
    """``source``, ``updated`` (from ``mtime``, the ``st_mtime`` the caller's ``stat`` read) and ``title``
    of a file that does not state them."""
    day = dt.datetime.fromtimestamp(mtime, dt.timezone.utc).date()
    return {"source": path.as_uri(), "updated": day.isoformat(), "title": title or valid_text(Path(rel).stem)}
