"""``adk eval`` on real documentation (the docs-QA set over the shipped Instructor docs), and the
controls that must fail it.

The store is built as a new user builds it -- ``hoprag index`` of the folder as it is, no access
file, no groups (single-user mode), lexical (``--embedder none``: embedding its 1,950 passages adds
minutes; hybrid search is measured on this set by ``hoprag bench docs --embedders none,minilm``,
benchmarks/RESULTS.md section 11) -- and every question of ``eval_sets/docs_questions.jsonl`` is a
case. Each metric of ``eval_sets/docs.test_config.json`` is a per-case gate on what a person reads
(the answer, its first source, how many reads it took, whether it abstained); the floors below are
the pass counts measured on all 48 cases less one. Two controls must fail them: a server whose
hits never say they answer, and a ranker that returns nothing useful.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT, ServerProcess
from test_agent_eval import cases, criteria, metric_passes

EVALSET = "eval_sets/docs.evalset.json"
DOCS = ROOT / "eval_sets" / "corpora" / "instructor" / "docs"
CASES = 48
FLOORS = {"answer_words": 25, "first_source": 32, "one_read": 38, "abstention": 36}
CONTROLS = os.pathsep.join([str(ROOT / "tests" / "controls"), str(ROOT), os.environ.get("PYTHONPATH", "")])


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("docs") / "docs.db"  # no access file beside it: single-user mode
    done = subprocess.run([str(Path(sys.executable).parent / "hoprag"), "index", str(DOCS), "--store", str(path),
                           "--quiet", "--embedder", "none"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return path


def docs_eval(store: Path, **env: str) -> Counter:
    """Run the eval set; count the cases each metric passed."""
    return metric_passes(EVALSET, "eval_sets/docs.test_config.json", CASES, FLOORS, HOPRAG_STORE=str(store), **env)


@pytest.mark.slow  # adk eval over the whole docs set
def test_the_docs_eval_set_meets_its_floors(store: Path):
    passed = docs_eval(store)
    assert all(passed[m] >= floor for m, floor in FLOORS.items()), passed


def served(store: Path, tmp_path: Path, **control: str) -> ServerProcess:
    """The store behind an HTTP server running a control (HTTP needs an access file: one reader of the
    default group, as the eval's session user)."""
    access = tmp_path / "access.yaml"
    access.write_text("principals:\n  reader: {groups: [local]}\ntokens:\n  docs-reader-token: reader\n"
                      "users:\n  user: reader\n", encoding="utf-8")
    return ServerProcess("--store", str(store), "--access", str(access), env={**control, "PYTHONPATH": CONTROLS})


def controlled_eval(store: Path, tmp_path: Path, **control: str) -> Counter:
    server = served(store, tmp_path, **control)
    try:
        return docs_eval(store, HOPRAG_MCP_URL=server.url, HOPRAG_ACCESS=str(tmp_path / "access.yaml"))
    finally:
        server.stop()


@pytest.mark.slow  # adk eval over the whole docs set
def test_a_server_that_gives_no_evidence_of_an_answer_fails_reads_and_abstention(store: Path, tmp_path: Path):
    """Every hit says it covers nothing: the agent walks its whole budget and abstains on everything."""
    passed = controlled_eval(store, tmp_path, HOPRAG_CONTROL_NO_EVIDENCE="1")
    assert passed["one_read"] < FLOORS["one_read"] and passed["abstention"] < FLOORS["abstention"], passed


@pytest.mark.slow  # adk eval over the whole docs set
def test_a_useless_ranker_fails_answers_and_sources(store: Path, tmp_path: Path):
    """The same passages for every query (``tests/controls/sitecustomize.py``)."""
    passed = controlled_eval(store, tmp_path, HOPRAG_CONTROL_USELESS_RANKER="1")
    assert passed["answer_words"] < FLOORS["answer_words"] and passed["first_source"] < FLOORS["first_source"], passed


def test_the_floors_gate_every_metric_of_the_config_over_every_question():
    """What the slow run relies on, checked without it: a metric added to the config has a floor,
    and the set holds one case per question."""
    assert criteria("eval_sets/docs.test_config.json") == set(FLOORS)
    questions = (ROOT / "eval_sets" / "docs_questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(cases(EVALSET)) == CASES == len([q for q in questions if q.strip()])
    assert all(0 < floor <= CASES for floor in FLOORS.values())
