"""A labelled question set (a corpus's ``questions.yaml``): who asks, where the walk starts, what answers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .access import Access


@dataclass(frozen=True)
class Question:
    """A labelled question: who asks, where the walk starts, which relation answers it.

    ``expected`` is ``None`` when the correct behaviour is to abstain.
    """

    id: str
    text: str
    groups: frozenset[str]
    start: str
    goal: str
    expected: str | None


def load_questions(path: str | Path, access: Access) -> tuple[Question, ...]:
    """Read ``questions.yaml``; each question names a principal of the access file."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return tuple(
        Question(q["id"], q["text"], access.principal(q["principal"]).groups, q["start"], q["goal"], q.get("expected"))
        for q in data["questions"]
    )


def score(answer: str | None, expected: str | None) -> bool:
    """True when a required abstention held or the answer matched."""
    return answer is None if expected is None else answer == expected
