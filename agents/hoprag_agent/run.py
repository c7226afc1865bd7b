"""Run the agent in-process for one question and report what it did (``hoprag ask``)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from google.adk.runners import InMemoryRunner
from google.genai import types

from hoprag import settings as hoprag_settings

from . import policy
from .agent import build
from .callbacks import LEDGER

APP = "hoprag_agent"


async def ask(question: str, user_id: str, corpus: Path | None = None, access: Path | None = None,
              store: Path | None = None, **flags: Any) -> dict[str, Any]:
    """Answer ``question`` as ``user_id``; the structured fields come from the gate over the final ledger.

    ``flags`` are further settings (``mcp_url``, ``search_budget``, ...; :func:`hoprag.settings.resolve`)."""
    root, toolset = build(hoprag_settings.resolve(corpus=corpus, access=access, store=store, **flags))
    runner = InMemoryRunner(agent=root, app_name=APP)
    try:
        session = await runner.session_service.create_session(app_name=APP, user_id=user_id)
        message = types.Content(role="user", parts=[types.Part(text=question)])
        written, tokens, model_calls = "", 0, 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            async for event in runner.run_async(user_id=user_id, session_id=session.id, new_message=message):
                if event.usage_metadata and event.usage_metadata.prompt_token_count:
                    tokens += event.usage_metadata.prompt_token_count
                    model_calls += 1
                if event.author == "writer" and event.content and event.content.parts:
                    written = "".join(p.text or "" for p in event.content.parts) or written
        state = (await runner.session_service.get_session(app_name=APP, user_id=user_id, session_id=session.id)).state
    finally:
        await runner.close()
        await toolset.shutdown()
    return {**report(state[LEDGER], written), "prompt_tokens": tokens, "model_calls": model_calls}


def report(ledger: dict[str, Any], written: str) -> dict[str, Any]:
    """The structured answer: relation mode cites fact hops, open mode quoted sentences (both with ``doc_id``)."""
    graded = policy.grade(ledger)
    answered = graded["status"] == "sufficient"
    is_open = graded.get("mode") == "open" or (ledger.get("plan") or {}).get("mode") == "open"
    if not answered:
        citations: list[dict[str, Any]] = []
    elif is_open:
        citations = graded["citations"]
    else:
        citations = [{"subject": s, "relation": r, "object": o, "doc_id": d} for s, r, o, d in graded.get("path", [])]
    return {
        "answer": graded["answer"] if answered else None,
        "abstained": not answered,
        "reason": None if answered else policy.abstain_reason(graded),
        "mode": "open" if is_open else "relation",
        "citations": citations,
        "retrieved": policy.retrieved(ledger),
        "searches": len(ledger["searches"]),
        "fetches": len(policy.fetched(ledger)),
        "docs_read": len(ledger["evidence"]),
        "dropped_untrusted": ledger["dropped"],
        "tool_calls": [c["tool"] for c in ledger["calls"]],
        "response": written,
        "trace": ledger["trace"],
    }
