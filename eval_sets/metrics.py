"""Offline ``adk eval`` metrics.

``answer_match``: the answer line must match exactly, abstentions included. ROUGE
(``response_match_score``) forgives word endings and order; an answer is a fact, so the first
line of the final response -- the answer, or "I cannot answer: <reason>." -- must equal the
reference's. Referenced from ``test_config.json`` as ``eval_sets.metrics.answer_match``.

``evidence_recall``, ``answer_line``, ``hop_count``: open-mode metrics for the MuSiQue eval set
(``musique.test_config.json``); ``answer_words``, ``first_source``, ``one_read``, ``abstention``:
the docs-QA set's (``docs.test_config.json``). Their gold is the reference response's
``key: value`` lines (:mod:`eval_sets.build_musique`, :mod:`eval_sets.build_docs`), never anything
the policy computes: what the agent answered and cited is read from its written answer -- what a
person reads -- and how often it searched from the tool calls it made.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable, Optional

from google.adk.evaluation.eval_case import ConversationScenario, Invocation, get_all_tool_calls
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult

from agents.hoprag_agent.policy import READS


def first_line(invocation: Optional[Invocation]) -> str:
    """The first non-empty line of an invocation's final response, whitespace-normalised."""
    content = invocation.final_response if invocation else None
    text = "".join(p.text or "" for p in (content.parts or [])) if content else ""
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


# --- open-mode metrics (MuSiQue, docs) -------------------------------------------------------

_SOURCE = re.compile(r"^- (\S+)", re.M)
MISSING = ("I cannot answer", "Not found in what you may read")


def _text(invocation: Optional[Invocation]) -> str:
    content = invocation.final_response if invocation else None
    return "".join(p.text or "" for p in (content.parts or [])) if content else ""


def gold(reference: Optional[Invocation]) -> dict[str, str]:
    """The reference's ``key: value`` lines."""
    return dict(line.split(": ", 1) for line in _text(reference).splitlines() if ": " in line)


def answer_text(invocation: Optional[Invocation]) -> str:
    """What a person reads as the answer: the final response up to its sources (or see-also) list."""
    text = _text(invocation)
    return re.split(r"\n\s*\n\s*Sources:|\n\s*See also:", text, maxsplit=1)[0].strip()


def sources(invocation: Optional[Invocation]) -> list[str]:
    """The document ids listed under ``Sources:``, in order (an abstention lists none)."""
    text = _text(invocation)
    listed = text.split("Sources:", 1)[1] if "Sources:" in text else ""
    return _SOURCE.findall(listed.split("\nHop path:", 1)[0])


def normalise(text: str) -> str:
    """SQuAD-style: folded, lower-case, no punctuation or articles, single spaces."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", re.sub(r"[^\w\s]", " ", text)).split())


def says(answer: str, expected: str) -> bool:
    """The normalised ``expected`` is in the normalised ``answer``, as whole words."""
    want = normalise(expected)
    return bool(want) and f" {want} " in f" {normalise(answer)} "


def says_missing(invocation: Optional[Invocation]) -> bool:
    return any(marker in _text(invocation) for marker in MISSING)


def abstained(invocation: Optional[Invocation]) -> bool:
    return _text(invocation).lstrip().startswith("I cannot answer")


def reads(invocation: Optional[Invocation]) -> int:
    """Reads the agent made: calls of the tools that spend the budget (:data:`~agents.hoprag_agent.policy.READS`)."""
    return sum(call.name in READS
               for call in get_all_tool_calls(invocation.intermediate_data if invocation else None))


def _evidence_recall(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """Readable gold passages among the sources; a hidden one cited, or an unreadable case that
    neither abstains nor says what is missing, scores 0."""
    g = gold(reference)
    hidden = set(g.get("unreadable", "-").split()) - {"-"}
    cited = set(sources(actual))
    readable = [i for i in g.get("supporting", "").split() if i not in hidden]
    if cited & hidden or (hidden and not says_missing(actual)) or not readable:
        return 0.0
    return sum(i in cited for i in readable) / len(readable)


def _answer_line(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """1 when the normalised gold answer is in the answer a person reads; for an unreadable gold
    passage, 1 when the agent abstains or says what is missing instead."""
    g = gold(reference)
    if g.get("unreadable", "-") != "-":
        return float(says_missing(actual))
    return float(not abstained(actual) and says(answer_text(actual), g.get("answer", "")))


def _hop_count(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """1 when the agent searched about as often as the chain has hops (within one)."""
    hops = int(gold(reference).get("hops", "0"))
    return float(hops > 0 and abs(reads(actual) - hops) <= 1)


# The docs-QA set: the reference holds ``answer: w1 | w2`` (expected words, all required), ``pages:``
# (document ids that answer; ``-`` for an unanswerable question) and ``kind:``.

def _pages(reference: Optional[Invocation]) -> list[str]:
    return [p for p in gold(reference).get("pages", "-").split() if p != "-"]


def _answer_words(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """Answerable: every expected word is in the answer, which is not an abstention. Unanswerable:
    the agent abstained."""
    if not _pages(reference):
        return float(abstained(actual))
    expected = [w.strip() for w in gold(reference).get("answer", "").split("|") if w.strip()]
    return float(bool(expected) and not abstained(actual) and all(says(answer_text(actual), w) for w in expected))


def _first_source(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """Answerable: the first source is a passage of an answering page. Unanswerable: no source at all."""
    pages, cited = _pages(reference), sources(actual)
    if not pages:
        return float(not cited)
    return float(bool(cited) and cited[0].split("#", 1)[0] in pages)


def _one_read(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """A question one page answers costs one search; one needing two pages at most two reads;
    an abstention at most the budget's four."""
    kind = gold(reference).get("kind", "")
    return float(reads(actual) <= {"direct": 1, "paraphrase": 1, "two-page": 2}.get(kind, 4))


def _abstention(actual: Optional[Invocation], reference: Optional[Invocation]) -> float:
    """The agent abstained exactly when the folder does not answer the question."""
    return float(abstained(actual) == (not _pages(reference)))


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
    return 1.0 if first_line(actual) == first_line(reference) != "" else 0.0


answer_match = _per_case(_answer_match)
evidence_recall = _per_case(_evidence_recall)
answer_line = _per_case(_answer_line)
hop_count = _per_case(_hop_count)
answer_words = _per_case(_answer_words)
first_source = _per_case(_first_source)
one_read = _per_case(_one_read)
abstention = _per_case(_abstention)
