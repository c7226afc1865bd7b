"""The relation lexicon: how documents state a relation and how questions ask for it.

It is data (``relations.yaml`` in a corpus directory) so a new corpus can add relations
without code changes; a corpus without one reads no relation by cue (its prose is still
searched, and walked through the entities it names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .yamlfile import READ_ERRORS, mapping, read_yaml

class LexiconError(ValueError):
    """A relations file that cannot be used; the message names the file and field."""


@dataclass(frozen=True)
class Relation:
    """One relation: its name, the document cues that state it, the question phrases that ask it."""

    name: str
    cues: tuple[str, ...]
    asks: tuple[str, ...]


@dataclass(frozen=True)
class Lexicon:
    """An ordered set of relations; order fixes the order triples are extracted in."""

    relations: tuple[Relation, ...]

    @property
    def cues(self) -> tuple[tuple[str, str], ...]:
        """``(cue, relation)`` pairs in declaration order, as the chapter's ``CUES``."""
        return tuple((cue, r.name) for r in self.relations for cue in r.cues)

    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.relations)

    def asked_relation(self, question: str) -> str | None:
        """Return the relation a question asks for: the earliest ask phrase wins.

        English questions name the wanted attribute first ("Which *region* stores
        telemetry ..."), so position, then phrase length, decides between candidates.
        """
        low = question.lower()
        best: tuple[int, int, str] | None = None
        for r in self.relations:
            for phrase in r.asks:
                m = re.search(rf"(?<![a-z0-9-]){re.escape(phrase.lower())}(?![a-z0-9-])", low)
                if m and (best is None or (m.start(), -len(phrase)) < best[:2]):
                    best = (m.start(), -len(phrase), r.name)
        return best[2] if best else None


def _strings(value: object, where: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() and v.isprintable() for v in value):
        raise LexiconError(f"{where}: field '{field}': expected a non-empty list of non-empty, printable strings")
    return tuple(v.strip() for v in value)


def load_lexicon(path: Path | None = None) -> Lexicon:
    """Load a relations file; ``None`` or a missing file gives the empty lexicon."""
    if path is None or not path.exists():
        return Lexicon(())
    try:
        data = read_yaml(path)
    except READ_ERRORS as exc:
        raise LexiconError(f"{path}: cannot read relations file: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("relations"), list):
        raise LexiconError(f"{path}: field 'relations': expected a list of relations")
    relations, seen = [], set()
    for i, item in enumerate(data["relations"]):
        where = f"{path}: relations[{i}]"
        mapping(item, ("name", "cues", "asks"), where, LexiconError)
        name = item.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise LexiconError(f"{where}: field 'name': expected a snake_case relation name")
        if name in seen:
            raise LexiconError(f"{where}: field 'name': duplicate relation {name!r}")
        seen.add(name)
        cues = tuple(c.lower() for c in _strings(item.get("cues"), where, "cues"))
        asks = _strings(item.get("asks", [name.replace("_", " ")]), where, "asks")
        relations.append(Relation(name, cues, asks))
    return Lexicon(tuple(relations))
