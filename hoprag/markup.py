"""Documentation markup reduced to the text a reader of the rendered page sees, as plain Markdown.

Documentation sources are written for a renderer: MkDocs/pymdownx admonitions, content tabs and
``///`` blocks, Docusaurus/MDX admonitions, ESM lines and JSX components, MyST and
reStructuredText directives and roles, snippet includes, HTML, attribute lists, icon shortcodes,
link syntax. Indexed raw they become passages of noise (``--8<-- "x.md"``, ``{ .md-button }``)
and they hide the structure the chunker reads (an admonition's indented body parses as a code
block). Every construct is reduced here, generically, to what it renders: a container's title
becomes a line ending in ``:`` followed by its dedented body, a link its text, an image its alt
text, a tag or an include nothing. Lists, tables, emphasis and inline code stay Markdown, and
fenced code is never touched (an answer may quote it): every pass skips fences.

The block structure itself (headings, fences, paragraphs) is left to a maintained Markdown parser
in :mod:`hoprag.ingest.chunk`; what is here is only what no parser does for us: deciding what a container or a
directive *renders as*.
"""

from __future__ import annotations

import csv
import html
import re
from typing import Callable

from .text import ends_clause

#: A fence opener: indentation, blockquote markers or a list item's marker, then three or more backticks or tildes.
_FENCE = re.compile(r"^([ \t]*(?:>[ \t]?)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?)(`{3,}|~{3,})(.*)$")
#: MkDocs/pymdownx admonitions (``!!! note "Title"``, ``??? tip``, ``???+``) and content tabs (``=== "Python"``).
_ADMONITION = re.compile(r'^([ \t]*)(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)?[^"\n]*?(?:"([^"]*)")?[ \t]*$')
_TAB = re.compile(r'^([ \t]*)===[!+]*[ \t]+"([^"]*)"[ \t]*$')
#: pymdownx blocks: ``/// name | title`` ... ``///`` (more slashes nest).
_BLOCK = re.compile(r"^([ \t]*)(/{3,})[ \t]*([\w-]+)[ \t]*(?:\|[ \t]*(.*?))?[ \t]*$")
#: Docusaurus admonitions (``:::note Title``, ``:::tip[Title]``) and MyST colon fences (``:::{note} Title``).
_COLONS = re.compile(r"^([ \t]*)(:{3,})[ \t]*(?:\{([\w:.-]+)\}|([\w-]+))(?:\[(.*)\])?[ \t]*(.*?)[ \t]*$")
#: Lines that include other files (pymdownx snippets, mkdocs-include-markdown, FastAPI-style includes).
_INCLUDE = re.compile(r"^[ \t]*(?:;?-{1,}8<-{1,}(?:[ \t].*)?|\{\*.*\*\}|\{!.*!\})[ \t]*$")
#: mkdocstrings' autodoc line (``::: package.module.Class``, its YAML options indented under it): the API page it
#: stands for is generated when the site is built; in the source it holds no text. A Docusaurus admonition
#: (``:::note``) names one word and closes with ``:::``; this names a dotted path, or has ``options:`` under it.
_AUTODOC = re.compile(r"^:::[ \t]+[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+[ \t]*$")
_AUTODOC_NAME = re.compile(r"^:::[ \t]+[A-Za-z_][\w.]*[ \t]*$")
_AUTODOC_OPTIONS = re.compile(r"^[ \t]+(?:options|handler|selection|rendering):")
_ABBREVIATION = re.compile(r"^[ \t]*\*\[[^\]]+\]:.*$")
_LINK_DEFINITION = re.compile(r"^[ \t]{0,3}\[(?!\^)([^\]]+)\]:[ \t]*\S+.*$")
_ESM = re.compile(r"^(?:import|export)[ \t{*]")
_SNIPPETS = re.compile(r"^[ \t]*-{2,}8<-{2,}[ \t]*$")
_FENCE_HEADS, _DROPPED_HEADS, _CONTAINER_HEADS = frozenset("`~>-*+0123456789"), frozenset("-;{*[("), frozenset("!?=/:")
#: A line the line pass may change (its first character after spaces is one of the heads above):
#: without one, and outside MDX, the pass is skipped (searched after a newline, as fast as a substring).
_MARKUP_LINE = re.compile(r"\n[ \t]*[`~>\-*+0-9;{\[(!?=/:]")
_MYST_TARGET = re.compile(r"^\([\w.:-]+\)=[ \t]*$")
_OPTION = re.compile(r"^[ \t]*:[\w-]+:(?:[ \t].*)?$")
_NAMED_OPTION = re.compile(r"[ \t]*:([\w-]+):[ \t]*(.*?)[ \t]*$")
#: reStructuredText's short form of an anonymous hyperlink target ("__ https://commonmark.org/").
_ANONYMOUS_TARGET = re.compile(r"^__[ \t]+\S+[ \t]*$")

_CODE_SPAN = re.compile(r"(`+)(?!`)(?:[^\n]|\n(?![ \t]*\n))*?(?<!`)\1(?!`)")
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")
_SPACES = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
_BLANKS = re.compile(r"\n(?:[ \t]*\n){2,}")
#: A MyST role ("{py:func}`load`"), where a word may start -- not braces in code ("`{variable}` and `{value}`", Hatch's
#: placeholders; "`thinking={...}`").
_MYST_ROLE = re.compile(r"(?<![^\s(\[\"'])\{[A-Za-z][\w:.+-]*\}(`+)([\s\S]*?)\1")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_JSX_COMMENT = re.compile(r"\{/\*[\s\S]*?\*/\}")
_IMAGE = re.compile(r"!\[((?:[^\[\]]|\[[^\[\]]*\])*)\](?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])")
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\](?:\(\s*(?:[^()\s]|\([^()]*\))*(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
                   r"|\[[^\]\n]*\])")
_SHORTCUT = re.compile(r"\[([^\[\]\n]+)\](?![(\[:])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+)>")
_LABELLED_TAG = re.compile(r"^[ \t]*<[A-Za-z][\w.-]*\b[^<>]*?\b(?:label|title)=(\"|')(.*?)\1[^<>]*>[ \t]*$", re.M)
_BREAK = re.compile(r"<br[ \t]*/?>", re.I)
_TAG = re.compile(r"</?[A-Za-z][\w.-]*(?:[ \t\n][^<>]*)?/?>")
_ATTR = r"(?:[.#][^\s{}]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+))"
_ATTR_LIST = re.compile(rf"[ \t]*\{{:?[ \t]*{_ATTR}(?:[ \t]+{_ATTR})*[ \t]*\}}")
_ICON = re.compile(r":(?:material|octicons|fontawesome|simple|lucide)-[\w-]+:[ \t]?")
#: A definition list's definition line (MyST, Python-Markdown's def_list): ": text".
_DEFINITION = re.compile(r"^:[ \t]+(\S.*)$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?$")

#: Directives (reStructuredText, MyST) whose body is code, and those that render no text of the page itself
#: (a table of contents, an include, an image); autodoc's ``auto*`` read the code (:func:`_generated`).
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "code-cell", "doctest", "testcode", "testoutput",
                              "code-tab",  # sphinx-tabs' tab of code ("# a comment" in it is no heading)
                              "parsed-literal"})
_DROPPED_DIRECTIVES = frozenset({"toctree", "contents", "include", "literalinclude", "image", "raw", "highlight",
                                 "index", "meta", "currentmodule", "module", "sectionauthor", "codeauthor",
                                 "moduleauthor", "default-role", "role", "tabularcolumns", "title",
                                 "inheritance-diagram", "graphviz",
                                 "testsetup", "testcleanup"})  # doctest's set-up code: not shown on the page
#: Directives that only wrap their body (a condition, a layout, a figure's caption): the body, no title.
_WRAPPERS = frozenset({"only", "ifconfig", "container", "rst-class", "class", "cssclass", "figure", "tab-set", "tabs",
                       "grid"})
#: ``.. class:: OrderedMultiDict(mapping=None)`` describes a Python class (Sphinx's default domain), titled by its name;
#: docutils' ``.. class:: special`` only sets a (lower-case) CSS class on what follows.
_PY_CLASS = re.compile(r"[A-Z(.]")
#: docutils' admonitions (and Sphinx's): text on the directive's line is their body's first line.
_ADMONITIONS = frozenset({"attention", "caution", "danger", "error", "hint", "important", "note", "tip", "warning",
                          "seealso", "todo"})
_VERSIONED = {"versionadded": "New in version", "versionchanged": "Changed in version",
              "deprecated": "Deprecated since version", "versionremoved": "Removed in version",
              # ... and Sphinx 7.3's names for them
              "version-added": "New in version", "version-changed": "Changed in version",
              "version-deprecated": "Deprecated since version", "version-removed": "Removed in version"}
#: The title Sphinx shows for an admonition whose name is not its title.
_SHOWN_AS = {"seealso": "See also"}


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _dedent(lines: list[str]) -> list[str]:
    """``lines`` less their common indentation (blank lines do not count)."""
    cut = min((_indent_of(x) for x in lines if x.strip()), default=0)
    return [x[cut:] if x.strip() else "" for x in lines]


def fence_end(lines: list[str], start: int) -> int | None:
    """If ``lines[start]`` opens a fence, the index just past its closing line (or the end), else None."""
    line = lines[start]
    if "```" not in line and "~~~" not in line:  # what every fence holds: most lines are over in one C scan
        return None
    m = _FENCE.match(line)
    if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
        return None
    close = re.compile(rf"^[ \t]*(?:>[ \t]?)*{re.escape(m.group(2)[0])}{{{len(m.group(2))},}}[ \t]*$")
    for j in range(start + 1, len(lines)):
        if close.match(lines[j]):
            return j + 1
    return len(lines)


def _indented_end(lines: list[str], start: int, indent: int) -> int:
    """Past the last line from ``start`` of the block indented deeper than ``indent`` (blank lines
    inside it belong to it; trailing ones do not)."""
    end, j = start, start
    while j < len(lines):
        if lines[j].strip():
            if _indent_of(lines[j].expandtabs(4)) <= indent:
                break
            end = j + 1
        j += 1
    return end


def _closing(lines: list[str], start: int, pattern: re.Pattern) -> int:
    """The first line from ``start`` matching ``pattern`` outside fenced code (``len(lines)``: none)."""
    j = start
    while j < len(lines):
        if pattern.match(lines[j]):
            return j
        end = fence_end(lines, j)
        j = end if end is not None else j + 1
    return len(lines)


def _titled(title: str) -> str:
    """A container's title as the line that introduces its body: it ends in ':' unless punctuated."""
    title = title.strip()
    return title if not title or title[-1] in ".:!?" else f"{title}:"


def _generated(name: str, args: str, body: list[str]) -> bool:
    """Is a directive autodoc's (``autoclass``, ``autofunction``, ...) with nothing written under it or in it? The
    docstring it renders is read from the code, not the page; what the page writes under it (an example, a note)
    renders after that docstring, titled by the object's name like any description -- and so does a signature the page
    writes out (``.. autoclass:: SQLAlchemyJobStore(url=None, tablename='apscheduler_jobs')``): Sphinx shows it as
    written, the defaults a reader asks for."""
    return name.startswith("auto") and "(" not in args and not any(line.strip() for line in body)


def _directive_text(name: str, args: str, body: list[str]) -> tuple[str, list[str]]:
    """The title line a text directive renders above its body, and that body: its argument, else
    its name (``Note``); an admonition's argument is the start of its body, under its name."""
    if name in _WRAPPERS and not (name == "class" and _PY_CLASS.search(args)):
        return "", body
    if name in _VERSIONED:
        return _titled(f"{_VERSIONED[name]} {args}"), body
    if name in _ADMONITIONS and args.strip():
        return _titled(_SHOWN_AS.get(name, name.capitalize())), [args.strip(), *body]
    return _titled(args.strip() or _SHOWN_AS.get(name, name.replace("-", " ").capitalize())), body


#: A line only code starts with: an import, a definition, a decorator, a prompt.
_CODE_LINE = re.compile(r"^(?:import \w|from [\w.]+ import |def \w+\(|class \w+[(:]|async def |@\w[\w.]*|>>> |\$ )")


def _is_code(body: list[str]) -> bool:
    """A directive hoprag does not know (a project's own, such as ``click:example``) whose body is code:
    one of its lines starts as only code does. Its lines then keep their indentation, fenced."""
    return any(_CODE_LINE.match(line) for line in body)


def _options(options: list[str]) -> dict[str, str]:
    """A directive's named options (``:version: 1.4.3``, ``:caption: app.py``), the first of each name."""
    said: dict[str, str] = {}
    for m in filter(None, map(_NAMED_OPTION.match, options)):
        said.setdefault(m.group(1), m.group(2))
    return said


def _titled_code(lang: str, options: list[str]) -> str:
    """A code directive's language, with its ``:caption:`` (the file a listing belongs in, shown above it:
    ``flaskr/blog.py``) as MkDocs writes a block's title: ``python title="flaskr/blog.py"``."""
    caption = _options(options).get("caption")
    return f'{lang.strip()} title="{caption.replace("`", "")}"' if caption else lang


def _code(lang: str, lines: list[str], body: list[str]) -> list[str]:
    """A code directive as fenced code: ``lines`` are its options and then ``body``, its code."""
    return _fenced(_titled_code(lang, lines[:len(lines) - len(body)]), _body(body))


def _fenced(lang: str, body: list[str]) -> list[str]:
    """``body`` as fenced code, the fence longer than any backtick run inside it."""
    longest = max((len(r) for x in body for r in re.findall(r"`{3,}", x)), default=2)
    fence = "`" * (longest + 1)
    return [f"{fence}{lang.strip()}", *body, fence]


def _body(lines: list[str]) -> list[str]:
    """A container's body without its leading blank lines, so its title glues to its first paragraph."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    return lines


class _Markdown:
    """The line pass: containers unwrapped, include, ESM and link-definition lines dropped, definition lists' terms
    glued to their definitions, code left alone (but a
    block holding nothing but includes: the files it names are not read, so it shows nothing)."""

    def __init__(self, mdx: bool):
        self.mdx = mdx

    def lines(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        i, n = 0, len(lines)
        while i < n:
            line = lines[i]
            head = line.lstrip(" \t")[:1]  # every construct below is known by its first character
            end = fence_end(lines, i) if head in _FENCE_HEADS else None
            if end is not None:
                out += self._fence(lines[i:end])
                i = end
                continue
            if self.mdx and head in ("i", "e") and _ESM.match(line):  # an ESM block runs to the next blank line
                while i < n and lines[i].strip():
                    i += 1
                continue
            if head == "-" and _SNIPPETS.match(line):  # a block of snippet paths, to the next such line
                i = _closing(lines, i + 1, _SNIPPETS) + 1
                continue
            if head in _DROPPED_HEADS and any(p.match(line) for p in (_INCLUDE, _ABBREVIATION, _LINK_DEFINITION,
                                                                        _MYST_TARGET)):
                i += 1
                continue
            if head == ":" and (_AUTODOC.match(line) or (_AUTODOC_NAME.match(line) and i + 1 < n
                                                          and _AUTODOC_OPTIONS.match(lines[i + 1]))):
                i = _indented_end(lines, i + 1, 0)  # the line and its options
                continue
            step = self._container(lines, i) if head in _CONTAINER_HEADS else None
            if step is not None:
                produced, i = step
                out += produced
                continue
            definition = _DEFINITION.match(line) if head == ":" else None
            if definition:  # a definition list ("term", a blank line, ": what it is"): the term's line names it
                while out and not out[-1].strip():
                    out.pop()
                if out and not ends_clause(out[-1].rstrip().rstrip("*_")):
                    out[-1] = out[-1].rstrip() + ":"
                out.append(definition.group(1))
                i += 1
                continue
            # MDX has no indented code: what JSX components indent is their text
            out.append(line.lstrip(" \t") if self.mdx and _indent_of(line.expandtabs(4)) >= 4 else line)
            i += 1
        return out

    def _fence(self, block: list[str]) -> list[str]:
        """A fenced block: code as it is, or a MyST directive (```` ```{note} ````) reduced like one."""
        m = _FENCE.match(block[0])
        assert m is not None
        directive = re.match(r"\{([\w:.-]+)\}[ \t]*(.*)$", m.group(3).strip())
        closed = len(block) > 1 and re.fullmatch(rf"[ \t]*(?:>[ \t]?)*{re.escape(m.group(2)[0])}+[ \t]*", block[-1])
        if directive:
            inner = _dedent(block[1:-1] if closed else block[1:])
            prefix = m.group(1)  # a list item's marker opens the first line; the rest are indented under it
            out = self._directive(directive.group(1), directive.group(2), inner, " " * len(prefix))
            return [prefix + out[0].lstrip(" "), *out[1:]] if out else []
        body = [line for line in (block[1:-1] if closed else block[1:]) if line.strip()]
        paths = len(body) > 1 and bool(_SNIPPETS.match(body[0]) and _SNIPPETS.match(body[-1]))  # a block of paths
        if body and (paths or all(_INCLUDE.match(line) and not line.lstrip().startswith(";") for line in body)):
            return []  # code that only includes other files (``--8<-- "snippets/x.py"``) shows none of it here
        return _dedent(block) if self.mdx else block

    def _directive(self, name: str, args: str, body: list[str], indent: str) -> list[str]:
        """A MyST directive: its options dropped, then code, nothing, reStructuredText or a titled body."""
        if body and body[0].strip() == "---":  # options as a YAML block
            close = next((j for j in range(1, len(body)) if body[j].strip() == "---"), 0)
            body = body[close + 1:]
        options = body
        while body and _OPTION.match(body[0]):
            body = body[1:]
        name = name.split(":")[-1]
        if name in _CODE_DIRECTIVES:
            return [indent + x for x in _code(args, options, body)] + [""]
        if name in _DROPPED_DIRECTIVES or _generated(name, args, body):
            return []
        if name == "eval-rst":
            title, inner = "", rst_markdown("\n".join(body)).split("\n")
        else:
            title, body = _directive_text(name, args, _body(body))
            inner = self.lines(body)
        return [indent + x if x else "" for x in ([title] if title else []) + inner] + [""]

    def _container(self, lines: list[str], i: int) -> tuple[list[str], int] | None:
        """An admonition, tab, ``///`` block or ``:::`` container at ``lines[i]``: its reduced lines and
        where the next line starts, or None."""
        line = lines[i]
        m = _ADMONITION.match(line) or _TAB.match(line)
        if m:
            indent = m.group(1)
            title = (m.group(3) if m.re is _ADMONITION and m.group(3) is not None
                     else (m.group(2) or "") if m.re is _TAB else (m.group(2) or "").capitalize())
            end = _indented_end(lines, i + 1, _indent_of(indent.expandtabs(4)))
            body = self.lines(_body(_dedent(lines[i + 1:end])))
            return self._wrap(indent, _titled(title), body), end
        m = _BLOCK.match(line)
        if m:
            indent, slashes, name, title = m.group(1), m.group(2), m.group(3), m.group(4)
            close = re.compile(rf"^[ \t]*{slashes}[ \t]*$")
            end = _closing(lines, i + 1, close)
            body = lines[i + 1:end]
            while body and body[0].startswith((" " * 4, "\t")) and ":" in body[0]:  # the block's YAML options
                body = body[1:]
            heading = "" if name == "html" else _titled(title if title is not None else name.capitalize())
            return self._wrap(indent, heading, self.lines(_body(_dedent(body)))), end + 1
        m = _COLONS.match(line)
        if m and (m.group(3) or m.group(4)):
            indent, colons = m.group(1), m.group(2)
            close = re.compile(rf"^[ \t]*{colons}[ \t]*$")
            end = _closing(lines, i + 1, close)
            body = _dedent(lines[i + 1:end])
            if m.group(3):  # MyST ':::{name} args'
                return self._directive(m.group(3), m.group(6), body, indent), end + 1
            title = m.group(5) or m.group(6) or m.group(4).capitalize()
            return self._wrap(indent, _titled(title), self.lines(_body(body))), end + 1
        return None

    @staticmethod
    def _wrap(indent: str, title: str, body: list[str]) -> list[str]:
        return [indent + x if x else "" for x in ([title] if title else []) + body] + [""]


def _prose(text: str, mdx: bool, links: frozenset[str]) -> str:
    """Inline markup of prose reduced to its text; code spans (which never cross a blank line, so a
    stray backtick stays in its paragraph) are kept as written. ``links``: the document's link labels.
    Each pattern runs only where its first character occurs: most prose has little markup."""
    removed = 0  # a removed comment, tag or icon leaves two spaces between words: collapsed if any
    if "<!--" in text:
        text, n = _COMMENT.subn("", text)
        removed += n
    if mdx and "{/*" in text:
        text, n = _JSX_COMMENT.subn("", text)
        removed += n
    if "}`" in text:
        text = _MYST_ROLE.sub(lambda m: _role_text(m.group(2)), text)
    spans: list[str] = []

    def keep(m: re.Match) -> str:
        spans.append(m.group())
        return f"\x00{len(spans) - 1}\x00"

    if "`" in text:
        text = _CODE_SPAN.sub(keep, text)
    if "[" in text:
        text = _IMAGE.sub(r"\1", text)
        text = _LINK.sub(r"\1", text)
        if links:  # a shortcut reference, [label], where the document defines the label
            text = _SHORTCUT.sub(lambda m: m.group(1) if m.group(1).lower() in links else m.group(), text)
    if "<" in text:
        text = _AUTOLINK.sub(r"\1", text)
        text = _LABELLED_TAG.sub(lambda m: _titled(m.group(2)), text)
        text, n = _BREAK.subn(" ", text)
        text, k = _TAG.subn("", text)
        removed += n + k
    if "{" in text:
        text, n = _ATTR_LIST.subn("", text)
        removed += n
    if ":" in text:
        text, n = _ICON.subn("", text)
        removed += n
    if removed:
        text = _SPACES.sub(" ", text)
    if "|" in text and "-" in text:
        text = "\n".join(x for x in text.split("\n") if not _TABLE_RULE.match(x))
    if "&" in text:  # last: a decoded "&lt;" is text, no tag to remove
        text = _ENTITY.sub(lambda m: html.unescape(m.group()), text)
    if "\\" in text:
        text = _ESCAPED.sub(r"\1", text)
    return _PLACEHOLDER.sub(lambda m: spans[int(m.group(1))], text) if spans else text


#: A character reference ("&mdash;", "&#8212;", "&#x2014;"): Markdown shows the character. Only a complete one, with
#: its ";" -- "&param=2" in a URL stays as written.
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")
#: A backslash escape ("cmd2.Cmd.\_\_init\_\_"): Markdown shows the ASCII punctuation after it, not the backslash.
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def _role_text(text: str) -> str:
    """What a cross-reference role shows: ``title <target>`` shows the title, ``~a.b.c`` shows ``c`` -- a name in
    code only: ``:file:`~/.config/app.conf``` is a path in the home directory, shown as written."""
    m = re.fullmatch(r"([\s\S]*?)\s*<[^<>]+>", text)
    if m and m.group(1):
        return m.group(1)
    text = text.lstrip("!")
    return text[1:].rsplit(".", 1)[-1] if _SHORTENED.fullmatch(text) else text


#: A cross-reference to a name in code that shows its last part only ("~a.b.c", "~a.b.c()", relative: "~.b.c").
_SHORTENED = re.compile(r"~\.?[A-Za-z_][\w.]*(?:\(\))?")


def _trimmed(lines: list[str]) -> tuple[int, int]:
    """Where ``lines`` start and end once blank lines are left off both ends."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _outside_code(lines: list[str], reduce: Callable[[str], str]) -> str:
    """``reduce`` applied to each run of lines outside fenced code; fences kept as they are. Blank
    lines in prose shrink to one (a fence stays glued to a line right before it)."""
    out: list[str] = []
    run: list[str] = []

    def prose() -> None:
        start, end = _trimmed(run)
        if start < end:
            text = reduce("\n".join(run[start:end]))
            if "\n\n\n" in text:
                text = _BLANKS.sub("\n\n", text)
            out.append("\n".join(([""] if start else []) + [text] + ([""] if end < len(run) else [])))
        elif run:
            out.append("")
        run.clear()

    joined = "\n".join(lines)
    if "```" not in joined and "~~~" not in joined:  # every fence holds one of these: without, all is prose
        start, end = _trimmed(lines)
        text = reduce("\n".join(lines[start:end])) if start < end else ""
        return (_BLANKS.sub("\n\n", text) if "\n\n\n" in text else text).strip()
    i = 0
    while i < len(lines):
        end = fence_end(lines, i) if lines[i].lstrip(" \t")[:1] in _FENCE_HEADS else None
        if end is None:
            run.append(lines[i])
            i += 1
            continue
        prose()
        out.append("\n".join(lines[i:end]))
        i = end
    prose()
    return "\n".join(out).strip()


def markdown_text(text: str, mdx: bool = False) -> str:
    """Markdown (``mdx``: MDX, with its ESM lines, ``{/* */}`` comments and JSX content) reduced to its text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    raw = text.split("\n")
    links = (frozenset(m.group(1).lower() for m in map(_LINK_DEFINITION.match, raw) if m) if "]:" in text
             else frozenset())  # a definition holds ']:': most pages have none, and no line is matched
    lines = _Markdown(mdx).lines(raw) if mdx or _MARKUP_LINE.search("\n" + text) else raw
    return _outside_code(lines, lambda s: _prose(s, mdx, links))


# reStructuredText ---------------------------------------------------------------------------------------------

_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*")
_EXPLICIT = re.compile(r"^([ \t]*)\.\.(?:[ \t]+(.*))?$")
_RST_DIRECTIVE = re.compile(r"(?:\|[^|]+\|[ \t]+)?([\w:.-]+)::(?:[ \t]+(.*))?$")
_FOOTNOTE = re.compile(r"\[([^\]]+)\][ \t]+(.*)$")
_RST_ROLE = re.compile(r"(?::([\w:.+-]+):)?`((?:[^`\\]|\\.)+)`(?::[\w:.+-]+:)?(_{0,2})")
#: Roles Sphinx renders as code (and plain `interpreted text`, which code-heavy projects default to code).
_CODE_ROLES = frozenset({"", "func", "meth", "class", "attr", "data", "obj", "exc", "mod", "option", "envvar", "code",
                         "file", "samp", "const", "type", "command", "program"})
_RST_LITERAL = re.compile(r"``([\s\S]+?)``(?!`)")
_RST_REFERENCE = re.compile(r"(?<![\w`\\])([A-Za-z0-9][\w.-]*[A-Za-z0-9])__?(?=[\s.,;:!?)\]'\"]|$)")
_RST_FOOTNOTE_REF = re.compile(r"[ \t]*\[(?:#[\w-]*|\*|\d+)\]_")
_GRID_RULE = re.compile(r"^[ \t]*\+(?:[-=]+\+)+[ \t]*$")
_SIMPLE_RULE = re.compile(r"^[ \t]*=+(?:[ \t]+=+)+[ \t]*$")


_COLUMN_RULE = re.compile(r"^[ \t]*-+(?:[ \t]+-+)*[ \t]*$")


def _pipe_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Rows as a Markdown pipe table, each row on one line (a header row left empty when the source has
    none): the chunker keeps a row whole, and a row is read as one unit."""
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |"
    return ["", row(header), "|" + "---|" * len(header), *(row(r) for r in rows), ""]


def _grid_table(lines: list[str], i: int) -> tuple[list[str], int]:
    """A grid table (``+---+`` rules, ``|`` between cells) from line ``i``: its cells joined across their
    lines; a cell spanning columns lands in the first of them; rows above a ``+===+`` rule are the header."""
    cuts = [k for k, c in enumerate(lines[i]) if c == "+"]
    end = i + 1
    while end < len(lines) and lines[end].strip()[:1] in ("|", "+"):
        end += 1
    header: list[str] = []
    rows: list[list[str]] = []
    cells: list[list[str]] = [[] for _ in cuts[1:]]
    for line in lines[i + 1:end]:
        if _GRID_RULE.match(line):
            if any(cells):
                rows.append([" ".join(c) for c in cells])
            cells = [[] for _ in cuts[1:]]
            if "=" in line and rows and not header:
                header, rows = [" ".join(t) for t in zip(*rows)], []
            continue
        start = 0
        for k, cut in enumerate(cuts[1:]):
            if cut >= len(line) - 1 or line[cut] in "|+" or k == len(cuts) - 2:
                text = line[cuts[start] + 1:cut].strip()
                if text:
                    cells[start].append(text)
                start = k + 1
    return _pipe_table(header or [""] * len(cells), rows), end


def _simple_table(lines: list[str], i: int) -> tuple[list[str], int] | None:
    """A simple table (``===  ===`` borders) from line ``i`` to its closing border (one followed by a blank
    line or the end), or ``None`` when none closes it. A row whose first column is blank continues the row
    above; rows above a second border followed by more rows are the header."""
    spans = [m.start() for m in re.finditer(r"=+", lines[i])]
    header: list[str] = []
    rows: list[list[str]] = []
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if _SIMPLE_RULE.match(line):
            if j + 1 == len(lines) or not lines[j + 1].strip():
                return _pipe_table(header or [""] * len(spans), rows), j + 1
            if not header and rows:
                header, rows = [" ".join(t) for t in zip(*rows)], []
            continue
        if not line.strip() or _COLUMN_RULE.match(line):
            continue
        cells = [line[a:b].strip() for a, b in zip(spans, [*spans[1:], len(line) + 1])]
        if not cells[0] and rows:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    return None


def _rst_role(m: re.Match) -> str:
    """A role as it renders: a code role (or plain interpreted text) as inline code, a link or any other
    role as its text."""
    shown = _role_text(_rst_unescaped(m.group(2)))
    role = (m.group(1) or "").split(":")[-1]
    return f"`{shown}`" if role in _CODE_ROLES and not m.group(3) and "`" not in shown else shown


def _rst_inline(text: str) -> str:
    spans: list[str] = []

    def keep(shown: str) -> str:
        spans.append(shown)
        return f"\x00{len(spans) - 1}\x00"

    def restored(kept: str) -> str:
        return _PLACEHOLDER.sub(lambda m: spans[int(m.group(1))], kept)

    text = _RST_LITERAL.sub(lambda m: keep(f"`{m.group(1)}`"), text)
    text = _RST_FOOTNOTE_REF.sub("", text)
    # a role's escapes are its own, undone once; a literal inside its text is kept before it
    text = _RST_ROLE.sub(lambda m: keep(restored(_rst_role(m))), text)
    text = _RST_REFERENCE.sub(r"\1", text)
    if "\\" in text:
        text = _rst_unescaped(text)
    return restored(text)


#: A backslash escape: the character after it shows, an escaped space or line end shows nothing ("``Cmd``\\ s").
_RST_ESCAPE = re.compile(r"\\\s?(.?)", re.S)


def _rst_unescaped(text: str) -> str:
    """Text as reStructuredText renders it: ``\\*args`` shows ``*args``, ``C:\\\\temp`` shows ``C:\\temp``, and
    ``\\ `` joins the words around it."""
    return _RST_ESCAPE.sub(r"\1", text)


class _Rst:
    """reStructuredText as Markdown: adornment styles become heading levels in order of first use."""

    def __init__(self) -> None:
        self.styles: dict[tuple[str, bool], int] = {}

    def heading(self, char: str, overline: bool, title: str) -> list[str]:
        level = self.styles.setdefault((char, overline), len(self.styles) + 1)
        return ["", f"{'#' * min(level, 6)} {title.strip()}", ""]

    def lines(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        i, n = 0, len(lines)
        literal_next = False  # the paragraph before ended in '::': an indented block after it is code
        while i < n:
            line, stripped = lines[i], lines[i].strip()
            blank_before = not out or not out[-1].strip()
            if not stripped:
                out.append("")
                i += 1
                continue
            if (_ADORNMENT.fullmatch(stripped) and i + 2 < n and lines[i + 1].strip() and not lines[i].startswith(" ")
                    and lines[i + 2].strip() == stripped and blank_before):
                out += self.heading(stripped[0], True, lines[i + 1])
                i += 3
                continue
            if (not line[0].isspace() and i + 1 < n and _ADORNMENT.fullmatch(lines[i + 1])
                    and blank_before and not _EXPLICIT.match(line)):
                out += self.heading(lines[i + 1].strip()[0], False, line)
                i += 2
                continue
            if _ADORNMENT.fullmatch(stripped) and blank_before:  # a transition
                i += 1
                continue
            indent = _indent_of(line)
            if literal_next and out and indent > 0:
                end = _indented_end(lines, i, indent - 1)
                out += _fenced("", _dedent(lines[i:end])) + [""]
                i, literal_next = end, False
                continue
            literal_next = False
            if _ANONYMOUS_TARGET.match(line):  # "__ https://..." is ".. __: https://...", a link's target: nothing shown
                i += 1
                continue
            m = _EXPLICIT.match(line)
            if m:
                end = _indented_end(lines, i + 1, indent)
                out += self.explicit(m.group(2) or "", lines[i + 1:end])
                i = end
                continue
            if stripped.startswith(">>>") and blank_before:  # a doctest block runs to the next blank line
                end = next((j for j in range(i, n) if not lines[j].strip()), n)
                out += _fenced("pycon", _dedent(lines[i:end])) + [""]
                i = end
                continue
            grid = _GRID_RULE.match(line)
            if grid or _SIMPLE_RULE.match(line):  # a table after a blank line; else a stray rule, dropped
                table = (_grid_table(lines, i) if grid else _simple_table(lines, i)) if blank_before else None
                out += table[0] if table else []
                i = table[1] if table else i + 1
                continue
            if (blank_before and i + 1 < n and lines[i + 1].strip() and _indent_of(lines[i + 1]) > indent
                    and not stripped.endswith("::") and not _RST_NOT_TERM.match(stripped)):
                end = _indented_end(lines, i + 1, indent)
                out += self.definition(stripped, lines[i + 1:end])
                i = end
                continue
            if stripped.endswith("::"):
                literal_next = True
                stripped = stripped[:-2].rstrip() if stripped[:-2].endswith((" ", "\t")) or stripped == "::" \
                    else stripped[:-1]
                if not stripped:
                    i += 1
                    continue
            out.append(stripped)
            i += 1
        return out

    def definition(self, term: str, body: list[str]) -> list[str]:
        """A definition list's item: its term as "term:" (what a reference entry's sentences stand under, as a
        Markdown definition list's), then its definition -- its paragraphs one block when they are only prose, so
        that a passage boundary never parts "Default: `4`" from the term it is the default of."""
        said = self.lines(_dedent(body))
        if all(not _RST_BLOCK.match(x) for x in said):
            said = [x for x in said if x.strip()]
        return [term if ends_clause(term) else f"{term}:", *said, ""]

    def explicit(self, head: str, body: list[str]) -> list[str]:
        """An explicit markup block (``..``): a directive, a footnote, or a comment/target (dropped)."""
        m = _RST_DIRECTIVE.match(head)
        if m:
            name, args = m.group(1).split(":")[-1], m.group(2) or ""
            if head.startswith("|"):  # a substitution definition
                return []
            body = options = _dedent(body)
            while body and (_OPTION.match(body[0]) or (not body[0].strip() and len(body) > 1
                                                            and _OPTION.match(body[1]))):
                body = body[1:]
            if name in _CODE_DIRECTIVES:
                return _code(args, options, body) + [""]
            if name in _DROPPED_DIRECTIVES or _generated(name, args, body):
                return []
            if name == "rubric":
                return [args, ""]
            if name in ("changelog", "change"):  # the changelog extension's release and its entries (Alembic, Mako)
                said = _options(options)
                release = " ".join(x for x in (said.get("version"), said.get("released") and
                                               f"(released {said['released']})") if x)
                return ["", *([_titled(release)] if release else []), *self.lines(_body(body)), ""]
            rows = _TABLE_DIRECTIVES[name](body) if name in _TABLE_DIRECTIVES else []
            if rows:
                return ([_titled(args)] if args.strip() else []) + _directive_table(rows, _options(options))
            title, body = _directive_text(name, args, _body(body))
            if name not in _ADMONITIONS and name not in _VERSIONED and _is_code(body):
                return ["", title, *_fenced("", body), ""]
            return ["", title, *self.lines(body), ""]
        m = _FOOTNOTE.match(head)
        if m:
            return ["", f"[{m.group(1)}] {m.group(2)}", *self.lines(_dedent(body)), ""]
        return []  # a comment or a hyperlink target renders nothing


#: A ``list-table`` row's line (``* - Constant``: the row's item, its first cell's) and a later cell's (``  - Description``).
_TABLE_ROW = re.compile(r"[*+-][ \t]+(?:[*+-][ \t]+)?(.*)$")
_TABLE_CELL = re.compile(r"[ \t]+[*+-](?:[ \t]+(.*))?$")


def _list_table(body: list[str]) -> list[list[str]]:
    """A ``list-table``'s rows: a list whose items are lists of cells (``* - Constant`` then ``  - Description``); a
    cell's later lines are its own."""
    rows: list[list[str]] = []
    for line in body:
        row, cell = _TABLE_ROW.match(line), _TABLE_CELL.match(line)
        if row:
            rows.append([row.group(1).strip()])
        elif cell and rows:
            rows[-1].append((cell.group(1) or "").strip())
        elif line.strip() and rows:
            rows[-1][-1] = f"{rows[-1][-1]} {line.strip()}".strip()
    return rows


def _csv_table(body: list[str]) -> list[list[str]]:
    """A ``csv-table``'s rows, as written in it (one read from ``:file:`` or ``:url:`` is not on the page)."""
    return [[" ".join(c.split()) for c in r]
            for r in csv.reader([f"{x}\n" for x in body if x.strip()], skipinitialspace=True)]


def _directive_table(rows: list[list[str]], said: dict[str, str]) -> list[str]:
    """A table directive's ``rows`` as a pipe table: its first ``:header-rows:`` rows, or its ``:header:`` cells, the
    header; a row short of cells filled with empty ones."""
    heads = int(said["header-rows"]) if said.get("header-rows", "").isdigit() else 0
    if heads:
        header = [" ".join(cells) for cells in zip(*rows[:heads])]
    else:
        header = _csv_table([said["header"]])[0] if said.get("header", "").strip() else []
    rows = rows[heads:]
    width = max(len(r) for r in [*rows, header])
    return _pipe_table(header + [""] * (width - len(header)), [r + [""] * (width - len(r)) for r in rows])


#: Tables written as directives: a row is one line, as for grid and simple tables.
_TABLE_DIRECTIVES = {"list-table": _list_table, "csv-table": _csv_table}


#: A line that is not a definition list's term though the line after it is indented deeper: a list item, a field,
#: an option, explicit markup, a table or a quoted line.
_RST_NOT_TERM = re.compile(r"(?:[-*+•]|\d+[.)]|#\.|\(?\w\)|[a-zA-Z][.)])(?:\s|$)|[:|+>]|\.\.\s|--?\w")
#: A line a definition's body keeps apart from the prose around it: code, a heading, a list item, a table, a quote.
_RST_BLOCK = re.compile(r"(?:```|~~~|#+ |[-*+] |\d+[.)] |\||>)")


#: A substitution the page defines as text (``.. |fetch| replace:: ``fetch()```), and a reference to one (``|fetch|_``).
_REPLACE = re.compile(r"^\.\.[ \t]+\|([^|\n]+)\|[ \t]+replace::[ \t]+(\S.*?)[ \t]*$", re.M)
_SUBSTITUTED = re.compile(r"\|([^|\s][^|\n]*?)\|(?:__?)?(?![\w|])")


def rst_markdown(text: str) -> str:
    """reStructuredText reduced to Markdown: ``#`` headings, fenced code, directives as titled text; a reference to a
    substitution the page defines as text reads as that text (one defined elsewhere, ``|version|``, stays)."""
    lines = [x.rstrip() for x in text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(8).split("\n")]
    while lines and (_OPTION.match(lines[0]) or not lines[0]):  # a leading field list is the file's metadata
        lines = lines[1:]
    subs = dict(_REPLACE.findall(text))

    def prose(p: str) -> str:
        if subs and "|" in p:
            p = _SUBSTITUTED.sub(lambda m: subs.get(m.group(1), m.group()), p)
        return _rst_inline(p)

    return _outside_code(_Rst().lines(lines), lambda s: "\n\n".join(prose(p) for p in re.split(r"\n[ \t]*\n", s)))

