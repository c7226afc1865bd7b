"""The loader rejects every kind of bad input with a message naming the file (or line) and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import CORPUS
from hoprag_cli.main import app
from hoprag.corpus import CorpusError, load_corpus, load_docs
from hoprag.lexicon import load_lexicon

GOOD = {"id": "a1", "title": "A", "groups": ["eng"], "trusted": True,
        "source": "https://example.com/a1", "updated": "2026-01-02"}


def write_md(root: Path, name: str, meta: str, body: str = "Alpha depends on Beta.") -> Path:
    path = root / name
    path.write_text(f"---\n{meta}\n---\n{body}\n", encoding="utf-8")
    return path


GOOD_META = "id: a1\ngroups: [eng]\ntrusted: true\nsource: https://example.com/a1\nupdated: 2026-01-02"


def problems(path: Path) -> str:
    with pytest.raises(CorpusError) as err:
        load_docs(path)
    return str(err.value)


def test_demo_corpus_loads_all_ten_documents():
    corpus = load_corpus(CORPUS)
    assert [d.id for d in corpus.docs] == [f"d{i:02d}" for i in range(1, 11)]
    assert corpus.by_id()["d10"].trusted is False
    assert corpus.by_id()["d09"].groups == frozenset({"finance"})
    assert corpus.lexicon.names() == ("owner", "depends_on", "telemetry_store", "region", "release_gate", "budget")


@pytest.mark.parametrize(
    "meta, field, fragment",
    [
        (GOOD_META.replace("groups: [eng]", "groups: []"), "groups", "non-empty list"),
        (GOOD_META.replace("groups: [eng]\n", ""), "groups", "missing"),
        (GOOD_META.replace("trusted: true", "trusted: 'yes'"), "trusted", "expected true or false"),
        (GOOD_META.replace("trusted: true", "trusted: 1"), "trusted", "expected true or false"),
        (GOOD_META + "\ngroup: [ops]", "group", "misspelling of 'groups'"),
        (GOOD_META + "\nTrusted: false", "Trusted", "misspelling of 'trusted'"),
        (GOOD_META.replace("updated: 2026-01-02", "updated: last week"), "updated", "ISO date"),
        (GOOD_META.replace("source: https://example.com/a1", "source: not a uri"), "source", "URI"),
        (GOOD_META.replace("id: a1", "id: 'bad id!'"), "id", "starts with a letter or digit"),
        (GOOD_META.replace("id: a1", "id: " + "a" * 129), "id", "got 129 characters"),
    ],
)
def test_markdown_field_errors_name_file_and_field(tmp_path, meta, field, fragment):
    path = write_md(tmp_path, "a1.md", meta)
    message = problems(tmp_path)
    assert f"{path}: field '{field}'" in message and fragment in message


def test_other_front_matter_keys_are_kept_as_metadata(tmp_path):
    """The corpus loader shares ``hoprag index``'s rule: own keys validated, every other key metadata."""
    write_md(tmp_path, "a1.md", GOOD_META + "\nowner: bob\nreviewed: 2026-02-03\nsearch: {boost: 2}\n1: one")
    (doc,) = load_docs(tmp_path)
    assert json.loads(doc.front_matter) == {"owner": "bob", "reviewed": "2026-02-03", "search": {"boost": 2}, "1": "one"}
    assert doc.path == "a1.md"
    (tmp_path / "corpus.yaml").write_text("metadata_keys: [resource]\n", encoding="utf-8")
    write_md(tmp_path, "a1.md", GOOD_META + "\nresource: users")  # near 'source', declared ordinary metadata
    assert json.loads(load_docs(tmp_path)[0].front_matter) == {"resource": "users"}
    write_md(tmp_path, "a1.md", GOOD_META + "\nblob: " + "x" * 17000)  # over the limit: refused, by name
    assert "field 'front matter': cannot be kept as metadata" in problems(tmp_path)


def test_empty_text_is_rejected(tmp_path):
    path = write_md(tmp_path, "a1.md", GOOD_META, body="   ")
    assert f"{path}: field 'text': document text is empty" in problems(tmp_path)


def test_duplicate_ids_name_both_files(tmp_path):
    write_md(tmp_path, "a.md", GOOD_META)
    second = write_md(tmp_path, "b.md", GOOD_META)
    message = problems(tmp_path)
    assert f"{second}: field 'id': duplicate id 'a1'" in message and str(tmp_path / "a.md") in message


def test_non_utf8_and_missing_front_matter(tmp_path):
    bad = tmp_path / "latin.md"
    bad.write_bytes(b"---\nid: x\n---\ncaf\xe9\n")
    plain = tmp_path / "plain.md"
    plain.write_text("no front matter here\n", encoding="utf-8")
    message = problems(tmp_path)
    assert f"{bad}: field 'encoding': not valid UTF-8" in message
    assert f"{plain}: field 'front matter'" in message


def test_stray_files_are_reported_not_dropped(tmp_path):
    write_md(tmp_path, "a1.md", GOOD_META)
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    assert f"{tmp_path / 'notes.txt'}: field 'file': not a document" in problems(tmp_path)


def test_every_problem_is_reported_in_one_pass(tmp_path):
    write_md(tmp_path, "a.md", GOOD_META.replace("trusted: true", "trusted: maybe"))
    write_md(tmp_path, "b.md", GOOD_META.replace("id: a1", "id: b1").replace("groups: [eng]", "groups: []"))
    with pytest.raises(CorpusError) as err:
        load_docs(tmp_path)
    assert [p.field for p in err.value.problems] == ["trusted", "groups"]


def test_config_files_are_not_documents(tmp_path):
    write_md(tmp_path, "a1.md", GOOD_META)
    for name in ("relations.yaml", "access.yaml", "questions.yaml"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
    (tmp_path / "relations.yaml").write_text(
        "relations:\n  - name: depends_on\n    cues: [depends on]\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus.docs] == ["a1"]


def test_jsonl_corpus_with_precomputed_triples_and_line_errors(tmp_path):
    good = {**GOOD, "text": "Anything at all.", "triples": [["Alpha", "made_by", "Beta"]]}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    (doc,) = load_docs(path)
    assert doc.triples == (("Alpha", "made_by", "Beta"),)
    lines = [json.dumps(good), "{not json", json.dumps({**good, "id": "a2", "groups": "eng"}),
             json.dumps({**good, "id": "a3", "triples": [["x", "y"]]}), json.dumps({**good, "id": "a4", "text": ""})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    message = problems(path)
    assert f"{path}:2: field 'json': invalid JSON" in message
    assert f"{path}:3: field 'groups'" in message
    assert f"{path}:4: field 'triples'" in message
    assert f"{path}:5: field 'text'" in message


def test_defaults_fill_fields_a_benchmark_corpus_leaves_out(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps({"id": "p1", "title": "T", "text": "Some passage."}) + "\n", encoding="utf-8")
    assert "field 'groups': missing" in problems(path)
    (doc,) = load_docs(path, defaults={"groups": ["public"], "trusted": True, "source": "bench:p1", "updated": "2026-01-01"})
    assert doc.groups == frozenset({"public"})


def test_bad_relations_file_names_the_field(tmp_path):
    bad = tmp_path / "relations.yaml"
    bad.write_text("relations:\n  - name: Bad Name\n    cues: [x]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="field 'name'"):
        load_lexicon(bad)


def test_check_corpus_cli_exit_codes(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(app, ["check-corpus", str(CORPUS)])
    assert ok.exit_code == 0 and "ok: 10 documents (9 trusted, 1 untrusted)" in ok.output
    write_md(tmp_path, "a1.md", GOOD_META.replace("trusted: true", "trusted: perhaps"))
    bad = runner.invoke(app, ["check-corpus", str(tmp_path)])
    assert bad.exit_code == 1 and "field 'trusted'" in bad.output


def test_windows_line_endings_are_accepted(tmp_path):
    (tmp_path / "a1.md").write_bytes(f"---\n{GOOD_META}\n---\nAlpha depends on Beta.\n".replace("\n", "\r\n").encode())
    (doc,) = load_docs(tmp_path)
    assert doc.id == "a1" and doc.text == "Alpha depends on Beta."
