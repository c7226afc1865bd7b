"""Small helpers to talk to the server through the official Python SDK client."""

from __future__ import annotations

import asyncio
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOKENS = {"engineering": "demo-engineering-token", "finance": "demo-finance-token"}


@asynccontextmanager
async def http_client(url: str, principal: str, mode: str = "auto") -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS[principal]}"}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def stdio_client(principal: str, *extra: str, mode: str = "auto") -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server", "--as", principal, *extra])
    return Client(params, mode=mode)


async def call(client: Client, tool: str, **args: Any):
    return await client.call_tool(tool, args)


def run(coro):
    return asyncio.run(coro)
