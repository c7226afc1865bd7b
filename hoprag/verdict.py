"""The evidence gate (verdicts): relevance and support are graded apart, and disagreement is explicit.

A retrieval score says what to inspect; support decides what may be cited. When supported,
trusted passages disagree the gate says ``conflict`` and :func:`resolve` applies one
documented policy -- the newest ``updated`` date wins, equal dates stay unresolved -- and
never falls back to document or rank order.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Iterable, Sequence

from .corpus import Doc
from .facts import Triple
from .tokens import tokenize

@dataclass(frozen=True)
class Verdict:
    """A structured evidence grade (CRAG-style): ``action`` maps relevance × support to a repair."""

    passage: str
    relevant: bool
    supported: bool
    triple: Triple | None
    action: str


def assess(doc: Doc, query: str, subject: str, relation: str, facts: Sequence[Triple]) -> Verdict:
    """Grade one passage: relevant = shares ≥ 2 query tokens; supported = states ``subject relation ?``.

    Returns ``cite`` for a supported passage, ``reformulate`` for a relevant but unsupported
    one, ``discard`` otherwise. ``facts`` are the passage's triples from the reader.
    """
    relevant = len(set(tokenize(query)) & set(tokenize(doc.text))) >= 2
    found = [t for t in facts if t[0] == subject and t[1] == relation]
    if found:
        return Verdict(doc.id, relevant, True, found[0], "cite")
    return Verdict(doc.id, relevant, False, None, "reformulate" if relevant else "discard")


def assess_all(
    docs: Iterable[Doc], query: str, subject: str, relation: str, facts: dict[str, Sequence[Triple]]
) -> list[Verdict]:
    """Assess each passage; when supported passages disagree on the object, each says ``conflict``."""
    verdicts = [assess(d, query, subject, relation, facts.get(d.id, ())) for d in docs]
    objects = {v.triple[2] for v in verdicts if v.supported and v.triple}
    if len(objects) > 1:
        verdicts = [Verdict(v.passage, v.relevant, v.supported, v.triple, "conflict") if v.supported else v
                    for v in verdicts]
    return verdicts


@dataclass(frozen=True)
class Resolution:
    """What the evidence supports: an answer with its citations, or why there is none.

    ``status`` is ``agreed`` (every supporting passage says the same), ``newest`` (a conflict
    settled by the freshness policy; ``superseded`` lists the losing passages), ``unresolved``
    (the newest passages disagree: abstain or escalate) or ``unsupported`` (nothing supports).
    """

    answer: str | None
    cited: tuple[str, ...]
    status: str
    superseded: tuple[str, ...] = ()


def resolve(verdicts: Iterable[Verdict], updated: dict[str, dt.date | None]) -> Resolution:
    """Apply the conflict policy to graded passages; ``updated`` maps passage id to its date."""
    supported = [v for v in verdicts if v.supported and v.triple]
    if not supported:
        return Resolution(None, (), "unsupported")
    objects = {v.triple[2] for v in supported}
    if len(objects) == 1:
        return Resolution(supported[0].triple[2], tuple(v.passage for v in supported), "agreed")
    dated = [(updated.get(v.passage) or dt.date.min, v) for v in supported]
    newest = max(d for d, _ in dated)
    top = [v for d, v in dated if d == newest]
    if len({v.triple[2] for v in top}) > 1:
        return Resolution(None, tuple(v.passage for v in top), "unresolved",
                          tuple(v.passage for d, v in dated if d != newest))
    winner = top[0].triple[2]
    return Resolution(winner, tuple(v.passage for v in top), "newest",
                      tuple(v.passage for v in supported if v.triple[2] != winner))
