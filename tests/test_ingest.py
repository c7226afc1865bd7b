"""Ingestion of ordinary files: formats, metadata defaults and rules, chunking, bad input, incremental runs."""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hoprag.corpus import MAX_ID_CHARS, MAX_METADATA_BYTES
from hoprag.engine import Engine
from hoprag.entities import FORMAT, norm
from hoprag.text import is_name
from hoprag.ingest import IngestError, index
from hoprag.ingest.chunk import chunk
from hoprag.ingest.meta import DEFAULT_GROUP, document_id
from hoprag.postings import Postings
from hoprag.search import TERMS_FORMAT, analysed
from hoprag.store import open_store
from hoprag.tokens import tokenize
from hoprag_cli.main import app

from ingest_tree import BUDGET_METADATA, build, pdf_bytes
from mcp_server.tools import MAX_NAME_CHARS

ENG, FIN = frozenset({"engineering"}), frozenset({"finance"})


def run_index(src: Path, db: Path, *groups: str):
    store = open_store(db, create=True)
    try:
        return index(src, store, groups)
    finally:
        store.close()


def engine_of(db: Path, ranker: str | None = None) -> Engine:
    return Engine.from_snapshot(open_store(db).snapshot(), ranker)  # the store stays open: it caches views


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build(tmp_path)


def test_every_format_is_read_with_defaults(tree: Path, tmp_path: Path):
    report = run_index(tree, tmp_path / "s.db", "engineering")
    assert (report.failed, report.skipped) == ([], [])
    assert (report.files, report.new) == (6, 6)
    docs = {d.id: d for d in engine_of(tmp_path / "s.db").docs}
    assert set(docs) == {"notes/heron.md#1", "notes/heron.md#2", "notes/deep/quill.txt", "basalt.html",
                         "finance/budget.md", "uploads/inbox.txt", "manuals/pager.pdf"}
    heron = docs["notes/heron.md#1"]
    assert (heron.title, heron.section, heron.document_id, heron.position) == ("Heron overview", "Heron overview",
                                                                                "notes/heron.md", 0)
    assert docs["notes/heron.md#2"].section == "Heron overview › Team" and docs["notes/heron.md#2"].position == 1
    assert docs["notes/heron.md#2"].title == "Heron overview"  # the document's title; the section is the heading path
    assert heron.source == (tree / "notes/heron.md").resolve().as_uri() and heron.trusted
    assert heron.groups == ENG and heron.updated is not None
    assert docs["notes/deep/quill.txt"].title == "quill"  # no heading: the file name
    html = docs["basalt.html"]
    assert html.title == "Basalt storage" and "eu-north-2" in html.text
    assert "xx-script-1" not in html.text and "color" not in html.text  # scripts and styles are not visible text
    assert "pager rotation handbook" in docs["manuals/pager.pdf"].text
    assert docs["finance/budget.md"].groups == FIN  # front matter wins over --groups
    assert json.loads(docs["finance/budget.md"].front_matter) == BUDGET_METADATA  # its other keys: metadata
    assert docs["notes/heron.md#2"].path == "notes/heron.md" and docs["notes/heron.md#2"].front_matter == ""
    assert not docs["uploads/inbox.txt"].trusted  # the corpus.yaml rule
    assert docs["basalt.html"].trusted


def test_untrusted_upload_is_never_evidence(tree: Path, tmp_path: Path):
    run_index(tree, tmp_path / "s.db", "engineering")
    engine = engine_of(tmp_path / "s.db")
    upload = engine.fetch("uploads/inbox.txt", ENG)
    assert engine.facts(upload)  # the reader sees a fact ...
    assert engine.evidence(upload) == ()  # ... the gate admits none
    assert "zz-upload-9" not in {o for (_, _, o, _) in engine.graph(ENG).edges()}


def test_a_document_with_no_groups_from_anywhere_is_in_the_default_group(tree: Path, tmp_path: Path):
    report = run_index(tree, tmp_path / "s.db")  # no --groups, no rule giving groups
    assert report.failed == [] and report.local == 5  # every document but the finance one, counted
    docs = {d.document_id: d for d in engine_of(tmp_path / "s.db").docs}
    assert docs["finance/budget.md"].groups == FIN  # front matter still wins
    assert {d.groups for name, d in docs.items() if name != "finance/budget.md"} == {frozenset({DEFAULT_GROUP})}
    assert engine_of(tmp_path / "s.db").fetch("basalt.html", ENG) is None  # no other group reads them


def test_the_summary_says_who_reads_the_default_group_under_an_access_file(tree: Path, tmp_path: Path):
    result = CliRunner().invoke(app, ["index", str(tree), "--store", str(tmp_path / "s.db"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert (f"default group: 5 documents named no groups (front matter, corpus.yaml rules, --groups) and are in group "
            f"'local': under the access file {tmp_path / 'access.yaml'} no principal holds group 'local', so nobody "
            "reads them") in result.stdout  # the access file beside the store: engineering and finance only


def test_rules_give_groups_per_folder_and_later_rules_win(tree: Path, tmp_path: Path):
    (tree / "corpus.yaml").write_text("rules:\n  - path: notes/\n    groups: [ops]\n"
                                      "  - path: notes/deep/*.txt\n    groups: [engineering, ops]\n"
                                      "  - path: uploads/\n    trusted: false\n")
    run_index(tree, tmp_path / "s.db", "engineering")
    docs = {d.id: d for d in engine_of(tmp_path / "s.db").docs}
    assert docs["notes/heron.md#1"].groups == {"ops"}
    assert docs["notes/deep/quill.txt"].groups == {"engineering", "ops"}
    assert docs["basalt.html"].groups == ENG


def test_bad_rules_are_one_line_naming_the_file(tree: Path, tmp_path: Path):
    (tree / "corpus.yaml").write_text("rules:\n  - path: notes/\n    colour: blue\n")
    with pytest.raises(IngestError, match=r"corpus.yaml: field 'rules\[0\].colour': unknown key"):
        run_index(tree, tmp_path / "s.db", "engineering")


def test_chunking_on_headings_and_paragraphs_within_the_bound():
    body = "# Intro\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(12)) + \
           "\n\n## Details\n\n" + "Long sentence number one. " * 200
    parts = chunk(body, limit=600)
    assert all(len(text) <= 600 for _, text in parts)
    assert parts[0][0] == "Intro" and parts[-1][0] == "Intro › Details"
    assert {s for s, _ in parts} == {"Intro", "Intro › Details"}
    without_headings = body.replace("# Intro", "").replace("## Details", "")  # a heading is the section, not text
    assert " ".join(" ".join(t for _, t in parts).split()) == " ".join(without_headings.split())
    assert chunk("# not a heading in text\n\nmore", headings=False) == [("", "# not a heading in text\n\nmore")]


def test_long_markdown_becomes_passages_with_document_and_section(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    sections = "\n\n".join(f"## Part {i}\n\n" + ("Zebra facts are listed here. " * 30) for i in range(5))
    (src / "long.md").write_text(f"# Zebra guide\n\n{sections}\n")
    run_index(src, tmp_path / "s.db", "engineering")
    engine = engine_of(tmp_path / "s.db")
    assert len(engine.docs) == 5 and {d.document_id for d in engine.docs} == {"long.md"}  # one per part
    assert [d.position for d in engine.docs] == list(range(len(engine.docs)))
    assert [d.section for d in engine.docs] == [f"Zebra guide › Part {i}" for i in range(5)]
    whole = engine.document("long.md#3", ENG)
    assert whole.id == "long.md" and whole.text.count("Zebra facts") == 150
    assert engine.document("long.md", ENG).text == whole.text
    assert engine.document("long.md", FIN) is None and engine.document("nope", ENG) is None


def test_jsonl_of_id_and_text_lines_takes_defaults(tmp_path: Path):
    src = tmp_path / "notes.jsonl"
    src.write_text('{"id": "a1", "text": "Alpha depends on Beta."}\n{"id": "a2", "text": "Gamma.", "trusted": false}\n')
    report = run_index(src, tmp_path / "s.db", "engineering")
    assert report.failed == [] and report.passages == 2
    docs = {d.id: d for d in engine_of(tmp_path / "s.db").docs}
    assert docs["a1"].groups == ENG and docs["a1"].trusted and not docs["a2"].trusted
    assert docs["a1"].source == src.resolve().as_uri()


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
HTML_PAGE = ("<html><head><title>Kiln</title><style>@media (max-width: 9px) { p { color: red } }</style>"
             "<script type='application/ld+json'>{\"text\": \"<p>xx-json-ld</p>\"}</script></head><body>"
             "<noscript>xx-noscript</noscript><template><p>xx-template</p></template>"
             "<h1>Kiln</h1><p>Kiln runs in region sa-east-7.</p><script>var s = '</p>xx-inline';</script></body></html>")


def test_bad_input_is_one_line_per_file_and_nothing_else_is_lost(tree: Path, tmp_path: Path, monkeypatch):
    (tree / "garbage.pdf").write_bytes(os.urandom(2000))
    with open(tree / "huge.txt", "wb") as f:  # 100 MB, sparse: the size is refused before reading
        f.truncate(100 * 2**20)
    (tree / "loop_a").symlink_to(tree / "loop_b")
    (tree / "loop_b").symlink_to(tree / "loop_a")
    (tree / "notes/up").symlink_to(tree)  # a folder link back up: entered once
    outside = tmp_path / "secret.txt"
    outside.write_text("outside secret")
    (tree / "outside.txt").symlink_to(outside)
    (tree / "photo.png").write_bytes(b"\x89PNG")
    (tree / "photo.md").write_bytes(PNG)  # a PNG renamed .md
    (tree / "typo.md").write_text("---\ngroup: [finance]\n---\nFinance only.\n")
    (tree / "unclosed.md").write_text("---\ntitle: Unclosed\n\nNo closing line.\n")
    (tree / "badgroups.md").write_text("---\ngroups: [finance\n---\nFinance only.\n")  # never guessed: refused
    # indexed, with a note or as they are:
    (tree / "badyaml.md").write_text("---\ntitle: Ok: a colon\ntags: [unclosed\n---\nText.\n")  # no guarded key
    (tree / "listtitle.md").write_text("---\ntitle: [Provider Name]\n---\n# Provider\n\nBody text.\n")
    (tree / "blank.md").write_text("")  # nothing to index: skipped
    (tree / "locked.md").write_text("Locked away.\n")
    (tree / "latin1.txt").write_bytes("Caf\xe9 Tulum runs in region us-west-9.".encode("cp1252"))
    (tree / "mostly.md").write_bytes("Crème brûlée runs in region ".encode() + b"\xff eu-south-4.")  # one stray byte
    (tree / "extra.md").write_text("---\ngroups: [engineering]\ncolour: red\n---\nHello.\n")
    (tree / "kiln.html").write_text(HTML_PAGE)
    real = os.open

    def open_file(path: Any, flags: int, *args: Any) -> int:  # chmod 000 cannot stop root, which CI runs as
        if Path(path).name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real(path, flags, *args)

    monkeypatch.setattr(os, "open", open_file)
    result = CliRunner().invoke(app, ["index", str(tree), "--store", str(tmp_path / "s.db"), "--groups", "engineering"])
    assert result.exit_code == 0, result.output  # some files failed, the others are in
    failed = [line for line in result.stderr.splitlines() if line.startswith("failed: ")]
    expect = {"garbage.pdf": "not a readable PDF", "huge.txt": "over the 20 MB limit", "loop_a": "symlink loop",
              "loop_b": "symlink loop", "up": "symlink loop", "outside.txt": "points outside the source folder",
              "photo.md": "binary file (it holds NUL bytes)", "typo.md": "field 'group': looks like a misspelling of 'groups'",
              "unclosed.md": "no closing '---' line", "badgroups.md": "invalid YAML at line 3, column 1",
              "locked.md": "unreadable: Permission denied"}
    assert len(failed) == len(expect), failed
    for name, message in expect.items():
        assert any(f"/{name}: " in line and message in line for line in failed), (name, failed)
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert any("/latin1.txt: " in n and "indexed as Windows-1252" in n for n in notes), notes
    assert any("/mostly.md: " in n and "1 byte is not valid UTF-8 (first at byte 31)" in n for n in notes), notes
    assert any("photo.png" in line and "unsupported type .png" in line for line in result.stderr.splitlines())
    assert "Traceback" not in result.output + result.stderr
    assert any("/badyaml.md: " in n and "invalid YAML at line 2, column 10: " in n and "indexed without its front "
               "matter (its title line kept)" in n for n in notes), notes
    assert any("/listtitle.md: " in n and "field 'title': not text (list)" in n for n in notes), notes
    assert any("blank.md" in line and "an empty page" in line for line in result.stderr.splitlines())
    assert "25 files (12 new, 0 changed, 0 unchanged, 0 deleted, 2 skipped, 11 failed)" in result.stdout, result.stdout
    (counts,) = [line for line in result.stdout.splitlines() if line.startswith("failed: ")]
    assert counts.startswith("failed: 3 files in a symlink loop, 2 files with broken front matter, 1 file ")
    assert all(f"1 file {reason}" in counts for reason in (
        "linking outside the folder", "not readable as PDF", "over the 20 MB limit", "unreadable", "binary (NUL bytes)",
        "with a misspelt hoprag key"))
    (skipped,) = [line for line in result.stdout.splitlines() if line.startswith("skipped: ")]
    assert "1 file of unsupported type .png" in skipped and "1 file with nothing to index" in skipped
    (noted,) = [line for line in result.stdout.splitlines() if line.startswith("noted: ")]
    assert all(f"1 file {reason}" in noted for reason in (
        "read as Windows-1252", "with bytes not valid UTF-8", "indexed without their broken front matter",
        "with a title that is not text"))
    docs = {d.document_id: d for d in engine_of(tmp_path / "s.db").docs}
    assert len(docs) == 12 and "outside secret" not in {d.text for d in docs.values()}  # every good file is in
    assert (docs["badyaml.md"].title, docs["badyaml.md"].text) == ("Ok: a colon", "Text.")
    assert docs["listtitle.md"].title == "Provider"
    assert docs["latin1.txt"].text == "Café Tulum runs in region us-west-9."
    assert docs["mostly.md"].text == "Crème brûlée runs in region \ufffd eu-south-4."
    assert json.loads(docs["extra.md"].front_matter) == {"colour": "red"}
    kiln = docs["kiln.html"]
    assert "sa-east-7" in kiln.text and "xx-" not in kiln.text and "color" not in kiln.text  # no script, style ...


def test_the_summary_counts_files_by_reason_with_a_few_examples(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(5):
        (src / f"bad{i}.md").write_text(f"---\nid: 'bad id {i}'\ntrused: false\n---\nText {i}.\n")  # 2 problems each
    (src / "good.md").write_text("Good text.\n")
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(src), "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    assert "6 files (1 new, 0 changed, 0 unchanged, 0 deleted, 0 skipped, 5 failed)" in result.stdout  # files, not lines
    assert "failed: 5 files with a misspelt hoprag key" in result.stdout  # a file counts by its first problem
    failed = [line for line in result.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 3 * 2 + 1 and failed[-1] == ("failed: ... and 2 more files with a misspelt hoprag key "
                                                       "(--verbose lists every one)")
    assert sum("field 'trused': looks like a misspelling of 'trusted'" in line for line in failed) == 3
    assert all(ID_RULE_WORDS in line for line in failed if "field 'id'" in line)
    verbose = runner.invoke(app, ["index", str(src), "--store", str(tmp_path / "s.db"), "--verbose"])
    assert len([line for line in verbose.stderr.splitlines() if line.startswith("failed: ")]) == 5 * 2


ID_RULE_WORDS = "1 to 128 characters from A-Z a-z 0-9 _ . : / - and starts with a letter or digit"


@pytest.mark.parametrize("case", ["missing", "empty", "nothing indexed"])
def test_a_run_that_indexes_nothing_exits_1_and_leaves_no_store(tmp_path: Path, case: str):
    src, db = tmp_path / "src", tmp_path / "s.db"
    if case != "missing":
        src.mkdir()
        (src / ".git").mkdir()  # hidden entries and config files are not documents
        (src / "corpus.yaml").write_text("ranker: bm25\n")
    if case == "nothing indexed":
        (src / "a.md").write_bytes(PNG)
        (src / "b.png").write_bytes(PNG)
    result = CliRunner().invoke(app, ["index", str(src), "--store", str(db), "--quiet"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    last = result.stderr.strip().splitlines()[-1]
    assert str(src) in last and {"missing": "no such file or directory", "empty": "no files to index",
                                 "nothing indexed": "nothing could be indexed"}[case] in last
    assert not list(tmp_path.glob("s.db*"))  # no store file left behind


def test_a_failing_run_never_touches_an_existing_store(tree: Path, tmp_path: Path):
    db = tmp_path / "s.db"
    first = run_index(tree, db, "engineering")
    for path in tree.rglob("*"):
        if path.is_file() and path.suffix in (".md", ".txt", ".html", ".pdf"):
            path.write_bytes(PNG)  # every document turns binary
    report = run_index(tree, db, "engineering")
    assert report.indexed == 0 and not report.committed and len(report.failed) == 6
    assert report.generation == first.generation and len(engine_of(db).docs) == 7  # the indexed versions stay


MKDOCS_PAGE = """---
title: Catalog
catalog_title: Everything we sell
hide: [navigation, toc]
include_yaml: [data/catalog.yml]
search: {boost: 2}
template: catalog.html
tags: [shop]
description: The catalog page
status: new
date: 2024-05-06
---
# Catalog

Kestrel runs in region ca-central-9.
"""


def test_front_matter_keys_of_site_generators_are_kept_as_metadata(tmp_path: Path):
    src = tmp_path / "src"
    (src / "guide").mkdir(parents=True)
    (src / "guide/catalog.md").write_text(MKDOCS_PAGE)
    (src / "guide/empty.md").write_text("---\ntitle:\nid:\ngroups:\n---\n# Empty keys\n\nTheir defaults apply.\n")
    (src / "big.md").write_text("---\nblob: '" + "x" * (MAX_METADATA_BYTES + 10) + "'\n---\nA page with a huge key.\n")
    (src / "lines.jsonl").write_text('{"id": "j1", "text": "A JSONL line.", "lang": "en", "score": 0.5}\n')
    report = run_index(src, tmp_path / "s.db")
    assert report.failed == [] and report.new == 4
    (noted,) = report.noted
    assert noted.where.endswith("big.md") and "not kept as metadata" in str(noted) and "16 KB" in str(noted)
    docs = {d.id: d for d in engine_of(tmp_path / "s.db").docs}
    catalog = docs["guide/catalog.md"]
    assert catalog.title == "Catalog" and catalog.path == "guide/catalog.md"
    assert json.loads(catalog.front_matter) == {
        "catalog_title": "Everything we sell", "hide": ["navigation", "toc"], "include_yaml": ["data/catalog.yml"],
        "search": {"boost": 2}, "template": "catalog.html", "tags": ["shop"], "description": "The catalog page",
        "status": "new", "date": "2024-05-06"}
    assert list(json.loads(catalog.front_matter)) == ["catalog_title", "hide", "include_yaml", "search", "template",
                                                      "tags", "description", "status", "date"]  # the author's order
    empty = docs["guide/empty.md"]  # an own key left empty is not given: its default applies
    assert (empty.title, empty.groups, empty.front_matter) == ("Empty keys", frozenset({DEFAULT_GROUP}), "")
    assert docs["big.md"].front_matter == "" and "huge key" in docs["big.md"].text  # indexed, metadata left out
    assert json.loads(docs["j1"].front_matter) == {"lang": "en", "score": 0.5} and docs["j1"].path == "lines.jsonl"


@pytest.mark.parametrize("key, own", [("group", "groups"), ("trused", "trusted"), ("tittle", "title"),
                                      ("Groups", "groups"), ("ids", "id"), ("update", "updated"), ("sourc", "source")])
def test_a_misspelt_own_key_is_an_error_naming_the_intended_key(tmp_path: Path, key: str, own: str):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text(f"---\n{key}: x\n---\nText.\n")
    (failed,) = run_index(src, tmp_path / "s.db").failed
    assert failed.reason == "with a misspelt hoprag key"
    assert f"field '{key}': looks like a misspelling of '{own}'" in str(failed) and "metadata_keys:" in str(failed)


def test_corpus_yaml_declares_lookalike_keys_ordinary_metadata(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("---\nresource: users\ncourse: CS101\n---\nThe users resource.\n")
    assert [f.reason for f in run_index(src, tmp_path / "s.db").failed] == ["with a misspelt hoprag key"]
    (src / "corpus.yaml").write_text("metadata_keys: [resource, course]\n")
    report = run_index(src, tmp_path / "s.db")
    assert report.failed == [] and report.new == 1
    assert json.loads(engine_of(tmp_path / "s.db").docs[0].front_matter) == {"resource": "users", "course": "CS101"}
    (src / "corpus.yaml").write_text("metadata_keys: resource\n")
    with pytest.raises(IngestError, match="field 'metadata_keys': expected a list"):
        run_index(src, tmp_path / "s.db")


def test_every_path_derived_id_is_accepted(tmp_path: Path):
    src = tmp_path / "src"
    deep = src / "api" / "/".join(f"very_long_module_name_{i}" for i in range(8))
    deep.mkdir(parents=True)
    (deep / "reference page (v2).md").write_text("# Reference\n\n" + "\n\n".join(f"Part {i} " + "words " * 200
                                                                                 for i in range(12)))
    (deep / "other page.md").write_text("Another long path.\n")
    for name in ("日本語.md", "中文.md", "café.md"):
        (src / name).write_text(f"The page {name}.\n")
    report = run_index(src, tmp_path / "s.db")
    assert report.failed == [] and report.new == 5
    docs = engine_of(tmp_path / "s.db").docs
    ids = {d.document_id for d in docs}
    assert len(ids) == 5 and all(len(i) <= MAX_ID_CHARS for i in ids)
    long = [d for d in docs if d.path.endswith("reference page (v2).md")]
    assert len(long) > 1 and long[0].path == str((deep / "reference page (v2).md").relative_to(src))  # the full path
    assert long[0].document_id.startswith("api/very_long_module_name_0/") and len(long[0].document_id) == MAX_ID_CHARS
    assert all(len(d.id) <= MAX_NAME_CHARS for d in docs) and MAX_ID_CHARS + len("#999999") <= MAX_NAME_CHARS
    again = run_index(src, tmp_path / "other.db")  # deterministic: the same ids from the same paths
    assert {d.document_id for d in engine_of(tmp_path / "other.db").docs} == ids and again.failed == []


def test_a_10_mb_markdown_file_indexes_in_reasonable_time(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    words = [f"w{i}" for i in range(3000)] + ["Alpha", "depends", "on", "the", "and"]
    paragraphs, size, i = [], 0, 0
    while size < 10 * 2**20:
        paragraph = (f"## Part {i}\n\n" if i % 20 == 0 else "") + " ".join(words[(i * 7 + j * 13) % len(words)]
                                                                         for j in range(90)) + "."
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
        i += 1
    (src / "big.md").write_text("\n\n".join(paragraphs))
    assert 10 * 2**20 <= (src / "big.md").stat().st_size < MAX_FILE_MB * 2**20
    started = time.perf_counter()
    report = run_index(src, tmp_path / "s.db")
    seconds = time.perf_counter() - started
    assert report.failed == [] and report.new == 1 and report.passages > 5000
    assert seconds < 60, f"10 MB took {seconds:.1f} s"  # ~0.5 s on the 2-core CI machine: this bounds a blow-up


MAX_FILE_MB = 20


def test_a_pdf_without_a_text_layer_is_named(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "scan.pdf").write_bytes(pdf_bytes("").replace(b"() Tj", b""))
    report = run_index(src, tmp_path / "s.db", "engineering")
    (failed,) = report.failed
    assert failed.reason == "without a text layer (scanned PDF?)" and "run OCR first" in str(failed)


def test_rerun_mirrors_the_folder(tree: Path, tmp_path: Path):
    db = tmp_path / "s.db"
    first = run_index(tree, db, "engineering")
    again = run_index(tree, db, "engineering")
    assert (again.unchanged, again.passages, again.generation) == (6, 0, first.generation)
    (tree / "notes/deep/quill.txt").write_text("Quill stores telemetry in Granite.\n")
    (tree / "basalt.html").unlink()
    (tree / "notes/new.txt").write_text("A new note.\n")
    step = run_index(tree, db, "engineering")
    assert (step.new, step.changed, step.deleted, step.unchanged) == (1, 1, 1, 4)
    assert step.generation == first.generation + 1
    engine = engine_of(db)
    assert "basalt.html" not in {d.id for d in engine.docs}
    assert engine.facts(engine.fetch("notes/deep/quill.txt", ENG)) == (("Quill", "telemetry_store", "Granite"),)


def test_a_file_that_turns_bad_keeps_its_indexed_version(tree: Path, tmp_path: Path):
    db = tmp_path / "s.db"
    run_index(tree, db, "engineering")
    (tree / "notes/deep/quill.txt").write_bytes(b"\x00\x01 broken")
    report = run_index(tree, db, "engineering")
    assert [(Path(f.where).name, f.reason) for f in report.failed] == [("quill.txt", "binary (NUL bytes)")]
    assert engine_of(db).fetch("notes/deep/quill.txt", ENG).text == "Quill stores telemetry in Basalt."


def test_changing_the_groups_default_reindexes(tree: Path, tmp_path: Path):
    db = tmp_path / "s.db"
    run_index(tree, db, "engineering")
    report = run_index(tree, db, "ops")
    assert report.changed == 6  # the defaults every file was read with changed
    engine = engine_of(db)
    assert engine.fetch("basalt.html", frozenset({"ops"})) is not None and engine.fetch("basalt.html", ENG) is None
    assert engine.fetch("finance/budget.md", FIN) is not None  # its front matter still wins


def test_a_relations_change_rederives_facts(tree: Path, tmp_path: Path):
    db = tmp_path / "s.db"
    run_index(tree, db, "engineering")
    (tree / "relations.yaml").write_text("relations:\n  - name: depends_on\n    cues: [depends on]\n")
    report = run_index(tree, db, "engineering")
    assert report.changed == 6
    engine = engine_of(db)
    assert engine.facts(engine.fetch("notes/deep/quill.txt", ENG)) == ()
    assert engine.lexicon.names() == ("depends_on",)


def test_duplicate_document_ids_are_refused_naming_both(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("---\nid: same\n---\nOne.\n")
    (src / "b.md").write_text("---\nid: same\n---\nTwo.\n")
    report = run_index(src, tmp_path / "s.db", "engineering")
    (failed,) = report.failed
    assert "duplicate document id 'same'" in str(failed) and "a.md" in str(failed) and failed.where.endswith("b.md")
    assert failed.reason == "with a duplicate id"


def test_a_store_mirrors_one_source(tree: Path, tmp_path: Path):
    db = tmp_path / "s.db"
    run_index(tree, db, "engineering")
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("Another folder.\n")
    with pytest.raises(IngestError, match="the store mirrors"):
        run_index(other, db, "engineering")


def test_document_ids_from_paths():
    assert document_id("notes/Falcon plan (v2).md") == "notes/Falcon_plan__v2_.md"
    # an id starts with a letter or digit: a path that does not keeps the rest and a digest, unique per path
    assert document_id(".hidden/x.md").startswith("hidden/x.md-") and document_id("hidden/x.md") == "hidden/x.md"
    assert document_id("_news.rst") != document_id("news.rst") == "news.rst"


def test_a_page_and_the_underscored_file_it_includes_are_two_documents(tmp_path: Path):
    """Sphinx's ``news.rst`` is ``.. include:: _news.rst``: both are indexed, under ids of their own (the included
    file's no longer loses its ``_`` and collides with its includer's, failing it as a duplicate)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "news.rst").write_text("News\n====\n\nThe latest releases, newest first.\n\n.. include:: _news.rst\n")
    (docs / "_news.rst").write_text("* **2026.06.03**: Version 2.0.1 released with a quick fix.\n")
    report = run_index(docs, tmp_path / "s.db", "engineering")
    assert not report.failed, [o.problems for o in report.failed]
    ids = {d.document_id for d in engine_of(tmp_path / "s.db").docs}
    assert "news.rst" in ids and any(i.startswith("news.rst-") for i in ids), ids


def test_cli_summary_and_store_flags(tree: Path, tmp_path: Path):
    db = tmp_path / "s.db"
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(tree), "--store", str(db), "--groups", "engineering", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "6 files (6 new, 0 changed, 0 unchanged, 0 deleted, 0 skipped, 0 failed), 7 passages written" in result.stdout
    found = runner.invoke(app, ["search", "Basalt region", "--as", "engineering", "--store", str(db), "--json"])
    assert found.exit_code == 0, found.output
    assert '"id": "basalt.html"' in found.stdout and '"section": "Basalt"' in found.stdout
    missing = runner.invoke(app, ["search", "x", "--as", "engineering", "--store", str(tmp_path / "none.db")])
    assert missing.exit_code == 1 and "no such store" in missing.stderr


def test_settings_resolve_the_store_from_env(tmp_path: Path):
    from hoprag import settings

    resolved = settings.resolve(env={"HOPRAG_STORE": str(tmp_path / "s.db")})
    assert resolved.store == str(tmp_path / "s.db")  # a string: a postgresql:// URL must survive (a Path folds '//')
    assert settings.access_path(resolved) == tmp_path / "access.yaml"
    assert settings.resolve(env={"HOPRAG_STORE": "a.db"}, store=tmp_path / "b.db").store == str(tmp_path / "b.db")
    url = "postgresql://owner:pw@127.0.0.1:5432/hoprag"
    assert settings.resolve(env={"HOPRAG_STORE": url}).store == url


def named_by_reading(view) -> dict[str, tuple[str, int]]:
    """The proper names a view's passages state, re-read from every passage's units (the reference)."""
    ents, out = view.entities, {}
    for r in ents.rows:
        for surface, _ in ents.index.units_of(int(r)):
            key = norm(surface)
            if key not in out and is_name(surface) and key in ents.index.vocab:
                out[key] = (surface, ents.spread_of(surface))
    return out


def idf_by_reading(view) -> dict[str, float]:
    """BM25's Lucene IDF over a view's documents, by tokenising each (the reference)."""
    df = Counter(t for d in view.docs for t in set(tokenize(analysed(d))))
    return {t: math.log(1 + (len(view.docs) - c + 0.5) / (c + 0.5)) for t, c in df.items()}


def no_tokenising(monkeypatch) -> None:
    """Fail any build of corpus-wide postings: what follows must load them."""
    def refuse(*args, **kwargs):
        raise AssertionError("postings built, not loaded")
    monkeypatch.setattr(Postings, "build", refuse)


def test_persisted_postings_rank_exactly_as_built_ones_and_stay_with_their_base(tree: Path, tmp_path: Path, monkeypatch):
    db = tmp_path / "s.db"
    run_index(tree, db, "engineering")
    queries = ("Basalt region", "Heron team", "pager rotation Quill", "zz-upload-9")
    built = engine_of(db, "bm25")
    expected = {q: [(h.doc.id, h.score) for h in built.search(q, ENG, 5)] for q in queries}
    built.entities  # noqa: B018 - built (and saved) on first use
    store = open_store(db)
    generation = store.generation()
    assert store.load_derived(generation, "terms", TERMS_FORMAT) is not None  # the first engine saved its postings
    assert store.load_derived(generation, "entities", FORMAT) is not None
    with monkeypatch.context() as m:
        no_tokenising(m)
        loaded = engine_of(db, "bm25")
        assert {q: [(h.doc.id, h.score) for h in loaded.search(q, ENG, 5)] for q in queries} == expected
        a, b = built.entities, loaded.entities
    assert (a.vocab, a.title_of.tolist(), a.stated_names) == (b.vocab, b.title_of.tolist(), b.stated_names)
    assert all((x.flat.tolist(), x.ptr.tolist()) == (y.flat.tolist(), y.ptr.tolist())
               for x, y in ((a.defines, b.defines), (a.stated, b.stated)))
    assert (a.mentions != b.mentions).nnz == 0
    assert all(a.units_of(i) == b.units_of(i) for i in range(len(a.docs)))
    for engine in (built, loaded):  # a view's named entities, gathered from the index, as reading its passages gives
        view = engine.view(ENG)
        assert view.entities.named == named_by_reading(view) and view.entities.named
        assert view.idf == idf_by_reading(view) and view.idf  # IDF counted off the postings, as tokenising gives
        titles = engine.entities.title_of.tolist()
        for j in {t for t in titles if t >= 0} | {len(titles) + 1}:  # and an entity nothing is titled with
            assert view.entities.titled(j).tolist() == [i for i, row in enumerate(view.rows) if titles[row] == j]
    (tree / "notes/new.txt").write_text("Basalt region notes.\n")
    newer = run_index(tree, db, "engineering").generation
    # the saved generation stays: the next start loads it and applies the change since
    assert store.load_derived(generation, "terms", TERMS_FORMAT) is not None
    with monkeypatch.context() as m:
        no_tokenising(m)
        started = engine_of(db, "bm25")
        assert started.generation == newer
        assert "notes/new.txt" in [h.doc.id for h in started.search("Basalt region notes", ENG, 5)]
    started.persist(store.derived(newer))
    (tree / "notes/new.txt").write_text("Basalt region notes, changed.\n")
    run_index(tree, db, "engineering")
    engine_of(db, "bm25").persist(store.derived(store.generation()))
    # two newer generations saved: the first one's derived data (and the change log up to it) is gone
    assert store.load_derived(generation, "terms", TERMS_FORMAT) is None
    assert store.load_derived(newer, "terms", TERMS_FORMAT) is not None
    assert store.delta(generation) is None and store.delta(newer) is not None


def test_persisted_overlap_counts_rank_exactly_as_built_ones(tree: Path, tmp_path: Path, monkeypatch):
    db = tmp_path / "s.db"
    run_index(tree, db, "engineering")
    queries = ("Basalt region", "Heron team", "pager rotation Quill")
    built = engine_of(db, "overlap")
    expected = {q: [(h.doc.id, h.score) for h in built.search(q, ENG, 5)] for q in queries}
    for engine in (built,):  # IDF from the analysed postings, as tokenising the view gives
        assert engine.view(ENG).idf == idf_by_reading(engine.view(ENG)) and engine.view(ENG).idf
    store = open_store(db)
    assert store.load_derived(store.generation(), "counts", TERMS_FORMAT) is not None
    assert store.load_derived(store.generation(), "terms", TERMS_FORMAT) is not None
    with monkeypatch.context() as m:
        no_tokenising(m)
        loaded = engine_of(db, "overlap")
        assert {q: [(h.doc.id, h.score) for h in loaded.search(q, ENG, 5)] for q in queries} == expected
        assert loaded.view(ENG).idf == idf_by_reading(loaded.view(ENG))
    assert any(expected.values())


def test_index_builds_what_servers_load(tree: Path, tmp_path: Path, monkeypatch):
    """After `hoprag index`, a server's first start loads its derived data: nothing to tokenise; after a
    small change it loads the same and applies the change."""
    db, access = tmp_path / "s.db", tmp_path / "access.yaml"
    access.write_text("principals:\n  eng: {groups: [engineering]}\n  fin: {groups: [finance]}\n", encoding="utf-8")
    command = ["index", str(tree), "--store", str(db), "--groups", "engineering", "--access", str(access), "--quiet"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "derived data ready in" in result.output and "changed since" not in result.output
    store = open_store(db)
    with monkeypatch.context() as m:
        no_tokenising(m)
        engine = engine_of(db)
        assert engine.ranker.startswith("bm25")
        for groups in (ENG, FIN):
            engine.warm(groups)
    assert store.load_derived(store.generation(), "entities", FORMAT) is not None
    (tree / "notes" / "new.txt").write_text("Basalt region notes.\n")
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0 and "servers apply the 1 passages changed since" in result.output, result.output
    with monkeypatch.context() as m:
        no_tokenising(m)
        assert engine_of(db).search("Basalt region notes", ENG, 1)[0].doc.id == "notes/new.txt"
    bad = CliRunner().invoke(app, ["index", str(tree), "--store", str(db), "--access", str(tmp_path / "none.yaml")])
    assert bad.exit_code != 0 and "none.yaml" in bad.output and "Traceback" not in bad.output


def test_derived_data_of_another_layout_is_rebuilt_never_misread(tree: Path, tmp_path: Path):
    """A store written by an older hoprag may hold blobs of an older layout under today's keys."""
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    for db in (old, fresh):
        run_index(tree, db, "engineering")
    store = open_store(old)
    for kind, key in (("terms", TERMS_FORMAT), ("entities", FORMAT)):
        store.save_derived(store.generation(), kind, key, b"PK\x03\x04 an .npz of an older layout")
    a, b = engine_of(old, "bm25"), engine_of(fresh, "bm25")
    for q in ("Basalt region", "Heron team", "pager rotation Quill"):
        assert [(h.doc.id, h.score) for h in a.search(q, ENG, 5)] == [(h.doc.id, h.score) for h in b.search(q, ENG, 5)]
    assert a.entities.vocab == b.entities.vocab and a.view(ENG).entities.named == b.view(ENG).entities.named


def test_packed_fields_come_back_as_they_went_in():
    import numpy as np

    from hoprag.cache import pack, unpack

    arrays = {"ints": np.arange(7, dtype=np.int32), "grid": np.linspace(0, 1, 6).reshape(2, 3),
              "none": np.zeros(0, dtype=np.int64), "scalar": np.int64(42), "text": np.frombuffer("é".encode(), np.uint8)}
    values = {"vocab": ["é", "b"], "shape": [2, 3], "count": 7}
    back = unpack(pack({**arrays, **values}))
    assert sorted(back) == sorted([*arrays, *values])
    assert {name: back[name] for name in values} == values
    for name, a in arrays.items():
        b = back[name]
        assert (b.dtype, b.shape, b.tolist()) == (np.asarray(a).dtype, np.shape(a), np.asarray(a).tolist()), name
        assert b.ctypes.data % 8 == 0 or b.nbytes == 0, f"{name} is not 8-byte aligned"
    assert unpack(b"PK\x03\x04 not ours") is None


def test_one_pass_entity_lookup_finds_what_every_ngram_finds():
    from hoprag.entities import _named, grams

    vocab = {k: j for j, k in enumerate(["church of england", "church", "ludwig van beethoven", "van", "b c d e"])}
    prefixes = {" ".join(k.split()[:n]) for k in vocab for n in range(1, len(k.split()))}
    for text in ("the church of england and ludwig van beethoven", "ludwig van", "a b c d e f", "of england", ""):
        tokens = text.split()
        assert sorted(_named(tokens, vocab, prefixes)) == sorted(vocab[g] for g in grams(tokens) if g in vocab), text
