"""MCP tools bound to the caller: the ADK session's ``user_id`` decides whose credentials a call carries.

Identity never comes from model output. Over HTTP every call carries the principal's bearer
token (``header_provider``, evaluated per call). Stdio carries no per-call identity, so each
principal gets its own stdio server subprocess launched ``--as`` that principal, and the tools
an agent sees on each turn come from the subprocess of the session's user. With no access file
(single-user mode) every session user is the one local principal, served by one subprocess.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Optional

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams, StreamableHTTPConnectionParams
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment

from hoprag.access import Access, Principal, load_access
from hoprag.settings import NOTED
from mcp_server.tools import NAMES


class CallerToolset(BaseToolset):
    """The hoprag MCP tools as the session user's principal (no tools for unknown users)."""

    def __init__(self, *, access_file: Path | None, corpus: Path, ranker: str | None = None, mcp_url: str | None = None,
                 store: str | Path | None = None, embedder: str | None = None):
        """``access_file``: the operator access file, ``None`` for single-user mode (there is none);
        ``embedder``: the setting the stdio server gets (unset: a store's own)."""
        super().__init__()
        self.corpus, self.ranker, self.embedder = str(corpus), ranker, embedder
        self.access_file = str(access_file) if access_file is not None else None
        self.store = str(store) if store is not None else None
        self.mcp_url = mcp_url
        self._access: Access | None = None
        self._lock = threading.Lock()
        self._stdio: dict[str, McpToolset] = {}
        self._http: McpToolset | None = None
        if mcp_url:
            os.environ.setdefault("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")  # no GCE metadata probe
            self._http = McpToolset(
                connection_params=StreamableHTTPConnectionParams(url=mcp_url, timeout=30),
                header_provider=self._bearer, tool_filter=list(NAMES))

    @property
    def access(self) -> Access:
        """The operator access file, read once on first use (building the agent reads nothing)."""
        with self._lock:
            if self._access is None:
                self._access = Access.single() if self.access_file is None else load_access(self.access_file)
            return self._access

    def knows(self, user_id: str) -> bool:
        """Does the access file map this session user to a principal?"""
        return self.access.for_user(user_id) is not None

    def _principal(self, ctx: Optional[ReadonlyContext]) -> Principal | None:
        return self.access.for_user(ctx.user_id) if ctx is not None else None

    def _bearer(self, ctx: ReadonlyContext) -> dict[str, str]:
        principal = self._principal(ctx)
        token = self.access.token_for(principal.name) if principal else None
        return {"Authorization": f"Bearer {token}"} if token else {}

    def _stdio_for(self, principal: Principal) -> McpToolset:
        if principal.name not in self._stdio:
            args = ["-m", "mcp_server", "--transport", "stdio", "--as", principal.name, "--corpus", self.corpus]
            if self.access_file is not None:  # none: the child finds none either, and runs single-user too
                args += ["--access", self.access_file]
            if self.ranker:
                args += ["--ranker", self.ranker]
            if self.embedder:
                args += ["--embedder", self.embedder]
            # the store goes by environment, not argv: a database URL may carry a password (`ps` shows argv)
            extra = {"HOPRAG_STORE": self.store} if self.store else {}
            if self.access_file is None:
                extra[NOTED] = "1"  # whoever built this agent has said it runs single-user
            if os.environ.get("PYTHONPATH"):  # the child imports the hoprag this process runs, not another installed one
                extra["PYTHONPATH"] = os.environ["PYTHONPATH"]
            env = {**get_default_environment(), **extra} if extra else None
            self._stdio[principal.name] = McpToolset(
                connection_params=StdioConnectionParams(
                    server_params=StdioServerParameters(command=sys.executable, args=args, env=env), timeout=60),
                tool_filter=list(NAMES))
        return self._stdio[principal.name]

    async def get_tools(self, readonly_context: Optional[ReadonlyContext] = None) -> list[BaseTool]:
        principal = self._principal(readonly_context)
        if principal is None:
            return []
        if self._http is not None:
            if not self.access.token_for(principal.name):
                return []
            return await self._http.get_tools(readonly_context)
        return await self._stdio_for(principal).get_tools(readonly_context)

    async def close(self) -> None:
        """Deliberately nothing: ADK closes toolsets per runner, and ``adk eval`` runs cases in
        parallel runners over this one shared instance, so closing here would cut the MCP session
        of cases still running. Subprocesses end with the process; call :meth:`shutdown` to stop earlier."""

    async def shutdown(self) -> None:
        """Close every MCP session and stdio subprocess this toolset opened."""
        for toolset in [*self._stdio.values(), *([self._http] if self._http else [])]:
            await toolset.close()
        self._stdio.clear()
