"""An independent MCP implementation (the official TypeScript SDK on Node) drives the HTTP server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

JS = Path(__file__).resolve().parent / "js"


def test_typescript_sdk_lists_tools_and_calls_search_and_fetch(http_server):
    node = shutil.which("node")
    assert node, "Node.js is required for the cross-client test"
    assert (JS / "node_modules" / "@modelcontextprotocol" / "sdk").exists(), \
        "run `npm ci --prefix tests/js` (the README's test command does)"
    done = subprocess.run([node, str(JS / "client.mjs"), http_server.url, "demo-engineering-token"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert {t["name"] for t in seen["tools"]} == {"search", "fetch", "graph_walk", "graph_hops", "graph_overview", "grep"}
    assert all(t["hasOutputSchema"] for t in seen["tools"])
    assert [r["id"] for r in seen["search"]["results"]] == ["d03", "d10", "d02"]
    assert seen["search"]["results"][1]["trusted"] is False and seen["search"]["results"][1]["facts"] == []
    assert seen["fetch"]["facts"] == [["Aurora", "region", "us-east-2"]] and seen["fetch"]["updated"] == "2026-03-30"
    assert seen["hidden"]["isError"] and "d09" in seen["hidden"]["text"]


def test_typescript_sdk_without_a_token_is_refused(http_server):
    done = subprocess.run([shutil.which("node") or "node", str(JS / "client.mjs"), http_server.url, "not-a-token"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "401" in done.stderr
