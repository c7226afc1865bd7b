"""Run the agent in-process for one question and report what it did (``hoprag ask``)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from google.adk.runners import InMemoryRunner
from google.genai import types

from hoprag import settings as hoprag_settings
from hoprag.access import AccessError
from hoprag.corpus import load_corpus

from . import config, policy
from .agent import build
from .callbacks import LEDGER
from .config import AgentSettings
from .models import model_for

APP = "hoprag_agent"


def prepare(user_id: str | None = None, **flags: Any) -> tuple[AgentSettings, str]:
    """Resolve the settings and check everything a first run gets wrong, before any subprocess or model call.

    Raises the engine's one-line errors: :class:`~.config.SettingsError` (a bad setting or
    model name), :class:`~hoprag.access.AccessError` (a named access file missing, an unknown user) and
    :class:`~hoprag.corpus.CorpusError` (a corpus the stdio server could not load).
    """
    settings = config.resolve(**flags)
    user = user_id or hoprag_settings.DEFAULT_USER
    if settings.mcp_url is None and settings.store is None:  # the stdio server loads this corpus: fail here, in one line
        load_corpus(settings.corpus)
    hoprag_settings.principal_for(settings, user)
    if settings.mcp_url is not None and hoprag_settings.single_user(settings):
        raise AccessError(f"HOPRAG_MCP_URL names a remote server, which needs a bearer token from an access file, and "
                          f"there is none at {hoprag_settings.access_path(settings)}: pass --access FILE (or set "
                          "HOPRAG_ACCESS) naming one with a token for your principal")
    model_for(settings)  # an unknown model name fails here, before anything starts
    return settings, user


class QuestionError(ValueError):
    """A question that cannot be asked (empty, too long): one line, before any model call."""


async def ask(question: str, user_id: str | None = None, corpus: Path | None = None, access: Path | None = None,
              store: str | Path | None = None, **flags: Any) -> dict[str, Any]:
    """Answer ``question`` as ``user_id`` (default ADK's ``user``); the structured fields come from the gate.

    ``flags`` are :func:`.config.resolve` flags (``corpus``, ``access``, ``model`` ...). A
    failing model raises :class:`.models.ModelError`.
    """
    settings, user_id = prepare(user_id, corpus=corpus, access=access, store=store, **flags)
    return await answer(settings, user_id, question)


async def answer(settings: AgentSettings, user_id: str, question: str) -> dict[str, Any]:
    """Run the agent tree of ``settings`` on one question as ``user_id`` (checked by :func:`prepare`).

    Raises :class:`QuestionError` for a question that cannot be asked, before anything starts."""
    problem = policy.question_problem(question)
    if problem:
        raise QuestionError(problem)
    root, toolset = build(settings)
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
    return {**report(state[LEDGER], written), "model": settings.model, "prompt_tokens": tokens,
            "model_calls": model_calls}


def agrees(written: str, graded: dict[str, Any]) -> bool:
    """Does the writer's text say what the gate decided: its answer with every cited document, or an abstention?"""
    if graded["status"] != "sufficient":
        return written.strip().lower().startswith("i cannot answer")
    if graded.get("mode") == "open":
        return all(policy.source(c) in written for c in graded["citations"])
    first = written.strip().splitlines()[0] if written.strip() else ""
    return graded["answer"] in first and all(f"[{hop[3]}]" in written for hop in graded["path"])


def report(ledger: dict[str, Any], written: str) -> dict[str, Any]:
    """The structured answer as the gate over the final ledger sees it: relation mode cites fact hops,
    open mode quoted sentences (both with ``doc_id``). The writer's text is shown only where it agrees.

    A model can be talked into writing anything (an injected claim, a guess without evidence), so
    ``response`` is the model's text when :func:`agrees`, else the gate's own composition.
    """
    graded = policy.grade(ledger)
    answered = graded["status"] == "sufficient"
    checked = agrees(written, graded)
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
        "see_also": graded.get("see_also", []) if is_open and not answered else [],
        "retrieved": policy.retrieved(ledger),
        "searches": len(ledger["searches"]),
        "fetches": len(policy.fetched(ledger)),
        "docs_read": len(ledger["evidence"]),
        "dropped_untrusted": ledger["dropped"],
        "tool_calls": [c["tool"] for c in ledger["calls"]],
        "response": written if checked else policy.compose(ledger, graded),
        "model_response": written,
        "response_replaced": not checked,
        "trace": ledger["trace"],
    }
