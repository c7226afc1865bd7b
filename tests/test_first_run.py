"""A first run as a new user makes it: every mistake is one line (what, where, how to fix) and a non-zero exit.

Also: one default principal for ``ask``, ``search`` and ``serve --transport stdio`` (ADK's default
user ``user``, mapped by the access file's ``users:``), the README library snippet from any
directory, and the LICENSE that pyproject declares.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT
from mcp_client import call, run

BIN = Path(sys.executable).parent
Q3 = "Which region stores telemetry for Project Falcon?"
ENV = {**os.environ, "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false"}
for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "HOPRAG_MODEL",
            "HOPRAG_MODEL_BASE_URL", "HOPRAG_MCP_URL", "HOPRAG_CORPUS", "HOPRAG_ACCESS"):
    ENV.pop(key, None)


def hoprag(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "hoprag"), *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**ENV, **(env or {})}, stdin=subprocess.DEVNULL)


def one_line_error(done: subprocess.CompletedProcess, *needles: str) -> str:
    """The run failed with exactly one stderr line containing every needle (and no traceback)."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_missing_corpus_names_the_path_and_the_flag():
    one_line_error(hoprag("ask", Q3, "--corpus", "/nonexistent/corpus"), "/nonexistent/corpus", "--corpus")
    one_line_error(hoprag("serve", "--corpus", "/nonexistent/corpus"), "/nonexistent/corpus", "--corpus")


def test_a_bad_corpus_is_one_line_per_problem(tmp_path):
    (tmp_path / "d1.md").write_text("---\nid: d1\ngroups: [eng]\n---\nText.\n", encoding="utf-8")
    done = hoprag("ask", Q3, "--corpus", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines and all(re.match(rf"{re.escape(str(tmp_path))}/d1\.md: field '\w+': ", line) for line in lines)


def test_a_missing_access_file_names_where_it_looked_and_the_flag(tmp_path):
    for doc in CORPUS.glob("d0*.md"):
        (tmp_path / doc.name).write_text(doc.read_text(encoding="utf-8"), encoding="utf-8")
    one_line_error(hoprag("ask", Q3, "--corpus", str(tmp_path)), f"{tmp_path}/access.yaml", "--access")
    one_line_error(hoprag("search", "Aurora", "--corpus", str(tmp_path)), f"{tmp_path}/access.yaml", "--access")


@pytest.mark.parametrize("command", [("ask", Q3), ("search", "Aurora"), ("serve", "--transport", "stdio")])
def test_an_unknown_user_is_an_error_naming_the_user(command):
    one_line_error(hoprag(*command, "--as", "nobody"), "unknown user 'nobody'", "access.yaml", "users:",
                   "engineering, finance")


def test_a_port_in_use_is_one_line_with_the_fix():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = hoprag("serve", "--transport", "http", "--port", str(port))
    one_line_error(done, f"127.0.0.1:{port}", "in use", "--port 0")


def test_an_unreachable_gemini_is_one_line_naming_model_and_endpoint():
    base = f"http://127.0.0.1:{closed_port()}"
    done = hoprag("ask", Q3, "--model", "gemini-2.5-flash", "--model-base-url", base, env={"GOOGLE_API_KEY": "k"})
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    model_line, error = done.stderr.strip().splitlines()
    assert model_line == f"model: gemini-2.5-flash at {base}"
    assert error.startswith(f"model 'gemini-2.5-flash' at {base} failed in planner: ") and "HOPRAG_MODEL" in error


def test_an_unknown_model_name_is_one_line():
    one_line_error(hoprag("ask", Q3, env={"HOPRAG_MODEL": "hoprag-offlne"}),
                   "model 'hoprag-offlne' (HOPRAG_MODEL / --model)", "hoprag-offline")


def test_a_key_in_the_environment_does_not_switch_the_model_and_says_so():
    done = hoprag("ask", Q3, "--json", env={"GOOGLE_API_KEY": "a-key-for-something-else"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["model"] == "hoprag-offline" and result["answer"] == "us-east-2"
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "model: hoprag-offline"
    assert "GOOGLE_API_KEY is set but unused" in lines[1] and "HOPRAG_MODEL" in lines[1]


def test_the_default_principal_is_the_same_for_ask_search_and_stdio_serve():
    """No --as anywhere: ADK's default user ``user``, which the demo access file maps to engineering."""
    asked = json.loads(hoprag("ask", "What is Falcon's annual budget?", "--json").stdout)
    assert asked["abstained"] and asked["reason"] == "not found in what you may read"  # engineering cannot
    searched = hoprag("search", "Falcon annual budget", "--json")
    assert searched.returncode == 0 and json.loads(searched.stdout)["principal"] == "engineering"
    assert "d09" not in {r["id"] for r in json.loads(searched.stdout)["results"]}
    assert "d01" in {r["id"] for r in json.loads(hoprag("search", "Falcon", "--json").stdout)["results"]}

    from mcp import Client, StdioServerParameters

    async def stdio_ids() -> set[str]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server", "--transport", "stdio"],
                                       env=ENV)
        async with Client(params) as client:
            result = await call(client, "search", query="Falcon", k=10)
            return {r["id"] for r in result.structured_content["results"]}

    ids = run(stdio_ids())
    assert "d01" in ids and "d09" not in ids


def test_an_access_file_without_the_default_user_asks_for_as(tmp_path):
    access = tmp_path / "access.yaml"
    access.write_text("principals:\n  engineering: {groups: [engineering]}\n", encoding="utf-8")
    one_line_error(hoprag("search", "Falcon", "--access", str(access)), "unknown user 'user'", "--as")


def test_the_readme_library_snippet_runs_from_any_directory(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## The engine as a library"):]
    snippet = section[section.index("```python\n") + 10:section.index("```\n", section.index("```python\n") + 10)]
    done = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**ENV, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "us-east-2" in done.stdout


def test_the_license_is_the_apache_2_text_pyproject_declares():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache-2.0" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
