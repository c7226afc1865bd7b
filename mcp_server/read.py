"""The reader: the chapter's cue-based triple extractor and the integrity gate in front of it.

The hardened path (:func:`admit` then :func:`facts_from`) is the only way the product turns
documents into evidence: untrusted documents are dropped *before* extraction, so neither
their facts nor their directives can reach an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from .corpus import Doc
from .lexicon import Lexicon

Triple = tuple[str, str, str]
#: ``(subject, relation)`` -> ``[(object, doc_id), ...]`` with provenance, as the chapter's table.
FactTable = dict[tuple[str, str], list[tuple[str, str]]]
_SENTENCE = re.compile(r"[.\n]")


def _subject(pre: str) -> str:
    caps = [w for w in pre.split() if w[:1].isupper()]
    return caps[-1] if caps else (pre.split()[-1] if pre.split() else "")


def _object(post: str) -> str:
    obj = post.strip().rstrip(".")
    for sep in (" and ", " for ", " that ", " which ", ","):
        if sep in obj:
            obj = obj.split(sep)[0]
    return obj.strip()


def extract_facts(doc: Doc, lexicon: Lexicon) -> tuple[Triple, ...]:
    """Pull ``(subject, relation, object)`` triples from one document.

    Precomputed ``doc.triples`` win; otherwise, per sentence and per cue in lexicon order,
    the subject is the last capitalised word before the cue and the object the phrase after.
    """
    if doc.triples is not None:
        return doc.triples
    cues = lexicon.cues
    if doc.text.isascii():  # most passages state no fact: skip them (exact, as ASCII lower() is context-free)
        text = doc.text.lower()
        cues = tuple((cue, relation) for cue, relation in cues if cue in text)
    triples = []
    for sentence in _SENTENCE.split(doc.text) if cues else ():
        low = sentence.lower()
        for cue, relation in cues:
            if cue in low:
                i = low.index(cue)
                subj = _subject(sentence[:i])
                obj = _object(sentence[i + len(cue):])
                if subj and obj:
                    triples.append((subj, relation, obj))
    return tuple(triples)


def facts_from(docs: Iterable[Doc], extract: Callable[[Doc], Sequence[Triple]]) -> FactTable:
    """Index triples by ``(subject, relation)``, keeping ``(object, doc_id)`` provenance."""
    table: FactTable = {}
    for d in docs:
        for s, r, o in extract(d):
            table.setdefault((s, r), []).append((o, d.id))
    return table


@dataclass(frozen=True)
class Provenance:
    """The integrity gate's two independent controls.

    A document is evidence only if ingestion marked it ``trusted`` **and** its ``source`` starts
    with a prefix on the corpus allowlist (``allowlist.yaml``; ``None`` = no allowlist, flag
    only). One mislabelled flag or one bad allowlist entry alone cannot admit a hostile text.
    """

    allowlist: tuple[str, ...] | None = None

    def allowed(self, source: str) -> bool:
        return self.allowlist is None or any(source.startswith(prefix) for prefix in self.allowlist)

    def admits(self, doc: Doc) -> bool:
        return doc.trusted and self.allowed(doc.source)


def supported(triple: Triple, doc: Doc) -> bool:
    """A fact is evidence only if its subject and object occur verbatim in the text (the support span)."""
    return triple[0] in doc.text and triple[2] in doc.text


def admit(hits: Iterable[Doc], provenance: Provenance = Provenance()) -> tuple[list[Doc], list[str]]:
    """The integrity gate: split documents into admitted ones and the ids it dropped."""
    hits = list(hits)
    return [d for d in hits if provenance.admits(d)], [d.id for d in hits if not provenance.admits(d)]
