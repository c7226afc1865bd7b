"""Drive hoprag's MCP server through another agent framework's own MCP client, without an LLM.

Runs inside that framework's own venv (``tests/frameworks/setup.sh`` builds them: their pins
conflict with google-adk's), so it imports nothing from hoprag. ``python driver.py CONFIG.json``
with CONFIG naming the framework, the HTTP URL and token, the stdio command, and the calls to
make; it prints one JSON object that ``tests/test_frameworks.py`` judges. Every outcome is
recorded as what the framework hands its model or user (``text``) and whether the framework took
it as a success (``ok``); after every call a probe call on the same connection records whether
the server still serves (``alive``). Nothing is judged here, so a wrong outcome cannot hide.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import traceback
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any, Protocol

Outcome = dict[str, Any]


class Connection(Protocol):
    """One connected framework client: list the tools, call one and say what the model would see."""

    async def tools(self) -> list[dict[str, Any]]: ...

    async def call(self, tool: str, args: dict[str, Any]) -> Outcome: ...


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def failure(exc: BaseException) -> Outcome:
    """An exception is what the user sees: its type and message. Out of an exception group, the
    errors that caused it, not the cancellations they set off in sibling tasks."""
    causes = [e for e in leaves(exc) if not isinstance(e, asyncio.CancelledError)] or [exc]
    return {"ok": False, "raised": True, "text": "; ".join(f"{type(e).__name__}: {e}" for e in causes)}


# --- OpenAI Agents SDK -------------------------------------------------------------------------

class OpenAIConnection:
    """``MCPServerStreamableHttp`` / ``MCPServerStdio``; each call goes through the ``FunctionTool``
    that ``MCPUtil`` builds, which is what an Agent runs for its model; ``tools`` also reports
    whether ``MCPUtil``'s strict conversion kept each schema strict (it falls back silently)."""

    def __init__(self, server: Any):
        from agents import Agent

        self.server = server
        self.agent = Agent(name="driver")
        self.listed: dict[str, Any] = {}

    async def tools(self) -> list[dict[str, Any]]:
        from agents.mcp import MCPUtil

        listed = await self.server.list_tools()
        self.listed = {t.name: t for t in listed}
        out = []
        for tool in listed:
            converted = MCPUtil.to_function_tool(tool, self.server, True, agent=self.agent)
            out.append({"name": tool.name, "strict": converted.strict_json_schema,
                        "schema": converted.params_json_schema, "input_schema": tool.input_schema})
        return out

    async def call(self, tool: str, args: dict[str, Any]) -> Outcome:
        from agents.mcp import MCPUtil
        from agents.tool_context import ToolContext
        from mcp.types import Tool

        # An unknown name is a stale tool list: a tool built from a listing the server no longer has.
        spec = self.listed.get(tool) or Tool(name=tool, input_schema={"type": "object", "properties": {}})
        # failure_error_function=None: a failed call raises to the developer instead of the SDK's
        # default sentence, which hides every error's text ("An error occurred ... try again.").
        function_tool = MCPUtil.to_function_tool(spec, self.server, False, agent=self.agent,
                                                 failure_error_function=None)
        raw = json.dumps(args)
        context = ToolContext(context=None, tool_name=tool, tool_call_id="call-1", tool_arguments=raw)
        try:
            output = await function_tool.on_invoke_tool(context, raw)
        except BaseException as exc:  # noqa: BLE001 - recorded, judged by the test
            return failure(exc)
        # An isError result reaches the model as plain output (its text says what went wrong).
        return {"ok": True, "raised": False, "text": output["text"] if isinstance(output, dict) else str(output)}


async def openai_connect(stack: AsyncExitStack, target: dict[str, Any]) -> Connection:
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    if "url" in target:
        server = MCPServerStreamableHttp(
            params={"url": target["url"], "headers": target.get("headers", {}), "timeout": 20},
            name="hoprag", cache_tools_list=False, client_session_timeout_seconds=20)
    else:
        server = MCPServerStdio(params={k: target[k] for k in ("command", "args", "env", "cwd")},
                                name="hoprag", cache_tools_list=False, client_session_timeout_seconds=20)
    await stack.enter_async_context(server)
    return OpenAIConnection(server)


# --- LangChain (langchain-mcp-adapters) --------------------------------------------------------

class LangChainConnection:
    """``MultiServerMCPClient``; each call is a tool call as a LangChain agent's ToolNode makes it,
    answered with a ``ToolMessage`` (``status="error"`` for a failed call)."""

    def __init__(self, session: Any):
        self.session = session
        self.by_name: dict[str, Any] = {}

    async def tools(self) -> list[dict[str, Any]]:
        from langchain_mcp_adapters.tools import load_mcp_tools

        listed = await load_mcp_tools(self.session)
        self.by_name = {t.name: t for t in listed}
        return [{"name": t.name, "schema": t.args_schema} for t in listed]

    async def call(self, tool: str, args: dict[str, Any]) -> Outcome:
        from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
        from mcp.types import Tool

        lc_tool = self.by_name.get(tool)
        if lc_tool is None:  # a stale tool list, as above
            lc_tool = convert_mcp_tool_to_langchain_tool(
                self.session, Tool(name=tool, inputSchema={"type": "object", "properties": {}}))
        try:
            message = await lc_tool.ainvoke({"type": "tool_call", "name": tool, "args": args, "id": "call-1"})
        except BaseException as exc:  # noqa: BLE001
            return failure(exc)
        content = message.content
        text = content if isinstance(content, str) else json.dumps(content)
        return {"ok": message.status != "error", "raised": False, "text": text}


async def langchain_connect(stack: AsyncExitStack, target: dict[str, Any]) -> Connection:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    if "url" in target:
        spec = {"transport": "streamable_http", "url": target["url"], "headers": target.get("headers", {})}
    else:
        spec = {"transport": "stdio", **{k: target[k] for k in ("command", "args", "env", "cwd")}}
    client = MultiServerMCPClient({"hoprag": spec})
    # One session for every call (tools bound to it): a stdio server is one process throughout.
    return LangChainConnection(await stack.enter_async_context(client.session("hoprag")))


# --- pydantic-ai ---------------------------------------------------------------------------------

class PydanticAIConnection:
    """``MCPToolset``; a failed call raises ``ModelRetry``, whose message is what the model is sent."""

    def __init__(self, toolset: Any):
        self.toolset = toolset

    async def tools(self) -> list[dict[str, Any]]:
        listed = await self.toolset.list_tools()
        return [{"name": t.name, "schema": t.input_schema} for t in listed]

    async def call(self, tool: str, args: dict[str, Any]) -> Outcome:
        from pydantic_ai.exceptions import ModelRetry

        try:
            result = await self.toolset.direct_call_tool(tool, args)
        except ModelRetry as exc:
            return {"ok": False, "raised": False, "text": exc.message}
        except BaseException as exc:  # noqa: BLE001
            return failure(exc)
        return {"ok": True, "raised": False, "text": result if isinstance(result, str) else json.dumps(result)}


async def pydantic_connect(stack: AsyncExitStack, target: dict[str, Any]) -> Connection:
    from pydantic_ai.mcp import MCPToolset

    if "url" in target:
        toolset = MCPToolset(target["url"], headers=target.get("headers", {}))
    else:
        from fastmcp.client.transports import StdioTransport

        toolset = MCPToolset(StdioTransport(**{k: target[k] for k in ("command", "args", "env", "cwd")},
                                            keep_alive=True))
    await stack.enter_async_context(toolset)
    return PydanticAIConnection(toolset)


FRAMEWORKS = {
    "openai": (openai_connect, "openai-agents"),
    "langchain": (langchain_connect, "langchain-mcp-adapters"),
    "pydantic": (pydantic_connect, "pydantic-ai-slim"),
}


async def exercise(connect: Any, target: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """List the tools, then make every call, each followed by the probe on the same connection.

    A call that breaks the client's session (``session_kept: false``) is recorded, and the probe
    is repeated on a fresh connection: ``alive`` is about the server, not the client."""
    probe = config["probe"]
    report: dict[str, Any] = {"calls": {}}
    stack = AsyncExitStack()
    try:
        conn = await connect(stack, target)
        report["tools"] = await conn.tools()
        for case in config["calls"]:
            if case.get("http_only") and "url" not in target:
                continue
            try:
                outcome = await conn.call(case["tool"], case["args"])
                outcome["alive"] = outcome["session_kept"] = (await conn.call(probe["tool"], probe["args"]))["ok"]
            except BaseException as exc:  # noqa: BLE001 - the session died under the call
                outcome = {**failure(exc), "session_kept": False, "alive": False}
            if not outcome["session_kept"]:
                # A client whose session crashed raises the cause when it is closed (the call
                # itself only saw a cancellation): that is what the user reads too.
                closing = await close(stack)
                if closing and closing not in outcome["text"]:
                    outcome["text"] = f"{outcome['text']}; {closing}" if outcome.get("raised") else closing
                    outcome["raised"] = True
                if "url" not in target:  # a stdio server is its session: nothing to reconnect to
                    report["calls"][case["case"]] = outcome
                    break
                stack = AsyncExitStack()
                conn = await connect(stack, target)
                outcome["alive"] = (await conn.call(probe["tool"], probe["args"]))["ok"]
            report["calls"][case["case"]] = outcome
    finally:
        await close(stack)
    return report


async def close(stack: AsyncExitStack) -> str:
    """Close a connection whose session may have failed; the failure's text, or ''."""
    try:
        await stack.aclose()
    except BaseException as exc:  # noqa: BLE001
        return failure(exc)["text"]
    return ""


async def refused(connect: Any, target: dict[str, Any], config: dict[str, Any]) -> Outcome:
    """A connection that should be refused (a missing or wrong token): what does the user read?"""
    try:
        async with AsyncExitStack() as stack:
            conn = await connect(stack, target)
            await conn.tools()
            return await conn.call(config["probe"]["tool"], config["probe"]["args"])
    except BaseException as exc:  # noqa: BLE001
        return failure(exc)


async def main(config: dict[str, Any]) -> dict[str, Any]:
    connect, package = FRAMEWORKS[config["framework"]]
    out: dict[str, Any] = {"framework": config["framework"], "version": version(package),
                           "mcp": version("mcp")}
    http = {"url": config["url"], "headers": {"Authorization": f"Bearer {config['token']}"}}
    for name, target in (("http", http), ("stdio", config["stdio"])):
        try:
            out[name] = await exercise(connect, target, config)
        except BaseException as exc:  # noqa: BLE001 - the test shows it
            out[name] = {"error": failure(exc)["text"], "traceback": traceback.format_exc()}
    out["auth"] = {}
    for case in config["auth"]:
        outcome = await refused(connect, {"url": config["url"], "headers": case["headers"]}, config)
        async with AsyncExitStack() as stack:  # the server still serves a good token afterwards
            probe = await (await connect(stack, http)).call(config["probe"]["tool"], config["probe"]["args"])
        outcome["alive"] = probe["ok"]
        out["auth"][case["case"]] = outcome
    return out


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)  # the frameworks' own warnings would clutter stderr
    with open(sys.argv[1], encoding="utf-8") as f:
        cfg = json.load(f)
    print(json.dumps(asyncio.run(main(cfg)), default=str))
