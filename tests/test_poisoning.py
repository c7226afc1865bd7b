"""Exercise 4: a mislabelled trust flag alone no longer decides the answer.

Two independent controls guard evidence: the document's ``trusted`` flag and the corpus's source
allowlist (plus the support span occurring verbatim). The matrix flips each control to "wrong"
on a copy of the Falcon corpus: the poisoned region wins only when both fail.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import CORPUS, ENG
from hoprag.engine import Engine
from hoprag.graph import local_search
from benchmarks.chapter.readers import hardened_agent

AURORA = "What region does Aurora run in?"


def poisoned_copy(tmp_path, flag_wrong: bool, allowlist_wrong: bool):
    root = tmp_path / "corpus"
    shutil.copytree(CORPUS, root)
    if flag_wrong:  # d10 mislabelled as verified at ingestion
        d10 = root / "d10.md"
        d10.write_text(d10.read_text(encoding="utf-8").replace("trusted: false", "trusted: true"), encoding="utf-8")
    if allowlist_wrong:  # an operator allowed uploads as a source
        with (root / "allowlist.yaml").open("a", encoding="utf-8") as f:
            f.write("  - upload://\n")
    return root


@pytest.mark.parametrize("flag_wrong, allowlist_wrong, poisoned", [
    (False, False, False), (True, False, False), (False, True, False), (True, True, True)])
def test_the_poisoned_fact_needs_both_controls_to_fail(tmp_path, flag_wrong, allowlist_wrong, poisoned):
    engine = Engine.load(poisoned_copy(tmp_path, flag_wrong, allowlist_wrong), ranker="overlap")
    blocked, facts = hardened_agent(engine, AURORA, ENG, "Aurora", "region")
    walk = local_search(engine.graph(ENG), "Aurora", "region")
    if poisoned:
        # Both controls failed: d10 is evidence, and being newer it even wins the conflict.
        assert blocked == [] and ("attacker-zone", "d10") in facts
        assert walk.answer == "attacker-zone" and walk.resolution.status == "newest"
    else:
        assert blocked == ["d10"] and facts == [("us-east-2", "d03")]
        assert walk.answer == "us-east-2"


def test_without_an_allowlist_the_flag_is_the_only_control(tmp_path):
    root = poisoned_copy(tmp_path, flag_wrong=True, allowlist_wrong=False)
    (root / "allowlist.yaml").unlink()
    engine = Engine.load(root, ranker="overlap")
    assert local_search(engine.graph(ENG), "Aurora", "region").answer == "attacker-zone"


def test_facts_need_their_support_span_in_the_text(engine):
    from hoprag.corpus import Doc

    forged = Doc("x1", "Aurora is fine.", frozenset({"engineering"}), True, source="https://wiki.example.internal/x",
                 triples=(("Aurora", "region", "attacker-zone"),))
    assert engine.facts(forged) == (("Aurora", "region", "attacker-zone"),)
    assert engine.evidence(forged) == ()
    assert engine.table([forged]) == {}  # the loop's fact table is the gated one


@pytest.mark.slow  # the agent over a stdio server, twice
@pytest.mark.parametrize("allowlist_wrong, answer", [(False, "us-east-2"), (True, "attacker-zone")])
def test_the_agent_path_uses_the_same_gate(tmp_path, allowlist_wrong, answer):
    from test_agent import ask

    root = poisoned_copy(tmp_path, flag_wrong=True, allowlist_wrong=allowlist_wrong)
    assert ask(AURORA, "--corpus", str(root))["answer"] == answer
