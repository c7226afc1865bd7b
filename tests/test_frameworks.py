"""Other agent frameworks' own MCP clients drive every tool, and every bad input, without an LLM.

OpenAI Agents SDK (``MCPServerStreamableHttp``/``MCPServerStdio`` through ``MCPUtil``'s function
tools), LangChain (``langchain-mcp-adapters``' ``MultiServerMCPClient``) and pydantic-ai
(``MCPToolset``) each run ``tests/frameworks/driver.py`` in their own venv, which
``bash tests/frameworks/setup.sh`` builds from the exact pins beside it (the README's test
command runs it): their pins conflict with google-adk's. The three drivers run at once, over HTTP
with a bearer token and over stdio; each reports what the framework hands its model or user and
whether the server still served afterwards. The judging is here, one helper per concept, so a
contract change is lined up in one place.

The contract they check is issue 23's (``docs/tools.md``, "The contract every framework gets"): trust marks on every
text item, closed strict schemas, concise errors, and transport refusals each client can show.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from conftest import ROOT

FRAMEWORKS_DIR = ROOT / "tests" / "frameworks"
FRAMEWORKS = ("openai", "langchain", "pydantic")
TOOLS = {"search", "fetch", "graph_walk", "graph_hops", "graph_overview", "grep"}
TOKEN = "demo-engineering-token"
PROBE = {"tool": "search", "args": {"query": "Aurora", "k": 1}}
OVER_BODY_LIMIT = "a " * 150_000  # 300 kB of JSON: over the server's 256 KiB request limit

# Valid calls (one per tool) and the bad inputs of issue 23 item 7. Corpus facts live here, in the test.
VALID = [
    {"case": "search", "tool": "search", "args": {"query": "Aurora region"}},
    {"case": "fetch", "tool": "fetch", "args": {"id": "d03"}},
    {"case": "graph_walk", "tool": "graph_walk", "args": {"start": "Falcon", "relation": "region"}},
    {"case": "graph_hops", "tool": "graph_hops", "args": {"query": "Falcon telemetry region"}},
    {"case": "graph_overview", "tool": "graph_overview", "args": {}},
    {"case": "grep", "tool": "grep", "args": {"text": "region"}},  # trusted lines, and the upload's "region attacker-zone"
    {"case": "grep_untrusted", "tool": "grep", "args": {"text": "Ignore"}},  # only the untrusted upload's line
]
BAD = [
    {"case": "wrong_type_k", "tool": "search", "args": {"query": "Aurora", "k": "three"}, "field": "k"},
    {"case": "wrong_type_query", "tool": "search", "args": {"query": 5}, "field": "query"},
    {"case": "string_for_int", "tool": "search", "args": {"query": "Aurora", "k": "3"}, "field": "k"},
    {"case": "string_for_bool", "tool": "fetch", "args": {"id": "d03", "document": "yes"}, "field": "document"},
    {"case": "unknown_argument", "tool": "search", "args": {"query": "Aurora", "bogus": 1}, "field": "bogus"},
    {"case": "missing_argument", "tool": "search", "args": {}, "field": "query"},
    {"case": "long_query", "tool": "search", "args": {"query": "a" * 10_000}, "field": "query"},
    {"case": "unknown_tool", "tool": "no_such_tool", "args": {}, "field": "no_such_tool"},
]
OVER_LIMIT = {"case": "body_over_limit", "tool": "search", "args": {"query": OVER_BODY_LIMIT}}
AUTH = [{"case": "missing_token", "headers": {}},
        {"case": "wrong_token", "headers": {"Authorization": "Bearer not-a-real-token"}}]



def python_of(framework: str):
    return FRAMEWORKS_DIR / f".venv-{framework}" / "bin" / "python"


@pytest.fixture(scope="session")
def reports(http_server, tmp_path_factory) -> dict[str, dict[str, Any]]:
    """Run the three drivers at once against the session's HTTP server and a stdio server each."""
    missing = [f for f in FRAMEWORKS if not python_of(f).exists()]
    if missing:
        message = f"framework venvs missing ({', '.join(missing)}): run `bash tests/frameworks/setup.sh`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    env = {k: os.environ[k] for k in ("PATH", "HOME", "PYTHONPATH", "GOOGLE_API_USE_CLIENT_CERTIFICATE") if k in os.environ}
    env.setdefault("PYTHONPATH", str(ROOT))
    stdio = {"command": sys.executable, "args": ["-m", "mcp_server", "--as", "engineering"], "env": env,
             "cwd": str(ROOT)}
    calls = [*VALID, *({k: c[k] for k in ("case", "tool", "args")} for c in BAD), {**OVER_LIMIT, "http_only": True}]
    workdir = tmp_path_factory.mktemp("frameworks")
    running = {}
    for framework in FRAMEWORKS:
        config = workdir / f"{framework}.json"
        config.write_text(json.dumps({"framework": framework, "url": http_server.url, "token": TOKEN,
                                      "stdio": stdio, "calls": calls, "probe": PROBE, "auth": AUTH}))
        running[framework] = subprocess.Popen([str(python_of(framework)), str(FRAMEWORKS_DIR / "driver.py"), str(config)],
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = {}
    for framework, proc in running.items():
        stdout, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, f"{framework} driver failed:\n{stderr[-3000:]}"
        out[framework] = json.loads(stdout)
    assert http_server.alive(), "the HTTP server died under the frameworks' calls"
    return out


def connected(reports: dict, framework: str, transport: str) -> dict[str, Any]:
    report = reports[framework][transport]
    assert "error" not in report, f"{framework} over {transport}: {report.get('error')}\n{report.get('traceback')}"
    return report


# --- one helper per concept --------------------------------------------------------------------

def shown(framework: str, outcome: dict) -> str:
    """What the framework hands its model or user as text: LangChain's ``ToolMessage`` holds a list
    of content blocks, the others the text itself (or the exception's message)."""
    text = outcome["text"]
    if framework == "langchain" and not outcome["raised"]:
        return "\n".join(block["text"] for block in json.loads(text) if block.get("type") == "text")
    return text


def payload(framework: str, outcome: dict) -> Any:
    """A successful call's result as JSON."""
    return json.loads(shown(framework, outcome))


TRUST_FIELD = "trusted"
TEXT_ITEMS = {  # where each tool's result carries document text, item by item
    "search": lambda r: r["results"],
    "fetch": lambda r: [r],
    "graph_walk": lambda r: r["path"],
    "graph_hops": lambda r: r["passages"],
    "grep": lambda r: r["matches"],
}


def unmarked(tool: str, result: Any) -> list[Any]:
    """Text items without a typed trust mark."""
    return [item for item in TEXT_ITEMS[tool](result) if not isinstance(item.get(TRUST_FIELD), bool)]


def refused(outcome: dict) -> bool:
    """The call did not run: an exception, an error the framework flagged, or text that is no tool
    result (openai-agents hands an ``isError`` result to its model as plain text, unflagged)."""
    if outcome["raised"] or not outcome["ok"]:
        return True
    try:
        return not isinstance(json.loads(outcome["text"]), dict)
    except ValueError:
        return True


def names_the_problem(case: dict, text: str) -> bool:
    """A bad input's message names the argument (or tool) at fault."""
    return re.search(rf"\b{re.escape(case['field'])}\b", text) is not None


def concise(text: str) -> bool:
    """No echo of the caller's input and no library documentation links."""
    return "input_value" not in text and "errors.pydantic.dev" not in text and len(text) < 600


def says_body_too_large(text: str) -> bool:
    return re.search(r"too large|exceeds|limit", text, re.I) is not None


def explains_the_token(framework: str, mcp_version: str, text: str) -> bool:
    """The 401 explanation reaches the user. The mcp 1.x client (LangChain's pin) raises on any HTTP
    error status without reading the body, so there the status line is the most a server can get
    across; with mcp 2 the JSON-RPC error body's message is shown."""
    if int(mcp_version.split(".")[0]) < 2:
        return "401 Unauthorized" in text
    return "bearer token" in text


def strict_optional_stays_optional(tool: dict) -> bool:
    """After OpenAI strict conversion every property is required, so an argument the tool declares
    optional must accept null there, or the model can no longer leave it out."""
    optional = set(tool["input_schema"].get("properties", {})) - set(tool["input_schema"].get("required", []))

    def nullable(schema: dict) -> bool:
        types = schema.get("type")
        return types == "null" or (isinstance(types, list) and "null" in types) or \
            any(nullable(branch) for branch in schema.get("anyOf", []))

    return all(nullable(tool["schema"]["properties"][name]) for name in optional)


# --- every tool, every framework, both transports ----------------------------------------------

TRANSPORTS = ("http", "stdio")


@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_lists_and_calls_every_tool(reports, framework, transport):
    report = connected(reports, framework, transport)
    assert {t["name"] for t in report["tools"]} == TOOLS
    results = {case["case"]: report["calls"][case["case"]] for case in VALID}
    assert all(outcome["ok"] and outcome["alive"] for outcome in results.values()), results
    got = {name: payload(framework, outcome) for name, outcome in results.items()}
    assert got["search"]["results"][0]["id"] == "d03"
    assert got["fetch"]["id"] == "d03" and got["fetch"]["trusted"] is True
    assert got["graph_walk"]["answer"] == "us-east-2" and got["graph_walk"]["status"] == "agreed"
    assert got["graph_hops"]["passages"]
    assert "region" in {r["name"] for r in got["graph_overview"]["relations"]}
    assert got["grep"]["matches"] and "d10" not in {m["id"] for m in got["grep"]["matches"]}
    assert got["grep_untrusted"]["matches"] == [] and got["grep_untrusted"]["withheld"] == ["d10"]


@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("tool", sorted(TEXT_ITEMS))
def test_every_text_item_carries_a_trust_mark(reports, tool):
    for framework in FRAMEWORKS:
        for transport in TRANSPORTS:
            result = payload(framework, connected(reports, framework, transport)["calls"][tool])
            assert TEXT_ITEMS[tool](result), f"{tool} returned no items to check"
            assert unmarked(tool, result) == [], f"{framework}/{transport}: {tool} items without a trust mark"


# --- bad input: a clear message through each framework, and the server keeps serving ----------

def bad_outcomes(reports: dict, case: dict):
    """Each framework and transport's outcome of one bad input, with the text it shows."""
    for framework in FRAMEWORKS:
        for transport in TRANSPORTS:
            outcome = connected(reports, framework, transport)["calls"][case["case"]]
            yield framework, transport, {**outcome, "text": shown(framework, outcome)}


@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("case", [c for c in BAD if c["case"] in
                                  ("wrong_type_k", "wrong_type_query", "missing_argument", "long_query", "unknown_tool")],
                         ids=lambda c: c["case"])
def test_bad_input_names_the_problem_and_the_server_keeps_serving(reports, case):
    for framework, transport, outcome in bad_outcomes(reports, case):
        where = f"{framework}/{transport}: {outcome['text'][:300]}"
        assert outcome["alive"], f"server stopped serving after {case['case']} ({where})"
        assert refused(outcome) and names_the_problem(case, outcome["text"]), where
    if case["case"] == "long_query":
        assert all("1000" in o["text"] for _, _, o in bad_outcomes(reports, case)), "the allowed length is named"


@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("case", [c for c in BAD if c["case"] in ("string_for_int", "string_for_bool", "unknown_argument")],
                         ids=lambda c: c["case"])
def test_strict_types_and_closed_schemas_refuse_loose_input(reports, case):
    for framework, transport, outcome in bad_outcomes(reports, case):
        where = f"{framework}/{transport}: {outcome['text'][:300]}"
        assert outcome["alive"], where
        assert refused(outcome) and names_the_problem(case, outcome["text"]), where


@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("case", [c for c in BAD if c["case"] in ("wrong_type_k", "wrong_type_query", "long_query")],
                         ids=lambda c: c["case"])
def test_validation_errors_are_concise_in_every_framework(reports, case):
    for framework, transport, outcome in bad_outcomes(reports, case):
        assert concise(outcome["text"]), f"{framework}/{transport}: {outcome['text'][:600]}"


@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_body_over_the_limit_says_so_and_the_server_keeps_serving(reports, framework):
    outcome = connected(reports, framework, "http")["calls"]["body_over_limit"]
    assert outcome["alive"] and not outcome["ok"]
    assert says_body_too_large(shown(framework, outcome)), outcome["text"][:300]


@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("case", AUTH, ids=lambda c: c["case"])
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_missing_or_wrong_token_is_explained_and_the_server_keeps_serving(reports, framework, case):
    report = reports[framework]
    outcome = report["auth"][case["case"]]
    assert not outcome["ok"] and outcome["alive"], outcome
    assert explains_the_token(framework, report["mcp"], outcome["text"]), outcome["text"][:300]


# --- OpenAI strict mode: every tool converts, none falls back ----------------------------------

@pytest.mark.slow  # three framework venvs as MCP clients
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_openai_strict_conversion_keeps_every_tool_strict(reports, transport):
    tools = connected(reports, "openai", transport)["tools"]
    fallbacks = sorted(t["name"] for t in tools if not t["strict"])
    assert len(tools) == len(TOOLS) and fallbacks == []
    assert all(t["schema"].get("additionalProperties") is False for t in tools)


@pytest.mark.slow  # three framework venvs as MCP clients
def test_openai_strict_conversion_keeps_optional_arguments_optional(reports):
    tools = connected(reports, "openai", "http")["tools"]
    assert [t["name"] for t in tools if not strict_optional_stays_optional(t)] == []


# --- the judges themselves, on outcomes written by hand (no framework: the fast tier) -----------

def test_the_judges_tell_a_clear_refusal_from_a_silent_or_noisy_one():
    wrong_k = next(c for c in BAD if c["case"] == "wrong_type_k")
    assert names_the_problem(wrong_k, "k: Input should be a valid integer")
    assert not names_the_problem(wrong_k, "Input should be a valid integer")  # "k" only inside other words
    assert concise("k: Input should be a valid integer")
    assert not concise("k: Input should be a valid integer [input_value='three']")
    assert not concise("k: see https://errors.pydantic.dev/2.11/v/int_parsing")
    assert refused({"raised": True, "ok": False, "text": "McpError: k"})
    assert refused({"raised": False, "ok": True, "text": "An error occurred while running the tool: k"})  # unflagged
    assert not refused({"raised": False, "ok": True, "text": '{"results": []}'})
    blocks = json.dumps([{"type": "text", "text": '{"results": []}'}, {"type": "image", "data": ""}])
    assert shown("langchain", {"raised": False, "text": blocks}) == '{"results": []}'
    assert says_body_too_large("Request body too large") and not says_body_too_large("Bad Request")


def test_the_judges_of_trust_marks_tokens_and_strict_schemas():
    results = {"results": [{"text": "a", "trusted": True}, {"text": "b"}, {"text": "c", "trusted": "yes"}]}
    assert unmarked("search", results) == [{"text": "b"}, {"text": "c", "trusted": "yes"}]
    assert explains_the_token("langchain", "1.30.0", "Client error '401 Unauthorized' for url")
    assert explains_the_token("openai", "2.3.0", "Unauthorized: a bearer token is required")
    assert not explains_the_token("openai", "2.3.0", "Client error '401 Unauthorized' for url")
    declared = {"properties": {"query": {"type": "string"}, "k": {"type": "integer"}}, "required": ["query"]}
    nullable = {"properties": {"query": {"type": "string"}, "k": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}
    required = {"properties": {"query": {"type": "string"}, "k": {"type": "integer"}}}
    assert strict_optional_stays_optional({"input_schema": declared, "schema": nullable})
    assert not strict_optional_stays_optional({"input_schema": declared, "schema": required})
