"""The chapter's overlap tokenizer, shared by ranking, the gate and the cost model."""

import re

#: The chapter's ``[a-z0-9-]+``, widened to letters and digits of every script so that
#: non-English text is searchable too; on ASCII text the two are identical.
_WORD = re.compile(r"(?:[^\W_]|-)+")


def tokenize(text: str) -> list[str]:
    """Split text into lowercased overlap tokens (letters, digits, hyphens)."""
    return _WORD.findall(text.lower())


def token_count(text: str) -> int:
    """Return the number of overlap tokens in a string (the chapter's cost proxy)."""
    return len(tokenize(text))
