"""Local models through ADK's LiteLLM wrapper: ``HOPRAG_MODEL=openai/<name>`` with ``HOPRAG_MODEL_BASE_URL``
pointing at an OpenAI-compatible server (vLLM, llama.cpp, LM Studio, Ollama's ``/v1``), here a local fake
that validates every chat request. The misbehaving-model scenarios of test_models_gemini run unchanged on it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from fake_models import FakeOpenAI, openai_request_problems
from mcp_server.tools import NAMES as TOOLS
from test_models_gemini import (  # noqa: F401  (collected here again, on the LiteLLM fixtures below)
    Q3, local_only, run_on, test_a_model_past_the_search_budget_is_stopped_by_code,
    test_a_model_that_obeys_an_injected_instruction_changes_nothing_it_may_not,
    test_an_unknown_tool_is_refused_and_the_run_goes_on, test_malformed_replies_end_in_an_abstention_not_a_crash)

MODEL = "openai/qwen2.5:7b-instruct"
BASE = "http://127.0.0.1:{port}/v1"


@pytest.fixture
def model_run():
    return lambda question, script=None: run_on(FakeOpenAI, MODEL, BASE, question, script)


@pytest.fixture
def malformed_turn():
    """What small local models do: tool-call arguments that are not JSON."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_bad", "type": "function", "function": {"name": "search", "arguments": "{query: Falcon, k=2"}}]}


@pytest.mark.slow  # a stdio server and the agent per run: 2.5 s or more
def test_three_hops_through_litellm(model_run):
    report, fake = model_run(Q3)
    assert fake.problems == []
    assert report["model"] == MODEL and report["answer"] == "us-east-2" and not report["response_replaced"]
    assert [c["doc_id"] for c in report["citations"]] == ["d01", "d02", "d03"]
    offered = {w.role: sorted(w.tools) for w in fake.requests}
    assert offered == {"planner": sorted(TOOLS), "researcher": sorted([*TOOLS, "exit_loop"]), "grader": [],
                       "writer": []}
    assert {w.body["model"] for w in fake.requests} == {MODEL.split("/", 1)[1]}


def test_the_validator_rejects_broken_tool_threading():
    """Negative control: the fake's checks fire on chats an OpenAI-compatible server would refuse."""
    good = {"messages": [{"role": "system", "content": "be useful"}, {"role": "user", "content": "q"},
                         {"role": "assistant", "tool_calls": [
                             {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "{}"}],
            "tools": [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]}
    assert openai_request_problems(good) == []
    bad = json.loads(json.dumps(good))
    bad["messages"][0]["role"] = "user"
    bad["messages"][3]["tool_call_id"] = "c2"
    bad["messages"][2]["tool_calls"][0]["function"]["arguments"] = "{not json"
    bad["tools"][0]["function"]["parameters"] = {"type": "string"}
    problems = " | ".join(openai_request_problems(bad))
    for expected in ("system instruction must come first", "unknown call 'c2'", "are not JSON",
                     "must be a JSON Schema object", "got no tool result"):
        assert expected in problems, expected


@pytest.mark.slow  # a stdio server and the agent per run: 2.5 s or more
def test_hoprag_ask_names_the_model_and_fails_in_one_line_when_it_is_unreachable():
    """No server on the base URL: one line naming the model and endpoint, a non-zero exit, no traceback."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens here
    done = subprocess.run([str(Path(sys.executable).parent / "hoprag"), "ask", Q3, "--json", "--model", MODEL,
                           "--model-base-url", f"http://127.0.0.1:{port}/v1"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 1 and done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[0] == f"model: {MODEL} at http://127.0.0.1:{port}/v1"
    assert len(lines) == 2 and "Traceback" not in done.stderr
    assert lines[1].startswith(f"model {MODEL!r} at http://127.0.0.1:{port}/v1 failed in planner:")
    assert "unset HOPRAG_MODEL" in lines[1]
