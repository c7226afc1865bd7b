"""The MCP server over real transports: stdio subprocess and stateless HTTP, both protocol eras."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from conftest import CORPUS, ServerProcess
from mcp_client import call, http_client, run, stdio_client
from hoprag.engine import Engine

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
    assert grep.structured_content == {"matches": []}
    assert walk.structured_content["answer"] is None and walk.structured_content["path"] == []
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
        {"subject": "Falcon", "relation": "budget", "object": "twelve million dollars", "doc_id": "d09"}]
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


@pytest.mark.parametrize(
    "tool, args, fragment",
    [
        ("search", {"query": "x", "k": 500}, "less than or equal to 50"),
        ("search", {"query": "x", "k": 0}, "greater than or equal to 1"),
        ("search", {"query": "x", "k": "many"}, "valid integer"),
        ("search", {"query": ""}, "at least 1 character"),
        ("search", {"query": "x" * 1001}, "at most 1000 characters"),
        ("search", {}, "Field required"),
        ("graph_walk", {"start": "Falcon", "relation": "region", "max_hops": 99}, "less than or equal to 8"),
        ("grep", {"text": "a", "k": 10_000}, "less than or equal to 200"),
        ("fetch", {"id": ["d01"]}, "valid string"),
        ("no_such_tool", {}, "Unknown tool"),
    ],
)
def test_bad_arguments_are_error_results_and_the_server_stays_up(http_server, tool, args, fragment):
    async def go():
        async with http_client(http_server.url, "engineering") as c:
            bad = await c.call_tool(tool, args)
            good = await call(c, "search", query="Falcon", k=1)
            return bad, good
    bad, good = run(go())
    assert bad.is_error and fragment in bad.content[0].text
    assert not good.is_error and good.structured_content["results"][0]["id"] == "d01"
    assert http_server.alive()


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
    assert "d09" not in [r["id"] for r in sneaky.structured_content["results"]]


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


def test_as_is_refused_over_http():
    with pytest.raises(RuntimeError, match="--as is for stdio"):
        ServerProcess("--as", "finance")


def test_the_warm_up_steps_aside_while_a_request_is_in_flight():
    """Counted per MCP request (not health checks, not lifespan events); quiet again once it is answered."""
    import asyncio

    from mcp_server.serve import Busy

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
