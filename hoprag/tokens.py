"""Text analysis, once for every ranker and reader: tokens, accent folding, function words.

The chapter's overlap ranker uses :func:`tokenize` alone; the BM25 rankers, the entity index and
the multi-hop walker also fold accents (:func:`fold`) and skip function words (:data:`STOP`).
"""

import functools
import re
import unicodedata

#: The chapter's ``[a-z0-9-]+``, widened to letters and digits of every script so that
#: non-English text is searchable too; on ASCII text the two are identical. A token is a run of
#: letters, digits and hyphens: found as runs of one character class (word characters and hyphens,
#: twice as fast as an alternation tried per character), then split at the underscores they hold.
_RUN = re.compile(r"[-\w]+")

#: English function words: never a bridge on their own, dropped from follow-up queries.
STOP = frozenset(
    "a an the of in on at to for by with from and or not no is was were are be been being am who what which "
    "when where whose whom why how many much did do does done that this these those as it its his her hers "
    "their theirs he she they them him there than then into onto after before during one same also s "
    # the asker's own words and the pieces contractions leave ("I'm", "don't"): never what a question is about
    "i me my mine we our ours us you your yours can could should would m ll ve re t d don doesn didn isn aren "
    "wasn weren hasn haven hadn won wouldn shouldn couldn mustn needn".split())


def tokenize(text: str) -> list[str]:
    """Split text into lowercased overlap tokens (letters, digits, hyphens)."""
    runs = _RUN.findall(text.lower())
    return [t for run in runs for t in run.split("_") if t] if "_" in text else runs


def token_count(text: str) -> int:
    """Return the number of overlap tokens in a string (the chapter's cost proxy)."""
    return len(tokenize(text))


def fold(text: str) -> str:
    """Strip diacritics (NFKD, drop combining marks) so spellings with and without accents meet.

    A question spelling "Tekeze" must find "Tekezé", as Lucene's ASCII folding does.
    """
    if text.isascii():
        return text
    return unicodedata.normalize("NFKD", text).translate(_combining())


@functools.cache
def _combining() -> dict[int, None]:
    """Every combining mark (all below U+30000), to delete in one ``str.translate``."""
    return {cp: None for cp in range(0x30000) if unicodedata.combining(chr(cp))}


#: An identifier written in CamelCase ("SandboxedEnvironment", "HTTPServer", "OpenAI") or joined by
#: hyphens ("X-Line-Length", "git-blame-ignore-revs"), and its parts.
_CAMEL = re.compile(r"\b(?=\w*[a-z0-9][A-Z]|[A-Z]{2,}[a-z])[A-Za-z0-9]{3,}\b|\b[^\W_]+(?:-[^\W_]+)+\b")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _parts(identifier: str) -> str:
    return " ".join(p for part in identifier.split("-")
                    for p in (_PARTS.findall(part) if part.isascii() and part.isalnum() else [part]))


def identifiers(text: str) -> str:
    """``text`` with each CamelCase or hyphenated identifier followed by its words ("SandboxedEnvironment
    Sandboxed Environment", "X-Line-Length X Line Length"): documentation names things in code, and
    people ask about them in words. The BM25 rankers and :mod:`.assess` read text through this; the
    chapter's overlap ranker does not."""
    return _CAMEL.sub(lambda m: f"{m.group()} {_parts(m.group())}", text)


def content(text: str) -> list[str]:
    """Folded tokens of ``text`` that are not function words, in order."""
    return [t for t in tokenize(fold(text)) if t not in STOP]
