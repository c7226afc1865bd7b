"""The integrity gate: which documents may become evidence, and which of their facts are supported.

It runs *before* extraction everywhere the product reads (:meth:`~hoprag.engine.Engine.evidence`),
so neither an untrusted document's facts nor its directives can reach an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .corpus import Doc
from .facts import Triple


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
