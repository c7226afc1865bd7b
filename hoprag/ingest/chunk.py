"""Chunking: a document becomes passages along its structure, each between 300 and 1,500 characters.

The readers hand over Markdown (:mod:`.markup` has reduced every other markup to it); its block
structure comes from markdown-it-py, so a ``#`` inside fenced or indented code is never a heading
and a fence is one block however many blank lines it holds (a document of nothing but ``#``
headings and paragraphs is read line by line, to the same blocks). Then:

- **Sections** start at headings. A passage's section is its heading path from the document's top
  heading down, joined with `` › `` (``Background Tasks › Add the task``); its text does not repeat
  its own heading. A heading with no text of its own before its first subheading adds nothing but
  its name in its subsections' paths.
- **Units** are what is never cut apart: a paragraph, list, table or quote; a code block together
  with the paragraph introducing it (a passage never starts with code its section introduced);
  and a paragraph ending in ``:`` together with what it introduces.
- **Tiny sections merge**: a section under :data:`MIN_PASSAGE_CHARS` (a heading with one short
  line) takes in the following sections that share its parent until the minimum is reached (one
  with no such follower joins the one before it, if that shares its parent). The merged-in
  headings stay in the text as ``#`` lines, so no context is lost, and a passage's section is the
  heading path its parts have in common (their parent), or the first part's path when they share
  no heading.
- **Long sections split** between units into near-equal passages of at most
  :data:`MAX_PASSAGE_CHARS`, never before a paragraph or sentence opening on what the one before
  it said while the two fit one passage ("With this setting, the application will reject ...": a
  passage starting there names no setting). A unit longer than that is cut: code at blank lines,
  else between lines, each piece fenced again (the first stays with its intro); prose between list
  items or table rows, else sentences, else words.

Text without headings (plain text, PDF, JSONL) is one section of blank-line paragraphs, so a
passage within the bound comes out exactly as it went in (its paragraphs stripped). Nothing is
dropped or reordered; a document made only of headings keeps them as its text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from ..corpus import SECTION_SEPARATOR
from ..text import REFERS_BACK, sentence_spans

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

#: The size range of one passage, in characters: at most ~250 words (a retrievable, citable unit);
#: a section under the minimum (~50 words) is too little to be found or cited on its own.
MAX_PASSAGE_CHARS = 1500
MIN_PASSAGE_CHARS = 300
#: What the readers and this chunker make of a file: change it with them, and every file is read again.
VERSION = "28"
_LIST_ITEM = re.compile(r"^[ \t]{0,3}(?:(?:[-*+]|\d{1,9}[.)])[ \t]|\|)")  # a list item's or a table row's first line
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
#: What only the Markdown parser reads right, besides code, HTML and tabs anywhere (:func:`_plain_blocks`):
#: indentation, quotes, lists, rules and underlines at a line's start (searched after a newline: a
#: literal first character lets the regex engine skip ahead, twenty times faster than ``^`` under ``re.M``).
_PARSER_LINE = re.compile(r"\n(?:[ >\-*+=_]|\d{1,9}[.)])")
_ATX = re.compile(r"^(#{1,6})(?:[ \t]+(.*))?$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE_OPEN = re.compile(r"(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(`{3,}|~{3,})")  # of a stripped line


@cache
def _parser() -> MarkdownIt:
    """Block structure only: inline parsing and link reference definitions are not ours to apply (a
    reader has reduced links already; a line that looks like a definition is text we keep). Built
    on first use: every ``hoprag`` command imports this module, only ``index`` chunks."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable(["inline", "reference"])


@dataclass
class _Section:
    """A heading's section: its heading path, its heading line and its units (the text before the
    first heading is a section with an empty path)."""

    path: tuple[str, ...]
    line: str  # the heading as a '#' line: what the section shows when merged into another passage
    units: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(map(len, self.units)) + 2 * max(0, len(self.units) - 1)


def _code_pieces(code: str, limit: int, first: int) -> list[str]:
    """Fenced ``code`` cut into fenced pieces of at most ``limit`` characters, the first at most
    ``first`` (``""`` when not one line fits there): at blank lines, else between lines."""
    lines = code.split("\n")
    closed = len(lines) > 1 and _FENCE_CLOSE.match(lines[-1]) is not None
    opener, body = lines[0][:limit // 4], lines[1:-1] if closed else lines[1:]  # an info string is a language
    mark = opener.strip()
    closer = lines[-1] if closed else mark[:len(mark) - len(mark.lstrip(mark[:1]))]  # an unclosed fence closed
    cap = limit - len(opener) - len(closer) - 2  # what one piece holds between its fences
    items: list[tuple[list[str], bool]] = []  # lines, and whether they open a paragraph of code
    group: list[str] = []
    for line in [*body, ""]:  # paragraphs of code: a blank line ends one
        if line.strip():
            group.append(line)
            continue
        if not group:
            continue
        if sum(len(x) + 1 for x in group) <= cap:
            items.append((group, True))
        else:  # too big for one piece: line by line, a line longer than a piece cut
            items += [([x[k:k + cap - 1]], not n and not k) for n, x in enumerate(group)
                      for k in range(0, len(x), cap - 1)]
        group = []
    pieces: list[list[str]] = [[]]
    room = first - (limit - cap)
    for part, opens in items:
        size, sep = sum(len(x) + 1 for x in part), 1 if pieces[-1] and opens else 0
        if size + sep > room and (pieces[-1] or len(pieces) == 1):
            pieces.append([])
            room, sep = cap, 0
        pieces[-1] += [""] * sep + part  # a blank line between two paragraphs of code
        room -= size + sep
    return [f"{opener}\n" + "\n".join(p) + f"\n{closer}" if p else "" for p in pieces]


@dataclass
class _Block:
    """A top-level block of the document: fenced code, or anything else (kept as its source lines)."""

    text: str
    code: bool


def _plain_blocks(body: str) -> list[tuple[int, str] | _Block] | None:
    """:func:`_blocks` of a document of ``#`` headings and paragraphs alone, line by line (what the
    parser would return, several times faster); None for anything else (code, indentation, lists,
    quotes, HTML, underlined headings, rules)."""
    if "`" in body or "~" in body or "<" in body or "\t" in body or _PARSER_LINE.search("\n" + body):
        return None
    out: list[tuple[int, str] | _Block] = []
    paragraph: list[str] = []
    for line in [*body.split("\n"), ""]:
        heading = _ATX.match(line) if line[:1] == "#" else None
        blank = not line.strip()
        if (heading or blank) and paragraph:
            out.append(_Block("\n".join(paragraph), False))
            paragraph = []
        if heading:
            text = " ".join(_ATX_CLOSE.sub("", heading.group(2) or "").split())
            if text:
                out.append((len(heading.group(1)), text))
        elif not blank:
            paragraph.append(line.rstrip())
    return out


def _blocks(body: str) -> list[tuple[int, str] | _Block]:
    """The document's top-level blocks in order: ``(level, heading text)`` or a :class:`_Block`."""
    plain = _plain_blocks(body)
    if plain is not None:
        return plain
    lines = body.split("\n")
    tokens = _parser().parse(body)
    out: list[tuple[int, str] | _Block] = []
    for k, t in enumerate(tokens):
        if t.level != 0 or t.nesting == -1 or t.map is None:
            continue
        if t.type == "heading_open":
            text = " ".join(tokens[k + 1].content.split())
            if text:  # an empty heading ('#' alone) names nothing
                out.append((int(t.tag[1:]), text))
        elif t.type == "fence":
            content = t.content if t.content.endswith("\n") or not t.content else t.content + "\n"
            out.append(_Block(f"{t.markup}{t.info}\n{content}{t.markup}", True))
        elif t.type == "code_block":  # indented code is fenced like the rest
            text = "\n".join(x.rstrip() for x in t.content.rstrip("\n").split("\n"))
            fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))
            out.append(_Block(f"{fence}\n{text}\n{fence}", True))
        elif t.type != "hr":  # a thematic break is no text
            text = "\n".join(x.rstrip() for x in lines[t.map[0]:t.map[1]]).strip("\n")
            if text.strip():
                out.append(_Block(text, False))
    return out


def _units(blocks: list[_Block]) -> list[str]:
    """A section's blocks grouped into what is never cut apart (see the module docstring)."""
    units: list[str] = []
    glue = False  # the unit before introduces the next block
    for block in blocks:
        text = block.text.strip("\n")
        if units and (block.code or glue):
            units[-1] += "\n\n" + text
        else:
            units.append(text)
        glue = not block.code and text.rstrip().endswith(":")
    return units


def _sections(body: str, headings: bool) -> list[_Section]:
    """The document's sections in order, without empty parents; plain text is one section."""
    if not headings:
        return [_Section((), "", [p.strip() for p in re.split(r"\n[ \t]*\n", body) if p.strip()])]
    sections = [_Section((), "")]
    blocks: list[_Block] = []
    stack: list[tuple[int, str]] = []
    for item in _blocks(body):
        if isinstance(item, _Block):
            blocks.append(item)
            continue
        sections[-1].units = _units(blocks)
        blocks = []
        level, text = item
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        sections.append(_Section(tuple([t for _, t in stack]), f"{'#' * level} {text}"))
    sections[-1].units = _units(blocks)
    if not any(s.units for s in sections):  # only headings: they are the text
        lines = [s.line for s in sections if s.line]
        return [_Section((), "", ["\n\n".join(lines)])] if lines else []
    kept = []
    for s, after in zip(sections, sections[1:] + [None]):
        has_subsections = after is not None and len(after.path) > len(s.path) and _under(after.path, s.path)
        if s.units or (s.path and not has_subsections):  # an empty parent lives on in its subsections' paths
            kept.append(s)
    return kept


def _under(path: tuple[str, ...], parent: tuple[str, ...]) -> bool:
    return path[:len(parent)] == parent


def _groups(sections: list[_Section], minimum: int) -> list[list[_Section]]:
    """Sections grouped to be packed together: a tiny one with its followers under the same parent."""
    groups: list[list[_Section]] = []
    i = 0
    while i < len(sections):
        group, parent = [sections[i]], sections[i].path[:-1]
        size = sections[i].size
        i += 1
        # a heading with no text at all goes with its neighbour, whichever parent that has
        while size < minimum and i < len(sections) and (_under(sections[i].path, parent) or not size):
            size += len(sections[i].line) + 2 + sections[i].size
            group.append(sections[i])
            i += 1
        if size < minimum and groups and (_under(groups[-1][-1].path, parent) or not size):
            groups[-1] += group  # no follower under its parent: it joins the section before
        else:
            groups.append(group)
    return groups


def _unit_blocks(unit: str) -> list[str]:
    """A unit's blocks again: split at blank lines and around fenced code, never inside it."""
    blocks: list[list[str]] = [[]]
    fence = ""
    for line in unit.split("\n"):
        stripped = line.strip()
        if fence:
            blocks[-1].append(line)
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
                blocks.append([])
            continue
        m = _FENCE_OPEN.match(stripped)
        if m or not stripped:
            blocks.append([])
        if stripped:
            blocks[-1].append(line)
        fence = m.group(1) if m else ""
    return ["\n".join(b) for b in blocks if b]


def _prose_atoms(block: str, limit: int) -> list[tuple[str, str]]:
    """A prose block longer than ``limit`` as ``(separator, text)`` atoms within it: list items
    or table rows, else sentences, else words, else hard cuts; the separators are the block's own."""
    lines = block.split("\n")
    is_list = sum(1 for x in lines if _LIST_ITEM.match(x)) > 1
    if is_list:  # one atom per item (or table row)
        items: list[list[str]] = []
        for x in lines:
            if _LIST_ITEM.match(x) or not items:
                items.append([])
            items[-1].append(x)
        parts = [("\n", "\n".join(i)) for i in items]
    else:
        spans = sentence_spans(block)  # sentences, each after the whitespace before it
        parts = [(block[spans[k - 1][1]:a] if k else "", block[a:b]) for k, (a, b) in enumerate(spans)]
    out: list[tuple[str, str]] = []
    for sep, text in parts:
        if len(text) <= limit:
            out.append((sep, text))
        elif is_list:  # an item too long: its sentences
            out += [(sep if n == 0 else s, t) for n, (s, t) in enumerate(_prose_atoms(text, limit))]
        else:
            words = [w for w in text.split(" ") if w]
            out += [((sep if n == 0 else " ") if k == 0 else "", word[k:k + limit])
                    for n, word in enumerate(words) for k in range(0, len(word), limit)]
    return out


def _atoms(unit: str, limit: int) -> list[tuple[str, str, bool]]:
    """A unit as ``(separator, text, bound)`` atoms of at most ``limit`` characters: itself if it
    fits, else its blocks, cut further when too long (code into fenced pieces, prose into
    :func:`_prose_atoms`). ``bound``: a code piece that stays with the paragraph introducing it."""
    if len(unit) <= limit:
        return [("\n\n", unit, False)]
    out: list[tuple[str, str, bool]] = []
    for block in _unit_blocks(unit):
        if len(block) <= limit:
            out.append(("\n\n", block, False))
        elif block.lstrip().startswith(("```", "~~~")):
            intro = out[-1][1] if out and not out[-1][1].lstrip().startswith(("```", "~~~")) else ""
            room = limit - len(intro) - 2
            bind = bool(intro) and room >= limit // 4
            pieces = _code_pieces(block, limit, room if bind else limit)
            out += [("\n\n", p, bind and n == 0) for n, p in enumerate(pieces) if p]
        else:
            atoms = _prose_atoms(block, limit)
            out += [("\n\n" if n == 0 else sep, text, False) for n, (sep, text) in enumerate(atoms)]
    return out


@dataclass
class _Item:
    """An atom as packed: its section, what joins it to the item before it in a passage, and, if it
    opens its section, the section's heading."""

    path: tuple[str, ...]
    text: str
    sep: str = "\n\n"
    bound: bool = False  # never the first of a passage: it stays with the item before it
    heading: str = ""
    counted: bool = False  # the heading's length is counted in its size (it may be shown)

    @property
    def size(self) -> int:
        return len(self.text) + (len(self.heading) + 2 if self.counted else 0)


def _items(group: list[_Section], limit: int) -> list[_Item]:
    """A group's atoms in order. A section's heading is shown in a passage whose section it is not,
    so its length counts wherever that may happen: a merged-in section always, the group's first
    only if the group holds a section outside it. A heading with no text is bound to what follows."""
    items: list[_Item] = []
    foreign = any(not _under(s.path, group[0].path) for s in group[1:])
    for n, section in enumerate(group):
        counted = bool(section.line) and (n > 0 or foreign)
        if not section.units:
            items.append(_Item(section.path, "", heading=section.line, counted=counted))
            continue
        room = limit - (len(section.line) + 2 if counted else 0)
        atoms = [a for k, unit in enumerate(section.units) for a in _atoms(unit, room if k == 0 else limit)]
        for k, (sep, text, bound) in enumerate(atoms):
            after_heading = k == 0 and bool(items) and not items[-1].text
            back = k > 0 and REFERS_BACK.match(text.lstrip()) is not None  # "With this setting, ..."
            items.append(_Item(section.path, text, sep, bound or after_heading or back,
                               section.line if k == 0 else "", counted and k == 0))
    if not items[-1].text:  # a heading with no text at the end stays with what comes before it
        items[-1].bound = True
    return items


def _pack(items: list[_Item], limit: int, minimum: int) -> list[list[_Item]]:
    """Items packed in order into near-equal passages of at most ``limit`` characters; a bound item
    goes with the one before it (unless together they would not fit any passage)."""
    def width(chain: list[_Item]) -> int:
        return sum(i.size + len(i.sep) for i in chain) - len(chain[0].sep)

    total = width(items)
    target = total / max(1, math.ceil(total / limit))
    out: list[list[_Item]] = []
    size, k = 0, 0
    while k < len(items):
        chain = [items[k]]
        while k + len(chain) < len(items) and items[k + len(chain)].bound:
            chain.append(items[k + len(chain)])
        if width(chain) > limit:
            chain = chain[:1]
        grown = size + len(chain[0].sep) + width(chain)
        if not out or grown > limit or abs(grown - target) > abs(size - target):
            out.append([])
            grown = width(chain)
        out[-1] += chain
        size, k = grown, k + len(chain)
    if len(out) > 1 and size < minimum and width(out[-2]) + len(out[-1][0].sep) + size <= limit:
        tail = out.pop()  # popped first: ``out[-2] += out.pop()`` stores the sum one place too early
        out[-1] += tail
    return out


def _render(items: list[_Item]) -> tuple[str, str]:
    """A passage's ``(section, text)``: the section is the heading path its parts share (else the
    first part's); an opening part of another section shows that section's heading."""
    paths = [i.path for i in items]
    common = paths[0]
    for p in paths[1:]:
        n = 0
        while n < min(len(common), len(p)) and common[n] == p[n]:
            n += 1
        common = common[:n]
    label = common or next((p for p in paths if p), ())
    text = ""
    for i in items:
        part = f"{i.heading}\n\n{i.text}".strip() if i.heading and i.path != label else i.text
        if part:
            text = f"{text}{i.sep if text else ''}{part}"
    return SECTION_SEPARATOR.join(label), text


def chunk(body: str, headings: bool = True, limit: int = MAX_PASSAGE_CHARS,
          minimum: int = MIN_PASSAGE_CHARS) -> list[tuple[str, str]]:
    """``(section, text)`` passages of ``body`` in order; ``headings``: ``body`` is Markdown, else plain text."""
    body = body.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    minimum = min(minimum, limit // 2)
    passages = []
    for group in _groups(_sections(body, headings), minimum):
        if len(group) == 1 and group[0].size <= limit:  # what packing makes of one section that fits, sooner
            passages.append((SECTION_SEPARATOR.join(group[0].path), "\n\n".join(u for u in group[0].units if u)))
        else:
            passages += [_render(p) for p in _pack(_items(group, limit), limit, minimum)]
    return [(section, text) for section, text in passages if text]
