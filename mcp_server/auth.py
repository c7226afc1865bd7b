"""Who a call runs as, and how an HTTP client learns to say it.

Identity comes from the transport -- a verified bearer token over HTTP, the operator's ``--as``
over stdio -- and never from a tool argument. Tokens come from the operator's access file, not from
an OAuth flow, so the 401 challenge (RFC 6750) and the protected-resource metadata (RFC 9728,
deliberately without ``authorization_servers``) say exactly that instead of sending clients into
OAuth discovery.
"""

from __future__ import annotations

from typing import Any, Callable

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Scope

from hoprag.access import Access, Principal

#: Who the current call runs as (called once per tool call).
Caller = Callable[[], Principal]


def http_caller(access: Access) -> Caller:
    """Resolve the caller from the bearer token the transport verified."""

    def caller() -> Principal:
        token = get_access_token()
        if token is None or token.client_id not in access.principals:
            raise ToolError("unauthenticated: this server needs a valid bearer token")
        return access.principals[token.client_id]

    return caller


def fixed_caller(principal: Principal) -> Caller:
    """Stdio: the operator who launched the process chose the principal (``--as``); single-user mode's
    principal reads every group of the engine serving each call (:meth:`Principal.reads`)."""
    return lambda: principal


class AccessFileVerifier(TokenVerifier):
    """Bearer tokens from the operator access file (constant-time comparison, never logged)."""

    def __init__(self, access: Access):
        self.access = access

    async def verify_token(self, token: str) -> AccessToken | None:
        principal = self.access.by_token(token)
        if principal is None:
            return None
        return AccessToken(token="<redacted>", client_id=principal.name, scopes=[], subject=principal.name)


REALM = "hoprag"
PRM_PATH = "/.well-known/oauth-protected-resource"
TOKEN_HELP = ("send 'Authorization: Bearer <token>' with a token from the server operator's access file "
              "(this server has no OAuth authorization server)")
# Where an OAuth client looks when the metadata names no authorization server (it falls back to
# the server's origin and the default endpoints): answer there in words too, not a bare 404.
OAUTH_FALLBACKS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration",
                   "/register", "/authorize", "/token")


def _base_url(scope: Scope) -> str:
    """This server's origin as the client addressed it (quotes escaped: it goes into a quoted header)."""
    return str(Request(scope).base_url).rstrip("/").replace('"', "%22")


def _protected_resource(scope: Scope) -> dict[str, Any]:
    """RFC 9728 metadata for the one protected resource, ``/mcp``."""
    return {"resource": f"{_base_url(scope)}/mcp", "bearer_methods_supported": ["header"],
            "resource_name": f"hoprag MCP server: a bearer token is required: {TOKEN_HELP}"}


def challenge(scope: Scope) -> tuple[str, str]:
    """A 401's words and its RFC 6750 challenge: whether the token was missing or not accepted, how to
    send one, where the metadata is (the SDK's verifier still decides; this only changes the words)."""
    if Request(scope).headers.get("authorization", "").lower().startswith("bearer "):
        error, description = "invalid_token", f"the bearer token is not accepted: {TOKEN_HELP}"
    else:
        error, description = "invalid_request", f"a bearer token is required: {TOKEN_HELP}"
    return description, (f'Bearer realm="{REALM}", error="{error}", error_description="{description}", '
                         f'resource_metadata="{_base_url(scope)}{PRM_PATH}/mcp"')


def add_discovery(server: MCPServer) -> None:
    """Serve the protected-resource metadata (RFC 9728 section 3.1: the path-suffixed form for ``/mcp``,
    and the root form older clients try) and a worded 404 where an OAuth client looks next."""

    async def protected_resource(request: Request) -> JSONResponse:
        return JSONResponse(_protected_resource(request.scope))

    server.custom_route(f"{PRM_PATH}/mcp", methods=["GET"])(protected_resource)
    server.custom_route(PRM_PATH, methods=["GET"])(protected_resource)

    async def no_oauth(_: Request) -> JSONResponse:
        return JSONResponse({"error": "not_found", "error_description":
                             f"not an OAuth endpoint: a bearer token is required: {TOKEN_HELP}"}, status_code=404)

    for path in OAUTH_FALLBACKS:
        server.custom_route(path, methods=["GET", "POST"])(no_oauth)
