"""HTTP load for the server benchmarks: server subprocesses, request shapes, and two load generators.

Servers run as separate processes on 127.0.0.1 (they announce their URL on stderr, as
``hoprag serve --port 0`` does). Load comes from ``wrk`` (Debian package ``wrk``) driven by a
generated Lua script -- one wrk thread, so it uses one core and leaves the other to the server
-- or, when wrk is missing, from a small asyncio HTTP/1.1 keep-alive client in this process.
Both rotate through a list of queries, count every non-200 status, socket error and MCP
``isError`` body as an error, and can keep every N-th response body for spot checks.
The Python client is slower than wrk and shares the machine with the server; on 2 cores it
can be the bottleneck above ~1,500 requests/s, so results say which generator produced them.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

ENDPOINTS = ("bare", "mcp-2025-11-25", "mcp-2026-07-28")
#: Substring of every successful MCP tools/call response (a tool error says ``"isError":true``).
MCP_OK = '"isError":false'
_URL = re.compile(r"(http://[\w.:\[\]-]+)/(?:mcp|search)")


class ServerProcess:
    """A server subprocess on 127.0.0.1 that prints its URL on stderr once it is ready to serve."""

    def __init__(self, argv: Sequence[str], timeout: float = 900.0, cwd: Path | None = None):
        start = time.perf_counter()
        self.argv = list(argv)
        self.proc = subprocess.Popen(self.argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=cwd)
        self.log: deque[str] = deque(maxlen=40)
        found: list[str] = []
        ready = threading.Event()
        threading.Thread(target=self._drain, args=(found, ready), daemon=True).start()
        if not ready.wait(timeout) or not found:
            self.stop()
            raise RuntimeError(f"server did not start: {' '.join(self.argv)}\n" + "".join(self.log))
        self.startup_s = time.perf_counter() - start
        self.base = found[0]
        self.host, port = self.base.removeprefix("http://").rsplit(":", 1)
        self.port = int(port)

    def _drain(self, found: list[str], ready: threading.Event) -> None:
        """Read stderr for the whole life of the process, so a chatty server never blocks on a full pipe."""
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            match = _URL.search(line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_mb(self) -> float:
        """Resident set size now, from ``/proc/<pid>/status`` (VmRSS)."""
        return proc_status(self.pid)["VmRSS"] / 1024

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def proc_status(pid: int | str) -> dict[str, int]:
    """The ``Vm*`` lines of ``/proc/<pid>/status`` in kB (VmRSS, VmHWM, ...)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Vm"):
            key, value = line.split(":", 1)
            out[key] = int(value.split()[0])
    return out


def mcp_command(corpus: Path, access: Path, command: str | None = None) -> list[str]:
    """``hoprag serve --transport http --port 0`` for a corpus, or a prototype ``command`` taking the same flags."""
    head = command.split() if command else [sys.executable, "-m", "mcp_server"]
    return [*head, "--transport", "http", "--port", "0", "--corpus", str(corpus), "--access", str(access)]


def bare_command(corpus: Path, access: Path, tune: Sequence[str] = ()) -> list[str]:
    """The bare Starlette endpoint of :mod:`benchmarks.server_bench` for the same corpus.

    ``tune`` names process settings to give it (``gc-freeze``), to pair it with a
    prototype MCP server that has them.
    """
    return [sys.executable, "-m", "benchmarks.server_bench", "bare", "--corpus", str(corpus), "--access", str(access),
            "--port", "0", *(f"--{t}" for t in tune)]


@dataclass(frozen=True)
class Target:
    """One endpoint under load: where to POST, the headers, and per query a body around a request id.

    Request ``i`` (from 1) sends query ``(i - 1) % len(queries)``; MCP bodies carry ``i`` as the
    JSON-RPC id, so a kept response names the query it answers.
    """

    name: str
    host: str
    port: int
    path: str
    headers: tuple[tuple[str, str], ...]
    bodies: tuple[tuple[str, str], ...]  # (head, tail): body = head + id + tail, or head alone for bare
    check: str | None

    def body(self, i: int) -> str:
        head, tail = self.bodies[(i - 1) % len(self.bodies)]
        return head if self.name == "bare" else f"{head}{i}{tail}"


def target(name: str, server: ServerProcess, token: str, queries: Sequence[str], k: int) -> Target:
    """The request shape of an endpoint in :data:`ENDPOINTS` (bare JSON, or MCP tools/call in one era)."""
    headers = [("Content-Type", "application/json"), ("Authorization", f"Bearer {token}")]
    if name == "bare":
        bodies = tuple((json.dumps({"query": q, "k": k}, separators=(",", ":")), "") for q in queries)
        return Target(name, server.host, server.port, "/search", tuple(headers), bodies, None)
    era = name.removeprefix("mcp-")
    headers += [("Accept", "application/json, text/event-stream"), ("MCP-Protocol-Version", era)]
    bodies = []
    for q in queries:
        params: dict = {"name": "search", "arguments": {"query": q, "k": k}}
        if era == "2026-07-28":
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": era,
                               "io.modelcontextprotocol/clientCapabilities": {}}
        tail = ',"method":"tools/call","params":' + json.dumps(params, separators=(",", ":")) + "}"
        bodies.append(('{"jsonrpc":"2.0","id":', tail))
    if era == "2026-07-28":
        headers += [("Mcp-Method", "tools/call"), ("Mcp-Name", "search")]
    return Target(name, server.host, server.port, "/mcp", tuple(headers), tuple(bodies), MCP_OK)


@dataclass
class LoadResult:
    """What one load run measured; ``samples`` are kept response bodies (not serialised)."""

    endpoint: str
    generator: str
    connections: int
    requests: int
    errors: int
    seconds: float
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    samples: list[str] = field(default_factory=list, repr=False)

    def as_json(self) -> dict:
        out = asdict(self)
        out.pop("samples")
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def have_wrk() -> bool:
    return shutil.which("wrk") is not None


def run_load(t: Target, connections: int, seconds: float, max_requests: int | None = None,
             sample_every: int = 0, generator: str = "auto") -> LoadResult:
    """Closed-loop load: ``connections`` keep-alive connections for ``seconds`` (or until ``max_requests``)."""
    use_wrk = generator == "wrk" or (generator == "auto" and have_wrk())
    if use_wrk:
        return _run_wrk(t, connections, seconds, max_requests, sample_every)
    return asyncio.run(_run_python(t, connections, seconds, max_requests, sample_every))


def _lua_string(s: str) -> str:
    level = 0
    while f"]{'=' * level}]" in s:
        level += 1
    return f"[{'=' * level}[{s}]{'=' * level}]"


_LUA = """
local heads = {%(heads)s}
local tails = {%(tails)s}
local with_id = %(with_id)s
local check = %(check)s
local target, sample_every = %(target)d, %(sample_every)d
local headers = {%(headers)s}
local n, sent, got, bad, kept = #heads, 0, 0, 0, 0
local samples = nil
local threads = {}

function setup(thread) table.insert(threads, thread) end

function init(args)
  if sample_every > 0 then samples = io.open(%(samples)s, "w") end
end

function request()
  sent = sent + 1
  local q = (sent - 1) %% n + 1
  local body = heads[q]
  if with_id then body = heads[q] .. sent .. tails[q] end
  return wrk.format("POST", %(path)s, headers, body)
end

function response(status, hdrs, body)
  got = got + 1
  if status ~= 200 or (check and not string.find(body, check, 1, true)) then bad = bad + 1 end
  if samples and got %% sample_every == 0 then samples:write(body, "\\n"); kept = kept + 1 end
  if target > 0 and got == target then
    if samples then samples:flush() end
    local f = io.open(%(marker)s, "w"); f:write("done"); f:close()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do b = b + (t:get("bad") or 0) end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%%d,"micros":%%d,"bad":%%d,"socket_errors":%%d,"status_errors":%%d,' ..
    '"p50":%%d,"p90":%%d,"p99":%%d,"max":%%d}\\n',
    summary.requests, summary.duration, b, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
"""


def _run_wrk(t: Target, connections: int, seconds: float, max_requests: int | None, sample_every: int) -> LoadResult:
    """wrk -t1: when ``max_requests`` is reached the script stops its thread and we interrupt wrk,
    which then prints its summary (its duration is then the real elapsed time)."""
    with tempfile.TemporaryDirectory(prefix="hoprag-wrk-") as tmp:
        marker, samples = Path(tmp, "done"), Path(tmp, "samples.jsonl")
        script = Path(tmp, "load.lua")
        script.write_text(_LUA % {
            "heads": ",".join(_lua_string(h) for h, _ in t.bodies),
            "tails": ",".join(_lua_string(tl) for _, tl in t.bodies),
            "with_id": "false" if t.name == "bare" else "true",
            "check": _lua_string(t.check) if t.check else "nil",
            "target": max_requests or 0, "sample_every": sample_every,
            "headers": ",".join(f"[ {_lua_string(k)} ]={_lua_string(v)}" for k, v in t.headers),
            "samples": _lua_string(str(samples)), "marker": _lua_string(str(marker)), "path": _lua_string(t.path)})
        argv = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "10s",
                "-s", str(script), f"http://{t.host}:{t.port}{t.path}"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while proc.poll() is None:
            if marker.exists():
                proc.send_signal(signal.SIGINT)
                break
            time.sleep(0.05)
        out, err = proc.communicate()
        line = next((ln for ln in out.splitlines() if ln.startswith("WRKJSON ")), None)
        if line is None:
            raise RuntimeError(f"wrk failed: {err or out}")
        r = json.loads(line.removeprefix("WRKJSON "))
        kept = samples.read_text(encoding="utf-8").splitlines() if samples.exists() else []
    secs = r["micros"] / 1e6
    return LoadResult(t.name, "wrk", connections, r["requests"], r["bad"] + r["socket_errors"], secs,
                      r["requests"] / secs if secs else 0.0, r["p50"] / 1e3, r["p90"] / 1e3, r["p99"] / 1e3,
                      r["max"] / 1e3, kept)


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    status = int((await reader.readline()).split()[1])
    length, chunked = 0, False
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.lower() == "content-length":
            length = int(value)
        elif name.lower() == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if not chunked:
        return status, await reader.readexactly(length)
    body = b""
    while size := int((await reader.readline()).strip(), 16):
        body += await reader.readexactly(size)
        await reader.readexactly(2)
    await reader.readline()
    return status, body


async def _run_python(t: Target, connections: int, seconds: float, max_requests: int | None,
                      sample_every: int) -> LoadResult:
    head = f"POST {t.path} HTTP/1.1\r\nHost: {t.host}:{t.port}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in t.headers)
    check = t.check.encode() if t.check else None
    latencies: list[float] = []
    samples: list[str] = []
    state = {"sent": 0, "errors": 0}
    start = time.perf_counter()
    deadline = start + seconds

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(t.host, t.port)
        try:
            while time.perf_counter() < deadline and (max_requests is None or state["sent"] < max_requests):
                state["sent"] += 1
                body = t.body(state["sent"]).encode()
                t0 = time.perf_counter()
                writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
                try:
                    status, data = await _read_response(reader)
                except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                    state["errors"] += 1
                    return
                latencies.append(time.perf_counter() - t0)
                if status != 200 or (check is not None and check not in data):
                    state["errors"] += 1
                if sample_every and len(latencies) % sample_every == 0:
                    samples.append(data.decode())
        finally:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    secs = time.perf_counter() - start
    ms = np.array(latencies or [0.0]) * 1000
    p50, p90, p99 = np.percentile(ms, [50, 90, 99])
    return LoadResult(t.name, "python", connections, len(latencies), state["errors"], secs,
                      len(latencies) / secs if secs else 0.0, float(p50), float(p90), float(p99), float(ms.max()),
                      samples)
