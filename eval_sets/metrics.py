"""An offline ``adk eval`` metric: the answer line must match exactly, abstentions included.

ROUGE (``response_match_score``) forgives word endings and order; an answer is a fact, so the
first line of the final response -- the answer, or "I cannot answer: <reason>." -- must equal
the reference's. Referenced from ``test_config.json`` as ``eval_sets.metrics.answer_match``.
"""

from __future__ import annotations

from typing import Optional

from google.adk.evaluation.eval_case import ConversationScenario, Invocation
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult


def answer_line(invocation: Optional[Invocation]) -> str:
    """The first non-empty line of an invocation's final response, whitespace-normalised."""
    content = invocation.final_response if invocation else None
    text = "".join(p.text or "" for p in (content.parts or [])) if content else ""
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


def answer_match(eval_metric: EvalMetric, actual_invocations: list[Invocation],
                 expected_invocations: Optional[list[Invocation]],
                 conversation_scenario: Optional[ConversationScenario] = None) -> EvaluationResult:
    """1.0 per invocation whose answer line equals the reference's; fails below the threshold."""
    threshold = eval_metric.criterion.threshold if eval_metric.criterion else 1.0
    expected = list(expected_invocations or [None] * len(actual_invocations))
    per = []
    for actual, reference in zip(actual_invocations, expected):
        score = 1.0 if reference is not None and answer_line(actual) == answer_line(reference) != "" else 0.0
        per.append(PerInvocationResult(actual_invocation=actual, expected_invocation=reference, score=score,
                                       eval_status=EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED))
    overall = sum(p.score for p in per) / len(per) if per else 0.0
    return EvaluationResult(overall_score=overall, per_invocation_results=per,
                            overall_eval_status=EvalStatus.PASSED if per and overall >= threshold else EvalStatus.FAILED)
