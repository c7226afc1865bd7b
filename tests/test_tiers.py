"""The fast tier (``pytest -m "not slow"``) keeps at least one test of every test module, so a change
to any part of the product meets a test within minutes (tests/README.md).

The check reads the session's own collection (what ran plus what ``-m`` left out); a module this
session did not collect, as when one file is run alone, is collected by pytest in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DESELECTED

TESTS = Path(__file__).resolve().parent


def fast_in_session(session: pytest.Session) -> dict[str, bool]:
    """For each test module this session collected: whether any of its tests is not marked slow."""
    fast: dict[str, bool] = {}
    for item in [*session.items, *session.config.stash.get(DESELECTED, [])]:
        fast[item.path.name] = fast.get(item.path.name, False) or item.get_closest_marker("slow") is None
    return fast


def modules_with_fast_tests(paths: list[Path], cwd: Path) -> set[str]:
    """The modules among ``paths`` that have a test outside the slow tier, as pytest collects them."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow",
                           "-p", "no:cacheprovider", *map(str, paths)], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]  # 5: every test deselected
    return {Path(line.split("::")[0]).name for line in done.stdout.splitlines() if "::" in line}


def test_every_test_module_has_a_fast_test(request: pytest.FixtureRequest):
    modules = sorted(TESTS.glob("test_*.py"))
    fast = fast_in_session(request.session)
    unseen = [m for m in modules if m.name not in fast]
    if unseen:
        found = modules_with_fast_tests(unseen, TESTS.parent)
        fast.update({m.name: m.name in found for m in unseen})
    missing = [m.name for m in modules if not fast[m.name]]
    assert missing == [], f"no test outside the slow tier in {missing}: leave one fast test per module unmarked"


def test_negative_control_a_module_whose_tests_are_all_slow_is_found(tmp_path: Path):
    (tmp_path / "test_mixed.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n")
    (tmp_path / "test_all_slow.py").write_text("import pytest\n\n@pytest.mark.slow\ndef test_a():\n    pass\n")
    assert modules_with_fast_tests(sorted(tmp_path.glob("test_*.py")), tmp_path) == {"test_mixed.py"}
