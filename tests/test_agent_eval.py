"""``adk eval`` over the shipped eval sets, and the negative controls that must fail it."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from typing import Iterable

import pytest

from conftest import ROOT
from conftest import adk_eval as run_adk_eval


def adk_eval(evalset: str, env: dict[str, str] | None = None, cases: str = "") -> subprocess.CompletedProcess:
    """The shipped ``test_config.json`` over an eval set (or some of its ``cases``)."""
    return run_adk_eval(str(evalset) + (f":{cases}" if cases else ""), **(env or {}))


_METRIC = re.compile(r"^Metric: (\w+), Status: (PASSED|FAILED)", re.M)


def metric_passes(evalset: str, config: str, cases: int, metrics: Iterable[str], **env: str) -> Counter:
    """Run an eval set with ``config``; how many cases each metric passed (every metric must have
    judged all ``cases``)."""
    done = run_adk_eval(evalset, config, 900, **env)
    out = done.stdout + done.stderr
    assert "Tests passed:" in out, out[-3000:]
    seen = Counter(name for name, _ in _METRIC.findall(out))
    assert all(seen[m] == cases for m in metrics), seen
    return Counter(name for name, status in _METRIC.findall(out) if status == "PASSED")


def summary(done: subprocess.CompletedProcess) -> tuple[int, int]:
    out = done.stdout + done.stderr
    passed = int(out.split("Tests passed:")[1].split()[0])
    failed = int(out.split("Tests failed:")[1].split()[0])
    return passed, failed


@pytest.mark.slow  # adk eval: ~20 s a run, even for one case
def test_falcon_eval_set_passes_offline():
    done = adk_eval("eval_sets/falcon.evalset.json")
    assert done.returncode == 0, done.stdout[-3000:]
    assert summary(done) == (8, 0)


@pytest.mark.slow  # adk eval: ~20 s a run, even for one case
def test_kestrel_eval_set_passes_on_its_own_corpus():
    done = adk_eval("eval_sets/kestrel.evalset.json", {"HOPRAG_CORPUS": str(ROOT / "eval_sets/corpora/kestrel")})
    assert done.returncode == 0, done.stdout[-3000:]
    assert summary(done) == (5, 0)


@pytest.mark.slow  # adk eval: ~20 s a run, even for one case
@pytest.mark.parametrize("env", [{"HOPRAG_MAX_ITERATIONS": "1"}, {"HOPRAG_SEARCH_BUDGET": "1"}])
def test_three_hop_case_fails_with_one_round_or_one_search(env):
    done = adk_eval("eval_sets/falcon.evalset.json", env, cases="q3_region_three_hops")
    assert done.returncode == 1 and summary(done) == (0, 1)
    assert "tool_trajectory_avg_score:  FAILED" in done.stdout and "answer_match:               FAILED" in done.stdout


@pytest.mark.slow  # adk eval: ~20 s a run, even for one case
def test_a_wrong_reference_answer_fails(tmp_path):
    evalset = json.loads((ROOT / "eval_sets/falcon.evalset.json").read_text(encoding="utf-8"))
    case = next(c for c in evalset["eval_cases"] if c["eval_id"] == "q1_owner_direct")
    case["conversation"][0]["final_response"]["parts"][0]["text"] = "Maya Chan\nEvidence: Falcon --owner--> Maya Chan [d01]"
    evalset["eval_cases"] = [case]
    evalset["eval_set_id"] = "falcon_wrong_reference"
    path = tmp_path / "falcon_wrong_reference.evalset.json"
    path.write_text(json.dumps(evalset), encoding="utf-8")
    done = adk_eval(str(path))
    assert done.returncode == 1 and summary(done) == (0, 1)
    assert "answer_match:               FAILED" in done.stdout
    assert "tool_trajectory_avg_score:  PASSED" in done.stdout  # only the answer is wrong


@pytest.mark.slow  # adk eval: ~20 s a run, even for one case
def test_a_missing_abstention_fails(tmp_path):
    evalset = json.loads((ROOT / "eval_sets/falcon.evalset.json").read_text(encoding="utf-8"))
    case = next(c for c in evalset["eval_cases"] if c["eval_id"] == "budget_as_finance")
    case["conversation"][0]["final_response"]["parts"][0]["text"] = "I cannot answer: not found in what you may read."
    evalset["eval_cases"], evalset["eval_set_id"] = [case], "falcon_expects_abstention"
    path = tmp_path / "falcon_expects_abstention.evalset.json"
    path.write_text(json.dumps(evalset), encoding="utf-8")
    done = adk_eval(str(path))
    assert done.returncode == 1 and "answer_match:               FAILED" in done.stdout


@pytest.mark.slow  # adk eval: ~20 s a run, even for one case
def test_security_eval_set_passes_on_the_red_team_corpus():
    """Every payload x placement of the red-team corpus: same trajectory and answer as the clean twin."""
    done = adk_eval("eval_sets/redteam.evalset.json", {"HOPRAG_CORPUS": str(ROOT / "eval_sets/corpora/redteam")})
    assert done.returncode == 0, done.stdout[-3000:]
    passed, failed = summary(done)
    assert failed == 0 and passed == len(json.loads((ROOT / "eval_sets/redteam.evalset.json").read_text())["eval_cases"])


# --- what adk eval reads, checked without running it (the fast tier) --------------------------

def criteria(config: str) -> set[str]:
    """The metrics a test config gates on, after ADK's own validation of the file."""
    from google.adk.evaluation.eval_config import EvalConfig

    return set(EvalConfig.model_validate_json((ROOT / config).read_text(encoding="utf-8")).criteria)


def cases(evalset: str) -> list[str]:
    """An eval set's case ids, after ADK's own validation of the file."""
    from google.adk.evaluation.eval_set import EvalSet

    return [c.eval_id for c in EvalSet.model_validate_json((ROOT / evalset).read_text(encoding="utf-8")).eval_cases]


def test_the_shipped_eval_sets_and_configs_load_and_name_metrics_that_exist():
    from eval_sets import metrics

    for path in sorted((ROOT / "eval_sets").glob("*.evalset.json")):
        ids = cases(str(path.relative_to(ROOT)))
        assert ids and len(ids) == len(set(ids)), path.name
    builtin = {"tool_trajectory_avg_score", "response_match_score"}
    for config in ["test_config.json", *(str(p.relative_to(ROOT)) for p in (ROOT / "eval_sets").glob("*.test_config.json"))]:
        custom = json.loads((ROOT / config).read_text(encoding="utf-8")).get("custom_metrics", {})
        assert criteria(config) <= builtin | set(custom), config
        for name, spec in custom.items():
            module, function = spec["code_config"]["name"].rsplit(".", 1)
            assert module == metrics.__name__ and callable(getattr(metrics, function, None)), (config, name)


def test_answer_match_passes_the_reference_and_fails_a_wrong_answer_line():
    """The metric the shipped config adds, on a committed case: the same check
    ``test_a_wrong_reference_answer_fails`` makes through adk eval."""
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.evaluator import EvalStatus

    from eval_sets.metrics import answer_match

    evalset = EvalSet.model_validate_json((ROOT / "eval_sets/falcon.evalset.json").read_text(encoding="utf-8"))
    reference = next(c for c in evalset.eval_cases if c.eval_id == "q1_owner_direct").conversation
    wrong = [i.model_copy(deep=True) for i in reference]
    wrong[0].final_response.parts[0].text = "Maya Chan\nEvidence: Falcon --owner--> Maya Chan [d01]"
    metric = EvalMetric(metric_name="answer_match", threshold=1.0)
    assert answer_match(metric, reference, reference).overall_eval_status == EvalStatus.PASSED
    assert answer_match(metric, wrong, reference).overall_eval_status == EvalStatus.FAILED
