"""Reading one file into records, one reader per format: Markdown and MDX (front matter optional),
reStructuredText, plain text, HTML, PDF, JSONL -- the one registry (:data:`READERS`) ``hoprag index``
reads a folder with and the corpus loader (``--corpus``) reads its Markdown and JSONL with.

Every reader returns the record's own metadata (front matter or JSONL fields, validated later with
the corpus loader's rules), its body text and a title guess; a file it cannot read becomes one
:class:`Problem` naming it. Structured formats become Markdown with their markup reduced to text
(:mod:`.markup`): ``#`` headings, blank-line paragraphs, fenced code, so one chunker serves every format.
"""

from __future__ import annotations

import io
import json
import logging
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable

import yaml

from .text import ends_clause


@dataclass(frozen=True)
class Problem:
    """One validation failure: where (file or file:line), which field, what is wrong; ``reason``
    (optional) is the short kind ``hoprag index`` counts files by (``not valid UTF-8``)."""

    where: str
    field: str
    message: str
    reason: str = field(default="", compare=False)

    def __str__(self) -> str:
        # One line, always printable: file names, keys and parser messages may hold line breaks
        # or lone surrogates.
        text = " ".join(f"{self.where}: field '{self.field}': {self.message}".splitlines())
        return text.encode("utf-8", "backslashreplace").decode("utf-8")



_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


@dataclass
class Record:
    """One document read from a file (a JSONL file holds many)."""

    where: str
    meta: dict[str, Any]
    body: str
    title: str
    headings: bool = True  # whether '#' lines in ``body`` are section headings
    empty: str = ""  # why a file renders no text (it is skipped, not failed)
    notes: list[Problem] = field(default_factory=list)  # what was set aside to index it (one line each)


def _utf8(data: bytes, where: str) -> tuple[str | None, list[Problem]]:
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        return None, [Problem(where, "encoding", f"not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                                                 "re-save the file as UTF-8")]


def front_matter(raw: str, where: str) -> tuple[dict[str, Any] | None, str, list[Problem]]:
    """A Markdown file's YAML front matter and the text after it, or the problem naming what is wrong."""
    if not raw.startswith("---"):
        return None, "", [Problem(where, "front matter", "file must start with a '---' YAML front-matter block")]
    parts = re.split(r"^---[ \t]*\r?$", raw, maxsplit=2, flags=re.M)
    if len(parts) < 3:
        return None, "", [Problem(where, "front matter", "no closing '---' line: end the front matter with a line of "
                                  "three dashes (a file that starts with '---' opens YAML front matter)")]
    fix = "fix the front matter (the YAML between the '---' lines)"
    try:
        meta = yaml.safe_load(parts[1])
    except RecursionError:
        return None, "", [Problem(where, "front matter", f"invalid YAML: nested too deeply; {fix}")]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""  # the block starts on the first line
        return None, "", [Problem(where, "front matter", f"invalid YAML{at}: {exc.problem or exc.context}; {fix}")]
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: impossible dates, integers past Python's digit limit
        return None, "", [Problem(where, "front matter", f"invalid YAML: {exc}; {fix}")]
    if meta is None:
        meta = {}  # an empty block, or only comments, states nothing
    if not isinstance(meta, dict):
        return None, "", [Problem(where, "front matter", f"expected a mapping of fields (key: value lines); {fix}")]
    return meta, parts[2].strip(), []


def json_lines(text: str, path: str) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """Each non-blank line of a JSONL text as ``(path:line, object)``; a line that is not one JSON
    object is a problem naming it (the corpus loader and ``hoprag index`` read JSONL alike)."""
    out, problems = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(where, "json", f"invalid JSON: {exc.msg} at column {exc.colno}"))
            continue
        except RecursionError:
            problems.append(Problem(where, "json", "invalid JSON: nested too deeply"))
            continue
        except ValueError as exc:  # an integer past Python's digit limit
            problems.append(Problem(where, "json", f"invalid JSON: {exc}"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(where, "json", "expected one JSON object per line"))
            continue
        out.append((where, record))
    return out, problems


def first_heading(text: str) -> str:
    """The first heading of Markdown ``text`` (``#`` or underlined), never a ``#`` line inside code."""
    opening = _HEADING.match(text.partition("\n")[0])
    if opening:  # the usual page opens with its title (a '#' line never opens a fence)
        return opening.group(2).strip()
    from .markup import fence_end

    lines = text.split("\n")
    i = 0
    while i < len(lines):
        end = fence_end(lines, i)
        if end is not None:
            i = end
            continue
        m = _HEADING.match(lines[i])
        if m:
            return m.group(2).strip()
        if (lines[i].strip() and i + 1 < len(lines) and _SETEXT.match(lines[i + 1])
                and (i == 0 or not lines[i - 1].strip())):
            return lines[i].strip()
        i += 1
    return ""


def _markdown(path: Path, data: bytes, mdx: bool, strict: bool = False) -> tuple[list[Record], list[Problem]]:
    from .markup import markdown_text  # its patterns are compiled when a file is read, not at every start

    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    if strict:
        meta, body, problems = front_matter(text, str(path))
        return ([Record(str(path), meta, body, "")] if meta is not None else []), problems
    meta: dict[str, Any] = {}
    notes: list[Problem] = []
    if text.startswith("---"):
        parsed, body, problems = front_matter(text, str(path))
        if parsed is None:
            parsed, body, notes = _set_aside(text, str(path), problems)
            if parsed is None:
                return [], problems
        meta, text = parsed, body
        if "title" in meta and meta["title"] is not None and not isinstance(meta["title"], str):
            notes.append(Problem(str(path), "title", f"not text ({type(meta.pop('title')).__name__}): the page's "
                                 "first heading is its title; quote the title in the front matter",
                                 reason="with a title that is not text"))
    records, problems = _reduced(path, meta, text, markdown_text(text, mdx))
    records[0].notes += notes
    return records, problems


#: Front-matter keys that decide who reads a document or whether it is evidence: a page whose front
#: matter cannot be read is indexed without it only if it does not set one of them.
_GUARDED = re.compile(r"^\s*[\"']?(groups|trusted|source|id|updated)[\"']?\s*:", re.M)
_TITLE_LINE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.M)


def _set_aside(raw: str, where: str, problems: list[Problem]) -> tuple[dict[str, Any] | None, str, list[Problem]]:
    """A page whose front matter is not valid YAML (MkDocs sites have titles with a bare ``: ``): its
    text, indexed without the front matter (its ``title:`` line kept), and a note naming the file --
    unless the block sets who may read it or whether it is evidence, which is never guessed."""
    parts = re.split(r"^---[ \t]*\r?$", raw, maxsplit=2, flags=re.M)
    if len(parts) < 3 or _GUARDED.search(parts[1]):
        return None, "", []
    title = _TITLE_LINE.search(parts[1])
    meta = {"title": title.group(1).strip("'\"")} if title else {}
    note = Problem(where, "front matter", f"{problems[0].message.split('; fix')[0]}: indexed without its front matter"
                   + (" (its title line kept)" if title else "") + "; fix the YAML between the '---' lines to keep it",
                   reason="indexed without their broken front matter")
    return meta, parts[2].strip(), [note]


def _emptiness(raw: str, text: str, markup: str) -> str:
    """Why a file whose markup reduced to ``text`` has nothing to index ("" when it has text): empty, or only
    ``markup`` (what such a file holds that renders no words of its own)."""
    if text.strip():
        return ""
    if not raw.strip():
        return "an empty page (no text)"
    return f"no text of its own once its markup is reduced (only {markup})"


def _reduced(path: Path, meta: dict[str, Any], raw: str, text: str) -> tuple[list[Record], list[Problem]]:
    """The record of a file whose markup reduced to ``text``; one that reduced to nothing says why."""
    empty = _emptiness(raw, text, "includes, imports, components or comments")
    return [Record(str(path), meta, text, first_heading(text), empty=empty)], []


def markdown(path: Path, data: bytes, strict: bool = False) -> tuple[list[Record], list[Problem]]:
    """Markdown, front matter optional, its markup reduced to text. ``strict``: a corpus document
    (``--corpus``): front matter required, never set aside, and the text kept as written."""
    return _markdown(path, data, mdx=False, strict=strict)


def mdx(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    """MDX (Docusaurus): Markdown with ESM lines, JSX components and ``{/* */}`` comments."""
    return _markdown(path, data, mdx=True)


def rst(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    """reStructuredText (Sphinx): no front matter; its sections, code and directives become Markdown."""
    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    return _rst_text(path, text)


def _rst_text(path: Path, text: str) -> tuple[list[Record], list[Problem]]:
    """The record of reStructuredText already decoded (a ``.rst`` file, or a ``.txt`` file that is one)."""
    from .markup import rst_markdown

    return _reduced(path, {}, text, rst_markdown(text))


#: reStructuredText saved as ``.txt`` (Sphinx's ``source_suffix = '.txt'``: Django's docs, django-filter's) has a
#: title underlined and explicit markup -- a directive, a link target or a role; plain text has not both.
_RST_TITLE = re.compile(r"^[^\s=\-~^\"'`#*+][^\n]*\n([=\-~^\"'`#*+])\1{2,}[ \t]*$", re.M)
_RST_MARKUP = re.compile(r"^\.\.[ \t]+(?:[\w:-]+::|_[^:\n]+:)|:[\w:+.-]+:`[^`\n]+`", re.M)


#: A list, one entry a line (a spell checker's word list, pinned requirements, a file list), is no page: it has no
#: sentence to answer with, and its words -- every project and person the docs name, every dependency -- would make a
#: question's term look mentioned in the docs. It has at least LIST_LINES lines outside comments, LIST_SHARE of them
#: a single word or token (a requirement's ``\`` continuation aside).
LIST_LINES = 20
LIST_SHARE = 0.9
_CONTINUED = re.compile(r"\s+\\$")


def _listing_only(text: str) -> int:
    """How many lines a list holds, when the text is one (else 0): see :data:`LIST_SHARE`."""
    lines = [line.strip() for line in text.splitlines()]
    entries = [line for line in lines if line and not line.startswith("#")]
    single = sum(len(_CONTINUED.sub("", line).split()) == 1 for line in entries)
    return len(entries) if len(entries) >= LIST_LINES and single >= LIST_SHARE * len(entries) else 0


def plain(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    """Plain text as written -- or, when it is reStructuredText (:data:`_RST_TITLE`, :data:`_RST_MARKUP`), read as
    such: its roles and directives are markup, not words of the page. A list one entry a line is skipped
    (:data:`LIST_SHARE`)."""
    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    if _RST_TITLE.search(text) and _RST_MARKUP.search(text):
        return _rst_text(path, text)  # decoded once
    listed = _listing_only(text)
    if listed:
        return [Record(str(path), {}, text, "", headings=False, empty=f"a list, one word a line ({listed} lines: "
                       "a word list, requirements or file names), with no sentence to answer from")], []
    return [Record(str(path), {}, text, "", headings=False)], []


class _Visible(HTMLParser):
    """Visible text of an HTML page, with headings as ``#`` lines, blocks as paragraphs and ``<pre>``
    blocks as fenced code with their own line breaks (held aside as ``\0n\0`` until the page's
    whitespace is collapsed)."""

    BLOCKS = frozenset("p div section article main header footer aside li ul ol table tr blockquote br hr "
                       "dl dt dd figure figcaption form fieldset address".split())
    HIDDEN = frozenset("script style template noscript head svg iframe object nav".split())  # nav: site chrome
    #: A heading's or an entry's permalink (Sphinx's and MkDocs' "headerlink", Docusaurus' "hash-link"): its text
    #: ("#", "¶") is a link marker, not words ("Changelog › 1.20.0#" would name no release).
    PERMALINKS = frozenset({"headerlink", "hash-link"})

    def __init__(self, main: str = "") -> None:
        """``main``: how the page marks its content (:func:`_content_mark`: ``"article"``, ``"main"``, or ``""``
        for no mark) -- only that is read, not the site's chrome around it ("Skip to main content", "Back to top",
        the previous and next pages, the copyright)."""
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.code: list[str] = []  # the fenced <pre> blocks, in order
        self.title, self.heading = "", ""
        self._hidden, self._in_title, self._level, self._pre, self._inline_code = 0, False, 0, 0, 0
        self._buf: list[str] = []
        self._lang = ""
        self._links: list[bool] = []  # for each open <a>: is it a permalink (hidden)?
        self._item = False  # a list item has opened and holds no text yet
        self._term: int | None = None  # where the open <dt>'s text starts in ``out``
        self.shown = self.linked = 0  # characters of visible text, and of them inside links
        self._main: tuple[str, int] | None = None  # the open main element's tag, and how deep in same-named tags
        self._mark = main
        self.found = not main  # whether the content was found (nothing is sought without a mark)
        self._hidden += bool(main)  # outside the main content, until it starts

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if self._main is not None:
            self._main = (self._main[0], self._main[1] + (tag == self._main[0]))
        elif self._mark and (tag == self._mark or (self._mark == "main" and ("role", "main") in attrs)):
            self._main, self.found = (tag, 1), True
            self._hidden = max(0, self._hidden - 1)
        if tag == "a":
            permalink = not self.PERMALINKS.isdisjoint(" ".join(v or "" for k, v in attrs if k == "class").split())
            self._links.append(permalink)
            self._hidden += permalink
        elif tag == "title":
            self._in_title = True
        elif tag in self.HIDDEN:
            self._hidden += 1
        elif self._hidden:
            return
        elif tag == "pre" or (self._pre and tag == "code"):
            if tag == "pre" and not self._pre:
                self._buf, self._lang = [], ""
            self._pre += tag == "pre"
            classes = " ".join(v or "" for k, v in attrs if k == "class")
            lang = re.search(r"\b(?:language|lang|highlight)-([\w+#.-]+)", classes)
            self._lang = self._lang or (lang.group(1) if lang else "")
        elif self._pre:
            if tag == "br":
                self._buf.append("\n")
        elif tag == "code" and not self._level:
            self._inline_code += 1
            self.out.append("`")
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n")
            self._level, self._buf = int(tag[1]), []
        elif tag == "dt":
            self.out.append("\n\n")
            self._term = len(self.out)
        elif tag == "li":  # a list item reads as one, so its later sentences stand under what it starts with
            self.out.append("\n\n- ")
            self._item = True
        elif tag in self.BLOCKS and not self._item:  # (the item's own paragraph continues its marker's line)
            self.out.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if self._main is not None and tag == self._main[0]:
            self._main = (tag, self._main[1] - 1) if self._main[1] > 1 else None
            self._hidden += self._main is None  # the main content is over: what follows is chrome again
        if tag == "a":
            self._hidden -= self._links.pop() if self._links else False
        elif tag == "title":
            self._in_title = False
        elif tag in self.HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif self._hidden:
            return
        elif tag == "pre" and self._pre:
            self._pre -= 1
            if not self._pre:
                code = "".join(self._buf).strip("\n")
                if code.strip():
                    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", code)), default=0))
                    self.code.append(f"{fence}{self._lang}\n{code}\n{fence}")
                    self.out.append(f"\n\n\0{len(self.code) - 1}\0\n\n")
        elif self._pre:
            return
        elif tag == "code" and self._inline_code:
            self._inline_code -= 1
            self.out.append("`")
        elif re.fullmatch(r"h[1-6]", tag) and self._level:
            text = " ".join("".join(self._buf).split())
            if text:
                self.out.append(f"{'#' * self._level} {text}\n\n")
                self.heading = self.heading or text
            self._level = 0
        elif tag == "dt" and self._term is not None:  # a term names what the definition after it is about: "term:"
            term = "".join(self.out[self._term:]).strip()
            self._term = None
            self.out.append(":\n\n" if term and not ends_clause(term) else "\n\n")
        elif tag in self.BLOCKS:
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._hidden:
            return
        shown = len(data.strip())
        self.shown += shown
        self.linked += shown if self._links else 0
        if self._level or self._pre:
            self._buf.append(data)
        else:
            self._item = self._item and not data.strip()
            self.out.append(data)


#: How a built documentation page marks its content: one ``<article>`` (MkDocs Material, Docusaurus, Furo,
#: pydata-sphinx-theme), else ``<main>`` or an element with ``role="main"`` (Sphinx's classic themes' ``<div
#: class="body" role="main">``, Read the Docs').
_ARTICLE = re.compile(r"(?i)<article\b")
_MAIN = re.compile(r"(?i)<main\b|\brole\s*=\s*[\"']?main(?=[\"'\s>])")


def _content_mark(page: str) -> str:
    """``"article"`` when the page holds one article, else ``"main"`` when it marks its main content, else ``""``: a
    page of several articles (a blog's list) is read whole, within its main element if it has one."""
    if len(_ARTICLE.findall(page)) == 1:
        return "article"
    return "main" if _MAIN.search(page) else ""


#: A template's statement tag (Jinja, Django, Liquid, Nunjucks: ``{% extends "base.html" %}``, ``{%- for x in y %}``).
_TEMPLATE_TAG = re.compile(r"\{%-?\s*[A-Za-z_]\w*\b.*?-?%\}", re.S)
#: Where a page shows code or hides text, which holds no tag of its own: ``<pre>``, ``<code>``, scripts, comments.
_CODE_ELEMENTS = re.compile(r"(?is)<(pre|code|script|style|textarea)\b.*?</\1\s*>|<!--.*?-->")
#: As many statement tags outside code as make a file a template: a pair ("{% if %}" ... "{% endif %}"), not one a
#: page mentions in passing.
TEMPLATE_TAGS = 2
#: A page whose visible text is this much link text, and at least LINKS_CHARS long, is a page of links -- Sphinx's
#: generated ``genindex.html``, a contents page --, not one to answer from: every name it lists would look mentioned.
LINKS_SHARE = 0.9
LINKS_CHARS = 500


def _read(page: str, mark: str) -> _Visible:
    """The page parsed, reading only the content ``mark`` names (:func:`_content_mark`; ``""``: the whole page)."""
    parser = _Visible(main=mark)
    parser.feed(page.replace("\0", "\ufffd"))
    parser.close()
    return parser


def html(path: Path, data: bytes) -> tuple[list[Record], list[Problem]]:
    """An HTML page's visible text -- of a built site's page, its content (:func:`_content_mark`). A template (a
    Sphinx theme's ``_templates/layout.html``, MkDocs' ``overrides/``, Jekyll's ``_layouts/``: :data:`TEMPLATE_TAGS`
    statement tags outside code) is no page: the site generator fills it with pages when it builds, so it has no text
    of its own to index; a page whose markup holds no text (a logo link) has none either, and a page of links
    (:data:`LINKS_SHARE`) none to answer from -- all are skipped, not failed."""
    text, problems = _utf8(data, str(path))
    if text is None:
        return [], problems
    parser = _read(text, _content_mark(text))
    if not parser.found:  # the mark was in a comment or a script: no such element, the page is read whole
        parser = _read(text, "")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", "".join(parser.out))]
    body = "\n\n".join(p for p in paragraphs if p)
    body = re.sub(r"\0(\d+)\0", lambda m: parser.code[int(m.group(1))], body)
    tags = len(_TEMPLATE_TAG.findall(_CODE_ELEMENTS.sub(" ", text)))
    if tags >= TEMPLATE_TAGS:
        empty = (f"a page template ({tags} '{{% ... %}}' tags outside code): the site generator fills it in with "
                 "pages, so it has no text of its own")
    elif parser.shown >= LINKS_CHARS and parser.linked >= LINKS_SHARE * parser.shown:
        empty = (f"a page of links ({parser.linked * 100 // parser.shown} % of its text: an index or contents page), "
                 "with no text of its own to answer from")
    else:
        empty = _emptiness(text, body, "links, images or scripts")
    return [Record(str(path), {}, body, " ".join(parser.title.split()) or parser.heading, empty=empty)], []


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


#: The reader of each indexed file suffix.
READERS: dict[str, Callable[[Path, bytes], tuple[list[Record], list[Problem]]]] = {
    ".md": markdown, ".markdown": markdown, ".mdx": mdx, ".rst": rst, ".txt": plain, ".html": html, ".htm": html,
    ".pdf": pdf, ".jsonl": jsonl}
