"""The MCP server over real transports: stdio subprocess and stateless HTTP, both protocol eras."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import CORPUS, ServerProcess
from mcp_client import TOKENS, call, http_client, run, stdio_client
from hoprag.engine import Engine
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

AURORA = "What region does Aurora run in?"
ERAS = {"auto": "2026-07-28", "legacy": "2025-11-25"}


async def acceptance(client) -> dict:
    tools = await client.list_tools()
    search = await call(client, "search", query=AURORA, k=3)
    walk = await call(client, "graph_walk", start="Falcon", relation="region")
    return {"tools": {t.name: t.output_schema is not None for t in tools.tools},
            "search": search.structured_content["results"], "walk": walk.structured_content,
            "version": client.protocol_version}


def check_acceptance(seen: dict, era: str) -> None:
    assert seen["version"] == era
    assert seen["tools"] == {"search": True, "fetch": True, "graph_walk": True, "graph_hops": True, "graph_overview": True,
                            "grep": True}
    assert [r["id"] for r in seen["search"]] == ["d03", "d10", "d02"]
    d10 = seen["search"][1]
    assert d10["trusted"] is False and d10["facts"] == []
    assert seen["search"][0]["facts"] == [["Aurora", "region", "us-east-2"]]
    assert seen["walk"]["answer"] == "us-east-2"
    assert [s["doc_id"] for s in seen["walk"]["path"]] == ["d01", "d02", "d03"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_http_both_eras(http_server, mode):
    async def go():
        async with http_client(http_server.url, "engineering", mode) as client:
            return await acceptance(client)
    check_acceptance(run(go()), ERAS[mode])


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_both_eras(mode):
    async def go():
        async with stdio_client("engineering", mode=mode) as client:
            return await acceptance(client)
    check_acceptance(run(go()), ERAS[mode])


def test_tools_list_is_cacheable_in_the_2026_era(http_server):
    async def go():
        async with http_client(http_server.url, "engineering", "auto") as client:
            return await client.list_tools()
    tools = run(go())
    assert (tools.ttl_ms, tools.cache_scope) == (300_000, "public")


def test_engineering_never_sees_d09_through_any_tool(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            search = await call(c, "search", query="Falcon annual budget of twelve million dollars", k=3)
            fetch = await call(c, "fetch", id="d09")
            grep = await call(c, "grep", text="budget")
            walk = await call(c, "graph_walk", start="Falcon", relation="budget")
            overview = await call(c, "graph_overview")
            return search, fetch, grep, walk, overview
    search, fetch, grep, walk, overview = run(go())
    ids = [r["id"] for r in search.structured_content["results"]]
    assert len(ids) == 3 and "d09" not in ids
    # d09 would have taken the first slot for a caller allowed to read everything:
    both = Engine.load(CORPUS, ranker="overlap").search_docs("Falcon annual budget of twelve million dollars",
                                                             frozenset({"engineering", "finance"}), 3)
    assert both[0].id == "d09"
    assert fetch.is_error and "d09" in fetch.content[0].text
    assert grep.structured_content == {"matches": [], "withheld": []}
    assert walk.structured_content["answer"] is None and walk.structured_content["path"] == []
    assert walk.structured_content["status"] == "unknown_relation"
    assert "budget" not in walk.structured_content["known_relations"] and walk.structured_content["known_relations"]
    assert "budget" not in {r["name"] for r in overview.structured_content["relations"]}
    assert "twelve" not in str(overview.structured_content)


def test_unknown_and_forbidden_ids_are_indistinguishable(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            return await call(c, "fetch", id="d09"), await call(c, "fetch", id="d99")
    forbidden, unknown = run(go())
    assert forbidden.is_error and unknown.is_error
    assert forbidden.content[0].text.replace("d09", "ID") == unknown.content[0].text.replace("d99", "ID")


def test_finance_gets_the_budget_fact(http_server):
    async def go():
        async with http_client(http_server.url, "finance") as c:
            return (await call(c, "graph_walk", start="Falcon", relation="budget"),
                    await call(c, "search", query="Falcon budget", k=5))
    walk, search = run(go())
    assert walk.structured_content["answer"] == "twelve million dollars"
    assert walk.structured_content["path"] == [
        {"subject": "Falcon", "relation": "budget", "object": "twelve million dollars", "doc_id": "d09", "trusted": True}]
    assert [r["id"] for r in search.structured_content["results"]] == ["d09"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token-123"}, {"Authorization": "Basic eDp5"}])
def test_missing_or_wrong_token_is_401(http_server, headers):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    base = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    response = httpx.post(http_server.url, json=body, headers={**base, **headers})
    assert response.status_code == 401
    ok = httpx.post(http_server.url, json=body, headers={**base, "Authorization": "Bearer demo-engineering-token"})
    assert ok.status_code == 200 and "search" in ok.text


def test_health_route(http_server):
    """Health answers from the first moment; ``warm`` turns true once every principal's structures are built."""
    deadline = time.monotonic() + 60
    while not (response := httpx.get(f"{http_server.base}/health")).json()["warm"]:
        assert time.monotonic() < deadline, "the server never finished its warm-up"
        time.sleep(0.05)
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "documents": 10, "generation": 0, "warm": True}


RANGE_K = "expected an integer from 1 to 50, or null for the default"


@pytest.mark.parametrize(
    "tool, args, message",
    [
        ("search", {"query": "x", "k": 500}, f"k: too large; {RANGE_K}"),
        ("search", {"query": "x", "k": 0}, f"k: too small; {RANGE_K}"),
        ("search", {"query": "x", "k": "many"}, f"k: wrong type; {RANGE_K}"),
        ("search", {"query": "x", "k": "3"}, f"k: wrong type; {RANGE_K}"),  # strict: no coercion
        ("search", {"query": "x", "k": 2.0}, f"k: wrong type; {RANGE_K}"),
        ("search", {"query": ""}, "query: too short; expected a string of 1 to 1000 characters"),
        ("search", {"query": "x" * 10_000}, "query: too long; expected a string of 1 to 1000 characters"),
        ("search", {}, "query: missing; expected a string of 1 to 1000 characters"),
        ("search", {"query": "x", "bogus": 1}, "unknown argument 'bogus' (the arguments are: query, k)"),
        ("graph_walk", {"start": "Falcon", "relation": "region", "max_hops": 99},
         "max_hops: too large; expected an integer from 1 to 8, or null for the default"),
        ("grep", {"text": "a", "k": 10_000}, "k: too large; expected an integer from 1 to 200, or null for the default"),
        ("fetch", {"id": ["d01"]}, "id: wrong type; expected a string of 1 to 200 characters"),
        ("fetch", {"id": "d01", "document": "yes"}, "document: wrong type; expected true or false, or null for the default"),
        ("fetch", {"id": "d01", "document": "true"}, "document: wrong type; expected true or false, or null for the default"),
        ("graph_overview", {"x": 1}, "unknown argument 'x' (the arguments are: none)"),
    ],
)
def test_bad_arguments_are_concise_tool_errors_and_the_server_stays_up(http_server, tool, args, message):
    """The argument, the problem and what it accepts -- not the value sent, nor pydantic's text and links."""
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            bad = await c.call_tool(tool, args)
            good = await call(c, "search", query="Falcon", k=1)
            return bad, good
    bad, good = run(go())
    text = bad.content[0].text
    assert bad.is_error and text == f"invalid arguments for {tool}: {message}"
    assert "pydantic" not in text and "http" not in text and "xxxxxxxxxx" not in text and "many" not in text
    assert not good.is_error and good.structured_content["results"][0]["id"] == "d01"
    assert http_server.alive()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(http_server, mode):
    async def go():
        async with http_client(http_server.url, "engineering", mode) as c:
            with pytest.raises(MCPError) as raised:
                await c.call_tool("no_such_tool", {})
            return raised.value, await call(c, "search", query="Falcon", k=1)
    error, good = run(go())
    assert error.error.code == INVALID_PARAMS
    assert error.error.message == ("Unknown tool 'no_such_tool': the tools are search, fetch, graph_walk, "
                                   "graph_overview, graph_hops, grep")
    assert not good.is_error


def test_null_optional_arguments_take_their_defaults(http_server):
    """Optional arguments are nullable (OpenAI strict mode sends every argument): null means the default."""
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            return (await c.call_tool("search", {"query": AURORA, "k": None}), await call(c, "search", query=AURORA),
                    await c.call_tool("graph_walk", {"start": "Falcon", "relation": "region", "max_hops": None}),
                    await c.call_tool("fetch", {"id": "d01", "document": None}))
    nulled, omitted, walk, fetch = run(go())
    assert nulled.structured_content == omitted.structured_content and len(omitted.structured_content["results"]) == 5
    assert walk.structured_content["answer"] == "us-east-2" and fetch.structured_content["id"] == "d01"


@pytest.mark.parametrize("start, matches", [("Project Falcon", ["Falcon"]), ("falcon", ["Falcon"]),
                                            ("FALCON", ["Falcon"]), ("Atlass", ["Atlas"])])
def test_graph_walk_says_an_unknown_start_and_names_close_matches(http_server, start, matches):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            return await call(c, "graph_walk", start=start, relation="region")
    walk = run(go()).structured_content
    assert walk["status"] == "unknown_start" and walk["answer"] is None and walk["path"] == []
    assert walk["close_matches"][:len(matches)] == matches and walk["known_relations"] == []


def test_graph_walk_says_an_unknown_relation_and_lists_the_callers_relations(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            return (await call(c, "graph_walk", start="Falcon", relation="Region"),
                    await call(c, "graph_overview"))
    walk, overview = (r.structured_content for r in run(go()))
    assert walk["status"] == "unknown_relation" and walk["close_matches"] == []
    assert set(walk["known_relations"]) == {r["name"] for r in overview["relations"]} and "region" in walk["known_relations"]


def test_close_matches_come_from_the_callers_graph_only(http_server):
    """Finance's graph holds the budget fact's entities; engineering's close matches never name one of them."""
    async def go():
        async with http_client(http_server.url, "engineering") as eng, http_client(http_server.url, "finance") as fin:
            return (await call(eng, "graph_walk", start="twelve million", relation="budget"),
                    await call(fin, "graph_walk", start="twelve million", relation="budget"))
    engineering, finance = (r.structured_content for r in run(go()))
    assert "twelve million dollars" in finance["close_matches"]
    assert engineering["status"] == "unknown_start" and "twelve million dollars" not in str(engineering)
    assert "budget" not in engineering["known_relations"]


def test_graph_hops_says_when_nothing_matches(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            return await call(c, "graph_hops", query="zzqx wvvy"), await call(c, "graph_hops", query="Falcon")
    nothing, found = (r.structured_content for r in run(go()))
    assert nothing == {"status": "no_match", "seed": None, "passages": []}
    assert found["status"] == "found" and found["passages"]


def test_grep_withholds_untrusted_lines_and_names_their_documents(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            return await call(c, "grep", text="Ignore"), await call(c, "grep", text="region")
    ignore, region = (r.structured_content for r in run(go()))
    assert ignore == {"matches": [], "withheld": ["d10"]}
    assert region["withheld"] == ["d10"] and region["matches"]
    assert all(m["trusted"] is True and "attacker" not in m["line"] for m in region["matches"])


def test_only_tools_are_advertised(http_server):
    """No empty prompt or resource lists: the capabilities say tools, and prompts/list is not a method."""
    async def go():
        async with http_client(http_server.url, "engineering", "legacy") as c:
            caps = c.server_capabilities
            with pytest.raises(MCPError) as raised:
                await c.list_prompts()
            return caps, raised.value
    caps, error = run(go())
    assert caps.tools is not None and caps.prompts is None and caps.resources is None
    assert error.error.code == METHOD_NOT_FOUND


def test_no_tool_accepts_identity_or_filters_from_arguments(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            tools = await c.list_tools()
            sneaky = await c.call_tool("search", {"query": "Falcon budget", "k": 5, "groups": ["finance"],
                                                  "principal": "finance"})
            return tools, sneaky
    tools, sneaky = run(go())
    for tool in tools.tools:
        names = set(tool.input_schema.get("properties", {}))
        assert not names & {"groups", "group", "principal", "user", "filter", "filters", "acl"}, tool.name
        assert tool.input_schema["additionalProperties"] is False, tool.name
    assert sneaky.is_error and "unknown argument 'groups'" in sneaky.content[0].text
    assert "unknown argument 'principal'" in sneaky.content[0].text and "d09" not in sneaky.content[0].text


@pytest.mark.slow  # stdio / HTTP server processes: 3 s each
@pytest.mark.parametrize("args, message", [
    (["--as", "nobody"], "unknown user 'nobody'"),
    (["--access", "{tmp}/access.yaml"], "unknown user 'user'"),  # no --as and no 'users:' entry for the default
])
def test_stdio_needs_a_known_principal(tmp_path, args, message):
    (tmp_path / "access.yaml").write_text("principals:\n  engineering: {groups: [engineering]}\n", encoding="utf-8")
    args = [a.format(tmp=tmp_path) for a in args]
    done = subprocess.run([sys.executable, "-m", "mcp_server", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and message in done.stderr and "--as" in done.stderr


@pytest.mark.slow  # stdio / HTTP server processes: 3 s each
def test_as_is_refused_over_http():
    with pytest.raises(RuntimeError, match="--as is for stdio"):
        ServerProcess("--as", "finance")


def test_the_warm_up_steps_aside_while_a_request_is_in_flight():
    """Counted per MCP request (not health checks, not lifespan events); quiet again once it is answered."""
    import asyncio

    from mcp_server.run import Busy

    busy, seen = Busy(), []

    async def app(scope, receive, send) -> None:
        seen.append(busy.quiet(0))

    async def failing(scope, receive, send) -> None:
        raise RuntimeError("handler failed")

    asyncio.run(busy.around(app)({"type": "http", "path": "/mcp"}, None, None))
    asyncio.run(busy.around(app)({"type": "http", "path": "/health"}, None, None))
    asyncio.run(busy.around(app)({"type": "lifespan"}, None, None))
    with pytest.raises(RuntimeError):
        asyncio.run(busy.around(failing)({"type": "http", "path": "/mcp"}, None, None))
    assert seen == [False, True, True] and busy.quiet(0)


async def _refused(url: str, token: str | None, **request: Any) -> str:
    """What the official Python SDK client raises for a request the transport refuses: the message users see."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, **request) as http:
        try:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                await client.call_tool("search", {"query": "x" * (300 * 1024)})
        except BaseException as exc:  # noqa: BLE001 - the SDK wraps its MCPError in an ExceptionGroup
            while isinstance(exc, BaseExceptionGroup):
                exc = exc.exceptions[0]
            return str(exc)
    raise AssertionError("the request was not refused")


@pytest.mark.parametrize("token, words", [
    (None, "a bearer token is required: send 'Authorization: Bearer <token>'"),
    ("wrong-token-123", "the bearer token is not accepted: send 'Authorization: Bearer <token>'"),
    (TOKENS["engineering"], "request body too large: this server accepts at most 256 KiB per request"),
])
def test_the_sdk_client_shows_why_a_request_was_refused(http_server, token, words):
    """401 and 413 carry a JSON-RPC error: the SDK client shows its message, not "Server returned an error
    response" (the 413 needs a valid token: authentication comes first)."""
    shown = run(_refused(http_server.url, token))
    assert words in shown and "Server returned an error response" not in shown
    assert http_server.alive()


@pytest.mark.parametrize("headers, status, words", [
    ({"Origin": "https://evil.example"}, 403, "the request's Origin header names a site this server does not accept"),
    ({"Host": "evil.example"}, 421, "the Host header names a host this server does not answer for"),
    ({}, 413, "request body too large"),
])
def test_transport_refusals_are_json_rpc_errors(http_server, headers, status, words):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "x" * (300 * 1024 if status == 413 else 1)}}}
    base = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25",
            "Authorization": f"Bearer {TOKENS['engineering']}"}
    response = httpx.post(http_server.url, json=body, headers={**base, **headers})
    assert response.status_code == status
    error = response.json()
    assert error["jsonrpc"] == "2.0" and error["id"] is None and error["error"]["code"] == INVALID_REQUEST
    assert words in error["error"]["message"]
