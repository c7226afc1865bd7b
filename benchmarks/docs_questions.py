"""The docs-QA question format (``docs_questions.jsonl``, described in ``DOCS_QUESTIONS.md``).

One JSON object per line. :func:`load_questions` checks every line, and with ``docs`` also the
gold against the documentation folder the questions were written from, so a mistyped page id or
an answer word that no longer occurs in its page is one clear error instead of a silently wrong
score. ``python -m benchmarks.docs_questions FILE --docs DIR`` runs the same check.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

KINDS = ("direct", "paraphrase", "two-page", "unanswerable")
SPLITS = ("dev", "holdout")
FIELDS = {"id": str, "question": str, "answer": list, "pages": list, "kind": str, "split": str}


class QuestionError(ValueError):
    """A question file that breaks the format: the message names file, line and field."""


def _check_row(row: object, where: str) -> dict:
    """The row if it follows the format; else a QuestionError naming the field and the fix."""
    if not isinstance(row, dict):
        raise QuestionError(f"{where}: expected a JSON object with fields {', '.join(FIELDS)}")
    extra = sorted(row.keys() - FIELDS.keys())
    if extra:
        raise QuestionError(f"{where}: field {extra[0]!r}: unknown key (allowed: {', '.join(FIELDS)})")
    for key, kind in FIELDS.items():
        if key not in row:
            raise QuestionError(f"{where}: field {key!r}: missing")
        if not isinstance(row[key], kind):
            raise QuestionError(f"{where}: field {key!r}: expected {kind.__name__}, got {type(row[key]).__name__}")
    for key in ("id", "question"):
        if not row[key].strip():
            raise QuestionError(f"{where}: field {key!r}: empty")
    if row["kind"] not in KINDS:
        raise QuestionError(f"{where}: field 'kind': {row['kind']!r} is not one of {', '.join(KINDS)}")
    if row["split"] not in SPLITS:
        raise QuestionError(f"{where}: field 'split': {row['split']!r} is not one of {', '.join(SPLITS)}")
    for key in ("answer", "pages"):
        if not all(isinstance(v, str) and v.strip() for v in row[key]):
            raise QuestionError(f"{where}: field {key!r}: every item must be a non-empty string")
    if row["kind"] == "unanswerable":
        for key in ("answer", "pages"):
            if row[key]:
                raise QuestionError(f"{where}: field {key!r}: must be [] for an unanswerable question")
        return row
    if not 1 <= len(row["answer"]) <= 3:
        raise QuestionError(f"{where}: field 'answer': give 1 to 3 expected words or phrases")
    want = 2 if row["kind"] == "two-page" else None
    if (want and len(set(row["pages"])) != want) or not row["pages"]:
        need = "two different pages" if want else "at least one page"
        raise QuestionError(f"{where}: field 'pages': a {row['kind']} question lists {need}")
    return row


def _plain(text: str) -> str:
    """``text`` as the gold is matched, page and phrase alike: lower case, inline code read as its text, and a line
    break a space (a phrase the source wraps onto the next line is one line)."""
    return " ".join(text.lower().replace("`", "").split())


def _check_gold(row: dict, docs: Path, where: str) -> None:
    """Each listed page exists under ``docs`` and holds the answer words (case-insensitive, inline-code backticks
    aside: "-g option" is in "The ``-g`` option ..."; a line break is a space, as it is where answers are scored).

    A direct or paraphrase question may list several pages, each answering on its own, so every
    page must hold every answer word; a two-page question needs both pages together, so each page
    must hold at least one answer word and every word must occur in one of them.
    """
    texts = {}
    for page in row["pages"]:
        path = docs / page
        if ".." in Path(page).parts or not path.is_file():
            raise QuestionError(f"{where}: field 'pages': {page!r} is not a file under {docs}")
        texts[page] = _plain(path.read_text(encoding="utf-8"))
    words = [_plain(w) for w in row["answer"]]
    for page, text in texts.items():
        missing = [w for w in words if w not in text]
        if row["kind"] != "two-page" and missing:
            raise QuestionError(f"{where}: field 'answer': {missing[0]!r} does not occur in {page}")
        if row["kind"] == "two-page" and len(missing) == len(words):
            raise QuestionError(f"{where}: field 'pages': {page} holds none of the answer words")
    for word in words:
        if not any(word in text for text in texts.values()):
            raise QuestionError(f"{where}: field 'answer': {word!r} occurs in none of the pages")


def load_questions(path: Path, docs: Path | None = None) -> list[dict]:
    """Every question of ``path``, checked; with ``docs``, their gold pages and answers too."""
    rows, seen = [], set()
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        try:
            row = _check_row(json.loads(line), where)
        except json.JSONDecodeError as err:
            raise QuestionError(f"{where}: not valid JSON ({err.msg}); write one object per line") from None
        if row["id"] in seen:
            raise QuestionError(f"{where}: field 'id': {row['id']!r} is used twice")
        seen.add(row["id"])
        if docs is not None:
            _check_gold(row, Path(docs), where)
        rows.append(row)
    if not rows:
        raise QuestionError(f"{path}: no questions")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Check a question file; print its counts per kind and split, or the first problem."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.docs_questions", description=main.__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--docs", type=Path, help="the documentation folder the page ids are relative to")
    args = parser.parse_args(argv)
    try:
        rows = load_questions(args.file, args.docs)
    except (QuestionError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    counts = Counter((r["kind"], r["split"]) for r in rows)
    print(f"{len(rows)} questions" + "".join(
        f"; {k}: {counts[k, 'dev']} dev, {counts[k, 'holdout']} holdout" for k in KINDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
