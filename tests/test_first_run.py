"""A first run as a new user makes it: every mistake is one line (what, where, how to fix) and a non-zero exit.

Also: one default principal for ``ask``, ``search`` and ``serve --transport stdio`` (ADK's default
user ``user``, mapped by the access file's ``users:``); with no access file at all, single-user
mode (``hoprag index DIR --store X`` then ``hoprag ask ... --store X``, ``adk run``); the docs'
library snippet from any directory, and the LICENSE that pyproject declares.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mcp import Client, StdioServerParameters

from conftest import CORPUS, ROOT
from mcp_client import call, run

BIN = Path(sys.executable).parent
Q3 = "Which region stores telemetry for Project Falcon?"
ENV = {**os.environ, "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false"}
for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "HOPRAG_MODEL",
            "HOPRAG_MODEL_BASE_URL", "HOPRAG_MCP_URL", "HOPRAG_CORPUS", "HOPRAG_ACCESS", "HOPRAG_STORE"):
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


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_a_missing_corpus_names_the_path_and_the_flag():
    one_line_error(hoprag("ask", Q3, "--corpus", "/nonexistent/corpus"), "/nonexistent/corpus", "--corpus")
    one_line_error(hoprag("serve", "--corpus", "/nonexistent/corpus"), "/nonexistent/corpus", "--corpus")


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_a_bad_corpus_is_one_line_per_problem(tmp_path):
    (tmp_path / "d1.md").write_text("---\nid: d1\ngroups: [eng]\n---\nText.\n", encoding="utf-8")
    done = hoprag("ask", Q3, "--corpus", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines and all(re.match(rf"{re.escape(str(tmp_path))}/d1\.md: field '\w+': ", line) for line in lines)


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_a_missing_named_access_file_names_it_and_the_flag(tmp_path):
    for doc in CORPUS.glob("d0*.md"):
        (tmp_path / doc.name).write_text(doc.read_text(encoding="utf-8"), encoding="utf-8")
    missing = tmp_path / "none.yaml"
    one_line_error(hoprag("ask", Q3, "--corpus", str(tmp_path), "--access", str(missing)), str(missing), "--access")
    one_line_error(hoprag("search", "Aurora", "--corpus", str(tmp_path), env={"HOPRAG_ACCESS": str(missing)}),
                   str(missing), "--access")


SINGLE_USER = "note: no access file: single-user mode, you read every document"


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_a_corpus_without_an_access_file_is_read_by_its_single_user(tmp_path):
    for doc in CORPUS.glob("d0*.md"):  # d09 is finance's, the rest engineering's: one user reads both
        (tmp_path / doc.name).write_text(doc.read_text(encoding="utf-8"), encoding="utf-8")
    done = hoprag("search", "Falcon annual budget", "--corpus", str(tmp_path), "--as", "anyone", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["principal"] == "local" and "d09" in {r["id"] for r in found["results"]}
    assert done.stderr.count(SINGLE_USER) == 1


def write_docs(root: Path) -> Path:
    """A new user's folder: no access file, no groups anywhere, one page that names its own group."""
    docs = root / "docs"
    (docs / "finance").mkdir(parents=True)
    (docs / "heron.md").write_text("# Heron\n\nProject Heron stores telemetry in Basalt.\n", encoding="utf-8")
    (docs / "basalt.md").write_text("# Basalt\n\nBasalt runs in region eu-north-2.\n", encoding="utf-8")
    (docs / "finance/budget.md").write_text("---\ngroups: [finance]\ntags: [money]\n---\n# Budget\n\n"
                                            "Heron has an annual budget of two million dollars.\n", encoding="utf-8")
    return docs


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_a_first_run_indexes_then_asks_with_no_access_file(tmp_path):
    docs, store = write_docs(tmp_path), tmp_path / "store" / "notes.db"
    store.parent.mkdir()
    indexed = hoprag("index", str(docs), "--store", str(store), "--quiet")
    assert indexed.returncode == 0, indexed.stderr
    assert "default group: 2 documents named no groups" in indexed.stdout and "single-user mode" in indexed.stdout
    asked = hoprag("ask", "Which region does Basalt run in?", "--store", str(store), "--json")
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    assert not result["abstained"] and "basalt.md" in {c["doc_id"] for c in result["citations"]}
    assert asked.stderr.count(SINGLE_USER) == 1  # said once, not again by the server the agent launches
    for who in ((), ("--as", "someone")):  # every user id is the one local principal, who reads every group
        searched = hoprag("search", "annual budget", "--store", str(store), "--json", *who)
        assert searched.returncode == 0 and json.loads(searched.stdout)["principal"] == "local"
        assert json.loads(searched.stdout)["results"][0]["id"] == "finance/budget.md"

    async def stdio_fetch() -> dict:
        params = StdioServerParameters(command=str(BIN / "hoprag"), args=["serve", "--transport", "stdio",
                                                                          "--store", str(store)], env=ENV, cwd=ROOT)
        async with Client(params) as client:
            return (await call(client, "fetch", id="finance/budget.md")).structured_content

    fetched = run(stdio_fetch())
    assert fetched["metadata"]["front_matter"] == {"tags": ["money"]} and fetched["metadata"]["path"] == "finance/budget.md"
    one_line_error(hoprag("serve", "--transport", "http", "--store", str(store), "--port", "0"),
                   "serving over HTTP needs an access file", str(store.parent / "access.yaml"), "--access")
    one_line_error(hoprag("ask", "Which region?", "--store", str(store), env={"HOPRAG_MCP_URL": "http://127.0.0.1:9/mcp"}),
                   "HOPRAG_MCP_URL", "bearer token", "--access")


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_ask_looks_up_a_name_in_code_no_page_read_holds_and_says_none_mentions_it(tmp_path):
    """Through the ADK runner and the MCP server: "Does Basalt read the BASALT_REGION variable?" over notes naming
    Basalt and regions but never BASALT_REGION -- the researcher greps for it (no read spent) and the answer says no
    page mentions it, after one search. Control: the name written in a note is found by the search and answered."""
    docs, store = write_docs(tmp_path), tmp_path / "notes.db"
    assert hoprag("index", str(docs), "--store", str(store), "--quiet").returncode == 0
    asked = hoprag("ask", "Does Basalt read the BASALT_REGION environment variable?", "--store", str(store), "--json")
    result = json.loads(asked.stdout)
    assert result["abstained"] and "nothing you may read mentions BASALT_REGION" in result["reason"], result
    assert result["searches"] == 1 and any("grep(" in step for step in result["trace"]), result["trace"]
    (docs / "env.md").write_text("# Environment\n\nBasalt reads its region from BASALT_REGION.\n", encoding="utf-8")
    assert hoprag("index", str(docs), "--store", str(store), "--quiet").returncode == 0
    named = json.loads(hoprag("ask", "Does Basalt read the BASALT_REGION environment variable?", "--store", str(store),
                              "--json").stdout)
    assert not named["abstained"] and named["citations"][0]["doc_id"] == "env.md"
    assert not any("grep(" in step for step in named["trace"])


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_with_an_access_file_the_default_group_is_granted_like_any_other(tmp_path):
    docs, store = write_docs(tmp_path), tmp_path / "notes.db"
    (tmp_path / "access.yaml").write_text("principals:\n  eng: {groups: [engineering]}\n  me: {groups: [local]}\n"
                                          "users:\n  user: eng\n", encoding="utf-8")
    indexed = hoprag("index", str(docs), "--store", str(store), "--quiet")
    assert indexed.returncode == 0, indexed.stderr
    assert f"under the access file {tmp_path / 'access.yaml'} only me (holding group 'local') reads them" in indexed.stdout
    assert "single-user" not in indexed.stdout + indexed.stderr
    as_eng = hoprag("search", "Basalt region", "--store", str(store), "--json")  # the default user maps to eng
    assert as_eng.returncode == 0 and json.loads(as_eng.stdout)["results"] == []
    assert SINGLE_USER not in as_eng.stderr
    as_me = hoprag("search", "Basalt region", "--store", str(store), "--as", "me", "--json")
    assert [r["id"] for r in json.loads(as_me.stdout)["results"]][:1] == ["basalt.md"]
    one_line_error(hoprag("search", "Basalt", "--store", str(store), "--as", "mallory"), "unknown user 'mallory'")


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_adk_run_reads_a_store_with_no_access_file(tmp_path):
    docs, store = write_docs(tmp_path), tmp_path / "notes.db"
    assert hoprag("index", str(docs), "--store", str(store), "--quiet").returncode == 0
    done = subprocess.run([str(BIN / "adk"), "run", "--in_memory", "agents/hoprag_agent", "Which region does Basalt run in?"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env={**ENV, "HOPRAG_STORE": str(store)},
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "eu-north-2" in done.stdout and "[basalt.md › Basalt]" in done.stdout
    assert done.stderr.count(SINGLE_USER) == 1


@pytest.mark.parametrize("command", [pytest.param(("ask", Q3), marks=pytest.mark.slow),  # ask loads the agent
                                     ("search", "Aurora"), ("serve", "--transport", "stdio")])
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


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_an_unreachable_gemini_is_one_line_naming_model_and_endpoint():
    base = f"http://127.0.0.1:{closed_port()}"
    done = hoprag("ask", Q3, "--model", "gemini-2.5-flash", "--model-base-url", base, env={"GOOGLE_API_KEY": "k"})
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    model_line, error = done.stderr.strip().splitlines()
    assert model_line == f"model: gemini-2.5-flash at {base}"
    assert error.startswith(f"model 'gemini-2.5-flash' at {base} failed in planner: ") and "HOPRAG_MODEL" in error


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_an_unknown_model_name_is_one_line():
    one_line_error(hoprag("ask", Q3, env={"HOPRAG_MODEL": "hoprag-offlne"}),
                   "model 'hoprag-offlne' (HOPRAG_MODEL / --model)", "hoprag-offline")


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_a_key_in_the_environment_does_not_switch_the_model_and_says_so():
    done = hoprag("ask", Q3, "--json", env={"GOOGLE_API_KEY": "a-key-for-something-else"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["model"] == "hoprag-offline" and result["answer"] == "us-east-2"
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "model: hoprag-offline"
    assert "GOOGLE_API_KEY is set but unused" in lines[1] and "HOPRAG_MODEL" in lines[1]


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_the_default_principal_is_the_same_for_ask_search_and_stdio_serve():
    """No --as anywhere: ADK's default user ``user``, which the demo access file maps to engineering."""
    asked = json.loads(hoprag("ask", "What is Falcon's annual budget?", "--json").stdout)
    assert asked["abstained"] and asked["reason"] == "not found in what you may read"  # engineering cannot
    searched = hoprag("search", "Falcon annual budget", "--json")
    assert searched.returncode == 0 and json.loads(searched.stdout)["principal"] == "engineering"
    assert "d09" not in {r["id"] for r in json.loads(searched.stdout)["results"]}
    assert "d01" in {r["id"] for r in json.loads(hoprag("search", "Falcon", "--json").stdout)["results"]}

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


@pytest.mark.slow  # hoprag processes that load the agent: 2.5 s or more
def test_the_readme_first_run_runs_as_written(tmp_path):
    """The README's tour on your own documents: ``hoprag index DIR --store X``, then ``ask`` and ``search`` on X,
    nothing else -- run here on a folder of our own (``tests/test_docs_commands.py`` runs it on ``docs/``)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Ask your own documents"):]
    start = section.index("```bash\n") + len("```bash\n")
    commands = [shlex.split(line, comments=True) for line in section[start:section.index("```", start)].splitlines()]
    assert [c[:2] for c in commands] == [["hoprag", "index"], ["hoprag", "ask"], ["hoprag", "search"]]
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide/users.md").write_text("---\ntags: [security]\n---\n# Single-user mode\n\nWith no access file, "
                                         "hoprag runs in single-user mode: one principal reads every document.\n",
                                         encoding="utf-8")
    (docs / "install.md").write_text("# Installing\n\nInstall Kestrel with pip.\n", encoding="utf-8")
    outputs = []
    paths = {"docs": str(docs), "docs.db": str(tmp_path / "docs.db")}  # run from the checkout, as the other tests
    for command in commands:
        done = hoprag(*(paths.get(arg, arg) for arg in command[1:]))
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        outputs.append(done.stdout)
    assert "2 files (2 new" in outputs[0]
    assert "[guide/users.md › Single-user mode]" in outputs[1] and "one principal reads every document" in outputs[1]
    assert outputs[2].startswith("guide/users.md")


def test_the_library_snippet_runs_from_any_directory(tmp_path):
    readme = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    section = readme[readme.index("# The engine as a library"):]
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
