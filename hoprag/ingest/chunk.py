"""Chunking: long documents become passages on heading and paragraph boundaries within a size bound.

A heading starts a new passage and names the section of every passage under it; paragraphs are
packed into a passage while they fit; a paragraph longer than the bound is split between
sentences, and a sentence longer than the bound between words. Nothing is dropped or reordered.
"""

from __future__ import annotations

import re

#: The size bound of one passage, in characters (~250 words: a retrievable, citable unit).
MAX_PASSAGE_CHARS = 1500
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _pieces(block: str, limit: int) -> list[str]:
    """``block`` cut to at most ``limit`` characters: between sentences, else between words, else hard."""
    if len(block) <= limit:
        return [block]
    out: list[str] = []
    for unit in _SENTENCE_END.split(block):
        words = unit.split(" ") if len(unit) > limit else [unit]
        for word in words:
            while len(word) > limit:  # one unbroken run (a URL, a hash): cut it
                out.append(word[:limit])
                word = word[limit:]
            sep = " " if out and out[-1] else ""
            if out and len(out[-1]) + len(sep) + len(word) <= limit:
                out[-1] += sep + word
            else:
                out.append(word)
    return [p for p in out if p.strip()]


def chunk(body: str, headings: bool = True, limit: int = MAX_PASSAGE_CHARS) -> list[tuple[str, str]]:
    """``(section, text)`` passages of ``body`` in order; ``headings`` reads ``#`` lines as headings."""
    passages: list[tuple[str, str]] = []
    section, current = "", ""

    def flush() -> None:
        nonlocal current
        if current.strip():
            passages.append((section, current.strip()))
        current = ""

    for block in re.split(r"\n[ \t]*\n", body):
        block = block.strip()
        if not block:
            continue
        first, _, rest = block.partition("\n")
        heading = _HEADING.match(first) if headings else None
        if heading:
            flush()
            section = heading.group(1).strip()
            block = f"{section}\n{rest}".strip()
        for piece in _pieces(block, limit):
            if current and len(current) + 2 + len(piece) > limit:
                flush()
            current = f"{current}\n\n{piece}" if current else piece
    flush()
    return passages
