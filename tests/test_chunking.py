"""Structure-aware chunking of documentation: sections by heading path, code kept whole with its
intro, tiny sections merged, long ones split in range, markup reduced to text, and the readers of
Markdown, MDX, reStructuredText and HTML."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import hoprag.ingest as ingest
from hoprag.corpus import Doc
from hoprag.engine import Engine
from hoprag.ingest import index
from hoprag.ingest.chunk import MAX_PASSAGE_CHARS, MIN_PASSAGE_CHARS, chunk
from hoprag.formats import READERS, first_heading
from hoprag.markup import markdown_text, rst_markdown
from hoprag.search import analysed
from hoprag.store import open_store
from hoprag.tokens import fold

G = frozenset({"g"})


def words(n: int, word: str = "lorem") -> str:
    """``n`` sentences of prose (~40 characters each)."""
    return " ".join(f"The {word} sentence number {i} is here." for i in range(n))


def fences(text: str) -> list[str]:
    return re.findall(r"^(`{3,}|~{3,})", text, re.M)


def index_folder(tmp_path: Path, files: dict[str, str]) -> tuple[ingest.Report, Engine]:
    src = tmp_path / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    store = open_store(tmp_path / "s.db", create=True)
    try:
        report = index(src, store, ["g"])
    finally:
        store.close()
    return report, Engine.from_snapshot(open_store(tmp_path / "s.db").snapshot(), "bm25")


def assert_well_formed(parts: list[tuple[str, str]]) -> None:
    """No passage is only a heading, only one line of code, or over the maximum; fences are closed."""
    for section, text in parts:
        lines = [x for x in text.split("\n") if x.strip()]
        assert len(text) <= MAX_PASSAGE_CHARS, (section, len(text))
        assert not all(re.match(r"#{1,6} ", x) for x in lines), text
        assert not (len(lines) == 3 and fences(text) and len(fences(text)) == 2), text  # a fence round one line
        assert len(fences(text)) % 2 == 0, text


# 1. Sections and heading paths -------------------------------------------------------------------------------

def test_section_is_the_heading_path_and_the_text_does_not_repeat_the_heading():
    body = (f"# Background Tasks\n\n{words(10)}\n\n## Add the task\n\n{words(10, 'task')}\n\n"
            f"### Details\n\n{words(10, 'x')}\n")
    parts = chunk(body)
    assert [s for s, _ in parts] == ["Background Tasks", "Background Tasks › Add the task",
                                     "Background Tasks › Add the task › Details"]
    assert all(not t.startswith("#") and "Add the task" not in t for _, t in parts)
    assert parts[1][1] == words(10, "task")


def test_a_sibling_heading_pops_the_path_and_a_skipped_level_is_fine():
    body = f"# A\n\n{words(9)}\n\n### Deep\n\n{words(9)}\n\n## B\n\n{words(9)}\n\n# C\n\n{words(9)}\n"
    assert [s for s, _ in chunk(body)] == ["A", "A › Deep", "A › B", "C"]


def test_passages_keep_the_document_title_and_search_finds_a_heading(tmp_path: Path):
    doc = (f"# Widget manual\n\n{words(10)}\n\n## Recalibrating the flux sensor\n\n{words(10, 'other')}\n\n"
           f"## Cleaning\n\n{words(10, 'third')}\n")
    report, engine = index_folder(tmp_path, {"manual.md": doc})
    assert report.failed == []
    docs = {d.id: d for d in engine.docs}
    assert {d.title for d in docs.values()} == {"Widget manual"}
    assert docs["manual.md#2"].section == "Widget manual › Recalibrating the flux sensor"
    hits = engine.search("recalibrating flux sensor", G, 1)  # words only in the heading
    assert [h.doc.id for h in hits] == ["manual.md#2"]


def test_bm25_analyses_the_section_as_a_field_and_records_without_one_as_before():
    plain = Doc("a", "Some text.", G, title="Falcon")
    assert analysed(plain) == fold("Falcon\nSome text.")
    assert analysed(Doc("b", "Some text.", G)) == fold("Some text.")
    same = Doc("c", "Some text.", G, title="Guide", section="Guide")
    assert analysed(same) == fold("Guide\nSome text.")  # a section that is the title adds nothing
    nested = Doc("d", "Some text.", G, title="Guide", section="Guide › Install › Linux")
    assert analysed(nested) == fold("Guide\nInstall › Linux\nSome text.")  # the title is not counted twice
    other = Doc("e", "Some text.", G, title="Notes", section="Setup")
    assert analysed(other) == fold("Notes\nSetup\nSome text.")


# 2. Fenced code -----------------------------------------------------------------------------------------------

def test_code_with_comments_and_blank_lines_is_one_block_never_a_heading():
    code = "```python\n# open the file\n\nwith open(path) as f:\n    # read it\n\n    data = f.read()\n```"
    body = f"# Files\n\n{words(6)}\n\nTo read a file, open it:\n\n{code}\n\n## Next\n\n{words(10)}\n"
    parts = chunk(body)
    assert [s for s, _ in parts] == ["Files", "Files › Next"]
    assert parts[0][1] == f"{words(6)}\n\nTo read a file, open it:\n\n{code}"


def test_tilde_fences_and_fences_indented_in_lists_and_admonitions_stay_whole():
    body = markdown_text(
        "# Steps\n\n1. Install it:\n\n    ```bash\n    # not a heading\n\n    pip install x\n    ```\n\n"
        "2. Then run it.\n\n!!! note\n    Remember:\n\n    ~~~\n    # still code\n\n    run\n    ~~~\n")
    parts = chunk(body)
    assert [s for s, _ in parts] == ["Steps"]
    text = parts[0][1]
    assert "    # not a heading\n\n    pip install x" in text and "~~~\n# still code\n\nrun\n~~~" in text


def test_a_passage_never_starts_with_the_code_its_paragraph_introduces():
    intro = "The client reads its settings from this file."  # no colon: the code still goes with it
    code = "```yaml\n" + "\n".join(f"key{i:02}: value{i:02}" for i in range(55)) + "\n```"
    prose = words(17)
    assert len(prose) + len(intro) + len(code) + 4 > MAX_PASSAGE_CHARS > len(prose) + len(intro) + 2
    parts = chunk(f"# Config\n\n{prose}\n\n{intro}\n\n{code}\n")
    assert parts == [("Config", prose), ("Config", f"{intro}\n\n{code}")]


def test_code_longer_than_the_maximum_is_split_at_blank_lines_then_lines_and_refenced():
    groups = ["\n".join(f"step_{g}_{i} = compute({i})" for i in range(12)) for g in range(8)]
    code = "```python\n" + "\n\n".join(groups) + "\n```"
    one_group = "```js\n" + "\n".join(f"const value{i} = {i};" for i in range(120)) + "\n```"
    for block in (code, one_group):
        parts = chunk(f"# Big\n\nThe whole program:\n\n{block}\n")
        assert len(parts) > 1
        assert_well_formed(parts)
        lang = block.split("\n", 1)[0]
        assert all(t.split("\n")[0] == lang or t.startswith("The whole program:") for _, t in parts)
        body_lines = [x for _, t in parts for x in t.split("\n") if x.strip() and not x.startswith(("```", "The"))]
        assert body_lines == [x for x in block.split("\n")[1:-1] if x.strip()]  # nothing lost or reordered
    first = chunk(f"# Big\n\nThe whole program:\n\n{code}\n")
    assert "\n\n".join(groups[0].split("\n")) not in first[0][1]  # cut at blank lines: a group stays whole
    assert groups[0] in first[0][1]


# 3. Tiny sections merge, long ones split -----------------------------------------------------------------------

def test_tiny_sections_merge_with_their_siblings_keeping_their_headings():
    body = (f"# Guide\n\n{words(10)}\n\n## Install\n\n{words(7)}\n\n### pip\n\nRun `pip install x`.\n\n"
            f"### conda\n\nRun `conda install x`.\n\n## Usage\n\n{words(10)}\n")
    parts = chunk(body)
    sections = [s for s, _ in parts]
    assert sections == ["Guide", "Guide › Install", "Guide › Usage"]
    install = parts[1][1]
    assert "### pip\n\nRun `pip install x`." in install and "### conda\n\nRun `conda install x`." in install
    assert not install.startswith("#")  # its own heading is its section


def test_tiny_siblings_are_labelled_by_their_common_parent():
    body = f"# Guide\n\n## Linux\n\nUse apt.\n\n## macOS\n\nUse brew.\n\n## Windows\n\n{words(10)}\n"
    assert chunk(body) == [("Guide", f"## Linux\n\nUse apt.\n\n## macOS\n\nUse brew.\n\n## Windows\n\n{words(10)}")]
    after = f"# Guide\n\n{words(10)}\n\n## Linux\n\nUse apt.\n\n## macOS\n\nUse brew.\n"  # none follows: back
    assert chunk(after) == [("Guide", f"{words(10)}\n\n## Linux\n\nUse apt.\n\n## macOS\n\nUse brew.")]


def test_a_last_tiny_section_joins_the_one_before_it():
    body = f"# Guide\n\n## Usage\n\n{words(12)}\n\n## Notes\n\nNone yet.\n"
    assert chunk(body) == [("Guide", f"## Usage\n\n{words(12)}\n\n## Notes\n\nNone yet.")]


def test_long_sections_split_at_paragraphs_into_passages_within_the_range():
    paragraphs = [words(5 + i % 4, f"p{i}") for i in range(40)]
    parts = chunk("# Long\n\n" + "\n\n".join(paragraphs) + "\n")
    assert len(parts) > 3
    assert all(MIN_PASSAGE_CHARS <= len(t) <= MAX_PASSAGE_CHARS for _, t in parts)
    assert [p for _, t in parts for p in t.split("\n\n")] == paragraphs  # cut between paragraphs only


def test_a_long_section_is_not_cut_before_a_paragraph_referring_back_to_the_one_before_it():
    """"With this setting, the application will reject ..." opening a passage names no setting: the one it refers
    to was left in the passage before. A paragraph opening on what the one before it said stays with that one.
    Controls: the same paragraph not referring back opens the passage; nothing is lost and no passage is too long."""
    paragraphs = [words(7, f"p{i}") for i in range(10)]
    plain = chunk("# Long\n\n" + "\n\n".join(paragraphs) + "\n")
    assert [t.split("\n\n")[0] for _, t in plain][1] == paragraphs[5]  # the cut falls before p5
    referring = [*paragraphs[:5], "With this setting, " + paragraphs[5][0].lower() + paragraphs[5][1:], *paragraphs[6:]]
    parts = chunk("# Long\n\n" + "\n\n".join(referring) + "\n")
    assert [t.split("\n\n")[0] for _, t in parts][1] == paragraphs[6]
    assert referring[4] + "\n\n" + referring[5] in parts[0][1]
    assert [p for _, t in parts for p in t.split("\n\n")] == referring
    assert all(len(t) <= MAX_PASSAGE_CHARS for _, t in parts)


def test_a_short_last_passage_joins_the_one_before_it_and_no_passage_is_lost_or_repeated():
    """A long section's short tail is folded into the passage before it; the passage before that stays
    (``out[-2] += out.pop()`` had stored the merged passage over the one before it: Jinja's "Whitespace
    Control" lost its first half, ``trim_blocks`` included, and repeated its second)."""
    for n in range(3, 30):
        for tail in (1, 2, 3, 5):
            paragraphs = [words(7, f"p{i}") for i in range(n)] + [words(tail, "tail")]
            parts = chunk("# Long\n\n" + "\n\n".join(paragraphs) + "\n")
            assert [p for _, t in parts for p in t.split("\n\n")] == paragraphs, (n, tail)
            assert all(len(t) <= MAX_PASSAGE_CHARS for _, t in parts)


def test_a_long_list_is_cut_between_items_and_a_long_paragraph_between_sentences():
    items = [f"- **Item {i}**: {words(2, f'i{i}')}" for i in range(40)]
    parts = chunk("# Changes\n\n" + "\n".join(items) + "\n")
    assert len(parts) > 1 and all(len(t) <= MAX_PASSAGE_CHARS for _, t in parts)
    assert [x for _, t in parts for x in t.split("\n")] == items
    paragraph = words(120)
    parts = chunk(f"# One\n\n{paragraph}\n")
    assert all(t.endswith(".") for _, t in parts) and " ".join(t for _, t in parts) == paragraph


def test_no_passage_is_only_a_heading_and_a_headings_only_document_keeps_them():
    body = f"# A\n\n## B\n\n### C\n\n{words(10)}\n\n## D\n\n## E\n\n{words(10)}\n"
    parts = chunk(body)
    assert_well_formed(parts)
    assert "## D" in "\n".join(t for _, t in parts)  # a heading with nothing under it is kept, not a passage
    assert chunk("# Only\n\n## Headings\n") == [("", "# Only\n\n## Headings")]


@pytest.mark.parametrize("body", [
    "# T\n\ntext one\ntwo\n\n## Sub ##\n\npara\n# C#\n#hashtag line\n\n###\n\n####### seven\n",
    "# Falcon overview\n\nProject Falcon depends on Atlas.\n",
    "x\n\n\n\ny  \n#  Spaced   heading   #  \npara [link]: not a definition\n",
])
def test_headings_and_paragraphs_alone_are_read_as_the_parser_reads_them(body: str, monkeypatch):
    chunker = sys.modules["hoprag.ingest.chunk"]
    fast = chunker._plain_blocks(body)
    assert fast is not None  # the line-by-line path took it
    monkeypatch.setattr(chunker, "_plain_blocks", lambda _: None)
    assert fast == chunker._blocks(body)


def test_plain_text_chunks_as_before():
    assert chunk("# not a heading in text\n\nmore", headings=False) == [("", "# not a heading in text\n\nmore")]
    assert chunk("  one\n\n\n\n two  ", headings=False) == [("", "one\n\ntwo")]


# 4. Markup reduced to its text --------------------------------------------------------------------------------

@pytest.mark.parametrize("source, expected", [
    ('!!! note "Read this"\n    Body text.\n\n    More.', "Read this:\nBody text.\n\nMore."),
    ("??? tip\n    Collapsed.", "Tip:\nCollapsed."),
    ('???+ warning "Careful!"\n    Open.', "Careful!\nOpen."),
    ('=== "Python"\n\n    Use it.\n\n=== "Shell"\n    Run it.', "Python:\nUse it.\n\nShell:\nRun it."),
    ("/// details | Summary\n    type: warning\n\nHidden.\n///", "Summary:\nHidden."),
    ('Before\n\n--8<-- "includes/x.md"\n{* ../src/app.py hl[3] *}\n{!> ../src/y.md !}\n{!z.md!}\n\nAfter',
     "Before\n\nAfter"),
    ("Text <!-- hidden\nacross lines --> here.", "Text here."),
    ("See ![a diagram](d.png) and ![](x.png).", "See a diagram and ."),
    ("Read [the guide](https://x.org/g \"Guide\") and [the API][api].\n\n[api]: https://x.org/api",
     "Read the guide and the API."),
    ('<div class="grid" markdown>\nA<br>B <img src="x.png"> C\n</div>', "A B C"),
    ("<details>\n<summary>More</summary>\nHidden.\n</details>", "More\nHidden."),
    ("[Start](x.md){ .md-button .md-button--primary }\n\n## Title { #anchor }", "Start\n\n## Title"),
    (":material-check: Done :octicons-mark-github-16: and :fontawesome-brands-python:.", "Done and ."),
    ("The HTML spec.\n\n*[HTML]: Hyper Text Markup Language", "The HTML spec."),
    ("| a | b |\n|---|:-:|\n| 1 | `x|y` |", "| a | b |\n| 1 | `x|y` |"),
    ("Keep **bold**, _em_, `[not](a link)` and <https://x.org>.",
     "Keep **bold**, _em_, `[not](a link)` and https://x.org."),
    ("```md\n!!! note\n    [a](b) <b>x</b> --8<-- \"y\"\n```",) * 2,  # code is never touched
    ("Set it:\n\n```python\n--8<-- \"snippets/loop.py:limit\"\n```\n\nDone.", "Set it:\n\nDone."),  # includes only
    ("```python\n--8<--\nsnippets/a.py\nsnippets/b.py\n--8<--\n```\n\nDone.", "Done."),
    ("```md\n;--8<-- \"escaped.md\"\n```",) * 2,  # an escaped include is shown as written
])
def test_mkdocs_markup_is_reduced_to_its_text(source: str, expected: str):
    assert markdown_text(source) == expected


@pytest.mark.parametrize("source, expected", [
    ("import Tabs from '@theme/Tabs';\nimport {\n  A,\n} from 'b';\nexport const x = {\n  y: 1,\n};\n\n# Hi",
     "# Hi"),
    (":::note Heads up\n\nBody.\n\n:::", "Heads up:\nBody."),
    (":::tip[Pro tip]\nBody.\n:::", "Pro tip:\nBody."),
    (":::warning\nBody.\n:::", "Warning:\nBody."),
    ("Text {/* a comment\nhere */} more.", "Text more."),
    ('<Tabs>\n  <TabItem value="py" label="Python" default>\n    Use `pip`.\n\n    ```bash\n    pip install x\n'
     '    ```\n  </TabItem>\n</Tabs>', "Python:\nUse `pip`.\n\n```bash\npip install x\n```"),
])
def test_mdx_markup_is_reduced_to_its_text(source: str, expected: str):
    assert markdown_text(source, mdx=True) == expected


def test_character_references_and_backslash_escapes_show_what_markdown_renders():
    """Gunicorn's signal list reads "`USR1` &mdash; reopen log files" and cmd2's prose "cmd2.Cmd.\\_\\_init\\_\\_": a
    reader sees "—" and "__init__". Controls: code keeps its text as written, an "&" with no ";" is no reference,
    and a decoded "&lt;div&gt;" is text, not a tag to drop."""
    source = ("- `USR1` &mdash; reopen log files, see &#8220;signals&#x201D;.\n\n"
              "Pass them to cmd2.Cmd.\\_\\_init\\_\\_ as \\*args, not `a\\_b` or ?a=1&param=2 or &lt;div&gt;.")
    assert markdown_text(source) == ("- `USR1` \u2014 reopen log files, see \u201csignals\u201d.\n\n"
                                     "Pass them to cmd2.Cmd.__init__ as *args, not `a\\_b` or ?a=1&param=2 or <div>.")


def test_myst_directives_and_roles():
    source = ("See {ref}`the guide <guide-label>` and {mod}`pathlib`.\n\n(target)=\n\n```{note}\nA note.\n```\n\n"
              "```{code-block} python\n:caption: x\n\nprint(1)\n```\n\n```{toctree}\nhidden\n```\n\n"
              ":::{admonition} Careful\nBody.\n:::")
    assert markdown_text(source) == ("See the guide and pathlib.\n\nNote:\nA note.\n\n"
                                     "```python title=\"x\"\nprint(1)\n```\n\n"
                                     "Careful:\nBody.")
    in_list = "- ```\n  X=1\n  ```\n\n  is the same as `--x=1`\n\n- ```{note}\n  A note in a list.\n  ```\n"
    assert markdown_text(in_list) == "- ```\n  X=1\n  ```\n\n  is the same as `--x=1`\n\n- Note:\n  A note in a list."
    # braces inside a code span are the code's own, not a role: Hatch's "`{variable}` and `{value}`" lost both
    placeholders = "It recognizes the placeholders `{variable}` and `{value}`. By default it is `{value}`."
    assert markdown_text(placeholders) == placeholders
    assert markdown_text("Pass `thinking={...}` to it, see ({mod}`os`).") == "Pass `thinking={...}` to it, see (os)."


# 5. Formats ---------------------------------------------------------------------------------------------------

RST = """\
:orphan:

==========
User Guide
==========

.. _running:

Running pip
===========

Run it as :command:`pip` or see :ref:`the reference <pip-ref>` and `PyPI <https://pypi.org>`_.
Use ``python -m pip`` and `Requirement
Specifiers`_ [#f1]_.

.. code-block:: shell
   :caption: install

   python -m pip install SomePackage
   # a comment, not a heading

.. note::

   Notes render as text.

   With two paragraphs.

.. toctree::
   :maxdepth: 2

   hidden/page

.. This is a comment
   spanning lines.

Literal blocks follow a double colon::

    $ pip freeze
    # also code

Details
-------

>>> print("doctest")
doctest

.. versionadded:: 2.0
   The flag.

.. warning:: Text on the directive's line
   starts its body.
"""


def test_rst_sections_code_directives_and_roles():
    text = rst_markdown(RST)
    assert text.startswith("# User Guide\n\n## Running pip\n\n")
    assert "Run it as `pip` or see the reference and PyPI.\nUse `python -m pip` and Requirement\nSpecifiers." in text
    inline = rst_markdown("Pass `required=True` to :func:`~click.core.option`, see :ref:`the guide <g>`.")
    assert inline == "Pass `required=True` to `option`, see the guide."  # code roles render as code, links as text
    home = rst_markdown("Read :file:`~/.config/app/app.conf`, not :file:`/etc/app.conf`; "
                        "see :meth:`~a.B.c()`, :class:`~.B`.")
    assert home == "Read `~/.config/app/app.conf`, not `/etc/app.conf`; see `c()`, `B`."  # "~" shortens names only
    escaped = rst_markdown("Pass ``Cmd``\\ s as \\*args, a \\\\ alone, :file:`C:\\\\temp` or ``a\\*b``.")
    assert escaped == "Pass `Cmd`s as *args, a \\ alone, `C:\\temp` or `a\\*b`."  # as rendered; literals as written
    assert "```shell title=\"install\"\npython -m pip install SomePackage\n# a comment, not a heading\n```" in text
    assert "Note:\nNotes render as text.\n\nWith two paragraphs." in text
    assert "Literal blocks follow a double colon:\n\n```\n$ pip freeze\n# also code\n```" in text
    assert "### Details" in text and '```pycon\n>>> print("doctest")\ndoctest\n```' in text
    assert "New in version 2.0:\nThe flag." in text
    assert "Warning:\nText on the directive's line\nstarts its body." in text
    for gone in ("toctree", "hidden/page", "This is a comment", "_running", ":orphan:", "maxdepth", ":caption:"):
        assert gone not in text
    parts = chunk(text)
    assert {s for s, _ in parts} <= {"User Guide › Running pip", "User Guide › Running pip › Details",
                                     "User Guide"}
    assert_well_formed(parts)


@pytest.mark.parametrize("name, body, rst", [
    ("usage.txt", "Usage\n=====\n\nSee :ref:`the guide <g>` and :class:`~django_filters.FilterSet`.\n\n"
                  ".. note::\n\n   Notes render as text.\n", True),
    ("README.txt", "Notes\n=====\n\nThis folder holds the guide's sources: run make html.\n", False),
    ("llms.txt", "# Title\n\nMarkdown-like text with `code` and no directive.\n", False)])
def test_restructuredtext_saved_as_txt_reads_as_restructuredtext(name: str, body: str, rst: bool):
    """Sphinx projects may keep their pages as ``.txt`` (Django's docs, django-filter's): a ``.txt`` file with an
    underlined title and reStructuredText markup (a role, a directive) is read as reStructuredText -- its roles and
    directives are markup, not words of the page. Controls: plain text with an underlined title, and text with no
    markup, are kept as written."""
    (record,), _ = READERS[".txt"](Path(name), body.encode())
    if rst:
        assert record.body.startswith("# Usage\n") and record.title == "Usage" and record.headings
        assert ":ref:" not in record.body and ".. note::" not in record.body and "the guide" in record.body
    else:
        assert record.body == body and not record.headings


def test_an_rst_class_description_is_titled_by_its_name_and_a_css_class_only_wraps():
    """Sphinx's ``.. class:: OrderedMultiDict`` describes a class: its body, deprecation notes included, stands under
    the name ("OrderedMultiDict:" -- a reference entry's term line), or nothing in it says what it is about. Control:
    docutils' ``.. class:: special`` only sets a CSS class (lower case, no signature): its body, no title."""
    text = rst_markdown(".. class:: OrderedMultiDict(mapping=None)\n\n    Keeps the order.\n\n"
                        "    .. deprecated:: 3.1\n        Use :class:`MultiDict` instead.\n\n"
                        ".. class:: special\n\n    Styled text.\n")
    assert text.startswith("OrderedMultiDict(mapping=None):\nKeeps the order.")
    assert "Deprecated since version 3.1:\nUse `MultiDict` instead." in text
    assert "special" not in text and "Styled text." in text


def test_what_a_page_writes_under_an_autodoc_directive_is_kept_under_the_objects_name():
    """autodoc renders the docstring from the code; what the page writes under ``.. autoclass::`` (structlog's note
    that ``__structlog__`` is used, its example) renders after it -- it was dropped with the directive. Control: an
    autodoc directive with nothing under it renders nothing of the page."""
    source = (".. automodule:: structlog.processors\n\n.. autoclass:: JSONRenderer\n\n"
              "   Bound objects are serialized using a ``__structlog__`` method.\n\n"
              "   .. doctest::\n\n      >>> JSONRenderer()\n\n.. autofunction:: merge\n")
    text = rst_markdown(source)
    assert text.startswith("JSONRenderer:\nBound objects are serialized using a `__structlog__` method.")
    assert ">>> JSONRenderer()" in text
    assert "structlog.processors" not in text and "merge" not in text
    myst = "```{autoclass} JSONRenderer\nSerialized with `__structlog__`.\n```\n\n```{autofunction} merge\n```"
    assert markdown_text(myst) == "JSONRenderer:\nSerialized with `__structlog__`."


def test_a_code_directives_caption_is_kept_as_the_blocks_title():
    """Sphinx's ``:caption: flaskr/blog.py`` is shown above the listing -- which file the code belongs in (Flask's
    tutorial captions every listing so) -- and was dropped with the options; it is kept as MkDocs writes a block's
    title. Control: the other options still go, and a block without a caption has no title."""
    text = rst_markdown(".. code-block:: python\n   :caption: ``flaskr/blog.py``\n   :linenos:\n\n   import x\n\n"
                        ".. code-block:: python\n\n   y\n")
    assert text == '```python title="flaskr/blog.py"\nimport x\n```\n\n```python\ny\n```'
    assert markdown_text("```{code-block} python\n:caption: app.py\n:emphasize-lines: 1\n\nimport x\n```") == \
        '```python title="app.py"\nimport x\n```'


def test_a_substitution_the_page_defines_reads_as_its_text():
    """Flask's JavaScript page writes "calls |fetch|_" with ``.. |fetch| replace:: ``fetch()``:``: the page shows
    `fetch()`, and the bars were read as written. Control: a substitution defined elsewhere (``|version|``, from
    ``conf.py``) and code stay as written."""
    text = rst_markdown("JavaScript that calls |fetch|_ and replaces content.\n\nSee |version|.\n\n"
                        ".. |fetch| replace:: ``fetch()``\n.. _fetch: https://example.org\n\n"
                        ".. code-block:: text\n\n   |fetch| in code\n")
    assert text == "JavaScript that calls `fetch()` and replaces content.\n\nSee |version|.\n\n```text\n|fetch| in code\n```"


def test_an_anonymous_link_target_in_its_short_form_renders_nothing():
    """Sphinx's Markdown page writes "Sphinx can use `MyST-Parser`__." and then "__ https://myst-parser..." lines, the
    short form of ``.. __: URL``: the site shows the link, not the URLs, which were read as a paragraph of text (and
    quoted in answers). Control: "__" inside prose and code stays."""
    text = rst_markdown("Sphinx can use `MyST-Parser`__.\n\n__ https://myst-parser.readthedocs.io/\n"
                        "__ https://commonmark.org/\n\nDefine ``__init__`` and __ not a target.\n\n"
                        ".. code-block:: text\n\n   __ https://kept.example/\n")
    assert text == ("Sphinx can use MyST-Parser.\n\nDefine `__init__` and __ not a target.\n\n"
                    "```text\n__ https://kept.example/\n```")


def test_rst_code_tabs_are_code_not_headings():
    """sphinx-tabs' ``code-tab`` holds code: its ``# comment`` lines are no headings (a heading would put every
    passage after it under "You can also use sections like ...")."""
    text = rst_markdown("Set it:\n\n.. tabs::\n\n    .. code-tab:: toml\n        :caption: .coveragerc.toml\n\n"
                        "        # You can also use sections like [tool.coverage.run]\n        [report]\n"
                        "        exclude_also = [\"def __repr__\"]\n\nThe end.\n")
    assert '```toml title=".coveragerc.toml"\n# You can also use sections like [tool.coverage.run]\n[report]\n' in text
    assert ":caption:" not in text
    assert [s for s, _ in chunk("# Page\n\n" + text)] == ["Page"]


def test_a_definition_lists_term_names_its_definition():
    """MyST / def_list: "term", a blank line, ": definition". The ": " marker goes and the term's line ends in ":",
    so the definition reads under the name it defines (as a reference entry does), not as a line of its own
    starting with a colon. A term ending a sentence keeps its punctuation; ":::" stays a container."""
    text = markdown_text("Processors:\n\n{func}`structlog.processors.dict_tracebacks`\n\n: Gives a structured "
                         "`exception` key.\n  It nests.\n\n**It's about classes.**\n\n: You define a class.\n")
    assert "structlog.processors.dict_tracebacks:\nGives a structured `exception` key.\n  It nests." in text
    assert "**It's about classes.**\nYou define a class." in text and "\n: " not in text


def test_html_keeps_pre_blocks_as_fenced_code_with_their_newlines(tmp_path: Path):
    page = ("<html><head><title>Deploy</title></head><body><h1>Deploy</h1><p>Run   the\n   script:</p>"
            '<pre><code class="language-bash"># build it\nmake   all\n\n./deploy --now</code></pre>'
            "<p>Then check <code>status</code>.</p></body></html>")
    (tmp_path / "d.html").write_text(page)
    [record], problems = READERS[".html"](tmp_path / "d.html", page.encode())
    assert problems == [] and record.title == "Deploy"
    assert record.body == ("# Deploy\n\nRun the script:\n\n```bash\n# build it\nmake   all\n\n./deploy --now\n```"
                           "\n\nThen check `status`.")
    assert chunk(record.body) == [("Deploy", record.body.split("\n\n", 1)[1])]


def test_html_lists_read_as_items_and_a_definitions_term_as_the_name_it_defines(tmp_path: Path):
    """Sphinx's parameter lists and definition lists: each <li> starts a "- " item (so a parameter's later sentence
    stands under its name), and a <dt> reads "term:" before its <dd>, as a Markdown definition list does. Controls: a
    term ending in punctuation gets no second colon, and an item's <p> stays on its marker's line."""
    page = ('<html><body><dl class="field-list"><dt>Parameters<span class="colon">:</span></dt><dd><ul>'
            "<li><p><strong>compare_type</strong> (<em>bool</em>) \u2013 Compare types. Off by default.</p></li>"
            "<li><p><strong>include_schemas</strong> \u2013 Schemas too.</p></li></ul></dd></dl>"
            "<dl><dt>threads</dt><dd><p>The number of threads.</p><p>Default: <code>4</code></p></dd></dl>"
            "<ol><li>First step.</li><li>Second <b>step</b>.</li></ol></body></html>")
    [record], _ = READERS[".html"](tmp_path / "d.html", page.encode())
    assert record.body == ("Parameters:\n\n- compare_type (bool) \u2013 Compare types. Off by default.\n\n"
                           "- include_schemas \u2013 Schemas too.\n\nthreads:\n\nThe number of threads.\n\nDefault: `4`"
                           "\n\n- First step.\n\n- Second step.")


def test_rst_definition_lists_read_as_term_then_one_block_of_prose():
    """A reference page's entry ("max_request_body_size" and, indented under it, its description and default): the term
    reads "term:" (what the entry's sentences stand under) and the description's paragraphs are one block, so a
    passage boundary never parts "Default: ..." from the term. Controls: a list item's continuation, a field and a
    paragraph introducing a literal block are no terms, and a definition holding code keeps its blocks apart."""
    text = rst_markdown("max_request_body_size\n    Maximum bytes in a body (integer).\n\n    Default: ``1073741824``\n\n"
                        "- an item\n  continued\n\n:param x: a field\n    continued\n\nUse this::\n\n    code here\n\n"
                        "example\n    Run it:\n\n    .. code-block:: sh\n\n        tool --go\n")
    assert "max_request_body_size:\nMaximum bytes in a body (integer).\nDefault: `1073741824`" in text
    assert "- an item\ncontinued" in text and ":param x: a field" in text and "Use this:\n\n```\ncode here\n```" in text
    assert "example:\nRun it:\n\n```sh\ntool --go\n```" in text


def test_mkdocstrings_autodoc_lines_and_their_options_are_dropped_but_a_docusaurus_admonition_stays():
    """``::: pkg.Router`` and its indented ``options:`` stand for an API page generated when the site is built: the
    source holds no text of it (read raw it became ".Router:" and a list of member names). Controls: a Docusaurus
    ``:::note`` keeps its text, and so does the page's own prose."""
    text = markdown_text("# `Router` class\n\nYou can import `Router` from `pkg`.\n\n::: pkg.Router\n    options:\n"
                         "        members:\n            - websocket\n\n::: pkg.routing.Route\n\n::: pkg\n    options:\n"
                         "        show_root_heading: true\n\n:::note\nA real note.\n:::\n")
    assert "Router:" not in text and "websocket" not in text and "Route" not in text.replace("`Router`", "")
    assert "You can import `Router` from `pkg`." in text and "A real note." in text and "show_root" not in text


def test_html_drops_permalink_markers_but_keeps_other_links(tmp_path: Path):
    """Sphinx and MkDocs end every heading with a permalink ("1.20.0#", "Usage¶"): a marker, not words -- with it a
    release's heading names no release. Control: an ordinary link's text stays."""
    page = ('<html><body><h2>1.20.0<a class="headerlink" href="#v" title="Link to this heading">#</a></h2>'
            '<p>Fixed the <a class="reference internal" href="api.html">runner</a>.'
            '<a class="changelog-reference headerlink" href="#c">\u00b6</a></p>'
            '<h3>Usage<a class="hash-link" href="#u">#</a></h3><p>Read <a href="x.html">this</a>.</p></body></html>')
    [record], _ = READERS[".html"](tmp_path / "d.html", page.encode())
    assert record.body == "## 1.20.0\n\nFixed the runner.\n\n### Usage\n\nRead this."


def test_html_templates_and_pages_without_text_are_skipped_not_indexed_or_failed(tmp_path: Path):
    """A docs folder holds its site generator's templates (Sphinx ``_templates/``, MkDocs ``overrides/``, Jekyll
    ``_layouts/``): their "{% extends %}" and "{{ toc_item.title }}" were indexed as words of a page, and a logo
    link's template, no text at all, failed the index as "document text is empty". Both are skipped, saying why.
    Controls: a page about templates, its tags in inline code and a <pre> block, is indexed with them; one tag a page
    mentions in passing is not a template."""
    layout = ('{% extends "!layout.html" %}\n{%- block sidebartitle %}<p>Overridden to link the home page.</p>'
              '<a href="{{ pathto(master_doc) }}">Home</a>{% endblock %}')
    about = ("<h1>Templates</h1><p>A child template starts with <code>{% extends \"base.html\" %}</code> and fills "
             "<code>{% block body %}</code>.</p><pre>{% block body %}\n  Hi\n{% endblock %}</pre>")
    aside = "<h1>Raw</h1><p>Write {% raw %} to keep braces as they are in the output of the renderer.</p>"
    report, engine = index_folder(tmp_path, {"_templates/layout.html": layout, "about.html": about, "aside.html": aside,
                                             "_templates/logo.html": '<p class="logo"><a href="{{ pathto(x) }}">'
                                             '<img src="logo.png"/></a></p>', "empty.html": ""})
    assert report.failed == []
    why = {Path(p.where).name: str(p) for p in report.skipped}
    assert set(why) == {"layout.html", "logo.html", "empty.html"}
    assert "a page template (3 '{% ... %}' tags outside code)" in why["layout.html"]
    assert "no text of its own" in why["logo.html"] and "an empty page" in why["empty.html"]
    docs = {d.id: d.text for d in engine.docs}
    assert set(docs) == {"about.html", "aside.html"} and "`{% block body %}`" in docs["about.html"]
    assert "{% raw %}" in docs["aside.html"]


def test_a_built_docs_page_is_read_from_its_marked_content_not_its_chrome(tmp_path: Path):
    """A Sphinx or MkDocs site as built: around the page's text stand "Skip to main content", "Back to top", "Search
    Ctrl+K", the previous and next pages and the copyright -- the first and last words of every page's passages. The
    one ``<article>`` is read, else the element with ``role="main"`` (Sphinx's classic themes). Control: a page of
    several articles (a blog's list) is read whole."""
    chrome = ('<a class="skip-link" href="#main">Skip to main content</a><button>Back to top</button>'
              '<div class="search">Search Ctrl+K</div>')
    built = (f"<html><body>{chrome}<main><article><h1>Deploy</h1><p>Run the script.</p></article>"
             '<footer class="prev-next">previous Tutorial next API</footer></main>'
             "<footer>© Copyright 2026, Someone.</footer></body></html>")
    classic = (f'<html><body>{chrome}<div class="document"><div class="body" role="main"><div><h1>Install</h1>'
               "<p>Use pip.</p></div></div></div><div>© Copyright</div></body></html>")
    blog = (f"<html><body>{chrome}<article><h2>One</h2><p>First post.</p></article>"
            "<article><h2>Two</h2><p>Second post.</p></article></body></html>")
    read = {name: READERS[".html"](tmp_path / name, page.encode())[0][0].body
            for name, page in {"built.html": built, "classic.html": classic, "blog.html": blog}.items()}
    assert read["built.html"] == "# Deploy\n\nRun the script."
    assert read["classic.html"] == "# Install\n\nUse pip."
    assert read["blog.html"].startswith("Skip to main content") and "Second post." in read["blog.html"]
    script = '<html><body><script>el.innerHTML = "<main>"</script><h1>Page</h1><p>Text.</p></body></html>'
    assert READERS[".html"](tmp_path / "s.html", script.encode())[0][0].body == "# Page\n\nText."  # no <main>: whole


def test_an_html_page_of_links_is_skipped_as_an_index_not_a_page(tmp_path: Path):
    """Sphinx's built ``genindex.html`` lists every name in the docs as a link ("GraphQLView (class)"): indexed, each
    looked mentioned and the page answered nothing. A page LINKS_SHARE of whose text (at least LINKS_CHARS) is link
    text is skipped with the reason. Controls: a page of prose with links in it, and a short contents page."""
    import hoprag.formats as formats

    entries = "".join(f'<li><a href="api.html#n{i}">name_{i}() (in module pkg.mod{i})</a></li>' for i in range(40))
    index_page = f"<html><body><h1>Index</h1><ul>{entries}</ul></body></html>"
    prose = ("<html><body><h1>Guide</h1><p>" + "The server reads its settings at start and keeps them. " * 12
             + '</p><p>See <a href="config.html">the configuration page</a> for every setting.</p></body></html>')
    contents = '<html><body><h1>Contents</h1><ul><li><a href="guide.html">Guide</a></li></ul></body></html>'
    assert len(entries) > formats.LINKS_CHARS
    report, engine = index_folder(tmp_path, {"genindex.html": index_page, "guide.html": prose,
                                             "contents.html": contents})
    why = {Path(p.where).name: str(p) for p in report.skipped}
    assert set(why) == {"genindex.html"} and "a page of links (" in why["genindex.html"]
    assert {d.id for d in engine.docs} == {"guide.html", "contents.html"}


def test_a_text_file_listing_one_word_a_line_is_skipped_not_indexed(tmp_path: Path):
    """A Sphinx spell checker's ``spelling_wordlist.txt`` and a pinned ``requirements.txt`` were indexed as pages:
    no sentence to answer from, and every name they list ("GraphQL" among a project's people and tools) made a
    question's term look mentioned in the docs. A text file of at least LIST_LINES lines, LIST_SHARE of them one word
    or token, is skipped with the reason. Controls: a short list and a page of sentences are indexed."""
    import hoprag.formats as formats

    words_list = "\n".join(f"word{i}" for i in range(formats.LIST_LINES)) + "\nGraphQL\n"
    pinned = "# autogenerated\n" + "".join(f"pkg{i}==1.{i}.0 \\\n    --hash=sha256:{i:064x}\n    # via sphinx\n"
                                            for i in range(formats.LIST_LINES // 2))
    short = "\n".join(f"word{i}" for i in range(formats.LIST_LINES - 2))
    prose = "Notes\n\n" + "\n".join(f"Line {i} says something about the docs." for i in range(formats.LIST_LINES))
    report, engine = index_folder(tmp_path, {"spelling_wordlist.txt": words_list, "requirements.txt": pinned,
                                             "short.txt": short, "notes.txt": prose})
    why = {Path(p.where).name: str(p) for p in report.skipped}
    assert set(why) == {"spelling_wordlist.txt", "requirements.txt"} and report.failed == []
    assert f"a list, one word a line ({formats.LIST_LINES + 1} lines" in why["spelling_wordlist.txt"]
    assert {d.id for d in engine.docs} == {"short.txt", "notes.txt"}


def test_first_heading_skips_code_and_reads_underlined_titles():
    assert first_heading("```\n# not a title\n```\n\n# Real title\n") == "Real title"
    assert first_heading("Setext title\n============\n\ntext") == "Setext title"


def test_every_format_is_indexed_with_heading_paths(tmp_path: Path):
    mdx = "import X from 'y';\n\n# MDX page\n\n:::note\n\n" + words(10) + "\n\n:::\n"
    report, engine = index_folder(tmp_path, {"a.mdx": mdx, "b.rst": RST, "c.md": f"# Plain\n\n{words(10)}\n",
                                             "includes-only.md": '--8<-- "elsewhere.md"\n'})
    assert report.failed == [] and (report.files, report.indexed) == (4, 3)
    assert [(Path(p.where).name, "no text of its own" in str(p)) for p in report.skipped] == \
        [("includes-only.md", True)]  # nothing to index is skipped, not failed
    docs = {d.id: d for d in engine.docs}
    assert docs["a.mdx"].title == "MDX page" and docs["a.mdx"].text.startswith("Note:\nThe lorem")
    assert docs["b.rst"].title == "User Guide" and docs["b.rst"].section == "User Guide › Running pip"


def test_a_store_indexed_by_another_chunking_reads_every_file_again(tmp_path: Path, monkeypatch):
    files = {"c.md": f"# Plain\n\n{words(10)}\n"}
    report, _ = index_folder(tmp_path, files)
    assert report.new == 1
    store = open_store(tmp_path / "s.db")
    assert index(tmp_path / "src", store, ["g"]).unchanged == 1
    monkeypatch.setattr(ingest, "CHUNKING", "older")
    assert index(tmp_path / "src", store, ["g"]).changed == 1


# 6. Regression: realistic documentation pages --------------------------------------------------------------------

MKDOCS_PAGE = """\
---
title: Caching responses
---
# Caching responses

[:octicons-tag-24: 2.3.0](https://github.com/example/releases){ .md-badge }

Caching keeps the result of an expensive handler and serves it again for a while. This page shows how
to turn it on, how to pick a backend and how to invalidate entries when the data behind them changes.

## Turning it on

Add the middleware to your application:

```python
from example import App
from example.cache import CacheMiddleware

app = App()
# wrap every route
app.add_middleware(CacheMiddleware, ttl=60)


@app.get("/items/{item_id}")
def read_item(item_id: int):
    return {"item_id": item_id}
```

!!! tip "Pick a short TTL first"
    Start with a short time to live and raise it once you know how stale the data may be.
    A minute is a good start for most read-heavy endpoints.

=== "Memory"

    ```python
    app.add_middleware(CacheMiddleware, backend="memory")
    ```

=== "Redis"

    ```python
    app.add_middleware(CacheMiddleware, backend="redis://localhost")
    ```

--8<-- "includes/cache-footer.md"

## Invalidation

### By key

Call `cache.delete(key)`.

### By tag

Tag entries when you store them and drop every entry of a tag at once with `cache.delete_tag("items")`.
Tags are cheap: an entry may carry several, and deleting a tag never touches entries without it.

| Method | Scope |
|--------|-------|
| `delete` | one entry |
| `delete_tag` | every entry of a tag |

<!-- TODO: document clear() -->

*[TTL]: Time To Live
"""

DOCUSAURUS_PAGE = """\
---
title: Deploying to the edge
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

# Deploying to the edge

Edge deployments run your functions in data centres close to your users, which cuts the round trip for
every request. This guide walks through the configuration file, the command line and the rollback story.

:::info Prerequisites

You need the CLI version 3 or newer and an account with edge access enabled.

:::

## Configuration

Create an `edge.config.js` file at the root of your project:

```js title="edge.config.js"
// regions to deploy to
module.exports = {
  regions: ["fra", "iad"],

  // memory per function, in MB
  memory: 256,
};
```

{/* the regions list is generated from the API */}

## Deploying

<Tabs>
  <TabItem value="npm" label="npm">

    ```bash
    npx edge deploy --prod
    ```

  </TabItem>
  <TabItem value="yarn" label="Yarn">

    ```bash
    yarn edge deploy --prod
    ```

  </TabItem>
</Tabs>

## Rolling back

:::warning

A rollback redeploys the previous build; it does not restore data your functions wrote.

:::

Run `edge rollback` to go back one release, or `edge rollback --to <id>` for a given one. The command
prints the release it restored and the time it took, and exits non-zero when the release is unknown.
"""


def test_a_realistic_mkdocs_page(tmp_path: Path):
    report, engine = index_folder(tmp_path, {"cache.md": MKDOCS_PAGE})
    assert report.failed == []
    docs = list(engine.docs)
    parts = [(d.section, d.text) for d in docs]
    assert_well_formed(parts)
    assert {d.title for d in docs} == {"Caching responses"}
    text = "\n\n".join(t for _, t in parts)
    for raw in ("!!!", "===", "--8<--", "{ .md", ":octicons", "](", "<!--", "*[TTL]", "|----"):
        assert raw not in text, raw
    assert "Pick a short TTL first:\nStart with a short time to live" in text
    assert "Memory:\n\n```python\napp.add_middleware(CacheMiddleware, backend=\"memory\")\n```" in text
    code = [t for _, t in parts if "# wrap every route" in t]
    assert len(code) == 1 and "Add the middleware to your application:\n\n```python\n" in code[0]
    assert "# wrap every route\napp.add_middleware(CacheMiddleware, ttl=60)\n\n\n@app.get" in code[0]  # whole
    sections = [s for s, _ in parts]
    # the page's short intro merged with its first subsection; 'By key' is tiny: merged with 'By tag'
    assert sections == ["Caching responses", "Caching responses › Invalidation"]
    assert "changes.\n\n## Turning it on\n\nAdd the middleware" in text
    invalidation = dict(parts)["Caching responses › Invalidation"]
    assert "### By key\n\nCall `cache.delete(key)`." in invalidation and "### By tag" in invalidation
    assert "| `delete` | one entry |" in invalidation


def test_a_realistic_docusaurus_page(tmp_path: Path):
    report, engine = index_folder(tmp_path, {"deploy.mdx": DOCUSAURUS_PAGE})
    assert report.failed == []
    docs = list(engine.docs)
    parts = [(d.section, d.text) for d in docs]
    assert_well_formed(parts)
    assert {d.title for d in docs} == {"Deploying to the edge"}
    text = "\n\n".join(t for _, t in parts)
    for raw in ("import ", ":::", "<Tabs", "TabItem", "{/*", "</"):
        assert raw not in text, raw
    assert "Prerequisites:\nYou need the CLI version 3" in text
    assert "npm:\n\n```bash\nnpx edge deploy --prod\n```" in text and "Yarn:\n\n```bash\nyarn edge" in text
    config = [t for _, t in parts if "module.exports" in t]
    assert len(config) == 1 and "Create an `edge.config.js` file" in config[0]
    assert "  regions: [\"fra\", \"iad\"],\n\n  // memory per function, in MB" in config[0]  # whole, blank line too
    assert "Warning:\nA rollback redeploys" in text
    assert all(s.startswith("Deploying to the edge") for s, _ in parts)


@pytest.mark.parametrize("body", [
    "# Title\n\nOne short paragraph.",
    "No heading at all, one paragraph.\n\nAnd a second one.",
    "# Setup\n\nInstall it:\n\n```sh\npip install x\n```\n\n- a list item\n- another",
    "# A\n\n## B\n\nText under B.\n\n## C\n\nText under C.",
    "# Long\n\n" + "A sentence that goes on for a while. " * 60,
    "# Two\n\n" + "Enough words to stand alone here. " * 10 + "\n\n## Next\n\n" + "More words in the next part. " * 10,
])
def test_a_section_that_fits_comes_out_as_packing_would_make_it(body):
    """``chunk`` skips packing for a lone section within the bound: its passages are packing's own."""
    from hoprag.ingest.chunk import _groups, _items, _pack, _render, _sections

    minimum = min(MIN_PASSAGE_CHARS, MAX_PASSAGE_CHARS // 2)
    packed = [_render(p) for g in _groups(_sections(body, True), minimum)
              for p in _pack(_items(g, MAX_PASSAGE_CHARS), MAX_PASSAGE_CHARS, minimum)]
    assert chunk(body) == [(section, text) for section, text in packed if text]


def test_a_project_directive_holding_code_stays_code_and_one_holding_prose_stays_prose():
    """``.. click:example::`` is Click's own directive: hoprag does not know it, but its body is code --
    flattened into prose it would lose its indentation and never be quoted as code."""
    text = rst_markdown("Intro:\n\n.. click:example::\n\n    import codecs\n\n    @click.command()\n"
                        "    def encode(password):\n        click.echo(password)\n\n"
                        ".. custom-box:: Heads up\n\n    Define the class before you import it.\n\n"
                        ".. note::\n\n    from here on, a note.\n")
    assert "Example:\n```\nimport codecs\n\n@click.command()\ndef encode(password):\n    click.echo(password)\n```" in text
    assert "Heads up:\nDefine the class before you import it." in text  # prose: no line starts as code does
    assert "Note:\nfrom here on, a note." in text  # an admonition is prose whatever its first words


def test_rst_grid_and_simple_tables_become_pipe_tables_one_row_a_line():
    grid = ("Loop variables:\n\n+-------------+---------------------------+\n| Variable    | Description               |\n"
            "+=============+===========================+\n| ``i``       | The iteration. (1 indexed)|\n"
            "+-------------+---------------------------+\n| ``rev``     | Iterations from the end   |\n"
            "|             | (1 indexed).              |\n+-------------+---------------------------+\n")
    assert rst_markdown(grid) == ("Loop variables:\n\n| Variable | Description |\n|---|---|\n"
                                  "| `i` | The iteration. (1 indexed) |\n| `rev` | Iterations from the end (1 indexed). |")
    simple = ("=====  ==========\nFlag   Meaning\n=====  ==========\n``-w``   Workers,\n       four here.\n"
              "``-b``   Bind.\n=====  ==========\n\n===  ===\na    b\n===  ===\n\nAfter.\n")
    assert rst_markdown(simple) == ("| Flag | Meaning |\n|---|---|\n| `-w` | Workers, four here. |\n| `-b` | Bind. |"
                                    "\n\n|  |  |\n|---|---|\n| a | b |\n\nAfter.")
    assert rst_markdown("Text.\n\n=====  =====\nnot closed\n") == "Text.\n\nnot closed"  # no closing border: text


def test_rst_list_and_csv_tables_become_pipe_tables_one_row_a_line():
    """Sphinx docs write tables as ``list-table`` and ``csv-table`` directives (APScheduler's event codes: a row is
    ``* - EVENT_JOB_MAX_INSTANCES`` then its description and event class): each row is one line, the constant with
    what it means -- they were cells scattered as one-line list items under "List table:". Control: a table read from
    a file (``:file:``) has nothing on the page, and a grid table is unchanged."""
    listed = (".. list-table::\n   :header-rows: 1\n   :widths: 1 4 2\n\n   * - Constant\n     - Description\n"
              "     - Event class\n   * - EVENT_JOB_MAX_INSTANCES\n     - A job was not accepted because it already\n"
              "       runs its maximum instances\n     - :class:`JobSubmissionEvent`\n   * - EVENT_JOB_ADDED\n"
              "     - A job was added\n     -\n")
    assert rst_markdown(listed) == (
        "| Constant | Description | Event class |\n|---|---|---|\n"
        "| EVENT_JOB_MAX_INSTANCES | A job was not accepted because it already runs its maximum instances | "
        "`JobSubmissionEvent` |\n| EVENT_JOB_ADDED | A job was added |  |")
    assert rst_markdown(".. list-table::\n\n   * - External dependencies\n     - `kazoo <https://pypi.org/p/kazoo>`_\n") \
        == "|  |  |\n|---|---|\n| External dependencies | kazoo |"
    csv_table = (".. csv-table:: Frozen delights\n   :header: \"Treat\", \"Quantity\"\n\n   \"Albatross\", 2.99\n"
                 "   \"Crunchy Frog, \"\"boned\"\"\", \"1.49\n   each\"\n")
    assert rst_markdown(csv_table) == ("Frozen delights:\n\n| Treat | Quantity |\n|---|---|\n| Albatross | 2.99 |\n"
                                       "| Crunchy Frog, \"boned\" | 1.49 each |")
    assert rst_markdown("Before.\n\n.. csv-table:: Prices\n   :file: prices.csv\n\nAfter.\n") == "Before.\n\nPrices:\n\nAfter."


def test_an_autodoc_directive_writing_out_a_signature_keeps_it_as_the_objects_title():
    """``.. autoclass:: SQLAlchemyJobStore(url=None, tablename='apscheduler_jobs')`` renders the signature the page
    writes -- the defaults a reader asks for ("What table does it write jobs into?") -- and was dropped with the
    docstring autodoc reads from the code. Control: an autodoc directive naming only its object still renders nothing
    of the page."""
    text = rst_markdown("API\n---\n\n.. autoclass:: SQLAlchemyJobStore(url=None, tablename='apscheduler_jobs')\n"
                        "    :show-inheritance:\n\n.. autofunction:: merge\n")
    assert text == "# API\n\nSQLAlchemyJobStore(url=None, tablename='apscheduler_jobs'):"
    assert markdown_text("```{autoclass} Store(tablename='jobs')\n:members:\n```") == "Store(tablename='jobs'):"


def test_rst_directives_render_as_the_page_shows_them():
    """What Sphinx shows, not the directive's name: ``seealso`` is titled "See also", Sphinx 7.3's ``version-added``
    is "New in version" like ``versionadded``, a ``parsed-literal`` block is a literal (code) block, and sphinx-tabs'
    ``tabs`` only wraps its tabs. doctest's ``testsetup`` code is not shown on the page, so it is not indexed (it
    was prose under "Testsetup:"). Control: a ``testcode`` block, which the page shows, stays code."""
    text = rst_markdown(".. seealso:: The :func:`other` page.\n\n.. testsetup::\n\n   import os\n\n"
                        ".. testcode::\n\n   print(1)\n\n.. version-added:: 2.0\n   The flag.\n\n"
                        ".. tabs::\n\n   .. group-tab:: Python\n\n      Text here.\n\n"
                        ".. parsed-literal::\n\n   pip install **foo**\n")
    assert text == ("See also:\nThe `other` page.\n\n```\nprint(1)\n```\n\nNew in version 2.0:\nThe flag.\n\n"
                    "Python:\nText here.\n\n```\npip install **foo**\n```")


def test_a_changelog_directive_keeps_its_release_and_its_entries_lose_the_directives_name():
    """The changelog extension (Alembic's, Mako's) renders ``.. changelog::`` with ``:version: 1.4.3`` and
    ``:released:`` as that release's title, and each ``.. change::`` as its text: the release was dropped with the
    options, and every entry was titled "Change:". Control: a changelog naming no release shows no title."""
    source = (".. changelog::\n    :version: 1.4.3\n    :released: Tue Sep 22 2026\n\n    .. change::\n"
              "        :tags: bug, tests\n        :tickets: 441\n\n        Fixed a regression on Windows.\n\n"
              ".. changelog::\n\n    .. change::\n        :tags: feature\n\n        Added regions.\n")
    assert rst_markdown(source) == ("1.4.3 (released Tue Sep 22 2026):\n\nFixed a regression on Windows.\n\n"
                                    "Added regions.")
