"""The ADK app through its front doors: hoprag ask, adk run, adk api_server, and HTTP MCP identity."""

from __future__ import annotations

import json
import os
import socket
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conftest import CORPUS, ROOT
from test_unseen_corpus import write_corpus

BIN = Path(sys.executable).parent
Q3 = "Which region stores telemetry for Project Falcon?"
# The writer's lines end in a Markdown hard break (two spaces), so adk web keeps them apart.
Q3_ANSWER = ("us-east-2  \nEvidence: Falcon --depends_on--> Atlas [d01]; Atlas --telemetry_store--> Aurora [d02]; "
             "Aurora --region--> us-east-2 [d03]")
ENV = {**os.environ, "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false"}
for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "HOPRAG_MODEL", "HOPRAG_MCP_URL"):
    ENV.pop(key, None)


def ask(question: str, *args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([str(BIN / "hoprag"), "ask", question, "--json", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**ENV, **(env or {})})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_ask_json_reports_answer_citations_and_costs():
    result = ask(Q3)
    assert result["answer"] == "us-east-2" and result["abstained"] is False and result["reason"] is None
    assert [c["doc_id"] for c in result["citations"]] == ["d01", "d02", "d03"]
    assert (result["searches"], result["docs_read"]) == (3, 4)
    assert result["tool_calls"] == ["graph_overview", "search", "search", "search"]
    assert any(line.startswith("grade:") for line in result["trace"])


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_injection_case_drops_d10_and_reports_the_directive():
    result = ask("What region does Aurora run in?")
    assert result["answer"] == "us-east-2" and result["dropped_untrusted"] == ["d10"]
    assert result["tool_calls"] == ["graph_overview", "search"]
    assert any("directive detected in d10, not executed" in line for line in result["trace"])


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_unknown_user_is_an_error_naming_the_user():
    done = subprocess.run([str(BIN / "hoprag"), "ask", "Who owns Project Falcon?", "--as", "stranger"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=ENV)
    assert done.returncode == 1 and done.stdout == ""
    assert "unknown user 'stranger'" in done.stderr and "access.yaml" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_fresh_corpus_multi_hop_and_restricted(tmp_path):
    corpus = write_corpus(tmp_path)
    for config in ("relations.yaml", "corpus.yaml"):  # the demo's vocabulary and ranker, as data: no code change
        shutil.copy(CORPUS / config, tmp_path / config)
    (tmp_path / "access.yaml").write_text(
        "principals:\n  eng: {groups: [eng]}\n  fin: {groups: [fin]}\n", encoding="utf-8")
    args = ("--corpus", str(corpus))
    multi = ask("Which region stores telemetry for Project Heron?", "--as", "eng", *args)
    assert multi["answer"] == "ap-south-1"
    assert [c["doc_id"] for c in multi["citations"]] == ["h01", "h02", "h03", "h04"]
    restricted = ask("What is Heron's annual budget?", "--as", "eng", *args)
    assert restricted["abstained"] and restricted["reason"] == "not found in what you may read"
    assert restricted["searches"] == 0
    allowed = ask("What is Heron's annual budget?", "--as", "fin", *args)
    assert allowed["answer"] == "four million dollars"


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_identity_per_call_over_http(http_server):
    """One HTTP server; each principal's bearer token is attached per call from the session user."""
    env = {"HOPRAG_MCP_URL": http_server.url}
    finance = ask("What is Falcon's annual budget?", "--as", "finance", env=env)
    engineering = ask("What is Falcon's annual budget?", "--as", "engineering", env=env)
    assert finance["answer"] == "twelve million dollars" and finance["citations"][0]["doc_id"] == "d09"
    assert engineering["abstained"] and engineering["searches"] == 0


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_adk_run_answers_q3_offline():
    done = subprocess.run([str(BIN / "adk"), "run", "--in_memory", "agents/hoprag_agent", Q3], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=ENV)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"[writer]: {Q3_ANSWER}" in done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def api_server():
    port = free_port()
    proc = subprocess.Popen([str(BIN / "adk"), "api_server", "--host", "127.0.0.1", "--port", str(port), "--no-reload",
                             "--session_service_uri", "memory://", "agents"], cwd=ROOT, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/list-apps", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    yield base
    proc.terminate()
    proc.wait(20)


def post_run(base: str, user: str, question: str, endpoint: str = "run") -> str:
    session = httpx.post(f"{base}/apps/hoprag_agent/users/{user}/sessions", json={}, timeout=30).json()["id"]
    body = {"app_name": "hoprag_agent", "user_id": user, "session_id": session,
            "new_message": {"role": "user", "parts": [{"text": question}]}}
    response = httpx.post(f"{base}/{endpoint}", json=body, timeout=300)
    assert response.status_code == 200, response.text
    if endpoint == "run":
        events = response.json()
    else:
        events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    texts = [p["text"] for e in events if e.get("author") in ("writer", "hoprag")  # hoprag: refused before any agent
             for p in (e.get("content") or {}).get("parts", []) if "text" in p]
    return texts[-1]


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_api_server_lists_the_app_and_answers_q3(api_server):
    assert "hoprag_agent" in httpx.get(f"{api_server}/list-apps").json()
    assert post_run(api_server, "engineering", Q3) == Q3_ANSWER
    assert post_run(api_server, "engineering", Q3, "run_sse") == Q3_ANSWER


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_api_server_keeps_principals_apart(api_server):
    assert post_run(api_server, "finance", "What is Falcon's annual budget?").startswith("twelve million dollars")
    assert post_run(api_server, "engineering", "What is Falcon's annual budget?") == \
        "I cannot answer: not found in what you may read."
    assert post_run(api_server, "mallory", Q3).startswith("I cannot answer: unknown user 'mallory': the operator's "
                                                          "access file maps no principal to it")


@pytest.mark.slow  # hoprag ask / adk / api_server processes that load the agent
def test_adk_web_lists_the_app():
    port = free_port()
    proc = subprocess.Popen([str(BIN / "adk"), "web", "--host", "127.0.0.1", "--port", str(port), "--no-reload",
                             "--session_service_uri", "memory://", "agents"], cwd=ROOT, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                apps = httpx.get(f"http://127.0.0.1:{port}/list-apps", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert apps.status_code == 200 and apps.json() == ["hoprag_agent"]
        assert httpx.get(f"http://127.0.0.1:{port}/dev-ui/", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(20)
