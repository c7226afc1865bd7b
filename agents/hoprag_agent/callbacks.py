"""Code, not the model, keeps the books: the question, the evidence ledger and the search budget.

Every tool result enters the ledger through :func:`after_tool` (the integrity gate drops
untrusted documents there), and :func:`before_tool` refuses a ``search`` past the budget
(or a ``fetch``: both spend the one budget) before it reaches the server -- the hard stop does
not depend on the model obeying.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from hoprag.walk import Budget
from mcp_server.tools import NAMES

from . import policy

LEDGER, PLAN, GRADE, QUESTION = "hoprag_ledger", "plan", "grade", "question"
_REFUSED = "hoprag_refused"
STARTED = "hoprag_searches_started"
#: Every tool an agent is given; a call to any other name is refused here (ADK would answer it too,
#: but the refusal belongs in the audit trace).
KNOWN_TOOLS = frozenset([*NAMES, "exit_loop"])
NO_PLAN = "the planner's reply held no JSON plan"


def start_question(budget: int, knows: Callable[[str], bool] = lambda user_id: True):
    """A root ``before_agent_callback``: a new question gets a fresh ledger and an empty plan.

    A session user the access file does not know gets one line naming it and no agent run
    (``adk web``, ``adk api_server``); ``hoprag ask`` refuses such a user before it starts.
    """

    def callback(callback_context: CallbackContext) -> types.Content | None:
        content = callback_context.user_content
        question = "".join(p.text or "" for p in (content.parts if content and content.parts else []))
        callback_context.state[QUESTION] = question.strip()
        callback_context.state[LEDGER] = policy.new_ledger(question.strip(), budget)
        callback_context.state[PLAN] = ""
        callback_context.state[GRADE] = ""
        callback_context.state[STARTED] = 0
        problem = policy.question_problem(question)
        if problem:
            return types.Content(role="model", parts=[types.Part(text=f"I cannot answer: {problem}.")])
        if not knows(callback_context.user_id):
            return types.Content(role="model", parts=[types.Part(text=(
                f"I cannot answer: unknown user {callback_context.user_id!r}: the operator's access file maps "
                "no principal to it (add it under 'users:')."))])
        return None

    return callback


def _refuse(reason: str) -> dict[str, Any]:
    return {"isError": True, _REFUSED: reason, "content": [{"type": "text", "text": reason}]}


def before_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any] | None:
    """Refuse what the model may not do: a tool it was not given, a read (``search`` or ``fetch``) past the budget.

    A refused call never reaches the server. The budget counts reads *started*, so parallel
    calls in one model turn cannot all pass the check before the first one is recorded.
    """
    if tool.name not in KNOWN_TOOLS:
        return _refuse(f"unknown tool {tool.name!r}: the tools are {', '.join(sorted(KNOWN_TOOLS))}")
    if tool.name not in policy.READS or LEDGER not in tool_context.state:
        return None
    started = tool_context.state.get(STARTED, 0)
    if Budget(tool_context.state[LEDGER].get("budget", 0), started).exhausted:
        return _refuse(f"{tool.name} {policy.ABSTAIN_BUDGET}")
    # Its own key, never the ledger: a call's state reads see its own writes first, so a ledger
    # written here would hide the records that parallel calls add before this call's after_tool.
    tool_context.state[STARTED] = started + 1
    return None


def after_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any) -> None:
    """Record the call and its (gated) result in the ledger."""
    if tool.name == "exit_loop" or LEDGER not in tool_context.state:
        return None
    ledger = _ledger(tool_context.state)
    response = tool_response if isinstance(tool_response, dict) else {}
    if response.get(_REFUSED):
        ledger["trace"].append(f"refused {tool.name}({args}): {response[_REFUSED]}")
    elif response.get("isError") or "error" in response:
        ledger["trace"].append(f"{tool.name} failed: {_error_text(response)}")
        ledger["calls"].append({"tool": tool.name, "args": args})
    else:
        policy.record(ledger, tool.name, dict(args), response.get("structuredContent"))
    tool_context.state[LEDGER] = ledger
    return None


def _ledger(state: Any) -> dict[str, Any]:
    """A deep copy of the ledger: writing the copy back is what records a state delta."""
    return json.loads(json.dumps(state.get(LEDGER) or {}))


def _error_text(response: dict[str, Any]) -> str:
    if "error" in response:
        return str(response["error"])
    return " ".join(c.get("text", "") for c in response.get("content", []) if isinstance(c, dict))[:300]


def after_planner(callback_context: CallbackContext) -> None:
    """Copy the planner's decision (JSON) into the ledger so grading knows start and goal."""
    ledger = _ledger(callback_context.state)
    decided = parse_json(callback_context.state.get(PLAN, ""))
    if not decided.get("action"):  # prose or broken JSON: abstain with the real reason, not "not found"
        decided = {"action": "abstain", "reason": NO_PLAN, "start": None, "goal": None}
    ledger["plan"] = decided
    ledger["start"], ledger["goal"] = decided.get("start"), decided.get("goal")
    ledger["trace"].append(f"plan: {json.dumps(decided, sort_keys=True)}")
    callback_context.state[LEDGER] = ledger


def after_grader(callback_context: CallbackContext) -> None:
    """Keep each grade in the trace (the verdicts and the gap it named)."""
    graded = parse_json(callback_context.state.get(GRADE, ""))
    ledger = _ledger(callback_context.state)
    if ledger:
        ledger["trace"].append(f"grade: {json.dumps(graded, sort_keys=True)}")
        callback_context.state[LEDGER] = ledger


# What the chat shows. adk web renders model text as Markdown: a single newline is a soft break
# (the writer's two lines ran together) and a role's JSON decision is an unreadable blob.
AfterModel = Callable[[CallbackContext, LlmResponse], LlmResponse | None]


def _final_text(response: LlmResponse) -> str | None:
    """The text of a complete (non-partial) model reply that calls no tool, else None."""
    parts = response.content.parts if response.content and response.content.parts else []
    if response.partial or not parts or any(p.function_call for p in parts):
        return None
    return "".join(p.text or "" for p in parts if not p.thought) or None


def _showing(response: LlmResponse, text: str) -> LlmResponse:
    return response.model_copy(update={"content": types.Content(role="model", parts=[types.Part(text=text)])})


def decision(key: str, render: Callable[[dict[str, Any]], str]) -> AfterModel:
    """An ``after_model_callback`` for a role that decides in JSON (planner, grader): the decision
    goes to state ``key`` as data -- what later roles and callbacks read -- and the chat shows
    ``render(decision)``. A reply that holds no JSON object is stored and shown as it came."""

    def callback(callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
        text = _final_text(llm_response)
        if text is None:
            return None
        decided = parse_json(text)
        callback_context.state[key] = decided or text
        return _showing(llm_response, render(decided)) if decided else None

    return callback


def markdown_lines(callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
    """The writer's lines stay lines in Markdown: a hard break (two trailing spaces) ends each prose
    line; code blocks and blank lines are left as they are. Plain-text readers see the same lines;
    ``splitlines`` gives them back."""
    text = _final_text(llm_response)
    if text is None or "\n" not in text:
        return None
    lines, fenced = [], False
    for line in text.splitlines():
        starts = line.lstrip().startswith(("```", "~~~"))
        # inside a code block (and on its opening fence) a line break is already a line break
        lines.append(line if fenced or starts or not line.strip() else line.rstrip() + "  ")
        fenced ^= starts
    return _showing(llm_response, "\n".join(lines).rstrip())


def parse_json(text: Any) -> dict[str, Any]:
    """The first JSON object in a model's text (models sometimes wrap JSON in prose or fences)."""
    if isinstance(text, dict):
        return text
    text = str(text or "")
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
            if isinstance(value, dict):
                return value
        except json.JSONDecodeError:
            pass
        start = text.find("{", start + 1)
    return {}
