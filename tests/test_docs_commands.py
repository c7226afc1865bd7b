"""Every command the README and the docs pages show runs, offline, as written.

Each page's fenced ``bash`` and ``python`` blocks run top to bottom in a temporary directory of
their own, so a page reads as a session a user types: a store one block indexes is the store the
next block asks. An HTML comment on the line before a block (blank lines between allowed) changes
how it is run; ``docs/testing.md`` lists the markers:

- ``<!-- docs-test: skip: REASON -->``: not run (a key, the network, PostgreSQL), and says why;
- ``<!-- docs-test: run by tests/test_x.py ... -->``: not run here because those tests run it --
  they must name each ``.json`` file and ``HOPRAG_`` variable of the block, whose paths must exist;
- ``<!-- docs-test: background -->``: a server, started and waited for on its port, stopped when
  the next one starts or the page ends;
- ``<!-- docs-test: exit N -->``: the block must exit N (else 0);
- ``<!-- docs-test: output -->`` / ``stderr`` before a ``text`` block: the previous block's stdout /
  stderr, line by line; ``…`` is any text within a line, a line ``...`` any lines.

Port 8000 in a runnable block becomes a free port, one per page. Relative links must name files
that exist, and their anchors headings of those files.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
SHELL, PYTHON, TEXT = ("bash", "sh", "shell"), ("python", "py"), ("text", "")
#: What a page's directory holds: links to the repository's data, and a copy of the agent folder,
#: because ``adk`` writes sessions and eval results into the agent's folder.
LINKED = ("corpus", "docs", "eval_sets", "tests", "test_config.json")
COPIED = ("agents",)
NODE_MODULES = ROOT / "tests" / "js" / "node_modules"
PORT = "8000"
BLOCK_SECONDS = 300
SERVER_SECONDS = 120

MARKER = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


@dataclass
class Block:
    """One fenced block of a page, with the marker written before it (``""`` when none)."""

    page: Path
    line: int
    lang: str
    text: str
    marker: str

    @property
    def where(self) -> str:
        return f"{shown(self.page)}:{self.line}"

    @property
    def runnable(self) -> bool:
        return self.lang in SHELL + PYTHON


def shown(page: Path) -> str:
    """A page as messages name it: relative to the checkout when it is one of its pages."""
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def fenced(page: Path) -> list[Block]:
    """The page's fenced blocks, each with its marker; a marker before anything but a fence is an error."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    marker, marker_line, i = "", 0, 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            close = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(fence.group(1))), None)
            assert close is not None, f"{shown(page)}:{i + 1}: unclosed code fence"
            blocks.append(Block(page, i + 1, fence.group(2).lower(), "\n".join(lines[i + 1:close]), marker))
            marker, i = "", close + 1
            continue
        found = MARKER.fullmatch(line.strip())
        assert not marker or not line.strip(), (
            f"{shown(page)}:{marker_line}: a docs-test marker must be followed by a code block")
        if found:
            marker, marker_line = found.group(1), i + 1
        i += 1
    assert not marker, f"{shown(page)}:{marker_line}: a docs-test marker must be followed by a code block"
    return blocks


def check_marker(block: Block, last: Block | None) -> None:
    """A marker is one the runner knows, on a block it applies to (``last``: the page's runnable block before it)."""
    kind = block.marker.split(":")[0].split()[0] if block.marker else ""
    if kind in ("output", "stderr"):
        assert block.marker == kind and block.lang in TEXT, f"{block.where}: '{kind}' marks a text block, alone"
        assert last is not None and not last.marker.startswith(("skip", "run by", "background")), (
            f"{block.where}: '{kind}' must follow a block that runs to its end")
        return
    if not kind:
        return
    assert block.runnable, f"{block.where}: a '{kind}' marker on a {block.lang or 'plain'} block, which never runs"
    if kind == "skip":
        assert re.fullmatch(r"skip:\s*\S.*", block.marker), f"{block.where}: write the reason: 'skip: REASON'"
    elif block.marker.startswith("run by "):
        check_run_by(block)
    elif kind == "exit":
        assert re.fullmatch(r"exit \d+", block.marker), f"{block.where}: write 'exit N'"
    else:
        assert block.marker == "background", f"{block.where}: unknown docs-test marker {block.marker!r}"
        assert PORT in block.text, f"{block.where}: a background server must listen on port {PORT}"


def check_run_by(block: Block) -> None:
    """The named tests exist and name every ``.json`` file and ``HOPRAG_`` variable the block uses; every path exists."""
    tests = [ROOT / name for name in block.marker.removeprefix("run by ").split()]
    assert tests and all(t.is_file() for t in tests), f"{block.where}: no such test in {block.marker!r}"
    source = "".join(t.read_text(encoding="utf-8") for t in [*tests, ROOT / "tests" / "conftest.py"])
    words = re.findall(r"[\w./-]+", block.text)
    for word in words:
        if "/" in word and not word.startswith(("/", "http")):
            assert (ROOT / word).exists(), f"{block.where}: {word} does not exist"
        if word.endswith(".json") or word.startswith("HOPRAG_"):
            assert word in source, f"{block.where}: {', '.join(str(t.relative_to(ROOT)) for t in tests)} never use {word}"


def expected_lines(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows: ``…`` any text within a line, a line ``...`` any lines."""
    def lines(text: str) -> list[str]:
        out = [line.rstrip() for line in text.splitlines()]
        while out and not out[-1]:
            out.pop()
        return out

    pattern = "".join(r"(?:[^\n]*\n)*?" if line == "..." else ".*".join(map(re.escape, line.split("…"))) + "\n"
                      for line in lines(expected))
    return re.fullmatch(pattern, "".join(line + "\n" for line in lines(actual))) is not None


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def sandbox(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A page's working directory and environment: this checkout's commands first on PATH, no model keys."""
    for name in LINKED:
        (tmp / name).symlink_to(ROOT / name)
    for name in COPIED:
        shutil.copytree(ROOT / name, tmp / name, ignore=shutil.ignore_patterns(".adk", "__pycache__"))
    (tmp / "home").mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HOPRAG_") and "API_KEY" not in k and k != "GOOGLE_GENAI_USE_VERTEXAI"}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT), HOME=str(tmp / "home"),
               GOOGLE_API_USE_CLIENT_CERTIFICATE="false", NPM_CONFIG_UPDATE_NOTIFIER="false",
               MCP_INSPECTOR_SECRET_STORE="memory",
               # lexical: the pages index the 1,950-passage Instructor docs more than once, which the default
               # embedder takes minutes to embed; tests/test_dense.py runs `hoprag index` with it on purpose
               HOPRAG_EMBEDDER="none")
    return tmp, env


def command(block: Block, port: str) -> list[str]:
    text = block.text.replace(PORT, port)
    if "npm exec --prefix tests/js" in text:
        assert NODE_MODULES.is_dir(), "run `npm ci --prefix tests/js` (the README's test command does)"
    return [sys.executable, "-c", text] if block.lang in PYTHON else ["bash", "-eo", "pipefail", "-c", text]


class Server:
    """A background block: its process group, started in the page's directory, logging to a file."""

    def __init__(self, block: Block, port: str, cwd: Path, env: dict[str, str]):
        self.block, self.port, self.log = block, port, cwd / f"server-{block.line}.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(command(block, port), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + SERVER_SECONDS
        while not self.listening():
            assert self.process.poll() is None, f"{block.where}: the server exited:\n{self.tail()}"
            assert time.monotonic() < deadline, f"{block.where}: nothing listens on {port}:\n{self.tail()}"
            time.sleep(0.25)

    def listening(self) -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", int(self.port))) == 0

    def tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-3000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def run_page(page: Path, tmp: Path) -> None:
    """Run a page's blocks in order; fail at the first that does not do what the page says."""
    tmp.mkdir(exist_ok=True)
    cwd, env = sandbox(tmp)
    port = free_port()
    server: Server | None = None
    done: subprocess.CompletedProcess | None = None
    blocks, last = fenced(page), None
    for block in blocks:  # every marker checked before anything runs
        check_marker(block, last)
        last = block if block.runnable else last
    try:
        for block in blocks:
            if block.marker in ("output", "stderr"):
                printed = done.stdout if block.marker == "output" else done.stderr
                assert expected_lines(block.text, printed), (
                    f"{block.where}: the page shows\n{block.text}\nbut the command printed\n{printed}")
            if not block.runnable or block.marker.startswith(("skip", "run by")):
                continue
            if block.marker == "background":
                if server:
                    server.stop()
                server = Server(block, port, cwd, env)
                continue
            done = subprocess.run(command(block, port), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=BLOCK_SECONDS)
            status = int(block.marker.split()[1]) if block.marker.startswith("exit") else 0
            said = f"{block.where}: exit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
            assert done.returncode == status, said
            assert "Traceback (most recent call last)" not in done.stdout + done.stderr, said
            assert '"isError": true' not in done.stdout, said
    finally:
        if server:
            server.stop()


@pytest.mark.slow  # agents, servers and benchmarks: minutes for all pages
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_command_of_the_page_runs(page, tmp_path):
    run_page(page, tmp_path)


def slugs(page: Path) -> set[str]:
    """GitHub's heading anchors of a page: lower case, punctuation dropped, spaces as hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(2).lower()).replace(" ", "-")
            seen[slug] = seen.get(slug, -1) + 1
            if seen[slug]:
                seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_link_of_the_page_resolves(page):
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    for target in LINK.findall(re.sub(r"`[^`\n]*`", "", text)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.relative_to(ROOT)}: link to {target}: no such file"
        if anchor and file.suffix == ".md":
            assert anchor in slugs(file), f"{page.relative_to(ROOT)}: link to {target}: no such heading"


def test_the_docs_pages_and_the_front_page_exist():
    """Issue 24: the README is a front page of at most 250 lines; each topic has its page, listed in the index."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for name in ("agent", "tools", "server", "ingestion", "stores", "security", "models", "benchmarks",
                 "settings", "evals", "library", "troubleshooting", "testing"):
        assert (ROOT / "docs" / f"{name}.md").is_file() and f"({name}.md)" in index, name


# The runner's own controls: each must fail, or the page tests above could pass without checking anything.

@pytest.mark.parametrize("text, message", [
    ("```bash\nfalse\n```\n", "exit 1"),
    ("```bash\nprintf 'a\\nb\\n'\n```\n<!-- docs-test: output -->\n```text\na\nc\n```\n", "the page shows"),
    ("<!-- docs-test: exit 1 -->\n```bash\ntrue\n```\n", "exit 0"),
    ("```python\nraise SystemExit('x')\n```\n", "exit 1"),
    ("```python\n1/0\n```\n", "Traceback"),
    ("<!-- docs-test: skip -->\n```bash\ntrue\n```\n", "write the reason"),
    ("<!-- docs-test: skipped: x -->\n```bash\ntrue\n```\n", "unknown docs-test marker"),
    ("<!-- docs-test: skip: x -->\nsome prose\n```bash\ntrue\n```\n", "must be followed by a code block"),
    ("<!-- docs-test: run by tests/test_repo.py -->\n```bash\nadk eval agents/hoprag_agent eval_sets/falcon.evalset.json\n```\n",
     "never use eval_sets/falcon.evalset.json"),
    ("<!-- docs-test: output -->\n```text\nx\n```\n", "must follow a block that runs"),
    ("<!-- docs-test: background -->\n```bash\nsleep 60 # 8000\n```\n<!-- docs-test: output -->\n```text\n\n```\n",
     "must follow a block that runs"),
])
def test_the_runner_fails_a_page_that_is_wrong(tmp_path, text, message):
    page = tmp_path / "control.md"
    page.write_text(text, encoding="utf-8")
    with pytest.raises(AssertionError, match=re.escape(message)):
        run_page(page, tmp_path / "run")


def test_output_patterns():
    assert expected_lines("a\n...\nz", "a\nb\nc\nz\n")
    assert expected_lines("a … c", "a b c")
    assert expected_lines("a\n...", "a")
    assert not expected_lines("a\nz", "a\nb\nz")
    assert not expected_lines("a … c", "a b\nc")
