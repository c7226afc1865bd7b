"""Offline ``adk eval`` metrics.

``answer_match``: the answer line must match exactly, abstentions included. ROUGE
(``response_match_score``) forgives word endings and order; an answer is a fact, so the first
line of the final response -- the answer, or "I cannot answer: <reason>." -- must equal the
reference's. Referenced from ``test_config.json`` as ``eval_sets.metrics.answer_match``.

``evidence_recall``, ``answer_in_citations``, ``hop_count``: open-mode metrics for the MuSiQue
eval set (``musique.test_config.json``). Their gold is the reference response's ``key: value``
lines (answer, supporting ids, hop count, unreadable ids; :mod:`eval_sets.build_musique`), never
anything the policy computes: what the agent cited is read from its written answer, how often it
searched from the tool calls it made.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable, Optional

from google.adk.evaluation.eval_case import ConversationScenario, Invocation, get_all_tool_calls
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult


def answer_line(invocation: Optional[Invocation]) -> str:
    """The first non-empty line of an invocation's final response, whitespace-normalised."""
    content = invocation.final_response if invocation else None
    text = "".join(p.text or "" for p in (content.parts or [])) if content else ""
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


# --- open-mode metrics (MuSiQue) --------------------------------------------------------------

_CITED = re.compile(r"\[([^\[\]\s]+)\]")
MISSING = ("I cannot answer", "Not found in what you may read")


def _text(invocation: Optional[Invocation]) -> str:
    content = invocation.final_response if invocation else None
    return "".join(p.text or "" for p in (content.parts or [])) if content else ""


def gold(reference: Optional[Invocation]) -> dict[str, str]:
    """The reference's ``key: value`` lines."""
    return dict(line.split(": ", 1) for line in _text(reference).splitlines() if ": " in line)


def evidence_line(invocation: Optional[Invocation]) -> str:
    return next((line for line in _text(invocation).splitlines() if line.startswith("Evidence: ")), "")


def normalise(text: str) -> str:
    """SQuAD-style: folded, lower-case, no punctuation or articles, single spaces."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", re.sub(r"[^\w\s]", " ", text)).split())


def says_missing(invocation: Optional[Invocation]) -> bool:
    return any(marker in _text(invocation) for marker in MISSING)


def searches(invocation: Optional[Invocation]) -> int:
    return sum(call.name == "search" for call in get_all_tool_calls(invocation.intermediate_data if invocation else None))


def _evidence_recall(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """Readable gold passages among the cited ids; a hidden one cited, or an unreadable case that
    neither abstains nor says what is missing, scores 0."""
    g = gold(reference)
    hidden = set(g.get("unreadable", "-").split()) - {"-"}
    cited = set(_CITED.findall(evidence_line(actual)))
    readable = [i for i in g.get("supporting", "").split() if i not in hidden]
    if cited & hidden or (hidden and not says_missing(actual)) or not readable:
        return 0.0
    return sum(i in cited for i in readable) / len(readable)


def _answer_in_citations(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """1 when the normalised gold answer is inside the cited quotes; for an unreadable gold passage,
    1 when the agent abstains or says what is missing instead."""
    g = gold(reference)
    if g.get("unreadable", "-") != "-":
        return float(says_missing(actual))
    answer = normalise(g.get("answer", ""))
    return float(bool(answer) and f" {answer} " in f" {normalise(evidence_line(actual))} ")


def _hop_count(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """1 when the agent searched about as often as the chain has hops (within one)."""
    hops = int(gold(reference).get("hops", "0"))
    return float(hops > 0 and abs(searches(actual) - hops) <= 1)


def _per_case(score: Callable[[Optional[Invocation], Optional[Invocation]], float]):
    def metric(eval_metric: EvalMetric, actual_invocations: list[Invocation],
               expected_invocations: Optional[list[Invocation]],
               conversation_scenario: Optional[ConversationScenario] = None) -> EvaluationResult:
        threshold = eval_metric.criterion.threshold if eval_metric.criterion else 1.0
        expected = list(expected_invocations or [None] * len(actual_invocations))
        per = []
        for actual, reference in zip(actual_invocations, expected):
            value = score(actual, reference) if reference is not None else 0.0
            per.append(PerInvocationResult(actual_invocation=actual, expected_invocation=reference, score=value,
                                           eval_status=EvalStatus.PASSED if value >= threshold else EvalStatus.FAILED))
        overall = sum(p.score for p in per) / len(per) if per else 0.0
        return EvaluationResult(overall_score=overall, per_invocation_results=per,
                                overall_eval_status=EvalStatus.PASSED if per and overall >= threshold
                                else EvalStatus.FAILED)
    metric.__doc__ = score.__doc__
    return metric


def _answer_match(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """1.0 per invocation whose answer line equals the reference's; fails below the threshold."""
    return 1.0 if answer_line(actual) == answer_line(reference) != "" else 0.0


answer_match = _per_case(_answer_match)
evidence_recall = _per_case(_evidence_recall)
answer_in_citations = _per_case(_answer_in_citations)
hop_count = _per_case(_hop_count)
