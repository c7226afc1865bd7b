"""The reader: the chapter's cue-based triple extractor and fact tables with provenance.

The reader trusts nothing by itself: the product reads only what :mod:`.integrity` admits
(the engine's ``evidence`` and ``table``), so an untrusted document's facts never reach an answer.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from .corpus import Doc
from .lexicon import Lexicon
from .text import is_entity, sentences

Triple = tuple[str, str, str]
#: ``(subject, relation)`` -> ``[(object, doc_id), ...]`` with provenance, as the chapter's table.
FactTable = dict[tuple[str, str], list[tuple[str, str]]]


def _subject(pre: str) -> str:
    names = [w for w in pre.split() if is_entity(w)]
    return names[-1] if names else (pre.split()[-1] if pre.split() else "")


def _object(post: str) -> str:
    obj = post.strip().rstrip(".")
    for sep in (" and ", " for ", " that ", " which ", ","):
        if sep in obj:
            obj = obj.split(sep)[0]
    return obj.strip()


def extract_facts(doc: Doc, lexicon: Lexicon) -> tuple[Triple, ...]:
    """Pull ``(subject, relation, object)`` triples from one document.

    Precomputed ``doc.triples`` win; otherwise, per sentence and per cue in lexicon order,
    the subject is the last name word (:func:`~hoprag.text.is_entity`) before the cue and the object the phrase after.
    """
    if doc.triples is not None:
        return doc.triples
    cues = lexicon.cues
    if doc.text.isascii():  # most passages state no fact: skip them (exact, as ASCII lower() is context-free)
        text = doc.text.lower()
        cues = tuple((cue, relation) for cue, relation in cues if cue in text)
    triples = []
    for sentence in sentences(doc.text) if cues else ():
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
