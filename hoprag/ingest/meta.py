"""Metadata defaults for ordinary files, and the per-folder rules of ``corpus.yaml``.

What a file says (front matter, a JSONL line's fields) wins; then the last matching rule; then
``hoprag index --groups``. ``trusted`` defaults to true (the operator chose to index the file),
``source`` to the file's URI, ``updated`` to its modification date, ``title`` to the first heading
or the file name. There is never an implicit group: a document that gets none is an error.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..corpus import Problem, _field

RULE_KEYS = ("path", "groups", "trusted")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/-]")


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
            problems.append(Problem(where, f"{at}.{_field(unknown[0])}", f"unknown key (allowed: {', '.join(RULE_KEYS)})"))
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
    """A document's id from its relative path (``notes/Falcon plan.md`` -> ``notes/Falcon_plan.md``)."""
    return _UNSAFE.sub("_", rel).lstrip("_.:/-") or "document"


def file_defaults(path: Path, rel: str, title: str) -> dict[str, Any]:
    """``source``, ``updated`` and ``title`` of a file that does not state them."""
    mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc).date()
    return {"source": path.as_uri(), "updated": mtime.isoformat(), "title": title or Path(rel).stem}
