"""Build the docs-QA eval set (``eval_sets/docs.evalset.json``) from ``eval_sets/docs_questions.jsonl``.

Every question of the file becomes one case; its gold -- the expected words, the answering pages and
the kind -- is written into the case's reference response as ``key: value`` lines for
:mod:`eval_sets.metrics`, never into anything the agent reads. The set runs against a store of the
shipped docs (``hoprag index eval_sets/corpora/instructor/docs --store DOCS.db``, then
``HOPRAG_STORE=DOCS.db adk eval agents/hoprag_agent eval_sets/docs.evalset.json --config_file_path
eval_sets/docs.test_config.json``), in single-user mode: no access file.

    python -m eval_sets.build_docs
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.docs import DocsQuestion, load_questions
from eval_sets import eval_case

ROOT = Path(__file__).resolve().parent
QUESTIONS = ROOT / "docs_questions.jsonl"
EVALSET = ROOT / "docs.evalset.json"
USER = "user"  # ADK's default session user: in single-user mode, the one local reader


def reference(q: DocsQuestion) -> str:
    """The gold, one ``key: value`` line each (read by the metrics only)."""
    return "\n".join([f"answer: {' | '.join(q.answer) or '-'}", f"pages: {' '.join(q.pages) or '-'}",
                      f"kind: {q.kind}", f"split: {q.split}"])


def build(questions: Path = QUESTIONS, out: Path = EVALSET) -> None:
    cases = [eval_case(q.id, q.question, reference(q), USER) for q in load_questions(questions)]
    out.write_text(json.dumps({
        "eval_set_id": "docs",
        "name": "Docs QA on the Instructor docs: direct, paraphrased, two-page and unanswerable questions "
                "(run with HOPRAG_STORE=<a store of eval_sets/corpora/instructor/docs> and eval_sets/docs.test_config.json)",
        "description": "Open mode on real documentation; references hold the gold for eval_sets.metrics.",
        "eval_cases": cases}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    build()
