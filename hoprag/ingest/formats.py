"""Reading one file into records: Markdown (front matter optional), plain text, HTML, PDF, JSONL.

Every reader returns the record's own metadata (front matter or JSONL fields, validated later with
the corpus loader's rules), its body text and a title guess; a file it cannot read becomes one
:class:`~hoprag.corpus.Problem` naming it. HTML becomes Markdown-style text (``#`` headings,
blank-line paragraphs) so one chunker serves every format.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable

from ..corpus import Problem, _front_matter, json_lines

#: File suffixes indexed, by reader.
SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".jsonl")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)


@dataclass
class Record:
    """One document read from a file (a JSONL file holds many)."""

    where: str
    meta: dict[str, Any]
    body: str
    title: str
    headings: bool = True  # whether '#' lines in ``body`` are section headings


def _utf8(data: bytes, where: str) -> tuple[str | None, list[Problem]]:
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        return None, [Problem(where, "encoding", f"not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                                                 "re-save the file as UTF-8")]


def first_heading(text: str) -> str:
    m = _HEADING.search(text)
    return m.group(2).strip() if m else ""


def markdown(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    meta: dict[str, Any] = {}
    if text.startswith("---"):
        parsed, text, problems = _front_matter(text, str(path))
        if parsed is None:
            return [], problems
        meta = parsed
    return [Record(str(path), meta, text, first_heading(text))], []


def plain(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    return [Record(str(path), {}, text, "", headings=False)], []


class _Visible(HTMLParser):
    """Visible text of an HTML page, with headings as ``#`` lines and blocks as paragraphs."""

    BLOCKS = frozenset("p div section article main header footer aside li ul ol table tr blockquote pre br hr "
                       "dl dt dd figure figcaption form fieldset address".split())
    HIDDEN = frozenset("script style template noscript head svg iframe object nav".split())  # nav: site chrome

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.title, self.heading = "", ""
        self._hidden, self._in_title, self._level = 0, False, 0
        self._buf: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self.HIDDEN:
            self._hidden += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n")
            self._level, self._buf = int(tag[1]), []
        elif tag in self.BLOCKS:
            self.out.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self.HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif re.fullmatch(r"h[1-6]", tag) and self._level:
            text = " ".join("".join(self._buf).split())
            if text:
                self.out.append(f"{'#' * self._level} {text}\n\n")
                self.heading = self.heading or text
            self._level = 0
        elif tag in self.BLOCKS:
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self._hidden:
            return
        elif self._level:
            self._buf.append(data)
        else:
            self.out.append(data)


def html(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    parser = _Visible()
    parser.feed(text)
    parser.close()
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", "".join(parser.out))]
    body = "\n\n".join(p for p in paragraphs if p)
    return [Record(str(path), {}, body, " ".join(parser.title.split()) or parser.heading)], []


def pdf(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    try:
        from pypdf import PdfReader
    except ImportError:  # an install older than pypdf in the base dependencies
        return [], [Problem(str(path), "pdf", "reading PDFs needs pypdf: pip install pypdf", reason="not readable as PDF")]

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about odd files are not ours to print
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return [], [Problem(str(path), "pdf", "encrypted PDF: save a decrypted copy to index it, or leave it out",
                                reason="encrypted (PDF)")]
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or ""
    except Exception as exc:  # noqa: BLE001 - a parser of any file it is given: every failure is that file's
        return [], [Problem(str(path), "pdf", f"not a readable PDF ({type(exc).__name__}: {exc}); re-export it, or "
                            "leave it out", reason="not readable as PDF")]
    body = "\n\n".join(p.strip() for p in pages if p.strip())
    if not body:
        return [], [Problem(str(path), "pdf", "no text layer (a scanned PDF?): run OCR first or leave it out",
                            reason="without a text layer (scanned PDF?)")]
    return [Record(str(path), {}, body, str(title).strip(), headings=False)], []


def jsonl(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    records: list[Record] = []
    lines, bad = json_lines(text, str(path))
    problems += bad
    for where, record in lines:
        body = record.pop("text", None)
        if not isinstance(body, str):
            problems.append(Problem(where, "text", "expected the passage text as a string"))
            continue
        if "id" not in record:
            problems.append(Problem(where, "id", "missing: every JSONL line needs an id"))
            continue
        records.append(Record(where, record, body, "", headings=False))
    return records, problems


READERS: dict[str, Callable[[Path, bytes], tuple[list[Record], list[Problem]]]] = {
    ".md": markdown, ".markdown": markdown, ".txt": plain, ".html": html, ".htm": html, ".pdf": pdf, ".jsonl": jsonl}
