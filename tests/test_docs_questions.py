"""The docs-QA question set and its corpus: the shipped file follows its format and its gold holds.

``eval_sets/docs_questions.jsonl`` is graded against the Instructor docs in
``eval_sets/corpora/instructor/docs``; a page renamed or an answer word edited away in either
would silently turn a question's gold wrong, so the gold is re-checked against the pages here.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import ROOT

from benchmarks.docs import says
from benchmarks.docs_questions import QuestionError, load_questions, main

QUESTIONS = ROOT / "eval_sets" / "docs_questions.jsonl"
CORPUS = ROOT / "eval_sets" / "corpora" / "instructor"


def test_shipped_questions_follow_the_format_and_their_gold_holds():
    rows = load_questions(QUESTIONS, CORPUS / "docs")
    kinds = Counter(r["kind"] for r in rows)
    assert kinds == {"direct": 20, "paraphrase": 12, "two-page": 8, "unanswerable": 8}
    for kind, n in kinds.items():  # each kind half dev, half holdout
        assert Counter(r["split"] for r in rows if r["kind"] == kind) == {"dev": n // 2, "holdout": n // 2}


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks" / "data" / "docs_dev").glob("*.jsonl")), ids=lambda p: p.stem)
def test_development_sets_follow_the_format(path):
    """The development sets' folders are not shipped (their README names the sdists): the format is checked here."""
    rows = load_questions(path)
    assert Counter(r["kind"] for r in rows) == {"direct": 9, "paraphrase": 4, "two-page": 2, "unanswerable": 3}
    assert {r["split"] for r in rows} == {"dev"}


def test_the_corpus_ships_its_licence_attribution_and_at_least_100_pages():
    assert "MIT License" in (CORPUS / "LICENSE").read_text(encoding="utf-8")
    assert "sha256" in (CORPUS / "ATTRIBUTION.md").read_text(encoding="utf-8")
    assert len(list((CORPUS / "docs").rglob("*.md"))) >= 100


def _write(tmp_path, row: dict):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


GOOD = {"id": "q1", "question": "Which port?", "answer": ["8080"], "pages": ["a.md"], "kind": "direct", "split": "dev"}


@pytest.mark.parametrize("change, message", [
    ({"kind": "easy"}, "field 'kind': 'easy' is not one of"),
    ({"pages": ["a.md", "b.md"], "kind": "two-page", "answer": ["nowhere"]}, "holds none of the answer words"),
    ({"answer": ["9090"]}, "'9090' does not occur in a.md"),
    ({"pages": ["missing.md"]}, "'missing.md' is not a file"),
    ({"kind": "unanswerable"}, "field 'answer': must be [] for an unanswerable question"),
    ({"pages": ["a.md", "a.md"], "kind": "two-page"}, "lists two different pages"),
    ({"extra": 1}, "field 'extra': unknown key"),
])
def test_a_broken_question_is_one_line_naming_line_and_field(tmp_path, change, message):
    (tmp_path / "a.md").write_text("The server listens on port 8080.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("Nothing relevant.\n", encoding="utf-8")
    load_questions(_write(tmp_path, GOOD), tmp_path)  # the unbroken row passes
    path = _write(tmp_path, {**GOOD, **change})
    with pytest.raises(QuestionError, match=r"q\.jsonl:1: ") as err:
        load_questions(path, tmp_path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_gold_reads_inline_code_as_its_text(tmp_path):
    """"-g option" is in a page saying "The ``-g`` option guesses ...": backticks are markup, on the page and in the
    phrase; "guesses the lexer" is in it though the source wraps the line after "guesses". Control: a word the page
    does not hold is still an error."""
    (tmp_path / "a.rst").write_text("The ``-g`` option guesses\nthe lexer.\n", encoding="utf-8")
    load_questions(_write(tmp_path, {**GOOD, "answer": ["-g option"], "pages": ["a.rst"]}), tmp_path)
    load_questions(_write(tmp_path, {**GOOD, "answer": ["guesses the lexer"], "pages": ["a.rst"]}), tmp_path)
    # ... and so is a phrase quoting it with its markup ("true if ``g`` is active", as an answer line says it)
    load_questions(_write(tmp_path, {**GOOD, "answer": ["the ``-g`` option"], "pages": ["a.rst"]}), tmp_path)
    with pytest.raises(QuestionError, match="'-x option' does not occur in a.rst"):
        load_questions(_write(tmp_path, {**GOOD, "answer": ["-x option"], "pages": ["a.rst"]}), tmp_path)


def test_the_checker_cli_reports_counts_or_the_problem(tmp_path, capsys):
    assert main([str(QUESTIONS), "--docs", str(CORPUS / "docs")]) == 0
    assert "48 questions; direct: 10 dev, 10 holdout" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    assert main([str(bad)]) == 1
    assert "bad.jsonl:1: not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize(("answer", "expected", "said"), [
    ("Use `???` to start a details block or `???+` to start it open.", ["???+"], True),
    ("If you'd like to force a tab to be selected, simply use ===+, otherwise the first is.", ["===+"], True),
    ("Use `???+` to start it open.", ["???"], False),  # a longer marker is another one
    ("Use `???` to start a details block.", ["???+"], False),
    ("Call `client.off(...)` to stop.", ["client.off"], True), ("It holds 50 items.", ["5"], False)])
def test_an_answer_says_a_phrase_of_punctuation_only_as_written(answer, expected, said):
    """A gold phrase of punctuation only (a marker or an operator) has no words to match: read as spaces it matched
    nothing, so a right answer scored wrong. It is matched as written, standing apart. Controls: words as before."""
    assert says(answer, expected) is said
