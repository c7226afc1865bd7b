"""The text rules every reader of the engine shares: where a sentence ends, what is a name, and when a
sentence refers back to the one before it.

One rule each, so the fact reader, the entity index, the highlights of a search hit and the chunker
cut text at the same sentence ends, the reader's subjects, the entity index's names, the relation
walk's next searches and the agent's start entity agree on what a name is, and the chunker keeps
together what a highlight quotes together.
"""

from __future__ import annotations

import re

#: Where a sentence ends: after ``.``, ``!`` or ``?`` and white space, when what follows can start one (a
#: capital, a digit, a quote or a bracket) and the stop ends no initial ("Harris W. Fawell"), no two-letter
#: abbreviation ("St. Louis", "Mr.") and no "e.g.", "i.e.", "vs.", "etc." ("v1.2" has no space: no end).
SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b[A-Z][a-z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\betc\.)"
                          r"\s+(?=[\"'`(\[*A-Z0-9])")

#: Inline code on one line (`` `BEGIN ... END` ``), its text the group: what is inside is code, whose stops end no
#: sentence.
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def sentence_ends(text: str, start: int = 0) -> list[re.Match[str]]:
    """The :data:`SENTENCE_END` matches in ``text`` from ``start`` that fall outside inline code: sqlparse's
    "Semicolons within certain SQL constructs like `BEGIN ... END` blocks are handled correctly" is one sentence,
    not two halves, the second beginning "END` blocks"."""
    code = [m.span() for m in INLINE_CODE.finditer(text)]
    return [m for m in SENTENCE_END.finditer(text, start) if not any(a < m.start() < b for a, b in code)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Each sentence of ``text`` as ``(start, end)`` (:func:`sentence_ends`), the white space between sentences in
    none."""
    ends = sentence_ends(text)
    return list(zip([0, *(m.end() for m in ends)], [*(m.start() for m in ends), len(text)]))


#: A fenced code block (Markdown; every format's reader writes its code this way): its lines are code, not sentences.
FENCE = re.compile(r"^[ \t]*(```+|~~~+)[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.M | re.S)

#: Lower-case words allowed inside a proper name ("Church of England", "Ludwig van Beethoven").
CONNECTORS = frozenset("of the de du la le del della von van der den da di des y and for upon on".split())
MONTHS = frozenset("january february march april may june july august september october november december".split())


def sentences(text: str) -> list[str]:
    """``text`` cut at its sentence ends and its line breaks (a heading, list item or table row is a line)."""
    return [line[a:b] for line in text.split("\n") for a, b in sentence_spans(line)]


def ends_clause(text: str) -> bool:
    """Does ``text`` end a sentence or clause (``.``, ``:``, ``!``, ``?``, ``;``)? A definition's term that does not
    reads as the line naming what follows it ("threads:") -- the Markdown, reStructuredText and HTML readers alike."""
    return text.endswith((".", ":", "!", "?", ";"))


def is_name(surface: str) -> bool:
    """A proper-name-like surface (every word capitalised or a connector), not a date or a number:
    some word is a capitalised one that is not a month.

    Bridges between passages are named things; "seventh studio album", "April and June" or "April
    4, 2010" are not, nor is a connector alone ("on" in "What does Falcon depend on?").
    """
    words = surface.split()
    if any(w[:1].islower() and w.lower() not in CONNECTORS for w in words):
        return False
    return any(w[:1].isalpha() and not w[:1].islower() and w.lower().strip(",.") not in MONTHS for w in words)


def is_entity(name: str) -> bool:
    """One name word: what the reader takes as a fact's subject and a relation walk searches for
    next (the chapter's rule: "Project Falcon" is read, and searched, as "Falcon")."""
    return len(name.split()) == 1 and is_name(name)


#: A sentence referring back to the one before it ("This variable can also be set to ...", "It is ...", "With these
#: configured, ...", "In that case ...", "If you are using this plugin, ...", "Instead of writing ..., it writes ..."):
#: it reads only with that one (an answer quoting it brings that one along; passages are not cut between the two
#: when they fit one) -- and so does one drawing a conclusion from it ("Therefore, they cannot be nested").
#: Nouns naming a part of the docs themselves: "this section" points at the page, not back.
_PAGE = r"section|chapter|tutorial|guide|page"
REFERS_BACK = re.compile(rf"(?:This|These|Those|It|They|Such)\b"
                         rf"|(?:With|Without|Given|Using|For|In) (?:this|these|that|those|such)\b"
                         rf"(?! (?:{_PAGE}|document|step|example|part)\b)"
                         rf"|(?:If|When|Once|Unless|While)\b[^,.;:\n]*?\bth(?:is|ese)\b(?! (?:{_PAGE})\b)"
                         r"|(?:Instead of|Unlike|Like|As with|Apart from)\b[^,.;:]*?,\s+(?:it|they)\b"
                         r"|(?:Therefore|Thus|Hence|Consequently|As a result|Because of (?:this|that))\b")
