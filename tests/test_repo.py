"""Repository contracts: CI runs exactly the README's test command."""

from __future__ import annotations

import re

from conftest import ROOT


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Run the tests:\s*(?:<!--[^>]*-->\s*)?```bash\n(.+?)\n```", readme, re.S)
    assert block, "README must show the test command under 'Run the tests:'"
    assert block.group(1).strip() in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
