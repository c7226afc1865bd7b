"""The offline policy model: a deterministic ``BaseLlm`` that plays every role from its request.

Registered in ADK's ``LLMRegistry`` as ``hoprag-offline`` (any ``hoprag-offline-*`` name too),
it needs no key and no network. It reads only what the request holds -- the role (agent
name), the state blocks of the rendered instruction, the tools offered and this turn's tool
results -- and decides with :mod:`.policy`. It knows no corpus: no question, entity or
document id appears in its code.
"""

from __future__ import annotations

import json
from typing import Any, AsyncGenerator

from google.adk.models import LLMRegistry
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from hoprag.tokens import token_count

from . import policy
from .prompts import read_block


def _last_response(request: LlmRequest) -> types.FunctionResponse | None:
    """This turn's latest tool result, if the last content is one."""
    if not request.contents:
        return None
    parts = request.contents[-1].parts or []
    return next((p.function_response for p in parts if p.function_response), None)


def _responses(request: LlmRequest, name: str) -> list[dict[str, Any]]:
    return [p.function_response.response or {} for c in request.contents for p in (c.parts or [])
            if p.function_response and p.function_response.name == name]


def _offered(request: LlmRequest) -> set[str]:
    return set(request.tools_dict)


def _call(name: str, **args: Any) -> types.Part:
    return types.Part.from_function_call(name=name, args=args)


def _text(value: Any) -> types.Part:
    return types.Part(text=value if isinstance(value, str) else json.dumps(value, sort_keys=True))


def _structured(response: dict[str, Any]) -> dict[str, Any]:
    return response.get("structuredContent") or {}


def plan_role(request: LlmRequest, instruction: str) -> types.Part:
    question = read_block(instruction, "QUESTION") or ""
    if "graph_overview" not in _offered(request) and not _responses(request, "graph_overview"):
        return _text({"action": "abstain", "reason": "you may not read any documents", "start": None, "goal": None})
    overviews = _responses(request, "graph_overview")
    if not overviews:
        return _call("graph_overview")
    decided = policy.plan(question, _structured(overviews[-1]))
    last = _last_response(request)
    if decided["action"] == "search" and last is not None and last.name == "graph_overview":
        return _call("search", query=decided["query"], k=decided.get("k", policy.SEARCH_K))
    return _text(decided)


def _ledger(instruction: str) -> policy.Ledger:
    """The ledger block of a role's instruction, with every field present."""
    return {**policy.new_ledger("", 0), **(read_block(instruction, "LEDGER") or {})}


def grade_role(request: LlmRequest, instruction: str) -> types.Part:
    return _text(policy.grade(_ledger(instruction)))


def research_role(request: LlmRequest, instruction: str) -> types.Part:
    last = _last_response(request)
    if last is not None:
        args = next((p.function_call.args for c in request.contents for p in (c.parts or [])
                     if p.function_call and p.function_call.name == last.name), {}) or {}
        return _text(f"Fetched {args.get('id', '')!r}." if last.name == "fetch" else
                     f"Looked for {args.get('text', '')!r}." if last.name == "grep" else f"Searched {args.get('query', '')!r}.")
    graded = read_block(instruction, "GRADE") or {}
    if graded.get("status") == "gap" and "search" in _offered(request):
        return _call("search", query=graded["query"], k=graded.get("k", policy.SEARCH_K))
    if graded.get("status") == "check" and "grep" in _offered(request):
        return _call("grep", text=graded["grep"])
    if graded.get("status") == "stale" and "fetch" in _offered(request):
        return _call("fetch", id=graded["fetch"])
    return _call("exit_loop")


def write_role(request: LlmRequest, instruction: str) -> types.Part:
    ledger = _ledger(instruction)
    return _text(policy.compose(ledger, policy.grade(ledger)))


ROLES = {"planner": plan_role, "grader": grade_role, "researcher": research_role, "writer": write_role}


class HopragPolicyLlm(BaseLlm):
    """Deterministic stand-in for an LLM, playing planner, grader, researcher and writer."""

    model: str = "hoprag-offline"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"hoprag-offline(-.*)?"]

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        config = llm_request.config
        instruction = str(config.system_instruction or "") if config else ""
        role = ((config.labels or {}) if config else {}).get("adk_agent_name", "")
        decide = ROLES.get(role)
        part = decide(llm_request, instruction) if decide else _text(f"[{self.model}] no policy for role {role!r}")
        prompt = instruction + "".join(str(p.to_json_dict()) for c in llm_request.contents for p in (c.parts or []))
        reply = part.text or json.dumps(part.function_call.args if part.function_call else {})
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=token_count(prompt), candidates_token_count=token_count(reply),
            total_token_count=token_count(prompt) + token_count(reply))
        yield LlmResponse(content=types.Content(role="model", parts=[part]), partial=False, turn_complete=True,
                          finish_reason=types.FinishReason.STOP, usage_metadata=usage)


LLMRegistry.register(HopragPolicyLlm)
