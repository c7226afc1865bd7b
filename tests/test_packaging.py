"""The wheel holds the product: installed non-editable, outside the source tree, it answers the demo
question from the packaged Falcon corpus -- and ``hoprag`` imports no benchmark code to do it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Which region stores telemetry for Project Falcon?"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """Build the wheel offline and install it (no deps: they are this venv's) into a bare target dir."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(work / "dist"), str(ROOT)], check=True, capture_output=True, timeout=600)
    wheel = next((work / "dist").glob("hoprag-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(work / "site"),
                    str(wheel)], check=True, capture_output=True, timeout=600)
    return work


@pytest.mark.slow  # builds and installs the wheel
def test_the_wheel_ships_the_product_and_the_demo_corpus_only(installed):
    names = zipfile.ZipFile(next((installed / "dist").glob("*.whl"))).namelist()
    assert "hoprag/demo/d01.md" in names and "hoprag/demo/corpus.yaml" in names
    assert "hoprag_cli/main.py" in names and "mcp_server/server.py" in names
    assert not any(n.startswith(("tests/", "benchmarks/data/", "corpus/")) for n in names)


def run_installed(installed: Path, code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPRAG_")}
    env |= {"PYTHONPATH": str(installed / "site"), "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false"}
    env.pop("GOOGLE_API_KEY", None)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)


@pytest.mark.slow  # builds and installs the wheel
def test_a_non_editable_install_answers_the_demo_question_from_elsewhere(installed, tmp_path):
    code = ("import os, sys, hoprag, hoprag_cli.main as m; "
            "assert hoprag.__file__.startswith(os.environ['PYTHONPATH']), hoprag.__file__; "
            "sys.argv = ['hoprag', *sys.argv[1:]]; m.main()")
    done = run_installed(installed, code, "ask", QUESTION, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["abstained"] is False and [c["doc_id"] for c in result["citations"]] == ["d01", "d02", "d03"]


@pytest.mark.slow  # builds and installs the wheel
def test_hoprag_does_not_import_benchmark_code_until_bench_runs(installed, tmp_path):
    code = ("import sys, hoprag_cli.main as m; "
            "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('benchmarks', 'matplotlib')); "
            "assert not bad, bad; "
            "import mcp_server.server, agents.hoprag_agent.agent; "
            "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('benchmarks', 'matplotlib')); "
            "assert not bad, bad")
    done = run_installed(installed, code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_engine_imports_neither_mcp_nor_adk(tmp_path):
    code = ("import sys, pkgutil, importlib, hoprag; "
            "[importlib.import_module(f'hoprag.{m.name}') for m in pkgutil.iter_modules(hoprag.__path__)]; "
            "bad = sorted({n.split('.')[0] for n in sys.modules if n.split('.')[0] == 'mcp' or n.startswith('google.adk')}); "
            "assert not bad, bad")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
