"""Reading operator YAML files (access, relations, allowlist) that may be hostile or broken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: What reading and parsing can raise: unreadable files, bad UTF-8, impossible dates and integers
#: past Python's digit limit (``ValueError``), nesting deeper than the parser's recursion.
READ_ERRORS = (OSError, ValueError, RecursionError, yaml.YAMLError)


def read_yaml(path: Path) -> Any:
    """The parsed document; raises one of :data:`READ_ERRORS` for a file that cannot be used."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))
