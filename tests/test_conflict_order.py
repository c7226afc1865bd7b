"""Item 4: the conflict policy, end to end through the agent, never depends on document order.

Four temp corpora hold the same two conflicts -- Ember (dated: the newer source must win) and
Flint (equal dates: the agent must abstain with "conflicting sources") -- laid out so that the newer
document has the smaller or the larger id, and its file sorts first or last. Ranking breaks score
ties by id and the loader reads files in name order, so across layouts the newer document is
sometimes ranked and loaded first and sometimes last; a first-wins policy would fail one of them.
"""

from __future__ import annotations

import datetime as dt
import itertools
import shutil
from pathlib import Path

import pytest
import yaml

from agents.hoprag_agent.run import report
from eval_sets.redteam import Run, run_all
from conftest import CORPUS
from hoprag.corpus import load_corpus

EMBER, FLINT = "What region does Ember run in?", "What region does Flint run in?"
NEWER, OLDER = "ap-southeast-2", "us-west-1"
KB = "https://kb.order.example/"
LAYOUTS = list(itertools.product((True, False), (False, True)))  # (newer has the smaller id, files in reverse id order)


def write_corpus(root: Path, newer_first: bool, files_reversed: bool) -> dict[str, str]:
    """Write one layout; returns the ids of the newer and older Ember documents."""
    root.mkdir()
    newer, older = ("e1", "e2") if newer_first else ("e2", "e1")
    docs = [(newer, f"Ember runs in region {NEWER}.", dt.date(2026, 2, 15)),
            (older, f"Ember runs in region {OLDER}.", dt.date(2025, 6, 1)),
            ("f1" if newer_first else "f2", "Flint runs in region us-east-1.", dt.date(2026, 1, 10)),
            ("f2" if newer_first else "f1", "Flint runs in region eu-west-3.", dt.date(2026, 1, 10))]
    for doc_id, text, updated in docs:
        rank = {"1": "b", "2": "a"}[doc_id[1]] if files_reversed else doc_id[1]
        meta = {"id": doc_id, "groups": ["engineering"], "trusted": True, "source": f"{KB}{doc_id}", "updated": updated}
        (root / f"{doc_id[0]}{rank}.md").write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n{text}\n",
                                                    encoding="utf-8")
    (root / "access.yaml").write_text("principals:\n  engineering: {groups: [engineering]}\n", encoding="utf-8")
    (root / "allowlist.yaml").write_text(f"sources:\n  - {KB}\n", encoding="utf-8")
    shutil.copy(CORPUS / "relations.yaml", root / "relations.yaml")  # the chapter's vocabulary, as data
    return {"newer": newer, "older": older}


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> list[tuple[dict[str, str], list[str], Run, Run]]:
    """Per layout: the Ember ids, the corpus's load order, and the Ember and Flint runs."""
    out = []
    for newer_first, files_reversed in LAYOUTS:
        root = tmp_path_factory.mktemp("order") / "corpus"
        ids = write_corpus(root, newer_first, files_reversed)
        ember, flint = run_all(root, [EMBER, FLINT])
        out.append((ids, [d.id for d in load_corpus(root).docs], ember, flint))
    return out


@pytest.mark.slow  # the agent over four corpus layouts: 5-13 s
@pytest.mark.parametrize("layout", range(len(LAYOUTS)), ids=[f"newer_smaller_id={a}-files_reversed={b}" for a, b in LAYOUTS])
def test_newer_source_wins_in_every_layout(layouts, layout):
    ids, _, ember, _ = layouts[layout]
    result = report(ember.ledger, ember.response)
    assert result["answer"] == NEWER
    assert [c["doc_id"] for c in result["citations"]] == [ids["newer"]]
    assert f"Newer source wins over superseded {ids['older']}." in ember.response
    assert sorted(ember.ledger["searches"][0]["results"]) == ["e1", "e2"]  # both sources were read together


@pytest.mark.slow  # the agent over four corpus layouts: 5-13 s
@pytest.mark.parametrize("layout", range(len(LAYOUTS)), ids=[f"smaller_id_is_us_east={a}-files_reversed={b}" for a, b in LAYOUTS])
def test_equal_dates_abstain_in_every_layout(layouts, layout):
    _, _, _, flint = layouts[layout]
    result = report(flint.ledger, flint.response)
    assert result["abstained"] and result["answer"] is None
    assert result["reason"].startswith("conflicting sources: ")
    assert set(result["reason"].removeprefix("conflicting sources: ").split(" disagree")[0].split(", ")) == {"f1", "f2"}


@pytest.mark.slow  # the agent over four corpus layouts: 5-13 s
def test_the_layouts_really_vary_the_order(layouts):
    """The control: rank order and load order put the newer document first in some layouts and last in
    others, so any policy that used either order would answer us-west-1 somewhere."""
    ranked_first = {ember.ledger["searches"][0]["results"][0] == ids["newer"] for ids, _, ember, _ in layouts}
    loaded_first = {[d for d in order if d.startswith("e")][0] == ids["newer"] for ids, order, _, _ in layouts}
    assert ranked_first == {True, False} and loaded_first == {True, False}


def test_a_first_wins_policy_is_caught(tmp_path, monkeypatch):
    """Negative control: swap the agent's resolver for "first supported passage wins" and the layout
    where the older source ranks first answers with the superseded value."""
    from agents.hoprag_agent import policy
    from hoprag.verdict import Resolution

    def first_wins(verdicts, updated):
        first = next(v for v in verdicts if v.supported)
        return Resolution(first.triple[2], (first.passage,), "agreed")

    monkeypatch.setattr(policy, "resolve", first_wins)
    write_corpus(tmp_path / "corpus", newer_first=False, files_reversed=False)
    ember, flint = run_all(tmp_path / "corpus", [EMBER, FLINT])
    assert report(ember.ledger, ember.response)["answer"] == OLDER
    assert not report(flint.ledger, flint.response)["abstained"]
