"""Literal search: exact, cheap and reproducible, for identifiers and error strings.

The needle is a plain substring, never a pattern, so a caller cannot make the server run an
expensive or malicious regular expression.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .corpus import Doc


def grep_lines(texts: Mapping[str, str], needle: str, k: int | None = None) -> list[tuple[str, str]]:
    """Return ``(name, line)`` for every line containing ``needle``, by name then line order."""
    if not needle:
        return []
    out: list[tuple[str, str]] = []
    for name in sorted(texts):
        for line in texts[name].splitlines():
            if needle in line:
                out.append((name, line))
                if k is not None and len(out) >= k:
                    return out
    return out


def grep(readable: Iterable[Doc], needle: str, k: int | None = None) -> list[tuple[str, str]]:
    """Literal matches over ``readable``: the documents the caller may read, chosen by the engine's
    permission check before anything is matched."""
    return grep_lines({d.id: d.text for d in readable}, needle, k)
