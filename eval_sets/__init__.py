"""What correct means: ADK eval sets, their corpora and the offline answer metric."""

from __future__ import annotations

from typing import Any, Sequence

APP = "hoprag_agent"


def eval_case(eval_id: str, question: str, reference: str, user: str,
              tool_uses: Sequence[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:
    """One single-turn ``adk eval`` case: the question as ``user``, the reference reply (an expected
    answer, or gold lines for :mod:`eval_sets.metrics`) and the expected tool trajectory."""
    return {
        "eval_id": eval_id,
        "conversation": [{
            "invocation_id": f"{eval_id}-1",
            "user_content": {"role": "user", "parts": [{"text": question}]},
            "final_response": {"role": "model", "parts": [{"text": reference}]},
            "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in tool_uses],
                                  "tool_responses": [], "intermediate_responses": []},
        }],
        "session_input": {"app_name": APP, "user_id": user, "state": {}},
    }
